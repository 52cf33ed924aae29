//! Shape tests for anticipation, Linux AS and CFQ against stream scheduling: equal when
//! process information is right, far apart when it is missing or misleading (000 Sections
//! 3.3-3.4), and the Anticipatory Scheduling paper's microbenchmarks (001 Section 4).

use crate::common;

use common::{bw, exp};
use headway_sim::{ContextMode, Report};

fn run(text: &str, disk: &str, schedulers: &[&str], context: ContextMode) -> Report {
    common::run(text, disk, schedulers, context, 1)
}

/// 000 Section 3.3: with process information AS and CFQ match SS (the paper: within 3%);
/// without it they degenerate to deadline while SS keeps its gain.
#[test]
fn par_read_as_and_cfq_need_process_information_stream_does_not() {
    let text = exp("par-read.fio").replace("size=1g", "size=256m");
    let with = run(&text, "wd5000aaks", &["stream", "as", "cfq", "antic:aged-sptf"], ContextMode::Process);
    let ss = bw(&with, "stream:deadline");
    for s in ["as", "cfq", "antic:aged-sptf"] {
        let x = bw(&with, s);
        assert!((x / ss - 1.0).abs() <= 0.10, "{s} {x} vs stream {ss} with process information");
    }
    let without =
        run(&text, "wd5000aaks", &["deadline", "stream", "as", "cfq", "antic:aged-sptf"], ContextMode::None);
    let dl = bw(&without, "deadline");
    for s in ["as", "cfq", "antic:aged-sptf"] {
        assert!(
            bw(&without, s) <= 1.15 * dl,
            "{s} {} vs deadline {dl} without process information",
            bw(&without, s)
        );
    }
    assert!(bw(&without, "stream:deadline") >= 2.5 * dl);
}

/// 000 Section 3.4 multi-threads: threads of one process synchronise every 5 requests; SS
/// (which never looks at identity) more than doubles deadline; AS and CFQ, seeing one
/// process whose requests alternate between two files, find it seeky and gain nothing over
/// noop once the drive queues commands (the paper's WD5000AAKS has NCQ: depth 32 here).
/// Measured: stream 4.76x deadline; as and cfq 1.00x noop (at depth 1: 1.21x and 1.18x).
#[test]
fn multi_threads_stream_gains_as_and_cfq_do_not() {
    let mut cfg = common::config(
        &exp("multi-threads.fio"),
        "wd5000aaks",
        &["noop", "deadline", "stream", "as", "cfq"],
        ContextMode::Process,
        1,
    );
    cfg.run.drive.queue_depth = 32;
    let r = headway_sim::simulate(&cfg, |_, _| {}).expect("simulation runs");
    let (noop, dl, ss) = (bw(&r, "noop"), bw(&r, "deadline"), bw(&r, "stream:deadline"));
    assert!(ss >= 1.8 * dl, "stream {ss} vs deadline {dl}");
    for s in ["as", "cfq"] {
        assert!(bw(&r, s) <= 1.05 * noop, "{s} {} vs noop {noop}", bw(&r, s));
    }
}

/// What `headway reproduce ss-fig5` explains its difference with (the paper has AS and CFQ
/// below Noop on multi-threads): Noop is seek-bound on every workload of the figure; with
/// each thread its own issuer (`--context thread`, the paper's account of Linux) AS still
/// equals Noop at depth 32 without waiting at all, and CFQ waits at the barriers yet gains.
#[test]
fn multi_threads_by_thread_as_never_waits_and_cfq_gains_over_a_seek_bound_noop() {
    let scheds = ["noop", "as", "cfq"];
    let mut cfg = common::config(&exp("multi-threads.fio"), "wd5000aaks", &scheds, ContextMode::Thread, 1);
    cfg.run.drive.queue_depth = 32;
    let r = headway_sim::simulate(&cfg, |_, _| {}).expect("simulation runs");
    let dev = |i: usize| &r.runs[i].device;
    let noop = bw(&r, "noop");
    assert!((bw(&r, "as") / noop - 1.0).abs() < 0.05, "as {:.2}x noop", bw(&r, "as") / noop);
    assert_eq!(dev(1).idle_wait_ns, 0, "as waited");
    assert!(dev(2).idle_wait_ns > 1_000_000_000, "cfq waited only {} ns", dev(2).idle_wait_ns);
    assert!(bw(&r, "cfq") > 2.0 * noop, "cfq {:.2}x noop", bw(&r, "cfq") / noop);
    let seek_bound = |file: &str, ctx, depth| {
        let mut cfg = common::config(&exp(file), "wd5000aaks", &["noop"], ctx, 1);
        cfg.run.drive.queue_depth = depth;
        let r = headway_sim::simulate(&cfg, |_, _| {}).expect("simulation runs");
        headway_sim::reproduce::seek_share(&r, "noop")
    };
    for (file, ctx, depth) in [
        ("multi-threads.fio", ContextMode::Process, 32),
        ("pvfs.fio", ContextMode::Pool(8), 1),
        ("xen-ftp.fio", ContextMode::Vm, 1),
    ] {
        let f = seek_bound(file, ctx, depth);
        assert!(f > 0.95, "{file}: noop seeks on {f:.2} of its requests");
    }
}

/// 000 Figure 5, PVFS and Xen: a thread pool or a VM boundary hides the streams from AS
/// and CFQ; SS finds them anyway.
#[test]
fn pool_and_vm_contexts_hide_streams_from_as_and_cfq() {
    for (file, ctx) in [("pvfs.fio", ContextMode::Pool(8)), ("xen-ftp.fio", ContextMode::Vm)] {
        let r = run(&exp(file), "wd5000aaks", &["deadline", "stream", "as", "cfq"], ctx);
        let (dl, ss) = (bw(&r, "deadline"), bw(&r, "stream:deadline"));
        assert!(ss >= 2.0 * dl, "{file}: stream {ss} vs deadline {dl}");
        for s in ["as", "cfq"] {
            assert!(bw(&r, s) <= 0.6 * ss, "{file}: {s} {} vs stream {ss}", bw(&r, s));
        }
    }
}

/// 001 Section 4.1 / Figure 4 (mmap: no prefetch): anticipation multiplies sequential
/// throughput (measured 4.67x, the paper's "four times" is 3.4-4.6x: `headway reproduce
/// as-fig4` explains the gap, in the original system), reaches half the bandwidth on
/// alternate blocks, and gains 28-30% on random access. Every other statement holds.
#[test]
fn as_fig4_anticipation_multiplies_sequential_throughput() {
    use headway_sim::reproduce::{antic, Scale};
    let runs = antic::fig4_runs(Scale::Full).expect("simulation runs");
    let pair = |p: &str| {
        let r = &runs.iter().find(|(q, _)| *q == p).unwrap().1;
        antic::Fig4Pair { plain: bw(r, "aged-sptf") / 1e6, antic: bw(r, "antic:aged-sptf") / 1e6 }
    };
    let checks = antic::fig4_statements(pair("seq"), pair("alter"), pair("random"));
    let not: Vec<&str> = checks.iter().filter(|c| !c.held).map(|c| c.what.as_str()).collect();
    assert_eq!(not, ["seq: antic / none"], "{checks:?}");
    let seq = pair("seq");
    assert!(seq.antic / seq.plain > 3.0, "still a multiple: {:.2}x", seq.antic / seq.plain);
}

/// 001 Figure 12: Stride with weights 1:2 without anticipation gives ~1:1 disk time; the
/// proportional heuristic 1:2; the combination heuristic 1:2 at >= 1.4x the throughput
/// (the paper: 60, 77 and 98 transactions/s). Check: `headway reproduce as-fig12`.
#[test]
fn as_fig12_proportional_share_needs_anticipation() {
    let r = run(
        &exp("as-fig12-stride.fio"),
        "deskstar-34gxp",
        &["stride", "antic:stride", "antic-combo:stride"],
        ContextMode::Process,
    );
    let checks = headway_sim::reproduce::antic::fig12_of(&r);
    assert!(checks.iter().all(|c| c.held), "{checks:?}");
}

fn with_think(text: &str, thinktime_us: u64, blocks: u32) -> String {
    text.replace("bs=64k", &format!("bs=64k\nthinktime={thinktime_us}\nthinktime_blocks={blocks}"))
}

fn gain(text: &str) -> f64 {
    gain_with(text, &[])
}

/// antic:aged-sptf over aged-sptf, with tunables set.
fn gain_with(text: &str, set: &[&str]) -> f64 {
    let mut cfg =
        common::config(text, "deskstar-34gxp", &["aged-sptf", "antic:aged-sptf"], ContextMode::Process, 1);
    for kv in set {
        cfg.run.settings.push_kv(kv).expect("a valid setting");
    }
    let r = headway_sim::simulate(&cfg, |_, _| {}).expect("simulation runs");
    bw(&r, "antic:aged-sptf") / bw(&r, "aged-sptf")
}

/// 001 Figure 5: the gain fades as both processes' thinktime grows and is gone once the
/// thinktime reaches what a long seek costs (about 12 ms of positioning between the two
/// files here, 15 ms with the transfer). From 12 ms on the heuristic only waits when the
/// positioning it would save beats the thinktime, and the drive's own read-ahead (filling
/// during the pauses) serves the plain policy as well as waiting would.
#[test]
fn as_fig5_gain_fades_with_symmetric_thinktime() {
    let seq = exp("as-fig4-seq.fio").replace("size=1g", "size=128m");
    let gains: Vec<(u64, f64)> = [0u64, 2_000, 4_000, 8_000, 12_000, 14_000, 16_000, 24_000]
        .iter()
        .map(|&t| (t, gain(&with_think(&seq, t, 1))))
        .collect();
    assert!(gains[0].1 >= 3.0, "{gains:?}");
    for w in gains[..4].windows(2) {
        assert!(w[1].1 <= w[0].1 * 1.05, "gain grew with thinktime: {gains:?}");
    }
    for &(t, g) in &gains[4..] {
        assert!((0.85..=1.15).contains(&g), "thinktime {t} us: gain {g:.2} should be gone: {gains:?}");
    }
}

/// 001 Figure 7: an adversary issues n quick requests, then thinks just past the
/// heuristic's longest wait (15 ms). The measurements `headway reproduce as-fig7` explains
/// its difference from the paper with: the paper's heuristic (no misprediction guard) loses
/// at n = 1, where plain Aged-SPTF serves each process's pair together; at n = 2 plain
/// Aged-SPTF interleaves the processes request by request (most of its requests seek) and
/// anticipation gains; headway's guard (001 Section 5.2.1) takes the loss at n = 1 away.
#[test]
fn as_fig7_adversary_loses_only_where_the_original_system_serves_bursts_whole() {
    use headway_sim::reproduce::antic::fig7_job;
    let seek_share = |text: &str| {
        let cfg = common::config(text, "deskstar-34gxp", &["aged-sptf"], ContextMode::Process, 1);
        let r = headway_sim::simulate(&cfg, |_, _| {}).expect("simulation runs");
        headway_sim::reproduce::seek_share(&r, "aged-sptf")
    };
    let (one, two) = (fig7_job(1), fig7_job(2));
    let unguarded = gain_with(&one, &["antic_timeout_guard=1"]);
    assert!(unguarded < 0.9, "n=1, the paper's heuristic: {unguarded:.2}x");
    let guarded = gain(&one);
    assert!((0.9..=1.1).contains(&guarded), "n=1, headway's guard: {guarded:.2}x");
    assert!(seek_share(&one) < 0.3, "n=1: aged-sptf seeks on {:.2}", seek_share(&one));
    assert!(seek_share(&two) > 0.5, "n=2: aged-sptf seeks on {:.2}", seek_share(&two));
    let at_two = gain_with(&two, &["antic_timeout_guard=1"]);
    assert!(at_two > 1.2, "n=2: {at_two:.2}x");
}

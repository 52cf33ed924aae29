//! The IO path below the scheduler (seeds/002 Sections 6.1 and 6.2): the drive's command
//! queue with its own SPTF, and write-back versus write-through caching. Shape tests:
//! ratios with stated tolerances, the measured figures in the comments.

use headway_disk::{DriveConfig, DriveError, DriveScheduler, WriteCache};
use headway_sim::{simulate, ContextMode, EngineError, Report, RunReport, SimConfig, SimError};

use crate::common;

fn config(text: &str, schedulers: &[&str], drive: DriveConfig) -> SimConfig {
    let mut c = common::config(text, "wd5000aaks", schedulers, ContextMode::Process, 1);
    c.run.drive = drive;
    c
}

fn run(text: &str, schedulers: &[&str], drive: DriveConfig) -> Report {
    simulate(&config(text, schedulers, drive), |_, _| {}).expect("simulation runs")
}

fn one(text: &str, sched: &str, drive: DriveConfig) -> RunReport {
    run(text, &[sched], drive).runs.remove(0)
}

fn one_on(disk: &str, text: &str, sched: &str, drive: DriveConfig) -> RunReport {
    let mut cfg = common::config(text, disk, &[sched], ContextMode::Process, 1);
    cfg.run.drive = drive;
    simulate(&cfg, |_, _| {}).expect("simulation runs").runs.remove(0)
}

/// The default drive and the IO-path paper's two SCSI drives.
const DRIVES: [&str; 3] = ["wd5000aaks", "cheetah-15k3", "cheetah-10k7"];

fn drive(queue_depth: u32, write_cache: WriteCache) -> DriveConfig {
    DriveConfig { queue_depth, write_cache, ..DriveConfig::default() }
}

fn iops(r: &RunReport) -> f64 {
    r.aggregate.iops
}

/// 4 KiB random reads over 450 GB of the 500 GB disk, 64 in flight (`headway reproduce
/// iopath-fig15`'s workload).
use headway_sim::reproduce::iopath::RANDREAD_QD64;

/// 002 Section 6.1: deeper drive queues raise throughput, because the drive reorders by
/// exact positioning time (noop hands it requests in arrival order). Measured on
/// wd5000aaks: 78 IOPS at depth 1, 108 at 4, 197 at 32 (2.5x), 229 at 64 (2.9x). The
/// 2 ms track-to-track seek of the data sheet is a floor under every pick, so a deeper
/// queue mostly buys rotational latency; the gain grows with depth, not beyond ~3x.
#[test]
fn drive_sptf_multiplies_random_read_throughput_with_queue_depth() {
    let at = |depth| iops(&one(RANDREAD_QD64, "noop", drive(depth, WriteCache::Through)));
    let (d1, d4, d32, d64) = (at(1), at(4), at(32), at(64));
    assert!(d4 > 1.2 * d1, "depth 4 {d4:.0} vs depth 1 {d1:.0}");
    assert!(d32 >= 2.3 * d1, "depth 32 {d32:.0} IOPS vs depth 1 {d1:.0}");
    assert!(d64 >= 2.7 * d1, "depth 64 {d64:.0} IOPS vs depth 1 {d1:.0}");
    assert!(d64 > d32 && d32 > d4);
    // the drive's FCFS gains nothing from the queue
    let fcfs = DriveConfig { scheduler: DriveScheduler::Fcfs, ..drive(32, WriteCache::Through) };
    let f = iops(&one(RANDREAD_QD64, "noop", fcfs));
    assert!((f / d1 - 1.0).abs() < 0.02, "fcfs at depth 32 {f:.0} vs depth 1 {d1:.0}");
}

/// Small random writes, one at a time (a synchronous writer).
const RANDWRITE_SYNC: &str =
    "[global]\nioengine=psync\ndirect=1\nbs=4k\nsize=450g\nio_size=6m\n[rw]\nrw=randwrite\n";
/// The same with 64 in flight.
const RANDWRITE_QD64: &str =
    "[global]\nioengine=libaio\niodepth=64\ndirect=1\nbs=4k\nsize=450g\nio_size=12m\n\
                              [rw]\nrw=randwrite\n";

/// 002 Section 6.2: write-back acknowledges from the cache and destages in the drive's
/// order, so without queueing it beats write-through by far (measured: wd5000aaks 3.1x,
/// 236 vs 77 IOPS; cheetah-15k3 3.3x; cheetah-10k7 3.4x, over the first 17 GB); the
/// drive then spends its time full, refusing commands until a destage frees an entry.
#[test]
fn write_back_beats_write_through_without_queueing() {
    for disk in &DRIVES[1..] {
        let text = RANDWRITE_SYNC.replace("size=450g", "size=17g");
        let wt = iops(&one_on(disk, &text, "noop", drive(1, WriteCache::Through)));
        let wb = iops(&one_on(disk, &text, "noop", drive(1, WriteCache::Back)));
        assert!(wb >= 2.0 * wt, "{disk}: write-back {wb:.0} vs write-through {wt:.0} IOPS");
    }
    let wt = one(RANDWRITE_SYNC, "noop", drive(1, WriteCache::Through));
    let wb = one(RANDWRITE_SYNC, "noop", drive(1, WriteCache::Back));
    assert!(
        iops(&wb) >= 2.0 * iops(&wt),
        "write-back {:.0} vs write-through {:.0} IOPS",
        iops(&wb),
        iops(&wt)
    );
    assert!(wb.aggregate.clat_ns.mean * 2.0 < wt.aggregate.clat_ns.mean);
    let d = &wb.device;
    assert_eq!(d.destaged_bytes, 6 << 20, "every written byte reaches the media once (no rewrites here)");
    assert!(d.write_cache_full_ns > wb.aggregate.runtime_ns / 2, "the cache is full most of the run");
    assert_eq!(d.cache_hit_ratio, 1.0, "every write is absorbed");
    assert_eq!(d.idle_wait_ns, 0, "a refusing drive is not the scheduler waiting");
    assert_eq!((wt.device.destages, wt.device.write_cache_full_ns), (0, 0));
}

/// 002 Section 6.2: "if the disk write-through policy is enabled as well as the queue depth
/// is set to a high value, then \[the\] highest ... throughput achieved under write-through
/// and write-back policies are very close". Measured at depth 32, write-through vs
/// write-back: wd5000aaks 185 vs 229 IOPS, cheetah-15k3 400 vs 518, cheetah-10k7 555 vs
/// 707 (over the first 17 GB of the Cheetahs; write-back's destage SPTF chooses among at
/// most 64 entries, and with a deep queue write-back runs full, as in 002 Figure 16).
#[test]
fn a_deep_queue_closes_the_write_back_gap() {
    for disk in DRIVES {
        let text = if disk == "wd5000aaks" {
            RANDWRITE_QD64.to_string()
        } else {
            RANDWRITE_QD64.replace("size=450g", "size=17g")
        };
        let wt = iops(&one_on(disk, &text, "noop", drive(32, WriteCache::Through)));
        let wb = iops(&one_on(disk, &text, "noop", drive(32, WriteCache::Back)));
        let wt1 = iops(&one_on(disk, &text, "noop", drive(1, WriteCache::Through)));
        assert!(wt * 1.3 >= wb, "{disk} depth 32: write-through {wt:.0} vs write-back {wb:.0} IOPS");
        assert!(wt >= 2.0 * wt1, "{disk}: the queue is what closes it: depth 32 {wt:.0} vs depth 1 {wt1:.0}");
    }
}

/// The device figures: requests into and out of the driver (merging), queue occupancy,
/// hit ratio; the drive's configuration is echoed.
#[test]
fn device_figures_count_the_io_path() {
    // an asynchronous sequential writer: noop merges contiguous arrivals
    let text = "[w]\nrw=write\nioengine=libaio\niodepth=8\ndirect=1\nbs=4k\nsize=8m\n";
    for depth in [1, 4] {
        let r = one(text, "noop", drive(depth, WriteCache::Through));
        let d = &r.device;
        assert_eq!((d.requests_in.count, d.requests_in.writes), (2048, 2048));
        assert_eq!(d.requests_in.mean_bytes, 4096.0);
        assert_eq!(d.requests_out.count, d.requests);
        assert!(d.requests_out.count < 2048 / 2, "depth {depth}: {} out", d.requests_out.count);
        let out_bytes = d.requests_out.mean_bytes * d.requests_out.count as f64;
        assert!((out_bytes - (8 << 20) as f64).abs() < 1.0, "bytes out {out_bytes}");
        assert!(d.queue_occupancy > 0.5 && d.queue_occupancy <= depth as f64 + 1e-9, "{}", d.queue_occupancy);
        assert_eq!(
            (d.queue_depth, d.drive_scheduler.as_str(), d.write_cache.as_str()),
            (depth, "sptf", "through")
        );
        assert_eq!(r.jobs[0].write.total_ios, 2048, "merged parts complete with their carrier");
    }
    // a saturated deep queue stays nearly full; sequential reads hit read-ahead
    let r = one(RANDREAD_QD64, "noop", drive(32, WriteCache::Through));
    assert!(
        r.device.queue_occupancy > 31.0 && r.device.queue_occupancy <= 32.0,
        "{}",
        r.device.queue_occupancy
    );
    let seq = "[r]\nrw=read\nioengine=psync\ndirect=1\nbs=4k\nsize=4m\n";
    let r = one(seq, "noop", DriveConfig::default());
    assert!(r.device.cache_hit_ratio > 0.9, "{}", r.device.cache_hit_ratio);
    assert!(r.device.queue_occupancy < 1.0);
}

/// With a queue, each command's own drive time (not its wait in the queue) is charged to
/// its job: with write-through the drive serves one command at a time, so the jobs' drive
/// times add up to the drive's busy time.
#[test]
fn drive_time_is_each_commands_own_service() {
    let text = "[global]\nioengine=libaio\ndirect=1\nbs=4k\nsize=100g\nio_size=4m\n\
                [a]\nrw=randread\niodepth=16\n[b]\nrw=randwrite\niodepth=16\noffset=200g\n";
    for depth in [1, 8, 32] {
        let r = one(text, "deadline", drive(depth, WriteCache::Through));
        let disk: u64 = r.jobs.iter().map(|j| j.disk_time_ns).sum();
        let busy = r.device.utilization * r.aggregate.runtime_ns as f64;
        assert!((disk as f64 / busy - 1.0).abs() < 1e-3, "depth {depth}: jobs {disk} ns vs busy {busy} ns");
        assert!(r.jobs.iter().all(|j| j.disk_time_ns > 0));
    }
}

/// Every scheduler runs to completion on a deep queue and a write-back cache, every byte
/// is accounted once, and runs are deterministic.
#[test]
fn schedulers_run_on_a_queueing_drive_deterministically() {
    let text = "[global]\ndirect=1\nbs=4k\nsize=20g\nio_size=2m\n\
                [s]\nrw=read\nnumjobs=2\noffset_increment=60g\n\
                [m]\nrw=randrw\nioengine=libaio\niodepth=16\noffset=200g\n";
    let scheds = ["noop", "deadline", "sptf", "stream", "as", "cfq"];
    for cfg in [drive(4, WriteCache::Back), drive(32, WriteCache::Through), drive(64, WriteCache::Back)] {
        let a = run(text, &scheds, cfg);
        for r in &a.runs {
            let total: u64 = r.jobs.iter().map(|j| j.read.io_bytes + j.write.io_bytes).sum();
            assert_eq!(total, 3 * (2 << 20), "{} at {cfg:?}", r.scheduler);
        }
        assert_eq!(a.to_json(), run(text, &scheds, cfg).to_json());
    }
}

#[test]
fn bad_drive_settings_are_errors() {
    let text = "[r]\nrw=read\nsize=1m\n";
    let err = simulate(&config(text, &["noop"], drive(0, WriteCache::Through)), |_, _| {}).unwrap_err();
    assert!(matches!(err, SimError::Engine(EngineError::Drive(DriveError::QueueDepth(0)))), "{err}");
    let mut cfg = config(text, &["noop"], drive(1, WriteCache::Back));
    cfg.run.disk = cfg.run.disk.without_cache();
    let err = simulate(&cfg, |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("write-back"), "{err}");
}

/// 000 Section 3.2: stream scheduling on a queueing drive (the request last put into the
/// device queue decides) keeps at least 80% of its depth-1 advantage over deadline on
/// par-read. Measured with 16 MiB per reader: 139.6x at depth 1, 120.6x at depth 32.
#[test]
fn stream_keeps_its_advantage_on_a_queueing_drive() {
    let text = include_str!("../../../../experiments/par-read.fio").replace("size=1g", "size=16m");
    let adv = |depth: u32| {
        let mut cfg = config(&text, &["deadline", "stream"], drive(depth, WriteCache::Through));
        cfg.run.context = ContextMode::None;
        let r = simulate(&cfg, |_, _| {}).expect("simulation runs");
        r.runs[1].aggregate.bw_bytes as f64 / r.runs[0].aggregate.bw_bytes as f64
    };
    let (one, deep) = (adv(1), adv(32));
    assert!(one > 10.0, "depth 1 advantage {one:.1}");
    assert!(deep >= 0.8 * one, "depth 32 keeps {deep:.1}x of {one:.1}x");
}

/// 000 Figure 4, buffered par-read (page-cache readahead on): the synchronous 4 KiB reads
/// reach the scheduler as readahead windows; SS's advantage over deadline falls as the
/// thinktime grows and is gone by 400 microseconds. Measured (256 MiB per reader): 4.39x at
/// 0, 2.97x at 50 us, 1.75x at 100 us, 1.17x at 200 us, 0.91x at 400 us. The statements are
/// `headway reproduce ss-fig4`'s; its differences (3.2x at 0, like Deadline at 200 us) are
/// explained there, so this test holds the shape and the end of the sweep.
#[test]
fn buffered_par_read_advantage_fades_with_thinktime() {
    let runs = headway_sim::reproduce::ss::fig4_ratios(0).expect("simulation runs");
    let ratios: Vec<(u64, f64)> = runs.iter().map(|(t, r, _)| (*t, *r)).collect();
    let checks = headway_sim::reproduce::ss::fig4_statements(&ratios);
    for c in &checks {
        eprintln!("{} {}: {}", if c.held { "holds" } else { "not" }, c.what, c.headway);
    }
    let held = |what: &str| checks.iter().find(|c| c.what == what).expect("a statement").held;
    assert!(held("the advantage shrinks as the thinktime grows"));
    assert!(held("thinktime 400 us: SS / Deadline"));
    assert!(ratios[0].1 > 2.0, "a large advantage at thinktime 0: {:.2}x", ratios[0].1);
}

/// Conservation through the page cache: a buffered sequential reader's bytes reach the
/// media exactly once (readahead never reads a page twice or past the region), and every
/// byte it asked for is reported once.
#[test]
fn buffered_reads_read_each_page_once() {
    let text = "[s]\nrw=read\nbs=4k\nsize=8m\ndirect=0\n[r]\nrw=randread\nbs=4k\nsize=1g\nio_size=2m\noffset=100g\ndirect=0\n";
    for sched in ["noop", "deadline", "stream"] {
        let r = one(text, sched, DriveConfig::default());
        assert_eq!(r.jobs[0].read.io_bytes, 8 << 20, "{sched}");
        assert_eq!(r.jobs[1].read.io_bytes, 2 << 20, "{sched}");
        let out = &r.device.requests_out;
        let media = out.read_mean_bytes * out.reads as f64;
        // sequential: exactly 8 MiB; random: each 4 KiB read is its own (rare sequential
        // neighbours may trigger a small window)
        assert!(
            media >= (10 << 20) as f64 && media <= (10 << 20) as f64 + (512 << 10) as f64,
            "{sched}: {media} bytes read"
        );
        // 512 random reads; the sequential reader's 2048 pages in windows of 4 to 32 pages
        assert!(out.reads <= 512 + 2048 / 4, "{sched}: {} reads: readahead windows missing", out.reads);
    }
}

/// Buffered writes through the page cache: acknowledged at memory speed, written back as
/// large asynchronous requests once a job's dirty data reaches the background threshold
/// (200 MB), throttled past the hard limit (400 MB) until writeback frees room; every
/// written byte reaches the media once (sequential writers never overwrite).
#[test]
fn buffered_writes_are_written_back_once_and_throttled_past_the_limit() {
    let text = "[global]\nrw=write\nbs=64k\ndirect=0\n[small]\nsize=100m\n[big]\nsize=600m\noffset=10g\n";
    let r = one(text, "deadline", DriveConfig::default());
    let (small, big) = (&r.jobs[0], &r.jobs[1]);
    assert_eq!(small.write.io_bytes, 100 << 20);
    assert_eq!(big.write.io_bytes, 600 << 20);
    // under the threshold: the small writer never waits for the disk
    assert!(small.job_runtime < 100, "small writer took {} ms", small.job_runtime);
    // the big one is throttled: it cannot finish before ~200 MB reached the media
    assert!(big.job_runtime > 1000, "big writer took only {} ms", big.job_runtime);
    let out = &r.device.requests_out;
    let media = out.write_mean_bytes * out.writes as f64;
    // the big writer's data is all written back (its last 200 MB reach the threshold); the
    // small writer's 100 MB stays dirty in the page cache at the end (no end_fsync)
    assert_eq!(media as u64, 600 << 20, "bytes written back");
    assert_eq!(r.device.page_cache_dirty_bytes, 100 << 20, "still dirty at the end");
    assert!(
        out.write_mean_bytes >= (256 << 10) as f64,
        "writeback requests are large: {}",
        out.write_mean_bytes
    );
}

/// 002 Figures 15 and 17: the host scheduler matters less as the drive's queue deepens —
/// the drive's own SPTF does the reordering. Measured (wd5000aaks, 8 MiB of random 4 KiB
/// reads, 64 in flight): deadline/noop 1.76x at depth 1, 1.54x at 4, 1.03x at 32.
#[test]
fn the_noop_deadline_gap_closes_as_the_drive_queue_deepens() {
    let gap = |depth| {
        let r = run(RANDREAD_QD64, &["noop", "deadline"], drive(depth, WriteCache::Through));
        iops(&r.runs[1]) / iops(&r.runs[0])
    };
    let (g1, g4, g32) = (gap(1), gap(4), gap(32));
    assert!(g1 > 1.3, "deadline should beat noop without a drive queue: {g1:.2}");
    assert!(g4 < g1 && g32 < g4, "gap should close: {g1:.2} {g4:.2} {g32:.2}");
    assert!((g32 - 1.0).abs() <= 0.15, "at depth 32 within 15%: {g32:.2}");
}

/// 002 Figures 15 and 17 on the paper's two SCSI drives, with the same data on both (the
/// 18 GB drive's capacity; the paper ran one PostMark working set on each): random 4 KiB
/// reads, 64 in flight. Deep drive queues multiply `noop`'s throughput, "more pronounced
/// for the newer 300 GB disk than the older 18 GB one" (002 Section 6.1), and close the
/// gap between `noop` and `deadline`. Measured: cheetah-10k7 238 -> 801 IOPS (3.4x),
/// cheetah-15k3 174 -> 460 (2.6x); deadline/noop at depth 32 1.06x and 1.04x. An ideal
/// SPTF over the same data-sheet mechanics, independent of the drive model
/// (`cargo run --release -p headway-disk --example ideal_sptf`), gives 2.68x and 3.34x: the
/// issue's 3x is out of the 18 GB drive's reach.
#[test]
fn the_papers_drives_gain_from_deep_queues() {
    let text = RANDREAD_QD64.replace("size=450g", "size=17g");
    let gain = |disk: &str| {
        let cfg = |depth| {
            let mut c = common::config(&text, disk, &["noop", "deadline"], ContextMode::Process, 1);
            c.run.drive = drive(depth, WriteCache::Through);
            c
        };
        let shallow = simulate(&cfg(1), |_, _| {}).expect("simulation runs");
        let deep = simulate(&cfg(32), |_, _| {}).expect("simulation runs");
        let closing = iops(&deep.runs[1]) / iops(&deep.runs[0]);
        assert!((closing - 1.0).abs() <= 0.15, "{disk}: deadline/noop at depth 32 {closing:.2}");
        iops(&deep.runs[0]) / iops(&shallow.runs[0])
    };
    let (new, old) = (gain("cheetah-10k7"), gain("cheetah-15k3"));
    assert!(new >= 3.0, "cheetah-10k7: noop at depth 32 {new:.2}x depth 1");
    assert!(old >= 2.3, "cheetah-15k3: noop at depth 32 {old:.2}x depth 1");
    assert!(new > old, "the gain should be larger on the 300 GB drive: {new:.2} vs {old:.2}");
}

/// 002 Figures 8 and 9: interleaved sequential 4 KiB write streams (the file system chops
/// writes to 4 KiB; other writers' requests sit between a stream's writes). `noop` merges
/// only with the request queued just before, so it passes almost every write on as it
/// came; `deadline`, `as` and `cfq` merge each write into its stream's queued request.
/// Measured (cheetah-15k3, depth 4): writes out of the driver 6.6 KiB on average under
/// noop, 48 KiB deadline, 63 KiB as, 67 KiB cfq.
#[test]
fn elevators_merge_interleaved_write_streams_noop_does_not() {
    let mut cfg = common::config(
        &common::exp("iopath-fig8-writes.fio"),
        "cheetah-15k3",
        &["noop", "deadline", "as", "cfq"],
        ContextMode::Process,
        1,
    );
    cfg.run.drive = drive(4, WriteCache::Through);
    let r = simulate(&cfg, |_, _| {}).expect("simulation runs");
    let out = |i: usize| &r.runs[i].device.requests_out;
    let inn = |i: usize| &r.runs[i].device.requests_in;
    for i in 0..4 {
        assert_eq!(inn(i).writes, 8 * 2048, "{}: every 4 KiB write reaches the driver", r.runs[i].scheduler);
        assert_eq!(inn(i).write_mean_bytes, 4096.0);
    }
    let noop = out(0).write_mean_bytes;
    assert!(noop < 2.0 * 4096.0, "noop should merge little: {noop}");
    for i in 1..4 {
        let s = &r.runs[i].scheduler;
        assert!(out(i).write_mean_bytes >= 4.0 * noop, "{s}: {} vs noop {noop}", out(i).write_mean_bytes);
        // Figure 9: as many times fewer requests leave the driver
        assert!(
            out(i).writes * 4 <= out(0).writes,
            "{s}: {} requests out vs noop {}",
            out(i).writes,
            out(0).writes
        );
    }
}

//! Disk arrays (`--array`, issue 8): array requests split across member drives, each
//! member with its own scheduler, RAID 5's read-modify-write, the front-end queue,
//! per-member report sections, and the coordinated array stream scheduler against its
//! baselines (000 Section 3.5, Figure 6). The address mapping itself is property-tested
//! in `headway_disk::array`, the scheduler's rules in `headway_sched`'s `array_stream`.

use crate::common;

use headway_disk::array::{ArraySpec, Level};
use headway_sim::report::{Flow, RunReport};
use headway_sim::reproduce::{ss, Scale};
use headway_sim::{simulate, ContextMode, Report, SimConfig};

const PAR_READ_RAID0: &str = include_str!("../../../../experiments/par-read-raid0.fio");

fn config(
    text: &str,
    array: Option<&str>,
    schedulers: &[&str],
    context: ContextMode,
    seed: u64,
) -> SimConfig {
    let mut c = common::config(text, "wd5000aaks", schedulers, context, seed);
    c.run.array = array.map(|a| a.parse().expect("array spec"));
    c
}

fn run(text: &str, array: Option<&str>, schedulers: &[&str]) -> Report {
    simulate(&config(text, array, schedulers, ContextMode::None, 1), |_, _| {}).expect("simulation runs")
}

fn bytes(f: &Flow) -> (f64, f64) {
    (f.reads as f64 * f.read_mean_bytes, f.writes as f64 * f.write_mean_bytes)
}

fn member_flows(r: &RunReport) -> Vec<(Flow, Flow)> {
    r.members
        .as_ref()
        .expect("an array run has members")
        .iter()
        .map(|m| (m.device.requests_in.clone(), m.device.requests_out.clone()))
        .collect()
}

/// Sequential requests of `bs` from `offset` (bytes): (sector, sectors) of each.
fn sequential(offset: u64, bs: u64, n: u64) -> Vec<(u64, u32)> {
    (0..n).map(|i| ((offset + i * bs) / 512, (bs / 512) as u32)).collect()
}

/// Every request straddles stripe units (100 KiB requests from 32 KiB on 64 KiB units),
/// many are in flight (iodepth 8) and only 3 pass the front end at once: each job request
/// completes exactly once (a second completion would find no metadata and panic, none
/// would stall the run), and the members saw exactly the pieces of the mapping.
#[test]
fn a_split_request_completes_exactly_once() {
    let n = 200u64;
    let text = format!(
        "[j]\nioengine=libaio\niodepth=8\ndirect=1\nrw=read\nbs=100k\noffset=32k\nsize={}k\n",
        100 * n
    );
    for sched in ["noop", "deadline", "stream-local"] {
        let mut cfg = config(&text, Some("raid0:5:64k"), &[sched], ContextMode::Process, 1);
        cfg.run.array_queue_depth = 3;
        let r = simulate(&cfg, |_, _| {}).expect("simulation runs");
        let run = &r.runs[0];
        let job = &run.jobs[0].read;
        assert_eq!(job.total_ios, n, "{sched}: every request completes once");
        assert_eq!(job.io_bytes, n * 100 * 1024, "{sched}");
        assert_eq!(run.device.requests_in.count, n, "{sched}: array requests in");
        let spec: ArraySpec = "raid0:5:64k".parse().unwrap();
        let mut want = [0u64; 5];
        for (s, len) in sequential(32 * 1024, 100 * 1024, n) {
            for p in spec.split(s, len) {
                want[p.member as usize] += 1;
            }
        }
        let got: Vec<u64> = member_flows(run).iter().map(|(i, _)| i.count).collect();
        assert_eq!(got, want, "{sched}: member requests per member");
    }
}

/// RAID 0: the members together read exactly the bytes the jobs read, in pieces no
/// larger than a stripe unit (before merging), and spread over every member.
#[test]
fn raid0_conserves_bytes_per_member() {
    let text =
        "[j]\nioengine=psync\ndirect=1\nrw=randrw\nbs=20k\nsize=80m\nnumjobs=2\noffset_increment=10g\n";
    let r = run(text, Some("raid0:5:64k"), &["deadline"]);
    let run = &r.runs[0];
    let (rd, wr) = bytes(&run.device.requests_in);
    let flows = member_flows(run);
    let (mr, mw) = flows.iter().fold((0.0, 0.0), |(a, b), (i, _)| (a + bytes(i).0, b + bytes(i).1));
    assert!((mr - rd).abs() < 1.0 && (mw - wr).abs() < 1.0, "members {mr}+{mw} vs array {rd}+{wr}");
    assert!(flows.iter().all(|(i, _)| i.count > 0), "every member serves some of it");
    assert!(flows.iter().all(|(i, _)| i.mean_bytes <= 64.0 * 1024.0));
    let total: u64 = run.jobs.iter().map(|j| j.read.io_bytes + j.write.io_bytes).sum();
    assert_eq!(total, 2 * 80 * 1024 * 1024);
    // the aggregate sums its members
    let reqs: u64 = run.members.as_ref().unwrap().iter().map(|m| m.device.requests).sum();
    assert_eq!(run.device.requests, reqs);
    assert_eq!(run.array.as_deref(), Some("raid0:5:64k"));
}

/// RAID 5 writes: the members see exactly the write plans — data and parity writes, and
/// for partial rows the read-modify-write reads — counted request by request.
#[test]
fn raid5_writes_follow_the_write_plan() {
    // 40 KiB writes from 8 KiB on raid5:4:16k (rows of 48 KiB of data): partial rows,
    // rows straddled, and now and then a whole row.
    let n = 300u64;
    let text = format!("[j]\nioengine=psync\ndirect=1\nrw=write\nbs=40k\noffset=8k\nsize={}k\n", 40 * n);
    let r = run(&text, Some("raid5:4:16k"), &["noop"]);
    let run = &r.runs[0];
    assert_eq!(run.jobs[0].write.total_ios, n);
    let spec: ArraySpec = "raid5:4:16k".parse().unwrap();
    assert_eq!(spec.level, Level::Raid5);
    let (mut reads, mut writes) = ([0u64; 4], [0u64; 4]);
    let (mut rbytes, mut wbytes) = (0u64, 0u64);
    for (s, len) in sequential(8 * 1024, 40 * 1024, n) {
        let plan = spec.write_plan(s, len);
        for p in &plan.reads {
            reads[p.member as usize] += 1;
            rbytes += p.len as u64 * 512;
        }
        for p in &plan.writes {
            writes[p.member as usize] += 1;
            wbytes += p.len as u64 * 512;
        }
    }
    assert!(rbytes > 0 && wbytes > n * 40 * 1024, "the plan has RMW reads and parity");
    let flows = member_flows(run);
    for (m, (i, _)) in flows.iter().enumerate() {
        assert_eq!((i.reads, i.writes), (reads[m], writes[m]), "member {m}");
    }
    let (mr, mw) = flows.iter().fold((0.0, 0.0), |(a, b), (i, _)| (a + bytes(i).0, b + bytes(i).1));
    assert_eq!((mr as u64, mw as u64), (rbytes, wbytes));
}

/// Striping works: one reader of large sequential requests gets several members' bandwidth
/// on raid0:5:64k (each 1 MiB request is 16 units on 5 drives at once). Measured: noop 4.9x
/// one drive.
#[test]
fn striping_beats_one_disk_on_large_sequential_reads() {
    let text = "[j]\nioengine=psync\ndirect=1\nrw=read\nbs=1m\nsize=256m\n";
    let one = common::bw(&run(text, None, &["noop"]), "noop");
    let five = common::bw(&run(text, Some("raid0:5:64k"), &["noop"]), "noop");
    assert!(five >= 3.5 * one, "raid0:5:64k {five} vs one drive {one}");
}

/// The paper's par-read on raid0:5:64k (000 Section 3.5, scaled to 128 MiB per file) runs
/// under noop, deadline and stream-local, each reader getting all its bytes; the array
/// beats one drive under noop.
#[test]
fn par_read_on_raid0_runs_for_each_scheduler() {
    let text = PAR_READ_RAID0.replace("size=1g", "size=128m");
    let cfg =
        config(&text, Some("raid0:5:64k"), &["noop", "deadline", "stream-local"], ContextMode::Process, 1);
    let r = simulate(&cfg, |_, _| {}).expect("simulation runs");
    for run in &r.runs {
        assert_eq!(run.members.as_ref().unwrap().len(), 5);
        for j in &run.jobs {
            assert_eq!(j.read.io_bytes, 128 << 20, "{}: {}", run.scheduler, j.jobname);
        }
    }
    let one = {
        let cfg = common::config(&text, "wd5000aaks", &["noop"], ContextMode::Process, 1);
        simulate(&cfg, |_, _| {}).expect("simulation runs")
    };
    let (n5, n1) = (common::bw(&r, "noop"), common::bw(&one, "noop"));
    assert!(n5 > n1, "noop on raid0:5:64k {n5} vs one drive {n1}");
    assert_eq!(r.runs[2].scheduler, "stream-local:deadline");
}

/// RAID 5's small-write penalty: 4 KiB random writes each read old data and parity and
/// write both (four member I/Os instead of one). Measured (noop, raid0:5:64k vs
/// raid5:5:64k): RAID 0 3.5x RAID 5; accepted 2x to 5x.
#[test]
fn raid5_small_random_writes_pay_the_rmw_penalty() {
    let text =
        "[j]\nioengine=psync\ndirect=1\nrw=randwrite\nbs=4k\nsize=4m\nnumjobs=4\noffset_increment=100g\n";
    let r0 = common::bw(&run(text, Some("raid0:5:64k"), &["noop"]), "noop");
    let r5 = common::bw(&run(text, Some("raid5:5:64k"), &["noop"]), "noop");
    let ratio = r0 / r5;
    assert!((2.0..=5.0).contains(&ratio), "raid0/raid5 on small random writes: {ratio:.2}");
}

/// Same seed, same bytes; and a run without an array has neither `array` nor `members`.
#[test]
fn array_runs_are_deterministic_and_absent_without_an_array() {
    let text = "[j]\nioengine=libaio\niodepth=4\ndirect=1\nrw=randrw\nbs=12k\nsize=8m\nnumjobs=3\noffset_increment=7g\n";
    let go = || {
        simulate(
            &config(text, Some("raid5:5:64k"), &["noop", "stream-local", "stream"], ContextMode::Pool(3), 7),
            |_, _| {},
        )
        .expect("simulation runs")
        .to_json()
    };
    assert_eq!(go(), go());
    let plain = run(text, None, &["noop"]).to_json();
    assert!(!plain.contains("\"members\"") && !plain.contains("\"array\""));
}

/// Issue 8's must-show, 000 Figure 6 (stream scheduling +114% over noop on par-read over
/// five disks, AS and CFQ far less; PostMark "minimal improvement"): the figure's own
/// shape check (`headway reproduce ss-fig6`) at its quick size. Measured (256 MiB files):
/// noop 87, deadline 128, stream-local 172, stream 427, as 271, cfq 245 MB/s; PostMark
/// (5,000 files, 20,000 transactions) stream 1.00x deadline.
#[test]
fn coordinated_stream_scheduling_leads_par_read_on_raid0() {
    let par = ss::fig6_par_read(Scale::Quick, "raid0:5:64k").expect("simulation runs");
    let pm = ss::fig6_postmark(Scale::Quick, "raid0:5:64k").expect("simulation runs");
    // the model's ordering: coordinated stream far ahead of noop and of stream on each member
    // alone, AS, CFQ and Deadline well behind it, PostMark level (the figure's statements on
    // AS, CFQ and PostMark hold; its differences, past the RAID card's bus, are explained in
    // `headway reproduce ss-fig6`)
    leads(&par);
    let b = |r: &Report, s: &str| common::bw(r, s);
    let pm_ratio = b(&pm, "stream:deadline") / b(&pm, "deadline");
    assert!((pm_ratio - 1.0).abs() <= 0.10, "PostMark: stream {pm_ratio:.3}x deadline");
    let run = par.runs.iter().find(|r| r.scheduler == "stream:deadline").expect("a stream run");
    let stats = &run.scheduler_stats;
    assert!(stats["coordinations"] > 0 && stats["virtual_streams"] >= 4, "{stats:?}");
    for j in &run.jobs {
        assert_eq!(j.read.io_bytes, 256 << 20, "every byte read: {}", j.jobname);
    }
}

/// 000 Section 3.5: "We have also experimented with RAID5 and obtained consistent
/// results": the same ordering on raid5:5:64k. Measured (256 MiB files): noop 95,
/// deadline 157, stream-local 143, stream 342, as 174, cfq 225 MB/s.
#[test]
fn raid5_keeps_the_ordering_on_par_read() {
    let par = ss::fig6_par_read(Scale::Quick, "raid5:5:64k").expect("simulation runs");
    leads(&par);
}

/// par-read on an array: coordinated `stream` at least 2x noop and 1.3x `stream-local`; AS,
/// CFQ and Deadline at most 0.8x `stream` ("the improvements made by AS or CFQ are limited").
fn leads(par: &Report) {
    let b = |s: &str| common::bw(par, s);
    let (noop, local, ss) = (b("noop"), b("stream-local:deadline"), b("stream:deadline"));
    assert!(ss >= 2.0 * noop, "stream {:.2}x noop", ss / noop);
    assert!(ss >= 1.3 * local, "stream {:.2}x stream-local", ss / local);
    for s in ["deadline", "as", "cfq"] {
        assert!(b(s) <= 0.8 * ss, "{s} {:.2}x stream", b(s) / ss);
    }
}

/// Coordination does not depend on md's large read-ahead: with Linux's default 128 KiB
/// windows (two in flight per reader, completing out of order on different members) the
/// virtual streams hold and `stream` stays well ahead of `stream-local`. Measured (256 MiB
/// files): noop 31, stream-local 181, stream 396 MB/s.
#[test]
fn coordination_holds_with_small_read_ahead_windows() {
    let text = PAR_READ_RAID0.replace("size=1g", "size=256m");
    let mut cfg = config(&text, Some("raid0:5:64k"), &["stream-local", "stream"], ContextMode::Process, 1);
    cfg.run.settings.push_kv("read_ahead_kb=128").expect("setting");
    let r = simulate(&cfg, |_, _| {}).expect("simulation runs");
    let (local, stream) = (common::bw(&r, "stream-local:deadline"), common::bw(&r, "stream:deadline"));
    assert!(stream >= 1.3 * local, "stream {stream} vs stream-local {local}");
}

/// Coordination pays on other geometries too (two, three and eight members; RAID 5 with
/// a small unit). Measured (256 MiB files), stream-local / stream MB/s: raid0:2:64k 110 /
/// 182, raid0:3:16k 91 / 274, raid5:8:32k 179 / 485.
#[test]
fn coordination_pays_on_other_geometries() {
    let text = PAR_READ_RAID0.replace("size=1g", "size=256m");
    for array in ["raid0:2:64k", "raid0:3:16k", "raid5:8:32k"] {
        let cfg = config(&text, Some(array), &["stream-local", "stream"], ContextMode::Process, 1);
        let r = simulate(&cfg, |_, _| {}).expect("simulation runs");
        let (local, stream) = (common::bw(&r, "stream-local:deadline"), common::bw(&r, "stream:deadline"));
        assert!(stream >= 1.3 * local, "{array}: stream {stream} vs stream-local {local}");
    }
}

/// A reader copying cached pages is not slowed to the pace of requests that block: one
/// buffered sequential reader on five disks reads at the array's speed (a page-cache hit
/// costs its reader 2 us, not the 21 us of a blocking request, which would cap it at 195
/// MB/s). Measured: 543 MB/s.
#[test]
fn one_buffered_reader_reads_at_the_arrays_speed() {
    let text = PAR_READ_RAID0.replace("size=1g", "size=256m").replace("numjobs=4", "numjobs=1");
    let r = run(&text, Some("raid0:5:64k"), &["deadline"]);
    let bw = common::bw(&r, "deadline");
    assert!(bw > 400e6, "one buffered reader on raid0:5:64k: {:.1} MB/s", bw / 1e6);
}

/// Issue 8: random requests form no streams worth waiting for: `stream` within 10% of
/// `deadline` (PostMark is in Figure 6's check). Eight readers of random 4 KiB blocks,
/// each inside its own 2 GiB region (close enough together that their requests do pass
/// the child test and form virtual streams), on the paper's array and on a wide one with
/// a small unit. Measured: 1.01x and 0.99x (0.89x on raid0:8:16k before members stopped
/// waiting for boarding pieces that were not coming).
#[test]
fn random_readers_neither_gain_nor_lose_on_an_array() {
    let random = "[global]\nioengine=psync\ndirect=1\nrw=randread\nbs=4k\nsize=2g\nio_size=4m\n[r]\nnumjobs=8\noffset_increment=20g\n";
    for array in ["raid0:5:64k", "raid0:8:16k"] {
        let r = run(random, Some(array), &["deadline", "stream"]);
        let ratio = common::bw(&r, "stream:deadline") / common::bw(&r, "deadline");
        assert!((ratio - 1.0).abs() <= 0.10, "{array}: stream/deadline {ratio:.3}");
    }
}

/// Linux md reads ahead two full stripes on an array (raid0.c, raid5.c): buffered
/// sequential readers present 640 KiB requests to raid0:5:64k, 512 KiB to raid5:5:64k
/// (four data members); `read_ahead_kb` set explicitly wins.
#[test]
fn arrays_read_ahead_two_stripes_unless_told() {
    let text = "[j]\nioengine=psync\ndirect=0\nrw=read\nbs=4k\nsize=64m\n";
    let largest = |array: &str, settings: &[&str]| {
        let mut cfg = config(text, Some(array), &["noop"], ContextMode::Process, 1);
        for kv in settings {
            cfg.run.settings.push_kv(kv).expect("setting");
        }
        let r = simulate(&cfg, |_, _| {}).expect("simulation runs");
        r.runs[0].device.requests_in.read_mean_bytes
    };
    let (r0, r5) = (largest("raid0:5:64k", &[]), largest("raid5:5:64k", &[]));
    assert!(r0 > 600e3 && r0 <= 640.0 * 1024.0, "raid0 mean read {r0}");
    assert!(r5 > 480e3 && r5 <= 512.0 * 1024.0, "raid5 mean read {r5}");
    let told = largest("raid0:5:64k", &["read_ahead_kb=128"]);
    assert!(told <= 128.0 * 1024.0, "read_ahead_kb=128: mean read {told}");
}

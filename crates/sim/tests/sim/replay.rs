//! Trace replay end to end (issue 6 items 3 and 4): a blkparse trace and the same requests as
//! a fio iolog give byte-identical results; determinism; conservation of bytes; open against
//! closed mode for a non-work-conserving scheduler; errors name file and line.

use std::fmt::Write as _;
use std::io::BufRead;
use std::path::PathBuf;

use headway_sim::trace::feed::FeedOptions;
use headway_sim::trace::synthetic::Synthetic;
use headway_sim::trace::{replay_with, Format, Mode, Records, ReplayConfig, ReplaySummary, TraceError};
use headway_sim::{ContextMode, Report, SimError};

fn config(format: Format, schedulers: &[&str], mode: Option<Mode>, context: ContextMode) -> ReplayConfig {
    ReplayConfig {
        path: PathBuf::from("test.trace"),
        format,
        mode,
        options: FeedOptions::default(),
        routing: None,
        run: headway_sim::RunSpec {
            context,
            ..headway_sim::RunSpec::new(headway_disk::builtin("wd5000aaks").unwrap())
                .with_schedulers(schedulers)
        },
    }
}

fn replay_text(text: &str, cfg: &ReplayConfig) -> Result<(Report, ReplaySummary), SimError> {
    let open = || -> Result<Records, TraceError> {
        let src: Box<dyn BufRead> = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
        Ok(Records::new(src, "test.trace", cfg.format, cfg.options.skip_bad))
    };
    replay_with(cfg, open, |_, _| {})
}

/// The same requests as blkparse text (with the events blkparse prints besides `Q`, and its
/// summary) and as a fio iolog v3 whose files are named after the processes. Three
/// processes: two sequential readers far apart and a writer; one request per millisecond.
fn equivalent_traces() -> (String, String) {
    let procs =
        [("dd", 100u32, 0u64, 'R'), ("cat", 200, 100 << 30, 'R'), ("kworker/0:1", 300, 300 << 30, 'W')];
    let mut blk = String::new();
    let mut log = String::from("fio version 3 iolog\n");
    for (name, pid, _, _) in procs {
        writeln!(log, "0 {name}[{pid}] add").unwrap();
    }
    for (name, pid, _, _) in procs {
        writeln!(log, "0 {name}[{pid}] open").unwrap();
    }
    let mut seq = 0;
    for i in 0..600u64 {
        let (name, pid, base, rw) = procs[(i % 3) as usize];
        let k = i / 3;
        let sector = base / 512 + k * 16;
        let ms = i;
        seq += 1;
        writeln!(
            blk,
            "  8,0    1 {seq:>8} {:>5}.{:09} {pid:>5}  Q   {rw} {sector} + 16 [{name}]",
            ms / 1000,
            (ms % 1000) * 1_000_000
        )
        .unwrap();
        seq += 1;
        writeln!(
            blk,
            "  8,0    1 {seq:>8} {:>5}.{:09} {pid:>5}  G   {rw} {sector} + 16 [{name}]",
            ms / 1000,
            (ms % 1000) * 1_000_000 + 500
        )
        .unwrap();
        if i % 7 == 0 {
            seq += 1;
            writeln!(
                blk,
                "  8,0    1 {seq:>8} {:>5}.{:09} {pid:>5}  U   N [{name}] 1",
                ms / 1000,
                (ms % 1000) * 1_000_000 + 900
            )
            .unwrap();
        }
        let action = if rw == 'R' { "read" } else { "write" };
        writeln!(log, "{} {name}[{pid}] {action} {} {}", ms * 1000, sector * 512, 16 * 512).unwrap();
    }
    blk.push_str("CPU1 (8,0):\n Reads Queued:         400,     3200KiB\nTotal (8,0):\n");
    for (name, pid, _, _) in procs {
        writeln!(log, "600000 {name}[{pid}] close").unwrap();
    }
    (blk, log)
}

const SCHEDULERS: &[&str] = &["noop", "deadline", "stream", "as", "cfq"];

#[test]
fn blkparse_and_the_same_requests_as_fio_iolog_give_identical_results() {
    let (blk, log) = equivalent_traces();
    for mode in [Mode::Open, Mode::Closed] {
        let a = config(Format::Blkparse, SCHEDULERS, Some(mode), ContextMode::Process);
        let b = config(Format::Iolog, SCHEDULERS, Some(mode), ContextMode::Process);
        let (ra, sa) = replay_text(&blk, &a).unwrap();
        let (rb, sb) = replay_text(&log, &b).unwrap();
        assert_eq!(ra.to_json(), rb.to_json(), "{mode:?}");
        assert_eq!((sa.stats.records, sa.stats.bytes, sa.stats.contexts), (600, 600 * 8192, 3));
        assert_eq!((sb.stats.records, sb.stats.bytes, sb.stats.contexts), (600, 600 * 8192, 3));
        let names: Vec<&str> = ra.runs[0].jobs.iter().map(|j| j.jobname.as_str()).collect();
        assert_eq!(names, ["dd[100]", "cat[200]", "kworker/0:1[300]"]);
    }
}

#[test]
fn replays_are_deterministic() {
    let (blk, _) = equivalent_traces();
    for context in [ContextMode::Process, ContextMode::None, ContextMode::Pool(3)] {
        let c = config(Format::Blkparse, &["deadline", "stream", "cfq"], None, context);
        let one = replay_text(&blk, &c).unwrap().0.to_json();
        let two = replay_text(&blk, &c).unwrap().0.to_json();
        assert_eq!(one, two, "{context:?}");
    }
}

#[test]
fn every_byte_of_the_trace_is_transferred_once() {
    let (blk, _) = equivalent_traces();
    for mode in [Mode::Open, Mode::Closed] {
        for depth in [1, 32] {
            let mut c = config(Format::Blkparse, SCHEDULERS, Some(mode), ContextMode::Process);
            c.run.drive.queue_depth = depth;
            let (report, s) = replay_text(&blk, &c).unwrap();
            for run in &report.runs {
                let what = format!("{mode:?} depth {depth} {}", run.scheduler);
                let io: u64 = run.jobs.iter().map(|j| j.read.io_bytes + j.write.io_bytes).sum();
                let ios: u64 = run.jobs.iter().map(|j| j.read.total_ios + j.write.total_ios).sum();
                assert_eq!(io, s.stats.bytes, "{what}");
                assert_eq!(run.aggregate.io_bytes, s.stats.bytes, "{what}");
                assert_eq!(ios, s.stats.records, "{what}");
                let d = &run.device;
                let bytes = |f: &headway_sim::report::Flow| {
                    (f.reads as f64 * f.read_mean_bytes + f.writes as f64 * f.write_mean_bytes).round() as u64
                };
                assert_eq!(d.requests_in.count, s.stats.records, "{what}");
                assert_eq!(bytes(&d.requests_in), s.stats.bytes, "{what}");
                // merged or not, every byte reaches the drive once
                assert_eq!(bytes(&d.requests_out), s.stats.bytes, "{what}");
                assert_eq!(d.requests, d.requests_out.count, "{what}");
            }
        }
    }
}

/// Four synchronous sequential readers, 4 KiB requests, 100 GiB apart, recorded 1 us apart
/// (so the trace's gaps are think-free). Open mode hands every request to the scheduler at
/// once: any scheduler sorts them. Closed mode makes each reader wait for its previous
/// request: deceptive idleness, which only a non-work-conserving scheduler overcomes.
#[test]
fn closed_mode_is_where_non_work_conserving_schedulers_matter() {
    let s = Synthetic { requests: 4 * 1500, readers: 4, spacing: 100 << 30, gap_ns: 1_000 };
    let cfg =
        |mode| config(Format::Blkparse, &["deadline", "stream", "as"], Some(mode), ContextMode::Process);
    let run = |mode| {
        let c = cfg(mode);
        let open = || Ok(Records::new(Box::new(s.reader()), "synthetic", Format::Blkparse, false));
        replay_with(&c, open, |_, _| {}).unwrap().0
    };
    let bw = |r: &Report, i: usize| r.runs[i].aggregate.bw_bytes as f64;
    let (open, closed) = (run(Mode::Open), run(Mode::Closed));
    let gain_open = bw(&open, 1) / bw(&open, 0);
    let gain_closed = bw(&closed, 1) / bw(&closed, 0);
    let as_closed = bw(&closed, 2) / bw(&closed, 0);
    assert!(gain_closed > 5.0, "stream over deadline, closed: {gain_closed:.2}");
    assert!(as_closed > 5.0, "as over deadline, closed: {as_closed:.2}");
    assert!(gain_open < 2.0, "stream over deadline, open: {gain_open:.2}");
    assert!(gain_closed > 3.0 * gain_open, "closed {gain_closed:.2} vs open {gain_open:.2}");
    // the waits are what buys it
    assert!(closed.runs[1].device.idle_wait_ns > 0);
    assert_eq!(closed.runs[0].device.idle_wait_ns, 0);
}

#[test]
fn malformed_lines_name_file_and_line_unless_skipped() {
    let text = "0 0 0 8 1\n1 0 8 8 1\n2 zero 16 8 1\n3 0 24 8 1\n";
    let c = config(Format::Disksim, &["noop"], None, ContextMode::Process);
    let e = replay_text(text, &c).unwrap_err().to_string();
    assert_eq!(e, "test.trace:3: devno `zero` is not a number");
    let mut c = c;
    c.options.skip_bad = true;
    let (r, s) = replay_text(text, &c).unwrap();
    assert_eq!((s.stats.records, s.stats.bad), (3, 1));
    assert_eq!(r.runs[0].aggregate.io_bytes, 3 * 4096);
}

#[test]
fn requests_past_the_disk_are_errors_or_wrap() {
    let cap = headway_disk::Hdd::new(headway_disk::builtin("wd5000aaks").unwrap()).capacity();
    let text = format!("0 0 0 8 1\n1 0 {} 8 1\n2 0 {} 8 0\n", cap - 4, cap * 3 + 16);
    let c = config(Format::Disksim, &["noop"], None, ContextMode::Process);
    let e = replay_text(&text, &c).unwrap_err().to_string();
    assert!(e.starts_with("test.trace:2: request at sector"), "{e}");
    assert!(e.contains("--wrap"), "{e}");
    let mut c = c;
    c.options.wrap = true;
    let (r, s) = replay_text(&text, &c).unwrap();
    assert_eq!((s.stats.records, s.stats.wrapped), (3, 2));
    assert_eq!(r.runs[0].aggregate.io_bytes, 3 * 4096);
}

#[test]
fn untimed_fio_iologs_replay_closed_only() {
    let log = "fio version 2 iolog\nf add\nf open\nf read 0 4096\nf read 4096 4096\nf close\n";
    let c = config(Format::Iolog, &["noop"], None, ContextMode::Process);
    let (r, s) = replay_text(log, &c).unwrap();
    assert_eq!(s.mode, "closed");
    assert_eq!(r.runs[0].jobs[0].read.total_ios, 2);
    let c = config(Format::Iolog, &["noop"], Some(Mode::Open), ContextMode::Process);
    let e = replay_text(log, &c).unwrap_err().to_string();
    assert!(e.contains("no timestamps") && e.contains("--mode closed"), "{e}");
}

#[test]
fn contexts_past_the_job_bound_share_one_job() {
    let mut text = String::new();
    for i in 0..10u64 {
        writeln!(text, "{} {} {} 8 1", i, i, i * 1000).unwrap();
    }
    let mut c = config(Format::Disksim, &["cfq"], Some(Mode::Closed), ContextMode::Process);
    c.options.max_jobs = 4;
    let (r, s) = replay_text(&text, &c).unwrap();
    assert_eq!(s.stats.contexts, 10);
    let jobs = &r.runs[0].jobs;
    let names: Vec<&str> = jobs.iter().map(|j| j.jobname.as_str()).collect();
    assert_eq!(names, ["dev0", "dev1", "dev2", "dev3", "others"]);
    assert_eq!(jobs[4].read.total_ios, 6);
}

#[test]
fn every_format_replays() {
    let traces = [
        (Format::Msr, "128166372003061629,usr,0,Read,7014609920,24576,30099\n128166372016382155,usr,0,Write,1317441536,8192,1411\n"),
        (Format::Spc, "0,303567,3584,w,0.000000\n1,55590,3072,r,0.013470\n"),
        (Format::Fiu, "89966527712179 4890 syslogd 904265560 8 W 6 0 h\n89966527800000 4891 httpd 100 16 R 6 0 h\n"),
        (Format::Disksim, "0.0 0 1000 16 1\n2.5 1 64 8 0\n"),
    ];
    for (f, text) in traces {
        for mode in [Mode::Open, Mode::Closed] {
            let c = config(f, &["noop", "stream"], Some(mode), ContextMode::Process);
            let (r, s) = replay_text(text, &c).unwrap();
            assert_eq!(s.stats.records, 2, "{f:?}");
            assert_eq!(r.runs[1].aggregate.io_bytes, s.stats.bytes, "{f:?}");
        }
    }
}

/// A writer that flushes after every fourth write (a journal's pattern), as blkparse text
/// (`FWS 0 + 0`, the kernel's empty flush) and as a fio iolog v3 (`sync 0 0`).
fn flushing_traces() -> (String, String) {
    let mut blk = String::new();
    let mut log = String::from("fio version 3 iolog\n0 jbd2[9] add\n0 jbd2[9] open\n");
    for i in 0..200u64 {
        let ms = 2 * i;
        let sector = (i * 7919 % 900) * 1_000_000;
        writeln!(
            blk,
            "  8,0 0 {} {}.{:09} 9 Q WS {sector} + 8 [jbd2]",
            2 * i + 1,
            ms / 1000,
            (ms % 1000) * 1_000_000
        )
        .unwrap();
        writeln!(log, "{} jbd2[9] write {} 4096", ms * 1000, sector * 512).unwrap();
        if i % 4 == 3 {
            let t = ms + 1;
            writeln!(
                blk,
                "  8,0 0 {} {}.{:09} 9 Q FWS 0 + 0 [jbd2]",
                2 * i + 2,
                t / 1000,
                (t % 1000) * 1_000_000
            )
            .unwrap();
            writeln!(log, "{} jbd2[9] sync 0 0", t * 1000).unwrap();
        }
    }
    (blk, log)
}

#[test]
fn flushes_replay_as_the_drive_s_cache_flush() {
    use headway_disk::WriteCache;
    let (blk, log) = flushing_traces();
    for mode in [Mode::Open, Mode::Closed] {
        let run = |format: Format, text: &str, wc: WriteCache| {
            let mut c = config(format, &["noop"], Some(mode), ContextMode::Process);
            c.run.drive.write_cache = wc;
            replay_text(text, &c).unwrap()
        };
        let (back, s) = run(Format::Blkparse, &blk, WriteCache::Back);
        assert_eq!((s.stats.records, s.stats.flushes), (200, 50), "{mode:?}");
        // the same requests and flushes from the fio log: the same results
        assert_eq!(back.to_json(), run(Format::Iolog, &log, WriteCache::Back).0.to_json(), "{mode:?}");
        let sync = back.runs[0].jobs[0].sync.as_ref().expect("the flushes are reported");
        assert_eq!(sync.total_ios, 50);
        // write-back: a flush waits for the destage of up to four scattered writes
        assert!(sync.lat_ns.mean > 5e6, "{mode:?}: {} ns", sync.lat_ns.mean);
        assert_eq!(back.runs[0].device.destaged_bytes, 200 * 4096);
        // write-through: nothing to destage, a flush waits for no write of its own
        let (through, _) = run(Format::Blkparse, &blk, WriteCache::Through);
        let wt = through.runs[0].jobs[0].sync.as_ref().unwrap();
        assert!(
            wt.lat_ns.mean < 0.5 * sync.lat_ns.mean,
            "{mode:?}: {} vs {}",
            wt.lat_ns.mean,
            sync.lat_ns.mean
        );
    }
}

/// A trace replays on an array as a job file runs on one: its addresses are the array's,
/// every member serves its share, and coordinated `stream` is told the array requests.
/// The same trace on one drive and on four: the bytes are the same, the array's members
/// each see a part.
#[test]
fn a_trace_replays_on_an_array() {
    let (blk, _) = equivalent_traces();
    let one = config(Format::Blkparse, &["deadline", "stream"], None, ContextMode::Process);
    let mut four = one.clone();
    four.run.array = Some("raid0:4:64k".parse().unwrap());
    let (single, _) = replay_text(&blk, &one).expect("replays on one drive");
    let (array, _) = replay_text(&blk, &four).expect("replays on the array");
    for (s, a) in single.runs.iter().zip(&array.runs) {
        assert_eq!(s.aggregate.io_bytes, a.aggregate.io_bytes, "{}", a.scheduler);
        assert!(s.members.is_none());
        let members = a.members.as_ref().expect("an array reports its members");
        assert_eq!(members.len(), 4);
        assert!(
            members.iter().all(|m| m.device.requests > 0),
            "{}: every member served requests",
            a.scheduler
        );
        assert_eq!(a.array.as_deref(), Some("raid0:4:64k"));
    }
    assert!(
        array.runs[1].scheduler_stats.keys().any(|k| k.starts_with("array")),
        "coordinated stream scheduling counts array-wide: {:?}",
        array.runs[1].scheduler_stats.keys().collect::<Vec<_>>()
    );
}

/// The same requests as blktrace's binary per-CPU files (two CPUs, process names from
/// notify events, merges and completions besides the queue events) replay exactly as their
/// blkparse text: `--format blktrace` needs no blkparse.
#[test]
fn blktrace_binary_files_replay_as_their_blkparse_text() {
    use headway_sim::trace::blktrace::Event;
    let (blk, _) = equivalent_traces();
    let dir = tempfile::tempdir().unwrap();
    let (mut cpu0, mut cpu1) = (Vec::new(), Vec::new());
    let procs = [("dd", 100u32), ("cat", 200), ("kworker/0:1", 300)];
    for (name, pid) in procs {
        cpu0.extend(Event::process(pid, name, 0, 8 << 20).encode());
    }
    // each Q line of the text as an event, alternating CPUs, with a completion after it
    for (n, l) in blk.lines().filter(|l| l.split_whitespace().nth(5) == Some("Q")).enumerate() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (s, ns) = f[3].split_once('.').unwrap();
        let time = s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap();
        let pid: u32 = f[4].parse().unwrap();
        let cats: u32 = if f[6].contains('W') { 2 } else { 1 };
        let sector: u64 = f[7].parse().unwrap();
        let bytes = f[9].parse::<u32>().unwrap() * 512;
        let cpu = (n % 2) as u32;
        let q = Event {
            time,
            sector,
            bytes,
            action: (cats << 16) | 1,
            pid,
            device: 8 << 20,
            cpu,
            sequence: n as u32,
            pdu: vec![],
        };
        let c = Event { time: time + 300, action: (cats << 16) | 8, ..q.clone() };
        let out = if cpu == 0 { &mut cpu0 } else { &mut cpu1 };
        out.extend(q.encode());
        out.extend(c.encode());
    }
    std::fs::write(dir.path().join("sda.blktrace.0"), cpu0).unwrap();
    std::fs::write(dir.path().join("sda.blktrace.1"), cpu1).unwrap();
    for mode in [Mode::Open, Mode::Closed] {
        let text = config(Format::Blkparse, SCHEDULERS, Some(mode), ContextMode::Process);
        let (want, ws) = replay_text(&blk, &text).unwrap();
        // the prefix and any one of the files name the trace
        for path in [dir.path().join("sda"), dir.path().join("sda.blktrace.1")] {
            let mut bin = config(Format::Blktrace, SCHEDULERS, Some(mode), ContextMode::Process);
            bin.path = path.clone();
            let (got, gs) = headway_sim::trace::replay(&bin, |_, _| {}).unwrap();
            assert_eq!(got.to_json(), want.to_json(), "{mode:?} {}", path.display());
            assert_eq!(
                (gs.stats.records, gs.stats.bytes, gs.stats.contexts),
                (ws.stats.records, ws.stats.bytes, 3)
            );
        }
    }
    let mut missing = config(Format::Blktrace, SCHEDULERS, None, ContextMode::Process);
    missing.path = dir.path().join("sdb");
    let e = headway_sim::trace::replay(&missing, |_, _| {}).unwrap_err().to_string();
    assert!(e.contains("no blktrace files (") && e.contains("sdb.blktrace.N"), "{e}");
}

/// A routing to several devices and a run of one (or the other way round) do not go
/// together: the replay says so before it runs.
#[test]
fn routing_and_devices_come_together() {
    use headway_sim::trace::disksim::Routing;
    let mut cfg = config(Format::Disksim, &["noop"], None, ContextMode::Process);
    cfg.routing = Some(std::sync::Arc::new(Routing { mapping: None, reaches: Some(vec![Ok(0), Ok(1)]) }));
    let e = replay_text("0 0 0 8 1\n", &cfg).unwrap_err().to_string();
    assert!(e.contains("needs the trace's routing to them"), "{e}");
    // the other way round: devices and no routing
    cfg.routing = None;
    let disk = cfg.run.disk.clone();
    cfg.run.devices = vec![
        headway_sim::Device { disk: disk.clone(), array: None },
        headway_sim::Device { disk, array: None },
    ];
    let e = replay_text("0 0 0 8 1\n", &cfg).unwrap_err().to_string();
    assert!(e.contains("needs the trace's routing to them"), "{e}");
    // both: the requests go where the routing says
    cfg.routing = Some(std::sync::Arc::new(Routing { mapping: None, reaches: Some(vec![Ok(1), Ok(0)]) }));
    let (report, _) = replay_text("0 0 0 8 1\n1 0 8 8 1\n", &cfg).unwrap();
    assert_eq!(report.runs[0].jobs[0].read.total_ios, 2);
}

//! Trace replay in bounded memory (issue 6 item 4): replaying ten times more requests must
//! not raise the process's peak resident memory (VmHWM) by more than a few MiB. A test
//! binary of its own, so that no other test shares the process's peak. The 10-million-request
//! run is in BENCHMARKS.md.

use std::path::PathBuf;

use headway_sim::trace::feed::FeedOptions;
use headway_sim::trace::synthetic::Synthetic;
use headway_sim::trace::{replay_with, Format, Mode, Records, ReplayConfig};

/// Peak resident set size of this process, KiB (Linux).
fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn replay(s: Synthetic, mode: Mode, scheduler: &str) -> u64 {
    let cfg = ReplayConfig {
        path: PathBuf::from("synthetic"),
        format: Format::Blkparse,
        mode: Some(mode),
        routing: None,
        // (the window bounds closed mode's read-ahead: this trace runs slower than recorded,
        // so the window fills)
        options: FeedOptions { window: 1 << 16, ..Default::default() },

        run: headway_sim::RunSpec::new(headway_disk::builtin("wd5000aaks").unwrap())
            .with_schedulers(&[scheduler]),
    };
    let open = || Ok(Records::new(Box::new(s.reader()), "synthetic", Format::Blkparse, false));
    let (report, summary) = replay_with(&cfg, open, |_, _| {}).expect("replay runs");
    assert_eq!(summary.stats.records, s.requests);
    assert_eq!(report.runs[0].aggregate.io_bytes, s.bytes());
    summary.stats.records
}

#[test]
fn ten_times_the_requests_in_the_same_memory() {
    let Some(start) = vm_hwm_kib() else { return };
    // closed: four interleaved readers; open: one reader the disk keeps up with
    let closed = |n| Synthetic { requests: n, readers: 4, spacing: 100 << 30, gap_ns: 1_000 };
    let open = |n| Synthetic { requests: n, readers: 1, spacing: 0, gap_ns: 200_000 };
    replay(closed(100_000), Mode::Closed, "stream");
    replay(open(100_000), Mode::Open, "deadline");
    let small = vm_hwm_kib().unwrap();
    replay(closed(1_000_000), Mode::Closed, "stream");
    let mid = vm_hwm_kib().unwrap();
    replay(open(1_000_000), Mode::Open, "deadline");
    let large = vm_hwm_kib().unwrap();
    eprintln!("closed 1M: {mid} KiB");
    eprintln!("VmHWM: start {start} KiB, after 100k-request replays {small} KiB, after 1M {large} KiB");
    // 1M records held in memory would take 40 MB or more
    assert!(large - small < 8 * 1024, "peak grew by {} KiB from 100k to 1M requests", large - small);
}

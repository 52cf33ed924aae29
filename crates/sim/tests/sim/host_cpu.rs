//! `cpu_per_request`: the host's one CPU, which every job's requests queue for before they
//! are submitted (a guest's vCPU, a busy client).

use headway_sched::Settings;
use headway_sim::{simulate, ContextMode, RunReport};

use crate::common;

fn run(text: &str, cpu: &str) -> RunReport {
    let mut cfg = common::config(text, "wd5000aaks", &["noop"], ContextMode::Process, 1);
    let mut s = Settings::new();
    s.push_kv(&format!("cpu_per_request={cpu}")).unwrap();
    cfg.run.settings = s;
    simulate(&cfg, |_, _| {}).expect("simulation runs").runs.remove(0)
}

/// Four jobs reading the same data (drive-cache hits but the first, tens of microseconds
/// each): without a CPU they go as fast as the drive answers; with 500 us of CPU per
/// request they go at the CPU's pace, 2,000 requests a second in all, a quarter each.
#[test]
fn jobs_share_the_hosts_one_cpu() {
    let text = "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=64m\nruntime=2s\ntime_based=1\n\
                [r]\nnumjobs=4\n";
    let free = run(text, "0");
    assert!(free.aggregate.iops > 10_000.0, "no CPU: {:.0} IOPS", free.aggregate.iops);
    let busy = run(text, "500us");
    let iops = busy.aggregate.iops;
    assert!((iops / 2000.0 - 1.0).abs() < 0.02, "one CPU at 500 us a request: {iops:.0} IOPS");
    for j in &busy.jobs {
        let share = j.read.total_ios as f64 / (iops * 2.0);
        assert!((share - 0.25).abs() < 0.01, "{}: {share:.3} of the requests", j.jobname);
    }
}

/// A lone job's cycle is the CPU's time plus what it was without it.
#[test]
fn a_lone_jobs_cycle_grows_by_the_cpu_time() {
    let text = "[r]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=1g\nruntime=2s\ntime_based=1\n";
    let cycle = |r: &RunReport| 1e9 / r.aggregate.iops;
    let (free, busy) = (run(text, "0"), run(text, "150us"));
    let grown = cycle(&busy) - cycle(&free);
    assert!((grown / 150_000.0 - 1.0).abs() < 0.02, "cycle {:.0} -> {:.0} ns", cycle(&free), cycle(&busy));
}

/// A buffered writer whose last CPU turn ends after its runtime: it submits nothing more and
/// has nothing in flight, so the run ends (the flusher once kept ticking for it, forever).
/// Its writes are charged the CPU too: at 274 us a request, about 3,650 a second.
#[test]
fn a_buffered_writer_past_its_runtime_ends_the_run() {
    let text = "[w]\nioengine=psync\ndirect=0\nrw=write\nbs=4k\nsize=4g\nruntime=1s\ntime_based=1\n";
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(run(text, "274us"));
    });
    let r = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the run ends");
    // the job's own figures: its writes stay in the page cache (15 MB, below the background
    // threshold), so the drive, whose last completion ends the aggregate's stretch, saw none
    let j = &r.jobs[0];
    assert!((j.job_runtime as f64 - 1000.0).abs() <= 2.0, "runtime {} ms", j.job_runtime);
    let iops = j.write.total_ios as f64 / (j.job_runtime as f64 / 1e3);
    assert!((iops / (1e9 / 274_000.0) - 1.0).abs() < 0.05, "{iops:.0} writes a second");
}

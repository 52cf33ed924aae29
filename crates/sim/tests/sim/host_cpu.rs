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

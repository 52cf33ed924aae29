//! Issue 19's checks of headway's `bfq` that need the whole simulator: weights split the
//! disk as Linux 6.1's BFQ splits it, measured against a real guest (`headway lab`).
//!
//! The kernel's figures were measured on 2026-11-26 with `headway lab run` on a spec with
//! `fs = "raw"`, `guest_scheduler = ["bfq"]`, host `noop` on the emulated wd5000aaks and the
//! workload `experiments/bfq-weights-random.fio` (or `-seq.fio`); Debian's cloud kernel
//! 6.1.0-56 under TCG. Light / heavy reads completed in 20 s:
//! * random readers, default tunables: 194 / 2,420 (light's share of the I/O 7.4%);
//! * random readers, `strict_guarantees=1`: 838 / 1,650 (1:1.97);
//! * sequential readers, default tunables: 5.85 / 12.33 MB/s (1:2.11).

use headway_sched::Settings;
use headway_sim::{simulate, ContextMode, RunReport};

use crate::common;

fn bfq(job: &str, tunables: &[&str]) -> RunReport {
    let mut cfg = common::config(&common::exp(job), "wd5000aaks", &["bfq"], ContextMode::Process, 1);
    let mut s = Settings::new();
    for kv in tunables {
        s.push_kv(kv).expect("a tunable");
    }
    cfg.run.settings = s;
    simulate(&cfg, |_, _| {}).expect("simulation runs").runs.remove(0)
}

/// (light, heavy) of a per-job figure.
fn pair(r: &RunReport, f: impl Fn(&headway_sim::report::JobReport) -> f64) -> (f64, f64) {
    let of =
        |name: &str| f(r.jobs.iter().find(|j| j.jobname == name).unwrap_or_else(|| panic!("no job {name}")));
    (of("light"), of("heavy"))
}

/// Issue 19: two random readers with weights 1:2 get disk time 1:2 within 10% — when BFQ
/// idles for both, i.e. with `strict_guarantees` (the kernel: 1:1.97 in I/O).
#[test]
fn weights_split_random_readers_disk_time_one_to_two_with_strict_guarantees() {
    let r = bfq("bfq-weights-random.fio", &["strict_guarantees=1"]);
    let (light, heavy) = pair(&r, |j| j.disk_time_ns as f64);
    let ratio = heavy / light;
    assert!((1.8..=2.2).contains(&ratio), "disk time heavy / light {ratio:.2} (light {light:.0} ns)");
}

/// With Linux's default tunables the lighter random reader is not idled for and loses its
/// turn at every request: its share of the I/O is the kernel's 7.4% within 10 points, far
/// below the third its weight asks for, and it is not starved.
#[test]
fn with_default_tunables_the_lighter_random_reader_gets_what_the_kernel_gives_it() {
    let r = bfq("bfq-weights-random.fio", &[]);
    let (light, heavy) = pair(&r, |j| j.read.total_ios as f64);
    let share = light / (light + heavy);
    assert!((0.02..=0.174).contains(&share), "light's share of the I/O {share:.3} (kernel 0.074)");
}

/// Issue 19: two sequential readers with weights 1:2 get throughput 1:2 within 10%.
#[test]
fn weights_split_sequential_readers_throughput_one_to_two() {
    let r = bfq("bfq-weights-seq.fio", &[]);
    let (light, heavy) = pair(&r, |j| j.read.bw_bytes as f64);
    let ratio = heavy / light;
    assert!((1.8..=2.2).contains(&ratio), "throughput heavy / light {ratio:.2}");
}

/// `headway_weight` means the same as the I/O priority's weight: 100 and 200 split the
/// sequential readers 1:2 too.
#[test]
fn headway_weight_splits_like_the_priority_weight() {
    let text = common::exp("bfq-weights-seq.fio")
        .replace("prio=5", "headway_weight=100")
        .replace("prio=2", "headway_weight=200");
    let mut cfg = common::config(&text, "wd5000aaks", &["bfq"], ContextMode::Process, 1);
    cfg.run.settings = Settings::new();
    let r = simulate(&cfg, |_, _| {}).expect("simulation runs").runs.remove(0);
    let (light, heavy) = pair(&r, |j| j.read.bw_bytes as f64);
    let ratio = heavy / light;
    assert!((1.8..=2.2).contains(&ratio), "throughput heavy / light {ratio:.2}");
}

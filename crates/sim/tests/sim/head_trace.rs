//! `simulate_traced`: the dispatch trace the Python package's head-position plot draws.
//! Absent unless asked for, so the CLI's JSON is unchanged; when asked, every dispatch of
//! the window, in time order, attributed to the job clones.

use headway_sched::Duration;
use headway_sim::{simulate, simulate_traced, ContextMode};

use crate::common;

/// Four synchronous readers 50 GiB apart (par-read, small).
const PAR_READ: &str = "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=8m\n\
                        [par-read]\nnumjobs=4\noffset_increment=51g\n";

#[test]
fn no_trace_unless_asked() {
    let cfg = common::config(PAR_READ, "wd5000aaks", &["deadline"], ContextMode::None, 1);
    let plain = simulate(&cfg, |_, _| {}).unwrap();
    assert!(plain.runs[0].head_trace.is_none());
    assert!(!plain.to_json().contains("head_trace"));
    let zero = simulate_traced(&cfg, Duration(0), |_, _| {}).unwrap();
    assert_eq!(zero.to_json(), plain.to_json());
}

#[test]
fn trace_holds_the_window_s_dispatches() {
    let window = Duration(200_000_000);
    let cfg = common::config(PAR_READ, "wd5000aaks", &["deadline", "stream"], ContextMode::None, 1);
    let plain = simulate(&cfg, |_, _| {}).unwrap();
    let traced = simulate_traced(&cfg, window, |_, _| {}).unwrap();
    for (p, t) in plain.runs.iter().zip(&traced.runs) {
        // tracing changes nothing else
        assert_eq!(p.aggregate, t.aggregate);
        let tr = t.head_trace.as_ref().expect("asked for");
        let n = tr.t_ns.len();
        assert!(n > 0 && n == tr.sector.len() && n == tr.sectors.len() && n == tr.job.len());
        assert!(n == tr.wait_ns.len() && n == tr.service_ns.len());
        // a synchronous reader's 4 KiB read: the drive takes it well under a revolution past
        // the seek, and every traced command completed in this run
        assert!(tr.service_ns.iter().all(|&s| s > 0 && s < 40_000_000), "{:?}", &tr.service_ns[..8]);
        // each command waited at most the window in the scheduler; dispatch >= arrival
        assert!(tr.wait_ns.iter().zip(&tr.t_ns).all(|(w, t)| w <= t));
        assert!(tr.t_ns.windows(2).all(|w| w[0] <= w[1]));
        assert!(tr.t_ns.iter().all(|&x| x <= window.0));
        assert!(tr.job.iter().all(|&j| (0..4).contains(&j)));
        assert!(tr.sectors.iter().all(|&s| s == 8));
    }
    // deadline alternates between the readers; stream scheduling stays with one for a slice
    let switches = |i: usize| {
        let j = &traced.runs[i].head_trace.as_ref().unwrap().job;
        j.windows(2).filter(|w| w[0] != w[1]).count() as f64 / j.len() as f64
    };
    assert!(switches(0) > 0.9, "deadline switches {}", switches(0));
    assert!(switches(1) < 0.05, "stream switches {}", switches(1));
}

/// Wait and service times add up with what the jobs see: each of these synchronous
/// readers has one request at a time and no page cache, so its requests' completion
/// latencies are exactly their commands' wait + service (+ the 20 us host overhead is
/// between requests, not in them).
#[test]
fn wait_plus_service_is_the_request_latency() {
    let cfg = common::config(PAR_READ, "wd5000aaks", &["deadline", "stream"], ContextMode::None, 1);
    let mut lat: Vec<Vec<u64>> = vec![Vec::new(); 2];
    let traced = simulate_traced(&cfg, Duration(u64::MAX / 2), |_, _| {}).unwrap();
    let logged =
        headway_sim::simulate_logged(&cfg, |_, _| {}, |run, r| lat[run].push(r.complete_ns - r.submit_ns))
            .unwrap();
    // logging changes nothing of the report
    assert_eq!(logged.to_json(), simulate(&cfg, |_, _| {}).unwrap().to_json());
    for (i, run) in traced.runs.iter().enumerate() {
        let tr = run.head_trace.as_ref().unwrap();
        let mut a: Vec<u64> = tr.wait_ns.iter().zip(&tr.service_ns).map(|(w, s)| w + s).collect();
        let mut b = lat[i].clone();
        assert_eq!(a.len(), b.len(), "one command per request (nothing merges here)");
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "{}", run.scheduler);
    }
}

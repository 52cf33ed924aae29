//! seeds/004 (HTBS) shape tests: pClock against HTBS on the paper's Samsung HD080HJ without
//! command queueing, and stream scheduling over pClock (`stream:pclock`) beside them.

use crate::common;

use common::{bw, exp};
use headway_sim::{ContextMode, Report};

fn run(text: &str, schedulers: &[&str]) -> Report {
    common::run(text, "hd080hj", schedulers, ContextMode::Process, 1)
}

fn fig3(numjobs: u32, secs: u32) -> String {
    headway_sim::reproduce::htbs::fig3_text(numjobs, secs)
}

/// 004 Figure 3: synchronous sequential readers on distinct regions. One job: no seeks,
/// the same bandwidth either way. From two jobs up pClock alternates between the regions
/// one request at a time (each request a long seek) while HTBS serves Bmax = 20 requests
/// of one job in a row: at least 1.5x pClock's aggregate bandwidth.
#[test]
fn fig3_htbs_beats_pclock_from_two_jobs() {
    let mut ratios = Vec::new();
    for n in headway_sim::reproduce::htbs::FIG3_JOBS {
        let r = run(&fig3(n, 5), &["pclock", "htbs", "stream:pclock"]);
        let (pc, ht, ss) = (bw(&r, "pclock"), bw(&r, "htbs"), bw(&r, "stream:pclock"));
        eprintln!(
            "fig3 jobs={n}: pclock {:.2} MB/s, htbs {:.2} MB/s ({:.2}x), stream:pclock {:.2} MB/s ({:.2}x)",
            pc / 1e6,
            ht / 1e6,
            ht / pc,
            ss / 1e6,
            ss / pc
        );
        assert!(n == 1 || ht >= 1.5 * pc, "{n} jobs: htbs {:.2}x pclock < 1.5x", ht / pc);
        ratios.push(ht / pc);
    }
    // and `headway reproduce htbs-fig3`'s statements
    let checks = headway_sim::reproduce::htbs::fig3_statements(&ratios);
    assert!(checks.iter().all(|c| c.held), "{checks:?}");
}

/// Rate achieved / target of each job (app1..app4) in the run of `sched`.
fn fractions(r: &Report, sched: &str) -> Vec<f64> {
    let run = r.runs.iter().find(|x| x.scheduler == sched).unwrap();
    run.jobs.iter().map(|j| j.qos.as_ref().expect("a QoS job").rate_fraction).collect()
}

/// 004 Figures 5-6: four synchronous jobs guaranteed 8800, 4000, 2000 and 800 KB/s, delay
/// 100 ms, no bursts. pClock serves them one request each in turn: the big ones fall far
/// short (at least one under 80% of its rate). HTBS meets every rate (at least 95%,
/// averaged over the run), the big jobs included (Bmax does not starve them).
#[test]
fn fig5_htbs_meets_every_rate_pclock_does_not() {
    let text = exp("htbs-fig5-rates.fio").replace("runtime=60s", "runtime=20s");
    let r = run(&text, &["pclock", "htbs", "stream:pclock"]);
    for s in ["pclock", "htbs", "stream:pclock"] {
        let run = r.runs.iter().find(|x| x.scheduler == s).unwrap();
        let q: Vec<String> = run
            .jobs
            .iter()
            .map(|j| {
                let q = j.qos.as_ref().unwrap();
                format!(
                    "{} {:.0}/{} KB/s ({:.0}%, {} misses)",
                    j.jobname,
                    q.rate_achieved / 1e3,
                    q.rate_target / 1000,
                    q.rate_fraction * 100.0,
                    q.deadline_misses
                )
            })
            .collect();
        eprintln!("fig5 {s}: {:.2} MB/s: {}", run.aggregate.bw_bytes as f64 / 1e6, q.join(", "));
    }
    let pc = fractions(&r, "pclock");
    assert!(pc.iter().any(|&f| f < 0.8), "pclock met every rate: {pc:?}");
    let ht = fractions(&r, "htbs");
    assert!(ht.iter().all(|&f| f >= 0.95), "htbs missed a rate: {ht:?}");
}

/// The open question (none of the papers answers it): stream scheduling over pClock
/// against HTBS. Measured (20 s runs; `experiments/htbs-fig5-rates.fio`,
/// `experiments/htbs-qos-probe.fio`):
/// - Figure 5's four sequential readers: both meet every rate; stream:pclock moves more
///   data (55.0 against 38.6 MB/s): its 124 ms stream slices hold a region far longer than
///   HTBS's Bmax = 20 requests (1.25 MiB at 64 KiB).
/// - Add a random reader guaranteed 10 IOPS within 50 ms: HTBS keeps its guarantee (15.2
///   IOPS, 2 of 305 requests late: a random application gets no batch, and the smallest
///   finish tag is chosen at every batch end); stream:pclock makes it wait behind whole
///   stream slices: 6.3 IOPS, 118 of 127 requests later than 50 ms.
#[test]
fn stream_pclock_against_htbs_throughput_and_latency() {
    let text = exp("htbs-fig5-rates.fio").replace("runtime=60s", "runtime=20s");
    let r = run(&text, &["htbs", "stream:pclock"]);
    assert!(fractions(&r, "stream:pclock").iter().all(|&f| f >= 0.95));
    assert!(bw(&r, "stream:pclock") >= 1.2 * bw(&r, "htbs"));

    let text = exp("htbs-qos-probe.fio").replace("runtime=60s", "runtime=20s");
    let r = run(&text, &["htbs", "stream:pclock"]);
    let probe = |s: &str| {
        let run = r.runs.iter().find(|x| x.scheduler == s).unwrap();
        let q = run.jobs[4].qos.clone().unwrap();
        eprintln!(
            "probe under {s}: {:.1} IOPS of {} ({} of {} requests late, p99 {:.0} ms)",
            q.rate_achieved,
            q.rate_target,
            q.deadline_misses,
            q.requests,
            q.latency_ns.percentile["99.000000"] as f64 / 1e6
        );
        q
    };
    let (h, s) = (probe("htbs"), probe("stream:pclock"));
    assert!(h.deadline_misses * 20 <= h.requests, "htbs: {} of {} late", h.deadline_misses, h.requests);
    assert!(
        s.deadline_misses * 2 >= s.requests,
        "stream:pclock: {} of {} late",
        s.deadline_misses,
        s.requests
    );
    assert!(h.rate_fraction >= 0.95 && s.rate_fraction < 0.8, "{} vs {}", h.rate_fraction, s.rate_fraction);
    // the four readers keep their rates under HTBS with the probe there too
    assert!(fractions(&r, "htbs")[..4].iter().all(|&f| f >= 0.95));
}

/// The JSON contract: `jobs[].qos` only for jobs with a class, with one `rate_per_second`
/// entry per whole second of the job's runtime.
#[test]
fn qos_section_only_for_jobs_with_a_class() {
    let r = run(&fig3(2, 2), &["htbs"]);
    assert!(r.runs[0].jobs.iter().all(|j| j.qos.is_none()));
    assert!(!r.to_json().contains("\"qos\""));
    let text = exp("htbs-fig5-rates.fio").replace("runtime=60s", "runtime=3s");
    let r = run(&text, &["htbs"]);
    let json = r.to_json();
    for key in [
        "\"rate_target\"",
        "\"rate_achieved\"",
        "\"rate_per_second\"",
        "\"deadline_misses\"",
        "\"latency_ns\"",
    ] {
        assert!(json.contains(key), "{key} missing");
    }
    let q = r.runs[0].jobs[0].qos.as_ref().unwrap();
    assert_eq!((q.rate_target, q.rate_unit.as_str()), (8_800_000, "bytes/s"));
    assert_eq!(q.rate_per_second.len(), 3);
    assert!(r.table().contains("QoS: scheduler"));
}

//! Think time on an asynchronous engine, and reads from one as the schedulers see them.
//!
//! fio takes `thinktime` after every `thinktime_blocks` completed I/Os on any engine; an
//! asynchronous job first lets what it has in flight finish (`io_u_quiesce`). And Linux
//! counts every read as synchronous (`op_is_sync`), whatever engine issued it, so the
//! anticipation heuristics see a libaio reader as they see a psync one.

use headway_sim::{simulate, simulate_logged, ContextMode};

use crate::common;

/// Submit times (ms) of the job's requests, in completion order.
fn submits(text: &str, sched: &str) -> Vec<f64> {
    let cfg = common::config(text, "deskstar-34gxp", &[sched], ContextMode::Process, 1);
    let mut v = Vec::new();
    simulate_logged(&cfg, |_, _| {}, |_, r| v.push(r.submit_ns as f64 / 1e6)).expect("runs");
    v.sort_by(f64::total_cmp);
    v
}

/// Three requests submitted at once, all three done, 16 ms of thinking, three more.
#[test]
fn an_async_job_quiesces_then_thinks() {
    let text = "[b]\nioengine=libaio\niodepth=3\ndirect=1\nrw=read\nbs=64k\nsize=1536k\n\
                thinktime=16ms\nthinktime_blocks=3\n";
    let s = submits(text, "noop");
    assert_eq!(s.len(), 24);
    for burst in s.chunks(3) {
        assert!(burst[2] - burst[0] < 0.001, "a burst goes out at once: {burst:?}");
    }
    // between bursts: the previous burst's service, then the think time
    for w in s.chunks(3).collect::<Vec<_>>().windows(2) {
        let gap = w[1][0] - w[0][0];
        assert!(gap > 16.0 && gap < 40.0, "burst to burst {gap:.2} ms");
    }
    // without a think time the queue refills at each completion: no pause anywhere
    let free = submits(&text.replace("thinktime=16ms\n", ""), "noop");
    let longest = free.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    assert!(longest < 16.0, "a {longest:.2} ms pause without a think time");
}

/// Anticipation waits for a libaio reader as for a psync one: its reads are synchronous.
#[test]
fn reads_from_an_async_engine_are_anticipated() {
    let text = |engine: &str| {
        format!(
            "[global]\nioengine={engine}\niodepth=2\ndirect=1\nrw=read\nbs=64k\nsize=16m\n\
             thinktime=16ms\nthinktime_blocks=2\n[a]\n[b]\noffset=4g\n"
        )
    };
    let mut cfg =
        common::config(&text("libaio"), "deskstar-34gxp", &["antic:aged-sptf"], ContextMode::Process, 1);
    cfg.run.settings.push_kv("antic_timeout_guard=1").unwrap();
    let r = simulate(&cfg, |_, _| {}).expect("runs");
    assert!(r.runs[0].device.idle_wait_ns > 100_000_000, "waited {} ns", r.runs[0].device.idle_wait_ns);
}

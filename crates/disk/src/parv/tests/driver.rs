//! The driver's queue as the `disksim` scheduler's settings, and what is refused at its line.

use super::*;
use crate::parv::syntax::parse_str;

/// A file whose driver's `Scheduler` block has `queue` inside.
fn doc(queue: &str) -> syntax::Document {
    let text = format!(
        "disksim_iodriver DRV {{ type = 1, Constant access time = 0.0,\n\
         Scheduler = disksim_ioqueue {{\n{queue}\n}}, Use queueing in subsystem = 1 }}\n\
         instantiate [ driver0 ] as DRV\n\
         topology disksim_iodriver driver0 [ ]\n"
    );
    parse_str(&text, Path::new("/nonexistent/q.parv"), 0).unwrap()
}

fn settings(queue: &str) -> Vec<(String, String)> {
    driver_queue_settings(&doc(queue)).unwrap()
}

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn the_driver_queue_becomes_disksim_settings() {
    // DiskSim's synthmixed driver: two queues, timeouts of 30 ticks
    let q = "Scheduling policy = 3, Cylinder mapping strategy = 1, Sequential stream scheme = 0,\n\
             Scheduling timeout scheme = 1, Timeout time/weight = 30, Timeout scheduling = 3,\n\
             Scheduling priority scheme = 1, Priority scheduling = 3";
    assert_eq!(
        settings(q),
        kv(&[
            ("disksim_policy", "3"),
            ("disksim_priority_scheme", "1"),
            ("disksim_priority_policy", "3"),
            ("disksim_timeout_scheme", "1"),
            ("disksim_timeout_weight", "30"),
            ("disksim_timeout_policy", "3"),
        ])
    );
    // without schemes, their algorithms are not read (DiskSim's files leave them 0)
    let q = "Scheduling policy = 1, Scheduling timeout scheme = 0, Timeout scheduling = 0,\n\
             Scheduling priority scheme = 0, Priority scheduling = 0";
    assert_eq!(
        settings(q),
        kv(&[("disksim_policy", "1"), ("disksim_priority_scheme", "0"), ("disksim_timeout_scheme", "0")])
    );
}

#[test]
fn a_file_without_a_driver_queue_gives_no_settings() {
    let d = parse_str("disksim_global G { Init Seed = 1 }\n", Path::new("/nonexistent/n.parv"), 0).unwrap();
    assert_eq!(driver_queue_settings(&d).unwrap(), Vec::new());
}

#[test]
fn what_the_disksim_scheduler_cannot_run_is_refused_at_its_line() {
    for (queue, line, needle) in [
        ("Scheduling policy = 8", 3, "`Scheduling policy` = 8"),
        ("Scheduling policy = 3,\nSequential stream scheme = 1", 4, "does not join"),
        ("Scheduling policy = 3,\nOverlapping request scheme = 2", 4, "does not join"),
        (
            "Scheduling policy = 3,\nScheduling priority scheme = 1,\nPriority scheduling = 0",
            5,
            "`Priority scheduling` = 0",
        ),
        ("Scheduling policy = 3,\nScheduling timeout scheme = 3", 4, "0..=2"),
        (
            "Scheduling policy = 3,\nScheduling timeout scheme = 2,\nTimeout scheduling = 9",
            5,
            "`Timeout scheduling` = 9",
        ),
    ] {
        let e = driver_queue_settings(&doc(queue)).unwrap_err().to_string();
        assert!(e.contains(&format!("q.parv:{line}")) && e.contains(needle), "{queue}: {e}");
    }
}

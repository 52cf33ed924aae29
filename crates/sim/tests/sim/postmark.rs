//! PostMark end to end (`headway_workload=postmark`): the bundled job files parse and
//! expand, and a scaled-down run of the Stream Scheduling paper's four PostMark instances
//! (000 Section 3.3) completes under noop, deadline and stream, deterministically, with
//! stream doing no harm. 000's Figure 3 shows only a modest SS gain for PostMark: the
//! requests are random small-file I/O, one at a time per instance, so streams rarely form.

use crate::common;

use common::exp;
use headway_disk::Hdd;
use headway_sim::{expand_jobs, ContextMode, Report, SimConfig};

fn config(text: &str, schedulers: &[&str], seed: u64) -> SimConfig {
    common::config(text, "wd5000aaks", schedulers, ContextMode::None, seed)
}

fn run(text: &str, schedulers: &[&str], seed: u64) -> Report {
    common::run(text, "wd5000aaks", schedulers, ContextMode::None, seed)
}

/// 000's four instances, scaled down to 500 files and 1,000 transactions each.
fn small_ss4() -> String {
    let text = headway_sim::reproduce::edit(
        &exp("postmark-ss4.fio"),
        "@headway pm_files=10000",
        "@headway pm_files=500",
    );
    headway_sim::reproduce::edit(&text, "@headway pm_transactions=10000", "@headway pm_transactions=1000")
}

/// Bytes the generators of a job file move, drained without a simulation.
fn generated_bytes(cfg: &SimConfig) -> u64 {
    let capacity = Hdd::new(cfg.run.disk.clone()).capacity();
    let mut total = 0;
    for mut job in expand_jobs(cfg, capacity).expect("jobs expand") {
        while job.wants_more(headway_sched::Time::ZERO) {
            total += job.next_io().len as u64 * 512;
        }
        let s = job.postmark().expect("a PostMark job").stats();
        assert!(s.transactions > 0 && s.created > 0);
    }
    total
}

#[test]
fn bundled_postmark_job_files_parse_and_expand() {
    for (name, files, transactions) in [
        ("postmark-ss.fio", 10_000, 100_000),
        ("postmark-sl.fio", 200_000, 100_000),
        ("postmark-ls.fio", 1_000, 20_000),
        ("postmark-ll.fio", 4_250, 20_000),
        ("postmark-ss4.fio", 10_000, 10_000),
    ] {
        let cfg = config(&exp(name), &["noop"], 1);
        let jobs = expand_jobs(&cfg, Hdd::new(cfg.run.disk.clone()).capacity())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for j in &jobs {
            let p = j.postmark().unwrap_or_else(|| panic!("{name}: not a PostMark job")).params();
            assert_eq!((p.files, p.transactions), (files, transactions), "{name}");
            assert_eq!((p.block_read, p.block_write), (128 << 10, 128 << 10), "{name}");
        }
        assert_eq!(jobs.len(), if name == "postmark-ss4.fio" { 4 } else { 1 });
    }
}

#[test]
fn small_postmark_completes_deterministically_and_stream_does_no_harm() {
    let text = small_ss4();
    let scheds = ["noop", "deadline", "stream"];
    let a = run(&text, &scheds, 1);
    assert_eq!(a.to_json(), run(&text, &scheds, 1).to_json(), "same seed, same results");
    assert_ne!(a.to_json(), run(&text, &scheds, 2).to_json(), "the seed draws the files");

    // Every scheduler moves exactly the bytes the generators produce.
    let want = generated_bytes(&config(&text, &["noop"], 1));
    for r in &a.runs {
        assert_eq!(r.aggregate.io_bytes, want, "{}", r.scheduler);
        assert_eq!(r.jobs.len(), 4);
        assert!(r.jobs.iter().all(|j| j.write.io_bytes > 0 && j.read.io_bytes > 0));
    }

    let runtime = |s: &str| a.runs.iter().find(|r| r.scheduler == s).unwrap().aggregate.runtime_ns as f64;
    let (noop, dl, ss) = (runtime("noop"), runtime("deadline"), runtime("stream:deadline"));
    let mb_s = |ns: f64| want as f64 / ns * 1e3;
    eprintln!(
        "PostMark x4 (500 files, 1000 transactions each), context none, wd5000aaks: \
         noop {:.2} MB/s, deadline {:.2} MB/s, stream {:.2} MB/s (stream/deadline {:.3})",
        mb_s(noop),
        mb_s(dl),
        mb_s(ss),
        dl / ss
    );
    assert!(ss <= dl * 1.10, "stream took {ss} ns, more than 10% over deadline's {dl} ns");
}

//! The kernel elevator's core (kernel/stream_core.c) against headway's Rust
//! `stream:deadline`, decision by decision (issue 40): thousands of generated sequences,
//! the papers' workloads as the simulator runs them, and proof that the check can fail.
//!
//! `HEADWAY_KCORE_SEQUENCES` (default 10,000) and `HEADWAY_KCORE_SEED` (default 0) choose
//! the generated sequences; a divergence prints its seed and the events before it.

use headway_kcore::differ::{run, Config, Outcome};
use headway_kcore::workload::{self, default_params, from_records, Record};
use headway_kcore::Table;
use headway_sched::Settings;
use headway_sim::{fio, simulate_logged, ContextMode, RunSpec, SimConfig};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name}={v}: not a number")))
        .unwrap_or(default)
}

/// Runs seeds `from..from + n` on two threads; the first divergence, or the summed outcome.
fn sweep(from: u64, n: u64, mutate: impl Fn(&mut Config) + Sync) -> Result<Outcome, String> {
    let next = std::sync::atomic::AtomicU64::new(from);
    let results = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut sum = Outcome::default();
                    loop {
                        let seed = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if seed >= from + n {
                            return Ok(sum);
                        }
                        let (mut cfg, w) = workload::random(seed);
                        mutate(&mut cfg);
                        match run(&cfg, &w) {
                            Ok(o) => sum.add(&o),
                            Err(d) => {
                                next.store(from + n, std::sync::atomic::Ordering::Relaxed);
                                return Err(format!("seed {seed} ({:?}, depth {}):\n{d}", cfg.c, cfg.depth));
                            }
                        }
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).collect::<Vec<_>>()
    });
    let mut sum = Outcome::default();
    for r in results {
        sum.add(&r?);
    }
    Ok(sum)
}

#[test]
fn generated_sequences_decide_alike() {
    let n = env_u64("HEADWAY_KCORE_SEQUENCES", 10_000);
    let from = env_u64("HEADWAY_KCORE_SEED", 0);
    let sum =
        sweep(from, n, |_| {}).unwrap_or_else(|e| panic!("the C core and the Rust model differ at {e}"));
    eprintln!("{n} sequences: {sum:?}");
    // The sequences reach what matters: waits that catch their child, second chances,
    // merges, and thousands of events a sequence on average.
    assert!(sum.events as u64 >= n * 1_000, "{} events over {n} sequences", sum.events);
    assert!(sum.waits_caught > n, "{sum:?}");
    assert!(sum.waits > sum.waits_caught, "no wait ever expired: {sum:?}");
    assert!(sum.second_chances > 0 && sum.merges > 0, "{sum:?}");
}

#[test]
fn a_changed_constant_on_either_side_is_caught() {
    // The Rust side's backward penalty 60% against the C core's SS_BACKWARD_PCT (50).
    let e = sweep(0, 200, |c| {
        let mut t = c.table.clone();
        t.backward_pct = 60;
        c.rust_table = Some(t);
    });
    let msg = e.expect_err("a 60% backward penalty on one side went unnoticed");
    eprintln!("backward penalty 60% in Rust: {}", msg.lines().take(2).collect::<Vec<_>>().join(" / "));
    // The C core built with SS_BACKWARD_PCT 60 (c/mutant.h).
    let msg = sweep(0, 200, |c| c.c_mutant = true).expect_err("the C core's mutant went unnoticed");
    eprintln!("SS_BACKWARD_PCT 60 in C: {}", msg.lines().take(2).collect::<Vec<_>>().join(" / "));
    // The tolerance one thousandth apart.
    let e = sweep(0, 200, |c| c.rust_tolerance = Some(c.c.tolerance_milli as f64 / 1000.0 + 0.001));
    let msg = e.expect_err("a tolerance 0.001 apart went unnoticed");
    eprintln!("tolerance +0.001 in Rust: {}", msg.lines().take(2).collect::<Vec<_>>().join(" / "));
    // The C core's batch one shorter.
    let e = sweep(0, 200, |c| {
        c.rust_fifo_batch = Some(c.c.fifo_batch);
        c.c.fifo_batch = (c.c.fifo_batch - 1).max(1);
        if c.rust_fifo_batch == Some(1) {
            c.c.fifo_batch = 2;
        }
    });
    let msg = e.expect_err("a fifo_batch one apart went unnoticed");
    eprintln!("fifo_batch - 1 in C: {}", msg.lines().take(2).collect::<Vec<_>>().join(" / "));
    assert!(msg.contains("decision") || msg.contains("counter"), "{msg}");
}

/// The per-request log of `headway simulate JOB --scheduler stream --context none` on the
/// modelled WD5000AAKS.
fn simulated(job: &str, shrink: &[(&str, &str)]) -> Vec<Record> {
    let path = format!("{}/../../experiments/{job}", env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    for (from, to) in shrink {
        assert!(text.contains(from), "{job} has no `{from}`");
        text = text.replace(from, to);
    }
    let cfg = SimConfig {
        jobfile: fio::parse_str(&text, job).expect("job file parses"),
        run: RunSpec {
            disk: headway_disk::builtin("wd5000aaks").expect("a built-in drive"),
            schedulers: vec!["stream".into()],
            context: ContextMode::None,
            settings: Settings::new(),
            seed: 1,
            drive: Default::default(),
            array: None,
            array_queue_depth: headway_sim::DEFAULT_ARRAY_QUEUE_DEPTH,
            devices: Vec::new(),
        },
    };
    let mut out = Vec::new();
    simulate_logged(
        &cfg,
        |_, _| {},
        |_, r| {
            out.push(Record {
                job: r.job_index,
                write: r.dir == headway_sched::Dir::Write,
                offset: r.offset,
                bytes: r.bytes,
                submit_ns: r.submit_ns,
                complete_ns: r.complete_ns,
            })
        },
    )
    .expect("simulation runs");
    assert!(!out.is_empty(), "{job}: no requests logged");
    out
}

/// The table the simulator calibrates for the WD5000AAKS, as `headway disks wd5000aaks
/// --estimator-table` prints it for the elevator.
fn wd5000aaks_table() -> Table {
    let disk = headway_disk::builtin("wd5000aaks").unwrap();
    let curve = headway_sim::calibrate::curve_for(&disk);
    Table::new(curve.knots().to_vec(), disk.capacity_sectors)
}

fn papers_workload(job: &str, shrink: &[(&str, &str)]) -> Outcome {
    let w = from_records(&simulated(job, shrink));
    let cfg = Config {
        c: default_params(),
        table: wd5000aaks_table(),
        depth: 1,
        rust_table: None,
        rust_tolerance: None,
        rust_fifo_batch: None,
        c_mutant: false,
        max_events: usize::MAX,
    };
    run(&cfg, &w).unwrap_or_else(|d| panic!("{job}: the C core and the Rust model differ at {d}"))
}

#[test]
fn par_read_decides_alike() {
    let o = papers_workload("par-read.fio", &[("size=1g", "size=8m")]);
    // four sequential readers: streams form and waits catch their children
    assert!(o.dispatches >= 4 * 2048 && o.waits_caught > 1000, "{o:?}");
}

#[test]
fn multi_threads_decides_alike() {
    let o = papers_workload("multi-threads.fio", &[("size=40m", "size=4m")]);
    assert!(o.dispatches >= 8 * 256 && o.waits > 0, "{o:?}");
}

#[test]
fn as_fig4_alter_decides_alike() {
    let o = papers_workload("as-fig4-alter.fio", &[("size=1g", "size=32m")]);
    assert!(o.dispatches >= 2 * 256 && o.waits > 0, "{o:?}");
}

/// The elevator's learned estimator (not part of the decision-by-decision check: headway's
/// Rust scheduler is given its curve): a bucket's mean, made monotone, and a rare slow
/// sample clipped at four times its bucket's mean.
#[test]
fn the_learned_table_follows_the_samples_and_clips_outliers() {
    let mut l = headway_kcore::ffi::Learner::new();
    assert!(!l.fit(), "no bucket has eight samples yet");
    for _ in 0..100 {
        l.sample(0, 200_000); // sequential: 0.2 ms
        l.sample(1 << 20, 8_000_000); // 1 Mi sectors away: 8 ms
    }
    assert!(l.fit());
    assert_eq!(l.estimate(0), 200_000);
    assert_eq!(l.estimate(1 << 20), 8_000_000);
    assert_eq!(l.estimate(1 << 30), 8_000_000, "clamped past the last knot");
    // one host hiccup of a second in the sequential bucket: clipped at 4 x 0.2 ms
    l.sample(0, 1_000_000_000);
    assert!(l.fit());
    assert_eq!(l.estimate(0), (100 * 200_000 + 800_000) / 101);
}

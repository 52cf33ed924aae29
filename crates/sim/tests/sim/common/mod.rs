//! Helpers shared by the simulator's integration tests: job files from `experiments/`,
//! one-call simulations, throughput by scheduler name.
#![allow(dead_code)]

use headway_sched::Settings;
use headway_sim::{fio, simulate, ContextMode, Report, SimConfig};

/// The text of `experiments/NAME`.
pub fn exp(name: &str) -> String {
    let p = format!("{}/../../experiments/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// A simulation of job-file `text` on built-in `disk`, depth-1 write-through drive.
pub fn config(text: &str, disk: &str, schedulers: &[&str], context: ContextMode, seed: u64) -> SimConfig {
    SimConfig {
        jobfile: fio::parse_str(text, "test.fio").expect("job file parses"),
        run: headway_sim::RunSpec {
            disk: headway_disk::builtin(disk).unwrap_or_else(|| panic!("no drive {disk}")),
            schedulers: schedulers.iter().map(|s| s.to_string()).collect(),
            context,
            settings: Settings::new(),
            seed,
            drive: Default::default(),
            array: None,
            array_queue_depth: headway_sim::DEFAULT_ARRAY_QUEUE_DEPTH,
            devices: Vec::new(),
        },
    }
}

pub fn run(text: &str, disk: &str, schedulers: &[&str], context: ContextMode, seed: u64) -> Report {
    simulate(&config(text, disk, schedulers, context, seed), |_, _| {}).expect("simulation runs")
}

/// Aggregate bytes per simulated second of the run named `sched`.
pub fn bw(r: &Report, sched: &str) -> f64 {
    r.runs
        .iter()
        .find(|x| x.scheduler == sched)
        .unwrap_or_else(|| panic!("no run {sched}"))
        .aggregate
        .bw_bytes as f64
}

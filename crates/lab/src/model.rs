//! What a lab figure asks of the simulator. headway-lab does not link the simulator; the
//! command line hands one in ([`crate::LabOptions::model`]) for the figures that set a
//! guest's results beside the model's on the same job file (`peers-kernel`).

use std::fmt;

use serde::Serialize;

/// How to run a job file in the simulator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelQuery {
    /// A built-in drive model's name.
    pub disk: String,
    /// A scheduler name of `headway schedulers`.
    pub scheduler: String,
    /// Tunables, as `--set NAME=VALUE`.
    pub tunables: Vec<(String, String)>,
    /// Commands the drive holds at once, and whether it serves them in arrival order (a
    /// host queue in front of a one-command drive) rather than by positioning time.
    pub queue_depth: u32,
    pub fcfs: bool,
    /// What the schedulers are told about who issued a request, as `headway simulate
    /// --context` (`pool:4`: a thread pool of four issues everyone's requests); `None`: the
    /// issuing process.
    pub context: Option<String>,
}

/// One job clone of a simulated run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModelJob {
    pub name: String,
    pub io_bytes: u64,
    pub ios: u64,
    /// The drive's service time spent on the job's requests.
    pub disk_time_ns: u64,
    /// The lowest byte offset the job touched.
    pub first_byte: u64,
    /// The 99th percentile of its completion latencies, ns (reads', or writes' when it
    /// only writes).
    pub clat_p99_ns: u64,
}

/// A simulated run: aggregate throughput and each job clone, in the job file's order
/// (fio's).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModelRun {
    pub bw_bytes: f64,
    pub jobs: Vec<ModelJob>,
    /// The drive's mean time a command (its busy time over its commands), ns.
    pub mean_service_ns: f64,
}

/// The simulator, as the lab sees it.
pub trait Model: Send + Sync + fmt::Debug {
    /// Run fio job file `job` (its text) once under `q`; the error says why not.
    fn fio(&self, job: &str, q: &ModelQuery) -> Result<ModelRun, String>;
}

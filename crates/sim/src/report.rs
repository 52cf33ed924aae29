//! Results, fio-shaped so fio users can read them, and the comparison table.
//!
//! JSON layout (a contract): `{"headway_version", "runs": [{"scheduler", "disk", "context",
//! "seed", "jobs": [{"jobname", "groupid", "job_runtime" (ms), "disk_time_ns", "read": {..},
//! "write": {..}}],
//! "aggregate": {"io_bytes", "bw_bytes", "iops", "runtime_ns", "clat_ns"}, "device":
//! {"utilization", "idle_wait_ns", "seek_count", "mean_seek_distance_sectors", "requests",
//! "cache_hits", "queue_depth", "drive_scheduler", "write_cache", "requests_in": {flow},
//! "requests_out": {flow}, "queue_occupancy", "cache_hit_ratio", "destages",
//! "destaged_bytes", "write_cache_full_ns", "page_cache_dirty_bytes"}, "scheduler_stats": {..}}]}`, a flow being
//! `{"count", "mean_bytes", "reads", "read_mean_bytes", "writes", "write_mean_bytes"}`
//! (002 Figures 8 and 9: requests and their sizes into and out of the device driver).
//! Direction sections follow fio: `io_bytes`, `bw_bytes` (bytes per simulated second),
//! `iops`, `runtime` (ms, as fio), `total_ios`, `clat_ns {min, max, mean, percentile}` with
//! fio's percentile keys (`"50.000000"`). A job that synced has fio's `"sync": {"total_ios",
//! "lat_ns"}` ([`SyncReport`]). A run has `"head_trace"` too when one was asked for
//! ([`HeadTrace`]).
//!
//! With a caching controller in front of the drive (a DiskSim type-3 `disksim_ctlr`,
//! [`crate::ctlr_cache`]), a run has `"controller_cache": {"reads", "read_hits", "writes",
//! "write_hits", "fills", "fill_sectors", "destages", "destage_sectors"}` after
//! `"scheduler_stats"`, and the `"device"` section describes the drive behind it (the
//! controller's fills and write-backs).
//!
//! With a disk array (`--array`), a run also has `"array"` (its spec, `raid0:5:64k`) after
//! `"disk"` (the member model), its `"device"` section describes the whole array (see
//! [`DeviceReport`]: sums over the members, utilisation their mean), and `"members": [{"member",
//! "device": {..}, "scheduler_stats": {..}}]` follows `"scheduler_stats"` (summed over the
//! members' schedulers), one entry per member drive, its `requests_in` the member requests
//! its scheduler received. Without an array neither key appears.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use headway_sched::hist::Histogram;

/// fio's default completion-latency percentiles.
pub const PERCENTILES: &[f64] =
    &[1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Clat {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub percentile: BTreeMap<String, u64>,
}

impl Clat {
    /// With fio's default percentiles ([`PERCENTILES`]).
    pub fn from_hist(h: &Histogram) -> Self {
        Clat::with_percentiles(h, PERCENTILES)
    }

    /// With the percentiles `list` (a job's `percentile_list`).
    pub fn with_percentiles(h: &Histogram, list: &[f64]) -> Self {
        Clat {
            min: if h.count == 0 { 0 } else { h.min },
            max: h.max,
            mean: h.mean(),
            percentile: list.iter().map(|&p| (format!("{p:.6}"), h.percentile(p))).collect(),
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DirReport {
    pub io_bytes: u64,
    pub bw_bytes: u64,
    pub iops: f64,
    /// Milliseconds, as fio reports it.
    pub runtime: u64,
    pub total_ios: u64,
    pub clat_ns: Clat,
}

impl DirReport {
    pub fn new(io_bytes: u64, h: &Histogram, runtime_ns: u64) -> Self {
        DirReport::with_percentiles(io_bytes, h, runtime_ns, PERCENTILES)
    }

    /// [`DirReport::new`] with the completion-latency percentiles `list`.
    pub fn with_percentiles(io_bytes: u64, h: &Histogram, runtime_ns: u64, list: &[f64]) -> Self {
        let secs = runtime_ns as f64 * 1e-9;
        DirReport {
            io_bytes,
            bw_bytes: if runtime_ns == 0 {
                0
            } else {
                (io_bytes as u128 * 1_000_000_000 / runtime_ns as u128) as u64
            },
            iops: if runtime_ns == 0 { 0.0 } else { h.count as f64 / secs },
            runtime: if h.count == 0 { 0 } else { runtime_ns / 1_000_000 },
            total_ios: h.count,
            clat_ns: Clat::with_percentiles(h, list),
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct JobReport {
    pub jobname: String,
    pub groupid: usize,
    /// Milliseconds from the job's first submission to its last completion.
    pub job_runtime: u64,
    /// Device time spent serving the job's requests (a merged request's time is split by
    /// bytes among its parts), ns.
    pub disk_time_ns: u64,
    pub read: DirReport,
    pub write: DirReport,
    /// How the job fared against its QoS class (seeds/004); only for a job that has one
    /// (`headway_rate`, `headway_delay` or `headway_burst`), absent from the JSON otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qos: Option<QosReport>,
    /// The job's syncs (`fsync`, `end_fsync`), as fio's `sync` section: how many, and their
    /// latency from the job's stop to the drives' flushes completing. Absent without syncs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncReport>,
}

/// A job's syncs.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SyncReport {
    pub total_ios: u64,
    pub lat_ns: Clat,
    /// The latencies' standard deviation, from the histogram's buckets (fio's output
    /// formats print it; headway's JSON does not).
    #[serde(skip)]
    pub stddev: f64,
}

/// A job against its QoS class ([`crate::qos`] defines every figure).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QosReport {
    /// The class's rate, in `rate_unit` (`bytes/s` or `iops`).
    pub rate_target: u64,
    pub rate_unit: String,
    /// Completed over the job's runtime, in `rate_unit`.
    pub rate_achieved: f64,
    /// `rate_achieved / rate_target`: at least 1 when the guarantee was met.
    pub rate_fraction: f64,
    /// Completed in each whole second of the job's runtime, in `rate_unit`.
    pub rate_per_second: Vec<u64>,
    pub delay_ns: u64,
    pub burst: u32,
    pub requests: u64,
    /// Requests that completed after their finish tag (submission + delay within the rate).
    pub deadline_misses: u64,
    /// Submission to completion, every request of the job.
    pub latency_ns: Clat,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Aggregate {
    pub io_bytes: u64,
    pub bw_bytes: u64,
    pub iops: f64,
    pub runtime_ns: u64,
    pub clat_ns: Clat,
}

/// Requests crossing one boundary of the IO path, with their mean sizes.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Flow {
    pub count: u64,
    pub mean_bytes: f64,
    pub reads: u64,
    pub read_mean_bytes: f64,
    pub writes: u64,
    pub write_mean_bytes: f64,
}

/// One drive's figures. For an array (the run's `device` with `--array`): `utilization` is
/// the members' mean; `queue_occupancy` their sum (commands in all drives);
/// `mean_seek_distance_sectors` the mean over all members' seeks; `requests_in` what the
/// jobs submitted to the array; every other count and time a sum over the members.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeviceReport {
    /// Fraction of the run the drive was busy: serving a command (media work, transfers,
    /// overheads) or destaging write-back data.
    pub utilization: f64,
    /// Time the drive held no command, and would have taken one, while the scheduler held
    /// pending requests (the scheduler waiting).
    pub idle_wait_ns: u64,
    /// Arm movements across cylinders: commands that needed a seek, plus destages.
    pub seek_count: u64,
    /// Mean distance of those seeks, sectors.
    pub mean_seek_distance_sectors: f64,
    /// Commands sent to the drive (= `requests_out.count`).
    pub requests: u64,
    /// Commands served without the media: read-cache hits, reads of dirty data, writes
    /// absorbed by a write-back cache.
    pub cache_hits: u64,
    /// The drive's command queue depth, its scheduler (`fcfs`, `sptf`) and write cache
    /// (`through`, `back`).
    pub queue_depth: u32,
    pub drive_scheduler: String,
    pub write_cache: String,
    /// Requests the jobs submitted to the scheduler (before merging).
    pub requests_in: Flow,
    /// Requests the scheduler sent to the drive (after merging).
    pub requests_out: Flow,
    /// Time-averaged commands in the drive (queued + in service) over the run.
    pub queue_occupancy: f64,
    /// `cache_hits / requests`.
    pub cache_hit_ratio: f64,
    /// Write-back: destage operations and the bytes they wrote to the media.
    pub destages: u64,
    pub destaged_bytes: u64,
    /// Write-back: time the write cache was full, the drive refusing every command though
    /// its queue had room (002 Section 6.2).
    pub write_cache_full_ns: u64,
    /// Buffered writes still dirty in the page cache when the jobs ended (not written:
    /// fio without `end_fsync`).
    pub page_cache_dirty_bytes: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunReport {
    pub scheduler: String,
    pub disk: String,
    /// The disk array (`raid0:5:64k`) `disk` is the member model of; absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array: Option<String>,
    pub context: String,
    pub seed: u64,
    pub jobs: Vec<JobReport>,
    pub aggregate: Aggregate,
    pub device: DeviceReport,
    /// The scheduler's own counters (stream: waits, timeouts, ...); empty for policies.
    pub scheduler_stats: BTreeMap<String, u64>,
    /// Each member drive of an array, in member order; absent without an array.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub members: Option<Vec<MemberReport>>,
    /// A caching controller's counts ([`crate::ctlr_cache`]); absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller_cache: Option<crate::ctlr_cache::CacheStats>,
    /// Dispatches of the run's first moments, when asked for ([`crate::simulate_traced`]);
    /// absent from the JSON otherwise, so the CLI's output does not change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_trace: Option<HeadTrace>,
}

/// One member drive of an array and its scheduler instance.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MemberReport {
    pub member: u32,
    pub device: DeviceReport,
    pub scheduler_stats: BTreeMap<String, u64>,
}

/// Where the head was sent: every command the scheduler dispatched to the drive in the
/// first `window_ns` of the run (at most [`HeadTrace::MAX_DISPATCHES`]), as parallel
/// columns. The picture of deceptive idleness: offset against time, one colour per job.
/// With an array, every member's dispatches in one list, their sectors member sectors.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct HeadTrace {
    pub window_ns: u64,
    /// Dispatch time, ns from the start of the run.
    pub t_ns: Vec<u64>,
    /// First sector and length in sectors of the command.
    pub sector: Vec<u64>,
    pub sectors: Vec<u32>,
    /// Index of the job clone (in `jobs`) whose request it is (the first part's, for a
    /// merged command), -1 when none.
    pub job: Vec<i64>,
    /// How long the command waited in the scheduler (dispatch - its arrival there) and
    /// how long the drive then took to complete it (completion - dispatch; 0 if the run
    /// ended first): seeds/000 Figure 7(b) and 7(c)'s wait and service times.
    pub wait_ns: Vec<u64>,
    pub service_ns: Vec<u64>,
    /// Dispatches recorded at most ([`HeadTrace::MAX_DISPATCHES`] unless asked otherwise).
    #[serde(skip)]
    pub max: usize,
}

impl HeadTrace {
    /// A cap on the records of one run, to keep the JSON small.
    pub const MAX_DISPATCHES: usize = 20_000;

    pub fn new(window_ns: u64) -> Self {
        HeadTrace::with_max(window_ns, HeadTrace::MAX_DISPATCHES)
    }

    /// At most `max` dispatches (the lab compares every command of a replay).
    pub fn with_max(window_ns: u64, max: usize) -> Self {
        HeadTrace { window_ns, max, ..Default::default() }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    pub headway_version: String,
    pub runs: Vec<RunReport>,
}

impl Report {
    pub fn new(runs: Vec<RunReport>) -> Self {
        Report { headway_version: env!("CARGO_PKG_VERSION").to_string(), runs }
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("report serializes");
        s.push('\n');
        s
    }

    /// The readable comparison: one row per scheduler, throughput relative to the first.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let base = self.runs.first().map(|r| r.aggregate.bw_bytes.max(1)).unwrap_or(1);
        let _ = writeln!(
            out,
            "{:<22} {:>10} {:>8} {:>9} {:>10} {:>10} {:>6} {:>9} {:>8}",
            "scheduler", "MB/s", "vs 1st", "IOPS", "clat ms", "p99 ms", "util", "idle-wait", "seeks"
        );
        for r in &self.runs {
            let a = &r.aggregate;
            let p99 = a.clat_ns.percentile.get("99.000000").copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "{:<22} {:>10.2} {:>7.2}x {:>9.0} {:>10.3} {:>10.3} {:>5.0}% {:>8.1}s {:>8}",
                r.scheduler,
                a.bw_bytes as f64 / 1e6,
                a.bw_bytes as f64 / base as f64,
                a.iops,
                a.clat_ns.mean / 1e6,
                p99 as f64 / 1e6,
                r.device.utilization * 100.0,
                r.device.idle_wait_ns as f64 / 1e9,
                r.device.seek_count,
            );
        }
        self.qos_table(&mut out);
        out
    }

    /// Jobs with a QoS class: one line each per run (nothing when no job has a class).
    fn qos_table(&self, out: &mut String) {
        if !self.runs.iter().any(|r| r.jobs.iter().any(|j| j.qos.is_some())) {
            return;
        }
        let _ = writeln!(
            out,
            "\n{:<22} {:<16} {:>12} {:>12} {:>7} {:>8} {:>10}",
            "QoS: scheduler", "job", "target", "achieved", "of tgt", "misses", "p99 ms"
        );
        for r in &self.runs {
            for j in &r.jobs {
                let Some(q) = &j.qos else { continue };
                let unit = if q.rate_unit == "iops" { "IOPS" } else { "KB/s" };
                let scale = if q.rate_unit == "iops" { 1.0 } else { 1e-3 };
                let p99 = q.latency_ns.percentile.get("99.000000").copied().unwrap_or(0);
                let _ = writeln!(
                    out,
                    "{:<22} {:<16} {:>7.0} {unit} {:>7.0} {unit} {:>6.0}% {:>8} {:>10.1}",
                    r.scheduler,
                    j.jobname,
                    q.rate_target as f64 * scale,
                    q.rate_achieved * scale,
                    q.rate_fraction * 100.0,
                    q.deadline_misses,
                    p99 as f64 / 1e6,
                );
            }
        }
    }
}

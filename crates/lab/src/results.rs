//! What a guest leaves behind, turned into fio-shaped results.
//!
//! The guest writes `/results` as a tar onto its results disk ([`read_tar`]): `status`,
//! `steps` (`NAME START END RC`, guest uptime seconds), `kernel`, `diskstats.before` and
//! `.after`, and the workload's own output — fio's JSON (`fio.json`), PostMark's terse
//! report (`postmark.report`), dd's summaries (`ddN.out`). [`LabRun`] has the shape of a
//! `headway simulate` run (`scheduler`, `disk`, `context`, `jobs[]`, `aggregate`,
//! `device`) plus `lab` (where and how it ran), the guest fio's whole JSON, PostMark's
//! figures, and the server's own view (`server`).
//!
//! * `jobs[]`: fio's jobs, with fio's own `read`/`write` sections (`io_bytes`,
//!   `bw_bytes`, `iops`, `runtime` ms, `total_ios`, `clat_ns {min, max, mean,
//!   percentile}`); dd readers as jobs `ddN` (bytes and dd's own elapsed time); none for
//!   PostMark and shell steps.
//! * `aggregate`: bytes the workload moved over the workload step's wall time in the guest
//!   (fio: the longest job runtime; PostMark: its data read and written over its total
//!   time).
//! * `device`: the headway disks as the guest kernel saw them (`/proc/diskstats`
//!   differences: requests, bytes, `utilization` = time busy / workload time).
//! * `server[]`: per headway disk, what `headway serve` counted over the whole run, its
//!   request log (`trace`), and `workload`: the log between the workload's markers —
//!   requests as they arrived and commands as they went to the drive (after the server's
//!   merging), with their bytes ([`crate::served::WorkloadCounts`]).
//! * `lab.guest_counters`: the guest scheduler's files in `/sys/block/DEV/queue/iosched/` at
//!   the end of the run (`iosched.DEV`), name -> value, numbers as numbers: its tunables as
//!   they were, and its read-only files — `stream`'s counters (inserted, merged, dispatched,
//!   completed, in_flight, waits, ...) — summed over the headway disks and the guests
//!   ([`GuestCounters`]). Empty (left out) under `none`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;
use serde_json::Value as Json;

/// Files of a results tar by name (`./` stripped).
pub fn read_tar(img: &Path) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let f = std::fs::File::open(img).map_err(|e| format!("{}: {e}", img.display()))?;
    let mut a = tar::Archive::new(f);
    let mut out = BTreeMap::new();
    for e in a.entries().map_err(|e| format!("{}: {e}", img.display()))? {
        let mut e = e.map_err(|e| format!("{}: {e}", img.display()))?;
        if !e.header().entry_type().is_file() {
            continue;
        }
        let name =
            e.path().map_err(|e| e.to_string())?.to_string_lossy().trim_start_matches("./").to_string();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut e, &mut data).map_err(|e| format!("{name}: {e}"))?;
        out.insert(name, data);
    }
    Ok(out)
}

/// One step of the guest's script.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Step {
    pub name: String,
    pub start_s: f64,
    pub end_s: f64,
    pub rc: i32,
}

pub fn parse_steps(text: &str) -> Vec<Step> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some(Step {
                name: f.first()?.to_string(),
                start_s: f.get(1)?.parse().ok()?,
                end_s: f.get(2)?.parse().ok()?,
                rc: f.get(3)?.parse().ok()?,
            })
        })
        .collect()
}

/// One device's counters from `/proc/diskstats`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DiskCounters {
    pub reads: u64,
    pub read_sectors: u64,
    pub writes: u64,
    pub write_sectors: u64,
    /// ms the device had requests in flight.
    pub io_ticks_ms: u64,
    /// ms the completed reads and writes spent from arrival to completion, summed.
    pub read_ticks_ms: u64,
    pub write_ticks_ms: u64,
    /// ms requests spent in flight, weighted by how many were: the time integral of the
    /// queue's length.
    pub time_in_queue_ms: u64,
}

/// `/proc/diskstats` counters by device name.
pub fn parse_diskstats(text: &str) -> BTreeMap<String, DiskCounters> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
            Some((
                f.get(2)?.to_string(),
                DiskCounters {
                    reads: n(3)?,
                    read_sectors: n(5)?,
                    writes: n(7)?,
                    write_sectors: n(9)?,
                    io_ticks_ms: n(12)?,
                    read_ticks_ms: n(6)?,
                    write_ticks_ms: n(10)?,
                    time_in_queue_ms: n(13)?,
                },
            ))
        })
        .collect()
}

/// The guest scheduler's sysfs files after a run, from the guest's `iosched.DEV` listing
/// (`== NAME MODE` then the file's lines).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GuestCounters {
    /// name -> value: a number when the file holds one (`0.500` is 0.5), else its text.
    pub values: BTreeMap<String, Json>,
    /// The files no one may write (mode without a `w`): counters, not tunables.
    pub read_only: BTreeSet<String>,
}

impl GuestCounters {
    pub fn parse(text: &str) -> GuestCounters {
        let mut out = GuestCounters::default();
        let mut current: Option<(String, Vec<&str>)> = None;
        let flush = |out: &mut GuestCounters, cur: Option<(String, Vec<&str>)>| {
            if let Some((name, lines)) = cur {
                out.values.insert(name, sysfs_value(&lines.join("\n")));
            }
        };
        for l in text.lines() {
            if let Some(head) = l.strip_prefix("== ") {
                flush(&mut out, current.take());
                let mut f = head.split_whitespace();
                let Some(name) = f.next() else { continue };
                let mode = f.next().and_then(|m| u32::from_str_radix(m, 8).ok());
                if mode.is_some_and(|m| m & 0o222 == 0) {
                    out.read_only.insert(name.to_string());
                }
                current = Some((name.to_string(), Vec::new()));
            } else if let Some((_, lines)) = current.as_mut() {
                lines.push(l);
            }
        }
        flush(&mut out, current);
        out
    }

    /// Another disk's (or guest's) files into these: read-only numbers are summed, the
    /// rest (tunables, set alike on every disk) kept as they are here, or taken when new.
    pub fn add(&mut self, other: &GuestCounters) {
        for (name, v) in &other.values {
            match self.values.get_mut(name) {
                None => {
                    self.values.insert(name.clone(), v.clone());
                    if other.read_only.contains(name) {
                        self.read_only.insert(name.clone());
                    }
                }
                Some(mine) if self.read_only.contains(name) => {
                    if let Some(sum) = json_sum(mine, v) {
                        *mine = sum;
                    }
                }
                Some(_) => {}
            }
        }
    }
}

/// A sysfs file's text as JSON: an integer, a decimal, else the (trimmed) text.
fn sysfs_value(text: &str) -> Json {
    let t = text.trim();
    if let Ok(u) = t.parse::<u64>() {
        return Json::from(u);
    }
    if let Ok(i) = t.parse::<i64>() {
        return Json::from(i);
    }
    match t.parse::<f64>() {
        // not `inf`/`nan`: text that happens to parse is kept as text
        Ok(x) if x.is_finite() && t.bytes().all(|c| c.is_ascii_digit() || b"+-.eE".contains(&c)) => {
            Json::from(x)
        }
        _ => Json::from(t),
    }
}

fn json_sum(a: &Json, b: &Json) -> Option<Json> {
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return Some(Json::from(x.checked_add(y)?));
    }
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return Some(Json::from(x.checked_add(y)?));
    }
    Some(Json::from(a.as_f64()? + b.as_f64()?))
}

/// A setting from the guest's `queue.NAME` listing (`NAME VALUE` lines).
pub fn queue_setting(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// fio's completion latency of one direction.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Clat {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub percentile: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DirReport {
    pub io_bytes: u64,
    pub bw_bytes: u64,
    pub iops: f64,
    /// ms, as fio reports it.
    pub runtime: u64,
    pub total_ios: u64,
    pub clat_ns: Clat,
}

impl DirReport {
    fn empty() -> Self {
        DirReport {
            io_bytes: 0,
            bw_bytes: 0,
            iops: 0.0,
            runtime: 0,
            total_ios: 0,
            clat_ns: Clat { min: 0, max: 0, mean: 0.0, percentile: BTreeMap::new() },
        }
    }

    /// `bytes` moved in `secs` by `ios` requests (no latency known).
    fn of_bytes(bytes: u64, ios: u64, secs: f64) -> Self {
        DirReport {
            io_bytes: bytes,
            bw_bytes: if secs > 0.0 { (bytes as f64 / secs) as u64 } else { 0 },
            iops: if secs > 0.0 { ios as f64 / secs } else { 0.0 },
            runtime: (secs * 1e3).round() as u64,
            total_ios: ios,
            ..DirReport::empty()
        }
    }

    fn from_fio(d: &Json) -> Self {
        let u = |k: &str| d.get(k).and_then(Json::as_u64).unwrap_or(0);
        let clat = d.get("clat_ns").cloned().unwrap_or(Json::Null);
        let percentile = clat
            .get("percentile")
            .and_then(Json::as_object)
            .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_u64()?))).collect())
            .unwrap_or_default();
        DirReport {
            io_bytes: u("io_bytes"),
            bw_bytes: u("bw_bytes"),
            iops: d.get("iops").and_then(Json::as_f64).unwrap_or(0.0),
            runtime: u("runtime"),
            total_ios: u("total_ios"),
            clat_ns: Clat {
                min: clat.get("min").and_then(Json::as_u64).unwrap_or(0),
                max: clat.get("max").and_then(Json::as_u64).unwrap_or(0),
                mean: clat.get("mean").and_then(Json::as_f64).unwrap_or(0.0),
                percentile,
            },
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct JobReport {
    pub jobname: String,
    pub groupid: u64,
    /// ms
    pub job_runtime: u64,
    pub read: DirReport,
    pub write: DirReport,
}

/// fio's jobs from its JSON output.
pub fn fio_jobs(fio: &Json) -> Vec<JobReport> {
    fio.get("jobs")
        .and_then(Json::as_array)
        .map(|jobs| {
            jobs.iter()
                .map(|j| JobReport {
                    jobname: j.get("jobname").and_then(Json::as_str).unwrap_or("").to_string(),
                    groupid: j.get("groupid").and_then(Json::as_u64).unwrap_or(0),
                    job_runtime: j.get("job_runtime").and_then(Json::as_u64).unwrap_or(0),
                    read: j.get("read").map(DirReport::from_fio).unwrap_or_else(DirReport::empty),
                    write: j.get("write").map(DirReport::from_fio).unwrap_or_else(DirReport::empty),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// How long a job file ran: groups (`stonewall`, `new_group`) run one after another, the
/// jobs of a group side by side, so the sum over groups of each group's longest job.
pub fn fio_runtime_ms(jobs: &[JobReport]) -> u64 {
    let mut groups: BTreeMap<u64, u64> = BTreeMap::new();
    for j in jobs {
        let g = groups.entry(j.groupid).or_default();
        *g = (*g).max(j.read.runtime.max(j.write.runtime));
    }
    groups.values().sum()
}

/// The JSON in fio's output file (fio may print notes before it).
pub fn fio_json(text: &[u8]) -> Result<Json, String> {
    let s = String::from_utf8_lossy(text);
    let at = s.find('{').ok_or("fio wrote no JSON")?;
    serde_json::from_str(&s[at..]).map_err(|e| format!("fio's JSON: {e}"))
}

/// dd's summary line: `N bytes (...) copied, S s, ...` (GNU coreutils).
pub fn dd_summary(text: &str) -> Option<(u64, f64)> {
    let l = text.lines().rev().find(|l| l.contains(" copied, "))?;
    let bytes = l.split_whitespace().next()?.parse().ok()?;
    let secs = l.split(" copied, ").nth(1)?.split_whitespace().next()?.parse().ok()?;
    Some((bytes, secs))
}

/// PostMark's figures (its terse report, `set report terse`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PostmarkReport {
    pub total_s: f64,
    pub transactions_s: f64,
    pub transactions_per_s: f64,
    pub files_created_per_s: f64,
    /// Files created before the transactions (the pool) over the creation phase's seconds.
    pub files_created_alone_per_s: f64,
    pub files_read_per_s: f64,
    pub files_appended_per_s: f64,
    pub files_deleted_per_s: f64,
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
}

/// PostMark 1.5x's terse report: total seconds, transaction seconds, transactions/s,
/// created/s (all, alone, mixed), read/s, appended/s, deleted/s (all, alone, mixed), bytes
/// read/s, bytes written/s. PostMark times in whole seconds.
pub fn parse_postmark(text: &str) -> Result<PostmarkReport, String> {
    let v: Vec<f64> = text
        .split_whitespace()
        .map(|w| w.parse::<f64>().map_err(|_| format!("PostMark's report: `{w}` is not a number")))
        .collect::<Result<_, _>>()?;
    if v.len() < 13 {
        return Err(format!("PostMark's report has {} figures, not 13", v.len()));
    }
    Ok(PostmarkReport {
        total_s: v[0],
        transactions_s: v[1],
        transactions_per_s: v[2],
        files_created_per_s: v[3],
        files_created_alone_per_s: v[4],
        files_read_per_s: v[6],
        files_appended_per_s: v[7],
        files_deleted_per_s: v[8],
        read_bytes_per_s: v[11],
        write_bytes_per_s: v[12],
    })
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Aggregate {
    pub io_bytes: u64,
    pub bw_bytes: u64,
    pub iops: f64,
    pub runtime_ns: u64,
}

impl Aggregate {
    /// `bytes` moved by `ios` requests in `secs`.
    fn over(bytes: u64, ios: u64, secs: f64) -> Self {
        let d = DirReport::of_bytes(bytes, ios, secs);
        Aggregate { io_bytes: bytes, bw_bytes: d.bw_bytes, iops: d.iops, runtime_ns: (secs * 1e9) as u64 }
    }
}

/// The headway disks as the guest saw them over the workload.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct DeviceReport {
    pub requests: u64,
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
    /// Busy time over the workload's wall time (mean over the disks).
    pub utilization: f64,
    /// Mean time from a request's arrival in the guest's block layer to its completion, ms
    /// (iostat's `await`: read and write ticks over the requests completed).
    pub mean_response_ms: f64,
    /// Mean number of requests in the guest's block layer over the workload (iostat's
    /// `aqu-sz`: the weighted in-flight time over the wall time), summed over the disks.
    pub mean_queue: f64,
    /// The guest's `nr_requests` of the headway disks (the block layer's request limit per
    /// hardware queue; the largest over the disks, 0 when not recorded).
    pub nr_requests: u64,
}

/// How and where a point ran.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LabInfo {
    pub fs: String,
    pub guest_scheduler: String,
    pub accel: String,
    pub kernel: String,
    pub guest_memory_mb: u32,
    pub guest_cpus: u32,
    pub guest_queue_depth: u32,
    /// Guests sharing each server (each on its own part of the disks).
    pub guests: u32,
    pub repeat: u32,
    /// Boot to power-off, host seconds.
    pub wall_s: f64,
    /// The workload step alone, guest seconds.
    pub workload_s: f64,
    pub steps: Vec<Step>,
    /// headway options dropped from the job file for real fio (`line: key`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_options: Vec<String>,
    /// The guest scheduler's `queue/iosched/` files at the end ([`GuestCounters`]).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub guest_counters: BTreeMap<String, Json>,
}

/// What `headway serve` saw of one disk.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct ServerReport {
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
    /// TRIM, WRITE_ZEROES, FLUSH.
    pub others: u64,
    /// ns from a request's arrival to its reply.
    pub mean_latency_ns: f64,
    /// ns the scheduler kept the drive idle on purpose.
    pub idle_wait_ns: u64,
    /// The request log (`headway replay FILE --format blkparse`).
    pub trace: String,
    /// The workload's part of the log: what arrived and what went to the drive.
    pub workload: crate::served::WorkloadCounts,
    /// The log as read back (for the replay comparison; not written out).
    #[serde(skip)]
    pub served: crate::served::Served,
    /// The same requests replayed in the simulator on the same model (filled in by the
    /// caller that has the simulator: `headway lab run`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replay: Vec<crate::served::ReplayComparison>,
}

/// One point's results.
#[derive(Clone, Debug, Serialize)]
pub struct LabRun {
    pub scheduler: String,
    pub disk: String,
    pub context: String,
    pub jobs: Vec<JobReport>,
    pub aggregate: Aggregate,
    pub device: DeviceReport,
    pub lab: LabInfo,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postmark: Option<PostmarkReport>,
    pub server: Vec<ServerReport>,
}

/// The workload-derived parts of a run: jobs, aggregate, device.
#[derive(Debug)]
pub struct Measured {
    pub jobs: Vec<JobReport>,
    pub aggregate: Aggregate,
    pub device: DeviceReport,
    pub fio: Option<Json>,
    pub postmark: Option<PostmarkReport>,
    pub workload_s: f64,
    pub steps: Vec<Step>,
    pub kernel: String,
    pub guest_counters: GuestCounters,
}

/// Several guests' results as one run: their jobs (named `gN/JOB`), bytes over the longest
/// guest's time, the disks' counters summed (utilisation averaged), fio's JSON as a list,
/// PostMark's rates summed, the guest schedulers' counters summed. One guest's results are
/// returned as they are.
pub fn merge_guests(mut guests: Vec<Measured>) -> Measured {
    if guests.len() == 1 {
        return guests.pop().expect("one");
    }
    let n = guests.len() as f64;
    let secs = guests.iter().map(|m| m.aggregate.runtime_ns).max().unwrap_or(0) as f64 / 1e9;
    let bytes = guests.iter().map(|m| m.aggregate.io_bytes).sum();
    let ios =
        guests.iter().map(|m| (m.aggregate.iops * m.aggregate.runtime_ns as f64 / 1e9).round() as u64).sum();
    let mut device = DeviceReport::default();
    let mut jobs = Vec::new();
    for (g, m) in guests.iter().enumerate() {
        for j in &m.jobs {
            jobs.push(JobReport { jobname: format!("g{g}/{}", j.jobname), ..j.clone() });
        }
        let d = &m.device;
        device.requests += d.requests;
        device.reads += d.reads;
        device.read_bytes += d.read_bytes;
        device.writes += d.writes;
        device.write_bytes += d.write_bytes;
        device.utilization += d.utilization / n;
        // each guest's queue is its own: lengths add, response times weigh by requests
        device.mean_queue += d.mean_queue;
        device.mean_response_ms += d.mean_response_ms * d.requests as f64;
        device.nr_requests = device.nr_requests.max(d.nr_requests);
    }
    if device.requests > 0 {
        device.mean_response_ms /= device.requests as f64;
    }
    let fio = guests
        .iter()
        .any(|m| m.fio.is_some())
        .then(|| Json::Array(guests.iter().map(|m| m.fio.clone().unwrap_or(Json::Null)).collect()));
    let postmark = guests.iter().filter_map(|m| m.postmark.clone()).reduce(|a, b| PostmarkReport {
        total_s: a.total_s.max(b.total_s),
        transactions_s: a.transactions_s.max(b.transactions_s),
        transactions_per_s: a.transactions_per_s + b.transactions_per_s,
        files_created_per_s: a.files_created_per_s + b.files_created_per_s,
        files_created_alone_per_s: a.files_created_alone_per_s + b.files_created_alone_per_s,
        files_read_per_s: a.files_read_per_s + b.files_read_per_s,
        files_appended_per_s: a.files_appended_per_s + b.files_appended_per_s,
        files_deleted_per_s: a.files_deleted_per_s + b.files_deleted_per_s,
        read_bytes_per_s: a.read_bytes_per_s + b.read_bytes_per_s,
        write_bytes_per_s: a.write_bytes_per_s + b.write_bytes_per_s,
    });
    let mut guest_counters = GuestCounters::default();
    for m in &guests {
        guest_counters.add(&m.guest_counters);
    }
    let first = guests.swap_remove(0);
    Measured {
        jobs,
        aggregate: Aggregate::over(bytes, ios, secs),
        device,
        fio,
        postmark,
        workload_s: guests.iter().map(|m| m.workload_s).fold(first.workload_s, f64::max),
        steps: first.steps,
        kernel: first.kernel,
        guest_counters,
    }
}

/// Read the guest's files. `disks`: the guest device names of the headway disks (`vdc`),
/// found by `/results/scheduler.NAME`.
pub fn measure(files: &BTreeMap<String, Vec<u8>>, kind: &str) -> Result<Measured, String> {
    let text = |n: &str| files.get(n).map(|b| String::from_utf8_lossy(b).into_owned());
    let steps = parse_steps(&text("steps").unwrap_or_default());
    let workload: Vec<&Step> = steps.iter().filter(|s| s.name.starts_with("workload")).collect();
    let workload_s = match (workload.first(), workload.last()) {
        (Some(a), Some(b)) => b.end_s - a.start_s,
        _ => 0.0,
    };
    let disks: Vec<String> =
        files.keys().filter_map(|k| k.strip_prefix("scheduler.")).map(str::to_string).collect();
    let before = parse_diskstats(&text("diskstats.before").unwrap_or_default());
    let after = parse_diskstats(&text("diskstats.after").unwrap_or_default());
    let mut device = DeviceReport::default();
    let mut ticks_ms = 0u64;
    let mut guest_counters = GuestCounters::default();
    for d in &disks {
        if let Some(t) = text(&format!("iosched.{d}")) {
            guest_counters.add(&GuestCounters::parse(&t));
        }
        let (b, a) = (before.get(d).copied().unwrap_or_default(), after.get(d).copied().unwrap_or_default());
        device.reads += a.reads - b.reads;
        device.writes += a.writes - b.writes;
        device.read_bytes += (a.read_sectors - b.read_sectors) * 512;
        device.write_bytes += (a.write_sectors - b.write_sectors) * 512;
        ticks_ms += (a.read_ticks_ms + a.write_ticks_ms).saturating_sub(b.read_ticks_ms + b.write_ticks_ms);
        if workload_s > 0.0 {
            device.utilization +=
                (a.io_ticks_ms - b.io_ticks_ms) as f64 / 1e3 / workload_s / disks.len() as f64;
            device.mean_queue +=
                a.time_in_queue_ms.saturating_sub(b.time_in_queue_ms) as f64 / 1e3 / workload_s;
        }
        let limit = text(&format!("queue.{d}")).and_then(|q| queue_setting(&q, "nr_requests"));
        device.nr_requests = device.nr_requests.max(limit.unwrap_or(0));
    }
    device.requests = device.reads + device.writes;
    if device.requests > 0 {
        device.mean_response_ms = ticks_ms as f64 / device.requests as f64;
    }
    let (mut jobs, mut fio, mut postmark) = (Vec::new(), None, None);
    // Steps that end in `fio --output-format=json --output=/results/fio.json` are measured
    // as a fio workload: the steps before it (a loop device made, an NFS export mounted)
    // are setting up, not the workload.
    let kind = if kind == "steps" && files.contains_key("fio.json") { "fio" } else { kind };
    let aggregate = match kind {
        "fio" => {
            let j = fio_json(files.get("fio.json").ok_or("the guest's fio wrote no fio.json")?)?;
            jobs = fio_jobs(&j);
            fio = Some(j);
            let bytes: u64 = jobs.iter().map(|j| j.read.io_bytes + j.write.io_bytes).sum();
            let ios: u64 = jobs.iter().map(|j| j.read.total_ios + j.write.total_ios).sum();
            Aggregate::over(bytes, ios, fio_runtime_ms(&jobs) as f64 / 1e3)
        }
        "dd" => {
            let mut i = 0;
            while let Some(t) = text(&format!("dd{i}.out")) {
                let (bytes, secs) =
                    dd_summary(&t).ok_or_else(|| format!("dd{i}: no summary in `{}`", t.trim()))?;
                jobs.push(JobReport {
                    jobname: format!("dd{i}"),
                    groupid: 0,
                    job_runtime: (secs * 1e3).round() as u64,
                    read: DirReport::of_bytes(bytes, 1, secs),
                    write: DirReport::empty(),
                });
                i += 1;
            }
            let bytes: u64 = jobs.iter().map(|j| j.read.io_bytes).sum();
            Aggregate::over(bytes, device.requests, workload_s)
        }
        "postmark" => {
            let p = parse_postmark(&text("postmark.report").ok_or("PostMark wrote no report")?)?;
            let bytes = ((p.read_bytes_per_s + p.write_bytes_per_s) * p.total_s) as u64;
            let agg = Aggregate {
                io_bytes: bytes,
                bw_bytes: (p.read_bytes_per_s + p.write_bytes_per_s) as u64,
                iops: p.transactions_per_s,
                runtime_ns: (p.total_s * 1e9) as u64,
            };
            postmark = Some(p);
            agg
        }
        _ => Aggregate::over(device.read_bytes + device.write_bytes, device.requests, workload_s),
    };
    Ok(Measured {
        jobs,
        aggregate,
        device,
        fio,
        postmark,
        workload_s,
        steps,
        kernel: text("kernel").unwrap_or_default().trim().to_string(),
        guest_counters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_diskstats_parse() {
        let s = parse_steps("mkfs0 3.10 5.20 0\nworkload 6.00 16.50 0\n");
        assert_eq!(s[1], Step { name: "workload".into(), start_s: 6.0, end_s: 16.5, rc: 0 });
        let d = parse_diskstats(
            " 252       0 vda 120 0 9000 50 0 0 0 0 0 80 50 0 0 0 0 0 0\n 252      32 vdc 4000 10 2048000 900 7 0 56 3 0 1500 903 0 0 0 0 0 0\n",
        );
        assert_eq!(
            d["vdc"],
            DiskCounters {
                reads: 4000,
                read_sectors: 2_048_000,
                writes: 7,
                write_sectors: 56,
                io_ticks_ms: 1500,
                read_ticks_ms: 900,
                write_ticks_ms: 3,
                time_in_queue_ms: 903,
            }
        );
        assert_eq!(
            queue_setting("iosched/x 1\nnr_requests 256\nread_ahead_kb 128\n", "nr_requests"),
            Some(256)
        );
        assert_eq!(queue_setting("nr_requests_x 3\n", "nr_requests"), None);
    }

    #[test]
    fn the_guest_block_layer_gives_iostats_await_and_queue_length() {
        // 4,000 requests over 10 s: 6,000 ms of response summed, 25,000 ms queue-weighted
        let mut files = BTreeMap::new();
        files.insert("steps".to_string(), b"workload 1.0 11.0 0\n".to_vec());
        files.insert("scheduler.vdc".to_string(), b"[none]\n".to_vec());
        files.insert("queue.vdc".to_string(), b"nr_requests 256\n".to_vec());
        files.insert(
            "diskstats.before".to_string(),
            b" 252 32 vdc 100 0 800 40 100 0 800 60 0 500 100 0 0 0 0 0 0\n".to_vec(),
        );
        files.insert(
            "diskstats.after".to_string(),
            b" 252 32 vdc 2100 0 16800 2040 2100 0 16800 4060 3 9500 25100 0 0 0 0 0 0\n".to_vec(),
        );
        let m = measure(&files, "other").unwrap();
        assert_eq!(m.device.requests, 4000);
        assert!((m.device.mean_response_ms - 1.5).abs() < 1e-12, "{:?}", m.device);
        assert!((m.device.mean_queue - 2.5).abs() < 1e-12, "{:?}", m.device);
        assert!((m.device.utilization - 0.9).abs() < 1e-12, "{:?}", m.device);
        assert_eq!(m.device.nr_requests, 256);
    }

    #[test]
    fn guest_counters_sum_the_counters_and_keep_the_tunables() {
        let vdc = "== completed 444\n120\n== estimator_table 644\n0 5000\n1000 9000\n\
                   == in_flight 444\n0\n== inserted 444\n130\n== read_expire 644\n500\n\
                   == tolerance_factor 644\n0.500\n== waits 444\n7\n";
        let vdd = "== completed 444\n30\n== inserted 444\n35\n== read_expire 644\n500\n\
                   == tolerance_factor 644\n0.500\n== waits 444\n2\n== streams 444\n1\n";
        let c = GuestCounters::parse(vdc);
        assert_eq!(c.values["tolerance_factor"], Json::from(0.5));
        assert_eq!(c.values["estimator_table"], Json::from("0 5000\n1000 9000"));
        assert_eq!(c.values["inserted"], Json::from(130u64));
        assert!(c.read_only.contains("inserted") && !c.read_only.contains("read_expire"));
        let mut files = BTreeMap::new();
        files.insert("scheduler.vdc".to_string(), b"none mq-deadline [stream]\n".to_vec());
        files.insert("scheduler.vdd".to_string(), b"none mq-deadline [stream]\n".to_vec());
        files.insert("iosched.vdc".to_string(), vdc.as_bytes().to_vec());
        files.insert("iosched.vdd".to_string(), vdd.as_bytes().to_vec());
        let m = measure(&files, "other").unwrap();
        let g = &m.guest_counters.values;
        assert_eq!((g["inserted"].as_u64(), g["completed"].as_u64()), (Some(165), Some(150)));
        assert_eq!((g["waits"].as_u64(), g["streams"].as_u64()), (Some(9), Some(1)));
        assert_eq!((g["read_expire"].as_u64(), g["tolerance_factor"].as_f64()), (Some(500), Some(0.5)));
        // two guests: summed again
        let both = merge_guests(vec![measure(&files, "other").unwrap(), measure(&files, "other").unwrap()]);
        assert_eq!(both.guest_counters.values["inserted"].as_u64(), Some(330));
        assert_eq!(both.guest_counters.values["read_expire"].as_u64(), Some(500));
        // none: no files, nothing written out
        assert_eq!(GuestCounters::parse(""), GuestCounters::default());
        assert_eq!(sysfs_value("[none] mq-deadline"), Json::from("[none] mq-deadline"));
        assert_eq!(sysfs_value("inf"), Json::from("inf"));
        assert_eq!(sysfs_value("-3"), Json::from(-3));
    }

    #[test]
    fn dd_and_postmark_reports_parse() {
        let dd =
            "64+0 records in\n64+0 records out\n67108864 bytes (67 MB, 64 MiB) copied, 2.51 s, 26.7 MB/s\n";
        assert_eq!(dd_summary(dd), Some((67_108_864, 2.51)));
        let p = parse_postmark(
            "1 1 300.00 351.00 200.00 151.00 156.00 144.00 351.00 202.00 149.00 898789.00 2223176.00\n",
        )
        .unwrap();
        assert_eq!((p.total_s, p.transactions_per_s, p.read_bytes_per_s), (1.0, 300.0, 898_789.0));
        assert!(parse_postmark("1 2 3").is_err());
    }

    #[test]
    fn fio_jobs_keep_fio_figures() {
        let j = fio_json(
            br#"note: both iodepth >= 1 and synchronous I/O engine are selected
{"fio version":"fio-3.33","jobs":[{"jobname":"r","groupid":0,"job_runtime":2000,
"read":{"io_bytes":1048576,"bw_bytes":524288,"iops":128.0,"runtime":2000,"total_ios":256,
"clat_ns":{"min":10,"max":900,"mean":55.5,"percentile":{"50.000000":40}}},
"write":{"io_bytes":0,"bw_bytes":0,"iops":0.0,"runtime":0,"total_ios":0,"clat_ns":{"min":0,"max":0,"mean":0.0}}}]}"#,
        )
        .unwrap();
        let jobs = fio_jobs(&j);
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].read.io_bytes, 1_048_576);
        assert_eq!(jobs[0].read.clat_ns.percentile["50.000000"], 40);
        assert_eq!(jobs[0].read.clat_ns.mean, 55.5);
        let mut files = BTreeMap::new();
        files.insert("fio.json".to_string(), serde_json::to_vec(&j).unwrap());
        files.insert("steps".to_string(), b"workload 1.0 3.0 0\n".to_vec());
        let m = measure(&files, "fio").unwrap();
        assert_eq!(m.aggregate.io_bytes, 1_048_576);
        assert_eq!(m.aggregate.bw_bytes, 524_288);
        assert_eq!(m.workload_s, 2.0);
        assert!(measure(&BTreeMap::new(), "fio").unwrap_err().contains("fio.json"));
        // steps that end in fio's JSON are measured as fio; without it, by the disk
        assert_eq!(measure(&files, "steps").unwrap().aggregate.bw_bytes, 524_288);
        files.remove("fio.json");
        assert!(measure(&files, "steps").unwrap().fio.is_none());
        let job = |g: u64, r: u64, w: u64| JobReport {
            jobname: String::new(),
            groupid: g,
            job_runtime: 0,
            read: DirReport { runtime: r, ..DirReport::empty() },
            write: DirReport { runtime: w, ..DirReport::empty() },
        };
        // two side by side in group 0, then group 1 alone
        assert_eq!(fio_runtime_ms(&[job(0, 100, 0), job(0, 0, 300), job(1, 50, 0)]), 350);
    }
}

//! fio's own output for a simulation: `headway simulate --output-format json|json+|normal|terse`
//! and fio's log files (`write_bw_log`, `write_lat_log`, `write_iops_log`, `write_hist_log`).
//!
//! [`FioCollector`] takes every job request of every scheduler run as it completes (the
//! simulator's [`RequestRecord`]s) and keeps, per job clone, what fio's `thread_stat` keeps:
//! bytes and I/Os per direction, completion latency (min, max, mean, deviation and the
//! histogram fio's `clat_ns` percentiles and json+ `bins` come from), bandwidth and IOPS
//! samples, the latency ranges, I/O depths and completion batches. [`FioCollector::finish`]
//! adds the run's report (job runtimes, syncs, the device) and sums jobs into fio's reporting
//! groups: a [`RunStats`] per scheduler, which [`json`], [`normal`] and [`terse`] print.
//!
//! What the simulator measures, fio's way:
//! - **Latencies.** `clat` is submission to completion of the simulated request; submission
//!   itself takes no simulated time, so `slat` is zero (fio reports no `slat` samples for a
//!   synchronous engine, zero-valued ones for an asynchronous engine) and `lat` = `clat`.
//! - **Runtime.** A direction's `runtime` is the job's (ms from its first submission to its
//!   end, the report's `job_runtime`) when it did I/O in that direction, 0 otherwise.
//! - **Bandwidth and IOPS samples.** One every `bw_avg_time` / `iops_avg_time` (500 ms) of
//!   the job's time, from its first submission, a direction's sample only when it moved data
//!   in the window (fio's rule), the partial window at the end not sampled. With a bandwidth
//!   (IOPS) log and `log_avg_msec=0`, one sample per request instead, as fio.
//! - **Depths.** `iodepth_level` counts the job's requests in flight once each was submitted;
//!   requests are submitted one at a time (`iodepth_submit` all in `4`, fio's 1-4 batch);
//!   `iodepth_complete` counts the job's requests that completed at the same simulated
//!   instant as one batch.
//! - **Time.** Timestamps are simulated time, which starts at the Unix epoch, so the same
//!   inputs give the same bytes: `"timestamp" : 0`, `"time" : "Thu Jan  1 00:00:00 1970"`.
//! - **Not simulated**, reported as zero: CPU (`usr_cpu`, `sys_cpu`, `ctx`, `majf`, `minf`),
//!   trims, short and dropped I/Os, errors.
//! - **`disk_util`.** One entry, the simulated drive (or array): commands and merges per
//!   direction from the block layer's counts, `read_ticks`/`write_ticks` the jobs' requests'
//!   latencies summed (ms), `util` its busy percentage.
//! - **Groups.** Reporting groups start at `stonewall` and `new_group` jobs (numbered from 0);
//!   `group_reporting` sums a group's jobs into one entry named after its first job, latencies
//!   merged, bandwidth and IOPS samples of jobs running side by side added.

pub mod json;
pub mod logs;
pub mod normal;
pub mod stat;
pub mod terse;

use headway_sched::hist::Histogram;

use crate::fio::{Engine, JobFile, JobSpec};
use crate::report::{Report, RunReport, PERCENTILES};
use crate::RequestRecord;
use stat::{batch_range, depth_range, lat_range, SampleStat};

/// One direction of a job (fio's read, write and trim sections).
#[derive(Clone, Debug, Default)]
pub struct DirStats {
    pub io_bytes: u64,
    pub total_ios: u64,
    /// ms; 0 when the job did no I/O in this direction.
    pub runtime_ms: u64,
    /// Submission latencies (none for a synchronous engine; zero-valued otherwise).
    pub slat: SampleStat,
    /// Completion latency, ns; `lat` is the same (see the module docs).
    pub clat: SampleStat,
    pub hist: Histogram,
    /// Bandwidth samples (KiB/s) and IOPS samples.
    pub bw: SampleStat,
    pub iops: SampleStat,
    /// The job's mean bandwidth as a percentage of its group's (fio's `bw_agg`, `per=`).
    pub bw_agg: f64,
    /// Smallest and largest request, bytes (terse output's block sizes).
    pub min_bs: u64,
    pub max_bs: u64,
}

impl DirStats {
    /// Bytes per second over the runtime, as fio computes it (integer).
    pub fn bw_bytes(&self) -> u64 {
        (self.io_bytes * 1000).checked_div(self.runtime_ms).unwrap_or(0)
    }

    pub fn iops(&self) -> f64 {
        if self.runtime_ms == 0 {
            0.0
        } else {
            self.total_ios as f64 * 1000.0 / self.runtime_ms as f64
        }
    }

    /// fio's percentile of the latency histogram: the first bucket whose running count
    /// reaches `p`% of the samples (unclamped, as fio).
    pub fn percentile(&self, p: f64) -> u64 {
        percentile_of(&self.hist, p)
    }

    /// A job running beside this one summed in (fio's group figures): latencies merged,
    /// bandwidth and IOPS samples added as rates.
    fn add(&mut self, o: &DirStats) {
        self.io_bytes += o.io_bytes;
        self.total_ios += o.total_ios;
        self.runtime_ms = self.runtime_ms.max(o.runtime_ms);
        self.slat.merge(&o.slat);
        self.clat.merge(&o.clat);
        self.hist.merge(&o.hist);
        self.bw.add_parallel(&o.bw);
        self.iops.add_parallel(&o.iops);
        if o.total_ios > 0 {
            self.min_bs = if self.min_bs == 0 { o.min_bs } else { self.min_bs.min(o.min_bs) };
            self.max_bs = self.max_bs.max(o.max_bs);
        }
    }
}

/// fio's percentile rule on a histogram.
pub fn percentile_of(h: &Histogram, p: f64) -> u64 {
    let target = p / 100.0 * h.count as f64;
    let mut seen = 0u64;
    for (b, &c) in h.buckets().iter().enumerate().take(FIO_BUCKETS) {
        seen += c;
        if c > 0 && seen as f64 >= target {
            return headway_sched::hist::bucket_value(b);
        }
    }
    // what lies past fio's last bucket is counted there
    headway_sched::hist::bucket_value(FIO_BUCKETS - 1)
}

/// fio's latency buckets (`FIO_IO_U_PLAT_NR`: 29 groups of 64); longer latencies fall in
/// the last one, as in fio.
pub const FIO_BUCKETS: usize = 29 * 64;

/// A job's syncs (fio's `sync` section).
#[derive(Clone, Debug, Default)]
pub struct SyncStats {
    pub total_ios: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    pub percentiles: Vec<(f64, u64)>,
}

/// One entry of fio's `jobs`: a job clone, or a reporting group under `group_reporting`.
#[derive(Clone, Debug)]
pub struct JobStats {
    pub name: String,
    pub groupid: u32,
    /// Job clones it stands for (fio's `jobs=` in the normal output).
    pub jobs: u32,
    /// Its job section in the job file.
    pub spec: usize,
    /// read, write, trim.
    pub dirs: [DirStats; 3],
    pub sync: SyncStats,
    pub job_runtime_ms: u64,
    /// Seconds from the start of the run to the job's end, rounded up (fio's `elapsed`).
    pub elapsed_s: u64,
    pub depth: [u64; 7],
    pub submit: [u64; 7],
    pub complete: [u64; 7],
    /// The 32 latency ranges ([`stat::lat_range`]).
    pub lat_ranges: [u64; 32],
    pub percentiles: Vec<f64>,
}

/// A reporting group's totals (fio's "Run status group" line).
#[derive(Clone, Debug, Default)]
pub struct GroupDir {
    pub io_bytes: u64,
    /// Bytes per second: all the group's bytes over its longest runtime.
    pub agg_bw: u64,
    pub min_bw: u64,
    pub max_bw: u64,
    pub min_run_ms: u64,
    pub max_run_ms: u64,
}

#[derive(Clone, Debug, Default)]
pub struct GroupStats {
    pub groupid: u32,
    pub dirs: [GroupDir; 3],
}

/// fio's `disk_util` entry.
#[derive(Clone, Debug, Default)]
pub struct DiskUtil {
    pub name: String,
    pub ios: [u64; 2],
    pub merges: [u64; 2],
    pub ticks: [u64; 2],
    pub in_queue: u64,
    /// Percent.
    pub util: f64,
}

/// Everything fio would report for one scheduler run.
#[derive(Clone, Debug)]
pub struct RunStats {
    pub scheduler: String,
    pub jobs: Vec<JobStats>,
    pub groups: Vec<GroupStats>,
    pub disk_util: Vec<DiskUtil>,
}

/// A job clone's place: its job section, and its reporting group.
#[derive(Clone, Copy, Debug)]
struct CloneInfo {
    spec: usize,
    group: u32,
}

/// Windowed samples of one kind (bandwidth or IOPS) for a job clone.
#[derive(Clone, Debug, Default)]
struct Windows {
    window_ns: u64,
    /// End of the current window.
    next_ns: u64,
    bytes: [u64; 2],
    ios: [u64; 2],
}

/// A job clone's figures as its requests complete.
#[derive(Clone, Debug, Default)]
struct CloneAcc {
    dirs: [DirStats; 2],
    /// The job's first submission: where its sample windows and log times start.
    start_ns: Option<u64>,
    bw: Windows,
    iops: Windows,
    per_request_bw: bool,
    per_request_iops: bool,
    depth: [u64; 7],
    complete: [u64; 7],
    /// The completion instant of the current batch and its size.
    batch_at: u64,
    batch_n: u64,
    lat_ranges: [u64; 32],
    requests: u64,
}

impl CloneAcc {
    fn new(spec: &JobSpec) -> Self {
        let logs = &spec.report.logs;
        CloneAcc {
            bw: Windows { window_ns: spec.report.bw_avg_ms * 1_000_000, ..Windows::default() },
            iops: Windows { window_ns: spec.report.iops_avg_ms * 1_000_000, ..Windows::default() },
            per_request_bw: logs.bw.is_some() && logs.avg_msec == 0,
            per_request_iops: logs.iops.is_some() && logs.avg_msec == 0,
            ..CloneAcc::default()
        }
    }

    fn record(&mut self, r: &RequestRecord<'_>, async_engine: bool) {
        if self.start_ns.is_none() {
            self.start_ns = Some(r.submit_ns);
            self.bw.next_ns = r.submit_ns + self.bw.window_ns;
            self.iops.next_ns = r.submit_ns + self.iops.window_ns;
        }
        let d = r.dir.index();
        let lat = r.complete_ns - r.submit_ns;
        // windows that ended before this completion are sampled first
        if !self.per_request_bw {
            close_windows(&mut self.bw, r.complete_ns, &mut self.dirs, |s| &mut s.bw, true);
        }
        if !self.per_request_iops {
            close_windows(&mut self.iops, r.complete_ns, &mut self.dirs, |s| &mut s.iops, false);
        }
        let st = &mut self.dirs[d];
        st.io_bytes += r.bytes as u64;
        st.total_ios += 1;
        st.clat.add(lat);
        st.hist.record(lat);
        if async_engine {
            st.slat.add(0);
        }
        let bs = r.bytes as u64;
        st.min_bs = if st.min_bs == 0 { bs } else { st.min_bs.min(bs) };
        st.max_bs = st.max_bs.max(bs);
        if self.per_request_bw {
            st.bw.add((bs * 1_000_000).checked_div(lat).unwrap_or(0));
        }
        if self.per_request_iops {
            st.iops.add(1);
        }
        self.bw.bytes[d] += bs;
        self.bw.ios[d] += 1;
        self.iops.bytes[d] += bs;
        self.iops.ios[d] += 1;
        self.depth[depth_range(r.depth)] += 1;
        self.lat_ranges[lat_range(lat)] += 1;
        if self.batch_n > 0 && r.complete_ns != self.batch_at {
            self.complete[batch_range(self.batch_n)] += 1;
            self.batch_n = 0;
        }
        self.batch_at = r.complete_ns;
        self.batch_n += 1;
        self.requests += 1;
    }
}

/// Sample every window of `w` that ended at or before `now` (fio: a direction's sample only
/// when it moved data in the window).
fn close_windows(
    w: &mut Windows,
    now: u64,
    dirs: &mut [DirStats; 2],
    stat: fn(&mut DirStats) -> &mut SampleStat,
    is_bw: bool,
) {
    if w.window_ns == 0 {
        return;
    }
    while now >= w.next_ns {
        let ms = w.window_ns / 1_000_000;
        for (d, dir) in dirs.iter_mut().enumerate() {
            let v = if is_bw { w.bytes[d] * 1000 / ms / 1024 } else { w.ios[d] * 1000 / ms };
            if w.bytes[d] > 0 {
                stat(dir).add(v);
            }
        }
        w.bytes = [0; 2];
        w.ios = [0; 2];
        w.next_ns += w.window_ns;
        if now >= w.next_ns {
            // the windows up to `now` moved nothing: no samples, skipped at once
            w.next_ns += (now - w.next_ns) / w.window_ns * w.window_ns;
        }
    }
}

/// Collects fio's statistics for the runs of `schedulers` on the jobs of `file` (job
/// clones in the report's order: each job section's `numjobs` clones in turn).
pub struct FioCollector<'f> {
    file: &'f JobFile,
    clones: Vec<CloneInfo>,
    runs: Vec<Vec<CloneAcc>>,
    schedulers: Vec<String>,
    logs: Vec<Option<logs::RunLogs>>,
}

impl<'f> FioCollector<'f> {
    pub fn new(file: &'f JobFile, schedulers: &[String]) -> Self {
        let mut clones = Vec::new();
        let mut group = 0u32;
        for (i, spec) in file.jobs.iter().enumerate() {
            if i > 0 && (spec.stonewall || spec.report.new_group) {
                group += 1;
            }
            clones.extend((0..spec.numjobs).map(|_| CloneInfo { spec: i, group }));
        }
        let accs: Vec<CloneAcc> = clones.iter().map(|c| CloneAcc::new(&file.jobs[c.spec])).collect();
        FioCollector {
            file,
            runs: vec![accs; schedulers.len()],
            clones,
            schedulers: schedulers.to_vec(),
            logs: (0..schedulers.len()).map(|_| None).collect(),
        }
    }

    /// Also write the jobs' fio logs (their `write_*_log` options), one set per scheduler
    /// run ([`logs`] names the files); none when no job asks for one.
    pub fn with_logs(mut self) -> Self {
        let several = self.schedulers.len() > 1;
        for (run, name) in self.schedulers.iter().enumerate() {
            self.logs[run] = logs::RunLogs::for_jobs(self.file, several.then_some(name.as_str()));
        }
        self
    }

    /// Run `run`'s request `r` completed.
    pub fn record(&mut self, run: usize, r: &RequestRecord<'_>) {
        let j = r.job_index as usize;
        let Some(info) = self.clones.get(j) else { return };
        let spec = &self.file.jobs[info.spec];
        if let Some(l) = self.logs[run].as_mut() {
            l.record(j, spec, r);
        }
        if !r.measured {
            return;
        }
        self.runs[run][j].record(r, spec.engine == Engine::Async);
    }

    /// The runs' statistics, with the simulation's `report` (in the same scheduler order),
    /// and the log files written (an error names the file that could not be).
    pub fn finish(self, report: &Report) -> Result<(Vec<RunStats>, Vec<std::path::PathBuf>), logs::LogError> {
        let mut written = Vec::new();
        for l in self.logs.into_iter().flatten() {
            written.extend(l.finish()?);
        }
        let stats = self
            .runs
            .into_iter()
            .zip(&report.runs)
            .map(|(accs, run)| run_stats(self.file, &self.clones, accs, run))
            .collect();
        Ok((stats, written))
    }
}

fn run_stats(file: &JobFile, clones: &[CloneInfo], accs: Vec<CloneAcc>, run: &RunReport) -> RunStats {
    let mut entries: Vec<JobStats> = Vec::new();
    let mut end_ms = 0;
    for (j, (mut acc, info)) in accs.into_iter().zip(clones).enumerate() {
        let spec = &file.jobs[info.spec];
        let rep = &run.jobs[j];
        if acc.batch_n > 0 {
            acc.complete[batch_range(acc.batch_n)] += 1;
        }
        let [read, write] = acc.dirs;
        let mut dirs = [read, write, DirStats::default()];
        for d in &mut dirs {
            if d.total_ios > 0 {
                d.runtime_ms = rep.job_runtime;
            }
        }
        let list = spec.percentile_list.clone().unwrap_or_else(|| PERCENTILES.to_vec());
        let sync = rep.sync.as_ref().map_or_else(SyncStats::default, |s| SyncStats {
            total_ios: s.total_ios,
            min: s.lat_ns.min,
            max: s.lat_ns.max,
            mean: s.lat_ns.mean,
            stddev: s.stddev,
            percentiles: list
                .iter()
                .map(|&p| (p, s.lat_ns.percentile.get(&format!("{p:.6}")).copied().unwrap_or(0)))
                .collect(),
        });
        let start_ms = acc.start_ns.unwrap_or(0) / 1_000_000;
        end_ms = end_ms.max(start_ms + rep.job_runtime);
        entries.push(JobStats {
            name: spec.name.clone(),
            groupid: info.group,
            jobs: 1,
            spec: info.spec,
            dirs,
            sync,
            job_runtime_ms: rep.job_runtime,
            elapsed_s: (start_ms + rep.job_runtime).div_ceil(1000),
            depth: acc.depth,
            submit: if acc.requests > 0 { [0, acc.requests, 0, 0, 0, 0, 0] } else { [0; 7] },
            complete: acc.complete,
            lat_ranges: acc.lat_ranges,
            percentiles: list,
        });
    }
    let groups = group_stats(&entries);
    let mut jobs: Vec<JobStats> = Vec::new();
    for e in entries {
        let reported = file.jobs[e.spec].report.group_reporting;
        match jobs.last_mut() {
            Some(last)
                if reported && last.groupid == e.groupid && file.jobs[last.spec].report.group_reporting =>
            {
                add_job(last, &e)
            }
            _ => jobs.push(e),
        }
    }
    // each entry (a job, or a group's jobs summed) against its group
    for j in &mut jobs {
        let g = &groups[j.groupid as usize];
        for (d, gd) in j.dirs.iter_mut().zip(&g.dirs) {
            d.bw_agg = bw_agg(d.bw.mean(), gd.agg_bw);
        }
    }
    RunStats { scheduler: run.scheduler.clone(), jobs, groups, disk_util: vec![disk_util(run)] }
}

/// fio's `bw_agg`: the job's mean sampled bandwidth (KiB/s) against its group's, percent,
/// at most 100.
fn bw_agg(mean_kib: f64, group_bw: u64) -> f64 {
    if group_bw == 0 {
        return 0.0;
    }
    // (the group's rate in whole KiB/s, as fio divides it)
    match group_bw / 1024 {
        0 => 100.0,
        kib => (mean_kib * 100.0 / kib as f64).min(100.0),
    }
}

/// Job `e` summed into the group's entry `into`.
fn add_job(into: &mut JobStats, e: &JobStats) {
    for (a, b) in into.dirs.iter_mut().zip(&e.dirs) {
        a.add(b);
    }
    into.jobs += e.jobs;
    into.job_runtime_ms = into.job_runtime_ms.max(e.job_runtime_ms);
    into.elapsed_s = into.elapsed_s.max(e.elapsed_s);
    let sum = |a: &mut [u64], b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
    sum(&mut into.depth, &e.depth);
    sum(&mut into.submit, &e.submit);
    sum(&mut into.complete, &e.complete);
    sum(&mut into.lat_ranges, &e.lat_ranges);
    if e.sync.total_ios > 0 {
        let s = &mut into.sync;
        if s.total_ios == 0 {
            *s = e.sync.clone();
        } else {
            let n = (s.total_ios + e.sync.total_ios) as f64;
            s.mean = (s.mean * s.total_ios as f64 + e.sync.mean * e.sync.total_ios as f64) / n;
            s.min = s.min.min(e.sync.min);
            s.max = s.max.max(e.sync.max);
            s.stddev = s.stddev.max(e.sync.stddev);
            s.total_ios += e.sync.total_ios;
            for (a, b) in s.percentiles.iter_mut().zip(&e.sync.percentiles) {
                a.1 = a.1.max(b.1);
            }
        }
    }
}

/// Each reporting group's totals (fio's `group_run_stats`).
fn group_stats(jobs: &[JobStats]) -> Vec<GroupStats> {
    let n = jobs.iter().map(|j| j.groupid as usize + 1).max().unwrap_or(0);
    let mut groups: Vec<GroupStats> =
        (0..n).map(|g| GroupStats { groupid: g as u32, ..GroupStats::default() }).collect();
    for j in jobs {
        let g = &mut groups[j.groupid as usize];
        for (gd, d) in g.dirs.iter_mut().zip(&j.dirs) {
            if d.runtime_ms == 0 {
                continue;
            }
            let bw = d.bw_bytes();
            let first = gd.max_run_ms == 0;
            gd.io_bytes += d.io_bytes;
            gd.min_bw = if first { bw } else { gd.min_bw.min(bw) };
            gd.max_bw = gd.max_bw.max(bw);
            gd.min_run_ms = if first { d.runtime_ms } else { gd.min_run_ms.min(d.runtime_ms) };
            gd.max_run_ms = gd.max_run_ms.max(d.runtime_ms);
        }
    }
    for g in &mut groups {
        for gd in &mut g.dirs {
            gd.agg_bw = (gd.io_bytes * 1000).checked_div(gd.max_run_ms).unwrap_or(0);
        }
    }
    groups
}

fn disk_util(run: &RunReport) -> DiskUtil {
    let dev = &run.device;
    let (inn, out) = (&dev.requests_in, &dev.requests_out);
    let ticks = run.jobs.iter().fold([0u64; 2], |mut t, j| {
        t[0] += (j.read.clat_ns.mean * j.read.total_ios as f64 / 1e6) as u64;
        t[1] += (j.write.clat_ns.mean * j.write.total_ios as f64 / 1e6) as u64;
        t
    });
    DiskUtil {
        name: run.array.clone().unwrap_or_else(|| run.disk.clone()),
        ios: [out.reads, out.writes],
        merges: [inn.reads.saturating_sub(out.reads), inn.writes.saturating_sub(out.writes)],
        ticks,
        in_queue: ticks[0] + ticks[1],
        util: dev.utilization * 100.0,
    }
}

/// fio's name for a direction's section and its index.
pub const DIRS: [&str; 3] = ["read", "write", "trim"];

/// One of fio's output formats (`--output-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    Terse,
    Json,
    JsonPlus,
    Normal,
}

/// fio's `--output-format` value: a comma-separated list of `normal`, `terse`, `json`,
/// `json+` (json+ includes json: one document).
pub fn parse_formats(text: &str) -> Result<Vec<Format>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        let f = match part {
            "normal" => Format::Normal,
            "terse" => Format::Terse,
            "json" => Format::Json,
            "json+" => Format::JsonPlus,
            other => return Err(format!("unknown output format `{other}` (normal, terse, json, json+)")),
        };
        out.push(f);
    }
    if out.contains(&Format::JsonPlus) {
        out.retain(|f| *f != Format::Json);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// `run` in each of `formats`, in fio's order (terse, the JSON document, normal).
pub fn render(run: &RunStats, file: &JobFile, disk: &str, formats: &[Format]) -> String {
    let mut out = String::new();
    for f in formats {
        match f {
            Format::Terse => out.push_str(&terse::document(run, file)),
            Format::Json => out.push_str(&json::document(run, file, disk, false)),
            Format::JsonPlus => out.push_str(&json::document(run, file, disk, true)),
            Format::Normal => out.push_str(&normal::document(run, file)),
        }
    }
    out
}

//! fio's log files, written as the simulation completes requests: `write_bw_log`,
//! `write_lat_log` (slat, clat and lat), `write_iops_log`, `write_hist_log`.
//!
//! Names, as fio's: `PREFIX_bw.N.log`, `PREFIX_slat.N.log`, `PREFIX_clat.N.log`,
//! `PREFIX_lat.N.log`, `PREFIX_iops.N.log`, `PREFIX_clat_hist.N.log`, `N` the job clone's
//! number in the file (from 1); with `per_job_logs=0` `PREFIX_bw.log`, shared by every job
//! naming the prefix. A bare option's prefix is the job's name. When several schedulers
//! run, each run's logs carry its name: `PREFIX.SCHEDULER_bw.1.log` (`:` written `-`).
//!
//! Lines, as fio's: `time, value, direction, block size, priority` (`time, value,
//! direction, block size, offset, priority` with `log_offset=1`), time in ms since the job
//! started, direction 0 read and 1 write, priority 1 for a real-time `prioclass` and 0
//! otherwise. Values: latencies in ns, bandwidth in KiB/s (per request: bytes over its
//! latency, as fio), IOPS. With `log_avg_msec=N` one line per direction every N ms of the
//! job, holding the window's mean (`log_max_value=1`: its largest value; bandwidth and IOPS:
//! the window's rate), block size and offset 0; the last partial window is not written
//! (fio's logs end with the last whole window). `slat` lines come only from
//! an asynchronous engine (a synchronous engine's slat log stays empty, as fio's) and are
//! zero: submission takes no simulated time.
//!
//! The histogram log: one line per direction every `log_hist_msec` ms, `time, direction,
//! block size, ` then the completions of the window in each of fio's 1,856 latency buckets
//! (what `fiologparser_hist.py` reads); none without `log_hist_msec`, as fio.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use headway_sched::hist::Histogram;

use super::FIO_BUCKETS;
use crate::fio::{JobFile, JobSpec};
use crate::RequestRecord;

/// A log could not be written: which, and why.
#[derive(Debug, thiserror::Error)]
#[error("writing fio log {path}")]
pub struct LogError {
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

/// An open log file; the first write error is kept for [`RunLogs::finish`].
struct LogFile {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    err: Option<std::io::Error>,
}

impl LogFile {
    fn write(&mut self, line: std::fmt::Arguments<'_>) {
        if let (Some(out), None) = (self.out.as_mut(), self.err.as_ref()) {
            if let Err(e) = out.write_fmt(line) {
                self.err = Some(e);
            }
        }
    }
}

/// One kind of windowed value of a job clone, per direction: sum, count and largest.
#[derive(Clone, Copy, Default)]
struct Window {
    sum: [u128; 2],
    n: [u64; 2],
    max: [u64; 2],
}

/// The logs of one job clone: the file of each kind it writes, and its windows.
struct CloneLogs {
    /// bw, slat, clat, lat, iops, clat_hist: index into the run's files.
    files: [Option<usize>; 6],
    start_ns: Option<u64>,
    avg_ns: u64,
    hist_ns: u64,
    next_avg: u64,
    next_hist: u64,
    offset: bool,
    max_value: bool,
    prio: u32,
    /// Fixed block size per direction (0 when it varies).
    fixed_bs: [u64; 2],
    windows: [Window; 5],
    hist: [Histogram; 2],
}

const BW: usize = 0;
const SLAT: usize = 1;
const CLAT: usize = 2;
const LAT: usize = 3;
const IOPS: usize = 4;
const HIST: usize = 5;
const KINDS: [&str; 6] = ["bw", "slat", "clat", "lat", "iops", "clat_hist"];

/// One scheduler run's logs.
pub struct RunLogs {
    files: Vec<LogFile>,
    clones: Vec<Option<CloneLogs>>,
}

impl RunLogs {
    /// The logs `file`'s jobs ask for (`None`: none does); `scheduler` goes into the names
    /// when several runs each write their own. The files are created here, so a log that
    /// stays empty exists, as fio leaves it.
    pub fn for_jobs(file: &JobFile, scheduler: Option<&str>) -> Option<RunLogs> {
        if !file.jobs.iter().any(|j| j.report.logs.any()) {
            return None;
        }
        let mut files: Vec<LogFile> = Vec::new();
        let mut by_path: BTreeMap<PathBuf, usize> = BTreeMap::new();
        let mut clones = Vec::new();
        let mut number = 0u32;
        for spec in &file.jobs {
            for _ in 0..spec.numjobs {
                number += 1;
                let l = &spec.report.logs;
                if !l.any() {
                    clones.push(None);
                    continue;
                }
                let mut open = |prefix: &Option<String>, kind: usize| {
                    let prefix = prefix.as_deref()?;
                    let path =
                        log_path(prefix, &spec.name, scheduler, KINDS[kind], l.per_job.then_some(number));
                    Some(*by_path.entry(path.clone()).or_insert_with(|| {
                        let created = crate::create_file(&path);
                        let (out, err) = match created {
                            Ok(f) => (Some(BufWriter::with_capacity(1 << 16, f)), None),
                            Err(e) => (None, Some(e)),
                        };
                        files.push(LogFile { path, out, err });
                        files.len() - 1
                    }))
                };
                let f = [
                    open(&l.bw, BW),
                    open(&l.lat, SLAT),
                    open(&l.lat, CLAT),
                    open(&l.lat, LAT),
                    open(&l.iops, IOPS),
                    open(&l.hist, HIST),
                ];
                let fixed = |d: usize| {
                    let (lo, hi) = spec.bs_bounds(d);
                    if lo == hi {
                        lo
                    } else {
                        0
                    }
                };
                clones.push(Some(CloneLogs {
                    files: f,
                    start_ns: None,
                    avg_ns: l.avg_msec * 1_000_000,
                    hist_ns: l.hist_msec * 1_000_000,
                    next_avg: 0,
                    next_hist: 0,
                    offset: l.offset,
                    max_value: l.max_value,
                    prio: u32::from(spec.prioclass == Some(1)),
                    fixed_bs: [fixed(0), fixed(1)],
                    windows: [Window::default(); 5],
                    hist: [Histogram::default(), Histogram::default()],
                }));
            }
        }
        Some(RunLogs { files, clones })
    }

    /// Job clone `j` (of section `spec`) completed request `r`.
    pub fn record(&mut self, j: usize, spec: &JobSpec, r: &RequestRecord<'_>) {
        let Some(Some(c)) = self.clones.get_mut(j) else { return };
        if !r.measured {
            return;
        }
        let async_engine = spec.engine == crate::fio::Engine::Async;
        let start = *c.start_ns.get_or_insert_with(|| {
            c.next_avg = r.submit_ns + c.avg_ns;
            c.next_hist = r.submit_ns + c.hist_ns;
            r.submit_ns
        });
        let files = &mut self.files;
        if c.avg_ns > 0 {
            while r.complete_ns >= c.next_avg {
                let at = c.next_avg;
                c.flush_windows(files, at, start);
                c.next_avg += c.avg_ns;
            }
        }
        if c.hist_ns > 0 && c.files[HIST].is_some() {
            while r.complete_ns >= c.next_hist {
                let at = c.next_hist;
                c.flush_hist(files, at, start);
                c.next_hist += c.hist_ns;
            }
        }
        let d = r.dir.index();
        let lat = r.complete_ns - r.submit_ns;
        let bw = (r.bytes as u64 * 1_000_000).checked_div(lat).unwrap_or(0);
        let values = [(BW, bw), (CLAT, lat), (LAT, lat), (IOPS, 1)];
        if c.avg_ns == 0 {
            let t = (r.complete_ns - start) / 1_000_000;
            for (kind, v) in values {
                c.line(files, kind, t, v, d as u32, r.bytes as u64, r.offset);
            }
            if async_engine {
                c.line(files, SLAT, (r.submit_ns - start) / 1_000_000, 0, d as u32, r.bytes as u64, r.offset);
            }
        } else {
            let slat = async_engine.then_some((SLAT, 0));
            for (kind, v) in values.into_iter().chain(slat) {
                let w = &mut c.windows[kind];
                // bandwidth windows sum bytes; the others, values
                w.sum[d] += if kind == BW { r.bytes as u128 } else { v as u128 };
                w.n[d] += 1;
                w.max[d] = w.max[d].max(v);
            }
        }
        if c.files[HIST].is_some() && c.hist_ns > 0 {
            c.hist[d].record(lat);
        }
    }

    /// The files closed (a last partial window is not written, as fio does not): the paths
    /// written, or the first error.
    pub fn finish(self) -> Result<Vec<PathBuf>, LogError> {
        let mut written = Vec::new();
        for f in self.files {
            let path = f.path.display().to_string();
            if let Some(source) = f.err {
                return Err(LogError { path, source });
            }
            if let Some(mut out) = f.out {
                out.flush().map_err(|source| LogError { path: path.clone(), source })?;
            }
            written.push(f.path);
        }
        Ok(written)
    }
}

impl CloneLogs {
    #[allow(clippy::too_many_arguments)]
    fn line(&self, files: &mut [LogFile], kind: usize, t: u64, v: u64, d: u32, bs: u64, offset: u64) {
        let Some(f) = self.files[kind] else { return };
        let prio = self.prio;
        if self.offset {
            files[f].write(format_args!("{t}, {v}, {d}, {bs}, {offset}, {prio}\n"));
        } else {
            files[f].write(format_args!("{t}, {v}, {d}, {bs}, {prio}\n"));
        }
    }

    /// The windows ending at `at`: a line per kind and direction that saw requests.
    fn flush_windows(&mut self, files: &mut [LogFile], at: u64, start: u64) {
        let t = (at - start) / 1_000_000;
        let ms = (self.avg_ns / 1_000_000).max(1) as u128;
        for kind in [BW, SLAT, CLAT, LAT, IOPS] {
            let w = std::mem::take(&mut self.windows[kind]);
            for d in 0..2 {
                if w.n[d] == 0 {
                    continue;
                }
                let v = match kind {
                    BW => (w.sum[d] * 1000 / ms / 1024) as u64,
                    IOPS => (w.n[d] as u128 * 1000 / ms) as u64,
                    _ if self.max_value => w.max[d],
                    _ => (w.sum[d] / w.n[d] as u128) as u64,
                };
                self.line(files, kind, t, v, d as u32, 0, 0);
            }
        }
    }

    /// The histogram window ending at `at`: a line per direction that saw requests.
    fn flush_hist(&mut self, files: &mut [LogFile], at: u64, start: u64) {
        let Some(f) = self.files[HIST] else { return };
        let t = (at - start) / 1_000_000;
        for d in 0..2 {
            let h = std::mem::take(&mut self.hist[d]);
            if h.count == 0 {
                continue;
            }
            let mut line = format!("{t}, {d}, {}", self.fixed_bs[d]);
            let counts = h.buckets();
            let last: u64 = counts[FIO_BUCKETS - 1..].iter().sum();
            for &c in &counts[..FIO_BUCKETS - 1] {
                line.push_str(", ");
                line.push_str(&c.to_string());
            }
            line.push_str(&format!(", {last}\n"));
            files[f].write(format_args!("{line}"));
        }
    }
}

/// `PREFIX[.SCHEDULER]_KIND[.N].log`, the prefix the job's name when empty.
fn log_path(prefix: &str, job: &str, scheduler: Option<&str>, kind: &str, number: Option<u32>) -> PathBuf {
    let prefix = if prefix.is_empty() { job } else { prefix };
    let mut name = prefix.to_string();
    if let Some(s) = scheduler {
        name.push('.');
        name.push_str(&crate::scheduler_tag(s));
    }
    name.push('_');
    name.push_str(kind);
    if let Some(n) = number {
        name.push_str(&format!(".{n}"));
    }
    name.push_str(".log");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::log_path;

    #[test]
    fn names_are_fio_names() {
        let p = |prefix, sched, n| log_path(prefix, "job", sched, "bw", n).display().to_string();
        assert_eq!(p("out/x", None, Some(3)), "out/x_bw.3.log");
        assert_eq!(p("", None, Some(1)), "job_bw.1.log");
        assert_eq!(p("x", None, None), "x_bw.log");
        assert_eq!(p("x", Some("stream:deadline"), Some(1)), "x.stream-deadline_bw.1.log");
    }
}

//! `write_iolog=FILE`: what a job submitted, as a fio iolog version 3 that real fio replays
//! with `read_iolog=FILE` (the format `crates/sim/src/trace/iolog.rs` reads).
//!
//! fio's layout: `fio version 3 iolog`, an `add` and an `open` line per file, then one
//! `TIME FILE read|write OFFSET LENGTH` line per request, TIME the microseconds since the
//! job started (fio's `utime_since_now`), and a `close` per file at the end. A job's file is
//! its `filename=`, else fio's default `JOBNAME.CLONE.0`. Jobs naming the same log share
//! it (fio replays a log's files from one job); lines are in submission order.
//!
//! One log per scheduler run: with one scheduler the file is `FILE`; with several,
//! `FILE.SCHEDULER` (`:` written `-`: `x.iolog.stream-deadline`), since each run submits on
//! its own timing. Requests are kept in memory until the run ends (24 bytes each), then
//! sorted by submission time and written.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use headway_sched::Dir;

use crate::fio::JobFile;
use crate::RequestRecord;

/// A log could not be written: which, and why.
#[derive(Debug, thiserror::Error)]
#[error("write_iolog: writing {path}")]
pub struct IologError {
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

/// One request of a log: submission time (ns), the file's index in the log, direction,
/// offset and length.
#[derive(Clone, Copy)]
struct Line {
    submit_ns: u64,
    file: u32,
    read: bool,
    offset: u64,
    bytes: u32,
}

struct Log {
    path: String,
    /// File names in the order their jobs come.
    files: Vec<String>,
    /// Per scheduler run, its requests.
    runs: Vec<Vec<Line>>,
}

/// The logs the job file asks for, filled from a simulation's request records.
pub struct IologOut {
    logs: Vec<Log>,
    /// Per job clone (the report's `jobs` order): its log and file index there.
    clone_log: Vec<Option<(usize, u32)>>,
    schedulers: Vec<String>,
}

impl IologOut {
    /// The logs of `jobs` (`None`: no job sets `write_iolog`) for the runs of `schedulers`.
    pub fn for_jobs(jobs: &JobFile, schedulers: &[String]) -> Option<IologOut> {
        if jobs.jobs.iter().all(|j| j.write_iolog.is_none()) {
            return None;
        }
        let mut by_path: BTreeMap<&str, usize> = BTreeMap::new();
        let mut logs: Vec<Log> = Vec::new();
        let mut clone_log = Vec::new();
        for spec in &jobs.jobs {
            for clone in 0..spec.numjobs {
                let Some(path) = spec.write_iolog.as_deref() else {
                    clone_log.push(None);
                    continue;
                };
                let li = *by_path.entry(path).or_insert_with(|| {
                    logs.push(Log {
                        path: path.to_string(),
                        files: Vec::new(),
                        runs: vec![Vec::new(); schedulers.len()],
                    });
                    logs.len() - 1
                });
                let file = match &spec.filename {
                    Some(f) => f.clone(),
                    None => format!("{}.{clone}.0", spec.name),
                };
                let files = &mut logs[li].files;
                let fi = files.iter().position(|f| *f == file).unwrap_or_else(|| {
                    files.push(file);
                    files.len() - 1
                });
                clone_log.push(Some((li, fi as u32)));
            }
        }
        Some(IologOut { logs, clone_log, schedulers: schedulers.to_vec() })
    }

    /// Run `run`'s request `r`.
    pub fn record(&mut self, run: usize, r: &RequestRecord<'_>) {
        if let Some(Some((li, file))) = self.clone_log.get(r.job_index as usize) {
            self.logs[*li].runs[run].push(Line {
                submit_ns: r.submit_ns,
                file: *file,
                read: r.dir == Dir::Read,
                offset: r.offset,
                bytes: r.bytes,
            });
        }
    }

    fn path(&self, log: &Log, run: usize) -> PathBuf {
        crate::per_run_path(log.path.as_ref(), &self.schedulers[run], self.schedulers.len() > 1)
    }

    /// Write every log.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, IologError> {
        let mut written = Vec::new();
        let logs = std::mem::take(&mut self.logs);
        for mut log in logs {
            for run in 0..self.schedulers.len() {
                let path = self.path(&log, run);
                let err = |source| IologError { path: path.display().to_string(), source };
                let mut lines = std::mem::take(&mut log.runs[run]);
                lines.sort_by_key(|l| l.submit_ns);
                let mut out = std::io::BufWriter::new(crate::create_file(&path).map_err(err)?);
                write_log(&mut out, &log.files, &lines).map_err(err)?;
                out.flush().map_err(err)?;
                written.push(path);
            }
        }
        Ok(written)
    }
}

fn write_log(out: &mut impl Write, files: &[String], lines: &[Line]) -> std::io::Result<()> {
    writeln!(out, "fio version 3 iolog")?;
    for f in files {
        writeln!(out, "0 {f} add")?;
    }
    for f in files {
        writeln!(out, "0 {f} open")?;
    }
    let mut last = 0;
    for l in lines {
        let us = l.submit_ns / 1000;
        last = us;
        let dir = if l.read { "read" } else { "write" };
        writeln!(out, "{us} {} {dir} {} {}", files[l.file as usize], l.offset, l.bytes)?;
    }
    for f in files {
        writeln!(out, "{last} {f} close")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_in_fio_s_layout_and_submission_order() {
        let files = vec!["a.0.0".to_string(), "data.img".to_string()];
        let lines = [
            Line { submit_ns: 1_500, file: 0, read: true, offset: 4096, bytes: 4096 },
            Line { submit_ns: 2_000_999, file: 1, read: false, offset: 0, bytes: 512 },
        ];
        let mut out = Vec::new();
        write_log(&mut out, &files, &lines).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "fio version 3 iolog\n0 a.0.0 add\n0 data.img add\n0 a.0.0 open\n0 data.img open\n\
             1 a.0.0 read 4096 4096\n2000 data.img write 0 512\n2000 a.0.0 close\n2000 data.img close\n"
        );
    }
}

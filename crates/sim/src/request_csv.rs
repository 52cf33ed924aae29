//! `--per-request FILE`: every job request of every run as a CSV row, streamed to the file
//! as the simulation completes it (bounded memory, however long the run).
//!
//! Columns: `scheduler` (as given on the command line), `job_index` and `job` (the job's
//! place in the report's `jobs` and its name there: clones share the name),
//! `dir` (`read`/`write`), `offset` and `bytes` (the job's address space: the array's with
//! `--array`; in a run of several devices the device's number is in the offset from bit 49
//! up, its sector's bit 40, [`crate::engine::DEVICE_SHIFT`]), `submit_ns`, `complete_ns`
//! and `latency_ns` (simulated time; `latency_ns` is what the report's `clat_ns`
//! summarises). Runs follow in scheduler order, each in completion order; the same inputs
//! and seed write the same bytes.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use headway_sched::Dir;

use crate::RequestRecord;

/// A file could not be written: which, and why.
#[derive(Debug, thiserror::Error)]
#[error("writing {path}")]
pub struct CsvError {
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

pub const HEADER: &str = "scheduler,job_index,job,dir,offset,bytes,submit_ns,complete_ns,latency_ns";

/// A CSV file taking [`RequestRecord`]s; the first write error is kept and reported by
/// [`RequestCsv::finish`] (the simulation is not interrupted by it).
pub struct RequestCsv {
    out: BufWriter<File>,
    path: String,
    schedulers: Vec<String>,
    err: Option<std::io::Error>,
}

impl RequestCsv {
    pub fn create(path: &Path, schedulers: &[String]) -> Result<RequestCsv, CsvError> {
        let err = |source| CsvError { path: path.display().to_string(), source };
        let file = crate::create_file(path).map_err(err)?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        writeln!(out, "{HEADER}").map_err(err)?;
        Ok(RequestCsv {
            out,
            path: path.display().to_string(),
            schedulers: schedulers.iter().map(|s| field(s)).collect(),
            err: None,
        })
    }

    /// One row: run `run`'s request `r`.
    pub fn record(&mut self, run: usize, r: &RequestRecord<'_>) {
        if self.err.is_some() {
            return;
        }
        let res = writeln!(
            self.out,
            "{},{},{},{},{},{},{},{},{}",
            self.schedulers[run],
            r.job_index,
            field(r.job),
            if r.dir == Dir::Read { "read" } else { "write" },
            r.offset,
            r.bytes,
            r.submit_ns,
            r.complete_ns,
            r.complete_ns - r.submit_ns
        );
        if let Err(e) = res {
            self.err = Some(e);
        }
    }

    pub fn finish(mut self) -> Result<(), CsvError> {
        if let Some(source) = self.err.take() {
            return Err(CsvError { path: self.path, source });
        }
        self.out.flush().map_err(|source| CsvError { path: self.path.clone(), source })
    }
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        assert_eq!(field("reader0"), "reader0");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}

//! Request-by-request agreement with DiskSim 4.0's own answers (`data/disksim-oracle`).
//!
//! A demerit compares two distributions; this compares two *sequences*: the same requests
//! on the same drive file, headway's response time beside DiskSim's for each, in trace
//! order. Two sources of DiskSim answers:
//! - **Open-loop synthetic traces** (`TRACE.trace` in DiskSim's ascii format, DiskSim's
//!   replay in `NAME.TRACE.disksim`: `arrival_ms response_ms blkno bcount read` a line).
//!   headway replays the trace as DiskSim did: FCFS with no merging (`noop`, commands of at
//!   most 4 KiB so nothing merges), recorded times kept. [`open_loop`].
//! - **Validation traces** (`NAME.valid.disksim`: `R|W blkno bcount measured_ms
//!   disksim_ms` a line, one per line of `NAME.trace`): headway's closed-loop validation
//!   replay ([`crate::replay()`]) beside DiskSim's simulated service times. [`validation`].
//!
//! [`Agreement`] sums a pair of sequences up: both means and the share of requests whose
//! two times are within 0.1 ms of each other.

use std::path::Path;

use headway_sched::Duration;
use headway_sim::trace::{feed::FeedOptions, Format, ReplayConfig, TraceError};
use headway_sim::RunSpec;

use crate::error::ValidateError;

/// How far apart two answers may be and still agree.
pub const TOLERANCE_MS: f64 = 0.1;

/// How closely headway's per-request response times follow DiskSim's.
#[derive(Clone, Debug, PartialEq)]
pub struct Agreement {
    pub requests: usize,
    pub disksim_mean_ms: f64,
    pub headway_mean_ms: f64,
    /// Share of requests (0..1) whose two times differ by at most [`TOLERANCE_MS`].
    pub within: f64,
}

impl Agreement {
    /// Compare two sequences of the same requests (ms each, same order).
    ///
    /// # Panics
    /// If they differ in length or are empty.
    pub fn of(disksim_ms: &[f64], headway_ms: &[f64]) -> Agreement {
        assert!(
            disksim_ms.len() == headway_ms.len() && !disksim_ms.is_empty(),
            "{} DiskSim answers against {} of headway's",
            disksim_ms.len(),
            headway_ms.len()
        );
        let n = disksim_ms.len();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / n as f64;
        let close =
            disksim_ms.iter().zip(headway_ms).filter(|(a, b)| (*a - *b).abs() <= TOLERANCE_MS + 1e-9).count();
        Agreement {
            requests: n,
            disksim_mean_ms: mean(disksim_ms),
            headway_mean_ms: mean(headway_ms),
            within: close as f64 / n as f64,
        }
    }

    /// headway's mean relative to DiskSim's (`0.02` = 2% longer).
    pub fn mean_error(&self) -> f64 {
        self.headway_mean_ms / self.disksim_mean_ms - 1.0
    }
}

fn read(path: &Path) -> Result<String, ValidateError> {
    std::fs::read_to_string(path)
        .map_err(|e| TraceError::Io { file: path.display().to_string(), why: e.to_string() }.into())
}

/// Columns `cols` (from 0) of every line of a DiskSim answer file, as ms.
pub(crate) fn columns<const N: usize>(path: &Path, cols: [usize; N]) -> Result<[Vec<f64>; N], ValidateError> {
    let text = read(path)?;
    let mut out: [Vec<f64>; N] = std::array::from_fn(|_| Vec::new());
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad =
            |why: String| TraceError::Malformed { file: path.display().to_string(), line: i as u64 + 1, why };
        let fields: Vec<&str> = line.split_whitespace().collect();
        for (col, v) in cols.iter().zip(out.iter_mut()) {
            let field = fields.get(*col).ok_or_else(|| bad(format!("no column {}", col + 1)))?;
            v.push(field.parse::<f64>().map_err(|_| bad(format!("bad time `{field}`")))?);
        }
    }
    Ok(out)
}

/// Replay DiskSim's open-loop `trace` on `disk` as DiskSim did and compare with its
/// answers (`NAME.TRACE.disksim`), request by request in trace order.
pub fn open_loop(disk: &str, trace: &Path, answers: &Path) -> Result<Agreement, ValidateError> {
    let [disksim] = columns(answers, [1])?;
    let mut settings = headway_sched::Settings::new();
    settings.set("max_sectors_kb", "4");
    let cfg = ReplayConfig {
        path: trace.to_path_buf(),
        format: Format::Disksim,
        run: RunSpec { settings, ..RunSpec::new(headway_disk::resolve(disk)?).with_schedulers(&["noop"]) },
        mode: None,
        routing: None,
        options: FeedOptions { absolute_times: true, ..FeedOptions::default() },
    };
    // (submitted, offset, response) per request; DiskSim's file is in trace order, which for
    // an open loop is arrival order (ties by address, as the trace generator never repeats one)
    let mut done: Vec<(u64, u64, Duration)> = Vec::with_capacity(disksim.len());
    headway_sim::trace::replay_logged(
        &cfg,
        |_, _| {},
        |_, r| done.push((r.submit_ns, r.offset, Duration(r.complete_ns - r.submit_ns))),
    )
    .map_err(|e| ValidateError::Replay { trace: trace.display().to_string(), why: e.to_string() })?;
    done.sort_unstable_by_key(|&(t, off, _)| (t, off));
    if done.len() != disksim.len() {
        return Err(ValidateError::Replay {
            trace: trace.display().to_string(),
            why: format!(
                "headway completed {} requests, {} has {}",
                done.len(),
                answers.display(),
                disksim.len()
            ),
        });
    }
    let headway: Vec<f64> = done.iter().map(|&(_, _, d)| d.0 as f64 / 1e6).collect();
    Ok(Agreement::of(&disksim, &headway))
}

/// headway's closed-loop validation replay of `trace` on `disk` beside DiskSim's simulated
/// service times for it (`NAME.valid.disksim`, fifth column).
pub fn validation(disk: &str, trace: &Path, answers: &Path) -> Result<Agreement, ValidateError> {
    let [disksim] = columns(answers, [4])?;
    let name = trace.display().to_string();
    let requests = crate::parse_trace(&read(trace)?, &name)?;
    let rep = crate::replay(&headway_disk::resolve(disk)?, &requests)?;
    if rep.service.len() != disksim.len() {
        return Err(ValidateError::Replay {
            trace: name,
            why: format!("{} requests, {} has {}", rep.service.len(), answers.display(), disksim.len()),
        });
    }
    let headway: Vec<f64> = rep.service.iter().map(|d| d.0 as f64 / 1e6).collect();
    Ok(Agreement::of(&disksim, &headway))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_counts_requests_within_the_tolerance() {
        let a = Agreement::of(&[1.0, 2.0, 3.0, 4.0], &[1.05, 2.1, 3.5, 2.0]);
        assert_eq!(a.requests, 4);
        assert_eq!(a.within, 0.5);
        assert!((a.disksim_mean_ms - 2.5).abs() < 1e-12 && (a.headway_mean_ms - 2.1625).abs() < 1e-12);
        assert!((a.mean_error() + 0.135).abs() < 1e-12);
    }

    #[test]
    #[should_panic(expected = "3 DiskSim answers against 2")]
    fn agreement_refuses_sequences_of_different_lengths() {
        Agreement::of(&[1.0, 2.0, 3.0], &[1.0, 2.0]);
    }
}

//! # headway-validate — scoring drive models against DiskSim's measured traces
//!
//! Replays one of DiskSim's measured validation traces against a drive and scores the
//! simulated service times the way DiskSim does. `headway validate PARV TRACE` (crates/cli)
//! prints and plots what this crate computes; Python's `headway.validate` returns the same
//! JSON and CSV.
//!
//! ## The replay (as DiskSim 4.0's `validate` trace format drives it)
//! Trace lines: `R|W Hit|Miss blkno bcount service_us next_interarrival_us` (blkno and
//! bcount in 512-byte sectors). DiskSim reads request `i+1` when request `i` completes and
//! lets it arrive `next_interarrival(i)` later: the trace is a *closed* loop, one request
//! outstanding, measured service time = completion - arrival. The first request arrives at
//! time 0 on an idle drive. The Hit/Miss column is only compared with what the model did
//! (a diagnostic); it never steers the simulation. See [`trace`] and [`replay()`].
//!
//! ## The score
//! The Ruemmler-Wilkes demerit figure: the RMS horizontal distance, in ms, between the CDFs
//! of simulated and measured service times, sampled at 10,000 evenly spaced quantiles
//! (`(k + 0.5) / 10,000`), each quantile the exact per-request value at that rank of the
//! sorted samples (DiskSim bins its distributions first; headway does not): [`demerit()`].
//! The report (and the JSON, `demerit_binned_ms`) also gives the figure through DiskSim's
//! own binned estimator ([`demerit_binned`]), the like-for-like comparison with DiskSim's
//! published numbers.
//!
//! ## The report
//! [`Score::table`]: demerit and mean simulated/measured service time over all requests,
//! reads, writes and each class of the trace's (direction, Hit/Miss column) pairs (where
//! the error comes from); the reads again by the previous request's direction and by
//! whether they start on the cylinder where the previous request ended (`R after W, same
//! cyl`, ...: the trace's own positions, whatever the model's read-ahead did to the arm);
//! the agreement of the model's cache hits with the column. [`Score::to_json`] and
//! [`Score::per_request_csv`] are what `--json` and `--per-request` write.
//!
//! ## The must-shows
//! Per drive of `data/disksim-valid`, headway's demerit at most DiskSim 4.0's, like for
//! like: DiskSim's own per-request answers (`data/disksim-oracle/NAME.valid.disksim`)
//! scored with the same estimator (`disksim_goals`). Request by request against DiskSim's
//! answers on its synthetic traces: [`oracle`], with the figures held in `oracle_goals`
//! (`make disksim-goals` runs just these).

pub mod demerit;
pub mod demerit_binned;
mod error;
pub mod oracle;
pub mod replay;
pub mod score;
pub mod suite;
pub mod trace;

#[cfg(test)]
mod disksim_goals;
#[cfg(test)]
mod oracle_goals;

pub use demerit::{demerit, QUANTILES};
pub use error::ValidateError;
pub use oracle::Agreement;
pub use replay::{replay, Replay};
pub use score::{score, score_spec, Score};
pub use suite::suite;
pub use trace::{parse_trace, TraceRequest};

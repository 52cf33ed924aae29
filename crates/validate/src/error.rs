//! Why a drive cannot be scored: each variant's text is what `headway validate` prints
//! (with its causes below it).

use std::path::PathBuf;

use headway_disk::{ResolveError, SpecError};
use headway_sim::trace::TraceError;

/// A validation that cannot be done.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ValidateError {
    /// The drive name names no drive, or its parameter file does not import.
    #[error(transparent)]
    Disk(#[from] ResolveError),
    /// The trace cannot be read or parsed (names file and line).
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The drive's parameters are inconsistent.
    #[error("{drive}: {err}")]
    Drive { drive: String, err: SpecError },
    /// A trace request past the drive's last sector (`request` counts from 1).
    #[error("request {request} ({sector}+{sectors}) beyond the drive's {capacity} sectors")]
    Beyond { request: usize, sector: u64, sectors: u32, capacity: u64 },
    /// A replay of DiskSim's trace that failed or disagrees with DiskSim's answer file in
    /// the number of requests.
    #[error("replaying {trace}: {why}")]
    Replay { trace: String, why: String },
    /// A suite directory that cannot be listed.
    #[error("reading {}", dir.display())]
    ReadDir {
        dir: PathBuf,
        #[source]
        err: std::io::Error,
    },
    /// A suite directory without a single `NAME.parv` + `NAME.trace` pair.
    #[error("{}: no NAME.parv with a NAME.trace beside it", dir.display())]
    EmptySuite { dir: PathBuf },
}

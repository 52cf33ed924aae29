//! Why a job file was refused. Every variant but [`JobFileError::Io`] and
//! [`JobFileError::NoJobs`] names the file and line ([`Origin`]); option errors also name
//! the option as it was written.

use super::spec::Origin;

/// A job file that cannot be run. Parsing stops at the first error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JobFileError {
    /// The file could not be read. The OS reason is the error's `source()`; print the chain
    /// (`{:#}` with anyhow) to get `missing.fio: cannot read: No such file or directory`.
    #[error("{path}: cannot read")]
    Io { path: String, source: std::io::Error },
    /// A line that is neither a `[section]`, a `key=value`, a bare key nor a comment; an
    /// option before the first section; an `include`.
    #[error("{at}: {message}")]
    Syntax { at: Origin, message: String },
    /// An option headway does not implement (and does not accept as harmless). Never ignored:
    /// ignoring it would simulate a different workload than the file describes.
    #[error("{at}: unknown option `{option}` (headway does not implement it)")]
    UnknownOption { at: Origin, option: String },
    /// A known option with a bad value, or one that conflicts with the rest of its job. `at`
    /// is where the option was set (possibly in a `[global]` section).
    #[error("{at}: option `{option}`: {message}")]
    Value { at: Origin, option: String, message: String },
    /// Only `[global]` sections (or nothing at all).
    #[error("{path}: no job sections (a job is a `[name]` section other than `[global]`)")]
    NoJobs { path: String },
}

impl JobFileError {
    /// Where the error is, when it is at a line.
    pub fn origin(&self) -> Option<&Origin> {
        match self {
            JobFileError::Syntax { at, .. }
            | JobFileError::UnknownOption { at, .. }
            | JobFileError::Value { at, .. } => Some(at),
            JobFileError::Io { .. } | JobFileError::NoJobs { .. } => None,
        }
    }
}

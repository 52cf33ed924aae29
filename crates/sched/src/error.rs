//! Why a scheduler could not be built.

use crate::params::ParamError;

/// Why a scheduler could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    #[error("unknown scheduler `{name}` (known: {known})")]
    UnknownScheduler { name: String, known: String },
    #[error("unknown policy `{policy}` in `{name}` (known policies: {known})")]
    UnknownPolicy { name: String, policy: String, known: String },
    #[error(transparent)]
    Param(#[from] ParamError),
    /// An array shape no array has (no members, no data members, more data members than
    /// members).
    #[error("bad array shape: {members} member(s), {data_members} holding data (an array has at least one of each, and no more data members than members)")]
    BadArrayShape { members: u32, data_members: u32 },
}

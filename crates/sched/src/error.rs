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
}

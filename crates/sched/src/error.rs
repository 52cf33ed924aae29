//! Why a scheduler could not be built, and why a name of a mode or option was not one.

use crate::params::ParamError;

/// A word that names none of a mode's or option's values (a drive scheduler, a write-cache
/// policy, a trace format, ...): the one error text of every `FromStr` of such an enum,
/// whoever asked — the command line prefixes the flag, Python the keyword, a file its
/// place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a {what}: expected {expected}")]
pub struct BadChoice {
    pub what: &'static str,
    pub value: String,
    pub expected: &'static str,
}

impl BadChoice {
    pub fn new(what: &'static str, value: &str, expected: &'static str) -> Self {
        BadChoice { what, value: value.to_string(), expected }
    }
}

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

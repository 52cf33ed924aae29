//! Non-work-conserving frameworks: wrap any [`crate::Policy`] and may decide to keep the
//! device idle for a request that has not arrived yet.

pub mod antic;
pub mod array_stream;
pub mod htbs;
pub mod stream;

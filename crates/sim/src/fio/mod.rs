//! fio job files: the workload format fio users already write.

pub mod spec;

pub use spec::*;

//! The simulator's integration tests, one test binary (one link) with a module per area.
//! Run one area with its module path as the filter, e.g.
//! `cargo test -p headway-sim --test sim paper::`.
//!
//! `tests/replay_memory.rs` stays a binary of its own: it measures the process's peak
//! resident memory (VmHWM), which the tests here, run in the same process, would raise.

mod common;

mod array;
mod fio_options;
mod head_trace;
mod host_cpu;
mod iopath;
mod paper;
mod peers;
mod postmark;
mod process_info;
mod qos;
mod replay;
mod reproduce;
mod think;

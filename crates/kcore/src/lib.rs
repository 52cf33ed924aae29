//! # headway-kcore — the kernel elevator's algorithm, held to headway's model
//!
//! The `stream` blk-mq elevator (`kernel/`) keeps its algorithm in `kernel/stream_core.c`,
//! plain C without kernel headers: stream scheduling (000 Section 2.1, Figure 2) around a
//! deadline policy, integer arithmetic, time passed in. This crate builds that file for
//! userspace ([`CCore`]) and drives it and headway's Rust `stream:deadline`
//! ([`headway_sched::framework::stream::Stream`]) through the same event sequences —
//! arrivals, completions, timer expiries — requiring the same decision at every step
//! ([`differ`]): which request is dispatched (id and extent), until when the device is
//! kept idle, or that there is nothing to do; and which request an arrival merged into.
//!
//! Both sides price moves with the same [`Table`]: knots of (distance, ns), linear
//! interpolation in integers, backward moves 50% dearer — the format the kernel module's
//! `estimator_table` attribute reads.

pub mod differ;
pub mod ffi;
pub mod table;
pub mod workload;

pub use differ::{run, Config, Divergence, Event, Outcome};
pub use ffi::CCore;
pub use table::Table;

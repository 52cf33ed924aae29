//! Workload sources: what submits requests to the simulated machine and reacts to their
//! completions. fio jobs ([`super::jobs::FioJobs`]: PostMark is a job's walk) and trace
//! feeds ([`super::trace_source::TraceSource`]) are the two today; a new one (the lab's
//! recorded workloads, DiskSim's synthetic generator) implements this trait and nothing in
//! the layers below changes.
//!
//! A source talks to the [`Machine`] it is given: it makes a job (the unit the report
//! accounts by) for whatever issues requests, submits requests for it
//! ([`Machine::new_request`], then the page cache or the block layer), schedules its own
//! events ([`Ev::Source`](super::core::Ev::Source) with a key of its choosing), and asks the
//! drives to flush their write caches (with a token of its choosing). The machine calls it
//! back when one of its requests completes, when a flush it asked for completed on a drive,
//! when a writeback of one of its jobs completed, and after every event.

use super::machine::{Machine, Reaped};
use crate::trace::{FeedStats, TraceError};

pub(crate) trait Source {
    /// Submit what is due at the start of the run.
    fn start(&mut self, m: &mut Machine);

    /// Its event with `key` is due.
    fn wake(&mut self, m: &mut Machine, key: u32);

    /// A request of one of its jobs is done on the machine (the page cache copied it, or the
    /// drive that carried it completed). The source counts it ([`Machine::count`]) when it
    /// completes for the job — now, or later (a `sync=1` write: once durable).
    fn completed(&mut self, m: &mut Machine, r: Reaped);

    /// One drive finished the cache flush it asked for with `token`.
    fn flushed(&mut self, m: &mut Machine, token: u64);

    /// A writeback request of job `j` completed.
    fn written_back(&mut self, _m: &mut Machine, _j: usize) {}

    /// Whether it wants [`Source::after_event`] (asked once, at the start).
    fn watches_events(&self) -> bool {
        false
    }

    /// After every event, when it [`watches_events`](Source::watches_events).
    fn after_event(&mut self, _m: &mut Machine) {}

    /// An error that ends the run (a bad trace record), once.
    fn take_error(&mut self) -> Option<TraceError> {
        None
    }

    /// The run must stop (an error is waiting).
    fn failed(&self) -> bool {
        false
    }

    /// What is unfinished when no event is left (a stall, if not 0).
    fn unfinished(&self, m: &Machine) -> usize;

    /// How far through its work the run is, when the source knows.
    fn fraction(&self) -> Option<f64> {
        None
    }

    /// What was read from a trace.
    fn feed_stats(&self) -> FeedStats {
        FeedStats::default()
    }
}

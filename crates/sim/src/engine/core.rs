//! The engine's core: the simulated clock, the event heap and the request-id counter —
//! what every layer shares and nothing else.
//!
//! Events are ordered by `(time, insertion sequence)`: equal times break ties in the order
//! the events were created, so a run is a pure function of its inputs and seed. Request ids
//! count up from 1 in the order requests are made (a job's, a page-cache fill, a writeback,
//! an array's member request): schedulers may break ties on them, so the order in which
//! the layers ask for ids is part of a run's result.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use headway_sched::{ReqId, Time};

/// What an event is for. The heap never compares these (the insertion sequence is unique),
/// so the variants' order means nothing.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Ev {
    /// The workload source's own event, with its key (a fio job may submit; a trace's
    /// next record is due, or a context issues its next request in closed mode).
    Source(u32),
    /// A buffered read found its data in the page cache, or a buffered write was copied
    /// into it: it completes (logical request id).
    Hit(u64),
    /// The writeback flusher's periodic check (Linux `dirty_writeback_centisecs`).
    Flush,
    /// Member drive's next event (a command finishing, a destage ending): member,
    /// generation.
    Drive(u32, u64),
    /// A member scheduler's `WaitUntil` time may have come (see `Block::arm_timer`).
    Timer(u32),
    /// The caching controller asked to be woken ([`super::ctlr`]).
    Ctlr,
    /// A member on a shared bus has it, or is to let it go or ask for it ([`super::bus`]).
    Bus(u32),
}

/// The clock, the pending events and the next request id.
pub(crate) struct Core {
    /// Simulated time: the time of the event being handled.
    pub now: Time,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    next_id: u64,
}

impl Core {
    pub fn new() -> Self {
        Core { now: Time::ZERO, heap: BinaryHeap::with_capacity(64), seq: 0, next_id: 1 }
    }

    /// Schedule `ev` at `t` (after every event already scheduled at `t`).
    #[inline]
    pub fn push(&mut self, t: Time, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t.0, self.seq, ev)));
    }

    /// The earliest event, removed; the clock is not moved (the caller does, see `advance`).
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Ev)> {
        self.heap.pop().map(|Reverse((t, _, ev))| (Time(t), ev))
    }

    /// A fresh request id.
    #[inline]
    pub fn new_id(&mut self) -> ReqId {
        let id = ReqId(self.next_id);
        self.next_id += 1;
        id
    }

    /// `n` consecutive fresh ids: the first.
    #[inline]
    pub fn new_ids(&mut self, n: u64) -> u64 {
        let first = self.next_id;
        self.next_id += n;
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_by_time_then_by_insertion() {
        let mut c = Core::new();
        c.push(Time(5), Ev::Flush);
        c.push(Time(3), Ev::Source(1));
        c.push(Time(5), Ev::Source(0));
        c.push(Time(3), Ev::Hit(7));
        let order: Vec<(Time, Ev)> = std::iter::from_fn(|| c.pop()).collect();
        assert_eq!(
            order,
            [(Time(3), Ev::Source(1)), (Time(3), Ev::Hit(7)), (Time(5), Ev::Flush), (Time(5), Ev::Source(0))]
        );
    }

    #[test]
    fn ids_count_up_from_one_without_gaps() {
        let mut c = Core::new();
        assert_eq!(c.new_id(), ReqId(1));
        assert_eq!(c.new_ids(3), 2);
        assert_eq!(c.new_id(), ReqId(5));
    }
}

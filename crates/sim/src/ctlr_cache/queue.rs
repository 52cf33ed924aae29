//! The controller's queues (DiskSim 4.0's `disksim_ioqueue.c`, restated for the two
//! policies headway runs there): the order in which waiting requests leave, and the
//! joining of neighbours.
//!
//! * **FCFS** (`Scheduling policy` 1): in the order they came.
//! * **`CYCLE_LBN`** (3): the queue is kept in order of start sector (an equal start goes
//!   after the ones there); the next to leave is the first whose start is at or above the
//!   start of the one that left last, else the first of all (the sweep starts over). Only
//!   a departure moves that mark (it starts at 0).
//! * **Joining** (`Sequential stream scheme` 1 reads, 2 writes, 3 both): a request joining
//!   the queue is joined with its neighbour before it, then with the one after, when they
//!   go the same way, one ends exactly where the other starts, and together they are at
//!   most `Maximum concat size` sectors. Joined requests leave as one; when it completes,
//!   each completes, in order of start.

use headway_disk::ctlr::{DiskQueue, QueueOrder};
use headway_sched::Dir;

/// A waiting request: the token of its first part, its extent, and the parts (tokens, in
/// order of start).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Waiting {
    pub token: u64,
    pub s: u64,
    pub n: u32,
    pub dir: Dir,
    pub parts: Vec<u64>,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Queue {
    rule: DiskQueue,
    items: Vec<Waiting>,
    /// The start of the request that left last.
    last: u64,
}

impl Queue {
    pub fn new(rule: DiskQueue) -> Queue {
        Queue { rule, items: Vec::new(), last: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn push(&mut self, token: u64, s: u64, n: u32, dir: Dir) {
        let at = match self.rule.order {
            QueueOrder::Fcfs => self.items.len(),
            QueueOrder::CycleLbn => self.items.partition_point(|w| w.s <= s),
        };
        self.items.insert(at, Waiting { token, s, n, dir, parts: vec![token] });
        let join = match dir {
            Dir::Read => self.rule.join_reads,
            Dir::Write => self.rule.join_writes,
        };
        if !join {
            return;
        }
        let mut at = at;
        if at > 0 && self.fits(at - 1) {
            self.join(at - 1);
            at -= 1;
        }
        if at + 1 < self.items.len() && self.fits(at) {
            self.join(at);
        }
    }

    /// Whether the waiting request at `i` and the next one can be joined.
    fn fits(&self, i: usize) -> bool {
        let (a, b) = (&self.items[i], &self.items[i + 1]);
        a.dir == b.dir && a.s + a.n as u64 == b.s && a.n as u64 + b.n as u64 <= self.rule.max_join as u64
    }

    /// Join the request after `i` into the one at `i`.
    fn join(&mut self, i: usize) {
        let b = self.items.remove(i + 1);
        let a = &mut self.items[i];
        a.n += b.n;
        a.parts.extend(b.parts);
    }

    /// The next request to leave.
    pub fn pop(&mut self) -> Option<Waiting> {
        if self.items.is_empty() {
            return None;
        }
        let i = match self.rule.order {
            QueueOrder::Fcfs => 0,
            QueueOrder::CycleLbn => self.items.iter().position(|w| w.s >= self.last).unwrap_or(0),
        };
        let w = self.items.remove(i);
        self.last = w.s;
        Some(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(order: QueueOrder, join: bool) -> Queue {
        Queue::new(DiskQueue { order, join_reads: join, join_writes: false, max_join: 16 })
    }

    fn starts(q: &mut Queue) -> Vec<u64> {
        std::iter::from_fn(|| q.pop()).map(|w| w.s).collect()
    }

    #[test]
    fn cycle_lbn_sweeps_up_from_the_last_start_and_starts_over() {
        let mut q = queue(QueueOrder::CycleLbn, false);
        for (t, s) in [(0, 50), (1, 10), (2, 70), (3, 30)] {
            q.push(t, s, 8, Dir::Read);
        }
        // from 0: 10, 30, 50, 70
        assert_eq!(q.pop().unwrap().s, 10);
        // a request below the mark waits for the next sweep; one above joins this one
        q.push(4, 5, 8, Dir::Read);
        q.push(5, 40, 8, Dir::Read);
        assert_eq!(starts(&mut q), [30, 40, 50, 70, 5]);
        // equal starts leave in the order they came
        let mut q = queue(QueueOrder::CycleLbn, false);
        q.push(7, 20, 8, Dir::Read);
        q.push(8, 20, 8, Dir::Write);
        assert_eq!(q.pop().unwrap().token, 7);
        let mut q = queue(QueueOrder::Fcfs, false);
        for (t, s) in [(0, 50), (1, 10), (2, 70)] {
            q.push(t, s, 8, Dir::Read);
        }
        assert_eq!(starts(&mut q), [50, 10, 70]);
    }

    #[test]
    fn neighbours_join_up_to_the_limit_and_only_the_same_way() {
        let mut q = queue(QueueOrder::CycleLbn, true);
        q.push(0, 0, 8, Dir::Read);
        q.push(1, 16, 8, Dir::Read);
        // 8..16 joins the one before and then the one after: 0..24, but 24 > 16 sectors,
        // so only with the one before
        q.push(2, 8, 8, Dir::Read);
        let w = q.pop().unwrap();
        assert_eq!((w.token, w.s, w.n, w.parts.clone()), (0, 0, 16, vec![0, 2]));
        assert_eq!(q.pop().unwrap().parts, [1]);
        // writes are not joined here, nor a read with a write, nor across a gap
        q.push(3, 0, 8, Dir::Write);
        q.push(4, 8, 8, Dir::Write);
        q.push(5, 24, 4, Dir::Read);
        q.push(6, 30, 4, Dir::Read);
        assert_eq!(std::iter::from_fn(|| q.pop()).map(|w| w.parts.len()).collect::<Vec<_>>(), [1, 1, 1, 1]);
        // one arrival can join both neighbours
        let mut q = Queue::new(DiskQueue {
            order: QueueOrder::CycleLbn,
            join_reads: true,
            join_writes: true,
            max_join: 128,
        });
        q.push(0, 0, 8, Dir::Write);
        q.push(1, 16, 8, Dir::Write);
        q.push(2, 8, 8, Dir::Write);
        let w = q.pop().unwrap();
        assert_eq!((w.s, w.n, w.parts.clone()), (0, 24, vec![0, 2, 1]));
    }
}

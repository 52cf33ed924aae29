//! BFQ's large-burst detection and its preemption rule (docs/bfq-rules.md §8.2, §9;
//! Linux's `bfq_handle_burst`, `bfq_bfqq_handle_idle_busy_switch`), for the `bfq`
//! scheduler to use.
//!
//! * **Bursts**: many queues created close together (a `make -j`, a service starting) are
//!   throughput workloads, not interactive ones. A new queue is considered when a burst is
//!   running or no queue is busy. More than 180 ms after the last one considered, a new
//!   burst starts with this queue (or with none when some queue is busy). In a *large*
//!   burst every new queue is marked; otherwise the queue is listed, and the eighth marks
//!   every listed queue and itself and turns large. Marked queues are never weight-raised.
//!   A marked queue that comes back after more than 10 s idle leaves the burst.
//! * **Preemption**: a queue becoming busy ends the in-service queue's turn when it
//!   recovers a hole and is raised at least as much, when its class is higher or its
//!   weight larger, or when the in-service queue would not be idled for anyway.

use std::collections::BTreeSet;
use std::hash::Hash;

use crate::time::{Duration, Time};

/// Queues created this close together belong to one burst.
pub const BURST_INTERVAL: Duration = Duration::from_millis(180);
/// A burst this large is a large burst.
pub const LARGE_BURST: usize = 8;
/// A marked queue idle this long leaves its burst.
pub const BURST_LEAVE_IDLE: Duration = Duration::from_secs(10);

/// The burst being watched.
pub struct Bursts<K> {
    listed: BTreeSet<K>,
    size: usize,
    large: bool,
    marked: BTreeSet<K>,
    last: Option<Time>,
}

impl<K: Copy + Ord + Hash> Default for Bursts<K> {
    fn default() -> Self {
        Bursts { listed: BTreeSet::new(), size: 0, large: false, marked: BTreeSet::new(), last: None }
    }
}

impl<K: Copy + Ord + Hash> Bursts<K> {
    pub fn in_large_burst(&self, k: K) -> bool {
        self.marked.contains(&k)
    }

    /// Queue `k` was just created; `any_busy`: some queue is busy.
    pub fn created(&mut self, now: Time, k: K, any_busy: bool) {
        // considered while a burst runs or nothing is busy, and once
        let watching = self.size > 0 || !any_busy;
        if !watching || self.listed.contains(&k) || self.marked.contains(&k) {
            return;
        }
        let ended = self.last.is_none_or(|t| now.0 > t.0 + BURST_INTERVAL.0);
        if ended {
            self.listed.clear();
            self.large = false;
            if any_busy {
                self.size = 0;
            } else {
                self.listed.insert(k);
                self.size = 1;
            }
        } else if self.large {
            self.marked.insert(k);
        } else {
            self.size += 1;
            if self.size == LARGE_BURST {
                self.marked.extend(std::mem::take(&mut self.listed));
                self.marked.insert(k);
                self.large = true;
            } else {
                self.listed.insert(k);
            }
        }
        self.last = Some(now);
    }

    /// Queue `k` becomes busy after being idle for `idle`.
    pub fn busy_again(&mut self, k: K, idle: Duration) {
        if idle > BURST_LEAVE_IDLE {
            self.marked.remove(&k);
        }
    }

    /// Queue `k` is gone.
    pub fn freed(&mut self, k: K) {
        if self.listed.remove(&k) {
            self.size = self.size.saturating_sub(1);
        }
        self.marked.remove(&k);
    }
}

/// What the preemption rule compares.
#[derive(Copy, Clone, Debug)]
pub struct Contender {
    /// Class index (0 real time, 1 best effort, 2 idle).
    pub class: usize,
    pub weight: u32,
    pub wr_coeff: u32,
}

/// Does `new`, becoming busy, preempt `in_service`? `wants` is `new`'s hole recovery;
/// `in_service_idles` whether BFQ would idle for the in-service queue.
pub fn preempts(new: Contender, wants: bool, in_service: Contender, in_service_idles: bool) -> bool {
    (wants && new.wr_coeff >= in_service.wr_coeff)
        || new.class < in_service.class
        || new.weight > in_service.weight
        || !in_service_idles
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    #[test]
    fn the_eighth_queue_in_180_ms_marks_the_burst_and_later_ones_join() {
        let mut b = Bursts::default();
        for i in 0..7u32 {
            b.created(ms(10 * i as u64), i, false);
        }
        assert!((0..7).all(|i| !b.in_large_burst(i)));
        b.created(ms(70), 7, true);
        assert!((0..8).all(|i| b.in_large_burst(i)), "all eight marked");
        b.created(ms(200), 8, true);
        assert!(b.in_large_burst(8), "within 180 ms of the last: joins");
        // a queue 300 ms later starts a new burst (none, as queues are busy)
        b.created(ms(500), 9, true);
        assert!(!b.in_large_burst(9));
        // a marked queue idle for more than 10 s leaves
        b.busy_again(3, Duration::from_secs(11));
        assert!(!b.in_large_burst(3));
        b.busy_again(4, Duration::from_secs(5));
        assert!(b.in_large_burst(4));
    }

    #[test]
    fn spread_out_queues_are_no_burst() {
        let mut b = Bursts::default();
        for i in 0..20u32 {
            b.created(ms(200 * i as u64), i, false);
        }
        assert!((0..20).all(|i| !b.in_large_burst(i)));
    }

    #[test]
    fn preemption_by_class_weight_hole_or_when_no_idling() {
        let be = Contender { class: 1, weight: 40, wr_coeff: 1 };
        let rt = Contender { class: 0, ..be };
        assert!(preempts(rt, false, be, true));
        assert!(!preempts(be, false, rt, true));
        assert!(preempts(Contender { weight: 80, ..be }, false, be, true));
        assert!(!preempts(be, false, be, true), "equal, and the in-service queue is idled for");
        assert!(preempts(be, false, be, false), "nothing to wait for: any newcomer preempts");
        assert!(preempts(be, true, be, true), "hole recovery with the same raising");
        assert!(!preempts(be, true, Contender { wr_coeff: 30, ..be }, true), "but not over a raised queue");
    }
}

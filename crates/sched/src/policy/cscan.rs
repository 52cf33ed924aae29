//! `cscan`: circular SCAN (C-LOOK) — the head sweeps upward only.
//!
//! 001 Section 3.3 ("Variant: CSCAN"): "it moves the head in one direction, servicing all
//! requests in its path, and then starts over at the first available request". Dispatch
//! the first queued request starting at or after the head position the device view reports
//! ([`DeviceView::head`]), in ascending sector order (lowest id among requests at the same
//! sector); when none is left ahead, wrap to the lowest-sectored request. Reads and writes
//! share the sweep. No deadlines: a request behind the head waits for the next pass, and a
//! steady stream of requests just ahead of the head can hold a pass open indefinitely.
//!
//! Merging: back merges only (a new request appended to a queued one of its direction that
//! ends where it starts, within the driver's size bound).
//!
//! Invariant: the `SortedQueue` holds every queued request once. No batch state: the
//! position comes from the device view, so `select` and `take` never disagree. `select`,
//! `take`, `add` and `merge` are O(log n). No tunables.

use super::{Policy, SortedQueue};
use crate::device::DeviceView;
use crate::request::{ReqId, Request};
use crate::time::Time;

#[derive(Default)]
pub struct Cscan {
    q: SortedQueue,
}

impl Cscan {
    pub fn new() -> Self {
        Self::default()
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        self.q.check();
    }
}

impl Policy for Cscan {
    super::sorted_queue_policy!("cscan");

    fn select(&mut self, _now: Time, dev: &dyn DeviceView) -> Option<ReqId> {
        self.q.first_from(dev.head()).or_else(|| self.q.first())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::request::Dir;
    use crate::testutil::{ops, rq, Driver, FixedView, Op};

    #[test]
    fn sweeps_up_from_the_head_then_wraps_to_the_lowest() {
        let mut p = Cscan::new();
        for (id, s) in [(1, 100), (2, 400), (3, 250), (4, 300), (5, 200), (6, 250)] {
            p.add(Time(0), rq(id, s, 8));
        }
        let mut dev = FixedView::linear(250);
        let mut order = vec![];
        while let Some(id) = p.select(Time(0), &dev) {
            let r = p.take(Time(0), id);
            dev.head = r.end();
            order.push(r.id.0);
            if r.id.0 == 2 {
                // arrives behind the head mid-pass: waits for the wrap
                p.add(Time(0), rq(7, 150, 8));
            }
        }
        // at the head counts as ahead, lowest id first; #6, also at 250, is behind the head
        // once #3 has moved it and waits for the wrap like #7
        assert_eq!(order, vec![3, 4, 2, 1, 7, 5, 6]);
    }

    #[test]
    fn back_merges_only() {
        let mut p = Cscan::new();
        p.add(Time(0), rq(1, 100, 8));
        assert_eq!(p.merge(Time(0), &rq(2, 92, 8), 1024), None, "no front merges");
        let w = Request { dir: Dir::Write, ..rq(3, 108, 8) };
        assert_eq!(p.merge(Time(0), &w, 1024), None, "directions do not mix");
        assert_eq!(p.merge(Time(0), &rq(4, 108, 8), 1024), Some(ReqId(1)));
        assert_eq!(p.merge(Time(0), &rq(5, 116, 8), 16), None, "size bound");
        assert_eq!(p.get(ReqId(1)).unwrap().len, 16);
        p.check();
    }

    proptest! {
        #[test]
        fn takes_each_request_once_in_circular_sector_order(
            ops in ops(300, 2048, true, 100, 100),
            salt in any::<u64>(),
        ) {
            let mut d = Driver::new(Cscan::new(), salt, Cscan::check);
            for op in &ops {
                if let Op::Dispatch = op {
                    let head = d.dev.head;
                    let key = |r: &Request| (r.sector < head, r.sector, r.id);
                    let want = d.queued.values().min_by_key(|r| key(r)).map(|r| r.id);
                    prop_assert_eq!(d.dispatch().map(|r| r.id), want);
                } else {
                    d.step(op);
                }
            }
            d.drain();
        }
    }
}

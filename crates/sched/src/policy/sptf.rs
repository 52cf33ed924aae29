//! `sptf`: shortest positioning time first.
//!
//! 001 Section 3.3: SPTF "calculates the positioning time for each available request from
//! the current head position, and chooses the one with the minimum". The positioning time
//! is the device view's estimate `dev.estimate(dev.head(), rq.sector)`; ties go to the
//! lowest id. Reads and writes are treated alike. SPTF maximises throughput greedily and can
//! starve a distant request indefinitely (`aged-sptf` bounds that).
//!
//! Search in O(log n) instead of estimating every request: the estimate is a non-decreasing
//! function of the distance in each direction (a monotone service curve of |distance|, times
//! a backward penalty — see [`crate::estimate`]), so the cheapest forward candidate is the
//! first request at or after the head and the cheapest backward one the last request before
//! it. `select` estimates those two and keeps the cheaper (lower id on a tie). Where the
//! curve is flat (beyond its last knot), farther requests in one direction can cost the same
//! as the nearest; the nearest is then chosen, not the lowest id. This relies on the
//! [`DeviceView`] being monotone in each direction, which [`crate::CurveView`] is by
//! construction; a non-monotone view would make `sptf` pick a merely nearby request.
//!
//! Merging: back merges only, as `cscan`.
//!
//! Invariant: the `SortedQueue` holds every queued request once; no other state.
//! `select`, `take`, `add` and `merge` are O(log n) and make two estimate calls at most. No
//! tunables.

use super::{Policy, SortedQueue};
use crate::device::DeviceView;
use crate::request::{ReqId, Request};
use crate::time::Time;

#[derive(Default)]
pub struct Sptf {
    q: SortedQueue,
}

impl Sptf {
    pub fn new() -> Self {
        Self::default()
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        self.q.check();
    }
}

impl Policy for Sptf {
    super::sorted_queue_policy!("sptf");

    fn select(&mut self, _now: Time, dev: &dyn DeviceView) -> Option<ReqId> {
        let head = dev.head();
        let cost = |id: ReqId| (dev.estimate(head, self.q.get(id).expect("indexed").sector), id);
        let ahead = self.q.first_from(head).map(cost);
        let behind = self.q.last_before(head).map(cost);
        match (ahead, behind) {
            (Some(a), Some(b)) => Some(a.min(b).1),
            (a, b) => a.or(b).map(|c| c.1),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::device::CurveView;
    use crate::estimate::ServiceCurve;
    use crate::testutil::{ops, rq, Driver, FixedView, Op};

    fn pick(p: &mut Sptf, dev: &dyn DeviceView) -> u64 {
        p.select(Time(0), dev).unwrap().0
    }

    #[test]
    fn nearest_wins_with_the_backward_penalty() {
        // FixedView: base 100us + 1ns per sector, backward 1.5x
        let dev = FixedView::linear(1000);
        let mut p = Sptf::new();
        p.add(Time(0), rq(1, 750, 8)); // 250 behind: 150_375
        p.add(Time(0), rq(2, 1300, 8)); // 300 ahead: 100_300
        assert_eq!(pick(&mut p, &dev), 2, "farther but forward");
        p.take(Time(0), ReqId(2));
        p.add(Time(0), rq(3, 201_000, 8)); // 200_000 ahead: 300_000
        assert_eq!(pick(&mut p, &dev), 1, "backward beats a long forward seek");
        p.add(Time(0), rq(4, 1000, 8));
        assert_eq!(pick(&mut p, &dev), 4, "at the head is forward, distance 0");
    }

    #[test]
    fn ties_go_to_the_lowest_id() {
        // backward 1 sector: (100_000 + 1) * 3 / 2 = 150_001 = forward 50_001 sectors
        let dev = FixedView { head: 100_000, base: 100_000, capacity: 1 << 32 };
        for (fwd, bwd) in [(7, 3), (3, 7)] {
            let mut p = Sptf::new();
            p.add(Time(0), rq(fwd, 150_001, 8));
            p.add(Time(0), rq(bwd, 99_999, 8));
            assert_eq!(pick(&mut p, &dev), 3);
        }
        let mut p = Sptf::new();
        for id in [9, 4, 6] {
            p.add(Time(0), rq(id, 99_990, 8));
        }
        assert_eq!(pick(&mut p, &dev), 4, "same sector behind the head");
    }

    #[test]
    fn on_a_flat_curve_the_nearest_wins_the_tie() {
        let curve = ServiceCurve::from_knots(vec![(0, 1_000), (100, 5_000)]);
        let dev = CurveView { head: 0, curve: &curve, capacity: 1 << 20 };
        let mut p = Sptf::new();
        p.add(Time(0), rq(2, 200, 8));
        p.add(Time(0), rq(1, 300, 8));
        assert_eq!(dev.estimate(0, 200), dev.estimate(0, 300));
        assert_eq!(pick(&mut p, &dev), 2);
    }

    proptest! {
        #[test]
        fn picks_what_a_full_scan_picks_and_takes_each_once(
            ops in ops(300, 1 << 16, true, 100, 100),
            salt in any::<u64>(),
        ) {
            let mut d = Driver::new(Sptf::new(), salt, Sptf::check);
            for op in &ops {
                if let Op::Dispatch = op {
                    // FixedView is strictly monotone in each direction: no distance ties
                    let want = d.queued.values().map(|r| (d.dev.estimate(d.dev.head, r.sector), r.id)).min();
                    prop_assert_eq!(d.dispatch().map(|r| r.id), want.map(|w| w.1));
                } else {
                    d.step(op);
                }
            }
            d.drain();
        }
    }
}

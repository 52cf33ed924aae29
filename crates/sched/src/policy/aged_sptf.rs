//! `aged-sptf`: shortest positioning time first with aging and a hard latency bound.
//!
//! 001 Section 3.3 ("Variant: Aged-SPTF") and Section 4. SPTF can starve a distant request;
//! Aged-SPTF (also Aged-SATF, Weighted-SPTF, the paper's refs [15, 22, 34]) gives queued
//! requests a priority that rises with their queued time, and "a request with sufficiently
//! high priority overrules the SPTF decision". Section 6 warns that raising priority
//! abruptly at a threshold degenerates to FCFS under overload, and that the cure is to raise
//! it gradually; Section 4 runs it "with a bounded per-request latency of 1 second", found
//! to be within 1% of SPTF's throughput. headway does both:
//!
//! - **Gradual aging.** The effective cost of a request is
//!   `estimate(head, rq.sector) - aging_weight * (now - rq.arrival)` (positioning time minus
//!   a credit proportional to the time waited, the form of the cited Aged-SPTF/ASATF);
//!   dispatch the minimum, lowest id on a tie.
//! - **Hard bound.** When the oldest request has waited `max_latency` or longer, it is
//!   dispatched next regardless of cost; overdue requests go oldest first (lowest id among
//!   equal arrivals). `urgent(now)` is then true; `next_urgent_at` is the oldest arrival
//!   plus `max_latency`.
//!
//! A merged request keeps the earlier arrival of its parts. Merging: back merges only, as
//! `sptf`.
//!
//! Cost: `select` estimates every queued request, O(n). The O(log n) neighbour search of
//! `sptf` does not carry over: the aging credit differs per request, so the cheapest
//! request need not be a neighbour of the head. `add`, `merge`, `take` are O(log n).
//!
//! Invariant: the `SortedQueue` and `by_arrival` hold the same requests, the latter as
//! `(arrival, id)`.
//!
//! Tunables:
//! - `max_latency` (1 s, 001 Section 4): the hard bound. Lower bounds the tail latency but
//!   forces more long seeks (the paper suggests 100 ms for latency-sensitive systems). 0
//!   makes every request overdue: FCFS by arrival.
//! - `aging_weight` (0.01, dimensionless: ns of positioning time forgiven per ns waited).
//!   001 gives no value. The default is an estimate: a request gains 10 ms of credit per
//!   second waited, about a full-stroke seek of the 7200 rpm disks of 001/000 by the end of
//!   the 1 s bound, so aging reorders only requests that have waited a sizeable part of the
//!   bound (keeping throughput near SPTF's, as 001 reports) while spreading out the forced
//!   dispatches the bound alone would bunch up. 0 is plain SPTF plus the hard bound; large
//!   weights approach FCFS.

use std::collections::BTreeSet;

use super::{Policy, SortedQueue};
use crate::device::DeviceView;
use crate::params::{ParamError, Settings, TimeUnit, Tunable, Unit};
use crate::request::{ReqId, Request};
use crate::time::{Duration, Time};

/// Aging credit per unit of waiting time (an estimate; see the module doc).
pub const AGING_WEIGHT: f64 = 0.01;
/// Hard per-request latency bound (001 Section 4).
pub const MAX_LATENCY: Duration = Duration::from_secs(1);

/// The tunables, as `headway tunables` lists them.
pub mod knob {
    use super::*;

    pub const AGING_WEIGHT: Tunable = Tunable {
        name: "aging_weight",
        unit: Unit::Factor { min: 0.0, max: 1e6, default: 0.01 },
        doc: "positioning time forgiven per unit of time waited (0 = SPTF plus the hard bound)",
    };
    pub const MAX_LATENCY: Tunable = Tunable {
        name: "max_latency",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(1000) },
        doc: "a request waiting this long is dispatched next, oldest first (0 = FCFS)",
    };
}

/// Every aged-sptf tunable.
pub const TUNABLES: &[Tunable] = &[knob::AGING_WEIGHT, knob::MAX_LATENCY];

/// Aged-SPTF settings.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct AgedSptfParams {
    /// Finite, >= 0.
    pub aging_weight: f64,
    pub max_latency: Duration,
}

impl Default for AgedSptfParams {
    fn default() -> Self {
        AgedSptfParams { aging_weight: AGING_WEIGHT, max_latency: MAX_LATENCY }
    }
}

impl AgedSptfParams {
    /// Read the tunables; a negative or non-finite weight is an error.
    pub fn from_settings(s: &mut Settings) -> Result<Self, ParamError> {
        Ok(AgedSptfParams {
            aging_weight: s.factor(&knob::AGING_WEIGHT)?,
            max_latency: s.time(&knob::MAX_LATENCY)?,
        })
    }
}

pub struct AgedSptf {
    params: AgedSptfParams,
    q: SortedQueue,
    by_arrival: BTreeSet<(Time, ReqId)>,
}

impl AgedSptf {
    pub fn new(params: AgedSptfParams) -> Self {
        debug_assert!(params.aging_weight.is_finite() && params.aging_weight >= 0.0);
        AgedSptf { params, q: SortedQueue::default(), by_arrival: BTreeSet::new() }
    }

    pub fn params(&self) -> &AgedSptfParams {
        &self.params
    }

    /// The request plain SPTF would choose (no aging, no bound), searched as `sptf` does.
    /// The anticipation heuristic for Aged-SPTF (001 Section 3.3) does not wait when aging
    /// overrides this choice.
    pub fn sptf_choice(&self, dev: &dyn DeviceView) -> Option<ReqId> {
        let head = dev.head();
        let cost = |id: ReqId| (dev.estimate(head, self.q.get(id).expect("indexed").sector), id);
        match (self.q.first_from(head).map(cost), self.q.last_before(head).map(cost)) {
            (Some(a), Some(b)) => Some(a.min(b).1),
            (a, b) => a.or(b).map(|c| c.1),
        }
    }

    fn oldest(&self) -> Option<(Time, ReqId)> {
        self.by_arrival.first().copied()
    }

    /// `estimate - aging_weight * waited`, in ns (negative once the credit exceeds the cost).
    fn effective(&self, now: Time, rq: &Request, dev: &dyn DeviceView) -> f64 {
        let est = dev.estimate(dev.head(), rq.sector).0 as f64;
        est - self.params.aging_weight * (now - rq.arrival).0 as f64
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        self.q.check();
        assert_eq!(self.q.len(), self.by_arrival.len());
        for rq in self.q.iter() {
            assert!(self.by_arrival.contains(&(rq.arrival, rq.id)), "{rq:?} missing by arrival");
        }
    }
}

impl Policy for AgedSptf {
    fn name(&self) -> &'static str {
        "aged-sptf"
    }

    fn merge(&mut self, _now: Time, rq: &Request, max_sectors: u32) -> Option<ReqId> {
        let (id, before) = self.q.back_merge(rq, max_sectors)?;
        let after = self.q.get(id).expect("just merged").arrival;
        if after != before {
            self.by_arrival.remove(&(before, id));
            self.by_arrival.insert((after, id));
        }
        Some(id)
    }

    fn add(&mut self, _now: Time, rq: Request) {
        self.by_arrival.insert((rq.arrival, rq.id));
        self.q.insert(rq);
    }

    fn select(&mut self, now: Time, dev: &dyn DeviceView) -> Option<ReqId> {
        let (t, oldest) = self.oldest()?;
        if t + self.params.max_latency <= now {
            return Some(oldest);
        }
        let by_cost = |a: &(f64, ReqId), b: &(f64, ReqId)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
        self.q.iter().map(|r| (self.effective(now, r, dev), r.id)).min_by(by_cost).map(|c| c.1)
    }

    fn take(&mut self, _now: Time, id: ReqId) -> Request {
        let rq = self.q.remove(id).unwrap_or_else(|| panic!("aged-sptf: {id:?} is not queued"));
        let was = self.by_arrival.remove(&(rq.arrival, id));
        debug_assert!(was, "arrival index lost {id:?}");
        rq
    }

    fn get(&self, id: ReqId) -> Option<&Request> {
        self.q.get(id)
    }

    fn urgent(&self, now: Time) -> bool {
        self.oldest().is_some_and(|(t, _)| t + self.params.max_latency <= now)
    }

    fn next_urgent_at(&self) -> Option<Time> {
        self.oldest().map(|(t, _)| t + self.params.max_latency)
    }

    fn len(&self) -> usize {
        self.q.len()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::testutil::{ops, rq, Driver, FixedView, Op};

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    fn arriving(mut r: Request, t: Time) -> Request {
        r.arrival = t;
        r
    }

    /// Head parked at 0; every millisecond a request arrives 8 sectors ahead and one
    /// request is dispatched. Returns when the far request #0 (1M sectors ahead, ~1 ms more
    /// to reach than the near ones) went, if within `steps` ms.
    fn far_request_served_at(params: AgedSptfParams, steps: u64) -> Option<Time> {
        let mut p = AgedSptf::new(params);
        let dev = FixedView::linear(0);
        p.add(Time(0), rq(0, 1_000_000, 8));
        for k in 1..=steps {
            let now = ms(k);
            p.add(now, arriving(rq(k, 8, 8), now));
            let id = p.select(now, &dev).unwrap();
            p.take(now, id);
            if id == ReqId(0) {
                return Some(now);
            }
        }
        None
    }

    #[test]
    fn defaults_and_settings() {
        let d = AgedSptfParams::from_settings(&mut Settings::new()).unwrap();
        assert_eq!(d, AgedSptfParams::default());
        assert_eq!(d.max_latency, Duration::from_secs(1));
        let mut s = Settings::new();
        s.push_kv("max_latency=100").unwrap();
        s.push_kv("aging_weight=0.5").unwrap();
        let d = AgedSptfParams::from_settings(&mut s).unwrap();
        assert_eq!((d.aging_weight, d.max_latency), (0.5, Duration::from_millis(100)));
        for bad in ["aging_weight=-1", "aging_weight=NaN", "aging_weight=inf"] {
            let mut s = Settings::new();
            s.push_kv(bad).unwrap();
            assert!(AgedSptfParams::from_settings(&mut s).is_err(), "{bad}");
        }
    }

    #[test]
    fn aging_eventually_serves_a_far_request() {
        let long = Duration::from_secs(3600);
        // SPTF alone starves it
        assert_eq!(
            far_request_served_at(AgedSptfParams { aging_weight: 0.0, max_latency: long }, 2000),
            None
        );
        // a credit of 0.01 ns/ns covers the ~1 ms gap after ~100 ms of waiting (minus the
        // near request's own 1 ms wait)
        let t =
            far_request_served_at(AgedSptfParams { aging_weight: 0.01, max_latency: long }, 2000).unwrap();
        assert!((ms(95)..=ms(105)).contains(&t), "{t}");
        // ten times the weight, a tenth of the wait
        let t = far_request_served_at(AgedSptfParams { aging_weight: 0.1, max_latency: long }, 2000).unwrap();
        assert!((ms(9)..=ms(12)).contains(&t), "{t}");
    }

    #[test]
    fn the_hard_bound_overrides_cost_oldest_first() {
        let p = AgedSptfParams { aging_weight: 0.0, max_latency: Duration::from_secs(1) };
        assert_eq!(far_request_served_at(p, 5000), Some(ms(1000)));

        let mut p = AgedSptf::new(p);
        let dev = FixedView::linear(0);
        p.add(Time(0), arriving(rq(5, 900_000, 8), ms(20)));
        p.add(Time(0), arriving(rq(6, 500_000, 8), ms(10)));
        p.add(Time(0), arriving(rq(7, 8, 8), ms(30)));
        assert_eq!(p.next_urgent_at(), Some(ms(1010)));
        assert!(!p.urgent(ms(1009)));
        assert_eq!(p.select(ms(1009), &dev), Some(ReqId(7)));
        assert!(p.urgent(ms(1010)));
        let order: Vec<u64> = (0..3)
            .map(|_| {
                let id = p.select(ms(2000), &dev).unwrap();
                p.take(ms(2000), id).id.0
            })
            .collect();
        assert_eq!(order, vec![6, 5, 7]);
        assert_eq!(p.next_urgent_at(), None);
    }

    #[test]
    fn a_merge_keeps_the_earlier_arrival() {
        let mut p = AgedSptf::new(AgedSptfParams::default());
        p.add(ms(5), arriving(rq(1, 100, 8), ms(5)));
        assert_eq!(p.merge(ms(5), &arriving(rq(2, 108, 8), ms(2)), 1024), Some(ReqId(1)));
        assert_eq!(p.next_urgent_at(), Some(ms(1002)));
        p.check();
    }

    proptest! {
        #[test]
        fn overdue_requests_go_first_and_each_is_taken_once(
            ops in ops(300, 1 << 16, true, 300, 200),
            salt in any::<u64>(),
            weight in prop_oneof![Just(0.0), 0.0..2.0],
            max_latency in 0u64..1000,
        ) {
            let params = AgedSptfParams { aging_weight: weight, max_latency: Duration(max_latency) };
            let mut d = Driver::new(AgedSptf::new(params), salt, AgedSptf::check);
            for op in &ops {
                if let Op::Dispatch = op {
                    let oldest = d.queued.values().min_by_key(|r| (r.arrival, r.id)).copied();
                    let overdue = oldest.filter(|r| r.arrival + params.max_latency <= d.now);
                    prop_assert_eq!(d.policy.urgent(d.now), overdue.is_some());
                    let got = d.dispatch();
                    if let Some(o) = overdue {
                        prop_assert_eq!(got.map(|r| r.id), Some(o.id));
                    }
                } else {
                    d.step(op);
                }
            }
            d.drain();
        }
    }
}

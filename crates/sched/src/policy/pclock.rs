//! `pclock`: QoS by token buckets and finish tags (pClock, Gulati et al. 2007), as seeds/004
//! Section III describes it and uses it as its baseline (Figures 1-2 without the active
//! application; Figures 3 and 5).
//!
//! ## The algorithm
//! - Each application (a `ContextId`; requests without one are one anonymous application)
//!   has a class — rate `rho`, delay `delta`, burst `sigma` — given by
//!   [`Policy::set_qos`], or the default class ([`crate::qos::DEFAULT_QOS`]).
//! - `add` tags the request from its application's token bucket ([`crate::qos`]): start
//!   tag `S = t` within the guarantee, `S = max(MaxS, t)` (and `MaxS += 1/rho`) over it;
//!   finish tag `F = S + delta`.
//! - `select` is the smallest finish tag over all queued requests (ties: smaller start tag,
//!   then lower id). No look at the head: pClock's order is the tags' alone, which is why
//!   synchronous applications, with one request queued at a time, are served one request
//!   each in turn (004 Section IV: "no more than one request per-application is dispatched
//!   consecutively").
//!
//! Work-conserving, never urgent. No merging (a merged request would carry one
//! application's tags for another's data; fio's direct synchronous jobs never merge
//! anyway). Tags are monotone per application, so each application's queue is in arrival
//! order; [`PClock::app_min`] gives HTBS the smallest finish tag of one application.
//!
//! Invariants: `by_finish` holds `(F, S, id)` and the owning application's `queue` holds
//! `(F, S, id)` for exactly the requests in `reqs`.
//!
//! Costs: `add`, `take`, `select` O(log n).
//!
//! No tunables: the classes are per application, set by the driver (fio:
//! `headway_rate`, `headway_delay`, `headway_burst`).

use std::collections::{BTreeMap, BTreeSet};

use super::Policy;
use crate::device::DeviceView;
use crate::idmap::IdMap;
use crate::qos::{Qos, Tagger, Tags};
use crate::request::{ContextId, ReqId, Request};
use crate::time::Time;

type Key = (Time, Time, ReqId);

fn key(t: Tags, id: ReqId) -> Key {
    (t.finish, t.start, id)
}

/// pClock's queue.
#[derive(Default)]
pub struct PClock {
    tagger: Tagger,
    reqs: IdMap<(Request, Tags)>,
    by_finish: BTreeSet<Key>,
    /// Per application, its queued requests by finish tag.
    apps: BTreeMap<Option<ContextId>, BTreeSet<Key>>,
}

impl PClock {
    pub fn new() -> Self {
        Self::default()
    }

    /// The tags `add` gave a queued request.
    pub fn tags(&self, id: ReqId) -> Option<Tags> {
        self.reqs.get(&id).map(|r| r.1)
    }

    /// The class of an application.
    pub fn qos(&self, ctx: Option<ContextId>) -> Qos {
        self.tagger.qos(ctx)
    }

    /// The queued request with the smallest finish tag, with its application.
    pub fn min(&self) -> Option<(ReqId, Option<ContextId>)> {
        let &(_, _, id) = self.by_finish.first()?;
        Some((id, self.reqs[&id].0.ctx))
    }

    /// The smallest finish tag among applications other than `except`, with its request.
    pub fn min_except(&self, except: Option<ContextId>) -> Option<(ReqId, Option<ContextId>)> {
        self.apps
            .iter()
            .filter(|(c, q)| **c != except && !q.is_empty())
            .map(|(c, q)| (*q.first().expect("non-empty"), *c))
            .min()
            .map(|(k, c)| (k.2, c))
    }

    /// The smallest finish tag of one application's queued requests.
    pub fn app_min(&self, ctx: Option<ContextId>) -> Option<ReqId> {
        self.apps.get(&ctx)?.first().map(|k| k.2)
    }

    /// Requests queued by one application.
    pub fn backlog(&self, ctx: Option<ContextId>) -> usize {
        self.apps.get(&ctx).map_or(0, |q| q.len())
    }

    /// An application has gone: its bucket starts afresh if it comes back.
    pub fn forget(&mut self, ctx: ContextId) {
        self.tagger.forget(ctx);
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        assert_eq!(self.by_finish.len(), self.reqs.len());
        assert_eq!(self.apps.values().map(|q| q.len()).sum::<usize>(), self.reqs.len());
        for (id, (rq, t)) in self.reqs.iter() {
            assert!(self.by_finish.contains(&key(*t, *id)));
            assert!(self.apps[&rq.ctx].contains(&key(*t, *id)));
        }
    }
}

impl Policy for PClock {
    fn name(&self) -> &'static str {
        "pclock"
    }

    fn add(&mut self, now: Time, rq: Request) {
        let t = self.tagger.tag(now, &rq);
        let k = key(t, rq.id);
        self.by_finish.insert(k);
        self.apps.entry(rq.ctx).or_default().insert(k);
        let prev = self.reqs.insert(rq.id, (rq, t));
        debug_assert!(prev.is_none(), "request {:?} added twice", rq.id);
    }

    fn select(&mut self, _now: Time, _dev: &dyn DeviceView) -> Option<ReqId> {
        self.by_finish.first().map(|k| k.2)
    }

    fn take(&mut self, _now: Time, id: ReqId) -> Request {
        let (rq, t) = self.reqs.remove(&id).unwrap_or_else(|| panic!("pclock: {id:?} is not queued"));
        let k = key(t, id);
        let (a, b) = (self.by_finish.remove(&k), self.apps.get_mut(&rq.ctx).is_some_and(|q| q.remove(&k)));
        debug_assert!(a && b, "pclock indexes disagree on {id:?}");
        rq
    }

    fn get(&self, id: ReqId) -> Option<&Request> {
        self.reqs.get(&id).map(|r| &r.0)
    }

    fn urgent(&self, _now: Time) -> bool {
        false
    }

    fn set_qos(&mut self, ctx: ContextId, qos: Qos) {
        self.tagger.set_qos(ctx, qos);
    }

    fn len(&self) -> usize {
        self.reqs.len()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::qos::Rate;
    use crate::testutil::{ops, rq, Driver, FixedView};
    use crate::time::Duration;

    const MS: u64 = 1_000_000;

    fn req(id: u64, ctx: u32, sector: u64) -> Request {
        Request { ctx: Some(ContextId(ctx)), ..rq(id, sector, 8) }
    }

    #[test]
    fn smallest_finish_tag_first_whatever_the_head() {
        let mut p = PClock::new();
        p.set_qos(ContextId(0), Qos { rate: Rate::Iops(100), delay: Duration(50 * MS), burst: 1 });
        p.set_qos(ContextId(1), Qos { rate: Rate::Iops(100), delay: Duration(10 * MS), burst: 1 });
        let dev = FixedView::linear(1000);
        p.add(Time(0), req(1, 0, 1000));
        p.add(Time(MS), req(2, 1, 1 << 30));
        // F = 50 ms vs 11 ms: the tight delay goes first though far from the head
        assert_eq!(p.select(Time(MS), &dev), Some(ReqId(2)));
        p.take(Time(MS), ReqId(2));
        assert_eq!(p.select(Time(MS), &dev), Some(ReqId(1)));
        p.check();
    }

    #[test]
    fn an_application_over_its_rate_yields_to_one_within() {
        let mut p = PClock::new();
        for c in 0..2 {
            p.set_qos(ContextId(c), Qos { rate: Rate::Iops(100), delay: Duration(100 * MS), burst: 1 });
        }
        // app 0 sends 10 at once: tags start 0,0,10,...,80 ms
        for i in 0..10 {
            p.add(Time(0), req(i, 0, i * 8));
        }
        p.add(Time(5 * MS), req(100, 1, 1 << 20));
        let dev = FixedView::linear(0);
        let order: Vec<u64> = (0..11)
            .map(|_| {
                let id = p.select(Time(5 * MS), &dev).unwrap();
                p.take(Time(5 * MS), id).id.0
            })
            .collect();
        // app 1's F = 105 ms comes after app 0's F = 100, 100 and before 110
        assert_eq!(order[..3], [0, 1, 100]);
    }

    proptest! {
        /// Every request is taken exactly once (the shared policy driver).
        #[test]
        fn pclock_dispatches_every_request_once(o in ops(200, 1 << 14, true, 0, 5 * MS), salt in any::<u64>()) {
            let mut d = Driver::new(PClock::new(), salt, |p: &PClock| p.check());
            for op in &o {
                d.step(op);
            }
            d.drain();
        }
    }
}

//! The work-conserving policy contract.
//!
//! A policy holds pending requests and, asked at a decision point, names the one it would
//! dispatch. It never waits: waiting is what the frameworks in [`crate::framework`] add.
//! The split `select` / `take` lets a framework look at the policy's choice (to price it)
//! without committing to it; `take` is the commit and updates any batching state.
//!
//! Call order a driver (or framework) follows: `merge` (optional) then `add` on arrival;
//! `select` and then `take` of the chosen — or of any other queued — id on dispatch;
//! `completed` when the device finishes. Every added request is taken exactly once.

use std::collections::BTreeSet;
use std::ops::RangeInclusive;

use crate::device::DeviceView;
use crate::idmap::IdMap;

use crate::qos::Qos;
use crate::request::{ContextId, ReqId, Request, Sector};
use crate::time::Time;

pub trait Policy: Send {
    /// Registry name (`deadline`, `sptf`, ...).
    fn name(&self) -> &'static str;

    /// Offer `rq` for merging into a queued request. On success the policy has grown the
    /// queued request to cover `rq` (it keeps its id) and returns that id; `rq` is then not
    /// added. `max_sectors` bounds a merged request's length.
    fn merge(&mut self, _now: Time, _rq: &Request, _max_sectors: u32) -> Option<ReqId> {
        None
    }

    /// Queue a request.
    fn add(&mut self, now: Time, rq: Request);

    /// The request this policy would dispatch next. Does not commit.
    fn select(&mut self, now: Time, dev: &dyn DeviceView) -> Option<ReqId>;

    /// Remove a queued request for dispatch (the selected one or any other).
    /// Panics if `id` is not queued: that is a driver bug.
    fn take(&mut self, now: Time, id: ReqId) -> Request;

    /// Look at a queued request.
    fn get(&self, id: ReqId) -> Option<&Request>;

    /// Does the policy insist on dispatching now (an expired deadline, an aged request)?
    fn urgent(&self, now: Time) -> bool;

    /// The earliest future time at which `urgent` may turn true without new arrivals.
    fn next_urgent_at(&self) -> Option<Time> {
        None
    }

    /// The device finished a request this policy dispatched.
    fn completed(&mut self, _now: Time, _rq: &Request) {}

    /// Proportional share: context `ctx` is entitled to `weight` shares (default 1).
    /// Policies without shares ignore it.
    fn set_weight(&mut self, _ctx: ContextId, _weight: u32) {}

    /// QoS: context `ctx` belongs to class `qos` (rate, delay, burst; seeds/004). Policies
    /// without classes ignore it.
    fn set_qos(&mut self, _ctx: ContextId, _qos: Qos) {}

    /// I/O priority: context `ctx` has `prio` (see [`crate::Scheduler::set_ioprio`]).
    /// Policies without classes ignore it.
    fn set_ioprio(&mut self, _ctx: ContextId, _prio: crate::IoPrio) {}

    /// Number of queued requests.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Can `rq` be appended to `q` (a back merge) under the size bound?
pub fn back_mergeable(q: &Request, rq: &Request, max_sectors: u32) -> bool {
    q.dir == rq.dir && q.end() == rq.sector && q.len as u64 + rq.len as u64 <= max_sectors as u64
}

/// Can `rq` be prepended to `q` (a front merge) under the size bound?
pub fn front_mergeable(q: &Request, rq: &Request, max_sectors: u32) -> bool {
    q.dir == rq.dir && rq.end() == q.sector && q.len as u64 + rq.len as u64 <= max_sectors as u64
}

/// Grow the queued request `q` to cover `rq` — appended (back merge) or prepended (front
/// merge) — when they are contiguous and the size bound allows; whether it did.
pub fn join(q: &mut Request, rq: &Request, max_sectors: u32) -> bool {
    if back_mergeable(q, rq, max_sectors) {
        q.len += rq.len;
    } else if front_mergeable(q, rq, max_sectors) {
        q.sector = rq.sector;
        q.len += rq.len;
    } else {
        return false;
    }
    q.sync |= rq.sync;
    true
}

/// Queued requests indexed by start and by end sector: the index the sorted policies share
/// (deadline keeps one per direction; cscan, sptf and aged-sptf one for both).
///
/// Invariant: `by_start` holds `(rq.sector, id)` and `by_end` holds `(rq.end(), id)` for
/// exactly the requests in `reqs`. Every operation is O(log n) but the merge lookups, which
/// are O(log n + k) for k queued requests sharing the merge boundary (almost always 0 or 1).
#[derive(Default)]
pub(crate) struct SortedQueue {
    reqs: IdMap<Request>,
    by_start: BTreeSet<(Sector, ReqId)>,
    by_end: BTreeSet<(Sector, ReqId)>,
}

/// All keys at one sector: `(s, ReqId(0))..=(s, ReqId(u64::MAX))`.
fn at(s: Sector) -> RangeInclusive<(Sector, ReqId)> {
    (s, ReqId(0))..=(s, ReqId(u64::MAX))
}

impl SortedQueue {
    pub(crate) fn insert(&mut self, rq: Request) {
        self.by_start.insert((rq.sector, rq.id));
        self.by_end.insert((rq.end(), rq.id));
        let prev = self.reqs.insert(rq.id, rq);
        debug_assert!(prev.is_none(), "request {:?} added twice", rq.id);
    }

    pub(crate) fn remove(&mut self, id: ReqId) -> Option<Request> {
        let rq = self.reqs.remove(&id)?;
        let (a, b) = (self.by_start.remove(&(rq.sector, id)), self.by_end.remove(&(rq.end(), id)));
        debug_assert!(a && b, "sorted queue indexes disagree on {id:?}");
        Some(rq)
    }

    pub(crate) fn get(&self, id: ReqId) -> Option<&Request> {
        self.reqs.get(&id)
    }

    pub(crate) fn len(&self) -> usize {
        self.reqs.len()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Request> {
        self.reqs.values()
    }

    /// The lowest-sectored request (lowest id among equals).
    pub(crate) fn first(&self) -> Option<ReqId> {
        self.by_start.first().map(|k| k.1)
    }

    /// The first request starting at or after `pos` (lowest id among equals).
    pub(crate) fn first_from(&self, pos: Sector) -> Option<ReqId> {
        self.by_start.range((pos, ReqId(0))..).next().map(|k| k.1)
    }

    /// The request after `(sector, id)` in sector order (ties by id): Linux's
    /// `elv_rb_latter_request` once the request at that key is gone.
    pub(crate) fn first_after(&self, sector: Sector, id: ReqId) -> Option<ReqId> {
        use std::ops::Bound;
        self.by_start.range((Bound::Excluded((sector, id)), Bound::Unbounded)).next().map(|k| k.1)
    }

    /// The request starting closest below `pos` (lowest id among equals).
    pub(crate) fn last_before(&self, pos: Sector) -> Option<ReqId> {
        let &(s, _) = self.by_start.range(..(pos, ReqId(0))).next_back()?;
        self.by_start.range(at(s)).next().map(|k| k.1)
    }

    /// Append `rq` to a queued request ending where `rq` starts. Returns the id grown and
    /// its arrival before the merge (the merged request keeps the earlier arrival, so a
    /// caller keying on arrival re-keys when the two differ).
    pub(crate) fn back_merge(&mut self, rq: &Request, max_sectors: u32) -> Option<(ReqId, Time)> {
        let reqs = &self.reqs;
        let &(end, id) =
            self.by_end.range(at(rq.sector)).find(|k| back_mergeable(&reqs[&k.1], rq, max_sectors))?;
        let q = self.reqs.get_mut(&id).expect("index and map agree");
        let before = q.arrival;
        self.by_end.remove(&(end, id));
        q.len += rq.len;
        q.sync |= rq.sync;
        q.arrival = q.arrival.min(rq.arrival);
        self.by_end.insert((q.end(), id));
        Some((id, before))
    }

    /// Prepend `rq` to a queued request starting where `rq` ends; re-keys the start index.
    /// Returns as [`SortedQueue::back_merge`] does.
    pub(crate) fn front_merge(&mut self, rq: &Request, max_sectors: u32) -> Option<(ReqId, Time)> {
        let reqs = &self.reqs;
        let &(start, id) =
            self.by_start.range(at(rq.end())).find(|k| front_mergeable(&reqs[&k.1], rq, max_sectors))?;
        let q = self.reqs.get_mut(&id).expect("index and map agree");
        let before = q.arrival;
        self.by_start.remove(&(start, id));
        q.sector = rq.sector;
        q.len += rq.len;
        q.sync |= rq.sync;
        q.arrival = q.arrival.min(rq.arrival);
        self.by_start.insert((q.sector, id));
        Some((id, before))
    }

    /// Check the invariant (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        assert_eq!(self.by_start.len(), self.reqs.len());
        assert_eq!(self.by_end.len(), self.reqs.len());
        for rq in self.reqs.values() {
            assert!(self.by_start.contains(&(rq.sector, rq.id)), "{rq:?} missing from by_start");
            assert!(self.by_end.contains(&(rq.end(), rq.id)), "{rq:?} missing from by_end");
        }
    }
}

/// The `Policy` methods shared by policies that keep their requests in a bare
/// [`SortedQueue`] field `q` and only differ in `select`: back merges only, nothing urgent.
macro_rules! sorted_queue_policy {
    ($name:literal) => {
        fn name(&self) -> &'static str {
            $name
        }

        fn merge(&mut self, _now: Time, rq: &Request, max_sectors: u32) -> Option<ReqId> {
            self.q.back_merge(rq, max_sectors).map(|(id, _)| id)
        }

        fn add(&mut self, _now: Time, rq: Request) {
            self.q.insert(rq);
        }

        fn take(&mut self, _now: Time, id: ReqId) -> Request {
            self.q.remove(id).unwrap_or_else(|| panic!(concat!($name, ": {:?} is not queued"), id))
        }

        fn get(&self, id: ReqId) -> Option<&Request> {
            self.q.get(id)
        }

        fn urgent(&self, _now: Time) -> bool {
            false
        }

        fn len(&self) -> usize {
            self.q.len()
        }
    };
}
pub(crate) use sorted_queue_policy;

pub mod aged_sptf;
pub mod cscan;
pub mod deadline;
pub mod disksim;
pub mod kyber;
pub mod mq_deadline;
pub mod noop;
pub mod pclock;
pub mod sptf;
pub mod stride;

pub use aged_sptf::{AgedSptf, AgedSptfParams};
pub use cscan::Cscan;
pub use deadline::{Deadline, DeadlineParams};
pub use disksim::{Disksim, DisksimParams};
pub use kyber::{Kyber, KyberParams};
pub use mq_deadline::{MqDeadline, MqDeadlineParams};
pub use noop::Noop;
pub use pclock::PClock;
pub use sptf::Sptf;
pub use stride::{Stride, StrideParams};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mq_deadline_reads_deadlines_tunables_and_its_own() {
        for t in deadline::TUNABLES {
            assert!(mq_deadline::TUNABLES.contains(t), "{}", t.name);
        }
    }

    #[test]
    fn sorted_queue_neighbours_prefer_lowest_id_at_a_sector() {
        use crate::testutil::rq;
        let mut q = SortedQueue::default();
        for (id, s) in [(5, 100), (3, 100), (9, 50), (7, 50), (1, 200)] {
            q.insert(rq(id, s, 8));
        }
        assert_eq!(q.first(), Some(ReqId(7)));
        assert_eq!(q.first_from(100), Some(ReqId(3)));
        assert_eq!(q.first_from(101), Some(ReqId(1)));
        assert_eq!(q.first_from(201), None);
        assert_eq!(q.last_before(100), Some(ReqId(7)));
        assert_eq!(q.last_before(50), None);
        assert_eq!(q.last_before(u64::MAX), Some(ReqId(1)));
        q.check();
    }
}

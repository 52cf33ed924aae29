//! Helpers for unit tests: synthetic requests and device views.

use std::collections::BTreeMap;

use proptest::prelude::*;

use crate::device::DeviceView;
use crate::policy::{back_mergeable, front_mergeable, Policy};
use crate::request::{Dir, ReqId, Request, Sector};
use crate::time::{Duration, Time};

/// A synchronous read with id `id` at `sector`, `len` sectors, arrival 0, no context.
pub fn rq(id: u64, sector: Sector, len: u32) -> Request {
    Request { id: ReqId(id), sector, len, dir: Dir::Read, sync: true, arrival: Time(0), ctx: None }
}

/// A device view whose estimate is `base + |distance| ns` (backward costs 1.5x), head fixed.
pub struct FixedView {
    pub head: Sector,
    pub base: u64,
    pub capacity: Sector,
}

impl FixedView {
    pub fn linear(head: Sector) -> Self {
        FixedView { head, base: 100_000, capacity: 1 << 32 }
    }
}

impl DeviceView for FixedView {
    fn head(&self) -> Sector {
        self.head
    }
    fn estimate(&self, from: Sector, to: Sector) -> Duration {
        if to >= from {
            Duration(self.base + (to - from))
        } else {
            Duration((self.base + (from - to)) * 3 / 2)
        }
    }
    fn capacity(&self) -> Sector {
        self.capacity
    }
}

// ---- property-test driver -------------------------------------------------------------

/// One step of a random event sequence.
#[derive(Clone, Debug)]
pub enum Op {
    /// A request arrives; its arrival time is `age` ns before now (0 = now). It is offered
    /// for merging first and added when no queued request takes it.
    Arrive { sector: Sector, len: u32, write: bool, age: u64 },
    /// The device can take a request: `select`, then `take` the selection.
    Dispatch,
    /// Time passes.
    Advance(u64),
}

/// Random sequences of `n` ops. Sectors are multiples of 8 below `span` and lengths 8 to 24,
/// so a small `span` makes contiguous (mergeable) arrivals common. `writes` allows writes;
/// `max_age` > 0 gives arrivals stamped in the past, out of arrival order.
pub fn ops(
    n: usize,
    span: Sector,
    writes: bool,
    max_age: u64,
    max_dt: u64,
) -> impl Strategy<Value = Vec<Op>> {
    let arrive = (0..span / 8, 1u32..=3, any::<bool>(), 0..=max_age)
        .prop_map(move |(s, l, w, age)| Op::Arrive { sector: s * 8, len: l * 8, write: w && writes, age });
    let op = prop_oneof![4 => arrive, 3 => Just(Op::Dispatch), 2 => (0..=max_dt).prop_map(Op::Advance)];
    prop::collection::vec(op, 0..n)
}

/// A bijection on u64: distinct counters give distinct, scattered request ids.
pub fn scramble(n: u64, salt: u64) -> u64 {
    n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt
}

/// Runs a policy as a work-conserving driver would and checks it against the driver's own
/// model of the queue: merges only join contiguous same-direction requests within the size
/// bound, `select` names a queued id exactly when something is queued, `take` returns the
/// modelled extent, `len` balances, and every request is taken exactly once. The head moves
/// to the end of each dispatched request. Failures panic (proptest reports and shrinks them).
pub struct Driver<P: Policy> {
    pub policy: P,
    pub now: Time,
    pub dev: FixedView,
    pub max_sectors: u32,
    /// What the driver believes is queued; a merged request's arrival is its parts' earliest.
    pub queued: BTreeMap<ReqId, Request>,
    pub added: usize,
    pub merged: usize,
    pub taken: usize,
    arrivals: u64,
    salt: u64,
    check: fn(&P),
}

impl<P: Policy> Driver<P> {
    /// `check` verifies the policy's internal invariants after every step.
    pub fn new(policy: P, salt: u64, check: fn(&P)) -> Self {
        Driver {
            policy,
            now: Time(0),
            dev: FixedView::linear(0),
            max_sectors: 64,
            queued: BTreeMap::new(),
            added: 0,
            merged: 0,
            taken: 0,
            arrivals: 0,
            salt,
            check,
        }
    }

    /// Apply one op; returns the request dispatched, if any.
    pub fn step(&mut self, op: &Op) -> Option<Request> {
        match *op {
            Op::Arrive { sector, len, write, age } => {
                let dir = if write { Dir::Write } else { Dir::Read };
                let arrival = Time(self.now.0.saturating_sub(age));
                self.arrive(sector, len, dir, arrival);
                None
            }
            Op::Dispatch => self.dispatch(),
            Op::Advance(dt) => {
                self.now += Duration(dt);
                None
            }
        }
    }

    /// A request arrives: merge or add. Returns the id it merged into, if any.
    pub fn arrive(&mut self, sector: Sector, len: u32, dir: Dir, arrival: Time) -> Option<ReqId> {
        let id = ReqId(scramble(self.arrivals, self.salt));
        self.arrivals += 1;
        let r = Request { id, sector, len, dir, sync: dir == Dir::Read, arrival, ctx: None };
        let into = self.policy.merge(self.now, &r, self.max_sectors);
        match into {
            Some(into) => {
                let q = self.queued.get_mut(&into).unwrap_or_else(|| panic!("merged into unqueued {into:?}"));
                if back_mergeable(q, &r, self.max_sectors) {
                    q.len += r.len;
                } else if front_mergeable(q, &r, self.max_sectors) {
                    q.sector = r.sector;
                    q.len += r.len;
                } else {
                    panic!("{r:?} merged into non-contiguous {q:?}");
                }
                q.arrival = q.arrival.min(r.arrival);
                self.merged += 1;
            }
            None => {
                self.policy.add(self.now, r);
                self.queued.insert(id, r);
                self.added += 1;
            }
        }
        self.verify();
        into
    }

    /// `select` then `take` the selection.
    pub fn dispatch(&mut self) -> Option<Request> {
        let sel = self.policy.select(self.now, &self.dev);
        assert_eq!(
            sel.is_some(),
            !self.queued.is_empty(),
            "select {sel:?} with {} queued",
            self.queued.len()
        );
        let id = sel?;
        let want = self.queued.remove(&id).unwrap_or_else(|| panic!("selected unqueued {id:?}"));
        let got = self.policy.take(self.now, id);
        assert_eq!((got.id, got.sector, got.len, got.dir), (want.id, want.sector, want.len, want.dir));
        self.taken += 1;
        self.dev.head = got.end();
        self.verify();
        Some(got)
    }

    /// Dispatch until empty, then check every added request was taken exactly once.
    pub fn drain(&mut self) {
        let mut guard = self.queued.len() + 1;
        while self.dispatch().is_some() {
            guard -= 1;
            assert!(guard > 0, "drain does not terminate");
        }
        assert_eq!(self.added, self.taken, "added vs taken");
        assert!(self.policy.is_empty());
    }

    fn verify(&self) {
        assert_eq!(self.policy.len(), self.queued.len(), "len() vs the driver's count");
        assert_eq!(self.added - self.taken, self.queued.len());
        (self.check)(&self.policy);
    }
}

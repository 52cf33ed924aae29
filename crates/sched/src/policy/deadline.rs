//! `deadline`: Linux's mq-deadline — a one-way elevator in batches, with per-request expiry
//! times that bound how long a request can be passed over.
//!
//! Linux's deadline I/O scheduler (002 Section 5; block/mq-deadline.c, whose knobs and
//! defaults this module keeps). Per direction (read, write) the queue holds every request
//! twice: in a tree sorted by start sector, and in a FIFO ordered by expiry time
//! (`arrival + read_expire` or `arrival + write_expire`). Dispatch:
//!
//! 1. **Batch continuation.** While fewer than `fifo_batch` requests have been dispatched in
//!    the current batch and the batch's direction has a request starting at or after the
//!    point where the last request of that direction ended (`latest_pos`), dispatch that
//!    one: the head sweeps upward only, it never turns back inside a batch, and it does not
//!    stop for expired requests either.
//! 2. **New batch: direction.** Reads are preferred. When writes are pending too, each time
//!    reads are picked over them counts one `starved`; once `starved >= writes_starved`,
//!    writes are picked instead and `starved` resets to 0.
//! 3. **New batch: first request.** The FIFO head of the chosen direction when it has
//!    expired (`expiry <= now`) or when nothing lies at or after `latest_pos` (the sweep
//!    wraps to the oldest request); otherwise the next request in sector order.
//!
//! The guarantee that follows: once a read is the oldest (head of the read FIFO) and has
//! expired, it is dispatched within the rest of the running batch plus, when writes were
//! starved, one write batch: at most `fifo_batch + 1` dispatches when only reads are queued
//! and `2 * fifo_batch + 1` with writes (for `writes_starved >= 1`; with 0, pending writes
//! always win and reads wait for the write queue to drain, as in Linux). The property tests
//! below check both bounds.
//!
//! Merging: a new request is appended to a queued one of its direction that ends where it
//! starts (back merge), else prepended to one that starts where it ends (front merge, only
//! with `front_merges = 1`), within the driver's size bound. The merged request keeps its id
//! and the earlier of the two expiry times. Linux's follow-up merge of two queued requests
//! that a merge made contiguous is not done.
//!
//! `select` only looks; `take` commits the batch state (`batching`, `latest_pos`, direction,
//! `starved`). A `take` of an id other than the selection (a framework dispatching another
//! request) continues the batch when it is in the batch's direction and the batch has room,
//! and otherwise starts a new batch in the taken request's direction, counting `starved` as
//! the direction choice would.
//!
//! Invariants: every queued request is in exactly one direction's `SortedQueue` and in
//! that direction's FIFO under `(arrival + expire[dir], id)`; `batching <= fifo_batch`.
//! Costs: `add`, `merge`, `select`, `take` are O(log n); nothing allocates beyond the
//! containers.
//!
//! Tunables (Linux sysfs names and defaults; times as bare numbers are milliseconds):
//! - `read_expire` (500 ms): a read's deadline. Lower bounds read latency tighter but breaks
//!   sweeps more often.
//! - `write_expire` (5 s): the same for writes; long because writes are usually async.
//! - `writes_starved` (2): new read batches allowed while writes wait before a write batch.
//! - `fifo_batch` (16): dispatches per batch; larger favours throughput over deadlines.
//! - `front_merges` (1): allow front merges (0 saves a lookup for workloads that never
//!   produce them).

use std::collections::BTreeSet;

use super::{Policy, SortedQueue};
use crate::device::DeviceView;
use crate::params::{ParamError, Settings, TimeUnit, Tunable, Unit};
use crate::request::{Dir, ReqId, Request, Sector};
use crate::time::{Duration, Time};

/// Max time before a read is dispatched (Linux `read_expire = HZ / 2`).
pub const READ_EXPIRE: Duration = Duration::from_millis(500);
/// Max time before a write is dispatched, ideally (Linux `write_expire = 5 * HZ`).
pub const WRITE_EXPIRE: Duration = Duration::from_secs(5);
/// Read batches that may pass over pending writes (Linux `writes_starved = 2`).
pub const WRITES_STARVED: u32 = 2;
/// Requests per batch, in sector order (Linux `fifo_batch = 16`).
pub const FIFO_BATCH: u32 = 16;
/// Whether front merges are tried (Linux `front_merges = 1`).
pub const FRONT_MERGES: bool = true;

/// The tunables, as `headway tunables` lists them.
pub mod knob {
    use super::*;

    pub const READ_EXPIRE: Tunable = Tunable {
        name: "read_expire",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(500) },
        doc: "deadline of a read (arrival + read_expire); past it, the read is served at the next batch",
    };
    pub const WRITE_EXPIRE: Tunable = Tunable {
        name: "write_expire",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(5000) },
        doc: "deadline of a write (arrival + write_expire)",
    };
    pub const WRITES_STARVED: Tunable = Tunable {
        name: "writes_starved",
        unit: Unit::Count { what: "read batches", min: 0, max: u32::MAX as u64, default: 2 },
        doc: "read batches that may be chosen over pending writes before a write batch",
    };
    pub const FIFO_BATCH: Tunable = Tunable {
        name: "fifo_batch",
        unit: Unit::Count { what: "requests", min: 1, max: u32::MAX as u64, default: 16 },
        doc: "requests dispatched in one sector-ordered batch before deadlines are checked (>= 1)",
    };
    pub const FRONT_MERGES: Tunable = Tunable {
        name: "front_merges",
        unit: Unit::Flag { default: true },
        doc: "merge a request in front of a queued one that starts where it ends",
    };
}

/// Every deadline tunable.
pub const TUNABLES: &[Tunable] =
    &[knob::READ_EXPIRE, knob::WRITE_EXPIRE, knob::WRITES_STARVED, knob::FIFO_BATCH, knob::FRONT_MERGES];

/// Deadline settings (see the module doc for each one's trade-off).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DeadlineParams {
    pub read_expire: Duration,
    pub write_expire: Duration,
    pub writes_starved: u32,
    /// At least 1.
    pub fifo_batch: u32,
    pub front_merges: bool,
}

impl Default for DeadlineParams {
    fn default() -> Self {
        DeadlineParams {
            read_expire: READ_EXPIRE,
            write_expire: WRITE_EXPIRE,
            writes_starved: WRITES_STARVED,
            fifo_batch: FIFO_BATCH,
            front_merges: FRONT_MERGES,
        }
    }
}

impl DeadlineParams {
    /// Read the deadline tunables; out-of-range values (`fifo_batch = 0`) are errors.
    pub fn from_settings(s: &mut Settings) -> Result<Self, ParamError> {
        Ok(DeadlineParams {
            read_expire: s.time(&knob::READ_EXPIRE)?,
            write_expire: s.time(&knob::WRITE_EXPIRE)?,
            writes_starved: s.count(&knob::WRITES_STARVED)? as u32,
            fifo_batch: s.count(&knob::FIFO_BATCH)? as u32,
            front_merges: s.flag(&knob::FRONT_MERGES)?,
        })
    }

    /// How long a request of `dir` may wait (`read_expire`, `write_expire`).
    pub(crate) fn expire(&self, dir: Dir) -> Duration {
        match dir {
            Dir::Read => self.read_expire,
            Dir::Write => self.write_expire,
        }
    }
}

/// What dispatching `id` does to the batch state: computed by `select` (and discarded),
/// recomputed and applied by `take`.
#[derive(Copy, Clone, Debug)]
struct Plan {
    id: ReqId,
    dir: Dir,
    /// Starts a new batch (else continues the running one).
    new_batch: bool,
    /// `starved` after the direction choice.
    starved: u32,
}

pub struct Deadline {
    params: DeadlineParams,
    /// Per direction (`Dir::index`): the sector-sorted queue ...
    sorted: [SortedQueue; 2],
    /// ... and the same requests by `(expiry, id)`.
    fifo: [BTreeSet<(Time, ReqId)>; 2],
    /// Direction of the running batch.
    last_dir: Dir,
    /// Requests dispatched in the running batch.
    batching: u32,
    /// Read batches started while writes were pending, since the last write batch.
    starved: u32,
    /// Per direction: where the last dispatched request of that direction ended.
    latest_pos: [Sector; 2],
}

const DIRS: [Dir; 2] = [Dir::Read, Dir::Write];

impl Deadline {
    pub fn new(params: DeadlineParams) -> Self {
        debug_assert!(params.fifo_batch >= 1, "fifo_batch must be at least 1");
        Deadline {
            params,
            sorted: Default::default(),
            fifo: Default::default(),
            last_dir: Dir::Read,
            batching: 0,
            starved: 0,
            latest_pos: [0; 2],
        }
    }

    pub fn params(&self) -> &DeadlineParams {
        &self.params
    }

    fn expiry(&self, rq: &Request) -> Time {
        rq.arrival + self.params.expire(rq.dir)
    }

    /// The next request of `dir` in the one-way sweep.
    fn next_in_sweep(&self, dir: Dir) -> Option<ReqId> {
        self.sorted[dir.index()].first_from(self.latest_pos[dir.index()])
    }

    fn fifo_head(&self, dir: Dir) -> Option<(Time, ReqId)> {
        self.fifo[dir.index()].first().copied()
    }

    /// What the next dispatch would be (mq-deadline's `__dd_dispatch_request`), without
    /// committing it.
    fn plan(&self, now: Time) -> Option<Plan> {
        if self.batching < self.params.fifo_batch {
            if let Some(id) = self.next_in_sweep(self.last_dir) {
                return Some(Plan { id, dir: self.last_dir, new_batch: false, starved: self.starved });
            }
        }
        let reads = !self.fifo[Dir::Read.index()].is_empty();
        let writes = !self.fifo[Dir::Write.index()].is_empty();
        let (dir, starved) = if reads && !(writes && self.starved >= self.params.writes_starved) {
            (Dir::Read, if writes { self.starved.saturating_add(1) } else { self.starved })
        } else if writes {
            (Dir::Write, 0)
        } else {
            return None;
        };
        let (expiry, head) = self.fifo_head(dir).expect("the chosen direction has requests");
        let id = match self.next_in_sweep(dir) {
            Some(next) if expiry > now => next,
            _ => head,
        };
        Some(Plan { id, dir, new_batch: true, starved })
    }

    fn apply(&mut self, plan: Plan, rq: &Request) {
        if plan.new_batch {
            self.last_dir = plan.dir;
            self.batching = 0;
            self.starved = plan.starved;
        }
        self.batching += 1;
        self.latest_pos[plan.dir.index()] = rq.end();
        debug_assert!(self.batching <= self.params.fifo_batch);
    }

    /// The batch state a dispatch of `rq`, not the one `select` would name, leaves.
    fn plan_foreign(&self, rq: &Request) -> Plan {
        let continues = rq.dir == self.last_dir && self.batching < self.params.fifo_batch;
        let starved = match rq.dir {
            _ if continues => self.starved,
            Dir::Write => 0,
            Dir::Read if !self.fifo[Dir::Write.index()].is_empty() => self.starved.saturating_add(1),
            Dir::Read => self.starved,
        };
        Plan { id: rq.id, dir: rq.dir, new_batch: !continues, starved }
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        for d in DIRS {
            let (q, f) = (&self.sorted[d.index()], &self.fifo[d.index()]);
            q.check();
            assert_eq!(q.len(), f.len(), "{d:?}: sort list and FIFO sizes differ");
            for rq in q.iter() {
                assert_eq!(rq.dir, d);
                assert!(f.contains(&(self.expiry(rq), rq.id)), "{rq:?} missing from the FIFO");
            }
        }
        assert!(self.batching <= self.params.fifo_batch);
    }
}

impl Policy for Deadline {
    fn name(&self) -> &'static str {
        "deadline"
    }

    fn merge(&mut self, _now: Time, rq: &Request, max_sectors: u32) -> Option<ReqId> {
        let d = rq.dir.index();
        let merged = self.sorted[d].back_merge(rq, max_sectors).or_else(|| {
            if self.params.front_merges {
                self.sorted[d].front_merge(rq, max_sectors)
            } else {
                None
            }
        });
        let (id, before) = merged?;
        let q = self.sorted[d].get(id).expect("just merged");
        if q.arrival != before {
            // `rq` arrived first (the driver stamped it earlier): keep the earlier expiry.
            let expiry = self.expiry(q);
            let old = before + self.params.expire(rq.dir);
            let was = self.fifo[d].remove(&(old, id));
            debug_assert!(was, "FIFO lost {id:?}");
            self.fifo[d].insert((expiry, id));
        }
        Some(id)
    }

    fn add(&mut self, _now: Time, rq: Request) {
        self.fifo[rq.dir.index()].insert((self.expiry(&rq), rq.id));
        self.sorted[rq.dir.index()].insert(rq);
    }

    fn select(&mut self, now: Time, _dev: &dyn DeviceView) -> Option<ReqId> {
        self.plan(now).map(|p| p.id)
    }

    fn take(&mut self, now: Time, id: ReqId) -> Request {
        let planned = self.plan(now);
        let d = if self.sorted[0].get(id).is_some() { 0 } else { 1 };
        let rq = self.sorted[d].remove(id).unwrap_or_else(|| panic!("deadline: {id:?} is not queued"));
        let was = self.fifo[d].remove(&(self.expiry(&rq), id));
        debug_assert!(was, "FIFO lost {id:?}");
        let plan = match planned {
            Some(p) if p.id == id => p,
            _ => self.plan_foreign(&rq),
        };
        self.apply(plan, &rq);
        rq
    }

    fn get(&self, id: ReqId) -> Option<&Request> {
        self.sorted[0].get(id).or_else(|| self.sorted[1].get(id))
    }

    fn urgent(&self, now: Time) -> bool {
        DIRS.iter().any(|&d| self.fifo_head(d).is_some_and(|(t, _)| t <= now))
    }

    fn next_urgent_at(&self) -> Option<Time> {
        DIRS.iter().filter_map(|&d| self.fifo_head(d).map(|(t, _)| t)).min()
    }

    fn len(&self) -> usize {
        self.sorted[0].len() + self.sorted[1].len()
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

    fn wr(id: u64, sector: Sector, len: u32) -> Request {
        Request { dir: Dir::Write, sync: false, ..rq(id, sector, len) }
    }

    fn arriving(mut r: Request, t: Time) -> Request {
        r.arrival = t;
        r
    }

    fn with(f: impl FnOnce(&mut DeadlineParams)) -> Deadline {
        let mut p = DeadlineParams::default();
        f(&mut p);
        Deadline::new(p)
    }

    /// Dispatch `n` requests at `now`; their ids.
    fn order(p: &mut Deadline, now: Time, n: usize) -> Vec<u64> {
        let dev = FixedView::linear(0);
        (0..n)
            .map(|_| {
                let id = p.select(now, &dev).expect("something queued");
                p.check();
                p.take(now, id).id.0
            })
            .collect()
    }

    #[test]
    fn defaults_match_the_constants_and_linux() {
        let d = DeadlineParams::from_settings(&mut Settings::new()).unwrap();
        assert_eq!(d, DeadlineParams::default());
        assert_eq!(d.read_expire, Duration::from_millis(500));
        assert_eq!(d.write_expire, Duration::from_secs(5));
        assert_eq!((d.writes_starved, d.fifo_batch, d.front_merges), (2, 16, true));
    }

    #[test]
    fn settings_parse_with_units_and_reject_a_zero_batch() {
        let mut s = Settings::new();
        for kv in ["read_expire=250", "write_expire=2s", "writes_starved=0", "fifo_batch=1", "front_merges=0"]
        {
            s.push_kv(kv).unwrap();
        }
        let d = DeadlineParams::from_settings(&mut s).unwrap();
        assert_eq!(d.read_expire, Duration::from_millis(250));
        assert_eq!(d.write_expire, Duration::from_secs(2));
        assert_eq!((d.writes_starved, d.fifo_batch, d.front_merges), (0, 1, false));
        assert!(s.unused().is_empty());
        let mut s = Settings::new();
        s.push_kv("fifo_batch=0").unwrap();
        let e = DeadlineParams::from_settings(&mut s).unwrap_err().to_string();
        assert!(e.contains("fifo_batch"), "{e}");
    }

    #[test]
    fn one_way_elevator_then_wrap_to_the_oldest() {
        let mut p = Deadline::new(DeadlineParams::default());
        for (id, s) in [(1, 500), (2, 100), (3, 300)] {
            p.add(Time(0), rq(id, s, 8));
        }
        assert_eq!(order(&mut p, ms(1), 2), vec![2, 3]);
        // behind the sweep (200) and ahead of it (600): the sweep goes on up, then wraps to
        // the FIFO head rather than the lowest sector
        p.add(ms(2), arriving(rq(4, 200, 8), ms(2)));
        p.add(ms(2), arriving(rq(5, 600, 8), ms(2)));
        p.add(ms(3), arriving(rq(6, 50, 8), ms(3)));
        assert_eq!(order(&mut p, ms(4), 4), vec![1, 5, 4, 6]);
        assert!(p.is_empty());
    }

    #[test]
    fn an_expired_fifo_head_takes_over_at_a_new_batch() {
        let mut p = with(|d| d.fifo_batch = 1);
        let dev = FixedView::linear(0);
        p.add(Time(0), rq(1, 1000, 8));
        p.add(ms(100), arriving(rq(2, 10, 8), ms(100)));
        p.add(ms(100), arriving(rq(3, 20, 8), ms(100)));
        assert_eq!(order(&mut p, ms(100), 1), vec![2]);
        assert!(!p.urgent(ms(499)));
        assert_eq!(p.next_urgent_at(), Some(ms(500)));
        // before the deadline the sweep goes on; select does not commit
        assert_eq!(p.select(ms(499), &dev), Some(ReqId(3)));
        assert_eq!(p.select(ms(499), &dev), Some(ReqId(3)));
        // at it, the oldest read wins over the nearer one
        assert!(p.urgent(ms(500)));
        assert_eq!(order(&mut p, ms(500), 2), vec![1, 3]);
    }

    #[test]
    fn a_running_batch_ignores_expiry_and_the_other_direction() {
        let mut p = with(|d| d.fifo_batch = 3);
        for (id, s) in [(1, 100), (2, 200), (3, 300), (4, 400), (5, 500)] {
            p.add(Time(0), wr(id, s, 8));
        }
        assert_eq!(order(&mut p, ms(1), 1), vec![1]);
        p.add(ms(1), arriving(rq(10, 10, 8), ms(1)));
        p.add(ms(1), arriving(rq(11, 20, 8), ms(1)));
        // the write batch runs to fifo_batch even with the reads long expired, then reads
        // (preferred) sweep from their own latest position, then writes resume
        assert_eq!(order(&mut p, Time(u64::MAX / 2), 6), vec![2, 3, 10, 11, 4, 5]);
    }

    #[test]
    fn writes_get_a_batch_after_writes_starved_read_batches() {
        let mut p = with(|d| d.fifo_batch = 1);
        for i in 0..6 {
            p.add(Time(0), rq(i, 1000 + i * 8, 8));
            p.add(Time(0), wr(100 + i, 5000 + i * 8, 8));
        }
        // #0 continues the initial (empty) read batch, as in Linux where `batching` starts
        // at 0; then two read batches chosen over the writes, then a write batch
        assert_eq!(order(&mut p, ms(1), 9), vec![0, 1, 2, 100, 3, 4, 101, 5, 102]);
        let mut p = with(|d| (d.fifo_batch, d.writes_starved) = (1, 0));
        for i in 0..2 {
            p.add(Time(0), rq(i, 1000 + i * 8, 8));
            p.add(Time(0), wr(100 + i, 5000 + i * 8, 8));
        }
        assert_eq!(order(&mut p, ms(1), 4), vec![0, 100, 101, 1], "0: writes first while any are pending");
    }

    #[test]
    fn merges_back_and_front_rekey_the_sort_and_keep_the_earlier_expiry() {
        let mut p = Deadline::new(DeadlineParams::default());
        p.add(Time(0), rq(1, 100, 8));
        p.add(Time(0), rq(2, 94, 1));
        p.add(Time(0), wr(3, 108, 8));
        assert_eq!(p.merge(ms(1), &rq(4, 108, 8), 1024), Some(ReqId(1)), "back merge, same direction");
        assert_eq!(p.merge(ms(1), &wr(5, 92, 8), 1024), None, "a write does not join a read");
        assert_eq!(p.merge(ms(1), &rq(5, 92, 8), 1024), Some(ReqId(1)), "front merge");
        assert_eq!(p.merge(ms(1), &rq(6, 116, 1020), 1024), None, "size bound");
        let r1 = *p.get(ReqId(1)).unwrap();
        assert_eq!((r1.sector, r1.len), (92, 24));
        p.check();
        // #1 now starts at 92, before #2 at 94: the sort was re-keyed
        assert_eq!(order(&mut p, ms(2), 2), vec![1, 2]);

        // a part stamped earlier than the queued request gives it the earlier expiry
        p.add(ms(10), arriving(wr(7, 200, 8), ms(10)));
        assert_eq!(p.merge(ms(10), &wr(8, 192, 8), 1024), Some(ReqId(7)));
        assert_eq!(p.merge(ms(10), &wr(9, 208, 8), 1024), Some(ReqId(7)), "arrived now: expiry kept");
        assert!(p.fifo[Dir::Write.index()].contains(&(Time(0) + WRITE_EXPIRE, ReqId(7))));
        p.check();
    }

    #[test]
    fn front_merges_off_disables_only_front_merges() {
        let mut p = with(|d| d.front_merges = false);
        p.add(Time(0), rq(1, 100, 8));
        assert_eq!(p.merge(Time(0), &rq(2, 92, 8), 1024), None);
        assert_eq!(p.merge(Time(0), &rq(3, 108, 8), 1024), Some(ReqId(1)));
        assert_eq!(p.get(ReqId(1)).unwrap().len, 16);
    }

    #[test]
    fn a_foreign_take_continues_or_starts_a_batch() {
        let mut p = with(|d| d.fifo_batch = 2);
        let dev = FixedView::linear(0);
        for (id, s) in [(1, 10), (2, 20), (3, 30), (4, 40)] {
            p.add(Time(0), rq(id, s, 8));
        }
        p.add(Time(0), wr(9, 5, 8));
        assert_eq!(p.select(ms(1), &dev), Some(ReqId(1)));
        // a framework dispatches #3 instead: the read batch continues from its end
        assert_eq!(p.take(ms(1), ReqId(3)).id, ReqId(3));
        assert_eq!((p.batching, p.latest_pos[0]), (1, 38));
        assert_eq!(order(&mut p, ms(1), 1), vec![4]);
        // the batch is full; taking a write starts a write batch and ends the starvation
        p.starved = 2;
        p.take(ms(1), ReqId(9));
        assert_eq!((p.last_dir, p.batching, p.starved), (Dir::Write, 1, 0));
        // no writes left: the write batch cannot continue, reads wrap to the FIFO head
        assert_eq!(order(&mut p, ms(1), 2), vec![1, 2]);
    }

    #[test]
    fn urgency_follows_the_earliest_fifo_head() {
        let mut p = Deadline::new(DeadlineParams::default());
        assert_eq!(p.next_urgent_at(), None);
        assert!(!p.urgent(Time::MAX));
        p.add(Time(0), wr(1, 0, 8));
        p.add(ms(1), arriving(rq(2, 8, 8), ms(1)));
        assert_eq!(p.next_urgent_at(), Some(ms(501)));
        assert!(!p.urgent(ms(500)) && p.urgent(ms(501)));
    }

    /// Dispatches until a read whose expiry has passed at a decision point is served,
    /// counted from that point, its own dispatch included; `None` if no read expired.
    /// Err(why) if an expired read FIFO head waited more than `bound` dispatches.
    fn expired_read_wait(p: DeadlineParams, salt: u64, ops: &[Op], bound: usize) -> Result<usize, String> {
        let mut d = Driver::new(Deadline::new(p), salt, Deadline::check);
        // the read FIFO head, expired, being watched: (id, dispatches since it was seen)
        let mut watch: Option<(ReqId, usize)> = None;
        let mut worst = 0;
        let mut dispatch = |d: &mut Driver<Deadline>, watch: &mut Option<(ReqId, usize)>| {
            if watch.is_none() {
                // the driver's own model: earliest arrival among queued reads (arrivals
                // are stamped `now`, so this is the FIFO head and no arrival displaces it)
                let head = d.queued.values().filter(|r| r.dir == Dir::Read).min_by_key(|r| (r.arrival, r.id));
                *watch = head.filter(|r| r.arrival + p.read_expire <= d.now).map(|r| (r.id, 0));
            }
            let Some(got) = d.dispatch() else { return Ok(()) };
            if let Some((id, n)) = watch {
                *n += 1;
                worst = worst.max(*n);
                if got.id == *id {
                    *watch = None;
                } else if *n >= bound {
                    return Err(format!("expired read {id:?} not served within {bound} dispatches"));
                }
            }
            Ok(())
        };
        for op in ops {
            match op {
                Op::Dispatch => dispatch(&mut d, &mut watch)?,
                other => {
                    d.step(other);
                }
            }
        }
        while !d.queued.is_empty() {
            dispatch(&mut d, &mut watch)?;
        }
        d.drain();
        Ok(worst)
    }

    fn small(fifo_batch: u32, writes_starved: u32) -> DeadlineParams {
        DeadlineParams {
            read_expire: Duration(50),
            write_expire: Duration(200),
            writes_starved,
            fifo_batch,
            front_merges: true,
        }
    }

    #[test]
    fn the_expired_read_check_can_fail() {
        let read = |sector| Op::Arrive { sector, len: 8, write: false, age: 0 };
        let mut ops: Vec<Op> =
            (0..10).map(|i| Op::Arrive { sector: 1000 + 100 * i, len: 8, write: true, age: 0 }).collect();
        // #A sweeps first; #B starts a read batch over the pending writes (starved = 1); #R
        // expires behind the sweep
        ops.extend([read(500), Op::Dispatch, read(0), Op::Dispatch, read(0), Op::Advance(100)]);
        ops.extend(vec![Op::Dispatch; 12]);
        assert_eq!(expired_read_wait(small(2, 1), 7, &ops, 5), Ok(3), "a write batch of 2, then #R");
        // writes_starved = 0: pending writes always win, the expired read waits for all ten
        assert!(expired_read_wait(small(2, 0), 7, &ops, 5).is_err());
    }

    proptest! {
        #[test]
        fn every_request_is_taken_once(
            ops in ops(300, 1024, true, 400, 100),
            salt in any::<u64>(),
            fifo_batch in 1u32..6,
            writes_starved in 0u32..4,
            front_merges in any::<bool>(),
        ) {
            let p = DeadlineParams { front_merges, ..small(fifo_batch, writes_starved) };
            let mut d = Driver::new(Deadline::new(p), salt, Deadline::check);
            for op in &ops {
                d.step(op);
            }
            d.drain();
        }

        #[test]
        fn an_expired_read_is_served_within_one_batch(
            ops in ops(300, 4096, false, 0, 40),
            salt in any::<u64>(),
            fifo_batch in 1u32..8,
        ) {
            let bound = fifo_batch as usize + 1;
            expired_read_wait(small(fifo_batch, 2), salt, &ops, bound).map_err(TestCaseError::fail)?;
        }

        #[test]
        fn with_writes_an_expired_read_waits_at_most_one_write_batch_more(
            ops in ops(300, 4096, true, 0, 40),
            salt in any::<u64>(),
            fifo_batch in 1u32..8,
            writes_starved in 1u32..4,
        ) {
            let bound = 2 * fifo_batch as usize + 1;
            expired_read_wait(small(fifo_batch, writes_starved), salt, &ops, bound).map_err(TestCaseError::fail)?;
        }
    }
}

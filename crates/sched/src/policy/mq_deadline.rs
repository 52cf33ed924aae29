//! `mq-deadline`: Linux 6.1's mq-deadline (block/mq-deadline.c) — deadline's one-way
//! batches and expiry times, kept per I/O priority class, with lower classes served only
//! when the higher ones have nothing outstanding, and an aging rule so they still get the
//! disk. The papers' `deadline` (Linux 2.6, [`super::deadline`]) has one class.
//!
//! Per class (real time, best effort, idle: an issuer's class comes from
//! [`crate::Scheduler::set_ioprio`], fio's `prioclass`; best effort when never given) and
//! per direction, every queued request sits in a tree sorted by start sector and in a FIFO
//! ordered by expiry (`arrival + read_expire` or `+ write_expire`). Each class also keeps,
//! per direction, `next_rq`: the request that followed the last one dispatched in sector
//! order when it was dispatched (a request arriving later in between is passed over until
//! the sweep wraps, as in 6.1). The batch state — direction `last_dir`, `batching`,
//! `starved` — is one for all classes.
//!
//! A class's dispatch (`__dd_dispatch_request(per_prio, latest_start)`):
//! 1. **Batch continuation**: `next_rq[last_dir]`, while `batching < fifo_batch`.
//! 2. **New batch: direction**: reads, unless writes are queued too and `starved++ >=
//!    writes_starved` (then writes, `starved = 0`); writes when only writes are queued.
//! 3. **New batch: request**: the direction's FIFO head when it has expired or when
//!    `next_rq` is empty, else `next_rq`; `last_dir` = direction, `batching = 0`.
//! 4. The request is dispatched only if it arrived at or before `latest_start`; either way
//!    the state changes of steps 2 and 3 stay (as in Linux).
//!
//! A dispatch (`dd_dispatch_request`): when requests of two classes or more are
//! outstanding, first the **aged** ones — for best effort, then idle, a dispatch with
//! `latest_start = now - prio_aging_expire` (a request of a lower class that has waited that
//! long goes before everything); then the classes from real time down, with `latest_start =
//! now`, stopping at the first class that dispatched or that has requests outstanding
//! (queued, or dispatched and not completed: Linux's `dd_queued`). So a lower class waits
//! while a higher one has a request at the disk.
//!
//! `async_depth`: Linux gives writes and asynchronous reads at most `async_depth` of the
//! queue's request tags: past that many (queued or at the device), the next one's issuer
//! waits for a tag before its request reaches the scheduler. Here such a request is held
//! outside the queues, in arrival order, until one of those completes; it can still take
//! a merge meanwhile (a bio merges before it needs a tag), and its expiry counts from its
//! arrival, not from its admission. Linux's default is 3/4 of `nr_requests` (64 for a
//! single-queue disk): 48.
//!
//! Merging as in deadline, within the incoming request's class. `select` only looks; `take`
//! commits the state the dispatch sequence leaves (aged attempts included). A `take` of an
//! id other than the selection (a framework dispatching another request) starts or
//! continues a batch in its direction as deadline's does.
//!
//! Tunables (Linux sysfs names and defaults): `read_expire`, `write_expire`,
//! `writes_starved`, `fifo_batch`, `front_merges` (as deadline), `async_depth` (48) and
//! `prio_aging_expire` (10 s; 0 turns aging off).

use std::collections::{BTreeSet, HashMap, VecDeque};

use super::deadline::DeadlineParams;
use super::{Policy, SortedQueue};
use crate::device::DeviceView;
use crate::ioprio::{IoClass, IoPrio};
use crate::params::{ParamError, Settings, TimeUnit, Tunable, Unit};
use crate::request::{ContextId, Dir, ReqId, Request};
use crate::time::{Duration, Time};

/// Writes and asynchronous reads queued or at the device at once (Linux: 3/4 of
/// `nr_requests` = 64).
pub const ASYNC_DEPTH: u32 = 48;
/// How long a lower-class request may wait before it is served ahead of higher classes.
pub const PRIO_AGING_EXPIRE: Duration = Duration::from_secs(10);

/// The tunables of mq-deadline's own (the deadline ones are shared).
pub mod knob {
    use super::*;

    pub const ASYNC_DEPTH: Tunable = Tunable {
        name: "async_depth",
        unit: Unit::Count { what: "requests", min: 1, max: u32::MAX as u64, default: 48 },
        doc: "writes and asynchronous reads queued or at the device at once; more wait for a completion (Linux's tag bound)",
    };
    pub const PRIO_AGING_EXPIRE: Tunable = Tunable {
        name: "prio_aging_expire",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(10000) },
        doc: "a lower-priority request that has waited this long goes first (0: never)",
    };
}

/// Every tunable mq-deadline reads: deadline's, then its own.
pub const TUNABLES: &[Tunable] = &[
    super::deadline::knob::READ_EXPIRE,
    super::deadline::knob::WRITE_EXPIRE,
    super::deadline::knob::WRITES_STARVED,
    super::deadline::knob::FIFO_BATCH,
    super::deadline::knob::FRONT_MERGES,
    knob::ASYNC_DEPTH,
    knob::PRIO_AGING_EXPIRE,
];

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MqDeadlineParams {
    pub deadline: DeadlineParams,
    /// At least 1.
    pub async_depth: u32,
    /// Zero: no aging.
    pub prio_aging_expire: Duration,
}

impl Default for MqDeadlineParams {
    fn default() -> Self {
        MqDeadlineParams {
            deadline: DeadlineParams::default(),
            async_depth: ASYNC_DEPTH,
            prio_aging_expire: PRIO_AGING_EXPIRE,
        }
    }
}

impl MqDeadlineParams {
    pub fn from_settings(s: &mut Settings) -> Result<Self, ParamError> {
        Ok(MqDeadlineParams {
            deadline: DeadlineParams::from_settings(s)?,
            async_depth: s.count(&knob::ASYNC_DEPTH)? as u32,
            prio_aging_expire: s.time(&knob::PRIO_AGING_EXPIRE)?,
        })
    }
}

/// One class's requests.
#[derive(Default)]
struct PerPrio {
    /// Per direction: by start sector ...
    sorted: [SortedQueue; 2],
    /// ... and by `(expiry, id)`.
    fifo: [BTreeSet<(Time, ReqId)>; 2],
    /// Per direction: the sweep's next request.
    next_rq: [Option<ReqId>; 2],
    /// Queued, or dispatched and not completed (Linux `dd_queued`).
    outstanding: u32,
}

/// The batch state, one for every class.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Batch {
    last_dir: Dir,
    batching: u32,
    starved: u32,
}

/// A dispatch and the batch state it leaves.
#[derive(Copy, Clone, Debug)]
struct Plan {
    id: ReqId,
    after: Batch,
}

pub struct MqDeadline {
    params: MqDeadlineParams,
    /// By [`IoClass::index`].
    prio: [PerPrio; 3],
    batch: Batch,
    classes: HashMap<ContextId, IoClass>,
    /// Each queued request's class.
    class_of: HashMap<ReqId, usize>,
    /// Dispatched and not completed: class, and whether `async_depth` counts it.
    at_device: HashMap<ReqId, (usize, bool)>,
    /// Writes and asynchronous reads queued or at the device (`async_depth` bounds them).
    allocated: u32,
    /// Past `async_depth`: waiting for one of those to complete, with their class.
    waiting: VecDeque<(usize, Request)>,
}

const DIRS: [Dir; 2] = [Dir::Read, Dir::Write];

/// Held to `async_depth`: everything but synchronous reads (Linux `dd_limit_depth`).
fn limited(rq: &Request) -> bool {
    !(rq.sync && rq.dir == Dir::Read)
}

impl MqDeadline {
    pub fn new(params: MqDeadlineParams) -> Self {
        debug_assert!(params.deadline.fifo_batch >= 1 && params.async_depth >= 1);
        MqDeadline {
            params,
            prio: Default::default(),
            batch: Batch { last_dir: Dir::Read, batching: 0, starved: 0 },
            classes: HashMap::new(),
            class_of: HashMap::new(),
            at_device: HashMap::new(),
            allocated: 0,
            waiting: VecDeque::new(),
        }
    }

    fn expiry(&self, rq: &Request) -> Time {
        rq.arrival + self.params.deadline.expire(rq.dir)
    }

    fn class(&self, rq: &Request) -> usize {
        rq.ctx.and_then(|c| self.classes.get(&c)).copied().unwrap_or(IoClass::Be).index()
    }

    fn request(&self, class: usize, id: ReqId) -> &Request {
        let p = &self.prio[class];
        p.sorted[0].get(id).or_else(|| p.sorted[1].get(id)).expect("queued")
    }

    /// One class's dispatch with requests that arrived by `latest_start`, updating `b` as
    /// Linux's `__dd_dispatch_request` updates the batch state.
    fn dispatch_from(&self, class: usize, now: Time, latest_start: Time, b: &mut Batch) -> Option<ReqId> {
        let p = &self.prio[class];
        let cont = p.next_rq[b.last_dir.index()].filter(|_| b.batching < self.params.deadline.fifo_batch);
        let id = match cont {
            Some(id) => id,
            None => {
                let reads = !p.fifo[Dir::Read.index()].is_empty();
                let writes = !p.fifo[Dir::Write.index()].is_empty();
                let dir = if reads {
                    let starve = writes && {
                        let s = b.starved;
                        b.starved = b.starved.saturating_add(1);
                        s >= self.params.deadline.writes_starved
                    };
                    if starve {
                        b.starved = 0;
                        Dir::Write
                    } else {
                        Dir::Read
                    }
                } else if writes {
                    b.starved = 0;
                    Dir::Write
                } else {
                    return None;
                };
                let (expiry, head) = *p.fifo[dir.index()].first().expect("the direction has requests");
                let id = match p.next_rq[dir.index()] {
                    Some(next) if expiry > now => next,
                    _ => head,
                };
                b.last_dir = dir;
                b.batching = 0;
                id
            }
        };
        if self.request(class, id).arrival > latest_start {
            return None;
        }
        b.batching += 1;
        Some(id)
    }

    /// The next dispatch (Linux's `dd_dispatch_request`) and the state it leaves.
    fn plan(&self, now: Time) -> Option<Plan> {
        let mut b = self.batch;
        let busy = self.prio.iter().filter(|p| p.outstanding > 0).count();
        let aging = self.params.prio_aging_expire;
        if busy >= 2 && aging > Duration::ZERO && now.0 >= aging.0 {
            let latest = Time(now.0 - aging.0);
            for class in [IoClass::Be.index(), IoClass::Idle.index()] {
                if let Some(id) = self.dispatch_from(class, now, latest, &mut b) {
                    return Some(Plan { id, after: b });
                }
            }
        }
        for class in 0..3 {
            if let Some(id) = self.dispatch_from(class, now, now, &mut b) {
                return Some(Plan { id, after: b });
            }
            if self.prio[class].outstanding > 0 {
                break;
            }
        }
        None
    }

    /// Put `rq` (class `c`) in its class's queues.
    fn insert(&mut self, c: usize, rq: Request) {
        let expiry = self.expiry(&rq);
        let p = &mut self.prio[c];
        p.fifo[rq.dir.index()].insert((expiry, rq.id));
        p.sorted[rq.dir.index()].insert(rq);
        p.outstanding += 1;
        self.class_of.insert(rq.id, c);
    }

    /// The state a dispatch of `rq` (class `class`), not the planned one, leaves.
    fn foreign(&self, class: usize, rq: &Request) -> Batch {
        let b = self.batch;
        if rq.dir == b.last_dir && b.batching < self.params.deadline.fifo_batch {
            return Batch { batching: b.batching + 1, ..b };
        }
        let writes = !self.prio[class].fifo[Dir::Write.index()].is_empty();
        let starved = match rq.dir {
            Dir::Write => 0,
            Dir::Read if writes => b.starved.saturating_add(1),
            Dir::Read => b.starved,
        };
        Batch { last_dir: rq.dir, batching: 1, starved }
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut queued = 0;
        for (c, p) in self.prio.iter().enumerate() {
            for d in DIRS {
                let (q, f) = (&p.sorted[d.index()], &p.fifo[d.index()]);
                q.check();
                assert_eq!(q.len(), f.len());
                for rq in q.iter() {
                    assert_eq!(rq.dir, d);
                    assert!(f.contains(&(self.expiry(rq), rq.id)));
                    assert_eq!(self.class_of.get(&rq.id), Some(&c));
                }
                if let Some(n) = p.next_rq[d.index()] {
                    assert!(q.get(n).is_some(), "next_rq {n:?} is not queued");
                }
                queued += q.len();
            }
            let at = self.at_device.values().filter(|(k, _)| *k == c).count();
            assert_eq!(p.outstanding as usize, p.sorted[0].len() + p.sorted[1].len() + at);
        }
        assert_eq!(queued, self.class_of.len());
        let queued_limited = self
            .prio
            .iter()
            .flat_map(|p| p.sorted.iter())
            .flat_map(|q| q.iter())
            .filter(|r| limited(r))
            .count();
        let at_device_limited = self.at_device.values().filter(|(_, a)| *a).count();
        assert_eq!(self.allocated as usize, queued_limited + at_device_limited);
        assert!(self.allocated <= self.params.async_depth);
        assert!(self.waiting.is_empty() || self.allocated == self.params.async_depth);
    }
}

impl Policy for MqDeadline {
    fn name(&self) -> &'static str {
        "mq-deadline"
    }

    fn merge(&mut self, _now: Time, rq: &Request, max_sectors: u32) -> Option<ReqId> {
        let (c, d) = (self.class(rq), rq.dir.index());
        let front = self.params.deadline.front_merges;
        let q = &mut self.prio[c].sorted[d];
        let (id, before) = q.back_merge(rq, max_sectors).or_else(|| {
            if front {
                q.front_merge(rq, max_sectors)
            } else {
                None
            }
        })?;
        let merged = *self.prio[c].sorted[d].get(id).expect("just merged");
        if merged.arrival != before {
            // `rq` arrived first: the merged request keeps the earlier expiry
            let old = before + self.params.deadline.expire(merged.dir);
            let was = self.prio[c].fifo[d].remove(&(old, id));
            debug_assert!(was, "FIFO lost {id:?}");
            self.prio[c].fifo[d].insert((self.expiry(&merged), id));
        }
        Some(id)
    }

    fn add(&mut self, _now: Time, rq: Request) {
        let c = self.class(&rq);
        if limited(&rq) {
            if self.allocated >= self.params.async_depth {
                self.waiting.push_back((c, rq));
                return;
            }
            self.allocated += 1;
        }
        self.insert(c, rq);
    }

    fn select(&mut self, now: Time, _dev: &dyn DeviceView) -> Option<ReqId> {
        self.plan(now).map(|p| p.id)
    }

    fn take(&mut self, now: Time, id: ReqId) -> Request {
        let c = *self.class_of.get(&id).unwrap_or_else(|| panic!("mq-deadline: {id:?} is not queued"));
        let after = match self.plan(now) {
            Some(p) if p.id == id => p.after,
            _ => self.foreign(c, self.request(c, id)),
        };
        let expiry = self.expiry(self.request(c, id));
        let p = &mut self.prio[c];
        let d = if p.sorted[0].get(id).is_some() { 0 } else { 1 };
        let rq = p.sorted[d].remove(id).expect("queued");
        let was = p.fifo[d].remove(&(expiry, id));
        debug_assert!(was, "FIFO lost {id:?}");
        // the sweep goes on from the request after this one (Linux `deadline_latter_request`)
        p.next_rq[d] = p.sorted[d].first_after(rq.sector, id);
        self.class_of.remove(&id);
        self.at_device.insert(id, (c, limited(&rq)));
        self.batch = after;
        rq
    }

    fn get(&self, id: ReqId) -> Option<&Request> {
        match self.class_of.get(&id) {
            Some(&c) => {
                let p = &self.prio[c];
                p.sorted[0].get(id).or_else(|| p.sorted[1].get(id))
            }
            None => self.waiting.iter().map(|(_, r)| r).find(|r| r.id == id),
        }
    }

    fn urgent(&self, now: Time) -> bool {
        self.next_urgent_at().is_some_and(|t| t <= now)
    }

    fn next_urgent_at(&self) -> Option<Time> {
        self.prio.iter().flat_map(|p| DIRS.map(|d| p.fifo[d.index()].first().map(|k| k.0))).flatten().min()
    }

    fn completed(&mut self, _now: Time, rq: &Request) {
        if let Some((c, lim)) = self.at_device.remove(&rq.id) {
            self.prio[c].outstanding -= 1;
            if lim {
                // its tag goes to the first request waiting for one
                match self.waiting.pop_front() {
                    Some((c, next)) => self.insert(c, next),
                    None => self.allocated -= 1,
                }
            }
        }
    }

    fn set_ioprio(&mut self, ctx: ContextId, prio: IoPrio) {
        self.classes.insert(ctx, prio.class);
    }

    fn len(&self) -> usize {
        self.class_of.len() + self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::testutil::{ops, rq, Driver, FixedView};

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    const RT: ContextId = ContextId(1);
    const BE: ContextId = ContextId(2);
    const IDLE: ContextId = ContextId(3);

    fn classed() -> MqDeadline {
        let mut p = MqDeadline::new(MqDeadlineParams::default());
        p.set_ioprio(RT, IoPrio { class: IoClass::Rt, level: 0 });
        p.set_ioprio(BE, IoPrio { class: IoClass::Be, level: 4 });
        p.set_ioprio(IDLE, IoPrio { class: IoClass::Idle, level: 7 });
        p
    }

    fn from(ctx: ContextId, id: u64, sector: u64, at: Time) -> Request {
        Request { ctx: Some(ctx), arrival: at, ..rq(id, sector, 8) }
    }

    fn next(p: &mut MqDeadline, now: Time) -> Option<u64> {
        let id = p.select(now, &FixedView::linear(0))?;
        let r = p.take(now, id);
        p.check();
        Some(r.id.0)
    }

    #[test]
    fn defaults_match_linux_and_settings_parse() {
        let d = MqDeadlineParams::from_settings(&mut Settings::new()).unwrap();
        assert_eq!(d, MqDeadlineParams::default());
        assert_eq!((d.async_depth, d.prio_aging_expire), (48, Duration::from_secs(10)));
        assert_eq!(d.deadline, DeadlineParams::default());
        let mut s = Settings::new();
        for kv in ["async_depth=4", "prio_aging_expire=2s", "fifo_batch=8"] {
            s.push_kv(kv).unwrap();
        }
        let d = MqDeadlineParams::from_settings(&mut s).unwrap();
        assert_eq!(
            (d.async_depth, d.prio_aging_expire, d.deadline.fifo_batch),
            (4, Duration::from_secs(2), 8)
        );
        let mut s = Settings::new();
        s.push_kv("async_depth=0").unwrap();
        assert!(MqDeadlineParams::from_settings(&mut s).unwrap_err().to_string().contains("async_depth"));
    }

    #[test]
    fn a_higher_class_goes_first_and_a_lower_one_waits_for_its_completions() {
        let mut p = classed();
        for (id, s) in [(1, 800), (2, 900)] {
            p.add(Time(0), from(BE, id, s, Time(0)));
        }
        for (id, s) in [(3, 100), (4, 200)] {
            p.add(Time(0), from(RT, id, s, Time(0)));
        }
        p.add(Time(0), from(IDLE, 5, 0, Time(0)));
        assert_eq!(next(&mut p, ms(1)), Some(3));
        assert_eq!(next(&mut p, ms(1)), Some(4));
        // RT's requests are at the device: best effort waits for them
        assert_eq!(next(&mut p, ms(1)), None);
        p.completed(ms(2), &from(RT, 3, 100, Time(0)));
        assert_eq!(next(&mut p, ms(2)), None, "one RT request is still at the device");
        p.completed(ms(3), &from(RT, 4, 200, Time(0)));
        assert_eq!(next(&mut p, ms(3)), Some(1));
        assert_eq!(next(&mut p, ms(3)), Some(2));
        assert_eq!(next(&mut p, ms(3)), None, "idle waits for best effort");
        for id in [1, 2] {
            p.completed(ms(4), &from(BE, id, 0, Time(0)));
        }
        assert_eq!(next(&mut p, ms(4)), Some(5));
    }

    #[test]
    fn a_request_waiting_past_prio_aging_expire_goes_before_higher_classes() {
        let mut p = classed();
        p.add(Time(0), from(BE, 1, 900, Time(0)));
        // real time keeps the device busy: a new request every 250 ms, each served at once
        let dev = FixedView::linear(0);
        let mut served = None;
        for i in 0..60u64 {
            let now = ms(250 * i);
            p.add(now, from(RT, 10 + i, i * 8, now));
            let id = p.select(now, &dev).expect("something dispatches");
            let r = p.take(now, id);
            p.check();
            if r.id == ReqId(1) {
                served = Some(now);
                break;
            }
            p.completed(now, &r);
        }
        // best effort went first once it had waited prio_aging_expire (10 s)
        assert_eq!(served, Some(ms(10_000)));
    }

    #[test]
    fn without_aging_a_lower_class_starves_while_the_higher_one_is_busy() {
        let mut p =
            MqDeadline::new(MqDeadlineParams { prio_aging_expire: Duration::ZERO, ..Default::default() });
        p.set_ioprio(RT, IoPrio { class: IoClass::Rt, level: 0 });
        p.add(Time(0), from(BE, 1, 900, Time(0)));
        for i in 0..100u64 {
            let t = ms(i * 200);
            p.add(t, from(RT, 10 + i, i * 8, t));
            assert_eq!(next(&mut p, t), Some(10 + i));
            p.completed(t, &from(RT, 10 + i, i * 8, t));
            p.add(t, from(RT, 1000 + i, 50_000 + i * 8, t));
            assert_eq!(next(&mut p, t), Some(1000 + i));
            p.completed(t, &from(RT, 1000 + i, 0, t));
        }
        assert_eq!(next(&mut p, ms(30_000)), Some(1), "served once RT is idle");
    }

    #[test]
    fn async_depth_holds_writes_back_but_not_synchronous_reads() {
        let mut p = MqDeadline::new(MqDeadlineParams { async_depth: 2, ..Default::default() });
        let wr = |id, s| Request { dir: Dir::Write, sync: false, ..rq(id, s, 8) };
        for (id, s) in [(1, 0), (2, 100), (3, 200)] {
            p.add(Time(0), wr(id, s));
        }
        assert_eq!(p.len(), 3);
        assert_eq!(next(&mut p, Time(0)), Some(1));
        assert_eq!(next(&mut p, Time(0)), Some(2));
        assert_eq!(next(&mut p, Time(0)), None, "two writes at the device: the third waits for a tag");
        p.add(Time(0), rq(4, 50, 8));
        assert_eq!(next(&mut p, Time(0)), Some(4), "a synchronous read needs no tag");
        p.completed(Time(1), &wr(1, 0));
        assert_eq!(next(&mut p, Time(1)), Some(3));
        assert!(p.is_empty());
    }

    #[test]
    fn the_sweep_passes_over_a_request_arriving_behind_next_rq() {
        // 6.1: next_rq is fixed when a request is dispatched; a request arriving between
        // the dispatched one and next_rq waits for the sweep to wrap
        let mut p = MqDeadline::new(MqDeadlineParams::default());
        for (id, s) in [(1, 0), (2, 1000), (3, 5000)] {
            p.add(Time(0), rq(id, s, 8));
        }
        assert_eq!(next(&mut p, Time(0)), Some(1));
        p.add(Time(0), rq(4, 500, 8));
        assert_eq!(next(&mut p, Time(0)), Some(2));
        assert_eq!(next(&mut p, Time(0)), Some(3));
        assert_eq!(next(&mut p, Time(0)), Some(4));
    }

    #[test]
    fn merges_stay_within_a_class() {
        let mut p = classed();
        p.add(Time(0), from(RT, 1, 0, Time(0)));
        assert_eq!(p.merge(Time(0), &from(BE, 2, 8, Time(0)), 1024), None);
        assert_eq!(p.merge(Time(0), &from(RT, 3, 8, Time(0)), 1024), Some(ReqId(1)));
        p.check();
    }

    /// Reads of one class arriving and dispatched at random: once the oldest read has
    /// expired, it is dispatched within the running batch and the next one's first
    /// dispatch (`fifo_batch + 1`), as in deadline. The error names the case.
    fn expired_read_wait(fifo_batch: u32, steps: &[(bool, u64, u64)]) -> Result<(), String> {
        let dp = DeadlineParams { fifo_batch, read_expire: Duration(1_000), ..DeadlineParams::default() };
        let mut p = MqDeadline::new(MqDeadlineParams { deadline: dp, ..Default::default() });
        let dev = FixedView::linear(0);
        let (mut now, mut id) = (Time(0), 0u64);
        // the oldest queued read, and dispatches since it expired
        let mut waited: Option<(ReqId, usize)> = None;
        for &(arrive, sector, dt) in steps {
            if arrive {
                p.add(now, Request { arrival: now, ..rq(id, sector * 64, 8) });
                id += 1;
            } else if let Some(sel) = p.select(now, &dev) {
                p.take(now, sel);
                if let Some((oldest, n)) = &mut waited {
                    if *oldest == sel {
                        waited = None;
                    } else {
                        *n += 1;
                        if *n > fifo_batch as usize {
                            return Err(format!("an expired read waited {n} dispatches"));
                        }
                    }
                }
            }
            now += Duration(dt);
            if waited.is_none() {
                let head = p.prio[IoClass::Be.index()].fifo[0].first().copied();
                if let Some((expiry, oldest)) = head.filter(|(e, _)| *e <= now) {
                    let _ = expiry;
                    waited = Some((oldest, 0));
                }
            }
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn an_expired_read_is_served_within_one_batch(
            steps in prop::collection::vec((any::<bool>(), 0u64..500, 0u64..400), 1..400),
            fifo_batch in 1u32..8,
        ) {
            expired_read_wait(fifo_batch, &steps).map_err(TestCaseError::fail)?;
        }

        #[test]
        fn every_request_is_taken_once(
            ops in ops(300, 1024, true, 400, 100),
            salt in any::<u64>(),
            fifo_batch in 1u32..6,
        ) {
            let dp = DeadlineParams { fifo_batch, ..DeadlineParams::default() };
            let p = MqDeadline::new(MqDeadlineParams { deadline: dp, async_depth: u32::MAX, ..Default::default() });
            let mut d = Driver::new(p, salt, MqDeadline::check);
            for op in &ops {
                d.step(op);
            }
            d.drain();
        }

        /// Classes, completions and time at random: a lower class is dispatched only when
        /// no higher class has a request outstanding, or when it has waited past
        /// `prio_aging_expire`; nothing is held back without a reason; everything is
        /// served once.
        #[test]
        fn classes_are_served_in_order_or_aged(
            steps in prop::collection::vec((0u8..5, 0u64..64, 0u8..3, 0u64..3_000_000_000), 1..300),
            aging_ms in prop_oneof![Just(0u64), 1u64..4000],
            async_depth in 1u32..4,
        ) {
            let mut p = MqDeadline::new(MqDeadlineParams {
                prio_aging_expire: Duration::from_millis(aging_ms),
                async_depth,
                ..Default::default()
            });
            for (c, class) in [(RT, IoClass::Rt), (BE, IoClass::Be), (IDLE, IoClass::Idle)] {
                p.set_ioprio(c, IoPrio { class, level: 0 });
            }
            let ctxs = [RT, BE, IDLE];
            let (mut now, mut next_id) = (Time(0), 0u64);
            let mut device: Vec<Request> = Vec::new();
            let mut queued = 0usize;
            let dev = FixedView::linear(0);
            let dispatch = |p: &mut MqDeadline, now: Time, device: &mut Vec<Request>, queued: &mut usize| -> Result<bool, TestCaseError> {
                let outstanding: Vec<u32> = p.prio.iter().map(|x| x.outstanding).collect();
                let Some(id) = p.select(now, &dev) else {
                    if *queued > 0 {
                        // held back: a higher class is at the device, or async_depth is full
                        let lowest = (0..3).find(|&c| p.prio[c].sorted.iter().any(|q| q.len() > 0));
                        let higher_busy = lowest.is_some_and(|l| (0..l).any(|c| outstanding[c] > 0));
                        prop_assert!(higher_busy || p.waiting.len() == *queued,
                            "nothing dispatched with {queued} queued");
                    }
                    return Ok(false);
                };
                let c = p.class_of[&id];
                let r = p.take(now, id);
                p.check();
                let aged = aging_ms > 0 && now.0 >= aging_ms * 1_000_000 && r.arrival.0 <= now.0 - aging_ms * 1_000_000;
                prop_assert!(aged || (0..c).all(|h| outstanding[h] == 0),
                    "class {c} dispatched while a higher one had {outstanding:?}");
                device.push(r);
                *queued -= 1;
                Ok(true)
            };
            for (op, sector, class, dt) in steps {
                match op {
                    0 | 1 => {
                        let ctx = ctxs[class as usize];
                        let r = Request {
                            ctx: Some(ctx),
                            arrival: now,
                            dir: if sector % 3 == 0 { Dir::Write } else { Dir::Read },
                            sync: sector % 3 != 0,
                            ..rq(next_id, sector * 64, 8)
                        };
                        next_id += 1;
                        if p.merge(now, &r, 1024).is_none() {
                            p.add(now, r);
                            queued += 1;
                        }
                    }
                    2 => { dispatch(&mut p, now, &mut device, &mut queued)?; }
                    3 => if !device.is_empty() {
                        let r = device.remove((dt % device.len() as u64) as usize);
                        p.completed(now, &r);
                    },
                    _ => now += Duration(dt),
                }
                p.check();
            }
            // drain: complete everything at the device, dispatch, repeat
            let mut guard = 10_000;
            while queued > 0 {
                for r in device.drain(..) {
                    p.completed(now, &r);
                }
                while dispatch(&mut p, now, &mut device, &mut queued)? {}
                guard -= 1;
                prop_assert!(guard > 0, "the queue does not drain");
            }
            prop_assert!(p.is_empty());
        }
    }
}

//! `disksim`: DiskSim 4.0's driver queue (`disksim_ioqueue`), so that a DiskSim experiment
//! runs with the queue its file describes.
//!
//! Restated from DiskSim 4.0's `disksim_ioqueue.c` (its behaviour, not its code):
//!
//! * **Three subqueues**, asked in a fixed order: *priority*, then *timeout*, then *base*.
//!   The first that holds a waiting request chooses, by its own algorithm and with its own
//!   scan state (last block, direction).
//! * **Priority scheme** (`disksim_priority_scheme`, DiskSim's `Scheduling priority
//!   scheme`): 0 (all equal) queues every request in the base subqueue; 1 (two queues)
//!   queues the synchronous ones in the priority subqueue. A DiskSim synthetic run marks its
//!   time-critical and time-limited requests synchronous, as DiskSim's two queues take
//!   exactly those; its background requests are not. Other sources mark what they mark
//!   (a DiskSim trace's reads, fio's synchronous I/O), which DiskSim's traces do not carry:
//!   there the priority subqueue is headway's reading of the scheme, not DiskSim's.
//! * **Timeouts** (`disksim_timeout_scheme`): DiskSim counts a request's wait in clock
//!   ticks (`disksim_tick`, its process-flow clock interrupt, every 10 ms from time 0). At
//!   each tick every waiting request's count grows by one; once it exceeds
//!   `disksim_timeout_weight` the request moves. Scheme 1 moves it from the base subqueue
//!   to the timeout subqueue (all equal) or to the priority subqueue (two queues). Scheme 2
//!   moves it from the base to the timeout subqueue past half the weight (integer
//!   division), and from the timeout to the priority subqueue past the whole weight; the
//!   timeout subqueue goes first at each tick. Movers leave in their subqueue's order and
//!   join the other as new arrivals would.
//! * **Algorithms** (DiskSim's `Scheduling policy` numbers, one per subqueue):
//!   1. FCFS: arrival order.
//!   2. ELEVATOR_LBN: the nearest block in the current direction; reverse only when none is
//!      left that way.
//!   3. CYCLE_LBN (C-LOOK): the lowest block at or after the last one dispatched started,
//!      else the lowest.
//!   4. SSTF_LBN: the nearest block to where the last one dispatched ended, ahead or behind
//!      (ahead: the lowest at or past it; behind: the highest below it, the first queued of
//!      that block). A tie goes ahead, then behind, alternately.
//!
//!   Equal blocks keep arrival order. "Last block" is the start of the last request
//!   dispatched (ELEVATOR, CYCLE) or its end (SSTF); it starts at 0, going up.
//!
//! The ticks are applied lazily: before each arrival and each choice, every tick up to now
//! has moved what it moves, in tick order. No merging (DiskSim's `Sequential stream scheme`
//! 0), no waiting: a work-conserving policy.
//!
//! Invariant: every queued request is in exactly one subqueue and in `reqs`; each subqueue's
//! set holds `(key, seq, id)` with `key` its block (0 for FCFS) and `seq` its order of
//! joining.

use std::collections::BTreeSet;

use super::Policy;
use crate::device::DeviceView;
use crate::idmap::IdMap;
use crate::params::{ParamError, Settings, TimeUnit, Tunable, Unit};
use crate::request::{ReqId, Request, Sector};
use crate::time::{Duration, Time};

/// The tunables, as `headway tunables` lists them.
pub mod knob {
    use super::*;

    const ALG: Unit = Unit::Count { what: "DiskSim policy number", min: 1, max: 4, default: 3 };

    pub const POLICY: Tunable = Tunable {
        name: "disksim_policy",
        unit: ALG,
        doc: "base subqueue's DiskSim `Scheduling policy`: 1 FCFS, 2 ELEVATOR_LBN, 3 CYCLE_LBN, 4 SSTF_LBN",
    };
    pub const PRIORITY_SCHEME: Tunable = Tunable {
        name: "disksim_priority_scheme",
        unit: Unit::Count { what: "scheme", min: 0, max: 1, default: 0 },
        doc:
            "DiskSim `Scheduling priority scheme`: 0 all equal, 1 synchronous requests in a priority subqueue",
    };
    pub const PRIORITY_POLICY: Tunable = Tunable {
        name: "disksim_priority_policy",
        unit: ALG,
        doc: "priority subqueue's DiskSim policy number (`Priority scheduling`)",
    };
    pub const TIMEOUT_SCHEME: Tunable = Tunable {
        name: "disksim_timeout_scheme",
        unit: Unit::Count { what: "scheme", min: 0, max: 2, default: 0 },
        doc: "DiskSim `Scheduling timeout scheme`: 0 none, 1 base to timeout/priority, 2 by halves",
    };
    pub const TIMEOUT_WEIGHT: Tunable = Tunable {
        name: "disksim_timeout_weight",
        unit: Unit::Count { what: "ticks", min: 0, max: u32::MAX as u64, default: 30 },
        doc: "DiskSim `Timeout time/weight`: ticks a request waits before it moves",
    };
    pub const TIMEOUT_POLICY: Tunable = Tunable {
        name: "disksim_timeout_policy",
        unit: ALG,
        doc: "timeout subqueue's DiskSim policy number (`Timeout scheduling`)",
    };
    pub const TICK: Tunable = Tunable {
        name: "disksim_tick",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration(1), default: Duration::from_millis(10) },
        doc: "period of the clock that counts timeouts (DiskSim's process-flow clock interrupt)",
    };
}

/// Every `disksim` tunable.
pub const TUNABLES: &[Tunable] = &[
    knob::POLICY,
    knob::PRIORITY_SCHEME,
    knob::PRIORITY_POLICY,
    knob::TIMEOUT_SCHEME,
    knob::TIMEOUT_WEIGHT,
    knob::TIMEOUT_POLICY,
    knob::TICK,
];

/// One subqueue's algorithm (DiskSim's numbers).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Alg {
    Fcfs = 1,
    ElevatorLbn = 2,
    CycleLbn = 3,
    SstfLbn = 4,
}

impl Alg {
    fn from_number(n: u64) -> Alg {
        match n {
            1 => Alg::Fcfs,
            2 => Alg::ElevatorLbn,
            3 => Alg::CycleLbn,
            _ => Alg::SstfLbn,
        }
    }
}

/// How timed-out requests move (DiskSim's `Scheduling timeout scheme`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TimeoutScheme {
    None,
    Base,
    Half,
}

/// The driver queue's settings.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct DisksimParams {
    pub base: Alg,
    pub two_queues: bool,
    pub priority: Alg,
    pub timeout: TimeoutScheme,
    pub weight: u64,
    pub timeout_alg: Alg,
    pub tick: Duration,
}

impl DisksimParams {
    pub fn from_settings(s: &mut Settings) -> Result<Self, ParamError> {
        Ok(DisksimParams {
            base: Alg::from_number(s.count(&knob::POLICY)?),
            two_queues: s.count(&knob::PRIORITY_SCHEME)? == 1,
            priority: Alg::from_number(s.count(&knob::PRIORITY_POLICY)?),
            timeout: match s.count(&knob::TIMEOUT_SCHEME)? {
                0 => TimeoutScheme::None,
                1 => TimeoutScheme::Base,
                _ => TimeoutScheme::Half,
            },
            weight: s.count(&knob::TIMEOUT_WEIGHT)?,
            timeout_alg: Alg::from_number(s.count(&knob::TIMEOUT_POLICY)?),
            tick: s.time(&knob::TICK)?,
        })
    }
}

impl Default for DisksimParams {
    fn default() -> Self {
        DisksimParams::from_settings(&mut Settings::new()).expect("the defaults are in range")
    }
}

/// Elevator's penalty for turning: more than any distance on a disk.
const TURN: u64 = 1 << 60;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Dir {
    Up,
    Down,
}

/// The scan state a choice changes, applied when the chosen request is taken.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Choice {
    id: ReqId,
    dir: Dir,
    toggle: bool,
}

struct Sub {
    alg: Alg,
    set: BTreeSet<(Sector, u64, ReqId)>,
    last: Sector,
    dir: Dir,
    /// SSTF's tie breaker: the next tie goes behind.
    behind_next: bool,
    chosen: Option<Choice>,
}

impl Sub {
    fn new(alg: Alg) -> Sub {
        Sub { alg, set: BTreeSet::new(), last: 0, dir: Dir::Up, behind_next: false, chosen: None }
    }

    fn key(&self, rq: &Request) -> Sector {
        if self.alg == Alg::Fcfs {
            0
        } else {
            rq.sector
        }
    }

    /// The first queued (lowest seq) of block `b`.
    fn first_of(&self, b: Sector) -> Option<(Sector, u64, ReqId)> {
        self.set.range((b, 0, ReqId(0))..).next().copied().filter(|k| k.0 == b)
    }

    fn choose(&mut self) -> Option<ReqId> {
        let &first = self.set.first()?;
        let choice = match self.alg {
            Alg::Fcfs => Choice { id: first.2, dir: self.dir, toggle: false },
            Alg::CycleLbn => {
                let k = self.set.range((self.last, 0, ReqId(0))..).next().copied().unwrap_or(first);
                Choice { id: k.2, dir: self.dir, toggle: false }
            }
            Alg::ElevatorLbn | Alg::SstfLbn => {
                let value = if self.alg == Alg::ElevatorLbn { TURN } else { 0 };
                let top = self.set.range((self.last, 0, ReqId(0))..).next().copied();
                let bottom =
                    self.set.range(..(self.last, 0, ReqId(0))).next_back().and_then(|k| self.first_of(k.0));
                let (pick, toggle) = match (top, bottom) {
                    (Some(t), None) => (t, false),
                    (None, Some(b)) => (b, false),
                    (Some(t), Some(b)) => {
                        let (mut up, mut down) = (t.0 - self.last, self.last - b.0);
                        match self.dir {
                            Dir::Up if down != 0 => down = down.saturating_add(value),
                            Dir::Down if up != 0 => up = up.saturating_add(value),
                            _ => {}
                        }
                        let pick = if up < down || (up == down && !self.behind_next) { t } else { b };
                        (pick, up == down)
                    }
                    (None, None) => unreachable!("the set is not empty"),
                };
                let dir = match pick.0.cmp(&self.last) {
                    std::cmp::Ordering::Greater => Dir::Up,
                    std::cmp::Ordering::Less => Dir::Down,
                    std::cmp::Ordering::Equal => self.dir,
                };
                Choice { id: pick.2, dir, toggle }
            }
        };
        self.chosen = Some(choice);
        Some(choice.id)
    }

    fn remove(&mut self, rq: &Request, seq: u64) {
        let gone = self.set.remove(&(self.key(rq), seq, rq.id));
        debug_assert!(gone, "{:?} not in its subqueue", rq.id);
    }

    /// `rq` leaves for the device: the scan state moves on.
    fn dispatched(&mut self, rq: &Request) {
        if let Some(c) = self.chosen.take().filter(|c| c.id == rq.id) {
            self.dir = c.dir;
            self.behind_next ^= c.toggle;
        }
        self.last = match self.alg {
            Alg::SstfLbn => rq.end(),
            Alg::Fcfs => rq.end() - 1,
            Alg::ElevatorLbn | Alg::CycleLbn => rq.sector,
        };
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Which {
    Priority = 0,
    Timeout = 1,
    Base = 2,
}

struct Entry {
    rq: Request,
    seq: u64,
    which: Which,
    /// Ticks counted before it joined the queue.
    entered: u64,
    /// The tick at which it joined its subqueue (`entered` for its first).
    since: u64,
}

pub struct Disksim {
    p: DisksimParams,
    /// priority, timeout, base.
    subs: [Sub; 3],
    reqs: IdMap<Entry>,
    seq: u64,
    moved: u64,
}

impl Disksim {
    pub fn new(p: DisksimParams) -> Disksim {
        Disksim {
            subs: [Sub::new(p.priority), Sub::new(p.timeout_alg), Sub::new(p.base)],
            p,
            reqs: IdMap::default(),
            seq: 0,
            moved: 0,
        }
    }

    /// Requests moved by a timeout so far.
    pub fn timeouts(&self) -> u64 {
        self.moved
    }

    fn join(&mut self, id: ReqId, which: Which) {
        self.seq += 1;
        let e = self.reqs.get_mut(&id).expect("queued");
        e.seq = self.seq;
        e.which = which;
        let sub = &mut self.subs[which as usize];
        sub.set.insert((sub.key(&e.rq), e.seq, id));
    }

    /// The tick at which a request that joined after tick `entered` leaves subqueue
    /// `from`, if it does.
    fn due(&self, from: Which, entered: u64) -> Option<u64> {
        let w = self.p.weight;
        match (self.p.timeout, from) {
            (TimeoutScheme::Base, Which::Base) => Some(entered + w + 1),
            (TimeoutScheme::Half, Which::Base) => Some(entered + w / 2 + 1),
            (TimeoutScheme::Half, Which::Timeout) => Some(entered + w + 1),
            _ => None,
        }
    }

    /// Where a request timing out of `from` goes.
    fn target(&self, from: Which) -> Which {
        match (self.p.timeout, from) {
            (TimeoutScheme::Base, _) if self.p.two_queues => Which::Priority,
            (TimeoutScheme::Base, _) => Which::Timeout,
            (_, Which::Base) => Which::Timeout,
            _ => Which::Priority,
        }
    }

    /// The tick at which `e`, in subqueue `w`, times out of it: never at the tick it
    /// joined (at each tick the timeout subqueue goes before the base one).
    fn due_at(&self, w: Which, e: &Entry) -> Option<u64> {
        Some(self.due(w, e.entered)?.max(e.since + 1))
    }

    /// Apply every tick up to `now`, in order.
    fn advance(&mut self, now: Time) {
        if self.p.timeout == TimeoutScheme::None {
            return;
        }
        let upto = now.0 / self.p.tick.0;
        loop {
            // the next tick that moves anything
            let next = [Which::Timeout, Which::Base]
                .iter()
                .flat_map(|&w| self.subs[w as usize].set.iter().map(move |k| (w, k.2)))
                .filter_map(|(w, id)| self.due_at(w, &self.reqs[&id]))
                .min();
            let Some(k) = next.filter(|&k| k <= upto) else { break };
            for from in [Which::Timeout, Which::Base] {
                let movers: Vec<ReqId> = self.subs[from as usize]
                    .set
                    .iter()
                    .map(|k| k.2)
                    .filter(|id| self.due_at(from, &self.reqs[id]).is_some_and(|d| d <= k))
                    .collect();
                let to = self.target(from);
                for id in movers {
                    let (rq, seq) = (self.reqs[&id].rq, self.reqs[&id].seq);
                    self.subs[from as usize].remove(&rq, seq);
                    self.join(id, to);
                    self.reqs.get_mut(&id).expect("queued").since = k;
                    self.moved += 1;
                }
            }
        }
    }
}

impl Policy for Disksim {
    fn name(&self) -> &'static str {
        "disksim"
    }

    fn add(&mut self, now: Time, rq: Request) {
        self.advance(now);
        let entered = now.0 / self.p.tick.0;
        let which = if self.p.two_queues && rq.sync { Which::Priority } else { Which::Base };
        let prev = self.reqs.insert(rq.id, Entry { rq, seq: 0, which, entered, since: entered });
        debug_assert!(prev.is_none(), "request {:?} added twice", rq.id);
        self.join(rq.id, which);
    }

    fn select(&mut self, now: Time, _dev: &dyn DeviceView) -> Option<ReqId> {
        self.advance(now);
        self.subs.iter_mut().find(|s| !s.set.is_empty()).and_then(Sub::choose)
    }

    fn take(&mut self, now: Time, id: ReqId) -> Request {
        self.advance(now);
        let e = self.reqs.remove(&id).unwrap_or_else(|| panic!("disksim: {id:?} is not queued"));
        let sub = &mut self.subs[e.which as usize];
        sub.remove(&e.rq, e.seq);
        sub.dispatched(&e.rq);
        e.rq
    }

    fn get(&self, id: ReqId) -> Option<&Request> {
        self.reqs.get(&id).map(|e| &e.rq)
    }

    fn urgent(&self, _now: Time) -> bool {
        false
    }

    fn len(&self) -> usize {
        self.reqs.len()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::testutil::{ops, rq, Driver, FixedView};

    const MS: u64 = 1_000_000;

    fn queue(p: DisksimParams) -> Disksim {
        Disksim::new(p)
    }

    fn params(base: Alg) -> DisksimParams {
        DisksimParams { base, ..DisksimParams::default() }
    }

    fn asynch(id: u64, sector: Sector) -> Request {
        Request { sync: false, ..rq(id, sector, 8) }
    }

    /// Take what the queue chooses at `now`, `n` times.
    fn order(q: &mut Disksim, now: u64, n: usize) -> Vec<u64> {
        let dev = FixedView::linear(0);
        (0..n)
            .map(|_| {
                let id = q.select(Time(now), &dev).expect("a request");
                q.take(Time(now), id).id.0
            })
            .collect()
    }

    #[test]
    fn cycle_lbn_goes_up_from_the_last_start_then_wraps() {
        let mut q = queue(params(Alg::CycleLbn));
        for (id, s) in [(1, 300), (2, 100), (3, 200)] {
            q.add(Time(0), asynch(id, s));
        }
        assert_eq!(order(&mut q, 0, 1), [2]);
        // behind the last start (100): waits for the wrap; at it: taken now
        q.add(Time(0), asynch(4, 50));
        q.add(Time(0), asynch(5, 100));
        assert_eq!(order(&mut q, 0, 4), [5, 3, 1, 4]);
    }

    #[test]
    fn fcfs_keeps_arrival_order() {
        let mut q = queue(params(Alg::Fcfs));
        for (id, s) in [(1, 300), (2, 100), (3, 200)] {
            q.add(Time(0), asynch(id, s));
        }
        assert_eq!(order(&mut q, 0, 3), [1, 2, 3]);
    }

    #[test]
    fn sstf_takes_the_nearest_to_the_last_end_and_alternates_ties() {
        let mut q = queue(params(Alg::SstfLbn));
        q.add(Time(0), asynch(1, 100));
        assert_eq!(order(&mut q, 0, 1), [1]); // last end: 108
                                              // 116 is 8 ahead, 100 is 8 behind: the first tie goes ahead
        q.add(Time(0), asynch(2, 116));
        q.add(Time(0), asynch(3, 100));
        assert_eq!(order(&mut q, 0, 1), [2]); // last end: 124
                                              // 132 is 8 ahead, 116 is 8 behind: the next tie goes behind
        q.add(Time(0), asynch(4, 132));
        q.add(Time(0), asynch(5, 116));
        assert_eq!(order(&mut q, 0, 1), [5]);
        // from 124: 132 is 8 ahead, 100 is 24 behind
        assert_eq!(order(&mut q, 0, 2), [4, 3]);
    }

    #[test]
    fn elevator_keeps_its_direction_until_nothing_is_left_that_way() {
        let mut q = queue(params(Alg::ElevatorLbn));
        for (id, s) in [(1, 500), (2, 400), (3, 900)] {
            q.add(Time(0), asynch(id, s));
        }
        assert_eq!(order(&mut q, 0, 1), [2]); // up from 0
        q.add(Time(0), asynch(4, 390)); // 10 behind, but the elevator goes on up
        assert_eq!(order(&mut q, 0, 3), [1, 3, 4]);
        // now going down from 390: 380 below goes before 395 above
        q.add(Time(0), asynch(5, 395));
        q.add(Time(0), asynch(6, 380));
        assert_eq!(order(&mut q, 0, 2), [6, 5]);
    }

    #[test]
    fn two_queues_serve_synchronous_requests_first() {
        let p = DisksimParams { two_queues: true, ..params(Alg::CycleLbn) };
        let mut q = queue(p);
        q.add(Time(0), asynch(1, 100));
        q.add(Time(0), rq(2, 900, 8));
        q.add(Time(0), asynch(3, 200));
        q.add(Time(0), rq(4, 50, 8));
        // the priority subqueue's own scan: 900 then 50 (it starts at 0: 50 first)
        assert_eq!(order(&mut q, 0, 4), [4, 2, 1, 3]);
        // all equal: one queue
        let mut q = queue(params(Alg::CycleLbn));
        q.add(Time(0), asynch(1, 100));
        q.add(Time(0), rq(2, 900, 8));
        q.add(Time(0), rq(4, 50, 8));
        assert_eq!(order(&mut q, 0, 3), [4, 1, 2]);
    }

    #[test]
    fn a_request_waiting_past_the_weight_in_ticks_moves_ahead() {
        // ticks every 10 ms; a wait of more than 2 ticks moves a request to the timeout
        // subqueue. A at 900 and B at 100 arrive at 0; B goes first; C (200) comes at 25 ms
        let p = DisksimParams { timeout: TimeoutScheme::Base, weight: 2, ..params(Alg::CycleLbn) };
        let run = |at: u64| {
            let mut q = queue(p);
            q.add(Time(0), asynch(1, 900));
            q.add(Time(0), asynch(2, 100));
            assert_eq!(order(&mut q, 5 * MS, 1), [2]);
            q.add(Time(25 * MS), asynch(3, 200));
            (order(&mut q, at, 2), q.timeouts())
        };
        // at 29 ms A has waited 2 ticks (10, 20): C is next on the sweep
        assert_eq!(run(29 * MS), (vec![3, 1], 0));
        // the tick at 30 ms is A's third: it moved to the timeout subqueue, served first
        assert_eq!(run(30 * MS), (vec![1, 3], 1));
    }

    #[test]
    fn with_two_queues_a_timed_out_request_joins_the_priority_subqueue() {
        let p = DisksimParams {
            two_queues: true,
            timeout: TimeoutScheme::Base,
            weight: 0,
            ..params(Alg::CycleLbn)
        };
        let mut q = queue(p);
        q.add(Time(0), asynch(1, 900));
        q.add(Time(0), asynch(2, 100));
        q.add(Time(15 * MS), rq(3, 500, 8));
        // at 15 ms: 1 and 2 timed out at the tick of 10 ms, before 3 arrived: the priority
        // subqueue's scan from 0 takes 100, 500, 900
        assert_eq!(order(&mut q, 15 * MS, 3), [2, 3, 1]);
        assert_eq!(q.timeouts(), 2);
    }

    #[test]
    fn by_halves_a_request_moves_to_timeout_then_to_priority() {
        // weight 4: past 2 ticks to the timeout subqueue, past 4 to the priority one
        let p = DisksimParams { timeout: TimeoutScheme::Half, weight: 4, ..params(Alg::CycleLbn) };
        let mut q = queue(p);
        q.add(Time(0), asynch(1, 900));
        q.add(Time(0), asynch(2, 10));
        let dev = FixedView::linear(0);
        assert_eq!(q.select(Time(29 * MS), &dev), Some(ReqId(2)), "still in the base subqueue");
        q.add(Time(29 * MS), rq(3, 20, 8));
        // at 30 ms 1 and 2 have waited 3 ticks: timeout subqueue; 3 (entered at tick 2) not
        assert_eq!(q.select(Time(30 * MS), &dev), Some(ReqId(2)));
        assert_eq!(q.subs[Which::Timeout as usize].set.len(), 2);
        // at 50 ms 1 and 2 are in the priority subqueue, 3 in the timeout one
        q.select(Time(50 * MS), &dev);
        assert_eq!(q.subs[Which::Priority as usize].set.len(), 2);
        assert_eq!(q.subs[Which::Timeout as usize].set.len(), 1);
        assert_eq!(q.timeouts(), 5);
    }

    impl Disksim {
        /// Check the invariants (tests; O(n)).
        fn check(&self) {
            let held: usize = self.subs.iter().map(|s| s.set.len()).sum();
            assert_eq!(held, self.reqs.len());
            for (i, sub) in self.subs.iter().enumerate() {
                for &(key, seq, id) in &sub.set {
                    let e = &self.reqs[&id];
                    assert_eq!((e.which as usize, e.seq, sub.key(&e.rq)), (i, seq, key));
                }
            }
        }
    }

    proptest! {
        #[test]
        fn takes_each_request_once_whatever_the_settings(
            ops in ops(300, 4096, true, 30_000_000, 30_000_000),
            algs in (1u64..=4, 1u64..=4, 1u64..=4),
            two_queues in any::<bool>(),
            scheme in 0u64..=2,
            weight in 0u64..=5,
            salt in any::<u64>(),
        ) {
            let p = DisksimParams {
                base: Alg::from_number(algs.0),
                priority: Alg::from_number(algs.1),
                timeout_alg: Alg::from_number(algs.2),
                two_queues,
                timeout: [TimeoutScheme::None, TimeoutScheme::Base, TimeoutScheme::Half][scheme as usize],
                weight,
                tick: Duration::from_millis(10),
            };
            let mut d = Driver::new(Disksim::new(p), salt, Disksim::check);
            for op in &ops {
                d.step(op);
            }
            d.drain();
        }
    }
}

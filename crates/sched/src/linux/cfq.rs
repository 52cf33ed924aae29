//! `cfq`: Linux's Completely Fair Queuing as of 2.6.32–2.6.33 — per-process queues served
//! round robin in time slices, idling for the active queue's next request.
//!
//! The scheduler the Stream Scheduling paper (000 Sections 3.1 and 3.3) and the IO-path
//! paper (002 Section 5) measure. Written from the behaviour of block/cfq-iosched.c and
//! Documentation/block/cfq-iosched.txt; knob names and defaults are Linux's sysfs ones.
//!
//! ## Queues
//! - Every synchronous request (a read, or a write flagged `sync`) goes to its issuer's
//!   *sync queue*: one per `Request::ctx`. All reads count as synchronous, as in Linux
//!   (`rq_is_sync`), so readahead reads flagged `sync = false` still join the reader's queue.
//! - `ctx = None` puts every synchronous request in one shared anonymous queue: the
//!   "process information hidden" case of 000 Section 3.3. A single queue has nobody to
//!   be fair to and nothing to switch to, and with interleaved distant streams its seek
//!   mean is large, so it never idles: CFQ degenerates to its within-queue order, a
//!   work-conserving elevator like deadline's.
//! - Asynchronous writes of all issuers share one *async queue* (Linux shares one per I/O
//!   priority level; every issuer here is best-effort priority 4).
//!
//! ## Service
//! - **Round robin.** Queues with pending requests wait on a service tree ordered by a key
//!   set when they become busy or their slice ends: `now + offset`, where the offset puts
//!   queues with shorter slices further back, `(busy - 1) * (slice_sync - slice)` (zero for
//!   sync queues, `(busy - 1) * 60 ms` for the async queue by default; Linux's
//!   `cfq_slice_offset` with every queue at priority 4). The first queue becomes *active*.
//! - **Slices.** The active queue's slice begins at the first completion of one of its
//!   requests (Linux's `slice_new`: the seek onto the queue's region is not charged) and
//!   lasts `slice_sync * weight` for a sync queue, `slice_async` for the async queue. The
//!   async queue also ends its slice after `2 * slice_async_rq * 4` dispatches (16 by
//!   default, `cfq_prio_to_maxrq` at priority 4) when other queues are busy. A slice that
//!   has run out ends at the next decision or completion.
//! - **Within a queue**, sector order from the head (`DeviceView::head`): the nearest
//!   request ahead, or the nearest behind when it is within `back_seek_max` and its
//!   distance times `back_seek_penalty` is smaller; a request further behind is a *wrap*
//!   (taken only when nothing else qualifies, the lowest first: one long back seek). Ties
//!   go to the higher sector. Once per slice — at the slice's first dispatch — the queue's
//!   oldest request is taken instead when its FIFO time (`arrival + fifo_expire_sync` or
//!   `fifo_expire_async`) has passed. FIFO expiry never reorders queues.
//! - **Idling.** When a completion leaves the active sync queue empty within its slice,
//!   the device is kept idle up to `slice_idle` for the queue's next request (the decision
//!   is `WaitUntil(completion + slice_idle)`), provided the queue's *idle window* is open:
//!   it closes when the queue is seeky or its issuer's mean thinktime exceeds `slice_idle`
//!   (both updated at each synchronous arrival), and no idling happens when the issuer has
//!   exited, the queue still has requests in flight, or the issuer's mean thinktime is
//!   longer than what remains of the slice. The queue's own arrival ends the wait; so does
//!   [`Scheduler::context_exited`] for its issuer, which also ends the slice. With nothing
//!   else pending, the empty queue simply stays active (a `Decision::Idle`).
//! - **Seekiness** (2.6.32's `seek_mean`): per queue, the distance from the end of its
//!   previous arrival to the start of the new one, clamped (to `4 * mean + 2^21` sectors for
//!   the 2nd and 3rd sample, `4 * mean + 2^17` after), enters a decayed mean in which each
//!   sample weighs 1/8. Statistics are valid after three samples (Linux's
//!   `sample_valid`: weight above 80/256). A queue is *seeky* when its valid mean exceeds
//!   [`SEEK_THRESHOLD`] = 8192 sectors (4 MiB; Linux's `CFQQ_SEEK_THR` of `8 * 1024`,
//!   which is in sectors, not KiB). Thinktime is the same decayed mean over the time from
//!   the issuer's last synchronous completion to its next synchronous arrival, each sample
//!   capped at `2 * slice_idle`.
//! - **Close cooperators** (2.6.33). Before idling, and at each decision while the active
//!   sync queue is empty, CFQ looks among the other busy sync queues for one whose next
//!   request lies within the active queue's seek mean of the head (capped at
//!   `SEEK_THRESHOLD`; `SEEK_THRESHOLD` itself while the mean is not valid). Neither queue
//!   may be seeky. If one is found the device does not idle: the active queue's slice ends
//!   and the cooperator becomes active at once, ahead of the round robin.
//! - **Queue merging**, the rule modelled (Linux's `cfq_setup_merge` / `cfq_merge_cfqqs`):
//!   the first time a queue hands over to a cooperator a merge is *scheduled*; it takes
//!   effect at each of the queue's issuers' next arrival, which then joins the cooperator's
//!   queue for good (the queues are "found cooperating" again on every later request, now
//!   inside one queue). A merged queue that is seeky when its slice ends is marked for
//!   splitting; each issuer's next arrival then gets a queue of its own again (the last
//!   one keeps the merged queue). The anonymous and async queues never merge.
//! - **Preemption** at arrival: a synchronous arrival ends an active async queue's slice;
//!   while the active queue idles, a synchronous arrival within the active queue's seek
//!   mean of the head (uncapped) takes over. The preempted queue keeps its unused slice as
//!   credit on the service tree (Linux's `slice_resid`). Not modelled: 2.6.32's preemption
//!   by any arrival once the active slice has run out, RT/idle classes, metadata requests.
//! - **Dispatch gating** (only with requests in flight, i.e. a driver with command
//!   queueing): a sync queue that may idle waits for async requests in flight to drain; the
//!   async queue waits while sync requests are in flight; one queue has at most `quantum`
//!   requests in flight while others are busy; with `low_latency` the async queue's depth
//!   grows by one per `slice_sync` since the last sync completion. When gated, `decide`
//!   answers `Idle` — with requests pending — and the driver asks again at the next
//!   completion. With a depth-1 device nothing is in flight at a decision and none of this
//!   bites; `quantum` is kept for the command-queueing experiments.
//! - **`low_latency`** (2.6.32+): slices are scaled down so that one round over the
//!   (decayed-average) number of busy queues fits in 300 ms: when `slice_sync * busy_avg`
//!   exceeds 300 ms a slice becomes `slice * 300 ms / (slice_sync * busy_avg)`, but no less
//!   than `min(slice, 2 * slice_idle * slice / slice_sync)`.
//! - **Weights** ([`Scheduler::set_weight`]): a sync queue's slice is `slice_sync * weight`
//!   (default weight 1 = Linux's default priority; blkio-style proportional disk time rather
//!   than ioprio's 0.4x–1.8x range). A weight of 0 counts as 1. A merged queue takes the
//!   larger weight of the two.
//! - Merging of requests: an arrival is appended (back merge) or prepended (front merge)
//!   to a contiguous request of the same direction in the queue it belongs to, within the
//!   driver's `max_sectors_kb`; never across queues.
//!
//! ## Tunables
//! | name | unit | default | Linux origin | trade-off |
//! |---|---|---|---|---|
//! | `slice_sync` | ms | 100 | `cfq_slice_sync = HZ / 10` | longer = fewer switches, longer waits for others |
//! | `slice_async` | ms | 40 | `cfq_slice_async = HZ / 25` | time the shared async queue gets per turn |
//! | `slice_async_rq` | requests | 2 | `cfq_slice_async_rq` | async dispatches per turn = 8x this |
//! | `slice_idle` | ms | 8 | `cfq_slice_idle = HZ / 125` | 0 disables idling (work-conserving) |
//! | `fifo_expire_sync` | ms | 125 | `cfq_fifo_expire[1] = HZ / 8` | bound on within-queue reordering |
//! | `fifo_expire_async` | ms | 250 | `cfq_fifo_expire[0] = HZ / 4` | the same for async writes |
//! | `quantum` | requests | 8 | `cfq_quantum` (2.6.33+) | in-flight limit per queue (command queueing) |
//! | `back_seek_max` | KiB | 16384 | `cfq_back_max = 16 * 1024` | how far behind the head a request still counts as near |
//! | `back_seek_penalty` | factor | 2 | `cfq_back_penalty` | backward distance multiplier |
//! | `low_latency` | 0/1 | 1 | `cfq_latency` (2.6.32+) | scale slices to a 300 ms round; ramp async depth |
//!
//! Invariants (checked by `check` in tests): every queued request is in exactly one
//! queue's sector index and FIFO and in `queued` under that queue; every busy queue but
//! the active one is on the service tree exactly once, and no idle queue is; the in-flight
//! counters match the in-flight map; each issuer holds one reference on its sync queue.
//! Costs: arrival and dispatch are O(log n); looking for a cooperator is O(busy queues x
//! log n) and happens only when the active queue runs dry.

use std::collections::{BTreeSet, HashMap};
use std::hash::BuildHasherDefault;

use crate::device::DeviceView;
use crate::error::BuildError;
use crate::idmap::{IdHasher, IdMap};
use crate::params::MAX_SECTORS_KB;
use crate::params::{ParamError, Settings, TimeUnit, Tunable, Unit};
use crate::policy::SortedQueue;
use crate::request::{ContextId, Dir, ReqId, Request, Sector};
use crate::scheduler::{Arrival, Decision, Scheduler};
use crate::time::{Duration, Time};

/// Time slice of a sync queue (Linux `cfq_slice_sync = HZ / 10`).
pub const SLICE_SYNC: Duration = Duration::from_millis(100);
/// Time slice of the async queue (Linux `cfq_slice_async = HZ / 25`).
pub const SLICE_ASYNC: Duration = Duration::from_millis(40);
/// Scales the async queue's dispatches per slice (Linux `cfq_slice_async_rq = 2`).
pub const SLICE_ASYNC_RQ: u32 = 2;
/// Longest wait for the active queue's next request (Linux `cfq_slice_idle = HZ / 125`).
pub const SLICE_IDLE: Duration = Duration::from_millis(8);
/// FIFO time of a sync request (Linux `cfq_fifo_expire[1] = HZ / 8`).
pub const FIFO_EXPIRE_SYNC: Duration = Duration::from_millis(125);
/// FIFO time of an async request (Linux `cfq_fifo_expire[0] = HZ / 4`).
pub const FIFO_EXPIRE_ASYNC: Duration = Duration::from_millis(250);
/// Requests one queue may have in flight while others wait (Linux `cfq_quantum`, 2.6.33+).
pub const QUANTUM: u32 = 8;
/// Furthest backward "near" request, KiB (Linux `cfq_back_max = 16 * 1024`).
pub const BACK_SEEK_MAX_KIB: u64 = 16 * 1024;
/// Backward distances count this many times (Linux `cfq_back_penalty = 2`).
pub const BACK_SEEK_PENALTY: u32 = 2;
/// Scale slices to the target latency and ramp async depth (Linux `cfq_latency = 1`).
pub const LOW_LATENCY: bool = true;

/// Mean seek distance, sectors, above which a queue is seeky; also the reach of a close
/// cooperator (Linux `CFQQ_SEEK_THR = 8 * 1024` sectors, 2.6.29–2.6.34).
pub const SEEK_THRESHOLD: Sector = 8 * 1024;
/// One round over the busy queues should fit in this with `low_latency`
/// (Linux `cfq_target_latency = HZ * 3 / 10`).
pub const TARGET_LATENCY: Duration = Duration::from_millis(300);
/// Async dispatches per slice = `slice_async_rq` times this: `2 * (8 - 4)`, Linux's
/// `cfq_prio_to_maxrq` at the default priority 4.
const ASYNC_RQ_SCALE: u32 = 8;
/// A decayed statistic is trusted above this weight (Linux `sample_valid`: 3 samples).
const SAMPLE_VALID: u64 = 80;

/// The tunables, as `headway tunables` lists them.
pub mod knob {
    use super::*;

    pub const SLICE_SYNC: Tunable = Tunable {
        name: "slice_sync",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration(1), default: Duration::from_millis(100) },
        doc: "time slice of a synchronous (per-process) queue, from its first completion",
    };
    pub const SLICE_ASYNC: Tunable = Tunable {
        name: "slice_async",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration(1), default: Duration::from_millis(40) },
        doc: "time slice of the shared asynchronous-write queue",
    };
    pub const SLICE_ASYNC_RQ: Tunable = Tunable {
        name: "slice_async_rq",
        unit: Unit::Count { what: "requests", min: 1, max: 1 << 20, default: 2 },
        doc: "the async queue's slice also ends after 8x this many dispatches when others wait (>= 1)",
    };
    pub const SLICE_IDLE: Tunable = Tunable {
        name: "slice_idle",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(8) },
        doc: "longest idle wait for the active sync queue's next request; 0 disables idling",
    };
    pub const FIFO_EXPIRE_SYNC: Tunable = Tunable {
        name: "fifo_expire_sync",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(125) },
        doc: "a sync request older than this is served first at its queue's next slice",
    };
    pub const FIFO_EXPIRE_ASYNC: Tunable = Tunable {
        name: "fifo_expire_async",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(250) },
        doc: "the same for async writes",
    };
    pub const QUANTUM: Tunable = Tunable {
        name: "quantum",
        unit: Unit::Count { what: "requests", min: 1, max: u32::MAX as u64, default: 8 },
        doc: "most requests one queue may have in the device while other queues wait (>= 1)",
    };
    pub const BACK_SEEK_MAX: Tunable = Tunable {
        name: "back_seek_max",
        unit: Unit::Count { what: "KiB", min: 0, max: 1 << 40, default: 16384 },
        doc: "a request at most this far behind the head may be served before one ahead",
    };
    pub const BACK_SEEK_PENALTY: Tunable = Tunable {
        name: "back_seek_penalty",
        unit: Unit::Count { what: "factor", min: 1, max: 1 << 20, default: 2 },
        doc: "a backward distance counts this many times a forward one (>= 1)",
    };
    pub const LOW_LATENCY: Tunable = Tunable {
        name: "low_latency",
        unit: Unit::Flag { default: true },
        doc: "favour latency over throughput; cfq: shrink slices so a round over the busy queues fits \
              300 ms, ramp async depth",
    };
}

/// Every cfq tunable.
pub const TUNABLES: &[Tunable] = &[
    MAX_SECTORS_KB,
    knob::SLICE_SYNC,
    knob::SLICE_ASYNC,
    knob::SLICE_ASYNC_RQ,
    knob::SLICE_IDLE,
    knob::FIFO_EXPIRE_SYNC,
    knob::FIFO_EXPIRE_ASYNC,
    knob::QUANTUM,
    knob::BACK_SEEK_MAX,
    knob::BACK_SEEK_PENALTY,
    knob::LOW_LATENCY,
];

/// Build `cfq` from settings (the registry's entry point). Reads `max_sectors_kb` too.
pub fn build(settings: &mut Settings) -> Result<Box<dyn Scheduler>, BuildError> {
    let max_kb = settings.count(&MAX_SECTORS_KB)?;
    let params = CfqParams::from_settings(settings)?;
    Ok(Box::new(Cfq::new(params, (max_kb * 2) as u32)))
}

/// CFQ settings (see the module doc for each one's trade-off).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CfqParams {
    /// > 0.
    pub slice_sync: Duration,
    /// > 0.
    pub slice_async: Duration,
    /// >= 1.
    pub slice_async_rq: u32,
    /// Zero disables idling.
    pub slice_idle: Duration,
    pub fifo_expire_sync: Duration,
    pub fifo_expire_async: Duration,
    /// >= 1.
    pub quantum: u32,
    /// In sectors (the tunable is in KiB).
    pub back_seek_max: Sector,
    /// >= 1.
    pub back_seek_penalty: u32,
    pub low_latency: bool,
}

impl Default for CfqParams {
    fn default() -> Self {
        CfqParams {
            slice_sync: SLICE_SYNC,
            slice_async: SLICE_ASYNC,
            slice_async_rq: SLICE_ASYNC_RQ,
            slice_idle: SLICE_IDLE,
            fifo_expire_sync: FIFO_EXPIRE_SYNC,
            fifo_expire_async: FIFO_EXPIRE_ASYNC,
            quantum: QUANTUM,
            back_seek_max: BACK_SEEK_MAX_KIB * 2,
            back_seek_penalty: BACK_SEEK_PENALTY,
            low_latency: LOW_LATENCY,
        }
    }
}

impl CfqParams {
    /// Read the cfq tunables; a zero slice, quantum, slice_async_rq or penalty is an error.
    pub fn from_settings(s: &mut Settings) -> Result<Self, ParamError> {
        Ok(CfqParams {
            slice_sync: s.time(&knob::SLICE_SYNC)?,
            slice_async: s.time(&knob::SLICE_ASYNC)?,
            slice_async_rq: s.count(&knob::SLICE_ASYNC_RQ)? as u32,
            slice_idle: s.time(&knob::SLICE_IDLE)?,
            fifo_expire_sync: s.time(&knob::FIFO_EXPIRE_SYNC)?,
            fifo_expire_async: s.time(&knob::FIFO_EXPIRE_ASYNC)?,
            quantum: s.count(&knob::QUANTUM)? as u32,
            back_seek_max: s.count(&knob::BACK_SEEK_MAX)? * 2,
            back_seek_penalty: s.count(&knob::BACK_SEEK_PENALTY)? as u32,
            low_latency: s.flag(&knob::LOW_LATENCY)?,
        })
    }

    fn fifo_expire(&self, sync: bool) -> Duration {
        if sync {
            self.fifo_expire_sync
        } else {
            self.fifo_expire_async
        }
    }
}

/// Counters for reports and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CfqStats {
    /// Slices started (queues made active).
    pub slices: u64,
    /// Idle waits armed for the active queue's next request.
    pub idle_waits: u64,
    /// Idle waits ended by that request.
    pub idle_hits: u64,
    /// Idle waits that ran out with other requests pending.
    pub idle_timeouts: u64,
    /// Dispatches of a FIFO-expired request out of sector order.
    pub fifo_expired: u64,
    /// Dispatches behind the head (within `back_seek_max`, or a wrap).
    pub back_seeks: u64,
    /// Switches to a close cooperator instead of idling.
    pub coop_switches: u64,
    /// Issuers moved into a cooperating queue.
    pub queue_merges: u64,
    /// Issuers given their own queue back after a merged queue turned seeky.
    pub queue_splits: u64,
    /// Slices ended by an arrival for another queue.
    pub preemptions: u64,
}

/// CFQ's notion of synchronous: every read, and writes flagged sync.
fn is_sync(rq: &Request) -> bool {
    rq.dir == Dir::Read || rq.sync
}

/// Linux's decayed running mean (`seek_mean`, `ttime_mean`): each sample weighs 1/8 of
/// the history. `weight` counts samples in 1/256 units, converging to 256.
#[derive(Copy, Clone, Debug, Default)]
struct Decayed {
    weight: u64,
    total: u128,
}

impl Decayed {
    fn add(&mut self, x: u64) {
        self.weight = (7 * self.weight + 256) / 8;
        self.total = (7 * self.total + 256 * x as u128) / 8;
    }
    fn mean(&self) -> u64 {
        if self.weight == 0 {
            return 0;
        }
        ((self.total + self.weight as u128 / 2) / self.weight as u128) as u64
    }
    fn valid(&self) -> bool {
        self.weight > SAMPLE_VALID
    }
}

/// A queue's seek history.
#[derive(Copy, Clone, Debug, Default)]
struct Seek {
    /// End of the queue's previous arrival.
    last_end: Option<Sector>,
    dist: Decayed,
}

impl Seek {
    fn add(&mut self, rq: &Request) {
        let d = self.last_end.map_or(0, |p| p.abs_diff(rq.sector));
        // One wild seek must not mark a queue seeky for long: clamp to 4x the mean plus
        // 1 GiB while the history is young (2nd and 3rd sample), 64 MiB after.
        let slack: u64 = if self.dist.weight <= 60 { 2 << 20 } else { 2 << 16 };
        self.dist.add(d.min(self.dist.mean().saturating_mul(4).saturating_add(slack)));
        self.last_end = Some(rq.end());
    }
    fn seeky(&self) -> bool {
        self.dist.valid() && self.dist.mean() > SEEK_THRESHOLD
    }
    /// How close a request must be to the head to pass for this queue's next one.
    fn close_reach(&self, for_preempt: bool) -> Sector {
        if !self.dist.valid() {
            SEEK_THRESHOLD
        } else if for_preempt {
            self.dist.mean()
        } else {
            self.dist.mean().min(SEEK_THRESHOLD)
        }
    }
}

/// A queue's identity; never reused, so a stale merge target simply is not found.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct QKey(u64);

type QMap<V> = HashMap<QKey, V, BuildHasherDefault<IdHasher>>;

/// One CFQ queue. Invariant: `sorted` and `fifo` hold the same requests.
struct Queue {
    sync: bool,
    /// The anonymous and async queues live as long as the scheduler.
    permanent: bool,
    sorted: SortedQueue,
    /// `(arrival + fifo_expire, id)`.
    fifo: BTreeSet<(Time, ReqId)>,
    /// Requests in the device.
    dispatched: u32,
    /// Issuers whose sync requests come here.
    refs: u32,
    weight: u32,
    idle_window: bool,
    seek: Seek,
    /// `(key, seq)` while on the service tree.
    tree_key: Option<(Time, u64)>,
    /// Issuer of the last request dispatched from here (Linux's `active_cic`).
    last_ctx: Option<Option<ContextId>>,
    /// A merge scheduled by a cooperator switch: this queue's issuers move there.
    merge_into: Option<QKey>,
    /// Holds merged issuers.
    coop: bool,
    /// Merged and seeky at a slice end: issuers leave at their next arrival.
    split: bool,
}

impl Queue {
    fn new(sync: bool, permanent: bool, weight: u32) -> Self {
        Queue {
            sync,
            permanent,
            sorted: SortedQueue::default(),
            fifo: BTreeSet::new(),
            dispatched: 0,
            refs: 0,
            weight,
            idle_window: sync,
            seek: Seek::default(),
            tree_key: None,
            last_ctx: None,
            merge_into: None,
            coop: false,
            split: false,
        }
    }
    fn is_empty(&self) -> bool {
        self.sorted.len() == 0
    }
}

/// What CFQ knows of an issuer (Linux's `cfq_io_context`).
#[derive(Clone, Debug)]
struct Ctx {
    /// Its sync queue, once it has sent a sync request (never for the anonymous issuer).
    queue: Option<QKey>,
    ttime: Decayed,
    /// Its last synchronous completion (or first arrival).
    last_end: Option<Time>,
    weight: u32,
}

impl Default for Ctx {
    fn default() -> Self {
        Ctx { queue: None, ttime: Decayed::default(), last_end: None, weight: 1 }
    }
}

/// The queue being served.
#[derive(Clone, Debug)]
struct Active {
    q: QKey,
    /// Set at the slice's first completion.
    slice_end: Option<Time>,
    dispatched_in_slice: u32,
    fifo_checked: bool,
    /// Idling for this queue's next request until then.
    idle_until: Option<Time>,
}

pub struct Cfq {
    params: CfqParams,
    max_sectors: u32,
    queues: QMap<Queue>,
    next_key: u64,
    ctxs: HashMap<Option<ContextId>, Ctx>,
    async_q: QKey,
    anon_q: QKey,
    /// The queue of every queued request.
    queued: IdMap<QKey>,
    /// The queue of every request in the device.
    in_flight: IdMap<QKey>,
    /// Busy queues waiting for a slice: `(key, seq, queue)`.
    tree: BTreeSet<(Time, u64, QKey)>,
    tree_seq: u64,
    active: Option<Active>,
    /// Requests in flight from async (`[0]`) and sync (`[1]`) queues.
    flight: [u32; 2],
    last_end_sync: Time,
    /// Decayed average of busy queues (`low_latency`).
    busy_avg: u32,
    stats: CfqStats,
}

impl Cfq {
    pub fn new(params: CfqParams, max_sectors: u32) -> Self {
        debug_assert!(params.slice_sync > Duration::ZERO && params.slice_async > Duration::ZERO);
        debug_assert!(params.quantum >= 1 && params.slice_async_rq >= 1 && params.back_seek_penalty >= 1);
        let mut s = Cfq {
            params,
            max_sectors,
            queues: QMap::default(),
            next_key: 0,
            ctxs: HashMap::new(),
            async_q: QKey(0),
            anon_q: QKey(0),
            queued: IdMap::default(),
            in_flight: IdMap::default(),
            tree: BTreeSet::new(),
            tree_seq: 0,
            active: None,
            flight: [0; 2],
            last_end_sync: Time::ZERO,
            busy_avg: 0,
            stats: CfqStats::default(),
        };
        s.async_q = s.new_queue(Queue::new(false, true, 1));
        s.anon_q = s.new_queue(Queue::new(true, true, 1));
        s.ctxs.insert(None, Ctx::default());
        s
    }

    pub fn params(&self) -> &CfqParams {
        &self.params
    }

    pub fn stats(&self) -> &CfqStats {
        &self.stats
    }

    /// Is the device being kept idle for the active queue's next request?
    pub fn is_idling(&self) -> bool {
        self.active.as_ref().is_some_and(|a| a.idle_until.is_some())
    }

    fn new_queue(&mut self, q: Queue) -> QKey {
        let k = QKey(self.next_key);
        self.next_key += 1;
        self.queues.insert(k, q);
        k
    }

    fn q(&self, k: QKey) -> &Queue {
        self.queues.get(&k).expect("queue exists")
    }

    fn q_mut(&mut self, k: QKey) -> &mut Queue {
        self.queues.get_mut(&k).expect("queue exists")
    }

    fn is_active(&self, k: QKey) -> bool {
        self.active.as_ref().is_some_and(|a| a.q == k)
    }

    /// The queue `rq` belongs to, creating, merging or splitting its issuer's sync queue
    /// as scheduled (Linux does this when the issuer allocates its next request).
    fn queue_for(&mut self, rq: &Request) -> QKey {
        if !is_sync(rq) {
            return self.async_q;
        }
        let Some(c) = rq.ctx else { return self.anon_q };
        let ctx = self.ctxs.entry(Some(c)).or_default();
        let weight = ctx.weight;
        let Some(k) = ctx.queue else {
            let mut q = Queue::new(true, false, weight);
            q.refs = 1;
            let k = self.new_queue(q);
            self.ctxs.get_mut(&Some(c)).expect("just inserted").queue = Some(k);
            return k;
        };
        let q = self.q_mut(k);
        if q.coop && q.split {
            if q.refs > 1 {
                q.refs -= 1;
                let mut own = Queue::new(true, false, weight);
                own.refs = 1;
                let n = self.new_queue(own);
                self.ctxs.get_mut(&Some(c)).expect("present").queue = Some(n);
                self.stats.queue_splits += 1;
                return n;
            }
            q.coop = false;
            q.split = false;
        }
        let Some(t) = self.merge_target(k) else { return k };
        let w = self.q(k).weight;
        self.q_mut(k).refs -= 1;
        let tq = self.q_mut(t);
        tq.refs += 1;
        tq.coop = true;
        tq.weight = tq.weight.max(w);
        self.ctxs.get_mut(&Some(c)).expect("present").queue = Some(t);
        self.stats.queue_merges += 1;
        self.maybe_free(k);
        t
    }

    /// The end of `k`'s merge chain, if a merge is scheduled and its target still exists.
    fn merge_target(&mut self, k: QKey) -> Option<QKey> {
        let mut t = self.q(k).merge_into?;
        for _ in 0..self.queues.len() {
            match self.queues.get(&t).map(|q| q.merge_into) {
                None => break,
                Some(Some(n)) if n != k && self.queues.contains_key(&n) => t = n,
                Some(_) => return Some(t),
            }
        }
        // The target is gone (its issuers exited and it drained): forget the merge.
        self.q_mut(k).merge_into = None;
        None
    }

    /// Schedule `cur`'s issuers to join `to` (Linux `cfq_setup_merge`).
    fn setup_merge(&mut self, cur: QKey, to: QKey) {
        let c = self.q(cur);
        if c.permanent || c.refs == 0 || c.merge_into.is_some() || self.q(to).permanent {
            return;
        }
        let mut t = to;
        for _ in 0..self.queues.len() {
            match self.queues.get(&t).and_then(|q| q.merge_into) {
                Some(n) if n == cur => return,
                Some(n) if self.queues.contains_key(&n) => t = n,
                _ => break,
            }
        }
        self.q_mut(cur).merge_into = Some(t);
    }

    /// Drop a queue nothing refers to any more.
    fn maybe_free(&mut self, k: QKey) {
        let q = self.q(k);
        if !q.permanent
            && q.refs == 0
            && q.is_empty()
            && q.dispatched == 0
            && q.tree_key.is_none()
            && !self.is_active(k)
        {
            self.queues.remove(&k);
        }
    }

    /// The slice a queue gets before `low_latency` scaling.
    fn base_slice(&self, q: &Queue) -> Duration {
        if q.sync {
            Duration(self.params.slice_sync.0.saturating_mul(q.weight.max(1) as u64))
        } else {
            self.params.slice_async
        }
    }

    /// Queues with pending requests (the active one included).
    fn busy_queues(&self) -> usize {
        self.tree.len() + self.active.as_ref().map_or(0, |a| !self.q(a.q).is_empty() as usize)
    }

    /// Put busy queue `k` (not active, not on the tree) on the service tree.
    fn add_to_tree(&mut self, k: QKey, now: Time, credit: i128) {
        debug_assert!(!self.is_active(k) && self.q(k).tree_key.is_none() && !self.q(k).is_empty());
        let busy = self.busy_queues() as u64 + 1;
        let shortfall = self.params.slice_sync - self.base_slice(self.q(k));
        let offset = shortfall.0 as i128 * (busy - 1) as i128;
        let key = Time((now.0 as i128 + offset - credit).clamp(0, u64::MAX as i128) as u64);
        self.tree_seq += 1;
        self.tree.insert((key, self.tree_seq, k));
        self.q_mut(k).tree_key = Some((key, self.tree_seq));
    }

    fn activate(&mut self, k: QKey) {
        debug_assert!(self.active.is_none());
        if let Some((key, seq)) = self.q_mut(k).tree_key.take() {
            self.tree.remove(&(key, seq, k));
        }
        self.active = Some(Active {
            q: k,
            slice_end: None,
            dispatched_in_slice: 0,
            fifo_checked: false,
            idle_until: None,
        });
        self.stats.slices += 1;
    }

    /// End the active queue's slice. A preempted queue keeps its unused slice as credit.
    fn expire(&mut self, now: Time, preempted: bool) {
        let Some(a) = self.active.take() else { return };
        let q = self.q_mut(a.q);
        if q.coop && q.seek.seeky() {
            q.split = true;
        }
        if !q.is_empty() {
            let credit = match a.slice_end {
                Some(end) if preempted => end.0 as i128 - now.0 as i128,
                _ => 0,
            };
            self.add_to_tree(a.q, now, credit);
        }
        self.maybe_free(a.q);
    }

    fn slice_used(&self, now: Time) -> bool {
        self.active.as_ref().and_then(|a| a.slice_end).is_some_and(|end| now >= end)
    }

    /// The slice the active queue `k` gets, fixed at its first completion.
    fn slice_len(&mut self, k: QKey) -> Duration {
        let base = self.base_slice(self.q(k));
        if !self.params.low_latency {
            return base;
        }
        // The average follows a rise at once and a fall slowly (3/4 weight on the larger).
        let busy = self.busy_queues() as u32;
        let (lo, hi) = (busy.min(self.busy_avg), busy.max(self.busy_avg));
        self.busy_avg = (3 * hi + lo + 2) / 4;
        let expect = Duration(self.params.slice_sync.0.saturating_mul(self.busy_avg as u64));
        if expect <= TARGET_LATENCY {
            return base;
        }
        let floor = base.min(
            Duration(self.params.slice_idle.0.saturating_mul(2)).mul_ratio(base.0, self.params.slice_sync.0),
        );
        base.mul_ratio(TARGET_LATENCY.0, expect.0).max(floor)
    }

    /// Next request of queue `q` from `head` in CFQ's sector order, and whether it lies
    /// behind the head (Linux `cfq_choose_req` over the two neighbours of the head).
    fn choose(&self, q: &Queue, head: Sector) -> Option<(ReqId, bool)> {
        let ahead = q.sorted.first_from(head).or_else(|| q.sorted.first())?;
        let sector = |id: ReqId| q.sorted.get(id).expect("indexed").sector;
        let behind = q.sorted.last_before(head).filter(|&b| b != ahead);
        let Some(behind) = behind else { return Some((ahead, sector(ahead) < head)) };
        // Cost of a candidate; None when it is too far behind (a wrap).
        let cost = |s: Sector| -> Option<u64> {
            if s >= head {
                Some(s - head)
            } else if head - s <= self.params.back_seek_max {
                Some((head - s).saturating_mul(self.params.back_seek_penalty as u64))
            } else {
                None
            }
        };
        let (sa, sb) = (sector(ahead), sector(behind));
        let take_ahead = match (cost(sa), cost(sb)) {
            (Some(ca), Some(cb)) => ca < cb || (ca == cb && sa >= sb),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            // Both wrap: start from the lowest, one long back seek then forward.
            (None, None) => sa <= sb,
        };
        let id = if take_ahead { ahead } else { behind };
        Some((id, sector(id) < head))
    }

    /// A busy sync queue whose next request is close to the head, to serve instead of
    /// idling on the empty active queue `cur` (Linux `cfq_close_cooperator`).
    fn close_cooperator(&self, cur: QKey, head: Sector) -> Option<QKey> {
        let c = self.q(cur);
        if !c.sync || c.seek.seeky() {
            return None;
        }
        let reach = c.seek.close_reach(false);
        let mut best: Option<(u64, QKey)> = None;
        for &(_, _, k) in &self.tree {
            let q = self.q(k);
            if !q.sync || q.seek.seeky() {
                continue;
            }
            let Some((id, _)) = self.choose(q, head) else { continue };
            let d = q.sorted.get(id).expect("indexed").sector.abs_diff(head);
            if d <= reach && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, k));
            }
        }
        best.map(|b| b.1)
    }

    /// Does an arrival for queue `k` end the active queue's slice (Linux
    /// `cfq_should_preempt`, RT/idle classes and metadata aside)?
    fn should_preempt(&self, k: QKey, rq: &Request, head: Sector) -> bool {
        let Some(a) = &self.active else { return false };
        let (new, cur) = (self.q(k), self.q(a.q));
        if !new.sync {
            return false;
        }
        if !cur.sync {
            return true;
        }
        a.idle_until.is_some() && rq.sector.abs_diff(head) <= cur.seek.close_reach(true)
    }

    /// May the active queue `k` put another request in the device (Linux
    /// `cfq_may_dispatch`)? Every refusal has a request in flight behind it.
    fn may_dispatch(&self, now: Time, k: QKey) -> bool {
        let q = self.q(k);
        let may_idle = q.sync && q.idle_window && self.params.slice_idle > Duration::ZERO;
        if may_idle && self.flight[0] > 0 {
            return false;
        }
        if !q.sync && self.flight[1] > 0 {
            return false;
        }
        let mut max = self.params.quantum;
        if q.dispatched >= max {
            if !self.tree.is_empty() {
                return false;
            }
            max = u32::MAX;
        }
        if !q.sync && self.params.low_latency {
            let since = now - self.last_end_sync;
            let mut depth = (since.0 / self.params.slice_sync.0).min(u32::MAX as u64) as u32;
            if depth == 0 && q.dispatched == 0 {
                depth = 1;
            }
            max = max.min(depth);
        }
        q.dispatched < max
    }

    /// Dispatch the active queue `k`'s next request.
    fn dispatch_from(&mut self, now: Time, k: QKey, head: Sector) -> Request {
        let a = self.active.as_mut().expect("dispatching from the active queue");
        let q = self.queues.get_mut(&k).expect("queue exists");
        let mut pick = None;
        if !a.fifo_checked {
            a.fifo_checked = true;
            pick = q.fifo.first().filter(|f| f.0 <= now).map(|f| f.1);
        }
        let id = match pick {
            Some(id) => {
                self.stats.fifo_expired += 1;
                id
            }
            None => {
                let (id, back) = self.choose(self.q(k), head).expect("the active queue has requests");
                self.stats.back_seeks += back as u64;
                id
            }
        };
        let expire = self.params.fifo_expire(self.q(k).sync);
        let a = self.active.as_mut().expect("still active");
        let q = self.queues.get_mut(&k).expect("queue exists");
        let rq = q.sorted.remove(id).expect("chosen request is queued");
        let was = q.fifo.remove(&(rq.arrival + expire, id));
        debug_assert!(was, "FIFO lost {id:?}");
        q.dispatched += 1;
        q.last_ctx = Some(rq.ctx);
        let sync = q.sync;
        a.dispatched_in_slice += 1;
        a.idle_until = None;
        let spent = a.dispatched_in_slice;
        self.flight[sync as usize] += 1;
        self.queued.remove(&id);
        self.in_flight.insert(id, k);
        if !sync && !self.tree.is_empty() && spent >= ASYNC_RQ_SCALE * self.params.slice_async_rq {
            self.expire(now, false);
        }
        rq
    }

    /// Start idling for the active queue's next request, if it is worth it (Linux
    /// `cfq_arm_slice_timer`).
    fn arm_idle(&mut self, now: Time) {
        let Some(a) = &self.active else { return };
        let q = self.q(a.q);
        if self.params.slice_idle == Duration::ZERO || !q.idle_window || q.dispatched > 0 {
            return;
        }
        // The issuer has exited: nobody will send the next request.
        let Some(ctx) = q.last_ctx.and_then(|c| self.ctxs.get(&c)) else { return };
        if ctx.ttime.valid() && a.slice_end.is_some_and(|end| end - now < Duration(ctx.ttime.mean())) {
            return;
        }
        let until = now + self.params.slice_idle;
        self.active.as_mut().expect("active").idle_until = Some(until);
        self.stats.idle_waits += 1;
    }

    /// Thinktime, seek and idle-window bookkeeping for a queued synchronous arrival
    /// (Linux `cfq_rq_enqueued`).
    fn note_sync_arrival(&mut self, now: Time, k: QKey, rq: &Request) {
        let idle = self.params.slice_idle;
        let ctx = self.ctxs.entry(rq.ctx).or_default();
        let last = *ctx.last_end.get_or_insert(now);
        ctx.ttime.add((now - last).min(Duration(idle.0.saturating_mul(2))).0);
        let ttime = ctx.ttime;
        let q = self.q_mut(k);
        q.seek.add(rq);
        q.idle_window = if idle == Duration::ZERO || q.seek.seeky() {
            false
        } else if ttime.valid() {
            ttime.mean() <= idle.0
        } else {
            q.idle_window
        };
    }

    /// Merge `rq` into a contiguous request of queue `k`; the id grown.
    fn merge_request(&mut self, k: QKey, rq: &Request) -> Option<ReqId> {
        let max = self.max_sectors;
        let expire = self.params.fifo_expire(self.q(k).sync);
        let q = self.q_mut(k);
        let (id, before) = q.sorted.back_merge(rq, max).or_else(|| q.sorted.front_merge(rq, max))?;
        let arrival = q.sorted.get(id).expect("just merged").arrival;
        if arrival != before {
            let was = q.fifo.remove(&(before + expire, id));
            debug_assert!(was, "FIFO lost {id:?}");
            q.fifo.insert((arrival + expire, id));
        }
        Some(id)
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut queued = 0;
        let mut flight = [0u32; 2];
        let mut on_tree = 0;
        for (&k, q) in &self.queues {
            q.sorted.check();
            assert_eq!(q.sorted.len(), q.fifo.len(), "{k:?}: sort index and FIFO differ");
            for rq in q.sorted.iter() {
                assert_eq!(self.queued.get(&rq.id), Some(&k), "{rq:?} not mapped to its queue");
                assert!(q.fifo.contains(&(rq.arrival + self.params.fifo_expire(q.sync), rq.id)));
                assert_eq!(is_sync(rq), q.sync, "{rq:?} in a queue of the other kind");
            }
            queued += q.sorted.len();
            flight[q.sync as usize] += q.dispatched;
            match q.tree_key {
                Some((key, seq)) => {
                    on_tree += 1;
                    assert!(self.tree.contains(&(key, seq, k)), "{k:?} lost from the tree");
                    assert!(!self.is_active(k), "active {k:?} on the tree");
                    assert!(!q.is_empty(), "idle {k:?} on the tree");
                }
                None => assert!(self.is_active(k) || q.is_empty(), "busy {k:?} off the tree"),
            }
            if !q.permanent {
                let refs = self.ctxs.values().filter(|c| c.queue == Some(k)).count();
                assert_eq!(q.refs as usize, refs, "{k:?} reference count");
            }
        }
        assert_eq!(queued, self.queued.len(), "queued requests");
        assert_eq!(on_tree, self.tree.len(), "tree entries");
        assert_eq!(flight, self.flight, "in-flight counters");
        assert_eq!(self.in_flight.len() as u32, flight[0] + flight[1]);
        if let Some(a) = &self.active {
            assert!(self.queues.contains_key(&a.q), "the active queue was freed");
        }
        for c in self.ctxs.values() {
            if let Some(k) = c.queue {
                assert!(self.queues.contains_key(&k), "an issuer's queue was freed");
            }
        }
    }
}

impl Scheduler for Cfq {
    fn name(&self) -> String {
        "cfq".to_string()
    }

    fn arrive(&mut self, now: Time, rq: Request, dev: &dyn DeviceView) -> Arrival {
        let k = self.queue_for(&rq);
        if let Some(into) = self.merge_request(k, &rq) {
            return Arrival::Merged { into };
        }
        let sync = is_sync(&rq);
        debug_assert_eq!(sync, self.q(k).sync);
        if sync {
            self.note_sync_arrival(now, k, &rq);
        }
        let expire = self.params.fifo_expire(sync);
        let q = self.q_mut(k);
        let was_empty = q.is_empty();
        q.fifo.insert((rq.arrival + expire, rq.id));
        q.sorted.insert(rq);
        self.queued.insert(rq.id, k);
        if self.is_active(k) {
            let a = self.active.as_mut().expect("active");
            if a.idle_until.take().is_some_and(|until| now < until) {
                self.stats.idle_hits += 1;
            }
            return Arrival::Queued;
        }
        if was_empty {
            self.add_to_tree(k, now, 0);
        }
        if self.should_preempt(k, &rq, dev.head()) {
            self.expire(now, true);
            self.activate(k);
            self.stats.preemptions += 1;
        }
        Arrival::Queued
    }

    fn decide(&mut self, now: Time, dev: &dyn DeviceView) -> Decision {
        let head = dev.head();
        // Each pass returns, or ends a slice, or starts one that can dispatch: at most 3.
        for _ in 0..4 {
            let Some(a) = &self.active else {
                let Some(&(_, _, k)) = self.tree.first() else { return Decision::Idle };
                self.activate(k);
                continue;
            };
            let (k, idle_until) = (a.q, a.idle_until);
            if self.slice_used(now) {
                self.expire(now, false);
                continue;
            }
            if !self.q(k).is_empty() {
                if !self.may_dispatch(now, k) {
                    debug_assert!(!self.in_flight.is_empty(), "dispatch gated with nothing in flight");
                    return Decision::Idle;
                }
                return Decision::Dispatch(self.dispatch_from(now, k, head));
            }
            if let Some(c) = self.close_cooperator(k, head) {
                self.setup_merge(k, c);
                self.expire(now, false);
                self.activate(c);
                self.stats.coop_switches += 1;
                continue;
            }
            if self.queued.is_empty() {
                // Nothing to switch to: the empty queue stays active (Linux keeps it until
                // another queue has work), and any arrival asks again.
                return Decision::Idle;
            }
            match idle_until {
                Some(until) if now < until => return Decision::WaitUntil(until),
                Some(_) => self.stats.idle_timeouts += 1,
                // Requests still in flight from a queue that may idle: wait for them.
                None if self.q(k).dispatched > 0 && self.q(k).idle_window => return Decision::Idle,
                None => {}
            }
            self.expire(now, false);
        }
        unreachable!("cfq: decide did not settle")
    }

    fn completed(&mut self, now: Time, rq: &Request, dev: &dyn DeviceView) {
        let Some(k) = self.in_flight.remove(&rq.id) else {
            debug_assert!(false, "cfq: completion of {:?}, which is not in flight", rq.id);
            return;
        };
        let q = self.q_mut(k);
        q.dispatched -= 1;
        let sync_q = q.sync;
        self.flight[sync_q as usize] -= 1;
        let sync = is_sync(rq);
        if sync {
            if let Some(c) = self.ctxs.get_mut(&rq.ctx) {
                c.last_end = Some(now);
            }
            self.last_end_sync = now;
        }
        if self.is_active(k) {
            if self.active.as_ref().is_some_and(|a| a.slice_end.is_none()) {
                let len = self.slice_len(k);
                self.active.as_mut().expect("active").slice_end = Some(now + len);
            }
            if self.slice_used(now) {
                self.expire(now, false);
            } else if sync && self.q(k).is_empty() && self.close_cooperator(k, dev.head()).is_none() {
                self.arm_idle(now);
            }
        }
        self.maybe_free(k);
    }

    fn pending(&self) -> usize {
        self.queued.len()
    }

    fn set_weight(&mut self, ctx: ContextId, weight: u32) {
        let w = weight.max(1);
        let c = self.ctxs.entry(Some(ctx)).or_default();
        c.weight = w;
        if let Some(k) = c.queue {
            self.q_mut(k).weight = w;
        }
    }

    fn context_exited(&mut self, now: Time, ctx: ContextId) {
        let Some(c) = self.ctxs.remove(&Some(ctx)) else { return };
        let Some(k) = c.queue else { return };
        if self.is_active(k) {
            self.expire(now, false);
        }
        self.q_mut(k).refs -= 1;
        self.maybe_free(k);
    }
}

#[cfg(test)]
mod tests;

//! `bfq`: Linux 6.1's Budget Fair Queueing — per-process queues served by B-WF2Q+ in
//! budgets of sectors, idling for a synchronous queue's next request when that pays or
//! when the service guarantees need it, weight raising for interactive and soft real-time
//! queues, and injection of other queues' requests while it idles.
//!
//! Written from docs/bfq-rules.md, a paraphrase of block/bfq-iosched.c and bfq-wf2q.c (the
//! section numbers below are that document's), and from the papers behind it: Valente and
//! Checconi, "High Throughput Disk Scheduling with Fair Bandwidth Distribution" (IEEE TC
//! 2010: B-WF2Q+, budgets, budget timeouts), and Valente and Andreolini, "Improving
//! Application Responsiveness with the BFQ Disk I/O Scheduler" (SYSTOR 2012: weight
//! raising, the peak-rate estimator, idling rules). This module only drives the parts in
//! its sibling modules; each has the detail of its rule.
//!
//! ## Queues (§2)
//! - A synchronous request (every read, and writes flagged `sync`) joins its issuer's own
//!   queue, one per [`ContextId`]. Requests with no context share one anonymous sync queue
//!   (Linux has none: it sends them to a dispatch list served first; cfq.rs makes the same
//!   choice). An asynchronous write joins the queue shared by every issuer of its I/O
//!   priority (class RT or BE times level, plus one idle-class queue); no context counts as
//!   best effort level 4.
//! - Each queue keeps its requests by sector and by FIFO time ([`super::bfq_queue`]): the
//!   next request is the nearest ahead of where the last dispatch ended, a request behind by
//!   at most `back_seek_max` costing `back_seek_penalty` times its distance; once per turn a
//!   request past `fifo_expire_sync`/`fifo_expire_async` goes first.
//! - Classes RT > BE > IDLE are strict; each class has its own B-WF2Q+ tree
//!   ([`super::wf2q`]); the idle class gets a turn at least every 200 ms.
//! - Weight of a queue: `(8 - level) * 10` from its I/O priority (40 at the default level
//!   4), times the issuer's [`Scheduler::set_weight`] (default 1): the "flat" mapping of
//!   §2.2. Linux caps weights at 1000; here the product is not capped, so a headway weight
//!   above 25 keeps its exact proportion (a documented deviation). A weight other than 40
//!   is not a default weight, so it is never raised (as in Linux). Changes apply when the
//!   queue next becomes busy (Linux applies them lazily too).
//!
//! ## Service (§3, §4, §9)
//! - B-WF2Q+: a queue becoming busy is activated with a budget (sectors) and weight; the
//!   eligible queue with the smallest virtual finish time is served. Service is charged at
//!   dispatch, in sectors, three times for an unraised async queue in a symmetric scenario.
//! - Budgets ([`super::bfq_budget`]): a queue's turn ends when its next request does not fit
//!   in what is left of its budget (*budget exhausted*), when it runs past its budget
//!   timeout (`timeout_sync`, x30 for an interactive-raised queue: *budget timeout*), when it
//!   is empty and not worth idling for (*no more requests*), when the idle slice runs out
//!   (*too idle*), or when another queue preempts it (§9). Its next maximum budget follows
//!   from the reason; the device maximum is auto-tuned from the peak rate unless
//!   `max_budget` sets it.
//! - Time charging ([`super::bfq_expire`]): a slow or seeky queue, or one timing out with a
//!   third of its budget unused, is charged `device max x elapsed / 125 ms` instead of its
//!   sectors, so such queues share the device by time.
//! - Hole recovery: a queue that ran dry and gets its next request within 3 idle slices
//!   keeps the rest of its budget, is back-shifted in virtual time and may preempt.
//! - Preemption: a queue becoming busy ends the in-service queue's turn when it recovers a
//!   hole (and is raised at least as much), has a higher class or a larger weight, or when
//!   the in-service queue is not worth idling for.
//!
//! ## Idling (§5, [`super::bfq_idle`], [`super::bfq_history`])
//! - When the in-service synchronous queue's last request completes and it has nothing
//!   queued, the device is kept idle (`WaitUntil(completion + slice)`) if *better to idle*:
//!   idling boosts throughput (a rotational drive without command queueing, or a
//!   sequential, I/O-bound queue with a short think time on a rotational or non-queueing
//!   drive; and no raised queue busy) or the guarantees need it (raised queue among
//!   unraised ones, asymmetric weights or classes, or the only busy queue). Never with
//!   `slice_idle = 0`, for async or idle-class queues, or for an issuer that exited; always
//!   with `strict_guarantees`. The slice is `slice_idle`, at most 2 ms for a seeky queue in
//!   a symmetric scenario, at least 20 ms for a raised one.
//! - Whether the drive queues commands is detected from completions (Linux's `hw_tag`):
//!   assumed until 33 completions with more than 3 requests outstanding are seen.
//! - Injection ([`super::bfq_inject`]): while it idles, one request at a time may come from
//!   the same issuer's async queue, the in-service queue's waker, a queue it wakes, or (when
//!   idling is not for throughput) any busy queue within the learnt inject limit. Only at
//!   an occasion blk-mq gives for a dispatch: an insertion, the idle timer, or 3 ms after a
//!   dispatch attempt that returned nothing — not at the completion that armed the idle
//!   timer (Linux's completion path asks for no dispatch then), so a queue whose process
//!   answers within the think time is not robbed of its turn by an injected request.
//! - `strict_guarantees`: always idle, and dispatch only with nothing at the device.
//!
//! ## Cooperating processes (§8.1, [`super::bfq_merge`])
//! A synchronous request close to the in-service queue's last dispatch, or to another
//! queue's next request, merges its process's queue into that one when both may cooperate:
//! interleaved readers of one region become one sequential queue. A shared queue found
//! seeky at the end of a turn is split again, each process back on a queue of its own at
//! its next request. A shared queue does not start weight raising. Queues created within
//! 180 ms of each other with one priority are merged 600 ms later unless idling boosts the
//! queue's throughput (a *stable* merge, never split).
//!
//! ## Weight raising (§7, [`super::bfq_raise`], [`super::bfq_burst`])
//! With `low_latency`, a default-weight sync queue becoming busy after more than 2 s idle
//! (a new queue counts as idle for ever) is raised x30 for `bfq_wr_duration` (3 to 25 s
//! from the peak rate) or 120,000 sectors; a queue asking at most 7000 sectors/s is raised
//! x3000 for 300 ms (soft real time). Queues created in a large burst (8 within 180 ms of
//! each other) are not raised.
//!
//! A consequence worth knowing when reading results: while any raised queue is busy there
//! is no idling for throughput, so two new sequential readers (both raised) are not idled
//! for and each preempts the other as it becomes busy; they interleave for the first
//! raising period (10.5 s on a disk at the initial peak rate). On `as-fig4-alter.fio`
//! bfq gets 0.70x cfq's throughput with `low_latency=1` and 1.01x with `low_latency=0`.
//!
//! ## Not modelled
//! - Of queue merging (§8.1, [`super::bfq_merge`]): the merge of the other direction when
//!   the candidate has fewer processes
//!   (here the arriving process always joins the candidate), the shared queue's
//!   inheriting of the I/O-bound flag and waker, and a split process's raising (its new
//!   queue starts unraised).
//! - cgroups (H-WF2Q+ over groups), tag-depth limiting, the soft-rt period shift when a
//!   raised queue enters service, the adaptive "small request keeps the timer" rule,
//!   and the inject-limit reset on think-time changes.
//! - A new queue's seek history starts empty (Linux counts its first request as seeky), and
//!   [`Scheduler::set_device_queue_depth`] is ignored (queueing is detected, as in Linux).
//! - The drive is taken as rotational ([`BfqParams::rotational`]; `DeviceView` has no
//!   such flag).
//!
//! ## Tunables (Linux's sysfs names and defaults)
//! | name | unit | default | |
//! |---|---|---|---|
//! | `slice_idle` | ms | 8 | idle wait for the in-service sync queue; 0 disables idling |
//! | `slice_idle_us` | us | 8000 | the same in microseconds (set one or the other) |
//! | `timeout_sync` | ms | 125 | budget timeout (x30 for interactive raising) |
//! | `max_budget` | sectors | 0 | 0: auto-tuned from the peak rate |
//! | `back_seek_max` | KiB | 16384 | how far behind a request still counts as near |
//! | `back_seek_penalty` | factor | 2 | backward distance multiplier |
//! | `fifo_expire_sync` | ms | 125 | FIFO expiry of sync requests |
//! | `fifo_expire_async` | ms | 250 | FIFO expiry of async requests |
//! | `low_latency` | 0/1 | 1 | weight raising |
//! | `strict_guarantees` | 0/1 | 0 | always idle; one request at the device at a time |
//! | `max_sectors_kb` | KiB | 512 | the driver's merge bound (not a BFQ knob) |

use std::collections::{BTreeSet, HashMap};

use super::bfq_budget::{Budgets, Expiry, QueueBudget};
use super::bfq_burst::{preempts, Bursts, Contender};
use super::bfq_expire::{budget_timeout, may_expire_for_timeout, time_charge, Turn};
use super::bfq_history::History;
use super::bfq_idle::{better_to_idle, boosts_without_issues, slice, HwTag, IdleCase, WeightCounts};
use super::bfq_inject::{self, InjectLimit, Waker};
use super::bfq_merge;
use super::bfq_queue::{BackSeek, QueueRequests};
use super::bfq_raise::{self, Busy, Raising};
use super::cfq::knob as cfq_knob;
use crate::device::DeviceView;
use crate::error::BuildError;
use crate::ioprio::{IoClass, IoPrio};
use crate::params::{ParamError, Settings, TimeUnit, Tunable, Unit, MAX_SECTORS_KB};
use crate::request::{ContextId, Dir, ReqId, Request, Sector};
use crate::scheduler::{Arrival, Decision, Scheduler};
use crate::time::{Duration, Time};

/// The weight of the default I/O priority (best effort, level 4).
pub const DEFAULT_WEIGHT: u32 = 40;
/// Async service counts this many times (Linux `bfq_async_charge_factor`).
const ASYNC_CHARGE_FACTOR: u64 = 3;
/// The idle class gets a turn at least this often (Linux `BFQ_CL_IDLE_TIMEOUT`).
const IDLE_CLASS_TIMEOUT: Duration = Duration::from_millis(200);
/// `strict_guarantees` raises `slice_idle` to at least this.
const STRICT_SLICE_IDLE: Duration = Duration::from_millis(8);
/// blk-mq runs the hardware queue again this long after a dispatch attempt that returned
/// nothing while the scheduler held requests (Linux `BLK_MQ_BUDGET_DELAY`).
const BLK_MQ_RERUN: Duration = Duration::from_millis(3);
/// On a non-rotational drive, a donor request this large is not injected while the drive
/// is busy (Linux `BFQQ_SECT_THR_NONROT`).
const LARGE_RQ_NONROT: u32 = 64;

/// The tunables, as `headway tunables` lists them. Those cfq has with the same meaning and
/// default (`slice_idle`, `back_seek_max`, `back_seek_penalty`) are cfq's.
pub mod knob {
    use super::*;

    pub const SLICE_IDLE: Tunable = cfq_knob::SLICE_IDLE;
    pub const SLICE_IDLE_US: Tunable = Tunable {
        name: "slice_idle_us",
        unit: Unit::Time { unit: TimeUnit::Us, min: Duration::ZERO, default: Duration::from_millis(8) },
        doc: "slice_idle in microseconds (Linux's second file for it); set one or the other",
    };
    pub const BACK_SEEK_MAX: Tunable = cfq_knob::BACK_SEEK_MAX;
    pub const BACK_SEEK_PENALTY: Tunable = cfq_knob::BACK_SEEK_PENALTY;
    pub const TIMEOUT_SYNC: Tunable = Tunable {
        name: "timeout_sync",
        unit: Unit::Time {
            unit: TimeUnit::Ms,
            min: Duration(1_000_000),
            default: Duration::from_millis(125),
        },
        doc: "budget timeout: longest turn of a queue (x30 while interactive-raised)",
    };
    pub const MAX_BUDGET: Tunable = Tunable {
        name: "max_budget",
        unit: Unit::Count { what: "sectors", min: 0, max: i32::MAX as u64, default: 0 },
        doc: "largest budget of a queue's turn; 0 tunes it from the peak rate to what timeout_sync transfers",
    };
    pub const FIFO_EXPIRE_SYNC: Tunable = Tunable {
        name: "fifo_expire_sync",
        unit: Unit::Time {
            unit: TimeUnit::Ms,
            min: Duration(1_000_000),
            default: Duration::from_millis(125),
        },
        doc: "a sync request older than this is served first at its queue's next slice; \
              bfq: at the earliest as the second dispatch of its queue's turn",
    };
    pub const FIFO_EXPIRE_ASYNC: Tunable = Tunable {
        name: "fifo_expire_async",
        unit: Unit::Time {
            unit: TimeUnit::Ms,
            min: Duration(1_000_000),
            default: Duration::from_millis(250),
        },
        doc: "the same for async writes",
    };
    pub const LOW_LATENCY: Tunable = Tunable {
        name: "low_latency",
        unit: Unit::Flag { default: true },
        doc: "favour latency over throughput; bfq: raise the weight of interactive and soft \
              real-time queues",
    };
    pub const STRICT_GUARANTEES: Tunable = Tunable {
        name: "strict_guarantees",
        unit: Unit::Flag { default: false },
        doc: "always idle for the in-service queue and keep one request at the device at a time \
              (slice_idle at least 8 ms)",
    };
}

/// Every bfq tunable.
pub const TUNABLES: &[Tunable] = &[
    MAX_SECTORS_KB,
    knob::SLICE_IDLE,
    knob::SLICE_IDLE_US,
    knob::TIMEOUT_SYNC,
    knob::MAX_BUDGET,
    knob::BACK_SEEK_MAX,
    knob::BACK_SEEK_PENALTY,
    knob::FIFO_EXPIRE_SYNC,
    knob::FIFO_EXPIRE_ASYNC,
    knob::LOW_LATENCY,
    knob::STRICT_GUARANTEES,
];

/// Build `bfq` from settings (the registry's entry point). Reads `max_sectors_kb` too.
pub fn build(settings: &mut Settings) -> Result<Box<dyn Scheduler>, BuildError> {
    let max_kb = settings.count(&MAX_SECTORS_KB)?;
    let params = BfqParams::from_settings(settings)?;
    Ok(Box::new(Bfq::new(params, (max_kb * 2) as u32)))
}

/// BFQ settings.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BfqParams {
    /// Zero disables idling (unless `strict_guarantees`).
    pub slice_idle: Duration,
    pub timeout_sync: Duration,
    /// `None`: auto-tuned.
    pub max_budget: Option<u64>,
    pub back_seek: BackSeek,
    pub fifo_expire_sync: Duration,
    pub fifo_expire_async: Duration,
    pub low_latency: bool,
    pub strict_guarantees: bool,
    /// Not a tunable: the drive's rotational flag (Linux reads it from the block layer).
    pub rotational: bool,
}

impl Default for BfqParams {
    fn default() -> Self {
        BfqParams {
            slice_idle: Duration::from_millis(8),
            timeout_sync: Duration::from_millis(125),
            max_budget: None,
            back_seek: super::bfq_queue::BACK_SEEK,
            fifo_expire_sync: super::bfq_queue::FIFO_EXPIRE_SYNC,
            fifo_expire_async: super::bfq_queue::FIFO_EXPIRE_ASYNC,
            low_latency: true,
            strict_guarantees: false,
            rotational: true,
        }
    }
}

impl BfqParams {
    pub fn from_settings(s: &mut Settings) -> Result<Self, ParamError> {
        // read in the order of TUNABLES
        let given = |name: &str| s.iter().any(|(k, _)| k == name);
        let (ms, us) = (given(knob::SLICE_IDLE.name), given(knob::SLICE_IDLE_US.name));
        if ms && us {
            return Err(ParamError::BadValue {
                name: knob::SLICE_IDLE_US.name.into(),
                value: s.iter().find(|(k, _)| *k == knob::SLICE_IDLE_US.name).map_or("", |(_, v)| v).into(),
                why: "slice_idle is set too: set one or the other".into(),
            });
        }
        let slice_idle = s.time(&knob::SLICE_IDLE)?;
        let slice_idle_us = s.time(&knob::SLICE_IDLE_US)?;
        let slice_idle = if us { slice_idle_us } else { slice_idle };
        let timeout_sync = s.time(&knob::TIMEOUT_SYNC)?;
        let max_budget = s.count(&knob::MAX_BUDGET)?;
        Ok(BfqParams {
            slice_idle,
            timeout_sync,
            max_budget: (max_budget > 0).then_some(max_budget),
            back_seek: BackSeek {
                max: s.count(&knob::BACK_SEEK_MAX)? * 2,
                penalty: s.count(&knob::BACK_SEEK_PENALTY)?,
            },
            fifo_expire_sync: s.time(&knob::FIFO_EXPIRE_SYNC)?,
            fifo_expire_async: s.time(&knob::FIFO_EXPIRE_ASYNC)?,
            low_latency: s.flag(&knob::LOW_LATENCY)?,
            strict_guarantees: s.flag(&knob::STRICT_GUARANTEES)?,
            rotational: true,
        })
    }
}

/// Counters for reports and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BfqStats {
    /// Queues set in service.
    pub turns: u64,
    pub budget_exhausted: u64,
    pub budget_timeouts: u64,
    pub no_more_requests: u64,
    pub too_idle: u64,
    pub preemptions: u64,
    /// Turns charged by time rather than sectors.
    pub time_charged: u64,
    /// Idle slices armed, and those ended by the queue's own arrival.
    pub idle_waits: u64,
    pub idle_hits: u64,
    /// Requests dispatched from another queue while the in-service one idled.
    pub injections: u64,
    /// Weight raising periods started.
    pub raised: u64,
    /// Busy transitions that recovered a hole.
    pub hole_recoveries: u64,
    /// Processes moved to a cooperator's queue, and back to queues of their own.
    pub merges: u64,
    pub splits: u64,
}

type QId = u32;

/// Which queue a request joins.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Sync(Option<ContextId>),
    Async(IoClass, u8),
}

struct Queue {
    kind: Kind,
    sync: bool,
    class: IoClass,
    /// Weight before raising.
    orig_weight: u32,
    rqs: QueueRequests,
    /// Requests at the device.
    dispatched: u32,
    /// The queue's own maximum budget, its budget and its service in the current turn.
    max_budget: u64,
    budget: u64,
    service: u64,
    history: History,
    last_completion: Time,
    raising: Raising,
    /// When it last went idle (nothing busy, nothing in flight); `None`: never.
    went_idle: Option<Time>,
    budget_timeout: Time,
    turn_start: Time,
    /// Expired empty, waiting for a request (hole recovery).
    wait_request: bool,
    /// Processes whose requests come here: none once the last has exited or moved to a
    /// cooperator's queue; more than one when shared.
    processes: u32,
    /// Found seeky while shared: its processes leave at their next request.
    split_coop: bool,
    /// The first dispatch of its current busy period (`None`: none yet).
    first_io: Option<Time>,
    /// When it was made for a process split off a shared queue (no raising starts for
    /// `MIN_IDLE_TIME` after).
    split_at: Option<Time>,
    created: Time,
    /// Shared by a stable merge (it may start raising).
    stable: bool,
    busy_since: Time,
    served_since_busy: u64,
    softrt_pending: bool,
    last_arrival: Option<Time>,
    inject: InjectLimit,
    waker: Waker<QId>,
    /// The request whose service time the inject limit samples; dispatch marks it.
    sample_next: bool,
    waited: Option<ReqId>,
    /// Counted in the weights tree at this weight.
    counted: Option<u32>,
    /// Order of activation (injection donors: most recent first).
    activated: u64,
}

impl Queue {
    fn has_process(&self) -> bool {
        self.processes > 0
    }

    /// Shared by cooperating processes (§8.1).
    fn coop(&self) -> bool {
        self.processes > 1
    }

    fn weight(&self) -> u32 {
        self.orig_weight.saturating_mul(self.raising.coeff)
    }
}

/// The BFQ scheduler.
pub struct Bfq {
    p: BfqParams,
    /// The driver's merge bound, sectors.
    max_sectors: u32,
    queues: Vec<Queue>,
    sync_queues: HashMap<Option<ContextId>, QId>,
    async_queues: HashMap<(IoClass, u8), QId>,
    prio: HashMap<ContextId, IoPrio>,
    weight: HashMap<ContextId, u32>,
    trees: [super::wf2q::Wf2q<QId>; 3],
    in_service: Option<QId>,
    /// The idle timer of the in-service queue, and when idling began.
    idle_until: Option<Time>,
    idle_start: Time,
    /// The idle timer was armed by a completion and nothing has asked for a dispatch since
    /// (blk-mq runs the queue at an insertion, at the timer, or 3 ms after a dispatch
    /// attempt that returned nothing, not at the completion itself): no injection yet.
    unkicked: bool,
    busy: BTreeSet<QId>,
    busy_per_class: [u32; 3],
    weights: WeightCounts,
    budgets: Budgets,
    hw_tag: HwTag,
    bursts: Bursts<QId>,
    in_flight: HashMap<ReqId, QId>,
    /// Where the in-service queue's last dispatch ended (0: none yet in this turn).
    in_serv_last_pos: Sector,
    /// Each merged process's seek and think-time history as it was when it merged, for a
    /// split.
    saved: HashMap<ContextId, History>,
    /// The last synchronous queue created (the stable-merge reference), each process's
    /// scheduled stable merge, and the processes stably merged.
    last_created: Option<QId>,
    stable_target: HashMap<ContextId, QId>,
    stably_merged: std::collections::HashSet<ContextId>,
    in_driver: u32,
    max_in_driver: u32,
    pending: usize,
    last_completer: Option<(QId, Time)>,
    last_idle_class: Time,
    activations: u64,
    stats: BfqStats,
}

/// BFQ's notion of synchronous: every read, and writes flagged sync.
fn is_sync(rq: &Request) -> bool {
    rq.dir == Dir::Read || rq.sync
}

/// Linux's `bfq_ioprio_to_weight`.
fn prio_weight(prio: IoPrio) -> u32 {
    (8 - prio.level.min(7) as u32) * 10
}

impl Bfq {
    /// BFQ with these settings, merging arrivals into queued requests up to `max_sectors`
    /// (0: no merging).
    pub fn new(mut p: BfqParams, max_sectors: u32) -> Self {
        if p.strict_guarantees {
            p.slice_idle = p.slice_idle.max(STRICT_SLICE_IDLE);
        }
        Bfq {
            budgets: Budgets::new(p.rotational, p.timeout_sync, p.max_budget),
            p,
            max_sectors,
            queues: Vec::new(),
            sync_queues: HashMap::new(),
            async_queues: HashMap::new(),
            prio: HashMap::new(),
            weight: HashMap::new(),
            trees: Default::default(),
            in_service: None,
            idle_until: None,
            idle_start: Time::ZERO,
            unkicked: false,
            busy: BTreeSet::new(),
            busy_per_class: [0; 3],
            weights: WeightCounts::default(),
            hw_tag: HwTag::default(),
            bursts: Bursts::default(),
            in_flight: HashMap::new(),
            in_serv_last_pos: 0,
            saved: HashMap::new(),
            last_created: None,
            stable_target: HashMap::new(),
            stably_merged: Default::default(),
            in_driver: 0,
            max_in_driver: 0,
            pending: 0,
            last_completer: None,
            last_idle_class: Time::ZERO,
            activations: 0,
            stats: BfqStats::default(),
        }
    }

    pub fn params(&self) -> &BfqParams {
        &self.p
    }

    pub fn bfq_stats(&self) -> &BfqStats {
        &self.stats
    }

    fn q(&self, k: QId) -> &Queue {
        &self.queues[k as usize]
    }

    fn q_mut(&mut self, k: QId) -> &mut Queue {
        &mut self.queues[k as usize]
    }

    fn tree(&mut self, k: QId) -> &mut super::wf2q::Wf2q<QId> {
        let c = self.q(k).class.index();
        &mut self.trees[c]
    }

    /// The queue a context's requests go to, if it has one (tests).
    #[cfg(test)]
    fn sync_queue(&self, ctx: Option<ContextId>) -> Option<QId> {
        self.sync_queues.get(&ctx).copied()
    }

    fn ctx_prio(&self, ctx: Option<ContextId>) -> IoPrio {
        ctx.and_then(|c| self.prio.get(&c).copied()).unwrap_or_default()
    }

    /// Class and weight a queue of `kind` should have now.
    fn class_weight(&self, kind: Kind) -> (IoClass, u32) {
        match kind {
            Kind::Sync(ctx) => {
                let prio = self.ctx_prio(ctx);
                let mult = ctx.and_then(|c| self.weight.get(&c).copied()).unwrap_or(1).max(1);
                (prio.class, prio_weight(prio).saturating_mul(mult))
            }
            Kind::Async(class, level) => (class, prio_weight(IoPrio { class, level })),
        }
    }

    /// Find or create the queue of `rq` (§2.1); creation runs burst detection (§8.2).
    fn queue_for(&mut self, now: Time, rq: &Request, split: bool) -> QId {
        let kind = if is_sync(rq) {
            Kind::Sync(rq.ctx)
        } else {
            let prio = self.ctx_prio(rq.ctx);
            let level = if prio.class == IoClass::Idle { 7 } else { prio.level };
            Kind::Async(prio.class, level)
        };
        let found = match kind {
            Kind::Sync(ctx) => self.sync_queues.get(&ctx),
            Kind::Async(c, l) => self.async_queues.get(&(c, l)),
        };
        if let Some(&k) = found {
            return k;
        }
        let k = self.queues.len() as QId;
        let (class, orig_weight) = self.class_weight(kind);
        let sync = matches!(kind, Kind::Sync(_));
        self.queues.push(Queue {
            kind,
            sync,
            class,
            orig_weight,
            rqs: QueueRequests::new(self.p.back_seek, self.p.fifo_expire_sync, self.p.fifo_expire_async),
            dispatched: 0,
            max_budget: self.budgets.max_budget() * 2 / 3,
            budget: 0,
            service: 0,
            history: History::default(),
            last_completion: now,
            raising: {
                let mut r = Raising::default();
                r.start = now;
                r.soft_rt_next_start = now;
                r
            },
            went_idle: None,
            budget_timeout: now,
            turn_start: now,
            wait_request: false,
            processes: 1,
            split_coop: false,
            first_io: None,
            split_at: None,
            created: now,
            stable: false,
            busy_since: now,
            served_since_busy: 0,
            softrt_pending: false,
            last_arrival: None,
            inject: InjectLimit::default(),
            waker: Waker::default(),
            sample_next: false,
            waited: None,
            counted: None,
            activated: 0,
        });
        match kind {
            Kind::Sync(ctx) => {
                self.sync_queues.insert(ctx, k);
                // (a queue split off a shared one is no part of a burst)
                if split {
                    self.queues[k as usize].split_at = Some(now);
                } else {
                    self.bursts.created(now, k, !self.busy.is_empty());
                    self.plan_stable_merge(now, k, ctx);
                }
            }
            Kind::Async(c, l) => {
                self.async_queues.insert((c, l), k);
            }
        }
        k
    }

    fn raised(&self, k: QId) -> bool {
        self.q(k).raising.raised()
    }

    fn busy_classes(&self) -> usize {
        self.busy_per_class.iter().filter(|&&n| n > 0).count()
    }

    fn asymmetric(&self, k: QId) -> bool {
        self.weights.asymmetric(self.q(k).counted, self.busy_classes())
    }

    /// The service a request costs its queue (§3.2).
    fn charge(&self, k: QId, rq: &Request) -> u64 {
        let q = self.q(k);
        let len = rq.len as u64;
        if !q.sync && !q.raising.raised() && !self.asymmetric(k) {
            len * ASYNC_CHARGE_FACTOR
        } else {
            len
        }
    }

    fn next_charge(&self, k: QId) -> Option<u64> {
        let q = self.q(k);
        q.rqs.next().and_then(|id| q.rqs.get(id)).map(|rq| self.charge(k, rq))
    }

    /// Keep the weights tree in step: unraised queues that are busy or have requests at the
    /// device count at their weight (§5.2).
    fn update_counted(&mut self, k: QId) {
        let busy = self.busy.contains(&k);
        let q = self.q(k);
        let want = (!q.raising.raised() && (busy || q.dispatched > 0)).then_some(q.orig_weight);
        if want != q.counted {
            if let Some(w) = q.counted {
                self.weights.remove(w);
            }
            if let Some(w) = want {
                self.weights.add(w);
            }
            self.q_mut(k).counted = want;
        }
    }

    fn set_busy(&mut self, k: QId, on: bool) {
        let c = self.q(k).class.index();
        let changed = if on { self.busy.insert(k) } else { self.busy.remove(&k) };
        if changed {
            if on {
                self.busy_per_class[c] += 1;
            } else {
                self.busy_per_class[c] -= 1;
            }
        }
        self.update_counted(k);
    }

    fn idle_case(&self, k: QId, now: Time) -> IdleCase {
        let q = self.q(k);
        let any_raised_busy = self.busy.iter().any(|&b| self.raised(b));
        let any_unraised_busy = self.busy.iter().any(|&b| !self.raised(b));
        IdleCase {
            strict_guarantees: self.p.strict_guarantees,
            slice_idle: self.p.slice_idle,
            sync: q.sync,
            idle_class: q.class == IoClass::Idle,
            rotational: self.p.rotational,
            queueing: self.hw_tag.queueing(),
            seeky: q.history.seeky(),
            io_bound: q.history.io_bound(now),
            short_think_time: self.short_think_time(k),
            raised: q.raising.raised(),
            any_raised_busy,
            any_unraised_busy,
            in_driver: self.in_driver,
            own_in_flight: q.dispatched,
            asymmetric: self.asymmetric(k),
            only_busy: self.busy.len() == 1 && self.busy.contains(&k),
        }
    }

    fn short_think_time(&self, k: QId) -> bool {
        let q = self.q(k);
        q.has_process() && q.history.short_think_time(self.p.slice_idle)
    }

    /// Linux `bfq_better_to_idle` (§5.1).
    fn better_to_idle(&self, k: QId, now: Time) -> bool {
        self.q(k).has_process() && better_to_idle(&self.idle_case(k, now))
    }

    /// Linux `idling_needed_for_service_guarantees` (§5.1).
    fn idling_needed_for_guarantees(&self, k: QId, now: Time) -> bool {
        let c = self.idle_case(k, now);
        self.q(k).has_process()
            && ((c.raised && (c.any_unraised_busy || c.in_driver >= c.own_in_flight + 4))
                || c.asymmetric
                || c.only_busy)
    }

    /// Idling would boost throughput for `k` and no raised queue is busy (§5.1).
    fn idling_boosts_throughput(&self, k: QId, now: Time) -> bool {
        self.q(k).has_process() && boosts_without_issues(&self.idle_case(k, now))
    }

    fn wr_duration(&self) -> Duration {
        bfq_raise::wr_duration(self.budgets.peak_rate, self.p.rotational)
    }

    /// Choose the next queue by B-WF2Q+ over the classes and put it in service (§3.6,
    /// §2.2, `__bfq_set_in_service_queue`).
    fn select(&mut self, now: Time) -> Option<QId> {
        let idle_turn = now.0 >= self.last_idle_class.0 + IDLE_CLASS_TIMEOUT.0;
        if idle_turn {
            self.last_idle_class = now;
        }
        let order = if idle_turn { [2, 0, 1] } else { [0, 1, 2] };
        let k = order.iter().find_map(|&c| self.trees[c].serve_next())?;
        self.budgets.assigned();
        self.stats.turns += 1;
        let timeout_sync = self.p.timeout_sync;
        let q = self.q_mut(k);
        q.rqs.start_turn();
        q.service = 0;
        q.turn_start = now;
        let soft_rt = q.raising.coeff == bfq_raise::SOFT_RT_COEFF;
        q.budget_timeout = budget_timeout(now, timeout_sync, soft_rt, q.weight(), q.orig_weight);
        self.in_service = Some(k);
        self.stop_idling();
        self.in_serv_last_pos = 0;
        Some(k)
    }

    /// End the in-service queue's turn (§4.2). `compensate`: the idle timer ended it, so the
    /// turn is measured up to when idling began.
    fn expire(&mut self, now: Time, reason: Expiry, compensate: bool) {
        let k = self.in_service.take().expect("bfq: expire with nothing in service");
        self.stop_idling();
        match reason {
            Expiry::TooIdle => self.stats.too_idle += 1,
            Expiry::BudgetTimeout => self.stats.budget_timeouts += 1,
            Expiry::BudgetExhausted => self.stats.budget_exhausted += 1,
            Expiry::NoMoreRequests => self.stats.no_more_requests += 1,
            Expiry::Preempted => self.stats.preemptions += 1,
        }
        // a shared queue gone seeky is split at its processes' next requests
        if self.q(k).coop() && self.q(k).history.seeky() {
            self.q_mut(k).split_coop = true;
        }
        let end = if compensate { self.idle_start.max(self.q(k).turn_start) } else { now };
        let device_max = self.budgets.device_max();
        let q = self.q(k);
        let turn = Turn {
            sync: q.sync,
            raised: q.raising.raised(),
            seeky: q.history.seeky(),
            rotational: self.p.rotational,
            elapsed: end - q.turn_start,
            service: q.service,
            budget: q.budget,
            reason,
        };
        if let Some(c) = time_charge(&turn, device_max) {
            if c > turn.service {
                self.stats.time_charged += 1;
                let q = self.q_mut(k);
                q.budget = q.budget.max(c);
                q.service = c;
                self.tree(k).served_by(k, c - turn.service);
            }
        }
        let (low_latency, slice_idle) = (self.p.low_latency, self.p.slice_idle);
        let q = self.q_mut(k);
        if low_latency && !q.raising.raised() {
            q.raising.start = now;
        }
        let empty = q.rqs.is_empty();
        if low_latency && empty {
            if q.dispatched == 0 {
                let (since, served) = (q.busy_since, q.served_since_busy);
                q.raising.drained(now, since, served, slice_idle);
            } else {
                q.softrt_pending = true;
            }
        }
        q.sample_next = false;
        let qb = QueueBudget {
            sync: q.sync,
            raised: q.raising.raised(),
            max_budget: q.max_budget,
            service: q.service,
            in_flight: q.dispatched,
        };
        if let Some(b) = self.budgets.recalc(qb, reason) {
            let next = self.next_charge(k);
            let q = self.q_mut(k);
            q.max_budget = b;
            if let Some(c) = next {
                q.budget = b.max(c);
            }
        }
        let keep = reason == Expiry::Preempted && self.idling_needed_for_guarantees(k, now);
        if empty && !keep {
            self.tree(k).expire(None);
            self.set_busy(k, false);
            let q = self.q_mut(k);
            if q.dispatched == 0 {
                q.went_idle = Some(now);
            }
            if !matches!(reason, Expiry::BudgetTimeout | Expiry::BudgetExhausted) {
                q.wait_request = true;
            } else {
                q.service = 0;
            }
        } else {
            let b = self.q(k).budget;
            self.tree(k).expire(Some(b));
            self.q_mut(k).service = 0;
        }
        self.update_counted(k);
    }

    /// A queue leaves the busy set without a turn (emptied by injection, or its issuer left).
    fn deactivate(&mut self, now: Time, k: QId) {
        self.tree(k).deactivate(k);
        self.set_busy(k, false);
        let q = self.q_mut(k);
        if q.dispatched == 0 {
            q.went_idle = Some(now);
        }
    }

    /// Queue `k` becomes busy with its first request (§7.1, §3.5, §3.6, §9).
    fn became_busy(&mut self, now: Time, k: QId) {
        let kind = self.q(k).kind;
        let (class, orig_weight) = self.class_weight(kind);
        {
            let q = self.q_mut(k);
            q.class = class;
            q.orig_weight = orig_weight;
        }
        let idle_for = self.q(k).went_idle.map_or(Duration::MAX, |t| now - t);
        self.bursts.busy_again(k, idle_for);
        let in_burst = self.bursts.in_large_burst(k);
        let duration = self.wr_duration();
        let min_budget = self.budgets.min_budget();
        let slice_idle = self.p.slice_idle;
        let low_latency = self.p.low_latency;
        let q = self.q_mut(k);
        let started = low_latency
            && (!q.coop() || q.stable)
            && q.split_at.is_none_or(|t| now.0 >= t.0 + bfq_raise::MIN_IDLE_TIME.0)
            && q.raising.became_busy(Busy {
                now,
                sync: q.sync,
                default_weight: q.orig_weight == DEFAULT_WEIGHT,
                in_burst,
                totally_seeky: q.history.totally_seeky(),
                in_flight: q.dispatched,
                went_idle: q.went_idle,
                duration,
            });
        let hole = q.wait_request && now.0 < q.last_completion.0 + 3 * slice_idle.0 && q.budget > q.service;
        q.wait_request = false;
        if hole {
            q.budget = (q.budget - q.service).min(q.max_budget);
        }
        q.service = 0;
        let next = self.next_charge(k).unwrap_or(0);
        let q = self.q_mut(k);
        if !hole {
            q.budget = q.max_budget.max(next);
        }
        if started {
            q.budget = q.budget.min(2 * min_budget);
        }
        q.budget = q.budget.max(1);
        q.busy_since = now;
        q.served_since_busy = 0;
        q.first_io = None;
        let (w, b, coeff) = (q.weight(), q.budget, q.raising.coeff);
        if started {
            self.stats.raised += 1;
        }
        if hole {
            self.stats.hole_recoveries += 1;
        }
        self.activations += 1;
        self.q_mut(k).activated = self.activations;
        self.tree(k).activate_with(k, w, b, hole, coeff);
        self.set_busy(k, true);
        if let Some(s) = self.in_service.filter(|&s| s != k) {
            let contender = |k: QId| {
                let q = self.q(k);
                Contender { class: q.class.index(), weight: q.weight(), wr_coeff: q.raising.coeff }
            };
            let s_idles = self.better_to_idle(s, now);
            if preempts(contender(k), hole, contender(s), s_idles) {
                self.expire(now, Expiry::Preempted, false);
            }
        }
    }

    /// Take the next request of queue `k` and account for it (§10 Decide step 4).
    fn take(&mut self, now: Time, k: QId) -> Request {
        let id = self.q(k).rqs.next().expect("bfq: take from an empty queue");
        let charge = self.charge(k, self.q(k).rqs.get(id).expect("next is queued"));
        let rq = self.q_mut(k).rqs.remove(now, id);
        self.pending -= 1;
        self.tree(k).served_by(k, charge);
        let in_service = self.in_service == Some(k);
        let in_burst = self.bursts.in_large_burst(k);
        let duration = self.wr_duration();
        if in_service {
            self.in_serv_last_pos = rq.sector + rq.len as Sector;
        }
        let q = self.q_mut(k);
        q.first_io.get_or_insert(now);
        q.service += charge;
        q.served_since_busy += charge;
        q.dispatched += 1;
        if q.sample_next && in_service {
            q.sample_next = false;
            q.waited = Some(rq.id);
        }
        let was = q.raising.coeff;
        if in_service {
            q.raising.dispatched(now, charge, in_burst, duration);
        }
        let w = q.weight();
        if q.raising.coeff != was {
            self.tree(k).set_weight(k, w);
        }
        self.budgets.dispatched(now, &rq, self.in_driver);
        self.in_driver += 1;
        self.max_in_driver = self.max_in_driver.max(self.in_driver);
        self.in_flight.insert(rq.id, k);
        self.update_counted(k);
        if in_service {
            // the idle class gets one request per turn while others wait
            if self.q(k).class == IoClass::Idle && self.busy.len() > 1 {
                self.expire(now, Expiry::BudgetExhausted, false);
            }
        } else if self.q(k).rqs.is_empty() {
            self.deactivate(now, k);
        }
        rq
    }

    /// A queue to inject one request from while the in-service queue `s` idles (§5.8).
    fn inject_candidate(&self, now: Time, s: QId) -> Option<QId> {
        let fits = |c: QId| {
            c != s
                && self.busy.contains(&c)
                && self
                    .next_charge(c)
                    .is_some_and(|ch| ch <= self.q(c).budget.saturating_sub(self.q(c).service))
        };
        let sq = self.q(s);
        // 1. the same process's async requests
        if let Kind::Sync(Some(ctx)) = sq.kind {
            let prio = self.ctx_prio(Some(ctx));
            let level = if prio.class == IoClass::Idle { 7 } else { prio.level };
            if let Some(&a) = self.async_queues.get(&(prio.class, level)) {
                let aq = self.q(a);
                let own = aq.rqs.next().and_then(|id| aq.rqs.get(id)).is_some_and(|r| r.ctx == Some(ctx));
                if own && fits(a) {
                    return Some(a);
                }
            }
        }
        // 2. its waker; 3. a queue it wakes
        if let Some(w) = sq.waker.waker.filter(|&w| fits(w)) {
            return Some(w);
        }
        if let Some(&w) = self.busy.iter().find(|&&b| self.q(b).waker.waker == Some(s) && fits(b)) {
            return Some(w);
        }
        // 4. any busy queue, within the inject limit, when idling is not for throughput
        if self.idling_boosts_throughput(s, now) {
            return None;
        }
        let raised_busy = self.busy.iter().filter(|&&b| self.raised(b)).count();
        let s_raised = sq.raising.raised();
        let long_tt = !self.short_think_time(s);
        if s_raised && raised_busy <= 1 && !long_tt {
            return None;
        }
        if self.in_driver >= sq.inject.limit {
            return None;
        }
        self.busy
            .iter()
            .copied()
            .filter(|&c| fits(c))
            .filter(|&c| !s_raised || long_tt || self.raised(c))
            .filter(|&c| {
                self.p.rotational
                    || self.in_driver == 0
                    || self
                        .q(c)
                        .rqs
                        .next()
                        .and_then(|id| self.q(c).rqs.get(id))
                        .is_none_or(|r| r.len < LARGE_RQ_NONROT)
            })
            .max_by_key(|&c| self.q(c).activated)
    }

    /// The issuer of queue `k` is gone (§10 Context exit).
    fn release(&mut self, now: Time, k: QId) {
        if self.in_service == Some(k) {
            self.in_service = None;
            self.stop_idling();
            let q = self.q(k);
            let (empty, b) = (q.rqs.is_empty(), q.budget);
            self.tree(k).expire(if empty { None } else { Some(b) });
            self.q_mut(k).service = 0;
            if empty {
                self.set_busy(k, false);
                if self.q(k).dispatched == 0 {
                    self.q_mut(k).went_idle = Some(now);
                }
            }
        } else if self.busy.contains(&k) && self.q(k).rqs.is_empty() {
            self.deactivate(now, k);
        }
        self.update_counted(k);
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut queued = 0;
        let mut per_class = [0u32; 3];
        for (i, q) in self.queues.iter().enumerate() {
            let k = i as QId;
            q.rqs.check();
            queued += q.rqs.len();
            let busy = self.trees[q.class.index()].is_busy(k);
            assert_eq!(busy, self.busy.contains(&k), "queue {k} busy");
            if busy {
                per_class[q.class.index()] += 1;
            }
            if !q.rqs.is_empty() {
                assert!(busy, "queue {k} has requests but is not busy");
            }
            let in_flight = self.in_flight.values().filter(|&&v| v == k).count();
            assert_eq!(in_flight, q.dispatched as usize, "queue {k} in flight");
        }
        assert_eq!(per_class, self.busy_per_class);
        // a synchronous queue has as many processes as contexts sent to it
        for (i, q) in self.queues.iter().enumerate() {
            if q.sync {
                let mapped = self.sync_queues.values().filter(|&&v| v == i as QId).count() as u32;
                assert_eq!(q.processes, mapped, "queue {i} processes");
            }
        }
        assert_eq!(queued, self.pending, "pending");
        assert_eq!(self.in_flight.len(), self.in_driver as usize);
        for t in &self.trees {
            t.check();
        }
        if let Some(k) = self.in_service {
            assert_eq!(self.trees[self.q(k).class.index()].in_service(), Some(k));
        }
        if self.idle_until.is_some() {
            let k = self.in_service.expect("idling with nothing in service");
            assert!(self.q(k).rqs.is_empty(), "idling with requests queued");
        }
    }
}

impl Scheduler for Bfq {
    fn name(&self) -> String {
        "bfq".to_string()
    }

    fn arrive(&mut self, now: Time, rq: Request, _dev: &dyn DeviceView) -> Arrival {
        let k = self.queue_for(now, &rq, false);
        let k = if is_sync(&rq) { self.cooperate(now, k, &rq) } else { k };
        // an insertion runs the hardware queue
        self.unkicked = false;
        let max_sectors = self.max_sectors;
        if let Some(into) = self.q_mut(k).rqs.merge(&rq, max_sectors) {
            // a busy queue waiting for its turn may need a larger budget for its next request
            if self.in_service != Some(k) {
                self.refresh_budget(k);
            }
            return Arrival::Merged { into };
        }
        let was_busy = self.busy.contains(&k);
        let slice_idle = self.p.slice_idle;
        let (in_driver, last_completer) = (self.in_driver, self.last_completer);
        let in_service = self.in_service == Some(k);
        let short_tt = self.short_think_time(k);
        let (rotational, last_position) = (self.p.rotational, self.budgets.last_position());
        let q = self.q_mut(k);
        let empty = q.rqs.is_empty();
        let idle = empty && q.dispatched == 0 && !was_busy;
        q.history.arrival(now, &rq, idle, q.last_completion, slice_idle, rotational);
        if q.sync && empty {
            let (lc, lt) = match last_completer {
                Some((c, t)) => (Some(c), t),
                None => (None, Time::ZERO),
            };
            q.waker.arrival(
                k,
                bfq_inject::Arrival {
                    now,
                    last_completer: lc,
                    last_completion: lt,
                    short_think_time: short_tt,
                    in_flight: q.dispatched,
                    slice_idle,
                },
            );
            q.inject.empty_arrival(now, short_tt);
            if in_service {
                q.inject.start_sampling(now, in_driver);
                q.sample_next = true;
            }
        }
        let gap = q.last_arrival.map_or(Duration::MAX, |t| now - t);
        q.last_arrival = Some(now);
        q.rqs.add(rq, last_position);
        self.pending += 1;
        if !was_busy {
            self.became_busy(now, k);
        } else {
            let (low_latency, duration) = (self.p.low_latency, self.wr_duration());
            let q = self.q_mut(k);
            if low_latency && !q.sync {
                let was = q.raising.coeff;
                q.raising.async_arrival(now, gap, duration);
                if q.raising.coeff != was {
                    self.stats.raised += 1;
                    let w = self.q(k).weight();
                    self.tree(k).set_weight(k, w);
                    self.update_counted(k);
                }
            }
            if !in_service {
                self.refresh_budget(k);
            }
        }
        if in_service && self.idle_until.take().is_some() {
            self.stats.idle_hits += 1;
            let q = self.q(k);
            if now >= q.budget_timeout {
                self.expire(now, Expiry::BudgetTimeout, false);
            }
        }
        Arrival::Queued
    }

    fn decide(&mut self, now: Time, _dev: &dyn DeviceView) -> Decision {
        if self.p.strict_guarantees && self.in_driver > 0 {
            return Decision::Idle;
        }
        // each pass dispatches, waits, or ends a turn; a turn ends at most twice per queue
        for _ in 0..2 * self.queues.len() + 4 {
            let k = match self.in_service {
                Some(k) => k,
                None => match self.select(now) {
                    Some(k) => k,
                    None => return Decision::Idle,
                },
            };
            let q = self.q(k);
            let empty = q.rqs.is_empty();
            let past_timeout = now >= q.budget_timeout;
            if let Some(t) = self.idle_until.filter(|&t| now >= t) {
                // the idle timer fired at `t` (the driver may ask later)
                self.stop_idling();
                if past_timeout {
                    self.expire(t, Expiry::BudgetTimeout, true);
                    continue;
                }
                if empty {
                    self.expire(t, Expiry::TooIdle, true);
                    continue;
                }
            }
            let q = self.q(k);
            let waiting = self.idle_until.is_some();
            let timed_out = past_timeout && may_expire_for_timeout(waiting, q.budget, q.service);
            let better = self.better_to_idle(k, now);
            let must_idle = empty && better;
            if timed_out && !must_idle {
                self.expire(now, Expiry::BudgetTimeout, false);
                continue;
            }
            if !empty {
                let q = self.q(k);
                let charge = self.next_charge(k).expect("not empty");
                if charge > q.budget.saturating_sub(q.service) {
                    self.expire(now, Expiry::BudgetExhausted, false);
                    continue;
                }
                self.stop_idling();
                return Decision::Dispatch(self.take(now, k));
            }
            if waiting || (self.q(k).dispatched > 0 && better) {
                let idle_until = self.idle_until;
                if self.unkicked {
                    // the completion that armed the timer asked for no dispatch
                    return idle_until.map_or(Decision::Idle, Decision::WaitUntil);
                }
                if let Some(c) = self.inject_candidate(now, k) {
                    self.stats.injections += 1;
                    self.q_mut(k).inject.note_injection();
                    return Decision::Dispatch(self.take(now, c));
                }
                // nothing to inject: blk-mq runs the queue again in 3 ms while requests wait
                let rekick = (self.pending > 0).then_some(Time(now.0 + BLK_MQ_RERUN.0));
                return match idle_until.into_iter().chain(rekick).min() {
                    Some(t) => Decision::WaitUntil(t),
                    None => Decision::Idle,
                };
            }
            self.expire(now, Expiry::NoMoreRequests, false);
        }
        unreachable!("bfq: decide did not settle")
    }

    fn completed(&mut self, now: Time, rq: &Request, _dev: &dyn DeviceView) {
        let Some(k) = self.in_flight.remove(&rq.id) else { return };
        let light = self.in_service.is_some_and(|s| {
            let q = self.q(s);
            self.short_think_time(s) && (q.dispatched as usize + q.rqs.len()) < 3 && self.in_driver < 3
        });
        self.hw_tag.completion(self.in_driver, self.pending as u32, light);
        let (in_driver, max_in_driver) = (self.in_driver, self.max_in_driver);
        self.in_driver -= 1;
        let busy = self.busy.contains(&k);
        let slice_idle = self.p.slice_idle;
        let q = self.q_mut(k);
        if q.waited == Some(rq.id) {
            q.waited = None;
            q.inject.waited_completed(now, in_driver, max_in_driver);
        }
        q.dispatched -= 1;
        if q.dispatched == 0 && !busy {
            q.went_idle = Some(now);
        }
        q.last_completion = now;
        if q.softrt_pending && q.dispatched == 0 {
            q.softrt_pending = false;
            let (since, served) = (q.busy_since, q.served_since_busy);
            q.raising.drained(now, since, served, slice_idle);
        }
        self.update_counted(k);
        self.budgets.completed(now);
        self.last_completer = Some((k, now));
        if self.in_service != Some(k) {
            return;
        }
        let q = self.q(k);
        let empty = q.rqs.is_empty();
        let better = self.better_to_idle(k, now);
        if empty && better {
            if q.dispatched == 0 {
                let sl = slice(slice_idle, q.history.seeky(), q.raising.raised(), self.asymmetric(k));
                self.idle_start = now;
                self.idle_until = Some(now + sl);
                self.unkicked = true;
                self.stats.idle_waits += 1;
            }
        } else if now >= q.budget_timeout && may_expire_for_timeout(false, q.budget, q.service) {
            self.expire(now, Expiry::BudgetTimeout, false);
        } else if empty && (q.dispatched == 0 || !better) {
            self.expire(now, Expiry::NoMoreRequests, false);
        }
    }

    fn pending(&self) -> usize {
        self.pending
    }

    fn set_weight(&mut self, ctx: ContextId, weight: u32) {
        self.weight.insert(ctx, weight.max(1));
        self.refresh_idle_queue(ctx);
    }

    fn set_ioprio(&mut self, ctx: ContextId, prio: IoPrio) {
        self.prio.insert(ctx, prio);
        self.refresh_idle_queue(ctx);
    }

    fn context_exited(&mut self, now: Time, ctx: ContextId) {
        self.prio.remove(&ctx);
        self.weight.remove(&ctx);
        self.saved.remove(&ctx);
        self.stable_target.remove(&ctx);
        self.stably_merged.remove(&ctx);
        if let Some(k) = self.sync_queues.remove(&Some(ctx)) {
            self.leave(now, k, true);
        }
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        let s = &self.stats;
        vec![
            ("turns", s.turns),
            ("budget_exhausted", s.budget_exhausted),
            ("budget_timeouts", s.budget_timeouts),
            ("no_more_requests", s.no_more_requests),
            ("too_idle", s.too_idle),
            ("preemptions", s.preemptions),
            ("time_charged", s.time_charged),
            ("idle_waits", s.idle_waits),
            ("idle_hits", s.idle_hits),
            ("injections", s.injections),
            ("raised", s.raised),
            ("hole_recoveries", s.hole_recoveries),
            ("merges", s.merges),
            ("splits", s.splits),
        ]
    }
}

impl Bfq {
    /// No idle wait any more (the timer and whether anything ran the queue since it was
    /// armed go together).
    fn stop_idling(&mut self) {
        self.idle_until = None;
        self.unkicked = false;
    }

    /// A process leaves queue `k`, `exiting` or for another queue. When the last one exits
    /// the queue is released; when the last one moves, the queue only loses its process
    /// (it drains what it holds, and is not idled for).
    fn leave(&mut self, now: Time, k: QId, exiting: bool) {
        let left = self.q(k).processes.saturating_sub(1);
        self.q_mut(k).processes = left;
        match left {
            0 if exiting => self.release(now, k),
            0 => {
                let q = self.q(k);
                let idle = q.rqs.is_empty() && q.dispatched == 0;
                if idle && self.busy.contains(&k) && self.in_service != Some(k) {
                    self.deactivate(now, k);
                }
                self.update_counted(k);
            }
            1 => self.q_mut(k).split_coop = false,
            _ => {}
        }
    }

    /// Queue merging for a synchronous request of process `rq.ctx` bound for queue `k`
    /// (§8.1): split a shared queue marked for it, else merge into a cooperator; the queue
    /// the request goes to.
    fn cooperate(&mut self, now: Time, k: QId, rq: &Request) -> QId {
        let Some(ctx) = rq.ctx else { return k };
        if self.q(k).coop() && self.q(k).split_coop && !self.stably_merged.contains(&ctx) {
            // the process (the last one keeps the queue: it is then no longer shared) goes back to a queue of its own, with its history from the merge
            self.sync_queues.remove(&Some(ctx));
            self.leave(now, k, false);
            let own = self.queue_for(now, rq, true);
            if let Some(h) = self.saved.remove(&ctx) {
                self.q_mut(own).history = h;
            }
            self.stats.splits += 1;
            return own;
        }
        if let Some(stable) = self.stable_merge(now, ctx, k) {
            return stable;
        }
        match self.cooperator(now, k, rq) {
            Some(to) => {
                self.merge_into(now, ctx, k, to);
                to
            }
            None => k,
        }
    }

    /// A synchronous queue `k` was just created for `ctx`: make it the stable-merge
    /// reference, or schedule its merge into the reference (§8.1).
    fn plan_stable_merge(&mut self, now: Time, k: QId, ctx: Option<ContextId>) {
        let Some(ctx) = ctx else { return };
        let q = self.q(k);
        let last = self.last_created.filter(|&r| r != k).map(|r| {
            let l = self.q(r);
            (l.created, l.class == q.class && l.orig_weight == q.orig_weight)
        });
        match bfq_merge::stable_plan(now, last) {
            Some(false) => self.last_created = Some(k),
            Some(true) => {
                let r = self.last_created.expect("a reference to merge into");
                self.stable_target.insert(ctx, r);
            }
            None => {}
        }
    }

    /// The scheduled stable merge of `ctx`'s queue `k`, once its time has come (§8.1):
    /// `Some(queue)` the request goes to (the target, or `k` when the merge was dropped),
    /// `None` nothing scheduled or not yet.
    fn stable_merge(&mut self, now: Time, ctx: ContextId, k: QId) -> Option<QId> {
        let &to = self.stable_target.get(&ctx)?;
        let q = self.q(k);
        let late = |t: Time| now.0 > t.0 + bfq_merge::STABLE_LATE.0;
        if !q.sync || q.last_arrival.is_none() || !late(q.created) || !q.split_at.is_none_or(late) {
            return None;
        }
        self.stable_target.remove(&ctx);
        let alive = self.q(k).processes > 0 && self.q(to).processes > 0;
        if to == k || !alive || self.idling_boosts_throughput(k, now) {
            return Some(k);
        }
        self.merge_into(now, ctx, k, to);
        self.q_mut(to).stable = true;
        self.stably_merged.insert(ctx);
        let owners: Vec<ContextId> =
            self.sync_queues.iter().filter(|&(_, &v)| v == to).filter_map(|(c, _)| *c).collect();
        self.stably_merged.extend(owners);
        Some(to)
    }

    /// The queue `k`'s process may join for `rq`, if any (Linux `bfq_setup_cooperator`).
    fn cooperator(&self, now: Time, k: QId, rq: &Request) -> Option<QId> {
        if (!self.p.rotational && self.hw_tag.queueing())
            || bfq_merge::too_late(self.q(k).first_io, now)
            || !self.busy.iter().any(|&b| b != k)
        {
            return None;
        }
        let side = |c: QId| {
            let q = self.q(c);
            bfq_merge::Side {
                class: q.class.index(),
                sync: q.sync,
                seeky: q.history.seeky(),
                has_process: q.has_process(),
                too_late: bfq_merge::too_late(q.first_io, now),
            }
        };
        let may = |c: QId| c != k && bfq_merge::may_cooperate(side(k), side(c));
        if let Some(s) = self.in_service {
            if self.in_serv_last_pos != 0 && bfq_merge::close(rq.sector, self.in_serv_last_pos) && may(s) {
                return Some(s);
            }
        }
        let next = self.busy.iter().filter(|&&b| b != k).filter_map(|&b| {
            let q = self.q(b);
            q.rqs.next().and_then(|id| q.rqs.get(id)).map(|r| (b, r.sector))
        });
        bfq_merge::closest(rq.sector, next).filter(|&c| may(c))
    }

    /// Process `ctx` moves from queue `from` to `to` (Linux `bfq_merge_bfqqs`): `to` is
    /// shared from now on and takes `from`'s weight raising if it has none; `from` loses
    /// it, and drains what it holds.
    fn merge_into(&mut self, now: Time, ctx: ContextId, from: QId, to: QId) {
        self.saved.insert(ctx, self.q(from).history.clone());
        if self.raised(from) {
            if !self.raised(to) {
                let r = self.q(from).raising.clone();
                self.q_mut(to).raising = r;
                self.reweigh(to);
            }
            let q = self.q_mut(from);
            q.raising.coeff = 1;
            q.raising.start = now;
            self.reweigh(from);
        }
        self.q_mut(to).processes += 1;
        self.sync_queues.insert(Some(ctx), to);
        self.leave(now, from, false);
        self.stats.merges += 1;
    }

    /// Queue `k`'s raising changed: its weight in its tree and the weights tree follow.
    fn reweigh(&mut self, k: QId) {
        let w = self.q(k).weight();
        self.tree(k).set_weight(k, w);
        self.update_counted(k);
    }

    /// A busy queue not in service whose next request may have changed: budget = the
    /// largest of its maximum budget, its next request's charge and its service (§3.5).
    fn refresh_budget(&mut self, k: QId) {
        if !self.busy.contains(&k) {
            return;
        }
        let next = self.next_charge(k).unwrap_or(0);
        let q = self.q(k);
        let b = q.max_budget.max(next).max(q.service);
        if b != q.budget {
            self.q_mut(k).budget = b;
            self.tree(k).set_budget(k, b);
        }
    }

    /// A context's priority or weight changed: its queue takes them now if it is not busy
    /// (a busy one at its next activation).
    fn refresh_idle_queue(&mut self, ctx: ContextId) {
        let Some(&k) = self.sync_queues.get(&Some(ctx)) else { return };
        if self.busy.contains(&k) {
            return;
        }
        let (class, w) = self.class_weight(self.q(k).kind);
        let q = self.q_mut(k);
        q.class = class;
        q.orig_weight = w;
        self.update_counted(k);
    }
}

#[cfg(test)]
mod tests;

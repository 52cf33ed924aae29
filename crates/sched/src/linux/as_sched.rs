//! `as`: Linux 2.6's anticipatory I/O scheduler (block/as-iosched.c, Documentation/block/
//! as-iosched.txt), the "AS" that paper 000 (Stream Scheduling, Sections 3.1 and 3.3) and
//! paper 002 (Section 5) measure against, and the Linux form of paper 001's anticipation.
//!
//! Written from the documented behaviour and the papers, with Linux's knob names and
//! defaults; no kernel code is copied. Time is passed in (integer ns) where Linux reads
//! `jiffies`; a kernel with `HZ = 1000` is the model.
//!
//! ## The layers, in the order they apply (as-iosched.txt)
//! 1. **One-way elevator with limited back seeks.** Per direction (read, write) the queue
//!    is sorted by start sector. The next request of a direction is the best, by
//!    `as_choose_req`'s rule, among those queued, seen from where the last dispatched
//!    request of that direction ended (`last_sector`): a request ahead costs its distance;
//!    one behind costs `BACK_PENALTY` (2) times its distance, and only when it lies within
//!    `MAXBACK` (1024 x 1024 sectors, 512 MiB) — further behind it counts as a wrap; ties go
//!    forward; with nothing ahead and nothing within `MAXBACK` behind, the sweep restarts
//!    at the lowest sector. So short backward hops (half the forward distance or less) are
//!    taken, long ones never.
//! 2. **FIFO expiry.** Every request gets `arrival + read_expire` (or `write_expire`). When
//!    the running batch's direction has an expired FIFO head it is served before the
//!    elevator's choice and instead of starting a wait (a wait already under way is not cut
//!    short: it ends within `antic_expire` anyway). As in Linux, the
//!    FIFO of a direction is *looked at* at most once per expire interval (and only in a
//!    batch of that direction), so an expired request waits up to one more interval: a
//!    read is served within about `2 x read_expire` in a read batch (as-iosched.txt: "set
//!    to 50, a request might take anywhere < 100ms").
//! 3. **Batches by time.** Reads and writes alternate in batches. A read batch runs while
//!    reads are queued; once writes are pending too, its clock (`read_batch_expire`,
//!    started when the batch's first read completes and restarted at every dispatch while
//!    no write is pending) ends it. A write batch ends at `write_batch_expire` or after
//!    `write_batch_count` writes, a count auto-tuned after each write batch: halved when
//!    the batch overran 3x its time, decremented when it overran, incremented (doubled when
//!    it took under a third of its time) when it used up its count early; initially
//!    `max(2, write_batch_expire / 10 ms)`. A new batch starts at its direction's FIFO head.
//!    Switching direction waits until the previous batch's requests have completed; that
//!    drain answers `WaitUntil(Time::MAX)`: the next completion ends it (only drivers with
//!    several requests in the device ever see it).
//! 4. **Read anticipation.** In a read batch, after a read from context P is dispatched, P
//!    is the *anticipated* context (a write dispatch clears it: writes are never
//!    anticipated). When the elevator's next candidate is not worth taking, the device is
//!    held idle until P's read completed `antic_expire` ago (`WaitUntil(completion +
//!    antic_expire)`); during the wait every arriving request is tested, and one that
//!    *breaks* anticipation ends the wait: the elevator's choice is then dispatched at once
//!    (usually that very request). At the timeout the elevator's choice goes too.
//!
//! ## Breaking anticipation (`as_can_break_anticipation`), first rule that applies
//! - the request is from P itself (any request, near or far): break;
//! - P's last request completed `antic_expire` ago or longer: break;
//! - P has requests queued or in the device (it is not blocked on us): break;
//! - the request is a read *close* to `last_sector`: break, and the request counts as one
//!   of P's for P's history (cooperating processes working in one area). Close means within
//!   a window `[last - delta/2, last + delta]` with `delta = 8192` sectors, doubling per ms
//!   waited (bounded: past 20 ms or `antic_expire` everything is close), or nearer than P's
//!   mean seek distance (for a context without seek history, the mean first seek of new
//!   contexts);
//! - P has exited (`context_exited`): break — and no wait is started for it;
//! - P's decayed mean thinktime exceeds `antic_expire` (for a context without thinktime
//!   history: the mean first thinktime of new contexts, or new contexts mostly exited or
//!   timed out — Linux's `exit_prob` above one half): break;
//! - otherwise keep waiting.
//!
//! ## Per-context history (`as_io_context`)
//! On each queued (not merged) read of a context: thinktime = time since the context's last
//! read completed (0 when it still has requests queued or in the device, capped at
//! `MAX_THINKTIME` = 20 ms), and seek distance = from where its previous read ended to
//! where this one starts (clamped to `4 x mean + 2 Mi` sectors for the first samples,
//! `4 x mean + 128 Ki` later, so an odd far jump does not blow the mean up). Both are
//! exponentially decayed means in Linux's fixed point (weight 1/8 per sample, scale 256).
//! The first sample of a context also feeds the "new context" means that judge contexts
//! without history, and `exit_prob` decays by 1/8 per such sample and grows by 1/8 of the
//! gap to 1 each time a wait for a context without history times out or hits its exit.
//! These estimates are what Linux's read-only sysfs file `est_time` shows: here
//! [`As::est_time`].
//!
//! ## Contexts (`Request::ctx`)
//! Each `ContextId` is a process (io_context). `ctx == None` is one more context, shared by
//! every anonymous request: all of them look like one process, so any pending request
//! breaks anticipation as "P's own" and AS degenerates to a deadline-like elevator — the
//! "process information hidden" case of 000 Section 3.3. A context that `context_exited`
//! is forgotten once it has nothing queued or in the device; a later request under the
//! same id starts a new history.
//!
//! ## Merging
//! A new request is appended to a queued request of its direction that ends where it starts
//! (back merge), else prepended to one that starts where it ends (front merge), up to the
//! driver's `max_sectors`. The merged request keeps its id, issuer and the earlier expiry. A
//! merged arrival is no new request for the history (as in Linux, where a merged bio never
//! becomes a request), but one from P ends a wait for P.
//!
//! ## Where headway differs from Linux, and why
//! - Directions are read and write (2.6's original split); later kernels put synchronous
//!   writes in the read class. Here only reads are anticipated.
//! - `antic_expire` is 6 ms: Linux's `HZ / 150` jiffies is 6 jiffies = 6 ms at `HZ = 1000`
//!   (the source says "default around 6ms"; 1000/150 = 6.67 ms before integer division).
//!   Elapsed times Linux counts in jiffies (the close window) are counted in whole ms.
//! - An exited context is never waited for (older 2.6 rule); later kernels kept waiting
//!   unless exits without a cooperating request had been frequent (`exit_no_coop`).
//! - Times compare "at or past": a deadline `t` has expired at `now >= t`.
//! - The elevator's next request is computed when asked (the optimum of `as_choose_req`
//!   over the queue) instead of cached and updated per insertion; the result is the same
//!   request Linux's cache holds unless two candidates tie.
//! - Linux can also wait for P's request to *complete* before anticipating (`WAIT_REQ`);
//!   that state needs P to have nothing in the device yet not be finished, which the rule
//!   "P has requests in the device: break" already excludes, so it is not modelled.
//!
//! ## Tunables (Linux sysfs names and defaults; bare numbers are milliseconds)
//! | name | default | Linux | trade-off |
//! |---|---|---|---|
//! | `antic_expire` | 6 ms | HZ/150 | longer waits catch slower thinkers, cost more idle time; 0 = no anticipation (deadline-like) |
//! | `read_expire` | 125 ms | HZ/8 | a read's deadline; also the time slice one reader gets against others |
//! | `write_expire` | 250 ms | HZ/4 | a write's deadline (checked only in write batches) |
//! | `read_batch_expire` | 500 ms | HZ/2 | read batch length once writes wait; longer = more efficient reads |
//! | `write_batch_expire` | 125 ms | HZ/8 | write batch target length (auto-tunes the count) |
//!
//! Invariants (checked by `check` in tests): every queued request is in exactly one
//! direction's sorted queue and in that direction's FIFO under `(arrival + expire, id)`;
//! per-context queued / in-device counts sum to the scheduler's totals; a wait has an
//! anticipated context whose request has completed; a pending batch switch has requests in
//! the device.

use std::collections::{BTreeSet, HashMap};

use crate::device::DeviceView;
use crate::error::BuildError;
use crate::params::MAX_SECTORS_KB;
use crate::params::{ParamError, Settings, TimeUnit, Tunable, Unit};
use crate::policy::SortedQueue;
use crate::request::{ContextId, Dir, ReqId, Request, Sector};
use crate::scheduler::{Arrival, Decision, Scheduler};
use crate::time::{Duration, Time};

/// Max time before a read is served (Linux `default_read_expire = HZ / 8`).
pub const READ_EXPIRE: Duration = Duration::from_millis(125);
/// Max time before a write is served, ideally (Linux `default_write_expire = HZ / 4`).
pub const WRITE_EXPIRE: Duration = Duration::from_millis(250);
/// Read batch length while writes wait (Linux `default_read_batch_expire = HZ / 2`).
pub const READ_BATCH_EXPIRE: Duration = Duration::from_millis(500);
/// Write batch target length (Linux `default_write_batch_expire = HZ / 8`).
pub const WRITE_BATCH_EXPIRE: Duration = Duration::from_millis(125);
/// Longest anticipation wait (Linux `default_antic_expire = HZ / 150`: 6 jiffies at HZ=1000).
pub const ANTIC_EXPIRE: Duration = Duration::from_millis(6);
/// Thinktime samples are capped here (Linux `MAX_THINKTIME = HZ / 50`).
pub const MAX_THINKTIME: Duration = Duration::from_millis(20);
/// Longest backward seek the elevator takes, sectors (Linux `MAXBACK`).
pub const MAXBACK: Sector = 1024 * 1024;
/// A backward seek costs this many times its distance (Linux `BACK_PENALTY`).
pub const BACK_PENALTY: u64 = 2;
/// "Close" window at the start of a wait, sectors; it doubles per millisecond waited.
pub const CLOSE_WINDOW: Sector = 8192;
/// Past this wait, every request is close.
const CLOSE_WINDOW_MAX_WAIT: Duration = Duration::from_millis(20);
/// Fixed point of the decayed statistics: 1.0 == 256.
const ONE: u64 = 256;

/// The tunables, as `headway tunables` lists them.
pub mod knob {
    use super::*;

    pub const ANTIC_EXPIRE: Tunable = Tunable {
        name: "antic_expire",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(6) },
        doc: "longest wait, after a read completes, for its process's next nearby read (0 = never wait)",
    };
    pub const READ_EXPIRE: Tunable = Tunable {
        name: "read_expire",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(125) },
        doc: "deadline of a read (arrival + read_expire); the FIFO is checked once per interval",
    };
    pub const WRITE_EXPIRE: Tunable = Tunable {
        name: "write_expire",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(250) },
        doc: "deadline of a write (arrival + write_expire); checked in write batches",
    };
    pub const READ_BATCH_EXPIRE: Tunable = Tunable {
        name: "read_batch_expire",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(500) },
        doc: "length of a read batch once writes are pending",
    };
    pub const WRITE_BATCH_EXPIRE: Tunable = Tunable {
        name: "write_batch_expire",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(125) },
        doc: "target length of a write batch (auto-tunes the writes per batch)",
    };
}

/// Every `as` tunable (`est_time` is read-only in Linux: see [`As::est_time`]).
pub const TUNABLES: &[Tunable] = &[
    MAX_SECTORS_KB,
    knob::ANTIC_EXPIRE,
    knob::READ_EXPIRE,
    knob::WRITE_EXPIRE,
    knob::READ_BATCH_EXPIRE,
    knob::WRITE_BATCH_EXPIRE,
];

/// Build `as` from settings (reads `max_sectors_kb` too): what the registry calls.
pub fn build(settings: &mut Settings) -> Result<Box<dyn Scheduler>, BuildError> {
    let max_kb = settings.count(&MAX_SECTORS_KB)?;
    let params = AsParams::from_settings(settings)?;
    Ok(Box::new(As::new(params, (max_kb * 2) as u32)))
}

/// `as` settings (see the module doc for each one's trade-off).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AsParams {
    pub antic_expire: Duration,
    pub read_expire: Duration,
    pub write_expire: Duration,
    pub read_batch_expire: Duration,
    pub write_batch_expire: Duration,
}

impl Default for AsParams {
    fn default() -> Self {
        AsParams {
            antic_expire: ANTIC_EXPIRE,
            read_expire: READ_EXPIRE,
            write_expire: WRITE_EXPIRE,
            read_batch_expire: READ_BATCH_EXPIRE,
            write_batch_expire: WRITE_BATCH_EXPIRE,
        }
    }
}

impl AsParams {
    /// Read the `as` tunables. Any non-negative time is accepted (as in Linux).
    pub fn from_settings(s: &mut Settings) -> Result<Self, ParamError> {
        Ok(AsParams {
            antic_expire: s.time(&knob::ANTIC_EXPIRE)?,
            read_expire: s.time(&knob::READ_EXPIRE)?,
            write_expire: s.time(&knob::WRITE_EXPIRE)?,
            read_batch_expire: s.time(&knob::READ_BATCH_EXPIRE)?,
            write_batch_expire: s.time(&knob::WRITE_BATCH_EXPIRE)?,
        })
    }

    fn expire(&self, dir: Dir) -> Duration {
        match dir {
            Dir::Read => self.read_expire,
            Dir::Write => self.write_expire,
        }
    }

    fn batch_expire(&self, dir: Dir) -> Duration {
        match dir {
            Dir::Read => self.read_batch_expire,
            Dir::Write => self.write_batch_expire,
        }
    }

    /// Linux's initial `write_batch_count`: a tenth of the batch in jiffies, at least 2.
    fn initial_write_batch_count(&self) -> u32 {
        (self.write_batch_expire.0 / Duration::from_millis(10).0).clamp(2, u32::MAX as u64) as u32
    }
}

/// Counters for reports and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AsStats {
    /// Anticipation waits started (the device held idle with requests pending).
    pub waits: u64,
    /// Waits ended by a request from the anticipated context.
    pub own_hits: u64,
    /// Waits ended by a close request from another context.
    pub close_breaks: u64,
    /// Waits that ran to `antic_expire`.
    pub timeouts: u64,
    /// Waits ended otherwise (the context exited, got busy, or its thinktime grew).
    pub other_breaks: u64,
    /// Dispatches of an expired FIFO head.
    pub fifo_expired: u64,
    /// Read batches started.
    pub read_batches: u64,
    /// Write batches started.
    pub write_batches: u64,
    /// Dispatches starting behind their direction's previous request, within `MAXBACK`.
    pub back_seeks: u64,
}

/// What Linux's read-only `est_time` file shows: how contexts without history are judged.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EstTime {
    /// Chance, in percent, that a wait for a context without history is fruitless.
    pub exit_prob_percent: u64,
    /// Mean first thinktime of new contexts.
    pub new_thinktime: Duration,
    /// Mean first seek distance of new contexts, sectors.
    pub new_seek_distance: Sector,
}

/// The issuer as AS keys it: a process, or `None` for the one anonymous context.
type Issuer = Option<ContextId>;

/// Per-context history and counts (Linux's `as_io_context`).
#[derive(Clone, Debug)]
struct Ctx {
    /// Not exited (`AS_TASK_RUNNING`).
    running: bool,
    /// Has queued a read (`AS_TASK_IOSTARTED`).
    io_started: bool,
    /// A read of it has completed (`AS_TASK_IORUNNING`).
    io_running: bool,
    /// When its last read completed.
    last_end: Time,
    /// Where its last read ended.
    last_pos: Sector,
    /// Decayed sample weight, total and mean of thinktimes (ns; fixed point `ONE`).
    ttime_samples: u64,
    ttime_total: u64,
    ttime_mean: Duration,
    /// The same for seek distances (sectors).
    seek_samples: u64,
    seek_total: u64,
    seek_mean: Sector,
    /// Requests queued here / in the device.
    queued: u32,
    dispatched: u32,
}

impl Ctx {
    fn new() -> Self {
        Ctx {
            running: true,
            io_started: false,
            io_running: false,
            last_end: Time::ZERO,
            last_pos: 0,
            ttime_samples: 0,
            ttime_total: 0,
            ttime_mean: Duration::ZERO,
            seek_samples: 0,
            seek_total: 0,
            seek_mean: 0,
            queued: 0,
            dispatched: 0,
        }
    }
}

/// How contexts without history fare (Linux's `exit_prob`, `new_ttime_*`, `new_seek_*`).
#[derive(Clone, Debug, Default)]
struct NewContexts {
    /// Fixed point `ONE`: waits for history-less contexts that timed out or hit an exit.
    exit_prob: u64,
    ttime_total: u64,
    ttime_mean: Duration,
    seek_total: u64,
    seek_mean: Sector,
}

/// `7/8 * old + 1/8 * sample`, in fixed point, without overflow.
fn decay(old: u64, sample: u64) -> u64 {
    ((7 * old as u128 + ONE as u128 * sample as u128) / 8).min(u64::MAX as u128) as u64
}

fn update_thinktime(c: &mut Ctx, new: &mut NewContexts, ttime: Duration) {
    if c.ttime_samples == 0 {
        new.ttime_total = decay(new.ttime_total, ttime.0);
        new.ttime_mean = Duration(new.ttime_total / ONE);
        new.exit_prob = 7 * new.exit_prob / 8;
    }
    c.ttime_samples = decay(c.ttime_samples, 1);
    c.ttime_total = decay(c.ttime_total, ttime.0);
    c.ttime_mean = Duration((c.ttime_total + ONE / 2) / c.ttime_samples);
}

fn update_seekdist(c: &mut Ctx, new: &mut NewContexts, sdist: Sector) {
    if c.seek_samples == 0 {
        new.seek_total = decay(new.seek_total, sdist);
        new.seek_mean = new.seek_total / ONE;
    }
    // An odd far jump (a page-in, a fragment) must not blow the mean up.
    let slack = if c.seek_samples <= 60 { 2 * 1024 * 1024 } else { 2 * 1024 * 64 };
    let sdist = sdist.min(c.seek_mean.saturating_mul(4).saturating_add(slack));
    c.seek_samples = decay(c.seek_samples, 1);
    c.seek_total = decay(c.seek_total, sdist);
    c.seek_mean = (c.seek_total + c.seek_samples / 2) / c.seek_samples;
}

/// A queued read of `c` (or, for cooperating processes, a close read of another context
/// counted as `c`'s): thinktime and seek samples (`as_update_iohist`).
fn update_iohist(c: &mut Ctx, new: &mut NewContexts, now: Time, rq: &Request) {
    if rq.dir != Dir::Read {
        return;
    }
    if c.io_running || c.io_started {
        let ttime = if c.io_running && c.queued + c.dispatched == 0 {
            now.saturating_since(c.last_end).min(MAX_THINKTIME)
        } else {
            Duration::ZERO
        };
        update_thinktime(c, new, ttime);
        update_seekdist(c, new, rq.sector.abs_diff(c.last_pos));
    }
    c.last_pos = rq.end();
    c.io_started = true;
}

/// Anticipation status (Linux's `antic_status` without `WAIT_REQ`, see the module doc).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Antic {
    /// Not waiting; a wait may start at the next decision.
    Off,
    /// Holding the device idle for the anticipated context.
    Waiting,
    /// A wait ended: dispatch the elevator's choice, do not wait again before it.
    Finished,
}

/// Why anticipation is broken (or not worth starting).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Break {
    Own,
    Expired,
    Busy,
    Close,
    Exited,
    Thinks,
}

/// Linux's anticipatory scheduler.
pub struct As {
    params: AsParams,
    max_sectors: u32,
    /// Per direction (`Dir::index`): the sector-sorted queue ...
    sorted: [SortedQueue; 2],
    /// ... and the same requests by `(arrival + expire, id)`.
    fifo: [BTreeSet<(Time, ReqId)>; 2],
    /// Per direction: where the last dispatched request of that direction ended.
    last_sector: [Sector; 2],
    /// Per direction: when its FIFO was last looked at.
    last_check_fifo: [Time; 2],
    batch_dir: Dir,
    /// When the running batch expires (see `batch_expired`).
    current_batch_expires: Time,
    /// A batch switch waits for the previous batch's requests to complete.
    changed_batch: bool,
    /// A read batch whose first read has not completed yet (its clock has not started).
    new_batch: bool,
    write_batch_count: u32,
    current_write_count: u32,
    /// The last write batch ran out of writes rather than time (do not shrink the count).
    write_batch_idled: bool,
    /// The context of the last dispatched read (`ad->io_context`); `None` after a write.
    io: Option<Issuer>,
    /// A request of `io` has completed since its last dispatch, at `antic_start`.
    ioc_finished: bool,
    antic_start: Time,
    antic: Antic,
    /// Requests dispatched and not completed.
    in_flight: u32,
    ctxs: HashMap<Issuer, Ctx>,
    new: NewContexts,
    stats: AsStats,
}

impl As {
    pub fn new(params: AsParams, max_sectors: u32) -> Self {
        let wbc = params.initial_write_batch_count();
        As {
            params,
            max_sectors,
            sorted: Default::default(),
            fifo: Default::default(),
            last_sector: [0; 2],
            last_check_fifo: [Time::ZERO; 2],
            // Linux starts in the write direction: the first read starts a read batch.
            batch_dir: Dir::Write,
            current_batch_expires: Time::ZERO,
            changed_batch: false,
            new_batch: false,
            write_batch_count: wbc,
            current_write_count: wbc,
            write_batch_idled: true,
            io: None,
            ioc_finished: false,
            antic_start: Time::ZERO,
            antic: Antic::Off,
            in_flight: 0,
            ctxs: HashMap::new(),
            new: NewContexts::default(),
            stats: AsStats::default(),
        }
    }

    pub fn params(&self) -> &AsParams {
        &self.params
    }

    pub fn stats(&self) -> &AsStats {
        &self.stats
    }

    /// Is the device being held idle for the anticipated context?
    pub fn is_waiting(&self) -> bool {
        self.antic == Antic::Waiting
    }

    /// Writes a write batch may dispatch now (auto-tuned).
    pub fn write_batch_count(&self) -> u32 {
        self.write_batch_count
    }

    /// The estimates Linux's read-only sysfs file `est_time` shows.
    pub fn est_time(&self) -> EstTime {
        EstTime {
            exit_prob_percent: self.new.exit_prob * 100 / ONE,
            new_thinktime: self.new.ttime_mean,
            new_seek_distance: self.new.seek_mean,
        }
    }

    fn expiry(&self, rq: &Request) -> Time {
        rq.arrival + self.params.expire(rq.dir)
    }

    fn dir_of(&self, id: ReqId) -> Dir {
        if self.sorted[0].get(id).is_some() {
            Dir::Read
        } else {
            Dir::Write
        }
    }

    /// The elevator's next request of `dir` (`as_choose_req` over the queue, see 1.).
    fn next_rq(&self, dir: Dir) -> Option<ReqId> {
        let q = &self.sorted[dir.index()];
        let last = self.last_sector[dir.index()];
        let start = |id: ReqId| q.get(id).expect("indexed request is queued").sector;
        let ahead = q.first_from(last);
        let behind = q.last_before(last).filter(|&b| last - start(b) <= MAXBACK);
        match (ahead, behind) {
            (Some(a), Some(b)) => {
                let (da, db) = (start(a) - last, (last - start(b)).saturating_mul(BACK_PENALTY));
                Some(if db < da { b } else { a })
            }
            (Some(a), None) => Some(a),
            (None, Some(b)) => Some(b),
            (None, None) => q.first(),
        }
    }

    /// Has `dir`'s FIFO head expired? Looks at most once per expire interval
    /// (`as_fifo_expired`); a look that finds nothing expired still counts.
    fn fifo_expired(&mut self, dir: Dir, now: Time) -> bool {
        let d = dir.index();
        if now < self.last_check_fifo[d] + self.params.expire(dir) {
            return false;
        }
        self.last_check_fifo[d] = now;
        self.fifo[d].first().is_some_and(|&(t, _)| t <= now)
    }

    fn fifo_head(&self, dir: Dir) -> ReqId {
        self.fifo[dir.index()].first().expect("direction has requests").1
    }

    /// Should the running batch give way (`as_batch_expired`)?
    fn batch_expired(&self, now: Time) -> bool {
        if self.changed_batch || self.new_batch {
            return false;
        }
        match self.batch_dir {
            Dir::Read => now >= self.current_batch_expires,
            Dir::Write => now >= self.current_batch_expires || self.current_write_count == 0,
        }
    }

    /// Tune the write batch length after it ran (`update_write_batch`): called when the
    /// first read of the following read batch completes.
    fn update_write_batch(&mut self, now: Time) {
        let batch = self.params.write_batch_expire;
        let start = Time(self.current_batch_expires.0.saturating_sub(batch.0));
        let write_time = now.saturating_since(start);
        let count = &mut self.write_batch_count;
        if write_time > batch && !self.write_batch_idled {
            *count = if write_time.0 > batch.0.saturating_mul(3) { *count / 2 } else { *count - 1 };
        } else if write_time < batch && self.current_write_count == 0 {
            *count = if batch.0 > write_time.0.saturating_mul(3) {
                count.saturating_mul(2)
            } else {
                count.saturating_add(1)
            };
        }
        *count = (*count).max(1);
    }

    fn antic_expired(&self, now: Time) -> bool {
        now >= self.antic_start + self.params.antic_expire
    }

    /// Is `rq` (from another context) close to where the anticipated context left the
    /// head (`as_close_req`)?
    fn close(&self, now: Time, c: &Ctx, rq: &Request) -> bool {
        let last = self.last_sector[self.batch_dir.index()];
        let waited = if self.antic == Antic::Off || !self.ioc_finished {
            Duration::ZERO
        } else {
            now.saturating_since(self.antic_start)
        };
        let ms = waited.0 / Duration::from_millis(1).0;
        let delta = if ms == 0 {
            CLOSE_WINDOW
        } else if waited <= CLOSE_WINDOW_MAX_WAIT && waited <= self.params.antic_expire {
            CLOSE_WINDOW << ms
        } else {
            return true;
        };
        let next = rq.sector;
        if last <= next.saturating_add(delta / 2) && next <= last.saturating_add(delta) {
            return true;
        }
        let mean = if c.seek_samples == 0 { self.new.seek_mean } else { c.seek_mean };
        mean > next.abs_diff(last)
    }

    /// Does `rq` (the elevator's candidate, or an arrival) make waiting for the
    /// anticipated context pointless? (`as_can_break_anticipation`.) Called only while a
    /// read's context is anticipated. A close request from another context updates the
    /// anticipated context's history.
    fn can_break(&mut self, now: Time, rq: Option<&Request>) -> Option<Break> {
        let io = self.io.expect("anticipation needs the context of the last read");
        if rq.is_some_and(|r| r.ctx == io) {
            return Some(Break::Own);
        }
        if self.ioc_finished && self.antic_expired(now) {
            return Some(Break::Expired);
        }
        let Some(c) = self.ctxs.get(&io) else { return Some(Break::Exited) };
        if c.queued > 0 || c.dispatched > 0 {
            return Some(Break::Busy);
        }
        if let Some(r) = rq.filter(|r| r.dir == Dir::Read) {
            if self.close(now, c, r) {
                let c = self.ctxs.get_mut(&io).expect("just looked up");
                update_iohist(c, &mut self.new, now, r);
                return Some(Break::Close);
            }
        }
        if !c.running {
            if c.ttime_samples == 0 {
                self.new.exit_prob = decay(self.new.exit_prob, 1);
            }
            return Some(Break::Exited);
        }
        let thinks = if c.ttime_samples == 0 {
            self.new.ttime_mean > self.params.antic_expire || self.new.exit_prob > ONE / 2
        } else {
            c.ttime_mean > self.params.antic_expire
        };
        thinks.then_some(Break::Thinks)
    }

    /// End a wait for `why`, counting it.
    fn end_wait(&mut self, why: Break) {
        debug_assert_eq!(self.antic, Antic::Waiting);
        self.antic = Antic::Finished;
        match why {
            Break::Own => self.stats.own_hits += 1,
            Break::Close => self.stats.close_breaks += 1,
            Break::Expired => self.stats.timeouts += 1,
            Break::Busy | Break::Exited | Break::Thinks => self.stats.other_breaks += 1,
        }
    }

    /// The wait ran to `antic_expire` (Linux's `as_antic_timeout`).
    fn antic_timeout(&mut self) {
        self.end_wait(Break::Expired);
        let io = self.io.expect("a wait has a context");
        if self.ctxs.get(&io).is_none_or(|c| c.ttime_samples == 0) {
            self.new.exit_prob = decay(self.new.exit_prob, 1);
        }
    }

    /// Decide whether to hold the device for the anticipated context instead of
    /// dispatching `next` (`as_can_anticipate`); starts the wait when so.
    fn start_wait(&mut self, now: Time, next: Option<ReqId>) -> bool {
        if self.io.is_none() || self.antic == Antic::Finished || !self.ioc_finished {
            // `!ioc_finished`: the anticipated context still has its read in the device,
            // which `can_break` would call busy anyway.
            return false;
        }
        let rq = next.map(|id| *self.sorted[Dir::Read.index()].get(id).expect("candidate is queued"));
        if self.can_break(now, rq.as_ref()).is_some() {
            return false;
        }
        self.antic = Antic::Waiting;
        self.stats.waits += 1;
        true
    }

    /// Dispatch `id` (or the expired FIFO head), unless a batch switch must drain first.
    fn dispatch_request(&mut self, now: Time, mut id: ReqId, check_fifo: bool) -> Decision {
        if check_fifo && self.fifo_expired(self.batch_dir, now) {
            id = self.fifo_head(self.batch_dir);
            self.stats.fifo_expired += 1;
        }
        if self.changed_batch {
            if self.in_flight > 0 {
                return Decision::WaitUntil(Time::MAX);
            }
            match self.batch_dir {
                Dir::Write => self.current_batch_expires = now + self.params.write_batch_expire,
                Dir::Read => self.new_batch = true,
            }
            self.changed_batch = false;
        }
        Decision::Dispatch(self.move_to_dispatch(id))
    }

    fn move_to_dispatch(&mut self, id: ReqId) -> Request {
        let dir = self.dir_of(id);
        let d = dir.index();
        let rq = self.sorted[d].remove(id).unwrap_or_else(|| panic!("as: {id:?} is not queued"));
        let was = self.fifo[d].remove(&(self.expiry(&rq), id));
        debug_assert!(was, "FIFO lost {id:?}");
        let last = self.last_sector[d];
        if rq.sector < last && last - rq.sector <= MAXBACK {
            self.stats.back_seeks += 1;
        }
        self.antic = Antic::Off;
        self.last_sector[d] = rq.end();
        let prev = self.io;
        match dir {
            Dir::Read => self.io = Some(rq.ctx),
            Dir::Write => {
                self.io = None;
                self.current_write_count = self.current_write_count.saturating_sub(1);
            }
        }
        self.ioc_finished = false;
        let c = self.ctxs.get_mut(&rq.ctx).expect("a queued request's context is known");
        c.queued -= 1;
        c.dispatched += 1;
        self.in_flight += 1;
        if let Some(p) = prev.filter(|&p| Some(p) != self.io) {
            self.maybe_forget(p);
        }
        rq
    }

    /// Drop an exited context once nothing refers to it.
    fn maybe_forget(&mut self, key: Issuer) {
        if self.io == Some(key) {
            return;
        }
        if self.ctxs.get(&key).is_some_and(|c| !c.running && c.queued == 0 && c.dispatched == 0) {
            self.ctxs.remove(&key);
        }
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        for dir in [Dir::Read, Dir::Write] {
            let (q, f) = (&self.sorted[dir.index()], &self.fifo[dir.index()]);
            q.check();
            assert_eq!(q.len(), f.len(), "{dir:?}: sort list and FIFO sizes differ");
            for rq in q.iter() {
                assert_eq!(rq.dir, dir);
                assert!(f.contains(&(self.expiry(rq), rq.id)), "{rq:?} missing from the FIFO");
            }
        }
        let queued: u32 = self.ctxs.values().map(|c| c.queued).sum();
        let dispatched: u32 = self.ctxs.values().map(|c| c.dispatched).sum();
        assert_eq!(queued as usize, self.pending(), "per-context queued counts");
        assert_eq!(dispatched, self.in_flight, "per-context in-device counts");
        if self.antic == Antic::Waiting {
            assert!(self.io.is_some() && self.ioc_finished, "a wait without a finished context");
        }
        assert!(!self.changed_batch || self.in_flight > 0, "a batch switch with nothing to drain");
        assert!(self.write_batch_count >= 1);
    }
}

impl Scheduler for As {
    fn name(&self) -> String {
        "as".to_string()
    }

    fn arrive(&mut self, now: Time, rq: Request, _dev: &dyn DeviceView) -> Arrival {
        let d = rq.dir.index();
        let merged = self.sorted[d]
            .back_merge(&rq, self.max_sectors)
            .or_else(|| self.sorted[d].front_merge(&rq, self.max_sectors));
        if let Some((id, before)) = merged {
            let q = self.sorted[d].get(id).expect("just merged");
            if q.arrival != before {
                // `rq` was stamped earlier than the queued request: keep the earlier expiry.
                let expiry = self.expiry(q);
                let was = self.fifo[d].remove(&(before + self.params.expire(rq.dir), id));
                debug_assert!(was, "FIFO lost {id:?}");
                self.fifo[d].insert((expiry, id));
            }
            if self.antic == Antic::Waiting && self.io == Some(rq.ctx) {
                self.end_wait(Break::Own);
            }
            return Arrival::Merged { into: id };
        }
        let c = self.ctxs.entry(rq.ctx).or_insert_with(Ctx::new);
        if !c.running {
            // An exited context's id is back: a new process, a new history.
            *c = Ctx { queued: c.queued, dispatched: c.dispatched, ..Ctx::new() };
        }
        update_iohist(c, &mut self.new, now, &rq);
        c.queued += 1;
        self.fifo[d].insert((self.expiry(&rq), rq.id));
        self.sorted[d].insert(rq);
        if self.antic == Antic::Waiting {
            if let Some(why) = self.can_break(now, Some(&rq)) {
                self.end_wait(why);
            }
        }
        Arrival::Queued
    }

    fn decide(&mut self, now: Time, _dev: &dyn DeviceView) -> Decision {
        let reads = !self.fifo[Dir::Read.index()].is_empty();
        let writes = !self.fifo[Dir::Write.index()].is_empty();
        if self.batch_dir == Dir::Write && !reads && (self.current_write_count == 0 || !writes) {
            // The write batch was not contended: its length says nothing about the count.
            self.write_batch_idled = true;
        }
        if !reads && !writes {
            return Decision::Idle;
        }
        if self.antic == Antic::Waiting {
            let until = self.antic_start + self.params.antic_expire;
            if now < until {
                return Decision::WaitUntil(until);
            }
            self.antic_timeout();
        }
        if self.changed_batch && self.in_flight > 0 {
            return Decision::WaitUntil(Time::MAX);
        }

        if !(reads && writes && self.batch_expired(now)) {
            // The batch goes on (or only one direction has requests).
            let next = self.next_rq(self.batch_dir);
            if self.batch_dir == Dir::Read && self.params.antic_expire > Duration::ZERO {
                if self.fifo_expired(Dir::Read, now) {
                    self.stats.fifo_expired += 1;
                    let head = self.fifo_head(Dir::Read);
                    return self.dispatch_request(now, head, false);
                }
                if self.start_wait(now, next) {
                    return Decision::WaitUntil(self.antic_start + self.params.antic_expire);
                }
            }
            if let Some(id) = next {
                if reads && !writes {
                    // An uncontended read batch: its clock starts once writes wait.
                    self.current_batch_expires = now + self.params.read_batch_expire;
                }
                return self.dispatch_request(now, id, true);
            }
        }

        // A new batch, starting at its direction's FIFO head.
        let dir = if reads && !(writes && self.batch_dir == Dir::Read) { Dir::Read } else { Dir::Write };
        match dir {
            Dir::Read => {
                if self.batch_dir == Dir::Write {
                    self.changed_batch = true;
                }
                self.stats.read_batches += 1;
            }
            Dir::Write => {
                if self.batch_dir == Dir::Read {
                    self.changed_batch = true;
                    self.new_batch = false;
                }
                self.current_write_count = self.write_batch_count;
                self.write_batch_idled = false;
                self.stats.write_batches += 1;
            }
        }
        self.batch_dir = dir;
        self.last_check_fifo[dir.index()] = now;
        let head = self.fifo_head(dir);
        self.dispatch_request(now, head, true)
    }

    fn completed(&mut self, now: Time, rq: &Request, _dev: &dyn DeviceView) {
        debug_assert!(self.in_flight > 0, "completion of {:?} with nothing in the device", rq.id);
        if self.changed_batch && self.in_flight == 1 {
            // The previous batch has drained: the new one's clock starts.
            self.current_batch_expires = now + self.params.batch_expire(self.batch_dir);
            self.changed_batch = false;
            if self.batch_dir == Dir::Read {
                self.new_batch = true;
            }
        }
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.new_batch && self.batch_dir == rq.dir {
            // The first read of a read batch is served: time the batch from here.
            self.update_write_batch(now);
            self.current_batch_expires = now + self.params.read_batch_expire;
            self.new_batch = false;
        }
        if self.io == Some(rq.ctx) {
            self.antic_start = now;
            self.ioc_finished = true;
        }
        if let Some(c) = self.ctxs.get_mut(&rq.ctx) {
            c.dispatched = c.dispatched.saturating_sub(1);
            if rq.dir == Dir::Read {
                c.io_running = true;
                c.last_end = now;
            }
        }
        self.maybe_forget(rq.ctx);
    }

    fn pending(&self) -> usize {
        self.sorted[0].len() + self.sorted[1].len()
    }

    fn context_exited(&mut self, _now: Time, ctx: ContextId) {
        let key = Some(ctx);
        let Some(c) = self.ctxs.get_mut(&key) else { return };
        c.running = false;
        let fresh = c.ttime_samples == 0;
        if self.io == Some(key) && self.antic == Antic::Waiting {
            self.end_wait(Break::Exited);
            if fresh {
                self.new.exit_prob = decay(self.new.exit_prob, 1);
            }
        }
        self.maybe_forget(key);
    }
}

#[cfg(test)]
mod tests;

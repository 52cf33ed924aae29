//! The discrete-event loop: jobs submit requests, the scheduler decides, the drive serves
//! them (`headway_disk::Drive`: a command queue of `queue_depth` in front of the mechanics,
//! write-through or write-back).
//!
//! Events are ordered by `(time, insertion sequence)`, so equal times break ties in the
//! order events were created and a run is a pure function of its inputs and seed. The
//! scheduler is driven exactly as the contract in `headway_sched::scheduler` says: `decide`
//! whenever the drive can take a command — after a completion or a destage that frees
//! write-cache room, on every arrival, and when a `WaitUntil` timer fires (one timer event
//! serves many waits: a wait superseded by a later decision is forgotten, and an event that
//! fires before the current wait's time re-arms for it) — and again after each dispatch
//! while the drive has room, so a deep queue is kept full. `dispatched_to_device` is called
//! as a request enters the drive, `completed` as it leaves.
//!
//! Plugging: the requests a job submits at one instant (an asynchronous job filling its
//! `iodepth`, a buffered reader's readahead windows, a writeback flush) all reach the
//! scheduler before it is asked for the next dispatch — the block layer's plug, unplugged at
//! the end of the submitting call. So a burst of contiguous requests merges even under
//! `noop`; requests from different jobs, or from one job at different instants, do not
//! wait for each other (no unplug timer is modelled).
//!
//! Buffered I/O (`direct=0`) goes through a page cache: reads through Linux-style
//! readahead ([`crate::readahead`]: fills are sync or async requests, reads wait for the
//! fill that carries their pages or hit at memory speed), writes into dirty data written
//! back later as asynchronous requests ([`crate::writeback`]).
//!
//! The head position the scheduler is told ([`DeviceView::head`](headway_sched::DeviceView))
//! is the end of the last completed request at depth 1, and the end of the request last put
//! in the drive's queue when the drive queues commands (seeds/000 Section 3.2: the drive
//! serves roughly in queue order, so the queue's tail is where the head will be when the
//! next dispatch is served).
//!
//! The drive has one pending event in the heap at a time, at `Drive::next_event` (a
//! command finishing or a destage ending), also recognised by a generation number when a
//! submission moves it earlier.
//!
//! Arrays (`--array raid0:N:STRIPE`, `raid5:N:STRIPE`; [`headway_disk::array`]): N
//! members, each a drive of the same model and configuration with its own scheduler
//! instance (built from the same name and settings, told its member's queue depth) and its
//! own head position. The jobs' addresses are array addresses. An array request first passes
//! a front-end queue of `queue_depth` requests (a RAID card's): past it, requests wait in
//! FIFO order. Admitted, it is split at stripe-unit boundaries into member requests that
//! carry its direction, sync flag and context; a RAID 5 write becomes its write plan — the
//! read-modify-write reads first, the data and parity writes once all of them completed.
//! Member requests go through their member's scheduler (merging there as usual) and drive;
//! the array request completes, exactly once, when its last member request does, and is
//! then accounted like any request (a job's, a page-cache fill, a writeback). A scheduler
//! that coordinates its members (`stream` on an array, [`headway_sched::ArrayHooks`]) is
//! also told each array request's pieces before they reach the members and its completion
//! before the job goes on, and names the members another member's event concerns (their
//! schedulers are asked again at once). Without an array there is one member and no
//! splitting: the engine behaves as it always did.
//!
//! Records, when asked for: the head trace (`with_head_trace`: every command dispatched in
//! the run's first stretch, its wait in the scheduler and service in the drive) and the
//! request log (`with_request_log`: every job request as it completes, to a callback:
//! `--per-request`). Neither changes a decision or a number of the report.
//!
//! Hot-path allocation: none per request beyond the scheduler's own containers and the
//! request-metadata map; events are small `Copy` values in one binary heap.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::collections::BinaryHeap;

use headway_disk::array::{ArraySpec, Level, Piece};
use headway_disk::{Cmd, Completion, DiskSpec, Drive, DriveConfig, DriveError, Hdd, WriteCache};
use headway_sched::idmap::IdMap;
use headway_sched::{
    ArrayHooks, ArraySchedulers, Arrival, ContextId, CurveView, Decision, Dir, ReqId, Request, Scheduler,
    ServiceCurve, Time, SECTOR_BYTES,
};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::readahead::{Readahead, PAGE};
use crate::report::{
    Aggregate, Clat, DeviceReport, DirReport, Flow, HeadTrace, JobReport, MemberReport, RunReport, SyncReport,
};
use crate::trace::{Feed, FeedStats, TraceError};
use crate::workload::{ContextMode, Fsync, Job, HOST_OVERHEAD};
use crate::writeback::{Dirty, WritebackParams};
use headway_sched::hist::Histogram;

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A job may submit.
    Wake(u32),
    /// A buffered read found its data in the page cache, or a buffered write was copied
    /// into it: it completes (logical request id).
    Hit(u64),
    /// The writeback flusher's periodic check (Linux `dirty_writeback_centisecs`).
    Flush,
    /// Member drive's next event (a command finishing, a destage ending): member,
    /// generation.
    Drive(u32, u64),
    /// A member scheduler's `WaitUntil` time may have come (see `arm_timer`).
    Timer(u32),
    /// Trace replay: simulated time reached the next record's time ([`crate::trace::feed`]).
    Trace,
    /// Trace replay, closed mode: a context issues its next request.
    TraceCtx(u32),
}

/// `Meta::tctx` of a request that is not a trace's.
const NOT_TRACE: u32 = u32::MAX;

#[derive(Copy, Clone, Debug)]
struct Meta {
    job: u32,
    submit: Time,
    /// First sector (the job's address: an array address with `--array`).
    sector: u64,
    bytes: u32,
    dir: Dir,
    /// The trace context that issued it (trace replay), else `NOT_TRACE`.
    tctx: u32,
}

/// A page-cache fill: a disk read the readahead of a buffered reader issued (synchronous
/// or ahead), and the reads waiting for it.
struct Fill {
    job: u32,
    first_page: u64,
    sectors: u32,
    waiters: Vec<ReqId>,
}

/// Time to copy a page-cache hit to the reader (memcpy of a few KiB): 1 us, an estimate.
const PAGE_HIT: headway_sched::Duration = headway_sched::Duration::from_micros(1);
/// Host cost between a read served from the page cache and the reader's next request: the
/// system call's return and entry, 1 us (an estimate). Nothing blocked, so none of
/// [`HOST_OVERHEAD`]'s interrupt, wake-up and block-layer work: a reader copying cached
/// pages runs at ~2 GB/s (two microseconds a 4 KiB page), as buffered reads of cached data
/// did on the papers' machines.
const HIT_SYSCALL: headway_sched::Duration = headway_sched::Duration::from_micros(1);

#[derive(Default)]
struct JobStats {
    bytes: [u64; 2],
    clat: [Histogram; 2],
    /// Drive time spent on the job's requests: each command's own service (queueing in
    /// the drive excluded), a merged command's split by bytes among its parts.
    disk_ns: u64,
    /// Requests submitted since the job last passed its process's barrier.
    since_barrier: u32,
    /// The job against its QoS class, when it has one ([`crate::qos`]).
    qos: Option<crate::qos::QosStats>,
    /// Its syncs (`fsync`, `end_fsync`): from the job's stop to the last flush's completion.
    sync_lat: Histogram,
}

/// A completed request of a job, before it is counted ([`Engine::account`]): its id and
/// metadata, the drive time of the request that carried it, that request's bytes, and the
/// host's gap before the job's next request.
#[derive(Clone, Debug)]
struct Finished {
    id: ReqId,
    meta: Meta,
    service: u64,
    total: u64,
    host: headway_sched::Duration,
}

/// The tag of a drive's cache flush (request ids count up from 0 and never reach it).
const FLUSH_TAG: u64 = u64::MAX;

/// Who waits for a drive's cache flush: a job's sync, or a trace's flush record (its
/// entry in `Engine::trace_flushes`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum FlushWaiter {
    Job(u32),
    Trace(u64),
}

/// A trace's flush record under way: its job and context, the drives still flushing, when
/// it was issued.
#[derive(Copy, Clone, Debug)]
struct TraceFlush {
    job: u32,
    tctx: u32,
    left: u32,
    issued: Time,
}

/// Everything one run needs besides the jobs.
pub struct RunInput<'a> {
    pub disk: &'a DiskSpec,
    pub curve: &'a ServiceCurve,
    pub context: ContextMode,
    pub seed: u64,
    /// Queue depth, the drive's scheduler, write cache.
    pub drive: DriveConfig,
    /// Page cache: readahead and writeback.
    pub host: crate::host::HostParams,
    /// A disk array of `drive`s instead of one drive.
    pub array: Option<ArrayConfig>,
}

/// An array of drives ([module docs](self)).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ArrayConfig {
    pub spec: ArraySpec,
    /// Array requests admitted at once (the front-end queue of a RAID card).
    pub queue_depth: u32,
}

/// Front-end queue depth of an array by default: 64 commands, a RAID card's order.
pub const DEFAULT_ARRAY_QUEUE_DEPTH: u32 = 64;

/// Why a run could not finish.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    #[error("simulation stalled at {at}: {jobs} job(s) unfinished with no event pending (scheduler `{scheduler}` returned Idle with {pending} request(s) queued)")]
    Stalled { at: Time, jobs: usize, scheduler: String, pending: usize },
    /// The drive cannot be set up as asked (queue depth, write cache).
    #[error(transparent)]
    Drive(#[from] DriveError),
    /// A trace being replayed has a bad line or a request past the disk.
    #[error(transparent)]
    Trace(#[from] TraceError),
}

/// Requests and bytes per direction (read, write), for the in/out flow figures.
#[derive(Copy, Clone, Debug, Default)]
struct Counts {
    n: [u64; 2],
    bytes: [u64; 2],
}

impl Counts {
    #[inline]
    fn add(&mut self, dir: Dir, sectors: u32) {
        self.n[dir.index()] += 1;
        self.bytes[dir.index()] += sectors as u64 * SECTOR_BYTES;
    }
    fn flow(&self) -> Flow {
        let mean = |b: u64, n: u64| if n == 0 { 0.0 } else { b as f64 / n as f64 };
        let (n, b) = (self.n[0] + self.n[1], self.bytes[0] + self.bytes[1]);
        Flow {
            count: n,
            mean_bytes: mean(b, n),
            reads: self.n[0],
            read_mean_bytes: mean(self.bytes[0], self.n[0]),
            writes: self.n[1],
            write_mean_bytes: mean(self.bytes[1], self.n[1]),
        }
    }
}

/// One drive with its scheduler: the whole device without an array, a member with one.
struct Member {
    sched: Box<dyn Scheduler>,
    drive: Drive,
    head: u64,
    /// Requests in the drive with their submission times (at most the queue depth).
    inflight: Vec<(Request, Time)>,
    /// Time of the drive event in the heap, and its generation.
    drive_ev: Option<Time>,
    drive_gen: u64,
    /// When the scheduler asked to be woken (its latest `WaitUntil`), and the earliest
    /// timer event in the heap.
    timer_at: Option<Time>,
    timer_ev: Option<Time>,
    /// Requests reached the scheduler since it was last asked to decide.
    kicked: bool,
    // device figures
    idle_wait_ns: u64,
    /// Time commands spent in the drive, summed (ns): over the run's length, the
    /// time-averaged queue occupancy (Little's law; every command completes in the run).
    occupancy: u128,
    write_cache_full_ns: u64,
    flow_in: Counts,
    flow_out: Counts,
    seeks: u64,
    seek_dist: u128,
    dispatched: u64,
    hits: u64,
    /// Who waits for this drive's flush in progress (`fsync`, a trace's flush).
    flush_waiters: Vec<FlushWaiter>,
}

/// An array request admitted past the front-end queue.
struct ArrayReq {
    rq: Request,
    /// Member requests of the current phase not yet complete.
    remaining: u32,
    /// RAID 5 read-modify-write: the writes to issue once the reads are done.
    writes: Vec<Piece>,
    /// Drive time of its member requests so far (their shares of merged commands).
    disk_ns: u64,
}

/// The array's front end: admission, splitting, completion of array requests.
struct ArrayState {
    cfg: ArrayConfig,
    admitted: u32,
    waiting: std::collections::VecDeque<Request>,
    reqs: IdMap<ArrayReq>,
    /// Member request -> (array request, sectors).
    pieces: IdMap<(ReqId, u32)>,
    /// What the jobs submitted to the array.
    flow_in: Counts,
}

pub struct Engine<'a> {
    /// What the report says produced it: the context mode and the seed.
    context: ContextMode,
    seed: u64,
    members: Vec<Member>,
    array: Option<ArrayState>,
    /// The array-wide part of a scheduler that coordinates the members.
    hooks: Option<Box<dyn ArrayHooks>>,
    /// The drives queue commands: the head is the tail of its queue (module docs).
    deep: bool,
    write_back: bool,
    curve: &'a ServiceCurve,
    /// Sectors of one member (the whole device without an array).
    capacity: u64,
    jobs: Vec<Job>,
    stats: Vec<JobStats>,
    next_allowed: Vec<Time>,
    groups: Vec<Vec<u32>>,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    now: Time,
    meta: IdMap<Meta>,
    /// Page-cache fills in flight, by disk request id, and by (job, first page).
    fills: IdMap<Fill>,
    fill_at: std::collections::HashMap<(u32, u64), ReqId>,
    /// Readahead state of buffered readers.
    ra: Vec<Option<Readahead>>,
    /// Buffered writers: dirty data, writeback requests in flight (id -> (job, sectors)),
    /// sectors in flight per job, writes waiting for the dirty limit.
    dirty: Vec<Dirty>,
    wb: WritebackParams,
    wbs: IdMap<(u32, u32)>,
    wb_inflight: Vec<u64>,
    throttled: Vec<std::collections::VecDeque<(ReqId, u64, u32)>>,
    flush_armed: bool,
    /// Per job, a `sync=1` write waiting for its sync (finished on the drive, not yet for the job).
    osync_held: Vec<Option<Finished>>,
    /// A trace's flush records under way, by number.
    trace_flushes: std::collections::HashMap<u64, TraceFlush>,
    next_trace_flush: u64,
    merged: IdMap<Vec<ReqId>>,
    next_id: u64,
    /// Draws daemon-thread ids for `--context pool:N`.
    pool: Option<(u32, ChaCha8Rng)>,
    first_submit: Option<Time>,
    last_complete: Time,
    done_bytes: u64,
    planned_bytes: u64,
    /// Trace replay: the trace, its pending `Ev::Trace` time, the error that ends the run,
    /// whether the scheduler is told trace contexts.
    feed: Option<Box<Feed>>,
    trace_ev: Option<Time>,
    trace_err: Option<TraceError>,
    trace_tell: bool,
    /// Dispatches recorded for the report, when asked for (`with_head_trace`), and the
    /// place of each one still in the drive among them (for its service time).
    trace: Option<HeadTrace>,
    traced: IdMap<usize>,
    /// Told every job request as it completes, when asked for (`with_request_log`).
    log: Option<RequestLog<'a>>,
}

/// One job request, completed: what `headway simulate --per-request` writes a row of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestRecord<'r> {
    /// The job (clone) that issued it: its place in the report's `jobs` and its name there
    /// (the clones of a job share the name).
    pub job_index: u32,
    pub job: &'r str,
    pub dir: Dir,
    /// Its offset and length in bytes, in the job's address space (the array's with
    /// `--array`).
    pub offset: u64,
    pub bytes: u32,
    /// When the job submitted it and when it completed (ns of simulated time): for a
    /// buffered read served by the page cache, when the copy was done; for a buffered
    /// write, when its pages were dirty.
    pub submit_ns: u64,
    pub complete_ns: u64,
}

/// Where an engine sends its [`RequestRecord`]s.
pub type RequestLog<'a> = Box<dyn FnMut(&RequestRecord<'_>) + 'a>;

/// Where a run of several engines sends their records, with the run's index.
pub type RunsLog<'l> = &'l mut dyn FnMut(usize, &RequestRecord<'_>);

impl<'a> Engine<'a> {
    /// An engine ready to run, or why the drive cannot be set up as asked.
    pub fn new(sched: Box<dyn Scheduler>, jobs: Vec<Job>, input: &RunInput<'a>) -> Result<Self, EngineError> {
        Engine::with_schedulers(vec![sched], jobs, input)
    }

    /// An engine with one scheduler per member: `input.array`'s member count of them (one
    /// without an array).
    pub fn with_schedulers(
        scheds: Vec<Box<dyn Scheduler>>,
        jobs: Vec<Job>,
        input: &RunInput<'a>,
    ) -> Result<Self, EngineError> {
        Engine::with_array_schedulers(ArraySchedulers { members: scheds, hooks: None }, jobs, input)
    }

    /// [`Engine::with_schedulers`] with the array-wide hooks of a coordinating scheduler.
    pub fn with_array_schedulers(
        scheds: ArraySchedulers,
        jobs: Vec<Job>,
        input: &RunInput<'a>,
    ) -> Result<Self, EngineError> {
        let ArraySchedulers { members: scheds, hooks } = scheds;
        let n_members = input.array.map_or(1, |a| a.spec.members as usize);
        assert_eq!(scheds.len(), n_members, "one scheduler per member");
        let mut members = Vec::with_capacity(n_members);
        for mut sched in scheds {
            // Weights reach the scheduler once per issuer: the first job of an issuer decides.
            let mut weighted = std::collections::BTreeSet::new();
            for j in &jobs {
                if let Some(c) = j.ctx {
                    if weighted.insert(c) && j.weight != 1 {
                        sched.set_weight(c, j.weight);
                    }
                }
            }
            // QoS classes likewise: the first job of an issuer with a class decides.
            let mut classed = std::collections::BTreeSet::new();
            for j in &jobs {
                if let (Some(c), Some(q)) = (j.ctx, j.qos) {
                    if classed.insert(c) {
                        sched.set_qos(c, q);
                    }
                }
            }
            // I/O priorities likewise.
            let mut prioritised = std::collections::BTreeSet::new();
            for j in &jobs {
                if let (Some(c), Some(p)) = (j.ctx, j.ioprio) {
                    if prioritised.insert(c) {
                        sched.set_ioprio(c, p);
                    }
                }
            }
            sched.set_device_queue_depth(input.drive.queue_depth);
            members.push(Member {
                sched,
                drive: Drive::new(Hdd::new(input.disk.clone()), input.drive)?,
                head: 0,
                inflight: Vec::with_capacity(input.drive.queue_depth as usize),
                drive_ev: None,
                drive_gen: 0,
                timer_at: None,
                timer_ev: None,
                kicked: false,
                idle_wait_ns: 0,
                occupancy: 0,
                write_cache_full_ns: 0,
                flow_in: Counts::default(),
                flow_out: Counts::default(),
                seeks: 0,
                seek_dist: 0,
                dispatched: 0,
                hits: 0,
                flush_waiters: Vec::new(),
            });
        }
        let array = input.array.map(|cfg| ArrayState {
            cfg,
            admitted: 0,
            waiting: Default::default(),
            reqs: IdMap::default(),
            pieces: IdMap::default(),
            flow_in: Counts::default(),
        });
        let pool = match input.context {
            ContextMode::Pool(n) => Some((n, ChaCha8Rng::seed_from_u64(input.seed ^ 0x706f_6f6c))),
            _ => None,
        };
        let capacity = members[0].drive.hdd().capacity();
        let ngroups = jobs.iter().map(|j| j.group + 1).max().unwrap_or(0);
        let mut groups = vec![Vec::new(); ngroups];
        for j in &jobs {
            groups[j.group].push(j.index as u32);
        }
        let planned_bytes = jobs.iter().filter_map(|j| j.planned_bytes()).sum();
        let n = jobs.len();
        let jobs_ra: Vec<Option<Readahead>> = jobs
            .iter()
            .map(|j| {
                j.buffered.then(|| {
                    Readahead::new(input.host.read_ahead_kb)
                        .with_trigger_after_io(input.host.readahead_after_io)
                })
            })
            .collect();
        let depth = input.drive.queue_depth as usize;
        Ok(Engine {
            context: input.context,
            seed: input.seed,
            members,
            array,
            hooks,
            deep: depth > 1,
            write_back: input.drive.write_cache == WriteCache::Back,
            curve: input.curve,
            capacity,
            stats: jobs
                .iter()
                .map(|j| JobStats { qos: j.qos.map(crate::qos::QosStats::new), ..Default::default() })
                .collect(),
            next_allowed: vec![Time::ZERO; n],
            jobs,
            groups,
            heap: BinaryHeap::with_capacity(64),
            seq: 0,
            now: Time::ZERO,
            meta: IdMap::default(),
            fills: IdMap::default(),
            fill_at: std::collections::HashMap::new(),
            ra: jobs_ra,
            dirty: vec![Dirty::default(); n],
            wb: input.host.writeback.clone(),
            wbs: IdMap::default(),
            wb_inflight: vec![0; n],
            throttled: vec![Default::default(); n],
            flush_armed: false,
            osync_held: (0..n).map(|_| None).collect(),
            trace_flushes: Default::default(),
            next_trace_flush: 0,
            merged: IdMap::default(),
            next_id: 1,
            pool,
            first_submit: None,
            last_complete: Time::ZERO,
            done_bytes: 0,
            planned_bytes,
            feed: None,
            trace_ev: None,
            trace_err: None,
            trace_tell: false,
            trace: None,
            traced: IdMap::default(),
            log: None,
        })
    }

    /// Tell `log` every job request as it completes, in completion order.
    pub fn with_request_log(mut self, log: RequestLog<'a>) -> Self {
        self.log = Some(log);
        self
    }

    /// Record every dispatch of the run's first `window` (capped at
    /// [`HeadTrace::MAX_DISPATCHES`]) in the report's `head_trace`.
    pub fn with_head_trace(mut self, window: headway_sched::Duration) -> Self {
        self.trace = Some(HeadTrace::new(window.0));
        self
    }

    /// [`Engine::with_head_trace`] with `max` dispatches at most instead.
    pub fn with_head_trace_max(mut self, window: headway_sched::Duration, max: usize) -> Self {
        self.trace = Some(HeadTrace::with_max(window.0, max));
        self
    }

    /// The job clone a dispatched request belongs to (a merged request: its first part's).
    fn job_of(&self, id: ReqId) -> Option<u32> {
        // (an array's member request: its array request's job)
        let id = self.array.as_ref().and_then(|a| a.pieces.get(&id)).map_or(id, |p| p.0);
        let direct = |id: &ReqId| {
            self.meta
                .get(id)
                .map(|m| m.job)
                .or_else(|| self.fills.get(id).map(|f| f.job))
                .or_else(|| self.wbs.get(id).map(|w| w.0))
        };
        direct(&id).or_else(|| self.merged.get(&id).and_then(|parts| parts.first()).and_then(direct))
    }

    /// An engine that replays a trace (no fio jobs: each trace context's requests are
    /// accounted to a job made as the context first appears, see [`crate::trace::feed`]).
    pub fn replay(sched: Box<dyn Scheduler>, feed: Feed, input: &RunInput<'a>) -> Result<Self, EngineError> {
        let mut e = Engine::new(sched, Vec::new(), input)?;
        e.trace_tell = matches!(input.context, ContextMode::Process | ContextMode::Thread);
        e.feed = Some(Box::new(feed));
        Ok(e)
    }

    fn push(&mut self, t: Time, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t.0, self.seq, ev)));
    }

    fn start_group(&mut self, g: usize) {
        let now = self.now;
        for i in 0..self.groups[g].len() {
            let j = self.groups[g][i];
            let delay = self.jobs[j as usize].startdelay;
            self.push(now + delay, Ev::Wake(j));
        }
    }

    /// Run to the end. `progress` receives the fraction done now and then.
    pub fn run(self, progress: impl FnMut(f64)) -> Result<RunReport, EngineError> {
        self.run_replay(progress).map(|(r, _)| r)
    }

    /// Run to the end; with a trace, also what was read from it.
    pub fn run_replay(
        mut self,
        mut progress: impl FnMut(f64),
    ) -> Result<(RunReport, FeedStats), EngineError> {
        if !self.groups.is_empty() {
            self.start_group(0);
        }
        if self.feed.is_some() {
            self.trace_advance();
        }
        let mut group = 0usize;
        let mut events = 0u64;
        while let Some(Reverse((t, _, ev))) = self.heap.pop() {
            let t = Time(t);
            let dt = t.0 - self.now.0;
            if dt > 0 {
                for m in &mut self.members {
                    // (a drive refusing commands, its write cache full, is not the scheduler waiting)
                    if m.drive.in_queue() == 0 && m.sched.pending() > 0 && m.drive.can_accept() {
                        m.idle_wait_ns += dt;
                    }
                    if self.write_back && m.drive.write_cache_full() {
                        m.write_cache_full_ns += dt;
                    }
                }
            }
            self.now = t;
            match ev {
                Ev::Wake(j) => self.wake(j as usize),
                Ev::Hit(id) => self.finish_after(ReqId(id), 0, 1, HIT_SYSCALL),
                Ev::Flush => self.periodic_flush(),
                Ev::Drive(m, gen) => {
                    let m = m as usize;
                    if gen == self.members[m].drive_gen {
                        self.members[m].drive_ev = None;
                        self.drive_event(m);
                    }
                }
                Ev::Timer(m) => {
                    let m = m as usize;
                    let mem = &mut self.members[m];
                    if mem.timer_ev == Some(t) {
                        mem.timer_ev = None;
                    }
                    match mem.timer_at {
                        Some(at) if at <= t => {
                            mem.timer_at = None;
                            if mem.drive.can_accept() {
                                self.fill(m);
                            }
                            if self.hooks.is_some() {
                                self.fill_kicked();
                            }
                        }
                        Some(at) => self.arm_timer(m, at),
                        None => {}
                    }
                }
                Ev::Trace => {
                    if self.trace_ev == Some(t) {
                        self.trace_ev = None;
                    }
                    self.trace_advance();
                }
                Ev::TraceCtx(c) => {
                    self.with_feed(|f, now| f.issue(c, now.0));
                    self.drain_feed();
                }
            }
            if self.trace_err.is_some() {
                break;
            }
            // Stonewall: when every job of the current group is done, start the next.
            while group + 1 < self.groups.len()
                && self.groups[group].iter().all(|&j| self.jobs[j as usize].done(self.now))
            {
                group += 1;
                self.start_group(group);
            }
            events += 1;
            if events & 0xFFFF == 0 {
                if let Some(f) = &self.feed {
                    progress(f.fraction());
                } else if self.planned_bytes > 0 {
                    progress(self.done_bytes as f64 / self.planned_bytes as f64);
                }
            }
        }
        if let Some(e) = self.trace_err.take() {
            return Err(EngineError::Trace(e));
        }
        let unfinished = self.jobs.iter().filter(|j| !j.done(self.now)).count()
            + self.feed.as_ref().is_some_and(|f| !f.finished()) as usize;
        if unfinished > 0 {
            return Err(EngineError::Stalled {
                at: self.now,
                jobs: unfinished,
                scheduler: self.members[0].sched.name(),
                pending: self.members.iter().map(|m| m.sched.pending()).sum(),
            });
        }
        progress(1.0);
        let stats = self.feed.as_ref().map(|f| f.stats()).unwrap_or_default();
        Ok((self.report(), stats))
    }

    /// Call `f` on the trace feed at the current time; an error ends the run.
    fn with_feed(&mut self, f: impl FnOnce(&mut Feed, Time) -> Result<(), TraceError>) {
        let now = self.now;
        if let Some(feed) = self.feed.as_deref_mut() {
            if let Err(e) = f(feed, now) {
                self.trace_err.get_or_insert(e);
            }
        }
    }

    /// Simulated time reached a record's time: take what is due.
    fn trace_advance(&mut self) {
        self.with_feed(|f, now| f.advance(now.0));
        self.drain_feed();
    }

    /// Act on what the feed produced: jobs for new contexts, arrivals submitted now, issue
    /// events, exited contexts, the next `Ev::Trace`.
    fn drain_feed(&mut self) {
        let Some(mut feed) = self.feed.take() else { return };
        let (n, max) = (feed.contexts(), feed.max_jobs());
        while self.jobs.len() < n.min(max) || (n > max && self.jobs.len() == max) {
            let i = self.jobs.len();
            let name = if i < max { feed.label(i).to_string() } else { "others".to_string() };
            self.add_job(Job::for_trace(name, i));
        }
        let now = self.now;
        let submitted = !feed.arrivals.is_empty();
        while let Some(r) = feed.arrivals.pop_front() {
            let j = (r.ctx as usize).min(max);
            let job = &mut self.jobs[j];
            job.started_at.get_or_insert(now);
            job.inflight += 1;
            if r.flush {
                self.first_submit.get_or_insert(now);
                let id = self.next_trace_flush;
                self.next_trace_flush += 1;
                let left = self.members.len() as u32;
                self.trace_flushes.insert(id, TraceFlush { job: j as u32, tctx: r.ctx, left, issued: now });
                self.flush_all(FlushWaiter::Trace(id));
                continue;
            }
            job.issued += 1;
            job.issued_bytes += r.len as u64 * SECTOR_BYTES;
            let ctx = match &mut self.pool {
                Some((n, rng)) => Some(ContextId(rng.gen_range(0..*n))),
                None => self.trace_tell.then_some(ContextId(r.ctx)),
            };
            let id = ReqId(self.next_id);
            self.next_id += 1;
            let bytes = r.len * SECTOR_BYTES as u32;
            self.meta.insert(
                id,
                Meta { job: j as u32, submit: now, sector: r.sector, bytes, dir: r.dir, tctx: r.ctx },
            );
            self.first_submit.get_or_insert(now);
            self.arrive(Request {
                id,
                sector: r.sector,
                len: r.len,
                dir: r.dir,
                sync: r.sync,
                arrival: now,
                ctx,
            });
        }
        for (c, t) in feed.ready.drain(..) {
            self.push(Time(t.max(now.0)), Ev::TraceCtx(c));
        }
        for c in feed.exited.drain(..) {
            if self.trace_tell {
                for m in &mut self.members {
                    m.sched.context_exited(now, ContextId(c));
                }
            }
        }
        if let Some(t) = feed.wake_at() {
            let t = Time(t.max(now.0));
            if self.trace_ev.is_none_or(|e| e > t) {
                self.trace_ev = Some(t);
                self.push(t, Ev::Trace);
            }
        }
        self.feed = Some(feed);
        if submitted {
            self.fill_kicked();
        }
    }

    /// A job made during the run (a trace context's).
    fn add_job(&mut self, job: Job) {
        debug_assert_eq!(job.index, self.jobs.len());
        self.jobs.push(job);
        self.stats.push(JobStats::default());
        self.next_allowed.push(Time::ZERO);
        self.ra.push(None);
        self.dirty.push(Dirty::default());
        self.wb_inflight.push(0);
        self.throttled.push(Default::default());
        self.osync_held.push(None);
    }

    fn view(&self, m: usize) -> CurveView<'a> {
        CurveView { head: self.members[m].head, curve: self.curve, capacity: self.capacity }
    }

    fn wake(&mut self, j: usize) {
        let now = self.now;
        self.jobs[j].started_at.get_or_insert(now);
        let mut submitted = false;
        loop {
            let job = &mut self.jobs[j];
            if job.fsync_due() {
                self.try_fsync(j);
                break;
            }
            if !(job.has_room()
                && job.wants_more(now)
                && (job.barrier == 0 || self.stats[j].since_barrier < job.barrier))
            {
                // (a job that ran out of work between requests, here with its final sync
                // still to do; one without is reported as running to the last completion)
                if job.inflight == 0 && !job.wants_more(now) && job.end_fsync_due() {
                    self.job_idle(j);
                }
                break;
            }
            if now < self.next_allowed[j] {
                let at = self.next_allowed[j];
                self.seq += 1;
                self.heap.push(Reverse((at.0, self.seq, Ev::Wake(j as u32))));
                break;
            }
            let io = job.next_io();
            if let Some(gap) = job.submit_gap(io.len as u64 * SECTOR_BYTES) {
                self.next_allowed[j] = now + gap;
            }
            job.submitted();
            if io.dir == Dir::Write {
                job.writes_since_fsync += 1;
            }
            let (sync, job_ctx) = (job.sync, job.ctx);
            self.stats[j].since_barrier += 1;
            let ctx = match &mut self.pool {
                Some((n, rng)) => Some(ContextId(rng.gen_range(0..*n))),
                None => job_ctx,
            };
            let id = ReqId(self.next_id);
            self.next_id += 1;
            self.meta.insert(
                id,
                Meta {
                    job: j as u32,
                    submit: now,
                    sector: io.sector,
                    bytes: io.len * SECTOR_BYTES as u32,
                    dir: io.dir,
                    tctx: NOT_TRACE,
                },
            );
            if let Some(q) = self.stats[j].qos.as_mut() {
                q.submitted(now, id, io.len * SECTOR_BYTES as u32, io.dir);
            }
            self.first_submit.get_or_insert(now);
            if io.dir == Dir::Read && self.ra[j].is_some() {
                submitted |= self.buffered_read(j, id, io.sector, io.len, ctx);
            } else if io.dir == Dir::Write && self.jobs[j].buffered {
                submitted |= self.buffered_write(j, id, io.sector, io.len);
            } else {
                self.arrive(Request {
                    id,
                    sector: io.sector,
                    len: io.len,
                    dir: io.dir,
                    sync,
                    arrival: now,
                    ctx,
                });
                submitted = true;
            }
        }
        if submitted {
            self.fill_kicked();
        }
    }

    /// A request reaches the scheduler (the array's front end, with an array).
    fn arrive(&mut self, rq: Request) {
        let Some(a) = self.array.as_mut() else { return self.arrive_at(0, rq) };
        a.flow_in.add(rq.dir, rq.len);
        if a.admitted < a.cfg.queue_depth {
            a.admitted += 1;
            self.split(rq);
        } else {
            a.waiting.push_back(rq);
        }
    }

    /// A request reaches member `m`'s scheduler.
    fn arrive_at(&mut self, m: usize, rq: Request) {
        let view = self.view(m);
        let mem = &mut self.members[m];
        mem.flow_in.add(rq.dir, rq.len);
        mem.kicked = true;
        let id = rq.id;
        if let Arrival::Merged { into } = mem.sched.arrive(self.now, rq, &view) {
            self.merged.entry(into).or_default().push(id);
        }
    }

    /// An array request is admitted: its member requests reach their schedulers (the first
    /// phase of a RAID 5 read-modify-write: the reads).
    fn split(&mut self, rq: Request) {
        let a = self.array.as_mut().expect("an array");
        let spec = a.cfg.spec;
        let (first, writes, dir) = if rq.dir == Dir::Write && spec.level == Level::Raid5 {
            let plan = spec.write_plan(rq.sector, rq.len);
            if plan.reads.is_empty() {
                (plan.writes, Vec::new(), Dir::Write)
            } else {
                (plan.reads, plan.writes, Dir::Read)
            }
        } else {
            (spec.split(rq.sector, rq.len).collect(), Vec::new(), rq.dir)
        };
        a.reqs.insert(rq.id, ArrayReq { rq, remaining: 0, writes, disk_ns: 0 });
        self.issue_pieces(rq, &first, dir);
    }

    /// Send `pieces` of array request `parent` to the members as `dir` requests.
    fn issue_pieces(&mut self, parent: Request, pieces: &[Piece], dir: Dir) {
        let a = self.array.as_mut().expect("an array");
        a.reqs.get_mut(&parent.id).expect("admitted").remaining += pieces.len() as u32;
        let first = self.next_id;
        for p in pieces {
            a.pieces.insert(ReqId(self.next_id), (parent.id, p.len));
            self.next_id += 1;
        }
        let view = self.view(0);
        if let Some(h) = self.hooks.as_mut() {
            let ids: Vec<(u32, ReqId)> =
                pieces.iter().enumerate().map(|(i, p)| (p.member, ReqId(first + i as u64))).collect();
            h.pieces(self.now, &parent, &ids, &view);
        }
        for (i, p) in pieces.iter().enumerate() {
            let id = ReqId(first + i as u64);
            let rq = Request { id, sector: p.sector, len: p.len, dir, arrival: self.now, ..parent };
            self.arrive_at(p.member as usize, rq);
        }
    }

    /// Member request `id` is done (its share of its carrier's drive time `service`):
    /// returns false when it is not a member request. The last one of an array request
    /// completes it (or, ending a RAID 5 write's reads, sends its writes), and admits the
    /// next waiting array request.
    fn finish_piece(&mut self, id: ReqId, service: u64, total: u64) -> bool {
        let view = self.hooks.is_some().then(|| self.view(0));
        let Some(a) = self.array.as_mut() else { return false };
        let Some((parent, sectors)) = a.pieces.remove(&id) else { return false };
        let r = a.reqs.get_mut(&parent).expect("member request of an admitted array request");
        r.disk_ns += (service as u128 * (sectors as u64 * SECTOR_BYTES) as u128 / total as u128) as u64;
        r.remaining -= 1;
        if r.remaining > 0 {
            return true;
        }
        if !r.writes.is_empty() {
            let (rq, writes) = (r.rq, std::mem::take(&mut r.writes));
            self.issue_pieces(rq, &writes, Dir::Write);
            return true;
        }
        let r = a.reqs.remove(&parent).expect("just seen");
        a.admitted -= 1;
        if let (Some(h), Some(view)) = (self.hooks.as_mut(), view.as_ref()) {
            h.completed(self.now, &r.rq, view);
        }
        loop {
            let a = self.array.as_mut().expect("an array");
            if a.admitted >= a.cfg.queue_depth {
                break;
            }
            let Some(next) = a.waiting.pop_front() else { break };
            a.admitted += 1;
            self.split(next);
        }
        self.finish_any(parent, r.disk_ns, r.rq.bytes().max(1));
        true
    }

    /// A buffered read `id` of job `j`: served from the page cache, or waiting for a fill;
    /// readahead may send fills to the scheduler. Returns whether anything was submitted.
    fn buffered_read(&mut self, j: usize, id: ReqId, sector: u64, len: u32, ctx: Option<ContextId>) -> bool {
        let (start, region) = self.jobs[j].region();
        let page = |b: u64| b / PAGE;
        let off = sector * SECTOR_BYTES - start;
        let (first, end) = (page(off), page(off + len as u64 * SECTOR_BYTES - 1) + 1);
        let file_pages = page(region).max(end);
        let plan = self.ra[j].as_mut().expect("a buffered reader").read(first, end, file_pages);
        let mut submitted = false;
        let to_sector = |p: u64| (start + p * PAGE) / SECTOR_BYTES;
        let sectors = |n: u64| (n * PAGE / SECTOR_BYTES) as u32;
        if let Some((a, b)) = plan.sync {
            let fid = ReqId(self.next_id);
            self.next_id += 1;
            self.fills.insert(
                fid,
                Fill { job: j as u32, first_page: a, sectors: sectors(b - a), waiters: vec![id] },
            );
            self.fill_at.insert((j as u32, a), fid);
            let rq = Request {
                id: fid,
                sector: to_sector(a),
                len: sectors(b - a),
                dir: Dir::Read,
                sync: true,
                arrival: self.now,
                ctx,
            };
            self.arrive(rq);
            submitted = true;
        } else if let Some(p) = plan.wait_for {
            let fid = self.fill_at[&(j as u32, p)];
            self.fills.get_mut(&fid).expect("fill in flight").waiters.push(id);
        } else {
            self.push(self.now + PAGE_HIT, Ev::Hit(id.0));
        }
        if let Some((a, b)) = plan.read_ahead {
            let fid = ReqId(self.next_id);
            self.next_id += 1;
            self.fills.insert(
                fid,
                Fill { job: j as u32, first_page: a, sectors: sectors(b - a), waiters: Vec::new() },
            );
            self.fill_at.insert((j as u32, a), fid);
            let rq = Request {
                id: fid,
                sector: to_sector(a),
                len: sectors(b - a),
                dir: Dir::Read,
                sync: false,
                arrival: self.now,
                ctx,
            };
            self.arrive(rq);
            submitted = true;
        }
        submitted
    }

    /// A buffered write `id` of job `j`: copied into the page cache (dirty), or held while
    /// the job is over its dirty limit. Returns whether writeback sent anything.
    fn buffered_write(&mut self, j: usize, id: ReqId, sector: u64, len: u32) -> bool {
        if !self.flush_armed {
            self.flush_armed = true;
            self.push(self.now + self.wb.dirty_writeback_interval, Ev::Flush);
        }
        let over = |e: &Self| {
            (e.dirty[j].bytes() + (e.wb_inflight[j] + len as u64) * SECTOR_BYTES) > e.wb.dirty_bytes
                && (e.wb_inflight[j] > 0 || !e.dirty[j].is_empty())
        };
        if !self.throttled[j].is_empty() || over(self) {
            self.throttled[j].push_back((id, sector, len));
            return if self.wb_inflight[j] == 0 { self.flush(j) } else { false };
        }
        self.dirty[j].write(self.now, sector, len);
        self.push(self.now + PAGE_HIT, Ev::Hit(id.0));
        if self.dirty[j].due(self.now, &self.wb) {
            return self.flush(j);
        }
        false
    }

    /// Write back everything job `j` has dirty, as asynchronous requests.
    fn flush(&mut self, j: usize) -> bool {
        let runs = self.dirty[j].take_all(&self.wb);
        let ctx = self.jobs[j].ctx;
        for &(sector, len) in &runs {
            let id = ReqId(self.next_id);
            self.next_id += 1;
            self.wbs.insert(id, (j as u32, len));
            self.wb_inflight[j] += len as u64;
            self.arrive(Request { id, sector, len, dir: Dir::Write, sync: false, arrival: self.now, ctx });
        }
        !runs.is_empty()
    }

    /// The flusher wakes up: write back what has expired; keep ticking while jobs run.
    fn periodic_flush(&mut self) {
        let mut submitted = false;
        for j in 0..self.jobs.len() {
            if self.dirty[j].due(self.now, &self.wb) {
                submitted |= self.flush(j);
            }
        }
        let running = self.jobs.iter().any(|o| o.finished_at.is_none());
        if running {
            self.push(self.now + self.wb.dirty_writeback_interval, Ev::Flush);
        } else {
            self.flush_armed = false;
        }
        if submitted {
            self.fill_kicked();
        }
    }

    /// Writeback of job `j` freed room: let throttled writes into the page cache.
    fn release_throttled(&mut self, j: usize) {
        while let Some(&(id, sector, len)) = self.throttled[j].front() {
            let room = (self.dirty[j].bytes() + (self.wb_inflight[j] + len as u64) * SECTOR_BYTES)
                <= self.wb.dirty_bytes;
            if !room && (self.wb_inflight[j] > 0 || !self.dirty[j].is_empty()) {
                break;
            }
            self.throttled[j].pop_front();
            self.dirty[j].write(self.now, sector, len);
            self.push(self.now + PAGE_HIT, Ev::Hit(id.0));
        }
        if !self.throttled[j].is_empty() && self.wb_inflight[j] == 0 {
            // (called from a completion: the engine refills the drive right after)
            self.flush(j);
        }
    }

    /// A disk request (or a part merged into one) is done: a job's own request, a
    /// page-cache fill whose waiting reads now complete, or a writeback request.
    fn finish_any(&mut self, id: ReqId, service: u64, total: u64) {
        if self.finish_piece(id, service, total) {
            return;
        }
        if let Some((j, len)) = self.wbs.remove(&id) {
            let share = service as u128 * (len as u64 * SECTOR_BYTES) as u128 / total as u128;
            self.stats[j as usize].disk_ns += share as u64;
            self.wb_inflight[j as usize] -= len as u64;
            self.release_throttled(j as usize);
            if self.jobs[j as usize].fsync == Fsync::Draining {
                self.try_fsync(j as usize);
            }
            return;
        }
        match self.fills.remove(&id) {
            None => self.finish(id, service, total),
            Some(f) => {
                let share = service as u128 * (f.sectors as u64 * SECTOR_BYTES) as u128 / total as u128;
                self.stats[f.job as usize].disk_ns += share as u64;
                self.fill_at.remove(&(f.job, f.first_page));
                if let Some(ra) = self.ra[f.job as usize].as_mut() {
                    ra.arrived(f.first_page);
                }
                for w in f.waiters {
                    self.finish(w, 0, 1);
                }
            }
        }
    }

    /// Make sure a timer event is in the heap no later than `t`. Waits are superseded far
    /// more often than they expire (a stream's child arrives first), so one event serves
    /// many waits: an event that fires early re-arms for the current `timer_at`.
    fn arm_timer(&mut self, m: usize, t: Time) {
        if self.members[m].timer_ev.is_none_or(|e| e > t) {
            self.members[m].timer_ev = Some(t);
            self.push(t, Ev::Timer(m as u32));
        }
    }

    /// Ask every member scheduler that received requests since it last decided (and whose
    /// drive can take a command): the end of a plug.
    fn fill_kicked(&mut self) {
        if let Some(h) = self.hooks.as_mut() {
            let mut w = h.take_wakeups();
            while w != 0 {
                self.members[w.trailing_zeros() as usize].kicked = true;
                w &= w - 1;
            }
        }
        for m in 0..self.members.len() {
            if self.members[m].kicked && self.members[m].drive.can_accept() {
                self.fill(m);
            }
        }
    }

    /// Keep member `m`'s drive fed: ask its scheduler while the drive can take a command.
    fn fill(&mut self, m: usize) {
        // any decision supersedes the previous wait
        self.members[m].timer_at = None;
        self.members[m].kicked = false;
        while self.members[m].drive.can_accept() {
            let view = self.view(m);
            let mem = &mut self.members[m];
            match mem.sched.decide(self.now, &view) {
                Decision::Dispatch(rq) => {
                    mem.sched.dispatched_to_device(self.now, &rq);
                    self.submit(m, rq);
                }
                Decision::WaitUntil(t) => {
                    // A wait "until now" would spin: the scheduler is re-asked a nanosecond later.
                    let t = if t <= self.now { Time(self.now.0 + 1) } else { t };
                    mem.timer_at = Some(t);
                    self.arm_timer(m, t);
                    break;
                }
                Decision::Idle => break,
            }
        }
        self.sync_drive_event(m);
    }

    fn submit(&mut self, m: usize, rq: Request) {
        self.members[m].dispatched += 1;
        if self.trace.as_ref().is_some_and(|t| self.now.0 <= t.window_ns && t.t_ns.len() < t.max) {
            let job = self.job_of(rq.id).map_or(-1, i64::from);
            let t = self.trace.as_mut().expect("checked above");
            self.traced.insert(rq.id, t.t_ns.len());
            t.t_ns.push(self.now.0);
            t.sector.push(rq.sector);
            t.sectors.push(rq.len);
            t.job.push(job);
            t.wait_ns.push(self.now.0 - rq.arrival.0);
            t.service_ns.push(0);
        }
        let mem = &mut self.members[m];
        mem.flow_out.add(rq.dir, rq.len);
        if self.deep {
            mem.head = rq.end();
        }
        let cmd = Cmd { tag: rq.id.0, sector: rq.sector, len: rq.len, dir: rq.dir };
        mem.inflight.push((rq, self.now));
        mem.drive.submit(self.now, cmd).expect("the drive said it can accept");
    }

    /// Keep exactly one live heap event per member at its drive's next event time.
    #[inline]
    fn sync_drive_event(&mut self, m: usize) {
        let mem = &mut self.members[m];
        let next = mem.drive.next_event();
        if next != mem.drive_ev {
            mem.drive_ev = next;
            if let Some(t) = next {
                mem.drive_gen += 1;
                let gen = mem.drive_gen;
                self.push(t, Ev::Drive(m as u32, gen));
            }
        }
    }

    /// Member `m`'s drive event is due: collect what finished, then refill the drive (and
    /// any other member that completing it sent requests to).
    fn drive_event(&mut self, m: usize) {
        // (a command the drive starts now that finishes now gets an event of its own)
        if let Some(c) = self.members[m].drive.poll(self.now) {
            if c.tag == FLUSH_TAG {
                self.flush_done(m);
            } else {
                self.complete(m, c);
            }
        }
        self.fill(m);
        if self.members.len() > 1 {
            self.fill_kicked();
        }
    }

    fn complete(&mut self, m: usize, c: Completion) {
        let now = self.now;
        let deep = self.deep;
        let mem = &mut self.members[m];
        let i = mem
            .inflight
            .iter()
            .position(|r| r.0.id.0 == c.tag)
            .expect("a completion of a request in the drive");
        let (rq, submitted) = mem.inflight.swap_remove(i);
        mem.occupancy += (now.0 - submitted.0) as u128;
        if let Some(t) = self.trace.as_mut() {
            if let Some(k) = self.traced.remove(&rq.id) {
                t.service_ns[k] = now.0 - submitted.0;
            }
        }
        let mem = &mut self.members[m];
        if !deep {
            mem.head = rq.end();
        }
        if c.cache_hit {
            mem.hits += 1;
        }
        if c.seek_cylinders > 0 {
            mem.seeks += 1;
            mem.seek_dist += c.seek_sectors as u128;
        }
        self.last_complete = now;
        let view = self.view(m);
        self.members[m].sched.completed(now, &rq, &view);
        let service = c.service().0;
        let total = rq.bytes().max(1);
        self.finish_any(rq.id, service, total);
        if let Some(children) = self.merged.remove(&rq.id) {
            for c in children {
                self.finish_any(c, service, total);
            }
        }
    }

    /// One request (original or merged part) is done: account it and let its job go on.
    /// `service` is the drive time of the carrier request, `total` its bytes.
    fn finish(&mut self, id: ReqId, service: u64, total: u64) {
        self.finish_after(id, service, total, HOST_OVERHEAD)
    }

    /// [`Engine::finish`], the job's next request coming `host` after (plus thinktime).
    fn finish_after(&mut self, id: ReqId, service: u64, total: u64, host: headway_sched::Duration) {
        let m = self.meta.remove(&id).expect("completed request has metadata");
        let j = m.job as usize;
        // `sync=1`: the write returns once durable; held until the job's sync completes
        if m.dir == Dir::Write && self.jobs[j].osync && m.tctx == NOT_TRACE {
            self.osync_held[j] = Some(Finished { id, meta: m, service, total, host });
            self.jobs[j].fsync = Fsync::Draining;
            return self.try_fsync(j);
        }
        self.account(Finished { id, meta: m, service, total, host });
    }

    /// A job's request is done for the job: count it and let the job go on. (Inlined into
    /// `finish_after`, the hot caller: as a call, moving `Finished` cost ~1% of the bench.)
    #[inline(always)]
    fn account(&mut self, h: Finished) {
        let Finished { id, meta: m, service, total, host } = h;
        let now = self.now;
        let j = m.job as usize;
        let st = &mut self.stats[j];
        // (`ramp_time`: what completes before the measured part counts in no figure)
        if self.jobs[j].measured_from().is_none_or(|t| now >= t) {
            st.disk_ns += (service as u128 * m.bytes as u128 / total as u128) as u64;
            st.bytes[m.dir.index()] += m.bytes as u64;
            st.clat[m.dir.index()].record(now.0 - m.submit.0);
        }
        if let Some(log) = self.log.as_mut() {
            log(&RequestRecord {
                job_index: j as u32,
                job: &self.jobs[j].name,
                dir: m.dir,
                offset: m.sector * SECTOR_BYTES,
                bytes: m.bytes,
                submit_ns: m.submit.0,
                complete_ns: now.0,
            });
        }
        let st = &mut self.stats[j];
        if let Some(q) = st.qos.as_mut() {
            q.completed(now, id, m.submit, m.bytes, self.jobs[j].started_at.unwrap_or(Time::ZERO));
        }
        self.done_bytes += m.bytes as u64;
        let job = &mut self.jobs[j];
        job.reaped_one();
        if m.tctx != NOT_TRACE {
            job.finished_at = Some(now);
            self.with_feed(|f, now| f.completed(m.tctx, now.0));
            self.drain_feed();
            return;
        }
        let at_barrier = job.barrier > 0 && self.stats[j].since_barrier >= job.barrier;
        if job.wants_more(now) {
            if at_barrier {
                if job.inflight == 0 {
                    let p = job.process;
                    self.try_release_barrier(p);
                }
            } else {
                let gap = job.gap_after_completion(host);
                self.push(now + gap, Ev::Wake(j as u32));
            }
        } else if job.inflight == 0 {
            self.job_idle(j);
        }
    }

    /// Job `j` has nothing in flight and wants nothing more, or has a sync to finish: go on
    /// with the sync, start the final one (`end_fsync`), or finish.
    fn job_idle(&mut self, j: usize) {
        let job = &mut self.jobs[j];
        if job.fsync == Fsync::Draining {
            return self.try_fsync(j);
        }
        if job.fsync != Fsync::Idle || job.finished_at.is_some() {
            return;
        }
        if job.end_fsync_due() {
            job.start_end_fsync();
            return self.try_fsync(j);
        }
        self.job_finished(j);
    }

    /// A sync of job `j` (`fsync`): once nothing of the job is in flight, write back its
    /// dirty page-cache data; once that is done, flush every drive's write cache (a
    /// flush already under way serves: the job's data is in the cache before it completes).
    fn try_fsync(&mut self, j: usize) {
        let now = self.now;
        let held = self.osync_held[j].is_some() as u32;
        if self.jobs[j].fsync != Fsync::Draining || self.jobs[j].inflight > held {
            return;
        }
        // the job's sync call begins once its own requests are done
        self.jobs[j].fsync_started.get_or_insert(now);
        if self.wb_inflight[j] > 0 || !self.throttled[j].is_empty() {
            return; // the writeback's completions come back here
        }
        if !self.dirty[j].is_empty() {
            if self.flush(j) {
                self.fill_kicked();
            }
            return;
        }
        self.jobs[j].fsync = Fsync::Flushing(self.members.len() as u32);
        self.flush_all(FlushWaiter::Job(j as u32));
    }

    /// Have every drive flush its write cache for `w` (a flush already under way serves).
    fn flush_all(&mut self, w: FlushWaiter) {
        let now = self.now;
        for m in 0..self.members.len() {
            self.members[m].flush_waiters.push(w);
            if !self.members[m].drive.flushing() {
                self.members[m].drive.flush(now, FLUSH_TAG).expect("no flush under way");
            }
            self.sync_drive_event(m);
        }
    }

    /// One drive finished its part of trace flush `id`; the last one completes the record.
    fn trace_flush_done(&mut self, id: u64) {
        let now = self.now;
        let f = self.trace_flushes.get_mut(&id).expect("a trace flush under way");
        f.left -= 1;
        if f.left > 0 {
            return;
        }
        let f = self.trace_flushes.remove(&id).expect("just seen");
        let j = f.job as usize;
        self.stats[j].sync_lat.record(now.0 - f.issued.0);
        let job = &mut self.jobs[j];
        job.reaped_one();
        job.finished_at = Some(now);
        self.with_feed(|feed, now| feed.completed(f.tctx, now.0));
        self.drain_feed();
    }

    /// Member `m`'s flush completed: the jobs waiting for it go on once all their drives
    /// have flushed.
    fn flush_done(&mut self, m: usize) {
        let now = self.now;
        for w in std::mem::take(&mut self.members[m].flush_waiters) {
            let j = match w {
                FlushWaiter::Job(j) => j as usize,
                FlushWaiter::Trace(id) => {
                    self.trace_flush_done(id);
                    continue;
                }
            };
            let job = &mut self.jobs[j];
            let Fsync::Flushing(left) = job.fsync else { unreachable!("a flush waiter is flushing") };
            if left > 1 {
                job.fsync = Fsync::Flushing(left - 1);
                continue;
            }
            job.fsync = Fsync::Idle;
            job.writes_since_fsync = 0;
            let started = job.fsync_started.take().expect("a sync under way has started");
            if let Some(held) = self.osync_held[j].take() {
                // a synchronous write's own sync: part of the write's latency
                self.account(held);
                continue;
            }
            self.stats[j].sync_lat.record(now.0 - started.0);
            if job.wants_more(now) {
                let gap = job.gap_after_completion(HOST_OVERHEAD);
                self.push(now + gap, Ev::Wake(j as u32));
            } else {
                self.job_idle(j);
            }
        }
    }

    /// Job `j` has nothing more to do and nothing in flight: mark it finished, tell the
    /// schedulers when its issuer has no job left, let its process's barrier go on; with
    /// `exitall`, stop the other jobs of its group (those idle finish now, the others when
    /// their requests in flight complete).
    fn job_finished(&mut self, j: usize) {
        let now = self.now;
        let job = &mut self.jobs[j];
        job.finished_at = Some(now);
        let (ctx, process, exitall, group) = (job.ctx, job.process, job.exitall, job.group);
        if let Some(c) = ctx {
            if self.jobs.iter().all(|o| o.ctx != Some(c) || o.finished_at.is_some()) {
                for m in &mut self.members {
                    m.sched.context_exited(now, c);
                }
            }
        }
        // A finished thread no longer holds its process's barrier.
        self.try_release_barrier(process);
        if exitall {
            let others: Vec<usize> = (0..self.jobs.len())
                .filter(|&o| o != j && self.jobs[o].group == group && self.jobs[o].finished_at.is_none())
                .collect();
            for &o in &others {
                self.jobs[o].stop();
            }
            for o in others {
                let job = &self.jobs[o];
                if job.inflight == 0 && job.started_at.is_some() && job.finished_at.is_none() {
                    self.job_finished(o);
                }
            }
        }
    }

    /// Threads of `process` that use a barrier go on once every one still running has
    /// submitted its `barrier` requests and seen them complete.
    fn try_release_barrier(&mut self, process: u32) {
        let now = self.now;
        let members = || self.jobs.iter().filter(|o| o.process == process && o.barrier > 0);
        let all_there = members().all(|o| {
            o.finished_at.is_some() || (self.stats[o.index].since_barrier >= o.barrier && o.inflight == 0)
        });
        if !all_there || members().all(|o| o.finished_at.is_some()) {
            return;
        }
        let waiting: Vec<usize> = members().filter(|o| o.finished_at.is_none()).map(|o| o.index).collect();
        for j in waiting {
            self.stats[j].since_barrier = 0;
            let gap = self.jobs[j].gap_after_completion(HOST_OVERHEAD);
            self.push(now + gap, Ev::Wake(j as u32));
        }
    }

    fn report(mut self) -> RunReport {
        let head_trace = self.trace.take();
        let mut jobs = Vec::with_capacity(self.jobs.len());
        let mut all = Histogram::default();
        let mut total = 0;
        for (job, st) in self.jobs.iter().zip(&self.stats) {
            let (start, end) =
                (job.measured_from().unwrap_or(Time::ZERO), job.finished_at.unwrap_or(self.last_complete));
            let rt = end.0.saturating_sub(start.0);
            let list = job.percentiles.as_deref().unwrap_or(crate::report::PERCENTILES);
            all.merge(&st.clat[0]);
            all.merge(&st.clat[1]);
            total += st.bytes[0] + st.bytes[1];
            jobs.push(JobReport {
                jobname: job.name.clone(),
                groupid: job.group,
                job_runtime: rt / 1_000_000,
                disk_time_ns: st.disk_ns,
                read: DirReport::with_percentiles(st.bytes[0], &st.clat[0], rt, list),
                write: DirReport::with_percentiles(st.bytes[1], &st.clat[1], rt, list),
                qos: st.qos.as_ref().map(|q| q.report(rt)),
                sync: (st.sync_lat.count > 0).then(|| SyncReport {
                    total_ios: st.sync_lat.count,
                    lat_ns: Clat::with_percentiles(&st.sync_lat, list),
                }),
            });
        }
        // from the first measured moment (the first submission, or with `ramp_time` the
        // earliest end of a ramp)
        let first = match self.jobs.iter().filter_map(|j| j.measured_from()).min() {
            Some(t) if self.jobs.iter().any(|j| j.ramp.0 > 0) => t,
            _ => self.first_submit.unwrap_or(Time::ZERO),
        };
        let runtime_ns = self.last_complete.0.saturating_sub(first.0);
        // the devices' figures cover the whole run, ramp included
        let run_ns = self.last_complete.0.saturating_sub(self.first_submit.unwrap_or(Time::ZERO).0);
        let secs = runtime_ns as f64 * 1e-9;
        let page_cache_dirty_bytes = self.dirty.iter().map(|d| d.bytes()).sum();
        // (a host figure: the whole device's, not a member's)
        let member_dirty = if self.array.is_some() { 0 } else { page_cache_dirty_bytes };
        let member_reports: Vec<DeviceReport> = self
            .members
            .iter()
            .map(|m| m.device_report(self.last_complete, run_ns, m.flow_in.flow(), member_dirty))
            .collect();
        let device = match &self.array {
            None => member_reports[0].clone(),
            Some(a) => DeviceReport {
                page_cache_dirty_bytes,
                ..aggregate_device(&member_reports, a.flow_in.flow(), &self.members)
            },
        };
        let mut scheduler_stats = BTreeMap::new();
        let array_stats = self.hooks.as_ref().map(|h| h.stats()).unwrap_or_default();
        for (k, v) in self.members.iter().flat_map(|m| m.sched.stats()).chain(array_stats) {
            *scheduler_stats.entry(k.to_string()).or_insert(0) += v;
        }
        let members = self.array.as_ref().map(|_| {
            self.members
                .iter()
                .zip(member_reports)
                .enumerate()
                .map(|(i, (m, device))| MemberReport {
                    member: i as u32,
                    device,
                    scheduler_stats: m.sched.stats().into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                })
                .collect()
        });
        RunReport {
            scheduler: self.members[0].sched.name(),
            disk: self.members[0].drive.hdd().spec().name.to_string(),
            array: self.array.as_ref().map(|a| a.cfg.spec.to_string()),
            context: self.context.to_string(),
            seed: self.seed,
            jobs,
            aggregate: Aggregate {
                io_bytes: total,
                bw_bytes: if runtime_ns == 0 {
                    0
                } else {
                    (total as u128 * 1_000_000_000 / runtime_ns as u128) as u64
                },
                iops: if runtime_ns == 0 { 0.0 } else { all.count as f64 / secs },
                runtime_ns,
                clat_ns: Clat::from_hist(&all),
            },
            device,
            scheduler_stats,
            members,
            head_trace,
        }
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

impl Member {
    /// The device section of this drive over a run of `runtime_ns` ending at `end`.
    fn device_report(&self, end: Time, runtime_ns: u64, requests_in: Flow, dirty: u64) -> DeviceReport {
        let ds = *self.drive.stats();
        let busy_ns = self.drive.busy_time(end).0;
        let cfg = *self.drive.config();
        let seeks = self.seeks + ds.destage_seeks;
        let seek_dist = self.seek_dist + ds.destage_seek_sectors as u128;
        DeviceReport {
            utilization: ratio(busy_ns as f64, runtime_ns as f64),
            idle_wait_ns: self.idle_wait_ns,
            seek_count: seeks,
            mean_seek_distance_sectors: ratio(seek_dist as f64, seeks as f64),
            requests: self.dispatched,
            cache_hits: self.hits,
            queue_depth: cfg.queue_depth,
            drive_scheduler: cfg.scheduler.name().to_string(),
            write_cache: cfg.write_cache.name().to_string(),
            requests_in,
            requests_out: self.flow_out.flow(),
            queue_occupancy: ratio(self.occupancy as f64, runtime_ns as f64),
            cache_hit_ratio: ratio(self.hits as f64, self.dispatched as f64),
            destages: ds.destages,
            destaged_bytes: ds.destaged_sectors * SECTOR_BYTES,
            write_cache_full_ns: self.write_cache_full_ns,
            page_cache_dirty_bytes: dirty,
        }
    }
}

/// The array's device section from its members' (see [`DeviceReport`] for which figures
/// are sums and which means): `requests_in` is what the jobs submitted to the array; the
/// caller adds the page cache's dirty bytes.
fn aggregate_device(ms: &[DeviceReport], requests_in: Flow, members: &[Member]) -> DeviceReport {
    let n = ms.len() as f64;
    let sum = |f: fn(&DeviceReport) -> u64| ms.iter().map(f).sum::<u64>();
    let seeks = sum(|d| d.seek_count);
    let seek_dist: f64 = ms.iter().map(|d| d.mean_seek_distance_sectors * d.seek_count as f64).sum();
    let mut out = Counts::default();
    for m in members {
        for d in 0..2 {
            out.n[d] += m.flow_out.n[d];
            out.bytes[d] += m.flow_out.bytes[d];
        }
    }
    let (requests, hits) = (sum(|d| d.requests), sum(|d| d.cache_hits));
    DeviceReport {
        utilization: ms.iter().map(|d| d.utilization).sum::<f64>() / n,
        idle_wait_ns: sum(|d| d.idle_wait_ns),
        seek_count: seeks,
        mean_seek_distance_sectors: ratio(seek_dist, seeks as f64),
        requests,
        cache_hits: hits,
        queue_depth: ms[0].queue_depth,
        drive_scheduler: ms[0].drive_scheduler.clone(),
        write_cache: ms[0].write_cache.clone(),
        requests_in,
        requests_out: out.flow(),
        queue_occupancy: ms.iter().map(|d| d.queue_occupancy).sum(),
        cache_hit_ratio: ratio(hits as f64, requests as f64),
        destages: sum(|d| d.destages),
        destaged_bytes: sum(|d| d.destaged_bytes),
        write_cache_full_ns: sum(|d| d.write_cache_full_ns),
        page_cache_dirty_bytes: 0,
    }
}

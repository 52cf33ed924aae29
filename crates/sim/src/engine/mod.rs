//! The discrete-event simulator: jobs submit requests, the host's page cache turns buffered
//! I/O into disk requests, the block layer's scheduler decides, the drive serves them.
//!
//! The engine is in layers, each owning its state:
//!
//! - [`core`]: the clock, the event heap (ordered by `(time, insertion sequence)`, so a run
//!   is a pure function of its inputs and seed) and request ids;
//! - the workload sources: fio jobs ([`jobs`]: their walk, think times, barriers, syncs,
//!   stonewall groups; PostMark is a job's walk) and trace feeds ([`trace_source`]); each
//!   request's issuer context is decided in one place ([`issuers`]);
//! - the host ([`page_cache`]): readahead fills, dirty data, writeback and throttling;
//! - the block layer ([`block`], [`array`]): an array's front end, and per member drive a
//!   scheduler, the drive and the scheduler's timer;
//! - what the report says of the devices ([`devices`]) and of the run ([`report`]).
//!
//! This module holds the run loop and the routing between them: which layer an event is
//! for, and what a completed disk request means upwards — an array request's last piece,
//! a page-cache fill whose waiting reads complete, a writeback, or a job's own request.
//!
//! Plugging: the requests a job submits at one instant (an asynchronous job filling its
//! `iodepth`, a buffered reader's readahead windows, a writeback flush) all reach the
//! scheduler before it is asked for the next dispatch — the block layer's plug, unplugged at
//! the end of the submitting call (`Block::fill_kicked`). So a burst of contiguous requests
//! merges even under `noop`; requests from different jobs, or from one job at different
//! instants, do not wait for each other (no unplug timer is modelled).
//!
//! Arrays (`--array raid0:N:STRIPE`, `raid5:N:STRIPE`): the jobs' addresses are array
//! addresses; an array request completes, exactly once, when its last member request does,
//! and is then accounted like any request (a job's, a page-cache fill, a writeback).
//! Without an array there is one member and no splitting.
//!
//! Records, when asked for: the head trace (`with_head_trace`: every command dispatched in
//! the run's first stretch, its wait in the scheduler and service in the drive) and the
//! request log (`with_request_log`: every job request as it completes, to a callback:
//! `--per-request`). Neither changes a decision or a number of the report.
//!
//! Hot-path allocation: none per request beyond the scheduler's own containers and the
//! request-metadata map; events are small `Copy` values in one binary heap.

mod array;
mod block;
mod core;
mod devices;
mod issuers;
mod jobs;
mod page_cache;
mod report;
mod trace_source;

use headway_disk::array::ArraySpec;
use headway_disk::{DiskSpec, DriveConfig, DriveError};
use headway_sched::hist::Histogram;
use headway_sched::idmap::IdMap;
use headway_sched::{ArraySchedulers, Dir, ReqId, Scheduler, ServiceCurve, Time};

use self::block::{Block, Completes, DriveEvent, FlushWaiter};
use self::core::{Core, Ev};
use self::issuers::Issuers;
use self::page_cache::PageCache;
use self::trace_source::TraceSource;
use crate::report::{HeadTrace, RunReport};
use crate::trace::{Feed, FeedStats, TraceError};
use crate::workload::{ContextMode, Fsync, Job, HOST_OVERHEAD};

/// `Meta::tctx` of a request that is not a trace's.
const NOT_TRACE: u32 = u32::MAX;

/// A job request in flight.
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

/// Host cost between a read served from the page cache and the reader's next request: the
/// system call's return and entry, 1 us (an estimate). Nothing blocked, so none of
/// [`HOST_OVERHEAD`]'s interrupt, wake-up and block-layer work: a reader copying cached
/// pages runs at ~2 GB/s (two microseconds a 4 KiB page), as buffered reads of cached data
/// did on the papers' machines.
const HIT_SYSCALL: headway_sched::Duration = headway_sched::Duration::from_micros(1);

/// What a job's requests came to.
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
struct Reaped {
    id: ReqId,
    meta: Meta,
    service: u64,
    total: u64,
    host: headway_sched::Duration,
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

pub struct Engine<'a> {
    /// What the report says produced it: the context mode and the seed.
    context: ContextMode,
    seed: u64,
    core: Core,
    block: Block<'a>,
    cache: PageCache,
    issuers: Issuers,
    jobs: Vec<Job>,
    stats: Vec<JobStats>,
    /// When each job may submit next (`rate`, `rate_iops`).
    next_allowed: Vec<Time>,
    /// The jobs of each stonewall group.
    groups: Vec<Vec<u32>>,
    /// Per job, a `sync=1` write waiting for its sync (finished on the drive, not yet for the job).
    osync_held: Vec<Option<Reaped>>,
    /// Job requests in flight.
    requests: IdMap<Meta>,
    first_submit: Option<Time>,
    done_bytes: u64,
    planned_bytes: u64,
    /// Trace replay: the trace and its state.
    trace: Option<TraceSource>,
    /// Told every job request as it completes, when asked for (`with_request_log`).
    log: Option<RequestLog<'a>>,
}

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
        let block = Block::new(scheds, &jobs, input)?;
        let ngroups = jobs.iter().map(|j| j.group + 1).max().unwrap_or(0);
        let mut groups = vec![Vec::new(); ngroups];
        for j in &jobs {
            groups[j.group].push(j.index as u32);
        }
        let mut cache = PageCache::new(&input.host);
        for j in &jobs {
            cache.add_job(j.buffered, j.ctx);
        }
        let n = jobs.len();
        Ok(Engine {
            context: input.context,
            seed: input.seed,
            core: Core::new(),
            block,
            cache,
            issuers: Issuers::new(input.context, input.seed),
            stats: jobs
                .iter()
                .map(|j| JobStats { qos: j.qos.map(crate::qos::QosStats::new), ..Default::default() })
                .collect(),
            next_allowed: vec![Time::ZERO; n],
            groups,
            osync_held: (0..n).map(|_| None).collect(),
            requests: IdMap::default(),
            first_submit: None,
            done_bytes: 0,
            planned_bytes: jobs.iter().filter_map(|j| j.planned_bytes()).sum(),
            jobs,
            trace: None,
            log: None,
        })
    }

    /// An engine that replays a trace (no fio jobs: each trace context's requests are
    /// accounted to a job made as the context first appears, see [`crate::trace::feed`]).
    pub fn replay(sched: Box<dyn Scheduler>, feed: Feed, input: &RunInput<'a>) -> Result<Self, EngineError> {
        let mut e = Engine::new(sched, Vec::new(), input)?;
        e.trace = Some(TraceSource::new(feed));
        Ok(e)
    }

    /// Tell `log` every job request as it completes, in completion order.
    pub fn with_request_log(mut self, log: RequestLog<'a>) -> Self {
        self.log = Some(log);
        self
    }

    /// Record every dispatch of the run's first `window` (capped at
    /// [`HeadTrace::MAX_DISPATCHES`]) in the report's `head_trace`.
    pub fn with_head_trace(mut self, window: headway_sched::Duration) -> Self {
        self.block.record_head_trace(HeadTrace::new(window.0));
        self
    }

    /// [`Engine::with_head_trace`] with `max` dispatches at most instead.
    pub fn with_head_trace_max(mut self, window: headway_sched::Duration, max: usize) -> Self {
        self.block.record_head_trace(HeadTrace::with_max(window.0, max));
        self
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
        if self.trace.is_some() {
            self.trace_advance();
        }
        let mut group = 0usize;
        let mut events = 0u64;
        while let Some((t, ev)) = self.core.pop() {
            let dt = t.0 - self.core.now.0;
            if dt > 0 {
                self.block.elapse(dt);
            }
            self.core.now = t;
            match ev {
                Ev::Wake(j) => self.wake(j as usize),
                Ev::Hit(id) => self.finish_after(ReqId(id), 0, 1, HIT_SYSCALL),
                Ev::Flush => {
                    let running = self.jobs.iter().any(|o| o.finished_at.is_none());
                    if self.cache.periodic(&mut self.core, &mut self.block, running) {
                        self.block.fill_kicked(&mut self.core);
                    }
                }
                Ev::Drive(m, gen) => self.drive_event(m as usize, gen),
                Ev::Timer(m) => self.block.timer(&mut self.core, m as usize),
                Ev::Trace => self.trace_event(t),
                Ev::TraceCtx(c) => self.trace_context_event(c),
            }
            if self.trace.as_ref().is_some_and(|s| s.failed()) {
                break;
            }
            // Stonewall: when every job of the current group is done, start the next.
            while group + 1 < self.groups.len()
                && self.groups[group].iter().all(|&j| self.jobs[j as usize].done(self.core.now))
            {
                group += 1;
                self.start_group(group);
            }
            events += 1;
            if events & 0xFFFF == 0 {
                if let Some(f) = self.trace.as_ref().and_then(|s| s.fraction()) {
                    progress(f);
                } else if self.planned_bytes > 0 {
                    progress(self.done_bytes as f64 / self.planned_bytes as f64);
                }
            }
        }
        if let Some(e) = self.trace.as_mut().and_then(|s| s.take_error()) {
            return Err(EngineError::Trace(e));
        }
        let unfinished = self.jobs.iter().filter(|j| !j.done(self.core.now)).count()
            + self.trace.as_ref().is_some_and(|s| !s.finished()) as usize;
        if unfinished > 0 {
            return Err(EngineError::Stalled {
                at: self.core.now,
                jobs: unfinished,
                scheduler: self.block.scheduler_name(),
                pending: self.block.pending(),
            });
        }
        progress(1.0);
        let stats = self.trace.as_ref().map(|s| s.stats()).unwrap_or_default();
        Ok((self.report(), stats))
    }

    /// A job made during the run (a trace context's).
    fn add_job(&mut self, job: Job) {
        debug_assert_eq!(job.index, self.jobs.len());
        self.cache.add_job(job.buffered, job.ctx);
        self.jobs.push(job);
        self.stats.push(JobStats::default());
        self.next_allowed.push(Time::ZERO);
        self.osync_held.push(None);
    }

    /// Member `m`'s drive event of generation `gen` is due: act on what finished, then
    /// refill the drive.
    fn drive_event(&mut self, m: usize, gen: u64) {
        match self.block.drive_event(self.core.now, m, gen) {
            DriveEvent::Stale => return,
            DriveEvent::Nothing => {}
            DriveEvent::Flushed(waiters) => self.flushed(waiters),
            DriveEvent::Completed { id, service, total } => {
                self.finish_disk(id, service, total);
                if let Some(parts) = self.block.take_merged(id) {
                    for p in parts {
                        self.finish_disk(p, service, total);
                    }
                }
            }
        }
        self.block.refill(&mut self.core, m);
    }

    /// A drive's cache flush completed: the syncs and trace flushes waiting for it.
    fn flushed(&mut self, waiters: Vec<FlushWaiter>) {
        for w in waiters {
            match w {
                FlushWaiter::Job(j) => self.job_flushed(j as usize),
                FlushWaiter::Trace(id) => self.trace_flush_done(id),
            }
        }
    }

    /// A disk request (or a part merged into one) is done: an array's member request, or a
    /// request of the host's.
    fn finish_disk(&mut self, id: ReqId, service: u64, total: u64) {
        match self.block.finish_piece(&mut self.core, id, service, total) {
            Completes::Itself => self.finish_host(id, service, total),
            Completes::Nothing => {}
            Completes::Array { id, disk_ns, total } => self.finish_host(id, disk_ns, total),
        }
    }

    /// A request the host sent is done: a writeback, a page-cache fill whose waiting reads
    /// now complete, or a job's own request.
    fn finish_host(&mut self, id: ReqId, service: u64, total: u64) {
        if let Some((j, share)) = self.cache.writeback_done(&mut self.core, &mut self.block, id, service, total) {
            self.stats[j].disk_ns += share;
            if self.jobs[j].fsync == Fsync::Draining {
                self.try_fsync(j);
            }
            return;
        }
        match self.cache.fill_done(id, service, total) {
            None => self.finish(id, service, total),
            Some((j, share, waiters)) => {
                self.stats[j].disk_ns += share;
                for w in waiters {
                    self.finish(w, 0, 1);
                }
            }
        }
    }

    /// One job request (original or merged part) is done: account it and let its job go
    /// on. `service` is the drive time of the carrier request, `total` its bytes.
    fn finish(&mut self, id: ReqId, service: u64, total: u64) {
        self.finish_after(id, service, total, HOST_OVERHEAD)
    }

    /// [`Engine::finish`], the job's next request coming `host` after (plus thinktime).
    fn finish_after(&mut self, id: ReqId, service: u64, total: u64, host: headway_sched::Duration) {
        let m = self.requests.remove(&id).expect("completed request has metadata");
        let j = m.job as usize;
        // `sync=1`: the write returns once durable; held until the job's sync completes
        if m.dir == Dir::Write && self.jobs[j].osync && m.tctx == NOT_TRACE {
            self.osync_held[j] = Some(Reaped { id, meta: m, service, total, host });
            self.jobs[j].fsync = Fsync::Draining;
            return self.try_fsync(j);
        }
        self.account(Reaped { id, meta: m, service, total, host });
    }

    /// A job's request is done for the job: count it and let its source go on. (Inlined
    /// into `finish_after`, the hot caller: as a call, moving `Reaped` cost ~1% of the
    /// bench.)
    #[inline(always)]
    fn account(&mut self, h: Reaped) {
        let Reaped { id, meta: m, service, total, host } = h;
        let now = self.core.now;
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
                offset: m.sector * headway_sched::SECTOR_BYTES,
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
        self.jobs[j].reaped_one();
        if m.tctx != NOT_TRACE {
            self.trace_request_done(j, m.tctx);
        } else {
            self.job_request_done(j, host);
        }
    }
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


//! The discrete-event simulator: jobs submit requests, the host's page cache turns buffered
//! I/O into disk requests, the block layer's scheduler decides, the drive serves them.
//!
//! The engine is in layers, each owning its state:
//!
//! - `core`: the clock, the event heap (ordered by `(time, insertion sequence)`, so a run
//!   is a pure function of its inputs and seed) and request ids;
//! - the workload sources, behind one trait (`source`): fio jobs (`jobs`: their walk,
//!   think times, barriers, syncs, stonewall groups; PostMark is a job's walk) and trace
//!   feeds (`trace_source`); each request's issuer context is decided in one place
//!   (`issuers`);
//! - the host (`page_cache`): readahead fills, dirty data, writeback and throttling;
//! - the block layer (`block`, `array`, `bus`): an array's front end, per member drive
//!   a scheduler, the drive and the scheduler's timer, and the buses drives share;
//! - what the report says of the devices (`devices`) and of the run (`report`).
//!
//! `machine` holds everything below the source and the routing between the layers: what
//! a completed disk request means upwards — an array request's last piece, a page-cache
//! fill whose waiting reads complete, a writeback, or a job's own request. This module
//! holds the run loop: which layer an event is for.
//!
//! Plugging: the requests a job submits at one instant (an asynchronous job filling its
//! `iodepth`, a buffered reader's readahead windows, a writeback flush) all reach the
//! scheduler before it is asked for the next dispatch — the block layer's plug, unplugged at
//! the end of the submitting call (`Block::fill_kicked`). So a burst of contiguous requests
//! merges even under `noop`; requests from different jobs, or from one job at different
//! instants, do not wait for each other (no unplug timer is modelled).
//!
//! Arrays (`--array LEVEL:N:STRIPE`): the jobs' addresses are array
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
mod bus;
mod core;
mod ctlr;
mod devices;
mod issuers;
mod jobs;
mod machine;
mod page_cache;
mod report;
mod source;
mod synth_source;
mod trace_source;

use headway_disk::array::ArraySpec;
use headway_disk::{DiskSpec, DriveConfig, DriveError};
use headway_sched::{ArraySchedulers, Dir, ReqId, Scheduler, ServiceCurve, Time};

use self::core::Ev;
use self::jobs::FioJobs;
use self::machine::{Machine, HIT_SYSCALL};
use self::source::Source;
use self::synth_source::SynthSource;
use self::trace_source::TraceSource;
use crate::report::{HeadTrace, RunReport};
use crate::trace::{Feed, FeedStats, TraceError};
use crate::workload::{ContextMode, Job};

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
    /// Devices addressed each on its own, each a drive or an array (see
    /// [`crate::RunSpec::devices`]); empty: one. Device `d`'s sector `s` is the run's
    /// address `d << DEVICE_SHIFT | s`.
    pub devices: &'a [crate::Device],
}

/// Where a run of several devices keeps the device in an address: above 2^40 sectors
/// (512 TiB a device).
pub const DEVICE_SHIFT: u32 = 40;

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
    /// A synthetic workload that cannot run on this machine.
    #[error("synthetic workload: {0}")]
    Synthetic(String),
    /// A device layer that cannot be combined with the rest of the run.
    #[error("{0}")]
    Unsupported(String),
}

/// A run: a workload source on a simulated machine.
pub struct Engine<'a> {
    machine: Machine<'a>,
    source: Sources<'a>,
}

/// The sources the engine knows, dispatched statically (a run's hot path is the source's
/// submissions and completions), and any other behind the trait object.
enum Sources<'a> {
    Jobs(FioJobs),
    Trace(Box<TraceSource>),
    Other(Box<dyn Source + 'a>),
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
        let source = Sources::Jobs(FioJobs::new(&jobs, input.host.cpu_per_request));
        Ok(Engine { machine: Machine::new(scheds, jobs, input)?, source })
    }

    /// An engine that replays a trace (no fio jobs: each trace context's requests are
    /// accounted to a job made as the context first appears, see [`crate::trace::feed`]).
    pub fn replay(sched: Box<dyn Scheduler>, feed: Feed, input: &RunInput<'a>) -> Result<Self, EngineError> {
        Engine::replay_array(ArraySchedulers { members: vec![sched], hooks: None }, feed, input)
    }

    /// [`Engine::replay`] with one scheduler per member of `input.array` (the trace's
    /// addresses are the array's).
    pub fn replay_array(
        scheds: ArraySchedulers,
        feed: Feed,
        input: &RunInput<'a>,
    ) -> Result<Self, EngineError> {
        let source = Sources::Trace(Box::new(TraceSource::new(feed)));
        Ok(Engine { machine: Machine::new(scheds, Vec::new(), input)?, source })
    }

    /// An engine that runs DiskSim's synthetic generators ([`crate::synthio`]): one job per
    /// generator. Without `input.devices`, every generator must address the one device (or
    /// array) simulated; with them, the run's devices are the workload's device names in
    /// order. A request past its device ends the run with an error.
    pub fn synthetic(
        scheds: ArraySchedulers,
        spec: crate::synthio::SynthSpec,
        input: &RunInput<'a>,
    ) -> Result<Self, EngineError> {
        let several = !input.devices.is_empty();
        let capacity = |d: u32| match (input.array, input.devices.get(d as usize)) {
            (_, Some(dev)) => dev.capacity(),
            (Some(a), None) => a.spec.capacity(input.disk.capacity_sectors),
            (None, None) => input.disk.capacity_sectors,
        };
        let Some(&first) = spec.generators.first().and_then(|g| g.devices.first()) else {
            return Err(EngineError::Synthetic("no generator, or one without devices".into()));
        };
        if several && input.devices.len() != spec.device_names.len() {
            return Err(EngineError::Synthetic(format!(
                "{} devices simulated for the {} the generators name",
                input.devices.len(),
                spec.device_names.len()
            )));
        }
        for (i, g) in spec.generators.iter().enumerate() {
            if !several && g.devices.iter().any(|&d| d != first) {
                return Err(EngineError::Synthetic(format!(
                    "generator {i} addresses several devices; headway simulates one device or array"
                )));
            }
        }
        // a capacity above the device's is DiskSim's to allow: the run fails at the first
        // request that lands past the device, as DiskSim's does
        let name = |d: usize| spec.device_names.get(d).cloned().unwrap_or_else(|| "the device".into());
        let devices = match several {
            true => (0..input.devices.len()).map(|d| (capacity(d as u32), name(d))).collect(),
            false => vec![(capacity(first), name(first as usize))],
        };
        let blocking = spec.generators.iter().map(|g| g.blocking).collect();
        let flow = crate::synthio::flow::Flow::new(spec).map_err(EngineError::Synthetic)?;
        let source = Sources::Other(Box::new(SynthSource::new(flow, blocking, several, devices)));
        Ok(Engine { machine: Machine::new(scheds, Vec::new(), input)?, source })
    }

    /// Tell `log` every job request as it completes, in completion order.
    pub fn with_request_log(mut self, log: RequestLog<'a>) -> Self {
        self.machine.log = Some(log);
        self
    }

    /// Record every dispatch of the run's first `window` (capped at
    /// [`HeadTrace::MAX_DISPATCHES`]) in the report's `head_trace`.
    pub fn with_head_trace(mut self, window: headway_sched::Duration) -> Self {
        self.machine.block.record_head_trace(HeadTrace::new(window.0));
        self
    }

    /// [`Engine::with_head_trace`] with `max` dispatches at most instead.
    pub fn with_head_trace_max(mut self, window: headway_sched::Duration, max: usize) -> Self {
        self.machine.block.record_head_trace(HeadTrace::with_max(window.0, max));
        self
    }

    /// Run to the end. `progress` receives the fraction done now and then.
    pub fn run(self, progress: impl FnMut(f64)) -> Result<RunReport, EngineError> {
        self.run_replay(progress).map(|(r, _)| r)
    }

    /// Run to the end; with a trace, also what was read from it.
    pub fn run_replay(self, progress: impl FnMut(f64)) -> Result<(RunReport, FeedStats), EngineError> {
        let Engine { machine, source } = self;
        match source {
            Sources::Jobs(mut s) => run(machine, &mut s, progress),
            Sources::Trace(mut s) => run(machine, s.as_mut(), progress),
            Sources::Other(mut s) => run(machine, s.as_mut(), progress),
        }
    }
}

/// The run loop: hand each event to its layer, until none is left.
fn run<S: Source + ?Sized>(
    mut m: Machine<'_>,
    src: &mut S,
    mut progress: impl FnMut(f64),
) -> Result<(RunReport, FeedStats), EngineError> {
    src.start(&mut m);
    let watch = src.watches_events();
    let mut events = 0u64;
    while let Some((t, ev)) = m.core.pop() {
        let dt = t.0 - m.core.now.0;
        if dt > 0 {
            m.block.elapse(dt);
        }
        m.core.now = t;
        match ev {
            Ev::Source(key) => src.wake(&mut m, key),
            Ev::Hit(id) => m.finish_after(src, ReqId(id), 0, 1, HIT_SYSCALL),
            Ev::Flush => m.periodic_flush(),
            Ev::Drive(member, gen) => m.drive_event(src, member as usize, gen),
            Ev::Timer(member) => m.block.timer(&mut m.core, member as usize),
            Ev::Ctlr => m.ctlr_event(src),
            Ev::Bus(member) => m.block.bus_event(&mut m.core, member as usize),
        }
        if src.failed() {
            break;
        }
        if watch {
            src.after_event(&mut m);
        }
        events += 1;
        if events & 0xFFFF == 0 {
            if let Some(f) = src.fraction().or_else(|| m.fraction()) {
                progress(f);
            }
        }
    }
    if let Some(e) = src.take_error() {
        return Err(EngineError::Trace(e));
    }
    let unfinished = m.unfinished_jobs() + src.unfinished(&m);
    if unfinished > 0 {
        return Err(EngineError::Stalled {
            at: m.core.now,
            jobs: unfinished,
            scheduler: m.block.scheduler_name(),
            pending: m.block.pending(),
        });
    }
    progress(1.0);
    let stats = src.feed_stats();
    Ok((m.report(), stats))
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
    /// The job's requests in flight once this one was submitted, itself included (fio's
    /// "IO depths").
    pub depth: u32,
    /// Whether it counts in the report's figures: `false` for what completed during the
    /// job's `ramp_time`.
    pub measured: bool,
}

/// Where an engine sends its [`RequestRecord`]s.
pub type RequestLog<'a> = Box<dyn FnMut(&RequestRecord<'_>) + 'a>;

/// Where a run of several engines sends their records, with the run's index.
pub type RunsLog<'l> = &'l mut dyn FnMut(usize, &RequestRecord<'_>);

#[cfg(test)]
mod tests {
    use super::machine::Reaped;
    use super::*;
    use headway_sched::{Duration, Request, Settings};

    /// An open-loop source: one 4 KiB read every millisecond, `n` of them, as one job.
    struct Ticker {
        n: u32,
        sent: u32,
        done: u32,
    }

    impl Source for Ticker {
        fn start(&mut self, m: &mut Machine) {
            m.add_job(Job::for_trace("ticker".into(), 0));
            m.core.push(Time::ZERO, Ev::Source(0));
        }
        fn wake(&mut self, m: &mut Machine, _key: u32) {
            let now = m.core.now;
            let job = &mut m.jobs[0];
            job.progress.started_at.get_or_insert(now);
            job.progress.inflight += 1;
            let sector = self.sent as u64 * 1_000_000;
            let id = m.new_request(0, Dir::Read, sector, 8, 0);
            let rq = Request { id, sector, len: 8, dir: Dir::Read, sync: true, arrival: now, ctx: None };
            m.block.arrive(&mut m.core, rq, 0);
            m.block.fill_kicked(&mut m.core);
            self.sent += 1;
            if self.sent < self.n {
                m.core.push(now + Duration::from_millis(1), Ev::Source(0));
            }
        }
        fn completed(&mut self, m: &mut Machine, r: Reaped) {
            m.count(&r);
            self.done += 1;
            if self.done == self.n {
                m.jobs[0].progress.finished_at = Some(m.core.now);
            }
        }
        fn flushed(&mut self, _m: &mut Machine, _token: u64) {
            unreachable!("the ticker never flushes")
        }
        fn unfinished(&self, _m: &Machine) -> usize {
            (self.done < self.n) as usize
        }
    }

    #[test]
    fn a_new_workload_source_needs_only_the_trait() {
        let (disk, curve) = block::tests::disk_and_curve();
        let input = block::tests::input(&disk, &curve, None);
        let sched = headway_sched::registry::build("noop", &mut Settings::new()).unwrap();
        let scheds = ArraySchedulers { members: vec![sched], hooks: None };
        let machine = Machine::new(scheds, Vec::new(), &input).unwrap();
        let engine = Engine { machine, source: Sources::Other(Box::new(Ticker { n: 10, sent: 0, done: 0 })) };
        let r = engine.run(|_| {}).unwrap();
        assert_eq!(r.jobs.len(), 1);
        assert_eq!((r.jobs[0].jobname.as_str(), r.jobs[0].read.total_ios), ("ticker", 10));
        assert_eq!(r.device.requests, 10, "one command a request: none were close enough to merge");
        // the last read went out at 9 ms; each takes a seek and a rotation (under 15 ms on a
        // 7,200 rpm drive), one at a time
        let rt = r.aggregate.runtime_ns;
        assert!(rt > 9_000_000 && rt < 150_000_000, "{rt}");
    }
}

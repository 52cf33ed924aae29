//! # headway-sim — the deterministic disk simulator
//!
//! fio job files in, fio-shaped results out: [`simulate`] expands the jobs, calibrates the
//! drive's service-time curve (as the papers calibrate real disks), and runs the workload
//! once per scheduler on a fresh drive model. Same inputs and seed, byte-identical output.

pub mod calibrate;
pub mod ctlr_cache;
pub mod engine;
pub mod fio;
pub mod fio_out;
pub use headway_sched::hist;
pub mod host;
pub mod iolog_out;
pub mod locality;
pub mod postmark;
pub mod qos;
pub mod readahead;
pub mod report;
pub mod reproduce;
pub mod request_csv;
pub mod run_spec;
pub mod sweep;
pub mod synthio;
pub mod trace;
pub mod workload;
pub mod writeback;

use std::collections::BTreeMap;

use headway_disk::array::ArraySpec;
use headway_sched::framework::array_stream::ArrayShape;
use headway_sched::{BuildError, Settings, SECTOR_BYTES};

pub use engine::{
    ArrayConfig, Engine, EngineError, RequestRecord, RunInput, RunsLog, DEFAULT_ARRAY_QUEUE_DEPTH,
};
pub use report::{Report, RunReport};
pub use run_spec::{Device, RunSpec, DEFAULT_SCHEDULERS};
pub use workload::{BadContext, ContextMode, Job, VmInTrace, WorkloadError};

/// Everything a simulation needs: the job file, and the machine and schedulers to run it
/// on.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub jobfile: fio::JobFile,
    pub run: RunSpec,
}

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    #[error("scheduler `{name}`: {err}")]
    Scheduler { name: String, err: BuildError },
    #[error("unknown setting(s) {0} for scheduler(s) {1} (see `headway tunables`)")]
    UnusedSettings(String, String),
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("page cache: {0}")]
    Host(headway_sched::ParamError),
    #[error("no scheduler given")]
    NoScheduler,
    #[error("{0}: no jobs in the job file")]
    NoJobs(String),
    #[error(transparent)]
    Trace(#[from] trace::TraceError),
    #[error("array front-end queue depth {0}: expected 1 to 4096")]
    ArrayQueueDepth(u32),
}

/// Check every scheduler name and setting from the table of schedulers before anything runs
/// (no scheduler is built for it: `registry::check`), and the page cache's settings.
pub fn check_schedulers(names: &[String], settings: &Settings) -> Result<(), SimError> {
    if names.is_empty() {
        return Err(SimError::NoScheduler);
    }
    let mut used = std::collections::BTreeSet::new();
    let mut host = settings.clone();
    host::HostParams::from_settings(&mut host).map_err(SimError::Host)?;
    let host_unused: std::collections::BTreeSet<_> = host.unused().into_iter().collect();
    used.extend(settings.iter().map(|(k, _)| k.to_string()).filter(|k| !host_unused.contains(k)));
    for n in names {
        let mut s = settings.clone();
        headway_sched::registry::check(n, &mut s)
            .map_err(|err| SimError::Scheduler { name: n.clone(), err })?;
        let unused: std::collections::BTreeSet<_> = s.unused().into_iter().collect();
        used.extend(settings.iter().map(|(k, _)| k.to_string()).filter(|k| !unused.contains(k)));
    }
    let bad: Vec<String> = settings
        .iter()
        .map(|(k, _)| k.to_string())
        .filter(|k| !used.contains(k))
        .map(|k| format!("`{k}`"))
        .collect();
    if !bad.is_empty() {
        return Err(SimError::UnusedSettings(bad.join(", "), names.join(", ")));
    }
    Ok(())
}

/// Expand the job file into job clones (stonewall groups numbered from 0).
pub fn expand_jobs(cfg: &SimConfig, capacity_sectors: u64) -> Result<Vec<Job>, SimError> {
    if cfg.jobfile.jobs.is_empty() {
        return Err(SimError::NoJobs(cfg.jobfile.path.clone()));
    }
    let mut jobs = Vec::new();
    let mut group = 0;
    // Issuer identities: a named process (or VM) gets the number of its first job clone;
    // an unnamed clone is a process of its own; jobs without a VM share VM 0.
    let (mut procs, mut vms) = (Vec::new(), Vec::new());
    let mut proc_names: BTreeMap<&str, u32> = BTreeMap::new();
    let mut vm_names: BTreeMap<&str, u32> = BTreeMap::new();
    for (i, spec) in cfg.jobfile.jobs.iter().enumerate() {
        if spec.stonewall && i > 0 {
            group += 1;
        }
        let clones = Job::expand(
            spec,
            group,
            jobs.len(),
            capacity_sectors * SECTOR_BYTES,
            cfg.run.context,
            cfg.run.seed,
        )?;
        for c in &clones {
            procs.push(match &spec.headway_process {
                Some(n) => *proc_names.entry(n).or_insert(c.index as u32),
                None => c.index as u32,
            });
            let next_vm = vm_names.len() as u32 + 1;
            vms.push(match &spec.headway_vm {
                Some(n) => *vm_names.entry(n).or_insert(next_vm),
                None => 0,
            });
        }
        jobs.extend(clones);
    }
    Job::assign_contexts(&mut jobs, cfg.run.context, &procs, &vms);
    Ok(jobs)
}

/// Run the workload once per scheduler. `progress(run_index, fraction)` is called now and
/// then from the simulation loop.
pub fn simulate(cfg: &SimConfig, progress: impl FnMut(usize, f64)) -> Result<Report, SimError> {
    simulate_traced(cfg, headway_sched::Duration(0), progress)
}

/// [`simulate`], each run's report also holding a `head_trace` of the dispatches in its
/// first `head_trace` of simulated time (none when zero). The Python package's plots use it.
pub fn simulate_traced(
    cfg: &SimConfig,
    head_trace: headway_sched::Duration,
    progress: impl FnMut(usize, f64),
) -> Result<Report, SimError> {
    simulate_with(cfg, head_trace, progress, None)
}

/// [`simulate`], telling `log(run_index, record)` every job request as it completes (runs
/// in scheduler order, each in completion order): `headway simulate --per-request`.
pub fn simulate_logged(
    cfg: &SimConfig,
    progress: impl FnMut(usize, f64),
    mut log: impl FnMut(usize, &RequestRecord<'_>),
) -> Result<Report, SimError> {
    simulate_with(cfg, headway_sched::Duration(0), progress, Some(&mut log))
}

/// [`simulate`] with both extras: each run's `head_trace` of its first `head_trace` of
/// simulated time (none when zero), and every job request told to `log` (none: not
/// recorded).
pub fn simulate_with(
    cfg: &SimConfig,
    head_trace: headway_sched::Duration,
    mut progress: impl FnMut(usize, f64),
    log: Option<engine::RunsLog<'_>>,
) -> Result<Report, SimError> {
    let run = &cfg.run;
    check_schedulers(&run.schedulers, &run.settings)?;
    let jobs = expand_jobs(cfg, run.capacity())?;
    run_each(run, &mut progress, log, |scheds, input| {
        let engine = Engine::with_array_schedulers(scheds, jobs.clone(), input)?;
        Ok(if head_trace.0 > 0 { engine.with_head_trace(head_trace) } else { engine })
    })
}

/// Run a DiskSim synthetic workload ([`synthio`]) once per scheduler, as [`simulate_with`]
/// runs a job file: one job per generator.
pub fn simulate_synthetic(
    spec: &synthio::SynthSpec,
    run: &RunSpec,
    mut progress: impl FnMut(usize, f64),
    log: Option<engine::RunsLog<'_>>,
) -> Result<Report, SimError> {
    check_schedulers(&run.schedulers, &run.settings)?;
    run_each(run, &mut progress, log, |scheds, input| Ok(Engine::synthetic(scheds, spec.clone(), input)?))
}

/// One run per scheduler of `run`, each engine made by `engine` from its schedulers and
/// the runs' shared input, its requests told to `log`.
fn run_each<'i>(
    run: &'i RunSpec,
    progress: &mut impl FnMut(usize, f64),
    mut log: Option<engine::RunsLog<'_>>,
    engine: impl for<'a> Fn(headway_sched::ArraySchedulers, &RunInput<'a>) -> Result<Engine<'a>, SimError>,
) -> Result<Report, SimError> {
    let array = run.array_config()?;
    let shared = Shared::of(run)?;
    let input = shared.input(run, array);
    let mut runs = Vec::with_capacity(run.schedulers.len());
    for (i, name) in run.schedulers.iter().enumerate() {
        let scheds = run_schedulers(name, run)?;
        let mut engine = engine(scheds, &input)?;
        if let Some(log) = log.as_deref_mut() {
            engine = engine.with_request_log(Box::new(move |r| log(i, r)));
        }
        runs.push(engine.run(|f| progress(i, f))?);
    }
    Ok(Report::new(runs))
}

/// A scheduler's name as it goes into a file name: `:` written `-` (`stream:deadline` ->
/// `stream-deadline`).
pub fn scheduler_tag(scheduler: &str) -> String {
    scheduler.replace(':', "-")
}

/// The file a run of `scheduler` writes for `base`: `base` itself when it is the only run,
/// else `base.SCHEDULER` ([`scheduler_tag`]).
pub fn per_run_path(base: &std::path::Path, scheduler: &str, several: bool) -> std::path::PathBuf {
    if !several {
        return base.to_path_buf();
    }
    let mut p = base.as_os_str().to_owned();
    p.push(".");
    p.push(scheduler_tag(scheduler));
    p.into()
}

/// A new file at `path`, its directory made first.
pub(crate) fn create_file(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::File::create(path)
}

/// What every run of one configuration shares: the drive model's fitted service curve and
/// the page-cache parameters (used by [`simulate`] and [`trace::replay`]).
pub(crate) struct Shared {
    curve: headway_sched::ServiceCurve,
    host: host::HostParams,
}

impl Shared {
    /// What the runs of `run` share (with an array, Linux md's read-ahead for it).
    pub(crate) fn of(run: &RunSpec) -> Result<Shared, SimError> {
        let host = host::HostParams::from_settings(&mut run.settings.clone()).map_err(SimError::Host)?;
        let mut shared = Shared { curve: calibrate::curve_for(&run.disk), host };
        if let Some(a) = run.array {
            shared.array_read_ahead(a, &run.settings);
        }
        Ok(shared)
    }

    /// Linux md's read-ahead for an array: at least two full stripes of data
    /// (`2 x data members x stripe unit`; raid0.c and raid5.c set the array device's
    /// read-ahead so, "to get good read-ahead performance" on large files). The array's
    /// page cache reads ahead that far unless `read_ahead_kb` is set explicitly.
    pub(crate) fn array_read_ahead(&mut self, array: ArraySpec, settings: &Settings) {
        if settings.iter().any(|(k, _)| k == host::T_READ_AHEAD_KB.name) {
            return;
        }
        let stripes_kb = 2 * array.data_members() as u64 * array.unit * SECTOR_BYTES / 1024;
        self.host.read_ahead_kb = self.host.read_ahead_kb.max(stripes_kb);
    }

    /// The engine's input for a run of `run` (`array`: its checked array, see
    /// [`RunSpec::array_config`]).
    pub(crate) fn input<'a>(&'a self, run: &'a RunSpec, array: Option<ArrayConfig>) -> RunInput<'a> {
        RunInput {
            disk: &run.disk,
            curve: &self.curve,
            context: run.context,
            seed: run.seed,
            drive: run.drive,
            host: self.host.clone(),
            array,
            devices: &run.devices,
        }
    }
}

/// The schedulers of one run of `name`: one per drive when the run has several devices
/// (its own `devices`, each a drive or an array, or a drive and the device its controller
/// caches on), else the array's or the drive's. An array that is one of several devices
/// gets one scheduler per member and no array-wide part (`stream` schedules each member
/// drive on its own there).
pub(crate) fn run_schedulers(name: &str, run: &RunSpec) -> Result<headway_sched::ArraySchedulers, SimError> {
    let cache_device = run.disk.controller.as_ref().is_some_and(|c| c.on_device.is_some());
    match run.devices.len() {
        0 if cache_device => device_schedulers(name, &run.settings, 2),
        0 => build_array_schedulers(name, &run.settings, run.array),
        _ => device_schedulers(name, &run.settings, run.devices.iter().map(|d| d.members()).sum()),
    }
}

/// One scheduler instance of `name` per device of a run of `n` independent devices (no
/// array-wide part: nothing spans devices).
fn device_schedulers(
    name: &str,
    settings: &Settings,
    n: usize,
) -> Result<headway_sched::ArraySchedulers, SimError> {
    let members = (0..n)
        .map(|_| {
            headway_sched::registry::build(name, &mut settings.clone())
                .map_err(|err| SimError::Scheduler { name: name.to_string(), err })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(headway_sched::ArraySchedulers { members, hooks: None })
}

pub(crate) fn build_array_schedulers(
    name: &str,
    settings: &Settings,
    array: Option<ArraySpec>,
) -> Result<headway_sched::ArraySchedulers, SimError> {
    let shape = array.map_or(ArrayShape { members: 1, data_members: 1 }, |a| ArrayShape {
        members: a.members,
        data_members: a.data_members(),
    });
    headway_sched::build_array(name, &mut settings.clone(), shape)
        .map_err(|err| SimError::Scheduler { name: name.to_string(), err })
}

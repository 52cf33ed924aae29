//! `headway._native`: the Python package's native module. The only crate that knows Python
//! (pydantic-core's layout): it turns Python arguments into a [`SimConfig`], runs
//! headway-sim, and hands back the JSON the CLI writes with `--json`; `main` runs the CLI
//! itself, so the `headway` console script is the same program as the cargo-built binary.
//! Everything about presentation (the `Result` class, pandas, plots, docstrings, stubs)
//! lives in `python/headway`. Errors become Python exceptions in one place, `error`.

mod error;

use pyo3::prelude::*;

use headway_disk::{DriveConfig, DriveScheduler, WriteCache, MAX_QUEUE_DEPTH};
use headway_sched::{Duration, Settings};
use headway_sim::request_csv::RequestCsv;
use headway_sim::{fio, simulate_with, ContextMode, RunSpec, SimConfig};

use error::Failure;

/// Simulate a fio job file once per scheduler; returns the fio-shaped JSON report.
/// `job` is a path, or the job file's text when `job_is_text` (named `label` in errors).
/// `settings` are (name, value) pairs as `--set NAME=VALUE` takes them. `head_trace_ns` > 0
/// adds each run's dispatches of that first stretch of simulated time (`head_trace`).
/// `array` (`raid0:5:64k`) makes the disk an array of `disk`s with a front end admitting
/// `array_queue_depth` requests (`--array`, `--array-queue-depth`). `per_request` (a path)
/// streams every job request to that CSV file (`--per-request`).
#[pyfunction]
#[pyo3(signature = (job, *, job_is_text, label, disk, schedulers, context, settings, seed,
    queue_depth, drive_scheduler, write_cache, head_trace_ns, array=None,
    array_queue_depth=headway_sim::DEFAULT_ARRAY_QUEUE_DEPTH, per_request=None))]
#[allow(clippy::too_many_arguments)]
fn simulate_json(
    py: Python<'_>,
    job: &str,
    job_is_text: bool,
    label: &str,
    disk: &str,
    schedulers: Vec<String>,
    context: &str,
    settings: Vec<(String, String)>,
    seed: u64,
    queue_depth: u32,
    drive_scheduler: &str,
    write_cache: &str,
    head_trace_ns: u64,
    array: Option<&str>,
    array_queue_depth: u32,
    per_request: Option<&str>,
) -> PyResult<String> {
    let cfg = (|| -> Result<SimConfig, Failure> {
        let jobfile = if job_is_text {
            fio::parse_str(job, label)?
        } else {
            fio::parse_file(std::path::Path::new(job))?
        };
        let array = match array {
            None => None,
            Some(a) => Some(a.parse().map_err(Failure::Setting)?),
        };
        let drive = drive_config(queue_depth, drive_scheduler, write_cache)?;
        let run = RunSpec {
            context: parse_context(context, true)?,
            settings: parse_settings(&settings)?,
            seed,
            drive,
            array,
            array_queue_depth,
            ..RunSpec::new(resolve_disk(disk)?).with_schedulers(&schedulers)
        };
        Ok(SimConfig { jobfile, run })
    })()
    .map_err(|f| f.into_py(py))?;
    let mut csv = request_csv(per_request, &cfg.run.schedulers).map_err(|f| f.into_py(py))?;
    // The simulation holds no Python object: let other Python threads run meanwhile.
    let report = py
        .detach(|| {
            let mut record = |run: usize, r: &headway_sim::RequestRecord<'_>| {
                if let Some(c) = csv.as_mut() {
                    c.record(run, r)
                }
            };
            let log: Option<headway_sim::RunsLog<'_>> =
                if per_request.is_some() { Some(&mut record) } else { None };
            simulate_with(&cfg, Duration(head_trace_ns), |_, _| {}, log)
        })
        .map_err(|e| Failure::from(e).into_py(py))?;
    if let Some(c) = csv {
        c.finish().map_err(|e| Failure::from(e).into_py(py))?;
    }
    Ok(report.to_json())
}

/// A built-in model name, or a DiskSim `.parv` / `.diskspecs` path: `--disk`'s resolver.
fn resolve_disk(disk: &str) -> Result<headway_disk::DiskSpec, Failure> {
    Ok(headway_disk::resolve(disk)?)
}

/// `context=`: `process`, `thread`, `none`, `pool:N`, and `vm` where jobs name their VMs.
fn parse_context(context: &str, vm: bool) -> Result<ContextMode, Failure> {
    let parsed = if vm {
        context.parse().map_err(|e: headway_sim::BadContext| e.to_string())
    } else {
        ContextMode::for_trace(context)
    };
    parsed.map_err(|e| Failure::Setting(format!("context: {e}")))
}

/// `settings=` as (name, value) pairs.
fn parse_settings(settings: &[(String, String)]) -> Result<Settings, Failure> {
    let mut s = Settings::new();
    for (k, v) in settings {
        s.push_kv(&format!("{k}={v}")).map_err(|e| Failure::Setting(e.to_string()))?;
    }
    Ok(s)
}

/// `queue_depth=`, `drive_scheduler=`, `write_cache=`.
fn drive_config(queue_depth: u32, drive_scheduler: &str, write_cache: &str) -> Result<DriveConfig, Failure> {
    if !(1..=MAX_QUEUE_DEPTH).contains(&queue_depth) {
        return Err(Failure::Setting(format!(
            "queue_depth {queue_depth}: expected a number from 1 to {MAX_QUEUE_DEPTH}"
        )));
    }
    Ok(DriveConfig {
        queue_depth,
        scheduler: drive_scheduler
            .parse::<DriveScheduler>()
            .map_err(|e| Failure::Setting(format!("drive_scheduler: {e}")))?,
        write_cache: write_cache
            .parse::<WriteCache>()
            .map_err(|e| Failure::Setting(format!("write_cache: {e}")))?,
        write_cache_sectors: None,
    })
}

/// Open the `per_request=` CSV (`--per-request`) for runs of `schedulers`.
fn request_csv(path: Option<&str>, schedulers: &[String]) -> Result<Option<RequestCsv>, Failure> {
    path.map(|p| RequestCsv::create(std::path::Path::new(p), schedulers).map_err(Failure::from)).transpose()
}

/// What `replay_json` returns: the report's JSON, the trace's mode, its counts by name.
type ReplayOutput = (String, String, Vec<(String, u64)>);

/// Replay a block trace once per scheduler (`headway replay`); returns the fio-shaped JSON
/// report, the trace's mode (`open`/`closed`) and its counts (records, bytes, contexts,
/// ignored and bad lines, wrapped requests, closed-mode window stalls).
#[pyfunction]
#[pyo3(signature = (trace, *, format, disk, schedulers, context, mode, settings, seed, queue_depth,
    drive_scheduler, write_cache, skip_bad, wrap, window, max_jobs, per_request=None))]
#[allow(clippy::too_many_arguments)]
fn replay_json(
    py: Python<'_>,
    trace: &str,
    format: &str,
    disk: &str,
    schedulers: Vec<String>,
    context: &str,
    mode: Option<&str>,
    settings: Vec<(String, String)>,
    seed: u64,
    queue_depth: u32,
    drive_scheduler: &str,
    write_cache: &str,
    skip_bad: bool,
    wrap: bool,
    window: Option<usize>,
    max_jobs: Option<usize>,
    per_request: Option<&str>,
) -> PyResult<ReplayOutput> {
    use headway_sim::trace::{feed, Format, Mode, ReplayConfig};
    let window = window.unwrap_or(feed::DEFAULT_WINDOW);
    let max_jobs = max_jobs.unwrap_or(feed::DEFAULT_MAX_JOBS);
    let cfg = (|| -> Result<ReplayConfig, Failure> {
        let format: Format = format.parse().map_err(|e| Failure::Setting(format!("format: {e}")))?;
        let mode = mode
            .map(|m| m.parse::<Mode>().map_err(|e| Failure::Setting(format!("mode: {e}"))))
            .transpose()?;
        if window < 1 {
            return Err(Failure::Setting("window must be at least 1".into()));
        }
        // a DiskSim trace on a DiskSim parameter file: the file's trace maps and devices
        let system = match format {
            Format::Disksim => headway_sim::trace::disksim::on_parameter_file(disk)?,
            _ => None,
        };
        let (drive, array, devices, routing, driver_queue) = match system {
            Some(s) => (s.disk, s.array, s.devices, s.routing, s.driver_queue),
            None => (resolve_disk(disk)?, None, Vec::new(), None, Vec::new()),
        };
        let mut run = RunSpec {
            context: parse_context(context, false)?,
            settings: parse_settings(&settings)?,
            seed,
            drive: drive_config(queue_depth, drive_scheduler, write_cache)?,
            array,
            devices,
            ..RunSpec::new(drive).with_schedulers(&schedulers)
        };
        run.take_driver_queue(&driver_queue);
        Ok(ReplayConfig {
            path: trace.into(),
            format,
            run,
            routing,
            mode,
            options: feed::FeedOptions {
                window,
                wrap,
                skip_bad,
                max_jobs,
                absolute_times: format.keeps_times(),
            },
        })
    })()
    .map_err(|f| f.into_py(py))?;
    let mut csv = request_csv(per_request, &cfg.run.schedulers).map_err(|f| f.into_py(py))?;
    let (report, summary) = py
        .detach(|| match csv.as_mut() {
            None => headway_sim::trace::replay(&cfg, |_, _| {}),
            Some(c) => headway_sim::trace::replay_logged(&cfg, |_, _| {}, |run, r| c.record(run, r)),
        })
        .map_err(|e| Failure::from(e).into_py(py))?;
    if let Some(c) = csv {
        c.finish().map_err(|e| Failure::from(e).into_py(py))?;
    }
    let s = &summary.stats;
    let counts = [
        ("records", s.records),
        ("bytes", s.bytes),
        ("flushes", s.flushes),
        ("contexts", s.contexts),
        ("ignored", s.ignored),
        ("bad", s.bad),
        ("wrapped", s.wrapped),
        ("window_stalls", s.window_stalls),
        ("window_stall_ns", s.window_stall_ns),
        ("peak_buffered", s.peak_buffered),
    ];
    Ok((report.to_json(), summary.mode.clone(), counts.iter().map(|(k, v)| (k.to_string(), *v)).collect()))
}

/// Score a drive against a DiskSim validation trace (`headway validate PARV TRACE`):
/// the JSON `--json` writes and the CSV `--per-request` writes.
#[pyfunction]
fn validate_json(py: Python<'_>, parv: &str, trace: &str) -> PyResult<(String, String)> {
    let spec = resolve_disk(parv).map_err(|f| f.into_py(py))?;
    let score = py
        .detach(|| headway_validate::score_spec(&spec, std::path::Path::new(trace)))
        .map_err(|e| Failure::from(e).into_py(py))?;
    Ok((score.to_json(), score.per_request_csv()))
}

/// The `NAME.parv` + `NAME.trace` pairs of a directory (`headway validate DIR`).
#[pyfunction]
fn validate_suite(py: Python<'_>, dir: &str) -> PyResult<Vec<(String, String)>> {
    let pairs =
        headway_validate::suite(std::path::Path::new(dir)).map_err(|e| Failure::from(e).into_py(py))?;
    Ok(pairs.into_iter().map(|(p, t)| (p.display().to_string(), t.display().to_string())).collect())
}

/// Run the `headway` command line with `argv` (program name first); returns its exit
/// status. What the console script calls: the same program as the cargo-built binary.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| headway_command::status(argv))
}

fn load_sweep(path: &str) -> Result<headway_sim::sweep::Sweep, Failure> {
    headway_sim::sweep::Sweep::load(std::path::Path::new(path)).map_err(|e| Failure::Setting(e.to_string()))
}

/// A sweep file's plan: (CSV header line, number of points, the table's default path).
/// Raises `SettingError` (`file:line: ...`) for a bad sweep file.
#[pyfunction]
fn sweep_plan(py: Python<'_>, path: &str) -> PyResult<(String, usize, String)> {
    let s = load_sweep(path).map_err(|f| f.into_py(py))?;
    Ok((s.header(), s.len(), s.out.display().to_string()))
}

/// Run points `indices` of a sweep file; each point's CSV rows (the Dask engine's task).
#[pyfunction]
fn sweep_points(py: Python<'_>, path: &str, indices: Vec<usize>) -> PyResult<Vec<String>> {
    let s = load_sweep(path).map_err(|f| f.into_py(py))?;
    if let Some(&i) = indices.iter().find(|&&i| i >= s.len()) {
        return Err(
            Failure::Setting(format!("sweep point {i}: the sweep has {} points", s.len())).into_py(py)
        );
    }
    py.detach(|| indices.iter().map(|&i| s.run_point(i).map_err(|e| (i, e))).collect::<Result<Vec<_>, _>>())
        .map_err(|(_, e)| Failure::from(e).into_py(py))
}

/// Run a whole sweep on `threads` local threads: the CSV table (the local engine).
#[pyfunction]
fn sweep_local(py: Python<'_>, path: &str, threads: usize) -> PyResult<String> {
    let s = load_sweep(path).map_err(|f| f.into_py(py))?;
    py.detach(|| s.run_local(threads, &|| {})).map_err(|(_, e)| Failure::from(e).into_py(py))
}

/// Built-in drive model names, scheduler names.
#[pyfunction]
fn disk_names() -> Vec<String> {
    headway_disk::builtin_names().iter().map(|s| s.to_string()).collect()
}

#[pyfunction]
fn scheduler_names() -> Vec<String> {
    headway_sched::scheduler_names()
}

/// The tunable table as `headway tunables` prints it: (name, unit, default, read by, doc).
#[pyfunction]
fn tunables() -> Vec<(String, String, String, String, String)> {
    let row = |t: &headway_sched::params::Tunable, readers: String| {
        (t.name.to_string(), t.unit.to_string(), t.default_text(), readers, t.doc.to_string())
    };
    let scheds = headway_sched::tunables().into_iter().map(|t| row(&t, headway_sched::registry::readers(&t)));
    let host = headway_sim::host::TUNABLES.iter().map(|t| row(t, "page cache".to_string()));
    scheds.chain(host).collect()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(replay_json, m)?)?;
    m.add_function(wrap_pyfunction!(validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(validate_suite, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_plan, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_points, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_local, m)?)?;
    m.add_function(wrap_pyfunction!(disk_names, m)?)?;
    m.add_function(wrap_pyfunction!(tunables, m)?)?;
    m.add("DEFAULT_SCHEDULERS", headway_sim::DEFAULT_SCHEDULERS.to_vec())?;
    m.add_function(wrap_pyfunction!(scheduler_names, m)?)?;
    m.add("DEFAULT_DISK", headway_disk::DEFAULT)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

//! `headway simulate`: a job file run once per scheduler, reported as headway's table and
//! JSON, and as fio's own output (`--output-format`, `--output`) and logs.
//!
//! fio's output with several schedulers: `--output FILE` writes one file per scheduler,
//! `FILE.SCHEDULER` (`:` written `-`), each the document fio would print for that run; on
//! standard output, JSON formats come as one JSON array of the runs' documents (each names
//! its run under `"headway"`), and other formats need `--output` (their documents could not
//! be told apart).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};

use headway_sim::fio_out::{self, FioCollector, Format};
use headway_sim::iolog_out::IologOut;
use headway_sim::request_csv::RequestCsv;
use headway_sim::{fio, simulate, SimConfig};

use crate::run_args::RunArgs;
use crate::{is_stdout, reproduce, with_progress, write_output};

pub(crate) struct Args {
    pub jobfile: Option<PathBuf>,
    pub run: RunArgs,
    pub json: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    pub per_request: Option<PathBuf>,
    pub quiet: bool,
    pub output_format: Option<String>,
    pub output: Option<PathBuf>,
    pub fio_args: Vec<String>,
}

pub(crate) fn run(a: Args) -> Result<()> {
    reproduce::check_plot_path(a.plot.as_deref())?;
    if let Some(path) = a.jobfile.clone().filter(|p| headway_disk::is_parameter_file(&p.to_string_lossy())) {
        return run_synthetic(a, &path);
    }
    let named = !a.run.scheduler.is_empty();
    let mut run = a.run.spec()?;
    let jobfile = match (a.jobfile, a.fio_args.is_empty()) {
        (Some(_), false) => bail!("give a job file or fio options after `--`, not both"),
        (Some(path), true) => fio::parse_file(&path)?,
        (None, _) => fio::parse_args(&a.fio_args)?,
    };
    // `ioscheduler=` in the job file, unless the command line names the schedulers
    if let Some(name) = jobfile.ioscheduler().map_err(anyhow::Error::msg)? {
        if !named {
            run.schedulers = vec![name.to_string()];
        }
    }
    let formats = match (&a.output_format, &a.output) {
        (Some(f), _) => fio_out::parse_formats(f).map_err(|e| anyhow::anyhow!("--output-format: {e}"))?,
        (None, Some(_)) => vec![Format::Normal],
        (None, None) => Vec::new(),
    };
    let fio_to = a.output.clone().unwrap_or_else(|| PathBuf::from("-"));
    let several = run.schedulers.len() > 1;
    if !formats.is_empty() && several && is_stdout(&fio_to) && formats.iter().any(|f| !is_json(*f)) {
        bail!(
            "{} schedulers: fio's normal and terse output of several runs go to files: give \
             --output FILE (one FILE.SCHEDULER per run) or one --scheduler",
            run.schedulers.len()
        );
    }
    let cfg = SimConfig { jobfile, run };
    let mut iolog = IologOut::for_jobs(&cfg.jobfile, &cfg.run.schedulers);
    let wants_logs = cfg.jobfile.jobs.iter().any(|j| j.report.logs.any());
    let mut fio = (!formats.is_empty() || wants_logs)
        .then(|| FioCollector::new(&cfg.jobfile, &cfg.run.schedulers).with_logs());
    let logged = a.per_request.is_some() || iolog.is_some() || fio.is_some();
    let report = if !logged {
        with_progress(cfg.run.schedulers.len(), |progress| simulate(&cfg, progress))?
    } else {
        let mut csv = match &a.per_request {
            Some(p) => Some(RequestCsv::create(p, &cfg.run.schedulers)?),
            None => None,
        };
        let report = with_progress(cfg.run.schedulers.len(), |progress| {
            headway_sim::simulate_logged(&cfg, progress, |run, r| {
                if let Some(c) = csv.as_mut() {
                    c.record(run, r);
                }
                if let Some(l) = iolog.as_mut() {
                    l.record(run, r);
                }
                if let Some(f) = fio.as_mut() {
                    f.record(run, r);
                }
            })
        })?;
        if let Some(c) = csv {
            c.finish()?;
        }
        report
    };
    if let Some(log) = iolog {
        for path in log.finish()? {
            eprintln!("write_iolog: wrote {}", path.display());
        }
    }
    if let Some(fio) = fio {
        let (runs, logs) = fio.finish(&report)?;
        if !logs.is_empty() {
            eprintln!(
                "fio logs: wrote {}",
                logs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            );
        }
        if !formats.is_empty() {
            let docs: Vec<String> = runs
                .iter()
                .zip(&report.runs)
                .map(|(stats, r)| fio_out::render(stats, &cfg.jobfile, &r.disk, &formats))
                .collect();
            write_fio(&fio_to, &cfg.run.schedulers, &docs)?;
        }
    }
    if let Some(path) = &a.json {
        write_output(path, report.to_json())?;
    }
    if let Some(path) = a.plot {
        let title = cfg.jobfile.path.clone();
        reproduce::plot(&path, &headway_sim::reproduce::Outcome::of_report(&title, &report))?;
    }
    // JSON or fio's output on standard output stands alone: no table after it
    let stdout_taken =
        a.json.as_deref().is_some_and(is_stdout) || (!formats.is_empty() && is_stdout(&fio_to));
    if !a.quiet && !stdout_taken {
        print!("{}", report.table());
    }
    Ok(())
}

/// `headway simulate FILE.parv`: DiskSim's synthetic workload of the file
/// (`disksim_synthio`) on the device its generators address, or on the several devices
/// they address, each on its own (`--disk` other than the default names one device for
/// all), reported as a job file's runs are. Without `--scheduler` the requests are ordered
/// by the file's own driver queue (`disksim`, set from its `disksim_iodriver`); a
/// `disksim` the command line names takes the file's settings too, under any `--set`.
fn run_synthetic(a: Args, path: &Path) -> Result<()> {
    if !a.fio_args.is_empty() || a.output_format.is_some() || a.output.is_some() {
        bail!("{}: a DiskSim synthetic workload takes no fio options or fio output", path.display());
    }
    let doc = headway_disk::parv::syntax::parse_file(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    let Some(spec) = headway_sim::synthio::SynthSpec::from_document(&doc)? else {
        bail!(
            "{}: no `disksim_synthio Synthio` block: a DiskSim file as the job file is a synthetic workload",
            path.display()
        );
    };
    let mut args = a.run;
    let mut devices = Vec::new();
    if args.disk == headway_disk::DEFAULT {
        // each name as DiskSim maps it: a device, or the array its number selects
        let targets: Vec<String> =
            spec.device_names.iter().map(|n| headway_disk::parv::request_destination(&doc, n)).collect();
        args.disk = format!("{}#{}", path.display(), targets[0]);
        if targets.len() > 1 {
            // several devices, each on its own: a drive or an array (the file read once)
            let names: Vec<&str> = targets.iter().map(String::as_str).collect();
            let systems = headway_disk::parv::import_systems(path, &names)
                .with_context(|| format!("importing {}", path.display()))?;
            devices.extend(systems.into_iter().map(|(disk, array)| headway_sim::Device { disk, array }));
        }
    }
    let named = !args.scheduler.is_empty();
    let mut run = args.spec()?;
    if !named {
        // the experiment's own driver queue
        run.schedulers = vec!["disksim".to_string()];
    }
    run.take_driver_queue(
        &headway_disk::parv::driver_queue_settings(&doc).map_err(|e| anyhow::anyhow!("{e}"))?,
    );
    if !devices.is_empty() {
        if args.array.is_some() {
            bail!("{}: --array with generators over several devices", path.display());
        }
        // (the first device's array, if it is one, is in `devices`)
        run.array = None;
        run.devices = devices;
    }
    let mut csv = match &a.per_request {
        Some(p) => Some(RequestCsv::create(p, &run.schedulers)?),
        None => None,
    };
    let report = with_progress(run.schedulers.len(), |progress| {
        let mut log = |i: usize, r: &headway_sim::engine::RequestRecord<'_>| {
            if let Some(c) = csv.as_mut() {
                c.record(i, r);
            }
        };
        headway_sim::simulate_synthetic(&spec, &run, progress, Some(&mut log))
    })?;
    if let Some(c) = csv {
        c.finish()?;
    }
    if let Some(p) = &a.json {
        write_output(p, report.to_json())?;
    }
    if let Some(p) = a.plot {
        let title = path.display().to_string();
        reproduce::plot(&p, &headway_sim::reproduce::Outcome::of_report(&title, &report))?;
    }
    if !a.quiet && !a.json.as_deref().is_some_and(is_stdout) {
        print!("{}", report.table());
    }
    Ok(())
}

fn is_json(f: Format) -> bool {
    matches!(f, Format::Json | Format::JsonPlus)
}

/// The runs' documents to `to`: one file (or standard output) for one run; with several,
/// `TO.SCHEDULER` files, or a JSON array on standard output.
fn write_fio(to: &Path, schedulers: &[String], docs: &[String]) -> Result<()> {
    if docs.len() == 1 {
        return write_output(to, &docs[0]);
    }
    if is_stdout(to) {
        let body: Vec<&str> = docs.iter().map(|d| d.trim_end()).collect();
        return write_output(to, format!("[\n{}\n]\n", body.join(",\n")));
    }
    for (name, doc) in schedulers.iter().zip(docs) {
        let path = headway_sim::per_run_path(to, name, true);
        write_output(&path, doc)?;
        eprintln!("fio output: wrote {}", path.display());
    }
    Ok(())
}

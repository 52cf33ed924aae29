//! `headway lab run SPEC`: real Linux guests on `headway serve` (the work is in
//! headway-lab). This module parses the flags, prints progress and the comparison table,
//! and writes the JSON.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use headway_disk::DriveConfig;
use headway_lab::served::compare;
use headway_lab::spec::{self, Spec};
use headway_lab::{run_spec, LabOptions, LabReport};
use headway_sim::trace::{feed, replay_traced, Format, Mode, ReplayConfig};
use headway_sim::{ContextMode, RunSpec};

#[derive(clap::Args)]
pub struct LabArgs {
    #[command(subcommand)]
    cmd: LabCmd,
}

#[derive(clap::Subcommand)]
enum LabCmd {
    /// Boot a Linux guest under QEMU per point of a lab spec (TOML), its disks served by
    /// `headway serve` on the emulated drive, run the spec's workload inside, collect results.
    Run {
        /// The lab spec (TOML; see the README's "The lab" section)
        spec: PathBuf,
        /// Directory for each point's console log, traces and guest results
        /// (default: out/lab/NAME)
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write the results (the `headway simulate` JSON shape plus `lab`) here
        #[arg(long)]
        json: Option<PathBuf>,
        /// Draw throughput per point to FILE.svg or FILE.png
        #[arg(long, value_name = "FILE")]
        plot: Option<PathBuf>,
        /// Keep each point's export files (sparse files as large as the export)
        #[arg(long)]
        keep_disks: bool,
        /// Guest kernels and tools images are kept here (default: $HEADWAY_LAB_CACHE, else
        /// ~/.cache/headway/lab)
        #[arg(long)]
        cache: Option<PathBuf>,
    },
    /// Power cuts: `headway serve` inside a guest whose disk QEMU caches (write-back), a
    /// writer on the host (three connections, FUA and FLUSH), and QEMU killed at a random
    /// moment; every acknowledged durable write must be on the disk after. Exits non-zero
    /// when one is lost, or when the control (the sync removed) loses nothing
    PowerCut {
        /// Trials per backend
        #[arg(long, default_value_t = 15)]
        trials: u32,
        /// Backends: file, emulated-write-back (comma-separated)
        #[arg(long, default_value = "file,emulated-write-back", value_delimiter = ',')]
        backend: Vec<String>,
        /// Trials with the server's sync removed, on the first backend: they must lose writes
        #[arg(long, default_value_t = 3)]
        control_trials: u32,
        /// Seed of the writer's choices and the cut times
        #[arg(long, default_value_t = 39)]
        seed: u64,
        /// The headway binary the guest runs (default: this one)
        #[arg(long)]
        headway: Option<PathBuf>,
        /// Each trial's console log goes under DIR/TRIAL/ (default: out/lab/power-cut)
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Write the trials as JSON here
        #[arg(long)]
        json: Option<PathBuf>,
        /// Guest kernels and tools images are kept here (default: $HEADWAY_LAB_CACHE, else
        /// ~/.cache/headway/lab)
        #[arg(long)]
        cache: Option<PathBuf>,
    },
}

pub fn run(a: LabArgs) -> Result<()> {
    match a.cmd {
        LabCmd::PowerCut { trials, backend, control_trials, seed, headway, out, json, cache } => {
            power_cut(trials, &backend, control_trials, seed, headway, out, json, cache)
        }
        LabCmd::Run { spec, out, json, plot, keep_disks, cache } => {
            super::reproduce::check_plot_path(plot.as_deref())?;
            let spec = Spec::load(&spec)?;
            let out = out.unwrap_or_else(|| PathBuf::from("out/lab").join(&spec.name));
            let mut opts = LabOptions::new(out);
            opts.cache = cache.unwrap_or_else(headway_lab::image::cache_dir);
            opts.keep_disks = keep_disks;
            // SIGINT/SIGTERM: the guest is killed, servers stopped, sockets removed
            opts.interrupt =
                headway_nbd::signal::shutdown_on_signals().context("installing signal handling")?;
            let mut report = run_spec(&spec, &opts, &mut |line| eprintln!("lab: {line}"))?;
            eprintln!("lab: replaying each point's trace in the simulator (open and closed loop)");
            replay_checks(&spec, &mut report)?;
            let json = json.unwrap_or_else(|| opts.out.join("results.json"));
            super::write_output(&json, serde_json::to_vec_pretty(&report)?)?;
            if let Some(path) = plot {
                super::reproduce::plot(&path, &plot_outcome(&report))?;
            }
            print!("{}", table(&report));
            eprintln!("lab: results in {} (per point: {}/points/)", json.display(), opts.out.display());
            Ok(())
        }
    }
}

/// Replay each server's request log in the simulator on the same drive model, with the
/// same scheduler, open loop (recorded arrival times) and closed loop (each connection a
/// synchronous issuer), and set the emulated drive's service times beside the simulated.
pub fn replay_checks(spec: &Spec, report: &mut LabReport) -> Result<()> {
    let hw = &spec.headway;
    let disk = headway_disk::resolve(&hw.disk).context("the spec's disk model")?;
    let settings = hw.settings();
    // the emulated drive of `headway serve`: the model with the spec's queue depth and cache
    let drive = DriveConfig {
        write_cache: hw.write_cache.model(),
        queue_depth: hw.queue_depth,
        ..DriveConfig::default()
    };
    for run in &mut report.runs {
        for srv in &mut run.server {
            let trace = Path::new(&srv.trace);
            for (mode, name) in [(Mode::Open, "open"), (Mode::Closed, "closed")] {
                let cfg = ReplayConfig {
                    path: trace.to_path_buf(),
                    format: Format::Blkparse,
                    run: RunSpec {
                        context: match hw.context {
                            spec::Context::Connection => ContextMode::Process,
                            spec::Context::None => ContextMode::None,
                        },
                        settings: settings.clone(),
                        drive,
                        ..RunSpec::new(disk.clone()).with_schedulers(&[&run.scheduler])
                    },
                    mode: Some(mode),
                    routing: None,
                    // the trace's clock started with the emulated drive's
                    options: feed::FeedOptions { absolute_times: true, ..Default::default() },
                };
                let (rep, _) = replay_traced(&cfg, headway_sched::Duration(u64::MAX), usize::MAX, |_, _| {})
                    .with_context(|| format!("replaying {}", trace.display()))?;
                let r = &rep.runs[0];
                let service: Vec<u64> = r
                    .head_trace
                    .as_ref()
                    .map(|h| h.service_ns.iter().copied().filter(|&s| s > 0).collect())
                    .unwrap_or_default();
                let ios: u64 = r.jobs.iter().map(|j| j.read.total_ios + j.write.total_ios).sum();
                let response = r
                    .jobs
                    .iter()
                    .map(|j| {
                        j.read.clat_ns.mean * j.read.total_ios as f64
                            + j.write.clat_ns.mean * j.write.total_ios as f64
                    })
                    .sum::<f64>()
                    / ios.max(1) as f64;
                srv.replay.push(compare(name, &srv.served, &service, response));
            }
        }
    }
    Ok(())
}

/// Throughput per point, as `headway simulate --plot` draws runs.
fn plot_outcome(r: &LabReport) -> headway_sim::reproduce::Outcome {
    let mut o = headway_sim::reproduce::Outcome::of_report(&r.spec, &headway_sim::Report::new(Vec::new()));
    o.x_label = "point (host scheduler, guest scheduler, file system, repeat)".into();
    o.categories = r
        .runs
        .iter()
        .map(|run| {
            format!("{} / {} / {} / r{}", run.scheduler, run.lab.guest_scheduler, run.lab.fs, run.lab.repeat)
        })
        .collect();
    o.series[0].values = r.runs.iter().map(|run| run.aggregate.bw_bytes as f64 / 1e6).collect();
    o
}

/// One row per point, as `headway simulate` prints its runs.
pub fn table(r: &LabReport) -> String {
    let mut s = format!(
        "{:<18} {:<12} {:<8} {:>8} {:>7} {:>8} {:>8} {:>6} {:>7} {:>5}\n",
        "scheduler", "guest", "fs", "MB/s", "vs 1st", "IOPS", "clat ms", "util", "wall s", "accel"
    );
    let first = r.runs.first().map(|r| r.aggregate.bw_bytes).unwrap_or(0);
    for run in &r.runs {
        let bw = run.aggregate.bw_bytes;
        let ratio = if first > 0 { bw as f64 / first as f64 } else { 0.0 };
        let ios: u64 = run.jobs.iter().map(|j| j.read.total_ios + j.write.total_ios).sum();
        let clat = if ios > 0 {
            run.jobs
                .iter()
                .map(|j| {
                    j.read.clat_ns.mean * j.read.total_ios as f64
                        + j.write.clat_ns.mean * j.write.total_ios as f64
                })
                .sum::<f64>()
                / ios as f64
                / 1e6
        } else {
            f64::NAN
        };
        s += &format!(
            "{:<18} {:<12} {:<8} {:>8.2} {:>6.2}x {:>8.0} {:>8.3} {:>5.0}% {:>7.1} {:>5}\n",
            run.scheduler,
            run.lab.guest_scheduler,
            run.lab.fs,
            bw as f64 / 1e6,
            ratio,
            run.aggregate.iops,
            clat,
            run.device.utilization * 100.0,
            run.lab.wall_s,
            run.lab.accel
        );
    }
    if !r.repeats.is_empty() {
        s += "\nrepeats: throughput mean, lowest, highest, spread = (highest - lowest) / mean\n";
        for g in &r.repeats {
            s += &format!(
                "{:<18} {:<12} {:<8} {:>2} runs {:>8.2} {:>8.2} {:>8.2} MB/s {:>6.1}%\n",
                g.scheduler,
                g.guest_scheduler,
                g.fs,
                g.repeats,
                g.mean_bw_bytes / 1e6,
                g.min_bw_bytes as f64 / 1e6,
                g.max_bw_bytes as f64 / 1e6,
                g.spread * 100.0
            );
        }
    }
    if r.runs.iter().any(|run| run.server.iter().any(|srv| !srv.replay.is_empty())) {
        s += "\nmean service time of the drive's commands, emulated, and the server's trace replayed in\n\
              the simulator (same model and scheduler; KS: largest gap between the two CDFs; busy:\n\
              the drive's summed service time, which merging differently does not change):\n";
        s += &format!(
            "{:<28} {:>4} {:>9} {:>9} {:>7} {:>5} {:>7} {:>9} {:>7} {:>5} {:>7}\n",
            "point", "disk", "emul ms", "open ms", "diff", "KS", "busy", "closed ms", "diff", "KS", "busy"
        );
        for run in &r.runs {
            let label =
                format!("{}.{}.{}.r{}", run.scheduler, run.lab.guest_scheduler, run.lab.fs, run.lab.repeat);
            for (i, srv) in run.server.iter().enumerate() {
                let emulated = srv.replay.first().map_or(0.0, |c| c.mean_service_ns_emulated / 1e6);
                s += &format!("{label:<28} {i:>4} {emulated:>9.3}");
                for c in &srv.replay {
                    s += &format!(
                        " {:>9.3} {:>+6.1}% {:>5.2} {:>+6.1}%",
                        c.mean_service_ns_simulated / 1e6,
                        c.mean_service_diff * 100.0,
                        c.service_cdf_distance,
                        c.busy_diff * 100.0
                    );
                }
                s += "\n";
            }
        }
    }
    s
}

/// `headway lab power-cut`: the trials, a line each, and a summary; an error when a
/// durable write was lost, or the control lost none.
#[allow(clippy::too_many_arguments)]
fn power_cut(
    trials: u32,
    backends: &[String],
    control_trials: u32,
    seed: u64,
    headway: Option<PathBuf>,
    out: Option<PathBuf>,
    json: Option<PathBuf>,
    cache: Option<PathBuf>,
) -> Result<()> {
    use headway_lab::powercut::{run, Backend, PowerCutConfig};
    let backends = backends
        .iter()
        .map(|b| match b.as_str() {
            "file" => Ok(Backend::File),
            "emulated-write-back" => Ok(Backend::EmulatedWriteBack),
            _ => Err(anyhow::anyhow!("--backend {b}: known: file, emulated-write-back")),
        })
        .collect::<Result<Vec<_>>>()?;
    let cfg = PowerCutConfig {
        headway: match headway {
            Some(h) => h,
            None => std::env::current_exe().context("the headway binary for the guest")?,
        },
        trials,
        backends,
        control_trials,
        seed,
        out: out.unwrap_or_else(|| PathBuf::from("out/lab/power-cut")),
        cache: cache.unwrap_or_else(headway_lab::image::cache_dir),
        interrupt: headway_nbd::signal::shutdown_on_signals().context("installing signal handling")?,
    };
    let done = run(&cfg, &mut |line| eprintln!("power-cut: {line}"))?;
    if let Some(path) = json {
        super::write_output(&path, serde_json::to_vec_pretty(&done)?)?;
    }
    let (real, control): (Vec<_>, Vec<_>) = done.iter().partition(|t| !t.control);
    let sum = |ts: &[&headway_lab::powercut::Trial], f: fn(&headway_lab::powercut::Trial) -> usize| {
        ts.iter().map(|t| f(t)).sum::<usize>()
    };
    println!(
        "{} power cuts: {} writes sent, {} acknowledged, {} acknowledged durable: {} lost, {} foreign sectors, {} error replies",
        real.len(),
        sum(&real, |t| t.writes),
        sum(&real, |t| t.acked),
        sum(&real, |t| t.durable),
        sum(&real, |t| t.lost),
        sum(&real, |t| t.foreign),
        sum(&real, |t| t.errors),
    );
    if !control.is_empty() {
        println!(
            "{} control cuts (no sync): {} acknowledged durable, {} lost",
            control.len(),
            sum(&control, |t| t.durable),
            sum(&control, |t| t.lost),
        );
    }
    let bad = sum(&real, |t| t.lost) + sum(&real, |t| t.foreign) + sum(&real, |t| t.errors);
    if bad > 0 {
        anyhow::bail!(
            "acknowledged durable writes were lost or damaged at a power cut (see the trials above)"
        );
    }
    if sum(&real, |t| t.durable) == 0 {
        anyhow::bail!("no write became durable before a cut: the trials prove nothing");
    }
    if !control.is_empty() && sum(&control, |t| t.lost) == 0 {
        anyhow::bail!("the control (sync removed) lost no write: these trials could not fail");
    }
    Ok(())
}

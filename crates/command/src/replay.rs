//! `headway replay`: stream a block trace through the simulator, once per scheduler, and
//! print the same comparison (and `--json`) as `headway simulate`. The work is in
//! `headway_sim::trace`.

use std::path::PathBuf;

use anyhow::Result;

use headway_sim::trace::{feed, replay, replay_logged, Format, Mode, ReplayConfig};

use super::with_progress;
use crate::run_args::RunArgs;

/// Flags of `headway replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// Trace file (`-`: standard input, with one scheduler)
    trace: PathBuf,
    /// blkparse | blktrace (binary NAME.blktrace.N files, without blkparse) | iolog (fio iolog
    /// v2/v3) | msr | spc (umass) | disksim | fiu
    #[arg(long, value_name = "F")]
    format: String,
    #[command(flatten)]
    run: RunArgs,
    /// open: requests arrive at their recorded times; closed: each context is a synchronous
    /// issuer with the recorded think times (default: open; closed for fio iolog v2)
    #[arg(long, value_name = "open|closed")]
    mode: Option<String>,
    /// Count and skip malformed lines instead of stopping at the first
    #[arg(long)]
    skip_bad: bool,
    /// Fold requests past the end of the disk back onto it instead of stopping
    #[arg(long)]
    wrap: bool,
    /// Closed mode: records read ahead at most (bounds memory; see the README)
    #[arg(long, value_name = "N", default_value_t = feed::DEFAULT_WINDOW)]
    window: usize,
    /// Keep the trace's times as they are instead of starting at its first request (a trace
    /// of `headway serve --trace` then replays with the emulated drive's rotational phase)
    #[arg(long, conflicts_with = "relative_times")]
    absolute_times: bool,
    /// Start at the trace's first request even for a DiskSim trace (whose times are kept
    /// by default: DiskSim's clock starts at the trace's time 0, and so does the drive's
    /// rotational phase)
    #[arg(long)]
    relative_times: bool,
    /// Contexts reported as jobs of their own; the rest share a job named `others`
    #[arg(long, value_name = "N", default_value_t = feed::DEFAULT_MAX_JOBS)]
    max_jobs: usize,
    /// Write fio-shaped JSON results here (as `headway simulate --json`; `-`: standard output,
    /// without the table)
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write every trace request as a CSV row to FILE (as `headway simulate --per-request`;
    /// `job` is the request's context), streamed as the runs complete them
    #[arg(long, value_name = "FILE")]
    per_request: Option<PathBuf>,
    /// Do not print the comparison table and the trace summary
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: ReplayArgs) -> Result<()> {
    let format: Format = a.format.parse().map_err(|e| anyhow::anyhow!("--format: {e}"))?;
    let mode = a
        .mode
        .as_deref()
        .map(|m| m.parse::<Mode>().map_err(|e| anyhow::anyhow!("--mode: {e}")))
        .transpose()?;
    anyhow::ensure!(a.window >= 1, "--window must be at least 1");
    // a DiskSim trace on a DiskSim parameter file: the file's trace maps and devices
    let (run, routing) = match format {
        Format::Disksim => a.run.disksim_trace_spec()?,
        _ => (a.run.trace_spec()?, None),
    };
    let cfg = ReplayConfig {
        path: a.trace,
        format,
        run,
        routing,
        mode,
        options: feed::FeedOptions {
            window: a.window,
            wrap: a.wrap,
            skip_bad: a.skip_bad,
            max_jobs: a.max_jobs,
            absolute_times: a.absolute_times || (format.keeps_times() && !a.relative_times),
        },
    };
    let (report, summary) = match &a.per_request {
        None => with_progress(cfg.run.schedulers.len(), |progress| replay(&cfg, progress))?,
        Some(path) => {
            let mut csv = headway_sim::request_csv::RequestCsv::create(path, &cfg.run.schedulers)?;
            let out = with_progress(cfg.run.schedulers.len(), |progress| {
                replay_logged(&cfg, progress, |run, r| csv.record(run, r))
            })?;
            csv.finish()?;
            out
        }
    };
    let to_stdout = a.json.as_deref().is_some_and(super::is_stdout);
    if let Some(path) = &a.json {
        super::write_output(path, report.to_json())?;
    }
    // JSON on standard output stands alone: no table or trace summary after it
    if !a.quiet && !to_stdout {
        print!("{}", report.table());
        let s = &summary.stats;
        let flushes = if s.flushes > 0 { format!(", {} cache flushes", s.flushes) } else { String::new() };
        println!(
            "trace: {} requests, {} bytes{flushes}, {} contexts, {} mode; {} lines ignored, {} bad lines skipped, {} requests wrapped",
            s.records, s.bytes, s.contexts, summary.mode, s.ignored, s.bad, s.wrapped
        );
        if s.window_stalls > 0 {
            println!(
                "closed mode: {} waits for the read-ahead window ({:.3} s in all; --window {} buffered at most {})",
                s.window_stalls,
                s.window_stall_ns as f64 * 1e-9,
                cfg.options.window,
                s.peak_buffered
            );
        }
    }
    Ok(())
}

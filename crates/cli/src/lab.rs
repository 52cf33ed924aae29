//! `headway lab run SPEC`: real Linux guests on `headway serve` (the work is in
//! headway-lab). This module parses the flags, prints progress and the comparison table,
//! and writes the JSON.

use std::path::PathBuf;

use anyhow::Result;

use headway_lab::{run_spec, LabOptions, LabReport, Spec};

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
        /// Keep each point's export files (sparse files as large as the export)
        #[arg(long)]
        keep_disks: bool,
        /// Guest kernels and tools images are kept here (default: $HEADWAY_LAB_CACHE, else
        /// ~/.cache/headway/lab)
        #[arg(long)]
        cache: Option<PathBuf>,
    },
}

pub fn run(a: LabArgs) -> Result<()> {
    match a.cmd {
        LabCmd::Run { spec, out, json, keep_disks, cache } => {
            let spec = Spec::load(&spec)?;
            let out = out.unwrap_or_else(|| PathBuf::from("out/lab").join(&spec.name));
            let opts =
                LabOptions { out, cache: cache.unwrap_or_else(headway_lab::image::cache_dir), keep_disks };
            let report = run_spec(&spec, &opts, &mut |line| eprintln!("lab: {line}"))?;
            let json = json.unwrap_or_else(|| opts.out.join("results.json"));
            super::write_output(&json, serde_json::to_vec_pretty(&report)?)?;
            print!("{}", table(&report));
            eprintln!("lab: results in {} (per point: {}/points/)", json.display(), opts.out.display());
            Ok(())
        }
    }
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
    s
}

//! `headway sweep SWEEP.toml`: a grid of simulations (headway-sim's `sweep` module does the
//! work), one CSV table, rows in grid order.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use headway_sim::sweep::Sweep;

#[derive(clap::Args)]
pub struct SweepArgs {
    /// The sweep file (TOML: `job`, `out`, `[grid]`, `[grid.set]`; see the README)
    sweep: PathBuf,
    /// Where the points run: local (this machine's cores) | dask (a Dask distributed
    /// cluster, through the Python package: `python -m headway sweep ... --engine dask`)
    #[arg(long, default_value = "local", value_parser = ["local", "dask"])]
    engine: String,
    /// The Dask scheduler's address (`tcp://HOST:PORT`), with `--engine dask`
    #[arg(long, value_name = "ADDR")]
    scheduler_address: Option<String>,
    /// Threads of the local engine (default: every core)
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Write the table here instead of the sweep file's `out`
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// No progress bar
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: SweepArgs) -> Result<()> {
    if a.engine == "dask" {
        bail!(
            "--engine dask needs the Python package (dask.distributed): run \
             `python -m headway sweep {} --engine dask{}` (or the `headway` command it installs)",
            a.sweep.display(),
            a.scheduler_address.as_deref().map(|s| format!(" --scheduler-address {s}")).unwrap_or_default()
        );
    }
    if a.scheduler_address.is_some() {
        bail!("--scheduler-address is for --engine dask");
    }
    let sweep = Sweep::load(&a.sweep)?;
    let threads = match a.threads {
        Some(0) => bail!("--threads 0: expected at least 1"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let bar = if a.quiet { ProgressBar::hidden() } else { ProgressBar::new(sweep.len() as u64) };
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} points, eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let table = sweep.run_local(threads, &|| bar.inc(1));
    bar.finish_and_clear();
    let table = table.map_err(|(i, e)| anyhow::anyhow!("point {i} ({}): {e}", sweep.values(i).join(", ")))?;
    let out = a.out.unwrap_or_else(|| sweep.out.clone());
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(&out, &table).with_context(|| format!("writing {}", out.display()))?;
    println!("{} points, {} rows: wrote {}", sweep.len(), table.lines().count() - 1, out.display());
    Ok(())
}

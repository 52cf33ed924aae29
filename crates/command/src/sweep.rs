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
    /// Also draw aggregate throughput per point, one bar per scheduler, to FILE.svg or
    /// FILE.png
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// No progress bar
    #[arg(long)]
    quiet: bool,
    /// Every point's starting values; a key of the sweep file's grid replaces its flag
    #[command(flatten)]
    run: crate::run_args::RunArgs,
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
    crate::reproduce::check_plot_path(a.plot.as_deref())?;
    let sweep = Sweep::load_with(&a.sweep, &a.run.spec()?)?;
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
    crate::write_output(&out, &table)?;
    println!("{} points, {} rows: wrote {}", sweep.len(), table.lines().count() - 1, out.display());
    if let Some(path) = a.plot {
        crate::reproduce::plot(&path, &outcome(&sweep, &table)?)?;
        println!("plotted {}", path.display());
    }
    Ok(())
}

/// Split one CSV line written by the sweep (fields quoted only when they must be).
fn fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// The plot of a sweep: one group per point of the other axes, one bar per scheduler, the
/// height its aggregate throughput (read + write bandwidth summed over jobs), MB/s.
fn outcome(sweep: &Sweep, table: &str) -> Result<headway_sim::reproduce::Outcome> {
    let mut lines = table.lines();
    let header = fields(lines.next().unwrap_or_default());
    let col = |name: &str| {
        header.iter().position(|h| h == name).ok_or_else(|| anyhow::anyhow!("no column `{name}`"))
    };
    let (pi, ri, wi) = (col("point")?, col("read_bw_bytes")?, col("write_bw_bytes")?);
    let mut bw = vec![0.0f64; sweep.len()];
    for line in lines {
        let f = fields(line);
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        if let Some(b) = bw.get_mut(num(pi) as usize) {
            *b += (num(ri) + num(wi)) / 1e6;
        }
    }
    let sched_axis =
        sweep.axes.iter().position(|a| a.name == "scheduler").context("a sweep has a scheduler axis")?;
    let schedulers = sweep.axes[sched_axis].values.clone();
    let mut categories: Vec<String> = Vec::new();
    let mut values = vec![Vec::new(); schedulers.len()];
    for (i, b) in bw.iter().enumerate() {
        let v = sweep.values(i);
        let label: Vec<&str> =
            v.iter().enumerate().filter(|(k, _)| *k != sched_axis).map(|(_, x)| *x).collect();
        let label = if label.is_empty() { "all".to_string() } else { label.join(" ") };
        if !categories.contains(&label) {
            categories.push(label.clone());
        }
        let s = schedulers.iter().position(|x| x == v[sched_axis]).expect("a grid value");
        let c = categories.iter().position(|x| *x == label).expect("just added");
        if values[s].len() <= c {
            values[s].resize(c + 1, f64::NAN);
        }
        values[s][c] = *b; // every other axis is in the label: one point per bar
    }
    let mut o = headway_sim::reproduce::Outcome::of_report(
        &sweep.path.display().to_string(),
        &headway_sim::Report::new(Vec::new()),
    );
    o.id = "sweep".into();
    let others: Vec<&str> = sweep
        .axes
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != sched_axis)
        .map(|(_, a)| a.name.as_str())
        .collect();
    o.x_label = if others.is_empty() { "point".into() } else { others.join(" / ") };
    o.y_label = "aggregate throughput, MB/s".into();
    o.categories = categories;
    o.series = schedulers
        .into_iter()
        .zip(values)
        .map(|(name, values)| headway_sim::reproduce::Series { name, values })
        .collect();
    Ok(o)
}

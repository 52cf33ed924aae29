//! `headway validate PARV TRACE [--json OUT] [--plot OUT.svg|OUT.png] [--per-request OUT]`
//! (or `headway validate DIR`): print, write and plot what headway-validate computes — the
//! replay of one of DiskSim's measured validation traces against a drive, scored with
//! DiskSim's demerit figure (see that crate for the replay and the score). `--plot` draws
//! both service-time CDFs on one chart (x: service time in ms, y: fraction of requests).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use headway_validate::Score;

/// `headway validate DIR`: every pair of the directory, one line each. A pair that fails
/// (a drive file headway cannot load, a malformed trace) is listed with its reason after
/// the table and the others are still scored; the command then fails, naming how many.
fn run_suite(dir: &Path, json: Option<&PathBuf>) -> Result<()> {
    let pairs = headway_validate::suite(dir)?;
    let mut values = Vec::new();
    let mut failures = Vec::new();
    // JSON on standard output stands alone: no table around it
    let table = !json.is_some_and(|p| crate::is_stdout(p));
    if table {
        println!(
            "{:<24} {:>8} {:>12} {:>14} {:>12} {:>12}",
            "drive", "requests", "demerit ms", "binned ms", "mean sim ms", "mean meas ms"
        );
    }
    for (parv, trace) in &pairs {
        let stem = parv.file_stem().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let s = match headway_validate::score(&parv.display().to_string(), trace) {
            Ok(s) => s,
            Err(e) => {
                failures.push((stem, format!("{:#}", anyhow::Error::from(e))));
                continue;
            }
        };
        if table {
            println!(
                "{:<24} {:>8} {:>12.6} {:>14.6} {:>12.3} {:>12.3}",
                stem, s.requests, s.demerit_ms, s.demerit_binned_ms, s.mean_simulated_ms, s.mean_measured_ms
            );
        }
        values.push(s.json_value());
    }
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&values).expect("plain values") + "\n";
        crate::write_output(path, text)?;
    }
    for (stem, why) in &failures {
        eprintln!("{stem}: not scored: {why}");
    }
    if !failures.is_empty() {
        bail!(
            "validate {}: {} of {} drives could not be scored (listed above)",
            dir.display(),
            failures.len(),
            pairs.len()
        );
    }
    Ok(())
}

/// The subcommand.
pub fn run(
    parv: &str,
    trace: Option<&Path>,
    json: Option<&PathBuf>,
    plot: Option<&Path>,
    per_request: Option<&Path>,
) -> Result<()> {
    crate::reproduce::check_plot_path(plot)?;
    if Path::new(parv).is_dir() {
        if let Some(t) = trace {
            bail!(
                "validate {parv} {}: a directory is scored against its own NAME.trace files; give no TRACE",
                t.display()
            );
        }
        if plot.is_some() || per_request.is_some() {
            bail!("validate {parv}: --plot and --per-request take one drive, not a directory");
        }
        return run_suite(Path::new(parv), json);
    }
    let Some(trace) = trace else {
        bail!("validate {parv}: TRACE is missing (or give a directory of NAME.parv + NAME.trace pairs)");
    };
    let s = headway_validate::score(parv, trace)?;
    // JSON on standard output stands alone: no table or notes around it
    let table = !json.is_some_and(|p| crate::is_stdout(p));
    if table {
        print!("{}", s.table());
    }
    if let Some(path) = json {
        crate::write_output(path, s.to_json())?;
    }
    if let Some(path) = per_request {
        std::fs::write(path, s.per_request_csv()).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = plot {
        crate::reproduce::render(path, &Cdfs(&s))?;
        if table {
            println!("plotted {}", path.display());
        }
    }
    Ok(())
}

/// The simulated and measured service-time CDFs of a score, as `--plot` draws them.
struct Cdfs<'a>(&'a Score);

impl crate::reproduce::Figure for Cdfs<'_> {
    fn draw<DB: plotters::prelude::DrawingBackend>(
        &self,
        root: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
        text: bool,
    ) -> Result<(), plotters::prelude::DrawingAreaErrorKind<DB::ErrorType>>
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        let s = self.0;
        let sorted = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            v
        };
        let (sim, real) = (sorted(&s.simulated_ms), sorted(&s.measured_ms));
        let top = sim.iter().chain(&real).copied().filter(|x| x.is_finite()).fold(0.0f64, f64::max).max(1e-3)
            * 1.05;
        root.fill(&WHITE)?;
        let caption = format!("{}: demerit {:.3} ms over {} requests", s.drive, s.demerit_ms, s.requests);
        let mut b = crate::reproduce::chart_on(root, &caption, text);
        let mut chart = b.build_cartesian_2d(0f64..top, 0f64..1f64)?;
        {
            let mut mesh = chart.configure_mesh();
            if text {
                mesh.x_desc("service time (ms)")
                    .y_desc("fraction of requests")
                    .label_style(("sans-serif", 14));
            } else {
                mesh.x_labels(0).y_labels(0);
            }
            mesh.draw()?;
        }
        let colours = crate::reproduce::COLOURS;
        for (j, (name, v)) in [("simulated (headway)", &sim), ("measured", &real)].into_iter().enumerate() {
            let colour = colours[j % colours.len()];
            let n = v.len() as f64;
            // a step per sample: (x_i, i/n) -> (x_i, (i+1)/n)
            let pts: Vec<(f64, f64)> = v
                .iter()
                .enumerate()
                .flat_map(|(i, &x)| [(x, i as f64 / n), (x, (i + 1) as f64 / n)])
                .collect();
            let drawn = chart.draw_series(std::iter::once(PathElement::new(pts, colour.stroke_width(2))))?;
            if text {
                drawn.label(name).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
                });
            }
        }
        if text {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(SeriesLabelPosition::LowerRight)
                .label_font(("sans-serif", 14))
                .draw()?;
        }
        Ok(())
    }
}

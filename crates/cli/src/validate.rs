//! `headway validate PARV TRACE [--json OUT] [--plot OUT.svg|OUT.png]`: replay one of DiskSim's measured validation
//! traces against a drive and score the simulated service times the way DiskSim does.
//!
//! ## The replay (as DiskSim 4.0's `validate` trace format drives it)
//! Trace lines: `R|W Hit|Miss blkno bcount service_us next_interarrival_us` (blkno and
//! bcount in 512-byte sectors). DiskSim reads request `i+1` when request `i` completes and
//! lets it arrive `next_interarrival(i)` later: the trace is a *closed* loop, one request
//! outstanding, measured service time = completion - arrival. The first request arrives at
//! time 0 on an idle drive. The Hit/Miss column is only compared with what the model did
//! (a diagnostic); it never steers the simulation.
//!
//! ## The score
//! The Ruemmler-Wilkes demerit figure: the RMS horizontal distance, in ms, between the CDFs
//! of simulated and measured service times, sampled at 10,000 evenly spaced quantiles
//! (`(k + 0.5) / 10,000`), each quantile the exact per-request value at that rank of the
//! sorted samples (DiskSim bins its distributions first; headway does not). The report
//! (and the JSON, `demerit_binned_ms`) also gives the figure through DiskSim's own binned
//! estimator (`demerit_binned.rs`), the like-for-like comparison with DiskSim's published
//! numbers.
//!
//! ## The report
//! A table of demerit and mean simulated/measured service time over all requests, reads,
//! writes and each class of the trace's (direction, Hit/Miss column) pairs (where the error
//! comes from); the reads again by the previous request's direction and by whether they
//! start on the cylinder where the previous request ended (`R after W, same cyl`, ...: the
//! trace's own positions, whatever the model's read-ahead did to the arm); the agreement of
//! the model's cache hits with the column, and with `--plot` both CDFs on one chart (x:
//! service time in ms, y: fraction of requests).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use headway_disk::{DiskSpec, Hdd};
use headway_sched::{Dir, Duration, Time};
use headway_sim::trace::TraceError;

/// Quantiles the demerit samples.
pub const QUANTILES: usize = 10_000;

/// One request of a validation trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRequest {
    pub dir: Dir,
    /// The trace says the drive's cache served it.
    pub hit: bool,
    /// The trace's second column as written (`Hit`, `Miss`, or another label such as the
    /// HP C2247A trace's `Doub`/`Trip`): the per-class breakdown groups by it.
    pub class: String,
    pub sector: u64,
    pub sectors: u32,
    /// Measured service time.
    pub service: Duration,
    /// From this request's completion to the next request's arrival.
    pub next_interarrival: Duration,
}

/// Parse a validation trace; errors name the line (a [`TraceError`], as `headway replay`'s
/// parsers give them).
pub fn parse_trace(text: &str, name: &str) -> Result<Vec<TraceRequest>, TraceError> {
    let bad =
        |line: usize, why: String| TraceError::Malformed { file: name.to_string(), line: line as u64, why };
    let us = |s: &str, line: usize| -> Result<Duration, TraceError> {
        let x: f64 = s.parse().map_err(|_| bad(line, format!("bad time `{s}`")))?;
        if !(x >= 0.0 && x.is_finite()) {
            return Err(bad(line, format!("negative or invalid time `{s}`")));
        }
        Ok(Duration((x * 1e3).round() as u64))
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        if f.len() != 6 {
            return Err(bad(
                n,
                format!(
                    "expected `R|W Hit|Miss blkno bcount service_us next_interarrival_us`, found `{line}`"
                ),
            ));
        }
        let dir = match f[0] {
            "R" => Dir::Read,
            "W" => Dir::Write,
            o => return Err(bad(n, format!("expected R or W, found `{o}`"))),
        };
        let sector = f[2].parse().map_err(|_| bad(n, format!("bad blkno `{}`", f[2])))?;
        let sectors: u32 = f[3].parse().map_err(|_| bad(n, format!("bad bcount `{}`", f[3])))?;
        if sectors == 0 {
            return Err(bad(n, "bcount 0".into()));
        }
        out.push(TraceRequest {
            dir,
            hit: f[1].eq_ignore_ascii_case("hit"),
            class: f[1].to_string(),
            sector,
            sectors,
            service: us(f[4], n)?,
            next_interarrival: us(f[5], n)?,
        });
    }
    if out.is_empty() {
        return Err(TraceError::Empty { file: name.to_string() });
    }
    Ok(out)
}

/// What the model did with each request.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// Simulated service time per request, in trace order.
    pub service: Vec<Duration>,
    /// The model served it from its cache (or took it into its buffer, for fast writes).
    pub cache_hit: Vec<bool>,
    /// Cylinders the arm moved for it (0 for hits and head switches).
    pub seek_cylinders: Vec<u32>,
    /// The request starts on the cylinder holding the previous request's last sector
    /// (false for the first).
    pub same_cylinder: Vec<bool>,
}

/// Replay `trace` on a fresh drive, closed loop, as DiskSim's validation does.
pub fn replay(spec: &DiskSpec, trace: &[TraceRequest]) -> Result<Replay> {
    let mut hdd = Hdd::try_new(spec.clone()).map_err(|e| anyhow::anyhow!("{}: {e}", spec.name))?;
    let cap = hdd.capacity();
    let mut arrival = Time::ZERO;
    let mut out = Replay {
        service: Vec::with_capacity(trace.len()),
        cache_hit: Vec::with_capacity(trace.len()),
        seek_cylinders: Vec::with_capacity(trace.len()),
        same_cylinder: Vec::with_capacity(trace.len()),
    };
    let mut prev_cylinder = None;
    for (i, r) in trace.iter().enumerate() {
        if r.sector + r.sectors as u64 > cap {
            bail!("request {} ({}+{}) beyond the drive's {cap} sectors", i + 1, r.sector, r.sectors);
        }
        let geo = hdd.geometry();
        out.same_cylinder.push(prev_cylinder == Some(geo.locate(r.sector).cylinder));
        prev_cylinder = Some(geo.locate(r.sector + r.sectors as u64 - 1).cylinder);
        let a = hdd.access(arrival, r.sector, r.sectors, r.dir);
        out.service.push(a.done - arrival);
        out.cache_hit.push(a.cache_hit);
        out.seek_cylinders.push(a.seek_cylinders);
        arrival = a.done + r.next_interarrival;
    }
    Ok(out)
}

/// Value at quantile `q` of sorted samples: the sample of rank `floor(q * n)`.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() as f64 * q) as usize).min(sorted.len() - 1)]
}

/// The demerit figure in ms of two sets of service times (ms), any order.
pub fn demerit(simulated: &[f64], measured: &[f64]) -> f64 {
    assert!(!simulated.is_empty() && !measured.is_empty(), "demerit of an empty sample");
    let (mut a, mut b) = (simulated.to_vec(), measured.to_vec());
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let ss: f64 = (0..QUANTILES)
        .map(|k| {
            let q = (k as f64 + 0.5) / QUANTILES as f64;
            (quantile(&a, q) - quantile(&b, q)).powi(2)
        })
        .sum();
    (ss / QUANTILES as f64).sqrt()
}

/// The score of one drive against one trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Score {
    pub drive: String,
    pub requests: usize,
    pub demerit_ms: f64,
    /// The same through DiskSim's binned distributions (`demerit_binned`): the estimator of
    /// DiskSim's published figures.
    pub demerit_binned_ms: f64,
    pub mean_simulated_ms: f64,
    pub mean_measured_ms: f64,
    /// (demerit, mean simulated, mean measured, count) over reads, then writes.
    pub reads: (f64, f64, f64, usize),
    pub writes: (f64, f64, f64, usize),
    /// The same per class of the trace (`R Hit`, `W Miss`, ...), in order of first
    /// appearance.
    pub classes: Vec<(String, (f64, f64, f64, usize))>,
    /// The same for the reads by the previous request's direction and whether they start
    /// on the cylinder where it ended: `R after R, same cyl`, `R after R, other cyl`,
    /// `R after W, same cyl`, `R after W, other cyl`.
    pub positions: Vec<(String, (f64, f64, f64, usize))>,
    /// Requests where the model's cache hit agrees with the trace's Hit/Miss column.
    pub hit_agreement: usize,
    /// Per-request service times in ms, trace order (for the plot).
    pub simulated_ms: Vec<f64>,
    pub measured_ms: Vec<f64>,
    /// The trace and what the model did with it, for `--per-request`.
    pub trace: Vec<TraceRequest>,
    pub replay: Replay,
}

/// Import/resolve, replay and score.
pub fn score(disk: &str, trace_path: &Path) -> Result<Score> {
    score_spec(&headway_disk::resolve(disk)?, trace_path)
}

/// Replay and score a drive already resolved; a trace that cannot be read or parsed is a
/// [`TraceError`] (under the `anyhow` context, for callers that sort errors by kind).
pub fn score_spec(spec: &DiskSpec, trace_path: &Path) -> Result<Score> {
    let name = trace_path.display().to_string();
    let text = std::fs::read_to_string(trace_path)
        .map_err(|e| TraceError::Io { file: name.clone(), why: e.to_string() })?;
    let trace = parse_trace(&text, &name)?;
    let rep = replay(spec, &trace)?;
    let ms = |d: Duration| d.0 as f64 / 1e6;
    let sim: Vec<f64> = rep.service.iter().map(|&d| ms(d)).collect();
    let real: Vec<f64> = trace.iter().map(|r| ms(r.service)).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    // (demerit, mean simulated, mean measured, count) over the requests `keep` picks by index
    let part_of = |keep: &dyn Fn(usize) -> bool| {
        let idx: Vec<usize> = (0..trace.len()).filter(|&i| keep(i)).collect();
        if idx.is_empty() {
            return (0.0, 0.0, 0.0, 0);
        }
        let s: Vec<f64> = idx.iter().map(|&i| sim[i]).collect();
        let r: Vec<f64> = idx.iter().map(|&i| real[i]).collect();
        (demerit(&s, &r), mean(&s), mean(&r), idx.len())
    };
    let part = |dir: Dir| part_of(&|i| trace[i].dir == dir);
    let mut names: Vec<(Dir, &str)> = Vec::new();
    for r in &trace {
        if !names.contains(&(r.dir, r.class.as_str())) {
            names.push((r.dir, r.class.as_str()));
        }
    }
    let classes = names
        .iter()
        .map(|&(dir, class)| {
            let d = if dir == Dir::Read { "R" } else { "W" };
            (format!("{d} {class}"), part_of(&|i| trace[i].dir == dir && trace[i].class == class))
        })
        .collect();
    let positions = [(Dir::Read, true), (Dir::Read, false), (Dir::Write, true), (Dir::Write, false)]
        .iter()
        .map(|&(prev, same)| {
            let part = part_of(&|i| {
                i > 0 && trace[i].dir == Dir::Read && trace[i - 1].dir == prev && rep.same_cylinder[i] == same
            });
            let p = if prev == Dir::Read { "R" } else { "W" };
            (format!("R after {p}, {} cyl", if same { "same" } else { "other" }), part)
        })
        .collect();
    Ok(Score {
        drive: spec.name.clone(),
        requests: trace.len(),
        demerit_ms: demerit(&sim, &real),
        demerit_binned_ms: crate::demerit_binned::binned_demerit(&sim, &real),
        mean_simulated_ms: mean(&sim),
        mean_measured_ms: mean(&real),
        reads: part(Dir::Read),
        writes: part(Dir::Write),
        classes,
        positions,
        hit_agreement: trace.iter().zip(&rep.cache_hit).filter(|(r, &h)| r.hit == h).count(),
        simulated_ms: sim,
        measured_ms: real,
        trace,
        replay: rep,
    })
}

impl Score {
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<22} {:>8} {:>12} {:>12} {:>12}",
            "", "requests", "demerit ms", "mean sim ms", "mean meas ms"
        );
        let _ = writeln!(
            s,
            "{:<22} {:>8} {:>12.3} {:>12.3} {:>12.3}",
            "all", self.requests, self.demerit_ms, self.mean_simulated_ms, self.mean_measured_ms
        );
        for (name, p) in self.parts() {
            let _ = writeln!(s, "{:<22} {:>8} {:>12.3} {:>12.3} {:>12.3}", name, p.3, p.0, p.1, p.2);
        }
        let _ = writeln!(
            s,
            "drive {}; cache hit/miss agrees with the trace's column on {} of {} requests",
            self.drive, self.hit_agreement, self.requests
        );
        let _ = writeln!(
            s,
            "demerit {:.6} ms from exact values; {:.6} ms through DiskSim's binned distributions",
            self.demerit_ms, self.demerit_binned_ms
        );
        s
    }

    /// One CSV row a request, trace order: what `--per-request` writes.
    pub fn per_request_csv(&self) -> String {
        let mut s = String::from(
            "line,dir,class,blkno,bcount,measured_ms,simulated_ms,model_hit,same_cylinder,seek_cylinders\n",
        );
        for (i, r) in self.trace.iter().enumerate() {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{:.6},{:.6},{},{},{}",
                i + 1,
                if r.dir == Dir::Read { "R" } else { "W" },
                r.class,
                r.sector,
                r.sectors,
                self.measured_ms[i],
                self.simulated_ms[i],
                u8::from(self.replay.cache_hit[i]),
                u8::from(self.replay.same_cylinder[i]),
                self.replay.seek_cylinders[i],
            );
        }
        s
    }

    /// The table's rows below `all`, in its order: reads, writes, the trace's classes, the
    /// reads by position (rows without requests left out).
    pub fn parts(&self) -> Vec<(String, (f64, f64, f64, usize))> {
        let mut v = vec![("reads".to_string(), self.reads), ("writes".to_string(), self.writes)];
        v.extend(self.classes.iter().cloned());
        v.extend(self.positions.iter().cloned());
        v.retain(|p| p.1 .3 > 0);
        v
    }

    fn json_value(&self) -> serde_json::Value {
        let parts: Vec<_> = self
            .parts()
            .into_iter()
            .map(|(name, (d, sim, meas, n))| {
                serde_json::json!({
                    "part": name,
                    "requests": n,
                    "demerit_ms": d,
                    "mean_simulated_ms": sim,
                    "mean_measured_ms": meas,
                })
            })
            .collect();
        serde_json::json!({
            "drive": self.drive,
            "requests": self.requests,
            "demerit_ms": self.demerit_ms,
            "demerit_binned_ms": self.demerit_binned_ms,
            "mean_simulated_ms": self.mean_simulated_ms,
            "mean_measured_ms": self.mean_measured_ms,
            "cache_hit_agreement": self.hit_agreement,
            "parts": parts,
        })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.json_value()).expect("plain values") + "\n"
    }
}

/// The `NAME.parv` files of `dir` that have a `NAME.trace` beside them, by name.
pub fn suite(dir: &Path) -> Result<Vec<(PathBuf, PathBuf)>> {
    let mut pairs = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry.with_context(|| format!("reading {}", dir.display()))?.path();
        if path.extension().is_some_and(|e| e == "parv") {
            let trace = path.with_extension("trace");
            if trace.is_file() {
                pairs.push((path, trace));
            }
        }
    }
    pairs.sort();
    if pairs.is_empty() {
        bail!("{}: no NAME.parv with a NAME.trace beside it", dir.display());
    }
    Ok(pairs)
}

/// `headway validate DIR`: every pair of the directory, one line each.
fn run_suite(dir: &Path, json: Option<&PathBuf>) -> Result<()> {
    let pairs = suite(dir)?;
    let mut values = Vec::new();
    println!(
        "{:<24} {:>8} {:>12} {:>14} {:>12} {:>12}",
        "drive", "requests", "demerit ms", "binned ms", "mean sim ms", "mean meas ms"
    );
    for (parv, trace) in pairs {
        let s = score(&parv.display().to_string(), &trace)?;
        let stem = parv.file_stem().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        println!(
            "{:<24} {:>8} {:>12.6} {:>14.6} {:>12.3} {:>12.3}",
            stem, s.requests, s.demerit_ms, s.demerit_binned_ms, s.mean_simulated_ms, s.mean_measured_ms
        );
        values.push(s.json_value());
    }
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&values).expect("plain values") + "\n";
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
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
    let s = score(parv, trace)?;
    print!("{}", s.table());
    if let Some(path) = json {
        std::fs::write(path, s.to_json()).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = per_request {
        std::fs::write(path, s.per_request_csv()).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = plot {
        crate::reproduce::render(path, &Cdfs(&s))?;
        println!("plotted {}", path.display());
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
        let mut b = ChartBuilder::on(root);
        b.margin(20);
        if text {
            b.caption(
                format!("{}: demerit {:.3} ms over {} requests", s.drive, s.demerit_ms, s.requests),
                ("sans-serif", 18),
            )
            .x_label_area_size(50)
            .y_label_area_size(70);
        } else {
            b.x_label_area_size(10).y_label_area_size(10);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The DiskSim reference data (`shared/reference` beside the repository): missing, the
    /// test that asks for it fails.
    fn reference() -> PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/disksim-valid");
        assert!(dir.exists(), "{} missing: the DiskSim reference data", dir.display());
        dir
    }

    #[test]
    fn demerit_of_identical_and_shifted_samples() {
        let a: Vec<f64> = (0..1000).map(|i| i as f64 / 100.0).collect();
        assert_eq!(demerit(&a, &a), 0.0);
        let b: Vec<f64> = a.iter().rev().map(|x| x + 0.5).collect();
        assert!((demerit(&a, &b) - 0.5).abs() < 1e-12);
        // different sample counts compare by quantile
        assert!((demerit(&[1.0, 2.0], &[1.0, 1.0, 2.0, 2.0]) - 0.0).abs() < 1e-12);
    }

    #[test]
    fn trace_parse_errors_name_the_line() {
        let t = parse_trace("R Hit 10 4 1000.0 2000.0\nW Miss 20 8 1.5 0\n", "t").unwrap();
        assert_eq!(t[1].dir, Dir::Write);
        assert_eq!(t[0].service, Duration(1_000_000));
        assert!(!t[1].hit);
        let e = parse_trace("R Hit 10 4 1000.0 2000.0\nX Hit 1 1 1 1\n", "t").unwrap_err().to_string();
        assert!(e.starts_with("t:2:"), "{e}");
        let e = parse_trace("R Hit 10 4 1000.0\n", "t").unwrap_err().to_string();
        assert!(e.starts_with("t:1:"), "{e}");
    }

    /// headway's demerit on one validated drive (`NAME.parv` against `NAME.trace`).
    fn headway_demerit(stem: &str) -> f64 {
        let dir = reference();
        let s = score(dir.join(format!("{stem}.parv")).to_str().unwrap(), &dir.join(format!("{stem}.trace")))
            .unwrap();
        eprintln!("{stem}: headway {:.3} ms", s.demerit_ms);
        s.demerit_ms
    }

    /// The must-show, one test per drive: headway's demerit at most DiskSim 4.0's (the
    /// figures of the reference README). Drives where headway does not get there yet are
    /// `#[ignore]`d with their numbers (BENCHMARKS.md, "DiskSim validation") and guarded
    /// against regressions by `open_gaps_do_not_widen`.
    macro_rules! beats_disksim {
        ($($(#[$attr:meta])* $test:ident: $stem:literal <= $disksim:literal;)*) => {$(
            $(#[$attr])*
            #[test]
            fn $test() {
                let d = headway_demerit($stem);
                assert!(d <= $disksim, "{}: headway {d:.3} ms > DiskSim {} ms", $stem, $disksim);
            }
        )*};
    }

    // 0.318 is DiskSim's figure for the Cheetah 4LP, not 1/pi.
    #[allow(clippy::approx_constant)]
    mod scores {
        use super::*;
        beats_disksim! {
            cheetah4lp_beats_disksim: "cheetah4LP" <= 0.318;
            atlas_iii_beats_disksim: "atlas_III" <= 0.378;
            #[ignore = "open: headway 0.138 ms (0.138 binned as DiskSim bins) vs DiskSim 0.136 ms"]
            ibm18es_beats_disksim: "ibm18es" <= 0.136;
            #[ignore = "open: headway 0.351 ms (0.350 binned as DiskSim bins) vs DiskSim 0.348 ms"]
            barracuda_beats_disksim: "barracuda" <= 0.348;
            cheetah9lp_beats_disksim: "cheetah9LP" <= 0.107;
            #[ignore = "open: headway 0.090058 ms (0.086 binned as DiskSim bins) vs DiskSim 0.090 ms"]
            hp_c2247a_beats_disksim: "hp_c2247a" <= 0.090;
        }
    }

    /// Like for like: through DiskSim's own binned estimator, headway's models score at most
    /// DiskSim's figure on four drives (hp_c2247a too: 0.086 ms binned vs its 0.090 exact);
    /// ibm18es and barracuda stay above it either way (0.138, 0.350).
    #[test]
    #[allow(clippy::approx_constant)]
    fn binned_like_disksim_at_most_disksim_on_four_drives() {
        let dir = reference();
        for (stem, disksim) in
            [("atlas_III", 0.378), ("cheetah4LP", 0.318), ("cheetah9LP", 0.107), ("hp_c2247a", 0.090)]
        {
            let s =
                score(dir.join(format!("{stem}.parv")).to_str().unwrap(), &dir.join(format!("{stem}.trace")))
                    .unwrap();
            assert!(
                s.demerit_binned_ms <= disksim,
                "{stem}: binned {:.4} > DiskSim {disksim}",
                s.demerit_binned_ms
            );
        }
    }

    /// Regression guard for the drives still above DiskSim: today's figure + 2%.
    #[test]
    fn open_gaps_do_not_widen() {
        for (stem, now) in [("ibm18es", 0.138), ("barracuda", 0.351), ("hp_c2247a", 0.0901)] {
            let d = headway_demerit(stem);
            assert!(d <= now * 1.02, "{stem}: {d:.3} ms, was {now} ms");
        }
    }

    /// The reads are split by the previous request's direction and by whether they start on
    /// the cylinder where it ended; the four parts count every read but the first request.
    #[test]
    fn reads_by_previous_direction_and_cylinder() {
        let dir = std::env::temp_dir().join(format!("headway-validate-pos-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("t.trace");
        // write at 0; read on its cylinder; read far away; write far; read back near 0
        let lines = "W Hit 0 8 1000 20000\nR Hit 16 8 5000 20000\nR Hit 10000000 8 9000 20000\n\
                     W Hit 10000016 8 1000 20000\nR Hit 100 8 9000 20000\n";
        std::fs::write(&trace, lines).unwrap();
        let s = score("cheetah9lp", &trace).unwrap();
        let count = |name: &str| s.positions.iter().find(|(n, _)| n == name).unwrap().1 .3;
        assert_eq!(count("R after W, same cyl"), 1);
        assert_eq!(count("R after R, other cyl"), 1);
        assert_eq!(count("R after W, other cyl"), 1);
        assert_eq!(count("R after R, same cyl"), 0);
        assert!(s.table().contains("R after W, same cyl"), "{}", s.table());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn deterministic() {
        let dir = reference();
        let p = dir.join("ibm18es.parv");
        let a = score(p.to_str().unwrap(), &dir.join("ibm18es.trace")).unwrap();
        let b = score(p.to_str().unwrap(), &dir.join("ibm18es.trace")).unwrap();
        assert_eq!(a.to_json(), b.to_json());
    }
}

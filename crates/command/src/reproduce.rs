//! `headway reproduce`: run the seed papers' figures (`headway_sim::reproduce`) and write,
//! per figure, `ID.json` (the outcome with the simulator's reports), `ID.svg` and `ID.png`
//! (throughput or ratio per scheduler or sweep point, the paper's numbers as crosses) and
//! `ID.md` (setting, headway against the paper, verdict); `all` adds `index.md` and
//! `index.html`.
//!
//! Plots are drawn with plotters. Text needs a TrueType font, read at run time (nothing is
//! bundled): `$HEADWAY_FONT`, else DejaVu Sans where Debian (`fonts-dejavu-core`), Fedora
//! or Arch put it (`HEADWAY_FONT=none`: no text). Without one the plots are drawn without text (bars, markers, axes); the
//! Markdown report carries every number anyway.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{bail, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use headway_lab::figures::{self as lab_figures, FigureData, LabFigure};
use headway_sim::reproduce::{figures, find, Outcome, PaperPoint, Row, Scale, Scatter, Series, Status};

/// `headway reproduce` flags.
#[derive(clap::Args)]
pub struct ReproduceArgs {
    /// Figure id (see --list), or `all`
    id: Option<String>,
    /// List the figures: id, availability, paper and figure
    #[arg(long, conflicts_with = "id")]
    list: bool,
    /// Directory for the JSON, PNG, SVG and Markdown files
    #[arg(long, value_name = "DIR", default_value = "out/reproduce")]
    out: PathBuf,
    /// Smaller runs where the figure allows (each report says what was reduced)
    #[arg(long)]
    quick: bool,
}

pub fn run(a: ReproduceArgs) -> Result<()> {
    if a.list {
        return list();
    }
    let Some(id) = a.id else { bail!("give a figure id or `all` (see `headway reproduce --list`)") };
    let scale = if a.quick { Scale::Quick } else { Scale::Full };
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    if id == "all" {
        return all(&a.out, scale);
    }
    if let Some(fig) = lab_figures::find(&id) {
        return run_lab(&fig, &a.out, scale);
    }
    let known = || {
        let mut ids: Vec<&str> = figures().iter().map(|f| f.id).collect();
        ids.extend(lab_figures::figures().iter().map(|f| f.id));
        ids.join(", ")
    };
    let Some(fig) = find(&id) else { bail!("unknown figure `{id}` (known: {})", known()) };
    if let Status::Unavailable(why) = fig.status {
        bail!("figure `{id}` ({}) cannot be reproduced yet: {why}", fig.source);
    }
    let o = fig.run(scale).expect("available")?;
    write(&a.out, &o)?;
    println!("{}: {}", o.id, o.verdict);
    println!("wrote {}", a.out.join(format!("{}.{{json,svg,png,md}}", o.id)).display());
    Ok(())
}

/// A figure that needs real guests: run through the lab, written as the others are.
fn run_lab(fig: &LabFigure, out: &Path, scale: Scale) -> Result<()> {
    let mut opts = headway_lab::LabOptions::new(out.to_path_buf());
    opts.interrupt = headway_nbd::signal::shutdown_on_signals().context("installing signal handling")?;
    opts.model = Some(std::sync::Arc::new(super::lab_model::SimModel));
    let lab_scale = if scale == Scale::Quick { lab_figures::Scale::Quick } else { lab_figures::Scale::Full };
    let figures = (fig.run)(lab_scale, &opts, &mut |line| eprintln!("lab: {line}"))?;
    if !figures.iter().any(|d| d.id == fig.id) {
        bail!("the lab's runs for {} produced no figure {}", fig.id, fig.id);
    }
    // the runs may measure several figures (iopath-fig2 to 6): each is written
    for data in figures {
        let o = outcome_of(data);
        write(out, &o)?;
        println!("{}: {}", o.id, o.verdict);
        println!("wrote {}", out.join(format!("{}.{{json,svg,png,md}}", o.id)).display());
    }
    Ok(())
}

/// A lab figure's data as the simulator's figures carry theirs (for the same report files).
fn outcome_of(d: FigureData) -> Outcome {
    Outcome {
        id: d.id,
        source: d.source,
        title: d.title,
        setting: d.setting,
        commands: d.commands,
        scale_note: d.scale_note,
        x_label: d.x_label,
        y_label: d.y_label,
        categories: d.categories,
        series: d.series.into_iter().map(|(name, values)| Series { name, values }).collect(),
        paper_points: d
            .paper_points
            .into_iter()
            .map(|(series, category, value)| PaperPoint { series, category, value })
            .collect(),
        scatter: d.scatter.into_iter().map(|(name, points)| Scatter { name, points }).collect(),
        rows: d.rows.into_iter().map(|(quantity, headway, paper)| Row { quantity, headway, paper }).collect(),
        outcome: d.outcome,
        matches: d.outcome != lab_figures::Verdict::Differs,
        verdict: d.verdict,
        explanation: d.explanation,
        files: Vec::new(),
        reports: d.reports,
    }
}

fn list() -> Result<()> {
    println!("{:<14} {:<12} source — title", "id", "status");
    for f in figures() {
        match f.status {
            Status::Available(_) => println!("{:<14} {:<12} {} — {}", f.id, "available", f.source, f.title),
            Status::Unavailable(why) => {
                println!(
                    "{:<14} {:<12} {} — {}\n{:<27} reason: {why}",
                    f.id, "unavailable", f.source, f.title, ""
                )
            }
        }
    }
    for f in lab_figures::figures() {
        println!(
            "{:<14} {:<12} {} — {}\n{:<27} through the lab: real Linux guests under QEMU (minutes to an hour; --quick: less)",
            f.id, "lab", f.source, f.title, ""
        );
    }
    Ok(())
}

fn all(out: &Path, scale: Scale) -> Result<()> {
    let mut md = String::from("# headway: the seed papers' figures, reproduced\n\n");
    md.push_str("| figure | source | verdict |\n|---|---|---|\n");
    let mut html = String::from(
        "<!doctype html><meta charset=\"utf-8\"><title>headway reproduce</title>\n<h1>headway: the seed papers' figures, reproduced</h1>\n<table border=1 cellpadding=4>\n<tr><th>figure<th>source<th>verdict\n",
    );
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let mut differ = Vec::new();
    for f in figures() {
        let verdict = match f.run(scale) {
            None => {
                *counts.entry("unavailable").or_default() += 1;
                let Status::Unavailable(why) = f.status else { unreachable!() };
                md.push_str(&format!("| {} | {} | unavailable: {why} |\n", f.id, f.source));
                html.push_str(&format!(
                    "<tr><td>{}<td>{}<td>unavailable: {}\n",
                    f.id,
                    esc(f.source),
                    esc(why)
                ));
                continue;
            }
            Some(r) => r?,
        };
        write(out, &verdict)?;
        println!("{}: {}", verdict.id, verdict.verdict);
        *counts.entry(verdict.outcome.word()).or_default() += 1;
        if departs(verdict.outcome, &verdict.verdict) {
            differ.push(format!("- [{id}]({id}.md): {}", verdict.verdict, id = verdict.id));
        }
        md.push_str(&format!("| [{id}]({id}.md) | {} | {} |\n", f.source, verdict.verdict, id = f.id));
        html.push_str(&format!(
            "<tr><td><a href=\"{id}.md\">{id}</a><br><img src=\"{id}.svg\" width=320><td>{}<td>{}\n",
            esc(f.source),
            esc(&verdict.verdict),
            id = f.id
        ));
    }
    let mut lab_counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for f in lab_figures::figures() {
        let how = match recorded(out, f.id) {
            Some((outcome, line, when)) => {
                *lab_counts.entry(outcome.word()).or_default() += 1;
                if departs(outcome, &line) {
                    differ.push(format!("- [{id}]({id}.md) (lab, run {when}): {line}", id = f.id));
                }
                format!("through the lab, run {when} (`headway reproduce {}`): {line}", f.id)
            }
            None => {
                *lab_counts.entry("not run").or_default() += 1;
                format!(
                    "through the lab (real guests, not run by `all`): headway reproduce {} --out DIR",
                    f.id
                )
            }
        };
        md.push_str(&format!("| {} | {} | {how} |\n", f.id, f.source));
        html.push_str(&format!("<tr><td>{}<td>{}<td>{}\n", f.id, esc(f.source), esc(&how)));
    }
    html.push_str("</table>\n");
    let count = |k: &str| counts.get(k).copied().unwrap_or(0);
    let lab = |k: &str| lab_counts.get(k).copied().unwrap_or(0);
    let summary = format!(
        "{} figures run: {} matching, {} differing, {} shape only; {} unavailable. Through the lab: {} \
         with a run in this directory ({} matching, {} differing, {} shape only), {} not run here.",
        count("matches") + count("differs") + count("shape only"),
        count("matches"),
        count("differs"),
        count("shape only"),
        count("unavailable"),
        lab("matches") + lab("differs") + lab("shape only"),
        lab("matches"),
        lab("differs"),
        lab("shape only"),
        lab("not run"),
    );
    md.push_str(&format!("\n## Summary\n\n{summary}\n"));
    if !differ.is_empty() {
        md.push_str(&format!(
            "\nWhere headway departs from the paper (differing, or shape only with a statement that does \
             not hold; each report says why):\n\n{}\n",
            differ.join("\n")
        ));
    }
    html.push_str(&format!("<p>{}</p>\n", esc(&summary)));
    println!("{summary}");
    std::fs::write(out.join("index.md"), md)?;
    std::fs::write(out.join("index.html"), html)?;
    println!("wrote {}", out.join("index.md").display());
    Ok(())
}

/// Whether a figure departs from its paper: it differs, or (shape only) one of its
/// statements does not hold.
fn departs(outcome: headway_sim::reproduce::Verdict, line: &str) -> bool {
    outcome == headway_sim::reproduce::Verdict::Differs || line.contains(" — not: ")
}

/// A lab figure's outcome as its last run wrote it into `dir` (`ID.json`): the outcome,
/// its verdict line and the file's date (RFC 3339, UTC). `all` does not run the lab;
/// it counts what a `headway reproduce ID --out DIR` left there.
fn recorded(dir: &Path, id: &str) -> Option<(headway_sim::reproduce::Verdict, String, String)> {
    use headway_sim::reproduce::Verdict;
    let path = dir.join(format!("{id}.json"));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
    if v.get("id")?.as_str()? != id {
        return None;
    }
    let outcome =
        Verdict::ALL.into_iter().find(|o| serde_json::to_value(o).ok().as_ref() == v.get("outcome"))?;
    let line = v.get("verdict")?.as_str()?.to_string();
    let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok()?;
    let when = humantime::format_rfc3339_seconds(modified).to_string();
    Some((outcome, line, when))
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn write(dir: &Path, o: &Outcome) -> Result<()> {
    for (name, text) in &o.files {
        let f = dir.join(name);
        if let Some(parent) = f.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&f, text).with_context(|| format!("writing {}", f.display()))?;
    }
    let p = |ext: &str| dir.join(format!("{}.{ext}", o.id));
    std::fs::write(p("json"), o.to_json()).with_context(|| format!("writing {}", p("json").display()))?;
    std::fs::write(p("md"), o.markdown(&o.id)).with_context(|| format!("writing {}", p("md").display()))?;
    plot(&p("svg"), o)?;
    plot(&p("png"), o)
}

/// The plot format `path` names by its extension, if one `plot` draws.
fn plot_format(path: &Path) -> Option<&'static str> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("svg") => Some("svg"),
        Some("png") => Some("png"),
        _ => None,
    }
}

/// A `--plot FILE` must name an SVG or PNG file: checked before anything runs.
pub(crate) fn check_plot_path(path: Option<&Path>) -> Result<()> {
    match path {
        Some(p) if plot_format(p).is_none() => {
            anyhow::bail!("--plot {}: give a .svg or .png file", p.display())
        }
        _ => Ok(()),
    }
}

/// Something `render` can draw on any plotters backend (SVG or PNG).
pub(crate) trait Figure {
    /// Draw on `root`; `text` is false when no font was found (then draw no text).
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        text: bool,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
    where
        DB::ErrorType: 'static;
}

/// Draw `fig` to `path`, 900x540: SVG or PNG by its extension. Every `--plot` goes through
/// here (reproduce, simulate, sweep, validate).
pub(crate) fn render(path: &Path, fig: &impl Figure) -> Result<()> {
    match plot_format(path) {
        Some("svg") => draw_on(SVGBackend::new(path, (900, 540)).into_drawing_area(), path, fig),
        Some("png") => draw_on(BitMapBackend::new(path, (900, 540)).into_drawing_area(), path, fig),
        _ => anyhow::bail!("{}: a plot is written as .svg or .png", path.display()),
    }
}

/// Draw `fig` on `root` (the backend writing `path`) and write it out.
fn draw_on<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, path: &Path, fig: &impl Figure) -> Result<()>
where
    DB::ErrorType: 'static,
{
    fig.draw(&root, font_loaded()).map_err(|e| anyhow::anyhow!("drawing {}: {e}", path.display()))?;
    root.present().map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))
}

/// Draw `o`'s bars to `path`: SVG or PNG by its extension.
pub(crate) fn plot(path: &Path, o: &Outcome) -> Result<()> {
    render(path, &Bars(o))
}

/// An outcome drawn as grouped bars.
struct Bars<'a>(&'a Outcome);

impl Figure for Bars<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        text: bool,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
    where
        DB::ErrorType: 'static,
    {
        draw(root, self.0, text)
    }
}

/// Register a TrueType font for plotters' "sans-serif" once; false when none is found.
fn font_loaded() -> bool {
    static LOADED: OnceLock<bool> = OnceLock::new();
    *LOADED.get_or_init(|| {
        let var = std::env::var_os("HEADWAY_FONT");
        if var.as_deref() == Some(std::ffi::OsStr::new("none")) {
            return false;
        }
        let mut candidates: Vec<PathBuf> = var.map(PathBuf::from).into_iter().collect();
        candidates.extend(
            [
                "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
                "/usr/share/fonts/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/TTF/DejaVuSans.ttf",
            ]
            .map(PathBuf::from),
        );
        for c in candidates {
            if let Ok(bytes) = std::fs::read(&c) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return true;
                }
            }
        }
        false
    })
}

/// Ten distinguishable colours (a figure may draw eight series: iopath-fig11).
pub(crate) const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(214, 39, 40),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// A chart builder on `root` with the plots' margins: a caption and room for the axes'
/// labels when there is text, neither when no font was found.
pub(crate) fn chart_on<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    caption: &str,
    text: bool,
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(root);
    b.margin(20);
    if text {
        b.caption(caption, ("sans-serif", 18)).x_label_area_size(50).y_label_area_size(70);
    } else {
        b.x_label_area_size(10).y_label_area_size(10);
    }
    b
}

/// The series' legend, boxed in the upper right.
pub(crate) fn legend<'a, DB: DrawingBackend + 'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .label_font(("sans-serif", 14))
        .draw()
}

/// Dots over numeric axes (an outcome's `scatter`): one colour per set, a legend when
/// there are several.
fn draw_scatter<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    o: &Outcome,
    text: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB::ErrorType: 'static,
{
    let all =
        || o.scatter.iter().flat_map(|s| s.points.iter()).filter(|(x, y)| x.is_finite() && y.is_finite());
    let (x0, x1) = all().fold((f64::MAX, f64::MIN), |(a, b), (x, _)| (a.min(*x), b.max(*x)));
    let y1 = all().fold(0.0f64, |m, (_, y)| m.max(*y));
    let (x0, x1) = if x0 < x1 { (x0, x1) } else { (0.0, 1.0) };
    let y1 = if y1 > 0.0 { y1 * 1.05 } else { 1.0 };
    let mut b = chart_on(root, &format!("{}: {}", o.id, o.title), text);
    let mut chart = b.build_cartesian_2d(x0..x1, 0f64..y1)?;
    {
        let mut mesh = chart.configure_mesh();
        if text {
            mesh.y_desc(o.y_label.as_str())
                .x_desc(o.x_label.as_str())
                .x_labels(10)
                .y_labels(8)
                .label_style(("sans-serif", 14));
        } else {
            mesh.x_labels(0).y_labels(0);
        }
        mesh.draw()?;
    }
    for (j, set) in o.scatter.iter().enumerate() {
        let colour = COLOURS[j % COLOURS.len()];
        let dots = set
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(move |&p| Circle::new(p, 1, colour.filled()));
        let drawn = chart.draw_series(dots)?;
        if text && o.scatter.len() > 1 {
            drawn.label(set.name.as_str()).legend(move |(x, y)| Circle::new((x + 6, y), 4, colour.filled()));
        }
    }
    if text && o.scatter.len() > 1 {
        legend(&mut chart)?;
    }
    Ok(())
}

/// Grouped bars: one group per category, one bar per series; the paper's numbers as black
/// crosses on their bars.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    o: &Outcome,
    text: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    if !o.scatter.is_empty() {
        return draw_scatter(root, o, text);
    }
    let n = o.categories.len().max(1);
    let s = o.series.len().max(1);
    let top = o
        .series
        .iter()
        .flat_map(|x| x.values.iter().copied())
        .chain(o.paper_points.iter().map(|p| p.value))
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.15;
    let mut b = chart_on(root, &format!("{}: {}", o.id, o.title), text);
    let mut chart = b.build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..top)?;
    {
        let mut mesh = chart.configure_mesh();
        mesh.disable_x_mesh().x_labels(0);
        if text {
            mesh.y_desc(o.y_label.as_str())
                .x_desc(o.x_label.as_str())
                .y_labels(8)
                .label_style(("sans-serif", 14));
        } else {
            mesh.y_labels(0);
        }
        mesh.draw()?;
    }
    let w = 0.8 / s as f64;
    let x0 = |cat: usize, j: usize| cat as f64 - 0.4 + j as f64 * w;
    for (j, series) in o.series.iter().enumerate() {
        let colour = COLOURS[j % COLOURS.len()];
        let bars = series.values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(move |(i, &v)| {
            Rectangle::new([(x0(i, j) + w * 0.05, 0.0), (x0(i, j) + w * 0.95, v)], colour.filled())
        });
        let drawn = chart.draw_series(bars)?;
        if text && o.series.len() > 1 {
            drawn
                .label(series.name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
        }
    }
    let marks = o.paper_points.iter().filter_map(|p| {
        let j = o.series.iter().position(|x| x.name == p.series)?;
        Some(Cross::new((x0(p.category, j) + w / 2.0, p.value), 8, BLACK.stroke_width(3)))
    });
    let drawn = chart.draw_series(marks)?;
    if text && !o.paper_points.is_empty() {
        drawn.label("paper").legend(|(x, y)| Cross::new((x + 6, y), 5, BLACK.stroke_width(2)));
    }
    if text {
        let labels = o.categories.iter().enumerate().map(|(i, c)| {
            EmptyElement::at((i as f64, 0.0))
                + Text::new(
                    c.clone(),
                    (0, 6),
                    TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Center, VPos::Top)),
                )
        });
        chart.draw_series(labels)?;
        if o.series.len() > 1 || !o.paper_points.is_empty() {
            legend(&mut chart)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scatter_outcome_is_drawn_as_dots_not_bars() {
        let mut o = Outcome::of_report("dots", &headway_sim::Report::new(Vec::new()));
        o.scatter = vec![
            Scatter { name: "reads".into(), points: vec![(0.0, 1.0), (1.0, 2.0), (2.0, 0.5)] },
            Scatter { name: "writes".into(), points: vec![(0.5, 3.0), (f64::NAN, 1.0)] },
        ];
        let dir = std::env::temp_dir().join(format!("headway-scatter-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let svg = dir.join("dots.svg");
        plot(&svg, &o).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        // four finite points, plus the legend's two dots when a font is found
        let circles = text.matches("<circle").count();
        assert!(circles == 4 || circles == 6, "{circles} circles");
        plot(&dir.join("dots.png"), &o).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! # Paper figures, reproduced — the table behind `headway reproduce`
//!
//! One [`Figure`] per figure and table of the seed papers (`../shared/seeds/`), named
//! `PAPER-figN` or `PAPER-tableN` (`ss` = Stream Scheduling, 000; `as` = Anticipatory
//! Scheduling, 001; `iopath` = the IO path evaluation, 002; `htbs` = HTBS, 004); the lab's
//! figures (`headway_lab::figures`) add those that need real guests. A figure is either
//! [`Status::Available`] — its job file(s) from `experiments/` (embedded), disk,
//! schedulers, context and sweep, the paper's statements and the verdict they give
//! ([`Statement`], [`Verdict`]) — or [`Status::Unavailable`] with the reason: not an
//! experiment (a drawing, pseudo-code, a specification table), or a capability that has
//! not landed.
//!
//! The shape checks are the paper-shape tests' predicates (`crates/sim/tests/`): the tests
//! run these same functions with these same settings, so a figure's verdict and its test
//! cannot drift apart. [`Scale::Quick`] shrinks the sizes of the figures whose full runs
//! take more than a few seconds; the outcome says so in [`Outcome::scale_note`].

pub mod antic;
pub mod htbs;
pub mod iopath;
pub mod peers;
pub mod ss;

use serde::Serialize;

pub use headway_verdict::{Check as Statement, Verdict};

use crate::{fio, simulate, ContextMode, Report, SimConfig, SimError};

/// How big the runs are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// The settings the figure is documented with (those of its shape test).
    Full,
    /// Smaller sizes where the figure allows it, for quick looks and CLI tests.
    Quick,
}

/// Whether headway can reproduce a figure.
#[derive(Clone, Copy)]
pub enum Status {
    Available(fn(Scale) -> Result<Outcome, SimError>),
    Unavailable(&'static str),
}

/// One figure of a seed paper.
#[derive(Clone, Copy)]
pub struct Figure {
    /// `PAPER-figN`: a contract (scripts and the README use it).
    pub id: &'static str,
    /// Paper, section and figure: "000 (Stream Scheduling) §3.3, Figure 3".
    pub source: &'static str,
    pub title: &'static str,
    pub status: Status,
}

impl Figure {
    pub fn available(&self) -> bool {
        matches!(self.status, Status::Available(_))
    }

    /// Run the figure's simulations and judge their shape. `None` when unavailable.
    pub fn run(&self, scale: Scale) -> Option<Result<Outcome, SimError>> {
        match self.status {
            Status::Available(f) => Some(f(scale)),
            Status::Unavailable(_) => None,
        }
    }
}

/// Every figure, in paper order.
pub fn figures() -> Vec<Figure> {
    let mut v = ss::figures();
    v.extend(antic::figures());
    v.extend(iopath::figures());
    v.extend(htbs::figures());
    v.extend(peers::figures());
    v
}

/// The figure named `id`.
pub fn find(id: &str) -> Option<Figure> {
    figures().into_iter().find(|f| f.id == id)
}

/// A line (or bar group) of the plot: a value per category.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    pub name: String,
    pub values: Vec<f64>,
}

/// Points drawn as dots (a figure that plots events, not values per category): (x, y) in
/// the outcome's axis units.
#[derive(Clone, Debug, Serialize)]
pub struct Scatter {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A number the paper reports, to mark on the plot beside headway's.
#[derive(Clone, Debug, Serialize)]
pub struct PaperPoint {
    /// The series it belongs to and the category (index into [`Outcome::categories`]).
    pub series: String,
    pub category: usize,
    pub value: f64,
}

/// One row of the report's comparison table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub quantity: String,
    pub headway: String,
    pub paper: String,
}

/// What a reproduction produced: plot data, comparison table, verdict, raw reports.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub id: String,
    pub source: String,
    pub title: String,
    /// The setting in a sentence or two (disk, context, sizes, what headway changed).
    pub setting: String,
    /// Commands that rerun the underlying simulations with `headway simulate`.
    pub commands: Vec<String>,
    /// What differs from the documented settings at this scale (empty at full scale).
    pub scale_note: String,
    pub x_label: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<Series>,
    pub paper_points: Vec<PaperPoint>,
    /// When not empty, the plot draws these dots over numeric axes instead of bars.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scatter: Vec<Scatter>,
    pub rows: Vec<Row>,
    /// `matches`, `differs` or `shape only` ([`Verdict`]).
    pub outcome: Verdict,
    /// No difference found: the outcome is not `differs` (kept for scripts that read it).
    pub matches: bool,
    /// The verdict's line: the outcome and what holds or not.
    pub verdict: String,
    /// Where headway differs from the paper, why — from a measurement (empty otherwise).
    pub explanation: String,
    /// Job files the rerun commands name, written beside the report: (path relative to the
    /// report's directory, text).
    pub files: Vec<(String, String)>,
    /// The simulator's fio-shaped reports, labelled by sweep point.
    pub reports: Vec<(String, serde_json::Value)>,
}

impl Outcome {
    /// A plain comparison of one `simulate` report: throughput per scheduler (what
    /// `headway simulate --plot` draws), no paper, no verdict.
    pub fn of_report(title: &str, report: &crate::Report) -> Outcome {
        Outcome {
            id: "simulate".into(),
            source: String::new(),
            title: title.into(),
            setting: String::new(),
            commands: Vec::new(),
            scale_note: String::new(),
            x_label: "scheduler".into(),
            y_label: "throughput, MB/s".into(),
            categories: report.runs.iter().map(|r| r.scheduler.clone()).collect(),
            series: vec![Series {
                name: "MB/s".into(),
                values: report.runs.iter().map(|r| r.aggregate.bw_bytes as f64 / 1e6).collect(),
            }],
            paper_points: Vec::new(),
            scatter: Vec::new(),
            rows: Vec::new(),
            outcome: Verdict::ShapeOnly,
            matches: true,
            verdict: String::new(),
            explanation: String::new(),
            files: Vec::new(),
            reports: Vec::new(),
        }
    }

    fn new(fig: &Figure, setting: impl Into<String>, x_label: &str, y_label: &str) -> Self {
        Outcome {
            id: fig.id.into(),
            source: fig.source.into(),
            title: fig.title.into(),
            setting: setting.into(),
            commands: Vec::new(),
            scale_note: String::new(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            categories: Vec::new(),
            series: Vec::new(),
            paper_points: Vec::new(),
            scatter: Vec::new(),
            rows: Vec::new(),
            outcome: Verdict::Differs,
            matches: false,
            verdict: String::new(),
            explanation: String::new(),
            files: Vec::new(),
            reports: Vec::new(),
        }
    }

    fn row(&mut self, quantity: impl Into<String>, headway: impl Into<String>, paper: impl Into<String>) {
        self.rows.push(Row { quantity: quantity.into(), headway: headway.into(), paper: paper.into() });
    }

    fn keep(&mut self, label: impl Into<String>, r: &Report) {
        let v = serde_json::to_value(r).expect("report serializes");
        self.reports.push((label.into(), v));
    }

    /// Set the verdict from the paper's statements, each two-sided ([`Statement`]):
    /// `numeric` when the paper gives numbers (matches / differs), else shape only. Each
    /// statement becomes a row of the report.
    fn judge_statements(&mut self, checks: &[Statement], numeric: bool) {
        let (outcome, line) = headway_verdict::verdict_of(checks, numeric);
        for (quantity, headway, paper) in headway_verdict::rows(checks) {
            self.rows.push(Row { quantity, headway, paper });
        }
        self.outcome = outcome;
        self.matches = outcome != Verdict::Differs;
        self.verdict = line;
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("outcome serializes");
        s.push('\n');
        s
    }

    /// The Markdown report: setting, commands, headway against the paper, verdict.
    pub fn markdown(&self, plot_stem: &str) -> String {
        use std::fmt::Write as _;
        let mut m = String::new();
        let _ = writeln!(m, "# {} — {}\n", self.id, self.title);
        let _ = writeln!(m, "{}\n", self.source);
        let _ = writeln!(m, "**Verdict:** {}\n", self.verdict);
        if !self.explanation.is_empty() {
            let _ = writeln!(m, "## Why headway differs\n\n{}\n", self.explanation);
        }
        let _ = writeln!(m, "## Setting\n\n{}\n", self.setting);
        if !self.scale_note.is_empty() {
            let _ = writeln!(m, "Reduced size (`--quick`): {}\n", self.scale_note);
        }
        let _ = writeln!(m, "## headway against the paper\n");
        let _ = writeln!(m, "| quantity | headway | paper |\n|---|---|---|");
        for r in &self.rows {
            let _ = writeln!(m, "| {} | {} | {} |", r.quantity, r.headway, r.paper);
        }
        let _ = writeln!(m, "\n![{}]({plot_stem}.svg)\n", self.id);
        let _ = writeln!(
            m,
            "{} by {} (PNG: `{plot_stem}.png`; raw reports: `{plot_stem}.json`).\n",
            self.y_label, self.x_label
        );
        let files = if self.files.is_empty() {
            String::new()
        } else {
            let names: Vec<&str> = self.files.iter().map(|(n, _)| n.as_str()).collect();
            format!(
                " The job files ({}) are written beside this report; run from its directory.",
                names.join(", ")
            )
        };
        let _ = writeln!(m, "## Rerun\n\nThe whole figure, then each run on its own.{files}\n");
        let _ = writeln!(m, "```sh\nheadway reproduce {} --out DIR", self.id);
        for c in &self.commands {
            let _ = writeln!(m, "{c}");
        }
        let _ = writeln!(m, "```");
        m
    }
}

/// `text` with its one `from` replaced by `to`; panics when `from` is not there, so that a
/// changed job file cannot silently leave a figure unreduced.
pub fn edit(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "`{from}` once in the job text");
    text.replacen(from, to, 1)
}

/// The text of `experiments/NAME`, embedded so that figures run from any directory.
fn exp(name: &str) -> &'static str {
    match name {
        "par-read.fio" => include_str!("../../../../experiments/par-read.fio"),
        "par-read-buffered.fio" => include_str!("../../../../experiments/par-read-buffered.fio"),
        "par-read-raid0.fio" => include_str!("../../../../experiments/par-read-raid0.fio"),
        "postmark-ss.fio" => include_str!("../../../../experiments/postmark-ss.fio"),
        "multi-threads.fio" => include_str!("../../../../experiments/multi-threads.fio"),
        "pvfs.fio" => include_str!("../../../../experiments/pvfs.fio"),
        "xen-ftp.fio" => include_str!("../../../../experiments/xen-ftp.fio"),
        "as-fig4-seq.fio" => include_str!("../../../../experiments/as-fig4-seq.fio"),
        "as-fig4-alter.fio" => include_str!("../../../../experiments/as-fig4-alter.fio"),
        "as-fig4-random.fio" => include_str!("../../../../experiments/as-fig4-random.fio"),
        "as-fig7-adversary.fio" => include_str!("../../../../experiments/as-fig7-adversary.fio"),
        "as-fig12-stride.fio" => include_str!("../../../../experiments/as-fig12-stride.fio"),
        "htbs-fig3-seqread.fio" => include_str!("../../../../experiments/htbs-fig3-seqread.fio"),
        "htbs-fig5-rates.fio" => include_str!("../../../../experiments/htbs-fig5-rates.fio"),
        "iopath-fig8-writes.fio" => include_str!("../../../../experiments/iopath-fig8-writes.fio"),
        _ => panic!("experiments/{name} is not embedded"),
    }
}

/// A simulation of job-file `text` (labelled `label`) on built-in drive `disk`.
pub fn config(text: &str, label: &str, disk: &str, schedulers: &[&str], context: ContextMode) -> SimConfig {
    let disk = headway_disk::builtin(disk).expect("a built-in drive");
    SimConfig {
        jobfile: fio::parse_str(text, label).expect("an embedded job file parses"),
        run: crate::RunSpec { context, ..crate::RunSpec::new(disk).with_schedulers(schedulers) },
    }
}

fn run(cfg: &SimConfig) -> Result<Report, SimError> {
    simulate(cfg, |_, _| {})
}

/// Aggregate bytes per simulated second of the run named `sched`.
pub fn bw(r: &Report, sched: &str) -> f64 {
    r.runs.iter().find(|x| x.scheduler == sched).map(|x| x.aggregate.bw_bytes as f64).unwrap_or(0.0)
}

/// The drive's figures in the run named `sched`.
pub fn device<'a>(r: &'a Report, sched: &str) -> &'a crate::report::DeviceReport {
    &r.runs.iter().find(|x| x.scheduler == sched).expect("a run of that scheduler").device
}

/// The share of the drive's commands that needed a seek in the run named `sched`.
pub fn seek_share(r: &Report, sched: &str) -> f64 {
    let d = device(r, sched);
    d.seek_count as f64 / d.requests.max(1) as f64
}

/// `headway simulate` command line for a figure's run.
fn cmd(file: &str, disk: &str, scheds: &str, ctx: &str, extra: &str) -> String {
    format!("headway simulate experiments/{file} --disk {disk} --context {ctx} --scheduler {scheds}{extra}")
}

impl Outcome {
    /// A run of job text `text` that no file of `experiments/` holds: written beside the
    /// report as `path` (the run's label too, written once however many runs use it), with
    /// the command that reruns it exactly.
    fn rerun_file(&mut self, path: &str, text: &str, disk: &str, scheds: &str, ctx: &str, extra: &str) {
        if !self.files.iter().any(|(p, _)| p == path) {
            self.files.push((path.to_string(), text.to_string()));
        }
        self.commands.push(format!(
            "headway simulate {path} --disk {disk} --context {ctx} --scheduler {scheds}{extra}"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let figs = figures();
        let mut ids: Vec<_> = figs.iter().map(|f| f.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), figs.len());
        for f in &figs {
            let (paper, fig) = f.id.split_once('-').expect("PAPER-figN");
            if f.id == "peers-sim" {
                continue; // not a paper's figure: the papers' workloads under today's schedulers
            }
            assert!(["ss", "as", "iopath", "htbs"].contains(&paper), "{}", f.id);
            assert!(fig.starts_with("fig") || fig.starts_with("table"), "{}", f.id);
        }
    }
}

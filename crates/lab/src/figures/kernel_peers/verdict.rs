//! kernel-peers' verdicts, tables and plots from its points (pure: the tests feed results
//! of either shape).
//!
//! - process information present: `stream` at least [`PRESENT_OVER_BEST`] of the best of
//!   the other schedulers;
//! - missing or misleading: at least [`MISSING_OVER_BEST`] of the best of the others;
//! - no harm expected: at least [`NO_HARM_OVER_DEADLINE`] of `mq-deadline`;
//! - a writer beside readers: under `stream`, each side gets at least [`NOT_STARVED`] of
//!   what it gets alone under `stream` (the `*-alone` workloads);
//! - an interactive reader: its p99 latency under `stream` against `bfq`'s, reported with
//!   stream's counters, no bound asserted.
//!
//! Beside each, the simulator's ranking of the same job's schedulers must have the kernel's
//! best and worst (lower is better for a latency).

use super::super::{check_rows, Check, FigureData, Scale, Verdict};

/// The bands.
pub const PRESENT_OVER_BEST: f64 = 0.95;
pub const MISSING_OVER_BEST: f64 = 1.5;
pub const NO_HARM_OVER_DEADLINE: f64 = 0.9;
pub const NOT_STARVED: f64 = 0.2;
/// Repeats agree when (highest - lowest) / median is at most this.
pub const REPEAT_SPREAD: f64 = 0.10;

/// What the scheduler is told about who issued a request, and so what is judged.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// Each stream is its own process: Linux's schedulers can tell them apart.
    Present,
    /// Streams share a process or are issued by others' threads.
    Missing,
    /// Nothing for a non-work-conserving scheduler to gain.
    NoHarm,
    /// A writer beside readers: neither side starved (against the `-alone` workloads).
    Starvation,
    /// One rate-limited random reader beside sequential readers: its p99, reported.
    Interactive,
    /// One side of the starvation workload alone: the yardstick, not judged.
    Alone,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Present => "process information present",
            Class::Missing => "process information missing or misleading",
            Class::NoHarm => "no harm expected",
            Class::Starvation => "no harm expected: a writer beside readers",
            Class::Interactive => "an interactive reader beside sequential readers",
            Class::Alone => "alone (the starvation verdict's yardstick)",
        }
    }

    /// The per-class figure's id suffix.
    pub fn slug(self) -> &'static str {
        match self {
            Class::Present => "present",
            Class::Missing => "missing",
            Class::NoHarm | Class::Starvation | Class::Alone => "no-harm",
            Class::Interactive => "interactive",
        }
    }

    pub fn lower_is_better(self) -> bool {
        self == Class::Interactive
    }
}

/// One workload under one column: the kernel's repeats and the model's run.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub workload: String,
    pub class: Class,
    pub column: String,
    /// `MB/s`, `tx/s`, `queries/s`, `ms p99`: the unit of `kernel` and `model`.
    pub unit: &'static str,
    /// The measure in each repeat.
    pub kernel: Vec<f64>,
    /// MB/s of each fio job name in each repeat (writer, readers; interactive, readers).
    pub parts: Vec<(String, Vec<f64>)>,
    /// The simulator's figure for the same job, or why it has none.
    pub model: Result<f64, String>,
    /// stream's counters summed over the repeats: waits caught, waits expired, streams.
    pub counters: Option<(u64, u64, u64)>,
    /// The drive's seeks (commands not starting where the last ended) in each repeat.
    pub seeks: Vec<u64>,
    /// The drive's mean time a command, ms: the emulated drive's in each repeat, and the
    /// model's.
    pub service_ms: Vec<f64>,
    pub model_service_ms: Option<f64>,
}

impl Point {
    pub fn median(&self) -> f64 {
        median(&self.kernel)
    }

    pub fn part(&self, name: &str) -> Option<f64> {
        self.parts.iter().find(|(n, _)| n == name).map(|(_, v)| median(v))
    }
}

pub fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// (highest - lowest) / median of the repeats.
pub fn spread(v: &[f64]) -> f64 {
    let (lo, hi) = v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| (l.min(x), h.max(x)));
    (hi - lo) / median(v)
}

/// The columns ordered best first by a figure (highest first, or lowest when `lower`).
pub fn ranking(points: &[&Point], lower: bool, value: impl Fn(&Point) -> f64) -> Vec<String> {
    let mut v: Vec<(&str, f64)> = points.iter().map(|p| (p.column.as_str(), value(p))).collect();
    v.sort_by(|a, b| if lower { a.1.total_cmp(&b.1) } else { b.1.total_cmp(&a.1) });
    v.into_iter().map(|(l, _)| l.to_string()).collect()
}

/// The best of the columns other than stream: (label, median), by the class's direction.
fn best_other(points: &[&Point]) -> (String, f64) {
    let lower = points.first().is_some_and(|p| p.class.lower_is_better());
    points
        .iter()
        .filter(|p| p.column != "stream")
        .map(|p| (p.column.clone(), p.median()))
        .filter(|(_, m)| m.is_finite())
        .fold((String::new(), f64::NAN), |a, b| {
            let better = if lower { b.1 < a.1 } else { b.1 > a.1 };
            if a.1.is_nan() || better {
                b
            } else {
                a
            }
        })
}

fn find<'a>(points: &[&'a Point], workload: &str, column: &str) -> Option<&'a Point> {
    points.iter().copied().find(|p| p.workload == workload && p.column == column)
}

/// Under `column`, each side's share of what it gets alone: (writer, readers).
pub fn shares(p: &Point, all: &[&Point]) -> (f64, f64) {
    let alone = |w: &str, part: &str| find(all, w, &p.column).and_then(|a| a.part(part)).unwrap_or(f64::NAN);
    let writer = p.part("writer").unwrap_or(f64::NAN) / alone("writer-alone", "writer");
    let readers = p.part("readers").unwrap_or(f64::NAN) / alone("readers-alone", "readers");
    (writer, readers)
}

/// The checks of one workload's points; `all` holds every workload's (the starvation
/// verdict reads the `-alone` ones).
pub fn judge(points: &[&Point], all: &[&Point]) -> Vec<Check> {
    let Some(first) = points.first() else { return Vec::new() };
    let w = &first.workload;
    let class = first.class;
    let med = |label: &str| points.iter().find(|p| p.column == label).map_or(f64::NAN, |p| p.median());
    let stream = med("stream");
    let (best_label, best) = best_other(points);
    let mut checks = Vec::new();
    let over = |r: f64, lo: f64, of: &str| {
        Check::new(
            format!("{w} ({}): stream over {of}", class.name()),
            format!("{r:.2}x"),
            format!("at least {lo}x"),
            r.is_finite() && r >= lo,
        )
    };
    match class {
        Class::Present => {
            checks.push(over(stream / best, PRESENT_OVER_BEST, &format!("the best other, {best_label}")))
        }
        Class::Missing => {
            checks.push(over(stream / best, MISSING_OVER_BEST, &format!("the best other, {best_label}")))
        }
        Class::NoHarm => checks.push(over(stream / med("mq-deadline"), NO_HARM_OVER_DEADLINE, "mq-deadline")),
        Class::Starvation => {
            if let Some(p) = points.iter().find(|p| p.column == "stream") {
                let (writer, readers) = shares(p, all);
                checks.push(Check::new(
                    format!(
                        "{w} ({}): under stream, the writer's and the readers' share of what each gets alone",
                        class.name()
                    ),
                    format!("writer {writer:.2}, readers {readers:.2}"),
                    format!("each at least {NOT_STARVED}"),
                    writer >= NOT_STARVED && readers >= NOT_STARVED,
                ));
            }
        }
        Class::Interactive | Class::Alone => {}
    }
    if class == Class::Alone {
        return checks;
    }
    // the simulator ranks the schedulers as the kernel does (the best and the worst alike)
    let lower = class.lower_is_better();
    if points.iter().all(|p| p.model.is_ok()) {
        let kernel = ranking(points, lower, Point::median);
        let model = ranking(points, lower, |p| *p.model.as_ref().unwrap_or(&f64::NAN));
        let agree = kernel.first() == model.first() && kernel.last() == model.last();
        checks.push(Check::new(
            format!("{w}: the simulator's ranking, best to worst"),
            model.join(" > "),
            format!("the kernel's {} (same best and worst)", kernel.join(" > ")),
            agree,
        ));
    }
    checks
}

/// The table rows of one workload: each column's median relative to the best Linux
/// scheduler, the spread of its repeats, the drive's seeks, the model's figure and stream's
/// counters; the starvation workload's shares; the interactive reader's comparison with bfq.
pub fn table_rows(points: &[&Point], all: &[&Point]) -> Vec<(String, String, String)> {
    let (_, best) = best_other(points);
    let mut rows: Vec<(String, String, String)> = points
        .iter()
        .map(|p| {
            let m = p.median();
            let s = spread(&p.kernel);
            let flag = if p.kernel.len() > 1 && s > REPEAT_SPREAD { " (repeats disagree)" } else { "" };
            let counters = p.counters.map_or(String::new(), |(c, e, n)| {
                format!("; waits caught {c}, expired {e}, streams {n}")
            });
            let seeks = if p.seeks.is_empty() {
                String::new()
            } else {
                format!("; the drive's commands not starting where the last ended (seeks) {}", p.seeks.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
            };
            let service = if p.service_ms.is_empty() {
                String::new()
            } else {
                format!(
                    "; the drive {:.2} ms a command{}",
                    median(&p.service_ms),
                    p.model_service_ms.map_or(String::new(), |m| format!(" (simulator {m:.2})"))
                )
            };
            let parts = p
                .parts
                .iter()
                .map(|(n, v)| format!("; {n} {:.2} MB/s", median(v)))
                .collect::<String>();
            (
                format!("{} under {}", p.workload, p.column),
                format!(
                    "{m:.2} {unit} = {:.2}x the best Linux scheduler; repeats {} (spread {:.0}%{flag}){parts}{seeks}{service}{counters}",
                    m / best,
                    p.kernel.iter().map(|b| format!("{b:.2}")).collect::<Vec<_>>().join(", "),
                    s * 100.0,
                    unit = p.unit,
                ),
                match &p.model {
                    Ok(v) => format!("simulator {v:.2} {}", p.unit),
                    Err(why) => format!("simulator: none ({why})"),
                },
            )
        })
        .collect();
    let Some(first) = points.first() else { return rows };
    match first.class {
        Class::Starvation => {
            for p in points {
                let (writer, readers) = shares(p, all);
                rows.push((
                    format!("{} under {}: share of alone", p.workload, p.column),
                    format!("writer {writer:.2}, readers {readers:.2}"),
                    format!("not starved: each at least {NOT_STARVED}"),
                ));
            }
        }
        Class::Interactive => {
            let get = |l: &str| points.iter().find(|p| p.column == l);
            if let (Some(s), Some(b)) = (get("stream"), get("bfq")) {
                rows.push((
                    format!("{}: stream's p99 against bfq's", first.workload),
                    interactive_words(s, b),
                    "reported, no bound".into(),
                ));
            }
        }
        _ => {}
    }
    rows
}

/// Why the simulator ranks a workload's schedulers otherwise, from the drive's time a command
/// under the work-conserving schedulers (none, mq-deadline, kyber): where the model's drive
/// takes more than twice the emulated drive's, the model serves the interleaved readers a
/// seek at a time where the emulated drive, under the guest's pace, read each stream ahead
/// into its cache. `None` when the ranking agrees or nothing was measured.
pub fn ranking_explanation(points: &[&Point]) -> Option<String> {
    let first = points.first()?;
    let lower = first.class.lower_is_better();
    if points.iter().any(|p| p.model.is_err()) || first.class == Class::Alone {
        return None;
    }
    let kernel = ranking(points, lower, Point::median);
    let model = ranking(points, lower, |p| *p.model.as_ref().unwrap_or(&f64::NAN));
    if kernel.first() == model.first() && kernel.last() == model.last() {
        return None;
    }
    let wc: Vec<&&Point> =
        points.iter().filter(|p| ["none", "mq-deadline", "kyber"].contains(&p.column.as_str())).collect();
    let k = median(&wc.iter().map(|p| median(&p.service_ms)).collect::<Vec<_>>());
    let m = median(&wc.iter().filter_map(|p| p.model_service_ms).collect::<Vec<_>>());
    if !(k.is_finite() && m.is_finite()) {
        return None;
    }
    let why = if m > 2.0 * k {
        "the model's drive seeks between the interleaved streams, where the emulated drive, fed at the \
         guest's pace, read each stream ahead into its cache between commands: a state of the drive the \
         model's readers, all starting at once, never reach"
    } else if k > 2.0 * m {
        "the emulated drive under the guest seeks where the model's drive is served from its cache"
    } else {
        "the drive's time a command agrees within 2x: the difference is in the schedulers' decisions or \
         the guest's pace, not the drive's state"
    };
    Some(format!(
        "{}: the simulator ranks {} first and {} last, the kernel {} and {}. Under the work-conserving \
         schedulers the drive took {k:.2} ms a command in the guest's runs and {m:.2} ms in the model's: {why}.",
        first.workload,
        model.first().map_or("", String::as_str),
        model.last().map_or("", String::as_str),
        kernel.first().map_or("", String::as_str),
        kernel.last().map_or("", String::as_str),
    ))
}

/// The interactive reader under stream against bfq, in words, from the counters.
pub fn interactive_words(stream: &Point, bfq: &Point) -> String {
    let (s, b) = (stream.median(), bfq.median());
    let mut t = format!("stream {s:.1} ms, bfq {b:.1} ms: stream's p99 is {:.2}x bfq's", s / b);
    if s > b {
        if let Some((caught, expired, _)) = stream.counters {
            let waits = caught + expired;
            t += &format!(
                "; stream waited {waits} times for a stream's next request ({caught} caught, {expired} expired) \
                 and serves a stream until its slice ends, so a lone random read queued behind a stream waits for \
                 the slice: stream knows no process to favour"
            );
        }
    }
    t
}

/// The verdict line of `checks`.
pub fn verdict(checks: &[Check]) -> (Verdict, String) {
    let not: Vec<&str> = checks.iter().filter(|c| !c.held).map(|c| c.what.as_str()).collect();
    if not.is_empty() {
        (Verdict::Matches, format!("matches: all {} statements hold", checks.len()))
    } else {
        (
            Verdict::Differs,
            format!(
                "differs: {} of {} statements hold — not: {}",
                checks.len() - not.len(),
                checks.len(),
                not.join("; ")
            ),
        )
    }
}

/// One figure's data from its points.
pub fn figure_data(
    id: String,
    title: String,
    scale: Scale,
    commands: Vec<String>,
    columns: &[&str],
    points: &[Point],
    all: &[Point],
) -> FigureData {
    let all: Vec<&Point> = all.iter().collect();
    let mut categories: Vec<String> = Vec::new();
    for p in points {
        if !categories.contains(&p.workload) {
            categories.push(p.workload.clone());
        }
    }
    let of = |w: &str| points.iter().filter(|p| p.workload == w).collect::<Vec<_>>();
    let mut checks = Vec::new();
    let mut rows = Vec::new();
    for w in &categories {
        checks.extend(judge(&of(w), &all));
        rows.extend(table_rows(&of(w), &all));
    }
    // plotted: each column relative to the best other (a latency inverted: above 1 is better)
    let series = columns
        .iter()
        .map(|c| {
            let v = categories
                .iter()
                .map(|w| {
                    let ps = of(w);
                    let (_, best) = best_other(&ps);
                    let lower = ps.first().is_some_and(|p| p.class.lower_is_better());
                    ps.iter().find(|p| p.column == *c).map_or(0.0, |p| {
                        let r = if lower { best / p.median() } else { p.median() / best };
                        if r.is_finite() {
                            r
                        } else {
                            0.0
                        }
                    })
                })
                .collect();
            (c.to_string(), v)
        })
        .collect();
    let (outcome, verdict) = verdict(&checks);
    let explanation =
        categories.iter().filter_map(|w| ranking_explanation(&of(w))).collect::<Vec<_>>().join("\n\n");
    let mut all_rows = check_rows(&checks);
    all_rows.extend(rows);
    FigureData {
        id,
        source: super::FIGURE.source.into(),
        title,
        setting: super::setting(),
        commands,
        scale_note: match scale {
            Scale::Quick => {
                "one repeat, 8-second runs and 64 MiB files instead of three repeats, 20 s and 256 MiB".into()
            }
            Scale::Full => String::new(),
        },
        x_label: "workload".into(),
        y_label: "throughput / the best Linux scheduler's (latency: the best's / this)".into(),
        categories,
        series,
        paper_points: Vec::new(),
        scatter: Vec::new(),
        rows: all_rows,
        outcome,
        verdict,
        explanation,
        reports: Vec::new(),
    }
}

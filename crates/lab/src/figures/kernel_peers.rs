//! `kernel-peers` (issue 41) — not a paper figure: stream scheduling against Linux's own
//! schedulers in the same kernel, on the same disk. The stream paper's claim (000 Sections
//! 1.2, 3.3-3.5): a scheduler that needs no process information wins where that
//! information is missing or misleading and loses nothing elsewhere.
//!
//! Each workload runs in real Linux 6.1 guests (Debian's cloud kernel, TCG) whose virtio
//! disk is `headway serve`'s emulated wd5000aaks behind the host's `noop`, under the guest
//! schedulers `none`, `mq-deadline`, `kyber`, `bfq`, `bfq` with `low_latency=0` and the
//! `stream` elevator (kernel/), repeated; and beside each point, the same job file in the
//! simulator under headway's scheduler of that name on the same drive model (the guest's
//! virtio queue in front of a one-command drive in arrival order, as `peers-kernel`).
//!
//! Verdicts, per workload class (two-sided: each can fail, and the tests feed both shapes):
//! - process information present (par-read, alternate-block readers): `stream` at least
//!   0.95x the best of the other schedulers;
//! - missing or misleading (one process with several streams; a thread pool submitting for
//!   others — fio's offload threads; a loop device and NFS are the next steps): at least
//!   1.5x the best of the others;
//! - no harm expected (random readers): at least 0.9x `mq-deadline`.
//!
//! The tables give each scheduler's median throughput relative to the best Linux scheduler
//! on that workload, the spread of the repeats (flagged above 10%), stream's counters
//! (waits caught and expired, streams) and the simulator's throughput, and say whether the
//! simulator ranks the schedulers as the kernel does.

use super::{check_rows, run_written, Check, FigureData, LabFigure, Scale, Verdict};
use crate::model::{Model, ModelQuery};
use crate::run::LabOptions;
use crate::LabError;

pub(super) const FIGURE: LabFigure = LabFigure {
    id: "kernel-peers",
    source: "headway lab: the stream elevator against Linux 6.1's none, mq-deadline, kyber and bfq in the same kernel",
    title: "stream scheduling against Linux's own schedulers, in the same kernel, by workload class",
    run: |s, o, l| Ok(vec![kernel_peers(s, o, l)?]),
};

/// A column of the tables: a guest scheduler with its tunables, and headway's model of it.
#[derive(Copy, Clone, Debug)]
pub struct Column {
    pub label: &'static str,
    pub guest: &'static str,
    pub tunables: &'static [(&'static str, &'static str)],
    pub model: &'static str,
}

pub const COLUMNS: [Column; 6] = [
    Column { label: "none", guest: "none", tunables: &[], model: "noop" },
    Column { label: "mq-deadline", guest: "mq-deadline", tunables: &[], model: "mq-deadline" },
    Column { label: "kyber", guest: "kyber", tunables: &[], model: "kyber" },
    Column { label: "bfq", guest: "bfq", tunables: &[], model: "bfq" },
    Column { label: "bfq-ll0", guest: "bfq", tunables: &[("low_latency", "0")], model: "bfq" },
    Column { label: "stream", guest: "stream", tunables: &[], model: "stream" },
];

/// What the scheduler is told about who issued a request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// Each stream is its own process: Linux's schedulers can tell them apart.
    Present,
    /// Streams share a process or are issued by others' threads.
    Missing,
    /// Nothing for a non-work-conserving scheduler to gain.
    NoHarm,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Present => "process information present",
            Class::Missing => "process information missing or misleading",
            Class::NoHarm => "no harm expected",
        }
    }
}

/// The bands.
pub const PRESENT_OVER_BEST: f64 = 0.95;
pub const MISSING_OVER_BEST: f64 = 1.5;
pub const NO_HARM_OVER_DEADLINE: f64 = 0.9;
/// Repeats agree when (highest - lowest) / median is at most this.
pub const REPEAT_SPREAD: f64 = 0.10;

struct Workload {
    name: &'static str,
    class: Class,
    fs: &'static str,
    job: &'static str,
    /// The simulator's job when it differs from the guest's (fio options the model lacks:
    /// the same shape in options it has).
    model_job: Option<&'static str>,
    /// The simulator's `--context` for it (`None`: the issuing process).
    model_context: Option<&'static str>,
    /// The guest runs these steps (a spec's `[workload]` section ending in fio's JSON)
    /// instead of `job`, with these kernel modules loaded.
    steps: Option<&'static str>,
    modules: &'static [&'static str],
    what: &'static str,
}

const WORKLOADS: [Workload; 6] = [
    Workload {
        name: "par-read",
        class: Class::Present,
        fs: "ext4",
        job: include_str!("../../../../experiments/lab/par-read-ext4.fio"),
        model_job: None,
        model_context: None,
        steps: None,
        modules: &[],
        what: "four processes, buffered sequential 4 KiB reads of their own 256 MiB files on ext4",
    },
    Workload {
        name: "alternate",
        class: Class::Present,
        fs: "raw",
        job: include_str!("../../../../experiments/lab/alternate-timed.fio"),
        model_job: None,
        model_context: None,
        steps: None,
        modules: &[],
        what: "two processes reading every other 64 KiB block, 4 GiB apart (the AS paper's alternate)",
    },
    Workload {
        name: "one-process",
        class: Class::Missing,
        fs: "ext4",
        job: include_str!("../../../../experiments/lab/one-process.fio"),
        model_job: Some(include_str!("../../../../experiments/lab/one-process-model.fio")),
        model_context: None,
        steps: None,
        modules: &[],
        what: "one process reading four 256 MiB files in turn, libaio at iodepth 4 (a storage daemon)",
    },
    Workload {
        name: "offload",
        class: Class::Missing,
        fs: "ext4",
        job: include_str!("../../../../experiments/lab/offload.fio"),
        model_job: Some(include_str!("../../../../experiments/lab/offload-model.fio")),
        model_context: Some("pool:4"),
        steps: None,
        modules: &[],
        what: "four sequential readers whose requests fio's offload threads submit (io_submit_mode=offload)",
    },
    Workload {
        name: "loop",
        class: Class::Missing,
        fs: "ext4",
        job: include_str!("../../../../experiments/lab/offload-model.fio"),
        model_job: None,
        model_context: Some("none"),
        steps: Some(include_str!("../../../../experiments/lab/loop-readers.toml")),
        modules: &["loop"],
        what: "four sequential readers of files in an ext4 image on a loop device (the loop worker issues the disk's requests)",
    },
    Workload {
        name: "random-readers",
        class: Class::NoHarm,
        fs: "raw",
        job: include_str!("../../../../experiments/lab/random-readers.fio"),
        model_job: None,
        model_context: None,
        steps: None,
        modules: &[],
        what: "four processes, direct random 4 KiB reads, 8 GiB apart",
    },
];

/// `job` shortened for a quick look.
fn scaled(job: &str, scale: Scale) -> String {
    match scale {
        Scale::Full => job.to_string(),
        Scale::Quick => job
            .replace("runtime=20s", "runtime=8s")
            .replace("size=256m", "size=64m")
            .replace("offset_increment=256m", "offset_increment=64m"),
    }
}

/// One workload under one column: the kernel's repeats and the model's run.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub workload: String,
    pub class: Class,
    pub column: String,
    /// Aggregate bytes/s of each repeat.
    pub kernel_bw: Vec<f64>,
    pub model_bw: f64,
    /// stream's counters summed over the repeats: waits caught, waits expired, streams.
    pub counters: Option<(u64, u64, u64)>,
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

/// The columns ordered best first by a throughput, labels only.
pub fn ranking(points: &[&Point], bw: impl Fn(&Point) -> f64) -> Vec<String> {
    let mut v: Vec<(&str, f64)> = points.iter().map(|p| (p.column.as_str(), bw(p))).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v.into_iter().map(|(l, _)| l.to_string()).collect()
}

/// The checks of one workload's points.
pub fn judge(points: &[&Point]) -> Vec<Check> {
    let Some(first) = points.first() else { return Vec::new() };
    let w = &first.workload;
    let med = |label: &str| points.iter().find(|p| p.column == label).map_or(f64::NAN, |p| median(&p.kernel_bw));
    let stream = med("stream");
    let (best_label, best) = points
        .iter()
        .filter(|p| p.column != "stream")
        .map(|p| (p.column.as_str(), median(&p.kernel_bw)))
        .fold(("", f64::NEG_INFINITY), |a, b| if b.1 > a.1 { b } else { a });
    let mut checks = Vec::new();
    let over = |r: f64, lo: f64, of: &str, class: Class| {
        Check::new(
            format!("{w} ({}): stream over {of}", class.name()),
            format!("{r:.2}x"),
            format!("at least {lo}x"),
            r.is_finite() && r >= lo,
        )
    };
    match first.class {
        Class::Present => checks.push(over(stream / best, PRESENT_OVER_BEST, &format!("the best other, {best_label}"), first.class)),
        Class::Missing => checks.push(over(stream / best, MISSING_OVER_BEST, &format!("the best other, {best_label}"), first.class)),
        Class::NoHarm => checks.push(over(stream / med("mq-deadline"), NO_HARM_OVER_DEADLINE, "mq-deadline", first.class)),
    }
    // the simulator ranks the schedulers as the kernel does (the best and the worst alike)
    let kernel = ranking(points, |p| median(&p.kernel_bw));
    let model = ranking(points, |p| p.model_bw);
    let agree = kernel.first() == model.first() && kernel.last() == model.last();
    checks.push(Check::new(
        format!("{w}: the simulator's ranking, best to worst"),
        model.join(" > "),
        format!("the kernel's {} (same best and worst)", kernel.join(" > ")),
        agree,
    ));
    checks
}

/// The table rows of one workload: each column's median relative to the best Linux
/// scheduler, the spread of its repeats, the model's throughput and stream's counters.
pub fn table_rows(points: &[&Point]) -> Vec<(String, String, String)> {
    let best = points
        .iter()
        .filter(|p| p.column != "stream")
        .map(|p| median(&p.kernel_bw))
        .fold(f64::NEG_INFINITY, f64::max);
    points
        .iter()
        .map(|p| {
            let m = median(&p.kernel_bw);
            let s = spread(&p.kernel_bw);
            let flag = if p.kernel_bw.len() > 1 && s > REPEAT_SPREAD { " (repeats disagree)" } else { "" };
            let counters = p.counters.map_or(String::new(), |(c, e, n)| {
                format!("; waits caught {c}, expired {e}, streams {n}")
            });
            (
                format!("{} under {}", p.workload, p.column),
                format!(
                    "{:.2} MB/s = {:.2}x the best Linux scheduler; repeats {} (spread {:.0}%{flag}){counters}",
                    m / 1e6,
                    m / best,
                    p.kernel_bw.iter().map(|b| format!("{:.2}", b / 1e6)).collect::<Vec<_>>().join(", "),
                    s * 100.0
                ),
                format!("simulator {:.2} MB/s", p.model_bw / 1e6),
            )
        })
        .collect()
}

/// The model's drive queue: the guest's virtio queue (32) in front of the server's noop and a
/// one-command drive, in arrival order; but one command under `stream`, whose elevator keeps
/// one request in a rotational device (`device_depth` 1) and holds the rest itself.
pub fn model_queue_depth(c: &Column) -> u32 {
    if c.guest == "stream" {
        1
    } else {
        32
    }
}

fn query(c: &Column, context: Option<&str>) -> ModelQuery {
    ModelQuery {
        disk: "wd5000aaks".into(),
        scheduler: c.model.into(),
        tunables: c.tunables.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        queue_depth: model_queue_depth(c),
        fcfs: true,
        context: context.map(str::to_string),
    }
}

fn spec_text(name: &str, w: &Workload, columns: &[&Column], job_file: &str, steps: &str, repeat: u32) -> String {
    let fs = w.fs;
    let pairs = columns.iter().map(|c| format!("[\"noop\", \"{}\"]", c.guest)).collect::<Vec<_>>().join(", ");
    let mut t = format!(
        "# kernel-peers: {name}\nname = \"kernel-peers-{name}\"\nrepeat = {repeat}\npairs = [{pairs}]\n[guest]\nfs = \"{fs}\"\nmemory_mb = 512\n"
    );
    if !w.modules.is_empty() {
        t += &format!("modules = [{}]\n", w.modules.iter().map(|m| format!("\"{m}\"")).collect::<Vec<_>>().join(", "));
    }
    let tunables: Vec<_> = columns.iter().flat_map(|c| c.tunables.iter()).collect();
    if !tunables.is_empty() {
        t += "[guest.tunables]\n";
        for (k, v) in tunables {
            t += &format!("{k} = {v}\n");
        }
    }
    t += "[headway]\ndisk = \"wd5000aaks\"\n";
    if w.steps.is_some() {
        t + steps
    } else {
        t + &format!("[workload]\nfio = \"{job_file}\"\n")
    }
}

/// The columns by spec: those without tunables share one, bfq with `low_latency=0` has its
/// own (a spec's tunables are all its points'); the suffix names the spec.
fn groups() -> [(&'static str, Vec<&'static Column>); 2] {
    [
        ("", COLUMNS.iter().filter(|c| c.tunables.is_empty()).collect()),
        ("-bfq-ll0", COLUMNS.iter().filter(|c| !c.tunables.is_empty()).collect()),
    ]
}

fn kernel_peers(scale: Scale, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<FigureData, LabError> {
    let model: &dyn Model = opts.model.as_deref().ok_or_else(|| LabError::Missing {
        what: "the simulator (kernel-peers runs each job file in the model too: run it with \
               `headway reproduce kernel-peers`)"
            .into(),
    })?;
    let repeat = if scale == Scale::Quick { 1 } else { 3 };
    let dir = opts.out.join("kernel-peers");
    let mut commands = Vec::new();
    let mut points = Vec::new();
    for w in &WORKLOADS {
        let job = scaled(w.job, scale);
        let model_job = scaled(w.model_job.unwrap_or(w.job), scale);
        let steps = scaled(w.steps.unwrap_or(""), scale);
        let file = format!("{}.fio", w.name);
        for (suffix, cols) in &groups() {
            let name = format!("{}{suffix}", w.name);
            let spec = spec_text(&name, w, cols, &file, &steps, repeat);
            let (report, cmd) = run_written(&dir, &name, &spec, &[(&file, &job)], opts, log)?;
            commands.push(cmd);
            for c in cols {
                let runs: Vec<_> = report.runs.iter().filter(|r| r.lab.guest_scheduler == c.guest).collect();
                if runs.is_empty() {
                    return Err(LabError::Missing { what: format!("{name}: the runs under guest {}", c.guest) });
                }
                let counter = |k: &str| -> u64 {
                    runs.iter().filter_map(|r| r.lab.guest_counters.get(k).and_then(|v| v.as_u64())).sum()
                };
                let m = model
                    .fio(&model_job, &query(c, w.model_context))
                    .map_err(|e| LabError::Tool { what: format!("the model's run of {name}"), msg: e })?;
                points.push(Point {
                    workload: w.name.into(),
                    class: w.class,
                    column: c.label.into(),
                    kernel_bw: runs.iter().map(|r| r.aggregate.bw_bytes as f64).collect(),
                    model_bw: m.bw_bytes,
                    counters: (c.guest == "stream").then(|| {
                        (counter("waits_caught"), counter("waits_expired"), counter("streams"))
                    }),
                });
            }
        }
    }
    Ok(figure(scale, commands, &points))
}

/// The figure from its points (pure: the tests feed it results of either shape).
pub fn figure(scale: Scale, commands: Vec<String>, points: &[Point]) -> FigureData {
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
        checks.extend(judge(&of(w)));
        rows.extend(table_rows(&of(w)));
    }
    let series = COLUMNS
        .iter()
        .map(|c| {
            let v = categories
                .iter()
                .map(|w| {
                    let ps = of(w);
                    let best = ps
                        .iter()
                        .filter(|p| p.column != "stream")
                        .map(|p| median(&p.kernel_bw))
                        .fold(f64::NEG_INFINITY, f64::max);
                    ps.iter().find(|p| p.column == c.label).map_or(0.0, |p| median(&p.kernel_bw) / best)
                })
                .collect();
            (c.label.to_string(), v)
        })
        .collect();
    let not: Vec<&str> = checks.iter().filter(|c| !c.held).map(|c| c.what.as_str()).collect();
    let (outcome, verdict) = if not.is_empty() {
        (Verdict::Matches, format!("matches: all {} statements hold", checks.len()))
    } else {
        (
            Verdict::Differs,
            format!("differs: {} of {} statements hold — not: {}", checks.len() - not.len(), checks.len(), not.join("; ")),
        )
    };
    let mut all_rows = check_rows(&checks);
    all_rows.extend(rows);
    FigureData {
        id: FIGURE.id.into(),
        source: FIGURE.source.into(),
        title: FIGURE.title.into(),
        setting: format!(
            "Real Linux 6.1 guests (Debian's cloud kernel, TCG) on headway serve's emulated \
             wd5000aaks, host noop; guest schedulers {}; the simulator beside each point under \
             headway's scheduler of the same name (drive taking 32 commands in arrival order, one under \
             stream, whose elevator keeps one request in the device). \
             Workloads: {}.",
            COLUMNS.iter().map(|c| c.label).collect::<Vec<_>>().join(", "),
            WORKLOADS.iter().map(|w| format!("{} ({}): {}", w.name, w.class.name(), w.what)).collect::<Vec<_>>().join("; ")
        ),
        commands,
        scale_note: match scale {
            Scale::Quick => "one repeat, 8-second runs and 64 MiB files instead of three repeats, 20 s and 256 MiB".into(),
            Scale::Full => String::new(),
        },
        x_label: "workload".into(),
        y_label: "throughput / the best Linux scheduler's".into(),
        categories,
        series,
        paper_points: Vec::new(),
        scatter: Vec::new(),
        rows: all_rows,
        outcome,
        verdict,
        explanation: String::new(),
        reports: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(w: &str, class: Class, column: &str, bw: &[f64], model: f64) -> Point {
        Point {
            workload: w.into(),
            class,
            column: column.into(),
            kernel_bw: bw.to_vec(),
            model_bw: model,
            counters: None,
        }
    }

    fn held(checks: &[Check], what: &str) -> bool {
        checks.iter().find(|c| c.what.contains(what)).unwrap_or_else(|| panic!("no check {what}: {checks:?}")).held
    }

    #[test]
    fn present_needs_stream_near_the_best_and_fails_below() {
        let mk = |s: f64| {
            vec![
                point("par-read", Class::Present, "mq-deadline", &[30.0, 31.0, 29.0], 20.0),
                point("par-read", Class::Present, "bfq", &[60.0, 62.0, 58.0], 90.0),
                point("par-read", Class::Present, "stream", &[s, s, s], 95.0),
            ]
        };
        let ok = mk(58.0);
        let ok = judge(&ok.iter().collect::<Vec<_>>());
        assert!(held(&ok, "stream over the best other, bfq"), "{ok:?}");
        let bad = mk(50.0);
        let bad = judge(&bad.iter().collect::<Vec<_>>());
        assert!(!held(&bad, "stream over the best other"), "50 / 60 < 0.95");
    }

    #[test]
    fn missing_needs_one_and_a_half_times_the_best() {
        let mk = |s: f64| {
            vec![
                point("one-process", Class::Missing, "bfq", &[20.0], 20.0),
                point("one-process", Class::Missing, "stream", &[s], 40.0),
            ]
        };
        assert!(held(&judge(&mk(31.0).iter().collect::<Vec<_>>()), "stream over"));
        assert!(!held(&judge(&mk(29.0).iter().collect::<Vec<_>>()), "stream over"));
    }

    #[test]
    fn no_harm_is_against_mq_deadline_not_the_best() {
        let mk = |s: f64| {
            vec![
                point("random-readers", Class::NoHarm, "mq-deadline", &[10.0], 10.0),
                point("random-readers", Class::NoHarm, "bfq", &[20.0], 9.0),
                point("random-readers", Class::NoHarm, "stream", &[s], 11.0),
            ]
        };
        assert!(held(&judge(&mk(9.5).iter().collect::<Vec<_>>()), "stream over mq-deadline"));
        assert!(!held(&judge(&mk(8.5).iter().collect::<Vec<_>>()), "stream over mq-deadline"));
    }

    #[test]
    fn the_simulators_ranking_must_share_the_best_and_the_worst() {
        let same = vec![
            point("w", Class::Present, "a", &[3.0], 30.0),
            point("w", Class::Present, "b", &[2.0], 25.0),
            point("w", Class::Present, "stream", &[1.0], 5.0),
        ];
        assert!(held(&judge(&same.iter().collect::<Vec<_>>()), "ranking"));
        let swapped = vec![
            point("w", Class::Present, "a", &[3.0], 5.0),
            point("w", Class::Present, "b", &[2.0], 25.0),
            point("w", Class::Present, "stream", &[1.0], 30.0),
        ];
        assert!(!held(&judge(&swapped.iter().collect::<Vec<_>>()), "ranking"));
    }

    #[test]
    fn the_table_flags_repeats_that_disagree() {
        let p = [
            point("w", Class::Present, "bfq", &[10.0, 10.5, 10.2], 1.0),
            point("w", Class::Present, "stream", &[10.0, 14.0, 12.0], 1.0),
        ];
        let rows = table_rows(&p.iter().collect::<Vec<_>>());
        assert!(!rows[0].1.contains("disagree"), "{rows:?}");
        assert!(rows[1].1.contains("spread 33% (repeats disagree)"), "{rows:?}");
        assert!((median(&[3.0, 1.0, 2.0]) - 2.0).abs() < 1e-12 && (median(&[4.0, 1.0]) - 2.5).abs() < 1e-12);
    }

    #[test]
    fn every_workloads_specs_parse_at_both_scales() {
        let dir = std::env::temp_dir().join(format!("kernel-peers-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for w in &WORKLOADS {
            std::fs::write(dir.join("job.fio"), scaled(w.job, Scale::Quick)).unwrap();
            for scale in [Scale::Full, Scale::Quick] {
                let steps = scaled(w.steps.unwrap_or(""), scale);
                for (_, cols) in groups() {
                    let text = spec_text(w.name, w, &cols, "job.fio", &steps, 3);
                    let spec = crate::spec::Spec::parse(&dir.join("kernel-peers.toml"), &text)
                        .unwrap_or_else(|e| panic!("{}: {e}\n{text}", w.name));
                    assert_eq!(spec.repeat, 3);
                }
            }
            if w.steps.is_some() {
                assert!(scaled(w.steps.unwrap(), Scale::Quick).contains("--size=64m --numjobs=4 --runtime=8s"));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_figure_is_matches_only_when_every_statement_holds() {
        let good = vec![
            point("par-read", Class::Present, "mq-deadline", &[30.0], 20.0),
            point("par-read", Class::Present, "stream", &[60.0], 90.0),
        ];
        assert_eq!(figure(Scale::Quick, Vec::new(), &good).outcome, Verdict::Matches);
        let bad = vec![
            point("par-read", Class::Present, "mq-deadline", &[30.0], 20.0),
            point("par-read", Class::Present, "stream", &[20.0], 90.0),
        ];
        let f = figure(Scale::Quick, Vec::new(), &bad);
        assert_eq!(f.outcome, Verdict::Differs);
        assert!(f.verdict.contains("not: par-read"), "{}", f.verdict);
        assert_eq!(f.series.len(), COLUMNS.len());
    }
}

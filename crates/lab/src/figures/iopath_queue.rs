//! `iopath-fig15-postmark` — the IO-path paper (seeds/002) §6.1, Figure 15, in real guests
//! with the paper's own workload: PostMark SS on ReiserFS against the drive's queue depth,
//! on the 18 GB (cheetah-15k3) and 300 GB (cheetah-10k7) disks. (The simulator's
//! `iopath-fig15` runs 4 KiB random reads in PostMark's place.)
//!
//! `headway serve`'s emulated drive holds up to `queue_depth` commands and picks among them
//! (its SPTF, [`headway_nbd::queued`]); the server's scheduler hands it that many at once.
//!
//! `iopath-fig16` is the same runs with the drive's write-back cache (§6.2): writes complete
//! in the drive's buffer, and a full buffer refuses commands ([`judge_fig16`] has its
//! statements); it also runs the write-through drive at the deepest queue, for the paper's
//! comparison of the two policies.
//!
//! The paper gives no numbers for Figure 15, only its shape, checked as statements: a
//! deeper queue raises PostMark's throughput ("by only increasing the disk queue depth, we
//! improve overall application performance": the deepest at least 1.05x depth 1, for every
//! disk and scheduler); the gain is larger on the 300 GB disk ("more pronounced for the
//! newer 300 GB disk"); under Deadline at the deepest queue the two disks come within 10%
//! ("very close").

use super::{check_rows, list, run_written, toml_list, verdict_of, Check, FigureData, LabFigure, Scale};
use crate::run::LabOptions;
use crate::LabError;

pub(super) const FIGURE: LabFigure = LabFigure {
    id: "iopath-fig15-postmark",
    source: "seeds/002 (IO path) §6.1, Figure 15 — PostMark in real guests",
    title: "PostMark SS on ReiserFS against the drive's queue depth, 18 GB and 300 GB disks",
    run: |s, o, l| Ok(vec![fig15(s, o, l)?]),
};

pub(super) const FIGURE16: LabFigure = LabFigure {
    id: "iopath-fig16",
    source: "seeds/002 (IO path) §6.2, Figure 16 — PostMark in real guests",
    title: "PostMark SS on ReiserFS against the queue depth with the drive's write-back cache, 18 GB and 300 GB disks",
    run: |s, o, l| Ok(vec![fig16(s, o, l)?]),
};

/// Depth 1 "the highest (or very close to it)": at least this share of the best depth.
pub const DEPTH1_NEAR_BEST: f64 = 0.95;
/// Noop's "performance degradation" with a deeper queue: some deeper queue below this share
/// of depth 1.
pub const DEGRADED: f64 = 0.97;

/// Figure 16's statements from transactions/s with the write-back cache, `wb[disk][scheduler]
/// [depth]`, and with write-through at the deepest queue, `wt[disk][scheduler]` (disks in
/// [`DISKS`] order, depths ascending from 1, the schedulers `scheds`).
pub fn judge_fig16(
    scheds: &[&str],
    depths: &[u32],
    wb: &[Vec<Vec<f64>>; 2],
    wt: &[Vec<f64>; 2],
) -> Vec<Check> {
    let measured =
        wb.iter().flatten().flatten().chain(wt.iter().flatten()).all(|t| *t > 0.0 && t.is_finite());
    if !measured {
        return vec![Check::new(
            "every point measured",
            format!("{wb:?} {wt:?}"),
            "throughput at every depth",
            false,
        )];
    }
    let best = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    let mut v = Vec::new();
    for (d, (_, name)) in DISKS.iter().enumerate() {
        let shares: Vec<f64> = wb[d].iter().map(|t| t[0] / best(t)).collect();
        v.push(Check::new(
            format!("{name}: depth 1 the highest, or very close to it, under every scheduler"),
            format!("depth 1 at {}x the best depth ({})", list(&shares, 2), scheds.join(", ")),
            format!(
                "\"the highest (or very close to it) throughput possible\" (at least {DEPTH1_NEAR_BEST}x)"
            ),
            shares.iter().all(|s| *s >= DEPTH1_NEAR_BEST),
        ));
    }
    if let Some(noop) = scheds.iter().position(|s| *s == "noop") {
        let worst: Vec<f64> = (0..2)
            .map(|d| wb[d][noop][1..].iter().cloned().fold(f64::MAX, f64::min) / wb[d][noop][0])
            .collect();
        v.push(Check::new(
            "Noop: a deeper queue degrades throughput on both disks",
            format!("worst deeper depth {}x depth 1 (18 GB, 300 GB)", list(&worst, 2)),
            format!("\"commonly results in performance degradation ... No-Op\" (below {DEGRADED}x)"),
            worst.iter().all(|w| *w < DEGRADED),
        ));
    }
    if let (Some(i4), Some(i16)) = (depths.iter().position(|d| *d == 4), depths.iter().position(|d| *d == 16))
    {
        let series: Vec<&Vec<f64>> = wb.iter().flatten().collect();
        let at4 = series.iter().filter(|t| t[i4] < t[i16]).count();
        v.push(Check::new(
            "the minimum often at depth 4, not 16",
            format!("depth 4 below depth 16 in {at4} of {} disk-scheduler series", series.len()),
            "\"the minimum throughput is often at queue depth of 4 and not at the higher queue depth of 16\" (most series)",
            2 * at4 > series.len(),
        ));
    }
    let mut close = Vec::new();
    for d in 0..2 {
        for s in 0..scheds.len() {
            close.push(best(&wb[d][s]) / wt[d][s]);
        }
    }
    v.push(Check::new(
        "the best write-back throughput and write-through's at the deepest queue very close",
        format!("write-back best / write-through deepest: {}x", list(&close, 2)),
        "\"very close\" (within 10% for every disk and scheduler)",
        close.iter().all(|r| (r - 1.0).abs() <= 0.10),
    ));
    v
}

/// (model, the paper's name for it)
pub const DISKS: [(&str, &str); 2] = [("cheetah-15k3", "18 GB"), ("cheetah-10k7", "300 GB")];
const DEPTHS: [u32; 4] = [1, 4, 16, 64];
const DEPTHS_QUICK: [u32; 3] = [1, 4, 16];
const SCHEDULERS: [&str; 4] = ["noop", "deadline", "as", "cfq"];
const SCHEDULERS_QUICK: [&str; 2] = ["noop", "deadline"];

/// The deepest queue over depth 1, at least: "we improve overall application performance".
pub const GAIN_MIN: f64 = 1.05;
/// Deadline's two disks at the deepest queue, within: "very close".
pub const CLOSE: f64 = 0.10;

/// The statements from transactions/s: `tps[disk][scheduler][depth]` (disks in [`DISKS`]
/// order; `deadline` the index of Deadline among the schedulers).
pub fn judge_fig15(scheds: &[&str], tps: &[Vec<Vec<f64>>; 2]) -> Vec<Check> {
    let measured = tps.iter().flatten().flatten().all(|t| *t > 0.0 && t.is_finite());
    if !measured {
        return vec![Check::new(
            "every point measured",
            format!("{tps:?}"),
            "throughput at every depth",
            false,
        )];
    }
    let gain = |d: usize, s: usize| tps[d][s].last().unwrap() / tps[d][s][0];
    let mut v = Vec::new();
    for (d, (_, name)) in DISKS.iter().enumerate() {
        let gains: Vec<f64> = (0..scheds.len()).map(|s| gain(d, s)).collect();
        v.push(Check::new(
            format!("{name}: the deepest queue raises throughput under every scheduler"),
            format!("{}x ({})", list(&gains, 2), scheds.join(", ")),
            format!("\"we improve overall application performance\" (at least {GAIN_MIN}x)"),
            gains.iter().all(|g| *g >= GAIN_MIN),
        ));
    }
    let more: Vec<bool> = (0..scheds.len()).map(|s| gain(1, s) > gain(0, s)).collect();
    v.push(Check::new(
        "the gain larger on the 300 GB disk under every scheduler",
        format!(
            "300 GB {}x, 18 GB {}x",
            list(&(0..scheds.len()).map(|s| gain(1, s)).collect::<Vec<_>>(), 2),
            list(&(0..scheds.len()).map(|s| gain(0, s)).collect::<Vec<_>>(), 2)
        ),
        "\"more pronounced for the newer 300 GB disk\"",
        more.iter().all(|m| *m),
    ));
    if let Some(dl) = scheds.iter().position(|s| *s == "deadline") {
        let (a, b) = (*tps[0][dl].last().unwrap(), *tps[1][dl].last().unwrap());
        let apart = (b / a - 1.0).abs();
        v.push(Check::new(
            "Deadline, deepest queue: the two disks close",
            format!("300 GB {b:.0} against 18 GB {a:.0} tx/s ({:.0}% apart)", apart * 100.0),
            format!("\"very close\" (within {:.0}%)", CLOSE * 100.0),
            apart <= CLOSE,
        ));
    }
    v
}

/// The runs of one figure: their commands and reports.
struct Runs {
    commands: Vec<String>,
    reports: Vec<(String, serde_json::Value)>,
}

/// PostMark SS on ReiserFS on `disk` with the drive `depth` deep and its write cache
/// `cache` (`through`, `back`), under `scheds`: per scheduler, transactions/s, the drive's
/// time per command (ms: the workload's seconds over the commands the server sent the drive
/// in it; the drive is busy most of it) and those commands.
#[allow(clippy::too_many_arguments)]
fn postmark_point(
    id: &str,
    disk: &str,
    depth: u32,
    cache: &str,
    scheds: &[&str],
    runs: &mut Runs,
    opts: &LabOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<[f64; 3]>, LabError> {
    let dir = opts.out.join(id);
    let name = if cache == "through" {
        format!("{disk}-depth{depth}")
    } else {
        format!("{disk}-depth{depth}-{cache}")
    };
    let text = format!(
        "# {id}: PostMark SS on ReiserFS, {disk}, drive queue depth {depth}, write-{cache} (seeds/002 §6)\n\
         name = \"{id}-{name}\"\n[guest]\nkernel = \"generic\"\nfs = \"reiserfs\"\nguest_scheduler = \"none\"\n\
         memory_mb = 256\ntimeout_s = 5400\n[headway]\ndisk = \"{disk}\"\nschedulers = [{quoted}]\n\
         queue_depth = {depth}\nwrite_cache = \"{cache}\"\nsize = \"16G\"\n\
         [workload.postmark]\nnumber = 10000\ntransactions = 20000\nsize_min = 9216\nsize_max = 15360\n",
        quoted = toml_list(scheds)
    );
    let (report, cmd) = run_written(&dir, &name, &text, &[], opts, log)?;
    runs.commands.push(cmd);
    let points = scheds
        .iter()
        .map(|sched| {
            let run = report.runs.iter().find(|r| r.scheduler == *sched);
            let tps = run.and_then(|r| r.postmark.as_ref()).map_or(0.0, |p| p.transactions_per_s);
            let w = run.and_then(|r| r.server.first()).map(|s| &s.workload).filter(|w| w.marked);
            let cmds = w.map_or(0, |w| w.drive_reads + w.drive_writes) as f64;
            let secs = w.map_or(0.0, |w| w.to_s - w.from_s);
            let cmd_ms = if cmds > 0.0 { secs * 1e3 / cmds } else { 0.0 };
            [tps, cmd_ms, cmds]
        })
        .collect();
    runs.reports.push((name, serde_json::to_value(&report).unwrap_or_default()));
    Ok(points)
}

/// Per disk, scheduler and depth with the write cache `cache`: transactions/s, the drive's
/// ms per command and its commands ([`postmark_point`]).
fn depth_matrix(
    id: &str,
    cache: &str,
    depths: &[u32],
    scheds: &[&str],
    runs: &mut Runs,
    opts: &LabOptions,
    log: &mut dyn FnMut(&str),
) -> Result<[[Vec<Vec<f64>>; 2]; 3], LabError> {
    let zero = || vec![vec![0.0; depths.len()]; scheds.len()];
    let mut m = [[zero(), zero()], [zero(), zero()], [zero(), zero()]];
    for (d, (disk, _)) in DISKS.iter().enumerate() {
        for (k, depth) in depths.iter().enumerate() {
            let point = postmark_point(id, disk, *depth, cache, scheds, runs, opts, log)?;
            for (s, values) in point.into_iter().enumerate() {
                for (q, v) in values.into_iter().enumerate() {
                    m[q][d][s][k] = v;
                }
            }
        }
    }
    Ok(m)
}

/// A row per disk and scheduler: transactions/s at each depth.
fn depth_rows(
    label: &str,
    depths: &[u32],
    scheds: &[&str],
    tps: &[Vec<Vec<f64>>; 2],
) -> Vec<(String, String, String)> {
    let mut rows = Vec::new();
    for (d, (disk, paper_name)) in DISKS.iter().enumerate() {
        for (s, sched) in scheds.iter().enumerate() {
            rows.push((
                format!(
                    "{paper_name} ({disk}), {sched}: tx/s at depth {}{label}",
                    list(&depths.iter().map(|x| *x as f64).collect::<Vec<_>>(), 0)
                ),
                list(&tps[d][s], 1),
                "values not in the text".into(),
            ));
        }
    }
    rows
}

/// Why Figure 15 departs, from its points: per disk and scheduler, how much the deepest queue
/// shortened the drive's time per command (`cmd_ms[disk][scheduler][depth]`, the workload's
/// seconds over its commands) beside how much it raised transactions/s (`tps`, same layout);
/// and at the deepest queue the two disks' time per command and commands (`cmds`).
pub fn fig15_explanation(
    scheds: &[&str],
    tps: &[Vec<Vec<f64>>; 2],
    cmd_ms: &[Vec<Vec<f64>>; 2],
    cmds: &[Vec<Vec<f64>>; 2],
) -> String {
    let all = tps.iter().chain(cmd_ms).chain(cmds).flatten().flatten();
    if scheds.is_empty() || all.clone().any(|v| *v <= 0.0 || !v.is_finite()) {
        return String::new();
    }
    let last = |v: &Vec<f64>| *v.last().expect("depths");
    let mut parts = Vec::new();
    for (d, (_, name)) in DISKS.iter().enumerate() {
        let per: Vec<String> = scheds
            .iter()
            .enumerate()
            .map(|(s, sched)| {
                let (c, t) = (&cmd_ms[d][s], &tps[d][s]);
                format!(
                    "{sched} {:.2} -> {:.2} ms a command ({:.2}x shorter), {:.2}x the transactions/s",
                    c[0],
                    last(c),
                    c[0] / last(c),
                    last(t) / t[0]
                )
            })
            .collect();
        parts.push(format!("{name}: {}", per.join("; ")));
    }
    let deepest: Vec<String> = scheds
        .iter()
        .enumerate()
        .map(|(s, sched)| {
            format!(
                "{sched} {:.2} against {:.2} ms a command, {:.0} against {:.0} commands",
                last(&cmd_ms[1][s]),
                last(&cmd_ms[0][s]),
                last(&cmds[1][s]),
                last(&cmds[0][s])
            )
        })
        .collect();
    format!(
        "PostMark SS keeps the drive busy, so its throughput follows the drive's time per command (the \
         workload's seconds over the commands the server sent the drive) and how many commands it needs. \
         From the shallowest queue to the deepest: {}. At the deepest queue, 300 GB against 18 GB: {}.",
        parts.join("; "),
        deepest.join("; ")
    )
}

/// The settings the figures' reports describe.
const SETTING15: &str = "Real Linux guests (Debian's generic 6.1 kernel, 256 MB, guest scheduler none) on headway \
                  serve's emulated cheetah-15k3 and cheetah-10k7 (the paper's 18 GB and 300 GB disks; their first \
                  16 GB exported), the emulated drive holding up to the queue depth's commands and picking \
                  among them; PostMark SS (10,000 files of 9-15 KB, 20,000 transactions against the paper's \
                  100,000) on ReiserFS.";
const SETTING16: &str = "Real Linux guests (Debian's generic 6.1 kernel, 256 MB, guest scheduler none) on headway \
                  serve's emulated cheetah-15k3 and cheetah-10k7 (the paper's 18 GB and 300 GB disks; their first \
                  16 GB exported) with the drive's write-back cache: a write completes in the drive's buffer, a \
                  full buffer refuses commands, FLUSH and FUA wait for the destage. The drive holds up to the \
                  queue depth's commands and picks among them; PostMark SS (10,000 files of 9-15 KB, 20,000 \
                  transactions) on ReiserFS. The write-through drive at the deepest queue (Figure 15's point) \
                  runs too, for the paper's comparison of the two policies.";

/// A depth figure's report: its runs, series and rows, judged by `checks`.
#[allow(clippy::too_many_arguments)]
fn depth_figure(
    fig: &LabFigure,
    setting: &str,
    quick: bool,
    depths: &[u32],
    series: Vec<(String, Vec<f64>)>,
    rows: Vec<(String, String, String)>,
    checks: &[Check],
    explanation: String,
    runs: Runs,
) -> FigureData {
    let (outcome, verdict) = verdict_of(checks, false);
    FigureData {
        id: fig.id.into(),
        source: fig.source.into(),
        title: fig.title.into(),
        setting: setting.into(),
        commands: runs.commands,
        scale_note: if quick {
            "depths 1, 4, 16 and Noop and Deadline only (full: 1-64, the four schedulers)".into()
        } else {
            String::new()
        },
        x_label: "drive queue depth".into(),
        y_label: "PostMark transactions/s".into(),
        categories: depths.iter().map(|d| d.to_string()).collect(),
        series,
        paper_points: Vec::new(),
        scatter: Vec::new(),
        rows,
        outcome,
        verdict,
        explanation,
        reports: runs.reports,
    }
}

/// A plotted series per disk and scheduler: transactions/s over the depths.
fn depth_series(scheds: &[&str], tps: &[Vec<Vec<f64>>; 2]) -> Vec<(String, Vec<f64>)> {
    let mut series = Vec::new();
    for (d, (_, paper_name)) in DISKS.iter().enumerate() {
        for (s, sched) in scheds.iter().enumerate() {
            series.push((format!("{paper_name} {sched}"), tps[d][s].clone()));
        }
    }
    series
}

/// PostMark's transactions per run (both figures).
pub const TRANSACTIONS: f64 = 20_000.0;

/// Why Figure 16 departs, from its points: PostMark times its transactions in whole seconds,
/// so with the write-back drive's short runs a second is several percent of a point (the
/// resolution of the depth statements); and how far write-through at the deepest queue
/// stays behind write-back, in seconds per run. Empty without the figures.
pub fn fig16_explanation(wb: &[Vec<Vec<f64>>; 2], wt: &[Vec<f64>; 2]) -> String {
    let wb_all: Vec<f64> = wb.iter().flatten().flatten().cloned().collect();
    let wt_all: Vec<f64> = wt.iter().flatten().cloned().collect();
    if wb_all.is_empty() || wt_all.is_empty() || wb_all.iter().chain(&wt_all).any(|t| *t <= 0.0) {
        return String::new();
    }
    let secs = |t: &f64| TRANSACTIONS / t;
    let range = |v: &[f64]| {
        let s: Vec<f64> = v.iter().map(secs).collect();
        (s.iter().cloned().fold(f64::MAX, f64::min), s.iter().cloned().fold(0.0, f64::max))
    };
    let (lo, hi) = range(&wb_all);
    let (wlo, whi) = range(&wt_all);
    let best = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    let gaps: Vec<f64> =
        (0..2).flat_map(|d| wb[d].iter().zip(&wt[d]).map(|(b, t)| best(b) / t).collect::<Vec<_>>()).collect();
    format!(
        "PostMark timed its {TRANSACTIONS:.0} transactions in whole seconds: {lo:.0}-{hi:.0} s with the write-back \
         drive, so one second is {:.1}-{:.1}% of a point, about the 5% the depth statements turn on; the depths \
         differ by at most {:.0} s here. Write-through at the deepest queue took {wlo:.0}-{whi:.0} s: write-back \
         at its best is {}x it. Its writes complete in the drive's buffer and PostMark's small writes never \
         wait for the media; write-through puts each on the media first, which the queue reorders but does \
         not remove, so the deep queue closes part of the gap (Figure 15) and not, as the paper found, all \
         of it.",
        100.0 / hi,
        100.0 / lo,
        wb.iter().flatten().map(|v| range(v).1 - range(v).0).fold(0.0, f64::max),
        list(&gaps, 2)
    )
}

fn fig16(scale: Scale, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<FigureData, LabError> {
    let quick = scale == Scale::Quick;
    let depths: &[u32] = if quick { &DEPTHS_QUICK } else { &DEPTHS };
    let scheds: &[&str] = if quick { &SCHEDULERS_QUICK } else { &SCHEDULERS };
    let mut runs = Runs { commands: Vec::new(), reports: Vec::new() };
    let [wb, _, _] = depth_matrix(FIGURE16.id, "back", depths, scheds, &mut runs, opts, log)?;
    let deepest = *depths.last().expect("depths");
    let mut wt: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for (d, (disk, _)) in DISKS.iter().enumerate() {
        let point = postmark_point(FIGURE16.id, disk, deepest, "through", scheds, &mut runs, opts, log)?;
        wt[d] = point.into_iter().map(|p| p[0]).collect();
    }
    let checks = judge_fig16(scheds, depths, &wb, &wt);
    let mut rows = depth_rows(", write-back", depths, scheds, &wb);
    for (d, (disk, paper_name)) in DISKS.iter().enumerate() {
        rows.push((
            format!("{paper_name} ({disk}): tx/s write-through at depth {deepest} ({})", scheds.join(", ")),
            list(&wt[d], 1),
            "Figure 15 (values not in the text)".into(),
        ));
    }
    rows.extend(check_rows(&checks));
    let series = depth_series(scheds, &wb);
    let explanation =
        if checks.iter().any(|c| !c.held) { fig16_explanation(&wb, &wt) } else { String::new() };
    Ok(depth_figure(&FIGURE16, SETTING16, quick, depths, series, rows, &checks, explanation, runs))
}

fn fig15(scale: Scale, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<FigureData, LabError> {
    let quick = scale == Scale::Quick;
    let depths: &[u32] = if quick { &DEPTHS_QUICK } else { &DEPTHS };
    let scheds: &[&str] = if quick { &SCHEDULERS_QUICK } else { &SCHEDULERS };
    let mut runs = Runs { commands: Vec::new(), reports: Vec::new() };
    let [tps, cmd_ms, cmds] = depth_matrix(FIGURE.id, "through", depths, scheds, &mut runs, opts, log)?;
    let checks = judge_fig15(scheds, &tps);
    let mut rows = depth_rows("", depths, scheds, &tps);
    rows.extend(check_rows(&checks));
    let series = depth_series(scheds, &tps);
    let explanation = if checks.iter().any(|c| !c.held) {
        fig15_explanation(scheds, &tps, &cmd_ms, &cmds)
    } else {
        String::new()
    };
    Ok(depth_figure(&FIGURE, SETTING15, quick, depths, series, rows, &checks, explanation, runs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shape_can_fail() {
        let s = ["noop", "deadline"];
        // gains everywhere, larger on the 300 GB disk, deadline's disks close at depth 16
        let ok = [
            vec![vec![300.0, 330.0, 340.0], vec![400.0, 420.0, 430.0]],
            vec![vec![200.0, 260.0, 300.0], vec![330.0, 400.0, 420.0]],
        ];
        assert!(judge_fig15(&s, &ok).iter().all(|c| c.held), "{:?}", judge_fig15(&s, &ok));
        // flat: no gain, hence no larger gain; the disks far apart
        let flat = [vec![vec![300.0; 3], vec![400.0; 3]], vec![vec![200.0; 3], vec![200.0; 3]]];
        assert_eq!(
            judge_fig15(&s, &flat).iter().filter(|c| c.held).count(),
            0,
            "{:?}",
            judge_fig15(&s, &flat)
        );
        // a missing point
        let missing = [vec![vec![0.0, 1.0, 1.0], vec![1.0; 3]], vec![vec![1.0; 3], vec![1.0; 3]]];
        assert!(!judge_fig15(&s, &missing)[0].held);
    }

    #[test]
    fn fig15_explanation_sets_command_times_beside_throughput() {
        let s = ["noop", "deadline"];
        let tps = [
            vec![vec![400.0, 600.0, 800.0], vec![450.0, 650.0, 760.0]],
            vec![vec![350.0, 540.0, 770.0], vec![400.0, 550.0, 640.0]],
        ];
        let cmd =
            [vec![vec![4.0, 3.0, 2.0], vec![3.6, 2.8, 2.4]], vec![vec![5.0, 3.5, 2.5], vec![4.4, 3.4, 2.9]]];
        let n = [vec![vec![18000.0; 3], vec![18400.0; 3]], vec![vec![20000.0; 3], vec![20800.0; 3]]];
        let e = fig15_explanation(&s, &tps, &cmd, &n);
        assert!(
            e.contains("18 GB: noop 4.00 -> 2.00 ms a command (2.00x shorter), 2.00x the transactions/s"),
            "{e}"
        );
        assert!(
            e.contains("300 GB: noop 5.00 -> 2.50 ms a command (2.00x shorter), 2.20x the transactions/s"),
            "{e}"
        );
        assert!(e.contains("deadline 2.90 against 2.40 ms a command, 20800 against 18400 commands"), "{e}");
        let missing = [vec![vec![0.0, 1.0, 1.0], vec![1.0; 3]], vec![vec![1.0; 3], vec![1.0; 3]]];
        assert!(fig15_explanation(&s, &missing, &cmd, &n).is_empty());
    }

    #[test]
    fn fig16_statements_can_fail() {
        let s = ["noop", "deadline"];
        let depths = [1, 4, 16];
        // the paper's shape: depth 1 best, noop degraded, depth 4 the dip, close to write-through
        let wb = [
            vec![vec![700.0, 600.0, 650.0], vec![720.0, 700.0, 715.0]],
            vec![vec![600.0, 520.0, 560.0], vec![640.0, 600.0, 630.0]],
        ];
        let wt = [vec![680.0, 700.0], vec![590.0, 620.0]];
        let ok = judge_fig16(&s, &depths, &wb, &wt);
        assert!(ok.iter().all(|c| c.held), "{ok:?}");
        // the opposite: a deeper queue helps, depth 16 the dip, write-through far behind
        let rising = [
            vec![vec![400.0, 600.0, 500.0], vec![400.0, 650.0, 600.0]],
            vec![vec![300.0, 520.0, 480.0], vec![330.0, 600.0, 580.0]],
        ];
        let far = [vec![300.0, 300.0], vec![200.0, 200.0]];
        let bad = judge_fig16(&s, &depths, &rising, &far);
        assert_eq!(bad.iter().filter(|c| c.held).count(), 0, "{bad:?}");
        assert!(!judge_fig16(&s, &depths, &wb, &[vec![0.0, 1.0], vec![1.0, 1.0]])[0].held);
    }

    #[test]
    fn fig16_explanation_gives_the_resolution_and_the_gap() {
        // the session 14 quick run: 16-18 s with write-back, 24-31 s with write-through
        let wb = [
            vec![vec![1250.0, 1111.1, 1250.0], vec![1250.0, 1250.0, 1111.1]],
            vec![vec![1052.6, 1111.1, 1111.1], vec![1111.1, 1111.1, 1176.5]],
        ];
        let wt = [vec![800.0, 833.3], vec![645.2, 714.3]];
        let e = fig16_explanation(&wb, &wt);
        assert!(e.contains("16-19 s with the write-back drive"), "{e}");
        assert!(e.contains("one second is 5.3-6.2% of a point"), "{e}");
        assert!(e.contains("differ by at most 2 s"), "{e}");
        assert!(e.contains("took 24-31 s") && e.contains("1.56, 1.50, 1.72, 1.65x"), "{e}");
        assert!(fig16_explanation(&wb, &[vec![0.0, 1.0], vec![1.0, 1.0]]).is_empty());
    }
}

//! `iopath-fig15-postmark` — the IO-path paper (seeds/002) §6.1, Figure 15, in real guests
//! with the paper's own workload: PostMark SS on ReiserFS against the drive's queue depth,
//! on the 18 GB (cheetah-15k3) and 300 GB (cheetah-10k7) disks. (The simulator's
//! `iopath-fig15` runs 4 KiB random reads in PostMark's place.)
//!
//! `headway serve`'s emulated drive holds up to `queue_depth` commands and picks among them
//! (its SPTF, [`headway_nbd::queued`]); the server's scheduler hands it that many at once.
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

fn fig15(scale: Scale, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<FigureData, LabError> {
    let dir = opts.out.join(FIGURE.id);
    let quick = scale == Scale::Quick;
    let depths: &[u32] = if quick { &DEPTHS_QUICK } else { &DEPTHS };
    let scheds: &[&str] = if quick { &SCHEDULERS_QUICK } else { &SCHEDULERS };
    let quoted = toml_list(scheds);
    let mut tps: [Vec<Vec<f64>>; 2] =
        [vec![vec![0.0; depths.len()]; scheds.len()], vec![vec![0.0; depths.len()]; scheds.len()]];
    let mut commands = Vec::new();
    let mut reports = Vec::new();
    for (d, (disk, _)) in DISKS.iter().enumerate() {
        for (k, depth) in depths.iter().enumerate() {
            let name = format!("{disk}-depth{depth}");
            let text = format!(
                "# {id}: PostMark SS on ReiserFS, {disk}, drive queue depth {depth} (seeds/002 §6.1)\n\
                 name = \"{id}-{name}\"\n[guest]\nkernel = \"generic\"\nfs = \"reiserfs\"\nguest_scheduler = \"none\"\n\
                 memory_mb = 256\ntimeout_s = 5400\n[headway]\ndisk = \"{disk}\"\nschedulers = [{quoted}]\n\
                 queue_depth = {depth}\nsize = \"16G\"\n\
                 [workload.postmark]\nnumber = 10000\ntransactions = 20000\nsize_min = 9216\nsize_max = 15360\n",
                id = FIGURE.id
            );
            let (report, cmd) = run_written(&dir, &name, &text, &[], opts, log)?;
            commands.push(cmd);
            for (s, sched) in scheds.iter().enumerate() {
                let run = report.runs.iter().find(|r| r.scheduler == *sched);
                tps[d][s][k] = run.and_then(|r| r.postmark.as_ref()).map_or(0.0, |p| p.transactions_per_s);
            }
            reports.push((name, serde_json::to_value(&report).unwrap_or_default()));
        }
    }
    let checks = judge_fig15(scheds, &tps);
    let (outcome, verdict) = verdict_of(&checks, false);
    let mut rows = Vec::new();
    for (d, (disk, paper_name)) in DISKS.iter().enumerate() {
        for (s, sched) in scheds.iter().enumerate() {
            rows.push((
                format!(
                    "{paper_name} ({disk}), {sched}: tx/s at depth {}",
                    list(&depths.iter().map(|x| *x as f64).collect::<Vec<_>>(), 0)
                ),
                list(&tps[d][s], 1),
                "Figure 15 (values not in the text)".into(),
            ));
        }
    }
    rows.extend(check_rows(&checks));
    let mut series = Vec::new();
    for (d, (_, paper_name)) in DISKS.iter().enumerate() {
        for (s, sched) in scheds.iter().enumerate() {
            series.push((format!("{paper_name} {sched}"), tps[d][s].clone()));
        }
    }
    Ok(FigureData {
        id: FIGURE.id.into(),
        source: FIGURE.source.into(),
        title: FIGURE.title.into(),
        setting: "Real Linux guests (Debian's generic 6.1 kernel, 256 MB, guest scheduler none) on headway \
                  serve's emulated cheetah-15k3 and cheetah-10k7 (the paper's 18 GB and 300 GB disks; their first \
                  16 GB exported), the emulated drive holding up to the queue depth's commands and picking \
                  among them; PostMark SS (10,000 files of 9-15 KB, 20,000 transactions against the paper's \
                  100,000) on ReiserFS."
            .into(),
        commands,
        scale_note: if quick { "depths 1, 4, 16 and Noop and Deadline only (full: 1-64, the four schedulers)".into() } else { String::new() },
        x_label: "drive queue depth".into(),
        y_label: "PostMark transactions/s".into(),
        categories: depths.iter().map(|d| d.to_string()).collect(),
        series,
        paper_points: Vec::new(),
        rows,
        outcome,
        verdict,
        explanation: String::new(),
        reports,
    })
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
}

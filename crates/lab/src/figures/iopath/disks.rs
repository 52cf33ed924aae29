//! The IO-path paper (seeds/002) §6, Figures 13 and 14: PostMark's SS and LL workloads on
//! the three disks of its Table 3 — the 18 GB Cheetah 15K.3, the 146 GB 15K.4 and the 300
//! GB 10K.7 (`cheetah-15k3`, `cheetah-15k4`, `cheetah-10k7`) — with the drive's queue 1 deep:
//! Figure 13 on the four file systems under AS, Figure 14 on ReiserFS under the four
//! schedulers. One set of runs gives both (ReiserFS under AS is a point of each).
//!
//! Every disk exports its first 16 GB (as Figures 15 and 16 do): the file systems are the
//! same size on every disk, so what differs is the mechanics — the 146 GB and 300 GB disks
//! hold those 16 GB in a few percent of their cylinders, the 18 GB disk across nearly all.
//!
//! The paper's statements (words: shape only), over the eight cells of each figure (two
//! workloads by four file systems, or by four schedulers):
//! * Figure 13: "the highest application throughput is achieved for the 146 GB disk"
//!   (the 146 GB disk ahead, ties allowed, in at least 6 of 8), "with the 18 GB to a close
//!   second" (the 18 GB disk second in at least 6 of 8 and, over all cells, within
//!   [`CLOSE`] of the 146 GB disk), and the 300 GB disk "the lowest application throughput
//!   among the three" (the lowest, ties allowed, in at least 6 of 8).
//! * Figure 14: "the 146 GB disk is the one performing best under all device driver disk
//!   scheduling algorithms" (ahead in all 8, ties allowed), and "the relative gap between
//!   No-Op and the other seek-based algorithms is smaller for the newer disks" (the best of
//!   Deadline, AS and CFQ over Noop, averaged over the two workloads, below the 18 GB
//!   disk's on both newer disks).

use super::{
    list, run_written, spec_text, Check, Drive, FigureData, LabError, LabOptions, PmCell, Scale,
    FIG7_SCHEDULERS, FS4, LL, SS, TABLE2,
};

/// (model, the paper's name), in Table 3's order.
pub const DISKS: [(&str, &str); 3] =
    [("cheetah-15k3", "18 GB"), ("cheetah-15k4", "146 GB"), ("cheetah-10k7", "300 GB")];
const D18: usize = 0;
const D146: usize = 1;
const D300: usize = 2;
/// The workloads of both figures: SS and LL, indices into [`TABLE2`].
const LOADS: [usize; 2] = [SS, LL];
/// "A close second": the 18 GB disk's throughput at least this share of the 146 GB disk's.
pub const CLOSE: f64 = 0.85;
/// "Most" of the eight cells.
const MOST: usize = 6;

/// Cells per disk, workload (SS, LL) and column (a file system, or a scheduler).
pub type Cube = [[[PmCell; 4]; 2]; 3];

fn tps(c: &Cube) -> [[[f64; 4]; 2]; 3] {
    c.each_ref().map(|d| d.each_ref().map(|w| w.each_ref().map(|x| x.tps)))
}

fn measured(t: &[[[f64; 4]; 2]; 3]) -> bool {
    t.iter().flatten().flatten().all(|v| *v > 0.0 && v.is_finite())
}

/// In how many (workload, column) cells `pick` holds of the three disks' throughputs.
fn cells(t: &[[[f64; 4]; 2]; 3], pick: impl Fn([f64; 3]) -> bool) -> usize {
    (0..2)
        .flat_map(|w| (0..4).map(move |j| (w, j)))
        .filter(|&(w, j)| pick([t[0][w][j], t[1][w][j], t[2][w][j]]))
        .count()
}

/// Figure 13 from throughput per disk, workload (SS, LL) and file system.
pub fn judge_fig13(t: &[[[f64; 4]; 2]; 3]) -> Vec<Check> {
    if !measured(t) {
        return vec![Check::new("every point measured", format!("{t:?}"), "24 throughputs", false)];
    }
    let first = cells(t, |d| d[D146] >= d[D18] && d[D146] >= d[D300]);
    let second = cells(t, |d| d[D18] <= d[D146] && d[D18] >= d[D300]);
    let last = cells(t, |d| d[D300] <= d[D18] && d[D300] <= d[D146]);
    let sum = |d: usize| t[d].iter().flatten().sum::<f64>();
    let close = sum(D18) / sum(D146);
    vec![
        Check::new(
            "the 146 GB disk the fastest",
            format!("in {first} of 8"),
            format!("\"the highest application throughput is achieved for the 146 GB disk\" (at least {MOST} of 8)"),
            first >= MOST,
        ),
        Check::new(
            "the 18 GB disk a close second",
            format!("second in {second} of 8; {close:.2}x the 146 GB disk's throughput"),
            format!("\"with the 18 GB to a close second\" (at least {MOST} of 8, and at least {CLOSE}x)"),
            second >= MOST && (CLOSE..=1.0).contains(&close),
        ),
        Check::new(
            "the 300 GB disk the slowest",
            format!("in {last} of 8"),
            format!("\"the lowest application throughput among the three disk drives\" (at least {MOST} of 8)"),
            last >= MOST,
        ),
    ]
}

/// The best of Deadline, AS and CFQ over Noop, per disk, averaged over the workloads
/// (columns in [`FIG7_SCHEDULERS`]' order).
fn noop_gaps(t: &[[[f64; 4]; 2]; 3]) -> [f64; 3] {
    t.each_ref()
        .map(|d| d.iter().map(|w| w[1..].iter().cloned().fold(0.0, f64::max) / w[0]).sum::<f64>() / 2.0)
}

/// Figure 14 from throughput per disk, workload (SS, LL) and scheduler (noop, deadline, as,
/// cfq).
pub fn judge_fig14(t: &[[[f64; 4]; 2]; 3]) -> Vec<Check> {
    if !measured(t) {
        return vec![Check::new("every point measured", format!("{t:?}"), "24 throughputs", false)];
    }
    let first = cells(t, |d| d[D146] >= d[D18] && d[D146] >= d[D300]);
    let g = noop_gaps(t);
    vec![
        Check::new(
            "the 146 GB disk the fastest under every scheduler",
            format!("in {first} of 8"),
            "\"the 146 GB disk is the one performing best under all device driver disk scheduling algorithms\" (8 of 8)",
            first == 8,
        ),
        Check::new(
            "Noop's gap smaller on the newer disks",
            format!("the best elevator over Noop: 18 GB {:.2}x, 146 GB {:.2}x, 300 GB {:.2}x", g[D18], g[D146], g[D300]),
            "\"the relative gap between No-Op and the other seek-based algorithms is smaller for the newer disks\"",
            g[D146] < g[D18] && g[D300] < g[D18],
        ),
    ]
}

/// The drive's share of the workload spent serving commands (at depth 1 the commands in
/// the drive, [`PmCell::in_drive`]) and its mean ms per command.
fn drive_busy(c: &PmCell) -> (f64, f64) {
    (c.in_drive(), crate::served::mean(&c.lat.drive_ns) / 1e6)
}

/// Why the figures depart, from the runs: per disk, how busy the drive was and how long it
/// took per command under SS on ReiserFS with AS (the point both figures share). Where the
/// drive idles most of the time, the guest's CPU (emulated by QEMU) sets the pace and the
/// disks' mechanics show only in part.
pub fn disks_explanation(fs_cube: &Cube) -> String {
    let reiserfs = FS4.iter().position(|f| *f == "reiserfs").expect("reiserfs");
    let parts: Vec<String> = DISKS
        .iter()
        .enumerate()
        .map(|(d, (_, name))| {
            let (busy, ms) = drive_busy(&fs_cube[d][0][reiserfs]);
            let (busy_ll, ms_ll) = drive_busy(&fs_cube[d][1][reiserfs]);
            format!(
                "{name}: SS {:.1} tx/s, the drive busy {:.0}% at {ms:.2} ms a command; LL {:.1} tx/s, busy {:.0}% at \
                 {ms_ll:.2} ms",
                fs_cube[d][0][reiserfs].tps,
                busy * 100.0,
                fs_cube[d][1][reiserfs].tps,
                busy_ll * 100.0
            )
        })
        .collect();
    format!(
        "PostMark's throughput follows the drive only while the drive is busy: on ReiserFS under AS, {}. \
         The drive's time per command orders the disks by their mechanics; the share of the workload the \
         drive was busy says how much of that reaches the throughput — the rest is the guest's own time, \
         its CPU emulated by QEMU.",
        parts.join("; ")
    )
}

/// The cells where the 146 GB disk was not the fastest, with the three disks' throughputs.
pub fn misses(cube: &Cube, columns: &[&str]) -> String {
    let t = tps(cube);
    let cells: Vec<String> = (0..2)
        .flat_map(|w| (0..4).map(move |j| (w, j)))
        .filter(|&(w, j)| t[D146][w][j] < t[D18][w][j] || t[D146][w][j] < t[D300][w][j])
        .map(|(w, j)| {
            format!(
                "{} {}: 146 GB {:.1}, 18 GB {:.1}, 300 GB {:.1} tx/s",
                TABLE2[LOADS[w]].name, columns[j], t[D146][w][j], t[D18][w][j], t[D300][w][j]
            )
        })
        .collect();
    if cells.is_empty() {
        return String::new();
    }
    format!("The 146 GB disk was not the fastest in: {}.", cells.join("; "))
}

const SETTING: &str = "Real Linux guests (Debian's generic 6.1 kernel, 256 MB, guest scheduler none) on headway \
    serve's emulated cheetah-15k3, cheetah-15k4 and cheetah-10k7 (the paper's 18 GB, 146 GB and 300 GB disks of \
    Table 3; each exports its first 16 GB) with the drive's queue 1 deep (the paper's setting for these \
    figures). PostMark SS and LL of Table 2 (fewer transactions: SS 20,000, LL 2,000 against 100,000 and \
    20,000); Figure 13 on Ext2, Ext3, ReiserFS and XFS under headway's AS on the server, Figure 14 on \
    ReiserFS under noop, deadline, as and cfq. One set of runs gives both.";

/// Both figures' runs: per disk and workload, the four file systems under AS, then ReiserFS
/// under Noop, Deadline and CFQ.
pub(super) fn run(
    scale: Scale,
    opts: &LabOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<FigureData>, LabError> {
    let id = "iopath-disks";
    let dir = opts.out.join(id);
    let mut fs_cube: Cube = Default::default();
    let mut sched_cube: Cube = Default::default();
    let (mut commands, mut reports) = (Vec::new(), Vec::new());
    for (d, (disk, _)) in DISKS.iter().enumerate() {
        let drive = Drive { disk, depth: 1, size: Some("16G") };
        for (w, &l) in LOADS.iter().enumerate() {
            let load = &TABLE2[l];
            for (part, fs, scheds) in [
                ("fs", &FS4[..], &["as"][..]),
                ("sched", &["reiserfs"][..], &["noop", "deadline", "cfq"][..]),
            ] {
                let label = format!("{disk}-{}-{part}", load.name.to_ascii_lowercase());
                let text = spec_text(load, scale, (id, &label), fs, scheds, drive);
                let (report, cmd) = run_written(&dir, &label, &text, &[], opts, log)?;
                commands.push(cmd);
                let cell = |f: &str, s: &str| {
                    PmCell::of(report.runs.iter().find(|r| r.lab.fs == f && r.scheduler == s))
                };
                if part == "fs" {
                    for (j, f) in FS4.iter().enumerate() {
                        fs_cube[d][w][j] = cell(f, "as");
                    }
                    let as_col = FIG7_SCHEDULERS.iter().position(|s| *s == "as").expect("as");
                    sched_cube[d][w][as_col] = cell("reiserfs", "as");
                } else {
                    for (j, s) in FIG7_SCHEDULERS.iter().enumerate().filter(|(_, s)| **s != "as") {
                        sched_cube[d][w][j] = cell("reiserfs", s);
                    }
                }
                reports.push((label, serde_json::to_value(&report).unwrap_or_default()));
            }
        }
    }
    let figure = |fig: &str,
                  cube: &Cube,
                  (x_label, columns): (&str, &[&str]),
                  judge: fn(&[[[f64; 4]; 2]; 3]) -> Vec<Check>| {
        let t = tps(cube);
        let checks = judge(&t);
        let mut series = Vec::new();
        let mut rows = Vec::new();
        for (d, (disk, name)) in DISKS.iter().enumerate() {
            for (w, &l) in LOADS.iter().enumerate() {
                series.push((format!("{name} {}", TABLE2[l].name), t[d][w].to_vec()));
                rows.push((
                    format!("{name} ({disk}), {}: tx/s ({})", TABLE2[l].name, columns.join(", ")),
                    list(&t[d][w], 1),
                    format!("Figure {} (values not in the text)", &fig["iopath-fig".len()..]),
                ));
            }
        }
        let (outcome, verdict) = super::verdict_of(&checks, false);
        rows.extend(super::check_rows(&checks));
        let (_, source, title) = *super::FIGURES.iter().find(|f| f.0 == fig).expect("listed");
        FigureData {
            id: fig.into(),
            source: source.into(),
            title: title.into(),
            setting: SETTING.into(),
            commands: commands.clone(),
            scale_note: if scale == Scale::Quick {
                format!(
                    "LL with {} files and {} transactions; SS as at full scale",
                    TABLE2[LL].quick.0, TABLE2[LL].quick.1
                )
            } else {
                String::new()
            },
            x_label: x_label.into(),
            y_label: "PostMark transactions/s".into(),
            categories: columns.iter().map(|c| c.to_string()).collect(),
            series,
            paper_points: Vec::new(),
            scatter: Vec::new(),
            rows,
            outcome,
            verdict,
            explanation: if checks.iter().any(|c| !c.held) {
                format!("{} {}", disks_explanation(&fs_cube), misses(cube, columns))
            } else {
                String::new()
            },
            reports: reports.clone(),
        }
    };
    Ok(vec![
        figure("iopath-fig13", &fs_cube, ("file system", &FS4), judge_fig13),
        figure("iopath-fig14", &sched_cube, ("scheduler", &FIG7_SCHEDULERS), judge_fig14),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Throughputs per disk: `per_disk[d]` in every cell.
    fn flat(per_disk: [f64; 3]) -> [[[f64; 4]; 2]; 3] {
        per_disk.map(|v| [[v; 4]; 2])
    }

    #[test]
    fn fig13_wants_146_first_18_close_second_300_last() {
        assert!(judge_fig13(&flat([95.0, 100.0, 70.0])).iter().all(|c| c.held));
        // the opposite order: 300 GB first, 146 GB last
        let k = judge_fig13(&flat([90.0, 70.0, 100.0]));
        assert!(k.iter().all(|c| !c.held), "{k:?}");
        // the 18 GB disk second but far behind: not close
        let k = judge_fig13(&flat([60.0, 100.0, 50.0]));
        assert!(k[0].held && !k[1].held && k[2].held, "{k:?}");
        // a missing point is never a match
        let mut t = flat([95.0, 100.0, 70.0]);
        t[2][1][3] = 0.0;
        assert!(judge_fig13(&t).iter().all(|c| !c.held));
    }

    #[test]
    fn fig14_wants_146_first_everywhere_and_noop_closer_on_new_disks() {
        // noop, deadline, as, cfq per disk: the gap 1.5x on 18 GB, 1.1x on the newer disks
        let disk = |noop: f64, best: f64| [[noop, best, best * 0.95, best * 0.9]; 2];
        let paper = [disk(60.0, 90.0), disk(100.0, 110.0), disk(70.0, 77.0)];
        assert!(judge_fig14(&paper).iter().all(|c| c.held), "{:?}", judge_fig14(&paper));
        // the opposite: the 18 GB disk fastest somewhere, Noop's gap widest on the new disks
        let opposite = [disk(100.0, 110.0), disk(60.0, 105.0), disk(50.0, 80.0)];
        assert!(judge_fig14(&opposite).iter().all(|c| !c.held), "{:?}", judge_fig14(&opposite));
        assert_eq!(noop_gaps(&paper).map(|g| (g * 100.0).round()), [150.0, 110.0, 110.0]);
    }

    #[test]
    fn misses_name_the_cells_the_146_gb_disk_lost() {
        let mut cube: Cube = Default::default();
        for (d, v) in [(D18, 100.0), (D146, 110.0), (D300, 90.0)] {
            for cell in cube[d].iter_mut().flatten() {
                cell.tps = v;
            }
        }
        assert_eq!(misses(&cube, &FIG7_SCHEDULERS), "");
        cube[D18][0][1].tps = 120.0;
        assert_eq!(
            misses(&cube, &FIG7_SCHEDULERS),
            "The 146 GB disk was not the fastest in: SS deadline: 146 GB 110.0, 18 GB 120.0, 300 GB 90.0 tx/s."
        );
    }

    #[test]
    fn specs_name_the_disk_the_depth_and_the_export() {
        let t = spec_text(
            &TABLE2[SS],
            Scale::Quick,
            ("iopath-disks", "cheetah-15k4-ss-fs"),
            &FS4,
            &["as"],
            Drive { disk: "cheetah-15k4", depth: 1, size: Some("16G") },
        );
        assert!(t.contains("name = \"iopath-disks-cheetah-15k4-ss-fs\""), "{t}");
        assert!(
            t.contains("disk = \"cheetah-15k4\"\nschedulers = [\"as\"]\nqueue_depth = 1\nsize = \"16G\"\n"),
            "{t}"
        );
        let dir = std::env::temp_dir().join(format!("headway-disks-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("s.toml");
        std::fs::write(&p, &t).unwrap();
        crate::spec::Spec::load(&p).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

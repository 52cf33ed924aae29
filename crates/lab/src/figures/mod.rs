//! Figures that need real guests: `headway reproduce ID` runs these through the lab.
//!
//! * `iopath` — the IO-path paper (seeds/002) §§3-5, Figures 2-7: PostMark's workloads of
//!   its Table 2 on Ext2, Ext3, ReiserFS and XFS under Anticipatory scheduling (Figures 2-6,
//!   one set of runs), and on ReiserFS under the four device-driver schedulers (Figure 7).
//! * `iopath_queue` — the IO-path paper §6.1, Figure 15, with its own workload: PostMark
//!   SS on ReiserFS against the emulated drive's queue depth, 18 GB and 300 GB disks.
//! * `htbs` — the HTBS paper (seeds/004) §IV, Figure 4: 1-16 dd readers of 100 MB files
//!   through ext3 under pClock and HTBS.
//! * `andrew` — the anticipatory paper (seeds/001) §4.3, Figure 8: the Andrew benchmark's
//!   mkdir, cp, stat and scan phases with two clients (busybox standing in).
//! * `gnuld` — the anticipatory paper (seeds/001) §4.5, Figure 10: one and two linkers
//!   over 385 small object files (binutils' `ld` standing in for the paper's GNU linker).
//! * `tpcb` — the anticipatory paper (seeds/001) §4.6, Figure 11: TPC-B-like queries from
//!   two clients (SQLite standing in for the paper's MySQL), update or select, one database
//!   or two.
//! * `xen` — the Stream Scheduling paper (seeds/000) §3.4, Figure 5's Xen case: four
//!   FTP-like readers in one guest, then in each of two guests.
//! * `peers` — not a paper figure: Linux 6.1's schedulers in the guest (bfq, mq-deadline,
//!   kyber) beside headway's on the server (stream, as, cfq).
//! * `ss_elevator` — the Stream Scheduling paper's Figures 3, 4, 5 (multi-threads) and 7(a)
//!   with the `stream` elevator in the guest against the guest's mq-deadline and none.
//! * `kernel_peers` — not a paper figure: the `stream` elevator against Linux's own
//!   schedulers in the same kernel, by workload class.
//! * `peers_kernel` — not a paper figure: headway's models of bfq, mq-deadline and kyber
//!   against the kernel's own on the same job files and drive model (throughput and each
//!   job's share of the drive's time, two-sided).
//!
//! Every figure checks the paper's words or numbers as two-sided statements ([`Check`]):
//! a value with a band, or a shape that the opposite result fails. A figure whose paper
//! gives numbers is `matches` or `differs`; one that gives only words is `shape only`, its
//! statements reported as held or not.
//!
//! Each figure writes its specs (and job files) under `OUT/ID/`, so the commands in its
//! report rerun every point exactly. Figures measured on the same runs come out of one run
//! (`iopath-fig2` to `iopath-fig6`: asking for any of them writes all five).

mod andrew;
mod gnuld;
mod htbs;
mod iopath;
mod iopath_queue;
mod kernel_peers;
mod peers;
mod peers_kernel;
mod ss_elevator;
mod tpcb;
mod xen;

use std::path::Path;

use serde::Serialize;

use crate::run::{run_spec, LabOptions, LabReport};
use crate::spec::Spec;
use crate::LabError;

pub use iopath::{
    judge_fig10, judge_fig11, judge_fig13, judge_fig14, judge_fig2, judge_fig3, judge_fig4, judge_fig5,
    judge_fig6, judge_fig7, PmCell,
};
pub use peers::PEERS;
pub use xen::{judge_xen, XEN_SCHEDULERS};

/// How big the runs are.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scale {
    Full,
    /// Fewer transactions and smaller files, for a quick look.
    Quick,
}

use headway_verdict::rows as check_rows;
pub use headway_verdict::{verdict_of, Check, Verdict};

/// What a lab figure produced (the CLI draws and writes it as the simulator's figures).
#[derive(Clone, Debug, Serialize)]
pub struct FigureData {
    pub id: String,
    pub source: String,
    pub title: String,
    pub setting: String,
    pub commands: Vec<String>,
    pub scale_note: String,
    pub x_label: String,
    pub y_label: String,
    pub categories: Vec<String>,
    /// (series name, value per category)
    pub series: Vec<(String, Vec<f64>)>,
    /// (series, category index, the paper's value)
    pub paper_points: Vec<(String, usize, f64)>,
    /// (name, (x, y) points): dots over numeric axes, drawn instead of bars when not empty
    /// (a figure of events, as a trace's addresses over time).
    pub scatter: Vec<(String, Vec<(f64, f64)>)>,
    /// (quantity, headway, paper)
    pub rows: Vec<(String, String, String)>,
    pub outcome: Verdict,
    pub verdict: String,
    /// Where the figure departs from the paper, why — from the runs' own figures (empty
    /// when it does not, or when no mechanism was measured).
    pub explanation: String,
    pub reports: Vec<(String, serde_json::Value)>,
}

/// How a lab figure runs: its scale, where to, and a progress line sink. It returns every
/// figure its runs measure (the asked one among them).
pub type FigureFn = fn(Scale, &LabOptions, &mut dyn FnMut(&str)) -> Result<Vec<FigureData>, LabError>;

/// A figure the lab reproduces.
#[derive(Clone, Copy)]
pub struct LabFigure {
    pub id: &'static str,
    pub source: &'static str,
    pub title: &'static str,
    pub run: FigureFn,
}

pub fn figures() -> Vec<LabFigure> {
    let mut v = iopath::figures();
    v.push(iopath_queue::FIGURE);
    v.push(iopath_queue::FIGURE16);
    v.push(htbs::FIGURE);
    v.push(andrew::FIGURE);
    v.push(gnuld::FIGURE);
    v.push(tpcb::FIGURE);
    v.push(xen::FIGURE);
    v.push(peers::FIGURE);
    v.push(peers_kernel::FIGURE);
    v.push(kernel_peers::FIGURE);
    v.extend(ss_elevator::FIGURES);
    v
}

pub fn find(id: &str) -> Option<LabFigure> {
    figures().into_iter().find(|f| f.id == id)
}

/// Write `text` as `DIR/NAME.toml` (and `files` beside it), load it as a spec, run it.
fn run_written(
    dir: &Path,
    name: &str,
    text: &str,
    files: &[(&str, &str)],
    opts: &LabOptions,
    log: &mut dyn FnMut(&str),
) -> Result<(LabReport, String), LabError> {
    std::fs::create_dir_all(dir).map_err(|e| LabError::io(dir, e))?;
    for (f, t) in files {
        let p = dir.join(f);
        std::fs::write(&p, t).map_err(|e| LabError::io(&p, e))?;
    }
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).map_err(|e| LabError::io(&path, e))?;
    let spec = Spec::load(&path)?;
    let out = LabOptions { out: dir.join(name), ..opts.clone() };
    log(&format!("spec {}", path.display()));
    let report = run_spec(&spec, &out, log)?;
    let json = out.out.join("results.json");
    let _ = std::fs::write(&json, serde_json::to_vec_pretty(&report).unwrap_or_default());
    Ok((report, format!("headway lab run {} --out {}", path.display(), out.out.display())))
}

/// Shell commands run at once, the step failing when any of them fails:
/// `a & p0=$!; b & p1=$!; wait $p0 && wait $p1`.
fn together(commands: &[String]) -> String {
    let started: Vec<String> = commands.iter().enumerate().map(|(i, c)| format!("{c} & p{i}=$!;")).collect();
    let waits: Vec<String> = (0..commands.len()).map(|i| format!("wait $p{i}")).collect();
    format!("{} {}", started.join(" "), waits.join(" && "))
}

/// Names as a TOML list's items: `"a", "b"`.
fn toml_list(names: &[&str]) -> String {
    names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
}

/// `values` joined as `a, b, c` with `digits` decimals.
fn list(values: &[f64], digits: usize) -> String {
    values.iter().map(|v| format!("{v:.digits$}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_count_statements() {
        let ok = Check::ratio("r", 2.0, 2.0, 1.5, 2.5, "twice");
        let off = Check::ratio("s", 3.0, 2.0, 1.5, 2.5, "twice");
        assert!(ok.held && !off.held);
        assert!(!Check::ratio("nan", f64::NAN, 2.0, 1.5, 2.5, "").held);
        let (v, line) = verdict_of(&[ok.clone(), off.clone()], true);
        assert_eq!(v, Verdict::Differs);
        assert!(line.starts_with("differs: 1 of 2") && line.contains("not: s"), "{line}");
        assert_eq!(verdict_of(std::slice::from_ref(&ok), true).0, Verdict::Matches);
        assert_eq!(verdict_of(&[ok, off], false).0, Verdict::ShapeOnly);
    }

    #[test]
    fn commands_together_fail_when_one_fails() {
        let t = together(&["true".into(), "false".into()]);
        assert_eq!(t, "true & p0=$!; false & p1=$!; wait $p0 && wait $p1");
        let rc =
            |script: &str| std::process::Command::new("sh").arg("-c").arg(script).status().unwrap().success();
        assert!(!rc(&t));
        assert!(rc(&together(&["true".into(), "true".into()])));
        assert!(!rc(&together(&["false".into(), "sleep 0.1".into()])));
    }

    #[test]
    fn figure_ids_are_unique_and_found() {
        let ids: Vec<&str> = figures().iter().map(|f| f.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len(), "{ids:?}");
        for id in [
            "iopath-fig2",
            "iopath-fig3",
            "iopath-fig7",
            "htbs-fig4",
            "as-fig8",
            "as-fig10",
            "ss-fig5-xen",
            "peers",
            "peers-kernel",
        ] {
            assert!(find(id).is_some(), "{id}");
        }
        assert!(find("nope").is_none());
    }
}

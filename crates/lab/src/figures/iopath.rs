//! The IO-path paper (seeds/002) §§3-5, Figures 2-7, in real guests: PostMark's four
//! workloads of its Table 2 (SS, SL, LS, LL: small or large files, small or large working
//! sets) on the 18 GB Cheetah.
//!
//! One set of runs — each workload on Ext2, Ext3, ReiserFS and XFS under Anticipatory
//! scheduling — gives Figures 2 to 6; a second — ReiserFS under Noop, Deadline, Anticipatory
//! and CFQ — gives Figure 7. Here the guest (Debian's generic 6.1 kernel: it has reiserfs)
//! runs scheduler `none`, so headway's scheduler on the server plays the paper's
//! device-driver scheduler: what the server receives is the file system's output (after the
//! guest's plug merging and QEMU's virtio request merging), what it dispatches to the
//! emulated drive is the paper's "incoming stream at the disk". Both are counted between the
//! workload's trace markers ([`crate::served::WorkloadCounts`]).
//!
//! The paper's statements checked, with the values and bands used:
//! * Figure 2 (Ext3, AS): SS the highest throughput; SS about 5x LL ("by as much as 5
//!   times": band 3.5-6.5); SL about half SS ("seeking ... reduces Postmark throughput by as
//!   much as 50%": 0.35-0.70); LS and LL alike ("perform similarly": 0.8-1.25); disk IOPS in
//!   the table's order SS > SL > LS > LL, SS over LL 1.86x (424.62 / 227.91; band 1.4-2.3).
//! * Figure 3: ReiserFS about twice the others under SS ("as much as twice": 1.5-2.5) and
//!   1.8x XFS (§5: "as much as 80% ... compared with XFS": 1.4-2.2); under LS and LL the file
//!   systems close ("minimal": highest over lowest at most 1.15).
//! * Figure 4: the journaling file systems move about Ext2's amount of data ("no substantial
//!   difference": 0.75-1.33x Ext2 for Ext3 and ReiserFS in every workload, and XFS under LS
//!   and LL), XFS the outlier under SS and SL (more than 1.33x Ext2).
//! * Figure 5: ReiserFS sends the disk the largest reads and writes in every workload; under
//!   the large-file workloads writes are larger than reads on every file system.
//! * Figure 6: ReiserFS sends the disk the fewest requests in every workload; XFS the second
//!   fewest in at least three of the four ("with the exception of one case").
//! * Figure 7 (ReiserFS): Noop the lowest in every workload; the best scheduler about 4x Noop
//!   under SS or LS ("as low as one fourth": the larger of the two, band 3.0-5.0); Deadline
//!   the best under SS; the largest gain among the elevators (Deadline, AS, CFQ) about 20%
//!   (band 1.10-1.35); the schedulers further apart under SS and SL than under LS and LL.

use super::{check_rows, list, run_written, toml_list, verdict_of, Check, FigureData, LabFigure, Scale};
use crate::results::{DeviceReport, LabRun, PostmarkReport};
use crate::run::LabOptions;
use crate::served::{Latencies, Request, WorkloadCounts};
use crate::LabError;

mod disks;
mod driver;
mod pattern;
pub use disks::{judge_fig13, judge_fig14};
pub use driver::{judge_fig10, judge_fig11};

/// (id, source, title) of each figure.
const FIGURES: [(&str, &str, &str); 11] = [
    (
        "iopath-fig1",
        "seeds/002 (IO path) §2, Figure 1 (runs shared with Figures 2-6)",
        "access pattern of the LL workload: each request's address against its arrival (Ext3, AS; real guests)",
    ),
    (
        "iopath-fig2",
        "seeds/002 (IO path) §3, Figure 2 (runs shared with Figures 3-6)",
        "PostMark throughput and disk IOPS of the four workloads of Table 2 (Ext3, AS; real guests)",
    ),
    (
        "iopath-fig3",
        "seeds/002 (IO path) §4, Figure 3 (runs shared with Figures 2, 4-6)",
        "PostMark throughput on Ext2, Ext3, ReiserFS and XFS (real guests)",
    ),
    (
        "iopath-fig4",
        "seeds/002 (IO path) §4, Figure 4 (runs shared with Figures 2-3, 5-6)",
        "data read and written by each file system (real guests)",
    ),
    (
        "iopath-fig5",
        "seeds/002 (IO path) §4, Figure 5 (runs shared with Figures 2-4, 6)",
        "mean request size from the file system and at the disk (real guests)",
    ),
    (
        "iopath-fig6",
        "seeds/002 (IO path) §4, Figure 6 (runs shared with Figures 2-5)",
        "number of requests at the disk per file system (real guests)",
    ),
    (
        "iopath-fig7",
        "seeds/002 (IO path) §5, Figure 7",
        "PostMark under Noop, Deadline, AS and CFQ on ReiserFS (real guests)",
    ),
    (
        "iopath-fig10",
        "seeds/002 (IO path) §5, Figure 10 (runs shared with Figures 7 and 11)",
        "average response time and queue length at the device driver: four schedulers, four workloads (real guests)",
    ),
    (
        "iopath-fig11",
        "seeds/002 (IO path) §5, Figure 11 (runs shared with Figures 7 and 10)",
        "response time distribution at the device driver and at the disk, SS workload (real guests)",
    ),
    (
        "iopath-fig13",
        "seeds/002 (IO path) §6, Figure 13 (runs shared with Figure 14)",
        "PostMark SS and LL on the three disks of Table 3, four file systems, AS, queue depth 1 (real guests)",
    ),
    (
        "iopath-fig14",
        "seeds/002 (IO path) §6, Figure 14 (runs shared with Figure 13)",
        "PostMark SS and LL on the three disks of Table 3, four schedulers, ReiserFS, queue depth 1 (real guests)",
    ),
];

pub(super) fn figures() -> Vec<LabFigure> {
    FIGURES
        .iter()
        .map(|&(id, source, title)| LabFigure {
            id,
            source,
            title,
            // Figures 10 and 11 are measured on Figure 7's runs, as in the paper
            run: match id {
                "iopath-fig7" | "iopath-fig10" | "iopath-fig11" => fig7,
                "iopath-fig13" | "iopath-fig14" => disks::run,
                _ => family,
            },
        })
        .collect()
}

/// One PostMark workload of the IO-path paper's Table 2 (file sizes in bytes).
struct PostmarkLoad {
    name: &'static str,
    size_min: u64,
    size_max: u64,
    files: u32,
    /// The paper's transactions (18 GB disk).
    paper_transactions: u32,
    /// What the lab runs: (files, transactions) at full and at quick scale.
    full: (u32, u32),
    quick: (u32, u32),
}

const TABLE2: [PostmarkLoad; 4] = [
    PostmarkLoad {
        name: "SS",
        size_min: 9 * 1024,
        size_max: 15 * 1024,
        files: 10_000,
        paper_transactions: 100_000,
        full: (10_000, 20_000),
        // PostMark times in whole seconds: even quick, a run must last about a minute
        quick: (10_000, 20_000),
    },
    PostmarkLoad {
        name: "SL",
        size_min: 9 * 1024,
        size_max: 15 * 1024,
        files: 200_000,
        paper_transactions: 100_000,
        full: (200_000, 20_000),
        quick: (20_000, 5_000),
    },
    PostmarkLoad {
        name: "LS",
        size_min: 100 * 1024,
        size_max: 3 << 20,
        files: 1_000,
        paper_transactions: 20_000,
        full: (1_000, 2_000),
        quick: (200, 1_000),
    },
    PostmarkLoad {
        name: "LL",
        size_min: 100 * 1024,
        size_max: 3 << 20,
        files: 4_250,
        paper_transactions: 20_000,
        full: (4_250, 2_000),
        quick: (850, 500),
    },
];

/// The file systems of Figures 3-6, in the paper's order.
const FS4: [&str; 4] = ["ext2", "ext3", "reiserfs", "xfs"];
const EXT2: usize = 0;
const EXT3: usize = 1;
const REISERFS: usize = 2;
const XFS: usize = 3;
/// The device-driver schedulers of Figure 7, in the paper's order.
pub const FIG7_SCHEDULERS: [&str; 4] = ["noop", "deadline", "as", "cfq"];
const SS: usize = 0;
const SL: usize = 1;
const LS: usize = 2;
const LL: usize = 3;

/// The drive's command queue in every run (the paper's: "the 18 GB disk drive with a
/// queue depth of 4").
pub const DRIVE_QUEUE_DEPTH: u32 = 4;

/// Figure 2's table: disk IOPS of SS, SL, LS, LL.
pub const FIG2_IOPS: [f64; 4] = [424.62, 310.87, 278.68, 227.91];

/// One PostMark run: its throughput and what went through the server over the workload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PmCell {
    pub tps: f64,
    pub w: WorkloadCounts,
    /// The guest's block layer over the workload (its `/proc/diskstats`).
    pub device: DeviceReport,
    /// Response times at the server and the drive between the workload's markers.
    pub lat: Latencies,
    /// PostMark's own report, and the server's requests as its log has them (Figure 1).
    pub postmark: Option<PostmarkReport>,
    pub requests: Vec<Request>,
}

impl PmCell {
    fn of(run: Option<&LabRun>) -> PmCell {
        let Some(r) = run else { return PmCell::default() };
        // counts from a trace without its markers would be the whole run's (mkfs and
        // all): none, and the checks that need them fail
        let server = r.server.first().filter(|s| s.workload.marked);
        let secs_ns = |s: f64| (s * 1e9).round() as u64;
        PmCell {
            tps: r.postmark.as_ref().map_or(0.0, |p| p.transactions_per_s),
            w: server.map(|s| s.workload.clone()).unwrap_or_default(),
            device: r.device.clone(),
            lat: server
                .map(|s| s.served.latencies(secs_ns(s.workload.from_s), secs_ns(s.workload.to_s)))
                .unwrap_or_default(),
            postmark: r.postmark.clone(),
            requests: server.map(|s| s.served.requests.clone()).unwrap_or_default(),
        }
    }

    /// MB read and written by the file system (arriving at the server).
    pub fn work_mb(&self) -> f64 {
        (self.w.read_bytes + self.w.write_bytes) as f64 / 1e6
    }

    /// Commands to the drive.
    pub fn disk_requests(&self) -> u64 {
        self.w.drive_reads + self.w.drive_writes
    }

    /// Mean size of the drive's reads and writes, KiB.
    pub fn disk_read_kib(&self) -> f64 {
        self.w.drive_read_bytes as f64 / self.w.drive_reads.max(1) as f64 / 1024.0
    }
    pub fn disk_write_kib(&self) -> f64 {
        self.w.drive_write_bytes as f64 / self.w.drive_writes.max(1) as f64 / 1024.0
    }

    /// Mean size of the reads and writes the file system sent, KiB.
    pub fn fs_read_kib(&self) -> f64 {
        self.w.read_bytes as f64 / self.w.reads.max(1) as f64 / 1024.0
    }
    pub fn fs_write_kib(&self) -> f64 {
        self.w.write_bytes as f64 / self.w.writes.max(1) as f64 / 1024.0
    }

    /// Mean KiB of the commands the server sent the drive.
    pub fn command_kib(&self) -> f64 {
        (self.w.drive_read_bytes + self.w.drive_write_bytes) as f64
            / self.disk_requests().max(1) as f64
            / 1024.0
    }

    /// Commands in the drive on average over the workload: their summed dispatch-to-completion
    /// time over its seconds (Little's law; at queue depth 1 the drive's busy share).
    pub fn in_drive(&self) -> f64 {
        let secs = self.w.to_s - self.w.from_s;
        if secs > 0.0 {
            self.lat.drive_ns.iter().sum::<u64>() as f64 / 1e9 / secs
        } else {
            0.0
        }
    }

    /// Drive commands per second of the workload.
    pub fn iops(&self) -> f64 {
        let secs = self.w.to_s - self.w.from_s;
        if secs > 0.0 {
            self.disk_requests() as f64 / secs
        } else {
            0.0
        }
    }
}

/// Measurements per workload (SS, SL, LS, LL) per file system or scheduler.
pub type Matrix = [[PmCell; 4]; 4];

fn column(m: &Matrix, j: usize, f: impl Fn(&PmCell) -> f64) -> Vec<f64> {
    m.iter().map(|row| f(&row[j])).collect()
}

/// `f` of every cell.
fn grid(m: &Matrix, f: &dyn Fn(&PmCell) -> f64) -> [[f64; 4]; 4] {
    m.each_ref().map(|row| row.each_ref().map(f))
}

fn index_of_max(v: &[f64]) -> usize {
    (0..v.len()).fold(0, |b, i| if v[i] > v[b] { i } else { b })
}

fn index_of_min(v: &[f64]) -> usize {
    (0..v.len()).fold(0, |b, i| if v[i] < v[b] { i } else { b })
}

/// `v[i]` above every other value (a tie is not a win).
fn strictly_max(v: &[f64], i: usize) -> bool {
    v.iter().enumerate().all(|(j, x)| j == i || v[i] > *x)
}

/// `v[i]` below every other value.
fn strictly_min(v: &[f64], i: usize) -> bool {
    v.iter().enumerate().all(|(j, x)| j == i || v[i] < *x)
}

fn nonzero(v: &[f64]) -> bool {
    v.iter().all(|x| *x > 0.0 && x.is_finite())
}

/// Figure 2 from Ext3's cells of SS, SL, LS, LL.
pub fn judge_fig2(c: &[PmCell; 4]) -> Vec<Check> {
    let tps: Vec<f64> = c.iter().map(|x| x.tps).collect();
    let iops: Vec<f64> = c.iter().map(PmCell::iops).collect();
    if !nonzero(&tps) || !nonzero(&iops) {
        return vec![Check::new("every workload measured", list(&tps, 1), "four throughputs", false)];
    }
    let names = ["SS", "SL", "LS", "LL"];
    let iops_order = iops.windows(2).all(|w| w[0] > w[1]);
    vec![
        Check::new(
            "SS has the highest throughput",
            format!("highest: {}", names[index_of_max(&tps)]),
            "SS (\"the highest Postmark throughput is achieved for the SS workload\")",
            strictly_max(&tps, SS),
        ),
        Check::ratio("SS over LL throughput", tps[SS] / tps[LL], 5.0, 3.5, 6.5, "\"by as much as 5 times\""),
        Check::ratio(
            "SL over SS throughput",
            tps[SL] / tps[SS],
            0.5,
            0.35,
            0.70,
            "seeking \"reduces Postmark throughput by as much as 50%\"",
        ),
        Check::ratio(
            "LS over LL throughput",
            tps[LS] / tps[LL],
            1.0,
            0.8,
            1.25,
            "\"LS and LL ... perform similarly\"",
        ),
        Check::new("disk IOPS ordered SS > SL > LS > LL", list(&iops, 1), list(&FIG2_IOPS, 2), iops_order),
        Check::ratio(
            "SS over LL disk IOPS",
            iops[SS] / iops[LL],
            FIG2_IOPS[SS] / FIG2_IOPS[LL],
            1.4,
            2.3,
            "Figure 2's table",
        ),
    ]
}

/// ReiserFS's SS throughput over the other three's mean: the paper's "as much as twice".
pub const FIG3_SS_REISERFS: (f64, f64, f64) = (2.0, 1.5, 2.5);
/// ReiserFS over XFS under SS: §5's "as much as 80%".
pub const FIG3_SS_REISERFS_XFS: (f64, f64, f64) = (1.8, 1.4, 2.2);
/// Highest over lowest throughput under LS and LL: the paper's "minimal".
pub const FIG3_LARGE_SPREAD_MAX: f64 = 1.15;

/// Figure 3 from throughput per workload (SS, SL, LS, LL) per file system (ext2, ext3,
/// reiserfs, xfs).
pub fn judge_fig3(tps: &[[f64; 4]; 4]) -> Vec<Check> {
    let mut v = Vec::new();
    let ss = &tps[SS];
    if nonzero(ss) {
        let others = (ss[EXT2] + ss[EXT3] + ss[XFS]) / 3.0;
        let (p, lo, hi) = FIG3_SS_REISERFS;
        v.push(Check::ratio(
            "SS: ReiserFS over the others' mean",
            ss[REISERFS] / others,
            p,
            lo,
            hi,
            "\"as much as twice\"",
        ));
        let (p, lo, hi) = FIG3_SS_REISERFS_XFS;
        v.push(Check::ratio(
            "SS: ReiserFS over XFS",
            ss[REISERFS] / ss[XFS],
            p,
            lo,
            hi,
            "\"as much as 80%\" (§5)",
        ));
    } else {
        v.push(Check::new("SS: every file system measured", list(ss, 1), "four throughputs", false));
    }
    for (w, name) in [(LS, "LS"), (LL, "LL")] {
        let t = &tps[w];
        let spread = t.iter().cloned().fold(f64::MIN, f64::max) / t.iter().cloned().fold(f64::MAX, f64::min);
        v.push(Check::new(
            format!("{name}: highest over lowest file system"),
            format!("{spread:.2}x"),
            format!("\"minimal\" (at most {FIG3_LARGE_SPREAD_MAX}x)"),
            nonzero(t) && spread <= FIG3_LARGE_SPREAD_MAX,
        ));
    }
    v
}

/// "No substantial difference" in the data moved: within this factor of Ext2's.
pub const FIG4_SAME: (f64, f64) = (0.75, 1.33);

/// Figure 4 from the MB moved per workload per file system.
pub fn judge_fig4(mb: &[[f64; 4]; 4]) -> Vec<Check> {
    let (lo, hi) = FIG4_SAME;
    let names = ["SS", "SL", "LS", "LL"];
    let mut v = Vec::new();
    for (w, name) in names.iter().enumerate() {
        let m = &mb[w];
        let small = w == SS || w == SL;
        // XFS is checked with the others under large files, as the outlier under small
        let same: Vec<usize> = if small { vec![EXT3, REISERFS] } else { vec![EXT3, REISERFS, XFS] };
        let r: Vec<f64> = same.iter().map(|&f| m[f] / m[EXT2]).collect();
        v.push(Check::new(
            format!(
                "{name}: {} move about Ext2's data",
                if small { "Ext3 and ReiserFS" } else { "Ext3, ReiserFS and XFS" }
            ),
            format!("{}x Ext2", list(&r, 2)),
            format!("\"no substantial difference\" ({lo}-{hi}x)"),
            nonzero(m) && r.iter().all(|x| (lo..=hi).contains(x)),
        ));
        if small {
            let x = m[XFS] / m[EXT2];
            v.push(Check::new(
                format!("{name}: XFS the outlier"),
                format!("{x:.2}x Ext2"),
                format!("more than {hi}x Ext2 (\"the extra amount of work to manage the journal\")"),
                nonzero(m) && x > hi,
            ));
        }
    }
    v
}

/// Figure 5 from the cells per workload per file system.
pub fn judge_fig5(m: &Matrix) -> Vec<Check> {
    let names = ["SS", "SL", "LS", "LL"];
    let mut v = Vec::new();
    for (w, name) in names.iter().enumerate() {
        let rd: Vec<f64> = m[w].iter().map(PmCell::disk_read_kib).collect();
        let wr: Vec<f64> = m[w].iter().map(PmCell::disk_write_kib).collect();
        v.push(Check::new(
            format!("{name}: ReiserFS sends the disk the largest reads and writes"),
            format!("reads {} KiB; writes {} KiB", list(&rd, 1), list(&wr, 1)),
            "ReiserFS largest (\"the largest read and write request size\")",
            nonzero(&rd) && nonzero(&wr) && strictly_max(&rd, REISERFS) && strictly_max(&wr, REISERFS),
        ));
    }
    let larger: Vec<String> = [LS, LL]
        .iter()
        .flat_map(|&w| (0..4).map(move |f| (w, f)))
        .filter(|&(w, f)| m[w][f].disk_write_kib() <= m[w][f].disk_read_kib())
        .map(|(w, f)| format!("{} {}", names[w], FS4[f]))
        .collect();
    v.push(Check::new(
        "LS, LL: writes larger than reads on every file system",
        if larger.is_empty() { "all".to_string() } else { format!("not on {}", larger.join(", ")) },
        "\"write disk traffic has longer requests than read ... in particular for the workloads with large files\"",
        larger.is_empty(),
    ));
    v
}

/// Figure 6 from the drive's commands per workload per file system.
pub fn judge_fig6(n: &[[f64; 4]; 4]) -> Vec<Check> {
    let names = ["SS", "SL", "LS", "LL"];
    let mut v = Vec::new();
    let mut xfs_second = 0;
    for (w, name) in names.iter().enumerate() {
        v.push(Check::new(
            format!("{name}: ReiserFS sends the disk the fewest requests"),
            list(&n[w], 0),
            "ReiserFS fewest (\"consistently in the smallest number of requests\")",
            nonzero(&n[w]) && strictly_min(&n[w], REISERFS),
        ));
        let mut others = n[w];
        others[REISERFS] = f64::MAX;
        if strictly_min(&others, XFS) {
            xfs_second += 1;
        }
    }
    v.push(Check::new(
        "XFS the second fewest in at least three workloads",
        format!("{xfs_second} of 4"),
        "\"XFS (with the exception of one case) is the second best\"",
        xfs_second >= 3,
    ));
    v
}

/// Best over Noop under SS or LS: "as low as one fourth".
pub const FIG7_NOOP: (f64, f64, f64) = (4.0, 3.0, 5.0);
/// The largest gain among Deadline, AS and CFQ: "approximately 20%".
pub const FIG7_ELEVATORS: (f64, f64, f64) = (1.2, 1.10, 1.35);

/// Figure 7 from throughput per workload per scheduler (noop, deadline, as, cfq).
pub fn judge_fig7(tps: &[[f64; 4]; 4]) -> Vec<Check> {
    if !tps.iter().all(|t| nonzero(t)) {
        return vec![Check::new("every point measured", format!("{tps:?}"), "16 throughputs", false)];
    }
    let spread =
        |t: &[f64]| t.iter().cloned().fold(f64::MIN, f64::max) / t.iter().cloned().fold(f64::MAX, f64::min);
    let noop_lowest = tps.iter().filter(|t| strictly_min(&t[..], 0)).count();
    let best_over_noop = |t: &[f64; 4]| t.iter().cloned().fold(f64::MIN, f64::max) / t[0];
    let noop_gap = best_over_noop(&tps[SS]).max(best_over_noop(&tps[LS]));
    let elevators = tps.iter().map(|t| spread(&t[1..])).fold(f64::MIN, f64::max);
    let random = (spread(&tps[SS]) + spread(&tps[SL])) / 2.0;
    let sequential = (spread(&tps[LS]) + spread(&tps[LL])) / 2.0;
    let (p, lo, hi) = FIG7_NOOP;
    let (q, qlo, qhi) = FIG7_ELEVATORS;
    vec![
        Check::new(
            "Noop the lowest in every workload",
            format!("{noop_lowest} of 4"),
            "\"No-Op is in clear disadvantage\"",
            noop_lowest == 4,
        ),
        Check::ratio("the best over Noop, SS or LS", noop_gap, p, lo, hi, "\"as low as one fourth\""),
        Check::new(
            "Deadline the best under SS",
            format!("best: {}", FIG7_SCHEDULERS[index_of_max(&tps[SS])]),
            "Deadline (\"a noticeable advantage only for the SS workload\")",
            strictly_max(&tps[SS], 1),
        ),
        Check::ratio(
            "the largest gain among Deadline, AS and CFQ",
            elevators,
            q,
            qlo,
            qhi,
            "\"approximately 20%\"",
        ),
        Check::new(
            "schedulers further apart under SS, SL than LS, LL",
            format!("{random:.2}x against {sequential:.2}x (best over worst, mean)"),
            "\"more noticeable under more random workloads\"",
            random > sequential,
        ),
    ]
}

/// The spec of one workload's runs: the file systems and schedulers given.
/// The emulated drive of a run: its model, command queue depth and export size (`None`:
/// the whole disk).
#[derive(Clone, Copy)]
struct Drive<'a> {
    disk: &'a str,
    depth: u32,
    size: Option<&'a str>,
}

/// The paper's drive of §§3-5: the 18 GB disk, 4 deep.
const PAPER_DRIVE: Drive<'static> = Drive { disk: "cheetah-15k3", depth: DRIVE_QUEUE_DEPTH, size: None };

/// The spec of one workload's runs (named `{id}-{label}`): the file systems and schedulers
/// given, on `drive`.
fn spec_text(
    l: &PostmarkLoad,
    scale: Scale,
    (id, label): (&str, &str),
    fs: &[&str],
    scheds: &[&str],
    drive: Drive<'_>,
) -> String {
    let (files, transactions) = if scale == Scale::Quick { l.quick } else { l.full };
    let size = drive.size.map_or(String::new(), |s| format!("size = \"{s}\"\n"));
    format!(
        "# {id}, PostMark {w} (seeds/002 Table 2: {pf} files of {lo}-{hi} bytes, {pt} transactions)\n\
         name = \"{id}-{label}\"\n[guest]\nkernel = \"generic\"\nfs = [{fs}]\n\
         guest_scheduler = \"none\"\nmemory_mb = 256\ntimeout_s = 5400\n\
         [headway]\ndisk = \"{disk}\"\nschedulers = [{scheds}]\nqueue_depth = {depth}\n{size}\
         [workload.postmark]\nnumber = {files}\ntransactions = {transactions}\nsize_min = {lo}\nsize_max = {hi}\n",
        w = l.name,
        pf = l.files,
        pt = l.paper_transactions,
        lo = l.size_min,
        hi = l.size_max,
        fs = toml_list(fs),
        scheds = toml_list(scheds),
        disk = drive.disk,
        depth = drive.depth,
    )
}

/// A matrix with the commands that rerun it and the lab reports behind it.
type MatrixRuns = (Matrix, Vec<String>, Vec<(String, serde_json::Value)>);

/// Runs of every workload on `fs` x `scheds` under `OUT/id/`: the cells per workload in
/// the order of `pick` (a (file system, scheduler) per column), the commands and reports.
fn run_matrix(
    id: &str,
    scale: Scale,
    fs: &[&str],
    scheds: &[&str],
    pick: [(&str, &str); 4],
    opts: &LabOptions,
    log: &mut dyn FnMut(&str),
) -> Result<MatrixRuns, LabError> {
    let dir = opts.out.join(id);
    let mut m: Matrix = Default::default();
    let mut commands = Vec::new();
    let mut reports = Vec::new();
    for (w, l) in TABLE2.iter().enumerate() {
        let text = spec_text(l, scale, (id, &l.name.to_ascii_lowercase()), fs, scheds, PAPER_DRIVE);
        let (report, cmd) = run_written(&dir, &l.name.to_ascii_lowercase(), &text, &[], opts, log)?;
        commands.push(cmd);
        for (j, (f, s)) in pick.iter().enumerate() {
            m[w][j] = PmCell::of(report.runs.iter().find(|r| r.lab.fs == *f && r.scheduler == *s));
        }
        reports.push((l.name.to_string(), serde_json::to_value(&report).unwrap_or_default()));
    }
    Ok((m, commands, reports))
}

const SETTING: &str = "Real Linux guests (Debian's generic 6.1 kernel, 256 MB, TCG or KVM as each run's \
    lab.accel says) on headway serve's emulated cheetah-15k3 (the paper's 18 GB disk). The guest's \
    scheduler is none: headway's on the server is the paper's device-driver scheduler. PostMark 1.5 \
    with Table 2's file sizes and counts, fewer transactions (SS/SL 20,000, LS/LL 2,000 against \
    100,000 and 20,000), buffering on. Counts are between the workload's trace markers: what the \
    server received (the file system's output after the guest's and QEMU's merging) and the \
    commands it sent the drive, which holds up to 4 and picks among them (the paper's queue depth). \
    Differences from the paper: a 6.1 kernel's file systems (2.6.16), a guest CPU emulated by QEMU.";

fn scale_note(scale: Scale) -> String {
    if scale == Scale::Quick {
        "SS as at full scale (PostMark times in whole seconds: a run must last a minute); SL 20,000 files \
         and 5,000 transactions; LS 200 files and 1,000 transactions; LL 850 files and 500 transactions"
            .into()
    } else {
        String::new()
    }
}

/// The figures whose paper gives words and no numbers: shape only.
const WORDS_ONLY: [&str; 3] = ["iopath-fig1", "iopath-fig10", "iopath-fig11"];

/// A figure of the family from its checks.
struct Draft<'a> {
    id: &'a str,
    y_label: &'a str,
    series: Vec<(String, Vec<f64>)>,
    rows: Vec<(String, String, String)>,
    checks: Vec<Check>,
    /// Why the figure departs, from the runs (see [`FigureData::explanation`]).
    explanation: String,
}

fn finish(
    d: Draft<'_>,
    scale: Scale,
    commands: &[String],
    reports: &[(String, serde_json::Value)],
) -> FigureData {
    let (outcome, verdict) = verdict_of(&d.checks, !WORDS_ONLY.contains(&d.id));
    let mut rows = d.rows;
    rows.extend(check_rows(&d.checks));
    FigureData {
        id: d.id.into(),
        source: FIGURES.iter().find(|f| f.0 == d.id).map_or("seeds/002", |f| f.1).into(),
        title: FIGURES.iter().find(|f| f.0 == d.id).map_or(d.id, |f| f.2).into(),
        setting: SETTING.into(),
        commands: commands.to_vec(),
        scale_note: scale_note(scale),
        x_label: "workload (Table 2)".into(),
        y_label: d.y_label.into(),
        categories: TABLE2.iter().map(|l| l.name.to_string()).collect(),
        series: d.series,
        paper_points: Vec::new(),
        scatter: Vec::new(),
        rows,
        outcome,
        verdict,
        explanation: if d.checks.iter().any(|c| !c.held) { d.explanation } else { String::new() },
        reports: reports.to_vec(),
    }
}

/// Figures 2-6: every workload on the four file systems under AS.
fn family(scale: Scale, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<Vec<FigureData>, LabError> {
    let pick = [("ext2", "as"), ("ext3", "as"), ("reiserfs", "as"), ("xfs", "as")];
    let (m, commands, reports) = run_matrix("iopath-postmark", scale, &FS4, &["as"], pick, opts, log)?;
    let per_fs = |f: &dyn Fn(&PmCell) -> f64| -> Vec<(String, Vec<f64>)> {
        FS4.iter().enumerate().map(|(j, n)| (n.to_string(), column(&m, j, f))).collect()
    };
    let by_load = |what: &str, f: &dyn Fn(&PmCell) -> String| -> Vec<(String, String, String)> {
        TABLE2
            .iter()
            .enumerate()
            .map(|(w, l)| {
                let v: Vec<String> = m[w].iter().map(f).collect();
                (format!("{}: {what} (ext2, ext3, reiserfs, xfs)", l.name), v.join("; "), "-".into())
            })
            .collect()
    };
    let ext3 = [m[0][EXT3].clone(), m[1][EXT3].clone(), m[2][EXT3].clone(), m[3][EXT3].clone()];
    let fig2 = Draft {
        id: "iopath-fig2",
        y_label: "PostMark transactions/s",
        series: vec![("ext3".into(), ext3.iter().map(|c| c.tps).collect())],
        rows: vec![
            (
                "transactions/s (SS, SL, LS, LL)".into(),
                list(&ext3.iter().map(|c| c.tps).collect::<Vec<_>>(), 1),
                "Figure 2 (values not in the text)".into(),
            ),
            (
                "disk IOPS over the workload (SS, SL, LS, LL)".into(),
                list(&ext3.iter().map(PmCell::iops).collect::<Vec<_>>(), 1),
                list(&FIG2_IOPS, 2),
            ),
            (
                "disk MB/s over the workload (SS, SL, LS, LL)".into(),
                list(
                    &ext3
                        .iter()
                        .map(|c| {
                            let s = c.w.to_s - c.w.from_s;
                            (c.w.drive_read_bytes + c.w.drive_write_bytes) as f64 / 1e6 / s.max(1e-9)
                        })
                        .collect::<Vec<_>>(),
                    2,
                ),
                "60.61, 62.15, 228.19, 269.80 (the table's \"Bandwidth\", unit not given)".into(),
            ),
        ],
        checks: judge_fig2(&ext3),
        explanation: fig2_explanation(&ext3),
    };
    let tps = grid(&m, &|c| c.tps);
    let fig3 = Draft {
        id: "iopath-fig3",
        y_label: "PostMark transactions/s",
        series: per_fs(&|c| c.tps),
        rows: by_load("transactions/s", &|c| format!("{:.1}", c.tps)),
        checks: judge_fig3(&tps),
        explanation: fs_story(&m),
    };
    let work = grid(&m, &PmCell::work_mb);
    let fig4 = Draft {
        id: "iopath-fig4",
        y_label: "MB read + written over the workload",
        series: per_fs(&PmCell::work_mb),
        rows: by_load("MB read / written", &|c| {
            format!("{:.0} / {:.0}", c.w.read_bytes as f64 / 1e6, c.w.write_bytes as f64 / 1e6)
        }),
        checks: judge_fig4(&work),
        explanation: fig4_explanation(&m),
    };
    let mut fig5_series = Vec::new();
    for (j, n) in FS4.iter().enumerate() {
        fig5_series.push((format!("{n} reads"), column(&m, j, PmCell::disk_read_kib)));
        fig5_series.push((format!("{n} writes"), column(&m, j, PmCell::disk_write_kib)));
    }
    let fig5 = Draft {
        id: "iopath-fig5",
        y_label: "mean request size at the disk, KiB",
        series: fig5_series,
        rows: by_load("mean KiB read / written, from the file system -> at the disk", &|c| {
            format!(
                "{:.1} / {:.1} -> {:.1} / {:.1}",
                c.fs_read_kib(),
                c.fs_write_kib(),
                c.disk_read_kib(),
                c.disk_write_kib()
            )
        }),
        checks: judge_fig5(&m),
        explanation: fs_story(&m),
    };
    let n = grid(&m, &|c| c.disk_requests() as f64);
    let fig6 = Draft {
        id: "iopath-fig6",
        y_label: "requests at the disk over the workload",
        series: per_fs(&|c| c.disk_requests() as f64),
        rows: by_load("requests from the file system -> at the disk", &|c| {
            format!("{} -> {}", c.w.reads + c.w.writes, c.disk_requests())
        }),
        checks: judge_fig6(&n),
        explanation: fs_story(&m),
    };
    let fig1 = fig1(&m[LL][EXT3], pool(&TABLE2[LL], scale), scale, &commands, &reports);
    let mut v = vec![fig1];
    v.extend([fig2, fig3, fig4, fig5, fig6].into_iter().map(|d| finish(d, scale, &commands, &reports)));
    Ok(v)
}

/// The files PostMark creates before its transactions at `scale`.
fn pool(l: &PostmarkLoad, scale: Scale) -> u32 {
    if scale == Scale::Quick {
        l.quick.0
    } else {
        l.full.0
    }
}

/// Figure 1 from the LL workload's run on Ext3: its server log read back, cut into
/// PostMark's phases ([`pattern`]).
fn fig1(
    cell: &PmCell,
    files: u32,
    scale: Scale,
    commands: &[String],
    reports: &[(String, serde_json::Value)],
) -> FigureData {
    let from = (cell.w.from_s * 1e9).round() as u64;
    let to = (cell.w.to_s * 1e9).round() as u64;
    let phases = cell.postmark.as_ref().and_then(|p| pattern::phases(from, files, p));
    let (checks, rows, scatter) = match phases {
        Some(p) if cell.w.marked => {
            let creation = pattern::arrived_in(&cell.requests, p.creation);
            let tx = pattern::arrived_in(&cell.requests, p.transactions);
            let secs = |(a, b): (u64, u64)| {
                format!("{:.0}-{:.0} s", (a - from) as f64 / 1e9, (b - from) as f64 / 1e9)
            };
            let rows = vec![
                (
                    "phases (PostMark's clock, trimmed a second): creation; transactions".into(),
                    format!("{}; {}", secs(p.creation), secs(p.transactions)),
                    "-".into(),
                ),
                (
                    "requests at the server: creation; transactions".into(),
                    format!("{}; {}", creation.len(), tx.len()),
                    "-".into(),
                ),
            ];
            (pattern::judge_fig1(&creation, &tx), rows, pattern::dots(&cell.requests, from, to).to_vec())
        }
        _ => (
            vec![Check::new(
                "PostMark's phases found",
                format!("marked window: {}; PostMark report: {}", cell.w.marked, cell.postmark.is_some()),
                "a creation phase and transactions longer than two seconds",
                false,
            )],
            vec![],
            vec![],
        ),
    };
    let d = Draft {
        id: "iopath-fig1",
        y_label: "start address, GB",
        series: Vec::new(),
        rows,
        checks,
        explanation: String::new(),
    };
    let mut f = finish(d, scale, commands, reports);
    f.x_label = "arrival, s from the workload's start".into();
    f.categories = Vec::new();
    f.scatter = scatter;
    f
}

/// Why Figures 3, 5 and 6 depart, from the matrix: per workload, the file system that sent
/// the disk the fewest requests, the largest mean request and the most transactions. The
/// paper's story is ReiserFS in each role (Linux 2.6.x's file systems); the guest runs
/// Linux 6.1's.
pub fn fs_story(m: &Matrix) -> String {
    let names = ["SS", "SL", "LS", "LL"];
    let best = |w: usize, f: &dyn Fn(&PmCell) -> f64, most: bool| {
        let v: Vec<f64> = m[w].iter().map(f).collect();
        let i = if most { index_of_max(&v) } else { index_of_min(&v) };
        FS4[i]
    };
    let roles: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(w, n)| {
            format!(
                "{n}: fewest requests {}, largest {}, fastest {}",
                best(w, &|c| c.disk_requests() as f64, false),
                best(w, &PmCell::command_kib, true),
                best(w, &|c| c.tps, true)
            )
        })
        .collect();
    let reiser_roles = roles.iter().map(|r| r.matches("reiserfs").count()).sum::<usize>();
    format!(
        "The paper's file-system story is Linux 2.6's: ReiserFS sent the disk the fewest and largest \
         requests and was fastest under small files. The guest runs Linux 6.1's file systems. \
         Measured at the server (requests at the drive, their mean size, PostMark's \
         transactions/s): {}. ReiserFS takes {reiser_roles} of those 12 roles. The workloads and the \
         drive are the paper's; the file systems' code is not.",
        roles.join("; ")
    )
}

/// Why Figure 2's throughput ratios depart, from Ext3's cells (SS, SL, LS, LL): PostMark's
/// transactions/s are the rate data moved over the bytes a transaction moves, so a ratio of
/// two workloads' transactions/s splits into the ratio of the rates at which the server
/// received data and the ratio of bytes per transaction (the rest). Given for SS over LL
/// and LS over LL, the paper's two throughput statements about the large-file workloads.
pub fn fig2_explanation(c: &[PmCell; 4]) -> String {
    let rate = |x: &PmCell| {
        let s = x.w.to_s - x.w.from_s;
        if s > 0.0 {
            x.work_mb() / s
        } else {
            0.0
        }
    };
    if c.iter().any(|x| x.tps <= 0.0 || rate(x) <= 0.0) {
        return String::new();
    }
    let names = ["SS", "SL", "LS", "LL"];
    let split = |a: usize, b: usize| {
        let (t, r) = (c[a].tps / c[b].tps, rate(&c[a]) / rate(&c[b]));
        format!(
            "{} over {}: {t:.2}x the transactions/s = {r:.2}x the rate (the server received {:.1} MB/s against \
             {:.1}) x {:.2}x fewer bytes per transaction",
            names[a],
            names[b],
            rate(&c[a]),
            rate(&c[b]),
            t / r
        )
    };
    format!(
        "A transaction's bytes decide these ratios more than the disk does. {}; {}. SS and LL differ in their \
         files' sizes (9-15 KB against 0.1-3 MB), which no disk rate can make up; LS and LL differ only in \
         the pool's size (LS has a quarter of LL's files), so more of LS's pool is in the guest's page \
         cache and its transactions reach the server with fewer bytes.",
        split(SS, LL),
        split(LS, LL)
    )
}

/// Why Figure 4's XFS is no outlier under small files, from the small-file cells: what XFS
/// and Ext2 wrote, and the paper's reason (the journal's extra work).
pub fn fig4_explanation(m: &Matrix) -> String {
    let written = |w: usize, f: usize| m[w][f].w.write_bytes as f64 / 1e6;
    if written(SS, EXT2) <= 0.0 || written(SL, EXT2) <= 0.0 {
        return String::new();
    }
    format!(
        "The paper's XFS wrote more for its journal under small files. Here XFS wrote {:.0} MB under SS \
         against Ext2's {:.0} ({:.2}x), and {:.0} against {:.0} under SL ({:.2}x). The guest's XFS \
         (Linux 6.1) logs metadata by delayed logging, the default since Linux 2.6.39: changes to the same \
         metadata are aggregated in memory and written to the log once per checkpoint, not once per \
         transaction as the 2.6 kernels of the paper did.",
        written(SS, XFS),
        written(SS, EXT2),
        written(SS, XFS) / written(SS, EXT2),
        written(SL, XFS),
        written(SL, EXT2),
        written(SL, XFS) / written(SL, EXT2)
    )
}

/// Figure 7: every workload on ReiserFS under the four schedulers.
fn fig7(scale: Scale, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<Vec<FigureData>, LabError> {
    let pick = FIG7_SCHEDULERS.map(|s| ("reiserfs", s));
    let (m, commands, reports) =
        run_matrix("iopath-fig7", scale, &["reiserfs"], &FIG7_SCHEDULERS, pick, opts, log)?;
    let tps = grid(&m, &|c| c.tps);
    let d = Draft {
        id: "iopath-fig7",
        y_label: "PostMark transactions/s",
        series: FIG7_SCHEDULERS
            .iter()
            .enumerate()
            .map(|(j, s)| (s.to_string(), column(&m, j, |c| c.tps)))
            .collect(),
        rows: TABLE2
            .iter()
            .enumerate()
            .map(|(w, l)| {
                (
                    format!("{}: transactions/s; requests at the disk (noop, deadline, as, cfq)", l.name),
                    format!(
                        "{}; {}",
                        list(&tps[w], 1),
                        m[w].iter().map(|c| c.disk_requests().to_string()).collect::<Vec<_>>().join(", ")
                    ),
                    "Figure 7 (values not in the text)".into(),
                )
            })
            .collect(),
        checks: judge_fig7(&tps),
        explanation: fig7_explanation(&m[SS]),
    };
    let fig10 = driver::fig10(&m);
    let mut fig11 = finish(driver::fig11(&m[SS]), scale, &commands, &reports);
    fig11.x_label = "percentile of the SS workload's response times".into();
    fig11.categories = driver::PERCENTILES.iter().map(|p| format!("p{p}")).collect();
    Ok(vec![finish(d, scale, &commands, &reports), finish(fig10, scale, &commands, &reports), fig11])
}

/// Why Figure 7 departs, from the SS workload's cells (noop, deadline, as, cfq): what
/// arrived at the server, and what went to the drive, under noop and deadline.
pub fn fig7_explanation(ss: &[PmCell]) -> String {
    let arrived = |c: &PmCell| {
        (c.w.read_bytes + c.w.write_bytes) as f64 / (c.w.reads + c.w.writes).max(1) as f64 / 1024.0
    };
    let (noop, dl) = (&ss[0], &ss[1]);
    let why = if arrived(noop) > 8.0 {
        "The paper's No-Op lost because ReiserFS chopped writes to 4 KB and No-Op could not merge them \
         back. Here the guest's block layer merges before a request leaves the guest:"
    } else {
        "The requests reached the server as small as the paper's (these runs do not measure why noop \
         keeps up):"
    };
    format!(
        "{why} under the SS workload requests arrived at the server averaging {:.1} KiB with noop on \
         the server ({:.1} with deadline), and noop sent the drive {} commands of {:.1} KiB where \
         deadline sent {} of {:.1} KiB, four at a time into the drive's own SPTF. Throughput: noop \
         {:.1}, deadline {:.1} transactions/s.",
        arrived(noop),
        arrived(dl),
        noop.disk_requests(),
        noop.command_kib(),
        dl.disk_requests(),
        dl.command_kib(),
        noop.tps,
        dl.tps,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(tps: f64, secs: f64, reqs: u64) -> PmCell {
        PmCell {
            tps,
            w: WorkloadCounts {
                to_s: secs,
                drive_reads: reqs / 2,
                drive_writes: reqs - reqs / 2,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn fig2_needs_the_papers_ratios() {
        // the paper's shape: SS 5x LL, SL half SS, LS ~ LL, IOPS as the table
        let ok = [
            cell(500.0, 10.0, 4246),
            cell(250.0, 10.0, 3109),
            cell(105.0, 10.0, 2787),
            cell(100.0, 10.0, 2279),
        ];
        assert!(judge_fig2(&ok).iter().all(|c| c.held), "{:?}", judge_fig2(&ok));
        // every workload alike: the ratios fail
        let flat = [
            cell(100.0, 10.0, 3000),
            cell(100.0, 10.0, 3000),
            cell(100.0, 10.0, 3000),
            cell(100.0, 10.0, 3000),
        ];
        let k = judge_fig2(&flat);
        assert_eq!(k.iter().filter(|c| c.held).count(), 1, "{k:?}"); // only LS ~ LL
                                                                     // SS ten times LL: outside the band above
        let far = [
            cell(1000.0, 10.0, 4246),
            cell(500.0, 10.0, 3109),
            cell(105.0, 10.0, 2787),
            cell(100.0, 10.0, 2279),
        ];
        assert!(!judge_fig2(&far)[1].held);
        // a missing workload is one failed check
        let missing = [cell(0.0, 10.0, 1), ok[1].clone(), ok[2].clone(), ok[3].clone()];
        assert!(judge_fig2(&missing).iter().all(|c| !c.held));
    }

    #[test]
    fn fig3_verdict_is_two_sided() {
        let large = |v: f64| [100.0, 100.0 * v, 100.0, 100.0];
        // ReiserFS twice the others under SS, large files within 10%
        let good = [[300.0, 300.0, 600.0, 300.0], [1.0; 4], large(1.1), large(1.0)];
        assert!(judge_fig3(&good).iter().all(|c| c.held));
        // ReiserFS equal to the others: both SS checks fail
        let equal = [[300.0; 4], [1.0; 4], large(1.0), large(1.0)];
        assert_eq!(judge_fig3(&equal).iter().filter(|c| !c.held).count(), 2);
        // ReiserFS four times the others: fails too
        let far = [[100.0, 100.0, 400.0, 100.0], [1.0; 4], large(1.0), large(1.0)];
        assert!(!judge_fig3(&far)[0].held);
        // large files far apart
        let apart = [[300.0, 300.0, 600.0, 300.0], [1.0; 4], large(1.5), large(1.0)];
        assert!(!judge_fig3(&apart)[2].held && judge_fig3(&apart)[3].held);
        // a missing file system is never a match
        let missing = [[300.0, 0.0, 600.0, 300.0], [1.0; 4], large(1.0), large(1.0)];
        assert!(!judge_fig3(&missing)[0].held);
    }

    #[test]
    fn fig4_wants_the_same_work_and_xfs_the_outlier() {
        let ok = [[100.0, 110.0, 95.0, 160.0], [100.0, 105.0, 90.0, 150.0], [500.0; 4], [800.0; 4]];
        assert!(judge_fig4(&ok).iter().all(|c| c.held), "{:?}", judge_fig4(&ok));
        // XFS like the others under small files: the outlier checks fail
        let plain = [[100.0; 4], [100.0; 4], [500.0; 4], [800.0; 4]];
        assert_eq!(judge_fig4(&plain).iter().filter(|c| !c.held).count(), 2);
        // Ext3 twice Ext2's work: fails
        let journal = [[100.0, 200.0, 95.0, 160.0], [100.0, 105.0, 90.0, 150.0], [500.0; 4], [800.0; 4]];
        assert!(!judge_fig4(&journal)[0].held);
    }

    #[test]
    fn fig5_and_fig6_want_reiserfs_ahead() {
        let c = |rk: u64, wk: u64, n: u64| PmCell {
            tps: 1.0,
            w: WorkloadCounts {
                drive_reads: n,
                drive_read_bytes: n * rk * 1024,
                drive_writes: n,
                drive_write_bytes: n * wk * 1024,
                ..Default::default()
            },
            ..Default::default()
        };
        let row = || [c(16, 32, 100), c(16, 32, 100), c(64, 128, 40), c(32, 64, 60)];
        let m: Matrix = [row(), row(), row(), row()];
        assert!(judge_fig5(&m).iter().all(|k| k.held), "{:?}", judge_fig5(&m));
        // ReiserFS's writes no larger than Ext2's: fails in that workload
        let mut worse = m.clone();
        worse[SS][REISERFS] = c(64, 16, 40);
        let k = judge_fig5(&worse);
        assert!(!k[SS].held && k[SL].held);
        // reads larger than writes under LL: the last check fails
        let mut reads = m.clone();
        reads[LL][EXT2] = c(64, 16, 100);
        assert!(!judge_fig5(&reads).last().unwrap().held);
        let n = [[100.0, 100.0, 40.0, 60.0]; 4];
        assert!(judge_fig6(&n).iter().all(|k| k.held));
        // XFS second in two workloads only; ReiserFS not the fewest in one
        let n2 = [
            [100.0, 100.0, 40.0, 60.0],
            [100.0, 50.0, 40.0, 60.0],
            [100.0, 50.0, 40.0, 60.0],
            [30.0, 100.0, 40.0, 60.0],
        ];
        let k = judge_fig6(&n2);
        assert!(!k[LL].held && !k[4].held);
    }

    #[test]
    fn fig7_wants_noop_far_behind_and_the_elevators_close() {
        // noop, deadline, as, cfq
        let ok = [
            [100.0, 400.0, 340.0, 330.0],
            [100.0, 250.0, 240.0, 230.0],
            [50.0, 200.0, 195.0, 190.0],
            [80.0, 100.0, 99.0, 98.0],
        ];
        assert!(judge_fig7(&ok).iter().all(|c| c.held), "{:?}", judge_fig7(&ok));
        // every scheduler alike: noop not behind, no gain
        let flat = [[100.0; 4]; 4];
        assert_eq!(judge_fig7(&flat).iter().filter(|c| c.held).count(), 0, "{:?}", judge_fig7(&flat));
        // AS the best under SS, far ahead of the other elevators
        let as_wins = [[100.0, 300.0, 420.0, 310.0], ok[1], ok[2], ok[3]];
        let k = judge_fig7(&as_wins);
        assert!(!k[2].held && !k[3].held);
    }

    #[test]
    fn specs_parse_at_both_scales() {
        for scale in [Scale::Full, Scale::Quick] {
            for l in &TABLE2 {
                let t = spec_text(l, scale, ("iopath-postmark", "x"), &FS4, &["as"], PAPER_DRIVE);
                let s = crate::spec::Spec::parse(std::path::Path::new("x.toml"), &t).unwrap();
                assert_eq!(s.points().len(), 4);
                assert_eq!(s.headway.queue_depth, 4, "the paper's drive queue");
                let t =
                    spec_text(l, scale, ("iopath-fig7", "x"), &["reiserfs"], &FIG7_SCHEDULERS, PAPER_DRIVE);
                let s = crate::spec::Spec::parse(std::path::Path::new("x.toml"), &t).unwrap();
                assert_eq!(s.points().len(), 4);
            }
        }
    }

    #[test]
    fn fig2_explanation_splits_the_ratios_into_rate_and_bytes() {
        // SS: 500 tx/s, 40 MB over 10 s; LS: 20 tx/s, 200 MB; LL: 14 tx/s, 250 MB
        let c = |tps: f64, mb: u64| PmCell {
            tps,
            w: WorkloadCounts { to_s: 10.0, read_bytes: mb * 1_000_000, ..Default::default() },
            ..Default::default()
        };
        let e = fig2_explanation(&[c(500.0, 40), c(200.0, 30), c(20.0, 200), c(14.0, 250)]);
        // 35.71x = 0.16x the rate (4.0 against 25.0 MB/s) x 223.21x
        assert!(e.contains("SS over LL: 35.71x the transactions/s = 0.16x the rate"), "{e}");
        assert!(e.contains("received 4.0 MB/s against 25.0") && e.contains("223.21x fewer bytes"), "{e}");
        // 1.43x = 0.80x x 1.79x
        assert!(
            e.contains("LS over LL: 1.43x the transactions/s = 0.80x the rate") && e.contains("1.79x"),
            "{e}"
        );
        assert!(fig2_explanation(&[c(500.0, 40), c(200.0, 30), c(20.0, 200), c(0.0, 250)]).is_empty());
    }

    #[test]
    fn fig4_explanation_gives_what_xfs_wrote() {
        let c = |mb: u64| PmCell {
            tps: 1.0,
            w: WorkloadCounts { write_bytes: mb * 1_000_000, ..Default::default() },
            ..Default::default()
        };
        let row = |ext2: u64, xfs: u64| [c(ext2), c(ext2), c(ext2), c(xfs)];
        let m: Matrix = [row(300, 309), row(200, 210), row(0, 0), row(0, 0)];
        let e = fig4_explanation(&m);
        assert!(e.contains("XFS wrote 309 MB under SS against Ext2's 300 (1.03x)"), "{e}");
        assert!(e.contains("210 against 200 under SL (1.05x)") && e.contains("delayed logging"), "{e}");
        let empty: Matrix = [row(0, 0), row(0, 0), row(0, 0), row(0, 0)];
        assert!(fig4_explanation(&empty).is_empty());
    }

    #[test]
    fn fig7_explanation_follows_what_arrived() {
        let c = |tps: f64, arrived_kib: u64, cmds: u64, cmd_kib: u64| PmCell {
            tps,
            w: WorkloadCounts {
                writes: 100,
                write_bytes: 100 * arrived_kib * 1024,
                drive_writes: cmds,
                drive_write_bytes: cmds * cmd_kib * 1024,
                ..Default::default()
            },
            ..Default::default()
        };
        let merged = [c(400.0, 32, 90, 35), c(390.0, 32, 80, 40), c(0.0, 0, 0, 0), c(0.0, 0, 0, 0)];
        let e = fig7_explanation(&merged);
        assert!(e.contains("merges before a request leaves the guest"), "{e}");
        assert!(e.contains("averaging 32.0 KiB") && e.contains("90 commands of 35.0 KiB"), "{e}");
        let small = [c(100.0, 4, 100, 4), c(400.0, 4, 10, 40), c(0.0, 0, 0, 0), c(0.0, 0, 0, 0)];
        assert!(fig7_explanation(&small).contains("as small as the paper's"));
    }

    #[test]
    fn the_file_system_story_names_who_took_each_role() {
        // xfs: fewest and largest requests everywhere; reiserfs fastest under SS only
        let cell = |tps: f64, reqs: u64, kib: u64| PmCell {
            tps,
            w: WorkloadCounts {
                drive_writes: reqs,
                drive_write_bytes: reqs * kib * 1024,
                ..Default::default()
            },
            ..Default::default()
        };
        let row = |fast: usize| {
            let mut r = [cell(100.0, 900, 8), cell(100.0, 800, 8), cell(100.0, 700, 8), cell(110.0, 500, 16)];
            r[fast].tps = 200.0;
            r
        };
        let m: Matrix = [row(REISERFS), row(XFS), row(XFS), row(XFS)];
        let e = fs_story(&m);
        assert!(e.contains("SS: fewest requests xfs, largest xfs, fastest reiserfs"), "{e}");
        assert!(e.contains("LL: fewest requests xfs, largest xfs, fastest xfs"), "{e}");
        assert!(e.contains("ReiserFS takes 1 of those 12 roles"), "{e}");
    }
}

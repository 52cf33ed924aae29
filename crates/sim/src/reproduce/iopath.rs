//! IO-path paper (seeds/002): request merging (Figures 8-9) and the drive's command queue
//! (Figures 15 and 17). The file-system figures (2-7) run in real guests: `headway_lab::figures`.

use super::{cmd, config, exp, run, Check, Figure, Outcome, Scale, Series, Status};
use crate::{ContextMode, SimError};
use headway_disk::{DriveConfig, WriteCache};

pub(super) fn figures() -> Vec<Figure> {
    let lab_later = |what: &'static str| Status::Unavailable(what);
    vec![
        Figure {
            id: "iopath-table1",
            source: "seeds/002 §2, Table 1",
            title: "specifications of the measurement system",
            status: Status::Unavailable(
                "not an experiment: the file systems (the lab's guests make all four), schedulers (noop, \
                 deadline, cfq, as) and disks (`headway disks`: cheetah-15k3 and cheetah-10k7; the 146 GB \
                 disk has no model) the paper measured with",
            ),
        },
        Figure {
            id: "iopath-table2",
            source: "seeds/002 §2, Table 2",
            title: "PostMark's four workloads (SS, SL, LS, LL)",
            status: Status::Unavailable(
                "not an experiment: the workloads, which experiments/postmark-{ss,sl,ls,ll}.fio and the lab's \
                 iopath figures run",
            ),
        },
        Figure {
            id: "iopath-fig1",
            source: "seeds/002 §2, Figure 1",
            title: "access pattern of the LL workload (request addresses over time; Ext3, AS, 18 GB disk)",
            status: lab_later(
                "not yet: a plot of one lab run's trace (PostMark LL on Ext3 in a guest; the server records \
                 every request with `--trace`); no figure draws it yet",
            ),
        },
        Figure {
            id: "iopath-fig8",
            source: "seeds/002 (IO path) §5, Figures 8-9",
            title: "request merging of interleaved 4 KiB write streams",
            status: Status::Available(fig8),
        },
        Figure {
            id: "iopath-fig10",
            source: "seeds/002 §5, Figure 10",
            title: "average response time and queue length at the device driver (four schedulers, four workloads)",
            status: lab_later(
                "not yet: needs the guest driver's per-request times, which a lab run can record (the \
                 tracefs blk tracer in the guest, as experiments/lab/bfq-trace.toml does) but no figure \
                 collects yet",
            ),
        },
        Figure {
            id: "iopath-fig11",
            source: "seeds/002 §5, Figure 11",
            title: "response time distribution at the device driver and at the disk (SS workload)",
            status: lab_later(
                "not yet: the disk's side is the server's trace, the driver's side needs the guest's (see \
                 iopath-fig10); no figure collects them yet",
            ),
        },
        Figure {
            id: "iopath-fig12",
            source: "seeds/002 §5, Figure 12",
            title: "Linux kernel builds per second",
            status: Status::Unavailable(
                "the simulator has no file-system layer, and the lab copies no compiler toolchain into \
                 its guests (gcc's driver, cc1, headers and crt files); under TCG a guest's code also runs \
                 about 15x slower than on the host (binutils' ld under qemu-x86_64 -cpu max: 0.41 s \
                 against 0.027 s), which stretches the think times the figure measures",
            ),
        },
        Figure {
            id: "iopath-table3",
            source: "seeds/002 §6, Table 3",
            title: "specifications of the three Seagate disks",
            status: Status::Unavailable(
                "not an experiment: the 18 GB and 300 GB disks are `headway disks` cheetah-15k3 and \
                 cheetah-10k7; the 146 GB disk (15,000 rpm, 4 platters) has no model",
            ),
        },
        Figure {
            id: "iopath-fig13",
            source: "seeds/002 §6, Figure 13",
            title: "PostMark on the three disks, four file systems, AS, queue depth 1",
            status: lab_later(
                "not yet: the lab runs PostMark on the four file systems (iopath-fig3) on one drive model; \
                 the 146 GB disk has no model",
            ),
        },
        Figure {
            id: "iopath-fig14",
            source: "seeds/002 §6, Figure 14",
            title: "PostMark on the three disks, four schedulers, ReiserFS, queue depth 1",
            status: lab_later(
                "not yet: as iopath-fig7 (four schedulers on ReiserFS) on each disk; the 146 GB disk has no \
                 model",
            ),
        },
        Figure {
            id: "iopath-fig15",
            source: "seeds/002 (IO path) §6.1, Figures 15 and 17",
            title: "throughput against the drive's queue depth; the host scheduler's gap closing",
            status: Status::Available(fig15),
        },
        Figure {
            id: "iopath-fig16",
            source: "seeds/002 §6.2, Figure 16",
            title: "PostMark SS against the queue depth with the drive's write-back cache (18 GB and 300 GB)",
            status: lab_later(
                "not yet: iopath-fig15-postmark's lab runs with the emulated drive's `write_cache = \"back\"`; \
                 no figure runs them yet",
            ),
        },
    ]
}

/// 4 KiB random reads over 450 GB, 64 in flight (`tests/sim/iopath.rs` uses the same).
pub const RANDREAD_QD64: &str =
    "[global]\nioengine=libaio\niodepth=64\ndirect=1\nbs=4k\nsize=450g\nio_size=12m\n[rr]\nrw=randread\n";

/// Figure 15's queue depths.
pub const FIG15_DEPTHS: [u32; 4] = [1, 4, 32, 64];

fn fig15(_scale: Scale) -> Result<Outcome, SimError> {
    let fig = super::find("iopath-fig15").expect("listed");
    let mut o = Outcome::new(
        &fig,
        "4 KiB random reads over 450 GB of the modelled WD5000AAKS, 64 in flight (the paper ran PostMark on two \
         SCSI Cheetahs; headway's stand-in is the same shape on a random workload), write-through, the drive's \
         own SPTF, queue depth 1, 4, 32, 64; noop and deadline.",
        "drive queue depth",
        "IOPS",
    );
    let path = "iopath-fig15/randread.fio";
    let mut noop = Vec::new();
    let mut dl = Vec::new();
    for d in FIG15_DEPTHS {
        let extra = format!(" --queue-depth {d} --write-cache through");
        o.rerun_file(path, RANDREAD_QD64, "wd5000aaks", "noop,deadline", "process", &extra);
        let mut cfg = config(RANDREAD_QD64, path, "wd5000aaks", &["noop", "deadline"], ContextMode::Process);
        cfg.run.drive =
            DriveConfig { queue_depth: d, write_cache: WriteCache::Through, ..DriveConfig::default() };
        let r = run(&cfg)?;
        noop.push(r.runs[0].aggregate.iops);
        dl.push(r.runs[1].aggregate.iops);
        o.keep(format!("queue_depth={d}"), &r);
    }
    o.categories = FIG15_DEPTHS.iter().map(|d| d.to_string()).collect();
    o.series.push(Series { name: "noop".into(), values: noop.clone() });
    o.series.push(Series { name: "deadline".into(), values: dl.clone() });
    let gap: Vec<f64> = dl.iter().zip(&noop).map(|(d, n)| d / n).collect();
    for (i, d) in FIG15_DEPTHS.iter().enumerate() {
        o.row(
            format!("depth {d}: noop IOPS (x depth 1), deadline/noop"),
            format!("{:.0} ({:.2}x), {:.2}x", noop[i], noop[i] / noop[0], gap[i]),
            if *d == 1 { "baseline" } else { "rising with depth; the schedulers converge" },
        );
    }
    let mut k = Check::default();
    let (d1, d4, d32, d64) = (noop[0], noop[1], noop[2], noop[3]);
    k.that(d4 > 1.2 * d1, || format!("depth 4 {:.2}x depth 1", d4 / d1));
    k.that(d32 >= 2.3 * d1, || format!("depth 32 {:.2}x depth 1 < 2.3x", d32 / d1));
    k.that(d64 >= 2.7 * d1 && d64 > d32 && d32 > d4, || format!("depth 64 {:.2}x depth 1", d64 / d1));
    k.that(gap[0] > 1.3, || format!("deadline/noop {:.2} at depth 1", gap[0]));
    k.that(gap[1] < gap[0] && gap[2] < gap[1], || "the deadline/noop gap does not close".into());
    k.that((gap[2] - 1.0).abs() <= 0.15, || format!("deadline/noop {:.2} at depth 32", gap[2]));
    o.judge(
        format!(
            "noop {:.2}x at depth 32 and {:.2}x at 64 over depth 1 (asserted >= 2.3x, 2.7x); deadline/noop {:.2}x, \
             {:.2}x, {:.2}x at depth 1, 4, 32 (paper: deep queues raise throughput and make the host scheduler \
             matter less)",
            d32 / d1,
            d64 / d1,
            gap[0],
            gap[1],
            gap[2]
        ),
        k.0,
    );
    Ok(o)
}

const FIG8_SCHEDS: [&str; 4] = ["noop", "deadline", "as", "cfq"];

fn fig8(_scale: Scale) -> Result<Outcome, SimError> {
    let fig = super::find("iopath-fig8").expect("listed");
    let mut cfg = config(
        exp("iopath-fig8-writes.fio"),
        "iopath-fig8-writes.fio",
        "cheetah-15k3",
        &FIG8_SCHEDS,
        ContextMode::Process,
    );
    cfg.run.drive =
        DriveConfig { queue_depth: 4, write_cache: WriteCache::Through, ..DriveConfig::default() };
    let r = run(&cfg)?;
    let mut o = Outcome::new(
        &fig,
        "`experiments/iopath-fig8-writes.fio`: eight interleaved sequential 4 KiB write streams; modelled \
         Cheetah 15K.3, queue depth 4, write-through.",
        "scheduler",
        "mean write size out of the driver (KiB)",
    );
    o.commands.push(cmd(
        "iopath-fig8-writes.fio",
        "cheetah-15k3",
        &FIG8_SCHEDS.join(","),
        "process",
        " --queue-depth 4",
    ));
    o.categories = FIG8_SCHEDS.iter().map(|s| s.to_string()).collect();
    let out = |i: usize| &r.runs[i].device.requests_out;
    o.series.push(Series {
        name: "KiB per write".into(),
        values: (0..4).map(|i| out(i).write_mean_bytes / 1024.0).collect(),
    });
    let mut k = Check::default();
    let noop = out(0).write_mean_bytes;
    k.that(noop < 2.0 * 4096.0, || format!("noop merges {:.1} KiB", noop / 1024.0));
    for (i, s) in FIG8_SCHEDS.iter().enumerate().skip(1) {
        k.that(out(i).write_mean_bytes >= 4.0 * noop, || format!("{s} merges too little"));
        k.that(out(i).writes * 4 <= out(0).writes, || format!("{s}: too many requests out"));
    }
    for (i, s) in FIG8_SCHEDS.iter().enumerate() {
        let paper = if i == 0 { "little merging (many small requests)" } else { "large merged requests" };
        o.row(
            format!("{s}: KiB per write, writes out"),
            format!("{:.1}, {}", out(i).write_mean_bytes / 1024.0, out(i).writes),
            paper,
        );
    }
    let list: Vec<String> =
        (0..4).map(|i| format!("{} {:.1} KiB", FIG8_SCHEDS[i], out(i).write_mean_bytes / 1024.0)).collect();
    o.judge(format!("mean write out {} (paper: the elevators merge a stream's writes, noop does not; asserted >= 4x noop)", list.join(", ")), k.0);
    o.keep("writes", &r);
    Ok(o)
}

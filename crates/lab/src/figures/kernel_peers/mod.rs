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
//! virtio queue in front of a one-command drive in arrival order, as `peers-kernel`), each
//! request costing the model's one CPU what a lone direct reader costs the guest beyond the
//! model (measured first, [`calibrate`]): under TCG a guest's CPU between requests decides
//! how long a stream's next request takes to come, which is what a waiting scheduler bets on.
//!
//! The workloads, by class (the verdicts are in [`verdict`]):
//! - process information present: par-read buffered and direct, the AS paper's
//!   alternate-block readers;
//! - missing or misleading: one process reading four files round robin; four readers whose
//!   requests fio's offload threads submit; four readers of files on a loop device; four NFS
//!   mounts of the guest's own NFS server (nfsd's threads issue the disk's requests);
//! - no harm expected: four random readers, PostMark SS, SQLite TPC-B (as-fig11's steps), a
//!   buffered writer beside two readers (with each side alone);
//! - an interactive reader (20 random reads a second) beside four sequential readers: its
//!   p99 latency.
//!
//! `headway reproduce kernel-peers` writes one figure of everything (`kernel-peers`) and
//! one per class (`kernel-peers-present`, `-missing`, `-no-harm`, `-interactive`).

mod verdict;

pub use verdict::{Class, Point};

use super::{run_written, FigureData, LabFigure, Scale};
use crate::model::{Model, ModelQuery, ModelRun};
use crate::results::LabRun;
use crate::run::LabOptions;
use crate::LabError;

pub(super) const FIGURE: LabFigure = LabFigure {
    id: "kernel-peers",
    source: "headway lab: the stream elevator against Linux 6.1's none, mq-deadline, kyber and bfq in the same kernel",
    title: "stream scheduling against Linux's own schedulers, in the same kernel, by workload class",
    run: |s, o, l| kernel_peers(s, o, l),
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

/// What the guest runs.
#[derive(Copy, Clone, Debug)]
enum Work {
    /// A fio job file (written beside the spec).
    Fio(&'static str),
    /// A spec's `[workload]` section (steps ending in fio's JSON), with these modules.
    Steps(&'static str, &'static [&'static str]),
    /// PostMark SS (the IO-path paper's small-files workload, as `peers`).
    Postmark,
    /// as-fig11's update queries, two clients, two databases.
    Tpcb,
}

/// What is measured of a run.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Measure {
    /// fio's aggregate MB/s.
    Bandwidth,
    /// PostMark's transactions/s.
    Postmark,
    /// SQLite's queries/s (both clients' over their step).
    Queries,
    /// The p99 completion latency, ms, of this fio job.
    P99(&'static str),
}

/// The simulator's run of a workload.
#[derive(Copy, Clone, Debug)]
enum Sim {
    /// The guest's job file, the issuing process told.
    Same,
    /// Another job file (the same shape in options the model has) and `--context`.
    Job(&'static str, Option<&'static str>),
    /// None, and why.
    Cannot(&'static str),
}

struct Workload {
    name: &'static str,
    class: Class,
    fs: &'static str,
    memory_mb: u32,
    /// The emulated drive, and the commands it holds and reorders at once.
    disk: &'static str,
    drive_depth: u32,
    /// The stream elevator's tunables for this workload (in the specs that run it).
    stream_tunables: &'static [(&'static str, &'static str)],
    work: Work,
    measure: Measure,
    sim: Sim,
    what: &'static str,
}

macro_rules! lab {
    ($f:literal) => {
        include_str!(concat!("../../../../../experiments/lab/", $f))
    };
}

const NOT_FIO: &str = "the simulator runs fio job files; this is a program in the guest";

const WORKLOADS: [Workload; 15] = [
    Workload {
        name: "par-read",
        class: Class::Present,
        fs: "ext4",
        memory_mb: 512,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Fio(lab!("par-read-ext4.fio")),
        measure: Measure::Bandwidth,
        sim: Sim::Job(lab!("par-read-ext4-model.fio"), None),
        what: "four processes, buffered sequential 4 KiB reads of their own 256 MiB files on ext4",
    },
    Workload {
        name: "par-read-direct",
        class: Class::Present,
        fs: "ext4",
        memory_mb: 512,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Fio(lab!("par-read-direct.fio")),
        measure: Measure::Bandwidth,
        sim: Sim::Job(lab!("par-read-direct-model.fio"), None),
        what: "four processes, direct sequential 4 KiB reads of their own 256 MiB files on ext4",
    },
    Workload {
        name: "par-read-queueing",
        class: Class::Present,
        fs: "ext4",
        memory_mb: 512,
        disk: "cheetah-15k3",
        drive_depth: 4,
        stream_tunables: &[("device_depth", "4")],
        work: Work::Fio(lab!("par-read-ext4.fio")),
        measure: Measure::Bandwidth,
        sim: Sim::Job(lab!("par-read-ext4-model.fio"), None),
        what: "par-read on a queueing drive: the emulated cheetah-15k3 holding and reordering four commands, the stream elevator keeping four in it (device_depth 4: tail mode)",
    },
    Workload {
        name: "alternate",
        class: Class::Present,
        fs: "raw",
        memory_mb: 512,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Fio(lab!("alternate-timed.fio")),
        measure: Measure::Bandwidth,
        sim: Sim::Same,
        what: "two processes reading every other 64 KiB block, 4 GiB apart (the AS paper's alternate)",
    },
    Workload {
        name: "one-process",
        class: Class::Missing,
        fs: "ext4",
        memory_mb: 512,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Fio(lab!("one-process.fio")),
        measure: Measure::Bandwidth,
        sim: Sim::Job(lab!("one-process-model.fio"), None),
        what: "one process reading four 256 MiB files in turn, libaio at iodepth 4 (a storage daemon)",
    },
    Workload {
        name: "offload",
        class: Class::Missing,
        fs: "ext4",
        memory_mb: 512,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Fio(lab!("offload.fio")),
        measure: Measure::Bandwidth,
        sim: Sim::Job(lab!("offload-model.fio"), Some("pool:4")),
        what: "four sequential readers whose requests fio's offload threads submit (io_submit_mode=offload)",
    },
    Workload {
        name: "loop",
        class: Class::Missing,
        fs: "ext4",
        memory_mb: 512,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Steps(lab!("loop-readers.toml"), &["loop"]),
        measure: Measure::Bandwidth,
        sim: Sim::Job(lab!("offload-model.fio"), Some("none")),
        what: "four sequential readers of files in an ext4 image on a loop device (the loop worker issues the disk's requests)",
    },
    Workload {
        name: "nfs",
        class: Class::Missing,
        fs: "ext4",
        memory_mb: 512,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Steps(lab!("nfs-readers.toml"), &["nfsd", "nfsv4"]),
        measure: Measure::Bandwidth,
        sim: Sim::Job(lab!("nfs-model.fio"), Some("pool:8")),
        what: "the kernel NFS server in the guest, four loopback NFSv4 mounts each reading its own 256 MiB file (nfsd's threads issue the disk's requests)",
    },
    Workload {
        name: "random-readers",
        class: Class::NoHarm,
        fs: "raw",
        memory_mb: 512,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Fio(lab!("random-readers.fio")),
        measure: Measure::Bandwidth,
        sim: Sim::Same,
        what: "four processes, direct random 4 KiB reads, 8 GiB apart",
    },
    Workload {
        name: "postmark",
        class: Class::NoHarm,
        fs: "ext4",
        memory_mb: 256,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Postmark,
        measure: Measure::Postmark,
        sim: Sim::Cannot(NOT_FIO),
        what: "PostMark SS (10,000 files of 9-15 KiB, 20,000 transactions) in a 256 MB guest",
    },
    Workload {
        name: "tpcb",
        class: Class::NoHarm,
        fs: "ext4",
        memory_mb: 256,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Tpcb,
        measure: Measure::Queries,
        sim: Sim::Cannot(NOT_FIO),
        what: "SQLite TPC-B-like updates from two clients on their own databases (as-fig11's update-different)",
    },
    Workload {
        name: "writer-readers",
        class: Class::Starvation,
        fs: "raw",
        memory_mb: 512,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Fio(lab!("writer-readers.fio")),
        measure: Measure::Bandwidth,
        sim: Sim::Same,
        what: "a buffered sequential writer beside two buffered sequential readers",
    },
    Workload {
        name: "writer-alone",
        class: Class::Alone,
        fs: "raw",
        memory_mb: 512,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Fio(lab!("writer-alone.fio")),
        measure: Measure::Bandwidth,
        sim: Sim::Same,
        what: "writer-readers' writer alone",
    },
    Workload {
        name: "readers-alone",
        class: Class::Alone,
        fs: "raw",
        memory_mb: 512,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Fio(lab!("readers-alone.fio")),
        measure: Measure::Bandwidth,
        sim: Sim::Same,
        what: "writer-readers' two readers alone",
    },
    Workload {
        name: "interactive",
        class: Class::Interactive,
        fs: "raw",
        memory_mb: 512,
        disk: "wd5000aaks",
        drive_depth: 1,
        stream_tunables: &[],
        work: Work::Fio(lab!("interactive.fio")),
        measure: Measure::P99("interactive"),
        sim: Sim::Same,
        what: "one direct random reader at 20 reads/s beside four buffered sequential readers: its p99",
    },
];

/// PostMark SS as `peers` runs it (it times in whole seconds: the same at both scales).
const POSTMARK: &str =
    "postmark = { number = 10000, transactions = 20000, size_min = 9216, size_max = 15360 }";

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

/// The setting, for every figure of the run.
pub(super) fn setting() -> String {
    format!(
        "Real Linux 6.1 guests (Debian's cloud kernel, TCG) on headway serve's emulated \
         wd5000aaks, host noop; guest schedulers {}; the simulator beside each point under \
         headway's scheduler of the same name (drive taking 32 commands in arrival order, one under \
         stream, whose elevator keeps one request in the device), each request costing the model's one \
         CPU what a lone direct reader costs the guest beyond the model (cpu_per_request, measured \
         first). \
         Workloads: {}.",
        COLUMNS.iter().map(|c| c.label).collect::<Vec<_>>().join(", "),
        WORKLOADS
            .iter()
            .map(|w| format!("{} ({}): {}", w.name, w.class.name(), w.what))
            .collect::<Vec<_>>()
            .join("; ")
    )
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

/// The model's run under `c`, each request costing the guest's one CPU `cpu_ns` (the lone
/// reader's calibration, as `peers-kernel`).
fn query(w: &Workload, c: &Column, context: Option<&str>, cpu_ns: u64) -> ModelQuery {
    let mut tunables: Vec<(String, String)> =
        c.tunables.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    if cpu_ns > 0 {
        tunables.push(("cpu_per_request".into(), format!("{cpu_ns}ns")));
    }
    // a queueing drive reorders its commands itself, whoever fills it
    let (queue_depth, fcfs) =
        if w.drive_depth > 1 { (w.drive_depth, false) } else { (model_queue_depth(c), true) };
    ModelQuery {
        disk: w.disk.into(),
        scheduler: c.model.into(),
        tunables,
        queue_depth,
        fcfs,
        context: context.map(str::to_string),
    }
}

/// The spec's `[workload]` section of `w` (its job file written as `job_file`).
fn workload_section(w: &Workload, job_file: &str, scale: Scale) -> String {
    match w.work {
        Work::Fio(_) => format!("[workload]\nfio = \"{job_file}\"\n"),
        Work::Steps(section, _) => scaled(section, scale),
        Work::Postmark => format!("[workload]\n{POSTMARK}\n"),
        Work::Tpcb => {
            let (records, queries) = super::tpcb::sizes(scale);
            let steps = super::tpcb::steps(&super::tpcb::VARIANTS[1], records, queries)
                .iter()
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(",\n  ");
            format!("[workload]\ntools = [\"sqlite3\"]\nsteps = [\n  {steps}\n]\n")
        }
    }
}

fn spec_text(name: &str, w: &Workload, columns: &[&Column], section: &str, repeat: u32) -> String {
    let pairs = columns.iter().map(|c| format!("[\"noop\", \"{}\"]", c.guest)).collect::<Vec<_>>().join(", ");
    let mut t = format!(
        "# kernel-peers: {name}\nname = \"kernel-peers-{name}\"\nrepeat = {repeat}\npairs = [{pairs}]\n[guest]\n\
         fs = \"{}\"\nmemory_mb = {}\ntimeout_s = 3600\n",
        w.fs, w.memory_mb
    );
    if let Work::Steps(_, modules) = w.work {
        t += &format!(
            "modules = [{}]\n",
            modules.iter().map(|m| format!("\"{m}\"")).collect::<Vec<_>>().join(", ")
        );
    }
    let stream = columns.iter().any(|c| c.guest == "stream");
    let own = if stream { w.stream_tunables } else { &[] };
    let tunables: Vec<_> = columns.iter().flat_map(|c| c.tunables.iter()).chain(own).collect();
    if !tunables.is_empty() {
        t += "[guest.tunables]\n";
        for (k, v) in tunables {
            t += &format!("{k} = {v}\n");
        }
    }
    t += &format!("[headway]\ndisk = \"{}\"\n", w.disk);
    if w.drive_depth > 1 {
        t += &format!("queue_depth = {}\n", w.drive_depth);
    }
    t + section
}

/// The columns by spec: those without tunables share one, bfq with `low_latency=0` has its
/// own (a spec's tunables are all its points'); the suffix names the spec.
fn groups() -> [(&'static str, Vec<&'static Column>); 2] {
    [
        ("", COLUMNS.iter().filter(|c| c.tunables.is_empty()).collect()),
        ("-bfq-ll0", COLUMNS.iter().filter(|c| !c.tunables.is_empty()).collect()),
    ]
}

/// A run's measure, in the workload's unit.
fn measure(m: Measure, run: &LabRun, scale: Scale) -> f64 {
    match m {
        Measure::Bandwidth => run.aggregate.bw_bytes as f64 / 1e6,
        Measure::Postmark => run.postmark.as_ref().map_or(f64::NAN, |p| p.transactions_per_s),
        Measure::Queries => {
            let (_, queries) = super::tpcb::sizes(scale);
            let step = run.lab.steps.iter().find(|s| s.name == "workload2");
            let secs = step.map_or(0.0, |s| s.end_s - s.start_s);
            if secs > 0.0 {
                2.0 * f64::from(queries) / secs
            } else {
                f64::NAN
            }
        }
        Measure::P99(job) => {
            let p99 = run
                .jobs
                .iter()
                .filter(|j| j.jobname == job)
                .filter_map(|j| j.read.clat_ns.percentile.get("99.000000").copied())
                .max();
            p99.map_or(f64::NAN, |ns| ns as f64 / 1e6)
        }
    }
}

fn unit(m: Measure) -> &'static str {
    match m {
        Measure::Bandwidth => "MB/s",
        Measure::Postmark => "tx/s",
        Measure::Queries => "queries/s",
        Measure::P99(_) => "ms p99",
    }
}

/// The emulated drive's busy time a command over the run, ms (its one server's; a queueing
/// drive's overlapping commands counted once, as the model's busy time counts them).
fn busy_ms_per_command(run: &LabRun) -> Option<f64> {
    run.server.first().and_then(|s| s.served.busy_ns_per_command()).map(|ns| ns / 1e6)
}

/// MB/s of each fio job name of a run, in first-seen order.
fn job_parts(run: &LabRun) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = Vec::new();
    for j in &run.jobs {
        let bw = (j.read.bw_bytes + j.write.bw_bytes) as f64 / 1e6;
        match v.iter_mut().find(|(n, _)| *n == j.jobname) {
            Some(e) => e.1 += bw,
            None => v.push((j.jobname.clone(), bw)),
        }
    }
    v
}

/// The model's figure of a run, in the workload's unit.
fn model_measure(m: Measure, r: &ModelRun) -> f64 {
    match m {
        Measure::P99(job) => r
            .jobs
            .iter()
            .filter(|j| j.name == job)
            .map(|j| j.clat_p99_ns)
            .max()
            .map_or(f64::NAN, |ns| ns as f64 / 1e6),
        _ => r.bw_bytes / 1e6,
    }
}

fn kernel_peers(
    scale: Scale,
    opts: &LabOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<FigureData>, LabError> {
    let model: &dyn Model = opts.model.as_deref().ok_or_else(|| LabError::Missing {
        what: "the simulator (kernel-peers runs each job file in the model too: run it with \
               `headway reproduce kernel-peers`)"
            .into(),
    })?;
    let repeat = if scale == Scale::Quick { 1 } else { 3 };
    let dir = opts.out.join("kernel-peers");
    let mut commands = Vec::new();
    let mut points = Vec::new();
    let cpu_ns = calibrate(scale, opts, &dir, model, &mut commands, log)?;
    let only = chosen(std::env::var("HEADWAY_KERNEL_PEERS").ok().as_deref())?;
    for w in WORKLOADS.iter().filter(|w| only.as_ref().is_none_or(|o| o.contains(&w.name))) {
        let file = format!("{}.fio", w.name);
        let job = match w.work {
            Work::Fio(j) => scaled(j, scale),
            _ => String::new(),
        };
        let section = workload_section(w, &file, scale);
        for (suffix, cols) in &groups() {
            let name = format!("{}{suffix}", w.name);
            let spec = spec_text(&name, w, cols, &section, repeat);
            let files: Vec<(&str, &str)> = if job.is_empty() { Vec::new() } else { vec![(&file, &job)] };
            let (report, cmd) = run_written(&dir, &name, &spec, &files, opts, log)?;
            commands.push(cmd);
            for c in cols {
                let runs: Vec<_> = report.runs.iter().filter(|r| r.lab.guest_scheduler == c.guest).collect();
                if runs.is_empty() {
                    return Err(LabError::Missing {
                        what: format!("{name}: the runs under guest {}", c.guest),
                    });
                }
                let counter = |k: &str| -> u64 {
                    runs.iter().filter_map(|r| r.lab.guest_counters.get(k).and_then(|v| v.as_u64())).sum()
                };
                let sim = match (w.sim, w.work) {
                    (Sim::Same, Work::Fio(j)) => Ok((j, None)),
                    (Sim::Job(j, ctx), _) => Ok((j, ctx)),
                    (Sim::Cannot(why), _) => Err(why.to_string()),
                    (Sim::Same, _) => Err(NOT_FIO.to_string()),
                };
                let (model_value, model_service) = match sim {
                    Ok((j, ctx)) => {
                        let r = model.fio(&scaled(j, scale), &query(w, c, ctx, cpu_ns)).map_err(|e| {
                            LabError::Tool { what: format!("the model's run of {name}"), msg: e }
                        })?;
                        (Ok(model_measure(w.measure, &r)), Some(r.mean_service_ns / 1e6))
                    }
                    Err(why) => (Err(why), None),
                };
                let mut parts: Vec<(String, Vec<f64>)> = Vec::new();
                for r in &runs {
                    for (n, bw) in job_parts(r) {
                        match parts.iter_mut().find(|(m, _)| *m == n) {
                            Some(e) => e.1.push(bw),
                            None => parts.push((n, vec![bw])),
                        }
                    }
                }
                points.push(Point {
                    workload: w.name.into(),
                    class: w.class,
                    column: c.label.into(),
                    unit: unit(w.measure),
                    kernel: runs.iter().map(|r| measure(w.measure, r, scale)).collect(),
                    parts: if matches!(w.class, Class::Starvation | Class::Alone | Class::Interactive) {
                        parts
                    } else {
                        Vec::new()
                    },
                    model: model_value,
                    counters: (c.guest == "stream")
                        .then(|| (counter("waits_caught"), counter("waits_expired"), counter("streams"))),
                    seeks: runs.iter().map(|r| r.server.iter().map(|s| s.workload.seeks).sum()).collect(),
                    service_ms: runs.iter().filter_map(|r| busy_ms_per_command(r)).collect(),
                    model_service_ms: model_service,
                });
            }
        }
    }
    Ok(figures(scale, commands, cpu_ns, &points))
}

/// What a request costs the guest outside the model: `peers-kernel`'s lone reader (one
/// direct sequential reader, guest `none`, model `noop`), its guest cycle less the model's,
/// the median of its repeats. A property of the guest and the emulator, not of a scheduler:
/// no scheduler's result is fitted.
fn calibrate(
    scale: Scale,
    opts: &LabOptions,
    dir: &std::path::Path,
    model: &dyn Model,
    commands: &mut Vec<String>,
    log: &mut dyn FnMut(&str),
) -> Result<u64, LabError> {
    use super::peers_kernel::{overhead_ns, LONE_READER, LONE_REPEATS};
    let lone = scaled(LONE_READER, scale).replace("runtime=10s", "runtime=5s");
    let lone = if scale == Scale::Full { LONE_READER.to_string() } else { lone };
    let spec = format!(
        "# kernel-peers: the lone reader (the model's cpu_per_request)\nname = \"kernel-peers-lone-reader\"\n\
         repeat = {LONE_REPEATS}\npairs = [[\"noop\", \"none\"]]\n[guest]\nfs = \"raw\"\nmemory_mb = 512\n\
         [headway]\ndisk = \"wd5000aaks\"\n[workload]\nfio = \"lone-reader.fio\"\n"
    );
    let (cal, cmd) = run_written(dir, "lone-reader", &spec, &[("lone-reader.fio", &lone)], opts, log)?;
    commands.push(cmd);
    let none = COLUMNS.iter().find(|c| c.label == "none").expect("a none column");
    let tool = |e: String| LabError::Tool { what: "the model's run of the lone reader".into(), msg: e };
    let m = model.fio(&lone, &query(&WORKLOADS[0], none, None, 0)).map_err(tool)?;
    let mut costs =
        cal.runs.iter().map(|r| overhead_ns(r, &m)).collect::<Result<Vec<u64>, String>>().map_err(tool)?;
    costs.sort_unstable();
    let cpu = *costs
        .get(costs.len() / 2)
        .ok_or_else(|| LabError::Missing { what: "the lone reader's runs".into() })?;
    log(&format!("a request costs the guest {:.0} us outside the model", cpu as f64 / 1e3));
    Ok(cpu)
}

/// The workloads `HEADWAY_KERNEL_PEERS` names (comma-separated; unset: all); an unknown name
/// is an error listing the known ones. The starvation workload brings its `-alone` runs.
fn chosen(names: Option<&str>) -> Result<Option<Vec<&'static str>>, LabError> {
    let Some(names) = names.filter(|n| !n.trim().is_empty()) else { return Ok(None) };
    let mut v = Vec::new();
    for n in names.split(',').map(str::trim) {
        let w = WORKLOADS.iter().find(|w| w.name == n).ok_or_else(|| LabError::Missing {
            what: format!(
                "HEADWAY_KERNEL_PEERS: no workload `{n}` (known: {})",
                WORKLOADS.iter().map(|w| w.name).collect::<Vec<_>>().join(", ")
            ),
        })?;
        v.push(w.name);
        if w.class == Class::Starvation {
            v.extend(WORKLOADS.iter().filter(|a| a.class == Class::Alone).map(|a| a.name));
        }
    }
    Ok(Some(v))
}

/// The run's figures: everything, then one per class (pure: the tests feed it results).
pub fn figures(scale: Scale, commands: Vec<String>, cpu_ns: u64, points: &[Point]) -> Vec<FigureData> {
    let labels: Vec<&str> = COLUMNS.iter().map(|c| c.label).collect();
    let cpu_row = (
        "the guest's cost per request outside the model (the lone reader's, the model's cpu_per_request)"
            .to_string(),
        format!("{:.0} us", cpu_ns as f64 / 1e3),
        "measured once per run, no scheduler fitted".to_string(),
    );
    let mut out = vec![verdict::figure_data(
        FIGURE.id.into(),
        FIGURE.title.into(),
        scale,
        commands.clone(),
        &labels,
        points,
        points,
    )];
    for slug in ["present", "missing", "no-harm", "interactive"] {
        let of: Vec<Point> = points.iter().filter(|p| p.class.slug() == slug).cloned().collect();
        if of.is_empty() {
            continue;
        }
        let title = format!(
            "kernel-peers, {}: stream against Linux's schedulers in the same kernel",
            of[0].class.name()
        );
        out.push(verdict::figure_data(
            format!("{}-{slug}", FIGURE.id),
            title,
            scale,
            commands.clone(),
            &labels,
            &of,
            points,
        ));
    }
    for f in &mut out {
        f.rows.push(cpu_row.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::verdict::{interactive_words, judge, median, ranking_explanation, shares, table_rows};
    use super::*;
    use crate::figures::{Check, Verdict};

    fn point(w: &str, class: Class, column: &str, v: &[f64], model: f64) -> Point {
        Point {
            workload: w.into(),
            class,
            column: column.into(),
            unit: "MB/s",
            kernel: v.to_vec(),
            parts: Vec::new(),
            model: Ok(model),
            counters: None,
            seeks: Vec::new(),
            service_ms: Vec::new(),
            model_service_ms: None,
        }
    }

    fn judged(points: &[Point]) -> Vec<Check> {
        let refs: Vec<&Point> = points.iter().collect();
        let w = &points[0].workload;
        let of: Vec<&Point> = points.iter().filter(|p| &p.workload == w).collect();
        judge(&of, &refs)
    }

    fn held(checks: &[Check], what: &str) -> bool {
        checks
            .iter()
            .find(|c| c.what.contains(what))
            .unwrap_or_else(|| panic!("no check {what}: {checks:?}"))
            .held
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
        assert!(held(&judged(&mk(58.0)), "stream over the best other, bfq"));
        assert!(!held(&judged(&mk(50.0)), "stream over the best other"), "50 / 60 < 0.95");
    }

    #[test]
    fn missing_needs_one_and_a_half_times_the_best() {
        let mk = |s: f64| {
            vec![
                point("one-process", Class::Missing, "bfq", &[20.0], 20.0),
                point("one-process", Class::Missing, "stream", &[s], 40.0),
            ]
        };
        assert!(held(&judged(&mk(31.0)), "stream over"));
        assert!(!held(&judged(&mk(29.0)), "stream over"));
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
        assert!(held(&judged(&mk(9.5)), "stream over mq-deadline"));
        assert!(!held(&judged(&mk(8.5)), "stream over mq-deadline"));
    }

    #[test]
    fn a_starved_side_fails_against_its_own_run_alone() {
        let with = |p: Point, parts: &[(&str, f64)]| Point {
            parts: parts.iter().map(|(n, v)| (n.to_string(), vec![*v])).collect(),
            ..p
        };
        let mk = |writer: f64, readers: f64| {
            vec![
                with(
                    point("writer-readers", Class::Starvation, "stream", &[writer + readers], 1.0),
                    &[("writer", writer), ("readers", readers)],
                ),
                with(
                    point("writer-readers", Class::Starvation, "mq-deadline", &[50.0], 2.0),
                    &[("writer", 45.0), ("readers", 5.0)],
                ),
                with(point("writer-alone", Class::Alone, "stream", &[40.0], 1.0), &[("writer", 40.0)]),
                with(point("readers-alone", Class::Alone, "stream", &[80.0], 1.0), &[("readers", 80.0)]),
            ]
        };
        // 10 of 40 and 20 of 80: a quarter each
        assert!(held(&judged(&mk(10.0, 20.0)), "share of what each gets alone"));
        // the readers at 12 of 80 (0.15) are starved, the writer not
        assert!(!held(&judged(&mk(30.0, 12.0)), "share of what each gets alone"));
        assert!(!held(&judged(&mk(6.0, 60.0)), "share of what each gets alone"));
        let all = mk(10.0, 20.0);
        let refs: Vec<&Point> = all.iter().collect();
        let (w, r) = shares(&all[0], &refs);
        assert!((w - 0.25).abs() < 1e-12 && (r - 0.25).abs() < 1e-12);
        // mq-deadline has no alone runs here: its shares are unknown, not zero
        assert!(shares(&all[1], &refs).0.is_nan());
    }

    #[test]
    fn the_interactive_reader_is_ranked_lowest_first_and_only_reported() {
        let mut s = point("interactive", Class::Interactive, "stream", &[300.0], 500.0);
        s.counters = Some((90, 10, 4));
        let pts = vec![
            point("interactive", Class::Interactive, "bfq", &[30.0], 40.0),
            point("interactive", Class::Interactive, "mq-deadline", &[60.0], 60.0),
            s,
        ];
        let checks = judged(&pts);
        // no bound on stream: the only statement is the simulator's ranking, lowest first
        assert_eq!(checks.len(), 1, "{checks:?}");
        assert!(held(&checks, "ranking"));
        assert_eq!(checks[0].headway, "bfq > mq-deadline > stream");
        let refs: Vec<&Point> = pts.iter().collect();
        let rows = table_rows(&refs, &refs);
        let words = &rows.last().unwrap().1;
        assert!(
            words.contains("10.00x bfq's")
                && words.contains("waited 100 times")
                && words.contains("(90 caught, 10 expired)"),
            "{words}"
        );
        assert!(rows[0].1.contains("1.00x the best"), "bfq is the best (lowest): {rows:?}");
        assert!(!interactive_words(&pts[1], &pts[0]).contains("waited"), "no counters, no reason given");
    }

    #[test]
    fn the_simulators_ranking_must_share_the_best_and_the_worst() {
        let same = vec![
            point("w", Class::Present, "a", &[3.0], 30.0),
            point("w", Class::Present, "b", &[2.0], 25.0),
            point("w", Class::Present, "stream", &[1.0], 5.0),
        ];
        assert!(held(&judged(&same), "ranking"));
        let swapped = vec![
            point("w", Class::Present, "a", &[3.0], 5.0),
            point("w", Class::Present, "b", &[2.0], 25.0),
            point("w", Class::Present, "stream", &[1.0], 30.0),
        ];
        assert!(!held(&judged(&swapped), "ranking"));
        // a workload the simulator cannot run has no ranking statement, and says why
        let mut none = same.clone();
        for p in &mut none {
            p.model = Err(NOT_FIO.into());
        }
        assert!(judged(&none).iter().all(|c| !c.what.contains("ranking")));
        let refs: Vec<&Point> = none.iter().collect();
        assert!(table_rows(&refs, &refs)[0].2.contains("simulator: none (the simulator runs fio job files"));
    }

    #[test]
    fn a_ranking_that_disagrees_is_explained_from_the_drives_time_a_command() {
        let with = |mut p: Point, k: f64, m: f64| {
            p.service_ms = vec![k];
            p.model_service_ms = Some(m);
            p
        };
        let mk = |model_mq: f64, model_ms: f64| {
            vec![
                with(point("par-read", Class::Present, "mq-deadline", &[6.0], model_mq), 1.3, model_ms),
                with(point("par-read", Class::Present, "kyber", &[9.0], model_mq), 1.1, model_ms),
                with(point("par-read", Class::Present, "stream", &[3.0], 12.0), 3.5, 1.1),
            ]
        };
        // the kernel: kyber > mq-deadline > stream; the model: stream first, its drive seeking
        // (the work-conserving columns took 1.3 and 1.1 ms a command in the guest: median 1.2)
        let off = mk(0.5, 8.3);
        let refs: Vec<&Point> = off.iter().collect();
        let e = ranking_explanation(&refs).expect("a disagreement to explain");
        assert!(e.contains("1.20 ms a command in the guest's runs and 8.30 ms in the model's"), "{e}");
        assert!(e.contains("read each stream ahead into its cache"), "{e}");
        // the same ranking: nothing to explain
        let same = [
            with(point("w", Class::Present, "mq-deadline", &[6.0], 6.0), 1.0, 1.0),
            with(point("w", Class::Present, "stream", &[3.0], 3.0), 1.0, 1.0),
        ];
        let refs: Vec<&Point> = same.iter().collect();
        assert!(ranking_explanation(&refs).is_none());
        // a disagreement with the drive agreeing says so
        let alike = mk(0.5, 1.2);
        let refs: Vec<&Point> = alike.iter().collect();
        assert!(ranking_explanation(&refs).unwrap().contains("agrees within 2x"));
        // the figure carries it
        let f = figures(Scale::Quick, Vec::new(), 0, &off);
        assert!(
            f[0].explanation.contains("par-read: the simulator ranks stream first"),
            "{}",
            f[0].explanation
        );
    }

    #[test]
    fn the_table_flags_repeats_that_disagree_and_gives_the_seeks() {
        let mut p = [
            point("w", Class::Present, "bfq", &[10.0, 10.5, 10.2], 1.0),
            point("w", Class::Present, "stream", &[10.0, 14.0, 12.0], 1.0),
        ];
        p[1].seeks = vec![120, 130, 125];
        let refs: Vec<&Point> = p.iter().collect();
        let rows = table_rows(&refs, &refs);
        assert!(!rows[0].1.contains("disagree"), "{rows:?}");
        assert!(rows[1].1.contains("spread 33% (repeats disagree)"), "{rows:?}");
        assert!(rows[1].1.contains("(seeks) 120, 130, 125"), "{rows:?}");
        assert!((median(&[3.0, 1.0, 2.0]) - 2.0).abs() < 1e-12 && (median(&[4.0, 1.0]) - 2.5).abs() < 1e-12);
    }

    #[test]
    fn every_workloads_specs_parse_at_both_scales() {
        let dir = std::env::temp_dir().join(format!("kernel-peers-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for w in &WORKLOADS {
            if let Work::Fio(j) = w.work {
                std::fs::write(dir.join("job.fio"), scaled(j, Scale::Quick)).unwrap();
            }
            for scale in [Scale::Full, Scale::Quick] {
                let section = workload_section(w, "job.fio", scale);
                for (_, cols) in groups() {
                    let text = spec_text(w.name, w, &cols, &section, 3);
                    let spec = crate::spec::Spec::parse(&dir.join("kernel-peers.toml"), &text)
                        .unwrap_or_else(|e| panic!("{}: {e}\n{text}", w.name));
                    assert_eq!(spec.repeat, 3);
                }
            }
            if let Work::Steps(section, _) = w.work {
                let quick = scaled(section, Scale::Quick);
                assert!(
                    quick.contains("runtime=8s") && !quick.contains("runtime=20s"),
                    "{}: {quick}",
                    w.name
                );
                assert!(
                    quick.contains("--size=64m") && !quick.contains("--size=256m"),
                    "{}: {quick}",
                    w.name
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_figure_is_matches_only_when_every_statement_holds_and_each_class_has_its_own() {
        let good = vec![
            point("par-read", Class::Present, "mq-deadline", &[30.0], 20.0),
            point("par-read", Class::Present, "stream", &[60.0], 90.0),
            point("random-readers", Class::NoHarm, "mq-deadline", &[10.0], 10.0),
            point("random-readers", Class::NoHarm, "stream", &[10.0], 9.0),
        ];
        let figs = figures(Scale::Quick, Vec::new(), 150_000, &good);
        let ids: Vec<&str> = figs.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["kernel-peers", "kernel-peers-present", "kernel-peers-no-harm"]);
        assert!(figs.iter().all(|f| f.outcome == Verdict::Matches), "{figs:?}");
        let mut bad = good.clone();
        bad[1].kernel = vec![20.0];
        let figs = figures(Scale::Quick, Vec::new(), 150_000, &bad);
        assert_eq!(figs[0].outcome, Verdict::Differs);
        assert!(figs[0].verdict.contains("not: par-read"), "{}", figs[0].verdict);
        assert_eq!(figs[1].outcome, Verdict::Differs);
        assert_eq!(figs[2].outcome, Verdict::Matches, "random-readers' class holds on its own");
        assert_eq!(figs[0].series.len(), COLUMNS.len());
        assert!(figs.iter().all(|f| f.rows.last().is_some_and(|r| r.1 == "150 us")));
    }

    #[test]
    fn the_queueing_drive_is_set_for_every_scheduler_and_deepened_for_stream_only() {
        let w = WORKLOADS.iter().find(|w| w.name == "par-read-queueing").unwrap();
        let [(_, main), (_, ll0)] = groups();
        let a = spec_text(w.name, w, &main, "[workload]\nfio = \"j.fio\"\n", 1);
        let b = spec_text(w.name, w, &ll0, "[workload]\nfio = \"j.fio\"\n", 1);
        for t in [&a, &b] {
            assert!(t.contains("disk = \"cheetah-15k3\"\nqueue_depth = 4\n"), "{t}");
        }
        assert!(a.contains("device_depth = 4") && !b.contains("device_depth"), "{a}\n{b}");
        let stream = COLUMNS.iter().find(|c| c.label == "stream").unwrap();
        let q = query(w, stream, None, 1000);
        assert_eq!((q.disk.as_str(), q.queue_depth, q.fcfs), ("cheetah-15k3", 4, false));
        assert!(q.tunables.contains(&("cpu_per_request".to_string(), "1000ns".to_string())));
        let q = query(&WORKLOADS[0], stream, None, 0);
        assert_eq!((q.disk.as_str(), q.queue_depth, q.fcfs), ("wd5000aaks", 1, true));
        assert!(q.tunables.is_empty());
    }

    #[test]
    fn a_subset_of_workloads_is_chosen_by_name() {
        assert_eq!(chosen(None).unwrap(), None);
        assert_eq!(chosen(Some(" ")).unwrap(), None);
        assert_eq!(chosen(Some("par-read, loop")).unwrap().unwrap(), ["par-read", "loop"]);
        assert_eq!(
            chosen(Some("writer-readers")).unwrap().unwrap(),
            ["writer-readers", "writer-alone", "readers-alone"]
        );
        let e = chosen(Some("par-read,nfsx")).unwrap_err().to_string();
        assert!(e.contains("no workload `nfsx`") && e.contains("interactive"), "{e}");
    }

    #[test]
    fn measures_come_from_the_runs_jobs() {
        let r = ModelRun {
            mean_service_ns: 1e6,
            bw_bytes: 5e6,
            jobs: vec![
                crate::model::ModelJob {
                    name: "interactive".into(),
                    clat_p99_ns: 40_000_000,
                    ..Default::default()
                },
                crate::model::ModelJob {
                    name: "readers".into(),
                    clat_p99_ns: 90_000_000,
                    ..Default::default()
                },
            ],
        };
        assert_eq!(model_measure(Measure::P99("interactive"), &r), 40.0);
        assert_eq!(model_measure(Measure::Bandwidth, &r), 5.0);
    }
}

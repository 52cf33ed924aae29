//! Running a lab spec: images once, then each point — servers up, guest booted, guest
//! done, servers down, results read.
//!
//! Per point, under `OUT/points/LABEL/`: `disk0.img` ... (the exports: sparse files of the
//! export size, removed after the point unless kept), `trace0.blkparse` ... (every request
//! each server received), `console.log`, `results.img` (the guest's tar) and `results/`
//! (its files, unpacked) — with several guests (`guests = N`), the last three per guest
//! under `guestN/`, every guest on its own part of each export, all guests started
//! together. Sockets live in a private temporary directory removed when the run ends,
//! however it ends.
//!
//! The accelerator: with `accel = "auto"` a probe guest boots under KVM first (it must
//! reach power-off within [`KVM_PROBE_TIMEOUT`]); if it does not, every point runs under
//! TCG. The verdict is kept in the cache (`accel-probe`, a line per host kernel, QEMU
//! binary and guest kernel), so the probe's cost is paid once for each. Which one ran is in each
//! run's `lab.accel`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use headway_nbd::tracelog::{TraceConfig, TraceFormat};
use headway_nbd::{BackendKind, ContextMode, Listen, ServeConfig, Server};
use serde::Serialize;

use crate::fio_job::{for_guest, Target};
use crate::image::{self, Kernel};
use crate::qemu::{console_tail, Accel, Guest, GuestConfig, Outcome, CONSOLE_TAIL};
use crate::results::{measure, read_tar, LabInfo, LabRun, ServerReport};
use crate::script::{postmark_config, GuestWork, InitScript};
use crate::spec::{self, Fs, GuestScheduler, Point, Spec, Workload};
use crate::LabError;

/// How long a KVM probe boot may take before TCG is used instead (a KVM boot to power-off
/// takes about a second; TCG about four).
pub const KVM_PROBE_TIMEOUT: Duration = Duration::from_secs(20);
/// The results disk's size: the guest's tar of `/results` must fit.
pub const RESULTS_DISK_BYTES: u64 = 64 << 20;

/// Where and how to run.
#[derive(Clone, Debug)]
pub struct LabOptions {
    pub out: PathBuf,
    pub cache: PathBuf,
    /// Keep each point's export files (they can be large sparse files).
    pub keep_disks: bool,
    /// Set (by a signal handler) to stop: the running guest is killed, its servers
    /// stopped, and the run ends with [`LabError::Interrupted`].
    pub interrupt: Arc<AtomicBool>,
    /// The simulator, for the figures that run a job file in the model beside the guest
    /// (`None`: those figures cannot run).
    pub model: Option<Arc<dyn crate::model::Model>>,
}

impl LabOptions {
    /// Results under `out`, the default cache, disks removed, no interruption.
    pub fn new(out: PathBuf) -> Self {
        LabOptions {
            out,
            cache: image::cache_dir(),
            keep_disks: false,
            interrupt: Arc::new(AtomicBool::new(false)),
            model: None,
        }
    }
}

/// A whole lab run.
#[derive(Clone, Debug, Serialize)]
pub struct LabReport {
    pub headway_version: &'static str,
    pub spec: String,
    pub runs: Vec<LabRun>,
    /// The repeats of each host scheduler x guest scheduler x file system, when the spec
    /// repeats: how far apart their throughputs are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<RepeatSpread>,
}

/// The throughput of one point's repeats.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RepeatSpread {
    pub scheduler: String,
    pub guest_scheduler: String,
    pub fs: String,
    pub repeats: usize,
    pub mean_bw_bytes: f64,
    pub min_bw_bytes: u64,
    pub max_bw_bytes: u64,
    /// (max - min) / mean
    pub spread: f64,
}

/// The spread of each point's repeats (points with one run are left out).
pub fn repeat_spreads(runs: &[LabRun]) -> Vec<RepeatSpread> {
    let mut out: Vec<RepeatSpread> = Vec::new();
    for r in runs {
        let key = (&r.scheduler, &r.lab.guest_scheduler, &r.lab.fs);
        let bw = r.aggregate.bw_bytes;
        match out.iter_mut().find(|g| (&g.scheduler, &g.guest_scheduler, &g.fs) == key) {
            Some(g) => {
                g.mean_bw_bytes = (g.mean_bw_bytes * g.repeats as f64 + bw as f64) / (g.repeats + 1) as f64;
                g.repeats += 1;
                g.min_bw_bytes = g.min_bw_bytes.min(bw);
                g.max_bw_bytes = g.max_bw_bytes.max(bw);
            }
            None => out.push(RepeatSpread {
                scheduler: r.scheduler.clone(),
                guest_scheduler: r.lab.guest_scheduler.clone(),
                fs: r.lab.fs.clone(),
                repeats: 1,
                mean_bw_bytes: bw as f64,
                min_bw_bytes: bw,
                max_bw_bytes: bw,
                spread: 0.0,
            }),
        }
    }
    out.retain(|g| g.repeats > 1);
    for g in &mut out {
        if g.mean_bw_bytes > 0.0 {
            g.spread = (g.max_bw_bytes - g.min_bw_bytes) as f64 / g.mean_bw_bytes;
        }
    }
    out
}

/// Everything the points share.
struct Prepared {
    kernel: Kernel,
    base: Vec<u8>,
    tools: PathBuf,
    accel: Accel,
}

/// Run every point of `spec`; `log` hears progress lines.
pub fn run_spec(spec: &Spec, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<LabReport, LabError> {
    std::fs::create_dir_all(&opts.out).map_err(|e| LabError::io(&opts.out, e))?;
    std::fs::create_dir_all(&opts.cache).map_err(|e| LabError::io(&opts.cache, e))?;
    let prepared = prepare(spec, opts, log)?;
    let sockets = tempfile::Builder::new()
        .prefix("headway-lab-")
        .tempdir()
        .map_err(|e| LabError::io(Path::new("/tmp"), e))?;
    let mut runs = Vec::new();
    for point in spec.points() {
        if opts.interrupt.load(Ordering::SeqCst) {
            return Err(LabError::Interrupted { point: point.label() });
        }
        log(&format!("point {} ({}):", point.label(), prepared.accel.name()));
        let run = run_point(spec, opts, &prepared, &point, sockets.path(), log)?;
        log(&format!(
            "  {:.2} MB/s, workload {:.1} s, wall {:.1} s",
            run.aggregate.bw_bytes as f64 / 1e6,
            run.lab.workload_s,
            run.lab.wall_s
        ));
        runs.push(run);
    }
    let repeats = repeat_spreads(&runs);
    Ok(LabReport { headway_version: env!("CARGO_PKG_VERSION"), spec: spec.name.clone(), runs, repeats })
}

/// Kernel modules a spec's points need (beyond virtio).
fn modules_for(spec: &Spec) -> Vec<(&str, &'static str)> {
    // ext4 always: the tools disk is one
    let mut m = vec![("virtio_pci", "guest"), ("virtio_blk", "guest"), ("ext4", "guest")];
    for fs in spec.guest.fs.to_vec() {
        match fs {
            Fs::Xfs => m.push(("xfs", "guest.fs")),
            Fs::Reiserfs => m.push(("reiserfs", "guest.fs")),
            Fs::Ext2 | Fs::Ext3 | Fs::Ext4 => m.push(("ext4", "guest.fs")),
            Fs::Raw => {}
        }
    }
    for s in spec.guest.guest_scheduler.to_vec() {
        match s {
            GuestScheduler::Bfq => m.push(("bfq", "guest.guest_scheduler")),
            GuestScheduler::Kyber => m.push(("kyber_iosched", "guest.guest_scheduler")),
            GuestScheduler::MqDeadline => m.push(("mq_deadline", "guest.guest_scheduler")),
            // not the kernel package's: added by `prepare`
            GuestScheduler::None | GuestScheduler::Stream => {}
        }
    }
    m.extend(spec.guest.modules.iter().map(|n| (n.as_str(), "guest.modules")));
    m
}

/// Host programs a spec's guests run.
fn tools_for(spec: &Spec) -> BTreeSet<String> {
    let mut t: BTreeSet<String> =
        spec.guest.fs.to_vec().iter().filter_map(|f| f.mkfs()).map(String::from).collect();
    let programs: &[&str] = match &spec.workload {
        Workload::Fio { .. } => &["fio"],
        Workload::Postmark(_) => &["postmark"],
        Workload::Dd(_) => &["dd"],
        // shell steps may use either
        Workload::Steps(_) => &["fio", "dd"],
    };
    t.extend(programs.iter().map(|p| p.to_string()));
    t.extend(spec.tools.iter().cloned());
    t
}

fn prepare(spec: &Spec, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<Prepared, LabError> {
    log(&format!("guest kernel: Debian {} ...", spec.guest.kernel.metapackage()));
    let kernel = Kernel::fetch(spec.guest.kernel, &opts.cache)?;
    log(&format!("  {} ({})", kernel.release, kernel.package));
    let wanted = modules_for(spec);
    let available = kernel.modules()?;
    for (m, key) in &wanted {
        if !available.has(m) {
            return Err(LabError::Unsupported {
                spec: spec.path.clone(),
                key: key.to_string(),
                msg: format!(
                    "kernel {} has no `{m}` (built in or as a module){}",
                    kernel.release,
                    if *m == "reiserfs" {
                        "; Debian's generic kernel has it: guest.kernel = \"generic\""
                    } else {
                        ""
                    }
                ),
            });
        }
    }
    let names: Vec<&str> = wanted.iter().map(|(m, _)| *m).collect();
    let mut modules = available.closure(&names)?;
    if spec.guest.guest_scheduler.to_vec().iter().any(|s| s.out_of_tree()) {
        log(&format!("stream-iosched for {} ...", kernel.release));
        let ko = image::stream_module(&kernel)?;
        log(&format!("  {}", ko.display()));
        modules.push(("stream_iosched".to_string(), ko));
    }
    let base = image::base_initramfs(&modules)?;
    let tools = image::tools_disk(&tools_for(spec), &opts.cache)?;
    let accel = match spec.guest.accel {
        spec::Accel::Tcg => Accel::Tcg,
        spec::Accel::Kvm => Accel::Kvm,
        spec::Accel::Auto => probe_kvm(spec, opts, &kernel, &base, &tools, log),
    };
    Ok(Prepared { kernel, base, tools, accel })
}

/// Boot a guest that only powers off under KVM: KVM if it gets there.
fn probe_kvm(
    spec: &Spec,
    opts: &LabOptions,
    kernel: &Kernel,
    base: &[u8],
    tools: &Path,
    log: &mut dyn FnMut(&str),
) -> Accel {
    let usable = std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm").is_ok();
    if !usable {
        log("accelerator: tcg (/dev/kvm cannot be opened)");
        return Accel::Tcg;
    }
    let memo = opts.cache.join("accel-probe");
    let key = probe_key(kernel);
    // one line per (host kernel, QEMU, guest kernel): `KEY<TAB>kvm|tcg`
    let known = std::fs::read_to_string(&memo).unwrap_or_default();
    if let Some(cached) = known.lines().find_map(|l| {
        let (k, v) = l.rsplit_once('\t')?;
        (k == key).then(|| if v == "kvm" { Accel::Kvm } else { Accel::Tcg })
    }) {
        log(&format!(
            "accelerator: {} (probed before; delete {} to probe again)",
            cached.name(),
            memo.display()
        ));
        return cached;
    }
    let dir = opts.out.join("kvm-probe");
    let attempt = || -> Result<Outcome, LabError> {
        std::fs::create_dir_all(&dir).map_err(|e| LabError::io(&dir, e))?;
        let init = InitScript {
            disks: 0,
            queue_depth: spec.guest.queue_depth,
            guest_scheduler: GuestScheduler::None,
            tunables: &[],
            fs: Fs::Raw,
            mkfs_options: "",
            mount_options: "",
            work: GuestWork::Nothing,
        }
        .render();
        let initrd = dir.join("initramfs.cpio");
        write_initramfs(&initrd, base, &init, &[])?;
        let results = dir.join("results.img");
        make_sparse(&results, RESULTS_DISK_BYTES)?;
        let console = dir.join("console.log");
        let g = Guest::start(&GuestConfig {
            kernel: &kernel.vmlinuz,
            initramfs: &initrd,
            tools,
            results: &results,
            sockets: &[],
            part: None,
            memory_mb: spec.guest.memory_mb,
            cpus: spec.guest.cpus,
            accel: Accel::Kvm,
            console: &console,
            extra: &[],
        })?;
        g.wait(KVM_PROBE_TIMEOUT, &opts.interrupt)
    };
    let outcome = attempt();
    let accel = match &outcome {
        Ok(Outcome::Done { status, .. }) if status == "ok" => Accel::Kvm,
        _ => Accel::Tcg,
    };
    match (&outcome, accel) {
        (_, Accel::Kvm) => log("accelerator: kvm (probe boot reached power-off)"),
        (Ok(o), _) => log(&format!("accelerator: tcg (KVM probe boot failed: {o:?}; see {})", dir.display())),
        (Err(e), _) => log(&format!("accelerator: tcg (KVM probe boot failed: {e})")),
    }
    if accel == Accel::Kvm {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let mut lines: Vec<String> = known.lines().map(String::from).collect();
    lines.push(format!("{key}\t{}", accel.name()));
    let _ = std::fs::write(&memo, lines.join("\n") + "\n");
    accel
}

/// What the KVM probe's verdict depends on: host kernel, QEMU binary, guest kernel.
fn probe_key(kernel: &Kernel) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let qemu = image::find_program(crate::qemu::QEMU)
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| format!("{}:{:?}", m.len(), m.modified().ok()))
        .unwrap_or_default();
    format!("{} {qemu} {}", host.trim(), kernel.package)
}

fn make_sparse(path: &Path, bytes: u64) -> Result<(), LabError> {
    let _ = std::fs::remove_file(path);
    let f = std::fs::File::create(path).map_err(|e| LabError::io(path, e))?;
    f.set_len(bytes).map_err(|e| LabError::io(path, e))
}

fn write_initramfs(
    path: &Path,
    base: &[u8],
    init: &str,
    files: &[(String, Vec<u8>)],
) -> Result<(), LabError> {
    let mut all = base.to_vec();
    all.extend(image::run_initramfs(init, files)?);
    std::fs::write(path, all).map_err(|e| LabError::io(path, e))
}

/// A server running on its own thread; stopped (and joined) by [`Served::stop`] or drop.
struct Served {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), headway_nbd::ServeError>>>,
    stats: Arc<headway_nbd::stats::Stats>,
    socket: PathBuf,
    trace: PathBuf,
}

impl Served {
    /// Stop the server (once) and remove its socket; what its `run` returned.
    fn halt(&mut self) -> Result<(), headway_nbd::ServeError> {
        self.stop.store(true, Ordering::SeqCst);
        let r = self.thread.take().map_or(Ok(()), |t| t.join().expect("server thread panicked"));
        let _ = std::fs::remove_file(&self.socket);
        r
    }

    fn stop(mut self) -> Result<(), headway_nbd::ServeError> {
        self.halt()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

fn capacity_bytes(model: &str) -> u64 {
    let spec = headway_disk::resolve(model).expect("checked by the spec");
    headway_disk::Hdd::new(spec).capacity() * headway_sched::SECTOR_BYTES
}

fn serve(
    spec: &Spec,
    point: &Point,
    export: PathBuf,
    socket: PathBuf,
    trace: PathBuf,
) -> Result<Served, LabError> {
    let hw = &spec.headway;
    let mut cfg = ServeConfig::new(export, Listen::Unix(socket.clone()));
    cfg.size = Some(spec.size.unwrap_or_else(|| capacity_bytes(&hw.disk)));
    cfg.backend = BackendKind::Emulated(hw.disk.clone());
    cfg.scheduler = point.scheduler.clone();
    cfg.settings = hw.settings();
    cfg.context = match hw.context {
        spec::Context::Connection => ContextMode::Connection,
        spec::Context::None => ContextMode::None,
    };
    cfg.queue_depth = Some(hw.queue_depth);
    cfg.write_cache = hw.write_cache.model();
    cfg.trace = Some(TraceConfig { path: trace.clone(), format: TraceFormat::Blkparse });
    let server = Server::bind(cfg).map_err(|source| LabError::Serve { point: point.label(), source })?;
    let stats = server.stats();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::Builder::new()
        .name("lab-serve".into())
        .spawn(move || server.run(flag))
        .map_err(|e| LabError::io(&socket, e))?;
    Ok(Served { stop, thread: Some(thread), stats, socket, trace })
}

fn run_point(
    spec: &Spec,
    opts: &LabOptions,
    prep: &Prepared,
    point: &Point,
    sockets: &Path,
    log: &mut dyn FnMut(&str),
) -> Result<LabRun, LabError> {
    let label = point.label();
    let dir = opts.out.join("points").join(&label);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| LabError::io(&dir, e))?;
    let disks = spec.guest.disks as usize;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut dropped = Vec::new();
    let work = match &spec.workload {
        Workload::Fio { text, .. } => {
            // fio expands `${VAR}` from its environment; the guest's init exports D0, D1, ...
            let devs: Vec<String> = (0..disks).map(|i| format!("${{D{i}}}")).collect();
            let dirs: Vec<String> = (0..disks).map(InitScript::mount_point).collect();
            let target = if point.fs == Fs::Raw { Target::Raw(&devs) } else { Target::Dirs(&dirs) };
            let job = for_guest(text, target);
            dropped = job.dropped;
            files.push(("job.fio".into(), job.text.into_bytes()));
            GuestWork::Fio
        }
        Workload::Postmark(p) => {
            files
                .push(("postmark.pmrc".into(), postmark_config(p, &InitScript::mount_point(0)).into_bytes()));
            GuestWork::Postmark(p)
        }
        Workload::Dd(d) => {
            let size = |s: &str| {
                headway_sched::units::parse_size(s, headway_sched::units::SizeBase::Binary)
                    .expect("checked by the spec")
            };
            GuestWork::Dd(d, size(&d.size), size(&d.bs))
        }
        Workload::Steps(s) => GuestWork::Steps(s),
    };
    let tunables: Vec<(String, spec::Value)> = spec.guest.tunables.clone().into_iter().collect();
    let init = InitScript {
        disks,
        queue_depth: spec.guest.queue_depth,
        guest_scheduler: point.guest_scheduler,
        tunables: &tunables,
        fs: point.fs,
        mkfs_options: &spec.guest.mkfs_options,
        mount_options: &spec.guest.mount_options,
        work,
    }
    .render();
    let initrd = dir.join("initramfs.cpio");
    write_initramfs(&initrd, &prep.base, &init, &files)?;
    let mut served = Vec::new();
    for i in 0..disks {
        let export = dir.join(format!("disk{i}.img"));
        let _ = std::fs::remove_file(&export);
        let socket = sockets.join(format!("{label}.{i}.sock"));
        served.push(serve(spec, point, export, socket, dir.join(format!("trace{i}.blkparse")))?);
    }
    let socks: Vec<PathBuf> = served.iter().map(|s| s.socket.clone()).collect();
    // several guests on one server: each has its own equal part of every headway disk
    // (1 MiB aligned), over its own NBD connection: a context of its own
    let guests = spec.guest.guests as usize;
    let part = (guests > 1).then(|| {
        let bytes = spec.size.unwrap_or_else(|| capacity_bytes(&spec.headway.disk));
        bytes / guests as u64 / (1 << 20) * (1 << 20)
    });
    let guest_dir = |g: usize| if guests == 1 { dir.clone() } else { dir.join(format!("guest{g}")) };
    let mut running = Vec::new();
    for g in 0..guests {
        let gd = guest_dir(g);
        std::fs::create_dir_all(&gd).map_err(|e| LabError::io(&gd, e))?;
        let results_img = gd.join("results.img");
        make_sparse(&results_img, RESULTS_DISK_BYTES)?;
        let console = gd.join("console.log");
        let guest = Guest::start(&GuestConfig {
            kernel: &prep.kernel.vmlinuz,
            initramfs: &initrd,
            tools: &prep.tools,
            results: &results_img,
            sockets: &socks,
            part: part.map(|p| (g as u64 * p, p)),
            memory_mb: spec.guest.memory_mb,
            cpus: spec.guest.cpus,
            accel: prep.accel,
            console: &console,
            extra: &[],
        })?;
        running.push((guest, results_img, console, gd));
    }
    log(&format!(
        "  {disks} server(s) up ({} on {}); {guests} guest(s) booting",
        point.scheduler, spec.headway.disk
    ));
    // they started together: each may take the whole timeout from its start
    let mut ended = Vec::new();
    for (guest, results_img, console, gd) in running.drain(..) {
        let outcome = guest.wait(Duration::from_secs(spec.guest.timeout_s), &opts.interrupt)?;
        ended.push((outcome, results_img, console, gd));
    }
    // the workload's markers: each guest's last sectors (run.rs's parts; script.rs's mark)
    let disk_bytes = spec.size.unwrap_or_else(|| capacity_bytes(&spec.headway.disk));
    let marks = |k: u64| crate::script::marker_sectors(disk_bytes, part, guests as u64, k);
    let begins = marks(crate::script::BEGIN_MARK_FROM_END);
    let ends = marks(crate::script::END_MARK_FROM_END);
    let mut server = Vec::new();
    for s in served {
        let (stats, trace) = (s.stats.clone(), s.trace.clone());
        s.stop().map_err(|source| LabError::Serve { point: label.clone(), source })?;
        let served = crate::served::read_served(&trace)
            .map_err(|msg| LabError::Results { point: label.clone(), msg })?;
        let workload = served.workload(&begins, &ends);
        let w = stats.total();
        server.push(ServerReport {
            reads: w.reads,
            read_bytes: w.read_bytes,
            writes: w.writes,
            write_bytes: w.write_bytes,
            others: w.others,
            mean_latency_ns: w.latency.mean(),
            idle_wait_ns: w.idle_wait_ns,
            trace: trace.display().to_string(),
            workload,
            served,
            replay: Vec::new(),
        });
    }
    if !opts.keep_disks {
        for i in 0..disks {
            let _ = std::fs::remove_file(dir.join(format!("disk{i}.img")));
        }
    }
    let _ = std::fs::remove_file(&initrd);
    let mut measured = Vec::new();
    let mut wall_s = 0f64;
    for (g, (outcome, results_img, console, gd)) in ended.into_iter().enumerate() {
        let who = if guests == 1 { label.clone() } else { format!("{label} guest {g}") };
        let wall = guest_outcome(&who, outcome, &console, spec.guest.timeout_s)?;
        wall_s = wall_s.max(wall.as_secs_f64());
        let files = read_tar(&results_img).map_err(|msg| LabError::Results { point: who.clone(), msg })?;
        let unpacked = gd.join("results");
        std::fs::create_dir_all(&unpacked).map_err(|e| LabError::io(&unpacked, e))?;
        for (name, data) in &files {
            let p = unpacked.join(name);
            std::fs::write(&p, data).map_err(|e| LabError::io(&p, e))?;
        }
        let _ = std::fs::remove_file(&results_img);
        measured.push(
            measure(&files, spec.workload.kind()).map_err(|msg| LabError::Results { point: who, msg })?,
        );
    }
    let m = crate::results::merge_guests(measured);
    Ok(LabRun {
        scheduler: point.scheduler.clone(),
        disk: spec.headway.disk.clone(),
        context: spec.headway.context.name().to_string(),
        jobs: m.jobs,
        aggregate: m.aggregate,
        device: m.device,
        lab: LabInfo {
            fs: point.fs.name().to_string(),
            guest_scheduler: point.guest_scheduler.name().to_string(),
            accel: prep.accel.name().to_string(),
            kernel: if m.kernel.is_empty() { prep.kernel.release.clone() } else { m.kernel },
            guest_memory_mb: spec.guest.memory_mb,
            guest_cpus: spec.guest.cpus,
            guest_queue_depth: spec.guest.queue_depth,
            guests: spec.guest.guests,
            repeat: point.repeat,
            wall_s,
            workload_s: m.workload_s,
            steps: m.steps,
            dropped_options: dropped,
            guest_counters: m.guest_counters.values,
        },
        fio: m.fio,
        postmark: m.postmark,
        server,
    })
}

/// How long a guest ran, or why it failed (with its console's last lines).
fn guest_outcome(who: &str, outcome: Outcome, console: &Path, timeout_s: u64) -> Result<Duration, LabError> {
    let guest_err = |what: String| LabError::Guest {
        point: who.to_string(),
        what,
        console: console.to_path_buf(),
        tail: console_tail(console, CONSOLE_TAIL),
    };
    match outcome {
        Outcome::Done { wall, status } if status == "ok" => Ok(wall),
        Outcome::Done { status, .. } => Err(guest_err(format!("the guest's run {status}"))),
        Outcome::Ended { code, wall } => {
            let log = crate::qemu::read_lossy(console);
            let why = match log.lines().find(|l| l.contains("Kernel panic")) {
                Some(l) => format!("the guest kernel panicked: `{}`", l.trim()),
                None => format!("QEMU exit {}", code.map_or("by signal".to_string(), |c| c.to_string())),
            };
            Err(guest_err(format!(
                "the guest stopped after {:.1} s without finishing ({why})",
                wall.as_secs_f64()
            )))
        }
        Outcome::Interrupted { .. } => Err(LabError::Interrupted { point: who.to_string() }),
        Outcome::TimedOut { wall } => Err(guest_err(format!(
            "the guest did not finish within guest.timeout_s = {timeout_s} s and was killed after {:.1} s",
            wall.as_secs_f64()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Aggregate, DeviceReport};
    use std::collections::BTreeMap;

    fn run(sched: &str, guest: &str, bw: u64) -> LabRun {
        LabRun {
            scheduler: sched.into(),
            disk: headway_disk::DEFAULT.into(),
            context: "connection".into(),
            jobs: vec![],
            aggregate: Aggregate { io_bytes: 0, bw_bytes: bw, iops: 0.0, runtime_ns: 0 },
            device: DeviceReport::default(),
            lab: LabInfo {
                fs: "ext4".into(),
                guest_scheduler: guest.into(),
                accel: "tcg".into(),
                kernel: String::new(),
                guest_memory_mb: 512,
                guest_cpus: 1,
                guest_queue_depth: 32,
                guests: 1,
                repeat: 0,
                wall_s: 0.0,
                workload_s: 0.0,
                steps: vec![],
                dropped_options: vec![],
                guest_counters: BTreeMap::new(),
            },
            fio: None,
            postmark: None,
            server: vec![],
        }
    }

    #[test]
    fn repeats_spread_per_point() {
        let runs = [
            run("noop", "bfq", 90),
            run("noop", "bfq", 110),
            run("noop", "none", 50),
            run("noop", "bfq", 100),
        ];
        let g = repeat_spreads(&runs);
        assert_eq!(g.len(), 1, "a point run once has no spread");
        assert_eq!((g[0].repeats, g[0].min_bw_bytes, g[0].max_bw_bytes), (3, 90, 110));
        assert!((g[0].mean_bw_bytes - 100.0).abs() < 1e-9);
        assert!((g[0].spread - 0.2).abs() < 1e-12);
    }
}

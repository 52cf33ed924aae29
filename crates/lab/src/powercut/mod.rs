//! Power cuts: `headway serve` inside a guest whose disk QEMU caches, killed at random
//! moments (issue 39, item 6).
//!
//! The kill -9 test (`crates/cli/tests/durability.rs`) kills the server but not the
//! kernel under it: what the server wrote stays in the page cache, so it cannot tell a
//! missing `fdatasync` from a present one. Here the server runs inside a Linux guest and
//! exports the guest's virtio disk (`/dev/vdX`, a raw file on the host attached with
//! `cache=writeback`), so its writes sit in the *guest's* page cache until a sync sends
//! them to QEMU. A writer on the host ([`load`]: three connections, tagged writes, a third
//! FUA, FLUSHes) reaches the server through QEMU's user network (a host port forwarded to
//! the guest's NBD port), and after a seeded random time QEMU is killed with SIGKILL: the
//! guest's memory — its page cache, the server, everything its kernel had not handed to
//! QEMU — is gone, as at a power cut. The disk file on the host is then read and every
//! write the server acknowledged as durable (a FUA write's reply, or a FLUSH answered after
//! the write's reply) must be there, whole, and nothing must be where no write put it.
//!
//! Each trial boots a fresh guest on a fresh, zeroed disk. The exports tried are `file`
//! (buffered through the guest's page cache) and `emulated:wd5000aaks --write-cache back`
//! (the same data path, completions timed by the model's write-back cache). A control run
//! sets [`headway_nbd::backend::SKIP_SYNC_ENV`] in the guest, so FLUSH and FUA are answered
//! without a sync: those trials must lose acknowledged durable writes, or the trials
//! could not fail and prove nothing.
//!
//! What is checked is the disk file after the cut, on the host (QEMU is dead, so nothing
//! writes it any more), rather than through a restarted server: the server reads the
//! device it exports, so the bytes are the same.

pub mod load;

use std::collections::BTreeMap;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::image::{self, Kernel};
use crate::qemu::{console_tail, Accel, Guest, GuestConfig, CONSOLE_TAIL};
use crate::spec::KernelFlavour;
use crate::LabError;
use load::{handshake, Load, Outcome, Rng};

/// The guest's disk, exported whole.
pub const DISK_BYTES: u64 = 64 << 20;
/// Connections of the writer, and requests in flight on each.
pub const CONNECTIONS: usize = 3;
pub const DEPTH: usize = 8;
/// The cut comes this long after the writer's connections are up: uniform in
/// [CUT_MIN, CUT_MIN + CUT_SPAN).
pub const CUT_MIN: Duration = Duration::from_millis(500);
pub const CUT_SPAN_MS: u64 = 4000;
/// How long a guest may take to boot and start serving (TCG on a loaded machine).
pub const BOOT_DEADLINE: Duration = Duration::from_secs(240);
/// The guest's memory: room for the server and a page cache larger than the disk.
pub const GUEST_MEMORY_MB: u32 = 512;
/// The drive model of the emulated export.
pub const MODEL: &str = "wd5000aaks";

/// Which export the guest's server has.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// `--backend file`: buffered through the guest's page cache.
    File,
    /// `--backend emulated:wd5000aaks --write-cache back`.
    EmulatedWriteBack,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::File => "file",
            Backend::EmulatedWriteBack => "emulated-write-back",
        }
    }

    fn serve_args(self) -> String {
        match self {
            Backend::File => "--backend file".into(),
            Backend::EmulatedWriteBack => format!("--backend emulated:{MODEL} --write-cache back"),
        }
    }
}

/// What to run.
pub struct PowerCutConfig {
    /// The `headway` binary the guest runs (copied onto its tools disk with its libraries).
    pub headway: PathBuf,
    /// Trials with the sync in place, per backend.
    pub trials: u32,
    pub backends: Vec<Backend>,
    /// Trials with the sync removed (the control), on the first backend.
    pub control_trials: u32,
    pub seed: u64,
    /// Each trial's console log and disk go under here.
    pub out: PathBuf,
    pub cache: PathBuf,
    /// Set to stop: the running guest is killed and the run ends.
    pub interrupt: Arc<AtomicBool>,
}

/// One cut.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Trial {
    pub backend: Backend,
    /// The sync removed (the control).
    pub control: bool,
    /// From QEMU's start to the server's first answer.
    pub boot_secs: f64,
    /// From the writer's connections being up to the cut.
    pub cut_after_ms: u64,
    pub writes: usize,
    pub acked: usize,
    pub durable: usize,
    pub flushes_acked: u64,
    /// Acknowledged durable writes missing or torn after the cut.
    pub lost: usize,
    /// Sectors holding bytes no write put there.
    pub foreign: usize,
    pub errors: usize,
    /// The first few of each, to read.
    pub examples: Vec<String>,
}

/// The guest's `/init`: mount, load modules, find the disks by serial, bring the network
/// up, then run the server on the data disk (never returning: the cut ends it).
fn init_script(backend: Backend, control: bool) -> String {
    let env = if control { format!("{}=1 ", headway_nbd::backend::SKIP_SYNC_ENV) } else { String::new() };
    format!(
        r#"#!/bin/sh
/bin/busybox --install -s /bin
export PATH=/tools/bin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo 1 > /proc/sys/kernel/printk 2>/dev/null
while read name file; do insmod $file || echo "HEADWAY: insmod $name failed"; done < /modules.order
dev_of() {{
  n=0
  while [ $n -lt 100 ]; do
    for d in /sys/block/vd*; do
      [ "$(cat $d/serial 2>/dev/null)" = "$1" ] && [ -b /dev/${{d##*/}} ] && {{ echo /dev/${{d##*/}}; return 0; }}
    done
    sleep 0.1; n=$((n+1))
  done
  return 1
}}
T=$(dev_of hw-tools) || {{ echo "HEADWAY-FAILED no tools disk"; poweroff -f; }}
mount -t ext4 -o ro $T /tools || {{ echo "HEADWAY-FAILED mount tools"; poweroff -f; }}
ln -s /tools/lib/ld-linux-x86-64.so.2 /lib64/ld-linux-x86-64.so.2
export LD_LIBRARY_PATH=/tools/lib
D=$(dev_of hw-data) || {{ echo "HEADWAY-FAILED no data disk"; poweroff -f; }}
ip link set lo up
ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 || {{ echo "HEADWAY-FAILED network"; poweroff -f; }}
echo "HEADWAY-STEP serve $D"
{env}headway serve --export $D {args} --scheduler noop --listen 0.0.0.0:10809
echo "HEADWAY-FAILED headway serve exited $?"
poweroff -f
"#,
        args = backend.serve_args()
    )
}

/// A TCP port free on the host now.
fn free_port() -> Result<u16, LabError> {
    let l =
        std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| LabError::io(Path::new("127.0.0.1:0"), e))?;
    Ok(l.local_addr().map_err(|e| LabError::io(Path::new("127.0.0.1:0"), e))?.port())
}

/// A connection past its handshake to the guest's server on `port`, once it serves.
fn connect(
    port: u16,
    guest: &mut Guest,
    point: &str,
    console: &Path,
    until: Instant,
    stop: &AtomicBool,
) -> Result<TcpStream, LabError> {
    let failed = |what: String| LabError::Guest {
        point: point.to_string(),
        what,
        console: console.to_path_buf(),
        tail: console_tail(console, CONSOLE_TAIL),
    };
    loop {
        if stop.load(Ordering::SeqCst) {
            return Err(LabError::Interrupted { point: point.to_string() });
        }
        if !guest.running() {
            return Err(failed("the guest ended before its server answered".into()));
        }
        if Instant::now() >= until {
            return Err(failed(format!("no NBD server answered in the guest within {BOOT_DEADLINE:?}")));
        }
        // QEMU accepts on the forwarded port before the guest listens, then closes
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(20)));
            let _ = s.set_nodelay(true);
            if handshake(&mut s, DISK_BYTES).is_ok() {
                let _ = s.set_read_timeout(None);
                return Ok(s);
            }
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The prepared guest: kernel, base initramfs, tools disk with the server.
struct Prepared {
    kernel: Kernel,
    base: Vec<u8>,
    tools: PathBuf,
}

fn prepare(cfg: &PowerCutConfig, log: &mut dyn FnMut(&str)) -> Result<Prepared, LabError> {
    let kernel = Kernel::fetch(KernelFlavour::Cloud, &cfg.cache)?;
    log(&format!("guest kernel {} ({})", kernel.release, kernel.package));
    let modules = kernel.modules()?.closure(&["virtio_pci", "virtio_blk", "virtio_net", "ext4"])?;
    let base = image::base_initramfs(&modules)?;
    let programs = BTreeMap::from([("headway".to_string(), cfg.headway.clone())]);
    let tools = image::tools_disk_of(&programs, &cfg.cache)?;
    Ok(Prepared { kernel, base, tools })
}

/// One trial: boot, serve, write, cut, check.
fn trial(
    p: &Prepared,
    cfg: &PowerCutConfig,
    backend: Backend,
    control: bool,
    n: u32,
    rng: &mut Rng,
) -> Result<Trial, LabError> {
    let point = format!("{}{}-{n}", backend.name(), if control { "-control" } else { "" });
    let dir = cfg.out.join(&point);
    std::fs::create_dir_all(&dir).map_err(|e| LabError::io(&dir, e))?;
    let (disk, results, console, initrd) =
        (dir.join("disk.img"), dir.join("results.img"), dir.join("console.log"), dir.join("initrd"));
    for (f, len) in [(&disk, DISK_BYTES), (&results, 1 << 20)] {
        let _ = std::fs::remove_file(f);
        let file = std::fs::File::create(f).map_err(|e| LabError::io(f, e))?;
        file.set_len(len).map_err(|e| LabError::io(f, e))?;
    }
    let mut all = p.base.clone();
    all.extend(image::run_initramfs(&init_script(backend, control), &[])?);
    std::fs::write(&initrd, all).map_err(|e| LabError::io(&initrd, e))?;
    let port = free_port()?;
    let extra = vec![
        "-drive".to_string(),
        format!("id=hw-data,file={},format=raw,if=none,cache=writeback,aio=threads", disk.display()),
        "-device".into(),
        "virtio-blk-pci,drive=hw-data,serial=hw-data".into(),
        "-netdev".into(),
        format!("user,id=n0,hostfwd=tcp:127.0.0.1:{port}-:10809"),
        "-device".into(),
        "virtio-net-pci,netdev=n0".into(),
    ];
    let started = Instant::now();
    let mut guest = Guest::start(&GuestConfig {
        kernel: &p.kernel.vmlinuz,
        initramfs: &initrd,
        tools: &p.tools,
        results: &results,
        sockets: &[],
        part: None,
        memory_mb: GUEST_MEMORY_MB,
        cpus: 1,
        accel: Accel::Tcg,
        console: &console,
        extra: &extra,
    })?;
    let until = started + BOOT_DEADLINE;
    let mut load = Load::new(DISK_BYTES, DEPTH, rng.next());
    for _ in 0..CONNECTIONS {
        let s = connect(port, &mut guest, &point, &console, until, &cfg.interrupt)?;
        let rd = s.try_clone().map_err(|e| LabError::io(&console, e))?;
        load.connection(rd, s);
    }
    let boot_secs = started.elapsed().as_secs_f64();
    let cut_after = CUT_MIN + Duration::from_millis(rng.below(CUT_SPAN_MS));
    std::thread::sleep(cut_after);
    guest.kill();
    load.join();
    let bytes = std::fs::read(&disk).map_err(|e| LabError::io(&disk, e))?;
    let o: Outcome = load.check(&bytes);
    let _ = std::fs::remove_file(&disk);
    let _ = std::fs::remove_file(&initrd);
    let _ = std::fs::remove_file(&results);
    let mut examples: Vec<String> = o.lost.iter().take(3).cloned().collect();
    examples.extend(o.foreign.iter().take(3).cloned());
    examples.extend(o.errors.iter().take(3).cloned());
    Ok(Trial {
        backend,
        control,
        boot_secs,
        cut_after_ms: cut_after.as_millis() as u64,
        writes: o.writes,
        acked: o.acked,
        durable: o.durable,
        flushes_acked: o.flushes_acked,
        lost: o.lost.len(),
        foreign: o.foreign.len(),
        errors: o.errors.len(),
        examples,
    })
}

/// Run the trials (each backend's in turn, then the control), `log` told of each.
pub fn run(cfg: &PowerCutConfig, log: &mut dyn FnMut(&str)) -> Result<Vec<Trial>, LabError> {
    let p = prepare(cfg, log)?;
    let mut rng = Rng(cfg.seed | 1);
    let mut plan: Vec<(Backend, bool)> = Vec::new();
    for &b in &cfg.backends {
        plan.extend((0..cfg.trials).map(|_| (b, false)));
    }
    if let Some(&b) = cfg.backends.first() {
        plan.extend((0..cfg.control_trials).map(|_| (b, true)));
    }
    let mut out = Vec::new();
    for (i, (b, control)) in plan.into_iter().enumerate() {
        let t = trial(&p, cfg, b, control, i as u32, &mut rng)?;
        log(&format!(
            "trial {i:>3} {}{}: booted in {:.1} s, cut after {} ms: {} writes, {} acknowledged, {} durable \
             ({} FLUSHes answered), {} lost, {} foreign, {} errors{}",
            b.name(),
            if control { " (control: no sync)" } else { "" },
            t.boot_secs,
            t.cut_after_ms,
            t.writes,
            t.acked,
            t.durable,
            t.flushes_acked,
            t.lost,
            t.foreign,
            t.errors,
            if t.examples.is_empty() { String::new() } else { format!(": {}", t.examples.join("; ")) }
        ));
        out.push(t);
    }
    Ok(out)
}

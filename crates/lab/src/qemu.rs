//! One guest: a `qemu-system-x86_64` process, its console, its deadline.
//!
//! The guest boots the Debian kernel with the run's initramfs, `console=ttyS0` on QEMU's
//! stdout (written to `console.log`), `panic=-1` and `-no-reboot`, so a kernel panic ends
//! QEMU as power-off does. Disks are virtio-blk with serial numbers the guest's `/init`
//! looks for: the tools image (read-only), the results disk (a raw file the guest writes a
//! tar onto), and each headway disk, `nbd:unix:SOCKET` with `cache=none` (no host page
//! cache between the guest and `headway serve`).
//!
//! Nothing is left behind: the child gets `PR_SET_PDEATHSIG` = SIGKILL (it dies with the
//! lab), and [`Guest`]'s `Drop` kills and reaps it. [`Guest::wait`] kills it at its
//! deadline. Its outcome says how it ended, with the console's last lines.

use std::fs::File;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::script::{disk_serial, DONE_MARK, RESULTS_SERIAL, TOOLS_SERIAL};
use crate::LabError;

/// The QEMU program.
pub const QEMU: &str = "qemu-system-x86_64";
/// Console lines an error quotes.
pub const CONSOLE_TAIL: usize = 25;

/// Which accelerator ran a guest.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    Kvm,
    Tcg,
}

impl Accel {
    pub fn name(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// What to boot.
pub struct GuestConfig<'a> {
    pub kernel: &'a Path,
    pub initramfs: &'a Path,
    pub tools: &'a Path,
    pub results: &'a Path,
    /// Unix sockets of the headway disks' servers, in disk order.
    pub sockets: &'a [PathBuf],
    /// The part of every headway disk this guest sees, (offset, size) in bytes (several
    /// guests on one server); `None`: the whole export.
    pub part: Option<(u64, u64)>,
    pub memory_mb: u32,
    pub cpus: u32,
    pub accel: Accel,
    pub console: &'a Path,
    /// More QEMU arguments (the power-cut trials' data disk and network).
    pub extra: &'a [String],
}

impl GuestConfig<'_> {
    pub fn command(&self) -> Command {
        let mut c = Command::new(QEMU);
        c.args(["-nodefaults", "-no-user-config", "-nographic", "-no-reboot"]);
        match self.accel {
            Accel::Kvm => c.args(["-accel", "kvm", "-cpu", "host"]),
            Accel::Tcg => c.args(["-accel", "tcg", "-cpu", "max"]),
        };
        c.arg("-m").arg(self.memory_mb.to_string());
        c.arg("-smp").arg(self.cpus.to_string());
        c.arg("-kernel").arg(self.kernel);
        c.arg("-initrd").arg(self.initramfs);
        c.args(["-append", "console=ttyS0 panic=-1 quiet loglevel=3 tsc=reliable"]);
        c.args(["-serial", "stdio"]);
        let drive = |c: &mut Command, id: &str, file: String, extra: &str| {
            c.arg("-drive").arg(format!("id={id},file={file},format=raw,if=none{extra}"));
            c.arg("-device").arg(format!("virtio-blk-pci,drive={id},serial={id}"));
        };
        drive(&mut c, TOOLS_SERIAL, self.tools.display().to_string(), ",readonly=on");
        drive(&mut c, RESULTS_SERIAL, self.results.display().to_string(), "");
        let part = self.part.map_or(String::new(), |(offset, size)| format!(",offset={offset},size={size}"));
        for (i, s) in self.sockets.iter().enumerate() {
            let extra = format!(",cache=none,aio=threads{part}");
            drive(&mut c, &disk_serial(i), format!("nbd:unix:{}", s.display()), &extra);
        }
        c.args(self.extra);
        c
    }
}

/// A running guest.
pub struct Guest {
    child: Option<Child>,
    console: PathBuf,
    started: Instant,
}

/// How a guest ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It printed the done mark and powered off.
    Done { wall: Duration, status: String },
    /// It ended without the mark (panic, crash, QEMU error).
    Ended { wall: Duration, code: Option<i32> },
    /// Killed at the deadline.
    TimedOut { wall: Duration },
    /// Killed because the run was interrupted.
    Interrupted { wall: Duration },
}

impl Guest {
    /// Kill the guest at once (SIGKILL to QEMU) and reap it: what its kernel and QEMU had
    /// not written is gone, as after a power cut.
    pub fn kill(mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Whether QEMU is still running.
    pub fn running(&mut self) -> bool {
        self.child.as_mut().is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    pub fn start(cfg: &GuestConfig<'_>) -> Result<Guest, LabError> {
        let console = File::create(cfg.console).map_err(|e| LabError::io(cfg.console, e))?;
        let err = console.try_clone().map_err(|e| LabError::io(cfg.console, e))?;
        let mut cmd = cfg.command();
        cmd.stdin(Stdio::null()).stdout(console).stderr(err);
        // SAFETY: prctl and setpgid are async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                libc::setpgid(0, 0);
                // the lab may block SIGINT/SIGTERM for its signal thread; QEMU must not inherit that
                let mut empty: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut empty);
                libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|e| LabError::Missing {
            what: format!("{QEMU} ({e}): install Debian's qemu-system-x86 (`make lab-deps`)"),
        })?;
        Ok(Guest { child: Some(child), console: cfg.console.to_path_buf(), started: Instant::now() })
    }

    /// Wait for the guest to power off, killing it at `timeout` or when `interrupt` is set.
    pub fn wait(mut self, timeout: Duration, interrupt: &AtomicBool) -> Result<Outcome, LabError> {
        let mut child = self.child.take().expect("waited once");
        loop {
            let wall = self.started.elapsed();
            match child.try_wait().map_err(|e| LabError::io(&self.console, e))? {
                Some(status) => {
                    let log = read_lossy(&self.console);
                    return Ok(match log.lines().rev().find_map(|l| l.trim().strip_prefix(DONE_MARK)) {
                        Some(rest) => Outcome::Done { wall, status: rest.trim().to_string() },
                        None => Outcome::Ended { wall, code: status.code() },
                    });
                }
                None if wall >= timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Ok(Outcome::TimedOut { wall });
                }
                None if interrupt.load(Ordering::SeqCst) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Ok(Outcome::Interrupted { wall });
                }
                None => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub(crate) fn read_lossy(p: &Path) -> String {
    let mut b = Vec::new();
    let _ = File::open(p).and_then(|mut f| f.read_to_end(&mut b));
    String::from_utf8_lossy(&b).into_owned()
}

/// The last `n` lines of the console log, escape sequences removed.
pub fn console_tail(p: &Path, n: usize) -> String {
    let log = read_lossy(p);
    let clean: String = strip_escapes(&log);
    let lines: Vec<&str> = clean.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn strip_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\x1b' {
            if it.peek() == Some(&'[') {
                it.next();
                while let Some(&d) = it.peek() {
                    it.next();
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        if c == '\r' || (c.is_control() && c != '\n' && c != '\t') {
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_has_disks_by_serial() {
        let p = Path::new;
        let socks = vec![PathBuf::from("/s/d0.sock"), PathBuf::from("/s/d1.sock")];
        let cfg = GuestConfig {
            kernel: p("/k/vmlinuz"),
            initramfs: p("/k/initrd"),
            tools: p("/c/tools.img"),
            results: p("/o/results.img"),
            sockets: &socks,
            part: Some((1 << 30, 1 << 30)),
            memory_mb: 768,
            cpus: 2,
            accel: Accel::Tcg,
            console: p("/o/console.log"),
            extra: &[],
        };
        let args: Vec<String> = cfg.command().get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        let all = args.join(" ");
        assert!(all.contains("-accel tcg"));
        assert!(all.contains("-m 768 -smp 2"));
        assert!(all.contains("id=hw-tools,file=/c/tools.img,format=raw,if=none,readonly=on"));
        assert!(all.contains("id=hw-disk1,file=nbd:unix:/s/d1.sock,format=raw,if=none,cache=none"));
        assert!(all.contains(",offset=1073741824,size=1073741824"), "the guest's part of the disk: {all}");
        assert!(all.contains("virtio-blk-pci,drive=hw-disk0,serial=hw-disk0"));
    }

    #[test]
    fn console_tail_drops_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.log");
        std::fs::write(&f, "\x1bc\x1b[?7l\x1b[2JSeaBIOS\r\nline a\n\nline b\r\n[ 1.0] Kernel panic\n")
            .unwrap();
        assert_eq!(console_tail(&f, 2), "line b\n[ 1.0] Kernel panic");
        assert_eq!(console_tail(&f, 10), "cSeaBIOS\nline a\nline b\n[ 1.0] Kernel panic");
    }
}

//! What the server's integration tests share: a server running in a thread on a Unix
//! socket in a temporary directory, the real clients (a test fails when one is missing),
//! and small wire helpers.
#![allow(dead_code)] // each test file uses its own part

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use headway_nbd::backend::Lateness;
use headway_nbd::handshake::{self as hs, ClientOption};
use headway_nbd::proto::*;
use headway_nbd::{Listen, ServeConfig, ServeError, Server};

/// A server serving `dir/disk.img` on `dir/nbd.sock` until stopped or dropped.
pub struct Running {
    dir: Option<tempfile::TempDir>,
    pub sock: PathBuf,
    stop: Arc<AtomicBool>,
    /// The delay line's lateness (`emulated:MODEL` only).
    pub lateness: Arc<Mutex<Lateness>>,
    /// The export's counters.
    pub stats: Arc<headway_nbd::stats::Stats>,
    thread: Option<JoinHandle<Result<(), ServeError>>>,
}

impl Running {
    /// Bind in `dir` with the configuration `setup` makes of the defaults, then run.
    pub fn start_in(
        dir: tempfile::TempDir,
        setup: impl FnOnce(&mut ServeConfig),
    ) -> Result<Running, ServeError> {
        let sock = dir.path().join("nbd.sock");
        let mut cfg = ServeConfig::new(dir.path().join("disk.img"), Listen::Unix(sock.clone()));
        setup(&mut cfg);
        let server = Server::bind(cfg)?;
        let lateness = server.lateness();
        let stats = server.stats();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = Some(std::thread::spawn(move || server.run(s)));
        Ok(Running { dir: Some(dir), sock, stop, lateness, stats, thread })
    }

    /// [`start_in`](Self::start_in) a new temporary directory; panics if binding fails.
    pub fn start(setup: impl FnOnce(&mut ServeConfig)) -> Running {
        Running::start_in(tempfile::tempdir().unwrap(), setup).unwrap()
    }

    pub fn uri(&self) -> String {
        format!("nbd+unix:///?socket={}", self.sock.display())
    }

    /// A path in the server's directory (`disk.img` is the export).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.as_ref().unwrap().path().join(name)
    }

    /// Stop (in-flight requests finish, the export is synced); the directory, to look at.
    pub fn stop(self) -> tempfile::TempDir {
        let (dir, result) = self.stop_with_result();
        result.unwrap();
        dir
    }

    /// Stop as [`stop`](Self::stop) does; the directory and what the server returned.
    pub fn stop_with_result(mut self) -> (tempfile::TempDir, Result<(), ServeError>) {
        self.stop.store(true, Ordering::SeqCst);
        let result = self.thread.take().unwrap().join().unwrap();
        (self.dir.take().unwrap(), result)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The client; a test that needs it fails without it (`make deps` installs it).
pub fn tool(name: &str) -> &str {
    let ok = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "`{name}` is not installed (run `make deps`)");
    name
}

/// nbdsh runs on the system python (the libnbd bindings are a Debian package); a test
/// that needs it fails without it.
pub fn nbdsh() -> Command {
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import nbd"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "/usr/bin/python3 cannot import nbd (python3-libnbd; run `make deps`)");
    let mut c = Command::new("/usr/bin/python3");
    c.args(["-m", "nbd"]);
    c
}

/// fio with its nbd engine; a test that needs it fails without it.
pub fn fio_nbd() -> &'static str {
    let ok = Command::new("fio").arg("--enghelp=nbd").output().is_ok_and(|o| o.status.success());
    assert!(ok, "fio with the nbd engine is not installed (run `make deps`)");
    "fio"
}

/// Run a client; its stdout and stderr. Panics (with them) if it fails.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// `len` pseudo-random bytes (xorshift from `seed`).
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Write [`pattern`] bytes to `path`; the bytes.
pub fn random_file(path: &Path, len: usize) -> Vec<u8> {
    let data = pattern(len, 1);
    std::fs::write(path, &data).unwrap();
    data
}

pub fn read_n(c: &mut UnixStream, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    c.read_exact(&mut b).unwrap();
    b
}

/// Connect and negotiate the default export with NBD_OPT_EXPORT_NAME (simple replies);
/// the stream and the export size.
pub fn connect(sock: &Path) -> (UnixStream, u64) {
    let (c, size, _) = connect_with_flags(sock);
    (c, size)
}

/// [`connect`], with the transmission flags the server sent.
pub fn connect_with_flags(sock: &Path) -> (UnixStream, u64, u16) {
    let mut c = UnixStream::connect(sock).unwrap();
    assert_eq!(read_n(&mut c, 18), hs::greeting());
    c.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
    c.write_all(&ClientOption::ExportName(String::new()).encode()).unwrap();
    let e = read_n(&mut c, 10);
    (c, u64::from_be_bytes(e[..8].try_into().unwrap()), u16::from_be_bytes(e[8..].try_into().unwrap()))
}

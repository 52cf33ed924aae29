//! Thousands of connections cannot take `headway serve` down (issue 17): 2,000 of them —
//! idle before the handshake, idle after it, and busy — against a server that may start
//! no more than 64 threads (`prlimit --nproc=64`, run as `nobody`, since the limit does not
//! bind root). A connection is a task on the I/O threads unless the server has a thread to
//! give it (`--connection-threads`); when starting one fails, the connection is served as
//! a task. Threads, resident memory and idle CPU are printed and bounded.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use headway_nbd::handshake::ClientOption;
use headway_nbd::proto::{CMD_READ, FLAG_C_FIXED_NEWSTYLE, FLAG_C_NO_ZEROES};
use headway_nbd::transmission::RequestHeader;

const NPROC: u32 = 64;
/// Resident memory the server may have with 2,000 connections open (measured: printed).
const RSS_BOUND: u64 = 256 << 20;
/// CPU the server may use while every connection idles (measured: printed).
const IDLE_CPU_BOUND: f64 = 0.05;

fn status_field(pid: u32, key: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let l = s.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no {key} in status"));
    l.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// User plus system CPU seconds of process `pid`.
fn cpu_seconds(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &s[s.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // fields 14 and 15 of stat (utime, stime) are 12 and 13 after the command name
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    ticks as f64 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

fn raise_descriptor_limit(want: u64) {
    let mut l = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: get/setrlimit with a valid rlimit.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut l), 0);
        if l.rlim_cur < want {
            l.rlim_cur = want.min(l.rlim_max);
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &l), 0);
        }
        assert!(l.rlim_cur >= want, "this test needs {want} descriptors; the hard limit is {}", l.rlim_max);
    }
}

fn handshake(s: &mut UnixStream) {
    let mut greet = [0u8; 18];
    s.read_exact(&mut greet).unwrap();
    finish_handshake(s);
}

/// Client flags and NBD_OPT_EXPORT_NAME (the server's codec encodes them), then its reply.
fn finish_handshake(s: &mut UnixStream) {
    s.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
    s.write_all(&ClientOption::ExportName(String::new()).encode()).unwrap();
    let mut r = [0u8; 10];
    s.read_exact(&mut r).unwrap();
}

fn read_request(cookie: u64, offset: u64, len: u32) -> [u8; RequestHeader::SIZE] {
    RequestHeader { flags: 0, ty: CMD_READ, cookie, offset, len }.encode()
}

/// One READ on `s`, its reply checked.
fn read_once(s: &mut UnixStream, cookie: u64) {
    s.write_all(&read_request(cookie, (cookie % 4096) * 4096, 4096)).unwrap();
    let mut r = vec![0u8; 16 + 4096];
    s.read_exact(&mut r).unwrap();
    assert_eq!(u32::from_be_bytes(r[4..8].try_into().unwrap()), 0, "READ failed");
    assert_eq!(u64::from_be_bytes(r[8..16].try_into().unwrap()), cookie);
}

fn wait_for_socket(sock: &Path, child: &mut std::process::Child) {
    let until = Instant::now() + Duration::from_secs(10);
    while UnixStream::connect(sock).is_err() {
        if let Ok(Some(st)) = child.try_wait() {
            panic!("the server exited before listening: {st}");
        }
        assert!(Instant::now() < until, "the server did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server process, killed if the test ends (or panics) before it exits.
struct Served(std::process::Child);

impl std::ops::Deref for Served {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Served {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// `PREFIX.. BIN serve --size SIZE --scheduler noop` on `DIR/x.img` and `DIR/x.sock`, its
/// stderr to `DIR/server.log`; once it listens: the process, the socket and the log.
fn serve(dir: &Path, prefix: &[&str], bin: &Path, size: &str) -> (Served, PathBuf, PathBuf) {
    let (img, sock, log) = (dir.join("x.img"), dir.join("x.sock"), dir.join("server.log"));
    let mut cmd = match prefix.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(bin);
            c
        }
        None => Command::new(bin),
    };
    let mut child = cmd
        .args(["serve", "--size", size, "--scheduler", "noop", "--export"])
        .arg(&img)
        .arg("--unix")
        .arg(&sock)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("{prefix:?} {}: {e}", bin.display()));
    wait_for_socket(&sock, &mut child);
    (Served(child), sock, log)
}

#[test]
fn two_thousand_connections_on_a_server_limited_to_64_threads() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test starts the server as `nobody` under prlimit --nproc (root ignores that limit): run it as root, as CI does"
    );
    raise_descriptor_limit(4500);
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    // a copy `nobody` can run wherever the build directory lives
    let bin = dir.path().join("headway");
    std::fs::copy(env!("CARGO_BIN_EXE_headway"), &bin).unwrap();
    let nproc = format!("--nproc={NPROC}");
    let prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "prlimit", &nproc];
    let (mut child, sock, log) = serve(dir.path(), &prefix, &bin, "16M");
    let pid = child.id();

    let t0 = Instant::now();
    // 500 idle before the handshake, 1,000 idle after it, 500 busy
    let mut waiting = Vec::new();
    let mut idle = Vec::new();
    let mut busy = Vec::new();
    for i in 0..2000 {
        let mut s = UnixStream::connect(&sock).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        match i % 4 {
            0 => {
                let mut greet = [0u8; 18];
                s.read_exact(&mut greet).unwrap();
                waiting.push(s);
            }
            1 | 2 => {
                handshake(&mut s);
                idle.push(s);
            }
            _ => {
                handshake(&mut s);
                busy.push(s);
            }
        }
    }
    let connected = t0.elapsed();
    for round in 0..4u64 {
        for (i, s) in busy.iter_mut().enumerate() {
            s.write_all(&read_request(round * 1000 + i as u64, (i as u64 % 4096) * 4096, 4096)).unwrap();
        }
        for (i, s) in busy.iter_mut().enumerate() {
            let mut r = vec![0u8; 16 + 4096];
            s.read_exact(&mut r).unwrap();
            assert_eq!(u32::from_be_bytes(r[4..8].try_into().unwrap()), 0);
            assert_eq!(u64::from_be_bytes(r[8..16].try_into().unwrap()), round * 1000 + i as u64);
        }
    }
    let served = t0.elapsed();
    assert!(child.try_wait().unwrap().is_none(), "the server exited");
    let threads = status_field(pid, "Threads:");
    let rss = status_field(pid, "VmRSS:") << 10;
    // idle: no connection sends anything
    std::thread::sleep(Duration::from_millis(300));
    let (c0, w0) = (cpu_seconds(pid), Instant::now());
    std::thread::sleep(Duration::from_secs(2));
    let idle_cpu = (cpu_seconds(pid) - c0) / w0.elapsed().as_secs_f64();
    eprintln!(
        "2,000 connections (500 before the handshake, 1,000 idle, 500 busy): connected in {connected:?}, \
         2,000 READs answered by {served:?}; server threads {threads}, RSS {} MiB, idle CPU {:.3} of a CPU",
        rss >> 20,
        idle_cpu
    );
    assert!(threads <= NPROC as u64, "{threads} threads");
    assert!(rss < RSS_BOUND, "RSS {} MiB", rss >> 20);
    assert!(idle_cpu < IDLE_CPU_BOUND, "idle CPU {idle_cpu:.3}");
    // every kind still works: a waiting one finishes its handshake, an idle one reads, and
    // a new one gets in
    let s = &mut waiting[0];
    finish_handshake(s);
    read_once(s, 7);
    read_once(&mut idle[999], 8);
    let mut fresh = UnixStream::connect(&sock).unwrap();
    handshake(&mut fresh);
    read_once(&mut fresh, 9);
    drop((waiting, idle, busy, fresh));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let st = child.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(st.success(), "the server ended with {st}; its log:\n{text}");
    assert!(!text.contains("panicked"), "{text}");
}

/// Connections that never start their handshake cannot keep a prompt client out (issue
/// 39, item 4): with 4,100 of them opened (more than `--max-connections`' 4,096), a client
/// that handshakes promptly is served within a second, again and again; the silent ones
/// beyond `--max-handshakes` have been closed, oldest first.
#[test]
fn silent_connections_do_not_keep_a_prompt_client_out() {
    const SILENT: usize = 4100;
    raise_descriptor_limit(SILENT as u64 + 256);
    let dir = tempfile::tempdir().unwrap();
    let (mut child, sock, log) = serve(dir.path(), &[], Path::new(env!("CARGO_BIN_EXE_headway")), "16M");
    let pid = child.id();
    let silent: Vec<UnixStream> = (0..SILENT).map(|_| UnixStream::connect(&sock).unwrap()).collect();
    let mut slowest = Duration::ZERO;
    for round in 0..5u64 {
        let t = Instant::now();
        let mut c = UnixStream::connect(&sock).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        handshake(&mut c);
        read_once(&mut c, round);
        slowest = slowest.max(t.elapsed());
    }
    // the oldest silent connections were closed to make room: they read end-of-file
    // after the greeting
    let closed = silent
        .iter()
        .take(64)
        .filter(|s| {
            let mut s = *s;
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut rest = Vec::new();
            s.read_to_end(&mut rest).is_ok()
        })
        .count();
    let alive = status_field(pid, "FDSize:");
    eprintln!("{SILENT} silent connections: a prompt client served within {slowest:?} (slowest of 5); the 64 oldest silent ones closed: {closed}; server FDSize {alive}");
    assert!(slowest < Duration::from_secs(1), "a prompt client took {slowest:?}");
    assert_eq!(closed, 64, "the oldest silent connections were not closed");
    drop(silent);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let st = child.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(st.success(), "the server ended with {st}; its log:\n{text}");
}

/// Request data is bounded server-wide (issue 39, item 2): 100 connections that pipeline
/// 32 MiB READs and never read the replies, against a server under `prlimit --as=2G`
/// (each connection alone may hold 64 MiB: 6.4 GB in all without the bound). The server
/// does not abort, its resident memory stays within its budget (a quarter of the
/// address-space limit: 512 MiB, of which 464 MiB for request data), and once the hostile clients
/// go, a new client is served and the server exits cleanly.
#[test]
fn unread_replies_of_many_connections_stay_within_the_memory_budget() {
    const HOSTILE: usize = 100;
    const READ: u32 = 32 << 20;
    const PIPELINED: u64 = 4;
    const BUDGET: u64 = 512 << 20;
    raise_descriptor_limit(HOSTILE as u64 + 256);
    let dir = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_headway"));
    let (mut child, sock, log) = serve(dir.path(), &["prlimit", "--as=2147483648"], bin, "1G");
    let pid = child.id();
    let mut hostile = Vec::new();
    for i in 0..HOSTILE {
        let mut s = UnixStream::connect(&sock).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        handshake(&mut s);
        for k in 0..PIPELINED {
            let cookie = i as u64 * PIPELINED + k;
            s.write_all(&read_request(cookie, (cookie % 16) * READ as u64, READ)).unwrap();
        }
        hostile.push(s);
    }
    // until the server has taken what it will (its resident memory stops growing)
    let (mut peak, mut last, mut still) = (0u64, 0u64, 0);
    let until = Instant::now() + Duration::from_secs(20);
    while still < 10 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            child.try_wait().unwrap().is_none(),
            "the server died: {}",
            std::fs::read_to_string(&log).unwrap()
        );
        let rss = status_field(pid, "VmRSS:") << 10;
        peak = peak.max(rss);
        still = if rss.abs_diff(last) < (4 << 20) { still + 1 } else { 0 };
        last = rss;
    }
    let text = std::fs::read_to_string(&log).unwrap();
    eprintln!(
        "{HOSTILE} connections x {PIPELINED} unread 32 MiB READs under prlimit --as=2G: server RSS peak {} MiB, \
         budget {} MiB",
        peak >> 20,
        BUDGET >> 20
    );
    assert!(text.contains(&format!("max_memory_mib={}", BUDGET >> 20)), "{text}");
    assert!(peak <= BUDGET, "RSS peaked at {} MiB, over the budget", peak >> 20);
    assert!(peak >= BUDGET / 2, "RSS {} MiB: the hostile clients did not fill the budget", peak >> 20);
    drop(hostile);
    let mut fresh = UnixStream::connect(&sock).unwrap();
    fresh.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    handshake(&mut fresh);
    read_once(&mut fresh, 1);
    drop(fresh);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let st = child.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(st.success(), "the server ended with {st}; its log:\n{text}");
    assert!(!text.contains("memory allocation"), "{text}");
}

//! The server against real NBD clients (nbdinfo, nbdcopy, nbdsh from libnbd; qemu-io and
//! qemu-img from QEMU; fio's nbd engine) and against a hand-driven socket speaking the
//! codec. `make deps` installs the clients; a test whose client is missing says so on
//! stderr and returns.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use headway_nbd::handshake::{self as hs, ClientOption};
use headway_nbd::proto::*;
use headway_nbd::transmission::{self as tx, RequestHeader};
use headway_nbd::{Listen, ServeConfig, ServeError, Server};

struct Running {
    dir: tempfile::TempDir,
    sock: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), ServeError>>>,
}

impl Running {
    fn start(read_only: bool, scheduler: &str) -> Running {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("disk.img");
        if read_only {
            std::fs::write(&img, vec![0x5au8; 8 << 20]).unwrap();
        }
        let sock = dir.path().join("nbd.sock");
        let mut cfg = ServeConfig::new(img, Listen::Unix(sock.clone()));
        cfg.size = (!read_only).then_some(64 << 20);
        cfg.read_only = read_only;
        cfg.scheduler = scheduler.into();
        let server = Server::bind(cfg).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = Some(std::thread::spawn(move || server.run(s)));
        Running { dir, sock, stop, thread }
    }
    fn uri(&self) -> String {
        format!("nbd+unix:///?socket={}", self.sock.display())
    }
    fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap().unwrap();
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

/// The client, or `None` after saying on stderr why the test is skipped.
fn tool(name: &str) -> Option<&str> {
    let ok = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: `{name}` is not installed (run `make deps`)");
    }
    ok.then_some(name)
}

/// nbdsh runs on the system python (the libnbd bindings are a Debian package).
fn nbdsh() -> Option<Command> {
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import nbd"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: /usr/bin/python3 cannot import nbd (python3-libnbd; run `make deps`)");
        return None;
    }
    let mut c = Command::new("/usr/bin/python3");
    c.args(["-m", "nbd"]);
    Some(c)
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

fn random_file(path: &Path, len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let data: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(path, &data).unwrap();
    data
}

#[test]
fn nbdinfo_shows_size_flags_and_block_sizes() {
    let Some(nbdinfo) = tool("nbdinfo") else { return };
    let s = Running::start(false, "stream");
    let out = run(Command::new(nbdinfo).arg(s.uri()));
    for want in [
        "export-size: 67108864",
        "block_size_minimum: 1",
        "block_size_preferred: 4096",
        "block_size_maximum: 33554432",
        "can_flush: true",
        "can_fua: true",
        "can_multi_conn: true",
        "is_read_only: false",
        "structured",
    ] {
        assert!(out.contains(want), "nbdinfo lacks `{want}`:\n{out}");
    }
    s.stop();
}

#[test]
fn nbdcopy_many_connections_round_trip_and_qemu_io_sees_the_same_data() {
    let Some(nbdcopy) = tool("nbdcopy") else { return };
    let Some(qemu_io) = tool("qemu-io") else { return };
    for sched in ["stream", "deadline", "antic"] {
        let s = Running::start(false, sched);
        let src = s.dir.path().join("src.bin");
        let data = random_file(&src, 16 << 20);
        // Four connections, 16 requests in flight each, 256 KiB requests.
        run(Command::new(nbdcopy)
            .args(["-C", "4", "-R", "16", "--request-size=262144"])
            .arg(&src)
            .arg(s.uri()));
        let back = s.dir.path().join("back.bin");
        run(Command::new(nbdcopy).args(["-C", "4", "-R", "16"]).arg(s.uri()).arg(&back));
        let got = std::fs::read(&back).unwrap();
        assert_eq!(got.len(), 64 << 20);
        assert!(got[..data.len()] == data[..], "{sched}: data read back differs");
        // Another client, another request size: qemu-io checks a 64 KiB slice by pattern
        // after overwriting it with FUA, then flushes.
        let out = run(Command::new(qemu_io).args([
            "-f",
            "raw",
            &s.uri(),
            "-c",
            "write -f -P 0x3c 1M 64k",
            "-c",
            "flush",
            "-c",
            "read -P 0x3c 1M 64k",
        ]));
        assert!(!out.contains("fail"), "{out}");
        s.stop();
    }
}

#[test]
fn data_reaches_the_file_by_the_time_shutdown_returns() {
    let Some(qemu_io) = tool("qemu-io") else { return };
    let s = Running::start(false, "stream");
    run(Command::new(qemu_io).args([
        "-f",
        "raw",
        &s.uri(),
        "-c",
        "write -P 0x77 4096 8192",
        "-c",
        "write -z 6144 1024",
    ]));
    let img = s.dir.path().join("disk.img");
    let mut s = s;
    s.stop.store(true, Ordering::SeqCst);
    s.thread.take().unwrap().join().unwrap().unwrap();
    let f = std::fs::read(&img).unwrap();
    assert!(f[4096..6144].iter().all(|&b| b == 0x77));
    assert!(f[6144..7168].iter().all(|&b| b == 0));
    assert!(f[7168..12288].iter().all(|&b| b == 0x77));
    drop(s);
}

#[test]
fn read_only_export_refuses_writes_with_eperm() {
    let Some(mut sh) = nbdsh() else { return };
    let s = Running::start(true, "deadline");
    let script = r#"
import errno
assert h.is_read_only()
assert h.pread(4096, 0) == b"\x5a" * 4096
h.set_strict_mode(0)
try:
    h.pwrite(b"x" * 512, 0)
    raise SystemExit("write succeeded on a read-only export")
except nbd.Error as e:
    assert e.errnum == errno.EPERM, e
print("ok")
"#;
    let out = run(sh.args(["-u", &s.uri(), "-c", script]));
    assert!(out.contains("ok"), "{out}");
    s.stop();
}

#[test]
fn out_of_range_requests_get_einval_or_enospc() {
    let Some(mut sh) = nbdsh() else { return };
    let s = Running::start(false, "stream");
    let script = r#"
import errno
h.set_strict_mode(0)
size = h.get_size()
for op, want in ((lambda: h.pread(1024, size - 512), errno.EINVAL),
                 (lambda: h.pwrite(b"y" * 1024, size - 512), errno.ENOSPC),
                 (lambda: h.zero(4096, size), errno.ENOSPC)):
    try:
        op()
        raise SystemExit("out-of-range request succeeded")
    except nbd.Error as e:
        assert e.errnum == want, (e, want)
h.pwrite(b"z" * 512, size - 512, nbd.CMD_FLAG_FUA)
h.flush()
assert h.pread(512, size - 512) == b"z" * 512
print("ok")
"#;
    let out = run(sh.args(["-u", &s.uri(), "-c", script]));
    assert!(out.contains("ok"), "{out}");
    s.stop();
}

// --- A hand-driven client: oldest-style negotiation and simple replies, no tools needed.

fn read_n(c: &mut UnixStream, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    c.read_exact(&mut b).unwrap();
    b
}

#[test]
fn raw_client_export_name_simple_replies_out_of_order_pipeline() {
    let s = Running::start(false, "stream");
    let mut c = UnixStream::connect(&s.sock).unwrap();
    let g = read_n(&mut c, 18);
    assert_eq!(&g[..], &hs::greeting()[..]);
    c.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
    // An unknown option is refused with ERR_UNSUP, and negotiation goes on.
    c.write_all(&ClientOption::Unknown(99).encode()).unwrap();
    let (r, _) = hs::decode_option_reply(&read_n(&mut c, 20)).unwrap();
    assert_eq!(r.reply, REP_ERR_UNSUP);
    c.write_all(&ClientOption::ExportName(String::new()).encode()).unwrap();
    let e = read_n(&mut c, 10);
    assert_eq!(u64::from_be_bytes(e[..8].try_into().unwrap()), 64 << 20);
    // Pipeline: 32 writes at scattered offsets, then a flush, then 32 reads.
    let offs: Vec<u64> = (0..32u64).map(|i| (i * 7919 % 32) * (1 << 20)).collect();
    for (i, &o) in offs.iter().enumerate() {
        let h = RequestHeader { flags: 0, ty: CMD_WRITE, cookie: i as u64, offset: o, len: 4096 };
        c.write_all(&h.encode()).unwrap();
        c.write_all(&[i as u8; 4096]).unwrap();
    }
    let mut seen = [false; 32];
    for _ in 0..32 {
        let (r, _) = tx::decode_reply(&read_n(&mut c, 16)).unwrap();
        let tx::Reply::Simple { error, cookie } = r else { panic!() };
        assert_eq!(error, 0);
        seen[cookie as usize] = true;
    }
    assert!(seen.iter().all(|&x| x));
    c.write_all(&RequestHeader { flags: 0, ty: CMD_FLUSH, cookie: 100, offset: 0, len: 0 }.encode()).unwrap();
    assert_eq!(tx::decode_reply(&read_n(&mut c, 16)).unwrap().0, tx::Reply::Simple { error: 0, cookie: 100 });
    for (i, &o) in offs.iter().enumerate() {
        let h = RequestHeader { flags: 0, ty: CMD_READ, cookie: 1000 + i as u64, offset: o, len: 4096 };
        c.write_all(&h.encode()).unwrap();
    }
    for _ in 0..32 {
        let (r, _) = tx::decode_reply(&read_n(&mut c, 16)).unwrap();
        let tx::Reply::Simple { error: 0, cookie } = r else { panic!("{r:?}") };
        let data = read_n(&mut c, 4096);
        assert!(data.iter().all(|&b| b == (cookie - 1000) as u8));
    }
    // A write past the end: ENOSPC, and the connection stays usable.
    let h = RequestHeader { flags: 0, ty: CMD_WRITE, cookie: 7, offset: (64 << 20) - 512, len: 1024 };
    c.write_all(&h.encode()).unwrap();
    c.write_all(&[0u8; 1024]).unwrap();
    assert_eq!(tx::decode_reply(&read_n(&mut c, 16)).unwrap().0, tx::Reply::Simple { error: 28, cookie: 7 });
    c.write_all(&RequestHeader { flags: 0, ty: CMD_DISC, cookie: 8, offset: 0, len: 0 }.encode()).unwrap();
    let mut rest = Vec::new();
    c.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    s.stop();
}

/// fio's nbd engine writes checksummed blocks over two connections; a second fio run
/// verifies every block through new connections; qemu-img copies the export out and
/// nbdsh hashes it over NBD: both agree with the file on disk, byte for byte.
#[test]
fn fio_writes_and_verifies_qemu_img_and_nbdsh_read_the_same_bytes() {
    let Some(fio) = tool("fio") else { return };
    let Some(qemu_img) = tool("qemu-img") else { return };
    let Some(mut sh) = nbdsh() else { return };
    let ok = Command::new(fio).arg("--enghelp=nbd").output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: fio lacks the nbd engine (run `make deps`)");
        return;
    }
    let s = Running::start(false, "deadline");
    let job = |extra: &[&str]| {
        let mut c = Command::new(fio);
        c.args(["--name=w", "--ioengine=nbd", "--rw=randwrite", "--bs=16k", "--size=16m"])
            .args(["--iodepth=8", "--numjobs=2", "--offset_increment=16m", "--verify=crc32c"])
            .args(["--verify_state_save=0", "--randrepeat=1", "--output-format=terse"])
            .arg(format!("--uri={}", s.uri()))
            .args(extra);
        c
    };
    run(&mut job(&["--do_verify=0"]));
    // Same job, verification only: reads every block back and checks its checksum.
    let out = run(&mut job(&["--verify_only=1"]));
    assert!(!out.contains("verify: bad"), "{out}");
    let copy = s.dir.path().join("copy.raw");
    run(Command::new(qemu_img).args(["convert", "-f", "raw", "-O", "raw"]).arg(s.uri()).arg(&copy));
    let disk = std::fs::read(s.dir.path().join("disk.img")).unwrap();
    assert!(disk[..32 << 20].iter().any(|&b| b != 0), "fio wrote the first 32 MiB");
    assert!(std::fs::read(&copy).unwrap() == disk, "qemu-img's copy differs from the export file");
    let script = "import hashlib\nd = hashlib.sha256()\nsize = h.get_size()\n\
                  for off in range(0, size, 1 << 20):\n    d.update(h.pread(min(1 << 20, size - off), off))\n\
                  print(d.hexdigest())\n";
    let out = run(sh.args(["-u", &s.uri(), "-c", script]));
    let sum = run(Command::new("sha256sum").arg(s.dir.path().join("disk.img")));
    let want = sum.split_whitespace().next().unwrap();
    assert!(out.contains(want), "nbdsh's sha256 {out} differs from the file's {want}");
    s.stop();
}

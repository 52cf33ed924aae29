//! `headway serve --trace OUT` end to end: a real server process records what two raw
//! clients send, stops on SIGTERM, and `headway replay OUT` reads the capture back, in both
//! formats, with every request captured replayed and no bad line.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const READ: u16 = 0;
const WRITE: u16 = 1;
const FLUSH: u16 = 3;
const TRIM: u16 = 4;
const WRITE_ZEROES: u16 = 6;
const FUA: u16 = 1;

/// A client on the default export, with simple replies.
struct Client(UnixStream);

impl Client {
    fn connect(sock: &Path) -> Client {
        let until = Instant::now() + Duration::from_secs(10);
        let mut s = loop {
            if let Ok(s) = UnixStream::connect(sock) {
                break s;
            }
            assert!(Instant::now() < until, "the server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut greet = [0u8; 18];
        s.read_exact(&mut greet).unwrap();
        s.write_all(&3u32.to_be_bytes()).unwrap(); // fixed newstyle, no zeroes
        let mut opt = 0x49484156454F5054u64.to_be_bytes().to_vec();
        opt.extend_from_slice(&1u32.to_be_bytes()); // NBD_OPT_EXPORT_NAME
        opt.extend_from_slice(&0u32.to_be_bytes());
        s.write_all(&opt).unwrap();
        let mut info = [0u8; 10];
        s.read_exact(&mut info).unwrap();
        Client(s)
    }

    /// Send a request and read its reply; a write's payload is `len` bytes of 7.
    fn request(&mut self, ty: u16, flags: u16, offset: u64, len: u32) {
        let mut r = 0x25609513u32.to_be_bytes().to_vec();
        r.extend_from_slice(&flags.to_be_bytes());
        r.extend_from_slice(&ty.to_be_bytes());
        r.extend_from_slice(&offset.to_be_bytes()); // the cookie: any value
        r.extend_from_slice(&offset.to_be_bytes());
        r.extend_from_slice(&len.to_be_bytes());
        if ty == WRITE {
            r.extend_from_slice(&vec![7u8; len as usize]);
        }
        self.0.write_all(&r).unwrap();
        let mut rep = vec![0u8; 16 + if ty == READ { len as usize } else { 0 }];
        self.0.read_exact(&mut rep).unwrap();
        assert_eq!(&rep[4..8], &[0, 0, 0, 0], "request {ty} at {offset} failed");
    }
}

/// Serve with `--trace OUT --trace-format format`, send a known mix on two connections,
/// stop with SIGTERM; OUT.
fn capture(dir: &Path, format: &str) -> PathBuf {
    let (img, sock, out) = (dir.join("disk.img"), dir.join("nbd.sock"), dir.join(format!("trace.{format}")));
    let log = std::fs::File::create(dir.join(format!("server.{format}.log"))).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_headway"))
        .args(["serve", "--size", "16M", "--scheduler", "deadline", "--trace-format", format, "--export"])
        .arg(&img)
        .arg("--unix")
        .arg(&sock)
        .arg("--trace")
        .arg(&out)
        .stderr(log)
        .spawn()
        .unwrap();
    let (mut a, mut b) = (Client::connect(&sock), Client::connect(&sock));
    for i in 0..6u64 {
        a.request(WRITE, if i == 5 { FUA } else { 0 }, i * 4096, 4096);
        b.request(WRITE, 0, (8 << 20) + i * 65536, 65536);
    }
    a.request(FLUSH, 0, 0, 0);
    for i in 0..6u64 {
        a.request(READ, 0, i * 4096, 4096);
        b.request(READ, 0, (8 << 20) + i * 65536, 512);
    }
    b.request(TRIM, 0, 12 << 20, 1 << 20);
    b.request(WRITE_ZEROES, 0, 4 << 20, 8192);
    b.request(FLUSH, 0, 0, 0);
    drop((a, b));
    let kill = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(kill.success());
    assert!(child.wait().unwrap().success(), "a clean exit on SIGTERM");
    out
}

/// Requests (reads and writes, WRITE_ZEROES a write) and flushes the capture holds.
const SENT: (u64, u64) = (6 + 6 + 6 + 6 + 1, 2);

/// What `headway replay` printed under `trace:`: requests, cache flushes, contexts, bad lines.
fn replay(trace: &Path, format: &str) -> (u64, u64, u64, u64) {
    let out = Command::new(env!("CARGO_BIN_EXE_headway"))
        .arg("replay")
        .arg(trace)
        .args(["--format", format, "--scheduler", "noop"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let line = stdout.lines().find(|l| l.starts_with("trace: ")).unwrap_or_else(|| panic!("{stdout}"));
    let number_before = |what: &str| -> u64 {
        let head = &line[..line.find(what).unwrap_or_else(|| panic!("no `{what}` in `{line}`"))];
        head.split([' ', ',']).rfind(|w| !w.is_empty()).unwrap().parse().unwrap()
    };
    (
        number_before(" requests"),
        number_before(" cache flushes"),
        number_before(" contexts"),
        number_before(" bad lines"),
    )
}

#[test]
fn a_captured_trace_replays_every_request_in_both_formats() {
    let dir = std::env::temp_dir().join(format!("headway-cli-trace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    let blk = capture(&dir, "blkparse");
    let text = std::fs::read_to_string(&blk).unwrap();
    let queued: Vec<&str> = text.lines().filter(|l| l.split(' ').nth(5) == Some("Q")).collect();
    let count =
        |rwbs: &[&str]| queued.iter().filter(|l| rwbs.contains(&l.split(' ').nth(6).unwrap())).count();
    let (ios, flushes) = (count(&["R", "W", "WFS"]) as u64, count(&["FN"]) as u64);
    assert_eq!((ios, flushes, count(&["D"])), (SENT.0, SENT.1, 1), "{text}");
    assert_eq!(replay(&blk, "blkparse"), (ios, flushes, 2, 0), "{text}");

    let log = capture(&dir, "iolog");
    let text = std::fs::read_to_string(&log).unwrap();
    let action = |a: &str| text.lines().filter(|l| l.split(' ').nth(2) == Some(a)).count() as u64;
    let (ios, flushes) = (action("read") + action("write"), action("sync"));
    assert_eq!((ios, flushes, action("trim")), (SENT.0, SENT.1, 1), "{text}");
    assert_eq!(replay(&log, "iolog"), (ios, flushes, 2, 0), "{text}");

    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_trace_format_or_path_stops_serve_before_it_listens() {
    let dir = std::env::temp_dir().join(format!("headway-cli-trace-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("nbd.sock");
    let serve = |trace: &Path, format: &str| {
        Command::new(env!("CARGO_BIN_EXE_headway"))
            .args(["serve", "--size", "1M", "--export"])
            .arg(dir.join("disk.img"))
            .arg("--unix")
            .arg(&sock)
            .arg("--trace")
            .arg(trace)
            .args(["--trace-format", format])
            .output()
            .unwrap()
    };
    let out = serve(&dir.join("t"), "fio");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown trace format `fio` (known: blkparse, iolog)"), "{err}");
    let missing = dir.join("no-such-dir").join("t");
    let out = serve(&missing, "blkparse");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("cannot write the trace to {}", missing.display())), "{err}");
    assert!(!sock.exists(), "not listening");
    std::fs::remove_dir_all(&dir).unwrap();
}

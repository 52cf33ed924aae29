//! `--trace OUT`: a known set of requests from real clients (nbdsh, two connections, after a
//! raw connection that sends nothing) comes out of the stopped server as exactly those
//! requests, in blkparse text (Q, D and C lines) and as a fio iolog.

use std::collections::HashMap;

use headway_nbd::{ServeError, Server, TraceConfig, TraceFormat};

mod common;
use common::{connect, nbdsh, run, Running};

/// Run on the handle `h` nbdsh opens (connection 2) and a second one `h2` (connection 3).
const SCRIPT: &str = r#"
h2 = nbd.NBD()
h2.connect_uri(URI)
h.pwrite(b"a" * 65536, 0)
h.pwrite(b"b" * 4096, 1 << 20, nbd.CMD_FLAG_FUA)
h2.pwrite(b"c" * 1000, (4 << 20) + 3 * 512 + 100)
assert h.pread(65536, 0) == b"a" * 65536
assert h2.pread(4096, 1 << 20) == b"b" * 4096
h.flush()
h2.trim(65536, 2 << 20)
h.zero(8192, 3 << 20, nbd.CMD_FLAG_FUA)
h2.shutdown()
print("ok")
"#;

/// What [`SCRIPT`] sends, as blkparse records it: `(pid, rwbs, sector, sectors)`.
const SENT: [(u32, &str, u64, u64); 8] = [
    (2, "W", 0, 128),
    (2, "WFS", 2048, 8),
    // 1000 bytes at byte 100 of sector 8195: sectors 8195 to 8197
    (3, "W", 8195, 3),
    (2, "R", 0, 128),
    (3, "R", 2048, 8),
    (2, "FN", 0, 0),
    (3, "D", 4096, 128),
    (2, "WFS", 6144, 16),
];

/// Serve with `--trace` in `format`, connect once without a request, run [`SCRIPT`], stop;
/// the trace's text.
fn capture(format: TraceFormat) -> String {
    let mut sh = nbdsh();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.out");
    let s = Running::start_in(dir, |cfg| {
        cfg.size = Some(64 << 20);
        cfg.trace = Some(TraceConfig { path: path.clone(), format });
    })
    .unwrap();
    // connection 1: a handshake and nothing else leaves no line
    drop(connect(&s.sock));
    let script = format!("URI = {:?}\n{SCRIPT}", s.uri());
    let out = run(sh.args(["-u", &s.uri(), "-c", &script]));
    assert!(out.contains("ok"), "{out}");
    let dir = s.stop();
    std::fs::read_to_string(dir.path().join("trace.out")).unwrap()
}

/// One blkparse line, its fields checked against the format headway writes.
#[derive(Debug)]
struct Line {
    time: u64,
    pid: u32,
    action: String,
    rwbs: String,
    sector: u64,
    sectors: u64,
}

fn parse(i: usize, line: &str) -> Line {
    let f: Vec<&str> = line.split(' ').collect();
    assert_eq!(f.len(), 11, "line {i}: `{line}`");
    assert_eq!((f[0], f[1], f[8]), ("43,0", "0", "+"), "line {i}: `{line}`");
    assert_eq!(f[2].parse::<usize>().unwrap(), i + 1, "sequence numbers count lines: `{line}`");
    let (s, ns) = f[3].split_once('.').unwrap();
    assert_eq!(ns.len(), 9, "nanoseconds: `{line}`");
    let pid: u32 = f[4].parse().unwrap();
    assert_eq!(f[10], format!("[nbd-conn{pid}]"), "command: `{line}`");
    Line {
        time: s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap(),
        pid,
        action: f[5].into(),
        rwbs: f[6].into(),
        sector: f[7].parse().unwrap(),
        sectors: f[9].parse().unwrap(),
    }
}

#[test]
fn blkparse_trace_has_exactly_the_requests_sent_queued_dispatched_and_completed() {
    let text = capture(TraceFormat::Blkparse);
    let lines: Vec<Line> = text.lines().enumerate().map(|(i, l)| parse(i, l)).collect();
    assert!(lines.windows(2).all(|w| w[0].time <= w[1].time), "times never decrease:\n{text}");
    // per request: the line numbers of its Q, D and C
    let mut seen: HashMap<(u32, &str, u64, u64), [Vec<usize>; 3]> = HashMap::new();
    for (i, l) in lines.iter().enumerate() {
        let a = ["Q", "D", "C"].iter().position(|a| *a == l.action).unwrap_or_else(|| panic!("{l:?}"));
        let key = SENT
            .iter()
            .find(|s| (s.0, s.1, s.2, s.3) == (l.pid, l.rwbs.as_str(), l.sector, l.sectors))
            .unwrap_or_else(|| panic!("a request never sent: {l:?}\n{text}"));
        seen.entry(*key).or_default()[a].push(i);
    }
    for s in SENT {
        let [q, d, c] = seen.get(&s).unwrap_or_else(|| panic!("{s:?} not recorded:\n{text}"));
        assert_eq!((q.len(), c.len()), (1, 1), "{s:?}: one Q and one C:\n{text}");
        assert!(q[0] < c[0] && lines[q[0]].time <= lines[c[0]].time, "{s:?}: C after Q");
        // a FLUSH bypasses the scheduler: no dispatch line
        let dispatches = if s.1 == "FN" { 0 } else { 1 };
        assert_eq!(d.len(), dispatches, "{s:?}: dispatches:\n{text}");
        if let Some(&d) = d.first() {
            assert!(q[0] < d && d < c[0], "{s:?}: Q, D, C in that order:\n{text}");
        }
    }
    assert_eq!(lines.len(), 3 * SENT.len() - 1);
}

#[test]
fn iolog_trace_has_the_arrivals_in_microseconds() {
    let text = capture(TraceFormat::Iolog);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("fio version 3 iolog"));
    let mut last = 0;
    let mut rest = Vec::new();
    for l in lines {
        let (us, what) = l.split_once(' ').unwrap();
        let us: u64 = us.parse().unwrap_or_else(|_| panic!("timestamp in `{l}`"));
        assert!(us >= last, "times never decrease:\n{text}");
        last = us;
        rest.push(what);
    }
    let n = rest.len();
    rest[n.saturating_sub(2)..].sort();
    assert_eq!(
        rest,
        [
            "nbd-conn2 add",
            "nbd-conn2 open",
            "nbd-conn2 write 0 65536",
            "nbd-conn2 write 1048576 4096",
            "nbd-conn3 add",
            "nbd-conn3 open",
            "nbd-conn3 write 4195940 1000",
            "nbd-conn2 read 0 65536",
            "nbd-conn3 read 1048576 4096",
            "nbd-conn2 sync",
            "nbd-conn3 trim 2097152 65536",
            "nbd-conn2 write 3145728 8192",
            // each connection's file closed when it closes, in whichever order they do
            "nbd-conn2 close",
            "nbd-conn3 close",
        ],
        "{text}"
    );
}

#[test]
fn an_unwritable_trace_path_stops_bind_before_listening() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("no-such-dir").join("trace.out");
    let sock = dir.path().join("nbd.sock");
    let mut cfg =
        headway_nbd::ServeConfig::new(dir.path().join("disk.img"), headway_nbd::Listen::Unix(sock.clone()));
    cfg.size = Some(1 << 20);
    cfg.trace = Some(TraceConfig { path: bad.clone(), format: TraceFormat::Iolog });
    let e = Server::bind(cfg).err().expect("bind fails");
    assert!(matches!(&e, ServeError::Trace { path, .. } if *path == bad), "{e:?}");
    assert!(e.to_string().contains(&bad.display().to_string()), "{e}");
    assert!(!sock.exists(), "not listening");
}

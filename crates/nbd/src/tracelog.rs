//! `headway serve --trace OUT [--trace-format blkparse|iolog]`: every request the server
//! serves, written to a file while it runs, in one of the two forms `headway replay` reads
//! (`crates/sim/src/trace/blkparse.rs` and `iolog.rs`), so a workload met on a real client
//! can be replayed on a modelled disk under any scheduler.
//!
//! What is recorded, per client request: its connection (the server's connection number,
//! 1, 2, ...), operation (read, write, trim, write_zeroes, flush), FUA flag, byte offset and
//! length, and three times on the scheduler's clock (ns since the server started, the
//! `Time` the scheduling core uses):
//! * **Q**, arrival: when the request, payload included, is handed to the scheduler (or, a
//!   FLUSH, to a worker) — immediately before the core stamps its own arrival;
//! * **D**, dispatch: when the scheduler's dispatch is handed to the backend (the reader
//!   itself or a worker). Scheduled requests only: FLUSH bypasses the scheduler and has no
//!   D. A dispatch that carries several client requests (merged by the scheduler) gives one
//!   D per client request, at the same time;
//! * **C**, completion: when its reply was handed to the socket (with `emulated:MODEL`, once
//!   the model said the request was done) — the very time `--stats` counts latency to.
//!
//! Requests the reader answers without the export — refused ones (out of range, writes to a
//! read-only export) and zero-length ones — are not recorded.
//!
//! **blkparse** (default): blkparse's default text output, one event per line,
//! `43,0 0 SEQ SECONDS.NANOS PID ACTION RWBS SECTOR + NSECTORS [COMMAND]`: device 43,0 (the
//! nbd major), CPU 0, SEQ counting lines from 1, PID the connection and COMMAND
//! `nbd-conn<PID>` (the replay's context key `command[pid]` is then one context per
//! connection), ACTION `Q`, `D` or `C`. RWBS is `R` or `W` (a WRITE_ZEROES is a `W`), `D` for
//! a trim, followed by `F` for FUA; a FUA write is also `S`ynchronous (`WFS`), as the server's
//! scheduler treats it and as blktrace shows one, so a replay schedules it so; a flush is `FN 0 + 0`. SECTOR and NSECTORS are the
//! 512-byte sectors the request touches (the length rounded up, and widened when the offset
//! is not sector-aligned). `headway replay` reads the `Q` lines: reads, writes and flushes;
//! trims (`D`) are ignored and counted there.
//!
//! **iolog**: a fio iolog version 3: `fio version 3 iolog`, then `TIMESTAMP FILE ACTION
//! OFFSET LENGTH` lines, FILE `nbd-conn<ID>`, ACTION `read`, `write` (also WRITE_ZEROES) or
//! `trim`, byte offset and length as received; a flush is `TIMESTAMP FILE sync`. A file is
//! `add`ed and `open`ed (two lines) before its first request and `close`d when its
//! connection closes. Arrivals only: the format has no place for dispatch or completion
//! times, nor for FUA. TIMESTAMP is whole microseconds, the unit fio writes and its
//! `read_iolog` and `headway replay` read ([`iolog_timestamp`]).
//!
//! Order: every line takes its timestamp and its sequence number under one lock, and is
//! written under it, so each file is sorted by time, Q, D and C lines alike (blkparse's own
//! output is per CPU); a request's Q comes before its D, and its D before its C.
//!
//! Memory is bounded: lines go through a [`BufWriter`] of [`BUFFER_BYTES`] to the file as the
//! server runs; the iolog writer also remembers which connections it has opened (live ones
//! only). The buffer is flushed when the server stops (`Server::run` returning, after
//! SIGINT or SIGTERM). A write error is logged once and ends tracing; `Server::run`
//! returns it at the end.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use headway_sched::{Time, SECTOR_BYTES};
use tracing::warn;

use crate::core::{self, Io};

/// Trace file buffer: lines reach the file in writes of this size.
pub const BUFFER_BYTES: usize = 64 << 10;
/// blkparse's `maj,min`: the nbd driver's block major.
const DEVICE: &str = "43,0";
/// blkparse's command and fio's file name of connection N: `nbd-connN`.
const CONN_PREFIX: &str = "nbd-conn";
const NS_PER_SEC: u64 = 1_000_000_000;
/// Nanoseconds per iolog timestamp unit: a microsecond, the unit fio writes version 3
/// timestamps in and reads them back (and `crates/sim/src/trace/iolog.rs` with it).
const IOLOG_NS_PER_TICK: u64 = 1_000;

/// A trace file's form (`--trace-format`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum TraceFormat {
    /// blkparse's default text output: Q, D and C events.
    #[default]
    Blkparse,
    /// fio iolog version 3: arrivals only.
    Iolog,
}

impl std::str::FromStr for TraceFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "blkparse" => Ok(TraceFormat::Blkparse),
            "iolog" => Ok(TraceFormat::Iolog),
            _ => Err(format!("unknown trace format `{s}` (known: blkparse, iolog)")),
        }
    }
}

/// `--trace OUT --trace-format F`: where the trace goes and in which form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceConfig {
    /// Created (or truncated) by `Server::bind`.
    pub path: PathBuf,
    pub format: TraceFormat,
}

/// What a client asked for, as a trace records it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Write,
    Trim,
    WriteZeroes,
    Flush,
}

/// One client request, as a trace records it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Req {
    pub conn: u32,
    pub op: Op,
    /// Bytes; both 0 for a flush.
    pub offset: u64,
    pub len: u64,
    pub fua: bool,
}

impl Req {
    pub fn of(io: &Io) -> Req {
        let (offset, len) = io.op.extent();
        let op = match io.op {
            core::Op::Read { .. } => Op::Read,
            core::Op::Write { .. } => Op::Write,
            core::Op::Trim { .. } => Op::Trim,
            core::Op::Zero { .. } => Op::WriteZeroes,
            core::Op::Flush => Op::Flush,
        };
        Req { conn: io.conn, op, offset, len, fua: io.op.fua() }
    }

    /// First sector and sectors touched; `(0, 0)` for a flush.
    fn sectors(&self) -> (u64, u64) {
        if self.len == 0 {
            return (0, 0);
        }
        let first = self.offset / SECTOR_BYTES;
        (first, (self.offset + self.len).div_ceil(SECTOR_BYTES) - first)
    }

    fn rwbs(&self) -> &'static str {
        match (self.op, self.fua) {
            (Op::Read, _) => "R",
            (Op::Write | Op::WriteZeroes, false) => "W",
            (Op::Write | Op::WriteZeroes, true) => "WFS",
            (Op::Trim, false) => "D",
            (Op::Trim, true) => "DF",
            (Op::Flush, _) => "FN",
        }
    }
}

/// A blkparse action.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Event {
    Queued,
    Dispatched,
    Completed,
}

impl Event {
    fn action(self) -> char {
        match self {
            Event::Queued => 'Q',
            Event::Dispatched => 'D',
            Event::Completed => 'C',
        }
    }
}

/// iolog timestamp of `t`, in the unit the reader in `crates/sim/src/trace/iolog.rs` reads
/// (microseconds, rounded down: non-decreasing times stay non-decreasing).
pub fn iolog_timestamp(t: Time) -> u64 {
    t.0 / IOLOG_NS_PER_TICK
}

/// The lines of a trace, written to `out` at the times it is given (no clock: tests give
/// synthetic times).
struct Writer<W: Write> {
    out: W,
    format: TraceFormat,
    /// blkparse's sequence number of the last line.
    seq: u64,
    /// iolog: connections whose file has been added and opened, not yet closed.
    open: HashSet<u32>,
}

impl<W: Write> Writer<W> {
    /// A writer that has written the format's header.
    fn new(mut out: W, format: TraceFormat) -> io::Result<Self> {
        if format == TraceFormat::Iolog {
            out.write_all(b"fio version 3 iolog\n")?;
        }
        Ok(Writer { out, format, seq: 0, open: HashSet::new() })
    }

    fn event(&mut self, t: Time, ev: Event, r: &Req) -> io::Result<()> {
        match self.format {
            TraceFormat::Blkparse => {
                self.seq += 1;
                let (sector, sectors) = r.sectors();
                writeln!(
                    self.out,
                    "{DEVICE} 0 {} {}.{:09} {} {} {} {sector} + {sectors} [{CONN_PREFIX}{}]",
                    self.seq,
                    t.0 / NS_PER_SEC,
                    t.0 % NS_PER_SEC,
                    r.conn,
                    ev.action(),
                    r.rwbs(),
                    r.conn
                )
            }
            TraceFormat::Iolog if ev == Event::Queued => {
                let (ts, c) = (iolog_timestamp(t), r.conn);
                if self.open.insert(c) {
                    writeln!(self.out, "{ts} {CONN_PREFIX}{c} add\n{ts} {CONN_PREFIX}{c} open")?;
                }
                let action = match r.op {
                    Op::Flush => return writeln!(self.out, "{ts} {CONN_PREFIX}{c} sync"),
                    Op::Read => "read",
                    Op::Write | Op::WriteZeroes => "write",
                    Op::Trim => "trim",
                };
                writeln!(self.out, "{ts} {CONN_PREFIX}{c} {action} {} {}", r.offset, r.len)
            }
            TraceFormat::Iolog => Ok(()),
        }
    }

    /// Connection `conn` closed (after its last reply).
    fn closed(&mut self, t: Time, conn: u32) -> io::Result<()> {
        if self.open.remove(&conn) {
            writeln!(self.out, "{} {CONN_PREFIX}{conn} close", iolog_timestamp(t))?;
        }
        Ok(())
    }
}

/// A trace file created and its header written, by `Server::bind` before it listens.
pub(crate) struct TraceFile {
    path: PathBuf,
    w: Writer<BufWriter<File>>,
}

impl TraceFile {
    pub fn create(cfg: &TraceConfig) -> io::Result<TraceFile> {
        let f = File::create(&cfg.path)?;
        let w = Writer::new(BufWriter::with_capacity(BUFFER_BYTES, f), cfg.format)?;
        Ok(TraceFile { path: cfg.path.clone(), w })
    }
}

/// An export's trace: the file and the clock, shared by every thread with an event.
pub(crate) struct Tracer {
    path: PathBuf,
    /// Time zero of the scheduling core's clock.
    origin: Instant,
    state: Mutex<State>,
}

struct State {
    w: Writer<BufWriter<File>>,
    /// The first write error; nothing is written after it.
    failed: Option<io::Error>,
}

impl Tracer {
    pub fn new(file: TraceFile, origin: Instant) -> Tracer {
        Tracer { path: file.path, origin, state: Mutex::new(State { w: file.w, failed: None }) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A request is handed to the scheduler (or a FLUSH to a worker).
    pub fn queued(&self, r: &Req) {
        self.record(|w, t| w.event(t, Event::Queued, r));
    }

    /// The client requests of dispatches handed to the backend.
    pub fn dispatched(&self, rs: impl Iterator<Item = Req>) {
        self.record(|w, t| rs.into_iter().try_for_each(|r| w.event(t, Event::Dispatched, &r)));
    }

    /// A request's reply was handed to the socket: the completion time, for `--stats`.
    pub fn completed(&self, r: &Req) -> Time {
        self.record(|w, t| w.event(t, Event::Completed, r))
    }

    /// Connection `conn` closed.
    pub fn closed(&self, conn: u32) {
        self.record(|w, t| w.closed(t, conn));
    }

    /// Flush what is buffered (the server has stopped): the lines written, or the first
    /// write error.
    pub fn finish(&self) -> io::Result<u64> {
        let mut st = self.state.lock().unwrap();
        if let Some(e) = st.failed.take() {
            return Err(e);
        }
        st.w.out.flush()?;
        Ok(st.w.seq)
    }

    /// Take the time and write under the lock: times in the file never decrease.
    fn record(&self, f: impl FnOnce(&mut Writer<BufWriter<File>>, Time) -> io::Result<()>) -> Time {
        let mut st = self.state.lock().unwrap();
        let t = Time(self.origin.elapsed().as_nanos() as u64);
        if st.failed.is_none() {
            if let Err(e) = f(&mut st.w, t) {
                warn!(path = %self.path.display(), error = %e, "cannot write the trace: tracing stops");
                st.failed = Some(e);
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(conn: u32, op: Op, offset: u64, len: u64, fua: bool) -> Req {
        Req { conn, op, offset, len, fua }
    }

    fn text(w: Writer<Vec<u8>>) -> String {
        String::from_utf8(w.out).unwrap()
    }

    #[test]
    fn formats_parse_with_one_error_text() {
        assert_eq!("blkparse".parse(), Ok(TraceFormat::Blkparse));
        assert_eq!("iolog".parse(), Ok(TraceFormat::Iolog));
        assert_eq!(TraceFormat::default(), TraceFormat::Blkparse);
        assert_eq!(
            "fio".parse::<TraceFormat>(),
            Err("unknown trace format `fio` (known: blkparse, iolog)".to_string())
        );
    }

    #[test]
    fn blkparse_lines_count_q_d_c_with_sectors_rwbs_and_command() {
        let mut w = Writer::new(Vec::new(), TraceFormat::Blkparse).unwrap();
        let wr = req(1, Op::Write, 1 << 20, 4096, true);
        w.event(Time(1_500), Event::Queued, &wr).unwrap();
        w.event(Time(2_000), Event::Dispatched, &wr).unwrap();
        w.event(Time(1_000_002_000), Event::Completed, &wr).unwrap();
        w.event(Time(1_000_003_000), Event::Queued, &req(2, Op::Read, 100, 512, false)).unwrap();
        w.event(Time(1_000_004_000), Event::Queued, &req(2, Op::Flush, 0, 0, false)).unwrap();
        w.event(Time(1_000_005_000), Event::Queued, &req(1, Op::Trim, 0, 1 << 20, false)).unwrap();
        w.event(Time(1_000_006_000), Event::Queued, &req(1, Op::WriteZeroes, 4096, 1000, false)).unwrap();
        w.closed(Time(1_000_007_000), 1).unwrap();
        assert_eq!(
            text(w),
            "43,0 0 1 0.000001500 1 Q WFS 2048 + 8 [nbd-conn1]\n\
             43,0 0 2 0.000002000 1 D WFS 2048 + 8 [nbd-conn1]\n\
             43,0 0 3 1.000002000 1 C WFS 2048 + 8 [nbd-conn1]\n\
             43,0 0 4 1.000003000 2 Q R 0 + 2 [nbd-conn2]\n\
             43,0 0 5 1.000004000 2 Q FN 0 + 0 [nbd-conn2]\n\
             43,0 0 6 1.000005000 1 Q D 0 + 2048 [nbd-conn1]\n\
             43,0 0 7 1.000006000 1 Q W 8 + 2 [nbd-conn1]\n"
        );
    }

    #[test]
    fn iolog_has_arrivals_only_in_microseconds_with_files_added_opened_and_closed() {
        let mut w = Writer::new(Vec::new(), TraceFormat::Iolog).unwrap();
        let rd = req(3, Op::Read, 8192, 4096, false);
        w.event(Time(2_999_999), Event::Queued, &rd).unwrap();
        w.event(Time(3_000_000), Event::Dispatched, &rd).unwrap();
        w.event(Time(4_000_000), Event::Completed, &rd).unwrap();
        w.event(Time(5_100_000), Event::Queued, &req(3, Op::Write, 0, 100, true)).unwrap();
        w.event(Time(6_000_000), Event::Queued, &req(4, Op::Flush, 0, 0, false)).unwrap();
        w.event(Time(7_000_000), Event::Queued, &req(3, Op::Trim, 4096, 4096, false)).unwrap();
        w.event(Time(8_000_000), Event::Queued, &req(3, Op::WriteZeroes, 0, 512, false)).unwrap();
        w.closed(Time(9_000_000), 3).unwrap();
        w.closed(Time(9_000_000), 3).unwrap();
        w.closed(Time(9_000_000), 7).unwrap();
        assert_eq!(
            text(w),
            "fio version 3 iolog\n\
             2999 nbd-conn3 add\n\
             2999 nbd-conn3 open\n\
             2999 nbd-conn3 read 8192 4096\n\
             5100 nbd-conn3 write 0 100\n\
             6000 nbd-conn4 add\n\
             6000 nbd-conn4 open\n\
             6000 nbd-conn4 sync\n\
             7000 nbd-conn3 trim 4096 4096\n\
             8000 nbd-conn3 write 0 512\n\
             9000 nbd-conn3 close\n"
        );
        assert_eq!(iolog_timestamp(Time(IOLOG_NS_PER_TICK * 12 + 1)), 12);
    }

    #[test]
    fn a_failed_write_ends_tracing_and_finish_reports_it() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = TraceConfig { path: dir.path().join("t.blk"), format: TraceFormat::Blkparse };
        let t = Tracer::new(TraceFile::create(&cfg).unwrap(), Instant::now());
        let r = req(1, Op::Read, 0, 4096, false);
        let (a, b) = (t.completed(&r), t.completed(&r));
        assert!(a <= b);
        assert_eq!(t.finish().unwrap(), 2);
        assert_eq!(std::fs::read_to_string(&cfg.path).unwrap().lines().count(), 2);
        // /dev/full refuses every write: the error comes back from finish
        let full = TraceConfig { path: "/dev/full".into(), format: TraceFormat::Blkparse };
        if let Ok(f) = TraceFile::create(&full) {
            let t = Tracer::new(f, Instant::now());
            for _ in 0..(BUFFER_BYTES / 40 + 10) {
                t.queued(&r);
            }
            assert!(t.finish().is_err());
        }
    }
}

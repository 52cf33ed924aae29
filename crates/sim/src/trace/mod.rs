//! # Trace replay: block traces in, fio-shaped results out
//!
//! [`replay`] streams a block trace through the simulator, once per scheduler, the way
//! [`crate::simulate`] runs a job file. Seven formats, one parser each (one line at a time,
//! nothing kept but the line being parsed):
//!
//! | [`Format`] | file | time | context (`--context process`) |
//! |---|---|---|---|
//! | `blkparse` | blkparse default text output; `Q` events only ([`blkparse`]) | s | `command[pid]` |
//! | `blktrace` | blktrace's binary per-CPU files `NAME.blktrace.N`, read as blkparse prints them ([`blktrace`]) | ns | `command[pid]` |
//! | `iolog` | fio iolog v2 (untimed) and v3 (µs timestamps, as fio writes them) ([`iolog`]) | µs | file name |
//! | `msr` | MSR Cambridge CSV ([`msr`]) | 100 ns ticks | `host_disk` |
//! | `spc` | UMass/SPC `ASU,LBA,Size,Opcode,Timestamp` ([`spc`]) | s | `asuN` |
//! | `disksim` | DiskSim ascii `time devno blkno bcount flags` ([`disksim`]) | ms | `devN` |
//! | `fiu` | FIU `ts pid process lba size op major minor hash` ([`fiu`]) | ns | `process[pid]` |
//!
//! Times are made relative to the first request's. Offsets and lengths in bytes are widened
//! to whole 512-byte sectors. Records that carry no data transfer (flushes, discards,
//! zero-length requests, fio `add`/`open`/`close`/`sync`/`trim` lines, blkparse events other
//! than `Q`) are *ignored* and counted; lines that cannot be parsed are *bad*: an error
//! naming `file:line`, or, with `skip_bad`, counted and skipped. A request reaching past the
//! disk's capacity is an error naming `file:line`, or, with `wrap`, moved back onto the
//! disk (start modulo the capacity, then back so that it ends on the disk).
//!
//! Sync flag: what the kernel's schedulers assume (`op_is_sync`): reads are synchronous,
//! writes are not, unless the format says otherwise (blkparse: `S` in RWBS makes a write
//! synchronous, `A` (readahead) makes a read asynchronous).
//!
//! Replay itself — open and closed modes, per-context queues and the read-ahead window that
//! keeps memory bounded — is in [`feed`].

pub mod blkparse;
pub mod blktrace;
pub mod disksim;
pub mod feed;
pub mod fiu;
pub mod iolog;
pub mod msr;
pub mod spc;
pub mod synthetic;

use std::io::BufRead;
use std::path::{Path, PathBuf};

use headway_sched::{Dir, SECTOR_BYTES};

pub use feed::{Feed, FeedStats, Mode, Rec};

use crate::engine::Engine;
use crate::report::Report;
use crate::{check_schedulers, ContextMode, SimError};

/// A trace file format (`--format`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    Blkparse,
    /// blktrace's binary per-CPU files, read as blkparse would print them.
    Blktrace,
    Iolog,
    Msr,
    Spc,
    Disksim,
    Fiu,
}

impl std::str::FromStr for Format {
    type Err = headway_sched::BadChoice;
    /// `blkparse`, `iolog` (or `fio`), `msr`, `spc` (or `umass`), `disksim`, `fiu`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "blkparse" => Format::Blkparse,
            "blktrace" => Format::Blktrace,
            "iolog" | "fio" | "fio-iolog" => Format::Iolog,
            "msr" => Format::Msr,
            "spc" | "umass" => Format::Spc,
            "disksim" => Format::Disksim,
            "fiu" => Format::Fiu,
            _ => return Err(headway_sched::BadChoice::new("trace format", s, Format::NAMES)),
        })
    }
}

impl Format {
    /// Whether a replay keeps the trace's times by default: DiskSim's do, since DiskSim's
    /// clock (and with it its drives' rotational phase) starts at the trace's time 0.
    pub fn keeps_times(self) -> bool {
        self == Format::Disksim
    }

    pub const NAMES: &'static str =
        "blkparse, blktrace (binary NAME.blktrace.N files), iolog (fio iolog v2/v3), msr, spc (umass), disksim, fiu";

    pub fn name(self) -> &'static str {
        match self {
            Format::Blkparse => "blkparse",
            Format::Blktrace => "blktrace",
            Format::Iolog => "iolog",
            Format::Msr => "msr",
            Format::Spc => "spc",
            Format::Disksim => "disksim",
            Format::Fiu => "fiu",
        }
    }

    fn parser(self) -> Box<dyn LineParser> {
        match self {
            Format::Blkparse | Format::Blktrace => Box::new(blkparse::Blkparse),
            Format::Iolog => Box::new(iolog::Iolog::default()),
            Format::Msr => Box::new(msr::Msr),
            Format::Spc => Box::new(spc::Spc),
            Format::Disksim => Box::new(disksim::Disksim),
            Format::Fiu => Box::new(fiu::Fiu),
        }
    }
}

/// One request of a trace, as the file records it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Issue time in the file's clock, ns (0 for untimed formats).
    pub time: u64,
    /// Response time the file records (MSR), ns; 0 when unknown.
    pub response: u64,
    /// First sector (512 bytes) and length in sectors (> 0; from [`Records`], 0 is a cache
    /// flush, [`Parsed::Flush`]).
    pub sector: u64,
    pub len: u32,
    pub dir: Dir,
    pub sync: bool,
}

/// What one line of a trace is.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A request; its context key was written to the parser's key buffer.
    Io(Record),
    /// A cache flush (no data) at this time (ns, the file's clock) by the context whose key
    /// was written: replayed as the drives' FLUSH CACHE.
    Flush(u64),
    /// Nothing to replay (a header, a comment, a non-data event).
    Ignored,
    /// Blank: neither counted nor an error.
    Blank,
    /// The rest of the file is not requests (blkparse's summary).
    End,
}

/// A format's line parser. `key` receives the request's context key (cleared by the caller);
/// an `Err` is the reason the line is malformed.
pub trait LineParser {
    fn parse(&mut self, line: &str, key: &mut String) -> Result<Parsed, String>;
    /// [`LineParser::parse`] of a line as the reader has it, in bytes (its line end
    /// removed); a parser that reads bytes overrides it and skips the UTF-8 check.
    fn parse_bytes(&mut self, line: &[u8], key: &mut String) -> Result<Parsed, String> {
        match std::str::from_utf8(line) {
            Ok(text) => self.parse(text, key),
            Err(_) => Err("not UTF-8 text".to_string()),
        }
    }
    /// Does the format record issue times? (fio iolog v2 does not; known after line 1.)
    fn timed(&self) -> bool {
        true
    }
}

/// Why a trace cannot be replayed. Every variant names the file, and the line when there is
/// one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    #[error("{file}: cannot read: {why}")]
    Io { file: String, why: String },
    /// A line the format's parser refuses (see `skip_bad`).
    #[error("{file}:{line}: {why}")]
    Malformed { file: String, line: u64, why: String },
    /// A request past the end of the disk (see `wrap`).
    #[error("{file}:{line}: request at sector {sector} of {len} sectors ends past the disk's {capacity} sectors (use --wrap to fold it onto the disk)")]
    Beyond { file: String, line: u64, sector: u64, len: u32, capacity: u64 },
    /// A request past the end of its device, in a replay on several (see `wrap`).
    #[error("{file}:{line}: request at sector {sector} of {len} sectors ends past the {capacity} sectors of {device} (use --wrap to fold it onto the device)")]
    DeviceBeyond { file: String, line: u64, device: String, sector: u64, len: u32, capacity: u64 },
    /// fio iolog v2 has no times: open mode has nothing to go by.
    #[error("{file}: {format} has no timestamps: replay it with --mode closed")]
    Untimed { file: String, format: String },
    #[error("{file}: standard input can be replayed once only: give one scheduler")]
    StdinTwice { file: String },
    /// A synthetic generator's request past the end of its device (DiskSim aborts there
    /// too: nothing maps it).
    #[error("synthetic generator {generator}: request at sector {sector} of {len} sectors ends past the {capacity} sectors of `{device}` (its `Storage capacity per device` is larger)")]
    SyntheticBeyond { generator: usize, device: String, sector: u64, len: u32, capacity: u64 },
    /// A trace without a single request (where one is needed: `headway validate`).
    #[error("{file}: no requests")]
    Empty { file: String },
}

/// Widen a byte extent to whole sectors: `(first sector, sectors)`; `None` when empty or
/// too long for one request.
pub fn byte_span(offset: u64, bytes: u64) -> Option<(u64, u32)> {
    if bytes == 0 {
        return None;
    }
    let end = offset.checked_add(bytes)?.div_ceil(SECTOR_BYTES);
    let first = offset / SECTOR_BYTES;
    u32::try_from(end - first).ok().map(|n| (first, n))
}

/// A non-negative decimal number (`12`, `0.000123`, `3.5e-3`) times `unit` (ns per unit),
/// in integer ns; exact for plain decimals up to nanoseconds.
pub fn decimal_ns(s: &str, unit: u64) -> Option<u64> {
    decimal_ns_bytes(s.as_bytes(), unit)
}

/// [`decimal_ns`] of ASCII bytes: one pass over the digits (a trace has millions of
/// these); an exponent falls back to a float parse.
pub(crate) fn decimal_ns_bytes(b: &[u8], unit: u64) -> Option<u64> {
    let mut i = 0;
    let mut whole: u64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        // (19 digits can overflow: checked from there only)
        whole = match i < 18 {
            true => whole * 10 + (b[i] - b'0') as u64,
            false => whole.checked_mul(10)?.checked_add((b[i] - b'0') as u64)?,
        };
        i += 1;
    }
    let int_digits = i;
    let mut ns = whole.checked_mul(unit)?;
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        // fractional part: digit k is worth unit / 10^k; together less than `unit`
        let (mut scale, mut frac) = (unit, 0u64);
        while i < b.len() && b[i].is_ascii_digit() {
            scale /= 10;
            frac += (b[i] - b'0') as u64 * scale;
            i += 1;
            frac_digits += 1;
        }
        ns = ns.checked_add(frac)?;
    }
    if i < b.len() {
        if matches!(b[i], b'e' | b'E') {
            let v: f64 = std::str::from_utf8(b).ok()?.parse().ok()?;
            return (v.is_finite() && v >= 0.0).then(|| (v * unit as f64).round() as u64);
        }
        return None;
    }
    (int_digits + frac_digits > 0).then_some(ns)
}

/// The blank-separated fields of a line (spaces, tabs and the other ASCII blanks), as
/// bytes: the hot path of the DiskSim trace reader.
pub(crate) struct Fields<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(line: &'a [u8]) -> Fields<'a> {
        Fields { b: line, i: 0 }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let b = self.b;
        let mut i = self.i;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            self.i = i;
            return None;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        self.i = i;
        Some(&b[start..i])
    }
}

/// An unsigned decimal integer of ASCII digits (no sign, no spaces), `None` if it is not
/// one or overflows.
pub(crate) fn dec_u64(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in t {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((b - b'0') as u64)?;
    }
    Some(v)
}

/// Parse a number field, naming it in the error.
pub(crate) fn num<T: std::str::FromStr>(s: Option<&str>, what: &str) -> Result<T, String> {
    let s = s.ok_or_else(|| format!("missing {what}"))?;
    s.trim().parse().map_err(|_| format!("{what} `{s}` is not a number"))
}

/// A trace read one line at a time: bounded memory whatever the file's size.
pub struct Records {
    src: Box<dyn BufRead>,
    file: String,
    parser: Box<dyn LineParser>,
    line: u64,
    buf: Vec<u8>,
    key: String,
    skip_bad: bool,
    ended: bool,
    /// Lines with nothing to replay, and bad lines skipped.
    pub ignored: u64,
    pub bad: u64,
    /// Bytes of the file consumed (for progress).
    pub consumed: u64,
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Records({}:{})", self.file, self.line)
    }
}

impl Records {
    /// Read `src` (named `file` in errors) as `format`.
    pub fn new(src: Box<dyn BufRead>, file: &str, format: Format, skip_bad: bool) -> Self {
        Records {
            src,
            file: file.to_string(),
            parser: format.parser(),
            line: 0,
            buf: Vec::with_capacity(256),
            key: String::new(),
            skip_bad,
            ended: false,
            ignored: 0,
            bad: 0,
            consumed: 0,
        }
    }

    /// Open a file (`-`: standard input).
    pub fn open(path: &Path, format: Format, skip_bad: bool) -> Result<Self, TraceError> {
        let name = path.display().to_string();
        if format == Format::Blktrace {
            let text = blktrace::BlktraceText::open(path)
                .map_err(|why| TraceError::Io { file: name.clone(), why })?;
            return Ok(Records::new(Box::new(text), &name, format, skip_bad));
        }
        let src: Box<dyn BufRead> = if path.as_os_str() == "-" {
            Box::new(std::io::BufReader::with_capacity(1 << 16, std::io::stdin()))
        } else {
            let f = std::fs::File::open(path)
                .map_err(|e| TraceError::Io { file: name.clone(), why: e.to_string() })?;
            Box::new(std::io::BufReader::with_capacity(1 << 16, f))
        };
        Ok(Records::new(src, &name, format, skip_bad))
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    /// The same trace, a DiskSim one, read as `routing` says ([`disksim::Routing`]).
    pub fn routed(mut self, routing: std::sync::Arc<disksim::Routing>) -> Self {
        self.parser = Box::new(disksim::RoutedDisksim::new(routing));
        self
    }

    /// The line of the record last returned.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The context key of the record last returned.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Does the format record times? (Meaningful once the first line has been read.)
    pub fn timed(&self) -> bool {
        self.parser.timed()
    }

    /// The next request, `None` at the end of the trace.
    pub fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        let io =
            |file: &str, e: std::io::Error| TraceError::Io { file: file.to_string(), why: e.to_string() };
        while !self.ended {
            // the line where the reader holds it, when it is whole in its buffer (no copy);
            // else read out into `buf`
            let avail = self.src.fill_buf().map_err(|e| io(&self.file, e))?;
            let in_place = memchr::memchr(b'\n', avail).map(|i| i + 1);
            let (mut line, n): (&[u8], usize) = match in_place {
                Some(n) => (&avail[..n], n),
                None => {
                    self.buf.clear();
                    let n = self.src.read_until(b'\n', &mut self.buf).map_err(|e| io(&self.file, e))?;
                    (&self.buf, n)
                }
            };
            if n == 0 {
                self.ended = true;
                break;
            }
            self.consumed += n as u64;
            self.line += 1;
            while let [rest @ .., b'\n' | b'\r'] = line {
                line = rest;
            }
            self.key.clear();
            let parsed = self.parser.parse_bytes(line, &mut self.key);
            if let Some(n) = in_place {
                self.src.consume(n);
            }
            match parsed {
                Ok(Parsed::Io(r)) => return Ok(Some(r)),
                Ok(Parsed::Flush(time)) => {
                    return Ok(Some(Record {
                        time,
                        response: 0,
                        sector: 0,
                        len: 0,
                        dir: Dir::Write,
                        sync: true,
                    }))
                }
                Ok(Parsed::Ignored) => self.ignored += 1,
                Ok(Parsed::Blank) => {}
                Ok(Parsed::End) => self.ended = true,
                Err(why) if self.skip_bad => {
                    let _ = why;
                    self.bad += 1;
                }
                Err(why) => {
                    return Err(TraceError::Malformed { file: self.file.clone(), line: self.line, why })
                }
            }
        }
        Ok(None)
    }
}

/// Everything a replay needs: the trace, how to feed it, and the machine and schedulers to
/// replay it on (`run.context`: `process` and `thread` give each trace context its own id,
/// `none` nothing, `pool:N` a random one of N; `vm` is refused).
#[derive(Clone, Debug)]
pub struct ReplayConfig {
    /// The trace (`-`: standard input, with one scheduler).
    pub path: PathBuf,
    pub format: Format,
    pub run: crate::RunSpec,
    /// Open or closed; `None`: open, or closed for untimed formats (fio iolog v2).
    pub mode: Option<Mode>,
    pub options: feed::FeedOptions,
    /// A DiskSim trace on a DiskSim parameter file: its maps, and which of `run.devices`
    /// each device number reaches. `None`: every request goes to the one device.
    pub routing: Option<std::sync::Arc<disksim::Routing>>,
}

/// What a replay read, besides the results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplaySummary {
    pub mode: String,
    pub stats: FeedStats,
}

/// Replay the trace once per scheduler (the file is read again for each).
pub fn replay(
    cfg: &ReplayConfig,
    progress: impl FnMut(usize, f64),
) -> Result<(Report, ReplaySummary), SimError> {
    replay_with(cfg, || Records::open(&cfg.path, cfg.format, cfg.options.skip_bad), progress)
}

/// [`replay`] reading the trace from what `open` returns, once per scheduler (`cfg.path`
/// and `cfg.format` are then only names).
pub fn replay_with(
    cfg: &ReplayConfig,
    open: impl FnMut() -> Result<Records, TraceError>,
    progress: impl FnMut(usize, f64),
) -> Result<(Report, ReplaySummary), SimError> {
    replay_runs(cfg, open, progress, None)
}

/// [`replay`], telling `log(run_index, record)` every trace request as it completes (runs in
/// scheduler order, each in completion order; `job` is the request's trace context, as the
/// report names it): `headway replay --per-request`.
pub fn replay_logged(
    cfg: &ReplayConfig,
    progress: impl FnMut(usize, f64),
    mut log: impl FnMut(usize, &crate::RequestRecord<'_>),
) -> Result<(Report, ReplaySummary), SimError> {
    replay_runs(cfg, || Records::open(&cfg.path, cfg.format, cfg.options.skip_bad), progress, Some(&mut log))
}

/// [`replay`] with each run's `head_trace`: every command dispatched in the first `window`
/// of simulated time, `max` at most (`headway lab` compares them with the emulated drive's).
pub fn replay_traced(
    cfg: &ReplayConfig,
    window: headway_sched::Duration,
    max: usize,
    progress: impl FnMut(usize, f64),
) -> Result<(Report, ReplaySummary), SimError> {
    replay_runs_with(
        cfg,
        || Records::open(&cfg.path, cfg.format, cfg.options.skip_bad),
        progress,
        None,
        Some((window, max)),
    )
}

fn replay_runs(
    cfg: &ReplayConfig,
    open: impl FnMut() -> Result<Records, TraceError>,
    progress: impl FnMut(usize, f64),
    log: Option<crate::engine::RunsLog<'_>>,
) -> Result<(Report, ReplaySummary), SimError> {
    replay_runs_with(cfg, open, progress, log, None)
}

fn replay_runs_with(
    cfg: &ReplayConfig,
    mut open: impl FnMut() -> Result<Records, TraceError>,
    mut progress: impl FnMut(usize, f64),
    mut log: Option<crate::engine::RunsLog<'_>>,
    head: Option<(headway_sched::Duration, usize)>,
) -> Result<(Report, ReplaySummary), SimError> {
    let run = &cfg.run;
    check_schedulers(&run.schedulers, &run.settings)?;
    if run.context == ContextMode::Vm {
        return Err(SimError::Trace(TraceError::Malformed {
            file: cfg.path.display().to_string(),
            line: 0,
            why: format!("--context: {}", crate::workload::VmInTrace),
        }));
    }
    if cfg.path.as_os_str() == "-" && run.schedulers.len() > 1 {
        return Err(SimError::Trace(TraceError::StdinTwice { file: "-".into() }));
    }
    let array = run.array_config()?;
    let space = match run.devices.is_empty() {
        true => feed::Space::One(run.capacity()),
        false => {
            feed::Space::Devices(run.devices.iter().map(|d| (d.capacity(), d.disk.name.clone())).collect())
        }
    };
    // a run of several devices, and only it, routes each request to one of them
    let reaches = cfg.routing.as_ref().and_then(|r| r.reaches.as_ref());
    let fits = match reaches {
        None => run.devices.is_empty(),
        Some(r) => !run.devices.is_empty() && r.iter().flatten().all(|&d| (d as usize) < run.devices.len()),
    };
    if !fits {
        return Err(SimError::Trace(TraceError::Malformed {
            file: cfg.path.display().to_string(),
            line: 0,
            why: "a replay on several devices needs the trace's routing to them, and only it does".into(),
        }));
    }
    let shared = crate::Shared::of(run)?;
    let input = shared.input(run, array);
    let mut runs = Vec::with_capacity(run.schedulers.len());
    let mut summary = ReplaySummary::default();
    for (i, name) in run.schedulers.iter().enumerate() {
        let scheds = crate::run_schedulers(name, run)?;
        let mut records = open()?;
        if let Some(r) = &cfg.routing {
            records = records.routed(r.clone());
        }
        let feed = Feed::new(records, cfg.mode, space.clone(), cfg.options.clone())?;
        summary.mode = feed.mode().name().to_string();
        let mut engine = Engine::replay_array(scheds, feed, &input)?;
        if let Some((window, max)) = head {
            engine = engine.with_head_trace_max(window, max);
        }
        if let Some(log) = log.as_deref_mut() {
            engine = engine.with_request_log(Box::new(move |r| log(i, r)));
        }
        let (run, stats) = engine.run_replay(|f| progress(i, f))?;
        runs.push(run);
        summary.stats = stats;
    }
    Ok((Report::new(runs), summary))
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// Every record and key of `text` read as `format`.
    pub fn read_all(
        text: &str,
        format: Format,
        skip_bad: bool,
    ) -> Result<(Vec<(Record, String)>, Records), TraceError> {
        let src: Box<dyn BufRead> = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
        let mut r = Records::new(src, "t.trace", format, skip_bad);
        let mut out = Vec::new();
        while let Some(rec) = r.next_record()? {
            out.push((rec, r.key().to_string()));
        }
        Ok((out, r))
    }

    pub fn rec(time: u64, sector: u64, len: u32, dir: Dir, sync: bool) -> Record {
        Record { time, response: 0, sector, len, dir, sync }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_exact_to_the_nanosecond() {
        assert_eq!(decimal_ns("0.000000001", 1_000_000_000), Some(1));
        assert_eq!(decimal_ns("12.5", 1_000_000), Some(12_500_000));
        assert_eq!(decimal_ns("3", 1_000_000_000), Some(3_000_000_000));
        assert_eq!(decimal_ns(".25", 1_000_000_000), Some(250_000_000));
        assert_eq!(decimal_ns("1.0000000019", 1_000_000_000), Some(1_000_000_001));
        assert_eq!(decimal_ns("1e-3", 1_000_000_000), Some(1_000_000));
        assert_eq!(decimal_ns("-1", 1), None);
        assert_eq!(decimal_ns("1.2.3", 1), None);
        assert_eq!(decimal_ns("", 1), None);
        // where the integer part can overflow: 18 digits never do, 19 and 20 are checked
        assert_eq!(decimal_ns("999999999999999999", 1), Some(999_999_999_999_999_999));
        assert_eq!(decimal_ns("18446744073709551615", 1), Some(u64::MAX));
        assert_eq!(decimal_ns("18446744073709551616", 1), None);
        assert_eq!(decimal_ns("18446744073709551615.9", 1), Some(u64::MAX), "below the unit: nothing");
        assert_eq!(decimal_ns("18446744073709551.615", 1000), Some(u64::MAX));
        assert_eq!(decimal_ns("18446744073709551.6159", 1000), Some(u64::MAX));
        assert_eq!(decimal_ns("18446744073709552", 1000), None);
    }

    proptest::proptest! {
        /// Exact: the integer part times the unit plus each fractional digit `k` times
        /// `unit / 10^k` (rounded down), `None` past `u64::MAX`, against 128-bit arithmetic.
        #[test]
        fn decimals_match_wide_arithmetic(
            whole in proptest::prelude::any::<u64>(),
            frac in "[0-9]{0,12}",
            unit in proptest::sample::select(vec![1u64, 1_000, 1_000_000, 1_000_000_000]),
        ) {
            let text = if frac.is_empty() { whole.to_string() } else { format!("{whole}.{frac}") };
            let mut want = whole as u128 * unit as u128;
            let mut scale = unit as u128;
            for d in frac.bytes() {
                scale /= 10;
                want += (d - b'0') as u128 * scale;
            }
            let want = u64::try_from(want).ok();
            proptest::prop_assert_eq!(decimal_ns_bytes(text.as_bytes(), unit), want, "{}", text);
        }
    }

    /// Lines are parsed where the reader holds them, or copied out when one straddles its
    /// buffer or ends the file without a newline: the same records, keys, line numbers and
    /// bytes either way, CRLF endings included.
    #[test]
    fn lines_across_the_readers_buffer_read_the_same() {
        let text = "0.5 0 1000 16 1\r\n1.25 1 64 8 0\n\n# c\n2 0 2048 8 1\n3.125 2 4096 24 0";
        let read = |cap: usize| {
            let cursor = std::io::Cursor::new(text.as_bytes().to_vec());
            let src: Box<dyn BufRead> = Box::new(std::io::BufReader::with_capacity(cap, cursor));
            let mut r = Records::new(src, "t.trace", Format::Disksim, false);
            let mut out = Vec::new();
            while let Some(x) = r.next_record().unwrap() {
                out.push((x, r.key().to_string(), r.line));
            }
            (out, r.ignored, r.consumed)
        };
        let whole = read(1 << 16);
        assert_eq!(whole.0.len(), 4);
        assert_eq!((whole.0[3].0.sector, whole.0[3].2), (4096, 6), "the last line, without a newline");
        assert_eq!((whole.1, whole.2), (1, text.len() as u64));
        for cap in [1, 2, 3, 7, 16, 17] {
            assert_eq!(read(cap), whole, "a buffer of {cap} bytes");
        }
    }

    #[test]
    fn byte_extents_widen_to_sectors() {
        assert_eq!(byte_span(4096, 4096), Some((8, 8)));
        assert_eq!(byte_span(100, 512), Some((0, 2)));
        assert_eq!(byte_span(0, 0), None);
    }

    #[test]
    fn bad_lines_name_file_and_line_or_are_counted() {
        let text = "0 1 0 8 1\n\n1 1 8 x 1\n2 1 16 8 0\n";
        let e = testutil::read_all(text, Format::Disksim, false).unwrap_err();
        assert_eq!(e.to_string(), "t.trace:3: bcount `x` is not a number");
        let (recs, r) = testutil::read_all(text, Format::Disksim, true).unwrap();
        assert_eq!((recs.len(), r.bad, r.ignored), (2, 1, 0));
        let e = testutil::read_all("0 1 0 8 1\n\u{0}\u{ff}\n", Format::Disksim, false);
        assert!(e.is_err());
    }
}

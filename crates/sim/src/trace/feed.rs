//! Feeding a trace to the engine in bounded memory: the engine pulls requests as simulated
//! time advances; the trace is never held whole.
//!
//! **Open mode** (`--mode open`): each request arrives at its recorded time (relative to the
//! trace's first), whatever happened to the others. The feed holds one record ahead of the
//! simulated clock (the next arrival). A record whose time is earlier than its predecessor's
//! (blkparse merges per-CPU streams) arrives as soon as it is read. Memory is bounded by
//! what has arrived and not completed: a trace that asks more of the disk than it can do
//! builds a backlog in the scheduler, as the real system would have.
//!
//! **Closed mode** (`--mode closed`): each context is a synchronous issuer. Its first
//! request is issued at its recorded time; each next one `HOST_OVERHEAD` (20 us) plus the
//! recorded think time after the previous one completes. The think time is the recorded gap
//! between the two requests less the previous request's recorded response time when the
//! format has one (MSR), floored at zero; for formats without response times the gap
//! includes the traced disk's service time, so closed replay is conservative (slower than
//! the trace) unless the trace has tiny gaps (fio iolog v2: none).
//!
//! The file interleaves contexts, and in closed mode they run at their own pace, so records
//! are read ahead into per-context queues. Reading happens when simulated time reaches the
//! next record's recorded time (so a context's first request starts on time) and when a
//! context wants its next request and its queue is empty (reading on in file order until
//! one of its records comes). The records buffered across all queues never exceed
//! [`FeedOptions::window`] (default [`DEFAULT_WINDOW`], about 40 bytes each): when the window
//! is full, a context whose next record lies beyond it waits until the others have consumed
//! enough of the window, and a context that appears beyond it starts late. Such waits are
//! counted ([`FeedStats::window_stalls`], [`FeedStats::window_stall_ns`]); raise the window
//! when they matter. Each distinct context costs a few dozen bytes for the rest of the run.
//!
//! Contexts are numbered in order of first appearance in the file; that number is the
//! `ContextId` the scheduler is told (`--context process|thread`) and decides the report:
//! the first [`FeedOptions::max_jobs`] contexts are a job each (named by their key), the
//! rest share one job named `others`.

use std::collections::{HashMap, VecDeque};

use headway_sched::{Dir, SECTOR_BYTES};
use serde::Serialize;

use super::{Records, TraceError};
use crate::workload::HOST_OVERHEAD;

/// Records buffered ahead in closed mode, at most: 262,144 (about 10 MiB).
pub const DEFAULT_WINDOW: usize = 1 << 18;
/// Contexts reported as jobs of their own; the rest share one.
pub const DEFAULT_MAX_JOBS: usize = 64;
/// The longest request a trace may hold: 8,388,607 sectors (4 GiB less 512 bytes).
pub const MAX_REQUEST_SECTORS: u32 = (u32::MAX as u64 / SECTOR_BYTES) as u32;

/// How requests are issued.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// At their recorded times.
    Open,
    /// Per context, one at a time, after the previous completes and the recorded think time.
    Closed,
}

impl std::str::FromStr for Mode {
    type Err = headway_sched::BadChoice;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "open" => Ok(Mode::Open),
            "closed" => Ok(Mode::Closed),
            _ => Err(headway_sched::BadChoice::new("replay mode", s, "open or closed")),
        }
    }
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Open => "open",
            Mode::Closed => "closed",
        }
    }
}

/// Replay options (`--window`, `--wrap`, `--skip-bad`, `--max-jobs`).
#[derive(Clone, Debug)]
pub struct FeedOptions {
    /// Closed mode: records buffered ahead at most (>= 1).
    pub window: usize,
    /// Fold requests past the disk's end back onto it instead of failing.
    pub wrap: bool,
    /// Count and skip malformed lines instead of failing.
    pub skip_bad: bool,
    /// Contexts reported as jobs of their own.
    pub max_jobs: usize,
    /// Keep the recorded times instead of starting at the first request: the replay's
    /// time 0 is the trace's, so a trace whose clock started with the drive's (`headway
    /// serve --trace`) replays with the same rotational phase.
    pub absolute_times: bool,
}

impl Default for FeedOptions {
    fn default() -> Self {
        FeedOptions {
            window: DEFAULT_WINDOW,
            wrap: false,
            skip_bad: false,
            max_jobs: DEFAULT_MAX_JOBS,
            absolute_times: false,
        }
    }
}

/// Where a trace's requests land: one device of so many sectors, or several, each
/// `(sectors, name)`, a request's device in its address above [`crate::engine::DEVICE_SHIFT`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Space {
    One(u64),
    Devices(Vec<(u64, String)>),
}

impl From<u64> for Space {
    fn from(sectors: u64) -> Space {
        Space::One(sectors)
    }
}

/// A request ready for the engine: times relative to the trace's first request, ns.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Rec {
    pub time: u64,
    pub response: u64,
    pub sector: u64,
    pub len: u32,
    /// Context number (order of first appearance).
    pub ctx: u32,
    pub dir: Dir,
    pub sync: bool,
    /// A cache flush (no data: `sector` and `len` are 0).
    pub flush: bool,
}

/// What a replay read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FeedStats {
    /// Requests replayed and their bytes.
    pub records: u64,
    pub bytes: u64,
    /// Cache flushes replayed (not among `records`).
    pub flushes: u64,
    /// Lines with nothing to replay; malformed lines skipped (`--skip-bad`).
    pub ignored: u64,
    pub bad: u64,
    /// Distinct contexts.
    pub contexts: u64,
    /// Requests folded onto the disk (`--wrap`).
    pub wrapped: u64,
    /// Closed mode: times a context waited for the read-ahead window, and the total delay.
    pub window_stalls: u64,
    pub window_stall_ns: u64,
    /// Closed mode: most records buffered at once.
    pub peak_buffered: u64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    /// Closed mode: seen, its first request not yet scheduled.
    Fresh,
    /// An issue event is pending.
    Scheduled,
    /// Its request is in flight.
    Busy,
    /// Closed mode: wants its next record (since its completion at `since` + overhead +
    /// think), none read yet.
    Starved { since: u64 },
    /// Nothing more to issue.
    Done,
}

struct Ctx {
    label: Box<str>,
    queue: VecDeque<Rec>,
    /// Recorded time and response time of the request last issued.
    prev: (u64, u64),
    inflight: u32,
    state: State,
}

/// One run's view of a trace (see the module docs). The engine calls [`Feed::advance`] when
/// simulated time reaches [`Feed::wake_at`], [`Feed::issue`] when a closed-mode context's
/// issue time comes, and [`Feed::completed`] when a request completes; after each it drains
/// `arrivals` (submit now), `ready` (issue events to schedule) and `exited`.
pub struct Feed {
    records: Records,
    mode: Mode,
    space: Space,
    opts: FeedOptions,
    origin: Option<u64>,
    peeked: Option<Rec>,
    eof: bool,
    ctxs: Vec<Ctx>,
    keys: HashMap<Box<str>, u32>,
    /// The previous record's context (the common case: the same again), compared by its
    /// label.
    last_ctx: Option<u32>,
    buffered: usize,
    starved: VecDeque<u32>,
    total_bytes: Option<u64>,
    stats: FeedStats,
    /// Requests to submit now.
    pub arrivals: VecDeque<Rec>,
    /// Closed mode: (context, time) issue events to schedule.
    pub ready: Vec<(u32, u64)>,
    /// Contexts with nothing more to issue and nothing in flight.
    pub exited: Vec<u32>,
}

impl Feed {
    /// A feed over `records` for a disk of `space` sectors (or the devices of a [`Space`]).
    /// `mode: None` is open, or closed for an untimed format; open mode on an untimed
    /// format is an error.
    pub fn new(
        records: Records,
        mode: Option<Mode>,
        space: impl Into<Space>,
        opts: FeedOptions,
    ) -> Result<Self, TraceError> {
        let mut feed = Feed {
            total_bytes: None,
            mode: Mode::Open,
            space: space.into(),
            opts: FeedOptions { window: opts.window.max(1), ..opts },
            origin: None,
            peeked: None,
            eof: false,
            ctxs: Vec::new(),
            keys: HashMap::new(),
            last_ctx: None,
            buffered: 0,
            starved: VecDeque::new(),
            stats: FeedStats::default(),
            arrivals: VecDeque::new(),
            ready: Vec::new(),
            exited: Vec::new(),
            records,
        };
        feed.total_bytes =
            std::fs::metadata(feed.records.file()).ok().filter(|m| m.is_file()).map(|m| m.len());
        // the first record tells whether the format is timed (fio iolog v2 is not)
        let first = feed.read_one()?;
        let timed = feed.records.timed();
        feed.mode = match (mode, timed) {
            (Some(Mode::Open), false) => {
                return Err(TraceError::Untimed {
                    file: feed.records.file().to_string(),
                    format: "fio iolog v2".into(),
                })
            }
            (Some(m), _) => m,
            (None, true) => Mode::Open,
            (None, false) => Mode::Closed,
        };
        if let Some(r) = first {
            if feed.mode == Mode::Closed {
                feed.ctxs[r.ctx as usize].state = State::Fresh;
            }
        }
        feed.peeked = first;
        Ok(feed)
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn max_jobs(&self) -> usize {
        self.opts.max_jobs
    }

    /// Contexts seen so far.
    pub fn contexts(&self) -> usize {
        self.ctxs.len()
    }

    /// Context `c`'s key (`dd[4162]`, a file name, `usr_0`).
    pub fn label(&self, c: usize) -> &str {
        &self.ctxs[c].label
    }

    pub fn stats(&self) -> FeedStats {
        let mut s = self.stats.clone();
        s.ignored = self.records.ignored;
        s.bad = self.records.bad;
        s.contexts = self.ctxs.len() as u64;
        s
    }

    /// Fraction of the file read (0 when its length is unknown).
    pub fn fraction(&self) -> f64 {
        match self.total_bytes {
            Some(t) if t > 0 => self.records.consumed as f64 / t as f64,
            _ => 0.0,
        }
    }

    /// Every record read and issued, every context done with nothing in flight.
    pub fn finished(&self) -> bool {
        self.eof
            && self.peeked.is_none()
            && self.arrivals.is_empty()
            && self.buffered == 0
            && self.ctxs.iter().all(|c| c.inflight == 0)
    }

    /// When the engine should call [`Feed::advance`] next: the next unread record's time
    /// (closed mode: unless the window is full).
    pub fn wake_at(&self) -> Option<u64> {
        match self.mode {
            Mode::Closed if self.buffered >= self.opts.window => None,
            _ => self.peeked.map(|r| r.time),
        }
    }

    /// Read the next record in file order, checked against the disk and numbered by context.
    fn read_one(&mut self) -> Result<Option<Rec>, TraceError> {
        if self.eof {
            return Ok(None);
        }
        let Some(r) = self.records.next_record()? else {
            self.at_eof();
            return Ok(None);
        };
        let line = self.records.line();
        let file = || self.records.file().to_string();
        if r.len > MAX_REQUEST_SECTORS {
            return Err(TraceError::Malformed {
                file: file(),
                line,
                why: format!("request of {} sectors: more than 4 GiB", r.len),
            });
        }
        let first = if self.opts.absolute_times { 0 } else { r.time };
        let origin = *self.origin.get_or_insert(first);
        let shift = crate::engine::DEVICE_SHIFT;
        let (device, mut sector, cap) = match &self.space {
            Space::One(cap) => (None, r.sector, *cap),
            Space::Devices(d) => {
                let i = (r.sector >> shift) as usize;
                (Some(i), r.sector & ((1 << shift) - 1), d[i].0)
            }
        };
        if sector.checked_add(r.len as u64).is_none_or(|end| end > cap) {
            if !self.opts.wrap || r.len as u64 > cap {
                let (len, capacity) = (r.len, cap);
                return Err(match (device, &self.space) {
                    (Some(i), Space::Devices(d)) => TraceError::DeviceBeyond {
                        file: file(),
                        line,
                        device: d[i].1.clone(),
                        sector,
                        len,
                        capacity,
                    },
                    _ => TraceError::Beyond { file: file(), line, sector, len, capacity },
                });
            }
            sector %= cap;
            sector = sector.min(cap - r.len as u64);
            self.stats.wrapped += 1;
        }
        if let Some(i) = device {
            sector |= (i as u64) << shift;
        }
        let key = self.records.key();
        let ctx = match self.last_ctx.filter(|&c| *self.ctxs[c as usize].label == *key) {
            // most records come from the context the previous one did
            Some(c) => c,
            None => self.context_of_key(),
        };
        let flush = r.len == 0;
        if flush {
            self.stats.flushes += 1;
        } else {
            self.stats.records += 1;
            self.stats.bytes += r.len as u64 * SECTOR_BYTES;
        }
        Ok(Some(Rec {
            time: r.time.saturating_sub(origin),
            response: r.response,
            sector,
            len: r.len,
            ctx,
            dir: r.dir,
            sync: r.sync,
            flush,
        }))
    }

    /// The context number of the last record's key, a new one at its first appearance.
    fn context_of_key(&mut self) -> u32 {
        let c = match self.keys.get(self.records.key()) {
            Some(&c) => c,
            None => {
                let c = self.ctxs.len() as u32;
                let label: Box<str> = self.records.key().into();
                self.keys.insert(label.clone(), c);
                let state = if self.mode == Mode::Closed { State::Fresh } else { State::Busy };
                self.ctxs.push(Ctx { label, queue: VecDeque::new(), prev: (0, 0), inflight: 0, state });
                c
            }
        };
        self.last_ctx = Some(c);
        c
    }

    fn at_eof(&mut self) {
        self.eof = true;
        match self.mode {
            Mode::Open => {
                for (i, c) in self.ctxs.iter_mut().enumerate() {
                    if c.inflight == 0 && c.state != State::Done {
                        c.state = State::Done;
                        self.exited.push(i as u32);
                    }
                }
            }
            Mode::Closed => {
                for c in std::mem::take(&mut self.starved) {
                    let cx = &mut self.ctxs[c as usize];
                    if matches!(cx.state, State::Starved { .. }) {
                        cx.state = State::Done;
                        self.exited.push(c);
                    }
                }
            }
        }
    }

    /// The next record in file order (the peeked one first).
    fn next_in_order(&mut self) -> Result<Option<Rec>, TraceError> {
        match self.peeked.take() {
            Some(r) => Ok(Some(r)),
            None => self.read_one(),
        }
    }

    /// Closed mode: queue a record for its context; schedule the context if it was waiting.
    fn route(&mut self, r: Rec, now: u64) {
        self.buffered += 1;
        self.stats.peak_buffered = self.stats.peak_buffered.max(self.buffered as u64);
        let cx = &mut self.ctxs[r.ctx as usize];
        cx.queue.push_back(r);
        match cx.state {
            State::Fresh => {
                cx.state = State::Scheduled;
                self.ready.push((r.ctx, now.max(r.time)));
            }
            State::Starved { since } => {
                cx.state = State::Scheduled;
                let due = since + HOST_OVERHEAD.0 + think(cx.prev, &r);
                if now > due {
                    self.stats.window_stalls += 1;
                    self.stats.window_stall_ns += now - due;
                }
                self.ready.push((r.ctx, now.max(due)));
            }
            State::Scheduled | State::Busy | State::Done => {}
        }
    }

    /// Simulated time is `now`: open mode, hand over every record due; closed mode, queue
    /// them (within the window).
    pub fn advance(&mut self, now: u64) -> Result<(), TraceError> {
        loop {
            if self.mode == Mode::Closed && self.buffered >= self.opts.window {
                return Ok(());
            }
            if self.peeked.is_none() {
                self.peeked = self.read_one()?;
            }
            match self.peeked {
                Some(r) if r.time <= now => {
                    self.peeked = None;
                    match self.mode {
                        Mode::Open => {
                            self.ctxs[r.ctx as usize].inflight += 1;
                            self.arrivals.push_back(r);
                        }
                        Mode::Closed => self.route(r, now),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// Closed mode: context `c`'s issue time has come; its next request goes to `arrivals`.
    pub fn issue(&mut self, c: u32, now: u64) -> Result<(), TraceError> {
        let cx = &mut self.ctxs[c as usize];
        debug_assert_eq!(cx.state, State::Scheduled);
        let r = cx.queue.pop_front().expect("a scheduled context has a record");
        // Queues never shrink by themselves: keep each within 4x its contents (+ 4096), so
        // that the window bounds what the queues hold allocated, not only what they hold.
        let cap = cx.queue.capacity();
        if cap > 4096 && cx.queue.len() < cap / 4 {
            cx.queue.shrink_to(cap / 2);
        }
        cx.prev = (r.time, r.response);
        cx.inflight += 1;
        cx.state = State::Busy;
        self.buffered -= 1;
        self.arrivals.push_back(r);
        // room in the window: waiting contexts first, then whatever time has made due
        self.serve_starved(now)?;
        self.advance(now)
    }

    /// A request of context `c` completed at `now`.
    pub fn completed(&mut self, c: u32, now: u64) -> Result<(), TraceError> {
        let cx = &mut self.ctxs[c as usize];
        cx.inflight -= 1;
        match self.mode {
            Mode::Open => {
                if self.eof && cx.inflight == 0 {
                    cx.state = State::Done;
                    self.exited.push(c);
                }
                Ok(())
            }
            Mode::Closed => {
                if let Some(next) = cx.queue.front() {
                    cx.state = State::Scheduled;
                    let at = now + HOST_OVERHEAD.0 + think(cx.prev, next);
                    self.ready.push((c, at));
                    Ok(())
                } else if self.eof && self.peeked.is_none() {
                    cx.state = State::Done;
                    self.exited.push(c);
                    Ok(())
                } else {
                    cx.state = State::Starved { since: now };
                    self.starved.push_back(c);
                    self.serve_starved(now)
                }
            }
        }
    }

    /// Read on in file order for the contexts waiting for their next record, oldest first,
    /// while the window has room.
    fn serve_starved(&mut self, now: u64) -> Result<(), TraceError> {
        while let Some(&c) = self.starved.front() {
            while matches!(self.ctxs[c as usize].state, State::Starved { .. }) {
                if self.buffered >= self.opts.window {
                    return Ok(());
                }
                match self.next_in_order()? {
                    Some(r) => self.route(r, now),
                    // (at_eof marked every starved context done)
                    None => return Ok(()),
                }
            }
            self.starved.pop_front();
        }
        Ok(())
    }
}

/// The think time before `next` of an issuer whose previous request was `prev` = (recorded
/// time, recorded response time).
fn think(prev: (u64, u64), next: &Rec) -> u64 {
    next.time.saturating_sub(prev.0 + prev.1)
}

#[cfg(test)]
mod tests {
    use super::super::{Format, Records};
    use super::*;

    fn feed(text: &str, mode: Option<Mode>, window: usize) -> Feed {
        let src: Box<dyn std::io::BufRead> = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
        let records = Records::new(src, "t.trace", Format::Disksim, false);
        Feed::new(records, mode, 1 << 30, FeedOptions { window, ..Default::default() }).unwrap()
    }

    #[test]
    fn open_mode_hands_over_records_as_time_reaches_them() {
        let mut f = feed("10 0 0 8 1\n10 1 8 8 1\n12 0 16 8 1\n", None, 1);
        assert_eq!(f.mode(), Mode::Open);
        assert_eq!(f.wake_at(), Some(0));
        f.advance(0).unwrap();
        assert_eq!(f.arrivals.len(), 2, "two records at the first time");
        assert_eq!(f.wake_at(), Some(2_000_000));
        f.advance(1_999_999).unwrap();
        assert_eq!(f.arrivals.len(), 2);
        f.advance(2_000_000).unwrap();
        assert_eq!(f.arrivals.iter().map(|r| r.ctx).collect::<Vec<_>>(), vec![0, 1, 0]);
        assert_eq!(f.wake_at(), None);
        assert!(f.exited.is_empty(), "contexts with requests in flight have not exited");
        f.arrivals.clear();
        f.completed(1, 3_000_000).unwrap();
        assert_eq!(f.exited, vec![1]);
        f.completed(0, 3_000_000).unwrap();
        f.completed(0, 3_000_000).unwrap();
        assert_eq!(f.exited, vec![1, 0]);
        assert!(f.finished());
    }

    #[test]
    fn absolute_times_keep_the_recorded_clock() {
        let open = |absolute_times| {
            let src: Box<dyn std::io::BufRead> =
                Box::new(std::io::Cursor::new(b"10 0 0 8 1\n12 0 8 8 1\n".to_vec()));
            let records = Records::new(src, "t.trace", Format::Disksim, false);
            let opts = FeedOptions { window: 1, absolute_times, ..Default::default() };
            Feed::new(records, None, 1 << 30, opts).unwrap()
        };
        assert_eq!(open(false).wake_at(), Some(0), "relative: the first request at 0");
        let mut f = open(true);
        assert_eq!(f.wake_at(), Some(10_000_000), "absolute: at its recorded 10 ms");
        f.advance(10_000_000).unwrap();
        assert_eq!(f.wake_at(), Some(12_000_000));
    }

    #[test]
    fn several_devices_check_and_wrap_each_request_on_its_own_device() {
        let devices = || Space::Devices(vec![(100, "a".to_string()), (50, "b".to_string())]);
        let open = |wrap: bool| {
            let routing = super::super::disksim::Routing { mapping: None, reaches: Some(vec![Ok(0), Ok(1)]) };
            let src: Box<dyn std::io::BufRead> =
                Box::new(std::io::Cursor::new(b"0 0 90 8 1\n1 1 48 8 1\n".to_vec()));
            let records =
                Records::new(src, "t.trace", Format::Disksim, false).routed(std::sync::Arc::new(routing));
            Feed::new(records, None, devices(), FeedOptions { wrap, ..Default::default() })
        };
        let mut f = open(true).unwrap();
        f.advance(1_000_000).unwrap();
        let sectors: Vec<u64> = f.arrivals.iter().map(|r| r.sector).collect();
        // 90 + 8 fits device a's 100; 48 + 8 does not fit b's 50: folded to 42, on b
        assert_eq!(sectors, [90, 1 << crate::engine::DEVICE_SHIFT | 42]);
        assert_eq!(f.stats().wrapped, 1);
        let e = match open(false) {
            Ok(mut f) => f.advance(1_000_000).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert_eq!(
            e,
            "t.trace:2: request at sector 48 of 8 sectors ends past the 50 sectors of b (use --wrap to fold it onto the device)"
        );
    }

    #[test]
    fn closed_mode_thinks_the_recorded_gap_after_each_completion() {
        // context 0: requests at 0 and 5 ms; context 1 first appears at 1 ms
        let mut f = feed("0 0 0 8 1\n1 1 100 8 1\n5 0 8 8 1\n", Some(Mode::Closed), 16);
        f.advance(0).unwrap();
        assert_eq!(f.ready, vec![(0, 0)]);
        f.ready.clear();
        assert_eq!(f.wake_at(), Some(1_000_000));
        f.issue(0, 0).unwrap();
        assert_eq!(f.arrivals.pop_front().map(|r| r.sector), Some(0));
        // completes at 2 ms: its next record is read ahead past context 1's
        f.completed(0, 2_000_000).unwrap();
        assert_eq!(f.ready, vec![(1, 2_000_000), (0, 2_000_000 + HOST_OVERHEAD.0 + 5_000_000)]);
        assert_eq!(f.stats().peak_buffered, 2);
    }

    #[test]
    fn closed_mode_window_bounds_the_read_ahead() {
        // context 0's second record lies behind three of context 1's; a window of 2
        let t = "0 0 0 8 1\n0 1 100 8 1\n0 1 108 8 1\n0 1 116 8 1\n0 0 8 8 1\n";
        let mut f = feed(t, Some(Mode::Closed), 2);
        f.advance(0).unwrap();
        assert_eq!(f.ready, vec![(0, 0), (1, 0)]);
        f.ready.clear();
        f.issue(0, 0).unwrap();
        f.issue(1, 0).unwrap();
        f.arrivals.clear();
        // buffered now: 1's 2nd (and 3rd, read when the window had room)
        f.completed(0, 1000).unwrap();
        assert!(f.ready.is_empty(), "context 0 waits for the window");
        f.completed(1, 2000).unwrap();
        assert_eq!(f.ready, vec![(1, 2000 + HOST_OVERHEAD.0)]);
        f.ready.clear();
        // taking 1's second record makes room: context 0's record is read, late
        f.issue(1, 30_000).unwrap();
        assert_eq!(f.ready, vec![(0, 30_000)]);
        let s = f.stats();
        assert_eq!(s.window_stalls, 1);
        assert_eq!(s.window_stall_ns, 30_000 - 1000 - HOST_OVERHEAD.0);
        assert!(s.peak_buffered <= 2);
    }
}

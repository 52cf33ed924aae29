//! The drive as the host sees it: a command queue with the drive's own scheduler in front
//! of the mechanics ([`Hdd`]), and a write cache that is either write-through or write-back.
//!
//! ## Command queueing (seeds/002 Section 6.1, seeds/000 Section 3.2)
//! The host may have up to `queue_depth` commands outstanding (1-64: SATA NCQ allows 32,
//! SCSI TCQ 64, [`NCQ_DEPTH`], [`TCQ_DEPTH`]). The drive serves them one at a time and,
//! when one finishes, starts the next itself, without a host round trip. Which one is the
//! drive's choice ([`DriveScheduler`]):
//! - `Fcfs`: arrival order.
//! - `Sptf`: shortest positioning time first, priced with the model's *exact* positioning
//!   time ([`Hdd::estimate`]: controller overhead + seek or head switch + write settle +
//!   rotational latency from the spindle's angle at that instant). Cache hits and reads the
//!   running read-ahead serves go first; ties go to the oldest command. 002 Section 6.1:
//!   "\[the disks\] implement variants of the Shortest Positioning Time First algorithms";
//!   positioning time "is only accurately predicted at the disk drive itself".
//!   No aging: a drive's SPTF can starve a far request while near ones keep arriving,
//!   which is why 002 says hosts keep the depth low (default 4) and leave deadlines to the
//!   device-driver scheduler.
//!
//! With `queue_depth == 1` there is never a choice: the drive is exactly [`Hdd::access`]
//! on an idle drive, one command after another (a test checks this on random sequences).
//! What the host should assume about the head with a deeper queue (000 Section 3.2: the
//! end of the request last put in the queue) is the simulator's business, not the drive's.
//!
//! ## Write caching (seeds/002 Section 6.2)
//! - [`WriteCache::Through`]: a write completes when its last sector is on the media, as
//!   [`Hdd::access`] models it (002's measurements, and every result before this module).
//! - [`WriteCache::Back`]: a write completes once its data is in the buffer (controller
//!   write overhead + bus transfer, [`Hdd::serve_from_buffer`]); "from the host perspective
//!   the write service time is equal to the disk cache hit time". The dirty data is
//!   destaged later, whenever the arm has nothing better to do: no queued command needs it
//!   (commands always have the arm first). Destaging does not hold up the interface: while
//!   the arm destages, the drive keeps absorbing writes and answering reads of dirty data
//!   (the buffer and the arm work in parallel); a command that needs the arm waits for the
//!   destage in progress to finish (a destage is never preempted). The drive picks what to
//!   destage by SPTF among the dirty extents ([`Hdd::estimate_destage`]); contiguous and
//!   overlapping dirty ranges are coalesced into one extent, and a rewrite of dirty data
//!   replaces it (each written sector reaches the media once, unless it is overwritten
//!   first). One destage writes at most [`DESTAGE_MAX_SECTORS`] from the start of its
//!   extent, so a long sequential run is written as back-to-back pieces and a read never
//!   waits behind more than one piece.
//!
//!   Reads entirely inside dirty (or being destaged) data are served from the buffer like
//!   hits; other reads go to the media through the read cache.
//!
//!   The cache is bounded twice: by *room*, `write_cache_sectors` of dirty data (default
//!   [`WRITE_CACHE_SHARE_PERCENT`] of the buffer, `segments x segment_sectors` of the
//!   model's [`crate::CacheSpec`]), and by *entries*: queued commands and dirty extents
//!   share the drive's table of [`BUFFER_ENTRIES`] (002 Section 6.2: with write-back "the
//!   effective disk queue is longer than what disk advertises ... \[it\] reaches the physical
//!   maximum allowable queue of 64 ... If the buffer queue at the disk is full, the disk
//!   ... can not accept more requests"). When either bound is reached the drive accepts no
//!   command at all (reads included) until a destage frees room: the device driver holds
//!   the requests longer, the effect 002 blames for write-back losing at deep queues. A
//!   write that does not fit waits inside the drive for a destage; a write larger than
//!   the whole cache is written through.
//!
//! Simplifications: the write cache is accounted apart from the read-ahead segments (the
//! read cache does not shrink while dirty data is held); a read-cache hit still waits for
//! the arm (it is served through [`Hdd::access`]); the bus is never contended between a
//! destage and a transfer to the host.
//!
//! ## Flushing the cache
//! [`Drive::flush`] is ATA's FLUSH CACHE (SCSI's SYNCHRONIZE CACHE): a non-queued command.
//! From the moment it arrives the drive accepts no other command; it finishes the commands
//! it holds, destages every dirty sector (back to back, by its usual SPTF choice among the
//! dirty extents), and then completes the flush, which [`Drive::poll`] returns as a
//! [`Completion`] with the flush's tag. On a write-through drive, or a clean one, a flush
//! completes as soon as the commands before it have.
//!
//! ## Driving it
//! `submit` a command when [`Drive::can_accept`]; call [`Drive::poll`] at
//! [`Drive::next_event`] (a command finishing or a destage ending): it returns the finished
//! command, if any, and starts the next piece of work. Completions come one at a time in
//! completion order. Time only comes in as arguments; nothing allocates after construction
//! (the queue and the dirty-extent table are sized by their bounds).

use headway_sched::{Dir, Duration, Time};

use crate::hdd::{Access, Hdd};

/// Deepest queue a host may configure (SCSI TCQ).
pub const MAX_QUEUE_DEPTH: u32 = 64;
/// SATA Native Command Queueing: 32 outstanding commands.
pub const NCQ_DEPTH: u32 = 32;
/// SCSI Tagged Command Queueing as the disks of 002 Table 3 implement it: 64.
pub const TCQ_DEPTH: u32 = 64;
/// Entries of the drive's request table, shared by queued commands and dirty write-back
/// extents (002 Section 6.2: "the physical maximum allowable queue of 64").
pub const BUFFER_ENTRIES: usize = 64;
/// Default write-back capacity, percent of the buffer (`segments x segment_sectors`).
/// A documented estimate: drives do not publish how much of the buffer writes may fill;
/// half leaves the other half to read-ahead. For small random writes the entry bound
/// ([`BUFFER_ENTRIES`]) binds long before this one.
pub const WRITE_CACHE_SHARE_PERCENT: u64 = 50;
/// Most sectors one destage writes (512 KiB, Linux's default `max_sectors_kb`): the
/// longest a command that needs the arm can wait behind a destage is one such piece.
pub const DESTAGE_MAX_SECTORS: u64 = 1024;

/// How the drive orders its queue.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum DriveScheduler {
    /// First come, first served.
    Fcfs,
    /// Shortest positioning time first, with the model's exact positioning time; the
    /// default because drives reorder that way (002 Section 6.1). At depth 1 the choice
    /// does not matter.
    #[default]
    Sptf,
}

impl std::str::FromStr for DriveScheduler {
    type Err = headway_sched::BadChoice;
    /// `fcfs` or `sptf`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "fcfs" => Ok(DriveScheduler::Fcfs),
            "sptf" => Ok(DriveScheduler::Sptf),
            _ => Err(headway_sched::BadChoice::new("drive scheduler", s, "fcfs or sptf")),
        }
    }
}

impl DriveScheduler {
    pub fn name(self) -> &'static str {
        match self {
            DriveScheduler::Fcfs => "fcfs",
            DriveScheduler::Sptf => "sptf",
        }
    }
}

/// When the drive reports a write complete.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum WriteCache {
    /// When the data is on the media. The default: it is what the papers measured (002:
    /// "All our previous results in this paper are generated with write-through disk
    /// caches") and what every earlier headway result and test assumes.
    #[default]
    Through,
    /// When the data is in the drive's buffer; destaged later (module docs).
    Back,
}

impl std::str::FromStr for WriteCache {
    type Err = headway_sched::BadChoice;
    /// `back` or `through`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "back" => Ok(WriteCache::Back),
            "through" => Ok(WriteCache::Through),
            _ => Err(headway_sched::BadChoice::new("write-cache policy", s, "back or through")),
        }
    }
}

impl WriteCache {
    pub fn name(self) -> &'static str {
        match self {
            WriteCache::Back => "back",
            WriteCache::Through => "through",
        }
    }
}

/// How a [`Drive`] is set up. The default is today's drive: depth 1, write-through.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DriveConfig {
    /// Commands the host may have outstanding, 1..=[`MAX_QUEUE_DEPTH`].
    pub queue_depth: u32,
    pub scheduler: DriveScheduler,
    pub write_cache: WriteCache,
    /// Write-back room in sectors; `None`: [`WRITE_CACHE_SHARE_PERCENT`] of the buffer.
    pub write_cache_sectors: Option<u64>,
}

impl Default for DriveConfig {
    fn default() -> Self {
        DriveConfig {
            queue_depth: 1,
            scheduler: DriveScheduler::default(),
            write_cache: WriteCache::default(),
            write_cache_sectors: None,
        }
    }
}

/// Why a drive cannot be set up so.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DriveError {
    /// The queue depth is outside 1..=64.
    #[error("queue depth {0} is outside 1..={MAX_QUEUE_DEPTH}")]
    QueueDepth(u32),
    /// Write-back asked of a model without a buffer, or with a zero-sector write cache.
    #[error("write-back caching needs a write cache, and drive model `{model}` has none (no buffer segments, or 0 sectors asked)")]
    NoWriteCache { model: String },
}

/// One command as the host sends it. `tag` is the host's name for it (NCQ's tag).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Cmd {
    pub tag: u64,
    /// First 512-byte sector.
    pub sector: u64,
    /// Sectors, >= 1.
    pub len: u32,
    pub dir: Dir,
}

/// The drive refused a command: its queue or its write cache is full.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the drive accepts no command now (queue or write cache full)")]
pub struct Full;

/// A finished command.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub tag: u64,
    /// When the drive began working on it (it waited in the queue before).
    pub started: Time,
    /// When it completed (data at the host, or for a write on the media or in the cache).
    pub done: Time,
    /// Cylinders the arm moved for it.
    pub seek_cylinders: u32,
    /// When it seeked: sectors from the end of the previous media operation to its start.
    pub seek_sectors: u64,
    /// Seek + settle + rotational latency (controller overhead excluded), as in [`Access`].
    pub positioning: Duration,
    /// Served without the media: read cache, dirty data, or absorbed by write-back.
    pub cache_hit: bool,
}

impl Completion {
    /// The drive's own time on this command (media, transfers, overheads), queueing
    /// excluded.
    pub fn service(&self) -> Duration {
        self.done - self.started
    }
}

/// Counters since the drive was built.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DriveStats {
    /// Commands started.
    pub commands: u64,
    /// Of those, served without the media (see [`Completion::cache_hit`]).
    pub cache_hits: u64,
    /// Writes absorbed by the write-back cache.
    pub absorbed_writes: u64,
    /// Destage operations, and the sectors they wrote.
    pub destages: u64,
    pub destaged_sectors: u64,
    /// Destages that moved the arm across cylinders, and their distances in sectors.
    pub destage_seeks: u64,
    pub destage_seek_sectors: u64,
}

/// Where a queued command would be served from now.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Route {
    /// From the buffer, without the arm (write-back absorbs it, or a read of dirty data).
    Buffer,
    /// Needs the arm (media read, write-through).
    Arm,
    /// A write-back write waiting for room.
    Room,
}

#[cfg(test)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum LogEv {
    Absorb,
    WriteThrough,
    Destage,
}

#[derive(Copy, Clone, Debug)]
struct Serving {
    tag: u64,
    started: Time,
    acc: Access,
    seek_sectors: u64,
    /// Holds the arm (else only the controller and bus).
    arm: bool,
}

/// Write-back state. Invariant: `dirty` is sorted, its extents are disjoint and not
/// adjacent, and `pending` is the sum of their lengths; `inflight` (being destaged) is
/// apart from them and still occupies room until its destage ends.
#[derive(Clone, Debug)]
struct WriteBack {
    cap: u64,
    dirty: Vec<(u64, u64)>,
    pending: u64,
    inflight: Option<(u64, u64)>,
    destage_done: Time,
}

impl WriteBack {
    fn used(&self) -> u64 {
        self.pending + self.inflight.map_or(0, |(s, e)| e - s)
    }
    fn entries(&self) -> usize {
        self.dirty.len() + self.inflight.is_some() as usize
    }
    /// First extent ending at or after `s` (so it overlaps or touches `s..`).
    fn first_from(&self, s: u64) -> usize {
        self.dirty.partition_point(|x| x.1 < s)
    }
    /// Sectors of `s..e` not already dirty (the room a write of it needs).
    fn new_sectors(&self, s: u64, e: u64) -> u64 {
        let mut have = 0;
        for &(a, b) in &self.dirty[self.first_from(s)..] {
            if a >= e {
                break;
            }
            have += b.min(e) - a.max(s);
        }
        (e - s) - have
    }
    /// Is all of `s..e` in the buffer (dirty or being destaged)?
    fn holds(&self, s: u64, e: u64) -> bool {
        if let Some((a, b)) = self.inflight {
            if a <= s && e <= b {
                return true;
            }
        }
        let i = self.first_from(s);
        i < self.dirty.len() && self.dirty[i].0 <= s && e <= self.dirty[i].1
    }
    /// Make `s..e` dirty, coalescing with what it overlaps or touches.
    fn insert(&mut self, s: u64, e: u64) {
        let i = self.first_from(s);
        let j = i + self.dirty[i..].partition_point(|x| x.0 <= e);
        if i == j {
            self.dirty.insert(i, (s, e));
            self.pending += e - s;
            return;
        }
        let (ns, ne) = (s.min(self.dirty[i].0), e.max(self.dirty[j - 1].1));
        let old: u64 = self.dirty[i..j].iter().map(|x| x.1 - x.0).sum();
        self.dirty[i] = (ns, ne);
        self.dirty.drain(i + 1..j);
        self.pending = self.pending - old + (ne - ns);
    }
    /// `s..e` is written through: the dirty copy of it is stale, forget it.
    fn remove(&mut self, s: u64, e: u64) {
        let mut i = self.first_from(s);
        while i < self.dirty.len() && self.dirty[i].0 < e {
            let (a, b) = self.dirty[i];
            if b <= s {
                i += 1;
                continue;
            }
            self.pending -= b.min(e) - a.max(s);
            match (a < s, b > e) {
                (true, true) => {
                    self.dirty[i] = (a, s);
                    self.dirty.insert(i + 1, (e, b));
                    return;
                }
                (true, false) => {
                    self.dirty[i] = (a, s);
                    i += 1;
                }
                (false, true) => {
                    self.dirty[i] = (e, b);
                    return;
                }
                (false, false) => {
                    self.dirty.remove(i);
                }
            }
        }
    }
}

/// A drive with a command queue and a write cache. See the module docs.
#[derive(Clone, Debug)]
pub struct Drive {
    hdd: Hdd,
    cfg: DriveConfig,
    /// Waiting commands in arrival order (the one in service is apart).
    queue: Vec<Cmd>,
    serving: Option<Serving>,
    wb: Option<WriteBack>,
    stats: DriveStats,
    /// Busy time (union of command service and destage intervals) up to `busy_mark`.
    busy_ns: u64,
    busy_mark: u64,
    /// A flush in progress: its tag and when it arrived; `flush_ready` once the drive is
    /// idle and clean (it completes at the next [`Drive::poll`]).
    flush: Option<(u64, Time)>,
    flush_ready: Option<Time>,
    /// What reached the cache and the media, in order, for the tests.
    #[cfg(test)]
    log: Vec<(u64, u64, LogEv)>,
}

impl Drive {
    /// A drive over `hdd`, idle, queue and cache empty.
    pub fn new(hdd: Hdd, cfg: DriveConfig) -> Result<Drive, DriveError> {
        if !(1..=MAX_QUEUE_DEPTH).contains(&cfg.queue_depth) {
            return Err(DriveError::QueueDepth(cfg.queue_depth));
        }
        let wb = match cfg.write_cache {
            WriteCache::Through => None,
            WriteCache::Back => {
                let c = hdd.spec().cache;
                let buffer = if c.enabled() { c.segments as u64 * c.segment_sectors as u64 } else { 0 };
                let cap = cfg.write_cache_sectors.unwrap_or(buffer * WRITE_CACHE_SHARE_PERCENT / 100);
                if cap == 0 {
                    return Err(DriveError::NoWriteCache { model: hdd.spec().name.clone() });
                }
                Some(WriteBack {
                    cap,
                    dirty: Vec::with_capacity(BUFFER_ENTRIES + 1),
                    pending: 0,
                    inflight: None,
                    destage_done: Time::ZERO,
                })
            }
        };
        Ok(Drive {
            hdd,
            queue: Vec::with_capacity(cfg.queue_depth as usize),
            cfg,
            serving: None,
            wb,
            stats: DriveStats::default(),
            busy_ns: 0,
            busy_mark: 0,
            flush: None,
            flush_ready: None,
            #[cfg(test)]
            log: Vec::new(),
        })
    }

    pub fn hdd(&self) -> &Hdd {
        &self.hdd
    }

    pub fn config(&self) -> &DriveConfig {
        &self.cfg
    }

    pub fn stats(&self) -> &DriveStats {
        &self.stats
    }

    /// Commands in the drive: queued plus the one in service.
    pub fn in_queue(&self) -> usize {
        self.queue.len() + self.serving.is_some() as usize
    }

    /// Sectors of dirty data held (write-back; 0 for write-through).
    pub fn dirty_sectors(&self) -> u64 {
        self.wb.as_ref().map_or(0, WriteBack::used)
    }

    /// Would the drive take a command now? False when `queue_depth` commands are
    /// outstanding, or when the write-back cache is full ([`Drive::write_cache_full`]).
    #[inline]
    pub fn can_accept(&self) -> bool {
        if self.flush.is_some() {
            return false;
        }
        let n = self.in_queue();
        if n >= self.cfg.queue_depth as usize {
            return false;
        }
        match &self.wb {
            None => true,
            Some(wb) => n + wb.entries() < BUFFER_ENTRIES && wb.used() < wb.cap,
        }
    }

    /// The queue has room but the write-back cache is full: the drive refuses commands
    /// until a destage frees room (002 Section 6.2).
    pub fn write_cache_full(&self) -> bool {
        self.flush.is_none() && self.in_queue() < self.cfg.queue_depth as usize && !self.can_accept()
    }

    /// A flush is in progress (the drive takes no command until it completes).
    pub fn flushing(&self) -> bool {
        self.flush.is_some()
    }

    /// Start a cache flush at `now` (see the module docs); `tag` names its completion.
    /// Refused with [`Full`] while another flush is in progress.
    pub fn flush(&mut self, now: Time, tag: u64) -> Result<(), Full> {
        if self.flush.is_some() {
            return Err(Full);
        }
        debug_assert!(self.next_event().is_none_or(|t| t >= now), "poll the drive before flushing at {now}");
        self.flush = Some((tag, now));
        self.check_flush(now);
        Ok(())
    }

    /// A flush in progress is ready once nothing is queued, served or dirty.
    fn check_flush(&mut self, now: Time) {
        if self.flush.is_some()
            && self.flush_ready.is_none()
            && self.serving.is_none()
            && self.queue.is_empty()
            && self.wb.as_ref().is_none_or(|wb| wb.used() == 0)
        {
            self.flush_ready = Some(now);
        }
    }

    /// When the drive next changes state by itself (a command finishes, a destage ends),
    /// if it has anything to do. Call [`Drive::poll`] then.
    #[inline]
    pub fn next_event(&self) -> Option<Time> {
        let cmd = self.serving.map(|s| s.acc.done);
        let destage = self.wb.as_ref().and_then(|wb| wb.inflight.map(|_| wb.destage_done));
        let next = match (cmd, destage) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (next, self.flush_ready) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Queue a command at `now` (non-decreasing across calls). Refused with [`Full`] when
    /// [`Drive::can_accept`] is false. An idle drive starts on it at once.
    pub fn submit(&mut self, now: Time, cmd: Cmd) -> Result<(), Full> {
        if !self.can_accept() {
            return Err(Full);
        }
        debug_assert!(cmd.len >= 1, "empty command");
        debug_assert!(
            self.next_event().is_none_or(|t| t >= now),
            "poll the drive before submitting at {now}"
        );
        if self.serving.is_none() && self.queue.is_empty() && self.wb.is_none() {
            // An idle write-through drive: nothing to choose from (the depth-1 hot path).
            self.start(now, cmd, Route::Arm);
            return Ok(());
        }
        self.queue.push(cmd);
        // A command in service keeps the rest waiting, and a new command never makes a
        // destage possible that was not before.
        if self.serving.is_none() {
            self.kick(now);
        }
        Ok(())
    }

    /// When the command in service lets the bus go and when it asks for it again
    /// ([`Hdd::disconnect`]: the drive's last access is the command in service when it takes
    /// one command at a time and writes through); `None` without one, or when it holds the
    /// bus throughout.
    pub fn serving_disconnect(&self) -> Option<(Time, Time)> {
        self.serving.and(self.hdd.disconnect())
    }

    /// Bring the drive to `now` (call it at [`Drive::next_event`]): a destage that ended
    /// frees its room, and the command that finished, if any, is returned. Then the drive
    /// starts its next piece of work.
    pub fn poll(&mut self, now: Time) -> Option<Completion> {
        if let Some(wb) = &mut self.wb {
            if wb.inflight.is_some() && wb.destage_done <= now {
                wb.inflight = None;
            }
        }
        let mut out = None;
        // (at most one command completes per call: the next starts now and takes time)
        if let Some(s) = self.serving {
            if s.acc.done <= now {
                self.serving = None;
                out = Some(Completion {
                    tag: s.tag,
                    started: s.started,
                    done: s.acc.done,
                    seek_cylinders: s.acc.seek_cylinders,
                    seek_sectors: s.seek_sectors,
                    positioning: s.acc.positioning,
                    cache_hit: s.acc.cache_hit,
                });
            }
        }
        if !self.queue.is_empty() || self.wb.is_some() {
            self.kick(now);
        }
        self.check_flush(now);
        if out.is_none() {
            if let (Some((tag, started)), Some(ready)) = (self.flush, self.flush_ready) {
                if ready <= now {
                    (self.flush, self.flush_ready) = (None, None);
                    out = Some(Completion {
                        tag,
                        started,
                        done: ready,
                        seek_cylinders: 0,
                        seek_sectors: 0,
                        positioning: Duration::ZERO,
                        cache_hit: false,
                    });
                }
            }
        }
        out
    }

    /// Busy time (a command in service or a destage running) up to `at`, which must not
    /// precede the last event the drive saw.
    pub fn busy_time(&self, at: Time) -> Duration {
        Duration(self.busy_ns - self.busy_mark.saturating_sub(at.0))
    }

    // ---- internals ----

    fn account_busy(&mut self, from: Time, to: Time) {
        if to.0 > self.busy_mark {
            self.busy_ns += to.0 - from.0.max(self.busy_mark);
            self.busy_mark = to.0;
        }
    }

    #[inline]
    fn route(&self, cmd: &Cmd) -> Route {
        let Some(wb) = &self.wb else { return Route::Arm };
        let (s, e) = (cmd.sector, cmd.sector + cmd.len as u64);
        match cmd.dir {
            Dir::Read if wb.holds(s, e) => Route::Buffer,
            Dir::Read => Route::Arm,
            Dir::Write if e - s > wb.cap => Route::Arm,
            Dir::Write if wb.used() + wb.new_sectors(s, e) <= wb.cap => Route::Buffer,
            Dir::Write => Route::Room,
        }
    }

    /// Start what can start at `now`: a command if none is in service, then a destage if
    /// the arm is free and no command is waiting for it.
    fn kick(&mut self, now: Time) {
        if self.serving.is_none() && !self.queue.is_empty() {
            let arm_free = self.wb.as_ref().is_none_or(|wb| wb.inflight.is_none());
            if let Some((i, route)) = self.choose(now, arm_free) {
                let cmd = self.queue.remove(i);
                self.start(now, cmd, route);
            }
        }
        if self.wb.is_some() {
            self.maybe_destage(now);
        }
    }

    /// The command to serve next, if one can start now.
    fn choose(&self, now: Time, arm_free: bool) -> Option<(usize, Route)> {
        if self.queue.len() == 1 || self.cfg.scheduler == DriveScheduler::Fcfs {
            return match self.route(&self.queue[0]) {
                Route::Arm if !arm_free => None,
                Route::Room => None,
                r => Some((0, r)),
            };
        }
        // SPTF: what the buffer serves costs no positioning; the oldest of those first.
        let mut arm_cands = 0;
        for (i, c) in self.queue.iter().enumerate() {
            match self.route(c) {
                Route::Buffer => return Some((i, Route::Buffer)),
                Route::Arm => arm_cands += 1,
                Route::Room => {}
            }
        }
        if !arm_free || arm_cands == 0 {
            return None;
        }
        let arm = self.hdd.arm(now);
        let mut best: Option<(usize, (bool, Duration))> = None;
        for (i, c) in self.queue.iter().enumerate() {
            if arm_cands < self.queue.len() && self.route(c) != Route::Arm {
                continue;
            }
            let est = self.hdd.estimate(&arm, c.sector, c.len, c.dir);
            let key = (!est.cache_hit, est.positioning);
            if best.is_none_or(|(_, k)| key < k) {
                best = Some((i, key));
            }
        }
        best.map(|(i, _)| (i, Route::Arm))
    }

    #[inline]
    fn start(&mut self, now: Time, cmd: Cmd, route: Route) {
        let (acc, seek_sectors, arm) = match route {
            Route::Buffer => {
                if cmd.dir == Dir::Write {
                    let wb = self.wb.as_mut().expect("buffer-served writes are write-back");
                    wb.insert(cmd.sector, cmd.sector + cmd.len as u64);
                    self.stats.absorbed_writes += 1;
                    #[cfg(test)]
                    self.log.push((cmd.sector, cmd.sector + cmd.len as u64, LogEv::Absorb));
                }
                (self.hdd.serve_from_buffer(now, cmd.len, cmd.dir), 0, false)
            }
            Route::Arm => {
                if cmd.dir == Dir::Write {
                    if let Some(wb) = &mut self.wb {
                        wb.remove(cmd.sector, cmd.sector + cmd.len as u64);
                    }
                    #[cfg(test)]
                    self.log.push((cmd.sector, cmd.sector + cmd.len as u64, LogEv::WriteThrough));
                }
                let from = self.hdd.head_sector();
                let acc = self.hdd.access(now, cmd.sector, cmd.len, cmd.dir);
                let dist = if acc.seek_cylinders > 0 { cmd.sector.abs_diff(from) } else { 0 };
                (acc, dist, true)
            }
            Route::Room => unreachable!("a write waiting for room is not started"),
        };
        self.stats.commands += 1;
        self.stats.cache_hits += acc.cache_hit as u64;
        self.account_busy(now, acc.done);
        self.serving = Some(Serving { tag: cmd.tag, started: now, acc, seek_sectors, arm });
    }

    /// Destage the SPTF-nearest dirty extent if the arm is free and nothing queued needs
    /// it (for FCFS: the next command in line).
    fn maybe_destage(&mut self, now: Time) {
        let Some(wb) = &self.wb else { return };
        if wb.inflight.is_some() || wb.dirty.is_empty() || self.serving.is_some_and(|s| s.arm) {
            return;
        }
        let arm_wanted = match self.cfg.scheduler {
            DriveScheduler::Fcfs => self.queue.first().is_some_and(|c| self.route(c) == Route::Arm),
            DriveScheduler::Sptf => self.queue.iter().any(|c| self.route(c) == Route::Arm),
        };
        if arm_wanted {
            return;
        }
        let arm = self.hdd.arm(now);
        let mut best = (0, Duration(u64::MAX));
        if wb.dirty.len() > 1 {
            for (i, &(s, _)) in wb.dirty.iter().enumerate() {
                let t = self.hdd.estimate_destage(&arm, s);
                if t < best.1 {
                    best = (i, t);
                }
            }
        }
        let wb = self.wb.as_mut().expect("checked above");
        let (s, e) = wb.dirty[best.0];
        let piece = (e - s).min(DESTAGE_MAX_SECTORS);
        if piece == e - s {
            wb.dirty.remove(best.0);
        } else {
            wb.dirty[best.0].0 = s + piece;
        }
        wb.pending -= piece;
        wb.inflight = Some((s, s + piece));
        let from = self.hdd.head_sector();
        let acc = self.hdd.destage(now, s, piece as u32);
        let wb = self.wb.as_mut().expect("checked above");
        wb.destage_done = acc.done;
        self.stats.destages += 1;
        self.stats.destaged_sectors += piece;
        if acc.seek_cylinders > 0 {
            self.stats.destage_seeks += 1;
            self.stats.destage_seek_sectors += s.abs_diff(from);
        }
        #[cfg(test)]
        self.log.push((s, s + piece, LogEv::Destage));
        self.account_busy(now, acc.done);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin;

    fn wd() -> Hdd {
        Hdd::new(builtin("wd5000aaks").unwrap())
    }

    fn wd_nocache() -> Hdd {
        Hdd::new(builtin("wd5000aaks").unwrap().without_cache())
    }

    fn cfg(depth: u32, scheduler: DriveScheduler, write_cache: WriteCache) -> DriveConfig {
        DriveConfig { queue_depth: depth, scheduler, write_cache, write_cache_sectors: None }
    }

    /// Deterministic pseudo-random numbers (tests draw no real randomness).
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (((self.0 >> 11) as u128 * n as u128) >> 53) as u64
        }
    }

    /// Poll at every event until the drive has nothing left to do; completions in order.
    fn drain(d: &mut Drive) -> Vec<Completion> {
        let mut out = Vec::new();
        while let Some(t) = d.next_event() {
            out.extend(d.poll(t));
        }
        out
    }

    /// A host that keeps the drive full from `cmds` (all there at time 0), polling at each
    /// event: returns completions in order.
    fn closed_loop(d: &mut Drive, cmds: &[Cmd]) -> Vec<Completion> {
        let mut out = Vec::new();
        let mut next = 0;
        let mut now = Time::ZERO;
        loop {
            while next < cmds.len() && d.can_accept() {
                d.submit(now, cmds[next]).unwrap();
                next += 1;
            }
            let Some(t) = d.next_event() else { break };
            now = t;
            out.extend(d.poll(t));
        }
        assert_eq!(next, cmds.len(), "every command submitted");
        out
    }

    fn random_cmds(n: u64, span: u64, lens: u64, write_every: u64, seed: u64) -> Vec<Cmd> {
        let mut rng = Lcg(seed);
        (0..n)
            .map(|i| {
                let len = 1 + rng.below(lens) as u32;
                let dir = if write_every > 0 && i % write_every == 0 { Dir::Write } else { Dir::Read };
                Cmd { tag: i, sector: rng.below(span - 64), len, dir }
            })
            .collect()
    }

    #[test]
    fn depth_one_is_hdd_access_exactly() {
        for sched in [DriveScheduler::Fcfs, DriveScheduler::Sptf] {
            let mut rng = Lcg(11);
            let mut h = wd();
            let mut d = Drive::new(wd(), cfg(1, sched, WriteCache::Through)).unwrap();
            let cap = h.capacity();
            let mut t = Time::ZERO;
            for i in 0..20_000u64 {
                // random, sequential and re-reads, with and without gaps
                let sector = match i % 4 {
                    0 => rng.below(cap - 128),
                    1 => h.head_sector().min(cap - 128),
                    2 => h.head_sector().saturating_sub(rng.below(64)),
                    _ => rng.below(cap / 100),
                };
                let len = 1 + rng.below(128) as u32;
                let dir = if i % 7 == 0 { Dir::Write } else { Dir::Read };
                let from = h.head_sector();
                let a = h.access(t, sector, len, dir);
                assert!(d.can_accept());
                d.submit(t, Cmd { tag: i, sector, len, dir }).unwrap();
                assert!(!d.can_accept(), "depth 1 holds one command");
                assert_eq!(d.next_event(), Some(a.done));
                let c = d.poll(a.done).expect("completes when access says");
                assert_eq!((c.tag, c.started, c.done), (i, t, a.done));
                assert_eq!(
                    (c.seek_cylinders, c.positioning, c.cache_hit),
                    (a.seek_cylinders, a.positioning, a.cache_hit)
                );
                let dist = if a.seek_cylinders > 0 { sector.abs_diff(from) } else { 0 };
                assert_eq!(c.seek_sectors, dist);
                assert_eq!(d.next_event(), None);
                t = a.done + Duration(rng.below(2) * rng.below(5_000_000));
            }
            assert_eq!(d.stats().commands, 20_000);
        }
    }

    #[test]
    fn estimates_are_the_positioning_access_pays() {
        let mut h = wd();
        let mut rng = Lcg(5);
        let cap = h.capacity();
        let mut t = Time::ZERO;
        let mut last = Dir::Read;
        let o = h.spec().overheads;
        let (mut hits, mut misses) = (0, 0);
        for i in 0..20_000u64 {
            let sector = if i % 3 == 0 { h.head_sector().min(cap - 64) } else { rng.below(cap - 64) };
            let len = 1 + rng.below(64) as u32;
            let dir = if i % 5 == 0 { Dir::Write } else { Dir::Read };
            let est = h.estimate(&h.arm(t), sector, len, dir);
            let a = h.access(t, sector, len, dir);
            assert_eq!(est.cache_hit, a.cache_hit, "request {i}");
            if a.cache_hit {
                hits += 1;
                assert_eq!(est.positioning, Duration::ZERO);
            } else if est.positioning > Duration::ZERO {
                misses += 1;
                let over = match (dir, last) {
                    (Dir::Read, Dir::Read) => o.read_miss_after_read,
                    (Dir::Read, Dir::Write) => o.read_miss_after_write,
                    (Dir::Write, Dir::Read) => o.write_after_read,
                    (Dir::Write, Dir::Write) => o.write_after_write,
                };
                assert_eq!(est.positioning, over + a.positioning, "request {i}");
            }
            last = dir;
            t = a.done + Duration(rng.below(3_000_000));
        }
        assert!(hits > 1000 && misses > 10_000, "hits {hits} misses {misses}");
        // destages too
        let mut h = Hdd::new(builtin("wd5000aaks").unwrap());
        let mut t = Time(123_456);
        for _ in 0..2000 {
            let s = rng.below(cap - 64);
            let est = h.estimate_destage(&h.arm(t), s);
            let a = h.destage(t, s, 8);
            assert_eq!(est, a.positioning);
            t = a.done + Duration(rng.below(1_000_000));
        }
    }

    #[test]
    fn sptf_in_the_drive_shortens_positioning() {
        let cmds = random_cmds(4000, wd().capacity(), 8, 0, 3);
        let run = |depth, sched| {
            let mut d = Drive::new(wd_nocache(), cfg(depth, sched, WriteCache::Through)).unwrap();
            let c = closed_loop(&mut d, &cmds);
            assert_eq!(c.len(), cmds.len());
            let mean_pos = c.iter().map(|c| c.positioning.0).sum::<u64>() as f64 / c.len() as f64;
            (c.last().unwrap().done.0 as f64, mean_pos)
        };
        let (fcfs1, pos1) = run(1, DriveScheduler::Fcfs);
        let (fcfs32, _) = run(32, DriveScheduler::Fcfs);
        let (sptf32, pos32) = run(32, DriveScheduler::Sptf);
        let (sptf4, _) = run(4, DriveScheduler::Sptf);
        // FCFS gains nothing from a queue; SPTF does, more with a deeper queue
        assert!((fcfs32 / fcfs1 - 1.0).abs() < 0.01, "fcfs {fcfs32} vs {fcfs1}");
        assert!(sptf4 < 0.85 * fcfs1, "sptf@4 {sptf4} vs fcfs {fcfs1}");
        assert!(sptf32 < 0.5 * fcfs1, "sptf@32 {sptf32} vs fcfs {fcfs1}");
        assert!(sptf32 < sptf4);
        assert!(pos32 < 0.4 * pos1, "positioning {pos32} vs {pos1}");
    }

    /// Each SPTF pick is the queued command with the least estimated positioning.
    #[test]
    fn sptf_picks_the_least_positioning_time() {
        let mut d = Drive::new(wd_nocache(), cfg(8, DriveScheduler::Sptf, WriteCache::Through)).unwrap();
        let cmds = random_cmds(8, d.hdd().capacity(), 8, 3, 9);
        for c in &cmds {
            d.submit(Time::ZERO, *c).unwrap();
        }
        // the first went straight in; check every later pick against the estimates
        let mut left: Vec<Cmd> = cmds[1..].to_vec();
        while let Some(t) = d.next_event() {
            let arm = d.hdd().arm(t);
            let best = left
                .iter()
                .map(|c| (d.hdd().estimate(&arm, c.sector, c.len, c.dir).positioning, c.tag))
                .min()
                .map(|x| x.1);
            d.poll(t).expect("one completion per event");
            let Some(best) = best else { break };
            assert_eq!(d.serving.map(|s| s.tag), Some(best));
            left.retain(|c| c.tag != best);
        }
        assert!(left.is_empty());
    }

    #[test]
    fn a_full_queue_refuses() {
        let mut d = Drive::new(wd(), cfg(4, DriveScheduler::Sptf, WriteCache::Through)).unwrap();
        let cmds = random_cmds(5, d.hdd().capacity(), 8, 0, 1);
        for c in &cmds[..4] {
            assert!(d.can_accept());
            d.submit(Time::ZERO, *c).unwrap();
        }
        assert_eq!(d.in_queue(), 4);
        assert!(!d.can_accept() && !d.write_cache_full());
        assert_eq!(d.submit(Time::ZERO, cmds[4]), Err(Full));
        let t = d.next_event().unwrap();
        let c = d.poll(t).unwrap();
        assert_eq!(c.tag, 0, "the first command started at once");
        assert!(d.can_accept());
        d.submit(t, cmds[4]).unwrap();
        assert_eq!(drain(&mut d).len(), 4);
        assert_eq!(
            Drive::new(wd(), cfg(0, DriveScheduler::Sptf, WriteCache::Through)).unwrap_err(),
            DriveError::QueueDepth(0)
        );
        assert!(Drive::new(wd(), cfg(65, DriveScheduler::Sptf, WriteCache::Through)).is_err());
        assert!(Drive::new(wd_nocache(), cfg(1, DriveScheduler::Sptf, WriteCache::Back)).is_err());
    }

    #[test]
    fn write_back_acks_at_bus_speed_and_destages_later() {
        let mut d = Drive::new(wd(), cfg(1, DriveScheduler::Sptf, WriteCache::Back)).unwrap();
        let o = d.hdd().spec().overheads;
        let bus = d.hdd().spec().bus_per_sector;
        let t0 = Time(1_000_000);
        d.submit(t0, Cmd { tag: 1, sector: 5_000_000, len: 8, dir: Dir::Write }).unwrap();
        // the arm starts destaging at once, in parallel with the acknowledgement
        assert_eq!(d.dirty_sectors(), 8);
        let ack = d.next_event().unwrap();
        assert_eq!(ack - t0, o.write_after_read + Duration(8 * bus.0));
        let c = d.poll(ack).unwrap();
        assert!(c.cache_hit && c.seek_cylinders == 0);
        assert_eq!(d.stats().destages, 1);
        // a read of the data while it is being destaged comes from the buffer
        d.submit(ack, Cmd { tag: 2, sector: 5_000_002, len: 4, dir: Dir::Read }).unwrap();
        let r = d.poll(d.next_event().unwrap()).unwrap();
        assert!(r.cache_hit && r.tag == 2);
        assert_eq!(r.service(), o.read_hit_after_write + Duration(4 * bus.0));
        // the destage ends a seek and some rotation later: the room is free again
        let end = d.next_event().unwrap();
        assert!(end - t0 > Duration::from_millis(2), "a destage is a media write");
        assert!(d.poll(end).is_none());
        assert_eq!((d.dirty_sectors(), d.next_event()), (0, None));
        assert_eq!(d.stats().destaged_sectors, 8);
    }

    #[test]
    fn a_flush_waits_for_every_dirty_sector_and_blocks_commands() {
        let mut d = Drive::new(wd(), cfg(4, DriveScheduler::Sptf, WriteCache::Back)).unwrap();
        let t0 = Time(1_000_000);
        // three writes far apart, absorbed at bus speed
        for (i, sector) in [1_000_000u64, 400_000_000, 900_000_000].into_iter().enumerate() {
            d.submit(t0, Cmd { tag: i as u64, sector, len: 16, dir: Dir::Write }).unwrap();
        }
        let mut now = t0;
        let mut acks = Vec::new();
        while acks.len() < 3 {
            now = d.next_event().unwrap();
            acks.extend(d.poll(now));
        }
        assert!(d.dirty_sectors() > 0, "acknowledged, not yet on the media");
        d.flush(now, 99).unwrap();
        assert!(d.flushing() && !d.can_accept() && !d.write_cache_full());
        assert_eq!(d.flush(now, 100), Err(Full), "one flush at a time");
        let done = drain(&mut d);
        assert_eq!(done.len(), 1);
        let f = done[0];
        assert_eq!((f.tag, f.started), (99, now));
        assert_eq!(d.dirty_sectors(), 0);
        assert_eq!(d.stats().destaged_sectors, 48);
        // three destages with seeks between them: several ms
        assert!(f.done - now > Duration::from_millis(5), "flush took {:?}", f.done - now);
        assert!(!d.flushing() && d.can_accept());
    }

    #[test]
    fn a_flush_completes_after_the_commands_before_it() {
        // write-through: nothing dirty, the flush waits only for the queued reads
        let mut d = Drive::new(wd(), cfg(4, DriveScheduler::Sptf, WriteCache::Through)).unwrap();
        let t0 = Time(0);
        for i in 0..3u64 {
            d.submit(t0, Cmd { tag: i, sector: 100_000_000 * (i + 1), len: 8, dir: Dir::Read }).unwrap();
        }
        d.flush(t0, 7).unwrap();
        let done = drain(&mut d);
        assert_eq!(done.len(), 4);
        assert_eq!(done[3].tag, 7, "the flush completes last");
        assert_eq!(done[3].done, done[2].done, "at once when the last command is done");
        // on an idle, clean drive: at once
        let now = done[3].done;
        d.flush(now, 8).unwrap();
        assert_eq!(d.next_event(), Some(now));
        assert_eq!(d.poll(now).map(|c| (c.tag, c.done)), Some((8, now)));
    }

    /// Replays the drive's log of cache fills and media writes: every sector a write-back
    /// write put in the cache reaches the media exactly once, unless overwritten while
    /// still dirty; nothing reaches the media that was not dirty; nothing stays dirty.
    fn check_conservation(d: &Drive, span: u64) {
        let n = span as usize + 2048;
        let (mut dirty, mut absorbed, mut destaged, mut overwritten) =
            (vec![false; n], vec![0u32; n], vec![0u32; n], vec![0u32; n]);
        for &(s, e, ev) in &d.log {
            for x in s as usize..e as usize {
                match ev {
                    LogEv::Absorb => {
                        absorbed[x] += 1;
                        overwritten[x] += dirty[x] as u32;
                        dirty[x] = true;
                    }
                    LogEv::WriteThrough => {
                        overwritten[x] += dirty[x] as u32;
                        dirty[x] = false;
                    }
                    LogEv::Destage => {
                        assert!(dirty[x], "sector {x} destaged while clean");
                        destaged[x] += 1;
                        dirty[x] = false;
                    }
                }
            }
        }
        for x in 0..n {
            assert!(!dirty[x], "sector {x} never destaged");
            assert_eq!(absorbed[x], destaged[x] + overwritten[x], "sector {x}");
        }
        assert!(absorbed.iter().sum::<u32>() > destaged.iter().sum::<u32>(), "some overwrites happened");
    }

    #[test]
    fn write_back_destages_every_sector_once_or_overwritten() {
        // overlapping random writes of 1..128 sectors over a small region, with reads
        // between, some larger than the cache (written through), at several depths
        for (depth, sched, cap) in [
            (1, DriveScheduler::Fcfs, None),
            (8, DriveScheduler::Sptf, Some(300)),
            (32, DriveScheduler::Sptf, None),
        ] {
            let span = 20_000;
            let mut rng = Lcg(depth as u64);
            let mut cmds = random_cmds(6000, span, 128, 1, 7 + depth as u64);
            for (i, c) in cmds.iter_mut().enumerate() {
                if i % 4 == 3 {
                    c.dir = Dir::Read;
                }
                if i % 97 == 0 {
                    c.len = 400; // larger than 300 sectors: written through
                }
                if i % 5 == 0 {
                    c.sector = rng.below(64);
                }
            }
            let mut d = Drive::new(
                wd(),
                DriveConfig {
                    queue_depth: depth,
                    scheduler: sched,
                    write_cache: WriteCache::Back,
                    write_cache_sectors: cap,
                },
            )
            .unwrap();
            let c = closed_loop(&mut d, &cmds);
            assert_eq!(c.len(), cmds.len());
            let mut tags: Vec<u64> = c.iter().map(|c| c.tag).collect();
            tags.sort_unstable();
            assert!(tags.iter().enumerate().all(|(i, &t)| t == i as u64), "each command completes once");
            assert!(c.windows(2).all(|w| w[0].done <= w[1].done), "completions in time order");
            assert_eq!(d.dirty_sectors(), 0);
            check_conservation(&d, span);
            assert!(d.stats().absorbed_writes > 1000);
        }
    }

    #[test]
    fn a_full_write_cache_blocks_acceptance() {
        // 64-entry table: small scattered writes fill it long before the room runs out
        let mut d = Drive::new(wd(), cfg(32, DriveScheduler::Sptf, WriteCache::Back)).unwrap();
        let cmds = random_cmds(2000, d.hdd().capacity(), 8, 1, 4);
        let (mut now, mut next, mut refused_at) = (Time::ZERO, 0, None);
        while next < cmds.len() {
            while next < cmds.len() && d.can_accept() {
                d.submit(now, cmds[next]).unwrap();
                next += 1;
            }
            if d.write_cache_full() && refused_at.is_none() {
                refused_at = Some(now);
                assert!(d.in_queue() < 32, "the queue is not what refuses");
                assert_eq!(d.submit(now, cmds[next]), Err(Full));
                // only a destage ending lets the next command in
                let t = d.next_event().unwrap();
                let entries_before = d.wb.as_ref().unwrap().entries() + d.in_queue();
                d.poll(t);
                if d.can_accept() {
                    assert!(d.wb.as_ref().unwrap().entries() + d.in_queue() < entries_before);
                }
                now = t;
                continue;
            }
            let Some(t) = d.next_event() else { break };
            now = t;
            d.poll(t);
        }
        assert!(refused_at.is_some(), "the write cache never filled");
        drain(&mut d);
        assert_eq!(d.dirty_sectors(), 0);
        // room as the bound: a 1024-sector cache is full after four 256-sector writes; a
        // write that does not fit waits in the drive's queue for a destage
        let mut d = Drive::new(
            wd(),
            DriveConfig { write_cache_sectors: Some(1024), ..cfg(8, DriveScheduler::Sptf, WriteCache::Back) },
        )
        .unwrap();
        let mut n = 0;
        while d.can_accept() {
            d.submit(Time::ZERO, Cmd { tag: n, sector: n * 100_000, len: 256, dir: Dir::Write }).unwrap();
            n += 1;
            // let the acknowledgements through, but not a destage's end
            while let Some(t) = d.next_event().filter(|&t| t < Time(1_000_000)) {
                d.poll(t);
            }
        }
        assert!(d.write_cache_full());
        assert_eq!((n, d.dirty_sectors(), d.in_queue()), (4, 1024, 0));
        drain(&mut d);
        let mut d = Drive::new(
            wd(),
            DriveConfig { write_cache_sectors: Some(1000), ..cfg(8, DriveScheduler::Sptf, WriteCache::Back) },
        )
        .unwrap();
        for n in 0..8 {
            d.submit(Time::ZERO, Cmd { tag: n, sector: n * 100_000, len: 256, dir: Dir::Write }).unwrap();
            while let Some(t) = d.next_event().filter(|&t| t < Time(1_000_000)) {
                d.poll(t);
            }
        }
        assert_eq!((d.dirty_sectors(), d.in_queue()), (768, 5), "three absorbed, five wait for room");
        assert!(d.can_accept() && !d.write_cache_full(), "768 of 1000 sectors: not full");
        let done = drain(&mut d);
        assert_eq!(done.len(), 5);
        assert!(done.iter().all(|c| c.done > Time(1_000_000)), "the others waited for destages");
    }

    #[test]
    fn write_back_beats_write_through_on_small_random_writes() {
        let cmds = random_cmds(3000, wd().capacity(), 8, 1, 21);
        let run = |depth, wc| {
            let mut d = Drive::new(wd(), cfg(depth, DriveScheduler::Sptf, wc)).unwrap();
            let c = closed_loop(&mut d, &cmds);
            c.last().unwrap().done.0 as f64
        };
        let (wt1, wb1) = (run(1, WriteCache::Through), run(1, WriteCache::Back));
        assert!(wb1 * 2.0 < wt1, "depth 1: write-back {wb1} vs write-through {wt1}");
        let (wt32, wb32) = (run(32, WriteCache::Through), run(32, WriteCache::Back));
        assert!(wt32 < 1.3 * wb32, "depth 32: write-through {wt32} vs write-back {wb32}");
    }

    #[test]
    fn dirty_extents_coalesce_and_split() {
        let mut wb = WriteBack {
            cap: 1 << 20,
            dirty: Vec::new(),
            pending: 0,
            inflight: None,
            destage_done: Time::ZERO,
        };
        wb.insert(10, 20);
        wb.insert(30, 40);
        assert_eq!(wb.new_sectors(15, 35), 10);
        wb.insert(20, 30); // touches both: one extent
        assert_eq!((wb.dirty.clone(), wb.pending), (vec![(10, 40)], 30));
        wb.insert(50, 60);
        wb.insert(5, 55);
        assert_eq!((wb.dirty.clone(), wb.pending), (vec![(5, 60)], 55));
        assert!(wb.holds(5, 60) && !wb.holds(4, 6));
        wb.remove(20, 30);
        assert_eq!((wb.dirty.clone(), wb.pending), (vec![(5, 20), (30, 60)], 45));
        wb.remove(0, 10);
        wb.remove(55, 100);
        assert_eq!((wb.dirty.clone(), wb.pending), (vec![(10, 20), (30, 55)], 35));
        wb.remove(0, 100);
        assert_eq!((wb.dirty.len(), wb.pending), (0, 0));
    }
}

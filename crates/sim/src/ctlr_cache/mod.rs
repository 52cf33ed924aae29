//! A caching controller between the host and a drive: DiskSim 4.0's type-3 ("smart")
//! controller with its `disksim_cachemem` cache (`disksim_ctlrsmart.c`,
//! `disksim_cachemem.c`, restated), as the device layer [`headway_disk::ctlr`] describes.
//!
//! **Host side.** The driver keeps at most `Maximum queue length + 1` host requests at the
//! controller; the rest wait, leaving in the driver's order. A request longer than `Max request
//! size` is served as pieces of that size, each once the one before has completed. A
//! request's arrival costs nothing; every message the controller sends (a request to the
//! disk, a completion to the host) arrives 0.5 ms x `Scale for delays` later. Data moves
//! between host and cache by one DMA engine, first come first served, at `Bulk sector
//! transfer time` a sector.
//!
//! **Reads** (`walk.rs`) walk their lines in order, allocating missing lines and locking
//! each (a read lock where the first sector handled in the line is valid, a write lock
//! where it is not). Invalid sectors are marked valid and gathered into a run; a valid
//! sector after a run, the end of the request, or the end of a line when `Line-by-line
//! fetches` is set or the run spans more than `Max gather` + 1 lines, issues the run as one
//! disk read (widened by `Read prefetch type` to the invalid sectors before it in its first
//! line and after it in its last), and the read waits for it, then walks again from its
//! start (the fill's sectors now valid; write locks become read locks). Runs are fetched
//! one at a time. A read whose sectors are all valid is a hit; it goes to the DMA, and at
//! the DMA's end its lines are unlocked and become the most recently used, in address
//! order; the completion reaches the host 0.5 ms x scale later.
//!
//! **Writes** take a write lock on every line (allocating as reads do), move their data by
//! the DMA, then mark it valid, and dirty under write-back. Write-back (scheme 3): the
//! locks are released and the host is told at once. Write-through (2) and synchronous (1):
//! the locks become read locks, and the data goes to the disk in pieces of at most `Max
//! gather` + 1 lines (one line each with `Line-by-line fetches`), one after another, each
//! releasing its lines when done; write-through tells the host at once, synchronous after
//! the last piece.
//!
//! **Replacement and write-back** (`flush.rs`): a free line first, else the least recently
//! used line that is not locked. Allocation policy 0 takes it even if dirty, writing it
//! back first and waiting; policy 1 takes the first clean one, starting the write-back of
//! each dirty one it passes. With every line locked, the allocation waits for a line to be
//! unlocked. A write-back covers a line's dirty sectors (and the clean ones between them),
//! clustered with neighbouring cached lines' dirty sectors up to `Flush max line cluster`
//! lines where the dirty data crosses the line boundary; its lines are read-locked until the
//! disk write completes. Dirty data is also written back every `Flush period`, and after the
//! disk's queue has been empty for `Flush idle delay` (one line, then the next when that
//! write completes, while the queue stays empty).
//!
//! **Disk side.** Fills and write-backs queue at the controller, one queue per device,
//! ordered and joined as its `Scheduler` says (`queue.rs`: FCFS or `CYCLE_LBN`, neighbours
//! joined up to `Maximum concat size`); at most `Max per-disk pending count` are at the
//! disk at once (the disk's own queue and scheduler order them there). Host requests
//! waiting for a slot leave in the driver's order (FCFS or `CYCLE_LBN`).
//!
//! A `Cache size` of 0 passes requests through: a read goes to the disk and then to the
//! DMA; a write goes through the DMA, then to the disk, and completes when the disk does.
//!
//! A `disksim_cachedev` keeps the cache on a second device behind the controller instead
//! of in lines (`device.rs`): the controller's host side, DMA and per-device queues are the
//! same.
//!
//! Departures from DiskSim, each small: one lock per line (import requires `Lock
//! granularity` = `Line size`); the 0.5 ms x scale a request takes to reach the disk is
//! spent before it joins the disk's queue rather than after; the disk-side transfer runs at
//! the drive's own rate even when the controller's `Bulk sector transfer time` is slower;
//! the disk's interrupts are not delayed by the controller's replies; a woken lock waiter
//! retries after the work in hand rather than at once; with no dirty data the periodic
//! flush is not re-armed until a request arrives (its ticks would find nothing to do).
//!
//! [`CtlrCache`] is pure: the simulator tells it when host requests arrive, when its disk
//! requests complete and when it asked to be woken, and does what the returned [`Out`]s
//! say.
//!
//! The code: `host.rs` (slots, pieces, the DMA, completions), `walk.rs` (reads and writes over
//! their lines), `lines.rs` (the lines, their locks, the LRU order), `flush.rs` (write-backs),
//! `disk.rs` (the queues to the devices, the idle timer), `device.rs` (a cache on a device).

mod device;
mod disk;
mod flush;
mod host;
mod lines;
mod queue;
mod walk;

#[cfg(test)]
mod tests;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use headway_disk::ctlr::{CacheMem, Controller};
use headway_sched::Dir;

use lines::{Lines, Owner};

/// A host request as the controller sees it.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Host {
    pub id: u64,
    pub sector: u64,
    pub len: u32,
    pub dir: Dir,
}

/// What the simulator is to do now.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Out {
    /// Send device `device` (0: the drive, 1: a cache device) this request; tell
    /// [`CtlrCache::disk_done`] its token.
    Disk { token: u64, device: usize, sector: u64, len: u32, dir: Dir },
    /// Host request `host` is complete; `disk_ns`: the drive time of the disk reads it
    /// waited for.
    Done { host: u64, disk_ns: u64 },
}

/// What the cache counted (the report's `controller_cache`). With the cache on a device,
/// `fills` are a read miss's copies onto the cache device, and `destages` the writes of
/// cached data to the drive (write-through copies and idle write-backs).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheStats {
    pub reads: u64,
    /// Reads that issued no fill.
    pub read_hits: u64,
    pub writes: u64,
    /// Writes that found every sector valid.
    pub write_hits: u64,
    pub fills: u64,
    pub fill_sectors: u64,
    /// Disk writes: write-backs and write-throughs.
    pub destages: u64,
    pub destage_sectors: u64,
    /// Dirty sectors at the end of the run.
    pub end_dirty_sectors: u64,
}

/// Something due at a time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    /// A disk request reaches the disk.
    Send(u64),
    /// A host request's completion reaches the host (its current piece's).
    Complete(u64),
    /// The DMA of an op ends.
    DmaEnd(u64),
    /// The idle timer of generation `g`.
    Idle(u64),
    Periodic,
}

/// What an op waits for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Wait {
    Running,
    Lock,
    Line,
    Fill,
    /// Write-backs of a dirty victim (this many left).
    Flush(u32),
    Dma,
    /// A synchronous write's disk writes.
    Destage,
    /// Its completion on the way to the host.
    Completing,
}

/// A host request at the controller (or, with `host` = None, the disk writes a
/// write-through left behind).
#[derive(Clone, Debug)]
struct Op {
    host: Host,
    /// The piece being served: first sector, sectors.
    start: u64,
    len: u32,
    /// Where the walk resumes, sectors from `start`.
    pos: u64,
    /// The first sector of the open fill run.
    run: Option<u64>,
    missed: bool,
    wait: Wait,
    disk_ns: u64,
}

/// A request the controller sent the disk.
#[derive(Clone, Debug)]
enum DiskJob {
    /// A read's fill.
    Fill(u64),
    /// A write-back holding `lines`; `waiter`: the allocation waiting for it; `idle`: the
    /// idle flush's.
    Flush { lines: Vec<usize>, waiter: Option<u64>, idle: bool },
    /// A piece of write `op`'s write-through: its lines, and the pieces after it.
    Destage { op: u64, owner: u64, lines: Vec<usize>, rest: VecDeque<(u64, u32)> },
    /// A request passed through (no cache).
    Pass(u64),
    /// A request of a cache on a device (`device.rs`).
    Device(device::Job),
}

/// The controller: host queue, cache, DMA engine and disk queue.
pub struct CtlrCache {
    c: Controller,
    m: Option<CacheMem>,
    lines: Option<Lines>,
    agenda: BinaryHeap<Reverse<(u64, u64, Due)>>,
    seq: u64,
    now: u64,
    hosts_in: u32,
    hosts_waiting: VecDeque<Host>,
    /// The start of the host request that went to the controller last (the driver's
    /// `CYCLE_LBN` mark).
    host_last: u64,
    ops: HashMap<u64, Op>,
    next_op: u64,
    ready: VecDeque<u64>,
    line_waiters: VecDeque<u64>,
    dma_busy: bool,
    dma_queue: VecDeque<u64>,
    disk: HashMap<u64, DiskJob>,
    /// Per device behind the controller (the drive, and a cache device): the requests
    /// queued, and those at the device.
    disk_queue: [queue::Queue; 2],
    disk_in: [u32; 2],
    /// The cache's requests until they complete: the device, sector, sectors, direction.
    shapes: HashMap<u64, (usize, u64, u32, Dir)>,
    /// Requests (joined or not) that left a queue, by the token they go under, until they
    /// complete: the device and the request.
    sending: HashMap<u64, (usize, queue::Waiting)>,
    /// A cache on a device (`device.rs`).
    dev: Option<device::OnDevice>,
    next_token: u64,
    idle_gen: u64,
    idle_armed: bool,
    periodic_armed: bool,
    out: Vec<Out>,
    pub stats: CacheStats,
}

impl CtlrCache {
    pub fn new(c: &Controller) -> CtlrCache {
        let m = c.cache.clone();
        CtlrCache {
            lines: m.as_ref().map(|m| Lines::new(m.lines, m.line, m.shared_reads)),
            c: c.clone(),
            m,
            agenda: BinaryHeap::new(),
            seq: 0,
            now: 0,
            hosts_in: 0,
            hosts_waiting: VecDeque::new(),
            host_last: 0,
            ops: HashMap::new(),
            next_op: 0,
            ready: VecDeque::new(),
            line_waiters: VecDeque::new(),
            dma_busy: false,
            dma_queue: VecDeque::new(),
            disk: HashMap::new(),
            disk_queue: [queue::Queue::new(c.disk_queue), queue::Queue::new(c.disk_queue)],
            shapes: HashMap::new(),
            sending: HashMap::new(),
            disk_in: [0; 2],
            dev: c.on_device.as_ref().map(device::OnDevice::new),
            next_token: 0,
            idle_gen: 0,
            idle_armed: false,
            periodic_armed: false,
            out: Vec::new(),
            stats: CacheStats::default(),
        }
    }

    /// The counts, with the dirty sectors left now.
    pub fn report_stats(&self) -> CacheStats {
        let dirty = match (&self.dev, &self.lines) {
            (Some(d), _) => d.dirty(),
            (None, Some(l)) => l.all.iter().map(|l| l.dirty.iter().filter(|&&d| d).count() as u64).sum(),
            (None, None) => 0,
        };
        CacheStats { end_dirty_sectors: dirty, ..self.stats }
    }

    /// When the controller next wants [`CtlrCache::wake`].
    pub fn next_wake(&self) -> Option<u64> {
        self.agenda.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Host request `host` reaches the driver at `now`.
    pub fn arrive(&mut self, now: u64, host: Host) {
        self.now = now;
        if !self.periodic_armed {
            if let Some(p) = self.m.as_ref().and_then(|m| m.flush_period) {
                self.periodic_armed = true;
                self.at((now / p.0 + 1) * p.0, Due::Periodic);
            }
        }
        if self.hosts_in < self.c.host_slots {
            self.host_last = host.sector;
            self.admit(host);
        } else {
            self.hosts_waiting.push_back(host);
        }
        self.run_ready();
    }

    /// The disk request `token` completed at `now`, after `service_ns` in the drive: each
    /// request joined into it, in order of start, its share of the time by its sectors.
    pub fn disk_done(&mut self, now: u64, token: u64, service_ns: u64) {
        self.now = now;
        let (d, w) = self.sending.remove(&token).expect("a request at a device");
        self.disk_in[d] -= 1;
        for part in w.parts {
            let (_, s, n, _) = self.shapes.remove(&part).expect("a part of the request");
            let share = (service_ns as u128 * n as u128 / w.n as u128) as u64;
            self.part_done(part, s, n, share);
        }
        self.send_more(d);
        if d == 0 && self.disk_empty(0) {
            self.arm_idle();
        }
        self.run_ready();
    }

    /// The cache's request `token` on `s..s + n` completed.
    fn part_done(&mut self, token: u64, s: u64, n: u32, service_ns: u64) {
        let job = self.disk.remove(&token).expect("a request the controller sent");
        match job {
            DiskJob::Fill(op) => {
                let o = self.ops.get_mut(&op).expect("the fill's read");
                o.disk_ns += service_ns;
                o.pos = 0;
                o.wait = Wait::Running;
                self.ready.push_back(op);
            }
            DiskJob::Flush { lines, waiter, idle } => {
                self.release(&lines, Owner::Flush(token));
                if let Some(op) = waiter {
                    let o = self.ops.get_mut(&op).expect("the allocation waiting for the write-back");
                    if let Wait::Flush(n) = o.wait {
                        o.wait = if n > 1 { Wait::Flush(n - 1) } else { Wait::Running };
                        if n == 1 {
                            self.ready.push_back(op);
                        }
                    }
                }
                if idle && self.disk_empty(0) {
                    self.idle_flush();
                }
            }
            DiskJob::Destage { op, owner, lines, mut rest } => {
                self.release(&lines, Owner::Op(owner));
                match rest.pop_front() {
                    Some((s, n)) => self.destage(op, owner, s, n, rest),
                    None => {
                        if self.ops.get(&op).is_some_and(|o| o.wait == Wait::Destage) {
                            self.complete_after(op, self.c.overhead.0);
                        }
                    }
                }
            }
            DiskJob::Pass(op) => {
                self.ops.get_mut(&op).expect("the passed request").disk_ns += service_ns;
                match self.ops[&op].host.dir {
                    Dir::Read => self.dma(op),
                    Dir::Write => self.complete_after(op, self.c.overhead.0),
                }
            }
            DiskJob::Device(job) => self.device_done(job, s, n, service_ns),
        }
    }

    /// Whatever is due by `now`.
    pub fn wake(&mut self, now: u64) -> Vec<Out> {
        self.now = now;
        while let Some(&Reverse((t, _, due))) = self.agenda.peek() {
            if t > now {
                break;
            }
            self.agenda.pop();
            match due {
                Due::Send(token) => {
                    let (device, w) = &self.sending[&token];
                    self.out.push(Out::Disk { token, device: *device, sector: w.s, len: w.n, dir: w.dir });
                }
                Due::Complete(op) => self.completed(op),
                Due::DmaEnd(op) => {
                    self.transferred(op);
                    match self.dma_queue.pop_front() {
                        Some(next) => self.start_dma(next),
                        None => self.dma_busy = false,
                    }
                }
                Due::Idle(g) => {
                    if g == self.idle_gen && self.idle_armed {
                        self.idle_armed = false;
                        match self.dev {
                            Some(_) => self.device_idle(),
                            None => self.idle_flush(),
                        }
                    }
                }
                Due::Periodic => {
                    self.periodic_armed = false;
                    self.periodic_flush();
                }
            }
            self.run_ready();
        }
        std::mem::take(&mut self.out)
    }

    fn at(&mut self, t: u64, due: Due) {
        self.seq += 1;
        self.agenda.push(Reverse((t, self.seq, due)));
    }
}

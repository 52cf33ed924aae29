//! A cache kept on a second device behind the controller: DiskSim 4.0's `disksim_cachedev`
//! (`disksim_cachedev.c`, restated), in front of the drive ("the cached device").
//!
//! * Sector `b` of the drive is kept at sector `b` of the cache device, for every `b`
//!   below `Cache size` (the import requires it to cover the drive); one valid and one
//!   dirty bit a sector; nothing is ever replaced, nothing is locked.
//! * **A read** is a hit when every sector is valid and it ends strictly below `Cache
//!   size`: it is read from the cache device. Any other read is read from the drive, and
//!   then, in the background, written to the cache device (its sectors become valid when
//!   that write completes). Either way the data then goes through the controller's DMA to
//!   the host.
//! * **A write** goes through the DMA first; then, if it ends strictly below `Cache size`,
//!   to the cache device only (its sectors become valid and dirty when that write
//!   completes; under write-through a copy then goes to the drive in the background, and
//!   cleans them when done), otherwise to the drive only. The host is told when that one
//!   disk write completes: write-back or not, a write waits for a disk.
//! * **Write-backs** only on idle: once the drive's queue has been empty for `Flush idle
//!   delay` (the timer starts when a drive request completes leaving its queue empty, and a
//!   request queued for the drive cancels it), if the cache device's queue is empty too,
//!   the lowest run of dirty sectors (of any length) is read from the cache device and
//!   written to the drive, which cleans it; then the next run, at once, while both queues
//!   stay empty.
//!
//! As in DiskSim, concurrent requests on the same sectors are not ordered: the bits change
//! when each disk request completes.

use headway_disk::ctlr::CacheDev;
use headway_sched::Dir;

use super::{CtlrCache, DiskJob, Wait};

/// One bit a sector.
#[derive(Clone, Debug)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: u64) -> Bits {
        Bits(vec![0; n.div_ceil(64) as usize])
    }

    fn get(&self, i: u64) -> bool {
        self.0[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    fn set(&mut self, from: u64, to: u64, on: bool) {
        for i in from..to {
            let (w, b) = ((i / 64) as usize, i % 64);
            if on {
                self.0[w] |= 1 << b;
            } else {
                self.0[w] &= !(1 << b);
            }
        }
    }

    /// The first run of set bits: its start and end (exclusive).
    fn first_run(&self) -> Option<(u64, u64)> {
        let w = self.0.iter().position(|&w| w != 0)?;
        let start = w as u64 * 64 + self.0[w].trailing_zeros() as u64;
        let limit = self.0.len() as u64 * 64;
        let mut end = start;
        while end < limit && self.get(end) {
            end += 1;
        }
        Some((start, end))
    }
}

/// The cache's state.
#[derive(Clone, Debug)]
pub(super) struct OnDevice {
    sectors: u64,
    write_through: bool,
    pub idle_delay: Option<headway_sched::Duration>,
    valid: Bits,
    dirty: Bits,
}

impl OnDevice {
    pub fn new(c: &CacheDev) -> OnDevice {
        OnDevice {
            sectors: c.sectors,
            write_through: c.write_through,
            idle_delay: c.idle_delay,
            valid: Bits::new(c.sectors),
            dirty: Bits::new(c.sectors),
        }
    }

    /// Sectors `s..s + n` all valid, ending strictly below the cache's size.
    fn read_hit(&self, s: u64, n: u64) -> bool {
        s + n < self.sectors && (s..s + n).all(|i| self.valid.get(i))
    }

    /// Dirty sectors left (at the end of a run, DiskSim's "end dirty blocks").
    pub fn dirty(&self) -> u64 {
        self.dirty.0.iter().map(|w| w.count_ones() as u64).sum()
    }
}

/// What a request of the cache is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Job {
    /// Host read `op`, from the cache device or the drive.
    Read {
        op: u64,
        from_cache: bool,
    },
    /// A read miss's copy onto the cache device.
    Populate,
    /// Host write `op`, to the cache device or the drive.
    Write {
        op: u64,
        to_cache: bool,
    },
    /// Write-through's copy of a cache-device write onto the drive.
    Copy,
    /// An idle write-back: the read from the cache device, then the write to the drive.
    IdleRead,
    IdleWrite,
}

const DRIVE: usize = 0;
const CACHE: usize = 1;

impl CtlrCache {
    fn on_device(&mut self) -> &mut OnDevice {
        self.dev.as_mut().expect("a cache on a device")
    }

    /// Host read `id` reaches the controller.
    pub(super) fn device_read(&mut self, id: u64) {
        let (s, n) = (self.ops[&id].start, self.ops[&id].len);
        let hit = self.on_device().read_hit(s, n as u64);
        self.stats.reads += 1;
        self.stats.read_hits += hit as u64;
        self.ops.get_mut(&id).unwrap().wait = Wait::Fill;
        let d = if hit { CACHE } else { DRIVE };
        self.issue_to(d, s, n, Dir::Read, DiskJob::Device(Job::Read { op: id, from_cache: hit }));
    }

    /// Host write `id` has crossed the DMA.
    pub(super) fn device_write(&mut self, id: u64) {
        let (s, n) = (self.ops[&id].start, self.ops[&id].len);
        let hit = s + (n as u64) < self.on_device().sectors;
        self.stats.writes += 1;
        self.stats.write_hits += hit as u64;
        self.ops.get_mut(&id).unwrap().wait = Wait::Destage;
        let d = if hit { CACHE } else { DRIVE };
        self.issue_to(d, s, n, Dir::Write, DiskJob::Device(Job::Write { op: id, to_cache: hit }));
    }

    /// The cache's request `job` on sectors `s..s + n` completed after `service` ns.
    pub(super) fn device_done(&mut self, job: Job, s: u64, n: u32, service: u64) {
        let end = s + n as u64;
        match job {
            Job::Read { op, from_cache } => {
                self.ops.get_mut(&op).unwrap().disk_ns += service;
                if !from_cache {
                    self.stats.fills += 1;
                    self.stats.fill_sectors += n as u64;
                    self.issue_to(CACHE, s, n, Dir::Write, DiskJob::Device(Job::Populate));
                }
                self.dma(op);
            }
            Job::Populate => self.on_device().valid.set(s, end, true),
            Job::Write { op, to_cache } => {
                if to_cache {
                    let dev = self.on_device();
                    dev.valid.set(s, end, true);
                    dev.dirty.set(s, end, true);
                    if dev.write_through {
                        self.destaged(n);
                        self.issue_to(DRIVE, s, n, Dir::Write, DiskJob::Device(Job::Copy));
                    }
                }
                self.complete_after(op, self.c.overhead.0);
            }
            Job::Copy => self.on_device().dirty.set(s, end, false),
            Job::IdleRead => {
                self.destaged(n);
                self.issue_to(DRIVE, s, n, Dir::Write, DiskJob::Device(Job::IdleWrite));
            }
            Job::IdleWrite => {
                self.on_device().dirty.set(s, end, false);
                self.device_idle();
            }
        }
    }

    fn destaged(&mut self, n: u32) {
        self.stats.destages += 1;
        self.stats.destage_sectors += n as u64;
    }

    /// The drive has been idle for the delay (or an idle write-back just ended): the
    /// lowest dirty run goes back, if both queues are empty.
    pub(super) fn device_idle(&mut self) {
        if !self.disk_empty(DRIVE) || !self.disk_empty(CACHE) {
            return;
        }
        let Some((s, e)) = self.on_device().dirty.first_run() else { return };
        self.issue_to(CACHE, s, (e - s) as u32, Dir::Read, DiskJob::Device(Job::IdleRead));
    }
}

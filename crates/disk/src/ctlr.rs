//! A caching controller in front of a drive: DiskSim 4.0's type-3 ("smart") `disksim_ctlr`
//! with a `disksim_cachemem` cache, as [`parv`](crate::parv) imports it. The simulator's
//! `ctlr_cache` layer runs it (the rules are explained there); this is its description.
//!
//! | DiskSim parameter | field |
//! |---|---|
//! | ctlr `Scale for delays` | [`Controller::overhead`] = 0.5 ms x scale (DiskSim's fixed per-message cost) |
//! | ctlr `Bulk sector transfer time` | [`Controller::host_per_sector`] (the controller's DMA to the host) |
//! | ctlr `Maximum queue length` | [`Controller::host_slots`] = value + 1 (host requests at the controller at once) |
//! | ctlr `Max per-disk pending count` | [`Controller::disk_slots`] |
//! | `Cache size`, `Line size` (blocks) | [`CacheMem::lines`], [`CacheMem::line`] |
//! | `Shared read locks` | [`CacheMem::shared_reads`] |
//! | `Max request size` (blocks; 0: none) | [`Controller::max_request`] (the driver's split) |
//! | `Allocation policy` 0 / 1 | [`Allocation::Victim`] / [`Allocation::Clean`] |
//! | `Write scheme` 1 / 2 / 3 | [`WriteScheme::Synchronous`] / [`WriteScheme::Through`] / [`WriteScheme::Back`] |
//! | `Flush policy` 1, `Flush period` (ms) | [`CacheMem::flush_period`] |
//! | `Flush idle delay` (ms, truncated to whole ms as DiskSim's queue keeps it; 0 or -1: never) | [`CacheMem::idle_delay`] |
//! | `Flush max line cluster` | [`CacheMem::cluster`] |
//! | `Read prefetch type` 0-3 | [`CacheMem::prefetch_front`], [`CacheMem::prefetch_rest`] |
//! | `Line-by-line fetches` | [`CacheMem::line_by_line`] |
//! | `Max gather` (lines; 0: no limit) | [`CacheMem::gather`] |
//!
//! A `Cache size` of 0 is DiskSim's pass-through mode: [`Controller::cache`] is `None`.
//!
//! A `disksim_cachedev` keeps the cache on a second device behind the same controller
//! ([`Controller::on_device`]):
//!
//! | DiskSim parameter | field |
//! |---|---|
//! | `Cache size` (blocks) | [`CacheDev::sectors`] |
//! | `Write scheme` (2: write-through; 1 and 3: write-back, as DiskSim runs them) | [`CacheDev::write_through`] |
//! | `Flush idle delay` (ms, whole; 0: never) | [`CacheDev::idle_delay`] |
//! | `Cache device`, `Cached device` | [`CacheDev::device`]; the cached device is the one imported |
//! | `Max request size` | [`Controller::max_request`] |
//! | `Flush policy`, `Flush period` | none: DiskSim reads them and never uses them |

use headway_sched::Duration;
use serde::{Deserialize, Serialize};

/// The controller: its costs, its two queue limits and its cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Controller {
    /// Every message the controller sends (a request to the disk, a completion to the
    /// host).
    #[serde(with = "crate::serde_ns")]
    pub overhead: Duration,
    /// The controller's DMA to or from the host, per sector (one transfer at a time).
    #[serde(with = "crate::serde_ns")]
    pub host_per_sector: Duration,
    /// Host requests the driver keeps at the controller at once.
    pub host_slots: u32,
    /// The order in which host requests waiting at the driver go to the controller (the
    /// driver's `Scheduler`; it never joins them).
    #[serde(default)]
    pub host_queue: QueueOrder,
    /// The controller's queue to each device: its order, and which requests it joins.
    #[serde(default)]
    pub disk_queue: DiskQueue,
    /// Requests the controller keeps at the disk at once.
    pub disk_slots: u32,
    /// The driver splits larger host requests into pieces of this many sectors, one after
    /// another (0: no limit; the cache's `Max request size`).
    pub max_request: u32,
    /// `None`: `Cache size` 0, every request passes through (or the cache is on a device).
    pub cache: Option<CacheMem>,
    /// A `disksim_cachedev`: the cache kept on another device behind the controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_device: Option<CacheDev>,
}

/// A `disksim_cachedev` cache: sector `b` of the drive is kept at sector `b` of the cache
/// device, for `b` below `sectors`; one valid and one dirty bit a sector, nothing ever
/// replaced (the simulator's `ctlr_cache::device` has the rules).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheDev {
    /// `Cache size`: the drive's first sectors that can be cached.
    pub sectors: u64,
    /// `Write scheme` 2: a write to the cache device is copied to the drive behind it
    /// (DiskSim treats 1 and 3 alike, as write-back).
    pub write_through: bool,
    /// Dirty data is written back after the drive's queue has been empty this long (`None`:
    /// never).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_ns")]
    pub idle_delay: Option<Duration>,
    /// The device holding the copies (`Cache device`).
    pub device: Box<crate::spec::DiskSpec>,
}

/// A `disksim_cachemem` cache, as far as headway runs it (one lock per line, one valid bit
/// per sector, LRU replacement).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheMem {
    /// Lines in the cache.
    pub lines: u32,
    /// Sectors a line (aligned: a line holds sectors `k L .. k L + L`).
    pub line: u32,
    pub shared_reads: bool,
    pub allocation: Allocation,
    pub write: WriteScheme,
    /// Every dirty line is written back every this often (`None`: never).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_ns")]
    pub flush_period: Option<Duration>,
    /// After the disk's queue has been empty this long, dirty lines are written back one
    /// at a time (`None`: never).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_ns")]
    pub idle_delay: Option<Duration>,
    /// Lines one write-back may cover (neighbouring dirty lines; 1: its own).
    pub cluster: u32,
    /// A read's fill also takes the invalid sectors before it in its first line.
    pub prefetch_front: bool,
    /// ... and after it in its last line.
    pub prefetch_rest: bool,
    /// Every line is fetched (and written through) on its own.
    pub line_by_line: bool,
    /// A fill or write-through covers at most `gather + 1` lines (0: no limit).
    pub gather: u32,
}

/// A DiskSim ioqueue's `Scheduling policy`, as far as headway runs them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum QueueOrder {
    /// 1: first come, first served.
    #[default]
    Fcfs,
    /// 3 (`CYCLE_LBN`, C-LOOK by block number): the waiting request with the lowest start at
    /// or above the start of the one dispatched last (the earliest of equal starts), else
    /// the lowest start.
    CycleLbn,
}

/// The controller's queue to a device (its `Scheduler`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskQueue {
    pub order: QueueOrder,
    /// `Sequential stream scheme` 1 and 2: a request queued next to a waiting one of the
    /// same direction that it continues (or that continues it) is joined with it, up to
    /// `max_join` sectors.
    pub join_reads: bool,
    pub join_writes: bool,
    /// `Maximum concat size`, sectors.
    pub max_join: u32,
}

/// Which line an allocation takes when none is free.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Allocation {
    /// The least recently used unlocked line; a dirty one is written back first, and the
    /// allocation waits for that.
    Victim,
    /// The least recently used unlocked clean line; each dirty line passed over starts its
    /// write-back.
    Clean,
}

/// When a write completes to the host, and when it reaches the disk.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WriteScheme {
    /// Once the disk has it.
    Synchronous,
    /// At once; the disk write starts at once too.
    Through,
    /// At once; the data stays dirty in the cache until a write-back.
    Back,
}

impl Controller {
    /// Sectors the cache holds.
    pub fn cache_sectors(&self) -> u64 {
        self.cache.as_ref().map_or(0, |c| c.lines as u64 * c.line as u64)
    }
}

mod opt_ns {
    use headway_sched::Duration;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        d.map(|d| d.0).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration))
    }
}

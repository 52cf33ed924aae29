//! The drive: mechanics (seek, rotation, transfer) plus a segmented read-ahead cache.
//!
//! One call of [`Hdd::access`] serves one request on an idle drive and returns when it
//! completes. Everything is a function of the spec, the call sequence and `now`: no clock,
//! no randomness, no allocation.
//!
//! ## Service of a request (in this order)
//! 1. **Controller overhead** by kind (read miss, read hit, write) and by the previous
//!    command's direction (DiskSim's "... over. after read/write").
//! 2. **Cache lookup** (reads): a read entirely inside a segment's valid range is a *hit*:
//!    overhead + bus transfer. A read that starts inside the streaming segment's valid
//!    range, at its read-ahead frontier, or ahead of it within the read-ahead limit, while
//!    read-ahead is still running, is a
//!    *continuation*: no seek; it completes when read-ahead has read its last sector (plus
//!    one sector of bus time), or after overhead + bus transfer if that is later.
//! 3. **Positioning** (misses and writes): read-ahead stops (the head is needed); seek by
//!    cylinder distance (`seek.rs`), or a head switch on the same cylinder, plus the
//!    write settle for writes that moved; then rotational latency: the spindle angle is
//!    `t mod rev` of absolute simulated time, and the drive waits until the first target
//!    sector's slot comes under the head.
//! 4. **Media transfer** track by track at `rev / sectors_per_track` per sector, with a
//!    head switch or a one-cylinder seek between tracks and a rotational wait for the
//!    skewed first sector of the next track (which the skew makes short).
//! 5. **Bus transfer** at `bus_per_sector`, overlapped with the media transfer: a read
//!    completes one sector of bus time after its last sector leaves the media, or after
//!    overhead + the whole bus transfer if the bus is slower. Writes are write-through: the
//!    host data crosses the bus while the drive seeks, and the command completes when the
//!    last sector is on the media.
//!
//! ## Fast writes, and what DiskSim imports add
//! With [`crate::spec::FastWrite`] on, a write completes once its data has crossed the bus
//! into the buffer (the write-*hit* overhead + bus time + completion overhead); the media
//! write (the destage) starts behind it and the arm stays busy until it is done, so a later
//! miss waits for it. `Sequential` (DiskSim's level 1, one write segment) lets a write
//! into the buffer only once the previous destage has finished. With
//! `read_hits_on_write_data` the written range stays readable in a segment (the dedicated
//! write segment when the cache has one). A read miss transfers its data over the bus as
//! the sectors come off the media: it completes one bus sector after its last sector, or
//! `n` bus sectors after its first, whichever is later. `read_any_free_blocks`: a miss
//! into a fresh segment whose head lands past its first sector (before the track's last
//! one) keeps the sectors of the track before it; landing before it, or reading into a
//! segment that already holds data, keeps nothing more (DiskSim's `disk_buffer_seekdone`
//! and `dm_latency_g1`: zero latency over the request's sector to the track's last; its
//! `disk_buffer_block_available`: a block below the segment only while the segment is
//! empty). Timing is unchanged. `min_seek` bounds a write's positioning from below, moved
//! or not. `read_completion` and `write_completion` are added to every completion.
//!
//! ## Bus protocol ([`crate::spec::BusProtocol`], DiskSim imports)
//! The steps of DiskSim 4.0's `disksim_diskctlr.c` around a media access, all zero for the
//! built-in models. A read miss starts its seek after the command overhead and disconnects
//! meanwhile; once the read watermark is in the buffer (and the disconnect is done) it
//! reselects (+ data preparation) and sends at the bus rate, never ahead of the media. A
//! hit or continuation sends after its overhead + data preparation. A write's data crosses
//! the bus (at the bus's write rate) from its command overhead + data preparation while
//! the arm moves; the media writes a sector only once it is in the buffer, else a
//! revolution later (write-through and destage alike); a write-through write then
//! disconnects and reselects for its status once the media write is done. With DiskSim's
//! extra write disconnect, a write that follows a write without continuing it takes the
//! extra disconnect's command overhead, disconnects, waits the inter-disconnect delay and
//! reselects before its data, starts the arm `command + seek delta` after arrival, and
//! reselects with the other-reselect overhead at the end. [`Hdd::disconnect`] tells when
//! the last request let the bus go and asked for it again, for a bus shared with other
//! drives (the engine's `bus` module).
//!
//! ## Read-ahead (lazy)
//! After a read miss the drive keeps reading sequentially into the request's segment while
//! idle, until `max_read_ahead_sectors` past the end of the last request (with
//! `read_ahead_to_track_end`, DiskSim's scheme 4: to the end of the track after it, one
//! track further when the segment began on an earlier track). Nothing runs in
//! the background: the next `access` computes how far read-ahead got as elapsed time /
//! the zone's *sustained* time per sector, which spreads head and cylinder switches (and
//! their skews) evenly over the sectors of a cylinder instead of placing them where they
//! fall: the frontier is exact at cylinder boundaries and within a few switch times
//! elsewhere. The segment is a ring: it keeps the last `segment_sectors` read. A hit or
//! continuation on the streaming segment moves the read-ahead limit to its end + the
//! maximum read-ahead; if read-ahead had already stopped at its limit it resumes from
//! there once the frontier sector comes around again (DiskSim's "read-ahead on idle hit").
//! Segments are replaced least-recently-used; a miss that starts inside a stopped segment
//! (or right at its end, with `CacheSpec::reuse_adjacent_segment`) reuses it and reads
//! only what it lacks. Writes invalidate every segment they overlap.
//!
//! ## DiskSim's angle (`DiskSpec::disksim`, DiskSim imports)
//! DiskSim 4.0 keeps the angle under the head as a running sum of 2^-32 revolutions,
//! advanced at each sector event (`disk_buffer_sector_done`) by the rotation since the
//! last one, truncated to a multiple of 2^-24 revolution (`dm_rotate`). The time between
//! two sector events is itself a truncated rotation (`dm_xfertime`), so each event loses
//! almost exactly one 2^-24 step (the zone's exact loss is computed here as DiskSim's
//! integer arithmetic gives it), and the first event after a seek or head switch, which
//! folds in the residual rotation and the latency, about 1.5 steps. Idle time costs
//! nothing more (it is reduced modulo the revolution before the rotation). Its platters
//! therefore fall behind true rotation by the number of sectors that have passed under
//! the head: the requests' own, read-ahead's and destaged ones; 1.3 ms after 500 s of
//! random reads on an ibm18es. With the flag, [`Hdd`] counts the same events and turns
//! its platters by `t - lag`; a built-in drive has the exact angle.
//!
//! ## DiskSim's fast writes (`DiskSpec::disksim`, DiskSim imports)
//! DiskSim 4.0 (`disk_write_arrive`, `disk_buffer_select_write_segment`,
//! `disk_buffer_sector_done`, `disk_release_hda`) takes a fast write into its buffer at
//! once only when the heads are free (or only reading ahead), or when the write *appends*
//! to the segment being destaged: it starts where that segment ends, `Combine seq writes`
//! is on, it fits, and no earlier appended write is still waiting for the heads. Any other
//! write is refused: it waits until the heads are free (the destage and its rewrites done),
//! then its data crosses the bus (`max(heads free, overhead + write disconnect)` +
//! reselect + data preparation) and its media write starts from the heads' release (or
//! its command overhead, if later); a sector not yet buffered when its slot comes round
//! is tried again after the track's LBNs at DiskSim's sector time (a revolution on a full
//! track; each step a sector event for the angle), so such a write usually loses one. An
//! appended write completes as its data is buffered; the destage in progress writes its
//! sectors too while they are there in time (it stops at the first one that is not, and
//! at its track's last sector if the next is not buffered yet), and then the appended
//! write, never having moved its own cursor, writes all its sectors again: the heads come
//! back round to its first sector. Until that rewrite starts, a further sequential write
//! is refused, so appends alternate: accepted, refused, accepted.
//!
//! ## DiskSim's reads (`DiskSpec::disksim`, DiskSim imports)
//! - The bus sends what is buffered and waits at each gap in the media: a read's transfer
//!   ends no sooner than each track's first sector + the request's sectors from there at
//!   the bus rate (`disk_buffer_transfer_size`, disconnect and reconnect).
//! - Read-ahead is walked sector by sector with real track switches (`Hdd::stream_walk`,
//!   `disk_buffer_sector_done`), not at the sustained rate: planned once per read-ahead
//!   limit as one run per track (`walk.rs`), so later questions need no layout lookups.
//! - A stopped read-ahead's pending event still happens: the next seek waits for it
//!   (`disk_seek_stoptime`, added to the command overhead) from the track it puts the arm
//!   on, unless the drive stops read-ahead in mid-sector ("Stop prefetch in sector").
//! - A hit in another segment takes the heads and stops the read-ahead for good; only a
//!   read starting inside the data read so far is served by the read-ahead (one at or past
//!   its frontier is a miss); a partial hit sends its buffered part at once (the hit's
//!   overhead) while the heads fetch the rest.
//!
//! ## Fixed-time devices (`DiskSpec::fixed`, DiskSim's simpledisk)
//! Every command costs the same, whatever its address ([`crate::FixedService`]): overhead +
//! access + its sectors at the transfer rate; no cache, no positioning to estimate (every
//! estimate is the same, so a drive's SPTF serves them in arrival order).
//!
//! ## For a drive with a command queue ([`crate::drive`])
//! - [`Hdd::estimate`] prices a request against an [`Arm`] snapshot without serving it:
//!   the same lookup as step 2 (hit, continuation, miss) and the same positioning as step 3
//!   (overhead + seek or head switch + settle + rotational latency, from where a miss would
//!   stop read-ahead). A unit test checks it against what [`Hdd::access`] then pays.
//! - [`Hdd::destage`] writes buffered data to the media (positioning and media transfer
//!   only: no command overhead, no bus transfer), invalidating overlapped segments.
//! - [`Hdd::serve_from_buffer`] answers a command from the buffer without the arm (a
//!   write-back write, a read of dirty data): overhead + bus transfer.

use crate::geometry::{FastDiv, Geometry, Location};
use crate::seek::SeekCurve;
use crate::spec::{DiskSpec, ReadAheadWithin, SpecError};
use headway_sched::{Dir, Duration, Time};

mod immediate;
mod walk;

/// When a write's data is in the drive's buffer: it crosses the bus from `from`, `per` ns
/// a sector; sector `k` (from 0) is buffered at `from + max(k + 1, first) * per`.
#[derive(Copy, Clone, Debug)]
struct WriteData {
    from: u64,
    per: u64,
    first: u64,
}

impl WriteData {
    /// When sector `k` (from 0) is in the buffer.
    #[inline]
    fn at(&self, k: u64) -> u64 {
        self.from + (k + 1).max(self.first) * self.per
    }

    /// How many sectors are in the buffer at `t` (the inverse of [`WriteData::at`]).
    fn buffered_by(&self, t: u64) -> u64 {
        if t < self.from + self.first * self.per {
            0
        } else {
            (t - self.from).checked_div(self.per).unwrap_or(u64::MAX / 2)
        }
    }
}

/// What [`Hdd::media`] did.
#[derive(Copy, Clone, Debug)]
struct MediaRun {
    /// When the last sector left the media.
    end: u64,
    /// Cylinders moved, and the positioning (seek or switch + rotational wait) before the
    /// first sector, of which `wait` was rotational.
    dcyl: u32,
    pos: u64,
    wait: u64,
    /// Where the run started, and where its last sector is.
    first: Location,
    last: Location,
    /// When every sector before the run's `mark` had left the media.
    at_mark: u64,
    /// A read's bus transfer ends no sooner (`disksim`: DiskSim's bus sends what is buffered
    /// and waits at each gap in the media); 0 otherwise.
    bus_floor: u64,
    /// When the sector after the run next starts under the head: `end`, unless a
    /// zero-latency access took the last track out of order.
    resume: u64,
}

/// Where DiskSim's read-ahead is ([`Hdd::stream_walk`]).
#[derive(Copy, Clone, Debug)]
struct StreamAt {
    /// The first sector not yet read.
    front: u64,
    /// When its next event falls (a sector's end, a switch's end, the first sector of a
    /// new track); 0 once it has stopped at its limit.
    next_event: u64,
    /// The track the arm is over (or moving to).
    cylinder: u32,
    head: u32,
    /// When every sector before the walk's `x` was read (`u64::MAX` if not by `t`).
    at: u64,
}

/// DiskSim's dirty segment while its writes reach the media (`disksim` fast writes).
#[derive(Copy, Clone, Debug)]
struct WriteBack {
    /// The sector after the segment's last write: where an append must start.
    end: u64,
    /// The first sector of the write whose pass is the last one scheduled.
    owner_start: u64,
    /// When that pass writes its last sector (the heads are free then).
    pass_end: u64,
    /// An appended write waits for its rewrite pass until then (a further append before
    /// it is refused); 0: none waiting.
    waiting_until: u64,
}

/// What serving one request cost.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// When the request completes (its last byte has reached the host, or for a write the
    /// media).
    pub done: Time,
    /// Cylinders the arm moved (0 for hits, continuations and head switches).
    pub seek_cylinders: u32,
    /// Seek (or head switch) + write settle + rotational latency before the first sector;
    /// zero for hits and continuations. Excludes the controller overhead.
    pub positioning: Duration,
    /// Served entirely from the on-board cache, without touching the media.
    pub cache_hit: bool,
}

/// What serving a request would cost, from [`Hdd::estimate`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// Time until the first sector passes under the head (overhead included; zero for
    /// hits and continuations).
    pub positioning: Duration,
    /// Served from the read cache without the media.
    pub cache_hit: bool,
}

/// The arm at one instant, as [`Hdd::arm`] snapshots it for a round of estimates.
#[derive(Copy, Clone, Debug)]
pub struct Arm {
    at: u64,
    cyl: u32,
    head: u32,
    /// Streaming segment and its frontier at `at` (`usize::MAX` when none).
    stream_seg: usize,
    front: u64,
}

impl Arm {
    /// The instant the snapshot is for.
    pub fn at(&self) -> Time {
        Time(self.at)
    }
}

/// Where a read is served from (module docs, step 2).
#[derive(Copy, Clone, Debug)]
enum ReadPath {
    /// Entirely inside the streaming segment's data (frontier `front`).
    StreamHit { front: u64 },
    /// Served by the running read-ahead, which has reached `front`.
    Continuation { front: u64 },
    /// Entirely inside segment `.0`.
    Hit(usize),
    /// The head is needed; `partial` is a segment the read starts in (or right after, with
    /// `CacheSpec::reuse_adjacent_segment`).
    Miss { partial: Option<usize> },
}

#[derive(Copy, Clone, Debug, Default)]
struct Segment {
    /// Valid range `start..end` (empty when `start == end`). For the streaming segment,
    /// `end` is where read-ahead started; the live end is the frontier.
    start: u64,
    end: u64,
}

/// Recency order of the segments as a doubly linked list over their indices: O(1) to mark
/// one most recently used and to find the least recently used one.
#[derive(Clone, Debug)]
struct Lru {
    prev: Vec<u16>,
    next: Vec<u16>,
    mru: u16,
    lru: u16,
}

impl Lru {
    /// Initially segment 0 is the least recently used, n-1 the most.
    fn new(n: usize) -> Lru {
        let n16 = n as u16;
        Lru {
            prev: (0..n16).map(|i| i.wrapping_sub(1)).collect(),
            next: (0..n16).map(|i| i + 1).collect(),
            mru: n16.saturating_sub(1),
            lru: 0,
        }
    }
    fn touch(&mut self, i: usize) {
        let i = i as u16;
        if i == self.mru {
            return;
        }
        let (p, n) = (self.prev[i as usize], self.next[i as usize]);
        // unlink (i is not the MRU, so it has a successor)
        if i == self.lru {
            self.lru = n;
        } else {
            self.next[p as usize] = n;
        }
        self.prev[n as usize] = p;
        // push at the MRU end
        self.next[self.mru as usize] = i;
        self.prev[i as usize] = self.mru;
        self.mru = i;
    }
    fn oldest(&self) -> usize {
        self.lru as usize
    }
}

/// Read-ahead in progress into segment `seg`: sectors from `origin_lbn` on are read at the
/// sustained rate from `origin_time`, zone by zone, up to `stop`.
#[derive(Copy, Clone, Debug)]
struct Stream {
    seg: usize,
    origin_lbn: u64,
    origin_time: u64,
    /// The first sector read ahead whose sector event is not yet in DiskSim's angle lag.
    counted: u64,
    zone: usize,
    stop: u64,
    /// When the frontier reaches `stop`.
    stop_time: u64,
    /// The track the arm is over once the frontier reaches `stop` (`disksim`).
    stop_track: (u32, u32),
}

/// A simulated hard disk. See the module docs for the model.
#[derive(Clone, Debug)]
pub struct Hdd {
    spec: DiskSpec,
    geo: Geometry,
    seek: SeekCurve,
    rev: u64,
    rev_div: FastDiv,
    head_switch: u64,
    write_settle: u64,
    write_settle_off: u64,
    bus: u64,
    /// Bus time per sector for writes (`bus_protocol.write_per_sector`, else `bus`).
    bus_w: u64,
    seg_sectors: u64,
    max_ra: u64,
    // state
    head_cyl: u32,
    head_head: u32,
    /// First LBN past the track the arm is on (lets `stop_stream` skip a lookup when
    /// read-ahead did not leave that track).
    head_track_end: u64,
    last_end: u64,
    last_dir: Dir,
    last_now: Time,
    busy_until: Time,
    /// When the last request served let its bus go and asked for it again
    /// ([`Hdd::disconnect`]).
    disconnect: Option<(Time, Time)>,
    /// When the arm finishes its last media operation (later than `busy_until` while a
    /// fast write is being destaged).
    arm_free: u64,
    segs: Vec<Segment>,
    /// Segments reads may use: `0..read_segs` (the rest is the dedicated write segment).
    read_segs: usize,
    lru: Lru,
    stream: Option<Stream>,
    /// DiskSim's fast writes (`disksim`): the segment being destaged.
    write_back: Option<WriteBack>,
    /// DiskSim's `disk_seek_stoptime` (`disksim`): when the stopped read-ahead's pending
    /// event falls; the next seek starts that much after its command's arrival later.
    seek_stop: u64,
    /// DiskSim's angle (`spec.disksim`): the lag one sector event adds, per zone, in
    /// 2^-40 revolution (empty without the flag).
    sector_lag: Vec<u64>,
    /// DiskSim's time per sector (`dm_xfertime`), per zone, in ps (empty without the flag).
    sector_ps: Vec<u64>,
    /// The lag so far, 2^-40 revolution, and as time modulo the revolution.
    lag_units: u64,
    lag_ns: u64,
    /// The streaming read-ahead's runs (`disksim`), planned when it got its limit.
    walk: walk::WalkPlan,
}

/// A revolution in DiskSim's angle-lag units (2^-40 revolution: 2^-32, DiskSim's angle
/// unit, with 8 more bits for the fractions of a step).
const LAG_UNIT_BITS: u32 = 40;
/// The lag of a positioning's first sector event: half a step for the residual rotation's
/// truncation (uniform), one for the latency's (2^-24 revolution = 2^16 units).
const POSITIONING_LAG: u64 = 3 << 15;

/// DiskSim's period in whole picoseconds (`dm_mech_g1_loadparams`).
fn disksim_period_ps(rpm: u32) -> u128 {
    (1000.0 / (rpm as f64 / 60.0) * 1e9) as u128
}

/// DiskSim's time per sector on a track of `spt` sectors, ps: a sector is `2^32 / spt`
/// angle units wide, and `dm_rottime` truncates it to 2^-20 revolution and the time to a
/// picosecond.
fn disksim_xfer_ps(r: u128, spt: u32) -> u64 {
    let w = (1u128 << 32) / spt.max(1) as u128;
    (((w >> 12) * r) >> 20) as u64
}

/// Per zone of `geo`, DiskSim's time per sector in ps.
fn disksim_sector_ps(rpm: u32, geo: &Geometry) -> Vec<u64> {
    let r = disksim_period_ps(rpm);
    geo.zones.iter().map(|z| disksim_xfer_ps(r, z.spt)).collect()
}

/// Per zone of `geo`, the angle one of DiskSim's sector events loses, in 2^-40 revolution:
/// the true rotation during DiskSim's time per sector less what `dm_rotate` credits for it.
/// DiskSim's period is `60000 / rpm` ms in whole picoseconds (`R`); a sector is
/// `w = 2^32 / spt` angle units wide; its time is `(w >> 12) * R >> 20` ps
/// (`dm_xfertime` through `dm_rottime`); `dm_rotate(x) = ((x << 24) / R) << 8`.
fn disksim_sector_lag(rpm: u32, geo: &Geometry) -> Vec<u64> {
    let r = disksim_period_ps(rpm);
    geo.zones
        .iter()
        .map(|z| {
            let xfer = disksim_xfer_ps(r, z.spt) as u128;
            let credited = ((xfer << 24) / r) << (8 + LAG_UNIT_BITS - 32);
            let turned = (xfer << LAG_UNIT_BITS) / r;
            turned.saturating_sub(credited) as u64
        })
        .collect()
}

impl Hdd {
    /// A drive from a spec; panics with the validation error if the spec is invalid (use
    /// [`Hdd::try_new`] for specs from users).
    pub fn new(spec: DiskSpec) -> Hdd {
        match Hdd::try_new(spec) {
            Ok(h) => h,
            Err(e) => panic!("invalid disk spec: {e}"),
        }
    }

    /// A drive from a spec, or why the spec cannot work. Idle, head over LBN 0, cache empty.
    pub fn try_new(spec: DiskSpec) -> Result<Hdd, SpecError> {
        spec.validate()?;
        let seek = SeekCurve::new(&spec.seek, spec.cylinders());
        let geo = Geometry::new(&spec, spec.head_switch.0, seek.time(1).0);
        let c = spec.cache;
        let segs = if c.enabled() { vec![Segment::default(); c.segments as usize] } else { Vec::new() };
        Ok(Hdd {
            write_back: None,
            seek_stop: 0,
            sector_lag: if spec.disksim { disksim_sector_lag(spec.rpm, &geo) } else { Vec::new() },
            sector_ps: if spec.disksim { disksim_sector_ps(spec.rpm, &geo) } else { Vec::new() },
            lag_units: 0,
            lag_ns: 0,
            rev: spec.revolution().0,
            rev_div: FastDiv::new(spec.revolution().0),
            head_switch: spec.head_switch.0,
            write_settle: spec.write_settle.0,
            write_settle_off: spec.write_settle_off.0,
            bus: spec.bus_per_sector.0,
            bus_w: match spec.bus_protocol.write_per_sector.0 {
                0 => spec.bus_per_sector.0,
                w => w,
            },
            seg_sectors: c.segment_sectors as u64,
            max_ra: c.max_read_ahead_sectors as u64,
            seek,
            geo,
            spec,
            head_cyl: 0,
            head_head: 0,
            head_track_end: 0,
            last_end: 0,
            last_dir: Dir::Read,
            last_now: Time::ZERO,
            busy_until: Time::ZERO,
            disconnect: None,
            arm_free: 0,
            read_segs: if c.dedicated_write_segment { segs.len().saturating_sub(1) } else { segs.len() },
            lru: Lru::new(if c.dedicated_write_segment { segs.len().saturating_sub(1) } else { segs.len() }),
            segs,
            stream: None,
            walk: walk::WalkPlan::default(),
        })
    }

    pub fn spec(&self) -> &DiskSpec {
        &self.spec
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// Addressable 512-byte sectors.
    pub fn capacity(&self) -> u64 {
        self.geo.capacity()
    }

    /// The LBN just past the last request served (where a sequential successor would
    /// start): the head position a scheduler should assume. The arm itself may be further
    /// on when read-ahead ran since.
    pub fn head_sector(&self) -> u64 {
        self.last_end
    }

    /// Seek time for a move of `cylinders` (0 for none).
    pub fn seek_time(&self, cylinders: u32) -> Duration {
        self.seek.time(cylinders)
    }

    /// Serve one request that starts at `now`. The drive must be idle at `now` (no earlier
    /// than the previous `done`) and calls must come with non-decreasing `now`; both are
    /// debug-checked. `len` is in sectors (>= 1) and the range must lie within the
    /// capacity (debug-checked; clamped in release builds).
    pub fn access(&mut self, now: Time, sector: u64, len: u32, dir: Dir) -> Access {
        debug_assert!(now >= self.last_now, "time went backwards: {now} < {}", self.last_now);
        debug_assert!(now >= self.busy_until, "drive busy until {} at {now}", self.busy_until);
        debug_assert!(len >= 1, "empty request");
        debug_assert!(sector + len as u64 <= self.capacity(), "request {sector}+{len} beyond capacity");
        let cap = self.capacity();
        let len = (len.max(1) as u64).min(cap) as u32;
        let sector = sector.min(cap - len as u64);
        let end = sector + len as u64;
        self.last_now = now;
        self.disconnect = None;
        let acc = match (self.spec.fixed, dir) {
            (Some(f), _) => Access {
                done: Time(now.0 + f.time(len as u64, dir)),
                seek_cylinders: 0,
                positioning: f.overhead + f.access,
                cache_hit: false,
            },
            (None, Dir::Read) => self.read(now.0, sector, end),
            (None, Dir::Write) => self.write(now.0, sector, end),
        };
        self.last_dir = dir;
        self.last_end = end;
        self.busy_until = acc.done;
        acc
    }

    /// When the request [`Hdd::access`] last served let the drive's bus go and when it
    /// asked for it again to finish (DiskSim's disconnect and reselection: a read miss from
    /// its command overhead to its data, a write-through write from its data to its
    /// status); `None`: it held the bus from start to completion (a hit, a fast write).
    /// What a bus shared with other drives needs to know.
    pub fn disconnect(&self) -> Option<(Time, Time)> {
        self.disconnect
    }

    /// When the arm finishes the last media operation started ([`Hdd::access`] or
    /// [`Hdd::destage`]).
    pub fn busy_until(&self) -> Time {
        self.busy_until
    }

    /// Where the arm will be for a command started at `at` (or when the drive is next
    /// free, if later): over the track read-ahead has reached by then, which is where a
    /// miss would stop it. Take one snapshot per decision and price every candidate with
    /// [`Hdd::estimate`] against it.
    pub fn arm(&self, at: Time) -> Arm {
        let t = at.0.max(self.busy_until.0).max(self.arm_free);
        let (mut cyl, mut head) = (self.head_cyl, self.head_head);
        let (mut stream_seg, mut front) = (usize::MAX, 0);
        if let Some(st) = self.stream {
            front = self.frontier(&st, t);
            stream_seg = st.seg;
            // as `stop_stream` would move it
            if front > self.head_track_end {
                let loc = self.geo.locate(front.saturating_sub(1).min(self.capacity() - 1));
                cyl = loc.cylinder;
                head = loc.head;
            }
        }
        Arm { at: t, cyl, head, stream_seg, front }
    }

    /// What serving a request would cost, without serving it: cheap enough to evaluate
    /// over a command queue (no allocation, no state change). `positioning` is the time from
    /// `arm`'s instant until the first sector to transfer passes under the head: the
    /// controller overhead, the seek or head switch, the write settle and the rotational
    /// latency, exactly as [`Hdd::access`] would compute them; zero for cache hits and for
    /// reads the running read-ahead serves (continuations).
    pub fn estimate(&self, arm: &Arm, sector: u64, len: u32, dir: Dir) -> Estimate {
        if let Some(f) = self.spec.fixed {
            return Estimate { positioning: f.overhead + f.access, cache_hit: false };
        }
        let (s, e) = self.clamp(sector, len);
        let (start, over, write) = match dir {
            Dir::Read => match self.lookup(arm.at, s, e) {
                ReadPath::StreamHit { .. } | ReadPath::Hit(_) => {
                    return Estimate { positioning: Duration::ZERO, cache_hit: true }
                }
                ReadPath::Continuation { .. } => {
                    return Estimate { positioning: Duration::ZERO, cache_hit: false }
                }
                ReadPath::Miss { partial } => {
                    // (a miss stops read-ahead first: the streaming segment ends at `front`)
                    let start = partial.map_or(s, |i| {
                        let end = if i == arm.stream_seg { arm.front } else { self.segs[i].end };
                        end.max(s)
                    });
                    (start, self.overhead_read(false), false)
                }
            },
            Dir::Write => (s, self.overhead_write(false), true),
        };
        Estimate {
            positioning: Duration(over + self.position_time(arm, over, start, write)),
            cache_hit: false,
        }
    }

    /// [`Hdd::estimate`] for a [`Hdd::destage`] of data starting at `sector`: seek, settle
    /// and rotational latency (a destage has no command overhead).
    pub fn estimate_destage(&self, arm: &Arm, sector: u64) -> Duration {
        if let Some(f) = self.spec.fixed {
            return f.access;
        }
        Duration(self.position_time(arm, 0, sector.min(self.capacity() - 1), true))
    }

    /// Seek/switch (+ settle) and rotational wait to `start`, from `arm` after `delay`.
    #[inline]
    fn position_time(&self, arm: &Arm, delay: u64, start: u64, write: bool) -> u64 {
        let loc = self.geo.locate(start);
        let (mv, _) = self.move_time(arm.cyl, arm.head, &loc, write);
        mv + self.rot_wait(&loc, arm.at + delay + mv)
    }

    /// Write `len` sectors from the drive's buffer to the media (a write-back cache
    /// destaging dirty data): positioning and media transfer as for a write, but no
    /// command overhead and no bus transfer. The drive must be idle at `now`, as for
    /// [`Hdd::access`]. The previous command's direction (for overheads) is unchanged.
    pub fn destage(&mut self, now: Time, sector: u64, len: u32) -> Access {
        debug_assert!(now >= self.last_now, "time went backwards: {now} < {}", self.last_now);
        debug_assert!(now >= self.busy_until, "drive busy until {} at {now}", self.busy_until);
        let (s, e) = self.clamp(sector, len);
        self.last_now = now;
        if let Some(f) = self.spec.fixed {
            let done = Time(now.0 + f.access.0 + (e - s) * f.per_sector(Dir::Write));
            self.last_end = e;
            self.busy_until = done;
            return Access { done, seek_cylinders: 0, positioning: f.access, cache_hit: false };
        }
        self.stop_stream(now.0);
        self.invalidate(s, e);
        let MediaRun { end: media_end, dcyl, pos, .. } =
            self.media(now.0.max(self.arm_free), s, e, true, None, e);
        self.last_end = e;
        self.busy_until = Time(media_end);
        self.arm_free = media_end;
        Access { done: Time(media_end), seek_cylinders: dcyl, positioning: Duration(pos), cache_hit: false }
    }

    /// A command served from the buffer without the arm (a write-back cache absorbing a
    /// write, or a read of data it holds dirty): the hit overhead (the write overhead for
    /// writes) plus the bus transfer. Needs neither an idle arm nor ordered calls; the arm,
    /// its read-ahead and the read segments are untouched.
    pub fn serve_from_buffer(&mut self, now: Time, len: u32, dir: Dir) -> Access {
        let n = len.max(1) as u64;
        let (over, xfer) = match dir {
            Dir::Read => (self.overhead_read(true), self.bus_time(n)),
            Dir::Write => (self.overhead_write(true), self.bus_w * n),
        };
        self.last_dir = dir;
        Access {
            done: Time(now.0 + over + self.spec.bus_protocol.data_prep.0 + xfer),
            seek_cylinders: 0,
            positioning: Duration::ZERO,
            cache_hit: true,
        }
    }

    /// `(start, end)` of a request, clamped into the capacity as [`Hdd::access`] does.
    #[inline]
    fn clamp(&self, sector: u64, len: u32) -> (u64, u64) {
        let cap = self.capacity();
        let len = (len.max(1) as u64).min(cap);
        let s = sector.min(cap - len);
        (s, s + len)
    }

    #[inline]
    fn bus_time(&self, sectors: u64) -> u64 {
        self.bus * sectors
    }

    fn overhead_read(&self, hit: bool) -> u64 {
        let o = &self.spec.overheads;
        match (hit, self.last_dir) {
            (false, Dir::Read) => o.read_miss_after_read.0,
            (false, Dir::Write) => o.read_miss_after_write.0,
            (true, Dir::Read) => o.read_hit_after_read.0,
            (true, Dir::Write) => o.read_hit_after_write.0,
        }
    }

    /// Where a read of `s..e` at `now` would be served from (module docs, step 2). Pure:
    /// [`Hdd::read`] acts on the answer, [`Hdd::estimate`] prices it.
    #[inline(always)]
    fn lookup(&self, now: u64, s: u64, e: u64) -> ReadPath {
        // Segment to reuse for a miss that starts inside or right after its data.
        let mut partial = None;
        if self.segs.is_empty() {
            return ReadPath::Miss { partial };
        }
        // The streaming segment first: hits and continuations.
        let mut stream_seg = usize::MAX;
        if let Some(st) = self.stream {
            stream_seg = st.seg;
            let front = self.frontier(&st, now);
            let seg = self.segs[st.seg];
            let vstart = seg.start.max(front.saturating_sub(self.seg_sectors));
            // A read a little ahead of the frontier, within the read-ahead limit, is also
            // served by the running read-ahead: the drive reads on until the data arrives
            // instead of repositioning (a strided reader's next block).
            let ahead = front < s && s <= st.stop && front < st.stop && !self.spec.disksim;
            // (DiskSim: only a read starting inside the data read so far, not at the
            // frontier or ahead of it, is served by the read-ahead)
            let inside = if self.spec.disksim { vstart <= s && s < front } else { vstart <= s && s <= front };
            if inside || ahead {
                if e <= front {
                    return ReadPath::StreamHit { front };
                }
                if front < st.stop {
                    // Continuation: read-ahead is still streaming and reaches e.
                    return ReadPath::Continuation { front };
                }
                // read-ahead stopped at its limit: read on from there (DiskSim: only a read
                // starting inside the data, `CacheSpec::reuse_adjacent_segment`)
                if s < front || self.spec.cache.reuse_adjacent_segment {
                    partial = Some(st.seg);
                }
            }
        }
        let adjacent = self.spec.cache.reuse_adjacent_segment;
        // One pass over the others: a hit, else a segment to extend. (The streaming
        // segment's stored `end` is stale: it was handled above.)
        for (i, seg) in self.segs.iter().enumerate() {
            // Branch-free test: for random reads `seg.start <= s` is a coin toss a branch
            // predictor would lose on every segment.
            let inside = (seg.start <= s)
                & ((s < seg.end) | ((s == seg.end) & adjacent))
                & (seg.start != seg.end)
                & (i != stream_seg);
            if !inside {
                continue;
            }
            if e <= seg.end {
                return ReadPath::Hit(i);
            }
            // (a miss never reads into the dedicated write segment)
            if partial.is_none() && i < self.read_segs {
                partial = Some(i);
            }
        }
        ReadPath::Miss { partial }
    }

    fn read(&mut self, now: u64, s: u64, e: u64) -> Access {
        let partial = match self.lookup(now, s, e) {
            ReadPath::StreamHit { front } => {
                let seg = self.stream.map_or(0, |st| st.seg);
                let over = self.overhead_read(true);
                self.lru.touch(seg);
                self.extend_stream(now, front, e);
                return self.hit(now, over, e - s);
            }
            ReadPath::Continuation { front } => {
                let st = self.stream.expect("a continuation has a stream");
                let over = self.overhead_read(true);
                self.lru.touch(st.seg);
                let media = self.stream_time_at(&st, e);
                self.extend_stream(now, front, e);
                let done = (now + over + self.spec.bus_protocol.data_prep.0 + self.bus_time(e - s))
                    .max(media + self.bus)
                    + self.spec.overheads.read_completion.0;
                return Access {
                    done: Time(done),
                    seek_cylinders: 0,
                    positioning: Duration::ZERO,
                    cache_hit: false,
                };
            }
            ReadPath::Hit(i) => {
                if i < self.read_segs {
                    self.lru.touch(i);
                }
                if self.spec.disksim {
                    // DiskSim's `disk_activate_read`: the hit takes the heads from the
                    // read-ahead, which stops for good ("Read-ahead on idle hit" aside)
                    self.stop_stream(now);
                }
                let over = self.overhead_read(true);
                return self.hit(now, over, e - s);
            }
            ReadPath::Miss { partial } => partial,
        };
        // Miss: the head is needed here (once a destage has finished with it).
        let over = self.overhead_read(false);
        self.stop_stream(now);
        self.write_back = None;
        // a partial hit: the drive sends what it has and reads the rest
        let media_start = partial.map_or(s, |i| self.segs[i].end.max(s));
        let t0 = (now + over).max(self.arm_free);
        let mark = self.read_watermark_end(s, e, media_start);
        let run = self.media(t0, media_start, e, false, None, mark);
        let MediaRun { end: media_end, dcyl, pos, wait, first, .. } = run;
        let slot = self.geo.zones[first.zone as usize].slot_start(1);
        let done = match partial {
            // DiskSim ("Immed transfer partial hit"): the buffered part goes out at once, as
            // a hit's would; the bus then waits for the media at each gap
            Some(_) if self.spec.disksim && media_start > s => {
                let send = now + self.overhead_read(true) + self.spec.bus_protocol.data_prep.0;
                self.read_done(send, s, e, &run)
            }
            _ => {
                let (gone, back) = self.read_miss_bus(now, over, &run);
                self.disconnect = Some((Time(gone), Time(back)));
                let p = &self.spec.bus_protocol;
                self.read_done(back + p.reselect_first.0 + p.data_prep.0, s, e, &run)
            }
        };
        self.arm_free = media_end;
        if !self.segs.is_empty() {
            let i = partial.unwrap_or_else(|| self.lru.oldest());
            let mut start = if partial.is_some() { self.segs[i].start.min(s) } else { s };
            if self.spec.cache.read_any_free_blocks && partial.is_none() && slot > 0 {
                // DiskSim's `disk_buffer_seekdone` with "Read any free blocks" asks
                // `dm_latency_g1` for a zero-latency access from the first sector wanted to
                // the track's last sector: the head starts at the next sector boundary only
                // when it lands inside that span, past the first sector wanted; it then
                // keeps what comes round before that sector, the track from its first sector
                // on. Landing before it (or in the track's last sector), it waits for it and
                // keeps nothing more. `disk_buffer_block_available` takes a block below the
                // segment's start only while the segment is empty: a miss that reads into a
                // segment already holding data (a partial hit) keeps nothing more either.
                if wait / slot > first.sector as u64 {
                    start = start.min(media_start - first.sector as u64);
                }
            }
            self.segs[i] = Segment { start: start.max(e.saturating_sub(self.seg_sectors)), end: e };
            self.lru.touch(i);
            self.start_stream(i, e, run.resume, e, Some((e - 1, run.last)));
        }
        Access { done: Time(done), seek_cylinders: dcyl, positioning: Duration(pos), cache_hit: false }
    }

    /// The sector after the last one a read miss of `s..e` must have in the buffer (its
    /// media transfer starting at `media_start`, what is before already buffered) before the
    /// drive reselects to send: the read watermark (`BusProtocol::read_watermark`), at least
    /// the first sector it reads from the media.
    #[inline]
    fn read_watermark_end(&self, s: u64, e: u64, media_start: u64) -> u64 {
        let p = &self.spec.bus_protocol;
        let n = e - s;
        let base = if p.watermark_by_request { n.min(self.seg_sectors.max(1)) } else { self.seg_sectors };
        let watermark = ((base as f64 * p.read_watermark) as u64).max(1).min(n);
        // (a partial hit whose buffered part already covers the watermark still starts
        // sending with the first sector read from the media, as before; DiskSim's
        // immediate transfer of partial hits measured worse on the five other drives)
        (s + watermark).max(media_start + 1).min(e)
    }

    /// When a read miss lets its bus go and when it asks for it again, its media `run`
    /// under way: the bus protocol around it (`BusProtocol`, DiskSim's `disk_read_arrive`
    /// and `disk_check_bus`). The drive disconnects after the command overhead `over`; it
    /// reselects once the watermark is in (and the disconnect is done), then prepares the
    /// data and sends it at the bus rate, never ahead of the media ([`Hdd::read_done`]).
    /// With no protocol overheads and a watermark of one sector: the bus starts with the
    /// first sector read.
    #[inline]
    fn read_miss_bus(&self, now: u64, over: u64, run: &MediaRun) -> (u64, u64) {
        let p = &self.spec.bus_protocol;
        let disconnect = match self.last_dir {
            Dir::Read => p.read_disconnect_after_read.0,
            Dir::Write => p.read_disconnect_after_write.0,
        };
        let gone = now + over + disconnect;
        (gone, run.at_mark.min(run.end).max(gone))
    }

    /// When a read of `s..e` whose bus transfer starts at `send` completes: never ahead of
    /// the media (its last sector + one bus sector, and `run.bus_floor`).
    #[inline]
    fn read_done(&self, send: u64, s: u64, e: u64, run: &MediaRun) -> u64 {
        (send + self.bus_time(e - s)).max(run.end + self.bus).max(run.bus_floor)
            + self.spec.overheads.read_completion.0
    }

    #[inline]
    fn hit(&self, now: u64, over: u64, sectors: u64) -> Access {
        Access {
            done: Time(
                now + over
                    + self.spec.bus_protocol.data_prep.0
                    + self.bus_time(sectors)
                    + self.spec.overheads.read_completion.0,
            ),
            seek_cylinders: 0,
            positioning: Duration::ZERO,
            cache_hit: true,
        }
    }

    /// `hit`: the buffer takes the write at once (a fast write).
    fn overhead_write(&self, hit: bool) -> u64 {
        let o = &self.spec.overheads;
        match (hit, self.last_dir) {
            (false, Dir::Read) => o.write_after_read.0,
            (false, Dir::Write) => o.write_after_write.0,
            (true, Dir::Read) => o.write_hit_after_read.0,
            (true, Dir::Write) => o.write_hit_after_write.0,
        }
    }

    fn write(&mut self, now: u64, s: u64, e: u64) -> Access {
        use crate::spec::FastWrite;
        let fast = self.spec.cache.fast_write;
        let completion = self.spec.overheads.write_completion.0;
        self.stop_stream(now);
        self.invalidate(s, e);
        if fast == FastWrite::Off || e - s > self.seg_sectors {
            // Write-through (DiskSim's `disk_write_arrive`, `disk_check_bus`): the data
            // crosses the bus after the command overhead while the arm moves; the media
            // writes each sector once it is in the buffer; the drive disconnects after the
            // data and reselects for the status once the media write is done.
            let p = self.spec.bus_protocol;
            let extra =
                p.extra_write_disconnect.filter(|_| self.last_dir == Dir::Write && s != self.last_end);
            let (arm_start, xfer_start, disconnect, reselect) = match extra {
                Some(x) => (
                    now + x.command.0 + x.seek_delta.0,
                    now + x.command.0
                        + x.disconnect.0
                        + x.inter_disconnect.0
                        + p.reselect_first.0
                        + p.data_prep.0,
                    x.second_disconnect.0,
                    p.reselect_other.0,
                ),
                None => {
                    let over = self.overhead_write(false);
                    (now + over, now + over + p.data_prep.0, p.write_disconnect.0, p.reselect_first.0)
                }
            };
            let t0 = arm_start.max(self.arm_free);
            let MediaRun { end: media_end, dcyl, pos, .. } =
                self.media(t0, s, e, true, Some(self.write_data(xfer_start, e - s)), e);
            self.arm_free = media_end;
            if self.spec.cache.read_hits_on_write_data && !self.segs.is_empty() {
                self.keep_write_data(s, e);
            }
            let gone = xfer_start + self.bus_w * (e - s) + disconnect;
            let back = media_end.max(gone);
            self.disconnect = Some((Time(gone), Time(back)));
            return Access {
                done: Time(back + reselect + completion),
                seek_cylinders: dcyl,
                positioning: Duration(pos),
                cache_hit: false,
            };
        }
        if self.spec.disksim {
            return self.disksim_fast_write(now, s, e);
        }
        // Fast write: into the buffer now (level 1: once the previous destage is done),
        // onto the media behind the completion.
        let start = if fast == FastWrite::Sequential { now.max(self.arm_free) } else { now };
        let over = self.overhead_write(true);
        let xfer_start = start + over + self.spec.bus_protocol.data_prep.0;
        let in_buffer = xfer_start + self.bus_w * (e - s);
        let MediaRun { end: media_end, dcyl, pos, .. } = self.media(
            (start + over).max(self.arm_free),
            s,
            e,
            true,
            Some(self.write_data(xfer_start, e - s)),
            e,
        );
        self.arm_free = media_end.max(in_buffer);
        if self.spec.cache.read_hits_on_write_data && !self.segs.is_empty() {
            self.keep_write_data(s, e);
        }
        Access {
            done: Time(in_buffer + completion),
            seek_cylinders: dcyl,
            positioning: Duration(pos),
            cache_hit: true,
        }
    }

    /// A fast write of `s..e` arriving at `now` under DiskSim's rules (see the module doc):
    /// taken at once on free heads, appended to the segment being destaged, or refused
    /// until the heads are free.
    fn disksim_fast_write(&mut self, now: u64, s: u64, e: u64) -> Access {
        let p = self.spec.bus_protocol;
        let over = self.overhead_write(true);
        let n = e - s;
        let busy = now < self.arm_free;
        let append = self.write_back.filter(|w| {
            busy && self.spec.cache.combine_sequential_writes
                && s == w.end
                && now >= w.waiting_until
                && s - w.owner_start < self.seg_sectors
        });
        let (xfer_start, media_end, dcyl, pos) = match append {
            Some(w) => {
                let xfer_start = now + over + p.data_prep.0;
                let data = self.write_data(xfer_start, n);
                let owner_end = self.write_on(w.pass_end, s, e, data);
                let MediaRun { end, dcyl, pos, .. } = self.media(owner_end, s, e, true, Some(data), e);
                self.write_back =
                    Some(WriteBack { end: e, owner_start: s, pass_end: end, waiting_until: owner_end });
                (xfer_start, end, dcyl, pos)
            }
            None => {
                let (arm_start, xfer_start) = if busy {
                    let free = self.arm_free;
                    (
                        free.max(now + over),
                        free.max(now + over + p.write_disconnect.0) + p.reselect_first.0 + p.data_prep.0,
                    )
                } else {
                    (now + over, now + over + p.data_prep.0)
                };
                let data = self.write_data(xfer_start, n);
                let MediaRun { end, dcyl, pos, .. } = self.media(arm_start, s, e, true, Some(data), e);
                self.write_back = Some(WriteBack { end: e, owner_start: s, pass_end: end, waiting_until: 0 });
                (xfer_start, end, dcyl, pos)
            }
        };
        self.arm_free = media_end;
        if self.spec.cache.read_hits_on_write_data && !self.segs.is_empty() {
            self.keep_write_data(s, e);
        }
        Access {
            done: Time(xfer_start + self.bus_w * n + self.spec.overheads.write_completion.0),
            seek_cylinders: dcyl,
            positioning: Duration(pos),
            cache_hit: true,
        }
    }

    /// A destage pass that has just written the sector before `s` (at `t`) writes on into
    /// `s..e` while each sector is buffered by the time its slot comes round (`data`),
    /// and stops at the first that is not; returns when it stops (the heads are then over
    /// that sector's track).
    fn write_on(&mut self, t: u64, s: u64, e: u64, data: WriteData) -> u64 {
        let mut t = t;
        let prev = self.geo.locate(s.saturating_sub(1));
        let mut cur = self.geo.locate(s);
        let buffered = |x: u64, t: u64| data.at(x - s) <= t;
        // (DiskSim's `disk_buffer_request_complete` checks at the end of a track's last
        // sector, before moving on: with nothing more buffered the pass ends there)
        if (cur.cylinder, cur.head) != (prev.cylinder, prev.head) && !buffered(s, t) {
            return t;
        }
        t += self.write_step(t, &prev, &cur);
        self.head_track_end = 0;
        let mut lbn = s;
        while lbn < e {
            if !buffered(lbn, t) {
                break;
            }
            let z = &self.geo.zones[cur.zone as usize];
            t += z.slot_start(cur.slot as u64 + 1) - z.slot_start(cur.slot as u64);
            self.lag(cur.zone as usize, 1, 0);
            lbn += 1;
            if lbn == e {
                break;
            }
            let next = self.geo.locate(lbn);
            if (next.cylinder, next.head) != (cur.cylinder, cur.head) && !buffered(lbn, t) {
                break;
            }
            t += self.write_step(t, &cur, &next);
            cur = next;
        }
        t
    }

    /// The LBNs on the track of `lbn` (at `loc`), `behind` of them known to be on it
    /// before `lbn`.
    fn track_lbns(&self, lbn: u64, loc: &Location, behind: u64) -> u64 {
        let z = &self.geo.zones[loc.zone as usize];
        if !z.remapped() {
            return z.spt as u64;
        }
        let on = |x: u64| {
            let l = self.geo.locate(x);
            (l.cylinder, l.head) == (loc.cylinder, loc.head)
        };
        // how many before `lbn` are on the track: at least `behind`, at most spt - 1
        let (mut lo, mut hi) = (behind, (z.spt as u64).min(lbn + 1));
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if on(lbn - mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo + self.lbns_on_track(lbn, loc, z.spt as u64)
    }

    /// How many of the `want` LBNs from `lbn` (at `loc`) lie on its track: all, unless the
    /// track's remaining slots include some that hold no LBN (spares at a track's or a
    /// range's end, slips) and the run reaches past its last LBN.
    #[inline]
    fn lbns_on_track(&self, lbn: u64, loc: &Location, want: u64) -> u64 {
        self.track_run(lbn, loc, want).0
    }

    /// [`Hdd::lbns_on_track`], and where the run's last LBN is.
    fn track_run(&self, lbn: u64, loc: &Location, want: u64) -> (u64, Location) {
        let last = (lbn + want).min(self.capacity()) - 1;
        let on = |x: u64| {
            let l = self.geo.locate(x);
            ((l.cylinder, l.head) == (loc.cylinder, loc.head)).then_some(l)
        };
        if let Some(l) = on(last) {
            return (last + 1 - lbn, l);
        }
        // the last LBN on the track: in lbn..last (lbn is on it, last is not)
        let (mut lo, mut hi, mut at) = (lbn, last, *loc);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match on(mid) {
                Some(l) => (lo, at) = (mid, l),
                None => hi = mid,
            }
        }
        (lo + 1 - lbn, at)
    }

    /// From the end of sector `from` at `t` to the start of sector `to` for a write: the
    /// slots between them on the same track, else a seek or head switch (+ settle) and the
    /// rotational wait (a positioning: DiskSim's angle, the arm moves).
    fn write_step(&mut self, t: u64, from: &Location, to: &Location) -> u64 {
        if (to.cylinder, to.head) == (from.cylinder, from.head) {
            return self.slots_ahead(from, to);
        }
        let (mv, _) = self.move_time(from.cylinder, from.head, to, true);
        let wait = self.rot_wait(to, t + mv);
        self.lag(to.zone as usize, 0, 1);
        self.head_cyl = to.cylinder;
        self.head_head = to.head;
        mv + wait
    }

    /// Time from the end of `a`'s slot until the start of `b`'s, on the same track.
    #[inline]
    fn slots_ahead(&self, a: &Location, b: &Location) -> u64 {
        let z = &self.geo.zones[a.zone as usize];
        let from = a.slot as u64 + 1;
        let to = if (b.slot as u64) < from { b.slot as u64 + z.spt as u64 } else { b.slot as u64 };
        z.slot_start(to) - z.slot_start(from)
    }

    /// How a write of `n` sectors whose data starts crossing the bus at `from` reaches the
    /// buffer. DiskSim's `disk_buffer_block_available` lets the media write a sector once it
    /// is buffered, and on a drive with "Extra write disconnect" only once `min(n, 10)`
    /// sectors (15 for requests of 45 sectors or more) are.
    fn write_data(&self, from: u64, n: u64) -> WriteData {
        let first = match self.spec.bus_protocol.extra_write_disconnect {
            Some(_) if n < 45 => n.min(10),
            Some(_) => 15,
            None => 1,
        };
        WriteData { from, per: self.bus_w, first }
    }

    /// The data of a write of `s..e` stays readable (`read_hits_on_write_data`): in the
    /// dedicated write segment if there is one, else in the least recently used segment.
    fn keep_write_data(&mut self, s: u64, e: u64) {
        let seg = Segment { start: s.max(e.saturating_sub(self.seg_sectors)), end: e };
        if self.read_segs < self.segs.len() {
            self.segs[self.read_segs] = seg;
        } else {
            let i = self.lru.oldest();
            self.segs[i] = seg;
            self.lru.touch(i);
        }
    }

    /// Drop read-cache data the media write of `s..e` makes stale.
    fn invalidate(&mut self, s: u64, e: u64) {
        for seg in &mut self.segs {
            if seg.start < e && s < seg.end {
                *seg = Segment { start: 0, end: 0 };
            }
        }
    }

    /// Arm movement from cylinder `cyl`, surface `head` to `to`: a seek, a head switch or
    /// nothing, plus the write settle for a write that moved.
    #[inline]
    fn move_time(&self, cyl: u32, head: u32, to: &Location, write: bool) -> (u64, u32) {
        let dcyl = to.cylinder.abs_diff(cyl);
        let mut mv = if dcyl > 0 {
            self.seek.time(dcyl).0
        } else if to.head != head {
            self.head_switch
        } else {
            0
        };
        if write && mv > 0 {
            mv = (mv + self.write_settle).saturating_sub(self.write_settle_off);
        }
        if write {
            // DiskSim's "Minimum seek delay": writes only, with or without movement
            mv = mv.max(self.spec.min_seek.0);
        }
        (mv, dcyl)
    }

    /// Position from the current arm position to `start` at `t0`, transfer `start..end`
    /// ([`MediaRun`]; its `at_mark` is when every sector before `mark`, in
    /// `start + 1..=end`, has left the media, head and cylinder switches included).
    ///
    /// `ready`: when a write's sectors are in the buffer ([`WriteData`]); a sector whose
    /// slot comes round before its data is written a revolution later (DiskSim's
    /// `disk_buffer_sector_done` writes only buffered sectors).
    fn media(
        &mut self,
        t0: u64,
        start: u64,
        end: u64,
        write: bool,
        ready: Option<WriteData>,
        mark: u64,
    ) -> MediaRun {
        let rev = self.rev;
        let mut cur = self.geo.locate(start);
        let first = cur;
        let (mv, dcyl) = self.move_time(self.head_cyl, self.head_head, &cur, write);
        // DiskSim's `disk_check_hda`: the command overhead and the stopped read-ahead's
        // pending event both delay the seek, added
        let stop = std::mem::take(&mut self.seek_stop).saturating_sub(self.last_now.0);
        let mut t = t0 + stop + mv;
        // DiskSim's zero-latency access may start at once, past the first sector wanted
        let (wait, mut imm) = self.start_wait(&cur, t, write);
        let pos = mv + wait;
        t += wait;
        self.lag(cur.zone as usize, 0, 1);
        let mut resume;
        let mut lbn = start;
        let mut track_end;
        let mut last;
        let mut at_mark = u64::MAX;
        let mut idle = 0;
        let mut bus_floor = 0;
        loop {
            let z = &self.geo.zones[cur.zone as usize];
            if let Some((_, j)) = imm {
                let slots = (z.spt - cur.sector) as u64;
                let n = (end - lbn).min(slots);
                let r = self.immediate_track(&cur, lbn, lbn + n, j, t, ready.map(|d| (d, start)), mark);
                if ready.is_none() && self.spec.disksim {
                    // in order from W after the turn; what was taken before it goes at once
                    bus_floor = bus_floor
                        .max(r.first_in + (end - lbn) * self.bus)
                        .max(r.done + (end - r.last_taken) * self.bus);
                }
                if let Some(m) = r.at_mark {
                    at_mark = m;
                }
                (t, last, track_end, resume) = (r.done, r.last, lbn + slots, r.resume);
                lbn += n;
                self.lag(cur.zone as usize, r.passed, 0);
                if lbn >= end {
                    break;
                }
                (cur, t, imm) = self.next_track(&cur, lbn, t, write);
                continue;
            }
            if ready.is_none() && self.spec.disksim {
                // DiskSim's bus sends what is buffered and waits at each gap: from the end of
                // this track's first sector the rest of the request takes `end - lbn` bus
                // sectors
                let first_in = t + z.slot_start(cur.slot as u64 + 1) - z.slot_start(cur.slot as u64);
                bus_floor = bus_floor.max(first_in + (end - lbn) * self.bus);
            }
            let slots = (z.spt - cur.sector) as u64;
            let n = if z.remapped() {
                // a track may hold fewer LBNs than slots: the run ends at its last LBN (and
                // where the track ends is left to a lookup)
                track_end = 0;
                let (n, at) = self.track_run(lbn, &cur, (end - lbn).min(slots));
                last = at;
                n
            } else {
                track_end = lbn + slots;
                let n = (end - lbn).min(slots);
                last = Location {
                    sector: cur.sector + n as u32 - 1,
                    slot: ((cur.slot as u64 + n - 1) % z.spt as u64) as u32,
                    ..cur
                };
                n
            };
            if ready.is_none() && lbn < mark && mark <= lbn + n {
                at_mark = t + z.slot_start(cur.slot as u64 + (mark - lbn)) - z.slot_start(cur.slot as u64);
            }
            match ready {
                // sector by sector, unless the first is buffered and the bus outruns the
                // head (then every later one is too)
                Some(data) if data.at(lbn - start) > t || data.per > rev / z.spt as u64 => {
                    // DiskSim steps round the track LBN by LBN, a sector time each and a
                    // sector event each (`disk_buffer_sector_done`), until the sector is
                    // buffered: a cycle is the track's LBNs, not a revolution
                    let mut cycle = None;
                    for j in 0..n {
                        let at = data.at(lbn + j - start);
                        if at > t {
                            let (len, ring) =
                                *cycle.get_or_insert_with(|| match self.sector_ps.get(cur.zone as usize) {
                                    Some(&ps) => {
                                        let ring = self.track_lbns(lbn + j, &cur, j);
                                        (ring * ps / 1000, ring)
                                    }
                                    None => (rev, 0),
                                });
                            let k = (at - t).div_ceil(len);
                            t += k * len;
                            idle += k * ring;
                        }
                        let p = cur.slot as u64 + j;
                        t += z.slot_start(p + 1) - z.slot_start(p);
                    }
                }
                _ => t += z.slot_start(cur.slot as u64 + n) - z.slot_start(cur.slot as u64),
            }
            lbn += n;
            resume = t;
            self.lag(cur.zone as usize, n + std::mem::take(&mut idle), 0);
            if lbn >= end {
                break;
            }
            (cur, t, imm) = self.next_track(&cur, lbn, t, write);
        }
        debug_assert!(t >= t0 && rev > 0);
        self.head_cyl = cur.cylinder;
        self.head_head = cur.head;
        self.head_track_end = track_end;
        MediaRun { end: t, dcyl, pos, wait, first, last, at_mark: at_mark.min(t), bus_floor, resume }
    }

    /// A run moves on from the track of `cur` at `t` to the one holding `lbn`: a head
    /// switch or a seek, then the wait for `lbn` (or a zero-latency start). Where it is,
    /// when its first sector starts, and the zero-latency start if there is one.
    #[inline]
    fn next_track(
        &mut self,
        cur: &Location,
        lbn: u64,
        mut t: u64,
        write: bool,
    ) -> (Location, u64, Option<(u64, u32)>) {
        let next = self.geo.locate(lbn);
        t += if next.cylinder != cur.cylinder {
            self.seek.time(next.cylinder.abs_diff(cur.cylinder)).0
        } else {
            self.head_switch
        };
        let (wait, imm) = self.start_wait(&next, t, write);
        self.lag(next.zone as usize, 0, 1);
        (next, t + wait, imm)
    }

    /// From `t`, the wait before a run starts on the track of `loc`: at once when the drive
    /// takes it with zero latency there (and that start), else when `loc` comes round.
    #[inline]
    fn start_wait(&self, loc: &Location, t: u64, write: bool) -> (u64, Option<(u64, u32)>) {
        let imm = self.immediate_start(loc, t, write);
        (imm.map_or_else(|| self.rot_wait(loc, t), |(w, _)| w), imm)
    }

    /// DiskSim's angle (`disksim`): `sectors` sector events in `zone` after
    /// `positionings` seeks or head switches.
    #[inline]
    fn lag(&mut self, zone: usize, sectors: u64, positionings: u64) {
        let Some(&per) = self.sector_lag.get(zone) else { return };
        self.lag_units += sectors * per + positionings * POSITIONING_LAG;
        self.lag_ns = ((self.lag_units as u128 * self.rev as u128) >> LAG_UNIT_BITS) as u64 % self.rev;
    }

    /// DiskSim's angle: the sector events of read-ahead from `st.counted` up to `front`
    /// (each track it moved on to is a head switch or a one-cylinder seek: as many as
    /// track lengths it read, on average; one more or less is half a nanosecond).
    fn lag_read_ahead(&mut self, st: &Stream, front: u64) {
        if self.sector_lag.is_empty() || front <= st.counted {
            return;
        }
        let n = front - st.counted;
        let spt = self.geo.zones[st.zone].spt as u64;
        self.lag(st.zone, n, (n + spt / 2) / spt);
    }

    /// Time from `t` until the start of `loc`'s slot passes under the head.
    #[inline]
    fn rot_wait(&self, loc: &Location, t: u64) -> u64 {
        let target = self.geo.zones[loc.zone as usize].slot_start(loc.slot as u64);
        // DiskSim's platters (`disksim`) are where true ones were `lag_ns` earlier
        let phase = self.rev_div.rem(t + self.rev - self.lag_ns);
        if target >= phase {
            target - phase
        } else {
            target + self.rev - phase
        }
    }

    // ---- read-ahead stream ----

    /// Where read-ahead stops after a request ending at `last_end` on segment `seg`:
    /// `max_read_ahead_sectors` past it, or with DiskSim's DEC prefetch scheme
    /// (`read_ahead_to_track_end`) the end of the track holding `last_end`, one track
    /// further when the segment's data began before that track.
    /// The location of `last_end` comes back too, when it was looked up.
    fn read_ahead_stop(&self, seg: usize, last_end: u64) -> (u64, Option<(u64, Location)>) {
        let cap = self.capacity();
        if !self.spec.cache.read_ahead_to_track_end {
            let stop = last_end.saturating_add(self.max_ra).min(cap);
            return (self.within_track_or_cylinder(last_end, stop), None);
        }
        if last_end >= cap {
            return (cap, None);
        }
        let loc = self.geo.locate(last_end);
        let track_start = last_end - loc.sector as u64;
        let mut stop = track_start + self.geo.zones[loc.zone as usize].spt as u64;
        if self.segs[seg].start < track_start {
            stop += self.geo.sectors_per_track(self.segs[seg].start) as u64;
        }
        (stop.min(cap), Some((last_end, loc)))
    }

    /// `stop`, or earlier the first sector past `last_end - 1`'s track (or cylinder) with
    /// [`CacheSpec::read_ahead_within`](crate::spec::CacheSpec::read_ahead_within): the
    /// sectors of a track are consecutive LBNs, so a binary search finds it.
    fn within_track_or_cylinder(&self, last_end: u64, stop: u64) -> u64 {
        let Some(within) = self.spec.cache.read_ahead_within else { return stop };
        if last_end == 0 || last_end >= stop {
            return stop;
        }
        let here = self.geo.locate(last_end - 1);
        let same = |lbn: u64| {
            let l = self.geo.locate(lbn);
            l.cylinder == here.cylinder && (within == ReadAheadWithin::Cylinder || l.head == here.head)
        };
        // the first LBN in last_end..stop off the track (cylinder), or stop
        let (mut lo, mut hi) = (last_end, stop);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if same(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// `before`: the location of `origin - 1`, when the caller has it.
    fn start_stream(
        &mut self,
        seg: usize,
        origin: u64,
        t: u64,
        last_end: u64,
        before: Option<(u64, Location)>,
    ) {
        let (stop, ended) = self.read_ahead_stop(seg, last_end);
        if origin >= stop {
            self.stream = None;
            return;
        }
        let zone = self.geo.zone_index(origin);
        let mut st = Stream {
            seg,
            origin_lbn: origin,
            origin_time: t,
            counted: origin,
            zone,
            stop,
            stop_time: 0,
            stop_track: (0, 0),
        };
        self.set_stop(&mut st, stop, &[before, ended]);
        self.stream = Some(st);
    }

    /// A hit or continuation at `now` (frontier `front`) on the streaming segment, by a
    /// request ending at `e`: push the read-ahead limit, resuming read-ahead if it had
    /// stopped.
    fn extend_stream(&mut self, now: u64, front: u64, e: u64) {
        let Some(mut st) = self.stream else { return };
        let (want, _) = self.read_ahead_stop(st.seg, e);
        if want <= st.stop {
            return;
        }
        if front >= st.stop && !self.spec.cache.read_ahead_on_idle_hit {
            return;
        }
        if front >= st.stop {
            // Stopped at its limit: the data so far is the segment; resume from `front`
            // when that sector next passes under the head (the arm is still on its track).
            self.lag_read_ahead(&st, front);
            let seg = &mut self.segs[st.seg];
            seg.start = seg.start.max(front.saturating_sub(self.seg_sectors));
            seg.end = front;
            if front >= self.capacity() {
                self.stream = None;
                return;
            }
            let loc = self.geo.locate(front);
            let t = now + self.rot_wait(&loc, now);
            self.start_stream(st.seg, front, t, e, None);
            return;
        }
        // Rebase to the frontier's zone so later lookups stay O(1) (DiskSim's sector-exact
        // read-ahead keeps its origin: the walk starts there).
        while !self.spec.disksim
            && st.zone + 1 < self.geo.zones.len()
            && self.geo.zones[st.zone].end_lbn <= front
        {
            let z = &self.geo.zones[st.zone];
            st.origin_time += z.stream_time(z.end_lbn - st.origin_lbn);
            st.origin_lbn = z.end_lbn;
            st.zone += 1;
        }
        self.set_stop(&mut st, want, &[]);
        self.stream = Some(st);
    }

    /// Read-ahead stops at `now` (the head is needed elsewhere): the segment keeps what was
    /// read, the arm is over the frontier's track.
    fn stop_stream(&mut self, now: u64) {
        let Some(st) = self.stream.take() else { return };
        if self.spec.disksim {
            // DiskSim's `disk_buffer_stopable_access`: the read-ahead's pending event (the
            // sector under the head, the first sector after a switch, the switch itself)
            // still happens, and the next seek waits for it (`disk_seek_stoptime`); the arm
            // is over that event's track
            let at = self.stream_walk(&st, now, u64::MAX);
            self.lag_read_ahead(&st, at.front);
            if !self.spec.cache.stop_read_ahead_in_sector {
                self.seek_stop = at.next_event;
            }
            let seg = &mut self.segs[st.seg];
            seg.start = seg.start.max(at.front.saturating_sub(self.seg_sectors));
            seg.end = at.front;
            self.head_cyl = at.cylinder;
            self.head_head = at.head;
            self.head_track_end = 0;
            return;
        }
        let front = self.frontier(&st, now);
        self.lag_read_ahead(&st, front);
        let seg = &mut self.segs[st.seg];
        seg.start = seg.start.max(front.saturating_sub(self.seg_sectors));
        seg.end = front;
        // The arm is over the track of the last sector read ahead (front - 1 >= origin - 1,
        // the last sector of the request that started the stream).
        if front > self.head_track_end {
            let loc = self.geo.locate(front.saturating_sub(1).min(self.capacity() - 1));
            self.head_cyl = loc.cylinder;
            self.head_head = loc.head;
            // not tracked further: force a lookup next time
            self.head_track_end = 0;
        }
    }

    /// Read-ahead now runs until every sector before `stop` is read: when that is, and
    /// (`disksim`) the track the arm is then over.
    /// `known`: locations the caller has already looked up.
    fn set_stop(&mut self, st: &mut Stream, stop: u64, known: &[Option<(u64, Location)>]) {
        st.stop = stop;
        st.stop_time = u64::MAX;
        if self.spec.disksim {
            // the plan's own end (not `stream_walk`, whose shortcut is what this sets up)
            self.plan_stream(st, known);
            let at = self.walk_plan(&self.walk, st, u64::MAX, stop);
            st.stop_time = at.at;
            st.stop_track = (at.cylinder, at.head);
        } else {
            st.stop_time = self.stream_time_at(st, stop);
        }
    }

    /// How far read-ahead has got at `t`: the first sector not yet read.
    #[inline]
    fn frontier(&self, st: &Stream, t: u64) -> u64 {
        if self.spec.disksim {
            return self.stream_walk(st, t, u64::MAX).front;
        }
        if t >= st.stop_time {
            return st.stop;
        }
        if t <= st.origin_time {
            return st.origin_lbn;
        }
        let (mut lbn, mut time, mut zi) = (st.origin_lbn, st.origin_time, st.zone);
        loop {
            let z = &self.geo.zones[zi];
            let to_end = z.stream_time(z.end_lbn - lbn);
            if t - time < to_end || zi + 1 == self.geo.zones.len() {
                return (lbn + z.stream_sectors(t - time)).min(z.end_lbn).min(st.stop);
            }
            time += to_end;
            lbn = z.end_lbn;
            zi += 1;
        }
    }

    /// When read-ahead will have read every sector before `x` (x >= origin).
    fn stream_time_at(&self, st: &Stream, x: u64) -> u64 {
        if self.spec.disksim {
            return self.stream_walk(st, u64::MAX, x).at;
        }
        let (mut lbn, mut time, mut zi) = (st.origin_lbn, st.origin_time, st.zone);
        loop {
            let z = &self.geo.zones[zi];
            if x <= z.end_lbn || zi + 1 == self.geo.zones.len() {
                return time + z.stream_time(x.saturating_sub(lbn));
            }
            time += z.stream_time(z.end_lbn - lbn);
            lbn = z.end_lbn;
            zi += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin;

    fn wd() -> Hdd {
        Hdd::new(builtin("wd5000aaks").unwrap())
    }

    /// Deterministic pseudo-random LBNs (an LCG; tests draw no real randomness).
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (((self.0 >> 11) as u128 * n as u128) >> 53) as u64
        }
    }

    /// Closed-loop synchronous stream of `n` requests of `len` sectors from `start`,
    /// zero think time; returns bytes per second.
    fn sequential_rate(h: &mut Hdd, start: u64, len: u32, n: u64) -> f64 {
        let t0 = Time(0);
        let mut t = t0;
        for i in 0..n {
            t = h.access(t, start + i * len as u64, len, Dir::Read).done;
        }
        (n * len as u64 * 512) as f64 / (t - t0).as_secs_f64()
    }

    #[test]
    fn sequential_4k_reads_approach_the_media_rate() {
        let mut h = wd();
        let media = h.geometry().streaming_rate(0);
        let rate = sequential_rate(&mut h, 0, 8, 20_000);
        assert!(
            rate > 0.9 * media && rate < 1.01 * media,
            "{:.1} MB/s vs media {:.1}",
            rate / 1e6,
            media / 1e6
        );
        // inner zone too
        let mut h = wd();
        let inner = h.capacity() - 100_000;
        let media = h.geometry().streaming_rate(inner);
        let rate = sequential_rate(&mut h, inner, 8, 10_000);
        assert!(
            rate > 0.9 * media && rate < 1.01 * media,
            "{:.1} MB/s vs media {:.1}",
            rate / 1e6,
            media / 1e6
        );
    }

    #[test]
    fn without_cache_sequential_4k_reads_lose_a_revolution_each() {
        let mut h = Hdd::new(builtin("wd5000aaks").unwrap().without_cache());
        let rev = h.geometry().revolution().as_secs_f64();
        let rate = sequential_rate(&mut h, 0, 8, 2_000);
        let per_req = 4096.0 / rate;
        assert!(per_req > 0.9 * rev && per_req < 1.1 * rev, "{per_req} s per request vs rev {rev}");
    }

    #[test]
    fn one_mib_read_takes_its_media_time() {
        let mut h = wd();
        let z = h.geometry().zones[0];
        let rev = h.geometry().revolution().0;
        // start mid-track so the transfer crosses a head switch (covered by the skew)
        let start = z.spt as u64 / 2;
        let a = h.access(Time(0), start, 2048, Dir::Read);
        let over = h.spec().overheads.read_miss_after_read.0;
        let media = (a.done.0 - over - a.positioning.0) as f64;
        let expect = (2048 + z.track_skew as u64) as f64 * rev as f64 / z.spt as f64;
        assert!((media / expect - 1.0).abs() < 0.01, "media {media} vs {expect}");
        // back-to-back 1 MiB reads stream at the sustained rate
        let mut h = wd();
        let rate = sequential_rate(&mut h, 0, 2048, 200);
        let sustained = h.geometry().streaming_rate(0);
        assert!(rate > 0.9 * sustained && rate < 1.01 * sustained, "{} vs {}", rate / 1e6, sustained / 1e6);
    }

    fn random_mean_ms(h: &mut Hdd, span: u64, n: u32, dir: Dir) -> f64 {
        let mut rng = Lcg(42);
        let mut t = Time(0);
        let mut total = 0u64;
        for _ in 0..n {
            let lbn = rng.below(span - 8) & !7;
            let a = h.access(t, lbn, 8, dir);
            total += (a.done - t).0;
            t = a.done;
        }
        total as f64 / n as f64 / 1e6
    }

    #[test]
    fn random_4k_reads_cost_seek_plus_half_a_turn() {
        let mut h = wd();
        let cap = h.capacity();
        let mean = random_mean_ms(&mut h, cap, 20_000, Dir::Read);
        let expect = 8.9 + 4.17 + 0.15;
        assert!((mean / expect - 1.0).abs() < 0.2, "mean {mean} ms vs {expect} ms ± 20%");
        // short stroke (1% of the disk) beats the full stroke
        let mut h = wd();
        let short = random_mean_ms(&mut h, cap / 100, 5_000, Dir::Read);
        assert!(short < mean - 4.0, "short-stroke {short} vs {mean}");
        // writes pay the write settle on top
        let mut h = wd();
        let w = random_mean_ms(&mut h, cap, 5_000, Dir::Write);
        assert!(w > mean && w < mean + 1.5, "writes {w} vs reads {mean}");
    }

    #[test]
    fn seek_cost_grows_with_distance() {
        for name in crate::builtin_names() {
            let h = Hdd::new(builtin(name).unwrap());
            let full = h.geometry().cylinders() - 1;
            let hs = h.spec().head_switch;
            assert!(hs < h.seek_time(1), "{name}: head switch beats a cylinder seek");
            let mut prev = Duration::ZERO;
            // (DiskSim's measured curves wobble at single-digit distances: ibm18es has
            // seek(10) < seek(1); compare distances an order of magnitude apart)
            for d in [1, 200, 2000, full / 3, full] {
                let t = h.seek_time(d);
                assert!(t > prev, "{name}: seek({d}) = {t} not above {prev}");
                prev = t;
            }
        }
        // and the same through access: one cylinder, a head switch, a full stroke
        let mut h = Hdd::new(builtin("wd5000aaks").unwrap().without_cache());
        let g = h.geometry().clone();
        let a = h.access(Time(0), 0, 8, Dir::Read);
        let sw = h.access(a.done, g.lbn_of(0, 1, 0).unwrap(), 8, Dir::Read);
        assert_eq!(sw.seek_cylinders, 0);
        let one = h.access(sw.done, g.lbn_of(1, 1, 0).unwrap(), 8, Dir::Read);
        assert_eq!(one.seek_cylinders, 1);
        let far = h.access(one.done, g.capacity() - 8, 8, Dir::Read);
        assert_eq!(far.seek_cylinders, g.cylinders() - 2);
        let rev = g.revolution();
        assert!(sw.positioning < h.spec().head_switch + rev);
        assert!(sw.positioning >= h.spec().head_switch);
        assert!(one.positioning >= h.seek_time(1));
        assert!(far.positioning >= h.seek_time(g.cylinders() - 2));
        assert!(far.positioning > one.positioning + Duration::from_millis(10));
    }

    #[test]
    fn rotational_position_follows_absolute_time() {
        let mut h = Hdd::new(builtin("wd5000aaks").unwrap().without_cache());
        let rev = h.geometry().revolution().0;
        let over = h.spec().overheads.read_miss_after_read.0;
        // Head on track 0. The read of slot 0 at time t waits until (t + over) reaches a
        // multiple of the revolution.
        let mut done = h.access(Time(0), 0, 1, Dir::Read).done;
        for k in 1..20u64 {
            let now = done + Duration(k * 777_777);
            let a = h.access(now, 0, 1, Dir::Read);
            done = a.done;
            let expect = (rev - (now.0 + over) % rev) % rev;
            assert_eq!(a.positioning.0, expect, "k={k}");
        }
    }

    #[test]
    fn cache_hits_partial_hits_and_invalidation() {
        let mut h = wd();
        let a = h.access(Time(0), 10_000, 8, Dir::Read);
        assert!(!a.cache_hit);
        // re-read: a hit, overhead + bus only
        let b = h.access(a.done, 10_000, 8, Dir::Read);
        assert!(b.cache_hit);
        let o = &h.spec().overheads;
        assert_eq!(b.done - a.done, o.read_hit_after_read + Duration(8 * h.bus));
        // idle 5 ms: read-ahead has filled ahead of the request
        let t = b.done + Duration::from_millis(5);
        let c = h.access(t, 10_008, 256, Dir::Read);
        assert!(c.cache_hit, "read-ahead covered it");
        // a far read elsewhere: a miss, stops read-ahead; the old segment stays valid
        let d = h.access(c.done, 500_000_000, 8, Dir::Read);
        assert!(!d.cache_hit && d.seek_cylinders > 1000);
        let e = h.access(d.done, 10_100, 8, Dir::Read);
        assert!(e.cache_hit);
        // a write over it invalidates
        let f = h.access(e.done, 10_100, 8, Dir::Write);
        assert!(!f.cache_hit);
        let g = h.access(f.done, 10_000, 8, Dir::Read);
        assert!(!g.cache_hit);
    }

    #[test]
    fn lru_replaces_the_oldest_segment() {
        let mut h = wd();
        let n = h.spec().cache.segments as u64;
        let mut t = Time(0);
        for i in 0..=n {
            t = h.access(t, i * 10_000_000, 8, Dir::Read).done;
        }
        // segment of request 0 was recycled for request n; request 1's is still there
        let a = h.access(t, 10_000_000, 8, Dir::Read);
        assert!(a.cache_hit);
        let b = h.access(a.done, 0, 8, Dir::Read);
        assert!(!b.cache_hit);
    }

    /// wd5000aaks with DiskSim's DEC prefetch scheme and room for four tracks of
    /// read-ahead, and its sectors per track on track 0.
    fn dec_prefetch_spec() -> (DiskSpec, u64) {
        let mut spec = builtin("wd5000aaks").unwrap();
        spec.cache.read_ahead_to_track_end = true;
        let spt = Hdd::new(spec.clone()).geo.sectors_per_track(0) as u64;
        spec.cache.max_read_ahead_sectors = 4 * spt as u32;
        spec.cache.segment_sectors = 4 * spt as u32;
        (spec, spt)
    }

    #[test]
    fn dec_prefetch_reads_ahead_to_the_track_end() {
        let (mut spec, spt) = dec_prefetch_spec();
        // long idle after a read of 0..8: read-ahead stopped at the end of track 0, not
        // `max_read_ahead_sectors` past 8
        for (lbn, hit) in [(spt - 8, true), (spt + 8, false)] {
            let mut h = Hdd::new(spec.clone());
            let t = h.access(Time(0), 0, 8, Dir::Read).done + Duration::from_secs(1);
            assert_eq!(h.access(t, lbn, 8, Dir::Read).cache_hit, hit, "lbn {lbn}");
        }
        // without the scheme the same read past the track is a hit
        spec.cache.read_ahead_to_track_end = false;
        let mut h = Hdd::new(spec);
        let t = h.access(Time(0), 0, 8, Dir::Read).done + Duration::from_secs(1);
        assert!(h.access(t, spt + 8, 8, Dir::Read).cache_hit);
    }

    #[test]
    fn a_write_settle_taken_off_shortens_write_moves_only() {
        let mut spec = builtin("wd5000aaks").unwrap();
        spec.write_settle = Duration::ZERO;
        spec.write_settle_off = Duration::from_micros(200);
        let h = Hdd::new(spec);
        let other_head = h.geo.locate(h.geo.sectors_per_track(0) as u64);
        assert_eq!(other_head.head, 1);
        assert_eq!(h.move_time(0, 0, &other_head, true).0, h.head_switch - 200_000);
        assert_eq!(h.move_time(0, 0, &other_head, false).0, h.head_switch);
        // no movement, nothing taken off
        assert_eq!(h.move_time(0, 1, &other_head, true).0, 0);
    }

    #[test]
    fn read_ahead_within_a_track_or_a_cylinder_stops_at_its_end() {
        let mut spec = builtin("wd5000aaks").unwrap();
        let geo = Hdd::new(spec.clone()).geo;
        let spt = geo.sectors_per_track(0) as u64;
        let cyl = geo.surfaces() as u64 * spt;
        assert!(geo.locate(cyl).cylinder == 1 && geo.locate(cyl - 1).cylinder == 0);
        spec.cache.max_read_ahead_sectors = (cyl + 4 * spt) as u32;
        spec.cache.segment_sectors = (cyl + 4 * spt) as u32;
        // long idle after a read of 0..8: how far did read-ahead get?
        let reach = |within: Option<ReadAheadWithin>, lbn: u64| {
            let mut s = spec.clone();
            s.cache.read_ahead_within = within;
            let mut h = Hdd::new(s);
            let t = h.access(Time(0), 0, 8, Dir::Read).done + Duration::from_secs(1);
            h.access(t, lbn, 8, Dir::Read).cache_hit
        };
        let track = Some(ReadAheadWithin::Track);
        let cylinder = Some(ReadAheadWithin::Cylinder);
        assert!(reach(track, spt - 8) && !reach(track, spt + 8));
        assert!(reach(cylinder, spt + 8) && reach(cylinder, cyl - 8) && !reach(cylinder, cyl + 8));
        assert!(reach(None, cyl + 8), "bounded by the read-ahead limit only");
    }

    /// A read starting right at a stopped segment's end: headway's built-in models extend
    /// that segment; DiskSim imports (`reuse_adjacent_segment` off) give it a fresh one,
    /// which with the DEC scheme then reads ahead one track less.
    #[test]
    fn a_read_at_a_segment_end_extends_it_unless_disksim() {
        let (mut spec, spt) = dec_prefetch_spec();
        for (reuse, hit) in [(true, true), (false, false)] {
            spec.cache.reuse_adjacent_segment = reuse;
            let mut h = Hdd::new(spec.clone());
            // read-ahead stops at the end of track 0; the next read starts right there
            let t = h.access(Time(0), 0, 8, Dir::Read).done + Duration::from_secs(1);
            let a = h.access(t, spt, 8, Dir::Read);
            assert!(!a.cache_hit);
            // extended segment (began on track 0): read-ahead to the end of track 2;
            // fresh segment (begins on track 1): to the end of track 1
            let t = a.done + Duration::from_secs(1);
            assert_eq!(h.access(t, 2 * spt + 8, 8, Dir::Read).cache_hit, hit, "reuse {reuse}");
        }
    }

    /// "Read any free blocks" as DiskSim's `disk_buffer_seekdone`, `dm_latency_g1` and
    /// `disk_buffer_block_available` take it: a miss into a fresh segment landing past its
    /// first sector keeps the track from its start; one landing before it keeps none of the
    /// sectors it waits over; a miss reading into a segment that holds data (a partial hit)
    /// keeps nothing more, wherever it lands.
    #[test]
    fn read_any_free_blocks_keeps_the_track_start_after_a_wrap_into_a_fresh_segment_only() {
        let mut spec = builtin("wd5000aaks").unwrap();
        spec.cache.read_any_free_blocks = true;
        spec.cache.segment_sectors = 8192;
        spec.cache.max_read_ahead_sectors = 8;
        let h = Hdd::new(spec.clone());
        let spt = h.geo.sectors_per_track(0) as u64;
        let (rev, over) = (h.rev, h.overhead_read(false));
        let slot = |h: &Hdd, lbn: u64| h.geo.zones[h.geo.locate(lbn).zone as usize].slot_start(1);
        // the first instant from `after` at which a miss on `lbn` (the arm over its track)
        // lands `before` slots ahead of it
        let landing = |h: &Hdd, after: Time, lbn: u64, before: u64| {
            let wait0 = h.rot_wait(&h.geo.locate(lbn), over);
            let phase = (wait0 + rev - (before * slot(h, lbn)) % rev) % rev;
            Time(after.0.div_ceil(rev) * rev + phase)
        };
        let target = spt / 2;
        // fresh segment: the arm is over track 0, no seek
        for (before, hit) in [(20, false), (spt - 20, true)] {
            let mut h = Hdd::new(spec.clone());
            let a = h.access(landing(&h, Time(0), target, before), target, 8, Dir::Read);
            assert!(!a.cache_hit);
            let b = h.access(a.done + Duration::from_secs(1), target - 8, 8, Dir::Read);
            assert_eq!(b.cache_hit, hit, "landing {before} slots before");
        }
        // partial hit: the segment holds target..target + 16 (read-ahead); the miss reads
        // from target + 16 on, landing past it, and keeps no more than before
        let mut h = Hdd::new(spec.clone());
        let a = h.access(landing(&h, Time(0), target, 20), target, 8, Dir::Read);
        let t = landing(&h, a.done + Duration::from_secs(1), target + 16, spt - 20);
        let b = h.access(t, target + 12, 16, Dir::Read);
        assert!(!b.cache_hit);
        assert!(h.access(b.done + Duration::from_secs(1), target + 8, 8, Dir::Read).cache_hit);
        let c = h.access(b.done + Duration::from_secs(2), target - 8, 8, Dir::Read);
        assert!(!c.cache_hit, "a partial hit keeps no more of the track");
    }

    #[test]
    fn read_ahead_is_bounded_and_resumes_on_hits() {
        let mut h = wd();
        let max_ra = h.spec().cache.max_read_ahead_sectors as u64;
        let a = h.access(Time(0), 0, 8, Dir::Read);
        // long idle: read-ahead stopped at its limit
        let t = a.done + Duration::from_secs(1);
        assert!(h.access(t, 8 + max_ra - 8, 8, Dir::Read).cache_hit);
        let beyond = h.access(t + Duration::from_millis(1), 8 + max_ra + 4096, 8, Dir::Read);
        assert!(!beyond.cache_hit);
        // a slow sequential reader (think time 1 ms) keeps hitting: read-ahead resumes
        let mut h = wd();
        let mut t = Time(0);
        let mut hits = 0;
        for i in 0..2000u64 {
            let r = h.access(t, i * 8, 8, Dir::Read);
            hits += r.cache_hit as u32;
            t = r.done + Duration::from_millis(1);
        }
        assert!(hits >= 1990, "hits {hits}");
    }

    /// DiskSim's bus protocol steps (`BusProtocol`), each where `disksim_diskctlr.c` takes it.
    #[test]
    fn bus_protocol_steps_as_disksim_takes_them() {
        use crate::spec::{BusProtocol, ExtraWriteDisconnect};
        let ms = Duration::from_millis;
        let mut spec = builtin("wd5000aaks").unwrap();
        spec.bus_per_sector = Duration(100_000);
        spec.bus_protocol = BusProtocol { data_prep: Duration(10_000), ..BusProtocol::default() };
        // a hit: overhead + data preparation + the bus
        let mut h = Hdd::new(spec.clone());
        let a = h.access(Time(0), 10_000, 8, Dir::Read);
        let b = h.access(a.done, 10_000, 8, Dir::Read);
        assert!(b.cache_hit);
        assert_eq!(b.done - a.done, spec.overheads.read_hit_after_read + Duration(10_000 + 8 * 100_000));

        // write-through: the media writes only sectors the bus has delivered (1 ms each here)
        spec.cache = crate::spec::CacheSpec::DISABLED;
        spec.bus_protocol.write_per_sector = ms(1);
        let mut h = Hdd::new(spec.clone());
        let w = h.access(Time(0), 0, 8, Dir::Write);
        assert!(w.done.0 >= spec.overheads.write_after_read.0 + 10_000 + 8_000_000, "{}", w.done);

        // the extra write disconnect: only for a write after a write it does not continue
        spec.bus_protocol.write_per_sector = Duration::ZERO;
        spec.bus_protocol.extra_write_disconnect =
            Some(ExtraWriteDisconnect { command: ms(50), ..ExtraWriteDisconnect::default() });
        let mut h = Hdd::new(spec.clone());
        let r = h.access(Time(0), 1_000_000, 8, Dir::Read);
        let after_read = h.access(r.done, 2_000_000, 8, Dir::Write);
        assert!((after_read.done - r.done) < ms(50), "after a read: {}", after_read.done - r.done);
        let seq = h.access(after_read.done, 2_000_008, 8, Dir::Write);
        assert!((seq.done - after_read.done) < ms(50), "sequential: {}", seq.done - after_read.done);
        let other = h.access(seq.done, 3_000_000, 8, Dir::Write);
        assert!((other.done - seq.done) >= ms(50), "extra disconnect: {}", other.done - seq.done);

        // "Minimum seek delay" holds back writes, moved or not, and never reads
        let mut spec = builtin("wd5000aaks").unwrap().without_cache();
        spec.min_seek = ms(3);
        let mut h = Hdd::new(spec);
        let mut t = Time(0);
        let (mut read_min, mut write_min) = (Duration(u64::MAX), Duration(u64::MAX));
        for i in 0..200u64 {
            let dir = if i % 2 == 0 { Dir::Read } else { Dir::Write };
            let a = h.access(t, (i * 7) % 64, 1, dir);
            let m = if dir == Dir::Read { &mut read_min } else { &mut write_min };
            *m = (*m).min(a.positioning);
            t = a.done + Duration(i * 37_123);
        }
        assert!(write_min >= ms(3), "write positioning {write_min}");
        assert!(read_min < ms(3), "read positioning {read_min}");
    }

    #[test]
    fn a_dedicated_write_segment_keeps_writes_out_of_the_read_segments() {
        let mut spec = builtin("wd5000aaks").unwrap();
        spec.cache.segments = 2;
        spec.cache.read_hits_on_write_data = true;
        spec.cache.fast_write = crate::spec::FastWrite::All;
        for dedicated in [false, true] {
            spec.cache.dedicated_write_segment = dedicated;
            let mut h = Hdd::new(spec.clone());
            let a = h.access(Time(0), 100_000, 8, Dir::Read);
            let w = h.access(a.done + Duration::from_millis(20), 900_000, 8, Dir::Write);
            let w2 = h.access(w.done + Duration::from_millis(20), 950_000, 8, Dir::Write);
            // the written data reads back from the buffer either way
            let r = h.access(w2.done + Duration::from_millis(20), 950_000, 8, Dir::Read);
            assert!(r.cache_hit, "dedicated {dedicated}");
            // with one read segment and one write segment the read data survives two writes
            let back = h.access(r.done, 100_016, 8, Dir::Read);
            assert_eq!(back.cache_hit, dedicated, "dedicated {dedicated}");
        }
    }

    #[test]
    fn lru_list_orders_by_recency() {
        let mut l = Lru::new(4);
        assert_eq!(l.oldest(), 0);
        l.touch(0);
        assert_eq!(l.oldest(), 1);
        l.touch(2);
        l.touch(1);
        assert_eq!(l.oldest(), 3);
        l.touch(3);
        assert_eq!(l.oldest(), 0);
        l.touch(3);
        l.touch(0);
        assert_eq!(l.oldest(), 2);
        let mut one = Lru::new(1);
        one.touch(0);
        assert_eq!(one.oldest(), 0);
    }

    #[test]
    fn deterministic() {
        let run = || {
            let mut h = wd();
            let mut rng = Lcg(7);
            let mut t = Time(0);
            let mut out = Vec::new();
            for i in 0..5000u64 {
                let lbn = if i % 3 == 0 {
                    rng.below(h.capacity() - 64)
                } else {
                    h.head_sector().min(h.capacity() - 64)
                };
                let dir = if i % 5 == 0 { Dir::Write } else { Dir::Read };
                let a = h.access(t, lbn, 1 + rng.below(64) as u32, dir);
                out.push(a);
                t = a.done + Duration(rng.below(3_000_000));
            }
            out
        };
        assert_eq!(run(), run());
    }

    /// DiskSim's angle (`disksim`): each sector passing under the head sets the platters
    /// back by just under 1/2^24 revolution (0.997-1.0 of it: DiskSim's truncated sector
    /// time), each positioning by 1.5/2^24; a later random read waits that much longer
    /// than on the exact drive (modulo a revolution). No read-ahead here (cache off), so
    /// only the requests' own sectors count.
    #[test]
    fn disksim_angle_lags_a_step_per_sector_event() {
        let spec =
            DiskSpec { cache: crate::spec::CacheSpec::DISABLED, ..builtin::builtin("cheetah9lp").unwrap() };
        let mut exact = Hdd::new(spec.clone());
        let mut ds = Hdd::new(DiskSpec { disksim: true, ..spec });
        let rev = exact.rev;
        let step = rev as f64 / (1u64 << 24) as f64;
        // the first access: no lag yet, the same answer
        let a = exact.access(Time(1_000_000), 500_000, 8, Dir::Read);
        assert_eq!(a, ds.access(Time(1_000_000), 500_000, 8, Dir::Read));
        let (mut t, mut sectors, mut tracks) = (a.done.0, 8u64, 1u64);
        // long reads: many tracks each
        for (i, lbn) in [(0, 2_000_000u64), (1, 7_000_000), (2, 12_000_000)] {
            let n = 4000 + 1000 * i;
            let (a, b) = (
                exact.access(Time(t), lbn, n as u32, Dir::Read),
                ds.access(Time(t), lbn, n as u32, Dir::Read),
            );
            let geo = exact.geometry();
            let track = |x: u64| {
                let l = geo.locate(x);
                l.cylinder as u64 * spec_surfaces(&exact) + l.head as u64
            };
            tracks += track(lbn + n - 1) - track(lbn) + 1;
            sectors += n;
            assert!(b.done >= a.done);
            t = b.done.0 + 50_000_000;
        }
        let (a, b) =
            (exact.access(Time(t), 3_333_333, 8, Dir::Read), ds.access(Time(t), 3_333_333, 8, Dir::Read));
        let late = (b.done.0 + rev - a.done.0) % rev;
        let (lo, hi) = (
            (0.997 * sectors as f64 + 1.5 * tracks as f64) * step,
            (sectors as f64 + 1.5 * tracks as f64) * step,
        );
        assert!(
            late as f64 >= lo - 2.0 && late as f64 <= hi + 2.0,
            "{late} ns late, expected {lo:.0}..{hi:.0}"
        );
        assert!(late > 2_000, "{late}");
    }

    /// DiskSim's fast-write rules on its own answers: the first thirteen requests of its
    /// `mixed-bursts` trace on cheetah9LP (writes refused while a destage runs, appends
    /// accepted and refused in turn, a read behind the destage), one command at a time
    /// as DiskSim's FCFS driver sends them, each response to the microsecond.
    #[test]
    fn a_kept_read_ahead_plan_answers_as_a_fresh_one() {
        // the plan a read miss keeps is built from locations the miss already looked up;
        // a plan made from scratch must answer every question the same
        let data = crate::reference_data();
        for drive in ["cheetah9LP", "atlas_III", "ibm18es"] {
            let spec = crate::parv::import(&data.join(format!("disksim-valid/{drive}.parv"))).unwrap();
            let mut h = Hdd::new(spec);
            let mut rng = 12345u64;
            let mut now = 0u64;
            let cap = h.capacity();
            let mut checked = 0;
            for _ in 0..300 {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let sector = (rng >> 20) % (cap - 64);
                let a = h.access(Time(now), sector, 8, Dir::Read);
                now = a.done.0;
                let Some(st) = h.stream else { continue };
                let mut fresh = walk::WalkPlan::default();
                h.plan_into(&st, &mut fresh, &[]);
                for k in 0..40u64 {
                    let t = now + k * 150_000;
                    let x = st.origin_lbn + k * 13;
                    for (t, x) in [(t, u64::MAX), (u64::MAX, x)] {
                        let kept = h.stream_walk(&st, t, x);
                        let ours = h.walk_plan(&fresh, &st, t, x);
                        assert_eq!(
                            (kept.front, kept.next_event, kept.cylinder, kept.head, kept.at),
                            (ours.front, ours.next_event, ours.cylinder, ours.head, ours.at),
                            "{drive}: stream from {} at t {t} x {x}",
                            st.origin_lbn
                        );
                        checked += 1;
                    }
                }
                now += 1_000_000 + (rng >> 40) % 20_000_000;
            }
            assert!(checked > 1000, "{drive}: only {checked} questions");
        }
    }

    #[test]
    fn disksim_fast_writes_answer_as_disksim_does() {
        let data = crate::reference_data();
        let spec = crate::parv::import(&data.join("disksim-valid/cheetah9LP.parv")).unwrap();
        let mut h = Hdd::new(spec);
        let text =
            std::fs::read_to_string(data.join("disksim-oracle/cheetah9LP.mixed-bursts.disksim")).unwrap();
        let mut free = 0u64;
        for (i, line) in text.lines().take(13).enumerate() {
            let f: Vec<f64> = line.split_whitespace().map(|x| x.parse().unwrap()).collect();
            let (arrival, disksim) = ((f[0] * 1e6).round() as u64, f[1]);
            let dir = if f[4] == 1.0 { Dir::Read } else { Dir::Write };
            let now = arrival.max(free);
            let a = h.access(Time(now), f[2] as u64, f[3] as u32, dir);
            free = a.done.0;
            let ours = (a.done.0 - arrival) as f64 / 1e6;
            assert!((ours - disksim).abs() < 0.002, "request {i}: {ours:.6} ms, DiskSim {disksim:.6} ms");
        }
    }

    fn spec_surfaces(h: &Hdd) -> u64 {
        h.spec().surfaces as u64
    }

    /// DiskSim's sector time and rotate arithmetic on real figures: an ibm18es track of 390
    /// sectors (7200 rpm) loses 255.6 of the 256 angle units a 2^-24 step holds.
    #[test]
    fn disksim_sector_lag_is_just_under_a_step() {
        let spec = builtin::builtin("ibm18es").unwrap();
        let geo = Geometry::new(&spec, spec.head_switch.0, 0);
        let lags = disksim_sector_lag(7200, &geo);
        for (z, &l) in geo.zones.iter().zip(&lags) {
            let step = 1u64 << (LAG_UNIT_BITS - 24);
            assert!(l <= step && l as f64 >= 0.997 * step as f64, "spt {}: {l} of {step}", z.spt);
        }
        let z390 = geo.zones.iter().position(|z| z.spt == 390).expect("a 390-sector zone");
        let units = lags[z390] as f64 / (1u64 << (LAG_UNIT_BITS - 32)) as f64;
        assert!((units - 255.6).abs() < 0.1, "{units}");
    }

    #[test]
    fn sequential_stream_crosses_zones_at_their_rates() {
        let mut h = wd();
        let z1 = h.geometry().zone_first_lbn(1);
        let start = z1 - 20_000;
        let r_outer = h.geometry().streaming_rate(start);
        let r_next = h.geometry().streaming_rate(z1);
        let rate = sequential_rate(&mut h, start, 128, 2_000); // 128 MiB: mostly zone 1
        assert!(rate < r_outer && rate > 0.9 * r_next, "{} {} {}", rate, r_outer, r_next);
    }
}

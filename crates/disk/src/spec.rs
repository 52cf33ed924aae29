//! Drive parameters: everything that describes one drive model, as plain data.
//!
//! A [`DiskSpec`] is what `headway disks` prints and what a config file or the (later)
//! DiskSim importer produces. It is validated once, by [`DiskSpec::validate`] (called from
//! [`crate::Hdd::try_new`]); the hot path never checks it again.
//!
//! Units are in the field docs: times are [`Duration`]s (integer ns), sizes are 512-byte
//! sectors unless a name says otherwise. Serialised, a `Duration` is an integer of ns.

use headway_sched::{Dir, Duration};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One recording zone: a band of adjacent cylinders with the same number of sectors per
/// track. A spec lists zones outer (lowest LBN, densest) first.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    /// Cylinders in this zone.
    pub cylinders: u32,
    /// 512-byte sectors on each track of this zone.
    pub sectors_per_track: u32,
    /// Track skew in sectors: how far (in sectors, in the direction of rotation) the first
    /// LBN of a track is shifted from the first LBN of the previous track of the same
    /// cylinder, so that a sequential transfer survives the head switch.
    #[serde(default)]
    pub track_skew: u32,
    /// Cylinder skew in sectors: the same shift from the last track of a cylinder to the
    /// first track of the next, covering a single-cylinder seek.
    #[serde(default)]
    pub cylinder_skew: u32,
}

impl Zone {
    /// A zone without skews (fill them with [`DiskSpec::derive_skews`]).
    pub const fn new(cylinders: u32, sectors_per_track: u32) -> Zone {
        Zone { cylinders, sectors_per_track, track_skew: 0, cylinder_skew: 0 }
    }
}

/// Seek time as a function of cylinder distance. Distance 0 costs nothing (a head switch
/// within a cylinder is [`DiskSpec::head_switch`]); every curve includes settling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SeekModel {
    /// Measured `(cylinder distance, seek time)` knots, distances strictly increasing and
    /// at least 1, interpolated linearly between knots (DiskSim's "extracted" seek curves).
    /// Distances below the first knot cost the first knot's time; beyond the last knot the
    /// last segment's slope is extrapolated.
    Table(#[serde(with = "crate::serde_ns::knots")] Vec<(u32, Duration)>),
    /// The three-point curve of Lee and Katz ("An analytic performance model of disk
    /// arrays", SIGMETRICS 1993; DiskSim's "3-point curve" seek type):
    /// `t(d) = single_cylinder + a*sqrt(d-1) + b*(d-1)` for `d >= 1`, with `a` and `b`
    /// chosen so that `t(1)` is the single-cylinder (track-to-track) seek, `t(max)` the
    /// full stroke, and the mean over uniformly random start and end cylinders the
    /// average seek. This is exactly the three numbers drive data sheets publish.
    ThreePoint {
        #[serde(with = "crate::serde_ns")]
        single_cylinder: Duration,
        #[serde(with = "crate::serde_ns")]
        average: Duration,
        #[serde(with = "crate::serde_ns")]
        full_stroke: Duration,
    },
}

/// Per-command controller overheads (DiskSim's "Read hit over. after read" and friends):
/// the time from a command's arrival to the moment the drive starts positioning (misses,
/// writes) or transferring (hits). They depend on the previous command's direction.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overheads {
    #[serde(with = "crate::serde_ns")]
    pub read_miss_after_read: Duration,
    #[serde(with = "crate::serde_ns")]
    pub read_miss_after_write: Duration,
    /// Cache hits and streaming continuations.
    #[serde(with = "crate::serde_ns")]
    pub read_hit_after_read: Duration,
    #[serde(with = "crate::serde_ns")]
    pub read_hit_after_write: Duration,
    #[serde(with = "crate::serde_ns")]
    pub write_after_read: Duration,
    #[serde(with = "crate::serde_ns")]
    pub write_after_write: Duration,
    /// Writes the buffer takes at once (fast writes, [`FastWrite`]); the `write_after_*`
    /// overheads are DiskSim's write *miss* overheads. Default 0: only fast writes use them.
    #[serde(default, with = "crate::serde_ns")]
    pub write_hit_after_read: Duration,
    #[serde(default, with = "crate::serde_ns")]
    pub write_hit_after_write: Duration,
    /// Added to every read's (write's) completion: the drive's status phase (DiskSim's
    /// "Read/Write completion overhead").
    #[serde(default, with = "crate::serde_ns")]
    pub read_completion: Duration,
    #[serde(default, with = "crate::serde_ns")]
    pub write_completion: Duration,
}

impl Overheads {
    /// The same overheads whatever the previous command was.
    pub const fn uniform(read_miss: Duration, read_hit: Duration, write: Duration) -> Overheads {
        Overheads {
            read_miss_after_read: read_miss,
            read_miss_after_write: read_miss,
            read_hit_after_read: read_hit,
            read_hit_after_write: read_hit,
            write_after_read: write,
            write_after_write: write,
            write_hit_after_read: write,
            write_hit_after_write: write,
            read_completion: Duration::ZERO,
            write_completion: Duration::ZERO,
        }
    }
}

/// The drive's side of the host bus protocol around a media access (DiskSim 4.0's
/// `disksim_diskctlr.c`): when it disconnects after taking a command, when it reselects
/// the host to move data, and the overheads of each step. All zero (the default, and every
/// built-in model): data moves as soon as it is ready and nothing is added.
///
/// A read miss: the command overhead runs, then the seek starts while the drive
/// disconnects (`read_disconnect_after_*`); once `read_watermark` of the request is in the
/// buffer (and the disconnect is done) it reselects (`reselect_first` + `data_prep`) and
/// sends the data at the bus rate, holding the bus until the last sector is sent. A read hit
/// sends after the hit overhead + `data_prep`. A write-through write takes its data right
/// after the command overhead + `data_prep`, disconnects (`write_disconnect`) and reselects
/// (`reselect_first`) for its status when the media write is done; the media writes a
/// sector only once it is in the buffer (else it waits a revolution for it). With
/// `extra_write_disconnect`, a write that follows a write and does not continue it
/// disconnects once more before taking its data (the `ExtraWriteDisconnect` steps) and
/// reselects with `reselect_other` at the end.
#[derive(Copy, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BusProtocol {
    /// Bus time per sector for writes where it differs from [`DiskSpec::bus_per_sector`]
    /// (reads); zero: the same (DiskSim: the bus's "Write block transfer time").
    #[serde(default, with = "crate::serde_ns")]
    pub write_per_sector: Duration,
    /// Before data moves on a (re)connection ("Data preparation overhead").
    #[serde(default, with = "crate::serde_ns")]
    pub data_prep: Duration,
    /// A read miss's disconnect, by the previous command's direction ("Read disconnect
    /// afterread/afterwrite").
    #[serde(default, with = "crate::serde_ns")]
    pub read_disconnect_after_read: Duration,
    #[serde(default, with = "crate::serde_ns")]
    pub read_disconnect_after_write: Duration,
    /// Reselecting the host ("First reselect overhead", "Other reselect overhead": the
    /// latter after an extra write disconnect).
    #[serde(default, with = "crate::serde_ns")]
    pub reselect_first: Duration,
    #[serde(default, with = "crate::serde_ns")]
    pub reselect_other: Duration,
    /// A write-through write's disconnect after its data ("Write disconnect overhead").
    #[serde(default, with = "crate::serde_ns")]
    pub write_disconnect: Duration,
    /// Fraction of a read (with `watermark_by_request`, of min(request, segment); else of a
    /// segment) that must be in the buffer before the drive reselects to send it ("High
    /// (read) water mark", "Set watermark by reqsize"); at least one sector.
    #[serde(default)]
    pub read_watermark: f64,
    #[serde(default)]
    pub watermark_by_request: bool,
    /// DiskSim's "Extra write disconnect" and its "Extradisc ..." overheads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_write_disconnect: Option<ExtraWriteDisconnect>,
}

/// The extra disconnect of a write that follows a write without continuing it (DiskSim:
/// "Extradisc command overhead", "... disconnect overhead", "... inter-disconnect delay",
/// "... 2nd disconnect overhead", "... seek delta"). Its command overhead replaces the write
/// miss overhead; the arm starts `command + seek_delta` after the command.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtraWriteDisconnect {
    #[serde(with = "crate::serde_ns")]
    pub command: Duration,
    #[serde(with = "crate::serde_ns")]
    pub disconnect: Duration,
    #[serde(with = "crate::serde_ns")]
    pub inter_disconnect: Duration,
    #[serde(with = "crate::serde_ns")]
    pub second_disconnect: Duration,
    #[serde(with = "crate::serde_ns")]
    pub seek_delta: Duration,
}

impl BusProtocol {
    /// Nothing beyond the plain overheads and bus rate (what `headway disks` omits).
    pub fn is_none(&self) -> bool {
        *self == BusProtocol::default()
    }
}

/// When a write is reported complete (DiskSim's "Fast write level").
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FastWrite {
    /// Write-through: complete when the data is on the media (level 0).
    #[default]
    Off,
    /// Complete once in the buffer when the previous write has been destaged (level 1:
    /// one write segment).
    Sequential,
    /// Complete once in the buffer, destaged while idle (level 2).
    All,
}

/// Where read-ahead stops at the latest ([`CacheSpec::read_ahead_within`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReadAheadWithin {
    Track,
    Cylinder,
}

/// The on-board buffer as read-ahead segments; writes are write-through unless
/// `fast_write` says otherwise.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheSpec {
    /// Number of segments; 0 disables the cache (every read goes to the media, no
    /// read-ahead), as the papers do when they calibrate.
    pub segments: u32,
    /// Sectors one segment holds. A segment keeps the most recent `segment_sectors` it has
    /// read (a ring), so a long sequential stream slides through it.
    pub segment_sectors: u32,
    /// How far past the end of the last request read-ahead may run, in sectors. The drive
    /// stops prefetching there until a new request moves the limit.
    pub max_read_ahead_sectors: u32,
    #[serde(default)]
    pub fast_write: FastWrite,
    /// A read of data a fast write left in the buffer hits (DiskSim's "Allow read hits on
    /// write data"); otherwise a write invalidates what it overlaps.
    #[serde(default)]
    pub read_hits_on_write_data: bool,
    /// A read miss whose head lands on the target track past its first sector keeps the
    /// track's sectors before that one as they come round (DiskSim's "Read any free
    /// blocks": `disk_buffer_seekdone` starts reading at the head's landing only when the
    /// head is past the first sector wanted; landing before it, it waits for it).
    #[serde(default)]
    pub read_any_free_blocks: bool,
    /// A hit on a segment whose read-ahead had stopped at its limit restarts read-ahead
    /// (DiskSim's "Read-ahead on idle hit"; headway's built-in models: yes).
    #[serde(default = "yes")]
    pub read_ahead_on_idle_hit: bool,
    /// DiskSim's "DEC prefetch scheme" (`Buffer continuous read = 4`): read-ahead runs to
    /// the end of the track holding the sector after the request (one track further when
    /// the segment began before that track) instead of `max_read_ahead_sectors` past it.
    #[serde(default)]
    pub read_ahead_to_track_end: bool,
    /// Read-ahead never leaves the track (or the cylinder) holding the request's last
    /// sector (DiskSim's `Buffer continuous read` 1 and 2: its background read stops at the
    /// first head switch, or the first seek); `max_read_ahead_sectors` still bounds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead_within: Option<ReadAheadWithin>,
    /// Zero-latency reads and writes (DiskSim's `Immediate buffer read` / `write`): a media
    /// access whose head lands inside the part of the track from its first sector to the
    /// track's end starts at once and takes the sectors in the order they pass.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub immediate_reads: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub immediate_writes: bool,
    /// The last segment holds write data only (DiskSim's "Use separate write segment"):
    /// reads are cached in the other `segments - 1`, and a write's data (readable with
    /// `read_hits_on_write_data`) never evicts read data. Needs at least two segments.
    #[serde(default)]
    pub dedicated_write_segment: bool,
    /// A read miss that starts right at the end of a stopped segment's data reuses that
    /// segment and extends it (headway's built-in models: yes). DiskSim's
    /// `disk_buffer_select_read_segment` counts a read as a (partial) hit on a segment
    /// only when its first sector lies inside the segment's data (a read starting at a
    /// segment's end is an "almost read hit" only while that segment is still
    /// prefetching): such a read takes a fresh segment, which starts at the read (and so
    /// with `read_ahead_to_track_end` reads ahead one track less). DiskSim imports: no.
    #[serde(default = "yes")]
    pub reuse_adjacent_segment: bool,
    /// A fast write that continues the write being destaged joins its segment instead of
    /// waiting for the heads (DiskSim's "Combine seq writes"; only with `DiskSpec::disksim`,
    /// whose write rules it belongs to).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub combine_sequential_writes: bool,
    /// Read-ahead stops at once when the heads are wanted, in the middle of a sector
    /// (DiskSim's "Stop prefetch in sector"); otherwise (with `DiskSpec::disksim`) the next
    /// seek waits for its pending event (the sector under the head, a track switch).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stop_read_ahead_in_sector: bool,
}

fn yes() -> bool {
    true
}

fn is_zero(d: &Duration) -> bool {
    d.0 == 0
}

impl CacheSpec {
    pub const DISABLED: CacheSpec = CacheSpec {
        segments: 0,
        segment_sectors: 0,
        max_read_ahead_sectors: 0,
        fast_write: FastWrite::Off,
        read_hits_on_write_data: false,
        read_any_free_blocks: false,
        read_ahead_on_idle_hit: true,
        read_ahead_to_track_end: false,
        read_ahead_within: None,
        immediate_reads: false,
        immediate_writes: false,
        dedicated_write_segment: false,
        reuse_adjacent_segment: true,
        combine_sequential_writes: false,
        stop_read_ahead_in_sector: false,
    };
    pub const fn enabled(&self) -> bool {
        self.segments > 0 && self.segment_sectors > 0
    }
}

/// A drive's seat on a bus it shares with other devices (DiskSim's exclusive bus, `type =
/// 1`). One device holds the bus at a time; the others wait for it, to start a command
/// (the controller asks for them) and to reconnect for its data or status.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusSeat {
    /// The bus's name in its file (`bus5`): drives seated on one name share it.
    pub bus: String,
    /// The drive's place on the bus: 1 the first device listed (the controller above is 0).
    pub slot: u32,
    /// Who of several waiting gets the bus next: the highest slot (`Arbitration type = 1`,
    /// slot priority), else the first to ask (`2`, FIFO).
    pub by_slot: bool,
    /// `Arbitration time`: what each acquisition of the bus costs.
    #[serde(with = "crate::serde_ns")]
    pub arbitration: Duration,
}

/// All parameters of one hard-disk model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiskSpec {
    /// Short name (`wd5000aaks`), as `builtin` knows it.
    pub name: String,
    /// One line: make, model, size, rpm, interface.
    pub description: String,
    /// Where each number comes from: data sheets, papers, DiskSim files, or
    /// "documented estimate" with the reason.
    pub sources: String,
    /// Spindle speed, revolutions per minute.
    pub rpm: u32,
    /// Recording surfaces (= heads = tracks per cylinder).
    pub surfaces: u32,
    /// Zones, outer (LBN 0) first.
    pub zones: Vec<Zone>,
    /// Exported capacity in 512-byte sectors. The zones must hold at least this many;
    /// anything beyond (spares, rounding) is not addressable.
    pub capacity_sectors: u64,
    pub seek: SeekModel,
    /// Switching to another surface of the same cylinder (includes settling).
    #[serde(with = "crate::serde_ns")]
    pub head_switch: Duration,
    /// Extra settling before a write after the head has moved (seek or head switch).
    #[serde(with = "crate::serde_ns")]
    pub write_settle: Duration,
    /// Taken off each write seek instead (DiskSim's negative `Add. write settling delay`,
    /// which its signed times subtract; a write seek shorter than it takes no time here).
    #[serde(default, with = "crate::serde_ns", skip_serializing_if = "is_zero")]
    pub write_settle_off: Duration,
    pub overheads: Overheads,
    /// Host interface time per 512-byte sector (SATA 3 Gb/s moves ~300 MB/s: 1707 ns).
    #[serde(with = "crate::serde_ns")]
    pub bus_per_sector: Duration,
    pub cache: CacheSpec,
    /// Where zones sit, spare and slipped sectors (DiskSim imports); `None`: zones are
    /// contiguous from cylinder 0 and every sector holds an LBN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Layout>,
    /// The shortest positioning of a write takes before its first sector, even without
    /// any arm movement (DiskSim's "Minimum seek delay", which `disk_check_hda` applies to
    /// writes only; 0: none).
    #[serde(default, with = "crate::serde_ns")]
    pub min_seek: Duration,
    /// Bus protocol steps around a media access (DiskSim imports; default: none).
    #[serde(default, skip_serializing_if = "BusProtocol::is_none")]
    pub bus_protocol: BusProtocol,
    /// The drive's own command queue as its parameter file gives it (DiskSim's "Max queue
    /// length" and scheduling policy); informational: `--queue-depth` sets the simulated one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// Behave as DiskSim 4.0's disk module does where it departs from a drive's physics
    /// (DiskSim imports; see [`crate::hdd`]): its angle under the head falls behind true
    /// rotation by about 1/2^24 of a revolution per sector passing under the head and 1.5
    /// times that per positioning. `false`: the angle is exact, absolute time modulo the
    /// revolution.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disksim: bool,
    /// A fixed-time device (DiskSim's `disksim_simpledisk`): every request costs the same,
    /// whatever its address, and the zones, seek curve and cache play no part. `None`: a
    /// hard disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed: Option<FixedService>,
    /// A caching controller in front of the drive (DiskSim's type-3 `disksim_ctlr` with a
    /// `disksim_cachemem`; [`crate::ctlr`]). `None`: the driver talks to the drive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<crate::ctlr::Controller>,
    /// Seats on buses shared with other devices (DiskSim's exclusive `disksim_bus`s with
    /// several devices): this drive's, or with an array imported from DiskSim each
    /// member's, in member order. Empty: every drive has a bus of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bus_seats: Vec<BusSeat>,
}

/// What every request to a fixed-time device costs: `overhead + access + sectors x
/// per sector` (DiskSim's simpledisk `Command overhead`, `Access time`, and the slower of
/// its `Bulk sector transfer time` and its bus's block transfer time in the request's
/// direction).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixedService {
    #[serde(with = "crate::serde_ns")]
    pub overhead: Duration,
    #[serde(with = "crate::serde_ns")]
    pub access: Duration,
    #[serde(with = "crate::serde_ns")]
    pub read_per_sector: Duration,
    #[serde(with = "crate::serde_ns")]
    pub write_per_sector: Duration,
}

impl FixedService {
    /// The time one request of `sectors` takes.
    pub fn time(&self, sectors: u64, dir: Dir) -> u64 {
        self.overhead.0 + self.access.0 + sectors * self.per_sector(dir)
    }

    /// Transfer time per sector, ns.
    pub fn per_sector(&self, dir: Dir) -> u64 {
        match dir {
            Dir::Read => self.read_per_sector.0,
            Dir::Write => self.write_per_sector.0,
        }
    }
}

/// A drive's command queue as specified.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueSpec {
    pub depth: u32,
    /// `fcfs` or `sptf`.
    pub scheduler: String,
}

/// How spare sectors are set aside, and how slips and defects move LBNs (DiskSim's
/// "Sparing scheme used": each variant's number is DiskSim's). Each rule is explained in
/// its module under [`crate::layout`]; slips and defects are zone-relative physical sector
/// indices (track indices under [`Sparing::Tracks`]) with the surface counted in LBN
/// order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sparing {
    /// 0: no spares; slips shift the LBNs after them as under scheme 10. A headway
    /// extension: DiskSim 4.0 itself refuses scheme 0 when it loads the file.
    None,
    /// 1: `spares` whole tracks at the end of each zone; slips are whole tracks.
    Tracks,
    /// 2: `spares` sectors at the end of every cylinder.
    SectorsPerCylinder,
    /// 3: `spares` sectors at the end of every track.
    SectorsPerTrack,
    /// 4: as 2, and every slip also pushes the zone's later cylinders on.
    SectorsPerCylinderSlipToEnd,
    /// 5: as 2 (DiskSim's forward mapping ignores "at the front").
    SectorsPerCylinderFront,
    /// 6: as 4 (likewise).
    SectorsPerCylinderFrontSlipToEnd,
    /// 7: spares at the end of the disk: slips shift every later LBN of the zone.
    End,
    /// 8: `spares` sectors at the end of every `cylinders`-cylinder range.
    Range { cylinders: u32 },
    /// 9: `spares` sectors at the end of each zone; slips shift LBNs within it.
    Zone,
    /// 10: as 9, but slips use up capacity rather than spares.
    ZoneSlipToEnd,
}

impl Sparing {
    /// The scheme of DiskSim's "Sparing scheme used" = `n` (`range`: "Rangesize for
    /// sparing", read by scheme 8 only).
    pub fn from_disksim(n: u32, range: u32) -> Option<Sparing> {
        Some(match n {
            0 => Sparing::None,
            1 => Sparing::Tracks,
            2 => Sparing::SectorsPerCylinder,
            3 => Sparing::SectorsPerTrack,
            4 => Sparing::SectorsPerCylinderSlipToEnd,
            5 => Sparing::SectorsPerCylinderFront,
            6 => Sparing::SectorsPerCylinderFrontSlipToEnd,
            7 => Sparing::End,
            8 => Sparing::Range { cylinders: range },
            9 => Sparing::Zone,
            10 => Sparing::ZoneSlipToEnd,
            _ => return None,
        })
    }

    /// DiskSim's number for this scheme.
    pub fn disksim_number(self) -> u32 {
        match self {
            Sparing::None => 0,
            Sparing::Tracks => 1,
            Sparing::SectorsPerCylinder => 2,
            Sparing::SectorsPerTrack => 3,
            Sparing::SectorsPerCylinderSlipToEnd => 4,
            Sparing::SectorsPerCylinderFront => 5,
            Sparing::SectorsPerCylinderFrontSlipToEnd => 6,
            Sparing::End => 7,
            Sparing::Range { .. } => 8,
            Sparing::Zone => 9,
            Sparing::ZoneSlipToEnd => 10,
        }
    }

    /// Schemes 2, 4, 5, 6: spares on every cylinder (their slips also turn the skew).
    pub fn per_cylinder(self) -> bool {
        matches!(
            self,
            Sparing::SectorsPerCylinder
                | Sparing::SectorsPerCylinderSlipToEnd
                | Sparing::SectorsPerCylinderFront
                | Sparing::SectorsPerCylinderFrontSlipToEnd
        )
    }

    /// Schemes 4, 6, 7: a slip pushes the LBNs of every later cylinder of the zone.
    pub fn slip_to_end(self) -> bool {
        matches!(
            self,
            Sparing::SectorsPerCylinderSlipToEnd | Sparing::SectorsPerCylinderFrontSlipToEnd | Sparing::End
        )
    }
}

/// Which head holds each surface of a cylinder in LBN order (DiskSim's "LBN-to-PBN
/// mapping scheme"; see [`crate::layout`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mapping {
    /// 0: LBNs take heads 0, 1, ... on every cylinder.
    #[default]
    Conventional,
    /// 1: heads in reverse order on the odd cylinders of each zone (counted from the
    /// zone's first), so a cylinder switch stays on the same surface.
    ReverseOddCylindersInZone,
    /// 2: heads in reverse order on odd-numbered cylinders (absolute numbers).
    ReverseOddCylinders,
}

impl Mapping {
    fn is_conventional(&self) -> bool {
        *self == Mapping::Conventional
    }
}

/// Physical placement of one zone ([`Layout`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneLayout {
    /// Absolute first cylinder (cylinders between zones hold no LBNs).
    pub first_cylinder: u32,
    /// Slot of the zone's first physical sector on its first track, in sectors ("Offset
    /// of first block").
    pub first_block_offset: u32,
    /// Sectors at the zone's front that hold no LBN ("Empty space at zone front").
    pub empty_front: u32,
    /// Spare sectors (tracks for [`Sparing::Tracks`]) per sparing unit.
    pub spares: u32,
    /// Slipped (skipped) sectors, as physical indices counted from the zone's first sector
    /// (track indices for [`Sparing::Tracks`]), in the file's order: DiskSim counts them
    /// in one pass over the list as written, duplicates included.
    pub slips: Vec<u32>,
    /// `(defect, replacement)` pairs in the file's order, in the units of `slips`: the LBN
    /// the sparing scheme puts on `defect` moves to `replacement`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defects: Vec<(u32, u32)>,
}

/// Zone placement, sparing and slips (one [`ZoneLayout`] per zone of the spec).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    pub sparing: Sparing,
    #[serde(default, skip_serializing_if = "Mapping::is_conventional")]
    pub mapping: Mapping,
    pub zones: Vec<ZoneLayout>,
    /// Total cylinders of the drive (the seek curve's full stroke is this minus one); at
    /// least one past every zone's last cylinder.
    pub cylinders: u32,
}

impl ZoneLayout {
    /// LBNs this zone holds (DiskSim's "blocks in band"); 0 when the spares, slips and
    /// empty front use up more than the zone.
    pub fn lbns(&self, sparing: Sparing, cylinders: u32, surfaces: u32, spt: u32) -> u64 {
        let phys = cylinders as u64 * surfaces as u64 * spt as u64;
        phys.saturating_sub(self.empty_front as u64 + self.lost(sparing, cylinders, surfaces, spt))
    }

    /// Sectors the sparing scheme takes from the zone's LBN count.
    fn lost(&self, sparing: Sparing, cylinders: u32, surfaces: u32, spt: u32) -> u64 {
        let (p, k, n) = (self.spares as u64, self.slips.len() as u64, cylinders as u64);
        match sparing {
            Sparing::None | Sparing::End => k,
            Sparing::Tracks => p * spt as u64,
            Sparing::SectorsPerCylinder | Sparing::SectorsPerCylinderFront => p * n,
            Sparing::SectorsPerTrack => p * n * surfaces as u64,
            Sparing::SectorsPerCylinderSlipToEnd | Sparing::SectorsPerCylinderFrontSlipToEnd => p * n + k,
            Sparing::Range { cylinders: r } => p * (n / r.max(1) as u64),
            Sparing::Zone => p,
            Sparing::ZoneSlipToEnd => p + k,
        }
    }

    /// Why the zone cannot be mapped, if it cannot (see [`DiskSpec::validate`]).
    pub(crate) fn check(&self, sparing: Sparing, z: &Zone, surfaces: u32) -> Result<(), String> {
        let (t, p) = (z.sectors_per_track as u64, self.spares as u64);
        let b = t * surfaces as u64;
        if self.first_block_offset >= z.sectors_per_track {
            return Err("first-block offset beyond the track".into());
        }
        // each sparing unit must keep at least one LBN
        let unit = match sparing {
            Sparing::SectorsPerTrack => Some(("track", t)),
            Sparing::End if p > 0 => Some(("cylinder", b)),
            s if s.per_cylinder() => Some(("cylinder", b)),
            Sparing::Range { cylinders: 0 } => return Err("sparing range of 0 cylinders".into()),
            Sparing::Range { cylinders: r } => Some(("sparing range", b * r as u64)),
            _ => None,
        };
        if let Some((what, size)) = unit {
            if p >= size {
                return Err(format!("{p} spares leave no LBN on a {size}-sector {what}"));
            }
        }
        if sparing == Sparing::Tracks && self.slips.len() + self.defects.len() > self.spares as usize {
            return Err(format!(
                "{} slipped and {} remapped tracks outnumber the {} spare tracks",
                self.slips.len(),
                self.defects.len(),
                self.spares
            ));
        }
        if self.lbns(sparing, z.cylinders, surfaces, z.sectors_per_track) == 0 {
            return Err("spares, slips and empty space leave no LBN".into());
        }
        Ok(())
    }
}

/// Why a spec cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SpecError {
    #[error("rpm must be positive")]
    ZeroRpm,
    #[error("a disk needs at least one surface")]
    NoSurfaces,
    #[error("a disk needs at least one zone")]
    NoZones,
    #[error("zone {zone}: {what} must be positive")]
    EmptyZone { zone: usize, what: &'static str },
    #[error("zone {zone}: skew {skew} is not below sectors per track {spt}")]
    SkewTooLarge { zone: usize, skew: u32, spt: u32 },
    #[error("zones hold {geometry} sectors, fewer than the stated capacity {capacity}")]
    CapacityExceedsGeometry { geometry: u64, capacity: u64 },
    #[error("capacity must be positive")]
    ZeroCapacity,
    #[error("seek table: {0}")]
    SeekTable(&'static str),
    #[error("three-point seek curve: need single_cylinder < average < full_stroke and a non-decreasing curve ({0})")]
    SeekThreePoint(&'static str),
    #[error("cache: {0}")]
    Cache(&'static str),
    #[error("layout: {0}")]
    Layout(String),
}

impl DiskSpec {
    /// Sectors the zones hold (before truncation to `capacity_sectors`).
    pub fn geometry_sectors(&self) -> u64 {
        match &self.layout {
            Some(l) => self
                .zones
                .iter()
                .zip(&l.zones)
                .map(|(z, zl)| zl.lbns(l.sparing, z.cylinders, self.surfaces, z.sectors_per_track))
                .sum(),
            None => self
                .zones
                .iter()
                .map(|z| z.cylinders as u64 * self.surfaces as u64 * z.sectors_per_track as u64)
                .sum(),
        }
    }

    /// Total cylinders (over all zones, or as the layout states).
    pub fn cylinders(&self) -> u32 {
        match &self.layout {
            Some(l) => l.cylinders,
            None => self.zones.iter().map(|z| z.cylinders).sum(),
        }
    }

    /// One revolution, in ns (60e9 / rpm, rounded to the ns: the 0.3 ns rounding of a
    /// 7200 rpm period is a constant spindle-speed error of 4e-8, far below real drives').
    pub fn revolution(&self) -> Duration {
        Duration((60_000_000_000 + self.rpm as u64 / 2) / self.rpm.max(1) as u64)
    }

    /// Check every constraint the model relies on.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.rpm == 0 {
            return Err(SpecError::ZeroRpm);
        }
        if self.surfaces == 0 {
            return Err(SpecError::NoSurfaces);
        }
        if self.zones.is_empty() {
            return Err(SpecError::NoZones);
        }
        for (i, z) in self.zones.iter().enumerate() {
            if z.cylinders == 0 {
                return Err(SpecError::EmptyZone { zone: i, what: "cylinders" });
            }
            if z.sectors_per_track == 0 {
                return Err(SpecError::EmptyZone { zone: i, what: "sectors_per_track" });
            }
            for skew in [z.track_skew, z.cylinder_skew] {
                if skew >= z.sectors_per_track {
                    return Err(SpecError::SkewTooLarge { zone: i, skew, spt: z.sectors_per_track });
                }
            }
        }
        if self.capacity_sectors == 0 {
            return Err(SpecError::ZeroCapacity);
        }
        let w = self.bus_protocol.read_watermark;
        if !(0.0..=1.0).contains(&w) {
            return Err(SpecError::Cache("bus protocol: the read watermark is a fraction in 0..=1"));
        }
        let geometry = self.geometry_sectors();
        if geometry < self.capacity_sectors {
            return Err(SpecError::CapacityExceedsGeometry { geometry, capacity: self.capacity_sectors });
        }
        match &self.seek {
            SeekModel::Table(knots) => {
                if knots.is_empty() {
                    return Err(SpecError::SeekTable("needs at least one knot"));
                }
                if knots[0].0 == 0 {
                    return Err(SpecError::SeekTable("distances start at 1 (distance 0 costs nothing)"));
                }
                if knots.windows(2).any(|w| w[0].0 >= w[1].0) {
                    return Err(SpecError::SeekTable("distances must be strictly increasing"));
                }
            }
            SeekModel::ThreePoint { single_cylinder, average, full_stroke } => {
                if !(single_cylinder < average && average < full_stroke) {
                    return Err(SpecError::SeekThreePoint("ordering"));
                }
                let (a, b) = crate::seek::lee_coefficients(
                    single_cylinder.0 as f64,
                    average.0 as f64,
                    full_stroke.0 as f64,
                );
                if a < 0.0 || b < 0.0 {
                    return Err(SpecError::SeekThreePoint("a or b negative"));
                }
            }
        }
        let c = &self.cache;
        if c.segments > 0 && c.segment_sectors == 0 {
            return Err(SpecError::Cache("segments without a segment size"));
        }
        if c.segments > 1024 {
            return Err(SpecError::Cache("more than 1024 segments"));
        }
        if c.fast_write != FastWrite::Off && !c.enabled() {
            return Err(SpecError::Cache("fast writes need a buffer"));
        }
        if let Some(l) = &self.layout {
            if l.zones.len() != self.zones.len() {
                return Err(SpecError::Layout("one zone layout per zone".into()));
            }
            for (i, (z, zl)) in self.zones.iter().zip(&l.zones).enumerate() {
                zl.check(l.sparing, z, self.surfaces)
                    .map_err(|e| SpecError::Layout(format!("zone {i}: {e}")))?;
            }
            // zones take LBNs in list order, but may sit in any cylinder order
            let mut spans: Vec<(u32, u32, usize)> = l
                .zones
                .iter()
                .zip(&self.zones)
                .enumerate()
                .map(|(i, (zl, z))| (zl.first_cylinder, zl.first_cylinder + z.cylinders, i))
                .collect();
            spans.sort_unstable();
            for w in spans.windows(2) {
                if w[1].0 < w[0].1 {
                    return Err(SpecError::Layout(format!("zone {} overlaps zone {}", w[1].2, w[0].2)));
                }
            }
            let end = spans.last().map_or(0, |s| s.1);
            if end > l.cylinders {
                return Err(SpecError::Layout(format!(
                    "zones reach cylinder {end}, beyond the {} cylinders",
                    l.cylinders
                )));
            }
        }
        Ok(())
    }

    /// Set every zone's track and cylinder skew to the smallest whole number of sectors
    /// that covers a head switch (track skew) or a single-cylinder seek (cylinder skew),
    /// plus one sector of margin: the way drives are formatted so that a sequential
    /// transfer loses only the switch time, never a revolution. Used for drives whose
    /// skews are not published.
    pub fn derive_skews(&mut self) {
        let rev = self.revolution().0;
        let one_cyl = crate::seek::SeekCurve::new(&self.seek, self.cylinders()).time(1).0;
        let cover = |t: u64, spt: u32| -> u32 {
            let s = (t * spt as u64).div_ceil(rev) + 1;
            (s as u32).min(spt.saturating_sub(1))
        };
        for z in &mut self.zones {
            z.track_skew = cover(self.head_switch.0, z.sectors_per_track);
            z.cylinder_skew = cover(one_cyl, z.sectors_per_track);
        }
    }

    /// `count` zones of `cylinders_each` cylinders whose sectors per track fall linearly
    /// from `outer_spt` to `inner_spt` (constant linear bit density on evenly spaced
    /// zones). Skews are left at zero.
    pub fn linear_zones(count: u32, cylinders_each: u32, outer_spt: u32, inner_spt: u32) -> Vec<Zone> {
        assert!(count >= 1);
        (0..count)
            .map(|i| {
                let spt = if count == 1 {
                    outer_spt
                } else {
                    let span = outer_spt as i64 - inner_spt as i64;
                    let num = span * i as i64;
                    let den = (count - 1) as i64;
                    // round half away from zero, integer-only
                    (outer_spt as i64 - (2 * num + den).div_euclid(2 * den)) as u32
                };
                Zone::new(cylinders_each, spt)
            })
            .collect()
    }

    /// A copy with the cache disabled (calibration, tests).
    pub fn without_cache(&self) -> DiskSpec {
        DiskSpec { cache: CacheSpec::DISABLED, ..self.clone() }
    }
}

impl DiskSpec {
    /// A readable page of the model's parameters and their sources (`headway disks NAME`).
    pub fn summary(&self) -> String {
        use std::fmt::Write as _;
        let ms = |d: Duration| format!("{:.3} ms", d.0 as f64 / 1e6);
        let mut s = String::new();
        let _ = writeln!(s, "{} — {}", self.name, self.description);
        let _ = writeln!(
            s,
            "capacity        {} sectors ({:.1} GB)",
            self.capacity_sectors,
            self.capacity_sectors as f64 * 512.0 / 1e9
        );
        let _ = writeln!(s, "spindle         {} rpm (revolution {})", self.rpm, ms(self.revolution()));
        let _ = writeln!(
            s,
            "geometry        {} surfaces, {} cylinders, {} zones",
            self.surfaces,
            self.cylinders(),
            self.zones.len()
        );
        if let (Some(o), Some(i)) = (self.zones.first(), self.zones.last()) {
            let rate = |spt: u32| spt as f64 * 512.0 * self.rpm as f64 / 60.0 / 1e6;
            let _ = writeln!(
                s,
                "                sectors/track {} (outer) .. {} (inner): media {:.0} .. {:.0} MB/s",
                o.sectors_per_track,
                i.sectors_per_track,
                rate(o.sectors_per_track),
                rate(i.sectors_per_track)
            );
        }
        match &self.seek {
            SeekModel::Table(k) => {
                let _ = writeln!(
                    s,
                    "seek            table of {} knots, {} .. {}",
                    k.len(),
                    k.first().map(|x| ms(x.1)).unwrap_or_default(),
                    k.last().map(|x| ms(x.1)).unwrap_or_default()
                );
            }
            SeekModel::ThreePoint { single_cylinder, average, full_stroke } => {
                let _ = writeln!(
                    s,
                    "seek            track-to-track {}, average {}, full stroke {} (three-point curve)",
                    ms(*single_cylinder),
                    ms(*average),
                    ms(*full_stroke)
                );
            }
        }
        let (sign, settle) =
            if self.write_settle_off.0 > 0 { ('-', self.write_settle_off) } else { ('+', self.write_settle) };
        let _ = writeln!(s, "head switch     {}; write settle {sign}{}", ms(self.head_switch), ms(settle));
        let o = &self.overheads;
        let _ = writeln!(
            s,
            "overheads       read miss {}, read hit {}, write {}",
            ms(o.read_miss_after_read),
            ms(o.read_hit_after_read),
            ms(o.write_after_write)
        );
        let _ = writeln!(
            s,
            "bus             {} ns per sector ({:.0} MB/s)",
            self.bus_per_sector.0,
            512.0 / self.bus_per_sector.0.max(1) as f64 * 1e3
        );
        if let Some(first) = self.bus_seats.first() {
            // (an array's member model: every member's seat)
            let seats: Vec<String> =
                self.bus_seats.iter().map(|b| format!("{} slot {}", b.bus, b.slot)).collect();
            let _ = writeln!(
                s,
                "shared bus      {}; {}, arbitration {}",
                seats.join(", "),
                if first.by_slot { "highest slot first" } else { "first come first" },
                ms(first.arbitration)
            );
        }
        let c = &self.cache;
        let _ = writeln!(
            s,
            "cache           {} segments x {} KiB, read-ahead up to {} KiB, {}",
            c.segments,
            c.segment_sectors / 2,
            c.max_read_ahead_sectors / 2,
            match c.fast_write {
                FastWrite::Off => "write-through",
                FastWrite::Sequential => "fast writes (one at a time)",
                FastWrite::All => "fast writes",
            }
        );
        if let Some(q) = &self.queue {
            let _ = writeln!(s, "queue           {} command(s), {}", q.depth, q.scheduler);
        }
        let _ = writeln!(s, "\nsources: {}", self.sources);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_zones_span_the_range() {
        let z = DiskSpec::linear_zones(24, 10, 2059, 1029);
        assert_eq!(z.len(), 24);
        assert_eq!(z[0].sectors_per_track, 2059);
        assert_eq!(z[23].sectors_per_track, 1029);
        assert!(z.windows(2).all(|w| w[0].sectors_per_track > w[1].sectors_per_track));
    }

    #[test]
    fn validation_catches_bad_specs() {
        let good = crate::builtin("wd5000aaks").unwrap();
        assert_eq!(good.validate(), Ok(()));
        let mut s = good.clone();
        s.capacity_sectors = s.geometry_sectors() + 1;
        assert!(matches!(s.validate(), Err(SpecError::CapacityExceedsGeometry { .. })));
        let mut s = good.clone();
        s.seek = SeekModel::Table(vec![(5, Duration(1)), (5, Duration(2))]);
        assert!(matches!(s.validate(), Err(SpecError::SeekTable(_))));
        let mut s = good.clone();
        s.seek = SeekModel::ThreePoint {
            single_cylinder: Duration::from_millis(2),
            average: Duration::from_millis(1),
            full_stroke: Duration::from_millis(20),
        };
        assert!(matches!(s.validate(), Err(SpecError::SeekThreePoint(_))));
        let mut s = good;
        s.zones[3].track_skew = s.zones[3].sectors_per_track;
        assert!(matches!(s.validate(), Err(SpecError::SkewTooLarge { zone: 3, .. })));
    }

    #[test]
    fn derived_skews_cover_the_switch_times() {
        let s = crate::builtin("wd5000aaks").unwrap();
        let rev = s.revolution().0;
        for z in &s.zones {
            let st = |k: u32| k as u64 * rev / z.sectors_per_track as u64;
            assert!(st(z.track_skew) >= s.head_switch.0);
            assert!(z.cylinder_skew > z.track_skew);
        }
    }

    /// Layout zones: any cylinder order, no shared cylinder, room for an LBN in every
    /// sparing unit; a layout without a mapping scheme reads back as the conventional one.
    #[test]
    fn layout_validation_and_serde() {
        let mut s = crate::builtin("wd5000aaks").unwrap();
        s.zones = vec![Zone::new(2, 4), Zone::new(1, 4)];
        s.capacity_sectors = 8;
        let zl = |first| ZoneLayout { first_cylinder: first, ..ZoneLayout::default() };
        let layout = |sparing, firsts: [u32; 2]| Layout {
            sparing,
            mapping: Mapping::ReverseOddCylinders,
            zones: vec![zl(firsts[0]), zl(firsts[1])],
            cylinders: 3,
        };
        s.surfaces = 2;
        s.layout = Some(layout(Sparing::Zone, [1, 0]));
        assert_eq!(s.validate(), Ok(()));
        s.layout = Some(layout(Sparing::Zone, [0, 1]));
        assert!(matches!(s.validate(), Err(SpecError::Layout(e)) if e.contains("overlaps")));
        let mut l = layout(Sparing::SectorsPerTrack, [1, 0]);
        l.zones[1].spares = 4;
        s.layout = Some(l);
        assert!(matches!(s.validate(), Err(SpecError::Layout(e)) if e.contains("no LBN")));
        s.layout = Some(layout(Sparing::Tracks, [1, 0]));
        s.layout.as_mut().unwrap().zones[0].slips = vec![1];
        assert!(matches!(s.validate(), Err(SpecError::Layout(e)) if e.contains("outnumber")));
        let json = r#"{"sparing":"zone","zones":[{"first_cylinder":0,"first_block_offset":0,"empty_front":0,"spares":0,"slips":[3,1]}],"cylinders":9}"#;
        let back: Layout = serde_json::from_str(json).unwrap();
        assert_eq!((back.mapping, back.zones[0].slips.clone()), (Mapping::Conventional, vec![3, 1]));
        for n in 0..=10 {
            assert_eq!(Sparing::from_disksim(n, 2).unwrap().disksim_number(), n);
        }
        assert_eq!(Sparing::from_disksim(11, 2), None);
    }

    #[test]
    fn serde_round_trip() {
        for name in crate::builtin_names() {
            let s = crate::builtin(name).unwrap();
            let json = serde_json::to_string(&s).unwrap();
            let back: DiskSpec = serde_json::from_str(&json).unwrap();
            assert_eq!(back, s);
        }
    }
}

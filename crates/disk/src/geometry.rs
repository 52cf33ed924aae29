//! Zoned geometry: LBN <-> (cylinder, head, sector) and the angular position of sectors.
//!
//! Layout (the conventional one, as in DiskSim's `dm_layout_g1` without sparing, and as
//! Ruemmler and Wilkes describe in "An introduction to disk drive modeling", IEEE Computer
//! 1994): LBNs fill a track, then the next surface of the same cylinder, then the next
//! cylinder inward; no serpentine. Zones are bands of cylinders with a fixed number of
//! sectors per track, outer zones denser.
//!
//! Skew: the first LBN of each track is rotated `track_skew` sectors past the first LBN of
//! the previous track of its cylinder, and `cylinder_skew` past the last track of the
//! previous cylinder, so a sequential transfer only waits out the switch instead of a
//! revolution. The accumulated offset restarts at each zone (DiskSim's "offset of first
//! block" = 0): a sequential transfer crossing a zone boundary may wait a partial turn.
//!
//! Angles: slot `p` of a track with `S` sectors starts `p * rev / S` ns after the index
//! mark; the spindle is at `t mod rev` (see [`crate::hdd`]). Per-zone slot times are 32.32
//! fixed point, so no division is needed per access.
//!
//! With a [`crate::spec::Layout`] (DiskSim imports, `dm_layout_g1`): zones start at their
//! stated cylinders, the first LBN of a zone sits `first_block_offset` slots past the index
//! mark, the zone's first `empty_front` sectors hold no LBN, slipped sectors (tracks, under
//! track sparing) are skipped so every later LBN of the zone (of the sparing range) moves
//! one on, and spare sectors at the end of each zone or range hold no LBN. A slip moves
//! the LBNs physically, so their angular slots move with them. Defects (remapped sectors)
//! are not modelled.

use crate::spec::{DiskSpec, Sparing};

/// Where an LBN lives on the platters.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub cylinder: u32,
    pub head: u32,
    /// Logical index within the track (0 = the track's first LBN).
    pub sector: u32,
    /// Physical angular slot (0 = index mark), after skew.
    pub slot: u32,
    /// Zone index.
    pub zone: u32,
}

/// Precomputed per-zone row: everything the hot path needs about one zone.
#[derive(Copy, Clone, Debug)]
pub(crate) struct ZoneRow {
    pub first_lbn: u64,
    /// First LBN past this zone (within the exported capacity).
    pub end_lbn: u64,
    pub first_cyl: u32,
    pub spt: u32,
    pub track_skew: u32,
    /// Skew accumulated per cylinder, modulo spt: `((surfaces-1)*track_skew + cyl_skew) % spt`.
    pub cyl_skew_step: u32,
    pub sectors_per_cyl: u64,
    pub div_cyl: FastDiv,
    pub div_spt: FastDiv,
    /// ns per sector on this zone's tracks, 32.32 fixed point (`rev << 32 / spt`).
    pub slot_fp: u64,
    /// ns per sector when streaming through whole cylinders (head and cylinder switches
    /// included), 32.32 fixed point.
    pub stream_fp: u64,
    /// Sectors per ns when streaming, 32.32 fixed point (inverse of `stream_fp`).
    pub stream_inv: u64,
    /// Slot of the zone's first LBN ("Offset of first block").
    pub offset: u32,
    /// Index into `Geometry::remaps` when the zone has empty space, slips or spares.
    pub remap: u32,
}

const NO_REMAP: u32 = u32::MAX;

/// LBN <-> physical sector index within one zone, for zones with empty space at the front,
/// slips or spares. `adj[i] = slips[i] - i` (within the slip's range): the number of slips
/// before the physical position of logical index `t` is the number of `adj` entries <= `t`.
#[derive(Clone, Debug)]
pub(crate) struct Remap {
    dead: u64,
    unit: Unit,
    slips: Vec<u64>,
    adj: Vec<u64>,
}

#[derive(Copy, Clone, Debug)]
enum Unit {
    /// Slips are sectors; the zone's LBNs shift past them.
    Sectors,
    /// Slips are sectors; each range of `blks` physical sectors holds `lbns` LBNs.
    Range { blks: u64, lbns: u64 },
    /// Slips are whole tracks of `spt` sectors.
    Tracks { spt: u64 },
}

impl Remap {
    fn new(dead: u64, unit: Unit, slips: &[u32]) -> Remap {
        let slips: Vec<u64> = slips.iter().map(|&s| s as u64).collect();
        let adj = match unit {
            Unit::Range { blks, .. } => {
                let mut out = Vec::with_capacity(slips.len());
                let (mut range, mut i) = (u64::MAX, 0);
                for &s in &slips {
                    if s / blks != range {
                        range = s / blks;
                        i = 0;
                    }
                    out.push(s - i);
                    i += 1;
                }
                out
            }
            _ => slips.iter().enumerate().map(|(i, &s)| s - i as u64).collect(),
        };
        Remap { dead, unit, slips, adj }
    }

    /// Physical index (from the zone's first sector) of the zone's LBN number `l`.
    #[inline]
    fn phys(&self, l: u64) -> u64 {
        let t = l + self.dead;
        match self.unit {
            Unit::Sectors => t + self.adj.partition_point(|&a| a <= t) as u64,
            Unit::Range { blks, lbns } => {
                let (r, w) = (t / lbns, t % lbns);
                let key = r * blks + w;
                let k = self.adj.partition_point(|&a| a <= key) - self.adj.partition_point(|&a| a < r * blks);
                r * blks + w + k as u64
            }
            Unit::Tracks { spt } => {
                let tr = t / spt;
                (tr + self.adj.partition_point(|&a| a <= tr) as u64) * spt + t % spt
            }
        }
    }

    /// Inverse of `phys`: `None` for slipped, spare and empty sectors.
    fn logical(&self, p: u64) -> Option<u64> {
        let t = match self.unit {
            Unit::Sectors => {
                if self.slips.binary_search(&p).is_ok() {
                    return None;
                }
                p - self.slips.partition_point(|&s| s < p) as u64
            }
            Unit::Range { blks, lbns } => {
                if self.slips.binary_search(&p).is_ok() {
                    return None;
                }
                let r = p / blks;
                let k =
                    self.slips.partition_point(|&s| s < p) - self.slips.partition_point(|&s| s < r * blks);
                let w = p % blks - k as u64;
                if w >= lbns {
                    return None;
                }
                r * lbns + w
            }
            Unit::Tracks { spt } => {
                let tr = p / spt;
                if self.slips.binary_search(&tr).is_ok() {
                    return None;
                }
                (tr - self.slips.partition_point(|&s| s < tr) as u64) * spt + p % spt
            }
        };
        t.checked_sub(self.dead)
    }
}

impl ZoneRow {
    /// Whether some of the zone's slots hold no LBN (empty space, slips, spares): a track
    /// may then hold fewer LBNs than `spt`.
    #[inline]
    pub fn remapped(&self) -> bool {
        self.remap != NO_REMAP
    }

    /// ns from the index mark to the start of slot `p` (p may exceed spt: wraps linearly).
    #[inline]
    pub fn slot_start(&self, p: u64) -> u64 {
        ((p as u128 * self.slot_fp as u128) >> 32) as u64
    }
    /// ns to stream `n` sectors at the sustained rate.
    #[inline]
    pub fn stream_time(&self, n: u64) -> u64 {
        ((n as u128 * self.stream_fp as u128) >> 32) as u64
    }
    /// Whole sectors streamed in `ns` at the sustained rate.
    #[inline]
    pub fn stream_sectors(&self, ns: u64) -> u64 {
        ((ns as u128 * self.stream_inv as u128) >> 32) as u64
    }
}

/// The geometry of one spec, ready for O(log zones) mapping.
#[derive(Clone, Debug)]
pub struct Geometry {
    pub(crate) zones: Vec<ZoneRow>,
    pub(crate) surfaces: u32,
    pub(crate) capacity: u64,
    pub(crate) cylinders: u32,
    pub(crate) rev_ns: u64,
    pub(crate) remaps: Vec<Remap>,
    /// Zone of the first LBN of each `1 << lut_shift`-sector bucket: a zone lookup is one
    /// table read plus a step or two forward, instead of a branchy binary search.
    zone_lut: Vec<u16>,
    lut_shift: u32,
}

/// Buckets in the zone lookup table (at most; fewer for tiny disks).
const ZONE_LUT_BUCKETS: u64 = 4096;

/// Division by a fixed divisor without a divide instruction (20-90 cycles on x86): one
/// widening multiply by `floor(2^64 / d)`, which underestimates the quotient by at most
/// one, and one correction step. Exact for every `u64` dividend.
#[derive(Copy, Clone, Debug)]
pub(crate) struct FastDiv {
    d: u64,
    m: u64,
}

impl FastDiv {
    pub(crate) fn new(d: u64) -> FastDiv {
        assert!(d > 0, "division by zero");
        let m = if d == 1 { u64::MAX } else { ((1u128 << 64) / d as u128) as u64 };
        FastDiv { d, m }
    }
    /// `(a / d, a % d)`.
    #[inline]
    pub(crate) fn divrem(&self, a: u64) -> (u64, u64) {
        let mut q = ((a as u128 * self.m as u128) >> 64) as u64;
        let mut r = a - q * self.d;
        if r >= self.d {
            q += 1;
            r -= self.d;
        }
        (q, r)
    }
    #[inline]
    pub(crate) fn rem(&self, a: u64) -> u64 {
        self.divrem(a).1
    }
}

impl Geometry {
    /// `head_switch_ns` and `one_cyl_ns` are the switch times a sequential transfer pays at
    /// track and cylinder boundaries (for the sustained streaming rate).
    pub(crate) fn new(spec: &DiskSpec, head_switch_ns: u64, one_cyl_ns: u64) -> Geometry {
        let rev = spec.revolution().0;
        let surfaces = spec.surfaces;
        let mut zones = Vec::with_capacity(spec.zones.len());
        let mut remaps = Vec::new();
        let (mut lbn, mut cyl) = (0u64, 0u32);
        for (zi, z) in spec.zones.iter().enumerate() {
            if lbn >= spec.capacity_sectors {
                break;
            }
            let spt = z.sectors_per_track as u64;
            let spc = spt * surfaces as u64;
            let (mut offset, mut remap, mut lbns) = (0, NO_REMAP, spc * z.cylinders as u64);
            if let Some(l) = &spec.layout {
                let zl = &l.zones[zi];
                cyl = zl.first_cylinder;
                offset = zl.first_block_offset;
                lbns = zl.lbns(l.sparing, z.cylinders, surfaces, z.sectors_per_track);
                let unit = match l.sparing {
                    Sparing::Tracks => Some(Unit::Tracks { spt }),
                    Sparing::Range { cylinders: r } => {
                        Some(Unit::Range { blks: spc * r as u64, lbns: spc * r as u64 - zl.spares as u64 })
                    }
                    _ if zl.empty_front > 0 || !zl.slips.is_empty() => Some(Unit::Sectors),
                    _ => None,
                };
                if let Some(unit) = unit {
                    remap = remaps.len() as u32;
                    remaps.push(Remap::new(zl.empty_front as u64, unit, &zl.slips));
                }
            }
            let end = (lbn + lbns).min(spec.capacity_sectors);
            // A switch that the skew covers costs exactly the skew; one it does not cover
            // costs the skew plus a revolution.
            let gap = |skew: u32, t: u64| -> u64 {
                let s = skew as u64;
                if s * rev >= t * spt {
                    s
                } else {
                    s + spt
                }
            };
            let per_cyl_slots = spc
                + (surfaces as u64 - 1) * gap(z.track_skew, head_switch_ns)
                + gap(z.cylinder_skew, one_cyl_ns);
            // ns per sector = rev * per_cyl_slots / (spt * spc)
            let stream_fp =
                (((rev as u128 * per_cyl_slots as u128) << 32) / (spt as u128 * spc as u128)) as u64;
            let stream_inv = ((1u128 << 64) / stream_fp as u128) as u64;
            zones.push(ZoneRow {
                first_lbn: lbn,
                end_lbn: end,
                first_cyl: cyl,
                spt: z.sectors_per_track,
                track_skew: z.track_skew,
                cyl_skew_step: (((surfaces as u64 - 1) * z.track_skew as u64 + z.cylinder_skew as u64) % spt)
                    as u32,
                sectors_per_cyl: spc,
                div_cyl: FastDiv::new(spc),
                div_spt: FastDiv::new(spt),
                slot_fp: (((rev as u128) << 32) / spt as u128) as u64,
                stream_fp,
                stream_inv,
                offset,
                remap,
            });
            lbn = end;
            cyl += z.cylinders;
        }
        let last = zones.last().expect("validated: at least one zone");
        let used_cyls = if spec.layout.is_some() {
            spec.cylinders()
        } else {
            last.first_cyl + ((last.end_lbn - last.first_lbn).div_ceil(last.sectors_per_cyl)) as u32
        };
        assert!(zones.len() <= u16::MAX as usize, "too many zones");
        let cap = spec.capacity_sectors;
        let mut lut_shift = 0;
        while (cap >> lut_shift) > ZONE_LUT_BUCKETS {
            lut_shift += 1;
        }
        let zone_lut = (0..=(cap - 1) >> lut_shift)
            .map(|b| (zones.partition_point(|z| z.first_lbn <= b << lut_shift) - 1) as u16)
            .collect();
        Geometry {
            zones,
            surfaces,
            capacity: cap,
            cylinders: used_cyls,
            rev_ns: rev,
            remaps,
            zone_lut,
            lut_shift,
        }
    }

    /// Addressable sectors.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Cylinders holding addressable sectors.
    pub fn cylinders(&self) -> u32 {
        self.cylinders
    }
    pub fn surfaces(&self) -> u32 {
        self.surfaces
    }
    /// One revolution (ns, rounded).
    pub fn revolution(&self) -> headway_sched::Duration {
        headway_sched::Duration(self.rev_ns)
    }
    /// Zones actually holding addressable sectors.
    pub fn zone_count(&self) -> usize {
        self.zones.len()
    }
    /// First LBN of zone `i`.
    pub fn zone_first_lbn(&self, i: usize) -> u64 {
        self.zones[i].first_lbn
    }

    /// Index of the zone holding `lbn` (the last zone for LBNs at or past the capacity).
    #[inline]
    pub(crate) fn zone_index(&self, lbn: u64) -> usize {
        let b = ((lbn.min(self.capacity - 1)) >> self.lut_shift) as usize;
        let mut i = self.zone_lut[b] as usize;
        while i + 1 < self.zones.len() && self.zones[i + 1].first_lbn <= lbn {
            i += 1;
        }
        i
    }

    /// Where `lbn` lives. `lbn` must be below the capacity (debug-checked; beyond it the
    /// last zone is extrapolated).
    #[inline]
    pub fn locate(&self, lbn: u64) -> Location {
        debug_assert!(lbn < self.capacity, "lbn {lbn} beyond capacity {}", self.capacity);
        let zi = self.zone_index(lbn);
        let z = &self.zones[zi];
        let mut p = lbn - z.first_lbn;
        if z.remap != NO_REMAP {
            p = self.remaps[z.remap as usize].phys(p);
        }
        let (c, r) = z.div_cyl.divrem(p);
        let (head, sector) = z.div_spt.divrem(r);
        let spt = z.spt as u64;
        let skew = z.div_spt.rem(z.offset as u64 + c * z.cyl_skew_step as u64 + head * z.track_skew as u64);
        let mut slot = sector + skew;
        if slot >= spt {
            slot -= spt;
        }
        Location {
            cylinder: z.first_cyl + c as u32,
            head: head as u32,
            sector: sector as u32,
            slot: slot as u32,
            zone: zi as u32,
        }
    }

    /// Inverse of [`Geometry::locate`] (ignores `slot`): the LBN at a cylinder, head and
    /// logical sector, or `None` outside the addressable range.
    pub fn lbn_of(&self, cylinder: u32, head: u32, sector: u32) -> Option<u64> {
        let zi = self.zones.partition_point(|z| z.first_cyl <= cylinder).checked_sub(1)?;
        let z = &self.zones[zi];
        if head >= self.surfaces || sector >= z.spt {
            return None;
        }
        let mut l =
            (cylinder - z.first_cyl) as u64 * z.sectors_per_cyl + head as u64 * z.spt as u64 + sector as u64;
        if z.remap != NO_REMAP {
            l = self.remaps[z.remap as usize].logical(l)?;
        }
        let lbn = z.first_lbn + l;
        (lbn < z.end_lbn).then_some(lbn)
    }

    /// Sectors per track at `lbn`.
    pub fn sectors_per_track(&self, lbn: u64) -> u32 {
        self.zones[self.zone_index(lbn)].spt
    }

    /// Sustained media rate when streaming through the zone holding `lbn`, in bytes per
    /// second (head and cylinder switches included).
    pub fn streaming_rate(&self, lbn: u64) -> f64 {
        let z = &self.zones[self.zone_index(lbn)];
        512.0 * 1e9 * (1u64 << 32) as f64 / z.stream_fp as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin;
    use proptest::prelude::*;

    fn geo(name: &str) -> Geometry {
        crate::Hdd::new(builtin(name).unwrap()).geometry().clone()
    }

    #[test]
    fn capacity_as_stated() {
        let g = geo("wd5000aaks");
        assert_eq!(g.capacity(), 976_773_168);
        assert_eq!(geo("hd080hj").capacity(), 156_301_488);
        assert_eq!(geo("cheetah9lp").capacity(), 17_783_240);
        assert_eq!(geo("ibm18es").capacity(), 17_916_240);
        assert_eq!(geo("deskstar-34gxp").capacity(), 40_088_160);
        let last = g.locate(g.capacity() - 1);
        assert!(last.cylinder < g.cylinders());
    }

    #[test]
    fn first_and_boundary_lbns() {
        let g = geo("wd5000aaks");
        let z = g.zones[0];
        assert_eq!(g.locate(0), Location { cylinder: 0, head: 0, sector: 0, slot: 0, zone: 0 });
        let t1 = g.locate(z.spt as u64);
        assert_eq!((t1.cylinder, t1.head, t1.sector, t1.slot), (0, 1, 0, z.track_skew));
        let c1 = g.locate(z.sectors_per_cyl);
        assert_eq!((c1.cylinder, c1.head, c1.sector), (1, 0, 0));
        let zs = crate::builtin("wd5000aaks").unwrap().zones[0];
        let expect = (3 * zs.track_skew as u64 + zs.cylinder_skew as u64) % z.spt as u64;
        assert_eq!(c1.slot as u64, expect);
        let z1 = g.zones[1];
        let l = g.locate(z1.first_lbn);
        assert_eq!((l.cylinder, l.head, l.sector, l.slot, l.zone), (z1.first_cyl, 0, 0, 0, 1));
    }

    #[test]
    fn mapping_is_monotone_across_the_disk() {
        for name in crate::builtin_names() {
            let g = geo(name);
            let step = g.capacity() / 100_003;
            let mut prev = g.locate(0);
            let mut lbn = 0;
            while lbn < g.capacity() {
                let l = g.locate(lbn);
                assert!(
                    (l.cylinder, l.head, l.sector) >= (prev.cylinder, prev.head, prev.sector),
                    "{name}: lbn {lbn}"
                );
                prev = l;
                lbn += step;
            }
        }
    }

    #[test]
    fn fast_division_is_exact() {
        let ds =
            [1u64, 2, 3, 7, 254, 1029, 2059, 8236, 8_333_333, 6_640_000_000, u32::MAX as u64 + 7, u64::MAX];
        let mut x = 0x1234_5678_9abc_def0u64;
        for &d in &ds {
            let f = FastDiv::new(d);
            for a in [0, 1, d - 1, d, d.wrapping_add(1), u64::MAX, u64::MAX - 1, u32::MAX as u64] {
                assert_eq!(f.divrem(a), (a / d, a % d), "{a} / {d}");
            }
            for _ in 0..10_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                assert_eq!(f.divrem(x), (x / d, x % d), "{x} / {d}");
                let small = x >> 20;
                assert_eq!(f.divrem(small), (small / d, small % d));
            }
        }
    }

    proptest! {
        #[test]
        fn round_trip_and_inside_geometry(frac in 0.0f64..1.0, which in 0..crate::builtin_names().len()) {
            let name = crate::builtin_names()[which];
            let g = geo(name);
            let lbn = ((g.capacity() as f64 * frac) as u64).min(g.capacity() - 1);
            let l = g.locate(lbn);
            prop_assert!(l.cylinder < g.cylinders());
            prop_assert!(l.head < g.surfaces());
            let spt = g.sectors_per_track(lbn);
            prop_assert!(l.sector < spt && l.slot < spt);
            prop_assert_eq!(g.lbn_of(l.cylinder, l.head, l.sector), Some(lbn));
            if lbn + 1 < g.capacity() {
                let n = g.locate(lbn + 1);
                prop_assert!((n.cylinder, n.head, n.sector) > (l.cylinder, l.head, l.sector));
            }
        }
    }
}

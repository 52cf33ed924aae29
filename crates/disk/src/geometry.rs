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
//! With a [`crate::spec::Layout`] (DiskSim imports, `dm_layout_g1`): zones sit at their
//! stated cylinders and take LBNs in the order listed; a zone's first track starts
//! `first_block_offset` slots past the index mark; the sparing scheme decides which
//! sectors hold no LBN (empty front, spares, slips) and where defects move LBNs, and the
//! mapping scheme which head holds each surface: see [`crate::layout`], which also gives
//! the skew rule those layouts follow.

use crate::layout::{surfaces, ZoneMap};
use crate::spec::{DiskSpec, Mapping};

/// Where an LBN lives on the platters.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub cylinder: u32,
    pub head: u32,
    /// Sector index within the track, before skew: 0 is where the track's first LBN sits
    /// when the layout skips nothing on the track.
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
    /// Slot of the zone's first sector, sector 0 of its first track ("Offset of first
    /// block"; the zone's first LBN, unless the layout skips sectors at its front).
    pub offset: u32,
    /// Index into `Geometry::maps` when the zone's LBNs do not simply take its sectors in
    /// order with heads in order (empty space, slips, spares inside the zone, defects, a
    /// non-conventional mapping scheme; see [`ZoneMap`]).
    pub remap: u32,
}

const NO_REMAP: u32 = u32::MAX;

impl ZoneRow {
    /// Whether the zone's LBNs are not simply laid out slot after slot, track after track
    /// (empty space, slips, spares, defects, reversed heads): a track may then hold fewer
    /// LBNs than `spt`, so a run on it must be checked.
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
    pub(crate) maps: Vec<ZoneMap>,
    mapping: Mapping,
    /// `(first cylinder, one past the last, zone index)` of each zone, by first cylinder
    /// (zones may be listed in any cylinder order).
    by_cylinder: Vec<(u32, u32, u32)>,
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
    /// The divisor.
    #[inline]
    pub(crate) fn d(&self) -> u64 {
        self.d
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
        let (mut maps, mut by_cylinder) = (Vec::new(), Vec::new());
        let (mut lbn, mut cyl) = (0u64, 0u32);
        // one past the highest cylinder an LBN takes
        let mut reached = 0u32;
        for (zi, z) in spec.zones.iter().enumerate() {
            if lbn >= spec.capacity_sectors {
                break;
            }
            let spt = z.sectors_per_track as u64;
            let spc = spt * surfaces as u64;
            let (mut offset, mut remap, mut lbns) = (0, NO_REMAP, spc * z.cylinders as u64);
            let mut map = None;
            if let Some(l) = &spec.layout {
                let zl = &l.zones[zi];
                cyl = zl.first_cylinder;
                offset = zl.first_block_offset;
                lbns = zl.lbns(l.sparing, z.cylinders, surfaces, z.sectors_per_track);
                map = ZoneMap::new(l.sparing, zl, z, surfaces, lbns);
                if map.is_none() && l.mapping != Mapping::Conventional {
                    // the head order alone takes the general path
                    map = Some(ZoneMap::plain());
                }
            }
            let end = (lbn + lbns).min(spec.capacity_sectors);
            let last_phys = match &map {
                Some(m) => m.max_phys(end - lbn),
                None => end - lbn - 1,
            };
            reached = reached.max(cyl + (last_phys / spc) as u32 + 1);
            if let Some(m) = map {
                remap = maps.len() as u32;
                maps.push(m);
            }
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
            by_cylinder.push((cyl, cyl + z.cylinders, zones.len() as u32 - 1));
            lbn = end;
            cyl += z.cylinders;
        }
        assert!(!zones.is_empty(), "validated: at least one zone");
        // a layout's cylinder count covers every zone (and LBNs the forward rule puts past
        // them); without one, the zones are contiguous from cylinder 0
        let used_cyls = if spec.layout.is_some() { spec.cylinders().max(reached) } else { reached };
        by_cylinder.sort_unstable();
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
            maps,
            mapping: spec.layout.as_ref().map_or(Mapping::Conventional, |l| l.mapping),
            by_cylinder,
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
        let p = lbn - z.first_lbn;
        if z.remap != NO_REMAP {
            return self.locate_mapped(z, zi, p);
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

    /// [`Geometry::locate`] in a zone with a [`ZoneMap`]: LBN number `l` of zone `zi`. Kept
    /// out of line: inlined, it slows the plain zones' path (every built-in drive's).
    #[inline(never)]
    fn locate_mapped(&self, z: &ZoneRow, zi: usize, l: u64) -> Location {
        let map = &self.maps[z.remap as usize];
        let (c, r) = z.div_cyl.divrem(map.phys(l));
        let (ordinal, sector) = z.div_spt.divrem(r);
        let head = surfaces::head(self.mapping, ordinal as u32, self.surfaces, z.first_cyl, c);
        let spt = z.spt as u64;
        let turn = z.offset as u64
            + c * z.cyl_skew_step as u64
            + ordinal * z.track_skew as u64
            + map.skew_extra(c, head);
        let mut slot = sector + z.div_spt.rem(turn);
        if slot >= spt {
            slot -= spt;
        }
        Location {
            cylinder: z.first_cyl + c as u32,
            head,
            sector: sector as u32,
            slot: slot as u32,
            zone: zi as u32,
        }
    }

    /// Inverse of [`Geometry::locate`] (ignores `slot`): the LBN at a cylinder, head and
    /// sector, or `None` where no LBN is (outside the zones, spare, slipped or empty
    /// sectors, defects whose LBN moved away). A sector the layout gives two LBNs (see
    /// [`crate::layout`]) answers one of them.
    pub fn lbn_of(&self, cylinder: u32, head: u32, sector: u32) -> Option<u64> {
        let i = self.by_cylinder.partition_point(|&(first, ..)| first <= cylinder);
        let (_, end, zi) = self.by_cylinder[i.checked_sub(1)?];
        let z = &self.zones[zi as usize];
        if cylinder >= end || head >= self.surfaces || sector >= z.spt {
            return None;
        }
        let c = (cylinder - z.first_cyl) as u64;
        let ordinal = surfaces::head(self.mapping, head, self.surfaces, z.first_cyl, c);
        let mut l = c * z.sectors_per_cyl + ordinal as u64 * z.spt as u64 + sector as u64;
        if z.remap != NO_REMAP {
            l = self.maps[z.remap as usize].logical(l, z.end_lbn - z.first_lbn)?;
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

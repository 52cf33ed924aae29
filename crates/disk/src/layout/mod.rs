//! DiskSim 4.0's `dm_layout_g1` layouts: where each LBN of a zone sits, under every
//! sparing scheme and mapping scheme DiskSim accepts.
//!
//! An imported drive ([`crate::spec::Layout`]) maps an LBN in four steps:
//!
//! 1. **Zone.** Zones take LBNs in the order the file lists them, whatever their
//!    cylinders; the zone's *position* of an LBN is its offset in the zone plus the empty
//!    space at the zone's front.
//! 2. **Sparing scheme.** The position becomes a zone-relative physical index
//!    `p = c * B + i * T + s` (`c` the cylinder from the zone's first, `i` the surface
//!    ordinal, `s` the sector on the track, `T` sectors per track, `B = S * T` per
//!    cylinder): spares are skipped, slips counted in one pass over the list as the file
//!    writes it ([`slips`]), defects moved ([`defects`]). One module per family:
//!
//!    | `Sparing scheme used` | module |
//!    |---|---|
//!    | 0 (headway only), 9, 10; 4, 6, 7 in zones without spares | [`per_zone`] |
//!    | 1 | [`track_sparing`] |
//!    | 2, 4, 5, 6, 7 | [`per_cylinder`] |
//!    | 3 | [`per_track`] |
//!    | 8 | [`per_range`] |
//!
//! 3. **Mapping scheme.** The surface ordinal becomes a physical head ([`surfaces`]).
//! 4. **Skew.** The sector's angular slot (headway's `Location::slot`) is
//!    `(O + (i + (S - 1) * c) * TS + c * CS + extra + s) mod T`: the zone's first track
//!    starts at the offset of its first block `O`, each track switch adds the track skew
//!    `TS`, each cylinder switch the cylinder skew `CS` on top; the skew restarts at each
//!    zone. `extra` is DiskSim's "slips push the skew forward": the number of
//!    slips on the zone's earlier cylinders (schemes 2, 4, 5, 6) or earlier tracks
//!    (scheme 3), 0 otherwise.
//!
//! Where DiskSim contradicts itself (its forward mapping puts an LBN where its reverse
//! lookup, which it runs on every media access, finds none or another, so DiskSim aborts
//! or misbehaves when that LBN is accessed), headway maps the LBN where the forward rule
//! puts it and goes on; each module says where that happens. An LBN the forward rule puts
//! on a cylinder past its zone keeps its zone's sectors per track and skew.
//! [`crate::geometry::Geometry::lbn_of`] inverts the forward rule: a sector two LBNs share
//! answers one of them.

mod counts;
pub mod defects;
pub mod per_cylinder;
pub mod per_range;
pub mod per_track;
pub mod per_zone;
pub mod slips;
pub mod surfaces;
pub mod track_sparing;

use crate::spec::{Sparing, Zone, ZoneLayout};
use counts::SortedCounts;
use defects::Defects;
use per_cylinder::PerCylinder;
use per_range::PerRange;
use per_track::PerTrack;
use per_zone::PerZone;
use track_sparing::TrackSparing;

/// The sparing scheme's rule for one zone.
#[derive(Clone, Debug)]
enum Kind {
    Zone(PerZone),
    Tracks(TrackSparing),
    Cylinder(PerCylinder),
    Track(PerTrack),
    Range(PerRange),
}

/// The skew's slip term: slips on the zone's earlier cylinders (schemes 2, 4, 5, 6) or
/// earlier tracks (scheme 3, tracks counted by physical head), duplicates included.
#[derive(Clone, Debug)]
pub(crate) enum Extra {
    None,
    Cylinders { sorted: SortedCounts, per_cyl: u64 },
    Tracks { sorted: SortedCounts, spt: u64, surfaces: u64 },
}

impl Extra {
    #[inline]
    fn get(&self, c: u64, head: u32) -> u64 {
        match self {
            Extra::None => 0,
            Extra::Cylinders { sorted, per_cyl } => sorted.below(c * per_cyl),
            Extra::Tracks { sorted, spt, surfaces } => sorted.below((c * surfaces + head as u64) * spt),
        }
    }
}

/// Where a zone's LBNs sit, for a zone whose LBNs do not simply take its physical sectors
/// in order from its first.
#[derive(Clone, Debug)]
pub(crate) struct ZoneMap {
    /// "Empty space at zone front", in positions.
    dead: u64,
    kind: Kind,
    extra: Extra,
}

impl ZoneMap {
    /// The zone's map under `sparing`; `None` when LBN `l` of the zone is simply its
    /// physical index `l` (and the skew has no slip term). `lbns` is the zone's LBN count.
    pub(crate) fn new(
        sparing: Sparing,
        zl: &ZoneLayout,
        z: &Zone,
        surfaces: u32,
        lbns: u64,
    ) -> Option<ZoneMap> {
        let t = z.sectors_per_track as u64;
        let b = t * surfaces as u64;
        let p = zl.spares as u64;
        let positions = lbns + zl.empty_front as u64;
        let (slips, pairs) = (&zl.slips[..], &zl.defects[..]);
        let (kind, spares_inside) = match sparing {
            Sparing::Tracks => (Kind::Tracks(TrackSparing::new(t, slips, pairs)), false),
            Sparing::SectorsPerTrack => (Kind::Track(PerTrack::new(t, p, slips, pairs, positions)), p > 0),
            Sparing::Range { cylinders: r } => {
                (Kind::Range(PerRange::new(b * r as u64, p, slips, pairs, positions)), p > 0)
            }
            // with no spares the slip-to-end rule is the zone's single pass
            s if s.slip_to_end() && p == 0 => (Kind::Zone(PerZone::new(slips, pairs)), false),
            s if s.per_cylinder() || s == Sparing::End => {
                (Kind::Cylinder(PerCylinder::new(b, p, slips, pairs, s.slip_to_end(), positions)), p > 0)
            }
            _ => (Kind::Zone(PerZone::new(slips, pairs)), false),
        };
        let mut sorted: Vec<u64> = slips.iter().map(|&s| s as u64).collect();
        sorted.sort_unstable();
        let sorted = SortedCounts::new(sorted);
        let extra = match sparing {
            _ if sorted.is_empty() => Extra::None,
            Sparing::SectorsPerTrack => Extra::Tracks { sorted, spt: t, surfaces: surfaces as u64 },
            s if s.per_cylinder() => Extra::Cylinders { sorted, per_cyl: b },
            _ => Extra::None,
        };
        let map = ZoneMap { dead: zl.empty_front as u64, kind, extra };
        let identity = map.dead == 0 && slips.is_empty() && map.defects().is_empty() && !spares_inside;
        (!identity).then_some(map)
    }

    /// LBN `l` of the zone at physical index `l`: for zones that only reorder heads.
    pub(crate) fn plain() -> ZoneMap {
        ZoneMap { dead: 0, kind: Kind::Zone(PerZone::new(&[], &[])), extra: Extra::None }
    }

    fn defects(&self) -> &Defects {
        match &self.kind {
            Kind::Zone(k) => &k.defects,
            Kind::Tracks(k) => &k.defects,
            Kind::Cylinder(k) => &k.defects,
            Kind::Track(k) => &k.defects,
            Kind::Range(k) => &k.defects,
        }
    }

    /// Physical index of zone position `x`.
    #[inline(always)]
    fn phys_at(&self, x: u64) -> u64 {
        // the common rule first (schemes 7, 9, 10 and 0): one compare, no jump table
        if let Kind::Zone(k) = &self.kind {
            return k.phys(x);
        }
        match &self.kind {
            Kind::Zone(k) => k.phys(x),
            Kind::Tracks(k) => k.phys(x),
            Kind::Cylinder(k) => k.phys(x),
            Kind::Track(k) => k.phys(x),
            Kind::Range(k) => k.phys(x),
        }
    }

    /// Physical index before defects.
    fn pre(&self, x: u64) -> u64 {
        match &self.kind {
            Kind::Zone(k) => k.pre(x),
            Kind::Tracks(k) => k.pre(x),
            Kind::Cylinder(k) => k.pre(x),
            Kind::Track(k) => k.pre(x),
            Kind::Range(k) => k.pre(x),
        }
    }

    /// The position a defect pair is looked up with.
    fn raw(&self, x: u64) -> u64 {
        match &self.kind {
            Kind::Tracks(k) => k.raw(x),
            Kind::Cylinder(k) => k.raw(x),
            _ => self.pre(x),
        }
    }

    /// Physical index (from the zone's first sector) of the zone's LBN number `l`.
    #[inline(always)]
    pub(crate) fn phys(&self, l: u64) -> u64 {
        self.phys_at(l + self.dead)
    }

    /// The skew's slip term for cylinder `c` of the zone, physical head `head`.
    #[inline]
    pub(crate) fn skew_extra(&self, c: u64, head: u32) -> u64 {
        self.extra.get(c, head)
    }

    /// The zone LBN the forward mapping puts on physical index `p` (`lbns` LBNs in the
    /// zone), if any. Found by binary search, as the positions grow with the LBN within a
    /// sparing unit (and across units, for every list a drive would write).
    pub(crate) fn logical(&self, p: u64, lbns: u64) -> Option<u64> {
        let (lo, hi) = (self.dead, self.dead + lbns);
        let find = |f: &dyn Fn(u64) -> u64, want: u64| -> Option<u64> {
            let (mut a, mut b) = (lo, hi);
            while a < b {
                let m = a + (b - a) / 2;
                if f(m) >= want {
                    b = m;
                } else {
                    a = m + 1;
                }
            }
            (a..hi).take_while(|&x| f(x) == want).find(|&x| self.phys_at(x) == p)
        };
        let moved = self.defects().moves().find_map(|(key, _)| find(&|x| self.raw(x), key));
        moved.or_else(|| find(&|x| self.pre(x), p)).map(|x| x - self.dead)
    }

    /// The highest physical index any of the zone's `lbns` LBNs takes.
    pub(crate) fn max_phys(&self, lbns: u64) -> u64 {
        let last = self.dead + lbns - 1;
        // within a sparing unit the index grows with the LBN: each unit's last LBN
        let unit_ends = |per: u64| (per - 1..last).step_by(per as usize).chain([last]);
        let mut max = match &self.kind {
            Kind::Cylinder(k) => unit_ends(k.lbns_per_unit()).map(|x| self.pre(x)).max(),
            Kind::Track(k) => unit_ends(k.lbns_per_unit()).map(|x| self.pre(x)).max(),
            Kind::Range(k) => unit_ends(k.lbns_per_unit()).map(|x| self.pre(x)).max(),
            Kind::Zone(_) | Kind::Tracks(_) => Some(self.pre(last)),
        }
        .unwrap_or(0);
        for (key, _) in self.defects().moves() {
            if let Some(l) = self.logical_raw(key, lbns) {
                max = max.max(self.phys_at(l));
            }
        }
        max
    }

    /// A zone position whose defect lookup key is `key`, if any.
    fn logical_raw(&self, key: u64, lbns: u64) -> Option<u64> {
        let (mut a, mut b) = (self.dead, self.dead + lbns);
        while a < b {
            let m = a + (b - a) / 2;
            if self.raw(m) >= key {
                b = m;
            } else {
                a = m + 1;
            }
        }
        (a < self.dead + lbns && self.raw(a) == key).then_some(a)
    }
}

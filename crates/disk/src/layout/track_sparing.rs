//! Track sparing: sparing scheme 1.
//!
//! Whole tracks are the unit. The zone's LBNs fill its tracks in order (from the zone's
//! first track, the empty front counted in sectors), skipping every slipped track, and the
//! last `spares` tracks of the zone are spares. A defect pair names a track by its index
//! and sends the whole track's LBNs to the replacement track, sector for sector. DiskSim
//! refuses a zone whose slips and defects outnumber its spare tracks. A remapped track is
//! not flagged as remapped, so DiskSim times it like any other.
//!
//! Track indices count the zone's tracks in LBN order: `cylinder * surfaces + surface`,
//! the surface as the mapping scheme orders them.

use super::defects::{Defects, Rule};
use super::slips::SinglePass;
use crate::geometry::FastDiv;

#[derive(Clone, Debug)]
pub(crate) struct TrackSparing {
    spt: FastDiv,
    slips: SinglePass,
    pub(super) defects: Defects,
}

impl TrackSparing {
    pub(crate) fn new(spt: u64, slips: &[u32], defects: &[(u32, u32)]) -> TrackSparing {
        TrackSparing {
            spt: FastDiv::new(spt),
            slips: SinglePass::new(slips),
            defects: Defects::new(defects, Rule::First),
        }
    }

    /// The track (after slips, before defects) and sector of zone position `x`.
    #[inline(always)]
    fn track(&self, x: u64) -> (u64, u64) {
        let (t, s) = self.spt.divrem(x);
        (t + self.slips.count(t), s)
    }

    /// Where a defect pair would look `x` up: its track.
    pub(super) fn raw(&self, x: u64) -> u64 {
        self.track(x).0
    }

    pub(super) fn pre(&self, x: u64) -> u64 {
        let (t, s) = self.track(x);
        t * self.spt.d() + s
    }

    #[inline(always)]
    pub(super) fn phys(&self, x: u64) -> u64 {
        let (t, s) = self.track(x);
        let t = self.defects.get(t).unwrap_or(t);
        t * self.spt.d() + s
    }
}

//! Spare sectors at the end of every track: sparing scheme 3.
//!
//! Each track keeps its last `spares` sectors, so it holds `T - spares` LBNs. An LBN's
//! track and position on it come from that count; then the slips on that track at or
//! before the running position (one pass over the zone's list, see [`super::slips`]) move
//! it on, into the track's spare sectors. Defects are then looked up through *every* pair
//! in list order, each compared with the position the earlier ones left (see
//! [`super::defects`]).
//!
//! Each track is also turned by the number of slips on the zone's earlier tracks, counting
//! tracks by *physical* head (the skew's `extra`, see [`super`]): the rotation moves with the slips.
//!
//! DiskSim quirks: an LBN that slips push past the end of its track makes DiskSim abort;
//! headway carries it onto the next track (the physical index simply runs on). DiskSim's
//! reverse lookup undoes a slip only when the slip's index modulo the cylinder's sectors
//! equals the head number, so it aborts on, or misnumbers, most LBNs of a slipped track;
//! headway maps them where the forward rule puts them.

use super::defects::{Defects, Rule};
use super::slips::PerUnit;
use crate::geometry::FastDiv;

#[derive(Clone, Debug)]
pub(crate) struct PerTrack {
    spt: u64,
    lbns: FastDiv,
    slips: PerUnit,
    pub(super) defects: Defects,
}

impl PerTrack {
    pub(crate) fn new(
        spt: u64,
        spares: u64,
        slips: &[u32],
        defects: &[(u32, u32)],
        positions: u64,
    ) -> PerTrack {
        let lbns = spt - spares;
        PerTrack {
            spt,
            lbns: FastDiv::new(lbns),
            slips: PerUnit::new(slips, spt, lbns, false, positions.div_ceil(lbns)),
            defects: Defects::new(defects, Rule::Chain),
        }
    }

    /// Physical index before defects (also the position they are looked up with).
    #[inline(always)]
    pub(super) fn pre(&self, x: u64) -> u64 {
        let (t, r) = self.lbns.divrem(x);
        t * self.spt + r + self.slips.count(t, r)
    }

    pub(super) fn lbns_per_unit(&self) -> u64 {
        self.lbns.d()
    }

    #[inline(always)]
    pub(super) fn phys(&self, x: u64) -> u64 {
        let p = self.pre(x);
        self.defects.get(p).unwrap_or(p)
    }
}

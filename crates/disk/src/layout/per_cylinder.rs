//! Spare sectors on every cylinder: sparing schemes 2, 4, 5, 6 (and 7 with spares).
//!
//! Each cylinder keeps its last `spares` sectors for itself, so it holds `B - spares` LBNs
//! (`B` = sectors per cylinder). An LBN's cylinder and position within it come from that
//! count; then the slips are counted in one pass over the zone's list (see
//! [`super::slips`]): under schemes 2 and 5 only the slips of its own cylinder at or before
//! the running position (a slip is absorbed by the cylinder's spares), under the
//! "slip-to-end" schemes 4, 6 and 7 also every slip on an earlier cylinder, so each slip
//! pushes all the zone's later LBNs one position on. The count is added to the position,
//! and a position past the cylinder's LBN area carries over into the next cylinder's, still
//! counting `B - spares` a cylinder (never into the spare sectors). A defect pair is looked
//! up with the position *before* that carry, and sends the LBN to the replacement sector.
//!
//! Schemes 2, 4, 5 and 6 also turn each cylinder by the number of slips on the zone's
//! earlier cylinders (the skew's `extra`, see [`super`]). Schemes 5 and 6 were meant to keep the spares
//! at the front of each cylinder, but DiskSim's forward mapping ignores that and maps them
//! as 2 and 4; only its reverse lookup puts the spares at the front (and it aborts when an
//! LBN the forward mapping put on one of a cylinder's first `spares` sectors is accessed).
//! Scheme 7 counts its LBNs without subtracting spares, so with spares the zone's last
//! LBNs run onto cylinders past its end (where DiskSim aborts if they are accessed).
//!
//! DiskSim quirk, kept: under schemes 2 and 5 an LBN that a slip pushes past its cylinder's
//! LBN area carries over onto the next cylinder's first sector, which another LBN holds.
//! DiskSim aborts when that LBN is accessed; headway maps both there.

use super::defects::{Defects, Rule};
use super::slips::PerUnit;
use crate::geometry::FastDiv;

#[derive(Clone, Debug)]
pub(crate) struct PerCylinder {
    /// Physical sectors per cylinder.
    unit: u64,
    /// LBNs per cylinder.
    lbns: FastDiv,
    slips: PerUnit,
    pub(super) defects: Defects,
}

impl PerCylinder {
    /// `positions`: zone positions to map (LBNs plus the empty front).
    pub(crate) fn new(
        sectors_per_cyl: u64,
        spares: u64,
        slips: &[u32],
        defects: &[(u32, u32)],
        slip_to_end: bool,
        positions: u64,
    ) -> PerCylinder {
        let lbns = sectors_per_cyl - spares;
        PerCylinder {
            unit: sectors_per_cyl,
            lbns: FastDiv::new(lbns),
            slips: PerUnit::new(slips, sectors_per_cyl, lbns, slip_to_end, positions.div_ceil(lbns)),
            defects: Defects::new(defects, Rule::FirstMoved),
        }
    }

    /// Slips counted for zone position `x`, with its cylinder and position in it.
    #[inline(always)]
    fn counted(&self, x: u64) -> (u64, u64, u64) {
        let (q, r) = self.lbns.divrem(x);
        (q, r, self.slips.count(q, r))
    }

    /// The position a defect pair is looked up with (before the carry).
    pub(super) fn raw(&self, x: u64) -> u64 {
        let (q, r, k) = self.counted(x);
        q * self.unit + r + k
    }

    pub(super) fn pre(&self, x: u64) -> u64 {
        let (_, _, k) = self.counted(x);
        let (c, r) = self.lbns.divrem(x + k);
        c * self.unit + r
    }

    pub(super) fn lbns_per_unit(&self) -> u64 {
        self.lbns.d()
    }

    #[inline(always)]
    pub(super) fn phys(&self, x: u64) -> u64 {
        let (q, r, k) = self.counted(x);
        if let Some(t) = self.defects.get(q * self.unit + r + k) {
            return t;
        }
        let (c, r) = self.lbns.divrem(x + k);
        c * self.unit + r
    }
}

//! Spare sectors at the end of every range of cylinders: sparing scheme 8.
//!
//! The zone's cylinders are cut into ranges of `R` ("Rangesize for sparing"), from the
//! zone's first cylinder; each range keeps its last `spares` sectors, so it holds
//! `R * B - spares` LBNs. A trailing range of fewer than `R` cylinders has no spares (the
//! zone's LBN count subtracts `spares` once per whole range only). The slips of an LBN's
//! range at or before the running position (one pass over the list, see
//! [`super::slips`]) move it on into the range's spares. A defect pair sends the LBN to
//! its replacement read *relative to the LBN's own range* (replacement modulo the range's
//! sectors).
//!
//! When slips push an LBN past its range's end, it simply runs on into the next range's
//! cylinders, as in DiskSim.

use super::defects::{Defects, Rule};
use super::slips::PerUnit;
use crate::geometry::FastDiv;

#[derive(Clone, Debug)]
pub(crate) struct PerRange {
    /// Physical sectors per range.
    unit: FastDiv,
    lbns: FastDiv,
    slips: PerUnit,
    pub(super) defects: Defects,
}

impl PerRange {
    pub(crate) fn new(
        sectors_per_range: u64,
        spares: u64,
        slips: &[u32],
        defects: &[(u32, u32)],
        positions: u64,
    ) -> PerRange {
        let lbns = sectors_per_range - spares;
        PerRange {
            unit: FastDiv::new(sectors_per_range),
            lbns: FastDiv::new(lbns),
            slips: PerUnit::new(slips, sectors_per_range, lbns, false, positions.div_ceil(lbns)),
            defects: Defects::new(defects, Rule::FirstMoved),
        }
    }

    /// Physical index before defects (also the position they are looked up with).
    #[inline(always)]
    pub(super) fn pre(&self, x: u64) -> u64 {
        let (q, r) = self.lbns.divrem(x);
        q * self.unit.d() + r + self.slips.count(q, r)
    }

    pub(super) fn lbns_per_unit(&self) -> u64 {
        self.lbns.d()
    }

    #[inline(always)]
    pub(super) fn phys(&self, x: u64) -> u64 {
        let p = self.pre(x);
        match self.defects.get(p) {
            // the replacement, read within the LBN's own range
            Some(t) => self.lbns.divrem(x).0 * self.unit.d() + self.unit.rem(t),
            None => p,
        }
    }
}

//! Spares at the end of the zone: sparing schemes 9 and 10 (and headway's scheme 0).
//!
//! The zone's LBNs run through its physical sectors in order (track after track, surface
//! after surface, cylinder after cylinder, from the zone's first sector), skipping the
//! empty space at the front and every slipped sector; the sectors left over at the end of
//! the zone are its spares. Scheme 9 sets `spares` sectors aside for defects and slips use
//! them up (the zone keeps `sectors - empty - spares` LBNs); scheme 10 takes the slips out of
//! the capacity as well (`- slips`). A defect pair then moves an LBN that landed on a
//! defective sector to its replacement, anywhere in the zone.
//!
//! The slip-to-end schemes 4, 6 and 7 map the same way when a zone has no spares (their
//! per-cylinder rule then never leaves a cylinder's end unused), so they share this code.
//!
//! Scheme 0 ("no sparing") is refused by DiskSim 4.0 itself when it loads a file; headway
//! accepts it as "nothing set aside": this mapping, with `sectors - empty - slips` LBNs.
//!
//! DiskSim quirk, kept: with empty space at the front, DiskSim's reverse lookup compares the
//! physical index with the LBN count, and aborts when the zone's last `empty` LBNs are
//! accessed; headway maps them where the forward rule puts them.

use super::defects::{Defects, Rule};
use super::slips::SinglePass;

#[derive(Clone, Debug)]
pub(crate) struct PerZone {
    slips: SinglePass,
    pub(super) defects: Defects,
}

impl PerZone {
    pub(crate) fn new(slips: &[u32], defects: &[(u32, u32)]) -> PerZone {
        PerZone { slips: SinglePass::new(slips), defects: Defects::new(defects, Rule::FirstMoved) }
    }

    /// Physical index of zone position `x` (empty front included) before defects.
    #[inline(always)]
    pub(super) fn pre(&self, x: u64) -> u64 {
        x + self.slips.count(x)
    }

    #[inline(always)]
    pub(super) fn phys(&self, x: u64) -> u64 {
        let p = self.pre(x);
        self.defects.get(p).unwrap_or(p)
    }
}

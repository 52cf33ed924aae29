//! Which head holds each surface of a cylinder: DiskSim's "LBN-to-PBN mapping scheme".
//!
//! LBNs always fill a track, then the next surface of the same cylinder, then the next
//! cylinder; the mapping scheme only decides which physical head is the cylinder's first,
//! second, ... surface in that order (its *surface ordinal*):
//!
//! * 0, conventional: ordinal `i` is head `i` on every cylinder.
//! * 1: on the odd cylinders of a zone, counting the zone's first cylinder as 0, the heads
//!   run backwards (ordinal `i` is head `S - 1 - i`), so the step from one cylinder to the
//!   next stays on the same surface and costs no head switch.
//! * 2: the same, with odd *absolute* cylinder numbers reversed.
//!
//! The map is its own inverse. Everything else works in ordinals: the slips and defects of
//! a parameter file count tracks as `cylinder * S + ordinal`, and the skew turns each track
//! by its ordinal (so the tracks in LBN order are turned the same under all three schemes).
//! The one exception is scheme 3's skew term (`extra` in [`super`]), which DiskSim counts by
//! physical head.

use crate::spec::Mapping;

/// The head holding surface ordinal `ordinal` (or, the same map, the ordinal of a head) on
/// cylinder `first_cyl + c` of a zone starting at `first_cyl`.
#[inline]
pub(crate) fn head(mapping: Mapping, ordinal: u32, surfaces: u32, first_cyl: u32, c: u64) -> u32 {
    let reversed = match mapping {
        Mapping::Conventional => false,
        Mapping::ReverseOddCylindersInZone => c & 1 == 1,
        Mapping::ReverseOddCylinders => (first_cyl as u64 + c) & 1 == 1,
    };
    if reversed {
        surfaces - 1 - ordinal
    } else {
        ordinal
    }
}

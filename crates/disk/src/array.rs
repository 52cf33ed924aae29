//! Disk arrays: how an array address maps onto members (`--array raid0:N:STRIPE`,
//! `raid5:N:STRIPE`), the address side of 000 Section 2.2 (stream scheduling across an
//! array).
//!
//! * **RAID 0**: stripe unit `u` (sectors); array unit `k` lives on member `k mod N` at
//!   member sector `(k div N) * u`. Capacity `N * units_per_member * u`.
//! * **RAID 5, left-symmetric** (the Linux md default): each row of `N` units holds `N - 1`
//!   data units and one parity unit. Row `r`'s parity is on member `N - 1 - (r mod N)`; its
//!   data unit `j` (0-based) on member `(parity + 1 + j) mod N`. All units of a row share
//!   member sector `r * u`. Capacity `(N - 1) * units_per_member * u`.
//!
//! A request is split at unit boundaries into [`Piece`]s, one per unit touched, in array
//! order. Writes on RAID 5 come with a [`WritePlan`]: a row written whole gets its parity
//! computed from the new data (data and parity writes only); a row written in part is a
//! read-modify-write — read the old data of the written units and the old parity, then write
//! the new data and the new parity (the small-write penalty).

use std::fmt;
use std::str::FromStr;

use headway_sched::units::{parse_size, SizeBase};

/// Array organisations.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Level {
    Raid0,
    Raid5,
}

/// `LEVEL:N:STRIPE`, e.g. `raid0:5:64k`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ArraySpec {
    pub level: Level,
    pub members: u32,
    /// Stripe unit, sectors.
    pub unit: u64,
}

/// One unit-sized (or smaller) piece of an array request on one member.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub member: u32,
    /// Sector on the member.
    pub sector: u64,
    pub len: u32,
    /// Offset of the piece within the array request, sectors.
    pub offset: u64,
}

/// The member I/O a RAID 5 write becomes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WritePlan {
    /// Old data and old parity to read first (partial rows only).
    pub reads: Vec<Piece>,
    /// New data and new parity.
    pub writes: Vec<Piece>,
}

impl FromStr for ArraySpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |why: &str| {
            format!("bad array `{s}`: {why} (form: raid0:N:STRIPE or raid5:N:STRIPE, e.g. raid0:5:64k)")
        };
        let parts: Vec<&str> = s.split(':').collect();
        let [level, n, stripe] = parts[..] else { return Err(bad("three fields expected")) };
        let level = match level.to_ascii_lowercase().as_str() {
            "raid0" => Level::Raid0,
            "raid5" => Level::Raid5,
            _ => return Err(bad("level must be raid0 or raid5")),
        };
        let members: u32 = n.parse().map_err(|_| bad("N must be a whole number"))?;
        let min = if level == Level::Raid5 { 3 } else { 2 };
        if !(min..=64).contains(&members) {
            return Err(bad(&format!("N must be {min} to 64")));
        }
        let bytes =
            parse_size(stripe, SizeBase::Binary).map_err(|_| bad("STRIPE must be a size like 64k"))?;
        if bytes == 0 || !bytes.is_multiple_of(512) {
            return Err(bad("STRIPE must be a positive multiple of 512 bytes"));
        }
        Ok(ArraySpec { level, members, unit: bytes / 512 })
    }
}

impl fmt::Display for ArraySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            Level::Raid0 => "raid0",
            Level::Raid5 => "raid5",
        };
        let bytes = self.unit * 512;
        if bytes.is_multiple_of(1024) {
            write!(f, "{level}:{}:{}k", self.members, bytes / 1024)
        } else {
            write!(f, "{level}:{}:{bytes}", self.members)
        }
    }
}

impl ArraySpec {
    /// Data units per row.
    pub fn data_members(&self) -> u32 {
        match self.level {
            Level::Raid0 => self.members,
            Level::Raid5 => self.members - 1,
        }
    }

    /// Array capacity in sectors over members of `member_sectors` each (whole units only).
    pub fn capacity(&self, member_sectors: u64) -> u64 {
        (member_sectors / self.unit) * self.unit * self.data_members() as u64
    }

    /// Member holding parity for row `row` (RAID 5).
    pub fn parity_member(&self, row: u64) -> u32 {
        self.members - 1 - (row % self.members as u64) as u32
    }

    /// Where array data unit `k` lives: (member, row).
    pub fn locate_unit(&self, k: u64) -> (u32, u64) {
        let d = self.data_members() as u64;
        let (row, j) = (k / d, k % d);
        let member = match self.level {
            Level::Raid0 => j as u32,
            Level::Raid5 => ((self.parity_member(row) as u64 + 1 + j) % self.members as u64) as u32,
        };
        (member, row)
    }

    /// Where array sector `s` lives: (member, member sector).
    pub fn locate(&self, s: u64) -> (u32, u64) {
        let (member, row) = self.locate_unit(s / self.unit);
        (member, row * self.unit + s % self.unit)
    }

    /// The pieces of array request `[sector, sector + len)`, one per unit touched.
    pub fn split(&self, sector: u64, len: u32) -> impl Iterator<Item = Piece> + '_ {
        let end = sector + len as u64;
        let mut at = sector;
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let unit_end = (at / self.unit + 1) * self.unit;
            let stop = unit_end.min(end);
            let (member, msector) = self.locate(at);
            let p = Piece { member, sector: msector, len: (stop - at) as u32, offset: at - sector };
            at = stop;
            Some(p)
        })
    }

    /// What a RAID 5 write of `[sector, sector + len)` does on the members (for RAID 0:
    /// the pieces as writes, nothing to read).
    pub fn write_plan(&self, sector: u64, len: u32) -> WritePlan {
        let pieces: Vec<Piece> = self.split(sector, len).collect();
        if self.level == Level::Raid0 {
            return WritePlan { reads: Vec::new(), writes: pieces };
        }
        let d = self.data_members() as u64;
        let row_sectors = d * self.unit;
        let mut plan = WritePlan::default();
        let (first_row, last_row) = (sector / row_sectors, (sector + len as u64 - 1) / row_sectors);
        for row in first_row..=last_row {
            let (lo, hi) = (row * row_sectors, (row + 1) * row_sectors);
            let mine: Vec<&Piece> =
                pieces.iter().filter(|p| (lo..hi).contains(&(sector + p.offset))).collect();
            let whole = sector <= lo && sector + len as u64 >= hi;
            let parity = self.parity_member(row);
            // Parity covers the rows' written span within the unit: the union of the pieces'
            // in-unit ranges (whole unit for a full row).
            let (plo, phi) = if whole {
                (0, self.unit)
            } else {
                let lo_in = mine.iter().map(|p| p.sector % self.unit).min().unwrap_or(0);
                let hi_in = mine.iter().map(|p| p.sector % self.unit + p.len as u64).max().unwrap_or(0);
                (lo_in, hi_in)
            };
            let parity_piece = Piece {
                member: parity,
                sector: row * self.unit + plo,
                len: (phi - plo) as u32,
                offset: u64::MAX, // not part of the array request's data
            };
            if !whole {
                plan.reads.extend(mine.iter().map(|p| **p));
                plan.reads.push(parity_piece);
            }
            plan.writes.extend(mine.iter().map(|p| **p));
            plan.writes.push(parity_piece);
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The mapping written the long way round: count data units row by row, each row's
    /// data members listed in left-symmetric order (after the parity member, wrapping).
    fn reference(a: &ArraySpec, s: u64) -> (u32, u64) {
        let wanted = s / a.unit;
        let mut k = 0u64;
        for row in 0u64.. {
            let order: Vec<u32> = match a.level {
                Level::Raid0 => (0..a.members).collect(),
                Level::Raid5 => {
                    let parity = a.members - 1 - (row % a.members as u64) as u32;
                    (1..a.members).map(|i| (parity + i) % a.members).collect()
                }
            };
            for m in order {
                if k == wanted {
                    return (m, row * a.unit + s % a.unit);
                }
                k += 1;
            }
        }
        unreachable!()
    }

    #[test]
    fn specs_parse_and_print() {
        let a: ArraySpec = "raid0:5:64k".parse().unwrap();
        assert_eq!(a, ArraySpec { level: Level::Raid0, members: 5, unit: 128 });
        assert_eq!(a.to_string(), "raid0:5:64k");
        assert_eq!("RAID5:4:4096".parse::<ArraySpec>().unwrap().unit, 8);
        for bad in [
            "raid0:5",
            "raid1:5:64k",
            "raid0:x:64k",
            "raid5:2:64k",
            "raid0:5:100",
            "raid0:5:0k",
            "raid0:99:64k",
            "raid0:5:64q",
            "raid0:5:1.5k",
        ] {
            let e = bad.parse::<ArraySpec>().unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
        // a stripe is a size as headway_sched::units reads it, k = KiB = 1024
        assert_eq!("raid0:5:64KiB".parse::<ArraySpec>().unwrap().unit, 128);
        assert_eq!("raid0:5:1m".parse::<ArraySpec>().unwrap().unit, 2048);
        assert_eq!("raid0:5:0x1000".parse::<ArraySpec>().unwrap().unit, 8);
    }

    #[test]
    fn left_symmetric_raid5_rotates_parity_from_the_last_member() {
        let a: ArraySpec = "raid5:4:512".parse().unwrap();
        // row 0: parity on 3, data 0,1,2 on members 0,1,2
        assert_eq!(a.parity_member(0), 3);
        assert_eq!((0..3).map(|k| a.locate_unit(k).0).collect::<Vec<_>>(), vec![0, 1, 2]);
        // row 1: parity on 2, data 3,4,5 on 3,0,1
        assert_eq!(a.parity_member(1), 2);
        assert_eq!((3..6).map(|k| a.locate_unit(k).0).collect::<Vec<_>>(), vec![3, 0, 1]);
        // row 3: parity on 0, data on 1,2,3
        assert_eq!((9..12).map(|k| a.locate_unit(k).0).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(a.capacity(1000), 3 * 1000);
    }

    #[test]
    fn small_raid5_writes_read_modify_write_full_rows_do_not() {
        let a: ArraySpec = "raid5:5:4k".parse().unwrap(); // unit 8 sectors, row 32 sectors
        let small = a.write_plan(8, 8);
        assert_eq!(small.reads.len(), 2, "old data and old parity: {small:?}");
        assert_eq!(small.writes.len(), 2);
        assert_eq!(small.reads[1].member, a.parity_member(0));
        let full = a.write_plan(32, 32);
        assert!(full.reads.is_empty());
        assert_eq!(full.writes.len(), 5, "four data units and the parity");
        assert_eq!(full.writes[4], Piece { member: a.parity_member(1), sector: 8, len: 8, offset: u64::MAX });
    }

    proptest! {
        #[test]
        fn every_sector_maps_like_the_reference(
            raid5 in any::<bool>(), members in 3u32..8, unit in 1u64..20, s in 0u64..5_000
        ) {
            let a = ArraySpec { level: if raid5 { Level::Raid5 } else { Level::Raid0 }, members, unit };
            prop_assert_eq!(a.locate(s), reference(&a, s));
        }

        #[test]
        fn the_mapping_is_one_to_one_and_pieces_cover_the_request(
            raid5 in any::<bool>(), members in 3u32..7, unit in 1u64..16, sector in 0u64..2_000, len in 1u32..300
        ) {
            let a = ArraySpec { level: if raid5 { Level::Raid5 } else { Level::Raid0 }, members, unit };
            let mut seen = std::collections::HashSet::new();
            let mut next = 0u64;
            for p in a.split(sector, len) {
                prop_assert_eq!(p.offset, next, "pieces in array order, no gap");
                prop_assert!(p.len as u64 <= unit);
                for i in 0..p.len as u64 {
                    prop_assert_eq!(a.locate(sector + p.offset + i), (p.member, p.sector + i));
                    prop_assert!(seen.insert((p.member, p.sector + i)), "two array sectors on one member sector");
                    if raid5 {
                        prop_assert_ne!(p.member, a.parity_member((p.sector + i) / unit), "data on a parity unit");
                    }
                }
                next += p.len as u64;
            }
            prop_assert_eq!(next, len as u64);
        }
    }
}

//! Disk arrays: how an array address maps onto members (`--array LEVEL:N:STRIPE`), the
//! address side of 000 Section 2.2 (stream scheduling across an array).
//!
//! | `--array` | level |
//! |---|---|
//! | `raid0:N:STRIPE` (N 2-64) | RAID 0 |
//! | `raid1:N[:read=POLICY]` (N 2-64) | RAID 1: N copies of one drive's worth of data |
//! | `raid10:N:STRIPE[:C][:read=POLICY]` (C copies, 2 unless given; N a multiple of C, N / C at least 2) | RAID 10 |
//! | `raid4:N:STRIPE` (N 3-64) | RAID 4: parity on the last member |
//! | `raid5:N:STRIPE` (N 3-64) | RAID 5, left-symmetric |
//!
//! STRIPE is a size (`64k`, a multiple of 512 bytes); POLICY how a mirrored read picks its
//! copy ([`CopyChoice`]: `primary`, `random`, `rr`, `distance`, `queue`, `queue-distance`,
//! DiskSim's `Copy choice on read` 1 to 6; `queue-distance` unless given, the nearest to
//! Linux md's read balancing: the least busy mirror, then the nearest head).
//!
//! * **RAID 0**: stripe unit `u` (sectors); array unit `k` lives on member `k mod N` at
//!   member sector `(k div N) * u`. Capacity `N * units_per_member * u`.
//! * **RAID 10** (DiskSim's `Striped` + `Shadowed`): RAID 0 over the `D = N / C` data
//!   members; copy `c` of data member `d` is member `d + c * D` (the first `D` members are
//!   the primaries). Writes go to every copy, reads to one ([`mirror`]). Capacity
//!   `D * units_per_member * u`.
//! * **RAID 1**: the same with one data member: every member holds the whole array, no
//!   striping. Capacity one member's.
//! * **RAID 4** (DiskSim's `Parity_disk`): each row of `N` units holds `N - 1` data units
//!   and one parity unit; parity always on member `N - 1`, data unit `j` on member `j`.
//! * **RAID 5, left-symmetric** (the Linux md default, DiskSim's `Parity_rotated` with
//!   rotation type 1): row `r`'s parity is on member `N - 1 - ((r div k) mod N)`, where the
//!   parity unit stays on one member for `k` rows (`k = 1` from `--array`; DiskSim's
//!   `Parity stripe unit = k x Stripe unit`); its data unit `j` (0-based) on member
//!   `(parity + 1 + j) mod N`. All units of a row share member sector `r * u`.
//!   RAID 4 and 5: capacity `(N - 1) * units_per_member * u`.
//!
//! A request is split at unit boundaries into [`Piece`]s, one per unit touched, in array
//! order (on a mirror the data members' pieces: the array front picks a copy for a read);
//! under DiskSim's rules ([`disksim`], arrays imported from a `disksim_logorg`) the pieces
//! are joined into member requests as DiskSim joins them ([`join`]).
//! Writes come with a [`WritePlan`]: on a mirror the pieces to every copy; on RAID 4 and 5
//! a row written whole gets its parity computed from the new data (data and parity writes
//! only); a row written in part is a read-modify-write — read the old data of the written
//! units and the old parity, then write the new data and the new parity (the small-write
//! penalty).

pub mod disksim;
pub mod join;
pub mod mirror;
mod parity_table;

use std::fmt;
use std::str::FromStr;

use headway_sched::units::{parse_size, SizeBase};

pub use disksim::Disksim;
pub use mirror::{CopyChoice, CopyChooser, CopyView};

/// Array organisations.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Level {
    Raid0,
    Raid1,
    Raid10,
    Raid4,
    Raid5,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Raid0 => "raid0",
            Level::Raid1 => "raid1",
            Level::Raid10 => "raid10",
            Level::Raid4 => "raid4",
            Level::Raid5 => "raid5",
        }
    }

    /// Whether rows carry a parity unit.
    pub fn has_parity(self) -> bool {
        matches!(self, Level::Raid4 | Level::Raid5)
    }

    /// Whether data is kept in several copies.
    pub fn mirrored(self) -> bool {
        matches!(self, Level::Raid1 | Level::Raid10)
    }
}

/// An array: `LEVEL:N:STRIPE`, e.g. `raid0:5:64k` (module docs).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ArraySpec {
    pub level: Level,
    pub members: u32,
    /// Stripe unit, sectors (0 on RAID 1, which does not stripe).
    pub unit: u64,
    /// Copies of each data member (RAID 1 and 10; 1 otherwise).
    pub copies: u32,
    /// RAID 5: rows whose parity units sit on one member before it moves on (1 otherwise).
    pub parity_rows: u32,
    /// How a mirrored read picks its copy (unused without mirrors).
    pub copy_choice: CopyChoice,
    /// DiskSim's rules, for an array imported from a `disksim_logorg` ([`disksim`]).
    pub disksim: Option<Disksim>,
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

/// The member I/O an array write becomes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WritePlan {
    /// Old data and old parity to read first (RAID 4 and 5, partial rows only).
    pub reads: Vec<Piece>,
    /// New data (to every copy on a mirror) and new parity.
    pub writes: Vec<Piece>,
    /// The reads each write waits for (indices into `reads`); `None`: every write waits
    /// for every read.
    pub waits: Option<Vec<Vec<u32>>>,
}

/// The read policy of mirrors from `--array` (module docs).
pub const DEFAULT_COPY_CHOICE: CopyChoice = CopyChoice::ShortestQueueThenDistance;

const FORMS: &str = "raid0|raid4|raid5:N:STRIPE, raid10:N:STRIPE[:COPIES][:read=POLICY] or \
                     raid1:N[:read=POLICY], e.g. raid0:5:64k";

impl FromStr for ArraySpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("bad array `{s}`: {why} (form: {FORMS})");
        let mut parts: Vec<&str> = s.split(':').collect();
        let level = match parts[0].to_ascii_lowercase().as_str() {
            "raid0" => Level::Raid0,
            "raid1" => Level::Raid1,
            "raid10" => Level::Raid10,
            "raid4" => Level::Raid4,
            "raid5" => Level::Raid5,
            _ => return Err(bad("level must be raid0, raid1, raid10, raid4 or raid5")),
        };
        let mut copy_choice = DEFAULT_COPY_CHOICE;
        if level.mirrored() {
            if let Some(policy) = parts.last().and_then(|p| p.strip_prefix("read=")) {
                copy_choice = CopyChoice::from_name(policy)
                    .ok_or_else(|| bad(&format!("read= takes one of {}", CopyChoice::names())))?;
                parts.pop();
            }
        }
        let fields = match level {
            Level::Raid1 => 2..=2,
            Level::Raid10 => 3..=4,
            _ => 3..=3,
        };
        if !fields.contains(&parts.len()) {
            return Err(bad("wrong number of fields"));
        }
        let members: u32 = parts[1].parse().map_err(|_| bad("N must be a whole number"))?;
        let min = match level {
            Level::Raid0 | Level::Raid1 => 2,
            Level::Raid4 | Level::Raid5 => 3,
            Level::Raid10 => 4,
        };
        if !(min..=64).contains(&members) {
            return Err(bad(&format!("N must be {min} to 64")));
        }
        let unit = match parts.get(2) {
            None => 0,
            Some(stripe) => {
                let bytes = parse_size(stripe, SizeBase::Binary)
                    .map_err(|_| bad("STRIPE must be a size like 64k"))?;
                if bytes == 0 || !bytes.is_multiple_of(512) {
                    return Err(bad("STRIPE must be a positive multiple of 512 bytes"));
                }
                bytes / 512
            }
        };
        let copies = match level {
            Level::Raid1 => members,
            Level::Raid10 => {
                let c: u32 = match parts.get(3) {
                    None => 2,
                    Some(c) => c.parse().map_err(|_| bad("COPIES must be a whole number"))?,
                };
                if c < 2 || !members.is_multiple_of(c) || members / c < 2 {
                    return Err(bad("COPIES must be 2 or more, divide N and leave 2 or more data members"));
                }
                c
            }
            _ => 1,
        };
        Ok(ArraySpec { level, members, unit, copies, parity_rows: 1, copy_choice, disksim: None })
    }
}

impl fmt::Display for ArraySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.level.name(), self.members)?;
        if self.level != Level::Raid1 {
            let bytes = self.unit * 512;
            if bytes.is_multiple_of(1024) {
                write!(f, ":{}k", bytes / 1024)?;
            } else {
                write!(f, ":{bytes}")?;
            }
        }
        if self.level == Level::Raid10 && self.copies != 2 {
            write!(f, ":{}", self.copies)?;
        }
        if self.level.mirrored() && self.copy_choice != DEFAULT_COPY_CHOICE {
            write!(f, ":read={}", self.copy_choice.name())?;
        }
        if self.parity_rows != 1 {
            // (DiskSim's `Parity stripe unit`: not an `--array` field)
            write!(f, " (parity unit {} stripe units)", self.parity_rows)?;
        }
        if self.disksim.is_some() {
            write!(f, " (DiskSim logorg)")?;
        }
        Ok(())
    }
}

impl ArraySpec {
    /// An array of `level` as `--array` gives it: 2 copies on RAID 10, `members` on RAID 1,
    /// parity rotating every row, mirrors reading by [`DEFAULT_COPY_CHOICE`].
    pub fn new(level: Level, members: u32, unit: u64) -> ArraySpec {
        let copies = match level {
            Level::Raid1 => members,
            Level::Raid10 => 2,
            _ => 1,
        };
        let unit = if level == Level::Raid1 { 0 } else { unit };
        ArraySpec {
            level,
            members,
            unit,
            copies,
            parity_rows: 1,
            copy_choice: DEFAULT_COPY_CHOICE,
            disksim: None,
        }
    }

    /// Data units per row (on a mirror: the data members, `N / copies`).
    pub fn data_members(&self) -> u32 {
        match self.level {
            Level::Raid0 => self.members,
            Level::Raid1 | Level::Raid10 => self.members / self.copies,
            Level::Raid4 | Level::Raid5 => self.members - 1,
        }
    }

    /// Array capacity in sectors over members of `member_sectors` each (whole units only;
    /// RAID 1: a member's; under DiskSim's rules DiskSim's, module `disksim`).
    pub fn capacity(&self, member_sectors: u64) -> u64 {
        if self.level == Level::Raid1 {
            return member_sectors;
        }
        let (n, p) = (self.members as u64, member_sectors);
        let whole_rows = (p / self.unit) * self.unit * self.data_members() as u64;
        match (self.disksim, self.level) {
            (None, _) => whole_rows,
            // DiskSim's (module `disksim`), RAID 4 and 5 within their whole rows
            (Some(_), Level::Raid5) => whole_rows.min(n * ((p as f64 * (n - 1) as f64 / n as f64) as u64)),
            (Some(_), Level::Raid4) => whole_rows,
            (Some(_), _) => p * self.data_members() as u64,
        }
    }

    /// DiskSim's last row on RAID 0 and 10 (module `disksim`) when a member is not a whole
    /// number of stripe units: (its first array sector, its first member sector, its unit).
    #[inline]
    fn tail_row(&self) -> Option<(u64, u64, u64)> {
        let rules = self.disksim?;
        if self.level.has_parity() || self.level == Level::Raid1 {
            return None;
        }
        let r = rules.member_sectors % self.unit;
        let at = rules.member_sectors - r;
        (r > 0).then(|| (at * self.data_members() as u64, at, r))
    }

    /// Member holding parity for row `row` (RAID 4 and 5).
    pub fn parity_member(&self, row: u64) -> u32 {
        match self.level {
            Level::Raid4 => self.members - 1,
            _ => self.members - 1 - ((row / self.parity_rows as u64) % self.members as u64) as u32,
        }
    }

    /// Member holding copy `copy` of data member `data` (mirrors; copy 0 is `data`).
    pub fn copy_member(&self, data: u32, copy: u32) -> u32 {
        data + copy * self.data_members()
    }

    /// Where array data unit `k` lives: (member, row); on a mirror the primary.
    pub fn locate_unit(&self, k: u64) -> (u32, u64) {
        let d = self.data_members() as u64;
        let (row, j) = (k / d, k % d);
        let member = match self.level {
            Level::Raid5 => ((self.parity_member(row) as u64 + 1 + j) % self.members as u64) as u32,
            _ => j as u32,
        };
        (member, row)
    }

    /// Where array sector `s` lives: (member, member sector); on a mirror the primary.
    pub fn locate(&self, s: u64) -> (u32, u64) {
        if self.level == Level::Raid1 {
            return (0, s);
        }
        if let Some((start, at, r)) = self.tail_row().filter(|t| s >= t.0) {
            return (((s - start) / r) as u32, at + (s - start) % r);
        }
        let (member, row) = self.locate_unit(s / self.unit);
        (member, row * self.unit + s % self.unit)
    }

    /// The pieces of array request `[sector, sector + len)`, one per unit touched (RAID 1:
    /// the request on member 0).
    pub fn split(&self, sector: u64, len: u32) -> impl Iterator<Item = Piece> + '_ {
        let end = sector + len as u64;
        let mut at = sector;
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let unit_end = match self.tail_row() {
                _ if self.level == Level::Raid1 => end,
                Some((start, _, r)) if at >= start => start + ((at - start) / r + 1) * r,
                _ => (at / self.unit + 1) * self.unit,
            };
            let stop = unit_end.min(end);
            let (member, msector) = self.locate(at);
            let p = Piece { member, sector: msector, len: (stop - at) as u32, offset: at - sector };
            at = stop;
            Some(p)
        })
    }

    /// The member requests of `[sector, sector + len)` (on a mirror the data members',
    /// before a read picks its copies): [`split`](Self::split)'s pieces, or under DiskSim's
    /// rules the pieces joined as DiskSim joins them ([`join`]).
    pub fn member_reads(&self, sector: u64, len: u32) -> Vec<Piece> {
        match self.disksim {
            None => self.split(sector, len).collect(),
            Some(_) if self.level.has_parity() => parity_table::reads(self, sector, len),
            Some(_) => join::per_member(self.split(sector, len)),
        }
    }

    /// Each piece of `pieces` (on data members) to every copy, in order: a piece's primary,
    /// its copy 1, ..., then the next piece's.
    pub fn to_every_copy(&self, pieces: &[Piece]) -> Vec<Piece> {
        pieces
            .iter()
            .flat_map(|p| {
                (0..self.copies).map(move |c| Piece { member: self.copy_member(p.member, c), ..*p })
            })
            .collect()
    }

    /// What a write of `[sector, sector + len)` does on the members: RAID 0 its pieces as
    /// writes, a mirror its pieces to every copy (nothing to read either way), RAID 4 and 5
    /// the read-modify-write or full-row plan of the module docs (imported from DiskSim:
    /// `parity_table`'s).
    pub fn write_plan(&self, sector: u64, len: u32) -> WritePlan {
        if !self.level.has_parity() {
            let pieces = self.member_reads(sector, len);
            let writes = if self.level.mirrored() { self.to_every_copy(&pieces) } else { pieces };
            return WritePlan { reads: Vec::new(), writes, waits: None };
        }
        if let Some(rules) = &self.disksim {
            return parity_table::write_plan(self, rules, sector, len);
        }
        let pieces: Vec<Piece> = self.split(sector, len).collect();
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
mod tests;

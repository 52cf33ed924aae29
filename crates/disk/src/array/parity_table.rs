//! RAID 4 and 5 writes DiskSim's way: a restatement of the write branch of DiskSim 4.0's
//! `logorg_parity_table` (`disksim_logorg.c`) with its helpers that read old contents
//! (`logorg_parity_table_read_old`), reconstruct (`logorg_parity_table_recon`) and set
//! the writes' dependencies (`logorg_parity_table_dodeps_sync` / `_nosync`). Used for
//! arrays imported from a `disksim_logorg` ([`super::Disksim`]).
//!
//! * **Pieces and rows.** The request is split at unit boundaries. A row counts the data
//!   units the request touches, `n`, a unit counting even when only part of it is written.
//!   A row with `n = D` (every data unit) is *full*, even when its first or last unit is
//!   written only in part: it is written with no reads at all, parity over the whole unit.
//!   Only the first and the last row can be partial.
//! * **Parity range.** A row's parity piece sits on its parity member at the row's member
//!   sectors over the union of the in-unit ranges its pieces write. One exception: a
//!   request within one row made of exactly two pieces, `[o, u)` at the end of one unit and
//!   `[0, e)` at the start of the next, with `o > e` (the two ranges do not overlap in the
//!   unit): DiskSim then writes two parity pieces, `[0, e)` and `[o, u)`, and treats the
//!   row as two rows of one unit each.
//! * **Partial rows.** With `n` below the `RMW vs. reconstruct` point, read-modify-write:
//!   read the old contents of exactly what will be written, each data piece and the parity
//!   piece. From the point on, reconstruct-write: with parity range `[lo, hi)`, read every
//!   untouched data unit of the row over `[lo, hi)` and every touched unit over what its
//!   written range leaves of `[lo, hi)`; the old parity is not read. (In the split case the
//!   second one-unit row is reconstructed as though its piece were in unit 0: DiskSim reads
//!   units 1 to `D - 1` of the row over `[0, e)`, the written unit included, not unit 0.)
//! * **Tags.** The reads and the parity write of the first partial row carry tag bit 1,
//!   those of the last partial row the next bit (2 when the first row was partial too).
//! * **Dependencies.** `Synch writes for safety = 1`: every write waits for every read
//!   (with no read at all DiskSim 4.0 dereferences a null list and crashes — there is no
//!   DiskSim answer to copy — and headway simply issues the writes). `= 0`: a write waits
//!   for every read on its own member, and, carrying a tag, for every read sharing a tag
//!   bit with it; a write waiting for nothing goes out with the reads.
//! * **Joining.** The pre-reads, and the writes (data and parity together), are each joined
//!   per member across gaps of up to 32 sectors, a joined piece carrying the union of its
//!   parts' tags (so a data write joined with a partial row's parity write waits as that
//!   parity write does), and listed from the highest member down, on a member from the
//!   highest sector down ([`super::join`]).
//! * **Reads** of the array ([`reads`]) are the unit pieces joined the same way.

use super::join::within_32;
use super::{ArraySpec, Disksim, Piece, WritePlan};

/// One row of the write: its data pieces (with their unit in the row) and parity range.
struct Row {
    row: u64,
    pieces: Vec<(u32, Piece)>,
    /// The parity range within the unit.
    parity: (u64, u64),
    /// The split case's second row: reconstructed as though its piece were in unit 0.
    as_unit0: bool,
    tag: u8,
}

/// The write plan of `[sector, sector + len)` on RAID 4 or 5 `a` under DiskSim's `rules`.
pub(super) fn write_plan(a: &ArraySpec, rules: &Disksim, sector: u64, len: u32) -> WritePlan {
    let (u, d) = (a.unit, a.data_members());
    let mut rows: Vec<Row> = Vec::new();
    for p in a.split(sector, len) {
        let k = (sector + p.offset) / u;
        let (row, j) = (k / d as u64, (k % d as u64) as u32);
        let (lo, hi) = (p.sector % u, p.sector % u + p.len as u64);
        match rows.last_mut() {
            Some(r) if r.row == row => {
                r.pieces.push((j, p));
                r.parity = (r.parity.0.min(lo), r.parity.1.max(hi));
            }
            _ => rows.push(Row { row, pieces: vec![(j, p)], parity: (lo, hi), as_unit0: false, tag: 0 }),
        }
    }
    if let [r] = &rows[..] {
        if let [(_, first), (_, second)] = r.pieces[..] {
            let (o, e) = (first.sector % u, second.len as u64);
            if o > e {
                let one = |piece: (u32, Piece), parity, as_unit0| Row {
                    row: r.row,
                    pieces: vec![piece],
                    parity,
                    as_unit0,
                    tag: 0,
                };
                rows = vec![one(r.pieces[0], (o, u), false), one(r.pieces[1], (0, e), true)];
            }
        }
    }
    let last = rows.len() - 1;
    let mut next_tag = 1u8;
    for (i, r) in rows.iter_mut().enumerate() {
        if r.pieces.len() < d as usize && (i == 0 || i == last) {
            r.tag = next_tag;
            next_tag <<= 1;
        }
    }
    let mut reads: Vec<(Piece, u8)> = Vec::new();
    let mut writes: Vec<(Piece, u8)> = Vec::new();
    for r in &rows {
        let (plo, phi) = r.parity;
        let at = |member: u32, lo: u64, hi: u64| Piece {
            member,
            sector: r.row * u + lo,
            len: (hi - lo) as u32,
            offset: u64::MAX, // not the array request's data
        };
        let parity = at(a.parity_member(r.row), plo, phi);
        writes.extend(r.pieces.iter().map(|(_, p)| (*p, 0)));
        writes.push((parity, r.tag));
        let n = r.pieces.len() as u32;
        if n == d {
            continue;
        }
        if n < rules.rmw_point {
            reads.extend(r.pieces.iter().map(|(_, p)| (*p, r.tag)));
            reads.push((parity, r.tag));
            continue;
        }
        for j in 0..d {
            let member = a.locate_unit(r.row * d as u64 + j as u64).0;
            let written = if r.as_unit0 {
                (j == 0).then_some((plo, phi))
            } else {
                r.pieces
                    .iter()
                    .find(|(pj, _)| *pj == j)
                    .map(|(_, p)| (p.sector % u, p.sector % u + p.len as u64))
            };
            let (wlo, whi) = written.unwrap_or((phi, phi));
            if wlo > plo {
                reads.push((at(member, plo, wlo.min(phi)), r.tag));
            }
            if written.is_some() && whi < phi {
                reads.push((at(member, whi, phi), r.tag));
            }
        }
    }
    let (reads, writes) = (within_32(reads), within_32(writes));
    let waits = (!rules.synch_writes).then(|| {
        writes
            .iter()
            .map(|(w, tag)| {
                (0..reads.len() as u32)
                    .filter(|&i| {
                        let (r, rtag) = reads[i as usize];
                        r.member == w.member || rtag & tag != 0
                    })
                    .collect()
            })
            .collect()
    });
    WritePlan {
        reads: reads.into_iter().map(|r| r.0).collect(),
        writes: writes.into_iter().map(|w| w.0).collect(),
        waits,
    }
}

/// The member reads of an array read of `[sector, sector + len)` on RAID 4 or 5 under
/// DiskSim's rules: its unit pieces joined per member (module docs).
pub(super) fn reads(a: &ArraySpec, sector: u64, len: u32) -> Vec<Piece> {
    within_32(a.split(sector, len).map(|p| (p, 0)).collect()).into_iter().map(|p| p.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Level;

    /// RAID 5 of 4 members (3 data units a row), unit 8, DiskSim's rules.
    fn raid5(rmw_point: u32, synch_writes: bool) -> ArraySpec {
        ArraySpec {
            disksim: Some(Disksim { rmw_point, synch_writes, member_sectors: 1 << 30 }),
            ..ArraySpec::new(Level::Raid5, 4, 8)
        }
    }

    /// (member, sector, len) of each piece.
    fn at(pieces: &[Piece]) -> Vec<(u32, u64, u32)> {
        pieces.iter().map(|p| (p.member, p.sector, p.len)).collect()
    }

    #[test]
    fn a_partial_row_at_the_point_is_reconstructed_below_it_read_modify_written() {
        // [4, 12): unit 0 [4, 8) on member 0 and unit 1 [0, 4) on member 1; parity on 3 over
        // [0, 8); two units touched
        let p = raid5(2, false).write_plan(4, 8);
        // reconstruct: member 0's rest [0, 4), member 1's rest [4, 8), member 2 whole
        assert_eq!(at(&p.reads), [(2, 0, 8), (1, 4, 4), (0, 0, 4)]);
        assert_eq!(at(&p.writes), [(3, 0, 8), (1, 0, 4), (0, 4, 4)]);
        // the parity write waits for the row's reads, a data write for its member's
        assert_eq!(p.waits, Some(vec![vec![0, 1, 2], vec![1], vec![2]]));
        // rmw point 3 (e.g. 0.75 x 4): read what is written, old parity included
        let p = raid5(3, false).write_plan(4, 8);
        assert_eq!(at(&p.reads), [(3, 0, 8), (1, 0, 4), (0, 4, 4)]);
        assert_eq!(p.waits, Some(vec![vec![0, 1, 2], vec![1], vec![2]]));
        // synchronous: every write waits for every read
        assert_eq!(raid5(3, true).write_plan(4, 8).waits, None);
    }

    #[test]
    fn two_pieces_not_overlapping_in_the_unit_are_two_one_unit_rows() {
        // [6, 11): unit 0 [6, 8) on member 0, unit 1 [0, 3) on member 1; 6 > 3
        let p = raid5(4, false).write_plan(6, 5);
        // two parity pieces [6, 8) and [0, 3) on member 3, each row read-modify-written;
        // 3 sectors apart, the two parity reads join over [0, 8), as do the parity writes
        // (tags 1 and 2 united)
        assert_eq!(at(&p.reads), [(3, 0, 8), (1, 0, 3), (0, 6, 2)]);
        assert_eq!(at(&p.writes), [(3, 0, 8), (1, 0, 3), (0, 6, 2)]);
        assert_eq!(p.waits, Some(vec![vec![0, 1, 2], vec![1], vec![2]]));
        // reconstructed (point 1): the first row reads units 1 and 2 over [6, 8); the
        // second, as though its piece were in unit 0, units 1 and 2 over [0, 3): member 1
        // (the written unit) and 2 read [0, 3) and [6, 8), joined
        let p = raid5(1, false).write_plan(6, 5);
        assert_eq!(at(&p.reads), [(2, 0, 8), (1, 0, 8)]);
    }

    #[test]
    fn a_row_touching_every_unit_is_full_even_partly_written() {
        // [2, 22): units 0, 1, 2 all touched, the first and last in part: no reads
        let p = raid5(4, true).write_plan(2, 20);
        assert!(p.reads.is_empty());
        assert_eq!(at(&p.writes), [(3, 0, 8), (2, 0, 6), (1, 0, 8), (0, 2, 6)]);
    }

    #[test]
    fn partial_first_and_last_rows_carry_their_own_tags_and_joined_writes_unite_them() {
        // unit 64, rows of 192 sectors; [128, 448): row 0 unit 2 (member 2 [0, 64), parity
        // on 3), row 1 whole (members 3, 0, 1 at [64, 128), parity on 2), row 2 unit 6
        // (member 2 [128, 192), parity on 1)
        let a = ArraySpec { unit: 64, ..raid5(4, false) };
        let p = a.write_plan(128, 320);
        // member 2's two reads are 64 sectors apart: not joined
        assert_eq!(at(&p.reads), [(3, 0, 64), (2, 128, 64), (2, 0, 64), (1, 128, 64)]);
        // the writes join: member 3 row 0's parity with row 1's data, member 2 data, parity,
        // data, member 1 row 1's data with row 2's parity
        assert_eq!(at(&p.writes), [(3, 0, 128), (2, 0, 192), (1, 64, 128), (0, 64, 64)]);
        // member 3's write (tag 1) waits for member 3's read and row 0's (reads 0, 2);
        // member 1's (tag 2) for reads 1 and 3; member 2's data for its member's reads;
        // member 0 has nothing to wait for: its write goes out with the reads
        assert_eq!(p.waits, Some(vec![vec![0, 2], vec![1, 2], vec![1, 3], vec![]]));
        // unit 8: the same request in small units joins member 2's reads (gap 8)
        let p = raid5(4, false).write_plan(16, 40);
        assert_eq!(at(&p.reads), [(3, 0, 8), (2, 0, 24), (1, 16, 8)]);
    }

    #[test]
    fn array_reads_join_a_members_units_through_its_parity_unit() {
        // unit 8, [0, 96): rows 0-3, parity on 3, 2, 1, 0; each member's data units joined
        // across its own parity unit (8 sectors)
        let a = raid5(4, true);
        assert_eq!(at(&reads(&a, 0, 96)), [(3, 8, 24), (2, 0, 32), (1, 0, 32), (0, 0, 24)]);
        // unit 64, rows 0-2: member 2's units either side of its parity unit stay apart
        let a = ArraySpec { unit: 64, ..raid5(4, true) };
        assert_eq!(
            at(&reads(&a, 0, 576)),
            [(3, 64, 128), (2, 128, 64), (2, 0, 64), (1, 0, 128), (0, 0, 192)]
        );
    }

    #[test]
    fn raid4_takes_the_same_procedure_with_its_parity_member() {
        let a = ArraySpec {
            disksim: Some(Disksim { rmw_point: 4, synch_writes: true, member_sectors: 1 << 30 }),
            ..ArraySpec::new(Level::Raid4, 4, 8)
        };
        // row 1, unit 1: member 1 at 8, parity on member 3
        let p = a.write_plan(32, 8);
        assert_eq!(at(&p.reads), [(3, 8, 8), (1, 8, 8)]);
        assert_eq!(at(&p.writes), [(3, 8, 8), (1, 8, 8)]);
    }
}

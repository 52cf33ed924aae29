//! How DiskSim joins an array request's unit pieces into member requests (arrays imported
//! from a `disksim_logorg`; headway's own arrays send one piece per unit and leave merging
//! to the member schedulers).
//!
//! * **Striping without parity** (RAID 0, and the data members of RAID 1/10): DiskSim's
//!   `logorg_mapstriped` gives each member it touches exactly one request. A member's
//!   pieces of one request lie in consecutive rows and are contiguous on it, so the request
//!   starts at the member's first piece and is as long as its pieces together. They are
//!   listed from the member the request starts on, then in increasing member order,
//!   wrapping round (`per_member`).
//! * **Parity tables** (RAID 4 and 5): DiskSim's `logorg_join_seqreqs` sorts a list's
//!   pieces by member and sector and merges neighbours on a member whose gap is at most
//!   `LOGORG_PARITY_SEQGIVE` = 32 sectors; the merged request also covers the gap (a read
//!   through the member's own parity unit, say), and carries the union of its parts' row
//!   tags. Reads of an array read, a write's pre-reads and its writes (data and parity
//!   together) are each joined on their own. The joined list runs from the highest member
//!   down, and on a member from the highest sector down (`within_32`).

use super::Piece;

/// Sectors of gap up to which DiskSim joins two pieces on a member.
pub const SEQ_GIVE: u64 = 32;

/// One request per member of `pieces` (in array order, as `split` gives them): from its
/// first piece, as long as its pieces together, members in the order first touched.
pub(super) fn per_member(pieces: impl Iterator<Item = Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for p in pieces {
        match out.iter_mut().find(|q| q.member == p.member) {
            Some(q) => {
                debug_assert_eq!(q.sector + q.len as u64, p.sector, "a member's pieces are contiguous");
                q.len += p.len;
            }
            None => out.push(p),
        }
    }
    out
}

/// `pieces` (each with its row tag bits) joined per member across gaps of at most
/// [`SEQ_GIVE`] sectors, tags united; highest member first, then highest sector first.
pub(super) fn within_32(mut pieces: Vec<(Piece, u8)>) -> Vec<(Piece, u8)> {
    pieces.sort_by_key(|(p, _)| (p.member, p.sector));
    let mut out: Vec<(Piece, u8)> = Vec::with_capacity(pieces.len());
    for (p, tag) in pieces {
        match out.last_mut() {
            Some((q, qtag)) if q.member == p.member && p.sector <= q.sector + q.len as u64 + SEQ_GIVE => {
                let end = (q.sector + q.len as u64).max(p.sector + p.len as u64);
                q.len = (end - q.sector) as u32;
                q.offset = q.offset.min(p.offset);
                *qtag |= tag;
            }
            _ => out.push((p, tag)),
        }
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(member: u32, sector: u64, len: u32) -> Piece {
        Piece { member, sector, len, offset: 0 }
    }

    #[test]
    fn each_member_gets_one_request_from_its_first_piece() {
        // DiskSim's example (N = 4, u = 8): [20, 60) is member 2 [4, 8), 3 [0, 8), 0 [8, 16),
        // 1 [8, 16), 2 [8, 16), 3 [8, 12)
        let pieces = [p(2, 4, 4), p(3, 0, 8), p(0, 8, 8), p(1, 8, 8), p(2, 8, 8), p(3, 8, 4)];
        let got: Vec<(u32, u64, u32)> =
            per_member(pieces.into_iter()).iter().map(|q| (q.member, q.sector, q.len)).collect();
        assert_eq!(got, [(2, 4, 12), (3, 0, 12), (0, 8, 8), (1, 8, 8)]);
    }

    #[test]
    fn pieces_32_sectors_apart_join_across_the_gap_33_do_not() {
        let got = within_32(vec![
            (p(1, 0, 8), 0),
            (p(1, 40, 8), 1), // gap 32: joined, [0, 48)
            (p(1, 81, 8), 0), // gap 33: apart
            (p(0, 8, 8), 2),
            (p(0, 0, 8), 0), // adjacent, listed out of order
        ]);
        let got: Vec<(u32, u64, u32, u8)> =
            got.iter().map(|(q, t)| (q.member, q.sector, q.len, *t)).collect();
        assert_eq!(got, [(1, 81, 8, 0), (1, 0, 48, 1), (0, 0, 16, 2)]);
    }
}

use super::*;
use proptest::prelude::*;

/// The mapping written the long way round: count data units row by row, each row's data
/// members listed in order (RAID 0/10: every data member; RAID 4: all but the last;
/// RAID 5: after the parity member, wrapping, the parity moving every `parity_rows` rows).
fn reference(a: &ArraySpec, s: u64) -> (u32, u64) {
    let wanted = s / a.unit;
    let mut k = 0u64;
    for row in 0u64.. {
        let n = a.members;
        let order: Vec<u32> = match a.level {
            Level::Raid0 => (0..n).collect(),
            Level::Raid10 => (0..n / a.copies).collect(),
            Level::Raid4 => (0..n - 1).collect(),
            Level::Raid5 => {
                let parity = n - 1 - ((row / a.parity_rows as u64) % n as u64) as u32;
                (1..n).map(|i| (parity + i) % n).collect()
            }
            Level::Raid1 => unreachable!("no striping"),
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

fn piece(member: u32, sector: u64, len: u32, offset: u64) -> Piece {
    Piece { member, sector, len, offset }
}

#[test]
fn specs_parse_and_print() {
    let a: ArraySpec = "raid0:5:64k".parse().unwrap();
    assert_eq!(a, ArraySpec::new(Level::Raid0, 5, 128));
    assert_eq!((a.copies, a.parity_rows), (1, 1));
    assert_eq!(a.to_string(), "raid0:5:64k");
    assert_eq!("RAID5:4:4096".parse::<ArraySpec>().unwrap().unit, 8);
    for bad in [
        "raid0:5",
        "raid6:5:64k",
        "raid0:x:64k",
        "raid5:2:64k",
        "raid4:2:64k",
        "raid0:5:100",
        "raid0:5:0k",
        "raid0:99:64k",
        "raid0:5:64q",
        "raid0:5:1.5k",
        "raid0:5:64k:2",
        "raid0:5:64k:read=rr",
        "raid1:1",
        "raid1:2:64k",
        "raid1:2:read=nearest",
        "raid10:5:64k",
        "raid10:2:64k",
        "raid10:6:64k:6",
        "raid10:4:64k:3",
        "raid10:4:64k:1",
        "raid10:4:64k:read=",
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
fn mirrors_and_raid4_parse_and_print() {
    // (text, level, members, unit, copies, data members, read policy, printed)
    let cases = [
        ("raid1:2", Level::Raid1, 2, 0, 2, 1, DEFAULT_COPY_CHOICE, "raid1:2"),
        ("raid1:3:read=rr", Level::Raid1, 3, 0, 3, 1, CopyChoice::RoundRobin, "raid1:3:read=rr"),
        ("raid10:4:64k", Level::Raid10, 4, 128, 2, 2, DEFAULT_COPY_CHOICE, "raid10:4:64k"),
        ("raid10:6:4k:3", Level::Raid10, 6, 8, 3, 2, DEFAULT_COPY_CHOICE, "raid10:6:4k:3"),
        ("raid10:6:4k:2", Level::Raid10, 6, 8, 2, 3, DEFAULT_COPY_CHOICE, "raid10:6:4k"),
        (
            "raid10:8:4k:read=primary",
            Level::Raid10,
            8,
            8,
            2,
            4,
            CopyChoice::Primary,
            "raid10:8:4k:read=primary",
        ),
        (
            "raid10:6:4k:3:read=random",
            Level::Raid10,
            6,
            8,
            3,
            2,
            CopyChoice::Random,
            "raid10:6:4k:3:read=random",
        ),
        ("raid4:5:64k", Level::Raid4, 5, 128, 1, 4, DEFAULT_COPY_CHOICE, "raid4:5:64k"),
    ];
    for (text, level, members, unit, copies, data, read, printed) in cases {
        let a: ArraySpec = text.parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (a.level, a.members, a.unit, a.copies, a.copy_choice),
            (level, members, unit, copies, read)
        );
        assert_eq!(a.data_members(), data, "{text}");
        assert_eq!(a.to_string(), printed);
        assert_eq!(printed.parse::<ArraySpec>().unwrap(), a, "round trip of {text}");
    }
    assert_eq!("raid4:3:4k".parse::<ArraySpec>().unwrap(), ArraySpec::new(Level::Raid4, 3, 8));
    assert_eq!("raid1:2".parse::<ArraySpec>().unwrap(), ArraySpec::new(Level::Raid1, 2, 64));
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
fn a_parity_unit_of_two_stripe_units_stays_two_rows() {
    // DiskSim's `Parity stripe unit = 2 x Stripe unit`: p(s) = N - 1 - (floor(s / 2) mod N)
    let a = ArraySpec { parity_rows: 2, ..ArraySpec::new(Level::Raid5, 4, 8) };
    let parity: Vec<u32> = (0..10).map(|r| a.parity_member(r)).collect();
    assert_eq!(parity, [3, 3, 2, 2, 1, 1, 0, 0, 3, 3]);
    // row 2 (parity on 2): data units 6, 7, 8 on members 3, 0, 1 at member sector 16
    assert_eq!(a.locate(6 * 8 + 5), (3, 21));
    assert_eq!((7..9).map(|k| a.locate_unit(k)).collect::<Vec<_>>(), [(0, 2), (1, 2)]);
}

#[test]
fn raid4_keeps_parity_on_the_last_member() {
    let a: ArraySpec = "raid4:4:4k".parse().unwrap(); // unit 8, rows of 24 data sectors
    assert!((0..20).all(|r| a.parity_member(r) == 3));
    // data unit j of every row on member j
    let units: Vec<(u32, u64)> = (0..7).map(|k| a.locate_unit(k)).collect();
    assert_eq!(units, [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (0, 2)]);
    assert_eq!(a.locate(24 + 8 + 3), (1, 11));
    assert_eq!(a.capacity(100), 3 * 96);
    // a one-unit write in row 1: old data of member 1 and old parity of member 3
    let plan = a.write_plan(32, 8);
    assert_eq!(plan.reads, [piece(1, 8, 8, 0), piece(3, 8, 8, u64::MAX)]);
    assert_eq!(plan.writes, plan.reads);
    // a whole row: three data units and parity, nothing read
    let full = a.write_plan(24, 24);
    assert!(full.reads.is_empty());
    assert_eq!(full.writes.iter().map(|p| p.member).collect::<Vec<_>>(), [0, 1, 2, 3]);
}

#[test]
fn raid10_stripes_over_the_primaries_and_writes_every_copy() {
    let a: ArraySpec = "raid10:4:4k".parse().unwrap(); // 2 data members, unit 8
    assert_eq!((a.copy_member(0, 1), a.copy_member(1, 1)), (2, 3));
    assert_eq!(a.locate(0), (0, 0));
    assert_eq!(a.locate(8), (1, 0));
    assert_eq!(a.locate(16 + 3), (0, 11));
    assert_eq!(a.capacity(100), 2 * 96);
    // [4, 12): member 0 [4, 8), member 1 [0, 4); each to its primary and its copy
    let pieces: Vec<Piece> = a.split(4, 8).collect();
    assert_eq!(pieces, [piece(0, 4, 4, 0), piece(1, 0, 4, 4)]);
    let plan = a.write_plan(4, 8);
    assert!(plan.reads.is_empty());
    assert_eq!(plan.writes, [piece(0, 4, 4, 0), piece(2, 4, 4, 0), piece(1, 0, 4, 4), piece(3, 0, 4, 4)]);
    // three copies of two data members: 0 mirrored on 2 and 4
    let b: ArraySpec = "raid10:6:4k:3".parse().unwrap();
    let w: Vec<u32> = b.write_plan(0, 8).writes.iter().map(|p| p.member).collect();
    assert_eq!(w, [0, 2, 4]);
}

#[test]
fn raid1_is_one_drive_in_every_member() {
    let a: ArraySpec = "raid1:3".parse().unwrap();
    assert_eq!(a.capacity(12345), 12345);
    assert_eq!(a.locate(777), (0, 777));
    assert_eq!(a.split(100, 5000).collect::<Vec<_>>(), [piece(0, 100, 5000, 0)]);
    let w = a.write_plan(100, 50).writes;
    assert_eq!(w, [piece(0, 100, 50, 0), piece(1, 100, 50, 0), piece(2, 100, 50, 0)]);
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

/// A striped level, its members and parity rows from proptest's draws.
fn striped(level: u8, members: u32, unit: u64, parity_rows: u32) -> ArraySpec {
    let level = [Level::Raid0, Level::Raid10, Level::Raid4, Level::Raid5][level as usize % 4];
    let members = if level == Level::Raid10 { members & !1 } else { members };
    let parity_rows = if level == Level::Raid5 { parity_rows } else { 1 };
    ArraySpec { parity_rows, ..ArraySpec::new(level, members.max(4), unit) }
}

proptest! {
    #[test]
    fn every_sector_maps_like_the_reference(
        level in 0u8..4, members in 3u32..8, unit in 1u64..20, rows in 1u32..4, s in 0u64..5_000
    ) {
        let a = striped(level, members, unit, rows);
        prop_assert_eq!(a.locate(s), reference(&a, s));
    }

    #[test]
    fn the_mapping_is_one_to_one_and_pieces_cover_the_request(
        level in 0u8..4, members in 3u32..7, unit in 1u64..16, rows in 1u32..4, sector in 0u64..2_000,
        len in 1u32..300
    ) {
        let a = striped(level, members, unit, rows);
        let mut seen = std::collections::HashSet::new();
        let mut next = 0u64;
        for p in a.split(sector, len) {
            prop_assert_eq!(p.offset, next, "pieces in array order, no gap");
            prop_assert!(p.len as u64 <= unit);
            prop_assert!(p.member < a.data_members() || a.level.has_parity());
            for i in 0..p.len as u64 {
                prop_assert_eq!(a.locate(sector + p.offset + i), (p.member, p.sector + i));
                prop_assert!(seen.insert((p.member, p.sector + i)), "two array sectors on one member sector");
                if a.level.has_parity() {
                    prop_assert_ne!(p.member, a.parity_member((p.sector + i) / unit), "data on a parity unit");
                }
            }
            next += p.len as u64;
        }
        prop_assert_eq!(next, len as u64);
    }
}

/// `a` under DiskSim's rules (read-modify-write always, synchronous writes).
fn disksim(a: ArraySpec) -> ArraySpec {
    ArraySpec {
        disksim: Some(Disksim { rmw_point: a.members, synch_writes: true, member_sectors: 1 << 30 }),
        ..a
    }
}

#[test]
fn under_disksims_rules_each_member_gets_one_request() {
    // N = 4, u = 8: [20, 60) touches members 2, 3, 0, 1, 2, 3
    let a = disksim(ArraySpec::new(Level::Raid0, 4, 8));
    let at = |ps: Vec<Piece>| ps.iter().map(|p| (p.member, p.sector, p.len)).collect::<Vec<_>>();
    assert_eq!(at(a.member_reads(20, 40)), [(2, 4, 12), (3, 0, 12), (0, 8, 8), (1, 8, 8)]);
    assert_eq!(at(a.write_plan(20, 40).writes), [(2, 4, 12), (3, 0, 12), (0, 8, 8), (1, 8, 8)]);
    // headway's own: one piece per unit
    assert_eq!(ArraySpec::new(Level::Raid0, 4, 8).member_reads(20, 40).len(), 6);
    // RAID 10 of 2 data members: [4, 28) is member 0 [4, 16), member 1 [0, 12), each to
    // both copies
    let m = disksim(ArraySpec::new(Level::Raid10, 4, 8));
    assert_eq!(at(m.member_reads(4, 24)), [(0, 4, 12), (1, 0, 12)]);
    assert_eq!(at(m.write_plan(4, 24).writes), [(0, 4, 12), (2, 4, 12), (1, 0, 12), (3, 0, 12)]);
}

/// `a` under DiskSim's rules over members of `p` sectors.
fn disksim_over(a: ArraySpec, p: u64) -> ArraySpec {
    ArraySpec { disksim: Some(Disksim { rmw_point: a.members, synch_writes: true, member_sectors: p }), ..a }
}

#[test]
fn disksims_capacities_count_every_sector_of_the_data_members() {
    // P = 1000, u = 64: DiskSim's RAID 0 of 5 holds 5000 (headway's own 4800), RAID 5 of 5
    // 5 x trunc(1000 x 4 / 5) = 4000 (headway's own 3840)
    let cap = |level, n, p| disksim_over(ArraySpec::new(level, n, 64), p).capacity(p);
    assert_eq!(cap(Level::Raid0, 5, 1000), 5000);
    assert_eq!(ArraySpec::new(Level::Raid0, 5, 64).capacity(1000), 4800);
    assert_eq!(cap(Level::Raid5, 5, 1024), 5 * 819);
    assert_eq!(cap(Level::Raid5, 4, 1024), 3072);
    assert_eq!(ArraySpec::new(Level::Raid5, 5, 64).capacity(1024), 4096);
    assert_eq!(cap(Level::Raid4, 5, 1024), 4096);
    assert_eq!(cap(Level::Raid10, 6, 1000), 3000);
    assert_eq!(cap(Level::Raid1, 3, 1000), 1000);
}

#[test]
fn raid0s_last_row_has_units_of_what_is_left() {
    // N = 4, u = 8, P = 100: 12 whole rows (384 sectors), then a row of 4-sector units at
    // member sector 96
    let a = disksim_over(ArraySpec::new(Level::Raid0, 4, 8), 100);
    assert_eq!(a.capacity(100), 400);
    assert_eq!(a.locate(383), (3, 95));
    assert_eq!(a.locate(384), (0, 96));
    assert_eq!(a.locate(387), (0, 99));
    assert_eq!(a.locate(388), (1, 96));
    assert_eq!(a.locate(399), (3, 99));
    let at = |ps: Vec<Piece>| ps.iter().map(|p| (p.member, p.sector, p.len)).collect::<Vec<_>>();
    // [380, 400): member 3's last whole unit's end, then the short row; member 3's two
    // pieces are one request
    assert_eq!(at(a.split(380, 20).collect()), [(3, 92, 4), (0, 96, 4), (1, 96, 4), (2, 96, 4), (3, 96, 4)]);
    assert_eq!(at(a.member_reads(380, 20)), [(3, 92, 8), (0, 96, 4), (1, 96, 4), (2, 96, 4)]);
    // every sector of every member, once
    let mut seen = std::collections::HashSet::new();
    for s in 0..400 {
        let (m, ms) = a.locate(s);
        assert!(m < 4 && ms < 100 && seen.insert((m, ms)), "sector {s}: {m} {ms}");
    }
    // RAID 10 of 2 data members over P = 20, u = 8: a last row of 4-sector units
    let m = disksim_over(ArraySpec::new(Level::Raid10, 4, 8), 20);
    assert_eq!(m.capacity(20), 40);
    assert_eq!((m.locate(32), m.locate(36), m.locate(39)), ((0, 16), (1, 16), (1, 19)));
    // [30, 40): data member 1 [14, 16) and [16, 20) (one request), data member 0 [16, 20)
    assert_eq!(at(m.write_plan(30, 10).writes), [(1, 14, 6), (3, 14, 6), (0, 16, 4), (2, 16, 4)]);
}

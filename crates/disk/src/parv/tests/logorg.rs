//! `disksim_logorg` blocks as arrays: each redundancy scheme's level, and what headway
//! refuses at its line.

use super::devices::{file, system};
use super::*;
use crate::array::{ArraySpec, CopyChoice, Disksim, Level};

/// A logorg over `devices` with these redundancy settings.
pub(super) fn logorg(
    name: &str,
    devices: &str,
    redundancy: &str,
    rmw: &str,
    synch: u32,
    rotation: u32,
    parity_unit: u32,
) -> String {
    format!(
        "disksim_logorg {name} {{
   Addressing mode = Array,
   Distribution scheme = Striped,
   Redundancy scheme = {redundancy},
   devices = [ {devices} ],
   Stripe unit = 4,
   Synch writes for safety = {synch},
   Number of copies = 2,
   Copy choice on read = 6,
   RMW vs. reconstruct = {rmw},
   Parity stripe unit = {parity_unit},
   Parity rotation type = {rotation},
   Time stamp interval = 0.000000,
   Time stamp start time = 60000.000000,
   Time stamp stop time = 10000000000.000000,
   Time stamp file name = stamps
}}
"
    )
}

/// Six TINY disks (`disk0 .. disk5`) and the logorgs `orgs`.
fn six(orgs: &str) -> String {
    system(&format!("instantiate [ disk3 .. disk5 ] as TINY\n{orgs}"))
}

/// The array logorg `name` of `text` imports as.
fn array(text: &str, name: &str) -> ArraySpec {
    let p = file("arrays.parv", text);
    import_array(&p, name).unwrap_or_else(|e| panic!("{e}")).expect("a logorg").1
}

#[test]
fn a_logorg_is_an_array_of_its_members() {
    let text = system(&format!(
        "{}{}",
        logorg("org0", "disk0 .. disk2", "Noredun", "0.5", 0, 1, 4),
        logorg("org5", "disk0 .. disk2", "Parity_rotated", "1.0", 1, 1, 4)
    ));
    let p = file("arrays.parv", &text);
    let (disk, a) = import_array(&p, "org0").unwrap().unwrap();
    assert_eq!((a.level, a.members, a.unit), (Level::Raid0, 3, 4));
    assert_eq!(disk.name, "arrays#disk0");
    // the array's member model is its first member, with every member's seat on the bus
    // the three share
    let alone = import_device(&p, Some("disk0")).unwrap();
    assert_eq!(DiskSpec { bus_seats: alone.bus_seats.clone(), ..disk.clone() }, alone);
    let seats: Vec<(&str, u32)> = disk.bus_seats.iter().map(|s| (s.bus.as_str(), s.slot)).collect();
    assert_eq!(seats, [("bus0", 1), ("bus0", 2), ("bus0", 3)]);
    let (_, a) = import_array(&p, "org5").unwrap().unwrap();
    assert_eq!((a.level, a.members, a.unit, a.parity_rows), (Level::Raid5, 3, 4, 1));
    assert!(import_array(&p, "disk1").unwrap().is_none());
    // the resolver: FILE#ORG is an array, and no single drive
    let name = format!("{}#org5", p.display());
    assert_eq!(crate::resolve_system(&name).unwrap().1.unwrap(), a);
    let e = crate::resolve(&name).unwrap_err();
    let e = format!("{e}: {}", std::error::Error::source(&e).unwrap());
    assert!(e.contains("is a disksim_logorg, an array"), "{e}");
}

#[test]
fn shadowed_logorgs_are_mirrors_and_parity_disk_is_raid4() {
    let shadowed = |name: &str, devices: &str, copies: u32, choice: u32| {
        logorg(name, devices, "Shadowed", "1.0", 1, 1, 4)
            .replace("Number of copies = 2", &format!("Number of copies = {copies}"))
            .replace("Copy choice on read = 6", &format!("Copy choice on read = {choice}"))
    };
    let text = six(&[
        shadowed("r10", "disk0 .. disk5", 2, 6),
        shadowed("r10x3", "disk0 .. disk5", 3, 3),
        shadowed("r1", "disk0 .. disk1", 2, 1),
        shadowed("r1x3", "disk0 .. disk2", 3, 5),
        shadowed("one", "disk0 .. disk2", 1, 2),
        logorg("r4", "disk0 .. disk4", "Parity_disk", "1.0", 1, 3, 8),
        logorg("r5k2", "disk0 .. disk4", "Parity_rotated", "1.0", 1, 1, 8),
    ]
    .concat());
    // (logorg, level, members, copies, data members, read policy, printed)
    let cases = [
        (
            "r10",
            Level::Raid10,
            6,
            2,
            3,
            CopyChoice::ShortestQueueThenDistance,
            "raid10:6:2k (DiskSim logorg)",
        ),
        ("r10x3", Level::Raid10, 6, 3, 2, CopyChoice::RoundRobin, "raid10:6:2k:3:read=rr (DiskSim logorg)"),
        ("r1", Level::Raid1, 2, 2, 1, CopyChoice::Primary, "raid1:2:read=primary (DiskSim logorg)"),
        ("r1x3", Level::Raid1, 3, 3, 1, CopyChoice::ShortestQueue, "raid1:3:read=queue (DiskSim logorg)"),
        // one copy is no mirror
        ("one", Level::Raid0, 3, 1, 3, CopyChoice::Random, "raid0:3:2k (DiskSim logorg)"),
        // parity on the last device whatever the rotation type and parity unit say
        ("r4", Level::Raid4, 5, 1, 4, CopyChoice::ShortestQueueThenDistance, "raid4:5:2k (DiskSim logorg)"),
        // a parity unit of two stripe units: parity moves every second row
        (
            "r5k2",
            Level::Raid5,
            5,
            1,
            4,
            CopyChoice::ShortestQueueThenDistance,
            "raid5:5:2k (parity unit 2 stripe units) (DiskSim logorg)",
        ),
    ];
    for (name, level, members, copies, data, read, printed) in cases {
        let a = array(&text, name);
        assert_eq!(
            (a.level, a.members, a.copies, a.data_members()),
            (level, members, copies, data),
            "{name}"
        );
        assert_eq!(a.copy_choice, read, "{name}");
        assert_eq!(a.to_string(), printed, "{name}");
    }
    let r5 = array(&text, "r5k2");
    assert_eq!((r5.parity_rows, r5.parity_member(1), r5.parity_member(2)), (2, 4, 3));
    let r10 = array(&text, "r10");
    // copy 1 of data member 2 is member 2 + 3
    assert_eq!(r10.copy_member(2, 1), 5);
}

#[test]
fn rmw_vs_reconstruct_becomes_a_unit_count_and_synch_writes_a_flag() {
    // (redundancy, devices, RMW vs. reconstruct, synch, rmw point = trunc(x N))
    let cases = [
        ("Parity_rotated", "disk0 .. disk2", "0.5", 0, 1),
        ("Parity_rotated", "disk0 .. disk4", "0.5", 1, 2),
        ("Parity_disk", "disk0 .. disk4", "0.8", 0, 4),
        ("Parity_disk", "disk0 .. disk4", "0.79", 1, 3),
        ("Parity_rotated", "disk0 .. disk5", "1.0", 1, 6),
        ("Noredun", "disk0 .. disk1", "0.0", 0, 0),
    ];
    for (i, (redundancy, devices, rmw, synch, point)) in cases.into_iter().enumerate() {
        let text = six(&logorg(&format!("org{i}"), devices, redundancy, rmw, synch, 1, 4));
        let a = array(&text, &format!("org{i}"));
        assert_eq!(
            a.disksim,
            Some(Disksim { rmw_point: point, synch_writes: synch == 1, member_sectors: 24 }),
            "{redundancy} {rmw}"
        );
        assert!(a.to_string().ends_with(" (DiskSim logorg)"), "{a}");
    }
}

#[test]
fn disksims_sizes_come_from_the_members_and_what_it_stops_on_is_refused() {
    // three TINY members of 24 sectors: DiskSim's RAID 0 holds all 72, its RAID 5
    // 3 x trunc(24 x 2 / 3) = 48
    let text = system(&format!(
        "{}{}{}",
        logorg("r0", "disk0 .. disk2", "Noredun", "1.0", 1, 1, 4)
            .replace("Stripe unit = 4", "Stripe unit = 5"),
        logorg("r5", "disk0 .. disk2", "Parity_rotated", "1.0", 1, 1, 4),
        logorg("big", "disk0 .. disk2", "Noredun", "1.0", 1, 1, 4),
    ));
    let r0 = array(&text, "r0");
    assert_eq!(r0.disksim.map(|d| d.member_sectors), Some(24));
    assert_eq!(r0.capacity(24), 72, "a last row of 4-sector units");
    assert_eq!(array(&text, "r5").capacity(24), 48);
    // 5-sector units: RAID 0 keeps a last row of 4-sector units; RAID 4 and 5 stop at
    // their 4 whole rows of 2 data units (40 sectors; DiskSim's 48 run into its short row)
    let five = |name: &str, redundancy: &str| {
        logorg(name, "disk0 .. disk2", redundancy, "1.0", 1, 1, 5)
            .replace("Stripe unit = 4", "Stripe unit = 5")
    };
    let text5 = system(&[five("r4", "Parity_disk"), five("r5", "Parity_rotated")].concat());
    assert_eq!((array(&text5, "r4").capacity(24), array(&text5, "r5").capacity(24)), (40, 40));
    // members of 2^30 sectors: 3 x 2^30 overflows DiskSim's count, at `devices`
    let doc = syntax::parse_file(&file("arrays.parv", &text)).unwrap();
    let b = doc.blocks.iter().find(|b| b.name.as_deref() == Some("big")).unwrap();
    let e = crate::parv::logorg::fit_members(b, array(&text, "big"), 1 << 30).unwrap_err().to_string();
    // (`big`'s `devices` is the fifth line of its block)
    let line = text[..text.find("disksim_logorg big").unwrap()].lines().count() + 5;
    assert!(e.contains(&format!("arrays.parv:{line}:")) && e.contains("32-bit"), "{e}");
}

#[test]
fn what_headway_arrays_do_not_model_is_an_error_at_its_line() {
    // (logorg, the line's key, what the message says)
    let cases = [
        (
            logorg("bad", "disk0 .. disk2", "Shadowed", "1.0", 1, 1, 4),
            "Number of copies",
            "whole number of copies",
        ),
        (
            logorg("bad", "disk0 .. disk1", "Shadowed", "1.0", 1, 1, 4)
                .replace("Copy choice on read = 6", "Copy choice on read = 7"),
            "Copy choice on read",
            "1 to 6",
        ),
        (logorg("bad", "disk0 .. disk2", "Parity_rotated", "1.5", 1, 1, 4), "RMW vs. reconstruct", "0 to 1"),
        (logorg("bad", "disk0 .. disk2", "Parity_disk", "1.0", 2, 1, 4), "Synch writes for safety", "0 or 1"),
        (logorg("bad", "disk0 .. disk2", "Parity_rotated", "1.0", 1, 2, 4), "Parity rotation type", "only 1"),
        (
            logorg("bad", "disk0 .. disk2", "Parity_rotated", "1.0", 1, 1, 6),
            "Parity stripe unit",
            "whole multiple",
        ),
        (
            logorg("bad", "disk0 .. disk2", "Parity_rotated", "1.0", 1, 1, 2),
            "Parity stripe unit",
            "whole multiple",
        ),
        (logorg("bad", "disk0 .. disk2", "Noredun", "1.0", 1, 1, 0), "Parity stripe unit", "at least 1"),
        (
            logorg("bad", "disk0 .. disk2", "Noredun", "1.0", 1, 1, 32),
            "Parity stripe unit",
            "member's 24 sectors",
        ),
        (
            logorg("bad", "disk0 .. disk2", "Noredun", "1.0", 1, 1, 4)
                .replace("Stripe unit = 4", "Stripe unit = 25"),
            "Stripe unit",
            "member's 24 sectors",
        ),
        (
            logorg("bad", "disk0 .. disk1", "Shadowed", "1.0", 1, 1, 4)
                .replace("Stripe unit = 4", "Stripe unit = 25"),
            "Stripe unit",
            "member's 24 sectors",
        ),
        (logorg("bad", "disk0 .. disk1", "Parity_disk", "1.0", 1, 1, 4), "devices", "3 to 64"),
        (logorg("bad", "disk0, sd0", "Noredun", "1.0", 1, 1, 4), "devices", "one model"),
        (logorg("bad", "disk0, disk9", "Noredun", "1.0", 1, 1, 4), "devices", "`disk9` is not a device"),
        (logorg("bad", "disk0", "Noredun", "1.0", 1, 1, 4), "devices", "2 to 64"),
        (
            logorg("bad", "disk0 .. disk2", "Noredun", "1.0", 1, 1, 4).replace("= Array", "= Parts"),
            "Addressing mode",
            "no array, each of its devices is addressed on its own; name one as FILE#DEVICE (disk0, disk1, disk2)",
        ),
        (
            logorg("bad", "disk0 .. disk2", "Noredun", "1.0", 1, 1, 4).replace("= Striped", "= Random"),
            "Distribution scheme",
            "Striped",
        ),
    ];
    for (org, key, says) in cases {
        let text = system(&org);
        let p = file("bad.parv", &text);
        let e = import_array(&p, "bad").unwrap_err().to_string();
        let line = text.lines().position(|l| l.trim_start().starts_with(key)).unwrap() + 1;
        assert!(
            e.contains(&format!("bad.parv:{line}:")) && e.contains(says),
            "{key}: want line {line}, {says}: {e}"
        );
    }
}

/// DiskSim's request mapping (`logorg_maprequest`): the logorgs in file order, an `Array`
/// one taking the requests of the device whose number is its place, a `Parts` one those of
/// its own devices; the first that takes them is theirs.
#[test]
fn a_devices_requests_go_where_disksim_maps_them() {
    let parts = |name: &str, devices: &str| {
        logorg(name, devices, "Noredun", "0.5", 0, 1, 4).replace("= Array", "= Parts")
    };
    let arr = |name: &str| logorg(name, "disk3 .. disk5", "Noredun", "0.5", 0, 1, 4);
    // device numbers: disk0 .. disk2 are 0-2, sd0 is 3, disk3 .. disk5 are 4-6
    let doc = |orgs: String| syntax::parse_file(&file("map.parv", &six(&orgs))).unwrap();
    let d = doc(format!("{}{}{}", parts("p0", "disk1"), arr("a1"), arr("a2")));
    let to = |name: &str| request_destination(&d, name);
    assert_eq!(to("disk0"), "disk0", "logorg 0 is no array, and does not hold disk0");
    assert_eq!(to("disk1"), "disk1", "the Parts logorg before array a1 holds it");
    assert_eq!(to("disk2"), "a2", "the third logorg is an array: device number 2 is it");
    assert_eq!(to("sd0"), "sd0", "no fourth logorg");
    assert_eq!(to("a1"), "a1", "a logorg is itself");
    // an array first takes device 0 even though a later Parts logorg holds it
    let d = doc(format!("{}{}", arr("a0"), parts("p1", "disk0")));
    assert_eq!(request_destination(&d, "disk0"), "a0");
    assert_eq!(request_destination(&d, "disk1"), "disk1", "p1 is no array");
}

//! `disksim_iosim`: a trace's maps onto the file's devices, and the devices a DiskSim trace
//! replays on (`import_trace_system`).

use super::devices::{file, system};
use super::logorg::logorg;
use super::*;
use crate::parv::{import_trace_system, trace_mapping, IoMap, LocScale};

fn iosim(maps: &str) -> String {
    format!("disksim_iosim IS {{\n   I/O Trace Time Scale = 2.5,\n   I/O Mappings = [\n{maps}   ]\n}}\ninstantiate [ iosimfoo ] as IS\n")
}

fn map(tracedev: &str, simdev: &str, loc: u32, size: u32, extra: &str) -> String {
    format!(
        "      disksim_iomap {{ tracedev = {tracedev}, simdev = {simdev}, locScale = {loc}, sizeScale = {size}{extra} }},\n"
    )
}

fn mapping_of(text: &str) -> crate::parv::TraceMapping {
    let doc = syntax::parse_file(&file("iosim.parv", text)).unwrap();
    trace_mapping(&doc).unwrap().expect("an iosim block")
}

#[test]
fn maps_name_devices_by_number_and_scale_as_disksim_does() {
    let maps = [
        map("0x0e", "disk2", 512, 1, ""),
        map("3", "sd0", 1024, 2, ", offset = 100"),
        map("4", "disk0", 256, 1, ""),
        map("0x0E", "disk1", 1000, 1, ""),
        map("5", "disk1", 300, 1, ""),
    ];
    let m = mapping_of(&system(&iosim(&maps.concat())));
    assert_eq!(m.time_scale, 2.5);
    let devices: Vec<(u64, &str, u64)> =
        m.maps.iter().map(|m| (m.tracedev, m.simdev.as_str(), m.device)).collect();
    // a hex tracedev is hex; disk0 .. disk2 are devices 0-2 and sd0 is 3
    assert_eq!(
        devices,
        [(14, "disk2", 2), (3, "sd0", 3), (4, "disk0", 0), (14, "disk1", 1), (5, "disk1", 1)]
    );
    let locs: Vec<LocScale> = m.maps.iter().map(|m| m.loc).collect();
    // 1000 / 512 and 512 / 300 are whole divisions: 1 each
    assert_eq!(
        locs,
        [LocScale::Same, LocScale::Times(2), LocScale::Divide(2), LocScale::Times(1), LocScale::Divide(1)]
    );
    // the first map of a device number applies
    assert_eq!(m.map_of(14).unwrap().simdev, "disk2");
    assert!(m.map_of(7).is_none());
    let apply = |i: usize, blkno: u64, bcount: u64| m.maps[i].apply(blkno, bcount);
    assert_eq!(apply(0, 77, 8), Ok((2, 77, 8)));
    // twice the block, then the offset; twice the count
    assert_eq!(apply(1, 10, 8), Ok((3, 120, 16)));
    assert_eq!(apply(2, 10, 8), Ok((0, 5, 8)));
    let e = apply(2, 11, 8).unwrap_err();
    assert!(e.contains("block 11") && e.contains("not a multiple of 2"), "{e}");
    assert_eq!(apply(4, 11, 8), Ok((1, 11, 8)));
}

#[test]
fn a_negative_offset_below_block_zero_is_refused() {
    let m =
        IoMap { tracedev: 1, simdev: "d".into(), device: 0, loc: LocScale::Same, size_scale: 1, offset: -10 };
    assert_eq!(m.apply(10, 1), Ok((0, 0, 1)));
    assert!(m.apply(9, 1).unwrap_err().contains("leaves the range"));
}

#[test]
fn bad_iosim_values_are_errors_at_their_line_wherever_the_file_is_used() {
    let cases = [
        (map("1", "disk9", 512, 1, ""), "simdev", "not a device of the file (disk0, disk1, disk2, sd0)"),
        (map("1", "disk0", 0, 1, ""), "locScale", "`locScale` must be at least 1"),
        (map("1", "disk0", 512, 0, ""), "sizeScale", "`sizeScale` must be at least 1"),
        (map("1", "disk0", 512, 1, ", Frob = 1"), "Frob", "`Frob`"),
        (map("-1", "disk0", 512, 1, ""), "tracedev", "`tracedev` must be a whole number"),
        (map("1", "disk0", 512, 1, ", offset = 1.5"), "offset", "`offset` must be a whole number"),
    ];
    for (m, key, says) in cases {
        let text = system(&iosim(&m));
        let p = file("bad.parv", &text);
        // the line of the map (each map is on one line)
        let line = text.lines().position(|l| l.contains("disksim_iomap")).unwrap() + 1;
        for e in [
            import_device(&p, Some("disk0")).unwrap_err().to_string(),
            import_trace_system(&p, None).unwrap_err().to_string(),
        ] {
            assert!(
                e.contains(&format!("bad.parv:{line}:")) && e.contains(says),
                "{key}: want line {line}, {says}: {e}"
            );
        }
    }
    let text = system(&iosim("").replace("2.5", "0"));
    let e = import_trace_system(&file("bad.parv", &text), None).unwrap_err().to_string();
    assert!(e.contains("`I/O Trace Time Scale` = 0: must be above 0"), "{e}");
    let text = system(&format!("{}{}", iosim(""), iosim("").replace("IS", "IS2")));
    let e = import_trace_system(&file("bad.parv", &text), None).unwrap_err().to_string();
    assert!(e.contains("a second `disksim_iosim` block"), "{e}");
}

#[test]
fn every_device_number_of_a_file_of_several_is_a_device_of_the_replay() {
    let s = import_trace_system(&file("sys.parv", &system("")), None).unwrap();
    let names: Vec<&str> = s.devices.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["disk0", "disk1", "disk2", "sd0"]);
    assert!(s.devices[3].1.fixed.is_some(), "sd0 is the simpledisk");
    assert_eq!(s.reaches, Some(vec![Ok(0), Ok(1), Ok(2), Ok(3)]));
    assert!(s.mapping.is_none());
    // one named: everything goes to it
    let s = import_trace_system(&file("sys.parv", &system("")), Some("disk1")).unwrap();
    assert_eq!((s.devices.len(), s.devices[0].0.as_str(), s.reaches), (1, "disk1", None));
}

#[test]
fn arrays_take_their_numbers_and_their_members_take_none() {
    // device numbers: disk0 .. disk2 are 0-2, sd0 is 3, disk3 .. disk5 are 4-6; the
    // second logorg is an array over disk3 .. disk5: device number 1 reaches it
    let parts = logorg("p0", "disk0", "Noredun", "0.5", 0, 1, 4)
        .replace("= Array", "= Parts")
        .replace("= Striped", "= Asis");
    let arr = logorg("a1", "disk3 .. disk5", "Noredun", "0.5", 0, 1, 4);
    let spread = logorg("p2", "disk2", "Noredun", "0.5", 0, 1, 4).replace("= Array", "= Parts");
    let text = system(&format!("instantiate [ disk3 .. disk5 ] as TINY\n{parts}{arr}{spread}"));
    let s = import_trace_system(&file("arr.parv", &text), None).unwrap();
    let names: Vec<&str> = s.devices.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["disk0", "a1", "sd0"]);
    assert_eq!(s.devices[1].2.map(|a| a.members), Some(3));
    let reaches = s.reaches.unwrap();
    assert_eq!(reaches[..2], [Ok(0), Ok(1)]);
    let e = reaches[2].as_ref().unwrap_err();
    assert!(e.contains("disk2 is in logorg p2") && e.contains("not modelled"), "{e}");
    assert_eq!(reaches[3], Ok(2));
    for (n, r) in reaches[4..].iter().enumerate() {
        let e = r.as_ref().unwrap_err();
        assert!(e.contains(&format!("disk{} is a member of array a1", n + 3)), "{e}");
    }
}

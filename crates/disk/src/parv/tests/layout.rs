//! Every DiskSim 4.0 sparing and mapping scheme on small drives written as parameter
//! files: where their LBNs land ([`super::layout_cases`]), how angles convert, zone bounds,
//! and the errors for what headway refuses.

use super::layout_cases::CASES;
use super::*;

/// A drive to write as a parameter file, and where DiskSim's rules put its LBNs.
pub(super) struct Case {
    pub name: &'static str,
    pub what: &'static str,
    pub surfaces: u32,
    /// "Number of cylinders".
    pub cylinders: u32,
    pub sparing: u32,
    pub mapping: u32,
    pub range: u32,
    /// The blocks of the `Zones` list.
    pub zones: &'static str,
    /// LBN 0, 1, ... as `cylinder.head.sector.slot`, space-separated.
    pub expect: &'static str,
}

fn tmp() -> PathBuf {
    test_dir("layout")
}

/// A whole `disksim_disk` around a `dm_layout_g1` block whose body is `layout`.
pub(super) fn drive(surfaces: u32, cylinders: u32, layout: &str) -> String {
    format!(
        "disksim_disk tiny {{
   Model = dm_disk {{
      Number of data surfaces = {surfaces},
      Number of cylinders = {cylinders},
      Block count = 100000000,
      Layout Model = dm_layout_g1 {{
         {layout}
      }},
      Mechanical Model = dm_mech_g1 {{
         Access time type = trackSwitchPlusRotation,
         Seek type = hpl,
         HPL seek equation values = [ 300, 1.0, 0.1, 2.0, 0.001, -1 ],
         Head switch time = 0.5,
         Rotation speed (in rpms) = 6000
      }}
   }},
   Bulk sector transfer time = 0.1,
   Read hit over. after read = 0.1,
   Read hit over. after write = 0.1,
   Read miss over. after read = 0.1,
   Read miss over. after write = 0.1,
   Write hit over. after read = 0.1,
   Write hit over. after write = 0.1,
   Write miss over. after read = 0.1,
   Write miss over. after write = 0.1,
   Number of buffer segments = 0,
   Segment size (in blks) = 0,
   Scheduler = disksim_ioqueue {{ Scheduling policy = 1 }}
}}
"
    )
}

pub(super) fn layout(sparing: u32, mapping: u32, range: u32, zones: &str) -> String {
    format!(
        "LBN-to-PBN mapping scheme = {mapping},\n         Sparing scheme used = {sparing},\n         \
         Rangesize for sparing = {range},\n         Zones = [ {zones} ]"
    )
}

fn import_text(name: &str, text: &str) -> std::result::Result<DiskSpec, ImportError> {
    import(&write(&tmp(), &format!("{name}.diskspecs"), text))
}

/// `(cylinder, head, sector, slot)` of every LBN.
fn table(s: &DiskSpec) -> Vec<[u32; 4]> {
    let h = crate::Hdd::try_new(s.clone()).unwrap();
    let g = h.geometry();
    (0..g.capacity()).map(|l| g.locate(l)).map(|l| [l.cylinder, l.head, l.sector, l.slot]).collect()
}

fn parse(expect: &str) -> Vec<[u32; 4]> {
    expect
        .split_whitespace()
        .map(|e| {
            let v: Vec<u32> = e.split('.').map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect()
}

#[test]
fn every_scheme_maps_as_disksim() {
    for c in CASES {
        let text = drive(c.surfaces, c.cylinders, &layout(c.sparing, c.mapping, c.range, c.zones));
        let s = import_text(c.name, &text).unwrap_or_else(|e| panic!("{} ({}): {e}", c.name, c.what));
        let l = s.layout.as_ref().unwrap();
        assert_eq!(l.sparing.disksim_number(), c.sparing, "{}", c.name);
        let want = parse(c.expect);
        assert_eq!(table(&s), want, "{} ({})", c.name, c.what);
        assert_eq!(s.capacity_sectors, want.len() as u64, "{}", c.name);

        // the inverse: each sector in a zone holds the LBNs the table puts there (one
        // answer where it puts two), and no other sector holds one
        let h = crate::Hdd::try_new(s.clone()).unwrap();
        let g = h.geometry();
        assert!(want.iter().all(|w| w[0] < g.cylinders()), "{}", c.name);
        for (zl, z) in l.zones.iter().zip(&s.zones) {
            for cyl in zl.first_cylinder..zl.first_cylinder + z.cylinders {
                for head in 0..s.surfaces {
                    for sector in 0..z.sectors_per_track {
                        let here: Vec<u64> = (0..want.len() as u64)
                            .filter(|&i| want[i as usize][..3] == [cyl, head, sector])
                            .collect();
                        let back = g.lbn_of(cyl, head, sector);
                        match back {
                            None => assert!(
                                here.is_empty(),
                                "{}: ({cyl}, {head}, {sector}) holds {here:?}",
                                c.name
                            ),
                            Some(b) => {
                                assert!(here.contains(&b), "{}: ({cyl}, {head}, {sector}) -> {b}", c.name)
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The same Example A disk (offset 1, track skew 1, cylinder skew 2) with its angles
/// written in other ways.
#[test]
fn angles_truncate_and_turn_in_revolutions() {
    let a = CASES.iter().find(|c| c.name == "a_offset").unwrap();
    let zone = |angles: &str| {
        format!(
            "dm_layout_g1_zone {{ First cylinder number = 0, Last cylinder number = 2, Blocks per track = 4, \
             {angles}, Empty space at zone front = 0, Number of spares = 0, slips = [], defects = [] }}"
        )
    };
    let body = |units: &str, angles: &str| {
        format!(
            "LBN-to-PBN mapping scheme = 0, Sparing scheme used = 9, Rangesize for sparing = 1, {units} \
             Zones = [ {} ]",
            zone(angles)
        )
    };
    let variants = [
        // sectors: truncated toward zero, not rounded
        body("", "Offset of first block = 1.9, Skew for track switch = 1.99, Skew for cylinder switch = 2.5"),
        // past the track or negative: around the track
        body("", "Offset of first block = 5, Skew for track switch = -3, Skew for cylinder switch = -2.7"),
        // the layout's unit, before the zones
        body(
            "Skew units = revolutions,",
            "Offset of first block = 0.25, Skew for track switch = 1.25, Skew for cylinder switch = 0.4999996",
        ),
        // the layout's unit after the zones reaches none of them
        body("", "Offset of first block = 1, Skew for track switch = 1, Skew for cylinder switch = 2")
            + ", Skew units = revolutions",
        // a zone's unit reaches only the angles after it
        body(
            "",
            "Offset of first block = 1, Skew for track switch = 5, Skew units = revolutions, \
             Skew for cylinder switch = 0.5",
        ),
        body(
            "Skew units = revolutions,",
            "Skew for track switch = 0.25, Skew units = sectors, Offset of first block = 1, \
             Skew for cylinder switch = 2",
        ),
    ];
    for (i, v) in variants.iter().enumerate() {
        let s = import_text(&format!("angles{i}"), &drive(2, 3, v))
            .unwrap_or_else(|e| panic!("variant {i}: {e}"));
        assert_eq!(table(&s), parse(a.expect), "variant {i}: {v}");
    }
}

/// A zone whose last cylinder is `Number of cylinders` (DiskSim never compares them):
/// the drive spans one cylinder more, and its seek curve reaches it.
#[test]
fn a_zone_past_the_stated_cylinders_loads() {
    let zones = "dm_layout_g1_zone { First cylinder number = 0, Last cylinder number = 2497, Blocks per track = 4, \
                 Skew for track switch = 1, Number of spares = 0, slips = [], defects = [] },
                 dm_layout_g1_zone { First cylinder number = 2498, Last cylinder number = 2629, Blocks per track = 3, \
                 Number of spares = 0, slips = [], defects = [] }";
    let s = import_text("past", &drive(2, 2629, &layout(9, 0, 1, zones))).unwrap();
    assert_eq!(s.cylinders(), 2630);
    assert_eq!(s.capacity_sectors, 2498 * 8 + 132 * 6);
    let mut h = crate::Hdd::try_new(s.clone()).unwrap();
    let g = h.geometry().clone();
    let last = g.locate(g.capacity() - 1);
    assert_eq!((last.cylinder, last.head, last.sector), (2629, 1, 2));
    assert_eq!(g.cylinders(), 2630);
    // the full stroke is a seek like any other (the HPL curve runs to 2629 cylinders)
    let SeekModel::Table(k) = &s.seek else { panic!() };
    assert_eq!(k.last().unwrap().0, 2629);
    let a = h.access(headway_sched::Time(0), g.capacity() - 1, 1, headway_sched::Dir::Read);
    assert_eq!(a.seek_cylinders, 2629);
}

/// The line a key first appears on in `text`.
fn line_of(text: &str, key: &str) -> usize {
    text.lines().position(|l| l.contains(key)).unwrap_or_else(|| panic!("no {key}")) + 1
}

#[test]
fn what_headway_refuses_is_an_error_at_its_line() {
    let z = |first: u32, last: u32, rest: &str| {
        format!(
            "dm_layout_g1_zone {{\n First cylinder number = {first},\n Last cylinder number = {last},\n \
             Blocks per track = 4,\n {rest}\n }}"
        )
    };
    let ok = z(0, 2, "Number of spares = 0");
    // (what, surfaces, layout body, the key on the line the error names, what the message says)
    let cases: Vec<(&str, u32, String, &str, &str)> = vec![
        ("mapping", 2, layout(9, 3, 1, &ok), "LBN-to-PBN mapping scheme", "only 0, 1 and 2"),
        ("sparing", 2, layout(11, 0, 1, &ok), "Sparing scheme used", "only 0-10"),
        ("range", 2, layout(8, 0, 0, &ok), "Rangesize for sparing", "Rangesize for sparing"),
        (
            "units",
            2,
            layout(9, 0, 1, &z(0, 2, "Skew units = degrees,\n Number of spares = 0")),
            "Skew units",
            "degrees",
        ),
        (
            "revolutions",
            2,
            layout(9, 0, 1, &z(0, 2, "Skew units = revolutions,\n Skew for track switch = 0.3")),
            "Skew for track switch",
            "1.2000 sectors",
        ),
        ("last", 2, layout(9, 0, 1, &z(3, 2, "Number of spares = 0")), "Last cylinder number", "below"),
        (
            "overlap",
            2,
            layout(
                9,
                0,
                1,
                &format!("{},\n{}", z(0, 2, "Number of spares = 0"), z(2, 3, "Number of spares = 0")),
            ),
            "First cylinder number = 2",
            "overlap",
        ),
        ("track", 2, layout(3, 0, 1, &z(0, 2, "Number of spares = 4")), "Number of spares", "leave no LBN"),
        (
            "tracks",
            2,
            layout(1, 0, 1, &z(0, 2, "Number of spares = 1,\n slips = [ 1 ],\n defects = [ 2, 5 ]")),
            "Number of spares",
            "outnumber",
        ),
        ("defects", 2, layout(9, 0, 1, &z(0, 2, "defects = [ 1, 2, 3 ]")), "defects", "even"),
        ("surfaces", 0, layout(9, 0, 1, &ok), "Number of data surfaces", "at least 1"),
    ];
    let tmp_dir = tmp();
    for (name, surfaces, body, key, says) in cases {
        let text = drive(surfaces, 3, &body);
        let e = import_text(name, &text).unwrap_err().to_string();
        let at = format!("{}:{}:", tmp_dir.join(format!("{name}.diskspecs")).display(), line_of(&text, key));
        assert!(e.starts_with(&at) && e.contains(says), "{name}: want {at} ... {says}, got {e}");
        let param = key.split(" =").next().unwrap();
        assert!(e.contains(param), "{name}: {e} names no parameter");
    }
    let text = drive(2, 3, &layout(9, 0, 1, &z(0, 2, "Blocks per track = 0")))
        .replace("Blocks per track = 4,\n", "");
    let e = import_text("bpt", &text).unwrap_err().to_string();
    assert!(e.contains(&format!("bpt.diskspecs:{}:", line_of(&text, "Blocks per track"))), "{e}");
    std::fs::remove_dir_all(tmp()).ok();
}

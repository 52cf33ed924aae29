use super::*;
use crate::spec::Sparing;

mod ctlr;
mod devices;
mod distribution;
mod driver;
mod iosim;
mod layout;
mod layout_cases;
mod logorg;
mod values;

/// The DiskSim reference data (`data/` in the repository): missing, the
/// test that asks for it fails.
fn reference() -> PathBuf {
    let dir = crate::reference_data().join("disksim-valid");
    assert!(dir.exists(), "{} missing: the DiskSim reference data", dir.display());
    dir
}

/// (file stem, surfaces, cylinders, capacity, rpm, zones) as the files say. The capacity is
/// the zones' LBN count, which DiskSim puts in place of the `Block count` each file states
/// before its layout (17,783,250; 4,110,000; 8,887,200; 17,783,240; 2,054,864; 17,916,240).
const DRIVES: [(&str, u32, u32, u64, u32, usize); 6] = [
    ("atlas_III", 10, 8057, 17_797_944, 7200, 9),
    ("barracuda", 5, 5172, 4_217_670, 7200, 11),
    ("cheetah4LP", 8, 6581, 8_887_940, 10033, 7),
    ("cheetah9LP", 12, 6962, 17_918_387, 10045, 11),
    ("hp_c2247a", 13, 2051, 2_054_864, 5400, 8),
    ("ibm18es", 5, 11474, 18_033_753, 7200, 55),
];

#[test]
fn imports_all_six_validated_drives() {
    let dir = reference();
    for (stem, surfaces, cyls, cap, rpm, nz) in DRIVES {
        for ext in ["parv", "diskspecs"] {
            let s = import(&dir.join(format!("{stem}.{ext}"))).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.name, stem);
            assert_eq!(
                (s.surfaces, s.cylinders(), s.capacity_sectors, s.rpm),
                (surfaces, cyls, cap, rpm),
                "{stem}"
            );
            assert_eq!(s.zones.len(), nz, "{stem}");
            assert_eq!(s.queue, Some(QueueSpec { depth: 1, scheduler: "fcfs".into() }));
            let h = crate::Hdd::try_new(s.clone()).unwrap();
            assert_eq!(h.capacity(), cap);
        }
    }
    let c = import(&dir.join("cheetah9LP.parv")).unwrap();
    assert_eq!(c.cache.segments, 3);
    assert_eq!(c.cache.segment_sectors, 561);
    assert_eq!(c.cache.fast_write, FastWrite::All);
    assert!(c.cache.read_hits_on_write_data);
    // `Buffer continuous read = 4`: DiskSim's DEC prefetch scheme (to the track's end)
    assert!(c.cache.read_ahead_to_track_end);
    assert!(!import(&dir.join("cheetah4LP.parv")).unwrap().cache.read_ahead_to_track_end);
    assert_eq!(c.bus_per_sector, Duration(105_000));
    assert_eq!(c.overheads.write_hit_after_read, Duration(748_000));
    assert_eq!(c.layout.as_ref().unwrap().sparing, Sparing::Zone);
    assert_eq!(c.layout.as_ref().unwrap().zones[0].slips.len(), 34);
    let hp = import(&dir.join("hp_c2247a.parv")).unwrap();
    assert_eq!(hp.cache.fast_write, FastWrite::Off);
    // the bus the drive hangs off (`bus1` in the topology, instantiated as BUS1) is slower
    // than the drive's own rate (0): DiskSim's `disk_get_blktranstime` takes the slower
    assert_eq!(hp.bus_per_sector, Duration(170_100));
    let p = hp.bus_protocol;
    assert_eq!(p.write_per_sector, Duration(186_860));
    assert_eq!((p.data_prep, p.reselect_first, p.reselect_other), (ms(0.02519), ms(0.16249), ms(0.12883)));
    assert_eq!((p.read_disconnect_after_read, p.write_disconnect), (ms(0.02266), ms(0.16565)));
    assert_eq!((p.read_watermark, p.watermark_by_request), (0.75, true));
    let x = p.extra_write_disconnect.expect("Extra write disconnect = 1");
    assert_eq!((x.command, x.seek_delta, x.second_disconnect), (ms(0.64244), ms(0.25), ms(0.13437)));
    // the overheads are the command overheads alone (the protocol steps are apart)
    assert_eq!(hp.overheads.read_miss_after_read, ms(0.55821));
    assert_eq!(hp.overheads.write_after_write, ms(0.82391));
    assert!(hp.cache.dedicated_write_segment);
    // DiskSim's segment selection: a read at a segment's end is no match
    assert!(!hp.cache.reuse_adjacent_segment && !c.cache.reuse_adjacent_segment);
    // without the .parv around it, the drive block alone has no bus
    assert_eq!(import(&dir.join("hp_c2247a.diskspecs")).unwrap().bus_per_sector, Duration::ZERO);
    let q = c.bus_protocol;
    assert_eq!(
        (q.write_per_sector, q.data_prep, q.reselect_first, q.read_watermark),
        (Duration::ZERO, Duration::ZERO, Duration::ZERO, 0.0)
    );
    assert!(q.extra_write_disconnect.is_none() && !c.cache.dedicated_write_segment);
    assert_eq!(hp.layout.as_ref().unwrap().sparing, Sparing::Tracks);
    // the HPL curve: first ten distances from the list, then a + b sqrt(d) up to 300
    let SeekModel::Table(k) = &hp.seek else { panic!() };
    assert_eq!(k[0], (1, Duration(2_890_000)));
    assert_eq!(k[10].1, ms(3.81 + 0.33 * 11f64.sqrt()));
    assert_eq!(k[400].1, ms(7.75 + 0.0059 * 401.0));
}

/// The built-in DiskSim models carry the same zones and seek curves as the files.
#[test]
fn builtin_disksim_models_agree_with_their_files() {
    let dir = reference();
    // the built-in models export the `Block count` the files state (the drive as sold);
    // DiskSim, and the import, take the zones' larger LBN count
    for (builtin, stem, block_count) in
        [("cheetah9lp", "cheetah9LP", 17_783_240), ("ibm18es", "ibm18es", 17_916_240)]
    {
        let b = crate::builtin(builtin).unwrap();
        let i = import(&dir.join(format!("{stem}.parv"))).unwrap();
        assert_eq!(b.zones, i.zones, "{builtin}");
        assert_eq!(b.seek, i.seek, "{builtin}");
        assert_eq!((b.rpm, b.surfaces), (i.rpm, i.surfaces));
        assert!(b.capacity_sectors == block_count && block_count < i.capacity_sectors, "{builtin}");
        assert_eq!(
            (b.head_switch, b.write_settle, b.bus_per_sector),
            (i.head_switch, i.write_settle, i.bus_per_sector)
        );
    }
}

/// Slips shift every later LBN of the zone one sector on; spares and the empty front hold
/// no LBN; the mapping stays invertible.
#[test]
fn slips_spares_and_empty_space_in_the_mapping() {
    let dir = reference();
    for (stem, ..) in DRIVES {
        let s = import(&dir.join(format!("{stem}.parv"))).unwrap();
        let h = crate::Hdd::new(s.clone());
        let g = h.geometry();
        let l = s.layout.as_ref().unwrap();
        // the first LBN sits past the empty front at the zone's offset
        let z0 = &l.zones[0];
        let loc = g.locate(0);
        let spt = s.zones[0].sectors_per_track;
        if l.sparing != Sparing::Tracks {
            let expect =
                z0.empty_front + z0.slips.iter().take_while(|&&x| x <= z0.empty_front).count() as u32;
            let p = (loc.cylinder - z0.first_cylinder) * spt * s.surfaces + loc.head * spt + loc.sector;
            assert_eq!(p, expect, "{stem}");
            assert_eq!(
                loc.slot,
                (loc.sector
                    + z0.first_block_offset
                    + loc.head * s.zones[0].track_skew
                    + (loc.cylinder - z0.first_cylinder)
                        * ((s.surfaces - 1) * s.zones[0].track_skew + s.zones[0].cylinder_skew))
                    % spt,
                "{stem}"
            );
        }
        let step = (g.capacity() / 50_021).max(1);
        let mut prev = None;
        let mut lbn = 0;
        while lbn < g.capacity() {
            let loc = g.locate(lbn);
            assert_eq!(g.lbn_of(loc.cylinder, loc.head, loc.sector), Some(lbn), "{stem} lbn {lbn}");
            if let Some(p) = prev {
                assert!((loc.cylinder, loc.head, loc.sector) > p, "{stem}: lbn {lbn}");
            }
            prev = Some((loc.cylinder, loc.head, loc.sector));
            lbn += step;
        }
        // every slipped sector of zone 1 maps to no LBN (sector-slipping schemes, slips
        // listed in increasing order: see `atlas_unsorted_slips_map_as_disksim_counts_them`)
        let increasing = |v: &[u32]| v.windows(2).all(|w| w[0] < w[1]);
        if matches!(l.sparing, Sparing::Zone | Sparing::End | Sparing::Range { .. })
            && increasing(&l.zones[1].slips)
        {
            let zl = &l.zones[1];
            let spt = s.zones[1].sectors_per_track;
            for &p in zl.slips.iter().take(20) {
                let c = zl.first_cylinder + p / (spt * s.surfaces);
                let r = p % (spt * s.surfaces);
                assert_eq!(g.lbn_of(c, r / spt, r % spt), None, "{stem}: slip {p}");
            }
        }
    }
}

/// atlas_III's zone 1 (cylinders 616..1823, scheme 7) lists its slips out of order.
/// DiskSim counts them in one pass in file order, so a few LBNs on cylinders 847..855 land
/// one or two sectors earlier than sorted slips would put them, some on a slipped sector
/// (DiskSim aborts when those are accessed). Expected values from the rules of DiskSim's
/// `dm_layout_g1` (zone-relative LBN, cylinder, head, sector).
#[test]
fn atlas_unsorted_slips_map_as_disksim_counts_them() {
    let s = import(&reference().join("atlas_III.parv")).unwrap();
    let l = s.layout.as_ref().unwrap();
    assert!(l.zones[1].slips.windows(2).any(|w| w[0] > w[1]), "atlas_III zone 1 lists its slips unsorted");
    let h = crate::Hdd::new(s.clone());
    let g = h.geometry();
    let first = g.zone_first_lbn(1);
    #[rustfmt::skip]
    let expect = [
        (584232, 847, 8, 100), (586750, 848, 8, 99), (586751, 848, 8, 100), (589268, 849, 8, 98),
        (589269, 849, 8, 99), (589270, 849, 8, 100), (599341, 853, 8, 96), (599345, 853, 8, 100),
        (604383, 855, 8, 100), (604384, 855, 8, 102), (0, 616, 0, 0), (406794, 777, 4, 66),
        (406795, 777, 4, 70), (3044134, 1823, 9, 251),
    ];
    for (x, c, hd, sec) in expect {
        let loc = g.locate(first + x);
        assert_eq!((loc.cylinder, loc.head, loc.sector), (c, hd, sec), "zone 1 LBN {x}");
    }
    // LBN 584232 of the zone sits on slipped sector 584236 (cylinder 231 of the zone)
    assert!(l.zones[1].slips.contains(&(231 * 2520 + 8 * 252 + 100)));
}

/// A directory of the calling test's own, under `kind`: the harness runs tests as threads of
/// one process, so the process id alone would let one test remove another's files.
fn test_dir(kind: &str) -> PathBuf {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("main").replace("::", "-");
    std::env::temp_dir().join(format!("headway-parv-{kind}-{}-{test}", std::process::id()))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn unknown_keys_and_values_are_errors_naming_file_line_and_key() {
    let ref_dir = reference();
    let dir = std::env::temp_dir().join(format!("headway-parv-import-{}", std::process::id()));
    let specs = std::fs::read_to_string(ref_dir.join("cheetah9LP.diskspecs")).unwrap();
    for f in ["cheetah9LP.model", "cheetah9LP.seek"] {
        std::fs::copy(ref_dir.join(f), dir.join(f)).ok().or_else(|| {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::copy(ref_dir.join(f), dir.join(f)).ok()
        });
    }
    let bad = specs.replace("   Print stats = 1,\n", "   Print stats = 1,\n   Frobnicate level = 3,\n");
    let p = write(&dir, "bad.diskspecs", &bad);
    let e = import(&p).unwrap_err().to_string();
    assert!(e.contains("bad.diskspecs:17:") && e.contains("`Frobnicate level`"), "{e}");
    let bad = specs.replace("Fast write level = 2", "Fast write level = 7");
    let e = import(&write(&dir, "bad2.diskspecs", &bad)).unwrap_err().to_string();
    assert!(e.contains("bad2.diskspecs:") && e.contains("Fast write level"), "{e}");
    let bad = specs.replace("Allow sneaky full read hits = 0", "Allow sneaky full read hits = 1");
    let e = import(&write(&dir, "bad3.diskspecs", &bad)).unwrap_err().to_string();
    assert!(e.contains("not supported"), "{e}");
    let model = std::fs::read_to_string(ref_dir.join("cheetah9LP.model")).unwrap();
    let bad =
        model.replacen("Number of spares = 1270,", "Number of spares = 1270,\n            Wobble = 1,", 1);
    write(&dir, "m.model", &bad);
    let e = import(&write(&dir, "bad4.diskspecs", &specs.replace("cheetah9LP.model", "m.model")))
        .unwrap_err()
        .to_string();
    assert!(e.contains("m.model:19:") && e.contains("`Wobble`") && e.contains("dm_layout_g1_zone"), "{e}");
    // a seek type DiskSim 4.0 itself does not compute as described: refused, naming file and line
    let bad = model.replacen("Seek type = extracted", "Seek type = linear", 1);
    write(&dir, "lin.model", &bad);
    let e = import(&write(&dir, "bad5.diskspecs", &specs.replace("cheetah9LP.model", "lin.model")))
        .unwrap_err()
        .to_string();
    assert!(e.contains("lin.model:") && e.contains("`Seek type` = linear") && e.contains("hplplus10"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn is_parameter_file_by_extension() {
    assert!(is_parameter_file("x/cheetah9LP.parv"));
    assert!(is_parameter_file("a.DISKSPECS"));
    assert!(!is_parameter_file("cheetah9lp"));
}

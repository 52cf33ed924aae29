//! Values DiskSim 4.0's own files use that headway once refused: each loads as DiskSim reads
//! it.

use super::layout::{drive, layout};
use super::*;
use crate::spec::ReadAheadWithin;

const ZONE: &str = "dm_layout_g1_zone { First cylinder number = 0, Last cylinder number = 9, \
                    Blocks per track = 20, Number of spares = 0 }";

/// The tiny drive with a two-segment cache whose lines are `cache`.
fn cached(cache: &str) -> String {
    drive(2, 10, &layout(0, 0, 1, ZONE))
        .replace("Number of buffer segments = 0,\n   Segment size (in blks) = 0,", cache)
}

fn import_named(name: &str, text: &str) -> Result<DiskSpec> {
    import(&write(&test_dir("values"), name, text))
}

#[test]
fn caching_enabled_as_2_caches_as_1() {
    let base = "Number of buffer segments = 2, Segment size (in blks) = 64, Maximum read-ahead (blks) = 32,";
    let one =
        import_named("one.diskspecs", &cached(&format!("{base} Enable caching in buffer = 1,"))).unwrap();
    let two =
        import_named("two.diskspecs", &cached(&format!("{base} Enable caching in buffer = 2,"))).unwrap();
    assert_eq!(two.cache, one.cache);
    assert!(two.cache.enabled());
    let off =
        import_named("off.diskspecs", &cached(&format!("{base} Enable caching in buffer = 0,"))).unwrap();
    assert!(!off.cache.enabled());
    let e = import_named("three.diskspecs", &cached(&format!("{base} Enable caching in buffer = 3,")))
        .unwrap_err()
        .to_string();
    assert!(e.contains("three.diskspecs:") && e.contains("`Enable caching in buffer` = 3"), "{e}");
}

#[test]
fn continuous_read_1_and_2_keep_read_ahead_on_the_track_and_the_cylinder() {
    let with = |n: u32| {
        let text = cached(&format!(
            "Number of buffer segments = 2, Segment size (in blks) = 64, Maximum read-ahead (blks) = 32, \
             Buffer continuous read = {n},"
        ));
        import_named(&format!("contread{n}.diskspecs"), &text).map(|s| s.cache)
    };
    assert_eq!(with(1).unwrap().read_ahead_within, Some(ReadAheadWithin::Track));
    assert_eq!(with(2).unwrap().read_ahead_within, Some(ReadAheadWithin::Cylinder));
    let three = with(3).unwrap();
    assert_eq!((three.read_ahead_within, three.max_read_ahead_sectors), (None, 32));
    let e = with(5).unwrap_err().to_string();
    assert!(e.contains("`Buffer continuous read` = 5: DiskSim takes 0-4"), "{e}");
}

#[test]
fn hpl_values_beside_an_extracted_curve_are_not_read() {
    let dir = test_dir("values");
    write(&dir, "tiny.seek", "Seek distances measured: 2\n1, 1.0\n9, 3.0\n");
    let text = drive(2, 10, &layout(0, 0, 1, ZONE))
        .replace("Seek type = hpl,", "Seek type = extracted,\n         Full seek curve = tiny.seek,");
    let s = import_named("extracted.diskspecs", &text).unwrap();
    // the curve's knots, not the HPL line's a + b*sqrt(d) = 1.1 ms for one cylinder
    assert_eq!(s.seek, crate::parv::seek_from_knots(&[(1, 1_000_000), (9, 3_000_000)]));
}

#[test]
fn a_trace_mapping_block_beside_the_drive_loads() {
    let text = format!(
        "{}\ndisksim_iosim IS {{ I/O Trace Time Scale = 1.0,\n  I/O Mappings = [ disksim_iomap {{ tracedev = 0x0e, \
         simdev = tiny, locScale = 512, sizeScale = 1 }} ] }}\n",
        drive(2, 10, &layout(0, 0, 1, ZONE))
    );
    assert!(import_named("iosim.parv", &text).is_ok());
}

#[test]
fn immediate_buffer_reads_and_writes_are_zero_latency_accesses() {
    let with = |read: u32, write: u32| {
        let text = drive(2, 10, &layout(0, 0, 1, ZONE)).replace(
            "Number of buffer segments = 0,",
            &format!("Immediate buffer read = {read}, Immediate buffer write = {write}, Number of buffer segments = 0,"),
        );
        import_named(&format!("immed{read}{write}.diskspecs"), &text).map(|s| s.cache)
    };
    let c = with(1, 0).unwrap();
    assert!(c.immediate_reads && !c.immediate_writes);
    // kept with the buffer disabled too: it is the mechanism's
    assert!(!c.enabled());
    let c = with(0, 2).unwrap();
    assert!(!c.immediate_reads && c.immediate_writes);
    let e = with(3, 0).unwrap_err().to_string();
    assert!(e.contains("immed30.diskspecs:") && e.contains("`Immediate buffer read` = 3"), "{e}");
}

#[test]
fn a_negative_write_settling_delay_comes_off_each_write_seek() {
    let text = drive(2, 10, &layout(0, 0, 1, ZONE)).replace(
        "Head switch time = 0.5,",
        "Head switch time = 0.5,\n         Add. write settling delay = -0.483,",
    );
    let s = import_named("settle.diskspecs", &text).unwrap();
    assert_eq!((s.write_settle, s.write_settle_off), (Duration::ZERO, Duration(483_000)));
}

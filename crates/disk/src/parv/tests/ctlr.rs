//! Controllers on a device's path: type 1 without delays passes through, type 3 with a
//! `disksim_cachemem` becomes the device's [`Controller`], and everything else is an error
//! at its line.

use super::layout::{drive, layout};
use super::*;
use crate::ctlr::{Allocation, DiskQueue, QueueOrder, WriteScheme};

const ZONE: &str = "dm_layout_g1_zone { First cylinder number = 0, Last cylinder number = 2, \
                    Blocks per track = 4, Number of spares = 0 }";

/// A cachemem block with `over` replacing lines of the default one (`key = value` pairs).
fn cachemem(over: &[(&str, &str)]) -> String {
    let mut keys = vec![
        ("Cache size", "1024"),
        ("SLRU segments", "[ 1.0 ]"),
        ("Line size", "8"),
        ("Bit granularity", "1"),
        ("Lock granularity", "8"),
        ("Shared read locks", "1"),
        ("Max request size", "128"),
        ("Replacement policy", "2"),
        ("Allocation policy", "1"),
        ("Write scheme", "3"),
        ("Flush policy", "1"),
        ("Flush period", "1000.0"),
        ("Flush idle delay", "50.0"),
        ("Flush max line cluster", "4"),
        ("Read prefetch type", "3"),
        ("Write prefetch type", "3"),
        ("Line-by-line fetches", "0"),
        ("Max gather", "16"),
    ];
    for (k, v) in over {
        match keys.iter_mut().find(|e| e.0 == *k) {
            Some(e) => e.1 = v,
            None => keys.push((k, v)),
        }
    }
    let body: Vec<String> = keys.iter().filter(|e| e.1 != "-").map(|(k, v)| format!("  {k} = {v}")).collect();
    format!("disksim_cachemem {{\n{}\n}}", body.join(",\n"))
}

/// TINY behind controller `ctlr0` of `ty` with `cache`, or behind a pass-through `ctlr1`
/// below it when `nested`.
fn system(ty: &str, scale: &str, cache: &str, nested: bool) -> String {
    let tiny = drive(2, 3, &layout(9, 0, 1, ZONE)).replacen("disksim_disk tiny", "disksim_disk TINY", 1);
    let inner = if nested {
        "disksim_ctlr ctlr1 [ disksim_bus bus2 [ disksim_disk disk0 [] ] ]"
    } else {
        "disksim_disk disk0 []"
    };
    format!(
        "{tiny}
disksim_bus BUS0 {{ type = 1, Arbitration type = 1, Arbitration time = 0.0,
   Read block transfer time = 0.0, Write block transfer time = 0.0, Print stats = 0 }}
disksim_ctlr CTLR {{ type = {ty}, Scale for delays = {scale}, Bulk sector transfer time = 0.005,
   Maximum queue length = 7, Print stats = 1,
   Scheduler = disksim_ioqueue {{ Scheduling policy = 1 }},
   Max per-disk pending count = 2,
   Cache = {cache} }}
disksim_ctlr PASS {{ type = 1, Scale for delays = 0.0, Bulk sector transfer time = 0.0,
   Maximum queue length = 0, Print stats = 1 }}
instantiate [ bus0 .. bus2 ] as BUS0
instantiate [ ctlr0 ] as CTLR
instantiate [ ctlr1 ] as PASS
instantiate [ disk0 ] as TINY
topology disksim_iodriver driver0 [
   disksim_bus bus0 [ disksim_ctlr ctlr0 [ disksim_bus bus1 [ {inner} ] ] ]
]
"
    )
}

fn load(name: &str, text: &str) -> std::result::Result<DiskSpec, String> {
    import_device(&write(&test_dir("ctlr"), name, text), None).map_err(|e| e.to_string())
}

#[test]
fn a_type_3_controller_with_a_cachemem_is_the_devices_controller() {
    let spec = load("smart.parv", &system("3", "0.2", &cachemem(&[]), false)).unwrap();
    let c = spec.controller.expect("a controller");
    // 0.5 ms a message, scaled; 0.005 ms a sector to the host; queue length + 1
    assert_eq!(c.overhead, Duration::from_micros(100));
    assert_eq!(c.host_per_sector, Duration(5_000));
    assert_eq!((c.host_slots, c.disk_slots, c.max_request), (8, 2, 128));
    let m = c.cache.expect("a cache");
    assert_eq!((m.lines, m.line, m.cluster, m.gather), (128, 8, 4, 16));
    assert_eq!((m.allocation, m.write), (Allocation::Clean, WriteScheme::Back));
    assert!(m.shared_reads && m.prefetch_front && m.prefetch_rest && !m.line_by_line);
    assert_eq!(m.flush_period, Some(Duration::from_millis(1000)));
    assert_eq!(m.idle_delay, Some(Duration::from_millis(50)));

    // DiskSim sets no idle work for a delay of 0, and keeps a delay in whole ms
    let idle = |d: &str| {
        let m =
            load(&format!("idle{d}.parv"), &system("3", "0.2", &cachemem(&[("Flush idle delay", d)]), false));
        m.unwrap().controller.unwrap().cache.unwrap().idle_delay
    };
    assert_eq!(idle("0.0"), None);
    assert_eq!(idle("50.7"), Some(Duration::from_millis(50)));
    assert_eq!(idle("0.5"), Some(Duration::ZERO));
    // prefetch 2 is the rest of the last line only; -1 is never; policy 0 no period
    let over = [("Read prefetch type", "2"), ("Flush idle delay", "-1"), ("Flush policy", "0")];
    let m = load("smart2.parv", &system("3", "0.2", &cachemem(&over), false)).unwrap().controller.unwrap();
    let m = m.cache.unwrap();
    assert!(!m.prefetch_front && m.prefetch_rest);
    assert_eq!((m.idle_delay, m.flush_period), (None, None));

    // size 0: the controller passes requests through
    let c = load("none.parv", &system("3", "0.2", &cachemem(&[("Cache size", "0")]), false)).unwrap();
    assert_eq!(c.controller.unwrap().cache, None);
}

#[test]
fn a_pass_through_controller_without_delays_is_no_controller() {
    let spec = load("pass.parv", &system("1", "0.0", &cachemem(&[]), false)).unwrap();
    assert_eq!(spec.controller, None);
}

#[test]
fn what_headway_would_run_differently_is_an_error_at_its_line() {
    let cases: Vec<(String, &str)> = vec![
        (system("1", "0.5", &cachemem(&[]), false), "`Scale for delays` = 0.5"),
        (system("2", "0.0", &cachemem(&[]), false), "`type` = 2"),
        (system("3", "0.0", &cachemem(&[("Replacement policy", "1")]), false), "`Replacement policy`"),
        (system("3", "0.0", &cachemem(&[("SLRU segments", "[ 0.5, 0.5 ]")]), false), "one segment"),
        (system("3", "0.0", &cachemem(&[("Bit granularity", "2")]), false), "`Bit granularity`"),
        (system("3", "0.0", &cachemem(&[("Lock granularity", "1")]), false), "`Lock granularity`"),
        (system("3", "0.0", &cachemem(&[("Cache size", "1004")]), false), "divide `Cache size`"),
        (system("3", "0.0", &cachemem(&[("Flush period", "0.0")]), false), "`Flush period`"),
        (system("3", "0.0", &cachemem(&[("Write scheme", "4")]), false), "`Write scheme` = 4"),
        (system("3", "0.0", &cachemem(&[("SLRU segments", "-")]), false), "lacks `SLRU segments`"),
        (
            system("3", "0.0", &cachemem(&[]), false)
                .replace("Max per-disk pending count = 2", "Max per-disk pending count = 0"),
            "never send",
        ),
        (
            system("3", "0.0", &cachemem(&[]).replace("disksim_cachemem", "disksim_ioqueue"), false),
            "disksim_cachemem and disksim_cachedev are modelled",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let e = load(&format!("bad{i}.parv"), text).unwrap_err();
        assert!(e.contains(want) && e.contains(&format!("bad{i}.parv:")), "case {i}: {e}");
    }
    // the order DiskSim reads them in: segments before the size leave no cache
    let text = system("3", "0.0", &cachemem(&[]), false);
    let swapped = text.replacen(
        "  Cache size = 1024,\n  SLRU segments = [ 1.0 ]",
        "  SLRU segments = [ 1.0 ],\n  Cache size = 1024",
        1,
    );
    assert_ne!(swapped, text);
    assert!(load("order.parv", &swapped).unwrap_err().contains("before `Cache size`"));
    // a smart controller below a pass-through one is not on the driver's bus
    let nested = system("3", "0.0", &cachemem(&[]), true).replace(
        "disksim_bus bus0 [ disksim_ctlr ctlr0 [ disksim_bus bus1 [ disksim_ctlr ctlr1",
        "disksim_bus bus0 [ disksim_ctlr ctlr1 [ disksim_bus bus1 [ disksim_ctlr ctlr0",
    );
    assert!(load("nested.parv", &nested).unwrap_err().contains("below another controller"));
}

/// TINY `disk0` cached on TINY `disk1`, both behind `ctlr0` (or `disk1` on a bus of its own
/// when `outside`), the cachedev block's lines replaced by `over`.
fn cachedev_system(over: &[(&str, &str)], outside: bool) -> String {
    let mut keys = [
        ("Cache size", "24"),
        ("Max request size", "0"),
        ("Write scheme", "3"),
        ("Flush policy", "0"),
        ("Flush period", "0.0"),
        ("Flush idle delay", "30.7"),
        ("Cache device", "disk1"),
        ("Cached device", "disk0"),
    ];
    for (k, v) in over {
        keys.iter_mut().find(|e| e.0 == *k).expect("a cachedev key").1 = v;
    }
    let body: Vec<String> = keys.iter().map(|(k, v)| format!("  {k} = {v}")).collect();
    let cache = format!("disksim_cachedev {{\n{}\n}}", body.join(",\n"));
    let text = system("3", "0.0", &cache, false)
        .replace("instantiate [ disk0 ] as TINY", "instantiate [ disk0 .. disk1 ] as TINY");
    let topology = if outside {
        "disksim_bus bus0 [ disksim_ctlr ctlr0 [ disksim_bus bus1 [ disksim_disk disk0 [] ] ] ],\n   disksim_bus bus2 [ disksim_disk disk1 [] ]"
    } else {
        "disksim_bus bus0 [ disksim_ctlr ctlr0 [ disksim_bus bus1 [ disksim_disk disk0 [], disksim_disk disk1 [] ] ] ]"
    };
    let from = "disksim_bus bus0 [ disksim_ctlr ctlr0 [ disksim_bus bus1 [ disksim_disk disk0 [] ] ] ]";
    assert!(text.contains(from));
    text.replace(from, topology)
}

#[test]
fn a_cachedev_keeps_the_cache_on_the_other_device_behind_the_controller() {
    let path = write(&test_dir("ctlr"), "dev.parv", &cachedev_system(&[], false));
    let spec = import_device(&path, Some("disk0")).unwrap();
    let c = spec.controller.expect("a controller");
    assert_eq!(c.cache, None);
    let d = c.on_device.expect("a cache on a device");
    // write-back; the idle delay in whole ms
    assert_eq!((d.sectors, d.write_through, d.idle_delay), (24, false, Some(Duration::from_millis(30))));
    assert_eq!(d.device.capacity_sectors, 24);
    assert!(d.device.controller.is_none(), "the cache device is imported alone");
    let path = write(
        &test_dir("ctlr"),
        "wt.parv",
        &cachedev_system(&[("Write scheme", "2"), ("Flush idle delay", "0")], false),
    );
    let d = import_device(&path, Some("disk0")).unwrap().controller.unwrap().on_device.unwrap();
    assert_eq!((d.write_through, d.idle_delay), (true, None));
}

#[test]
fn a_cachedev_headway_would_run_differently_is_an_error_at_its_line() {
    let cases: Vec<(String, Option<&str>, &str)> = vec![
        (cachedev_system(&[("Flush idle delay", "-1")], false), Some("disk0"), "1 ms in the past"),
        (cachedev_system(&[("Cache size", "16")], false), Some("disk0"), "must cover the cached device"),
        (cachedev_system(&[("Cache device", "disk0")], false), Some("disk0"), "not another device"),
        (cachedev_system(&[("Cache device", "disk7")], false), Some("disk0"), "not another device"),
        (cachedev_system(&[], false), Some("disk1"), "`Cached device` is `disk0`"),
        (cachedev_system(&[], true), Some("disk0"), "not behind this controller"),
    ];
    for (i, (text, dev, want)) in cases.iter().enumerate() {
        let path = write(&test_dir("ctlr"), &format!("devbad{i}.parv"), text);
        let e = import_device(&path, *dev).unwrap_err().to_string();
        assert!(e.contains(want) && e.contains(&format!("devbad{i}.parv:")), "case {i}: {e}");
    }
}

/// [`system`] with the controller's queue keys `ctlr_q` and a driver whose `Scheduler` and
/// queueing are `driver_q` and `queueing`.
fn queued(ctlr_q: &str, driver_q: &str, queueing: u32) -> String {
    let text = system("3", "0.0", &cachemem(&[]), false);
    // the controller's queue, not the drive's
    let (drive, ctlr) = text.split_at(text.find("disksim_ctlr CTLR").expect("the controller"));
    let from = "Scheduler = disksim_ioqueue { Scheduling policy = 1 }";
    assert!(ctlr.contains(from));
    format!(
        "{drive}{}
disksim_iodriver DRIVER {{ type = 1, Constant access time = 0.0,
   Scheduler = disksim_ioqueue {{ {driver_q} }}, Use queueing in subsystem = {queueing} }}
instantiate [ driver0 ] as DRIVER
",
        ctlr.replacen(from, &format!("Scheduler = disksim_ioqueue {{ {ctlr_q} }}"), 1)
    )
}

#[test]
fn the_queues_take_their_policy_joins_and_the_drivers_queueing() {
    let c = |name: &str, ctlr_q: &str, driver_q: &str, queueing: u32| {
        load(name, &queued(ctlr_q, driver_q, queueing)).map(|s| s.controller.unwrap())
    };
    let ctlr = c(
        "q.parv",
        "Scheduling policy = 3, Sequential stream scheme = 3, Maximum concat size = 128, Timeout time/weight = 6",
        "Scheduling policy = 3, Sequential stream scheme = 0",
        1,
    )
    .unwrap();
    let want = DiskQueue { order: QueueOrder::CycleLbn, join_reads: true, join_writes: true, max_join: 128 };
    assert_eq!((ctlr.disk_queue, ctlr.host_queue, ctlr.host_slots), (want, QueueOrder::CycleLbn, 8));
    // without queueing in the subsystem, one host request at a time
    let ctlr =
        c("q1.parv", "Scheduling policy = 1, Sequential stream scheme = 2", "Scheduling policy = 1", 0)
            .unwrap();
    assert_eq!((ctlr.disk_queue.join_reads, ctlr.disk_queue.join_writes, ctlr.host_slots), (false, true, 1));
    let bad = [
        ("Scheduling policy = 2", "Scheduling policy = 1", "controller `Scheduling policy` = 2"),
        (
            "Scheduling policy = 1, Sequential stream scheme = 4",
            "Scheduling policy = 1",
            "stream scheme` = 4",
        ),
        (
            "Scheduling policy = 1, Overlapping request scheme = 1",
            "Scheduling policy = 1",
            "Overlapping request scheme",
        ),
        ("Scheduling policy = 1", "Scheduling policy = 8", "driver `Scheduling policy` = 8"),
        ("Scheduling policy = 1", "Scheduling policy = 1, Sequential stream scheme = 1", "does not join"),
    ];
    for (i, (ctlr_q, driver_q, want)) in bad.iter().enumerate() {
        let e = c(&format!("qbad{i}.parv"), ctlr_q, driver_q, 1).unwrap_err();
        assert!(e.contains(want) && e.contains(&format!("qbad{i}.parv:")), "case {i}: {e}");
    }
}

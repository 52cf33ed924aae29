//! Parameter files with several devices: instance names and ranges, `FILE#NAME`,
//! `disksim_simpledisk`, `disksim_syncset`, and the errors for what a file lacks.

use super::layout::{drive, layout};
use super::*;
use crate::Hdd;
use headway_sched::{Dir, Time};

fn tmp() -> PathBuf {
    test_dir("devices")
}

const ZONE: &str = "dm_layout_g1_zone { First cylinder number = 0, Last cylinder number = 2, \
                    Blocks per track = 4, Number of spares = 0 }";

/// A simpledisk template: `latency` as its bus transaction latency.
fn simpledisk(latency: &str) -> String {
    format!(
        "disksim_simpledisk SD0 {{
   Block count = 100000,
   Access time = 9.5,
   Command overhead = 0.5,
   Bus transaction latency = {latency},
   Bulk sector transfer time = 0.01,
   Never disconnect = 0,
   Print stats = 1,
   Max queue length = 4,
   Scheduler = disksim_ioqueue {{ Scheduling policy = 1 }}
}}
"
    )
}

/// Three TINY disks (`disk0 .. disk2`, rotationally synchronised) and a simpledisk `sd0`,
/// `sd0` on a bus of 0.02 ms a block; `extra` is appended.
pub(super) fn system(extra: &str) -> String {
    let tiny = drive(2, 3, &layout(9, 0, 1, ZONE)).replacen("disksim_disk tiny", "disksim_disk TINY", 1);
    format!(
        "{tiny}{sd}
disksim_bus BUS0 {{ type = 1, Arbitration type = 1, Arbitration time = 0.0,
   Read block transfer time = 0.0, Write block transfer time = 0.0, Print stats = 0 }}
disksim_bus SLOW {{ type = 1, Arbitration type = 1, Arbitration time = 0.0,
   Read block transfer time = 0.02, Write block transfer time = 0.03, Print stats = 0 }}
instantiate [ bus0 ] as BUS0
instantiate [ bus1 ] as SLOW
instantiate [ disk0 .. disk2 ] as TINY
instantiate [ sd0 ] as SD0
disksim_syncset sync0 {{ devices = [ disk0 .. disk2 ] }}
topology disksim_iodriver driver0 [
   disksim_bus bus0 [ disksim_disk disk0 [], disksim_disk disk1 [], disksim_disk disk2 [] ],
   disksim_bus bus1 [ disksim_simpledisk sd0 [] ]
]
{extra}",
        sd = simpledisk("0.0")
    )
}

pub(super) fn file(name: &str, text: &str) -> PathBuf {
    write(&tmp(), name, text)
}

#[test]
fn instances_and_ranges_name_the_devices_in_order() {
    let doc = syntax::parse_file(&file("sys.parv", &system(""))).unwrap();
    let names: Vec<String> = crate::parv::devices::devices(&doc).into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["disk0", "disk1", "disk2", "sd0"]);
}

#[test]
fn file_hash_name_picks_a_device_and_a_bare_file_asks_for_one() {
    let p = file("sys.parv", &system(""));
    let disk = import_device(&p, Some("disk1")).unwrap();
    assert_eq!(disk.name, "sys#disk1");
    assert!(disk.fixed.is_none() && disk.disksim);
    assert_eq!(disk.capacity_sectors, 2 * 3 * 4);
    // a template name picks its first instance
    assert_eq!(import_device(&p, Some("TINY")).unwrap().zones, disk.zones);

    let e = import_device(&p, None).unwrap_err().to_string();
    assert!(e.contains("several devices") && e.contains("disk0, disk1, disk2, sd0"), "{e}");
    let e = import_device(&p, Some("disk7")).unwrap_err().to_string();
    assert!(e.contains("no device `disk7`") && e.contains("disk0, disk1, disk2, sd0"), "{e}");
    let e = import_device(&p, Some("sync0")).unwrap_err().to_string();
    assert!(e.contains("is a disksim_syncset block, not a storage device"), "{e}");

    // the resolver every front end uses reads FILE#NAME
    let r = crate::resolve(&format!("{}#sd0", p.display())).unwrap();
    assert!(r.fixed.is_some());
    assert!(is_parameter_file("x/y.parv#disk0") && !is_parameter_file("wd5000aaks#1"));
}

#[test]
fn several_instances_of_one_template_import_without_a_name() {
    let tiny = drive(2, 3, &layout(9, 0, 1, ZONE));
    let p = file("same.parv", &format!("{tiny}\ninstantiate [ d0 .. d3 ] as tiny\n"));
    let doc = syntax::parse_file(&p).unwrap();
    assert_eq!(crate::parv::devices::devices(&doc).len(), 4);
    assert_eq!(import(&p).unwrap().capacity_sectors, 24);
}

#[test]
fn a_simpledisk_takes_overhead_plus_access_plus_transfer_whatever_the_address() {
    let p = file("sys.parv", &system(""));
    let spec = import_device(&p, Some("sd0")).unwrap();
    assert_eq!(spec.capacity_sectors, 100_000);
    assert_eq!(spec.queue.as_ref().map(|q| q.depth), Some(4));
    let f = spec.fixed.unwrap();
    // the bus (0.02 ms a block reading, 0.03 writing) is slower than the device's 0.01
    assert_eq!(f.read_per_sector, Duration(20_000));
    assert_eq!(f.write_per_sector, Duration(30_000));
    let mut h = Hdd::new(spec);
    let mut now = 0;
    for (sector, len, dir, want_ms) in [
        (0, 8, Dir::Read, 0.5 + 9.5 + 8.0 * 0.02),
        (99_000, 8, Dir::Read, 10.16),
        (50_000, 1, Dir::Write, 10.03),
        (7, 64, Dir::Write, 10.0 + 64.0 * 0.03),
    ] {
        let a = h.access(Time(now), sector, len, dir);
        let took = (a.done.0 - now) as f64 / 1e6;
        assert!((took - want_ms).abs() < 1e-9, "{sector}+{len} {dir:?}: {took} ms, want {want_ms}");
        now = a.done.0 + 123_456;
    }
}

#[test]
fn what_a_simpledisk_or_syncset_cannot_be_is_an_error_at_its_line() {
    // a message latency overlaps the access differently for reads and writes: refused
    let text = system("").replace("Bus transaction latency = 0.0", "Bus transaction latency = 0.1");
    let p = file("lat.parv", &text);
    let e = import_device(&p, Some("sd0")).unwrap_err().to_string();
    let line = text.lines().position(|l| l.contains("Bus transaction latency")).unwrap() + 1;
    assert!(e.contains(&format!("lat.parv:{line}:")) && e.contains("Bus transaction latency"), "{e}");

    // a simpledisk does not synchronise
    let text = system("disksim_syncset sync1 {\n devices = [ disk0, sd0 ]\n}\n");
    let p = file("sync.parv", &text);
    let e = import_device(&p, Some("disk0")).unwrap_err().to_string();
    let line = text.lines().position(|l| l.contains("disk0, sd0")).unwrap() + 1;
    assert!(e.contains(&format!("sync.parv:{line}:")) && e.contains("`sd0` is a disksim_simpledisk"), "{e}");

    // a range needs one prefix and increasing numbers
    for bad in ["[ disk2 .. disk0 ]", "[ disk0 .. sd3 ]", "[ .. disk3 ]", "[ disk0 .. ]"] {
        let text = system(&format!("instantiate {bad} as TINY\n"));
        let e = syntax::parse_file(&file("range.parv", &text)).unwrap_err().to_string();
        let line = text.lines().position(|l| l.contains(bad)).unwrap() + 1;
        assert!(e.contains(&format!("range.parv:{line}:")) && e.contains(".."), "{bad}: {e}");
    }
}

#[test]
fn block_count_stands_only_after_the_layout() {
    let before = drive(2, 3, &layout(9, 0, 1, ZONE));
    assert!(before.find("Block count").unwrap() < before.find("Layout Model").unwrap());
    // before the layout (as every DiskSim file writes it): the zones' 24 LBNs, as DiskSim
    // overwrites the count when the layout loads
    assert_eq!(import(&file("before.parv", &before)).unwrap().capacity_sectors, 24);
    let after = |n: u32| {
        before
            .replace("      Block count = 100000000,\n", "")
            .replace("Mechanical Model", &format!("Block count = {n},\n      Mechanical Model"))
    };
    assert_eq!(import(&file("after.parv", &after(20))).unwrap().capacity_sectors, 20);
    let text = after(25);
    let e = import(&file("over.parv", &text)).unwrap_err().to_string();
    let line = text.lines().position(|l| l.contains("Block count")).unwrap() + 1;
    assert!(e.contains(&format!("over.parv:{line}:")) && e.contains("more than its zones' 24 LBNs"), "{e}");
}

/// A device's seat on an exclusive bus it shares (`disksim_bus` type 1 with several
/// devices): its place under the bus, the arbitration order and time; none on an
/// interleaved bus or on a bus of its own; a bad arbitration type is an error at its line.
#[test]
fn devices_sharing_an_exclusive_bus_have_seats_on_it() {
    let seat = |text: &str, name: &str| import_device(&file("bus.parv", text), Some(name)).unwrap().bus_seats;
    let text = system("");
    let s = seat(&text, "disk2");
    assert_eq!(s.len(), 1);
    assert_eq!(
        (s[0].bus.as_str(), s[0].slot, s[0].by_slot, s[0].arbitration),
        ("bus0", 3, true, Duration::ZERO)
    );
    assert_eq!(seat(&text, "disk0")[0].slot, 1);
    let shown = import_device(&file("bus.parv", &text), Some("disk2")).unwrap().summary();
    assert!(
        shown.contains("shared bus      bus0 slot 3; highest slot first, arbitration 0.000 ms"),
        "{shown}"
    );
    assert!(seat(&text, "sd0").is_empty(), "alone on its bus");
    let fifo = text.replacen(
        "Arbitration type = 1, Arbitration time = 0.0",
        "Arbitration type = 2, Arbitration time = 0.5",
        1,
    );
    let s = seat(&fifo, "disk1");
    assert_eq!((s[0].slot, s[0].by_slot, s[0].arbitration), (2, false, Duration::from_micros(500)));
    let interleaved = text.replacen("disksim_bus BUS0 {{ type = 1", "disksim_bus BUS0 {{ type = 2", 1);
    let interleaved = interleaved.replacen("disksim_bus BUS0 { type = 1", "disksim_bus BUS0 { type = 2", 1);
    assert!(seat(&interleaved, "disk1").is_empty(), "an interleaved bus is never waited for");
    let bad = text.replacen("Arbitration type = 1", "Arbitration type = 3", 1);
    let e = import_device(&file("bad-bus.parv", &bad), Some("disk0")).unwrap_err().to_string();
    assert!(e.contains("bad-bus.parv:") && e.contains("Arbitration type"), "{e}");
}

//! A DiskSim trace replayed on a DiskSim parameter file of several devices (`headway replay
//! --format disksim --disk FILE.parv`): each request goes to the device its device number
//! reaches after the file's `disksim_iosim` maps, and each device then answers as it does
//! alone. DiskSim's own `ascii.parv` (18 HP C2249A drives, each on its own bus, a trace
//! device mapped onto each) is the system.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn headway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headway")).args(args).output().expect("headway runs")
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headway-disksim-trace-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn dist(file: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim4-dist").join(file);
    assert!(p.exists(), "{} missing: DiskSim's distribution files", p.display());
    p
}

/// `ascii.parv` as `edit` rewrites it, written to `dir/name` beside the drive files it
/// sources.
fn ascii_edited(dir: &Path, name: &str, edit: impl FnOnce(&str) -> String) -> PathBuf {
    for f in ["hp_c2249a.diskspecs", "hp_c2249a.model"] {
        std::fs::copy(dist(f), dir.join(f)).unwrap();
    }
    let p = dir.join(name);
    std::fs::write(&p, edit(&std::fs::read_to_string(dist("ascii.parv")).unwrap())).unwrap();
    p
}

/// `text` (what a command printed) holds every one of `lines`.
fn shows(text: &str, lines: &[&str]) {
    for says in lines {
        assert!(text.contains(says), "{says}: {text}");
    }
}

/// One request of a DiskSim ascii trace.
#[derive(Clone, Copy)]
struct Line {
    ms: f64,
    devno: u64,
    blkno: u64,
    bcount: u64,
    read: bool,
}

fn write_trace(path: &Path, lines: &[Line]) -> PathBuf {
    let text: String = lines
        .iter()
        .map(|l| format!("{:.6}\t{}\t{}\t{}\t{}\n", l.ms, l.devno, l.blkno, l.bcount, l.read as u8))
        .collect();
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

/// `n` requests over trace devices `devnos`, a few ms apart (often closer than a drive
/// answers, so queues form), even block numbers below 2,000,000 (every C2249A has more).
fn requests(n: usize, devnos: &[u64]) -> Vec<Line> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        x >> 33
    };
    let mut ms = 0.0;
    (0..n)
        .map(|_| {
            ms += (next() % 9_000) as f64 / 1000.0;
            Line {
                ms,
                devno: devnos[(next() % devnos.len() as u64) as usize],
                blkno: 2 * (next() % 1_000_000),
                bcount: 1 + next() % 64,
                read: next() % 3 != 0,
            }
        })
        .collect()
}

/// Each request's `(offset, submit ns, latency ns)` from `--per-request`, in completion
/// order, and its device number when the run has several (the address's bits from 49 up).
fn per_request(trace: &Path, disk: &str, out: &Path) -> Vec<(u64, u64, u64, u64)> {
    per_request_with(trace, disk, out, &["--scheduler", "noop"])
}

fn per_request_with(trace: &Path, disk: &str, out: &Path, extra: &[&str]) -> Vec<(u64, u64, u64, u64)> {
    let mut args = vec![
        "replay",
        trace.to_str().unwrap(),
        "--format",
        "disksim",
        "--disk",
        disk,
        "--quiet",
        "--per-request",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    ok(&headway(&args));
    let text = std::fs::read_to_string(out).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("scheduler,job_index,job,dir,offset,bytes,submit_ns,complete_ns,latency_ns")
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let n = |i: usize| f[i].parse::<u64>().unwrap();
            (n(4) >> 49, n(4) & ((1 << 49) - 1), n(6), n(8))
        })
        .collect()
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

#[test]
fn each_device_of_a_file_of_several_answers_as_it_does_alone() {
    let dir = scratch("alone");
    let ascii = dist("ascii.parv");
    // ascii.parv maps trace devices 0x0e, 0x12 and 0x0a onto disk0, disk1 and disk2
    let lines = requests(600, &[14, 18, 10]);
    let all = write_trace(&dir.join("all.trace"), &lines);
    let together = per_request(&all, ascii.to_str().unwrap(), &dir.join("all.csv"));
    assert_eq!(together.len(), 600);
    for (devno, device) in [(14, 0), (18, 1), (10, 2)] {
        let own: Vec<Line> = lines.iter().filter(|l| l.devno == devno).copied().collect();
        assert!(own.len() > 150, "device {devno} has {} requests", own.len());
        let alone = per_request(
            &write_trace(&dir.join(format!("{devno}.trace")), &own),
            &format!("{}#disk{device}", ascii.display()),
            &dir.join(format!("{devno}.csv")),
        );
        let on_it: Vec<(u64, u64, u64)> =
            together.iter().filter(|r| r.0 == device).map(|r| (r.1, r.2, r.3)).collect();
        let alone: Vec<(u64, u64, u64)> = alone.iter().map(|r| (r.1, r.2, r.3)).collect();
        assert_eq!(on_it.len(), own.len(), "trace device {devno} reaches disk{device}");
        // request by request, to the nanosecond
        assert_eq!(sorted(on_it), sorted(alone), "disk{device}");
    }
    // `headway disks` lists the devices by number, and ascii.parv's maps
    shows(
        &ok(&headway(&["disks", ascii.to_str().unwrap()])),
        &[
            "DiskSim traces (`replay --format disksim`) replay on 18 devices:",
            "device number  17: disk17 (drive)",
            "trace device  14 (0x0e) -> disk0 (device number 0): blocks as they are, counts x 1, offset 0",
        ],
    );
    let one_drive = ok(&headway(&["disks", &format!("{}#disk0", ascii.display())]));
    assert!(!one_drive.contains("replay on"), "{one_drive}");
    // and routing is what made them so: the same trace on one drive queues more
    let one = per_request(&all, &format!("{}#disk0", ascii.display()), &dir.join("one.csv"));
    let mean = |v: &[(u64, u64, u64, u64)]| v.iter().map(|r| r.3 as f64).sum::<f64>() / v.len() as f64;
    assert!(mean(&one) > 1.5 * mean(&together), "one drive {} ns, three {} ns", mean(&one), mean(&together));
}

#[test]
fn a_files_maps_scale_place_and_time_the_requests() {
    let dir = scratch("maps");
    // ascii.parv with two maps of its own: trace device 7 onto disk3 (blocks of 1024
    // bytes, counts doubled, 1000 blocks on), 8 onto disk4 (blocks of 256 bytes), and the
    // trace's clock at half speed
    let iosim = "disksim_iosim IS {
     I/O Trace Time Scale = 0.5,
     I/O Mappings = [
     disksim_iomap { tracedev = 7, simdev = disk3, locScale = 1024, sizeScale = 2, offset = 1000 },
     disksim_iomap { tracedev = 8, simdev = disk4, locScale = 256, sizeScale = 1 }
     ]
}";
    let parv = ascii_edited(&dir, "maps.parv", |text| {
        let start = text.find("disksim_iosim IS {").unwrap();
        let end = start + text[start..].find("}  # end of iosim spec").unwrap() + 1;
        format!("{}{iosim}{}", &text[..start], &text[end..])
    });

    // (blocks below 1,000,000: twice them stays on the drive)
    // `headway disks` shows the maps
    shows(
        &ok(&headway(&["disks", parv.to_str().unwrap()])),
        &[
            "Trace maps (disksim_iosim), time scale 0.5:",
            "trace device   7 (0x07) -> disk3 (device number 3): blocks x 2, counts x 2, offset 1000",
            "trace device   8 (0x08) -> disk4 (device number 4): blocks / 2, counts x 1, offset 0",
        ],
    );
    let lines: Vec<Line> =
        requests(400, &[7, 8]).into_iter().map(|l| Line { blkno: l.blkno / 4 * 2, ..l }).collect();
    let mapped = write_trace(&dir.join("mapped.trace"), &lines);
    // the same requests as ascii.parv's own maps take them: disk3 is trace device 0x0b,
    // disk4 is 0x14
    let by_hand: Vec<Line> = lines
        .iter()
        .map(|l| match l.devno {
            7 => Line { ms: l.ms * 0.5, devno: 11, blkno: l.blkno * 2 + 1000, bcount: l.bcount * 2, ..*l },
            _ => Line { ms: l.ms * 0.5, devno: 20, blkno: l.blkno / 2, ..*l },
        })
        .collect();
    let by_hand = write_trace(&dir.join("by_hand.trace"), &by_hand);
    let a = per_request(&mapped, parv.to_str().unwrap(), &dir.join("mapped.csv"));
    let b = per_request(&by_hand, dist("ascii.parv").to_str().unwrap(), &dir.join("by_hand.csv"));
    assert_eq!(a.len(), 400);
    assert_eq!(sorted(a.clone()), sorted(b.clone()));
    let devices: std::collections::BTreeSet<u64> = a.iter().map(|r| r.0).collect();
    assert_eq!(devices.into_iter().collect::<Vec<_>>(), [3, 4]);
    // under ascii.parv's own maps the same trace is other requests: trace device 7 is
    // disk10 there, and 8, which no map names, stays device number 8
    let theirs = per_request(&mapped, dist("ascii.parv").to_str().unwrap(), &dir.join("theirs.csv"));
    let devices: std::collections::BTreeSet<u64> = theirs.iter().map(|r| r.0).collect();
    assert_eq!(devices.into_iter().collect::<Vec<_>>(), [8, 10]);
    let total = |v: &[(u64, u64, u64, u64)]| v.iter().map(|r| r.3).sum::<u64>();
    assert_ne!(total(&theirs), total(&a));

    // an odd block of trace device 8 does not divide into 512-byte blocks: DiskSim stops
    let mut odd = lines.clone();
    let i = odd.iter().position(|l| l.devno == 8).unwrap();
    odd[i].blkno += 1;
    let odd = write_trace(&dir.join("odd.trace"), &odd);
    let o =
        headway(&["replay", odd.to_str().unwrap(), "--format", "disksim", "--disk", parv.to_str().unwrap()]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && e.contains(&format!(
                "odd.trace:{}: block {} of trace device 8 is not a multiple of 2",
                i + 1,
                lines[i].blkno + 1
            )),
        "{e}"
    );
}

#[test]
fn several_devices_refuse_an_array_and_a_request_past_a_device_names_it() {
    let dir = scratch("refuse");
    let ascii = dist("ascii.parv");
    let t =
        write_trace(&dir.join("t.trace"), &[Line { ms: 0.0, devno: 14, blkno: 8, bcount: 8, read: true }]);
    let o = headway(&[
        "replay",
        t.to_str().unwrap(),
        "--format",
        "disksim",
        "--disk",
        ascii.to_str().unwrap(),
        "--array",
        "raid0:4:64k",
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && e.contains("has several devices") && e.contains("leave out --array"),
        "{e}"
    );
    let far = write_trace(
        &dir.join("far.trace"),
        &[
            Line { ms: 0.0, devno: 14, blkno: 8, bcount: 8, read: true },
            Line { ms: 1.0, devno: 18, blkno: 2_687_630, bcount: 8, read: true },
        ],
    );
    let o =
        headway(&["replay", far.to_str().unwrap(), "--format", "disksim", "--disk", ascii.to_str().unwrap()]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && e.contains("far.trace:2: request at sector 2687630 of 8 sectors ends past the 2687632 sectors of ascii#disk1"),
        "{e}"
    );
    // DiskSim's 3disks.parv: three drives of three models, each its own device
    let three = write_trace(
        &dir.join("three.trace"),
        &[0, 1, 2].map(|d| Line { ms: d as f64, devno: d, blkno: 64, bcount: 8, read: true }),
    );
    let v: serde_json::Value = serde_json::from_str(&ok(&headway(&[
        "replay",
        three.to_str().unwrap(),
        "--format",
        "disksim",
        "--disk",
        dist("3disks.parv").to_str().unwrap(),
        "--scheduler",
        "noop",
        "--json",
        "-",
    ])))
    .unwrap();
    assert_eq!(v["runs"][0]["disk"], "3disks#quantum, 3disks#ibm, 3disks#seagate");
}

#[test]
fn the_disksim_scheduler_orders_each_queue_by_the_files_driver() {
    let dir = scratch("driver");
    // ascii.parv's driver runs CYCLE_LBN (policy 3); this copy's runs FCFS
    let fcfs = ascii_edited(&dir, "fcfs.parv", |text| {
        assert_eq!(text.matches("Scheduling policy = 3,").count(), 1);
        text.replace("Scheduling policy = 3,", "Scheduling policy = 1,")
    });
    // every request on disk0, a few ms apart: its queue grows, and the order matters
    let t = write_trace(&dir.join("t.trace"), &requests(300, &[14]));
    let ascii = dist("ascii.parv");
    let run = |disk: &Path, extra: &[&str], out: &str| {
        let mut args = vec!["--scheduler", "disksim"];
        args.extend_from_slice(extra);
        sorted(per_request_with(&t, disk.to_str().unwrap(), &dir.join(out), &args))
    };
    let file_fcfs = run(&fcfs, &[], "a.csv");
    assert_eq!(file_fcfs, run(&ascii, &["--set", "disksim_policy=1"], "b.csv"));
    let file_cycle = run(&ascii, &[], "c.csv");
    assert_ne!(file_fcfs, file_cycle);
    // the command line's setting wins over the file's
    assert_eq!(file_cycle, run(&fcfs, &["--set", "disksim_policy=3"], "d.csv"));
}

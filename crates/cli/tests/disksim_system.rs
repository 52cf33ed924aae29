//! DiskSim parameter files that describe a system: `--disk FILE#NAME` picking a device,
//! and a `disksim_logorg` running as the array `--array` would give.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn headway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headway")).args(args).output().expect("headway runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headway-disksim-system-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Four cheetah9LP drives (the reference file, sourced) and a RAID 0 of them.
fn system(dir: &Path) -> PathBuf {
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim-valid/cheetah9LP.diskspecs");
    assert!(specs.exists(), "{} missing: the DiskSim reference data", specs.display());
    let text = format!(
        "source {}
instantiate [ disk0 .. disk3 ] as SEAGATE_ST39102LW_validate
disksim_logorg org0 {{
   Addressing mode = Array,
   Distribution scheme = Striped,
   Redundancy scheme = Noredun,
   devices = [ disk0 .. disk3 ],
   Stripe unit = 64,
   Synch writes for safety = 0,
   Number of copies = 2,
   Copy choice on read = 6,
   RMW vs. reconstruct = 0.5,
   Parity stripe unit = 64,
   Parity rotation type = 1
}}
",
        specs.canonicalize().unwrap().display()
    );
    let p = dir.join("four.parv");
    std::fs::write(&p, text).unwrap();
    p
}

fn trace(dir: &Path) -> PathBuf {
    let mut t = String::new();
    for i in 0..200u64 {
        let sector = (i * 7_919_993) % 60_000_000;
        let flags = if i % 3 == 0 { 0 } else { 1 };
        t.push_str(&format!("{}.000000 0 {sector} {} {flags}\n", i * 4, 8 + (i % 5) * 24));
    }
    let p = dir.join("t.trace");
    std::fs::write(&p, t).unwrap();
    p
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_logorg_replays_as_the_array_it_describes() {
    let dir = scratch("logorg");
    let parv = system(&dir);
    let t = trace(&dir);
    let (t, org, disk) =
        (t.to_str().unwrap(), format!("{}#org0", parv.display()), format!("{}#disk0", parv.display()));
    let run = |extra: &[&str], json: &str| {
        let json = dir.join(json);
        let mut args =
            vec!["replay", t, "--format", "disksim", "--scheduler", "noop,stream", "--quiet", "--json"];
        args.push(json.to_str().unwrap());
        args.extend_from_slice(extra);
        ok(&headway(&args));
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
        v["runs"].clone()
    };
    let from_file = run(&["--disk", &org], "org.json");
    let by_hand = run(&["--disk", &disk, "--array", "raid0:4:32k"], "hand.json");
    assert_eq!(from_file, by_hand);
    assert_eq!(from_file.as_array().unwrap().len(), 2);

    let o = headway(&["replay", t, "--format", "disksim", "--disk", &org, "--array", "raid0:4:32k"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("leave out --array"), "{e}");
    // a file with four devices of one model still imports bare; a name it lacks is listed
    ok(&headway(&["disks", parv.to_str().unwrap()]));
    let o = headway(&["disks", &format!("{}#disk9", parv.display())]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && e.contains("no device `disk9`") && e.contains("disk0, disk1, disk2, disk3"),
        "{e}"
    );
}

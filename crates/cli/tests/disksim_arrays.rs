//! DiskSim logorgs with redundancy: a `Shadowed` logorg (mirrors) and a `Parity_disk`
//! logorg (RAID 4) load from a parameter file and replay a trace.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn headway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headway")).args(args).output().expect("headway runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headway-disksim-arrays-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A logorg `name` over the four drives with `redundancy`, `Synch writes for safety` and
/// `RMW vs. reconstruct`.
fn logorg(name: &str, redundancy: &str, synch: u32, rmw: f64) -> String {
    format!(
        "disksim_logorg {name} {{
   Addressing mode = Array,
   Distribution scheme = Striped,
   Redundancy scheme = {redundancy},
   devices = [ disk0 .. disk3 ],
   Stripe unit = 64,
   Synch writes for safety = {synch},
   Number of copies = 2,
   Copy choice on read = 1,
   RMW vs. reconstruct = {rmw},
   Parity stripe unit = 64,
   Parity rotation type = 1
}}
"
    )
}

/// Four cheetah9LP drives (the reference file, sourced), mirrored (`mirror`), RAID 4
/// (`raid4`) and RAID 5 (`raid5`).
fn system(dir: &Path) -> PathBuf {
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim-valid/cheetah9LP.diskspecs");
    assert!(specs.exists(), "{} missing: the DiskSim reference data", specs.display());
    let text = format!(
        "source {}\ninstantiate [ disk0 .. disk3 ] as SEAGATE_ST39102LW_validate\n{}{}{}",
        specs.canonicalize().unwrap().display(),
        logorg("mirror", "Shadowed", 1, 1.0),
        logorg("raid4", "Parity_disk", 1, 1.0),
        logorg("raid5", "Parity_rotated", 0, 0.5),
    );
    let p = dir.join("arrays.parv");
    std::fs::write(&p, text).unwrap();
    p
}

/// 300 requests, a third writes, 4 to 100 KiB, over the first 30 M sectors.
fn trace(dir: &Path) -> PathBuf {
    let mut t = String::new();
    for i in 0..300u64 {
        let sector = (i * 7_919_993) % 30_000_000;
        let flags = if i % 3 == 0 { 0 } else { 1 };
        t.push_str(&format!("{}.000000 0 {sector} {} {flags}\n", i * 4, 8 + (i % 5) * 48));
    }
    let p = dir.join("t.trace");
    std::fs::write(&p, t).unwrap();
    p
}

/// The run of `replay` with `args` (one scheduler): its JSON.
fn replay(dir: &Path, trace: &Path, args: &[&str], json: &str) -> serde_json::Value {
    let json = dir.join(json);
    let mut all = vec!["replay", trace.to_str().unwrap(), "--format", "disksim", "--scheduler", "noop"];
    all.extend_from_slice(&["--quiet", "--json", json.to_str().unwrap()]);
    all.extend_from_slice(args);
    let o = headway(&all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    v["runs"][0].clone()
}

/// (reads, writes) each member received.
fn member_flows(run: &serde_json::Value) -> Vec<(u64, u64)> {
    let n = |m: &serde_json::Value, d: &str| m["device"]["requests_in"][d].as_u64().unwrap();
    run["members"].as_array().expect("members").iter().map(|m| (n(m, "reads"), n(m, "writes"))).collect()
}

#[test]
fn a_shadowed_and_a_parity_disk_logorg_load_and_run() {
    let dir = scratch("load");
    let parv = system(&dir);
    let t = trace(&dir);
    let org = |name: &str| format!("{}#{name}", parv.display());

    // mirrors: 2 copies of 2 data members, copy 1 of member d is member d + 2
    let mirror = replay(&dir, &t, &["--disk", &org("mirror")], "mirror.json");
    assert_eq!(mirror["array"], "raid10:4:32k:read=primary (DiskSim logorg)");
    let f = member_flows(&mirror);
    assert_eq!(f.len(), 4);
    // every write goes to both copies; `Copy choice on read = 1` reads the primaries only
    assert_eq!((f[0].1, f[1].1), (f[2].1, f[3].1), "{f:?}");
    assert!(f[0].0 > 0 && f[1].0 > 0 && f[2].0 == 0 && f[3].0 == 0, "{f:?}");
    assert_eq!(mirror["jobs"][0]["read"]["total_ios"].as_u64().unwrap(), 200);
    assert_eq!(mirror["jobs"][0]["write"]["total_ios"].as_u64().unwrap(), 100);
    // DiskSim gives each member one request per array request: requests of up to 200
    // sectors over 64-sector units put two units on a member now and then, which
    // `--array` sends as two pieces
    let member = format!("{}#disk0", parv.display());
    let own = replay(&dir, &t, &["--disk", &member, "--array", "raid10:4:32k:read=primary"], "own10.json");
    let total = |f: &[(u64, u64)]| f.iter().map(|m| m.0 + m.1).sum::<u64>();
    let own_f = member_flows(&own);
    assert!(total(&f) < total(&own_f), "{f:?} {own_f:?}");
    let bytes = |r: &serde_json::Value| {
        let b = |m: &serde_json::Value, n: &str, mean: &str| {
            let flow = &m["device"]["requests_in"];
            flow[n].as_f64().unwrap() * flow[mean].as_f64().unwrap()
        };
        let members = r["members"].as_array().unwrap().iter();
        members.map(|m| b(m, "reads", "read_mean_bytes") + b(m, "writes", "write_mean_bytes")).sum::<f64>()
    };
    assert!((bytes(&mirror) - bytes(&own)).abs() < 1.0, "the same sectors either way");

    // RAID 4: the last member holds every row's parity: it is written by every write and
    // read only for a read-modify-write's old parity
    let raid4 = replay(&dir, &t, &["--disk", &org("raid4")], "raid4.json");
    assert_eq!(raid4["array"], "raid4:4:32k (DiskSim logorg)");
    let f = member_flows(&raid4);
    let writes = raid4["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
    assert_eq!(writes, 100);
    assert!(f[3].1 >= writes && f[3].0 <= f[3].1, "{f:?}");
    assert!(f[..3].iter().all(|m| m.0 > 0), "{f:?}");
}

#[test]
fn a_raid5_logorg_reconstructs_and_does_not_synchronise_its_writes() {
    let dir = scratch("raid5");
    let parv = system(&dir);
    let t = trace(&dir);
    let org = format!("{}#raid5", parv.display());
    let member = format!("{}#disk0", parv.display());
    // `RMW vs. reconstruct = 0.5` over 4 devices: rows touching 2 of their 3 data units
    // are reconstruct-written; `Synch writes for safety = 0`
    let run = replay(&dir, &t, &["--disk", &org], "raid5.json");
    assert_eq!(run["array"], "raid5:4:32k (DiskSim logorg)");
    assert_eq!(run["jobs"][0]["write"]["total_ios"].as_u64().unwrap(), 100);
    // headway's own RAID 5 always reads the old data and parity: other member reads
    let own = replay(&dir, &t, &["--disk", &member, "--array", "raid5:4:32k"], "own.json");
    let reads = |r: &serde_json::Value| member_flows(r).iter().map(|m| m.0).sum::<u64>();
    assert_ne!(reads(&run), reads(&own));
}

#[test]
fn a_striped_logorg_holds_every_sector_of_its_members() {
    let dir = scratch("capacity");
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim-valid/cheetah9LP.diskspecs");
    let text = format!(
        "source {}\ninstantiate [ disk0 .. disk3 ] as SEAGATE_ST39102LW_validate\n{}",
        specs.canonicalize().unwrap().display(),
        logorg("raid0", "Noredun", 1, 1.0)
    );
    let parv = dir.join("raid0.parv");
    std::fs::write(&parv, text).unwrap();
    let (org, member) = (format!("{}#raid0", parv.display()), format!("{}#disk0", parv.display()));
    // four members of 17,918,387 sectors (51 past their last whole 64-sector unit):
    // DiskSim's RAID 0 holds 4 x 17,918,387 = 71,673,548, the last row in 51-sector units
    let t = dir.join("end.trace");
    std::fs::write(&t, "0.0 0 71673540 8 1\n1.0 0 71673343 40 1\n").unwrap();
    let run = replay(&dir, &t, &["--disk", &org], "end.json");
    assert_eq!(run["jobs"][0]["read"]["total_ios"].as_u64().unwrap(), 2);
    // (the error of replaying the trace on `disk` with `extra`)
    let refused = |disk: &str, extra: &[&str]| {
        let mut a = vec!["replay", t.to_str().unwrap(), "--format", "disksim", "--disk", disk];
        a.extend_from_slice(extra);
        let o = headway(&a);
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // headway's own RAID 0 stops at the members' whole units: 71,673,344
    let e = refused(&member, &["--array", "raid0:4:32k"]);
    assert!(e.contains("ends past the disk's 71673344 sectors"), "{e}");
    std::fs::write(&t, "0.0 0 71673548 1 1\n").unwrap();
    let e = refused(&org, &[]);
    assert!(e.contains("ends past the disk's 71673548 sectors"), "{e}");
}

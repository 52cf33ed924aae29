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
    let mut from_file = run(&["--disk", &org], "org.json");
    let by_hand = run(&["--disk", &disk, "--array", "raid0:4:32k"], "hand.json");
    assert_eq!(from_file.as_array().unwrap().len(), 2);
    // the same array under DiskSim's rules (no front-end queue, which 200 requests 4 ms
    // apart never fill): the same runs
    for r in from_file.as_array_mut().unwrap() {
        assert_eq!(r["array"], "raid0:4:32k (DiskSim logorg)");
        r["array"] = "raid0:4:32k".into();
    }
    assert_eq!(from_file, by_hand);

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

/// A synthetic experiment as DiskSim's examples write one: the disk wrapped in a `Parts`
/// logorg, `generators` closed or open generators over it.
fn synthetic(dir: &Path, p_critical: f64, generators: usize) -> PathBuf {
    synthetic_with(dir, p_critical, 0.0, None, generators)
}

/// The same with a share `p_limited` of time-limited requests, and system calls of
/// (call, return) ms around each time-critical request.
fn synthetic_with(
    dir: &Path,
    p_critical: f64,
    p_limited: f64,
    syscalls: Option<(f64, f64)>,
    generators: usize,
) -> PathBuf {
    let (sys, (call, ret)) = match syscalls {
        Some(times) => (1, times),
        None => (0, (0.0, 0.0)),
    };
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim-valid/cheetah9LP.diskspecs");
    let gen = format!(
        "disksim_synthgen {{
       Storage capacity per device = 17000000,
       devices = [ org0 ],
       Blocking factor = 8,
       Probability of sequential access = 0.2,
       Probability of local access = 0.3,
       Probability of read access = 0.66,
       Probability of time-critical request = {p_critical},
       Probability of time-limited request = {p_limited},
       Time-limited think times = [ normal, 30.0, 100.0 ],
       General inter-arrival times = [ exponential, 0.0, 25.0 ],
       Sequential inter-arrival times = [ exponential, 0.0, 25.0 ],
       Local inter-arrival times = [ exponential, 0.0, 25.0 ],
       Local distances = [ normal, 0.0, 40000.0 ],
       Sizes = [ exponential, 0.0, 8.0 ]
     }}"
    );
    let text = format!(
        "source {}
instantiate [ disk0 ] as SEAGATE_ST39102LW_validate
disksim_logorg org0 {{
   Addressing mode = Parts, Distribution scheme = Asis, Redundancy scheme = Noredun,
   devices = [ disk0 ], Stripe unit = 64, Synch writes for safety = 0, Number of copies = 2,
   Copy choice on read = 6, RMW vs. reconstruct = 0.5, Parity stripe unit = 64,
   Parity rotation type = 1
}}
disksim_global Global {{ Init Seed = 42, Real Seed = 42, Stat definition file = statdefs }}
disksim_pf Proc {{ Number of processors = {generators}, Process-Flow Time Scale = 1.0 }}
disksim_synthio Synthio {{
   Number of I/O requests to generate = 400,
   Maximum time of trace generated = 10000.0,
   System call/return with each request = {sys},
   Think time from call to request = {call},
   Think time from request to return = {ret},
   Generators = [ {} ]
}}
",
        specs.canonicalize().unwrap().display(),
        vec![gen; generators].join(",\n")
    );
    let p = dir.join(format!("synth-{p_critical}-{p_limited}-{sys}-{generators}.parv"));
    std::fs::write(&p, text).unwrap();
    p
}

/// `headway simulate PARV --scheduler noop --json OUT`: the JSON text.
fn simulate_json(parv: &Path, out: &Path) -> String {
    simulate_json_with(parv, out, "noop", &[])
}

/// `headway simulate PARV --scheduler SCHEDULER EXTRA.. --json OUT`: the JSON text.
fn simulate_json_with(parv: &Path, out: &Path, scheduler: &str, extra: &[&str]) -> String {
    let (parv, out) = (parv.to_str().unwrap(), out.to_str().unwrap());
    let mut args = vec!["simulate", parv, "--scheduler", scheduler];
    args.extend_from_slice(extra);
    args.extend(["--json", out]);
    ok(&headway(&args));
    std::fs::read_to_string(out).unwrap()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

/// Each job's requests counted, reads and writes.
fn ios(v: &serde_json::Value) -> Vec<(u64, u64)> {
    let count = |j: &serde_json::Value, d: &str| j[d]["total_ios"].as_u64().unwrap();
    v["runs"][0]["jobs"].as_array().unwrap().iter().map(|j| (count(j, "read"), count(j, "write"))).collect()
}

#[test]
fn a_parv_synthetic_workload_runs_as_a_job_file() {
    let dir = scratch("synth");
    let parv = synthetic(&dir, 1.0, 1);
    let text = simulate_json(&parv, &dir.join("out.json"));
    let v = json(&text);
    assert_eq!(v["runs"][0]["jobs"][0]["jobname"], "synthgen0");
    // one closed generator: exactly the 400 requests asked for, each completing
    let [(reads, writes)] = ios(&v)[..] else { panic!("one job: {v}") };
    assert_eq!(reads + writes, 400);
    // about two thirds reads (sequential requests keep their predecessor's direction)
    let share = reads as f64 / 400.0;
    assert!((0.55..0.77).contains(&share), "{share}");
    // the same run twice: byte-identical
    assert_eq!(simulate_json(&parv, &dir.join("again.json")), text);

    // five open generators on five processors: they all run; 400 counted generations
    // and the five first requests are issued, those in flight at the stop count nowhere
    let parv = synthetic(&dir, 0.0, 5);
    let v = json(&simulate_json(&parv, &dir.join("open.json")));
    let ios: Vec<u64> = ios(&v).into_iter().map(|(r, w)| r + w).collect();
    assert_eq!(ios.len(), 5);
    assert!(ios.iter().all(|&n| n > 10) && ios.iter().sum::<u64>() <= 405, "{ios:?}");
}

#[test]
fn time_limited_requests_and_system_calls_run_and_change_the_timeline() {
    let dir = scratch("synth-limits");
    let total = |parv: &Path, name: &str| {
        let text = simulate_json(parv, &dir.join(name));
        let v = json(&text);
        let [(r, w)] = ios(&v)[..] else { panic!("one job: {v}") };
        (r + w, v["runs"][0]["jobs"][0]["job_runtime"].as_f64().unwrap(), text)
    };
    // half time-critical, half time-limited: the critical ones are waited for, so the run
    // counts (nearly) every one of its 400 generations
    let plain = synthetic_with(&dir, 0.5, 0.5, None, 1);
    let (n, elapsed, text) = total(&plain, "plain.json");
    assert!((390..=400).contains(&n), "{n}");
    assert_eq!(total(&plain, "again.json").2, text, "byte-identical rerun");
    // a 2 ms call before each of the ~200 time-critical requests (and a 1 ms return, which
    // overlaps its service) stretches the run by at least ~400 ms: the draws are the same
    let sys = synthetic_with(&dir, 0.5, 0.5, Some((2.0, 1.0)), 1);
    let (m, elapsed_sys, _) = total(&sys, "sys.json");
    assert!((390..=400).contains(&m), "{m}");
    assert!(elapsed_sys > elapsed + 300.0, "{elapsed} ms, with system calls {elapsed_sys} ms");
}

/// cheetah9LP behind a type-3 controller (0.1 ms a message, 5 us a sector of DMA) with a
/// cache of `cache_size` sectors in lines of 8, write-back, and one closed generator of
/// 8-sector requests over the first 4096 sectors, reads with probability `p_read`.
fn cached(dir: &Path, cache_size: u32, p_read: f64) -> PathBuf {
    let cache = format!(
        "disksim_cachemem {{
      Cache size = {cache_size}, SLRU segments = [ 1.0 ], Line size = 8, Bit granularity = 1,
      Lock granularity = 8, Shared read locks = 1, Max request size = 0,
      Replacement policy = 2, Allocation policy = 0, Write scheme = 3, Flush policy = 0,
      Flush period = 0.0, Flush idle delay = -1.0, Flush max line cluster = 1,
      Read prefetch type = 3, Write prefetch type = 3, Line-by-line fetches = 0, Max gather = 0
   }}"
    );
    behind_controller(dir, &cache, &["disk0"], &format!("cached-{cache_size}-{p_read}.parv"), p_read)
}

/// The workload of [`cached`] on `disks` (cheetah9LP drives behind the one controller, the
/// generator addressing the first) with `cache` as the controller's cache.
fn behind_controller(dir: &Path, cache: &str, disks: &[&str], name: &str, p_read: f64) -> PathBuf {
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim-valid/cheetah9LP.diskspecs");
    let attached: Vec<String> = disks.iter().map(|d| format!("disksim_disk {d} []")).collect();
    let text = format!(
        "source {}
disksim_bus BUS {{ type = 1, Arbitration type = 1, Arbitration time = 0.0,
   Read block transfer time = 0.0, Write block transfer time = 0.0, Print stats = 0 }}
disksim_ctlr CTLR {{ type = 3, Scale for delays = 0.2, Bulk sector transfer time = 0.005,
   Maximum queue length = 4, Print stats = 0,
   Scheduler = disksim_ioqueue {{ Scheduling policy = 1 }},
   Max per-disk pending count = 1,
   Cache = {cache} }}
instantiate [ bus0 .. bus1 ] as BUS
instantiate [ ctlr0 ] as CTLR
instantiate [ {names} ] as SEAGATE_ST39102LW_validate
topology disksim_iodriver driver0 [
   disksim_bus bus0 [ disksim_ctlr ctlr0 [ disksim_bus bus1 [ {attached} ] ] ]
]
disksim_global Global {{ Init Seed = 7, Real Seed = 7, Stat definition file = statdefs }}
disksim_pf Proc {{ Number of processors = 1, Process-Flow Time Scale = 1.0 }}
disksim_synthio Synthio {{
   Number of I/O requests to generate = 2000, Maximum time of trace generated = 10000.0,
   System call/return with each request = 0, Think time from call to request = 0.0,
   Think time from request to return = 0.0,
   Generators = [ disksim_synthgen {{
       Storage capacity per device = 4096, devices = [ disk0 ], Blocking factor = 8,
       Probability of sequential access = 0.0, Probability of local access = 0.0,
       Probability of read access = {p_read}, Probability of time-critical request = 1.0,
       Probability of time-limited request = 0.0, Time-limited think times = [ normal, 30.0, 100.0 ],
       General inter-arrival times = [ exponential, 0.0, 1.0 ],
       Sequential inter-arrival times = [ exponential, 0.0, 1.0 ],
       Local inter-arrival times = [ exponential, 0.0, 1.0 ],
       Local distances = [ normal, 0.0, 40000.0 ], Sizes = [ exponential, 0.0, 8.0 ]
   }} ]
}}
",
        specs.canonicalize().unwrap().display(),
        names = disks.join(", "),
        attached = attached.join(", ")
    );
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_controller_cache_serves_a_region_it_holds_at_memory_speed() {
    let dir = scratch("ctlr");
    let run = |parv: &Path, name: &str| -> serde_json::Value { json(&simulate_json(parv, &dir.join(name))) };
    let mean =
        |v: &serde_json::Value, d: &str| v["runs"][0]["jobs"][0][d]["clat_ns"]["mean"].as_f64().unwrap();
    // reads over 512 lines, a cache of 1024: every line is filled once at most, then hits
    let v = run(&cached(&dir, 8192, 1.0), "reads.json");
    let c = &v["runs"][0]["controller_cache"];
    let count = |k: &str| c[k].as_u64().unwrap();
    let (reads, hits, fills) = (count("reads"), count("read_hits"), count("fills"));
    // each sector of the region is fetched once at most; every miss fetched something
    assert!(reads >= 1990 && count("fill_sectors") <= 4096 && reads - hits <= fills, "{c}");
    assert!(hits as f64 > 0.6 * reads as f64, "{c}");
    let cached_ms = mean(&v, "read") / 1e6;
    // without a cache (size 0) every read goes to the disk
    let v = run(&cached(&dir, 0, 1.0), "none.json");
    assert!(v["runs"][0]["controller_cache"]["reads"].as_u64() == Some(0));
    let disk_ms = mean(&v, "read") / 1e6;
    assert!(cached_ms < 0.35 * disk_ms, "{cached_ms} ms cached, {disk_ms} ms through");
    // write-back: every write completes after its DMA (5 us a sector) and the completion
    // message (0.1 ms), and none reaches the disk
    let csv = dir.join("writes.csv");
    let writes = simulate_json_with(
        &cached(&dir, 8192, 0.0),
        &dir.join("writes.json"),
        "noop",
        &["--per-request", csv.to_str().unwrap()],
    );
    let rows: Vec<(u64, u64)> = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[5].parse().unwrap(), f[8].parse().unwrap())
        })
        .collect();
    assert!(rows.len() >= 1990, "{}", rows.len());
    for (bytes, latency) in rows {
        assert_eq!(latency, 100_000 + bytes / 512 * 5_000, "{bytes} bytes");
    }
    assert_eq!(json(&writes)["runs"][0]["controller_cache"]["destages"].as_u64(), Some(0));
    // the same run twice: byte-identical
    let again = simulate_json(&cached(&dir, 8192, 1.0), &dir.join("again.json"));
    assert_eq!(again, std::fs::read_to_string(dir.join("reads.json")).unwrap());
}

/// Three different drives (the reference files, sourced), one closed generator drawing its
/// device among them: DiskSim's "3 different disks" kind of system.
#[test]
fn generators_over_several_devices_run_each_device_on_its_own() {
    let dir = scratch("three");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim-valid").canonicalize().unwrap();
    let gen = "disksim_synthgen {
       Storage capacity per device = 4000000, devices = [ disk0, disk1, disk2 ], Blocking factor = 8,
       Probability of sequential access = 0.0, Probability of local access = 0.0,
       Probability of read access = 1.0, Probability of time-critical request = 1.0,
       Probability of time-limited request = 0.0, Time-limited think times = [ normal, 30.0, 100.0 ],
       General inter-arrival times = [ exponential, 0.0, 5.0 ],
       Sequential inter-arrival times = [ exponential, 0.0, 5.0 ],
       Local inter-arrival times = [ exponential, 0.0, 5.0 ],
       Local distances = [ normal, 0.0, 40000.0 ], Sizes = [ exponential, 0.0, 8.0 ] }";
    let text = format!(
        "source {d}/cheetah9LP.diskspecs
source {d}/ibm18es.diskspecs
source {d}/barracuda.diskspecs
instantiate [ disk0 ] as SEAGATE_ST39102LW_validate
instantiate [ disk1 ] as IBM_DNES-309170W_validate
instantiate [ disk2 ] as SEAGATE_ST32171W
disksim_global Global {{ Init Seed = 3, Real Seed = 3, Stat definition file = statdefs }}
disksim_pf Proc {{ Number of processors = 1, Process-Flow Time Scale = 1.0 }}
disksim_synthio Synthio {{
   Number of I/O requests to generate = 600, Maximum time of trace generated = 10000.0,
   System call/return with each request = 0, Think time from call to request = 0.0,
   Think time from request to return = 0.0, Generators = [ {gen} ]
}}
",
        d = data.display()
    );
    let parv = dir.join("three.parv");
    std::fs::write(&parv, text).unwrap();
    let v = json(&simulate_json(&parv, &dir.join("three.json")));
    let run = &v["runs"][0];
    let members = run["members"].as_array().expect("a section per device");
    let per: Vec<u64> = members.iter().map(|m| m["device"]["requests"].as_u64().unwrap()).collect();
    // a third each, give or take: each device drawn uniformly, 600 requests
    assert_eq!(per.len(), 3);
    assert!(per.iter().all(|&n| (140..=260).contains(&n)), "{per:?}");
    assert_eq!(per.iter().sum::<u64>(), run["device"]["requests"].as_u64().unwrap());
    assert_eq!(run["disk"].as_str().unwrap().matches(", ").count(), 2, "{}", run["disk"]);
    // one device named for the whole workload: the generator's three devices are refused
    let o = headway(&["simulate", parv.to_str().unwrap(), "--disk", &format!("{}#disk1", parv.display())]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("several devices"));
}

#[test]
fn a_cache_on_a_second_device_serves_hits_from_it_and_copies_misses_to_it() {
    let dir = scratch("cachedev");
    // cheetah9LP's 17918387 sectors cached on a second cheetah9LP, write-back, no idle
    // write-backs
    let cache = "disksim_cachedev { Cache size = 17918387, Max request size = 0, Write scheme = 3,
      Flush policy = 0, Flush period = 0.0, Flush idle delay = 0.0,
      Cache device = disk1, Cached device = disk0 }";
    let parv = behind_controller(&dir, cache, &["disk0", "disk1"], "dev.parv", 1.0);
    let v = json(&simulate_json(&parv, &dir.join("dev.json")));
    let run = &v["runs"][0];
    let c = &run["controller_cache"];
    let count = |k: &str| c[k].as_u64().unwrap();
    let members: Vec<u64> = run["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["device"]["requests"].as_u64().unwrap())
        .collect();
    // every miss is read from the drive and copied to the cache device; hits come from it
    assert_eq!(count("reads") - count("read_hits"), count("fills"), "{c}");
    assert_eq!(members, [count("fills"), count("read_hits") + count("fills")], "{c}");
    assert!(count("read_hits") > count("reads") / 2, "{c}");
}

/// DiskSim 4.0's `valid/synthopen.parv`, its synthetic blocks as DiskSim ships them, on the
/// one drive its run uses: three open generators on one CPU, of which only the last one's
/// process runs (the others wait in the dispatch queue), on cheetah9LP (`disk2`) behind a
/// bus of 0.0512 ms a block. (The two generators that never run address the same drive
/// here, within its capacity: they only draw a first request, after the one that runs.)
/// DiskSim's `synthopen.outv`: 9,999 requests handled, mean response 10.937386 ms; reads
/// 6,680 at 13.584495 ms, writes 3,319 at 5.609672 ms. Its driver queue is CYCLE_LBN, as
/// `disksim` reads it from the file.
#[test]
fn disksims_open_synthetic_run_answers_as_disksim_did() {
    let dir = scratch("synthopen");
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim-valid/cheetah9LP.diskspecs");
    let gen = |capacity: u64| {
        format!(
            "disksim_synthgen {{
     Storage capacity per device = {capacity}, devices = [ disk2 ], Blocking factor = 8,
     Probability of sequential access = 0.0, Probability of local access = 0.0,
     Probability of read access = 0.66, Probability of time-critical request = 0.0,
     Probability of time-limited request = 0.0,
     Time-limited think times = [ normal, 30.0, 100.0 ],
     General inter-arrival times = [ exponential, 0.0, 25.0 ],
     Sequential inter-arrival times = [ normal, 0.0, 0.0 ],
     Local inter-arrival times = [ exponential, 0.0, 0.0 ],
     Local distances = [ normal, 0.0, 40000.0 ],
     Sizes = [ exponential, 0.0, 8.0 ] }}"
        )
    };
    let text = format!(
        "disksim_global Global {{ Init Seed = 42, Real Seed = 42, Stat definition file = statdefs }}
disksim_iodriver DRIVER0 {{ type = 1, Constant access time = 0.0,
  Scheduler = disksim_ioqueue {{ Scheduling policy = 3 }}, Use queueing in subsystem = 1 }}
disksim_bus BUS0 {{ type = 1, Arbitration type = 1, Arbitration time = 0.0,
  Read block transfer time = 0.0, Write block transfer time = 0.0, Print stats = 0 }}
disksim_bus BUS1 {{ type = 1, Arbitration type = 1, Arbitration time = 0.0,
  Read block transfer time = 0.0512, Write block transfer time = 0.0512, Print stats = 1 }}
disksim_ctlr CTLR0 {{ type = 1, Scale for delays = 0.0, Bulk sector transfer time = 0.0,
  Maximum queue length = 0, Print stats = 1 }}
source {}
instantiate [ bus0 ] as BUS0
instantiate [ bus1 ] as BUS1
instantiate [ disk2 ] as SEAGATE_ST39102LW_validate
instantiate [ driver0 ] as DRIVER0
instantiate [ ctlr0 ] as CTLR0
topology disksim_iodriver driver0 [
  disksim_bus bus0 [ disksim_ctlr ctlr0 [ disksim_bus bus1 [ disksim_disk disk2 [] ] ] ] ]
disksim_pf Proc {{ Number of processors = 1, Process-Flow Time Scale = 1.0 }}
disksim_synthio Synthio {{
   Number of I/O requests to generate = 10000, Maximum time of trace generated = 1000.0,
   System call/return with each request = 0, Think time from call to request = 0.0,
   Think time from request to return = 0.0,
   Generators = [ {}, {}, {} ]
}}
",
        specs.canonicalize().unwrap().display(),
        gen(17783240),
        gen(17783240),
        gen(17783240)
    );
    let parv = dir.join("synthopen.parv");
    std::fs::write(&parv, text).unwrap();
    let v = json(&simulate_json_with(&parv, &dir.join("synthopen.json"), "disksim", &[]));
    let jobs = v["runs"][0]["jobs"].as_array().unwrap();
    let (mut n, mut sum) = ([0u64; 2], [0f64; 2]);
    for j in jobs {
        for (k, d) in ["read", "write"].iter().enumerate() {
            let ios = j[d]["total_ios"].as_u64().unwrap();
            n[k] += ios;
            sum[k] += ios as f64 * j[d]["clat_ns"]["mean"].as_f64().unwrap_or(0.0) / 1e6;
        }
    }
    // the same requests, counted as DiskSim counts them (the one in flight at the stop
    // abandoned)
    assert_eq!(n, [6680, 3319]);
    // DiskSim's means, each within 0.5%
    let within = |got: f64, want: f64| (got / want - 1.0).abs() < 0.005;
    let (read, write, all) = (sum[0] / 6680.0, sum[1] / 3319.0, (sum[0] + sum[1]) / 9999.0);
    assert!(within(all, 10.937386), "mean {all} ms, DiskSim's 10.937386");
    assert!(within(read, 13.584495), "reads {read} ms, DiskSim's 13.584495");
    assert!(within(write, 5.609672), "writes {write} ms, DiskSim's 5.609672");
}

#[test]
fn a_trace_replays_through_the_controller_cache() {
    let dir = scratch("ctlr-replay");
    // 100 reads of 8 sectors cycling over 10 places, 20 ms apart: after the first ten,
    // every one is in the cache
    let mut t = String::new();
    for i in 0..100u64 {
        t.push_str(&format!("{}.000000 0 {} 8 1\n", i * 20, (i % 10) * 1000));
    }
    let trace = dir.join("loop.trace");
    std::fs::write(&trace, t).unwrap();
    let replay = |parv: &Path, name: &str| -> serde_json::Value {
        let out = dir.join(name);
        ok(&headway(&[
            "replay",
            trace.to_str().unwrap(),
            "--format",
            "disksim",
            "--disk",
            parv.to_str().unwrap(),
            "--scheduler",
            "noop",
            "--quiet",
            "--json",
            out.to_str().unwrap(),
        ]));
        json(&std::fs::read_to_string(out).unwrap())
    };
    let v = replay(&cached(&dir, 8192, 1.0), "cached.json");
    let c = &v["runs"][0]["controller_cache"];
    assert_eq!(
        (c["reads"].as_u64(), c["read_hits"].as_u64(), c["fills"].as_u64()),
        (Some(100), Some(90), Some(10))
    );
    // a hit costs the DMA (40 us) and the completion message (0.1 ms); the ten misses a
    // disk access each
    let none = replay(&cached(&dir, 0, 1.0), "none.json");
    let mean =
        |v: &serde_json::Value| v["runs"][0]["jobs"][0]["read"]["clat_ns"]["mean"].as_f64().unwrap() / 1e6;
    assert!(mean(&v) < 0.3 * mean(&none), "{} ms cached, {} ms through", mean(&v), mean(&none));
}

/// DiskSim 4.0's `valid/synthsimpledisk.parv` as shipped (`data/disksim4-dist/`): five
/// generators mixing time-critical (0.2), time-limited (0.3) and background requests on five
/// CPUs, on a `disksim_simpledisk` of 10 ms a request, behind a driver queue with two
/// subqueues (`Scheduling priority scheme` 1) and timeouts of 30 ticks. With no
/// `--scheduler`, headway runs the file's own driver queue (`disksim`). DiskSim's
/// `synthsimpledisk.outv`: 10,003 requests issued, 6,633 of them reads, 10,002 completed
/// (2,031 time-critical at 12.520381 ms, 2,987 time-limited at 12.746550 ms, 4,984
/// background at 14.775391 ms: 13.711596 ms on average). The device's time is fixed, so
/// this checks the process flow and the driver queue alone.
#[test]
fn disksims_simpledisk_run_answers_as_disksim_did() {
    let dir = scratch("synthsimpledisk");
    let parv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim4-dist/synthsimpledisk.parv");
    let out = dir.join("out.json");
    ok(&headway(&["simulate", parv.to_str().unwrap(), "--json", out.to_str().unwrap()]));
    let v = json(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(v["runs"][0]["scheduler"], "disksim");
    let (n, mean) = answered(&v);
    // 10,002 completed; the one in flight at the stop is DiskSim's 6,633rd read
    assert_eq!(n, [6632, 3370]);
    assert!((mean / 13.711596 - 1.0).abs() < 0.001, "mean {mean} ms, DiskSim's 13.711596");
    // CYCLE_LBN in one queue, without the priority subqueue and the timeouts, is another run
    let (_, cscan) = answered(&json(&simulate_json_with(&parv, &dir.join("cscan.json"), "cscan", &[])));
    assert!((cscan / 13.711596 - 1.0).abs() > 0.03, "cscan {cscan} ms");
}

/// Requests answered, reads and writes, and their mean response (ms) in a run's JSON.
fn answered(v: &serde_json::Value) -> ([u64; 2], f64) {
    let [(reads, read_ms), (writes, write_ms)] = answered_by_direction(v);
    let sum = reads as f64 * read_ms + writes as f64 * write_ms;
    ([reads, writes], sum / (reads + writes) as f64)
}

/// The reads and the writes the first run answered, each with its mean response in ms.
fn answered_by_direction(v: &serde_json::Value) -> [(u64, f64); 2] {
    let mut sums = [(0u64, 0f64); 2];
    for j in v["runs"][0]["jobs"].as_array().unwrap() {
        for (k, d) in ["read", "write"].iter().enumerate() {
            let ios = j[d]["total_ios"].as_u64().unwrap();
            sums[k].0 += ios;
            sums[k].1 += ios as f64 * j[d]["clat_ns"]["mean"].as_f64().unwrap_or(0.0) / 1e6;
        }
    }
    sums.map(|(n, sum)| (n, if n == 0 { 0.0 } else { sum / n as f64 }))
}

/// DiskSim 4.0's experiments on the HP C3323A (`data/disksim4-dist/`), each run as shipped
/// with its own driver queue, against DiskSim's `.outv`. The drive's model names a seek
/// curve, `hp_c3323a.seek`, that DiskSim's distribution lacks; DiskSim's own
/// `hp_c3323a_validate.seek` (the validated model of the same drive) stands in for it, so the
/// means may differ by what the two curves differ by (0.5% allowed). Requests answered, and
/// where DiskSim's statistics give them reads and writes, are the process flow's and the
/// queues': they must match exactly.
#[test]
fn disksims_hp_c3323a_experiments_answer_as_disksim_did() {
    let dir = with_c3323a_seek("hp-c3323a");
    // (experiment, DiskSim's reads and writes answered or None for their total, its mean)
    for (name, counts, total, mean) in [
        ("synthclosed", None, 10_000, 87.819135),
        ("synthmixed", Some([6572, 3431]), 10_003, 22.086628),
        ("synthcachemem", Some([7255, 3747]), 11_002, 24.651367),
        ("synthraid5", None, 10_001, 35.748505),
        // three drives, of which only the last generator's (cheetah9LP) runs; the first
        // is atlas10k, with zero-latency reads and writes, which now loads
        ("3disks", None, 9_999, 10.937386),
    ] {
        let out = dir.join(format!("{name}.json"));
        ok(&headway(&[
            "simulate",
            dir.join(format!("{name}.parv")).to_str().unwrap(),
            "--json",
            out.to_str().unwrap(),
        ]));
        let (n, got) = answered(&json(&std::fs::read_to_string(&out).unwrap()));
        assert_eq!(n[0] + n[1], total, "{name}: {n:?}");
        if let Some(c) = counts {
            assert_eq!(n, c, "{name}");
        }
        assert!((got / mean - 1.0).abs() < 0.005, "{name}: mean {got} ms, DiskSim's {mean}");
    }
}

/// A scratch copy of `data/disksim4-dist` with `hp_c3323a_validate.seek` standing in for the
/// `hp_c3323a.seek` the distribution lacks.
fn with_c3323a_seek(name: &str) -> PathBuf {
    let dir = scratch(name);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim4-dist");
    for e in std::fs::read_dir(&data).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
    }
    std::fs::copy(data.join("hp_c3323a_validate.seek"), dir.join("hp_c3323a.seek")).unwrap();
    dir
}

/// DiskSim 4.0's `syntharrays`: one generator over `disk0 .. disk3`, which DiskSim maps by
/// number to its four array logorgs (RAID 0 by 128 sectors, a concatenation, RAID 4 and
/// RAID 5, four HP C3323A each). Held against its `.outv`: the requests answered, each
/// array's share (DiskSim counts the 7 still in flight at the end as well), every disk's
/// reads and writes (DiskSim's per-device figures of disks 0-12; one in flight allowed),
/// and the response times, overall and per array, within 0.3% (each array's four disks
/// share one exclusive bus: without the bus's waits the parity arrays answered 11-13%
/// sooner than DiskSim; with the member requests asking for it in member order rather
/// than in the order DiskSim's driver sends them, 0.6-0.75% sooner). A drive queue deeper
/// than one command is refused on shared buses.
#[test]
fn disksims_syntharrays_runs_its_four_arrays_as_disksim_did() {
    let dir = with_c3323a_seek("syntharrays");
    let (out, csv) = (dir.join("out.json"), dir.join("requests.csv"));
    let parv = dir.join("syntharrays.parv");
    let args = ["simulate", parv.to_str().unwrap(), "--json", out.to_str().unwrap()];
    ok(&headway(&[&args[..], &["--per-request", csv.to_str().unwrap()]].concat()));
    let v = json(&std::fs::read_to_string(&out).unwrap());
    let (n, mean) = answered(&v);
    assert_eq!(n, [6688, 3305], "DiskSim's non-critical reads and writes");
    assert!((mean / 34.272035 - 1.0).abs() < 0.003, "mean {mean} ms, DiskSim's 34.272035");
    // per array (the device is above bit 40 of the sector): requests and mean response
    let (mut count, mut sum) = ([0u64; 4], [0f64; 4]);
    let text = std::fs::read_to_string(&csv).unwrap();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let org = ((f[4].parse::<u64>().unwrap() / 512) >> 40) as usize;
        count[org] += 1;
        sum[org] += f[8].parse::<f64>().unwrap() / 1e6;
    }
    let disksim = [(2435, 21.496245), (2543, 25.299331), (2477, 44.778775), (2545, 45.239715)];
    for (i, (want, ms)) in disksim.into_iter().enumerate() {
        assert!(count[i] <= want, "logorg {i}: {} answered, DiskSim's {want} with those in flight", count[i]);
        let got = sum[i] / count[i] as f64;
        assert!((got / ms - 1.0).abs() < 0.003, "logorg {i}: {got} ms, DiskSim's {ms}");
    }
    assert_eq!(disksim.iter().map(|d| d.0).sum::<u64>() - count.iter().sum::<u64>(), 7);
    // every disk's reads and writes: the arrays' plans, parity disk 11 the busiest
    let disksim_disks = [
        (442, 199),
        (435, 209),
        (419, 202),
        (390, 225),
        (588, 262),
        (545, 268),
        (588, 292),
        (0, 0),
        (876, 313),
        (848, 274),
        (833, 279),
        (856, 855),
        (915, 445),
    ];
    let members = v["runs"][0]["members"].as_array().expect("a section per disk");
    assert_eq!(members.len(), 16);
    for (m, (r, w)) in members.iter().zip(disksim_disks) {
        let out = &m["device"]["requests_out"];
        let (gr, gw) = (out["reads"].as_u64().unwrap(), out["writes"].as_u64().unwrap());
        assert!(
            gr.abs_diff(r) <= 1 && gw.abs_diff(w) <= 1,
            "disk {}: {gr} reads, {gw} writes; DiskSim's {r}, {w}",
            m["member"]
        );
    }
    let o = headway(&[&args[..2], &["--queue-depth", "4"]].concat());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("share a bus"), "{e}");
}

/// DiskSim 4.0's `synthcachedev`: a caching controller whose cache is a second disk on
/// the drive's exclusive bus. Held against its `.outv`: 10,003 requests answered (one
/// more in flight), the mean response (28.939379 ms), the reads' and the writes' (DiskSim
/// splits them into critical and not: 1294 reads at 27.410200 ms and 5280 at 26.667866,
/// 691 writes at 33.658817 and 2738 at 32.851438), each within 0.5%, and the cache's read
/// hits and fills (154 and 6420), within 2. The controller sends a fill of what the drive
/// read before the drive's next request, and the two ask for the bus in that order: with
/// the drive's request first, reads answered 4.5% too soon and the mean 3.4%.
#[test]
fn disksims_synthcachedev_answers_as_disksim_did() {
    let dir = with_c3323a_seek("synthcachedev");
    let out = dir.join("out.json");
    ok(&headway(&[
        "simulate",
        dir.join("synthcachedev.parv").to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
    ]));
    let v = json(&std::fs::read_to_string(&out).unwrap());
    let (n, mean) = answered(&v);
    assert!((10_002..=10_004).contains(&(n[0] + n[1])), "{n:?}");
    let near = |got: f64, want: f64, what: &str| {
        assert!((got / want - 1.0).abs() < 0.005, "{what}: {got} ms, DiskSim's {want} ms");
    };
    near(mean, 28.939379, "mean");
    let [(_, reads), (_, writes)] = answered_by_direction(&v);
    near(reads, (1294.0 * 27.410200 + 5280.0 * 26.667866) / 6574.0, "reads");
    near(writes, (691.0 * 33.658817 + 2738.0 * 32.851438) / 3429.0, "writes");
    let cache = &v["runs"][0]["controller_cache"];
    let within = |key: &str, want: i64| {
        let got = cache[key].as_i64().unwrap();
        assert!((got - want).abs() <= 2, "{key}: {got}, DiskSim's {want}");
    };
    within("read_hits", 154);
    within("fills", 6420);
}

/// The file's driver queue is the default, and `--set` overrides what the file sets: the
/// same synthsimpledisk run with `disksim_priority_scheme=0` (one queue, its timeouts kept)
/// is another run, and naming `disksim` explicitly is the default run.
#[test]
fn the_files_driver_queue_is_the_default_and_set_overrides_it() {
    let dir = scratch("queue-override");
    let parv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim4-dist/synthsimpledisk.parv");
    let run = |name: &str, extra: &[&str]| {
        let out = dir.join(format!("{name}.json"));
        let mut args = vec!["simulate", parv.to_str().unwrap(), "--json", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        ok(&headway(&args));
        answered(&json(&std::fs::read_to_string(&out).unwrap())).1
    };
    let default = run("default", &[]);
    assert_eq!(run("named", &["--scheduler", "disksim"]), default);
    let one_queue = run("one-queue", &["--scheduler", "disksim", "--set", "disksim_priority_scheme=0"]);
    assert!((one_queue / default - 1.0).abs() > 0.01, "{one_queue} ms against {default} ms");
    // a setting the file's queue does not have is still an error
    let o = headway(&["simulate", parv.to_str().unwrap(), "--set", "disksim_policy=9"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("disksim_policy"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

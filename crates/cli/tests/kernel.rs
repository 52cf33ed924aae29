//! The `stream` elevator (kernel/, issue 40) in TCG guests of Debian's cloud kernels, Linux
//! 6.1 and 6.12, on the emulated WD5000AAKS behind `headway serve`: fio with crc32c
//! verification (mixed reads and writes, several jobs, iodepth 1 and 16, direct and buffered,
//! ext4), `rmmod` refused while a disk uses it, its counters' invariants on a quiet queue,
//! unloaded and loaded again, a clean dmesg (experiments/lab/kernel-verify.toml); and the
//! scheduler switched back and forth under a verifying fio on a two-queue disk.
//!
//! These tests need what the lab needs (qemu-system-x86, busybox-static, fio, Debian's
//! kernel package lists: `make lab-deps`) and the module's build (`make kmod`, run by the lab
//! when its module is missing); without them they fail, saying what is missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("headway-kernel-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One guest at a time: TCG guests share two cores.
static ONE_GUEST: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_guest() -> std::sync::MutexGuard<'static, ()> {
    ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner())
}

/// `headway lab run SPEC` (text) in a new directory NAME, with the directory as its TMPDIR:
/// the run's results JSON and its one point's `results/` (the guest's files). Fails the test
/// if the run fails, with the lab's error (it quotes the guest's console).
fn lab(name: &str, spec: &str) -> (Value, PathBuf) {
    let dir = tmpdir(name);
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, spec).unwrap();
    let json = dir.join("r.json");
    let out = dir.join("out");
    let t0 = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_headway"))
        .args(["lab", "run", path.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(["--json", json.to_str().unwrap()])
        .env("TMPDIR", &dir)
        .output()
        .expect("headway runs");
    eprintln!("{name}: lab run {:.1} s", t0.elapsed().as_secs_f64());
    assert!(o.status.success(), "lab run {name} failed:\n{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let points: Vec<PathBuf> =
        std::fs::read_dir(out.join("points")).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(points.len(), 1, "{points:?}");
    (r, points[0].join("results"))
}

fn step_out(results: &Path, step: usize) -> String {
    std::fs::read_to_string(results.join(format!("workload{step}.out")))
        .unwrap_or_else(|e| panic!("workload{step}.out: {e}"))
}

/// The `counter NAME VALUE` lines a check step printed.
fn printed_counters(out: &str) -> BTreeMap<String, u64> {
    out.lines()
        .filter_map(|l| l.strip_prefix("counter "))
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (k.to_string(), v.trim().parse().unwrap())
        })
        .collect()
}

/// A verifying fio's normal output: every job ended without error, no block failed its check.
fn assert_fio_verified(out: &str, jobs: usize, what: &str) {
    let ok = out.lines().filter(|l| l.contains("err= 0:")).count();
    assert_eq!(ok, jobs, "{what}: jobs without error\n{out}");
    assert!(!out.contains("verify:") && !out.contains("bad magic"), "{what}:\n{out}");
}

/// The counters of a queue with nothing in it: every request inserted was dispatched or
/// merged into another, every one dispatched completed.
fn assert_quiet(c: &dyn Fn(&str) -> u64, what: &str) {
    assert!(c("inserted") > 0, "{what}: nothing inserted");
    assert_eq!(c("inserted"), c("dispatched") + c("merged"), "{what}: inserted = dispatched + merged");
    assert_eq!(c("dispatched"), c("completed"), "{what}: dispatched = completed");
    assert_eq!(c("in_flight"), 0, "{what}");
    assert_eq!(c("queued"), 0, "{what}");
    // a wait ends caught, expired, or cut short by another stream's request
    assert!(c("waits") >= c("waits_caught") + c("waits_expired"), "{what}: waits");
}

/// experiments/lab/kernel-verify.toml on guest kernel `flavour`, its release `release_prefix`.
fn verifies_and_unloads(flavour: &str, release_prefix: &str) {
    let _one = one_guest();
    let text = std::fs::read_to_string(repo().join("experiments/lab/kernel-verify.toml")).unwrap();
    assert!(text.contains("\nkernel = \"cloud\"\n"));
    let spec = text.replace("\nkernel = \"cloud\"\n", &format!("\nkernel = \"{flavour}\"\n"));
    let name = format!("verify-{flavour}");
    let (r, results) = lab(&name, &spec);
    let run = &r["runs"][0];
    let kernel = run["lab"]["kernel"].as_str().unwrap();
    assert!(kernel.starts_with(release_prefix), "{kernel}");
    assert_eq!(run["lab"]["guest_scheduler"], "stream");
    assert_eq!(std::fs::read_to_string(results.join("status")).unwrap().trim(), "ok");
    // requests merged into queued requests (the chained insert merge that freed a hashed
    // request before the fix: a BUG in elv_rqhash_find within seconds)
    let gaps = step_out(&results, 0);
    let merged: u64 = gaps
        .lines()
        .find_map(|l| l.strip_prefix("gaps: merged="))
        .unwrap_or_else(|| panic!("no merge count: {gaps}"))
        .trim()
        .parse()
        .unwrap();
    assert!(merged > 0, "{gaps}");
    // the two rounds of fio: six jobs each, all verified (fio exits non-zero otherwise,
    // which fails its step: this reads its report as well)
    assert_fio_verified(&step_out(&results, 1), 6, "first fio");
    assert_fio_verified(&step_out(&results, 5), 6, "second fio");
    // rmmod refused while the disk used stream
    let refused = step_out(&results, 2);
    assert!(refused.contains("refused, as it should be") && refused.contains("stream_iosched "), "{refused}");
    // the counters after the first fio (the guest checked them too, allowing for queued and
    // in_flight requests; after `sync` there were none)
    let first = printed_counters(&step_out(&results, 3));
    eprintln!("{name}: counters after the first fio: {first:?}");
    let c = |k: &str| *first.get(k).unwrap_or_else(|| panic!("no counter {k}: {first:?}"));
    assert_quiet(&c, "after the first fio");
    // the readers' streams were waited for, and the waits caught them (measured on 6.1 and
    // 6.12: 476 and 520 of 554 and 599 waits)
    assert!(c("waits_caught") > 0 && c("streams") > 0, "{first:?}");
    // unloaded with the disk on none, gone, loaded and selected again
    let unload = step_out(&results, 4);
    assert!(unload.contains("unloaded; offered: [none]"), "{unload}");
    assert!(unload.contains("loaded again and selected:") && unload.contains("[stream]"), "{unload}");
    let second = printed_counters(&step_out(&results, 6));
    eprintln!("{name}: counters after the second fio: {second:?}");
    // the reloaded module counted from zero: the second round only (about as many requests
    // as the first)
    assert!(second["inserted"] < first["inserted"] * 3 / 2, "{first:?} {second:?}");
    let dmesg = step_out(&results, 7);
    assert!(dmesg.contains("dmesg clean"), "{dmesg}");
    // the lab's listing of iosched/ after the unmount: the reloaded module's counters
    let g = &run["lab"]["guest_counters"];
    eprintln!("{name}: lab.guest_counters: {g}");
    let c = |k: &str| g[k].as_u64().unwrap_or_else(|| panic!("no counter {k}: {g}"));
    assert_quiet(&c, "lab.guest_counters");
    assert!(c("waits_caught") > 0 && c("streams") > 0, "{g}");
    assert!(c("inserted") >= second["inserted"], "the unmount's writes added: {g}");
    let _ = std::fs::remove_dir_all(results.ancestors().nth(4).unwrap());
}

#[test]
fn stream_elevator_on_linux_6_1_verifies_and_unloads() {
    verifies_and_unloads("cloud", "6.1.");
}

#[test]
fn stream_elevator_on_linux_6_12_verifies_and_unloads() {
    verifies_and_unloads("cloud-6.12", "6.12.");
}

/// experiments/lab/kernel-switch.toml: 200 switches (stream, none, mq-deadline, bfq) under a
/// verifying fio on a two-queue disk (two CPUs), then stream's counters and dmesg.
#[test]
fn stream_elevator_survives_200_switches_under_verifying_fio_on_two_queues() {
    let _one = one_guest();
    let spec = std::fs::read_to_string(repo().join("experiments/lab/kernel-switch.toml")).unwrap();
    let (r, results) = lab("switch", &spec);
    let run = &r["runs"][0];
    assert!(run["lab"]["kernel"].as_str().unwrap().starts_with("6.1."), "{}", run["lab"]["kernel"]);
    assert_eq!(std::fs::read_to_string(results.join("status")).unwrap().trim(), "ok");
    let setup = step_out(&results, 0);
    assert!(setup.contains("hw queues: 2 (0 1 )"), "{setup}");
    // every switch took, and fio verified every round while they went on (measured: three
    // and four rounds in about 30 s of switching)
    let switching = step_out(&results, 1);
    eprintln!("switch: {switching}");
    assert!(switching.contains("200 switches, last to") && switching.contains("[stream]"), "{switching}");
    let rounds: usize = switching
        .lines()
        .find_map(|l| l.strip_prefix("fio rounds: "))
        .unwrap_or_else(|| panic!("{switching}"))
        .parse()
        .unwrap();
    assert!(rounds >= 2, "{switching}");
    for r in 1..=rounds {
        assert!(switching.contains(&format!("round {r}: jobs without error: 4")), "{switching}");
    }
    assert_fio_verified(&step_out(&results, 2), 4, "fio under stream after the switches");
    let counters = printed_counters(&step_out(&results, 3));
    eprintln!("switch: counters after the last fio: {counters:?}");
    let c = |k: &str| *counters.get(k).unwrap_or_else(|| panic!("no counter {k}: {counters:?}"));
    assert_quiet(&c, "after the switches");
    assert!(c("waits_caught") > 0, "{counters:?}");
    let dmesg = step_out(&results, 4);
    assert!(dmesg.contains("dmesg clean"), "{dmesg}");
    let g = &run["lab"]["guest_counters"];
    let c = |k: &str| g[k].as_u64().unwrap_or_else(|| panic!("no counter {k}: {g}"));
    assert_quiet(&c, "lab.guest_counters");
    let _ = std::fs::remove_dir_all(results.ancestors().nth(4).unwrap());
}

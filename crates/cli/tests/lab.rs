//! `headway lab run` end to end with a real guest under QEMU (TCG: no KVM needed): boot,
//! mkfs, a small fio job, results parsed, the server's trace replayed in the simulator; a
//! guest that panics or hangs leaves no QEMU process and no socket behind and the error
//! quotes its console; a bad spec names the file, line and key.
//!
//! These tests need qemu-system-x86, busybox-static, fio and Debian's kernel package
//! lists (`make lab-deps` installs them); without them they fail, saying what is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn headway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headway")).args(args).output().expect("headway runs")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("headway-lab-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One guest at a time: the spread of repeats is measured, and TCG guests share two cores.
static ONE_GUEST: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_guest() -> std::sync::MutexGuard<'static, ()> {
    ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// QEMU processes whose command line mentions `needle`: (pid, command line).
fn qemu_pids(needle: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains("qemu-system") && cmd.contains(needle) {
                out.push((e.file_name().to_string_lossy().into_owned(), cmd));
            }
        }
    }
    out
}

fn qemu_processes(needle: &str) -> Vec<String> {
    qemu_pids(needle).into_iter().map(|(_, c)| c).collect()
}

/// Start `headway lab run` on a spec whose guest sleeps, wait for its QEMU, then call `act`
/// with the lab's pid and QEMU's; return the lab's output.
fn lab_with_running_guest(dir: &Path, act: impl FnOnce(u32, &str)) -> Output {
    let spec = step_spec(dir, "sleep 3600");
    let child = Command::new(env!("CARGO_BIN_EXE_headway"))
        .args(["lab", "run", spec.to_str().unwrap(), "--out", dir.join("out").to_str().unwrap()])
        .env("TMPDIR", dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let qemu = loop {
        if let Some((pid, _)) = qemu_pids(dir.to_str().unwrap()).into_iter().next() {
            break pid;
        }
        assert!(std::time::Instant::now() < until, "no QEMU started");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    // let the guest boot into its step
    std::thread::sleep(std::time::Duration::from_secs(2));
    act(child.id(), &qemu);
    child.wait_with_output().unwrap()
}

fn kill(sig: &str, pid: &str) {
    assert!(Command::new("kill").args([sig, pid]).status().unwrap().success());
}

#[test]
fn a_killed_guest_or_an_interrupted_lab_leaves_nothing_behind() {
    let _one = one_guest();
    // QEMU killed from outside
    let dir = tmpdir("killed");
    let o = lab_with_running_guest(&dir, |_, qemu| kill("-9", qemu));
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("stopped after") && e.contains("QEMU exit by signal"), "{e}");
    assert!(qemu_processes(dir.to_str().unwrap()).is_empty());
    assert_eq!(sockets_left(&dir), Vec::<PathBuf>::new());
    // the lab itself told to stop (SIGTERM, as Ctrl-C's SIGINT)
    let dir = tmpdir("interrupted");
    let o = lab_with_running_guest(&dir, |lab, _| kill("-TERM", &lab.to_string()));
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("interrupted"), "{e}");
    assert!(qemu_processes(dir.to_str().unwrap()).is_empty(), "QEMU killed");
    assert_eq!(sockets_left(&dir), Vec::<PathBuf>::new());
    for d in ["killed", "interrupted"] {
        let _ = std::fs::remove_dir_all(
            std::env::temp_dir().join(format!("headway-lab-test-{}-{d}", std::process::id())),
        );
    }
}

#[test]
fn smoke_spec_boots_makes_ext4_runs_fio_and_its_trace_replays() {
    let _one = one_guest();
    let out = tmpdir("smoke");
    let json = out.join("r.json");
    let svg = out.join("r.svg");
    let spec = repo().join("experiments/lab/smoke.toml");
    let o = headway(&[
        "lab",
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "lab run failed:\n{}", stderr(&o));
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.starts_with("<svg") && drawn.contains("<rect"), "a plot with bars");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("stream") && table.contains("ext4") && table.contains("tcg"), "{table}");
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let runs = r["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "repeat = 2");
    // repeated runs agree on throughput within 10% (measured: 1% over three runs on a quiet
    // machine; 6.5% once in CI, where the TCG guest's speed moves with the host's load)
    let spread = &r["repeats"][0];
    assert_eq!(spread["repeats"], 2);
    assert!(spread["spread"].as_f64().unwrap() <= 0.10, "{spread}");
    assert!(table.contains("repeats: throughput"), "{table}");
    let run = &runs[0];
    assert_eq!(run["scheduler"], "stream");
    assert_eq!(run["disk"], "wd5000aaks");
    assert_eq!(run["lab"]["fs"], "ext4");
    assert_eq!(run["lab"]["guest_scheduler"], "none");
    assert_eq!(run["lab"]["accel"], "tcg");
    assert!(run["lab"]["kernel"].as_str().unwrap().starts_with("6."), "{}", run["lab"]["kernel"]);
    // the guest's fio: 32 MiB written, read back, then 200 random 4 KiB reads
    let jobs = run["jobs"].as_array().unwrap();
    let job =
        |name: &str| jobs.iter().find(|j| j["jobname"] == name).unwrap_or_else(|| panic!("no job {name}"));
    assert_eq!(job("write")["write"]["io_bytes"], 32 << 20);
    assert_eq!(job("read")["read"]["io_bytes"], 32 << 20);
    assert_eq!(job("randread")["read"]["total_ios"], 200);
    assert!(run["fio"]["fio version"].as_str().unwrap().starts_with("fio-"));
    // the write reached the server: at least the 32 MiB of data
    let server = &run["server"][0];
    assert!(server["write_bytes"].as_u64().unwrap() >= 32 << 20, "{server}");
    // the random reads missed the page cache (fio invalidates it): the drive served them
    assert!(server["reads"].as_u64().unwrap() >= 200, "{server}");
    assert!(run["aggregate"]["bw_bytes"].as_u64().unwrap() > 0);
    assert!(run["device"]["requests"].as_u64().unwrap() > 0);
    // the trace's markers bound the workload: between them the server received exactly the
    // bytes the guest's disk counters say it sent (measured: equal to the byte)
    let w = &server["workload"];
    assert_eq!(w["marked"], true, "{w}");
    assert!(w["from_s"].as_f64().unwrap() < w["to_s"].as_f64().unwrap(), "{w}");
    for dir in ["read_bytes", "write_bytes"] {
        assert_eq!(w[dir], run["device"][dir], "{dir}: server {w}, guest {}", run["device"]);
    }
    // what reached the drive is what arrived, at most merged into fewer commands
    assert_eq!(
        w["drive_read_bytes"].as_u64().unwrap() + w["drive_write_bytes"].as_u64().unwrap(),
        w["read_bytes"].as_u64().unwrap() + w["write_bytes"].as_u64().unwrap(),
        "{w}"
    );
    assert!(w["drive_reads"].as_u64().unwrap() <= w["reads"].as_u64().unwrap(), "{w}");
    // the trace replays: one replayed request per data request the server received
    let trace = server["trace"].as_str().unwrap();
    let rj = out.join("replay.json");
    let o = headway(&[
        "replay",
        trace,
        "--format",
        "blkparse",
        "--scheduler",
        "noop",
        "--json",
        rj.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "replay failed:\n{}", stderr(&o));
    let rep: Value = serde_json::from_slice(&std::fs::read(&rj).unwrap()).unwrap();
    let replayed: u64 = rep["runs"][0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap())
        .sum();
    // the trace's data requests: Q events of reads and writes (WRITE_ZEROES is a write there,
    // and among the server's `others`); flushes (`FN`) and trims (`D`) are not replayed
    let captured = std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.get(5) == Some(&"Q") && f.get(6).is_some_and(|r| r.starts_with('R') || r.starts_with('W'))
        })
        .count() as u64;
    assert_eq!(replayed, captured, "replayed requests vs data requests captured");
    let served = server["reads"].as_u64().unwrap() + server["writes"].as_u64().unwrap();
    let others = server["others"].as_u64().unwrap();
    assert!((served..=served + others).contains(&captured), "{captured} captured, server: {server}");
    // The trace round trip: replayed open loop in the simulator on the same model, the mean
    // service time of the drive's commands is the emulated drive's within 5% (measured
    // -0.8% and -2.9% on two runs); the closed-loop replay is reported too.
    let replays = server["replay"].as_array().unwrap();
    let open = replays.iter().find(|c| c["mode"] == "open").unwrap();
    // the same commands, give or take a merge: whether two queued requests become one
    // command depends on timing the replay reproduces only closely (seen: 418 against 419)
    let (sim, emu) =
        (open["commands_simulated"].as_f64().unwrap(), open["commands_emulated"].as_f64().unwrap());
    assert!((sim - emu).abs() <= 0.02 * emu, "{open}");
    let diff = open["mean_service_diff"].as_f64().unwrap();
    assert!(
        diff.abs() <= 0.05,
        "open-loop replay's mean service time {:+.1}% off the emulated: {open}",
        diff * 100.0
    );
    assert!(replays.iter().any(|c| c["mode"] == "closed"));
    assert!(table.contains("replayed in") && table.contains("open ms"), "{table}");
    assert!(qemu_processes(out.to_str().unwrap()).is_empty());
    let _ = std::fs::remove_dir_all(&out);
}

/// A spec whose workload is one shell step, with a short timeout.
fn step_spec(dir: &Path, step: &str) -> PathBuf {
    let p = dir.join("spec.toml");
    std::fs::write(
        &p,
        format!(
            "[guest]\nfs = \"raw\"\nmemory_mb = 192\ntimeout_s = 25\naccel = \"tcg\"\n\
             [headway]\nschedulers = \"noop\"\nsize = \"1G\"\n[workload]\nsteps = [{step:?}]\n"
        ),
    )
    .unwrap();
    p
}

/// Run `headway lab run SPEC --out DIR` with DIR as its TMPDIR too (where its sockets go).
fn lab_in(dir: &Path, spec: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headway"))
        .args(["lab", "run", spec.to_str().unwrap(), "--out", dir.join("out").to_str().unwrap()])
        .env("TMPDIR", dir)
        .output()
        .expect("headway runs")
}

/// What a run left in its TMPDIR: the private socket directories (`headway-lab-*`).
fn sockets_left(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("headway-lab-"))
        .collect()
}

#[test]
fn a_guest_that_panics_hangs_or_fails_leaves_nothing_behind() {
    let _one = one_guest();
    // a kernel panic: panic=-1 and -no-reboot end QEMU
    let dir = tmpdir("panic");
    let o = lab_in(&dir, &step_spec(&dir, "echo c > /proc/sysrq-trigger"));
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("stopped after") && e.contains("without finishing"), "{e}");
    assert!(e.contains("guest console") && e.contains("Kernel panic"), "quotes the console: {e}");
    assert!(qemu_processes(dir.to_str().unwrap()).is_empty());
    assert_eq!(sockets_left(&dir), Vec::<PathBuf>::new());
    // a hang: killed at the spec's timeout
    let dir = tmpdir("hang");
    let o = lab_in(&dir, &step_spec(&dir, "sleep 3600"));
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("did not finish within guest.timeout_s = 25 s"), "{e}");
    assert!(e.contains("HEADWAY-STEP workload0"), "the console shows where it was: {e}");
    assert!(qemu_processes(dir.to_str().unwrap()).is_empty(), "QEMU killed");
    assert_eq!(sockets_left(&dir), Vec::<PathBuf>::new());
    // a failing step: its exit code and output
    let dir = tmpdir("fail");
    let o = lab_in(&dir, &step_spec(&dir, "echo no such thing >&2; exit 3"));
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("failed: workload0: 3") && e.contains("no such thing"), "{e}");
    assert!(qemu_processes(dir.to_str().unwrap()).is_empty());
    assert_eq!(sockets_left(&dir), Vec::<PathBuf>::new());
    for d in ["panic", "hang", "fail"] {
        let _ = std::fs::remove_dir_all(
            std::env::temp_dir().join(format!("headway-lab-test-{}-{d}", std::process::id())),
        );
    }
}

#[test]
fn a_bad_spec_names_file_line_and_key() {
    let dir = tmpdir("bad");
    let p = dir.join("bad.toml");
    std::fs::write(&p, "name = \"x\"\n[guest]\nguest_scheduler = \"cfq\"\n").unwrap();
    let o = headway(&["lab", "run", p.to_str().unwrap()]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("bad.toml:3: guest.guest_scheduler: unknown variant `cfq`"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `headway lab run` of the spec `text` in a new temporary directory NAME: the directory
/// and the results JSON. Fails the test if the run fails.
fn lab_run(name: &str, text: &str) -> (PathBuf, Value) {
    let dir = tmpdir(name);
    let spec = dir.join(format!("{name}.toml"));
    std::fs::write(&spec, text).unwrap();
    let json = dir.join("r.json");
    let o = headway(&[
        "lab",
        "run",
        spec.to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (dir, r)
}

#[test]
fn two_guests_share_one_server_each_on_its_own_part_of_the_disk() {
    let _one = one_guest();
    let job = repo().join("experiments/lab/smoke.fio");
    let (dir, r) = lab_run(
        "two",
        &format!(
            "[guest]\nfs = \"ext4\"\nguests = 2\nmemory_mb = 256\naccel = \"tcg\"\ntimeout_s = 300\n\
             [headway]\nschedulers = \"stream\"\nsize = \"8G\"\n[workload]\nfio = {:?}\n",
            job.to_str().unwrap()
        ),
    );
    let run = &r["runs"][0];
    assert_eq!(run["lab"]["guests"], 2);
    // each guest ran the whole job: its 32 MiB written and read back
    for g in ["g0", "g1"] {
        let job = |name: &str| {
            run["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|j| j["jobname"] == format!("{g}/{name}"))
                .cloned()
                .unwrap()
        };
        assert_eq!(job("write")["write"]["io_bytes"], 32 << 20, "{g}");
        assert_eq!(job("read")["read"]["io_bytes"], 32 << 20, "{g}");
    }
    assert_eq!(run["fio"].as_array().unwrap().len(), 2);
    // two connections, one per guest, each inside its own half of the 8 GiB export
    let half = (8u64 << 30) / 2 / 512;
    let mut sectors: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for l in std::fs::read_to_string(run["server"][0]["trace"].as_str().unwrap()).unwrap().lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f[5] != "Q" || f[6].starts_with('F') {
            continue;
        }
        let (s, n): (u64, u64) = (f[7].parse().unwrap(), f[9].parse().unwrap());
        let e = sectors.entry(f[10].to_string()).or_insert((u64::MAX, 0));
        *e = (e.0.min(s), e.1.max(s + n));
    }
    assert_eq!(sectors.len(), 2, "{sectors:?}");
    let mut spans: Vec<(u64, u64)> = sectors.values().copied().collect();
    spans.sort();
    assert!(spans[0].1 <= half && spans[1].0 >= half, "each guest in its own half: {spans:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The dd workload through a file system (htbs-fig4's runs): coreutils' dd in the guest,
/// its files laid out first, every reader's bytes and time read back.
#[test]
fn dd_readers_through_ext3_report_each_readers_bytes() {
    let _one = one_guest();
    let (_dir, r) = lab_run(
        "dd",
        "[guest]\nfs = \"ext3\"\nmemory_mb = 256\naccel = \"tcg\"\ntimeout_s = 300\n\
         [headway]\ndisk = \"hd080hj\"\nschedulers = \"htbs\"\ncontext = \"connection\"\nsize = \"2G\"\n\
         [workload.dd]\nreaders = 2\nsize = \"8M\"\nbs = \"4k\"\n",
    );
    let run = &r["runs"][0];
    let jobs = run["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    for j in jobs {
        assert_eq!(j["read"]["io_bytes"], 8 << 20, "{j}");
        assert!(j["job_runtime"].as_u64().unwrap() > 0, "{j}");
    }
    assert_eq!(run["aggregate"]["io_bytes"], 16 << 20);
    // the readers' files came from the disk (the page cache was dropped after laying out)
    let w = &run["server"][0]["workload"];
    assert_eq!(w["marked"], true, "{w}");
    assert!(w["read_bytes"].as_u64().unwrap() >= 16 << 20, "{w}");
}

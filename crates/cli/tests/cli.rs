//! The `headway` binary end to end: the results contract and errors on bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

fn headway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headway")).args(args).output().expect("headway runs")
}

fn tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headway-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const SMALL: &str =
    "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=4m\n[par]\nnumjobs=2\noffset_increment=51g\n";

fn fails_with(args: &[&str], needles: &[&str]) {
    let out = headway(args);
    assert!(!out.status.success(), "{args:?} should fail");
    let err = String::from_utf8_lossy(&out.stderr);
    for n in needles {
        assert!(err.contains(n), "{args:?}: stderr lacks `{n}`:\n{err}");
    }
}

#[test]
fn simulate_writes_the_json_contract() {
    let job = tmp("ok.fio", SMALL);
    let json = job.with_extension("json");
    let out = headway(&[
        "simulate",
        job.to_str().unwrap(),
        "--scheduler",
        "noop,stream",
        "--context",
        "none",
        "--set",
        "stream_threshold=4",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("noop") && table.contains("stream:deadline") && table.contains("MB/s"), "{table}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["headway_version"].is_string());
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        for k in ["scheduler", "disk", "context", "jobs", "aggregate", "device"] {
            assert!(!r[k].is_null(), "run lacks {k}");
        }
        assert_eq!(r["disk"], "wd5000aaks");
        assert_eq!(r["context"], "none");
        for k in ["io_bytes", "bw_bytes", "iops", "runtime_ns", "clat_ns"] {
            assert!(!r["aggregate"][k].is_null(), "aggregate lacks {k}");
        }
        for k in ["utilization", "idle_wait_ns", "seek_count", "mean_seek_distance_sectors"] {
            assert!(r["device"][k].is_number(), "device lacks {k}");
        }
        let jobs = r["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 2);
        let rd = &jobs[0]["read"];
        assert_eq!(jobs[0]["jobname"], "par");
        assert_eq!(rd["io_bytes"], 4 << 20);
        for k in ["bw_bytes", "iops", "runtime"] {
            assert!(rd[k].is_number(), "read lacks {k}");
        }
        assert!(rd["clat_ns"]["mean"].is_number());
        assert!(rd["clat_ns"]["percentile"]["50.000000"].is_number());
        assert!(rd["clat_ns"]["percentile"]["99.000000"].is_number());
    }
}

#[test]
fn same_seed_same_bytes() {
    let job = tmp("det.fio", "[j]\nrw=randread\nsize=1g\nio_size=1m\nioengine=libaio\niodepth=4\ndirect=1\n");
    let a = job.with_extension("a.json");
    let b = job.with_extension("b.json");
    for p in [&a, &b] {
        let out = headway(&[
            "simulate",
            job.to_str().unwrap(),
            "--seed",
            "9",
            "--quiet",
            "--json",
            p.to_str().unwrap(),
        ]);
        assert!(out.status.success());
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn unknown_job_option_names_file_line_and_option() {
    let job = tmp("bad-opt.fio", "[global]\nbs=4k\n[j]\nrw=read\nfrobnicate=3\n");
    fails_with(&["simulate", job.to_str().unwrap()], &["bad-opt.fio:5", "frobnicate"]);
}

#[test]
fn malformed_size_names_the_value() {
    let job = tmp("bad-size.fio", "[j]\nrw=read\nbs=4q\n");
    fails_with(&["simulate", job.to_str().unwrap()], &["bad-size.fio:3", "bs", "4q"]);
}

#[test]
fn missing_file_is_named() {
    fails_with(&["simulate", "/nonexistent/par-read.fio"], &["/nonexistent/par-read.fio"]);
}

#[test]
fn unknown_scheduler_disk_setting_and_context_are_errors() {
    let job = tmp("ok2.fio", SMALL);
    let j = job.to_str().unwrap();
    fails_with(&["simulate", j, "--scheduler", "noop,elevator9000"], &["elevator9000", "deadline"]);
    fails_with(&["simulate", j, "--scheduler", "stream:bogus"], &["bogus"]);
    fails_with(&["simulate", j, "--disk", "floppy"], &["floppy", "wd5000aaks"]);
    fails_with(&["simulate", j, "--set", "no_such_knob=1"], &["no_such_knob"]);
    fails_with(&["simulate", j, "--set", "read_expire=soon"], &["read_expire", "soon"]);
    fails_with(&["simulate", j, "--set", "fifo_batch=8", "--scheduler", "noop"], &["fifo_batch"]);
    fails_with(&["simulate", j, "--context", "pool:0"], &["--context", "pool:0"]);
    fails_with(&["simulate", j, "--context", "user"], &["--context", "user", "pool:N"]);
}

#[test]
fn listings_work() {
    let out = headway(&["disks"]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("wd5000aaks") && s.contains("hd080hj"), "{s}");
    let out = headway(&["disks", "wd5000aaks"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("7200"));
    let out = headway(&["schedulers"]);
    let s = String::from_utf8_lossy(&out.stdout);
    for n in ["noop", "deadline", "cscan", "sptf", "aged-sptf", "stream", "stream:cscan"] {
        assert!(s.lines().any(|l| l == n), "schedulers lacks {n}");
    }
    let out = headway(&["tunables"]);
    let s = String::from_utf8_lossy(&out.stdout);
    for n in [
        "read_expire",
        "write_expire",
        "writes_starved",
        "fifo_batch",
        "front_merges",
        "stream_threshold",
        "tolerance_factor",
        "stream_time_slice",
    ] {
        assert!(s.contains(n), "tunables lacks {n}");
    }
}

#[test]
fn drive_flags_reach_the_json_and_bad_values_name_the_flag() {
    let job =
        tmp("drive.fio", "[j]\nrw=randwrite\nsize=1g\nio_size=256k\nioengine=libaio\niodepth=8\ndirect=1\n");
    let j = job.to_str().unwrap();
    let json = job.with_extension("json");
    let args =
        ["--queue-depth", "32", "--drive-scheduler", "fcfs", "--write-cache", "back", "--scheduler", "noop"];
    let out = headway(&[&["simulate", j, "--quiet", "--json", json.to_str().unwrap()][..], &args].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let d = &v["runs"][0]["device"];
    assert_eq!((d["queue_depth"].as_u64(), d["drive_scheduler"].as_str()), (Some(32), Some("fcfs")));
    assert_eq!(d["write_cache"], "back");
    assert_eq!(d["requests_in"]["count"], 64);
    for k in ["queue_occupancy", "cache_hit_ratio", "destages", "write_cache_full_ns"] {
        assert!(d[k].is_number(), "device lacks {k}");
    }
    assert!(d["requests_out"]["mean_bytes"].is_number());
    fails_with(&["simulate", j, "--queue-depth", "0"], &["--queue-depth", "`0`", "1 to 64"]);
    fails_with(&["simulate", j, "--queue-depth", "65"], &["--queue-depth", "65"]);
    fails_with(&["simulate", j, "--queue-depth", "deep"], &["--queue-depth", "deep"]);
    fails_with(
        &["simulate", j, "--drive-scheduler", "elevator"],
        &["--drive-scheduler", "elevator", "fcfs or sptf"],
    );
    fails_with(&["simulate", j, "--write-cache", "around"], &["--write-cache", "around", "back or through"]);
    fails_with(&["bench", "--requests", "10", "--queue-depth", "100"], &["--queue-depth", "100"]);
}

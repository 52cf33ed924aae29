//! The `headway` binary end to end: the results contract and errors on bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

fn headway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headway")).args(args).output().expect("headway runs")
}

/// A fresh empty directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headway-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// headway run in `dir`.
fn headway_in(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headway")).args(args).current_dir(dir).output().expect("headway runs")
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
    fails_with(
        &["bench", "--requests", "10", "--array", "raid9:5:64k"],
        &["raid9:5:64k", "raid0, raid1, raid10, raid4 or raid5"],
    );
}

/// `bench --array`: the workload on an array, each scheduler's line counting array requests.
#[test]
fn bench_runs_on_an_array() {
    let o =
        headway(&["bench", "--requests", "4000", "--scheduler", "deadline,stream", "--array", "raid0:5:64k"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("on raid0:5:64k of wd5000aaks"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("stream:deadline")), "{out}");
}

/// A written 8 MiB file in the target directory (on a disk-backed filesystem, unlike a
/// tmpfs /tmp, so O_DIRECT usually works).
fn calibration_target(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("headway-cal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    let data: Vec<u8> = (0..8u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    std::fs::write(&p, data).unwrap();
    p
}

#[test]
fn calibrate_writes_a_curve_serve_can_load() {
    let target = calibration_target("disk.img");
    let curve = target.with_file_name("curve.json");
    let args = [
        "calibrate",
        target.to_str().unwrap(),
        "--out",
        curve.to_str().unwrap(),
        "--samples",
        "200",
        "--seed",
        "3",
    ];
    let mut out = headway(&args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() && err.contains("O_DIRECT") {
        assert!(err.contains("--buffered"), "the refusal names the way out: {err}");
        out = headway(&[&args[..], &["--buffered"]].concat());
    }
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("200 samples of 4096 bytes") && table.contains("time (ms)"), "{table}");
    assert!(table.contains(curve.to_str().unwrap()), "{table}");

    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&curve).unwrap()).unwrap();
    assert_eq!((v["format"].as_str(), v["version"].as_u64()), (Some("headway-service-curve"), Some(1)));
    assert_eq!((v["samples"].as_u64(), v["probe_bytes"].as_u64()), (Some(200), Some(4096)));
    assert_eq!(v["device_bytes"], 8 << 20);
    let knots: Vec<(u64, u64)> = serde_json::from_value(v["knots"].clone()).unwrap();
    assert!(!knots.is_empty());
    assert!(knots.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1), "monotone: {knots:?}");
    assert!(knots.iter().all(|k| k.0 <= (8 << 20) / 512 && k.1 > 0), "{knots:?}");
    let c = headway_nbd::calibrate::load(&curve).unwrap();
    assert_eq!(c.knots(), &knots[..]);
    for p in [target, curve] {
        std::fs::remove_file(p).unwrap();
    }
}

#[test]
fn calibrate_and_estimator_errors_name_the_file() {
    let target = calibration_target("small.img");
    let t = target.to_str().unwrap();
    let bad = target.with_file_name("bad-curve.json");
    std::fs::write(
        &bad,
        "{\"format\": \"headway-service-curve\", \"version\": 1, \"knots\": [[0, 5], [0, 6]]}",
    )
    .unwrap();
    let b = bad.to_str().unwrap();
    let sock = target.with_file_name("never.sock");
    let serve = |estimator: &str| {
        vec!["serve", "--export", t, "--unix", sock.to_str().unwrap(), "--estimator", estimator]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let args = serve(b);
    fails_with(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &["--estimator", b, "knot 1", "distance"],
    );
    assert!(!sock.exists(), "a bad curve stops the server before it listens");
    std::fs::write(&bad, "{\"format\": \"headway-service-curve\",\n \"version\": 1,\n \"knots\": [[0, 5]\n")
        .unwrap();
    let args = serve(b);
    fails_with(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[b, "line 4"]);
    let missing = target.with_file_name("missing.json");
    let args = serve(missing.to_str().unwrap());
    fails_with(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &[missing.to_str().unwrap(), "cannot read"],
    );

    fails_with(&["calibrate", "/nonexistent/headway.img"], &["/nonexistent/headway.img"]);
    fails_with(&["calibrate", t, "--probe-bytes", "1000", "--out", b], &["1000", "multiple of 4096"]);
    fails_with(&["calibrate", t, "--probe-bytes", "4q", "--out", b], &["--probe-bytes", "4q"]);
    for p in [target, bad] {
        std::fs::remove_file(p).unwrap();
    }
}

/// `headway serve --stats`: interval lines while serving and a total at exit that counts
/// exactly the requests a raw client sent.
#[test]
fn serve_stats_count_the_requests() {
    use std::io::{Read, Write};
    use std::time::Duration;

    let dir = calibration_target("stats.img").with_file_name("stats-dir");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (img, sock, log) = (dir.join("disk.img"), dir.join("nbd.sock"), dir.join("server.log"));
    let (mut child, mut s) =
        spawn_serve(&["--size", "8M", "--scheduler", "noop", "--stats", "200ms"], &img, &sock, &log);
    let mut greet = [0u8; 18];
    s.read_exact(&mut greet).unwrap();
    s.write_all(&3u32.to_be_bytes()).unwrap(); // fixed newstyle, no zeroes
    let mut opt = Vec::new();
    opt.extend_from_slice(&0x49484156454F5054u64.to_be_bytes());
    opt.extend_from_slice(&1u32.to_be_bytes()); // NBD_OPT_EXPORT_NAME
    opt.extend_from_slice(&0u32.to_be_bytes());
    s.write_all(&opt).unwrap();
    let mut info = [0u8; 10];
    s.read_exact(&mut info).unwrap();
    let req = |ty: u16, cookie: u64, offset: u64| {
        let mut r = Vec::with_capacity(28);
        r.extend_from_slice(&0x25609513u32.to_be_bytes());
        r.extend_from_slice(&0u16.to_be_bytes());
        r.extend_from_slice(&ty.to_be_bytes());
        r.extend_from_slice(&cookie.to_be_bytes());
        r.extend_from_slice(&offset.to_be_bytes());
        r.extend_from_slice(&4096u32.to_be_bytes());
        r
    };
    for i in 0..5u64 {
        s.write_all(&req(1, i, i * 4096)).unwrap();
        s.write_all(&[7u8; 4096]).unwrap();
        let mut rep = [0u8; 16];
        s.read_exact(&mut rep).unwrap();
    }
    for i in 0..10u64 {
        s.write_all(&req(0, 100 + i, (i % 5) * 4096)).unwrap();
        let mut rep = [0u8; 16 + 4096];
        s.read_exact(&mut rep).unwrap();
        assert!(rep[16..].iter().all(|&b| b == 7));
    }
    std::thread::sleep(Duration::from_millis(500));
    drop(s);
    let kill = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(kill.success());
    assert!(child.wait().unwrap().success(), "a clean exit on SIGTERM");
    let text = std::fs::read_to_string(&log).unwrap();
    let stats: Vec<&str> = text.lines().filter(|l| l.contains("headway::stats")).collect();
    assert!(stats.len() >= 3, "interval lines and a total: {text}");
    let total = stats.last().unwrap();
    assert!(
        total.contains("total") && total.contains("15 requests (10 reads, 5 writes, 0 other)"),
        "{total}"
    );
    assert!(total.contains("latency ms p50") && total.contains("idle-wait"), "{total}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sweep_writes_the_table_and_dask_points_to_python() {
    let dir = std::env::temp_dir().join(format!("headway-cli-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("small.fio"), SMALL.replace("size=4m", "size=256k")).unwrap();
    let sweep = dir.join("s.toml");
    std::fs::write(
        &sweep,
        "job = \"small.fio\"\n[grid]\nscheduler = [\"noop\", \"stream\"]\nseed = [1, 2]\n\
         context = [\"none\"]\nthinktime_us = [0, 50]\n",
    )
    .unwrap();
    let s = sweep.to_str().unwrap();
    let (one, many) = (dir.join("one.csv"), dir.join("many.csv"));
    for (out, threads) in [(&one, "1"), (&many, "4")] {
        let o = headway(&["sweep", s, "--threads", threads, "--out", out.to_str().unwrap(), "--quiet"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let table = std::fs::read_to_string(&one).unwrap();
    assert_eq!(table, std::fs::read_to_string(&many).unwrap());
    assert_eq!(table.lines().count(), 1 + 8 * 2);
    // the plot of the same sweep: one bar per scheduler and point
    let png = dir.join("s.png");
    let o =
        headway(&["sweep", s, "--out", one.to_str().unwrap(), "--plot", png.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.len() > 1000 && &bytes[1..4] == b"PNG", "{} bytes", bytes.len());
    assert_eq!(std::fs::read_to_string(&one).unwrap(), table, "plotting does not change the table");
    fails_with(&["sweep", s, "--plot", "s.pdf"], &["--plot", "s.pdf"]);
    assert!(table.starts_with("point,disk,context,thinktime_us,scheduler,seed,job,job_index,"));
    fails_with(&["sweep", s, "--engine", "dask"], &["python -m headway sweep", "--engine dask"]);
    std::fs::write(&sweep, "job = \"small.fio\"\n[grid]\nscheduler = [\"noop\"]\ndisks = [\"x\"]\n").unwrap();
    fails_with(&["sweep", s], &[&format!("{s}:4:"), "disks"]);
}

/// `simulate --plot`: throughput per scheduler as SVG or PNG; another extension is refused
/// before anything runs.
#[test]
fn simulate_plots_svg_and_png() {
    let job = tmp(
        "plot.fio",
        "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=4m\nnumjobs=2\noffset_increment=10g\n[r]\n",
    );
    let dir = job.parent().unwrap().to_path_buf();
    for ext in ["svg", "png"] {
        let out = dir.join(format!("headway-plot-test.{ext}"));
        let _ = std::fs::remove_file(&out);
        let o = headway(&[
            "simulate",
            job.to_str().unwrap(),
            "--scheduler",
            "noop,stream",
            "--quiet",
            "--plot",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        take_plot(&out, ext);
    }
    fails_with(&["simulate", job.to_str().unwrap(), "--plot", "x.pdf"], &["--plot", "x.pdf", ".svg or .png"]);
}

/// `validate --plot`: the simulated and measured service-time CDFs as SVG or PNG, the JSON
/// contract unchanged beside it, `--per-request` rows that add up to it; another extension
/// is refused before anything runs.
#[test]
fn validate_plots_the_cdfs() {
    let lines: String = (0..200u64)
        .map(|i| {
            let rw = if i % 3 == 0 { "W" } else { "R" };
            format!("{rw} Miss {} 8 {}.0 1000.0\n", (i * 7919 * 4096) % 100_000_000, 5000 + (i * 37) % 9000)
        })
        .collect();
    let trace = tmp("validate.trace", &lines);
    let dir = trace.parent().unwrap().to_path_buf();
    let json = dir.join("validate.json");
    let csv = dir.join("validate-per-request.csv");
    for ext in ["svg", "png"] {
        let out = dir.join(format!("headway-validate-test.{ext}"));
        let _ = std::fs::remove_file(&out);
        let o = headway(&[
            "validate",
            "wd5000aaks",
            trace.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--plot",
            out.to_str().unwrap(),
            "--per-request",
            csv.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains("R Miss") && stdout.contains("W Miss"), "per-class rows:\n{stdout}");
        take_plot(&out, ext);
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for k in
            ["drive", "requests", "demerit_ms", "demerit_binned_ms", "mean_simulated_ms", "mean_measured_ms"]
        {
            assert!(v.get(k).is_some(), "JSON lacks {k}: {v}");
        }
        assert_eq!(v["requests"], 200);
    }
    // --per-request: a row a request, in trace order, whose means are the JSON's
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = text.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name}"));
    let rows: Vec<Vec<&str>> = rows.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 200);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[col("line")], (i + 1).to_string());
        assert_eq!(r[col("dir")], if i % 3 == 0 { "W" } else { "R" });
    }
    let mean = |name: &str| rows.iter().map(|r| r[col(name)].parse::<f64>().unwrap()).sum::<f64>() / 200.0;
    for (c, k) in [("simulated_ms", "mean_simulated_ms"), ("measured_ms", "mean_measured_ms")] {
        let want = v[k].as_f64().unwrap();
        assert!((mean(c) - want).abs() < 1e-5, "{c}: {} vs {want}", mean(c));
    }
    assert!(rows.iter().all(|r| r[col("seek_cylinders")].parse::<u32>().is_ok()));
    std::fs::remove_file(&csv).unwrap();
    let pdf = dir.join("cdf.pdf");
    fails_with(
        &["validate", "wd5000aaks", trace.to_str().unwrap(), "--plot", pdf.to_str().unwrap()],
        &["--plot", "cdf.pdf", ".svg or .png"],
    );
    assert!(!pdf.exists(), "nothing is written for a refused --plot");
}

/// Check that `out` is a plot of kind `ext` (svg or png) of some size, then remove it.
fn take_plot(out: &std::path::Path, ext: &str) {
    let bytes = std::fs::read(out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    assert!(bytes.len() > 1000, "{ext}: {} bytes", bytes.len());
    if ext == "svg" {
        assert!(String::from_utf8_lossy(&bytes).contains("<svg"));
    } else {
        assert_eq!(&bytes[1..4], b"PNG");
    }
    std::fs::remove_file(out).unwrap();
}

/// Output into a pipe closed early (`headway ... | head -1`) ends the program quietly: no
/// panic message about a broken pipe.
#[test]
fn a_closed_stdout_ends_quietly() {
    use std::process::Stdio;
    // ~800 KB of JSON, far more than a pipe holds: some write surely comes after the close
    let job = tmp("many.fio", "[j]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=8k\nnumjobs=400\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_headway"))
        .args(["simulate", job.to_str().unwrap(), "--scheduler", "noop", "--json", "/dev/stdout"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("headway runs");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("headway ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{err}");
}

/// `headway validate DIR`: every NAME.parv with a NAME.trace beside it, by name, each with
/// the figures its single-drive run gives; a list of the JSON objects; clear errors for a
/// directory with a TRACE, a file without one, and a directory without pairs.
#[test]
fn validate_scores_a_directory_of_drives() {
    let reference = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim-valid");
    assert!(
        reference.exists(),
        "{} missing: the DiskSim reference data (data/ in the repository)",
        reference.display()
    );
    let dir = std::env::temp_dir().join(format!("headway-validate-suite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&reference).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        // two drives keep their traces; the other parameter files stay without one
        if name.ends_with(".trace") && !["cheetah9LP.trace", "hp_c2247a.trace"].contains(&name.as_str()) {
            continue;
        }
        std::fs::copy(&p, dir.join(&name)).unwrap();
    }
    let json = dir.join("suite.json");
    let o = headway(&["validate", dir.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert!(rows[0].starts_with("cheetah9LP") && rows[1].starts_with("hp_c2247a"), "{stdout}");
    let list: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    // the same figures as a run on the drive alone
    let one = dir.join("one.json");
    let parv = dir.join("hp_c2247a.parv");
    let trace = dir.join("hp_c2247a.trace");
    let o = headway(&[
        "validate",
        parv.to_str().unwrap(),
        trace.to_str().unwrap(),
        "--json",
        one.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let single: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&one).unwrap()).unwrap();
    assert_eq!(list[1], single);
    // the breakdown: reads and writes add up to all; every part as the table prints it
    let parts = single["parts"].as_array().unwrap();
    let count = |name: &str| parts.iter().find(|p| p["part"] == name).unwrap()["requests"].as_u64().unwrap();
    assert_eq!(count("reads") + count("writes"), single["requests"].as_u64().unwrap());
    let table = String::from_utf8_lossy(&o.stdout);
    for p in parts {
        let row = format!(
            "{:<22} {:>8} {:>12.3}",
            p["part"].as_str().unwrap(),
            p["requests"].as_u64().unwrap(),
            p["demerit_ms"].as_f64().unwrap()
        );
        assert!(table.contains(&row), "{row} not in\n{table}");
    }
    assert!(single["cache_hit_agreement"].as_u64().unwrap() <= single["requests"].as_u64().unwrap());
    // `headway disks PARV` shows the drive as imported
    let o = headway(&["disks", parv.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && shown.contains("5400 rpm") && shown.contains("imported from"), "{shown}");
    fails_with(&["disks", "no-such-drive"], &["unknown drive model `no-such-drive`", ".parv"]);
    fails_with(
        &["validate", dir.to_str().unwrap(), trace.to_str().unwrap()],
        &["directory", "give no TRACE"],
    );
    fails_with(&["validate", parv.to_str().unwrap()], &["TRACE is missing"]);
    let plot = dir.join("x.svg");
    fails_with(&["validate", dir.to_str().unwrap(), "--plot", plot.to_str().unwrap()], &["one drive"]);
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    fails_with(&["validate", empty.to_str().unwrap()], &["no NAME.parv with a NAME.trace"]);
    // a pair that cannot be scored is listed with its reason; the others are still scored
    std::fs::write(dir.join("broken.parv"), "disksim_global Global {\n  Init Seed = oops\n}\n").unwrap();
    std::fs::copy(&trace, dir.join("broken.trace")).unwrap();
    let o = headway(&["validate", dir.to_str().unwrap()]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(!o.status.success(), "{out}{err}");
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert!(
        rows.len() == 2 && rows[0].starts_with("cheetah9LP") && rows[1].starts_with("hp_c2247a"),
        "{out}"
    );
    assert!(err.contains("broken: not scored:") && err.contains("broken.parv:"), "{err}");
    assert!(err.contains("1 of 3 drives could not be scored"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Rows of a `--per-request` CSV: (header, rows as fields).
fn per_request_rows(path: &std::path::Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(str::to_string).collect();
    (header, lines.map(|l| l.split(',').map(str::to_string).collect()).collect())
}

/// `simulate --per-request`: one row per job request, per run, that adds up to the JSON
/// (count, bytes and mean latency per job), in the job's address space; the same inputs
/// write the same bytes.
#[test]
fn simulate_writes_every_request_when_asked() {
    let job = tmp("per-request.fio", SMALL);
    let (json, csv) = (job.with_extension("pr.json"), job.with_extension("pr.csv"));
    let args = |csv: &std::path::Path| {
        vec![
            "simulate".to_string(),
            job.to_str().unwrap().to_string(),
            "--scheduler".into(),
            "noop,stream".into(),
            "--context".into(),
            "none".into(),
            "--json".into(),
            json.to_str().unwrap().to_string(),
            "--per-request".into(),
            csv.to_str().unwrap().to_string(),
            "--quiet".into(),
        ]
    };
    let run = |csv: &std::path::Path| {
        let a = args(csv);
        let o = headway(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    run(&csv);
    let (header, rows) = per_request_rows(&csv);
    assert_eq!(
        header,
        ["scheduler", "job_index", "job", "dir", "offset", "bytes", "submit_ns", "complete_ns", "latency_ns"]
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for (run_i, sched) in ["noop", "stream"].iter().enumerate() {
        let jobs = v["runs"][run_i]["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 2);
        for (j, job) in jobs.iter().enumerate() {
            let mine: Vec<&Vec<String>> =
                rows.iter().filter(|r| r[0] == *sched && r[1] == j.to_string()).collect();
            let read = &job["read"];
            assert_eq!(mine.len() as u64, read["total_ios"].as_u64().unwrap(), "{sched} job {j}");
            let bytes: u64 = mine.iter().map(|r| r[5].parse::<u64>().unwrap()).sum();
            assert_eq!(bytes, read["io_bytes"].as_u64().unwrap());
            let lat: Vec<u64> = mine.iter().map(|r| r[8].parse().unwrap()).collect();
            let mean = lat.iter().sum::<u64>() as f64 / lat.len() as f64;
            let want = read["clat_ns"]["mean"].as_f64().unwrap();
            assert!((mean - want).abs() <= 1e-6 * want, "{sched} job {j}: {mean} vs {want}");
            for r in &mine {
                assert_eq!((r[2].as_str(), r[3].as_str()), ("par", "read"));
                let (submit, complete): (u64, u64) = (r[6].parse().unwrap(), r[7].parse().unwrap());
                assert_eq!(complete - submit, r[8].parse::<u64>().unwrap());
                // the second clone reads 51 GiB in (offset_increment)
                let off: u64 = r[4].parse().unwrap();
                assert!(off >= j as u64 * (51 << 30) && off < j as u64 * (51 << 30) + (4 << 20), "{off}");
            }
        }
    }
    let again = csv.with_extension("again.csv");
    run(&again);
    assert_eq!(std::fs::read(&csv).unwrap(), std::fs::read(&again).unwrap(), "deterministic");
}

/// fio's command-line form after `--` is the job file it spells: the same JSON.
#[test]
fn fio_options_after_dashes_are_the_job_file() {
    let dir = std::env::temp_dir().join(format!("headway-fio-args-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let job = dir.join("j.fio");
    std::fs::write(
        &job,
        "[global]\ndirect=1\nbs=4k\nsize=64m\n[a]\nrw=randread\nnumber_ios=200\n[b]\nrw=write\n",
    )
    .unwrap();
    let (from_file, from_args) = (dir.join("file.json"), dir.join("args.json"));
    let base = ["simulate", "--scheduler", "noop,stream", "--quiet", "--json"];
    let o = headway(&[&base[..], &[from_file.to_str().unwrap(), job.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let args = [
        "--",
        "--direct=1",
        "--bs=4k",
        "--size=64m",
        "--name=a",
        "--rw=randread",
        "--number_ios=200",
        "--name=b",
        "--rw=write",
    ];
    let o = headway(&[&base[..], &[from_args.to_str().unwrap()], &args[..]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&from_file).unwrap(), std::fs::read(&from_args).unwrap());
    fails_with(&["simulate", "--", "--name=a", "--bs=4q"], &["fio arguments:2:", "`bs`"]);
    fails_with(&["simulate", job.to_str().unwrap(), "--", "--name=a"], &["not both"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn serve_socket_mode_must_be_octal_and_needs_a_unix_socket() {
    let o = headway(&[
        "serve",
        "--export",
        "/nonexistent/x.img",
        "--unix",
        "/nonexistent/x.sock",
        "--socket-mode",
        "0999",
    ]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("--socket-mode") && e.contains("in octal"), "{e}");
    let o = headway(&["serve", "--export", "/nonexistent/x.img", "--socket-mode", "0600"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--unix"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// With no --scheduler, a file export (page cache) gets noop and a disk gets stream,
/// and the start-up says which and why (issue 17, item 8: stream on a page-cache export
/// kept it idle 96% of the time).
#[test]
fn serve_picks_its_default_scheduler_by_backend_and_says_so() {
    let dir = calibration_target("default-sched.img").with_file_name("default-sched-dir");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (backend, want) in [
        ("file", "scheduler noop (the default for a file export"),
        ("emulated:wd5000aaks", "scheduler stream (the default for a disk"),
    ] {
        let (img, sock, log) = (dir.join("d.img"), dir.join("d.sock"), dir.join("d.log"));
        let (mut child, _) = spawn_serve(&["--size", "8M", "--backend", backend], &img, &sock, &log);
        let _ = child.kill();
        let _ = child.wait();
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains(want), "{backend}: {text}");
        let _ = std::fs::remove_file(&sock);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A serve error comes alone (no start-up line before it), a negative --size is named as
/// a bad size (not taken for a flag), and a log written to a file carries no colour codes
/// (issue 39, item 5).
#[test]
fn serve_errors_come_alone_and_a_log_file_is_plain_text() {
    let o = headway(&["serve", "--export", "/nonexistent/x.img", "--unix", "/nonexistent/x.sock"]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.starts_with("headway: error: cannot open export /nonexistent/x.img"), "{e}");
    let o = headway(&["serve", "--export", "/nonexistent/x.img", "--size", "-3"]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("--size") && e.contains("malformed size `-3`"), "{e}");
    assert!(!e.contains("unexpected argument"), "{e}");
    // a budget too small for one connection's two maximal requests, before any file is made
    let o = headway(&["serve", "--export", "/nonexistent/x.img", "--size", "1M", "--max-memory", "64M"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("--max-memory 67108864 is below"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let (img, sock, log) = (dir.path().join("d.img"), dir.path().join("d.sock"), dir.path().join("d.log"));
    let (mut child, _) = spawn_serve(&["--size", "1M"], &img, &sock, &log);
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("serving"), "{text}");
    assert!(!text.contains('\x1b'), "colour codes in a log file: {text:?}");
}

/// A client whose TLS handshake fails (here: one that answers STARTTLS's ACK with
/// plaintext) is logged at the default level, not only at debug (issue 39, item 5).
#[test]
fn serve_logs_a_failed_tls_handshake() {
    use headway_nbd::handshake::{self as hs, ClientOption};
    use headway_nbd::proto::*;
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let psk = dir.path().join("keys.psk");
    std::fs::write(&psk, "alice:9f8e7d6c5b4a39281706f5e4d3c2b1a0\n").unwrap();
    let (img, sock, log) = (dir.path().join("d.img"), dir.path().join("d.sock"), dir.path().join("d.log"));
    let args = ["--size", "1M", "--tls", "on", "--tls-psk", psk.to_str().unwrap()];
    let (mut child, mut c) = spawn_serve(&args, &img, &sock, &log);
    let mut greeting = [0u8; 18];
    c.read_exact(&mut greeting).unwrap();
    assert_eq!(greeting, hs::greeting());
    c.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
    c.write_all(&ClientOption::StartTls.encode()).unwrap();
    let mut ack = [0u8; 20];
    c.read_exact(&mut ack).unwrap();
    assert_eq!(u32::from_be_bytes(ack[12..16].try_into().unwrap()), REP_ACK);
    c.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut rest = Vec::new();
    let _ = c.read_to_end(&mut rest); // the server closes the connection
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let text = loop {
        let t = std::fs::read_to_string(&log).unwrap();
        if t.contains("TLS handshake failed") || std::time::Instant::now() >= until {
            break t;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(text.contains("WARN") && text.contains("TLS handshake failed"), "{text}");
}

/// `headway serve ARGS --export IMG --unix SOCK`, its stderr to LOG; once it answers on SOCK:
/// the process (the caller reaps it) and a connection to it.
#[allow(clippy::zombie_processes)] // returned to the caller, which kills and waits for it
fn spawn_serve(
    args: &[&str],
    img: &std::path::Path,
    sock: &std::path::Path,
    log: &std::path::Path,
) -> (std::process::Child, std::os::unix::net::UnixStream) {
    use std::time::{Duration, Instant};
    let mut child = Command::new(env!("CARGO_BIN_EXE_headway"))
        .arg("serve")
        .args(args)
        .arg("--export")
        .arg(img)
        .arg("--unix")
        .arg(sock)
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(s) = std::os::unix::net::UnixStream::connect(sock) {
            return (child, s);
        }
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server did not listen");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Listening beyond loopback without TLS is said at start; on loopback it is not.
#[test]
fn serve_warns_when_listening_beyond_loopback_without_tls() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    for (addr, warned) in [("0.0.0.0:0", true), ("127.0.0.1:0", false)] {
        let log = dir.path().join("serve.log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_headway"))
            .args(["serve", "--size", "1M", "--listen", addr, "--export"])
            .arg(dir.path().join("x.img"))
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        let text = loop {
            let t = std::fs::read_to_string(&log).unwrap();
            if t.contains("serving") || Instant::now() >= until {
                break t;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = child.kill();
        let _ = child.wait();
        assert!(text.contains("serving"), "{addr}: the server did not start: {text}");
        assert_eq!(text.contains("without TLS"), warned, "{addr}: {text}");
    }
}

/// `--json -` writes the JSON to standard output, alone (no table, no file named `-`);
/// errors stay on standard error.
#[test]
fn json_dash_is_standard_output() {
    let dir = scratch("json-dash");
    let job = tmp("dash.fio", "[r]\nrw=randread\nbs=4k\nsize=64m\nnumber_ios=200\n");
    let run = |args: &[&str]| headway_in(&dir, args);
    let out = run(&["simulate", job.to_str().unwrap(), "--scheduler", "noop,deadline", "--json", "-"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is the JSON alone");
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    assert!(!dir.join("-").exists(), "no file named -");
    // the same bytes as --json FILE
    let out2 = run(&["simulate", job.to_str().unwrap(), "--scheduler", "noop,deadline", "--json", "r.json"]);
    assert!(out2.status.success());
    assert_eq!(std::fs::read(dir.join("r.json")).unwrap(), out.stdout);
    // an error: nothing on standard output, the message on standard error
    let bad = run(&["simulate", job.to_str().unwrap(), "--scheduler", "nosuch", "--json", "-"]);
    assert!(!bad.status.success());
    assert!(bad.stdout.is_empty());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("nosuch"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every job file of `experiments/` is one real fio accepts (`fio --parse-only`): headway's
/// own options are written `; @headway KEY=VALUE`, which fio reads as comments. Needs fio
/// (`make test` installs it): without it the test fails.
#[test]
fn fio_accepts_every_experiment_job_file() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{} job files", files.len());
    let mut refused = Vec::new();
    for f in &files {
        let out = Command::new("fio")
            .arg("--parse-only")
            .arg(f)
            .output()
            .expect("fio runs (make test installs it)");
        if !out.status.success() {
            refused.push(format!("{}: {}", f.display(), String::from_utf8_lossy(&out.stderr).trim()));
        }
    }
    assert!(refused.is_empty(), "fio refuses:\n{}", refused.join("\n"));
}

/// `ioscheduler=` picks the scheduler when the command line names none; `--scheduler` wins.
#[test]
fn ioscheduler_in_the_job_file_picks_the_scheduler() {
    let job = tmp(
        "iosched.fio",
        "[global]\nioscheduler=deadline\n[r]\nrw=randread\nbs=4k\nsize=64m\nnumber_ios=100\n",
    );
    let out = headway(&["simulate", job.to_str().unwrap(), "--json", "-"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> =
        v["runs"].as_array().unwrap().iter().map(|r| r["scheduler"].as_str().unwrap()).collect();
    assert_eq!(names, ["deadline"]);
    let out = headway(&["simulate", job.to_str().unwrap(), "--scheduler", "noop,stream", "--json", "-"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 2, "the command line wins");
    fails_with(
        &[
            "simulate",
            tmp("iosched2.fio", "[a]\nioscheduler=deadline\n[b]\nioscheduler=stream\n").to_str().unwrap(),
        ],
        &["iosched2.fio", "job `b` sets ioscheduler=stream", "job `a`"],
    );
}

/// `write_iolog=FILE` writes what a simulated job submitted as a fio iolog v3, which real
/// fio replays (`read_iolog`) request for request; with several schedulers, one log each
/// (`FILE.SCHEDULER`). Needs fio (`make test` installs it): without it the test fails.
#[test]
fn write_iolog_logs_replay_in_real_fio() {
    let dir = scratch("write-iolog");
    let job =
        "[global]\nbs=4k\nsize=16m\nfilename=data.img\n[w]\nrw=randrw\nnumber_ios=120\nwrite_iolog=w.iolog\n";
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let run = |args: &[&str]| headway_in(&dir, args);
    let out = run(&["simulate", "j.fio", "--scheduler", "deadline", "--quiet"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let log = std::fs::read_to_string(dir.join("w.iolog")).unwrap();
    let count = |what: &str| log.lines().filter(|l| l.contains(what)).count() as u64;
    assert_eq!(count(" read ") + count(" write "), 120, "{log}");
    assert!(log.starts_with("fio version 3 iolog\n0 data.img add\n0 data.img open\n"), "{log}");
    std::fs::write(dir.join("data.img"), vec![0u8; 16 << 20]).unwrap();
    let fio = Command::new("fio")
        .args(["--name=replay", "--read_iolog=w.iolog", "--output-format=json"])
        .current_dir(&dir)
        .output()
        .expect("fio runs (make test installs it)");
    assert!(fio.status.success(), "fio: {}", String::from_utf8_lossy(&fio.stderr));
    let v: serde_json::Value = serde_json::from_slice(&fio.stdout).expect("fio's JSON");
    let j = &v["jobs"][0];
    assert_eq!(j["error"], 0);
    assert_eq!(j["read"]["total_ios"].as_u64(), Some(count(" read ")));
    assert_eq!(j["write"]["total_ios"].as_u64(), Some(count(" write ")));
    // several schedulers: a log each
    let out = run(&["simulate", "j.fio", "--scheduler", "noop,stream", "--quiet"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for f in ["w.iolog.noop", "w.iolog.stream"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 40: `headway disks MODEL --estimator-table` prints the model's calibrated curve in
/// the format the kernel `stream` elevator's `estimator_table` reads, and the elevator's
/// core accepts it.
#[test]
fn disks_prints_an_estimator_table_the_kernel_core_accepts() {
    let out = headway(&["disks", "wd5000aaks", "--estimator-table"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let knots: Vec<(u64, u64)> = text
        .lines()
        .map(|l| {
            let mut f = l.split_whitespace().map(|x| x.parse::<u64>().expect("a number"));
            let k = (f.next().expect("distance"), f.next().expect("time"));
            assert!(f.next().is_none(), "two numbers a line: {l:?}");
            k
        })
        .collect();
    assert!((2..=96).contains(&knots.len()), "{} knots", knots.len());
    let disk = headway_disk::builtin("wd5000aaks").unwrap();
    assert_eq!(knots, headway_sim::calibrate::curve_for(&disk).knots(), "the simulator's own curve");
    // a full stroke costs more than a track-to-track move, in milliseconds
    assert!(knots[0].1 < 1_000_000 && knots.last().unwrap().1 > 10_000_000, "{knots:?}");
    let p = headway_kcore::workload::default_params();
    let mut core = headway_kcore::CCore::new(&p, disk.capacity_sectors, 1);
    assert!(core.set_table(&knots), "the kernel core refused the table");
    assert_eq!(core.estimate(0, knots[1].0), knots[1].1);
    let bad = headway(&["disks", "--estimator-table"]);
    assert!(!bad.status.success(), "--estimator-table without a model must fail");
}

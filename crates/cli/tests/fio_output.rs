//! fio's own output from `headway simulate` (`--output-format`, `--output`, the
//! `write_*_log` options) read by fio's own tools, next to real fio's output of the same job
//! file. Needs fio, gnuplot and python3-six (`make test` installs them): without them these
//! tests fail.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A fresh empty directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headway-fio-out-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn headway_in(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_headway"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("headway runs");
    assert!(out.status.success(), "headway {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn tool_in(dir: &Path, program: &str, args: &[&str]) -> Output {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{program} runs (make test installs it): {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Real fio runs `job` in `dir` on a 16 MiB file `data.img`.
fn real_fio(dir: &Path, job: &str, args: &[&str]) -> Output {
    std::fs::write(dir.join("data.img"), vec![1u8; 16 << 20]).unwrap();
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let mut all = vec!["job.fio"];
    all.extend_from_slice(args);
    tool_in(dir, "fio", &all)
}

/// Every key path of a JSON document (the contents of the maps whose keys are data —
/// percentiles, bins, options — left out), for comparing layouts.
fn key_paths(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{k}");
                if ["bins", "percentile", "job options", "global options"].contains(&k.as_str()) {
                    out.insert(p);
                } else {
                    key_paths(x, &p, out);
                }
            }
        }
        Value::Array(a) => {
            for x in a {
                key_paths(x, &format!("{at}[]"), out);
            }
        }
        _ => {
            out.insert(at.to_string());
        }
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn files_in(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

const TWO_JOBS: &str = "[global]\nfilename=data.img\nsize=16m\nbs=4k\ndirect=1\nioengine=psync\n\
                        [seq]\nrw=read\n[rand]\nrw=randread\nnumber_ios=1500\n";

/// headway's json+ has real fio's layout key for key, the same jobs, I/O counts and bytes;
/// `fio_jsonplus_clat2csv` turns both into the same CSV files and validates headway's.
#[test]
fn json_plus_reads_like_real_fio() {
    let fio_dir = scratch("jsonplus-fio");
    real_fio(&fio_dir, TWO_JOBS, &["--output-format=json+", "--output=out.json"]);
    let ours = scratch("jsonplus-headway");
    std::fs::write(ours.join("job.fio"), TWO_JOBS).unwrap();
    headway_in(
        &ours,
        &["simulate", "job.fio", "--scheduler", "noop", "--output-format", "json+", "--output", "out.json"],
    );
    let (f, h) = (read_json(&fio_dir.join("out.json")), read_json(&ours.join("out.json")));
    let (mut fk, mut hk) = (BTreeSet::new(), BTreeSet::new());
    key_paths(&f, "", &mut fk);
    key_paths(&h, "", &mut hk);
    hk.retain(|k| !k.starts_with("/headway/"));
    assert_eq!(
        fk.difference(&hk).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "keys fio has and headway lacks"
    );
    assert_eq!(
        hk.difference(&fk).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "keys headway has and fio lacks"
    );
    for (a, b) in f["jobs"].as_array().unwrap().iter().zip(h["jobs"].as_array().unwrap()) {
        for key in ["jobname", "groupid"] {
            assert_eq!(a[key], b[key]);
        }
        for key in ["total_ios", "io_bytes", "io_kbytes"] {
            assert_eq!(a["read"][key], b["read"][key], "{key}");
        }
        assert_eq!(a["job options"], b["job options"]);
        // the percentile keys in fio's (numeric) order
        let keys = |j: &Value| {
            j["read"]["clat_ns"]["percentile"].as_object().unwrap().keys().cloned().collect::<Vec<_>>()
        };
        assert_eq!(keys(a), keys(b));
    }
    assert_eq!(f["global options"], h["global options"]);
    assert_eq!(h["jobs"][0]["read"]["total_ios"], 4096);
    // the bins add up to the I/Os, and the percentiles are bucket values
    let bins = h["jobs"][1]["read"]["clat_ns"]["bins"].as_object().unwrap();
    assert_eq!(bins.values().map(|v| v.as_u64().unwrap()).sum::<u64>(), 1500);
    let p50 = h["jobs"][1]["read"]["clat_ns"]["percentile"]["50.000000"].to_string();
    assert!(bins.contains_key(&p50), "p50 {p50} is a bin");
    // fio's tool reads both alike
    for dir in [&fio_dir, &ours] {
        tool_in(dir, "/usr/bin/python3", &["/usr/bin/fio_jsonplus_clat2csv", "out.json", "clat"]);
    }
    let csvs = |d: &Path| files_in(d).into_iter().filter(|f| f.starts_with("clat")).collect::<BTreeSet<_>>();
    assert_eq!(csvs(&fio_dir), csvs(&ours));
    assert_eq!(csvs(&ours).len(), 2);
    let header =
        |d: &Path| std::fs::read_to_string(d.join("clat_job1")).unwrap().lines().next().unwrap().to_string();
    assert_eq!(header(&fio_dir), header(&ours));
    tool_in(&ours, "/usr/bin/python3", &["/usr/bin/fio_jsonplus_clat2csv", "--validate", "out.json", "clat"]);
}

/// `write_bw_log`, `write_lat_log`, `write_iops_log` (windowed and per request): the files
/// real fio writes for the same job, lines with fio's columns (a line per request, or per
/// window and direction), and `fio2gnuplot` renders the same set of plots from both.
#[test]
fn logs_are_fio_logs_and_fio2gnuplot_reads_them() {
    // a second of each: real fio's windows need the time
    let job = |avg: u32| {
        format!(
            "[global]\nfilename=data.img\nsize=16m\nbs=4k\ndirect=1\nioengine=psync\nruntime=1\ntime_based\n\
             write_bw_log=lg\nwrite_lat_log=lg\nwrite_iops_log=lg\nlog_avg_msec={avg}\n\
             [seq]\nrw=read\n[rand]\nrw=randread\n"
        )
    };
    for avg in [0, 100] {
        let fio_dir = scratch(&format!("logs-fio-{avg}"));
        real_fio(&fio_dir, &job(avg), &["--output=/dev/null"]);
        let ours = scratch(&format!("logs-headway-{avg}"));
        std::fs::write(ours.join("job.fio"), job(avg)).unwrap();
        let out =
            headway_in(&ours, &["simulate", "job.fio", "--scheduler", "deadline", "--output-format", "json"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let logs =
            |d: &Path| files_in(d).into_iter().filter(|f| f.ends_with(".log")).collect::<BTreeSet<_>>();
        assert_eq!(logs(&fio_dir), logs(&ours), "log_avg_msec={avg}");
        assert_eq!(logs(&ours).len(), 10);
        for name in logs(&ours) {
            let text = std::fs::read_to_string(ours.join(&name)).unwrap();
            if name.contains("_slat.") {
                assert!(text.is_empty(), "a synchronous engine's slat log is empty, as fio's");
                continue;
            }
            let lines: Vec<&str> = text.lines().collect();
            let mut last = 0;
            for l in &lines {
                let cols: Vec<u64> =
                    l.split(", ").map(|c| c.parse().unwrap_or_else(|_| panic!("{name}: {l}"))).collect();
                assert_eq!(cols.len(), 5, "{name}: {l}");
                assert_eq!(cols[2], 0, "reads");
                assert!(
                    cols[0] >= last && cols[0] <= 1000,
                    "{name}: ms since the job started, in order: {l}"
                );
                last = cols[0];
            }
            let job = if name.ends_with(".1.log") { 0 } else { 1 };
            let ios = v["jobs"][job]["read"]["total_ios"].as_u64().unwrap() as usize;
            if avg == 0 {
                assert_eq!(lines.len(), ios, "{name}: a line per request");
            } else {
                assert!((9..=11).contains(&lines.len()), "{name}: a line per 100 ms window: {}", lines.len());
            }
        }
        // fio2gnuplot's 3D plot takes gnuplot minutes over thousands of points, and real fio's
        // per-request logs hold as many lines as the file allowed requests (15,000 a job on a
        // fast one): its logs are cut to their first 500 lines, still fio's, for the plot
        for name in logs(&fio_dir).iter().filter(|n| n.contains("_bw.")) {
            let path = fio_dir.join(name);
            let text = std::fs::read_to_string(&path).unwrap();
            let head: Vec<&str> = text.lines().take(500).collect();
            std::fs::write(&path, head.join("\n") + "\n").unwrap();
        }
        for dir in [&fio_dir, &ours] {
            std::fs::create_dir_all(dir.join("gp")).unwrap();
            tool_in(
                dir,
                "/usr/bin/python3",
                &["/usr/bin/fio2gnuplot", "-p", "*_bw.*.log", "-g", "-d", "gp/"],
            );
        }
        assert_eq!(files_in(&fio_dir.join("gp")), files_in(&ours.join("gp")));
        assert!(files_in(&ours.join("gp")).iter().any(|f| f.ends_with(".png")));
    }
}

/// `write_hist_log` with `log_hist_msec`: fio's 1,856 latency buckets after time, direction
/// and block size, each line the window's completions, as real fio's.
#[test]
fn histogram_logs_have_fios_columns() {
    let job =
        "[global]\nfilename=data.img\nsize=16m\nbs=4k\ndirect=1\nioengine=psync\nruntime=1\ntime_based\n\
               write_hist_log=hl\nlog_hist_msec=200\n[r]\nrw=randread\n";
    let fio_dir = scratch("hist-fio");
    real_fio(&fio_dir, job, &["--output=/dev/null"]);
    let ours = scratch("hist-headway");
    std::fs::write(ours.join("job.fio"), job).unwrap();
    let out = headway_in(&ours, &["simulate", "job.fio", "--scheduler", "noop", "--output-format", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = |d: &Path| -> Vec<Vec<u64>> {
        std::fs::read_to_string(d.join("hl_clat_hist.1.log"))
            .unwrap()
            .lines()
            .map(|l| l.split(", ").map(|c| c.parse().unwrap()).collect())
            .collect()
    };
    let (f, h) = (rows(&fio_dir), rows(&ours));
    assert!(!f.is_empty() && !h.is_empty());
    assert_eq!(f[0].len(), 1859, "real fio: time, direction, block size and 1856 buckets");
    // a line per whole 200 ms window (the window ending with the job's second closes when a
    // completion lands at or after its end: in fio's jittered windows, or the simulator's
    // exact ones, that may or may not happen)
    assert!(f.len().abs_diff(h.len()) <= 1 && h.len() >= 4, "fio {} lines, headway {}", f.len(), h.len());
    let mut counted = 0;
    for (i, r) in h.iter().enumerate() {
        assert_eq!(r.len(), f[0].len());
        assert_eq!((r[1], r[2]), (0, 4096), "reads of 4 KiB");
        assert_eq!(r[0], 200 * (i as u64 + 1), "window ends");
        counted += r[3..].iter().sum::<u64>();
    }
    // the windows hold the completions of the job's whole windows, no more
    let ios = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!(counted <= ios && counted * 5 >= ios * 4 - 5, "{counted} of {ios}");
}

/// `group_reporting` and `new_group` make the same entries and groups as in real fio.
#[test]
fn reporting_groups_are_fios() {
    let job = "[global]\nfilename=data.img\nsize=4m\nbs=4k\ndirect=1\nioengine=psync\nnumber_ios=200\n\
               group_reporting\n[a]\nrw=read\nnumjobs=3\n[b]\nrw=randread\nnew_group\n[c]\nrw=randread\n";
    let fio_dir = scratch("groups-fio");
    real_fio(&fio_dir, job, &["--output-format=json", "--output=out.json"]);
    let ours = scratch("groups-headway");
    std::fs::write(ours.join("job.fio"), job).unwrap();
    headway_in(
        &ours,
        &["simulate", "job.fio", "--scheduler", "noop", "--output-format", "json", "--output", "out.json"],
    );
    let entries = |v: &Value| {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                (
                    j["jobname"].as_str().unwrap().to_string(),
                    j["groupid"].as_u64().unwrap(),
                    j["read"]["total_ios"].as_u64().unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let (f, h) =
        (entries(&read_json(&fio_dir.join("out.json"))), entries(&read_json(&ours.join("out.json"))));
    assert_eq!(f, h);
    assert_eq!(h, [("a".to_string(), 0, 600), ("b".to_string(), 1, 400)]);
    // normal output: a block per entry, a status line per group
    let out = headway_in(&ours, &["simulate", "job.fio", "--scheduler", "noop", "--output-format", "normal"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("Run status group").count(), 2, "{text}");
    assert!(text.contains("a: (groupid=0, jobs=3)"), "{text}");
}

/// Several schedulers: a file each with `--output`, one JSON array on standard output; the
/// formats that cannot be told apart on standard output are refused; the same run gives the
/// same bytes; `util` is fio's percentage.
#[test]
fn several_schedulers_and_stdout() {
    let dir = scratch("several");
    std::fs::write(dir.join("job.fio"), TWO_JOBS).unwrap();
    let args = ["simulate", "job.fio", "--scheduler", "noop,stream", "--output-format", "json"];
    let out = headway_in(&dir, &args);
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON array, nothing else");
    let names: Vec<&str> =
        v.as_array().unwrap().iter().map(|d| d["headway"]["scheduler"].as_str().unwrap()).collect();
    assert_eq!(names, ["noop", "stream:deadline"]);
    assert_eq!(headway_in(&dir, &args).stdout, out.stdout, "deterministic");
    headway_in(
        &dir,
        &[
            "simulate",
            "job.fio",
            "--scheduler",
            "noop,stream",
            "--output-format",
            "terse,json",
            "--output",
            "o",
        ],
    );
    for f in ["o.noop", "o.stream"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(text.starts_with("3;fio-3.33;seq;"), "{f}: terse first, as fio");
        assert!(text.contains("\"fio version\" : \"fio-3.33\""), "{f}");
    }
    let refused = Command::new(env!("CARGO_BIN_EXE_headway"))
        .args(["simulate", "job.fio", "--scheduler", "noop,stream", "--output-format", "normal"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("give --output FILE"));
    let bad = Command::new(env!("CARGO_BIN_EXE_headway"))
        .args(["simulate", "job.fio", "--output-format", "xml"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown output format `xml`"));
    // util in percent, the device's busy share
    let one = headway_in(
        &dir,
        &["simulate", "job.fio", "--scheduler", "noop", "--output-format", "json", "--json", "h.json"],
    );
    let fio: Value = serde_json::from_slice(&one.stdout).unwrap();
    let ours = read_json(&dir.join("h.json"));
    let util = fio["disk_util"][0]["util"].as_f64().unwrap();
    let frac = ours["runs"][0]["device"]["utilization"].as_f64().unwrap();
    assert!((util - frac * 100.0).abs() < 1e-4 && util > 1.0, "{util} vs {frac}");
}

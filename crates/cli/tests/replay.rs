//! `headway replay` end to end: the same requests as blkparse text and as a fio iolog give
//! byte-identical `--json`; bad lines stop the run with file:line, or are counted.

use std::path::PathBuf;
use std::process::{Command, Output};

fn headway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headway")).args(args).output().expect("headway runs")
}

fn tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headway-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Two processes reading 4 KiB sequentially, 100 GiB apart, one request per millisecond.
fn traces() -> (String, String) {
    let mut blk = String::new();
    let mut log = String::from("fio version 3 iolog\n0 dd[10] add\n0 cat[20] add\n");
    for i in 0..200u64 {
        let (name, pid, base) = if i % 2 == 0 { ("dd", 10, 0) } else { ("cat", 20, 100u64 << 30) };
        let sector = base / 512 + (i / 2) * 8;
        blk += &format!(
            "  8,16   0 {:>8} {:>5}.{:09} {pid:>5}  Q  RS {sector} + 8 [{name}]\n",
            i + 1,
            i / 1000,
            (i % 1000) * 1_000_000
        );
        blk += &format!(
            "  8,16   0 {:>8} {:>5}.{:09} {pid:>5}  C  RS {sector} + 8 [0]\n",
            i + 1,
            i / 1000,
            (i % 1000) * 1_000_000 + 9
        );
        log += &format!("{} {name}[{pid}] read {} 4096\n", i * 1000, sector * 512);
    }
    (blk, log)
}

#[test]
fn blkparse_and_fio_iolog_give_the_same_json() {
    let (blk, log) = traces();
    let (b, l) = (tmp("t.blk", &blk), tmp("t.iolog", &log));
    for mode in ["open", "closed"] {
        let (jb, jl) =
            (b.with_extension(format!("{mode}.b.json")), l.with_extension(format!("{mode}.l.json")));
        for (trace, format, json) in [(&b, "blkparse", &jb), (&l, "iolog", &jl)] {
            let out = headway(&[
                "replay",
                trace.to_str().unwrap(),
                "--format",
                format,
                "--mode",
                mode,
                "--scheduler",
                "deadline,stream,as",
                "--json",
                json.to_str().unwrap(),
            ]);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                text.contains(&format!("trace: 200 requests, 819200 bytes, 2 contexts, {mode} mode")),
                "{text}"
            );
        }
        let (a, c) = (std::fs::read(&jb).unwrap(), std::fs::read(&jl).unwrap());
        assert_eq!(a, c, "{mode}: JSON differs");
        let v: serde_json::Value = serde_json::from_slice(&a).unwrap();
        assert_eq!(v["runs"][0]["jobs"][0]["jobname"], "dd[10]");
        assert_eq!(v["runs"][0]["aggregate"]["io_bytes"], 819200);
    }
}

#[test]
fn bad_lines_name_file_and_line_or_are_skipped_and_counted() {
    let (blk, _) = traces();
    let bad = blk.replacen(" Q  RS 8 + 8 [dd]", " Q  RS 8 + x [dd]", 1);
    let p = tmp("bad.blk", &bad);
    let out = headway(&["replay", p.to_str().unwrap(), "--format", "blkparse"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{}:5: nblocks `x` is not a number", p.display())), "{err}");
    let out = headway(&[
        "replay",
        p.to_str().unwrap(),
        "--format",
        "blkparse",
        "--skip-bad",
        "--scheduler",
        "noop",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("trace: 199 requests") && text.contains("1 bad lines skipped"), "{text}");
}

#[test]
fn bad_arguments_are_errors() {
    let p = tmp("one.blk", "  8,0 0 1 0.0 1 Q R 0 + 8 [a]\n");
    for (args, needle) in [
        (vec!["--format", "vhs"], "--format: `vhs` is not a trace format"),
        (vec!["--format", "blkparse", "--mode", "ajar"], "--mode: `ajar` is not a replay mode"),
        (vec!["--format", "blkparse", "--context", "vm"], "--context: `vm` is not a context of a trace"),
    ] {
        let mut a = vec!["replay", p.to_str().unwrap()];
        a.extend(args);
        let out = headway(&a);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains(needle), "{a:?}");
    }
}

/// `replay --per-request`: one row per trace request and run, `job` its context, offsets
/// the trace's; the count and bytes are the trace's.
#[test]
fn replay_writes_every_request_when_asked() {
    let (blk, _) = traces();
    let b = tmp("pr.blk", &blk);
    let csv = b.with_extension("pr.csv");
    let out = headway(&[
        "replay",
        b.to_str().unwrap(),
        "--format",
        "blkparse",
        "--scheduler",
        "deadline,stream",
        "--per-request",
        csv.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 400, "200 requests x 2 schedulers");
    for sched in ["deadline", "stream"] {
        let mine: Vec<_> = rows.iter().filter(|r| r[0] == sched).collect();
        assert_eq!(mine.len(), 200);
        assert_eq!(mine.iter().map(|r| r[5].parse::<u64>().unwrap()).sum::<u64>(), 819_200);
        let dd: Vec<u64> = mine.iter().filter(|r| r[2] == "dd[10]").map(|r| r[4].parse().unwrap()).collect();
        assert_eq!(dd.len(), 100);
        assert!(dd.iter().all(|&o| o < 1 << 20), "dd reads the start of the disk");
        assert!(mine.iter().filter(|r| r[2] == "cat[20]").all(|r| r[4].parse::<u64>().unwrap() >= 100 << 30));
    }
}

/// `simulate`, `replay` and `bench` take the same run flags: an array and a bad `--set`
/// reach `replay` as they reach `simulate`, with the same errors.
#[test]
fn replay_takes_the_run_flags_simulate_takes() {
    let (blk, _) = traces();
    let b = tmp("flags.blk", &blk);
    let json = b.with_extension("array.json");
    let out = headway(&[
        "replay",
        b.to_str().unwrap(),
        "--format",
        "blkparse",
        "--scheduler",
        "stream",
        "--array",
        "raid0:3:64k",
        "--json",
        json.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let run = &doc["runs"][0];
    assert_eq!(run["array"], "raid0:3:64k", "{run}");
    assert_eq!(run["members"].as_array().map(|m| m.len()), Some(3));
    let job = tmp("flags.fio", "[j]\nrw=read\nsize=1m\n");
    let errors: Vec<String> = [
        vec!["replay", b.to_str().unwrap(), "--format", "blkparse", "--set", "bogus"],
        vec!["simulate", job.to_str().unwrap(), "--set", "bogus"],
        vec!["bench", "--requests", "1000", "--set", "bogus"],
    ]
    .iter()
    .map(|args| {
        let out = headway(args);
        assert!(!out.status.success(), "{args:?}");
        let e = String::from_utf8_lossy(&out.stderr).to_string();
        e.lines().find(|l| l.contains("--set")).unwrap_or(&e).to_string()
    })
    .collect();
    assert!(errors.iter().all(|e| e == &errors[0] && e.contains("`bogus`")), "{errors:#?}");
}

/// An iolog that real fio recorded (`write_iolog`, timestamps in microseconds) replays at
/// the pace fio recorded: in open mode every request is submitted at its logged time less
/// the first one's. Needs fio (`make test` installs it): without it the test fails.
#[test]
fn a_fio_recorded_iolog_replays_at_its_pace() {
    let dir = std::env::temp_dir().join(format!("headway-fio-iolog-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fio = Command::new("fio")
        .args([
            "--name=x",
            "--filename=f.img",
            "--size=16m",
            "--rw=randread",
            "--bs=4k",
            "--number_ios=300",
            "--thinktime=200",
            "--write_iolog=x.iolog",
        ])
        .current_dir(&dir)
        .output()
        .expect("fio runs (make test installs it)");
    assert!(fio.status.success(), "fio: {}", String::from_utf8_lossy(&fio.stderr));
    let log = std::fs::read_to_string(dir.join("x.iolog")).unwrap();
    let reads: Vec<u64> = log
        .lines()
        .filter(|l| l.contains(" read "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(reads.len(), 300, "{log}");
    // fio's thinktime of 200 us between reads: the log is in microseconds
    let span_us = reads[reads.len() - 1] - reads[0];
    assert!(span_us >= 299 * 200, "the log spans {span_us} us");
    let out = headway(&[
        "replay",
        dir.join("x.iolog").to_str().unwrap(),
        "--format",
        "iolog",
        "--mode",
        "open",
        "--scheduler",
        "noop",
        "--quiet",
        "--per-request",
        dir.join("r.csv").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(dir.join("r.csv")).unwrap();
    let mut submits: Vec<u64> =
        csv.lines().skip(1).map(|l| l.split(',').nth(6).unwrap().parse().unwrap()).collect();
    submits.sort_unstable();
    let want: Vec<u64> = reads.iter().map(|t| (t - reads[0]) * 1000).collect();
    assert_eq!(submits, want, "each read submitted at its logged microsecond");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--format blktrace` against the real blkparse: binary per-CPU files (two CPUs, a notify
/// naming each process, completions besides the queue events) replay to the same report as
/// blkparse's own text of them. Needs blkparse (`make test` installs blktrace): without it
/// the test fails.
#[test]
fn blktrace_binary_replays_as_blkparse_prints_it() {
    use headway_sim::trace::blktrace::Event;
    let dir = std::env::temp_dir().join(format!("headway-blktrace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut cpus = [Vec::new(), Vec::new()];
    for (i, (name, pid)) in [("dd", 10u32), ("cat", 20)].iter().enumerate() {
        cpus[i].extend(Event::process(*pid, name, i as u32, 8 << 20).encode());
    }
    for i in 0..200u64 {
        let (pid, base, cats) = if i % 2 == 0 { (10, 0u64, 1u32) } else { (20, 100u64 << 21, 2 | 8) };
        let cpu = (i % 2) as usize;
        let q = Event {
            time: 1_000 + i * 1_000_000,
            sector: base + (i / 2) * 8,
            bytes: 4096,
            action: (cats << 16) | 1,
            pid,
            device: 8 << 20,
            cpu: cpu as u32,
            sequence: i as u32 + 1,
            pdu: Vec::new(),
        };
        let c = Event { time: q.time + 700_000, action: (cats << 16) | 8, ..q.clone() };
        cpus[cpu].extend(q.encode());
        cpus[cpu].extend(c.encode());
    }
    for (i, bytes) in cpus.iter().enumerate() {
        std::fs::write(dir.join(format!("sdb.blktrace.{i}")), bytes).unwrap();
    }
    let text = Command::new("blkparse")
        .args(["-i", "sdb", "-q"])
        .current_dir(&dir)
        .output()
        .expect("blkparse runs (make test installs blktrace)");
    assert!(text.status.success(), "blkparse: {}", String::from_utf8_lossy(&text.stderr));
    let blk = dir.join("sdb.txt");
    std::fs::write(&blk, &text.stdout).unwrap();
    let replay = |path: &std::path::Path, format: &str| {
        let out = headway(&[
            "replay",
            path.to_str().unwrap(),
            "--format",
            format,
            "--scheduler",
            "deadline,stream",
            "--json",
            "-",
        ]);
        assert!(out.status.success(), "{format}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let (from_text, from_binary) = (replay(&blk, "blkparse"), replay(&dir.join("sdb"), "blktrace"));
    assert!(
        from_text.contains("\"jobname\": \"dd[10]\"") && from_text.contains("\"jobname\": \"cat[20]\""),
        "{from_text}"
    );
    assert_eq!(from_binary, from_text);
    let _ = std::fs::remove_dir_all(&dir);
}

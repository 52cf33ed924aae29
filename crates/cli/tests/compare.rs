//! `headway compare`: a job simulated and served (real fio's nbd engine against `headway
//! serve --backend emulated:MODEL`), side by side. Needs fio (`make test` installs it):
//! without it the test fails.

use std::process::Command;

use serde_json::Value;

/// Random 64 KiB reads by two clients, 2 s per scheduler: the served bandwidth agrees with
/// the simulation given the measured client round trip (+link) within 25% (the 10% the
/// README reports is measured over 5 s runs on an otherwise idle machine); the round trip
/// and reply lag are measured, positive and below a millisecond at the median.
#[test]
fn compare_serves_and_simulates_the_same_job() {
    let dir = std::env::temp_dir().join(format!("headway-compare-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let job = dir.join("rand.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=psync\ndirect=1\nrw=randread\nbs=64k\nsize=1g\nnumjobs=2\noffset_increment=4g\n[random]\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_headway"))
        .args(["compare", job.to_str().unwrap(), "--serve-model", "wd5000aaks", "--scheduler", "noop,stream"])
        .args(["--runtime", "2s", "--json", "-", "--keep"])
        .arg(dir.join("kept"))
        .output()
        .expect("headway runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON alone on stdout");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        let j = &r["jobs"][0];
        assert_eq!(j["job"], "random");
        let (sim, linked, served) = (
            j["simulated_bw_bytes"].as_f64().unwrap(),
            j["linked_bw_bytes"].as_f64().unwrap(),
            j["served_bw_bytes"].as_f64().unwrap(),
        );
        // two random readers on a 7200 rpm model: a few MB/s, not a page cache's GB/s
        assert!(sim > 3e6 && sim < 20e6, "{r}");
        let ratio = served / linked;
        assert!(
            (0.75..=1.33).contains(&ratio),
            "{}: served {served} / linked {linked} = {ratio:.2}",
            r["scheduler"]
        );
        let (client, lag) =
            (r["client_round_trip_ns"].as_u64().unwrap(), r["reply_lag_ns"].as_u64().unwrap());
        assert!(client > 1_000 && client < 1_000_000 && lag > 0 && lag < 1_000_000, "{r}");
        assert!(r["client_round_trips"].as_u64().unwrap() > 50, "{r}");
        assert_eq!(r["host_overhead_ns"].as_u64(), Some(client + lag));
    }
    // the served runs' files are kept: fio's rewritten job and JSON, the trace, the log
    for f in ["noop.fio", "noop.fio.json", "noop.trace", "stream.serve.log"] {
        assert!(dir.join("kept").join(f).is_file(), "{f}");
    }
    let fio_job = std::fs::read_to_string(dir.join("kept/noop.fio")).unwrap();
    assert!(
        fio_job.contains("ioengine=nbd\nuri=nbd+unix:///?socket=") && !fio_job.contains("psync"),
        "{fio_job}"
    );
    // buffered jobs are refused: NBD has no client page cache
    std::fs::write(&job, "[r]\nrw=read\nsize=1m\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_headway"))
        .args(["compare", job.to_str().unwrap(), "--serve-model", "wd5000aaks"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rand.fio:1") && err.contains("job `r` is buffered") && err.contains("direct=1"),
        "{err}"
    );
}

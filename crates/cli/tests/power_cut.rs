//! Power cuts in the lab (issue 39, item 6): `headway lab power-cut` boots guests whose
//! disk QEMU caches, runs `headway serve` inside, writes from the host with FUA and FLUSH
//! on three connections, and kills QEMU at random moments. Two cuts per backend (`file`,
//! `emulated-write-back`) must lose no acknowledged durable write, and one control cut
//! with the server's sync removed must lose some (so the trials can fail). The long run
//! (15 cuts per backend) is in BENCHMARKS.md. Needs QEMU, busybox-static and a Debian
//! cloud kernel (`make deps`); fails without them.

use std::process::Command;

#[test]
fn power_cuts_lose_no_acknowledged_durable_write_and_the_control_does() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("trials.json");
    let out = Command::new(env!("CARGO_BIN_EXE_headway"))
        .args(["lab", "power-cut", "--trials", "2", "--control-trials", "1", "--seed", "7", "--out"])
        .arg(dir.path().join("trials"))
        .arg("--json")
        .arg(&json)
        .output()
        .expect("headway runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("{stderr}{stdout}");
    assert!(out.status.success(), "headway lab power-cut failed:\n{stderr}{stdout}");
    let trials: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let trials = trials.as_array().unwrap();
    assert_eq!(trials.len(), 5, "2 per backend and 1 control");
    let n = |t: &serde_json::Value, k: &str| t[k].as_u64().unwrap();
    for t in trials.iter().filter(|t| !t["control"].as_bool().unwrap()) {
        assert_eq!((n(t, "lost"), n(t, "foreign"), n(t, "errors")), (0, 0, 0), "{t}");
    }
    let real_durable: u64 =
        trials.iter().filter(|t| !t["control"].as_bool().unwrap()).map(|t| n(t, "durable")).sum();
    assert!(real_durable > 0, "no durable write before any cut");
    let control = trials.iter().find(|t| t["control"].as_bool().unwrap()).unwrap();
    assert!(n(control, "lost") > 0, "the control lost nothing: {control}");
    let backends: std::collections::BTreeSet<&str> =
        trials.iter().map(|t| t["backend"].as_str().unwrap()).collect();
    assert_eq!(backends, ["emulated-write-back", "file"].into_iter().collect());
}

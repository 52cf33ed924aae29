//! The `emulated:MODEL` backend in wall-clock time: a far read costs what the drive model
//! says, and real fio jobs over NBD see stream scheduling's advantage (issue 5, item 3).
//!
//! The exports are sparse files of 160-200 GiB in a temporary directory: nothing is
//! allocated (reads of holes return zeros), so any ext4/xfs/btrfs/tmpfs will do.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::Instant;

use headway_disk::{builtin, Hdd};
use headway_nbd::backend::Lateness;
use headway_nbd::proto::*;
use headway_nbd::transmission::{self as tx, RequestHeader};
use headway_nbd::{BackendKind, ContextMode};

const GIB: u64 = 1 << 30;
const MODEL: &str = "wd5000aaks";

mod common;
use common::{connect, fio_nbd, read_n, Running};

/// An `emulated:MODEL` export of `size` bytes (sparse), `--context none`.
fn start(scheduler: &str, size: u64) -> Running {
    Running::start(|cfg| {
        cfg.size = Some(size);
        cfg.backend = BackendKind::Emulated(MODEL.into());
        cfg.scheduler = scheduler.into();
        cfg.context = ContextMode::None;
    })
}

/// Stop the server; how late the delay line was.
fn stop(s: Running) -> Lateness {
    let late = s.lateness.clone();
    s.stop();
    let l = late.lock().unwrap().clone();
    l
}

/// One synchronous 4 KiB read; its wall-clock latency in ns.
fn timed_read(c: &mut UnixStream, cookie: u64, offset: u64) -> u64 {
    let t = Instant::now();
    c.write_all(&RequestHeader { flags: 0, ty: CMD_READ, cookie, offset, len: 4096 }.encode()).unwrap();
    let (r, _) = tx::decode_reply(&read_n(c, 16)).unwrap();
    assert_eq!(r, tx::Reply::Simple { error: 0, cookie });
    assert!(read_n(c, 4096).iter().all(|&b| b == 0), "a hole reads as zeros");
    t.elapsed().as_nanos() as u64
}

#[test]
fn emulated_far_reads_take_the_model_service_time_in_wall_clock() {
    let s = start("deadline", 200 * GIB);
    let (mut c, size) = connect(&s.sock);
    assert_eq!(size, 200 * GIB);
    let hdd = Hdd::new(builtin(MODEL).unwrap());
    let rev = hdd.spec().revolution().0;
    let over = hdd.spec().overheads.read_miss_after_read.0;
    // Alternate between the outer edge and 150 GiB in: every read is a long seek (and far
    // from the previous one's read-ahead). Each must take at least overhead + seek, and at
    // most that + one revolution + transfer, plus host slack.
    let (mut measured, mut floor) = (0u64, 0u64);
    let mut prev_cyl = 0u32;
    let mut worst_excess = 0i64;
    for i in 0..10u64 {
        let off = if i % 2 == 0 { 150 * GIB + i * (1 << 20) } else { i * (1 << 20) };
        let cyl = hdd.geometry().locate(off / 512).cylinder;
        let min = over + hdd.seek_time(cyl.abs_diff(prev_cyl)).0;
        prev_cyl = cyl;
        let took = timed_read(&mut c, i, off);
        eprintln!(
            "far read {i} at {:>3} GiB: {:.2} ms (model floor {:.2} ms, ceiling {:.2} ms)",
            off / GIB,
            took as f64 / 1e6,
            min as f64 / 1e6,
            (min + rev) as f64 / 1e6
        );
        assert!(took >= min, "read {i} took {took} ns, under the model's {min} ns");
        worst_excess = worst_excess.max(took as i64 - (min + rev) as i64);
        measured += took;
        floor += min;
    }
    drop(c);
    let late = stop(s);
    eprintln!(
        "10 far reads: {:.2} ms mean, model floor {:.2} ms mean (+ half a revolution {:.2} ms expected); \
         worst excess over floor + revolution {:.3} ms; delay line: {late}",
        measured as f64 / 1e7,
        floor as f64 / 1e7,
        rev as f64 / 2e6,
        worst_excess as f64 / 1e6
    );
    // Not absurdly more: the host round trip and the delay line's lateness, generously
    // bounded for a shared test machine.
    assert!(worst_excess < 5_000_000, "a far read took {worst_excess} ns more than the model allows");
    assert_eq!(late.count, 10);
}

/// fio's JSON output; fails the test if fio failed.
fn fio_output(out: &std::process::Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "fio failed:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
}

/// par-read over NBD: four synchronous sequential 4 KiB readers 51 GiB apart, one
/// connection each, for `RUNTIME`; aggregate read bandwidth, bytes/s.
fn par_read(s: &Running) -> f64 {
    let out = Command::new("fio")
        .args([
            "--name=par-read",
            "--ioengine=nbd",
            &format!("--uri={}", s.uri()),
            "--rw=read",
            "--bs=4k",
            "--size=1g",
            "--numjobs=4",
            "--offset_increment=51g",
            "--time_based",
            "--runtime=3s",
            "--output-format=json",
        ])
        .output()
        .unwrap();
    let v = fio_output(&out);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    jobs.iter().map(|j| j["read"]["bw_bytes"].as_f64().unwrap()).sum()
}

/// The must-show of issue 5: four synchronous sequential readers 51 GiB apart over NBD,
/// `--context none`, on `emulated:wd5000aaks`: stream at least 2x deadline in wall-clock
/// throughput.
///
/// Measured (shared 2-core VM, fio 3.33 nbd engine over a Unix socket): stream 40.7 MB/s,
/// deadline 0.49 MB/s, 79-85x in four runs. Deadline's four streams seek on every request:
/// each completion finds the other three clients' requests pending, so the modelled drive
/// never idles and its read-ahead never fills a stream's segment. (Before the scheduling
/// core ran on the threads that have the events, two thread hand-offs per request left the
/// drive idle often enough for read-ahead to turn deadline's seeks into cache hits: 0.7-1.5x.)
#[test]
fn fio_par_read_over_nbd_stream_at_least_twice_deadline_in_wall_clock() {
    fio_nbd();
    let mut bw = Vec::new();
    for sched in ["stream", "deadline"] {
        let s = start(sched, 160 * GIB);
        let b = par_read(&s);
        let late = stop(s);
        eprintln!("{sched}: {:.2} MB/s wall clock; delay line: {late}", b / 1e6);
        bw.push(b);
    }
    let ratio = bw[0] / bw[1];
    eprintln!("stream / deadline = {ratio:.1}x");
    assert!(ratio >= 2.0, "stream {:.2} MB/s vs deadline {:.2} MB/s: {ratio:.2}x", bw[0] / 1e6, bw[1] / 1e6);
}

/// One synchronous request (a write carries `len` zero bytes); its wall-clock latency in ns.
fn timed(c: &mut UnixStream, ty: u16, flags: u16, cookie: u64, offset: u64, len: u32) -> u64 {
    let t = Instant::now();
    c.write_all(&RequestHeader { flags, ty, cookie, offset, len }.encode()).unwrap();
    if ty == CMD_WRITE {
        c.write_all(&vec![0u8; len as usize]).unwrap();
    }
    let (r, _) = tx::decode_reply(&read_n(c, 16)).unwrap();
    assert_eq!(r, tx::Reply::Simple { error: 0, cookie });
    t.elapsed().as_nanos() as u64
}

/// `--write-cache back` on the emulated drive: scattered writes are acknowledged at buffer
/// speed, a FLUSH then waits for their destage (and a FUA write for its own); with the
/// default write-through every write pays the media and a FLUSH has nothing to wait for.
#[test]
fn emulated_write_back_acknowledges_early_and_flush_pays_the_destage() {
    let run = |wc: headway_disk::WriteCache| {
        let s = Running::start(|cfg| {
            cfg.size = Some(160 * GIB);
            cfg.backend = BackendKind::Emulated(MODEL.into());
            cfg.scheduler = "noop".into();
            cfg.write_cache = wc;
        });
        let (mut c, _) = connect(&s.sock);
        let writes: Vec<u64> =
            (0..6u64).map(|i| timed(&mut c, CMD_WRITE, 0, i, (i * 23 % 150) * GIB, 4096)).collect();
        let flush = timed(&mut c, CMD_FLUSH, 0, 10, 0, 0);
        let fua = timed(&mut c, CMD_WRITE, CMD_FLAG_FUA, 11, 77 * GIB, 4096);
        drop(c);
        s.stop();
        (writes, flush, fua)
    };
    let (wb, wb_flush, wb_fua) = run(headway_disk::WriteCache::Back);
    let (wt, wt_flush, wt_fua) = run(headway_disk::WriteCache::Through);
    let ms = |v: &[u64]| v.iter().map(|&x| x as f64 / 1e6).collect::<Vec<_>>();
    eprintln!(
        "write-back: writes {:.2?} ms, flush {:.2} ms, FUA write {:.2} ms; write-through: writes {:.2?} ms, \
         flush {:.2} ms, FUA write {:.2} ms",
        ms(&wb),
        wb_flush as f64 / 1e6,
        wb_fua as f64 / 1e6,
        ms(&wt),
        wt_flush as f64 / 1e6,
        wt_fua as f64 / 1e6
    );
    // the model: a far write-through write costs a seek (> 3 ms on wd5000aaks); a
    // write-back one only the command overhead and the bus (well under 1 ms, host slack
    // allowed)
    let median = |v: &[u64]| {
        let mut v = v.to_vec();
        v.sort_unstable();
        v[v.len() / 2]
    };
    assert!(median(&wt) > 3_000_000 && median(&wb) < median(&wt) / 2, "wb {wb:?} wt {wt:?}");
    // six scattered destages behind the flush: tens of ms; nothing behind it with write-through
    assert!(wb_flush > 15_000_000 && wb_flush > 4 * wt_flush, "flush: wb {wb_flush} ns, wt {wt_flush} ns");
    // a FUA write waits for its own destage on the write-back drive
    assert!(wb_fua > 3_000_000, "FUA write {wb_fua} ns");
}

/// Random 4 KiB reads over 150 GiB, 32 in flight, for 3 s; IOPS in wall-clock time.
fn random_iops(s: &Running) -> f64 {
    let out = Command::new(fio_nbd())
        .args([
            "--name=rand",
            "--ioengine=nbd",
            &format!("--uri={}", s.uri()),
            "--rw=randread",
            "--bs=4k",
            "--size=150g",
            "--iodepth=32",
            "--norandommap",
            "--randrepeat=1",
            "--time_based",
            "--runtime=3s",
            "--output-format=json",
        ])
        .output()
        .unwrap();
    fio_output(&out)["jobs"][0]["read"]["iops"].as_f64().unwrap()
}

/// `--queue-depth 8` on an emulated drive: the drive holds eight commands and picks among
/// them (its SPTF), so random reads with many in flight go faster than at depth 1, where
/// noop hands it one at a time in arrival order. The IO-path paper (002 §6.1, Figure 15)
/// measured such gains of up to about 2.5x at depth 32. The simulator on the same job
/// (`headway simulate` of this fio job with `ioengine=libaio`, `--disk wd5000aaks
/// --scheduler noop --queue-depth 1|8`) gives 117 and 192 IOPS, 1.64x; measured here 116
/// and 192 (1.66x). Band asserted: 1.4-1.9x.
#[test]
fn a_queued_emulated_drive_reorders_random_reads() {
    let mut iops = Vec::new();
    for depth in [1u32, 8] {
        let s = Running::start(|cfg| {
            cfg.size = Some(160 * GIB);
            cfg.backend = BackendKind::Emulated(MODEL.into());
            cfg.scheduler = "noop".into();
            cfg.context = ContextMode::None;
            cfg.queue_depth = Some(depth);
        });
        let x = random_iops(&s);
        let late = stop(s);
        eprintln!("depth {depth}: {x:.0} IOPS; delay line: {late}");
        iops.push(x);
    }
    let gain = iops[1] / iops[0];
    eprintln!("depth 8 / depth 1 = {gain:.2}x");
    assert!(
        (1.4..=1.9).contains(&gain),
        "depth 8 {:.0} IOPS against depth 1 {:.0}: {gain:.2}x",
        iops[1],
        iops[0]
    );
}

/// An emulated hard disk says so (NBD_FLAG_ROTATIONAL, from which Linux's nbd driver sets
/// the queue's `rotational`); a file export, which is no disk of its own, does not.
#[test]
fn an_emulated_export_is_rotational_and_a_file_is_not() {
    let s = start("noop", GIB);
    let (_c, _, flags) = common::connect_with_flags(&s.sock);
    assert_ne!(flags & FLAG_ROTATIONAL, 0, "flags {flags:#x}");
    let f = Running::start(|cfg| cfg.size = Some(1 << 20));
    let (_c, _, flags) = common::connect_with_flags(&f.sock);
    assert_eq!(flags & FLAG_ROTATIONAL, 0, "flags {flags:#x}");
}

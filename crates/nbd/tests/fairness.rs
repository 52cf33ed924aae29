//! One client's durability work does not hold another client's reads behind it (issue
//! 39, item 3).
//!
//! A `file` export with the defaults (noop, the fitted queue depth). Client A keeps 32 FUA
//! WRITEs of 64 KiB in flight; client B reads 4 KiB at a time at random offsets. Each FUA
//! write waits for an fdatasync of the export; a read needs none. Before the fix, each FUA
//! write held the export's one slot through its sync, and B's reads queued behind 32 of
//! them: B's median read took as long as A's median FUA write (8 ms each, measured). Now
//! a written FUA write gives its slot back and waits for the next sync beside FLUSHes, so
//! B's reads are answered while A's writes wait: the test asks B's median to be under a
//! fifth of A's, in the same run (measured: a two-hundredth).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use headway_nbd::proto::*;
use headway_nbd::transmission::RequestHeader;

mod common;
use common::{connect, Running};

const SIZE: u64 = 64 << 20;
const WRITE: u32 = 64 << 10;
const DEPTH: u64 = 32;
const READ: u32 = 4096;
const RUN: Duration = Duration::from_millis(1500);

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Keep `DEPTH` FUA writes in flight until `stop`; each one's latency.
fn flood(mut c: UnixStream, stop: Arc<AtomicBool>) -> Vec<Duration> {
    let data = common::pattern(WRITE as usize, 3);
    let mut sent: HashMap<u64, Instant> = HashMap::new();
    let mut took = Vec::new();
    let mut next = 0u64;
    let mut reply = [0u8; 16];
    loop {
        while !stop.load(Ordering::SeqCst) && sent.len() < DEPTH as usize {
            let offset = (next * 7919 % (SIZE / WRITE as u64)) * WRITE as u64;
            let h = RequestHeader { flags: CMD_FLAG_FUA, ty: CMD_WRITE, cookie: next, offset, len: WRITE };
            c.write_all(&h.encode()).unwrap();
            c.write_all(&data).unwrap();
            sent.insert(next, Instant::now());
            next += 1;
        }
        if sent.is_empty() {
            return took;
        }
        c.read_exact(&mut reply).unwrap();
        assert_eq!(u32::from_be_bytes(reply[4..8].try_into().unwrap()), 0, "a FUA write failed");
        let cookie = u64::from_be_bytes(reply[8..].try_into().unwrap());
        took.push(sent.remove(&cookie).unwrap().elapsed());
    }
}

#[test]
fn fua_writes_do_not_hold_another_clients_reads_behind_their_syncs() {
    let srv = Running::start(|cfg| {
        cfg.size = Some(SIZE);
        cfg.scheduler = "noop".into();
    });
    let (writer, _) = connect(&srv.sock);
    let (mut reader, _) = connect(&srv.sock);
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let flooding = std::thread::spawn(move || flood(writer, s));
    std::thread::sleep(Duration::from_millis(200));
    let mut reads = Vec::new();
    let mut buf = vec![0u8; 16 + READ as usize];
    let t0 = Instant::now();
    let mut i = 0u64;
    while t0.elapsed() < RUN {
        let offset = (i * 104_729 % (SIZE / READ as u64)) * READ as u64;
        let t = Instant::now();
        reader
            .write_all(&RequestHeader { flags: 0, ty: CMD_READ, cookie: i, offset, len: READ }.encode())
            .unwrap();
        reader.read_exact(&mut buf).unwrap();
        reads.push(t.elapsed());
        assert_eq!(u32::from_be_bytes(buf[4..8].try_into().unwrap()), 0, "a read failed");
        i += 1;
    }
    stop.store(true, Ordering::SeqCst);
    let writes = flooding.join().unwrap();
    let (r, w) = (median(reads.clone()), median(writes.clone()));
    eprintln!(
        "beside {DEPTH} FUA writes in flight: {} reads, median {r:?}; {} FUA writes, median {w:?}",
        reads.len(),
        writes.len()
    );
    assert!(writes.len() as u64 > DEPTH, "the flood wrote too little to judge: {}", writes.len());
    assert!(r * 5 < w, "reads waited behind the syncs: median read {r:?}, median FUA write {w:?}");
}

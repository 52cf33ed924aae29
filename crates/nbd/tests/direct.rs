//! `headway serve --backend direct` end to end: the server started as `interop.rs` starts
//! it, with the O_DIRECT backend, against a hand-driven socket (no tools needed) and real
//! clients (qemu-io, nbdsh; a test whose client is missing says so on stderr and returns).
//!
//! The exports live under the target directory (`CARGO_TARGET_TMPDIR`), not `/tmp`, which
//! may be a tmpfs without O_DIRECT. Where the file system refuses O_DIRECT, `bind` must say
//! so, and the test checks that message and returns.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;

use headway_nbd::handshake::{self as hs, ClientOption};
use headway_nbd::proto::*;
use headway_nbd::transmission::{self as tx, RequestHeader};
use headway_nbd::{BackendKind, ServeError};

mod common;
use common::{nbdsh, pattern, read_n, run, tool, Running};

/// A direct export of `size` bytes (a new file) under the target directory, or `None`
/// where the file system refuses O_DIRECT (after checking `bind` says so).
fn start(size: u64, queue_depth: u32) -> Option<Running> {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let started = Running::start_in(dir, |cfg| {
        cfg.size = Some(size);
        cfg.backend = BackendKind::Direct;
        cfg.queue_depth = Some(queue_depth);
    });
    match started {
        Ok(s) => Some(s),
        Err(e @ ServeError::Export { .. }) => {
            let why = std::error::Error::source(&e).unwrap().to_string();
            assert!(why.contains("O_DIRECT is not supported on this file system"), "{e}: {why}");
            eprintln!("SKIPPED: {e}: {why}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().len()
}

#[test]
fn raw_client_unaligned_pipeline_on_an_odd_sized_direct_export() {
    // 1 MiB and 1000 bytes: the last 1000 go through the buffered descriptor.
    const SIZE: u64 = (1 << 20) + 1000;
    let Some(s) = start(SIZE, 4) else { return };
    let mut c = UnixStream::connect(&s.sock).unwrap();
    assert_eq!(&read_n(&mut c, 18)[..], &hs::greeting()[..]);
    c.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
    c.write_all(&ClientOption::ExportName(String::new()).encode()).unwrap();
    assert_eq!(u64::from_be_bytes(read_n(&mut c, 10)[..8].try_into().unwrap()), SIZE);
    // Pipelined writes of odd offsets and lengths, several sharing blocks, one at the end.
    let mut model = vec![0u8; SIZE as usize];
    let writes: Vec<(u64, usize)> = (0..40u64)
        .map(|i| (i * 12_289 % (SIZE - 9000), 1 + (i as usize * 977) % 9000))
        .chain([(SIZE - 700, 700), (SIZE - 5000, 4500)])
        .collect();
    // Writes in flight together must not overlap (their order is the server's); these are
    // sent in rounds of disjoint ones.
    let mut rounds: Vec<Vec<(usize, u64, usize)>> = Vec::new();
    for (i, &(o, n)) in writes.iter().enumerate() {
        let overlaps =
            |r: &Vec<(usize, u64, usize)>| r.iter().any(|&(_, p, m)| o < p + m as u64 && p < o + n as u64);
        match rounds.iter_mut().find(|r| !overlaps(r)) {
            Some(r) => r.push((i, o, n)),
            None => rounds.push(vec![(i, o, n)]),
        }
    }
    for r in &rounds {
        for &(i, o, n) in r {
            let data = pattern(n, i as u64);
            let h = RequestHeader { flags: 0, ty: CMD_WRITE, cookie: i as u64, offset: o, len: n as u32 };
            c.write_all(&h.encode()).unwrap();
            c.write_all(&data).unwrap();
        }
        for _ in r {
            let (rep, _) = tx::decode_reply(&read_n(&mut c, 16)).unwrap();
            assert!(matches!(rep, tx::Reply::Simple { error: 0, .. }), "{rep:?}");
        }
        // Applied to the model in order of the rounds: within a round the writes are disjoint.
        let mut in_order = r.clone();
        in_order.sort();
        for &(i, o, n) in &in_order {
            model[o as usize..o as usize + n].copy_from_slice(&pattern(n, i as u64));
        }
    }
    c.write_all(&RequestHeader { flags: 0, ty: CMD_FLUSH, cookie: 100, offset: 0, len: 0 }.encode()).unwrap();
    assert_eq!(tx::decode_reply(&read_n(&mut c, 16)).unwrap().0, tx::Reply::Simple { error: 0, cookie: 100 });
    // Reads of odd ranges, pipelined.
    let reads: Vec<(u64, u32)> = (0..30u64)
        .map(|i| (i * 35_111 % (SIZE - 20_000), 1 + (i as u32 * 6007) % 20_000))
        .chain([(SIZE - 1, 1)])
        .collect();
    for (i, &(o, n)) in reads.iter().enumerate() {
        c.write_all(
            &RequestHeader { flags: 0, ty: CMD_READ, cookie: 1000 + i as u64, offset: o, len: n }.encode(),
        )
        .unwrap();
    }
    for _ in 0..reads.len() {
        let (rep, _) = tx::decode_reply(&read_n(&mut c, 16)).unwrap();
        let tx::Reply::Simple { error: 0, cookie } = rep else { panic!("{rep:?}") };
        let (o, n) = reads[(cookie - 1000) as usize];
        let data = read_n(&mut c, n as usize);
        assert!(data[..] == model[o as usize..(o + n as u64) as usize], "read {o}+{n}");
    }
    c.write_all(&RequestHeader { flags: 0, ty: CMD_DISC, cookie: 8, offset: 0, len: 0 }.encode()).unwrap();
    let mut rest = Vec::new();
    c.read_to_end(&mut rest).unwrap();
    let dir = s.stop();
    let img = dir.path().join("disk.img");
    assert_eq!(file_len(&img), SIZE);
    assert!(std::fs::read(&img).unwrap() == model);
}

#[test]
fn qemu_io_round_trip_on_a_direct_export() {
    let qemu_io = tool("qemu-io");
    let Some(s) = start(64 << 20, 1) else { return };
    let out = run(Command::new(qemu_io).args([
        "-f",
        "raw",
        &s.uri(),
        "-c",
        "write -f -P 0x3c 1M 64k",
        "-c",
        "write -P 0x11 1000 3000",
        "-c",
        "write -z 5000 10000",
        "-c",
        "write -P 0x22 4095 2",
        "-c",
        "flush",
        "-c",
        "read -P 0x3c 1M 64k",
        "-c",
        "read -P 0x11 1000 3000",
        "-c",
        "read -P 0x22 4095 2",
        "-c",
        "read -P 0 5000 10000",
    ]));
    assert!(!out.contains("fail") && !out.contains("Pattern verification"), "{out}");
    let dir = s.stop();
    let img = dir.path().join("disk.img");
    let f = std::fs::read(&img).unwrap();
    assert_eq!(f.len(), 64 << 20);
    assert!(f[1 << 20..(1 << 20) + (64 << 10)].iter().all(|&b| b == 0x3c));
    assert!(f[1000..4000].iter().all(|&b| b == 0x11));
    assert!(f[4095..4097].iter().all(|&b| b == 0x22));
    assert!(f[5000..15000].iter().all(|&b| b == 0));
}

#[test]
fn nbdsh_concurrent_unaligned_writes_and_a_model() {
    let mut sh = nbdsh();
    // Queue depth 4: several workers read-modify-write the same blocks at once.
    let Some(s) = start((8 << 20) + 1234, 4) else { return };
    let script = r#"
import random
size = h.get_size()
assert size == 8 * 1024 * 1024 + 1234, size
rnd = random.Random(5)
model = bytearray(size)
# 64 writes in flight together, disjoint bytes, many in the same 4 KiB blocks.
cookies = []
for i in range(64):
    off = 4096 + i * 97
    data = bytes([i + 1]) * 61
    model[off:off + 61] = data
    cookies.append(h.aio_pwrite(data, off))
# and some across the partial last block
for i in range(8):
    off = size - 4200 + i * 520
    data = bytes([200 + i]) * 500
    model[off:off + 500] = data
    cookies.append(h.aio_pwrite(data, off))
pending = set(cookies)
while pending:
    # aio_command_completed retires a command (or raises its error): ask once each.
    pending = {c for c in pending if not h.aio_command_completed(c)}
    if pending and h.poll(30000) == 0:
        raise SystemExit("no reply in 30 s")
assert h.pread(16384, 0) == bytes(model[:16384])
# Random single ops against the model.
for _ in range(300):
    n = rnd.choice([1, 7, 511, 4095, 4096, 4097, 10000])
    off = rnd.randrange(0, size - n + 1)
    k = rnd.random()
    if k < 0.45:
        data = rnd.randbytes(n)
        h.pwrite(data, off, nbd.CMD_FLAG_FUA if rnd.random() < 0.2 else 0)
        model[off:off + n] = data
    elif k < 0.55:
        h.zero(n, off)
        model[off:off + n] = bytes(n)
    else:
        assert h.pread(n, off) == bytes(model[off:off + n]), (off, n)
h.flush()
for off in range(0, size, 1 << 20):
    n = min(1 << 20, size - off)
    assert h.pread(n, off) == bytes(model[off:off + n]), off
open(OUT, "wb").write(model)
print("ok")
"#;
    let model_path = s.path("model.bin");
    let script = format!("OUT = {:?}\n{script}", model_path.display().to_string());
    let out = run(sh.args(["-u", &s.uri(), "-c", &script]));
    assert!(out.contains("ok"), "{out}");
    let model = std::fs::read(&model_path).unwrap();
    let dir = s.stop();
    let img = dir.path().join("disk.img");
    assert_eq!(file_len(&img), (8 << 20) + 1234);
    assert!(std::fs::read(&img).unwrap() == model);
}

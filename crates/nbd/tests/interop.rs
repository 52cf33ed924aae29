//! The server against real NBD clients (nbdinfo, nbdcopy, nbdsh from libnbd; qemu-io and
//! qemu-img from QEMU; fio's nbd engine) and against a hand-driven socket speaking the
//! codec. `make deps` installs the clients; a test whose client is missing says so on
//! stderr and returns.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::Command;

use headway_nbd::handshake::{self as hs, ClientOption};
use headway_nbd::proto::*;
use headway_nbd::transmission::{self as tx, RequestHeader};

mod common;
use common::{fio_nbd, nbdsh, random_file, read_n, run, tool, Running};

/// A 64 MiB export (or, `read_only`, an 8 MiB file of 0x5a bytes served read-only).
fn start(read_only: bool, scheduler: &str) -> Running {
    let dir = tempfile::tempdir().unwrap();
    if read_only {
        std::fs::write(dir.path().join("disk.img"), vec![0x5au8; 8 << 20]).unwrap();
    }
    Running::start_in(dir, |cfg| {
        cfg.size = (!read_only).then_some(64 << 20);
        cfg.read_only = read_only;
        cfg.scheduler = scheduler.into();
    })
    .unwrap()
}

#[test]
fn nbdinfo_shows_size_flags_and_block_sizes() {
    let nbdinfo = tool("nbdinfo");
    let s = start(false, "stream");
    let out = run(Command::new(nbdinfo).arg(s.uri()));
    for want in [
        "export-size: 67108864",
        "block_size_minimum: 1",
        "block_size_preferred: 4096",
        "block_size_maximum: 33554432",
        "can_flush: true",
        "can_fua: true",
        "can_multi_conn: true",
        "is_read_only: false",
        "structured",
    ] {
        assert!(out.contains(want), "nbdinfo lacks `{want}`:\n{out}");
    }
    s.stop();
}

#[test]
fn nbdcopy_many_connections_round_trip_and_qemu_io_sees_the_same_data() {
    let nbdcopy = tool("nbdcopy");
    let qemu_io = tool("qemu-io");
    for sched in ["stream", "deadline", "antic"] {
        let s = start(false, sched);
        let src = s.path("src.bin");
        let data = random_file(&src, 16 << 20);
        // Four connections, 16 requests in flight each, 256 KiB requests.
        run(Command::new(nbdcopy)
            .args(["-C", "4", "-R", "16", "--request-size=262144"])
            .arg(&src)
            .arg(s.uri()));
        let back = s.path("back.bin");
        run(Command::new(nbdcopy).args(["-C", "4", "-R", "16"]).arg(s.uri()).arg(&back));
        let got = std::fs::read(&back).unwrap();
        assert_eq!(got.len(), 64 << 20);
        assert!(got[..data.len()] == data[..], "{sched}: data read back differs");
        // Another client, another request size: qemu-io checks a 64 KiB slice by pattern
        // after overwriting it with FUA, then flushes.
        let out = run(Command::new(qemu_io).args([
            "-f",
            "raw",
            &s.uri(),
            "-c",
            "write -f -P 0x3c 1M 64k",
            "-c",
            "flush",
            "-c",
            "read -P 0x3c 1M 64k",
        ]));
        assert!(!out.contains("fail"), "{out}");
        s.stop();
    }
}

#[test]
fn data_reaches_the_file_by_the_time_shutdown_returns() {
    let qemu_io = tool("qemu-io");
    let s = start(false, "stream");
    run(Command::new(qemu_io).args([
        "-f",
        "raw",
        &s.uri(),
        "-c",
        "write -P 0x77 4096 8192",
        "-c",
        "write -z 6144 1024",
    ]));
    let dir = s.stop();
    let f = std::fs::read(dir.path().join("disk.img")).unwrap();
    assert!(f[4096..6144].iter().all(|&b| b == 0x77));
    assert!(f[6144..7168].iter().all(|&b| b == 0));
    assert!(f[7168..12288].iter().all(|&b| b == 0x77));
}

#[test]
fn read_only_export_refuses_writes_with_eperm() {
    let mut sh = nbdsh();
    let s = start(true, "deadline");
    let script = r#"
import errno
assert h.is_read_only()
assert h.pread(4096, 0) == b"\x5a" * 4096
h.set_strict_mode(0)
try:
    h.pwrite(b"x" * 512, 0)
    raise SystemExit("write succeeded on a read-only export")
except nbd.Error as e:
    assert e.errnum == errno.EPERM, e
print("ok")
"#;
    let out = run(sh.args(["-u", &s.uri(), "-c", script]));
    assert!(out.contains("ok"), "{out}");
    s.stop();
}

#[test]
fn out_of_range_requests_get_einval_or_enospc() {
    let mut sh = nbdsh();
    let s = start(false, "stream");
    let script = r#"
import errno
h.set_strict_mode(0)
size = h.get_size()
for op, want in ((lambda: h.pread(1024, size - 512), errno.EINVAL),
                 (lambda: h.pwrite(b"y" * 1024, size - 512), errno.ENOSPC),
                 (lambda: h.zero(4096, size), errno.ENOSPC)):
    try:
        op()
        raise SystemExit("out-of-range request succeeded")
    except nbd.Error as e:
        assert e.errnum == want, (e, want)
h.pwrite(b"z" * 512, size - 512, nbd.CMD_FLAG_FUA)
h.flush()
assert h.pread(512, size - 512) == b"z" * 512
print("ok")
"#;
    let out = run(sh.args(["-u", &s.uri(), "-c", script]));
    assert!(out.contains("ok"), "{out}");
    s.stop();
}

// --- A hand-driven client: oldest-style negotiation and simple replies, no tools needed.

#[test]
fn raw_client_export_name_simple_replies_out_of_order_pipeline() {
    let s = start(false, "stream");
    let mut c = UnixStream::connect(&s.sock).unwrap();
    let g = read_n(&mut c, 18);
    assert_eq!(&g[..], &hs::greeting()[..]);
    c.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
    // An unknown option is refused with ERR_UNSUP, and negotiation goes on.
    c.write_all(&ClientOption::Unknown(99).encode()).unwrap();
    let (r, _) = hs::decode_option_reply(&read_n(&mut c, 20)).unwrap();
    assert_eq!(r.reply, REP_ERR_UNSUP);
    c.write_all(&ClientOption::ExportName(String::new()).encode()).unwrap();
    let e = read_n(&mut c, 10);
    assert_eq!(u64::from_be_bytes(e[..8].try_into().unwrap()), 64 << 20);
    // Pipeline: 32 writes at scattered offsets, then a flush, then 32 reads.
    let offs: Vec<u64> = (0..32u64).map(|i| (i * 7919 % 32) * (1 << 20)).collect();
    for (i, &o) in offs.iter().enumerate() {
        let h = RequestHeader { flags: 0, ty: CMD_WRITE, cookie: i as u64, offset: o, len: 4096 };
        c.write_all(&h.encode()).unwrap();
        c.write_all(&[i as u8; 4096]).unwrap();
    }
    let mut seen = [false; 32];
    for _ in 0..32 {
        let (r, _) = tx::decode_reply(&read_n(&mut c, 16)).unwrap();
        let tx::Reply::Simple { error, cookie } = r else { panic!() };
        assert_eq!(error, 0);
        seen[cookie as usize] = true;
    }
    assert!(seen.iter().all(|&x| x));
    c.write_all(&RequestHeader { flags: 0, ty: CMD_FLUSH, cookie: 100, offset: 0, len: 0 }.encode()).unwrap();
    assert_eq!(tx::decode_reply(&read_n(&mut c, 16)).unwrap().0, tx::Reply::Simple { error: 0, cookie: 100 });
    for (i, &o) in offs.iter().enumerate() {
        let h = RequestHeader { flags: 0, ty: CMD_READ, cookie: 1000 + i as u64, offset: o, len: 4096 };
        c.write_all(&h.encode()).unwrap();
    }
    for _ in 0..32 {
        let (r, _) = tx::decode_reply(&read_n(&mut c, 16)).unwrap();
        let tx::Reply::Simple { error: 0, cookie } = r else { panic!("{r:?}") };
        let data = read_n(&mut c, 4096);
        assert!(data.iter().all(|&b| b == (cookie - 1000) as u8));
    }
    // A write past the end: ENOSPC, and the connection stays usable.
    let h = RequestHeader { flags: 0, ty: CMD_WRITE, cookie: 7, offset: (64 << 20) - 512, len: 1024 };
    c.write_all(&h.encode()).unwrap();
    c.write_all(&[0u8; 1024]).unwrap();
    assert_eq!(tx::decode_reply(&read_n(&mut c, 16)).unwrap().0, tx::Reply::Simple { error: 28, cookie: 7 });
    c.write_all(&RequestHeader { flags: 0, ty: CMD_DISC, cookie: 8, offset: 0, len: 0 }.encode()).unwrap();
    let mut rest = Vec::new();
    c.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    s.stop();
}

/// fio's nbd engine writes checksummed blocks over two connections; a second fio run
/// verifies every block through new connections; qemu-img copies the export out and
/// nbdsh hashes it over NBD: both agree with the file on disk, byte for byte.
#[test]
fn fio_writes_and_verifies_qemu_img_and_nbdsh_read_the_same_bytes() {
    let fio = tool("fio");
    let qemu_img = tool("qemu-img");
    let mut sh = nbdsh();
    fio_nbd();
    let s = start(false, "deadline");
    let job = |extra: &[&str]| {
        let mut c = Command::new(fio);
        c.args(["--name=w", "--ioengine=nbd", "--rw=randwrite", "--bs=16k", "--size=16m"])
            .args(["--iodepth=8", "--numjobs=2", "--offset_increment=16m", "--verify=crc32c"])
            .args(["--verify_state_save=0", "--randrepeat=1", "--output-format=terse"])
            .arg(format!("--uri={}", s.uri()))
            .args(extra);
        c
    };
    run(&mut job(&["--do_verify=0"]));
    // Same job, verification only: reads every block back and checks its checksum.
    let out = run(&mut job(&["--verify_only=1"]));
    assert!(!out.contains("verify: bad"), "{out}");
    let copy = s.path("copy.raw");
    run(Command::new(qemu_img).args(["convert", "-f", "raw", "-O", "raw"]).arg(s.uri()).arg(&copy));
    let disk = std::fs::read(s.path("disk.img")).unwrap();
    assert!(disk[..32 << 20].iter().any(|&b| b != 0), "fio wrote the first 32 MiB");
    assert!(std::fs::read(&copy).unwrap() == disk, "qemu-img's copy differs from the export file");
    let script = "import hashlib\nd = hashlib.sha256()\nsize = h.get_size()\n\
                  for off in range(0, size, 1 << 20):\n    d.update(h.pread(min(1 << 20, size - off), off))\n\
                  print(d.hexdigest())\n";
    let out = run(sh.args(["-u", &s.uri(), "-c", script]));
    let sum = run(Command::new("sha256sum").arg(s.path("disk.img")));
    let want = sum.split_whitespace().next().unwrap();
    assert!(out.contains(want), "nbdsh's sha256 {out} differs from the file's {want}");
    s.stop();
}

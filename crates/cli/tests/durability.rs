//! Crash durability of `headway serve` (issue 5): every write the server acknowledged as
//! durable — a WRITE with FUA, or any WRITE whose reply arrived before a FLUSH was sent and
//! that FLUSH was acknowledged — must be in the export file after the server is killed with
//! SIGKILL at a random moment.
//!
//! Why the test lives in the cli crate: it runs the real binary, and Cargo only builds a
//! binary for (and hands `CARGO_BIN_EXE_<name>` to) the integration tests of the package
//! that defines it. `headway-nbd` cannot name the binary without a path guess into the
//! target directory, so the test sits beside `cli.rs` and uses `env!("CARGO_BIN_EXE_headway")`.
//!
//! What it proves and what it does not: SIGKILL kills the process, not the kernel, so data
//! the server `pwrite`s stays in the page cache and is read back below whether or not it was
//! ever `fdatasync`ed. The test therefore checks the server's side of the contract — a reply
//! is never sent before the `pwrite` it acknowledges has returned, and a FLUSH reply is never
//! sent before the writes acknowledged ahead of it are in the file (FLUSH ordering against
//! the scheduler's queue) — on every connection, since the server advertises CAN_MULTI_CONN.
//! It cannot tell a missing `fdatasync` from a present one. A power-loss test needs more: a
//! device that drops its volatile cache at the cut (dm-log-writes replay, dm-flakey with
//! `drop_writes`, or a VM whose disk is cut), none of which a unit test can own.
//!
//! The load: three connections (issue 17: FLUSHes from several connections share syncs), each pipelining up to [`DEPTH`] requests; writes of 512 B to
//! 32 KiB at distinct, non-overlapping offsets (so the expected content of every sector is
//! known exactly), a third of them FUA, and a FLUSH every few writes on either connection.
//! Every 512-byte sector written carries (tag, write sequence number, its own byte offset)
//! and a filler derived from both, so a lost, stale, torn-across-sectors or misdirected
//! write is told apart from a missing one. The kill delays come from a seeded generator;
//! what the server has done by then depends on the machine, so failures print the seed,
//! iteration and delay.
//!
//! The client is written here from doc/proto.md rather than borrowed from `headway-nbd`, so
//! a codec bug shared by server and client cannot hide a loss.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Server runs per scheduler.
const ITERATIONS: u32 = 30;
/// Export size, as `--size` is given.
const EXPORT_BYTES: u64 = 64 << 20;
/// Each write owns one slot of this size, so no two writes overlap.
const SLOT_BYTES: u64 = 32 << 10;
const SECTOR: u64 = 512;
/// Client connections, and requests in flight on each.
const CONNECTIONS: usize = 3;
const DEPTH: usize = 8;
/// Kill delay after every connection is in transmission: uniform in [MIN, MIN + SPAN).
const KILL_MIN: Duration = Duration::from_millis(2);
const KILL_SPAN_MS: u64 = 120;
/// A FLUSH after about this many writes on a connection.
const FLUSH_EVERY: u64 = 6;
/// First 8 bytes of every written sector.
const TAG: u64 = 0x4857_4455_5241_424c; // "HWDURABL"

// Wire constants of doc/proto.md.
const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
const OPT_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
const OPT_GO: u32 = 7;
const REP_ACK: u32 = 1;
const REP_INFO: u32 = 3;
const INFO_EXPORT: u16 = 0;
const FLAG_SEND_FLUSH: u16 = 1 << 2;
const FLAG_SEND_FUA: u16 = 1 << 3;
const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;
const REQUEST_MAGIC: u32 = 0x2560_9513;
const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
const CMD_WRITE: u16 = 1;
const CMD_FLUSH: u16 = 3;
const CMD_FLAG_FUA: u16 = 1;
/// Cookies with this bit are FLUSHes; the others are write sequence numbers.
const FLUSH_COOKIE: u64 = 1 << 63;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The bytes of the sector at `offset` written by write `seq`.
fn sector_bytes(seq: u64, offset: u64) -> [u8; SECTOR as usize] {
    let mut s = [0u8; SECTOR as usize];
    s[..8].copy_from_slice(&TAG.to_le_bytes());
    s[8..16].copy_from_slice(&seq.to_le_bytes());
    s[16..24].copy_from_slice(&offset.to_le_bytes());
    let mut x = seq.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ offset;
    for b in &mut s[24..] {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *b = (x >> 56) as u8;
    }
    s
}

#[derive(Clone, Debug)]
struct Write1 {
    conn: usize,
    offset: u64,
    len: u64,
    fua: bool,
    acked: bool,
    durable: bool,
}

/// What the client knows, shared by every connection's threads.
#[derive(Default)]
struct Log {
    /// By sequence number (= cookie).
    writes: Vec<Write1>,
    /// Sequence numbers in the order their successful replies arrived.
    acked: Vec<u64>,
    /// FLUSH cookie → how many entries of `acked` it covers (taken before it was sent).
    flushes: HashMap<u64, usize>,
    flushes_acked: u64,
    /// Error replies: there should be none.
    errors: Vec<String>,
    /// Slots not yet written, popped from the end.
    free_slots: Vec<u64>,
}

/// Fixed newstyle handshake with NBD_OPT_GO for the default export; returns the
/// transmission flags.
fn handshake(s: &mut UnixStream) -> u16 {
    let mut g = [0u8; 18];
    s.read_exact(&mut g).unwrap();
    assert_eq!(u64::from_be_bytes(g[..8].try_into().unwrap()), NBDMAGIC);
    assert_eq!(u64::from_be_bytes(g[8..16].try_into().unwrap()), IHAVEOPT);
    // Client flags: FIXED_NEWSTYLE | NO_ZEROES.
    s.write_all(&3u32.to_be_bytes()).unwrap();
    let mut opt = Vec::new();
    opt.extend_from_slice(&IHAVEOPT.to_be_bytes());
    opt.extend_from_slice(&OPT_GO.to_be_bytes());
    opt.extend_from_slice(&6u32.to_be_bytes()); // name length (4) + info count (2)
    opt.extend_from_slice(&0u32.to_be_bytes()); // "" — the default export
    opt.extend_from_slice(&0u16.to_be_bytes()); // no information requests
    s.write_all(&opt).unwrap();
    let mut flags = None;
    loop {
        let mut h = [0u8; 20];
        s.read_exact(&mut h).unwrap();
        assert_eq!(u64::from_be_bytes(h[..8].try_into().unwrap()), OPT_REPLY_MAGIC);
        assert_eq!(u32::from_be_bytes(h[8..12].try_into().unwrap()), OPT_GO);
        let ty = u32::from_be_bytes(h[12..16].try_into().unwrap());
        let mut data = vec![0u8; u32::from_be_bytes(h[16..20].try_into().unwrap()) as usize];
        s.read_exact(&mut data).unwrap();
        match ty {
            REP_INFO if u16::from_be_bytes([data[0], data[1]]) == INFO_EXPORT => {
                assert_eq!(u64::from_be_bytes(data[2..10].try_into().unwrap()), EXPORT_BYTES);
                flags = Some(u16::from_be_bytes([data[10], data[11]]));
            }
            REP_INFO => {}
            REP_ACK => return flags.expect("NBD_INFO_EXPORT before the ACK"),
            _ => panic!("NBD_OPT_GO refused: reply type {ty:#x}"),
        }
    }
}

fn request(flags: u16, ty: u16, cookie: u64, offset: u64, len: u32) -> [u8; 28] {
    let mut r = [0u8; 28];
    r[..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
    r[4..6].copy_from_slice(&flags.to_be_bytes());
    r[6..8].copy_from_slice(&ty.to_be_bytes());
    r[8..16].copy_from_slice(&cookie.to_be_bytes());
    r[16..24].copy_from_slice(&offset.to_be_bytes());
    r[24..28].copy_from_slice(&len.to_be_bytes());
    r
}

/// Sends writes and flushes until the slots run out or the socket dies. `tokens` bounds
/// the requests in flight; the receiver hands one back per reply.
fn send_loop(conn: usize, mut s: UnixStream, log: Arc<Mutex<Log>>, tokens: mpsc::Receiver<()>, seed: u64) {
    let mut rng = Rng(seed | 1);
    let mut since_flush = 0u64;
    let mut flushes = 0u64;
    while tokens.recv().is_ok() {
        let msg = if since_flush >= FLUSH_EVERY && rng.below(2) == 0 {
            since_flush = 0;
            flushes += 1;
            let cookie = FLUSH_COOKIE | (conn as u64) << 32 | flushes;
            let mut l = log.lock().unwrap();
            let covered = l.acked.len();
            l.flushes.insert(cookie, covered);
            request(0, CMD_FLUSH, cookie, 0, 0).to_vec()
        } else {
            let mut l = log.lock().unwrap();
            let Some(slot) = l.free_slots.pop() else { break };
            since_flush += 1;
            let sectors = 1 + rng.below(SLOT_BYTES / SECTOR);
            let offset = slot + SECTOR * rng.below(SLOT_BYTES / SECTOR - sectors + 1);
            let len = sectors * SECTOR;
            let fua = rng.below(3) == 0;
            let seq = l.writes.len() as u64;
            l.writes.push(Write1 { conn, offset, len, fua, acked: false, durable: false });
            drop(l);
            let mut m =
                request(if fua { CMD_FLAG_FUA } else { 0 }, CMD_WRITE, seq, offset, len as u32).to_vec();
            for k in 0..sectors {
                m.extend_from_slice(&sector_bytes(seq, offset + k * SECTOR));
            }
            m
        };
        if s.write_all(&msg).is_err() {
            return;
        }
    }
}

/// Reads simple replies until the server is gone, recording what each acknowledges.
fn receive_loop(mut s: UnixStream, log: Arc<Mutex<Log>>, tokens: mpsc::Sender<()>) {
    let mut r = [0u8; 16];
    while s.read_exact(&mut r).is_ok() {
        let magic = u32::from_be_bytes(r[..4].try_into().unwrap());
        let error = u32::from_be_bytes(r[4..8].try_into().unwrap());
        let cookie = u64::from_be_bytes(r[8..16].try_into().unwrap());
        let mut l = log.lock().unwrap();
        if magic != SIMPLE_REPLY_MAGIC {
            l.errors.push(format!("bad reply magic {magic:#x}"));
            return;
        }
        if error != 0 {
            l.errors.push(format!("cookie {cookie:#x}: error {error}"));
        } else if cookie & FLUSH_COOKIE != 0 {
            let covered = l.flushes.remove(&cookie).expect("reply to a FLUSH that was sent");
            let ids: Vec<u64> = l.acked[..covered].to_vec();
            for id in ids {
                l.writes[id as usize].durable = true;
            }
            l.flushes_acked += 1;
        } else {
            let w = &mut l.writes[cookie as usize];
            assert!(!w.acked, "write {cookie} acknowledged twice");
            w.acked = true;
            w.durable |= w.fua;
            l.acked.push(cookie);
        }
        drop(l);
        let _ = tokens.send(());
    }
}

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn spawn_server(dir: &Path, img: &Path, sock: &Path, scheduler: &str) -> Child {
    let log = std::fs::File::create(dir.join("server.log")).unwrap();
    Command::new(env!("CARGO_BIN_EXE_headway"))
        .args(["serve", "--backend", "file", "--size", "64M", "--scheduler", scheduler, "--unix"])
        .arg(sock)
        .arg("--export")
        .arg(img)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("headway serve starts")
}

fn connect(sock: &Path, child: &mut Child) -> UnixStream {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(s) = UnixStream::connect(sock) {
            return s;
        }
        if let Ok(Some(st)) = child.try_wait() {
            panic!("headway serve exited early: {st}");
        }
        assert!(Instant::now() < until, "headway serve did not listen within 10 s");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// What one kill left behind.
#[derive(Debug, Default)]
struct Outcome {
    writes: usize,
    acked: usize,
    durable: usize,
    flushes_acked: u64,
    /// Durable writes whose sectors are not all in the file.
    lost: Vec<String>,
    /// Sectors holding bytes no write put there (any write, durable or not).
    foreign: Vec<String>,
    errors: Vec<String>,
}

fn one_run(scheduler: &str, seed: u64, iteration: u32, delay: Duration) -> Outcome {
    let dir = std::env::temp_dir().join(format!("hw-dur-{}-{scheduler}-{iteration}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir = Dir(dir);
    let (img, sock) = (dir.0.join("disk.img"), dir.0.join("nbd.sock"));
    let mut child = spawn_server(&dir.0, &img, &sock, scheduler);

    let mut rng = Rng(seed ^ (iteration as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut slots: Vec<u64> = (0..EXPORT_BYTES / SLOT_BYTES).map(|i| i * SLOT_BYTES).collect();
    for i in (1..slots.len()).rev() {
        slots.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let log = Arc::new(Mutex::new(Log { free_slots: slots, ..Log::default() }));
    let mut streams = Vec::new();
    for _ in 0..CONNECTIONS {
        let mut s = connect(&sock, &mut child);
        let flags = handshake(&mut s);
        assert!(
            flags & FLAG_SEND_FLUSH != 0 && flags & FLAG_SEND_FUA != 0 && flags & FLAG_CAN_MULTI_CONN != 0,
            "transmission flags {flags:#x} lack SEND_FLUSH, SEND_FUA or CAN_MULTI_CONN"
        );
        streams.push(s);
    }
    let mut threads = Vec::new();
    for (conn, s) in streams.into_iter().enumerate() {
        let (tok_tx, tok_rx) = mpsc::channel();
        for _ in 0..DEPTH {
            tok_tx.send(()).unwrap();
        }
        let (rd, l1, l2) = (s.try_clone().unwrap(), log.clone(), log.clone());
        let seed = rng.next();
        threads.push(std::thread::spawn(move || send_loop(conn, s, l1, tok_rx, seed)));
        threads.push(std::thread::spawn(move || receive_loop(rd, l2, tok_tx)));
    }
    std::thread::sleep(delay);
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    // Replies the server sent before it died are still read: they are acknowledgements.
    for t in threads {
        t.join().unwrap();
    }

    let l = log.lock().unwrap();
    let file = std::fs::read(&img).unwrap();
    assert_eq!(file.len() as u64, EXPORT_BYTES);
    let mut out = Outcome {
        writes: l.writes.len(),
        acked: l.acked.len(),
        durable: l.writes.iter().filter(|w| w.durable).count(),
        flushes_acked: l.flushes_acked,
        errors: l.errors.clone(),
        ..Outcome::default()
    };
    let mut owner: Vec<Option<u64>> = vec![None; (EXPORT_BYTES / SECTOR) as usize];
    for (seq, w) in l.writes.iter().enumerate() {
        let mut missing = 0;
        for k in 0..w.len / SECTOR {
            let off = w.offset + k * SECTOR;
            owner[(off / SECTOR) as usize] = Some(seq as u64);
            let got = &file[off as usize..(off + SECTOR) as usize];
            if got != sector_bytes(seq as u64, off) {
                missing += 1;
                if got.iter().any(|&b| b != 0) {
                    out.foreign.push(format!("sector at {off} (write {seq}) holds other data"));
                }
            }
        }
        if w.durable && missing > 0 {
            out.lost.push(format!(
                "write {seq} (conn {}, offset {}, {} B, fua {}): {missing} sectors missing",
                w.conn, w.offset, w.len, w.fua
            ));
        }
    }
    for (i, o) in owner.iter().enumerate() {
        let off = i * SECTOR as usize;
        if o.is_none() && file[off..off + SECTOR as usize].iter().any(|&b| b != 0) {
            out.foreign.push(format!("unwritten sector at {off} is not zero"));
        }
    }
    out
}

/// `ITERATIONS` kills at seeded delays; no acknowledged-durable write may be missing.
fn survives_kill_9(scheduler: &str, seed: u64) {
    let mut rng = Rng(seed);
    let (mut writes, mut durable, mut flushes) = (0, 0, 0);
    for it in 0..ITERATIONS {
        let delay = KILL_MIN + Duration::from_millis(rng.below(KILL_SPAN_MS));
        let o = one_run(scheduler, seed, it, delay);
        let ctx = format!("{scheduler}, seed {seed:#x}, iteration {it}, kill after {delay:?}");
        assert!(o.errors.is_empty(), "{ctx}: error replies: {:?}", o.errors);
        assert!(o.lost.is_empty(), "{ctx}: {} acknowledged-durable writes lost: {:#?}", o.lost.len(), o.lost);
        assert!(o.foreign.is_empty(), "{ctx}: misplaced data: {:#?}", &o.foreign[..o.foreign.len().min(10)]);
        eprintln!(
            "{ctx}: {} writes sent, {} acknowledged, {} durable ({} flushes acknowledged), 0 lost",
            o.writes, o.acked, o.durable, o.flushes_acked
        );
        writes += o.writes;
        durable += o.durable;
        flushes += o.flushes_acked;
    }
    eprintln!(
        "{scheduler}: {ITERATIONS} kill -9 trials, {CONNECTIONS} connections: {writes} writes sent, {durable} \
         acknowledged durable ({flushes} flushes acknowledged), 0 lost"
    );
    // Guards against a test that kills before any load ran and so proves nothing.
    assert!(durable > 0 && flushes > 0, "{scheduler}: no durable write in {ITERATIONS} runs ({writes} sent)");
}

#[test]
fn kill_9_loses_no_acknowledged_durable_write_stream() {
    survives_kill_9("stream", 0x5eed_0005_0001);
}

#[test]
fn kill_9_loses_no_acknowledged_durable_write_deadline() {
    survives_kill_9("deadline", 0x5eed_0005_0002);
}

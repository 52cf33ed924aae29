//! The durable-write load a crash is judged by: connections that pipeline writes and
//! FLUSHes at an NBD server until it dies, and the check of what the export holds after.
//!
//! Each connection keeps up to `depth` requests in flight: writes of 512 B to 32 KiB at
//! distinct, non-overlapping offsets (each owns one 32 KiB slot, so the expected content
//! of every sector is known exactly), a third of them FUA, and a FLUSH every few writes.
//! Every 512-byte sector written carries (tag, write sequence number, its own byte offset)
//! and a filler derived from both, so a lost, stale, torn-across-sectors or misdirected
//! write is told apart from a missing one. A write is *durable* once its FUA reply came,
//! or once a FLUSH sent after its reply arrived has been answered (on any connection: the
//! server advertises CAN_MULTI_CONN).
//!
//! The client is written from the NBD protocol document (doc/proto.md) rather than taken
//! from `headway-nbd`, so a codec bug shared by server and client cannot hide a loss.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Each write owns one slot of this size, so no two writes overlap.
pub const SLOT_BYTES: u64 = 32 << 10;
pub const SECTOR: u64 = 512;
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
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
pub const FLAG_SEND_FUA: u16 = 1 << 3;
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;
const REQUEST_MAGIC: u32 = 0x2560_9513;
const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
const CMD_WRITE: u16 = 1;
const CMD_FLUSH: u16 = 3;
const CMD_FLAG_FUA: u16 = 1;
/// Cookies with this bit are FLUSHes; the others are write sequence numbers.
const FLUSH_COOKIE: u64 = 1 << 63;

/// A small seeded generator (xorshift64*): the load's offsets, sizes and choices.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
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

/// Fixed newstyle handshake with NBD_OPT_GO for the default export of `size` bytes;
/// the transmission flags.
pub fn handshake(s: &mut (impl Read + Write), size: u64) -> io::Result<u16> {
    let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
    let mut g = [0u8; 18];
    s.read_exact(&mut g)?;
    if u64::from_be_bytes(g[..8].try_into().unwrap()) != NBDMAGIC
        || u64::from_be_bytes(g[8..16].try_into().unwrap()) != IHAVEOPT
    {
        return Err(bad("not an NBD fixed-newstyle greeting".into()));
    }
    // Client flags: FIXED_NEWSTYLE | NO_ZEROES.
    s.write_all(&3u32.to_be_bytes())?;
    let mut opt = Vec::new();
    opt.extend_from_slice(&IHAVEOPT.to_be_bytes());
    opt.extend_from_slice(&OPT_GO.to_be_bytes());
    opt.extend_from_slice(&6u32.to_be_bytes()); // name length (4) + info count (2)
    opt.extend_from_slice(&0u32.to_be_bytes()); // "" — the default export
    opt.extend_from_slice(&0u16.to_be_bytes()); // no information requests
    s.write_all(&opt)?;
    let mut flags = None;
    loop {
        let mut h = [0u8; 20];
        s.read_exact(&mut h)?;
        if u64::from_be_bytes(h[..8].try_into().unwrap()) != OPT_REPLY_MAGIC
            || u32::from_be_bytes(h[8..12].try_into().unwrap()) != OPT_GO
        {
            return Err(bad("not a reply to NBD_OPT_GO".into()));
        }
        let ty = u32::from_be_bytes(h[12..16].try_into().unwrap());
        let mut data = vec![0u8; u32::from_be_bytes(h[16..20].try_into().unwrap()) as usize];
        s.read_exact(&mut data)?;
        match ty {
            REP_INFO if data.len() >= 12 && u16::from_be_bytes([data[0], data[1]]) == INFO_EXPORT => {
                let got = u64::from_be_bytes(data[2..10].try_into().unwrap());
                if got != size {
                    return Err(bad(format!("the export has {got} bytes, not {size}")));
                }
                flags = Some(u16::from_be_bytes([data[10], data[11]]));
            }
            REP_INFO => {}
            REP_ACK => return flags.ok_or_else(|| bad("no NBD_INFO_EXPORT before the ACK".into())),
            _ => return Err(bad(format!("NBD_OPT_GO refused: reply type {ty:#x}"))),
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

/// The load on an export of `size` bytes: start connections with [`Load::connection`],
/// kill the server, [`Load::join`], then [`Load::check`] the export's bytes.
pub struct Load {
    size: u64,
    depth: usize,
    rng: Rng,
    log: Arc<Mutex<Log>>,
    threads: Vec<JoinHandle<()>>,
    conns: usize,
}

/// What the export held after the crash.
#[derive(Debug, Default, Clone)]
pub struct Outcome {
    pub writes: usize,
    pub acked: usize,
    pub durable: usize,
    pub flushes_acked: u64,
    /// Durable writes whose sectors are not all in the export.
    pub lost: Vec<String>,
    /// Sectors holding bytes no write put there (any write, durable or not).
    pub foreign: Vec<String>,
    /// Error replies.
    pub errors: Vec<String>,
}

impl Load {
    /// `depth` requests in flight per connection, offsets and choices from `seed`.
    pub fn new(size: u64, depth: usize, seed: u64) -> Load {
        let mut rng = Rng(seed | 1);
        let mut slots: Vec<u64> = (0..size / SLOT_BYTES).map(|i| i * SLOT_BYTES).collect();
        for i in (1..slots.len()).rev() {
            slots.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let log = Arc::new(Mutex::new(Log { free_slots: slots, ..Log::default() }));
        Load { size, depth, rng, log, threads: Vec::new(), conns: 0 }
    }

    /// Put a connection past its handshake to work: its writing and reading halves, each
    /// on a thread of its own until the connection dies.
    pub fn connection(&mut self, rd: impl Read + Send + 'static, wr: impl Write + Send + 'static) {
        let conn = self.conns;
        self.conns += 1;
        let (tok_tx, tok_rx) = mpsc::channel();
        for _ in 0..self.depth {
            tok_tx.send(()).unwrap();
        }
        let (l1, l2) = (self.log.clone(), self.log.clone());
        let seed = self.rng.next();
        self.threads.push(std::thread::spawn(move || send_loop(conn, wr, l1, tok_rx, seed)));
        self.threads.push(std::thread::spawn(move || receive_loop(rd, l2, tok_tx)));
    }

    /// Wait for every connection's threads (after the server died).
    pub fn join(&mut self) {
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    /// Judge the export's bytes after the crash.
    pub fn check(&self, export: &[u8]) -> Outcome {
        assert_eq!(export.len() as u64, self.size, "the export's size");
        let l = self.log.lock().unwrap();
        let mut out = Outcome {
            writes: l.writes.len(),
            acked: l.acked.len(),
            durable: l.writes.iter().filter(|w| w.durable).count(),
            flushes_acked: l.flushes_acked,
            errors: l.errors.clone(),
            ..Outcome::default()
        };
        let mut owner: Vec<Option<u64>> = vec![None; (self.size / SECTOR) as usize];
        for (seq, w) in l.writes.iter().enumerate() {
            let mut missing = 0;
            for k in 0..w.len / SECTOR {
                let off = w.offset + k * SECTOR;
                owner[(off / SECTOR) as usize] = Some(seq as u64);
                let got = &export[off as usize..(off + SECTOR) as usize];
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
            if o.is_none() && export[off..off + SECTOR as usize].iter().any(|&b| b != 0) {
                out.foreign.push(format!("unwritten sector at {off} is not zero"));
            }
        }
        out
    }
}

/// Sends writes and flushes until the slots run out or the socket dies. `tokens` bounds
/// the requests in flight; the receiver hands one back per reply.
fn send_loop(conn: usize, mut s: impl Write, log: Arc<Mutex<Log>>, tokens: mpsc::Receiver<()>, seed: u64) {
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
fn receive_loop(mut s: impl Read, log: Arc<Mutex<Log>>, tokens: mpsc::Sender<()>) {
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
            let Some(covered) = l.flushes.remove(&cookie) else {
                l.errors.push(format!("a reply to FLUSH {cookie:#x}, which was not sent"));
                return;
            };
            let ids: Vec<u64> = l.acked[..covered].to_vec();
            for id in ids {
                l.writes[id as usize].durable = true;
            }
            l.flushes_acked += 1;
        } else {
            let Some(w) = l.writes.get_mut(cookie as usize) else {
                l.errors.push(format!("a reply to write {cookie}, which was not sent"));
                return;
            };
            if w.acked {
                l.errors.push(format!("write {cookie} acknowledged twice"));
                return;
            }
            w.acked = true;
            w.durable |= w.fua;
            l.acked.push(cookie);
        }
        drop(l);
        let _ = tokens.send(());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check tells a missing durable write from a missing undurable one, and finds
    /// bytes no write put there.
    #[test]
    fn the_check_finds_lost_and_foreign_sectors() {
        let size = 4 * SLOT_BYTES;
        let load = Load::new(size, 1, 7);
        {
            let mut l = load.log.lock().unwrap();
            l.writes.push(Write1 { conn: 0, offset: 0, len: 1024, fua: true, acked: true, durable: true });
            l.writes.push(Write1 {
                conn: 0,
                offset: SLOT_BYTES,
                len: 512,
                fua: false,
                acked: true,
                durable: false,
            });
        }
        let mut disk = vec![0u8; size as usize];
        disk[..512].copy_from_slice(&sector_bytes(0, 0));
        let o = load.check(&disk);
        assert_eq!(o.lost.len(), 1, "{o:?}"); // write 0's second sector is missing
        assert!(o.foreign.is_empty());
        disk[512..1024].copy_from_slice(&sector_bytes(0, 512));
        disk[3 * SLOT_BYTES as usize] = 1;
        let o = load.check(&disk);
        assert!(o.lost.is_empty(), "{o:?}");
        assert_eq!(o.foreign.len(), 1, "{o:?}");
    }
}

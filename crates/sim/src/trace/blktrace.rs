//! blktrace's binary output (`--format blktrace`): the per-CPU files `NAME.blktrace.N` that
//! `blktrace -d DEV -o NAME` writes, read without blkparse.
//!
//! Each file is a run of events: a 48-byte `struct blk_io_trace` (`magic`, `sequence`,
//! `time` ns, `sector`, `bytes`, `action`, `pid`, `device`, `cpu`, `error`, `pdu_len`; the
//! writer's byte order, told by `magic` = 0x65617400 | version) followed by `pdu_len`
//! bytes. `action`'s low 16 bits are the event (1 = queued, `Q`); its high 16 the categories
//! (read 1, write 2, flush 4, sync 8, ..., notify 1024, ahead 2048, meta 4096, discard 8192,
//! FUA 32768). A notify event with action 0 (`__BLK_TN_PROCESS`) names a pid's command in
//! its payload.
//!
//! The files are merged by time (one event of each in memory) and each event is given to
//! blkparse's text reader ([`super::blkparse`]) as the line blkparse would print for it,
//! `maj,min cpu seq sec.nsec pid ACTION RWBS sector + blocks [command]`, so both readers
//! replay a trace the same way; an error names the file and the event's number in it.

use std::collections::HashMap;
use std::io::{BufRead, Read, Write as _};
use std::path::{Path, PathBuf};

/// `struct blk_io_trace`'s size, bytes.
pub const EVENT_BYTES: usize = 48;
const MAGIC: u32 = 0x6561_7400;
/// Category bits (`action >> 16`).
const TC_READ: u32 = 1;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_SYNC: u32 = 1 << 3;
const TC_NOTIFY: u32 = 1 << 10;
const TC_AHEAD: u32 = 1 << 11;
const TC_META: u32 = 1 << 12;
const TC_DISCARD: u32 = 1 << 13;
const TC_FUA: u32 = 1 << 15;
/// Event codes (`action & 0xffff`) and the letter blkparse prints for each.
const ACTIONS: [(u32, &str); 17] = [
    (1, "Q"),
    (2, "M"),
    (3, "F"),
    (4, "G"),
    (5, "S"),
    (6, "R"),
    (7, "D"),
    (8, "C"),
    (9, "P"),
    (10, "U"),
    (11, "UT"),
    (12, "I"),
    (13, "X"),
    (14, "B"),
    (15, "A"),
    (16, "Y"),
    (17, "m"),
];

/// One decoded event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub time: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    pub device: u32,
    pub cpu: u32,
    pub sequence: u32,
    pub pdu: Vec<u8>,
}

impl Event {
    /// blktrace's note that `pid` is `command` (a notify event, `__BLK_TN_PROCESS`).
    pub fn process(pid: u32, command: &str, cpu: u32, device: u32) -> Event {
        let mut pdu = command.as_bytes().to_vec();
        pdu.push(0);
        Event { time: 0, sector: 0, bytes: 0, action: TC_NOTIFY << 16, pid, device, cpu, sequence: 0, pdu }
    }

    /// The 48-byte header and payload, little-endian (what a little-endian writer makes).
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(EVENT_BYTES + self.pdu.len());
        b.extend_from_slice(&(MAGIC | 7).to_le_bytes());
        b.extend_from_slice(&self.sequence.to_le_bytes());
        b.extend_from_slice(&self.time.to_le_bytes());
        b.extend_from_slice(&self.sector.to_le_bytes());
        b.extend_from_slice(&self.bytes.to_le_bytes());
        b.extend_from_slice(&self.action.to_le_bytes());
        b.extend_from_slice(&self.pid.to_le_bytes());
        b.extend_from_slice(&self.device.to_le_bytes());
        b.extend_from_slice(&self.cpu.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&(self.pdu.len() as u16).to_le_bytes());
        b.extend_from_slice(&self.pdu);
        b
    }
}

/// The per-CPU files of a trace: `path` itself if it names one (`NAME.blktrace.N`, every
/// `NAME.blktrace.*` beside it is taken too), else the files `path.blktrace.*`.
pub fn cpu_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    let text = path.display().to_string();
    let stem = match text.rsplit_once(".blktrace.") {
        Some((stem, n)) if n.bytes().all(|c| c.is_ascii_digit()) && !n.is_empty() => stem.to_string(),
        _ => text.clone(),
    };
    let stem_path = Path::new(&stem);
    let dir = stem_path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let base = stem_path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!("{base}.blktrace.");
    let mut files: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n: u32 = name.strip_prefix(&prefix)?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    if files.is_empty() {
        return Err(format!("{text}: no blktrace files ({stem}.blktrace.N)"));
    }
    files.sort();
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// One per-CPU file, read an event at a time.
struct CpuFile {
    name: String,
    src: Box<dyn Read>,
    /// Events read so far (the error position).
    events: u64,
    swap: Option<bool>,
}

impl CpuFile {
    fn next(&mut self) -> Result<Option<Event>, String> {
        let mut h = [0u8; EVENT_BYTES];
        let mut got = 0;
        while got < EVENT_BYTES {
            let n = self.src.read(&mut h[got..]).map_err(|e| format!("{}: {e}", self.name))?;
            if n == 0 {
                if got == 0 {
                    return Ok(None);
                }
                return Err(format!(
                    "{}: event {}: truncated ({got} of 48 bytes)",
                    self.name,
                    self.events + 1
                ));
            }
            got += n;
        }
        self.events += 1;
        let le = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let swap = match self.swap {
            Some(s) => s,
            None => {
                let s = if le & 0xffff_ff00 == MAGIC {
                    false
                } else if le.swap_bytes() & 0xffff_ff00 == MAGIC {
                    true
                } else {
                    return Err(format!("{}: not a blktrace file (magic {le:#010x})", self.name));
                };
                self.swap = Some(s);
                s
            }
        };
        let u32_at = |i: usize| {
            let v = u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[i..i + 8]);
            let v = u64::from_le_bytes(b);
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let u16_at = |i: usize| {
            let v = u16::from_le_bytes([h[i], h[i + 1]]);
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        if u32_at(0) & 0xffff_ff00 != MAGIC {
            return Err(format!("{}: event {}: bad magic (the file is damaged)", self.name, self.events));
        }
        let pdu_len = u16_at(46) as usize;
        let mut pdu = vec![0u8; pdu_len];
        self.src
            .read_exact(&mut pdu)
            .map_err(|_| format!("{}: event {}: payload truncated", self.name, self.events))?;
        Ok(Some(Event {
            sequence: u32_at(4),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            cpu: u32_at(40),
            pdu,
        }))
    }
}

/// The merged events as blkparse text lines (a [`BufRead`] for [`super::Records`]).
pub struct BlktraceText {
    files: Vec<CpuFile>,
    /// The next event of each file, `None` once it is exhausted.
    heads: Vec<Option<Event>>,
    comms: HashMap<u32, String>,
    line: Vec<u8>,
    at: usize,
}

impl BlktraceText {
    /// Open the per-CPU files of `path` ([`cpu_files`]).
    pub fn open(path: &Path) -> Result<BlktraceText, String> {
        let mut files = Vec::new();
        for p in cpu_files(path)? {
            let f = std::fs::File::open(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            files.push((p.display().to_string(), Box::new(std::io::BufReader::new(f)) as Box<dyn Read>));
        }
        BlktraceText::from_sources(files)
    }

    /// Named sources, one per CPU.
    pub fn from_sources(sources: Vec<(String, Box<dyn Read>)>) -> Result<BlktraceText, String> {
        let mut files: Vec<CpuFile> =
            sources.into_iter().map(|(name, src)| CpuFile { name, src, events: 0, swap: None }).collect();
        let heads = files.iter_mut().map(|f| f.next()).collect::<Result<Vec<_>, _>>()?;
        Ok(BlktraceText { files, heads, comms: HashMap::new(), line: Vec::new(), at: 0 })
    }

    /// The next event by time (ties: the lower file), `None` at the end.
    fn next_event(&mut self) -> Result<Option<Event>, String> {
        let Some(i) = (0..self.heads.len())
            .filter(|&i| self.heads[i].is_some())
            .min_by_key(|&i| self.heads[i].as_ref().map(|e| e.time))
        else {
            return Ok(None);
        };
        let next = self.files[i].next()?;
        Ok(std::mem::replace(&mut self.heads[i], next))
    }

    /// Fill `line` with the next event's text; false at the end.
    fn refill(&mut self) -> std::io::Result<bool> {
        loop {
            let e = match self.next_event() {
                Ok(Some(e)) => e,
                Ok(None) => return Ok(false),
                Err(why) => return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, why)),
            };
            let cats = e.action >> 16;
            let code = e.action & 0xffff;
            if cats & TC_NOTIFY != 0 {
                if code == 0 {
                    // __BLK_TN_PROCESS: the pid's command, NUL-terminated
                    let end = e.pdu.iter().position(|&c| c == 0).unwrap_or(e.pdu.len());
                    self.comms.insert(e.pid, String::from_utf8_lossy(&e.pdu[..end]).into_owned());
                }
                continue;
            }
            let Some(&(_, letter)) = ACTIONS.iter().find(|(c, _)| *c == code) else { continue };
            self.line.clear();
            self.at = 0;
            // straight into the line buffer (writing to a Vec cannot fail)
            let _ = write!(
                self.line,
                "{:3},{:<3} {:2} {:8} {:5}.{:09} {:5}  {letter:<2} {:<3} {} + {} [",
                e.device >> 20,
                e.device & 0xfffff,
                e.cpu,
                e.sequence,
                e.time / 1_000_000_000,
                e.time % 1_000_000_000,
                e.pid,
                rwbs(cats, e.bytes),
                e.sector,
                e.bytes >> 9
            );
            let _ = match self.comms.get(&e.pid) {
                Some(comm) => writeln!(self.line, "{comm}]"),
                None => writeln!(self.line, "{}]", e.pid),
            };
            return Ok(true);
        }
    }
}

/// blkparse's RWBS for categories `cats` and `bytes` of data.
fn rwbs(cats: u32, bytes: u32) -> String {
    let mut r = String::new();
    if cats & TC_FLUSH != 0 {
        r.push('F');
    }
    if cats & TC_DISCARD != 0 {
        r.push('D');
    } else if cats & TC_WRITE != 0 {
        r.push('W');
    } else if bytes > 0 || cats & TC_READ != 0 {
        r.push('R');
    } else {
        r.push('N');
    }
    if cats & TC_FUA != 0 {
        r.push('F');
    }
    if cats & TC_AHEAD != 0 {
        r.push('A');
    }
    if cats & TC_SYNC != 0 {
        r.push('S');
    }
    if cats & TC_META != 0 {
        r.push('M');
    }
    r
}

impl Read for BlktraceText {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for BlktraceText {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.at >= self.line.len() && !self.refill()? {
            return Ok(&[]);
        }
        Ok(&self.line[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(time: u64, cpu: u32, seq: u32, action: u32, pid: u32, sector: u64, bytes: u32) -> Event {
        Event {
            time,
            sector,
            bytes,
            action,
            pid,
            device: (8 << 20) | 16,
            cpu,
            sequence: seq,
            pdu: Vec::new(),
        }
    }

    fn text(cpus: Vec<Vec<Event>>) -> Result<String, String> {
        let sources = cpus
            .into_iter()
            .enumerate()
            .map(|(i, evs)| {
                let bytes: Vec<u8> = evs.iter().flat_map(Event::encode).collect();
                (format!("t.blktrace.{i}"), Box::new(std::io::Cursor::new(bytes)) as Box<dyn Read>)
            })
            .collect();
        let mut t = BlktraceText::from_sources(sources)?;
        let mut s = String::new();
        t.read_to_string(&mut s).map_err(|e| e.to_string())?;
        Ok(s)
    }

    const Q: u32 = 1;

    #[test]
    fn events_become_blkparse_lines_merged_by_time() {
        let name = Event::process(42, "dd", 0, (8 << 20) | 16);
        let cpu0 = vec![name, ev(2_500_000_000, 0, 1, ((TC_WRITE | TC_SYNC) << 16) | Q, 42, 2048, 4096)];
        let cpu1 = vec![
            ev(1_000_000_007, 1, 1, (TC_READ << 16) | Q, 7, 100, 8192),
            ev(3_000_000_000, 1, 2, ((TC_FLUSH | TC_WRITE | TC_SYNC) << 16) | Q, 42, 0, 0),
            ev(3_100_000_000, 1, 3, (TC_READ << 16) | 8, 7, 100, 8192),
        ];
        let t = text(vec![cpu0, cpu1]).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "{t}");
        assert!(
            lines[0].contains("1.000000007")
                && lines[0].contains(" Q  R ")
                && lines[0].ends_with("100 + 16 [7]"),
            "{t}"
        );
        assert!(
            lines[1].starts_with("  8,16   0")
                && lines[1].contains(" Q  WS ")
                && lines[1].ends_with("2048 + 8 [dd]"),
            "{t}"
        );
        assert!(lines[2].contains(" Q  FWS ") && lines[2].ends_with("0 + 0 [dd]"), "{t}");
        assert!(lines[3].contains(" C  R "), "{t}");
        // blkparse's reader takes them: the Q lines are requests, the flush a flush
        let mut p = super::super::blkparse::Blkparse;
        let mut key = String::new();
        use super::super::LineParser;
        assert!(
            matches!(p.parse(lines[1], &mut key), Ok(super::super::Parsed::Io(r)) if r.sector == 2048 && r.len == 8 && r.sync)
        );
        assert_eq!(key, "dd[42]");
        assert!(matches!(
            p.parse(lines[2], &mut String::new()),
            Ok(super::super::Parsed::Flush(3_000_000_000))
        ));
    }

    #[test]
    fn byte_order_is_read_from_the_magic_and_damage_is_named() {
        let e = ev(5, 0, 1, (TC_READ << 16) | Q, 1, 8, 512);
        // big-endian: every field swapped
        let le = e.encode();
        let mut be = Vec::new();
        for (off, len) in
            [(0, 4), (4, 4), (8, 8), (16, 8), (24, 4), (28, 4), (32, 4), (36, 4), (40, 4), (44, 2), (46, 2)]
        {
            be.extend(le[off..off + len].iter().rev());
        }
        let src = vec![("be.blktrace.0".to_string(), Box::new(std::io::Cursor::new(be)) as Box<dyn Read>)];
        let mut s = String::new();
        BlktraceText::from_sources(src).unwrap().read_to_string(&mut s).unwrap();
        assert!(s.contains(" Q  R ") && s.trim_end().ends_with("8 + 1 [1]"), "{s}");
        let src = vec![(
            "x.blktrace.0".to_string(),
            Box::new(std::io::Cursor::new(vec![1u8; 48])) as Box<dyn Read>,
        )];
        assert!(BlktraceText::from_sources(src).err().unwrap().contains("not a blktrace file"));
        let src = vec![(
            "y.blktrace.0".to_string(),
            Box::new(std::io::Cursor::new(le[..20].to_vec())) as Box<dyn Read>,
        )];
        assert!(BlktraceText::from_sources(src).err().unwrap().contains("y.blktrace.0: event 1: truncated"));
    }
}

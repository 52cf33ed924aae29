//! FIU SRCMap / IODedup traces (SNIA IOTTA): whitespace-separated
//! `ts pid process lba size op major minor hash`.
//!
//! `ts` is nanoseconds, `lba` and `size` are 512-byte sectors, `op` `R` or `W` (either
//! case); `major minor` (the device) and `hash` (content digest) are read past. The context
//! key is `process[pid]`, as for blkparse. Reads are synchronous, writes asynchronous.

use std::fmt::Write as _;

use headway_sched::Dir;

use super::{num, LineParser, Parsed, Record};

pub struct Fiu;

impl LineParser for Fiu {
    fn parse(&mut self, line: &str, key: &mut String) -> Result<Parsed, String> {
        let mut f = line.split_whitespace();
        let Some(ts) = f.next() else { return Ok(Parsed::Blank) };
        let time: u64 = num(Some(ts), "ts")?;
        let pid: u32 = num(f.next(), "pid")?;
        let process = f.next().ok_or("missing process")?;
        let lba: u64 = num(f.next(), "lba")?;
        let size: u32 = num(f.next(), "size")?;
        let op = f.next().ok_or("missing op")?;
        let dir = match op {
            "R" | "r" => Dir::Read,
            "W" | "w" => Dir::Write,
            _ => return Err(format!("op `{op}` is neither R nor W")),
        };
        let _major: u32 = num(f.next(), "major")?;
        let _minor: u32 = num(f.next(), "minor")?;
        if size == 0 {
            return Ok(Parsed::Ignored);
        }
        let _ = write!(key, "{process}[{pid}]");
        Ok(Parsed::Io(Record { time, response: 0, sector: lba, len: size, dir, sync: dir == Dir::Read }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{read_all, rec};
    use super::super::Format;
    use super::*;

    #[test]
    fn nanoseconds_and_sectors() {
        let t = "89966527712179 4890 syslogd 904265560 8 W 6 0 531e779ee9d2e5fdab0f3d7d4f5a6d9c\n\
                 89966527800000 4891 httpd 100 16 R 6 0 0\n";
        let (recs, _) = read_all(t, Format::Fiu, false).unwrap();
        assert_eq!(recs[0], (rec(89966527712179, 904265560, 8, Dir::Write, false), "syslogd[4890]".into()));
        assert_eq!(recs[1], (rec(89966527800000, 100, 16, Dir::Read, true), "httpd[4891]".into()));
    }

    #[test]
    fn malformed() {
        let e = read_all("1 2 p 3 8 X 6 0 h\n", Format::Fiu, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:1: op `X` is neither R nor W");
        let e = read_all("1 2 p 3 8 R\n", Format::Fiu, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:1: missing major");
    }
}

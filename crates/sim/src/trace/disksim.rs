//! DiskSim's ascii trace format: whitespace-separated `time devno blkno bcount flags`.
//!
//! `time` is milliseconds (decimal), `blkno` and `bcount` are 512-byte blocks, and bit 0 of
//! `flags` is set for a read (DiskSim's `B_READ`); `flags` may be written in hex (`0x1`).
//! The context key is `devN`: every device addresses the one simulated disk. Reads are
//! synchronous, writes asynchronous.

use std::fmt::Write as _;

use headway_sched::Dir;

use super::{LineParser, Parsed, Record};

pub struct Disksim;

impl LineParser for Disksim {
    fn parse(&mut self, line: &str, key: &mut String) -> Result<Parsed, String> {
        self.parse_bytes(line.as_bytes(), key)
    }

    fn parse_bytes(&mut self, line: &[u8], key: &mut String) -> Result<Parsed, String> {
        // ASCII fields split by hand, from the bytes read (a non-ASCII byte fails the
        // number it is in): this runs once per trace line, millions of times
        let mut f = super::Fields::new(line);
        let Some(ts) = f.next() else { return Ok(Parsed::Blank) };
        if ts[0] == b'#' {
            return Ok(Parsed::Ignored);
        }
        let text = |t: &[u8]| String::from_utf8_lossy(t).into_owned();
        let time = super::decimal_ns_bytes(ts, 1_000_000)
            .ok_or_else(|| format!("time `{}` is not a number of milliseconds", text(ts)))?;
        let mut int = |what: &str| -> Result<u64, String> {
            let t = f.next().ok_or_else(|| format!("missing {what}"))?;
            super::dec_u64(t).ok_or_else(|| format!("{what} `{}` is not a number", text(t)))
        };
        let devno = int("devno")?;
        let blkno = int("blkno")?;
        let bcount = u32::try_from(int("bcount")?).map_err(|_| "bcount is too large".to_string())?;
        let fl = f.next().ok_or("missing flags")?;
        let flags = match fl.strip_prefix(b"0x").or_else(|| fl.strip_prefix(b"0X")) {
            Some(h) => std::str::from_utf8(h).ok().and_then(|h| u64::from_str_radix(h, 16).ok()),
            None => super::dec_u64(fl),
        }
        .ok_or_else(|| format!("flags `{}` is not a number", text(fl)))?;
        if let Some(extra) = f.next() {
            return Err(format!("unexpected `{}` after the flags", text(extra)));
        }
        if bcount == 0 {
            return Ok(Parsed::Ignored);
        }
        let dir = if flags & 1 == 1 { Dir::Read } else { Dir::Write };
        key.push_str("dev");
        if devno < 10 {
            key.push((b'0' + devno as u8) as char);
        } else {
            let _ = write!(key, "{devno}");
        }
        Ok(Parsed::Io(Record { time, response: 0, sector: blkno, len: bcount, dir, sync: dir == Dir::Read }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{read_all, rec};
    use super::super::Format;
    use super::*;

    #[test]
    fn milliseconds_blocks_and_the_read_bit() {
        let t = "0.000000 0 1000 16 1\n  2.5 1 64 8 0x0\n# comment\n3 0 0 0 1\n";
        let (recs, r) = read_all(t, Format::Disksim, false).unwrap();
        assert_eq!(
            recs,
            vec![
                (rec(0, 1000, 16, Dir::Read, true), "dev0".into()),
                (rec(2_500_000, 64, 8, Dir::Write, false), "dev1".into())
            ]
        );
        assert_eq!(r.ignored, 2);
    }

    #[test]
    fn malformed() {
        let e = read_all("1 0 0 8\n", Format::Disksim, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:1: missing flags");
        let e = read_all("1 0 0 8 1 9\n", Format::Disksim, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:1: unexpected `9` after the flags");
    }
}

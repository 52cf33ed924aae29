//! UMass Trace Repository / SPC traces (OLTP `Financial*`, `WebSearch*`): CSV lines
//! `ASU,LBA,Size,Opcode,Timestamp[,...]`.
//!
//! `LBA` is in 512-byte blocks, `Size` in bytes, `Opcode` `r` or `w` (either case),
//! `Timestamp` seconds (decimal) since the trace began; extra fields are allowed. The
//! context key is `asuN`. Every ASU addresses the one simulated disk from sector 0 (the
//! traces' ASUs are separate volumes: their requests may overlap here). Reads are
//! synchronous, writes asynchronous.

use std::fmt::Write as _;

use headway_sched::{Dir, SECTOR_BYTES};

use super::{num, LineParser, Parsed, Record};

pub struct Spc;

impl LineParser for Spc {
    fn parse(&mut self, line: &str, key: &mut String) -> Result<Parsed, String> {
        if line.trim().is_empty() {
            return Ok(Parsed::Blank);
        }
        let mut f = line.split(',');
        let asu: u32 = num(f.next(), "ASU")?;
        let lba: u64 = num(f.next(), "LBA")?;
        let bytes: u64 = num(f.next(), "Size")?;
        let op = f.next().ok_or("missing Opcode")?.trim();
        let dir = match op {
            "r" | "R" => Dir::Read,
            "w" | "W" => Dir::Write,
            _ => return Err(format!("Opcode `{op}` is neither r nor w")),
        };
        let ts = f.next().ok_or("missing Timestamp")?.trim();
        let time = super::decimal_ns(ts, 1_000_000_000)
            .ok_or_else(|| format!("Timestamp `{ts}` is not a number of seconds"))?;
        if bytes == 0 {
            return Ok(Parsed::Ignored);
        }
        let len = u32::try_from(bytes.div_ceil(SECTOR_BYTES)).map_err(|_| "request too long")?;
        let _ = write!(key, "asu{asu}");
        Ok(Parsed::Io(Record { time, response: 0, sector: lba, len, dir, sync: dir == Dir::Read }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{read_all, rec};
    use super::super::Format;
    use super::*;

    #[test]
    fn lba_in_blocks_size_in_bytes_seconds() {
        let t = "0,303567,3584,w,0.000000\n1,55590,3072,R,0.013470,extra\n";
        let (recs, _) = read_all(t, Format::Spc, false).unwrap();
        assert_eq!(recs[0], (rec(0, 303567, 7, Dir::Write, false), "asu0".into()));
        assert_eq!(recs[1], (rec(13_470_000, 55590, 6, Dir::Read, true), "asu1".into()));
    }

    #[test]
    fn malformed() {
        let e = read_all("0,1,512,x,0.1\n", Format::Spc, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:1: Opcode `x` is neither r nor w");
        let e = read_all("0,1,512,r\n", Format::Spc, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:1: missing Timestamp");
        let (recs, r) = read_all("0,1,512,r\n0,1,512,r,1\n", Format::Spc, true).unwrap();
        assert_eq!((recs.len(), r.bad), (1, 1));
    }
}

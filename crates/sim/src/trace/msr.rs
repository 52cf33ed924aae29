//! MSR Cambridge block traces (SNIA IOTTA): CSV lines
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//!
//! `Timestamp` is a Windows filetime (100 ns ticks since 1601), `ResponseTime` 100 ns ticks,
//! `Type` `Read` or `Write`, `Offset` and `Size` bytes. The response time is kept: closed
//! mode subtracts it from the recorded gap to get the issuer's think time. The context key
//! is `Hostname_DiskNumber` (`usr_0`: one volume, so a file is usually one context). A
//! first line starting with `Timestamp` (a header) is ignored. Reads are synchronous,
//! writes asynchronous.

use std::fmt::Write as _;

use headway_sched::Dir;

use super::{byte_span, num, LineParser, Parsed, Record};

pub struct Msr;

impl LineParser for Msr {
    fn parse(&mut self, line: &str, key: &mut String) -> Result<Parsed, String> {
        if line.trim().is_empty() {
            return Ok(Parsed::Blank);
        }
        if line.starts_with("Timestamp") {
            return Ok(Parsed::Ignored);
        }
        let mut f = line.split(',');
        let ticks: u64 = num(f.next(), "Timestamp")?;
        let host = f.next().ok_or("missing Hostname")?.trim();
        let disk: u32 = num(f.next(), "DiskNumber")?;
        let ty = f.next().ok_or("missing Type")?.trim();
        let dir = if ty.eq_ignore_ascii_case("read") {
            Dir::Read
        } else if ty.eq_ignore_ascii_case("write") {
            Dir::Write
        } else {
            return Err(format!("Type `{ty}` is neither Read nor Write"));
        };
        let offset: u64 = num(f.next(), "Offset")?;
        let bytes: u64 = num(f.next(), "Size")?;
        let resp: u64 = num(f.next(), "ResponseTime")?;
        if f.next().is_some() {
            return Err("more than 7 fields".into());
        }
        let Some((sector, len)) = byte_span(offset, bytes) else {
            return if bytes == 0 { Ok(Parsed::Ignored) } else { Err("request too long".into()) };
        };
        let _ = write!(key, "{host}_{disk}");
        let time = ticks.checked_mul(100).ok_or("Timestamp too large")?;
        Ok(Parsed::Io(Record {
            time,
            response: resp.saturating_mul(100),
            sector,
            len,
            dir,
            sync: dir == Dir::Read,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::read_all;
    use super::super::Format;
    use super::*;

    #[test]
    fn filetime_ticks_and_response_times() {
        let t = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n\
                 128166372003061629,usr,0,Read,7014609920,24576,30099\n\
                 128166372016382155,usr,0,Write,1317441536,8192,1411\n";
        let (recs, r) = read_all(t, Format::Msr, false).unwrap();
        assert_eq!(r.ignored, 1);
        let (a, k) = &recs[0];
        assert_eq!(k, "usr_0");
        assert_eq!(
            *a,
            Record {
                time: 12816637200306162900,
                response: 3_009_900,
                sector: 7014609920 / 512,
                len: 48,
                dir: Dir::Read,
                sync: true
            }
        );
        assert_eq!(recs[1].0.time - a.time, 1_332_052_600);
        assert_eq!((recs[1].0.dir, recs[1].0.sync), (Dir::Write, false));
    }

    #[test]
    fn malformed() {
        let e = read_all("1,usr,0,Erase,0,512,1\n", Format::Msr, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:1: Type `Erase` is neither Read nor Write");
        let e = read_all("1,usr,0,Read,0\n", Format::Msr, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:1: missing Size");
        let (recs, r) = read_all("1,usr,0,Read,0\n2,usr,0,Read,0,512,1\n", Format::Msr, true).unwrap();
        assert_eq!((recs.len(), r.bad), (1, 1));
    }
}

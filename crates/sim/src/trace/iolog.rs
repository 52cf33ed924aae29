//! fio I/O logs (`write_iolog=`), versions 2 and 3.
//!
//! The first line is `fio version 2 iolog` or `fio version 3 iolog`. Then, one per line,
//! `filename action [offset length]` (v2) or `timestamp filename action [offset length]`
//! (v3, the timestamp in microseconds since the job started: fio writes
//! `utime_since_now` there, and its `read_iolog` waits that many microseconds). Actions `read` and `write`
//! carry a byte offset and length and are replayed; `sync` and `datasync` are cache
//! flushes, replayed as the drives' FLUSH CACHE; `add`, `open`, `close` and `trim` are
//! ignored. v2 has no times: it replays in closed mode only (each
//! file a synchronous issuer, requests back to back).
//!
//! The context key is the file name (fio writes one log per job, so a log's files are the
//! job's; naming a file after a process, `dd[4162]`, makes a log equivalent to a blkparse
//! trace of that process). Reads are synchronous, writes asynchronous (no flag in the log).

use headway_sched::Dir;

use super::{byte_span, num, LineParser, Parsed, Record};

#[derive(Default)]
pub struct Iolog {
    /// 2 or 3 once the header is read.
    version: u32,
}

impl LineParser for Iolog {
    fn parse(&mut self, line: &str, key: &mut String) -> Result<Parsed, String> {
        let line = line.trim();
        if self.version == 0 {
            if line.is_empty() {
                return Ok(Parsed::Blank);
            }
            self.version = match line {
                "fio version 2 iolog" => 2,
                "fio version 3 iolog" => 3,
                _ => {
                    return Err(format!(
                        "expected `fio version 2 iolog` or `fio version 3 iolog`, found `{line}`"
                    ))
                }
            };
            return Ok(Parsed::Ignored);
        }
        let mut f = line.split_whitespace();
        let Some(first) = f.next() else { return Ok(Parsed::Blank) };
        let (time, file) = if self.version == 3 {
            let us: u64 =
                first.parse().map_err(|_| format!("timestamp `{first}` is not a number of microseconds"))?;
            (us.checked_mul(1_000).ok_or("timestamp too large")?, f.next().ok_or("missing file name")?)
        } else {
            (0, first)
        };
        let action = f.next().ok_or("missing action")?;
        let dir = match action {
            "read" => Dir::Read,
            "write" => Dir::Write,
            "sync" | "datasync" => {
                if let Some(extra) = f.next() {
                    // fio writes `sync 0 0`: an offset and length that mean nothing
                    if extra != "0" || f.next().is_some_and(|l| l != "0") || f.next().is_some() {
                        return Err(format!("unexpected `{extra}` after `{action}`"));
                    }
                }
                key.push_str(file);
                return Ok(Parsed::Flush(time));
            }
            "add" | "open" | "close" | "trim" => return Ok(Parsed::Ignored),
            _ => return Err(format!("unknown action `{action}`")),
        };
        let offset: u64 = num(f.next(), "offset")?;
        let bytes: u64 = num(f.next(), "length")?;
        if let Some(extra) = f.next() {
            return Err(format!("unexpected `{extra}` after the length"));
        }
        let Some((sector, len)) = byte_span(offset, bytes) else {
            return if bytes == 0 { Ok(Parsed::Ignored) } else { Err("request too long".into()) };
        };
        key.push_str(file);
        Ok(Parsed::Io(Record { time, response: 0, sector, len, dir, sync: dir == Dir::Read }))
    }

    fn timed(&self) -> bool {
        self.version != 2
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{read_all, rec};
    use super::super::Format;
    use super::*;

    #[test]
    fn version_2_is_untimed() {
        let t = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n\
                 /dev/sdb write 1048576 8192\n/dev/sdb sync 0 0\n/dev/sdb close\n";
        let (recs, r) = read_all(t, Format::Iolog, false).unwrap();
        assert_eq!(
            recs,
            vec![
                (rec(0, 0, 8, Dir::Read, true), "/dev/sdb".to_string()),
                (rec(0, 2048, 16, Dir::Write, false), "/dev/sdb".to_string()),
                // `sync 0 0`: a cache flush
                (rec(0, 0, 0, Dir::Write, true), "/dev/sdb".to_string()),
            ]
        );
        assert!(!r.timed());
        assert_eq!(r.ignored, 4);
        let t = "fio version 3 iolog\n3 a datasync\n4 a sync 4096 0\n";
        let e = read_all(t, Format::Iolog, false).unwrap_err().to_string();
        assert!(e.starts_with("t.trace:3: unexpected `4096` after `sync`"), "{e}");
        let (recs, _) = read_all("fio version 3 iolog\n3 a datasync\n", Format::Iolog, false).unwrap();
        assert_eq!(recs[0].0, rec(3_000, 0, 0, Dir::Write, true));
    }

    #[test]
    fn version_3_has_microsecond_times() {
        // fio 3.33's own `write_iolog` output (µs since the job started)
        let t = "fio version 3 iolog\n18 a add\n106 a open\n110 a read 4046848 4096\n200 b write 0 512\n\
                 76870 a close\n";
        let (recs, r) = read_all(t, Format::Iolog, false).unwrap();
        assert_eq!(recs[0], (rec(110_000, 7904, 8, Dir::Read, true), "a".to_string()));
        assert_eq!(recs[1], (rec(200_000, 0, 1, Dir::Write, false), "b".to_string()));
        assert!(r.timed());
    }

    #[test]
    fn malformed() {
        let e = read_all("fio version 9 iolog\n", Format::Iolog, false).unwrap_err().to_string();
        assert!(e.starts_with("t.trace:1: expected `fio version 2 iolog`"), "{e}");
        let e = read_all("fio version 3 iolog\n1 a read 0\n", Format::Iolog, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:2: missing length");
        let e =
            read_all("fio version 3 iolog\n1 a frob 0 1\n", Format::Iolog, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:2: unknown action `frob`");
        let e =
            read_all("fio version 3 iolog\nx a read 0 1\n", Format::Iolog, false).unwrap_err().to_string();
        assert!(e.starts_with("t.trace:2: timestamp `x`"), "{e}");
        let (recs, r) =
            read_all("fio version 3 iolog\nx a read 0 1\n2 a read 0 512\n", Format::Iolog, true).unwrap();
        assert_eq!((recs.len(), r.bad), (1, 1));
    }
}

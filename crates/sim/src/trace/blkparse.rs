//! blkparse's default text output (blktrace's human-readable form).
//!
//! A line is `maj,min cpu seq time pid action rwbs ...`; for a `Q` (queued: the request as
//! the issuer made it, before merging or splitting) the rest is `sector + nblocks
//! [command]`. Only `Q` events are replayed: later events (`G`, `I`, `D`, `C`, merges,
//! plugs) describe what the traced kernel's own scheduler did. `time` is seconds with
//! nanosecond decimals; `sector` and `nblocks` are 512-byte units.
//!
//! RWBS: `R`/`W` give the direction; `D` (discard) and `N` (no data) requests are ignored;
//! a request flagged `F` first (a preflush) that carries no data (`FWS 0 + 0`, `FN 0 + 0`,
//! or `FWS [cmd]` with no extent) is a cache flush, replayed as the drives' FLUSH CACHE (a
//! write with data and `F` is replayed as the write); other zero-length requests are
//! ignored. `S` makes a
//! write synchronous and `A` (readahead) a read asynchronous — reads are otherwise
//! synchronous, as the kernel treats them. The context key is `command[pid]` (`pid` when
//! the command is missing).
//!
//! The per-CPU and total summaries blkparse prints at the end (`CPU0 (8,0):`,
//! `Total (8,0):`) end the trace; its `Input file NAME added` notes are ignored; any other
//! line that does not start with `maj,min` is malformed.

use std::fmt::Write as _;

use headway_sched::Dir;

use super::{num, LineParser, Parsed, Record};

#[derive(Default)]
pub struct Blkparse;

impl LineParser for Blkparse {
    fn parse(&mut self, line: &str, key: &mut String) -> Result<Parsed, String> {
        let mut f = line.split_whitespace();
        let Some(dev) = f.next() else { return Ok(Parsed::Blank) };
        let is_dev = dev.split_once(',').is_some_and(|(a, b)| {
            !a.is_empty() && !b.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
        });
        if !is_dev {
            if dev == "CPU" || dev.starts_with("CPU") || dev == "Total" {
                return Ok(Parsed::End);
            }
            // blkparse's note of each per-CPU file it read (on stdout, even with -q)
            if line.trim_start().starts_with("Input file ") && line.trim_end().ends_with(" added") {
                return Ok(Parsed::Ignored);
            }
            return Err(format!("expected `maj,min cpu seq time pid action ...`, found `{dev}`"));
        }
        let _cpu: u32 = num(f.next(), "cpu")?;
        let _seq: u64 = num(f.next(), "sequence number")?;
        let time_s = f.next().ok_or("missing time")?;
        let pid: u32 = num(f.next(), "pid")?;
        let action = f.next().ok_or("missing action")?;
        if action != "Q" {
            return Ok(Parsed::Ignored);
        }
        let time = super::decimal_ns(time_s, 1_000_000_000)
            .ok_or_else(|| format!("time `{time_s}` is not a number of seconds"))?;
        let rwbs = f.next().ok_or("missing RWBS")?;
        let sector_s = f.next();
        // a preflush (`F` first; kernels write `FWS`, `FWFS` or `FN` for one without data)
        let flush = rwbs.starts_with('F') && !rwbs.contains('D');
        if sector_s.is_none_or(|s| s.starts_with('[')) {
            // no extent: `Q FWS [cmd]`
            if !flush {
                return Ok(Parsed::Ignored);
            }
            command_key(sector_s.into_iter().chain(f), pid, key)?;
            return Ok(Parsed::Flush(time));
        }
        let sector: u64 = num(sector_s, "sector")?;
        if f.next() != Some("+") {
            return Err("expected `sector + nblocks`".into());
        }
        let len: u32 = num(f.next(), "nblocks")?;
        if len == 0 && flush {
            command_key(f, pid, key)?;
            return Ok(Parsed::Flush(time));
        }
        if len == 0 || (rwbs.contains(['D', 'N']) && !rwbs.contains(['R', 'W'])) {
            return Ok(Parsed::Ignored);
        }
        let dir = if rwbs.contains('R') {
            Dir::Read
        } else if rwbs.contains('W') {
            Dir::Write
        } else {
            return Err(format!("RWBS `{rwbs}` names no direction"));
        };
        let sync = match dir {
            Dir::Read => !rwbs.contains('A'),
            Dir::Write => rwbs.contains('S'),
        };
        command_key(f, pid, key)?;
        Ok(Parsed::Io(Record { time, response: 0, sector, len, dir, sync }))
    }
}

/// The context key from the rest of the line, `[command]` (which may contain blanks):
/// `command[pid]`, or `pid` without a command.
fn command_key<'a>(
    mut rest: impl Iterator<Item = &'a str>,
    pid: u32,
    key: &mut String,
) -> Result<(), String> {
    let cmd: std::borrow::Cow<str> = match (rest.next(), rest.next()) {
        (None, _) => "".into(),
        (Some(a), None) => a.into(),
        (Some(a), Some(b)) => {
            std::iter::once(a).chain(std::iter::once(b)).chain(rest).collect::<Vec<_>>().join(" ").into()
        }
    };
    match cmd.strip_prefix('[').and_then(|c| c.strip_suffix(']')) {
        Some(c) if !c.is_empty() => {
            let _ = write!(key, "{c}[{pid}]");
        }
        _ if cmd.is_empty() => {
            let _ = write!(key, "{pid}");
        }
        _ => return Err(format!("expected `[command]` after the request, found `{cmd}`")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{read_all, rec};
    use super::super::Format;
    use super::*;

    const TRACE: &str = "\
  8,0    3        1     0.000000000  4162  Q  RS 2048 + 8 [dd]
  8,0    3        2     0.000001500  4162  G  RS 2048 + 8 [dd]
  8,0    3        3     0.000002000  4162  P   N [dd]
  8,0    3        4     0.000004000  4162  D  RS 2048 + 8 [dd]
  8,0    1        1     0.000120000  77  Q  W 4096 + 16 [kworker/u8:2]
  8,0    1        2     0.000130000  77  Q  WS 8192 + 8 [jbd2/sda1-8]
  8,0    1        3     0.000140000  77  Q FWS 0 + 0 [jbd2/sda1-8]
  8,0    1        4     0.000150000  55  Q  RA 100 + 32 [cat]
  8,0    1        5     0.000160000  55  Q  D 100 + 32 [fstrim]
  8,0    3        5     0.000200000  4162  C  RS 2048 + 8 [0]

CPU1 (8,0):
 Reads Queued:           1,        4KiB  Writes Queued:           2,       12KiB
Total (8,0):
";

    #[test]
    fn q_events_only_with_pid_and_command() {
        let (recs, r) = read_all(TRACE, Format::Blkparse, false).unwrap();
        let got: Vec<(Record, &str)> = recs.iter().map(|(r, k)| (*r, k.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (rec(0, 2048, 8, Dir::Read, true), "dd[4162]"),
                (rec(120_000, 4096, 16, Dir::Write, false), "kworker/u8:2[77]"),
                (rec(130_000, 8192, 8, Dir::Write, true), "jbd2/sda1-8[77]"),
                // the flush: no data (len 0)
                (rec(140_000, 0, 0, Dir::Write, true), "jbd2/sda1-8[77]"),
                (rec(150_000, 100, 32, Dir::Read, false), "cat[55]"),
            ]
        );
        // G, P, D, C and the discard
        assert_eq!(r.ignored, 5);
        assert_eq!(r.bad, 0);
    }

    #[test]
    fn flushes_with_or_without_an_extent_and_preflushed_writes() {
        let t = "  8,0 1 1 0.001 9 Q FWS [kworker/1:1H]\n\
                   8,0 1 2 0.002 9 Q FWFS 64 + 8 [db]\n\
                   8,0 1 3 0.003 9 Q N 0 + 0 [x]\n\
                   8,0 1 4 0.004 9 Q WS 0 + 0 [y]\n\
                   8,0 1 5 0.005 9 Q FN 0 + 0 [z]\n\
                   8,0 1 6 0.006 9 Q RS 8 + 0 [w]\n";
        let (recs, r) = read_all(t, Format::Blkparse, false).unwrap();
        let got: Vec<(Record, &str)> = recs.iter().map(|(r, k)| (*r, k.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (rec(1_000_000, 0, 0, Dir::Write, true), "kworker/1:1H[9]"),
                // a write with a preflush is replayed as the write
                (rec(2_000_000, 64, 8, Dir::Write, true), "db[9]"),
                (rec(5_000_000, 0, 0, Dir::Write, true), "z[9]"),
            ]
        );
        // no data and no F: ignored
        assert_eq!(r.ignored, 3);
        let e = read_all("8,0 1 1 0.1 9 Q FWS [a b]\n", Format::Blkparse, false);
        assert!(e.is_ok(), "a command with a blank: {e:?}");
    }

    #[test]
    fn malformed_q_lines_name_the_line() {
        let bad = "  8,0 0 1 0.0 1 Q R 10 + 8 [a]\n  8,0 0 2 0.1 1 Q R 10 - 8 [a]\n";
        let e = read_all(bad, Format::Blkparse, false).unwrap_err().to_string();
        assert_eq!(e, "t.trace:2: expected `sector + nblocks`");
        let e = read_all("8,0 0 1 x 1 Q R 10 + 8\n", Format::Blkparse, false).unwrap_err().to_string();
        assert!(e.starts_with("t.trace:1: time `x`"), "{e}");
        let e = read_all("hello world\n", Format::Blkparse, false).unwrap_err().to_string();
        assert!(e.starts_with("t.trace:1: expected `maj,min"), "{e}");
        let (recs, r) = read_all(&format!("hello\n{bad}"), Format::Blkparse, true).unwrap();
        assert_eq!((recs.len(), r.bad), (1, 2));
        assert_eq!(recs[0].1, "a[1]");
    }

    #[test]
    fn blkparse_s_input_file_notes_are_ignored() {
        let t =
            "  8,0 0 1 0.000000000 1 Q R 8 + 8 [a]\nInput file sda.blktrace.0 added\nInput file x added\n";
        let (recs, r) = read_all(t, Format::Blkparse, false).unwrap();
        assert_eq!((recs.len(), r.ignored), (1, 2));
        assert!(read_all("Input file sda.blktrace.0\n", Format::Blkparse, false).is_err());
    }
}

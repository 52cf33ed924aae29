//! A synthetic blkparse trace, generated as it is read (for benchmarks and tests: a trace of
//! any length that never exists whole, in memory or on disk).
//!
//! `readers` processes (`reader0[1000]`, `reader1[1001]`, ...) read sequentially, 4 KiB at
//! a time, each in its own region (`spacing` bytes apart); request `i` is reader
//! `i % readers`'s, at `i * gap_ns`. Every line is a `Q` event.

use std::io::{BufRead, Read};

/// The trace's shape.
#[derive(Copy, Clone, Debug)]
pub struct Synthetic {
    pub requests: u64,
    pub readers: u32,
    /// Bytes between the readers' regions.
    pub spacing: u64,
    /// Time between consecutive requests of the trace, ns.
    pub gap_ns: u64,
}

impl Synthetic {
    /// A reader of the trace's text.
    pub fn reader(self) -> SyntheticReader {
        SyntheticReader { s: self, next: 0, line: Vec::with_capacity(96), pos: 0 }
    }

    /// Bytes the trace transfers.
    pub fn bytes(&self) -> u64 {
        self.requests * 4096
    }
}

pub struct SyntheticReader {
    s: Synthetic,
    next: u64,
    line: Vec<u8>,
    pos: usize,
}

impl SyntheticReader {
    fn refill(&mut self) {
        use std::io::Write as _;
        self.line.clear();
        self.pos = 0;
        if self.next >= self.s.requests {
            return;
        }
        let i = self.next;
        self.next += 1;
        let r = (i % self.s.readers as u64) as u32;
        let k = i / self.s.readers as u64;
        let sector = (r as u64 * self.s.spacing) / 512 + k * 8;
        let t = i * self.s.gap_ns;
        let _ = writeln!(
            self.line,
            "  8,0    0 {:>8} {:>5}.{:09} {:>5}  Q   R {} + 8 [reader{}]",
            i + 1,
            t / 1_000_000_000,
            t % 1_000_000_000,
            1000 + r,
            sector,
            r
        );
    }
}

impl Read for SyntheticReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(buf.len());
        buf[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for SyntheticReader {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.pos >= self.line.len() {
            self.refill();
        }
        Ok(&self.line[self.pos..])
    }
    fn consume(&mut self, amt: usize) {
        self.pos += amt;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::rec;
    use super::super::{Format, Records};
    use super::*;
    use headway_sched::Dir;

    #[test]
    fn lines_parse_as_blkparse() {
        let s = Synthetic { requests: 5, readers: 2, spacing: 1 << 30, gap_ns: 1_500_000_000 };
        let mut r = Records::new(Box::new(s.reader()), "synthetic", Format::Blkparse, false);
        let mut got = Vec::new();
        while let Some(x) = r.next_record().unwrap() {
            got.push((x, r.key().to_string()));
        }
        assert_eq!(got.len(), 5);
        assert_eq!(got[0], (rec(0, 0, 8, Dir::Read, true), "reader0[1000]".into()));
        assert_eq!(got[3], (rec(4_500_000_000, (1 << 21) + 8, 8, Dir::Read, true), "reader1[1001]".into()));
    }
}

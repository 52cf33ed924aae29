//! Per-export statistics (`headway serve --stats INTERVAL`): requests and bytes served,
//! request latency (from the moment the request was read to the moment its reply was
//! handed to the socket) and the time the scheduler kept the backend idle on purpose.
//!
//! Counters live in one mutex per export, taken once per reply (a few tens of ns beside
//! a system call per reply). An interval line reports what happened since the previous
//! line; the line at exit reports the whole run.

use std::fmt;
use std::sync::Mutex;

use headway_sched::hist::Histogram;
use headway_sched::Time;

/// What one interval (or the whole run) saw.
#[derive(Clone, Debug, Default)]
pub struct Window {
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
    /// TRIM, WRITE_ZEROES and FLUSH.
    pub others: u64,
    pub errors: u64,
    /// ns from read off the socket to reply handed to the socket.
    pub latency: Histogram,
    /// ns the scheduler held requests with nothing at the backend (`WaitUntil`).
    pub idle_wait_ns: u64,
    /// `fdatasync`s run for FLUSHes (FLUSHes waiting together share one).
    pub flush_syncs: u64,
}

/// What kind of request a reply answered.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    Other,
}

/// An export's counters: the current interval and the whole run.
#[derive(Default)]
pub struct Stats {
    inner: Mutex<(Window, Window)>,
}

impl Stats {
    /// A reply of `bytes` of a `kind` request read at `arrived` left at `now`.
    pub fn reply(&self, kind: Kind, bytes: u64, ok: bool, arrived: Time, now: Time) {
        let lat = now.0.saturating_sub(arrived.0);
        let mut g = self.inner.lock().unwrap();
        let (a, b) = &mut *g;
        for w in [a, b] {
            match kind {
                Kind::Read => {
                    w.reads += 1;
                    w.read_bytes += bytes;
                }
                Kind::Write => {
                    w.writes += 1;
                    w.write_bytes += bytes;
                }
                Kind::Other => w.others += 1,
            }
            w.errors += !ok as u64;
            w.latency.record(lat);
        }
    }

    /// The scheduler's deliberate idle time grew by `ns`.
    pub fn idle_wait(&self, ns: u64) {
        let mut g = self.inner.lock().unwrap();
        let (a, b) = &mut *g;
        a.idle_wait_ns += ns;
        b.idle_wait_ns += ns;
    }

    /// One `fdatasync` answered FLUSHes.
    pub fn flush_sync(&self) {
        let mut g = self.inner.lock().unwrap();
        g.0.flush_syncs += 1;
        g.1.flush_syncs += 1;
    }

    /// The current interval, starting a new one.
    pub fn take_interval(&self) -> Window {
        std::mem::take(&mut self.inner.lock().unwrap().0)
    }

    /// The whole run so far.
    pub fn total(&self) -> Window {
        self.inner.lock().unwrap().1.clone()
    }
}

/// A window with the wall time it covers, printable as one line.
pub struct Line<'a> {
    pub window: &'a Window,
    pub secs: f64,
}

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self.window;
        let s = self.secs.max(1e-9);
        let n = w.reads + w.writes + w.others;
        let ms = |ns: u64| ns as f64 / 1e6;
        write!(
            f,
            "{:.1}s: {n} requests ({} reads, {} writes, {} other), {:.0} IOPS, read {:.2} MB/s, write {:.2} MB/s",
            self.secs,
            w.reads,
            w.writes,
            w.others,
            n as f64 / s,
            w.read_bytes as f64 / s / 1e6,
            w.write_bytes as f64 / s / 1e6,
        )?;
        if w.latency.count > 0 {
            write!(
                f,
                ", latency ms p50 {:.3} p99 {:.3} p99.9 {:.3} max {:.3}",
                ms(w.latency.percentile(50.0)),
                ms(w.latency.percentile(99.0)),
                ms(w.latency.percentile(99.9)),
                ms(w.latency.max),
            )?;
        }
        write!(
            f,
            ", idle-wait {:.3}s ({:.0}%)",
            w.idle_wait_ns as f64 / 1e9,
            w.idle_wait_ns as f64 / 1e7 / s
        )?;
        if w.errors > 0 {
            write!(f, ", {} errors", w.errors)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_restart_and_the_total_keeps_everything() {
        let s = Stats::default();
        s.reply(Kind::Read, 4096, true, Time(0), Time(1_000_000));
        s.reply(Kind::Write, 8192, true, Time(0), Time(3_000_000));
        s.idle_wait(500_000_000);
        let first = s.take_interval();
        assert_eq!((first.reads, first.read_bytes, first.writes, first.write_bytes), (1, 4096, 1, 8192));
        assert_eq!(first.idle_wait_ns, 500_000_000);
        s.reply(Kind::Other, 0, false, Time(0), Time(2_000_000));
        let second = s.take_interval();
        assert_eq!((second.reads, second.writes, second.others, second.errors), (0, 0, 1, 1));
        let total = s.total();
        assert_eq!(
            (total.reads, total.writes, total.others, total.errors, total.latency.count),
            (1, 1, 1, 1, 3)
        );
        let line = Line { window: &total, secs: 2.0 }.to_string();
        assert!(line.starts_with("2.0s: 3 requests (1 reads, 1 writes, 1 other), 2 IOPS"), "{line}");
        assert!(line.contains("read 0.00 MB/s, write 0.00 MB/s"), "{line}");
        assert!(line.contains("idle-wait 0.500s (25%)"), "{line}");
        assert!(line.contains("1 errors"), "{line}");
    }
}

//! Buffered writes (`direct=0`) and their writeback: how a writer's small writes reach the
//! disk scheduler as large asynchronous requests some time later.
//!
//! The page cache acknowledges a buffered write at once and keeps the data *dirty*; the
//! kernel's flusher writes dirty data back asynchronously (002 Section 5 measures how the
//! driver schedulers then merge and order it; `write_expire` is what bounds those async
//! writes in deadline). The model follows Linux's writeback knobs, per job (one file):
//!
//! - dirty data is kept as coalesced sector runs (an overwrite of dirty data adds nothing);
//! - writeback starts when the job's dirty data reaches `dirty_background_bytes`, or when
//!   the oldest dirty data is older than `dirty_expire` (checked every
//!   `dirty_writeback_interval`), and writes *everything* dirty, in ascending sector order,
//!   as requests of at most `max_request_bytes` (runs split, never joined across gaps);
//! - a writer whose dirty data would exceed `dirty_bytes` is throttled: it waits until
//!   writeback has brought the dirty data below the limit;
//! - at the end of a job nothing is forced out (fio without `end_fsync`): data still dirty
//!   is reported, not written.
//!
//! Defaults scale Linux's ratios (10% and 20% of memory) to the 2 GB machine of the Stream
//! Scheduling paper: 200 MB background, 400 MB hard limit; dirty_expire 30 s,
//! dirty_writeback interval 5 s (Linux `dirty_expire_centisecs`, `dirty_writeback_centisecs`).

use std::collections::BTreeMap;

use headway_sched::{Duration, Time, SECTOR_BYTES};

/// Writeback thresholds.
#[derive(Clone, Debug, PartialEq)]
pub struct WritebackParams {
    pub dirty_background_bytes: u64,
    pub dirty_bytes: u64,
    pub dirty_expire: Duration,
    pub dirty_writeback_interval: Duration,
    pub max_request_bytes: u64,
}

impl Default for WritebackParams {
    fn default() -> Self {
        WritebackParams {
            dirty_background_bytes: 200 << 20,
            dirty_bytes: 400 << 20,
            dirty_expire: Duration::from_secs(30),
            dirty_writeback_interval: Duration::from_secs(5),
            max_request_bytes: 512 << 10,
        }
    }
}

/// One job's dirty data.
#[derive(Clone, Debug, Default)]
pub struct Dirty {
    /// start sector -> end sector, disjoint and non-adjacent.
    runs: BTreeMap<u64, u64>,
    sectors: u64,
    /// When the oldest data still dirty was written.
    oldest: Option<Time>,
}

impl Dirty {
    pub fn bytes(&self) -> u64 {
        self.sectors * SECTOR_BYTES
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Would writing `len` more sectors exceed the hard limit (the writer must wait)?
    pub fn must_throttle(&self, len: u32, p: &WritebackParams) -> bool {
        (self.sectors + len as u64) * SECTOR_BYTES > p.dirty_bytes && !self.is_empty()
    }

    /// Record a buffered write of `[sector, sector + len)`.
    pub fn write(&mut self, now: Time, sector: u64, len: u32) {
        let (mut s, mut e) = (sector, sector + len as u64);
        // absorb every run that overlaps or touches [s, e)
        let touching: Vec<(u64, u64)> =
            self.runs.range(..=e).rev().take_while(|&(_, &re)| re >= s).map(|(&rs, &re)| (rs, re)).collect();
        for (rs, re) in touching {
            self.runs.remove(&rs);
            self.sectors -= re - rs;
            s = s.min(rs);
            e = e.max(re);
        }
        self.runs.insert(s, e);
        self.sectors += e - s;
        self.oldest.get_or_insert(now);
    }

    /// Is writeback due at `now`?
    pub fn due(&self, now: Time, p: &WritebackParams) -> bool {
        self.bytes() >= p.dirty_background_bytes
            || self.oldest.is_some_and(|t| now.saturating_since(t) >= p.dirty_expire)
    }

    /// Take everything dirty as write requests `(sector, len)`, ascending.
    pub fn take_all(&mut self, p: &WritebackParams) -> Vec<(u64, u32)> {
        let max = (p.max_request_bytes / SECTOR_BYTES).max(1);
        let mut out = Vec::new();
        for (s, e) in std::mem::take(&mut self.runs) {
            let mut at = s;
            while at < e {
                let n = (e - at).min(max);
                out.push((at, n as u32));
                at += n;
            }
        }
        self.sectors = 0;
        self.oldest = None;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_coalesce_and_overwrites_count_once() {
        let mut d = Dirty::default();
        d.write(Time(0), 100, 8);
        d.write(Time(1), 108, 8); // touches: one run
        d.write(Time(2), 104, 8); // overwrite
        d.write(Time(3), 200, 8);
        assert_eq!(d.bytes(), 24 * 512);
        let p = WritebackParams { max_request_bytes: 8 * 512, ..Default::default() };
        assert_eq!(d.take_all(&p), vec![(100, 8), (108, 8), (200, 8)]);
        assert!(d.is_empty() && d.bytes() == 0);
    }

    #[test]
    fn writeback_is_due_by_size_or_age() {
        let p = WritebackParams { dirty_background_bytes: 8192, ..Default::default() };
        let mut d = Dirty::default();
        d.write(Time(0), 0, 8);
        assert!(!d.due(Time(1), &p));
        assert!(d.due(Time(0) + Duration::from_secs(30), &p), "expired");
        d.write(Time(2), 8, 8);
        assert!(d.due(Time(3), &p), "over the background threshold");
    }

    #[test]
    fn hard_limit_throttles() {
        let p = WritebackParams { dirty_bytes: 8192, ..Default::default() };
        let mut d = Dirty::default();
        assert!(!d.must_throttle(64, &p), "an empty cache never blocks a write");
        d.write(Time(0), 0, 16);
        assert!(d.must_throttle(1, &p));
    }

    #[test]
    fn large_runs_split_at_the_request_bound() {
        let mut d = Dirty::default();
        d.write(Time(0), 0, 2048);
        let p = WritebackParams::default();
        assert_eq!(d.take_all(&p), vec![(0, 1024), (1024, 1024)]);
    }
}

//! What BFQ remembers of a queue's recent behaviour to decide whether idling for it pays
//! (docs/bfq-rules.md §5.3-5.5; Linux's `bfq_update_io_seektime`,
//! `bfq_update_io_thinktime`, `bfq_update_has_short_ttime`, `bfq_update_io_intensity`),
//! for the `bfq` scheduler to use.
//!
//! * **Seekiness**: one bit per arrival, set when the request is seeky with respect to
//!   where the queue's previous request ended ([`super::bfq_budget::seeky`]); the queue is
//!   seeky with more than 19 of the last 32 bits set, totally seeky with all 32.
//! * **Think time**: at an arrival on a queue with nothing queued or in flight, the time
//!   since its last completion (at most twice `slice_idle`) enters a decaying mean: samples
//!   and total decay by 7/8 and gain 256 per sample; the mean is valid past 80 (the
//!   third sample). The think time is short unless the mean is valid and above half of
//!   `slice_idle`.
//! * **I/O bound**: time the queue spent empty within a window that halves past 200 ms;
//!   bound while that idle time is at most a fifth of the window.

use crate::request::{Request, Sector};
use crate::time::{Duration, Time};

use super::bfq_budget::seeky;

/// Set bits of 32 past which a queue is seeky.
const SEEKY_BITS: u32 = 19;
/// Think-time samples (decayed) needed for the mean to count.
const TTIME_VALID: u64 = 80;
/// The I/O-bound window halves past this.
const IO_WINDOW: Duration = Duration::from_millis(200);

#[derive(Clone, Debug, Default)]
pub struct History {
    seek_bits: u32,
    /// Where the queue's previous request ended.
    last_end: Sector,
    ttime_samples: u64,
    ttime_total: u64,
    ttime_mean: u64,
    /// Set at the first arrival.
    io_start: Option<Time>,
    idle: u64,
}

impl History {
    /// A request arrives on the queue: `empty` when the queue had nothing queued or at the
    /// device, `last_completion` its last completion, `slice_idle` the idle slice.
    pub fn arrival(
        &mut self,
        now: Time,
        rq: &Request,
        empty: bool,
        last_completion: Time,
        slice_idle: Duration,
        rotational: bool,
    ) {
        self.seek_bits = (self.seek_bits << 1) | seeky(self.last_end, rq, rotational) as u32;
        self.last_end = rq.end();
        let since = Duration(now.0.saturating_sub(last_completion.0));
        if empty {
            let sample = since.0.min(2 * slice_idle.0);
            self.ttime_samples = (7 * self.ttime_samples + 256) / 8;
            self.ttime_total = (7 * self.ttime_total + 256 * sample) / 8;
            self.ttime_mean = (self.ttime_total + 128) / self.ttime_samples;
        }
        // I/O intensity: the first arrival opens the window
        let start = *self.io_start.get_or_insert(now);
        if empty && now > start {
            self.idle += since.0;
        }
        let window = now.0.saturating_sub(start.0);
        if window > IO_WINDOW.0 {
            self.io_start = Some(Time(now.0 - window / 2));
            self.idle /= 2;
        }
    }

    pub fn seeky(&self) -> bool {
        self.seek_bits.count_ones() > SEEKY_BITS
    }

    pub fn totally_seeky(&self) -> bool {
        self.seek_bits == u32::MAX
    }

    /// The mean think time, once enough samples count.
    pub fn think_time(&self) -> Option<Duration> {
        (self.ttime_samples > TTIME_VALID).then_some(Duration(self.ttime_mean))
    }

    /// Short think time with this idle slice (Linux `has_short_ttime`).
    pub fn short_think_time(&self, slice_idle: Duration) -> bool {
        self.think_time().is_none_or(|t| t.0 <= slice_idle.0 / 2)
    }

    /// Busy at least 80% of the recent window.
    pub fn io_bound(&self, now: Time) -> bool {
        let Some(start) = self.io_start else { return false };
        self.idle * 5 <= now.0.saturating_sub(start.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::rq;

    const SLICE: Duration = Duration::from_millis(8);

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    #[test]
    fn a_queue_is_seeky_past_nineteen_of_thirty_two() {
        let mut h = History::default();
        // sequential first
        for i in 0..32u64 {
            h.arrival(ms(i), &rq(i, 8 + i * 8, 8), false, ms(0), SLICE, true);
        }
        assert!(!h.seeky());
        // 20 far jumps
        for i in 0..20u64 {
            h.arrival(
                ms(100 + i),
                &rq(100 + i, (i % 2) * 10_000_000 + 1_000_000, 8),
                false,
                ms(0),
                SLICE,
                true,
            );
        }
        assert!(h.seeky() && !h.totally_seeky());
        for i in 0..12u64 {
            h.arrival(
                ms(200 + i),
                &rq(200 + i, (i % 2) * 10_000_000 + 2_000_000, 8),
                false,
                ms(0),
                SLICE,
                true,
            );
        }
        assert!(h.totally_seeky());
    }

    #[test]
    fn think_time_counts_from_the_third_sample_and_is_capped() {
        let mut h = History::default();
        let mut t = ms(0);
        for i in 0..3u64 {
            assert!(h.think_time().is_none(), "sample {i}: not yet valid");
            t += Duration::from_millis(30);
            // 30 ms since the last completion: capped at 2 x slice_idle = 16 ms
            h.arrival(t, &rq(i, i * 8, 8), true, Time(t.0 - 30_000_000), SLICE, true);
        }
        let tt = h.think_time().expect("valid after three samples");
        // the decayed sums round so the mean lands just past the 16 ms cap (16.095 ms)
        assert!(tt > Duration::from_millis(15) && tt < Duration::from_micros(16_200), "{tt:?}");
        assert!(!h.short_think_time(SLICE), "16 ms > 4 ms");
        // a queue that is never empty at arrival keeps a short think time
        let mut busy = History::default();
        for i in 0..10u64 {
            busy.arrival(ms(i), &rq(i, i * 8, 8), false, ms(0), SLICE, true);
        }
        assert!(busy.short_think_time(SLICE));
    }

    #[test]
    fn io_bound_while_busy_four_fifths_of_the_window() {
        let mut h = History::default();
        h.arrival(ms(0), &rq(0, 0, 8), true, ms(0), SLICE, true);
        // 100 ms of back-to-back requests
        for i in 1..100u64 {
            h.arrival(ms(i), &rq(i, i * 8, 8), false, ms(i - 1), SLICE, true);
        }
        assert!(h.io_bound(ms(100)));
        // then an arrival after 60 ms empty: 60 of 160 ms idle
        h.arrival(ms(160), &rq(200, 0, 8), true, ms(100), SLICE, true);
        assert!(!h.io_bound(ms(160)));
    }
}

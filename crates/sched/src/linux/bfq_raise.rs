//! BFQ's weight raising (`low_latency`; docs/bfq-rules.md §7; Linux's
//! `bfq_bfqq_handle_idle_busy_switch`, `bfq_update_bfqq_wr_on_rq_arrival`,
//! `bfq_bfqq_softrt_next_start`, `bfq_update_wr_data`, `bfq_wr_duration`), for the `bfq`
//! scheduler to use.
//!
//! A queue's weight is multiplied while it is *raised*:
//! * **interactive** (x30): a synchronous queue of default weight that becomes busy after
//!   more than 2 s idle (a new queue counts as idle forever), outside a burst of queue
//!   creations. The period lasts `bfq_wr_duration` — the reference duration scaled by the
//!   reference rate over the device's peak rate, between 3 and 25 s — or until the queue
//!   has received 120,000 sectors raised.
//! * **soft real-time** (x3000, 300 ms): a queue of default weight that becomes busy, not
//!   totally seeky, with nothing in flight, after its `soft_rt_next_start` — the time at
//!   which, had it gone on at 7,000 sectors/s since it last became busy, it would have
//!   asked again (and at least `slice_idle` + 4 ms after it drained). Each such arrival
//!   renews the 300 ms.
//! * A soft real-time period that ends while the interactive period it interrupted would
//!   still run goes back to interactive; a queue in a large burst loses raising.
//! * An asynchronous busy queue gets interactive raising for an arrival more than 500 ms
//!   after its previous one.

use crate::time::{Duration, Time};

pub const INTERACTIVE_COEFF: u32 = 30;
pub const SOFT_RT_COEFF: u32 = 3000;
pub const SOFT_RT_DURATION: Duration = Duration::from_millis(300);
/// Idle longer than this before becoming busy: interactive.
pub const MIN_IDLE_TIME: Duration = Duration::from_secs(2);
/// Interactive raising ends past this much raised service.
pub const MAX_SERVICE: u64 = 120_000;
/// The soft real-time bandwidth bound, sectors per second.
pub const SOFT_RT_RATE: u64 = 7000;
/// An async queue's arrival this long after its previous one raises it.
pub const ASYNC_GAP: Duration = Duration::from_millis(500);
/// The raising duration's reference (rotational, non-rotational): ms, and rates (fixed
/// point, as [`super::bfq_budget::REF_RATE`]).
pub const REF_WR_DURATION_MS: [u64; 2] = [7000, 2500];
const MIN_WR_DURATION: Duration = Duration::from_secs(3);
const MAX_WR_DURATION: Duration = Duration::from_secs(25);

/// The interactive raising period for a device with `peak_rate` (Linux `bfq_wr_duration`).
pub fn wr_duration(peak_rate: u64, rotational: bool) -> Duration {
    let i = !rotational as usize;
    let ms = super::bfq_budget::REF_RATE[i] * REF_WR_DURATION_MS[i] / peak_rate.max(1);
    Duration::from_millis(ms).clamp(MIN_WR_DURATION, MAX_WR_DURATION)
}

/// What the busy transition looks at.
#[derive(Copy, Clone, Debug)]
pub struct Busy {
    pub now: Time,
    pub sync: bool,
    /// The queue's weight is the default one.
    pub default_weight: bool,
    pub in_burst: bool,
    pub totally_seeky: bool,
    pub in_flight: u32,
    /// When its last turn ended (`None`: a new queue).
    pub went_idle: Option<Time>,
    /// The interactive period for this device ([`wr_duration`]).
    pub duration: Duration,
}

/// One queue's raising.
#[derive(Clone, Debug)]
pub struct Raising {
    pub coeff: u32,
    /// When the period began, and its length.
    pub start: Time,
    pub duration: Duration,
    /// When a soft real-time period interrupted an interactive one (`None`: never).
    switch_to_srt: Option<Time>,
    /// Not before this may the queue count as soft real-time.
    pub soft_rt_next_start: Time,
    /// Service received while raised.
    pub service: u64,
}

impl Default for Raising {
    fn default() -> Self {
        Raising {
            coeff: 1,
            start: Time(0),
            duration: Duration::ZERO,
            switch_to_srt: None,
            soft_rt_next_start: Time(0),
            service: 0,
        }
    }
}

impl Raising {
    pub fn raised(&self) -> bool {
        self.coeff > 1
    }

    pub fn interactive(&self) -> bool {
        self.coeff == INTERACTIVE_COEFF
    }

    /// The queue becomes busy. Returns whether raising started now (the caller then caps
    /// the budget at two minimum budgets).
    pub fn became_busy(&mut self, b: Busy) -> bool {
        let idle_long = b.in_flight == 0 && b.went_idle.is_none_or(|t| b.now.0 > t.0 + MIN_IDLE_TIME.0);
        let interactive = !b.in_burst && idle_long && b.default_weight;
        let soft_rt = !b.totally_seeky
            && !b.in_burst
            && b.now > self.soft_rt_next_start
            && b.in_flight == 0
            && b.default_weight;
        let was = self.coeff;
        if was == 1 {
            if !(b.sync && (interactive || soft_rt)) {
                self.start = b.now;
                return false;
            }
            if interactive {
                self.coeff = INTERACTIVE_COEFF;
                self.duration = b.duration;
                self.service = 0;
            } else {
                self.coeff = SOFT_RT_COEFF;
                self.duration = SOFT_RT_DURATION;
                self.switch_to_srt = None;
            }
            self.start = b.now;
            return true;
        }
        if interactive {
            self.coeff = INTERACTIVE_COEFF;
            self.duration = b.duration;
            self.start = b.now;
        } else if b.in_burst {
            self.end(b.now);
        } else if soft_rt {
            if self.coeff != SOFT_RT_COEFF {
                self.switch_to_srt = Some(self.start);
            }
            self.coeff = SOFT_RT_COEFF;
            self.duration = SOFT_RT_DURATION;
            self.start = b.now;
        }
        false
    }

    /// An asynchronous busy queue, unraised, gets a request `gap` after its previous one:
    /// interactive raising after [`ASYNC_GAP`].
    pub fn async_arrival(&mut self, now: Time, gap: Duration, duration: Duration) {
        if self.coeff == 1 && gap > ASYNC_GAP {
            self.coeff = INTERACTIVE_COEFF;
            self.duration = duration;
            self.start = now;
            self.service = 0;
        }
    }

    /// The queue drained (its turn ended empty with nothing in flight): when it may count
    /// as soft real-time next. `busy_since` is when it last became busy and `served` what
    /// it received since.
    pub fn drained(&mut self, now: Time, busy_since: Time, served: u64, slice_idle: Duration) {
        let paced = busy_since.0 + served * 1_000_000_000 / SOFT_RT_RATE;
        let soonest = now.0 + slice_idle.0 + Duration::from_millis(4).0;
        self.soft_rt_next_start = Time(self.soft_rt_next_start.0.max(paced).max(soonest));
    }

    /// The raised queue dispatched `sectors` (Linux `bfq_update_wr_data`): the period may
    /// end, or fall back from soft real-time to the interactive period it interrupted.
    pub fn dispatched(&mut self, now: Time, sectors: u64, in_burst: bool, interactive_duration: Duration) {
        if !self.raised() {
            return;
        }
        self.service += sectors;
        if in_burst {
            self.end(now);
            return;
        }
        if now.0 > self.start.0 + self.duration.0 {
            match self.switch_to_srt {
                Some(sw) if self.coeff == SOFT_RT_COEFF && now.0 < sw.0 + interactive_duration.0 => {
                    self.coeff = INTERACTIVE_COEFF;
                    self.duration = interactive_duration;
                    self.start = sw;
                }
                _ => self.end(now),
            }
        } else if self.interactive() && self.service > MAX_SERVICE {
            self.end(now);
        }
    }

    fn end(&mut self, now: Time) {
        if self.interactive() {
            self.soft_rt_next_start = now;
        }
        self.coeff = 1;
        self.start = now;
        self.switch_to_srt = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u64) -> Time {
        Time(n * 1_000_000_000)
    }

    fn busy(now: Time) -> Busy {
        Busy {
            now,
            sync: true,
            default_weight: true,
            in_burst: false,
            totally_seeky: false,
            in_flight: 0,
            went_idle: None,
            duration: wr_duration(9333, true),
        }
    }

    #[test]
    fn the_interactive_period_follows_the_peak_rate() {
        // the initial peak rates: 10.5 s on a disk, 3.75 s elsewhere
        assert_eq!(wr_duration(9333, true), Duration::from_millis(10500));
        assert_eq!(wr_duration(22000, false), Duration::from_millis(3750));
        assert_eq!(wr_duration(9333 * 3, true), Duration::from_millis(3500));
        assert_eq!(wr_duration(1, true), Duration::from_secs(25));
        assert_eq!(wr_duration(u64::MAX / 1_000_000, true), Duration::from_secs(3));
    }

    #[test]
    fn a_new_sync_queue_starts_interactive_and_ends_after_its_service() {
        let mut r = Raising::default();
        assert!(r.became_busy(busy(s(1))));
        assert_eq!(r.coeff, INTERACTIVE_COEFF);
        r.dispatched(s(2), 100_000, false, busy(s(2)).duration);
        assert!(r.raised());
        r.dispatched(s(3), 30_000, false, busy(s(3)).duration);
        assert!(!r.raised(), "past 120,000 raised sectors");
        assert_eq!(r.soft_rt_next_start, s(3), "ending interactive raising resets it");
    }

    #[test]
    fn not_for_async_bursts_or_other_weights() {
        for b in [
            Busy { sync: false, ..busy(s(1)) },
            Busy { in_burst: true, ..busy(s(1)) },
            Busy { default_weight: false, ..busy(s(1)) },
        ] {
            let mut r = Raising::default();
            assert!(!r.became_busy(b), "{b:?}");
        }
    }

    #[test]
    fn a_queue_back_within_two_seconds_is_not_interactive_but_may_be_soft_real_time() {
        let mut r = Raising::default();
        let b = Busy { went_idle: Some(s(10)), ..busy(Time(s(10).0 + 500_000_000)) };
        // soft_rt_next_start is 0: it counts as soft real-time
        assert!(r.became_busy(b));
        assert_eq!((r.coeff, r.duration), (SOFT_RT_COEFF, SOFT_RT_DURATION));
        // it drains after 70 sectors in 10 ms: paced at 7000 sectors/s it may come back at +10 ms
        r.drained(Time(s(10).0 + 510_000_000), Time(s(10).0 + 500_000_000), 70, Duration::from_millis(8));
        assert_eq!(r.soft_rt_next_start, Time(s(10).0 + 522_000_000), "slice_idle + 4 ms after draining");
    }

    #[test]
    fn a_soft_real_time_period_falls_back_to_the_interactive_one_it_interrupted() {
        let mut r = Raising::default();
        let d = busy(s(0)).duration;
        assert!(r.became_busy(busy(s(1))));
        // busy again soon, soft real-time: the interactive period's start is remembered
        r.became_busy(Busy { went_idle: Some(s(2)), ..busy(Time(s(2).0 + 100_000_000)) });
        assert_eq!(r.coeff, SOFT_RT_COEFF);
        // 300 ms later the soft real-time period is over, the interactive one (from 1 s) is not
        r.dispatched(s(3), 8, false, d);
        assert_eq!((r.coeff, r.start), (INTERACTIVE_COEFF, s(1)));
        // and it ends with the interactive period
        r.dispatched(Time(s(1).0 + d.0 + 1), 8, false, d);
        assert!(!r.raised());
    }

    #[test]
    fn an_async_queue_is_raised_by_a_late_arrival() {
        let mut r = Raising::default();
        r.async_arrival(s(1), Duration::from_millis(400), Duration::from_secs(10));
        assert!(!r.raised());
        r.async_arrival(s(2), Duration::from_millis(600), Duration::from_secs(10));
        assert!(r.interactive());
    }
}

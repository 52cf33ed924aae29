//! What BFQ learns for I/O injection while it idles (docs/bfq-rules.md §5.8; Linux's
//! `bfq_reset_inject_limit`, `bfq_update_inject_limit`, `bfq_check_waker`), for the
//! `bfq` scheduler to use.
//!
//! * **Inject limit** ([`InjectLimit`]): how many requests the device may hold while the
//!   in-service queue waits for its own. It learns from the queue's *waited* requests —
//!   the first one dispatched after it arrived at an empty queue — how long one takes
//!   alone (the baseline) and with others injected beside it: 1.5 times the baseline or
//!   more lowers the limit, less raises it (up to the most the device has held). It
//!   restarts every second, and when the think time changes.
//! * **Waker** ([`Waker`]): the queue whose completions keep waking this one — the last
//!   completer, within 4 ms, three times in a row within 128 idle slices — which is then
//!   allowed to inject first.

use crate::time::{Duration, Time};

/// Baselines and limits restart this often.
pub const RESET_PERIOD: Duration = Duration::from_secs(1);
/// Sampling waits this long after a decrease.
const DECREASE_SETTLE: Duration = Duration::from_millis(10);

/// One queue's inject limit.
#[derive(Clone, Debug, Default)]
pub struct InjectLimit {
    pub limit: u32,
    /// Service time of a waited request alone (`None`: not measured yet).
    pub baseline: Option<Duration>,
    last_decrease: Time,
    last_reset: Option<Time>,
    /// Sampling: when the waited request was noted, and whether something was injected.
    sampling: Option<Time>,
    pub injected: bool,
}

impl InjectLimit {
    /// Start over (Linux `bfq_reset_inject_limit`).
    pub fn reset(&mut self, now: Time, short_think_time: bool) {
        self.baseline = None;
        self.limit = if short_think_time { 0 } else { 1 };
        self.last_decrease = now;
        self.last_reset = Some(now);
    }

    /// A sync request arrives at the queue while it is empty: restart once a second.
    pub fn empty_arrival(&mut self, now: Time, short_think_time: bool) {
        if self.last_reset.is_none_or(|t| now.0 >= t.0 + RESET_PERIOD.0) {
            self.reset(now, short_think_time);
        }
    }

    /// A sync request arrives at the in-service queue while it is empty, `in_driver` at
    /// the device: the next request dispatched from it is measured, when allowed.
    pub fn start_sampling(&mut self, now: Time, in_driver: u32) {
        let allowed = in_driver == 0 || (self.baseline.is_some() && self.injected && in_driver > 0);
        if allowed && now.0 >= self.last_decrease.0 + DECREASE_SETTLE.0 {
            self.sampling = Some(now);
            if in_driver == 0 {
                self.injected = false;
            }
        }
    }

    /// Another queue's request was injected while this one waited.
    pub fn note_injection(&mut self) {
        self.injected = true;
    }

    /// The waited request completed, `in_driver` at the device before it left and
    /// `max_in_driver` the most the device has held (Linux `bfq_update_inject_limit`).
    pub fn waited_completed(&mut self, now: Time, in_driver: u32, max_in_driver: u32) {
        let Some(start) = self.sampling.take() else { return };
        let t = Duration(now.0.saturating_sub(start.0));
        if let (Some(b), true) = (self.baseline, self.injected) {
            if t.0 * 2 >= b.0 * 3 {
                if self.limit > 0 {
                    self.limit -= 1;
                    self.last_decrease = now;
                }
            } else if self.limit <= max_in_driver {
                self.limit += 1;
            }
        }
        match self.baseline {
            None if in_driver == 1 => {
                self.baseline = Some(t);
                self.limit = self.limit.max(1);
            }
            Some(b) if t < b => self.baseline = Some(t),
            Some(_) if !self.injected && in_driver == 1 => self.baseline = Some(t),
            _ => {}
        }
    }
}

/// Completions this close to an arrival count toward a waker.
const WAKER_GAP: Duration = Duration::from_millis(4);
/// Detections needed.
const WAKER_DETECTIONS: u32 = 3;

/// One queue's waker detection.
#[derive(Clone, Debug, Default)]
pub struct Waker<K> {
    pub waker: Option<K>,
    tentative: Option<K>,
    count: u32,
    first: Time,
}

/// What a waker detection looks at, at a sync arrival to an empty queue.
#[derive(Copy, Clone, Debug)]
pub struct Arrival<K> {
    pub now: Time,
    /// The queue that completed last, and when (`None`: none, or a shared queue).
    pub last_completer: Option<K>,
    pub last_completion: Time,
    pub short_think_time: bool,
    pub in_flight: u32,
    pub slice_idle: Duration,
}

impl<K: Copy + PartialEq> Waker<K> {
    /// Queue `me` gets a sync request while empty (Linux 6.1 `bfq_check_waker`).
    pub fn arrival(&mut self, me: K, a: Arrival<K>) {
        let Some(c) = a.last_completer else { return };
        if c == me
            || a.short_think_time
            || a.in_flight > 0
            || a.now.0 >= a.last_completion.0 + WAKER_GAP.0
            || self.waker == Some(c)
        {
            return;
        }
        let window = a.slice_idle.0 * 128;
        if self.tentative != Some(c) || a.now.0 > self.first.0 + window {
            self.tentative = Some(c);
            self.count = 1;
            self.first = a.now;
            return;
        }
        self.count += 1;
        if self.count == WAKER_DETECTIONS {
            self.waker = Some(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    #[test]
    fn the_limit_learns_from_waited_requests() {
        let mut l = InjectLimit::default();
        l.reset(ms(0), true);
        assert_eq!((l.limit, l.baseline), (0, None));
        // a waited request alone: 5 ms, the baseline, and at least one injection allowed
        l.start_sampling(ms(20), 0);
        l.waited_completed(ms(25), 1, 4);
        assert_eq!((l.limit, l.baseline), (1, Some(Duration::from_millis(5))));
        // with injection beside it, 6 ms (< 7.5): the limit grows
        l.start_sampling(ms(40), 0);
        l.note_injection();
        l.waited_completed(ms(46), 2, 4);
        assert_eq!(l.limit, 2);
        // 8 ms (>= 7.5): it shrinks
        l.start_sampling(ms(60), 1);
        l.note_injection();
        l.waited_completed(ms(68), 2, 4);
        assert_eq!(l.limit, 1);
        // right after a decrease no sampling starts
        l.start_sampling(ms(70), 0);
        l.waited_completed(ms(71), 1, 4);
        assert_eq!(l.baseline, Some(Duration::from_millis(5)), "not sampled");
    }

    #[test]
    fn the_limit_restarts_every_second() {
        let mut l = InjectLimit::default();
        l.empty_arrival(ms(0), false);
        assert_eq!(l.limit, 1, "long think time: one");
        l.start_sampling(ms(20), 0);
        l.waited_completed(ms(25), 1, 4);
        l.empty_arrival(ms(500), true);
        assert!(l.baseline.is_some(), "within the second: kept");
        l.empty_arrival(ms(1000), true);
        assert_eq!((l.limit, l.baseline), (0, None));
    }

    fn arrival(now: Time, from: Option<u32>, done: Time) -> Arrival<u32> {
        Arrival {
            now,
            last_completer: from,
            last_completion: done,
            short_think_time: false,
            in_flight: 0,
            slice_idle: Duration::from_millis(8),
        }
    }

    #[test]
    fn a_waker_is_the_same_completer_three_times_in_a_row() {
        let mut w = Waker::default();
        for i in 0..2u64 {
            w.arrival(1, arrival(ms(100 * i + 2), Some(7), ms(100 * i)));
        }
        assert_eq!(w.waker, None);
        w.arrival(1, arrival(ms(202), Some(7), ms(200)));
        assert_eq!(w.waker, Some(7));
        // a completion 4 ms or more before does not count; neither does the queue itself
        let mut x = Waker::default();
        for i in 0..5u64 {
            x.arrival(1, arrival(ms(100 * i + 4), Some(7), ms(100 * i)));
            x.arrival(1, arrival(ms(100 * i + 50), Some(1), ms(100 * i + 49)));
        }
        assert_eq!(x.waker, None);
        // another completer in between restarts the count
        let mut y = Waker::default();
        y.arrival(1, arrival(ms(2), Some(7), ms(0)));
        y.arrival(1, arrival(ms(102), Some(8), ms(100)));
        y.arrival(1, arrival(ms(202), Some(7), ms(200)));
        y.arrival(1, arrival(ms(302), Some(7), ms(300)));
        assert_eq!(y.waker, None);
        y.arrival(1, arrival(ms(402), Some(7), ms(400)));
        assert_eq!(y.waker, Some(7));
    }
}

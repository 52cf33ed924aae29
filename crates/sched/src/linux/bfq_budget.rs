//! BFQ's budgets (docs/bfq-rules.md §3; Linux's `bfq_max_budget`, `bfq_min_budget`,
//! `bfq_update_peak_rate`, `bfq_update_rate_reset`, `__bfq_bfqq_recalc_budget`), for the
//! `bfq` scheduler to use.
//!
//! * **Device limits**: until 194 budgets have been assigned (`budgets_assigned` moves
//!   toward 256 as `(7x + 256) / 8` at each selection: the 11th passes 194) the largest
//!   budget is 16384 sectors and the smallest 512; after that, the device's maximum
//!   (auto-tuned, or `max_budget` when the user set one) and a 32nd of it.
//! * **Peak rate**: dispatches are sampled in observation intervals. An interval starts at
//!   a dispatch; it is closed by a dispatch after more than 100 ms with nothing at the
//!   device, by reaching 1 s, or by a completion so slow that the largest recent request
//!   went at under 1/1024 sector per µs. A closed interval counts when it has 32 samples
//!   and lasted 300 ms; its rate (sectors per µs, extended to the last completion) updates
//!   the peak through a low-pass filter whose weight grows with the interval's share of
//!   sequential samples and its length — unless it was mostly random and slower than the
//!   peak, or faster than 20 sectors/µs. A sample is sequential when the device was busy
//!   (or the last completion was under 2 ms ago) and the request is not seeky: more than
//!   800 sectors from where the last dispatch ended, on a rotational device (or, on
//!   another, a request under 64 sectors). With the maximum budget automatic, it becomes
//!   what the peak rate transfers in `timeout_sync`.
//! * **Budget at expiration**, by reason, for a synchronous queue without weight raising:
//!   too idle — twice the budget while it still has requests at the device, else four
//!   minimum budgets less (down to the minimum); budget timeout — twice; budget exhausted
//!   — four times (each capped at the device maximum); no more requests — the service it
//!   got (at least the minimum); preempted — unchanged. Asynchronous queues get the device
//!   maximum; weight-raised synchronous ones twice the minimum.
//!
//! Rates are fixed point: sectors per µs `<< 16` (BFQ's `BFQ_RATE_SHIFT`).

use crate::request::{Request, Sector};
use crate::time::{Duration, Time};

/// Fixed-point bits of a rate (sectors per µs).
pub const RATE_SHIFT: u32 = 16;
/// The largest budget until the device maximum is known, in sectors.
pub const DEFAULT_MAX_BUDGET: u64 = 16384;
/// Budgets assigned before the device maximum is trusted.
pub const STATS_MIN_BUDGETS: u32 = 194;
/// Reference peak rates of a rotational and a non-rotational device (fixed point).
pub const REF_RATE: [u64; 2] = [14000, 33000];
/// Observation interval targets and thresholds.
const RATE_REF_INTERVAL: Duration = Duration::from_secs(1);
const RATE_MIN_INTERVAL: Duration = Duration::from_millis(300);
const RATE_MIN_SAMPLES: u32 = 32;
const MIN_TT: Duration = Duration::from_millis(2);
const IDLE_GAP: Duration = Duration::from_millis(100);
/// Seekiness: distance (sectors) and, off rotational devices, request size.
pub const SEEK_THR: Sector = 800;
pub const SECT_THR_NONROT: u32 = 64;

/// Is `rq` seeky with respect to where the last request ended (`last_pos`, 0: unknown)?
pub fn seeky(last_pos: Sector, rq: &Request, rotational: bool) -> bool {
    let dist = if last_pos == 0 { 0 } else { last_pos.abs_diff(rq.sector) };
    dist > SEEK_THR && (rotational || rq.len < SECT_THR_NONROT)
}

/// Why a queue's turn ended (Linux `enum bfqq_expiration`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Expiry {
    TooIdle,
    BudgetTimeout,
    BudgetExhausted,
    NoMoreRequests,
    Preempted,
}

/// The device-wide budget state: limits, and the peak-rate estimate behind them.
#[derive(Clone, Debug)]
pub struct Budgets {
    rotational: bool,
    /// `timeout_sync`.
    timeout: Duration,
    /// `max_budget` as the user set it (`None`: automatic).
    user_max: Option<u64>,
    /// Linux `bfq_max_budget`: the device maximum.
    device_max: u64,
    budgets_assigned: u32,
    /// Peak rate, fixed point.
    pub peak_rate: u64,
    // the observation interval
    samples: u32,
    seq_samples: u32,
    sectors: u64,
    first_dispatch: Time,
    last_dispatch: Time,
    last_completion: Time,
    last_position: Sector,
    max_rq: u32,
}

impl Budgets {
    pub fn new(rotational: bool, timeout: Duration, user_max: Option<u64>) -> Self {
        Budgets {
            rotational,
            timeout,
            user_max,
            device_max: user_max.unwrap_or(DEFAULT_MAX_BUDGET),
            budgets_assigned: 0,
            peak_rate: REF_RATE[!rotational as usize] * 2 / 3,
            samples: 0,
            seq_samples: 0,
            sectors: 0,
            first_dispatch: Time(0),
            last_dispatch: Time(0),
            last_completion: Time(0),
            last_position: 0,
            max_rq: 0,
        }
    }

    /// A queue was set in service.
    pub fn assigned(&mut self) {
        self.budgets_assigned = (self.budgets_assigned * 7 + 256) / 8;
    }

    fn trusted(&self) -> bool {
        self.budgets_assigned >= STATS_MIN_BUDGETS
    }

    /// The largest budget now (Linux `bfq_max_budget`).
    pub fn max_budget(&self) -> u64 {
        if self.trusted() {
            self.device_max
        } else {
            DEFAULT_MAX_BUDGET
        }
    }

    /// The smallest budget now (Linux `bfq_min_budget`).
    pub fn min_budget(&self) -> u64 {
        self.max_budget() / 32
    }

    /// The device maximum itself (what the expiry caps read).
    pub fn device_max(&self) -> u64 {
        self.device_max
    }

    /// Where the last dispatched request ended.
    pub fn last_position(&self) -> Sector {
        self.last_position
    }

    fn start_interval(&mut self, now: Time, rq: Option<&Request>) {
        match rq {
            Some(rq) => {
                self.first_dispatch = now;
                self.last_dispatch = now;
                self.samples = 1;
                self.seq_samples = 0;
                self.sectors = rq.len as u64;
                self.max_rq = rq.len;
            }
            None => self.samples = 0,
        }
    }

    /// Close the interval (its rate may update the peak), then start one with `rq`.
    fn close_interval(&mut self, now: Time, rq: Option<&Request>) {
        let mut length = self.last_dispatch.0.saturating_sub(self.first_dispatch.0);
        if rq.is_some() {
            length = now.0.saturating_sub(self.first_dispatch.0).max(length);
        }
        if self.samples >= RATE_MIN_SAMPLES && length >= RATE_MIN_INTERVAL.0 {
            let length = length.max(self.last_completion.0.saturating_sub(self.first_dispatch.0));
            let us = (length / 1000).max(1);
            let rate = (self.sectors << RATE_SHIFT) / us;
            let mostly_random = (self.seq_samples as u64) < (3 * self.samples as u64) / 4;
            if !((mostly_random && rate <= self.peak_rate) || rate > 20 << RATE_SHIFT) {
                let w = 9 * self.seq_samples as u64 / self.samples as u64;
                let w = (w * length / RATE_REF_INTERVAL.0).min(8);
                let divisor = 10 - w;
                self.peak_rate = (self.peak_rate * (divisor - 1) / divisor + rate / divisor).max(1);
                if self.user_max.is_none() {
                    self.device_max = (self.peak_rate * (self.timeout.0 / 1_000_000) * 1000) >> RATE_SHIFT;
                }
            }
        }
        self.start_interval(now, rq);
    }

    /// A request goes to the device, with `in_driver` requests there before it.
    pub fn dispatched(&mut self, now: Time, rq: &Request, in_driver: u32) {
        if self.samples == 0 {
            self.start_interval(now, Some(rq));
        } else if now.0.saturating_sub(self.last_dispatch.0) > IDLE_GAP.0 && in_driver == 0 {
            self.close_interval(now, Some(rq));
        } else {
            self.samples += 1;
            let busy = in_driver > 0 || now.0.saturating_sub(self.last_completion.0) < MIN_TT.0;
            if busy && !seeky(self.last_position, rq, self.rotational) {
                self.seq_samples += 1;
            }
            self.sectors += rq.len as u64;
            // the largest request restarts every 32 samples
            self.max_rq = if self.samples & 31 != 0 { self.max_rq.max(rq.len) } else { rq.len };
            if now.0.saturating_sub(self.first_dispatch.0) >= RATE_REF_INTERVAL.0 {
                self.close_interval(now, Some(rq));
            }
        }
        self.last_position = rq.end();
        self.last_dispatch = now;
    }

    /// A request completed.
    pub fn completed(&mut self, now: Time) {
        let us = now.0.saturating_sub(self.last_completion.0) / 1000;
        if us > MIN_TT.0 / 1000 && ((self.max_rq as u64) << RATE_SHIFT) / us < 1 << (RATE_SHIFT - 10) {
            self.close_interval(now, None);
        }
        self.last_completion = now;
    }

    /// A queue's next maximum budget at the end of its turn (`None`: unchanged).
    /// `max_budget` is its current one, `service` what it got in the turn, `in_flight`
    /// its requests still at the device.
    pub fn recalc(&self, q: QueueBudget, reason: Expiry) -> Option<u64> {
        let (min, cap) = (self.min_budget(), self.device_max);
        let b = if q.raised { 2 * min } else { q.max_budget };
        let b = match (q.sync, q.raised) {
            (true, false) => match reason {
                Expiry::TooIdle if q.in_flight > 0 => (2 * b).min(cap),
                Expiry::TooIdle if b > 5 * min => b - 4 * min,
                Expiry::TooIdle => min,
                Expiry::BudgetTimeout => (2 * b).min(cap),
                Expiry::BudgetExhausted => (4 * b).min(cap),
                Expiry::NoMoreRequests => q.service.max(min),
                Expiry::Preempted => return None,
            },
            (false, _) => cap,
            (true, true) => b,
        };
        Some(if self.trusted() && self.user_max.is_none() { b.min(cap) } else { b })
    }
}

/// What [`Budgets::recalc`] needs of a queue.
#[derive(Copy, Clone, Debug)]
pub struct QueueBudget {
    pub sync: bool,
    pub raised: bool,
    pub max_budget: u64,
    pub service: u64,
    pub in_flight: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::rq;

    fn ms(n: u64) -> Time {
        Time(n * 1_000_000)
    }

    #[test]
    fn the_device_maximum_is_trusted_from_the_eleventh_selection() {
        let mut b = Budgets::new(true, Duration::from_millis(125), None);
        let mut n = 0;
        while !b.trusted() {
            b.assigned();
            n += 1;
        }
        assert_eq!(n, 11);
        assert_eq!(Budgets::new(true, Duration::from_millis(125), None).min_budget(), 512);
    }

    #[test]
    fn seekiness_needs_a_distance_and_on_flash_a_small_request() {
        assert!(!seeky(0, &rq(1, 1_000_000, 8), true), "unknown last position");
        assert!(seeky(1000, &rq(1, 1801, 8), true));
        assert!(!seeky(1000, &rq(1, 1800, 8), true));
        assert!(!seeky(1000, &rq(1, 100_000, 64), false), "a large request off a rotational device");
        assert!(seeky(1000, &rq(1, 100_000, 63), false));
    }

    /// Sequential 256-sector reads back to back, one at the device at a time, `gap` apart.
    fn stream(b: &mut Budgets, from: Time, n: u64, gap: Duration) -> Time {
        let mut t = from;
        for i in 0..n {
            let r = rq(i, 8 + i * 256, 256);
            b.dispatched(t, &r, 0);
            t += gap;
            b.completed(Time(t.0 - 1000));
        }
        t
    }

    #[test]
    fn a_sequential_second_raises_the_peak_and_the_maximum_budget() {
        let mut b = Budgets::new(true, Duration::from_millis(125), None);
        let p0 = b.peak_rate;
        assert_eq!(p0, 9333);
        // 256 sectors every 1 ms: 0.256 sectors/µs, above the initial 0.142
        let t = stream(&mut b, ms(1), 1100, Duration::from_millis(1));
        assert!(b.peak_rate > p0, "peak {} from {p0}", b.peak_rate);
        let rate = (256u64 << RATE_SHIFT) / 1000;
        assert!(b.peak_rate <= rate, "the filter moves toward the rate, not past it");
        // the maximum budget: what the peak rate moves in 125 ms
        assert_eq!(b.device_max(), (b.peak_rate * 125_000) >> RATE_SHIFT);
        assert!(t > ms(1000));
    }

    #[test]
    fn a_random_slow_interval_leaves_the_peak_alone() {
        let mut b = Budgets::new(true, Duration::from_millis(125), None);
        let p0 = b.peak_rate;
        // seeky 8-sector reads every 10 ms: slow and random
        let mut t = ms(1);
        for i in 0..200u64 {
            let r = rq(i, 1_000_000 * (i % 7 + 1), 8);
            b.dispatched(t, &r, 0);
            t += Duration::from_millis(10);
            b.completed(Time(t.0 - 1000));
        }
        assert_eq!(b.peak_rate, p0);
        assert_eq!(b.device_max(), DEFAULT_MAX_BUDGET, "never updated");
    }

    #[test]
    fn a_user_maximum_is_kept() {
        let mut b = Budgets::new(true, Duration::from_millis(125), Some(4096));
        stream(&mut b, ms(1), 1100, Duration::from_millis(1));
        assert_eq!(b.device_max(), 4096);
    }

    #[test]
    fn budgets_at_expiration_follow_the_reason() {
        let b = Budgets::new(true, Duration::from_millis(125), None);
        let (min, cap) = (b.min_budget(), b.device_max());
        let q = QueueBudget { sync: true, raised: false, max_budget: 4096, service: 1000, in_flight: 0 };
        assert_eq!(b.recalc(q, Expiry::BudgetTimeout), Some(8192));
        assert_eq!(b.recalc(q, Expiry::BudgetExhausted), Some(cap.min(16384)));
        assert_eq!(b.recalc(q, Expiry::NoMoreRequests), Some(1000));
        assert_eq!(b.recalc(QueueBudget { service: 10, ..q }, Expiry::NoMoreRequests), Some(min));
        assert_eq!(b.recalc(q, Expiry::TooIdle), Some(4096 - 4 * min));
        assert_eq!(b.recalc(QueueBudget { max_budget: 2000, ..q }, Expiry::TooIdle), Some(min));
        assert_eq!(b.recalc(QueueBudget { in_flight: 1, ..q }, Expiry::TooIdle), Some(8192));
        assert_eq!(b.recalc(q, Expiry::Preempted), None);
        assert_eq!(b.recalc(QueueBudget { sync: false, ..q }, Expiry::TooIdle), Some(cap));
        assert_eq!(b.recalc(QueueBudget { raised: true, ..q }, Expiry::BudgetExhausted), Some(2 * min));
    }
}

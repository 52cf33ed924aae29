//! When BFQ ends a queue's turn on time, and how it charges a slow queue by time rather
//! than by sectors (docs/bfq-rules.md §4.1, 4.3; Linux's `bfq_set_budget_timeout`,
//! `bfq_may_expire_for_budg_timeout`, `bfq_bfqq_is_slow`, `bfq_bfqq_charge_time`), for the
//! `bfq` scheduler to use.
//!
//! * **Budget timeout**: a queue entering service may keep it `timeout_sync` times its
//!   weight's raising factor (30 for an interactive-raised queue; 1 for a soft real-time
//!   one). A queue past its timeout expires unless it is waiting on the idle timer with
//!   less than a third of its budget left.
//! * **Slow**: an asynchronous queue never is. A synchronous turn under 20 ms is slow when
//!   the queue is seeky; a longer one when it got less than half the device's maximum
//!   budget.
//! * **Time charge**: an unraised queue that was slow, or timed out with a third of its
//!   budget unused, is charged `max_budget x elapsed / 125 ms` (elapsed in whole ms, below
//!   1 ms counted as 8 ms on a disk and 2 ms elsewhere; bounded at 125 ms, so a turn that
//!   ran to its timeout is charged the whole maximum budget), never less than its service:
//!   seeky and slow queues share the device by time, the others by sectors.

use super::bfq_budget::Expiry;
use crate::time::{Duration, Time};

/// The timeout constant the time charge divides by (Linux's built-in `bfq_timeout`, not
/// the tunable).
const CHARGE_TIMEOUT_MS: u64 = 125;
/// Turns longer than this are judged by service, not seekiness.
const SLOW_TURN: Duration = Duration::from_millis(20);

/// When a queue entering service at `now` times out: `timeout_sync` scaled by the raising
/// factor of its weight (`weight / orig_weight`), except for soft real-time raising.
pub fn budget_timeout(
    now: Time,
    timeout_sync: Duration,
    soft_rt: bool,
    weight: u32,
    orig_weight: u32,
) -> Time {
    let coeff = if soft_rt { 1 } else { (weight / orig_weight.max(1)).max(1) as u64 };
    Time(now.0 + timeout_sync.0 * coeff)
}

/// May a queue past its timeout expire? Not while it waits on the idle timer with less
/// than a third of its budget left.
pub fn may_expire_for_timeout(waiting_on_timer: bool, budget: u64, service: u64) -> bool {
    !waiting_on_timer || budget.saturating_sub(service) >= budget / 3
}

/// A turn's ending, as the time charge sees it.
#[derive(Copy, Clone, Debug)]
pub struct Turn {
    pub sync: bool,
    pub raised: bool,
    pub seeky: bool,
    pub rotational: bool,
    /// From the turn's start to now, or to when idling began if the idle timer ended it.
    pub elapsed: Duration,
    pub service: u64,
    pub budget: u64,
    pub reason: Expiry,
}

/// Was the turn slow? (Linux `bfq_bfqq_is_slow`; `device_max` is the device's maximum
/// budget.)
pub fn is_slow(t: &Turn, device_max: u64) -> bool {
    if !t.sync {
        return false;
    }
    if t.elapsed <= SLOW_TURN {
        t.seeky
    } else {
        t.service < device_max / 2
    }
}

/// The service to charge for the turn when it is charged by time (`None`: by sectors).
pub fn time_charge(t: &Turn, device_max: u64) -> Option<u64> {
    let timed_out_early =
        t.reason == Expiry::BudgetTimeout && t.budget.saturating_sub(t.service) >= t.budget / 3;
    if t.raised || !(is_slow(t, device_max) || timed_out_early) {
        return None;
    }
    let ms = if t.elapsed < Duration::from_millis(1) {
        if t.rotational {
            8
        } else {
            2
        }
    } else {
        t.elapsed.0 / 1_000_000
    };
    let charge = device_max * ms.min(CHARGE_TIMEOUT_MS) / CHARGE_TIMEOUT_MS;
    Some(charge.max(t.service))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn() -> Turn {
        Turn {
            sync: true,
            raised: false,
            seeky: true,
            rotational: true,
            elapsed: Duration::from_millis(10),
            service: 64,
            budget: 16384,
            reason: Expiry::TooIdle,
        }
    }

    #[test]
    fn timeouts_scale_with_interactive_raising_only() {
        let t = Duration::from_millis(125);
        assert_eq!(budget_timeout(Time(0), t, false, 40, 40), Time(125_000_000));
        assert_eq!(budget_timeout(Time(0), t, false, 1200, 40), Time(3_750_000_000), "x30: 3.75 s");
        assert_eq!(budget_timeout(Time(0), t, true, 120_000, 40), Time(125_000_000), "soft real time: x1");
        assert!(may_expire_for_timeout(false, 300, 299));
        assert!(may_expire_for_timeout(true, 300, 200));
        assert!(!may_expire_for_timeout(true, 300, 201));
    }

    #[test]
    fn a_seeky_turn_is_charged_by_its_time() {
        let m = 16384;
        assert!(is_slow(&turn(), m));
        // 10 ms of a 125 ms slice's worth of the maximum budget
        assert_eq!(time_charge(&turn(), m), Some(m * 10 / 125));
        // under 1 ms counts as 8 ms on a disk, 2 ms elsewhere
        let quick = Turn { elapsed: Duration::from_micros(300), ..turn() };
        assert_eq!(time_charge(&quick, m), Some(m * 8 / 125));
        assert_eq!(time_charge(&Turn { rotational: false, ..quick }, m), Some(m * 2 / 125));
    }

    #[test]
    fn sequential_async_and_raised_turns_are_charged_by_sectors() {
        let m = 16384;
        let seq = Turn { seeky: false, service: 12_000, elapsed: Duration::from_millis(50), ..turn() };
        assert!(!is_slow(&seq, m));
        assert_eq!(time_charge(&seq, m), None);
        assert_eq!(time_charge(&Turn { sync: false, ..turn() }, m), None);
        assert_eq!(time_charge(&Turn { raised: true, ..turn() }, m), None);
        // a long turn with little service is slow even when sequential
        let starved = Turn { seeky: false, service: 1000, elapsed: Duration::from_millis(60), ..turn() };
        assert!(is_slow(&starved, m));
        assert_eq!(time_charge(&starved, m), Some(m * 60 / 125));
    }

    #[test]
    fn a_budget_timeout_with_a_third_unused_is_charged_by_time_never_below_the_service() {
        let m = 16384;
        let t = Turn {
            seeky: false,
            service: 9000,
            elapsed: Duration::from_millis(130),
            reason: Expiry::BudgetTimeout,
            budget: 16384,
            ..turn()
        };
        assert!(!is_slow(&t, m));
        // 130 ms: bounded at the 125 ms constant, the whole maximum budget
        assert_eq!(time_charge(&t, m), Some(m));
        // a long turn is never charged more than the maximum budget, nor less than its service
        let hours = Turn { elapsed: Duration::from_secs(3600), service: 1000, ..t };
        assert_eq!(time_charge(&hours, m), Some(m));
        let big = Turn { elapsed: Duration::from_secs(1), service: 20_000, budget: 40_000, ..t };
        assert_eq!(time_charge(&big, m), Some(20_000));
        let long = Turn { elapsed: Duration::from_millis(100), service: 1000, ..t };
        assert_eq!(time_charge(&long, m), Some(m * 100 / 125));
    }
}

//! Anticipation heuristics: whether, and how long, to keep the disk idle for the context
//! that issued the last request. 001 Section 3.3 (SPTF and its Aged-SPTF and CSCAN
//! variants), Section 3.4 (proportional share) and Section 3.5 (their combination).
//!
//! The core ([`super::Antic`]) asks its heuristic to evaluate the policy's candidate and gets
//! back a duration: zero means dispatch now, anything else is the wait from `now`. Every
//! wait is at most `min(p95, 15 ms) - elapsed`, where `p95` is the last context's 95th
//! percentile thinktime, `elapsed` the time since its last request completed and 15 ms the
//! range of the thinktime table ([`THINK_RANGE`]): no wait outlasts the last completion by
//! more than 15 ms.
//!
//! - [`Seek`] (SPTF, 3.3), exactly the paper's equation, with `lp` the last context:
//!   ```text
//!   benefit = positioning_time(candidate) - lp.expected_positioning_time
//!   cost    = max(0, lp.median_thinktime - elapsed)
//!   wait    = max(0, lp.p95_thinktime - elapsed)
//!   return benefit > cost ? wait : 0
//!   ```
//!   `positioning_time(candidate)` is `dev.positioning(dev.head(), candidate.sector)`, the
//!   unbiased curve of 001 Section 3.6 (no backward surcharge: a 50% extra on backward
//!   moves would make waiting look worth a thinktime half again as long). Before a
//!   context has a thinktime sample and a positioning sample, nothing is expected of it:
//!   no wait.
//! - [`AgedSeek`] (Aged-SPTF, 3.3): no wait whenever Aged-SPTF's candidate is not what
//!   plain SPTF would choose — aging overrode positioning, and the candidate will go
//!   whatever arrives — taken as "another request is strictly cheaper to reach"
//!   ([`AgedSptf::sptf_choice`]); otherwise [`Seek`].
//! - [`Directional`] (CSCAN, 3.3): no wait when the candidate is a forward seek and the
//!   last context's next request is more than `antic_backward_threshold` (80%) likely to
//!   lie behind (CSCAN would not serve it next); otherwise [`Seek`]. Also used for
//!   `deadline`, whose batches sweep upward the same way.
//! - [`Share`] (proportional share, 3.4): wait for the 95th percentile thinktime when the
//!   last context (a) has no pending request, (b) has a median thinktime below
//!   `antic_think_cutoff` (3 ms) and (c) has a virtual clock below `minclock`, the smallest
//!   clock among contexts with requests queued.
//! - [`Combined`] (3.5): the larger of [`Seek`] and [`Share`] — wait if either reason holds
//!   — with the paper's two corrections for the relaxed (tau) stride policy: (1) condition
//!   (c) compares against `minclock + tau` instead of `minclock`; (2) no wait at all when
//!   the last context's clock exceeds `minclock + tau`, since the policy would not serve
//!   its next request anyway (Seek's conservative wait becomes pointless).

use crate::device::DeviceView;
use crate::policy::{AgedSptf, Policy, Stride};
use crate::request::{ContextId, Request};
use crate::time::{Duration, Time};

use super::stats::{CtxStats, THINK_RANGE};

/// What a heuristic is told at a decision point.
pub struct Eval<'a> {
    pub now: Time,
    pub dev: &'a dyn DeviceView,
    /// The policy's choice.
    pub candidate: &'a Request,
    /// `dev.positioning(dev.head(), candidate.sector)`.
    pub cand_pos: Duration,
    /// The context that issued the last request (`None`: the anonymous context).
    pub lp: Option<ContextId>,
    pub lp_stats: &'a CtxStats,
    /// Does the last context have requests queued in the scheduler?
    pub lp_pending: bool,
    /// Time since the last context's last request completed.
    pub elapsed: Duration,
}

/// An anticipation heuristic for policy `P`: it may read the policy's state.
pub trait Heuristic<P: ?Sized>: Send {
    /// How long to wait from `e.now` before dispatching (zero: dispatch now).
    fn evaluate(&self, e: &Eval<'_>, policy: &P) -> Duration;
}

/// The wait a heuristic asks for: up to the 95th percentile thinktime (capped at the
/// table's range) after the last completion.
fn wait_until_p95(p95: Duration, elapsed: Duration) -> Duration {
    p95.min(THINK_RANGE) - elapsed
}

/// The SPTF cost-benefit equation of 001 Section 3.3.
pub fn seek_wait(cand_pos: Duration, lp: &CtxStats, elapsed: Duration) -> Duration {
    let (Some(median), Some(p95), Some(expected)) = (lp.think.median(), lp.think.p95(), lp.positioning.get())
    else {
        return Duration::ZERO;
    };
    let benefit = cand_pos.0 as f64 - expected;
    let cost = (median - elapsed).0 as f64;
    if benefit > cost {
        wait_until_p95(p95, elapsed)
    } else {
        Duration::ZERO
    }
}

/// The CSCAN clause of 001 Section 3.3 in front of [`seek_wait`].
pub fn directional_wait(e: &Eval<'_>, backward_threshold: f64) -> Duration {
    let forward = e.candidate.sector >= e.dev.head();
    if forward && e.lp_stats.backward.get().is_some_and(|p| p > backward_threshold) {
        return Duration::ZERO;
    }
    seek_wait(e.cand_pos, e.lp_stats, e.elapsed)
}

/// The proportional-share conditions of 001 Section 3.4; `bound` is `minclock` (or
/// `minclock + tau` in the combination).
pub fn share_wait(e: &Eval<'_>, lp_clock: i64, bound: i64, think_cutoff: Duration) -> Duration {
    let (Some(median), Some(p95)) = (e.lp_stats.think.median(), e.lp_stats.think.p95()) else {
        return Duration::ZERO;
    };
    if e.lp_pending || median >= think_cutoff || lp_clock >= bound {
        return Duration::ZERO;
    }
    wait_until_p95(p95, e.elapsed)
}

/// The combination of 001 Section 3.5 over clocks `lp_clock`, `min_clock` and `tau`.
pub fn combined_wait(
    e: &Eval<'_>,
    lp_clock: i64,
    min_clock: i64,
    tau: i64,
    think_cutoff: Duration,
) -> Duration {
    let relaxed = min_clock.saturating_add(tau);
    if lp_clock > relaxed {
        return Duration::ZERO; // correction 2
    }
    let seek = seek_wait(e.cand_pos, e.lp_stats, e.elapsed);
    seek.max(share_wait(e, lp_clock, relaxed, think_cutoff)) // correction 1: minclock + tau
}

/// SPTF (and any policy that prefers nearby requests).
#[derive(Copy, Clone, Debug, Default)]
pub struct Seek;

impl<P: ?Sized> Heuristic<P> for Seek {
    fn evaluate(&self, e: &Eval<'_>, _policy: &P) -> Duration {
        seek_wait(e.cand_pos, e.lp_stats, e.elapsed)
    }
}

/// Aged-SPTF: [`Seek`], except when aging overrides the SPTF choice.
#[derive(Copy, Clone, Debug, Default)]
pub struct AgedSeek;

impl Heuristic<AgedSptf> for AgedSeek {
    fn evaluate(&self, e: &Eval<'_>, policy: &AgedSptf) -> Duration {
        if policy.urgent(e.now) {
            return Duration::ZERO;
        }
        if let Some(id) = policy.sptf_choice(e.dev) {
            let sptf = policy.get(id).expect("sptf_choice names a queued request");
            let head = e.dev.head();
            if id != e.candidate.id
                && e.dev.estimate(head, sptf.sector) < e.dev.estimate(head, e.candidate.sector)
            {
                return Duration::ZERO;
            }
        }
        seek_wait(e.cand_pos, e.lp_stats, e.elapsed)
    }
}

/// CSCAN (and deadline's upward batches): [`Seek`] unless the last context tends to seek
/// backward.
#[derive(Copy, Clone, Debug)]
pub struct Directional {
    /// Probability of a backward seek above which a forward candidate is not waited on.
    pub backward_threshold: f64,
}

impl<P: ?Sized> Heuristic<P> for Directional {
    fn evaluate(&self, e: &Eval<'_>, _policy: &P) -> Duration {
        directional_wait(e, self.backward_threshold)
    }
}

/// Proportional share (Stride/YFQ), 001 Section 3.4.
#[derive(Copy, Clone, Debug)]
pub struct Share {
    /// Condition (b): the median thinktime must be below this.
    pub think_cutoff: Duration,
}

impl Heuristic<Stride> for Share {
    fn evaluate(&self, e: &Eval<'_>, policy: &Stride) -> Duration {
        let Some(min) = policy.min_clock() else { return Duration::ZERO };
        share_wait(e, policy.clock(e.lp), min, self.think_cutoff)
    }
}

/// Stride relaxed by tau with seek reduction: the combination of 001 Section 3.5.
#[derive(Copy, Clone, Debug)]
pub struct Combined {
    pub think_cutoff: Duration,
}

impl Heuristic<Stride> for Combined {
    fn evaluate(&self, e: &Eval<'_>, policy: &Stride) -> Duration {
        let Some(min) = policy.min_clock() else { return Duration::ZERO };
        combined_wait(e, policy.clock(e.lp), min, policy.tau(), self.think_cutoff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::AgedSptfParams;
    use crate::request::ReqId;
    use crate::testutil::{rq, FixedView};

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    /// A context whose thinktimes were all `think`, whose requests were `pos` apart and
    /// which seeks backward with probability `backward`.
    fn ctx(think: Duration, pos: Duration, backward: f64) -> CtxStats {
        let mut s = CtxStats::default();
        for _ in 0..40 {
            s.record_think(think);
            s.record_position(pos, false);
        }
        s.backward = Default::default();
        s.backward.record(backward, 0.5);
        s
    }

    /// FixedView: 100 us + 1 ns per sector (backward 1.5x, which `positioning` leaves out).
    fn eval<'a>(dev: &'a FixedView, cand: &'a Request, lp: &'a CtxStats, elapsed: Duration) -> Eval<'a> {
        Eval {
            now: Time(0),
            dev,
            candidate: cand,
            cand_pos: dev.positioning(dev.head, cand.sector),
            lp: Some(ContextId(0)),
            lp_stats: lp,
            lp_pending: false,
            elapsed,
        }
    }

    fn ms(x: f64) -> Duration {
        Duration((x * MS as f64).round() as u64)
    }

    #[test]
    fn seek_waits_when_the_positioning_gain_beats_the_expected_thinktime() {
        let dev = FixedView::linear(1_000_000);
        // median 1.25 ms, p95 1.475 ms (all samples in [1.0, 1.5) ms); 0.2 ms apart
        let lp = ctx(Duration(1_200 * US), Duration(200 * US), 0.0);
        assert_eq!(lp.think.median(), Some(ms(1.25)));
        let far = rq(1, 1_000_000 + 4_900_000, 8); // 5 ms away: benefit 4.8 ms
        let near = rq(2, 1_000_000 + 900_000, 8); // 1 ms away: benefit 0.8 ms
        assert_eq!(Seek.evaluate(&eval(&dev, &far, &lp, Duration::ZERO), &()), ms(1.475));
        assert_eq!(Seek.evaluate(&eval(&dev, &far, &lp, ms(0.5)), &()), ms(0.975));
        // the near candidate: benefit 0.8 ms < cost 1.25 ms, no wait ...
        assert_eq!(Seek.evaluate(&eval(&dev, &near, &lp, Duration::ZERO), &()), Duration::ZERO);
        assert_eq!(Seek.evaluate(&eval(&dev, &near, &lp, ms(0.4)), &()), Duration::ZERO);
        // ... until the median has passed (cost 0): wait out the rest to the p95
        assert_eq!(Seek.evaluate(&eval(&dev, &near, &lp, ms(1.3)), &()), ms(0.175));
        // past the p95 nothing is expected any more
        assert_eq!(Seek.evaluate(&eval(&dev, &far, &lp, ms(1.5)), &()), Duration::ZERO);
        // a context with long positioning times gains nothing from waiting
        let scattered = ctx(Duration(1_200 * US), Duration(6 * MS), 0.0);
        assert_eq!(Seek.evaluate(&eval(&dev, &far, &scattered, Duration::ZERO), &()), Duration::ZERO);
        // no statistics, no expectation
        let fresh = CtxStats::default();
        assert_eq!(Seek.evaluate(&eval(&dev, &far, &fresh, Duration::ZERO), &()), Duration::ZERO);
    }

    #[test]
    fn no_wait_exceeds_the_thinktime_table() {
        let dev = FixedView::linear(0);
        // 40 ms away; median ~3.35 ms, a tail past 15 ms
        let far = rq(1, 40_000_000, 8);
        let mut lp = ctx(Duration(3_200 * US), Duration(100 * US), 0.0);
        for _ in 0..3 {
            lp.record_think(Duration::from_millis(50));
        }
        assert_eq!(lp.think.p95(), Some(Duration::MAX));
        assert_eq!(Seek.evaluate(&eval(&dev, &far, &lp, ms(1.0)), &()), ms(14.0));
    }

    #[test]
    fn directional_skips_forward_candidates_for_backward_seekers() {
        let dev = FixedView::linear(6_000_000);
        let ahead = rq(1, 6_000_000 + 4_900_000, 8);
        let behind = rq(2, 10_000, 8); // 6 ms back, the backward surcharge not counted
        let h = Directional { backward_threshold: 0.8 };
        let backward = ctx(Duration(1_200 * US), Duration(200 * US), 0.9);
        assert!(backward.backward.get().unwrap() > 0.8);
        assert_eq!(h.evaluate(&eval(&dev, &ahead, &backward, Duration::ZERO), &()), Duration::ZERO);
        // a backward candidate (the sweep wrapped): the usual equation
        assert_eq!(h.evaluate(&eval(&dev, &behind, &backward, Duration::ZERO), &()), ms(1.475));
        // a context seeking either way half the time: the usual equation
        let random = ctx(Duration(1_200 * US), Duration(200 * US), 0.5);
        assert_eq!(h.evaluate(&eval(&dev, &ahead, &random, Duration::ZERO), &()), ms(1.475));
    }

    #[test]
    fn aged_seek_does_not_wait_when_aging_overrides_sptf() {
        let dev = FixedView::linear(0);
        let lp = ctx(Duration(1_200 * US), Duration(200 * US), 0.0);
        let mut p = AgedSptf::new(AgedSptfParams { aging_weight: 1.0, max_latency: Duration::from_secs(1) });
        // #1 is 5 ms away but has waited 10 ms; #2 is 2 ms away and new
        p.add(Time(0), rq(1, 4_900_000, 8));
        p.add(Time(10 * MS), Request { arrival: Time(10 * MS), ..rq(2, 1_900_000, 8) });
        let now = Time(10 * MS);
        let cand = p.select(now, &dev).unwrap();
        assert_eq!(cand, ReqId(1), "aging overrides positioning");
        assert_eq!(p.sptf_choice(&dev), Some(ReqId(2)));
        let c = *p.get(cand).unwrap();
        let e = Eval { now, ..eval(&dev, &c, &lp, Duration::ZERO) };
        assert_eq!(AgedSeek.evaluate(&e, &p), Duration::ZERO);
        // without aging the same candidate set is plain SPTF: the usual equation
        let mut q = AgedSptf::new(AgedSptfParams { aging_weight: 0.0, max_latency: Duration::from_secs(1) });
        q.add(Time(0), rq(1, 4_900_000, 8));
        let id = q.select(now, &dev).unwrap();
        let c = *q.get(id).unwrap();
        let e = Eval { now, ..eval(&dev, &c, &lp, Duration::ZERO) };
        assert_eq!(AgedSeek.evaluate(&e, &q), ms(1.475));
        // an overdue request is never waited over
        let late = Time(2_000 * MS);
        let e = Eval { now: late, ..eval(&dev, &c, &lp, Duration::ZERO) };
        assert!(q.urgent(late));
        assert_eq!(AgedSeek.evaluate(&e, &q), Duration::ZERO);
    }

    #[test]
    fn share_waits_only_for_a_quick_lagging_context_without_requests() {
        let dev = FixedView::linear(0);
        let cand = rq(1, 100, 8);
        let quick = ctx(Duration(1_200 * US), Duration(5 * MS), 0.0);
        let slow = ctx(Duration(3_200 * US), Duration(5 * MS), 0.0);
        let cutoff = Duration::from_millis(3);
        let e = eval(&dev, &cand, &quick, Duration::ZERO);
        // (a), (b), (c) hold: wait for the p95 (positioning plays no part)
        assert_eq!(share_wait(&e, 10, 20, cutoff), ms(1.475));
        assert_eq!(share_wait(&eval(&dev, &cand, &quick, ms(1.0)), 10, 20, cutoff), ms(0.475));
        // (a) fails
        assert_eq!(
            share_wait(
                &Eval { lp_pending: true, ..eval(&dev, &cand, &quick, Duration::ZERO) },
                10,
                20,
                cutoff
            ),
            Duration::ZERO
        );
        // (b) fails
        assert_eq!(share_wait(&eval(&dev, &cand, &slow, Duration::ZERO), 10, 20, cutoff), Duration::ZERO);
        // (c) fails: not behind minclock
        assert_eq!(share_wait(&e, 20, 20, cutoff), Duration::ZERO);
    }

    #[test]
    fn combined_takes_the_larger_wait_with_both_corrections() {
        let dev = FixedView::linear(1_000_000);
        let cutoff = Duration::from_millis(3);
        let far = rq(1, 1_000_000 + 4_900_000, 8);
        let near = rq(2, 1_000_000 + 100, 8);
        // sequential, quick context
        let seq = ctx(Duration(1_200 * US), Duration(200 * US), 0.0);
        // random (positioning as long as any candidate's), quick context
        let random = ctx(Duration(1_200 * US), Duration(8 * MS), 0.0);
        let tau = 1_000;
        // random lp, behind minclock + tau: Share waits (correction 1: ahead of minclock
        // itself, so plain Share would not)
        let e = eval(&dev, &far, &random, Duration::ZERO);
        assert_eq!(share_wait(&e, 500, 0, cutoff), Duration::ZERO);
        assert_eq!(combined_wait(&e, 500, 0, tau, cutoff), ms(1.475));
        // sequential lp far ahead of the others in share, but within tau: Seek waits
        let e = eval(&dev, &far, &seq, Duration::ZERO);
        assert_eq!(combined_wait(&e, 1_000, 0, tau, cutoff), ms(1.475));
        // the same beyond minclock + tau: correction 2, no wait at all
        assert_eq!(seek_wait(e.cand_pos, &seq, Duration::ZERO), ms(1.475));
        assert_eq!(combined_wait(&e, 1_001, 0, tau, cutoff), Duration::ZERO);
        // neither reason: a near candidate and no lag
        let e = eval(&dev, &near, &random, Duration::ZERO);
        assert_eq!(combined_wait(&Eval { lp_pending: true, ..e }, 0, 0, tau, cutoff), Duration::ZERO);
    }
}

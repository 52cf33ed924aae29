//! Anticipatory scheduling (`antic:POLICY`, `antic-combo:stride`): a non-work-conserving
//! framework that keeps the disk idle briefly for the next request of the process that
//! issued the last one. Paper 001 (Anticipatory Scheduling), Section 3.2 (the anticipation
//! core, Figure 3); the heuristics of Sections 3.3-3.5 are in [`heuristic`], the
//! per-process statistics of Section 3.3 in [`stats`].
//!
//! ## The core (Figure 3)
//! Three states: IDLE (nothing pending), BUSY (a request in the device), WAIT (requests
//! pending, the device deliberately idle, a timeout armed).
//! - When the device becomes free (`decide` with nothing in flight), the policy selects a
//!   candidate and the heuristic evaluates it: zero dispatches it (BUSY), a duration `d`
//!   enters WAIT with timeout `now + d` ([`Decision::WaitUntil`]).
//! - In WAIT, each arrival (the driver calls `decide` again) re-runs select and heuristic:
//!   zero dispatches the new candidate; otherwise the **original timeout stays** — a
//!   re-evaluation never moves it, so repeated arrivals cannot keep the disk idle.
//! - At the timeout the current candidate is dispatched without further evaluation.
//! - **Short-circuit**: when the last context has a synchronous request queued (it is
//!   blocked on I/O, 001 assumption #1: no dependent request comes from anyone else), the
//!   candidate is dispatched at once, whatever the heuristic would say.
//!
//! The *last context* is the issuer of the last completed request, when that request was
//! synchronous; an asynchronous completion blocks nobody and anticipates nothing.
//!
//! ## What 001 leaves open, and what headway does
//! - **Contexts.** Requests with `ctx == None` are one anonymous context (process
//!   information hidden): it nearly always has a request queued, so the short-circuit
//!   fires and anticipation degenerates to the wrapped policy — 000's point about
//!   process-aware schedulers.
//! - **Deeper device queues.** 001's prototype feeds the disk one request at a time.
//!   While requests of ours are in the device, `decide` dispatches the candidate at once
//!   (the device is BUSY, not free); anticipation happens when the device drains.
//! - **Urgent policies** (deadline's expired FIFO, aged-sptf's bound): never wait while the
//!   policy is `urgent`, and a wait ends at the policy's `next_urgent_at`.
//! - **Statistics** are kept for every request (reads and writes): thinktime at arrival,
//!   positioning and seek direction at completion (see [`stats`]).
//! - **Merges.** A request merged into another context's queued request is remembered with
//!   it: both contexts count it as pending and both see it complete.
//! - **Misprediction guard** (001 Section 5.2.1, suggestion 2: "keep track of how
//!   frequently timeouts expire for each process; if this exceeds some threshold rate ...
//!   something is wrong"). Every wait a heuristic asks for is a prediction that the last
//!   context's next request arrives before the wait ends; it is judged when that request
//!   arrives. When more than `antic_timeout_guard` (decayed, 0.75) of a context's recent
//!   predictions missed, the core does not wait for it — but keeps judging the
//!   predictions it declined, so the context earns its waits back once they would pay.
//!   Against 001 Figure 7's adversary (one rapid request, then a pause just past the
//!   timeout: every prediction wrong) the guard turns a 36% loss into none;
//!   `--set antic_timeout_guard=1` gives the heuristics exactly as 001 measured them.
//! - `context_exited` forgets the context's statistics and ends a wait for it (the driver
//!   calls `decide` next, as after any event). `set_weight` goes to the policy.
//!
//! ## Heuristic per policy
//! | scheduler | heuristic |
//! |---|---|
//! | `antic:sptf` | [`heuristic::Seek`] |
//! | `antic:aged-sptf` (`antic`) | [`heuristic::AgedSeek`] |
//! | `antic:cscan`, `antic:deadline` | [`heuristic::Directional`] |
//! | `antic:stride` | [`heuristic::Share`] |
//! | `antic-combo:stride` (`antic-combo`) | [`heuristic::Combined`] |
//!
//! `antic:noop` is not offered: FIFO serves the candidate first whatever arrives, so any
//! wait is pure loss.
//!
//! ## Tunables
//! | name | unit | default | trade-off |
//! |---|---|---|---|
//! | `antic_think_cutoff` | time (ms) | 3 ms (001 Section 3.4) | proportional share waits only for contexts thinking less: larger favours shares over throughput |
//! | `antic_backward_threshold` | factor | 0.8 (001 Section 3.3) | CSCAN skips waiting for contexts this likely to seek backward: lower waits less often |
//! | `antic_timeout_guard` | factor | 0.75 (headway; 001 Section 5.2.1 gives no value) | no wait for a context whose recent predicted waits missed more often than this: lower gives up sooner on erratic contexts, 1 never does |
//!
//! Fixed by the paper, not tunable: the thinktime table (30 x 500 us, decay 0.9 per
//! request), the positioning decay (95% forgotten after ten requests), waits at most
//! 15 ms after the last completion (the table's range). `tau` belongs to `stride`.
//!
//! Invariants: every request arriving is queued in the policy or merged into a queued one
//! and then dispatched exactly once; at most one wait, only with nothing of ours in the
//! device; a wait's timeout never moves later.

pub mod heuristic;
pub mod stats;

use std::collections::HashMap;

use crate::device::DeviceView;
use crate::error::BuildError;
use crate::idmap::IdMap;
use crate::params::{ParamError, Settings, TimeUnit, Tunable, Unit};
use crate::policy::{
    AgedSptf, AgedSptfParams, Cscan, Deadline, DeadlineParams, Policy, Sptf, Stride, StrideParams,
};
use crate::request::{ContextId, ReqId, Request, Sector};
use crate::scheduler::{Arrival, Decision, Scheduler};
use crate::time::{Duration, Time};

use heuristic::{AgedSeek, Combined, Directional, Eval, Heuristic, Seek, Share};
use stats::CtxStats;

/// Proportional share waits only for contexts with a median thinktime below this
/// (001 Section 3.4: 3 ms).
pub const THINK_CUTOFF: Duration = Duration::from_millis(3);
/// CSCAN does not wait for a context more likely than this to seek backward
/// (001 Section 3.3: 80%).
pub const BACKWARD_THRESHOLD: f64 = 0.8;

pub const T_THINK_CUTOFF: Tunable = Tunable {
    name: "antic_think_cutoff",
    unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(3) },
    doc: "proportional-share anticipation waits only for contexts whose median thinktime is below this",
};
pub const T_BACKWARD_THRESHOLD: Tunable = Tunable {
    name: "antic_backward_threshold",
    unit: Unit::Factor { min: 0.0, max: 1.0, default: 0.8 },
    doc: "no wait for a forward candidate when the last context seeks backward more likely than this",
};

pub const T_TIMEOUT_GUARD: Tunable = Tunable {
    name: "antic_timeout_guard",
    unit: Unit::Factor { min: 0.0, max: 1.0, default: 0.75 },
    doc: "no wait for a context whose recent predicted waits its next request missed more often than this (1: never give up)",
};

pub const TUNABLES: &[Tunable] = &[T_THINK_CUTOFF, T_BACKWARD_THRESHOLD, T_TIMEOUT_GUARD];

/// The tunables anticipation reads with `policy`'s heuristic, besides the guard every one
/// reads (`antic_timeout_guard`).
pub fn heuristic_tunables(policy: &str) -> &'static [Tunable] {
    match policy {
        "stride" => &[T_THINK_CUTOFF],
        "cscan" | "deadline" => &[T_BACKWARD_THRESHOLD],
        _ => &[],
    }
}

/// Default of `antic_timeout_guard`.
pub const TIMEOUT_GUARD: f64 = 0.75;

fn think_cutoff(s: &mut Settings) -> Result<Duration, ParamError> {
    s.time(&T_THINK_CUTOFF)
}

fn backward_threshold(s: &mut Settings) -> Result<f64, ParamError> {
    s.factor(&T_BACKWARD_THRESHOLD)
}

/// Policies `antic:` wraps, each with its heuristic (see the module doc).
pub const POLICIES: &[&str] = &["sptf", "aged-sptf", "cscan", "deadline", "stride"];
/// Policies `antic-combo:` wraps.
pub const COMBO_POLICIES: &[&str] = &["stride"];
/// What bare `antic` wraps (001 Section 4: Aged-SPTF unless otherwise stated).
pub const DEFAULT_POLICY: &str = "aged-sptf";
/// What bare `antic-combo` wraps.
pub const COMBO_DEFAULT_POLICY: &str = "stride";

/// Build `antic:POLICY` (or `antic-combo:POLICY` when `combo`), reading the policy's and the
/// heuristic's tunables from `settings`. `max_sectors` is the driver merge bound.
pub fn build(
    policy: &str,
    combo: bool,
    max_sectors: u32,
    settings: &mut Settings,
) -> Result<Box<dyn Scheduler>, BuildError> {
    fn boxed<P: Policy + 'static, H: Heuristic<P> + 'static>(
        fw: &'static str,
        p: P,
        h: H,
        max_sectors: u32,
        guard: f64,
    ) -> Box<dyn Scheduler> {
        Box::new(Antic::new(fw, p, h, max_sectors).with_timeout_guard(guard))
    }
    let s = settings;
    let guard = s.factor(&T_TIMEOUT_GUARD)?;
    Ok(match (combo, policy) {
        (false, "sptf") => boxed("antic", Sptf::new(), Seek, max_sectors, guard),
        (false, "aged-sptf") => {
            boxed("antic", AgedSptf::new(AgedSptfParams::from_settings(s)?), AgedSeek, max_sectors, guard)
        }
        (false, "cscan") => {
            let h = Directional { backward_threshold: backward_threshold(s)? };
            boxed("antic", Cscan::new(), h, max_sectors, guard)
        }
        (false, "deadline") => {
            let p = Deadline::new(DeadlineParams::from_settings(s)?);
            boxed("antic", p, Directional { backward_threshold: backward_threshold(s)? }, max_sectors, guard)
        }
        (false, "stride") => {
            let p = Stride::new(StrideParams::from_settings(s)?);
            boxed("antic", p, Share { think_cutoff: think_cutoff(s)? }, max_sectors, guard)
        }
        (true, "stride") => {
            let p = Stride::new(StrideParams::from_settings(s)?);
            boxed("antic-combo", p, Combined { think_cutoff: think_cutoff(s)? }, max_sectors, guard)
        }
        _ => {
            let (fw, known) = if combo { ("antic-combo", COMBO_POLICIES) } else { ("antic", POLICIES) };
            return Err(BuildError::UnknownPolicy {
                name: format!("{fw}:{policy}"),
                policy: policy.to_string(),
                known: known.join(", "),
            });
        }
    })
}

/// Counters for reports and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnticStats {
    /// Times the core entered WAIT.
    pub waits: u64,
    /// Total time spent in WAIT, ns.
    pub wait_ns: u64,
    /// Waits that ended at their timeout.
    pub timeouts: u64,
    /// Waits that ended dispatching a request of the awaited context.
    pub hits: u64,
    /// Decisions taken during a wait before its timeout (arrivals re-running the heuristic).
    pub reevaluations: u64,
    /// Waits a heuristic asked for that the misprediction guard declined.
    pub guarded: u64,
    /// Dispatches decided by the short-circuit (the last context blocked on a request).
    pub short_circuits: u64,
    /// Waits ended because the policy had an urgent request.
    pub urgent_preemptions: u64,
    /// Waits ended because the awaited context exited.
    pub exits: u64,
}

type Key = Option<ContextId>;

/// One context's statistics and request counts.
#[derive(Default)]
struct Context {
    stats: CtxStats,
    /// Requests of this context held by the scheduler.
    queued: u32,
    /// Of which synchronous.
    queued_sync: u32,
    in_flight: u32,
    /// End of its last completed request.
    last_end: Option<Sector>,
    last_completion: Option<Time>,
    /// End of the last wait a heuristic asked for this context, not yet judged.
    predicted: Option<Time>,
}

/// Who a held or dispatched request belongs to: its issuer, plus the issuers of requests
/// merged into it from other contexts (rare; the Vec stays unallocated otherwise).
struct Owner {
    ctx: Key,
    sync: bool,
    others: Vec<(Key, bool)>,
}

impl Owner {
    fn parts(&self) -> impl Iterator<Item = (Key, bool)> + '_ {
        std::iter::once((self.ctx, self.sync)).chain(self.others.iter().copied())
    }
}

#[derive(Copy, Clone, Debug)]
struct Last {
    ctx: Key,
    completed: Time,
}

#[derive(Copy, Clone, Debug)]
struct Wait {
    until: Time,
    since: Time,
    ctx: Key,
}

/// Anticipatory scheduling around policy `P` with heuristic `H`.
pub struct Antic<P: Policy, H: Heuristic<P>> {
    framework: &'static str,
    policy: P,
    heuristic: H,
    max_sectors: u32,
    ctxs: HashMap<Key, Context>,
    owners: IdMap<Owner>,
    last: Option<Last>,
    wait: Option<Wait>,
    /// Requests dispatched and not completed.
    in_flight: u32,
    /// `antic_timeout_guard`.
    timeout_guard: f64,
    stats: AnticStats,
}

impl<P: Policy, H: Heuristic<P>> Antic<P, H> {
    /// `framework` names it (`antic`, `antic-combo`): the scheduler is `framework:policy`.
    pub fn new(framework: &'static str, policy: P, heuristic: H, max_sectors: u32) -> Self {
        Antic {
            framework,
            policy,
            heuristic,
            max_sectors,
            ctxs: HashMap::new(),
            owners: IdMap::default(),
            last: None,
            wait: None,
            in_flight: 0,
            timeout_guard: TIMEOUT_GUARD,
            stats: AnticStats::default(),
        }
    }

    /// Decline waits for contexts whose predictions missed more often than `limit`
    /// (`antic_timeout_guard`; 1 never declines).
    pub fn with_timeout_guard(mut self, limit: f64) -> Self {
        self.timeout_guard = limit;
        self
    }

    pub fn stats(&self) -> &AnticStats {
        &self.stats
    }

    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// Is the core in WAIT?
    pub fn is_waiting(&self) -> bool {
        self.wait.is_some()
    }

    /// What the heuristics know about `ctx` (`None`: the anonymous context).
    pub fn context_stats(&self, ctx: Option<ContextId>) -> Option<&CtxStats> {
        self.ctxs.get(&ctx).map(|c| &c.stats)
    }

    /// Take `id` from the policy and send it: ends any wait, moves the request's contexts
    /// from queued to in flight.
    fn dispatch(&mut self, now: Time, id: ReqId) -> Decision {
        let rq = self.policy.take(now, id);
        let owner = self.owners.get(&rq.id);
        if let Some(w) = self.wait.take() {
            self.stats.wait_ns += (now - w.since).0;
            if owner.is_some_and(|o| o.parts().any(|(k, _)| k == w.ctx)) {
                self.stats.hits += 1;
            }
        }
        for (k, sync) in owner.into_iter().flat_map(Owner::parts) {
            if let Some(c) = self.ctxs.get_mut(&k) {
                c.queued = c.queued.saturating_sub(1);
                c.queued_sync = c.queued_sync.saturating_sub(sync as u32);
                c.in_flight += 1;
            }
        }
        self.in_flight += 1;
        Decision::Dispatch(rq)
    }

    fn end_wait(&mut self, now: Time) -> Option<Wait> {
        let w = self.wait.take()?;
        self.stats.wait_ns += (now - w.since).0;
        Some(w)
    }
}

impl<P: Policy, H: Heuristic<P>> Scheduler for Antic<P, H> {
    fn name(&self) -> String {
        format!("{}:{}", self.framework, self.policy.name())
    }

    fn arrive(&mut self, now: Time, rq: Request, _dev: &dyn DeviceView) -> Arrival {
        let c = self.ctxs.entry(rq.ctx).or_default();
        if let Some(until) = c.predicted.take() {
            c.stats.record_prediction(now <= until);
        }
        // Footnote 3 and 3.3: thinktime since the context's last completion; 0 for an
        // asynchronous request; no sample for a context's first request.
        let think = if !rq.sync || c.queued + c.in_flight > 0 {
            Some(Duration::ZERO)
        } else {
            c.last_completion.map(|t| now - t)
        };
        if let Some(t) = think {
            c.stats.record_think(t);
        }
        c.queued += 1;
        c.queued_sync += rq.sync as u32;
        if let Some(into) = self.policy.merge(now, &rq, self.max_sectors) {
            if let Some(o) = self.owners.get_mut(&into) {
                if o.ctx == rq.ctx {
                    // still one request of this context
                    c.queued -= 1;
                    if rq.sync && o.sync {
                        c.queued_sync -= 1;
                    }
                    o.sync |= rq.sync;
                } else {
                    o.others.push((rq.ctx, rq.sync));
                }
            }
            return Arrival::Merged { into };
        }
        self.owners.insert(rq.id, Owner { ctx: rq.ctx, sync: rq.sync, others: Vec::new() });
        self.policy.add(now, rq);
        Arrival::Queued
    }

    fn decide(&mut self, now: Time, dev: &dyn DeviceView) -> Decision {
        let Some(cand) = self.policy.select(now, dev) else {
            self.end_wait(now);
            return Decision::Idle;
        };
        if self.in_flight > 0 {
            return self.dispatch(now, cand); // BUSY: fill the device queue
        }
        if let Some(w) = self.wait {
            if now >= w.until {
                self.stats.timeouts += 1;
                return self.dispatch(now, cand);
            }
            self.stats.reevaluations += 1;
        }
        if self.policy.urgent(now) {
            if self.wait.is_some() {
                self.stats.urgent_preemptions += 1;
            }
            return self.dispatch(now, cand);
        }
        let Some(last) = self.last else { return self.dispatch(now, cand) };
        let Some(c) = self.ctxs.get(&last.ctx) else { return self.dispatch(now, cand) };
        if c.queued_sync > 0 {
            self.stats.short_circuits += 1;
            return self.dispatch(now, cand);
        }
        let candidate = *self.policy.get(cand).expect("the selected request is queued");
        let e = Eval {
            now,
            dev,
            candidate: &candidate,
            cand_pos: dev.positioning(dev.head(), candidate.sector),
            lp: last.ctx,
            lp_stats: &c.stats,
            lp_pending: c.queued > 0,
            elapsed: now - last.completed,
        };
        let d = self.heuristic.evaluate(&e, &self.policy);
        if d == Duration::ZERO {
            return self.dispatch(now, cand);
        }
        if self.wait.is_none() {
            let c = self.ctxs.get_mut(&last.ctx).expect("looked up above");
            c.predicted.get_or_insert(now + d);
            if c.stats.misses.get().is_some_and(|m| m > self.timeout_guard) {
                self.stats.guarded += 1;
                return self.dispatch(now, cand);
            }
        }
        let until = match self.wait {
            Some(w) => w.until, // never extended
            None => {
                self.stats.waits += 1;
                let w = Wait { until: now + d, since: now, ctx: last.ctx };
                self.wait = Some(w);
                w.until
            }
        };
        let until = match self.policy.next_urgent_at() {
            Some(t) => until.min(t.max(now)),
            None => until,
        };
        Decision::WaitUntil(until)
    }

    fn completed(&mut self, now: Time, rq: &Request, dev: &dyn DeviceView) {
        self.policy.completed(now, rq);
        self.in_flight = self.in_flight.saturating_sub(1);
        self.end_wait(now);
        let Some(o) = self.owners.remove(&rq.id) else { return };
        for (i, (k, _)) in o.parts().enumerate() {
            let Some(c) = self.ctxs.get_mut(&k) else { continue };
            c.in_flight = c.in_flight.saturating_sub(1);
            c.last_completion = Some(now);
            if i == 0 {
                if let Some(prev) = c.last_end {
                    c.stats.record_position(dev.positioning(prev, rq.sector), rq.sector < prev);
                }
                c.last_end = Some(rq.end());
            }
        }
        self.last = o.sync.then_some(Last { ctx: o.ctx, completed: now });
    }

    fn pending(&self) -> usize {
        self.policy.len()
    }

    fn set_weight(&mut self, ctx: ContextId, weight: u32) {
        self.policy.set_weight(ctx, weight)
    }
    fn set_ioprio(&mut self, ctx: ContextId, prio: crate::IoPrio) {
        self.policy.set_ioprio(ctx, prio)
    }

    fn context_exited(&mut self, now: Time, ctx: ContextId) {
        let key = Some(ctx);
        self.ctxs.remove(&key);
        if self.last.is_some_and(|l| l.ctx == key) {
            self.last = None;
        }
        if self.wait.is_some_and(|w| w.ctx == key) {
            self.end_wait(now);
            self.stats.exits += 1;
        }
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        let s = &self.stats;
        vec![
            ("waits", s.waits),
            ("wait_ns", s.wait_ns),
            ("timeouts", s.timeouts),
            ("hits", s.hits),
            ("reevaluations", s.reevaluations),
            ("guarded", s.guarded),
            ("short_circuits", s.short_circuits),
            ("urgent_preemptions", s.urgent_preemptions),
            ("exits", s.exits),
        ]
    }
}

#[cfg(test)]
mod tests;

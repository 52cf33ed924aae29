//! `htbs`: the High-throughput Token Bucket Scheduler, seeds/004 Section III (Figures 1-2).
//! pClock's tags ([`crate::policy::pclock`]) plus an *active application* the disk keeps
//! serving — waiting briefly for its next request — so synchronous applications get
//! consecutive, sequential service (no deceptive idleness) and their guarantees.
//!
//! ## The algorithm (Figure 1)
//! - `add_request(i, r)`: tag `r` from `i`'s token bucket (Figure 2); if the disk is
//!   waiting for `i`, the active application, stop waiting: `r` is dispatched next.
//! - `dispatch_request()`:
//!   - no active application: dispatch the smallest finish tag; its application becomes
//!     the active one;
//!   - the active application has dispatched `htbs_bmax` consecutive requests: change it
//!     (the smallest finish tag among the *other* backlogged applications — "the active
//!     application is changed anyhow"; the same one continues only when no other is
//!     backlogged);
//!   - the active application is backlogged: dispatch its smallest finish tag;
//!   - otherwise keep the disk idle up to `htbs_twait` for its next request
//!     ([`Decision::WaitUntil`]); other applications' arrivals do not end the wait.
//! - `timer_expired()`: no active application; dispatch the smallest finish tag.
//!
//! ## What 004 leaves open, and what headway does
//! - **"Random" access pattern** (004 lists it as the third reason to change the active
//!   application without defining it). 004's HTBS is a Linux 2.6.38 module; headway takes
//!   that kernel's CFQ rule: each application keeps a 32-request *seek history*, one bit
//!   per arrival, set when the request starts more than [`SEEK_THRESHOLD`] sectors (800,
//!   400 KiB: CFQ's `CFQQ_SEEK_THR`) from the end of the application's previous request;
//!   the application is random when more than 32/8 = 4 of those bits are set (CFQ's
//!   `CFQQ_SEEKY`). The first request has no distance and sets no bit. A random active
//!   application gets no batch and no wait: every one of its dispatches is followed by a
//!   fresh smallest-finish-tag choice.
//! - **When Twait starts.** At the completion of the active application's last request
//!   (with one command at a time, the moment the disk becomes free, as in 004). While the
//!   active application still has a request in a queueing drive, the wait lasts until that
//!   request completes and then `htbs_twait` more.
//! - **Bmax counts dispatches** of the active application since it became active.
//! - **An application that exits** (`context_exited`) stops being active; its bucket is
//!   forgotten (its class is kept).
//! - **No merging** (as pClock: tags belong to one application).
//! - **Process information.** HTBS is an application-aware scheduler, like AS and CFQ:
//!   with `--context none` every request belongs to one anonymous application, which is
//!   then always active and served by finish tag (= arrival order), Bmax at a time.
//!
//! ## Bounds
//! - Every period in which the disk is idle while requests are pending lasts at most
//!   `htbs_twait` (one command at a time; property-tested).
//! - A request of an application within its rate has `F = arrival + delta`; it is
//!   dispatched at the latest when the current batch ends and every application holding a
//!   smaller finish tag has had its batch (property-tested under a load well within the
//!   disk's capacity: `F` plus one Bmax window of the active application, `bmax x (s +
//!   twait)`, plus `bmax x s` per other application, for service time `s`).
//!
//! ## Tunables
//! | name | unit | default | trade-off |
//! |---|---|---|---|
//! | `htbs_bmax` | requests | 20 (004 Section IV) | larger = more consecutive sequential service (throughput), longer waits for the others (deadlines) |
//! | `htbs_twait` | time (ms) | 10 ms (004 Section IV: CFQ's `slice_idle`) | must cover an application's time between a completion and its next request; larger = more idle time when the prediction fails |
//!
//! Invariants: every request arriving is queued and dispatched exactly once; at most one
//! wait, only for the active application, only while it has nothing queued; `served <=
//! htbs_bmax`.

use std::collections::BTreeMap;

use crate::device::DeviceView;
use crate::error::BuildError;
use crate::params::{ParamError, Settings, TimeUnit, Tunable, Unit};
use crate::policy::{PClock, Policy};
use crate::qos::Qos;
use crate::request::{ContextId, Request, Sector};
use crate::scheduler::{Arrival, Decision, Scheduler};
use crate::time::{Duration, Time};

/// Consecutive requests of the active application (004 Section IV: 20).
pub const BMAX: u32 = 20;
/// Longest wait for the active application's next request (004 Section IV: 10 ms).
pub const TWAIT: Duration = Duration::from_millis(10);
/// A request starting farther than this from its application's previous one is a seek
/// (Linux 2.6.38 CFQ `CFQQ_SEEK_THR`: 8 * 100 sectors).
pub const SEEK_THRESHOLD: Sector = 800;
/// Seeks among the last 32 requests above which an application is random (CFQ: 32 / 8).
pub const SEEKY_BITS: u32 = 4;

pub const T_BMAX: Tunable = Tunable {
    name: "htbs_bmax",
    unit: Unit::Count { what: "requests", min: 1, max: 1 << 20, default: 20 },
    doc: "consecutive requests the active application may dispatch before another gets the disk",
};
pub const T_TWAIT: Tunable = Tunable {
    name: "htbs_twait",
    unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(10) },
    doc: "longest the disk stays idle waiting for the active application's next request",
};

pub const TUNABLES: &[Tunable] = &[T_BMAX, T_TWAIT];

/// HTBS settings.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct HtbsParams {
    pub bmax: u32,
    pub twait: Duration,
}

impl Default for HtbsParams {
    fn default() -> Self {
        HtbsParams { bmax: BMAX, twait: TWAIT }
    }
}

impl HtbsParams {
    pub fn from_settings(s: &mut Settings) -> Result<Self, ParamError> {
        Ok(HtbsParams { bmax: s.count(&T_BMAX)? as u32, twait: s.time(&T_TWAIT)? })
    }
}

/// Build `htbs` from settings.
pub fn build(settings: &mut Settings) -> Result<Box<dyn Scheduler>, BuildError> {
    Ok(Box::new(Htbs::new(HtbsParams::from_settings(settings)?)))
}

/// Counters for reports and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HtbsStats {
    /// Times the disk was kept idle for the active application.
    pub waits: u64,
    /// Waits ended by the active application's request.
    pub waits_hit: u64,
    /// Waits that ran out (`htbs_twait`).
    pub timeouts: u64,
    /// Active application changed because it reached `htbs_bmax`.
    pub bmax_switches: u64,
    /// Dispatches of an application found random (no batch, no wait).
    pub random_dispatches: u64,
}

/// Per-application state beyond the tags.
#[derive(Clone, Debug, Default)]
struct App {
    inflight: u32,
    last_end: Option<Sector>,
    /// Bit 0: the newest arrival was a seek.
    seek_history: u32,
}

impl App {
    fn random(&self) -> bool {
        self.seek_history.count_ones() > SEEKY_BITS
    }
}

pub struct Htbs {
    pc: PClock,
    params: HtbsParams,
    /// The active application, when set (`Some(None)`: the anonymous one).
    active: Option<Option<ContextId>>,
    /// Consecutive dispatches of the active application.
    served: u32,
    /// The Twait timer, when armed.
    wait_until: Option<Time>,
    apps: BTreeMap<Option<ContextId>, App>,
    stats: HtbsStats,
}

impl Htbs {
    pub fn new(params: HtbsParams) -> Self {
        Htbs {
            pc: PClock::new(),
            params,
            active: None,
            served: 0,
            wait_until: None,
            apps: BTreeMap::new(),
            stats: HtbsStats::default(),
        }
    }

    pub fn params(&self) -> &HtbsParams {
        &self.params
    }

    pub fn htbs_stats(&self) -> &HtbsStats {
        &self.stats
    }

    /// The active application, if any.
    pub fn active(&self) -> Option<Option<ContextId>> {
        self.active
    }

    /// Is the disk being kept idle for the active application?
    pub fn is_waiting(&self) -> bool {
        self.wait_until.is_some()
    }

    /// Is `ctx`'s access pattern random (see the module docs)?
    pub fn is_random(&self, ctx: Option<ContextId>) -> bool {
        self.apps.get(&ctx).is_some_and(App::random)
    }

    /// The tags of a queued request.
    pub fn tags(&self, id: crate::request::ReqId) -> Option<crate::qos::Tags> {
        self.pc.tags(id)
    }

    fn dispatch(&mut self, now: Time, id: crate::request::ReqId) -> Decision {
        let rq = self.pc.take(now, id);
        self.wait_until = None;
        self.served += 1;
        self.apps.entry(rq.ctx).or_default().inflight += 1;
        if self.apps[&rq.ctx].random() {
            // no batch for a random application: choose by finish tag again next time
            self.stats.random_dispatches += 1;
            self.active = None;
        }
        Decision::Dispatch(rq)
    }

    /// Lines 10-11 of Figure 1: the smallest finish tag, preferring applications other
    /// than `except`; its application becomes active.
    fn dispatch_min(&mut self, now: Time, except: Option<Option<ContextId>>) -> Decision {
        let pick = match except {
            Some(a) => self.pc.min_except(a).or_else(|| self.pc.min()),
            None => self.pc.min(),
        };
        let Some((id, ctx)) = pick else {
            self.active = None;
            return Decision::Idle;
        };
        self.active = Some(ctx);
        self.served = 0;
        self.dispatch(now, id)
    }
}

impl Scheduler for Htbs {
    fn name(&self) -> String {
        "htbs".to_string()
    }

    fn arrive(&mut self, now: Time, rq: Request, _dev: &dyn DeviceView) -> Arrival {
        let app = self.apps.entry(rq.ctx).or_default();
        if let Some(end) = app.last_end {
            let seek = rq.sector.abs_diff(end) > SEEK_THRESHOLD;
            app.seek_history = (app.seek_history << 1) | seek as u32;
        }
        app.last_end = Some(rq.end());
        if self.active == Some(rq.ctx) && self.wait_until.take().is_some() {
            // Figure 1 lines 2-4: the awaited request; the driver's next decide takes it
            self.stats.waits_hit += 1;
        }
        self.pc.add(now, rq);
        Arrival::Queued
    }

    fn decide(&mut self, now: Time, _dev: &dyn DeviceView) -> Decision {
        if self.wait_until.is_some_and(|t| now >= t) {
            // timer_expired (Figure 1 lines 19-21)
            self.wait_until = None;
            self.active = None;
            self.stats.timeouts += 1;
        }
        let Some(a) = self.active else {
            return self.dispatch_min(now, None);
        };
        if self.served >= self.params.bmax {
            if self.pc.min_except(a).is_some() {
                self.stats.bmax_switches += 1;
            }
            return self.dispatch_min(now, Some(a));
        }
        if let Some(id) = self.pc.app_min(a) {
            return self.dispatch(now, id);
        }
        if self.apps.get(&a).is_some_and(App::random) {
            return self.dispatch_min(now, None);
        }
        if self.apps.get(&a).is_some_and(|s| s.inflight > 0) {
            // Twait starts when its request completes (the driver asks again then)
            return Decision::WaitUntil(now + self.params.twait);
        }
        let until = match self.wait_until {
            Some(t) => t,
            None => {
                self.stats.waits += 1;
                *self.wait_until.insert(now + self.params.twait)
            }
        };
        Decision::WaitUntil(until)
    }

    fn completed(&mut self, _now: Time, rq: &Request, _dev: &dyn DeviceView) {
        if let Some(app) = self.apps.get_mut(&rq.ctx) {
            app.inflight = app.inflight.saturating_sub(1);
        }
        if self.active == Some(rq.ctx) {
            // a wait armed while its request was in the device starts again from now
            self.wait_until = None;
        }
    }

    fn pending(&self) -> usize {
        self.pc.len()
    }

    fn set_qos(&mut self, ctx: ContextId, qos: Qos) {
        self.pc.set_qos(ctx, qos);
    }

    fn context_exited(&mut self, _now: Time, ctx: ContextId) {
        if self.active == Some(Some(ctx)) {
            self.active = None;
            self.wait_until = None;
        }
        if self.pc.backlog(Some(ctx)) == 0 && self.apps.get(&Some(ctx)).is_none_or(|a| a.inflight == 0) {
            self.apps.remove(&Some(ctx));
            self.pc.forget(ctx);
        }
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        let s = &self.stats;
        vec![
            ("waits", s.waits),
            ("waits_hit", s.waits_hit),
            ("timeouts", s.timeouts),
            ("bmax_switches", s.bmax_switches),
            ("random_dispatches", s.random_dispatches),
        ]
    }
}

#[cfg(test)]
mod tests;

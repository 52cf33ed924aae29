//! `stride`: proportional share by virtual clocks (Stride scheduling / YFQ), relaxed by `tau`
//! for seek reduction.
//!
//! 001 Section 3.4 (Stride \[32\], YFQ \[7\]: "weighted virtual clocks ... a request is chosen
//! from the process with the smallest virtual clock, so as to advance them in tandem") and
//! Section 3.5 (the relaxation of \[29\]: "picks from processes with virtual clocks between
//! minclock and minclock + tau ... Among these, it chooses the request with the smallest
//! positioning time"); Section 4.7 runs it with tau = 1 s and checks shares of disk time.
//!
//! ## The algorithm
//! - Every context (a `ContextId`; requests without one share one anonymous context) is a
//!   *flow* with a weight (`set_weight`, default 1) and a virtual clock, the *pass*: the disk
//!   time it received divided by its weight, in ns. A flow with queued requests is
//!   *backlogged*; `minclock` is the smallest pass among backlogged flows.
//! - `select`: among backlogged flows whose pass is at most `minclock + tau`, the request
//!   with the shortest positioning time `dev.estimate(head, sector)` (the cheaper of each
//!   flow's nearest request ahead of and behind the head, as `sptf` searches); ties go to
//!   the request nearer in sectors (a fitted curve is flat past its last knot, where a
//!   context's own nearby request and another's distant one would otherwise tie), then to
//!   the smaller pass, then the lower id. `tau = 0` is strict stride: only the flows at
//!   `minclock` compete, by positioning time.
//! - **Service is disk time.** `take` charges the flow a provisional amount (a decayed mean
//!   of measured service times, so clocks move at once even when several requests are in
//!   the device); `completed` trues the charge up to the measured time — completion minus
//!   the later of the request's dispatch and the previous completion, which is exact with
//!   one request in the device and never counts the idle time of an anticipation wait. So
//!   a 1:2 weighting gives 1:2 shares of disk time, as 001's Figure 12 measures (equal
//!   service times make it 1:2 in requests too).
//! - **Idleness.** A context's clock only ever moves by its own service: a synchronous
//!   issuer, never backlogged between its requests, keeps its lag (or lead) across its
//!   thinktimes. 001 Section 3.4 relies on this — "deceptive idleness forces these
//!   virtual clocks to go out of sync ... their virtual clock lags behind" — and its
//!   heuristic waits for the lagging context. Without anticipation the lag is what
//!   Figure 1 shows: shares near 1:1 whatever the weights. A context that comes back after
//!   more than [`IDLE_GRACE`] (15 ms, the range of 001's thinktime table: past it a
//!   context is not expected) since its last request completed earns nothing for its
//!   absence: its clock is raised to `minclock` (or, with nothing backlogged, to the
//!   largest clock any served request started at); a new context starts there too. A
//!   context that keeps coming back within the grace but cannot issue fast enough (the
//!   synchronous issuer under work-conserving dispatch) accumulates lag for as long as
//!   that lasts; anticipation then lets it catch up.
//!
//! Merging: back merges into the same context's queued requests only (a merge across
//! contexts would bill one for the other's data). Never urgent, yet starvation-free: the
//! flow at `minclock` is always eligible, and an eligible flow served in its place moves
//! its own clock until it leaves the `tau` window.
//!
//! Invariants: `reqs` maps every queued id to its flow, whose `SortedQueue` holds it;
//! `inflight` holds the provisional charge of every request taken and not yet completed,
//! and each flow's `in_flight` counts its entries there.
//!
//! Costs: `select` is O(k log n) for k backlogged flows (two estimates per eligible flow);
//! `take`, `merge`, `completed` are O(log n + log k); `add` is O(k) when a flow becomes
//! backlogged (it looks up `minclock`), O(log n + log k) otherwise.
//!
//! ## Tunables
//! | name | unit | default | trade-off |
//! |---|---|---|---|
//! | `tau` | time (ms) of virtual clock, i.e. disk time per unit weight | 1000 (001 Section 4.7: 1 s) | larger = more seek reduction, shares hold only over longer timescales; 0 = strict stride |

use std::collections::BTreeMap;

use super::{Policy, SortedQueue};
use crate::device::DeviceView;
use crate::idmap::IdMap;
use crate::params::{ParamError, Settings, TimeUnit, Tunable, Unit};
use crate::request::{ContextId, ReqId, Request};
use crate::time::{Duration, Time};

/// Relaxation threshold (001 Sections 3.5 and 4.7: 1 second).
pub const TAU: Duration = Duration::from_secs(1);
/// A context idle longer than this since its last completion earns no credit for the
/// absence (the range of 001's thinktime table, Section 3.3).
pub const IDLE_GRACE: Duration = Duration::from_millis(15);

/// The tunables, as `headway tunables` lists them.
pub mod knob {
    use super::*;

    pub const TAU: Tunable = Tunable {
        name: "tau",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(1000) },
        doc: "contexts whose virtual clock (disk time / weight) is within tau of the smallest \
              compete by positioning time (0 = strict stride)",
    };
}

/// Every stride tunable.
pub const TUNABLES: &[Tunable] = &[knob::TAU];

/// Stride settings.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StrideParams {
    pub tau: Duration,
}

impl Default for StrideParams {
    fn default() -> Self {
        StrideParams { tau: TAU }
    }
}

impl StrideParams {
    pub fn from_settings(s: &mut Settings) -> Result<Self, ParamError> {
        Ok(StrideParams { tau: s.time(&knob::TAU)? })
    }
}

/// A context's share of the disk.
struct Flow {
    q: SortedQueue,
    /// >= 1.
    weight: u32,
    /// Virtual clock: ns of disk time received per unit weight, plus any raise.
    pass: i64,
    /// Requests taken and not completed.
    in_flight: u32,
    /// When its last request completed.
    idle_since: Time,
}

impl Flow {
    fn new(weight: u32, pass: i64, now: Time) -> Self {
        Flow { q: SortedQueue::default(), weight, pass, in_flight: 0, idle_since: now }
    }
    fn backlogged(&self) -> bool {
        self.q.len() > 0
    }
}

/// A taken request's provisional charge.
struct Charge {
    ctx: Option<ContextId>,
    charged: i64,
    dispatched: Time,
}

pub struct Stride {
    params: StrideParams,
    /// By context: deterministic iteration for `select`.
    flows: BTreeMap<Option<ContextId>, Flow>,
    reqs: IdMap<Option<ContextId>>,
    inflight: IdMap<Charge>,
    /// The largest clock a served request started at: the floor for returning contexts
    /// when nothing is backlogged.
    vtime: i64,
    last_completion: Time,
    /// Decayed mean measured service time, ns: the provisional charge.
    mean_service: i64,
}

fn ns(d: Duration) -> i64 {
    d.0.min(i64::MAX as u64) as i64
}

impl Stride {
    pub fn new(params: StrideParams) -> Self {
        Stride {
            params,
            flows: BTreeMap::new(),
            reqs: IdMap::default(),
            inflight: IdMap::default(),
            vtime: 0,
            last_completion: Time::ZERO,
            mean_service: 0,
        }
    }

    pub fn params(&self) -> &StrideParams {
        &self.params
    }

    /// The relaxation threshold in clock units.
    pub fn tau(&self) -> i64 {
        ns(self.params.tau)
    }

    /// A context's virtual clock (for a context never seen, where it would start).
    pub fn clock(&self, ctx: Option<ContextId>) -> i64 {
        self.flows.get(&ctx).map_or_else(|| self.floor(), |f| f.pass)
    }

    /// `minclock`: the smallest virtual clock among backlogged contexts.
    pub fn min_clock(&self) -> Option<i64> {
        self.flows.values().filter(|f| f.backlogged()).map(|f| f.pass).min()
    }

    /// A context's weight (1 unless set).
    pub fn weight(&self, ctx: Option<ContextId>) -> u32 {
        self.flows.get(&ctx).map_or(1, |f| f.weight)
    }

    /// Where a new or long-idle context starts: `minclock`, or `vtime` when nothing is
    /// backlogged.
    fn floor(&self) -> i64 {
        self.min_clock().unwrap_or(self.vtime)
    }

    fn flow(&mut self, ctx: Option<ContextId>, now: Time) -> &mut Flow {
        if !self.flows.contains_key(&ctx) {
            let floor = self.floor();
            self.flows.insert(ctx, Flow::new(1, floor, now));
        }
        self.flows.get_mut(&ctx).expect("just inserted")
    }

    /// Bill `service` ns (negative: a refund) to `ctx`'s flow.
    fn charge(&mut self, ctx: Option<ContextId>, service: i64) {
        if let Some(f) = self.flows.get_mut(&ctx) {
            f.pass = f.pass.saturating_add(service / f.weight as i64);
        }
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut n = 0;
        for (ctx, f) in &self.flows {
            f.q.check();
            n += f.q.len();
            for rq in f.q.iter() {
                assert_eq!(self.reqs.get(&rq.id), Some(ctx), "{rq:?} indexed under another flow");
            }
            let flying = self.inflight.values().filter(|c| c.ctx == *ctx).count();
            assert_eq!(flying, f.in_flight as usize, "in-flight count of {ctx:?}");
        }
        assert_eq!(n, self.reqs.len());
    }
}

impl Policy for Stride {
    fn name(&self) -> &'static str {
        "stride"
    }

    fn merge(&mut self, _now: Time, rq: &Request, max_sectors: u32) -> Option<ReqId> {
        let f = self.flows.get_mut(&rq.ctx)?;
        f.q.back_merge(rq, max_sectors).map(|(id, _)| id)
    }

    fn add(&mut self, now: Time, rq: Request) {
        let returning = self.flows.get(&rq.ctx).is_some_and(|f| {
            !f.backlogged() && f.in_flight == 0 && now.saturating_since(f.idle_since) > IDLE_GRACE
        });
        if returning {
            let floor = self.floor();
            let f = self.flows.get_mut(&rq.ctx).expect("checked");
            f.pass = f.pass.max(floor);
        }
        self.flow(rq.ctx, now).q.insert(rq);
        self.reqs.insert(rq.id, rq.ctx);
    }

    fn select(&mut self, _now: Time, dev: &dyn DeviceView) -> Option<ReqId> {
        let bound = self.min_clock()?.saturating_add(self.tau());
        let head = dev.head();
        let mut best: Option<(Duration, u64, i64, ReqId)> = None;
        for f in self.flows.values().filter(|f| f.backlogged() && f.pass <= bound) {
            let near = [f.q.first_from(head), f.q.last_before(head)];
            for id in near.into_iter().flatten() {
                let sector = f.q.get(id).expect("indexed").sector;
                let c = (dev.estimate(head, sector), sector.abs_diff(head), f.pass, id);
                if best.is_none_or(|b| c < b) {
                    best = Some(c);
                }
            }
        }
        best.map(|b| b.3)
    }

    fn take(&mut self, now: Time, id: ReqId) -> Request {
        let ctx = self.reqs.remove(&id).unwrap_or_else(|| panic!("stride: {id:?} is not queued"));
        let f = self.flows.get_mut(&ctx).expect("a queued request has a flow");
        let rq = f.q.remove(id).expect("flow and index agree");
        f.in_flight += 1;
        self.vtime = self.vtime.max(f.pass);
        let charged = self.mean_service;
        self.charge(ctx, charged);
        self.inflight.insert(id, Charge { ctx, charged, dispatched: now });
        rq
    }

    fn get(&self, id: ReqId) -> Option<&Request> {
        self.flows.get(self.reqs.get(&id)?)?.q.get(id)
    }

    fn urgent(&self, _now: Time) -> bool {
        false
    }

    fn completed(&mut self, now: Time, rq: &Request) {
        let Some(c) = self.inflight.remove(&rq.id) else { return };
        let measured = ns(now - c.dispatched.max(self.last_completion));
        self.last_completion = self.last_completion.max(now);
        // mean += (x - mean) / 8
        self.mean_service += (measured - self.mean_service) / 8;
        self.charge(c.ctx, measured - c.charged);
        if let Some(f) = self.flows.get_mut(&c.ctx) {
            f.in_flight -= 1;
            if f.in_flight == 0 {
                f.idle_since = now;
            }
        }
    }

    fn set_weight(&mut self, ctx: ContextId, weight: u32) {
        assert!(weight >= 1, "a weight is at least 1 (job files and the server check it where it comes in)");
        // `now` is unknown here; a flow created by its weight counts as idle since 0
        self.flow(Some(ctx), Time::ZERO).weight = weight;
    }

    fn len(&self) -> usize {
        self.reqs.len()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::testutil::{ops, rq, Driver, FixedView};

    const MS: u64 = 1_000_000;

    fn req(id: u64, ctx: u32, sector: u64) -> Request {
        Request { ctx: Some(ContextId(ctx)), ..rq(id, sector, 8) }
    }

    /// Two always-backlogged contexts (each keeps `depth` requests queued, random-ish
    /// positions in its own region) on a device serving one request at a time for
    /// `estimate(head, sector)`. Returns each context's dispatches and disk time.
    fn shares(params: StrideParams, weights: [u32; 2], n: usize) -> [(u64, u64); 2] {
        let mut p = Stride::new(params);
        for (c, &w) in weights.iter().enumerate() {
            p.set_weight(ContextId(c as u32), w);
        }
        let mut dev = FixedView { head: 0, base: 4 * MS, capacity: 1 << 32 };
        let mut next = 1u64;
        let mut arrive = |p: &mut Stride, c: u32| {
            // region c, pseudo-random offsets up to 8M sectors (~8 ms of seek)
            let off = next.wrapping_mul(2_654_435_761) % 8_000_000;
            p.add(Time(0), req(next, c, c as u64 * 20_000_000 + off));
            next += 1;
        };
        for c in 0..2 {
            for _ in 0..4 {
                arrive(&mut p, c);
            }
        }
        let mut now = Time(0);
        let mut got = [(0, 0); 2];
        for _ in 0..n {
            let id = p.select(now, &dev).unwrap();
            let r = p.take(now, id);
            let service = dev.estimate(dev.head, r.sector);
            now += service;
            dev.head = r.end();
            p.completed(now, &r);
            let c = r.ctx.unwrap().0;
            got[c as usize].0 += 1;
            got[c as usize].1 += service.0;
            arrive(&mut p, c);
            p.check();
        }
        got
    }

    #[test]
    fn strict_stride_gives_disk_time_in_proportion_to_weights() {
        let [a, b] = shares(StrideParams { tau: Duration::ZERO }, [1, 2], 3000);
        let ratio = b.1 as f64 / a.1 as f64;
        assert!((ratio - 2.0).abs() < 0.05, "disk time {a:?} vs {b:?}: {ratio}");
        let [a, b] = shares(StrideParams { tau: Duration::ZERO }, [3, 1], 3000);
        let ratio = a.1 as f64 / b.1 as f64;
        assert!((ratio - 3.0).abs() < 0.1, "disk time {a:?} vs {b:?}: {ratio}");
    }

    #[test]
    fn relaxed_stride_keeps_shares_over_many_tau_and_seeks_less() {
        // tau = 200 ms; about 100 s of disk time in all
        let tau = Duration::from_millis(200);
        let [a, b] = shares(StrideParams { tau }, [1, 2], 10_000);
        let ratio = b.1 as f64 / a.1 as f64;
        assert!((ratio - 2.0).abs() < 0.1, "disk time {a:?} vs {b:?}: {ratio}");
        // requests of one region are served in runs: fewer requests per second of disk
        // time go to long seeks, so the same count takes less disk time than strict stride
        let [sa, sb] = shares(StrideParams { tau: Duration::ZERO }, [1, 2], 10_000);
        assert!(a.1 + b.1 < (sa.1 + sb.1) * 9 / 10, "relaxed {} vs strict {}", a.1 + b.1, sa.1 + sb.1);
    }

    #[test]
    fn within_tau_the_nearest_request_wins() {
        let dev = FixedView::linear(1_000);
        let mut p = Stride::new(StrideParams { tau: Duration::from_millis(1) });
        p.add(Time(0), req(1, 0, 900_000));
        p.add(Time(0), req(2, 1, 2_000));
        assert_eq!(p.select(Time(0), &dev), Some(ReqId(2)), "both at G: nearest");
        // context 1 received 5 ms of disk time: beyond tau, only context 0 competes
        let r = p.take(Time(0), ReqId(2));
        p.completed(Time(5 * MS), &r);
        p.add(Time(0), req(3, 1, 2_000));
        assert!(p.clock(Some(ContextId(1))) > p.min_clock().unwrap() + p.tau());
        assert_eq!(p.select(Time(0), &dev), Some(ReqId(1)));
        p.check();
    }

    fn serve(p: &mut Stride, id: u64, from: u64, to: u64) {
        let r = p.take(Time(from), ReqId(id));
        p.completed(Time(to), &r);
    }

    #[test]
    fn a_quick_return_keeps_the_clock_a_long_absence_earns_no_credit() {
        let mut p = Stride::new(StrideParams { tau: Duration::ZERO });
        let (a, b, c) = (Some(ContextId(0)), Some(ContextId(1)), Some(ContextId(2)));
        let us = |x: u64| x * 1_000;
        p.add(Time(0), req(1, 0, 0));
        p.add(Time(0), req(2, 1, 0));
        serve(&mut p, 1, 0, 2 * MS);
        serve(&mut p, 2, 2 * MS, 3 * MS);
        assert_eq!((p.clock(a), p.clock(b)), (2 * MS as i64, MS as i64), "own service only");
        // both come back within the grace, as synchronous issuers do: clocks kept
        p.add(Time(us(3_200)), req(3, 0, 0));
        p.add(Time(us(3_500)), req(4, 1, 0));
        assert_eq!((p.clock(a), p.clock(b)), (2 * MS as i64, MS as i64));
        assert_eq!(p.min_clock(), p.clock(b).into());
        assert_eq!(p.select(Time(us(3_500)), &FixedView::linear(0)), Some(ReqId(4)));
        serve(&mut p, 4, us(3_500), us(13_500));
        serve(&mut p, 3, us(13_500), us(14_500));
        assert_eq!((p.clock(a), p.clock(b)), (3 * MS as i64, 11 * MS as i64));
        // b returns after 100 ms: it keeps its lead (a raise never lowers a clock); a new
        // context starts at minclock; a returning after a long absence is raised to it
        p.add(Time(us(113_500)), req(5, 1, 0));
        p.add(Time(us(115_000)), req(6, 2, 0));
        assert_eq!((p.clock(b), p.clock(c)), (11 * MS as i64, 11 * MS as i64));
        p.add(Time(200 * MS), req(7, 0, 0));
        assert_eq!(p.clock(a), 11 * MS as i64, "no credit for 185 ms away");
        p.check();
    }

    #[test]
    fn requests_without_a_context_share_one_flow_and_merges_stay_in_a_flow() {
        let mut p = Stride::new(StrideParams::default());
        p.add(Time(0), rq(1, 100, 8));
        assert_eq!(p.merge(Time(0), &rq(2, 108, 8), 1024), Some(ReqId(1)));
        assert_eq!(p.merge(Time(0), &req(3, 0, 116), 1024), None, "another context's data");
        p.set_weight(ContextId(0), 3);
        assert_eq!(p.weight(Some(ContextId(0))), 3);
        assert_eq!(p.weight(None), 1);
        p.check();
    }

    #[test]
    #[should_panic(expected = "a weight is at least 1")]
    fn a_weight_of_zero_is_a_broken_contract_not_a_clamp() {
        Stride::new(StrideParams::default()).set_weight(ContextId(0), 0);
    }

    #[test]
    fn defaults_and_settings() {
        assert_eq!(StrideParams::from_settings(&mut Settings::new()).unwrap(), StrideParams::default());
        let mut s = Settings::new();
        s.push_kv("tau=250ms").unwrap();
        assert_eq!(StrideParams::from_settings(&mut s).unwrap().tau, Duration::from_millis(250));
    }

    proptest! {
        #[test]
        fn takes_each_request_once(ops in ops(300, 4096, true, 100, 100), salt in any::<u64>()) {
            let mut d = Driver::new(Stride::new(StrideParams::default()), salt, Stride::check);
            for op in &ops {
                d.step(op);
            }
            d.drain();
        }
    }
}

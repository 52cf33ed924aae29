//! HTBS unit and property tests: synthetic time, a device with a fixed service time.

use proptest::prelude::*;

use super::*;
use crate::qos::Rate;
use crate::request::{Dir, ReqId};
use crate::testutil::FixedView;

const MS: u64 = 1_000_000;

fn req(id: u64, ctx: u32, sector: u64, at: Time) -> Request {
    Request {
        id: ReqId(id),
        sector,
        len: 8,
        dir: Dir::Read,
        sync: true,
        arrival: at,
        ctx: Some(ContextId(ctx)),
    }
}

/// What happened to one request.
#[derive(Clone, Debug)]
struct Served {
    rq: Request,
    dispatched: Time,
}

/// A depth-1 device serving every request in `svc`, driven as the contract says: `decide`
/// after every event (arrival, completion, timer) while the device is free. Arrivals are
/// open loop (`arrivals`, sorted by time) plus, for closed-loop applications, `next`:
/// called at each completion, it may return the issuer's next request (with its think
/// time already in its arrival). Returns what was dispatched, in order, and the longest
/// period the device sat idle while requests were pending.
fn drive(
    s: &mut Htbs,
    mut arrivals: Vec<Request>,
    svc: Duration,
    mut next: impl FnMut(&Request, Time) -> Option<Request>,
) -> (Vec<Served>, Duration) {
    arrivals.sort_by_key(|r| (r.arrival, r.id));
    arrivals.reverse();
    let dev = FixedView::linear(0);
    let mut now = Time(0);
    let mut busy: Option<(Time, Request)> = None;
    let mut timer: Option<Time> = None;
    let mut out = Vec::new();
    let mut idle_from: Option<Time> = None;
    let mut max_idle = Duration::ZERO;
    let mut guard = 0u64;
    loop {
        guard += 1;
        assert!(guard < 10_000_000, "no progress");
        if busy.is_none() {
            match s.decide(now, &dev) {
                Decision::Dispatch(rq) => {
                    if let Some(f) = idle_from.take() {
                        max_idle = max_idle.max(now - f);
                    }
                    out.push(Served { rq, dispatched: now });
                    busy = Some((now + svc, rq));
                    timer = None;
                }
                Decision::WaitUntil(t) => {
                    assert!(t > now, "a wait until {t:?} at {now:?}");
                    timer = Some(t);
                }
                Decision::Idle => {
                    assert_eq!(s.pending(), 0, "Idle with requests pending");
                    timer = None;
                }
            }
        }
        if busy.is_none() && s.pending() > 0 {
            idle_from.get_or_insert(now);
        }
        let t = [busy.map(|b| b.0), arrivals.last().map(|r| r.arrival), timer].into_iter().flatten().min();
        let Some(t) = t else { break };
        now = t;
        if let Some((at, rq)) = busy {
            if at == now {
                busy = None;
                s.completed(now, &rq, &dev);
                if let Some(n) = next(&rq, now) {
                    let pos = arrivals.partition_point(|r| (r.arrival, r.id) > (n.arrival, n.id));
                    arrivals.insert(pos, n);
                }
            }
        }
        while arrivals.last().is_some_and(|r| r.arrival == now) {
            let r = arrivals.pop().unwrap();
            assert_eq!(s.arrive(now, r, &dev), Arrival::Queued);
        }
    }
    assert_eq!(s.pending(), 0);
    (out, max_idle)
}

/// Synchronous sequential readers: each issues its next request `think` after a completion.
fn sync_readers(
    n: u32,
    per: u64,
    think: Duration,
) -> (Vec<Request>, impl FnMut(&Request, Time) -> Option<Request>) {
    let first: Vec<Request> = (0..n).map(|c| req(c as u64 * per, c, c as u64 * (1 << 30), Time(0))).collect();
    let next = move |rq: &Request, now: Time| {
        let c = rq.ctx.unwrap().0 as u64;
        let k = rq.id.0 - c * per + 1;
        (k < per).then(|| req(c * per + k, c as u32, rq.end(), now + think))
    };
    (first, next)
}

fn htbs() -> Htbs {
    Htbs::new(HtbsParams::default())
}

#[test]
fn synchronous_readers_get_bmax_consecutive_requests() {
    let mut s = htbs();
    let (first, next) = sync_readers(3, 100, Duration(20_000));
    let (out, max_idle) = drive(&mut s, first, Duration(MS), next);
    assert_eq!(out.len(), 300);
    // runs of one application's requests are Bmax long (the last ones may be shorter)
    let mut runs = vec![1u32];
    for w in out.windows(2) {
        if w[0].rq.ctx == w[1].rq.ctx {
            *runs.last_mut().unwrap() += 1;
        } else {
            runs.push(1);
        }
    }
    assert!(runs.iter().all(|&r| r <= BMAX), "{runs:?}");
    assert!(runs[..runs.len() - 3].iter().all(|&r| r == BMAX), "{runs:?}");
    assert!(max_idle <= Duration(20_000), "{max_idle:?}");
    assert_eq!(s.htbs_stats().timeouts, 0);
    assert!(s.htbs_stats().waits_hit > 250);
}

#[test]
fn twait_expires_and_another_application_is_served() {
    let mut s = htbs();
    let dev = FixedView::linear(0);
    s.arrive(Time(0), req(1, 0, 0, Time(0)), &dev);
    assert!(matches!(s.decide(Time(0), &dev), Decision::Dispatch(r) if r.id == ReqId(1)));
    s.completed(Time(MS), &req(1, 0, 0, Time(0)), &dev);
    s.arrive(Time(MS), req(2, 1, 1 << 30, Time(MS)), &dev);
    // app 0 is active and thinking: wait up to Twait, though app 1 is pending
    assert_eq!(s.decide(Time(MS), &dev), Decision::WaitUntil(Time(11 * MS)));
    assert_eq!(s.decide(Time(5 * MS), &dev), Decision::WaitUntil(Time(11 * MS)), "arrivals do not extend it");
    assert!(matches!(s.decide(Time(11 * MS), &dev), Decision::Dispatch(r) if r.id == ReqId(2)));
    assert_eq!(s.active(), Some(Some(ContextId(1))));
    assert_eq!(s.htbs_stats().timeouts, 1);
}

#[test]
fn the_awaited_request_ends_the_wait() {
    let mut s = htbs();
    let dev = FixedView::linear(0);
    s.arrive(Time(0), req(1, 0, 0, Time(0)), &dev);
    s.decide(Time(0), &dev);
    s.completed(Time(MS), &req(1, 0, 0, Time(0)), &dev);
    s.arrive(Time(MS), req(2, 1, 1 << 30, Time(MS)), &dev);
    assert!(matches!(s.decide(Time(MS), &dev), Decision::WaitUntil(_)));
    assert!(s.is_waiting());
    s.arrive(Time(2 * MS), req(3, 0, 8, Time(2 * MS)), &dev);
    assert!(!s.is_waiting());
    // app 1's request has the smaller finish tag, yet the active application goes on
    assert!(matches!(s.decide(Time(2 * MS), &dev), Decision::Dispatch(r) if r.id == ReqId(3)));
}

#[test]
fn random_applications_get_no_wait() {
    let mut s = htbs();
    let dev = FixedView::linear(0);
    let mut now = Time(0);
    // app 0 jumps a GiB every request: random after five seeks
    for i in 0..8u64 {
        let r = req(i, 0, (i % 2) << 21 | i << 12, now);
        s.arrive(now, r, &dev);
        assert!(matches!(s.decide(now, &dev), Decision::Dispatch(_)));
        now += Duration(MS);
        s.completed(now, &r, &dev);
    }
    assert!(s.is_random(Some(ContextId(0))));
    s.arrive(now, req(100, 1, 1 << 30, now), &dev);
    assert!(matches!(s.decide(now, &dev), Decision::Dispatch(r) if r.id == ReqId(100)));
    assert!(s.htbs_stats().random_dispatches > 0);
}

#[test]
fn bmax_changes_the_application_even_when_its_tags_are_smaller() {
    let mut s = Htbs::new(HtbsParams { bmax: 2, twait: TWAIT });
    let dev = FixedView::linear(0);
    for c in 0..2 {
        s.set_qos(
            ContextId(c),
            Qos { rate: Rate::Iops(1_000_000), delay: Duration(c as u64 * 50 * MS), burst: 100 },
        );
    }
    for i in 0..4 {
        s.arrive(Time(0), req(i, 0, i * 8, Time(0)), &dev);
    }
    s.arrive(Time(0), req(10, 1, 1 << 30, Time(0)), &dev);
    s.arrive(Time(0), req(11, 1, (1 << 30) + 8, Time(0)), &dev);
    let order: Vec<u64> = (0..6)
        .map(|_| match s.decide(Time(0), &dev) {
            Decision::Dispatch(r) => r.id.0,
            d => panic!("{d:?}"),
        })
        .collect();
    assert_eq!(order, vec![0, 1, 10, 11, 2, 3]);
    assert_eq!(s.htbs_stats().bmax_switches, 2);
}

/// One application of a property-test workload: open-loop arrivals within its rate.
#[derive(Clone, Debug)]
struct AppLoad {
    iops: u64,
    delay_ms: u64,
    /// Extra gap beyond 1/rate before each request, ns.
    extra: Vec<u64>,
    sequential: bool,
}

fn app_load() -> impl Strategy<Value = AppLoad> {
    (
        20u64..120,
        20u64..200,
        prop::collection::vec(prop_oneof![3 => Just(0u64), 2 => 0..30 * MS], 1..60),
        any::<bool>(),
    )
        .prop_map(|(iops, delay_ms, extra, sequential)| AppLoad { iops, delay_ms, extra, sequential })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, max_global_rejects: 100_000, ..ProptestConfig::default() })]

    /// Applications within their rates, together using at most half the disk: every
    /// request is dispatched exactly once; the disk is never idle with requests pending for
    /// longer than Twait; and a request is dispatched by its deadline (arrival + delta)
    /// plus one Bmax window: `bmax` requests of the active application, each after at most
    /// one Twait.
    #[test]
    fn waits_and_deadlines_are_bounded(
        loads in prop::collection::vec(app_load(), 1..5),
        svc_us in 200u64..4_000,
        bmax in 1u32..30,
        twait_ms in 1u64..15,
    ) {
        let svc = Duration(svc_us * 1_000);
        let util: f64 = loads.iter().map(|l| l.iops as f64 * svc.as_secs_f64()).sum();
        prop_assume!(util <= 0.5);
        let params = HtbsParams { bmax, twait: Duration(twait_ms * MS) };
        let mut s = Htbs::new(params);
        let mut arrivals = Vec::new();
        let mut id = 0;
        for (c, l) in loads.iter().enumerate() {
            s.set_qos(ContextId(c as u32), Qos { rate: Rate::Iops(l.iops), delay: Duration(l.delay_ms * MS), burst: 1 });
            let gap = 1_000_000_000u64.div_ceil(l.iops);
            let mut t = 0u64;
            for (k, &x) in l.extra.iter().enumerate() {
                t += x + if k == 0 { 0 } else { gap };
                let sector = if l.sequential { (c as u64) << 30 | (k as u64 * 8) } else { (k as u64 * 7919 % 1000) << 20 };
                arrivals.push(req(id, c as u32, sector, Time(t)));
                id += 1;
            }
        }
        let n = arrivals.len();
        let (out, max_idle) = drive(&mut s, arrivals, svc, |_, _| None);
        prop_assert_eq!(out.len(), n);
        let mut ids: Vec<u64> = out.iter().map(|x| x.rq.id.0).collect();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), n, "a request dispatched twice");
        prop_assert!(max_idle <= params.twait, "idle {:?} > twait", max_idle);
        let window = Duration(bmax as u64 * (svc.0 + params.twait.0));
        for x in &out {
            let l = &loads[x.rq.ctx.unwrap().0 as usize];
            let bound = x.rq.arrival + Duration(l.delay_ms * MS) + window;
            prop_assert!(x.dispatched <= bound, "{:?} dispatched {:?} > bound {:?}", x.rq, x.dispatched, bound);
        }
    }

    /// Synchronous readers with thinktimes: Twait bounds every idle period, and a thinktime
    /// above Twait makes every wait time out (prediction fails, the disk moves on).
    #[test]
    fn twait_bounds_idle_periods_of_synchronous_readers(
        n in 1u32..5,
        think_us in 0u64..25_000,
        twait_ms in 1u64..15,
        svc_us in 100u64..5_000,
    ) {
        let params = HtbsParams { bmax: BMAX, twait: Duration(twait_ms * MS) };
        let mut s = Htbs::new(params);
        let (first, next) = sync_readers(n, 60, Duration(think_us * 1_000));
        let (out, max_idle) = drive(&mut s, first, Duration(svc_us * 1_000), next);
        prop_assert_eq!(out.len(), n as usize * 60);
        prop_assert!(max_idle <= params.twait, "idle {:?}", max_idle);
        if think_us * 1_000 > params.twait.0 && n > 1 {
            prop_assert_eq!(s.htbs_stats().waits_hit, 0);
        }
    }
}

//! Stream scheduling tests: the Figure 2 procedures step by step with synthetic time, and a
//! property test driving random synchronous chains through a tiny device loop.

use super::*;
use crate::policy::Noop;
use crate::request::{ContextId, Dir};
use crate::testutil::FixedView;
use proptest::prelude::*;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn req(id: u64, sector: u64, at: u64) -> Request {
    Request { id: ReqId(id), sector, len: 8, dir: Dir::Read, sync: true, arrival: Time(at), ctx: None }
}

fn ss() -> Stream<Noop> {
    Stream::new(Noop::new(), StreamParams::default(), 1024)
}

fn expect_dispatch(d: Decision) -> Request {
    match d {
        Decision::Dispatch(r) => r,
        other => panic!("expected a dispatch, got {other:?}"),
    }
}

/// Run a chain of `n` sequential requests A1..An (1 ms service each, 10 us think time),
/// then have far request F (id 999) arrive while An is in service. Returns time An completes.
fn build_stream(s: &mut Stream<Noop>, dev: &FixedView, n: u64) -> u64 {
    let mut t = 0;
    for k in 1..=n {
        let a = req(k, k * 8, t);
        s.arrive(Time(t), a, dev);
        if k == n {
            s.arrive(Time(t + 500 * US), req(999, 1_000_000_000, t + 500 * US), dev);
        }
        let d = expect_dispatch(s.decide(Time(t), dev));
        assert_eq!(d.id, ReqId(k), "A{k} goes first");
        t += MS;
        s.completed(Time(t), &d, dev);
        if k < n {
            // not established yet (or established with nothing pending: harmless wait)
            t += 10 * US;
        }
    }
    t
}

#[test]
fn established_stream_waits_and_dispatches_its_child_first() {
    let dev = FixedView::linear(0);
    let mut s = ss();
    let t = build_stream(&mut s, &dev, 4);
    // A4 completed with F pending: stream of 4 is established, so SS waits.
    match s.decide(Time(t), &dev) {
        Decision::WaitUntil(u) => assert!(u.0 > t && u.0 <= t + 1_100 * MS, "wait bound {u:?}"),
        d => panic!("expected a wait, got {d:?}"),
    }
    // A5 arrives 10us later, right behind A4: it is the child and goes before F.
    s.arrive(Time(t + 10 * US), req(5, 40, t + 10 * US), &dev);
    assert_eq!(expect_dispatch(s.decide(Time(t + 10 * US), &dev)).id, ReqId(5));
    assert_eq!(s.stats().children_dispatched, 1);
}

#[test]
fn short_stream_does_not_wait() {
    let dev = FixedView::linear(0);
    let mut s = ss();
    let t = build_stream(&mut s, &dev, 3);
    assert_eq!(expect_dispatch(s.decide(Time(t), &dev)).id, ReqId(999));
    assert_eq!(s.stats().waits, 0);
}

#[test]
fn wait_ends_at_the_deadline_and_dispatches_the_pending_request() {
    let dev = FixedView { head: 0, base: 100 * US, capacity: 1 << 32 };
    let mut s = ss();
    // F 2_000_000 sectors away: est = 100us + 2ms
    let mut t = 0;
    for k in 1..=4u64 {
        s.arrive(Time(t), req(k, k * 8, t), &dev);
        if k == 4 {
            s.arrive(Time(t), req(999, 2_000_000, t), &dev);
        }
        let d = expect_dispatch(s.decide(Time(t), &dev));
        t += MS;
        s.completed(Time(t), &d, &dev);
        t += 10 * US;
    }
    t -= 10 * US;
    let until = match s.decide(Time(t), &dev) {
        Decision::WaitUntil(u) => u,
        d => panic!("expected a wait, got {d:?}"),
    };
    let est = dev.estimate(4 * 8 + 8, 2_000_000);
    assert_eq!(until, Time(t) + est, "waits exactly service_time(selected pending)");
    // No child: at the deadline the pending request goes.
    assert_eq!(expect_dispatch(s.decide(until, &dev)).id, ReqId(999));
    assert_eq!(s.stats().timeouts, 1);
}

#[test]
fn long_stream_gets_a_second_chance() {
    let dev = FixedView { head: 0, base: 100 * US, capacity: 1 << 32 };
    let mut s = ss();
    let n = 6; // >= (1 + 0.5) * 4
    let mut t = 0;
    for k in 1..=n {
        s.arrive(Time(t), req(k, k * 8, t), &dev);
        if k == n {
            s.arrive(Time(t), req(999, 2_000_000, t), &dev);
        }
        let d = expect_dispatch(s.decide(Time(t), &dev));
        assert_eq!(d.id, ReqId(k));
        t += MS;
        s.completed(Time(t), &d, &dev);
        if k < n {
            t += 10 * US;
        }
    }
    let Decision::WaitUntil(first) = s.decide(Time(t), &dev) else { panic!("should wait") };
    let service = first - Time(t);
    let Decision::WaitUntil(second) = s.decide(first, &dev) else { panic!("second chance expected") };
    assert_eq!(second, first + service.mul_ratio(1, 2), "extended by tolerance_factor * service_time");
    assert_eq!(s.stats().second_chances, 1);
    // Stream size is reset to the threshold: no third chance.
    assert_eq!(expect_dispatch(s.decide(second, &dev)).id, ReqId(999));
}

/// Issue 40 (found by the kernel harness): a tolerance factor of 0 gives no second chance.
/// Before, the timer procedure gave one forever: each extended the wait by nothing, and a
/// driver asking again at the wait's end got the same instant back.
#[test]
fn a_tolerance_of_zero_gives_no_second_chance() {
    let dev = FixedView { head: 0, base: 100 * US, capacity: 1 << 32 };
    let params = StreamParams { tolerance_factor: 0.0, ..StreamParams::default() };
    let mut s = Stream::new(Noop::new(), params, 1024);
    let n = 6;
    let mut t = 0;
    for k in 1..=n {
        s.arrive(Time(t), req(k, k * 8, t), &dev);
        if k == n {
            s.arrive(Time(t), req(999, 2_000_000, t), &dev);
        }
        let d = expect_dispatch(s.decide(Time(t), &dev));
        t += MS;
        s.completed(Time(t), &d, &dev);
        if k < n {
            t += 10 * US;
        }
    }
    let Decision::WaitUntil(end) = s.decide(Time(t), &dev) else { panic!("should wait") };
    assert_eq!(expect_dispatch(s.decide(end, &dev)).id, ReqId(999), "the wait ends at its deadline");
    assert_eq!((s.stats().second_chances, s.stats().timeouts), (0, 1));
}

/// The tolerance is used in thousandths, as the kernel elevator stores it: 0.3 and 0.3004
/// extend a wait alike, by `service * 300 / 1000`.
#[test]
fn the_tolerance_is_used_in_thousandths() {
    let p = |tf| StreamParams { tolerance_factor: tf, ..StreamParams::default() };
    let st = Duration(1_234_567);
    assert_eq!(p(0.3).second_chance(st), p(0.3004).second_chance(st));
    assert_eq!(p(0.3).second_chance(st), (Duration(370_370), Duration(1_604_937)));
    assert_eq!(p(0.5).second_chance_size(), 6);
    assert_eq!(p(0.3).second_chance_size(), 6, "ceil(1.3 * 4)");
}

#[test]
fn time_slice_bounds_service_of_one_stream() {
    // Each request of the chain takes 10 ms; F waits. After 124 ms of the stream, F goes.
    let dev = FixedView { head: 0, base: 100 * US, capacity: 1 << 32 };
    let mut s = ss();
    let mut t = 0;
    s.arrive(Time(0), req(1, 8, 0), &dev);
    let mut cur = expect_dispatch(s.decide(Time(0), &dev));
    let mut f_at = None;
    for k in 2..=40u64 {
        t += 10 * MS;
        if k == 6 {
            s.arrive(Time(t - 5 * MS), req(999, 2_000_000, t - 5 * MS), &dev);
        }
        s.completed(Time(t), &cur, &dev);
        s.arrive(Time(t + 10 * US), req(k, k * 8, t + 10 * US), &dev);
        let d = match s.decide(Time(t), &dev) {
            Decision::WaitUntil(_) => s.decide(Time(t + 10 * US), &dev),
            d => d,
        };
        cur = expect_dispatch(d);
        if cur.id == ReqId(999) {
            f_at = Some(t);
            break;
        }
    }
    let f_at = f_at.expect("F was starved");
    // established at the 4th completion (t = 40 ms), slice 124 ms: F at the first
    // completion after 164 ms
    assert!((164 * MS..=175 * MS).contains(&f_at), "F dispatched at {} ms", f_at / MS);
    assert!(s.stats().slice_expiries >= 1);
}

#[test]
fn with_nothing_pending_the_bound_is_an_arbitrary_requests_cost() {
    let dev = FixedView { head: 0, base: 100 * US, capacity: 30_000_000 };
    let mut s = ss();
    let mut t = 0;
    for k in 1..=4u64 {
        s.arrive(Time(t), req(k, k * 8, t), &dev);
        let d = expect_dispatch(s.decide(Time(t), &dev));
        t += MS;
        s.completed(Time(t), &d, &dev);
        t += 10 * US;
    }
    t -= 10 * US;
    let Decision::WaitUntil(u0) = s.decide(Time(t), &dev) else { panic!("should wait") };
    assert_eq!(u0, Time(t) + dev.estimate(0, 10_000_000), "est over a third of the disk");
    // A far request arriving 1 ms later is no child, and the wait holds to its bound.
    s.arrive(Time(t + MS), req(999, 9_500_040, t + MS), &dev);
    assert_eq!(s.decide(Time(t + MS), &dev), Decision::WaitUntil(u0));
    // A near one is the child and goes first.
    s.arrive(Time(t + 2 * MS), req(5, 40, t + 2 * MS), &dev);
    assert_eq!(expect_dispatch(s.decide(Time(t + 2 * MS), &dev)).id, ReqId(5));
}

/// A noop that declares itself urgent from a given time on.
struct UrgentFrom(Noop, Time);
impl Policy for UrgentFrom {
    fn name(&self) -> &'static str {
        "urgent-test"
    }
    fn add(&mut self, now: Time, rq: Request) {
        self.0.add(now, rq)
    }
    fn select(&mut self, now: Time, dev: &dyn DeviceView) -> Option<ReqId> {
        self.0.select(now, dev)
    }
    fn take(&mut self, now: Time, id: ReqId) -> Request {
        self.0.take(now, id)
    }
    fn get(&self, id: ReqId) -> Option<&Request> {
        self.0.get(id)
    }
    fn urgent(&self, now: Time) -> bool {
        now >= self.1 && !self.0.is_empty()
    }
    fn next_urgent_at(&self) -> Option<Time> {
        Some(self.1)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

#[test]
fn urgent_policy_requests_end_a_wait() {
    let dev = FixedView { head: 0, base: 100 * US, capacity: 1 << 32 };
    let urgent_at = Time(4 * MS + 300 * US);
    let mut s = Stream::new(UrgentFrom(Noop::new(), urgent_at), StreamParams::default(), 1024);
    let mut t = 0;
    for k in 1..=4u64 {
        s.arrive(Time(t), req(k, k * 8, t), &dev);
        if k == 4 {
            s.arrive(Time(t), req(999, 100_000_000, t), &dev);
        }
        let d = expect_dispatch(s.decide(Time(t), &dev));
        t += MS;
        s.completed(Time(t), &d, &dev);
        t += 10 * US;
    }
    t -= 10 * US;
    let Decision::WaitUntil(u) = s.decide(Time(t), &dev) else { panic!("should wait") };
    assert_eq!(u, urgent_at, "the wait is cut at the policy's urgency time");
    assert_eq!(expect_dispatch(s.decide(u, &dev)).id, ReqId(999));
    assert_eq!(s.stats().urgent_preemptions, 1);
}

// ---- property test: random synchronous chains through a tiny device loop ----

#[derive(Clone, Debug)]
struct Chain {
    start: u64,
    thinks: Vec<u64>,
    jumps: Vec<bool>,
}

fn chains() -> impl Strategy<Value = Vec<Chain>> {
    proptest::collection::vec(
        (0u64..1 << 30, proptest::collection::vec((0u64..3 * MS, any::<bool>()), 1..25)).prop_map(
            |(start, v)| Chain {
                start,
                thinks: v.iter().map(|x| x.0 / 7).collect(),
                jumps: v.iter().map(|x| x.1 && x.0 % 5 == 0).collect(),
            },
        ),
        1..6,
    )
}

/// Drive `sched` with the chains on a device whose service time is `est(head, sector)`.
/// Returns dispatch order (request ids with their contexts stripped) and checks invariants.
fn run(chains: &[Chain], with_ctx: bool, params: StreamParams) -> Vec<u64> {
    run_tail(chains, with_ctx, params, false)
}

/// `tail`: the scheduler is told the device queues commands (tail mode) though this
/// driver serves one at a time: the bookkeeping must stay sound.
fn run_tail(chains: &[Chain], with_ctx: bool, params: StreamParams, tail: bool) -> Vec<u64> {
    let dev0 = FixedView { head: 0, base: 200 * US, capacity: 1 << 31 };
    let mut s = Stream::new(Noop::new(), params.clone(), 1024);
    if tail {
        s.set_device_queue_depth(32);
    }
    let mut next_idx = vec![0usize; chains.len()];
    let mut pos: Vec<u64> = chains.iter().map(|c| c.start).collect();
    // pending arrivals: (time, chain)
    let mut arrivals: Vec<(u64, usize)> = (0..chains.len()).map(|c| (c as u64 * 37 * US, c)).collect();
    let mut busy: Option<(u64, Request)> = None;
    let mut timer: Option<u64> = None;
    let mut head = 0u64;
    let mut now = 0u64;
    let mut order = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut last_completion = 0u64;
    let total: usize = chains.iter().map(|c| c.thinks.len()).sum();
    let mut id_chain: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    let mut next_id = 1u64;
    let max_wait =
        Duration((dev0.estimate(1 << 31, 0).0 as f64 * (1.0 + params.tolerance_factor)) as u64 + 1);
    for _step in 0..100_000 {
        if order.len() == total && busy.is_none() {
            break;
        }
        // next event
        let ta = arrivals.iter().map(|a| a.0).min();
        let tc = busy.as_ref().map(|b| b.0);
        let tt = timer;
        let t = [ta, tc, tt].into_iter().flatten().min().expect("stuck: nothing pending and no event");
        now = now.max(t);
        let dev = FixedView { head, ..dev0 };
        if tc == Some(t) {
            let (_, r) = busy.take().unwrap();
            head = r.end();
            last_completion = now;
            let dev = FixedView { head, ..dev0 };
            s.completed(Time(now), &r, &dev);
            let c = id_chain[&r.id.0];
            if next_idx[c] < chains[c].thinks.len() {
                arrivals.push((now + chains[c].thinks[next_idx[c]], c));
            }
        } else if ta == Some(t) {
            let i = arrivals.iter().position(|a| a.0 == t).unwrap();
            let (_, c) = arrivals.remove(i);
            let k = next_idx[c];
            next_idx[c] += 1;
            pos[c] = if chains[c].jumps[k] { (pos[c] * 7919 + 104_729) % (1 << 31) } else { pos[c] + 8 };
            let r = Request {
                id: ReqId(next_id),
                sector: pos[c],
                len: 8,
                dir: Dir::Read,
                sync: true,
                arrival: Time(now),
                ctx: with_ctx.then_some(ContextId(c as u32)),
            };
            id_chain.insert(next_id, c);
            next_id += 1;
            assert_eq!(s.arrive(Time(now), r, &dev), Arrival::Queued, "sync chains never merge");
        } else {
            timer = None;
        }
        if busy.is_none() {
            let dev = FixedView { head, ..dev0 };
            match s.decide(Time(now), &dev) {
                Decision::Dispatch(r) => {
                    assert!(seen.insert(r.id), "{:?} dispatched twice", r.id);
                    order.push(r.id.0);
                    busy = Some((now + dev.estimate(head, r.sector).0, r));
                    timer = None;
                }
                Decision::WaitUntil(u) => {
                    assert!(u.0 >= now, "a wait in the past");
                    if s.pending() > 0 {
                        assert!(
                            u.0 - last_completion <= max_wait.0,
                            "waits {} ns past the last completion with requests pending",
                            u.0 - last_completion
                        );
                    }
                    timer = Some(u.0.max(now + 1));
                }
                Decision::Idle => assert_eq!(s.pending(), 0, "idle with requests pending"),
            }
        }
    }
    assert_eq!(order.len(), total, "every request dispatched exactly once");
    order
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn every_request_dispatched_once_and_waits_bounded(c in chains(), thr in 1u32..8) {
        let params = StreamParams { stream_threshold: thr, ..StreamParams::default() };
        run(&c, false, params);
    }

    #[test]
    fn tail_mode_dispatches_every_request_once(c in chains(), thr in 1u32..8) {
        let params = StreamParams { stream_threshold: thr, ..StreamParams::default() };
        run_tail(&c, false, params, true);
    }

    #[test]
    fn process_identity_is_never_used(c in chains()) {
        prop_assert_eq!(run(&c, false, StreamParams::default()), run(&c, true, StreamParams::default()));
    }
}

/// 000 Section 3.2: with a queueing drive the request put last into the device queue
/// decides. Once a stream is established, its request at the tail of the device queue
/// keeps every other pending request out; after it completes SS waits for its child as
/// with one command at a time.
#[test]
fn queueing_drive_holds_the_queue_behind_an_established_stream() {
    let dev = FixedView { head: 0, base: 100 * US, capacity: 1 << 32 };
    let mut s = ss();
    s.set_device_queue_depth(32);
    let t = build_stream(&mut s, &dev, 4); // A1..A4 served, F (999) pending
                                           // A4 completed: the stream is established; A5 arrives and goes first
    assert!(matches!(s.decide(Time(t), &dev), Decision::WaitUntil(_)));
    s.arrive(Time(t + 10 * US), req(5, 40, t + 10 * US), &dev);
    let a5 = expect_dispatch(s.decide(Time(t + 10 * US), &dev));
    assert_eq!(a5.id, ReqId(5));
    // the device could take more, but A5 (an established stream's) is the tail: F waits
    assert!(matches!(s.decide(Time(t + 20 * US), &dev), Decision::WaitUntil(_)), "F must not join the queue");
    s.arrive(Time(t + 30 * US), req(998, 3_000_000, t + 30 * US), &dev);
    assert!(matches!(s.decide(Time(t + 30 * US), &dev), Decision::WaitUntil(_)));
    // A5 completes; A6 arrives and is dispatched before F and 998
    s.completed(Time(t + MS), &a5, &dev);
    assert!(matches!(s.decide(Time(t + MS), &dev), Decision::WaitUntil(_)));
    s.arrive(Time(t + MS + 10 * US), req(6, 48, t + MS + 10 * US), &dev);
    assert_eq!(expect_dispatch(s.decide(Time(t + MS + 10 * US), &dev)).id, ReqId(6));
}

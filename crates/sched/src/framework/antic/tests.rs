//! Anticipation core tests (001 Section 3.2, Figure 3) with synthetic time; shape tests of
//! 001's deceptive-idleness and proportional-share examples (Section 2, 4.7); and a property
//! test driving random synchronous chains through a tiny device loop for every `antic`
//! scheduler.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;

use super::stats::THINK_RANGE;
use super::*;
use crate::policy::{AgedSptfParams, Sptf};
use crate::request::Dir;
use crate::scheduler::WorkConserving;
use crate::testutil::FixedView;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn req(id: u64, ctx: u32, sector: u64, at: u64) -> Request {
    Request {
        id: ReqId(id),
        sector,
        len: 8,
        dir: Dir::Read,
        sync: true,
        arrival: Time(at),
        ctx: Some(ContextId(ctx)),
    }
}

/// 100 us + 1 ns per sector (backward 1.5x): 10M sectors away is ~10 ms.
fn view(head: u64) -> FixedView {
    FixedView { head, base: 100 * US, capacity: 1 << 32 }
}

fn expect_dispatch(d: Decision) -> Request {
    match d {
        Decision::Dispatch(r) => r,
        other => panic!("expected a dispatch, got {other:?}"),
    }
}

/// A heuristic answering from a function of the evaluation.
struct Script(fn(&Eval<'_>) -> Duration);

impl<P> Heuristic<P> for Script {
    fn evaluate(&self, e: &Eval<'_>, _policy: &P) -> Duration {
        (self.0)(e)
    }
}

/// Context 0 runs `n` sequential synchronous requests from sector 0, 1 ms each, thinking
/// 200 us in between (so its median thinktime is 250 us and its 95th percentile 475 us,
/// its expected positioning 100 us). When `far`, request 999 of context 1, 10M sectors away,
/// arrives while the last one is in service. Returns when the last completed and the head.
fn setup<P: Policy, H: Heuristic<P>>(s: &mut Antic<P, H>, n: u64, far: bool) -> (u64, u64) {
    let (mut t, mut head) = (0, 0);
    for k in 0..n {
        let r = req(k + 1, 0, k * 8, t);
        s.arrive(Time(t), r, &view(head));
        let d = expect_dispatch(s.decide(Time(t), &view(head)));
        assert_eq!(d.id, r.id);
        if far && k == n - 1 {
            s.arrive(Time(t + 100 * US), req(999, 1, 10_000_000, t + 100 * US), &view(head));
        }
        t += MS;
        head = d.end();
        s.completed(Time(t), &d, &view(head));
        if k < n - 1 {
            t += 200 * US;
        }
    }
    (t, head)
}

fn sptf<H: Heuristic<Sptf>>(h: H) -> Antic<Sptf, H> {
    Antic::new("antic", Sptf::new(), h, 1024)
}

#[test]
fn statistics_follow_the_context() {
    let mut s = sptf(Seek);
    setup(&mut s, 6, false);
    let st = s.context_stats(Some(ContextId(0))).unwrap();
    assert_eq!(st.think.median(), Some(Duration(250 * US)));
    assert_eq!(st.think.p95(), Some(Duration(475 * US)));
    assert_eq!(st.expected_positioning(), Some(Duration(100 * US)));
    assert_eq!(st.backward.get(), Some(0.0));
    assert_eq!(s.context_stats(Some(ContextId(1))), None);
}

#[test]
fn idle_wait_busy() {
    let mut s = sptf(Seek);
    assert_eq!(s.decide(Time(0), &view(0)), Decision::Idle, "IDLE: nothing pending");
    let (t, head) = setup(&mut s, 5, false);
    assert_eq!(s.decide(Time(t), &view(head)), Decision::Idle, "nothing pending: no wait");
    let mut s = sptf(Seek);
    let (t, head) = setup(&mut s, 5, true);
    let dev = view(head);
    // WAIT: the far candidate costs ~10 ms, context 0 is expected within its p95
    assert_eq!(s.decide(Time(t), &dev), Decision::WaitUntil(Time(t + 475 * US)));
    assert!(s.is_waiting());
    // its next request comes 200 us later and goes first (BUSY)
    s.arrive(Time(t + 200 * US), req(6, 0, head, t + 200 * US), &dev);
    assert_eq!(expect_dispatch(s.decide(Time(t + 200 * US), &dev)).id, ReqId(6));
    assert!(!s.is_waiting());
    let st = s.stats();
    assert_eq!((st.waits, st.hits, st.timeouts, st.reevaluations), (1, 1, 0, 1));
    assert_eq!(st.wait_ns, 200 * US);
    // BUSY: with a request of ours in the device the candidate goes at once
    assert_eq!(expect_dispatch(s.decide(Time(t + 200 * US), &dev)).id, ReqId(999));
}

#[test]
fn the_timeout_dispatches_the_candidate() {
    let mut s = sptf(Seek);
    let (t, head) = setup(&mut s, 5, true);
    let dev = view(head);
    assert_eq!(s.decide(Time(t), &dev), Decision::WaitUntil(Time(t + 475 * US)));
    // another context's far request does not change the wait
    s.arrive(Time(t + 100 * US), req(50, 2, 20_000_000, t + 100 * US), &dev);
    assert_eq!(s.decide(Time(t + 100 * US), &dev), Decision::WaitUntil(Time(t + 475 * US)));
    assert_eq!(expect_dispatch(s.decide(Time(t + 475 * US), &dev)).id, ReqId(999));
    let st = s.stats();
    assert_eq!((st.waits, st.hits, st.timeouts), (1, 0, 1));
    assert_eq!(st.wait_ns, 475 * US);
}

fn five_ms_unless_context_9(e: &Eval<'_>) -> Duration {
    if e.candidate.ctx == Some(ContextId(9)) {
        Duration::ZERO
    } else {
        Duration::from_millis(5)
    }
}

#[test]
fn a_reevaluation_never_extends_the_timeout() {
    let mut s = sptf(Script(five_ms_unless_context_9));
    let (t, head) = setup(&mut s, 3, true);
    let dev = view(head);
    assert_eq!(s.decide(Time(t), &dev), Decision::WaitUntil(Time(t + 5 * MS)));
    // an arrival re-runs the heuristic, which asks for 5 ms from now: the original stays
    s.arrive(Time(t + 3 * MS), req(7, 2, 20_000_000, t + 3 * MS), &dev);
    assert_eq!(s.decide(Time(t + 3 * MS), &dev), Decision::WaitUntil(Time(t + 5 * MS)));
    s.arrive(Time(t + 4 * MS), req(8, 3, 30_000_000, t + 4 * MS), &dev);
    assert_eq!(s.decide(Time(t + 4 * MS), &dev), Decision::WaitUntil(Time(t + 5 * MS)));
    assert_eq!(expect_dispatch(s.decide(Time(t + 5 * MS), &dev)).id, ReqId(999));
    let st = s.stats();
    assert_eq!((st.waits, st.reevaluations, st.timeouts), (1, 2, 1));
}

#[test]
fn a_reevaluation_may_dispatch_the_new_candidate() {
    let mut s = sptf(Script(five_ms_unless_context_9));
    let (t, head) = setup(&mut s, 3, true);
    let dev = view(head);
    assert_eq!(s.decide(Time(t), &dev), Decision::WaitUntil(Time(t + 5 * MS)));
    // context 9's request lands next to the head: SPTF's new candidate, no wait for it
    s.arrive(Time(t + MS), req(8, 9, head + 8, t + MS), &dev);
    assert_eq!(expect_dispatch(s.decide(Time(t + MS), &dev)).id, ReqId(8));
    let st = s.stats();
    assert_eq!((st.waits, st.hits, st.timeouts, st.wait_ns), (1, 0, 0, MS));
}

#[test]
fn the_short_circuit_dispatches_when_the_last_context_blocks() {
    let mut s = sptf(Script(|_| Duration::from_millis(5)));
    let (t, head) = setup(&mut s, 3, true);
    let dev = view(head);
    let before = s.stats().short_circuits;
    // context 0's next synchronous request is already queued, far away: it is blocked, so
    // the candidate (999) goes at once although the heuristic would wait
    s.arrive(Time(t), req(6, 0, 50_000_000, t), &dev);
    assert_eq!(expect_dispatch(s.decide(Time(t), &dev)).id, ReqId(999));
    assert_eq!(s.stats().short_circuits, before + 1);
    assert_eq!(s.stats().waits, 0);

    // an asynchronous request blocks nobody: no short-circuit
    let mut s = sptf(Script(|_| Duration::from_millis(5)));
    let (t, head) = setup(&mut s, 3, true);
    let dev = view(head);
    s.arrive(Time(t), Request { sync: false, ..req(6, 0, 50_000_000, t) }, &dev);
    assert_eq!(s.decide(Time(t), &dev), Decision::WaitUntil(Time(t + 5 * MS)));
}

#[test]
fn an_exiting_context_ends_the_wait_and_is_forgotten() {
    let mut s = sptf(Seek);
    let (t, head) = setup(&mut s, 5, true);
    let dev = view(head);
    assert!(matches!(s.decide(Time(t), &dev), Decision::WaitUntil(_)));
    s.context_exited(Time(t + 100 * US), ContextId(0));
    assert!(!s.is_waiting());
    assert_eq!(s.context_stats(Some(ContextId(0))), None);
    assert_eq!((s.stats().exits, s.stats().wait_ns), (1, 100 * US));
    assert_eq!(expect_dispatch(s.decide(Time(t + 100 * US), &dev)).id, ReqId(999));
}

#[test]
fn an_urgent_policy_request_cuts_the_wait() {
    // 999 arrives 900 us before the last completion and is overdue 1.2 ms after arriving
    let params = AgedSptfParams { aging_weight: 0.0, max_latency: Duration(1_200 * US) };
    let mut s = Antic::new("antic", AgedSptf::new(params), Seek, 1024);
    let (t, head) = setup(&mut s, 5, true);
    let dev = view(head);
    let due = Time(t - 900 * US + 1_200 * US);
    assert_eq!(s.decide(Time(t), &dev), Decision::WaitUntil(due), "instead of t + 475 us");
    assert_eq!(expect_dispatch(s.decide(due, &dev)).id, ReqId(999));
    assert_eq!(s.stats().urgent_preemptions, 1);
}

#[test]
fn merges_keep_the_context_counts() {
    let mut s = sptf(Script(|_| Duration::from_millis(5)));
    let (t, head) = setup(&mut s, 3, true);
    let dev = view(head);
    // context 0's next synchronous request merges into 999 (another context's): context 0
    // is blocked on it, so no wait
    let m = req(6, 0, 10_000_008, t);
    assert_eq!(s.arrive(Time(t), m, &dev), Arrival::Merged { into: ReqId(999) });
    let d = expect_dispatch(s.decide(Time(t), &dev));
    assert_eq!((d.id, d.len), (ReqId(999), 16));
    assert_eq!(s.stats().short_circuits, 3, "two during setup, one now");
    s.completed(Time(t + MS), &d, &view(d.end()));
    // both contexts saw the completion: context 0 thinks from it
    s.arrive(Time(t + 1_300 * US), req(7, 0, d.end(), t + 1_300 * US), &view(d.end()));
    // 300 us, not 1.3 ms since its own last completion
    let st = s.context_stats(Some(ContextId(0))).unwrap();
    assert_eq!(st.think.count(2), 0.0, "{:?}", st.think);
    assert!((st.think.count(0) - (1.0 + 0.9 + 0.81 + 0.729)).abs() < 1e-9, "{:?}", st.think);
}

#[test]
fn names_and_unknown_policies() {
    let mut s = Settings::new();
    for p in POLICIES {
        assert_eq!(build(p, false, 1024, &mut s).unwrap().name(), format!("antic:{p}"));
    }
    assert_eq!(build("stride", true, 1024, &mut s).unwrap().name(), "antic-combo:stride");
    let e = build("noop", false, 1024, &mut s).err().unwrap().to_string();
    assert!(e.contains("antic:noop") && e.contains("aged-sptf"), "{e}");
    assert!(build("sptf", true, 1024, &mut s).is_err());
    let mut bad = Settings::new();
    bad.push_kv("antic_backward_threshold=1.5").unwrap();
    assert!(build("cscan", false, 1024, &mut bad).is_err());
    let mut ok = Settings::new();
    ok.push_kv("antic_think_cutoff=5ms").unwrap();
    ok.push_kv("tau=100").unwrap();
    build("stride", true, 1024, &mut ok).unwrap();
    assert!(ok.unused().is_empty());
}

// ---- a tiny device loop: synchronous chains, one request in the device at a time ----

/// One synchronous issuer: request k goes to `sectors[k]`, `thinks[k]` ns after request
/// k-1 completed (the first at `start`).
#[derive(Clone, Debug)]
struct Chain {
    ctx: Option<u32>,
    weight: u32,
    start: u64,
    sectors: Vec<u64>,
    thinks: Vec<u64>,
}

#[derive(Debug, Default)]
struct Outcome {
    end: u64,
    /// (chain, service time) in dispatch order.
    log: Vec<(usize, u64)>,
    waits: u64,
}

impl Outcome {
    /// Disk time of chains 0 and 1 over the first `n` dispatches.
    fn disk(&self, n: usize) -> [u64; 2] {
        let mut d = [0; 2];
        for &(c, s) in &self.log[..n] {
            d[c] += s;
        }
        d
    }
}

/// Run the chains on a FixedView device serving `estimate(head, sector)` per request and
/// check the core's promises at every decision: each request dispatched exactly once; a
/// wait only with requests pending, nothing in the device, the awaited context not blocked,
/// and ending at most 15 ms after the last completion; Idle only with nothing pending.
fn run(s: &mut dyn Scheduler, chains: &[Chain]) -> Outcome {
    let base = FixedView { head: 0, base: 100 * US, capacity: 1 << 31 };
    for c in chains {
        if let Some(x) = c.ctx {
            s.set_weight(ContextId(x), c.weight);
        }
    }
    let n = chains.len();
    let mut next = vec![0usize; n];
    let mut arrivals: Vec<(u64, usize)> = chains.iter().enumerate().map(|(i, c)| (c.start, i)).collect();
    let mut busy: Option<(u64, Request)> = None;
    let mut timer: Option<u64> = None;
    let (mut now, mut head, mut last_completion) = (0u64, 0u64, 0u64);
    let mut lp: Option<Option<u32>> = None;
    let mut queued: HashMap<Option<u32>, u32> = HashMap::new();
    let mut owner: HashMap<u64, usize> = HashMap::new();
    let mut seen = HashSet::new();
    let total: usize = chains.iter().map(|c| c.sectors.len()).sum();
    let mut out = Outcome::default();
    let mut next_id = 1;
    for _ in 0..10 * total + 100 {
        if out.log.len() == total && busy.is_none() {
            out.end = now;
            return out;
        }
        let ta = arrivals.iter().map(|a| a.0).min();
        let tc = busy.as_ref().map(|b| b.0);
        let t = [ta, tc, timer].into_iter().flatten().min().expect("stuck: nothing pending and no event");
        assert!(t >= now, "time went back");
        now = t;
        if tc == Some(t) {
            let (_, r) = busy.take().unwrap();
            head = r.end();
            last_completion = now;
            s.completed(Time(now), &r, &FixedView { head, ..base });
            let c = owner[&r.id.0];
            lp = Some(chains[c].ctx);
            if next[c] < chains[c].sectors.len() {
                arrivals.push((now + chains[c].thinks[next[c]], c));
            }
        } else if ta == Some(t) {
            let i = arrivals.iter().position(|a| a.0 == t).unwrap();
            let (_, c) = arrivals.remove(i);
            let k = next[c];
            next[c] += 1;
            let r = Request {
                id: ReqId(next_id),
                sector: chains[c].sectors[k],
                len: 8,
                dir: Dir::Read,
                sync: true,
                arrival: Time(now),
                ctx: chains[c].ctx.map(ContextId),
            };
            owner.insert(next_id, c);
            next_id += 1;
            *queued.entry(chains[c].ctx).or_default() += 1;
            assert_eq!(s.arrive(Time(now), r, &FixedView { head, ..base }), Arrival::Queued);
        } else {
            timer = None;
        }
        if busy.is_some() {
            continue;
        }
        match s.decide(Time(now), &FixedView { head, ..base }) {
            Decision::Dispatch(r) => {
                assert!(seen.insert(r.id), "{:?} dispatched twice", r.id);
                let c = owner[&r.id.0];
                *queued.get_mut(&chains[c].ctx).unwrap() -= 1;
                let service = base.estimate(head, r.sector).0;
                out.log.push((c, service));
                busy = Some((now + service, r));
                timer = None;
            }
            Decision::WaitUntil(u) => {
                assert!(u.0 > now, "a wait must end in the future");
                assert!(s.pending() > 0, "waiting with nothing pending");
                assert!(
                    u.0 <= last_completion + THINK_RANGE.0,
                    "waits {} ns past the last completion",
                    u.0 - last_completion
                );
                let lp = lp.expect("a wait follows a completion");
                assert_eq!(queued.get(&lp).copied().unwrap_or(0), 0, "waiting for a blocked context");
                out.waits += 1;
                timer = Some(u.0);
            }
            Decision::Idle => assert_eq!(s.pending(), 0, "idle with requests pending"),
        }
    }
    panic!("the loop did not finish: {} of {total} dispatched", out.log.len());
}

fn antic(name: &str, settings: &[&str]) -> Box<dyn Scheduler> {
    let mut s = Settings::new();
    for kv in settings {
        s.push_kv(kv).unwrap();
    }
    let (fw, pol) = name.split_once(':').unwrap();
    // max_sectors 8: the chains' 8-sector requests never merge
    build(pol, fw == "antic-combo", 8, &mut s).unwrap()
}

/// `n` requests from `start`: sequential, or random within `spread` sectors.
fn chain(ctx: u32, weight: u32, start: u64, n: usize, spread: u64, think: u64) -> Chain {
    let sectors = (0..n as u64)
        .map(|k| {
            if spread == 0 {
                start + 8 * k
            } else {
                start + (k * 2_654_435_761 + ctx as u64) % spread / 8 * 8
            }
        })
        .collect();
    Chain { ctx: Some(ctx), weight, start: ctx as u64 * 37 * US, sectors, thinks: vec![think; n] }
}

/// 001 Section 2, example 1: two sequential synchronous readers far apart. A
/// work-conserving SPTF alternates between them (a long seek per request); anticipation
/// serves each in runs.
#[test]
fn anticipation_avoids_deceptive_idleness() {
    let chains = [chain(0, 1, 0, 300, 0, 200 * US), chain(1, 1, 10_000_000, 300, 0, 200 * US)];
    let wc = run(&mut WorkConserving::new(Sptf::new(), 8), &chains);
    for name in ["antic:sptf", "antic:aged-sptf", "antic:cscan", "antic:deadline"] {
        let a = run(&mut *antic(name, &[]), &chains);
        assert!(a.end * 5 < wc.end, "{name}: {} ms vs work-conserving {} ms", a.end / MS, wc.end / MS);
        assert!(a.waits > 0);
    }
    // without process information the anonymous context always has a request queued:
    // anticipation never waits and degenerates to the policy
    let anon: Vec<Chain> = chains.iter().map(|c| Chain { ctx: None, ..c.clone() }).collect();
    let a = run(&mut *antic("antic:sptf", &[]), &anon);
    assert_eq!(a.waits, 0);
    assert_eq!(a.end, wc.end);
}

/// 001 Section 4.7 (Figure 12): two synchronous clients with shares 1:2, random requests in
/// two distant regions. Work-conserving stride gets about 1:1; the proportional heuristic
/// 1:2; the combination 1:2 at a much higher throughput.
#[test]
fn anticipation_lets_stride_keep_its_shares() {
    let chains =
        [chain(0, 1, 0, 6000, 2_000_000, 200 * US), chain(1, 2, 20_000_000, 6000, 2_000_000, 200 * US)];
    let window = 5000;
    let ratio = |o: &Outcome| {
        let [p, q] = o.disk(window);
        q as f64 / p as f64
    };
    let throughput = |o: &Outcome| {
        let t: u64 = o.log[..window].iter().map(|x| x.1).sum();
        window as f64 / t as f64
    };
    let mut wc = WorkConserving::new(Stride::new(StrideParams::default()), 8);
    let wc = run(&mut wc, &chains);
    assert!(ratio(&wc) < 1.3, "work-conserving: {}", ratio(&wc));
    let share = run(&mut *antic("antic:stride", &[]), &chains);
    assert!((1.8..2.2).contains(&ratio(&share)), "proportional heuristic: {}", ratio(&share));
    let combo = run(&mut *antic("antic-combo:stride", &["tau=50ms"]), &chains);
    assert!((1.7..2.3).contains(&ratio(&combo)), "combination: {}", ratio(&combo));
    assert!(
        throughput(&combo) > 1.5 * throughput(&share),
        "combination {} vs proportional {} requests per disk second",
        throughput(&combo) * 1e9,
        throughput(&share) * 1e9
    );
}

fn chains(with_ctx: bool) -> impl Strategy<Value = Vec<Chain>> {
    let one = (0u64..1 << 30, 1u32..4, proptest::collection::vec((0u64..4 * MS, 0u8..4), 1..25));
    proptest::collection::vec(one, 1..5).prop_map(move |v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (start, weight, steps))| {
                let mut pos = start;
                let sectors = steps
                    .iter()
                    .map(|&(think, kind)| {
                        // sequential, a short hop either way, or a jump
                        let to = match kind {
                            0 | 1 => pos + 8,
                            2 => (pos + think % 4096 * 8).saturating_sub(16_384),
                            _ => (pos * 7919 + think) % (1 << 30),
                        };
                        pos = to / 8 * 8;
                        pos
                    })
                    .collect();
                Chain {
                    ctx: with_ctx.then_some(i as u32),
                    weight,
                    start: i as u64 * 37 * US,
                    sectors,
                    thinks: steps.iter().map(|s| s.0 / (1 + s.1 as u64 * 3)).collect(),
                }
            })
            .collect()
    })
}

const NAMES: &[&str] =
    &["antic:sptf", "antic:aged-sptf", "antic:cscan", "antic:deadline", "antic:stride", "antic-combo:stride"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn every_request_dispatched_once_and_waits_bounded(c in chains(true)) {
        for name in NAMES {
            run(&mut *antic(name, &["max_latency=300"]), &c);
        }
    }

    #[test]
    fn without_process_information_nothing_is_awaited(c in chains(false)) {
        for name in NAMES {
            prop_assert_eq!(run(&mut *antic(name, &[]), &c).waits, 0, "{}", name);
        }
    }
}

/// 001 Figure 7's adversary, n = 1: each context sends a request after a pause just past
/// the longest wait (16 ms), then one at once, and so on — every wait the heuristic asks
/// for is wrong. 001 Section 5.2.1's guard (on by default) stops waiting for such contexts
/// and lands on the work-conserving policy; `antic_timeout_guard=1` is the heuristic as 001
/// measured it, and it loses. A context whose thinktimes are steady is never guarded.
#[test]
fn the_guard_gives_up_on_an_adversary_only() {
    let adversary = |ctx: u32, start: u64| {
        let mut c = chain(ctx, 1, start, 200, 0, 0);
        c.thinks = (0..200).map(|k| if k % 2 == 0 { 16 * MS } else { 0 }).collect();
        c
    };
    let chains = [adversary(0, 0), adversary(1, 10_000_000)];
    let wc = run(&mut WorkConserving::new(Sptf::new(), 8), &chains);
    let guarded = run(&mut *antic("antic:sptf", &[]), &chains);
    let paper = run(&mut *antic("antic:sptf", &["antic_timeout_guard=1"]), &chains);
    assert!(
        guarded.end as f64 <= 1.05 * wc.end as f64,
        "guarded {} ms vs work-conserving {} ms",
        guarded.end / MS,
        wc.end / MS
    );
    assert!(
        paper.end as f64 >= 1.10 * guarded.end as f64,
        "unguarded {} ms vs guarded {} ms",
        paper.end / MS,
        guarded.end / MS
    );
    assert!(guarded.waits * 4 < paper.waits, "guarded waits {} vs {}", guarded.waits, paper.waits);

    let steady = [chain(0, 1, 0, 300, 0, 200 * US), chain(1, 1, 10_000_000, 300, 0, 200 * US)];
    let on = run(&mut *antic("antic:sptf", &[]), &steady);
    let off = run(&mut *antic("antic:sptf", &["antic_timeout_guard=1"]), &steady);
    assert_eq!((on.end, on.waits), (off.end, off.waits), "steady contexts are never guarded");
}

#[test]
fn a_declined_wait_is_still_judged() {
    let mut s = sptf(Seek).with_timeout_guard(0.0); // decline every wait once one missed
    let (t, head) = setup(&mut s, 5, true);
    let dev = view(head);
    // nothing judged yet: the wait is kept, and missed (context 0 comes back too late)
    assert_eq!(s.decide(Time(t), &dev), Decision::WaitUntil(Time(t + 475 * US)));
    assert_eq!(expect_dispatch(s.decide(Time(t + 475 * US), &dev)).id, ReqId(999));
    let late = t + 475 * US + 3 * MS;
    s.completed(Time(t + 475 * US + 2 * MS), &req(999, 1, 10_000_000, 0), &view(10_000_008));
    s.arrive(Time(late), req(6, 0, head, late), &view(10_000_008));
    assert_eq!(s.context_stats(Some(ContextId(0))).unwrap().misses.get(), Some(1.0));
    // context 0's next completion: the far request of context 1 waits, yet the core declines
    let r6 = expect_dispatch(s.decide(Time(late), &view(10_000_008)));
    s.arrive(Time(late + 100 * US), req(1000, 1, 10_000_016, late + 100 * US), &view(10_000_008));
    let done = late + MS;
    s.completed(Time(done), &r6, &view(r6.end()));
    assert_eq!(expect_dispatch(s.decide(Time(done), &view(r6.end()))).id, ReqId(1000));
    assert_eq!(s.stats().guarded, 1);
    // the declined prediction is judged all the same: context 0 returns in time, a hit
    s.arrive(Time(done + 200 * US), req(7, 0, r6.end(), done + 200 * US), &view(10_000_024));
    let m = s.context_stats(Some(ContextId(0))).unwrap().misses.get().unwrap();
    assert!((m - stats::POS_DECAY).abs() < 1e-9, "{m}");
}

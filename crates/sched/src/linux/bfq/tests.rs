//! BFQ tests: each rule driven event by event with synthetic time, a closed-loop device
//! for the shares, and a property test over random arrivals, completions, exits, weights
//! and classes on a device of depth 1 or 4.

use std::collections::{BTreeMap, HashSet};

use proptest::prelude::*;

use super::*;
use crate::linux::{bfq_merge, bfq_raise};
use crate::testutil::FixedView;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A merge bound no request fits: every arrival is queued on its own.
const NO_MERGES: u32 = 0;

fn quiet() -> BfqParams {
    BfqParams { low_latency: false, ..BfqParams::default() }
}

/// A scheduler with a clock the test moves by hand.
struct H {
    s: Bfq,
    now: Time,
    next: u64,
}

impl H {
    fn new(p: BfqParams) -> Self {
        H { s: Bfq::new(p, NO_MERGES), now: Time(0), next: 1 }
    }
    fn dev(&self) -> FixedView {
        FixedView::linear(0)
    }
    fn at(&mut self, t: u64) -> &mut Self {
        assert!(t >= self.now.0, "time goes forward");
        self.now = Time(t);
        self
    }
    fn after(&mut self, dt: u64) -> &mut Self {
        let t = self.now.0 + dt;
        self.at(t)
    }
    fn add(&mut self, ctx: u32, sector: u64, len: u32, write: bool) -> ReqId {
        let rq = Request {
            id: ReqId(self.next),
            sector,
            len,
            dir: if write { Dir::Write } else { Dir::Read },
            sync: !write,
            arrival: self.now,
            ctx: Some(ContextId(ctx)),
        };
        self.next += 1;
        let dev = self.dev();
        assert_eq!(self.s.arrive(self.now, rq, &dev), Arrival::Queued);
        self.s.check();
        rq.id
    }
    fn read(&mut self, ctx: u32, sector: u64, len: u32) -> ReqId {
        self.add(ctx, sector, len, false)
    }
    fn decide(&mut self) -> Decision {
        let dev = self.dev();
        let d = self.s.decide(self.now, &dev);
        self.s.check();
        d
    }
    fn dispatch(&mut self) -> Request {
        match self.decide() {
            Decision::Dispatch(r) => r,
            other => panic!("expected a dispatch, got {other:?}"),
        }
    }
    /// `r` completes `dt` later.
    fn complete(&mut self, r: &Request, dt: u64) {
        self.now += Duration(dt);
        let dev = self.dev();
        self.s.completed(self.now, r, &dev);
        self.s.check();
    }
    fn serve(&mut self, dt: u64) -> Request {
        let r = self.dispatch();
        self.complete(&r, dt);
        r
    }
    fn queue(&self, ctx: u32) -> QId {
        self.s.sync_queue(Some(ContextId(ctx))).expect("has a queue")
    }
    fn coeff(&self, ctx: u32) -> u32 {
        self.s.q(self.queue(ctx)).raising.coeff
    }
    fn vtime(&self) -> u128 {
        self.s.trees[IoClass::Be.index()].vtime()
    }
}

fn ctx_of(r: &Request) -> u32 {
    r.ctx.expect("test requests carry a context").0
}

// ---- parameters -------------------------------------------------------------------------

#[test]
fn defaults_are_linux_6_1s() {
    let p = BfqParams::from_settings(&mut Settings::new()).unwrap();
    assert_eq!(p, BfqParams::default());
    assert_eq!((p.slice_idle, p.timeout_sync, p.max_budget), (ms(8), ms(125), None));
    assert_eq!((p.fifo_expire_sync, p.fifo_expire_async), (ms(125), ms(250)));
    assert_eq!(p.back_seek, BackSeek { max: 32768, penalty: 2 });
    assert!(p.low_latency && !p.strict_guarantees && p.rotational);
    assert_eq!(TUNABLES.len(), 11);
    assert_eq!(TUNABLES[0].name, "max_sectors_kb", "bfq merges requests within the bound");
    for t in &TUNABLES[1..] {
        let shared = crate::linux::cfq::TUNABLES.contains(t);
        assert_eq!(crate::registry::readers(t), if shared { "cfq, bfq" } else { "bfq" }, "{}", t.name);
    }
}

#[test]
fn slice_idle_us_sets_the_idle_slice_and_not_beside_slice_idle() {
    let parse = |kvs: &[&str]| {
        let mut s = Settings::new();
        for kv in kvs {
            s.push_kv(kv).unwrap();
        }
        BfqParams::from_settings(&mut s)
    };
    assert_eq!(parse(&["slice_idle_us=500"]).unwrap().slice_idle, Duration::from_micros(500));
    assert_eq!(parse(&["slice_idle=2"]).unwrap().slice_idle, ms(2));
    assert_eq!(parse(&[]).unwrap().slice_idle, ms(8));
    let e = parse(&["slice_idle=2", "slice_idle_us=500"]).unwrap_err().to_string();
    assert!(e.contains("slice_idle_us") && e.contains("one or the other"), "{e}");
}

#[test]
fn settings_parse_and_zero_budget_means_automatic() {
    let mut s = Settings::new();
    for kv in
        ["slice_idle=500us", "max_budget=4096", "low_latency=0", "strict_guarantees=1", "timeout_sync=60"]
    {
        s.push_kv(kv).unwrap();
    }
    let p = BfqParams::from_settings(&mut s).unwrap();
    assert!(s.unused().is_empty());
    assert_eq!(
        (p.slice_idle, p.max_budget, p.timeout_sync),
        (Duration::from_micros(500), Some(4096), ms(60))
    );
    assert!(!p.low_latency && p.strict_guarantees);
    let b = Bfq::new(p, 1024);
    assert_eq!(b.params().slice_idle, ms(8), "strict_guarantees raises slice_idle to 8 ms");
    let mut s = Settings::new();
    s.push_kv("timeout_sync=0").unwrap();
    assert!(BfqParams::from_settings(&mut s).is_err(), "timeout_sync >= 1 ms");
}

// ---- queues, classes, weights ------------------------------------------------------------

#[test]
fn each_process_gets_its_own_queue_and_async_writes_share_one_per_priority() {
    let mut h = H::new(quiet());
    h.read(1, 0, 8);
    h.read(2, 1_000_000, 8);
    h.add(1, 5000, 8, true);
    h.add(2, 6000, 8, true);
    assert_ne!(h.queue(1), h.queue(2));
    assert_eq!(h.s.async_queues.len(), 1, "both best effort level 4");
    assert_eq!(h.s.queues.len(), 3);
    assert_eq!(h.s.pending(), 4);
}

#[test]
fn contiguous_arrivals_merge_within_their_queue_and_the_bound() {
    let mut s = Bfq::new(quiet(), 16);
    let dev = FixedView::linear(0);
    let r = |id, ctx, sector, dir| Request {
        id: ReqId(id),
        sector,
        len: 8,
        dir,
        sync: dir == Dir::Read,
        arrival: Time(id * MS),
        ctx: Some(ContextId(ctx)),
    };
    // (process 2 in the idle class: not a cooperator whose queue would join process 1's)
    s.set_ioprio(ContextId(2), IoPrio { class: IoClass::Idle, level: 7 });
    assert_eq!(s.arrive(Time(MS), r(1, 1, 100, Dir::Read), &dev), Arrival::Queued);
    assert_eq!(s.arrive(Time(2 * MS), r(2, 2, 108, Dir::Read), &dev), Arrival::Queued, "another queue");
    assert_eq!(s.arrive(Time(3 * MS), r(3, 1, 108, Dir::Read), &dev), Arrival::Merged { into: ReqId(1) });
    assert_eq!(s.arrive(Time(4 * MS), r(4, 1, 92, Dir::Read), &dev), Arrival::Queued, "past 16 sectors");
    assert_eq!(s.arrive(Time(5 * MS), r(5, 1, 84, Dir::Read), &dev), Arrival::Merged { into: ReqId(4) });
    s.check();
    assert_eq!(s.pending(), 3);
    // the nearest to where the last dispatch ended (nothing yet: sector 0) first
    let Decision::Dispatch(a) = s.decide(Time(6 * MS), &dev) else { panic!() };
    let Decision::Dispatch(b) = s.decide(Time(6 * MS), &dev) else { panic!() };
    assert_eq!([(a.id, a.sector, a.len), (b.id, b.sector, b.len)], [(ReqId(4), 84, 16), (ReqId(1), 100, 16)]);
    s.check();
}

#[test]
fn real_time_is_served_before_best_effort() {
    let mut h = H::new(quiet());
    h.s.set_ioprio(ContextId(2), IoPrio { class: IoClass::Rt, level: 4 });
    h.read(1, 0, 8);
    h.read(2, 100_000, 8);
    assert_eq!(ctx_of(&h.dispatch()), 2);
}

#[test]
fn a_heavier_queue_becoming_busy_preempts_and_the_preempted_keeps_its_budget() {
    let mut h = H::new(quiet());
    h.s.set_ioprio(ContextId(2), IoPrio { class: IoClass::Be, level: 0 });
    for i in 0..4 {
        h.read(1, i * 8, 8);
    }
    let r = h.serve(MS);
    assert_eq!(ctx_of(&r), 1);
    let q1 = h.queue(1);
    let budget = h.s.q(q1).budget;
    h.read(2, 900_000_000, 8);
    assert_eq!(h.s.stats.preemptions, 1, "weight 80 over 40");
    assert_eq!(ctx_of(&h.dispatch()), 2);
    assert!(h.s.busy.contains(&q1) && h.s.q(q1).budget == budget, "requeued, budget untouched");
}

#[test]
fn the_idle_class_gets_a_turn_at_least_every_200_ms() {
    let mut h = H::new(quiet());
    h.s.set_ioprio(ContextId(1), IoPrio { class: IoClass::Idle, level: 7 });
    h.read(1, 900_000_000, 8);
    let mut pos = 0;
    for _ in 0..4 {
        h.read(2, pos, 64);
        pos += 64;
    }
    let mut idle_at = None;
    while h.now.0 < 1000 * MS {
        let r = h.serve(MS);
        if ctx_of(&r) == 1 {
            idle_at = Some(h.now.0);
            break;
        }
        h.read(2, pos, 64);
        pos += 64;
    }
    let t = idle_at.expect("the idle class was served");
    // at the first selection past 200 ms: the best-effort turn then running ends within
    // its budget timeout
    assert!(t > 200 * MS && t <= 200 * MS + 126 * MS, "served at {} ms", t / MS);
}

/// Closed loop on a depth-1 device: every context keeps `depth` sequential requests of
/// `len` sectors queued; each takes `service` ns. Returns sectors served per context.
fn backlogged(h: &mut H, ctxs: &[u32], len: u32, service: u64, until: u64) -> BTreeMap<u32, u64> {
    let mut pos: BTreeMap<u32, u64> = ctxs.iter().map(|&c| (c, c as u64 * 100_000_000)).collect();
    for &c in ctxs {
        for _ in 0..4 {
            let p = pos[&c];
            h.read(c, p, len);
            pos.insert(c, p + len as u64);
        }
    }
    let mut got = BTreeMap::new();
    while h.now.0 < until {
        let r = h.serve(service);
        let c = ctx_of(&r);
        *got.entry(c).or_insert(0) += r.len as u64;
        let p = pos[&c];
        h.read(c, p, len);
        pos.insert(c, p + len as u64);
    }
    got
}

#[test]
fn b_wf2q_gives_weights_one_and_two_one_third_and_two_thirds() {
    let mut h = H::new(quiet());
    h.s.set_weight(ContextId(1), 1);
    h.s.set_weight(ContextId(2), 2);
    let got = backlogged(&mut h, &[1, 2], 256, MS, 30_000 * MS);
    let ratio = got[&2] as f64 / got[&1] as f64;
    assert!((ratio - 2.0).abs() < 0.2, "{got:?}: ratio {ratio}");
    assert!(h.s.stats.turns > 100, "many budgets: {:?}", h.s.stats);
    assert!(h.s.stats.budget_exhausted > 0);
}

#[test]
fn equal_weights_share_equally_and_io_priorities_weigh_as_linux() {
    let mut h = H::new(quiet());
    let got = backlogged(&mut h, &[1, 2], 256, MS, 10_000 * MS);
    let ratio = got[&2] as f64 / got[&1] as f64;
    assert!((ratio - 1.0).abs() < 0.1, "{got:?}");
    // level 0 weighs 80, level 4 weighs 40: 2:1
    let mut h = H::new(quiet());
    h.s.set_ioprio(ContextId(2), IoPrio { class: IoClass::Be, level: 0 });
    let got = backlogged(&mut h, &[1, 2], 256, MS, 20_000 * MS);
    let ratio = got[&2] as f64 / got[&1] as f64;
    assert!((ratio - 2.0).abs() < 0.2, "{got:?}: ratio {ratio}");
}

// ---- budgets and charging ----------------------------------------------------------------

#[test]
fn a_queue_exhausting_its_budget_is_charged_its_service() {
    let mut h = H::new(quiet());
    for i in 0..60 {
        h.read(1, i * 256, 256);
    }
    h.read(2, 500_000_000, 8);
    let q1 = h.queue(1);
    let first = h.dispatch();
    assert_eq!(ctx_of(&first), 1);
    assert_eq!(h.s.q(q1).budget, 10922, "2/3 of the default maximum budget");
    let v0 = h.vtime() - (256u128 << 22) / 80;
    h.complete(&first, MS);
    let mut served = 256;
    while h.s.in_service == Some(q1) {
        match h.decide() {
            Decision::Dispatch(r) if ctx_of(&r) == 1 => {
                served += r.len as u64;
                h.complete(&r, MS);
            }
            Decision::Dispatch(r) => {
                assert_eq!(h.s.stats.budget_exhausted, 1);
                h.complete(&r, MS);
                break;
            }
            d => panic!("{d:?}"),
        }
    }
    assert_eq!(served, 42 * 256, "42 requests fit in 10922 sectors");
    assert_eq!(h.s.stats.time_charged, 0, "a fast queue is charged by sectors");
    let charged = ((h.vtime() - v0 - (8u128 << 22) / 80) * 80) >> 22;
    assert!(charged.abs_diff(served as u128) <= 2, "charged {charged} for {served}");
    assert_eq!(h.s.q(q1).max_budget, 16384, "exhausted: four times, capped at the device maximum");
}

#[test]
fn a_slow_seeky_queue_is_charged_by_time() {
    let mut h = H::new(quiet());
    // 25 scattered reads: seeky
    for i in 0..25u64 {
        h.read(1, (i * 7919 % 25) * 1_000_000 + 1_000_000, 8);
    }
    h.read(2, 900_000_000, 8);
    h.read(2, 900_000_008, 8);
    let q1 = h.queue(1);
    assert!(h.s.q(q1).history.seeky());
    let v0 = h.vtime();
    let mut served = 0;
    let mut turn_ms = 0;
    loop {
        let r = h.dispatch();
        if ctx_of(&r) != 1 {
            break;
        }
        served += r.len as u64;
        turn_ms += 2;
        h.complete(&r, 2 * MS);
    }
    assert_eq!((served, turn_ms), (200, 50), "all of queue 1 in one 50 ms turn");
    assert_eq!(h.s.stats.no_more_requests, 1, "seeky among equals: no idling");
    assert_eq!(h.s.stats.time_charged, 1);
    let want = 16384 * 50 / 125;
    let charged = (((h.vtime() - v0) * 80) >> 22) as u64 - 8;
    assert!(charged.abs_diff(want) <= 4, "charged {charged}, by time {want}");
}

#[test]
fn a_budget_timeout_ends_a_turn() {
    let mut h = H::new(quiet());
    for i in 0..100 {
        h.read(1, i * 8, 8);
    }
    h.read(2, 900_000_000, 8);
    // 10 ms per request: 125 ms pass before the budget does
    let mut n = 0;
    while ctx_of(&h.serve(10 * MS)) == 1 {
        n += 1;
    }
    assert_eq!(n, 13, "12 requests fill 120 ms, the 13th ends past 125 ms");
    assert_eq!(h.s.stats.budget_timeouts, 1);
}

// ---- idling ------------------------------------------------------------------------------

#[test]
fn an_emptied_sync_queue_is_waited_for_at_most_the_idle_slice() {
    let mut h = H::new(quiet());
    h.read(1, 0, 8);
    h.read(2, 800_000_000, 8);
    h.read(2, 800_000_008, 8);
    let r = h.dispatch();
    assert_eq!(ctx_of(&r), 1);
    h.complete(&r, MS);
    let done = h.now.0;
    // sequential, I/O bound and short think time on a rotational disk: idle for it
    let Decision::WaitUntil(t) = h.decide() else { panic!("expected a wait") };
    assert!(t.0 > done && t.0 <= done + 8 * MS, "{t:?}");
    assert_eq!(h.s.stats.idle_waits, 1);
    // it comes back within the slice: served at once
    h.after(3 * MS).read(1, 8, 8);
    let r = h.dispatch();
    assert_eq!((ctx_of(&r), r.sector), (1, 8));
    assert_eq!(h.s.stats.idle_hits, 1);
    h.complete(&r, MS);
    let Decision::WaitUntil(t) = h.decide() else { panic!("expected a wait") };
    // the timer fires: too idle, the other queue is served
    h.at(t.0);
    let r = h.dispatch();
    assert_eq!(ctx_of(&r), 2);
    assert_eq!(h.s.stats.too_idle, 1);
}

#[test]
fn the_only_busy_queue_is_waited_for_and_then_nothing_is_pending() {
    let mut h = H::new(quiet());
    h.read(1, 0, 8);
    h.serve(MS);
    let Decision::WaitUntil(t) = h.decide() else { panic!("expected a wait") };
    assert_eq!(t, h.now + ms(8));
    h.at(t.0);
    assert_eq!(h.decide(), Decision::Idle);
    assert_eq!(h.s.stats.too_idle, 1);
    assert!(h.s.in_service.is_none());
}

#[test]
fn a_seeky_queue_among_equals_is_not_waited_for() {
    let mut h = H::new(quiet());
    for i in 0..22u64 {
        h.read(1, (i % 2) * 500_000_000 + i * 10_000, 8);
        h.read(2, 200_000_000 + (i % 2) * 500_000_000 + i * 10_000, 8);
    }
    assert!(h.s.q(h.queue(1)).history.seeky() && h.s.q(h.queue(2)).history.seeky());
    let mut last = None;
    for _ in 0..44 {
        match h.decide() {
            Decision::Dispatch(r) => {
                last = Some(ctx_of(&r));
                h.complete(&r, MS);
            }
            d => panic!("a seeky queue is not waited for while another is busy: {d:?} after {last:?}"),
        }
    }
    assert_eq!(h.s.pending(), 0);
}

#[test]
fn a_seeky_queue_alone_gets_at_most_two_milliseconds() {
    let mut h = H::new(quiet());
    for i in 0..22u64 {
        h.read(1, (i % 2) * 500_000_000 + i * 10_000, 8);
    }
    for _ in 0..22 {
        h.serve(MS);
    }
    let Decision::WaitUntil(t) = h.decide() else { panic!("the only busy queue is waited for") };
    assert!(t <= h.now + ms(2), "{t:?} vs {:?}", h.now);
}

#[test]
fn slice_idle_zero_never_idles() {
    let mut h = H::new(BfqParams { slice_idle: Duration::ZERO, ..quiet() });
    h.read(1, 0, 8);
    h.serve(MS);
    assert_eq!(h.decide(), Decision::Idle);
    h.after(MS).read(1, 8, 8);
    h.read(2, 900_000_000, 8);
    h.serve(MS);
    assert_eq!(ctx_of(&h.dispatch()), 2);
    assert_eq!(h.s.stats.idle_waits, 0);
}

#[test]
fn a_drive_that_queues_commands_ends_idling_for_throughput() {
    let mut h = H::new(quiet());
    // 33 completions with 4 at the device: the drive queues
    for i in 0..40u64 {
        h.read(1, i * 8, 8);
        h.read(2, 900_000_000 + i * 8, 8);
    }
    let mut at_dev = Vec::new();
    for _ in 0..40 {
        while at_dev.len() < 4 {
            match h.decide() {
                Decision::Dispatch(r) => at_dev.push(r),
                _ => break,
            }
        }
        if at_dev.is_empty() {
            break;
        }
        let r = at_dev.remove(0);
        h.complete(&r, 100 * US);
    }
    assert!(h.s.hw_tag.queueing());
    let q1 = h.queue(1);
    // sequential readers with a queueing rotational drive still idle (seq, I/O bound)
    assert!(h.s.idling_boosts_throughput(q1, h.now) || h.s.q(q1).history.seeky());
}

#[test]
fn strict_guarantees_keeps_one_request_at_the_device() {
    let mut h = H::new(BfqParams { strict_guarantees: true, ..quiet() });
    h.read(1, 0, 8);
    h.read(1, 8, 8);
    let r = h.dispatch();
    assert_eq!(h.decide(), Decision::Idle, "one at a time");
    h.complete(&r, MS);
    h.dispatch();
}

#[test]
fn injection_serves_another_queue_while_a_raised_queue_waits() {
    // a raised queue among unraised ones is idled for its guarantees; a long-think-time
    // queue lets others inject
    let mut h = H::new(BfqParams::default());
    h.read(1, 0, 8);
    let r = h.serve(MS);
    assert_eq!(ctx_of(&r), 1);
    assert!(h.coeff(1) > 1, "a new queue starts raised");
    // the device idles for queue 1: a request of the same process's async queue injects
    h.add(1, 50_000_000, 8, true);
    let r = h.dispatch();
    assert!(!r.sync, "the same process's async write is injected: {r:?}");
    assert_eq!(h.s.stats.injections, 1);
    assert_eq!(h.s.in_service, Some(h.queue(1)), "the in-service queue is unchanged");
}

#[test]
fn nothing_is_injected_until_something_runs_the_queue_after_the_completion() {
    // blk-mq: the completion that arms the idle timer asks for no dispatch; an insertion
    // (or the timer) is the next occasion, and only then may another queue inject
    let mut h = H::new(BfqParams::default());
    h.read(1, 0, 8);
    let r = h.dispatch();
    h.add(1, 50_000_000, 8, true);
    h.complete(&r, MS);
    let timer = match h.decide() {
        Decision::WaitUntil(t) => t,
        other => panic!("expected the idle timer, got {other:?}"),
    };
    assert!(timer > h.now);
    assert_eq!(h.s.stats.injections, 0, "not at the completion");
    // another write of the same process is inserted: the queue runs, the first write injects
    h.after(100 * US).add(1, 60_000_000, 8, true);
    let r = h.dispatch();
    assert!(!r.sync && r.sector == 50_000_000, "the waiting async write is injected: {r:?}");
    assert_eq!(h.s.stats.injections, 1);
    assert_eq!(h.s.in_service, Some(h.queue(1)), "queue 1 still waits for its next read");
}

// ---- cooperating processes --------------------------------------------------------------

#[test]
fn interleaved_readers_of_one_region_share_a_queue() {
    let mut h = H::new(quiet());
    h.read(1, 0, 8);
    h.read(2, 8, 8);
    assert_eq!(h.queue(2), h.queue(1), "process 2 joined process 1's queue");
    assert_eq!(h.s.stats.merges, 1);
    assert_eq!(h.s.q(h.queue(1)).processes, 2);
    assert!(h.s.q(h.queue(1)).coop());
    // one queue, served in order: the two processes' blocks as one stream
    let a = h.serve(MS);
    let b = h.serve(MS);
    assert_eq!((a.sector, b.sector), (0, 8));
    // the queue process 2 left holds nothing and has no process
    let old = (0..h.s.queues.len() as QId).find(|&k| k != h.queue(1) && h.s.q(k).sync).unwrap();
    assert!(!h.s.q(old).has_process() && h.s.q(old).rqs.is_empty());
}

#[test]
fn readers_far_apart_keep_their_queues() {
    let mut h = H::new(quiet());
    h.read(1, 0, 8);
    h.read(2, 8 + bfq_merge::CLOSE_THR + 1, 8);
    assert_ne!(h.queue(2), h.queue(1));
    assert_eq!(h.s.stats.merges, 0);
    // a lone queue has no cooperator either
    let mut h = H::new(quiet());
    h.read(1, 0, 8);
    assert_eq!(h.s.stats.merges, 0);
}

#[test]
fn a_queue_served_for_100_ms_is_too_late_to_join() {
    let mut h = H::new(quiet());
    let mut sector = 0;
    h.read(1, sector, 8);
    // process 1 reads on, one request at a time, for 120 ms
    while h.now.0 < 120 * MS {
        h.serve(MS);
        sector += 8;
        h.after(10 * US).read(1, sector, 8);
    }
    h.read(2, sector + 8, 8);
    assert_ne!(h.queue(2), h.queue(1), "served since {:?}", h.s.q(h.queue(1)).first_io);
    assert_eq!(h.s.stats.merges, 0);
}

#[test]
fn a_shared_queue_gone_seeky_is_split_at_the_next_request() {
    let mut h = H::new(quiet());
    h.read(1, 0, 8);
    h.read(2, 8, 8);
    assert_eq!(h.s.stats.merges, 1);
    h.serve(MS);
    h.serve(MS);
    let shared = h.queue(1);
    // then both processes jump about the disk: the shared queue turns seeky
    for i in 0..24u64 {
        h.read(1 + (i % 2) as u32, (i + 1) * 10_000_000, 8);
        h.serve(MS);
    }
    assert!(h.s.q(shared).history.seeky());
    // its turn ends (the idle slice runs out): marked for splitting
    h.after(50 * MS);
    assert!(matches!(h.decide(), Decision::Idle));
    assert!(h.s.q(shared).split_coop);
    // process 2's next request goes to a queue of its own; process 1 keeps the shared one
    h.read(2, 900_000_000, 8);
    assert_ne!(h.queue(2), shared);
    assert_eq!(h.s.stats.splits, 1);
    assert!(!h.s.q(h.queue(2)).history.seeky(), "its history from before the merge");
    h.read(1, 990_000_000, 8);
    assert_eq!(h.queue(1), shared, "the last process keeps the queue");
    assert!(!h.s.q(shared).coop() && !h.s.q(shared).split_coop);
}

/// Serve the next request in 1 ms, waiting first when told to, as a device does; the
/// request served.
fn serve_eventually(h: &mut H) -> Request {
    loop {
        match h.decide() {
            Decision::Dispatch(r) => {
                h.complete(&r, MS);
                return r;
            }
            Decision::WaitUntil(t) => {
                h.at(t.0);
            }
            Decision::Idle => panic!("idle with a request queued"),
        }
    }
}

/// Two processes reading at random, far apart, starting `gap` ms apart with one priority,
/// a request each per round until `until` ms.
fn random_pair(gap: u64, until: u64) -> H {
    let mut h = H::new(quiet());
    h.read(1, 0, 8);
    h.serve(MS);
    h.at(gap * MS);

    let mut i = 1u64;
    while h.now.0 < until * MS {
        for p in [2u32, 1] {
            let sector = (i * 7919 + p as u64 * 104_729) % 800 * 1_000_000;
            h.read(p, sector, 8);
            serve_eventually(&mut h);
        }
        i += 1;
    }
    h
}

#[test]
fn random_readers_created_together_are_stably_merged_after_600_ms() {
    let h = random_pair(10, 700);
    assert_eq!(h.queue(2), h.queue(1), "merged");
    assert!(h.s.q(h.queue(1)).stable && h.s.stably_merged.contains(&ContextId(2)));
    assert_eq!(h.s.stats.merges, 1);
    assert!(h.s.q(h.queue(1)).history.seeky(), "a seeky shared queue");
    assert_eq!(h.s.stats.splits, 0, "a stable merge is never split");
    // not before 600 ms
    let h = random_pair(10, 550);
    assert_ne!(h.queue(2), h.queue(1));
}

#[test]
fn no_stable_merge_for_readers_created_apart_or_better_left_alone() {
    // 300 ms apart: no scheduled merge
    let h = random_pair(300, 1500);
    assert_ne!(h.queue(2), h.queue(1));
    assert!(h.s.stable_target.is_empty());
    // a sequential reader that asks again as soon as it is served, for which idling pays:
    // the scheduled merge is dropped
    let mut h = H::new(quiet());
    h.read(1, 0, 8);
    h.serve(MS);
    h.at(10 * MS);
    let mut sector = 1_000_000_000;
    while h.now.0 < 700 * MS {
        for _ in 0..20 {
            h.read(2, sector, 8);
            serve_eventually(&mut h);
            sector += 8;
        }
        h.read(1, h.now.0 / 1000, 8);
        serve_eventually(&mut h);
    }
    assert_ne!(h.queue(2), h.queue(1));
    assert!(h.s.stable_target.is_empty(), "dropped once its time came");
}

/// Two sequential readers of 128-sector requests far apart, each asking again as soon as
/// it is served (as the alternate-block readers reach the scheduler), on a device serving
/// one request in 1 ms, until `until` ms. Returns the scheduler and each reader's next sector.
fn sequential_pair(params: BfqParams, until: u64) -> (H, [u64; 2]) {
    let mut h = H::new(params);
    let mut pos = [0u64, 1_000_000_000];
    for p in [1u32, 2] {
        h.read(p, pos[p as usize - 1], 128);
    }
    sequential_pair_on(&mut h, &mut pos, until);
    (h, pos)
}

fn sequential_pair_on(h: &mut H, pos: &mut [u64; 2], until: u64) {
    while h.now.0 < until * MS {
        let p = ctx_of(&serve_eventually(h));
        pos[p as usize - 1] += 128;
        h.read(p, pos[p as usize - 1], 128);
    }
}

#[test]
fn raised_sequential_readers_are_stably_merged_and_the_shared_raising_ends_by_service() {
    // idling would boost these readers' throughput, but not "without issues" while raised
    // queues are busy: the scheduled merge goes ahead (Linux 6.1 merges the alternate-block
    // readers 600 ms after their creation in a guest)
    let (h, _) = sequential_pair(BfqParams::default(), 700);
    assert_eq!(h.queue(2), h.queue(1), "merged while raised");
    assert!(h.s.q(h.queue(1)).stable);
    assert!(h.s.raised(h.queue(1)), "the shared queue keeps the raising");
    // without raising the same readers keep their queues (idling pays)
    let (h, _) = sequential_pair(quiet(), 700);
    assert_ne!(h.queue(2), h.queue(1));
    // the shared queue's raising ends once it has received 120,000 sectors raised (about
    // 940 requests of 128 sectors), long before the 10.5 s period
    let (mut h, mut pos) = sequential_pair(BfqParams::default(), 700);
    let k = h.queue(1);
    let mut until = 700;
    while h.s.raised(k) {
        until += 10;
        sequential_pair_on(&mut h, &mut pos, until);
        assert!(until < 5_000, "still raised at {until} ms");
    }
    assert!(h.s.q(k).raising.service > bfq_raise::MAX_SERVICE);
}

#[test]
fn a_process_that_exits_leaves_a_shared_queue_to_the_others() {
    let mut h = H::new(quiet());
    h.read(1, 0, 8);
    h.read(2, 8, 8);
    let shared = h.queue(1);
    let now = h.now;
    h.s.context_exited(now, ContextId(1));
    h.s.check();
    assert!(h.s.q(shared).has_process(), "process 2 is still there");
    assert_eq!(h.s.q(shared).processes, 1);
    h.s.context_exited(now, ContextId(2));
    h.s.check();
    assert!(!h.s.q(shared).has_process());
}

// ---- weight raising ---------------------------------------------------------------------

#[test]
fn a_queue_idle_long_enough_is_raised_with_low_latency_and_not_without() {
    for low_latency in [true, false] {
        let mut h = H::new(BfqParams { low_latency, ..BfqParams::default() });
        h.read(1, 0, 8);
        assert_eq!(h.coeff(1), if low_latency { 30 } else { 1 }, "a new queue counts as idle for ever");
        h.serve(MS);
        h.after(20 * MS);
        assert_eq!(h.decide(), Decision::Idle);
        // back after 3 s: idle long enough
        h.after(3000 * MS).read(1, 8, 8);
        assert_eq!(h.coeff(1), if low_latency { 30 } else { 1 });
        assert_eq!(h.s.stats.raised, low_latency as u64, "renewed, not started again");
    }
}

#[test]
fn raising_ends_after_its_duration_and_starts_again_only_after_two_idle_seconds() {
    let mut h = H::new(BfqParams::default());
    h.read(1, 0, 8);
    assert_eq!(h.coeff(1), 30);
    let start = h.now;
    let duration = h.s.wr_duration();
    assert_eq!(duration, ms(10_500), "rotational reference: 14000 x 7 s / 9333");
    let mut sector = 0;
    // a request every 10 ms, within the idle slice: never idle for 2 s, never renewed
    while h.now < start + (duration - ms(20)) {
        h.serve(MS);
        assert_eq!(h.coeff(1), 30, "raised at {:?}", h.now);
        sector += 8;
        h.after(9 * MS).read(1, sector, 8);
    }
    while h.now <= start + duration + ms(20) {
        h.serve(MS);
        sector += 8;
        h.after(9 * MS).read(1, sector, 8);
    }
    assert_eq!(h.coeff(1), 1, "ended after {duration:?}");
    assert_eq!(h.s.q(h.queue(1)).weight(), DEFAULT_WEIGHT);
    assert_eq!(h.s.stats.raised, 1);
    // back after a second: not interactive; a queue this light is soft real-time instead
    h.serve(MS);
    h.after(20 * MS);
    assert_eq!(h.decide(), Decision::Idle);
    h.after(1000 * MS).read(1, 0, 8);
    assert_eq!(h.coeff(1), bfq_raise::SOFT_RT_COEFF);
    // after three: interactive
    h.serve(MS);
    h.after(20 * MS);
    assert_eq!(h.decide(), Decision::Idle);
    h.after(3000 * MS).read(1, 8, 8);
    assert_eq!(h.coeff(1), 30);
}

#[test]
fn a_weight_other_than_the_default_is_never_raised() {
    let mut h = H::new(BfqParams::default());
    h.s.set_weight(ContextId(1), 2);
    h.read(1, 0, 8);
    assert_eq!(h.coeff(1), 1);
    assert_eq!(h.s.q(h.queue(1)).weight(), 80);
}

#[test]
fn an_exited_process_is_not_waited_for() {
    let mut h = H::new(quiet());
    h.read(1, 0, 8);
    h.read(2, 900_000_000, 8);
    let r = h.dispatch();
    assert_eq!(ctx_of(&r), 1);
    h.s.context_exited(h.now, ContextId(1));
    h.s.check();
    h.complete(&r, MS);
    assert_eq!(ctx_of(&h.dispatch()), 2);
}

// ---- property test -----------------------------------------------------------------------

#[derive(Clone, Debug)]
struct Ev {
    dt_us: u64,
    ctx: Option<u8>,
    far: bool,
    write: bool,
    exit: bool,
}

fn events() -> impl Strategy<Value = Vec<Ev>> {
    let ev = (0u64..20_000, prop::option::weighted(0.9, 0u8..5), any::<bool>(), 0u8..5, 0u8..20).prop_map(
        |(dt, ctx, far, w, x)| Ev {
            dt_us: if dt % 3 == 0 { dt / 100 } else { dt },
            ctx,
            far,
            write: w == 0,
            exit: x == 0,
        },
    );
    prop::collection::vec(ev, 1..120)
}

/// Drive BFQ with open-loop arrivals on a device taking up to `depth` requests. Checks:
/// every request dispatched exactly once, `pending()` exact after every call, waits in the
/// future and at most the idle slice (20 ms raised) away, never `Idle` with requests
/// pending and nothing at the device, and the invariants after every call.
fn run(evs: &[Ev], p: BfqParams, depth: usize, weights: &[u32], classes: &[u8], merge: bool) -> BfqStats {
    let mut s = Bfq::new(p, if merge { 32 } else { NO_MERGES });
    let mut merged_into: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (c, &w) in weights.iter().enumerate() {
        s.set_weight(ContextId(c as u32), w);
    }
    for (c, &k) in classes.iter().enumerate() {
        let class = [IoClass::Rt, IoClass::Be, IoClass::Be, IoClass::Idle][k as usize % 4];
        s.set_ioprio(
            ContextId(c as u32),
            IoPrio { class, level: if class == IoClass::Idle { 7 } else { k % 8 } },
        );
    }
    let dev = FixedView::linear(0);
    let mut now = 0u64;
    let mut arrivals: Vec<(u64, &Ev)> = Vec::new();
    let mut t = 0;
    for e in evs {
        t += e.dt_us * US;
        arrivals.push((t, e));
    }
    arrivals.reverse();
    let mut pos = [0u64; 6];
    let mut queued: HashSet<u64> = HashSet::new();
    let mut done: HashSet<u64> = HashSet::new();
    let mut device: Vec<(u64, Request)> = Vec::new();
    let mut timer: Option<u64> = None;
    let mut head = 0u64;
    let mut next_id = 1;
    let bound = p.slice_idle.max(ms(20)).0.max(if p.strict_guarantees { 8 * MS } else { 0 });
    for _ in 0..100_000 {
        // the device asks while it has room
        while device.len() < depth {
            let d = s.decide(Time(now), &dev);
            s.check();
            match d {
                Decision::Dispatch(r) => {
                    assert!(queued.remove(&r.id.0), "{:?} dispatched but not queued", r.id);
                    assert!(done.insert(r.id.0), "{:?} dispatched twice", r.id);
                    for m in merged_into.remove(&r.id.0).unwrap_or_default() {
                        assert!(done.insert(m), "{m} dispatched twice");
                    }
                    let start = device.last().map_or(now, |d| d.0).max(now);
                    let took = 100 * US + head.abs_diff(r.sector) / 1000;
                    head = r.end();
                    device.push((start + took, r));
                    timer = None;
                }
                Decision::WaitUntil(t) => {
                    assert!(t.0 > now && t.0 <= now + bound, "wait until {t:?} at {now}");
                    assert!(p.slice_idle > Duration::ZERO || p.strict_guarantees, "slice_idle=0 waited");
                    timer = Some(t.0);
                    break;
                }
                Decision::Idle => {
                    assert!(queued.is_empty() || !device.is_empty(), "Idle with {} pending", queued.len());
                    timer = None;
                    break;
                }
            }
            assert_eq!(s.pending(), queued.len());
        }
        let ta = arrivals.last().map(|a| a.0);
        let tc = device.first().map(|d| d.0);
        let Some(t) = [ta, tc, timer].into_iter().flatten().min() else { break };
        now = now.max(t);
        if tc == Some(t) {
            let (_, r) = device.remove(0);
            s.completed(Time(now), &r, &dev);
        } else if ta == Some(t) {
            let (_, e) = arrivals.pop().unwrap();
            let ctx = e.ctx.map(|c| ContextId(c as u32));
            let slot = e.ctx.map_or(5, |c| c as usize);
            if e.exit {
                if let Some(c) = ctx {
                    s.context_exited(Time(now), c);
                }
            } else {
                pos[slot] = if e.far { pos[slot] + 7_777_777 } else { pos[slot] + 8 } % (1 << 32);
                let r = Request {
                    id: ReqId(next_id),
                    sector: pos[slot] + slot as u64 * (1 << 33),
                    len: 8,
                    dir: if e.write { Dir::Write } else { Dir::Read },
                    sync: !e.write,
                    arrival: Time(now),
                    ctx,
                };
                next_id += 1;
                match s.arrive(Time(now), r, &dev) {
                    Arrival::Queued => {
                        queued.insert(r.id.0);
                    }
                    Arrival::Merged { into } => {
                        assert!(merge, "merged with merging off");
                        assert!(queued.contains(&into.0), "merged into {into:?}, not queued");
                        merged_into.entry(into.0).or_default().push(r.id.0);
                    }
                }
            }
        } else {
            timer = None;
        }
        s.check();
        assert_eq!(s.pending(), queued.len());
    }
    assert!(queued.is_empty() && device.is_empty(), "{} left", queued.len());
    assert_eq!(done.len() as u64, next_id - 1, "every request dispatched once");
    s.stats.clone()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn every_request_once_pending_exact_waits_bounded(
        evs in events(),
        depth in prop_oneof![Just(1usize), Just(4)],
        idle_us in prop_oneof![Just(0u64), 1u64..20_000],
        low_latency in any::<bool>(),
        strict in prop::bool::weighted(0.15),
        weights in prop::collection::vec(1u32..4, 0..5),
        classes in prop::collection::vec(0u8..8, 0..5),
        merge in any::<bool>(),
    ) {
        let p = BfqParams {
            slice_idle: Duration::from_micros(idle_us),
            low_latency,
            strict_guarantees: strict,
            ..BfqParams::default()
        };
        run(&evs, p, depth, &weights, &classes, merge);
    }

    #[test]
    fn defaults_hold_the_same_properties(evs in events()) {
        run(&evs, BfqParams::default(), 1, &[], &[], true);
    }

    #[test]
    fn runs_are_deterministic(evs in events()) {
        let a = run(&evs, BfqParams::default(), 1, &[1, 2], &[], true);
        let b = run(&evs, BfqParams::default(), 1, &[1, 2], &[], true);
        prop_assert_eq!(a, b);
    }
}

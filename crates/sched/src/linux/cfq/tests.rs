//! CFQ tests: each rule pinned with synthetic time, a property test driving random
//! synchronous chains (and async writes, exits, weights) through a tiny device loop, and
//! the two-readers scenario of 000 Section 3.3.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;

use super::*;
use crate::testutil::FixedView;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn expect_dispatch(d: Decision) -> Request {
    match d {
        Decision::Dispatch(r) => r,
        other => panic!("expected a dispatch, got {other:?}"),
    }
}

/// A scheduler with a clock and a head the test moves by hand.
struct H {
    s: Cfq,
    now: Time,
    head: Sector,
    next: u64,
}

impl H {
    fn new(p: CfqParams) -> Self {
        H { s: Cfq::new(p, 1024), now: Time(0), head: 0, next: 1 }
    }
    fn dflt() -> Self {
        Self::new(CfqParams::default())
    }
    fn dev(&self) -> FixedView {
        FixedView { head: self.head, base: 100 * US, capacity: 1 << 36 }
    }
    fn at(&mut self, t: u64) -> &mut Self {
        assert!(t >= self.now.0, "time goes forward");
        self.now = Time(t);
        self
    }
    fn add(&mut self, ctx: Option<u32>, sector: Sector, dir: Dir, sync: bool) -> Arrival {
        let rq = Request {
            id: ReqId(self.next),
            sector,
            len: 8,
            dir,
            sync,
            arrival: self.now,
            ctx: ctx.map(ContextId),
        };
        self.next += 1;
        let dev = self.dev();
        let a = self.s.arrive(self.now, rq, &dev);
        self.s.check();
        a
    }
    /// A synchronous 4 KiB read; its id.
    fn read(&mut self, ctx: Option<u32>, sector: Sector) -> ReqId {
        let id = ReqId(self.next);
        assert_eq!(self.add(ctx, sector, Dir::Read, true), Arrival::Queued);
        id
    }
    /// An asynchronous 4 KiB write; its id.
    fn write(&mut self, ctx: Option<u32>, sector: Sector) -> ReqId {
        let id = ReqId(self.next);
        assert_eq!(self.add(ctx, sector, Dir::Write, false), Arrival::Queued);
        id
    }
    fn decide(&mut self) -> Decision {
        let dev = self.dev();
        let d = self.s.decide(self.now, &dev);
        self.s.check();
        d
    }
    fn dispatch(&mut self) -> Request {
        expect_dispatch(self.decide())
    }
    /// The request finishes `dt` later; the head moves to its end.
    fn complete(&mut self, r: &Request, dt: u64) {
        self.now += Duration(dt);
        self.head = r.end();
        let dev = self.dev();
        self.s.completed(self.now, r, &dev);
        self.s.check();
    }
    /// Dispatch and complete the next request, `dt` each.
    fn serve(&mut self, dt: u64) -> Request {
        let r = self.dispatch();
        self.complete(&r, dt);
        r
    }
    fn queue_of(&self, ctx: u32) -> QKey {
        self.s.ctxs[&Some(ContextId(ctx))].queue.expect("has a queue")
    }
}

fn ctx_of(r: &Request) -> u32 {
    r.ctx.expect("test requests carry a context").0
}

/// Lengths of runs of equal values.
fn runs<T: PartialEq>(v: &[T]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for (i, x) in v.iter().enumerate() {
        if i > 0 && v[i - 1] == *x {
            *out.last_mut().unwrap() += 1;
        } else {
            out.push(1);
        }
    }
    out
}

// ---- parameters -------------------------------------------------------------------------

#[test]
fn defaults_match_the_constants_and_linux() {
    let p = CfqParams::from_settings(&mut Settings::new()).unwrap();
    assert_eq!(p, CfqParams::default());
    assert_eq!((p.slice_sync, p.slice_async, p.slice_idle), (ms(100), ms(40), ms(8)));
    assert_eq!((p.fifo_expire_sync, p.fifo_expire_async), (ms(125), ms(250)));
    assert_eq!((p.slice_async_rq, p.quantum, p.back_seek_penalty, p.low_latency), (2, 8, 2, true));
    assert_eq!(p.back_seek_max, 16384 * 2, "16 MiB in sectors");
    // the knobs bfq reads as they are (its fifo_expire_* and low_latency are its own)
    let shared = ["slice_idle", "back_seek_max", "back_seek_penalty"];
    for t in &TUNABLES[1..] {
        let want = if shared.contains(&t.name) { "cfq, bfq" } else { "cfq" };
        assert_eq!(crate::registry::readers(t), want, "{}", t.name);
    }
    assert_eq!(TUNABLES[0].name, "max_sectors_kb", "cfq reads the merge bound too");
    assert_eq!(TUNABLES.len(), 11);
}

#[test]
fn settings_parse_with_units_and_reject_zeros() {
    let mut s = Settings::new();
    for kv in [
        "slice_sync=50",
        "slice_async=10ms",
        "slice_async_rq=4",
        "slice_idle=0",
        "fifo_expire_sync=1s",
        "fifo_expire_async=500",
        "quantum=1",
        "back_seek_max=0",
        "back_seek_penalty=3",
        "low_latency=0",
    ] {
        s.push_kv(kv).unwrap();
    }
    let p = CfqParams::from_settings(&mut s).unwrap();
    assert_eq!((p.slice_sync, p.slice_async, p.slice_idle), (ms(50), ms(10), Duration::ZERO));
    assert_eq!((p.fifo_expire_sync, p.fifo_expire_async), (ms(1000), ms(500)));
    assert_eq!((p.slice_async_rq, p.quantum, p.back_seek_max, p.back_seek_penalty), (4, 1, 0, 3));
    assert!(!p.low_latency);
    assert!(s.unused().is_empty());
    for bad in ["slice_sync=0", "slice_async=0", "quantum=0", "slice_async_rq=0", "back_seek_penalty=0"] {
        let mut s = Settings::new();
        s.push_kv(bad).unwrap();
        let e = CfqParams::from_settings(&mut s).unwrap_err().to_string();
        assert!(e.contains(bad.split('=').next().unwrap()), "{bad}: {e}");
    }
}

#[test]
fn build_reads_max_sectors_and_names_itself() {
    let mut s = Settings::new();
    s.push_kv("max_sectors_kb=64").unwrap();
    s.push_kv("slice_idle=2").unwrap();
    let sched = build(&mut s).unwrap();
    assert_eq!(sched.name(), "cfq");
    assert!(s.unused().is_empty());
}

// ---- round robin, slices, weights -------------------------------------------------------

/// Far-apart sector of the `i`-th request of issuer `c`: every issuer is seeky.
fn scattered(c: u32, i: u64) -> Sector {
    (i * 7919 % 61) * 1_000_000 + c as u64 * 4096
}

#[test]
fn queues_take_turns_in_time_slices() {
    let mut h = H::dflt();
    for i in 0..60 {
        h.read(Some(1), scattered(1, i));
    }
    for i in 0..60 {
        h.read(Some(2), scattered(2, i));
    }
    // 5 ms per request: a slice starts at its first completion and lasts 100 ms, so a
    // queue is served from that completion until one at or past 100 ms later: 21 requests
    let order: Vec<u32> = (0..120).map(|_| ctx_of(&h.serve(5 * MS))).collect();
    assert_eq!(runs(&order), vec![21, 21, 21, 21, 18, 18]);
    assert_eq!(order[0], 1, "the first busy queue goes first");
    assert_eq!(h.s.stats().idle_waits, 0, "seeky queues never idle");
    assert!(matches!(h.decide(), Decision::Idle));
}

#[test]
fn a_weight_scales_the_slice() {
    let mut h = H::dflt();
    h.s.set_weight(ContextId(1), 3);
    for i in 0..150 {
        h.read(Some(1), scattered(1, i));
        h.read(Some(2), scattered(2, i));
    }
    let order: Vec<u32> = (0..170).map(|_| ctx_of(&h.serve(5 * MS))).collect();
    assert_eq!(&runs(&order)[..4], &[61, 21, 61, 21], "300 ms against 100 ms");
}

#[test]
fn low_latency_shrinks_slices_to_the_target_latency() {
    for (low_latency, first_run) in [(true, 16), (false, 21)] {
        let mut h = H::new(CfqParams { low_latency, ..CfqParams::default() });
        for c in 1..=5 {
            for i in 0..40 {
                h.read(Some(c), scattered(c, i));
            }
        }
        let r = h.serve(5 * MS);
        // busy average (3 * 5 + 0 + 2) / 4 = 4: 400 ms > 300 ms, slice 100 * 300 / 400
        let want = if low_latency { 75 * MS } else { 100 * MS };
        assert_eq!(h.s.active.as_ref().unwrap().slice_end, Some(h.now + Duration(want)));
        let mut n = 1;
        while ctx_of(&h.serve(5 * MS)) == ctx_of(&r) {
            n += 1;
        }
        assert_eq!(n, first_run, "low_latency = {low_latency}");
    }
}

// ---- idling -----------------------------------------------------------------------------

#[test]
fn a_sequential_sync_queue_is_idled_for() {
    let mut h = H::dflt();
    h.read(Some(1), 0);
    let far = h.read(Some(2), 100_000_000);
    for k in 1..=5u64 {
        let r = h.serve(50 * US);
        assert_eq!(ctx_of(&r), 1);
        // the queue is empty and reader 2 is pending: wait for reader 1
        assert_eq!(h.decide(), Decision::WaitUntil(h.now + SLICE_IDLE));
        assert!(h.s.is_idling());
        let t = h.now.0 + 20 * US;
        h.at(t).read(Some(1), k * 8);
    }
    assert_eq!(h.s.stats().idle_hits, 5);
    let r = h.serve(50 * US);
    assert_eq!(ctx_of(&r), 1);
    // reader 1 stops: the wait runs out after slice_idle and reader 2 goes
    let until = h.now + SLICE_IDLE;
    assert_eq!(h.decide(), Decision::WaitUntil(until));
    let t = h.now.0 + 3 * MS;
    assert_eq!(h.at(t).decide(), Decision::WaitUntil(until), "another look before the timer");
    assert_eq!(h.at(until.0).dispatch().id, far);
    assert_eq!(h.s.stats().idle_timeouts, 1);
}

#[test]
fn nothing_else_pending_is_idle_not_a_wait_and_the_queue_keeps_its_slice() {
    let mut h = H::dflt();
    h.read(Some(1), 0);
    h.serve(MS);
    assert!(h.s.is_idling());
    assert_eq!(h.decide(), Decision::Idle, "no timer needed with nothing to switch to");
    let slices = h.s.stats().slices;
    h.at(30 * MS).read(Some(1), 8);
    assert_eq!(ctx_of(&h.serve(MS)), 1);
    assert_eq!(h.s.stats().slices, slices, "same slice");
}

#[test]
fn a_seeky_queue_is_not_idled_for() {
    let mut h = H::dflt();
    h.read(Some(1), 0);
    let other = h.read(Some(2), 500_000_000);
    h.serve(5 * MS);
    // two samples: statistics not valid yet, the idle window is still open
    h.at(h.now.0 + 20 * US).read(Some(1), 10_000_000);
    h.serve(5 * MS);
    assert!(h.s.is_idling());
    h.at(h.now.0 + 20 * US).read(Some(1), 20_000_000);
    assert!(!h.s.q(h.queue_of(1)).idle_window, "third sample: seeky, window closed");
    h.serve(5 * MS);
    assert!(!h.s.is_idling());
    assert_eq!(h.dispatch().id, other, "no wait");
}

#[test]
fn a_long_thinktime_closes_the_idle_window() {
    let mut h = H::dflt();
    h.read(Some(1), 0);
    h.serve(MS);
    for k in 1..=2u64 {
        h.at(h.now.0 + 15 * MS).read(Some(1), k * 8);
        h.serve(MS);
    }
    // samples 0, 15, 15 ms: decayed mean 10.7 ms > slice_idle
    let c = &h.s.ctxs[&Some(ContextId(1))];
    assert!(c.ttime.valid() && c.ttime.mean() > SLICE_IDLE.0, "{:?}", c.ttime);
    assert!(!h.s.q(h.queue_of(1)).idle_window);
    assert!(!h.s.is_idling());
    let other = h.read(Some(2), 800_000);
    assert_eq!(h.dispatch().id, other);
}

#[test]
fn no_idling_when_the_thinktime_exceeds_the_rest_of_the_slice() {
    let mut h = H::new(CfqParams { slice_idle: Duration(20 * MS), ..CfqParams::default() });
    h.read(Some(1), 0);
    h.read(Some(2), 900_000_000);
    h.serve(MS);
    for k in 1..=3u64 {
        h.at(h.now.0 + 10 * MS).read(Some(1), k * 8);
        h.serve(MS);
    }
    // mean thinktime about 8 ms (window open), 55 ms of the slice left: idle
    assert!(h.s.is_idling());
    h.at(h.now.0 + 10 * MS).read(Some(1), 32);
    let r = h.dispatch();
    h.complete(&r, 88 * MS);
    // 3 ms of the slice left, less than the thinktime: no wait
    assert!(!h.s.is_idling());
    assert_eq!(ctx_of(&h.dispatch()), 2);
}

#[test]
fn context_exit_ends_the_wait_and_the_slice() {
    let mut h = H::dflt();
    h.read(Some(1), 0);
    let other = h.read(Some(2), 700_000_000);
    h.serve(MS);
    assert!(matches!(h.decide(), Decision::WaitUntil(_)));
    h.s.context_exited(h.now + Duration(US), ContextId(1));
    h.s.check();
    assert_eq!(h.at(h.now.0 + US).dispatch().id, other);
    assert!(!h.s.ctxs.contains_key(&Some(ContextId(1))));
    assert_eq!(h.s.queues.len(), 3, "the exited issuer's empty queue is gone");
}

#[test]
fn slice_idle_zero_is_work_conserving() {
    let mut h = H::new(CfqParams { slice_idle: Duration::ZERO, ..CfqParams::default() });
    h.read(Some(1), 0);
    let other = h.read(Some(2), 700_000_000);
    h.serve(MS);
    assert_eq!(h.dispatch().id, other);
    assert_eq!(h.s.stats().idle_waits, 0);
}

// ---- within a queue ---------------------------------------------------------------------

#[test]
fn a_fifo_expired_request_goes_first_once_per_slice() {
    let run = |first_decision: u64| {
        let mut h = H::dflt();
        h.head = 10_000_000;
        let r0 = h.read(Some(1), 0);
        let r1 = h.read(Some(1), 20_000_000);
        h.at(first_decision);
        let rest: Vec<ReqId> = (1..=3).map(|k| h.read(Some(1), 10_000_000 + k * 16)).collect();
        let order: Vec<ReqId> = (0..5).map(|_| h.serve(MS).id).collect();
        (order, [r0, r1], rest, h.s.stats().fifo_expired)
    };
    // before fifo_expire_sync: sector order from the head; #0 is far behind (a wrap), last
    let (order, [r0, r1], rest, n) = run(100 * MS);
    assert_eq!(order, vec![rest[0], rest[1], rest[2], r1, r0]);
    assert_eq!(n, 0);
    // after it: the oldest (#0) first; #1 has expired too, but the FIFO is looked at once
    // per slice, so it waits for the sweep
    let (order, [r0, r1], rest, n) = run(200 * MS);
    assert_eq!(order, vec![r0, rest[0], rest[1], rest[2], r1]);
    assert_eq!(n, 1);
}

#[test]
fn back_seeks_are_penalised_and_bounded() {
    // head at 10_000; one request behind, one ahead: which goes first?
    let first_from = |p: CfqParams, head: Sector, behind: Sector, ahead: Sector| {
        let mut h = H::new(p);
        h.head = head;
        let b = h.read(Some(1), behind);
        let a = h.read(Some(1), ahead);
        let got = h.dispatch().id;
        assert!(got == a || got == b);
        if got == b {
            assert_eq!(h.s.stats().back_seeks, 1);
            "behind"
        } else {
            "ahead"
        }
    };
    let first = |p: CfqParams, behind: Sector, ahead: Sector| first_from(p, 10_000, behind, ahead);
    let d = CfqParams::default;
    assert_eq!(first(d(), 9_400, 11_500), "behind", "600 x 2 < 1500");
    assert_eq!(first(d(), 9_000, 11_500), "ahead", "1000 x 2 > 1500");
    assert_eq!(first(d(), 9_250, 10_500), "ahead", "750 x 2 = 1500 vs 500");
    assert_eq!(first(d(), 9_250, 11_500), "ahead", "a tie goes to the higher sector");
    assert_eq!(first(CfqParams { back_seek_penalty: 1, ..d() }, 9_000, 11_500), "behind");
    assert_eq!(first(CfqParams { back_seek_max: 0, ..d() }, 9_990, 11_500), "ahead", "no back seeks");
    // beyond back_seek_max (32768 sectors) a request behind is a wrap, taken only last
    assert_eq!(first(d(), 0, 90_000_000), "behind", "10_000 behind: within reach");
    assert_eq!(first_from(d(), 100_000, 0, 90_000_000), "ahead", "100_000 behind: a wrap");
    let mut h = H::dflt();
    h.head = 100_000;
    let low = h.read(Some(1), 0);
    let mid = h.read(Some(1), 50_000);
    assert_eq!(h.serve(MS).id, low, "both wrap: the lowest first, then forward");
    assert_eq!(h.serve(MS).id, mid);
}

#[test]
fn contiguous_requests_merge_within_a_queue_only() {
    let mut h = H::dflt();
    let a = h.read(Some(1), 100);
    assert_eq!(h.add(Some(1), 108, Dir::Read, true), Arrival::Merged { into: a });
    assert_eq!(h.add(Some(1), 92, Dir::Read, true), Arrival::Merged { into: a }, "front merge");
    assert_eq!(h.add(Some(2), 116, Dir::Read, true), Arrival::Queued, "another issuer's queue");
    let w = h.write(Some(1), 5000);
    assert_eq!(h.add(Some(2), 5008, Dir::Write, false), Arrival::Merged { into: w }, "one async queue");
    let r = h.dispatch();
    assert_eq!((r.id, r.sector, r.len), (a, 92, 24));
}

// ---- cooperation, merging, preemption ---------------------------------------------------

/// Two readers taking alternate 4 KiB chunks of one region (a thread pool on one file):
/// `serve` for `n` dispatches, each reader issuing its next chunk 20 us after its previous
/// one completes. Returns the dispatched sectors.
fn interleaved(h: &mut H, n: usize) -> Vec<Sector> {
    let mut next: HashMap<u32, Sector> = HashMap::from([(1, 0), (2, 8)]);
    h.read(Some(1), 0);
    h.read(Some(2), 8);
    let mut due: Vec<(u64, u32)> = Vec::new();
    let mut out = Vec::new();
    for _ in 0..n {
        let r = match h.decide() {
            Decision::Dispatch(r) => r,
            Decision::WaitUntil(_) => {
                let (t, c) = due.remove(0);
                h.at(t);
                let s = next[&c];
                h.read(Some(c), s);
                continue;
            }
            Decision::Idle => panic!("idle with readers"),
        };
        out.push(r.sector);
        // arrivals during the service come before its completion
        let end = h.now.0 + 50 * US;
        for (t, c) in std::mem::take(&mut due) {
            if t > end {
                due.push((t, c));
                continue;
            }
            h.at(t);
            let s = next[&c];
            h.read(Some(c), s);
        }
        let dt = end - h.now.0;
        h.complete(&r, dt);
        let c = ctx_of(&r);
        *next.get_mut(&c).unwrap() += 16;
        due.push((h.now.0 + 20 * US, c));
    }
    out
}

#[test]
fn a_close_cooperator_is_served_instead_of_idling_and_the_queues_merge() {
    let mut h = H::dflt();
    let sectors = interleaved(&mut h, 40);
    // 0 completes with reader 2's 8 at the head: switch, no idling; reader 1's next
    // request joins reader 2's queue, which then serves both in order
    assert_eq!(sectors, (0..40).map(|k| k * 8).collect::<Vec<_>>());
    assert_eq!(h.s.stats().coop_switches, 1);
    assert_eq!(h.s.stats().queue_merges, 1);
    assert_eq!(h.s.stats().idle_waits, 0);
    assert_eq!(h.queue_of(1), h.queue_of(2));
    assert!(h.s.q(h.queue_of(1)).coop);
}

#[test]
fn without_cooperation_interleaved_readers_idle_and_take_turns() {
    // the same readers, far apart: each idles for its own next request
    let mut h = H::dflt();
    h.read(Some(1), 0);
    h.read(Some(2), 400_000_000);
    let r = h.serve(50 * US);
    assert_eq!(ctx_of(&r), 1);
    assert!(h.s.is_idling());
    assert_eq!(h.s.stats().coop_switches, 0);
}

#[test]
fn a_merged_queue_that_turns_seeky_is_split() {
    let mut h = H::dflt();
    interleaved(&mut h, 10);
    let shared = h.queue_of(1);
    assert_eq!(h.queue_of(2), shared);
    // drain what is queued, then both issue far, scattered requests
    while let Decision::Dispatch(r) = h.decide() {
        h.complete(&r, 50 * US);
    }
    for i in 0..4 {
        h.at(h.now.0 + 20 * US).read(Some(1), scattered(1, i + 1));
        h.at(h.now.0 + 20 * US).read(Some(2), scattered(2, i + 1));
        h.serve(5 * MS);
        h.serve(5 * MS);
    }
    assert!(h.s.q(shared).seek.seeky());
    // the slice ends (100 ms after its first completion): the merged queue is marked
    h.at(h.now.0 + 200 * MS);
    h.read(Some(1), 12345);
    h.serve(MS);
    assert!(h.s.q(shared).split || h.queue_of(1) != shared);
    // each issuer's next arrival gets a queue of its own again (the last keeps the old)
    h.read(Some(2), 77_777_000);
    h.read(Some(1), 88_888_000);
    assert_ne!(h.queue_of(1), h.queue_of(2));
    assert_eq!(h.s.stats().queue_splits, 1);
    assert!(!h.s.q(h.queue_of(1)).coop && !h.s.q(h.queue_of(2)).coop);
}

#[test]
fn a_sync_arrival_preempts_the_async_queue() {
    let mut h = H::dflt();
    for i in 0..10 {
        h.write(Some(9), 1_000_000 + i * 64);
    }
    let w = h.dispatch();
    assert_eq!(w.dir, Dir::Write);
    let r = h.read(Some(1), 5);
    assert_eq!(h.s.stats().preemptions, 1);
    h.complete(&w, MS);
    assert_eq!(h.dispatch().id, r);
}

#[test]
fn a_close_arrival_preempts_an_idling_queue() {
    let mut h = H::dflt();
    h.read(Some(1), 0);
    h.serve(MS);
    for k in 1..=3u64 {
        h.at(h.now.0 + 20 * US).read(Some(1), k * 16);
        h.serve(MS);
    }
    // reader 1 skips 8 sectors each time: seek mean about 8; reader 2 asks for exactly
    // the next 8 sectors while reader 1 is being waited for
    assert!(h.s.is_idling());
    let r = h.read(Some(2), h.head);
    assert_eq!(h.s.stats().preemptions, 1);
    assert_eq!(h.dispatch().id, r);
    // a far request does not preempt
    let mut h = H::dflt();
    h.read(Some(1), 0);
    h.serve(MS);
    h.read(Some(2), 300_000_000);
    assert_eq!(h.s.stats().preemptions, 0);
    assert!(matches!(h.decide(), Decision::WaitUntil(_)));
}

#[test]
fn the_async_queue_yields_after_its_request_budget() {
    let mut h = H::dflt();
    for i in 0..40 {
        h.write(None, 1_000_000 + i * 64);
    }
    // queued before any decision: no preemption, the async queue is first in line
    h.read(Some(1), 5);
    let order: Vec<Dir> = (0..17).map(|_| h.serve(MS).dir).collect();
    assert_eq!(order.iter().filter(|d| **d == Dir::Write).count(), 16, "2 * slice_async_rq * 4");
    assert_eq!(order[16], Dir::Read);
}

#[test]
fn the_async_queue_slice_is_slice_async() {
    let mut h = H::dflt();
    for i in 0..40 {
        h.write(None, 1_000_000 + i * 64);
    }
    h.serve(MS);
    assert_eq!(h.s.active.as_ref().unwrap().slice_end, Some(h.now + SLICE_ASYNC));
}

// ---- no process information -------------------------------------------------------------

#[test]
fn without_contexts_one_queue_serves_everything_in_sector_order() {
    let mut h = H::dflt();
    h.head = 1000;
    // what two distant readers would have pending, all anonymous
    let ids: Vec<(ReqId, Sector)> =
        [5000, 900_000_000, 3000, 900_000_100, 0].iter().map(|&s| (h.read(None, s), s)).collect();
    let order: Vec<Sector> = (0..5).map(|_| h.serve(MS).sector).collect();
    // from 5000, sector 0 is 5008 behind (cost 10016, within back_seek_max) and nearer
    // than 900_000_000 ahead: a back seek, then on up
    assert_eq!(order, vec![3000, 5000, 0, 900_000_000, 900_000_100]);
    assert_eq!(h.s.stats().back_seeks, 1);
    assert_eq!(h.s.stats().slices, 1);
    assert_eq!(ids.len(), 5);
}

// ---- property test: random chains through a tiny device loop -----------------------------

#[derive(Clone, Debug)]
struct Chain {
    start: u64,
    /// Per request: thinktime before it (ns) and whether it jumps far.
    steps: Vec<(u64, bool)>,
    weight: u32,
    exits: bool,
}

fn chains(max_chains: usize) -> impl Strategy<Value = Vec<Chain>> {
    let step = (0u64..12 * MS, 0u8..10).prop_map(|(t, j)| (if j < 5 { t / 100 } else { t }, j == 0));
    proptest::collection::vec(
        // half the chains start in one small region: readers working side by side cooperate
        (
            prop_oneof![0u64..1 << 30, 0u64..2048],
            proptest::collection::vec(step, 1..30),
            1u32..4,
            any::<bool>(),
        )
            .prop_map(|(start, steps, weight, exits)| Chain {
                start: start & !7,
                steps,
                weight,
                exits,
            }),
        1..max_chains,
    )
}

/// Asynchronous writes: (arrival time, sector).
fn writes() -> impl Strategy<Value = Vec<(u64, u64)>> {
    proptest::collection::vec((0u64..300 * MS, 0u64..1 << 12), 0..30)
}

/// The device takes 50 us plus 1 ns per 50 sectors of seek, 10 ms at most.
fn service(head: Sector, to: Sector) -> u64 {
    (50 * US + head.abs_diff(to) / 50).min(10 * MS)
}

struct Outcome {
    order: Vec<(u64, Option<u32>)>,
    stats: CfqStats,
    /// `WaitUntil` answers (each with requests pending).
    waits: usize,
}

/// Drive CFQ with the chains (one synchronous request outstanding each) and open-loop
/// async writes on a depth-1 device. Checks: every request dispatched exactly once (a
/// merged one with its target), no wait ends later than `slice_idle` after the last
/// completion while requests are pending, no `Idle` while requests are pending, waits never
/// in the past, and the scheduler's invariants after every call.
fn run(chains: &[Chain], writes: &[(u64, u64)], with_ctx: bool, p: CfqParams) -> Outcome {
    let mut s = Cfq::new(p, 64);
    let ctx = |c: usize| with_ctx.then_some(ContextId(c as u32));
    if with_ctx {
        for (c, ch) in chains.iter().enumerate() {
            s.set_weight(ContextId(c as u32), ch.weight);
        }
    }
    let mut pos: Vec<u64> = chains.iter().map(|c| c.start).collect();
    let mut next_idx = vec![0usize; chains.len()];
    // future arrivals: (time, chain or usize::MAX for the write with that index)
    let mut arrivals: Vec<(u64, usize, usize)> =
        (0..chains.len()).map(|c| (c as u64 * 37 * US + chains[c].steps[0].0, c, 0)).collect();
    arrivals.extend(writes.iter().enumerate().map(|(i, w)| (w.0, usize::MAX, i)));
    let mut busy: Option<(u64, Request)> = None;
    let mut timer: Option<u64> = None;
    let (mut head, mut now, mut last_completion) = (0u64, 0u64, 0u64);
    let mut order = Vec::new();
    let mut waits = 0;
    let mut owner: HashMap<u64, usize> = HashMap::new();
    let mut queued: HashSet<u64> = HashSet::new();
    let mut merged_into: HashMap<u64, Vec<u64>> = HashMap::new();
    let mut done: HashSet<u64> = HashSet::new();
    let total = chains.iter().map(|c| c.steps.len()).sum::<usize>() + writes.len();
    let mut next_id = 1u64;
    let dev = |head| FixedView { head, base: 50 * US, capacity: 1 << 31 };
    for _ in 0..200_000 {
        if done.len() == total && busy.is_none() {
            break;
        }
        let ta = arrivals.iter().map(|a| a.0).min();
        let tc = busy.as_ref().map(|b| b.0);
        let t = [ta, tc, timer].into_iter().flatten().min().expect("stuck: requests left and no event");
        now = now.max(t);
        if tc == Some(t) {
            let (_, r) = busy.take().unwrap();
            head = r.end();
            last_completion = now;
            s.completed(Time(now), &r, &dev(head));
            for id in std::iter::once(r.id.0).chain(merged_into.remove(&r.id.0).unwrap_or_default()) {
                assert!(done.insert(id), "{id} completed twice");
                let c = owner[&id];
                if c == usize::MAX {
                    continue;
                }
                let k = next_idx[c];
                if k < chains[c].steps.len() {
                    arrivals.push((now + chains[c].steps[k].0, c, k));
                } else if chains[c].exits && with_ctx {
                    s.context_exited(Time(now), ContextId(c as u32));
                }
            }
        } else if ta == Some(t) {
            let i = arrivals.iter().position(|a| a.0 == t).unwrap();
            let (_, c, k) = arrivals.remove(i);
            let r = if c == usize::MAX {
                let (_, sector) = writes[k];
                Request {
                    id: ReqId(next_id),
                    sector: 1_000_000 + sector * 8,
                    len: 8,
                    dir: Dir::Write,
                    sync: false,
                    arrival: Time(now),
                    ctx: None,
                }
            } else {
                next_idx[c] += 1;
                let (_, jump) = chains[c].steps[k];
                pos[c] = if jump { ((pos[c] * 7919 + 104_729) % (1 << 31)) & !7 } else { pos[c] + 8 };
                Request {
                    id: ReqId(next_id),
                    sector: pos[c],
                    len: 8,
                    dir: Dir::Read,
                    sync: true,
                    arrival: Time(now),
                    ctx: ctx(c),
                }
            };
            owner.insert(next_id, c);
            next_id += 1;
            match s.arrive(Time(now), r, &dev(head)) {
                Arrival::Queued => {
                    queued.insert(r.id.0);
                }
                Arrival::Merged { into } => {
                    assert!(queued.contains(&into.0), "merged into {into:?}, which is not queued");
                    merged_into.entry(into.0).or_default().push(r.id.0);
                }
            }
        } else {
            timer = None;
        }
        s.check();
        if busy.is_none() {
            match s.decide(Time(now), &dev(head)) {
                Decision::Dispatch(r) => {
                    assert!(queued.remove(&r.id.0), "{:?} dispatched but not queued (twice?)", r.id);
                    order.push((r.id.0, r.ctx.map(|c| c.0)));
                    busy = Some((now + service(head, r.sector), r));
                    timer = None;
                }
                Decision::WaitUntil(u) => {
                    assert!(u.0 >= now, "a wait in the past");
                    assert!(s.pending() > 0, "a wait with nothing pending");
                    assert!(
                        u.0 - last_completion <= p.slice_idle.0,
                        "waits until {} ns after the last completion",
                        u.0 - last_completion
                    );
                    timer = Some(u.0.max(now + 1));
                    waits += 1;
                }
                Decision::Idle => assert_eq!(s.pending(), 0, "idle with requests pending"),
            }
            s.check();
        }
    }
    assert_eq!(done.len(), total, "every request served exactly once");
    assert!(queued.is_empty() && s.pending() == 0);
    Outcome { order, stats: s.stats().clone(), waits }
}

fn small_params(slice_ms: u64, idle_us: u64, low_latency: bool) -> CfqParams {
    CfqParams {
        slice_sync: Duration(slice_ms * MS),
        slice_async: Duration(slice_ms * MS / 2 + 1),
        slice_idle: Duration(idle_us * US),
        fifo_expire_sync: Duration(30 * MS),
        fifo_expire_async: Duration(60 * MS),
        low_latency,
        ..CfqParams::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn every_request_once_bounded_waits_never_idle_with_work(
        c in chains(6),
        w in writes(),
        with_ctx in any::<bool>(),
        slice_ms in 1u64..120,
        idle_us in 0u64..10_000,
        low_latency in any::<bool>(),
    ) {
        run(&c, &w, with_ctx, small_params(slice_ms, idle_us, low_latency));
    }

    #[test]
    fn defaults_hold_the_same_properties(c in chains(5), w in writes(), with_ctx in any::<bool>()) {
        run(&c, &w, with_ctx, CfqParams::default());
    }

    #[test]
    fn without_contexts_reads_never_wait(c in chains(6)) {
        // one anonymous queue: when it runs dry nothing else is pending, so CFQ never holds
        // the device idle with work queued — it is work-conserving
        let out = run(&c, &[], false, CfqParams::default());
        prop_assert_eq!(out.waits, 0);
        prop_assert_eq!(out.stats.coop_switches, 0);
        prop_assert_eq!(out.stats.preemptions, 0);
    }

    #[test]
    fn runs_are_deterministic(c in chains(5), w in writes()) {
        let a = run(&c, &w, true, CfqParams::default());
        let b = run(&c, &w, true, CfqParams::default());
        prop_assert_eq!(a.order, b.order);
        prop_assert_eq!(a.stats, b.stats);
    }
}

// ---- the scenario of 000 Section 3.3 ----------------------------------------------------

/// Two synchronous sequential readers in distant regions; each request arrives 20 us after
/// its previous one completes. The device takes 0.05 ms for a near request, 10 ms for a far
/// one. Returns the issuer (0 or 1) of every dispatch in `span`, with its dispatch time.
fn two_readers(with_ctx: bool, span: u64) -> Vec<(u64, u32)> {
    let mut s = Cfq::new(CfqParams::default(), 1024);
    let region = [0u64, 400_000_000];
    let mut pos = region;
    let mut next_at: [Option<u64>; 2] = [Some(0), Some(5 * US)];
    let (mut now, mut head, mut id) = (0u64, 0u64, 0u64);
    let mut busy: Option<(u64, Request)> = None;
    let mut timer: Option<u64> = None;
    let mut out = Vec::new();
    let dev = |head| FixedView { head, base: 50 * US, capacity: 1 << 31 };
    while now < span {
        let ta = next_at.iter().flatten().min().copied();
        let tc = busy.as_ref().map(|b| b.0);
        now = [ta, tc, timer].into_iter().flatten().min().expect("two readers never stop");
        if tc == Some(now) {
            let (_, r) = busy.take().unwrap();
            head = r.end();
            s.completed(Time(now), &r, &dev(head));
            let c = (r.sector >= region[1]) as usize;
            next_at[c] = Some(now + 20 * US);
        } else if ta == Some(now) {
            let c = if next_at[0] == Some(now) { 0 } else { 1 };
            next_at[c] = None;
            id += 1;
            let r = Request {
                id: ReqId(id),
                sector: pos[c],
                len: 8,
                dir: Dir::Read,
                sync: true,
                arrival: Time(now),
                ctx: with_ctx.then_some(ContextId(c as u32)),
            };
            pos[c] += 8;
            assert_eq!(s.arrive(Time(now), r, &dev(head)), Arrival::Queued);
        } else {
            timer = None;
        }
        if busy.is_none() {
            match s.decide(Time(now), &dev(head)) {
                Decision::Dispatch(r) => {
                    let far = r.sector.abs_diff(head) > 2048;
                    busy = Some((now + if far { 10 * MS } else { 50 * US }, r));
                    out.push((now, (r.sector >= region[1]) as u32));
                    timer = None;
                }
                Decision::WaitUntil(u) => timer = Some(u.0.max(now + 1)),
                Decision::Idle => assert_eq!(s.pending(), 0),
            }
        }
    }
    out
}

#[test]
fn two_distant_readers_get_long_runs_with_contexts_and_alternate_without() {
    let span = 2_000 * MS;
    let with = two_readers(true, span);
    let who: Vec<u32> = with.iter().map(|d| d.1).collect();
    let lens = runs(&who);
    // run durations: from a run's first dispatch to the next run's first dispatch
    let mut starts = vec![0usize];
    for l in &lens {
        starts.push(starts.last().unwrap() + l);
    }
    let durations: Vec<u64> =
        starts.windows(2).filter(|w| w[1] < with.len()).map(|w| with[w[1]].0 - with[w[0]].0).collect();
    assert!(durations.len() >= 10, "{} runs in 2 s", durations.len());
    for d in &durations {
        // a slice of 100 ms from the first completion, which follows a 10 ms seek
        assert!((100 * MS..=125 * MS).contains(d), "a run of {} ms", d / MS);
    }
    assert!(lens[..lens.len() - 1].iter().all(|&l| l > 1000), "{lens:?}");

    let without = two_readers(false, span);
    let who: Vec<u32> = without.iter().map(|d| d.1).collect();
    let lens = runs(&who);
    assert!(lens.iter().all(|&l| l == 1), "without contexts the readers alternate: {lens:?}");
    // the alternation pays a 10 ms seek per request: with contexts CFQ serves ~100x more
    assert!(with.len() > 50 * without.len(), "{} vs {} requests", with.len(), without.len());
}

//! `as` tests: each rule pinned with synthetic time, a tiny device loop (closed-loop
//! readers, open-loop writers) for scenarios, and a property test over random workloads.

use std::collections::{HashMap, HashSet};

use super::*;
use crate::testutil::FixedView;
use proptest::prelude::*;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn req(id: u64, sector: Sector, dir: Dir, ctx: Option<u32>, at: u64) -> Request {
    Request {
        id: ReqId(id),
        sector,
        len: 8,
        dir,
        sync: dir == Dir::Read,
        arrival: Time(at),
        ctx: ctx.map(ContextId),
    }
}

fn rd(id: u64, sector: Sector, ctx: Option<u32>, at: u64) -> Request {
    req(id, sector, Dir::Read, ctx, at)
}

fn wr(id: u64, sector: Sector, ctx: Option<u32>, at: u64) -> Request {
    req(id, sector, Dir::Write, ctx, at)
}

fn with(f: impl FnOnce(&mut AsParams)) -> As {
    let mut p = AsParams::default();
    f(&mut p);
    As::new(p, 1024)
}

fn sched() -> As {
    with(|_| {})
}

fn dev() -> FixedView {
    FixedView::linear(0)
}

fn arrive(s: &mut As, rq: Request) -> Arrival {
    let a = s.arrive(rq.arrival, rq, &dev());
    s.check();
    a
}

fn decide(s: &mut As, now: u64) -> Decision {
    let d = s.decide(Time(now), &dev());
    s.check();
    d
}

fn dispatch(s: &mut As, now: u64) -> Request {
    match decide(s, now) {
        Decision::Dispatch(r) => r,
        other => panic!("expected a dispatch at {now} ns, got {other:?}"),
    }
}

fn complete(s: &mut As, now: u64, rq: &Request) {
    s.completed(Time(now), rq, &dev());
    s.check();
}

/// Context `ctx` reads `n` sequential 8-sector requests from `start`, starting at `t`, each
/// served in `service` and followed `think` after its completion by the next one; nothing
/// else is queued meanwhile. Returns the time the last completed.
fn reader(
    s: &mut As,
    ctx: u32,
    ids: std::ops::Range<u64>,
    start: Sector,
    t: u64,
    think: u64,
    service: u64,
) -> u64 {
    let mut t = t;
    let n = ids.end - ids.start;
    for (k, id) in ids.enumerate() {
        arrive(s, rd(id, start + 8 * k as u64, Some(ctx), t));
        let r = dispatch(s, t);
        assert_eq!(r.id, ReqId(id));
        t += service;
        complete(s, t, &r);
        if (k as u64) + 1 < n {
            assert_eq!(decide(s, t), Decision::Idle, "nothing pending between a lone reader's requests");
            t += think;
        }
    }
    t
}

// ---- anticipation ----------------------------------------------------------------------

/// P (ctx 1) reads sectors 0..32 with 20 us think times, 1 ms service; Q's far read (ctx 2)
/// arrives during P's last request. Returns the time P's last request completed.
fn short_thinker_with_a_far_competitor(s: &mut As) -> u64 {
    let t = reader(s, 1, 1..4, 0, 0, 20 * US, MS);
    arrive(s, rd(4, 24, Some(1), t + 20 * US));
    let r = dispatch(s, t + 20 * US);
    arrive(s, rd(100, 100_000_000, Some(2), t + 500 * US));
    let t = t + 20 * US + MS;
    complete(s, t, &r);
    t
}

#[test]
fn waits_after_a_read_from_a_process_with_short_thinktime() {
    let mut s = sched();
    let t = short_thinker_with_a_far_competitor(&mut s);
    assert_eq!(decide(&mut s, t), Decision::WaitUntil(Time(t) + ANTIC_EXPIRE));
    assert!(s.is_waiting());
    assert_eq!(s.stats().waits, 1);
    // asked again mid-wait (a timer, an unrelated event): the same bound
    assert_eq!(decide(&mut s, t + MS), Decision::WaitUntil(Time(t) + ANTIC_EXPIRE));
}

#[test]
fn the_anticipated_process_request_is_dispatched_at_once() {
    let mut s = sched();
    let t = short_thinker_with_a_far_competitor(&mut s);
    assert!(matches!(decide(&mut s, t), Decision::WaitUntil(_)));
    arrive(&mut s, rd(5, 32, Some(1), t + 20 * US));
    assert!(!s.is_waiting());
    assert_eq!(dispatch(&mut s, t + 20 * US).id, ReqId(5), "P's request goes before Q's older one");
    assert_eq!(s.stats().own_hits, 1);
}

#[test]
fn a_far_request_from_the_anticipated_process_also_ends_the_wait() {
    let mut s = sched();
    let t = short_thinker_with_a_far_competitor(&mut s);
    assert!(matches!(decide(&mut s, t), Decision::WaitUntil(_)));
    // P jumps past Q: the wait ends and the elevator picks Q, the nearer one
    arrive(&mut s, rd(5, 900_000_000, Some(1), t + 20 * US));
    assert_eq!(dispatch(&mut s, t + 20 * US).id, ReqId(100));
    assert_eq!(s.stats().own_hits, 1);
}

#[test]
fn does_not_wait_when_the_mean_thinktime_is_long() {
    let mut s = sched();
    // 10 ms think times: longer than antic_expire (6 ms)
    let t = reader(&mut s, 1, 1..4, 0, 0, 10 * MS, MS);
    arrive(&mut s, rd(4, 24, Some(1), t + 10 * MS));
    let r = dispatch(&mut s, t + 10 * MS);
    arrive(&mut s, rd(100, 100_000_000, Some(2), t + 10 * MS + 500 * US));
    let t = t + 11 * MS;
    complete(&mut s, t, &r);
    assert_eq!(dispatch(&mut s, t).id, ReqId(100));
    assert_eq!(s.stats().waits, 0);
}

#[test]
fn a_close_request_from_another_process_breaks_anticipation() {
    let mut s = sched();
    let t = short_thinker_with_a_far_competitor(&mut s);
    let until = Time(t) + ANTIC_EXPIRE;
    assert_eq!(decide(&mut s, t), Decision::WaitUntil(until));
    // a far read from a third process does not break it ...
    arrive(&mut s, rd(200, 500_000_000, Some(3), t + 500 * US));
    assert_eq!(decide(&mut s, t + 500 * US), Decision::WaitUntil(until));
    // ... nor does a write near the head (writes are never "close")
    arrive(&mut s, wr(300, 40, Some(4), t + 700 * US));
    assert_eq!(decide(&mut s, t + 700 * US), Decision::WaitUntil(until));
    // a read 16 sectors past where P's last read ended does
    arrive(&mut s, rd(201, 48, Some(3), t + MS));
    assert_eq!(dispatch(&mut s, t + MS).id, ReqId(201));
    assert_eq!((s.stats().close_breaks, s.stats().timeouts), (1, 0));
}

#[test]
fn the_close_window_grows_with_the_time_waited() {
    let mut s = sched();
    let t = short_thinker_with_a_far_competitor(&mut s);
    assert!(matches!(decide(&mut s, t), Decision::WaitUntil(_)));
    // P's last read ended at 32: the window is [32 - delta/2, 32 + delta], delta = 8192 << ms
    arrive(&mut s, rd(201, 32 + 8192 * 2 + 8, Some(3), t + 500 * US));
    assert!(s.is_waiting(), "outside the 8192-sector window of the first millisecond");
    arrive(&mut s, rd(202, 32 + 8192 * 4, Some(3), t + 2 * MS + 100 * US));
    assert!(!s.is_waiting(), "inside the window after 2 ms (8192 << 2)");
    assert_eq!(s.stats().close_breaks, 1);
}

#[test]
fn the_wait_times_out_at_antic_expire_then_the_elevator_chooses() {
    let mut s = sched();
    // P reads at 10_000_000.. and ends at 10_000_032
    let t = reader(&mut s, 1, 1..5, 10_000_000, 0, 20 * US, MS);
    arrive(&mut s, rd(100, 10_000_032 + 3_000_000, Some(2), t)); // ahead, 3M sectors
    arrive(&mut s, rd(101, 10_000_032 - 1_000_000, Some(3), t)); // behind, 1M: costs 2M
    arrive(&mut s, rd(102, 1_000, Some(4), t)); // behind beyond MAXBACK
    assert_eq!(decide(&mut s, t), Decision::WaitUntil(Time(t) + ANTIC_EXPIRE));
    assert_eq!(decide(&mut s, t + 6 * MS - 1), Decision::WaitUntil(Time(t) + ANTIC_EXPIRE));
    let r = dispatch(&mut s, t + 6 * MS);
    assert_eq!(r.id, ReqId(101), "the short back seek wins over the longer forward one");
    assert_eq!((s.stats().timeouts, s.stats().back_seeks), (1, 1));
}

#[test]
fn an_exited_process_is_not_anticipated() {
    let mut s = sched();
    let t = reader(&mut s, 1, 1..4, 0, 0, 20 * US, MS);
    arrive(&mut s, rd(4, 24, Some(1), t + 20 * US));
    let r = dispatch(&mut s, t + 20 * US);
    arrive(&mut s, rd(100, 100_000_000, Some(2), t + 500 * US));
    s.context_exited(Time(t + 900 * US), ContextId(1));
    let t = t + 20 * US + MS;
    complete(&mut s, t, &r);
    assert_eq!(dispatch(&mut s, t).id, ReqId(100));
    assert_eq!(s.stats().waits, 0);
    assert!(!s.ctxs.contains_key(&Some(ContextId(1))), "forgotten once nothing refers to it");
}

#[test]
fn an_exit_during_the_wait_ends_it() {
    let mut s = sched();
    let t = short_thinker_with_a_far_competitor(&mut s);
    assert!(matches!(decide(&mut s, t), Decision::WaitUntil(_)));
    s.context_exited(Time(t + MS), ContextId(1));
    assert_eq!(dispatch(&mut s, t + MS).id, ReqId(100));
    assert_eq!(s.stats().other_breaks, 1);
}

#[test]
fn writes_are_never_anticipated() {
    let mut s = sched();
    arrive(&mut s, wr(1, 0, Some(1), 0));
    let r = dispatch(&mut s, 0);
    arrive(&mut s, wr(2, 100_000_000, Some(2), 10 * US));
    complete(&mut s, MS, &r);
    assert_eq!(dispatch(&mut s, MS).id, ReqId(2));
    assert_eq!(s.stats().waits, 0);
}

#[test]
fn antic_expire_zero_never_waits() {
    let mut s = with(|p| p.antic_expire = Duration::ZERO);
    let t = short_thinker_with_a_far_competitor(&mut s);
    assert_eq!(dispatch(&mut s, t).id, ReqId(100));
    assert_eq!(s.stats().waits, 0);
}

#[test]
fn without_context_information_as_never_waits_usefully() {
    // Two anonymous readers: each one's request is "the same process's" for the other.
    let mut s = sched();
    arrive(&mut s, rd(1, 0, None, 0));
    let a = dispatch(&mut s, 0);
    arrive(&mut s, rd(2, 100_000_000, None, 10 * US));
    complete(&mut s, MS, &a);
    let b = dispatch(&mut s, MS);
    assert_eq!(b.id, ReqId(2), "the far request goes at once");
    complete(&mut s, 11 * MS, &b);
    // nothing pending: idle, not a wait
    assert_eq!(decide(&mut s, 11 * MS), Decision::Idle);
    arrive(&mut s, rd(3, 8, None, 12 * MS));
    assert_eq!(dispatch(&mut s, 12 * MS).id, ReqId(3));
    assert_eq!(s.stats().waits, 0);
}

#[test]
fn a_merge_from_the_anticipated_process_ends_the_wait() {
    let mut s = sched();
    let t = short_thinker_with_a_far_competitor(&mut s);
    // a close request already queued when P's read completes: no wait at all
    arrive(&mut s, rd(101, 32 + 8, Some(2), t));
    assert_eq!(dispatch(&mut s, t).id, ReqId(101));
    assert_eq!(s.stats().waits, 0);
    let mut s = sched();
    let t = short_thinker_with_a_far_competitor(&mut s);
    assert!(matches!(decide(&mut s, t), Decision::WaitUntil(_)));
    // P's next read is contiguous with Q's queued one: it merges, and the wait ends
    assert_eq!(
        arrive(&mut s, rd(5, 100_000_008, Some(1), t + 20 * US)),
        Arrival::Merged { into: ReqId(100) }
    );
    assert!(!s.is_waiting());
    assert_eq!(dispatch(&mut s, t + 20 * US).id, ReqId(100));
    assert_eq!(s.stats().own_hits, 1);
}

// ---- history -----------------------------------------------------------------------------

#[test]
fn history_is_a_decayed_fixed_point_mean() {
    let mut c = Ctx::new();
    let mut n = NewContexts::default();
    update_thinktime(&mut c, &mut n, Duration::from_micros(20));
    assert_eq!((c.ttime_samples, c.ttime_mean), (32, Duration(20_004)), "first sample: weight 1/8");
    assert_eq!(n.ttime_mean, Duration(2_500), "new contexts: 1/8 of the first thinktime");
    for _ in 0..50 {
        update_thinktime(&mut c, &mut n, Duration::from_micros(20));
    }
    // Linux's integer decay settles at 249/256, not 1: the mean reads ~3% high
    assert_eq!(c.ttime_samples, 249);
    assert!((20_000..21_000).contains(&c.ttime_mean.0), "{c:?}");
    assert_eq!(n.ttime_mean, Duration(2_500), "only first samples feed the new-context mean");
    // seeks: an odd far jump is clamped to 4 x mean + slack
    let mut c = Ctx::new();
    for _ in 0..100 {
        update_seekdist(&mut c, &mut n, 8);
    }
    update_seekdist(&mut c, &mut n, 1 << 40);
    assert!(c.seek_mean < 20_000, "one jump moves the mean by at most (4 x 8 + 128Ki) / 8: {}", c.seek_mean);
}

#[test]
fn thinktime_is_capped_and_is_zero_with_requests_outstanding() {
    let mut s = sched();
    let t = reader(&mut s, 1, 1..3, 0, 0, 1000 * MS, MS);
    let c = &s.ctxs[&Some(ContextId(1))];
    assert_eq!(c.ttime_mean, MAX_THINKTIME + Duration(4), "a 1 s pause counts as 20 ms");
    // two reads queued back to back: the second one's thinktime is 0
    arrive(&mut s, rd(10, 1_000, Some(2), t));
    arrive(&mut s, rd(11, 2_000, Some(2), t));
    let c = &s.ctxs[&Some(ContextId(2))];
    assert_eq!((c.ttime_samples, c.ttime_mean), (32, Duration(4)));
}

#[test]
fn est_time_reports_the_new_context_estimates() {
    let mut s = sched();
    assert_eq!(
        s.est_time(),
        EstTime { exit_prob_percent: 0, new_thinktime: Duration::ZERO, new_seek_distance: 0 }
    );
    reader(&mut s, 1, 1..3, 0, 0, 20 * US, MS);
    let e = s.est_time();
    assert_eq!((e.new_thinktime, e.new_seek_distance), (Duration(2_500), 0));
    // a wait for a context without history that times out raises the exit probability
    let mut s = sched();
    arrive(&mut s, rd(1, 0, Some(1), 0));
    let r = dispatch(&mut s, 0);
    arrive(&mut s, rd(2, 100_000_000, Some(2), 10 * US));
    complete(&mut s, MS, &r);
    assert!(
        matches!(decide(&mut s, MS), Decision::WaitUntil(_)),
        "no history, new contexts think fast: wait"
    );
    assert_eq!(dispatch(&mut s, 7 * MS).id, ReqId(2));
    assert_eq!(s.est_time().exit_prob_percent, 12, "1/8 of the way to 100%");
}

// ---- elevator, FIFO, batches, merging -----------------------------------------------------

#[test]
fn the_elevator_takes_short_back_seeks_at_a_penalty() {
    let mut s = with(|p| p.antic_expire = Duration::ZERO);
    let next = |last: Sector, sectors: &[Sector]| -> Sector {
        let mut s2 = with(|p| p.antic_expire = Duration::ZERO);
        for (i, &x) in sectors.iter().enumerate() {
            arrive(&mut s2, rd(i as u64 + 1, x, None, 0));
        }
        s2.last_sector[0] = last;
        let id = s2.next_rq(Dir::Read).unwrap();
        s2.sorted[0].get(id).unwrap().sector
    };
    assert_eq!(next(10_000, &[11_000, 9_600]), 9_600, "behind by 400 (costs 800) beats ahead by 1000");
    assert_eq!(next(10_000, &[11_000, 9_400]), 11_000, "behind by 600 costs 1200");
    assert_eq!(next(10_000, &[10_800, 9_600]), 10_800, "a tie goes forward");
    assert_eq!(next(5_000_000, &[4_500_000, 100]), 4_500_000, "nothing ahead: the back seek");
    assert_eq!(next(5_000_000, &[3_000_000, 100]), 100, "beyond MAXBACK: restart at the lowest sector");
    assert_eq!(next(5_000_000, &[3_000_000, 6_000_000]), 6_000_000);
    // and through decide: a batch continues from where the last read ended
    for (id, x) in [(1, 50_000), (2, 60_000), (3, 49_000), (4, 10)] {
        arrive(&mut s, rd(id, x, None, 0));
    }
    let order: Vec<u64> = (0..4).map(|_| dispatch(&mut s, MS).id.0).collect();
    // a new batch starts at the FIFO head (#1, lowest id among equal expiries), then a
    // short back seek (#3: 1008 behind, costs 2016 < 9992 ahead), then forward, then wrap
    assert_eq!(order, vec![1, 3, 2, 4]);
}

#[test]
fn an_expired_read_is_served_despite_anticipation() {
    // P streams sequentially (1 ms service, 20 us think); Q's far read arrives at 10 us.
    let mut s = sched();
    arrive(&mut s, rd(1, 0, Some(1), 0));
    let mut r = dispatch(&mut s, 0);
    arrive(&mut s, rd(1000, 500_000_000, Some(2), 10 * US));
    let mut t = 0;
    let mut id = 2;
    let q_at = loop {
        t += MS;
        complete(&mut s, t, &r);
        match decide(&mut s, t) {
            Decision::Dispatch(x) => {
                assert_eq!(x.id, ReqId(1000));
                break t;
            }
            Decision::WaitUntil(_) => {}
            d => panic!("{d:?}"),
        }
        t += 20 * US;
        arrive(&mut s, rd(id, 8 * (id - 1), Some(1), t));
        r = match decide(&mut s, t) {
            Decision::Dispatch(x) if x.id == ReqId(1000) => break t,
            Decision::Dispatch(x) => x,
            d => panic!("{d:?}"),
        };
        id += 1;
        assert!(t < 300 * MS, "Q starved");
    };
    assert!((125 * MS + 10 * US..127 * MS).contains(&q_at), "Q served at {} us", q_at / US);
    assert_eq!(s.stats().fifo_expired, 1);
    assert!(s.stats().own_hits > 100);
}

#[test]
fn the_fifo_is_looked_at_once_per_expire_interval() {
    let mut s = with(|p| (p.antic_expire, p.read_expire) = (Duration::ZERO, Duration::from_millis(10)));
    arrive(&mut s, rd(1, 0, None, 0));
    assert_eq!(dispatch(&mut s, 0).id, ReqId(1)); // a new batch: its FIFO was looked at now
    arrive(&mut s, rd(2, 1_000_000_000, None, 5 * MS)); // expires at 15 ms
    for k in 0..5 {
        arrive(&mut s, rd(10 + k, 16 + 16 * k, None, 5 * MS)); // spaced: no merges
    }
    assert_eq!(dispatch(&mut s, 9 * MS).id, ReqId(10), "9 ms: too early to look");
    assert_eq!(dispatch(&mut s, 10 * MS + 500 * US).id, ReqId(11), "10.5 ms: looked, nothing expired");
    assert_eq!(dispatch(&mut s, 16 * MS).id, ReqId(12), "16 ms: #2 expired, but the next look is at 20.5 ms");
    assert_eq!(dispatch(&mut s, 20 * MS + 500 * US).id, ReqId(2));
    assert_eq!(s.stats().fifo_expired, 1);
}

#[test]
fn merges_back_and_front_keep_the_earlier_expiry_and_the_size_bound() {
    let mut s = As::new(AsParams::default(), 32);
    arrive(&mut s, rd(1, 100, Some(1), MS));
    assert_eq!(arrive(&mut s, rd(2, 108, Some(2), MS)), Arrival::Merged { into: ReqId(1) });
    assert_eq!(arrive(&mut s, rd(3, 92, Some(3), 0)), Arrival::Merged { into: ReqId(1) });
    assert_eq!(arrive(&mut s, wr(4, 116, Some(1), 0)), Arrival::Queued, "a write does not join a read");
    assert_eq!(
        arrive(&mut s, Request { len: 16, ..rd(5, 116, Some(1), 0) }),
        Arrival::Queued,
        "32-sector bound"
    );
    let q = *s.sorted[0].get(ReqId(1)).unwrap();
    assert_eq!((q.sector, q.len, q.arrival, q.ctx), (92, 24, Time(0), Some(ContextId(1))));
    assert!(s.fifo[0].contains(&(Time(0) + READ_EXPIRE, ReqId(1))), "re-keyed to the earlier arrival");
    assert_eq!(s.pending(), 3);
}

#[test]
fn a_read_batch_gives_way_to_writes_after_read_batch_expire_and_write_batches_tune_their_length() {
    // P reads sequentially (1 ms each, 20 us think) for ever; 300 writes wait from 10 us on.
    let chains = vec![
        Chain::closed(Some(1), Dir::Read, (0..3000).map(|k| 8 * k).collect(), 0, vec![20 * US; 3000]),
        Chain::open(
            Some(9),
            Dir::Write,
            (0..300).map(|k| 500_000_000 + 16 * k).collect(),
            vec![10 * US; 300],
        ),
    ];
    let mut l = Loop::new(sched(), chains, |_, _| MS);
    l.run();
    let log = &l.log;
    let runs = runs_of(log.iter().map(|e| e.2.dir));
    // first read batch: from the first read's completion (1 ms) for 500 ms
    let first_write = log.iter().find(|e| e.2.dir == Dir::Write).unwrap().0;
    assert!((501 * MS..503 * MS).contains(&first_write), "first write at {} us", first_write / US);
    assert_eq!(runs[0].0, Dir::Read);
    // initial write_batch_count = 125 ms / 10 ms = 12
    assert_eq!(runs[1], (Dir::Write, 12));
    // 12 writes took 12 ms + 1 ms < 125 / 3 ms, all used: the count doubles, and so on
    assert_eq!(runs[3], (Dir::Write, 24));
    assert_eq!(runs[5], (Dir::Write, 48));
    // 48 writes + 1 read = 49 ms, more than a third of 125 ms: +1 from now on
    assert_eq!(runs[7], (Dir::Write, 49));
    assert_eq!(runs[9], (Dir::Write, 50));
    // each later read batch lasts ~500 ms from its first completion
    let starts: Vec<u64> = switch_times(log);
    for w in starts.windows(2).skip(1).step_by(2).take(3) {
        let read_batch = w[1] - w[0];
        assert!((500 * MS..505 * MS).contains(&read_batch), "read batch of {} us", read_batch / US);
    }
    assert!(l.s.stats().write_batches >= 5);
}

/// (direction, length) of each run of equal directions.
fn runs_of(dirs: impl Iterator<Item = Dir>) -> Vec<(Dir, usize)> {
    let mut v: Vec<(Dir, usize)> = Vec::new();
    for d in dirs {
        match v.last_mut() {
            Some((x, n)) if *x == d => *n += 1,
            _ => v.push((d, 1)),
        }
    }
    v
}

/// Times at which the dispatched direction changes.
fn switch_times(log: &[(u64, usize, Request)]) -> Vec<u64> {
    log.windows(2).filter(|w| w[0].2.dir != w[1].2.dir).map(|w| w[1].0).collect()
}

#[test]
fn a_batch_switch_waits_for_the_previous_batch_to_drain() {
    // A driver with two requests in the device.
    let mut s = with(|p| p.read_batch_expire = Duration::from_millis(2));
    arrive(&mut s, rd(1, 0, Some(1), 0));
    let p0 = dispatch(&mut s, 0);
    arrive(&mut s, wr(9, 100_000_000, Some(9), 0));
    arrive(&mut s, rd(2, 100, Some(2), 0));
    let p1 = dispatch(&mut s, 0);
    assert_eq!(p1.id, ReqId(2), "ctx 1's read is still in the device: no anticipation");
    complete(&mut s, MS, &p0); // the read batch's clock: 1 ms + 2 ms
    arrive(&mut s, rd(3, 200, Some(3), MS));
    let p2 = dispatch(&mut s, MS);
    complete(&mut s, 4 * MS, &p1);
    arrive(&mut s, rd(4, 300, Some(4), 4 * MS));
    // the read batch expired and writes wait: switch, but #3 is still in the device
    assert_eq!(decide(&mut s, 4 * MS), Decision::WaitUntil(Time::MAX));
    assert_eq!(decide(&mut s, 4 * MS + 500 * US), Decision::WaitUntil(Time::MAX));
    complete(&mut s, 5 * MS, &p2);
    assert_eq!(dispatch(&mut s, 5 * MS).id, ReqId(9));
}

// ---- tunables and construction -----------------------------------------------------------

#[test]
fn tunables_parse_and_build_names_the_scheduler_as() {
    let mut set = Settings::new();
    assert_eq!(AsParams::from_settings(&mut set).unwrap(), AsParams::default());
    for t in &TUNABLES[1..] {
        let Unit::Time { default, .. } = t.unit else { panic!("{} is a time", t.name) };
        assert!(default > Duration::ZERO, "{}", t.name);
    }
    set.push_kv("antic_expire=0").unwrap();
    set.push_kv("read_expire=50ms").unwrap();
    set.push_kv("write_batch_expire=1s").unwrap();
    let p = AsParams::from_settings(&mut set).unwrap();
    assert_eq!(
        (p.antic_expire, p.read_expire, p.write_batch_expire),
        (Duration::ZERO, Duration::from_millis(50), Duration::from_secs(1))
    );
    assert_eq!(As::new(p, 1024).write_batch_count(), 100);
    let s = build(&mut set).unwrap();
    assert_eq!(s.name(), "as");
    assert!(set.unused().is_empty());
    set.push_kv("read_batch_expire=soon").unwrap();
    let e = build(&mut set).err().unwrap().to_string();
    assert!(e.contains("read_batch_expire"), "{e}");
}

// ---- a tiny device loop ------------------------------------------------------------------

/// One issuer's requests: closed loop (the next one `gaps[k]` after request k completes)
/// or open loop (request k at `gaps[k]` absolute).
#[derive(Clone, Debug)]
struct Chain {
    ctx: Option<u32>,
    dir: Dir,
    sectors: Vec<Sector>,
    closed: bool,
    start: u64,
    gaps: Vec<u64>,
    /// Tell the scheduler the context exited once its last request completes.
    exit: bool,
}

impl Chain {
    fn closed(ctx: Option<u32>, dir: Dir, sectors: Vec<Sector>, start: u64, gaps: Vec<u64>) -> Self {
        Chain { ctx, dir, sectors, closed: true, start, gaps, exit: false }
    }
    fn open(ctx: Option<u32>, dir: Dir, sectors: Vec<Sector>, at: Vec<u64>) -> Self {
        Chain { ctx, dir, sectors, closed: false, start: at[0], gaps: at, exit: false }
    }
}

/// A device serving one request at a time in `service(head, rq)` ns, driven the way the
/// simulator drives a scheduler. Checks on every event: each request dispatched once, no
/// wait while nothing is pending, no wait past `antic_expire` after the last completion, no
/// idling while requests are pending, and the scheduler's own invariants.
struct Loop {
    s: As,
    chains: Vec<Chain>,
    service: fn(Sector, &Request) -> u64,
    now: u64,
    head: Sector,
    busy: Option<(u64, Request)>,
    timer: Option<u64>,
    /// The next arrival of each chain: (time, chain).
    arrivals: Vec<(u64, usize)>,
    next_k: Vec<usize>,
    done: Vec<usize>,
    owner: HashMap<ReqId, usize>,
    riders: HashMap<ReqId, Vec<ReqId>>,
    seen: HashSet<ReqId>,
    /// Dispatches: (time, chain, request).
    log: Vec<(u64, usize, Request)>,
    last_completion: u64,
    next_id: u64,
    merged: usize,
}

impl Loop {
    fn new(s: As, chains: Vec<Chain>, service: fn(Sector, &Request) -> u64) -> Self {
        let arrivals = chains
            .iter()
            .enumerate()
            .filter(|c| !c.1.sectors.is_empty())
            .map(|(i, c)| (c.start, i))
            .collect();
        let n = chains.len();
        Loop {
            s,
            chains,
            service,
            now: 0,
            head: 0,
            busy: None,
            timer: None,
            arrivals,
            next_k: vec![0; n],
            done: vec![0; n],
            owner: HashMap::new(),
            riders: HashMap::new(),
            seen: HashSet::new(),
            log: Vec::new(),
            last_completion: 0,
            next_id: 1,
            merged: 0,
        }
    }

    fn view(&self) -> FixedView {
        FixedView { head: self.head, ..FixedView::linear(0) }
    }

    fn run(&mut self) {
        let total: usize = self.chains.iter().map(|c| c.sectors.len()).sum();
        let mut steps = 0u64;
        while self.step() {
            steps += 1;
            assert!(steps < 20_000_000, "does not terminate");
        }
        assert_eq!(self.s.pending(), 0, "requests left behind");
        assert_eq!(self.seen.len() + self.merged, total, "every request dispatched or merged exactly once");
        assert_eq!(self.done.iter().sum::<usize>(), total, "every request completed");
    }

    fn step(&mut self) -> bool {
        let ta = self.arrivals.iter().map(|a| a.0).min();
        let tc = self.busy.as_ref().map(|b| b.0);
        let Some(t) = [tc, ta, self.timer].into_iter().flatten().min() else { return false };
        self.now = self.now.max(t);
        if tc == Some(t) {
            self.complete();
        } else if ta == Some(t) {
            let i = self.arrivals.iter().position(|a| a.0 == t).unwrap();
            let (_, c) = self.arrivals.remove(i);
            self.arrive(c);
        } else {
            self.timer = None;
        }
        if self.busy.is_none() {
            self.decide();
        }
        self.s.check();
        true
    }

    fn arrive(&mut self, c: usize) {
        let ch = &self.chains[c];
        let k = self.next_k[c];
        self.next_k[c] += 1;
        let id = ReqId(self.next_id);
        self.next_id += 1;
        let rq = Request {
            id,
            sector: ch.sectors[k],
            len: 8,
            dir: ch.dir,
            sync: ch.dir == Dir::Read,
            arrival: Time(self.now),
            ctx: ch.ctx.map(ContextId),
        };
        if !ch.closed && k + 1 < ch.sectors.len() {
            self.arrivals.push((ch.gaps[k + 1].max(self.now), c));
        }
        self.owner.insert(id, c);
        let view = self.view();
        if let Arrival::Merged { into } = self.s.arrive(Time(self.now), rq, &view) {
            assert!(
                self.owner.contains_key(&into) && !self.seen.contains(&into),
                "merged into unqueued {into:?}"
            );
            self.riders.entry(into).or_default().push(id);
            self.merged += 1;
        }
    }

    fn complete(&mut self) {
        let (_, r) = self.busy.take().unwrap();
        self.head = r.end();
        self.last_completion = self.now;
        let view = self.view();
        self.s.completed(Time(self.now), &r, &view);
        let mut ids = vec![r.id];
        ids.extend(self.riders.remove(&r.id).unwrap_or_default());
        for id in ids {
            let c = self.owner.remove(&id).unwrap();
            self.done[c] += 1;
            let ch = &self.chains[c];
            let n = ch.sectors.len();
            if ch.closed && self.done[c] < n {
                let gap = ch.gaps[self.done[c] - 1];
                self.arrivals.push((self.now + gap, c));
            }
            if self.done[c] == n && ch.exit {
                if let Some(x) = ch.ctx {
                    self.s.context_exited(Time(self.now), ContextId(x));
                }
            }
        }
    }

    fn decide(&mut self) {
        let view = self.view();
        let now = self.now;
        match self.s.decide(Time(now), &view) {
            Decision::Dispatch(r) => {
                assert!(self.seen.insert(r.id), "{:?} dispatched twice", r.id);
                let c = *self.owner.get(&r.id).unwrap_or_else(|| panic!("{:?} was never queued", r.id));
                self.busy = Some((now + (self.service)(self.head, &r).max(1), r));
                self.timer = None;
                self.log.push((now, c, r));
            }
            Decision::WaitUntil(u) => {
                assert!(self.s.pending() > 0, "a wait with nothing pending");
                assert!(u.0 > now, "a wait that has already ended: {u} at {now}");
                let bound = self.last_completion + self.s.params().antic_expire.0;
                assert!(u.0 <= bound, "waits until {u}, past the last completion + antic_expire ({bound})");
                self.timer = Some(u.0);
            }
            Decision::Idle => {
                assert_eq!(self.s.pending(), 0, "idle with requests pending");
                self.timer = None;
            }
        }
    }

    /// How often consecutive dispatches come from different chains.
    fn switches(&self) -> usize {
        self.log.windows(2).filter(|w| w[0].1 != w[1].1).count()
    }
}

/// 50 us for a nearby request, 10 ms for a far one.
fn near_or_far(head: Sector, r: &Request) -> u64 {
    if head.abs_diff(r.sector) < 1_000_000 {
        50 * US
    } else {
        10 * MS
    }
}

fn two_distant_sequential_readers(ctx: [Option<u32>; 2], n: u64) -> Loop {
    let chains = (0..2)
        .map(|i| {
            let base = i as u64 * 100_000_000;
            Chain::closed(
                ctx[i],
                Dir::Read,
                (0..n).map(|k| base + 8 * k).collect(),
                i as u64 * 37 * US,
                vec![20 * US; n as usize],
            )
        })
        .collect();
    let mut l = Loop::new(sched(), chains, near_or_far);
    l.run();
    l
}

#[test]
fn with_process_information_as_serves_long_runs_without_it_alternates() {
    let n = 10_000;
    let with_ctx = two_distant_sequential_readers([Some(1), Some(2)], n);
    let without = two_distant_sequential_readers([None, None], n);
    let (a, b) = (with_ctx.switches(), without.switches());
    assert!(a <= 20, "with contexts: {a} switches");
    assert!(b as u64 >= n, "without contexts: {b} switches");
    assert!(with_ctx.s.stats().own_hits > n, "{:?}", with_ctx.s.stats());
    assert_eq!(without.s.stats().waits, 0);
    // and it shows in the makespan: ~1.4 s against ~200 s of seeking
    let (ta, tb) = (with_ctx.now, without.now);
    assert!(ta * 20 < tb, "makespan {} ms with contexts, {} ms without", ta / MS, tb / MS);
}

// ---- property test -----------------------------------------------------------------------

fn gap() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0), Just(20 * US), 0..2 * MS, 0..15 * MS]
}

/// A sector in one of four regions 256 Mi sectors apart: chains often work near each other
/// (close requests, short back seeks) and sometimes far apart.
fn place() -> impl Strategy<Value = Sector> {
    (0u64..4, 0u64..200_000).prop_map(|(region, off)| (region << 28) + off * 8)
}

fn chains() -> impl Strategy<Value = Vec<Chain>> {
    let chain = (
        prop_oneof![Just(None), (0u32..4).prop_map(Some)],
        prop::bool::weighted(0.25),
        prop::bool::weighted(0.25),
        place(),
        prop::collection::vec((gap(), prop::bool::weighted(0.1), place()), 1..30),
        0..5 * MS,
        any::<bool>(),
    )
        .prop_map(|(ctx, write, open, base, steps, start, exit)| {
            let mut pos = base;
            let mut sectors = Vec::new();
            let mut gaps = Vec::new();
            let mut at = start;
            for (g, jump, to) in steps {
                sectors.push(pos);
                pos = if jump { to } else { pos + 8 };
                at += g;
                gaps.push(if open { at } else { g });
            }
            let dir = if write { Dir::Write } else { Dir::Read };
            Chain { ctx, dir, sectors, closed: !open, start, gaps, exit }
        });
    prop::collection::vec(chain, 1..6)
}

fn params() -> impl Strategy<Value = AsParams> {
    let ms = |lo: u64, hi: u64| (lo..hi).prop_map(|x| Duration(x * US));
    (
        prop_oneof![Just(0u64), Just(1), Just(6), Just(10)],
        ms(1, 200_000),
        ms(1, 400_000),
        ms(1, 600_000),
        ms(1, 200_000),
    )
        .prop_map(|(antic, re, we, rb, wb)| AsParams {
            antic_expire: Duration::from_millis(antic),
            read_expire: re,
            write_expire: we,
            read_batch_expire: rb,
            write_batch_expire: wb,
        })
}

fn seek_service(head: Sector, r: &Request) -> u64 {
    50 * US + head.abs_diff(r.sector).min(10 * MS)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn every_request_once_waits_bounded_never_idle_with_work(c in chains(), p in params()) {
        let mut l = Loop::new(As::new(p, 64), c, seek_service);
        l.run();
    }

    #[test]
    fn default_params_on_random_workloads(c in chains()) {
        let mut l = Loop::new(sched(), c, seek_service);
        l.run();
    }
}

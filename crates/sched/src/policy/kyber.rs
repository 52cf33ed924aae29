//! `kyber`: Linux's kyber (block/kyber-iosched.c) — a scheduler for fast devices that
//! keeps latency targets by limiting how many requests of each kind are at the device.
//!
//! Requests fall in domains: reads, writes (and, in Linux, discards and others, which
//! headway's requests never are). Each domain is served first come, first served from its
//! own queue, and a request needs one of its domain's tokens to be dispatched; it gives the
//! token back when it completes. A domain has at most 256 (reads), 128 (writes) tokens.
//!
//! Dispatch: the current domain goes on while it has served fewer than its batch (16 reads,
//! 8 writes) since it became current, has a request and a free token; otherwise the next
//! domain round robin that has both becomes current (`batching` restarts).
//!
//! Adaptation (a timer 100 ms after a completion, run here at the first event past it):
//! each completion records its total latency (arrival to completion) and its device
//! latency (dispatch to completion) in 8 buckets of a quarter of its domain's target
//! (`read_lat_nsec` 2 ms, `write_lat_nsec` 10 ms): bucket `i` holds latencies up to
//! `(i + 1) / 4` of the target, the last one everything from 7/4 on. When the timer runs, a
//! domain's percentiles are read once it has 500 samples or its first sample is a second
//! old (then its buckets restart). If any domain's p90 total latency is at or past its
//! target (bucket 4 or more), the device is congested; then every domain with a device
//! p99 (this window's, or the one remembered from the last window without congestion) has
//! its depth scaled by `(p99 bucket + 1) / 4` — down for domains meeting their target,
//! up for those missing it — and without congestion only the domains missing their target
//! get more. Depths stay between 1 and the domain's maximum.
//!
//! Merging: a new request joins one of the last 8 queued of its domain that it continues
//! (back) or precedes (front), within the size bound (Linux `blk_bio_list_merge`).
//!
//! Tunables (Linux sysfs names and defaults): `read_lat_nsec` (2 ms), `write_lat_nsec`
//! (10 ms).

use std::collections::{HashMap, VecDeque};

use super::{back_mergeable, front_mergeable, join, Policy};
use crate::device::DeviceView;
use crate::params::{ParamError, Settings, TimeUnit, Tunable, Unit};
use crate::request::{Dir, ReqId, Request};
use crate::time::{Duration, Time};

/// Target latency of reads (Linux `read_lat_nsec` = 2 ms).
pub const READ_LAT: Duration = Duration::from_millis(2);
/// Target latency of writes (Linux `write_lat_nsec` = 10 ms).
pub const WRITE_LAT: Duration = Duration::from_millis(10);

/// Domains headway's requests fall in (Linux also has discard and other).
const DOMAINS: usize = 2;
/// Tokens per domain at most (Linux `kyber_depth`).
pub const MAX_DEPTH: [u32; DOMAINS] = [256, 128];
/// Dispatches per turn of a domain (Linux `kyber_batch_size`).
pub const BATCH: [u32; DOMAINS] = [16, 8];
const BUCKETS: usize = 8;
/// A bucket is a quarter of the target.
const SHIFT: u32 = 2;
/// Buckets below the target.
const GOOD_BUCKETS: usize = 4;
/// The adaptation runs this long after a completion.
pub const TIMER: Duration = Duration::from_millis(100);
/// Percentiles are read from this many samples, or ...
const SAMPLES: u32 = 500;
/// ... once the first sample is this old.
const SAMPLE_WINDOW: Duration = Duration::from_secs(1);

pub mod knob {
    use super::*;

    pub const READ_LAT_NSEC: Tunable = Tunable {
        name: "read_lat_nsec",
        unit: Unit::Time { unit: TimeUnit::Ns, min: Duration::ZERO, default: Duration::from_nanos(2000000) },
        doc: "target latency of reads; kyber narrows the device's queue to keep it",
    };
    pub const WRITE_LAT_NSEC: Tunable = Tunable {
        name: "write_lat_nsec",
        unit: Unit::Time { unit: TimeUnit::Ns, min: Duration::ZERO, default: Duration::from_nanos(10000000) },
        doc: "target latency of writes",
    };
}

pub const TUNABLES: &[Tunable] = &[knob::READ_LAT_NSEC, knob::WRITE_LAT_NSEC];

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct KyberParams {
    pub read_lat: Duration,
    pub write_lat: Duration,
}

impl Default for KyberParams {
    fn default() -> Self {
        KyberParams { read_lat: READ_LAT, write_lat: WRITE_LAT }
    }
}

impl KyberParams {
    pub fn from_settings(s: &mut Settings) -> Result<Self, ParamError> {
        Ok(KyberParams { read_lat: s.time(&knob::READ_LAT_NSEC)?, write_lat: s.time(&knob::WRITE_LAT_NSEC)? })
    }
}

/// Latency kinds recorded per domain.
const TOTAL: usize = 0;
const IO: usize = 1;

pub struct Kyber {
    params: KyberParams,
    queue: [VecDeque<ReqId>; DOMAINS],
    reqs: HashMap<ReqId, Request>,
    /// Tokens per domain now, and those held by requests at the device.
    depth: [u32; DOMAINS],
    in_flight: [u32; DOMAINS],
    /// When each request at the device was dispatched.
    dispatched: HashMap<ReqId, Time>,
    cur: usize,
    batching: u32,
    /// Per domain and latency kind: samples per bucket.
    buckets: [[[u32; BUCKETS]; 2]; DOMAINS],
    /// Per domain: when its percentiles may be read with fewer than 500 samples.
    timeout: [Option<Time>; DOMAINS],
    /// Per domain: the device p99 bucket remembered from a window without congestion.
    p99: [Option<usize>; DOMAINS],
    /// When the adaptation runs next.
    timer: Option<Time>,
    /// Adaptations run, and depth changes made (for tests and stats).
    pub adaptations: u64,
}

fn domain(dir: Dir) -> usize {
    match dir {
        Dir::Read => 0,
        Dir::Write => 1,
    }
}

/// Checked merges look this far back in a domain's queue (Linux `blk_bio_list_merge`).
const MERGE_LOOKBACK: usize = 8;

impl Kyber {
    pub fn new(params: KyberParams) -> Self {
        Kyber {
            params,
            queue: Default::default(),
            reqs: HashMap::new(),
            depth: MAX_DEPTH,
            in_flight: [0; DOMAINS],
            dispatched: HashMap::new(),
            cur: 0,
            batching: 0,
            buckets: [[[0; BUCKETS]; 2]; DOMAINS],
            timeout: [None; DOMAINS],
            p99: [None; DOMAINS],
            timer: None,
            adaptations: 0,
        }
    }

    /// Tokens of `d` now (tests, stats).
    pub fn depth(&self, d: Dir) -> u32 {
        self.depth[domain(d)]
    }

    fn target(&self, d: usize) -> Duration {
        if d == 0 {
            self.params.read_lat
        } else {
            self.params.write_lat
        }
    }

    fn ready(&self, d: usize) -> bool {
        !self.queue[d].is_empty() && self.in_flight[d] < self.depth[d]
    }

    /// The domain the next dispatch comes from, and whether it continues the batch.
    fn plan(&self) -> Option<(usize, bool)> {
        if self.batching < BATCH[self.cur] && self.ready(self.cur) {
            return Some((self.cur, true));
        }
        (1..=DOMAINS).map(|i| (self.cur + i) % DOMAINS).find(|&d| self.ready(d)).map(|d| (d, false))
    }

    fn record(&mut self, d: usize, kind: usize, latency: Duration) {
        let divisor = (self.target(d).0 >> SHIFT).max(1);
        let bucket = ((latency.0.saturating_sub(1)) / divisor).min(BUCKETS as u64 - 1) as usize;
        self.buckets[d][kind][bucket] += 1;
    }

    /// The bucket holding percentile `pct` of `d`'s `kind` latencies at `now`, if there are
    /// enough samples (then they restart); Linux's `calculate_percentile`.
    fn percentile(&mut self, d: usize, kind: usize, pct: u32, now: Time) -> Option<usize> {
        let b = &mut self.buckets[d][kind];
        let samples: u32 = b.iter().sum();
        if samples == 0 {
            return None;
        }
        let timeout = *self.timeout[d].get_or_insert(now + SAMPLE_WINDOW);
        if samples < SAMPLES && timeout > now {
            return None;
        }
        self.timeout[d] = None;
        let mut want = (samples * pct).div_ceil(100);
        let mut bucket = 0;
        while bucket < BUCKETS - 1 {
            if b[bucket] >= want {
                break;
            }
            want -= b[bucket];
            bucket += 1;
        }
        *b = [0; BUCKETS];
        Some(bucket)
    }

    /// Run the adaptation if its time has come (Linux `kyber_timer_fn`, at `t`).
    fn tick(&mut self, now: Time) {
        let Some(t) = self.timer.filter(|&t| t <= now) else { return };
        self.timer = None;
        self.adaptations += 1;
        let mut bad = false;
        for d in 0..DOMAINS {
            if self.percentile(d, TOTAL, 90, t).is_some_and(|p| p >= GOOD_BUCKETS) {
                bad = true;
            }
        }
        for (d, &max) in MAX_DEPTH.iter().enumerate() {
            let mut p99 = self.percentile(d, IO, 99, t);
            if bad {
                p99 = p99.or(self.p99[d]);
                self.p99[d] = None;
            } else if p99.is_some() {
                self.p99[d] = p99;
            }
            let Some(p) = p99 else { continue };
            if bad || p >= GOOD_BUCKETS {
                let depth = (self.depth[d] * (p as u32 + 1)) >> SHIFT;
                self.depth[d] = depth.clamp(1, max);
            }
        }
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let queued: usize = self.queue.iter().map(|q| q.len()).sum();
        assert_eq!(queued, self.reqs.len());
        for (d, q) in self.queue.iter().enumerate() {
            for id in q {
                assert_eq!(domain(self.reqs[id].dir), d);
            }
            assert!((1..=MAX_DEPTH[d]).contains(&self.depth[d]));
        }
        assert_eq!(self.in_flight.iter().sum::<u32>() as usize, self.dispatched.len());
    }
}

impl Policy for Kyber {
    fn name(&self) -> &'static str {
        "kyber"
    }

    fn merge(&mut self, now: Time, rq: &Request, max_sectors: u32) -> Option<ReqId> {
        self.tick(now);
        let recent = self.queue[domain(rq.dir)].iter().rev().take(MERGE_LOOKBACK);
        let id = recent.copied().find(|id| {
            let q = &self.reqs[id];
            back_mergeable(q, rq, max_sectors) || front_mergeable(q, rq, max_sectors)
        })?;
        join(self.reqs.get_mut(&id).expect("queued"), rq, max_sectors);
        Some(id)
    }

    fn add(&mut self, now: Time, rq: Request) {
        self.tick(now);
        self.queue[domain(rq.dir)].push_back(rq.id);
        self.reqs.insert(rq.id, rq);
    }

    fn select(&mut self, now: Time, _dev: &dyn DeviceView) -> Option<ReqId> {
        self.tick(now);
        let (d, _) = self.plan()?;
        self.queue[d].front().copied()
    }

    fn take(&mut self, now: Time, id: ReqId) -> Request {
        self.tick(now);
        let rq = self.reqs.remove(&id).unwrap_or_else(|| panic!("kyber: {id:?} is not queued"));
        let d = domain(rq.dir);
        let continues = match self.plan() {
            Some((pd, cont)) if pd == d && self.queue[d].front() == Some(&id) => cont,
            // another request than kyber's choice: its domain becomes current
            _ => d == self.cur && self.batching < BATCH[d],
        };
        let at = self.queue[d].iter().position(|&q| q == id).expect("queued in its domain");
        self.queue[d].remove(at);
        if continues {
            self.batching += 1;
        } else {
            self.cur = d;
            self.batching = 1;
        }
        self.in_flight[d] += 1;
        self.dispatched.insert(id, now);
        rq
    }

    fn get(&self, id: ReqId) -> Option<&Request> {
        self.reqs.get(&id)
    }

    fn urgent(&self, _now: Time) -> bool {
        false
    }

    fn completed(&mut self, now: Time, rq: &Request) {
        self.tick(now);
        let Some(at) = self.dispatched.remove(&rq.id) else { return };
        let d = domain(rq.dir);
        self.in_flight[d] -= 1;
        self.record(d, TOTAL, Duration(now.0.saturating_sub(rq.arrival.0)));
        self.record(d, IO, Duration(now.0.saturating_sub(at.0)));
        let t = now + TIMER;
        self.timer = Some(self.timer.map_or(t, |x| x.min(t)));
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

    fn us(n: u64) -> Time {
        Time(n * 1_000)
    }

    fn wr(id: u64, sector: u64) -> Request {
        Request { dir: Dir::Write, sync: false, ..rq(id, sector, 8) }
    }

    fn next(k: &mut Kyber, now: Time) -> Option<Request> {
        let id = k.select(now, &FixedView::linear(0))?;
        let r = k.take(now, id);
        k.check();
        Some(r)
    }

    #[test]
    fn defaults_match_linux_and_settings_parse() {
        assert_eq!(KyberParams::from_settings(&mut Settings::new()).unwrap(), KyberParams::default());
        assert_eq!(KyberParams::default().read_lat, Duration::from_millis(2));
        assert_eq!(KyberParams::default().write_lat, Duration::from_millis(10));
        let mut s = Settings::new();
        for kv in ["read_lat_nsec=500000", "write_lat_nsec=3ms"] {
            s.push_kv(kv).unwrap();
        }
        let p = KyberParams::from_settings(&mut s).unwrap();
        assert_eq!((p.read_lat, p.write_lat), (Duration::from_micros(500), Duration::from_millis(3)));
    }

    #[test]
    fn domains_take_turns_in_batches_each_first_come_first_served() {
        let mut k = Kyber::new(KyberParams::default());
        // reads at descending sectors: served in arrival order all the same
        for i in 0..20 {
            k.add(Time(0), rq(i, 10_000 - i * 8, 8));
        }
        for i in 0..10 {
            k.add(Time(0), wr(100 + i, i * 64));
        }
        let order: Vec<u64> = std::iter::from_fn(|| next(&mut k, Time(0))).map(|r| r.id.0).collect();
        let reads = |a: u64, b: u64| (a..b).collect::<Vec<_>>();
        let writes = |a: u64, b: u64| (100 + a..100 + b).collect::<Vec<_>>();
        let want: Vec<u64> = [reads(0, 16), writes(0, 8), reads(16, 20), writes(8, 10)].concat();
        assert_eq!(order, want);
    }

    /// `n` reads completed with total latency `total` and device latency `io`, from `at`.
    fn complete_reads(k: &mut Kyber, n: u64, at: Time, total: Duration, io: Duration, first_id: u64) {
        for i in 0..n {
            let arrival = Time(at.0 + i);
            k.add(arrival, Request { arrival, ..rq(first_id + i, i * 8, 8) });
            let t = arrival + (total - io);
            let r = next(k, t).expect("a read");
            k.completed(t + io, &r);
        }
    }

    #[test]
    fn congestion_narrows_a_domain_meeting_its_target() {
        let mut k = Kyber::new(KyberParams::default());
        // 600 reads that waited long in the queue (total 8 ms: bucket 7, the device is
        // congested) but were quick at the device (0.4 ms: bucket 0)
        complete_reads(&mut k, 600, Time(0), Duration::from_millis(8), Duration::from_micros(400), 0);
        assert_eq!(k.depth(Dir::Read), 256);
        // the timer, 100 ms after the last completion, runs at the next event
        k.add(us(200_000), rq(10_000, 0, 8));
        assert_eq!(k.adaptations, 1);
        // 256 * (0 + 1) / 4
        assert_eq!(k.depth(Dir::Read), 64);
        assert_eq!(k.depth(Dir::Write), 128, "no write samples: unchanged");
        k.check();
    }

    #[test]
    fn a_domain_missing_its_target_widens_again_without_congestion() {
        let mut k = Kyber::new(KyberParams::default());
        complete_reads(&mut k, 600, Time(0), Duration::from_millis(8), Duration::from_micros(400), 0);
        k.add(us(200_000), rq(10_000, 0, 8));
        assert_eq!(k.depth(Dir::Read), 64);
        next(&mut k, us(200_000)).unwrap();
        // one window of 600 reads: 92% at 1 ms, 8% at 3 ms, all of it at the device: p90
        // on target (bucket 1), p99 past it (bucket 5)
        for i in 0..600u64 {
            let lat = if i % 25 < 2 { Duration::from_millis(3) } else { Duration::from_millis(1) };
            complete_reads(&mut k, 1, us(300_000 + i), lat, lat, 20_000 + i);
        }
        k.add(us(900_000), rq(40_000, 0, 8));
        // no congestion; the domain misses its target: 64 * (5 + 1) / 4
        assert_eq!(k.depth(Dir::Read), 96);
        k.check();
    }

    #[test]
    fn few_samples_count_once_their_window_is_over() {
        let mut k = Kyber::new(KyberParams::default());
        complete_reads(&mut k, 100, Time(0), Duration::from_millis(8), Duration::from_micros(400), 0);
        k.add(us(200_000), rq(10_000, 0, 8));
        assert_eq!((k.adaptations, k.depth(Dir::Read)), (1, 256), "100 samples within the window: not yet");
        // past the window the total latencies count (congested), but the device latencies
        // need a window of their own: Linux keeps one window per domain for both, and
        // reading the first restarts it
        let r = next(&mut k, us(200_000)).unwrap();
        k.completed(us(1_400_000), &r);
        k.add(us(1_600_000), rq(10_001, 0, 8));
        assert_eq!((k.adaptations, k.depth(Dir::Read)), (2, 256));
        assert_eq!(k.buckets[0][TOTAL], [0; BUCKETS], "the totals were read");
        assert_eq!(k.buckets[0][IO].iter().sum::<u32>(), 101, "the device latencies were not");
    }

    #[test]
    fn a_narrow_domain_holds_its_requests_but_not_the_other_domain() {
        let mut k = Kyber::new(KyberParams::default());
        k.depth = [1, MAX_DEPTH[1]];
        for i in 0..3 {
            k.add(Time(0), rq(i, i * 64, 8));
        }
        k.add(Time(0), wr(10, 0));
        let first = next(&mut k, Time(0)).unwrap();
        assert_eq!(first.id.0, 0);
        assert_eq!(next(&mut k, Time(0)).map(|r| r.id.0), Some(10), "reads are out of tokens: writes go");
        assert_eq!(next(&mut k, Time(0)), None);
        k.completed(Time(1), &first);
        assert_eq!(next(&mut k, Time(1)).map(|r| r.id.0), Some(1));
    }

    #[test]
    fn merges_join_a_recent_request_of_the_same_domain() {
        let mut k = Kyber::new(KyberParams::default());
        k.add(Time(0), rq(1, 0, 8));
        assert_eq!(k.merge(Time(0), &wr(2, 8), 1024), None, "a write does not join a read");
        assert_eq!(k.merge(Time(0), &rq(3, 8, 8), 1024), Some(ReqId(1)));
        assert_eq!(k.get(ReqId(1)).map(|r| (r.sector, r.len)), Some((0, 16)));
        k.check();
    }

    proptest! {
        #[test]
        fn every_request_is_taken_once(ops in ops(300, 1024, true, 400, 100), salt in any::<u64>()) {
            let mut d = Driver::new(Kyber::new(KyberParams::default()), salt, Kyber::check);
            for op in &ops {
                d.step(op);
            }
            d.drain();
        }
    }
}

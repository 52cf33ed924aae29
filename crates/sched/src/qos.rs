//! QoS classes and the token-bucket tags of pClock and HTBS (seeds/004 Section III, Figure 2).
//!
//! An *application* (a [`ContextId`]; requests without one form one anonymous application)
//! has a class [`Qos`]: a rate `rho`, a delay `delta` and a burst `sigma`. Every arriving
//! request gets two tags:
//!
//! ```text
//! update_num_tokens(i):  tokens_i += (t - last_i) * rho_i;  tokens_i = min(tokens_i, sigma_i)
//! compute_tags(i, r):    if tokens_i < 1 { S = max(MaxS_i, t); MaxS_i = S + 1/rho_i } else { S = t }
//!                        F = S + delta_i;  tokens_i -= 1
//! ```
//!
//! A request within the guarantee starts now and must finish within `delta`; one over it
//! starts where it would have, had the application kept to its rate (`MaxS` advances `1/rho`
//! per excess request). pClock dispatches the smallest finish tag; HTBS adds the active
//! application rule (see [`crate::framework::htbs`]).
//!
//! ## Units, and what the paper leaves open
//! - **Rates in bytes or in requests.** 004 counts tokens in requests. A class may give its
//!   rate in IOPS ([`Rate::Iops`]: one token per request, exactly Figure 2) or in bytes per
//!   second ([`Rate::Bytes`]: a request costs its length in bytes, so `1/rho` becomes
//!   `bytes/rho`). Tokens are kept as exact integers (token-nanoseconds), never floats.
//! - **Burst** `sigma` is in requests: the bucket holds `sigma` requests' worth of tokens
//!   (for a byte rate, `sigma` times the arriving request's length). `sigma = 1` is "bursts
//!   disabled" (004 Section IV): one request may start at once after an idle spell of
//!   `1/rho`, nothing more; `sigma = 0` spaces every request `1/rho` apart.
//! - **Tokens may go negative**, as in Figure 2 (`tokens -= 1` even when out of tokens): an
//!   application that ran ahead of its rate pays the excess back before it is "within its
//!   guarantee" again.
//! - **Monotone tags.** With requests of one size, Figure 2 already gives non-decreasing
//!   start tags per application (while tokens >= 1, `MaxS <= t`). With mixed sizes a short
//!   request could start before an earlier long one; headway takes `S = max(S, S_prev)` so
//!   an application's tags never go backwards (its own requests stay in arrival order).
//! - An application's first request finds a full bucket (`sigma` tokens), as a new pClock
//!   flow does.
//!
//! ## Default class
//! Applications never given a class ([`DEFAULT_QOS`]): 100 IOPS (about what one 7200 rpm
//! disk does on random requests), 100 ms delay (004 Section IV's delay), burst 1. Among
//! default-class applications the tags are plain fair queuing.

use std::collections::BTreeMap;

use crate::request::{ContextId, Request};
use crate::time::{Duration, Time};

/// A guaranteed rate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Rate {
    /// Bytes per second (> 0): a request costs its length.
    Bytes(u64),
    /// Requests per second (> 0): a request costs one token (004 Figure 2).
    Iops(u64),
}

impl Rate {
    /// Tokens per second.
    pub fn per_sec(self) -> u64 {
        match self {
            Rate::Bytes(b) => b,
            Rate::Iops(n) => n,
        }
    }
    /// What `rq` costs in this rate's tokens.
    pub fn cost(self, rq: &Request) -> u64 {
        match self {
            Rate::Bytes(_) => rq.bytes(),
            Rate::Iops(_) => 1,
        }
    }
    /// The unit, as reports print it.
    pub fn unit(self) -> &'static str {
        match self {
            Rate::Bytes(_) => "bytes/s",
            Rate::Iops(_) => "iops",
        }
    }
}

/// An application's QoS class: rate `rho`, delay `delta`, burst `sigma` (004 Section III).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Qos {
    pub rate: Rate,
    /// Finish tag minus start tag: the latency bound of a request within the rate.
    pub delay: Duration,
    /// Bucket size, requests (1 = no bursts).
    pub burst: u32,
}

/// Default rate of the default class: 100 IOPS.
pub const DEFAULT_RATE: Rate = Rate::Iops(100);
/// Default delay: 100 ms (004 Section IV).
pub const DEFAULT_DELAY: Duration = Duration::from_millis(100);
/// Default burst: 1 request (bursts disabled, 004 Section IV).
pub const DEFAULT_BURST: u32 = 1;
/// The class of an application never given one.
pub const DEFAULT_QOS: Qos = Qos { rate: DEFAULT_RATE, delay: DEFAULT_DELAY, burst: DEFAULT_BURST };

impl Default for Qos {
    fn default() -> Self {
        DEFAULT_QOS
    }
}

impl Qos {
    /// A class is usable when its rate is positive.
    pub fn check(&self) -> Result<(), String> {
        if self.rate.per_sec() == 0 {
            return Err("the rate must be > 0".into());
        }
        Ok(())
    }
}

/// A request's tags.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tags {
    pub start: Time,
    pub finish: Time,
}

const NS: i128 = 1_000_000_000;

/// One application's token bucket (Figure 2's per-application state).
#[derive(Clone, Debug)]
pub struct Bucket {
    pub qos: Qos,
    /// Tokens x 10^9 (token-nanoseconds per second), exact; may be negative.
    credit: i128,
    /// When the tokens were last brought up to date.
    last: Option<Time>,
    /// `MaxS`.
    max_s: Time,
    /// The last start tag given (tags never go backwards).
    last_s: Time,
}

impl Bucket {
    pub fn new(qos: Qos) -> Self {
        Bucket { qos, credit: 0, last: None, max_s: Time::ZERO, last_s: Time::ZERO }
    }

    /// `MaxS`: where the next excess request starts at the earliest.
    pub fn max_s(&self) -> Time {
        self.max_s
    }

    /// Tokens now (after the last tagging), in units of the rate (requests or bytes).
    pub fn tokens(&self) -> f64 {
        self.credit as f64 / NS as f64
    }

    /// `update_num_tokens` then `compute_tags` for `rq` arriving at `now` (Figure 2).
    pub fn tag(&mut self, now: Time, rq: &Request) -> Tags {
        let rho = self.qos.rate.per_sec().max(1) as i128;
        let cost = self.qos.rate.cost(rq) as i128;
        let cap = self.qos.burst as i128 * cost * NS;
        match self.last {
            // a new application starts with a full bucket
            None => self.credit = cap,
            Some(last) => {
                let dt = now.saturating_since(last).0 as i128;
                self.credit = self.credit.saturating_add(dt.saturating_mul(rho)).min(cap);
            }
        }
        self.last = Some(now.max(self.last.unwrap_or(now)));
        let mut start = if self.credit < cost * NS {
            let s = self.max_s.max(now);
            // 1/rho per request: cost / rho seconds, in ns (rounded up so MaxS always moves)
            let step = (cost * NS + rho - 1) / rho;
            self.max_s = s + Duration(step.min(u64::MAX as i128) as u64);
            s
        } else {
            now
        };
        start = start.max(self.last_s);
        self.last_s = start;
        self.credit -= cost * NS;
        Tags { start, finish: start + self.qos.delay }
    }
}

/// Every application's bucket, by context; classes set before or after its first request.
#[derive(Clone, Debug, Default)]
pub struct Tagger {
    buckets: BTreeMap<Option<ContextId>, Bucket>,
}

impl Tagger {
    pub fn new() -> Self {
        Self::default()
    }

    /// Give `ctx` its class (keeps its bucket state if it already has one).
    pub fn set_qos(&mut self, ctx: ContextId, qos: Qos) {
        self.buckets.entry(Some(ctx)).and_modify(|b| b.qos = qos).or_insert_with(|| Bucket::new(qos));
    }

    /// The class of `ctx` (the default class unless set).
    pub fn qos(&self, ctx: Option<ContextId>) -> Qos {
        self.buckets.get(&ctx).map_or(DEFAULT_QOS, |b| b.qos)
    }

    /// Tags for `rq` arriving at `now`, from its application's bucket.
    pub fn tag(&mut self, now: Time, rq: &Request) -> Tags {
        self.buckets.entry(rq.ctx).or_insert_with(|| Bucket::new(DEFAULT_QOS)).tag(now, rq)
    }

    /// An application has gone: forget its bucket state but keep its class.
    pub fn forget(&mut self, ctx: ContextId) {
        if let Some(b) = self.buckets.get_mut(&Some(ctx)) {
            *b = Bucket::new(b.qos);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::testutil::rq;

    const MS: u64 = 1_000_000;

    fn q(rate: Rate, burst: u32) -> Qos {
        Qos { rate, delay: Duration::from_millis(100), burst }
    }

    #[test]
    fn within_rate_requests_start_at_arrival() {
        let mut b = Bucket::new(q(Rate::Iops(100), 1));
        for i in 0..10u64 {
            let t = Time(i * 10 * MS);
            assert_eq!(b.tag(t, &rq(i, 0, 8)), Tags { start: t, finish: t + Duration(100 * MS) });
        }
    }

    #[test]
    fn excess_requests_are_spaced_one_over_rho() {
        // 100 IOPS, no burst: five requests at once start 0, 10, 20, 30, 40 ms.
        let mut b = Bucket::new(q(Rate::Iops(100), 1));
        let starts: Vec<u64> = (0..5).map(|i| b.tag(Time(0), &rq(i, 0, 8)).start.0 / MS).collect();
        assert_eq!(starts, vec![0, 0, 10, 20, 30]);
        // a burst of 3 lets three through at once
        let mut b = Bucket::new(q(Rate::Iops(100), 3));
        let starts: Vec<u64> = (0..5).map(|i| b.tag(Time(0), &rq(i, 0, 8)).start.0 / MS).collect();
        assert_eq!(starts, vec![0, 0, 0, 0, 10]);
    }

    #[test]
    fn byte_rates_charge_by_length() {
        // 4096 B per 10 ms = 409600 B/s; 8 KiB requests cost 20 ms each.
        let mut b = Bucket::new(q(Rate::Bytes(409_600), 1));
        let starts: Vec<u64> = (0..4).map(|i| b.tag(Time(0), &rq(i, 0, 16)).start.0 / MS).collect();
        assert_eq!(starts, vec![0, 0, 20, 40]);
    }

    proptest! {
        /// Tags are monotone per application: start and finish tags never decrease in
        /// arrival order, whatever the class, sizes and spacing; a start tag is never
        /// before its arrival.
        #[test]
        fn tags_are_monotone_per_application(
            iops in any::<bool>(),
            rate in 1u64..5_000_000,
            burst in 0u32..8,
            delay in 0u64..200,
            reqs in prop::collection::vec((0u64..30 * MS, 1u32..=256, 0u32..3), 1..200),
        ) {
            let rate = if iops { Rate::Iops(rate % 5_000 + 1) } else { Rate::Bytes(rate) };
            let mut t = Tagger::new();
            for c in 0..3 {
                t.set_qos(ContextId(c), Qos { rate, delay: Duration(delay * MS), burst });
            }
            let mut now = Time(0);
            let mut last: BTreeMap<u32, Tags> = BTreeMap::new();
            for (i, &(gap, len, c)) in reqs.iter().enumerate() {
                now += Duration(gap);
                let r = Request { ctx: Some(ContextId(c)), ..rq(i as u64, 0, len) };
                let tags = t.tag(now, &r);
                prop_assert!(tags.start >= now);
                prop_assert_eq!(tags.finish, tags.start + Duration(delay * MS));
                if let Some(p) = last.get(&c) {
                    prop_assert!(tags.start >= p.start && tags.finish >= p.finish, "{:?} after {:?}", tags, p);
                }
                last.insert(c, tags);
            }
        }
    }
}

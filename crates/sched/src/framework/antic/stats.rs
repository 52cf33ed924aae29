//! Per-context statistics the anticipation heuristics adapt with: 001 Section 3.3 (and its
//! footnote 3), used by every heuristic of Sections 3.3-3.5.
//!
//! - **Thinktime** (footnote 3): the interval between the completion of a context's previous
//!   request and the arrival of its new one. A request that is asynchronous — not `sync`, or
//!   issued while the context already has a request queued or in the device — counts as
//!   thinktime 0 (001: "treated as asynchronous and its thinktime is set to zero").
//!   [`ThinkTime`] is the decayed frequency table of 001: 30 buckets of 500 us covering 0 to
//!   15 ms, every count multiplied by 0.9 on each new sample of the context. Thinktimes of
//!   15 ms or more are counted in one overflow bucket past the table; a quantile that lands
//!   there is reported as [`Duration::MAX`] ("long": no heuristic waits on it). Quantiles
//!   interpolate linearly inside a bucket (counts are taken as spread evenly over it), so one
//!   sample of 1.2 ms gives a median of 1.25 ms and a 95th percentile of 1.475 ms.
//! - **Expected positioning time**: a decayed average of the positioning time of the
//!   context's requests, "as measured upon request completion", forgetting 95% of the old
//!   value after ten requests: per sample `v = f*v + (1-f)*x` with `f^10 = 0.05`
//!   ([`POS_DECAY`] = 0.7411). The sample is the estimated time to reach the request from the
//!   end of the context's previous request (001's "alternate method": positioning relative
//!   to the context's own previous request), not from wherever another context left the
//!   head: under deceptive idleness every dispatch follows a long seek, and measuring from
//!   the head would teach the heuristic that waiting never pays.
//! - **Seek direction** (Variant CSCAN): a decayed probability that the context's next
//!   request lies behind its previous one (backward = starts below the previous request's
//!   end), with the same decay as positioning (001 gives none for it).
//!
//! - **Prediction misses** (001 Section 5.2.1, suggestion 2): a decayed fraction of the
//!   heuristic's waits for the context that its next request failed to meet — each time a
//!   heuristic asks to wait for the context, the wait's end is a prediction, judged when
//!   the context's next request arrives (in time or not), whether or not the core kept the
//!   disk idle for it. Same decay as positioning.
//!
//! All statistics are `f64` arithmetic on values the scheduler is given: deterministic.

use crate::time::Duration;

/// Buckets of the thinktime table (001 Section 3.3: 30).
pub const THINK_BUCKETS: usize = 30;
/// Width of a thinktime bucket (001 Section 3.3: 500 us).
pub const THINK_BUCKET: Duration = Duration::from_micros(500);
/// The table's range, 30 x 500 us = 15 ms; also the longest wait any heuristic asks for.
pub const THINK_RANGE: Duration = Duration::from_millis(15);
/// Per-sample decay of the thinktime counts (001 Section 3.3: "reducing them to 90%").
pub const THINK_DECAY: f64 = 0.9;
/// Per-sample decay of the expected positioning time and seek direction: `0.05^(1/10)`, so
/// 95% of the old value is forgotten after ten requests (001 Section 3.3).
pub const POS_DECAY: f64 = 0.741_134_449_106_947_7;

/// Decayed thinktime frequency table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThinkTime {
    buckets: [f64; THINK_BUCKETS],
    /// Thinktimes of 15 ms and more.
    overflow: f64,
}

impl ThinkTime {
    /// Count one thinktime: decay every count to 90%, then add 1 to the sample's bucket.
    pub fn record(&mut self, t: Duration) {
        for b in &mut self.buckets {
            *b *= THINK_DECAY;
        }
        self.overflow *= THINK_DECAY;
        let i = (t.0 / THINK_BUCKET.0) as usize;
        match self.buckets.get_mut(i) {
            Some(b) => *b += 1.0,
            None => self.overflow += 1.0,
        }
    }

    /// Decayed count in bucket `i` (`i == THINK_BUCKETS` is the overflow bucket).
    pub fn count(&self, i: usize) -> f64 {
        self.buckets.get(i).copied().unwrap_or(self.overflow)
    }

    /// Total decayed count (0 before the first sample).
    pub fn weight(&self) -> f64 {
        self.buckets.iter().sum::<f64>() + self.overflow
    }

    pub fn is_empty(&self) -> bool {
        self.weight() <= 0.0
    }

    /// The `q`-quantile (0 < q <= 1), `None` before the first sample, [`Duration::MAX`] when
    /// it lies in the overflow bucket.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        let total = self.weight();
        if total <= 0.0 {
            return None;
        }
        let target = q * total;
        let width = THINK_BUCKET.0 as f64;
        let mut cum = 0.0;
        let mut last_edge = None;
        for (i, &c) in self.buckets.iter().enumerate() {
            if c <= 0.0 {
                continue;
            }
            if cum + c >= target {
                let frac = ((target - cum) / c).clamp(0.0, 1.0);
                return Some(Duration((i as f64 * width + frac * width).round() as u64));
            }
            cum += c;
            last_edge = Some(Duration((i as u64 + 1) * THINK_BUCKET.0));
        }
        // Past the table; without overflow only rounding got us here.
        if self.overflow > 0.0 {
            Some(Duration::MAX)
        } else {
            last_edge
        }
    }

    /// The expected median thinktime of 001 Section 3.3.
    pub fn median(&self) -> Option<Duration> {
        self.quantile(0.5)
    }

    /// The expected 95th-percentile thinktime: the wait within which a request arrives with
    /// 95% probability.
    pub fn p95(&self) -> Option<Duration> {
        self.quantile(0.95)
    }
}

/// An exponentially decayed average; the first sample is taken as is.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Decayed {
    value: Option<f64>,
}

impl Decayed {
    /// `v = decay*v + (1-decay)*x`.
    pub fn record(&mut self, x: f64, decay: f64) {
        self.value = Some(match self.value {
            None => x,
            Some(v) => decay * v + (1.0 - decay) * x,
        });
    }

    pub fn get(&self) -> Option<f64> {
        self.value
    }
}

/// What the heuristics know about one context.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CtxStats {
    pub think: ThinkTime,
    /// Expected positioning time, ns.
    pub positioning: Decayed,
    /// Probability that the next request seeks backward.
    pub backward: Decayed,
    /// Fraction of recent predicted waits the context's next request missed.
    pub misses: Decayed,
}

impl CtxStats {
    /// A request arrived after `think` (0 for an asynchronous one).
    pub fn record_think(&mut self, think: Duration) {
        self.think.record(think);
    }

    /// A request completed: its positioning time from the context's previous request and
    /// whether it lay behind that request.
    pub fn record_position(&mut self, positioning: Duration, backward: bool) {
        self.positioning.record(positioning.0 as f64, POS_DECAY);
        self.backward.record(if backward { 1.0 } else { 0.0 }, POS_DECAY);
    }

    /// A predicted wait was judged: the context's next request came within it (`hit`) or
    /// after it.
    pub fn record_prediction(&mut self, hit: bool) {
        self.misses.record(if hit { 0.0 } else { 1.0 }, POS_DECAY);
    }

    /// Expected positioning time, when known.
    pub fn expected_positioning(&self) -> Option<Duration> {
        self.positioning.get().map(|v| Duration(v.round() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    #[test]
    fn the_positioning_decay_forgets_95_percent_after_ten_requests() {
        assert!((POS_DECAY.powi(10) - 0.05).abs() < 1e-12);
        let mut d = Decayed::default();
        d.record(10_000.0, POS_DECAY);
        assert_eq!(d.get(), Some(10_000.0), "the first sample is taken as is");
        for _ in 0..10 {
            d.record(0.0, POS_DECAY);
        }
        // 5% of the old value is left
        assert!((d.get().unwrap() - 500.0).abs() < 1e-6, "{:?}", d.get());
        let mut s = CtxStats::default();
        s.record_position(Duration(8_000), false);
        for _ in 0..10 {
            s.record_position(Duration(2_000), true);
        }
        assert_eq!(s.expected_positioning(), Some(Duration(2_300)));
        assert!((s.backward.get().unwrap() - 0.95).abs() < 1e-9);
    }

    #[test]
    fn prediction_misses_decay_like_positioning() {
        let mut s = CtxStats::default();
        assert_eq!(s.misses.get(), None, "nothing predicted yet");
        s.record_prediction(false);
        assert_eq!(s.misses.get(), Some(1.0));
        for _ in 0..10 {
            s.record_prediction(true);
        }
        assert!((s.misses.get().unwrap() - 0.05).abs() < 1e-9);
        // alternating hits and misses settle around one half, at most 1 / (1 + decay)
        for _ in 0..40 {
            s.record_prediction(false);
            s.record_prediction(true);
        }
        s.record_prediction(false);
        let m = s.misses.get().unwrap();
        assert!((m - 1.0 / (1.0 + POS_DECAY)).abs() < 1e-6, "{m}");
    }

    #[test]
    fn thinktime_counts_decay_to_90_percent_per_request() {
        let mut t = ThinkTime::default();
        t.record(Duration(200 * US)); // bucket 0
        assert_eq!(t.count(0), 1.0);
        for _ in 0..10 {
            t.record(Duration(2_700 * US)); // bucket 5
        }
        assert!((t.count(0) - 0.9f64.powi(10)).abs() < 1e-12, "{}", t.count(0));
        // 1 + 0.9 + ... + 0.9^9
        assert!((t.count(5) - (1.0 - 0.9f64.powi(10)) / 0.1).abs() < 1e-12);
        assert!((t.weight() - (1.0 - 0.9f64.powi(11)) / 0.1).abs() < 1e-12);
        t.record(Duration::from_millis(40));
        assert_eq!(t.count(THINK_BUCKETS), 1.0, "the overflow bucket");
    }

    #[test]
    fn quantiles_interpolate_inside_buckets() {
        let mut t = ThinkTime::default();
        assert_eq!(t.median(), None);
        t.record(Duration(1_200 * US));
        assert_eq!(t.median(), Some(Duration(1_250 * US)));
        assert_eq!(t.p95(), Some(Duration(1_475 * US)));
        // equal weights in [0, 0.5) and [4.0, 4.5) ms: the median is the top of the first
        let mut t = ThinkTime::default();
        t.record(Duration(100 * US));
        t.record(Duration(4_200 * US));
        // weights 0.9 and 1: target 0.95 lands 0.05 into the second bucket
        assert_eq!(t.median(), Some(Duration(4_025 * US)));
        assert_eq!(t.quantile(0.4), Some(Duration((0.76 / 0.9 * 500.0 * 1000.0f64).round() as u64)));
    }

    #[test]
    fn a_quantile_past_the_table_is_long() {
        let mut t = ThinkTime::default();
        for _ in 0..5 {
            t.record(Duration(500 * US));
        }
        t.record(Duration::from_millis(15));
        // the newest sample weighs 1 of ~4.69: past the 95th percentile
        assert_eq!(t.p95(), Some(Duration::MAX));
        assert!(t.median().unwrap() < THINK_RANGE);
    }
}

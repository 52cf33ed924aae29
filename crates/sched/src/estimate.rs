//! Service-time estimator `est(from, to)`: a distance-to-time curve.
//!
//! Stream scheduling (000 Section 3.2) and SPTF-like policies need the cost of moving the head
//! from one LBN to another. As the papers do on real disks, a driver sends requests at
//! various distances, measures their service times and fits a smooth curve through the
//! (distance, time) points; [`ServiceCurve::fit`] is that fit. Backward moves cost 50% more
//! (`BACKWARD_PENALTY_PCT`), the CSCAN preference the stream paper builds in.
//!
//! The fit bins samples on a logarithmic distance grid (short seeks change fastest), takes
//! each bin's mean, and makes the curve non-decreasing (pool-adjacent-violators), so a longer
//! move is never estimated cheaper than a shorter one. Lookups interpolate linearly between
//! the fitted knots: O(log knots), no allocation.

use crate::request::Sector;
use crate::time::Duration;

/// Extra cost of a backward move, in percent of the forward cost (000 Section 3.2: 50%).
pub const BACKWARD_PENALTY_PCT: u64 = 50;

/// Fitted distance (sectors) to service time (ns) curve.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceCurve {
    /// Knots sorted by distance, times non-decreasing.
    knots: Vec<(u64, u64)>,
    /// `slopes[i]`: ns per sector between knots `i` and `i + 1` (a multiply per lookup).
    slopes: Vec<f64>,
    backward_pct: u64,
}

impl ServiceCurve {
    /// A curve through the given knots (distance in sectors, time in ns). Knots are sorted
    /// and made monotone; at least one knot is required.
    pub fn from_knots(mut knots: Vec<(u64, u64)>) -> Self {
        assert!(!knots.is_empty(), "a service curve needs at least one knot");
        knots.sort_unstable();
        knots.dedup_by_key(|k| k.0);
        let mut max = 0;
        for k in &mut knots {
            max = max.max(k.1);
            k.1 = max;
        }
        let slopes = knots.windows(2).map(|w| (w[1].1 - w[0].1) as f64 / (w[1].0 - w[0].0) as f64).collect();
        ServiceCurve { knots, slopes, backward_pct: BACKWARD_PENALTY_PCT }
    }

    /// Fit a smooth monotone curve through measured `(distance, service_time)` samples.
    /// `bins_per_decade` sets the resolution of the logarithmic grid.
    pub fn fit(samples: &[(u64, Duration)], bins_per_decade: u32) -> Self {
        assert!(!samples.is_empty(), "cannot fit a service curve to no samples");
        let bpd = bins_per_decade.max(1) as f64;
        // bin index: 0 for distance 0, else 1 + floor(log10(d) * bpd)
        let bin_of = |d: u64| -> usize {
            if d == 0 {
                0
            } else {
                1 + ((d as f64).log10() * bpd).floor() as usize
            }
        };
        let nbins = samples.iter().map(|s| bin_of(s.0)).max().unwrap() + 1;
        // (sum distance, sum time, count)
        let mut acc = vec![(0f64, 0f64, 0f64); nbins];
        for &(d, t) in samples {
            let b = &mut acc[bin_of(d)];
            b.0 += d as f64;
            b.1 += t.0 as f64;
            b.2 += 1.0;
        }
        // pool adjacent violators over the non-empty bins, weighted by count
        let mut blocks: Vec<(f64, f64, f64)> = Vec::new(); // (mean d, mean t, weight)
        for (sd, st, n) in acc.into_iter().filter(|b| b.2 > 0.0) {
            let mut cur = (sd / n, st / n, n);
            while let Some(&prev) = blocks.last() {
                if prev.1 <= cur.1 {
                    break;
                }
                blocks.pop();
                let w = prev.2 + cur.2;
                cur = ((prev.0 * prev.2 + cur.0 * cur.2) / w, (prev.1 * prev.2 + cur.1 * cur.2) / w, w);
            }
            blocks.push(cur);
        }
        let knots = blocks.into_iter().map(|(d, t, _)| (d.round() as u64, t.round() as u64)).collect();
        Self::from_knots(knots)
    }

    /// Estimated time to serve a request at distance `dist` ahead of the head.
    pub fn forward(&self, dist: u64) -> Duration {
        let k = &self.knots;
        let i = k.partition_point(|&(d, _)| d <= dist);
        if i == 0 {
            return Duration(k[0].1);
        }
        if i == k.len() {
            return Duration(k[k.len() - 1].1);
        }
        let (d0, t0) = k[i - 1];
        Duration(t0 + ((dist - d0) as f64 * self.slopes[i - 1]) as u64)
    }

    /// `est(from, to)`: forward cost, plus the backward penalty when `to < from`.
    pub fn estimate(&self, from: Sector, to: Sector) -> Duration {
        if to >= from {
            self.forward(to - from)
        } else {
            self.forward(from - to).mul_ratio(100 + self.backward_pct, 100)
        }
    }

    /// The costliest move the curve knows: used when a decision must assume the worst.
    pub fn max(&self) -> Duration {
        Duration(self.knots[self.knots.len() - 1].1).mul_ratio(100 + self.backward_pct, 100)
    }

    pub fn knots(&self) -> &[(u64, u64)] {
        &self.knots
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn backward_costs_half_again() {
        let c = ServiceCurve::from_knots(vec![(0, 100), (1000, 1100)]);
        assert_eq!(c.estimate(0, 500), Duration(600));
        assert_eq!(c.estimate(500, 0), Duration(900));
        assert_eq!(c.estimate(0, 5000), Duration(1100), "clamped past the last knot");
    }

    #[test]
    fn fit_recovers_a_square_root_seek_curve() {
        // time = 1ms + 0.1ms * sqrt(d / 1000), sampled with alternating noise
        let f = |d: u64| 1e6 + 1e5 * (d as f64 / 1000.0).sqrt();
        let samples: Vec<_> = (0..4000u64)
            .map(|i| {
                let d = (i * i * 61) % 500_000_000;
                let noise = if i % 2 == 0 { 1.03 } else { 0.97 };
                (d, Duration((f(d) * noise) as u64))
            })
            .collect();
        let c = ServiceCurve::fit(&samples, 8);
        for d in [10_000u64, 1_000_000, 100_000_000] {
            let got = c.forward(d).0 as f64;
            assert!((got / f(d) - 1.0).abs() < 0.08, "d={d}: fit {got} vs true {}", f(d));
        }
    }

    proptest! {
        #[test]
        fn fit_is_monotone(samples in proptest::collection::vec((0u64..1u64<<32, 0u64..50_000_000), 1..200),
                           a in 0u64..1u64<<33, b in 0u64..1u64<<33) {
            let s: Vec<_> = samples.into_iter().map(|(d, t)| (d, Duration(t))).collect();
            let c = ServiceCurve::fit(&s, 6);
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(c.forward(lo) <= c.forward(hi));
        }
    }
}

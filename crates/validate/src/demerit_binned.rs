//! The demerit figure as DiskSim 4.0 itself computes it: from *binned* distributions.
//!
//! `headway validate` scores from exact per-request values (the contract of its
//! `demerit_ms`). DiskSim's published figures come from another estimator, and a
//! comparison is only like for like when both models go through the same one, so
//! `validate` reports this one too (`demerit_binned_ms`).
//!
//! ## The bins (DiskSim's `statdefs`, "Physical access time")
//! 1,750 buckets over service times in microseconds (`Scale/Equals: 1000/0`), `Start 0 step
//! 1 grow 1`: bucket boundaries `b(0) = 0`, `b(i+1) = b(i) + 1 + floor(b(i) / 100)`, so one
//! microsecond wide up to 0.1 ms and about 1% of the value beyond. A value `v` (truncated
//! to whole microseconds) counts in the bucket whose upper boundary is the first `b(i) >
//! v`. The distribution is printed as one point per boundary: `(b(i) / 1000 ms,
//! cumulative fraction of values below it)`, the fraction with six decimals, and read back
//! up to the first point whose fraction is 1.
//!
//! ## The distance
//! At the quantiles `p = 0.0001, 0.0002, ...` (accumulated in floating point while `p <=
//! 1`), each curve's x is interpolated linearly between the two printed points around
//! `p`; the figure is the root of the mean squared difference of the two x values.

/// Buckets of DiskSim's "Physical access time" distribution.
const BUCKETS: usize = 1750;
/// Values per millisecond (`Scale`).
const SCALE: f64 = 1000.0;
/// The quantile step.
const STEP: f64 = 0.0001;

/// Upper boundaries of the buckets, in microseconds.
fn boundaries() -> Vec<i64> {
    let mut b = Vec::with_capacity(BUCKETS);
    let mut v: i64 = 0;
    for _ in 0..BUCKETS {
        b.push(v);
        v += 1 + v.abs() / 100;
    }
    b
}

/// The printed points `(x ms, cumulative fraction)` of `values` (ms), up to the first
/// fraction of 1.
fn printed_cdf(values: &[f64], bounds: &[i64]) -> Vec<(f64, f64)> {
    let mut counts = vec![0u64; bounds.len()];
    for &v in values {
        let us = (v * SCALE) as i64;
        // the first boundary above the value (the last bucket takes everything beyond)
        let i = bounds.partition_point(|&b| b <= us).min(bounds.len() - 1);
        counts[i] += 1;
    }
    let n = values.len() as f64;
    let mut out = Vec::new();
    let mut cum = 0.0;
    for (&b, &c) in bounds.iter().zip(&counts) {
        cum += c as f64 / n;
        let y = (cum * 1e6).round() / 1e6;
        out.push((b as f64 / SCALE, y));
        if y >= 1.0 {
            break;
        }
    }
    out
}

/// x of a printed curve at quantile `p`, moving the cursor `i` forward.
fn x_at(curve: &[(f64, f64)], i: &mut usize, p: f64) -> f64 {
    while *i + 1 < curve.len() && curve[*i].1 < p {
        *i += 1;
    }
    if *i == 0 {
        return curve[0].0;
    }
    let (x0, y0) = curve[*i - 1];
    let (x1, y1) = curve[*i];
    if y1 <= y0 {
        return x1;
    }
    x0 + (p - y0) / (y1 - y0) * (x1 - x0)
}

/// The demerit in ms of two sets of service times (ms) through DiskSim's binned
/// distributions.
pub fn binned_demerit(simulated: &[f64], measured: &[f64]) -> f64 {
    assert!(!simulated.is_empty() && !measured.is_empty(), "demerit of an empty sample");
    let bounds = boundaries();
    let (a, b) = (printed_cdf(simulated, &bounds), printed_cdf(measured, &bounds));
    let (mut i, mut j) = (0, 0);
    let (mut ss, mut count) = (0.0, 0u32);
    let mut p = STEP;
    while p <= 1.0 {
        let d = x_at(&a, &mut i, p) - x_at(&b, &mut j, p);
        ss += d * d;
        count += 1;
        p += STEP;
    }
    (ss / count as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_grow_by_one_percent_past_a_tenth_of_a_millisecond() {
        let b = boundaries();
        assert_eq!(&b[..4], &[0, 1, 2, 3]);
        assert_eq!(b[100], 100);
        assert_eq!(b[101], 102);
        // about 1% wide at 10 ms
        let k = b.partition_point(|&x| x <= 10_000);
        let w = (b[k] - b[k - 1]) as f64;
        assert!((95.0..=105.0).contains(&w), "{w}");
    }

    #[test]
    fn identical_samples_score_zero_and_a_shift_scores_about_the_shift() {
        let a: Vec<f64> = (0..5000).map(|i| 2.0 + (i % 997) as f64 * 0.013).collect();
        assert_eq!(binned_demerit(&a, &a), 0.0);
        let b: Vec<f64> = a.iter().map(|x| x + 0.5).collect();
        let d = binned_demerit(&a, &b);
        // the bins are ~1% (20-150 us) wide here: the shift comes back within a bin
        assert!((d - 0.5).abs() < 0.1, "{d}");
    }

    #[test]
    fn agrees_with_the_exact_figure_on_smooth_samples() {
        // two smooth distributions: binning changes the figure by little
        let a: Vec<f64> = (0..10_000).map(|i| 1.0 + 15.0 * (i as f64 / 10_000.0)).collect();
        let b: Vec<f64> = (0..10_000).map(|i| 1.2 + 14.0 * (i as f64 / 10_000.0).powf(1.1)).collect();
        let exact = crate::demerit::demerit(&a, &b);
        let binned = binned_demerit(&a, &b);
        assert!((binned - exact).abs() < 0.05 * exact, "exact {exact} binned {binned}");
    }
}

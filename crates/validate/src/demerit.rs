//! The Ruemmler-Wilkes demerit figure from exact per-request values: the RMS horizontal
//! distance, in ms, between two service-time CDFs, sampled at [`QUANTILES`] evenly spaced
//! quantiles `(k + 0.5) / QUANTILES`, each the sample of rank `floor(q * n)` of the sorted
//! values. Sample counts may differ (the CDFs are compared by quantile). DiskSim's own,
//! binned estimator is [`crate::demerit_binned`].

/// Quantiles the demerit samples.
pub const QUANTILES: usize = 10_000;

/// Value at quantile `q` of sorted samples: the sample of rank `floor(q * n)`.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() as f64 * q) as usize).min(sorted.len() - 1)]
}

/// The demerit figure in ms of two sets of service times (ms), any order.
pub fn demerit(simulated: &[f64], measured: &[f64]) -> f64 {
    assert!(!simulated.is_empty() && !measured.is_empty(), "demerit of an empty sample");
    let (mut a, mut b) = (simulated.to_vec(), measured.to_vec());
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let ss: f64 = (0..QUANTILES)
        .map(|k| {
            let q = (k as f64 + 0.5) / QUANTILES as f64;
            (quantile(&a, q) - quantile(&b, q)).powi(2)
        })
        .sum();
    (ss / QUANTILES as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demerit_of_identical_and_shifted_samples() {
        let a: Vec<f64> = (0..1000).map(|i| i as f64 / 100.0).collect();
        assert_eq!(demerit(&a, &a), 0.0);
        let b: Vec<f64> = a.iter().rev().map(|x| x + 0.5).collect();
        assert!((demerit(&a, &b) - 0.5).abs() < 1e-12);
        // different sample counts compare by quantile
        assert!((demerit(&[1.0, 2.0], &[1.0, 1.0, 2.0, 2.0]) - 0.0).abs() < 1e-12);
    }
}

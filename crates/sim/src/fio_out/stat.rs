//! fio's running statistics: an `io_stat` (min, max, mean, standard deviation, samples;
//! Welford's update, the standard deviation over `N - 1` as fio's), and the distribution
//! tables of fio's report (latency ranges, I/O depths, completion batches).

/// Samples' min, max, mean and deviation, as fio's `io_stat`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SampleStat {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    mean: f64,
    /// Sum of squared deviations from the mean.
    m2: f64,
}

impl SampleStat {
    pub fn add(&mut self, v: u64) {
        if self.n == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.n += 1;
        let d = v as f64 - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (v as f64 - self.mean);
    }

    pub fn mean(&self) -> f64 {
        self.mean
    }

    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2 / (self.n - 1) as f64).sqrt()
        }
    }

    /// Both sets of samples as one (Chan's parallel combination).
    pub fn merge(&mut self, o: &SampleStat) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        let n = (self.n + o.n) as f64;
        let d = o.mean - self.mean;
        self.m2 += o.m2 + d * d * self.n as f64 * o.n as f64 / n;
        self.mean += d * o.n as f64 / n;
        self.n += o.n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    /// Jobs running side by side, their rates added (fio's group figures for bandwidth and
    /// IOPS): min, max and mean summed, variances summed, samples counted together.
    pub fn add_parallel(&mut self, o: &SampleStat) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        let (va, vb) = (self.stddev().powi(2), o.stddev().powi(2));
        self.min += o.min;
        self.max += o.max;
        self.mean += o.mean;
        self.n += o.n;
        self.m2 = (va + vb) * (self.n - 1) as f64;
    }
}

/// fio's latency ranges: ten in ns, ten in µs, twelve in ms (`latency_ns`, `latency_us`,
/// `latency_ms`), each range's upper bound in its unit; the last ms range is `>=2000`.
pub const LAT_NS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
pub const LAT_MS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// The latency range of `ns`: index into the 32 ranges (10 ns, 10 µs, 12 ms).
pub fn lat_range(ns: u64) -> usize {
    let below = |v: u64, bounds: &[u64]| bounds.iter().position(|&b| v < b);
    if ns < 1000 {
        return below(ns, &LAT_NS).unwrap_or(9);
    }
    let us = ns / 1000;
    if us < 1000 {
        return 10 + below(us, &LAT_NS).unwrap_or(9);
    }
    20 + below(us / 1000, &LAT_MS).unwrap_or(11)
}

/// fio's I/O depth ranges: `1`, `2`, `4`, `8`, `16`, `32`, `>=64` (each from its value to
/// the next's).
pub const DEPTH_KEYS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];

pub fn depth_range(depth: u32) -> usize {
    match depth {
        0 | 1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

/// fio's submission and completion batch ranges: `0`, `4` (1-4), `8`, `16`, `32`, `64`,
/// `>=64`.
pub const BATCH_KEYS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];

pub fn batch_range(n: u64) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

/// `counts` as percentages of their sum (all zero when empty).
pub fn percents<const N: usize>(counts: &[u64; N]) -> [f64; N] {
    let total: u64 = counts.iter().sum();
    counts.map(|c| if total == 0 { 0.0 } else { c as f64 * 100.0 / total as f64 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welford_matches_the_two_pass_figures() {
        let vals = [3u64, 9, 4, 4, 12, 7, 1];
        let mut s = SampleStat::default();
        vals.iter().for_each(|&v| s.add(v));
        let mean = vals.iter().sum::<u64>() as f64 / 7.0;
        let var = vals.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / 6.0;
        assert_eq!((s.n, s.min, s.max), (7, 1, 12));
        assert!((s.mean() - mean).abs() < 1e-12);
        assert!((s.stddev() - var.sqrt()).abs() < 1e-12);
        // merged halves are the whole
        let (mut a, mut b) = (SampleStat::default(), SampleStat::default());
        vals[..3].iter().for_each(|&v| a.add(v));
        vals[3..].iter().for_each(|&v| b.add(v));
        a.merge(&b);
        assert_eq!((a.n, a.min, a.max), (7, 1, 12));
        assert!((a.stddev() - s.stddev()).abs() < 1e-9);
    }

    #[test]
    fn ranges_follow_fio_tables() {
        assert_eq!(lat_range(1), 0);
        assert_eq!(lat_range(999), 9);
        assert_eq!(lat_range(1_000), 10); // 1 µs: below 2 µs
        assert_eq!(lat_range(49_999), 14); // 49 µs: the 50 µs range
        assert_eq!(lat_range(999_999), 19);
        assert_eq!(lat_range(1_000_000), 20); // 1 ms: below 2 ms
        assert_eq!(lat_range(5_000_000), 22); // 5 ms: the 10 ms range
        assert_eq!(lat_range(1_999_999_999), 30);
        assert_eq!(lat_range(2_000_000_000), 31); // >=2000 ms
        assert_eq!([1, 2, 3, 4, 8, 63, 64].map(depth_range), [0, 1, 1, 2, 3, 5, 6]);
        assert_eq!([0, 1, 4, 5, 64, 65].map(batch_range), [0, 1, 1, 2, 5, 6]);
        assert_eq!(percents(&[1, 3]), [25.0, 75.0]);
        assert_eq!(percents(&[0, 0]), [0.0, 0.0]);
    }
}

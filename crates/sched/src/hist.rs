//! Latency histogram: log-linear buckets (64 per power of two, so a reported percentile is
//! within 1/64 of the true value), exact count, sum, min and max. Fixed memory (4096
//! counters), O(1) record, no allocation after construction. Used by the simulator's
//! reports and the server's `--stats`.

const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = 64 * SUB;

#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64]>,
    pub count: u64,
    pub sum: u128,
    pub min: u64,
    pub max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; BUCKETS].into_boxed_slice(), count: 0, sum: 0, min: u64::MAX, max: 0 }
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Histogram(n={}, mean={})", self.count, self.mean())
    }
}

fn bucket(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = e - SUB_BITS;
    let sub = (v >> shift) as usize & (SUB - 1);
    ((shift as usize + 1) << SUB_BITS) | sub
}

/// The bucket value `v` falls in.
pub fn bucket_of(v: u64) -> usize {
    bucket(v)
}

/// Midpoint of bucket `b`'s value range (what fio's `plat_idx_to_val` gives).
pub fn bucket_value(b: usize) -> u64 {
    value_of(b)
}

/// Midpoint of a bucket's value range.
fn value_of(b: usize) -> u64 {
    if b < SUB {
        return b as u64;
    }
    let shift = (b >> SUB_BITS) - 1;
    let sub = (b & (SUB - 1)) as u64;
    let lo = (SUB as u64 | sub) << shift;
    lo + ((1u64 << shift) >> 1)
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[bucket(v)] += 1;
        self.count += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a += b;
        }
        self.count += o.count;
        self.sum += o.sum;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The bucket counts, index `b` holding the values [`bucket_value`]`(b)` stands for. The
    /// indexing is fio's (`plat_val_to_idx` with 6 bits a group) up to fio's last bucket.
    pub fn buckets(&self) -> &[u64] {
        &self.counts
    }

    /// Standard deviation (with `count - 1`, as fio's `io_stat`) from the buckets' midpoints:
    /// within 1/64 of each value, for a histogram whose samples were not kept.
    pub fn stddev_of_buckets(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let mean = self.mean();
        let ss: f64 = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(b, &c)| c as f64 * (value_of(b) as f64 - mean).powi(2))
            .sum();
        (ss / (self.count - 1) as f64).sqrt()
    }

    /// Value at percentile `p` (0-100), clamped to the observed min and max.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return value_of(b).clamp(self.min, self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_values_are_exact() {
        let mut h = Histogram::default();
        for v in 1..=50 {
            h.record(v);
        }
        assert_eq!(h.percentile(50.0), 25);
        assert_eq!(h.percentile(100.0), 50);
        assert_eq!(h.mean(), 25.5);
    }

    proptest! {
        #[test]
        fn percentiles_within_two_percent(mut vals in proptest::collection::vec(1u64..10_000_000_000, 1..300), p in 1.0f64..100.0) {
            let mut h = Histogram::default();
            for &v in &vals { h.record(v); }
            vals.sort_unstable();
            let rank = ((p / 100.0) * vals.len() as f64).ceil().max(1.0) as usize;
            let exact = vals[rank - 1] as f64;
            let got = h.percentile(p) as f64;
            prop_assert!((got / exact - 1.0).abs() <= 1.0 / 64.0 + 1e-9, "p{} exact {} got {}", p, exact, got);
        }
    }
}

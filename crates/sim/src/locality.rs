//! Skewed random offsets for fio's `random_distribution` (zipf, pareto, normal).
//!
//! A job's region is cut into `n` slots (its smallest block size each). A distribution
//! draws a *rank* in `0..n`: rank 0 the hottest (zipf, pareto) or the centre (normal). Ranks
//! are not offsets: like fio, which hashes them, headway spreads them over the region with
//! a fixed pseudo-random permutation of `0..n` ([`Scatter`]), so the hot slots are scattered
//! and a hot slot's neighbours are not hot. What is skewed is *reuse*, not position.
//!
//! - zipf:θ — rank `k` (0-based) with probability proportional to `1 / (k + 1)^θ`
//!   (`rand_distr::Zipf`, rejection-inversion: O(1) per draw, no table);
//! - pareto:h — `floor((n - 1) * u^(ln h / ln(1 - h)))` for a uniform `u` in [0, 1):
//!   h = 0.2 puts about 80% of the draws on 20% of the slots (fio's definition of h);
//! - normal:dev — a normal draw around `n / 2` with a standard deviation of `dev`% of `n`,
//!   drawn again when it falls outside `0..n` (at most 64 times, then clamped).
//!
//! Memory is O(1) in the region size: the permutation is a 4-round Feistel network over the
//! smallest even power of two covering `n` (less than `4n`), walking the cycle until the
//! value lands below `n` (fewer than 4 rounds in expectation). All randomness
//! comes from the job's seeded generator; the permutation's keys from the job's seed.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Zipf};

use crate::fio::RandomDistribution;

/// A fixed permutation of `0..n` (a keyed Feistel network with cycle walking).
#[derive(Clone, Debug)]
pub struct Scatter {
    n: u64,
    /// Bits of each half of the domain (the domain is `2^(2 * half)` >= `n`).
    half: u32,
    keys: [u64; 4],
}

impl Scatter {
    pub fn new(n: u64, seed: u64) -> Scatter {
        assert!(n > 0, "a permutation of nothing");
        let bits = 64 - (n - 1).leading_zeros();
        let half = bits.div_ceil(2).max(1);
        let mut k = seed ^ 0xD6E8_FEB8_6659_FD93;
        let keys = std::array::from_fn(|_| {
            k = mix(k.wrapping_add(0x9E37_79B9_7F4A_7C15));
            k
        });
        Scatter { n, half, keys }
    }

    /// Where `x` (< n) goes; a bijection of `0..n`.
    pub fn map(&self, x: u64) -> u64 {
        debug_assert!(x < self.n);
        let mut y = self.round_trip(x);
        while y >= self.n {
            y = self.round_trip(y);
        }
        y
    }

    fn round_trip(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for &k in &self.keys {
            let f = mix(r ^ k) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half) | r
    }
}

/// A 64-bit finaliser (good avalanche; the round function of [`Scatter`]).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A skewed distribution of slots over a region of `n` slots.
#[derive(Clone, Debug)]
pub struct Locality {
    n: u64,
    kind: Kind,
    scatter: Scatter,
}

#[derive(Clone, Debug)]
enum Kind {
    Zipf(Zipf<f64>),
    Pareto { pow: f64 },
    Normal { sd: f64 },
}

impl Locality {
    /// `None` for the uniform distribution (the caller draws uniformly, as before).
    pub fn new(dist: RandomDistribution, n: u64, seed: u64) -> Option<Locality> {
        let n = n.max(1);
        let kind = match dist {
            RandomDistribution::Uniform => return None,
            RandomDistribution::Zipf(theta) => {
                Kind::Zipf(Zipf::new(n, theta).expect("theta > 0 and n >= 1 (checked by the job file)"))
            }
            RandomDistribution::Pareto(h) => Kind::Pareto { pow: h.ln() / (1.0 - h).ln() },
            RandomDistribution::Normal(dev) => Kind::Normal { sd: dev / 100.0 * n as f64 },
        };
        Some(Locality { n, kind, scatter: Scatter::new(n, seed) })
    }

    /// The next slot, `0..n`.
    pub fn slot(&self, rng: &mut ChaCha8Rng) -> u64 {
        let rank = match &self.kind {
            // Zipf draws 1..=n as a float
            Kind::Zipf(z) => (z.sample(rng) as u64).clamp(1, self.n) - 1,
            Kind::Pareto { pow } => {
                let u: f64 = rng.gen();
                (((self.n - 1) as f64) * u.powf(*pow)) as u64
            }
            Kind::Normal { sd } => {
                let centre = self.n as f64 / 2.0;
                let mut x = centre;
                for _ in 0..64 {
                    x = centre + sd * standard_normal(rng);
                    if x >= 0.0 && x < self.n as f64 {
                        break;
                    }
                }
                x.clamp(0.0, (self.n - 1) as f64) as u64
            }
        };
        self.scatter.map(rank.min(self.n - 1))
    }
}

/// A standard normal draw (Box-Muller; one of the pair).
fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn scatter_is_a_permutation() {
        for n in [1u64, 2, 3, 7, 16, 1000, 4097] {
            let s = Scatter::new(n, 42);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = s.map(x);
                assert!(y < n);
                assert!(!seen[y as usize], "n {n}: {y} twice");
                seen[y as usize] = true;
            }
        }
        // a different seed, a different permutation
        let (a, b) = (Scatter::new(1000, 1), Scatter::new(1000, 2));
        assert!((0..1000).any(|x| a.map(x) != b.map(x)));
    }

    /// The share of draws landing on the hottest `frac` of the slots.
    fn top_share(l: &Locality, frac: f64) -> f64 {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = l.n as usize;
        let mut counts = vec![0u32; n];
        let draws = 200_000;
        for _ in 0..draws {
            counts[l.slot(&mut rng) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top = (n as f64 * frac) as usize;
        counts[..top].iter().map(|&c| c as f64).sum::<f64>() / draws as f64
    }

    #[test]
    fn pareto_0_2_is_about_80_20_and_0_5_is_uniform() {
        let l = Locality::new(RandomDistribution::Pareto(0.2), 10_000, 1).unwrap();
        let s = top_share(&l, 0.2);
        assert!((0.75..0.9).contains(&s), "pareto:0.2 top 20% share {s}");
        let u = Locality::new(RandomDistribution::Pareto(0.5), 10_000, 1).unwrap();
        // uniform: the busiest 20% of the slots get 20% plus the counts' noise (about 26%
        // at 20 draws a slot)
        let s = top_share(&u, 0.2);
        assert!(s < 0.3, "pareto:0.5 top 20% share {s}");
    }

    #[test]
    fn zipf_skews_more_with_theta_and_spreads_hot_slots() {
        let mild = top_share(&Locality::new(RandomDistribution::Zipf(0.8), 10_000, 1).unwrap(), 0.01);
        let hot = top_share(&Locality::new(RandomDistribution::Zipf(1.2), 10_000, 1).unwrap(), 0.01);
        assert!(hot > mild && hot > 0.5 && mild > 0.1, "zipf top 1%: 0.8 -> {mild}, 1.2 -> {hot}");
        // the two hottest ranks are not neighbours on the region
        let l = Locality::new(RandomDistribution::Zipf(1.2), 10_000, 1).unwrap();
        assert!(l.scatter.map(0).abs_diff(l.scatter.map(1)) > 1);
    }

    #[test]
    fn normal_concentrates_by_its_deviation() {
        let narrow = top_share(&Locality::new(RandomDistribution::Normal(5.0), 10_000, 1).unwrap(), 0.2);
        let wide = top_share(&Locality::new(RandomDistribution::Normal(50.0), 10_000, 1).unwrap(), 0.2);
        // 5% deviation: 2 sd = 20% of the slots hold ~95% of the draws
        assert!(narrow > 0.9 && wide < narrow, "normal top 20%: 5% -> {narrow}, 50% -> {wide}");
    }
}

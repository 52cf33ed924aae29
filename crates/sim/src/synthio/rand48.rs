//! DiskSim's random numbers: its own copy of the POSIX `rand48` family, one 48-bit state
//! shared by every module that draws during a run (the synthetic generators first of all).
//!
//! `X <- (0x5DEECE66D * X + 0xB) mod 2^48`, a draw is `X / 2^48` in `[0, 1)`. Seeding with
//! `s` sets `X = (s mod 2^32) * 2^16 + 0x330E`; with no seed the state is `0x1234ABCD330E`.
//! These are `srand48`/`drand48`'s published constants, so a run draws exactly the numbers
//! DiskSim's does from the same seed.

const A: u64 = 0x5DEE_CE66D;
const C: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;

/// The generator state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rand48 {
    x: u64,
}

impl Default for Rand48 {
    /// The state before any seed (`0x1234ABCD330E`).
    fn default() -> Self {
        Rand48 { x: 0x1234_ABCD_330E }
    }
}

impl Rand48 {
    /// `srand48(seed)`: the seed's low 32 bits above `0x330E`.
    pub fn seeded(seed: i64) -> Rand48 {
        Rand48 { x: ((seed as u64 & 0xFFFF_FFFF) << 16) | 0x330E }
    }

    /// `drand48()`: the next draw, in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        self.x = (A.wrapping_mul(self.x).wrapping_add(C)) & MASK;
        self.x as f64 / (1u64 << 48) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::excessive_precision)] // as printed, %.17g
    fn draws_what_the_c_library_draws() {
        // glibc's srand48(seed) then drand48() four times, printed with %.17g
        let want: [(i64, [f64; 4]); 3] = [
            (0, [0.17082803610628972, 0.74990198048496381, 0.09637165562356742, 0.87046522702707563]),
            (42, [0.74452500006100664, 0.34270147871890799, 0.11108528244416149, 0.42233895798830901]),
            (
                123456789,
                [0.05246846687896678, 0.025444216651038687, 0.099272008557942826, 0.43613007836660955],
            ),
        ];
        for (seed, draws) in want {
            let mut r = Rand48::seeded(seed);
            for (i, w) in draws.into_iter().enumerate() {
                assert_eq!(r.next_f64(), w, "seed {seed}, draw {i}");
            }
        }
        // only the seed's low 32 bits count
        assert_eq!(Rand48::seeded(42 + (1 << 32)), Rand48::seeded(42));
    }
}

//! One DiskSim synthetic generator (`disksim_synthgen`): the next request it makes, drawn
//! exactly as DiskSim's `synthio` draws it (seeds/.. none: DiskSim 4.0's synthetic
//! workload, restated in `mod.rs`).
//!
//! Addresses and sizes are in units of the `Blocking factor` `B`; a device of `S` sectors
//! has `N = S / B` blocks, and a request never reaches block `N - 1` (every test is strict).
//! Integer conversions truncate toward zero, as C's do.
//!
//! **First request:** think time from `General inter-arrival times` (redrawn while
//! negative), a device `D[trunc(U n)]`, then block `trunc(U N)` and count
//! `(trunc(size) + B - 1) / B` redrawn together while `block + count >= N` or `count == 0`,
//! then read if `U < p_read`, then the class.
//!
//! **Every later request** (one draw `T` first):
//! * sequential if `T < p_seq` and `block + 2 count < N`: think time from `Sequential
//!   inter-arrival times`, the next blocks on the same device, same count and direction;
//! * else local if `p_seq <= T < p_seq + p_loc`: think time from `Local inter-arrival
//!   times`, same device; block `block + trunc(distance) / B` and a fresh count redrawn
//!   together while out of the device, negative, or the count `<= 0`; read if `U < p_read`;
//! * else random, as the first request (the count test is `<= 0` here).
//!
//! Then the class, one draw `U`: time-critical if `U - p_crit < 0`, else time-limited if
//! `U - p_crit < p_lim`. A time-limited request then draws its limit from `Time-limited
//! think times` (redrawn while negative).

use super::dist::Dist;
use super::rand48::Rand48;

/// How the issuing process waits for a request (seeds: DiskSim's request classes).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// The process blocks until it completes (a closed workload).
    Critical,
    /// The process blocks when its limit has passed and it is still outstanding.
    Limited,
    /// The process never waits for it (an open workload).
    Background,
}

/// A generator's parameters (`disksim_synthgen`).
#[derive(Clone, Debug, PartialEq)]
pub struct GenSpec {
    /// `Storage capacity per device`, sectors.
    pub capacity: u64,
    /// `devices`, as places in [`super::SynthSpec::device_names`] (a repeated name weighs
    /// the draw).
    pub devices: Vec<u32>,
    /// `Blocking factor`, sectors.
    pub blocking: u64,
    pub p_seq: f64,
    pub p_local: f64,
    pub p_read: f64,
    pub p_critical: f64,
    pub p_limited: f64,
    pub time_limit: Dist,
    pub general: Dist,
    pub sequential: Dist,
    pub local: Dist,
    pub local_distance: Dist,
    pub size: Dist,
}

/// One generated request.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SynthReq {
    /// Think time before it, ms.
    pub think: f64,
    pub device: u32,
    /// First block and blocks (units of the blocking factor).
    pub block: i64,
    pub count: i64,
    pub read: bool,
    pub class: Class,
    /// A time-limited request's limit: ms of its process's computing (see [`super::flow`]).
    pub limit: Option<f64>,
}

impl SynthReq {
    /// First sector and sectors.
    pub fn sectors(&self, spec: &GenSpec) -> (u64, u64) {
        (self.block as u64 * spec.blocking, self.count as u64 * spec.blocking)
    }
}

impl GenSpec {
    /// Blocks per device.
    fn blocks(&self) -> i64 {
        (self.capacity / self.blocking) as i64
    }

    fn count(&self, r: &mut Rand48) -> i64 {
        (self.size.sample(r) as i64 + self.blocking as i64 - 1) / self.blocking as i64
    }

    fn device(&self, r: &mut Rand48) -> u32 {
        self.devices[(r.next_f64() * self.devices.len() as f64) as usize]
    }

    /// A random block and count; `zero_only`: only a zero count is redrawn (the first
    /// request's test).
    fn place(&self, r: &mut Rand48, zero_only: bool) -> (i64, i64) {
        let n = self.blocks();
        let (mut block, mut count) = (n, n);
        while block + count >= n || count == 0 || (!zero_only && count < 0) {
            block = (r.next_f64() * n as f64) as i64;
            count = self.count(r);
        }
        (block, count)
    }

    /// The class draw, and a time-limited request's limit.
    fn class(&self, r: &mut Rand48) -> (Class, Option<f64>) {
        let u = r.next_f64() - self.p_critical;
        if u < 0.0 {
            (Class::Critical, None)
        } else if u < self.p_limited {
            (Class::Limited, Some(self.time_limit.nonnegative(r)))
        } else {
            (Class::Background, None)
        }
    }

    /// The generator's first request.
    pub fn first(&self, r: &mut Rand48) -> SynthReq {
        let think = self.general.nonnegative(r);
        let device = self.device(r);
        let (block, count) = self.place(r, true);
        let read = r.next_f64() < self.p_read;
        let (class, limit) = self.class(r);
        SynthReq { think, device, block, count, read, class, limit }
    }

    /// The request after `prev`.
    pub fn next(&self, prev: &SynthReq, r: &mut Rand48) -> SynthReq {
        let t = r.next_f64();
        let mut q = *prev;
        if t < self.p_seq && prev.block + 2 * prev.count < self.blocks() {
            q.think = self.sequential.nonnegative(r);
            q.block = prev.block + prev.count;
        } else if t < self.p_seq + self.p_local && t >= self.p_seq {
            q.think = self.local.nonnegative(r);
            let n = self.blocks();
            let mut block = n;
            while block + q.count >= n || block < 0 || q.count <= 0 {
                block = prev.block + self.local_distance.sample(r) as i64 / self.blocking as i64;
                q.count = self.count(r);
            }
            q.block = block;
            q.read = r.next_f64() < self.p_read;
        } else {
            q.think = self.general.nonnegative(r);
            q.device = self.device(r);
            (q.block, q.count) = self.place(r, false);
            q.read = r.next_f64() < self.p_read;
        }
        (q.class, q.limit) = self.class(r);
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> GenSpec {
        GenSpec {
            capacity: 16_448_064,
            devices: vec![0, 1],
            blocking: 8,
            p_seq: 0.2,
            p_local: 0.3,
            p_read: 0.66,
            p_critical: 0.1,
            p_limited: 0.3,
            time_limit: Dist::Normal { mean: 30.0, sd: 100.0 },
            general: Dist::Exponential { base: 0.0, mean: 10.0 },
            sequential: Dist::Exponential { base: 0.0, mean: 10.0 },
            local: Dist::Exponential { base: 0.0, mean: 10.0 },
            local_distance: Dist::Normal { mean: 0.0, sd: 40000.0 },
            size: Dist::Exponential { base: 0.0, mean: 8.0 },
        }
    }

    #[test]
    fn the_first_request_draws_in_order() {
        let s = spec();
        let mut r = Rand48::seeded(42);
        let q = s.first(&mut r);
        // the same draws by hand
        let mut u = Rand48::seeded(42);
        let think = 0.0 - 10.0 * (1.0 - u.next_f64()).ln();
        let device = [0, 1][(u.next_f64() * 2.0) as usize];
        let n = (16_448_064 / 8) as i64;
        let (mut block, mut count) = (n, n);
        while block + count >= n || count == 0 {
            block = (u.next_f64() * n as f64) as i64;
            count = ((-8.0 * (1.0 - u.next_f64()).ln()) as i64 + 7) / 8;
        }
        let read = u.next_f64() < 0.66;
        let c = u.next_f64() - 0.1;
        let class = if c < 0.0 {
            Class::Critical
        } else if c < 0.3 {
            Class::Limited
        } else {
            Class::Background
        };
        assert_eq!(
            (q.think, q.device, q.block, q.count, q.read, q.class),
            (think, device, block, count, read, class)
        );
        assert_eq!(q.limit.is_some(), class == Class::Limited);
    }

    #[test]
    fn requests_stay_inside_the_device_and_mix_as_asked() {
        let s = spec();
        let mut r = Rand48::seeded(7);
        let mut q = s.first(&mut r);
        let (mut seq, mut reads, mut crit, mut lim) = (0, 0, 0, 0);
        let n = 50_000;
        for _ in 0..n {
            let p = q;
            q = s.next(&p, &mut r);
            assert!(q.block >= 0 && q.count > 0 && q.block + q.count < s.blocks(), "{q:?}");
            assert!(q.think >= 0.0 && q.limit.is_none_or(|l| l >= 0.0));
            if q.block == p.block + p.count && q.device == p.device && q.count == p.count {
                seq += 1;
            }
            reads += q.read as u32;
            crit += (q.class == Class::Critical) as u32;
            lim += (q.class == Class::Limited) as u32;
        }
        let f = |k: u32| k as f64 / n as f64;
        // sequential 0.2 (a local or random request can land there too, rarely)
        assert!((f(seq) - 0.2).abs() < 0.01, "sequential {}", f(seq));
        // a sequential request keeps its predecessor's direction: reads stay near 0.66
        assert!((f(reads) - 0.66).abs() < 0.02, "reads {}", f(reads));
        assert!((f(crit) - 0.1).abs() < 0.01 && (f(lim) - 0.3).abs() < 0.01, "{} {}", f(crit), f(lim));
    }
}

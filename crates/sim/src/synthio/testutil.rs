//! Generators and workloads for the synthio tests: fixed think times and sizes.

use super::dist::Dist;
use super::gen::GenSpec;
use super::SynthSpec;

/// Reads of one block of 8 sectors over `capacity` sectors, all random, `think_ms` apart,
/// time-critical with probability `p_critical`.
pub(crate) fn gen(p_critical: f64, think_ms: f64, capacity: u64) -> GenSpec {
    let fixed = |x| Dist::Exponential { base: x, mean: 0.0 };
    GenSpec {
        capacity,
        devices: vec![0],
        blocking: 8,
        p_seq: 0.0,
        p_local: 0.0,
        p_read: 1.0,
        p_critical,
        p_limited: 0.0,
        time_limit: fixed(0.0),
        general: fixed(think_ms),
        sequential: fixed(think_ms),
        local: fixed(think_ms),
        local_distance: fixed(0.0),
        size: fixed(8.0),
    }
}

/// `gens` on `processors` CPUs, stopping at `requests` generations.
pub(crate) fn spec(gens: Vec<GenSpec>, processors: u32, requests: u64) -> SynthSpec {
    SynthSpec {
        seed: 3,
        processors,
        time_scale: 1.0,
        requests,
        max_time_ms: 1e9,
        syscalls: false,
        call_ms: 0.0,
        return_ms: 0.0,
        generators: gens,
        device_names: vec!["disk0".into()],
    }
}

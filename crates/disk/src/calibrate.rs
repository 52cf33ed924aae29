//! The papers' calibration, run against the model.
//!
//! Stream scheduling (seeds/000 Section 3, after its refs 25, 14 and 16) estimates service time
//! from LBN distance with a curve fitted to measurements: "requests of various distances
//! between two adjacent ones are sent to the disk and corresponding service times are
//! collected". [`calibration_samples`] does exactly that against a drive model, so the
//! scheduler's `ServiceCurve::fit` sees what it would see on the real disk.

use crate::hdd::Hdd;
use crate::spec::DiskSpec;
use headway_sched::{Dir, Duration, Time};

/// Request size of each probe: 4 KiB.
pub const PROBE_SECTORS: u32 = 8;

/// Time between a probe's positioning read returning and the probe being issued: the
/// host's turnaround, as in the simulator's workloads (20 us; up to 1 us more, varied).
pub const PROBE_GAP: Duration = Duration::from_micros(20);

/// Multiplicative hash constants for two independent Weyl sequences (golden ratio and
/// sqrt(2) - 1 in 0.64 fixed point): low-discrepancy, deterministic, integer-only.
const WEYL_A: u64 = 0x9E37_79B9_7F4A_7C15;
const WEYL_B: u64 = 0x6A09_E667_F3BC_C909;

/// `frac(i * w)` scaled to `0..n`.
fn weyl(i: u64, w: u64, n: u64) -> u64 {
    ((i.wrapping_mul(w) as u128 * n as u128) >> 64) as u64
}

/// `count` forward-only `(distance_sectors, service_time)` samples.
///
/// Each sample positions the head with a 4 KiB read at some LBN `a` (so the head is at
/// `a + 8`, the end of that request, which is what `DeviceView::head` reports), then, as
/// a calibration program does, issues the next 4 KiB read at `a + 8 + distance` right
/// after the first returns ([`PROBE_GAP`] later) and times it from issue to completion
/// (overheads, seek, rotation, transfer — or a read-ahead hit for short forward moves,
/// which is what a scheduler deciding right after a completion will see). Distances are
/// spread logarithmically from 0 to the full stroke (sample 0 is distance 0, the last is
/// the longest possible); start positions `a` are spread over the room each distance
/// leaves by a Weyl sequence, so rotational latency and zone effects average out over
/// samples of similar distance. The drive's cache stays on, as it is on a real disk.
///
/// Backward moves are not sampled: the scheduler's `ServiceCurve` derives backward cost
/// from the forward curve (+50%, seeds/000 Section 3.2). The mechanics are symmetric, so
/// backward samples of the model would repeat the forward ones.
pub fn calibration_samples(spec: &DiskSpec, count: usize) -> Vec<(u64, Duration)> {
    let mut hdd = Hdd::new(spec.clone());
    let cap = hdd.capacity();
    let len = PROBE_SECTORS as u64;
    let max_d = cap.saturating_sub(2 * len);
    let mut out = Vec::with_capacity(count);
    let mut t = 0u64;
    for i in 0..count as u64 {
        let d = if i == 0 || max_d <= 1 {
            0
        } else if i + 1 == count as u64 {
            max_d
        } else {
            let u = i as f64 / (count - 1) as f64;
            ((max_d as f64).powf(u).round() as u64).min(max_d)
        };
        let room = max_d - d;
        let a = weyl(i, WEYL_A, room + 1);
        let first = hdd.access(Time(t), a, PROBE_SECTORS, Dir::Read);
        let issue = first.done.0 + PROBE_GAP.0 + weyl(i, WEYL_B, 1_000);
        let probe = hdd.access(Time(issue), a + len + d, PROBE_SECTORS, Dir::Read);
        out.push((d, probe.done - Time(issue)));
        t = probe.done.0;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin;

    #[test]
    fn curve_increases_with_distance() {
        for name in crate::builtin_names() {
            let spec = builtin(name).unwrap();
            let s = calibration_samples(&spec, 2000);
            assert_eq!(s.len(), 2000);
            assert_eq!(s[0].0, 0);
            assert!(s.windows(2).all(|w| w[0].0 <= w[1].0), "distances are sorted");
            // mean service time per decade of distance must rise from short to long moves
            let mean = |lo: u64, hi: u64| {
                let v: Vec<f64> = s.iter().filter(|x| x.0 >= lo && x.0 < hi).map(|x| x.1 .0 as f64).collect();
                assert!(v.len() >= 10, "{name}: too few samples in {lo}..{hi}");
                v.iter().sum::<f64>() / v.len() as f64
            };
            let cap = spec.capacity_sectors;
            let short = mean(1_000, 10_000);
            let mid = mean(cap / 100, cap / 10);
            let long = mean(cap / 3, cap);
            // (rotational latency blurs short against mid-range moves: 10% slack there)
            assert!(short < mid * 1.1 && mid < long, "{name}: {short} {mid} {long}");
            let rev = spec.revolution().0 as f64;
            assert!(long > short + rev / 4.0, "{name}: long seeks cost noticeably more");
        }
    }

    #[test]
    fn fits_a_monotone_service_curve() {
        let spec = builtin("wd5000aaks").unwrap();
        let s = calibration_samples(&spec, 4000);
        let c = headway_sched::ServiceCurve::fit(&s, 6);
        let ahead = c.forward(64).as_millis_f64();
        let near = c.forward(20_000).as_millis_f64();
        let far = c.forward(spec.capacity_sectors / 2).as_millis_f64();
        // just ahead: the running read-ahead reaches it; a short move beyond the read-ahead:
        // overhead + short seek + ~half a revolution; half the disk: a long seek + half a turn
        assert!(ahead < 1.0, "ahead {ahead} ms");
        assert!((3.0..8.0).contains(&near), "near {near} ms");
        assert!((12.0..22.0).contains(&far), "far {far} ms");
    }

    #[test]
    fn deterministic() {
        let spec = builtin("hd080hj").unwrap();
        assert_eq!(calibration_samples(&spec, 300), calibration_samples(&spec, 300));
    }
}

//! Seek time by cylinder distance, compiled from a [`SeekModel`] for the hot path.
//!
//! * `Table`: DiskSim's "extracted" curves (Worthington, Ganger, Patt, Wilkes, "On-line
//!   extraction of SCSI disk drive parameters", SIGMETRICS 1995): measured knots with
//!   linear interpolation, evaluated once per cylinder distance when the curve is compiled
//!   (up to [`DENSE_MAX`] cylinders): a lookup is one load. Past that, a binary search over
//!   the knots.
//! * `ThreePoint`: Lee and Katz's curve `t(d) = t1 + a*sqrt(d-1) + b*(d-1)`. With
//!   `x = d-1` uniformly distributed as the distance between two random cylinders of `N`,
//!   `E[sqrt x] = 8/15 sqrt N` and `E[x] = N/3`, which gives
//!   `a*sqrt N = (15 avg - 10 t1 - 5 full) / 3` and `b*N = (8 full + 7 t1 - 15 avg) / 3`.
//!   Evaluated in f64 (one sqrt, IEEE-exact, so deterministic everywhere).

use crate::spec::SeekModel;
use headway_sched::Duration;

/// The table curve's time for `d > 0` cylinders (0 for `d == 0`): linear between the
/// knots around `d`, extrapolated from the last two past the last.
fn interpolate(dist: &[u32], ns: &[u64], d: u32) -> u64 {
    if d == 0 {
        return 0;
    }
    let i = dist.partition_point(|&k| k <= d);
    if i == 0 {
        return ns[0];
    }
    let n = dist.len();
    let (lo, hi) = if i < n {
        (i - 1, i)
    } else if n >= 2 {
        (n - 2, n - 1)
    } else {
        return ns[0];
    };
    let (d0, d1) = (dist[lo] as i64, dist[hi] as i64);
    let (t0, t1) = (ns[lo] as i64, ns[hi] as i64);
    let t = t0 + (t1 - t0) * (d as i64 - d0) / (d1 - d0);
    t.max(0) as u64
}

/// `(a*sqrt N, b*N)` of the three-point curve, in the unit of the inputs.
pub(crate) fn lee_coefficients(single: f64, avg: f64, full: f64) -> (f64, f64) {
    let a = (15.0 * avg - 10.0 * single - 5.0 * full) / 3.0;
    let b = (8.0 * full + 7.0 * single - 15.0 * avg) / 3.0;
    (a, b)
}

/// The most cylinder distances a table curve is evaluated for in advance (512 KiB).
pub(crate) const DENSE_MAX: u32 = 1 << 17;

#[derive(Clone, Debug)]
pub(crate) enum SeekCurve {
    /// Knots, and the time of every distance below `dense.len()` in ns.
    Table {
        dist: Vec<u32>,
        ns: Vec<u64>,
        dense: Vec<u32>,
    },
    ThreePoint {
        single: f64,
        a: f64,
        b: f64,
    },
}

impl SeekCurve {
    /// `cylinders` is the drive's cylinder count (full stroke = cylinders - 1).
    pub(crate) fn new(model: &SeekModel, cylinders: u32) -> SeekCurve {
        match model {
            SeekModel::Table(knots) => {
                let dist: Vec<u32> = knots.iter().map(|k| k.0).collect();
                let ns: Vec<u64> = knots.iter().map(|k| k.1 .0).collect();
                let span = if dist.is_empty() { 0 } else { cylinders.min(DENSE_MAX) };
                let dense: Option<Vec<u32>> =
                    (0..span).map(|d| u32::try_from(interpolate(&dist, &ns, d)).ok()).collect();
                SeekCurve::Table { dist, ns, dense: dense.unwrap_or_default() }
            }
            SeekModel::ThreePoint { single_cylinder, average, full_stroke } => {
                let (a_sqrt_n, b_n) =
                    lee_coefficients(single_cylinder.0 as f64, average.0 as f64, full_stroke.0 as f64);
                let n = (cylinders.max(2) - 1) as f64;
                SeekCurve::ThreePoint { single: single_cylinder.0 as f64, a: a_sqrt_n / n.sqrt(), b: b_n / n }
            }
        }
    }

    /// Seek time for a move of `d` cylinders (0 for `d == 0`).
    #[inline]
    pub(crate) fn time(&self, d: u32) -> Duration {
        if d == 0 {
            return Duration::ZERO;
        }
        match self {
            SeekCurve::Table { dist, ns, dense } => match dense.get(d as usize) {
                Some(&t) => Duration(t as u64),
                None => Duration(interpolate(dist, ns, d)),
            },
            SeekCurve::ThreePoint { single, a, b } => {
                let x = (d - 1) as f64;
                // + 0.5 and truncate: rounds the (positive) value without a libm call
                Duration((single + a * x.sqrt() + b * x + 0.5) as u64)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_interpolates_and_extrapolates() {
        let m = SeekModel::Table(vec![(1, Duration(1000)), (11, Duration(2000)), (21, Duration(2500))]);
        let c = SeekCurve::new(&m, 100);
        assert_eq!(c.time(0), Duration(0));
        assert_eq!(c.time(1), Duration(1000));
        assert_eq!(c.time(6), Duration(1500));
        assert_eq!(c.time(16), Duration(2250));
        assert_eq!(c.time(31), Duration(3000), "last slope extrapolated");
    }

    #[test]
    fn three_point_hits_its_three_points() {
        let (t1, avg, full) = (2_000_000u64, 8_900_000u64, 21_000_000u64);
        let m = SeekModel::ThreePoint {
            single_cylinder: Duration(t1),
            average: Duration(avg),
            full_stroke: Duration(full),
        };
        let n = 10_001u32;
        let c = SeekCurve::new(&m, n);
        assert_eq!(c.time(1), Duration(t1));
        assert!((c.time(n - 1).0 as i64 - full as i64).abs() < 2_000, "{}", c.time(n - 1).0);
        // exact mean over all ordered pairs of distinct cylinders, by distance histogram
        let (mut sum, mut cnt) = (0f64, 0f64);
        for d in 1..n {
            let pairs = 2.0 * (n - d) as f64;
            sum += pairs * c.time(d).0 as f64;
            cnt += pairs;
        }
        let mean = sum / cnt;
        assert!((mean / avg as f64 - 1.0).abs() < 0.01, "mean {mean}");
    }
}

//! The service-time table both sides of the harness price moves with, as the kernel
//! module's `estimator_table` attribute holds it: knots of (forward distance in sectors,
//! ns), sorted, distances increasing, times non-decreasing; linear interpolation in
//! integers between knots, clamped at both ends; a backward move costs
//! [`BACKWARD_PCT`]% more (000 Section 3.2's CSCAN preference, as headway's
//! [`headway_sched::ServiceCurve`]).

use headway_sched::{DeviceView, Duration, Sector};

/// Extra cost of a backward move, percent (`SS_BACKWARD_PCT` in stream_core.h).
pub const BACKWARD_PCT: u64 = 50;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub knots: Vec<(u64, u64)>,
    pub capacity: Sector,
    /// Backward penalty, percent: [`BACKWARD_PCT`] unless a test changes it on purpose.
    pub backward_pct: u64,
}

impl Table {
    pub fn new(knots: Vec<(u64, u64)>, capacity: Sector) -> Table {
        assert!(!knots.is_empty());
        Table { knots, capacity, backward_pct: BACKWARD_PCT }
    }

    pub fn forward(&self, dist: u64) -> u64 {
        let k = &self.knots;
        let i = k.partition_point(|&(d, _)| d <= dist);
        if i == 0 {
            return k[0].1;
        }
        if i == k.len() {
            return k[k.len() - 1].1;
        }
        let (d0, t0) = k[i - 1];
        let (d1, t1) = k[i];
        t0 + ((dist - d0) as u128 * (t1 - t0) as u128 / (d1 - d0) as u128) as u64
    }

    pub fn estimate(&self, from: Sector, to: Sector) -> u64 {
        if to >= from {
            self.forward(to - from)
        } else {
            (self.forward(from - to) as u128 * (100 + self.backward_pct) as u128 / 100) as u64
        }
    }

    /// The table as the kernel module reads and prints it: one `distance ns` pair per
    /// line.
    pub fn to_sysfs(&self) -> String {
        self.knots.iter().map(|(d, t)| format!("{d} {t}\n")).collect()
    }
}

impl DeviceView for Table {
    fn head(&self) -> Sector {
        0
    }
    fn estimate(&self, from: Sector, to: Sector) -> Duration {
        Duration(Table::estimate(self, from, to))
    }
    fn capacity(&self) -> Sector {
        self.capacity
    }
}

//! Simulated and wall-clock time as integer nanoseconds.
//!
//! The scheduling core never reads a clock: every entry point takes `now: Time`. `Time` is
//! nanoseconds since an origin the driver chooses (simulation start, server start);
//! `Duration` is a span of nanoseconds. Both are plain `u64` newtypes so they are cheap to
//! copy, totally ordered and exactly reproducible.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant, in nanoseconds since the driver's origin.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of time in nanoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// `self - earlier`, or zero when `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);
    pub const fn from_nanos(ns: u64) -> Self {
        Duration(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        Duration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        Duration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        Duration(s * 1_000_000_000)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    /// Scale by a rational factor `num/den` without floating point.
    pub fn mul_ratio(self, num: u64, den: u64) -> Duration {
        Duration(((self.0 as u128 * num as u128) / den as u128) as u64)
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Time> for Time {
    type Output = Duration;
    /// Saturates at zero: a span never goes negative.
    fn sub(self, earlier: Time) -> Duration {
        self.saturating_since(earlier)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, o: Duration) -> Duration {
        Duration(self.0.saturating_add(o.0))
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, o: Duration) {
        self.0 = self.0.saturating_add(o.0);
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, o: Duration) -> Duration {
        Duration(self.0.saturating_sub(o.0))
    }
}

impl fmt::Display for Duration {
    /// Human units: `124ms`, `2.5us`, `3s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        let (v, unit) = if ns >= 1_000_000_000 && ns.is_multiple_of(1_000_000) {
            (ns as f64 / 1e9, "s")
        } else if ns >= 1_000_000 {
            (ns as f64 / 1e6, "ms")
        } else if ns >= 1_000 {
            (ns as f64 / 1e3, "us")
        } else {
            (ns as f64, "ns")
        };
        if v.fract() == 0.0 {
            write!(f, "{}{}", v as u64, unit)
        } else {
            write!(f, "{}{}", v, unit)
        }
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}", Duration(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Time(5) - Time(9), Duration::ZERO);
        assert_eq!(Time(u64::MAX) + Duration(3), Time::MAX);
        assert_eq!(Duration::from_millis(3).mul_ratio(3, 2), Duration::from_micros(4500));
    }
    #[test]
    fn display_units() {
        assert_eq!(Duration::from_millis(124).to_string(), "124ms");
        assert_eq!(Duration::from_secs(5).to_string(), "5s");
        assert_eq!(Duration::from_nanos(2500).to_string(), "2.5us");
    }
}

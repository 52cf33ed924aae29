//! Tunables: one table of name / unit / default / doc, and the `--set NAME=VALUE` settings
//! that override them.
//!
//! Every policy and framework declares its knobs as [`Tunable`]s (Linux sysfs names where
//! Linux has the knob) and reads them from [`Settings`] at construction. A value that does
//! not parse or is out of range is an error; a setting nothing read is an error too (see
//! [`Settings::unused`]) — never silently ignored, never clamped.

use std::fmt;

use crate::time::Duration;
use crate::units::parse_time;
pub use crate::units::TimeUnit;

/// What a tunable's value is — its unit, its range and its default, typed.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Unit {
    /// A time of at least `min`; a bare number is taken in `unit`.
    Time { unit: TimeUnit, min: Duration, default: Duration },
    /// A whole number (count, sectors, KiB, ...) in `min..=max`; `what` names what it counts.
    Count { what: &'static str, min: u64, max: u64, default: u64 },
    /// A real number (a factor) in `min..=max`.
    Factor { min: f64, max: f64, default: f64 },
    /// 0/1, true/false.
    Flag { default: bool },
}

/// One knob: its name (Linux's sysfs name where Linux has the knob), what its value is
/// ([`Unit`]: unit, range, default) and what it does. Which schedulers read it is the
/// table's to say (`registry::readers`).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Tunable {
    pub name: &'static str,
    pub unit: Unit,
    pub doc: &'static str,
}

impl Tunable {
    /// The default as a user would type it (a time as a bare number in its unit when it
    /// is a whole number of them).
    pub fn default_text(&self) -> String {
        match self.unit {
            Unit::Time { unit, default, .. } => {
                let per = unit.nanos();
                if default.0 % per == 0 {
                    (default.0 / per).to_string()
                } else {
                    format!("{}ns", default.0)
                }
            }
            Unit::Count { default, .. } => default.to_string(),
            Unit::Factor { default, .. } => default.to_string(),
            Unit::Flag { default } => (default as u8).to_string(),
        }
    }
}

/// Driver merge bound, Linux's name and default: read by every scheduler that merges.
pub const MAX_SECTORS_KB: Tunable = Tunable {
    name: "max_sectors_kb",
    unit: Unit::Count { what: "KiB", min: 4, max: 1 << 20, default: 512 },
    doc: "largest request a merge may build",
};

/// A bad setting.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    #[error("setting `{0}` is not NAME=VALUE")]
    Syntax(String),
    #[error("bad value `{value}` for {name}: {why}")]
    BadValue { name: String, value: String, why: String },
    #[error("unknown setting `{0}` for the chosen scheduler(s) (see `headway tunables`)")]
    Unknown(String),
}

/// User overrides, in the order given, each remembering whether something read it.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    entries: Vec<(String, String, bool)>,
}

impl Settings {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add `NAME=VALUE`. A later setting of the same name wins.
    pub fn push_kv(&mut self, kv: &str) -> Result<(), ParamError> {
        let (k, v) = kv.split_once('=').ok_or_else(|| ParamError::Syntax(kv.to_string()))?;
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() {
            return Err(ParamError::Syntax(kv.to_string()));
        }
        self.set(k, v);
        Ok(())
    }

    pub fn set(&mut self, name: &str, value: &str) {
        self.entries.retain(|e| e.0 != name);
        self.entries.push((name.to_string(), value.to_string(), false));
    }

    /// The value the user gave for `t`, if any (it counts as read).
    fn given(&mut self, t: &Tunable) -> Option<String> {
        let e = self.entries.iter_mut().find(|e| e.0 == t.name)?;
        e.2 = true;
        Some(e.1.clone())
    }

    fn bad(t: &Tunable, value: &str, why: impl Into<String>) -> ParamError {
        ParamError::BadValue { name: t.name.to_string(), value: value.to_string(), why: why.into() }
    }

    /// A time of at least the tunable's least.
    pub fn time(&mut self, t: &Tunable) -> Result<Duration, ParamError> {
        let Unit::Time { unit, min, default } = t.unit else { panic!("{} is not a time tunable", t.name) };
        let Some(v) = self.given(t) else { return Ok(default) };
        let d = parse_time(&v, unit).map_err(|why| Self::bad(t, &v, why.to_string()))?;
        if d < min {
            let least =
                if min == Duration(1) { "longer than zero".to_string() } else { format!("at least {min}") };
            return Err(Self::bad(t, &v, format!("must be {least}")));
        }
        Ok(d)
    }

    /// A whole number in the tunable's range.
    pub fn count(&mut self, t: &Tunable) -> Result<u64, ParamError> {
        let Unit::Count { min, max, default, .. } = t.unit else {
            panic!("{} is not a count tunable", t.name)
        };
        let Some(v) = self.given(t) else { return Ok(default) };
        let n: u64 = v.parse().map_err(|_| Self::bad(t, &v, "expected a whole number"))?;
        if n < min || n > max {
            return Err(Self::bad(t, &v, format!("must be between {min} and {max}")));
        }
        Ok(n)
    }

    /// A real number in the tunable's range.
    pub fn factor(&mut self, t: &Tunable) -> Result<f64, ParamError> {
        let Unit::Factor { min, max, default } = t.unit else { panic!("{} is not a factor tunable", t.name) };
        let Some(v) = self.given(t) else { return Ok(default) };
        let x: f64 = v.parse().map_err(|_| Self::bad(t, &v, "expected a number"))?;
        if !(min..=max).contains(&x) {
            return Err(Self::bad(t, &v, format!("must be between {min} and {max}")));
        }
        Ok(x)
    }

    pub fn flag(&mut self, t: &Tunable) -> Result<bool, ParamError> {
        let Unit::Flag { default } = t.unit else { panic!("{} is not a flag tunable", t.name) };
        let Some(v) = self.given(t) else { return Ok(default) };
        match v.as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(Self::bad(t, &v, "expected 0 or 1")),
        }
    }

    /// Read `t` as its unit says, for its errors only (what building a scheduler that reads
    /// it would report).
    pub fn check(&mut self, t: &Tunable) -> Result<(), ParamError> {
        match t.unit {
            Unit::Time { .. } => self.time(t).map(drop),
            Unit::Count { .. } => self.count(t).map(drop),
            Unit::Factor { .. } => self.factor(t).map(drop),
            Unit::Flag { .. } => self.flag(t).map(drop),
        }
    }

    /// Settings nothing has read: after building every scheduler, these are errors.
    pub fn unused(&self) -> Vec<String> {
        self.entries.iter().filter(|e| !e.2).map(|e| e.0.clone()).collect()
    }

    /// Forget which settings were read (before building another scheduler from the same set).
    pub fn reset_used(&mut self) {
        for e in &mut self.entries {
            e.2 = false;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|e| (e.0.as_str(), e.1.as_str()))
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unit::Time { unit, min, .. } if *min == Duration(1) => {
                write!(f, "time (bare number in {}), > 0", unit.suffix())
            }
            Unit::Time { unit, min, .. } if *min > Duration::ZERO => {
                write!(f, "time (bare number in {}), >= {min}", unit.suffix())
            }
            Unit::Time { unit, .. } => write!(f, "time (bare number in {})", unit.suffix()),
            Unit::Count { what, min, max, .. } => write!(f, "{what}, {min} to {max}"),
            Unit::Factor { min, max, .. } => write!(f, "factor, {min} to {max}"),
            Unit::Flag { .. } => write!(f, "0/1"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Tunable = Tunable {
        name: "read_expire",
        unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(500) },
        doc: "",
    };

    /// Each tunable is declared once, its range and its typed default with it: the
    /// default lies in the range, and typed back in as its text it reads the same.
    #[test]
    fn every_default_is_in_range_and_reads_back_as_itself() {
        for t in crate::registry::tunables() {
            let in_range = match t.unit {
                Unit::Time { min, default, .. } => default >= min,
                Unit::Count { min, max, default, .. } => (min..=max).contains(&default),
                Unit::Factor { min, max, default } => (min..=max).contains(&default),
                Unit::Flag { .. } => true,
            };
            assert!(in_range, "{} default {}", t.name, t.default_text());
            let (mut given, mut not) = (Settings::new(), Settings::new());
            given.set(t.name, &t.default_text());
            let same = match t.unit {
                Unit::Time { .. } => given.time(&t) == not.time(&t),
                Unit::Count { .. } => given.count(&t) == not.count(&t),
                Unit::Factor { .. } => given.factor(&t) == not.factor(&t),
                Unit::Flag { .. } => given.flag(&t) == not.flag(&t),
            };
            assert!(same, "{} default {}", t.name, t.default_text());
        }
    }

    #[test]
    fn a_time_below_its_least_is_an_error() {
        const POSITIVE: Tunable = Tunable {
            name: "slice",
            unit: Unit::Time { unit: TimeUnit::Ms, min: Duration(1), default: Duration::from_millis(100) },
            doc: "",
        };
        let mut s = Settings::new();
        s.set("slice", "0");
        let e = s.time(&POSITIVE).unwrap_err().to_string();
        assert!(e.contains("slice") && e.contains("longer than zero"), "{e}");
        s.set("slice", "1ns");
        assert_eq!(s.time(&POSITIVE), Ok(Duration(1)));
        assert_eq!(POSITIVE.default_text(), "100");
    }

    #[test]
    fn out_of_range_is_an_error_naming_the_range() {
        let mut s = Settings::new();
        s.set("stream_threshold", "0");
        let e = s.count(&crate::framework::stream::T_STREAM_THRESHOLD).unwrap_err().to_string();
        assert!(e.contains("stream_threshold") && e.contains("between 1 and"), "{e}");
        s.set("tolerance_factor", "101");
        let e = s.factor(&crate::framework::stream::T_TOLERANCE_FACTOR).unwrap_err().to_string();
        assert!(e.contains("between 0 and 100"), "{e}");
    }

    #[test]
    fn settings_override_defaults_and_track_use() {
        let mut s = Settings::new();
        assert_eq!(s.time(&T), Ok(Duration::from_millis(500)));
        s.push_kv("read_expire=125ms").unwrap();
        s.push_kv("bogus=1").unwrap();
        assert_eq!(s.time(&T), Ok(Duration::from_millis(125)));
        assert_eq!(s.unused(), vec!["bogus".to_string()]);
        assert!(matches!(s.push_kv("novalue"), Err(ParamError::Syntax(_))));
        s.push_kv("read_expire=fast").unwrap();
        let e = s.time(&T).unwrap_err().to_string();
        assert!(e.contains("read_expire") && e.contains("fast"), "{e}");
    }
}

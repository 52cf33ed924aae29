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

/// The unit a tunable's value is given in.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Unit {
    /// A time; a bare number is taken in the given default unit.
    Time(TimeUnit),
    /// A whole number (count, sectors, KiB, ...) in `min..=max`; `what` names what it counts.
    Count { what: &'static str, min: u64, max: u64 },
    /// A real number (a factor) in `min..=max`.
    Factor { min: f64, max: f64 },
    /// 0/1, true/false.
    Flag,
}

/// One knob.
#[derive(Copy, Clone, Debug)]
pub struct Tunable {
    pub name: &'static str,
    pub unit: Unit,
    /// Default as a user would type it.
    pub default: &'static str,
    /// Which schedulers read it.
    pub scope: &'static str,
    pub doc: &'static str,
}

/// Driver merge bound, Linux's name and default: read by every scheduler that merges.
pub const MAX_SECTORS_KB: Tunable = Tunable {
    name: "max_sectors_kb",
    unit: Unit::Count { what: "KiB", min: 4, max: 1 << 20 },
    default: "512",
    scope: "all",
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

    fn raw(&mut self, t: &Tunable) -> &str {
        match self.entries.iter_mut().find(|e| e.0 == t.name) {
            Some(e) => {
                e.2 = true;
                &e.1
            }
            None => t.default,
        }
    }

    fn bad(t: &Tunable, value: &str, why: impl Into<String>) -> ParamError {
        ParamError::BadValue { name: t.name.to_string(), value: value.to_string(), why: why.into() }
    }

    pub fn time(&mut self, t: &Tunable) -> Result<Duration, ParamError> {
        let Unit::Time(u) = t.unit else { panic!("{} is not a time tunable", t.name) };
        let v = self.raw(t).to_string();
        parse_time(&v, u).map_err(|why| Self::bad(t, &v, why.to_string()))
    }

    /// A whole number in the tunable's range.
    pub fn count(&mut self, t: &Tunable) -> Result<u64, ParamError> {
        let Unit::Count { min, max, .. } = t.unit else { panic!("{} is not a count tunable", t.name) };
        let v = self.raw(t).to_string();
        let n: u64 = v.parse().map_err(|_| Self::bad(t, &v, "expected a whole number"))?;
        if n < min || n > max {
            return Err(Self::bad(t, &v, format!("must be between {min} and {max}")));
        }
        Ok(n)
    }

    /// A real number in the tunable's range.
    pub fn factor(&mut self, t: &Tunable) -> Result<f64, ParamError> {
        let Unit::Factor { min, max } = t.unit else { panic!("{} is not a factor tunable", t.name) };
        let v = self.raw(t).to_string();
        let x: f64 = v.parse().map_err(|_| Self::bad(t, &v, "expected a number"))?;
        if !(min..=max).contains(&x) {
            return Err(Self::bad(t, &v, format!("must be between {min} and {max}")));
        }
        Ok(x)
    }

    pub fn flag(&mut self, t: &Tunable) -> Result<bool, ParamError> {
        let v = self.raw(t).to_string();
        match v.as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(Self::bad(t, &v, "expected 0 or 1")),
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
            Unit::Time(u) => write!(f, "time (bare number in {})", u.suffix()),
            Unit::Count { what, min, max } => write!(f, "{what}, {min} to {max}"),
            Unit::Factor { min, max } => write!(f, "factor, {min} to {max}"),
            Unit::Flag => write!(f, "0/1"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Tunable = Tunable {
        name: "read_expire",
        unit: Unit::Time(TimeUnit::Ms),
        default: "500",
        scope: "deadline",
        doc: "",
    };

    /// Each tunable is declared once, its range with it: its default is a value it accepts.
    #[test]
    fn every_default_is_accepted_by_its_own_tunable() {
        for t in crate::registry::tunables() {
            let mut s = Settings::new();
            let ok = match t.unit {
                Unit::Time(_) => s.time(&t).is_ok(),
                Unit::Count { .. } => s.count(&t).is_ok(),
                Unit::Factor { .. } => s.factor(&t).is_ok(),
                Unit::Flag => s.flag(&t).is_ok(),
            };
            assert!(ok, "{} default {}", t.name, t.default);
        }
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

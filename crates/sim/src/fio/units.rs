//! fio's number syntax: sizes with `k/m/g/t/p` suffixes (and `kb_base`), times with
//! `ns/us/ms/s/m/h/d` suffixes, plain counts and 0/1 flags.
//!
//! Sizes and times are headway's one parser of each (`headway_sched::units`, where the
//! suffix rules and `kb_base` are set out), narrowed where fio would read the same text
//! differently. Stricter than fio, never looser: fio reads `4q` as 4 and `0.5s` as 0 (it
//! stops at the first character it does not understand); headway rejects both, so a time
//! here is a whole number (no fraction, no space before its suffix), and a percentage is
//! refused with the reason. Every function returns the reason as a `String` that names the
//! offending text; the caller adds file, line and option.
//!
//! Under fio's default `kb_base=1024` fio reads the IEC forms *backwards* (`1MiB` =
//! 1 000 000 bytes, "compatibility mode"); that trap is an error here, with a hint, rather
//! than either silent reading.

pub use headway_sched::units::TimeUnit;
use headway_sched::units::{self, SizeBase, UnitError};
use headway_sched::Duration;

/// fio's `kb_base`: what `k` means in a size.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum KbBase {
    /// `k` = 1024 (fio's default, "compatibility mode").
    #[default]
    Binary,
    /// `k` = 1000, `KiB` = 1024 (SI and IEC prefixes mean what they say).
    Decimal,
}

impl KbBase {
    fn base(self) -> SizeBase {
        match self {
            KbBase::Binary => SizeBase::FioBinary,
            KbBase::Decimal => SizeBase::Decimal,
        }
    }
}

/// A size in bytes: `512`, `4k`, `4KB`, `1g`, `0x1000`, `8KiB` (only with `kb_base=1000`).
pub fn parse_size(text: &str, kb: KbBase) -> Result<u64, String> {
    if text.contains('%') {
        return Err(format!(
            "percentages (`{text}`) are not supported: the simulated device has no fixed size \
             to take them of; give bytes"
        ));
    }
    units::parse_size(text, kb.base()).map_err(|e| e.to_string())
}

/// A time: `250` (in `unit`), `10us`, `5ms`, `2s`, `1m` (minute), `1h`, `1d`, `100ns`; a
/// whole number (fio would read `0.5s` as 0).
pub fn parse_time(text: &str, unit: TimeUnit) -> Result<Duration, String> {
    if text.contains(|c: char| c == '.' || c.is_whitespace()) {
        return Err(UnitError::MalformedTime(text.to_string()).to_string());
    }
    units::parse_time(text, unit).map_err(|e| e.to_string())
}

/// A whole number without suffix, `0x` hex allowed: counts, percentages, seeds.
pub fn parse_count(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u64::from_str_radix(hex, 16).ok()
        }
        Some(_) => None,
        None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
        None => None,
    };
    parsed.ok_or_else(|| format!("`{text}` is not a whole number (expected e.g. 0, 4, 128)"))
}

/// A 0/1 flag; a bare key (`direct`, `time_based`) means 1.
pub fn parse_flag(value: Option<&str>) -> Result<bool, String> {
    match value {
        None | Some("1") => Ok(true),
        Some("0") => Ok(false),
        Some(v) => Err(format!("`{v}` is not a flag (expected 0 or 1)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: KbBase = KbBase::Binary;
    const D: KbBase = KbBase::Decimal;

    #[test]
    fn kb_base_sets_k_and_whether_iec_suffixes_are_read() {
        assert_eq!(parse_size("4k", B), Ok(4096));
        assert_eq!(parse_size("4k", D), Ok(4000));
        assert_eq!(parse_size("4KiB", D), Ok(4096));
        assert_eq!(parse_size("1GiB", D), Ok(1 << 30));
        let e = parse_size("1GiB", B).unwrap_err();
        assert!(e.contains("ambiguous") && e.contains("`1g`") && e.contains("kb_base=1000"), "{e}");
    }

    #[test]
    fn size_errors_name_the_text() {
        let e = parse_size("4q", B).unwrap_err();
        assert_eq!(e, "malformed size `4q` (expected e.g. 4k, 1M, 512)");
        assert!(parse_size("10%", B).unwrap_err().contains("percentages"));
        assert!(parse_size("99999999999999999999", B).unwrap_err().contains("too large"));
    }

    #[test]
    fn a_time_is_a_whole_number_with_its_suffix() {
        assert_eq!(parse_time("250", TimeUnit::Us), Ok(Duration::from_micros(250)));
        assert_eq!(parse_time("1m", TimeUnit::Us), Ok(Duration::from_secs(60)));
        assert_eq!(parse_time("30", TimeUnit::S), Ok(Duration::from_secs(30)));
        for text in ["", "-1", "0.5s", "1.5ms", ".5", "5 ms", " 5ms", "5mss", "ms", "5y", "1e3"] {
            let e = parse_time(text, TimeUnit::S).unwrap_err();
            assert_eq!(e, format!("malformed time `{text}` (expected e.g. 500us, 20ms, 10s, 2m, 1h)"));
        }
        assert!(parse_time("999999999999d", TimeUnit::S).unwrap_err().contains("too large"));
    }

    #[test]
    fn counts_and_flags() {
        assert_eq!(parse_count("42"), Ok(42));
        assert_eq!(parse_count("0x2a"), Ok(42));
        for text in ["", "-1", "4k", "1.0", "0x", " 1"] {
            assert!(parse_count(text).is_err(), "{text}");
        }
        assert_eq!(parse_flag(None), Ok(true));
        assert_eq!(parse_flag(Some("1")), Ok(true));
        assert_eq!(parse_flag(Some("0")), Ok(false));
        assert!(parse_flag(Some("yes")).is_err());
        assert!(parse_flag(Some("2")).is_err());
    }
}

//! Sizes and times as people type them: one size parser and one time parser for every
//! front door — fio job files (headway-sim's `fio::units`, which narrows them to fio's
//! syntax), `--set` tunables ([`crate::params`]), `headway serve --size` and
//! `calibrate --probe-bytes` (headway-nbd), a lab spec's sizes, an `--array` stripe
//! (headway-disk).
//!
//! It lives here, in headway-sched, because every other crate depends on this one and the
//! times it returns are this crate's [`Duration`]; like the rest of the crate it reads no
//! clock and does no I/O. fio's rules are the reference; where fio is lenient (it reads
//! `4q` as 4, stopping at the first character it does not know) these parsers refuse.
//!
//! ## Sizes: [`parse_size`]`(text, base)` → bytes
//! * Surrounding whitespace is ignored; none is allowed inside.
//! * `0x` or `0X` and hex digits: bytes, no suffix (`0x1000` = 4096).
//! * Otherwise decimal digits (a whole number) and an optional suffix, in any case:
//!   `b` (bytes); `k`/`kb`, `m`/`mb`, `g`/`gb`, `t`/`tb`, `p`/`pb` (powers of *k*); and
//!   the IEC forms `kib`, `mib`, `gib`, `tib`, `pib` (powers of 1024).
//! * What *k* is, and whether the IEC forms are allowed, is the [`SizeBase`]:
//!
//!   | base | `4k` | `4KiB` |
//!   |---|---|---|
//!   | [`SizeBase::Binary`] (headway's own options) | 4096 | 4096 |
//!   | [`SizeBase::FioBinary`] (fio's default `kb_base=1024`) | 4096 | refused: fio reads it as 4000 |
//!   | [`SizeBase::Decimal`] (fio's `kb_base=1000`) | 4000 | 4096 |
//! * No fractions (`1.5g`), signs or percentages; more than 2^64 − 1 bytes is an error.
//!
//! ## Times: [`parse_time`]`(text, unit)` → [`Duration`] (whole nanoseconds)
//! * Surrounding whitespace is ignored, and whitespace between the number and its suffix.
//! * A number — decimal digits with at most one `.` (`5`, `2.5`, `.5`) — and an optional
//!   suffix, in any case: `ns`/`nsec`, `us`/`usec`/`µs`, `ms`/`msec`, `s`/`sec`,
//!   `m`/`min` (minutes, as fio), `h`, `d`. A bare number is in `unit` (fio's default
//!   differs per option: `thinktime` is in µs, `runtime` in s; a tunable declares its own).
//! * A whole number is scaled exactly; a fraction is scaled in floating point and rounded
//!   to the nearest nanosecond. More than 2^64 − 1 ns (584 years) is an error.
//!
//! Errors name the text and give an example of what would do
//! ([`UnitError`]; callers add the file, line or option).

use std::fmt;

use crate::time::Duration;

/// What `k` means in a size, and whether `KiB` may be written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SizeBase {
    /// `k` = `KiB` = 1024: headway's own options (`--size 64G`, a stripe of `64k`).
    Binary,
    /// fio's default (`kb_base=1024`): `k` = 1024. fio reads the IEC forms *backwards*
    /// there (`1MiB` = 1,000,000 bytes, its "compatibility mode"): they are refused, with a
    /// hint, rather than read either way.
    FioBinary,
    /// fio's `kb_base=1000`: `k` = 1000 and `KiB` = 1024 (each prefix means what it says).
    Decimal,
}

/// The unit of a bare number in a time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Ns,
    Us,
    Ms,
    S,
}

impl TimeUnit {
    /// Nanoseconds in one of this unit.
    pub const fn nanos(self) -> u64 {
        match self {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::S => 1_000_000_000,
        }
    }

    /// The suffix that writes it (`ms`).
    pub const fn suffix(self) -> &'static str {
        match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "us",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
        }
    }
}

/// A size or time that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnitError {
    #[error("malformed size `{0}` {SIZE_HINT}")]
    MalformedSize(String),
    #[error("size `{0}` is too large (more than 2^64 bytes)")]
    SizeTooLarge(String),
    /// An IEC suffix under [`SizeBase::FioBinary`]: the number `n` and the suffix as written.
    #[error(
        "`{text}` is ambiguous: with fio's default kb_base=1024 fio reads `{suffix}` as a power \
         of 1000 (compatibility mode); write `{n}{}` for a power of 1024, or set kb_base=1000 so \
         that `{suffix}` means what it says",
        suffix[..1].to_ascii_lowercase()
    )]
    AmbiguousIec { text: String, n: u64, suffix: String },
    #[error("malformed time `{0}` {TIME_HINT}")]
    MalformedTime(String),
    #[error("time `{0}` is too large (more than 584 years)")]
    TimeTooLarge(String),
}

/// What a malformed size's error suggests.
pub const SIZE_HINT: &str = "(expected e.g. 4k, 1M, 512)";
/// What a malformed time's error suggests.
pub const TIME_HINT: &str = "(expected e.g. 500us, 20ms, 10s, 2m, 1h)";

/// A size in bytes (the rules are the module's).
pub fn parse_size(text: &str, base: SizeBase) -> Result<u64, UnitError> {
    let t = text.trim();
    let malformed = || UnitError::MalformedSize(text.to_string());
    let too_large = || UnitError::SizeTooLarge(text.to_string());
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(malformed());
        }
        return u64::from_str_radix(hex, 16).map_err(|_| too_large());
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    if digits.is_empty() {
        return Err(malformed());
    }
    let n: u64 = digits.parse().map_err(|_| too_large())?;
    let (pow, iec) = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => (0, false),
        "k" | "kb" => (1, false),
        "m" | "mb" => (2, false),
        "g" | "gb" => (3, false),
        "t" | "tb" => (4, false),
        "p" | "pb" => (5, false),
        "kib" => (1, true),
        "mib" => (2, true),
        "gib" => (3, true),
        "tib" => (4, true),
        "pib" => (5, true),
        _ => return Err(malformed()),
    };
    let k: u64 = match (iec, base) {
        (true, SizeBase::FioBinary) => {
            return Err(UnitError::AmbiguousIec { text: text.to_string(), n, suffix: suffix.to_string() })
        }
        (true, _) => 1024,
        (false, SizeBase::Decimal) => 1000,
        (false, _) => 1024,
    };
    k.checked_pow(pow).and_then(|m| n.checked_mul(m)).ok_or_else(too_large)
}

/// A time (the rules are the module's); a bare number is in `unit`.
pub fn parse_time(text: &str, unit: TimeUnit) -> Result<Duration, UnitError> {
    let t = text.trim();
    let malformed = || UnitError::MalformedTime(text.to_string());
    let too_large = || UnitError::TimeTooLarge(text.to_string());
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, suffix) = t.split_at(split);
    let (whole, fraction) = match number.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (number, None),
    };
    let digits = whole.len() + fraction.map_or(0, str::len);
    if digits == 0 || fraction.is_some_and(|f| f.contains('.')) {
        return Err(malformed());
    }
    let scale: u64 = match suffix.trim_start().to_ascii_lowercase().as_str() {
        "" => unit.nanos(),
        "ns" | "nsec" => 1,
        "us" | "usec" | "µs" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60 * 1_000_000_000,
        "h" => 3_600 * 1_000_000_000,
        "d" => 86_400 * 1_000_000_000,
        _ => return Err(malformed()),
    };
    if fraction.is_none() {
        let n: u64 = whole.parse().map_err(|_| too_large())?;
        return n.checked_mul(scale).map(Duration::from_nanos).ok_or_else(too_large);
    }
    let v: f64 = number.parse().map_err(|_| malformed())?;
    let ns = v * scale as f64;
    if !ns.is_finite() || ns > u64::MAX as f64 {
        return Err(too_large());
    }
    Ok(Duration(ns.round() as u64))
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.suffix())
    }
}

#[cfg(test)]
mod tests;

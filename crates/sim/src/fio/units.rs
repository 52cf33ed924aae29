//! fio's number syntax: sizes with `k/m/g/t/p` suffixes (and `kb_base`), times with
//! `ns/us/ms/s/m/h/d` suffixes, plain counts and 0/1 flags.
//!
//! Stricter than fio, never looser: fio reads `4q` as 4 and `0.5s` as 0 (it stops at the
//! first character it does not understand); headway rejects both. Every function returns the
//! reason as a `String` that names the offending text; the caller adds file, line and option.
//!
//! Size suffixes are case-insensitive. With the default `kb_base=1024`, `k`/`kb` = 1024,
//! `m`/`mb` = 1024², … `p`/`pb` = 1024⁵; with `kb_base=1000` they are powers of 1000 and the
//! IEC forms `kib`/`mib`/`gib`/`tib`/`pib` are powers of 1024. Under `kb_base=1024` fio reads
//! the IEC forms *backwards* (`1MiB` = 1 000 000 bytes, "compatibility mode"); that trap is an
//! error here, with a hint, rather than either silent reading.

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
    fn k(self) -> u64 {
        match self {
            KbBase::Binary => 1024,
            KbBase::Decimal => 1000,
        }
    }
}

/// The unit of a bare number in a time option (fio's default differs per option).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Us,
    S,
}

const SIZE_HINT: &str = "(expected e.g. 4k, 1M, 512)";

/// A size in bytes: `512`, `4k`, `4KB`, `1g`, `0x1000`, `8KiB` (only with `kb_base=1000`).
pub fn parse_size(text: &str, kb: KbBase) -> Result<u64, String> {
    let bad = || format!("malformed size `{text}` {SIZE_HINT}");
    if text.contains('%') {
        return Err(format!(
            "percentages (`{text}`) are not supported: the simulated device has no fixed size \
             to take them of; give bytes"
        ));
    }
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        return u64::from_str_radix(hex, 16).map_err(|_| too_large(text));
    }
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, suffix) = text.split_at(split);
    if digits.is_empty() {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| too_large(text))?;
    let suffix = suffix.to_ascii_lowercase();
    let (pow, iec) = match suffix.as_str() {
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
        _ => return Err(bad()),
    };
    let base = match (iec, kb) {
        (false, kb) => kb.k(),
        (true, KbBase::Decimal) => 1024,
        (true, KbBase::Binary) => {
            let short = &suffix[..1];
            return Err(format!(
                "`{text}` is ambiguous: with fio's default kb_base=1024 fio reads `{}` as a \
                 power of 1000 (compatibility mode); write `{n}{short}` for a power of 1024, \
                 or set kb_base=1000 so that `{}` means what it says",
                &text[split..],
                &text[split..],
            ));
        }
    };
    base.checked_pow(pow).and_then(|m| n.checked_mul(m)).ok_or_else(|| too_large(text))
}

fn too_large(text: &str) -> String {
    format!("size `{text}` is too large (more than 2^64 bytes)")
}

/// A time: `250` (in `unit`), `10us`, `5ms`, `2s`, `1m` (minute), `1h`, `1d`, `100ns`.
pub fn parse_time(text: &str, unit: TimeUnit) -> Result<Duration, String> {
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, suffix) = text.split_at(split);
    let bad = || format!("malformed time `{text}` (expected e.g. 500us, 20ms, 10s, 2m, 1h)");
    if digits.is_empty() {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| format!("time `{text}` is too large"))?;
    let scale: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" => match unit {
            TimeUnit::Us => 1_000,
            TimeUnit::S => 1_000_000_000,
        },
        "ns" | "nsec" => 1,
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60 * 1_000_000_000,
        "h" => 3_600 * 1_000_000_000,
        "d" => 86_400 * 1_000_000_000,
        _ => return Err(bad()),
    };
    n.checked_mul(scale)
        .map(Duration::from_nanos)
        .ok_or_else(|| format!("time `{text}` is too large (more than 584 years)"))
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
    use proptest::prelude::*;

    const B: KbBase = KbBase::Binary;
    const D: KbBase = KbBase::Decimal;

    #[test]
    fn size_suffix_table_kb_base_1024() {
        let k = 1024u64;
        for (text, want) in [
            ("0", 0),
            ("512", 512),
            ("512b", 512),
            ("512B", 512),
            ("4k", 4 * k),
            ("4K", 4 * k),
            ("4kb", 4 * k),
            ("4KB", 4 * k),
            ("4kB", 4 * k),
            ("1m", k * k),
            ("1M", k * k),
            ("1MB", k * k),
            ("1g", k * k * k),
            ("51g", 51 * k * k * k),
            ("1GB", k * k * k),
            ("1t", k.pow(4)),
            ("1TB", k.pow(4)),
            ("1p", k.pow(5)),
            ("1PB", k.pow(5)),
            ("0x1000", 4096),
            ("0X10", 16),
        ] {
            assert_eq!(parse_size(text, B), Ok(want), "{text}");
        }
    }

    #[test]
    fn size_suffix_table_kb_base_1000() {
        for (text, want) in [
            ("4k", 4_000),
            ("4KB", 4_000),
            ("4KiB", 4_096),
            ("4kib", 4_096),
            ("1m", 1_000_000),
            ("1MiB", 1 << 20),
            ("1g", 1_000_000_000),
            ("1GiB", 1 << 30),
            ("1TiB", 1 << 40),
            ("1PiB", 1 << 50),
            ("512", 512),
        ] {
            assert_eq!(parse_size(text, D), Ok(want), "{text}");
        }
    }

    #[test]
    fn iec_suffix_under_kb_base_1024_is_an_error_not_a_guess() {
        let e = parse_size("1GiB", B).unwrap_err();
        assert!(e.contains("ambiguous") && e.contains("`1g`") && e.contains("kb_base=1000"), "{e}");
    }

    #[test]
    fn size_rejects_garbage() {
        for text in ["", "4q", "-1", "+4", "k", "4 k", "4kk", "1.5g", "4ki", "0x", "0xg", "4k,"] {
            let e = parse_size(text, B).unwrap_err();
            assert!(e.contains("malformed size") && e.contains(SIZE_HINT), "{text}: {e}");
        }
        assert!(parse_size("10%", B).unwrap_err().contains("percentages"));
        assert!(parse_size("99999999999999999999", B).unwrap_err().contains("too large"));
        assert!(parse_size("16777216p", B).unwrap_err().contains("too large"));
    }

    #[test]
    fn time_suffix_table() {
        let us = TimeUnit::Us;
        for (text, want) in [
            ("0", 0),
            ("250", 250_000),
            ("7ns", 7),
            ("7nsec", 7),
            ("10us", 10_000),
            ("10usec", 10_000),
            ("10US", 10_000),
            ("5ms", 5_000_000),
            ("5msec", 5_000_000),
            ("2s", 2_000_000_000),
            ("2sec", 2_000_000_000),
            ("1m", 60_000_000_000),
            ("1min", 60_000_000_000),
            ("1h", 3_600_000_000_000),
            ("1d", 86_400_000_000_000),
        ] {
            assert_eq!(parse_time(text, us), Ok(Duration::from_nanos(want)), "{text}");
        }
        assert_eq!(parse_time("30", TimeUnit::S), Ok(Duration::from_secs(30)));
    }

    #[test]
    fn time_rejects_garbage() {
        for text in ["", "-1", "0.5s", "5 ms", "5mss", "ms", "5y", "1e3"] {
            assert!(parse_time(text, TimeUnit::S).unwrap_err().contains("malformed time"), "{text}");
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

    proptest! {
        #[test]
        fn every_binary_suffix_scales(n in 0u64..(1 << 20)) {
            for (suffixes, mult) in [
                (&["", "b", "B"][..], 1u64),
                (&["k", "K", "kb", "KB", "kB"][..], 1 << 10),
                (&["m", "M", "mb", "MB"][..], 1 << 20),
                (&["g", "G", "gb", "GB"][..], 1 << 30),
                (&["t", "T", "tb", "TB"][..], 1 << 40),
            ] {
                for s in suffixes {
                    prop_assert_eq!(parse_size(&format!("{n}{s}"), B), Ok(n * mult));
                }
            }
        }

        #[test]
        fn every_decimal_suffix_scales(n in 0u64..(1 << 20)) {
            prop_assert_eq!(parse_size(&format!("{n}k"), D), Ok(n * 1_000));
            prop_assert_eq!(parse_size(&format!("{n}KiB"), D), Ok(n * 1_024));
            prop_assert_eq!(parse_size(&format!("{n}M"), D), Ok(n * 1_000_000));
            prop_assert_eq!(parse_size(&format!("{n}MiB"), D), Ok(n << 20));
            prop_assert_eq!(parse_size(&format!("{n}G"), D), Ok(n * 1_000_000_000));
            prop_assert_eq!(parse_size(&format!("{n}GiB"), D), Ok(n << 30));
        }

        #[test]
        fn every_time_suffix_scales(n in 0u64..1_000_000) {
            for (s, ns) in [("ns", 1u64), ("us", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000),
                            ("m", 60_000_000_000), ("h", 3_600_000_000_000)] {
                prop_assert_eq!(parse_time(&format!("{n}{s}"), TimeUnit::Us),
                                Ok(Duration::from_nanos(n * ns)));
            }
            prop_assert_eq!(parse_time(&n.to_string(), TimeUnit::Us), Ok(Duration::from_micros(n)));
            prop_assert_eq!(parse_time(&n.to_string(), TimeUnit::S), Ok(Duration::from_secs(n)));
        }

        #[test]
        fn sizes_never_panic(s in "\\PC{0,12}") {
            let _ = parse_size(&s, B);
            let _ = parse_size(&s, D);
            let _ = parse_time(&s, TimeUnit::S);
            let _ = parse_count(&s);
        }
    }
}

//! The rules of `units`, and the parsers it replaced as oracles: every input one of them
//! accepted reads the same here (their call sites keep their inputs and values).

use super::*;
use proptest::prelude::*;

const B: SizeBase = SizeBase::Binary;
const FB: SizeBase = SizeBase::FioBinary;
const D: SizeBase = SizeBase::Decimal;

#[test]
fn size_suffix_table() {
    let k = 1024u64;
    for (text, fio_binary, decimal) in [
        ("0", 0, 0),
        ("512", 512, 512),
        ("512b", 512, 512),
        ("512B", 512, 512),
        ("4k", 4 * k, 4_000),
        ("4K", 4 * k, 4_000),
        ("4kb", 4 * k, 4_000),
        ("4KB", 4 * k, 4_000),
        ("4kB", 4 * k, 4_000),
        ("1m", k * k, 1_000_000),
        ("1MB", k * k, 1_000_000),
        ("1g", k * k * k, 1_000_000_000),
        ("51g", 51 * k * k * k, 51_000_000_000),
        ("1GB", k * k * k, 1_000_000_000),
        ("1t", k.pow(4), 1_000u64.pow(4)),
        ("1TB", k.pow(4), 1_000u64.pow(4)),
        ("1p", k.pow(5), 1_000u64.pow(5)),
        ("1PB", k.pow(5), 1_000u64.pow(5)),
        ("0x1000", 4096, 4096),
        ("0X10", 16, 16),
        (" 64M ", 64 * k * k, 64_000_000),
    ] {
        assert_eq!(parse_size(text, FB), Ok(fio_binary), "{text}");
        assert_eq!(parse_size(text, B), Ok(fio_binary), "{text}");
        assert_eq!(parse_size(text, D), Ok(decimal), "{text}");
    }
}

#[test]
fn iec_suffixes_are_powers_of_1024_except_where_fio_reads_them_backwards() {
    for (text, want) in [("4KiB", 4u64 << 10), ("4kib", 4 << 10), ("1MiB", 1 << 20), ("2GiB", 2 << 30)] {
        assert_eq!(parse_size(text, B), Ok(want), "{text}");
        assert_eq!(parse_size(text, D), Ok(want), "{text}");
    }
    assert_eq!(parse_size("1TiB", D), Ok(1 << 40));
    assert_eq!(parse_size("1PiB", B), Ok(1 << 50));
    let e = parse_size("1GiB", FB).unwrap_err().to_string();
    assert!(e.contains("ambiguous") && e.contains("`1g`") && e.contains("kb_base=1000"), "{e}");
}

#[test]
fn size_rejects_garbage() {
    for text in ["", "4q", "-1", "+4", "k", "4 k", "4kk", "1.5g", "4ki", "0x", "0xg", "4k,", "10%"] {
        for base in [B, FB, D] {
            let e = parse_size(text, base).unwrap_err().to_string();
            assert_eq!(e, format!("malformed size `{text}` {SIZE_HINT}"), "{text}");
        }
    }
    assert!(parse_size("99999999999999999999", B).unwrap_err().to_string().contains("too large"));
    assert!(parse_size("16777216p", B).unwrap_err().to_string().contains("too large"));
    assert!(parse_size("0x10000000000000000", B).unwrap_err().to_string().contains("too large"));
}

#[test]
fn time_suffix_table() {
    for (text, want) in [
        ("0", 0),
        ("250", 250_000),
        ("7ns", 7),
        ("7nsec", 7),
        ("10us", 10_000),
        ("10usec", 10_000),
        ("10US", 10_000),
        ("10µs", 10_000),
        ("5ms", 5_000_000),
        ("5msec", 5_000_000),
        ("2s", 2_000_000_000),
        ("2sec", 2_000_000_000),
        ("1m", 60_000_000_000),
        ("1min", 60_000_000_000),
        ("1h", 3_600_000_000_000),
        ("1d", 86_400_000_000_000),
        ("2.5ms", 2_500_000),
        (".5us", 500),
        ("5.", 5_000),
        (" 5 ms ", 5_000_000),
    ] {
        assert_eq!(parse_time(text, TimeUnit::Us), Ok(Duration::from_nanos(want)), "{text}");
    }
    assert_eq!(parse_time("30", TimeUnit::S), Ok(Duration::from_secs(30)));
    assert_eq!(parse_time("500", TimeUnit::Ms), Ok(Duration::from_millis(500)));
    assert_eq!(parse_time("1.5", TimeUnit::Ns), Ok(Duration(2)));
}

#[test]
fn time_rejects_garbage() {
    for text in ["", "-1", "5mss", "ms", "5y", "1e3", ".", "1.2.3ms", "5 parsecs", "5 m s"] {
        let e = parse_time(text, TimeUnit::S).unwrap_err().to_string();
        assert_eq!(e, format!("malformed time `{text}` {TIME_HINT}"), "{text}");
    }
    assert!(parse_time("999999999999d", TimeUnit::S).unwrap_err().to_string().contains("too large"));
    assert!(parse_time("99999999999999999999", TimeUnit::Ns).unwrap_err().to_string().contains("too large"));
    assert!(parse_time("1e300", TimeUnit::Ns).is_err());
    let huge = format!("{}.0", "9".repeat(30));
    assert!(parse_time(&huge, TimeUnit::S).unwrap_err().to_string().contains("too large"));
}

/// The parsers `units` replaced, as they were: headway-nbd's `parse_size`, headway-disk's
/// stripe size (`parse_bytes`), headway-sched's `parse_time`.
mod before {
    pub fn nbd_size(s: &str) -> Option<u64> {
        let t = s.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, suf) = t.split_at(split);
        let n: u64 = num.parse().ok()?;
        let shift = match suf.to_ascii_lowercase().as_str() {
            "" | "b" => 0,
            "k" | "kib" | "kb" => 10,
            "m" | "mib" | "mb" => 20,
            "g" | "gib" | "gb" => 30,
            "t" | "tib" | "tb" => 40,
            _ => return None,
        };
        n.checked_mul(1u64 << shift)
    }

    pub fn stripe(s: &str) -> Option<u64> {
        let t = s.trim().to_ascii_lowercase();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, suf) = t.split_at(split);
        let n: u64 = num.parse().ok()?;
        let shift = match suf {
            "" | "b" => 0,
            "k" | "kib" | "kb" => 10,
            "m" | "mib" | "mb" => 20,
            _ => return None,
        };
        n.checked_mul(1 << shift)
    }

    pub fn sched_time(s: &str, unit_nanos: u64) -> Option<u64> {
        let s = s.trim();
        let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
        let (num, suffix) = s.split_at(split);
        if num.is_empty() {
            return None;
        }
        let scale = match suffix.trim().to_ascii_lowercase().as_str() {
            "" => unit_nanos,
            "ns" => 1,
            "us" | "usec" | "µs" => 1_000,
            "ms" | "msec" => 1_000_000,
            "s" | "sec" => 1_000_000_000,
            "m" | "min" => 60_000_000_000,
            _ => return None,
        };
        let v: f64 = num.parse().ok()?;
        let ns = v * scale as f64;
        if !ns.is_finite() || ns < 0.0 || ns > u64::MAX as f64 {
            return None;
        }
        Some(ns.round() as u64)
    }
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
                prop_assert_eq!(parse_size(&format!("{n}{s}"), FB), Ok(n * mult));
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
            prop_assert_eq!(parse_time(&format!("{n}{s}"), TimeUnit::Us), Ok(Duration::from_nanos(n * ns)));
        }
        prop_assert_eq!(parse_time(&n.to_string(), TimeUnit::Us), Ok(Duration::from_micros(n)));
        prop_assert_eq!(parse_time(&n.to_string(), TimeUnit::S), Ok(Duration::from_secs(n)));
    }

    /// What the server's `--size` and a stripe took, they still take, with the same value.
    #[test]
    fn old_size_inputs_read_the_same(s in "[ ]?[0-9]{1,8}(|b|B|k|K|kb|KiB|kib|m|M|mb|MiB|g|G|GiB|gb|t|T|tb|TiB)[ ]?") {
        let now = parse_size(&s, B).ok();
        if let Some(v) = before::nbd_size(&s) {
            prop_assert_eq!(now, Some(v));
        }
        if let Some(v) = before::stripe(&s) {
            prop_assert_eq!(now, Some(v));
        }
    }

    /// What a tunable took, it still takes, with the same value — up to 2^53 ns (104
    /// days), where floating point stopped counting every nanosecond of a whole number
    /// (`4612000001s` was 4612000000999999488 ns; now exact).
    #[test]
    fn old_time_inputs_read_the_same(
        s in "[ ]?[0-9]{0,9}[.]?[0-9]{0,4}[ ]?(|ns|us|usec|µs|ms|msec|MS|s|sec|m|min)[ ]?",
        unit in prop::sample::select(vec![TimeUnit::Ns, TimeUnit::Us, TimeUnit::Ms, TimeUnit::S]),
    ) {
        if let Some(v) = before::sched_time(&s, unit.nanos()).filter(|&v| v < 1 << 53) {
            prop_assert_eq!(parse_time(&s, unit), Ok(Duration(v)), "{}", s);
        }
    }

    #[test]
    fn never_panics(s in "\\PC{0,12}") {
        for base in [B, FB, D] {
            let _ = parse_size(&s, base);
        }
        let _ = parse_time(&s, TimeUnit::S);
    }
}

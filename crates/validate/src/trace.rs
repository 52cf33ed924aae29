//! DiskSim's validation trace format: `R|W Hit|Miss blkno bcount service_us
//! next_interarrival_us` a line (blkno and bcount in 512-byte sectors, times in
//! microseconds, fractions allowed). Blank lines are skipped; anything else malformed is an
//! error naming file and line.

use headway_sched::{Dir, Duration};
use headway_sim::trace::TraceError;

/// One request of a validation trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRequest {
    pub dir: Dir,
    /// The trace says the drive's cache served it.
    pub hit: bool,
    /// The trace's second column as written (`Hit`, `Miss`, or another label such as the
    /// HP C2247A trace's `Doub`/`Trip`): the per-class breakdown groups by it.
    pub class: String,
    pub sector: u64,
    pub sectors: u32,
    /// Measured service time.
    pub service: Duration,
    /// From this request's completion to the next request's arrival.
    pub next_interarrival: Duration,
}

/// Parse a validation trace; errors name the line (a [`TraceError`], as `headway replay`'s
/// parsers give them).
pub fn parse_trace(text: &str, name: &str) -> Result<Vec<TraceRequest>, TraceError> {
    let bad =
        |line: usize, why: String| TraceError::Malformed { file: name.to_string(), line: line as u64, why };
    let us = |s: &str, line: usize| -> Result<Duration, TraceError> {
        let x: f64 = s.parse().map_err(|_| bad(line, format!("bad time `{s}`")))?;
        if !(x >= 0.0 && x.is_finite()) {
            return Err(bad(line, format!("negative or invalid time `{s}`")));
        }
        Ok(Duration((x * 1e3).round() as u64))
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        if f.len() != 6 {
            return Err(bad(
                n,
                format!(
                    "expected `R|W Hit|Miss blkno bcount service_us next_interarrival_us`, found `{line}`"
                ),
            ));
        }
        let dir = match f[0] {
            "R" => Dir::Read,
            "W" => Dir::Write,
            o => return Err(bad(n, format!("expected R or W, found `{o}`"))),
        };
        let sector = f[2].parse().map_err(|_| bad(n, format!("bad blkno `{}`", f[2])))?;
        let sectors: u32 = f[3].parse().map_err(|_| bad(n, format!("bad bcount `{}`", f[3])))?;
        if sectors == 0 {
            return Err(bad(n, "bcount 0".into()));
        }
        out.push(TraceRequest {
            dir,
            hit: f[1].eq_ignore_ascii_case("hit"),
            class: f[1].to_string(),
            sector,
            sectors,
            service: us(f[4], n)?,
            next_interarrival: us(f[5], n)?,
        });
    }
    if out.is_empty() {
        return Err(TraceError::Empty { file: name.to_string() });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_parse_errors_name_the_line() {
        let t = parse_trace("R Hit 10 4 1000.0 2000.0\nW Miss 20 8 1.5 0\n", "t").unwrap();
        assert_eq!(t[1].dir, Dir::Write);
        assert_eq!(t[0].service, Duration(1_000_000));
        assert!(!t[1].hit);
        let e = parse_trace("R Hit 10 4 1000.0 2000.0\nX Hit 1 1 1 1\n", "t").unwrap_err().to_string();
        assert!(e.starts_with("t:2:"), "{e}");
        let e = parse_trace("R Hit 10 4 1000.0\n", "t").unwrap_err().to_string();
        assert!(e.starts_with("t:1:"), "{e}");
    }
}

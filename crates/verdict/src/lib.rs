//! How a reproduced figure compares with its paper, for `headway reproduce`'s simulator
//! figures (`headway_sim::reproduce`) and lab figures (`headway_lab::figures`) alike.
//!
//! A figure states what the paper says as [`Check`]s. Each check is two-sided: a value
//! with the paper's number and a band around it ([`Check::ratio`], [`Check::band`]), or a
//! statement of shape that the opposite result fails ([`Check::new`]). Its [`Verdict`]:
//! * `matches`: the paper gives numbers and every check holds;
//! * `differs`: the paper gives numbers and at least one check does not hold (the report
//!   then says why, from a measurement);
//! * `shape only`: the paper gives no number to hold a value against; its statements are
//!   reported as held or not.

use serde::Serialize;

pub mod stream_paper;

/// How a figure compares with its paper.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every checked value inside its band.
    Matches,
    /// A checked value outside its band.
    Differs,
    /// No paper value to check: the figure is reported as it came out.
    ShapeOnly,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Matches => "matches",
            Verdict::Differs => "differs",
            Verdict::ShapeOnly => "shape only",
        }
    }

    /// Every verdict, in the order an index counts them.
    pub const ALL: [Verdict; 3] = [Verdict::Matches, Verdict::Differs, Verdict::ShapeOnly];
}

/// One statement of a paper checked against a run: `held` when headway's value lies in the
/// paper's band (or has the paper's shape).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    pub what: String,
    pub headway: String,
    pub paper: String,
    pub held: bool,
}

impl Check {
    pub fn new(
        what: impl Into<String>,
        headway: impl Into<String>,
        paper: impl Into<String>,
        held: bool,
    ) -> Self {
        Check { what: what.into(), headway: headway.into(), paper: paper.into(), held }
    }

    /// A ratio against the paper's value with a band: held when `lo <= r <= hi`.
    pub fn ratio(what: impl Into<String>, r: f64, paper: f64, lo: f64, hi: f64, words: &str) -> Self {
        Check::new(
            what,
            format!("{r:.2}x"),
            format!("{paper:.2}x ({words}; band {}-{}x)", num(lo), num(hi)),
            r.is_finite() && (lo..=hi).contains(&r),
        )
    }

    /// A ratio where the paper gives words and no number (`words`: "below Noop"), held
    /// when `lo <= r <= hi` — the band the words allow, stated in the report.
    pub fn range(what: impl Into<String>, r: f64, lo: f64, hi: f64, words: &str) -> Self {
        Check::new(
            what,
            format!("{r:.2}x"),
            format!("{words} (band {}-{}x)", num(lo), num(hi)),
            r.is_finite() && (lo..=hi).contains(&r),
        )
    }

    /// A value in `unit` against the paper's with a band: held when `lo <= v <= hi`.
    pub fn band(
        what: impl Into<String>,
        v: f64,
        paper: f64,
        lo: f64,
        hi: f64,
        unit: &str,
        words: &str,
    ) -> Self {
        Check::new(
            what,
            format!("{v:.2} {unit}"),
            format!("{paper:.2} {unit} ({words}; band {}-{} {unit})", num(lo), num(hi)),
            v.is_finite() && (lo..=hi).contains(&v),
        )
    }
}

/// `x` with at most two decimals, trailing zeros dropped: 0.47, 1.8, 300.
fn num(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The verdict and its line from `checks`: `numeric` when the paper gives numbers
/// (matches / differs), else shape only (statements held or not). No checks at all is a
/// difference: a figure that checks nothing cannot match.
pub fn verdict_of(checks: &[Check], numeric: bool) -> (Verdict, String) {
    let held = checks.iter().filter(|c| c.held).count();
    let not: Vec<&str> = checks.iter().filter(|c| !c.held).map(|c| c.what.as_str()).collect();
    if checks.is_empty() {
        return (Verdict::Differs, "differs: nothing was checked".into());
    }
    let outcome = match (numeric, not.is_empty()) {
        (false, _) => Verdict::ShapeOnly,
        (true, true) => Verdict::Matches,
        (true, false) => Verdict::Differs,
    };
    let line = if not.is_empty() {
        format!("{}: all {} of the paper's statements hold", outcome.word(), checks.len())
    } else {
        format!(
            "{}: {held} of {} of the paper's statements hold — not: {}",
            outcome.word(),
            checks.len(),
            not.join("; ")
        )
    };
    (outcome, line)
}

/// The report rows of `checks`: (statement — holds / does not hold, headway, paper).
pub fn rows(checks: &[Check]) -> Vec<(String, String, String)> {
    checks
        .iter()
        .map(|c| {
            (
                format!("{} — {}", c.what, if c.held { "holds" } else { "does not hold" }),
                c.headway.clone(),
                c.paper.clone(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_band_is_two_sided() {
        assert!(Check::ratio("r", 0.8, 0.8, 0.7, 0.9, "p").held);
        assert!(!Check::ratio("r", 0.6, 0.8, 0.7, 0.9, "p").held, "below");
        assert!(!Check::ratio("r", 1.6, 0.8, 0.7, 0.9, "p").held, "above: the opposite shape");
        assert!(!Check::ratio("r", f64::NAN, 0.8, 0.7, 0.9, "p").held);
        assert!(Check::band("b", 5.0, 5.0, 4.5, 5.5, "MB/s", "p").held);
        assert!(!Check::band("b", 6.0, 5.0, 4.5, 5.5, "MB/s", "p").held);
        assert!(Check::range("w", 0.8, 0.5, 0.99, "below Noop").held);
        assert!(!Check::range("w", 1.0, 0.5, 0.99, "below Noop").held, "equal is not below");
        assert_eq!(Check::range("w", 0.8, 1.0 / 2.14, 0.8, "limited").paper, "limited (band 0.47-0.8x)");
    }

    #[test]
    fn the_verdict_follows_the_checks() {
        let ok = Check::new("a", "1", "1", true);
        let no = Check::new("b", "2", "1", false);
        assert_eq!(verdict_of(std::slice::from_ref(&ok), true).0, Verdict::Matches);
        let (v, line) = verdict_of(&[ok.clone(), no.clone()], true);
        assert_eq!(v, Verdict::Differs);
        assert!(line.contains("1 of 2") && line.contains("not: b"), "{line}");
        assert_eq!(verdict_of(&[ok, no], false).0, Verdict::ShapeOnly);
        assert_eq!(verdict_of(&[], true).0, Verdict::Differs, "nothing checked never matches");
    }
}

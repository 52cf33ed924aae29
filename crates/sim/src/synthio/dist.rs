//! DiskSim's distributions for synthetic workloads (`disksim_synthgen`'s think times,
//! distances and sizes), sampled with exactly DiskSim's draws, in its order.
//!
//! A distribution is written `[ NAME, numbers... ]`; the numbers are taken as written (4.0
//! scales nothing). `U` is a fresh [`Rand48`] draw:
//!
//! | written | value | draws |
//! |---|---|---|
//! | `[ uniform, a, b ]` | `a + (b - a) U` | 1 |
//! | `[ normal, m, s ]` | `m + s Z`: `s` is the standard deviation. `Z`: draw `E2 = -ln(1 - U)`, `E1 = -ln(1 - U)` until `E2 - (E1 - 1)^2 / 2 > 0`, then `-E1` if the next `U < 0.5`, else `E1` | 2 a try + 1 |
//! | `[ exponential, base, mean ]` | `base - mean ln(1 - U)` | 1 |
//! | `[ poisson, base, mean ]` | `base + k`: multiply `P = 1` by draws while `P >= e^-mean`; `k` is the multiplications less one | k + 1 |
//! | `[ twovalue, default, second, p ]` | `second` if `U < p`, else `default` | 1 |

use headway_disk::parv::syntax::{Pos, Value};

use super::rand48::Rand48;
use super::SynthError;

/// One distribution.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Dist {
    Uniform { low: f64, high: f64 },
    Normal { mean: f64, sd: f64 },
    Exponential { base: f64, mean: f64 },
    Poisson { base: f64, mean: f64 },
    TwoValue { default: f64, second: f64, p: f64 },
}

impl Dist {
    /// `[ NAME, numbers ]` as the file writes it (`key` names the parameter in errors).
    pub fn parse(v: &Value, key: &str) -> Result<Dist, SynthError> {
        let bad = |at: &Pos, msg: String| Err(SynthError { at: at.clone(), msg });
        let Value::List(items, at) = v else {
            return bad(v.pos(), format!("`{key}` must be a [ distribution, numbers ] list"));
        };
        let Some(Value::Word(name, _)) = items.first() else {
            return bad(
                at,
                format!("`{key}`: the list starts with uniform, normal, exponential, poisson or twovalue"),
            );
        };
        let mut nums = Vec::new();
        for x in &items[1..] {
            match x {
                Value::Num(n, _) => nums.push(*n),
                other => return bad(other.pos(), format!("`{key}`: `{name}` takes numbers")),
            }
        }
        let want = if name == "twovalue" { 3 } else { 2 };
        let dist = match (name.as_str(), nums.as_slice()) {
            ("uniform", &[low, high]) => Dist::Uniform { low, high },
            ("normal", &[mean, sd]) => Dist::Normal { mean, sd },
            ("exponential", &[base, mean]) => Dist::Exponential { base, mean },
            ("poisson", &[base, mean]) => Dist::Poisson { base, mean },
            ("twovalue", &[default, second, p]) => Dist::TwoValue { default, second, p },
            ("uniform" | "normal" | "exponential" | "poisson" | "twovalue", _) => {
                return bad(at, format!("`{key}`: `{name}` takes {want} numbers, not {}", nums.len()))
            }
            (other, _) => {
                return bad(
                    at,
                    format!("`{key}`: unknown distribution `{other}` (uniform, normal, exponential, poisson, twovalue)"),
                )
            }
        };
        Ok(dist)
    }

    /// One sample.
    pub fn sample(&self, r: &mut Rand48) -> f64 {
        match *self {
            Dist::Uniform { low, high } => low + (high - low) * r.next_f64(),
            Dist::Normal { mean, sd } => {
                let e1 = loop {
                    let e2 = -(1.0 - r.next_f64()).ln();
                    let e1 = -(1.0 - r.next_f64()).ln();
                    if e2 - (e1 - 1.0) * (e1 - 1.0) / 2.0 > 0.0 {
                        break e1;
                    }
                };
                let z = if r.next_f64() < 0.5 { -e1 } else { e1 };
                mean + sd * z
            }
            Dist::Exponential { base, mean } => base - mean * (1.0 - r.next_f64()).ln(),
            Dist::Poisson { base, mean } => {
                let floor = (-mean).exp();
                let (mut p, mut c) = (1.0, 0u64);
                while p >= floor {
                    p *= r.next_f64();
                    c += 1;
                }
                base + (c - 1) as f64
            }
            Dist::TwoValue { default, second, p } => {
                if r.next_f64() < p {
                    second
                } else {
                    default
                }
            }
        }
    }

    /// A sample redrawn until it is at least 0 (think times).
    pub fn nonnegative(&self, r: &mut Rand48) -> f64 {
        loop {
            let x = self.sample(r);
            if x >= 0.0 {
                return x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headway_disk::parv::syntax::parse_str;

    fn parse(text: &str) -> Result<Dist, SynthError> {
        let doc = parse_str(&format!("b x {{ d = {text} }}"), std::path::Path::new("t.parv"), 0).unwrap();
        Dist::parse(&doc.blocks[0].entries[0].value, "d")
    }

    #[test]
    fn each_takes_its_draws_in_disksim_order() {
        let draws = |seed| {
            let mut r = Rand48::seeded(seed);
            (0..8).map(|_| r.next_f64()).collect::<Vec<_>>()
        };
        let u = draws(7);
        let mut r = Rand48::seeded(7);
        assert_eq!(parse("[ uniform, 2.0, 6.0 ]").unwrap().sample(&mut r), 2.0 + 4.0 * u[0]);
        assert_eq!(
            parse("[ exponential, 1.0, 10.0 ]").unwrap().sample(&mut r),
            1.0 - 10.0 * (1.0 - u[1]).ln()
        );
        let two = parse("[ twovalue, 3.0, 9.0, 0.5 ]").unwrap().sample(&mut r);
        assert_eq!(two, if u[2] < 0.5 { 9.0 } else { 3.0 });
        // poisson: draws multiply until the product falls below e^-mean
        let mut r = Rand48::seeded(7);
        let k = parse("[ poisson, 0.0, 2.0 ]").unwrap().sample(&mut r);
        let (mut p, mut used) = (1.0, 0);
        while p >= (-2.0f64).exp() {
            p *= u[used];
            used += 1;
        }
        assert_eq!(k, (used - 1) as f64);
        assert_eq!(r.next_f64(), u[used], "poisson takes k + 1 draws");
    }

    #[test]
    fn normal_uses_its_third_number_as_the_standard_deviation() {
        let d = parse("[ normal, 0.0, 40000.0 ]").unwrap();
        let mut r = Rand48::seeded(1);
        let xs: Vec<f64> = (0..20000).map(|_| d.sample(&mut r)).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let sd = (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / xs.len() as f64).sqrt();
        assert!(mean.abs() < 1000.0, "mean {mean}");
        assert!((sd / 40000.0 - 1.0).abs() < 0.03, "sd {sd}");
    }

    #[test]
    fn a_bad_distribution_names_its_parameter_and_line() {
        for (text, says) in [
            ("[ gamma, 1.0, 2.0 ]", "unknown distribution `gamma`"),
            ("[ uniform, 1.0 ]", "takes 2 numbers, not 1"),
            ("[ twovalue, 1.0, 2.0 ]", "takes 3 numbers"),
            ("7.0", "must be a [ distribution"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with("t.parv:1:") && e.contains("`d`") && e.contains(says), "{text}: {e}");
        }
    }
}

//! The Stream Scheduling paper's (seeds/000) statements on its figures, as checks: shared by
//! the simulator's figures (`ss-fig3`, ...) and the lab's, which run the same experiments
//! with the `stream` elevator in a real guest (`ss-fig3-elevator`, ...).

use crate::Check;

/// Figure 3 (000 §3.3): SS "about 3.2X throughput improvement over the other schedulers"
/// (band ±15%: 2.7-3.7x).
pub fn fig3_ss_over(what: &str, r: f64) -> Check {
    Check::ratio(what, r, 3.2, 2.7, 3.7, "about 3.2X over the other schedulers")
}

/// Figure 3: a work-conserving scheduler "as low as Noop" (0.85-1.15x Noop).
pub fn fig3_as_noop(what: &str, r: f64, words: &str) -> Check {
    Check::range(what, r, 0.85, 1.15, words)
}

/// Figure 5 (000 §3.4), multi-threads: SS "more than doubles" Deadline (2.0x, capped by the
/// paper's largest gain anywhere, 3.2x, and 15%: 2.0-3.7x).
pub fn fig5_mt_ss_over_deadline(r: f64) -> Check {
    Check::range("multi-threads: SS / Deadline", r, 2.0, 3.7, "more than doubles")
}

/// Figure 4's thinktimes (µs).
pub const FIG4_THINKTIMES: [u64; 5] = [0, 50, 100, 200, 400];

/// The paper's statements on Figure 4 (000 §3.3), given SS / Deadline at each of
/// [`FIG4_THINKTIMES`]: "about 3.2X" at thinktime 0 (band 2.7-3.7x); the improvement
/// "becomes increasingly small" as the thinktime grows (each ratio at most 5% above the
/// one before); from 200 µs streams break and SS "behave\[s\] like Deadline" (0.85-1.15x at
/// 200 and 400 µs).
pub fn fig4_statements(ratios: &[(u64, f64)]) -> Vec<Check> {
    let mut v = vec![Check::ratio("thinktime 0: SS / Deadline", ratios[0].1, 3.2, 2.7, 3.7, "about 3.2X")];
    let falling = ratios.windows(2).all(|w| w[1].1 <= w[0].1 * 1.05);
    v.push(Check::new(
        "the advantage shrinks as the thinktime grows",
        ratios.iter().map(|(t, r)| format!("{r:.2}x at {t} us")).collect::<Vec<_>>().join(", "),
        "increasingly small (each at most 5% above the one before)",
        falling,
    ));
    for &(t, r) in ratios.iter().filter(|(t, _)| *t >= 200) {
        v.push(Check::range(
            format!("thinktime {t} us: SS / Deadline"),
            r,
            0.85,
            1.15,
            "streams break, SS behaves like Deadline",
        ));
    }
    v
}

/// Figure 7(a)'s time slices (ms).
pub const FIG7A_SLICES: [u64; 6] = [10, 25, 50, 100, 124, 200];
/// Figure 7(a)'s thinktimes (µs): I/O-intensive, and less so.
pub const FIG7A_THINKTIMES: [u64; 2] = [0, 100];

/// The paper's statements on Figure 7(a) (000 §3.6), given stream:deadline's MB/s at each
/// of [`FIG7A_SLICES`], per thinktime of [`FIG7A_THINKTIMES`] (the first the most
/// I/O-intensive): words only. "the throughput improves with the increasing time slice"
/// (no step down by more than 5%); "improves quickly ... before the time slice reaches
/// 100ms" (100 ms at least 1.3x 10 ms, at thinktime 0); "after that ... only diminishing
/// returns" (200 ms within 0.95-1.1x 124 ms); "the more I/O intensive ... the larger the
/// improvement" (the 100-over-10 ms gain smaller at the larger thinktime).
pub fn fig7a_statements(curves: &[Vec<f64>]) -> Vec<Check> {
    let gain = |v: &[f64]| v[3] / v[0];
    let v = &curves[0];
    let mut out = vec![Check::new(
        "throughput never falls as the slice grows",
        curves.iter().flatten().map(|x| format!("{x:.1}")).collect::<Vec<_>>().join(", "),
        "improves with the increasing time slice (no step down by more than 5%)",
        curves.iter().all(|c| c.windows(2).all(|w| w[1] >= 0.95 * w[0])),
    )];
    out.push(Check::range(
        "thinktime 0: 100 ms slice / 10 ms",
        gain(v),
        1.3,
        10.0,
        "improves quickly before 100ms",
    ));
    out.push(Check::range(
        "thinktime 0: 200 ms slice / 124 ms",
        v[5] / v[4],
        0.95,
        1.1,
        "only diminishing returns",
    ));
    if let Some(slow) = curves.get(1) {
        out.push(Check::new(
            "the gain from 10 to 100 ms: less I/O-intensive over thinktime 0",
            format!("{:.2}x against {:.2}x", gain(slow), gain(v)),
            "the more I/O intensive, the larger the improvement",
            gain(slow) < gain(v),
        ));
    }
    out
}

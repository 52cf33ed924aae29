//! The DiskSim must-shows on DiskSim's own validation data (`data/disksim-valid` in the
//! repository; the tests fail without it): per drive, headway's
//! demerit at most DiskSim 4.0's. The drives headway does not meet yet are `#[ignore]`d
//! (`make disksim-goals` runs them) and guarded by `open_gaps_do_not_widen`.

use std::path::PathBuf;

use crate::score::score;

/// The DiskSim reference data (`data/` in the repository): missing, the
/// test that asks for it fails.
fn reference() -> PathBuf {
    let dir = headway_disk::reference_data().join("disksim-valid");
    assert!(dir.exists(), "{} missing: the DiskSim reference data", dir.display());
    dir
}

/// headway's demerit on one validated drive (`NAME.parv` against `NAME.trace`).
fn headway_demerit(stem: &str) -> f64 {
    let dir = reference();
    let s = score(dir.join(format!("{stem}.parv")).to_str().unwrap(), &dir.join(format!("{stem}.trace")))
        .unwrap();
    eprintln!("{stem}: headway {:.3} ms", s.demerit_ms);
    s.demerit_ms
}

/// The must-show, one test per drive: headway's demerit at most DiskSim 4.0's (the
/// figures of the reference README). Drives where headway does not get there yet are
/// `#[ignore]`d with their numbers (BENCHMARKS.md, "DiskSim validation") and guarded
/// against regressions by `open_gaps_do_not_widen`.
macro_rules! beats_disksim {
    ($($(#[$attr:meta])* $test:ident: $stem:literal <= $disksim:literal;)*) => {$(
        $(#[$attr])*
        #[test]
        fn $test() {
            let d = headway_demerit($stem);
            assert!(d <= $disksim, "{}: headway {d:.3} ms > DiskSim {} ms", $stem, $disksim);
        }
    )*};
}

// 0.318 is DiskSim's figure for the Cheetah 4LP, not 1/pi.
#[allow(clippy::approx_constant)]
mod scores {
    use super::*;
    beats_disksim! {
        cheetah4lp_beats_disksim: "cheetah4LP" <= 0.318;
        atlas_iii_beats_disksim: "atlas_III" <= 0.378;
        #[ignore = "open: headway 0.138 ms (0.138 binned as DiskSim bins) vs DiskSim 0.136 ms"]
        ibm18es_beats_disksim: "ibm18es" <= 0.136;
        #[ignore = "open: headway 0.351 ms (0.350 binned as DiskSim bins) vs DiskSim 0.348 ms"]
        barracuda_beats_disksim: "barracuda" <= 0.348;
        cheetah9lp_beats_disksim: "cheetah9LP" <= 0.107;
        #[ignore = "open: headway 0.090058 ms (0.086 binned as DiskSim bins) vs DiskSim 0.090 ms"]
        hp_c2247a_beats_disksim: "hp_c2247a" <= 0.090;
    }
}

/// Like for like: through DiskSim's own binned estimator, headway's models score at most
/// DiskSim's figure on four drives (hp_c2247a too: 0.086 ms binned vs its 0.090 exact);
/// ibm18es and barracuda stay above it either way (0.138, 0.350).
#[test]
#[allow(clippy::approx_constant)]
fn binned_like_disksim_at_most_disksim_on_four_drives() {
    let dir = reference();
    for (stem, disksim) in
        [("atlas_III", 0.378), ("cheetah4LP", 0.318), ("cheetah9LP", 0.107), ("hp_c2247a", 0.090)]
    {
        let s = score(dir.join(format!("{stem}.parv")).to_str().unwrap(), &dir.join(format!("{stem}.trace")))
            .unwrap();
        assert!(
            s.demerit_binned_ms <= disksim,
            "{stem}: binned {:.4} > DiskSim {disksim}",
            s.demerit_binned_ms
        );
    }
}

/// Regression guard for the drives still above DiskSim: today's figure + 2%.
#[test]
fn open_gaps_do_not_widen() {
    for (stem, now) in [("ibm18es", 0.138), ("barracuda", 0.351), ("hp_c2247a", 0.0901)] {
        let d = headway_demerit(stem);
        assert!(d <= now * 1.02, "{stem}: {d:.3} ms, was {now} ms");
    }
}

#[test]
fn deterministic() {
    let dir = reference();
    let p = dir.join("ibm18es.parv");
    let a = score(p.to_str().unwrap(), &dir.join("ibm18es.trace")).unwrap();
    let b = score(p.to_str().unwrap(), &dir.join("ibm18es.trace")).unwrap();
    assert_eq!(a.to_json(), b.to_json());
}

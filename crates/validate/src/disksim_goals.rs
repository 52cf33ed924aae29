//! The DiskSim must-shows on DiskSim's own validation data (`data/disksim-valid` and
//! `data/disksim-oracle` in the repository; the tests fail without them): per drive,
//! headway's demerit at most DiskSim 4.0's.
//!
//! Like for like: DiskSim's per-request answers on each validation trace
//! (`NAME.valid.disksim`) are scored with the same estimator as headway's, so the two
//! figures differ only by what the two models answer. headway now answers as DiskSim does
//! on 99.8-100% of the requests, so the two figures agree to a few nanoseconds; the test
//! allows 10 ns above DiskSim's (the answers file gives each time to the nanosecond, and
//! the RMS of 10,000 such roundings moves by that much). DiskSim's published figures come
//! from its binned estimator, which headway also computes: within 0.2 us of them.

use std::path::PathBuf;

use crate::demerit::demerit;
use crate::score::score;

/// The DiskSim reference data (`data/` in the repository): missing, the test that asks
/// for it fails.
fn reference() -> PathBuf {
    let dir = headway_disk::reference_data();
    assert!(dir.join("disksim-valid").exists(), "{} missing: the DiskSim reference data", dir.display());
    dir
}

/// headway's score on one validated drive (`NAME.parv` against `NAME.trace`).
fn headway_score(stem: &str) -> crate::Score {
    let dir = reference().join("disksim-valid");
    score(dir.join(format!("{stem}.parv")).to_str().unwrap(), &dir.join(format!("{stem}.trace"))).unwrap()
}

/// The demerit of DiskSim 4.0's own answers on the validation trace, headway's estimator.
fn disksim_demerit(stem: &str) -> f64 {
    let path = reference().join(format!("disksim-oracle/{stem}.valid.disksim"));
    let [measured, simulated] = crate::oracle::columns(&path, [3, 4]).unwrap();
    demerit(&simulated, &measured)
}

/// Allowed above DiskSim's figure (see the module doc).
const NS: f64 = 1e-5;

/// The must-show, one test per drive: headway's demerit at most DiskSim 4.0's, like for
/// like.
macro_rules! beats_disksim {
    ($($test:ident: $stem:literal;)*) => {$(
        #[test]
        fn $test() {
            let (ours, theirs) = (headway_score($stem).demerit_ms, disksim_demerit($stem));
            eprintln!("{}: headway {ours:.7} ms, DiskSim {theirs:.7} ms", $stem);
            assert!(ours <= theirs + NS, "{}: headway {ours:.7} ms > DiskSim {theirs:.7} ms", $stem);
        }
    )*};
}

mod scores {
    use super::*;
    beats_disksim! {
        cheetah4lp_beats_disksim: "cheetah4LP";
        atlas_iii_beats_disksim: "atlas_III";
        ibm18es_beats_disksim: "ibm18es";
        barracuda_beats_disksim: "barracuda";
        cheetah9lp_beats_disksim: "cheetah9LP";
        hp_c2247a_beats_disksim: "hp_c2247a";
    }
}

/// Through DiskSim's own binned estimator, headway's figure is within 0.2 us of DiskSim's
/// published one on every drive (their last digit), below it on three.
#[test]
#[allow(clippy::approx_constant)]
fn binned_like_disksim_matches_its_published_figures() {
    let published = [
        ("atlas_III", 0.3779),
        ("barracuda", 0.3476),
        ("cheetah4LP", 0.3180),
        ("cheetah9LP", 0.1069),
        ("hp_c2247a", 0.0899),
        ("ibm18es", 0.1359),
    ];
    let mut below = 0;
    for (stem, disksim) in published {
        let b = headway_score(stem).demerit_binned_ms;
        eprintln!("{stem}: binned {b:.6} ms, DiskSim published {disksim} ms");
        assert!(b <= disksim + 2e-4, "{stem}: binned {b:.6} > DiskSim {disksim} + 0.0002");
        below += usize::from(b <= disksim);
    }
    assert!(below >= 3, "{below} of 6 at or below DiskSim's figure");
}

#[test]
fn deterministic() {
    let a = headway_score("ibm18es");
    let b = headway_score("ibm18es");
    assert_eq!(a.to_json(), b.to_json());
}

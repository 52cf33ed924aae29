//! The estimator's curve for a modelled drive, measured the way 000 Section 3.2 calibrates
//! a real disk: requests at many distances, service times recorded, a smooth curve fitted.

use headway_disk::{calibration_samples, DiskSpec};
use headway_sched::ServiceCurve;

/// Samples taken per calibration; enough that the fitted curve's knots average over many
/// rotational positions.
pub const CALIBRATION_SAMPLES: usize = 4000;

/// Logarithmic resolution of the fitted curve.
pub const BINS_PER_DECADE: u32 = 8;

pub fn curve_for(disk: &DiskSpec) -> ServiceCurve {
    ServiceCurve::fit(&calibration_samples(disk, CALIBRATION_SAMPLES), BINS_PER_DECADE)
}

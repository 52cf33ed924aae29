//! What a scheduler may know about the device: where the head is assumed to be and how long
//! a move costs. Drivers implement [`DeviceView`]; policies only read it.

use crate::estimate::ServiceCurve;
use crate::request::Sector;
use crate::time::Duration;

/// Narrow read-only view of a device, handed to every decision.
pub trait DeviceView {
    /// The head position a scheduler should assume: the end of the last completed request,
    /// or of the request last put in the device queue when the drive queues commands.
    fn head(&self) -> Sector;
    /// Estimated service time of a request at `to` with the head at `from`.
    fn estimate(&self, from: Sector, to: Sector) -> Duration;
    /// Estimated positioning time between `from` and `to` whichever way the head moves: the
    /// forward estimate over the same distance. [`estimate`](Self::estimate) may charge
    /// backward moves extra to steer a policy (the CSCAN preference of the stream
    /// framework); this is the unbiased cost 001 Section 3.6 fits against the LBN
    /// difference, which anticipation weighs against thinktimes.
    fn positioning(&self, from: Sector, to: Sector) -> Duration {
        self.estimate(from.min(to), from.max(to))
    }
    /// Device size in sectors.
    fn capacity(&self) -> Sector;
}

/// A `DeviceView` over a fitted service curve and a head position, as drivers keep it.
#[derive(Clone, Debug)]
pub struct CurveView<'a> {
    pub head: Sector,
    pub curve: &'a ServiceCurve,
    pub capacity: Sector,
}

impl DeviceView for CurveView<'_> {
    fn head(&self) -> Sector {
        self.head
    }
    fn estimate(&self, from: Sector, to: Sector) -> Duration {
        self.curve.estimate(from, to)
    }
    fn capacity(&self) -> Sector {
        self.capacity
    }
}

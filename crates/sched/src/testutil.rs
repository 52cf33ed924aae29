//! Helpers for unit tests: synthetic requests and device views.

use crate::device::DeviceView;
use crate::request::{Dir, ReqId, Request, Sector};
use crate::time::{Duration, Time};

/// A synchronous read with id `id` at `sector`, `len` sectors, arrival 0, no context.
pub fn rq(id: u64, sector: Sector, len: u32) -> Request {
    Request { id: ReqId(id), sector, len, dir: Dir::Read, sync: true, arrival: Time(0), ctx: None }
}

/// A device view whose estimate is `base + |distance| ns` (backward costs 1.5x), head fixed.
pub struct FixedView {
    pub head: Sector,
    pub base: u64,
    pub capacity: Sector,
}

impl FixedView {
    pub fn linear(head: Sector) -> Self {
        FixedView { head, base: 100_000, capacity: 1 << 32 }
    }
}

impl DeviceView for FixedView {
    fn head(&self) -> Sector {
        self.head
    }
    fn estimate(&self, from: Sector, to: Sector) -> Duration {
        if to >= from {
            Duration(self.base + (to - from))
        } else {
            Duration((self.base + (from - to)) * 3 / 2)
        }
    }
    fn capacity(&self) -> Sector {
        self.capacity
    }
}

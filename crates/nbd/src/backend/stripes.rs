//! The striped lock table of a `direct` export: [`Stripes`] keeps a read-modify-write of
//! a block clear of other writes to it (see [`Direct`](super::direct::Direct) for who
//! holds which stripes, and how).

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Number of lock stripes of a `direct` export.
const STRIPES: usize = 64;

/// Read-write locks keyed by block number modulo [`STRIPES`] (see
/// [`Direct`](super::direct::Direct)).
#[derive(Debug)]
pub(super) struct Stripes(Box<[RwLock<()>]>);

/// Stripes held by one request; released on drop.
pub(super) struct StripeGuards<'a> {
    _shared: Vec<RwLockReadGuard<'a, ()>>,
    _exclusive: Vec<RwLockWriteGuard<'a, ()>>,
}

impl Stripes {
    pub(super) fn new() -> Stripes {
        Stripes((0..STRIPES).map(|_| RwLock::new(())).collect())
    }

    /// Lock the stripes of blocks `first..=last`: exclusive for the blocks in `exclusive`,
    /// shared for the others; in stripe order.
    pub(super) fn lock(&self, first: u64, last: u64, exclusive: &[Option<u64>]) -> StripeGuards<'_> {
        let bit = |b: u64| 1u64 << (b % STRIPES as u64);
        let all = if last - first >= STRIPES as u64 - 1 {
            u64::MAX
        } else {
            (first..=last).fold(0, |m, b| m | bit(b))
        };
        let excl = exclusive.iter().flatten().fold(0, |m, &b| m | bit(b));
        let mut g = StripeGuards { _shared: Vec::new(), _exclusive: Vec::new() };
        for (i, l) in self.0.iter().enumerate() {
            if excl >> i & 1 != 0 {
                g._exclusive.push(l.write().unwrap_or_else(|e| e.into_inner()));
            } else if all >> i & 1 != 0 {
                g._shared.push(l.read().unwrap_or_else(|e| e.into_inner()));
            }
        }
        g
    }
}

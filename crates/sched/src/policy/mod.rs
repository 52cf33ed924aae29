//! The work-conserving policy contract.
//!
//! A policy holds pending requests and, asked at a decision point, names the one it would
//! dispatch. It never waits: waiting is what the frameworks in [`crate::framework`] add.
//! The split `select` / `take` lets a framework look at the policy's choice (to price it)
//! without committing to it; `take` is the commit and updates any batching state.
//!
//! Call order a driver (or framework) follows: `merge` (optional) then `add` on arrival;
//! `select` and then `take` of the chosen — or of any other queued — id on dispatch;
//! `completed` when the device finishes. Every added request is taken exactly once.

use crate::device::DeviceView;
use crate::request::{ReqId, Request};
use crate::time::Time;

pub trait Policy {
    /// Registry name (`deadline`, `sptf`, ...).
    fn name(&self) -> &'static str;

    /// Offer `rq` for merging into a queued request. On success the policy has grown the
    /// queued request to cover `rq` (it keeps its id) and returns that id; `rq` is then not
    /// added. `max_sectors` bounds a merged request's length.
    fn merge(&mut self, _now: Time, _rq: &Request, _max_sectors: u32) -> Option<ReqId> {
        None
    }

    /// Queue a request.
    fn add(&mut self, now: Time, rq: Request);

    /// The request this policy would dispatch next. Does not commit.
    fn select(&mut self, now: Time, dev: &dyn DeviceView) -> Option<ReqId>;

    /// Remove a queued request for dispatch (the selected one or any other).
    /// Panics if `id` is not queued: that is a driver bug.
    fn take(&mut self, now: Time, id: ReqId) -> Request;

    /// Look at a queued request.
    fn get(&self, id: ReqId) -> Option<&Request>;

    /// Does the policy insist on dispatching now (an expired deadline, an aged request)?
    fn urgent(&self, now: Time) -> bool;

    /// The earliest future time at which `urgent` may turn true without new arrivals.
    fn next_urgent_at(&self) -> Option<Time> {
        None
    }

    /// The device finished a request this policy dispatched.
    fn completed(&mut self, _now: Time, _rq: &Request) {}

    /// Number of queued requests.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Can `rq` be appended to `q` (a back merge) under the size bound?
pub fn back_mergeable(q: &Request, rq: &Request, max_sectors: u32) -> bool {
    q.dir == rq.dir && q.end() == rq.sector && q.len as u64 + rq.len as u64 <= max_sectors as u64
}

/// Can `rq` be prepended to `q` (a front merge) under the size bound?
pub fn front_mergeable(q: &Request, rq: &Request, max_sectors: u32) -> bool {
    q.dir == rq.dir && rq.end() == q.sector && q.len as u64 + rq.len as u64 <= max_sectors as u64
}



pub mod noop;

pub use noop::Noop;

use crate::params::{Settings, Tunable};
use crate::registry::BuildError;

/// Every policy tunable, for the registry's table.
pub const TUNABLES: &[Tunable] = &[];

/// Build a work-conserving policy by name; `Ok(None)` when the name is not a policy.
pub fn build(name: &str, _settings: &mut Settings) -> Result<Option<Box<dyn super::Policy>>, BuildError> {
    Ok(match name {
        "noop" => Some(Box::new(Noop::new())),
        _ => None,
    })
}

//! The scheduler contract every driver (simulator, server) runs.
//!
//! A driver calls [`Scheduler::decide`] whenever the device can take a request. The answer
//! is a value, never a side effect on time: dispatch this request, come back at `t` (a
//! non-work-conserving wait), or nothing to do. On `WaitUntil(t)` the driver arms a timer
//! and calls `decide` again at `t` or at the next arrival, whichever is first.

use crate::device::DeviceView;
use crate::ioprio::IoPrio;
use crate::policy::Policy;
use crate::qos::Qos;
use crate::request::{ContextId, ReqId, Request};
use crate::time::Time;

/// What to do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Send this request to the device now.
    Dispatch(Request),
    /// Keep the device idle; ask again at this time (or on the next arrival).
    WaitUntil(Time),
    /// Nothing is pending and nothing is worth waiting for.
    Idle,
}

/// Outcome of an arrival.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The request is queued under its own id.
    Queued,
    /// The request was merged into queued request `into`; it completes when `into` does.
    Merged { into: ReqId },
}

pub trait Scheduler: Send {
    /// Full name, e.g. `stream:deadline`.
    fn name(&self) -> String;
    /// Does this scheduler keep the device idle on purpose (answer
    /// [`Decision::WaitUntil`])? Every scheduler but the work-conserving ones does; the
    /// table's rows say the same ([`crate::table::Row::waits`]).
    fn waits(&self) -> bool {
        true
    }
    /// A request reaches the scheduler. `dev` prices moves (stream scheduling's child test).
    fn arrive(&mut self, now: Time, rq: Request, dev: &dyn DeviceView) -> Arrival;
    /// The device can take a request: what now?
    fn decide(&mut self, now: Time, dev: &dyn DeviceView) -> Decision;
    /// A dispatched request entered the device queue.
    fn dispatched_to_device(&mut self, _now: Time, _rq: &Request) {}
    /// The device finished `rq` (as dispatched, merged extent included).
    fn completed(&mut self, now: Time, rq: &Request, dev: &dyn DeviceView);
    /// Requests held by the scheduler (not yet dispatched).
    fn pending(&self) -> usize;
    /// Proportional share: context `ctx` is entitled to `weight` shares (default 1).
    fn set_weight(&mut self, _ctx: ContextId, _weight: u32) {}
    /// QoS: context `ctx` belongs to class `qos` (rate, delay, burst; seeds/004), called
    /// once per context before its first request. Like `set_weight`, this is the driver
    /// telling a scheduler about an issuer: frameworks that never read `ctx` (stream
    /// scheduling) only pass it on to their policy, which may.
    fn set_qos(&mut self, _ctx: ContextId, _qos: Qos) {}
    /// I/O priority: context `ctx` has class and level `prio` (fio's `prioclass`/`prio`),
    /// called once per context before its first request; contexts never named are
    /// best effort, level 4. Schedulers without classes ignore it.
    fn set_ioprio(&mut self, _ctx: ContextId, _prio: IoPrio) {}
    /// The issuer `ctx` has gone (process exit, connection closed): stop anticipating it.
    fn context_exited(&mut self, _now: Time, _ctx: ContextId) {}
    /// The driver's device holds up to `depth` commands (called once, before any request).
    /// Schedulers that reason about the head position adapt (000 Section 3.2).
    fn set_device_queue_depth(&mut self, _depth: u32) {}
    /// Counters worth reporting (waits, timeouts, ...), by name, in a fixed order.
    fn stats(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// What a scheduler for a whole disk array learns from the array's front end (drivers
/// with `--array` only; see [`crate::framework::array_stream`]). The members' own
/// [`Scheduler`]s see member requests with member addresses; these calls tie them to the
/// array requests they come from.
pub trait ArrayHooks: Send {
    /// Array request `rq` (array addresses) sends member requests `pieces` (member, id),
    /// which reach their members' schedulers right after this call. A RAID 5 small write
    /// calls it once per phase (the reads, then the writes). `dev` prices moves on a member
    /// (every member has the same model).
    fn pieces(&mut self, now: Time, rq: &Request, pieces: &[(u32, ReqId)], dev: &dyn DeviceView);
    /// Array request `rq`'s last member request completed.
    fn completed(&mut self, now: Time, rq: &Request, dev: &dyn DeviceView);
    /// Members whose scheduler should be asked again (bit `m` for member `m`) because of
    /// another member's event; the driver clears them by taking them.
    fn take_wakeups(&mut self) -> u64;
    /// Array-wide counters, by name, in a fixed order (the members report their own).
    fn stats(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// The schedulers of a disk array: one per member, and the array-wide part if the
/// scheduler coordinates its members.
pub struct ArraySchedulers {
    pub members: Vec<Box<dyn Scheduler>>,
    pub hooks: Option<Box<dyn ArrayHooks>>,
}

/// Driver-level merge bound (Linux max_sectors_kb = 512 KiB), in sectors.
pub const DEFAULT_MAX_SECTORS: u32 = 1024;

/// A plain work-conserving scheduler: dispatches the policy's choice, never waits.
pub struct WorkConserving<P: Policy> {
    pub policy: P,
    pub max_sectors: u32,
}

impl<P: Policy> WorkConserving<P> {
    pub fn new(policy: P, max_sectors: u32) -> Self {
        WorkConserving { policy, max_sectors }
    }
}

impl<P: Policy> Scheduler for WorkConserving<P> {
    fn name(&self) -> String {
        self.policy.name().to_string()
    }
    fn waits(&self) -> bool {
        false
    }
    fn arrive(&mut self, now: Time, rq: Request, _dev: &dyn DeviceView) -> Arrival {
        if let Some(into) = self.policy.merge(now, &rq, self.max_sectors) {
            return Arrival::Merged { into };
        }
        self.policy.add(now, rq);
        Arrival::Queued
    }
    fn decide(&mut self, now: Time, dev: &dyn DeviceView) -> Decision {
        match self.policy.select(now, dev) {
            Some(id) => Decision::Dispatch(self.policy.take(now, id)),
            None => Decision::Idle,
        }
    }
    fn completed(&mut self, now: Time, rq: &Request, _dev: &dyn DeviceView) {
        self.policy.completed(now, rq);
    }
    fn pending(&self) -> usize {
        self.policy.len()
    }
    fn set_weight(&mut self, ctx: ContextId, weight: u32) {
        self.policy.set_weight(ctx, weight)
    }
    fn set_qos(&mut self, ctx: ContextId, qos: Qos) {
        self.policy.set_qos(ctx, qos)
    }
    fn set_ioprio(&mut self, ctx: ContextId, prio: IoPrio) {
        self.policy.set_ioprio(ctx, prio)
    }
}

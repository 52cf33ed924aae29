//! The caching controller as a front of the block layer ([`crate::ctlr_cache`]): host
//! requests go to the controller instead of the drive's scheduler; the controller's fills
//! and write-backs go to the scheduler as requests of no issuer (a controller does not
//! know who asked); a host request completes when the controller says so.
//!
//! The controller wants to be woken at times of its own (a message arriving, a DMA ending,
//! its flush timers): one `Ev::Ctlr` event in the heap at the earliest of them, re-armed
//! after every call.

use headway_sched::idmap::IdMap;
use headway_sched::{ReqId, Request, Time};

use super::core::{Core, Ev};
use crate::ctlr_cache::{CtlrCache, Host, Out};

pub(super) struct CtlrFront {
    pub cache: CtlrCache,
    /// Host requests at the controller.
    hosts: IdMap<Request>,
    /// The controller's token of each disk request it sent.
    tokens: IdMap<u64>,
    /// The earliest `Ev::Ctlr` in the heap.
    armed: Option<Time>,
}

/// What a wake brought: disk requests to send (to member 0, the drive, or 1, a cache
/// device), host requests complete (id, drive time of their fills, bytes).
pub(super) struct Woken {
    pub send: Vec<(usize, Request)>,
    pub done: Vec<(ReqId, u64, u64)>,
}

impl CtlrFront {
    pub fn new(c: &headway_disk::ctlr::Controller) -> Self {
        CtlrFront { cache: CtlrCache::new(c), hosts: IdMap::default(), tokens: IdMap::default(), armed: None }
    }

    pub fn arrive(&mut self, core: &mut Core, rq: Request) {
        let host = Host { id: rq.id.0, sector: rq.sector, len: rq.len, dir: rq.dir };
        self.hosts.insert(rq.id, rq);
        self.cache.arrive(core.now.0, host);
        self.arm(core);
    }

    /// Disk request `id` completed, if it is the controller's (false: not one of its).
    pub fn disk_done(&mut self, core: &mut Core, id: ReqId, service: u64) -> bool {
        let Some(token) = self.tokens.remove(&id) else { return false };
        self.cache.disk_done(core.now.0, token, service);
        self.arm(core);
        true
    }

    /// The controller's `Ev::Ctlr` at `core.now`.
    pub fn wake(&mut self, core: &mut Core) -> Woken {
        if self.armed.is_some_and(|t| t <= core.now) {
            self.armed = None;
        }
        let mut w = Woken { send: Vec::new(), done: Vec::new() };
        for o in self.cache.wake(core.now.0) {
            match o {
                Out::Disk { token, device, sector, len, dir } => {
                    let id = core.new_id();
                    self.tokens.insert(id, token);
                    w.send.push((
                        device,
                        Request { id, sector, len, dir, sync: true, arrival: core.now, ctx: None },
                    ));
                }
                Out::Done { host, disk_ns } => {
                    let rq = self.hosts.remove(&ReqId(host)).expect("a host request at the controller");
                    w.done.push((rq.id, disk_ns, rq.bytes().max(1)));
                }
            }
        }
        self.arm(core);
        w
    }

    fn arm(&mut self, core: &mut Core) {
        let Some(t) = self.cache.next_wake().map(Time) else { return };
        if self.armed.is_none_or(|a| t < a) {
            self.armed = Some(t);
            core.push(t, Ev::Ctlr);
        }
    }
}

//! `sstf`: shortest seek first — the queued request whose start is nearest the head, by
//! sector distance, in either direction (ties: the lower id).

use headway_sched::{DeviceView, Policy, ReqId, Request, Time};

#[derive(Default)]
pub struct Sstf {
    queued: Vec<Request>,
}

impl Policy for Sstf {
    fn name(&self) -> &'static str {
        "sstf"
    }

    fn add(&mut self, _now: Time, rq: Request) {
        self.queued.push(rq);
    }

    fn select(&mut self, _now: Time, dev: &dyn DeviceView) -> Option<ReqId> {
        let head = dev.head();
        self.queued.iter().min_by_key(|r| (r.sector.abs_diff(head), r.id)).map(|r| r.id)
    }

    fn take(&mut self, _now: Time, id: ReqId) -> Request {
        let i = self.queued.iter().position(|r| r.id == id).expect("sstf: not queued");
        self.queued.swap_remove(i)
    }

    fn get(&self, id: ReqId) -> Option<&Request> {
        self.queued.iter().find(|r| r.id == id)
    }

    fn urgent(&self, _now: Time) -> bool {
        false
    }

    fn len(&self) -> usize {
        self.queued.len()
    }
}

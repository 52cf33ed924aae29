//! `noop`: first come, first served.
//!
//! Linux's noop elevator (002 Section 5): requests leave in arrival order; the only work it
//! does is merging a new request with the one queued just before it when the two are
//! contiguous (back or front), up to the driver's size bound. No reordering, no deadlines.
//!
//! Invariant: `fifo` holds every queued id once, in arrival order; `reqs` holds the same set.

use std::collections::VecDeque;

use super::{join, Policy};
use crate::device::DeviceView;
use crate::idmap::IdMap;
use crate::request::{ReqId, Request};
use crate::time::Time;

#[derive(Default)]
pub struct Noop {
    fifo: VecDeque<ReqId>,
    reqs: IdMap<Request>,
}

impl Noop {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Policy for Noop {
    fn name(&self) -> &'static str {
        "noop"
    }

    fn merge(&mut self, _now: Time, rq: &Request, max_sectors: u32) -> Option<ReqId> {
        let last = *self.fifo.back()?;
        let q = self.reqs.get_mut(&last).expect("fifo and map agree");
        join(q, rq, max_sectors).then_some(last)
    }

    fn add(&mut self, _now: Time, rq: Request) {
        self.fifo.push_back(rq.id);
        let prev = self.reqs.insert(rq.id, rq);
        debug_assert!(prev.is_none(), "request {:?} added twice", rq.id);
    }

    fn select(&mut self, _now: Time, _dev: &dyn DeviceView) -> Option<ReqId> {
        self.fifo.front().copied()
    }

    fn take(&mut self, _now: Time, id: ReqId) -> Request {
        let rq = self.reqs.remove(&id).unwrap_or_else(|| panic!("noop: {id:?} is not queued"));
        if self.fifo.front() == Some(&id) {
            self.fifo.pop_front();
        } else {
            let pos = self.fifo.iter().position(|&x| x == id).expect("fifo and map agree");
            self.fifo.remove(pos);
        }
        rq
    }

    fn get(&self, id: ReqId) -> Option<&Request> {
        self.reqs.get(&id)
    }

    fn urgent(&self, _now: Time) -> bool {
        false
    }

    fn len(&self) -> usize {
        self.fifo.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{rq, FixedView};

    #[test]
    fn fifo_order_and_merge_with_last_only() {
        let dev = FixedView::linear(0);
        let mut p = Noop::new();
        p.add(Time(0), rq(1, 100, 8));
        p.add(Time(1), rq(2, 5000, 8));
        // contiguous with #1 but #1 is not the last queued: no merge
        assert_eq!(p.merge(Time(2), &rq(3, 108, 8), 1024), None);
        p.add(Time(2), rq(3, 108, 8));
        // back merge into #3, then a front merge into #3
        assert_eq!(p.merge(Time(3), &rq(4, 116, 8), 1024), Some(ReqId(3)));
        assert_eq!(p.merge(Time(3), &rq(5, 90, 8), 1024), None, "a gap is not contiguous");
        assert_eq!(p.get(ReqId(3)).unwrap().len, 16);
        // size bound
        assert_eq!(p.merge(Time(4), &rq(6, 124, 1010), 1024), None);
        let order: Vec<_> = (0..3)
            .map(|_| {
                let id = p.select(Time(5), &dev).unwrap();
                p.take(Time(5), id).id.0
            })
            .collect();
        assert_eq!(order, vec![1, 2, 3]);
        assert!(p.is_empty());
    }
}

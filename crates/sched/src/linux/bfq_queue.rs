//! One BFQ queue's requests and which of them goes next (docs/bfq-rules.md §6; Linux's
//! `bfq_choose_req`, `bfq_find_next_rq`, `bfq_check_fifo`), for the `bfq` scheduler to use.
//!
//! A queue holds its requests by start sector and by FIFO time (`arrival +
//! fifo_expire_sync` or `+ fifo_expire_async`; a request merged into another passes on the
//! earlier time). It keeps `next_rq`, the request it would dispatch next:
//! * at an arrival, the better of the old `next_rq` and the new request for the position
//!   where the last dispatched request (of any queue) ended;
//! * when `next_rq` leaves (dispatched), first the FIFO check, then the better of its
//!   successor in sector order (wrapping to the lowest) and its predecessor, for the
//!   position where it started.
//!
//! **Better** ([`choose`]), in order: a synchronous request beats an asynchronous one;
//! then distance from the head: ahead, `s - head`; behind by at most `back_seek_max`,
//! `(head - s) * back_seek_penalty`; further behind, the request "wraps". Neither wraps:
//! the shorter distance, on a tie the higher sector. One wraps: the other. Both: the lower
//! sector (one long seek back).
//!
//! **FIFO check**, once per service turn ([`QueueRequests::start_turn`] re-arms it): when
//! `next_rq` is replaced and the oldest request, not the one that just left, has passed
//! its FIFO time, it becomes `next_rq`. An expired request therefore goes at the earliest
//! second in its queue's turn.

use std::collections::BTreeSet;

use crate::policy::SortedQueue;
use crate::request::{ReqId, Request, Sector};
use crate::time::{Duration, Time};

/// `back_seek_max` (in sectors) and `back_seek_penalty`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BackSeek {
    pub max: Sector,
    pub penalty: u64,
}

/// Linux's defaults: 16 MiB back (`back_seek_max` = 16384 KiB), twice the cost.
pub const BACK_SEEK: BackSeek = BackSeek { max: 32768, penalty: 2 };

/// FIFO expiry of synchronous and asynchronous requests (Linux 125 ms, 250 ms).
pub const FIFO_EXPIRE_SYNC: Duration = Duration::from_millis(125);
pub const FIFO_EXPIRE_ASYNC: Duration = Duration::from_millis(250);

/// The distance of a request at `s` from `head`, or `None` when it wraps.
fn distance(s: Sector, head: Sector, bs: BackSeek) -> Option<u64> {
    if s >= head {
        Some(s - head)
    } else if head - s <= bs.max {
        Some((head - s).saturating_mul(bs.penalty))
    } else {
        None
    }
}

/// Is `a` a better next request than `b` for a head at `head`?
pub fn choose(a: &Request, b: &Request, head: Sector, bs: BackSeek) -> bool {
    if a.sync != b.sync {
        return a.sync;
    }
    match (distance(a.sector, head, bs), distance(b.sector, head, bs)) {
        (Some(da), Some(db)) if da != db => da < db,
        (Some(_), Some(_)) => a.sector >= b.sector,
        (Some(_), None) => true,
        (None, Some(_)) => false,
        (None, None) => a.sector <= b.sector,
    }
}

/// One queue's requests.
pub struct QueueRequests {
    bs: BackSeek,
    expire: [Duration; 2],
    sorted: SortedQueue,
    fifo: BTreeSet<(Time, ReqId)>,
    next: Option<ReqId>,
    /// The FIFO was checked in this service turn.
    fifo_checked: bool,
}

impl QueueRequests {
    pub fn new(bs: BackSeek, fifo_expire_sync: Duration, fifo_expire_async: Duration) -> Self {
        QueueRequests {
            bs,
            expire: [fifo_expire_async, fifo_expire_sync],
            sorted: SortedQueue::default(),
            fifo: BTreeSet::new(),
            next: None,
            fifo_checked: false,
        }
    }

    fn fifo_time(&self, rq: &Request) -> Time {
        rq.arrival + self.expire[rq.sync as usize]
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.len() == 0
    }

    /// The request the queue would dispatch next.
    pub fn next(&self) -> Option<ReqId> {
        self.next
    }

    pub fn get(&self, id: ReqId) -> Option<&Request> {
        self.sorted.get(id)
    }

    /// The queue enters service: its FIFO may be checked once again.
    pub fn start_turn(&mut self) {
        self.fifo_checked = false;
    }

    /// A request arrives; `last_position` is where the last dispatched request ended.
    pub fn add(&mut self, rq: Request, last_position: Sector) {
        self.fifo.insert((self.fifo_time(&rq), rq.id));
        let better = match self.next.and_then(|n| self.sorted.get(n)) {
            Some(n) => choose(&rq, n, last_position, self.bs),
            None => true,
        };
        if better {
            self.next = Some(rq.id);
        }
        self.sorted.insert(rq);
    }

    /// Merge `rq` into a queued request it extends (appended, else prepended) within
    /// `max_sectors`: the id grown, which keeps the earlier FIFO time of the two.
    pub fn merge(&mut self, rq: &Request, max_sectors: u32) -> Option<ReqId> {
        let (id, before) =
            self.sorted.back_merge(rq, max_sectors).or_else(|| self.sorted.front_merge(rq, max_sectors))?;
        let grown = *self.sorted.get(id).expect("just merged");
        // the FIFO key had the old arrival and the old sync flag (a merge may set it)
        let was = [true, false].into_iter().any(|sync| {
            let old = Request { arrival: before, sync, ..grown };
            self.fifo.remove(&(self.fifo_time(&old), id))
        });
        debug_assert!(was, "FIFO lost {id:?}");
        self.fifo.insert((self.fifo_time(&grown), id));
        Some(id)
    }

    /// Remove `id` (dispatched, or taken otherwise); `next_rq` moves on if it was `id`.
    pub fn remove(&mut self, now: Time, id: ReqId) -> Request {
        let rq = self.sorted.remove(id).unwrap_or_else(|| panic!("bfq queue: {id:?} is not queued"));
        let was = self.fifo.remove(&(self.fifo_time(&rq), id));
        debug_assert!(was, "FIFO lost {id:?}");
        if self.next == Some(id) {
            self.next = self.expired(now).or_else(|| self.after(&rq));
        }
        rq
    }

    /// The FIFO check: the oldest request if it has expired (once per turn).
    fn expired(&mut self, now: Time) -> Option<ReqId> {
        if self.fifo_checked {
            return None;
        }
        self.fifo_checked = true;
        self.fifo.first().filter(|(t, _)| *t <= now).map(|&(_, id)| id)
    }

    /// The better of the successor of `gone` in sector order (wrapping to the lowest) and
    /// its predecessor, for a head where `gone` started.
    fn after(&self, gone: &Request) -> Option<ReqId> {
        let succ = self.sorted.first_after(gone.sector, gone.id).or_else(|| self.sorted.first());
        let pred = self.sorted.last_before(gone.sector);
        match (succ, pred) {
            (Some(s), Some(p)) if s != p => {
                let (rs, rp) = (self.sorted.get(s).expect("queued"), self.sorted.get(p).expect("queued"));
                Some(if choose(rs, rp, gone.sector, self.bs) { s } else { p })
            }
            (s, p) => s.or(p),
        }
    }

    /// Check the invariants (tests; O(n)).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        self.sorted.check();
        assert_eq!(self.sorted.len(), self.fifo.len());
        for rq in self.sorted.iter() {
            assert!(self.fifo.contains(&(self.fifo_time(rq), rq.id)));
        }
        assert_eq!(self.next.is_some(), self.sorted.len() > 0, "next_rq exactly when requests are queued");
        if let Some(n) = self.next {
            assert!(self.sorted.get(n).is_some());
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::testutil::rq;

    fn asy(id: u64, s: Sector) -> Request {
        Request { sync: false, ..rq(id, s, 8) }
    }

    #[test]
    fn choose_follows_bfq_rules() {
        let bs = BACK_SEEK;
        // sync beats async whatever the distance
        assert!(choose(&rq(1, 900_000, 8), &asy(2, 1000), 1000, bs));
        // ahead: the nearer
        assert!(choose(&rq(1, 1100, 8), &rq(2, 1200, 8), 1000, bs));
        // behind within back_seek_max costs double: 100 back (200) loses to 150 ahead
        assert!(choose(&rq(1, 1150, 8), &rq(2, 900, 8), 1000, bs));
        // ... but 50 back (100) beats 150 ahead
        assert!(choose(&rq(2, 950, 8), &rq(1, 1150, 8), 1000, bs));
        // a tie goes to the higher sector
        assert!(choose(&rq(1, 1100, 8), &rq(2, 950, 8), 1000, bs));
        assert!(!choose(&rq(2, 950, 8), &rq(1, 1100, 8), 1000, bs));
        // beyond back_seek_max a request wraps: anything that does not wrap wins
        assert!(choose(&rq(1, 900_000, 8), &rq(2, 100_000, 8), 200_000, bs));
        // both wrap: the lower sector (one long seek back)
        assert!(choose(&rq(1, 10, 8), &rq(2, 100, 8), 200_000, bs));
    }

    #[test]
    fn next_rq_follows_the_head_and_wraps() {
        let mut q = QueueRequests::new(BACK_SEEK, FIFO_EXPIRE_SYNC, FIFO_EXPIRE_ASYNC);
        for (id, s) in [(1, 5000), (2, 1000), (3, 3000), (4, 100_000)] {
            q.add(rq(id, s, 8), 0);
            q.check();
        }
        assert_eq!(q.next(), Some(ReqId(2)), "nearest ahead of sector 0");
        let order: Vec<u64> = std::iter::from_fn(|| {
            let n = q.next()?;
            q.remove(Time(0), n);
            q.check();
            Some(n.0)
        })
        .collect();
        assert_eq!(order, [2, 3, 1, 4]);
    }

    #[test]
    fn an_expired_request_goes_second_in_the_turn_and_only_once() {
        let mut q = QueueRequests::new(BACK_SEEK, FIFO_EXPIRE_SYNC, FIFO_EXPIRE_ASYNC);
        q.add(rq(1, 900, 8), 0); // the oldest, behind the sweep
        for (id, s) in [(2, 1000), (3, 1100), (4, 1200)] {
            q.add(Request { arrival: Time(1_000_000), ..rq(id, s, 8) }, 1000);
        }
        q.start_turn();
        assert_eq!(q.next(), Some(ReqId(2)));
        let late = Time(200_000_000); // every request has passed 125 ms
        q.remove(late, ReqId(2));
        assert_eq!(q.next(), Some(ReqId(1)), "the expired oldest goes next");
        q.remove(late, ReqId(1));
        // the check ran this turn: the sweep goes on although 3 and 4 have expired too
        assert_eq!(q.next(), Some(ReqId(3)));
        q.check();
    }

    proptest! {
        /// Random arrivals, dispatches and turns: `next_rq` is a queued request exactly
        /// when one is queued (`check`), and every request leaves once.
        #[test]
        fn every_request_leaves_once(
            steps in prop::collection::vec((any::<bool>(), 0u64..4096, any::<bool>()), 1..300),
        ) {
            let mut q = QueueRequests::new(BACK_SEEK, FIFO_EXPIRE_SYNC, FIFO_EXPIRE_ASYNC);
            let (mut id, mut head, mut out) = (0u64, 0u64, 0usize);
            for (arrive, sector, sync) in steps {
                if arrive {
                    q.add(Request { sync, arrival: Time(id * 1_000_000), ..rq(id, sector * 64, 8) }, head);
                    id += 1;
                } else if let Some(n) = q.next() {
                    let r = q.remove(Time(id * 1_000_000), n);
                    head = r.end();
                    out += 1;
                    if out % 7 == 0 {
                        q.start_turn();
                    }
                }
                q.check();
            }
            while let Some(n) = q.next() {
                q.remove(Time(u64::MAX / 2), n);
                out += 1;
                q.check();
            }
            prop_assert_eq!(out as u64, id);
        }
    }
}

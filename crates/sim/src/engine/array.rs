//! The array front end of the block layer (`--array raid0:N:STRIPE`, `raid5:N:STRIPE`;
//! [`headway_disk::array`]): admission, splitting, and completing array requests.
//!
//! An array request first passes a front-end queue of `queue_depth` requests (a RAID
//! card's): past it, requests wait in FIFO order. Admitted, it is split at stripe-unit
//! boundaries into member requests that carry its direction, sync flag and context; a
//! RAID 5 write becomes its write plan — the read-modify-write reads first, the data and
//! parity writes once all of them completed. The array request completes, exactly once,
//! when its last member request does; then the next waiting one is admitted.
//!
//! This module holds the state and the rules; [`super::block::Block`] sends the member
//! requests to their members' schedulers.

use headway_disk::array::{Level, Piece};
use headway_sched::idmap::IdMap;
use headway_sched::{Dir, ReqId, Request, SECTOR_BYTES};

use super::devices::Counts;
use super::ArrayConfig;

/// An array request admitted past the front-end queue.
pub(super) struct ArrayReq {
    pub rq: Request,
    /// Member requests of the current phase not yet complete.
    remaining: u32,
    /// RAID 5 read-modify-write: the writes to issue once the reads are done.
    writes: Vec<Piece>,
    /// Drive time of its member requests so far (their shares of merged commands).
    pub disk_ns: u64,
}

/// What a member request's completion meant for its array request.
pub(super) enum PieceDone {
    /// Not a member request.
    NotAPiece,
    /// Others of its phase are still under way.
    Pending,
    /// The reads of a RAID 5 read-modify-write are done: send these writes.
    Writes(Request, Vec<Piece>),
    /// The array request is complete (it is no longer admitted).
    Complete(ArrayReq),
}

/// Admission, splitting, completion.
pub(super) struct ArrayFront {
    pub cfg: ArrayConfig,
    admitted: u32,
    waiting: std::collections::VecDeque<Request>,
    reqs: IdMap<ArrayReq>,
    /// Member request -> (array request, sectors).
    pieces: IdMap<(ReqId, u32)>,
    /// What the jobs submitted to the array.
    pub flow_in: Counts,
}

impl ArrayFront {
    pub fn new(cfg: ArrayConfig) -> Self {
        ArrayFront {
            cfg,
            admitted: 0,
            waiting: Default::default(),
            reqs: IdMap::default(),
            pieces: IdMap::default(),
            flow_in: Counts::default(),
        }
    }

    /// An array request arrives: admitted now (returned) or queued behind the front end.
    pub fn offer(&mut self, rq: Request) -> Option<Request> {
        self.flow_in.add(rq.dir, rq.len);
        if self.admitted < self.cfg.queue_depth {
            self.admitted += 1;
            Some(rq)
        } else {
            self.waiting.push_back(rq);
            None
        }
    }

    /// The next waiting request, if the front end has room for it (admitted).
    pub fn admit_next(&mut self) -> Option<Request> {
        if self.admitted >= self.cfg.queue_depth {
            return None;
        }
        let next = self.waiting.pop_front()?;
        self.admitted += 1;
        Some(next)
    }

    /// Split admitted request `rq`: the member requests of its first phase and their
    /// direction (a RAID 5 write needing old data or parity starts with reads).
    pub fn split(&mut self, rq: Request) -> (Vec<Piece>, Dir) {
        let spec = self.cfg.spec;
        let (first, writes, dir) = if rq.dir == Dir::Write && spec.level == Level::Raid5 {
            let plan = spec.write_plan(rq.sector, rq.len);
            if plan.reads.is_empty() {
                (plan.writes, Vec::new(), Dir::Write)
            } else {
                (plan.reads, plan.writes, Dir::Read)
            }
        } else {
            (spec.split(rq.sector, rq.len).collect(), Vec::new(), rq.dir)
        };
        self.reqs.insert(rq.id, ArrayReq { rq, remaining: 0, writes, disk_ns: 0 });
        (first, dir)
    }

    /// `pieces` of `parent` go out with ids `first..`.
    pub fn issued(&mut self, parent: ReqId, pieces: &[Piece], first: u64) {
        self.reqs.get_mut(&parent).expect("admitted").remaining += pieces.len() as u32;
        for (i, p) in pieces.iter().enumerate() {
            self.pieces.insert(ReqId(first + i as u64), (parent, p.len));
        }
    }

    /// The array request a member request belongs to.
    pub fn parent(&self, id: ReqId) -> Option<ReqId> {
        self.pieces.get(&id).map(|p| p.0)
    }

    /// Member request `id` is done, `service` ns of drive time carrying `total` bytes.
    pub fn piece_done(&mut self, id: ReqId, service: u64, total: u64) -> PieceDone {
        let Some((parent, sectors)) = self.pieces.remove(&id) else { return PieceDone::NotAPiece };
        let r = self.reqs.get_mut(&parent).expect("member request of an admitted array request");
        r.disk_ns += (service as u128 * (sectors as u64 * SECTOR_BYTES) as u128 / total as u128) as u64;
        r.remaining -= 1;
        if r.remaining > 0 {
            return PieceDone::Pending;
        }
        if !r.writes.is_empty() {
            return PieceDone::Writes(r.rq, std::mem::take(&mut r.writes));
        }
        let r = self.reqs.remove(&parent).expect("just seen");
        self.admitted -= 1;
        PieceDone::Complete(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headway_disk::array::ArraySpec;
    use headway_sched::Time;

    fn front(spec: &str, depth: u32) -> ArrayFront {
        ArrayFront::new(ArrayConfig { spec: spec.parse::<ArraySpec>().unwrap(), queue_depth: depth })
    }

    fn rq(id: u64, sector: u64, len: u32, dir: Dir) -> Request {
        Request { id: ReqId(id), sector, len, dir, sync: true, arrival: Time::ZERO, ctx: None }
    }

    #[test]
    fn past_the_queue_depth_requests_wait_in_order() {
        let mut a = front("raid0:2:4k", 1);
        assert!(a.offer(rq(1, 0, 8, Dir::Read)).is_some());
        assert!(a.offer(rq(2, 8, 8, Dir::Read)).is_none());
        assert!(a.offer(rq(3, 16, 8, Dir::Read)).is_none());
        assert!(a.admit_next().is_none(), "the front end is full");
        let (pieces, _) = a.split(rq(1, 0, 8, Dir::Read));
        a.issued(ReqId(1), &pieces, 100);
        let PieceDone::Complete(r) = a.piece_done(ReqId(100), 1000, 4096) else { panic!("one piece") };
        assert_eq!(r.rq.id, ReqId(1));
        assert_eq!(a.admit_next().map(|r| r.id), Some(ReqId(2)));
        assert!(a.admit_next().is_none());
    }

    #[test]
    fn an_array_request_completes_once_after_its_last_piece_with_its_share_of_drive_time() {
        let mut a = front("raid0:2:4k", 8);
        // 16 KiB from sector 0: four stripe units over two members
        let r = a.offer(rq(1, 0, 32, Dir::Read)).unwrap();
        let (pieces, dir) = a.split(r);
        assert_eq!((pieces.len(), dir), (4, Dir::Read));
        a.issued(ReqId(1), &pieces, 10);
        assert_eq!(a.parent(ReqId(12)), Some(ReqId(1)));
        for id in 10..13 {
            assert!(matches!(a.piece_done(ReqId(id), 1000, 4096), PieceDone::Pending));
        }
        let PieceDone::Complete(r) = a.piece_done(ReqId(13), 1000, 4096) else { panic!("last piece") };
        assert_eq!(r.disk_ns, 4000);
        assert!(matches!(a.piece_done(ReqId(13), 1000, 4096), PieceDone::NotAPiece));
    }

    #[test]
    fn a_raid5_partial_write_reads_first_then_writes() {
        let mut a = front("raid5:3:4k", 8);
        let r = a.offer(rq(1, 0, 8, Dir::Write)).unwrap();
        let (reads, dir) = a.split(r);
        assert_eq!(dir, Dir::Read, "a one-unit write reads old data and parity first");
        a.issued(ReqId(1), &reads, 10);
        let mut writes = None;
        for i in 0..reads.len() as u64 {
            if let PieceDone::Writes(parent, w) = a.piece_done(ReqId(10 + i), 100, 4096) {
                assert_eq!(parent.id, ReqId(1));
                writes = Some(w);
            }
        }
        let writes = writes.expect("the writes follow the reads");
        assert_eq!(writes.len(), 2, "data and parity");
        a.issued(ReqId(1), &writes, 20);
        assert!(matches!(a.piece_done(ReqId(20), 100, 4096), PieceDone::Pending));
        assert!(matches!(a.piece_done(ReqId(21), 100, 4096), PieceDone::Complete(_)));
    }
}

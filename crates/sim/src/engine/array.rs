//! The array front end of the block layer (`--array LEVEL:N:STRIPE`;
//! [`headway_disk::array`]): admission, splitting, and completing array requests.
//!
//! An array request first passes a front-end queue of `queue_depth` requests (a RAID
//! card's): past it, requests wait in FIFO order (an array imported from DiskSim admits
//! every request at once, as DiskSim does). Admitted, it becomes member requests
//! that carry its direction, sync flag and context:
//! * a read is split at stripe-unit boundaries (joined as DiskSim joins the pieces, on an
//!   array imported from DiskSim: [`headway_disk::array::join`]); on a mirror each piece
//!   goes to the copy the array's read policy picks ([`headway_disk::array::mirror`]),
//!   from what the members have queued and where they last dispatched, with ties (and
//!   `random`) drawn from a stream seeded from the run's seed;
//! * a write becomes its write plan: on a mirror its pieces to every copy at once; on
//!   RAID 4 and 5 the reads first, and each write once the reads it waits for completed
//!   (every read of the request for the plans `--array` gives; under DiskSim's `Synch
//!   writes for safety = 0` only some, and a write waiting for none goes out with the
//!   reads).
//!
//! The array request completes, exactly once, when its last member request does; then the
//! next waiting one is admitted.
//!
//! This module holds the state and the rules; [`super::block::Block`] sends the member
//! requests to their members' schedulers.

use headway_disk::array::{CopyChooser, CopyView, Piece};
use headway_sched::idmap::IdMap;
use headway_sched::{Dir, ReqId, Request, SECTOR_BYTES};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::devices::Counts;
use super::ArrayConfig;

/// An array request admitted past the front-end queue.
pub(super) struct ArrayReq {
    pub rq: Request,
    /// Member requests issued and not yet complete.
    outstanding: u32,
    /// Writes held back, each with the number of reads it still waits for.
    held: Vec<(Piece, u32)>,
    /// Per read of the request (in issue order): the held writes waiting for it.
    waiters: Vec<Vec<u32>>,
    /// Reads issued so far (the next read's index in `waiters`).
    reads: u32,
    /// Drive time of its member requests so far (their shares of merged commands).
    pub disk_ns: u64,
}

/// What a member request's completion meant for its array request.
pub(super) enum PieceDone {
    /// Not a member request.
    NotAPiece,
    /// Others are still under way.
    Pending,
    /// Reads some writes waited for are done: send these writes.
    Writes(Request, Vec<Piece>),
    /// The array request is complete (it is no longer admitted).
    Complete(ArrayReq),
}

/// A member request: its array request, its sectors, and which read it is (writes: none).
struct Member {
    parent: ReqId,
    sectors: u32,
    read: Option<u32>,
}

/// Admission, splitting, completion.
pub(super) struct ArrayFront {
    pub cfg: ArrayConfig,
    admitted: u32,
    waiting: std::collections::VecDeque<Request>,
    reqs: IdMap<ArrayReq>,
    pieces: IdMap<Member>,
    /// A mirror's read policy, and the draws it makes.
    chooser: CopyChooser,
    rng: ChaCha8Rng,
    /// What the jobs submitted to the array.
    pub flow_in: Counts,
}

impl ArrayFront {
    /// The front end of `cfg`'s array in a run of `seed`.
    pub fn new(cfg: ArrayConfig, seed: u64) -> Self {
        ArrayFront {
            chooser: CopyChooser::new(cfg.spec.copy_choice),
            // ("mirr": a stream of its own)
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x6d69_7272),
            cfg,
            admitted: 0,
            waiting: Default::default(),
            reqs: IdMap::default(),
            pieces: IdMap::default(),
            flow_in: Counts::default(),
        }
    }

    /// Array requests admitted at once: the configured depth, unlimited on an array
    /// imported from DiskSim (which has no front-end queue).
    fn depth(&self) -> u32 {
        if self.cfg.spec.disksim.is_some() {
            u32::MAX
        } else {
            self.cfg.queue_depth
        }
    }

    /// The array's level.
    pub fn level(&self) -> headway_disk::array::Level {
        self.cfg.spec.level
    }

    /// An array request arrives: admitted now (returned) or queued behind the front end.
    pub fn offer(&mut self, rq: Request) -> Option<Request> {
        self.flow_in.add(rq.dir, rq.len);
        if self.admitted < self.depth() {
            self.admitted += 1;
            Some(rq)
        } else {
            self.waiting.push_back(rq);
            None
        }
    }

    /// The next waiting request, if the front end has room for it (admitted).
    pub fn admit_next(&mut self) -> Option<Request> {
        if self.admitted >= self.depth() {
            return None;
        }
        let next = self.waiting.pop_front()?;
        self.admitted += 1;
        Some(next)
    }

    /// Split admitted request `rq`: the member requests to send now, each with its
    /// direction (reads before writes). `member(m)` tells a mirror's read policy about
    /// member `m`.
    pub fn split(&mut self, rq: Request, member: &dyn Fn(u32) -> CopyView) -> Vec<(Piece, Dir)> {
        let spec = self.cfg.spec;
        let mut r =
            ArrayReq { rq, outstanding: 0, held: Vec::new(), waiters: Vec::new(), reads: 0, disk_ns: 0 };
        let now: Vec<(Piece, Dir)> = if rq.dir == Dir::Write {
            let plan = spec.write_plan(rq.sector, rq.len);
            let mut now: Vec<(Piece, Dir)> = plan.reads.iter().map(|&p| (p, Dir::Read)).collect();
            match plan.waits {
                _ if plan.reads.is_empty() => now.extend(plan.writes.into_iter().map(|p| (p, Dir::Write))),
                None => {
                    // every write waits for every read
                    let n = plan.reads.len() as u32;
                    r.held = plan.writes.into_iter().map(|p| (p, n)).collect();
                    r.waiters = vec![(0..r.held.len() as u32).collect(); n as usize];
                }
                Some(waits) => {
                    // each write waits for its reads; one waiting for none goes out now
                    r.waiters = vec![Vec::new(); plan.reads.len()];
                    for (w, reads) in plan.writes.into_iter().zip(waits) {
                        if reads.is_empty() {
                            now.push((w, Dir::Write));
                            continue;
                        }
                        for &i in &reads {
                            r.waiters[i as usize].push(r.held.len() as u32);
                        }
                        r.held.push((w, reads.len() as u32));
                    }
                }
            }
            now
        } else if spec.level.mirrored() {
            let (chooser, rng) = (&mut self.chooser, &mut self.rng);
            spec.member_reads(rq.sector, rq.len)
                .into_iter()
                .map(|p| {
                    let view = |c: u32| member(spec.copy_member(p.member, c));
                    let c = chooser.choose(spec.copies, p.sector, &view, &mut || rng.gen::<f64>());
                    (Piece { member: spec.copy_member(p.member, c), ..p }, Dir::Read)
                })
                .collect()
        } else if spec.disksim.is_some() {
            spec.member_reads(rq.sector, rq.len).into_iter().map(|p| (p, Dir::Read)).collect()
        } else {
            spec.split(rq.sector, rq.len).map(|p| (p, Dir::Read)).collect()
        };
        self.reqs.insert(rq.id, r);
        now
    }

    /// `pieces` of `parent` go out with ids `first..`.
    pub fn issued(&mut self, parent: ReqId, pieces: &[(Piece, Dir)], first: u64) {
        let r = self.reqs.get_mut(&parent).expect("admitted");
        r.outstanding += pieces.len() as u32;
        for (i, (p, dir)) in pieces.iter().enumerate() {
            let read = (*dir == Dir::Read && !r.waiters.is_empty()).then(|| {
                r.reads += 1;
                r.reads - 1
            });
            self.pieces.insert(ReqId(first + i as u64), Member { parent, sectors: p.len, read });
        }
    }

    /// The array request a member request belongs to.
    pub fn parent(&self, id: ReqId) -> Option<ReqId> {
        self.pieces.get(&id).map(|p| p.parent)
    }

    /// Member request `id` is done, `service` ns of drive time carrying `total` bytes.
    pub fn piece_done(&mut self, id: ReqId, service: u64, total: u64) -> PieceDone {
        let Some(Member { parent, sectors, read }) = self.pieces.remove(&id) else {
            return PieceDone::NotAPiece;
        };
        let r = self.reqs.get_mut(&parent).expect("member request of an admitted array request");
        r.disk_ns += (service as u128 * (sectors as u64 * SECTOR_BYTES) as u128 / total as u128) as u64;
        r.outstanding -= 1;
        if let Some(i) = read {
            let mut released = Vec::new();
            for &w in &r.waiters[i as usize] {
                let (p, waits) = &mut r.held[w as usize];
                *waits -= 1;
                if *waits == 0 {
                    released.push(*p);
                }
            }
            if !released.is_empty() {
                return PieceDone::Writes(r.rq, released);
            }
        }
        if r.outstanding > 0 || r.held.iter().any(|h| h.1 > 0) {
            return PieceDone::Pending;
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
        ArrayFront::new(ArrayConfig { spec: spec.parse::<ArraySpec>().unwrap(), queue_depth: depth }, 1)
    }

    fn rq(id: u64, sector: u64, len: u32, dir: Dir) -> Request {
        Request { id: ReqId(id), sector, len, dir, sync: true, arrival: Time::ZERO, ctx: None }
    }

    /// Members with nothing queued, never dispatched.
    fn idle(_: u32) -> CopyView {
        CopyView::default()
    }

    /// (member, sector, len, dir) of each member request.
    fn shape(pieces: &[(Piece, Dir)]) -> Vec<(u32, u64, u32, Dir)> {
        pieces.iter().map(|(p, d)| (p.member, p.sector, p.len, *d)).collect()
    }

    #[test]
    fn past_the_queue_depth_requests_wait_in_order() {
        let mut a = front("raid0:2:4k", 1);
        assert!(a.offer(rq(1, 0, 8, Dir::Read)).is_some());
        assert!(a.offer(rq(2, 8, 8, Dir::Read)).is_none());
        assert!(a.offer(rq(3, 16, 8, Dir::Read)).is_none());
        assert!(a.admit_next().is_none(), "the front end is full");
        let pieces = a.split(rq(1, 0, 8, Dir::Read), &idle);
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
        let pieces = a.split(r, &idle);
        assert_eq!(pieces.len(), 4);
        assert!(pieces.iter().all(|p| p.1 == Dir::Read));
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
        let reads = a.split(r, &idle);
        assert!(reads.iter().all(|p| p.1 == Dir::Read), "a one-unit write reads old data and parity first");
        a.issued(ReqId(1), &reads, 10);
        let mut writes = None;
        for i in 0..reads.len() as u64 {
            if let PieceDone::Writes(parent, w) = a.piece_done(ReqId(10 + i), 100, 4096) {
                assert_eq!(parent.id, ReqId(1));
                assert_eq!(i, reads.len() as u64 - 1, "the writes wait for every read");
                writes = Some(w);
            }
        }
        let writes: Vec<(Piece, Dir)> =
            writes.expect("the writes follow the reads").into_iter().map(|p| (p, Dir::Write)).collect();
        assert_eq!(writes.len(), 2, "data and parity");
        a.issued(ReqId(1), &writes, 20);
        assert!(matches!(a.piece_done(ReqId(20), 100, 4096), PieceDone::Pending));
        assert!(matches!(a.piece_done(ReqId(21), 100, 4096), PieceDone::Complete(_)));
    }

    #[test]
    fn a_raid4_partial_write_reads_parity_on_the_last_member() {
        let mut a = front("raid4:4:4k", 8);
        // unit 1 of row 1 (array sector 32): member 1 at 8, parity on member 3 at 8
        let reads = a.split(rq(1, 32, 8, Dir::Write), &idle);
        assert_eq!(shape(&reads), [(1, 8, 8, Dir::Read), (3, 8, 8, Dir::Read)]);
    }

    #[test]
    fn a_mirrored_write_goes_to_every_copy_at_once() {
        let mut a = front("raid10:4:4k", 8);
        // [4, 12): data member 0 [4, 8) and 1 [0, 4), each also on its copy (2, 3)
        let r = a.offer(rq(1, 4, 8, Dir::Write)).unwrap();
        let w = a.split(r, &idle);
        assert_eq!(
            shape(&w),
            [(0, 4, 4, Dir::Write), (2, 4, 4, Dir::Write), (1, 0, 4, Dir::Write), (3, 0, 4, Dir::Write)]
        );
        a.issued(ReqId(1), &w, 10);
        for id in 10..13 {
            assert!(matches!(a.piece_done(ReqId(id), 100, 4096), PieceDone::Pending));
        }
        assert!(matches!(a.piece_done(ReqId(13), 100, 4096), PieceDone::Complete(_)));
    }

    #[test]
    fn mirrored_reads_pick_a_copy_per_member_request() {
        // round robin: one counter for the array, advanced per member request
        let mut a = front("raid10:4:4k:read=rr", 8);
        let members = |r: &[(Piece, Dir)]| r.iter().map(|p| p.0.member).collect::<Vec<_>>();
        assert_eq!(members(&a.split(rq(1, 0, 16, Dir::Read), &idle)), [0, 3]);
        assert_eq!(members(&a.split(rq(2, 8, 16, Dir::Read), &idle)), [1, 2]);
        // shortest queue, ties by distance: member 2 has less queued than 0; 1 and 3 tie
        // on queue and 3 dispatched nearer sector 4
        let mut a = front("raid10:4:4k", 8);
        let view = |m: u32| match m {
            0 => CopyView { queued: 2, position: 0 },
            1 => CopyView { queued: 1, position: 900 },
            2 => CopyView { queued: 1, position: 0 },
            _ => CopyView { queued: 1, position: 10 },
        };
        let r = a.split(rq(3, 4, 8, Dir::Read), &view);
        assert_eq!(shape(&r), [(2, 4, 4, Dir::Read), (3, 0, 4, Dir::Read)]);
        // primary: always the first copy; raid1 reads the whole request from one member
        let mut a = front("raid1:3:read=primary", 8);
        assert_eq!(shape(&a.split(rq(4, 100, 64, Dir::Read), &view)), [(0, 100, 64, Dir::Read)]);
    }

    #[test]
    fn random_copy_choice_is_the_same_stream_for_the_same_seed() {
        let picks = |seed: u64| {
            let spec: ArraySpec = "raid1:4:read=random".parse().unwrap();
            let mut a = ArrayFront::new(ArrayConfig { spec, queue_depth: 8 }, seed);
            (0..64).map(|i| a.split(rq(i, 0, 8, Dir::Read), &idle)[0].0.member).collect::<Vec<_>>()
        };
        assert_eq!(picks(7), picks(7));
        assert_ne!(picks(7), picks(8));
        let p = picks(7);
        assert!((0..4).all(|m| p.contains(&m)), "every copy drawn: {p:?}");
    }

    /// A raid5:4:4k imported from DiskSim: rmw point `rmw_point`, `Synch writes` 0.
    fn disksim_raid5(rmw_point: u32, depth: u32) -> ArrayFront {
        let mut spec: ArraySpec = "raid5:4:4k".parse().unwrap();
        spec.disksim =
            Some(headway_disk::array::Disksim { rmw_point, synch_writes: false, member_sectors: 1 << 30 });
        ArrayFront::new(ArrayConfig { spec, queue_depth: depth }, 1)
    }

    #[test]
    fn without_synch_writes_each_write_goes_out_when_its_own_reads_are_done() {
        let mut a = disksim_raid5(2, 8);
        // [4, 12) reconstructed: reads member 2 [0, 8), member 1 [4, 8), member 0 [0, 4)
        let r = a.offer(rq(1, 4, 8, Dir::Write)).unwrap();
        let reads = a.split(r, &idle);
        assert_eq!(shape(&reads), [(2, 0, 8, Dir::Read), (1, 4, 4, Dir::Read), (0, 0, 4, Dir::Read)]);
        a.issued(ReqId(1), &reads, 10);
        // member 2's read: no write waits for it alone
        assert!(matches!(a.piece_done(ReqId(10), 100, 4096), PieceDone::Pending));
        // member 0's read releases member 0's data write
        let PieceDone::Writes(_, w) = a.piece_done(ReqId(12), 100, 4096) else { panic!("member 0's write") };
        assert_eq!(w.iter().map(|p| (p.member, p.sector, p.len)).collect::<Vec<_>>(), [(0, 4, 4)]);
        let w0: Vec<(Piece, Dir)> = w.into_iter().map(|p| (p, Dir::Write)).collect();
        a.issued(ReqId(1), &w0, 20);
        // member 1's read, the row's last: the parity write and member 1's data write
        let PieceDone::Writes(_, w) = a.piece_done(ReqId(11), 100, 4096) else { panic!("the last read") };
        assert_eq!(w.iter().map(|p| (p.member, p.sector, p.len)).collect::<Vec<_>>(), [(3, 0, 8), (1, 0, 4)]);
        let w1: Vec<(Piece, Dir)> = w.into_iter().map(|p| (p, Dir::Write)).collect();
        a.issued(ReqId(1), &w1, 30);
        for id in [20, 30] {
            assert!(matches!(a.piece_done(ReqId(id), 100, 4096), PieceDone::Pending));
        }
        assert!(matches!(a.piece_done(ReqId(31), 100, 4096), PieceDone::Complete(_)));
    }

    #[test]
    fn a_write_waiting_for_nothing_goes_out_with_the_reads_and_nothing_waits_at_the_front() {
        let mut a = disksim_raid5(4, 1);
        // [16, 56): rows 0 and 2 partial (read-modify-write; member 2's two reads joined
        // over its parity unit of row 1), row 1 whole; member 0's data write in row 1 has
        // no read on its member and carries no parity
        let r = a.offer(rq(1, 16, 40, Dir::Write)).unwrap();
        let now = a.split(r, &idle);
        assert_eq!(
            shape(&now),
            [(3, 0, 8, Dir::Read), (2, 0, 24, Dir::Read), (1, 16, 8, Dir::Read), (0, 8, 8, Dir::Write)]
        );
        // a front-end depth of 1 does not hold DiskSim's arrays back
        assert!(a.offer(rq(2, 0, 8, Dir::Read)).is_some());
    }
}

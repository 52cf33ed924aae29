//! Stream scheduling across a disk array: virtual streams on the array's addresses,
//! optimistic physical streams on the members, and coordinated service. Paper 000
//! (Stream Scheduling), Section 2.2; evaluated in its Section 3.5 (Figure 6).
//!
//! ## Why
//! Striping hides a stream's locality from each member: member `k` sees only every N-th
//! stripe unit of a sequential reader, and the next one arrives only after the other
//! members have served theirs, after delays set by *their* scheduling. A member deciding
//! alone (`stream-local`) rarely sees a child arrive in time; when it does wait, the other
//! members may be serving someone else, and the wait is wasted.
//!
//! ## The algorithm (000 Section 2.2), as headway runs it
//! - **Virtual streams.** The array is one big virtual disk. Stream detection is 000
//!   Figure 2 on array requests and array addresses ([`super::stream`] for one disk): an
//!   array request `N` is the child of completed array request `R` when
//!   `N.arrival - R.completion + est_v(R.end, N.sector) < R.service_time`, where `est_v`
//!   prices an array distance as the member distance it stands for (array distance over
//!   the data members) and `R.service_time` is `est_v` from `R` to the nearest pending
//!   array request of another stream ("uses pending requests on respective physical disks
//!   to evaluate the inequality"). A virtual stream is *established* at
//!   `stream_threshold x N` requests.
//! - **Optimistic physical streams.** Once a virtual stream is established, each member
//!   keeps a physical stream for it. Piece `P` (the first piece on member `k` of array
//!   request `R_j`) extends member `k`'s physical stream if
//!   `gap + est(Q.end, P.sector) < Q.service_time`, `Q` being the stream's last completed
//!   piece on `k` (its service time priced like `R`'s above, on `k`). The gap is not the
//!   real one: it is "the arrival time less the response times" of the stream's requests
//!   in between, which for a synchronous stream is the sum of its thinktimes between `Q`'s
//!   request and `R_j` (every virtual child adds its gap to the stream's running sum): the
//!   most optimistic guess of when `P` would arrive if all members served only this
//!   stream. A physical stream is established at `stream_threshold` pieces.
//! - **Coordination.** When every member the virtual stream has touched has an
//!   established physical stream, the stream is *ready*; the array coordinates one ready
//!   stream at a time (the others queue, first ready first). While stream `V` is
//!   coordinated, every member serves `V`'s queued pieces before anything else (its next
//!   request to each disk is urgent: the heads move to the physical streams at once), and
//!   after completing a piece of `V` with no other piece of `V` queued, a member waits for
//!   `V`'s next piece exactly as single-disk stream scheduling waits for a child, now with
//!   *real* arrival times (deadline `Q.completion + Q.service_time`, second chance for
//!   physical streams `(1 + tolerance_factor) x stream_threshold` long).
//! - **Broken streams.** A physical stream that fails to find its child (a member's wait
//!   runs out, second chance included) breaks the coordination: the virtual stream is marked
//!   *unusable* and kept, so that its requests keep extending it and cannot form a new
//!   stream that would trigger waiting again ("shown not to be cost effective"); it is
//!   forgotten when the virtual stream itself ends.
//! - **Array-decided slices.** The array, not each member, decides how long a stream is
//!   served: `stream_time_slice` from the start of its coordination, the same instant for
//!   every member. At its end the stream goes to the back of the ready queue and the next
//!   ready stream is coordinated; if no other is ready, the members run their policies
//!   work-conserving until another stream's array request completes (others make
//!   progress), then the queue's head is coordinated again.
//!
//! Outside coordination every member is its policy, work-conserving: a random workload
//! forms no virtual streams and runs as the policy does (no gain, no harm). The wrapped
//! policy's urgent requests (deadline's expired FIFO) go first even during coordination,
//! as in single-disk stream scheduling. No process identity is read: `Request::ctx` is
//! passed to the policies (`set_weight`, `set_qos`) and never looked at here.
//!
//! ## Choices the paper leaves open
//! - Physical streams are tracked from the virtual stream's establishment on (starting at
//!   one piece per member), so a random workload costs no per-member state.
//! - Among the parents that pass the virtual child test, the nearest (least `est_v`)
//!   adopts, the first in deadline order among equals. Figure 2 takes the first in
//!   deadline order; on an array, where idle members make service times long, that lets
//!   one reader's request continue another reader's stream.
//! - An array request that begins where one still in service ends is that request's
//!   child (gap 0): asynchronous read-ahead keeps two windows of a reader in flight, and
//!   Figure 2, which pairs a request only with completed ones, would split the reader into
//!   two interleaved streams. Likewise a completion refreshes the stream's waiting parents
//!   (their gap counts from the stream's newest completion): windows complete out of order
//!   on different members, and the reader waits for the last of them.
//! - Pieces of one array request on one member (contiguous stripe units) count once.
//! - A piece arriving while its predecessor on the member is still held or in service
//!   extends the physical stream if it begins where that one ends; otherwise it neither
//!   extends nor breaks it (there is no completed parent to judge it by).
//! - Real arrival times apply once every member the stream touches has served a piece of
//!   it since the coordination began (*boarded*); until then a member that finished waits
//!   for the others (up to the slice's end) while another member holds a piece of the
//!   stream (else it waits as for a child), and a member whose policy sends it away
//!   (an urgent, expired request) boards again. A piece that comes too late to be a child
//!   while its member was not waiting for it costs nothing and breaks nothing.
//! - A member's wait does not run out while the array request it served a piece of is
//!   still in service on another member (a slow member, a drive missing its cache, is not
//!   a broken stream): the request's completion restarts the wait, and the member's
//!   parent counts from there (the stream's next request cannot come earlier).
//! - The virtual service time (`R.service_time`) prices the nearest array request of
//!   another stream whose pieces still wait in the members' queues, on array addresses;
//!   with none, an arbitrary request.
//! - A member with a queueing drive (depth > 1, 000 Section 3.2): while a coordinated
//!   stream's piece is in the device, no other request is put behind it.
//!
//! Tunables: stream scheduling's (`stream_threshold`, `tolerance_factor`,
//! `stream_time_slice`); the virtual threshold is `stream_threshold` times the members.

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::device::DeviceView;
use crate::framework::stream::{arbitrary_cost, StreamParams};
use crate::idmap::{IdHasher, IdMap};
use crate::policy::Policy;
use crate::qos::Qos;
use crate::request::{ContextId, ReqId, Request, Sector};
use crate::scheduler::{ArrayHooks, ArraySchedulers, Arrival, Decision, Scheduler};
use crate::time::{Duration, Time};

/// The array's geometry as the scheduler needs it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ArrayShape {
    /// Member disks (at most 64).
    pub members: u32,
    /// Members holding data in each stripe (RAID 0: all; RAID 5: one fewer).
    pub data_members: u32,
}

/// Array-wide counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArrayStreamStats {
    /// Virtual streams that reached `stream_threshold x members` requests.
    pub virtual_streams: u64,
    /// Coordinations started (a stream given the whole array for a slice).
    pub coordinations: u64,
    /// Coordinations ended by the array's slice.
    pub array_slices: u64,
    /// Virtual streams marked unusable because a physical stream broke.
    pub unusable: u64,
}

/// Per-member counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct MemberStats {
    waits: u64,
    children_dispatched: u64,
    timeouts: u64,
    second_chances: u64,
    coordinated_dispatches: u64,
    urgent_preemptions: u64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum VState {
    Forming,
    Established,
    Unusable,
}

/// A completed piece that may get a child on its member.
#[derive(Clone, Debug)]
struct PParent {
    end: Sector,
    completion: Time,
    service_time: Duration,
    /// The stream's thinktime sum when it completed.
    think_mark: u64,
    /// The array request it was a piece of.
    areq: Option<ReqId>,
    second_chance: bool,
}

#[derive(Clone, Debug, Default)]
struct Phys {
    size: u32,
    parent: Option<PParent>,
    /// Where the stream's latest piece on this member ends.
    last_end: Sector,
    /// The array request whose piece last arrived here.
    last_areq: Option<ReqId>,
}

struct VStream {
    size: u32,
    /// Sum of the gaps between the stream's requests (ns): the thinktimes.
    think: u64,
    state: VState,
    /// One per member once established.
    phys: Vec<Phys>,
}

/// A completed array request that may still get a child.
#[derive(Clone, Debug)]
struct VParent {
    end: Sector,
    completion: Time,
    service_time: Duration,
    deadline: Time,
    stream: u64,
}

struct AReq {
    stream: u64,
    /// A request that began where this one ends arrived while it was in service.
    has_child: bool,
    pieces: Vec<ReqId>,
}

#[derive(Copy, Clone, Debug)]
struct Coord {
    stream: u64,
    since: Time,
    /// Members the stream touches, and those that have served a piece of it since the
    /// coordination began (their heads are on its physical streams).
    need: u64,
    boarded: u64,
    /// When the last member boarded: from then on, real arrival times.
    live: Option<Time>,
}

struct PWait {
    stream: u64,
    until: Time,
}

struct MemberState {
    policy: Box<dyn Policy>,
    /// Member requests held or in the device, with their virtual stream.
    tags: IdMap<u64>,
    wait: Option<PWait>,
    child_ready: Option<ReqId>,
    tail_mode: bool,
    hold: Option<ReqId>,
    last_dispatched: Option<ReqId>,
    stats: MemberStats,
}

impl MemberState {
    /// Does this member hold a request of stream `s` (queued or in the device)?
    fn holds(&self, s: u64) -> bool {
        self.tags.values().any(|&t| t == s)
    }
}

/// The state every member's scheduler shares.
struct Core {
    params: StreamParams,
    max_sectors: u32,
    data_members: u64,
    members: Vec<MemberState>,
    /// Virtual parent-to-be queue, sorted by deadline.
    vparents: Vec<VParent>,
    streams: U64Map<VStream>,
    areqs: IdMap<AReq>,
    /// Array requests none of whose pieces has been dispatched: (array sector, stream).
    /// (Only ever searched for a minimum: its order does not matter.)
    pending: IdMap<(Sector, u64)>,
    /// Array requests in service, by the sector where they end.
    inflight_ends: U64Map<ReqId>,
    /// Member request -> its array request.
    piece_of: IdMap<ReqId>,
    coord: Option<Coord>,
    ready: VecDeque<u64>,
    /// The slice of this stream ended with nobody else ready: coordinate the ready queue's
    /// head again once another stream's array request completes.
    rested: Option<u64>,
    wakeups: u64,
    next_stream: u64,
    /// The cost of an arbitrary request (over a third of a member): the virtual service
    /// time when no other stream's request is pending.
    arbitrary: Duration,
    stats: ArrayStreamStats,
    /// Emptied piece lists of completed array requests, for the next ones to reuse (no
    /// allocation per array request).
    spare_pieces: Vec<Vec<ReqId>>,
}

const NO_STREAM: u64 = 0;

/// Stream ids and sectors are integers the scheduler makes or is given: the cheap hasher.
type U64Map<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

impl Core {
    fn phys_threshold(&self) -> u32 {
        self.params.stream_threshold
    }

    fn virtual_threshold(&self) -> u32 {
        self.params.stream_threshold.saturating_mul(self.members.len() as u32)
    }

    fn wake_all(&mut self) {
        let n = self.members.len();
        self.wakeups |= if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    }

    fn drop_expired(&mut self, now: Time) {
        // (sorted by deadline: the expired parents are a prefix)
        let k = self.vparents.partition_point(|p| p.deadline < now);
        if k == 0 {
            return;
        }
        let ended: Vec<u64> = self.vparents.drain(..k).map(|p| p.stream).collect();
        for s in ended {
            // A stream ends when its newest request finds no child in time.
            if self.vparents.iter().all(|p| p.stream != s) {
                self.end_stream(now, s);
            }
        }
    }

    /// Virtual stream `s` ended (no child): forget it, ending its coordination.
    fn end_stream(&mut self, now: Time, s: u64) {
        if self.streams.remove(&s).is_none() {
            return;
        }
        self.ready.retain(|&r| r != s);
        if self.rested == Some(s) {
            self.rested = None;
        }
        if self.coord.is_some_and(|c| c.stream == s) {
            self.coord = None;
            self.wake_all();
            self.start_next(now);
        }
    }

    /// Coordinate the first ready stream, if none is coordinated.
    fn start_next(&mut self, now: Time) {
        if self.coord.is_some() {
            return;
        }
        while let Some(s) = self.ready.pop_front() {
            if let Some(v) = self.streams.get(&s).filter(|v| v.state == VState::Established) {
                let need =
                    v.phys.iter().enumerate().filter(|(_, p)| p.size > 0).fold(0, |a, (m, _)| a | 1u64 << m);
                self.coord = Some(Coord { stream: s, since: now, need, boarded: 0, live: None });
                self.rested = None;
                self.stats.coordinations += 1;
                self.wake_all();
                return;
            }
        }
    }

    /// Is established stream `s` ready (every member it touched has a physical stream)?
    fn check_ready(&mut self, now: Time, s: u64) {
        let thr = self.phys_threshold();
        let Some(v) = self.streams.get(&s) else { return };
        if v.state != VState::Established
            || self.coord.is_some_and(|c| c.stream == s)
            || self.ready.contains(&s)
        {
            return;
        }
        let touched = v.phys.iter().filter(|p| p.size > 0);
        let ready = v.phys.iter().any(|p| p.size > 0) && touched.clone().all(|p| p.size >= thr);
        if ready {
            self.ready.push_back(s);
            if let Some(r) = self.rested.take() {
                // Another stream is ready: the rested one waits behind it.
                if let Some(i) = self.ready.iter().position(|&x| x == r) {
                    self.ready.remove(i);
                    self.ready.push_back(r);
                }
            }
            self.start_next(now);
        }
    }

    /// The coordinated stream broke on a member: mark it unusable, coordinate the next.
    fn broken(&mut self, now: Time, s: u64) {
        if let Some(v) = self.streams.get_mut(&s) {
            if v.state != VState::Unusable {
                v.state = VState::Unusable;
                v.phys = Vec::new();
                self.stats.unusable += 1;
            }
        }
        self.ready.retain(|&r| r != s);
        if self.coord.is_some_and(|c| c.stream == s) {
            self.coord = None;
            self.wake_all();
            self.start_next(now);
        }
    }

    /// The array's slice for the coordinated stream is over: pass the array on.
    fn check_slice(&mut self, now: Time) {
        let Some(c) = self.coord else { return };
        if now.saturating_since(c.since) < self.params.stream_time_slice {
            return;
        }
        self.coord = None;
        self.stats.array_slices += 1;
        self.wake_all();
        let others = self.ready.iter().any(|&r| r != c.stream);
        if self.streams.get(&c.stream).is_some_and(|v| v.state == VState::Established) {
            self.ready.push_back(c.stream);
        }
        if others {
            self.start_next(now);
        } else {
            self.rested = Some(c.stream);
        }
    }

    /// Figure 2's arrival procedure on the virtual disk.
    fn array_arrival(&mut self, now: Time, rq: &Request, dev: &dyn DeviceView) -> u64 {
        self.drop_expired(now);
        let d = self.data_members;
        let mut adopted = None;
        if let Some(r) = self.inflight_ends.remove(&rq.sector) {
            // It begins where an array request still in service ends: that request's child.
            if let Some(a) = self.areqs.get_mut(&r) {
                a.has_child = true;
                adopted = Some((a.stream, Duration::ZERO));
            }
        }
        if adopted.is_none() {
            // The nearest parent that passes the test (the first in deadline order among
            // equals): see the module docs.
            let found = self
                .vparents
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    let est = dev.estimate(p.end / d, rq.sector / d);
                    (now.saturating_since(p.completion) + est < p.service_time).then_some((est, i))
                })
                .min();
            if let Some((_, i)) = found {
                let p = self.vparents.remove(i);
                adopted = Some((p.stream, now.saturating_since(p.completion)));
            }
        }
        let vthr = self.virtual_threshold();
        let n = self.members.len();
        if let Some((s, gap)) = adopted {
            if let Some(v) = self.streams.get_mut(&s) {
                v.size = v.size.saturating_add(1);
                v.think += gap.0;
                if v.state == VState::Forming && v.size >= vthr {
                    v.state = VState::Established;
                    v.phys = vec![Phys::default(); n];
                    self.stats.virtual_streams += 1;
                }
                return s;
            }
        }
        self.next_stream += 1;
        let s = self.next_stream;
        let state = if vthr <= 1 { VState::Established } else { VState::Forming };
        let phys = if state == VState::Established { vec![Phys::default(); n] } else { Vec::new() };
        self.streams.insert(s, VStream { size: 1, think: 0, state, phys });
        s
    }

    /// Figure 2's completion procedure on the virtual disk.
    fn array_completion(&mut self, now: Time, rq: &Request, dev: &dyn DeviceView) {
        self.pending.remove(&rq.id);
        let Some(mut a) = self.areqs.remove(&rq.id) else { return };
        for p in &a.pieces {
            self.piece_of.remove(p);
        }
        a.pieces.clear();
        if self.spare_pieces.len() < 64 {
            self.spare_pieces.push(std::mem::take(&mut a.pieces));
        }
        if self.inflight_ends.get(&rq.end()) == Some(&rq.id) {
            self.inflight_ends.remove(&rq.end());
        }
        if !self.streams.contains_key(&a.stream) {
            return;
        }
        // The stream's requests complete out of order (two read-ahead windows in flight on
        // different members): its newest completion gates its reader, so the stream's
        // waiting parents count from now.
        let mut refreshed = false;
        for p in self.vparents.iter_mut().filter(|p| p.stream == a.stream) {
            p.completion = now;
            p.deadline = now + p.service_time;
            refreshed = true;
        }
        if refreshed {
            self.vparents.sort_by_key(|p| p.deadline);
        }
        // Likewise on the members, for the coordinated stream: a member that finished its
        // piece of this request early has been waiting for the others, not for the reader;
        // the stream's next request can only come now, so that member's parent (and wait)
        // counts from here.
        if self.coord.is_some_and(|c| c.stream == a.stream && c.live.is_some()) {
            if let Some(v) = self.streams.get_mut(&a.stream) {
                for (m, p) in v.phys.iter_mut().enumerate() {
                    let Some(q) = p.parent.as_mut().filter(|q| q.areq == Some(rq.id)) else { continue };
                    q.completion = q.completion.max(now);
                    if let Some(w) = self.members[m].wait.as_mut().filter(|w| w.stream == a.stream) {
                        w.until = now + q.service_time;
                        self.wakeups |= 1u64 << m;
                    }
                }
            }
        }
        if a.has_child {
            return;
        }
        // The virtual disk's alternative: the nearest array request of another stream whose
        // pieces still wait in the members' queues (an idle array: an arbitrary request).
        let d = self.data_members;
        let service_time = self
            .pending
            .iter()
            .filter(|(_, &(_, s))| s != a.stream)
            .map(|(_, &(sector, _))| dev.estimate(rq.end() / d, sector / d))
            .min()
            .unwrap_or(self.arbitrary);
        let p = VParent {
            end: rq.end(),
            completion: now,
            service_time,
            deadline: now + service_time,
            stream: a.stream,
        };
        let at = self.vparents.partition_point(|q| q.deadline <= p.deadline);
        self.vparents.insert(at, p);
        if self.rested.is_some_and(|r| r != a.stream) {
            self.rested = None;
            self.start_next(now);
        }
    }

    /// The first piece of array request `areq` (stream `s`) on member `m`: does it extend
    /// the member's physical stream? Returns whether it is a child.
    fn phys_arrival(
        &mut self,
        m: usize,
        now: Time,
        areq: ReqId,
        s: u64,
        rq: &Request,
        dev: &dyn DeviceView,
    ) -> bool {
        let live = self.coord.filter(|c| c.stream == s).and_then(|c| c.live);
        let Some(v) = self.streams.get_mut(&s) else { return false };
        if v.phys.is_empty() {
            return false;
        }
        let think = v.think;
        let p = &mut v.phys[m];
        let follows = p.last_end == rq.sector;
        p.last_end = p.last_end.max(rq.end());
        if p.last_areq == Some(areq) {
            return false;
        }
        p.last_areq = Some(areq);
        if self.members[m].holds(s) {
            // Its predecessor here is still held or in service: a child if it begins where
            // that one ends; otherwise no completed parent to judge it by.
            if follows {
                p.size = p.size.saturating_add(1);
                self.check_ready(now, s);
            }
            return follows;
        }
        let Some(q) = p.parent.take() else {
            // No completed parent: a first piece, or its predecessor is still in service.
            p.size = p.size.max(1);
            return false;
        };
        // Real arrival times once every member serves the coordinated stream, for parents
        // that completed since (the urgent pieces that bring the heads over are still
        // judged optimistically).
        let coordinated = live.is_some_and(|t| q.completion >= t);
        let gap = if coordinated {
            now.saturating_since(q.completion)
        } else {
            Duration(think.saturating_sub(q.think_mark))
        };
        let child = gap + dev.estimate(q.end, rq.sector) < q.service_time;
        if child {
            p.size = p.size.saturating_add(1);
            self.check_ready(now, s);
        } else if !coordinated {
            p.size = 1;
        }
        // (A coordinated stream's piece that comes too late to be a child, while this
        // member was not waiting for it, costs nothing: the stream breaks only when a
        // member's wait runs out.)
        child
    }

    fn stream_of(&self, id: ReqId) -> u64 {
        self.piece_of.get(&id).and_then(|a| self.areqs.get(a)).map_or(NO_STREAM, |a| a.stream)
    }

    fn arrive(&mut self, m: usize, now: Time, rq: Request, dev: &dyn DeviceView) -> Arrival {
        let areq = self.piece_of.get(&rq.id).copied();
        let s = self.stream_of(rq.id);
        let child = match areq {
            Some(a) if s != NO_STREAM => self.phys_arrival(m, now, a, s, &rq, dev),
            _ => false,
        };
        let coordinated = self.coord.is_some_and(|c| c.stream == s);
        let ms = &mut self.members[m];
        if child && coordinated && ms.wait.as_ref().is_some_and(|w| w.stream == s) {
            ms.wait = None;
            ms.child_ready = Some(rq.id);
            ms.stats.children_dispatched += 1;
        }
        if let Some(into) = ms.policy.merge(now, &rq, self.max_sectors) {
            // The merged extent belongs to the coordinated stream if either part does.
            if coordinated {
                ms.tags.insert(into, s);
            }
            if ms.child_ready == Some(rq.id) {
                ms.child_ready = Some(into);
            }
            return Arrival::Merged { into };
        }
        ms.tags.insert(rq.id, s);
        ms.policy.add(now, rq);
        Arrival::Queued
    }

    fn decide(&mut self, m: usize, now: Time, dev: &dyn DeviceView) -> Decision {
        self.drop_expired(now);
        self.check_slice(now);
        let d = self.decide_inner(m, now, dev);
        if let Decision::Dispatch(rq) = &d {
            let coord = self.coord.map(|c| c.stream);
            let ms = &mut self.members[m];
            ms.last_dispatched = Some(rq.id);
            if let Some(a) = self.piece_of.get(&rq.id) {
                self.pending.remove(a);
            }
            if ms.tail_mode && coord.is_some() && ms.tags.get(&rq.id).copied() == coord {
                ms.hold = Some(rq.id);
            }
        }
        d
    }

    fn dispatch_policy(ms: &mut MemberState, now: Time, dev: &dyn DeviceView) -> Decision {
        match ms.policy.select(now, dev) {
            Some(id) => Decision::Dispatch(ms.policy.take(now, id)),
            None => Decision::Idle,
        }
    }

    fn decide_inner(&mut self, m: usize, now: Time, dev: &dyn DeviceView) -> Decision {
        let coord = self.coord;
        let slice_end = coord.map(|c| c.since + self.params.stream_time_slice);
        let ms = &mut self.members[m];
        if let Some(id) = ms.child_ready.take() {
            if ms.policy.get(id).is_some() {
                return Decision::Dispatch(ms.policy.take(now, id));
            }
        }
        let pending = !ms.policy.is_empty();
        if pending && ms.policy.urgent(now) {
            if ms.wait.take().is_some() || ms.hold.take().is_some() {
                ms.stats.urgent_preemptions += 1;
            }
            if let Some(c) = self.coord.as_mut().filter(|c| c.need & 1u64 << m != 0) {
                // The head leaves the stream: it must board again, and the other members
                // wait for it as they did at the start, not as for a late child.
                c.boarded &= !(1u64 << m);
                c.live = None;
            }
            return Self::dispatch_policy(&mut self.members[m], now, dev);
        }
        let cs = coord.map(|c| c.stream);
        if let Some(h) = ms.hold {
            if cs.is_some() && ms.tags.get(&h).copied() == cs {
                if !pending {
                    return Decision::Idle;
                }
                let mut until = slice_end.expect("coordinated");
                if let Some(t) = ms.policy.next_urgent_at() {
                    until = until.min(t);
                }
                return Decision::WaitUntil(until.max(now));
            }
            ms.hold = None;
        }
        if ms.wait.as_ref().is_some_and(|w| Some(w.stream) != cs) {
            ms.wait = None;
        }
        if let Some(s) = cs {
            // The coordinated stream's pieces first: nearest to the head, then oldest id.
            let head = dev.head();
            let best = ms
                .tags
                .iter()
                .filter(|(id, &t)| t == s && ms.policy.get(**id).is_some())
                .map(|(id, _)| (dev.estimate(head, ms.policy.get(*id).expect("queued").sector), *id))
                .min();
            if let Some((_, id)) = best {
                ms.wait = None;
                ms.stats.coordinated_dispatches += 1;
                return Decision::Dispatch(ms.policy.take(now, id));
            }
        }
        if let Some(w) = &ms.wait {
            if now >= w.until {
                let s = w.stream;
                return self.wait_expired(m, now, s, dev);
            }
            let mut until = w.until;
            if pending {
                if let Some(t) = ms.policy.next_urgent_at() {
                    until = until.min(t);
                }
                if let Some(e) = slice_end {
                    until = until.min(e);
                }
            }
            return Decision::WaitUntil(until.max(now));
        }
        Self::dispatch_policy(ms, now, dev)
    }

    /// A member's wait for the coordinated stream's next piece ran out: second chance, or
    /// the physical stream is broken.
    fn wait_expired(&mut self, m: usize, now: Time, s: u64, dev: &dyn DeviceView) -> Decision {
        let thr = self.phys_threshold();
        let second = self.params.second_chance_size();
        self.members[m].wait = None;
        let parent_areq =
            self.streams.get(&s).and_then(|v| v.phys.get(m)).and_then(|p| p.parent.as_ref()?.areq);
        if parent_areq.is_some_and(|a| self.areqs.contains_key(&a)) {
            // The request this member served a piece of is still in service on another
            // member: no child can come before it completes, and its completion restarts
            // this wait.
            let until = self.coord.map_or(now, |c| c.since + self.params.stream_time_slice);
            if until > now {
                self.members[m].wait = Some(PWait { stream: s, until });
                return Decision::WaitUntil(until);
            }
        }
        let mut extended = None;
        if let Some(p) = self.streams.get_mut(&s).and_then(|v| v.phys.get_mut(m)) {
            if let Some(q) = p.parent.as_mut() {
                if p.size >= second && !q.second_chance {
                    let extra;
                    (extra, q.service_time) = self.params.second_chance(q.service_time);
                    q.second_chance = true;
                    p.size = thr;
                    extended = Some(now + extra);
                }
            }
        }
        let ms = &mut self.members[m];
        if let Some(until) = extended {
            ms.stats.second_chances += 1;
            ms.wait = Some(PWait { stream: s, until });
            return Decision::WaitUntil(until.max(now));
        }
        ms.stats.timeouts += 1;
        self.broken(now, s);
        Self::dispatch_policy(&mut self.members[m], now, dev)
    }

    fn completed(&mut self, m: usize, now: Time, rq: &Request, dev: &dyn DeviceView) {
        let coord = self.coord.map(|c| c.stream);
        let ms = &mut self.members[m];
        ms.policy.completed(now, rq);
        let s = ms.tags.remove(&rq.id).unwrap_or(NO_STREAM);
        let alt = match ms.policy.select(now, dev) {
            Some(id) => dev.estimate(rq.end(), ms.policy.get(id).expect("selected request is queued").sector),
            None => arbitrary_cost(dev),
        };
        let decides = !ms.tail_mode || ms.hold == Some(rq.id) || ms.last_dispatched == Some(rq.id);
        if ms.hold == Some(rq.id) {
            ms.hold = None;
        }
        if decides {
            ms.wait = None;
        }
        let more_queued =
            s != NO_STREAM && ms.tags.iter().any(|(id, &t)| t == s && ms.policy.get(*id).is_some());
        if let Some(c) = self.coord.as_mut().filter(|c| c.stream == s) {
            c.boarded |= 1u64 << m;
            if c.live.is_none() && c.boarded & c.need == c.need {
                c.live = Some(now);
            }
        }
        let boarding = self.coord.is_some_and(|c| c.stream == s && c.live.is_none());
        let slice_end = self.coord.map(|c| c.since + self.params.stream_time_slice);
        let areq = self.piece_of.get(&rq.id).copied();
        let Some(v) = self.streams.get_mut(&s) else { return };
        let Some(p) = v.phys.get_mut(m) else { return };
        p.parent = Some(PParent {
            end: rq.end(),
            completion: now,
            service_time: alt,
            think_mark: v.think,
            areq,
            second_chance: false,
        });
        if decides && coord == Some(s) && !more_queued {
            // While other members still move their heads to the stream with a piece of it,
            // wait for them (until the slice ends): the stream's next request needs them.
            let others_boarding =
                boarding && self.members.iter().enumerate().any(|(k, o)| k != m && o.holds(s));
            let ms = &mut self.members[m];
            let until = if others_boarding { slice_end.expect("coordinated") } else { now + alt };
            ms.wait = Some(PWait { stream: s, until });
            ms.stats.waits += 1;
        }
    }
}

/// One member's face of the shared core.
struct MemberSched {
    m: usize,
    name: String,
    core: Arc<Mutex<Core>>,
}

fn lock(core: &Mutex<Core>) -> MutexGuard<'_, Core> {
    // A panic while holding the lock is a bug already reported; keep going with the state.
    core.lock().unwrap_or_else(|e| e.into_inner())
}

impl Scheduler for MemberSched {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn arrive(&mut self, now: Time, rq: Request, dev: &dyn DeviceView) -> Arrival {
        lock(&self.core).arrive(self.m, now, rq, dev)
    }
    fn decide(&mut self, now: Time, dev: &dyn DeviceView) -> Decision {
        lock(&self.core).decide(self.m, now, dev)
    }
    fn completed(&mut self, now: Time, rq: &Request, dev: &dyn DeviceView) {
        lock(&self.core).completed(self.m, now, rq, dev)
    }
    fn pending(&self) -> usize {
        lock(&self.core).members[self.m].policy.len()
    }
    fn set_weight(&mut self, ctx: ContextId, weight: u32) {
        lock(&self.core).members[self.m].policy.set_weight(ctx, weight)
    }
    fn set_qos(&mut self, ctx: ContextId, qos: Qos) {
        lock(&self.core).members[self.m].policy.set_qos(ctx, qos)
    }
    fn set_ioprio(&mut self, ctx: ContextId, prio: crate::IoPrio) {
        lock(&self.core).members[self.m].policy.set_ioprio(ctx, prio)
    }
    fn set_device_queue_depth(&mut self, depth: u32) {
        lock(&self.core).members[self.m].tail_mode = depth > 1;
    }
    fn stats(&self) -> Vec<(&'static str, u64)> {
        let c = lock(&self.core);
        let s = &c.members[self.m].stats;
        vec![
            ("waits", s.waits),
            ("children_dispatched", s.children_dispatched),
            ("timeouts", s.timeouts),
            ("second_chances", s.second_chances),
            ("coordinated_dispatches", s.coordinated_dispatches),
            ("urgent_preemptions", s.urgent_preemptions),
        ]
    }
}

/// The array's face of the shared core.
struct Hooks {
    core: Arc<Mutex<Core>>,
}

impl ArrayHooks for Hooks {
    fn pieces(&mut self, now: Time, rq: &Request, pieces: &[(u32, ReqId)], dev: &dyn DeviceView) {
        let mut c = lock(&self.core);
        if c.arbitrary == Duration::ZERO {
            c.arbitrary = arbitrary_cost(dev);
        }
        if !c.areqs.contains_key(&rq.id) {
            let stream = c.array_arrival(now, rq, dev);
            let list = c.spare_pieces.pop().unwrap_or_else(|| Vec::with_capacity(pieces.len()));
            c.areqs.insert(rq.id, AReq { stream, has_child: false, pieces: list });
            c.inflight_ends.insert(rq.end(), rq.id);
            c.pending.insert(rq.id, (rq.sector, stream));
        }
        for &(_, id) in pieces {
            c.piece_of.insert(id, rq.id);
        }
        c.areqs.get_mut(&rq.id).expect("registered").pieces.extend(pieces.iter().map(|p| p.1));
    }
    fn completed(&mut self, now: Time, rq: &Request, dev: &dyn DeviceView) {
        lock(&self.core).array_completion(now, rq, dev)
    }
    fn take_wakeups(&mut self) -> u64 {
        std::mem::take(&mut lock(&self.core).wakeups)
    }
    fn stats(&self) -> Vec<(&'static str, u64)> {
        let c = lock(&self.core);
        let s = &c.stats;
        vec![
            ("virtual_streams", s.virtual_streams),
            ("coordinations", s.coordinations),
            ("array_slices", s.array_slices),
            ("unusable_streams", s.unusable),
        ]
    }
}

/// The coordinated array stream scheduler for an array of `shape`: one scheduler per
/// member (each named `stream:POLICY`) around `policies` (one per member), and the
/// array-wide hooks.
pub fn array_stream(
    policies: Vec<Box<dyn Policy>>,
    shape: ArrayShape,
    params: StreamParams,
    max_sectors: u32,
) -> ArraySchedulers {
    assert_eq!(policies.len(), shape.members as usize, "one policy per member");
    assert!((1..=64).contains(&shape.members), "1 to 64 members");
    assert!((1..=shape.members).contains(&shape.data_members), "1 to `members` data members");
    let name = format!("stream:{}", policies[0].name());
    let members = policies
        .into_iter()
        .map(|policy| MemberState {
            policy,
            tags: IdMap::default(),
            wait: None,
            child_ready: None,
            tail_mode: false,
            hold: None,
            last_dispatched: None,
            stats: MemberStats::default(),
        })
        .collect();
    let core = Arc::new(Mutex::new(Core {
        params,
        max_sectors,
        data_members: shape.data_members as u64,
        members,
        vparents: Vec::with_capacity(16),
        streams: U64Map::default(),
        areqs: IdMap::default(),
        inflight_ends: U64Map::default(),
        pending: Default::default(),
        piece_of: IdMap::default(),
        coord: None,
        ready: VecDeque::new(),
        rested: None,
        wakeups: 0,
        next_stream: NO_STREAM,
        arbitrary: Duration::ZERO,
        stats: ArrayStreamStats::default(),
        spare_pieces: Vec::new(),
    }));
    ArraySchedulers {
        members: (0..shape.members as usize)
            .map(|m| {
                Box::new(MemberSched { m, name: name.clone(), core: core.clone() }) as Box<dyn Scheduler>
            })
            .collect(),
        hooks: Some(Box::new(Hooks { core })),
    }
}

#[cfg(test)]
mod tests;

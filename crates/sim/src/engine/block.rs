//! The block layer: what is between the host and the platters — an array's front end when
//! there is one, and per member drive a scheduler, the drive (`headway_disk::Drive`: a
//! command queue of `queue_depth` in front of the mechanics, write-through or write-back)
//! and the timer of the scheduler's waits.
//!
//! The scheduler is driven exactly as the contract in `headway_sched::scheduler` says:
//! `decide` whenever the drive can take a command — after a completion or a destage that
//! frees write-cache room, on every arrival (at the end of the plug, `fill_kicked`), and
//! when a `WaitUntil` timer fires (one timer event serves many waits: a wait superseded by a
//! later decision is forgotten, and an event that fires before the current wait's time
//! re-arms for it) — and again after each dispatch while the drive has room, so a deep
//! queue is kept full. `dispatched_to_device` is called as a request enters the drive,
//! `completed` as it leaves.
//!
//! The head position the scheduler is told ([`DeviceView::head`](headway_sched::DeviceView))
//! is the end of the last completed request at depth 1, and the end of the request last put
//! in the drive's queue when the drive queues commands (seeds/000 Section 3.2: the drive
//! serves roughly in queue order, so the queue's tail is where the head will be when the
//! next dispatch is served).
//!
//! Each drive has one pending event in the heap at a time, at `Drive::next_event` (a
//! command finishing or a destage ending), also recognised by a generation number when a
//! submission moves it earlier.
//!
//! With an array ([`super::array`]) every member is a drive of the same model and
//! configuration with its own scheduler instance (built from the same name and settings,
//! told its member's queue depth) and its own head position; member requests go through
//! their member's scheduler (merging there as usual) and drive. A scheduler that
//! coordinates its members (`stream` on an array, [`headway_sched::ArrayHooks`]) is also
//! told each array request's pieces before they reach the members and its completion, and
//! names the members another member's event concerns (their schedulers are asked again at
//! once). Without an array there is one member and no splitting.
//!
//! Several independent devices (a DiskSim system whose generators name several disks or
//! arrays, [`super::RunInput::devices`]) each have a front: a lone drive of the device's
//! model, or an array front end over members of its own. A request's device is in its
//! address above [`super::DEVICE_SHIFT`]; it goes to that device with the rest of the
//! address as its sector, and nothing spans devices. A member drive of an array among
//! several devices has its own scheduler instance and no array-wide part.
//!
//! The layer hands completed requests back one at a time (`drive_event`, then
//! `finish_piece` for each request the completed command carried), so the layer above
//! acts on each before the next: the order of everything that follows a completion is the
//! order of the requests in the command.

use headway_disk::array::{CopyView, Piece};
use headway_disk::{Cmd, DiskSpec, Drive, DriveError, Hdd, WriteCache};
use headway_sched::idmap::IdMap;
use headway_sched::{
    ArrayHooks, ArraySchedulers, Arrival, ContextId, CurveView, Decision, Dir, ReqId, Request, Scheduler,
    ServiceCurve, Time,
};

use super::array::{ArrayFront, PieceDone};
use super::bus::{Buses, Phase};
use super::core::{Core, Ev};
use super::ctlr::CtlrFront;
use super::devices::{aggregate, Counts, Figures};
use super::RunInput;
use crate::report::{DeviceReport, HeadTrace, MemberReport};
use crate::workload::Job;

/// The tag of a drive's cache flush (request ids count up from 1 and never reach it).
const FLUSH_TAG: u64 = u64::MAX;

/// One drive with its scheduler: the whole device without an array, a member with one.
struct Member {
    sched: Box<dyn Scheduler>,
    drive: Drive,
    head: u64,
    /// The last sector of the request last sent to the drive (0 before any): where a
    /// mirror's read policy takes this member's queue to be.
    last_sector: u64,
    /// Requests in the drive with their submission times (at most the queue depth).
    inflight: Vec<(Request, Time)>,
    /// Time of the drive event in the heap, and its generation.
    drive_ev: Option<Time>,
    drive_gen: u64,
    /// When the scheduler asked to be woken (its latest `WaitUntil`), and the earliest
    /// timer event in the heap.
    timer_at: Option<Time>,
    timer_ev: Option<Time>,
    /// Requests reached the scheduler since it was last asked to decide.
    kicked: bool,
    /// Who waits for this drive's flush in progress (`fsync`, a trace's flush): the
    /// tokens the workload source gave.
    flush_waiters: Vec<u64>,
    figures: Figures,
    /// On a shared bus ([`super::bus`]), and where its command is there (always `Idle`
    /// off one).
    seated: bool,
    phase: Phase,
}

/// What a drive event brought.
pub(crate) enum DriveEvent {
    /// A superseded event (its drive moved its next event since).
    Stale,
    /// Nothing finished (a destage ended, or a command started).
    Nothing,
    /// The drive's cache flush completed: its waiters' tokens, in the order they came.
    Flushed(Vec<u64>),
    /// A command completed: its request (the carrier of any merged into it), the command's
    /// service time (ns) and bytes.
    Completed { id: ReqId, service: u64, total: u64 },
}

/// What a finished disk request completes ([`Block::finish_piece`]).
pub(crate) enum Completes {
    /// The request itself (not an array's member request).
    Itself,
    /// A member request whose array request has more under way.
    Nothing,
    /// The array request it belonged to: its id, the drive time of its member requests and
    /// its bytes.
    Array { id: ReqId, disk_ns: u64, total: u64 },
}

/// What one device of the run is: a lone drive (member `first`), or an array whose
/// members are `first..` (its pieces' member numbers count from `first`).
struct Front {
    first: usize,
    array: Option<ArrayFront>,
}

/// The devices, their schedulers, the array front ends.
pub(crate) struct Block<'a> {
    members: Vec<Member>,
    /// What the run's addresses reach: one front without `devices`, one per device with them.
    fronts: Vec<Front>,
    /// Some front is an array.
    arrays: bool,
    /// Buses shared by several members ([`super::bus`]), if any.
    buses: Option<Buses>,
    /// A caching controller in front of the drive ([`super::ctlr`]).
    ctlr: Option<CtlrFront>,
    /// The members are independent devices, each addressed on its own: a request's
    /// device is in its address above [`super::DEVICE_SHIFT`].
    devices: bool,
    /// The array-wide part of a scheduler that coordinates the members.
    hooks: Option<Box<dyn ArrayHooks>>,
    /// The drives queue commands: the head is the tail of its queue (module docs).
    deep: bool,
    write_back: bool,
    curve: &'a ServiceCurve,
    /// Sectors of one member (the whole device without an array).
    capacity: u64,
    /// Requests merged into a carrier, by carrier.
    merged: IdMap<Vec<ReqId>>,
    /// Dispatches recorded for the report, when asked for, the place among them of each
    /// one still in the drive (for its service time), and the job of each request that
    /// arrived while recording.
    trace: Option<HeadTrace>,
    traced: IdMap<usize>,
    owners: IdMap<u32>,
    /// When the last command completed.
    pub last_complete: Time,
}

impl<'a> Block<'a> {
    /// The block layer of `input`, its schedulers told the issuers' weights, QoS classes
    /// and I/O priorities (the first job of an issuer decides) and their drive's depth.
    pub fn new(scheds: ArraySchedulers, jobs: &[Job], input: &RunInput<'a>) -> Result<Self, DriveError> {
        let ArraySchedulers { members: scheds, hooks } = scheds;
        let cache_device =
            input.disk.controller.as_ref().and_then(|c| c.on_device.as_ref()).map(|d| &*d.device);
        // each member's drive model, and what the addresses reach
        let mut specs: Vec<&DiskSpec> = Vec::new();
        let mut fronts = Vec::new();
        // each member's seat on a shared bus: a lone drive's, or an array member's own
        let mut seats = Vec::new();
        if input.devices.is_empty() {
            let n = match cache_device {
                Some(_) => 2,
                None => input.array.map_or(1, |a| a.spec.members as usize),
            };
            specs.extend((0..n).map(|i| cache_device.filter(|_| i == 1).unwrap_or(input.disk)));
            // (the cache device is seated as the drive is: each its own first seat)
            seats.extend((0..n).map(|i| match cache_device {
                Some(c) if i == 1 => c.bus_seats.first(),
                Some(_) => input.disk.bus_seats.first(),
                None => input.disk.bus_seats.get(i),
            }));
            fronts.push(Front { first: 0, array: input.array.map(|a| ArrayFront::new(a, input.seed)) });
        } else {
            for (d, dev) in input.devices.iter().enumerate() {
                let first = specs.len();
                specs.extend(std::iter::repeat_n(&dev.disk, dev.members()));
                seats.extend((0..dev.members()).map(|i| dev.disk.bus_seats.get(i)));
                let array = dev.array.map(|spec| {
                    let cfg = super::ArrayConfig { spec, queue_depth: super::DEFAULT_ARRAY_QUEUE_DEPTH };
                    ArrayFront::new(cfg, input.seed.wrapping_add(d as u64))
                });
                fronts.push(Front { first, array });
            }
        }
        assert_eq!(scheds.len(), specs.len(), "one scheduler per member");
        let mut members = Vec::with_capacity(specs.len());
        for (mut sched, spec) in scheds.into_iter().zip(specs) {
            tell_issuers(sched.as_mut(), jobs);
            sched.set_device_queue_depth(input.drive.queue_depth);
            members.push(Member {
                sched,
                drive: Drive::new(Hdd::new(spec.clone()), input.drive)?,
                head: 0,
                last_sector: 0,
                inflight: Vec::with_capacity(input.drive.queue_depth as usize),
                drive_ev: None,
                drive_gen: 0,
                timer_at: None,
                timer_ev: None,
                kicked: false,
                flush_waiters: Vec::new(),
                figures: Figures::default(),
                seated: false,
                phase: Phase::Idle,
            });
        }
        let capacity = members[0].drive.hdd().capacity();
        let buses = Buses::new(&seats);
        for (i, m) in members.iter_mut().enumerate() {
            m.seated = buses.as_ref().is_some_and(|b| b.seated(i));
        }
        Ok(Block {
            members,
            arrays: fronts.iter().any(|f| f.array.is_some()),
            fronts,
            buses,
            hooks,
            ctlr: input.disk.controller.as_ref().map(CtlrFront::new),
            devices: !input.devices.is_empty(),
            deep: input.drive.queue_depth > 1,
            write_back: input.drive.write_cache == WriteCache::Back,
            curve: input.curve,
            capacity,
            merged: IdMap::default(),
            trace: None,
            traced: IdMap::default(),
            owners: IdMap::default(),
            last_complete: Time::ZERO,
        })
    }

    /// The controller's event: its disk requests go to the scheduler; the host requests it
    /// completed (id, drive time, bytes) are returned.
    pub fn ctlr_wake(&mut self, core: &mut Core) -> Vec<(ReqId, u64, u64)> {
        let w = self.ctlr.as_mut().expect("a controller's event").wake(core);
        let sent = !w.send.is_empty();
        let mut order: Vec<usize> = Vec::new();
        for (device, rq) in w.send {
            self.arrive_at(core, device, rq);
            if !order.contains(&device) {
                order.push(device);
            }
        }
        // each device takes its requests in the order the controller sent them, and so asks
        // for a bus they share in that order (DiskSim's controller sends a fill of what the
        // drive read before the drive's next request)
        for m in order {
            self.fill_if_kicked(core, m);
        }
        if sent {
            self.fill_kicked(core);
        }
        w.done
    }

    /// Record the dispatches of the run's first stretch ([`HeadTrace`]).
    pub fn record_head_trace(&mut self, trace: HeadTrace) {
        self.trace = Some(trace);
    }

    pub fn take_head_trace(&mut self) -> Option<HeadTrace> {
        self.trace.take()
    }

    /// Members (1 without an array).
    pub fn members(&self) -> usize {
        self.members.len()
    }

    /// The first member's scheduler's name (every member runs the same one).
    pub fn scheduler_name(&self) -> String {
        self.members[0].sched.name()
    }

    /// Requests waiting in the schedulers.
    pub fn pending(&self) -> usize {
        self.members.iter().map(|m| m.sched.pending()).sum()
    }

    fn view(&self, m: usize) -> CurveView<'a> {
        CurveView { head: self.members[m].head, curve: self.curve, capacity: self.capacity }
    }

    /// Time passes by `dt` before the next event: count it where it is idle waiting (the
    /// drive empty while its scheduler holds requests) or write-cache stall.
    #[inline(always)]
    pub fn elapse(&mut self, dt: u64) {
        for m in &mut self.members {
            // (a drive refusing commands, its write cache full, is not the scheduler waiting)
            if m.drive.in_queue() == 0 && m.sched.pending() > 0 && m.drive.can_accept() {
                m.figures.idle_wait_ns += dt;
            }
            if self.write_back && m.drive.write_cache_full() {
                m.figures.write_cache_full_ns += dt;
            }
        }
    }

    /// Request `rq` of job `job` reaches the block layer (the array's front end, with an
    /// array). Its member schedulers are asked at the end of the plug (`fill_kicked`).
    #[inline(always)]
    pub fn arrive(&mut self, core: &mut Core, rq: Request, job: u32) {
        if self.trace.as_ref().is_some_and(|t| core.now.0 <= t.window_ns && t.t_ns.len() < t.max) {
            self.owners.insert(rq.id, job);
        }
        if let Some(c) = self.ctlr.as_mut() {
            return c.arrive(core, rq);
        }
        if !self.devices && !self.arrays {
            // (one drive: the run's every request)
            return self.arrive_at(core, 0, rq);
        }
        let (f, rq) = match self.devices {
            true => {
                let sector = rq.sector & ((1 << super::DEVICE_SHIFT) - 1);
                ((rq.sector >> super::DEVICE_SHIFT) as usize, Request { sector, ..rq })
            }
            false => (0, rq),
        };
        let front = &mut self.fronts[f];
        let Some(a) = front.array.as_mut() else {
            let m = front.first;
            return self.arrive_at(core, m, rq);
        };
        if let Some(rq) = a.offer(rq) {
            self.split(core, f, rq);
        }
    }

    /// A request reaches member `m`'s scheduler.
    fn arrive_at(&mut self, core: &Core, m: usize, rq: Request) {
        let view = self.view(m);
        let mem = &mut self.members[m];
        mem.figures.flow_in.add(rq.dir, rq.len);
        mem.kicked = true;
        let id = rq.id;
        if let Arrival::Merged { into } = mem.sched.arrive(core.now, rq, &view) {
            self.merged.entry(into).or_default().push(id);
        }
    }

    /// An array request is admitted to front `f`: the member requests it starts with go out.
    fn split(&mut self, core: &mut Core, f: usize, rq: Request) {
        let Front { first, array } = &mut self.fronts[f];
        let members = &self.members[*first..];
        let view = |m: u32| {
            let m = &members[m as usize];
            CopyView { queued: m.sched.pending() + m.inflight.len(), position: m.last_sector }
        };
        let pieces = array.as_mut().expect("an array").split(rq, &view);
        self.issue_pieces(core, f, rq, &pieces, false);
    }

    /// Send `pieces` of array request `parent` to the members of front `f`, each in its
    /// direction.
    fn issue_pieces(
        &mut self,
        core: &mut Core,
        f: usize,
        parent: Request,
        pieces: &[(Piece, Dir)],
        released: bool,
    ) {
        let first = core.new_ids(pieces.len() as u64);
        let front = &mut self.fronts[f];
        front.array.as_mut().expect("an array").issued(parent.id, pieces, first);
        let base = front.first;
        let view = self.view(0);
        if let Some(h) = self.hooks.as_mut() {
            let ids: Vec<(u32, ReqId)> =
                pieces.iter().enumerate().map(|(i, p)| (p.0.member, ReqId(first + i as u64))).collect();
            h.pieces(core.now, &parent, &ids, &view);
        }
        for (i, &(p, dir)) in pieces.iter().enumerate() {
            let id = ReqId(first + i as u64);
            let rq = Request { id, sector: p.sector, len: p.len, dir, arrival: core.now, ..parent };
            self.arrive_at(core, base + p.member as usize, rq);
        }
        if self.buses.is_some() {
            let level = self.fronts[f].array.as_ref().expect("an array").level();
            for m in disksim_send_order(level, pieces, released) {
                self.fill_if_kicked(core, base + m as usize);
            }
        }
    }

    /// Disk request `id` is done (`service` ns of drive time carried `total` bytes): what
    /// that completes. The last member request of an array request completes it (or,
    /// ending reads that writes wait for, sends those writes) and admits the next waiting one.
    #[inline(always)]
    pub fn finish_piece(&mut self, core: &mut Core, id: ReqId, service: u64, total: u64) -> Completes {
        if let Some(c) = self.ctlr.as_mut() {
            if c.disk_done(core, id, service) {
                return Completes::Nothing;
            }
        }
        if !self.arrays {
            return Completes::Itself;
        }
        let view = self.hooks.is_some().then(|| self.view(0));
        // (the front whose piece it is: one array in most runs, a few at most)
        let Some((f, done)) = self.fronts.iter_mut().enumerate().find_map(|(f, front)| {
            match front.array.as_mut()?.piece_done(id, service, total) {
                PieceDone::NotAPiece => None,
                done => Some((f, done)),
            }
        }) else {
            return Completes::Itself;
        };
        match done {
            PieceDone::NotAPiece => unreachable!("found above"),
            PieceDone::Pending => Completes::Nothing,
            PieceDone::Writes(rq, writes) => {
                let writes: Vec<(Piece, Dir)> = writes.into_iter().map(|p| (p, Dir::Write)).collect();
                self.issue_pieces(core, f, rq, &writes, true);
                Completes::Nothing
            }
            PieceDone::Complete(r) => {
                if let (Some(h), Some(view)) = (self.hooks.as_mut(), view.as_ref()) {
                    h.completed(core.now, &r.rq, view);
                }
                while let Some(next) = self.fronts[f].array.as_mut().expect("an array").admit_next() {
                    self.split(core, f, next);
                }
                self.owners.remove(&r.rq.id);
                Completes::Array { id: r.rq.id, disk_ns: r.disk_ns, total: r.rq.bytes().max(1) }
            }
        }
    }

    /// Make sure a timer event is in the heap no later than `t`. Waits are superseded far
    /// more often than they expire (a stream's child arrives first), so one event serves
    /// many waits: an event that fires early re-arms for the current `timer_at`.
    fn arm_timer(&mut self, core: &mut Core, m: usize, t: Time) {
        if self.members[m].timer_ev.is_none_or(|e| e > t) {
            self.members[m].timer_ev = Some(t);
            core.push(t, Ev::Timer(m as u32));
        }
    }

    /// Member `m`'s timer event fired.
    pub fn timer(&mut self, core: &mut Core, m: usize) {
        let t = core.now;
        let mem = &mut self.members[m];
        if mem.timer_ev == Some(t) {
            mem.timer_ev = None;
        }
        match mem.timer_at {
            Some(at) if at <= t => {
                mem.timer_at = None;
                if mem.drive.can_accept() {
                    self.fill(core, m);
                }
                if self.hooks.is_some() {
                    self.fill_kicked(core);
                }
            }
            Some(at) => self.arm_timer(core, m, at),
            None => {}
        }
    }

    /// Ask every member scheduler that received requests since it last decided (and whose
    /// drive can take a command): the end of a plug.
    pub fn fill_kicked(&mut self, core: &mut Core) {
        if let Some(h) = self.hooks.as_mut() {
            let mut w = h.take_wakeups();
            while w != 0 {
                self.members[w.trailing_zeros() as usize].kicked = true;
                w &= w - 1;
            }
        }
        for m in 0..self.members.len() {
            self.fill_if_kicked(core, m);
        }
    }

    /// [`Block::fill`] member `m` if something reached its scheduler and its drive can take
    /// a command.
    #[inline(always)]
    fn fill_if_kicked(&mut self, core: &mut Core, m: usize) {
        if self.members[m].kicked && self.members[m].drive.can_accept() {
            self.fill(core, m);
        }
    }

    /// Keep member `m`'s drive fed: ask its scheduler while the drive can take a command.
    fn fill(&mut self, core: &mut Core, m: usize) {
        // any decision supersedes the previous wait
        self.members[m].timer_at = None;
        self.members[m].kicked = false;
        let seated = self.members[m].seated;
        while self.members[m].drive.can_accept() {
            if seated && self.members[m].phase != Phase::Idle {
                break;
            }
            let view = self.view(m);
            let mem = &mut self.members[m];
            match mem.sched.decide(core.now, &view) {
                Decision::Dispatch(rq) if seated => {
                    mem.sched.dispatched_to_device(core.now, &rq);
                    mem.phase = Phase::Start(rq);
                    self.ask_bus(core, m);
                    return;
                }
                Decision::Dispatch(rq) => {
                    mem.sched.dispatched_to_device(core.now, &rq);
                    self.submit(core.now, m, rq);
                }
                Decision::WaitUntil(t) => {
                    // A wait "until now" would spin: the scheduler is re-asked a nanosecond later.
                    let t = if t <= core.now { Time(core.now.0 + 1) } else { t };
                    mem.timer_at = Some(t);
                    self.arm_timer(core, m, t);
                    break;
                }
                Decision::Idle => break,
            }
        }
        self.sync_drive_event(core, m);
    }

    /// The job a dispatched request belongs to (a merged request: its first part's; an
    /// array's member request: its array request's), as far as it was recorded.
    fn owner(&self, id: ReqId) -> Option<u32> {
        let id = self.fronts.iter().find_map(|f| f.array.as_ref()?.parent(id)).unwrap_or(id);
        let direct = |id: &ReqId| self.owners.get(id).copied();
        direct(&id).or_else(|| self.merged.get(&id).and_then(|parts| parts.first()).and_then(direct))
    }

    #[inline(always)]
    fn submit(&mut self, now: Time, m: usize, rq: Request) {
        self.members[m].figures.dispatched += 1;
        if self.trace.as_ref().is_some_and(|t| now.0 <= t.window_ns && t.t_ns.len() < t.max) {
            let job = self.owner(rq.id).map_or(-1, i64::from);
            let t = self.trace.as_mut().expect("checked above");
            self.traced.insert(rq.id, t.t_ns.len());
            t.t_ns.push(now.0);
            t.sector.push(rq.sector);
            t.sectors.push(rq.len);
            t.job.push(job);
            t.wait_ns.push(now.0 - rq.arrival.0);
            t.service_ns.push(0);
        }
        let mem = &mut self.members[m];
        mem.figures.flow_out.add(rq.dir, rq.len);
        mem.last_sector = rq.end().saturating_sub(1);
        if self.deep {
            mem.head = rq.end();
        }
        let cmd = Cmd { tag: rq.id.0, sector: rq.sector, len: rq.len, dir: rq.dir };
        mem.inflight.push((rq, now));
        mem.drive.submit(now, cmd).expect("the drive said it can accept");
    }

    /// Keep exactly one live heap event per member at its drive's next event time (on a
    /// shared bus: the completion once the member has the bus to finish).
    #[inline]
    fn sync_drive_event(&mut self, core: &mut Core, m: usize) {
        let mem = &mut self.members[m];
        let next = if !mem.seated {
            mem.drive.next_event()
        } else {
            match &mem.phase {
                Phase::Idle | Phase::Start(_) | Phase::Connected { disconnect: None } => {
                    mem.drive.next_event()
                }
                Phase::Finishing { done } => Some(*done),
                Phase::Connected { .. } | Phase::Away { .. } | Phase::Finish { .. } => None,
            }
        };
        if next != mem.drive_ev {
            mem.drive_ev = next;
            if let Some(t) = next {
                mem.drive_gen += 1;
                let gen = mem.drive_gen;
                core.push(t, Ev::Drive(m as u32, gen));
            }
        }
    }

    /// Member `m`, its phase `Start` or `Away`, asks for its shared bus: had at once, later
    /// (its bus event), or when the holder lets it go.
    fn ask_bus(&mut self, core: &mut Core, m: usize) {
        let now = core.now;
        let mem = &mut self.members[m];
        if let Phase::Away { back } = mem.phase {
            mem.phase = Phase::Finish { back };
        }
        let start = matches!(mem.phase, Phase::Start(_));
        match self.buses.as_mut().expect("a shared bus").ask(m, now, start) {
            Some(t) if t == now => self.bus_event(core, m),
            Some(t) => core.push(t, Ev::Bus(m as u32)),
            None => {}
        }
    }

    /// Member `m` lets its shared bus go: the next waiter has it (its bus event).
    fn release_bus(&mut self, core: &mut Core, m: usize) {
        if let Some((next, t)) = self.buses.as_mut().expect("a shared bus").release(m, core.now) {
            core.push(t, Ev::Bus(next as u32));
        }
    }

    /// Member `m`'s shared-bus event ([`super::bus`]): it has the bus to start or to
    /// finish its command, or the time came to disconnect or to ask again.
    pub fn bus_event(&mut self, core: &mut Core, m: usize) {
        let now = core.now;
        match self.members[m].phase {
            Phase::Start(_) if !self.members[m].drive.can_accept() => {
                // a cache flush holds the drive: the command goes down once it is done
                let t = self.members[m].drive.next_event().filter(|&t| t > now).unwrap_or(Time(now.0 + 1));
                core.push(t, Ev::Bus(m as u32));
            }
            Phase::Start(rq) => {
                // the command goes down; the drive holds the bus until it disconnects
                self.submit(now, m, rq);
                let disconnect = self.members[m].drive.serving_disconnect();
                self.members[m].phase = Phase::Connected { disconnect };
                if let Some((gone, _)) = disconnect {
                    core.push(gone.max(now), Ev::Bus(m as u32));
                }
                self.sync_drive_event(core, m);
            }
            Phase::Connected { disconnect: Some((_, back)) } => {
                self.members[m].phase = Phase::Away { back };
                self.release_bus(core, m);
                match back <= now {
                    true => self.ask_bus(core, m),
                    false => core.push(back, Ev::Bus(m as u32)),
                }
            }
            Phase::Away { .. } => self.ask_bus(core, m),
            Phase::Finish { back } => {
                // what waiting for the bus took, the completion takes later
                let due = self.members[m].drive.next_event().expect("the command in the drive");
                self.members[m].phase = Phase::Finishing { done: Time(due.0 + (now.0 - back.0)) };
                self.sync_drive_event(core, m);
            }
            p => unreachable!("a bus event in phase {p:?}"),
        }
    }

    /// Whether some bus is shared by several members.
    pub fn shared_bus(&self) -> bool {
        self.buses.is_some()
    }

    /// Member `m`'s drive event of generation `gen` fired: collect what finished. Unless
    /// it was stale, the caller acts on what it brought, then calls [`Block::refill`].
    #[inline(always)]
    pub fn drive_event(&mut self, core: &mut Core, m: usize, gen: u64) -> DriveEvent {
        let now = core.now;
        if gen != self.members[m].drive_gen {
            return DriveEvent::Stale;
        }
        self.members[m].drive_ev = None;
        match &self.members[m].phase {
            _ if !self.members[m].seated => {}
            Phase::Idle | Phase::Start(_) => {}
            // the command is done only once it has had the bus to finish
            Phase::Connected { disconnect: Some(_) } | Phase::Away { .. } | Phase::Finish { .. } => {
                return DriveEvent::Nothing
            }
            Phase::Connected { disconnect: None } | Phase::Finishing { .. } => {
                self.members[m].phase = Phase::Idle;
                self.release_bus(core, m);
            }
        }
        // (a command the drive starts now that finishes now gets an event of its own)
        let Some(c) = self.members[m].drive.poll(now) else { return DriveEvent::Nothing };
        if c.tag == FLUSH_TAG {
            return DriveEvent::Flushed(std::mem::take(&mut self.members[m].flush_waiters));
        }
        let deep = self.deep;
        let mem = &mut self.members[m];
        let i = mem
            .inflight
            .iter()
            .position(|r| r.0.id.0 == c.tag)
            .expect("a completion of a request in the drive");
        let (rq, submitted) = mem.inflight.swap_remove(i);
        mem.figures.occupancy += (now.0 - submitted.0) as u128;
        if let Some(t) = self.trace.as_mut() {
            if let Some(k) = self.traced.remove(&rq.id) {
                t.service_ns[k] = now.0 - submitted.0;
            }
        }
        let mem = &mut self.members[m];
        if !deep {
            mem.head = rq.end();
        }
        if c.cache_hit {
            mem.figures.hits += 1;
        }
        if c.seek_cylinders > 0 {
            mem.figures.seeks += 1;
            mem.figures.seek_dist += c.seek_sectors as u128;
        }
        self.last_complete = now;
        let view = self.view(m);
        self.members[m].sched.completed(now, &rq, &view);
        if !self.owners.is_empty() {
            self.owners.remove(&rq.id);
        }
        DriveEvent::Completed { id: rq.id, service: c.service().0, total: rq.bytes().max(1) }
    }

    /// The requests merged into completed carrier `id`, in the order they merged.
    #[inline(always)]
    pub fn take_merged(&mut self, id: ReqId) -> Option<Vec<ReqId>> {
        if self.merged.is_empty() {
            return None;
        }
        let parts = self.merged.remove(&id)?;
        if !self.owners.is_empty() {
            for p in &parts {
                self.owners.remove(p);
            }
        }
        Some(parts)
    }

    /// After member `m`'s drive event: refill its drive (and any other member that
    /// completing it sent requests to).
    pub fn refill(&mut self, core: &mut Core, m: usize) {
        self.fill(core, m);
        if self.members.len() > 1 {
            self.fill_kicked(core);
        }
    }

    /// Have every drive flush its write cache for the waiter `w` (a token of the workload
    /// source's; a flush already under way serves).
    pub fn flush_all(&mut self, core: &mut Core, w: u64) {
        for m in 0..self.members.len() {
            self.members[m].flush_waiters.push(w);
            if !self.members[m].drive.flushing() {
                self.members[m].drive.flush(core.now, FLUSH_TAG).expect("no flush under way");
            }
            self.sync_drive_event(core, m);
        }
    }

    /// Issuer `c` has no job left: tell every scheduler.
    pub fn context_exited(&mut self, now: Time, c: ContextId) {
        for m in &mut self.members {
            m.sched.context_exited(now, c);
        }
    }

    /// The device section of the report over `run_ns` of the run (the page cache's dirty
    /// bytes are the host's: the whole device's), the members' sections with an array,
    /// the schedulers' counters summed over members and the array-wide part, the disk's
    /// name and the array's spec.
    pub fn report(&self, run_ns: u64, page_cache_dirty_bytes: u64) -> BlockReport {
        let end = self.last_complete;
        // (a host figure: the whole device's, not a member's)
        let several = self.members.len() > 1;
        let member_dirty = if several { 0 } else { page_cache_dirty_bytes };
        let member_reports: Vec<DeviceReport> =
            self.members.iter().map(|m| m.figures.report(&m.drive, end, run_ns, member_dirty)).collect();
        let figures = || self.members.iter().map(|m| &m.figures);
        let device = if self.devices || self.arrays {
            // what the workload submitted: to a lone drive's scheduler, to an array's front end
            let mut flow_in = Counts::default();
            for f in &self.fronts {
                flow_in
                    .merge(f.array.as_ref().map_or(&self.members[f.first].figures.flow_in, |a| &a.flow_in));
            }
            DeviceReport { page_cache_dirty_bytes, ..aggregate(&member_reports, &flow_in, figures()) }
        } else {
            member_reports[0].clone()
        };
        let mut scheduler_stats = std::collections::BTreeMap::new();
        let array_stats = self.hooks.as_ref().map(|h| h.stats()).unwrap_or_default();
        for (k, v) in self.members.iter().flat_map(|m| m.sched.stats()).chain(array_stats) {
            *scheduler_stats.entry(k.to_string()).or_insert(0) += v;
        }
        let members = several.then(|| {
            self.members
                .iter()
                .zip(member_reports)
                .enumerate()
                .map(|(i, (m, device))| MemberReport {
                    member: i as u32,
                    device,
                    scheduler_stats: m.sched.stats().into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                })
                .collect()
        });
        BlockReport {
            scheduler: self.scheduler_name(),
            disk: if self.devices {
                // each device: its drive, or its array of them
                let name = |f: &Front| {
                    let drive = &self.members[f.first].drive.hdd().spec().name;
                    f.array.as_ref().map_or(drive.clone(), |a| format!("{drive} in {}", a.cfg.spec))
                };
                self.fronts.iter().map(name).collect::<Vec<_>>().join(", ")
            } else {
                self.members[0].drive.hdd().spec().name.to_string()
            },
            // (several devices: each array is in `disk`)
            array: match self.devices {
                false => self.fronts[0].array.as_ref().map(|a| a.cfg.spec.to_string()),
                true => None,
            },
            device,
            scheduler_stats,
            members,
            controller_cache: self.ctlr.as_ref().map(|c| c.cache.report_stats()),
        }
    }
}

/// The block layer's part of a run's report.
pub(crate) struct BlockReport {
    pub scheduler: String,
    pub disk: String,
    pub array: Option<String>,
    pub device: DeviceReport,
    pub scheduler_stats: std::collections::BTreeMap<String, u64>,
    pub members: Option<Vec<MemberReport>>,
    pub controller_cache: Option<crate::ctlr_cache::CacheStats>,
}

/// Tell `sched` the weights, QoS classes and I/O priorities of the jobs' issuers: once per
/// issuer, the first job of an issuer (with a class, a priority) decides.
fn tell_issuers(sched: &mut dyn Scheduler, jobs: &[Job]) {
    let mut weighted = std::collections::BTreeSet::new();
    for j in jobs {
        if let Some(c) = j.issuer.ctx {
            if weighted.insert(c) && j.issuer.weight != 1 {
                sched.set_weight(c, j.issuer.weight);
            }
        }
    }
    let mut classed = std::collections::BTreeSet::new();
    for j in jobs {
        if let (Some(c), Some(q)) = (j.issuer.ctx, j.issuer.qos) {
            if classed.insert(c) {
                sched.set_qos(c, q);
            }
        }
    }
    let mut prioritised = std::collections::BTreeSet::new();
    for j in jobs {
        if let (Some(c), Some(p)) = (j.issuer.ctx, j.issuer.ioprio) {
            if prioritised.insert(c) {
                sched.set_ioprio(c, p);
            }
        }
    }
}

/// The order in which DiskSim's driver sends an array request's member requests down, by
/// member, and so the order they ask for a bus they share (a synthetic run's driver sends
/// the list its logorg maps in reverse): writes released by the reads they waited for, in
/// descending member order; a parity array's first pieces, the writes that wait for
/// nothing by ascending member, then the reads by ascending member; any other array's, the
/// members in the reverse of the order the request reaches them.
fn disksim_send_order(
    level: headway_disk::array::Level,
    pieces: &[(Piece, Dir)],
    released: bool,
) -> Vec<u32> {
    use headway_disk::array::Level;
    let mut order: Vec<u32> = Vec::new();
    let mut add = |m: u32| {
        if !order.contains(&m) {
            order.push(m);
        }
    };
    if released {
        let mut ms: Vec<u32> = pieces.iter().map(|p| p.0.member).collect();
        ms.sort_unstable_by(|a, b| b.cmp(a));
        ms.into_iter().for_each(&mut add);
    } else if matches!(level, Level::Raid4 | Level::Raid5) {
        for dir in [Dir::Write, Dir::Read] {
            let mut ms: Vec<u32> = pieces.iter().filter(|p| p.1 == dir).map(|p| p.0.member).collect();
            ms.sort_unstable();
            ms.into_iter().for_each(&mut add);
        }
    } else {
        pieces.iter().for_each(|p| add(p.0.member));
        order.reverse();
    }
    order
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use headway_disk::{DiskSpec, DriveConfig};
    use headway_sched::{DeviceView, Duration, Settings};

    use crate::host::HostParams;
    use crate::workload::ContextMode;

    /// The default drive, a flat service curve, write-back cache; `array` if given.
    pub fn input<'a>(disk: &'a DiskSpec, curve: &'a ServiceCurve, array: Option<&str>) -> RunInput<'a> {
        RunInput {
            disk,
            curve,
            context: ContextMode::Process,
            seed: 1,
            drive: DriveConfig { write_cache: WriteCache::Back, ..DriveConfig::default() },
            host: HostParams::default(),
            array: array.map(|a| super::super::ArrayConfig { spec: a.parse().unwrap(), queue_depth: 8 }),
            devices: &[],
        }
    }

    pub fn disk_and_curve() -> (DiskSpec, ServiceCurve) {
        (headway_disk::builtin(headway_disk::DEFAULT).unwrap(), ServiceCurve::from_knots(vec![(0, 100_000)]))
    }

    fn block<'a>(name: &str, input: &RunInput<'a>) -> Block<'a> {
        let n = input.array.map_or(1, |a| a.spec.members as usize);
        let members =
            (0..n).map(|_| headway_sched::registry::build(name, &mut Settings::new()).unwrap()).collect();
        Block::new(ArraySchedulers { members, hooks: None }, &[], input).unwrap()
    }

    fn read(id: u64, sector: u64, len: u32) -> Request {
        Request { id: ReqId(id), sector, len, dir: Dir::Read, sync: true, arrival: Time::ZERO, ctx: None }
    }

    /// Run the core's events through the block layer until `stop` says so or none is
    /// left; every completion (request id, bytes) in order, merged parts after their carrier.
    fn run(core: &mut Core, b: &mut Block) -> Vec<(u64, u64)> {
        run_timed(core, b).into_iter().map(|(id, bytes, _)| (id, bytes)).collect()
    }

    /// [`run`], with each completion's time.
    fn run_timed(core: &mut Core, b: &mut Block) -> Vec<(u64, u64, Time)> {
        let mut done = Vec::new();
        while let Some((t, ev)) = core.pop() {
            b.elapse(t.0 - core.now.0);
            core.now = t;
            match ev {
                Ev::Drive(m, gen) => {
                    if let DriveEvent::Completed { id, total, .. } = b.drive_event(core, m as usize, gen) {
                        let parts = b.take_merged(id).unwrap_or_default();
                        // (a merged part is reported with no bytes of its own)
                        for (id, total) in
                            std::iter::once((id, total)).chain(parts.into_iter().map(|p| (p, 0)))
                        {
                            match b.finish_piece(core, id, 1, total.max(1)) {
                                Completes::Itself => done.push((id.0, total, t)),
                                Completes::Array { id, total, .. } => done.push((id.0, total, t)),
                                Completes::Nothing => {}
                            }
                        }
                    }
                    b.refill(core, m as usize);
                }
                Ev::Timer(m) => b.timer(core, m as usize),
                Ev::Bus(m) => b.bus_event(core, m as usize),
                other => panic!("the block layer made a {other:?} event"),
            }
        }
        done
    }

    /// Two drives on one shared bus, a read miss to each at once: the first holds the bus
    /// through its command overhead, so the second starts when the first disconnects; the
    /// one that reselects second waits for the other to finish, its completion later by
    /// that wait. Without seats both start at once. (Times from standalone drives.)
    #[test]
    fn drives_on_a_shared_bus_take_turns_to_start_and_to_finish() {
        let (mut disk, curve) = disk_and_curve();
        disk.cache.segments = 0;
        let seat = |slot| headway_disk::BusSeat {
            bus: "bus1".into(),
            slot,
            by_slot: false,
            arbitration: Duration::ZERO,
        };
        let run_two = |seated: bool, sectors: [u64; 2]| {
            let devices: Vec<crate::Device> = (1..=2)
                .map(|slot| {
                    let mut d = disk.clone();
                    d.bus_seats = if seated { vec![seat(slot)] } else { Vec::new() };
                    crate::Device { disk: d, array: None }
                })
                .collect();
            let input = RunInput {
                devices: &devices,
                drive: DriveConfig::default(),
                ..input(&devices[0].disk, &curve, None)
            };
            let members = (0..2)
                .map(|_| headway_sched::registry::build("noop", &mut Settings::new()).unwrap())
                .collect();
            let mut b = Block::new(ArraySchedulers { members, hooks: None }, &[], &input).unwrap();
            assert_eq!(b.shared_bus(), seated);
            let mut core = Core::new();
            for (i, s) in sectors.iter().enumerate() {
                b.arrive(&mut core, read(i as u64 + 1, (i as u64) << super::super::DEVICE_SHIFT | s, 8), 0);
            }
            b.fill_kicked(&mut core);
            let mut t = run_timed(&mut core, &mut b);
            t.sort();
            [t[0].2, t[1].2]
        };
        // (a standalone drive's completion, disconnect and reselection)
        struct Alone {
            done: Time,
            gone: Time,
            back: Time,
        }
        let alone = |at: Time, s: u64| {
            let mut h = Hdd::new(disk.clone());
            let done = h.access(at, s, 8, Dir::Read).done;
            let (gone, back) = h.disconnect().expect("a read miss disconnects");
            Alone { done, gone, back }
        };
        // the second drive's sector: far from the first's, then (searched) one whose
        // reselection falls while the first is finishing, and one where the first waits
        let a = alone(Time::ZERO, 1_000);
        let second = |k: u64| 2_000 + k * 7_919;
        let overlap_b = (0..50_000)
            .find(|&k| (a.back.0 + 1..a.done.0).contains(&alone(a.gone, second(k)).back.0))
            .expect("a collision");
        let b_first = (0..50_000)
            .find(|&k| {
                let b = alone(a.gone, second(k));
                (b.back.0 + 1..b.done.0).contains(&a.back.0)
            })
            .expect("the other collision");
        let mut delayed = [false; 2];
        for s2 in [90_000_000, second(overlap_b), second(b_first)] {
            let sectors = [1_000, s2];
            assert_eq!(run_two(false, sectors), [a.done, alone(Time::ZERO, s2).done]);
            // the second starts as the first disconnects; who reselects second waits
            let b = alone(a.gone, s2);
            assert!(a.back >= b.gone, "(the first's media outlasts the second's command overhead)");
            let want = if a.back <= b.back {
                [a.done, Time(b.done.0 + a.done.0.saturating_sub(b.back.0))]
            } else {
                [Time(a.done.0 + b.done.0.saturating_sub(a.back.0)), b.done]
            };
            delayed[0] |= want[0] > a.done;
            delayed[1] |= want[1] > b.done;
            assert_eq!(run_two(true, sectors), want, "{sectors:?}");
        }
        assert_eq!(delayed, [true, true], "each drive waited once to finish");
    }

    /// A drive granted the bus to start while a cache flush holds it (the flush asked for
    /// at the very instant the bus came free): its command goes down once the flush is
    /// done, and both reads complete.
    #[test]
    fn a_command_granted_the_bus_during_a_flush_starts_after_it() {
        let (mut disk, curve) = disk_and_curve();
        disk.cache.segments = 0;
        let devices: Vec<crate::Device> = (1..=2)
            .map(|slot| {
                let mut d = disk.clone();
                d.bus_seats = vec![headway_disk::BusSeat {
                    bus: "b".into(),
                    slot,
                    by_slot: false,
                    arbitration: Duration::ZERO,
                }];
                crate::Device { disk: d, array: None }
            })
            .collect();
        let input =
            RunInput { devices: &devices, drive: DriveConfig::default(), ..input(&disk, &curve, None) };
        let members =
            (0..2).map(|_| headway_sched::registry::build("noop", &mut Settings::new()).unwrap()).collect();
        let mut b = Block::new(ArraySchedulers { members, hooks: None }, &[], &input).unwrap();
        let mut core = Core::new();
        b.arrive(&mut core, read(1, 1_000, 8), 0);
        b.arrive(&mut core, read(2, 1 << super::super::DEVICE_SHIFT | 5_000_000, 8), 0);
        b.fill_kicked(&mut core);
        // the first drive disconnects: the bus passes to the second, and a flush comes at once
        let (t, ev) = core.pop().expect("the first's disconnect");
        assert_eq!(ev, Ev::Bus(0));
        core.now = t;
        b.bus_event(&mut core, 0);
        b.flush_all(&mut core, 7);
        let done = run_timed(&mut core, &mut b);
        let ids: Vec<u64> = done.iter().map(|d| d.0).collect();
        assert_eq!(ids.len(), 2, "{done:?}");
        assert!(ids.contains(&1) && ids.contains(&2));
        let second = done.iter().find(|d| d.0 == 2).unwrap().2;
        // (the flush is done at once, its drive being idle; the read goes down a nanosecond on)
        let mut alone = Hdd::new(disk.clone());
        assert_eq!(second, alone.access(Time(t.0 + 1), 5_000_000, 8, Dir::Read).done);
    }

    #[test]
    fn a_request_passes_the_scheduler_and_the_drive_and_completes_once() {
        let (disk, curve) = disk_and_curve();
        let input = input(&disk, &curve, None);
        let mut b = block("noop", &input);
        let mut core = Core::new();
        b.arrive(&mut core, read(1, 1000, 8), 0);
        assert_eq!(b.pending(), 1, "a request waits in the scheduler until the plug ends");
        assert!(core.pop().is_none(), "nothing is dispatched before the plug ends");
        b.fill_kicked(&mut core);
        assert_eq!(b.pending(), 0);
        assert_eq!(run(&mut core, &mut b), [(1, 4096)]);
        assert!(b.last_complete > Time::ZERO);
        let r = b.report(b.last_complete.0, 0);
        assert_eq!((r.device.requests, r.device.requests_in.reads), (1, 1));
        assert_eq!(r.scheduler, "noop");
    }

    #[test]
    fn merged_requests_complete_after_their_carrier_in_the_order_they_merged() {
        let (disk, curve) = disk_and_curve();
        let input = input(&disk, &curve, None);
        let mut b = block("noop", &input);
        let mut core = Core::new();
        for (i, s) in [0u64, 8, 16].into_iter().enumerate() {
            b.arrive(&mut core, read(i as u64 + 1, 5000 + s, 8), 0);
        }
        b.fill_kicked(&mut core);
        assert_eq!(run(&mut core, &mut b), [(1, 12288), (2, 0), (3, 0)]);
        let r = b.report(b.last_complete.0, 0);
        assert_eq!((r.device.requests_in.count, r.device.requests_out.count), (3, 1));
    }

    #[test]
    fn a_cache_flush_answers_its_waiters_in_the_order_they_came() {
        let (disk, curve) = disk_and_curve();
        let input = input(&disk, &curve, None);
        let mut b = block("noop", &input);
        let mut core = Core::new();
        b.flush_all(&mut core, 3);
        b.flush_all(&mut core, 9);
        let (t, Ev::Drive(m, gen)) = core.pop().expect("the flush's event") else { panic!("a drive event") };
        core.now = t;
        let DriveEvent::Flushed(w) = b.drive_event(&mut core, m as usize, gen) else {
            panic!("the flush completed")
        };
        assert_eq!(w, [3, 9]);
    }

    #[test]
    fn an_array_request_completes_once_after_every_member_served_its_piece() {
        let (disk, curve) = disk_and_curve();
        let input = input(&disk, &curve, Some("raid0:3:4k"));
        let mut b = block("deadline", &input);
        let mut core = Core::new();
        // 24 KiB: six stripe units, two on each member
        core.new_id();
        b.arrive(&mut core, read(1, 0, 48), 0);
        b.fill_kicked(&mut core);
        assert_eq!(run(&mut core, &mut b), [(1, 24576)]);
        let r = b.report(b.last_complete.0, 0);
        let members = r.members.expect("an array reports its members");
        assert_eq!(members.len(), 3);
        assert!(members.iter().all(|m| m.device.requests_in.count == 2), "{members:?}");
        assert_eq!(r.device.requests_in.count, 1, "the array saw one request");
    }

    /// A scheduler that waits until `until` before dispatching anything.
    struct WaitsFirst {
        until: Time,
        q: Vec<Request>,
        asked: Vec<Time>,
    }

    impl Scheduler for WaitsFirst {
        fn name(&self) -> String {
            "waits-first".into()
        }
        fn arrive(&mut self, _now: Time, rq: Request, _dev: &dyn DeviceView) -> Arrival {
            self.q.push(rq);
            Arrival::Queued
        }
        fn decide(&mut self, now: Time, _dev: &dyn DeviceView) -> Decision {
            self.asked.push(now);
            match self.q.pop() {
                Some(rq) if now >= self.until => Decision::Dispatch(rq),
                Some(rq) => {
                    self.q.push(rq);
                    Decision::WaitUntil(self.until)
                }
                None => Decision::Idle,
            }
        }
        fn completed(&mut self, _now: Time, _rq: &Request, _dev: &dyn DeviceView) {}
        fn pending(&self) -> usize {
            self.q.len()
        }
    }

    #[test]
    fn a_wait_arms_the_timer_and_the_drive_idles_until_it_fires() {
        let (disk, curve) = disk_and_curve();
        let input = input(&disk, &curve, None);
        let until = Time(0) + Duration::from_millis(3);
        let sched = WaitsFirst { until, q: Vec::new(), asked: Vec::new() };
        let mut b =
            Block::new(ArraySchedulers { members: vec![Box::new(sched)], hooks: None }, &[], &input).unwrap();
        let mut core = Core::new();
        b.arrive(&mut core, read(1, 0, 8), 0);
        b.fill_kicked(&mut core);
        assert_eq!(core.pop(), Some((until, Ev::Timer(0))));
        core.push(until, Ev::Timer(0));
        assert_eq!(run(&mut core, &mut b), [(1, 4096)]);
        let r = b.report(b.last_complete.0, 0);
        assert_eq!(r.device.idle_wait_ns, until.0, "the drive sat idle with a request waiting");
    }
}

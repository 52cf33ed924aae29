//! Array stream scheduling tests: a tiny array (RAID 0 striping, one command per member,
//! service priced by the test view) driven event by event, with synchronous readers.

use std::collections::{BTreeMap, HashMap};

use super::*;
use crate::policy::{Deadline, DeadlineParams};
use crate::request::{ContextId, Dir};
use crate::testutil::FixedView;
use proptest::prelude::*;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// A synchronous reader: `count` array requests of `len` sectors from `start`, each
/// `stride` after the previous (`stride == len`: sequential), the next one `think` after
/// the previous completes.
#[derive(Clone, Debug)]
struct Reader {
    start: u64,
    len: u32,
    stride: u64,
    count: u32,
    think: u64,
    /// After this many requests, one pause of this long instead of `think`.
    pause: (u32, u64),
}

/// What the rig saw.
#[derive(Default, Debug)]
struct Outcome {
    /// Per member: dispatched member requests (sector, reader).
    dispatched: Vec<Vec<(u64, usize)>>,
    /// Array requests completed, per reader.
    done: Vec<u32>,
    /// Member decisions that kept a drive idle with requests pending.
    idle_waits: u64,
    end: Time,
    stats: BTreeMap<&'static str, u64>,
}

/// RAID 0 over `n` members with a stripe unit of `unit` sectors; each member serves a
/// command in `service(distance)` = 100 us + 1 ns per sector moved (the [`FixedView`] price).
struct Rig {
    n: usize,
    unit: u64,
    members: Vec<Box<dyn Scheduler>>,
    hooks: Box<dyn ArrayHooks>,
    heads: Vec<u64>,
    busy: Vec<Option<(Request, Time)>>,
    timers: Vec<Option<Time>>,
    now: Time,
    next_id: u64,
    /// Array request -> (reader, pieces left, the request).
    areqs: HashMap<ReqId, (usize, u32, Request)>,
    piece_of: HashMap<ReqId, ReqId>,
    merged: HashMap<ReqId, Vec<ReqId>>,
    arrivals: Vec<(Time, usize)>,
    issued: Vec<u32>,
    /// Tell the schedulers which reader sent each request.
    with_ctx: bool,
    out: Outcome,
}

fn view(head: u64) -> FixedView {
    FixedView { head, base: 100 * US, capacity: 1 << 30 }
}

impl Rig {
    fn new(n: usize, unit: u64, params: StreamParams, readers: usize) -> Rig {
        let policies =
            (0..n).map(|_| Box::new(Deadline::new(DeadlineParams::default())) as Box<dyn Policy>).collect();
        let shape = ArrayShape { members: n as u32, data_members: n as u32 };
        let ArraySchedulers { members, hooks } = array_stream(policies, shape, params, 1024);
        Rig {
            n,
            unit,
            members,
            hooks: hooks.expect("coordinating"),
            heads: vec![0; n],
            busy: vec![None; n],
            timers: vec![None; n],
            now: Time(0),
            next_id: 1,
            areqs: HashMap::new(),
            piece_of: HashMap::new(),
            merged: HashMap::new(),
            arrivals: Vec::new(),
            issued: vec![0; readers],
            with_ctx: false,
            out: Outcome { dispatched: vec![Vec::new(); n], done: vec![0; readers], ..Outcome::default() },
        }
    }

    fn submit(&mut self, reader: usize, r: &Reader) {
        let k = self.issued[reader] as u64;
        self.issued[reader] += 1;
        let sector = r.start + k * r.stride;
        let id = ReqId(self.next_id);
        self.next_id += 1;
        let ctx = self.with_ctx.then_some(ContextId(reader as u32));
        let rq = Request { id, sector, len: r.len, dir: Dir::Read, sync: true, arrival: self.now, ctx };
        // split at stripe-unit boundaries
        let mut pieces = Vec::new();
        let (mut s, end) = (sector, sector + r.len as u64);
        while s < end {
            let unit = s / self.unit;
            let e = ((unit + 1) * self.unit).min(end);
            let member = (unit % self.n as u64) as u32;
            let msector = (unit / self.n as u64) * self.unit + s % self.unit;
            pieces.push((member, ReqId(self.next_id), msector, (e - s) as u32));
            self.next_id += 1;
            s = e;
        }
        let ids: Vec<(u32, ReqId)> = pieces.iter().map(|p| (p.0, p.1)).collect();
        self.hooks.pieces(self.now, &rq, &ids, &view(0));
        self.areqs.insert(id, (reader, pieces.len() as u32, rq));
        for (member, pid, ms, len) in pieces {
            self.piece_of.insert(pid, id);
            let prq = Request { id: pid, sector: ms, len, ..rq };
            let m = member as usize;
            if let Arrival::Merged { into } = self.members[m].arrive(self.now, prq, &view(self.heads[m])) {
                self.merged.entry(into).or_default().push(pid);
            }
        }
    }

    fn fill(&mut self, m: usize) {
        if self.busy[m].is_some() {
            return;
        }
        self.timers[m] = None;
        match self.members[m].decide(self.now, &view(self.heads[m])) {
            Decision::Dispatch(rq) => {
                let reader = self.areqs[&self.piece_of[&rq.id]].0;
                self.out.dispatched[m].push((rq.sector, reader));
                let done = self.now + view(self.heads[m]).estimate(self.heads[m], rq.sector);
                self.busy[m] = Some((rq, done));
            }
            Decision::WaitUntil(t) => {
                if self.members[m].pending() > 0 {
                    self.out.idle_waits += 1;
                }
                self.timers[m] = Some(t.max(Time(self.now.0 + 1)));
            }
            Decision::Idle => {}
        }
    }

    fn fill_all(&mut self) {
        for m in 0..self.n {
            self.fill(m);
        }
        let mut w = self.hooks.take_wakeups();
        while w != 0 {
            let m = w.trailing_zeros() as usize;
            w &= w - 1;
            self.fill(m);
        }
    }

    fn finish_piece(&mut self, pid: ReqId, readers: &[Reader]) {
        let a = self.piece_of.remove(&pid).expect("a piece");
        let e = self.areqs.get_mut(&a).expect("in flight");
        e.1 -= 1;
        if e.1 > 0 {
            return;
        }
        let (reader, _, rq) = self.areqs.remove(&a).expect("in flight");
        self.hooks.completed(self.now, &rq, &view(0));
        self.out.done[reader] += 1;
        let r = &readers[reader];
        if self.issued[reader] < r.count {
            let think = if self.issued[reader] == r.pause.0 { r.pause.1 } else { r.think };
            self.arrivals.push((self.now + Duration(think), reader));
        }
    }

    /// Run `readers` to the end (at most `limit` of simulated time).
    fn run(mut self, readers: &[Reader], limit: Time) -> Outcome {
        for (i, r) in readers.iter().enumerate() {
            if r.count > 0 {
                self.arrivals.push((Time(i as u64 * 10 * US), i));
            }
        }
        loop {
            let next_arrival = self.arrivals.iter().map(|a| a.0).min();
            let next_done = self.busy.iter().flatten().map(|b| b.1).min();
            let next_timer = self.timers.iter().flatten().copied().min();
            let Some(t) = [next_arrival, next_done, next_timer].into_iter().flatten().min() else { break };
            assert!(t <= limit, "ran past {limit:?}: a stall");
            self.now = t;
            for m in 0..self.n {
                if self.busy[m].as_ref().is_some_and(|b| b.1 == t) {
                    let (rq, _) = self.busy[m].take().expect("busy");
                    self.heads[m] = rq.end();
                    self.members[m].completed(t, &rq, &view(self.heads[m]));
                    self.finish_piece(rq.id, readers);
                    for c in self.merged.remove(&rq.id).unwrap_or_default() {
                        self.finish_piece(c, readers);
                    }
                }
            }
            let due: Vec<usize> = self.arrivals.iter().filter(|a| a.0 == t).map(|a| a.1).collect();
            self.arrivals.retain(|a| a.0 != t);
            for r in due {
                self.submit(r, &readers[r]);
            }
            self.fill_all();
        }
        self.out.end = self.now;
        for (k, v) in self.members.iter().flat_map(|m| m.stats()).chain(self.hooks.stats()) {
            *self.out.stats.entry(k).or_insert(0) += v;
        }
        self.out
    }
}

fn seq(start: u64, count: u32) -> Reader {
    Reader { start, len: 16, stride: 16, count, think: 10 * US, pause: (0, 0) }
}

/// Two sequential readers far apart on a 2-member array with 8-sector stripe units: each
/// array request covers both members. The array coordinates them: long runs of one
/// reader's pieces on every member, where the policy alone interleaves the readers.
#[test]
fn sequential_readers_are_coordinated_across_members() {
    let readers = [seq(0, 200), seq(8_000_000, 200)];
    let out = Rig::new(2, 8, StreamParams::default(), 2).run(&readers, Time(10_000 * MS));
    assert_eq!(out.done, vec![200, 200], "every array request completes");
    assert!(out.stats["virtual_streams"] >= 2, "{:?}", out.stats);
    assert!(out.stats["coordinations"] >= 1, "{:?}", out.stats);
    assert!(out.stats["children_dispatched"] > 100, "members wait for their next piece: {:?}", out.stats);
    // Switches between the readers on member 0: few, long runs.
    let switches = out.dispatched[0].windows(2).filter(|w| w[0].1 != w[1].1).count();
    // (the first dozen requests of each interleave, until the streams are established)
    assert!(switches <= 40, "member 0 switched readers {switches} times: {:?}", &out.dispatched[0][..40]);
    // Both members serve the same reader at the same time: their run boundaries agree.
    let runs = |m: usize| out.dispatched[m].iter().map(|d| d.1).collect::<Vec<_>>();
    assert_eq!(runs(0), runs(1), "members serve the readers in the same order");
}

/// Without coordination (a policy alone, the same readers), the members interleave the
/// readers request by request: the baseline the previous test improves on.
#[test]
fn uncoordinated_members_interleave_the_readers() {
    let params = StreamParams { stream_threshold: 1 << 20, ..StreamParams::default() };
    let readers = [seq(0, 200), seq(8_000_000, 200)];
    let out = Rig::new(2, 8, params, 2).run(&readers, Time(10_000 * MS));
    assert_eq!(out.stats["coordinations"], 0);
    assert_eq!(out.idle_waits, 0, "no stream, no waiting");
    let switches = out.dispatched[0].windows(2).filter(|w| w[0].1 != w[1].1).count();
    assert!(switches > 300, "interleaved: {switches} switches");
}

/// Random requests form no virtual stream: the members are their policy, never idle
/// with work pending.
#[test]
fn random_requests_are_never_waited_for() {
    let readers: Vec<Reader> = (0..4)
        .map(|i| Reader {
            start: i * 7_000_003,
            len: 8,
            stride: 90_000_017,
            count: 60,
            think: 10 * US,
            pause: (0, 0),
        })
        .collect();
    let out = Rig::new(3, 8, StreamParams::default(), 4).run(&readers, Time(10_000 * MS));
    assert_eq!(out.done, vec![60; 4]);
    assert_eq!(out.stats["virtual_streams"], 0, "{:?}", out.stats);
    assert_eq!(out.stats["coordinations"], 0);
    assert_eq!(out.idle_waits, 0);
}

/// The array decides the slice: with two streams ready, neither holds the array longer
/// than `stream_time_slice` while the other waits, and both get it more than once.
#[test]
fn the_array_passes_slices_between_ready_streams() {
    let params = StreamParams { stream_time_slice: Duration::from_millis(20), ..StreamParams::default() };
    let readers = [seq(0, 600), seq(8_000_000, 600)];
    let out = Rig::new(2, 8, params, 2).run(&readers, Time(20_000 * MS));
    assert!(out.stats["array_slices"] >= 4, "{:?}", out.stats);
    assert!(out.stats["coordinations"] >= 4, "{:?}", out.stats);
    // A 20 ms slice at ~0.1 ms a piece: runs of at most a few hundred pieces.
    let mut run = 0;
    let mut longest = 0;
    for w in out.dispatched[0].windows(2) {
        run = if w[0].1 == w[1].1 { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    assert!(longest < 400, "a run of {longest} pieces outlasted the slice");
}

/// A coordinated stream that stops (its reader pauses while another reader has work
/// pending) breaks: the waiting member gives up at the deadline (after its second chance)
/// and the stream is marked unusable.
#[test]
fn a_broken_physical_stream_makes_the_virtual_stream_unusable() {
    let pausing = Reader { pause: (100, 20 * MS), ..seq(0, 200) };
    // Reader 1 keeps member 0 busy near the stream (every request on an even unit), so
    // member 0 prices its alternative cheaply and gives up soon; member 1 has nothing
    // else to do, so the virtual stream itself outlives the pause.
    let near = Reader { start: 1_000_000, len: 8, stride: 16, count: 400, think: 10 * US, pause: (0, 0) };
    let readers = [pausing, near];
    let out = Rig::new(2, 8, StreamParams::default(), 2).run(&readers, Time(60_000 * MS));
    assert_eq!(out.done, vec![200, 400]);
    assert!(out.stats["unusable_streams"] >= 1, "{:?}", out.stats);
    assert!(out.stats["timeouts"] >= 1, "{:?}", out.stats);
}

/// Identity is never read: giving every request a context changes nothing.
#[test]
fn process_identity_changes_nothing() {
    let readers = [seq(0, 120), seq(8_000_000, 120)];
    let a = Rig::new(2, 8, StreamParams::default(), 2).run(&readers, Time(10_000 * MS));
    let mut rig = Rig::new(2, 8, StreamParams::default(), 2);
    rig.with_ctx = true;
    let b = rig.run(&readers, Time(10_000 * MS));
    assert!(a.stats["coordinations"] >= 1);
    assert_eq!(a.dispatched, b.dispatched, "the same decisions with and without contexts");
    assert_eq!(a.end, b.end);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
    /// Any mix of readers on any small array: every array request completes, every member
    /// request is dispatched once, and the run never stalls.
    #[test]
    fn every_request_is_served_once(
        n in 2usize..5,
        unit in prop::sample::select(vec![8u64, 16, 64]),
        specs in prop::collection::vec((0u64..4, 1u32..5, any::<bool>(), 1u32..80, 0u64..3_000), 1..5),
    ) {
        let readers: Vec<Reader> = specs
            .iter()
            .enumerate()
            .map(|(i, &(region, lenu, sequential, count, think))| {
                let len = lenu * 8;
                let stride = if sequential { len as u64 } else { 3_000_017 };
                Reader { start: i as u64 * 50_000_000 + region * 8, len, stride, count, think: think * US, pause: (count / 2, 20 * MS) }
            })
            .collect();
        let params = StreamParams { stream_threshold: 2, stream_time_slice: Duration::from_millis(5), ..StreamParams::default() };
        let rig = Rig::new(n, unit, params, readers.len());
        let out = rig.run(&readers, Time(3_600_000 * MS));
        let want: Vec<u32> = readers.iter().map(|r| r.count).collect();
        prop_assert_eq!(&out.done, &want);
        // Pieces: each array request's sectors, split by unit; merged pieces are not
        // dispatched on their own, so count sectors instead.
        let mut per_reader: BTreeMap<usize, u64> = BTreeMap::new();
        for (m, ds) in out.dispatched.iter().enumerate() {
            let _ = m;
            for &(_, r) in ds {
                *per_reader.entry(r).or_insert(0) += 1;
            }
        }
        for (r, reader) in readers.iter().enumerate() {
            let d = per_reader.get(&r).copied().unwrap_or(0);
            prop_assert!(d >= 1 && d <= reader.count as u64 * (reader.len as u64 / unit + 2), "reader {} dispatches {}", r, d);
        }
    }
}

//! The scheduling core of an export: one `Box<dyn Scheduler>` behind a mutex, driven by
//! whichever thread has an event — run to completion, no scheduler thread.
//!
//! * A connection's reader that has read a request locks the core, hands the request to
//!   the scheduler (`arrive`) and asks for dispatches (`decide`) while the backend has
//!   room; what comes out is a list of [`Batch`]es (a dispatched request and every client
//!   request merged into it).
//! * The thread that finished a batch (the reader itself, a worker, the delay line of
//!   `emulated:MODEL`) locks the core, reports the completion and asks again.
//! * A `Decision::WaitUntil(t)` arms the core's deadline; the timer thread ([`timer`])
//!   sleeps on a condition variable until then (nanosecond deadline, timer slack 1 ns) and
//!   decides at `t`. An arrival or completion before `t` decides early, as the `Scheduler`
//!   contract asks, and re-arms or clears the deadline.
//!
//! Every decision is made under the lock, so the scheduler sees events in one order, as in
//! the simulator. The lock is held for the scheduler's own work only (microseconds), never
//! across I/O.
//!
//! Event time: the model of `emulated:MODEL` is told a dispatch happened when the event
//! that prompted it happened — a completion at the model's `done`, an arrival when it was
//! received, a timer at its deadline — not when this thread got round to it, so the
//! server's own turnaround (thread wake-ups, tens of µs here, a few µs in a kernel) is not
//! counted as drive idle time (which the model would fill with read-ahead).

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration as StdDuration, Instant};

use headway_sched::{
    Arrival, ContextId, CurveView, Decision, Dir, ReqId, Request, Scheduler, ServiceCurve, Time, SECTOR_BYTES,
};
use tracing::debug;

use crate::proto::Errno;
use crate::reply::ReplySink;
use crate::stats::{Kind, Stats};

/// What a backend operation gives back: read data at an offset (or nothing), or an error
/// code with a message for a structured error reply.
pub(crate) type OpResult = Result<Option<(u64, Vec<u8>)>, (Errno, String)>;

/// One client request on its way to the backend.
pub(crate) struct Io {
    pub cookie: u64,
    pub op: Op,
    pub reply: Arc<ReplySink>,
    /// When it was read off the socket (for `--stats`).
    pub arrived: Time,
    /// The connection's number (for `--trace`).
    pub conn: u32,
}

pub(crate) enum Op {
    Read {
        offset: u64,
        len: u32,
    },
    Write {
        offset: u64,
        data: Vec<u8>,
        fua: bool,
    },
    Trim {
        offset: u64,
        len: u32,
        fua: bool,
    },
    /// `no_hole`: NBD_CMD_FLAG_NO_HOLE, the zeros allocated rather than punched.
    Zero {
        offset: u64,
        len: u32,
        fua: bool,
        no_hole: bool,
    },
    Flush,
}

impl Op {
    pub fn extent(&self) -> (u64, u64) {
        match self {
            Op::Read { offset, len } | Op::Trim { offset, len, .. } | Op::Zero { offset, len, .. } => {
                (*offset, *len as u64)
            }
            Op::Write { offset, data, .. } => (*offset, data.len() as u64),
            Op::Flush => (0, 0),
        }
    }
    pub fn fua(&self) -> bool {
        matches!(self, Op::Write { fua: true, .. } | Op::Trim { fua: true, .. } | Op::Zero { fua: true, .. })
    }
}

/// A reply for a connection's [`ReplySink`].
pub(crate) struct Out {
    pub cookie: u64,
    pub result: OpResult,
    /// The bytes the request held against its connection's budget (see
    /// [`ReplySink::expect`]).
    pub cost: u64,
}

/// A dispatched request and the client requests it carries (it and every request merged
/// into it, by offset), to be executed from `at` on.
pub(crate) struct Batch {
    pub rq: Request,
    pub ios: Vec<Io>,
    pub at: Time,
}

/// A finished client request's reply and what `--stats` counts of it.
pub(crate) struct Answer {
    pub reply: Arc<ReplySink>,
    pub out: Out,
    pub kind: Kind,
    pub bytes: u64,
    pub arrived: Time,
    /// `--trace`: the request, for its completion line.
    pub traced: Option<crate::tracelog::Req>,
}

/// A finished batch's replies and completion, held until the model's `done`; a FLUSH's
/// reply (no scheduled request: `rq` is `None`).
pub(crate) struct Held {
    pub rq: Option<Request>,
    /// The model's completion time (`None` for real backends).
    pub done: Option<Time>,
    pub answers: Vec<Answer>,
}

/// The scheduler and what it holds; lives in [`Core`]'s mutex.
struct State {
    s: Box<dyn Scheduler>,
    curve: ServiceCurve,
    depth: u32,
    capacity: u64,
    /// Where the scheduler is told the head is.
    head: u64,
    /// Batches at the backend.
    inflight: u32,
    next_id: u64,
    held: HashMap<ReqId, Io>,
    merged: HashMap<ReqId, Vec<ReqId>>,
    /// The pending `WaitUntil`, if any.
    deadline: Option<Time>,
    /// Since when the backend has been idle on purpose (a wait with nothing in flight).
    waiting_since: Option<Time>,
    /// The timer thread should end.
    stop: bool,
}

/// An export's scheduling core (see the module doc).
pub(crate) struct Core {
    state: Mutex<State>,
    /// Wakes the timer thread when the deadline changes or it should stop.
    timer: Condvar,
    origin: Instant,
    stats: Arc<Stats>,
}

impl Core {
    pub fn new(
        mut s: Box<dyn Scheduler>,
        curve: ServiceCurve,
        depth: u32,
        capacity: u64,
        origin: Instant,
        stats: Arc<Stats>,
    ) -> Core {
        s.set_device_queue_depth(depth);
        Core {
            state: Mutex::new(State {
                s,
                curve,
                depth,
                capacity,
                head: 0,
                inflight: 0,
                next_id: 0,
                held: HashMap::new(),
                merged: HashMap::new(),
                deadline: None,
                waiting_since: None,
                stop: false,
            }),
            timer: Condvar::new(),
            origin,
            stats,
        }
    }

    /// Time zero of the scheduler's clock.
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// Wall-clock time on the scheduler's clock.
    pub fn now(&self) -> Time {
        Time(self.origin.elapsed().as_nanos() as u64)
    }

    /// A client request arrived: queue it and return what is dispatched now.
    pub fn arrive(&self, io: Io, ctx: Option<ContextId>) -> Vec<Batch> {
        let mut guard = self.state.lock().unwrap();
        let st = &mut *guard;
        let now = self.now();
        st.next_id += 1;
        let (off, len) = io.op.extent();
        let sector = off / SECTOR_BYTES;
        let end = (off + len).div_ceil(SECTOR_BYTES);
        let dir = if matches!(io.op, Op::Read { .. }) { Dir::Read } else { Dir::Write };
        let rq = Request {
            id: ReqId(st.next_id),
            sector,
            len: (end - sector).clamp(1, u32::MAX as u64) as u32,
            dir,
            sync: dir == Dir::Read || io.op.fua(),
            arrival: now,
            ctx,
        };
        st.held.insert(rq.id, io);
        let view = CurveView { head: st.head, curve: &st.curve, capacity: st.capacity };
        if let Arrival::Merged { into } = st.s.arrive(now, rq, &view) {
            st.merged.entry(into).or_default().push(rq.id);
        }
        self.decide(st, now)
    }

    /// A batch finished (with `emulated:MODEL`, at the model's `done`): return what is
    /// dispatched now.
    pub fn complete(&self, rq: &Request, done: Option<Time>) -> Vec<Batch> {
        let mut guard = self.state.lock().unwrap();
        let st = &mut *guard;
        let now = self.now();
        st.inflight -= 1;
        if st.depth == 1 {
            st.head = rq.end();
        }
        let view = CurveView { head: st.head, curve: &st.curve, capacity: st.capacity };
        st.s.completed(now, rq, &view);
        self.decide(st, done.unwrap_or(now))
    }

    /// A connection closed.
    pub fn exited(&self, ctx: ContextId) -> Vec<Batch> {
        let mut st = self.state.lock().unwrap();
        let now = self.now();
        st.s.context_exited(now, ctx);
        self.decide(&mut st, now)
    }

    /// Ask the scheduler for dispatches while the backend has room. `event` is when the
    /// event that prompted this happened (see the module doc).
    fn decide(&self, st: &mut State, event: Time) -> Vec<Batch> {
        let before = st.deadline.take();
        let mut out = Vec::new();
        while st.inflight < st.depth {
            let now = self.now();
            let view = CurveView { head: st.head, curve: &st.curve, capacity: st.capacity };
            match st.s.decide(now, &view) {
                Decision::Dispatch(rq) => {
                    let mut ios = Vec::new();
                    let mut stack = vec![rq.id];
                    while let Some(id) = stack.pop() {
                        if let Some(io) = st.held.remove(&id) {
                            ios.push(io);
                        }
                        stack.extend(st.merged.remove(&id).unwrap_or_default());
                    }
                    ios.sort_by_key(|io| io.op.extent().0);
                    st.s.dispatched_to_device(now, &rq);
                    st.inflight += 1;
                    if st.depth > 1 {
                        st.head = rq.end();
                    }
                    out.push(Batch { rq, ios, at: event.min(now) });
                }
                Decision::WaitUntil(t) => {
                    st.deadline = Some(t);
                    break;
                }
                Decision::Idle => break,
            }
        }
        let waiting = st.deadline.is_some() && st.inflight == 0;
        match (st.waiting_since, waiting) {
            (None, true) => st.waiting_since = Some(self.now()),
            (Some(since), false) => {
                st.waiting_since = None;
                self.stats.idle_wait(self.now().0.saturating_sub(since.0));
            }
            _ => {}
        }
        if st.deadline.is_some() && st.deadline != before {
            self.timer.notify_one();
        }
        out
    }

    /// The timer thread: decide at each deadline; hand what is dispatched to `submit`.
    /// Returns once [`Core::stop`] was called.
    pub fn timer(&self, mut submit: impl FnMut(Vec<Batch>)) {
        set_timer_slack_1ns();
        let mut st = self.state.lock().unwrap();
        loop {
            if st.stop {
                debug!(stats = ?st.s.stats(), "scheduler done");
                return;
            }
            match st.deadline {
                None => st = self.timer.wait(st).unwrap(),
                Some(t) => {
                    let now = self.now();
                    if now >= t {
                        let batches = self.decide(&mut st, t);
                        drop(st);
                        if !batches.is_empty() {
                            submit(batches);
                        }
                        st = self.state.lock().unwrap();
                    } else {
                        st = self.timer.wait_timeout(st, StdDuration::from_nanos(t.0 - now.0)).unwrap().0;
                    }
                }
            }
        }
    }

    /// End the timer thread (once every request has been answered).
    pub fn stop(&self) {
        self.state.lock().unwrap().stop = true;
        self.timer.notify_all();
    }
}

/// The kernel's default timer slack (50 µs) would make every timed wait that much late.
pub(crate) fn set_timer_slack_1ns() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and affects this thread only.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

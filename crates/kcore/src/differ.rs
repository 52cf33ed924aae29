//! The differential driver: the C core and headway's Rust `stream:deadline` through the
//! same events, the same decision required at every step.
//!
//! A run is closed loop, as the papers' workloads are: each [`Proc`] issues its next
//! request a think time after its previous one completed (the scheduler never learns who
//! issued what), and open-loop requests arrive at fixed times beside them. The device is
//! a FIFO of up to `depth` commands, each served in the table's estimate from where the
//! previous one ended (at least 1 µs). After every event — an arrival, a completion, a
//! timer the schedulers asked for — both sides are asked to decide while the device has
//! room; a wait arms the timer, a newer decision replaces it.
//!
//! Compared at every step: which request an arrival merged into; the decision (dispatch
//! of which id with which extent, wait until when, idle); the number of queued requests.
//! At the end: the counters both keep (waits, waits that caught their child, waits that
//! expired, second chances, slice expiries, urgent preemptions) and the C core's
//! bookkeeping (inserted = dispatched + merged, dispatched = completed).

use std::collections::VecDeque;

use headway_sched::framework::stream::{Stream, StreamParams};
use headway_sched::policy::{Deadline, DeadlineParams};
use headway_sched::{Arrival, Decision, Dir, Duration, ReqId, Request, Scheduler, Time};

use crate::ffi::{CCore, CDecision, CParams};
use crate::table::Table;

/// One request of a closed-loop issuer: where, how much, and how long the issuer thinks
/// after the previous one completed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub sector: u64,
    pub len: u32,
    pub write: bool,
    pub think_ns: u64,
}

/// A closed-loop issuer (a process, a thread, a VM: the schedulers are not told).
#[derive(Clone, Debug, Default)]
pub struct Proc {
    pub start_ns: u64,
    pub steps: Vec<Step>,
}

/// An open-loop request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Timed {
    pub at_ns: u64,
    pub sector: u64,
    pub len: u32,
    pub write: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Workload {
    pub procs: Vec<Proc>,
    /// Sorted by time.
    pub timed: Vec<Timed>,
}

/// Settings of one run. The Rust side gets the same values converted to its units;
/// `rust_*` fields override them there alone (to show the harness catches a difference).
#[derive(Clone, Debug)]
pub struct Config {
    pub c: CParams,
    pub table: Table,
    pub depth: u32,
    /// The Rust side prices with this table instead (same knots, another penalty...).
    pub rust_table: Option<Table>,
    /// The Rust side's tolerance factor instead of `c.tolerance_milli / 1000`.
    pub rust_tolerance: Option<f64>,
    /// The Rust side's fifo_batch instead.
    pub rust_fifo_batch: Option<u32>,
    /// Run the C core's mutant build (`SS_BACKWARD_PCT` 60) instead of the real one.
    pub c_mutant: bool,
    /// Stop after this many events.
    pub max_events: usize,
}

/// What happened, for reports and for the log kept around a divergence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Arrive { id: u64, sector: u64, len: u32, write: bool },
    Complete { id: u64 },
    Timer,
    Decide(String),
}

/// A finished run.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub events: usize,
    pub decisions: usize,
    pub dispatches: usize,
    pub merges: usize,
    pub waits: u64,
    pub waits_caught: u64,
    pub second_chances: u64,
    pub end_ns: u64,
}

impl Outcome {
    /// Sum another run's counts into this one (`end_ns` is left as it is).
    pub fn add(&mut self, o: &Outcome) {
        self.events += o.events;
        self.decisions += o.decisions;
        self.dispatches += o.dispatches;
        self.merges += o.merges;
        self.waits += o.waits;
        self.waits_caught += o.waits_caught;
        self.second_chances += o.second_chances;
    }
}

/// The first step at which the two sides differ, with the events before it.
#[derive(Clone, Debug)]
pub struct Divergence {
    pub step: usize,
    pub now: u64,
    pub what: String,
    pub recent: Vec<(u64, Event)>,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "step {} at {} ns: {}", self.step, self.now, self.what)?;
        for (t, e) in &self.recent {
            writeln!(f, "  {t:>14} ns  {e:?}")?;
        }
        Ok(())
    }
}

struct Flight {
    id: u64,
    sector: u64,
    len: u32,
    write: bool,
    done_at: u64,
}

struct Run<'a> {
    cfg: &'a Config,
    w: &'a Workload,
    rust: Stream<Deadline>,
    c: CCore,
    rust_table: &'a Table,
    now: u64,
    step: usize,
    log: VecDeque<(u64, Event)>,
    out: Outcome,
    /// Per request id: the procs whose request it carries (merges add to the list).
    carriers: Vec<Vec<usize>>,
    inflight: VecDeque<Flight>,
    device_free_at: u64,
    device_head: u64,
    timer: Option<u64>,
    /// Per proc: next step and when it arrives (None: waiting for a completion, or done).
    next_step: Vec<usize>,
    next_at: Vec<Option<u64>>,
    next_timed: usize,
    next_id: u64,
}

pub fn rust_params(cfg: &Config) -> (DeadlineParams, StreamParams) {
    let c = &cfg.c;
    let dp = DeadlineParams {
        read_expire: Duration(c.read_expire_ns),
        write_expire: Duration(c.write_expire_ns),
        writes_starved: c.writes_starved,
        fifo_batch: cfg.rust_fifo_batch.unwrap_or(c.fifo_batch),
        front_merges: c.front_merges,
    };
    let sp = StreamParams {
        stream_threshold: c.stream_threshold,
        tolerance_factor: cfg.rust_tolerance.unwrap_or(c.tolerance_milli as f64 / 1000.0),
        stream_time_slice: Duration(c.time_slice_ns),
    };
    (dp, sp)
}

/// Drive both sides through `w` under `cfg`.
pub fn run(cfg: &Config, w: &Workload) -> Result<Outcome, Divergence> {
    let (dp, sp) = rust_params(cfg);
    let mut rust = Stream::new(Deadline::new(dp), sp, cfg.c.max_sectors);
    rust.set_device_queue_depth(cfg.depth);
    let mut c = if cfg.c_mutant {
        CCore::mutant(&cfg.c, cfg.table.capacity, cfg.depth)
    } else {
        CCore::new(&cfg.c, cfg.table.capacity, cfg.depth)
    };
    assert!(c.set_table(&cfg.table.knots), "the C core refused the table {:?}", cfg.table.knots);
    let mut r = Run {
        cfg,
        w,
        rust,
        c,
        rust_table: cfg.rust_table.as_ref().unwrap_or(&cfg.table),
        now: 0,
        step: 0,
        log: VecDeque::new(),
        out: Outcome::default(),
        carriers: vec![Vec::new()],
        inflight: VecDeque::new(),
        device_free_at: 0,
        device_head: 0,
        timer: None,
        next_step: vec![0; w.procs.len()],
        next_at: w.procs.iter().map(|p| (!p.steps.is_empty()).then_some(p.start_ns)).collect(),
        next_timed: 0,
        next_id: 1,
    };
    r.go()?;
    r.finish()
}

impl Run<'_> {
    fn note(&mut self, e: Event) {
        self.out.events += 1;
        if self.log.len() == 24 {
            self.log.pop_front();
        }
        self.log.push_back((self.now, e));
    }

    fn diverged(&self, what: String) -> Divergence {
        Divergence { step: self.step, now: self.now, what, recent: self.log.iter().cloned().collect() }
    }

    fn go(&mut self) -> Result<(), Divergence> {
        let w = self.w;
        let mut stalled = 0;
        loop {
            self.decide_while_room()?;
            if self.out.events >= self.cfg.max_events {
                return Ok(());
            }
            // The next event: completions first, then arrivals, then the timer.
            let done = self.inflight.front().map(|f| f.done_at);
            let proc_at = self.next_at.iter().flatten().copied().min();
            let timed_at = w.timed.get(self.next_timed).map(|t| t.at_ns);
            let arrival = [proc_at, timed_at].into_iter().flatten().min();
            let t = [done, arrival, self.timer].into_iter().flatten().min();
            let Some(t) = t else { return Ok(()) };
            let prev = self.now;
            self.now = self.now.max(t);
            self.step += 1;
            if done == Some(t) {
                self.complete();
            } else if arrival == Some(t) {
                if proc_at == Some(t) {
                    let p = self.next_at.iter().position(|a| *a == Some(t)).expect("a proc at t");
                    let s = w.procs[p].steps[self.next_step[p]];
                    self.next_at[p] = None;
                    self.next_step[p] += 1;
                    self.arrive(s.sector, s.len, s.write, Some(p))?;
                } else {
                    let s = w.timed[self.next_timed];
                    self.next_timed += 1;
                    self.arrive(s.sector, s.len, s.write, None)?;
                }
            } else {
                self.timer = None;
                self.note(Event::Timer);
            }
            // A wait that asks to be woken at the current time, again and again, would
            // never let time advance.
            stalled = if self.now == prev { stalled + 1 } else { 0 };
            if stalled > 10_000 {
                return Err(self.diverged("time stopped: 10,000 events at one instant".into()));
            }
        }
    }

    fn arrive(&mut self, sector: u64, len: u32, write: bool, proc: Option<usize>) -> Result<(), Divergence> {
        let id = self.next_id;
        self.next_id += 1;
        self.carriers.push(proc.into_iter().collect());
        self.note(Event::Arrive { id, sector, len, write });
        let rq = Request {
            id: ReqId(id),
            sector,
            len,
            dir: if write { Dir::Write } else { Dir::Read },
            sync: !write,
            arrival: Time(self.now),
            ctx: None,
        };
        let rs = match self.rust.arrive(Time(self.now), rq, self.rust_table) {
            Arrival::Queued => None,
            Arrival::Merged { into } => Some(into.0),
        };
        let cs = self.c.arrive(self.now, id, sector, len, write, true);
        if rs != cs {
            return Err(self.diverged(format!("arrival of {id}: Rust merged into {rs:?}, C into {cs:?}")));
        }
        if let Some(into) = rs {
            self.out.merges += 1;
            let moved = std::mem::take(&mut self.carriers[id as usize]);
            self.carriers[into as usize].extend(moved);
        }
        self.check_queued()
    }

    fn check_queued(&self) -> Result<(), Divergence> {
        let (r, c) = (self.rust.pending() as u64, self.c.queued());
        if r != c {
            return Err(self.diverged(format!("queued: Rust {r}, C {c}")));
        }
        Ok(())
    }

    fn complete(&mut self) {
        let f = self.inflight.pop_front().expect("a request in flight");
        self.note(Event::Complete { id: f.id });
        let rq = Request {
            id: ReqId(f.id),
            sector: f.sector,
            len: f.len,
            dir: if f.write { Dir::Write } else { Dir::Read },
            sync: !f.write,
            arrival: Time(0),
            ctx: None,
        };
        self.rust.completed(Time(self.now), &rq, self.rust_table);
        self.c.completed(self.now, f.id);
        for p in std::mem::take(&mut self.carriers[f.id as usize]) {
            self.wake(p);
        }
    }

    /// Proc `p`'s request completed: it thinks, then issues its next step (if any).
    fn wake(&mut self, p: usize) {
        let steps = &self.w.procs[p].steps;
        if let Some(s) = steps.get(self.next_step[p]) {
            self.next_at[p] = Some(self.now + s.think_ns);
        }
    }

    fn decide_while_room(&mut self) -> Result<(), Divergence> {
        while (self.inflight.len() as u32) < self.cfg.depth {
            self.out.decisions += 1;
            let rd = self.rust.decide(Time(self.now), self.rust_table);
            let cd = self.c.decide(self.now);
            let same = match (&rd, cd) {
                (Decision::Idle, CDecision::Idle) => true,
                (Decision::WaitUntil(t), CDecision::Wait(u)) => t.0 == u,
                (Decision::Dispatch(r), CDecision::Dispatch(id, sector, len)) => {
                    r.id.0 == id && r.sector == sector && r.len == len
                }
                _ => false,
            };
            if !same {
                return Err(self.diverged(format!("decision: Rust {rd:?}, C {cd:?}")));
            }
            match rd {
                Decision::Idle => {
                    self.timer = None;
                    self.note(Event::Decide("idle".into()));
                    return self.check_queued();
                }
                Decision::WaitUntil(t) => {
                    self.timer = Some(t.0);
                    self.note(Event::Decide(format!("wait until {}", t.0)));
                    return self.check_queued();
                }
                Decision::Dispatch(rq) => {
                    self.out.dispatches += 1;
                    self.note(Event::Decide(format!("dispatch {} @{}+{}", rq.id.0, rq.sector, rq.len)));
                    let service = self.cfg.table.estimate(self.device_head, rq.sector).max(1_000);
                    let start = self.device_free_at.max(self.now);
                    self.device_free_at = start + service;
                    self.device_head = rq.end();
                    self.inflight.push_back(Flight {
                        id: rq.id.0,
                        sector: rq.sector,
                        len: rq.len,
                        write: rq.dir == Dir::Write,
                        done_at: self.device_free_at,
                    });
                    self.timer = None;
                }
            }
        }
        self.timer = None;
        self.check_queued()
    }

    fn finish(mut self) -> Result<Outcome, Divergence> {
        let rs: std::collections::HashMap<_, _> = Scheduler::stats(&self.rust).into_iter().collect();
        for (r, c) in [
            ("waits", "waits"),
            ("children_dispatched", "waits_caught"),
            ("timeouts", "waits_expired"),
            ("second_chances", "second_chances"),
            ("slice_expiries", "slice_expiries"),
            ("urgent_preemptions", "urgent_preemptions"),
        ] {
            let (a, b) = (rs[r], self.c.stat(c));
            if a != b {
                return Err(self.diverged(format!("counter {r}: Rust {a}, C {c} {b}")));
            }
        }
        let dropped = self.c.stat("parents_dropped");
        if dropped > 0 {
            return Err(
                self.diverged(format!("the C core dropped {dropped} parents (more than SS_MAX_PARENTS)"))
            );
        }
        let (ins, mrg, dis) = (self.c.stat("inserted"), self.c.stat("merged"), self.c.stat("dispatched"));
        if ins != dis + mrg + self.c.queued() {
            return Err(self.diverged(format!(
                "C counters: inserted {ins} != dispatched {dis} + merged {mrg} + queued"
            )));
        }
        self.out.waits = rs["waits"];
        self.out.waits_caught = rs["children_dispatched"];
        self.out.second_chances = rs["second_chances"];
        self.out.end_ns = self.now;
        Ok(self.out)
    }
}

//! DiskSim's process-flow model as it times the synthetic generators (`disksim_pf`; DiskSim
//! 4.0's `disksim_pfsim.c`, `disksim_pfdisp.c` and `disksim_synthio.c`, restated): which
//! generator computes when, when it issues, and when it waits.
//!
//! * One process per generator, `Number of processors` CPUs and one FIFO dispatch queue.
//!   At the start the processes are queued last generator first, and CPU `i` takes the
//!   `i`-th.
//! * A process runs a list of steps, each after some compute time on its CPU (unscaled ms,
//!   times `Process-Flow Time Scale`). A generation appends its request's steps:
//!   - background and time-limited: think `T`, issue, generate;
//!   - time-critical: think `T`, issue, wait for it, generate;
//!   - time-critical with `System call/return with each request`: compute the call time,
//!     think `T`, issue, compute the return time, wait for it (if it is still
//!     outstanding), generate. Other classes ignore the system-call times.
//! * Time limits (`synthio_appendio`): each generator keeps a list of pending limits, in
//!   order of their key `L + T` (the request's limit plus its own think time; an equal key
//!   goes after the ones already there), stored as differences from the one before. At
//!   every generation of the generator, the limits whose difference is strictly below the
//!   new request's first compute time (its think, or its call time) move into the process,
//!   each a wait after that much compute, taken off that compute time in turn; the others
//!   stay, and do not age (DiskSim's rule, kept as it is: a limit is reached only at a later
//!   generation with a longer compute time, and constant think times never reach one).
//!   When a limit's wait runs, the process blocks if the request is still outstanding, and
//!   goes straight on if it completed.
//! * There is no preemption and no time slicing. When a process blocks, its CPU takes the
//!   head of the dispatch queue, or idles.
//! * Completions interrupt CPU 0 (at no cost): a process waiting for the request joins the
//!   queue's tail, and CPU 0, if it has no process, takes the queue's head. No other idle
//!   CPU looks at the queue again, so woken processes share CPU 0, and with fewer CPUs than
//!   background generators the ones left in the queue never run. A woken process resumes
//!   its list: after a time-critical wait that is the next generation, after a limit's
//!   wait the rest of its compute time.
//! * Every generation after a generator's first counts; the one that brings the count to
//!   `Number of I/O requests to generate`, or that comes at or after `Maximum time of trace
//!   generated`, stops the run (requests in flight are abandoned). So does an issue that
//!   leaves 100,000 requests outstanding (DiskSim's saturated logical organisation).
//! * The random stream: the file's seed draws every generator's first request (the last
//!   generator first); then, as DiskSim's `disksim_run_simulation` does, the stream is
//!   reseeded with 1000003 for everything drawn during the run.
//!
//! Not modelled: DiskSim's stop after CPU 0 has been idle for 50 s, and the order of
//! events that fall on exactly the same nanosecond (DiskSim makes every zero-time step an
//! event of its own; here zero-time steps run at once).
//!
//! [`Flow`] is pure: the simulator tells it when a compute time ends and when a request
//! completes, and does what the returned [`Step`]s say.

use std::collections::{HashMap, VecDeque};

use super::gen::{Class, SynthReq};
use super::rand48::Rand48;
use super::SynthSpec;

/// The seed DiskSim's run loop gives the random stream once the first requests are drawn.
pub const RUN_SEED: i64 = 1_000_003;

/// Outstanding requests at which DiskSim stops a run (its `MAX_QUEUE_LENGTH`).
pub const SATURATED: u64 = 100_000;

/// What the simulator is to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Call [`Flow::think_done`] for process `proc` at `at` (ns).
    ThinkUntil { proc: usize, at: u64 },
    /// Issue `req` for process `proc` now; tell [`Flow::completed`] its `token` when it
    /// completes.
    Issue { proc: usize, req: SynthReq, token: u64 },
    /// The run is over.
    Stop,
}

/// What a process does once a step's compute time is over.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Act {
    /// Nothing more (the system call's entry).
    Compute,
    Issue,
    /// Wait for request `token` if it is still outstanding.
    Wait(u64),
    Generate,
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum State {
    /// In the dispatch queue.
    Queued,
    /// On a CPU; `timing`: its head step's compute time is under way.
    Running { cpu: usize, timing: bool },
    /// Waiting for a request.
    Blocked,
}

/// One process: its generator's current request and what it does next.
#[derive(Clone, Debug)]
struct Process {
    req: SynthReq,
    token: u64,
    steps: VecDeque<(f64, Act)>,
    state: State,
}

/// A request from its issue until it completes (a time-limited one until its limit's wait
/// finds it complete).
#[derive(Copy, Clone, Debug, PartialEq)]
enum Rec {
    Outstanding {
        waiter: Option<usize>,
        limited: bool,
    },
    /// A time-limited request that completed before its limit's wait ran.
    Done,
}

/// The processes, CPUs and the shared random stream of one synthetic run.
#[derive(Clone, Debug)]
pub struct Flow {
    spec: SynthSpec,
    rng: Rand48,
    procs: Vec<Process>,
    cpus: Vec<Option<usize>>,
    queue: VecDeque<usize>,
    /// Each generator's pending limits: (difference from the one before, request).
    limits: Vec<VecDeque<(f64, u64)>>,
    recs: HashMap<u64, Rec>,
    next_token: u64,
    outstanding: u64,
    /// Generations counted so far.
    count: u64,
    stopped: bool,
}

impl Flow {
    /// A run of `spec`: every generator's first request drawn (the last generator first)
    /// from the stream seeded with the file's seed, then the stream reseeded for the run.
    pub fn new(spec: SynthSpec) -> Result<Flow, String> {
        let n = spec.generators.len();
        let mut flow = Flow {
            rng: Rand48::seeded(spec.seed),
            procs: Vec::with_capacity(n),
            cpus: vec![None; spec.processors as usize],
            queue: (0..n).rev().collect(),
            limits: vec![VecDeque::new(); n],
            recs: HashMap::new(),
            next_token: 0,
            outstanding: 0,
            count: 0,
            stopped: false,
            spec,
        };
        // drawn last generator first, kept in generator order
        let mut firsts: Vec<SynthReq> =
            flow.spec.generators.iter().rev().map(|g| g.first(&mut flow.rng)).collect();
        firsts.reverse();
        flow.procs = firsts
            .iter()
            .map(|&req| Process { req, token: 0, steps: VecDeque::new(), state: State::Queued })
            .collect();
        for (g, req) in firsts.into_iter().enumerate() {
            flow.append(g, req);
        }
        flow.rng = Rand48::seeded(RUN_SEED);
        Ok(flow)
    }

    /// Generations counted so far (a generator's first request does not count).
    pub fn generated(&self) -> u64 {
        self.count
    }

    /// The run starts at `now`: every CPU takes a process.
    pub fn start(&mut self, now: u64) -> Vec<Step> {
        let mut out = Vec::new();
        for cpu in 0..self.cpus.len() {
            self.dispatch(cpu, now, &mut out);
        }
        out
    }

    /// Process `proc`'s compute time ended at `now`: it does its step, and goes on.
    pub fn think_done(&mut self, proc: usize, now: u64) -> Vec<Step> {
        let mut out = Vec::new();
        if self.stopped {
            return out;
        }
        let State::Running { cpu, timing: true } = self.procs[proc].state else { return out };
        self.procs[proc].state = State::Running { cpu, timing: false };
        let (_, act) = self.procs[proc].steps.pop_front().expect("a timed step");
        if self.act(proc, cpu, act, now, &mut out) {
            self.run(proc, cpu, now, &mut out);
        }
        out
    }

    /// Request `token` completed at `now`.
    pub fn completed(&mut self, token: u64, now: u64) -> Vec<Step> {
        let mut out = Vec::new();
        if self.stopped {
            return out;
        }
        self.outstanding -= 1;
        match self.recs.remove(&token) {
            Some(Rec::Outstanding { waiter: Some(proc), .. }) => {
                self.procs[proc].state = State::Queued;
                self.queue.push_back(proc);
                if self.cpus[0].is_none() {
                    self.dispatch(0, now, &mut out);
                }
            }
            Some(Rec::Outstanding { waiter: None, limited: true }) => {
                self.recs.insert(token, Rec::Done);
            }
            _ => {}
        }
        out
    }

    /// Request `req`'s steps for process `g` (DiskSim's `synthio_appendio`): its own, its
    /// limit put in the generator's list, and the limits its first compute time reaches
    /// moved in before it.
    fn append(&mut self, g: usize, req: SynthReq) {
        let token = self.next_token;
        self.next_token += 1;
        let p = &mut self.procs[g];
        p.req = req;
        p.token = token;
        p.steps.clear();
        if req.class == Class::Critical && self.spec.syscalls {
            p.steps.extend([
                (self.spec.call_ms, Act::Compute),
                (req.think, Act::Issue),
                (self.spec.return_ms, Act::Wait(token)),
            ]);
        } else if req.class == Class::Critical {
            p.steps.extend([(req.think, Act::Issue), (0.0, Act::Wait(token))]);
        } else {
            p.steps.push_back((req.think, Act::Issue));
        }
        p.steps.push_back((0.0, Act::Generate));
        let limits = &mut self.limits[g];
        if let (Class::Limited, Some(limit)) = (req.class, req.limit) {
            insert_limit(limits, limit + req.think, token);
        }
        // the limits the first compute time reaches, in order, each taken off it
        let mut first = p.steps[0].0;
        let mut moved = 0;
        while let Some(&(delta, t)) = limits.front() {
            if delta >= first {
                break;
            }
            limits.pop_front();
            p.steps.insert(moved, (delta, Act::Wait(t)));
            moved += 1;
            first -= delta;
        }
        p.steps[moved].0 = first;
    }

    /// CPU `cpu` takes the queue's head, if any.
    fn dispatch(&mut self, cpu: usize, now: u64, out: &mut Vec<Step>) {
        if self.stopped || self.cpus[cpu].is_some() {
            return;
        }
        let Some(proc) = self.queue.pop_front() else { return };
        self.cpus[cpu] = Some(proc);
        self.run(proc, cpu, now, out);
    }

    /// Process `proc` on `cpu` goes through its steps: those without compute time (other
    /// than an issue, which always waits for its think time's event) at once, until one
    /// takes time, blocks it, or stops the run.
    fn run(&mut self, proc: usize, cpu: usize, now: u64, out: &mut Vec<Step>) {
        loop {
            let &(ms, act) = self.procs[proc].steps.front().expect("a process always has a step");
            if ms > 0.0 || act == Act::Issue {
                self.procs[proc].state = State::Running { cpu, timing: true };
                let ns = (ms * self.spec.time_scale * 1e6).round() as u64;
                out.push(Step::ThinkUntil { proc, at: now + ns });
                return;
            }
            self.procs[proc].state = State::Running { cpu, timing: false };
            self.procs[proc].steps.pop_front();
            if !self.act(proc, cpu, act, now, out) {
                return;
            }
        }
    }

    /// Process `proc` does `act` at `now`; false if it blocked or the run stopped.
    fn act(&mut self, proc: usize, cpu: usize, act: Act, now: u64, out: &mut Vec<Step>) -> bool {
        match act {
            Act::Compute => true,
            Act::Issue => {
                let (req, token) = (self.procs[proc].req, self.procs[proc].token);
                let limited = req.class == Class::Limited;
                self.recs.insert(token, Rec::Outstanding { waiter: None, limited });
                self.outstanding += 1;
                out.push(Step::Issue { proc, req, token });
                if self.outstanding >= SATURATED {
                    self.stop(out);
                    return false;
                }
                true
            }
            Act::Wait(token) => match self.recs.get_mut(&token) {
                Some(Rec::Outstanding { waiter, .. }) => {
                    *waiter = Some(proc);
                    self.procs[proc].state = State::Blocked;
                    self.cpus[cpu] = None;
                    self.dispatch(cpu, now, out);
                    false
                }
                Some(Rec::Done) => {
                    self.recs.remove(&token);
                    true
                }
                _ => true,
            },
            Act::Generate => {
                self.count += 1;
                if self.count >= self.spec.requests || now as f64 >= self.spec.max_time_ms * 1e6 {
                    self.stop(out);
                    return false;
                }
                let prev = self.procs[proc].req;
                let req = self.spec.generators[proc].next(&prev, &mut self.rng);
                self.append(proc, req);
                true
            }
        }
    }

    fn stop(&mut self, out: &mut Vec<Step>) {
        self.stopped = true;
        out.push(Step::Stop);
    }
}

/// Put a limit of key `key` in a generator's list of differences: after every limit of a
/// key up to it, taking its difference off the next one's.
fn insert_limit(list: &mut VecDeque<(f64, u64)>, key: f64, token: u64) {
    let mut rest = key;
    let mut at = 0;
    while at < list.len() && rest >= list[at].0 {
        rest -= list[at].0;
        at += 1;
    }
    if let Some(next) = list.get_mut(at) {
        next.0 -= rest;
    }
    list.insert(at, (rest, token));
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{self, spec};
    use super::*;

    fn gen(p_critical: f64, think_ms: f64) -> super::super::gen::GenSpec {
        testutil::gen(p_critical, think_ms, 1_000_000)
    }

    /// Run `flow` with requests that take `service` ns each (any number at once), and
    /// return (issue time, process) of every request issued.
    fn run(mut flow: Flow, service: u64) -> Vec<(u64, usize)> {
        // (time, order, completion token or none for a think, proc)
        let mut events: Vec<(u64, u64, Option<u64>, usize)> = Vec::new();
        let mut order = 0;
        let mut issued = Vec::new();
        let mut push = |steps: Vec<Step>, now: u64, events: &mut Vec<_>, issued: &mut Vec<_>| -> bool {
            for s in steps {
                match s {
                    Step::ThinkUntil { proc, at } => events.push((at, order, None, proc)),
                    Step::Issue { proc, token, .. } => {
                        issued.push((now, proc));
                        events.push((now + service, order, Some(token), proc));
                    }
                    Step::Stop => return true,
                }
                order += 1;
            }
            false
        };
        if push(flow.start(0), 0, &mut events, &mut issued) {
            return issued;
        }
        while !events.is_empty() {
            // earliest first, equal times in the order they were scheduled
            let i = (0..events.len()).min_by_key(|&i| (events[i].0, events[i].1)).unwrap();
            let (t, _, token, proc) = events.remove(i);
            let steps = match token {
                Some(token) => flow.completed(token, t),
                None => flow.think_done(proc, t),
            };
            if push(steps, t, &mut events, &mut issued) {
                break;
            }
        }
        issued
    }

    fn times(issued: &[(u64, usize)]) -> Vec<u64> {
        issued.iter().map(|i| i.0).collect()
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn one_open_generator_issues_exactly_the_requests_asked_for() {
        let issued = run(Flow::new(spec(vec![gen(0.0, 2.0)], 1, 5)).unwrap(), 10_000_000);
        let times: Vec<u64> = issued.iter().map(|i| i.0).collect();
        // open: one every think time, whatever the service time
        assert_eq!(times, [2_000_000, 4_000_000, 6_000_000, 8_000_000, 10_000_000]);
    }

    #[test]
    fn a_closed_generator_thinks_after_each_completion() {
        let issued = run(Flow::new(spec(vec![gen(1.0, 2.0)], 1, 4)).unwrap(), 3_000_000);
        let times: Vec<u64> = issued.iter().map(|i| i.0).collect();
        assert_eq!(times, [2_000_000, 7_000_000, 12_000_000, 17_000_000]);
    }

    #[test]
    fn woken_processes_wait_for_cpu_zero() {
        // two closed generators on two CPUs: generator 1 starts on CPU 0 (the queue holds
        // the last generator first), generator 0 on CPU 1; each issues at 2 ms. Generator 1
        // blocks first, so CPU 0 idles; its completion at 3 ms puts it back on CPU 0, and
        // generator 0's completion finds CPU 0 busy thinking: it waits until generator 1
        // blocks again at 5 ms, never returning to CPU 1.
        let issued = run(Flow::new(spec(vec![gen(1.0, 2.0), gen(1.0, 2.0)], 2, 6)).unwrap(), 1_000_000);
        assert_eq!(issued[..4], [(2_000_000, 1), (2_000_000, 0), (5_000_000, 1), (7_000_000, 0)]);
    }

    #[test]
    fn with_fewer_cpus_than_open_generators_the_queued_ones_never_run() {
        let issued =
            run(Flow::new(spec(vec![gen(0.0, 1.0), gen(0.0, 1.0), gen(0.0, 1.0)], 1, 10)).unwrap(), 1);
        // the last generator took the only CPU and never blocks
        assert!(issued.iter().all(|&(_, p)| p == 2), "{issued:?}");
        // exactly the requests asked for: the other two never issue, not even their first
        assert_eq!(issued.len(), 10);
    }

    /// A generator whose requests are all time-limited with a 1 ms limit: the first thinks
    /// 5 ms, every later one (all sequential) 8 ms.
    fn limited() -> super::super::gen::GenSpec {
        let mut g = gen(0.0, 5.0);
        g.p_limited = 1.0;
        g.p_seq = 1.0;
        g.time_limit = fixed(1.0);
        g.sequential = fixed(8.0);
        g
    }

    fn fixed(x: f64) -> super::super::dist::Dist {
        super::super::dist::Dist::Exponential { base: x, mean: 0.0 }
    }

    fn req(think: f64, limit: Option<f64>) -> SynthReq {
        let class = if limit.is_some() { Class::Limited } else { Class::Background };
        SynthReq { think, device: 0, block: 0, count: 1, read: true, class, limit }
    }

    #[test]
    fn limits_move_in_once_a_later_compute_time_passes_their_key() {
        // keys L + T: 1 + 5 = 6, then 1 + 3 = 4 (ahead of it), then 1 + 7 = 8 (behind both);
        // the third request's 7 ms passes 4 and then 6 - 4 = 2 more, not 8 - 6 = 2 more
        // than the 1 left
        let mut f = Flow::new(spec(vec![limited()], 1, 100)).unwrap();
        f.limits[0].clear();
        f.append(0, req(5.0, Some(1.0)));
        let a = f.procs[0].token;
        assert_eq!(f.procs[0].steps, [(5.0, Act::Issue), (0.0, Act::Generate)]);
        f.append(0, req(3.0, Some(1.0)));
        let b = f.procs[0].token;
        assert_eq!(f.procs[0].steps, [(3.0, Act::Issue), (0.0, Act::Generate)], "4 is not below 3");
        f.append(0, req(7.0, Some(1.0)));
        let c = f.procs[0].token;
        assert_eq!(
            f.procs[0].steps,
            [(4.0, Act::Wait(b)), (2.0, Act::Wait(a)), (1.0, Act::Issue), (0.0, Act::Generate)]
        );
        // what stays is reduced by the last key moved in: 8 - 6
        assert_eq!(f.limits[0], [(2.0, c)]);
        // an equal key goes behind; a background request moves nothing its think does not pass
        f.append(0, req(1.0, Some(1.0)));
        assert_eq!(f.limits[0], [(2.0, c), (0.0, f.procs[0].token)]);
        f.append(0, req(2.0, None));
        assert_eq!(f.procs[0].steps[0], (2.0, Act::Issue), "2 is not below 2");
    }

    #[test]
    fn a_limit_blocks_on_an_outstanding_request_and_the_process_resumes_its_think() {
        // R1 issued at 5; R2 (think 8) takes R1's key 6 in: R1's wait at 5 + 6 = 11. With
        // 100 ms service R1 is outstanding: blocked until 105, then the 2 ms left, R2 at 107;
        // R3 takes R2's wait after 3 ms (R2 outstanding until 207), then 5: R3 at 212; R4
        // takes R3's key 6 in (blocked until 312), then 2: R4 at 314
        let issued = run(Flow::new(spec(vec![limited()], 1, 4)).unwrap(), 100 * MS);
        assert_eq!(times(&issued), [5 * MS, 107 * MS, 212 * MS, 314 * MS]);
        // with 1 ms service each request completed before its wait: no block, 8 ms apart
        let issued = run(Flow::new(spec(vec![limited()], 1, 4)).unwrap(), MS);
        assert_eq!(times(&issued), [5 * MS, 13 * MS, 21 * MS, 29 * MS]);
    }

    #[test]
    fn constant_think_times_never_reach_a_limit() {
        let mut g = limited();
        g.sequential = fixed(5.0);
        let issued = run(Flow::new(spec(vec![g], 1, 6)).unwrap(), 100 * MS);
        assert_eq!(times(&issued), [5 * MS, 10 * MS, 15 * MS, 20 * MS, 25 * MS, 30 * MS]);
    }

    #[test]
    fn system_calls_surround_a_time_critical_request() {
        let with = |call: f64, ret: f64, p_critical: f64| {
            let mut s = spec(vec![gen(p_critical, 2.0)], 1, 4);
            (s.syscalls, s.call_ms, s.return_ms) = (true, call, ret);
            times(&run(Flow::new(s).unwrap(), 3 * MS))
        };
        // call 1, think 2: issued at 3, done at 6; the return's 0.5 ms ends before it, so
        // the process waits; then call and think again
        assert_eq!(with(1.0, 0.5, 1.0), [3 * MS, 9 * MS, 15 * MS, 21 * MS]);
        // a return longer than the service: it completed meanwhile, no wait
        assert_eq!(with(1.0, 4.0, 1.0), [3 * MS, 10 * MS, 17 * MS, 24 * MS]);
        // background requests ignore the system-call times
        assert_eq!(with(1.0, 4.0, 0.0), [2 * MS, 4 * MS, 6 * MS, 8 * MS]);
    }

    #[test]
    fn the_run_draws_from_a_stream_reseeded_after_the_first_requests() {
        let mut g = gen(0.0, 0.0);
        g.general = super::super::dist::Dist::Uniform { low: 0.0, high: 100.0 };
        let s = spec(vec![g.clone()], 1, 100);
        let mut f = Flow::new(s.clone()).unwrap();
        let first = g.first(&mut Rand48::seeded(s.seed));
        assert_eq!(f.procs[0].req, first);
        f.start(0);
        let at = (first.think * 1e6).round() as u64;
        f.think_done(0, at);
        let second = g.next(&first, &mut Rand48::seeded(RUN_SEED));
        assert_eq!(f.procs[0].req, second);
        let mut continued = Rand48::seeded(s.seed);
        g.first(&mut continued);
        assert_ne!(f.procs[0].req, g.next(&first, &mut continued), "not the file's stream continued");
    }

    #[test]
    fn a_hundred_thousand_outstanding_requests_stop_the_run() {
        let mut f = Flow::new(spec(vec![gen(0.0, 0.001)], 1, u64::MAX)).unwrap();
        let (mut steps, mut issued) = (f.start(0), 0u64);
        loop {
            let mut next = None;
            for s in &steps {
                match s {
                    Step::Issue { .. } => issued += 1,
                    Step::ThinkUntil { at, .. } => next = Some(*at),
                    Step::Stop => {
                        assert_eq!(issued, SATURATED);
                        return;
                    }
                }
            }
            let now = next.expect("a think time or the stop");
            steps = f.think_done(0, now);
            assert!(issued <= SATURATED, "{issued} issued by {now}");
        }
    }
}

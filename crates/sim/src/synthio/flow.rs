//! DiskSim's process-flow model as it times the synthetic generators (`disksim_pf`; DiskSim
//! 4.0's `disksim_pfsim.c` and `disksim_pfdisp.c`, restated): which generator thinks when,
//! when it issues, and when it waits.
//!
//! * One process per generator, `Number of processors` CPUs and one FIFO dispatch queue.
//!   At the start the processes are queued last generator first, and CPU `i` takes the
//!   `i`-th; a process starts its first think time when it gets a CPU.
//! * A process computes its request's think time (times `Process-Flow Time Scale`) on its
//!   CPU, then issues the request. A background request is followed at once by the next
//!   generation and think time; after a time-critical one the process blocks until it
//!   completes. There is no preemption and no time slicing.
//! * When a process blocks, its CPU takes the head of the dispatch queue, or idles.
//! * Completions interrupt CPU 0 (at no cost): the woken process joins the queue's tail,
//!   and CPU 0, if it has no process, takes the queue's head. No other idle CPU looks at
//!   the queue again, so woken processes share CPU 0, and with fewer CPUs than background
//!   generators the ones left in the queue never run.
//! * A woken process generates its next request when it runs again.
//! * Every generation after a generator's first counts; the one that brings the count to
//!   `Number of I/O requests to generate`, or that comes at or after `Maximum time of trace
//!   generated`, stops the run (requests in flight are abandoned).
//!
//! [`Flow`] is pure: the simulator tells it when a think time ends and when a request
//! completes, and does what the returned [`Step`]s say.

use std::collections::VecDeque;

use super::gen::{Class, SynthReq};
use super::rand48::Rand48;
use super::SynthSpec;

/// What the simulator is to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Call [`Flow::think_done`] for process `proc` at `at` (ns).
    ThinkUntil { proc: usize, at: u64 },
    /// Issue `req` for process `proc` now; tell [`Flow::completed`] when it completes.
    Issue { proc: usize, req: SynthReq },
    /// The run is over.
    Stop,
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum State {
    /// In the dispatch queue, its next request generated (a process not yet run).
    Queued,
    /// In the dispatch queue after its request completed: generates when it runs.
    Woken,
    /// Computing its think time on a CPU.
    Thinking { cpu: usize },
    /// Waiting for its time-critical request.
    Blocked { cpu_was: usize },
}

/// The processes, CPUs and the shared random stream of one synthetic run.
#[derive(Clone, Debug)]
pub struct Flow {
    spec: SynthSpec,
    rng: Rand48,
    /// Each process's next request and state.
    pending: Vec<SynthReq>,
    state: Vec<State>,
    cpus: Vec<Option<usize>>,
    queue: VecDeque<usize>,
    /// Generations counted so far.
    count: u64,
    stopped: bool,
}

impl Flow {
    /// A run of `spec`: every generator's first request drawn (the last generator first)
    /// from the stream reseeded with the file's seed. What is not modelled yet is an error.
    pub fn new(spec: SynthSpec) -> Result<Flow, String> {
        if spec.syscalls {
            return Err("`System call/return with each request` = 1 is not run yet".into());
        }
        if let Some(i) = spec.generators.iter().position(|g| g.p_limited > 0.0) {
            return Err(format!(
                "generator {i}: time-limited requests (`Probability of time-limited request` > 0) are not run yet"
            ));
        }
        let mut rng = Rand48::seeded(spec.seed);
        let n = spec.generators.len();
        // drawn last generator first, kept in generator order
        let mut pending: Vec<SynthReq> = spec.generators.iter().rev().map(|g| g.first(&mut rng)).collect();
        pending.reverse();
        Ok(Flow {
            cpus: vec![None; spec.processors as usize],
            queue: (0..n).rev().collect(),
            state: vec![State::Queued; n],
            pending,
            rng,
            spec,
            count: 0,
            stopped: false,
        })
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

    /// Process `proc`'s think time ended at `now`: it issues its request.
    pub fn think_done(&mut self, proc: usize, now: u64) -> Vec<Step> {
        let mut out = Vec::new();
        if self.stopped {
            return out;
        }
        let State::Thinking { cpu } = self.state[proc] else { return out };
        let req = self.pending[proc];
        out.push(Step::Issue { proc, req });
        if req.class == Class::Critical {
            self.state[proc] = State::Blocked { cpu_was: cpu };
            self.cpus[cpu] = None;
            self.dispatch(cpu, now, &mut out);
        } else {
            self.generate_and_think(proc, cpu, now, &mut out);
        }
        out
    }

    /// Process `proc`'s request completed at `now`.
    pub fn completed(&mut self, proc: usize, now: u64) -> Vec<Step> {
        let mut out = Vec::new();
        if self.stopped {
            return out;
        }
        if let State::Blocked { .. } = self.state[proc] {
            self.state[proc] = State::Woken;
            self.queue.push_back(proc);
            if self.cpus[0].is_none() {
                self.dispatch(0, now, &mut out);
            }
        }
        out
    }

    /// CPU `cpu` takes the queue's head, if any.
    fn dispatch(&mut self, cpu: usize, now: u64, out: &mut Vec<Step>) {
        if self.stopped || self.cpus[cpu].is_some() {
            return;
        }
        let Some(proc) = self.queue.pop_front() else { return };
        self.cpus[cpu] = Some(proc);
        match self.state[proc] {
            State::Woken => self.generate_and_think(proc, cpu, now, out),
            _ => self.think(proc, cpu, now, out),
        }
    }

    /// The next generation (which may stop the run), then its think time.
    fn generate_and_think(&mut self, proc: usize, cpu: usize, now: u64, out: &mut Vec<Step>) {
        self.count += 1;
        if self.count >= self.spec.requests || now as f64 >= self.spec.max_time_ms * 1e6 {
            self.stopped = true;
            out.push(Step::Stop);
            return;
        }
        let prev = self.pending[proc];
        self.pending[proc] = self.spec.generators[proc].next(&prev, &mut self.rng);
        self.think(proc, cpu, now, out);
    }

    fn think(&mut self, proc: usize, cpu: usize, now: u64, out: &mut Vec<Step>) {
        self.state[proc] = State::Thinking { cpu };
        let ns = (self.pending[proc].think * self.spec.time_scale * 1e6).round() as u64;
        out.push(Step::ThinkUntil { proc, at: now + ns });
    }
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
        let mut events: Vec<(u64, u64, bool, usize)> = Vec::new(); // (time, order, completion, proc)
        let mut order = 0;
        let mut issued = Vec::new();
        let mut push = |steps: Vec<Step>, now: u64, events: &mut Vec<_>, issued: &mut Vec<_>| -> bool {
            for s in steps {
                match s {
                    Step::ThinkUntil { proc, at } => events.push((at, order, false, proc)),
                    Step::Issue { proc, .. } => {
                        issued.push((now, proc));
                        events.push((now + service, order, true, proc));
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
            let (t, _, done, proc) = events.remove(i);
            let steps = if done { flow.completed(proc, t) } else { flow.think_done(proc, t) };
            if push(steps, t, &mut events, &mut issued) {
                break;
            }
        }
        issued
    }

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

    #[test]
    fn what_is_not_run_yet_is_refused() {
        let mut g = gen(0.0, 1.0);
        g.p_limited = 0.2;
        assert!(Flow::new(spec(vec![g], 1, 5)).unwrap_err().contains("time-limited"));
        let mut s = spec(vec![gen(0.0, 1.0)], 1, 5);
        s.syscalls = true;
        assert!(Flow::new(s).unwrap_err().contains("System call/return"));
    }
}

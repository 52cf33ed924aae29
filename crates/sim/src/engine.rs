//! The discrete-event loop: jobs submit requests, the scheduler decides, the drive model
//! serves them one at a time.
//!
//! Events are ordered by `(time, insertion sequence)`, so equal times break ties in the
//! order events were created and a run is a pure function of its inputs and seed. The
//! scheduler is driven exactly as the contract in `headway_sched::scheduler` says: `decide`
//! whenever the device is free — after a completion, on every arrival while idle, and when
//! a `WaitUntil` timer fires (stale timers are recognised by a generation number).
//!
//! Hot-path allocation: none per request beyond the scheduler's own containers and the
//! request-metadata map; events are small `Copy` values in one binary heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use headway_disk::{DiskSpec, Hdd};
use headway_sched::idmap::IdMap;
use headway_sched::{
    Arrival, ContextId, CurveView, Decision, Dir, ReqId, Request, Scheduler, ServiceCurve, Time, SECTOR_BYTES,
};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::hist::Histogram;
use crate::report::{Aggregate, Clat, DeviceReport, DirReport, JobReport, RunReport};
use crate::workload::{ContextMode, Job, HOST_OVERHEAD};

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A job may submit.
    Wake(u32),
    /// The device finished its request.
    Complete,
    /// A scheduler wait ends (generation).
    Timer(u64),
}

#[derive(Copy, Clone, Debug)]
struct Meta {
    job: u32,
    submit: Time,
    bytes: u32,
    dir: Dir,
}

#[derive(Default)]
struct JobStats {
    bytes: [u64; 2],
    clat: [Histogram; 2],
    /// Device time spent on the job's requests (merged requests split by bytes).
    disk_ns: u64,
    /// Requests submitted since the job last passed its process's barrier.
    since_barrier: u32,
}

/// Everything one run needs besides the jobs.
pub struct RunInput<'a> {
    pub disk: &'a DiskSpec,
    pub curve: &'a ServiceCurve,
    pub context: ContextMode,
    pub seed: u64,
}

/// Why a run could not finish.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    #[error("simulation stalled at {at}: {jobs} job(s) unfinished with no event pending (scheduler `{scheduler}` returned Idle with {pending} request(s) queued)")]
    Stalled { at: Time, jobs: usize, scheduler: String, pending: usize },
}

pub struct Engine<'a> {
    sched: Box<dyn Scheduler>,
    hdd: Hdd,
    curve: &'a ServiceCurve,
    capacity: u64,
    jobs: Vec<Job>,
    stats: Vec<JobStats>,
    next_allowed: Vec<Time>,
    groups: Vec<Vec<u32>>,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    now: Time,
    meta: IdMap<Meta>,
    merged: IdMap<Vec<ReqId>>,
    next_id: u64,
    head: u64,
    busy: Option<Request>,
    busy_since: Time,
    timer_gen: u64,
    /// Draws daemon-thread ids for `--context pool:N`.
    pool: Option<(u32, ChaCha8Rng)>,
    // device figures
    busy_ns: u64,
    idle_wait_ns: u64,
    seeks: u64,
    seek_dist: u128,
    dispatched: u64,
    hits: u64,
    first_submit: Option<Time>,
    last_complete: Time,
    done_bytes: u64,
    planned_bytes: u64,
}

impl<'a> Engine<'a> {
    pub fn new(mut sched: Box<dyn Scheduler>, jobs: Vec<Job>, input: &RunInput<'a>) -> Self {
        // Weights reach the scheduler once per issuer: the first job of an issuer decides.
        let mut weighted = std::collections::BTreeSet::new();
        for j in &jobs {
            if let Some(c) = j.ctx {
                if weighted.insert(c) && j.weight != 1 {
                    sched.set_weight(c, j.weight);
                }
            }
        }
        let pool = match input.context {
            ContextMode::Pool(n) => Some((n, ChaCha8Rng::seed_from_u64(input.seed ^ 0x706f_6f6c))),
            _ => None,
        };
        let hdd = Hdd::new(input.disk.clone());
        let capacity = hdd.capacity();
        let ngroups = jobs.iter().map(|j| j.group + 1).max().unwrap_or(0);
        let mut groups = vec![Vec::new(); ngroups];
        for j in &jobs {
            groups[j.group].push(j.index as u32);
        }
        let planned_bytes = jobs.iter().filter_map(|j| j.planned_bytes()).sum();
        let n = jobs.len();
        Engine {
            sched,
            hdd,
            curve: input.curve,
            capacity,
            stats: (0..n).map(|_| JobStats::default()).collect(),
            next_allowed: vec![Time::ZERO; n],
            jobs,
            groups,
            heap: BinaryHeap::with_capacity(64),
            seq: 0,
            now: Time::ZERO,
            meta: IdMap::default(),
            merged: IdMap::default(),
            next_id: 1,
            head: 0,
            busy: None,
            busy_since: Time::ZERO,
            timer_gen: 0,
            pool,
            busy_ns: 0,
            idle_wait_ns: 0,
            seeks: 0,
            seek_dist: 0,
            dispatched: 0,
            hits: 0,
            first_submit: None,
            last_complete: Time::ZERO,
            done_bytes: 0,
            planned_bytes,
        }
    }

    fn push(&mut self, t: Time, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t.0, self.seq, ev)));
    }

    fn start_group(&mut self, g: usize) {
        let now = self.now;
        for i in 0..self.groups[g].len() {
            let j = self.groups[g][i];
            let delay = self.jobs[j as usize].startdelay;
            self.push(now + delay, Ev::Wake(j));
        }
    }

    /// Run to the end. `progress` receives the fraction done now and then.
    pub fn run(mut self, mut progress: impl FnMut(f64)) -> Result<RunReport, EngineError> {
        if !self.groups.is_empty() {
            self.start_group(0);
        }
        let mut group = 0usize;
        let mut events = 0u64;
        while let Some(Reverse((t, _, ev))) = self.heap.pop() {
            let t = Time(t);
            if self.busy.is_none() && self.sched.pending() > 0 {
                self.idle_wait_ns += t.0 - self.now.0;
            }
            self.now = t;
            match ev {
                Ev::Wake(j) => self.wake(j as usize),
                Ev::Complete => self.complete(),
                Ev::Timer(gen) => {
                    if gen == self.timer_gen && self.busy.is_none() {
                        self.dispatch();
                    }
                }
            }
            // Stonewall: when every job of the current group is done, start the next.
            while group + 1 < self.groups.len()
                && self.groups[group].iter().all(|&j| self.jobs[j as usize].done(self.now))
            {
                group += 1;
                self.start_group(group);
            }
            events += 1;
            if events & 0xFFFF == 0 && self.planned_bytes > 0 {
                progress(self.done_bytes as f64 / self.planned_bytes as f64);
            }
        }
        let unfinished = self.jobs.iter().filter(|j| !j.done(self.now)).count();
        if unfinished > 0 {
            return Err(EngineError::Stalled {
                at: self.now,
                jobs: unfinished,
                scheduler: self.sched.name(),
                pending: self.sched.pending(),
            });
        }
        progress(1.0);
        Ok(self.report())
    }

    fn view(&self) -> CurveView<'a> {
        CurveView { head: self.head, curve: self.curve, capacity: self.capacity }
    }

    fn wake(&mut self, j: usize) {
        let now = self.now;
        let job = &mut self.jobs[j];
        if job.started_at.is_none() {
            job.started_at = Some(now);
        }
        let mut submitted = false;
        while job.inflight < job.iodepth
            && job.wants_more(now)
            && (job.barrier == 0 || self.stats[j].since_barrier < job.barrier)
        {
            if let Some(gap) = job.rate_gap {
                if now < self.next_allowed[j] {
                    let at = self.next_allowed[j];
                    self.seq += 1;
                    self.heap.push(Reverse((at.0, self.seq, Ev::Wake(j as u32))));
                    break;
                }
                self.next_allowed[j] = now + gap;
            }
            let io = job.next_io();
            job.inflight += 1;
            self.stats[j].since_barrier += 1;
            let ctx = match &mut self.pool {
                Some((n, rng)) => Some(ContextId(rng.gen_range(0..*n))),
                None => job.ctx,
            };
            let id = ReqId(self.next_id);
            self.next_id += 1;
            let rq = Request { id, sector: io.sector, len: io.len, dir: io.dir, sync: job.sync, arrival: now, ctx };
            self.meta.insert(id, Meta { job: j as u32, submit: now, bytes: io.len * SECTOR_BYTES as u32, dir: io.dir });
            self.first_submit.get_or_insert(now);
            let view = CurveView { head: self.head, curve: self.curve, capacity: self.capacity };
            if let Arrival::Merged { into } = self.sched.arrive(now, rq, &view) {
                self.merged.entry(into).or_default().push(id);
            }
            submitted = true;
        }
        if submitted && self.busy.is_none() {
            self.dispatch();
        }
    }

    fn dispatch(&mut self) {
        debug_assert!(self.busy.is_none());
        let view = self.view();
        match self.sched.decide(self.now, &view) {
            Decision::Dispatch(rq) => {
                let now = self.now;
                self.sched.dispatched_to_device(now, &rq);
                let acc = self.hdd.access(now, rq.sector, rq.len, rq.dir);
                self.dispatched += 1;
                if acc.cache_hit {
                    self.hits += 1;
                }
                if acc.seek_cylinders > 0 {
                    self.seeks += 1;
                    self.seek_dist += rq.sector.abs_diff(self.head) as u128;
                }
                self.busy_ns += acc.done.0 - now.0;
                self.busy = Some(rq);
                self.busy_since = now;
                self.push(acc.done, Ev::Complete);
            }
            Decision::WaitUntil(t) => {
                self.timer_gen += 1;
                let gen = self.timer_gen;
                // A wait "until now" would spin: the scheduler is re-asked a nanosecond later.
                let t = if t <= self.now { Time(self.now.0 + 1) } else { t };
                self.push(t, Ev::Timer(gen));
            }
            Decision::Idle => {}
        }
    }

    fn complete(&mut self) {
        let rq = self.busy.take().expect("a completion with the device idle");
        let now = self.now;
        self.head = rq.end();
        self.last_complete = now;
        let view = self.view();
        self.sched.completed(now, &rq, &view);
        let service = now.0 - self.busy_since.0;
        let total = rq.bytes().max(1);
        self.finish(rq.id, service, total);
        if let Some(children) = self.merged.remove(&rq.id) {
            for c in children {
                self.finish(c, service, total);
            }
        }
        self.dispatch();
    }

    /// One request (original or merged part) is done: account it and let its job go on.
    /// `service` is the device time of the carrier request, `total` its bytes.
    fn finish(&mut self, id: ReqId, service: u64, total: u64) {
        let now = self.now;
        let m = self.meta.remove(&id).expect("completed request has metadata");
        let j = m.job as usize;
        let st = &mut self.stats[j];
        st.disk_ns += (service as u128 * m.bytes as u128 / total as u128) as u64;
        st.bytes[m.dir.index()] += m.bytes as u64;
        st.clat[m.dir.index()].record(now.0 - m.submit.0);
        self.done_bytes += m.bytes as u64;
        let job = &mut self.jobs[j];
        job.inflight -= 1;
        job.completed += 1;
        let at_barrier = job.barrier > 0 && self.stats[j].since_barrier >= job.barrier;
        if job.wants_more(now) {
            if at_barrier {
                if job.inflight == 0 {
                    let p = job.process;
                    self.try_release_barrier(p);
                }
            } else {
                let gap = if job.sync { job.gap_after_completion() } else { HOST_OVERHEAD };
                self.push(now + gap, Ev::Wake(j as u32));
            }
        } else if job.inflight == 0 && job.finished_at.is_none() {
            job.finished_at = Some(now);
            let (ctx, process) = (job.ctx, job.process);
            if let Some(c) = ctx {
                if self.jobs.iter().all(|o| o.ctx != Some(c) || o.finished_at.is_some()) {
                    self.sched.context_exited(now, c);
                }
            }
            // A finished thread no longer holds its process's barrier.
            self.try_release_barrier(process);
        }
    }

    /// Threads of `process` that use a barrier go on once every one still running has
    /// submitted its `barrier` requests and seen them complete.
    fn try_release_barrier(&mut self, process: u32) {
        let now = self.now;
        let members = || self.jobs.iter().filter(|o| o.process == process && o.barrier > 0);
        let all_there = members().all(|o| {
            o.finished_at.is_some() || (self.stats[o.index].since_barrier >= o.barrier && o.inflight == 0)
        });
        if !all_there || members().all(|o| o.finished_at.is_some()) {
            return;
        }
        let waiting: Vec<usize> = members().filter(|o| o.finished_at.is_none()).map(|o| o.index).collect();
        for j in waiting {
            self.stats[j].since_barrier = 0;
            let gap = if self.jobs[j].sync { self.jobs[j].gap_after_completion() } else { HOST_OVERHEAD };
            self.push(now + gap, Ev::Wake(j as u32));
        }
    }

    fn report(self) -> RunReport {
        let mut jobs = Vec::with_capacity(self.jobs.len());
        let mut all = Histogram::default();
        let mut total = 0;
        for (job, st) in self.jobs.iter().zip(&self.stats) {
            let (start, end) = (job.started_at.unwrap_or(Time::ZERO), job.finished_at.unwrap_or(self.last_complete));
            let rt = end.0.saturating_sub(start.0);
            all.merge(&st.clat[0]);
            all.merge(&st.clat[1]);
            total += st.bytes[0] + st.bytes[1];
            jobs.push(JobReport {
                jobname: job.name.clone(),
                groupid: job.group,
                job_runtime: rt / 1_000_000,
                disk_time_ns: st.disk_ns,
                read: DirReport::new(st.bytes[0], &st.clat[0], rt),
                write: DirReport::new(st.bytes[1], &st.clat[1], rt),
            });
        }
        let runtime_ns = self.last_complete.0.saturating_sub(self.first_submit.unwrap_or(Time::ZERO).0);
        let secs = runtime_ns as f64 * 1e-9;
        RunReport {
            scheduler: self.sched.name(),
            disk: self.hdd.spec().name.to_string(),
            context: String::new(),
            seed: 0,
            jobs,
            aggregate: Aggregate {
                io_bytes: total,
                bw_bytes: if runtime_ns == 0 { 0 } else { (total as u128 * 1_000_000_000 / runtime_ns as u128) as u64 },
                iops: if runtime_ns == 0 { 0.0 } else { all.count as f64 / secs },
                runtime_ns,
                clat_ns: Clat::from_hist(&all),
            },
            device: DeviceReport {
                utilization: if runtime_ns == 0 { 0.0 } else { self.busy_ns as f64 / runtime_ns as f64 },
                idle_wait_ns: self.idle_wait_ns,
                seek_count: self.seeks,
                mean_seek_distance_sectors: if self.seeks == 0 { 0.0 } else { self.seek_dist as f64 / self.seeks as f64 },
                requests: self.dispatched,
                cache_hits: self.hits,
            },
            scheduler_stats: self.sched.stats().into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        }
    }
}

//! fio jobs as a workload source: each job submits while its queue has room and it wants
//! more (its walk — sequential, random, PostMark — think times, rate limits, `ramp_time`,
//! `runtime`, `number_ios` are [`Job`]'s), waits at its process's barrier
//! (`headway_barrier`: threads that synchronise every N requests), syncs (`fsync`,
//! `end_fsync`, `sync=1` writes held until durable), and finishes; stonewall groups start
//! one after another, and `exitall` stops a job's group with it.
//!
//! A job's requests go to the page cache when buffered (`direct=0`), else straight to the
//! block layer. With `cpu_per_request`, every request first takes that long on the host's
//! one CPU, which the jobs share in turn (first come, first served): a guest's single vCPU
//! or a busy client issues no faster than it, and its requests reach the drive spaced.
//!
//! [`Job`]: crate::workload::Job

use headway_sched::{Dir, Duration, Request, Time, SECTOR_BYTES};

use super::core::Ev;
use super::machine::{Machine, Reaped};
use super::source::Source;
use crate::workload::{Fsync, Job};

/// The fio jobs' own state (the jobs themselves are the machine's: the report accounts by
/// them).
pub(super) struct FioJobs {
    /// The jobs of each stonewall group, and the group running.
    groups: Vec<Vec<u32>>,
    group: usize,
    /// When each job may submit next (`rate`, `rate_iops`).
    next_allowed: Vec<Time>,
    /// Requests each job submitted since it last passed its process's barrier.
    since_barrier: Vec<u32>,
    /// Per job, a `sync=1` write waiting for its sync (done on the drive, not yet for the job).
    osync_held: Vec<Option<Reaped>>,
    /// The host's one CPU (`cpu_per_request`, zero: none): what each request costs it, when
    /// it is next free, and per job when the CPU work of its next request is done.
    cpu_cost: Duration,
    cpu_free: Time,
    cpu_done: Vec<Option<Time>>,
}

impl Source for FioJobs {
    fn start(&mut self, m: &mut Machine) {
        if !self.groups.is_empty() {
            self.start_group(m, 0);
        }
    }

    fn wake(&mut self, m: &mut Machine, key: u32) {
        self.submit(m, key as usize);
    }

    #[inline(always)]
    fn completed(&mut self, m: &mut Machine, r: Reaped) {
        let j = r.meta.job as usize;
        // `sync=1`: the write returns once durable; held until the job's sync completes
        if r.meta.dir == Dir::Write && m.jobs[j].syncs.osync {
            self.osync_held[j] = Some(r);
            m.jobs[j].syncs.state = Fsync::Draining;
            return self.try_fsync(m, j);
        }
        m.count(&r);
        self.request_done(m, j, r.host);
    }

    fn flushed(&mut self, m: &mut Machine, token: u64) {
        self.job_flushed(m, token as usize);
    }

    fn written_back(&mut self, m: &mut Machine, j: usize) {
        if m.jobs[j].syncs.state == Fsync::Draining {
            self.try_fsync(m, j);
        }
    }

    /// Stonewall groups after the first need watching.
    fn watches_events(&self) -> bool {
        self.groups.len() > 1
    }

    /// Stonewall: when every job of the current group is done, start the next.
    fn after_event(&mut self, m: &mut Machine) {
        while self.group + 1 < self.groups.len()
            && self.groups[self.group].iter().all(|&j| m.jobs[j as usize].done(m.core.now))
        {
            self.group += 1;
            self.start_group(m, self.group);
        }
    }

    fn unfinished(&self, _m: &Machine) -> usize {
        0
    }
}

impl FioJobs {
    /// The jobs' state; each request costs the host's one CPU `cpu_cost` (zero: no CPU).
    pub fn new(jobs: &[Job], cpu_cost: Duration) -> Self {
        let ngroups = jobs.iter().map(|j| j.group + 1).max().unwrap_or(0);
        let mut groups = vec![Vec::new(); ngroups];
        for j in jobs {
            groups[j.group].push(j.index as u32);
        }
        let n = jobs.len();
        FioJobs {
            groups,
            group: 0,
            next_allowed: vec![Time::ZERO; n],
            since_barrier: vec![0; n],
            osync_held: vec![None; n],
            cpu_cost,
            cpu_free: Time::ZERO,
            cpu_done: vec![None; n],
        }
    }

    /// Start stonewall group `g`'s jobs (each after its `startdelay`).
    fn start_group(&self, m: &mut Machine, g: usize) {
        let now = m.core.now;
        for &j in &self.groups[g] {
            let delay = m.jobs[j as usize].plan.startdelay;
            m.core.push(now + delay, Ev::Source(j));
        }
    }

    /// Job `j` may submit: as much as it may now (one plug), then a wake-up or nothing.
    fn submit(&mut self, m: &mut Machine, j: usize) {
        let now = m.core.now;
        m.jobs[j].progress.started_at.get_or_insert(now);
        let mut submitted = false;
        loop {
            let job = &mut m.jobs[j];
            if job.fsync_due() {
                self.try_fsync(m, j);
                break;
            }
            if !(job.has_room(now)
                && job.wants_more(now)
                && (job.issuer.barrier == 0 || self.since_barrier[j] < job.issuer.barrier))
            {
                // (a job that ran out of work between requests, here with its final sync
                // still to do, or while it waited for the host's CPU, which no completion
                // will wake again; one with neither is reported as running to the last
                // completion)
                if job.progress.inflight == 0
                    && !job.wants_more(now)
                    && (job.end_fsync_due() || self.cpu_done[j].is_some())
                {
                    self.cpu_done[j] = None;
                    self.job_idle(m, j);
                }
                break;
            }
            if now < self.next_allowed[j] {
                m.core.push(self.next_allowed[j], Ev::Source(j as u32));
                break;
            }
            // the host's CPU prepares each request in turn: the job queues for it, and
            // submits once its request's CPU work is done
            if self.cpu_cost > Duration::ZERO {
                match self.cpu_done[j] {
                    Some(t) if now >= t => self.cpu_done[j] = None,
                    Some(_) => break, // woken when it is done
                    None => {
                        let done = now.max(self.cpu_free) + self.cpu_cost;
                        self.cpu_free = done;
                        self.cpu_done[j] = Some(done);
                        m.core.push(done, Ev::Source(j as u32));
                        break;
                    }
                }
            }
            let job = &mut m.jobs[j];
            let io = job.next_io();
            if let Some(gap) = job.submit_gap(io.len as u64 * SECTOR_BYTES) {
                self.next_allowed[j] = now + gap;
            }
            job.submitted();
            if io.dir == Dir::Write {
                job.syncs.writes_since += 1;
            }
            // a read is synchronous to the schedulers whatever the engine (Linux's
            // `op_is_sync`: someone waits for every read); a write, when the job blocks on it
            let sync = io.dir == Dir::Read || job.queue.sync;
            let own_ctx = job.issuer.ctx;
            self.since_barrier[j] += 1;
            let ctx = m.issuers.of_job(own_ctx);
            let id = m.new_request(j, io.dir, io.sector, io.len, 0);
            if let Some(q) = m.stats[j].qos.as_mut() {
                q.submitted(now, id, io.len * SECTOR_BYTES as u32, io.dir);
            }
            if io.dir == Dir::Read && m.cache.reads_through(j) {
                let region = m.jobs[j].region();
                submitted |= m.cache.read(&mut m.core, &mut m.block, j, region, id, io.sector, io.len, ctx);
            } else if io.dir == Dir::Write && m.jobs[j].queue.buffered {
                submitted |= m.cache.write(&mut m.core, &mut m.block, j, id, io.sector, io.len);
            } else {
                let rq = Request { id, sector: io.sector, len: io.len, dir: io.dir, sync, arrival: now, ctx };
                m.block.arrive(&mut m.core, rq, j as u32);
                submitted = true;
            }
        }
        if submitted {
            m.block.fill_kicked(&mut m.core);
        }
    }

    /// A request of job `j` completed (counted already): the job goes on `host` later (plus
    /// its think time), waits at its barrier, or is idle.
    #[inline(always)]
    fn request_done(&mut self, m: &mut Machine, j: usize, host: headway_sched::Duration) {
        let now = m.core.now;
        let job = &mut m.jobs[j];
        let at_barrier = job.issuer.barrier > 0 && self.since_barrier[j] >= job.issuer.barrier;
        if job.wants_more(now) {
            if at_barrier {
                if job.progress.inflight == 0 {
                    let p = job.issuer.process;
                    self.try_release_barrier(m, p);
                }
            } else {
                let gap = job.gap_after_completion(now, host);
                m.core.push(now + gap, Ev::Source(j as u32));
            }
        } else if job.progress.inflight == 0 {
            self.job_idle(m, j);
        }
    }

    /// Job `j` has nothing in flight and wants nothing more, or has a sync to finish: go on
    /// with the sync, start the final one (`end_fsync`), or finish.
    fn job_idle(&mut self, m: &mut Machine, j: usize) {
        let job = &mut m.jobs[j];
        if job.syncs.state == Fsync::Draining {
            return self.try_fsync(m, j);
        }
        if job.syncs.state != Fsync::Idle || job.progress.finished_at.is_some() {
            return;
        }
        if job.end_fsync_due() {
            job.start_end_fsync();
            return self.try_fsync(m, j);
        }
        self.job_finished(m, j);
    }

    /// A sync of job `j` (`fsync`): once nothing of the job is in flight, write back its
    /// dirty page-cache data; once that is done, flush every drive's write cache (a
    /// flush already under way serves: the job's data is in the cache before it completes).
    fn try_fsync(&mut self, m: &mut Machine, j: usize) {
        let now = m.core.now;
        let held = self.osync_held[j].is_some() as u32;
        if m.jobs[j].syncs.state != Fsync::Draining || m.jobs[j].progress.inflight > held {
            return;
        }
        // the job's sync call begins once its own requests are done
        m.jobs[j].syncs.started.get_or_insert(now);
        if m.cache.writing_back(j) {
            return; // the writeback's completions come back here
        }
        if m.cache.has_dirty(j) {
            if m.cache.write_back(&mut m.core, &mut m.block, j) {
                m.block.fill_kicked(&mut m.core);
            }
            return;
        }
        m.jobs[j].syncs.state = Fsync::Flushing(m.block.members() as u32);
        m.block.flush_all(&mut m.core, j as u64);
    }

    /// One drive's flush that job `j` waited for completed: once all its drives have
    /// flushed, its sync is done (a held `sync=1` write completes with it).
    fn job_flushed(&mut self, m: &mut Machine, j: usize) {
        let now = m.core.now;
        let job = &mut m.jobs[j];
        let Fsync::Flushing(left) = job.syncs.state else { unreachable!("a flush waiter is flushing") };
        if left > 1 {
            job.syncs.state = Fsync::Flushing(left - 1);
            return;
        }
        job.syncs.state = Fsync::Idle;
        job.syncs.writes_since = 0;
        let started = job.syncs.started.take().expect("a sync under way has started");
        if let Some(held) = self.osync_held[j].take() {
            // a synchronous write's own sync: part of the write's latency
            m.count(&held);
            return self.request_done(m, j, held.host);
        }
        m.stats[j].sync_lat.record(now.0 - started.0);
        let job = &mut m.jobs[j];
        if job.wants_more(now) {
            let gap = job.gap_after_completion(now, job.host_overhead);
            m.core.push(now + gap, Ev::Source(j as u32));
        } else {
            self.job_idle(m, j);
        }
    }

    /// Job `j` has nothing more to do and nothing in flight: mark it finished, tell the
    /// schedulers when its issuer has no job left, let its process's barrier go on; with
    /// `exitall`, stop the other jobs of its group (those idle finish now, the others when
    /// their requests in flight complete).
    fn job_finished(&mut self, m: &mut Machine, j: usize) {
        let now = m.core.now;
        let job = &mut m.jobs[j];
        job.progress.finished_at = Some(now);
        let (ctx, process, exitall, group) = (job.issuer.ctx, job.issuer.process, job.exitall, job.group);
        if let Some(c) = ctx {
            if m.jobs.iter().all(|o| o.issuer.ctx != Some(c) || o.progress.finished_at.is_some()) {
                m.block.context_exited(now, c);
            }
        }
        // A finished thread no longer holds its process's barrier.
        self.try_release_barrier(m, process);
        if exitall {
            let others: Vec<usize> = (0..m.jobs.len())
                .filter(|&o| o != j && m.jobs[o].group == group && m.jobs[o].progress.finished_at.is_none())
                .collect();
            for &o in &others {
                m.jobs[o].stop();
            }
            for o in others {
                let job = &m.jobs[o];
                if job.progress.inflight == 0
                    && job.progress.started_at.is_some()
                    && job.progress.finished_at.is_none()
                {
                    self.job_finished(m, o);
                }
            }
        }
    }

    /// Threads of `process` that use a barrier go on once every one still running has
    /// submitted its `barrier` requests and seen them complete.
    fn try_release_barrier(&mut self, m: &mut Machine, process: u32) {
        let now = m.core.now;
        let members = || m.jobs.iter().filter(|o| o.issuer.process == process && o.issuer.barrier > 0);
        let all_there = members().all(|o| {
            o.progress.finished_at.is_some()
                || (self.since_barrier[o.index] >= o.issuer.barrier && o.progress.inflight == 0)
        });
        if !all_there || members().all(|o| o.progress.finished_at.is_some()) {
            return;
        }
        let waiting: Vec<usize> =
            members().filter(|o| o.progress.finished_at.is_none()).map(|o| o.index).collect();
        for j in waiting {
            self.since_barrier[j] = 0;
            let gap = m.jobs[j].gap_after_completion(now, m.host_overhead);
            m.core.push(now + gap, Ev::Source(j as u32));
        }
    }
}

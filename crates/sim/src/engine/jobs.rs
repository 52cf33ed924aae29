//! fio jobs as a workload source: each job submits while its queue has room and it wants
//! more (its walk — sequential, random, PostMark — think times, rate limits, `ramp_time`,
//! `runtime`, `number_ios` are [`Job`]'s), waits at its process's barrier
//! (`headway_barrier`: threads that synchronise every N requests), syncs (`fsync`,
//! `end_fsync`, `sync=1` writes held until durable), and finishes; stonewall groups start
//! one after another, and `exitall` stops a job's group with it.
//!
//! A job's requests go to the page cache when buffered (`direct=0`), else straight to the
//! block layer.
//!
//! [`Job`]: crate::workload::Job

use headway_sched::{Dir, Request, SECTOR_BYTES};

use super::block::FlushWaiter;
use super::core::Ev;
use super::{Engine, Meta, NOT_TRACE};
use crate::workload::{Fsync, HOST_OVERHEAD};

impl Engine<'_> {
    /// Start stonewall group `g`'s jobs (each after its `startdelay`).
    pub(super) fn start_group(&mut self, g: usize) {
        let now = self.core.now;
        for i in 0..self.groups[g].len() {
            let j = self.groups[g][i];
            let delay = self.jobs[j as usize].startdelay;
            self.core.push(now + delay, Ev::Wake(j));
        }
    }

    /// Job `j` may submit: as much as it may now (one plug), then a wake-up or nothing.
    pub(super) fn wake(&mut self, j: usize) {
        let now = self.core.now;
        self.jobs[j].started_at.get_or_insert(now);
        let mut submitted = false;
        loop {
            let job = &mut self.jobs[j];
            if job.fsync_due() {
                self.try_fsync(j);
                break;
            }
            if !(job.has_room()
                && job.wants_more(now)
                && (job.barrier == 0 || self.stats[j].since_barrier < job.barrier))
            {
                // (a job that ran out of work between requests, here with its final sync
                // still to do; one without is reported as running to the last completion)
                if job.inflight == 0 && !job.wants_more(now) && job.end_fsync_due() {
                    self.job_idle(j);
                }
                break;
            }
            if now < self.next_allowed[j] {
                self.core.push(self.next_allowed[j], Ev::Wake(j as u32));
                break;
            }
            let io = job.next_io();
            if let Some(gap) = job.submit_gap(io.len as u64 * SECTOR_BYTES) {
                self.next_allowed[j] = now + gap;
            }
            job.submitted();
            if io.dir == Dir::Write {
                job.writes_since_fsync += 1;
            }
            let (sync, own_ctx) = (job.sync, job.ctx);
            self.stats[j].since_barrier += 1;
            let ctx = self.issuers.of_job(own_ctx);
            let id = self.core.new_id();
            let bytes = io.len * SECTOR_BYTES as u32;
            self.requests.insert(
                id,
                Meta { job: j as u32, submit: now, sector: io.sector, bytes, dir: io.dir, tctx: NOT_TRACE },
            );
            if let Some(q) = self.stats[j].qos.as_mut() {
                q.submitted(now, id, bytes, io.dir);
            }
            self.first_submit.get_or_insert(now);
            if io.dir == Dir::Read && self.cache.reads_through(j) {
                let region = self.jobs[j].region();
                submitted |=
                    self.cache.read(&mut self.core, &mut self.block, j, region, id, io.sector, io.len, ctx);
            } else if io.dir == Dir::Write && self.jobs[j].buffered {
                submitted |= self.cache.write(&mut self.core, &mut self.block, j, id, io.sector, io.len);
            } else {
                let rq = Request { id, sector: io.sector, len: io.len, dir: io.dir, sync, arrival: now, ctx };
                self.block.arrive(&mut self.core, rq, j as u32);
                submitted = true;
            }
        }
        if submitted {
            self.block.fill_kicked(&mut self.core);
        }
    }

    /// A request of job `j` completed (counted already): the job goes on `host` later (plus
    /// its think time), waits at its barrier, or is idle.
    pub(super) fn job_request_done(&mut self, j: usize, host: headway_sched::Duration) {
        let now = self.core.now;
        let job = &mut self.jobs[j];
        let at_barrier = job.barrier > 0 && self.stats[j].since_barrier >= job.barrier;
        if job.wants_more(now) {
            if at_barrier {
                if job.inflight == 0 {
                    let p = job.process;
                    self.try_release_barrier(p);
                }
            } else {
                let gap = job.gap_after_completion(host);
                self.core.push(now + gap, Ev::Wake(j as u32));
            }
        } else if job.inflight == 0 {
            self.job_idle(j);
        }
    }

    /// Job `j` has nothing in flight and wants nothing more, or has a sync to finish: go on
    /// with the sync, start the final one (`end_fsync`), or finish.
    fn job_idle(&mut self, j: usize) {
        let job = &mut self.jobs[j];
        if job.fsync == Fsync::Draining {
            return self.try_fsync(j);
        }
        if job.fsync != Fsync::Idle || job.finished_at.is_some() {
            return;
        }
        if job.end_fsync_due() {
            job.start_end_fsync();
            return self.try_fsync(j);
        }
        self.job_finished(j);
    }

    /// A sync of job `j` (`fsync`): once nothing of the job is in flight, write back its
    /// dirty page-cache data; once that is done, flush every drive's write cache (a
    /// flush already under way serves: the job's data is in the cache before it completes).
    pub(super) fn try_fsync(&mut self, j: usize) {
        let now = self.core.now;
        let held = self.osync_held[j].is_some() as u32;
        if self.jobs[j].fsync != Fsync::Draining || self.jobs[j].inflight > held {
            return;
        }
        // the job's sync call begins once its own requests are done
        self.jobs[j].fsync_started.get_or_insert(now);
        if self.cache.writing_back(j) {
            return; // the writeback's completions come back here
        }
        if self.cache.has_dirty(j) {
            if self.cache.write_back(&mut self.core, &mut self.block, j) {
                self.block.fill_kicked(&mut self.core);
            }
            return;
        }
        self.jobs[j].fsync = Fsync::Flushing(self.block.members() as u32);
        self.block.flush_all(&mut self.core, FlushWaiter::Job(j as u32));
    }

    /// One drive's flush that job `j` waited for completed: once all its drives have
    /// flushed, its sync is done (a held `sync=1` write completes with it).
    pub(super) fn job_flushed(&mut self, j: usize) {
        let now = self.core.now;
        let job = &mut self.jobs[j];
        let Fsync::Flushing(left) = job.fsync else { unreachable!("a flush waiter is flushing") };
        if left > 1 {
            job.fsync = Fsync::Flushing(left - 1);
            return;
        }
        job.fsync = Fsync::Idle;
        job.writes_since_fsync = 0;
        let started = job.fsync_started.take().expect("a sync under way has started");
        if let Some(held) = self.osync_held[j].take() {
            // a synchronous write's own sync: part of the write's latency
            self.account(held);
            return;
        }
        self.stats[j].sync_lat.record(now.0 - started.0);
        if job.wants_more(now) {
            let gap = job.gap_after_completion(HOST_OVERHEAD);
            self.core.push(now + gap, Ev::Wake(j as u32));
        } else {
            self.job_idle(j);
        }
    }

    /// Job `j` has nothing more to do and nothing in flight: mark it finished, tell the
    /// schedulers when its issuer has no job left, let its process's barrier go on; with
    /// `exitall`, stop the other jobs of its group (those idle finish now, the others when
    /// their requests in flight complete).
    fn job_finished(&mut self, j: usize) {
        let now = self.core.now;
        let job = &mut self.jobs[j];
        job.finished_at = Some(now);
        let (ctx, process, exitall, group) = (job.ctx, job.process, job.exitall, job.group);
        if let Some(c) = ctx {
            if self.jobs.iter().all(|o| o.ctx != Some(c) || o.finished_at.is_some()) {
                self.block.context_exited(now, c);
            }
        }
        // A finished thread no longer holds its process's barrier.
        self.try_release_barrier(process);
        if exitall {
            let others: Vec<usize> = (0..self.jobs.len())
                .filter(|&o| o != j && self.jobs[o].group == group && self.jobs[o].finished_at.is_none())
                .collect();
            for &o in &others {
                self.jobs[o].stop();
            }
            for o in others {
                let job = &self.jobs[o];
                if job.inflight == 0 && job.started_at.is_some() && job.finished_at.is_none() {
                    self.job_finished(o);
                }
            }
        }
    }

    /// Threads of `process` that use a barrier go on once every one still running has
    /// submitted its `barrier` requests and seen them complete.
    fn try_release_barrier(&mut self, process: u32) {
        let now = self.core.now;
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
            let gap = self.jobs[j].gap_after_completion(HOST_OVERHEAD);
            self.core.push(now + gap, Ev::Wake(j as u32));
        }
    }
}


//! The simulated machine below the workload: the core (clock, events, ids), the host's
//! page cache, the block layer, the issuer of each request, and the accounting of the
//! jobs' requests — and the routing between them: what a drive event brings, and what a
//! completed disk request means upwards (an array request's last piece, a page-cache fill
//! whose waiting reads complete, a writeback, or a job's own request, handed to its
//! [`Source`]).

use headway_sched::hist::Histogram;
use headway_sched::idmap::IdMap;
use headway_sched::{ArraySchedulers, Dir, ReqId, Time, SECTOR_BYTES};

use super::block::{Block, Completes, DriveEvent};
use super::core::Core;
use super::issuers::Issuers;
use super::page_cache::PageCache;
use super::source::Source;
use super::{EngineError, RequestLog, RequestRecord, RunInput};
use crate::workload::{ContextMode, Job};

/// Host cost between a read served from the page cache and the reader's next request: the
/// system call's return and entry, 1 us (an estimate). Nothing blocked, so none of
/// [`HOST_OVERHEAD`](crate::workload::HOST_OVERHEAD)'s interrupt, wake-up and block-layer
/// work: a reader copying cached pages runs at ~2 GB/s (two microseconds a 4 KiB page), as
/// buffered reads of cached data did on the papers' machines.
pub(super) const HIT_SYSCALL: headway_sched::Duration = headway_sched::Duration::from_micros(1);

/// A job request in flight.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Meta {
    pub job: u32,
    pub submit: Time,
    /// First sector (the job's address: an array address with `--array`).
    pub sector: u64,
    pub bytes: u32,
    pub dir: Dir,
    /// The source's own mark (a trace's: the trace context that issued it).
    pub tag: u32,
    /// The job's requests in flight once this one was submitted (itself included).
    pub depth: u16,
}

/// What a job's requests came to.
#[derive(Default)]
pub(super) struct JobStats {
    pub bytes: [u64; 2],
    pub clat: [Histogram; 2],
    /// Drive time spent on the job's requests: each command's own service (queueing in
    /// the drive excluded), a merged command's split by bytes among its parts.
    pub disk_ns: u64,
    /// The job against its QoS class, when it has one ([`crate::qos`]).
    pub qos: Option<crate::qos::QosStats>,
    /// Its syncs (`fsync`, `end_fsync`, a trace's flushes).
    pub sync_lat: Histogram,
}

/// A completed request of a job, before it is counted ([`Machine::count`]): its id and
/// metadata, the drive time of the request that carried it, that request's bytes, and the
/// host's gap before the job's next request.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Reaped {
    pub id: ReqId,
    pub meta: Meta,
    pub service: u64,
    pub total: u64,
    pub host: headway_sched::Duration,
}

pub(crate) struct Machine<'a> {
    /// What the report says produced it: the context mode and the seed.
    pub context: ContextMode,
    pub seed: u64,
    pub core: Core,
    pub block: Block<'a>,
    pub cache: PageCache,
    pub issuers: Issuers,
    /// What the report accounts by: fio jobs, a trace's contexts.
    pub jobs: Vec<Job>,
    pub stats: Vec<JobStats>,
    /// Job requests in flight.
    requests: IdMap<Meta>,
    pub first_submit: Option<Time>,
    done_bytes: u64,
    planned_bytes: u64,
    /// Told every job request as it completes, when asked for.
    pub log: Option<RequestLog<'a>>,
    /// `host_overhead`: a completion to the issuer's next request.
    pub host_overhead: headway_sched::Duration,
}

impl<'a> Machine<'a> {
    pub fn new(scheds: ArraySchedulers, jobs: Vec<Job>, input: &RunInput<'a>) -> Result<Self, EngineError> {
        if input.disk.controller.is_some() && input.array.is_some()
            || input.devices.iter().any(|d| d.disk.controller.is_some())
        {
            return Err(EngineError::Unsupported(format!(
                "`{}` has a caching controller: headway runs it in front of a lone drive, not of an array's members or one of several devices",
                input.disk.name
            )));
        }
        let block = Block::new(scheds, &jobs, input)?;
        if block.shared_bus()
            && (input.drive.queue_depth != 1 || input.drive.write_cache == headway_disk::WriteCache::Back)
        {
            return Err(EngineError::Unsupported(format!(
                "drives of `{}` share a bus: headway models a shared bus with drives that take one command at a time and write through (--queue-depth 1 --write-cache through)",
                input.disk.name
            )));
        }
        let mut cache = PageCache::new(&input.host);
        let mut jobs = jobs;
        for j in &mut jobs {
            cache.add_job(j.queue.buffered, j.issuer.ctx);
            j.host_overhead = input.host.host_overhead;
        }
        Ok(Machine {
            context: input.context,
            seed: input.seed,
            core: Core::new(),
            block,
            cache,
            issuers: Issuers::new(input.context, input.seed),
            stats: jobs
                .iter()
                .map(|j| JobStats { qos: j.issuer.qos.map(crate::qos::QosStats::new), ..Default::default() })
                .collect(),
            requests: IdMap::default(),
            first_submit: None,
            done_bytes: 0,
            planned_bytes: jobs.iter().filter_map(|j| j.planned_bytes()).sum(),
            jobs,
            log: None,
            host_overhead: input.host.host_overhead,
        })
    }

    /// A job made during the run (a trace context's).
    pub fn add_job(&mut self, mut job: Job) {
        job.host_overhead = self.host_overhead;
        debug_assert_eq!(job.index, self.jobs.len());
        self.cache.add_job(job.queue.buffered, job.issuer.ctx);
        self.jobs.push(job);
        self.stats.push(JobStats::default());
    }

    /// Jobs not done now.
    pub fn unfinished_jobs(&self) -> usize {
        self.jobs.iter().filter(|j| !j.done(self.core.now)).count()
    }

    /// The planned bytes done, when jobs plan their bytes.
    pub fn fraction(&self) -> Option<f64> {
        (self.planned_bytes > 0).then(|| self.done_bytes as f64 / self.planned_bytes as f64)
    }

    /// A new request of job `j` submitted now: its id (the caller sends it on).
    #[inline]
    pub fn new_request(&mut self, j: usize, dir: Dir, sector: u64, len: u32, tag: u32) -> ReqId {
        let now = self.core.now;
        let id = self.core.new_id();
        let bytes = len * SECTOR_BYTES as u32;
        // (every source counts the request in flight before it asks for its id)
        let depth = self.jobs[j].progress.inflight.min(u16::MAX as u32) as u16;
        self.requests.insert(id, Meta { job: j as u32, submit: now, sector, bytes, dir, tag, depth });
        self.first_submit.get_or_insert(now);
        id
    }

    /// Member `m`'s drive event of generation `gen` is due: act on what finished, then
    /// refill the drive.
    pub fn drive_event<S: Source + ?Sized>(&mut self, src: &mut S, m: usize, gen: u64) {
        match self.block.drive_event(&mut self.core, m, gen) {
            DriveEvent::Stale => return,
            DriveEvent::Nothing => {}
            DriveEvent::Flushed(tokens) => {
                for t in tokens {
                    src.flushed(self, t);
                }
            }
            DriveEvent::Completed { id, service, total } => {
                self.finish_disk(src, id, service, total);
                if let Some(parts) = self.block.take_merged(id) {
                    for p in parts {
                        self.finish_disk(src, p, service, total);
                    }
                }
            }
        }
        self.block.refill(&mut self.core, m);
    }

    /// The caching controller's event: the host requests it completed go up.
    pub fn ctlr_event<S: Source + ?Sized>(&mut self, src: &mut S) {
        for (id, disk_ns, total) in self.block.ctlr_wake(&mut self.core) {
            self.finish_host(src, id, disk_ns, total);
        }
    }

    /// The flusher's periodic check.
    pub fn periodic_flush(&mut self) {
        // a job with nothing in flight, nothing more to submit and no sync to come is over
        // even when nothing marked it finished (its last wake-up came after its runtime)
        let now = self.core.now;
        let running = self.jobs.iter().any(|o| o.progress.finished_at.is_none() && !o.done(now));
        if self.cache.periodic(&mut self.core, &mut self.block, running) {
            self.block.fill_kicked(&mut self.core);
        }
    }

    /// A disk request (or a part merged into one) is done: an array's member request, or a
    /// request of the host's.
    #[inline(always)]
    fn finish_disk<S: Source + ?Sized>(&mut self, src: &mut S, id: ReqId, service: u64, total: u64) {
        match self.block.finish_piece(&mut self.core, id, service, total) {
            Completes::Itself => self.finish_host(src, id, service, total),
            Completes::Nothing => {}
            Completes::Array { id, disk_ns, total } => self.finish_host(src, id, disk_ns, total),
        }
    }

    /// A request the host sent is done: a writeback, a page-cache fill whose waiting reads
    /// now complete, or a job's own request.
    #[inline(always)]
    fn finish_host<S: Source + ?Sized>(&mut self, src: &mut S, id: ReqId, service: u64, total: u64) {
        if let Some((j, share)) =
            self.cache.writeback_done(&mut self.core, &mut self.block, id, service, total)
        {
            self.stats[j].disk_ns += share;
            return src.written_back(self, j);
        }
        match self.cache.fill_done(id, service, total) {
            None => self.finish_after(src, id, service, total, self.host_overhead),
            Some((j, share, waiters)) => {
                self.stats[j].disk_ns += share;
                for w in waiters {
                    self.finish_after(src, w, 0, 1, self.host_overhead);
                }
            }
        }
    }

    /// Job request `id` is done on the machine, its job's next request coming `host` after
    /// (plus thinktime): its source decides when it completes for the job. `service` is
    /// the drive time of the carrier request, `total` its bytes.
    #[inline(always)]
    pub fn finish_after<S: Source + ?Sized>(
        &mut self,
        src: &mut S,
        id: ReqId,
        service: u64,
        total: u64,
        host: headway_sched::Duration,
    ) {
        let meta = self.requests.remove(&id).expect("completed request has metadata");
        src.completed(self, Reaped { id, meta, service, total, host });
    }

    /// A job's request is done for the job: count it (its job, one request fewer in flight).
    #[inline(always)]
    pub fn count(&mut self, r: &Reaped) {
        let Reaped { id, meta: m, service, total, .. } = *r;
        let now = self.core.now;
        let j = m.job as usize;
        let st = &mut self.stats[j];
        // (`ramp_time`: what completes before the measured part counts in no figure)
        let measured = self.jobs[j].measured_from().is_none_or(|t| now >= t);
        if measured {
            st.disk_ns += (service as u128 * m.bytes as u128 / total as u128) as u64;
            st.bytes[m.dir.index()] += m.bytes as u64;
            st.clat[m.dir.index()].record(now.0 - m.submit.0);
        }
        if let Some(log) = self.log.as_mut() {
            log(&RequestRecord {
                job_index: j as u32,
                job: &self.jobs[j].name,
                dir: m.dir,
                offset: m.sector * SECTOR_BYTES,
                bytes: m.bytes,
                submit_ns: m.submit.0,
                complete_ns: now.0,
                depth: m.depth as u32,
                measured,
            });
        }
        let st = &mut self.stats[j];
        if let Some(q) = st.qos.as_mut() {
            q.completed(now, id, m.submit, m.bytes, self.jobs[j].progress.started_at.unwrap_or(Time::ZERO));
        }
        self.done_bytes += m.bytes as u64;
        self.jobs[j].reaped_one();
    }
}

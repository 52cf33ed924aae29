//! The trace feed as a workload source: a replayed trace's records become requests of jobs
//! made as each trace context first appears ([`crate::trace::feed`] decides when a record
//! is due — at its time, or in closed mode when its context's previous request completed);
//! a flush record has every drive flush its write cache and completes when the last one
//! has.

use std::collections::HashMap;

use headway_sched::{ContextId, Request, Time, SECTOR_BYTES};

use super::block::FlushWaiter;
use super::core::Ev;
use super::{Engine, Meta};
use crate::trace::{Feed, FeedStats, TraceError};
use crate::workload::Job;

/// A trace's flush record under way: its job and context, the drives still flushing, when
/// it was issued.
#[derive(Copy, Clone, Debug)]
struct TraceFlush {
    job: u32,
    tctx: u32,
    left: u32,
    issued: Time,
}

/// A trace being replayed and what the engine keeps of it.
pub(super) struct TraceSource {
    feed: Box<Feed>,
    /// The pending `Ev::Trace`'s time.
    wake_at: Option<Time>,
    /// The error that ends the run.
    err: Option<TraceError>,
    /// Flush records under way, by number.
    flushes: HashMap<u64, TraceFlush>,
    next_flush: u64,
}

impl TraceSource {
    pub fn new(feed: Feed) -> Self {
        TraceSource { feed: Box::new(feed), wake_at: None, err: None, flushes: HashMap::new(), next_flush: 0 }
    }

    /// A bad record ended the run.
    pub fn failed(&self) -> bool {
        self.err.is_some()
    }

    pub fn take_error(&mut self) -> Option<TraceError> {
        self.err.take()
    }

    /// How far through the trace the run is.
    pub fn fraction(&self) -> Option<f64> {
        Some(self.feed.fraction())
    }

    pub fn finished(&self) -> bool {
        self.feed.finished()
    }

    pub fn stats(&self) -> FeedStats {
        self.feed.stats()
    }

    /// Call `f` on the feed at `now`; an error ends the run.
    fn with_feed(&mut self, now: Time, f: impl FnOnce(&mut Feed, Time) -> Result<(), TraceError>) {
        if let Err(e) = f(&mut self.feed, now) {
            self.err.get_or_insert(e);
        }
    }
}

impl Engine<'_> {
    /// `Ev::Trace` at `t`: simulated time reached a record's time.
    pub(super) fn trace_event(&mut self, t: Time) {
        if let Some(s) = self.trace.as_mut() {
            if s.wake_at == Some(t) {
                s.wake_at = None;
            }
        }
        self.trace_advance();
    }

    /// Take what is due.
    pub(super) fn trace_advance(&mut self) {
        let now = self.core.now;
        if let Some(s) = self.trace.as_mut() {
            s.with_feed(now, |f, now| f.advance(now.0));
        }
        self.drain_feed();
    }

    /// `Ev::TraceCtx(c)`: closed mode, context `c` issues its next request.
    pub(super) fn trace_context_event(&mut self, c: u32) {
        let now = self.core.now;
        if let Some(s) = self.trace.as_mut() {
            s.with_feed(now, |f, now| f.issue(c, now.0));
        }
        self.drain_feed();
    }

    /// A request of trace context `tctx` (accounted to job `j`) completed.
    pub(super) fn trace_request_done(&mut self, j: usize, tctx: u32) {
        let now = self.core.now;
        self.jobs[j].finished_at = Some(now);
        if let Some(s) = self.trace.as_mut() {
            s.with_feed(now, |f, now| f.completed(tctx, now.0));
        }
        self.drain_feed();
    }

    /// Act on what the feed produced: jobs for new contexts, arrivals submitted now, issue
    /// events, exited contexts, the next `Ev::Trace`.
    fn drain_feed(&mut self) {
        let Some(mut src) = self.trace.take() else { return };
        let feed = &mut src.feed;
        let (n, max) = (feed.contexts(), feed.max_jobs());
        while self.jobs.len() < n.min(max) || (n > max && self.jobs.len() == max) {
            let i = self.jobs.len();
            let name = if i < max { feed.label(i).to_string() } else { "others".to_string() };
            self.add_job(Job::for_trace(name, i));
        }
        let now = self.core.now;
        let submitted = !feed.arrivals.is_empty();
        while let Some(r) = feed.arrivals.pop_front() {
            let j = (r.ctx as usize).min(max);
            let job = &mut self.jobs[j];
            job.started_at.get_or_insert(now);
            job.inflight += 1;
            if r.flush {
                self.first_submit.get_or_insert(now);
                let id = src.next_flush;
                src.next_flush += 1;
                let left = self.block.members() as u32;
                src.flushes.insert(id, TraceFlush { job: j as u32, tctx: r.ctx, left, issued: now });
                self.block.flush_all(&mut self.core, FlushWaiter::Trace(id));
                continue;
            }
            job.issued += 1;
            job.issued_bytes += r.len as u64 * SECTOR_BYTES;
            let ctx = self.issuers.of_trace_context(r.ctx);
            let id = self.core.new_id();
            let bytes = r.len * SECTOR_BYTES as u32;
            self.requests.insert(
                id,
                Meta { job: j as u32, submit: now, sector: r.sector, bytes, dir: r.dir, tctx: r.ctx },
            );
            self.first_submit.get_or_insert(now);
            let rq = Request { id, sector: r.sector, len: r.len, dir: r.dir, sync: r.sync, arrival: now, ctx };
            self.block.arrive(&mut self.core, rq, j as u32);
        }
        for (c, t) in feed.ready.drain(..) {
            self.core.push(Time(t.max(now.0)), Ev::TraceCtx(c));
        }
        for c in feed.exited.drain(..) {
            if self.issuers.tells_trace_contexts() {
                self.block.context_exited(now, ContextId(c));
            }
        }
        if let Some(t) = feed.wake_at() {
            let t = Time(t.max(now.0));
            if src.wake_at.is_none_or(|e| e > t) {
                src.wake_at = Some(t);
                self.core.push(t, Ev::Trace);
            }
        }
        self.trace = Some(src);
        if submitted {
            self.block.fill_kicked(&mut self.core);
        }
    }

    /// One drive finished its part of trace flush `id`; the last one completes the record.
    pub(super) fn trace_flush_done(&mut self, id: u64) {
        let now = self.core.now;
        let src = self.trace.as_mut().expect("a trace flush has its trace");
        let f = src.flushes.get_mut(&id).expect("a trace flush under way");
        f.left -= 1;
        if f.left > 0 {
            return;
        }
        let f = src.flushes.remove(&id).expect("just seen");
        let j = f.job as usize;
        self.stats[j].sync_lat.record(now.0 - f.issued.0);
        let job = &mut self.jobs[j];
        job.reaped_one();
        job.finished_at = Some(now);
        src.with_feed(now, |feed, now| feed.completed(f.tctx, now.0));
        self.drain_feed();
    }
}


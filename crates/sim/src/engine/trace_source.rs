//! The trace feed as a workload source: a replayed trace's records become requests of jobs
//! made as each trace context first appears ([`crate::trace::feed`] decides when a record
//! is due — at its time, or in closed mode when its context's previous request completed);
//! a flush record has every drive flush its write cache and completes when the last one
//! has.

use std::collections::HashMap;

use headway_sched::{ContextId, Request, Time, SECTOR_BYTES};

use super::core::Ev;
use super::machine::{Machine, Reaped};
use super::source::Source;
use crate::trace::{Feed, FeedStats, TraceError};
use crate::workload::Job;

/// `Ev::Source` key of "the next record is due"; other keys are contexts issuing in closed
/// mode.
const RECORD_DUE: u32 = u32::MAX;

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
    /// The pending `RECORD_DUE` event's time.
    wake_at: Option<Time>,
    /// The error that ends the run.
    err: Option<TraceError>,
    /// Flush records under way, by number (the token the drives are given).
    flushes: HashMap<u64, TraceFlush>,
    next_flush: u64,
}

impl Source for TraceSource {
    fn start(&mut self, m: &mut Machine) {
        self.advance(m);
    }

    fn wake(&mut self, m: &mut Machine, key: u32) {
        let now = m.core.now;
        if key == RECORD_DUE {
            if self.wake_at == Some(now) {
                self.wake_at = None;
            }
            return self.advance(m);
        }
        self.with_feed(now, |f, now| f.issue(key, now.0));
        self.drain(m);
    }

    fn completed(&mut self, m: &mut Machine, r: Reaped) {
        m.count(&r);
        let now = m.core.now;
        m.jobs[r.meta.job as usize].progress.finished_at = Some(now);
        self.with_feed(now, |f, now| f.completed(r.meta.tag, now.0));
        self.drain(m);
    }

    /// One drive finished its part of flush record `token`; the last one completes it.
    fn flushed(&mut self, m: &mut Machine, token: u64) {
        let now = m.core.now;
        let f = self.flushes.get_mut(&token).expect("a trace flush under way");
        f.left -= 1;
        if f.left > 0 {
            return;
        }
        let f = self.flushes.remove(&token).expect("just seen");
        let j = f.job as usize;
        m.stats[j].sync_lat.record(now.0 - f.issued.0);
        let job = &mut m.jobs[j];
        job.reaped_one();
        job.progress.finished_at = Some(now);
        self.with_feed(now, |feed, now| feed.completed(f.tctx, now.0));
        self.drain(m);
    }

    fn failed(&self) -> bool {
        self.err.is_some()
    }

    fn take_error(&mut self) -> Option<TraceError> {
        self.err.take()
    }

    fn unfinished(&self, _m: &Machine) -> usize {
        !self.feed.finished() as usize
    }

    fn fraction(&self) -> Option<f64> {
        Some(self.feed.fraction())
    }

    fn feed_stats(&self) -> FeedStats {
        self.feed.stats()
    }
}

impl TraceSource {
    pub fn new(feed: Feed) -> Self {
        TraceSource { feed: Box::new(feed), wake_at: None, err: None, flushes: HashMap::new(), next_flush: 0 }
    }

    /// Call `f` on the feed at `now`; an error ends the run.
    fn with_feed(&mut self, now: Time, f: impl FnOnce(&mut Feed, Time) -> Result<(), TraceError>) {
        if let Err(e) = f(&mut self.feed, now) {
            self.err.get_or_insert(e);
        }
    }

    /// Simulated time reached a record's time: take what is due.
    fn advance(&mut self, m: &mut Machine) {
        self.with_feed(m.core.now, |f, now| f.advance(now.0));
        self.drain(m);
    }

    /// Act on what the feed produced: jobs for new contexts, arrivals submitted now, issue
    /// events, exited contexts, the next record's event.
    fn drain(&mut self, m: &mut Machine) {
        let feed = &mut self.feed;
        let (n, max) = (feed.contexts(), feed.max_jobs());
        while m.jobs.len() < n.min(max) || (n > max && m.jobs.len() == max) {
            let i = m.jobs.len();
            let name = if i < max { feed.label(i).to_string() } else { "others".to_string() };
            m.add_job(Job::for_trace(name, i));
        }
        let now = m.core.now;
        let submitted = !feed.arrivals.is_empty();
        while let Some(r) = feed.arrivals.pop_front() {
            let j = (r.ctx as usize).min(max);
            let job = &mut m.jobs[j];
            job.progress.started_at.get_or_insert(now);
            job.progress.inflight += 1;
            if r.flush {
                m.first_submit.get_or_insert(now);
                let token = self.next_flush;
                self.next_flush += 1;
                let left = m.block.members() as u32;
                self.flushes.insert(token, TraceFlush { job: j as u32, tctx: r.ctx, left, issued: now });
                m.block.flush_all(&mut m.core, token);
                continue;
            }
            job.progress.issued += 1;
            job.progress.issued_bytes += r.len as u64 * SECTOR_BYTES;
            let ctx = m.issuers.of_trace_context(r.ctx);
            let id = m.new_request(j, r.dir, r.sector, r.len, r.ctx);
            let rq =
                Request { id, sector: r.sector, len: r.len, dir: r.dir, sync: r.sync, arrival: now, ctx };
            m.block.arrive(&mut m.core, rq, j as u32);
        }
        for (c, t) in feed.ready.drain(..) {
            m.core.push(Time(t.max(now.0)), Ev::Source(c));
        }
        for c in feed.exited.drain(..) {
            if m.issuers.tells_trace_contexts() {
                m.block.context_exited(now, ContextId(c));
            }
        }
        if let Some(t) = feed.wake_at() {
            let t = Time(t.max(now.0));
            if self.wake_at.is_none_or(|e| e > t) {
                self.wake_at = Some(t);
                m.core.push(t, Ev::Source(RECORD_DUE));
            }
        }
        if submitted {
            m.block.fill_kicked(&mut m.core);
        }
    }
}

//! Executing dispatched requests: what the scheduling core hands out runs on the backend
//! (on the reader that read it, or on a worker), is timed on the model when there is one,
//! and is answered — at once, through the delay line at the model's `done`, or (a FUA
//! write on a real backend) after the next sync beside the FLUSHes. See the parent module
//! for the threads and the durability rules.

use std::io;
use std::sync::mpsc::Receiver;
use std::sync::Mutex;

use headway_disk::WriteCache;
use headway_sched::{ContextId, Dir, Time};

use super::Export;
use crate::backend::FileBackend;
use crate::core::{Answer, Batch, Held, Io, Op, OpResult, Out};
use crate::proto::*;
use crate::queued::Msg as QueuedMsg;
use crate::stats::Kind;
use crate::tracelog::Req;

pub(super) enum WorkerMsg {
    /// A dispatched request and the client requests merged into it.
    Batch(Batch),
    /// FLUSH, outside the scheduler.
    /// FLUSHes are waiting in `Export::flushes` (sent when the first one arrives).
    Flush,
    /// Shutdown: every request has been answered.
    Stop,
}

impl Export {
    /// A client request was read.
    pub(crate) fn arrive(&self, io: Io, ctx: Option<ContextId>) {
        if let Some(t) = &self.trace {
            t.queued(&Req::of(&io));
        }
        let batches = self.core.arrive(io, ctx);
        self.run(batches, self.inline);
    }

    /// FLUSH: `fdatasync` on a worker, beside the scheduled requests (see the module doc).
    pub(crate) fn flush(&self, io: Io) {
        if let Some(t) = &self.trace {
            t.queued(&Req::of(&io));
        }
        let answer = Answer {
            traced: self.trace.as_ref().map(|_| Req::of(&io)),
            reply: io.reply,
            out: Out { cookie: io.cookie, result: Ok(None), cost: 0 },
            kind: Kind::Other,
            bytes: 0,
            arrived: io.arrived,
        };
        self.after_next_sync(vec![answer]);
    }

    /// Answer `answers` once a sync that starts after now has ended (with its error, if
    /// it fails). One fdatasync answers everything waiting when it starts (it covers
    /// every write acknowledged before any of them): a client's flood of FLUSHes or FUA
    /// writes costs the others one sync, not one each.
    fn after_next_sync(&self, answers: Vec<Answer>) {
        let first = {
            let mut f = self.flushes.lock().unwrap();
            let was_empty = f.is_empty();
            f.extend(answers);
            was_empty
        };
        if first {
            let _ = self.work_tx.send(WorkerMsg::Flush);
        }
    }

    /// The scheduler's clock, for stamping arrivals.
    pub(crate) fn now(&self) -> Time {
        self.core.now()
    }

    /// Connection `id` closed, every request of it answered (whatever `--context` says).
    pub(crate) fn closed(&self, id: u32) {
        if let Some(t) = &self.trace {
            t.closed(id);
        }
    }

    /// A connection closed.
    pub(crate) fn exited(&self, ctx: ContextId) {
        let batches = self.core.exited(ctx);
        self.run(batches, false);
    }

    /// Start dispatched batches: on the workers, and the last one on this thread when
    /// `inline`.
    pub(super) fn run(&self, mut batches: Vec<Batch>, inline: bool) {
        if let (Some(t), false) = (&self.trace, batches.is_empty()) {
            t.dispatched(batches.iter().flat_map(|b| &b.ios).map(Req::of));
        }
        let mine = if inline { batches.pop() } else { None };
        for b in batches {
            let _ = self.work_tx.send(WorkerMsg::Batch(b));
        }
        if let Some(b) = mine {
            self.execute(b);
        }
    }

    /// Run a batch on the backend (and time it on the model), then complete it: at once,
    /// or through the delay line at the model's `done`.
    fn execute(&self, Batch { rq, ios, at }: Batch) {
        let trim_only = ios.iter().all(|io| matches!(io.op, Op::Trim { .. }));
        let queued = if trim_only { None } else { self.queued.lock().unwrap().clone() };
        // The model first: it times the request from its dispatch, and the real I/O
        // below takes part of that time. TRIM does not reach a disk's media. A queued
        // drive times it after (its thread decides; below).
        let done = match &self.model {
            Some(_) if queued.is_some() => None,
            Some(m) if !trim_only => {
                let acc = m.access(at, rq.sector, rq.len, rq.dir);
                tracing::trace!(
                    at = at.0,
                    sector = rq.sector,
                    len = rq.len,
                    done = acc.done.0,
                    hit = acc.cache_hit,
                    seek = acc.seek_cylinders,
                    "emulated"
                );
                // a FUA write is durable on the model once a flush after it completes
                let fua = rq.dir == Dir::Write && ios.iter().any(|io| io.op.fua());
                Some(if fua && m.write_cache() == WriteCache::Back { m.flush(acc.done) } else { acc.done })
            }
            Some(_) => Some(at),
            None => None,
        };
        let mut answers: Vec<Answer> = Vec::with_capacity(ios.len());
        let mut fua: Vec<bool> = Vec::with_capacity(ios.len());
        for io in ios {
            let traced = self.trace.as_ref().map(|_| Req::of(&io));
            let (kind, bytes) = match &io.op {
                Op::Read { len, .. } => (Kind::Read, *len as u64),
                Op::Write { data, .. } => (Kind::Write, data.len() as u64),
                _ => (Kind::Other, 0),
            };
            fua.push(io.op.fua());
            let out = Out { cookie: io.cookie, result: perform(&self.backend, io.op), cost: bytes };
            answers.push(Answer { reply: io.reply, out, kind, bytes, arrived: io.arrived, traced });
        }
        // FUA: durable before the reply. One fdatasync covers the whole batch.
        let synced = |a: &Answer, fua: bool| fua && a.out.result.is_ok();
        if self.model.is_none() && answers.iter().zip(&fua).any(|(a, &f)| synced(a, f)) {
            // A real backend: the write is done, so the scheduler's slot is given back
            // now, and the FUA replies wait for the next sync off the slot, beside the
            // FLUSHes (requests of other connections are not held behind a sync).
            let (durable, now): (Vec<_>, Vec<_>) =
                answers.into_iter().zip(fua).partition(|(a, f)| synced(a, *f));
            self.release(Held {
                rq: Some(rq),
                done: None,
                answers: now.into_iter().map(|(a, _)| a).collect(),
            });
            self.after_next_sync(durable.into_iter().map(|(a, _)| a).collect());
            return;
        }
        if answers.iter().zip(&fua).any(|(a, &f)| synced(a, f)) {
            if let Err(e) = self.backend.sync() {
                for (a, &f) in answers.iter_mut().zip(&fua) {
                    if synced(a, f) {
                        a.out.result = Err((Errno::from_io(&e), format!("sync after FUA write: {e}")));
                    }
                }
            }
        }
        if let Some(q) = queued {
            let m = self.model.as_ref().expect("a queued drive has a model");
            let flush_after = rq.dir == Dir::Write
                && m.write_cache() == WriteCache::Back
                && answers.iter().zip(&fua).any(|(_, &f)| f);
            let (sector, len, dir) = (rq.sector, rq.len, rq.dir);
            let held = Held { rq: Some(rq), done: None, answers };
            let _ = q.send(QueuedMsg::Access { at, sector, len, dir, flush_after, held });
            return;
        }
        self.hold_or_release(Held { rq: Some(rq), done, answers });
    }

    /// Release `held` at its model time through the delay line, or now without a model.
    fn hold_or_release(&self, held: Held) {
        if let Some(t) = held.done {
            let line = self.delay.lock().unwrap().clone();
            if let Some(line) = line {
                let _ = line.send((t, held));
                return;
            }
        }
        self.release(held);
    }

    /// The completion to the scheduler, then the replies to the clients. The completion
    /// goes first so the next dispatch starts (on a worker) while the replies are written,
    /// and so the scheduler has seen the completion before any request a client sends in
    /// answer to its reply.
    pub(super) fn release(&self, h: Held) {
        if let Some(rq) = &h.rq {
            let batches = self.core.complete(rq, h.done);
            self.run(batches, false);
        }
        for a in h.answers {
            let ok = a.out.result.is_ok();
            a.reply.send(a.out);
            // traced: the completion's time is the one its C line has
            let now = match (&self.trace, &a.traced) {
                (Some(t), Some(r)) => t.completed(r),
                _ => self.core.now(),
            };
            if let Some(done) = h.done {
                self.reply_lag.lock().unwrap().record(now.0.saturating_sub(done.0));
            }
            self.stats.reply(a.kind, a.bytes, ok, a.arrived, now);
        }
    }
}

/// How long after the model's `done` replies were handed to their sockets.
#[derive(Default)]
pub(crate) struct ReplyLag(headway_sched::hist::Histogram);

impl ReplyLag {
    fn record(&mut self, ns: u64) {
        self.0.record(ns);
    }
}

impl std::fmt::Display for ReplyLag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let h = &self.0;
        write!(
            f,
            "{} replies, mean {:.1} µs, p50 {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
            h.count,
            h.mean() / 1e3,
            h.percentile(50.0) as f64 / 1e3,
            h.percentile(90.0) as f64 / 1e3,
            h.percentile(99.0) as f64 / 1e3,
            if h.count == 0 { 0.0 } else { h.max as f64 / 1e3 }
        )
    }
}

pub(super) fn worker(ex: &Export, rx: &Mutex<Receiver<WorkerMsg>>) {
    loop {
        let msg = match rx.lock().unwrap().recv() {
            Ok(m) => m,
            Err(_) => return,
        };
        match msg {
            WorkerMsg::Stop => return,
            WorkerMsg::Flush => {
                let mut answers = std::mem::take(&mut *ex.flushes.lock().unwrap());
                if answers.is_empty() {
                    continue;
                }
                let synced = ex.backend.sync();
                ex.stats.flush_sync();
                if let Err(e) = synced {
                    for a in &mut answers {
                        let what = if a.kind == Kind::Write { "sync after FUA write: " } else { "" };
                        a.out.result = Err((Errno::from_io(&e), format!("{what}{e}")));
                    }
                }
                // with a model: the replies wait for the model's FLUSH CACHE (one for all)
                let queued = ex.queued.lock().unwrap().clone();
                if let Some(q) = queued {
                    let held = Held { rq: None, done: None, answers };
                    let _ = q.send(QueuedMsg::Flush { at: ex.core.now(), held });
                    continue;
                }
                let done = ex.model.as_ref().map(|m| m.flush(ex.core.now()));
                ex.hold_or_release(Held { rq: None, done, answers });
            }
            WorkerMsg::Batch(b) => ex.execute(b),
        }
    }
}

fn perform(b: &FileBackend, op: Op) -> OpResult {
    let err = |e: io::Error| (Errno::from_io(&e), e.to_string());
    match op {
        Op::Read { offset, len } => match b.read_to_vec(offset, len as usize) {
            Ok(buf) => Ok(Some((offset, buf))),
            Err(e) if e.raw_os_error() == Some(libc::ENOMEM) => {
                crate::memory::refused("a READ's data", len as usize);
                Err((Errno::NoMem, "the server has no memory for the data".into()))
            }
            Err(e) => Err(err(e)),
        },
        Op::Write { offset, data, .. } => b.write(offset, &data).map(|_| None).map_err(err),
        Op::Trim { offset, len, .. } => b.trim(offset, len as u64).map(|_| None).map_err(err),
        Op::Zero { offset, len, no_hole, .. } => {
            b.write_zeroes(offset, len as u64, !no_hole).map(|_| None).map_err(err)
        }
        Op::Flush => b.sync().map(|_| None).map_err(err),
    }
}

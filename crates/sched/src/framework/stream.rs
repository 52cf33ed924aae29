//! Stream scheduling (SS): a process-agnostic framework that turns any work-conserving
//! policy into a non-work-conserving scheduler. Paper 000 (Stream Scheduling), Section 2.1
//! and its Figure 2 pseudo-code; defaults from Section 3.
//!
//! ## The idea
//! Waiting for a request that has not arrived is judicious when
//! `wait_time(R) + service_time(R) < service_time(selected pending request)`. Without knowing
//! which process sent what, SS learns from arrival times and locations alone: a request `N`
//! that arrives after `R` completed is `R`'s *child* when
//!
//! ```text
//! N.arrival - R.completion + est(R.pos, N.pos) < R.service_time
//! ```
//!
//! where `R.service_time = est(R.pos, selected_pending.pos)` is priced when `R` completes.
//! Children chain into *streams*; only the newest member and the stream's length are kept.
//! A stream of length >= `stream_threshold` is *established*: when its newest member
//! completes, the device is kept idle until the child arrives (then dispatched at once) or
//! until `R.deadline = R.completion + R.service_time`, after which no child can qualify.
//!
//! ## The procedures (Figure 2)
//! - completion of `R`: price the policy's choice, insert `R` into the *parent-to-be* queue
//!   (sorted by deadline, expired entries dropped), wait if `R`'s stream is established.
//! - arrival of `N`: the first parent (in deadline order) for which the child test holds
//!   adopts `N` (`N.stream_size = R.stream_size + 1`, `R` leaves the queue); if we were waiting
//!   for `R`, `N` is dispatched next. Otherwise `N.stream_size = 1`.
//! - timer expiry: a stream at least `(1 + tolerance_factor) x stream_threshold` long gets a
//!   *second chance*: the wait is extended by `tolerance_factor x service_time`, the service
//!   time scaled by `1 + tolerance_factor`, and the stream size reset to the threshold.
//!   Otherwise the parent leaves the queue and the policy's choice is dispatched.
//!
//! ## What the pseudo-code leaves out, and what headway does
//! - `stream_time_slice`: once the device has served one stream for longer than the slice,
//!   SS dispatches the policy's choice instead of waiting — only when other requests are
//!   pending. The slice starts when SS first waits for a stream after serving another.
//! - The wrapped policy's urgent requests (deadline's expired FIFO, aged requests) are
//!   dispatched immediately: SS never waits while the policy reports `urgent`, and a wait
//!   ends when the policy's next urgency time comes.
//! - Nothing pending when `R` completes: the alternative is unknown, so `R.service_time` is
//!   provisionally the cost of an arbitrary request, `est` over a third of the disk (the
//!   mean distance between two uniform random positions); waiting on an idle device costs
//!   nothing, and a far request arriving later cannot pass for a child. (Tightening the
//!   bound when a non-child arrives would change nothing: a request fails the child test
//!   exactly when `gap + est` already exceeds the bound.)
//! - Stream formation never depends on the scheduling decision, only on arrivals and
//!   locations (000 Section 2.1): the child test runs whether or not SS waited.
//! - Never process identity: `Request::ctx` is not read anywhere in this module.
//! - A drive that queues commands (depth > 1, 000 Section 3.2): the head will be at the
//!   end of the request last put into the device queue, so the decision is taken for that
//!   request when it enters the queue: if it belongs to an established stream, no other
//!   pending request enters the device queue behind it; when it completes, SS waits for its
//!   child exactly as with one command at a time. Streams still form from completions and
//!   arrivals only (formation and scheduling stay independent).
//!
//! ## Tunables
//! | name | unit | default | trade-off |
//! |---|---|---|---|
//! | `stream_threshold` | requests | 4 | lower waits sooner, risks waiting on chance locality |
//! | `tolerance_factor` | factor | 0.5 | second chance for long streams; larger = longer fruitless waits |
//! | `stream_time_slice` | time (ms) | 124 ms | longer = fewer long seeks, longer waits for others (Fig. 7) |
//!
//! Invariants: every request arriving is queued in the policy or merged into a queued one;
//! at most one parent is waited for; the parent queue holds only unexpired parents after
//! each pass and is sorted by deadline.

use crate::device::DeviceView;
use crate::idmap::IdMap;
use crate::params::{ParamError, Settings, TimeUnit, Tunable, Unit};
use crate::policy::Policy;
use crate::request::{ContextId, ReqId, Request, Sector};
use crate::scheduler::{Arrival, Decision, Scheduler};
use crate::time::{Duration, Time};

/// Default stream threshold, requests (000 Section 3: 4).
pub const STREAM_THRESHOLD: u32 = 4;
/// Default tolerance factor (000 Section 2.1: 50%).
pub const TOLERANCE_FACTOR: f64 = 0.5;
/// Default stream time slice (000 Section 3: 124 ms, as Linux AS).
pub const STREAM_TIME_SLICE: Duration = Duration::from_millis(124);

pub const T_STREAM_THRESHOLD: Tunable = Tunable {
    name: "stream_threshold",
    unit: Unit::Count { what: "requests", min: 1, max: 1 << 20, default: 4 },
    doc: "stream length at which SS starts waiting for the next member",
};
pub const T_TOLERANCE_FACTOR: Tunable = Tunable {
    name: "tolerance_factor",
    unit: Unit::Factor { min: 0.0, max: 100.0, default: 0.5 },
    doc: "second chance: streams longer than (1+f)*threshold wait f*service_time more",
};
pub const T_STREAM_TIME_SLICE: Tunable = Tunable {
    name: "stream_time_slice",
    unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(124) },
    doc: "longest uninterrupted service of one stream while others are pending",
};

pub const TUNABLES: &[Tunable] = &[T_STREAM_THRESHOLD, T_TOLERANCE_FACTOR, T_STREAM_TIME_SLICE];

/// Stream scheduling settings.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamParams {
    pub stream_threshold: u32,
    pub tolerance_factor: f64,
    pub stream_time_slice: Duration,
}

impl Default for StreamParams {
    fn default() -> Self {
        StreamParams {
            stream_threshold: STREAM_THRESHOLD,
            tolerance_factor: TOLERANCE_FACTOR,
            stream_time_slice: STREAM_TIME_SLICE,
        }
    }
}

impl StreamParams {
    pub fn from_settings(s: &mut Settings) -> Result<Self, ParamError> {
        Ok(StreamParams {
            stream_threshold: s.count(&T_STREAM_THRESHOLD)? as u32,
            tolerance_factor: s.factor(&T_TOLERANCE_FACTOR)?,
            stream_time_slice: s.time(&T_STREAM_TIME_SLICE)?,
        })
    }

    /// The tolerance factor in thousandths, as the arithmetic uses it (the kernel's
    /// `stream` elevator stores it so: integer arithmetic only, and the same decisions).
    pub(crate) fn tolerance_milli(&self) -> u64 {
        (self.tolerance_factor * 1000.0).round() as u64
    }

    /// Stream size that earns a second chance: `ceil((1 + tolerance_factor) * threshold)`.
    pub(crate) fn second_chance_size(&self) -> u32 {
        ((1000 + self.tolerance_milli()) * self.stream_threshold as u64).div_ceil(1000) as u32
    }

    /// A second chance for a parent priced `service_time` (Figure 2's timer procedure): the
    /// wait is extended by `tolerance_factor x service_time`, and the parent's service time
    /// becomes `(1 + tolerance_factor) x service_time`. Returns (extension, new service time).
    pub(crate) fn second_chance(&self, service_time: Duration) -> (Duration, Duration) {
        let tf = self.tolerance_milli();
        (service_time.mul_ratio(tf, 1000), service_time.mul_ratio(1000 + tf, 1000))
    }
}

/// The cost of an arbitrary request, the alternative's price when nothing is pending: `est`
/// over a third of the device (the mean distance between two uniform random positions).
pub(crate) fn arbitrary_cost(dev: &dyn DeviceView) -> Duration {
    dev.estimate(0, dev.capacity() / 3)
}

/// A request's stream membership, decided at arrival.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Tag {
    size: u32,
    stream: u64,
}

/// A completed request that may still get a child.
#[derive(Clone, Debug)]
struct Parent {
    key: u64,
    pos: Sector,
    completion: Time,
    service_time: Duration,
    deadline: Time,
    size: u32,
    stream: u64,
}

/// What SS is waiting for.
#[derive(Clone, Debug)]
struct Wait {
    parent: u64,
    until: Time,
}

/// Counters for reports and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Times SS kept the device idle for a stream.
    pub waits: u64,
    /// Waits that ended with the child dispatched.
    pub children_dispatched: u64,
    /// Waits that ended at the parent's deadline.
    pub timeouts: u64,
    /// Second chances given.
    pub second_chances: u64,
    /// Waits cut short (or skipped) by the time slice.
    pub slice_expiries: u64,
    /// Waits cut short (or skipped) by the policy's urgent requests.
    pub urgent_preemptions: u64,
}

/// Stream scheduling around policy `P`.
pub struct Stream<P: Policy> {
    policy: P,
    params: StreamParams,
    max_sectors: u32,
    /// Parent-to-be queue, sorted by deadline (small: expired parents leave).
    parents: Vec<Parent>,
    tags: IdMap<Tag>,
    wait: Option<Wait>,
    /// A child that ended a wait: dispatch it next.
    child_ready: Option<ReqId>,
    /// The stream being served and when its slice began.
    slice: Option<(u64, Time)>,
    next_stream: u64,
    next_key: u64,
    stats: StreamStats,
    /// The device queues commands (000 Section 3.2): decide on the request last put into
    /// the device queue.
    tail_mode: bool,
    /// Tail mode: an established stream's request is in the device; nothing else goes in
    /// until it completes (and then its child is waited for as usual).
    hold: Option<ReqId>,
    /// The request last put into the device queue (the tail).
    last_dispatched: Option<ReqId>,
}

impl<P: Policy> Stream<P> {
    pub fn new(policy: P, params: StreamParams, max_sectors: u32) -> Self {
        Stream {
            policy,
            params,
            max_sectors,
            parents: Vec::with_capacity(16),
            tags: IdMap::default(),
            wait: None,
            child_ready: None,
            slice: None,
            next_stream: 0,
            next_key: 0,
            stats: StreamStats::default(),
            tail_mode: false,
            hold: None,
            last_dispatched: None,
        }
    }

    pub fn stats(&self) -> &StreamStats {
        &self.stats
    }

    pub fn params(&self) -> &StreamParams {
        &self.params
    }

    /// Is SS currently holding the device idle for a stream?
    pub fn is_waiting(&self) -> bool {
        self.wait.is_some()
    }

    fn insert_parent(&mut self, p: Parent) {
        let at = self.parents.partition_point(|q| q.deadline <= p.deadline);
        self.parents.insert(at, p);
    }

    fn drop_expired(&mut self, now: Time) {
        // The waited-for parent is kept until its timer fires (second chance).
        let waited = self.wait.as_ref().map(|w| w.parent);
        self.parents.retain(|p| p.deadline >= now || Some(p.key) == waited);
    }

    fn parent_index(&self, key: u64) -> Option<usize> {
        self.parents.iter().position(|p| p.key == key)
    }

    /// The wait's timer fired: second chance or give up (Figure 2, timer procedure).
    fn timer_expired(&mut self, now: Time) {
        let Some(w) = self.wait.take() else { return };
        let Some(i) = self.parent_index(w.parent) else { return };
        // A tolerance of 0 gives no second chance (it would extend the wait by nothing,
        // forever).
        if self.params.tolerance_milli() > 0 && self.parents[i].size >= self.params.second_chance_size() {
            let mut p = self.parents.remove(i);
            let extra;
            (extra, p.service_time) = self.params.second_chance(p.service_time);
            p.deadline = p.completion + p.service_time;
            p.size = self.params.stream_threshold;
            let until = (now + extra).max(p.deadline);
            self.wait = Some(Wait { parent: p.key, until });
            self.insert_parent(p);
            self.stats.second_chances += 1;
        } else {
            self.parents.remove(i);
            self.stats.timeouts += 1;
        }
    }

    fn slice_expired(&self, now: Time, stream: u64) -> bool {
        match self.slice {
            Some((s, start)) if s == stream => now.saturating_since(start) >= self.params.stream_time_slice,
            _ => false,
        }
    }

    fn dispatch_selected(&mut self, now: Time, dev: &dyn DeviceView) -> Decision {
        match self.policy.select(now, dev) {
            Some(id) => Decision::Dispatch(self.policy.take(now, id)),
            None => Decision::Idle,
        }
    }
}

impl<P: Policy> Scheduler for Stream<P> {
    fn name(&self) -> String {
        format!("stream:{}", self.policy.name())
    }

    fn arrive(&mut self, now: Time, rq: Request, dev: &dyn DeviceView) -> Arrival {
        self.drop_expired(now);
        // Child test against parents in deadline order (Figure 2, arrival procedure).
        let mut tag = None;
        let mut adopted = None;
        for (i, p) in self.parents.iter().enumerate() {
            let gap = now.saturating_since(p.completion);
            if gap + dev.estimate(p.pos, rq.sector) < p.service_time {
                tag = Some(Tag { size: p.size.saturating_add(1), stream: p.stream });
                adopted = Some(i);
                break;
            }
        }
        if let Some(i) = adopted {
            let p = self.parents.remove(i);
            if self.wait.as_ref().is_some_and(|w| w.parent == p.key) {
                // We were waiting for exactly this: dispatch it next.
                self.wait = None;
                self.child_ready = Some(rq.id);
                self.stats.children_dispatched += 1;
            }
        }
        let tag = tag.unwrap_or_else(|| {
            self.next_stream += 1;
            Tag { size: 1, stream: self.next_stream }
        });
        if let Some(into) = self.policy.merge(now, &rq, self.max_sectors) {
            // The merged extent carries the longer stream.
            let t = self.tags.entry(into).or_insert(tag);
            if tag.size > t.size {
                *t = tag;
            }
            if self.child_ready == Some(rq.id) {
                self.child_ready = Some(into);
            }
            return Arrival::Merged { into };
        }
        self.tags.insert(rq.id, tag);
        self.policy.add(now, rq);
        Arrival::Queued
    }

    fn decide(&mut self, now: Time, dev: &dyn DeviceView) -> Decision {
        let d = self.decide_inner(now, dev);
        if let Decision::Dispatch(rq) = &d {
            // Serving another stream ends the current stream's slice.
            let tag = self.tags.get(&rq.id).copied();
            if self.slice.is_some_and(|(s, _)| Some(s) != tag.map(|t| t.stream)) {
                self.slice = None;
            }
            self.last_dispatched = Some(rq.id);
            if self.tail_mode && tag.is_some_and(|t| t.size >= self.params.stream_threshold) {
                // The queue's tail belongs to an established stream: the head will be where
                // it ends, so nothing else enters the device queue until its child comes.
                self.hold = Some(rq.id);
            }
        }
        d
    }

    fn completed(&mut self, now: Time, rq: &Request, dev: &dyn DeviceView) {
        self.policy.completed(now, rq);
        let tag = self.tags.remove(&rq.id).unwrap_or(Tag { size: 1, stream: 0 });
        // With a queueing drive only the device queue's tail decides (000 Section 3.2): a
        // request that completes from the middle of the queue still becomes a parent (streams
        // form from completions and arrivals alone) but starts no wait.
        let decides = !self.tail_mode || self.hold == Some(rq.id) || self.last_dispatched == Some(rq.id);
        if self.hold == Some(rq.id) {
            self.hold = None;
        }
        if decides {
            // A completion while waiting (a request dispatched earlier) ends the old wait:
            // the newest completed request is the one that decides now.
            self.wait = None;
        }
        self.become_parent(now, rq.end(), tag, dev, decides);
    }

    fn set_device_queue_depth(&mut self, depth: u32) {
        self.tail_mode = depth > 1;
    }

    fn set_weight(&mut self, ctx: ContextId, weight: u32) {
        self.policy.set_weight(ctx, weight)
    }

    /// Passed on, never read here: stream scheduling stays process-agnostic; a policy
    /// (`stream:pclock`) may tag by class.
    fn set_qos(&mut self, ctx: ContextId, qos: crate::qos::Qos) {
        self.policy.set_qos(ctx, qos)
    }
    fn set_ioprio(&mut self, ctx: ContextId, prio: crate::IoPrio) {
        self.policy.set_ioprio(ctx, prio)
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        let s = &self.stats;
        vec![
            ("waits", s.waits),
            ("children_dispatched", s.children_dispatched),
            ("timeouts", s.timeouts),
            ("second_chances", s.second_chances),
            ("slice_expiries", s.slice_expiries),
            ("urgent_preemptions", s.urgent_preemptions),
        ]
    }

    fn pending(&self) -> usize {
        self.policy.len()
    }
}

impl<P: Policy> Stream<P> {
    fn decide_inner(&mut self, now: Time, dev: &dyn DeviceView) -> Decision {
        if let Some(id) = self.child_ready.take() {
            if self.policy.get(id).is_some() {
                return Decision::Dispatch(self.policy.take(now, id));
            }
        }
        if let Some(held) = self.hold {
            let pending = !self.policy.is_empty();
            let stream = self.tags.get(&held).map(|t| t.stream);
            if pending && self.policy.urgent(now) {
                self.hold = None;
                self.stats.urgent_preemptions += 1;
            } else if pending && stream.is_some_and(|s| self.slice_expired(now, s)) {
                self.hold = None;
                self.slice = None;
                self.stats.slice_expiries += 1;
            } else if !pending {
                // Nothing to hold back: the held request's completion or an arrival asks
                // again (a timer here would fire at once once the slice has run out).
                return Decision::Idle;
            } else {
                // The held request's completion, an arrival or this re-check (the policy's
                // next urgency, the slice's end) will ask again.
                let mut until = now + dev.estimate(0, dev.capacity());
                if let Some(t) = self.policy.next_urgent_at() {
                    until = until.min(t.max(now));
                }
                if let Some((_, start)) = self.slice {
                    until = until.min((start + self.params.stream_time_slice).max(now));
                }
                return Decision::WaitUntil(until);
            }
        }
        if let Some(w) = &self.wait {
            if now >= w.until {
                self.timer_expired(now);
            }
        }
        let Some(w) = self.wait.clone() else {
            return self.dispatch_selected(now, dev);
        };
        let pending = !self.policy.is_empty();
        if pending && self.policy.urgent(now) {
            self.wait = None;
            self.stats.urgent_preemptions += 1;
            return self.dispatch_selected(now, dev);
        }
        let stream = self.parent_index(w.parent).map(|i| self.parents[i].stream);
        if pending && stream.is_some_and(|s| self.slice_expired(now, s)) {
            self.wait = None;
            self.slice = None;
            self.stats.slice_expiries += 1;
            return self.dispatch_selected(now, dev);
        }
        let mut until = w.until;
        if pending {
            if let Some(t) = self.policy.next_urgent_at() {
                until = until.min(t.max(now));
            }
            if let Some((_, start)) = self.slice {
                until = until.min(start + self.params.stream_time_slice);
            }
        }
        Decision::WaitUntil(until.max(now))
    }

    /// Figure 2's completion procedure for a request ending at `pos` (completed, or put
    /// into the device queue in tail mode) with stream membership `tag`.
    fn become_parent(&mut self, now: Time, pos: Sector, tag: Tag, dev: &dyn DeviceView, may_wait: bool) {
        self.drop_expired(now);
        let service_time = match self.policy.select(now, dev) {
            Some(id) => dev.estimate(pos, self.policy.get(id).expect("selected request is queued").sector),
            None => arbitrary_cost(dev),
        };
        self.next_key += 1;
        let p = Parent {
            key: self.next_key,
            pos,
            completion: now,
            service_time,
            deadline: now + service_time,
            size: tag.size,
            stream: tag.stream,
        };
        if may_wait && p.size >= self.params.stream_threshold {
            let pending = !self.policy.is_empty();
            if pending && self.policy.urgent(now) {
                self.stats.urgent_preemptions += 1;
            } else if pending && self.slice_expired(now, p.stream) {
                self.slice = None;
                self.stats.slice_expiries += 1;
            } else {
                if self.slice.is_none_or(|(s, _)| s != p.stream) {
                    self.slice = Some((p.stream, now));
                }
                self.wait = Some(Wait { parent: p.key, until: p.deadline });
                self.stats.waits += 1;
            }
        }
        self.insert_parent(p);
    }
}

#[cfg(test)]
mod tests;

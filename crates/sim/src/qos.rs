//! QoS accounting: how each job with a QoS class (`headway_rate`, `headway_delay`,
//! `headway_burst`) fared against it, whatever the scheduler — the report's `jobs[].qos`.
//!
//! - **Deadline** of a request (seeds/004, pClock): its finish tag `F = S + delta`, from the
//!   job's own token bucket ([`headway_sched::qos::Bucket`], Figure 2) at submission. For a
//!   job within its rate `F = submission + delay`; a job running ahead of its rate gets later
//!   deadlines (`S = max(MaxS, t)`), as the schedulers' tags do. A **deadline miss** is a
//!   request completing after its `F`. The reference bucket is per job clone, so jobs sharing
//!   a `headway_process` are priced separately here though a scheduler sees one issuer.
//! - **Achieved rate**: what the job completed (bytes for a byte rate, requests for an IOPS
//!   rate) over its runtime (first submission to last completion), and the same per whole
//!   second of that runtime (`rate_per_second`; the last, partial second is left out).
//! - **Latency**: submission to completion of every request of the job (reads and writes).
//!
//! Buffered jobs are priced at the requests the job made, not at the page-cache fills.

use headway_sched::hist::Histogram;
use headway_sched::idmap::IdMap;
use headway_sched::qos::Bucket;
use headway_sched::{Dir, Qos, Rate, ReqId, Request, Time};

use crate::report::{Clat, QosReport};

/// One job's QoS bookkeeping.
#[derive(Clone)]
pub struct QosStats {
    qos: Qos,
    bucket: Bucket,
    /// Deadlines of the job's requests in flight.
    deadline: IdMap<Time>,
    misses: u64,
    lat: Histogram,
    /// Completed units (bytes or requests) per second since the job started.
    per_sec: Vec<u64>,
    units: u64,
}

impl QosStats {
    pub fn new(qos: Qos) -> Self {
        QosStats {
            qos,
            bucket: Bucket::new(qos),
            deadline: IdMap::default(),
            misses: 0,
            lat: Histogram::default(),
            per_sec: Vec::new(),
            units: 0,
        }
    }

    /// The job submits request `id` of `bytes` at `now`.
    pub fn submitted(&mut self, now: Time, id: ReqId, bytes: u32, dir: Dir) {
        let sectors = (bytes as u64).div_ceil(headway_sched::SECTOR_BYTES).max(1) as u32;
        let rq = Request { id, sector: 0, len: sectors, dir, sync: true, arrival: now, ctx: None };
        let tags = self.bucket.tag(now, &rq);
        self.deadline.insert(id, tags.finish);
    }

    /// Request `id` (`bytes`, submitted at `submit`) of a job started at `start` completed.
    pub fn completed(&mut self, now: Time, id: ReqId, submit: Time, bytes: u32, start: Time) {
        if let Some(f) = self.deadline.remove(&id) {
            if now > f {
                self.misses += 1;
            }
        }
        self.lat.record(now.0 - submit.0);
        let units = match self.qos.rate {
            Rate::Bytes(_) => bytes as u64,
            Rate::Iops(_) => 1,
        };
        self.units += units;
        let sec = (now.saturating_since(start).0 / 1_000_000_000) as usize;
        if self.per_sec.len() <= sec {
            self.per_sec.resize(sec + 1, 0);
        }
        self.per_sec[sec] += units;
    }

    /// The report section, for a job that ran `runtime_ns`.
    pub fn report(&self, runtime_ns: u64) -> QosReport {
        let target = self.qos.rate.per_sec();
        let achieved = if runtime_ns == 0 { 0.0 } else { self.units as f64 * 1e9 / runtime_ns as f64 };
        let whole = (runtime_ns / 1_000_000_000) as usize;
        let mut per_second: Vec<u64> = self.per_sec.iter().copied().take(whole).collect();
        per_second.resize(whole, 0);
        QosReport {
            rate_target: target,
            rate_unit: self.qos.rate.unit().to_string(),
            rate_achieved: achieved,
            rate_fraction: achieved / target as f64,
            rate_per_second: per_second,
            delay_ns: self.qos.delay.0,
            burst: self.qos.burst,
            requests: self.lat.count,
            deadline_misses: self.misses,
            latency_ns: Clat::from_hist(&self.lat),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headway_sched::Duration;

    #[test]
    fn misses_rates_and_seconds() {
        let qos = Qos { rate: Rate::Iops(10), delay: Duration::from_millis(100), burst: 1 };
        let mut q = QosStats::new(qos);
        let ms = |m: u64| Time(m * 1_000_000);
        // one request per 100 ms for 2.5 s; every fifth one takes 150 ms
        for i in 0..25u64 {
            let at = ms(i * 100);
            q.submitted(at, ReqId(i), 4096, Dir::Read);
            let took = if i % 5 == 0 { 150 } else { 10 };
            q.completed(ms(i * 100 + took), ReqId(i), at, 4096, Time(0));
        }
        let r = q.report(2_510_000_000);
        assert_eq!(r.deadline_misses, 5);
        assert_eq!(r.requests, 25);
        assert_eq!(r.rate_per_second, vec![10, 10]);
        assert!((r.rate_achieved - 25.0 / 2.51).abs() < 1e-9);
        assert_eq!(r.rate_unit, "iops");
    }
}

//! The closed-loop replay of a validation trace on a fresh drive: request `i + 1` arrives
//! its `next_interarrival` after request `i` completes, the first at time 0 on an idle
//! drive (DiskSim's `validate` trace format). Besides each simulated service time it keeps
//! what the model did (cache hit, cylinders sought) and where each request starts relative
//! to the previous one, for the report's breakdowns.

use headway_disk::{DiskSpec, Hdd};
use headway_sched::{Duration, Time};

use crate::error::ValidateError;
use crate::trace::TraceRequest;

/// What the model did with each request.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// Simulated service time per request, in trace order.
    pub service: Vec<Duration>,
    /// The model served it from its cache (or took it into its buffer, for fast writes).
    pub cache_hit: Vec<bool>,
    /// Cylinders the arm moved for it (0 for hits and head switches).
    pub seek_cylinders: Vec<u32>,
    /// The request starts on the cylinder holding the previous request's last sector
    /// (false for the first).
    pub same_cylinder: Vec<bool>,
}

/// Replay `trace` on a fresh drive, closed loop, as DiskSim's validation does.
pub fn replay(spec: &DiskSpec, trace: &[TraceRequest]) -> Result<Replay, ValidateError> {
    let mut hdd =
        Hdd::try_new(spec.clone()).map_err(|err| ValidateError::Drive { drive: spec.name.clone(), err })?;
    let cap = hdd.capacity();
    let mut arrival = Time::ZERO;
    let mut out = Replay {
        service: Vec::with_capacity(trace.len()),
        cache_hit: Vec::with_capacity(trace.len()),
        seek_cylinders: Vec::with_capacity(trace.len()),
        same_cylinder: Vec::with_capacity(trace.len()),
    };
    let mut prev_cylinder = None;
    for (i, r) in trace.iter().enumerate() {
        if r.sector + r.sectors as u64 > cap {
            return Err(ValidateError::Beyond {
                request: i + 1,
                sector: r.sector,
                sectors: r.sectors,
                capacity: cap,
            });
        }
        let geo = hdd.geometry();
        out.same_cylinder.push(prev_cylinder == Some(geo.locate(r.sector).cylinder));
        prev_cylinder = Some(geo.locate(r.sector + r.sectors as u64 - 1).cylinder);
        let a = hdd.access(arrival, r.sector, r.sectors, r.dir);
        out.service.push(a.done - arrival);
        out.cache_hit.push(a.cache_hit);
        out.seek_cylinders.push(a.seek_cylinders);
        arrival = a.done + r.next_interarrival;
    }
    Ok(out)
}

//! # headway-sched — the scheduling core
//!
//! Disk I/O scheduling as pure decision logic: work-conserving [`policy`]s (noop, deadline,
//! cscan, sptf, aged-sptf) and the non-work-conserving [`framework`]s that wrap any of them
//! (stream scheduling). This crate never reads a clock, does no I/O, starts no thread and
//! draws no random number: time comes in as an argument ([`Time`], integer nanoseconds) and
//! decisions go out as values ([`Decision`]). The simulator and the block server are two
//! drivers of the same objects.
//!
//! ```
//! use headway_sched::{build, Settings, Decision, Request, ReqId, Dir, Time, ServiceCurve, CurveView};
//! let mut s = build("stream:deadline", &mut Settings::new()).unwrap();
//! let curve = ServiceCurve::from_knots(vec![(0, 200_000), (1 << 30, 15_000_000)]);
//! let dev = CurveView { head: 0, curve: &curve, capacity: 1 << 31 };
//! let rq = Request { id: ReqId(1), sector: 2048, len: 8, dir: Dir::Read, sync: true,
//!                    arrival: Time(0), ctx: None };
//! s.arrive(Time(0), rq, &dev);
//! assert!(matches!(s.decide(Time(0), &dev), Decision::Dispatch(r) if r.id == ReqId(1)));
//! ```

pub mod device;
pub mod error;
pub mod estimate;
pub mod framework;
pub mod hist;
pub mod idmap;
pub mod ioprio;
pub mod linux;
pub mod params;
pub mod policy;
pub mod qos;
pub mod registry;
pub mod request;
pub mod scheduler;
pub mod table;
pub mod time;
pub mod units;

#[cfg(test)]
pub(crate) mod testutil;

pub use device::{CurveView, DeviceView};
pub use error::{BadChoice, BuildError};
pub use estimate::ServiceCurve;
pub use ioprio::{IoClass, IoPrio};
pub use params::{ParamError, Settings, Tunable, MAX_SECTORS_KB};
pub use policy::Policy;
pub use qos::{Qos, Rate};
pub use registry::{build, build_array, scheduler_names, tunables};
pub use request::{ContextId, Dir, ReqId, Request, Sector, SECTOR_BYTES};
pub use scheduler::{ArrayHooks, ArraySchedulers, Arrival, Decision, Scheduler, WorkConserving};
pub use time::{Duration, Time};

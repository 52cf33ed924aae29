//! Scheduler names and construction: the one place that maps `stream:deadline` to objects.
//!
//! Names: a policy (`noop`, `deadline`, `cscan`, `sptf`, `aged-sptf`, `stride`) is a
//! work-conserving scheduler; `FRAMEWORK:POLICY` wraps a policy in a non-work-conserving
//! framework (`stream:cscan`, `antic:sptf`, `antic-combo:stride`); a bare framework name
//! uses its default policy (`stream` is `stream:deadline`, as in 000 Section 3; `antic` is
//! `antic:aged-sptf`, as in 001 Section 4). The Linux schedulers `as` and `cfq` stand alone,
//! and so does `htbs` (004: pClock's tags with an active application; `pclock` is a policy,
//! so `stream:pclock` wraps it).
//!
//! Disk arrays ([`build_array`]): every member gets its own instance of the named
//! scheduler, except `stream`, which becomes the coordinated array stream scheduler
//! ([`crate::framework::array_stream`], 000 Section 2.2: one state shared by the members).
//! `stream-local` (`stream-local:POLICY`) is single-disk stream scheduling run on each
//! member without coordination, the baseline it is compared with; on one disk it is
//! exactly `stream`.

use crate::device::DeviceView;
use crate::framework::antic;
use crate::framework::array_stream::{array_stream, ArrayShape};
use crate::framework::stream::{Stream, StreamParams};
use crate::params::{ParamError, Settings, Tunable, Unit};
use crate::policy::{self, Policy};
use crate::request::{ContextId, ReqId, Request};
use crate::scheduler::{ArraySchedulers, Scheduler, WorkConserving};
use crate::time::Time;

/// Why a scheduler could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    #[error("unknown scheduler `{name}` (known: {known})")]
    UnknownScheduler { name: String, known: String },
    #[error("unknown policy `{policy}` in `{name}` (known policies: {known})")]
    UnknownPolicy { name: String, policy: String, known: String },
    #[error(transparent)]
    Param(#[from] ParamError),
}

/// Work-conserving policies, by name.
pub const POLICIES: &[&str] =
    &["noop", "deadline", "mq-deadline", "cscan", "sptf", "aged-sptf", "stride", "pclock"];
/// Frameworks, with the policy a bare name wraps.
pub const FRAMEWORKS: &[(&str, &str)] = &[
    ("stream", "deadline"),
    ("stream-local", "deadline"),
    ("antic", antic::DEFAULT_POLICY),
    ("antic-combo", antic::COMBO_DEFAULT_POLICY),
];

/// Every name `build` accepts (bare frameworks and `framework:policy` pairs included).
pub fn scheduler_names() -> Vec<String> {
    let mut v: Vec<String> = POLICIES.iter().map(|s| s.to_string()).collect();
    for (fw, _) in FRAMEWORKS {
        v.push(fw.to_string());
        let pols = match *fw {
            "antic" => antic::POLICIES,
            "antic-combo" => antic::COMBO_POLICIES,
            _ => POLICIES,
        };
        v.extend(pols.iter().map(|p| format!("{fw}:{p}")));
    }
    v.push("as".to_string());
    v.push("cfq".to_string());
    v.push("htbs".to_string());
    v
}

/// Driver merge bound, Linux's name and default.
pub const MAX_SECTORS_KB: Tunable = Tunable {
    name: "max_sectors_kb",
    unit: Unit::Count("KiB"),
    default: "512",
    scope: "all",
    doc: "largest request a merge may build",
};

/// The whole tunable table: what `headway tunables` prints and `--set` accepts.
pub fn tunables() -> Vec<Tunable> {
    let mut v = vec![MAX_SECTORS_KB];
    v.extend_from_slice(policy::TUNABLES);
    v.extend_from_slice(crate::framework::stream::TUNABLES);
    v.extend_from_slice(antic::TUNABLES);
    v.extend_from_slice(crate::linux::as_sched::TUNABLES);
    v.extend_from_slice(crate::linux::cfq::TUNABLES);
    v.extend_from_slice(crate::framework::htbs::TUNABLES);
    v
}

fn known_policies() -> String {
    POLICIES.join(", ")
}

/// Build a policy by name, reading its tunables from `settings`.
pub fn build_policy(name: &str, settings: &mut Settings) -> Result<Box<dyn Policy>, BuildError> {
    policy::build(name, settings)?.ok_or_else(|| BuildError::UnknownPolicy {
        name: name.to_string(),
        policy: name.to_string(),
        known: known_policies(),
    })
}

/// Build a scheduler by name. Settings that the scheduler does not read are left unread
/// (the caller reports them with [`Settings::unused`] after building all it needs).
pub fn build(name: &str, settings: &mut Settings) -> Result<Box<dyn Scheduler>, BuildError> {
    match name {
        "as" => return crate::linux::as_sched::build(settings),
        "cfq" => return crate::linux::cfq::build(settings),
        "htbs" => return crate::framework::htbs::build(settings),
        _ => {}
    }
    let max_kb = settings.count(&MAX_SECTORS_KB, 4, 1 << 20)?;
    let max_sectors = (max_kb * 2) as u32;
    let (fw, pol) = match name.split_once(':') {
        Some((fw, pol)) => (Some(fw), pol),
        None => match FRAMEWORKS.iter().find(|f| f.0 == name) {
            Some((fw, pol)) => (Some(*fw), *pol),
            None => (None, name),
        },
    };
    if let Some(fw @ ("antic" | "antic-combo")) = fw {
        return antic::build(pol, fw == "antic-combo", max_sectors, settings);
    }
    let policy = match policy::build(pol, settings)? {
        Some(p) => p,
        None if fw.is_none() => {
            return Err(BuildError::UnknownScheduler {
                name: name.to_string(),
                known: scheduler_names().join(", "),
            })
        }
        None => {
            return Err(BuildError::UnknownPolicy {
                name: name.to_string(),
                policy: pol.to_string(),
                known: known_policies(),
            })
        }
    };
    match fw {
        None => Ok(Box::new(WorkConserving::new(policy, max_sectors))),
        Some("stream") => {
            let params = StreamParams::from_settings(settings)?;
            Ok(Box::new(Stream::new(policy, params, max_sectors)))
        }
        Some("stream-local") => {
            let params = StreamParams::from_settings(settings)?;
            let inner = Box::new(Stream::new(policy, params, max_sectors));
            Ok(Box::new(Renamed { name: format!("stream-local:{pol}"), inner }))
        }
        Some(other) => Err(BuildError::UnknownScheduler {
            name: format!("{other}:{pol}"),
            known: scheduler_names().join(", "),
        }),
    }
}

/// The schedulers of a disk array of `shape` running scheduler `name`: the coordinated
/// array stream scheduler for `stream` (`stream:POLICY`) on two or more members, one
/// independent instance per member otherwise ([module docs](self)).
pub fn build_array(
    name: &str,
    settings: &mut Settings,
    shape: ArrayShape,
) -> Result<ArraySchedulers, BuildError> {
    let n = shape.members.max(1) as usize;
    let stream_policy = match name.split_once(':') {
        Some(("stream", pol)) => Some(pol),
        None if name == "stream" => Some(FRAMEWORKS[0].1),
        _ => None,
    };
    if let (Some(pol), true) = (stream_policy, n > 1) {
        let max_sectors = (settings.count(&MAX_SECTORS_KB, 4, 1 << 20)? * 2) as u32;
        let params = StreamParams::from_settings(settings)?;
        let mut policies = Vec::with_capacity(n);
        for _ in 0..n {
            match policy::build(pol, settings)? {
                Some(p) => policies.push(p),
                None => {
                    return Err(BuildError::UnknownPolicy {
                        name: name.to_string(),
                        policy: pol.to_string(),
                        known: known_policies(),
                    })
                }
            }
        }
        return Ok(array_stream(policies, shape, params, max_sectors));
    }
    let members = (0..n).map(|_| build(name, settings)).collect::<Result<Vec<_>, _>>()?;
    Ok(ArraySchedulers { members, hooks: None })
}

/// A scheduler under another name (`stream-local`: [module docs](self)).
struct Renamed {
    name: String,
    inner: Box<dyn Scheduler>,
}

impl Scheduler for Renamed {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn arrive(&mut self, now: Time, rq: Request, dev: &dyn DeviceView) -> crate::scheduler::Arrival {
        self.inner.arrive(now, rq, dev)
    }
    fn decide(&mut self, now: Time, dev: &dyn DeviceView) -> crate::scheduler::Decision {
        self.inner.decide(now, dev)
    }
    fn dispatched_to_device(&mut self, now: Time, rq: &Request) {
        self.inner.dispatched_to_device(now, rq)
    }
    fn completed(&mut self, now: Time, rq: &Request, dev: &dyn DeviceView) {
        self.inner.completed(now, rq, dev)
    }
    fn pending(&self) -> usize {
        self.inner.pending()
    }
    fn set_weight(&mut self, ctx: ContextId, weight: u32) {
        self.inner.set_weight(ctx, weight)
    }
    fn set_qos(&mut self, ctx: ContextId, qos: crate::qos::Qos) {
        self.inner.set_qos(ctx, qos)
    }
    fn set_ioprio(&mut self, ctx: ContextId, prio: crate::IoPrio) {
        self.inner.set_ioprio(ctx, prio)
    }
    fn context_exited(&mut self, now: Time, ctx: ContextId) {
        self.inner.context_exited(now, ctx)
    }
    fn set_device_queue_depth(&mut self, depth: u32) {
        self.inner.set_device_queue_depth(depth)
    }
    fn stats(&self) -> Vec<(&'static str, u64)> {
        self.inner.stats()
    }
}

/// Frameworks are generic over `P: Policy`; this lets them hold a policy chosen by name.
impl Policy for Box<dyn Policy> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn merge(&mut self, now: Time, rq: &Request, max_sectors: u32) -> Option<ReqId> {
        (**self).merge(now, rq, max_sectors)
    }
    fn add(&mut self, now: Time, rq: Request) {
        (**self).add(now, rq)
    }
    fn select(&mut self, now: Time, dev: &dyn DeviceView) -> Option<ReqId> {
        (**self).select(now, dev)
    }
    fn take(&mut self, now: Time, id: ReqId) -> Request {
        (**self).take(now, id)
    }
    fn get(&self, id: ReqId) -> Option<&Request> {
        (**self).get(id)
    }
    fn urgent(&self, now: Time) -> bool {
        (**self).urgent(now)
    }
    fn next_urgent_at(&self) -> Option<Time> {
        (**self).next_urgent_at()
    }
    fn completed(&mut self, now: Time, rq: &Request) {
        (**self).completed(now, rq)
    }
    fn len(&self) -> usize {
        (**self).len()
    }
    fn set_weight(&mut self, ctx: ContextId, weight: u32) {
        (**self).set_weight(ctx, weight)
    }
    fn set_qos(&mut self, ctx: ContextId, qos: crate::qos::Qos) {
        (**self).set_qos(ctx, qos)
    }
    fn set_ioprio(&mut self, ctx: ContextId, prio: crate::IoPrio) {
        (**self).set_ioprio(ctx, prio)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_builds() {
        for n in scheduler_names() {
            let mut s = Settings::new();
            let sched = build(&n, &mut s).unwrap_or_else(|e| panic!("{n}: {e}"));
            assert!(
                sched.name().contains(n.split(':').next_back().unwrap())
                    || n == "stream"
                    || n == "stream-local",
                "{n}"
            );
        }
    }

    #[test]
    fn stream_local_is_stream_under_its_own_name() {
        let s = build("stream-local", &mut Settings::new()).unwrap();
        assert_eq!(s.name(), "stream-local:deadline");
        let s = build("stream-local:cscan", &mut Settings::new()).unwrap();
        assert_eq!(s.name(), "stream-local:cscan");
        let mut set = Settings::new();
        set.push_kv("stream_time_slice=60ms").unwrap();
        build("stream-local", &mut set).unwrap();
        assert!(set.unused().is_empty(), "stream-local reads stream's tunables");
    }

    #[test]
    fn arrays_coordinate_stream_and_nothing_else() {
        let five = ArrayShape { members: 5, data_members: 5 };
        for name in ["stream", "stream:cscan"] {
            let mut set = Settings::new();
            set.push_kv("stream_threshold=3").unwrap();
            let a = build_array(name, &mut set, five).unwrap();
            assert!(a.hooks.is_some(), "{name} coordinates");
            assert_eq!(a.members.len(), 5);
            assert!(a.members[0].name().starts_with("stream:"), "{}", a.members[0].name());
            assert!(set.unused().is_empty(), "{name} reads stream's tunables");
        }
        for name in ["stream-local", "noop", "deadline", "as", "antic"] {
            let a = build_array(name, &mut Settings::new(), five).unwrap();
            assert!(a.hooks.is_none(), "{name} runs per member");
            assert_eq!(a.members.len(), 5);
        }
        let one = ArrayShape { members: 1, data_members: 1 };
        let a = build_array("stream", &mut Settings::new(), one).unwrap();
        assert!(a.hooks.is_none() && a.members.len() == 1, "one disk: plain stream scheduling");
        assert!(build_array("stream:bogus", &mut Settings::new(), five).is_err());
    }

    #[test]
    fn unknown_names_are_errors_naming_them() {
        let e = build("elevator9000", &mut Settings::new()).err().unwrap().to_string();
        assert!(e.contains("elevator9000") && e.contains("deadline"), "{e}");
        let e = build("stream:nope", &mut Settings::new()).err().unwrap().to_string();
        assert!(e.contains("nope"), "{e}");
    }
}

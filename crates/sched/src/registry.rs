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
use crate::framework::array_stream::ArrayShape;
use crate::params::{Settings, Tunable, MAX_SECTORS_KB};
use crate::policy::Policy;
use crate::request::{ContextId, ReqId, Request};
use crate::scheduler::{ArraySchedulers, Scheduler, WorkConserving};
use crate::table::{self, Kind, Row, SCHEDULERS};
use crate::time::Time;

pub use crate::error::BuildError;

/// Every name `build` accepts, in the table's order: each policy, then each framework bare
/// and with each policy it takes, then the standalone schedulers.
pub fn scheduler_names() -> Vec<String> {
    scheduler_names_in(SCHEDULERS)
}

/// Every name a table of `rows` accepts, in the order [`scheduler_names`] gives.
pub fn scheduler_names_in(rows: &[Row]) -> Vec<String> {
    let mut v: Vec<String> = table::policy_rows_in(rows).map(|r| r.name.to_string()).collect();
    for r in rows.iter().filter(|r| matches!(r.kind, Kind::Framework { .. })) {
        v.push(r.name.to_string());
        v.extend(r.policies_in(rows).iter().map(|p| format!("{}:{p}", r.name)));
    }
    v.extend(rows.iter().filter(|r| matches!(r.kind, Kind::Standalone { .. })).map(|r| r.name.to_string()));
    v
}

/// The whole tunable table: what `headway tunables` prints and `--set` accepts — every
/// tunable some row reads, once, in the table's order (the merge bound first).
pub fn tunables() -> Vec<Tunable> {
    let mut v = vec![MAX_SECTORS_KB];
    let every_policy: Vec<&str> = table::policy_rows().map(|r| r.name).collect();
    let with_policy = SCHEDULERS.iter().flat_map(|r| match r.kind {
        Kind::Framework { with_policy, .. } => every_policy.iter().flat_map(|p| with_policy(p)).collect(),
        _ => Vec::new(),
    });
    for t in SCHEDULERS.iter().flat_map(|r| r.tunables).chain(with_policy) {
        if !v.contains(t) {
            v.push(*t);
        }
    }
    v
}

/// Which schedulers read tunable `t`, as `headway tunables` says it: `all` when every
/// scheduler does, `all but ...` when nearly all do; else the rows that list it themselves and the `FRAMEWORK:POLICY`
/// pairs that read it only with that policy (a framework over a listed policy reads its
/// policy's tunables too).
pub fn readers(t: &Tunable) -> String {
    let names = scheduler_names();
    let not: Vec<&String> =
        names.iter().filter(|n| !table::resolve(n).is_ok_and(|r| r.tunables().contains(t))).collect();
    if not.is_empty() {
        return "all".to_string();
    }
    if not.len() * 4 < names.len() {
        return format!("all but {}", not.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", "));
    }
    let mut v: Vec<String> =
        SCHEDULERS.iter().filter(|r| r.tunables.contains(t)).map(|r| r.name.to_string()).collect();
    for r in SCHEDULERS {
        if let Kind::Framework { with_policy, .. } = r.kind {
            v.extend(
                r.policies_in(SCHEDULERS)
                    .into_iter()
                    .filter(|p| with_policy(p).contains(t))
                    .map(|p| format!("{}:{p}", r.name)),
            );
        }
    }
    v.join(", ")
}

/// Check scheduler `name` and the settings it reads without building it, from the table:
/// the name resolves, and every tunable its row reads accepts its value in `settings`
/// (which marks them read, as building would). Building reads nothing else: a row lists
/// exactly what its scheduler reads (tested below), and every check a scheduler makes of
/// its settings is its tunables' ranges.
pub fn check(name: &str, settings: &mut Settings) -> Result<(), BuildError> {
    for t in table::resolve(name)?.tunables() {
        settings.check(&t)?;
    }
    Ok(())
}

/// Does scheduler `name` keep the device idle on purpose? `None` for an unknown name.
pub fn waits(name: &str) -> Option<bool> {
    table::resolve(name).ok().map(|r| r.row.waits())
}

/// Build a policy by name, reading its tunables from `settings`.
pub fn build_policy(name: &str, settings: &mut Settings) -> Result<Box<dyn Policy>, BuildError> {
    match table::row(name) {
        Some(r) => r.policy(name, settings),
        None => Err(table::unknown_policy(name, name, table::policy_rows().map(|r| r.name))),
    }
}

/// The driver merge bound in sectors, from `max_sectors_kb`.
fn max_sectors(settings: &mut Settings) -> Result<u32, BuildError> {
    Ok((settings.count(&MAX_SECTORS_KB)? * 2) as u32)
}

/// Build a scheduler by name. Settings that the scheduler does not read are left unread
/// (the caller reports them with [`Settings::unused`] after building all it needs).
pub fn build(name: &str, settings: &mut Settings) -> Result<Box<dyn Scheduler>, BuildError> {
    build_in(SCHEDULERS, name, settings)
}

/// Build scheduler `name` of a table of `rows`.
pub fn build_in(rows: &[Row], name: &str, settings: &mut Settings) -> Result<Box<dyn Scheduler>, BuildError> {
    let r = table::resolve_in(rows, name)?;
    match (&r.row.kind, r.policy) {
        (Kind::Standalone { build, .. }, _) => build(settings),
        (Kind::Policy(build), _) => {
            let max_sectors = max_sectors(settings)?;
            Ok(Box::new(WorkConserving::new(build(settings)?, max_sectors)))
        }
        (Kind::Framework { build, .. }, Some(p)) => {
            let max_sectors = max_sectors(settings)?;
            build(p, max_sectors, settings)
        }
        (Kind::Framework { .. }, None) => unreachable!("resolve gives a framework its policy"),
    }
}

/// The schedulers of a disk array of `shape` running scheduler `name`: the framework's
/// coordinated array scheduler where its row has one (`stream`, `stream:POLICY`) and the
/// array has two or more members; one independent instance per member otherwise
/// ([module docs](self)).
pub fn build_array(
    name: &str,
    settings: &mut Settings,
    shape: ArrayShape,
) -> Result<ArraySchedulers, BuildError> {
    if shape.members == 0 || shape.data_members == 0 || shape.data_members > shape.members {
        return Err(BuildError::BadArrayShape { members: shape.members, data_members: shape.data_members });
    }
    let n = shape.members as usize;
    let r = table::resolve(name)?;
    if let (Kind::Framework { array: Some(array), .. }, Some(p), true) = (&r.row.kind, r.policy, n > 1) {
        let max_sectors = max_sectors(settings)?;
        return array(p, max_sectors, shape, settings);
    }
    let members = (0..n).map(|_| build(name, settings)).collect::<Result<Vec<_>, _>>()?;
    Ok(ArraySchedulers { members, hooks: None })
}

/// A scheduler under another name (`stream-local`: [module docs](self)).
pub(crate) struct Renamed {
    pub(crate) name: String,
    pub(crate) inner: Box<dyn Scheduler>,
}

impl Scheduler for Renamed {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn waits(&self) -> bool {
        self.inner.waits()
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
    use crate::params::Unit;

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
    fn the_table_says_what_each_scheduler_does_about_waiting() {
        for n in scheduler_names() {
            let built = build(&n, &mut Settings::new()).unwrap();
            assert_eq!(Some(built.waits()), waits(&n), "{n}");
        }
        assert_eq!(waits("deadline"), Some(false));
        assert_eq!(waits("stream:noop"), Some(true));
        assert_eq!(waits("kyber"), Some(false));
        assert_eq!(waits("elevator9000"), None);
    }

    /// A row's tunables are exactly what its scheduler reads: each tunable of the whole
    /// table, set alone, is read by a scheduler if and only if the resolved row lists it.
    #[test]
    fn each_row_lists_exactly_the_tunables_its_scheduler_reads() {
        for n in scheduler_names() {
            let listed: Vec<&str> = table::resolve(&n).unwrap().tunables().iter().map(|t| t.name).collect();
            for t in tunables() {
                let mut s = Settings::new();
                s.set(t.name, &t.default_text());
                build(&n, &mut s).unwrap_or_else(|e| panic!("{n} with {}={}: {e}", t.name, t.default_text()));
                let read = s.unused().is_empty();
                assert_eq!(read, listed.contains(&t.name), "{n} and {}", t.name);
            }
        }
    }

    #[test]
    fn every_policy_is_listed_alone_and_under_stream() {
        let names = scheduler_names();
        for p in table::policy_rows() {
            assert!(names.iter().any(|n| n == p.name), "{}", p.name);
            assert!(names.iter().any(|n| *n == format!("stream:{}", p.name)), "{}", p.name);
        }
        assert!(names.iter().any(|n| n == "kyber"), "kyber is a policy of the table");
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "no name twice");
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
        for (members, data_members) in [(0, 0), (3, 0), (3, 4)] {
            let e = build_array("stream", &mut Settings::new(), ArrayShape { members, data_members });
            let e = e.err().expect("no such array").to_string();
            assert!(e.contains("bad array shape"), "{e}");
        }
    }

    /// One `--set` namespace: tunables that share a name share its meaning — the same
    /// kind of value in the same unit (a bare `--set read_expire=300` is 300 ms to every
    /// scheduler that reads it) and the same first clause of their doc (what follows a `;`
    /// is how each scheduler acts on it); only the default may differ.
    #[test]
    fn a_shared_name_is_a_shared_meaning() {
        let all = tunables();
        let kind = |u: &Unit| match u {
            Unit::Time { unit, .. } => format!("time in {}", unit.suffix()),
            Unit::Count { what, .. } => format!("count of {what}"),
            Unit::Factor { .. } => "factor".to_string(),
            Unit::Flag { .. } => "flag".to_string(),
        };
        let meaning = |t: &Tunable| t.doc.split(';').next().unwrap_or("").trim().to_string();
        let mut shared = 0;
        for (i, a) in all.iter().enumerate() {
            for b in all[i + 1..].iter().filter(|b| b.name == a.name) {
                shared += 1;
                assert_eq!(kind(&a.unit), kind(&b.unit), "{}", a.name);
                assert_eq!(meaning(a), meaning(b), "{}", a.name);
            }
        }
        assert!(shared >= 2, "read_expire and write_expire are shared by deadline and as");
    }

    /// Checking from the table says what building says: for every scheduler and every
    /// tunable of the table set to its default, to a value out of its range and to a word,
    /// the same outcome and the same settings read.
    #[test]
    fn checking_from_the_table_agrees_with_building() {
        for n in scheduler_names() {
            for t in tunables() {
                for v in [t.default_text(), "-1".to_string(), "bogus".to_string()] {
                    let (mut a, mut b) = (Settings::new(), Settings::new());
                    a.set(t.name, &v);
                    b.set(t.name, &v);
                    let checked = check(&n, &mut a).map_err(|e| e.to_string());
                    let built = build(&n, &mut b).map(drop).map_err(|e| e.to_string());
                    assert_eq!(checked, built, "{n} with {}={v}", t.name);
                    assert_eq!(a.unused(), b.unused(), "{n} with {}={v}", t.name);
                }
            }
        }
        assert!(check("elevator9000", &mut Settings::new()).is_err());
    }

    #[test]
    fn unknown_names_are_errors_naming_them() {
        let e = build("elevator9000", &mut Settings::new()).err().unwrap().to_string();
        assert!(e.contains("elevator9000") && e.contains("deadline"), "{e}");
        let e = build("stream:nope", &mut Settings::new()).err().unwrap().to_string();
        assert!(e.contains("nope"), "{e}");
    }
}

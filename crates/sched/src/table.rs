//! The table of schedulers: one row per scheduler headway knows, and nothing about
//! schedulers anywhere else.
//!
//! A row names a scheduler, says what kind it is, how to build it, which tunables it reads
//! and one line about it. Everything that lists, validates or builds schedulers reads these
//! rows: [`crate::registry`] (names and construction), `headway schedulers`, `headway
//! tunables`, the simulator's checks, the block server and the Python module.
//!
//! Three kinds ([`Kind`]):
//! * a **policy** is work-conserving: it never keeps the device idle. It runs alone (as
//!   `NAME`, wrapped in [`crate::WorkConserving`], which adds the driver's merge bound
//!   `max_sectors_kb`) and under any framework that takes it;
//! * a **framework** wraps a policy and adds waiting: `FRAMEWORK:POLICY`, and the bare
//!   `FRAMEWORK` wraps its default policy. A framework may take every policy or only some
//!   (anticipation needs a heuristic per policy), and may build a coordinated scheduler for
//!   a disk array (stream scheduling, 000 Section 2.2);
//! * a **standalone** scheduler is a whole scheduler of its own (Linux's `as`, `cfq` and
//!   `bfq`, `htbs`), which may or may not wait.
//!
//! Adding a scheduler: write its module, then add its row here. Nothing else changes — the
//! listing, `--set` validation, the server's and simulator's builds all follow from the row
//! (README, "Adding a scheduler").

use crate::error::BuildError;
use crate::framework::antic;
use crate::framework::array_stream::{array_stream, ArrayShape};
use crate::framework::stream::{self, Stream, StreamParams};
use crate::linux::{as_sched, bfq, cfq};
use crate::params::{Settings, Tunable, MAX_SECTORS_KB};
use crate::policy::{self, Policy};
use crate::scheduler::{ArraySchedulers, Scheduler};

/// Builds a policy from the settings (reading its tunables).
pub type PolicyBuild = fn(&mut Settings) -> Result<Box<dyn Policy>, BuildError>;
/// Builds `FRAMEWORK:POLICY` from the policy's row, the driver merge bound in sectors and
/// the settings.
pub type FrameworkBuild = fn(&Row, u32, &mut Settings) -> Result<Box<dyn Scheduler>, BuildError>;
/// Builds a framework's coordinated schedulers for a disk array (the policy's row, the merge
/// bound in sectors, the array's shape, the settings).
pub type ArrayBuild = fn(&Row, u32, ArrayShape, &mut Settings) -> Result<ArraySchedulers, BuildError>;
/// Builds a standalone scheduler from the settings.
pub type StandaloneBuild = fn(&mut Settings) -> Result<Box<dyn Scheduler>, BuildError>;

/// What a row is (see the [module docs](self)).
#[derive(Clone, Copy)]
pub enum Kind {
    Policy(PolicyBuild),
    Framework {
        /// What the bare name wraps.
        default_policy: &'static str,
        /// The policies it takes; `None`: every policy of the table.
        policies: Option<&'static [&'static str]>,
        build: FrameworkBuild,
        /// A scheduler coordinating the members of a disk array; `None`: each member runs
        /// its own instance.
        array: Option<ArrayBuild>,
        /// Tunables it reads only with some policies (besides the row's own).
        with_policy: fn(&str) -> &'static [Tunable],
    },
    Standalone {
        build: StandaloneBuild,
        /// Does it keep the device idle on purpose?
        waits: bool,
    },
}

/// One scheduler.
#[derive(Clone, Copy)]
pub struct Row {
    pub name: &'static str,
    pub kind: Kind,
    /// The tunables it reads itself whatever it wraps (a framework's row leaves out its
    /// policy's, and those it reads only with some policies: [`Kind::Framework`]).
    pub tunables: &'static [Tunable],
    /// One line for `headway schedulers --long`.
    pub about: &'static str,
}

impl Row {
    /// Does this scheduler (a framework: with any policy) keep the device idle on purpose?
    pub fn waits(&self) -> bool {
        match self.kind {
            Kind::Policy(_) => false,
            Kind::Framework { .. } => true,
            Kind::Standalone { waits, .. } => waits,
        }
    }

    /// The kind's name: `policy`, `framework` or `standalone`.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::Policy(_) => "policy",
            Kind::Framework { .. } => "framework",
            Kind::Standalone { .. } => "standalone",
        }
    }

    /// The policies of `rows` a framework takes, by name (empty for the other kinds).
    pub fn policies_in(&self, rows: &[Row]) -> Vec<&'static str> {
        match self.kind {
            Kind::Framework { policies: Some(p), .. } => p.to_vec(),
            Kind::Framework { policies: None, .. } => policy_rows_in(rows).map(|r| r.name).collect(),
            _ => Vec::new(),
        }
    }

    /// Build this policy row's policy (`name` is the scheduler asked for, for the error when
    /// the row is no policy).
    pub fn policy(&self, name: &str, s: &mut Settings) -> Result<Box<dyn Policy>, BuildError> {
        match self.kind {
            Kind::Policy(build) => build(s),
            _ => Err(unknown_policy(name, self.name, policy_rows().map(|r| r.name))),
        }
    }
}

/// Every scheduler, in the order `headway schedulers` lists them: policies, frameworks,
/// standalone schedulers.
pub static SCHEDULERS: &[Row] = &[
    Row {
        name: "noop",
        kind: Kind::Policy(|_| Ok(Box::new(policy::Noop::new()))),
        tunables: &[],
        about: "first come, first served, with back merges (Linux's noop)",
    },
    Row {
        name: "deadline",
        kind: Kind::Policy(|s| {
            Ok(Box::new(policy::Deadline::new(policy::DeadlineParams::from_settings(s)?)))
        }),
        tunables: policy::deadline::TUNABLES,
        about: "sector-ordered batches with read and write deadlines (Linux's deadline)",
    },
    Row {
        name: "mq-deadline",
        kind: Kind::Policy(|s| {
            Ok(Box::new(policy::MqDeadline::new(policy::MqDeadlineParams::from_settings(s)?)))
        }),
        tunables: policy::mq_deadline::TUNABLES,
        about: "Linux 6.1's mq-deadline: deadline per I/O priority class, with aging and async_depth",
    },
    Row {
        name: "kyber",
        kind: Kind::Policy(|s| Ok(Box::new(policy::Kyber::new(policy::KyberParams::from_settings(s)?)))),
        tunables: policy::kyber::TUNABLES,
        about: "Linux's kyber: read and write domains with tokens adapted to latency targets",
    },
    Row {
        name: "cscan",
        kind: Kind::Policy(|_| Ok(Box::new(policy::Cscan::new()))),
        tunables: &[],
        about: "one-way elevator: ascending sectors, then back to the lowest (001)",
    },
    Row {
        name: "sptf",
        kind: Kind::Policy(|_| Ok(Box::new(policy::Sptf::new()))),
        tunables: &[],
        about: "shortest positioning time first, priced by the device's service curve (001)",
    },
    Row {
        name: "aged-sptf",
        kind: Kind::Policy(|s| {
            Ok(Box::new(policy::AgedSptf::new(policy::AgedSptfParams::from_settings(s)?)))
        }),
        tunables: policy::aged_sptf::TUNABLES,
        about: "SPTF with waiting time forgiven and a hard latency bound (001)",
    },
    Row {
        name: "stride",
        kind: Kind::Policy(|s| Ok(Box::new(policy::Stride::new(policy::StrideParams::from_settings(s)?)))),
        tunables: policy::stride::TUNABLES,
        about: "proportional share of disk time by weight (stride scheduling, 001 Section 4.7)",
    },
    Row {
        name: "disksim",
        kind: Kind::Policy(|s| Ok(Box::new(policy::Disksim::new(policy::DisksimParams::from_settings(s)?)))),
        tunables: policy::disksim::TUNABLES,
        about: "DiskSim 4.0's driver queue: priority, timeout and base subqueues, DiskSim's algorithms 1-4",
    },
    Row {
        name: "pclock",
        kind: Kind::Policy(|_| Ok(Box::new(policy::PClock::new()))),
        tunables: &[],
        about: "pClock QoS tags: rate, delay and burst per issuer (004's baseline)",
    },
    Row {
        name: "stream",
        kind: Kind::Framework {
            default_policy: "deadline",
            policies: None,
            build: |pol, max_sectors, s| Ok(Box::new(stream_over(pol, "stream", max_sectors, s)?)),
            array: Some(|pol, max_sectors, shape, s| {
                let params = StreamParams::from_settings(s)?;
                let policies =
                    (0..shape.members).map(|_| pol.policy("stream", s)).collect::<Result<Vec<_>, _>>()?;
                Ok(array_stream(policies, shape, params, max_sectors))
            }),
            with_policy: |_| &[],
        },
        tunables: stream::TUNABLES,
        about: "stream scheduling (000): waits for a stream's next request, no process information needed",
    },
    Row {
        name: "stream-local",
        kind: Kind::Framework {
            default_policy: "deadline",
            policies: None,
            build: |pol, max_sectors, s| {
                let inner = Box::new(stream_over(pol, "stream-local", max_sectors, s)?);
                Ok(Box::new(crate::registry::Renamed { name: format!("stream-local:{}", pol.name), inner }))
            },
            array: None,
            with_policy: |_| &[],
        },
        tunables: stream::TUNABLES,
        about: "stream scheduling on each member of an array alone (the baseline of 000 Section 3.5)",
    },
    Row {
        name: "antic",
        kind: Kind::Framework {
            default_policy: antic::DEFAULT_POLICY,
            policies: Some(antic::POLICIES),
            build: |pol, max_sectors, s| antic::build(pol.name, false, max_sectors, s),
            array: None,
            with_policy: antic::heuristic_tunables,
        },
        tunables: &[antic::T_TIMEOUT_GUARD],
        about: "anticipatory scheduling's framework (001): waits when the policy's heuristic says so",
    },
    Row {
        name: "antic-combo",
        kind: Kind::Framework {
            default_policy: antic::COMBO_DEFAULT_POLICY,
            policies: Some(antic::COMBO_POLICIES),
            build: |pol, max_sectors, s| antic::build(pol.name, true, max_sectors, s),
            array: None,
            with_policy: antic::heuristic_tunables,
        },
        tunables: &[antic::T_TIMEOUT_GUARD],
        about: "anticipation with the combined seek and proportional-share heuristic (001 Section 4.7)",
    },
    Row {
        name: "as",
        kind: Kind::Standalone { build: as_sched::build, waits: true },
        tunables: as_sched::TUNABLES,
        about: "Linux 2.6's anticipatory scheduler",
    },
    Row {
        name: "cfq",
        kind: Kind::Standalone { build: cfq::build, waits: true },
        tunables: cfq::TUNABLES,
        about: "Linux 2.6's completely fair queueing: time slices per process, idling",
    },
    Row {
        name: "bfq",
        kind: Kind::Standalone { build: bfq::build, waits: true },
        tunables: bfq::TUNABLES,
        about: "Linux 6.1's budget fair queueing: B-WF2Q+ over per-process budgets, idling, weight raising",
    },
    Row {
        name: "htbs",
        kind: Kind::Standalone { build: crate::framework::htbs::build, waits: true },
        tunables: crate::framework::htbs::TUNABLES,
        about: "HTBS (004): pClock's tags plus waiting for the active application",
    },
];

/// Stream scheduling over policy `pol` (for framework `fw`, named in errors).
fn stream_over(
    pol: &Row,
    fw: &str,
    max_sectors: u32,
    s: &mut Settings,
) -> Result<Stream<Box<dyn Policy>>, BuildError> {
    let policy = pol.policy(fw, s)?;
    let params = StreamParams::from_settings(s)?;
    Ok(Stream::new(policy, params, max_sectors))
}

/// `policy` is no policy `name` can take; `known` are those it can.
pub fn unknown_policy<'a>(name: &str, policy: &str, known: impl IntoIterator<Item = &'a str>) -> BuildError {
    BuildError::UnknownPolicy {
        name: name.to_string(),
        policy: policy.to_string(),
        known: known.into_iter().collect::<Vec<_>>().join(", "),
    }
}

/// The row named `name` (a bare name: no `:POLICY`).
pub fn row(name: &str) -> Option<&'static Row> {
    row_in(SCHEDULERS, name)
}

/// The row of `rows` named `name`.
pub fn row_in<'a>(rows: &'a [Row], name: &str) -> Option<&'a Row> {
    rows.iter().find(|r| r.name == name)
}

/// The policy rows, in table order.
pub fn policy_rows() -> impl Iterator<Item = &'static Row> {
    policy_rows_in(SCHEDULERS)
}

/// The policy rows of `rows`, in order.
pub fn policy_rows_in(rows: &[Row]) -> impl Iterator<Item = &Row> {
    rows.iter().filter(|r| matches!(r.kind, Kind::Policy(_)))
}

/// A scheduler name resolved against the table: `stream` is the `stream` row with the
/// `deadline` policy, `noop` the `noop` row alone.
#[derive(Clone, Copy)]
pub struct Resolved<'a> {
    pub row: &'a Row,
    /// The policy a framework wraps.
    pub policy: Option<&'a Row>,
}

impl Resolved<'_> {
    /// Every tunable the scheduler reads, the merge bound first where it reads one.
    pub fn tunables(&self) -> Vec<Tunable> {
        let mut v = Vec::new();
        if !matches!(self.row.kind, Kind::Standalone { .. }) {
            v.push(MAX_SECTORS_KB);
        }
        v.extend_from_slice(self.row.tunables);
        if let (Kind::Framework { with_policy, .. }, Some(p)) = (&self.row.kind, self.policy) {
            v.extend_from_slice(with_policy(p.name));
        }
        if let Some(p) = self.policy {
            v.extend_from_slice(p.tunables);
        }
        v
    }
}

/// Resolve `name` (`POLICY`, `FRAMEWORK`, `FRAMEWORK:POLICY` or a standalone name).
pub fn resolve(name: &str) -> Result<Resolved<'static>, BuildError> {
    resolve_in(SCHEDULERS, name)
}

/// Resolve `name` against `rows`.
pub fn resolve_in<'a>(rows: &'a [Row], name: &str) -> Result<Resolved<'a>, BuildError> {
    let unknown = || BuildError::UnknownScheduler {
        name: name.to_string(),
        known: crate::registry::scheduler_names_in(rows).join(", "),
    };
    let (head, pol) = match name.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (name, None),
    };
    let row = row_in(rows, head).ok_or_else(unknown)?;
    match (&row.kind, pol) {
        (Kind::Framework { default_policy, .. }, pol) => {
            let pol = pol.unwrap_or(default_policy);
            let allowed = row.policies_in(rows);
            match row_in(rows, pol) {
                Some(p) if allowed.contains(&p.name) => Ok(Resolved { row, policy: Some(p) }),
                _ => Err(unknown_policy(name, pol, allowed)),
            }
        }
        (_, None) => Ok(Resolved { row, policy: None }),
        (_, Some(_)) => Err(unknown()),
    }
}

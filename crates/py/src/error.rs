//! The one place where Rust errors become Python exceptions. The classes are defined in
//! `python/headway/errors.py` (so they have docstrings and can be caught before the native
//! module is loaded); each is made here with the message the CLI would print and
//! attributes Python code can test:
//!
//! | Rust                                               | Python            | attributes            |
//! |----------------------------------------------------|-------------------|-----------------------|
//! | `fio::JobFileError`, `WorkloadError`, `NoJobs`     | `JobFileError`    | `file`, `line`, `option` |
//! | unknown drive model, `BuildError::Unknown*`        | `UnknownNameError`| `kind`, `name`        |
//! | `ParamError`, unused settings, bad context/drive   | `SettingError`    |                       |
//! | `EngineError` (a stalled run, a bad drive config)  | `SimulationError` |                       |

use pyo3::prelude::*;
use pyo3::types::PyDict;

use headway_sched::BuildError;
use headway_sim::fio::JobFileError;
use headway_sim::SimError;

/// Why `simulate_json` refused or failed, before it becomes a Python exception.
pub enum Failure {
    JobFile(JobFileError),
    Sim(SimError),
    UnknownName { kind: &'static str, name: String, known: String },
    Setting(String),
}

impl From<JobFileError> for Failure {
    fn from(e: JobFileError) -> Self {
        Failure::JobFile(e)
    }
}

impl From<SimError> for Failure {
    fn from(e: SimError) -> Self {
        Failure::Sim(e)
    }
}

/// `e` and its causes, as the CLI prints them on one line (`missing.fio: cannot read: No
/// such file or directory`).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// `file:line` → (file, line).
fn split_origin(origin: &str) -> (Option<String>, Option<usize>) {
    match origin.rsplit_once(':') {
        Some((f, l)) if l.parse::<usize>().is_ok() => (Some(f.to_string()), l.parse().ok()),
        _ => (Some(origin.to_string()), None),
    }
}

impl Failure {
    pub fn into_py(self, py: Python<'_>) -> PyErr {
        let mut attrs: Vec<(&str, Option<String>)> = Vec::new();
        let mut line: Option<usize> = None;
        let (class, message) = match self {
            Failure::JobFile(e) => {
                let file = match &e {
                    JobFileError::Io { path, .. } | JobFileError::NoJobs { path } => Some(path.clone()),
                    _ => e.origin().map(|o| o.file.clone()),
                };
                line = e.origin().map(|o| o.line);
                let option = match &e {
                    JobFileError::UnknownOption { option, .. } | JobFileError::Value { option, .. } => {
                        Some(option.clone())
                    }
                    _ => None,
                };
                attrs.push(("file", file));
                attrs.push(("option", option));
                ("JobFileError", chain(&e))
            }
            Failure::UnknownName { kind, name, known } => {
                let msg = format!("unknown {kind} `{name}` (known: {known})");
                attrs.push(("kind", Some(kind.to_string())));
                attrs.push(("name", Some(name)));
                ("UnknownNameError", msg)
            }
            Failure::Setting(msg) => ("SettingError", msg),
            Failure::Sim(e) => {
                let msg = chain(&e);
                match e {
                    SimError::Scheduler { name, err: BuildError::UnknownScheduler { .. } }
                    | SimError::Scheduler { name, err: BuildError::UnknownPolicy { .. } } => {
                        attrs.push(("kind", Some("scheduler".into())));
                        attrs.push(("name", Some(name)));
                        ("UnknownNameError", msg)
                    }
                    SimError::Scheduler { .. }
                    | SimError::UnusedSettings(..)
                    | SimError::Host(_)
                    | SimError::ArrayQueueDepth(_)
                    | SimError::NoScheduler => ("SettingError", msg),
                    SimError::Workload(w) => {
                        let (file, l) = split_origin(&w.origin);
                        line = l;
                        attrs.push(("file", file));
                        attrs.push(("option", None));
                        ("JobFileError", msg)
                    }
                    SimError::NoJobs(path) => {
                        attrs.push(("file", Some(path)));
                        attrs.push(("option", None));
                        ("JobFileError", msg)
                    }
                    SimError::Engine(_) => ("SimulationError", msg),
                    _ => ("HeadwayError", msg),
                }
            }
        };
        let make = || -> PyResult<PyErr> {
            let cls = py.import("headway.errors")?.getattr(class)?;
            let kwargs = PyDict::new(py);
            for (k, v) in attrs {
                kwargs.set_item(k, v)?;
            }
            if class == "JobFileError" {
                kwargs.set_item("line", line)?;
            }
            Ok(PyErr::from_value(cls.call((message.clone(),), Some(&kwargs))?))
        };
        make().unwrap_or_else(|e| e)
    }
}

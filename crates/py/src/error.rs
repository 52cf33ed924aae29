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
//! | `ImportError` (a DiskSim `.parv`/`.diskspecs`)     | `DriveFileError`  | `file`, `line`        |
//! | `TraceError` (an unreadable or malformed trace)    | `TraceFileError`  | `file`, `line`        |

use pyo3::prelude::*;
use pyo3::types::PyDict;

use headway_disk::{ImportError, ResolveError};
use headway_sched::BuildError;
use headway_sim::fio::JobFileError;
use headway_sim::trace::TraceError;
use headway_sim::{EngineError, SimError};
use headway_validate::ValidateError;

/// Why a native call refused or failed, before it becomes a Python exception.
pub enum Failure {
    JobFile(JobFileError),
    Sim(SimError),
    /// An unknown drive name (a parameter file that does not import is `DriveFile`).
    UnknownDrive(ResolveError),
    Setting(String),
    DriveFile(ImportError),
    Trace(TraceError),
    /// Anything else, with its chain (`HeadwayError`).
    Other(String),
}

impl From<headway_sim::request_csv::CsvError> for Failure {
    /// A `per_request=` file that cannot be written.
    fn from(e: headway_sim::request_csv::CsvError) -> Self {
        Failure::Setting(format!("{e}: {}", e.source))
    }
}

impl From<ResolveError> for Failure {
    fn from(e: ResolveError) -> Self {
        match e {
            ResolveError::Import { err, .. } => Failure::DriveFile(err),
            e => Failure::UnknownDrive(e),
        }
    }
}

impl From<ImportError> for Failure {
    fn from(e: ImportError) -> Self {
        Failure::DriveFile(e)
    }
}

impl From<TraceError> for Failure {
    fn from(e: TraceError) -> Self {
        Failure::Trace(e)
    }
}

impl From<ValidateError> for Failure {
    /// What `headway validate` can fail with, sorted by kind.
    fn from(e: ValidateError) -> Self {
        match e {
            ValidateError::Trace(t) => Failure::Trace(t),
            ValidateError::Disk(d) => Failure::from(d),
            e => Failure::Other(chain(&e)),
        }
    }
}

/// (file, line) of a trace error.
fn trace_origin(e: &TraceError) -> (Option<String>, Option<usize>) {
    match e {
        TraceError::Malformed { file, line, .. } | TraceError::Beyond { file, line, .. } => {
            (Some(file.clone()), Some(*line as usize))
        }
        TraceError::Io { file, .. }
        | TraceError::Untimed { file, .. }
        | TraceError::StdinTwice { file }
        | TraceError::Empty { file } => (Some(file.clone()), None),
        _ => (None, None),
    }
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
            Failure::UnknownDrive(e) => {
                // the CLI's text, word for word (headway_disk::ResolveError)
                let name = match &e {
                    ResolveError::Unknown { name } => Some(name.clone()),
                    _ => None,
                };
                attrs.push(("kind", Some("drive model".to_string())));
                attrs.push(("name", name));
                ("UnknownNameError", e.to_string())
            }
            Failure::Setting(msg) => ("SettingError", msg),
            Failure::Other(msg) => ("HeadwayError", msg),
            Failure::DriveFile(e) => {
                let (file, l) = match &e {
                    ImportError::Syntax(s) => {
                        (Some(s.at.file.display().to_string()), Some(s.at.line as usize))
                    }
                    ImportError::At { at, .. } => {
                        (Some(at.file.display().to_string()), Some(at.line as usize))
                    }
                    ImportError::Spec { file, .. } | ImportError::NoDisk(file) => {
                        (Some(file.display().to_string()), None)
                    }
                    _ => (None, None),
                };
                line = l;
                attrs.push(("file", file));
                ("DriveFileError", e.to_string())
            }
            Failure::Trace(e) => {
                let (file, l) = trace_origin(&e);
                line = l;
                attrs.push(("file", file));
                ("TraceFileError", e.to_string())
            }
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
                    SimError::Trace(t) | SimError::Engine(EngineError::Trace(t)) => {
                        let (file, l) = trace_origin(&t);
                        line = l;
                        attrs.push(("file", file));
                        ("TraceFileError", msg)
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
            if matches!(class, "JobFileError" | "DriveFileError" | "TraceFileError") {
                kwargs.set_item("line", line)?;
            }
            Ok(PyErr::from_value(cls.call((message.clone(),), Some(&kwargs))?))
        };
        make().unwrap_or_else(|e| e)
    }
}

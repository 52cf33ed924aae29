//! Parameter sweeps (`headway sweep SWEEP.toml`): a grid over schedulers, tunables, disks,
//! contexts, thinktimes and seeds, one [`crate::simulate`] run per grid point, one CSV row
//! per point x job.
//!
//! The sweep file:
//!
//! ```toml
//! job = "experiments/par-read.fio"   # the fio job file, relative to the sweep file
//! out = "sweep.csv"                  # optional; default: the sweep file's name, .csv
//! [grid]
//! scheduler = ["noop", "deadline", "stream"]   # default: --scheduler's
//! disk = ["wd5000aaks"]              # default: --disk's; built-in models or DiskSim
//!                                    # .parv/.diskspecs files (relative to the sweep file)
//! array = ["none", "raid0:5:64k"]     # optional: `--array` per point ("none": one drive)
//! context = ["none"]                 # default: --context's (process)
//! thinktime_us = [0, 100, 500]       # sets fio's thinktime in every job; default: the job file's
//! seed = [1, 2]                      # default: --seed's (1)
//! [grid.set]                         # tunables (`headway tunables`), each a list
//! stream_threshold = [2, 4]
//! ```
//!
//! **The run flags** (`headway sweep FILE` takes `simulate`'s: a [`RunSpec`]) are every
//! point's starting values; a key of the grid replaces its flag: `--disk`, `--scheduler`,
//! `--context`, `--seed` and `--array` stand for a grid key the file leaves out (`--array`
//! then shows as an `array` column of one value), each `--set` is added to every point
//! unless `[grid.set]` varies that tunable, and the drive's flags (`--queue-depth`,
//! `--drive-scheduler`, `--write-cache`) and `--array-queue-depth` apply to every point.
//!
//! **Grid order** (the order of points, and of the table's rows whatever the engine): the
//! cartesian product with the *last* key varying fastest, keys in this order: `disk`,
//! `array` (only when the grid has it), `context`, `thinktime_us`, each `[grid.set]`
//! tunable in name order, `scheduler`, `seed`.
//! Point `i` is the `i`th of that product, numbered from 0.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use headway_disk::DiskSpec;
use headway_sched::Settings;
use serde::Deserialize;
use toml::Spanned;

use crate::{check_schedulers, fio, simulate, ContextMode, RunSpec, SimConfig, SimError};

/// A sweep file that cannot be used: `file:line: message`.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct SweepError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    job: Spanned<String>,
    out: Option<Spanned<String>>,
    grid: Spanned<RawGrid>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGrid {
    scheduler: Option<Spanned<Vec<String>>>,
    disk: Option<Spanned<Vec<String>>>,
    array: Option<Spanned<Vec<String>>>,
    context: Option<Spanned<Vec<String>>>,
    thinktime_us: Option<Spanned<Vec<u64>>>,
    seed: Option<Spanned<Vec<u64>>>,
    #[serde(default)]
    set: BTreeMap<Spanned<String>, Spanned<Vec<toml::Value>>>,
}

/// One axis of the grid: a column name and its values as the table shows them.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<String>,
}

/// A parsed, checked sweep file.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The sweep file, as given.
    pub path: PathBuf,
    /// The job file (resolved against the sweep file's directory).
    pub job: PathBuf,
    /// Where the table goes (resolved likewise).
    pub out: PathBuf,
    /// The axes in grid order (the last varies fastest).
    pub axes: Vec<Axis>,
    jobfile: fio::JobFile,
    disks: BTreeMap<String, DiskSpec>,
    /// Names of the `[grid.set]` tunables, in name order.
    tunables: Vec<String>,
    /// Every point's starting values (the run flags).
    base: RunSpec,
    /// The run flags' `--set` pairs the grid does not vary.
    base_settings: Vec<(String, String)>,
}

/// The fio-like columns of each row after the point's parameters.
pub const RESULT_COLUMNS: &[&str] = &[
    "job",
    "job_index",
    "groupid",
    "job_runtime_ms",
    "disk_time_ns",
    "read_io_bytes",
    "read_bw_bytes",
    "read_iops",
    "read_clat_mean_ns",
    "read_clat_p99_ns",
    "write_io_bytes",
    "write_bw_bytes",
    "write_iops",
    "write_clat_mean_ns",
    "write_clat_p99_ns",
];

fn line_of(text: &str, span: Range<usize>) -> usize {
    text[..span.start.min(text.len())].bytes().filter(|&b| b == b'\n').count() + 1
}

fn value_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "1" } else { "0" }.to_string()),
        _ => None,
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Sweep {
    /// Read and check a sweep file (and its job file).
    pub fn load(path: &Path) -> Result<Sweep, SweepError> {
        Sweep::load_with(path, &Sweep::default_base())
    }

    /// [`Sweep::load`] with the run flags `base` ([module docs](self)).
    pub fn load_with(path: &Path, base: &RunSpec) -> Result<Sweep, SweepError> {
        let text = std::fs::read_to_string(path).map_err(|e| SweepError {
            file: path.display().to_string(),
            line: 0,
            message: format!("cannot read: {e}"),
        })?;
        Sweep::from_str_with(&text, path, base)
    }

    /// The run flags' defaults.
    fn default_base() -> RunSpec {
        RunSpec::new(headway_disk::builtin(headway_disk::DEFAULT).expect("built in"))
    }

    /// Parse and check `text`, the sweep file at `path` (relative paths inside it are
    /// resolved against `path`'s directory).
    pub fn from_str(text: &str, path: &Path) -> Result<Sweep, SweepError> {
        Sweep::from_str_with(text, path, &Sweep::default_base())
    }

    /// [`Sweep::from_str`] with the run flags `base` ([module docs](self)).
    pub fn from_str_with(text: &str, path: &Path, run: &RunSpec) -> Result<Sweep, SweepError> {
        let file = path.display().to_string();
        let err = |span: Range<usize>, message: String| SweepError {
            file: file.clone(),
            line: line_of(text, span),
            message,
        };
        let raw: RawSweep = toml::from_str(text).map_err(|e| SweepError {
            file: file.clone(),
            line: e.span().map_or(0, |s| line_of(text, s)),
            message: e.message().trim().to_string(),
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        let job = base.join(raw.job.get_ref());
        let out = match &raw.out {
            Some(o) => base.join(o.get_ref()),
            None => path.with_extension("csv"),
        };
        let jobfile = fio::parse_file(&job).map_err(|e| err(raw.job.span(), format!("key `job`: {e}")))?;
        let g = raw.grid.get_ref();
        let nonempty = |key: &str, span: Range<usize>, n: usize| {
            if n == 0 {
                Err(err(span, format!("key `grid.{key}`: expected a non-empty list")))
            } else {
                Ok(())
            }
        };
        let grid_span = raw.grid.span();
        let (schedulers, scheduler_span) = match &g.scheduler {
            Some(s) => {
                nonempty("scheduler", s.span(), s.get_ref().len())?;
                (s.get_ref().clone(), s.span())
            }
            None => (run.schedulers.clone(), grid_span.clone()),
        };
        let mut disks = BTreeMap::new();
        let disk_names = match &g.disk {
            Some(d) => {
                nonempty("disk", d.span(), d.get_ref().len())?;
                for n in d.get_ref() {
                    let spec = headway_disk::resolve_from(base, n).map_err(|e| {
                        let cause =
                            std::error::Error::source(&e).map(|c| format!(": {c}")).unwrap_or_default();
                        err(d.span(), format!("key `grid.disk`: {e}{cause}"))
                    })?;
                    disks.insert(n.clone(), spec);
                }
                d.get_ref().clone()
            }
            None => {
                disks.insert(run.disk.name.to_string(), run.disk.clone());
                vec![run.disk.name.to_string()]
            }
        };
        let contexts = match &g.context {
            Some(c) => {
                nonempty("context", c.span(), c.get_ref().len())?;
                for n in c.get_ref() {
                    n.parse::<ContextMode>()
                        .map_err(|e| err(c.span(), format!("key `grid.context`: {e}")))?;
                }
                c.get_ref().clone()
            }
            None => vec![run.context.to_string()],
        };
        let thinktimes = match &g.thinktime_us {
            Some(t) => {
                nonempty("thinktime_us", t.span(), t.get_ref().len())?;
                t.get_ref().iter().map(u64::to_string).collect()
            }
            None => vec![String::new()],
        };
        let seeds = match &g.seed {
            Some(s) => {
                nonempty("seed", s.span(), s.get_ref().len())?;
                s.get_ref().iter().map(u64::to_string).collect()
            }
            None => vec![run.seed.to_string()],
        };
        let mut axes = vec![Axis { name: "disk".into(), values: disk_names }];
        if let Some(a) = &g.array {
            nonempty("array", a.span(), a.get_ref().len())?;
            for v in a.get_ref() {
                if v != "none" {
                    v.parse::<headway_disk::array::ArraySpec>()
                        .map_err(|e| err(a.span(), format!("key `grid.array`: {e} (or \"none\")")))?;
                }
            }
            axes.push(Axis { name: "array".into(), values: a.get_ref().clone() });
        } else if let Some(a) = run.array {
            axes.push(Axis { name: "array".into(), values: vec![a.to_string()] });
        }
        axes.push(Axis { name: "context".into(), values: contexts });
        axes.push(Axis { name: "thinktime_us".into(), values: thinktimes });
        let mut tunables = Vec::new();
        for (k, vs) in &g.set {
            let name = k.get_ref();
            let key = format!("grid.set.{name}");
            if RESULT_COLUMNS.contains(&name.as_str())
                || ["point", "disk", "array", "context", "thinktime_us", "scheduler", "seed"]
                    .contains(&name.as_str())
            {
                return Err(err(k.span(), format!("key `{key}`: not a tunable name")));
            }
            nonempty(&key, vs.span(), vs.get_ref().len())?;
            let mut values = Vec::new();
            for v in vs.get_ref() {
                let s = value_text(v).ok_or_else(|| {
                    err(vs.span(), format!("key `{key}`: expected strings, numbers or booleans"))
                })?;
                Settings::new()
                    .push_kv(&format!("{name}={s}"))
                    .map_err(|e| err(vs.span(), format!("key `{key}`: {e}")))?;
                values.push(s);
            }
            tunables.push(name.clone());
            axes.push(Axis { name: name.clone(), values });
        }
        axes.push(Axis { name: "scheduler".into(), values: schedulers.clone() });
        axes.push(Axis { name: "seed".into(), values: seeds });
        let base_settings: Vec<(String, String)> = run
            .settings
            .iter()
            .filter(|(k, _)| !tunables.iter().any(|t| t == k))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let sweep = Sweep {
            path: path.to_path_buf(),
            job,
            out,
            axes,
            jobfile,
            disks,
            tunables,
            base: run.clone(),
            base_settings,
        };
        // Check every scheduler with every combination of tunables before anything runs.
        // A tunable must be read by one of the sweep's schedulers (or the page cache); each
        // point gets only those its scheduler reads.
        let set_span = g.set.values().next().map_or(raw.grid.span(), |v| v.span());
        let mut checked = std::collections::BTreeSet::new();
        for i in 0..sweep.len() {
            let p = sweep.point(i);
            if checked.insert(p.settings.clone()) {
                let settings = sweep.settings(&p.settings);
                check_schedulers(&schedulers, &settings).map_err(|e| {
                    let (k, span) = match e {
                        SimError::Scheduler { .. } => ("grid.scheduler", scheduler_span.clone()),
                        _ => ("grid.set", set_span.clone()),
                    };
                    err(span, format!("key `{k}`: {e}"))
                })?;
            }
        }
        Ok(sweep)
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.axes.iter().map(|a| a.values.len()).product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Point `i` in grid order: each axis's value.
    pub fn values(&self, mut i: usize) -> Vec<&str> {
        let mut out = vec![""; self.axes.len()];
        for (k, a) in self.axes.iter().enumerate().rev() {
            out[k] = &a.values[i % a.values.len()];
            i /= a.values.len();
        }
        out
    }

    /// Point `i` as named parameters.
    pub fn point(&self, i: usize) -> Point {
        let v = self.values(i);
        let n = self.axes.len();
        // the grid's `array` axis, when it has one, is second
        let a = (self.axes[1].name == "array") as usize;
        Point {
            index: i,
            disk: v[0].to_string(),
            array: (a == 1 && v[1] != "none").then(|| v[1].to_string()),
            context: v[1 + a].to_string(),
            thinktime_us: v[2 + a].parse().ok(),
            settings: self
                .tunables
                .iter()
                .cloned()
                .zip(v[3 + a..n - 2].iter().map(|s| s.to_string()))
                .collect(),
            scheduler: v[n - 2].to_string(),
            seed: v[n - 1].parse().expect("seeds are numbers"),
        }
    }

    /// Of `pairs`, those `scheduler` or the page cache reads.
    fn settings_for(scheduler: &str, pairs: &[(String, String)]) -> Settings {
        let all = Sweep::settings_of(pairs);
        let mut host = all.clone();
        let _ = crate::host::HostParams::from_settings(&mut host);
        let mut sched = all.clone();
        let _ = headway_sched::registry::check(scheduler, &mut sched);
        let (host_unused, sched_unused) = (host.unused(), sched.unused());
        let kept: Vec<(String, String)> = pairs
            .iter()
            .filter(|(k, _)| !(host_unused.iter().any(|u| u == k) && sched_unused.iter().any(|u| u == k)))
            .cloned()
            .collect();
        Sweep::settings_of(&kept)
    }

    /// A point's settings: the run flags' (those the grid does not vary), then the grid's.
    fn settings(&self, pairs: &[(String, String)]) -> Settings {
        Sweep::settings_of(&self.with_base(pairs))
    }

    fn with_base(&self, pairs: &[(String, String)]) -> Vec<(String, String)> {
        self.base_settings.iter().chain(pairs).cloned().collect()
    }

    fn settings_of(pairs: &[(String, String)]) -> Settings {
        let mut s = Settings::new();
        for (k, v) in pairs {
            s.push_kv(&format!("{k}={v}")).expect("checked when loaded");
        }
        s
    }

    /// The CSV header line (with its line break).
    pub fn header(&self) -> String {
        let mut cols: Vec<&str> = vec!["point"];
        cols.extend(self.axes.iter().map(|a| a.name.as_str()));
        cols.extend(RESULT_COLUMNS);
        let mut s = cols.iter().map(|c| csv_field(c)).collect::<Vec<_>>().join(",");
        s.push('\n');
        s
    }

    /// Run point `i`: its CSV rows (one per job, each with its line break).
    pub fn run_point(&self, i: usize) -> Result<String, SimError> {
        let p = self.point(i);
        let mut jobfile = self.jobfile.clone();
        if let Some(t) = p.thinktime_us {
            for j in &mut jobfile.jobs {
                j.thinktime = headway_sched::Duration::from_micros(t);
            }
        }
        let cfg = SimConfig {
            jobfile,
            run: crate::RunSpec {
                disk: self.disks[&p.disk].clone(),
                schedulers: vec![p.scheduler.clone()],
                context: p.context.parse().expect("checked when loaded"),
                settings: Sweep::settings_for(&p.scheduler, &self.with_base(&p.settings)),
                seed: p.seed,
                drive: self.base.drive,
                array: p.array.as_deref().map(|a| a.parse().expect("checked when loaded")),
                array_queue_depth: self.base.array_queue_depth,
                devices: Vec::new(),
            },
        };
        let report = simulate(&cfg, |_, _| {})?;
        let prefix: String = std::iter::once(i.to_string())
            .chain(self.values(i).into_iter().map(csv_field))
            .collect::<Vec<_>>()
            .join(",");
        let mut out = String::new();
        for run in &report.runs {
            for (k, j) in run.jobs.iter().enumerate() {
                let p99 = |c: &crate::report::Clat| c.percentile.get("99.000000").copied().unwrap_or(0);
                let fields = [
                    csv_field(&j.jobname),
                    k.to_string(),
                    j.groupid.to_string(),
                    j.job_runtime.to_string(),
                    j.disk_time_ns.to_string(),
                    j.read.io_bytes.to_string(),
                    j.read.bw_bytes.to_string(),
                    j.read.iops.to_string(),
                    j.read.clat_ns.mean.to_string(),
                    p99(&j.read.clat_ns).to_string(),
                    j.write.io_bytes.to_string(),
                    j.write.bw_bytes.to_string(),
                    j.write.iops.to_string(),
                    j.write.clat_ns.mean.to_string(),
                    p99(&j.write.clat_ns).to_string(),
                ];
                out.push_str(&prefix);
                for f in fields {
                    out.push(',');
                    out.push_str(&f);
                }
                out.push('\n');
            }
        }
        Ok(out)
    }

    /// Run every point on `threads` threads (at least 1); `done()` is called after each
    /// point. The table (header and rows in grid order) is the same for any `threads`.
    /// On failure, the error of the first failing point in grid order.
    pub fn run_local(&self, threads: usize, done: &(dyn Fn() + Sync)) -> Result<String, (usize, SimError)> {
        let n = self.len();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results: std::sync::Mutex<Vec<Option<Result<String, SimError>>>> =
            std::sync::Mutex::new((0..n).map(|_| None).collect());
        std::thread::scope(|s| {
            for _ in 0..threads.clamp(1, n.max(1)) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = self.run_point(i);
                    results.lock().expect("no panics while locked")[i] = Some(r);
                    done();
                });
            }
        });
        let mut table = self.header();
        for (i, r) in results.into_inner().expect("no panics while locked").into_iter().enumerate() {
            table.push_str(&r.expect("every point ran").map_err(|e| (i, e))?);
        }
        Ok(table)
    }
}

/// One grid point's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub index: usize,
    pub disk: String,
    /// `--array` (`None`: one drive).
    pub array: Option<String>,
    pub context: String,
    /// `None`: the job file's own thinktime.
    pub thinktime_us: Option<u64>,
    /// `[grid.set]` tunables, in name order.
    pub settings: Vec<(String, String)>,
    pub scheduler: String,
    pub seed: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOB: &str = "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=256k\n\
                       [r]\nnumjobs=2\noffset_increment=51g\n";

    fn write(dir: &Path, sweep: &str) -> PathBuf {
        std::fs::write(dir.join("small.fio"), JOB).unwrap();
        let p = dir.join("s.toml");
        std::fs::write(&p, sweep).unwrap();
        p
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("headway-sweep-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    const SWEEP: &str = "job = \"small.fio\"\n[grid]\nscheduler = [\"noop\", \"stream\"]\n\
                         seed = [1, 2, 3]\ncontext = [\"none\"]\nthinktime_us = [0, 100]\n\
                         [grid.set]\nstream_threshold = [2, 4]\n";

    /// The run flags are every point's starting values; the grid's keys replace them.
    #[test]
    fn run_flags_fill_what_the_grid_leaves_out() {
        let d = tmp("base");
        let p = write(&d, "job = \"small.fio\"\n[grid]\n[grid.set]\nstream_threshold = [2, 4]\n");
        let mut base = RunSpec::new(headway_disk::builtin("hd080hj").unwrap()).with_schedulers(&["stream"]);
        base.context = ContextMode::None;
        base.seed = 7;
        base.array = Some("raid0:2:64k".parse().unwrap());
        base.settings.push_kv("stream_threshold=3").unwrap();
        base.settings.push_kv("tolerance_factor=0.25").unwrap();
        let s = Sweep::load_with(&p, &base).unwrap();
        let names: Vec<_> = s.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            ["disk", "array", "context", "thinktime_us", "stream_threshold", "scheduler", "seed"]
        );
        assert_eq!(s.values(1), ["hd080hj", "raid0:2:64k", "none", "", "4", "stream", "7"]);
        // the grid's stream_threshold replaces the flag's; tolerance_factor reaches every point
        let set = s.settings(&s.point(1).settings);
        let pairs: Vec<(&str, &str)> = set.iter().collect();
        assert_eq!(pairs, [("tolerance_factor", "0.25"), ("stream_threshold", "4")]);
        // the drive's flags reach every point: a deeper queue changes random reads' results
        let rand = d.join("rand.fio");
        std::fs::write(
            &rand,
            "[r]\nrw=randread\ndirect=1\nioengine=libaio\niodepth=16\nsize=1g\nnumber_ios=400\n",
        )
        .unwrap();
        std::fs::write(&p, "job = \"rand.fio\"\n[grid]\nscheduler = [\"noop\"]\n").unwrap();
        let shallow = Sweep::load(&p).unwrap().run_point(0).unwrap();
        let mut deep = Sweep::default_base();
        deep.drive.queue_depth = 32;
        let deep = Sweep::load_with(&p, &deep).unwrap().run_point(0).unwrap();
        let iops = |row: &str| row.split(',').nth(12).unwrap().parse::<f64>().unwrap();
        assert!(iops(&deep) > 1.5 * iops(&shallow), "{shallow}{deep}");
    }

    #[test]
    fn expansion_order_and_count() {
        let d = tmp("order");
        let s = Sweep::load(&write(&d, SWEEP)).unwrap();
        assert_eq!(s.len(), 2 * 3 * 2 * 2);
        let names: Vec<_> = s.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["disk", "context", "thinktime_us", "stream_threshold", "scheduler", "seed"]);
        assert_eq!(s.values(0), ["wd5000aaks", "none", "0", "2", "noop", "1"]);
        assert_eq!(s.values(1), ["wd5000aaks", "none", "0", "2", "noop", "2"]);
        assert_eq!(s.values(3), ["wd5000aaks", "none", "0", "2", "stream", "1"]);
        assert_eq!(s.values(6), ["wd5000aaks", "none", "0", "4", "noop", "1"]);
        assert_eq!(s.values(23), ["wd5000aaks", "none", "100", "4", "stream", "3"]);
        let p = s.point(13);
        assert_eq!(p.thinktime_us, Some(100));
        assert_eq!(p.settings, vec![("stream_threshold".to_string(), "2".to_string())]);
        assert_eq!((p.scheduler.as_str(), p.seed), ("noop", 2));
        assert_eq!(s.out, d.join("s.csv"));
        assert!(s
            .header()
            .starts_with("point,disk,context,thinktime_us,stream_threshold,scheduler,seed,job,"));
    }

    #[test]
    fn csv_same_on_one_and_many_threads() {
        let d = tmp("threads");
        let s = Sweep::load(&write(&d, SWEEP)).unwrap();
        let one = s.run_local(1, &|| {}).unwrap();
        let many = s.run_local(7, &|| {}).unwrap();
        assert_eq!(one, many);
        assert_eq!(one.lines().count(), 1 + s.len() * 2);
        assert!(one.lines().nth(1).unwrap().starts_with("0,wd5000aaks,none,0,2,noop,1,r,0,"));
    }

    /// An `array` axis comes second; "none" is one drive; a bad spec names file and line.
    #[test]
    fn an_array_axis_runs_each_point_on_its_array() {
        let d = tmp("array");
        let text = "job = \"small.fio\"\n[grid]\nscheduler = [\"stream-local\", \"stream\"]\n\
                    array = [\"none\", \"raid0:5:64k\"]\n";
        let s = Sweep::load(&write(&d, text)).unwrap();
        let names: Vec<_> = s.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["disk", "array", "context", "thinktime_us", "scheduler", "seed"]);
        assert_eq!(s.point(0).array, None);
        assert_eq!(s.point(3).array.as_deref(), Some("raid0:5:64k"));
        assert_eq!((s.point(3).context.as_str(), s.point(3).scheduler.as_str()), ("process", "stream"));
        let csv = s.run_local(2, &|| {}).unwrap();
        assert!(
            csv.lines().nth(1).unwrap().starts_with("0,wd5000aaks,none,process,,stream-local,1,"),
            "{csv}"
        );
        assert!(
            csv.lines().nth(7).unwrap().starts_with("3,wd5000aaks,raid0:5:64k,process,,stream,1,"),
            "{csv}"
        );
        let p = write(&d, "job = \"small.fio\"\n[grid]\nscheduler = [\"noop\"]\narray = [\"raid9:5:64k\"]\n");
        let e = Sweep::load(&p).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:4: key `grid.array`", p.display())), "{e}");
    }

    #[test]
    fn each_point_gets_the_tunables_its_scheduler_reads() {
        let pairs = [("stream_threshold".to_string(), "4".to_string())];
        assert_eq!(Sweep::settings_for("stream", &pairs).iter().count(), 1);
        assert_eq!(Sweep::settings_for("noop", &pairs).iter().count(), 0);
    }

    #[test]
    fn bad_key_names_file_and_line() {
        let d = tmp("badkey");
        let p = write(&d, "job = \"small.fio\"\n[grid]\nscheduler = [\"noop\"]\nsede = [1]\n");
        let e = Sweep::load(&p).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:4: ", p.display())), "{e}");
        assert!(e.contains("sede"), "{e}");
        let p = write(&d, "job = \"small.fio\"\n[grid]\nscheduler = [\"noop\", \"nope\"]\n");
        let e = Sweep::load(&p).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:3: key `grid.scheduler`", p.display())), "{e}");
        let p = write(&d, "job = \"small.fio\"\n[grid]\nscheduler = [\"noop\"]\n[grid.set]\nno_such = [1]\n");
        let e = Sweep::load(&p).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:5: key `grid.set`", p.display())), "{e}");
    }

    /// `grid.disk` takes what `--disk` takes (headway_disk::resolve), a parameter file
    /// relative to the sweep file; a bad name gets the resolver's text.
    #[test]
    fn grid_disk_names_a_builtin_or_a_parameter_file() {
        let d = tmp("disk");
        let valid = headway_disk::reference_data().join("disksim-valid");
        for f in ["cheetah9LP.parv", "cheetah9LP.diskspecs", "cheetah9LP.model", "cheetah9LP.seek"] {
            std::fs::copy(valid.join(f), d.join(f)).unwrap();
        }
        let p = write(&d, "job = \"small.fio\"\n[grid]\nscheduler = [\"noop\"]\ndisk = [\"hd080hj\", \"cheetah9LP.parv\"]\n");
        let s = Sweep::load(&p).unwrap();
        assert_eq!(s.values(1), ["cheetah9LP.parv", "process", "", "noop", "1"]);
        assert_eq!(
            s.disks["cheetah9LP.parv"],
            headway_disk::import_disksim(&d.join("cheetah9LP.parv")).unwrap()
        );
        let p = write(&d, "job = \"small.fio\"\n[grid]\nscheduler = [\"noop\"]\ndisk = [\"floppy\"]\n");
        let e = Sweep::load(&p).unwrap_err().to_string();
        let want = headway_disk::resolve("floppy").unwrap_err().to_string();
        assert_eq!(e, format!("{}:4: key `grid.disk`: {want}", p.display()));
        let p = write(&d, "job = \"small.fio\"\n[grid]\nscheduler = [\"noop\"]\ndisk = [\"gone.parv\"]\n");
        let e = Sweep::load(&p).unwrap_err().to_string();
        assert!(
            e.contains(&format!("key `grid.disk`: importing {}: ", d.join("gone.parv").display())),
            "{e}"
        );
    }
}

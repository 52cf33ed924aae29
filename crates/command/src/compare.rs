//! `headway compare JOB --serve-model MODEL`: the same fio job simulated and measured.
//!
//! For each scheduler, three runs of the job file:
//! 1. **simulated**: `headway simulate` on MODEL (each fio job a client, `--context process`
//!    for the server's `connection`, `none` for `none`);
//! 2. **served**: real fio with its `nbd` engine against `headway serve --backend
//!    emulated:MODEL` on a Unix socket (the job file rewritten for the engine: `ioengine=nbd`
//!    and the socket's URI; `filename`, `direct`, the logs and `ioscheduler` dropped), the
//!    server tracing every request (`--trace`, blkparse form);
//! 3. **simulated + link**: the simulation again with what lies between a completion and
//!    the client's next request on the served path, given to the model as `host_overhead`
//!    (the model's default, 20 us, is a local system call's): the client's round trip the
//!    trace shows (per connection, the time from a reply leaving the server to the client's
//!    next request arriving while the client had nothing else in flight; the median) plus
//!    the server's reply lag (how long after the model's completion time a reply was handed
//!    to its socket: the delay line's timer lateness, the scheduler's turn and the hand-off
//!    to the connection's writer; the median the server logs at exit).
//!
//! It prints the bandwidth of each job (clones summed by name) in all three and the ratios
//! served / simulated; `--json OUT` writes them. Jobs must be direct (`direct=1`): NBD has
//! no page cache on the client, the simulator's buffered jobs have one.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration as StdDuration, Instant};

use anyhow::{bail, Context, Result};

use headway_sched::Duration;
use headway_sim::fio::{self, JobFile};
use headway_sim::{RunSpec, SimConfig};

use crate::run_args::RunArgs;

#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// fio job file (direct I/O: `direct=1`)
    pub jobfile: PathBuf,
    /// The emulated drive: a `headway disks` name or a DiskSim .parv/.diskspecs file
    #[arg(long, value_name = "MODEL")]
    pub serve_model: String,
    /// Schedulers, comma-separated (default: noop,deadline,stream,as)
    #[arg(long, value_delimiter = ',')]
    pub scheduler: Vec<String>,
    /// What the server's scheduler learns of the clients: connection (each fio job one
    /// client; the simulation's `process`) | none
    #[arg(long, default_value = "connection")]
    pub context: String,
    /// Run every job for this long instead of the job file's own length (e.g. 5s): the jobs
    /// become time_based
    #[arg(long, value_parser = humantime::parse_duration)]
    pub runtime: Option<StdDuration>,
    /// Commands the emulated and the simulated drive queue
    #[arg(long, default_value_t = 1)]
    pub queue_depth: u32,
    /// A scheduler tunable for both: --set antic_expire=2ms (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Write the figures as JSON here (`-`: standard output, without the table)
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Keep the served runs' files (the rewritten job file, fio's JSON, the server's trace
    /// and log) in DIR
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

/// One job's bandwidth (clones summed), bytes/s.
#[derive(Clone, Debug)]
struct JobRow {
    job: String,
    simulated: f64,
    linked: f64,
    served: f64,
}

struct RunRow {
    scheduler: String,
    /// The measured client round trip (median), ns, and how many gaps it is the median of;
    /// the server's median reply lag, ns. Their sum is the model's `host_overhead` in the
    /// linked run.
    client_ns: u64,
    gaps: usize,
    lag_ns: u64,
    jobs: Vec<JobRow>,
}

pub(crate) fn run(a: CompareArgs) -> Result<()> {
    let mut jobfile = fio::parse_file(&a.jobfile)?;
    if let Some(j) = jobfile.jobs.iter().find(|j| !j.direct) {
        bail!(
            "{}: job `{}` is buffered: compare serves the job over NBD, which has no page cache on \
             the client; set direct=1",
            j.origin,
            j.name
        );
    }
    if let Some(rt) = a.runtime {
        for j in &mut jobfile.jobs {
            j.runtime = Some(Duration(rt.as_nanos() as u64));
            j.time_based = true;
        }
    }
    let sim_context = match a.context.as_str() {
        "connection" => "process",
        "none" => "none",
        other => bail!("--context `{other}`: expected connection or none"),
    };
    let schedulers = if a.scheduler.is_empty() {
        ["noop", "deadline", "stream", "as"].map(String::from).to_vec()
    } else {
        a.scheduler.clone()
    };
    let run_args = |extra: &[String]| -> Result<RunSpec> {
        let mut set = a.set.clone();
        set.extend_from_slice(extra);
        RunArgs::for_compare(&a.serve_model, sim_context, set, a.queue_depth).spec()
    };
    let work = match &a.keep {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            d.clone()
        }
        None => scratch_dir()?,
    };
    let capacity = run_args(&[])?.capacity() * headway_sched::SECTOR_BYTES;
    let mut rows = Vec::new();
    for name in &schedulers {
        let spec = RunSpec { schedulers: vec![name.clone()], ..run_args(&[])? };
        let simulated = simulate(&jobfile, spec)?;
        eprintln!("{name}: serving the job through fio's nbd engine ...");
        let Served { per_job: served, trace, log } = serve_and_run(&a, &jobfile, name, capacity, &work)?;
        let (client_ns, gaps) = client_round_trip(&trace)?;
        let lag_ns = std::fs::read_to_string(&log).ok().and_then(|t| reply_lag_of(&t)).unwrap_or(0);
        let spec = RunSpec {
            schedulers: vec![name.clone()],
            ..run_args(&[format!("host_overhead={}ns", client_ns + lag_ns)])?
        };
        let linked = simulate(&jobfile, spec)?;
        let jobs = names(&jobfile)
            .into_iter()
            .map(|job| JobRow {
                simulated: sum_for(&simulated, &job),
                linked: sum_for(&linked, &job),
                served: sum_for(&served, &job),
                job,
            })
            .collect();
        rows.push(RunRow { scheduler: name.clone(), client_ns, gaps, lag_ns, jobs });
    }
    if a.keep.is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
    let to_stdout = a.json.as_deref().is_some_and(crate::is_stdout);
    if let Some(path) = &a.json {
        crate::write_output(path, json(&a, &rows))?;
    }
    if !to_stdout {
        print!("{}", table(&a, &rows));
    }
    Ok(())
}

/// The job names in file order (each once).
fn names(file: &JobFile) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for j in &file.jobs {
        if !out.contains(&j.name) {
            out.push(j.name.clone());
        }
    }
    out
}

fn sum_for(per_job: &[(String, f64)], job: &str) -> f64 {
    per_job.iter().filter(|(n, _)| n == job).map(|(_, b)| b).sum()
}

/// Per job clone: its name and bandwidth (read + write), bytes/s.
fn simulate(jobfile: &JobFile, spec: RunSpec) -> Result<Vec<(String, f64)>> {
    let report = headway_sim::simulate(&SimConfig { jobfile: jobfile.clone(), run: spec }, |_, _| {})?;
    Ok(report.runs[0]
        .jobs
        .iter()
        .map(|j| (j.jobname.clone(), (j.read.bw_bytes + j.write.bw_bytes) as f64))
        .collect())
}

fn scratch_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("headway-compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// The job file for fio's nbd engine on `socket`.
fn nbd_jobfile(file: &JobFile, socket: &Path, runtime: Option<StdDuration>) -> String {
    const DROPPED: &[&str] = &[
        "ioengine",
        "filename",
        "direct",
        "buffered",
        "ioscheduler",
        "write_iolog",
        "write_bw_log",
        "write_lat_log",
        "write_iops_log",
        "write_hist_log",
        "log_avg_msec",
        "log_hist_msec",
        "per_job_logs",
        "log_offset",
        "log_max_value",
    ];
    let timed: &[&str] = if runtime.is_some() { &["runtime", "time_based"] } else { &[] };
    let keep = |k: &str| !DROPPED.contains(&k) && !timed.contains(&k);
    let line = |(k, v): &(String, String)| if v.is_empty() { format!("{k}\n") } else { format!("{k}={v}\n") };
    let mut out = String::from("[global]\n");
    for kv in file.global_options.iter().filter(|(k, _)| keep(k)) {
        out.push_str(&line(kv));
    }
    out.push_str(&format!("ioengine=nbd\nuri=nbd+unix:///?socket={}\n", socket.display()));
    if let Some(rt) = runtime {
        out.push_str(&format!("runtime={}ms\ntime_based\n", rt.as_millis()));
    }
    for j in &file.jobs {
        out.push_str(&format!("[{}]\n", j.name));
        for kv in j.report.options.iter().filter(|(k, _)| keep(k)) {
            out.push_str(&line(kv));
        }
    }
    out
}

/// A server that is stopped (SIGTERM, then waited for) when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status();
        let deadline = Instant::now() + StdDuration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(StdDuration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What a served run left: per fio job entry its name and bandwidth; the server's trace and
/// log files.
struct Served {
    per_job: Vec<(String, f64)>,
    trace: PathBuf,
    log: PathBuf,
}

/// `headway serve` of an emulated `a.serve_model` under `scheduler`, real fio's run of the
/// job against it.
fn serve_and_run(
    a: &CompareArgs,
    jobfile: &JobFile,
    scheduler: &str,
    capacity: u64,
    work: &Path,
) -> Result<Served> {
    let tag = headway_sim::scheduler_tag(scheduler);
    let socket = work.join(format!("{tag}.sock"));
    let export = work.join("export.img");
    let trace = work.join(format!("{tag}.trace"));
    let _ = std::fs::remove_file(&socket);
    let log_path = work.join(format!("{tag}.serve.log"));
    let log = std::fs::File::create(&log_path)?;
    let mut cmd = Command::new(std::env::current_exe().context("finding the headway binary")?);
    cmd.args(["serve", "--export"])
        .arg(&export)
        .args(["--size", &capacity.to_string(), "--backend", &format!("emulated:{}", a.serve_model)])
        .args([
            "--scheduler",
            scheduler,
            "--context",
            &a.context,
            "--queue-depth",
            &a.queue_depth.to_string(),
        ])
        .arg("--unix")
        .arg(&socket)
        .arg("--trace")
        .arg(&trace);
    for s in &a.set {
        cmd.args(["--set", s]);
    }
    let child = cmd.stdout(Stdio::null()).stderr(log).spawn().context("starting headway serve")?;
    let mut server = Server(child);
    let deadline = Instant::now() + StdDuration::from_secs(20);
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        if let Some(status) = server.0.try_wait()? {
            bail!("headway serve exited ({status}): see {}", log_path.display());
        }
        if Instant::now() > deadline {
            bail!("headway serve did not listen on {} within 20 s", socket.display());
        }
        std::thread::sleep(StdDuration::from_millis(20));
    }
    let job = work.join(format!("{tag}.fio"));
    std::fs::write(&job, nbd_jobfile(jobfile, &socket, a.runtime))?;
    let out = Command::new("fio")
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .context("running fio (install it: make deps)")?;
    drop(server);
    let text = String::from_utf8_lossy(&out.stdout);
    std::fs::write(work.join(format!("{tag}.fio.json")), text.as_bytes())?;
    if !out.status.success() {
        bail!("fio failed on {}: {}", job.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    let start = text.find('{').context("fio printed no JSON")?;
    let v: serde_json::Value = serde_json::from_str(&text[start..]).context("reading fio's JSON")?;
    let jobs = v["jobs"].as_array().context("fio's JSON has no jobs")?;
    let per_job = jobs
        .iter()
        .map(|j| {
            let bw = |d: &str| j[d]["bw_bytes"].as_f64().unwrap_or(0.0);
            (j["jobname"].as_str().unwrap_or_default().to_string(), bw("read") + bw("write"))
        })
        .collect();
    Ok(Served { per_job, trace, log: log_path })
}

/// The clients' round trip from the server's blkparse trace ([`Served::client_round_trips`]):
/// the median (ns; the model's default when there is none) and how many there were.
///
/// [`Served::client_round_trips`]: headway_lab::served::Served::client_round_trips
fn client_round_trip(trace: &Path) -> Result<(u64, usize)> {
    let served = headway_lab::served::read_served(trace).map_err(anyhow::Error::msg)?;
    let gaps = served.client_round_trips();
    Ok(match gaps.len() {
        0 => (headway_sim::workload::HOST_OVERHEAD.0, 0),
        n => (gaps[n / 2], n),
    })
}

/// The server's median reply lag from its log (the line `replies after the model's done`,
/// `... p50 35.5 µs ...`), ns.
fn reply_lag_of(log: &str) -> Option<u64> {
    let line = log.lines().rfind(|l| l.contains("replies after the model's done"))?;
    let at = line.find(" p50 ")? + " p50 ".len();
    let rest = &line[at..];
    let num: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    rest[num.len()..].trim_start().starts_with("µs").then_some(())?;
    Some((num.parse::<f64>().ok()? * 1e3).round() as u64)
}

fn mb(b: f64) -> f64 {
    b / 1e6
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

fn table(a: &CompareArgs, rows: &[RunRow]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} on {}: simulated, simulated with the measured client round trip (+link), and served \
         (fio's nbd engine on headway serve)",
        a.jobfile.display(),
        a.serve_model
    );
    let _ = writeln!(
        out,
        "{:<18} {:<14} {:>10} {:>10} {:>10} {:>11} {:>12} {:>10} {:>8}",
        "scheduler",
        "job",
        "sim MB/s",
        "+link",
        "served",
        "served/sim",
        "served/+link",
        "client us",
        "lag us"
    );
    for r in rows {
        let total = |f: fn(&JobRow) -> f64| r.jobs.iter().map(f).sum::<f64>();
        let mut lines: Vec<(String, f64, f64, f64)> =
            r.jobs.iter().map(|j| (j.job.clone(), j.simulated, j.linked, j.served)).collect();
        if r.jobs.len() > 1 {
            lines.push(("(all)".into(), total(|j| j.simulated), total(|j| j.linked), total(|j| j.served)));
        }
        for (job, s, l, v) in lines {
            let _ = writeln!(
                out,
                "{:<18} {:<14} {:>10.2} {:>10.2} {:>10.2} {:>10.2}x {:>11.2}x {:>10.1} {:>8.1}",
                r.scheduler,
                job,
                mb(s),
                mb(l),
                mb(v),
                ratio(v, s),
                ratio(v, l),
                r.client_ns as f64 / 1e3,
                r.lag_ns as f64 / 1e3
            );
        }
    }
    out
}

fn json(a: &CompareArgs, rows: &[RunRow]) -> String {
    let runs: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "scheduler": r.scheduler,
                "client_round_trip_ns": r.client_ns,
                "client_round_trips": r.gaps,
                "reply_lag_ns": r.lag_ns,
                "host_overhead_ns": r.client_ns + r.lag_ns,
                "jobs": r.jobs.iter().map(|j| serde_json::json!({
                    "job": j.job,
                    "simulated_bw_bytes": j.simulated,
                    "linked_bw_bytes": j.linked,
                    "served_bw_bytes": j.served,
                    "served_over_simulated": ratio(j.served, j.simulated),
                    "served_over_linked": ratio(j.served, j.linked),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let v = serde_json::json!({
        "headway_version": env!("CARGO_PKG_VERSION"),
        "jobfile": a.jobfile.display().to_string(),
        "model": a.serve_model,
        "context": a.context,
        "queue_depth": a.queue_depth,
        "runtime_ms": a.runtime.map(|d| d.as_millis() as u64),
        "runs": runs,
    });
    serde_json::to_string_pretty(&v).expect("serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reply_lag_is_the_median_the_server_logs() {
        let log = "delay line lateness=71567 releases, lateness mean 15.5 µs, p50 < 0.064 µs\n\
                   \x1b[2mserver\x1b[0m replies after the model's done lag=71567 replies, mean 35.2 µs, p50 21.7 µs, p90 40.1 µs\n";
        assert_eq!(reply_lag_of(log), Some(21_700));
        assert_eq!(reply_lag_of("delay line lateness=1 releases, lateness mean 15.5 µs"), None);
    }

    #[test]
    fn the_nbd_job_file_keeps_the_workload_and_swaps_the_engine() {
        let f = fio::parse_str(
            "[global]\nioengine=psync\ndirect=1\nbs=4k\nfilename=/dev/sdb\n[r]\nrw=read\nsize=1g\nruntime=9\n\
             write_bw_log=x\n; @headway weight=2\n",
            "t.fio",
        )
        .unwrap();
        let text = nbd_jobfile(&f, Path::new("/tmp/s.sock"), Some(StdDuration::from_secs(2)));
        assert_eq!(
            text,
            "[global]\nbs=4k\nioengine=nbd\nuri=nbd+unix:///?socket=/tmp/s.sock\nruntime=2000ms\ntime_based\n\
             [r]\nrw=read\nsize=1g\n"
        );
    }
}

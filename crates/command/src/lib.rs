//! `headway`: the command-line face of headway. Argument parsing and glue only; the work is
//! in headway-sched (schedulers), headway-disk (drive models), headway-sim (simulator),
//! headway-nbd (the server), headway-lab (real guests) and headway-validate (DiskSim
//! validation).
//!
//! The whole program is [`main`], a library function, so that two leaves run the same
//! program: the cargo-built binary (crates/cli, a wrapper of a few lines) and the Python
//! package's `headway` console script, in-process (crates/py). Neither depends on the
//! other. Subcommand modules are declared here.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use headway_sim::{fio, simulate, SimConfig};

pub(crate) use run_args::parse_settings;
use run_args::RunArgs;

mod compare;
mod lab;
mod lab_model;
mod replay;
mod reproduce;
mod run_args;
mod simulate;
mod sweep;
mod validate;

/// Non-work-conserving disk I/O scheduling: simulate fio jobs on modelled hard disks.
#[derive(Parser)]
#[command(name = "headway", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a fio job file on a modelled disk, once per scheduler, and compare.
    Simulate {
        /// fio job file (or fio's own command-line options after `--`:
        /// `headway simulate -- --name=job --rw=randread --bs=4k --size=1g`)
        #[arg(required_unless_present = "fio_args")]
        jobfile: Option<PathBuf>,
        #[command(flatten)]
        run: RunArgs,
        /// Write fio-shaped JSON results here (`-`: standard output, without the table)
        #[arg(long)]
        json: Option<PathBuf>,
        /// Draw throughput per scheduler to FILE.svg or FILE.png
        #[arg(long, value_name = "FILE")]
        plot: Option<PathBuf>,
        /// Write every job request as a CSV row to FILE (scheduler, job_index, job, dir, offset,
        /// bytes, submit_ns, complete_ns, latency_ns), streamed as the runs complete them
        #[arg(long, value_name = "FILE")]
        per_request: Option<PathBuf>,
        /// Do not print the comparison table
        #[arg(long)]
        quiet: bool,
        /// Print fio's own output for each scheduler run: normal, terse, json or json+ (a
        /// comma-separated list, as fio's); to standard output unless --output is given
        #[arg(long, value_name = "FORMATS")]
        output_format: Option<String>,
        /// Write fio's output (normal unless --output-format says) to FILE, one file per
        /// scheduler when several run (FILE.SCHEDULER); `-`: standard output
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// fio command-line options instead of a job file, after `--` (options before the
        /// first `--name` are global, each `--name=JOB` starts a job)
        #[arg(last = true, value_name = "FIO OPTIONS")]
        fio_args: Vec<String>,
    },
    /// The same fio job simulated and served: real fio's nbd engine against `headway serve
    /// --backend emulated:MODEL`, side by side per scheduler, with the client round trip
    /// measured and given to the model
    Compare(compare::CompareArgs),
    /// Replay a block trace (blkparse, fio iolog, MSR, SPC, DiskSim, FIU) on a modelled disk,
    /// once per scheduler, and compare.
    Replay(replay::ReplayArgs),
    /// List the built-in drive models with their parameters and sources.
    Disks {
        /// Show every parameter of one model (a built-in name, or a DiskSim .parv/.diskspecs
        /// file as imported)
        name: Option<String>,
        /// Print the model's full parameter set as JSON
        #[arg(long, requires = "name")]
        json: bool,
        /// Print the model's calibrated service-time curve as the kernel `stream` elevator
        /// reads it: one `distance_sectors service_ns` pair a line, for
        /// /sys/block/DEV/queue/iosched/estimator_table
        #[arg(long, requires = "name", conflicts_with = "json")]
        estimator_table: bool,
    },
    /// List scheduler names (one a line; --long: with kind, whether it waits, the tunables it
    /// reads and a line about it).
    Schedulers {
        /// A table: name, kind (policy | framework | standalone), waits, tunables, about
        #[arg(long, short)]
        long: bool,
    },
    /// List tunables (name, unit, default, who reads it).
    Tunables,
    /// Measure simulated requests per second (wall clock) on a fixed workload.
    Bench {
        /// Requests to simulate per scheduler
        #[arg(long, default_value_t = 1_000_000)]
        requests: u64,
        /// The drive, the schedulers to measure and the rest (`--array`: requests/s counts
        /// array requests)
        #[command(flatten)]
        run: RunArgs,
    },
    /// Export a file over NBD and schedule its real I/O with a headway scheduler.
    Serve(ServeArgs),
    /// Real Linux guests under QEMU on `headway serve` disks: `headway lab run SPEC`.
    Lab(lab::LabArgs),
    /// Measure service time against seek distance on a device or file (O_DIRECT) and write
    /// the fitted curve for `headway serve --estimator FILE`.
    Calibrate(CalibrateArgs),
    /// Reproduce a figure of the seed papers: JSON, SVG and PNG plots, and a Markdown report
    /// with the paper's numbers beside headway's and a verdict on the shape.
    Reproduce(reproduce::ReproduceArgs),
    /// Run a grid of simulations (schedulers, tunables, disks, contexts, thinktimes, seeds)
    /// from a TOML sweep file; one CSV table, one row per point x job, in grid order.
    Sweep(sweep::SweepArgs),
    /// Replay a DiskSim validation trace on a drive and report DiskSim's demerit figure (or
    /// every NAME.parv + NAME.trace pair of a directory: `headway validate DIR`).
    Validate {
        /// The drive: a DiskSim .parv or .diskspecs file (or a built-in model name); or a
        /// directory, to score each NAME.parv in it against NAME.trace
        parv: String,
        /// Measured trace: `R|W Hit|Miss blkno bcount service_us next_interarrival_us`
        /// (omitted when PARV is a directory)
        trace: Option<PathBuf>,
        /// Write {"drive", "requests", "demerit_ms", "demerit_binned_ms", "mean_simulated_ms",
        /// "mean_measured_ms"} here (a list of them for a directory; `-`: standard output,
        /// without the table)
        #[arg(long)]
        json: Option<PathBuf>,
        /// Draw the simulated and measured service-time CDFs to FILE.svg or FILE.png
        #[arg(long, value_name = "FILE")]
        plot: Option<PathBuf>,
        /// Write one CSV row a request (trace line, direction, class, blkno, bcount, measured and
        /// simulated ms, model cache hit, same cylinder as the previous request, cylinders sought) to FILE
        #[arg(long, value_name = "FILE")]
        per_request: Option<PathBuf>,
    },
}

/// Run the `headway` command with `args` (the program name first, as `std::env::args_os`):
/// what the binary's `main` calls. See [`status`].
pub fn main<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    ExitCode::from(status(args))
}

/// [`main`] with the exit status as a number, for the Python console script. Usage errors
/// give 2 with clap's message, `--help` and `--version` 0, a failed command 2 with its
/// error chain on stderr.
pub fn status<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let code = match Cli::try_parse_from(args) {
        Err(e) => {
            let _ = e.print();
            u8::try_from(e.exit_code()).unwrap_or(2)
        }
        Ok(cli) => match run(cli) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("headway: error: {e}");
                for cause in e.chain().skip(1) {
                    eprintln!("  caused by: {cause}");
                }
                2
            }
        },
    };
    // Embedded in Python, nothing flushes Rust's stdout at exit.
    let _ = std::io::stdout().flush();
    code
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Simulate { jobfile, run, json, plot, per_request, quiet, output_format, output, fio_args } => {
            simulate::run(simulate::Args {
                jobfile,
                run,
                json,
                plot,
                per_request,
                quiet,
                output_format,
                output,
                fio_args,
            })
        }
        Cmd::Compare(a) => compare::run(a),
        Cmd::Disks { name, json, estimator_table } => {
            match name {
                None => {
                    for n in headway_disk::builtin_names() {
                        let d = headway_disk::builtin(n).expect("listed model exists");
                        println!("{n:<14} {}", d.description);
                    }
                    println!(
                        "\n`headway disks NAME` shows a model's parameters and their sources (NAME may be a DiskSim .parv/.diskspecs file)."
                    );
                }
                Some(n) => {
                    let d = headway_disk::resolve(&n)?;
                    if estimator_table {
                        print!("{}", kernel_table(&headway_sim::calibrate::curve_for(&d))?);
                    } else if json {
                        println!("{}", serde_json::to_string_pretty(&d)?);
                    } else {
                        print!("{}", d.summary());
                        print!("{}", trace_system_summary(&n)?);
                    }
                }
            }
            Ok(())
        }
        Cmd::Bench { requests, run } => bench(requests, &run.disk, run.spec()?),
        Cmd::Serve(args) => serve(args),
        Cmd::Lab(args) => lab::run(args),
        Cmd::Replay(args) => replay::run(args),
        Cmd::Reproduce(args) => reproduce::run(args),
        Cmd::Sweep(args) => sweep::run(args),
        Cmd::Calibrate(args) => calibrate(args),
        Cmd::Validate { parv, trace, json, plot, per_request } => {
            validate::run(&parv, trace.as_deref(), json.as_ref(), plot.as_deref(), per_request.as_deref())
        }
        Cmd::Schedulers { long: false } => {
            for n in headway_sched::scheduler_names() {
                println!("{n}");
            }
            Ok(())
        }
        Cmd::Schedulers { long: true } => {
            print!("{}", schedulers_table());
            Ok(())
        }
        Cmd::Tunables => {
            println!("{:<24} {:<30} {:<10} {:<22} doc", "name", "unit", "default", "read by");
            let scheds =
                headway_sched::tunables().into_iter().map(|t| (headway_sched::registry::readers(&t), t));
            let host = headway_sim::host::TUNABLES.iter().map(|t| ("page cache".to_string(), *t));
            for (readers, t) in scheds.chain(host) {
                println!(
                    "{:<24} {:<30} {:<10} {:<22} {}",
                    t.name,
                    t.unit.to_string(),
                    t.default_text(),
                    readers,
                    t.doc
                );
            }
            Ok(())
        }
    }
}

/// Whether an output path names standard output (`-`).
pub(crate) fn is_stdout(path: &std::path::Path) -> bool {
    path.as_os_str() == "-"
}

/// Write `contents` to `path`, creating its directory; `-` is standard output.
pub(crate) fn write_output(path: &std::path::Path, contents: impl AsRef<[u8]>) -> Result<()> {
    if is_stdout(path) {
        let mut out = std::io::stdout().lock();
        out.write_all(contents.as_ref()).context("writing to standard output")?;
        return out.flush().context("writing to standard output");
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}

/// Run `f` with a progress bar that appears only once the work has taken two seconds.
pub(crate) fn with_progress<T>(runs: usize, f: impl FnOnce(&mut dyn FnMut(usize, f64)) -> T) -> T {
    let start = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    let total = (runs as u64) * 1000;
    let mut cb = |run: usize, frac: f64| {
        if bar.is_none() && start.elapsed().as_secs_f64() > 2.0 {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {percent}% run {msg}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_message(format!("{}/{}", run + 1, runs));
            b.set_position(run as u64 * 1000 + (frac.clamp(0.0, 1.0) * 1000.0) as u64);
        }
    };
    let out = f(&mut cb);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    out
}

/// The benchmark workload: 4 synchronous jobs, half sequential, half random 4 KiB reads,
/// `requests` in all.
/// `headway schedulers --long`: a row per name of the table, framework names with their
/// policies.
fn schedulers_table() -> String {
    use std::fmt::Write;
    let mut out =
        format!("{:<22} {:<11} {:<6} about (below: the tunables it reads)\n", "name", "kind", "waits");
    for n in headway_sched::scheduler_names() {
        let r = headway_sched::table::resolve(&n).expect("listed names resolve");
        let tunables: Vec<&str> = r.tunables().iter().map(|t| t.name).collect();
        let tunables = if tunables.is_empty() { "-".to_string() } else { tunables.join(", ") };
        let waits = if r.row.waits() { "yes" } else { "no" };
        let _ = writeln!(out, "{:<22} {:<11} {:<6} {}", n, r.row.kind_name(), waits, r.row.about);
        let _ = writeln!(out, "{:<41} {}", "", tunables);
    }
    out
}

fn bench_jobfile(requests: u64) -> Result<fio::JobFile> {
    let per_job = requests / 4 * 4096;
    let text = format!(
        "[global]\nioengine=psync\ndirect=1\nbs=4k\nsize=40g\nio_size={per_job}\n\
         [seq]\nrw=read\nnumjobs=2\noffset_increment=100g\n\
         [rand]\nrw=randread\nnumjobs=2\noffset=200g\noffset_increment=100g\n"
    );
    Ok(fio::parse_str(&text, "<bench>")?)
}

fn bench(requests: u64, disk: &str, spec: headway_sim::RunSpec) -> Result<()> {
    let (drive, array) = (spec.drive, spec.array);
    let on = array.map_or(disk.to_string(), |a| format!("{a} of {disk}"));
    println!(
        "workload: {requests} requests (2 sequential + 2 random 4 KiB synchronous readers) on {on}, \
         queue depth {} ({}), write-{}",
        drive.queue_depth,
        drive.scheduler.name(),
        drive.write_cache.name()
    );
    println!("{:<22} {:>12} {:>14} {:>12}", "scheduler", "wall s", "requests/s", "sim time s");
    for name in &spec.schedulers {
        let cfg = SimConfig {
            jobfile: bench_jobfile(requests)?,
            run: headway_sim::RunSpec { schedulers: vec![name.clone()], ..spec.clone() },
        };
        let t0 = Instant::now();
        let report = simulate(&cfg, |_, _| {})?;
        let wall = t0.elapsed().as_secs_f64();
        let run = &report.runs[0];
        let flow = &run.device.requests_in;
        let n = if array.is_some() { flow.reads + flow.writes } else { run.device.requests };
        println!(
            "{:<22} {:>12.3} {:>14.0} {:>12.1}",
            run.scheduler,
            wall,
            n as f64 / wall,
            run.aggregate.runtime_ns as f64 * 1e-9
        );
    }
    Ok(())
}

/// `headway serve`: flags of the NBD server (headway-nbd does the work).
#[derive(clap::Args)]
struct ServeArgs {
    /// File (or block device) to export
    #[arg(long)]
    export: PathBuf,
    /// Export size (e.g. 1G): creates the file or extends it; without it, the file's size
    #[arg(long, allow_hyphen_values = true)]
    size: Option<String>,
    /// Where requests go: file (through the page cache) | direct (O_DIRECT: a block device
    /// or a file on a file system that allows it) | emulated:MODEL (a file timed by a drive
    /// model: a `headway disks` name or a DiskSim .parv/.diskspecs file, as `--disk` takes
    /// it; the export may not exceed the model's capacity)
    #[arg(long, default_value = "file")]
    backend: String,
    /// Scheduler (see `headway schedulers`). Default: stream for a disk (`direct`,
    /// `emulated:MODEL`, or any export with --estimator); noop for a `file` export, whose
    /// page cache answers in microseconds, where neither waiting nor sorting pays
    #[arg(long)]
    scheduler: Option<String>,
    /// Override a tunable: --set antic_expire=2ms (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// TCP address to listen on (default 127.0.0.1:10809, NBD's port)
    #[arg(long, value_name = "ADDR:PORT", conflicts_with = "unix")]
    listen: Option<String>,
    /// Unix socket to listen on instead of TCP
    #[arg(long, value_name = "PATH")]
    unix: Option<PathBuf>,
    /// What the scheduler learns about who issued a request: connection | none
    #[arg(long, default_value = "connection")]
    context: String,
    /// Refuse writes (EPERM)
    #[arg(long)]
    read_only: bool,
    /// Export name (clients asking for the default export "" get it too)
    #[arg(long, default_value = "")]
    name: String,
    /// Scheduled requests at the backend at once; 1 lets the scheduler alone pick the order.
    /// With `emulated:MODEL` the modelled drive queues that many commands and picks among
    /// them (its SPTF), as a drive with command queueing does. Default: 1 for a waiting
    /// scheduler or `emulated:MODEL`; for a `file` export four per CPU (8-32); for `direct`
    /// on a block device its own queue depth (at most 32); the start-up log says which
    #[arg(long, value_name = "N")]
    queue_depth: Option<u32>,
    /// Service curve to price head moves with, written by `headway calibrate` (default: the
    /// emulated model's, or the wd5000aaks model's for a file export)
    #[arg(long, value_name = "FILE")]
    estimator: Option<PathBuf>,
    /// Log a statistics line this often (IOPS, bandwidth, latency percentiles, idle-wait
    /// time), and one for the whole run at exit: e.g. 5s, 500ms, 1m
    #[arg(long, value_name = "INTERVAL", value_parser = humantime::parse_duration)]
    stats: Option<std::time::Duration>,
    /// The emulated drive's write cache (emulated:MODEL only): through (default: a write
    /// completes on the media) | back (it completes in the buffer, FLUSH and FUA wait for
    /// the destage)
    #[arg(long, default_value = "through", value_name = "back|through")]
    write_cache: String,
    /// Record every request (arrival, dispatch, completion) to OUT as the server runs, for
    /// `headway replay OUT --format F`
    #[arg(long, value_name = "OUT")]
    trace: Option<PathBuf>,
    /// The trace's form: blkparse (Q, D and C lines) | iolog (fio iolog v3, arrivals only)
    #[arg(long, default_value = "blkparse", value_name = "blkparse|iolog", requires = "trace")]
    trace_format: String,
    /// Connections past their handshake served at once; more are closed as they arrive,
    /// with a log line (a connection is a task on the I/O threads, not a thread of its own)
    #[arg(long, value_name = "N", default_value_t = headway_nbd::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// The server's memory, e.g. 512M: 48 MiB for the server itself, the rest for request
    /// data (WRITE payloads, READ buffers, replies not yet written) of all connections; past
    /// it, connections are not read until replies give memory back (default: an eighth of
    /// the machine's memory, at most a quarter of an address-space limit, within 112 MiB and
    /// 4 GiB; the start-up log says which)
    #[arg(long, value_name = "SIZE")]
    max_memory: Option<String>,
    /// Connections in their handshake at once, apart from --max-connections: when all
    /// are taken, a new connection closes the oldest one still in its handshake, so
    /// silent connections cannot keep prompt clients out
    #[arg(long, value_name = "N", default_value_t = headway_nbd::DEFAULT_MAX_HANDSHAKES as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_handshakes: u64,
    /// A client that has not finished its handshake this long after connecting is
    /// disconnected: e.g. 10s, 500ms
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration, default_value = "10s")]
    handshake_timeout: std::time::Duration,
    /// Threads that read requests and write replies for all connections (default: one per
    /// CPU, at most 4)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    io_threads: Option<u16>,
    /// Connections served by two threads of their own (a reader and a writer: the quickest
    /// for a few busy clients) while fewer are; the others, however many, are tasks on the
    /// I/O threads
    #[arg(long, value_name = "N", default_value_t = headway_nbd::server::DEFAULT_CONNECTION_THREADS)]
    connection_threads: usize,
    /// At shutdown (SIGINT/SIGTERM), how long connections may take to finish before their
    /// sockets are closed under them: e.g. 10s, 500ms
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration,
          default_value = "10s")]
    shutdown_grace: std::time::Duration,
    /// TLS (NBD's STARTTLS): off, on (for clients that ask) or require (no export without
    /// it)
    #[arg(long, default_value = "off", value_name = "off|on|require")]
    tls: headway_nbd::TlsMode,
    /// The server's certificate chain (PEM), with --tls-key
    #[arg(long, value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM)
    #[arg(long, value_name = "FILE")]
    tls_key: Option<PathBuf>,
    /// CA certificates (PEM) that client certificates must chain to (with --tls-verify-peer)
    #[arg(long, value_name = "FILE")]
    tls_ca: Option<PathBuf>,
    /// Every client must present a certificate signed by --tls-ca
    #[arg(long)]
    tls_verify_peer: bool,
    /// Pre-shared keys: `identity:hexkey` lines, as `psktool` writes them
    #[arg(long, value_name = "FILE")]
    tls_psk: Option<PathBuf>,
    /// The Unix socket's permission bits, in octal (e.g. 0660; default: as the umask
    /// leaves them)
    #[arg(long, value_name = "MODE", requires = "unix", value_parser = parse_mode)]
    socket_mode: Option<u32>,
}

/// A size option (`--size 64G`, `--probe-bytes 4K`): `headway_sched::units`, `k` = `KiB` =
/// 1024.
fn size_option(s: &str) -> Result<u64> {
    Ok(headway_sched::units::parse_size(s, headway_sched::units::SizeBase::Binary)?)
}

/// An octal permission mode: `0660`, `660`, `0o660`.
fn parse_mode(s: &str) -> std::result::Result<u32, String> {
    let digits = s.strip_prefix("0o").unwrap_or(s);
    match u32::from_str_radix(digits, 8) {
        Ok(m) if m <= 0o7777 => Ok(m),
        _ => Err(format!("`{s}`: give permission bits in octal, e.g. 0660")),
    }
}

/// `serve`'s scheduler when none is given, and why.
fn default_scheduler(backend: &headway_nbd::BackendKind, calibrated: bool) -> (&'static str, &'static str) {
    match backend {
        headway_nbd::BackendKind::File if !calibrated => (
            "noop",
            "the default for a file export: its page cache answers in microseconds, where neither \
             waiting for a disk's next nearby request nor sorting pays",
        ),
        headway_nbd::BackendKind::File => ("stream", "the default with a calibrated service curve"),
        _ => ("stream", "the default for a disk"),
    }
}

fn serve(a: ServeArgs) -> Result<()> {
    use headway_nbd::{
        BackendKind, ContextMode as Ctx, Listen, ServeConfig, Server, TraceConfig, TraceFormat,
    };
    // First, so that a bad curve file stops the server before it listens.
    let curve = a
        .estimator
        .as_deref()
        .map(headway_nbd::calibrate::load)
        .transpose()
        .context("--estimator: cannot use the service curve")?;
    // Before any thread starts, so that every thread inherits the blocked signals.
    let shutdown = headway_nbd::signal::shutdown_on_signals().context("installing signal handling")?;
    // colour only for a terminal: a log written to a file or a pipe stays plain text
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .try_init();
    let listen = match (a.unix, a.listen) {
        (Some(p), _) => Listen::Unix(p),
        (None, l) => Listen::Tcp(l.unwrap_or_else(|| "127.0.0.1:10809".into())),
    };
    let mut cfg = ServeConfig::new(a.export, listen);
    cfg.size = a.size.as_deref().map(size_option).transpose().context("--size")?;
    cfg.backend = a.backend.parse::<BackendKind>().map_err(anyhow::Error::msg)?;
    // said once the server is bound: an error is not preceded by it
    let mut chosen = None;
    cfg.scheduler = match a.scheduler {
        Some(s) => s,
        None => {
            let (s, why) = default_scheduler(&cfg.backend, curve.is_some());
            chosen = Some(format!("headway: scheduler {s} ({why}; --scheduler chooses another)"));
            s.to_string()
        }
    };
    cfg.settings = parse_settings(&a.set)?;
    cfg.context = a.context.parse::<Ctx>().map_err(anyhow::Error::msg)?;
    cfg.read_only = a.read_only;
    cfg.name = a.name;
    cfg.queue_depth = a.queue_depth;
    cfg.curve = curve;
    cfg.stats_interval = a.stats;
    cfg.write_cache = a.write_cache.parse().map_err(|e| anyhow::anyhow!("--write-cache: {e}"))?;
    let trace_format = a.trace_format.parse::<TraceFormat>().map_err(anyhow::Error::msg)?;
    cfg.trace = a.trace.map(|path| TraceConfig { path, format: trace_format });
    cfg.socket_mode = a.socket_mode;
    cfg.max_connections = a.max_connections;
    cfg.max_handshakes = a.max_handshakes as usize;
    cfg.max_memory = a.max_memory.as_deref().map(size_option).transpose().context("--max-memory")?;
    cfg.handshake_timeout = a.handshake_timeout;
    cfg.connection_threads = a.connection_threads;
    cfg.shutdown_grace = a.shutdown_grace;
    cfg.tls = headway_nbd::TlsConfig {
        mode: a.tls,
        cert: a.tls_cert.clone(),
        key: a.tls_key.clone(),
        ca: a.tls_ca.clone(),
        verify_peer: a.tls_verify_peer,
        psk: a.tls_psk.clone(),
    };
    if let Some(n) = a.io_threads {
        cfg.io_threads = n as usize;
    }
    let server = Server::bind(cfg)?;
    if let Some(line) = chosen {
        eprintln!("{line}");
    }
    eprintln!("headway: serving on {}", server.local_addr());
    server.run(shutdown)?;
    Ok(())
}

/// `headway calibrate`: flags of the service-curve measurement (headway-nbd does the work).
#[derive(clap::Args)]
struct CalibrateArgs {
    /// Block device or file to measure (read only; a file should be fully written, not
    /// sparse, and on the disk to be scheduled)
    path: PathBuf,
    /// Where to write the curve file
    #[arg(long, value_name = "FILE", default_value = headway_nbd::calibrate::DEFAULT_OUT)]
    out: PathBuf,
    /// Probe pairs to time
    #[arg(long, value_name = "N", default_value_t = headway_nbd::calibrate::DEFAULT_SAMPLES)]
    samples: usize,
    /// Bytes per probe read, a multiple of 4K (e.g. 4096, 64K)
    #[arg(long, value_name = "N", default_value = "4K")]
    probe_bytes: String,
    /// Seed of the probe offsets and their order
    #[arg(long, value_name = "S", default_value_t = headway_nbd::calibrate::DEFAULT_SEED)]
    seed: u64,
    /// Read through the page cache instead of O_DIRECT, for filesystems that refuse it
    /// (tmpfs): this measures the page cache, not a disk
    #[arg(long)]
    buffered: bool,
    /// Also write the curve as the kernel `stream` elevator's table (one
    /// `distance_sectors service_ns` pair a line) to FILE, for
    /// /sys/block/DEV/queue/iosched/estimator_table
    #[arg(long, value_name = "FILE")]
    estimator_table: Option<PathBuf>,
}

/// Knots the kernel elevator's table holds at most (`SS_EST_MAX_KNOTS`, kernel/stream_core.h).
const KERNEL_TABLE_KNOTS: usize = 96;

/// A service curve as the kernel `stream` elevator's `estimator_table` reads it.
fn kernel_table(curve: &headway_sched::ServiceCurve) -> Result<String> {
    let k = curve.knots();
    if k.len() > KERNEL_TABLE_KNOTS {
        anyhow::bail!("the curve has {} knots; the kernel's table holds {KERNEL_TABLE_KNOTS}", k.len());
    }
    Ok(k.iter().map(|(d, t)| format!("{d} {t}\n")).collect())
}

fn calibrate(a: CalibrateArgs) -> Result<()> {
    use headway_nbd::calibrate::{probe, ProbeConfig};
    let bytes = size_option(&a.probe_bytes).context("--probe-bytes")?;
    let probe_bytes =
        u32::try_from(bytes).map_err(|_| anyhow::anyhow!("--probe-bytes {bytes}: too large"))?;
    let cfg = ProbeConfig { samples: a.samples, probe_bytes, seed: a.seed, buffered: a.buffered };
    let t0 = Instant::now();
    let cal = with_progress(1, |progress| {
        probe(&a.path, &cfg, |done| progress(0, done as f64 / cfg.samples as f64))
    })?;
    let file = cal.curve_file();
    println!(
        "{}: {} bytes, {} samples of {} bytes, {} ({:.1} s)",
        a.path.display(),
        cal.device_bytes,
        cal.samples.len(),
        cal.probe_bytes,
        if cal.direct { "O_DIRECT" } else { "buffered: page cache timings, not the disk's" },
        t0.elapsed().as_secs_f64()
    );
    if cal.sparse > 0 {
        eprintln!(
            "headway: warning: {} has {} unallocated bytes; holes are read without disk I/O, \
             so the curve understates the disk (write the file in full first)",
            a.path.display(),
            cal.sparse
        );
    }
    println!("{:>16} {:>14} {:>12}", "distance (sect)", "distance (B)", "time (ms)");
    for &(d, t) in file.curve.knots() {
        println!("{:>16} {:>14} {:>12.3}", d, d * headway_sched::SECTOR_BYTES, t as f64 * 1e-6);
    }
    file.save(&a.out)?;
    println!("wrote {} (use: headway serve --estimator {})", a.out.display(), a.out.display());
    if let Some(t) = &a.estimator_table {
        std::fs::write(t, kernel_table(&file.curve)?).with_context(|| format!("{}", t.display()))?;
        println!(
            "wrote {} (use: cat {} > /sys/block/DEV/queue/iosched/estimator_table)",
            t.display(),
            t.display()
        );
    }
    Ok(())
}

/// What `headway disks FILE.parv` adds for a DiskSim parameter file whose DiskSim traces
/// replay on several devices or through `disksim_iosim` maps: the devices in device-number
/// order, and the maps (empty for anything else).
fn trace_system_summary(disk: &str) -> Result<String> {
    use headway_disk::parv;
    use std::fmt::Write as _;
    if !parv::is_parameter_file(disk) {
        return Ok(String::new());
    }
    let (file, name) = parv::split_device(disk);
    let sys =
        parv::import_trace_system(std::path::Path::new(file), name).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut out = String::new();
    if let Some(reaches) = &sys.reaches {
        let _ = writeln!(
            out,
            "\nDiskSim traces (`replay --format disksim`) replay on {} devices:",
            sys.devices.len()
        );
        for (i, r) in reaches.iter().enumerate() {
            let _ = match r {
                Ok(d) => {
                    let (name, _, array) = &sys.devices[*d as usize];
                    let what = array.map_or_else(|| "drive".to_string(), |a| format!("array {a}"));
                    writeln!(out, "  device number {i:>3}: {name} ({what})")
                }
                Err(why) => writeln!(out, "  device number {i:>3}: none ({why})"),
            };
        }
    }
    if let Some(m) = &sys.mapping {
        let _ = writeln!(out, "\nTrace maps (disksim_iosim), time scale {}:", m.time_scale);
        for map in &m.maps {
            let loc = match map.loc {
                parv::LocScale::Same => "blocks as they are".to_string(),
                parv::LocScale::Times(k) => format!("blocks x {k}"),
                parv::LocScale::Divide(k) => format!("blocks / {k}"),
            };
            let _ = writeln!(
                out,
                "  trace device {:>3} (0x{:02x}) -> {} (device number {}): {loc}, counts x {}, offset {}",
                map.tracedev, map.tracedev, map.simdev, map.device, map.size_scale, map.offset
            );
        }
        if m.maps.is_empty() {
            let _ = writeln!(out, "  none: every device number is kept");
        }
        if sys.reaches.is_none() {
            let _ = writeln!(out, "  (one device: every request goes to it after its map)");
        }
    }
    Ok(out)
}

//! The server: threads, the scheduler loop, FLUSH/FUA.
//!
//! Threads and tasks:
//! * the I/O runtime (tokio, `--io-threads` threads, [`default_io_threads`]): the acceptor
//!   (a task that looks at the shutdown flag every [`ACCEPT_POLL`]) and one task per
//!   connection for its handshake. A connection costs a socket and a few KiB: thousands
//!   of idle or slow clients cannot exhaust the process's threads or memory;
//! * after the handshake, a connection gets two threads of its own (a reader and a reply
//!   writer, blocking on the socket) while fewer than `--connection-threads` have them
//!   ([`DEFAULT_CONNECTION_THREADS`]) and the system lets the server start them; every
//!   other connection stays a task (its reader waits for readability on the runtime, its
//!   writer is a task too). Both run the same code: the difference is how they wait. The
//!   threads are there for speed: a thread blocked on its socket is woken by the kernel
//!   directly, and the reader and writer of one busy connection run on two CPUs at once
//!   (1 MiB reads at iodepth 4: 4.3 GB/s on threads, 2.5 as tasks; see BENCHMARKS.md);
//! * per connection a `ReplySink`: whichever thread has a reply (a worker, the delay line,
//!   the reader) writes it onto the socket itself, without blocking, so replies go out in
//!   completion order with no thread hop; what the socket does not take at once goes, in
//!   order, to the connection's writer. A connection whose unanswered requests hold its
//!   data budget is not read until replies give some back;
//! * no scheduler thread: the export's scheduling core (`crate::core`) is a mutex that
//!   whichever thread has an event locks — the reader with an arrival, the thread that
//!   finished a request with its completion — and one timer thread per export serves
//!   `Decision::WaitUntil(t)` (a condition-variable wait with a nanosecond deadline:
//!   sub-millisecond, unlike tokio's 1 ms timer wheel);
//! * a connection's reader runs the backend operation of a request the scheduler dispatches at its
//!   arrival itself (`file` and `emulated:MODEL`, whose operations are page-cache fast), so
//!   an idle export serves a request with no thread hop at all; other dispatches (after a
//!   completion or a wait, and every `direct` one, which can block on a disk) go to a pool
//!   of backend workers doing `pread`/`pwrite`/`fdatasync`;
//! * with `emulated:MODEL`, a delay line ([`crate::backend::DelayLine`]) holding each
//!   dispatched request's replies and its completion until the drive model says it is done;
//!   at a queue depth above 1 a drive thread ([`crate::queued`]) runs the model against the
//!   clock, as the drive picks among the commands it holds.
//!
//! At most `queue_depth` scheduled requests are at the backend at once (by default 1 for a
//! waiting scheduler or a modelled drive: with a single outstanding request the
//! scheduler, not the kernel, decides the order, which is what makes non-work-conserving
//! waiting meaningful; more for a `file` or `direct` export under one that does not wait:
//! `crate::depth`). The scheduler's `DeviceView` has the
//! head at the end of the last completed request (depth 1) or of the last dispatched one
//! (depth > 1), and prices moves with a service curve fitted to a drive model: the
//! emulated one for `emulated:MODEL`, else [`DEFAULT_CURVE_MODEL`].
//!
//! Durability — FLUSH and FUA are never weakened by reordering:
//! * a WRITE is acknowledged only after its `pwrite` returned, so every acknowledged write
//!   is in the page cache. FLUSH bypasses the scheduler and runs `fdatasync` on a worker
//!   before its reply (the FLUSHes waiting when a sync starts share it — a flood of them
//!   from one client costs the others one sync, not one each — and none is answered by a
//!   sync that started before it arrived): that makes every write acknowledged before the
//!   FLUSH was received (on any connection) durable, however the scheduler orders queued
//!   requests. Writes still queued were not acknowledged, so the spec does not ask FLUSH to
//!   cover them. This also makes CAN_MULTI_CONN safe, and it is advertised.
//! * a FUA WRITE / WRITE_ZEROES / TRIM is `fdatasync`ed after its `pwrite` and before its
//!   reply. On a real backend the written request gives its slot back at once and its
//!   reply waits for the next sync beside the FLUSHes, so one client's FUA writes hold no
//!   other client's reads behind their syncs; with a model, the model's timing holds it.
//! * shutdown: stop accepting, end reading on every connection, wait for every reply, then
//!   one last `fdatasync`.
//! * a failed sync is never forgotten (`crate::backend`'s `durable`): after one, every
//!   later sync and every write of the export fail with EIO until the server restarts.
//!
//! `--trace OUT` records each request's arrival, dispatch and completion as the server runs
//! ([`crate::tracelog`]); without it, each of those events costs an `Option` check.

use std::collections::HashMap;
use std::io;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration as StdDuration, Instant};

use headway_disk::WriteCache;
use headway_sched::{build, BuildError, ServiceCurve, Settings, Time, SECTOR_BYTES};
use tracing::{debug, info, warn};

use crate::admission::Admission;
pub use crate::admission::DEFAULT_MAX_HANDSHAKES;
use crate::backend::{BackendKind, DelayLine, Emulated, FileBackend, Lateness, ModelError};
pub use crate::conn::HANDSHAKE_TIMEOUT;
use crate::conn::{connection, Stop};
use crate::core::{Answer, Core, Held};
use crate::depth::fitted_queue_depth;
use crate::memory::{default_max_memory, Memory, MIN_MAX_MEMORY};
use crate::proto::*;
use crate::queued::{Msg as QueuedMsg, QueuedDrive};
use crate::socket::{Listener, StopEvent};
use crate::stats::{Line, Stats};
use crate::tls::{Tls, TlsConfig, TlsError, TlsMode};
use crate::tracelog::{TraceConfig, TraceFile, Tracer};

mod execute;
use execute::{worker, ReplyLag, WorkerMsg};

/// Scheduled requests at the backend at once, unless `--queue-depth` says otherwise.
pub const DEFAULT_QUEUE_DEPTH: u32 = 1;
/// Connections served at once unless `--max-connections` says otherwise. Each costs a task
/// and its socket (a descriptor and a duplicate for replies), not a thread: the bound is the
/// process's descriptor limit, which the server raises to its hard limit at start.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// How long connections may take to finish at shutdown unless configured otherwise.
pub const SHUTDOWN_GRACE: StdDuration = StdDuration::from_secs(10);
/// How often the acceptor looks at the shutdown flag.
pub const ACCEPT_POLL: StdDuration = StdDuration::from_millis(20);
/// Drive model whose fitted service curve prices head moves until calibration exists.
pub const DEFAULT_CURVE_MODEL: &str = headway_disk::DEFAULT;

/// Where to listen.
#[derive(Clone, Debug)]
pub enum Listen {
    /// `ADDR:PORT` (port 0 picks one: see [`Server::local_addr`]).
    Tcp(String),
    Unix(PathBuf),
}

/// What the scheduler learns about who issued a request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ContextMode {
    /// Each connection is a context.
    Connection,
    /// No context information.
    None,
}

impl std::str::FromStr for ContextMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "connection" => Ok(ContextMode::Connection),
            "none" => Ok(ContextMode::None),
            _ => Err(format!("unknown context mode `{s}` (known: connection, none)")),
        }
    }
}

/// Everything `headway serve` takes.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub export: PathBuf,
    pub size: Option<u64>,
    pub backend: BackendKind,
    pub scheduler: String,
    pub settings: Settings,
    pub listen: Listen,
    pub context: ContextMode,
    pub read_only: bool,
    /// Export name; clients asking for "" get this export too.
    pub name: String,
    /// `--queue-depth`: scheduled requests at the backend at once; `None`: fitted to the
    /// backend and the scheduler ([`crate::depth::fitted_queue_depth`]).
    pub queue_depth: Option<u32>,
    /// The service curve the scheduler prices head moves with (`--estimator FILE`, written
    /// by `headway calibrate`). `None`: the emulated model's own curve, or
    /// [`DEFAULT_CURVE_MODEL`]'s for real backends.
    pub curve: Option<ServiceCurve>,
    /// `--stats INTERVAL`: log a statistics line this often, and one for the whole run at
    /// exit.
    pub stats_interval: Option<StdDuration>,
    /// A client whose handshake is not over this long after it connected is disconnected
    /// (default [`HANDSHAKE_TIMEOUT`]).
    pub handshake_timeout: StdDuration,
    /// The emulated drive's write cache (`--write-cache`; `emulated:MODEL` only).
    pub write_cache: WriteCache,
    /// `--trace OUT [--trace-format F]`: record every request to a file as the server runs
    /// ([`crate::tracelog`]).
    pub trace: Option<TraceConfig>,
    /// `--socket-mode`: the Unix socket's permission bits (`None`: as the umask leaves them).
    pub socket_mode: Option<u32>,
    /// `--tls` and its credentials ([`crate::tls`]).
    pub tls: TlsConfig,
    /// At shutdown, how long connections may take to finish (answer what they sent and
    /// have their replies taken) before their sockets are closed under them (default
    /// [`SHUTDOWN_GRACE`]): a client that stops reading cannot keep the server from
    /// exiting.
    pub shutdown_grace: StdDuration,
    /// `--max-connections`: connections past their handshake served at once; more are
    /// closed (default [`DEFAULT_MAX_CONNECTIONS`]). A connection is a task, not a thread.
    pub max_connections: usize,
    /// `--max-memory`: bytes of request data (WRITE payloads, READ buffers, replies not
    /// yet written) all connections may hold at once; `None`:
    /// [`crate::memory::default_max_memory`].
    pub max_memory: Option<u64>,
    /// `--max-handshakes`: connections in their handshake at once; a new one closes the
    /// oldest of them when all are taken (default [`DEFAULT_MAX_HANDSHAKES`]; see
    /// `crate::admission`).
    pub max_handshakes: usize,
    /// `--io-threads`: threads that run the connections' tasks (default
    /// [`default_io_threads`]).
    pub io_threads: usize,
    /// `--connection-threads`: connections served by threads of their own (two each: a
    /// reader and a writer) while fewer are; the others are tasks on the I/O threads
    /// (default [`DEFAULT_CONNECTION_THREADS`]). 0: every connection is a task.
    pub connection_threads: usize,
}

/// Connections served by threads of their own unless `--connection-threads` says
/// otherwise.
pub const DEFAULT_CONNECTION_THREADS: usize = 32;

/// Threads for the connections' tasks unless `--io-threads` says otherwise: one per CPU,
/// at most four (a task reads requests and writes replies; the backend work is the
/// workers').
pub fn default_io_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).min(4)
}

impl ServeConfig {
    /// Defaults: file backend, `stream` scheduler, per-connection contexts, depth 1.
    pub fn new(export: PathBuf, listen: Listen) -> Self {
        ServeConfig {
            export,
            size: None,
            backend: BackendKind::File,
            scheduler: "stream".into(),
            settings: Settings::new(),
            listen,
            context: ContextMode::Connection,
            read_only: false,
            name: String::new(),
            queue_depth: None,
            curve: None,
            stats_interval: None,
            handshake_timeout: HANDSHAKE_TIMEOUT,
            write_cache: WriteCache::Through,
            trace: None,
            socket_mode: None,
            tls: TlsConfig::default(),
            shutdown_grace: SHUTDOWN_GRACE,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_handshakes: DEFAULT_MAX_HANDSHAKES,
            max_memory: None,
            io_threads: default_io_threads(),
            connection_threads: DEFAULT_CONNECTION_THREADS,
        }
    }
}

/// Why the server could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    #[error("backend emulated:{model}")]
    Model {
        model: String,
        #[source]
        source: ModelError,
    },
    #[error("--write-cache back needs an emulated:MODEL backend (a real disk's cache is the disk's)")]
    WriteCacheNeedsModel,
    #[error(
        "export of {size} bytes exceeds drive model `{model}` ({capacity} bytes); give a smaller --size"
    )]
    ExceedsModel { size: u64, model: String, capacity: u64 },
    #[error("cannot open export {path}")]
    Export { path: PathBuf, source: io::Error },
    #[error("cannot listen on {addr}")]
    Bind { addr: String, source: io::Error },
    /// Another server answers on the Unix socket path: it is not taken over.
    #[error(
        "a server is listening on {path}: refusing to take its socket over (stop it, or choose another path)"
    )]
    SocketInUse { path: PathBuf },
    #[error(transparent)]
    Scheduler(#[from] BuildError),
    #[error("unknown or unused --set tunables for scheduler `{scheduler}`: {names}")]
    UnusedSettings { scheduler: String, names: String },
    #[error("--queue-depth must be at least 1")]
    QueueDepth,
    #[error(
        "--max-memory {0} is below {MIN_MAX_MEMORY} bytes (the server's own 48 MiB and two maximal requests)"
    )]
    MaxMemory(u64),
    #[error("export is empty (give --size to create or extend it)")]
    EmptyExport,
    #[error("final sync of the export failed")]
    Sync(#[source] io::Error),
    #[error("TLS: {0}")]
    Tls(#[from] TlsError),
    #[error("could not start a thread")]
    Thread(#[source] io::Error),
    /// The trace file could not be created (by `bind`, before listening) or written.
    #[error("cannot write the trace to {path}")]
    Trace { path: PathBuf, source: io::Error },
}

/// A bound, ready server.
pub struct Server {
    listener: Listener,
    export: Arc<Export>,
    queue_depth: u32,
    stats_interval: Option<StdDuration>,
    unix_path: Option<PathBuf>,
    /// The inode of the socket file bound (removed at shutdown only if still there).
    socket_ino: Option<u64>,
    max_connections: usize,
    io_threads: usize,
}

/// What every connection shares.
pub(crate) struct Export {
    pub backend: FileBackend,
    /// `emulated:MODEL`: the model that times dispatched requests.
    model: Option<Emulated>,
    /// Set by `run` when `model` is: holds completions until the model's `done`.
    delay: Mutex<Option<Sender<(Time, Held)>>>,
    /// Set by `run` when `model` is and the queue depth is above 1: the drive model run
    /// against the clock ([`crate::queued`]), which decides each completion.
    queued: Mutex<Option<Sender<QueuedMsg<Held>>>>,
    /// Replies waiting for the next sync, not yet taken by a worker: FLUSHes, and FUA
    /// writes already written (real backends; see `execute`).
    flushes: Mutex<Vec<Answer>>,
    /// How late the delay line released completions (`emulated:MODEL` only).
    lateness: Arc<Mutex<Lateness>>,
    /// How long after the model's `done` each reply was handed to its socket (the release's
    /// lateness, the scheduler's turn and the reply hand-off; `emulated:MODEL` only): what
    /// the server adds to a request over the model, logged at exit.
    reply_lag: Mutex<ReplyLag>,
    pub name: String,
    pub flags: u16,
    pub read_only: bool,
    pub context: ContextMode,
    pub handshake_timeout: StdDuration,
    /// The sockets of the connections being served (shutdown closes those that do not
    /// finish within [`ServeConfig::shutdown_grace`]).
    pub(crate) live: Mutex<HashMap<u32, Arc<std::os::fd::OwnedFd>>>,
    shutdown_grace: StdDuration,
    /// STARTTLS, when `--tls` is on or required.
    pub(crate) tls: Option<Tls>,
    /// Permits for connections served by threads of their own.
    pub(crate) connection_threads: Arc<tokio::sync::Semaphore>,
    /// Places for connections in their handshake and past it.
    pub(crate) admission: Admission,
    /// The request data every connection holds, and its bound.
    pub(crate) memory: Arc<Memory>,
    core: Core,
    pub(crate) stats: Arc<Stats>,
    /// `--trace`: every request's arrival, dispatch and completion.
    trace: Option<Tracer>,
    /// A reader runs the batches its arrival dispatches itself (see the module doc).
    inline: bool,
    work_tx: Sender<WorkerMsg>,
    /// Handed to the workers `run` starts.
    work_rx: Mutex<Option<Receiver<WorkerMsg>>>,
}

impl Server {
    pub fn bind(mut cfg: ServeConfig) -> Result<Server, ServeError> {
        let model = match &cfg.backend {
            BackendKind::File => None,
            BackendKind::Direct => None,
            BackendKind::Emulated(m) => Some(
                Emulated::with_write_cache(m, cfg.write_cache)
                    .map_err(|source| ServeError::Model { model: m.clone(), source })?,
            ),
        };
        if model.is_none() && cfg.write_cache == WriteCache::Back {
            return Err(ServeError::WriteCacheNeedsModel);
        }
        if cfg.queue_depth == Some(0) {
            return Err(ServeError::QueueDepth);
        }
        let (max_memory, memory_why) = match cfg.max_memory {
            Some(m) if m < MIN_MAX_MEMORY => return Err(ServeError::MaxMemory(m)),
            Some(m) => (m, "--max-memory".to_string()),
            None => default_max_memory(),
        };
        cfg.settings.reset_used();
        let sched = build(&cfg.scheduler, &mut cfg.settings)?;
        let unused = cfg.settings.unused();
        if !unused.is_empty() {
            return Err(ServeError::UnusedSettings {
                scheduler: cfg.scheduler.clone(),
                names: unused.join(", "),
            });
        }
        let too_big = |size: u64, m: &Emulated| ServeError::ExceedsModel {
            size,
            model: m.spec().name.clone(),
            capacity: m.capacity_bytes(),
        };
        if let (Some(m), Some(size)) = (&model, cfg.size) {
            // Before the file is created or extended.
            if size > m.capacity_bytes() {
                return Err(too_big(size, m));
            }
        }
        let backend = FileBackend::open_as(&cfg.backend, &cfg.export, cfg.size, cfg.read_only)
            .map_err(|source| ServeError::Export { path: cfg.export.clone(), source })?;
        if backend.size() == 0 {
            return Err(ServeError::EmptyExport);
        }
        if let Some(m) = &model {
            if backend.size() > m.capacity_bytes() {
                return Err(too_big(backend.size(), m));
            }
        }
        // Before listening: bad TLS options or credentials, and an unwritable trace path,
        // stop the server before any client comes.
        let tls = Tls::new(&cfg.tls)?;
        let trace = match &cfg.trace {
            Some(t) => Some(
                TraceFile::create(t).map_err(|source| ServeError::Trace { path: t.path.clone(), source })?,
            ),
            None => None,
        };
        let (listener, unix_path) = match &cfg.listen {
            Listen::Tcp(a) => {
                let l =
                    TcpListener::bind(a).map_err(|source| ServeError::Bind { addr: a.clone(), source })?;
                if l.local_addr().is_ok_and(|a| !a.ip().is_loopback()) && cfg.tls.mode != TlsMode::Require {
                    warn!(
                        listen = %a,
                        "listening beyond this machine without TLS required (--tls require): whoever \
                         reaches this address can read and write the export"
                    );
                }
                (Listener::Tcp(l), None)
            }
            Listen::Unix(p) => {
                let l = bind_unix(p, cfg.socket_mode)?;
                (Listener::Unix(l), Some(p.clone()))
            }
        };
        let mut flags = FLAG_HAS_FLAGS | FLAG_SEND_FLUSH | FLAG_SEND_FUA | FLAG_CAN_MULTI_CONN;
        if cfg.read_only {
            flags |= FLAG_READ_ONLY;
        } else {
            flags |= FLAG_SEND_TRIM | FLAG_SEND_WRITE_ZEROES;
        }
        // A client (Linux's nbd driver) sets its queue's `rotational` from this: an
        // emulated model is a hard disk; a block device is what its kernel says.
        if model.is_some() || backend.rotational() == Some(true) {
            flags |= FLAG_ROTATIONAL;
        }
        let curve = match (cfg.curve.take(), &model) {
            (Some(c), _) => c,
            (None, Some(m)) => curve_for(m.spec()),
            (None, None) => {
                if cfg.backend == BackendKind::File && sched.waits() {
                    // Measured: stream on a page-cache export, random 4 KiB reads at
                    // iodepth 4, idle 96% of the time (1.5k IOPS): the model's
                    // millisecond moves make µs-apart random requests look worth waiting for.
                    warn!(
                        scheduler = %cfg.scheduler,
                        "`{}` decides when to wait by the {DEFAULT_CURVE_MODEL} model's service \
                         curve; if this export lives on another kind of disk, or mostly in the \
                         page cache (microseconds, not milliseconds), measure it with `headway \
                         calibrate` (`--buffered` for the page cache) and pass --estimator, or use \
                         a work-conserving scheduler such as deadline",
                        cfg.scheduler
                    );
                }
                default_curve()
            }
        };
        let (queue_depth, depth_why) = match cfg.queue_depth {
            Some(d) => (d, "--queue-depth".to_string()),
            None => fitted_queue_depth(&cfg.backend, sched.waits(), backend.device_queue()),
        };
        let capacity = backend.size().div_ceil(SECTOR_BYTES);
        let stats = Arc::new(Stats::default());
        let core = Core::new(sched, curve, queue_depth, capacity, Instant::now(), stats.clone());
        let (work_tx, work_rx) = mpsc::channel();
        let export = Arc::new(Export {
            backend,
            model,
            delay: Mutex::new(None),
            queued: Mutex::new(None),
            flushes: Mutex::new(Vec::new()),
            lateness: Arc::default(),
            reply_lag: Mutex::default(),
            name: cfg.name.clone(),
            flags,
            read_only: cfg.read_only,
            context: cfg.context,
            handshake_timeout: cfg.handshake_timeout,
            connection_threads: Arc::new(tokio::sync::Semaphore::new(cfg.connection_threads)),
            admission: Admission::new(cfg.max_connections, cfg.max_handshakes),
            memory: Arc::new(Memory::new(max_memory)),
            live: Mutex::default(),
            shutdown_grace: cfg.shutdown_grace,
            tls,
            trace: trace.map(|f| Tracer::new(f, core.origin())),
            core,
            stats,
            inline: cfg.backend != BackendKind::Direct,
            work_tx,
            work_rx: Mutex::new(Some(work_rx)),
        });
        info!(
            export = %cfg.export.display(), size = export.backend.size(), backend = ?cfg.backend,
            scheduler = %cfg.scheduler,
            queue_depth, context = ?cfg.context, read_only = cfg.read_only,
            tls = ?cfg.tls.mode, "serving"
        );
        info!(queue_depth, why = %depth_why, "requests at the backend at once");
        if crate::backend::skip_sync() {
            tracing::error!(
                "{}=1: FLUSH and FUA are answered WITHOUT syncing: acknowledged writes can be \
                 lost (a test control only; never serve data this way)",
                crate::backend::SKIP_SYNC_ENV
            );
        }
        info!(
            max_memory_mib = max_memory >> 20,
            request_data_mib = (max_memory - crate::memory::SERVER_RESERVE) >> 20,
            why = %memory_why,
            "memory budget"
        );
        Ok(Server {
            listener,
            export,
            queue_depth,
            stats_interval: cfg.stats_interval,
            max_connections: cfg.max_connections,
            io_threads: cfg.io_threads,
            socket_ino: unix_path
                .as_ref()
                .and_then(|p| std::fs::symlink_metadata(p).ok())
                .map(|m| std::os::unix::fs::MetadataExt::ino(&m)),
            unix_path,
        })
    }

    /// `ADDR:PORT` or the socket path, as clients reach it.
    pub fn local_addr(&self) -> String {
        match &self.listener {
            Listener::Tcp(l) => l.local_addr().map(|a| a.to_string()).unwrap_or_default(),
            Listener::Unix(_) => self.unix_path.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
        }
    }

    /// With `emulated:MODEL`: how late completions were released after the model's `done`
    /// (live; final once `run` returns). Empty for other backends.
    pub fn lateness(&self) -> Arc<Mutex<Lateness>> {
        self.export.lateness.clone()
    }

    /// The export's counters (live; final once `run` returns).
    pub fn stats(&self) -> Arc<Stats> {
        self.export.stats.clone()
    }

    /// The server-wide budget of request data (`--max-memory` or its default), and what
    /// is taken of it (live).
    pub fn memory(&self) -> Arc<Memory> {
        self.export.memory.clone()
    }

    /// Serve until `shutdown` is set, then finish in-flight requests, sync and return.
    pub fn run(self, shutdown: Arc<AtomicBool>) -> Result<(), ServeError> {
        let Server {
            listener,
            export,
            queue_depth,
            stats_interval,
            unix_path,
            socket_ino,
            max_connections,
            io_threads,
        } = self;
        let started = Instant::now();
        let work_rx = Arc::new(Mutex::new(export.work_rx.lock().unwrap().take().expect("run once")));
        let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new().name(name).spawn(f).map_err(ServeError::Thread)
        };
        // The delay line first: readers and workers hand it completions from their first
        // request on.
        let delay = match &export.model {
            None => None,
            Some(_) => {
                let ex = export.clone();
                let line = DelayLine::spawn(export.core.origin(), export.lateness.clone(), move |h: Held| {
                    ex.release(h)
                })
                .map_err(ServeError::Thread)?;
                *export.delay.lock().unwrap() = Some(line.sender());
                Some(line)
            }
        };
        // Deeper than 1 with a model: the drive thread decides completions (crate::queued).
        let queued = match (&export.model, &delay) {
            (Some(m), Some(line)) if queue_depth > 1 => {
                let drive = m.queued_drive(queue_depth).map_err(|source| ServeError::Model {
                    model: m.spec().name.clone(),
                    source: source.into(),
                })?;
                let to_line = line.sender();
                let q = QueuedDrive::spawn(drive, export.core.origin(), move |t, mut h: Held| {
                    h.done = Some(t);
                    let _ = to_line.send((t, h));
                })
                .map_err(ServeError::Thread)?;
                *export.queued.lock().unwrap() = Some(q.sender());
                Some(q)
            }
            _ => None,
        };
        // Workers: the dispatched requests plus room for FLUSHes and FUA syncs beside them.
        let mut workers = Vec::new();
        for i in 0..queue_depth as usize + 2 {
            let (rx, ex) = (work_rx.clone(), export.clone());
            workers.push(spawn(format!("worker-{i}"), Box::new(move || worker(&ex, &rx)))?);
        }
        let ex = export.clone();
        let timer = spawn("timer".into(), Box::new(move || ex.core.timer(|b| ex.run(b, false))))?;
        let reporter = match stats_interval {
            Some(every) => {
                let (stats, stop) = (export.stats.clone(), shutdown.clone());
                Some(spawn("stats".into(), Box::new(move || report_stats(&stats, every, &stop)))?)
            }
            None => None,
        };

        raise_descriptor_limit();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(io_threads.max(1))
            .max_blocking_threads(1)
            .thread_name("io")
            .enable_all()
            .build()
            .map_err(ServeError::Thread)?;
        let accepted = rt.block_on(accept_loop(listener, &export, max_connections, &shutdown));
        drop(rt);
        accepted?;
        let evicted = export.admission.evicted();
        if evicted > 0 {
            warn!(evicted, "connections closed in their handshake to make room (--max-handshakes)");
        }
        // Every request has been answered, so every completion released.
        export.core.stop();
        let _ = timer.join();
        *export.queued.lock().unwrap() = None;
        drop(queued);
        *export.delay.lock().unwrap() = None;
        if let Some(line) = delay {
            info!(model = export.model.as_ref().map(|m| m.spec().name.as_str()), lateness = %line.finish(), "delay line");
            info!(lag = %export.reply_lag.lock().unwrap(), "replies after the model's done");
        }
        let result = export.backend.sync().map_err(ServeError::Sync);
        if let Some(r) = reporter {
            let _ = r.join();
            let total = export.stats.total();
            info!(target: "headway::stats", "total {}", Line { window: &total, secs: started.elapsed().as_secs_f64() });
        }
        for _ in &workers {
            let _ = export.work_tx.send(WorkerMsg::Stop);
        }
        for w in workers {
            let _ = w.join();
        }
        if let Some(p) = unix_path {
            // ours only: the socket file this server bound, not one put there since
            if std::fs::symlink_metadata(&p)
                .is_ok_and(|m| Some(std::os::unix::fs::MetadataExt::ino(&m)) == socket_ino)
            {
                let _ = std::fs::remove_file(p);
            }
        }
        // Last: every reply and every connection's close has been recorded.
        let traced = match &export.trace {
            None => Ok(()),
            Some(t) => match t.finish() {
                Ok(lines) => {
                    info!(path = %t.path().display(), lines, "trace written");
                    Ok(())
                }
                Err(source) => Err(ServeError::Trace { path: t.path().to_owned(), source }),
            },
        };
        info!("stopped");
        result.and(traced)
    }
}

/// Each connection holds two descriptors (its socket and the duplicate replies are written
/// to): let the process open as many as its hard limit allows, as servers do.
fn raise_descriptor_limit() {
    let mut l = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: get/setrlimit with a valid rlimit.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 && l.rlim_cur < l.rlim_max {
            let want = libc::rlimit { rlim_cur: l.rlim_max, rlim_max: l.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                debug!(from = l.rlim_cur, to = l.rlim_max, "descriptor limit raised");
            }
        }
    }
}

/// Accept connections and serve each as a task until `shutdown` is set; then stop reading
/// every connection and wait until each has been answered and closed.
async fn accept_loop(
    listener: Listener,
    export: &Arc<Export>,
    max_connections: usize,
    shutdown: &AtomicBool,
) -> Result<(), ServeError> {
    let listener =
        listener.into_async().map_err(|source| ServeError::Bind { addr: "listener".into(), source })?;
    let (stop_tx, rx) = tokio::sync::watch::channel(false);
    let event = Arc::new(StopEvent::new().map_err(ServeError::Thread)?);
    let stop = Stop { rx, event: event.clone() };
    let mut conns = tokio::task::JoinSet::new();
    let mut next_id: u32 = 0;
    let mut tick = tokio::time::interval(ACCEPT_POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !shutdown.load(Ordering::SeqCst) {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = tick.tick() => continue,
        };
        while conns.try_join_next().is_some() {}
        match accepted {
            Ok(c) => {
                next_id = next_id.wrapping_add(1);
                let id = next_id;
                // a connection that cannot be served is closed with a log line; the server
                // goes on
                if export.admission.full() {
                    warn!(conn = id, max = max_connections, "connection refused: --max-connections reached");
                    continue;
                }
                conns.spawn(connection(export.clone(), id, c, stop.clone()));
            }
            Err(e) => {
                // out of descriptors or memory: the connections being served go on; try
                // again shortly
                warn!(error = %e, "accept failed");
                tokio::time::sleep(ACCEPT_POLL).await;
            }
        }
    }
    info!(connections = conns.len(), "shutting down: finishing in-flight requests");
    drop(listener);
    let _ = stop_tx.send(true);
    event.set();
    let grace = tokio::time::sleep(export.shutdown_grace);
    tokio::pin!(grace);
    let mut forced = false;
    loop {
        tokio::select! {
            c = conns.join_next() => if c.is_none() { break },
            _ = &mut grace, if !forced => {
                forced = true;
                let live = export.live.lock().unwrap();
                warn!(
                    connections = live.len(),
                    grace = ?export.shutdown_grace,
                    "closing the connections that did not finish (replies their clients do not read)"
                );
                for fd in live.values() {
                    // SAFETY: shutdown on a socket the map keeps open.
                    unsafe { libc::shutdown(std::os::fd::AsRawFd::as_raw_fd(&**fd), libc::SHUT_RDWR) };
                }
            }
        }
    }
    Ok(())
}

/// Probes per service-curve calibration, and bins per decade of distance of the fit.
const CALIBRATION_SAMPLES: usize = 4000;
const CURVE_BINS_PER_DECADE: u32 = 8;

/// The service curve the scheduler prices moves with on a `file` export (fitted once per
/// server).
pub fn default_curve() -> ServiceCurve {
    curve_for(&headway_disk::builtin(DEFAULT_CURVE_MODEL).expect("built-in model"))
}

/// The service curve a drive model's calibration yields: what an `emulated:MODEL` export
/// prices moves with, so the scheduler's estimates match the drive it is scheduling for.
pub fn curve_for(spec: &headway_disk::DiskSpec) -> ServiceCurve {
    ServiceCurve::fit(&headway_disk::calibration_samples(spec, CALIBRATION_SAMPLES), CURVE_BINS_PER_DECADE)
}

/// Listen on the Unix socket `path`. A socket file already there is removed only when
/// nothing answers on it (a server that died left it); a live server's socket is refused
/// ([`ServeError::SocketInUse`]); any other file there makes binding fail. `mode`: the
/// socket's permission bits.
fn bind_unix(path: &Path, mode: Option<u32>) -> Result<UnixListener, ServeError> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let bind_err = |source| ServeError::Bind { addr: path.display().to_string(), source };
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
        match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => return Err(ServeError::SocketInUse { path: path.to_path_buf() }),
            // nobody listening: a stale socket file
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                info!(path = %path.display(), "removing a stale socket (nothing answers on it)");
                std::fs::remove_file(path).map_err(bind_err)?;
            }
            Err(_) => {}
        }
    }
    let l = UnixListener::bind(path).map_err(bind_err)?;
    if let Some(m) = mode {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(m)).map_err(bind_err)?;
    }
    Ok(l)
}

/// `--stats`: a line per interval until shutdown.
fn report_stats(stats: &Stats, every: StdDuration, stop: &AtomicBool) {
    let mut last = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(ACCEPT_POLL.min(every));
        if last.elapsed() >= every {
            let w = stats.take_interval();
            info!(target: "headway::stats", "{}", Line { window: &w, secs: last.elapsed().as_secs_f64() });
            last = Instant::now();
        }
    }
}

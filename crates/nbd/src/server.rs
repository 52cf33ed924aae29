//! The server: threads, the scheduler loop, FLUSH/FUA.
//!
//! Threads (plain std threads; no async runtime is needed at this scale):
//! * acceptor (the caller of [`Server::run`]): accepts TCP or Unix connections, polling
//!   the shutdown flag every [`ACCEPT_POLL`];
//! * per connection, a reader (handshake, then request headers and WRITE payloads) and a
//!   [`ReplySink`]: whichever thread has a reply (a worker, the delay line, the reader)
//!   writes it onto the socket itself, without blocking, so replies go out in completion
//!   order with no thread hop; what the socket does not take at once goes, in order, to the
//!   connection's writer thread, which alone blocks on the socket;
//! * one scheduler thread per export owning the `Box<dyn Scheduler>`: it receives arrivals
//!   and completions on a channel and honours `Decision::WaitUntil(t)` with
//!   `recv_timeout` (a futex wait with a nanosecond deadline: sub-millisecond, unlike
//!   tokio's 1 ms timer wheel). An arrival or completion before `t` wakes it early, as
//!   the `Scheduler` contract asks;
//! * a pool of backend workers doing `pread`/`pwrite`/`fdatasync`;
//! * with `emulated:MODEL`, a delay line ([`crate::backend::DelayLine`]) holding each
//!   dispatched request's replies and its completion until the drive model says it is done.
//!
//! At most `queue_depth` scheduled requests are at the backend at once (default 1: with a
//! single outstanding request the scheduler, not the kernel, decides the order, which is
//! what makes non-work-conserving waiting meaningful). The scheduler's `DeviceView` has the
//! head at the end of the last completed request (depth 1) or of the last dispatched one
//! (depth > 1), and prices moves with a service curve fitted to a drive model: the
//! emulated one for `emulated:MODEL`, else [`DEFAULT_CURVE_MODEL`].
//!
//! Durability — FLUSH and FUA are never weakened by reordering:
//! * a WRITE is acknowledged only after its `pwrite` returned, so every acknowledged write
//!   is in the page cache. FLUSH bypasses the scheduler and runs `fdatasync` on a worker
//!   before its reply: that makes every write acknowledged before the FLUSH was received
//!   (on any connection) durable, however the scheduler orders queued requests. Writes
//!   still queued were not acknowledged, so the spec does not ask FLUSH to cover them.
//!   This also makes CAN_MULTI_CONN safe, and it is advertised.
//! * a FUA WRITE / WRITE_ZEROES / TRIM is `fdatasync`ed after its `pwrite` and before its
//!   reply.
//! * shutdown: stop accepting, end reading on every connection, wait for every reply, then
//!   one last `fdatasync`.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration as StdDuration, Instant};

use headway_sched::{
    build, Arrival, BuildError, ContextId, CurveView, Decision, Dir, ReqId, Request, Scheduler, ServiceCurve,
    Settings, Time, SECTOR_BYTES,
};
use tracing::{debug, info, warn};

use crate::backend::{BackendKind, DelayLine, Emulated, FileBackend, Lateness, UnknownModel};
use crate::handshake::{self as hs, ClientOption, HandshakeError, OptionHeader};
use crate::proto::*;
use crate::transmission::{self as tx, Command, Limits, Reject, RequestHeader};

/// What a backend operation gives back: read data at an offset (or nothing), or an error
/// code with a message for a structured error reply.
type OpResult = Result<Option<(u64, Vec<u8>)>, (Errno, String)>;

/// Scheduled requests at the backend at once, unless `--queue-depth` says otherwise.
pub const DEFAULT_QUEUE_DEPTH: u32 = 1;
/// How often the acceptor looks at the shutdown flag.
pub const ACCEPT_POLL: StdDuration = StdDuration::from_millis(20);
/// Drive model whose fitted service curve prices head moves until calibration exists.
pub const DEFAULT_CURVE_MODEL: &str = "wd5000aaks";

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
    pub queue_depth: u32,
    /// The service curve the scheduler prices head moves with (`--estimator FILE`, written
    /// by `headway calibrate`). `None`: the emulated model's own curve, or
    /// [`DEFAULT_CURVE_MODEL`]'s for real backends.
    pub curve: Option<ServiceCurve>,
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
            queue_depth: DEFAULT_QUEUE_DEPTH,
            curve: None,
        }
    }
}

/// Why the server could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    #[error("backend `{0}` is not implemented yet (file and emulated:MODEL are)")]
    NotImplemented(String),
    #[error("backend emulated:{}", .0.model)]
    Model(#[source] UnknownModel),
    #[error(
        "export of {size} bytes exceeds drive model `{model}` ({capacity} bytes); give a smaller --size"
    )]
    ExceedsModel { size: u64, model: String, capacity: u64 },
    #[error("cannot open export {path}")]
    Export { path: PathBuf, source: io::Error },
    #[error("cannot listen on {addr}")]
    Bind { addr: String, source: io::Error },
    #[error(transparent)]
    Scheduler(#[from] BuildError),
    #[error("unknown or unused --set tunables for scheduler `{scheduler}`: {names}")]
    UnusedSettings { scheduler: String, names: String },
    #[error("--queue-depth must be at least 1")]
    QueueDepth,
    #[error("export is empty (give --size to create or extend it)")]
    EmptyExport,
    #[error("final sync of the export failed")]
    Sync(#[source] io::Error),
    #[error("could not start a thread")]
    Thread(#[source] io::Error),
}

/// A bound, ready server.
pub struct Server {
    listener: Listener,
    export: Arc<Export>,
    scheduler: String,
    settings: Settings,
    queue_depth: u32,
    curve: Option<ServiceCurve>,
    unix_path: Option<PathBuf>,
}

/// What every connection shares.
struct Export {
    backend: FileBackend,
    /// `emulated:MODEL`: the model that times dispatched requests.
    model: Option<Emulated>,
    /// Set by `run` when `model` is: holds completions until the model's `done`.
    delay: Mutex<Option<Sender<(Time, Held)>>>,
    /// How late the delay line released completions (`emulated:MODEL` only).
    lateness: Arc<Mutex<Lateness>>,
    name: String,
    flags: u16,
    read_only: bool,
    context: ContextMode,
    origin: Instant,
    sched_tx: Sender<SchedMsg>,
    work_tx: Sender<WorkerMsg>,
    // Receivers handed to the threads `run` starts.
    rx: Mutex<Option<(Receiver<SchedMsg>, Receiver<WorkerMsg>)>>,
}

impl Server {
    pub fn bind(mut cfg: ServeConfig) -> Result<Server, ServeError> {
        let model = match &cfg.backend {
            BackendKind::File => None,
            BackendKind::Direct => return Err(ServeError::NotImplemented("direct".into())),
            BackendKind::Emulated(m) => Some(Emulated::new(m).map_err(ServeError::Model)?),
        };
        if cfg.queue_depth == 0 {
            return Err(ServeError::QueueDepth);
        }
        cfg.settings.reset_used();
        let sched = build(&cfg.scheduler, &mut cfg.settings)?;
        let unused = cfg.settings.unused();
        if !unused.is_empty() {
            return Err(ServeError::UnusedSettings {
                scheduler: cfg.scheduler.clone(),
                names: unused.join(", "),
            });
        }
        // Built here so configuration errors surface before listening; the scheduler
        // thread builds its own (trait objects are not `Send`) from the same settings.
        drop(sched);
        let mut settings = cfg.settings.clone();
        settings.reset_used();
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
        let backend = FileBackend::open(&cfg.export, cfg.size, cfg.read_only)
            .map_err(|source| ServeError::Export { path: cfg.export.clone(), source })?;
        if backend.size() == 0 {
            return Err(ServeError::EmptyExport);
        }
        if let Some(m) = &model {
            if backend.size() > m.capacity_bytes() {
                return Err(too_big(backend.size(), m));
            }
        }
        let (listener, unix_path) = match &cfg.listen {
            Listen::Tcp(a) => {
                let l =
                    TcpListener::bind(a).map_err(|source| ServeError::Bind { addr: a.clone(), source })?;
                (Listener::Tcp(l), None)
            }
            Listen::Unix(p) => {
                if std::fs::symlink_metadata(p).is_ok_and(|m| {
                    use std::os::unix::fs::FileTypeExt;
                    m.file_type().is_socket()
                }) {
                    let _ = std::fs::remove_file(p);
                }
                let l = UnixListener::bind(p)
                    .map_err(|source| ServeError::Bind { addr: p.display().to_string(), source })?;
                (Listener::Unix(l), Some(p.clone()))
            }
        };
        let mut flags = FLAG_HAS_FLAGS | FLAG_SEND_FLUSH | FLAG_SEND_FUA | FLAG_CAN_MULTI_CONN;
        if cfg.read_only {
            flags |= FLAG_READ_ONLY;
        } else {
            flags |= FLAG_SEND_TRIM | FLAG_SEND_WRITE_ZEROES;
        }
        let (sched_tx, sched_rx) = mpsc::channel();
        let (work_tx, work_rx) = mpsc::channel();
        let export = Arc::new(Export {
            backend,
            model,
            delay: Mutex::new(None),
            lateness: Arc::default(),
            name: cfg.name.clone(),
            flags,
            read_only: cfg.read_only,
            context: cfg.context,
            origin: Instant::now(),
            sched_tx,
            work_tx,
            rx: Mutex::new(Some((sched_rx, work_rx))),
        });
        info!(
            export = %cfg.export.display(), size = export.backend.size(), backend = ?cfg.backend,
            scheduler = %cfg.scheduler,
            queue_depth = cfg.queue_depth, context = ?cfg.context, read_only = cfg.read_only, "serving"
        );
        Ok(Server {
            listener,
            export,
            scheduler: cfg.scheduler,
            settings,
            queue_depth: cfg.queue_depth,
            curve: cfg.curve,
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

    /// Serve until `shutdown` is set, then finish in-flight requests, sync and return.
    pub fn run(self, shutdown: Arc<AtomicBool>) -> Result<(), ServeError> {
        let Server { listener, export, scheduler, mut settings, queue_depth, curve, unix_path } = self;
        let (sched_rx, work_rx) = export.rx.lock().unwrap().take().expect("run once");
        let work_rx = Arc::new(Mutex::new(work_rx));
        let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new().name(name).spawn(f).map_err(ServeError::Thread)
        };
        // Workers: the dispatched requests plus room for FLUSHes and FUA syncs beside them.
        // The delay line first: workers hand it completions from their first request on.
        let delay = match &export.model {
            None => None,
            Some(_) => {
                let ex = export.clone();
                let line =
                    DelayLine::spawn(export.origin, export.lateness.clone(), move |h: Held| release(&ex, h))
                        .map_err(ServeError::Thread)?;
                *export.delay.lock().unwrap() = Some(line.sender());
                Some(line)
            }
        };
        let mut workers = Vec::new();
        for i in 0..queue_depth as usize + 2 {
            let (rx, ex) = (work_rx.clone(), export.clone());
            workers.push(spawn(format!("worker-{i}"), Box::new(move || worker(&ex, &rx)))?);
        }
        let capacity = export.backend.size().div_ceil(SECTOR_BYTES);
        let (ex, origin) = (export.work_tx.clone(), export.origin);
        let spec = export.model.as_ref().map(|m| m.spec().clone());
        let sched_thread = spawn(
            "scheduler".into(),
            Box::new(move || {
                let sched = build(&scheduler, &mut settings).expect("validated in bind");
                let curve = match (curve, spec) {
                    (Some(c), _) => c,
                    (None, Some(spec)) => curve_for(&spec),
                    (None, None) => default_curve(),
                };
                scheduler_loop(sched, curve, queue_depth, capacity, origin, sched_rx, ex)
            }),
        )?;

        listener
            .set_nonblocking(true)
            .map_err(|source| ServeError::Bind { addr: "listener".into(), source })?;
        let live: Arc<Mutex<HashMap<u32, Conn>>> = Arc::default();
        let mut conns: Vec<JoinHandle<()>> = Vec::new();
        let mut next_id: u32 = 0;
        while !shutdown.load(Ordering::SeqCst) {
            match listener.accept() {
                Ok(conn) => {
                    next_id = next_id.wrapping_add(1);
                    let id = next_id;
                    if let Ok(c) = conn.try_clone() {
                        live.lock().unwrap().insert(id, c);
                    }
                    let (ex, live) = (export.clone(), live.clone());
                    conns.push(spawn(
                        format!("conn-{id}"),
                        Box::new(move || {
                            connection(&ex, id, conn);
                            live.lock().unwrap().remove(&id);
                        }),
                    )?);
                    conns.retain(|h| !h.is_finished());
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(ACCEPT_POLL),
                Err(e) => {
                    warn!(error = %e, "accept failed");
                    std::thread::sleep(ACCEPT_POLL);
                }
            }
        }
        info!(connections = live.lock().unwrap().len(), "shutting down: finishing in-flight requests");
        drop(listener);
        for c in live.lock().unwrap().values() {
            c.shutdown_read();
        }
        for h in conns {
            let _ = h.join();
        }
        let _ = export.sched_tx.send(SchedMsg::Shutdown);
        let _ = sched_thread.join();
        // Every completion has been released (the scheduler saw them all).
        *export.delay.lock().unwrap() = None;
        if let Some(line) = delay {
            info!(model = export.model.as_ref().map(|m| m.spec().name.as_str()), lateness = %line.finish(), "delay line");
        }
        let result = export.backend.sync().map_err(ServeError::Sync);
        for _ in &workers {
            let _ = export.work_tx.send(WorkerMsg::Stop);
        }
        for w in workers {
            let _ = w.join();
        }
        if let Some(p) = unix_path {
            let _ = std::fs::remove_file(p);
        }
        info!("stopped");
        result
    }
}

// ---------------------------------------------------------------------------------------
// Sockets

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Listener {
    fn set_nonblocking(&self, v: bool) -> io::Result<()> {
        match self {
            Listener::Tcp(l) => l.set_nonblocking(v),
            Listener::Unix(l) => l.set_nonblocking(v),
        }
    }
    fn accept(&self) -> io::Result<Conn> {
        match self {
            Listener::Tcp(l) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                let _ = s.set_nodelay(true);
                Ok(Conn::Tcp(s))
            }
            Listener::Unix(l) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                Ok(Conn::Unix(s))
            }
        }
    }
}

enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Conn {
    fn try_clone(&self) -> io::Result<Conn> {
        Ok(match self {
            Conn::Tcp(s) => Conn::Tcp(s.try_clone()?),
            Conn::Unix(s) => Conn::Unix(s.try_clone()?),
        })
    }
    fn raw_fd(&self) -> RawFd {
        match self {
            Conn::Tcp(s) => s.as_raw_fd(),
            Conn::Unix(s) => s.as_raw_fd(),
        }
    }
    /// Ends the reader's blocking reads (it sees end of file); replies can still go out.
    fn shutdown_read(&self) {
        let _ = match self {
            Conn::Tcp(s) => s.shutdown(std::net::Shutdown::Read),
            Conn::Unix(s) => s.shutdown(std::net::Shutdown::Read),
        };
    }
}

impl Read for Conn {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(b),
            Conn::Unix(s) => s.read(b),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(b),
            Conn::Unix(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Messages between threads

/// One client request on its way to a worker.
struct Io {
    cookie: u64,
    op: Op,
    reply: Arc<ReplySink>,
}

enum Op {
    Read { offset: u64, len: u32 },
    Write { offset: u64, data: Vec<u8>, fua: bool },
    Trim { offset: u64, len: u32, fua: bool },
    Zero { offset: u64, len: u32, fua: bool },
    Flush,
}

impl Op {
    fn extent(&self) -> (u64, u64) {
        match self {
            Op::Read { offset, len } | Op::Trim { offset, len, .. } | Op::Zero { offset, len, .. } => {
                (*offset, *len as u64)
            }
            Op::Write { offset, data, .. } => (*offset, data.len() as u64),
            Op::Flush => (0, 0),
        }
    }
    fn fua(&self) -> bool {
        matches!(self, Op::Write { fua: true, .. } | Op::Trim { fua: true, .. } | Op::Zero { fua: true, .. })
    }
}

/// A reply for a connection's [`ReplySink`].
struct Out {
    cookie: u64,
    result: OpResult,
}

enum SchedMsg {
    Arrive(Io, Option<ContextId>),
    /// A request completed; with `emulated:MODEL`, when the model finished it.
    Done(Request, Option<Time>),
    Exited(ContextId),
    Shutdown,
}

/// A dispatched request's replies and completion, held until the model's `done`.
struct Held {
    rq: Request,
    /// The model's completion time (`None` for real backends).
    done: Option<Time>,
    outs: Vec<(Arc<ReplySink>, Out)>,
}

enum WorkerMsg {
    /// A dispatched request at `at`: `ios` are it and every request merged into it.
    Batch { rq: Request, ios: Vec<Io>, at: Time },
    /// FLUSH, outside the scheduler.
    Flush(Io),
    /// Shutdown: every request has been answered.
    Stop,
}

// ---------------------------------------------------------------------------------------
// Scheduler thread

fn now_since(origin: Instant) -> Time {
    Time(origin.elapsed().as_nanos() as u64)
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

#[allow(clippy::too_many_arguments)]
fn scheduler_loop(
    mut s: Box<dyn Scheduler>,
    curve: ServiceCurve,
    depth: u32,
    capacity: u64,
    origin: Instant,
    rx: Receiver<SchedMsg>,
    work: Sender<WorkerMsg>,
) {
    s.set_device_queue_depth(depth);
    let mut head = 0u64;
    let mut inflight = 0u32;
    let mut next_id = 0u64;
    let mut held: HashMap<ReqId, Io> = HashMap::new();
    let mut merged: HashMap<ReqId, Vec<ReqId>> = HashMap::new();
    let mut deadline: Option<Time> = None;
    let mut closing = false;
    loop {
        let msg = match deadline {
            Some(t) => {
                let wait = StdDuration::from_nanos(t.0.saturating_sub(now_since(origin).0));
                match rx.recv_timeout(wait) {
                    Ok(m) => Some(m),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
            None => match rx.recv() {
                Ok(m) => Some(m),
                Err(_) => return,
            },
        };
        // When the event that prompts the decisions below happened, for the emulated
        // drive: a completion at the model's `done`, an arrival when it was received, a
        // timer at its deadline. Dispatching at that instant rather than at `now`
        // leaves out the server's own turnaround (delay-line lateness, thread wake-ups:
        // tens of µs here, a few µs in a kernel), which the model would otherwise count as
        // idle time and fill with read-ahead (see `backend`).
        let mut event = match (&msg, deadline) {
            (None, Some(t)) => t,
            _ => Time::ZERO,
        };
        let mut next = msg;
        while let Some(m) = next.take() {
            let now = now_since(origin);
            let view = CurveView { head, curve: &curve, capacity };
            match m {
                SchedMsg::Arrive(io, ctx) => {
                    event = event.max(now);
                    next_id += 1;
                    let (off, len) = io.op.extent();
                    let sector = off / SECTOR_BYTES;
                    let end = (off + len).div_ceil(SECTOR_BYTES);
                    let dir = if matches!(io.op, Op::Read { .. }) { Dir::Read } else { Dir::Write };
                    let rq = Request {
                        id: ReqId(next_id),
                        sector,
                        len: (end - sector).clamp(1, u32::MAX as u64) as u32,
                        dir,
                        sync: dir == Dir::Read || io.op.fua(),
                        arrival: now,
                        ctx,
                    };
                    held.insert(rq.id, io);
                    if let Arrival::Merged { into } = s.arrive(now, rq, &view) {
                        merged.entry(into).or_default().push(rq.id);
                    }
                }
                SchedMsg::Done(rq, done) => {
                    event = event.max(done.unwrap_or(now));
                    inflight -= 1;
                    if depth == 1 {
                        head = rq.end();
                    }
                    let view = CurveView { head, curve: &curve, capacity };
                    s.completed(now, &rq, &view);
                }
                SchedMsg::Exited(ctx) => s.context_exited(now, ctx),
                SchedMsg::Shutdown => closing = true,
            }
            next = rx.try_recv().ok();
        }
        deadline = None;
        while inflight < depth {
            let now = now_since(origin);
            let view = CurveView { head, curve: &curve, capacity };
            match s.decide(now, &view) {
                Decision::Dispatch(rq) => {
                    let mut ios = Vec::new();
                    let mut stack = vec![rq.id];
                    while let Some(id) = stack.pop() {
                        if let Some(io) = held.remove(&id) {
                            ios.push(io);
                        }
                        stack.extend(merged.remove(&id).unwrap_or_default());
                    }
                    ios.sort_by_key(|io| io.op.extent().0);
                    s.dispatched_to_device(now, &rq);
                    inflight += 1;
                    if depth > 1 {
                        head = rq.end();
                    }
                    let at = if event == Time::ZERO { now } else { event.min(now) };
                    let _ = work.send(WorkerMsg::Batch { rq, ios, at });
                }
                Decision::WaitUntil(t) => {
                    deadline = Some(t);
                    break;
                }
                Decision::Idle => break,
            }
        }
        if closing && inflight == 0 && held.is_empty() {
            debug!(stats = ?s.stats(), "scheduler thread done");
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------
// Workers

fn worker(ex: &Export, rx: &Mutex<Receiver<WorkerMsg>>) {
    loop {
        let msg = match rx.lock().unwrap().recv() {
            Ok(m) => m,
            Err(_) => return,
        };
        match msg {
            WorkerMsg::Stop => return,
            WorkerMsg::Flush(io) => {
                let result = ex.backend.sync().map(|_| None).map_err(|e| (Errno::from_io(&e), e.to_string()));
                io.reply.send(Out { cookie: io.cookie, result });
            }
            WorkerMsg::Batch { rq, ios, at } => {
                // The model first: it times the request from its dispatch, and the real I/O
                // below takes part of that time. TRIM does not reach a disk's media.
                let done = match &ex.model {
                    Some(m) if !ios.iter().all(|io| matches!(io.op, Op::Trim { .. })) => {
                        let acc = m.access(at, rq.sector, rq.len, rq.dir);
                        tracing::trace!(
                            at = at.0,
                            sector = rq.sector,
                            len = rq.len,
                            done = acc.done.0,
                            hit = acc.cache_hit,
                            seek = acc.seek_cylinders,
                            "emulated"
                        );
                        Some(acc.done)
                    }
                    Some(_) => Some(at),
                    None => None,
                };
                let mut outs: Vec<(Arc<ReplySink>, Out, bool)> = Vec::with_capacity(ios.len());
                for io in ios {
                    let fua = io.op.fua();
                    let result = execute(&ex.backend, io.op);
                    outs.push((io.reply, Out { cookie: io.cookie, result }, fua));
                }
                // FUA: durable before the reply. One fdatasync covers the whole batch.
                if outs.iter().any(|(_, o, fua)| *fua && o.result.is_ok()) {
                    if let Err(e) = ex.backend.sync() {
                        for (_, o, fua) in outs.iter_mut() {
                            if *fua && o.result.is_ok() {
                                o.result = Err((Errno::from_io(&e), format!("sync after FUA write: {e}")));
                            }
                        }
                    }
                }
                let held = Held { rq, done, outs: outs.into_iter().map(|(r, o, _)| (r, o)).collect() };
                match done {
                    Some(t) => {
                        let line = ex.delay.lock().unwrap().clone();
                        match line {
                            Some(line) => {
                                let _ = line.send((t, held));
                            }
                            None => release(ex, held),
                        }
                    }
                    None => release(ex, held),
                }
            }
        }
    }
}

/// The completion to the scheduler, then the replies to the clients: from a worker at
/// once, or from the delay line at the model's `done`. The completion goes first so the
/// scheduler can dispatch the next request while the replies are written (they are written
/// on this thread, see [`ReplySink`]), and so it has seen the completion before any request
/// a client sends in answer to the reply.
fn release(ex: &Export, h: Held) {
    let _ = ex.sched_tx.send(SchedMsg::Done(h.rq, h.done));
    for (reply, out) in h.outs {
        reply.send(out);
    }
}

fn execute(b: &FileBackend, op: Op) -> OpResult {
    let err = |e: io::Error| (Errno::from_io(&e), e.to_string());
    match op {
        Op::Read { offset, len } => {
            let mut buf = vec![0u8; len as usize];
            b.read(offset, &mut buf).map_err(err)?;
            Ok(Some((offset, buf)))
        }
        Op::Write { offset, data, .. } => b.write(offset, &data).map(|_| None).map_err(err),
        Op::Trim { offset, len, .. } => b.trim(offset, len as u64).map(|_| None).map_err(err),
        Op::Zero { offset, len, .. } => b.write_zeroes(offset, len as u64).map(|_| None).map_err(err),
        Op::Flush => b.sync().map(|_| None).map_err(err),
    }
}

// ---------------------------------------------------------------------------------------
// Connections

struct Session {
    structured: bool,
}

fn connection(ex: &Export, id: u32, mut conn: Conn) {
    debug!(conn = id, "connected");
    let session = match handshake(&mut conn, ex) {
        Ok(Some(s)) => s,
        Ok(None) => {
            debug!(conn = id, "closed during handshake");
            return;
        }
        Err(e) => {
            debug!(conn = id, error = %e, "handshake failed");
            return;
        }
    };
    info!(conn = id, structured = session.structured, "transmission");
    let ctx = match ex.context {
        ContextMode::Connection => Some(ContextId(id)),
        ContextMode::None => None,
    };
    let (backlog_tx, backlog_rx) = mpsc::channel::<Pending>();
    let state: Arc<Mutex<SinkState>> = Arc::default();
    let writer = match (conn.try_clone(), conn.try_clone()) {
        (Ok(w), Ok(direct)) => {
            let st = state.clone();
            std::thread::Builder::new()
                .name(format!("conn-{id}-writer"))
                .spawn(move || writer(w, backlog_rx, &st))
                .map(|h| {
                    (
                        h,
                        Arc::new(ReplySink {
                            conn: direct,
                            structured: session.structured,
                            state,
                            backlog_tx,
                            unanswered: AtomicUsize::new(0),
                        }),
                    )
                })
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    let (writer, reply) = match writer {
        Ok(w) => w,
        Err(e) => {
            warn!(conn = id, error = %e, "cannot start the reply writer");
            return;
        }
    };
    if let Err(e) = read_requests(ex, &mut conn, ctx, &reply) {
        if e.kind() != io::ErrorKind::UnexpectedEof {
            debug!(conn = id, error = %e, "connection read ended");
        }
    }
    drop(reply);
    // The writer ends once every request of this connection has been answered (every
    // `Arc<ReplySink>` is gone) and what the socket did not take at once is written.
    let _ = writer.join();
    if let Some(ctx) = ctx {
        let _ = ex.sched_tx.send(SchedMsg::Exited(ctx));
    }
    info!(conn = id, "closed");
}

fn handshake(c: &mut Conn, ex: &Export) -> io::Result<Option<Session>> {
    c.write_all(&hs::greeting())?;
    let mut fl = [0u8; 4];
    c.read_exact(&mut fl)?;
    let Ok(cflags) = hs::decode_client_flags(&fl) else { return Ok(None) };
    let no_zeroes = cflags & FLAG_C_NO_ZEROES != 0;
    let mut structured = false;
    loop {
        let mut h = [0u8; OptionHeader::SIZE];
        c.read_exact(&mut h)?;
        let Ok(h) = OptionHeader::decode(&h) else { return Ok(None) };
        if h.len > MAX_OPTION_LEN {
            return Ok(None);
        }
        let mut data = vec![0u8; h.len as usize];
        c.read_exact(&mut data)?;
        let opt = h.opt;
        let reply = |c: &mut Conn, ty: u32, d: &[u8]| c.write_all(&hs::option_reply(opt, ty, d));
        match hs::parse_option(opt, &data) {
            Err(HandshakeError::Invalid(m)) => reply(c, REP_ERR_INVALID, m.as_bytes())?,
            Err(_) => return Ok(None),
            Ok(ClientOption::ExportName(n)) => {
                if !n.is_empty() && n != ex.name {
                    return Ok(None);
                }
                c.write_all(&hs::export_name_reply(ex.backend.size(), ex.flags, no_zeroes))?;
                return Ok(Some(Session { structured }));
            }
            Ok(ClientOption::Abort) => {
                let _ = reply(c, REP_ACK, &[]);
                return Ok(None);
            }
            Ok(ClientOption::List) => {
                reply(c, REP_SERVER, &hs::rep_server(&ex.name))?;
                reply(c, REP_ACK, &[])?;
            }
            Ok(ClientOption::StructuredReply) => {
                structured = true;
                reply(c, REP_ACK, &[])?;
            }
            Ok(ClientOption::Info { go, name, requests }) => {
                if !name.is_empty() && name != ex.name {
                    reply(c, REP_ERR_UNKNOWN, format!("no export named `{name}`").as_bytes())?;
                    continue;
                }
                reply(c, REP_INFO, &hs::info_export(ex.backend.size(), ex.flags))?;
                if requests.contains(&INFO_NAME) {
                    reply(c, REP_INFO, &hs::info_text(INFO_NAME, &ex.name))?;
                }
                if requests.contains(&INFO_DESCRIPTION) {
                    reply(c, REP_INFO, &hs::info_text(INFO_DESCRIPTION, "headway scheduled export"))?;
                }
                // Sent whether asked or not (the spec allows it): with a minimum of 1 byte it
                // constrains nothing a client could be unprepared for.
                reply(c, REP_INFO, &hs::info_block_size(MIN_BLOCK, PREFERRED_BLOCK, MAX_PAYLOAD))?;
                reply(c, REP_ACK, &[])?;
                if go {
                    return Ok(Some(Session { structured }));
                }
            }
            Ok(ClientOption::Unknown(o)) => {
                debug!(option = o, "unsupported option");
                reply(c, REP_ERR_UNSUP, &[])?;
            }
        }
    }
}

fn read_requests(
    ex: &Export,
    c: &mut Conn,
    ctx: Option<ContextId>,
    reply: &Arc<ReplySink>,
) -> io::Result<()> {
    let lim = Limits { size: ex.backend.size(), read_only: ex.read_only };
    let mut hb = [0u8; RequestHeader::SIZE];
    loop {
        c.read_exact(&mut hb)?;
        let Ok(h) = RequestHeader::decode(&hb) else {
            warn!("bad request magic: disconnecting");
            return Ok(());
        };
        let cmd = match tx::validate(&h, lim) {
            Ok(cmd) => cmd,
            Err(Reject::Disconnect(why)) => {
                warn!(why, "disconnecting");
                return Ok(());
            }
            Err(Reject::Error(e, why)) => {
                // A refused WRITE's payload is still on the wire: read past it.
                io::copy(&mut Read::by_ref(c).take(h.payload_len() as u64), &mut io::sink())?;
                debug!(cookie = h.cookie, ?e, why, "request refused");
                reply.expect();
                reply.send(Out { cookie: h.cookie, result: Err((e, why.to_string())) });
                continue;
            }
        };
        let op = match cmd {
            Command::Disc => return Ok(()),
            Command::Flush => {
                reply.expect();
                let io = Io { cookie: h.cookie, op: Op::Flush, reply: reply.clone() };
                let _ = ex.work_tx.send(WorkerMsg::Flush(io));
                continue;
            }
            Command::Read { offset, len } => Op::Read { offset, len },
            Command::Write { offset, len, fua } => {
                let mut data = vec![0u8; len as usize];
                c.read_exact(&mut data)?;
                Op::Write { offset, data, fua }
            }
            Command::Trim { offset, len, fua } => Op::Trim { offset, len, fua },
            Command::WriteZeroes { offset, len, fua, .. } => Op::Zero { offset, len, fua },
        };
        if op.extent().1 == 0 {
            // Nothing to schedule: a zero-length request succeeds at once.
            let result = Ok(matches!(op, Op::Read { .. }).then(|| (h.offset, Vec::new())));
            reply.expect();
            reply.send(Out { cookie: h.cookie, result });
            continue;
        }
        reply.expect();
        let _ = ex.sched_tx.send(SchedMsg::Arrive(Io { cookie: h.cookie, op, reply: reply.clone() }, ctx));
    }
}

/// A connection's reply path, shared by every thread that answers its requests.
///
/// `send` puts the reply on the socket at once with non-blocking `sendmsg`s, under the
/// state lock so replies never interleave. Whatever the socket does not take (a full send
/// buffer: a slow client or a large read) goes to the connection's writer thread, which
/// writes it with blocking writes; while anything is queued there, later replies queue
/// behind it, so bytes leave in the order replies were sent. A worker therefore never
/// blocks on a client.
struct ReplySink {
    /// A clone of the connection, written with `MSG_DONTWAIT`.
    conn: Conn,
    structured: bool,
    state: Arc<Mutex<SinkState>>,
    /// To the writer thread; sent to only under `state`'s lock.
    backlog_tx: Sender<Pending>,
    /// Requests read and not yet answered (counted by the reader before it passes one on).
    unanswered: AtomicUsize,
}

#[derive(Default)]
struct SinkState {
    /// Buffers handed to the writer thread and not yet written by it.
    queued: usize,
    /// A write failed: the connection is gone; replies are dropped.
    dead: bool,
}

/// Replies with more data than this go to the writer thread whole: their copy into the
/// socket is long enough that doing it beside the worker's next request beats saving the
/// hop (1 MiB sequential reads), while small replies gain most from skipping it.
const DIRECT_REPLY_MAX: usize = 64 << 10;

/// Reply bytes the socket did not take at once: `head ++ data` from byte `from`.
struct Pending {
    head: Vec<u8>,
    data: Vec<u8>,
    from: usize,
}

impl ReplySink {
    /// A request has been read: it will be answered with one `send`.
    fn expect(&self) {
        self.unanswered.fetch_add(1, Ordering::SeqCst);
    }

    fn send(&self, out: Out) {
        let cookie = out.cookie;
        let mut hdr = [0u8; 28];
        let mut err_chunk = Vec::new();
        let (hlen, data): (usize, Vec<u8>) = match (out.result, self.structured) {
            (Ok(Some((offset, data))), true) if !data.is_empty() => {
                hdr.copy_from_slice(&tx::chunk_offset_data_done(cookie, offset, data.len() as u32));
                (28, data)
            }
            (Ok(Some((_, data))), false) => {
                hdr[..16].copy_from_slice(&tx::simple_reply(cookie, 0));
                (16, data)
            }
            (Ok(_), true) => {
                hdr[..20].copy_from_slice(&tx::chunk_none_done(cookie));
                (20, Vec::new())
            }
            (Ok(None), false) => {
                hdr[..16].copy_from_slice(&tx::simple_reply(cookie, 0));
                (16, Vec::new())
            }
            (Err((e, msg)), true) => {
                err_chunk = tx::chunk_error_done(cookie, e, &msg);
                (0, Vec::new())
            }
            (Err((e, _)), false) => {
                hdr[..16].copy_from_slice(&tx::simple_reply(cookie, e.code()));
                (16, Vec::new())
            }
        };
        let head: &[u8] = if err_chunk.is_empty() { &hdr[..hlen] } else { &err_chunk };
        let total = head.len() + data.len();
        let mut st = self.state.lock().unwrap();
        // Whether more replies of this connection are on their way: then the writer thread
        // coalesces them into one write (and one wake-up of the client), which beats a
        // `sendmsg` each; the last one (every reply at iodepth 1) goes out from here.
        let more = self.unanswered.fetch_sub(1, Ordering::SeqCst) > 1;
        if st.dead {
            return;
        }
        let mut sent = 0usize;
        if st.queued == 0 && !more && data.len() <= DIRECT_REPLY_MAX {
            while sent < total {
                match send_nonblocking(self.conn.raw_fd(), head, &data, sent) {
                    Ok(0) => break,
                    Ok(n) => sent += n,
                    Err(e) => {
                        debug!(error = %e, "reply write failed");
                        st.dead = true;
                        return;
                    }
                }
            }
        }
        if sent < total {
            st.queued += 1;
            let _ = self.backlog_tx.send(Pending { head: head.to_vec(), data, from: sent });
        }
    }
}

/// One non-blocking `sendmsg` of `head ++ data` from byte `from`: the bytes taken, 0 when
/// the socket's send buffer is full.
fn send_nonblocking(fd: RawFd, head: &[u8], data: &[u8], from: usize) -> io::Result<usize> {
    let mut iov = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; 2];
    let mut n = 0;
    if from < head.len() {
        iov[n] = libc::iovec { iov_base: head[from..].as_ptr() as *mut _, iov_len: head.len() - from };
        n += 1;
    }
    let d = from.saturating_sub(head.len());
    if d < data.len() {
        iov[n] = libc::iovec { iov_base: data[d..].as_ptr() as *mut _, iov_len: data.len() - d };
        n += 1;
    }
    if n == 0 {
        return Ok(0);
    }
    loop {
        // SAFETY: a zeroed msghdr is valid; the iovecs point into `head` and `data`, which
        // outlive the call, and `fd` is the open socket `ReplySink::conn` owns.
        let r = unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = iov.as_mut_ptr();
            msg.msg_iovlen = n as _;
            libc::sendmsg(fd, &msg, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL)
        };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(0),
            _ => return Err(e),
        }
    }
}

/// Writes, blocking, what the socket did not take at once, in order. Ends when every
/// [`ReplySink`] of the connection is gone and the backlog is written.
fn writer(c: Conn, rx: Receiver<Pending>, state: &Mutex<SinkState>) {
    let mut w = io::BufWriter::with_capacity(256 << 10, c);
    let mut dead = false;
    while let Ok(first) = rx.recv() {
        // Coalesce what is queued; the sink may write directly again only once all of it
        // has left the buffer.
        let mut n = 0usize;
        let mut next = Some(first);
        while let Some(p) = next.take() {
            n += 1;
            if !dead {
                let r = if p.from < p.head.len() {
                    w.write_all(&p.head[p.from..]).and_then(|_| w.write_all(&p.data))
                } else {
                    w.write_all(&p.data[p.from - p.head.len()..])
                };
                if let Err(e) = r {
                    debug!(error = %e, "reply write failed");
                    dead = true;
                }
            }
            next = rx.try_recv().ok();
        }
        if !dead {
            if let Err(e) = w.flush() {
                debug!(error = %e, "reply write failed");
                dead = true;
            }
        }
        let mut st = state.lock().unwrap();
        st.queued -= n;
        st.dead |= dead;
    }
}

//! One client connection: the handshake, then reading requests and handing them to the
//! export's scheduling core. Replies go out through the connection's [`ReplySink`].
//!
//! A connection is a task on the server's I/O runtime, not a thread: an idle connection
//! costs a socket and a few KiB, and a server with thousands of them runs on as many
//! threads as with one (see [`crate::server`]).

use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::sync::Arc;
use std::time::Duration as StdDuration;

use headway_sched::ContextId;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::watch;
use tracing::{debug, info, warn};

use crate::core::{Io, Op, Out};
use crate::handshake::{self as hs, ClientOption, HandshakeError, OptionHeader};
use crate::proto::*;
use crate::reply::{ReplyOut, ReplySink};
use crate::server::{ContextMode, Export};
use crate::socket::{send_all, wait_for, Reader, StopEvent};
use crate::transmission::{self as tx, Command, Limits, Reject, RequestHeader};

/// A client whose handshake is not over this long after it connected is dropped (unless
/// `--handshake-timeout` says otherwise): a silent or stalled peer must not hold its
/// connection forever, however it paces its bytes. A client's handshake takes a few round
/// trips; ten seconds leaves room for a slow network and a TLS handshake.
pub const HANDSHAKE_TIMEOUT: StdDuration = StdDuration::from_secs(10);

/// Bytes a connection's reader takes from the socket at once: many pipelined request
/// headers per system call.
const READ_BUFFER: usize = 128 << 10;

struct Session {
    structured: bool,
    /// The connection went through STARTTLS.
    tls: bool,
}

/// The server's shutdown, as tasks and as threads wait for it.
#[derive(Clone)]
pub(crate) struct Stop {
    pub rx: watch::Receiver<bool>,
    pub event: Arc<StopEvent>,
}

/// Serve connection `id` (its non-blocking socket `sock`) until the client disconnects
/// (or `stop` says the server is shutting down), then wait until every request it sent
/// has been answered.
pub(crate) async fn connection(ex: Arc<Export>, id: u32, sock: OwnedFd, stop: Stop) {
    debug!(conn = id, "connected");
    let (rd, out) = match sock.try_clone().and_then(|out| Ok((Reader::new(sock)?, Arc::new(out)))) {
        Ok(x) => x,
        Err(e) => {
            warn!(conn = id, error = %e, "connection closed: cannot set it up");
            return;
        }
    };
    let _live = Live::new(&ex, id, &out);
    let slot = ex.admission.handshake(id, &out);
    let mut rd = BufReader::with_capacity(READ_BUFFER, rd);
    let session = match tokio::time::timeout(ex.handshake_timeout, handshake(&mut rd, &out, &ex, id)).await {
        Ok(Ok(Some(s))) => s,
        Ok(Ok(None)) => {
            debug!(conn = id, "closed during handshake");
            return;
        }
        Ok(Err(e)) => {
            debug!(conn = id, error = %e, "handshake failed");
            return;
        }
        Err(_) => {
            debug!(conn = id, "handshake took too long: dropped");
            return;
        }
    };
    let Some(_place) = slot.done() else {
        warn!(conn = id, "connection closed after its handshake: --max-connections reached");
        return;
    };
    info!(conn = id, structured = session.structured, "transmission");
    let tls = session.tls;
    let t = Transmission { ex: ex.clone(), id, rd, out, structured: session.structured, stop };
    if tls {
        // one TLS session, which the reader and the writer share: a task, never threads
        t.run(false).await;
        return;
    }
    // A connection of its own thread (two, with its writer) while the server has them to
    // give: its reads and writes then block, and the kernel wakes it directly, which a
    // busy client notices (see BENCHMARKS.md). The rest are tasks on the I/O threads.
    if let Ok(permit) = ex.connection_threads.clone().try_acquire_owned() {
        let (tx, rx) = std::sync::mpsc::channel::<Transmission>();
        let (done_tx, done) = tokio::sync::oneshot::channel::<()>();
        let rt = tokio::runtime::Handle::current();
        let started = std::thread::Builder::new().name(format!("conn-{id}")).spawn(move || {
            if let Ok(t) = rx.recv() {
                rt.block_on(t.run(true));
            }
            drop(permit);
            let _ = done_tx.send(());
        });
        match started {
            Ok(_) => {
                let _ = tx.send(t);
                let _ = done.await;
                return;
            }
            Err(e) => debug!(conn = id, error = %e, "no thread for the connection: served as a task"),
        }
    }
    t.run(false).await;
}

/// A connection's socket in the export's list of live ones while the connection is
/// served: what shutdown closes when a connection will not finish by itself.
struct Live<'a> {
    ex: &'a Export,
    id: u32,
}

impl<'a> Live<'a> {
    fn new(ex: &'a Export, id: u32, sock: &Arc<OwnedFd>) -> Live<'a> {
        ex.live.lock().unwrap().insert(id, sock.clone());
        Live { ex, id }
    }
}

impl Drop for Live<'_> {
    fn drop(&mut self) {
        self.ex.live.lock().unwrap().remove(&self.id);
    }
}

/// A connection past its handshake.
struct Transmission {
    ex: Arc<Export>,
    id: u32,
    rd: BufReader<Reader>,
    out: Arc<OwnedFd>,
    structured: bool,
    stop: Stop,
}

impl Transmission {
    /// Serve requests until the client disconnects or the server stops, then wait for
    /// every reply. `thread`: on a thread of the connection's own (blocking reads and a
    /// writer thread).
    async fn run(self, thread: bool) {
        let Transmission { ex, id, mut rd, out, structured, stop } = self;
        let Stop { rx: mut stop, event } = stop;
        if thread {
            rd.get_mut().make_blocking(event);
        }
        let fd = rd.get_ref().raw_fd();
        let ctx = match ex.context {
            ContextMode::Connection => Some(ContextId(id)),
            ContextMode::None => None,
        };
        let out = match rd.get_mut().split_tls() {
            Some(w) => ReplyOut::Tls(w),
            None => ReplyOut::Socket(out),
        };
        let (writer, reply) = ReplySink::start(out, structured, thread, ex.memory.clone());
        let ended = read_requests(&ex, &mut rd, fd, id, ctx, &reply, &mut stop).await;
        reply.uncork();
        if let Err(e) = ended {
            if e.kind() != io::ErrorKind::UnexpectedEof {
                debug!(conn = id, error = %e, "connection read ended");
            }
        }
        drop(reply);
        // The writer ends once every request of this connection has been answered (every
        // `Arc<ReplySink>` is gone) and what the socket did not take at once is written.
        let _ = writer.await;
        ex.closed(id);
        if let Some(ctx) = ctx {
            ex.exited(ctx);
        }
        info!(conn = id, "closed");
    }
}

/// Send `b` during the handshake: on the descriptor `c`, or through TLS once it is on.
async fn send(r: &mut BufReader<Reader>, c: &OwnedFd, b: &[u8]) -> io::Result<()> {
    match r.get_mut().tls() {
        Some(t) => {
            t.write_all(b).await?;
            t.flush().await
        }
        None => send_all(c, b, &[], 0, false).await,
    }
}

/// The handshake on the reader `r`, answering on the descriptor `c` (or through TLS past
/// STARTTLS, which replaces `r`'s socket by the TLS stream).
async fn handshake(
    r: &mut BufReader<Reader>,
    c: &OwnedFd,
    ex: &Export,
    id: u32,
) -> io::Result<Option<Session>> {
    // replies collect in `out`, sent whole before the next read and at the end
    let mut out: Vec<u8> = Vec::new();
    out.extend_from_slice(&hs::greeting());
    send(r, c, &std::mem::take(&mut out)).await?;
    let require = ex.tls.as_ref().is_some_and(|t| t.require);
    let mut tls = false;
    let mut fl = [0u8; 4];
    r.read_exact(&mut fl).await?;
    let Ok(cflags) = hs::decode_client_flags(&fl) else { return Ok(None) };
    let no_zeroes = cflags & FLAG_C_NO_ZEROES != 0;
    let mut structured = false;
    loop {
        send(r, c, &std::mem::take(&mut out)).await?;
        let mut h = [0u8; OptionHeader::SIZE];
        r.read_exact(&mut h).await?;
        let Ok(h) = OptionHeader::decode(&h) else { return Ok(None) };
        if h.len > MAX_OPTION_LEN {
            return Ok(None);
        }
        let mut data = vec![0u8; h.len as usize];
        r.read_exact(&mut data).await?;
        let opt = h.opt;
        let reply =
            |out: &mut Vec<u8>, ty: u32, d: &[u8]| out.extend_from_slice(&hs::option_reply(opt, ty, d));
        let parsed = hs::parse_option(opt, &data);
        if require && !tls && !matches!(parsed, Ok(ClientOption::StartTls | ClientOption::Abort)) {
            if matches!(parsed, Ok(ClientOption::ExportName(_))) {
                // NBD_OPT_EXPORT_NAME cannot be answered with an error: the connection ends
                return Ok(None);
            }
            reply(&mut out, REP_ERR_TLS_REQD, b"this server requires TLS: send NBD_OPT_STARTTLS first");
            continue;
        }
        match parsed {
            Err(HandshakeError::Invalid(m)) => reply(&mut out, REP_ERR_INVALID, m.as_bytes()),
            Ok(ClientOption::StartTls) => match (&ex.tls, tls) {
                (None, _) => reply(&mut out, REP_ERR_UNSUP, b"TLS is not configured on this server (--tls)"),
                (Some(_), true) => reply(&mut out, REP_ERR_INVALID, b"TLS is already on"),
                (Some(t), false) => {
                    reply(&mut out, REP_ACK, &[]);
                    send(r, c, &std::mem::take(&mut out)).await?;
                    if !r.buffer().is_empty() {
                        // bytes sent before TLS was on could be taken as if they had come
                        // through it: refuse them
                        debug!("bytes after NBD_OPT_STARTTLS before the TLS handshake: disconnecting");
                        return Ok(None);
                    }
                    let ssl = t.session().map_err(io::Error::other)?;
                    if let Err(e) = r.get_mut().start_tls(ssl).await {
                        // a client with the wrong credentials, or one that is no TLS
                        // client: the operator needs to hear of it
                        warn!(conn = id, error = %e, "TLS handshake failed: connection closed");
                        return Err(e);
                    }
                    tls = true;
                    // what was negotiated in plaintext does not count (the protocol says so)
                    structured = false;
                }
            },
            Err(_) => return Ok(None),
            Ok(ClientOption::ExportName(n)) => {
                if !n.is_empty() && n != ex.name {
                    return Ok(None);
                }
                out.extend_from_slice(&hs::export_name_reply(ex.backend.size(), ex.flags, no_zeroes));
                send(r, c, &out).await?;
                return Ok(Some(Session { structured, tls }));
            }
            Ok(ClientOption::Abort) => {
                reply(&mut out, REP_ACK, &[]);
                let _ = send(r, c, &out).await;
                return Ok(None);
            }
            Ok(ClientOption::List) => {
                reply(&mut out, REP_SERVER, &hs::rep_server(&ex.name));
                reply(&mut out, REP_ACK, &[]);
            }
            Ok(ClientOption::StructuredReply) => {
                structured = true;
                reply(&mut out, REP_ACK, &[]);
            }
            Ok(ClientOption::Info { go, name, requests }) => {
                if !name.is_empty() && name != ex.name {
                    reply(&mut out, REP_ERR_UNKNOWN, format!("no export named `{name}`").as_bytes());
                    continue;
                }
                reply(&mut out, REP_INFO, &hs::info_export(ex.backend.size(), ex.flags));
                if requests.contains(&INFO_NAME) {
                    reply(&mut out, REP_INFO, &hs::info_text(INFO_NAME, &ex.name));
                }
                if requests.contains(&INFO_DESCRIPTION) {
                    reply(&mut out, REP_INFO, &hs::info_text(INFO_DESCRIPTION, "headway scheduled export"));
                }
                // Sent whether asked or not (the spec allows it): with a minimum of 1 byte it
                // constrains nothing a client could be unprepared for.
                reply(&mut out, REP_INFO, &hs::info_block_size(MIN_BLOCK, PREFERRED_BLOCK, MAX_PAYLOAD));
                reply(&mut out, REP_ACK, &[]);
                if go {
                    send(r, c, &out).await?;
                    return Ok(Some(Session { structured, tls }));
                }
            }
            Ok(ClientOption::Unknown(o)) => {
                debug!(option = o, "unsupported option");
                reply(&mut out, REP_ERR_UNSUP, &[]);
            }
        }
    }
}

/// Longest a reader polls for a client's next request before it blocks on the socket.
pub const SPIN_LIMIT: StdDuration = StdDuration::from_micros(100);

/// Adaptive polling before a blocking read. Waking a thread blocked on a socket costs a
/// cross-CPU interrupt, which on a virtual machine is tens of µs — more than the whole
/// request takes on a page-cache export (measured here: 4 KiB reads at iodepth 1, 15k IOPS
/// with the server and fio on different CPUs, 108k on one). So when the client's last
/// request came within [`SPIN_LIMIT`] of the reader starting to wait for it, the reader
/// polls the socket for up to that long before blocking; a client that pauses longer
/// makes it block at once until it is quick again.
#[derive(Default)]
struct Spin {
    /// When the reader began to wait for the next request.
    since: Option<std::time::Instant>,
    /// The last wait was longer than the limit: block without polling.
    slow: bool,
}

impl Spin {
    /// Poll `fd` (yielding to the connection's neighbours between polls) until it is
    /// readable or the limit has passed — unless the client has been slow, or reads go
    /// through TLS (`None`: the socket's readiness says nothing of TLS's buffered bytes).
    /// A reader on a thread of its own is told to retry its next read until then instead.
    async fn wait_readable(&mut self, rd: &mut Reader, fd: Option<RawFd>) {
        let start = std::time::Instant::now();
        self.since = Some(start);
        let Some(fd) = fd.filter(|_| !self.slow) else { return };
        // on a thread of its own, the read itself retries until the limit: the call that
        // finds the request reads it (one system call where polling first takes two)
        if rd.spin_until(start + SPIN_LIMIT) {
            return;
        }
        while start.elapsed() < SPIN_LIMIT {
            if wait_for(fd, libc::POLLIN, 0) {
                return;
            }
            tokio::task::yield_now().await;
        }
    }

    fn arrived(&mut self) {
        if let Some(t) = self.since.take() {
            self.slow = t.elapsed() > SPIN_LIMIT;
        }
    }
}

/// Read requests until the client disconnects. Replies are corked while more requests
/// are already buffered (see [`ReplySink`]).
async fn read_requests(
    ex: &Export,
    c: &mut BufReader<Reader>,
    fd: Option<RawFd>,
    id: u32,
    ctx: Option<ContextId>,
    reply: &Arc<ReplySink>,
    stop: &mut watch::Receiver<bool>,
) -> io::Result<()> {
    let lim = Limits { size: ex.backend.size(), read_only: ex.read_only };
    let mut hb = [0u8; RequestHeader::SIZE];
    let mut corked = false;
    let mut spin = Spin::default();
    loop {
        let buffered = c.buffer().len() >= RequestHeader::SIZE;
        if buffered != corked {
            if buffered {
                reply.cork();
            } else {
                reply.uncork();
            }
            corked = buffered;
        }
        // (an atomic load: no lock per request)
        if stop.has_changed().unwrap_or(true) {
            return Ok(());
        }
        if buffered {
            c.read_exact(&mut hb).await?;
        } else {
            spin.wait_readable(c.get_mut(), fd).await;
            // shutdown ends the wait for the next request, never a request half read
            tokio::select! {
                r = c.read_exact(&mut hb) => { r?; }
                _ = stop.changed() => return Ok(()),
            }
        }
        let arrived = ex.now();
        spin.arrived();
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
                tokio::io::copy(&mut (&mut *c).take(h.payload_len() as u64), &mut tokio::io::sink()).await?;
                debug!(cookie = h.cookie, ?e, why, "request refused");
                reply.expect(0).await;
                reply.send(Out { cookie: h.cookie, result: Err((e, why.to_string())), cost: 0 });
                continue;
            }
        };
        // Bounded memory: wait here while this connection's unanswered requests hold their
        // budget of data (before the payload is read); the client's further requests stay
        // on its socket meanwhile.
        match cmd {
            Command::Disc => return Ok(()),
            Command::Read { len, .. } | Command::Write { len, .. } => reply.expect(len as u64).await,
            _ => reply.expect(0).await,
        }
        let op = match cmd {
            Command::Disc => return Ok(()),
            Command::Flush => {
                let io = Io { cookie: h.cookie, op: Op::Flush, reply: reply.clone(), arrived, conn: id };
                ex.flush(io);
                continue;
            }
            Command::Read { offset, len } => Op::Read { offset, len },
            Command::Write { offset, len, fua } => {
                if corked && c.buffer().len() < len as usize {
                    // The payload is still on its way: nothing held while we wait.
                    reply.uncork();
                    corked = false;
                }
                let mut data = Vec::new();
                if data.try_reserve_exact(len as usize).is_err() {
                    // the system has no memory for the payload: read past it, refuse
                    tokio::io::copy(&mut (&mut *c).take(len as u64), &mut tokio::io::sink()).await?;
                    crate::memory::refused("a WRITE's payload", len as usize);
                    let why = "the server has no memory for the payload".to_string();
                    reply.send(Out { cookie: h.cookie, result: Err((Errno::NoMem, why)), cost: len as u64 });
                    continue;
                }
                // straight into the buffer's unwritten memory (no zeroing first)
                while data.len() < len as usize {
                    let want = (len as usize - data.len()) as u64;
                    if (&mut *c).take(want).read_buf(&mut data).await? == 0 {
                        return Err(io::ErrorKind::UnexpectedEof.into());
                    }
                }
                Op::Write { offset, data, fua }
            }
            Command::Trim { offset, len, fua } => Op::Trim { offset, len, fua },
            Command::WriteZeroes { offset, len, fua, no_hole } => Op::Zero { offset, len, fua, no_hole },
        };
        if op.extent().1 == 0 {
            // Nothing to schedule: a zero-length request succeeds at once.
            let result = Ok(matches!(op, Op::Read { .. }).then(|| (h.offset, Vec::new())));
            reply.send(Out { cookie: h.cookie, result, cost: 0 });
            continue;
        }
        ex.arrive(Io { cookie: h.cookie, op, reply: reply.clone(), arrived, conn: id }, ctx);
    }
}

//! One client connection: the handshake, then reading requests and handing them to the
//! export's scheduling core. Replies go out through the connection's [`ReplySink`].

use std::io::{self, BufReader, Read, Write};
use std::sync::Arc;
use std::time::Duration as StdDuration;

use headway_sched::ContextId;
use tracing::{debug, info, warn};

use crate::core::{Io, Op, Out};
use crate::handshake::{self as hs, ClientOption, HandshakeError, OptionHeader};
use crate::proto::*;
use crate::reply::ReplySink;
use crate::server::{ContextMode, Export};
use crate::socket::Conn;
use crate::transmission::{self as tx, Command, Limits, Reject, RequestHeader};

/// A client whose handshake is not over this long after it connected is dropped: a silent or
/// stalled peer must not hold a thread forever.
pub const HANDSHAKE_TIMEOUT: StdDuration = StdDuration::from_secs(30);

/// Bytes a connection's reader takes from the socket at once: many pipelined request
/// headers per system call.
const READ_BUFFER: usize = 128 << 10;

struct Session {
    structured: bool,
}

/// Serve connection `id` until the client disconnects (or the server shuts its reading
/// down), then wait until every request it sent has been answered.
pub(crate) fn connection(ex: &Export, id: u32, mut conn: Conn) {
    debug!(conn = id, "connected");
    let mut bounded = Deadline { c: &mut conn, until: std::time::Instant::now() + ex.handshake_timeout };
    let session = match handshake(&mut bounded, ex) {
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
    if let Err(e) = conn.set_read_timeout(None).and_then(|_| conn.set_write_timeout(None)) {
        warn!(conn = id, error = %e, "cannot clear the handshake timeout");
        return;
    }
    info!(conn = id, structured = session.structured, "transmission");
    let ctx = match ex.context {
        ContextMode::Connection => Some(ContextId(id)),
        ContextMode::None => None,
    };
    let (writer, reply) = match ReplySink::start(&conn, session.structured, id) {
        Ok(w) => w,
        Err(e) => {
            warn!(conn = id, error = %e, "cannot start the reply writer");
            return;
        }
    };
    let mut rd = BufReader::with_capacity(READ_BUFFER, conn);
    let ended = read_requests(ex, &mut rd, id, ctx, &reply);
    reply.uncork();
    if let Err(e) = ended {
        if e.kind() != io::ErrorKind::UnexpectedEof {
            debug!(conn = id, error = %e, "connection read ended");
        }
    }
    drop(reply);
    // The writer ends once every request of this connection has been answered (every
    // `Arc<ReplySink>` is gone) and what the socket did not take at once is written.
    let _ = writer.join();
    ex.closed(id);
    if let Some(ctx) = ctx {
        ex.exited(ctx);
    }
    info!(conn = id, "closed");
}

/// The handshake's socket: every read and write must finish by `until` (the whole
/// handshake has [`HANDSHAKE_TIMEOUT`], however the client paces its bytes).
struct Deadline<'a> {
    c: &'a mut Conn,
    until: std::time::Instant,
}

impl Deadline<'_> {
    /// Time left, or `TimedOut` once the deadline has passed.
    fn left(&self) -> io::Result<StdDuration> {
        let left = self.until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "the handshake took too long"));
        }
        Ok(left)
    }
}

impl Read for Deadline<'_> {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        let left = self.left()?;
        self.c.set_read_timeout(Some(left))?;
        self.c.read(b)
    }
}

impl Write for Deadline<'_> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let left = self.left()?;
        self.c.set_write_timeout(Some(left))?;
        self.c.write(b)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.c.flush()
    }
}

fn handshake(c: &mut Deadline<'_>, ex: &Export) -> io::Result<Option<Session>> {
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
        let reply = |c: &mut Deadline<'_>, ty: u32, d: &[u8]| c.write_all(&hs::option_reply(opt, ty, d));
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
    fn wait_readable(&mut self, fd: std::os::fd::RawFd) {
        let start = std::time::Instant::now();
        self.since = Some(start);
        if self.slow {
            return;
        }
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        while start.elapsed() < SPIN_LIMIT {
            // SAFETY: one valid pollfd, zero timeout: never blocks.
            if unsafe { libc::poll(&mut p, 1, 0) } != 0 {
                return;
            }
            std::hint::spin_loop();
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
fn read_requests(
    ex: &Export,
    c: &mut BufReader<Conn>,
    id: u32,
    ctx: Option<ContextId>,
    reply: &Arc<ReplySink>,
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
        if c.buffer().is_empty() {
            spin.wait_readable(c.get_ref().raw_fd());
        }
        c.read_exact(&mut hb)?;
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
                io::copy(&mut Read::by_ref(c).take(h.payload_len() as u64), &mut io::sink())?;
                debug!(cookie = h.cookie, ?e, why, "request refused");
                reply.expect(0);
                reply.send(Out { cookie: h.cookie, result: Err((e, why.to_string())), cost: 0 });
                continue;
            }
        };
        // Bounded memory: wait here while this connection's unanswered requests hold their
        // budget of data (before the payload is read).
        match cmd {
            Command::Disc => return Ok(()),
            Command::Read { len, .. } | Command::Write { len, .. } => reply.expect(len as u64),
            _ => reply.expect(0),
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
                    // The payload is still on its way: nothing held while we block.
                    reply.uncork();
                    corked = false;
                }
                let mut data = vec![0u8; len as usize];
                c.read_exact(&mut data)?;
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

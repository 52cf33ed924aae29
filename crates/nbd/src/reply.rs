//! A connection's reply path: whichever thread has a reply writes it onto the socket.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::sync::{oneshot, Semaphore};
use tracing::debug;

use crate::core::Out;
use crate::memory::Memory;
use crate::socket::{send_all, send_nonblocking, TlsStream};
use crate::transmission as tx;
use tokio::io::{AsyncWriteExt, WriteHalf};

/// A connection's reply path, shared by every thread that answers its requests.
///
/// `send` puts the reply on the socket at once with non-blocking `sendmsg`s, under the
/// state lock so replies never interleave. Whatever the socket does not take (a full send
/// buffer: a slow client or a large read) goes to the connection's writer task, which
/// writes it as the socket takes it; while anything is queued there, later replies queue
/// behind it, so bytes leave in the order replies were sent. A worker therefore never
/// blocks on a client.
///
/// Corking: while the connection's reader knows more requests are already buffered (it
/// read them in one go), it corks the sink; replies then collect in one buffer (those up to
/// [`DIRECT_REPLY_MAX`] of data, whichever thread sends them), which goes out in one write
/// when the reader uncorks — before it next waits on the socket. A client that pipelines
/// sixteen requests gets their replies in a write or two instead of sixteen.
pub(crate) struct ReplySink {
    /// A duplicate of the connection's socket, written with `MSG_DONTWAIT` (`None` over
    /// TLS: every reply goes through the writer, which holds the session).
    fd: Option<Arc<OwnedFd>>,
    structured: bool,
    state: Arc<Mutex<SinkState>>,
    /// To the writer task; sent to only under `state`'s lock.
    backlog_tx: UnboundedSender<Pending>,
    /// Requests read and not yet answered (counted by the reader before it passes one on).
    unanswered: AtomicUsize,
    /// Bytes of data (WRITE payloads, READ lengths) unanswered requests and unwritten
    /// replies hold.
    budget: Arc<Budget>,
}

/// A connection's data budget, and its share of the server's: taken by the reader per
/// request, given back when the reply's bytes have left for the socket. A reader that
/// finds either spent stops reading its connection until replies give some back.
struct Budget {
    own: Semaphore,
    server: Arc<Memory>,
}

impl Budget {
    fn new(server: Arc<Memory>) -> Budget {
        Budget { own: Semaphore::new(CONNECTION_BUDGET as usize), server }
    }
    fn give(&self, cost: u64) {
        if cost > 0 {
            self.own.add_permits(cost as usize);
            self.server.give(cost);
        }
    }
}

/// Data a connection's unanswered requests may hold at once: two maximal requests. A
/// client that pipelines more waits (its requests stay on the socket) until replies free
/// room, so a connection's memory is bounded whatever it sends (and all connections' by
/// the server's budget, `crate::memory`).
pub const CONNECTION_BUDGET: u64 = 2 * crate::proto::MAX_PAYLOAD as u64;

/// What a request takes of the budget at least, data or not: requests without data (FLUSH,
/// refused commands, zero-length reads) still hold a reply each, so a client that never
/// reads its replies is stopped after `CONNECTION_BUDGET / REQUEST_FLOOR` (16,384) of them.
pub const REQUEST_FLOOR: u64 = 4096;

fn charge(cost: u64) -> u64 {
    cost.max(REQUEST_FLOOR)
}

#[derive(Default)]
struct SinkState {
    /// Buffers handed to the writer task and not yet written by it.
    queued: usize,
    /// A write failed: the connection is gone; replies are dropped.
    dead: bool,
    /// Replies collect in `corked` until `uncork`.
    cork: bool,
    corked: Vec<u8>,
    /// The budget the corked replies hold.
    corked_cost: u64,
}

/// A corked buffer this large goes out without waiting for `uncork`.
const CORK_MAX: usize = 256 << 10;

/// Replies with more data than this go to the writer task whole: their copy into the
/// socket is long enough that doing it beside the worker's next request beats saving the
/// hop (1 MiB sequential reads), while small replies gain most from skipping it.
const DIRECT_REPLY_MAX: usize = 64 << 10;

/// Reply bytes the socket did not take at once: `head ++ data` from byte `from`.
struct Pending {
    head: Vec<u8>,
    data: Vec<u8>,
    from: usize,
    /// Budget given back once written.
    cost: u64,
}

impl ReplySink {
    /// The reply path of a connection whose replies go to `out`: in plaintext, written to
    /// the socket's duplicate descriptor from any thread without blocking, and what it does
    /// not take at once by a writer; over TLS, all by the writer. The writer ends once
    /// every clone of the returned sink is gone and its backlog written (the receiver hears
    /// when). It is a thread of its own writing with blocking calls when `thread` (and one
    /// can be started), else a task on the current runtime.
    pub fn start(
        out: ReplyOut,
        structured: bool,
        thread: bool,
        memory: Arc<Memory>,
    ) -> (oneshot::Receiver<()>, Arc<ReplySink>) {
        let fd = match &out {
            ReplyOut::Socket(fd) => Some(fd.clone()),
            ReplyOut::Tls(_) => None,
        };
        let (backlog_tx, backlog_rx) = tokio::sync::mpsc::unbounded_channel::<Pending>();
        let state: Arc<Mutex<SinkState>> = Arc::default();
        let budget = Arc::new(Budget::new(memory));
        let (done_tx, done) = oneshot::channel();
        let w = Writer { out, rx: backlog_rx, state: state.clone(), budget: budget.clone(), done: done_tx };
        w.start(thread);
        let sink = ReplySink { fd, structured, state, backlog_tx, unanswered: AtomicUsize::new(0), budget };
        (done, Arc::new(sink))
    }

    /// A request has been read: it will be answered with one `send`, whose `Out::cost`
    /// is `cost` (each charged at least [`REQUEST_FLOOR`]). Waits while the connection's
    /// other unanswered requests hold so much data that `cost` more would pass
    /// [`CONNECTION_BUDGET`] (one request alone always passes); held replies are sent
    /// first.
    pub async fn expect(&self, cost: u64) {
        let cost = charge(cost) as u32;
        match self.budget.own.try_acquire_many(cost) {
            Ok(p) => p.forget(),
            Err(_) => {
                self.uncork();
                self.budget.own.acquire_many(cost).await.expect("the budget is never closed").forget();
            }
        }
        // then the server's, behind the connections that waited for it first
        self.budget.server.take(cost, || self.uncork()).await;
        self.unanswered.fetch_add(1, Ordering::SeqCst);
    }

    pub fn send(&self, out: Out) {
        let (cookie, cost) = (out.cookie, charge(out.cost));
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
        let mut st = self.state.lock().unwrap();
        // Whether more replies of this connection are on their way: then the writer task
        // coalesces them into one write (and one wake-up of the client), which beats a
        // `sendmsg` each; the last one (every reply at iodepth 1) goes out from here.
        let more = self.unanswered.fetch_sub(1, Ordering::SeqCst) > 1;
        if st.dead {
            self.budget.give(cost);
            return;
        }
        if st.cork && data.len() <= DIRECT_REPLY_MAX {
            st.corked.extend_from_slice(head);
            st.corked.extend_from_slice(&data);
            st.corked_cost += cost;
            if st.corked.len() >= CORK_MAX {
                self.flush_corked(&mut st);
            }
            return;
        }
        let direct = st.queued == 0 && !more && data.len() <= DIRECT_REPLY_MAX;
        self.put(&mut st, direct, head, data, cost);
    }

    /// Write `head ++ data` now as far as the socket takes it (when `direct`), and hand the
    /// rest to the writer task; the budget `cost` goes back once all of it has left.
    fn put(&self, st: &mut SinkState, direct: bool, head: &[u8], data: Vec<u8>, cost: u64) {
        let total = head.len() + data.len();
        let mut sent = 0usize;
        if let (true, Some(fd)) = (direct, &self.fd) {
            while sent < total {
                match send_nonblocking(fd.as_raw_fd(), head, &data, sent) {
                    Ok(0) => break,
                    Ok(n) => sent += n,
                    Err(e) => {
                        debug!(error = %e, "reply write failed");
                        st.dead = true;
                        break;
                    }
                }
            }
        }
        if sent < total && !st.dead {
            st.queued += 1;
            let _ = self.backlog_tx.send(Pending { head: head.to_vec(), data, from: sent, cost });
        } else {
            self.budget.give(cost);
        }
    }
}

impl ReplySink {
    /// Collect replies until [`uncork`](Self::uncork) (the reader has more requests
    /// buffered).
    pub fn cork(&self) {
        self.state.lock().unwrap().cork = true;
    }

    /// Send what collected while corked, and send replies at once again.
    pub fn uncork(&self) {
        let mut st = self.state.lock().unwrap();
        st.cork = false;
        self.flush_corked(&mut st);
    }

    /// The corked bytes onto the socket, what it does not take to the writer task.
    fn flush_corked(&self, st: &mut SinkState) {
        let cost = std::mem::take(&mut st.corked_cost);
        if st.corked.is_empty() || st.dead {
            st.corked.clear();
            self.budget.give(cost);
            return;
        }
        let buf = std::mem::take(&mut st.corked);
        let direct = st.queued == 0;
        self.put(st, direct, &[], buf, cost);
    }
}

/// Where a connection's replies go.
pub(crate) enum ReplyOut {
    /// The socket's duplicate descriptor.
    Socket(Arc<OwnedFd>),
    /// The TLS session's writing half.
    Tls(WriteHalf<TlsStream>),
}

impl ReplyOut {
    /// `head ++ data` from byte `from`, whole (`blocking`: see [`send_all`]).
    async fn send(&mut self, head: &[u8], data: &[u8], from: usize, blocking: bool) -> std::io::Result<()> {
        match self {
            ReplyOut::Socket(fd) => send_all(fd, head, data, from, blocking).await,
            ReplyOut::Tls(w) => {
                if from < head.len() {
                    w.write_all(&head[from..]).await?;
                    w.write_all(data).await?;
                } else {
                    w.write_all(&data[from - head.len()..]).await?;
                }
                w.flush().await
            }
        }
    }
}

/// A connection's writer: writes what the socket did not take at once, in order, as the
/// socket takes it. Ends when every [`ReplySink`] of the connection is gone and the
/// backlog is written.
struct Writer {
    out: ReplyOut,
    rx: UnboundedReceiver<Pending>,
    state: Arc<Mutex<SinkState>>,
    budget: Arc<Budget>,
    done: oneshot::Sender<()>,
}

impl Writer {
    /// On a thread of its own (blocking writes) when `thread` and one starts, else as a
    /// task on the current runtime.
    fn start(self, thread: bool) {
        if thread {
            let (tx, rx) = std::sync::mpsc::channel::<Writer>();
            let rt = tokio::runtime::Handle::current();
            let started = std::thread::Builder::new().name("conn-writer".into()).spawn(move || {
                if let Ok(w) = rx.recv() {
                    rt.block_on(w.run(true));
                }
            });
            if started.is_ok() {
                let _ = tx.send(self);
                return;
            }
        }
        tokio::spawn(self.run(false));
    }

    async fn run(self, blocking: bool) {
        let Writer { mut out, mut rx, state, budget, done } = self;
        let mut dead = false;
        // small replies queued together go out in one write (and one wake-up of the client)
        let mut small: Vec<u8> = Vec::new();
        while let Some(first) = rx.recv().await {
            // Coalesce what is queued; the sink may write directly again only once all of
            // it has left.
            let (mut n, mut cost) = (0usize, 0u64);
            let mut next = Some(first);
            while let Some(p) = next.take() {
                n += 1;
                cost += p.cost;
                if !dead {
                    let left = p.head.len() + p.data.len() - p.from;
                    let r = if left <= COALESCE_MAX {
                        if p.from < p.head.len() {
                            small.extend_from_slice(&p.head[p.from..]);
                            small.extend_from_slice(&p.data);
                        } else {
                            small.extend_from_slice(&p.data[p.from - p.head.len()..]);
                        }
                        if small.len() >= CORK_MAX {
                            out.send(&[], &std::mem::take(&mut small), 0, blocking).await
                        } else {
                            Ok(())
                        }
                    } else {
                        match out.send(&[], &std::mem::take(&mut small), 0, blocking).await {
                            Ok(()) => out.send(&p.head, &p.data, p.from, blocking).await,
                            e => e,
                        }
                    };
                    if let Err(e) = r {
                        debug!(error = %e, "reply write failed");
                        dead = true;
                    }
                }
                next = rx.try_recv().ok();
            }
            if !dead && !small.is_empty() {
                if let Err(e) = out.send(&[], &std::mem::take(&mut small), 0, blocking).await {
                    debug!(error = %e, "reply write failed");
                    dead = true;
                }
            }
            small.clear();
            budget.give(cost);
            let mut st = state.lock().unwrap();
            st.queued -= n;
            st.dead |= dead;
        }
        let _ = done.send(());
    }
}

/// Backlogged replies this small are copied together and written at once.
const COALESCE_MAX: usize = 16 << 10;

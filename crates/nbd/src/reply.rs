//! A connection's reply path: whichever thread has a reply writes it onto the socket.

use std::io::{self, Write};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};

use tracing::debug;

use crate::core::Out;
use crate::socket::Conn;
use crate::transmission as tx;

/// A connection's reply path, shared by every thread that answers its requests.
///
/// `send` puts the reply on the socket at once with non-blocking `sendmsg`s, under the
/// state lock so replies never interleave. Whatever the socket does not take (a full send
/// buffer: a slow client or a large read) goes to the connection's writer thread, which
/// writes it with blocking writes; while anything is queued there, later replies queue
/// behind it, so bytes leave in the order replies were sent. A worker therefore never
/// blocks on a client.
///
/// Corking: while the connection's reader knows more requests are already buffered (it
/// read them in one go), it corks the sink; replies then collect in one buffer (those up to
/// [`DIRECT_REPLY_MAX`] of data, whichever thread sends them), which goes out in one write
/// when the reader uncorks — before it next blocks on the socket. A client that pipelines
/// sixteen requests gets their replies in a write or two instead of sixteen.
pub(crate) struct ReplySink {
    /// A clone of the connection, written with `MSG_DONTWAIT`.
    conn: Conn,
    structured: bool,
    state: Arc<Mutex<SinkState>>,
    /// To the writer thread; sent to only under `state`'s lock.
    backlog_tx: Sender<Pending>,
    /// Requests read and not yet answered (counted by the reader before it passes one on).
    unanswered: AtomicUsize,
    /// Bytes of data (WRITE payloads, READ lengths) unanswered requests and unwritten
    /// replies hold.
    budget: Arc<Budget>,
}

/// A connection's data budget: taken by the reader per request, given back when the
/// reply's bytes have left for the socket.
#[derive(Default)]
struct Budget {
    /// Bytes held, and whether the reader waits for some to be given back.
    used: Mutex<(u64, bool)>,
    freed: Condvar,
}

impl Budget {
    fn give(&self, cost: u64) {
        if cost > 0 {
            let mut g = self.used.lock().unwrap();
            g.0 -= cost;
            // A notify is a system call even with nobody waiting: only when the reader is.
            if g.1 {
                self.freed.notify_one();
            }
        }
    }
}

/// Data a connection's unanswered requests may hold at once: two maximal requests. A
/// client that pipelines more waits (its requests stay on the socket) until replies free
/// room, so a connection's memory is bounded whatever it sends.
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
    /// Buffers handed to the writer thread and not yet written by it.
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

/// Replies with more data than this go to the writer thread whole: their copy into the
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
    /// The reply path of connection `id` (`conn` is cloned for it) and its writer thread,
    /// which ends once every clone of the returned sink is gone and its backlog written.
    pub fn start(
        conn: &Conn,
        structured: bool,
        id: u32,
    ) -> io::Result<(std::thread::JoinHandle<()>, Arc<ReplySink>)> {
        let (w, direct) = (conn.try_clone()?, conn.try_clone()?);
        let (backlog_tx, backlog_rx) = std::sync::mpsc::channel::<Pending>();
        let state: Arc<Mutex<SinkState>> = Arc::default();
        let (st, budget) = (state.clone(), Arc::new(Budget::default()));
        let b = budget.clone();
        let h = std::thread::Builder::new()
            .name(format!("conn-{id}-writer"))
            .spawn(move || writer(w, backlog_rx, &st, &b))?;
        let sink = ReplySink {
            conn: direct,
            structured,
            state,
            backlog_tx,
            unanswered: AtomicUsize::new(0),
            budget,
        };
        Ok((h, Arc::new(sink)))
    }

    /// A request has been read: it will be answered with one `send`, whose `Out::cost`
    /// is `cost` (each charged at least [`REQUEST_FLOOR`]). Blocks while the connection's other unanswered requests hold so much
    /// data that `cost` more would pass [`CONNECTION_BUDGET`] (one request alone always
    /// passes); held replies are sent first.
    pub fn expect(&self, cost: u64) {
        let cost = charge(cost);
        let over = |u: u64| u > 0 && u + cost > CONNECTION_BUDGET;
        let mut g = self.budget.used.lock().unwrap();
        if over(g.0) {
            drop(g);
            self.uncork();
            g = self.budget.used.lock().unwrap();
            while over(g.0) {
                g.1 = true;
                g = self.budget.freed.wait(g).unwrap();
            }
            g.1 = false;
        }
        g.0 += cost;
        drop(g);
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
        // Whether more replies of this connection are on their way: then the writer thread
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
    /// rest to the writer thread; the budget `cost` goes back once all of it has left.
    fn put(&self, st: &mut SinkState, direct: bool, head: &[u8], data: Vec<u8>, cost: u64) {
        let total = head.len() + data.len();
        let mut sent = 0usize;
        if direct {
            while sent < total {
                match send_nonblocking(self.conn.raw_fd(), head, &data, sent) {
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

    /// The corked bytes onto the socket, what it does not take to the writer thread.
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
fn writer(c: Conn, rx: Receiver<Pending>, state: &Mutex<SinkState>, budget: &Budget) {
    let mut w = io::BufWriter::with_capacity(256 << 10, c);
    let mut dead = false;
    while let Ok(first) = rx.recv() {
        // Coalesce what is queued; the sink may write directly again only once all of it
        // has left the buffer.
        let (mut n, mut cost) = (0usize, 0u64);
        let mut next = Some(first);
        while let Some(p) = next.take() {
            n += 1;
            cost += p.cost;
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
        budget.give(cost);
        let mut st = state.lock().unwrap();
        st.queued -= n;
        st.dead |= dead;
    }
}

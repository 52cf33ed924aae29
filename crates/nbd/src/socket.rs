//! Sockets: bound with the standard library (binding errors come before any runtime
//! starts), served on the I/O runtime through readiness alone.
//!
//! A connection is a non-blocking descriptor and a duplicate of it. The reader waits on
//! the first for readability only; replies are written to the duplicate with
//! non-blocking `sendmsg`s from whichever thread has one, and only a write that finds the
//! socket full registers the duplicate for writability, until it is done ([`send_all`]).
//! So a busy connection costs no wake-ups for send-buffer space it does not wait for
//! (registering both directions for the connection's life wakes the runtime each time the
//! client drains its receive buffer).

use std::io;
use std::net::TcpListener;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixListener;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, Interest, ReadBuf};

pub(crate) enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

/// A [`Listener`] on the I/O runtime.
pub(crate) struct AsyncListener(AsyncFd<Listener>);

impl AsRawFd for Listener {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Listener::Tcp(l) => l.as_raw_fd(),
            Listener::Unix(l) => l.as_raw_fd(),
        }
    }
}

impl Listener {
    /// Hand the socket to the runtime this is called on.
    pub fn into_async(self) -> io::Result<AsyncListener> {
        match &self {
            Listener::Tcp(l) => l.set_nonblocking(true)?,
            Listener::Unix(l) => l.set_nonblocking(true)?,
        }
        // SAFETY: the listener owns its descriptor for as long as the AsyncFd holds it.
        let fd = unsafe { AsyncFd::register_with_interest(self, Interest::READABLE) };
        Ok(AsyncListener(fd.map_err(|e| e.into_parts().1)?))
    }

    fn accept(&self) -> io::Result<OwnedFd> {
        let fd: OwnedFd = match self {
            Listener::Tcp(l) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(true)?;
                let _ = s.set_nodelay(true);
                s.into()
            }
            Listener::Unix(l) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(true)?;
                s.into()
            }
        };
        Ok(fd)
    }
}

impl AsyncListener {
    /// The next connection: its non-blocking descriptor.
    pub async fn accept(&self) -> io::Result<OwnedFd> {
        loop {
            let mut g = self.0.readable().await?;
            if let Ok(r) = g.try_io(|l| l.get_ref().accept()) {
                return r;
            }
        }
    }
}

/// A connection's receiving side. On the I/O runtime, reads wait for readability only;
/// on a thread of its own ([`Reader::make_blocking`]) they block in `poll` on the socket
/// and the server's stop event: no wake-ups while idle.
pub(crate) enum Reader {
    Async(AsyncFd<OwnedFd>),
    Blocking {
        fd: OwnedFd,
        stop: Arc<StopEvent>,
        /// Until then, a read that finds nothing tries again instead of blocking (set by
        /// [`Reader::spin_until`] for one wait).
        spin: Option<std::time::Instant>,
    },
    /// Past STARTTLS, during the rest of the handshake: the whole TLS stream.
    Tls(Box<TlsStream>),
    /// Past STARTTLS, in transmission: its reading half (the writer has the other).
    TlsRead(tokio::io::ReadHalf<TlsStream>),
    /// Only while switching.
    Gone,
}

/// An event that becomes readable, for good, once [`StopEvent::set`] is called (an
/// eventfd).
pub(crate) struct StopEvent(OwnedFd);

impl StopEvent {
    pub fn new() -> io::Result<StopEvent> {
        // SAFETY: eventfd has no preconditions; a non-negative result is a new descriptor.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a new descriptor nothing else owns.
        Ok(StopEvent(unsafe { OwnedFd::from_raw_fd(fd) }))
    }
    pub fn set(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: an 8-byte write from a valid buffer to the eventfd this owns.
        unsafe { libc::write(self.0.as_raw_fd(), one.as_ptr().cast(), 8) };
    }
    fn raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

impl Reader {
    /// Start TLS on this (plaintext, runtime-registered) socket with `ssl`: the TLS
    /// handshake, after which this reader is the whole TLS stream.
    pub async fn start_tls(&mut self, ssl: openssl::ssl::Ssl) -> io::Result<()> {
        let Reader::Async(a) = std::mem::replace(self, Reader::Gone) else {
            return Err(io::Error::other("STARTTLS on a connection not in plaintext"));
        };
        let sock = Sock::new(a.into_inner())?;
        let mut s = tokio_openssl::SslStream::new(ssl, sock).map_err(io::Error::other)?;
        Pin::new(&mut s).accept().await.map_err(|e| io::Error::other(format!("TLS handshake: {e}")))?;
        *self = Reader::Tls(Box::new(s));
        Ok(())
    }

    /// The TLS stream during the handshake (`None` in plaintext).
    pub fn tls(&mut self) -> Option<&mut TlsStream> {
        match self {
            Reader::Tls(t) => Some(t),
            _ => None,
        }
    }

    /// Past the handshake: keep the reading half, give the writing half.
    pub fn split_tls(&mut self) -> Option<tokio::io::WriteHalf<TlsStream>> {
        match std::mem::replace(self, Reader::Gone) {
            Reader::Tls(t) => {
                let (r, w) = tokio::io::split(*t);
                *self = Reader::TlsRead(r);
                Some(w)
            }
            other => {
                *self = other;
                None
            }
        }
    }

    pub fn new(fd: OwnedFd) -> io::Result<Reader> {
        // SAFETY: the OwnedFd keeps its descriptor open for as long as the AsyncFd holds it.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) };
        Ok(Reader::Async(fd.map_err(|e| e.into_parts().1)?))
    }

    /// The socket's descriptor, while reads go to it directly (not through TLS).
    pub fn raw_fd(&self) -> Option<RawFd> {
        match self {
            Reader::Async(a) => Some(a.get_ref().as_raw_fd()),
            Reader::Blocking { fd, .. } => Some(fd.as_raw_fd()),
            Reader::Tls(_) | Reader::TlsRead(_) | Reader::Gone => None,
        }
    }

    /// Read from here on by blocking (on a thread of the connection's own), no longer
    /// registered with the runtime; the stream ends once `stop` is set.
    pub fn make_blocking(&mut self, stop: Arc<StopEvent>) {
        if let Reader::Async(a) = std::mem::replace(self, Reader::Gone) {
            *self = Reader::Blocking { fd: a.into_inner(), stop, spin: None };
        }
    }

    /// On a thread of its own: the next read that finds nothing retries a non-blocking
    /// `recv` until `until` before it blocks, so the data that ends the wait is read by the
    /// call that finds it. Whether this reader spins that way (false: it does not).
    pub fn spin_until(&mut self, until: std::time::Instant) -> bool {
        match self {
            Reader::Blocking { spin, .. } => {
                *spin = Some(until);
                true
            }
            _ => false,
        }
    }
}

fn recv(fd: RawFd, b: &mut [u8], flags: libc::c_int) -> io::Result<usize> {
    // SAFETY: `b` is a valid, initialised buffer of `b.len()` bytes.
    let n = unsafe { libc::recv(fd, b.as_mut_ptr().cast(), b.len(), flags) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// A read from a runtime-registered socket: waits for readability, then `recv`s.
fn poll_recv(a: &AsyncFd<OwnedFd>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
    loop {
        let mut g = ready!(a.poll_read_ready(cx))?;
        let b = buf.initialize_unfilled();
        match g.try_io(|fd| recv(fd.as_raw_fd(), b, 0)) {
            Ok(Ok(n)) => {
                buf.advance(n);
                return Poll::Ready(Ok(()));
            }
            Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
            Ok(Err(e)) => return Poll::Ready(Err(e)),
            // not ready after all: readiness cleared, wait again
            Err(_) => continue,
        }
    }
}

/// Wait until `fd` has `events` or `ms` milliseconds have passed (-1: no limit; 0: just
/// look); whether it has them.
pub(crate) fn wait_for(fd: RawFd, events: libc::c_short, ms: libc::c_int) -> bool {
    let mut p = libc::pollfd { fd, events, revents: 0 };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, ms) > 0 }
}

impl AsyncRead for Reader {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Reader::Async(a) => poll_recv(a, cx, buf),
            Reader::Blocking { fd, stop, spin } => loop {
                match recv(fd.as_raw_fd(), buf.initialize_unfilled(), libc::MSG_DONTWAIT) {
                    Ok(n) => {
                        *spin = None;
                        buf.advance(n);
                        return Poll::Ready(Ok(()));
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        if let Some(until) = *spin {
                            if std::time::Instant::now() < until {
                                std::hint::spin_loop();
                                continue;
                            }
                            *spin = None;
                        }
                        let mut p = [
                            libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                            libc::pollfd { fd: stop.raw_fd(), events: libc::POLLIN, revents: 0 },
                        ];
                        // SAFETY: two valid pollfds.
                        unsafe { libc::poll(p.as_mut_ptr(), 2, -1) };
                        if p[1].revents != 0 {
                            // the server stops: end of stream
                            return Poll::Ready(Ok(()));
                        }
                    }
                    Err(e) => return Poll::Ready(Err(e)),
                }
            },
            Reader::Tls(t) => Pin::new(t.as_mut()).poll_read(cx, buf),
            Reader::TlsRead(t) => Pin::new(t).poll_read(cx, buf),
            Reader::Gone => Poll::Ready(Err(io::ErrorKind::NotConnected.into())),
        }
    }
}

/// A TLS connection's stream.
pub(crate) type TlsStream = tokio_openssl::SslStream<Sock>;

/// A socket on the runtime for both directions (what TLS runs over).
pub(crate) struct Sock(AsyncFd<OwnedFd>);

impl Sock {
    fn new(fd: OwnedFd) -> io::Result<Sock> {
        // SAFETY: the OwnedFd keeps its descriptor open for as long as the AsyncFd holds it.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE | Interest::WRITABLE) };
        Ok(Sock(fd.map_err(|e| e.into_parts().1)?))
    }
}

impl AsyncRead for Sock {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        poll_recv(&self.0, cx, buf)
    }
}

impl tokio::io::AsyncWrite for Sock {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            let mut g = ready!(self.0.poll_write_ready(cx))?;
            match g.try_io(|fd| match send_nonblocking(fd.as_raw_fd(), b, &[], 0)? {
                0 if !b.is_empty() => Err(io::ErrorKind::WouldBlock.into()),
                n => Ok(n),
            }) {
                Ok(r) => return Poll::Ready(r),
                Err(_) => continue,
            }
        }
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // SAFETY: shutdown on the descriptor this owns.
        unsafe { libc::shutdown(self.0.get_ref().as_raw_fd(), libc::SHUT_WR) };
        Poll::Ready(Ok(()))
    }
}

/// One non-blocking `sendmsg` of `head ++ data` from byte `from`: the bytes taken, 0 when
/// the socket's send buffer is full.
pub(crate) fn send_nonblocking(fd: RawFd, head: &[u8], data: &[u8], from: usize) -> io::Result<usize> {
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
        // outlive the call; the caller owns `fd`.
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

/// Send `head ++ data` from byte `from` whole, waiting whenever the socket's send buffer is
/// full: `blocking`, in `poll` (a thread of the connection's own); else registered with
/// the runtime for writability only meanwhile. `fd` is the connection's duplicate
/// descriptor.
pub(crate) async fn send_all(
    fd: &OwnedFd,
    head: &[u8],
    data: &[u8],
    mut from: usize,
    blocking: bool,
) -> io::Result<()> {
    let total = head.len() + data.len();
    let mut reg: Option<AsyncFd<BorrowedFd<'_>>> = None;
    while from < total {
        match send_nonblocking(fd.as_raw_fd(), head, data, from)? {
            0 if blocking => {
                wait_for(fd.as_raw_fd(), libc::POLLOUT, -1);
            }
            0 => {
                let r = match &reg {
                    Some(r) => r,
                    None => {
                        // SAFETY: the borrow keeps the descriptor open while registered.
                        let r = unsafe { AsyncFd::register_with_interest(fd.as_fd(), Interest::WRITABLE) };
                        reg.insert(r.map_err(|e| e.into_parts().1)?)
                    }
                };
                r.writable().await?.clear_ready();
            }
            n => from += n,
        }
    }
    Ok(())
}

//! Which connections the server takes, and which it keeps while they handshake.
//!
//! A connection that has not finished its handshake has cost the server nothing it
//! cannot take back, and has done nothing for anyone: a client that connects and then
//! stays silent (or trickles bytes) must not keep a client that handshakes promptly out.
//! So connections in their handshake have slots of their own (`--max-handshakes`) apart
//! from those past it (`--max-connections`), and a deadline of their own
//! (`--handshake-timeout`). When every handshake slot is taken, a new connection takes
//! the slot of the oldest one still in its handshake, which is closed. A client that
//! completes its handshake before that many others arrive is therefore always served
//! while fewer than `--max-connections` clients are past theirs; a flood of silent
//! connections costs the server `--max-handshakes` sockets, however long it lasts.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tracing::debug;

/// Connections in their handshake at once unless `--max-handshakes` says otherwise.
pub const DEFAULT_MAX_HANDSHAKES: usize = 1024;

/// The server's connections: those in their handshake by age, and the number past it.
pub(crate) struct Admission {
    max_connections: usize,
    max_handshakes: usize,
    handshaking: Mutex<Handshaking>,
    /// Connections past their handshake, served until they close.
    transmitting: AtomicUsize,
}

#[derive(Default)]
struct Handshaking {
    /// Arrival number of the next connection (never wraps: a u64).
    next: u64,
    /// Sockets of the connections in their handshake, oldest first.
    open: BTreeMap<u64, Arc<OwnedFd>>,
    /// Connections closed to make room, since the server started.
    evicted: u64,
}

impl Admission {
    pub fn new(max_connections: usize, max_handshakes: usize) -> Admission {
        Admission {
            max_connections,
            max_handshakes: max_handshakes.max(1),
            handshaking: Mutex::default(),
            transmitting: AtomicUsize::new(0),
        }
    }

    /// Whether every place past the handshake is taken: a new connection is then refused
    /// at once.
    pub fn full(&self) -> bool {
        self.transmitting.load(Ordering::SeqCst) >= self.max_connections
    }

    /// A connection (socket `sock`) starts its handshake: it takes a slot, closing the
    /// oldest connection still in its handshake when every slot is taken.
    pub fn handshake(&self, conn: u32, sock: &Arc<OwnedFd>) -> HandshakeSlot<'_> {
        let mut h = self.handshaking.lock().unwrap();
        while h.open.len() >= self.max_handshakes {
            let Some((_, oldest)) = h.open.pop_first() else { break };
            h.evicted += 1;
            // its reads fail at once, and its task ends
            // SAFETY: shutdown on a socket the Arc keeps open.
            unsafe { libc::shutdown(oldest.as_raw_fd(), libc::SHUT_RDWR) };
            if h.evicted.is_power_of_two() {
                debug!(
                    conn,
                    evicted = h.evicted,
                    max = self.max_handshakes,
                    "every handshake slot taken: the oldest connection still in its handshake closed"
                );
            }
        }
        let key = h.next;
        h.next += 1;
        h.open.insert(key, sock.clone());
        HandshakeSlot { admission: self, key }
    }

    /// Connections closed for want of a handshake slot so far.
    pub fn evicted(&self) -> u64 {
        self.handshaking.lock().unwrap().evicted
    }
}

/// A connection's handshake slot, given back when the handshake ends either way.
pub(crate) struct HandshakeSlot<'a> {
    admission: &'a Admission,
    key: u64,
}

impl<'a> HandshakeSlot<'a> {
    /// The handshake succeeded: a place past it, unless every one is taken (`None`: the
    /// connection is to be closed).
    pub fn done(self) -> Option<Transmitting<'a>> {
        let a = self.admission;
        let taken = a.transmitting.fetch_add(1, Ordering::SeqCst);
        let t = Transmitting { admission: a };
        (taken < a.max_connections).then_some(t)
    }
}

impl Drop for HandshakeSlot<'_> {
    fn drop(&mut self) {
        self.admission.handshaking.lock().unwrap().open.remove(&self.key);
    }
}

/// A connection's place past its handshake, given back when it closes.
pub(crate) struct Transmitting<'a> {
    admission: &'a Admission,
}

impl Drop for Transmitting<'_> {
    fn drop(&mut self) {
        self.admission.transmitting.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One end of a socket pair (the other leaked, so the peer never closes).
    fn socket() -> Arc<OwnedFd> {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        std::mem::forget(b);
        Arc::new(a.into())
    }

    /// Readable end-of-file on `fd` (a shut-down socket) without blocking.
    fn shut(fd: &OwnedFd) -> bool {
        let mut b = [0u8; 1];
        // SAFETY: a one-byte non-blocking receive into `b`.
        let n = unsafe { libc::recv(fd.as_raw_fd(), b.as_mut_ptr().cast(), 1, libc::MSG_DONTWAIT) };
        n == 0
    }

    #[test]
    fn the_oldest_handshake_makes_room() {
        let a = Admission::new(10, 2);
        let (s1, s2, s3) = (socket(), socket(), socket());
        let h1 = a.handshake(1, &s1);
        let _h2 = a.handshake(2, &s2);
        assert!(!shut(&s1));
        let _h3 = a.handshake(3, &s3);
        assert!(shut(&s1), "the oldest connection in its handshake was not closed");
        assert!(!shut(&s2) && !shut(&s3));
        assert_eq!(a.evicted(), 1);
        drop(h1); // its task ends: nothing else is closed
        assert!(!shut(&s2));
    }

    #[test]
    fn places_past_the_handshake_are_counted_and_given_back() {
        let a = Admission::new(1, 4);
        let (s1, s2) = (socket(), socket());
        let t1 = a.handshake(1, &s1).done().expect("a place");
        assert!(a.full());
        assert!(a.handshake(2, &s2).done().is_none(), "a second place past a limit of one");
        assert!(a.full());
        drop(t1);
        assert!(!a.full());
        assert!(a.handshake(2, &s2).done().is_some());
    }
}

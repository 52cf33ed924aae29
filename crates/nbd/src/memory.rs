//! The server's memory: one budget for the request data of every connection, buffers
//! allocated without aborting, and an allocator that gives large buffers back.
//!
//! Each connection's unanswered requests may hold at most `CONNECTION_BUDGET` (two
//! maximal requests: see `crate::reply`), but connections are many: 40 clients that each
//! pipeline 32 MiB READs and never read the replies would hold 2.6 GB. So the data of
//! every connection also counts against one server-wide budget (`--max-memory`, default
//! [`default_max_memory`], less [`SERVER_RESERVE`] for the server itself): a request takes its share (a WRITE's payload, a READ's
//! length, at least `REQUEST_FLOOR`) before its payload is read or its buffer allocated,
//! and gives it back once its reply has left for the socket. When the budget is spent,
//! readers stop reading their connections and wait, in the order they came (the oldest
//! waiting backlog is served first as replies give memory back); the clients' further
//! requests stay in their sockets. Nothing is allocated past the budget, and a buffer the
//! system refuses is an ENOMEM reply to its request, never an abort.
//!
//! glibc's allocator is left as it is, which measurement favoured over tuning it: its
//! adaptive mmap threshold (a freed mapped buffer raises it, up to 32 MiB) keeps 1 MiB
//! READ buffers in its heaps (fixed at 1 MiB, each was a fresh mapping faulted in page by
//! page: 1 MiB sequential reads at iodepth 4 fell from 2,849 to 1,229 MiB/s), while a
//! maximal request's 32 MiB buffer is above that ceiling, always mapped, and given back
//! when freed (100 connections of unread 32 MiB READs under `--max-memory` 512 MiB: RSS
//! peaks at 458 MiB). Capping the arenas at four (`M_ARENA_MAX`) took 2,000 connections
//! from 26 MiB of RSS to 166-220 MiB and their connecting from 0.48 s to 1.3 s.

use std::alloc::{alloc_zeroed, Layout};

use tokio::sync::Semaphore;

use crate::proto::MAX_PAYLOAD;

/// What `--max-memory` keeps for the server itself (its code, threads, and each
/// connection's read buffer and state: 26 MiB of resident memory with 2,000 connections
/// open); request data gets the rest. So `--max-memory` bounds the process.
pub const SERVER_RESERVE: u64 = 48 << 20;
/// The smallest `--max-memory`: the server's reserve and one connection's budget, two
/// maximal requests.
pub const MIN_MAX_MEMORY: u64 = SERVER_RESERVE + 2 * MAX_PAYLOAD as u64;
/// The largest default budget, however large the machine.
pub const DEFAULT_MAX_MEMORY_CAP: u64 = 4 << 30;

/// The budget when `--max-memory` is not given, and why: an eighth of the machine's
/// memory, and at most a quarter of the process's address-space limit when it has one,
/// within [`MIN_MAX_MEMORY`] and [`DEFAULT_MAX_MEMORY_CAP`].
pub fn default_max_memory() -> (u64, String) {
    // SAFETY: sysconf has no memory effects.
    let (pages, page) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    let ram = (pages.max(0) as u64).saturating_mul(page.max(0) as u64);
    let mut budget = ram / 8;
    let mut why = format!("an eighth of {} MiB of memory", ram >> 20);
    let mut l = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut l) } == 0 && l.rlim_cur != libc::RLIM_INFINITY {
        let quarter = l.rlim_cur / 4;
        if quarter < budget {
            budget = quarter;
            why = format!("a quarter of the {} MiB address-space limit", l.rlim_cur >> 20);
        }
    }
    if budget > DEFAULT_MAX_MEMORY_CAP {
        budget = DEFAULT_MAX_MEMORY_CAP;
        why = format!("{why}, at most {} MiB", DEFAULT_MAX_MEMORY_CAP >> 20);
    }
    if budget < MIN_MAX_MEMORY {
        budget = MIN_MAX_MEMORY;
        why = format!(
            "{why}, at least {} MiB (the server's reserve and two maximal requests)",
            MIN_MAX_MEMORY >> 20
        );
    }
    (budget, why)
}

/// `len` zero bytes, or `None` when the system has no memory for them (instead of
/// aborting the process as `vec![0; len]` does).
pub fn try_zeroed(len: usize) -> Option<Vec<u8>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = Layout::array::<u8>(len).ok()?;
    // SAFETY: a non-zero-sized layout; the pointer, when not null, is an allocation of
    // `len` initialised (zero) bytes with u8's alignment, as Vec's global allocator makes.
    unsafe {
        let p = alloc_zeroed(layout);
        if p.is_null() {
            return None;
        }
        Some(Vec::from_raw_parts(p, len, len))
    }
}

/// Buffers the system refused, since the process started.
static REFUSED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Log a buffer of `len` bytes for `what` the system refused: the first, then at every
/// power of two of their count (a flood of them is one line now and then).
pub(crate) fn refused(what: &'static str, len: usize) {
    let n = REFUSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    if n.is_power_of_two() {
        tracing::warn!(what, len, refused = n, "no memory for a buffer: the request gets ENOMEM");
    }
}

/// The server-wide budget of request data (see the module doc).
pub struct Memory {
    permits: Semaphore,
    /// Bytes of request data: `--max-memory` less [`SERVER_RESERVE`].
    limit: u64,
}

impl Memory {
    /// The request-data budget of a server held to `max_memory` bytes (at least
    /// [`MIN_MAX_MEMORY`]): `max_memory` less [`SERVER_RESERVE`].
    pub fn new(max_memory: u64) -> Memory {
        let limit = max_memory.clamp(MIN_MAX_MEMORY, Semaphore::MAX_PERMITS as u64) - SERVER_RESERVE;
        Memory { permits: Semaphore::new(limit as usize), limit }
    }

    /// Take `cost` bytes: at once when they are free and nobody waits before us, else
    /// after those who came first. `waiting` is called once before a wait.
    pub async fn take(&self, cost: u32, waiting: impl FnOnce()) {
        match self.permits.try_acquire_many(cost) {
            Ok(p) => p.forget(),
            Err(_) => {
                waiting();
                self.permits.acquire_many(cost).await.expect("the budget is never closed").forget();
            }
        }
    }

    pub fn give(&self, cost: u64) {
        if cost > 0 {
            self.permits.add_permits(cost as usize);
        }
    }

    /// Bytes taken now.
    pub fn in_use(&self) -> u64 {
        self.limit - self.permits.available_permits() as u64
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_fits_the_machine_and_the_bounds() {
        let (b, why) = default_max_memory();
        assert!((MIN_MAX_MEMORY..=DEFAULT_MAX_MEMORY_CAP).contains(&b), "{b}: {why}");
        assert!(!why.is_empty());
    }

    #[test]
    fn a_refused_allocation_is_none() {
        assert_eq!(try_zeroed(4096).unwrap(), vec![0u8; 4096]);
        assert!(try_zeroed(0).unwrap().is_empty());
        // more than any machine has
        assert!(try_zeroed(usize::MAX / 2).is_none());
    }

    /// Takers wait while the budget is spent and go on, first come first served, as it is
    /// given back.
    #[test]
    fn takers_wait_for_what_is_given_back() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let m = std::sync::Arc::new(Memory::new(MIN_MAX_MEMORY));
            assert_eq!(m.limit(), MIN_MAX_MEMORY - SERVER_RESERVE);
            let half = (m.limit() / 2) as u32;
            m.take(half, || panic!("waited with room")).await;
            m.take(half, || panic!("waited with room")).await;
            assert_eq!(m.in_use(), m.limit());
            let (m2, waited) = (m.clone(), std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)));
            let w = waited.clone();
            let t = tokio::spawn(async move {
                m2.take(4096, || w.store(true, std::sync::atomic::Ordering::SeqCst)).await;
            });
            tokio::task::yield_now().await;
            assert!(waited.load(std::sync::atomic::Ordering::SeqCst));
            assert!(!t.is_finished());
            m.give(half as u64);
            t.await.unwrap();
            assert_eq!(m.in_use(), half as u64 + 4096);
        });
    }
}

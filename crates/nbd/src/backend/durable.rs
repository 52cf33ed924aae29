//! Durability of an export: one `fdatasync` at a time shared by every caller waiting
//! for one (group commit), and a failed one never forgotten.
//!
//! Why a failure must stick. Linux reports a write-back error to each open file
//! description once (`errseq_t`): after `fdatasync` returned EIO for data the page cache
//! could not write, the next `fdatasync` on the same descriptor returns 0, although that
//! data is gone. Every connection of an export shares one descriptor, so without memory
//! of the failure, connection B's FLUSH would take the error and connection A's FLUSH
//! after it would report success for writes of A's that never reached storage. Once any
//! sync of the export has failed, [`Durability`] fails every later sync (FLUSH, the sync
//! after a FUA write, the final one at shutdown) and the backend refuses every later
//! write, with EIO, until the server is restarted; reads keep working. nbdkit's file
//! plugin and PostgreSQL (since its 2018 "fsyncgate") take the same view: after a failed
//! sync nothing about the page cache's dirty data can be trusted.
//!
//! Why one sync at a time. Two `fdatasync`s running at once on one descriptor could split
//! one error between them: the first to look takes it, the other returns 0 though a write
//! it was asked to cover was lost. So syncs never overlap here. A caller that arrives
//! while a sync runs waits for it to end and then for the next one, which starts after
//! its arrival (the running one may have begun before its write) and covers every caller
//! that queued meanwhile: a burst of FUA writes and FLUSHes costs two syncs, not one each.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::SystemTime;

use tracing::error;

/// The first failed sync of an export.
#[derive(Clone, Debug)]
pub struct Failure {
    /// What failed: `fdatasync`, or another operation that lost acknowledged data.
    pub during: &'static str,
    /// Its error, as the system reported it.
    pub error: String,
    /// The OS error number, when there was one.
    pub errno: Option<i32>,
    pub at: SystemTime,
}

impl Failure {
    /// The error every later write and sync gets: EIO, saying what happened first.
    fn later_error(&self) -> io::Error {
        io::Error::other(format!(
            "the export lost acknowledged writes: {} failed at {} ({}); writes, FLUSH and FUA \
             fail until the server is restarted",
            self.during,
            humantime::format_rfc3339_seconds(self.at),
            self.error
        ))
    }
}

#[derive(Default, Debug)]
struct Rounds {
    /// Callers that have asked for a sync, numbered from 1.
    asked: u64,
    /// The highest caller number covered by a finished sync.
    covered: u64,
    /// A sync is running.
    running: bool,
    /// Set by the first failure, never cleared.
    failed: Option<Failure>,
}

/// An export's syncs (see the module doc).
#[derive(Default, Debug)]
pub struct Durability {
    rounds: Mutex<Rounds>,
    ended: Condvar,
    /// `rounds.failed` is set: the one thing a write looks at, without the lock.
    failed: AtomicBool,
}

impl Durability {
    /// Make every write finished before this call durable with `sync` (called with no
    /// other sync of this export running), or report why not: the error of the sync that
    /// covered this call, or of the first failed one before it.
    pub fn sync(&self, sync: impl Fn() -> io::Result<()>) -> io::Result<()> {
        let mut r = self.rounds.lock().unwrap();
        if let Some(f) = &r.failed {
            return Err(f.later_error());
        }
        r.asked += 1;
        let me = r.asked;
        loop {
            if let Some(f) = &r.failed {
                return Err(f.later_error());
            }
            if r.covered >= me {
                return Ok(());
            }
            if !r.running {
                break;
            }
            r = self.ended.wait(r).unwrap();
        }
        // Lead a round that covers every caller so far.
        r.running = true;
        let upto = r.asked;
        drop(r);
        let result = sync();
        let mut r = self.rounds.lock().unwrap();
        r.running = false;
        let result = match result {
            Ok(()) => {
                r.covered = upto;
                Ok(())
            }
            Err(e) => {
                // the callers this round covered see the sync's own error, later ones the
                // sticky one
                self.record(&mut r, "fdatasync", &e);
                Err(e)
            }
        };
        self.ended.notify_all();
        result
    }

    /// An operation other than a sync lost data the export had acknowledged: from now on
    /// the export behaves as after a failed sync.
    pub fn fail(&self, during: &'static str, e: &io::Error) {
        let mut r = self.rounds.lock().unwrap();
        self.record(&mut r, during, e);
        self.ended.notify_all();
    }

    /// EIO (saying why) once a sync has failed: what a write or a sync gets then.
    pub fn check(&self) -> io::Result<()> {
        if !self.failed.load(Ordering::Acquire) {
            return Ok(());
        }
        match &self.rounds.lock().unwrap().failed {
            Some(f) => Err(f.later_error()),
            None => Ok(()),
        }
    }

    /// The first failure, if any.
    pub fn failure(&self) -> Option<Failure> {
        self.rounds.lock().unwrap().failed.clone()
    }

    /// Remember the first failure, and log it once.
    fn record(&self, r: &mut Rounds, during: &'static str, e: &io::Error) {
        if r.failed.is_some() {
            return;
        }
        let f = Failure { during, error: e.to_string(), errno: e.raw_os_error(), at: SystemTime::now() };
        error!(
            during,
            error = %e,
            "the export lost acknowledged writes: from now on every write, FLUSH and FUA write \
             on every connection fails with EIO (reads still work) until the server is restarted"
        );
        r.failed = Some(f);
        self.failed.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;
    use std::sync::Arc;

    fn eio() -> io::Error {
        io::Error::from_raw_os_error(libc::EIO)
    }

    /// After one failed sync, every later sync fails, whatever the system says then.
    #[test]
    fn a_failed_sync_is_never_forgotten() {
        let d = Durability::default();
        assert!(d.sync(|| Ok(())).is_ok());
        let e = d.sync(|| Err(eio())).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO), "the failing sync reports the system's error");
        let calls = AtomicU32::new(0);
        for _ in 0..3 {
            let e = d
                .sync(|| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                })
                .unwrap_err();
            assert!(e.to_string().contains("fdatasync failed"), "{e}");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 0, "no sync is run once the export has failed");
        assert!(d.check().is_err());
        assert_eq!(d.failure().unwrap().errno, Some(libc::EIO));
    }

    /// `fail` (data lost elsewhere) poisons the syncs too.
    #[test]
    fn a_lost_write_back_fails_later_syncs() {
        let d = Durability::default();
        assert!(d.check().is_ok());
        d.fail("the emulated cache's write-back", &eio());
        assert!(d.sync(|| Ok(())).is_err());
        assert_eq!(d.failure().unwrap().during, "the emulated cache's write-back");
    }

    /// Callers waiting on one sync are covered by one that starts after they asked (never
    /// by the one running when they arrived), syncs never overlap, and a burst costs
    /// fewer syncs than callers.
    #[test]
    fn syncs_never_overlap_and_group_commit() {
        let d = Arc::new(Durability::default());
        let running = Arc::new(AtomicU32::new(0));
        let runs = Arc::new(AtomicU32::new(0));
        let callers = 16;
        let threads: Vec<_> = (0..callers)
            .map(|_| {
                let (d, running, runs) = (d.clone(), running.clone(), runs.clone());
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        d.sync(|| {
                            assert_eq!(running.fetch_add(1, Ordering::SeqCst), 0, "two syncs at once");
                            runs.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_micros(300));
                            running.fetch_sub(1, Ordering::SeqCst);
                            Ok(())
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let n = runs.load(Ordering::SeqCst);
        assert!(n < callers * 20, "{n} syncs for {} callers: no sharing", callers * 20);
    }

    /// A caller that arrives while a failing sync runs gets an error, not success, though
    /// its own round never ran.
    #[test]
    fn a_caller_waiting_behind_a_failing_sync_fails() {
        let d = Arc::new(Durability::default());
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let d1 = d.clone();
        let leader = std::thread::spawn(move || {
            d1.sync(|| {
                started_tx.send(()).unwrap();
                go_rx.recv().unwrap();
                Err(eio())
            })
        });
        started_rx.recv().unwrap();
        let d2 = d.clone();
        let waiter = std::thread::spawn(move || d2.sync(|| Ok(())));
        std::thread::sleep(std::time::Duration::from_millis(20));
        go_tx.send(()).unwrap();
        assert!(leader.join().unwrap().is_err());
        assert!(waiter.join().unwrap().is_err(), "the waiter was told its writes are durable");
    }
}

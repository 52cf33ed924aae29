//! `emulated:MODEL` with `--queue-depth N > 1`: the drive model run against the wall clock.
//!
//! At depth 1 the model serves each dispatched request to its end at once
//! ([`crate::backend::Emulated::access`]): nothing that arrives later can change when it
//! completes. A drive holding N commands picks among them (its own scheduler, SPTF by
//! default: the IO-path paper's command queueing, 002 §6), so when a command completes
//! depends on the commands that reach the drive while it waits. Here one thread owns a
//! [`Drive`] of depth N and moves it forward with the clock:
//!
//! * a request whose real I/O is done is handed in with its dispatch time ([`Msg::Access`]);
//!   the thread brings the drive up to the present (every event due is polled), then
//!   submits it at `max(dispatch, the drive's last event)` — non-decreasing, as the drive
//!   requires — or keeps it back while the drive refuses commands (queue full, write-back
//!   cache full, a flush under way);
//! * FLUSH is a drive flush ([`Msg::Flush`]) in arrival order with the commands; a FUA write
//!   on a write-back drive is followed by a flush of its own before its reply;
//! * between messages the thread sleeps until the drive's next event; each completion is
//!   handed to `release` with its model time, which the server's delay line holds to.
//!
//! Invariants: every message's `Held` is released exactly once, at or after its model
//! completion; the drive sees commands in the order the server dispatched them.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration as StdDuration, Instant};

use headway_disk::{Cmd, Drive};
use headway_sched::{Dir, Time};

/// What the drive thread is asked to do; `H` travels with it and comes back on completion.
pub enum Msg<H> {
    Access { at: Time, sector: u64, len: u32, dir: Dir, flush_after: bool, held: H },
    Flush { at: Time, held: H },
}

/// Tags at or above this are flushes (commands count up from 0).
const FLUSH_TAGS: u64 = 1 << 63;

/// The drive thread. Dropping it stops the thread once every message sent is released.
pub struct QueuedDrive<H: Send + 'static> {
    tx: Option<Sender<Msg<H>>>,
    thread: Option<JoinHandle<()>>,
}

impl<H: Send + 'static> QueuedDrive<H> {
    /// Start the thread on `drive`; completions go to `release(done, held)`.
    pub fn spawn(
        drive: Drive,
        origin: Instant,
        release: impl FnMut(Time, H) + Send + 'static,
    ) -> io::Result<QueuedDrive<H>> {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("drive".into())
            .spawn(move || Driver::new(drive, origin, release).run(rx))?;
        Ok(QueuedDrive { tx: Some(tx), thread: Some(thread) })
    }

    /// A sender for the server's threads.
    pub fn sender(&self) -> Sender<Msg<H>> {
        self.tx.clone().expect("running")
    }
}

impl<H: Send + 'static> Drop for QueuedDrive<H> {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Driver<H, R> {
    drive: Drive,
    origin: Instant,
    release: R,
    /// The drive's clock: its last event or submission.
    last: Time,
    /// Messages the drive could not take yet, in arrival order.
    backlog: VecDeque<Msg<H>>,
    /// Commands in the drive: their `Held` and whether a flush follows.
    inside: HashMap<u64, (H, bool)>,
    /// Flushes asked for (a FLUSH, or after a FUA write), waiting for the drive's one flush.
    flushes: VecDeque<H>,
    /// The flush under way and whose it is.
    flushing: Option<(u64, H)>,
    next_tag: u64,
    next_flush: u64,
}

impl<H, R: FnMut(Time, H)> Driver<H, R> {
    fn new(drive: Drive, origin: Instant, release: R) -> Self {
        Driver {
            drive,
            origin,
            release,
            last: Time::ZERO,
            backlog: VecDeque::new(),
            inside: HashMap::new(),
            flushes: VecDeque::new(),
            flushing: None,
            next_tag: 0,
            next_flush: FLUSH_TAGS,
        }
    }

    fn now(&self) -> Time {
        Time(self.origin.elapsed().as_nanos() as u64)
    }

    fn run(mut self, rx: Receiver<Msg<H>>) {
        let mut open = true;
        loop {
            let now = self.now();
            self.catch_up(now);
            if !open && self.idle() {
                return;
            }
            let msg = match self.drive.next_event() {
                Some(t) if t > now => rx.recv_timeout(StdDuration::from_nanos(t.0 - now.0)),
                Some(_) => continue,
                None if open => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                None => {
                    // nothing under way yet work left: the backlog waits for nothing
                    debug_assert!(self.backlog.is_empty() && self.flushes.is_empty(), "stalled drive");
                    return;
                }
            };
            match msg {
                Ok(m) => self.backlog.push_back(m),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => open = false,
            }
        }
    }

    fn idle(&self) -> bool {
        self.backlog.is_empty()
            && self.inside.is_empty()
            && self.flushes.is_empty()
            && self.flushing.is_none()
    }

    /// Poll every event due by `now` and start what the drive will take, one thing at a
    /// time (a command started in the past may be done by `now`: polled before the next).
    fn catch_up(&mut self, now: Time) {
        loop {
            while let Some(t) = self.drive.next_event().filter(|&t| t <= now) {
                self.last = self.last.max(t);
                if let Some(c) = self.drive.poll(t) {
                    self.completed(c.tag, c.done);
                }
            }
            if !self.start_one(now) {
                return;
            }
        }
    }

    /// Hand the drive one thing it can take now; false if there is none.
    fn start_one(&mut self, now: Time) -> bool {
        // a flush asked for (a FUA write's first: it was queued before the commands behind it)
        if self.flushing.is_none() && !self.flushes.is_empty() {
            let t = self.last.max(now);
            let tag = self.next_flush;
            self.next_flush += 1;
            self.drive.flush(t, tag).expect("no flush under way");
            self.last = t;
            self.flushing = Some((tag, self.flushes.pop_front().expect("checked")));
            return true;
        }
        match self.backlog.front() {
            None => false,
            Some(Msg::Flush { .. }) => {
                let Some(Msg::Flush { held, .. }) = self.backlog.pop_front() else { unreachable!() };
                self.flushes.push_back(held);
                true
            }
            Some(Msg::Access { at, .. }) => {
                if !self.drive.can_accept() {
                    return false;
                }
                // from its dispatch, unless the drive's clock is past it (never back)
                let t = self.last.max(*at);
                let Some(Msg::Access { sector, len, dir, flush_after, held, .. }) = self.backlog.pop_front()
                else {
                    unreachable!()
                };
                let tag = self.next_tag;
                self.next_tag += 1;
                self.drive.submit(t, Cmd { tag, sector, len, dir }).expect("the drive can accept");
                self.last = t;
                self.inside.insert(tag, (held, flush_after));
                true
            }
        }
    }

    fn completed(&mut self, tag: u64, done: Time) {
        if tag >= FLUSH_TAGS {
            let (t, held) = self.flushing.take().expect("a flush under way");
            debug_assert_eq!(t, tag);
            (self.release)(done, held);
            return;
        }
        let (held, flush_after) = self.inside.remove(&tag).expect("a command in the drive");
        if flush_after {
            self.flushes.push_back(held);
        } else {
            (self.release)(done, held);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headway_disk::{builtin, DriveConfig, Hdd, WriteCache};
    use std::sync::{Arc, Mutex};

    fn drive(depth: u32, write_cache: WriteCache) -> Drive {
        let spec = builtin("wd5000aaks").unwrap();
        Drive::new(Hdd::new(spec), DriveConfig { queue_depth: depth, write_cache, ..DriveConfig::default() })
            .unwrap()
    }

    /// Send `msgs` at once; the releases in order: (held, done).
    fn serve(depth: u32, cache: WriteCache, msgs: Vec<Msg<u32>>) -> Vec<(u32, Time)> {
        let out = Arc::new(Mutex::new(Vec::new()));
        let o = out.clone();
        let origin = Instant::now();
        {
            let q =
                QueuedDrive::spawn(drive(depth, cache), origin, move |t, h| o.lock().unwrap().push((h, t)))
                    .unwrap();
            let tx = q.sender();
            for m in msgs {
                tx.send(m).unwrap();
            }
        }
        let v = out.lock().unwrap().clone();
        v
    }

    fn read(held: u32, sector: u64) -> Msg<u32> {
        Msg::Access { at: Time::ZERO, sector, len: 8, dir: Dir::Read, flush_after: false, held }
    }

    #[test]
    fn every_request_is_released_once_after_its_dispatch() {
        let sectors = [900_000_000u64, 1_000, 500_000_000, 2_000, 800_000_000, 3_000];
        let v = serve(
            4,
            WriteCache::Through,
            sectors.iter().enumerate().map(|(i, &s)| read(i as u32, s)).collect(),
        );
        let mut held: Vec<u32> = v.iter().map(|x| x.0).collect();
        held.sort_unstable();
        assert_eq!(held, vec![0, 1, 2, 3, 4, 5]);
        // released in model-time order
        assert!(v.windows(2).all(|w| w[0].1 <= w[1].1), "{v:?}");
    }

    #[test]
    fn a_deep_queue_reorders_and_finishes_sooner() {
        // far, near, far, near...: depth 1 serves them in order, depth 8 picks the near ones
        let sectors: Vec<u64> =
            (0..16).map(|i| if i % 2 == 0 { 900_000_000 - i * 1000 } else { 1000 + i * 1000 }).collect();
        let msgs = || sectors.iter().enumerate().map(|(i, &s)| read(i as u32, s)).collect::<Vec<_>>();
        let one = serve(1, WriteCache::Through, msgs());
        let eight = serve(8, WriteCache::Through, msgs());
        let order = |v: &[(u32, Time)]| v.iter().map(|x| x.0).collect::<Vec<_>>();
        assert_eq!(order(&one), (0..16).collect::<Vec<_>>(), "depth 1 keeps the order");
        assert_ne!(order(&eight), order(&one), "depth 8 reorders");
        let last = |v: &[(u32, Time)]| v.iter().map(|x| x.1).max().unwrap();
        assert!(last(&eight) < last(&one), "depth 8 {:?} against depth 1 {:?}", last(&eight), last(&one));
    }

    #[test]
    fn flushes_and_fua_writes_wait_for_the_media() {
        let w = |held, sector, flush_after| Msg::Access {
            at: Time::ZERO,
            sector,
            len: 64,
            dir: Dir::Write,
            flush_after,
            held,
        };
        // write-back: two buffered writes, a FUA write, a FLUSH
        let v = serve(
            4,
            WriteCache::Back,
            vec![
                w(0, 1_000, false),
                w(1, 500_000_000, false),
                w(2, 2_000, true),
                Msg::Flush { at: Time::ZERO, held: 3 },
            ],
        );
        assert_eq!(v.len(), 4);
        let at = |h: u32| v.iter().find(|x| x.0 == h).unwrap().1;
        // the buffered writes are acknowledged from the cache in well under a millisecond;
        // the FUA write and the FLUSH only once the media has everything (milliseconds of
        // destaging: without its flush the FUA write would be acknowledged from the cache too)
        let ms = |t: Time| t.0 as f64 / 1e6;
        assert!(ms(at(0)) < 1.0 && ms(at(1)) < 1.0, "{v:?}");
        assert!(ms(at(2)) > ms(at(1)) + 2.0 && ms(at(3)) > ms(at(1)) + 2.0, "{v:?}");
        let fua_alone = serve(4, WriteCache::Back, vec![w(0, 2_000, false)]);
        assert!(
            ms(fua_alone[0].1) < 1.0,
            "a write without FUA is acknowledged from the cache: {fua_alone:?}"
        );
    }
}

//! The delay line of `emulated:MODEL`: [`DelayLine`] holds each completion (the replies
//! and what the scheduler sees) until the drive model's time for it, then releases it.
//!
//! ## Its thread, and its lateness
//! One thread holds completions in a heap ordered by (deadline, arrival). It sleeps on a
//! channel with `recv_timeout` until [`SPIN_MARGIN`] before the earliest deadline, with
//! its timer slack set to 1 ns (`PR_SET_TIMERSLACK`; the default 50 µs slack would make
//! every sleep that much late), then spins until the deadline (`sched_yield` instead was
//! measured worse: on a loaded machine a yield can give the core away for milliseconds).
//! The spin costs up to `SPIN_MARGIN` of CPU per release, which the clients on a small
//! machine would rather have: 20 µs is a compromise (measured on a shared 2-core VM, idle
//! otherwise: 60 µs of spin gave p99 < 20 µs, max 30 µs; no spin p99 < 40 µs; under a
//! fio load both see rare stalls of 20-30 ms, when the thread is not scheduled at all). Lateness
//! (release time − deadline) is recorded per release ([`Lateness`]) and logged at
//! shutdown; `delay_line_is_punctual` measures it (see its output for this machine).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration as StdDuration, Instant};

use headway_sched::Time;

/// How long before a deadline the delay line stops sleeping and starts yielding.
pub const SPIN_MARGIN: StdDuration = StdDuration::from_micros(20);

/// Release lateness of a [`DelayLine`]: release time minus deadline.
#[derive(Clone, Debug, Default)]
pub struct Lateness {
    /// Items released at or after their deadline (items given a past deadline count too,
    /// with their lateness measured from the deadline).
    pub count: u64,
    pub total_ns: u64,
    pub max_ns: u64,
    /// Histogram: `buckets[i]` counts lateness in `[2^i, 2^(i+1))` ns (`buckets[0]`
    /// also takes 0).
    pub buckets: [u64; 32],
}

impl Lateness {
    fn record(&mut self, ns: u64) {
        self.count += 1;
        self.total_ns += ns;
        self.max_ns = self.max_ns.max(ns);
        self.buckets[(63 - ns.max(1).leading_zeros() as usize).min(31)] += 1;
    }
    pub fn mean_ns(&self) -> u64 {
        self.total_ns.checked_div(self.count).unwrap_or(0)
    }
    /// Upper bound (bucket edge) of the `p`-th percentile, ns.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        let want = (self.count as f64 * p / 100.0).ceil() as u64;
        let mut seen = 0;
        for (i, b) in self.buckets.iter().enumerate() {
            seen += b;
            if seen >= want.max(1) {
                return 2u64 << i;
            }
        }
        self.max_ns
    }
}

impl std::fmt::Display for Lateness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} releases, lateness mean {:.1} µs, p50 < {:.3} µs, p99 < {:.3} µs, max {:.1} µs",
            self.count,
            self.mean_ns() as f64 / 1e3,
            self.percentile_ns(50.0) as f64 / 1e3,
            self.percentile_ns(99.0) as f64 / 1e3,
            self.max_ns as f64 / 1e3
        )
    }
}

/// Holds items until their deadline, then hands each to `release` on its own thread, in
/// deadline order (ties in arrival order). Deadlines are `Time` since `origin`.
pub struct DelayLine<T: Send + 'static> {
    tx: Sender<(Time, T)>,
    thread: Option<JoinHandle<()>>,
    lateness: Arc<Mutex<Lateness>>,
}

impl<T: Send + 'static> DelayLine<T> {
    /// Start the thread; lateness is recorded into `lateness` (shared, so that it can be
    /// read while the line runs).
    pub fn spawn(
        origin: Instant,
        lateness: Arc<Mutex<Lateness>>,
        mut release: impl FnMut(T) + Send + 'static,
    ) -> io::Result<DelayLine<T>> {
        let (tx, rx) = mpsc::channel::<(Time, T)>();
        let late = lateness.clone();
        let thread = std::thread::Builder::new().name("delay-line".into()).spawn(move || {
            // SAFETY: prctl on the calling thread with an integer argument.
            unsafe {
                libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
            }
            let mut heap: Heap<T> = BinaryHeap::new();
            let mut seq = 0u64;
            let mut open = true;
            let now = || Time(origin.elapsed().as_nanos() as u64);
            let mut push = |heap: &mut BinaryHeap<_>, (t, item)| {
                seq += 1;
                heap.push((Reverse((t, seq)), Slot(item)));
            };
            loop {
                // Release everything due.
                while let Some((Reverse((t, _)), _)) = heap.peek() {
                    let t = *t;
                    let n = now();
                    if n < t {
                        let left = t.0 - n.0;
                        if left > SPIN_MARGIN.as_nanos() as u64 {
                            break;
                        }
                        std::hint::spin_loop();
                        continue;
                    }
                    let (_, Slot(item)) = heap.pop().unwrap();
                    late.lock().unwrap().record(n.0 - t.0);
                    release(item);
                }
                if !open && heap.is_empty() {
                    return;
                }
                // Wait for a new item, or until SPIN_MARGIN before the earliest deadline.
                let msg = match heap.peek() {
                    None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                    Some((Reverse((t, _)), _)) => {
                        let wake = t.0.saturating_sub(SPIN_MARGIN.as_nanos() as u64);
                        let wait = StdDuration::from_nanos(wake.saturating_sub(now().0));
                        if open {
                            rx.recv_timeout(wait)
                        } else {
                            std::thread::sleep(wait);
                            Err(RecvTimeoutError::Timeout)
                        }
                    }
                };
                match msg {
                    Ok(m) => {
                        push(&mut heap, m);
                        while let Ok(m) = rx.try_recv() {
                            push(&mut heap, m);
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => open = false,
                }
            }
        })?;
        Ok(DelayLine { tx, thread: Some(thread), lateness })
    }

    /// Release `item` at `deadline` (at once if it has passed).
    pub fn hold(&self, deadline: Time, item: T) {
        let _ = self.tx.send((deadline, item));
    }

    /// Lateness so far.
    pub fn lateness(&self) -> Lateness {
        self.lateness.lock().unwrap().clone()
    }

    /// Another handle to hold items with (the thread runs until every sender is gone).
    pub fn sender(&self) -> Sender<(Time, T)> {
        self.tx.clone()
    }

    /// Once every other [`DelayLine::sender`] is dropped: release what is still held (on
    /// time), stop the thread, and return the lateness. (Dropping a `DelayLine` instead
    /// detaches its thread, which ends the same way.)
    pub fn finish(self) -> Lateness {
        let DelayLine { tx, thread, lateness } = self;
        drop(tx);
        if let Some(t) = thread {
            let _ = t.join();
        }
        let l = lateness.lock().unwrap().clone();
        l
    }
}

/// Earliest (deadline, arrival) first.
type Heap<T> = BinaryHeap<(Reverse<(Time, u64)>, Slot<T>)>;

/// Heap payload: ordered by its key alone.
struct Slot<T>(T);
impl<T> PartialEq for Slot<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<T> Eq for Slot<T> {}
impl<T> PartialOrd for Slot<T> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Slot<T> {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_line_is_punctual() {
        // Items with deadlines 0.2-5 ms out, released in deadline order, never early.
        let origin = Instant::now();
        let (tx, rx) = mpsc::channel();
        let dl = DelayLine::spawn(origin, Arc::default(), move |(i, due): (u64, Time)| {
            let at = Time(origin.elapsed().as_nanos() as u64);
            assert!(at >= due, "released early");
            let _ = tx.send(i);
        })
        .unwrap();
        let mut order = Vec::new();
        for i in 0..200u64 {
            let now = origin.elapsed().as_nanos() as u64;
            let due = Time(now + 200_000 + (i * 7919 % 4800) * 1000);
            order.push((due, i));
            dl.hold(due, (i, due));
            if i % 10 == 9 {
                std::thread::sleep(StdDuration::from_micros(500));
            }
        }
        let late = dl.finish();
        let got: Vec<u64> = rx.iter().collect();
        order.sort();
        assert_eq!(got, order.iter().map(|&(_, i)| i).collect::<Vec<_>>());
        eprintln!("delay line: {late}");
        assert_eq!(late.count, 200);
        // Generous: the test machine is shared; the report gives the real figures.
        assert!(late.percentile_ns(50.0) <= 200_000, "{late}");
    }
}

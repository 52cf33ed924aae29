//! Backends: where scheduled requests finally go.
//!
//! `file`: a regular file (or block device) through the page cache, positional
//! `pread`/`pwrite` from the worker threads. Durability: [`FileBackend::sync`] is
//! `fdatasync`, which covers every write any thread made to the file before it — that is
//! what lets FLUSH bypass the scheduler (see `server`). `direct` (O_DIRECT) is a later
//! step and is refused by the server.
//!
//! `emulated:MODEL`: the data still lives in a file (the same [`FileBackend`], same
//! durability), but *when* a request completes is decided by a drive model of
//! `headway-disk` ([`Emulated`]): fio against the server sees the modelled disk's seek
//! penalties and read-ahead in wall-clock time, on any machine.
//! * Model time is wall time: `Time` = ns since the server's origin `Instant` (the one the
//!   scheduler already runs on). A request dispatched at `t` starts on the model at
//!   `max(t, when the model is next idle)` — with one request at the drive (the default
//!   depth) that is `t`; deeper dispatch queues are served one after another in the order
//!   the workers reach the model (the model is a queue-depth-1 drive, write-through).
//! * The real `pread`/`pwrite` (and the `fdatasync` of a FUA request) happens at once; the
//!   replies and the completion the scheduler sees are held by a [`DelayLine`] until the
//!   model's `done` (or until the real I/O finished, if that is later).
//! * TRIM costs nothing on the model (hard disks have no TRIM); WRITE_ZEROES is a write of
//!   its length. FLUSH costs nothing on the model (it is write-through) and still
//!   `fdatasync`s the file.
//! * The export may not exceed the model's capacity. A small sparse file can back a large
//!   model: `--size 200g` on a new file creates it sparse (`ftruncate`; ext4, xfs, btrfs
//!   and tmpfs allocate nothing until written, and holes read as zeros).
//!
//! ## The delay line and its lateness
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
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration as StdDuration, Instant};

use headway_disk::{builtin, builtin_names, Access, DiskSpec, Hdd};
use headway_sched::{Dir, Time, SECTOR_BYTES};

/// Which backend the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendKind {
    File,
    Direct,
    Emulated(String),
}

impl std::str::FromStr for BackendKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "file" => Ok(BackendKind::File),
            "direct" => Ok(BackendKind::Direct),
            _ => match s.strip_prefix("emulated:") {
                Some(m) if !m.is_empty() => Ok(BackendKind::Emulated(m.to_string())),
                _ => Err(format!("unknown backend `{s}` (known: file, direct, emulated:MODEL)")),
            },
        }
    }
}

/// Largest zero buffer written per call by WRITE_ZEROES when fallocate cannot zero.
const ZERO_CHUNK: usize = 1 << 20;

/// A buffered file export.
#[derive(Debug)]
pub struct FileBackend {
    file: File,
    size: u64,
}

impl FileBackend {
    /// Open `path` (created when `size` is given and it does not exist). With `size`, a
    /// shorter file is extended to it and a longer one is exported only up to it; without,
    /// the export is the whole file.
    pub fn open(path: &Path, size: Option<u64>, read_only: bool) -> io::Result<FileBackend> {
        let file = OpenOptions::new()
            .read(true)
            .write(!read_only)
            .create(!read_only && size.is_some())
            .truncate(false)
            .open(path)?;
        let mut len = file.metadata()?.len();
        if len == 0 {
            // Block devices report 0 in metadata: ask for their size by seeking to the end.
            len = seek_end(&file)?;
        }
        let size = match size {
            Some(s) if s > len => {
                if read_only {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("--size {s} exceeds the file ({len} bytes) and the export is read-only"),
                    ));
                }
                file.set_len(s)?;
                s
            }
            Some(s) => s,
            None => len,
        };
        Ok(FileBackend { file, size })
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn read(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    pub fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.file.write_all_at(data, offset)
    }

    /// Write zeros: `fallocate(ZERO_RANGE)` when the filesystem has it, else zero buffers.
    /// (Punching a hole is also allowed unless NO_HOLE is set; zeroing satisfies both.)
    pub fn write_zeroes(&self, offset: u64, len: u64) -> io::Result<()> {
        // SAFETY: fallocate on an owned descriptor with in-range arguments.
        let r = unsafe {
            libc::fallocate(
                self.file.as_raw_fd(),
                libc::FALLOC_FL_ZERO_RANGE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let zeros = vec![0u8; ZERO_CHUNK.min(len as usize)];
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(zeros.len() as u64) as usize;
            self.file.write_all_at(&zeros[..n], offset + done)?;
            done += n as u64;
        }
        Ok(())
    }

    /// TRIM is advisory: punch a hole when the filesystem can, ignore it otherwise.
    pub fn trim(&self, offset: u64, len: u64) -> io::Result<()> {
        // SAFETY: as in write_zeroes.
        unsafe {
            libc::fallocate(
                self.file.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            );
        }
        Ok(())
    }

    /// `fdatasync`: every write completed before the call is durable after it.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }
}

// ---------------------------------------------------------------------------------------
// emulated:MODEL

/// A model name `headway_disk::builtin` does not know.
#[derive(Debug, thiserror::Error)]
#[error("unknown drive model `{model}` (known: {})", builtin_names().join(", "))]
pub struct UnknownModel {
    pub model: String,
}

/// The drive model behind an `emulated:MODEL` export: decides when each request completes.
/// Shared by the workers (one lock per dispatched request, held for one `Hdd::access`).
#[derive(Debug)]
pub struct Emulated {
    spec: DiskSpec,
    hdd: Mutex<Hdd>,
}

impl Emulated {
    /// The built-in model `name` (case-insensitive), idle, head at LBN 0, cache empty.
    pub fn new(name: &str) -> Result<Emulated, UnknownModel> {
        let spec = builtin(name).ok_or_else(|| UnknownModel { model: name.to_string() })?;
        Ok(Emulated { hdd: Mutex::new(Hdd::new(spec.clone())), spec })
    }

    pub fn spec(&self) -> &DiskSpec {
        &self.spec
    }

    /// Bytes the model holds; an export must not be larger.
    pub fn capacity_bytes(&self) -> u64 {
        self.hdd.lock().unwrap().capacity() * SECTOR_BYTES
    }

    /// Serve `len` sectors at `sector` on the model, dispatched at `at` (ns since the
    /// server's origin): the drive starts when it is idle, at `max(at, previous done)`.
    /// Called by the workers, before the real I/O.
    pub fn access(&self, at: Time, sector: u64, len: u32, dir: Dir) -> Access {
        let mut h = self.hdd.lock().unwrap();
        let start = at.max(h.busy_until());
        h.access(start, sector, len, dir)
    }
}

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

fn seek_end(f: &File) -> io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = f.try_clone()?;
    f.seek(SeekFrom::End(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_names_parse() {
        assert_eq!("file".parse::<BackendKind>(), Ok(BackendKind::File));
        assert_eq!(
            "emulated:wd5000aaks".parse::<BackendKind>(),
            Ok(BackendKind::Emulated("wd5000aaks".into()))
        );
        assert!("emulated:".parse::<BackendKind>().is_err());
        assert!("tape".parse::<BackendKind>().is_err());
    }

    #[test]
    fn file_is_created_extended_and_zeroed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("disk.img");
        let b = FileBackend::open(&p, Some(1 << 20), false).unwrap();
        assert_eq!(b.size(), 1 << 20);
        b.write(4096, &[7u8; 8192]).unwrap();
        b.write_zeroes(5000, 100).unwrap();
        let mut buf = vec![0u8; 8192];
        b.read(4096, &mut buf).unwrap();
        assert!(buf[..904].iter().all(|&x| x == 7));
        assert!(buf[904..1004].iter().all(|&x| x == 0));
        assert!(buf[1004..].iter().all(|&x| x == 7));
        b.sync().unwrap();
        drop(b);
        assert_eq!(FileBackend::open(&p, None, true).unwrap().size(), 1 << 20);
    }

    #[test]
    fn unknown_model_names_the_known_ones() {
        let e = Emulated::new("floppy").unwrap_err().to_string();
        assert!(e.contains("`floppy`") && e.contains("wd5000aaks") && e.contains("cheetah9lp"), "{e}");
        let m = Emulated::new("WD5000AAKS").unwrap();
        assert_eq!(m.capacity_bytes(), 976_773_168 * 512);
    }

    #[test]
    fn model_serialises_overlapping_dispatches() {
        let m = Emulated::new("wd5000aaks").unwrap();
        let a = m.access(Time(0), 100_000_000, 8, Dir::Read);
        // Dispatched before `a` is done (a deeper dispatch queue): starts when `a` ends.
        let b = m.access(Time(1000), 300_000_000, 8, Dir::Read);
        assert!(a.done > Time(1_000_000) && b.done - a.done > headway_sched::Duration::from_millis(1));
    }

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

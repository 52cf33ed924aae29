//! `emulated:MODEL`: the drive model of `headway-disk` behind an export ([`Emulated`]),
//! which decides when each request completes.
//!
//! * Model time is wall time: `Time` = ns since the server's origin `Instant` (the one the
//!   scheduler already runs on). A request dispatched at `t` starts on the model at
//!   `max(t, when the model is next idle)` — with one request at the drive (the default
//!   depth) that is `t`; deeper dispatch queues are served one after another in the order
//!   the workers reach the model (the model is a queue-depth-1 drive, write-through).
//! * The real `pread`/`pwrite` (and the `fdatasync` of a FUA request) happens at once; the
//!   replies and the completion the scheduler sees are held by a
//!   [`DelayLine`](super::DelayLine) until the model's `done` (or until the real I/O
//!   finished, if that is later).
//! * The model is a queue-depth-1 [`Drive`] of `headway-disk`, write-through by default
//!   (`--write-cache back`: a write completes once in the drive's buffer and is destaged
//!   when the arm is free, as the simulator models it). TRIM costs nothing on the model
//!   (hard disks have no TRIM); WRITE_ZEROES is a write of its length. FLUSH is the
//!   drive's FLUSH CACHE on the model (every dirty sector destaged first: nothing with
//!   write-through) and still `fdatasync`s the file; a FUA write is the write followed by
//!   a flush on the model.
//! * The export may not exceed the model's capacity. A small sparse file can back a large
//!   model: `--size 200g` on a new file creates it sparse (`ftruncate`; ext4, xfs, btrfs
//!   and tmpfs allocate nothing until written, and holes read as zeros).

use std::sync::Mutex;

use headway_disk::{
    Cmd, Completion, DiskSpec, Drive, DriveConfig, DriveError, Hdd, ResolveError, WriteCache,
};
use headway_sched::{Dir, Time, SECTOR_BYTES};

/// Why an `emulated:MODEL` model cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// MODEL is neither a built-in model nor a DiskSim parameter file that imports (boxed:
    /// the server's errors stay small).
    #[error(transparent)]
    Unknown(Box<ResolveError>),
    #[error(transparent)]
    Drive(#[from] DriveError),
    /// The file puts a caching controller in front of the drive, which only the simulator
    /// runs.
    #[error("`{0}` has a caching controller (a type-3 disksim_ctlr): `headway serve` emulates the drive alone; name the drive's own file, or run the controller in `headway simulate`/`replay`")]
    Controller(String),
}

impl From<ResolveError> for ModelError {
    fn from(e: ResolveError) -> Self {
        ModelError::Unknown(Box::new(e))
    }
}

/// The drive model behind an `emulated:MODEL` export: decides when each request completes.
/// Shared by the workers (one lock per dispatched request or flush, held while the model
/// serves it).
#[derive(Debug)]
pub struct Emulated {
    spec: DiskSpec,
    model: Mutex<Model>,
}

/// The drive and where its time is: every operation runs to its completion on the model
/// (one at a time, as a depth-1 drive), so `last` is when the last one finished.
#[derive(Debug)]
struct Model {
    drive: Drive,
    last: Time,
    next_tag: u64,
}

/// The tag of the model's flushes (commands count up from 0).
const FLUSH: u64 = u64::MAX;

impl Model {
    /// Bring the drive to `at` (or to where it already is, if later): the destages due by
    /// then are done. Returns the time the next operation starts.
    fn advance(&mut self, at: Time) -> Time {
        let now = at.max(self.last);
        while let Some(t) = self.drive.next_event().filter(|&t| t <= now) {
            self.drive.poll(t);
        }
        self.last = now;
        now
    }

    /// Poll the drive until `tag` completes (destages ending on the way).
    fn run_until(&mut self, tag: u64) -> Completion {
        loop {
            let t = self.drive.next_event().expect("an operation under way gives the drive an event");
            self.last = self.last.max(t);
            if let Some(c) = self.drive.poll(t) {
                if c.tag == tag {
                    return c;
                }
            }
        }
    }
}

impl Emulated {
    /// The drive `name` names (`headway_disk::resolve`: a built-in model, case-insensitive,
    /// or a DiskSim `.parv`/`.diskspecs` file), write-through, idle, head at LBN 0, cache
    /// empty.
    pub fn new(name: &str) -> Result<Emulated, ModelError> {
        Emulated::with_write_cache(name, WriteCache::Through)
    }

    /// [`Emulated::new`] with the drive's write cache `write_cache`.
    pub fn with_write_cache(name: &str, write_cache: WriteCache) -> Result<Emulated, ModelError> {
        let spec = headway_disk::resolve(name)?;
        if spec.controller.is_some() {
            return Err(ModelError::Controller(name.to_string()));
        }
        let drive =
            Drive::new(Hdd::new(spec.clone()), DriveConfig { write_cache, ..DriveConfig::default() })?;
        Ok(Emulated { model: Mutex::new(Model { drive, last: Time::ZERO, next_tag: 0 }), spec })
    }

    pub fn spec(&self) -> &DiskSpec {
        &self.spec
    }

    /// A fresh drive of this model and write cache holding up to `depth` commands, for a
    /// [`crate::queued::QueuedDrive`].
    pub fn queued_drive(&self, depth: u32) -> Result<Drive, DriveError> {
        let write_cache = self.write_cache();
        Drive::new(
            Hdd::new(self.spec.clone()),
            DriveConfig { write_cache, queue_depth: depth, ..DriveConfig::default() },
        )
    }

    /// The drive's write cache.
    pub fn write_cache(&self) -> WriteCache {
        self.model.lock().unwrap().drive.config().write_cache
    }

    /// Bytes the model holds; an export must not be larger.
    pub fn capacity_bytes(&self) -> u64 {
        self.model.lock().unwrap().drive.hdd().capacity() * SECTOR_BYTES
    }

    /// Serve `len` sectors at `sector` on the model, dispatched at `at` (ns since the
    /// server's origin): the drive starts when it is idle, at `max(at, previous done)`
    /// (later while a full write cache refuses it). Called by the workers, before the real
    /// I/O.
    pub fn access(&self, at: Time, sector: u64, len: u32, dir: Dir) -> Completion {
        let mut m = self.model.lock().unwrap();
        let mut now = m.advance(at);
        while !m.drive.can_accept() {
            let t = m.drive.next_event().expect("a drive refusing commands has a destage under way");
            m.drive.poll(t);
            now = now.max(t);
            m.last = now;
        }
        let tag = m.next_tag;
        m.next_tag += 1;
        m.drive.submit(now, Cmd { tag, sector, len, dir }).expect("the drive can accept");
        m.run_until(tag)
    }

    /// FLUSH CACHE on the model, issued at `at`: when it completes (every dirty sector on
    /// the media; at once on a write-through drive).
    pub fn flush(&self, at: Time) -> Time {
        let mut m = self.model.lock().unwrap();
        let now = m.advance(at);
        m.drive.flush(now, FLUSH).expect("one operation at a time: no flush under way");
        m.run_until(FLUSH).done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headway_disk::builtin;

    #[test]
    fn unknown_model_names_the_known_ones() {
        let e = Emulated::new("floppy").unwrap_err().to_string();
        assert!(e.contains("`floppy`") && e.contains("wd5000aaks") && e.contains("cheetah9lp"), "{e}");
        assert_eq!(e, headway_disk::resolve("floppy").unwrap_err().to_string());
        let m = Emulated::new("WD5000AAKS").unwrap();
        assert_eq!(m.capacity_bytes(), 976_773_168 * 512);
        // a DiskSim parameter file, as `--disk` takes it
        let valid = headway_disk::reference_data().join("disksim-valid");
        let m = Emulated::new(valid.join("cheetah9LP.parv").to_str().unwrap()).unwrap();
        assert_eq!(m.spec().name, "cheetah9LP");
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
    fn write_through_model_is_the_drive_model_exactly() {
        let m = Emulated::new("wd5000aaks").unwrap();
        let mut hdd = Hdd::new(builtin("wd5000aaks").unwrap());
        let (mut t, mut last) = (Time(0), Time(0));
        for i in 0..50u64 {
            let (sector, dir) =
                ((i * 7919 % 900) * 1_000_000, if i % 3 == 0 { Dir::Write } else { Dir::Read });
            let want = hdd.access(t.max(hdd.busy_until()), sector, 8, dir);
            let got = m.access(t, sector, 8, dir);
            assert_eq!(
                (got.done, got.cache_hit, got.seek_cylinders),
                (want.done, want.cache_hit, want.seek_cylinders)
            );
            t = Time(t.0 + 3_000_000);
            last = got.done;
        }
        // nothing dirty: a flush completes when it is issued, or when the model is idle
        let at = Time(last.0 + 1_000_000);
        assert_eq!(m.flush(at), at);
        assert_eq!(m.flush(Time(0)), at, "issued while the model is busy: when it is idle");
    }

    #[test]
    fn write_back_model_acknowledges_early_and_flushes_late() {
        let m = Emulated::with_write_cache("wd5000aaks", WriteCache::Back).unwrap();
        assert_eq!(m.write_cache(), WriteCache::Back);
        let wt = Emulated::new("wd5000aaks").unwrap();
        let (mut back, mut through) = (Vec::new(), Vec::new());
        for i in 0..4u64 {
            let sector = (i * 2 + 1) * 100_000_000;
            back.push(m.access(Time(i * 100_000), sector, 8, Dir::Write));
            through.push(wt.access(Time(i * 100_000), sector, 8, Dir::Write));
        }
        // the buffer takes the writes at bus speed; the media takes milliseconds each
        assert!(back.iter().all(|c| c.cache_hit));
        assert!(back[3].done.0 < 1_000_000 && through[3].done.0 > 10_000_000, "{back:?}");
        // a flush now waits for the four destages
        let f = m.flush(back[3].done);
        assert!(f - back[3].done > headway_sched::Duration::from_millis(10), "{f:?}");
        // and the next flush has nothing left to do
        assert_eq!(m.flush(f), f);
    }
}

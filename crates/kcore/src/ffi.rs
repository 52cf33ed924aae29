//! The C core through its harness shim (`c/shim.c`): scalars across the boundary, requests
//! kept by id on the C side.

use std::os::raw::{c_int, c_longlong};

#[repr(C)]
struct Kc {
    _private: [u8; 0],
}

/// The shim's entry points, as one build provides them.
struct Api {
    new: unsafe extern "C" fn(u32, u32, u64, u64, u64, u32, u32, c_int, u32, u64, u32) -> *mut Kc,
    free: unsafe extern "C" fn(*mut Kc),
    set_est: unsafe extern "C" fn(*mut Kc, *const u64, *const u64, u32) -> c_int,
    est: unsafe extern "C" fn(*mut Kc, u64, u64) -> u64,
    arrive: unsafe extern "C" fn(*mut Kc, u64, u64, u64, u32, u32, c_int) -> c_longlong,
    decide: unsafe extern "C" fn(*mut Kc, u64, *mut u64, *mut u64, *mut u64, *mut u32) -> u32,
    completed: unsafe extern "C" fn(*mut Kc, u64, u64) -> c_int,
    queued: unsafe extern "C" fn(*mut Kc) -> u64,
    stats: unsafe extern "C" fn(*mut Kc, *mut u64, u32),
}

macro_rules! api {
    ($name:ident, $new:ident, $free:ident, $set_est:ident, $est:ident, $arrive:ident, $decide:ident,
     $completed:ident, $queued:ident, $stats:ident) => {
        extern "C" {
            fn $new(
                threshold: u32,
                tolerance_milli: u32,
                slice_ns: u64,
                read_expire_ns: u64,
                write_expire_ns: u64,
                fifo_batch: u32,
                writes_starved: u32,
                front_merges: c_int,
                max_sectors: u32,
                capacity: u64,
                depth: u32,
            ) -> *mut Kc;
            fn $free(h: *mut Kc);
            fn $set_est(h: *mut Kc, dist: *const u64, ns: *const u64, n: u32) -> c_int;
            fn $est(h: *mut Kc, from: u64, to: u64) -> u64;
            fn $arrive(
                h: *mut Kc,
                now: u64,
                id: u64,
                sector: u64,
                len: u32,
                dir: u32,
                try_merge: c_int,
            ) -> c_longlong;
            fn $decide(
                h: *mut Kc,
                now: u64,
                id: *mut u64,
                until: *mut u64,
                sector: *mut u64,
                len: *mut u32,
            ) -> u32;
            fn $completed(h: *mut Kc, now: u64, id: u64) -> c_int;
            fn $queued(h: *mut Kc) -> u64;
            fn $stats(h: *mut Kc, out: *mut u64, n: u32);
        }
        static $name: Api = Api {
            new: $new,
            free: $free,
            set_est: $set_est,
            est: $est,
            arrive: $arrive,
            decide: $decide,
            completed: $completed,
            queued: $queued,
            stats: $stats,
        };
    };
}

api!(REAL, kc_new, kc_free, kc_set_est, kc_est, kc_arrive, kc_decide, kc_completed, kc_queued, kc_stats);
api!(
    MUTANT,
    mut_kc_new,
    mut_kc_free,
    mut_kc_set_est,
    mut_kc_est,
    mut_kc_arrive,
    mut_kc_decide,
    mut_kc_completed,
    mut_kc_queued,
    mut_kc_stats
);

/// The core's settings, in its own units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CParams {
    pub stream_threshold: u32,
    pub tolerance_milli: u32,
    pub time_slice_ns: u64,
    pub read_expire_ns: u64,
    pub write_expire_ns: u64,
    pub fifo_batch: u32,
    pub writes_starved: u32,
    pub front_merges: bool,
    pub max_sectors: u32,
}

/// What `ss_decide` answered.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CDecision {
    Idle,
    /// id, sector, len
    Dispatch(u64, u64, u32),
    Wait(u64),
}

/// The counters of `struct ss_stats`, in its order.
pub const STAT_NAMES: [&str; 12] = [
    "inserted",
    "merged",
    "dispatched",
    "completed",
    "waits",
    "waits_caught",
    "waits_expired",
    "second_chances",
    "streams",
    "slice_expiries",
    "urgent_preemptions",
    "parents_dropped",
];

/// One instance of the C core.
pub struct CCore(*mut Kc, &'static Api);

impl CCore {
    pub fn new(p: &CParams, capacity: u64, depth: u32) -> CCore {
        Self::build(&REAL, p, capacity, depth)
    }

    /// The mutant build: `SS_BACKWARD_PCT` 60 instead of 50 (`c/mutant.h`).
    pub fn mutant(p: &CParams, capacity: u64, depth: u32) -> CCore {
        Self::build(&MUTANT, p, capacity, depth)
    }

    fn build(api: &'static Api, p: &CParams, capacity: u64, depth: u32) -> CCore {
        // SAFETY: plain scalars; the shim returns a fresh handle or NULL.
        let h = unsafe {
            (api.new)(
                p.stream_threshold,
                p.tolerance_milli,
                p.time_slice_ns,
                p.read_expire_ns,
                p.write_expire_ns,
                p.fifo_batch,
                p.writes_starved,
                p.front_merges as c_int,
                p.max_sectors,
                capacity,
                depth,
            )
        };
        assert!(!h.is_null(), "kc_new: out of memory");
        CCore(h, api)
    }

    /// Install a service-time table; false when the core refuses it.
    pub fn set_table(&mut self, knots: &[(u64, u64)]) -> bool {
        let d: Vec<u64> = knots.iter().map(|k| k.0).collect();
        let t: Vec<u64> = knots.iter().map(|k| k.1).collect();
        // SAFETY: both slices hold knots.len() elements and outlive the call.
        unsafe { (self.1.set_est)(self.0, d.as_ptr(), t.as_ptr(), knots.len() as u32) == 0 }
    }

    pub fn estimate(&self, from: u64, to: u64) -> u64 {
        // SAFETY: a live handle.
        unsafe { (self.1.est)(self.0, from, to) }
    }

    /// Queue request `id`; the id it merged into, if any.
    pub fn arrive(
        &mut self,
        now: u64,
        id: u64,
        sector: u64,
        len: u32,
        write: bool,
        merge: bool,
    ) -> Option<u64> {
        // SAFETY: a live handle; the shim copies the scalars into memory it owns.
        let r = unsafe { (self.1.arrive)(self.0, now, id, sector, len, write as u32, merge as c_int) };
        assert!(r >= 0, "kc_arrive: out of memory");
        (r > 0).then_some(r as u64)
    }

    pub fn decide(&mut self, now: u64) -> CDecision {
        let (mut id, mut until, mut sector, mut len) = (0, 0, 0, 0);
        // SAFETY: four out-pointers to locals.
        match unsafe { (self.1.decide)(self.0, now, &mut id, &mut until, &mut sector, &mut len) } {
            0 => CDecision::Idle,
            1 => CDecision::Dispatch(id, sector, len),
            2 => CDecision::Wait(until),
            v => panic!("ss_decide: verdict {v}"),
        }
    }

    /// Request `id` (dispatched) completed.
    pub fn completed(&mut self, now: u64, id: u64) {
        // SAFETY: a live handle.
        let r = unsafe { (self.1.completed)(self.0, now, id) };
        assert_eq!(r, 0, "kc_completed: request {id} is not in flight");
    }

    pub fn queued(&self) -> u64 {
        // SAFETY: a live handle.
        unsafe { (self.1.queued)(self.0) }
    }

    pub fn stats(&self) -> Vec<(&'static str, u64)> {
        let mut out = [0u64; 12];
        // SAFETY: out holds 12 elements.
        unsafe { (self.1.stats)(self.0, out.as_mut_ptr(), out.len() as u32) };
        STAT_NAMES.iter().copied().zip(out).collect()
    }

    pub fn stat(&self, name: &str) -> u64 {
        self.stats().into_iter().find(|s| s.0 == name).map(|s| s.1).expect("a counter of ss_stats")
    }
}

impl Drop for CCore {
    fn drop(&mut self) {
        // SAFETY: the handle is live and dropped once.
        unsafe { (self.1.free)(self.0) }
    }
}

// The handle is only used from the thread that holds the value.
unsafe impl Send for CCore {}

#[repr(C)]
struct KcLearn {
    _private: [u8; 0],
}

extern "C" {
    fn kc_learn_new() -> *mut KcLearn;
    fn kc_learn_sample(k: *mut KcLearn, dist: u64, ns: u64);
    fn kc_learn_fit(k: *mut KcLearn) -> c_int;
    fn kc_learn_est(k: *mut KcLearn, dist: u64) -> u64;
    fn kc_learn_free(k: *mut KcLearn);
}

/// The C core's learned estimator alone (`ss_learn_sample`, `ss_learn_fit`), starting
/// from the built-in rotational table.
pub struct Learner(*mut KcLearn);

impl Learner {
    pub fn new() -> Learner {
        // SAFETY: a fresh allocation or NULL.
        let k = unsafe { kc_learn_new() };
        assert!(!k.is_null(), "kc_learn_new: out of memory");
        Learner(k)
    }
    pub fn sample(&mut self, dist: u64, ns: u64) {
        // SAFETY: a live handle.
        unsafe { kc_learn_sample(self.0, dist, ns) }
    }
    /// Refit; whether the table changed.
    pub fn fit(&mut self) -> bool {
        // SAFETY: a live handle.
        unsafe { kc_learn_fit(self.0) != 0 }
    }
    pub fn estimate(&self, dist: u64) -> u64 {
        // SAFETY: a live handle.
        unsafe { kc_learn_est(self.0, dist) }
    }
}

impl Default for Learner {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Learner {
    fn drop(&mut self) {
        // SAFETY: live and dropped once.
        unsafe { kc_learn_free(self.0) }
    }
}

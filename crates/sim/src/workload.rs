//! fio jobs as request generators.
//!
//! Each job section becomes `numjobs` [`Job`]s (fio clones: clone `i` starts at
//! `offset + i * offset_increment`). A job walks its region the way fio does:
//! - sequential patterns advance by the block size plus the `rw=...:N` skip, wrapping to the
//!   region start (fio wraps when `io_size` exceeds `size`, and loops with `time_based`);
//! - `zonemode=strided` reads `zonesize` bytes of each `zonerange` zone, then moves to the
//!   next zone (plus `zoneskip`);
//! - random patterns draw block-aligned offsets uniformly over the region, with replacement
//!   (fio's random map, which avoids repeats within a pass, is not modelled);
//! - mixed patterns pick reads with probability `rwmixread`%.
//!
//! A job with `headway_workload=postmark` does not walk: its requests come from a
//! [`crate::postmark::Postmark`] generator over its region, and it ends when that run is over.
//!
//! Synchronous engines keep one request outstanding; asynchronous ones keep up to `iodepth`.
//! Think time is taken after every `thinktime_blocks` completions (an asynchronous job first
//! lets its requests in flight finish, as fio does); `rate_iops` spaces
//! submissions at least `1/rate` apart. The simulator's seeded RNG is the only source of
//! randomness: job `j` draws from its own stream seeded by `(seed, j, randseed)`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use headway_sched::IoPrio;
use headway_sched::{ContextId, Dir, Duration, Qos, Time, SECTOR_BYTES};

use crate::fio::{Engine, JobSpec, Pattern};
use crate::locality::Locality;
use crate::postmark::Postmark;

/// Per-request host cost between a completion and the issuer's next request reaching the
/// scheduler (system call return, page handling, submission), in ns. Linux measurements put
/// it at tens of microseconds on the papers' hardware; 20 us is a documented estimate.
pub const HOST_OVERHEAD: Duration = Duration::from_micros(20);

/// What the scheduler is told about who issued a request (`--context`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ContextMode {
    /// The process: each job clone is a process, except that jobs sharing a
    /// `headway_process` name are threads of one process and look like one issuer.
    Process,
    /// The thread: every job clone its own issuer, even when grouped into one process.
    Thread,
    /// Nothing: the "process information hidden" setting of 000 Section 3.3.
    None,
    /// Only the virtual machine a job runs in (`headway_vm`; jobs without one share a
    /// default VM), as a host scheduler under Xen sees it (000 Section 3.4).
    Vm,
    /// Each request carries one of N daemon-thread ids drawn at random, like requests
    /// relayed by a server's thread pool (the PVFS server of 000 Section 3.4).
    Pool(u32),
}

/// A `--context` value that names no context: the one error text every front door (the
/// command line, a sweep file, Python) gives, each prefixed with where the value came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a context: expected process, thread, none, vm or pool:N (N >= 1)")]
pub struct BadContext(pub String);

/// A context a trace cannot have: `vm` describes fio jobs in virtual machines.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`vm` is not a context of a trace (its requests name no virtual machine): expected process, thread, none or pool:N (N >= 1)")]
pub struct VmInTrace;

impl std::str::FromStr for ContextMode {
    type Err = BadContext;

    /// `process`, `thread`, `none`, `vm` or `pool:N` (N >= 1).
    fn from_str(s: &str) -> Result<Self, BadContext> {
        match s {
            "process" => Ok(ContextMode::Process),
            "thread" => Ok(ContextMode::Thread),
            "none" => Ok(ContextMode::None),
            "vm" => Ok(ContextMode::Vm),
            _ => s
                .strip_prefix("pool:")
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|n| *n >= 1)
                .map(ContextMode::Pool)
                .ok_or_else(|| BadContext(s.to_string())),
        }
    }
}

impl ContextMode {
    /// A context for a trace replay: any but `vm`.
    pub fn for_trace(s: &str) -> Result<Self, String> {
        match s.parse::<ContextMode>() {
            Ok(ContextMode::Vm) => Err(VmInTrace.to_string()),
            Ok(c) => Ok(c),
            Err(e) => Err(e.to_string()),
        }
    }
}

impl ContextMode {
    /// The context the scheduler is told for a request of thread `thread` of process
    /// `process` in VM `vm` — the one place a mode becomes an issuer (`pool:N` draws per
    /// request instead: none here).
    pub fn issuer(self, process: u32, thread: u32, vm: u32) -> Option<ContextId> {
        match self {
            ContextMode::Process => Some(ContextId(process)),
            ContextMode::Thread => Some(ContextId(thread)),
            ContextMode::Vm => Some(ContextId(vm)),
            ContextMode::None | ContextMode::Pool(_) => None,
        }
    }
}

impl std::fmt::Display for ContextMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ContextMode::Process => f.write_str("process"),
            ContextMode::Thread => f.write_str("thread"),
            ContextMode::None => f.write_str("none"),
            ContextMode::Vm => f.write_str("vm"),
            ContextMode::Pool(n) => write!(f, "pool:{n}"),
        }
    }
}

/// A job clone: who issues its requests, where they go, how much and how fast, how it
/// queues and syncs them, and how far it has got.
#[derive(Clone, Debug)]
pub struct Job {
    pub name: String,
    /// Index among all clones, in file order.
    pub index: usize,
    pub group: usize,
    pub issuer: Issuer,
    walk: Walk,
    pub plan: Plan,
    pub queue: Queue,
    pub syncs: Syncs,
    pub progress: Progress,
    /// `exitall`: when this job finishes, the others of its group stop.
    pub exitall: bool,
    /// `percentile_list`, when given.
    pub percentiles: Option<Vec<f64>>,
    /// The host's `host_overhead` (the machine sets it): a completion to the next request.
    pub host_overhead: Duration,
}

/// Who issues a job's requests, as the scheduler is told.
#[derive(Clone, Debug)]
pub struct Issuer {
    /// The context the scheduler sees (see [`ContextMode::issuer`]; under `pool:N` the
    /// engine draws one per request instead).
    pub ctx: Option<ContextId>,
    /// Process number (jobs sharing `headway_process` share it), VM number.
    pub process: u32,
    pub vm: u32,
    pub weight: u32,
    /// I/O priority (`prioclass`, `prio`), when the job has one.
    pub ioprio: Option<IoPrio>,
    /// QoS class (`headway_rate`, `headway_delay`, `headway_burst`), when the job has one.
    pub qos: Option<Qos>,
    /// Meet the process's other threads after every `barrier` requests (0 = never).
    pub barrier: u32,
}

/// Where a job's next request goes: its pattern over its region, or its PostMark run.
#[derive(Clone, Debug)]
struct Walk {
    pattern: Pattern,
    rwmixread: u32,
    /// Block sizes, read and write, and each direction's smallest (random offsets are
    /// aligned to it).
    sizes: [Sizes; 2],
    align: [u64; 2],
    skip: u64,
    /// `random_distribution` other than uniform: slots of `slot` bytes.
    locality: Option<(Locality, u64)>,
    /// `percentage_random`, and where the previous I/O ended (region-relative) for the
    /// sequential ones.
    pct_random: u32,
    last_end: u64,
    /// `zonesize` and the distance between zone starts.
    strided: Option<(u64, u64)>,
    /// Draws of the walk (and of `rate_process=poisson` gaps).
    rng: ChaCha8Rng,
    /// `headway_workload=postmark`: the generator that replaces the walk.
    postmark: Option<Postmark>,
    /// Region, bytes.
    region_start: u64,
    region_len: u64,
    cursor: u64,
    zone_start: u64,
    zone_done: u64,
}

/// How much a job does and how fast.
#[derive(Clone, Debug)]
pub struct Plan {
    /// `number_ios`.
    pub number_ios: Option<u64>,
    /// Bytes to transfer before the job ends (ignored when time_based).
    pub io_limit: u64,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    /// `ramp_time`: nothing is measured before `started_at + ramp`.
    pub ramp: Duration,
    pub startdelay: Duration,
    /// `rate`: bytes per second; `rate_process=poisson`; the `rate_iops` gap.
    pub rate_bytes: Option<u64>,
    pub rate_poisson: bool,
    pub rate_gap: Option<Duration>,
    pub thinktime: Duration,
    pub thinktime_blocks: u32,
}

/// How a job submits: synchronously or with a queue, through the page cache or not.
#[derive(Clone, Debug)]
pub struct Queue {
    pub sync: bool,
    /// `direct=0`: reads go through the page cache (readahead), writes into it.
    pub buffered: bool,
    pub iodepth: u32,
    /// `iodepth_low` and `iodepth_batch_complete_min`: once the queue is full
    /// (`draining`), refill when at most `refill_low` are in flight and `reap_min` have
    /// completed since (`reaped`).
    refill_low: u32,
    reap_min: u32,
    draining: bool,
    reaped: u32,
    /// Asynchronous jobs with a think time: after every `thinktime_blocks` completions the
    /// job submits nothing until its requests in flight are done (`quiesce`, as fio's
    /// `io_u_quiesce`), then thinks until `resume_at`.
    quiesce: bool,
    resume_at: Time,
}

/// A job's syncs: `fsync`/`fdatasync` every N writes, `end_fsync`, `sync=1`, and where the
/// job is in one.
#[derive(Clone, Debug)]
pub struct Syncs {
    /// `fsync`: every this many writes (0 = never).
    pub every: u32,
    /// `end_fsync`.
    pub at_end: bool,
    pub writes_since: u32,
    pub state: Fsync,
    /// When the sync call began (once the job's requests in flight were done).
    pub started: Option<Time>,
    /// The final sync has started.
    pub at_end_started: bool,
    /// `sync=1`: each write completes only after a sync of its own.
    pub osync: bool,
}

/// How far a job has got.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    pub issued_bytes: u64,
    pub issued: u64,
    pub completed: u64,
    pub inflight: u32,
    pub started_at: Option<Time>,
    pub finished_at: Option<Time>,
    /// Stopped by another job's `exitall`: submits nothing more.
    pub stopped: bool,
}

/// How one direction's block sizes are chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Sizes {
    Fixed(u64),
    /// `bsrange`: a multiple of `min`, `min..=min * steps`, uniformly.
    Range {
        min: u64,
        steps: u64,
    },
    /// `bssplit`: (size, cumulative percent), the last at 100.
    Split(Vec<(u64, u32)>),
}

impl Sizes {
    fn of(spec: &JobSpec, d: usize) -> Sizes {
        if let Some(split) = &spec.bssplit[d] {
            let mut acc = 0;
            return Sizes::Split(
                split
                    .iter()
                    .map(|&(b, p)| {
                        acc += p;
                        (b, acc)
                    })
                    .collect(),
            );
        }
        match spec.bsrange[d] {
            Some((min, max)) if max / min > 1 => Sizes::Range { min, steps: max / min },
            Some((min, _)) => Sizes::Fixed(min),
            None => Sizes::Fixed([spec.bs_read, spec.bs_write][d]),
        }
    }

    /// The smallest size (random offsets are aligned to it).
    fn min(&self) -> u64 {
        match self {
            Sizes::Fixed(b) => *b,
            Sizes::Range { min, .. } => *min,
            Sizes::Split(v) => v.iter().map(|s| s.0).min().expect("a split has sizes"),
        }
    }

    /// The next I/O's size (a fixed size draws nothing).
    fn pick(&self, rng: &mut ChaCha8Rng) -> u64 {
        match self {
            Sizes::Fixed(b) => *b,
            Sizes::Range { min, steps } => min * rng.gen_range(1..=*steps),
            Sizes::Split(v) => {
                let r = rng.gen_range(0..100);
                v.iter().find(|&&(_, cum)| r < cum).unwrap_or(v.last().expect("a split has sizes")).0
            }
        }
    }
}

/// Where a job is in a sync (`fsync`, `end_fsync`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Fsync {
    #[default]
    Idle,
    /// Submitting nothing; waiting for its requests in flight and its page-cache writeback.
    Draining,
    /// The drives' flushes are out: this many have still to complete.
    Flushing(u32),
}

/// A request the job wants to submit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Io {
    pub sector: u64,
    pub len: u32,
    pub dir: Dir,
}

/// Why a job file cannot run on the chosen disk.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{origin}: job `{job}`: {why}")]
pub struct WorkloadError {
    pub origin: String,
    pub job: String,
    pub why: String,
}

/// Bytes one pass over a region of `len` bytes transfers: fio ends a sequential job with
/// `:N` holes, or a strided one, at the end of its region (unless `io_size` asks for more,
/// then it wraps), so a pass moves less than `size`.
fn one_pass_bytes(spec: &JobSpec, len: u64) -> u64 {
    if spec.pattern.is_random() {
        return len;
    }
    let bs = spec.bs_read.max(spec.bs_write);
    if let Some(z) = spec.strided {
        let stride = (z.zonerange + z.zoneskip).max(1);
        let per_zone = |room: u64| (z.zonesize.min(room) / bs) * bs;
        let full = len / stride;
        let tail = len - full * stride;
        return (full * per_zone(stride) + per_zone(tail)).max(bs);
    }
    if spec.skip == 0 {
        return len;
    }
    ((len - bs) / (bs + spec.skip) + 1) * bs
}

/// The job's submission cap in I/Os per second: the read cap for reading patterns, the
/// write cap for writing ones, their sum for mixed patterns (fio caps each direction
/// separately; headway spaces all submissions by the combined rate).
fn rate_for(spec: &JobSpec) -> Option<u64> {
    combined(spec.pattern, spec.rate_iops, spec.rate_iops_write)
}

/// A per-direction cap (read, write) as one cap for the job's pattern: the read cap for
/// reading patterns, the write cap for writing ones, their sum for mixed ones.
fn combined(pattern: Pattern, r: Option<u64>, w: Option<u64>) -> Option<u64> {
    let (r, w) = (r.filter(|&x| x > 0), w.filter(|&x| x > 0));
    match pattern {
        Pattern::Read | Pattern::RandRead => r,
        Pattern::Write | Pattern::RandWrite => w,
        Pattern::ReadWrite | Pattern::RandRw => match (r, w) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        },
    }
}

impl Job {
    /// Expand a job section into its clones. `first_index` numbers clones globally.
    pub fn expand(
        spec: &JobSpec,
        group: usize,
        first_index: usize,
        capacity_bytes: u64,
        ctx: ContextMode,
        seed: u64,
    ) -> Result<Vec<Job>, WorkloadError> {
        let err =
            |why: String| WorkloadError { origin: spec.origin.to_string(), job: spec.name.clone(), why };
        let sync = spec.engine == Engine::Sync;
        let mut out = Vec::with_capacity(spec.numjobs as usize);
        // a percentage of the disk, rounded up to the largest block size (as fio aligns one)
        let share =
            |p: u32| ((capacity_bytes as u128 * p as u128 / 100) as u64).next_multiple_of(spec.bs_max());
        let offset = spec.offset_percent.map_or(spec.offset, share);
        let increment = spec.offset_increment_percent.map_or(spec.offset_increment, share);
        for clone in 0..spec.numjobs as u64 {
            let start = offset + clone * increment;
            if !start.is_multiple_of(SECTOR_BYTES) {
                return Err(err(format!("offset {start} is not a multiple of 512 bytes")));
            }
            if start >= capacity_bytes {
                return Err(err(format!(
                    "clone {clone} starts at byte {start}, beyond the disk's {capacity_bytes} bytes"
                )));
            }
            let len = match spec.size_percent {
                // rounded down to whole blocks
                Some(p) => {
                    let l = (capacity_bytes as u128 * p as u128 / 100) as u64;
                    l - l % spec.bs_max()
                }
                None => spec.size.unwrap_or(capacity_bytes - start),
            }
            .min(capacity_bytes - start);
            let bs_max = spec.bs_max();
            if len < bs_max && spec.headway_postmark.is_none() {
                return Err(err(format!("region of {len} bytes is smaller than the block size {bs_max}")));
            }
            let index = first_index + clone as usize;
            let js = spec.randseed.unwrap_or(0);
            let job_seed = seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ js.rotate_left(17);
            let rng = ChaCha8Rng::seed_from_u64(job_seed);
            let sizes = [Sizes::of(spec, 0), Sizes::of(spec, 1)];
            let slot = sizes[0].min().min(sizes[1].min());
            let locality = (spec.pattern.is_random())
                .then(|| Locality::new(spec.random_distribution, len / slot, job_seed))
                .flatten()
                .map(|l| (l, slot));
            let postmark = match &spec.headway_postmark {
                Some(p) => Some(
                    Postmark::new(p.clone(), start, len, job_seed)
                        .map_err(|e| err(format!("clone {clone}: PostMark: {e}")))?,
                ),
                None => None,
            };
            out.push(Job {
                name: spec.name.clone(),
                index,
                group,
                issuer: Issuer {
                    ctx: ctx.issuer(index as u32, index as u32, 0),
                    process: index as u32,
                    vm: 0,
                    weight: spec.headway_weight,
                    ioprio: spec.ioprio(),
                    qos: spec.qos(),
                    barrier: spec.headway_barrier,
                },
                walk: Walk {
                    pattern: spec.pattern,
                    rwmixread: spec.rwmixread,
                    align: [sizes[0].min(), sizes[1].min()],
                    sizes,
                    skip: spec.skip,
                    locality,
                    pct_random: spec.percentage_random,
                    last_end: 0,
                    strided: spec.strided.map(|z| (z.zonesize, z.zonerange + z.zoneskip)),
                    rng,
                    postmark,
                    region_start: start,
                    region_len: len,
                    cursor: 0,
                    zone_start: 0,
                    zone_done: 0,
                },
                plan: Plan {
                    number_ios: spec.number_ios,
                    io_limit: spec
                        .io_size
                        .unwrap_or_else(|| one_pass_bytes(spec, len))
                        .saturating_mul(spec.loops as u64),
                    runtime: spec.runtime,
                    time_based: spec.time_based,
                    ramp: spec.ramp_time,
                    startdelay: spec.startdelay,
                    rate_bytes: combined(spec.pattern, spec.rate_bytes[0], spec.rate_bytes[1]),
                    rate_poisson: spec.rate_poisson,
                    rate_gap: rate_for(spec).map(|r| Duration(1_000_000_000 / r)),
                    thinktime: spec.thinktime,
                    thinktime_blocks: spec.thinktime_blocks.max(1),
                },
                queue: Queue {
                    sync,
                    buffered: !spec.direct && spec.headway_postmark.is_none(),
                    iodepth: if sync { 1 } else { spec.iodepth.max(1) },
                    refill_low: spec.iodepth_low.unwrap_or(spec.iodepth),
                    reap_min: spec.iodepth_batch_complete_min.max(1),
                    draining: false,
                    reaped: 0,
                    quiesce: false,
                    resume_at: Time::ZERO,
                },
                syncs: Syncs {
                    every: spec.fsync,
                    at_end: spec.end_fsync,
                    writes_since: 0,
                    state: Fsync::Idle,
                    started: None,
                    at_end_started: false,
                    osync: spec.osync,
                },
                progress: Progress::default(),
                exitall: spec.exitall,
                percentiles: spec.percentile_list.clone(),
                host_overhead: HOST_OVERHEAD,
            });
        }
        Ok(out)
    }

    /// A trace context's job (trace replay): no walk of its own, the trace feeds it; it
    /// exists to carry the context's name and results.
    pub fn for_trace(name: String, index: usize) -> Job {
        Job {
            name,
            index,
            group: 0,
            issuer: Issuer {
                ctx: None,
                process: index as u32,
                vm: 0,
                weight: 1,
                ioprio: None,
                qos: None,
                barrier: 0,
            },
            walk: Walk {
                pattern: Pattern::Read,
                rwmixread: 100,
                sizes: [Sizes::Fixed(SECTOR_BYTES), Sizes::Fixed(SECTOR_BYTES)],
                align: [SECTOR_BYTES; 2],
                skip: 0,
                locality: None,
                pct_random: 100,
                last_end: 0,
                strided: None,
                rng: ChaCha8Rng::seed_from_u64(0),
                postmark: None,
                region_start: 0,
                region_len: 0,
                cursor: 0,
                zone_start: 0,
                zone_done: 0,
            },
            plan: Plan {
                number_ios: None,
                io_limit: 0,
                runtime: None,
                time_based: false,
                ramp: Duration::ZERO,
                startdelay: Duration::ZERO,
                rate_bytes: None,
                rate_poisson: false,
                rate_gap: None,
                thinktime: Duration::ZERO,
                thinktime_blocks: 1,
            },
            queue: Queue {
                sync: true,
                buffered: false,
                iodepth: 1,
                refill_low: 1,
                reap_min: 1,
                draining: false,
                reaped: 0,
                quiesce: false,
                resume_at: Time::ZERO,
            },
            syncs: Syncs {
                every: 0,
                at_end: false,
                writes_since: 0,
                state: Fsync::Idle,
                started: None,
                at_end_started: false,
                osync: false,
            },
            progress: Progress::default(),
            exitall: false,
            percentiles: None,
            host_overhead: HOST_OVERHEAD,
        }
    }

    /// Complete the issuer identities once every job is known: `processes[i]` and `vms[i]`
    /// are job `i`'s process and VM numbers.
    pub fn assign_contexts(jobs: &mut [Job], mode: ContextMode, processes: &[u32], vms: &[u32]) {
        for (j, (&p, &v)) in jobs.iter_mut().zip(processes.iter().zip(vms)) {
            j.issuer.process = p;
            j.issuer.vm = v;
            j.issuer.ctx = mode.issuer(p, j.index as u32, v);
        }
    }

    /// Is there room in the job's queue for another request now? Once the queue has been
    /// full, only after it drained to `iodepth_low` and `iodepth_batch_complete_min`
    /// requests completed.
    pub fn has_room(&mut self, now: Time) -> bool {
        if self.queue.quiesce || now < self.queue.resume_at {
            return false;
        }
        if self.progress.inflight >= self.queue.iodepth {
            return false;
        }
        if self.queue.draining {
            if self.progress.inflight > self.queue.refill_low || self.queue.reaped < self.queue.reap_min {
                return false;
            }
            self.queue.draining = false;
        }
        true
    }

    /// A request of the job went out (after `next_io`).
    pub fn submitted(&mut self) {
        self.progress.inflight += 1;
        if self.progress.inflight >= self.queue.iodepth {
            self.queue.draining = true;
            self.queue.reaped = 0;
        }
    }

    /// A request of the job completed.
    pub fn reaped_one(&mut self) {
        self.progress.inflight -= 1;
        self.progress.completed += 1;
        self.queue.reaped = self.queue.reaped.saturating_add(1);
        if !self.queue.sync
            && self.plan.thinktime.0 > 0
            && self.progress.completed.is_multiple_of(self.plan.thinktime_blocks as u64)
        {
            self.queue.quiesce = true;
        }
    }

    /// Submit nothing more (another job's `exitall`; a final sync is not started then).
    pub fn stop(&mut self) {
        self.progress.stopped = true;
        self.syncs.at_end_started = true;
    }

    /// May the job submit another request at `now`?
    pub fn wants_more(&self, now: Time) -> bool {
        if self.progress.stopped {
            return false;
        }
        if let (Some(rt), Some(st)) = (self.plan.runtime, self.progress.started_at) {
            if now.saturating_since(st) >= rt + self.plan.ramp {
                return false;
            }
        }
        match &self.walk.postmark {
            Some(pm) => !pm.done(),
            None => {
                (self.plan.time_based || self.progress.issued_bytes < self.plan.io_limit)
                    && self.plan.number_ios.is_none_or(|n| self.progress.issued < n)
            }
        }
    }

    /// The least time from this submission (of `bytes`) to the job's next one: the
    /// `rate_iops` gap and the `rate` gap, whichever is longer; `None` without a cap. With
    /// `rate_process=poisson` that gap is the mean of an exponential draw.
    #[inline]
    pub fn submit_gap(&mut self, bytes: u64) -> Option<Duration> {
        if self.plan.rate_gap.is_none() && self.plan.rate_bytes.is_none() {
            return None;
        }
        let by_bytes =
            self.plan.rate_bytes.map(|r| Duration((bytes as u128 * 1_000_000_000 / r as u128) as u64));
        let gap = match (self.plan.rate_gap, by_bytes) {
            (Some(a), Some(b)) => a.max(b),
            (a, b) => a.or(b)?,
        };
        if !self.plan.rate_poisson {
            return Some(gap);
        }
        let u: f64 = 1.0 - self.walk.rng.gen::<f64>(); // (0, 1]
        Some(Duration((-u.ln() * gap.0 as f64) as u64))
    }

    /// When the job's measured part starts (`ramp_time` after its first request); `None`
    /// before it has started.
    pub fn measured_from(&self) -> Option<Time> {
        self.progress.started_at.map(|t| t + self.plan.ramp)
    }

    /// Is the job finished (nothing more to submit, nothing in flight)?
    pub fn done(&self, now: Time) -> bool {
        self.progress.inflight == 0
            && !self.wants_more(now)
            && self.syncs.state == Fsync::Idle
            && !self.end_fsync_due()
    }

    /// Is a sync under way, or due now (`fsync` writes since the last)? Starts one that is
    /// due (the job then submits nothing until it completes).
    pub fn fsync_due(&mut self) -> bool {
        if self.syncs.state == Fsync::Idle
            && self.syncs.every > 0
            && self.syncs.writes_since >= self.syncs.every
        {
            self.syncs.state = Fsync::Draining;
        }
        self.syncs.state != Fsync::Idle
    }

    /// The final sync (`end_fsync`) has yet to start.
    pub fn end_fsync_due(&self) -> bool {
        self.syncs.at_end && !self.syncs.at_end_started
    }

    /// Start the final sync (`end_fsync`).
    pub fn start_end_fsync(&mut self) {
        debug_assert!(self.end_fsync_due() && self.syncs.state == Fsync::Idle);
        self.syncs.at_end_started = true;
        self.syncs.state = Fsync::Draining;
    }

    /// Bytes the job will transfer, when bounded (for progress).
    pub fn planned_bytes(&self) -> Option<u64> {
        match &self.walk.postmark {
            Some(pm) => Some(pm.estimated_bytes()),
            None => (!self.plan.time_based).then_some(self.plan.io_limit),
        }
    }

    /// The job's region: first byte and length in bytes.
    pub fn region(&self) -> (u64, u64) {
        (self.walk.region_start, self.walk.region_len)
    }

    /// The PostMark run, for a `headway_workload=postmark` job.
    pub fn postmark(&self) -> Option<&Postmark> {
        self.walk.postmark.as_ref()
    }

    fn pick_dir(&mut self) -> Dir {
        match self.walk.pattern {
            Pattern::Read | Pattern::RandRead => Dir::Read,
            Pattern::Write | Pattern::RandWrite => Dir::Write,
            Pattern::ReadWrite | Pattern::RandRw => {
                if self.walk.rng.gen_range(0..100) < self.walk.rwmixread {
                    Dir::Read
                } else {
                    Dir::Write
                }
            }
        }
    }

    /// The next request of the walk (or of the PostMark run); advances its state.
    pub fn next_io(&mut self) -> Io {
        if let Some(pm) = &mut self.walk.postmark {
            let io = pm.next_io().expect("the engine asks for a request only while wants_more()");
            self.progress.issued_bytes += io.len as u64 * SECTOR_BYTES;
            self.progress.issued += 1;
            return io;
        }
        let dir = self.pick_dir();
        let (bs, align) =
            (self.walk.sizes[dir.index()].pick(&mut self.walk.rng), self.walk.align[dir.index()]);
        let random = self.walk.pattern.is_random()
            && (self.walk.pct_random >= 100 || self.walk.rng.gen_range(0..100) < self.walk.pct_random);
        let off = if random {
            // the last aligned start that still fits the block
            let last = (self.walk.region_len - bs) / align;
            match &self.walk.locality {
                None => self.walk.rng.gen_range(0..=last) * align,
                Some((l, slot)) => ((l.slot(&mut self.walk.rng) * slot) / align).min(last) * align,
            }
        } else if self.walk.pattern.is_random() {
            // `percentage_random`: carry on after the previous I/O
            if self.walk.last_end + bs > self.walk.region_len {
                0
            } else {
                self.walk.last_end
            }
        } else if let Some((zonesize, stride)) = self.walk.strided {
            if self.walk.zone_done >= zonesize
                || self.walk.zone_start + self.walk.zone_done + bs > self.walk.region_len
            {
                self.walk.zone_start += stride;
                self.walk.zone_done = 0;
                if self.walk.zone_start + bs > self.walk.region_len {
                    self.walk.zone_start = 0;
                }
            }
            let o = self.walk.zone_start + self.walk.zone_done;
            self.walk.zone_done += bs;
            o
        } else {
            if self.walk.cursor + bs > self.walk.region_len {
                self.walk.cursor = 0;
            }
            let o = self.walk.cursor;
            self.walk.cursor += bs + self.walk.skip;
            o
        };
        self.walk.last_end = off + bs;
        self.progress.issued_bytes += bs;
        self.progress.issued += 1;
        Io { sector: (self.walk.region_start + off) / SECTOR_BYTES, len: (bs / SECTOR_BYTES) as u32, dir }
    }

    /// Time from a completion at `now` to the job's next request: for a synchronous job the
    /// host's cost `host` (`host_overhead` after a request the job blocked on), plus the
    /// thinktime after every `thinktime_blocks` requests; an asynchronous job refills after
    /// `host_overhead`, and once a think's quiesce is over (nothing left in flight: see
    /// [`Queue`]) thinks first.
    pub fn gap_after_completion(&mut self, now: Time, host: Duration) -> Duration {
        if !self.queue.sync {
            if self.queue.quiesce && self.progress.inflight == 0 {
                self.queue.quiesce = false;
                let gap = self.host_overhead + self.plan.thinktime;
                self.queue.resume_at = now + gap;
                return gap;
            }
            self.host_overhead
        } else if self.plan.thinktime.0 == 0
            || !self.progress.completed.is_multiple_of(self.plan.thinktime_blocks as u64)
        {
            host
        } else {
            host + self.plan.thinktime
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::{Engine, Origin, RandomDistribution, Strided};

    fn spec(pattern: Pattern) -> JobSpec {
        let mut s = JobSpec::defaults("j", Origin { file: "t.fio".into(), line: 1 });
        s.pattern = pattern;
        s.size = Some(1 << 20);
        s
    }

    #[test]
    fn clones_start_offset_increment_apart() {
        let mut s = spec(Pattern::Read);
        s.numjobs = 4;
        s.offset_increment = 51 << 30;
        let jobs = Job::expand(&s, 0, 0, 500_000_000_000, ContextMode::Process, 1).unwrap();
        let starts: Vec<u64> = jobs.into_iter().map(|mut j| j.next_io().sector * 512).collect();
        assert_eq!(starts, vec![0, 51 << 30, 102 << 30, 153 << 30]);
    }

    #[test]
    fn sequential_walk_with_skip_wraps() {
        let mut s = spec(Pattern::Read);
        s.skip = 4096;
        s.size = Some(16384);
        let mut j = Job::expand(&s, 0, 0, 1 << 30, ContextMode::None, 1).unwrap().remove(0);
        let secs: Vec<u64> = (0..3).map(|_| j.next_io().sector).collect();
        assert_eq!(secs, vec![0, 16, 0]);
        assert_eq!(j.issuer.ctx, None);
    }

    #[test]
    fn one_pass_with_holes_or_zones_ends_at_the_region_end() {
        let mut s = spec(Pattern::Read);
        s.size = Some(40 << 20);
        s.skip = 12 << 10;
        assert_eq!(one_pass_bytes(&s, 40 << 20), 10 << 20, "4 KiB of every 16 KiB");
        s.skip = 0;
        s.strided = Some(Strided { zonesize: 8192, zonerange: 65536, zoneskip: 0 });
        assert_eq!(one_pass_bytes(&s, 1 << 20), 16 * 8192);
        s.strided = None;
        assert_eq!(one_pass_bytes(&s, 1 << 20), 1 << 20);
    }

    #[test]
    fn strided_zones() {
        let mut s = spec(Pattern::Read);
        s.strided = Some(Strided { zonesize: 8192, zonerange: 65536, zoneskip: 0 });
        let mut j = Job::expand(&s, 0, 0, 1 << 30, ContextMode::None, 1).unwrap().remove(0);
        let offs: Vec<u64> = (0..5).map(|_| j.next_io().sector * 512).collect();
        assert_eq!(offs, vec![0, 4096, 65536, 69632, 131072]);
    }

    #[test]
    fn random_stays_in_region_and_is_seeded() {
        let mut s = spec(Pattern::RandRw);
        s.offset = 1 << 20;
        let mk = |seed| Job::expand(&s, 0, 0, 1 << 30, ContextMode::None, seed).unwrap().remove(0);
        let (mut a, mut b, mut c) = (mk(7), mk(7), mk(8));
        let va: Vec<Io> = (0..200).map(|_| a.next_io()).collect();
        let vb: Vec<Io> = (0..200).map(|_| b.next_io()).collect();
        let vc: Vec<Io> = (0..200).map(|_| c.next_io()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
        assert!(va.iter().all(|io| io.sector * 512 >= 1 << 20 && io.sector * 512 + 4096 <= 2 << 20));
        let reads = va.iter().filter(|io| io.dir == Dir::Read).count();
        assert!((60..140).contains(&reads), "rwmixread=50 gave {reads}/200 reads");
    }

    /// `n` I/Os of a job of `s` on a 1 GiB disk (seed 1).
    fn ios(s: &JobSpec, n: usize) -> Vec<Io> {
        let mut j = Job::expand(s, 0, 0, 1 << 30, ContextMode::None, 1).unwrap().remove(0);
        (0..n).map(|_| j.next_io()).collect()
    }

    #[test]
    fn bssplit_and_bsrange_draw_sizes_and_align_random_offsets() {
        let mut s = spec(Pattern::RandRead);
        s.bssplit = [Some(vec![(4096, 75), (65536, 25)]), None];
        let v = ios(&s, 4000);
        let big = v.iter().filter(|io| io.len == 128).count();
        assert!(v.iter().all(|io| io.len == 8 || io.len == 128));
        assert!((850..1150).contains(&big), "25% of 4000 at 64 KiB, got {big}");
        // aligned to the smallest size, inside the region
        assert!(v.iter().all(|io| io.sector % 8 == 0 && (io.sector + io.len as u64) * 512 <= 1 << 20));
        let mut s = spec(Pattern::Read);
        s.bsrange = [Some((4096, 16384)); 2];
        let v = ios(&s, 3000);
        for len in [8, 16, 24, 32] {
            let n = v.iter().filter(|io| io.len == len).count();
            assert!((600..900).contains(&n), "{len} sectors: {n} of 3000");
        }
        // a sequential walk advances by each I/O's own size
        assert!(v.windows(2).all(|w| w[1].sector == w[0].sector + w[0].len as u64 || w[1].sector == 0));
    }

    #[test]
    fn percentage_random_continues_sequentially_in_between() {
        let mut s = spec(Pattern::RandRead);
        s.size = Some(1 << 30);
        s.percentage_random = 25;
        let v = ios(&s, 4000);
        let seq = v.windows(2).filter(|w| w[1].sector == w[0].sector + 8).count();
        assert!((2800..3200).contains(&seq), "75% sequential: {seq} of 3999");
        s.percentage_random = 0;
        let v = ios(&s, 100);
        assert!(v.windows(2).all(|w| w[1].sector == w[0].sector + 8), "0%: a sequential walk");
    }

    #[test]
    fn random_distribution_reuses_hot_blocks() {
        let mut s = spec(Pattern::RandRead);
        s.size = Some(64 << 20);
        let distinct = |s: &JobSpec| {
            let v = ios(s, 10_000);
            v.iter().map(|io| io.sector).collect::<std::collections::BTreeSet<_>>().len()
        };
        let uniform = distinct(&s);
        s.random_distribution = RandomDistribution::Zipf(1.2);
        let zipf = distinct(&s);
        s.random_distribution = RandomDistribution::Pareto(0.1);
        let pareto = distinct(&s);
        // uniform: 16,384 blocks, 10,000 draws: about 7,500 distinct
        assert!(uniform > 7000 && zipf < uniform / 2 && pareto < uniform / 2, "{uniform} {zipf} {pareto}");
        // still whole blocks in the region
        let v = ios(&s, 1000);
        assert!(v.iter().all(|io| io.sector % 8 == 0 && (io.sector + 8) * 512 <= 64 << 20));
    }

    #[test]
    fn loops_number_ios_and_percent_regions() {
        let mut s = spec(Pattern::Read);
        s.loops = 3;
        let j = Job::expand(&s, 0, 0, 1 << 30, ContextMode::None, 1).unwrap().remove(0);
        assert_eq!(j.planned_bytes(), Some(3 << 20));
        s.number_ios = Some(10);
        let mut j = Job::expand(&s, 0, 0, 1 << 30, ContextMode::None, 1).unwrap().remove(0);
        let mut n = 0;
        while j.wants_more(Time::ZERO) {
            j.next_io();
            n += 1;
        }
        assert_eq!(n, 10);
        let mut s = spec(Pattern::Read);
        s.size = None;
        s.size_percent = Some(25);
        s.offset_percent = Some(10);
        s.bs_read = 1 << 20;
        let j = Job::expand(&s, 0, 0, 1000 << 20, ContextMode::None, 1).unwrap().remove(0);
        // 10% of 1000 MiB rounded up to the 1 MiB block; 25% of the disk long
        assert_eq!(j.region(), (100 << 20, 250 << 20));
        // clones 30% apart: 300 MiB
        s.size_percent = Some(20);
        s.numjobs = 3;
        s.offset_increment_percent = Some(30);
        let starts: Vec<u64> = Job::expand(&s, 0, 0, 1000 << 20, ContextMode::None, 1)
            .unwrap()
            .iter()
            .map(|j| j.region().0)
            .collect();
        assert_eq!(starts, vec![100 << 20, 400 << 20, 700 << 20]);
    }

    #[test]
    fn rate_spaces_submissions_by_bytes() {
        let mut s = spec(Pattern::Read);
        s.rate_bytes = [Some(1 << 20), None];
        let mut j = Job::expand(&s, 0, 0, 1 << 30, ContextMode::None, 1).unwrap().remove(0);
        // 4 KiB at 1 MiB/s: 1/256 s
        assert_eq!(j.submit_gap(4096), Some(Duration(1_000_000_000 / 256)));
        s.rate_iops = Some(100);
        let mut j = Job::expand(&s, 0, 0, 1 << 30, ContextMode::None, 1).unwrap().remove(0);
        assert_eq!(j.submit_gap(4096), Some(Duration(10_000_000)), "the tighter cap holds");
        // poisson: exponential gaps with the cap's mean (sd = mean)
        s.rate_poisson = true;
        let mut j = Job::expand(&s, 0, 0, 1 << 30, ContextMode::None, 1).unwrap().remove(0);
        let gaps: Vec<f64> = (0..20_000).map(|_| j.submit_gap(4096).unwrap().0 as f64 / 1e6).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((9.7..10.3).contains(&mean) && (9.5..10.5).contains(&sd), "mean {mean} ms, sd {sd}");
        let mut j =
            Job::expand(&spec(Pattern::Write), 0, 0, 1 << 30, ContextMode::None, 1).unwrap().remove(0);
        assert_eq!(j.submit_gap(4096), None);
    }

    #[test]
    fn iodepth_low_and_batch_complete_hold_refills_until_the_queue_drained() {
        let mut s = spec(Pattern::RandRead);
        s.engine = Engine::Async;
        s.iodepth = 8;
        let mk = |s: &JobSpec| Job::expand(s, 0, 0, 1 << 30, ContextMode::None, 1).unwrap().remove(0);
        // fill to 8, then drain: the default keeps the queue full
        let fill = |j: &mut Job| {
            let mut n = 0;
            while j.has_room(Time::ZERO) {
                j.next_io();
                j.submitted();
                n += 1;
            }
            n
        };
        let mut j = mk(&s);
        assert_eq!(fill(&mut j), 8);
        j.reaped_one();
        assert_eq!(fill(&mut j), 1, "default: refill after each completion");
        s.iodepth_low = Some(2);
        let mut j = mk(&s);
        fill(&mut j);
        for _ in 0..5 {
            j.reaped_one();
            assert!(!j.has_room(Time::ZERO), "still above iodepth_low");
        }
        j.reaped_one();
        assert_eq!(fill(&mut j), 6, "drained to 2: filled back to 8");
        s.iodepth_low = None;
        s.iodepth_batch_complete_min = 3;
        let mut j = mk(&s);
        fill(&mut j);
        j.reaped_one();
        j.reaped_one();
        assert!(!j.has_room(Time::ZERO));
        j.reaped_one();
        assert_eq!(fill(&mut j), 3);
    }

    #[test]
    fn postmark_jobs_end_with_their_run_and_their_regions_must_hold_the_pool() {
        let mut s = spec(Pattern::Read);
        s.size = Some(8 << 20);
        s.numjobs = 2;
        s.offset_increment = 16 << 20;
        s.headway_postmark =
            Some(crate::postmark::PostmarkParams { files: 20, transactions: 30, ..Default::default() });
        let mut jobs = Job::expand(&s, 0, 0, 1 << 30, ContextMode::None, 1).unwrap();
        let j = &mut jobs[1];
        let mut n = 0;
        while j.wants_more(Time::ZERO) {
            let io = j.next_io();
            assert!(io.sector * 512 >= 16 << 20 && (io.sector + io.len as u64) * 512 <= 24 << 20, "{io:?}");
            n += 1;
        }
        let st = j.postmark().unwrap().stats();
        assert_eq!(st.transactions, 30);
        assert_eq!(j.progress.issued, n);
        assert_eq!(j.progress.issued_bytes, st.created_bytes + st.appended_bytes + st.read_bytes);
        assert!(j.planned_bytes().is_some_and(|b| b > 0));
        s.size = Some(64 << 10);
        let e = Job::expand(&s, 0, 0, 1 << 30, ContextMode::None, 1).unwrap_err().to_string();
        assert!(e.contains("t.fio:1") && e.contains("PostMark") && e.contains("cannot hold"), "{e}");
    }

    #[test]
    fn regions_past_the_disk_are_errors() {
        let mut s = spec(Pattern::Read);
        s.offset = 2 << 30;
        let e = Job::expand(&s, 0, 0, 1 << 30, ContextMode::None, 1).unwrap_err().to_string();
        assert!(e.contains("t.fio:1") && e.contains("beyond"), "{e}");
    }
}

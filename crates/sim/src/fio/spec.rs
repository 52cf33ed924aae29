//! What a fio job file means to headway, after parsing: one [`JobSpec`] per job section.
//! Numeric values are already in bytes / nanoseconds; `numjobs` is not yet expanded.
//! Produced by [`parse_str`](super::parse_str) / [`parse_file`](super::parse_file).

use std::fmt;

use headway_sched::IoPrio;
use headway_sched::{Duration, Qos, Rate};

use crate::postmark::PostmarkParams;

/// Where an option was set, for error messages and reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub file: String,
    /// 1-based.
    pub line: usize,
}

impl fmt::Display for Origin {
    /// `jobs/par-read.fio:7`, the prefix of every job-file error.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// `rw=` access pattern.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// sequential reads (`read`)
    Read,
    /// sequential writes (`write`)
    Write,
    /// random reads (`randread`)
    RandRead,
    /// random writes (`randwrite`)
    RandWrite,
    /// sequential mixed (`rw`, `readwrite`), split by `rwmixread`
    ReadWrite,
    /// random mixed (`randrw`), split by `rwmixread`
    RandRw,
}

impl Pattern {
    pub fn is_random(self) -> bool {
        matches!(self, Pattern::RandRead | Pattern::RandWrite | Pattern::RandRw)
    }
}

/// Where a random pattern's offsets fall (`random_distribution`). Every distribution but
/// `Uniform` has hot spots; their ranks are scattered over the region by a fixed
/// pseudo-random permutation (as fio hashes them), so a hot block's neighbours are not hot.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum RandomDistribution {
    /// `random` (default): every block alike.
    Uniform,
    /// `zipf:THETA`: block of rank `k` (1-based) with probability proportional to
    /// `1 / k^THETA`, THETA > 0.
    Zipf(f64),
    /// `pareto:H`, 0 < H < 1: rank `floor((n - 1) * u^(ln H / ln(1 - H)))` for uniform `u`
    /// (H = 0.2 gives the 80/20 rule's skew; H = 0.5 is uniform).
    Pareto(f64),
    /// `normal:DEV`: ranks normally distributed around the middle of the region with a
    /// standard deviation of DEV percent of it (drawn again when outside).
    Normal(f64),
}

/// How the job issues I/O.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Engine {
    /// psync / sync / pvsync / pvsync2 / vsync: one synchronous request outstanding.
    Sync,
    /// libaio / io_uring / posixaio: up to `iodepth` outstanding, asynchronous.
    Async,
}

/// `zonemode=strided`: `zonesize` bytes are accessed out of every `zonerange` bytes
/// (fio: after zonesize bytes of I/O, skip to the next zone), plus an extra `zoneskip`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Strided {
    pub zonesize: u64,
    pub zonerange: u64,
    pub zoneskip: u64,
}

/// One job section with `[global]` applied.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    pub name: String,
    /// Line of the `[name]` header.
    pub origin: Origin,
    pub pattern: Pattern,
    /// `rw=read:8k` — a gap of this many bytes after every I/O (fio's `:N` suffix).
    pub skip: u64,
    /// Percentage of reads for mixed patterns (default 50).
    pub rwmixread: u32,
    /// Block size for reads and writes, bytes (`bs=4k`, or `bs=4k,16k` read,write).
    pub bs_read: u64,
    pub bs_write: u64,
    /// `bsrange=MIN-MAX` per direction (read, write): sizes drawn uniformly from the
    /// multiples of MIN up to MAX; replaces `bs` (whichever of the two comes last).
    pub bsrange: [Option<(u64, u64)>; 2],
    /// `bssplit=SIZE/PCT:...` per direction: each size with its percentage of the I/Os
    /// (they add up to 100); takes precedence over `bs` and `bsrange`, as in fio.
    pub bssplit: [Option<Vec<(u64, u32)>>; 2],
    /// Where random offsets fall (`random_distribution`, default uniform).
    pub random_distribution: RandomDistribution,
    /// Percentage of a random pattern's I/Os that are random (`percentage_random`, default
    /// 100); the others continue sequentially from the previous one.
    pub percentage_random: u32,
    /// Region size in bytes (`size`); `None` = to the end of the device.
    pub size: Option<u64>,
    /// `size=N%`: the region is N percent of the device from `offset` (replaces `size`).
    pub size_percent: Option<u32>,
    /// Total bytes to transfer (`io_size`); `None` = `size`.
    pub io_size: Option<u64>,
    /// Start of the region, bytes.
    pub offset: u64,
    /// `offset=N%`: the region starts N percent into the device, rounded up to the block
    /// size (replaces `offset`).
    pub offset_percent: Option<u32>,
    /// Times the job covers its `io_size` (`loops`, default 1).
    pub loops: u32,
    /// Stop after this many I/Os (`number_ios`), whichever of it and the bytes comes first.
    pub number_ios: Option<u64>,
    /// Added to `offset` for each clone `i` of `numjobs` (`offset + i * offset_increment`).
    pub offset_increment: u64,
    /// `offset_increment=N%`: N percent of the device, rounded up to the largest block size
    /// (replaces `offset_increment`).
    pub offset_increment_percent: Option<u32>,
    pub numjobs: u32,
    pub engine: Engine,
    /// Requests outstanding at once; always 1 for [`Engine::Sync`] (fio accepts a larger
    /// `iodepth` with a sync engine but it has no effect there).
    pub iodepth: u32,
    /// Once the queue is full, refill only when it has drained to this many in flight
    /// (`iodepth_low`; `None`: `iodepth`, keep it full).
    pub iodepth_low: Option<u32>,
    /// Once the queue is full, refill only after this many completions
    /// (`iodepth_batch_complete_min`, default 1).
    pub iodepth_batch_complete_min: u32,
    pub direct: bool,
    /// Pause after every `thinktime_blocks` I/Os.
    pub thinktime: Duration,
    pub thinktime_blocks: u32,
    /// Stop after this long (`runtime`); with `time_based`, loop over the region until then.
    pub runtime: Option<Duration>,
    pub time_based: bool,
    /// Run this long before measuring (`ramp_time`): the job's I/O in the first
    /// `ramp_time` counts in no figure, and `runtime` starts after it.
    pub ramp_time: Duration,
    /// Cap on read I/Os per second (`rate_iops=R` or the first of `rate_iops=R,W`).
    /// fio caps each direction separately; a single value caps both.
    pub rate_iops: Option<u64>,
    /// Cap on write I/Os per second (the second of `rate_iops=R,W`; `rate_iops=R` sets both).
    pub rate_iops_write: Option<u64>,
    /// Cap on bytes per second, read and write (`rate=R,W`, `rate=R` sets both).
    pub rate_bytes: [Option<u64>; 2],
    /// `rate_process=poisson`: the capped submissions' gaps are exponentially distributed
    /// around the cap's gap (a Poisson process) instead of fixed (`linear`, default).
    pub rate_poisson: bool,
    pub strided: Option<Strided>,
    /// Wait for all earlier jobs to finish before starting (`stonewall` / `wait_for_previous`).
    pub stonewall: bool,
    /// When this job finishes, stop the other jobs of its group (`exitall`).
    pub exitall: bool,
    /// Flush after every this many writes (`fsync`, `fdatasync`; 0 = never): the job's
    /// dirty page-cache data is written back and the drive's write cache flushed.
    pub fsync: u32,
    /// Flush once more when the job has done its I/O (`end_fsync`).
    pub end_fsync: bool,
    /// Synchronous writes (`sync=1`, O_SYNC/O_DSYNC): a write completes once its data is
    /// written back and the drives' caches flushed.
    pub osync: bool,
    /// The completion-latency percentiles the job reports (`percentile_list`); `None`:
    /// fio's default list.
    pub percentile_list: Option<Vec<f64>>,
    /// Delay before the job starts (`startdelay`).
    pub startdelay: Duration,
    /// Random seed offset (`randseed`), mixed into the simulator seed when given.
    pub randseed: Option<u64>,
    /// `headway_process`: jobs sharing it are threads of one process.
    pub headway_process: Option<String>,
    /// `headway_barrier`: threads of one process meet after every N requests each (0 = off).
    pub headway_barrier: u32,
    /// `headway_vm`: the virtual machine the job runs in.
    pub headway_vm: Option<String>,
    /// `ioscheduler=NAME`: the scheduler to run when `--scheduler` is not given.
    pub ioscheduler: Option<String>,
    /// `write_iolog=FILE`: log what the job submits ([`crate::iolog_out`]).
    pub write_iolog: Option<String>,
    /// `filename=`: the file the job's log names (the simulation itself ignores it).
    pub filename: Option<String>,
    /// `headway_weight`: proportional-share weight (default 1).
    pub headway_weight: u32,
    /// fio's `prioclass` (1 real time, 2 best effort, 3 idle) and `prio` (0..7), each
    /// `None` when not given. See [`JobSpec::ioprio`].
    pub prioclass: Option<u8>,
    pub prio: Option<u8>,
    /// `headway_rate`, `headway_delay`, `headway_burst`: the job's QoS class (004), each
    /// `None` when not given. See [`JobSpec::qos`].
    pub headway_rate: Option<Rate>,
    pub headway_delay: Option<Duration>,
    pub headway_burst: Option<u32>,
    /// `headway_workload=postmark` with its `headway_pm_*` parameters: PostMark on a file
    /// pool in the region instead of the `rw` walk. `None`: the walk (`headway_workload=fio`).
    pub headway_postmark: Option<PostmarkParams>,
    /// How fio would report the job: its options as written, its reporting group and its
    /// logs ([`crate::fio_out`]).
    pub report: ReportSpec,
}

/// A job's reporting, as fio's options set it.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportSpec {
    /// The job section's own options as written (`key`, value or `""` for a bare flag):
    /// fio's `"job options"`.
    pub options: Vec<(String, String)>,
    /// `group_reporting`: the group's jobs reported as one.
    pub group_reporting: bool,
    /// `new_group`: the job starts a new reporting group (as `stonewall` does).
    pub new_group: bool,
    /// `bw_avg_time`, `iops_avg_time`: the windows of the bandwidth and IOPS samples, ms
    /// (fio's default 500).
    pub bw_avg_ms: u64,
    pub iops_avg_ms: u64,
    pub logs: LogSpec,
}

/// fio's logs for a job: `write_bw_log`, `write_lat_log`, `write_iops_log`,
/// `write_hist_log` (each the file prefix; `""`, given bare: the job's name),
/// `log_avg_msec`, `log_hist_msec`, `per_job_logs`, `log_offset`, `log_max_value`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogSpec {
    pub bw: Option<String>,
    pub lat: Option<String>,
    pub iops: Option<String>,
    pub hist: Option<String>,
    pub avg_msec: u64,
    pub hist_msec: u64,
    /// `per_job_logs` (fio's default 1): a file per job, `PREFIX_bw.N.log`; 0: one file
    /// `PREFIX_bw.log` for every job naming the prefix.
    pub per_job: bool,
    pub offset: bool,
    pub max_value: bool,
}

impl LogSpec {
    /// Whether the job writes any log.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }
}

impl Default for ReportSpec {
    fn default() -> Self {
        ReportSpec {
            options: Vec::new(),
            group_reporting: false,
            new_group: false,
            bw_avg_ms: 500,
            iops_avg_ms: 500,
            logs: LogSpec { per_job: true, ..LogSpec::default() },
        }
    }
}

impl JobSpec {
    /// fio's defaults for a job with nothing set.
    pub fn defaults(name: &str, origin: Origin) -> Self {
        JobSpec {
            name: name.to_string(),
            origin,
            pattern: Pattern::Read,
            skip: 0,
            rwmixread: 50,
            bs_read: 4096,
            bs_write: 4096,
            bsrange: [None, None],
            bssplit: [None, None],
            random_distribution: RandomDistribution::Uniform,
            percentage_random: 100,
            size: None,
            size_percent: None,
            io_size: None,
            offset: 0,
            offset_percent: None,
            loops: 1,
            number_ios: None,
            offset_increment: 0,
            offset_increment_percent: None,
            numjobs: 1,
            engine: Engine::Sync,
            iodepth: 1,
            iodepth_low: None,
            iodepth_batch_complete_min: 1,
            direct: false,
            thinktime: Duration::ZERO,
            thinktime_blocks: 1,
            runtime: None,
            time_based: false,
            ramp_time: Duration::ZERO,
            rate_iops: None,
            rate_iops_write: None,
            rate_bytes: [None, None],
            rate_poisson: false,
            strided: None,
            stonewall: false,
            exitall: false,
            fsync: 0,
            end_fsync: false,
            osync: false,
            percentile_list: None,
            startdelay: Duration::ZERO,
            randseed: None,
            headway_process: None,
            headway_barrier: 0,
            headway_vm: None,
            ioscheduler: None,
            write_iolog: None,
            filename: None,
            headway_weight: 1,
            prioclass: None,
            prio: None,
            headway_rate: None,
            headway_delay: None,
            headway_burst: None,
            headway_postmark: None,
            report: ReportSpec::default(),
        }
    }

    /// The block sizes direction `d` (0 read, 1 write) can issue, smallest and largest.
    pub fn bs_bounds(&self, d: usize) -> (u64, u64) {
        if let Some(split) = &self.bssplit[d] {
            let sizes = split.iter().map(|&(b, _)| b);
            return (sizes.clone().min().unwrap_or(512), sizes.max().unwrap_or(512));
        }
        match self.bsrange[d] {
            Some(r) => r,
            None => {
                let b = [self.bs_read, self.bs_write][d];
                (b, b)
            }
        }
    }

    /// The largest block size of either direction.
    pub fn bs_max(&self) -> u64 {
        self.bs_bounds(0).1.max(self.bs_bounds(1).1)
    }

    /// The job's QoS class: `None` when none of `headway_rate`, `headway_delay`,
    /// `headway_burst` is given (the scheduler's default class applies, and the report has
    /// no `qos` for the job); otherwise the given values, the default class's for the rest
    /// ([`headway_sched::qos::DEFAULT_QOS`]: 100 IOPS, 100 ms, burst 1).
    /// The job's I/O priority, when `prioclass` or `prio` is given (as fio applies them:
    /// see [`IoPrio::from_fio`]).
    pub fn ioprio(&self) -> Option<IoPrio> {
        if self.prioclass.is_none() && self.prio.is_none() {
            return None;
        }
        Some(IoPrio::from_fio(self.prioclass, self.prio).expect("checked when parsed"))
    }

    pub fn qos(&self) -> Option<Qos> {
        if self.headway_rate.is_none() && self.headway_delay.is_none() && self.headway_burst.is_none() {
            return None;
        }
        let d = headway_sched::qos::DEFAULT_QOS;
        Some(Qos {
            rate: self.headway_rate.unwrap_or(d.rate),
            delay: self.headway_delay.unwrap_or(d.delay),
            burst: self.headway_burst.unwrap_or(d.burst),
        })
    }
}

/// A parsed job file.
#[derive(Clone, Debug, PartialEq)]
pub struct JobFile {
    pub path: String,
    pub jobs: Vec<JobSpec>,
    /// The `[global]` sections' options as written (fio's `"global options"`).
    pub global_options: Vec<(String, String)>,
}

impl JobFile {
    /// The scheduler the jobs name with `ioscheduler=` (`None`: none does); an error names
    /// two jobs that disagree.
    pub fn ioscheduler(&self) -> Result<Option<&str>, String> {
        let mut named: Option<&JobSpec> = None;
        for j in self.jobs.iter().filter(|j| j.ioscheduler.is_some()) {
            match named {
                Some(first) if first.ioscheduler != j.ioscheduler => {
                    return Err(format!(
                        "{}: job `{}` sets ioscheduler={} but job `{}` (line {}) sets ioscheduler={}: \
                         one run has one scheduler",
                        self.path,
                        j.name,
                        j.ioscheduler.as_deref().unwrap_or_default(),
                        first.name,
                        first.origin.line,
                        first.ioscheduler.as_deref().unwrap_or_default()
                    ))
                }
                Some(_) => {}
                None => named = Some(j),
            }
        }
        Ok(named.and_then(|j| j.ioscheduler.as_deref()))
    }
}

//! fio job files: the workload format fio users already write.
//!
//! [`parse_file`] / [`parse_str`] turn a job file into a [`JobFile`]: one [`JobSpec`] per
//! job section, with the `[global]` sections above it applied, sizes in bytes and times in
//! nanoseconds. `numjobs` is recorded, not expanded.
//!
//! ```
//! use headway_sim::fio::{parse_str, Engine, Pattern};
//! let file = parse_str("
//! [global]
//! ioengine=psync
//! direct=1
//! bs=4k
//! size=1g
//! [par-read]
//! rw=read
//! numjobs=4
//! offset_increment=51g   ; 1 GiB file + 50 GiB gap
//! ", "par-read.fio").unwrap();
//! let job = &file.jobs[0];
//! assert_eq!(job.name, "par-read");
//! assert_eq!((job.pattern, job.engine), (Pattern::Read, Engine::Sync));
//! assert_eq!((job.size, job.offset_increment), (Some(1 << 30), 51 << 30));
//!
//! let err = parse_str("[j]\ncgroup_weight=100\n", "x.fio").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "x.fio:2: unknown option `cgroup_weight` (headway does not implement it)"
//! );
//! ```
//!
//! # Syntax (fio's ini format)
//!
//! - `[name]` starts a job; `[global]` sets defaults for the jobs *below* it. A later
//!   `[global]` updates those defaults (it does not reset them) for the jobs after it.
//! - `key=value` (spaces around `=` allowed), or a bare `key` for a flag (`time_based`,
//!   `stonewall`, `direct` — a bare flag means 1).
//! - Comments: a line starting with `;` or `#` (except `; @headway KEY=VALUE`, below), and
//!   the rest of a line after ` ;` or ` #`
//!   (a `;`/`#` that follows whitespace). fio also cuts at a `;`/`#` inside a value; headway
//!   keeps it there, so `bs=4k;x` is an error instead of a silent `4k`.
//! - Not supported, and an error naming the line: `include FILE`, `$VAR` / `${VAR}` /
//!   `$pagesize` substitution, `(arithmetic)` values, percentages other than `size` and
//!   `offset`'s, time ranges (`startdelay=1-5`), options before the first section.
//!
//! # Values
//!
//! - Sizes: `512`, `4k`, `4KB`, `1m`, `1g`, `1t`, `1p` (case-insensitive, optional `b`),
//!   `0x1000`. `k` is 1024 under fio's default `kb_base=1024` and 1000 under `kb_base=1000`.
//!   `KiB`/`MiB`/... are 1024-based under `kb_base=1000`; under the default `kb_base=1024` fio
//!   reads them as powers of *1000* (its "compatibility mode", so `1GiB` is 10⁹ bytes) — a
//!   trap that headway refuses with a hint rather than guessing either way. `kb_base` applies
//!   to its whole section wherever it is written (fio parses it first) and is inherited from
//!   `[global]`.
//! - Times: a whole number with `ns`, `us`/`usec`, `ms`/`msec`, `s`/`sec`, `m`/`min`, `h` or
//!   `d`; a bare number is in the option's unit (`thinktime`: µs; `runtime`, `startdelay`: s).
//! - Garbage is an error, never truncated: fio reads `4q` as 4 and `0.5s` as 0; headway
//!   rejects both. Counts (`numjobs`, `iodepth`, ...) take no suffix.
//!
//! # Options
//!
//! Implemented (details, units and defaults in [`OPTIONS`]):
//! `kb_base`; `rw`/`readwrite` (read, write, randread, randwrite, rw/readwrite, randrw;
//! `:SIZE` gap suffix on sequential patterns); `rwmixread`, `rwmixwrite`;
//! `random_distribution` (random, zipf:θ, pareto:h, normal:dev; see
//! [`RandomDistribution`]); `percentage_random`; `bs`/`blocksize` (`R,W`; > 0, multiple of
//! 512); `bsrange`/`blocksize_range`; `bssplit`; `size` (bytes or `N%` of the device);
//! `io_size`/`io_limit`; `loops`; `number_ios`; `offset` (bytes or `N%`);
//! `offset_increment` (bytes or `N%`); `numjobs`; `ioengine` (psync, sync, pvsync, pvsync2, vsync →
//! [`Engine::Sync`]; libaio, io_uring, posixaio → [`Engine::Async`]); `iodepth` (1 in effect
//! for a sync engine, as in fio); `iodepth_low`, `iodepth_batch_complete_min`/
//! `iodepth_batch_complete` (when to refill a full queue); `direct`, `buffered`; `thinktime`, `thinktime_blocks`;
//! `rate_iops` (`N` or `R,W`, per direction as in fio); `rate` (bytes per second, the same);
//! `rate_process` (linear, poisson); `runtime` (0 = none), `time_based`
//! (needs `runtime`), `ramp_time`, `startdelay`; `stonewall`/`wait_for_previous`; `exitall`; `percentile_list`;
//! `fsync`/`fdatasync`, `end_fsync` (write back the job's page cache and flush the drives'
//! caches), `sync` (O_SYNC writes: the same within each write's latency); `randseed`;
//! `zonemode` (none, strided; strided is implied by `zonesize` alone, as in fio), `zonesize`,
//! `zonerange` (default `zonesize`), `zoneskip`; `name` (job sections only);
//! `group_reporting`, `new_group`, `bw_avg_time`, `iops_avg_time` (fio's output formats);
//! `write_bw_log`, `write_lat_log`, `write_iops_log`, `write_hist_log`, `log_avg_msec`,
//! `log_hist_msec`, `per_job_logs`, `log_offset`, `log_max_value` (fio's logs, written as
//! fio writes them: [`crate::fio_out`]); `write_iolog`.
//!
//! headway's own options, for what fio cannot say: `headway_process`, `headway_barrier`,
//! `headway_vm`, `headway_weight` (who issues the requests), `headway_rate`,
//! `headway_delay`, `headway_burst` (the job's QoS class, for `pclock` and `htbs`), and
//! `headway_workload=postmark`
//! with `headway_pm_files`, `headway_pm_size_min`, `headway_pm_size_max`,
//! `headway_pm_transactions`, `headway_pm_read_bias`, `headway_pm_create_bias`,
//! `headway_pm_block`, `headway_pm_create_phase` (PostMark on a file pool in the job's region
//! instead of the `rw` walk; see [`crate::postmark`]).
//!
//! Accepted, value checked, but without effect in a simulation:
//!
//! | option | why it changes nothing |
//! |---|---|
//! | `description` | free text that fio only prints |
//! | `filename` | the simulated disk is the target; offsets are device offsets (`a:b` refused) |
//! | `thread` | a job is a simulated issuer either way; `--context` says what the scheduler sees |
//! | `invalidate` | every simulation starts with a cold cache |
//! | `randrepeat` | simulations are always repeatable: seeds come from `--seed` and `randseed` |
//! | `gtod_reduce` | simulated time costs nothing to read; latencies are always reported |
//! | `clocksource` | the simulator has one exact clock |
//! | `fallocate` | no files are laid out on the simulated disk |
//! | `unit_base` | results are JSON in bytes |
//! | `norandommap` | headway draws random offsets with replacement either way (fio's random map is not modelled) |
//! | `random_generator` | offsets come from headway's own seeded generator |
//! | `thinktime_spin` | spinning or sleeping, the think time is the same simulated time |
//! | `cpus_allowed`, `cpumask`, `cpus_allowed_policy` | simulated issuers run on no CPU |
//! | `allow_mounted_write` | nothing is written to a real device |
//! | `overwrite`, `create_on_open` | no files are laid out on the simulated disk |
//! | `refill_buffers`, `scramble_buffers`, `zero_buffers`, `buffer_compress_percentage` | what the data is does not matter to a disk model |
//! | `disable_lat`, `disable_clat`, `disable_slat`, `disable_bw_measurement` | simulated measurements cost nothing; they are always reported |
//! | `iodepth_batch_submit`, `iodepth_batch`, `iodepth_batch_complete_max` | requests prepared at one simulated instant are submitted at that instant either way |
//!
//! Every other option is an error naming the option, file and line — headway never ignores
//! an option it does not implement, since the run would then not be the workload the file
//! describes. `ioscheduler=NAME` names the scheduler to run when the command line gives no
//! `--scheduler` (every job that sets it must name the same one).
//!
//! # headway's own options, in a file fio accepts
//!
//! headway's extensions (`headway_process`, `headway_weight`, `headway_workload`, ...) are
//! not fio's, and fio refuses a file that sets them. Written as a comment, `; @headway
//! KEY=VALUE` (or `# @headway ...`; `KEY` with or without its `headway_` prefix), they are
//! read by headway as the option and skipped by fio as a comment: `; @headway weight=2` is
//! `headway_weight=2`. The files in `experiments/` are written so and pass `fio
//! --parse-only`.
//!
//! # Adding an option
//!
//! One entry in [`OPTIONS`] (names, doc, setter), a field in [`JobSpec`] if it needs one,
//! and a test in the same place in `options/tests.rs`.

mod error;
mod options;
mod parse;
pub mod spec;
pub mod units;

pub use error::JobFileError;
pub use options::{FioOption, OPTIONS};
pub use parse::{parse_args, parse_file, parse_str, ARGS_LABEL};
pub use spec::*;

//! The run flags `simulate`, `replay` and `bench` share — one clap argument group that makes
//! one [`RunSpec`]: the drive (`--disk`, its queue and write cache), an array of them, the
//! schedulers, what they learn about issuers (`--context`), tunables (`--set`) and the seed.
//! (A sweep's run specs come from its file's grid: `headway_sim::sweep`.)

use std::sync::Arc;

use anyhow::{Context, Result};

use headway_disk::array::ArraySpec;
use headway_disk::{DriveConfig, DriveScheduler, WriteCache, MAX_QUEUE_DEPTH};
use headway_sched::Settings;
use headway_sim::trace::disksim::Routing;
use headway_sim::{ContextMode, RunSpec};

/// The run flags ([module docs](self)).
#[derive(clap::Args)]
pub struct RunArgs {
    /// Drive model (see `headway disks`), or a DiskSim .parv/.diskspecs file
    #[arg(long, default_value = headway_disk::DEFAULT)]
    pub disk: String,
    /// Scheduler(s), comma-separated [default: noop,deadline,stream]
    ///
    /// See `headway schedulers`. A job file's `ioscheduler=` replaces the default.
    #[arg(long, value_delimiter = ',')]
    pub scheduler: Vec<String>,
    /// What the scheduler learns about who issued a request: process | thread | none | vm |
    /// pool:N (a trace's context — pid, file, volume — is its process and thread; vm needs
    /// a job file)
    #[arg(long, default_value = "process")]
    pub context: String,
    /// Override a tunable, Linux-style: --set read_expire=500ms (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Seed of the simulator's random numbers
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub drive: DriveArgs,
    /// A disk array of N `--disk` drives, each with its own scheduler instance (`stream`
    /// coordinates them; `stream-local` does not): raid0:N:STRIPE, raid4:N:STRIPE,
    /// raid5:N:STRIPE (left-symmetric), raid10:N:STRIPE[:COPIES][:read=POLICY] or
    /// raid1:N[:read=POLICY], e.g. raid0:5:64k
    #[arg(long, value_name = "LEVEL:N:STRIPE")]
    pub array: Option<String>,
    /// Array requests the array's front end admits at once (a RAID card's queue);
    /// more wait in FIFO order
    #[arg(long, default_value_t = headway_sim::DEFAULT_ARRAY_QUEUE_DEPTH, requires = "array")]
    pub array_queue_depth: u32,
}

impl RunArgs {
    /// The run spec of a job-file run.
    /// The run of `headway compare`: `disk`, `context`, settings `set`, a drive queueing
    /// `queue_depth` commands (SPTF, write-through), no array.
    pub fn for_compare(disk: &str, context: &str, set: Vec<String>, queue_depth: u32) -> RunArgs {
        RunArgs {
            disk: disk.to_string(),
            scheduler: Vec::new(),
            context: context.to_string(),
            set,
            seed: 1,
            drive: DriveArgs {
                queue_depth: queue_depth.to_string(),
                drive_scheduler: "sptf".into(),
                write_cache: "through".into(),
            },
            array: None,
            array_queue_depth: headway_sim::DEFAULT_ARRAY_QUEUE_DEPTH,
        }
    }

    pub fn spec(&self) -> Result<RunSpec> {
        let context: ContextMode = self.context.parse().map_err(|e| anyhow::anyhow!("--context: {e}"))?;
        self.spec_with(context)
    }

    /// The run spec of a trace replay (`--context vm` refused: a trace has no VMs).
    pub fn trace_spec(&self) -> Result<RunSpec> {
        self.spec_with(self.trace_context()?)
    }

    /// `--context` for a trace (no `vm`).
    fn trace_context(&self) -> Result<ContextMode> {
        ContextMode::for_trace(&self.context).map_err(|e| anyhow::anyhow!("--context: {e}"))
    }

    /// The run spec of a DiskSim trace's replay: on a DiskSim parameter file, its device or
    /// devices and the routing of the trace's requests to them
    /// ([`headway_sim::trace::disksim::on_parameter_file`]); else as [`RunArgs::trace_spec`].
    pub fn disksim_trace_spec(&self) -> Result<(RunSpec, Option<Arc<Routing>>)> {
        let Some(sys) = headway_sim::trace::disksim::on_parameter_file(&self.disk)? else {
            return Ok((self.trace_spec()?, None));
        };
        if self.array.is_some() && !sys.devices.is_empty() {
            anyhow::bail!(
                "--disk {} has several devices, and a DiskSim trace replays on all of them: leave out --array, \
                 or name one device as FILE#NAME",
                self.disk
            );
        }
        let array = self.array_with(sys.array)?;
        let mut run = self.build(self.trace_context()?, sys.disk, array)?;
        run.devices = sys.devices;
        run.take_driver_queue(&sys.driver_queue);
        Ok((run, sys.routing))
    }

    fn spec_with(&self, context: ContextMode) -> Result<RunSpec> {
        // `--disk FILE#ORG` naming a DiskSim logorg brings its array with it
        let (disk, array) = headway_disk::resolve_system(&self.disk)?;
        let array = self.array_with(array)?;
        self.build(context, disk, array)
    }

    /// The array of the run: the one `--disk` brings (a DiskSim logorg), or `--array`'s.
    fn array_with(&self, from_disk: Option<ArraySpec>) -> Result<Option<ArraySpec>> {
        match (from_disk, &self.array) {
            (Some(_), Some(_)) => anyhow::bail!(
                "--disk {} names a DiskSim array (disksim_logorg): leave out --array",
                self.disk
            ),
            (Some(array), None) => Ok(Some(array)),
            (None, a) => a.as_deref().map(|a| a.parse::<ArraySpec>().map_err(anyhow::Error::msg)).transpose(),
        }
    }

    fn build(
        &self,
        context: ContextMode,
        disk: headway_disk::DiskSpec,
        array: Option<ArraySpec>,
    ) -> Result<RunSpec> {
        Ok(RunSpec {
            disk,
            schedulers: if self.scheduler.is_empty() {
                DEFAULT_SCHEDULERS.iter().map(|s| s.to_string()).collect()
            } else {
                self.scheduler.clone()
            },
            context,
            settings: parse_settings(&self.set)?,
            seed: self.seed,
            drive: self.drive.config()?,
            array,
            array_queue_depth: self.array_queue_depth,
            devices: Vec::new(),
        })
    }
}

/// The schedulers run when neither `--scheduler` nor the job file (`ioscheduler=`) names one.
pub const DEFAULT_SCHEDULERS: [&str; 3] = ["noop", "deadline", "stream"];

/// The drive's command queue and write cache (seeds/002 Sections 6.1 and 6.2).
#[derive(clap::Args)]
pub struct DriveArgs {
    /// Commands the drive queues, 1-64 (SATA NCQ: 32, SCSI TCQ: 64); 1 = no queueing
    #[arg(long, value_name = "N", default_value = "1")]
    queue_depth: String,
    /// How the drive orders its queue: fcfs | sptf (shortest positioning time first)
    #[arg(long, value_name = "fcfs|sptf", default_value = "sptf")]
    drive_scheduler: String,
    /// When the drive reports a write done: through (on the media) | back (in its cache)
    #[arg(long, value_name = "back|through", default_value = "through")]
    write_cache: String,
}

impl DriveArgs {
    pub fn config(&self) -> Result<DriveConfig> {
        let q = &self.queue_depth;
        let queue_depth =
            q.parse::<u32>().ok().filter(|d| (1..=MAX_QUEUE_DEPTH).contains(d)).with_context(|| {
                format!("--queue-depth `{q}`: expected a number from 1 to {MAX_QUEUE_DEPTH}")
            })?;
        let scheduler: DriveScheduler =
            self.drive_scheduler.parse().map_err(|e| anyhow::anyhow!("--drive-scheduler: {e}"))?;
        let write_cache: WriteCache =
            self.write_cache.parse().map_err(|e| anyhow::anyhow!("--write-cache: {e}"))?;
        Ok(DriveConfig { queue_depth, scheduler, write_cache, write_cache_sectors: None })
    }
}

/// `--set NAME=VALUE` flags, in order (each checked against the tunable table later).
pub fn parse_settings(set: &[String]) -> Result<Settings> {
    let mut settings = Settings::new();
    for kv in set {
        settings.push_kv(kv).with_context(|| format!("--set `{kv}`"))?;
    }
    Ok(settings)
}

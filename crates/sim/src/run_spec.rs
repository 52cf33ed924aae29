//! What every run is made of besides its workload: the drive (or an array of them) and its
//! command queue and write cache, the schedulers to compare, what they are told about who
//! issues a request, the tunables, the seed. One [`RunSpec`] is built wherever a run is
//! asked for — the command line (`simulate`, `replay`, `bench` share one argument group),
//! Python, a sweep file's grid point — and [`SimConfig`](crate::SimConfig) and
//! [`ReplayConfig`](crate::trace::ReplayConfig) add only their workload to it.

use headway_disk::array::ArraySpec;
use headway_disk::{DiskSpec, DriveConfig, Hdd};
use headway_sched::Settings;

use crate::engine::{ArrayConfig, DEFAULT_ARRAY_QUEUE_DEPTH};
use crate::workload::ContextMode;
use crate::SimError;

/// The schedulers a run compares when none are named: a work-conserving pair and stream
/// scheduling.
pub const DEFAULT_SCHEDULERS: &[&str] = &["noop", "deadline", "stream"];

/// Largest array front-end queue depth.
pub const MAX_ARRAY_QUEUE_DEPTH: u32 = 4096;

/// A run's machine and schedulers ([module docs](self)).
#[derive(Clone, Debug)]
pub struct RunSpec {
    pub disk: DiskSpec,
    pub schedulers: Vec<String>,
    pub context: ContextMode,
    pub settings: Settings,
    pub seed: u64,
    /// The drive's command queue and write cache (`DriveConfig::default()`: depth 1,
    /// write-through, as every result before command queueing; SPTF inside the drive
    /// when the depth allows a choice).
    pub drive: DriveConfig,
    /// A disk array of `disk`s (`--array raid0:5:64k`): the workload's addresses are the
    /// array's. `None`: one drive.
    pub array: Option<ArraySpec>,
    /// Array requests admitted at once by the array's front end
    /// ([`DEFAULT_ARRAY_QUEUE_DEPTH`]); unused without an array.
    pub array_queue_depth: u32,
    /// Devices the workload addresses each on its own, each a drive or an array of them (a
    /// DiskSim system whose synthetic generators name several disks or arrays). Empty: the
    /// one device `disk`, or its array.
    pub devices: Vec<Device>,
}

/// One device of a run of several ([`RunSpec::devices`]): a drive, or an array of drives of
/// its model.
#[derive(Clone, Debug)]
pub struct Device {
    pub disk: DiskSpec,
    pub array: Option<ArraySpec>,
}

impl Device {
    /// Sectors the workload addresses on it: the drive's, or the array's.
    pub fn capacity(&self) -> u64 {
        self.array.map_or(self.disk.capacity_sectors, |a| a.capacity(self.disk.capacity_sectors))
    }

    /// Drives it is made of.
    pub fn members(&self) -> usize {
        self.array.map_or(1, |a| a.members as usize)
    }
}

impl RunSpec {
    /// The defaults on `disk`: [`DEFAULT_SCHEDULERS`], `process` contexts, no settings,
    /// seed 1, a queue-depth-1 write-through drive, no array.
    pub fn new(disk: DiskSpec) -> Self {
        RunSpec {
            disk,
            schedulers: DEFAULT_SCHEDULERS.iter().map(|s| s.to_string()).collect(),
            context: ContextMode::Process,
            settings: Settings::new(),
            seed: 1,
            drive: DriveConfig::default(),
            array: None,
            array_queue_depth: DEFAULT_ARRAY_QUEUE_DEPTH,
            devices: Vec::new(),
        }
    }

    /// [`RunSpec::new`] comparing `schedulers`.
    pub fn with_schedulers<S: AsRef<str>>(mut self, schedulers: &[S]) -> Self {
        self.schedulers = schedulers.iter().map(|s| s.as_ref().to_string()).collect();
        self
    }

    /// The array as the engine takes it, its front-end depth checked.
    pub fn array_config(&self) -> Result<Option<ArrayConfig>, SimError> {
        match self.array {
            None => Ok(None),
            Some(spec) if (1..=MAX_ARRAY_QUEUE_DEPTH).contains(&self.array_queue_depth) => {
                Ok(Some(ArrayConfig { spec, queue_depth: self.array_queue_depth }))
            }
            Some(_) => Err(SimError::ArrayQueueDepth(self.array_queue_depth)),
        }
    }

    /// A run of the `disksim` scheduler (alone or inside another) on a DiskSim parameter file
    /// orders its queue by the file's driver queue: `file`'s settings
    /// ([`headway_disk::parv::driver_queue_settings`]), under the run's own.
    pub fn take_driver_queue(&mut self, file: &[(String, String)]) {
        if !self.schedulers.iter().any(|n| n.split(':').any(|part| part == "disksim")) {
            return;
        }
        let mut settings = Settings::new();
        for (k, v) in file {
            settings.set(k, v);
        }
        for (k, v) in self.settings.iter() {
            settings.set(k, v);
        }
        self.settings = settings;
    }

    /// Sectors of the device the workload addresses: the drive's, or the array's.
    pub fn capacity(&self) -> u64 {
        let member = Hdd::new(self.disk.clone()).capacity();
        self.array.map_or(member, |a| a.capacity(member))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_an_array_front_end_out_of_range() {
        let disk = headway_disk::builtin(headway_disk::DEFAULT).unwrap();
        let s = RunSpec::new(disk.clone());
        assert_eq!(s.schedulers, DEFAULT_SCHEDULERS);
        assert_eq!((s.context, s.seed, s.array_config().unwrap()), (ContextMode::Process, 1, None));
        let mut a = RunSpec::new(disk).with_schedulers(&["deadline"]);
        a.array = Some("raid0:4:64k".parse().unwrap());
        let member = Hdd::new(a.disk.clone()).capacity();
        assert!(a.capacity() > 3 * member && a.capacity() <= 4 * member, "four members' worth");
        a.array_queue_depth = 0;
        let e = a.array_config().unwrap_err().to_string();
        assert!(e.contains("queue depth 0"), "{e}");
    }
}

//! # headway-disk — hard-disk drive models
//!
//! A fast, deterministic model of a hard disk for headway's simulator and its emulated-disk
//! server backend. [`Hdd::access`] serves one request on an idle drive at a given simulated
//! time and says when it completes; the drive never reads a clock, draws no random numbers
//! and allocates nothing per access.
//!
//! ```
//! use headway_disk::{builtin, Hdd};
//! use headway_sched::{Dir, Time};
//! let mut disk = Hdd::new(builtin("wd5000aaks").unwrap());
//! let a = disk.access(Time(0), 1_000_000, 8, Dir::Read);   // a 4 KiB read: a miss
//! let b = disk.access(a.done, 1_000_008, 8, Dir::Read);    // its successor: read-ahead
//! assert!(!a.cache_hit && a.positioning.as_millis_f64() > 1.0);
//! assert!(b.done - a.done < a.done - Time(0));
//! ```
//!
//! ## The model, and where each piece comes from
//! | piece | module | source |
//! |---|---|---|
//! | zoned geometry, LBN -> cylinder/head/sector, track and cylinder skew | [`geometry`] | Ruemmler & Wilkes, "An introduction to disk drive modeling" (IEEE Computer 1994); DiskSim's `dm_layout_g1` without sparing |
//! | DiskSim's sparing and mapping schemes: spares, slips, defects, head order | [`layout`] | DiskSim 4.0's `dm_layout_g1` (every scheme it accepts) |
//! | seek curve: measured table or three-point formula | `seek.rs` | DiskSim "extracted" curves (Worthington et al., SIGMETRICS 1995); Lee & Katz (SIGMETRICS 1993) three-point curve |
//! | rotation from absolute time, media transfer per zone, head switch, write settle | [`hdd`] | Ruemmler & Wilkes; DiskSim `dm_mech_g1` |
//! | per-command overheads after read/write, bus transfer per sector | [`hdd`], [`spec`] | DiskSim's `disksim_disk` parameters |
//! | segmented cache with read-ahead, LRU, write-through | [`hdd`] | DiskSim's cache parameters, simplified (lazy read-ahead at the sustained rate) |
//! | command queue (depth 1-64) with the drive's FCFS or exact-SPTF scheduler; write-back cache with SPTF destaging and a bounded buffer | [`drive`] | IO-path paper (seeds/002 Sections 6.1, 6.2); Stream Scheduling (seeds/000 Section 3.2) |
//! | calibration by distance probes | [`calibrate`] | Stream Scheduling (seeds/000 Section 3.2) and its refs |
//! | shipped models | [`mod@builtin`] | data sheets, the papers, DiskSim 4.0 validation files; estimates documented per field |
//!
//! Example: `disk_bench` (what each model delivers and what a simulated access costs).
//! [`resolve()`] turns a drive's name (built-in, or a parameter file) into a [`DiskSpec`];
//! [`parv`] imports DiskSim 4.0 parameter files; `headway validate` replays DiskSim's
//! measured validation traces against them and scores the model with DiskSim's CDF demerit.
//!
//! [`Drive`] puts a command queue and a write cache in front of an [`Hdd`]: at depth 1 with
//! write-through it is exactly `Hdd::access`, one command after another.
//!
//! Not modelled yet (later issues): disk arrays; DiskSim's separate access to the replacement
//! of a remapped (defective) sector (where the defect moves the LBN is: see [`layout`]).

pub mod array;
pub mod builtin;
pub mod calibrate;
pub mod ctlr;
mod disksim_tables;
pub mod drive;
pub mod geometry;
pub mod hdd;
pub mod layout;
pub mod parv;
pub mod resolve;
pub(crate) mod seek;
mod serde_ns;
pub mod spec;

pub use builtin::{builtin, builtin_names, DEFAULT};
pub use calibrate::calibration_samples;
pub use drive::{
    Cmd, Completion, Drive, DriveConfig, DriveError, DriveScheduler, DriveStats, Full, WriteCache,
    MAX_QUEUE_DEPTH,
};
pub use geometry::{Geometry, Location};
pub use hdd::{Access, Arm, Estimate, Hdd};
pub use parv::{
    import as import_disksim, import_device as import_disksim_device, is_parameter_file, split_device,
    ImportError,
};
pub use resolve::{resolve, resolve_from, resolve_system, ResolveError};
pub use spec::{
    BusProtocol, BusSeat, CacheSpec, DiskSpec, ExtraWriteDisconnect, FastWrite, FixedService, Layout,
    Mapping, Overheads, QueueSpec, SeekModel, Sparing, SpecError, Zone, ZoneLayout,
};

/// The DiskSim 4.0 reference data the repository carries (`data/` at its root, DiskSim's
/// copyright notice beside it): `disksim-valid/` (the validation drives with their measured
/// traces) and `disksim-oracle/` (DiskSim's own per-request answers). A path fixed at build
/// time, for the project's tests and benchmarks; a test that needs the data asserts that
/// it is there.
#[doc(hidden)]
pub fn reference_data() -> std::path::PathBuf {
    std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data")).to_path_buf()
}

//! # headway-lab — real Linux guests on `headway serve`
//!
//! Every other result headway reports comes out of its own model. The lab puts a real
//! Linux kernel — its page cache, its file systems, its own I/O schedulers (none,
//! mq-deadline, bfq, kyber, and headway's `stream` elevator from `kernel/`) and real applications (fio, PostMark, dd) — on top of disks
//! that `headway serve` exports with its schedulers in front of the emulated drive model,
//! so both can be measured on the same modelled hardware.
//!
//! A run ([`run::run_spec`]) reads a [`spec::Spec`] (TOML), prepares the guest images
//! ([`image`]: a Debian kernel unpacked from its `.deb`, a busybox initramfs built on the
//! fly, a tools disk), and for each point of the spec's matrix (host scheduler x guest
//! scheduler x file system x repeat) starts one in-process NBD server per headway disk,
//! boots QEMU ([`qemu`]) with the point's `/init` ([`script`]), waits for it to power off,
//! and turns what the guest left on its results disk into fio-shaped results
//! ([`results`]). The servers record every request they receive (`trace.blkparse` per
//! disk), which `headway replay` reads back.
//!
//! Modules: [`spec`] (the TOML), [`cpio`] (initramfs archives), [`kmod`] (module
//! dependencies), [`image`], [`script`], [`fio_job`] (a job file made fit for real fio),
//! [`qemu`], [`results`], [`run`], [`model`] (what a figure asks of the simulator), [`served`] (the emulated drive's service times read back
//! from a server's trace, and their comparison with a simulator replay).

pub mod cpio;
pub mod figures;
pub mod fio_job;
pub mod image;
pub mod kmod;
pub mod model;
pub mod powercut;
pub mod qemu;
pub mod results;
pub mod run;
pub mod script;
pub mod served;
pub mod spec;

use std::path::{Path, PathBuf};

pub use run::{run_spec, LabOptions, LabReport};
pub use spec::{Spec, SpecError};

/// Why a lab run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("{}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{what}: {msg}")]
    Tool { what: String, msg: String },
    #[error("missing {what}")]
    Missing { what: String },
    #[error("guest kernel: {msg}")]
    Kernel { msg: String },
    #[error("{spec}: {key}: {msg}")]
    Unsupported { spec: PathBuf, key: String, msg: String },
    #[error("headway serve for {point}")]
    Serve {
        point: String,
        #[source]
        source: headway_nbd::ServeError,
    },
    /// The guest did not finish: why, and the console's last lines.
    #[error("{point}: {what}\n--- guest console (last lines, full log {}) ---\n{tail}", console.display())]
    Guest { point: String, what: String, console: PathBuf, tail: String },
    #[error("{point}: results: {msg}")]
    Results { point: String, msg: String },
    /// A signal asked the run to stop; the guest was killed and everything cleaned up.
    #[error("{point}: interrupted (the guest was killed, its servers stopped)")]
    Interrupted { point: String },
}

impl LabError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> LabError {
        LabError::Io { path: path.to_path_buf(), source }
    }
}

//! Host-side tunables: the page cache between the jobs and the scheduler, and the CPU the
//! jobs submit from. They share the `--set NAME=VALUE` table with the schedulers' knobs,
//! under Linux's names where Linux has one.

use headway_sched::params::{ParamError, Settings, TimeUnit, Tunable, Unit};
use headway_sched::Duration;

use crate::readahead::READ_AHEAD_KB;
use crate::writeback::WritebackParams;

pub const T_READ_AHEAD_KB: Tunable = Tunable {
    name: "read_ahead_kb",
    unit: Unit::Count { what: "KiB", min: 4, max: 1 << 20, default: 128 },
    doc: "largest readahead window for buffered (direct=0) readers (Linux read_ahead_kb)",
};
pub const T_READAHEAD_AFTER_IO: Tunable = Tunable {
    name: "readahead_after_io",
    unit: Unit::Flag { default: false },
    doc: "1: the next async readahead window goes out only once the page that triggers it has \
          arrived, leaving the quiet period seeds/000 §3.3 describes; 0: on touching it even in flight",
};
pub const T_DIRTY_BACKGROUND_BYTES: Tunable = Tunable {
    name: "dirty_background_bytes",
    unit: Unit::Count { what: "bytes", min: 4096, max: 1 << 50, default: 209715200 },
    doc: "a job's dirty data that starts writeback (10% of the paper's 2 GB machine)",
};
pub const T_DIRTY_BYTES: Tunable = Tunable {
    name: "dirty_bytes",
    unit: Unit::Count { what: "bytes", min: 4096, max: 1 << 50, default: 419430400 },
    doc: "dirty plus in-writeback data past which a buffered writer waits (20% of 2 GB)",
};
pub const T_DIRTY_EXPIRE: Tunable = Tunable {
    name: "dirty_expire",
    unit: Unit::Time { unit: TimeUnit::Ms, min: Duration::ZERO, default: Duration::from_millis(30000) },
    doc: "age at which dirty data is written back (Linux dirty_expire_centisecs 3000)",
};
pub const T_DIRTY_WRITEBACK: Tunable = Tunable {
    name: "dirty_writeback",
    unit: Unit::Time {
        unit: TimeUnit::Ms,
        min: Duration::from_millis(1),
        default: Duration::from_millis(5000),
    },
    doc: "period of the flusher's expiry check (Linux dirty_writeback_centisecs 500)",
};
pub const T_CPU_PER_REQUEST: Tunable = Tunable {
    name: "cpu_per_request",
    unit: Unit::Time { unit: TimeUnit::Us, min: Duration::ZERO, default: Duration::ZERO },
    doc: "CPU time the host spends on each job request before submitting it, on one CPU every job \
          shares (a guest's single vCPU, a busy client): submissions queue for it; 0: none",
};

pub const T_HOST_OVERHEAD: Tunable = Tunable {
    name: "host_overhead",
    unit: Unit::Time { unit: TimeUnit::Us, min: Duration::ZERO, default: crate::workload::HOST_OVERHEAD },
    doc: "time from a request's completion to its issuer's next request reaching the scheduler \
          (system call return, wake-up, submission; over a network block device, the client's \
          round trip), per issuer",
};

pub const TUNABLES: &[Tunable] = &[
    T_READ_AHEAD_KB,
    T_READAHEAD_AFTER_IO,
    T_DIRTY_BACKGROUND_BYTES,
    T_DIRTY_BYTES,
    T_DIRTY_EXPIRE,
    T_DIRTY_WRITEBACK,
    T_CPU_PER_REQUEST,
    T_HOST_OVERHEAD,
];

/// Page-cache settings of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct HostParams {
    pub read_ahead_kb: u64,
    /// `readahead_after_io`: see [`crate::readahead::Readahead::with_trigger_after_io`].
    pub readahead_after_io: bool,
    pub writeback: WritebackParams,
    /// `cpu_per_request`: see [`T_CPU_PER_REQUEST`] (zero: no CPU in the model).
    pub cpu_per_request: Duration,
    /// `host_overhead`: see [`T_HOST_OVERHEAD`].
    pub host_overhead: Duration,
}

impl Default for HostParams {
    fn default() -> Self {
        HostParams {
            read_ahead_kb: READ_AHEAD_KB,
            readahead_after_io: false,
            writeback: WritebackParams::default(),
            cpu_per_request: Duration::ZERO,
            host_overhead: crate::workload::HOST_OVERHEAD,
        }
    }
}

impl HostParams {
    pub fn from_settings(s: &mut Settings) -> Result<Self, ParamError> {
        let read_ahead_kb = s.count(&T_READ_AHEAD_KB)?;
        let readahead_after_io = s.flag(&T_READAHEAD_AFTER_IO)?;
        let background = s.count(&T_DIRTY_BACKGROUND_BYTES)?;
        let limit = s.count(&T_DIRTY_BYTES)?;
        if limit < background {
            return Err(ParamError::BadValue {
                name: T_DIRTY_BYTES.name.into(),
                value: limit.to_string(),
                why: format!("must be at least dirty_background_bytes ({background})"),
            });
        }
        Ok(HostParams {
            read_ahead_kb,
            readahead_after_io,
            writeback: WritebackParams {
                dirty_background_bytes: background,
                dirty_bytes: limit,
                dirty_expire: s.time(&T_DIRTY_EXPIRE)?,
                dirty_writeback_interval: s.time(&T_DIRTY_WRITEBACK)?,
                ..WritebackParams::default()
            },
            cpu_per_request: s.time(&T_CPU_PER_REQUEST)?,
            host_overhead: s.time(&T_HOST_OVERHEAD)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_modules() {
        assert_eq!(HostParams::from_settings(&mut Settings::new()).unwrap(), HostParams::default());
    }

    #[test]
    fn settings_apply_and_are_checked() {
        let mut s = Settings::new();
        s.push_kv("read_ahead_kb=512").unwrap();
        s.push_kv("dirty_expire=2s").unwrap();
        s.push_kv("cpu_per_request=150").unwrap();
        let p = HostParams::from_settings(&mut s).unwrap();
        assert_eq!(p.read_ahead_kb, 512);
        assert_eq!(p.cpu_per_request, headway_sched::Duration::from_micros(150), "microseconds by default");
        assert_eq!(p.writeback.dirty_expire, headway_sched::Duration::from_secs(2));
        let mut s = Settings::new();
        s.push_kv("dirty_bytes=8192").unwrap();
        let e = HostParams::from_settings(&mut s).unwrap_err().to_string();
        assert!(e.contains("dirty_bytes") && e.contains("dirty_background_bytes"), "{e}");
        let mut s = Settings::new();
        s.push_kv("dirty_writeback=0").unwrap();
        let e = HostParams::from_settings(&mut s).unwrap_err().to_string();
        assert!(e.contains("dirty_writeback") && e.contains("at least 1ms"), "an error, not a clamp: {e}");
    }
}

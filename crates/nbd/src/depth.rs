//! How many scheduled requests an export has at its backend at once when `--queue-depth`
//! is not given.
//!
//! Depth 1 lets the scheduler alone choose the order: what a waiting scheduler (stream,
//! anticipatory) needs to wait for a disk's next nearby request, and what a modelled drive
//! without command queueing is. But a `file` export is the page cache, where a request
//! takes microseconds of CPU and the occasional one blocks (a FUA write's sync, a read the
//! cache misses, a writer throttled on dirty pages): at depth 1 everyone's requests queue
//! behind it. One client flooding 64 KiB FUA writes at depth 32 took another client's
//! 4 KiB reads from 0.09 ms to 9-13 ms at p99 (IOPS 29k to 111). So a `file` export, and a
//! `direct` one, under a scheduler that does not wait, run requests concurrently:
//!
//! * `file` (and `direct` on a regular file): four per CPU, within 8 to 32 — the page
//!   cache's work is CPU work, and a few more keep CPUs busy while some block;
//! * `direct` on a block device: the device's own command queue (SCSI/SATA
//!   `device/queue_depth`, else the block layer's `queue/nr_requests`), within 1 to 32;
//! * a waiting scheduler, or `emulated:MODEL`: 1.

use crate::backend::BackendKind;

/// Deepest fitted queue.
pub const FITTED_MAX: u32 = 32;
/// Shallowest fitted queue for a page-cache export.
pub const FITTED_FILE_MIN: u32 = 8;

/// The depth to use when none is given, and why (said at start-up). `device_queue`: the
/// export's block device queue and which attribute gave it
/// ([`crate::backend::FileBackend::device_queue`]; `None` for a regular file).
pub fn fitted_queue_depth(
    backend: &BackendKind,
    waits: bool,
    device_queue: Option<(u32, &str)>,
) -> (u32, String) {
    if let BackendKind::Emulated(m) = backend {
        return (
            1,
            format!("emulated:{m} is a drive without command queueing unless --queue-depth gives one"),
        );
    }
    if waits {
        return (1, "a waiting scheduler decides the order alone at depth 1".into());
    }
    if let (BackendKind::Direct, Some((n, from))) = (backend, device_queue) {
        let d = n.clamp(1, FITTED_MAX);
        return (d, format!("the block device's {from} {n}, within 1-{FITTED_MAX}"));
    }
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get()) as u32;
    let d = (4 * cpus).clamp(FITTED_FILE_MIN, FITTED_MAX);
    (d, format!("four per CPU ({cpus}) within {FITTED_FILE_MIN}-{FITTED_MAX}: the page cache serves requests concurrently"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_and_models_keep_depth_one_and_files_go_concurrent() {
        assert_eq!(fitted_queue_depth(&BackendKind::File, true, None).0, 1);
        assert_eq!(fitted_queue_depth(&BackendKind::Emulated("wd5000aaks".into()), false, None).0, 1);
        let (d, why) = fitted_queue_depth(&BackendKind::File, false, None);
        assert!((FITTED_FILE_MIN..=FITTED_MAX).contains(&d), "{d}: {why}");
        // direct on a regular file: as a file; on a device: its queue, within the bounds
        assert_eq!(fitted_queue_depth(&BackendKind::Direct, false, None).0, d);
        assert_eq!(
            fitted_queue_depth(&BackendKind::Direct, false, Some((64, "queue/nr_requests"))).0,
            FITTED_MAX
        );
        assert_eq!(fitted_queue_depth(&BackendKind::Direct, false, Some((4, "device/queue_depth"))).0, 4);
    }
}

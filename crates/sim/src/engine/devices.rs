//! What a run's report says of its devices: per drive, the figures the block layer counts
//! as requests pass (flows in and out, seeks, cache hits, the time the scheduler kept a
//! drive idle or a full write cache stalled it, queue occupancy), made into
//! [`DeviceReport`]s, and an array's device section from its members'.

use headway_disk::Drive;
use headway_sched::{Dir, Time, SECTOR_BYTES};

use crate::report::{DeviceReport, Flow};

/// Requests and bytes per direction (read, write), for the in/out flow figures.
#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Counts {
    n: [u64; 2],
    bytes: [u64; 2],
}

impl Counts {
    #[inline]
    pub fn add(&mut self, dir: Dir, sectors: u32) {
        self.n[dir.index()] += 1;
        self.bytes[dir.index()] += sectors as u64 * SECTOR_BYTES;
    }

    pub fn merge(&mut self, other: &Counts) {
        for d in 0..2 {
            self.n[d] += other.n[d];
            self.bytes[d] += other.bytes[d];
        }
    }

    pub fn flow(&self) -> Flow {
        let mean = |b: u64, n: u64| if n == 0 { 0.0 } else { b as f64 / n as f64 };
        let (n, b) = (self.n[0] + self.n[1], self.bytes[0] + self.bytes[1]);
        Flow {
            count: n,
            mean_bytes: mean(b, n),
            reads: self.n[0],
            read_mean_bytes: mean(self.bytes[0], self.n[0]),
            writes: self.n[1],
            write_mean_bytes: mean(self.bytes[1], self.n[1]),
        }
    }
}

/// One drive's figures, counted by the block layer.
#[derive(Default)]
pub(super) struct Figures {
    /// Time the drive sat empty with requests in its scheduler and room for a command.
    pub idle_wait_ns: u64,
    /// Time commands spent in the drive, summed (ns): over the run's length, the
    /// time-averaged queue occupancy (Little's law; every command completes in the run).
    pub occupancy: u128,
    pub write_cache_full_ns: u64,
    pub flow_in: Counts,
    pub flow_out: Counts,
    pub seeks: u64,
    pub seek_dist: u128,
    pub dispatched: u64,
    pub hits: u64,
}

pub(super) fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

impl Figures {
    /// The device section of `drive` over a run of `runtime_ns` ending at `end`.
    pub fn report(&self, drive: &Drive, end: Time, runtime_ns: u64, dirty: u64) -> DeviceReport {
        let ds = *drive.stats();
        let busy_ns = drive.busy_time(end).0;
        let cfg = *drive.config();
        let seeks = self.seeks + ds.destage_seeks;
        let seek_dist = self.seek_dist + ds.destage_seek_sectors as u128;
        DeviceReport {
            utilization: ratio(busy_ns as f64, runtime_ns as f64),
            idle_wait_ns: self.idle_wait_ns,
            seek_count: seeks,
            mean_seek_distance_sectors: ratio(seek_dist as f64, seeks as f64),
            requests: self.dispatched,
            cache_hits: self.hits,
            queue_depth: cfg.queue_depth,
            drive_scheduler: cfg.scheduler.name().to_string(),
            write_cache: cfg.write_cache.name().to_string(),
            requests_in: self.flow_in.flow(),
            requests_out: self.flow_out.flow(),
            queue_occupancy: ratio(self.occupancy as f64, runtime_ns as f64),
            cache_hit_ratio: ratio(self.hits as f64, self.dispatched as f64),
            destages: ds.destages,
            destaged_bytes: ds.destaged_sectors * SECTOR_BYTES,
            write_cache_full_ns: self.write_cache_full_ns,
            page_cache_dirty_bytes: dirty,
        }
    }
}

/// The array's device section from its members' (see [`DeviceReport`] for which figures
/// are sums and which means): `requests_in` is what the jobs submitted to the array; the
/// caller adds the page cache's dirty bytes.
pub(super) fn aggregate<'f>(
    ms: &[DeviceReport],
    requests_in: &Counts,
    figures: impl Iterator<Item = &'f Figures>,
) -> DeviceReport {
    let n = ms.len() as f64;
    let sum = |f: fn(&DeviceReport) -> u64| ms.iter().map(f).sum::<u64>();
    let seeks = sum(|d| d.seek_count);
    let seek_dist: f64 = ms.iter().map(|d| d.mean_seek_distance_sectors * d.seek_count as f64).sum();
    let mut out = Counts::default();
    for f in figures {
        out.merge(&f.flow_out);
    }
    let (requests, hits) = (sum(|d| d.requests), sum(|d| d.cache_hits));
    DeviceReport {
        utilization: ms.iter().map(|d| d.utilization).sum::<f64>() / n,
        idle_wait_ns: sum(|d| d.idle_wait_ns),
        seek_count: seeks,
        mean_seek_distance_sectors: ratio(seek_dist, seeks as f64),
        requests,
        cache_hits: hits,
        queue_depth: ms[0].queue_depth,
        drive_scheduler: ms[0].drive_scheduler.clone(),
        write_cache: ms[0].write_cache.clone(),
        requests_in: requests_in.flow(),
        requests_out: out.flow(),
        queue_occupancy: ms.iter().map(|d| d.queue_occupancy).sum(),
        cache_hit_ratio: ratio(hits as f64, requests as f64),
        destages: sum(|d| d.destages),
        destaged_bytes: sum(|d| d.destaged_bytes),
        write_cache_full_ns: sum(|d| d.write_cache_full_ns),
        page_cache_dirty_bytes: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_count_requests_and_mean_sizes_per_direction() {
        let mut c = Counts::default();
        c.add(Dir::Read, 8);
        c.add(Dir::Read, 24);
        c.add(Dir::Write, 16);
        let f = c.flow();
        assert_eq!((f.count, f.reads, f.writes), (3, 2, 1));
        assert_eq!((f.read_mean_bytes, f.write_mean_bytes), (8192.0, 8192.0));
        assert_eq!(f.mean_bytes, 8192.0);
        assert_eq!(Counts::default().flow().mean_bytes, 0.0, "no division by zero");
    }
}

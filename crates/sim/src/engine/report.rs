//! The run's report: per job its bytes, latencies, drive time, QoS and syncs over its
//! measured stretch; the aggregate over the run's measured stretch; the block layer's
//! device, member and scheduler sections.

use headway_sched::hist::Histogram;
use headway_sched::Time;

use super::machine::Machine;
use crate::report::{Aggregate, Clat, DirReport, JobReport, RunReport, SyncReport};

impl Machine<'_> {
    pub(super) fn report(mut self) -> RunReport {
        let head_trace = self.block.take_head_trace();
        let last_complete = self.block.last_complete;
        let mut jobs = Vec::with_capacity(self.jobs.len());
        let mut all = Histogram::default();
        let mut total = 0;
        for (job, st) in self.jobs.iter().zip(&self.stats) {
            let (start, end) = (
                job.measured_from().unwrap_or(Time::ZERO),
                job.progress.finished_at.unwrap_or(last_complete),
            );
            let rt = end.0.saturating_sub(start.0);
            let list = job.percentiles.as_deref().unwrap_or(crate::report::PERCENTILES);
            all.merge(&st.clat[0]);
            all.merge(&st.clat[1]);
            total += st.bytes[0] + st.bytes[1];
            jobs.push(JobReport {
                jobname: job.name.clone(),
                groupid: job.group,
                job_runtime: rt / 1_000_000,
                disk_time_ns: st.disk_ns,
                read: DirReport::with_percentiles(st.bytes[0], &st.clat[0], rt, list),
                write: DirReport::with_percentiles(st.bytes[1], &st.clat[1], rt, list),
                qos: st.qos.as_ref().map(|q| q.report(rt)),
                sync: (st.sync_lat.count > 0).then(|| SyncReport {
                    total_ios: st.sync_lat.count,
                    lat_ns: Clat::with_percentiles(&st.sync_lat, list),
                    stddev: st.sync_lat.stddev_of_buckets(),
                }),
            });
        }
        // from the first measured moment (the first submission, or with `ramp_time` the
        // earliest end of a ramp)
        let first = match self.jobs.iter().filter_map(|j| j.measured_from()).min() {
            Some(t) if self.jobs.iter().any(|j| j.plan.ramp.0 > 0) => t,
            _ => self.first_submit.unwrap_or(Time::ZERO),
        };
        let runtime_ns = last_complete.0.saturating_sub(first.0);
        // the devices' figures cover the whole run, ramp included
        let run_ns = last_complete.0.saturating_sub(self.first_submit.unwrap_or(Time::ZERO).0);
        let secs = runtime_ns as f64 * 1e-9;
        let block = self.block.report(run_ns, self.cache.dirty_bytes());
        RunReport {
            scheduler: block.scheduler,
            disk: block.disk,
            array: block.array,
            context: self.context.to_string(),
            seed: self.seed,
            jobs,
            aggregate: Aggregate {
                io_bytes: total,
                bw_bytes: if runtime_ns == 0 {
                    0
                } else {
                    (total as u128 * 1_000_000_000 / runtime_ns as u128) as u64
                },
                iops: if runtime_ns == 0 { 0.0 } else { all.count as f64 / secs },
                runtime_ns,
                clat_ns: Clat::from_hist(&all),
            },
            device: block.device,
            scheduler_stats: block.scheduler_stats,
            members: block.members,
            controller_cache: block.controller_cache,
            head_trace,
        }
    }
}

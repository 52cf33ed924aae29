//! The simulator as the lab's figures see it ([`headway_lab::model::Model`]): a job file
//! run once under one scheduler, each job clone's bytes, requests and drive time.

use headway_disk::{DriveConfig, DriveScheduler};
use headway_lab::model::{Model, ModelJob, ModelQuery, ModelRun};
use headway_sched::Settings;
use headway_sim::{fio, simulate_logged, RunSpec, SimConfig};

/// `headway simulate`, in process.
#[derive(Debug, Default)]
pub struct SimModel;

impl Model for SimModel {
    fn fio(&self, job: &str, q: &ModelQuery) -> Result<ModelRun, String> {
        let jobfile = fio::parse_str(job, "model.fio").map_err(|e| e.to_string())?;
        let disk = headway_disk::resolve(&q.disk).map_err(|e| format!("{e:#}"))?;
        let mut settings = Settings::new();
        for (k, v) in &q.tunables {
            settings.push_kv(&format!("{k}={v}")).map_err(|e| e.to_string())?;
        }
        let drive = DriveConfig {
            queue_depth: q.queue_depth,
            scheduler: if q.fcfs { DriveScheduler::Fcfs } else { DriveScheduler::Sptf },
            ..DriveConfig::default()
        };
        let mut run = RunSpec { settings, drive, ..RunSpec::new(disk).with_schedulers(&[&q.scheduler]) };
        if let Some(c) = &q.context {
            run.context = c.parse().map_err(|e| format!("context {c}: {e}"))?;
        }
        let cfg = SimConfig { jobfile, run };
        let mut first: Vec<u64> = Vec::new();
        let report = simulate_logged(
            &cfg,
            |_, _| {},
            |_, r| {
                let i = r.job_index as usize;
                if first.len() <= i {
                    first.resize(i + 1, u64::MAX);
                }
                first[i] = first[i].min(r.offset);
            },
        )
        .map_err(|e| e.to_string())?;
        let r = report.runs.first().ok_or("the simulation produced no run")?;
        let jobs: Vec<ModelJob> = r
            .jobs
            .iter()
            .enumerate()
            .map(|(i, j)| ModelJob {
                name: j.jobname.clone(),
                io_bytes: j.read.io_bytes + j.write.io_bytes,
                ios: j.read.total_ios + j.write.total_ios,
                disk_time_ns: j.disk_time_ns,
                first_byte: first.get(i).copied().filter(|&b| b != u64::MAX).unwrap_or(0),
                clat_p99_ns: {
                    let d = if j.read.total_ios > 0 { &j.read } else { &j.write };
                    d.clat_ns.percentile.get("99.000000").copied().unwrap_or(0)
                },
            })
            .collect();
        let d = &r.device;
        let mean_service_ns = if d.requests > 0 {
            d.utilization * r.aggregate.runtime_ns as f64 / d.requests as f64
        } else {
            0.0
        };
        // fio's group figure, as the guests' are: every job's bytes over the longest job's
        // runtime (the aggregate's stretch ends at the drive's last completion, before the
        // last page-cache write of a writer whose data stays dirty)
        let longest_ms = r.jobs.iter().map(|j| j.job_runtime).max().unwrap_or(0);
        let bytes: u64 = jobs.iter().map(|j| j.io_bytes).sum();
        let bw_bytes = if longest_ms > 0 { bytes as f64 * 1e3 / longest_ms as f64 } else { 0.0 };
        Ok(ModelRun { bw_bytes, jobs, mean_service_ns })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_file_runs_in_the_model_with_each_clone_where_it_reads() {
        let job = "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=8m\n[r]\nnumjobs=2\noffset_increment=10g\n";
        let q = ModelQuery {
            disk: "wd5000aaks".into(),
            scheduler: "bfq".into(),
            tunables: vec![("slice_idle".into(), "4".into())],
            queue_depth: 32,
            fcfs: true,
            context: None,
        };
        let r = SimModel.fio(job, &q).unwrap();
        assert_eq!(r.jobs.len(), 2);
        assert_eq!(r.jobs.iter().map(|j| j.first_byte).collect::<Vec<_>>(), vec![0, 10 << 30]);
        assert!(r.jobs.iter().all(|j| j.io_bytes == 8 << 20 && j.ios == 2048 && j.disk_time_ns > 0));
        // a 4 KiB read costs at least its transfer, and a random one far less than a second
        assert!(r.jobs.iter().all(|j| j.clat_p99_ns > 10_000 && j.clat_p99_ns < 1_000_000_000), "{r:?}");
        assert!(r.bw_bytes > 0.0);
        // a 4 KiB command takes at least its transfer off the media (about 40 us at 100 MB/s) and
        // at most a full-stroke seek and a revolution (under 30 ms on this drive)
        assert!(r.mean_service_ns > 40e3 && r.mean_service_ns < 30e6, "{}", r.mean_service_ns);
        let bad = ModelQuery { tunables: vec![("nope".into(), "1".into())], ..q.clone() };
        assert!(SimModel.fio(job, &bad).is_err());
        assert!(
            SimModel.fio("[r]\nrw=wat\n", &q).unwrap_err().contains("rw"),
            "the parse error says which option"
        );
    }
}

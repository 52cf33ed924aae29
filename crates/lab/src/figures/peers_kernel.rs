//! `peers-kernel` — not a paper figure: headway's models of Linux's schedulers (`bfq`,
//! `mq-deadline`, `kyber`) against Linux 6.1's own, on the same job files and the same
//! drive model (issue 19's last check).
//!
//! Each workload runs twice per scheduler: in a real guest (`fs = "raw"`, the scheduler in
//! the guest, `noop` on the server in front of the emulated wd5000aaks) and in the
//! simulator (the same job file and tunables, headway's scheduler of that name). The
//! guest's virtio disk takes 32 requests while the server's noop hands the drive one at a
//! time in arrival order, so the model's drive is set the same way: 32 commands, served
//! first come first served.
//!
//! What the guest spends outside the drive per request — its one vCPU under QEMU's TCG,
//! virtio, NBD, the emulated drive's timer slack — the model does not see. It is measured
//! once, with nothing in the way: a lone sequential reader (`experiments/lab/lone-reader.fio`,
//! guest scheduler `none`, model `noop`); the difference of the two per-request cycles
//! becomes the model's `cpu_per_request` for every other run — one CPU the jobs share, as
//! the guest's processes share its vCPU. It is a property of the guest and the emulator,
//! not of a scheduler, so no scheduler's result is fitted.
//!
//! Checked per workload and scheduler, two-sided: the model's throughput within 15% of the
//! kernel's, and each job's share of the drive's time within 10 points of the kernel's.
//! The kernel's drive time per job is the server's: each request in the workload's window,
//! dispatch to completion, given to the job whose region (its lowest offset, as the model
//! read it) holds the request's sector.

use std::collections::BTreeMap;

use super::{check_rows, run_written, Check, FigureData, LabFigure, Scale};
use crate::model::{Model, ModelQuery, ModelRun};
use crate::results::LabRun;
use crate::run::LabOptions;
use crate::served::Request;
use crate::LabError;

pub(super) const FIGURE: LabFigure = LabFigure {
    id: "peers-kernel",
    source: "headway lab: Linux 6.1's bfq, mq-deadline and kyber against headway's models of them",
    title: "par-read, alternate-block readers and weighted readers: the kernel's schedulers and headway's, throughput and drive-time shares",
    run: |s, o, l| Ok(vec![peers_kernel(s, o, l)?]),
};

/// The schedulers compared: Linux's names, which are headway's too.
pub const GUESTS: [&str; 3] = ["bfq", "mq-deadline", "kyber"];

/// The model's drive: the guest's virtio queue in front of a one-command drive, in order.
const MODEL_QUEUE_DEPTH: u32 = 32;

/// Throughput band (model / kernel) and drive-time share band (points).
pub const THROUGHPUT_BAND: (f64, f64) = (0.85, 1.15);
pub const SHARE_POINTS: f64 = 0.10;

/// A workload of the figure.
struct Workload {
    name: &'static str,
    job: &'static str,
    guests: &'static [&'static str],
    tunables: &'static [(&'static str, &'static str)],
}

const WORKLOADS: [Workload; 6] = [
    Workload {
        name: "par-read",
        job: include_str!("../../../../experiments/lab/par-read-raw.fio"),
        guests: &GUESTS,
        tunables: &[],
    },
    Workload {
        name: "alternate",
        job: include_str!("../../../../experiments/lab/alternate-timed.fio"),
        guests: &GUESTS,
        tunables: &[],
    },
    // BFQ without weight raising: with it (the row above) the two new readers are raised,
    // stably merged 600 ms on and never split, so one shared queue alternates between them;
    // without it idling boosts their throughput, the merge is dropped and each is idled for
    Workload {
        name: "alternate-no-raising",
        job: include_str!("../../../../experiments/lab/alternate-timed.fio"),
        guests: &["bfq"],
        tunables: &[("low_latency", "0")],
    },
    Workload {
        name: "weights-random",
        job: include_str!("../../../../experiments/bfq-weights-random.fio"),
        guests: &GUESTS,
        tunables: &[],
    },
    Workload {
        name: "weights-seq",
        job: include_str!("../../../../experiments/bfq-weights-seq.fio"),
        guests: &GUESTS,
        tunables: &[],
    },
    Workload {
        name: "weights-random-strict",
        job: include_str!("../../../../experiments/bfq-weights-random.fio"),
        guests: &["bfq"],
        tunables: &[("strict_guarantees", "1")],
    },
];

pub(super) const LONE_READER: &str = include_str!("../../../../experiments/lab/lone-reader.fio");
/// Boots of the lone reader; its median cost is taken.
pub(super) const LONE_REPEATS: u32 = 3;

/// `job` with `runtime=` shortened for a quick look.
fn scaled(job: &str, scale: Scale) -> String {
    match scale {
        Scale::Full => job.to_string(),
        Scale::Quick => job.replace("runtime=20s", "runtime=8s").replace("runtime=10s", "runtime=5s"),
    }
}

/// Nanoseconds per request of a job: its runtime over its requests.
fn cycle_ns(runtime_ns: f64, ios: u64) -> Option<f64> {
    (ios > 0 && runtime_ns > 0.0).then(|| runtime_ns / ios as f64)
}

/// What a request costs the guest outside the model: the lone reader's cycle in the guest
/// less its cycle in the model (never below zero).
pub fn overhead_ns(guest: &LabRun, model: &ModelRun) -> Result<u64, String> {
    let g = guest.jobs.first().ok_or("the lone reader's guest run has no job")?;
    let guest_cycle = cycle_ns(g.read.runtime as f64 * 1e6, g.read.total_ios)
        .ok_or("the lone reader read nothing in the guest")?;
    let m = model.jobs.first().ok_or("the lone reader's model run has no job")?;
    let model_cycle = cycle_ns(m.io_bytes as f64 / model.bw_bytes * 1e9, m.ios)
        .filter(|c| c.is_finite())
        .ok_or("the lone reader read nothing in the model")?;
    Ok((guest_cycle - model_cycle).max(0.0) as u64)
}

/// Each job's share of the server's drive time (every request in the workload's window
/// goes to the job with the highest `first_byte` at or below its offset), and the mean
/// drive time of those requests, ns.
pub fn kernel_drive(run: &LabRun, first_bytes: &[u64]) -> (Vec<f64>, f64) {
    let mut time = vec![0u64; first_bytes.len()];
    let mut n = 0u64;
    for srv in &run.server {
        let w = &srv.workload;
        let window = w.marked.then_some(((w.from_s * 1e9) as u64, (w.to_s * 1e9) as u64));
        let (per_job, count) = drive_time_by_job(&srv.served.requests, window, first_bytes);
        for (t, job) in time.iter_mut().zip(per_job) {
            *t += job;
        }
        n += count;
    }
    let total: u64 = time.iter().sum();
    (shares(&time), if n > 0 { total as f64 / n as f64 } else { f64::NAN })
}

/// The drive time (dispatch to completion) of `requests` arriving within `window` (ns),
/// per job, each request given to the job with the highest `first_byte` at or below it;
/// and how many requests were given.
pub fn drive_time_by_job(
    requests: &[Request],
    window: Option<(u64, u64)>,
    first_bytes: &[u64],
) -> (Vec<u64>, u64) {
    let mut order: Vec<(u64, usize)> = first_bytes.iter().copied().zip(0..).collect();
    order.sort_unstable();
    let mut time = vec![0u64; first_bytes.len()];
    let mut n = 0;
    for r in requests {
        if window.is_some_and(|(from, to)| r.arrival_ns < from || r.arrival_ns > to) {
            continue;
        }
        let byte = r.sector * 512;
        let Some(&(_, job)) = order.iter().rev().find(|(b, _)| *b <= byte) else { continue };
        time[job] += r.complete_ns.saturating_sub(r.dispatch_ns);
        n += 1;
    }
    (time, n)
}

fn shares(time: &[u64]) -> Vec<f64> {
    let total: u64 = time.iter().sum();
    time.iter().map(|&t| if total > 0 { t as f64 / total as f64 } else { 0.0 }).collect()
}

/// One workload under one scheduler, both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    pub workload: String,
    pub scheduler: String,
    pub kernel_bw: f64,
    pub model_bw: f64,
    pub kernel_shares: Vec<f64>,
    pub model_shares: Vec<f64>,
    /// Mean drive time per request, ns (not checked: what tells a drive-cache difference).
    pub kernel_drive_ns: f64,
    pub model_drive_ns: f64,
}

/// The two-sided checks of a pair: throughput within the band, and (with more than one
/// job) every job's drive-time share within the points.
pub fn judge(p: &Pair) -> Vec<Check> {
    let what = format!("{} under {}", p.workload, p.scheduler);
    let ratio = if p.kernel_bw > 0.0 { p.model_bw / p.kernel_bw } else { f64::NAN };
    let (lo, hi) = THROUGHPUT_BAND;
    let held = ratio.is_finite() && (lo..=hi).contains(&ratio);
    let mut checks = vec![Check::new(
        format!("{what}: throughput, headway / kernel"),
        format!(
            "{:.2} / {:.2} MB/s = {ratio:.2}x; drive time per request {:.3} / {:.3} ms{}",
            p.model_bw / 1e6,
            p.kernel_bw / 1e6,
            p.model_drive_ns / 1e6,
            p.kernel_drive_ns / 1e6,
            if held { String::new() } else { format!(" — {}", mechanism(p)) }
        ),
        format!("the kernel's, band {lo}-{hi}x"),
        held,
    )];
    if p.kernel_shares.len() > 1 {
        let gap = if p.kernel_shares.len() == p.model_shares.len() {
            p.kernel_shares.iter().zip(&p.model_shares).map(|(k, m)| (k - m).abs()).fold(0.0, f64::max)
        } else {
            f64::NAN
        };
        let pct = |v: &[f64]| v.iter().map(|s| format!("{:.1}", s * 100.0)).collect::<Vec<_>>().join(" / ");
        checks.push(Check::new(
            format!("{what}: drive-time shares (%)"),
            format!("{} (largest gap {:.1} points)", pct(&p.model_shares), gap * 100.0),
            format!("the kernel's {}, band ±{:.0} points", pct(&p.kernel_shares), SHARE_POINTS * 100.0),
            gap.is_finite() && gap <= SHARE_POINTS,
        ));
    }
    checks
}

/// Where a throughput difference comes from, as the two drives' time per request tells:
/// one side's drive seeking where the other's serves from its cache, or (about the same
/// drive time) when the requests reach the drive.
pub fn mechanism(p: &Pair) -> &'static str {
    let r = p.model_drive_ns / p.kernel_drive_ns;
    if r > 3.0 {
        "the model's drive seeks where the emulated drive serves from its cache"
    } else if r < 1.0 / 3.0 {
        "the emulated drive seeks where the model's serves from its cache"
    } else {
        "about the same drive time per request: the requests reach the drive at other times"
    }
}

/// The verdict line: how many checks against the kernel hold, and which do not.
fn verdict_line(checks: &[Check]) -> (super::Verdict, String) {
    let not: Vec<&str> = checks.iter().filter(|c| !c.held).map(|c| c.what.as_str()).collect();
    let held = checks.len() - not.len();
    if not.is_empty() {
        (super::Verdict::Matches, format!("matches: all {} checks against the kernel hold", checks.len()))
    } else {
        (
            super::Verdict::Differs,
            format!(
                "differs: {held} of {} checks against the kernel hold — not: {}",
                checks.len(),
                not.join("; ")
            ),
        )
    }
}

fn model_of(opts: &LabOptions) -> Result<&dyn Model, LabError> {
    opts.model.as_deref().ok_or_else(|| LabError::Missing {
        what: "the simulator (peers-kernel runs each job file in the model too: run it with \
               `headway reproduce peers-kernel`)"
            .into(),
    })
}

/// The model's run of `scheduler` with the guest's `tunables`, each request costing the
/// host's one CPU `cpu_ns`.
fn query(scheduler: &str, tunables: &[(&str, &str)], cpu_ns: u64) -> ModelQuery {
    let mut t: Vec<(String, String)> = tunables.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    if cpu_ns > 0 {
        t.push(("cpu_per_request".into(), format!("{}ns", cpu_ns)));
    }
    ModelQuery {
        disk: "wd5000aaks".into(),
        scheduler: scheduler.into(),
        tunables: t,
        queue_depth: MODEL_QUEUE_DEPTH,
        fcfs: true,
        context: None,
    }
}

fn spec_text(name: &str, guests: &[&str], tunables: &[(&str, &str)], job_file: &str, repeat: u32) -> String {
    let pairs = guests.iter().map(|g| format!("[\"noop\", \"{g}\"]")).collect::<Vec<_>>().join(", ");
    let mut t = format!(
        "# peers-kernel: {name}\nname = \"peers-kernel-{name}\"\nrepeat = {repeat}\npairs = [{pairs}]\n[guest]\nfs = \"raw\"\n"
    );
    if !tunables.is_empty() {
        t += "[guest.tunables]\n";
        for (k, v) in tunables {
            t += &format!("{k} = {v}\n");
        }
    }
    t + &format!("[headway]\ndisk = \"wd5000aaks\"\n[workload]\nfio = \"{job_file}\"\n")
}

fn model_err(what: &str, msg: String) -> LabError {
    LabError::Tool { what: format!("the model's run of {what}"), msg }
}

fn peers_kernel(scale: Scale, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<FigureData, LabError> {
    let model = model_of(opts)?;
    let dir = opts.out.join("peers-kernel");
    let mut commands = Vec::new();
    // the guest's cost per request outside the drive
    let lone = scaled(LONE_READER, scale);
    let spec = spec_text("lone-reader", &["none"], &[], "lone-reader.fio", LONE_REPEATS);
    let (cal, cmd) = run_written(&dir, "lone-reader", &spec, &[("lone-reader.fio", &lone)], opts, log)?;
    commands.push(cmd);
    let cal_model = model.fio(&lone, &query("noop", &[], 0)).map_err(|e| model_err("the lone reader", e))?;
    // the median of the repeats: a TCG guest's speed varies from boot to boot
    let mut costs = cal
        .runs
        .iter()
        .map(|r| overhead_ns(r, &cal_model))
        .collect::<Result<Vec<u64>, String>>()
        .map_err(|e| model_err("the lone reader", e))?;
    costs.sort_unstable();
    let overhead = *costs
        .get(costs.len() / 2)
        .ok_or_else(|| LabError::Missing { what: "the lone reader's runs".into() })?;
    log(&format!("a request costs the guest {:.0} us outside the model", overhead as f64 / 1e3));

    let mut pairs = Vec::new();
    for w in &WORKLOADS {
        let job = scaled(w.job, scale);
        let file = format!("{}.fio", w.name);
        let spec = spec_text(w.name, w.guests, w.tunables, &file, 1);
        let (report, cmd) = run_written(&dir, w.name, &spec, &[(&file, &job)], opts, log)?;
        commands.push(cmd);
        for g in w.guests {
            let run =
                report.runs.iter().find(|r| r.lab.guest_scheduler == *g).ok_or_else(|| {
                    LabError::Missing { what: format!("{}: the run under guest {g}", w.name) }
                })?;
            let m = model.fio(&job, &query(g, w.tunables, overhead)).map_err(|e| model_err(w.name, e))?;
            let first: Vec<u64> = m.jobs.iter().map(|j| j.first_byte).collect();
            let disk: Vec<u64> = m.jobs.iter().map(|j| j.disk_time_ns).collect();
            let ios: u64 = m.jobs.iter().map(|j| j.ios).sum();
            let (kernel_shares, kernel_drive_ns) = kernel_drive(run, &first);
            pairs.push(Pair {
                workload: w.name.into(),
                scheduler: g.to_string(),
                kernel_bw: run.aggregate.bw_bytes as f64,
                model_bw: m.bw_bytes,
                kernel_shares,
                model_shares: shares(&disk),
                kernel_drive_ns,
                model_drive_ns: disk.iter().sum::<u64>() as f64 / ios.max(1) as f64,
            });
        }
    }
    Ok(figure(scale, overhead, commands, &pairs))
}

/// The figure from its pairs (pure: the tests feed it results of either shape).
pub fn figure(scale: Scale, overhead_ns: u64, commands: Vec<String>, pairs: &[Pair]) -> FigureData {
    let checks: Vec<Check> = pairs.iter().flat_map(judge).collect();
    let (outcome, verdict) = verdict_line(&checks);
    let mut categories: Vec<String> = Vec::new();
    for p in pairs {
        if !categories.contains(&p.workload) {
            categories.push(p.workload.clone());
        }
    }
    let mut by: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for g in GUESTS {
        let v = categories
            .iter()
            .map(|c| {
                pairs.iter().find(|p| &p.workload == c && p.scheduler == g).map_or(0.0, |p| {
                    if p.kernel_bw > 0.0 {
                        p.model_bw / p.kernel_bw
                    } else {
                        0.0
                    }
                })
            })
            .collect();
        by.insert(g, v);
    }
    FigureData {
        id: "peers-kernel".into(),
        source: FIGURE.source.into(),
        title:
            "headway's bfq, mq-deadline and kyber against Linux 6.1's, on the same job files and drive model"
                .into(),
        setting: format!(
            "Real Linux guests (Debian's cloud 6.1 kernel) on headway serve's emulated wd5000aaks, raw \
             disk, the scheduler in the guest and noop on the server; the same job files in the \
             simulator under headway's scheduler of the same name, its drive taking 32 commands in \
             arrival order (the guest's virtio queue in front of the server's noop and a one-command \
             drive). The model's cpu_per_request (one CPU the jobs share, as the guest's processes \
             share its vCPU) is what a lone reader costs the guest beyond the model: {:.0} us per \
             request. par-read: four direct 4 KiB readers 51 GiB apart; alternate: two \
             readers of every other 64 KiB block, 4 GiB apart; weights: two readers at BFQ weights \
             30 and 60 (I/O priority 5 and 2), random or sequential, 100 GiB apart (strict: \
             strict_guarantees=1); no-raising: bfq with low_latency=0. Bands: throughput 0.85-1.15x the kernel's, drive-time shares \
             within 10 points.",
            overhead_ns as f64 / 1e3
        ),
        commands,
        scale_note: match scale {
            Scale::Quick => "8-second runs (the lone reader 5 s) instead of 20 (10)".into(),
            Scale::Full => String::new(),
        },
        x_label: "workload".into(),
        y_label: "throughput, headway / kernel".into(),
        categories,
        series: GUESTS.iter().map(|g| (g.to_string(), by[g].clone())).collect(),
        paper_points: Vec::new(),
        scatter: Vec::new(),
        rows: check_rows(&checks),
        outcome,
        verdict,
        explanation: String::new(),
        reports: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Verdict;
    use super::*;

    fn pair(kernel_bw: f64, model_bw: f64, k: &[f64], m: &[f64]) -> Pair {
        Pair {
            workload: "w".into(),
            scheduler: "bfq".into(),
            kernel_bw,
            model_bw,
            kernel_shares: k.to_vec(),
            model_shares: m.to_vec(),
            kernel_drive_ns: 1e6,
            model_drive_ns: 1e6,
        }
    }

    #[test]
    fn a_pair_matches_inside_both_bands_and_differs_outside_either() {
        let ok = pair(10e6, 11e6, &[0.33, 0.67], &[0.36, 0.64]);
        assert!(judge(&ok).iter().all(|c| c.held));
        // throughput off by 20%, either way
        assert!(!judge(&pair(10e6, 12e6, &[0.5, 0.5], &[0.5, 0.5]))[0].held);
        assert!(!judge(&pair(10e6, 8e6, &[0.5, 0.5], &[0.5, 0.5]))[0].held);
        // the opposite split of the drive's time
        assert!(!judge(&pair(10e6, 10e6, &[0.33, 0.67], &[0.67, 0.33]))[1].held);
        // nothing measured is never a match
        assert!(!judge(&pair(0.0, 10e6, &[0.5, 0.5], &[0.5, 0.5]))[0].held);
        assert!(!judge(&pair(10e6, 10e6, &[0.5, 0.5], &[1.0]))[1].held);
        // one job: no share check
        assert_eq!(judge(&pair(10e6, 10e6, &[1.0], &[1.0])).len(), 1);
        // the mechanism named from the drive times
        let seeks = Pair { model_drive_ns: 9e6, kernel_drive_ns: 0.1e6, ..pair(10e6, 0.4e6, &[1.0], &[1.0]) };
        assert!(mechanism(&seeks).starts_with("the model's drive seeks"));
        assert!(judge(&seeks)[0].headway.contains("the model's drive seeks"));
        let hits = Pair { model_drive_ns: 0.1e6, kernel_drive_ns: 9e6, ..seeks.clone() };
        assert!(mechanism(&hits).starts_with("the emulated drive seeks"));
        let same = Pair { model_drive_ns: 1e6, kernel_drive_ns: 1.2e6, ..seeks };
        assert!(mechanism(&same).contains("reach the drive at other times"));
        assert!(!judge(&ok)[0].headway.contains(" — "), "no mechanism where it holds");
        let f = figure(Scale::Quick, 150_000, vec![], std::slice::from_ref(&ok));
        assert_eq!(f.outcome, Verdict::Matches);
        let f = figure(Scale::Quick, 150_000, vec![], &[ok, pair(10e6, 10e6, &[0.33, 0.67], &[0.67, 0.33])]);
        assert_eq!(f.outcome, Verdict::Differs);
        assert!(f.verdict.contains("drive-time shares"), "{}", f.verdict);
        assert!(f.verdict.starts_with("differs: 3 of 4 checks against the kernel hold"), "{}", f.verdict);
    }

    #[test]
    fn the_servers_drive_time_goes_to_the_job_whose_region_holds_the_request() {
        let rq = |arrival_ns, sector, service| Request {
            connection: 1,
            arrival_ns,
            dispatch_ns: arrival_ns + 10,
            complete_ns: arrival_ns + 10 + service,
            write: false,
            sector,
            sectors: 8,
        };
        // jobs from byte 0 and from 100 GiB (given out of order)
        let first = [100 << 30, 0];
        let reqs =
            [rq(5, 0, 100), rq(6, (100u64 << 30) / 512 + 8, 300), rq(7, 1 << 20, 50), rq(900, 0, 1000)];
        assert_eq!(drive_time_by_job(&reqs, None, &first), (vec![300, 1150], 4));
        // outside the workload's window: not counted
        assert_eq!(drive_time_by_job(&reqs, Some((0, 100)), &first), (vec![300, 150], 3));
        // below every job: nobody's
        assert_eq!(drive_time_by_job(&reqs, None, &[1 << 40]), (vec![0], 0));
        assert_eq!(shares(&[300, 900]), vec![0.25, 0.75]);
        assert_eq!(shares(&[0, 0]), vec![0.0, 0.0]);
    }

    #[test]
    fn the_models_runs_carry_the_guests_cost_as_one_shared_cpu() {
        let q = query("bfq", &[("strict_guarantees", "1")], 152_400);
        assert_eq!(
            q.tunables,
            vec![("strict_guarantees".into(), "1".into()), ("cpu_per_request".into(), "152400ns".into())]
        );
        assert!(q.fcfs && q.queue_depth == 32);
        assert!(query("noop", &[], 0).tunables.is_empty(), "the lone reader's model run has no CPU");
        for w in &WORKLOADS {
            assert!(w.job.contains("time_based=1"), "{}: timed, so both sides read as long", w.name);
        }
    }

    #[test]
    fn specs_name_every_guest_scheduler_and_parse() {
        let dir = tempfile::tempdir().unwrap();
        for w in &WORKLOADS {
            std::fs::write(dir.path().join("w.fio"), w.job).unwrap();
            let text = spec_text(w.name, w.guests, w.tunables, "w.fio", 1);
            let s = crate::spec::Spec::parse(&dir.path().join("p.toml"), &text).unwrap();
            assert_eq!(s.points().len(), w.guests.len(), "{}", w.name);
        }
        let quick = scaled(WORKLOADS[0].job, Scale::Quick);
        assert!(quick.contains("runtime=8s") && !quick.contains("runtime=20s"));
    }
}

//! `peers` — not a paper figure: par-read, the anticipatory paper's alternate-block
//! readers, a multi-threads stand-in and PostMark SS under Linux's own schedulers in the
//! guest (bfq, mq-deadline, kyber; host noop) and under headway's on the server (stream,
//! as, cfq; guest none). No paper value: its outcome is "shape only", the verdict says
//! where host stream beats guest bfq and where not.

use super::{run_written, FigureData, LabFigure, Scale, Verdict};
use crate::run::LabOptions;
use crate::LabError;

pub(super) const FIGURE: LabFigure = LabFigure {
    id: "peers",
    source: "headway lab: Linux 6.1's schedulers in the guest beside headway's on the server",
    title: "par-read, alternate-block readers, threads and PostMark SS: guest bfq / mq-deadline / kyber against host stream / as / cfq",
    run: |s, o, l| Ok(vec![peers(s, o, l)?]),
};

/// The configurations `peers` compares: (host, guest).
pub const PEERS: [(&str, &str); 6] = [
    ("noop", "bfq"),
    ("noop", "mq-deadline"),
    ("noop", "kyber"),
    ("stream", "none"),
    ("as", "none"),
    ("cfq", "none"),
];

fn peers(scale: Scale, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<FigureData, LabError> {
    let dir = opts.out.join("peers");
    let pairs = PEERS.iter().map(|(h, g)| format!("[\"{h}\", \"{g}\"]")).collect::<Vec<_>>().join(", ");
    let quick = scale == Scale::Quick;
    let shrink =
        |job: &str, from: &str, to: &str| if quick { job.replace(from, to) } else { job.to_string() };
    let par_read =
        shrink(include_str!("../../../../experiments/lab/par-read-ext4.fio"), "size=256m", "size=64m");
    let alternate =
        shrink(include_str!("../../../../experiments/lab/alternate.fio"), "size=128m", "size=32m");
    let threads = shrink(include_str!("../../../../experiments/lab/threads.fio"), "size=4m", "size=1m");
    // PostMark times in whole seconds: even quick, a run must last about a minute
    let (pm_files, pm_tx) = (10_000, 20_000);
    // (name, file system, the spec's workload line, a job file to write beside the spec)
    type Load<'a> = (&'a str, &'a str, String, Option<(&'a str, &'a str)>);
    let workloads: [Load; 4] = [
        ("par-read", "ext4", "fio = \"par-read-ext4.fio\"".into(), Some(("par-read-ext4.fio", par_read.as_str()))),
        ("alternate", "raw", "fio = \"alternate.fio\"".into(), Some(("alternate.fio", alternate.as_str()))),
        ("threads", "raw", "fio = \"threads.fio\"".into(), Some(("threads.fio", threads.as_str()))),
        (
            "postmark-ss",
            "ext4",
            format!("postmark = {{ number = {pm_files}, transactions = {pm_tx}, size_min = 9216, size_max = 15360 }}"),
            None,
        ),
    ];
    let labels: Vec<String> = PEERS.iter().map(|(h, g)| format!("{h} + guest {g}")).collect();
    let mut series: Vec<(String, Vec<f64>)> = labels.iter().map(|l| (l.clone(), Vec::new())).collect();
    let mut rows = Vec::new();
    let mut commands = Vec::new();
    let mut reports = Vec::new();
    let mut wins = Vec::new();
    let mut losses = Vec::new();
    for (name, fs, work, file) in &workloads {
        // PostMark's pool fits a 512 MB guest's page cache: with 256 MB, as in iopath-fig3,
        // its write-back keeps the disk busy
        let memory = if name.starts_with("postmark") { 256 } else { 512 };
        let text = format!(
            "# peers: {name}\nname = \"peers-{name}\"\npairs = [{pairs}]\n[guest]\nfs = \"{fs}\"\nmemory_mb = {memory}\n\
             timeout_s = 3600\n[headway]\ndisk = \"wd5000aaks\"\n[workload]\n{work}\n"
        );
        let files: Vec<(&str, &str)> = file.iter().copied().collect();
        let (report, cmd) = run_written(&dir, name, &text, &files, opts, log)?;
        commands.push(cmd);
        // PostMark: transactions/s; the rest: MB/s
        let value = |r: &crate::results::LabRun| match &r.postmark {
            Some(p) => p.transactions_per_s,
            None => r.aggregate.bw_bytes as f64 / 1e6,
        };
        let vals: Vec<f64> = PEERS
            .iter()
            .map(|(h, g)| {
                report
                    .runs
                    .iter()
                    .find(|r| r.scheduler == *h && r.lab.guest_scheduler == *g)
                    .map_or(0.0, value)
            })
            .collect();
        let base = vals[0];
        for (i, v) in vals.iter().enumerate() {
            series[i].1.push(if base > 0.0 { v / base } else { 0.0 });
        }
        let unit = if name.starts_with("postmark") { "tx/s" } else { "MB/s" };
        rows.push((
            format!("{name} ({unit}): {}", labels.join(", ")),
            vals.iter().map(|v| format!("{v:.1}")).collect::<Vec<_>>().join(", "),
            "no paper value".into(),
        ));
        let stream = vals[3];
        let best_guest = vals[..3].iter().cloned().fold(0.0, f64::max);
        let which = PEERS[..3][vals[..3].iter().position(|v| *v == best_guest).unwrap_or(0)].1;
        if stream >= best_guest {
            wins.push(format!("{name} ({:.2}x guest {which})", stream / best_guest.max(1e-9)));
        } else {
            losses.push(format!("{name} ({:.2}x guest {which})", stream / best_guest.max(1e-9)));
        }
        reports.push((name.to_string(), serde_json::to_value(&report).unwrap_or_default()));
    }
    let verdict = format!(
        "shape only: host stream beats the best Linux scheduler in the guest on {} of {} workloads{}{}",
        wins.len(),
        workloads.len(),
        if wins.is_empty() { String::new() } else { format!(" — {}", wins.join(", ")) },
        if losses.is_empty() { String::new() } else { format!("; not on {}", losses.join(", ")) },
    );
    Ok(FigureData {
        id: "peers".into(),
        source: "headway lab: Linux 6.1's schedulers in the guest beside headway's on the server".into(),
        title: "guest bfq / mq-deadline / kyber (host noop) against host stream / as / cfq (guest none)"
            .into(),
        setting: "Real Linux guests (Debian's cloud 6.1 kernel, 512 MB) on headway serve's emulated \
                  wd5000aaks; one NBD connection per guest, so the server's schedulers see no process \
                  information; the guest's see its processes. par-read: four buffered 4 KiB readers of \
                  their own 256 MiB ext4 files; alternate: two direct readers of every other 64 KiB block, \
                  4 GiB apart, on the raw disk; threads: four processes 50 GiB apart with two free-running \
                  threads each (a stand-in for multi-threads: fio has no barrier), direct, raw; PostMark SS \
                  (10,000 files of 9-15 KB, 20,000 transactions, a 256 MB guest) on ext4. Values relative to \
                  guest bfq + host noop."
            .into(),
        commands,
        scale_note: if quick {
            "a quarter of the data (par-read 64 MiB files, alternate 32 MiB, threads 1 MiB; PostMark as at full scale: it times in whole seconds)".into()
        } else {
            String::new()
        },
        x_label: "workload".into(),
        y_label: "throughput relative to guest bfq + host noop".into(),
        categories: workloads.iter().map(|w| w.0.to_string()).collect(),
        series,
        paper_points: Vec::new(),
        scatter: Vec::new(),
        rows,
        outcome: Verdict::ShapeOnly,
        verdict,
        explanation: String::new(),
        reports,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::spec::Spec;

    #[test]
    fn peer_pairs_are_valid_names() {
        let pairs = PEERS.iter().map(|(h, g)| format!("[\"{h}\", \"{g}\"]")).collect::<Vec<_>>().join(", ");
        let s = Spec::parse(Path::new("p.toml"), &format!("pairs = [{pairs}]\n")).unwrap();
        assert_eq!(s.points().len(), 6);
    }
}

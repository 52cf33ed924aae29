//! One drive against one trace: [`score`] resolves the drive, reads and replays the trace
//! and computes the demerit overall and per part (reads, writes, the trace's classes, the
//! reads by position); [`Score`] renders the report table, the JSON and the per-request
//! CSV.

use std::fmt::Write as _;
use std::path::Path;

use headway_disk::DiskSpec;
use headway_sched::{Dir, Duration};
use headway_sim::trace::TraceError;

use crate::demerit::demerit;
use crate::demerit_binned::binned_demerit;
use crate::error::ValidateError;
use crate::replay::{replay, Replay};
use crate::trace::{parse_trace, TraceRequest};

/// The score of one drive against one trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Score {
    pub drive: String,
    pub requests: usize,
    pub demerit_ms: f64,
    /// The same through DiskSim's binned distributions (`demerit_binned`): the estimator of
    /// DiskSim's published figures.
    pub demerit_binned_ms: f64,
    pub mean_simulated_ms: f64,
    pub mean_measured_ms: f64,
    /// (demerit, mean simulated, mean measured, count) over reads, then writes.
    pub reads: (f64, f64, f64, usize),
    pub writes: (f64, f64, f64, usize),
    /// The same per class of the trace (`R Hit`, `W Miss`, ...), in order of first
    /// appearance.
    pub classes: Vec<(String, (f64, f64, f64, usize))>,
    /// The same for the reads by the previous request's direction and whether they start
    /// on the cylinder where it ended: `R after R, same cyl`, `R after R, other cyl`,
    /// `R after W, same cyl`, `R after W, other cyl`.
    pub positions: Vec<(String, (f64, f64, f64, usize))>,
    /// Requests where the model's cache hit agrees with the trace's Hit/Miss column.
    pub hit_agreement: usize,
    /// Per-request service times in ms, trace order (for the plot).
    pub simulated_ms: Vec<f64>,
    pub measured_ms: Vec<f64>,
    /// The trace and what the model did with it, for `--per-request`.
    pub trace: Vec<TraceRequest>,
    pub replay: Replay,
}

/// Import/resolve, replay and score.
pub fn score(disk: &str, trace_path: &Path) -> Result<Score, ValidateError> {
    score_spec(&headway_disk::resolve(disk)?, trace_path)
}

/// Replay and score a drive already resolved; a trace that cannot be read or parsed is
/// [`ValidateError::Trace`].
pub fn score_spec(spec: &DiskSpec, trace_path: &Path) -> Result<Score, ValidateError> {
    let name = trace_path.display().to_string();
    let text = std::fs::read_to_string(trace_path)
        .map_err(|e| TraceError::Io { file: name.clone(), why: e.to_string() })?;
    let trace = parse_trace(&text, &name)?;
    let rep = replay(spec, &trace)?;
    let ms = |d: Duration| d.0 as f64 / 1e6;
    let sim: Vec<f64> = rep.service.iter().map(|&d| ms(d)).collect();
    let real: Vec<f64> = trace.iter().map(|r| ms(r.service)).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    // (demerit, mean simulated, mean measured, count) over the requests `keep` picks by index
    let part_of = |keep: &dyn Fn(usize) -> bool| {
        let idx: Vec<usize> = (0..trace.len()).filter(|&i| keep(i)).collect();
        if idx.is_empty() {
            return (0.0, 0.0, 0.0, 0);
        }
        let s: Vec<f64> = idx.iter().map(|&i| sim[i]).collect();
        let r: Vec<f64> = idx.iter().map(|&i| real[i]).collect();
        (demerit(&s, &r), mean(&s), mean(&r), idx.len())
    };
    let part = |dir: Dir| part_of(&|i| trace[i].dir == dir);
    let mut names: Vec<(Dir, &str)> = Vec::new();
    for r in &trace {
        if !names.contains(&(r.dir, r.class.as_str())) {
            names.push((r.dir, r.class.as_str()));
        }
    }
    let classes = names
        .iter()
        .map(|&(dir, class)| {
            let d = if dir == Dir::Read { "R" } else { "W" };
            (format!("{d} {class}"), part_of(&|i| trace[i].dir == dir && trace[i].class == class))
        })
        .collect();
    let positions = [(Dir::Read, true), (Dir::Read, false), (Dir::Write, true), (Dir::Write, false)]
        .iter()
        .map(|&(prev, same)| {
            let part = part_of(&|i| {
                i > 0 && trace[i].dir == Dir::Read && trace[i - 1].dir == prev && rep.same_cylinder[i] == same
            });
            let p = if prev == Dir::Read { "R" } else { "W" };
            (format!("R after {p}, {} cyl", if same { "same" } else { "other" }), part)
        })
        .collect();
    Ok(Score {
        drive: spec.name.clone(),
        requests: trace.len(),
        demerit_ms: demerit(&sim, &real),
        demerit_binned_ms: binned_demerit(&sim, &real),
        mean_simulated_ms: mean(&sim),
        mean_measured_ms: mean(&real),
        reads: part(Dir::Read),
        writes: part(Dir::Write),
        classes,
        positions,
        hit_agreement: trace.iter().zip(&rep.cache_hit).filter(|(r, &h)| r.hit == h).count(),
        simulated_ms: sim,
        measured_ms: real,
        trace,
        replay: rep,
    })
}

impl Score {
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<22} {:>8} {:>12} {:>12} {:>12}",
            "", "requests", "demerit ms", "mean sim ms", "mean meas ms"
        );
        let _ = writeln!(
            s,
            "{:<22} {:>8} {:>12.3} {:>12.3} {:>12.3}",
            "all", self.requests, self.demerit_ms, self.mean_simulated_ms, self.mean_measured_ms
        );
        for (name, p) in self.parts() {
            let _ = writeln!(s, "{:<22} {:>8} {:>12.3} {:>12.3} {:>12.3}", name, p.3, p.0, p.1, p.2);
        }
        let _ = writeln!(
            s,
            "drive {}; cache hit/miss agrees with the trace's column on {} of {} requests",
            self.drive, self.hit_agreement, self.requests
        );
        let _ = writeln!(
            s,
            "demerit {:.6} ms from exact values; {:.6} ms through DiskSim's binned distributions",
            self.demerit_ms, self.demerit_binned_ms
        );
        s
    }

    /// One CSV row a request, trace order: what `--per-request` writes.
    pub fn per_request_csv(&self) -> String {
        let mut s = String::from(
            "line,dir,class,blkno,bcount,measured_ms,simulated_ms,model_hit,same_cylinder,seek_cylinders\n",
        );
        for (i, r) in self.trace.iter().enumerate() {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{:.6},{:.6},{},{},{}",
                i + 1,
                if r.dir == Dir::Read { "R" } else { "W" },
                r.class,
                r.sector,
                r.sectors,
                self.measured_ms[i],
                self.simulated_ms[i],
                u8::from(self.replay.cache_hit[i]),
                u8::from(self.replay.same_cylinder[i]),
                self.replay.seek_cylinders[i],
            );
        }
        s
    }

    /// The table's rows below `all`, in its order: reads, writes, the trace's classes, the
    /// reads by position (rows without requests left out).
    pub fn parts(&self) -> Vec<(String, (f64, f64, f64, usize))> {
        let mut v = vec![("reads".to_string(), self.reads), ("writes".to_string(), self.writes)];
        v.extend(self.classes.iter().cloned());
        v.extend(self.positions.iter().cloned());
        v.retain(|p| p.1 .3 > 0);
        v
    }

    /// What [`Score::to_json`] writes, as a value (`headway validate DIR` lists them).
    pub fn json_value(&self) -> serde_json::Value {
        let parts: Vec<_> = self
            .parts()
            .into_iter()
            .map(|(name, (d, sim, meas, n))| {
                serde_json::json!({
                    "part": name,
                    "requests": n,
                    "demerit_ms": d,
                    "mean_simulated_ms": sim,
                    "mean_measured_ms": meas,
                })
            })
            .collect();
        serde_json::json!({
            "drive": self.drive,
            "requests": self.requests,
            "demerit_ms": self.demerit_ms,
            "demerit_binned_ms": self.demerit_binned_ms,
            "mean_simulated_ms": self.mean_simulated_ms,
            "mean_measured_ms": self.mean_measured_ms,
            "cache_hit_agreement": self.hit_agreement,
            "parts": parts,
        })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.json_value()).expect("plain values") + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reads are split by the previous request's direction and by whether they start on
    /// the cylinder where it ended; the four parts count every read but the first request.
    #[test]
    fn reads_by_previous_direction_and_cylinder() {
        let dir = std::env::temp_dir().join(format!("headway-validate-pos-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("t.trace");
        // write at 0; read on its cylinder; read far away; write far; read back near 0
        let lines = "W Hit 0 8 1000 20000\nR Hit 16 8 5000 20000\nR Hit 10000000 8 9000 20000\n\
                     W Hit 10000016 8 1000 20000\nR Hit 100 8 9000 20000\n";
        std::fs::write(&trace, lines).unwrap();
        let s = score("cheetah9lp", &trace).unwrap();
        let count = |name: &str| s.positions.iter().find(|(n, _)| n == name).unwrap().1 .3;
        assert_eq!(count("R after W, same cyl"), 1);
        assert_eq!(count("R after R, other cyl"), 1);
        assert_eq!(count("R after W, other cyl"), 1);
        assert_eq!(count("R after R, same cyl"), 0);
        assert!(s.table().contains("R after W, same cyl"), "{}", s.table());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

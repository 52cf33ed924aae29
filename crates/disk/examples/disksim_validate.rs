//! Replay DiskSim 4.0's measured validation traces against headway's models of the same
//! drives and score them the way DiskSim's validation does: the RMS horizontal distance
//! between the simulated and measured service-time CDFs (the Ruemmler-Wilkes demerit),
//! sampled at 10,000 evenly spaced quantiles.
//!
//! `cargo run --release -p headway-disk --example disksim_validate [DIR]`
//! where DIR holds `cheetah9LP.trace` etc. (default: ../shared/reference/disksim-valid).
//!
//! Trace lines: `R|W Hit|Miss blkno bcount service_us next_interarrival_us`. Requests are
//! issued open-loop at their arrival times and served first-come first-served; a request's
//! service time runs from when the drive starts it to its completion.

use headway_disk::{builtin, Hdd};
use headway_sched::{Dir, Time};

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() as f64 * q) as usize).min(sorted.len() - 1);
    sorted[i]
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "../shared/reference/disksim-valid".into());
    for (model, file, disksim) in [("cheetah9lp", "cheetah9LP", 0.107), ("ibm18es", "ibm18es", 0.136)] {
        let path = format!("{dir}/{file}.trace");
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("{path}: not found, skipped");
            continue;
        };
        let mut h = Hdd::new(builtin(model).unwrap());
        let (mut arrival, mut busy) = (0u64, 0u64);
        let (mut real, mut sim) = (Vec::new(), Vec::new());
        let (mut real_w, mut sim_w, mut real_r, mut sim_r) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 6 {
                continue;
            }
            let dirn = if f[0] == "W" { Dir::Write } else { Dir::Read };
            let blk: u64 = f[2].parse().unwrap();
            let cnt: u32 = f[3].parse().unwrap();
            let service_ms: f64 = f[4].parse::<f64>().unwrap() / 1e3;
            let next_us: f64 = f[5].parse().unwrap();
            let start = arrival.max(busy);
            let a = h.access(Time(start), blk, cnt, dirn);
            busy = a.done.0;
            let s_ms = (a.done.0 - start) as f64 / 1e6;
            real.push(service_ms);
            sim.push(s_ms);
            if dirn == Dir::Write {
                real_w.push(service_ms);
                sim_w.push(s_ms);
            } else {
                real_r.push(service_ms);
                sim_r.push(s_ms);
            }
            arrival += (next_us * 1e3) as u64;
        }
        let demerit = |a: &mut Vec<f64>, b: &mut Vec<f64>| {
            a.sort_by(f64::total_cmp);
            b.sort_by(f64::total_cmp);
            let n = 10_000;
            let ss: f64 = (0..n)
                .map(|i| {
                    let q = (i as f64 + 0.5) / n as f64;
                    (quantile(a, q) - quantile(b, q)).powi(2)
                })
                .sum();
            (ss / n as f64).sqrt()
        };
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        println!(
            "{model}: {} requests; mean service measured {:.3} ms, headway {:.3} ms; demerit {:.3} ms \
             (reads {:.3}, writes {:.3}); DiskSim 4.0 scores {disksim} ms",
            real.len(),
            mean(&real),
            mean(&sim),
            demerit(&mut real, &mut sim),
            demerit(&mut real_r, &mut sim_r),
            demerit(&mut real_w, &mut sim_w),
        );
        println!(
            "  reads: measured {:.3} ms, headway {:.3} ms; writes: measured {:.3} ms, headway {:.3} ms",
            mean(&real_r),
            mean(&sim_r),
            mean(&real_w),
            mean(&sim_w)
        );
    }
}

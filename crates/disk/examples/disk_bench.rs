//! Rough numbers for a drive model: what it delivers and what it costs to simulate.
//!
//! `cargo run --release -p headway-disk --example disk_bench [model]`
//! (a measurement, not a test: wall-clock timings vary with the machine).

use headway_disk::{builtin, builtin_names, Hdd};
use headway_sched::{Dir, Duration, Time};
use std::hint::black_box;
use std::time::Instant;

struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (((self.0 >> 11) as u128 * n as u128) >> 53) as u64
    }
}

fn seq(h: &mut Hdd, start: u64, len: u32, n: u64, think: Duration) -> (f64, Time) {
    let mut t = Time(0);
    for i in 0..n {
        t = h.access(t, start + i * len as u64, len, Dir::Read).done + think;
    }
    ((n * len as u64 * 512) as f64 / t.0 as f64 * 1e3, t)
}

fn random(h: &mut Hdd, span: u64, n: u64, dir: Dir, seed: u64) -> (f64, f64) {
    let mut rng = Lcg(seed);
    let mut t = Time(0);
    let mut pos = 0u64;
    for _ in 0..n {
        let a = h.access(t, rng.below(span - 8) & !7, 8, dir);
        pos += a.positioning.0;
        t = a.done;
    }
    (n as f64 / t.0 as f64 * 1e9, pos as f64 / n as f64 / 1e6)
}

fn main() {
    let names: Vec<String> = match std::env::args().nth(1) {
        Some(n) => vec![n],
        None => builtin_names().iter().map(|s| s.to_string()).collect(),
    };
    for name in names {
        let spec = builtin(&name).expect("unknown model");
        let fresh = || Hdd::new(spec.clone());
        let mut h = fresh();
        let cap = h.capacity();
        let g = h.geometry().clone();
        println!("== {name}: {} sectors, {} cylinders, {} zones", cap, g.cylinders(), g.zone_count());
        println!(
            "  sustained media rate: outer {:.1} MB/s, inner {:.1} MB/s",
            g.streaming_rate(0) / 1e6,
            g.streaming_rate(cap - 1) / 1e6
        );
        let (r, _) = seq(&mut h, 0, 8, 100_000, Duration::ZERO);
        println!("  4 KiB sync sequential, outer, zero think: {r:.1} MB/s");
        let (r, _) = seq(&mut fresh(), 0, 2048, 500, Duration::ZERO);
        println!("  1 MiB sync sequential, outer: {r:.1} MB/s");
        let (r, _) = seq(&mut fresh(), cap - 600_000, 2048, 250, Duration::ZERO);
        println!("  1 MiB sync sequential, inner: {r:.1} MB/s");
        let (iops, pos) = random(&mut fresh(), cap, 50_000, Dir::Read, 1);
        println!(
            "  4 KiB random reads, full disk: {iops:.1} IOPS ({:.2} ms each, positioning {pos:.2} ms)",
            1e3 / iops
        );
        let (iops, _) = random(&mut fresh(), cap, 20_000, Dir::Write, 2);
        println!("  4 KiB random writes, full disk: {iops:.1} IOPS");
        let (iops, _) = random(&mut fresh(), cap / 100, 20_000, Dir::Read, 3);
        println!("  4 KiB random reads, 1% of the disk: {iops:.1} IOPS");

        // cost to simulate
        let n = 2_000_000u64;
        let mut h = fresh();
        let mut rng = Lcg(9);
        let lbns: Vec<u64> = (0..n).map(|_| rng.below(cap - 8)).collect();
        let start = Instant::now();
        let mut t = Time(0);
        for &l in &lbns {
            t = black_box(h.access(t, l, 8, Dir::Read)).done;
        }
        let rnd = start.elapsed().as_nanos() as f64 / n as f64;
        let mut h = fresh();
        let start = Instant::now();
        let mut t = Time(0);
        for i in 0..n {
            t = black_box(h.access(t, (i * 8) % (cap - 8), 8, Dir::Read)).done;
        }
        let sq = start.elapsed().as_nanos() as f64 / n as f64;
        let mut h = fresh();
        let start = Instant::now();
        let mut t = Time(0);
        let mut next = 0u64;
        for (i, &l) in lbns.iter().enumerate() {
            // 4 interleaved sequential streams 50 GB apart, 1 in 8 random, 1 in 5 writes
            let lbn = if i % 8 == 7 { l } else { ((i as u64 % 4) * 100_000_000 + next) % (cap - 8) };
            if i % 4 == 3 {
                next += 8;
            }
            let dir = if i % 5 == 4 { Dir::Write } else { Dir::Read };
            t = black_box(h.access(t, lbn, 8, dir)).done;
        }
        let mix = start.elapsed().as_nanos() as f64 / n as f64;
        println!("  simulation cost: {rnd:.0} ns/access random, {sq:.0} ns/access sequential, {mix:.0} ns/access mixed");
    }
}

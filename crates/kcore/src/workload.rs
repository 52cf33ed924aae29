//! Event sequences for the harness: generated from a seed (settings, table and workload
//! all drawn, so that every branch of the algorithm is reached: streams that form and
//! break, second chances, slices running out, deadlines expiring, merges, writes starving,
//! a queueing device), and taken from the simulator's runs of the papers' workloads.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::differ::{Config, Proc, Step, Timed, Workload};
use crate::ffi::CParams;
use crate::table::Table;

/// The elevator's defaults (`ss_params_default`), in the core's units.
pub fn default_params() -> CParams {
    CParams {
        stream_threshold: 4,
        tolerance_milli: 500,
        time_slice_ns: 124_000_000,
        read_expire_ns: 500_000_000,
        write_expire_ns: 5_000_000_000,
        fifo_batch: 16,
        writes_starved: 2,
        front_merges: true,
        max_sectors: 2560,
    }
}

/// A 7200 rpm disk's table shape: sequential in 0.1 ms, a rotation for short seeks, 20 ms
/// across the disk (the elevator's built-in guess, `ss_est_rotational`).
pub fn rotational_table(capacity: u64) -> Table {
    Table::new(
        vec![
            (0, 100_000),
            (256, 1_500_000),
            (2048, 4_000_000),
            (1 << 16, 5_500_000),
            (1 << 20, 7_000_000),
            (1 << 24, 9_000_000),
            (1 << 28, 13_000_000),
            (1 << 31, 20_000_000),
        ],
        capacity,
    )
}

/// Settings, table and workload drawn from `seed`.
pub fn random(seed: u64) -> (Config, Workload) {
    let mut g = ChaCha8Rng::seed_from_u64(seed);
    let capacity: u64 = 1 << g.gen_range(24..32);
    let c = CParams {
        stream_threshold: g.gen_range(1..7),
        tolerance_milli: *[0, 250, 500, 500, 1000, 333, 2000].get(g.gen_range(0..7)).unwrap(),
        time_slice_ns: [0, 2_000_000, 20_000_000, 124_000_000][g.gen_range(0..4)],
        read_expire_ns: [5_000_000, 50_000_000, 500_000_000][g.gen_range(0..3)],
        write_expire_ns: [20_000_000, 200_000_000, 5_000_000_000][g.gen_range(0..3)],
        fifo_batch: [1, 2, 4, 16][g.gen_range(0..4)],
        writes_starved: g.gen_range(0..4),
        front_merges: g.gen_bool(0.7),
        max_sectors: [8, 64, 256, 2560][g.gen_range(0..4)],
    };
    // A table: 1 to 7 knots, distances increasing, times non-decreasing.
    let n = g.gen_range(1..8);
    let mut knots = Vec::with_capacity(n);
    let (mut d, mut t) = (0u64, g.gen_range(20_000..400_000));
    for i in 0..n {
        knots.push((d, t));
        d += if i == 0 { g.gen_range(1..512) } else { g.gen_range(d..d * 64 + 2) };
        t += g.gen_range(0..6_000_000);
    }
    let table = Table::new(knots, capacity);
    let depth = [1, 1, 1, 2, 4][g.gen_range(0..5)];
    let cfg = Config {
        c,
        table,
        depth,
        rust_table: None,
        rust_tolerance: None,
        rust_fifo_batch: None,
        c_mutant: false,
        max_events: 20_000,
    };
    (cfg, random_workload(&mut g, capacity))
}

fn random_workload(g: &mut ChaCha8Rng, capacity: u64) -> Workload {
    let procs = g.gen_range(1..7);
    let think_scale: u64 = [0, 50_000, 500_000, 3_000_000][g.gen_range(0..4)];
    let mut w = Workload::default();
    for _ in 0..procs {
        let steps = g.gen_range(40..260);
        let mut pos = g.gen_range(0..capacity - 4096);
        let bs = [1u32, 8, 8, 16, 128][g.gen_range(0..5)];
        let stride = [0u64, 0, 0, bs as u64, 24][g.gen_range(0..5)];
        let jump = [0.0, 0.02, 0.1, 0.5, 1.0][g.gen_range(0..5)];
        let writes = [0.0, 0.0, 0.2, 0.7][g.gen_range(0..4)];
        let mut p = Proc { start_ns: g.gen_range(0..2_000_000), steps: Vec::with_capacity(steps) };
        for _ in 0..steps {
            if g.gen_bool(jump) {
                pos = g.gen_range(0..capacity - 4096);
            }
            let len = if g.gen_bool(0.1) { g.gen_range(1..=bs.max(2)) } else { bs };
            let think = if think_scale == 0 || g.gen_bool(0.3) { 0 } else { g.gen_range(0..think_scale) };
            let think = if g.gen_bool(0.02) { think + g.gen_range(0..60_000_000) } else { think };
            p.steps.push(Step { sector: pos, len, write: g.gen_bool(writes), think_ns: think });
            pos = (pos + len as u64 + stride).min(capacity - 4096);
        }
        w.procs.push(p);
    }
    // Open-loop requests beside them: bursts of writes (write-back), random reads.
    let timed = [0usize, 0, 20, 200][g.gen_range(0..4)];
    let mut at = 0u64;
    let mut pos = g.gen_range(0..capacity - 4096);
    for _ in 0..timed {
        at += if g.gen_bool(0.7) { g.gen_range(0..200_000) } else { g.gen_range(0..30_000_000) };
        if g.gen_bool(0.3) {
            pos = g.gen_range(0..capacity - 4096);
        }
        let len = [8u32, 8, 64, 256][g.gen_range(0..4)];
        w.timed.push(Timed { at_ns: at, sector: pos, len, write: g.gen_bool(0.6) });
        pos += len as u64;
    }
    w
}

/// One request of a simulator run, as its per-request log records it.
#[derive(Copy, Clone, Debug)]
pub struct Record {
    pub job: u32,
    pub write: bool,
    pub offset: u64,
    pub bytes: u32,
    pub submit_ns: u64,
    pub complete_ns: u64,
}

/// The closed-loop workload behind a simulator run: each job's requests in the order it
/// submitted them, each after the think time the job showed (submit minus the previous
/// completion; 0 when it overlapped).
pub fn from_records(records: &[Record]) -> Workload {
    let jobs = records.iter().map(|r| r.job as usize + 1).max().unwrap_or(0);
    let mut by_job: Vec<Vec<Record>> = vec![Vec::new(); jobs];
    for r in records {
        by_job[r.job as usize].push(*r);
    }
    let mut w = Workload::default();
    for mut rs in by_job.into_iter().filter(|v| !v.is_empty()) {
        rs.sort_by_key(|r| (r.submit_ns, r.complete_ns));
        let mut p = Proc { start_ns: rs[0].submit_ns, steps: Vec::with_capacity(rs.len()) };
        let mut prev_done = rs[0].submit_ns;
        for r in &rs {
            p.steps.push(Step {
                sector: r.offset / 512,
                len: (r.bytes / 512).max(1),
                write: r.write,
                think_ns: r.submit_ns.saturating_sub(prev_done),
            });
            prev_done = r.complete_ns;
        }
        w.procs.push(p);
    }
    w
}

//! Counting slips the way DiskSim 4.0 counts them.
//!
//! Every sparing scheme finds an LBN's sector by walking the zone's slip list once, in the
//! order the file lists it, with a running position: a slip at or before the running
//! position is counted and moves the position one sector (track) on. Slips are not sorted
//! first, and a slip listed twice counts twice. For an increasing list this is the familiar
//! "skip every slipped sector up to here"; for any other list the result is whatever that
//! one pass gives (an LBN may even land on a slipped sector), and that is what DiskSim maps.
//!
//! The pass has a property that makes it cheap to answer: whether a slip is counted can only
//! go from "no" to "yes" as the LBN grows. So each slip has a *threshold*, the first
//! position (relative to where counting starts) from which the pass counts it, and the
//! number of slips counted for a position is the number of thresholds at or below it
//! (`counts.rs`). The thresholds come from the list in order: a slip at relative position
//! `rel` is counted at `r` when `rel <= r + (slips before it in the list counted at r)`,
//! and the right-hand side grows strictly with `r`.
//!
//! Schemes that count per unit (a cylinder, a track, a range of cylinders) only look at
//! the slips from the unit's first sector on, and the slip-to-end schemes also count every
//! slip on an earlier unit, wherever it sits in the list. `PerUnit` keeps a threshold
//! table for each unit a slip can reach, and answers every other unit with a count.

use super::counts::SortedCounts;

/// How one slip of the list takes part in one unit's pass.
#[derive(Copy, Clone, Debug)]
enum Seen {
    /// Counted whatever the position (a slip-to-end scheme's slip on an earlier unit).
    Always,
    /// Counted when it is at or before the running position; `rel` from the unit's start.
    At(u64),
    /// Never counted.
    Never,
}

/// The thresholds of a pass over `seen` (in list order), sorted.
fn thresholds(seen: impl Iterator<Item = Seen>) -> Vec<u64> {
    let mut a: Vec<u64> = Vec::new();
    for s in seen {
        let t = match s {
            Seen::Never => continue,
            Seen::Always => 0,
            Seen::At(rel) => {
                // the smallest r with r + (thresholds so far <= r) >= rel (at most rel)
                let (mut lo, mut hi) = (0u64, rel);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if mid + a.partition_point(|&v| v <= mid) as u64 >= rel {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                lo
            }
        };
        let i = a.partition_point(|&v| v <= t);
        a.insert(i, t);
    }
    a
}

/// One pass over the whole list from position 0 (schemes 0, 9, 10, track sparing, and the
/// slip-to-end schemes without spares).
#[derive(Clone, Debug)]
pub(crate) struct SinglePass {
    thresholds: SortedCounts,
}

impl SinglePass {
    pub(crate) fn new(slips: &[u32]) -> SinglePass {
        SinglePass { thresholds: SortedCounts::new(thresholds(slips.iter().map(|&s| Seen::At(s as u64)))) }
    }
    /// Slips the pass counts for running position `x`.
    #[inline(always)]
    pub(crate) fn count(&self, x: u64) -> u64 {
        self.thresholds.at_or_below(x)
    }
}

/// A pass per unit of `unit` physical sectors holding `lbns` LBNs: the unit's own slips
/// (and later ones the running position reaches) counted from its first sector, plus, with
/// `slip_to_end`, every slip on an earlier unit.
#[derive(Clone, Debug)]
pub(crate) struct PerUnit {
    unit: u64,
    slip_to_end: bool,
    /// Every slip, sorted (the earlier-unit count).
    sorted: Vec<u64>,
    /// Units with a table of their own, increasing.
    special: Vec<u64>,
    /// Per special unit: slips counted from position 0 on, and its other thresholds
    /// (`arena[start..end]`, each below `lbns`).
    tables: Vec<(u64, u32, u32)>,
    arena: Vec<u64>,
}

impl PerUnit {
    /// `units`: how many units the zone's LBNs use (no table is built past them).
    pub(crate) fn new(slips: &[u32], unit: u64, lbns: u64, slip_to_end: bool, units: u64) -> PerUnit {
        let mut sorted: Vec<u64> = slips.iter().map(|&s| s as u64).collect();
        sorted.sort_unstable();
        // a slip further than this past a unit's start is never counted there: the running
        // position stays below lbns plus every slip of the list
        let reach = lbns - 1 + slips.len() as u64;
        let mut special: Vec<u64> = sorted
            .iter()
            .flat_map(|&s| s.saturating_sub(reach).div_ceil(unit)..=s / unit)
            .filter(|&q| q < units)
            .collect();
        special.sort_unstable();
        special.dedup();
        let (mut tables, mut arena) = (Vec::with_capacity(special.len()), Vec::new());
        for &q in &special {
            let first = q * unit;
            let seen = slips.iter().map(|&s| {
                let s = s as u64;
                if s < first {
                    if slip_to_end {
                        Seen::Always
                    } else {
                        Seen::Never
                    }
                } else if s - first <= reach {
                    Seen::At(s - first)
                } else {
                    Seen::Never
                }
            });
            let a = thresholds(seen);
            let base = a.partition_point(|&t| t == 0);
            let end = a.partition_point(|&t| t < lbns);
            let start = arena.len() as u32;
            arena.extend_from_slice(&a[base..end.max(base)]);
            tables.push((base as u64, start, arena.len() as u32));
        }
        PerUnit { unit, slip_to_end, sorted, special, tables, arena }
    }

    /// Slips counted for the LBN at position `r` of unit `q` (`r` below `lbns`).
    #[inline(always)]
    pub(crate) fn count(&self, q: u64, r: u64) -> u64 {
        match self.special.binary_search(&q) {
            Ok(i) => {
                let (base, s, e) = self.tables[i];
                base + self.arena[s as usize..e as usize].partition_point(|&a| a <= r) as u64
            }
            Err(_) if self.slip_to_end => self.sorted.partition_point(|&s| s < q * self.unit) as u64,
            Err(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DiskSim's pass, literally.
    fn pass(slips: &[u32], x: u64) -> u64 {
        let mut j = 0;
        for &s in slips {
            if s as u64 <= x + j {
                j += 1;
            }
        }
        j
    }

    fn unit_pass(slips: &[u32], unit: u64, q: u64, r: u64, to_end: bool) -> u64 {
        let first = q * unit;
        let mut k = 0;
        for &s in slips {
            let s = s as u64;
            if (to_end && s / unit < q) || (s >= first && s - first <= r + k) {
                k += 1;
            }
        }
        k
    }

    #[test]
    fn single_pass_counts_as_the_list_is_written() {
        let lists: [&[u32]; 6] = [&[], &[2], &[5, 2], &[2, 5], &[3, 3, 3], &[9, 0, 4, 4, 1, 30, 2]];
        for l in lists {
            let p = SinglePass::new(l);
            for x in 0..40 {
                assert_eq!(p.count(x), pass(l, x), "{l:?} at {x}");
            }
        }
        // the spec's example: with [5, 2] the LBN at 4 lands on slipped index 5
        assert_eq!(4 + SinglePass::new(&[5, 2]).count(4), 5);
        assert_eq!(4 + SinglePass::new(&[2, 5]).count(4), 6);
    }

    #[test]
    fn per_unit_counts_as_the_list_is_written() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..300 {
            let unit = 2 + rnd(12);
            let lbns = 1 + rnd(unit);
            let units = 1 + rnd(6);
            let slips: Vec<u32> = (0..rnd(9)).map(|_| rnd(unit * units + 3) as u32).collect();
            for to_end in [false, true] {
                let p = PerUnit::new(&slips, unit, lbns, to_end, units);
                for q in 0..units {
                    for r in 0..lbns {
                        assert_eq!(
                            p.count(q, r),
                            unit_pass(&slips, unit, q, r, to_end),
                            "{slips:?} unit {unit} lbns {lbns} q {q} r {r} to_end {to_end}"
                        );
                    }
                }
            }
        }
    }
}

//! Counting sorted positions at or below a position, without a binary search.
//!
//! Every lookup of an imported drive's LBN counts slips (their thresholds, [`super::slips`])
//! and, for the skew, slips on earlier cylinders or tracks. A binary search over a few
//! hundred positions costs a chain of dependent loads and compares on every lookup. Here the
//! positions' range is cut into buckets of `2^shift` positions, about four per position
//! stored, and a table gives how many positions lie below each bucket: a count is one
//! table read and a short scan of the bucket (usually empty).

/// Sorted positions, and the bucket table over them.
#[derive(Clone, Debug, Default)]
pub(crate) struct SortedCounts {
    sorted: Vec<u64>,
    shift: u32,
    /// `below[b]`: how many positions are below `b << shift`.
    below: Vec<u32>,
}

impl SortedCounts {
    /// `sorted` must be in increasing order (repeats allowed).
    pub(crate) fn new(sorted: Vec<u64>) -> SortedCounts {
        debug_assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
        let Some(&max) = sorted.last() else { return SortedCounts::default() };
        let buckets = 4 * sorted.len() as u64 + 16;
        let mut shift = 0;
        while (max >> shift) >= buckets {
            shift += 1;
        }
        let below =
            (0..=(max >> shift)).map(|b| sorted.partition_point(|&a| a < (b << shift)) as u32).collect();
        SortedCounts { sorted, shift, below }
    }

    /// How many positions are at or below `x`.
    #[inline(always)]
    pub(crate) fn at_or_below(&self, x: u64) -> u64 {
        let b = (x >> self.shift) as usize;
        let Some(&from) = self.below.get(b) else { return self.sorted.len() as u64 };
        let mut i = from as usize;
        while i < self.sorted.len() && self.sorted[i] <= x {
            i += 1;
        }
        i as u64
    }

    /// How many positions are below `x`.
    #[inline(always)]
    pub(crate) fn below(&self, x: u64) -> u64 {
        match x {
            0 => 0,
            x => self.at_or_below(x - 1),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn counts_as_a_binary_search_does(mut v in prop::collection::vec(0u64..5000, 0..300), xs in prop::collection::vec(0u64..6000, 1..50)) {
            v.sort_unstable();
            let c = SortedCounts::new(v.clone());
            for x in xs {
                prop_assert_eq!(c.at_or_below(x), v.partition_point(|&a| a <= x) as u64);
                prop_assert_eq!(c.below(x), v.partition_point(|&a| a < x) as u64);
            }
        }
    }

    #[test]
    fn spread_and_clustered_positions() {
        let v = vec![3, 3, 3, 1_000_000, 1_000_001, 9_999_999];
        let c = SortedCounts::new(v.clone());
        for x in [0, 2, 3, 4, 999_999, 1_000_000, 1_000_001, 9_999_998, 9_999_999, u64::MAX] {
            assert_eq!(c.at_or_below(x), v.partition_point(|&a| a <= x) as u64, "x = {x}");
        }
        assert_eq!(SortedCounts::new(vec![]).at_or_below(7), 0);
    }
}

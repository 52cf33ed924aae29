//! Defects: `(defect, replacement)` pairs that move the LBN the sparing scheme put on the
//! defective sector (track, under track sparing) to its replacement.
//!
//! DiskSim looks the LBN's position up in the pair list as the file writes it, in one of
//! three ways (below). Pairs whose replacement is the defect itself change
//! nothing in the mapping. (Under scheme 3 DiskSim still flags such an LBN as remapped and
//! reads it through its separate remapped-sector access; headway does not tell remapped
//! sectors apart, so in headway those pairs are neutral under every scheme.)

/// How the pair list is searched.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Rule {
    /// The first pair whose defect is the position and whose replacement differs
    /// (schemes 0, 2, 4-10).
    FirstMoved,
    /// The first pair whose defect is the position (track sparing, scheme 1).
    First,
    /// Every pair in order, each compared with the position the earlier ones left, so
    /// `a -> b` followed by `b -> c` takes `a` to `c` (scheme 3).
    Chain,
}

/// A lookup table: position -> where the pairs take it, for the positions they move.
#[derive(Clone, Debug, Default)]
pub(crate) struct Defects {
    keys: Vec<u64>,
    targets: Vec<u64>,
}

impl Defects {
    pub(crate) fn new(pairs: &[(u32, u32)], rule: Rule) -> Defects {
        let mut map: Vec<(u64, u64)> = Vec::new();
        let mut seen: Vec<u64> = Vec::new();
        for &(d, _) in pairs {
            let d = d as u64;
            if seen.contains(&d) {
                continue;
            }
            seen.push(d);
            let target = match rule {
                Rule::FirstMoved => pairs.iter().find(|p| p.0 as u64 == d && p.0 != p.1).map(|p| p.1 as u64),
                Rule::First => pairs.iter().find(|p| p.0 as u64 == d).map(|p| p.1 as u64),
                Rule::Chain => {
                    Some(pairs.iter().fold(d, |cur, p| if p.0 as u64 == cur { p.1 as u64 } else { cur }))
                }
            };
            if let Some(t) = target.filter(|&t| t != d) {
                map.push((d, t));
            }
        }
        map.sort_unstable();
        Defects { keys: map.iter().map(|m| m.0).collect(), targets: map.iter().map(|m| m.1).collect() }
    }

    /// Where the pairs move `key`, if they move it.
    #[inline(always)]
    pub(crate) fn get(&self, key: u64) -> Option<u64> {
        if self.keys.is_empty() {
            return None;
        }
        self.keys.binary_search(&key).ok().map(|i| self.targets[i])
    }

    /// Every moved position with its target.
    pub(crate) fn moves(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.keys.iter().copied().zip(self.targets.iter().copied())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_rules() {
        let pairs = [(5, 5), (5, 9), (9, 12), (5, 7), (3, 3)];
        let first_moved = Defects::new(&pairs, Rule::FirstMoved);
        assert_eq!((first_moved.get(5), first_moved.get(9), first_moved.get(3)), (Some(9), Some(12), None));
        // the first pair for 5 keeps it in place
        let first = Defects::new(&pairs, Rule::First);
        assert_eq!((first.get(5), first.get(9), first.get(3)), (None, Some(12), None));
        // 5 -> 5 -> 9 -> 12, and then no pair has defect 12
        let chain = Defects::new(&pairs, Rule::Chain);
        assert_eq!((chain.get(5), chain.get(9), chain.get(7)), (Some(12), Some(12), None));
        assert!(Defects::new(&[(4, 4)], Rule::Chain).is_empty());
    }
}

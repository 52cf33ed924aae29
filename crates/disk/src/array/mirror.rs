//! Mirrors (RAID 1, RAID 10): which copy a read goes to.
//!
//! This restates DiskSim 4.0's read side of `Redundancy scheme = Shadowed`
//! (`logorg_shadowed` in `disksim_redun.c`, with its helpers that find the shortest
//! distance and the shortest queue), in our words:
//!
//! * The data layout stripes over the `D = N / C` data members (`C` = `Number of copies`);
//!   copy `c` of data member `d` is member `d + c * D`. So the first `D` members are the
//!   primaries and mirrors are not neighbours (`N = 4, C = 2`: 0 with 2, 1 with 3).
//! * A write goes to every copy, same sector and length, all at once (see
//!   [`super::ArraySpec::write_plan`]).
//! * Each member read (one per data member touched) picks one copy `c` by the policy
//!   (`Copy choice on read`):
//!   1. *primary*: always copy 0;
//!   2. *random*: `floor(draw * C)`, one draw per member read;
//!   3. *round robin*: one counter per array, starting at 0, advanced once per member read
//!      (a read touching three data members uses three consecutive values);
//!   4. *shortest distance*: the copy whose member's queue position is nearest the read's
//!      member sector;
//!   5. *shortest queue*: the copy whose member has the fewest requests queued or in service;
//!   6. *shortest queue, ties by distance*: as 5, the tied copies then decided as 4.
//!
//!   Ties in 4 and 5: copies are scanned in increasing `c`; the first with the least value
//!   is the candidate, later copies with that value are its ties (a smaller value clears
//!   them). With `t` ties one draw `i = floor(draw * (t + 1))` picks the candidate
//!   (`i = 0`) or the `i`-th tie: uniform over the tied copies, and a draw only when
//!   there is a tie. In 6 the tied copies go to the distance rule as the ties first, in
//!   the order found, and the candidate last.
//!
//! The draws come from the caller (the simulator seeds a stream from the run's seed). They
//! cannot be DiskSim's: DiskSim draws from its one global generator, which everything else
//! in a DiskSim run draws from too.

/// `Copy choice on read` (DiskSim's numbers 1 to 6 in order).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CopyChoice {
    Primary,
    Random,
    RoundRobin,
    ShortestDistance,
    ShortestQueue,
    ShortestQueueThenDistance,
}

/// Names in the `--array` grammar, in DiskSim's order.
const NAMES: [(CopyChoice, &str); 6] = [
    (CopyChoice::Primary, "primary"),
    (CopyChoice::Random, "random"),
    (CopyChoice::RoundRobin, "rr"),
    (CopyChoice::ShortestDistance, "distance"),
    (CopyChoice::ShortestQueue, "queue"),
    (CopyChoice::ShortestQueueThenDistance, "queue-distance"),
];

impl CopyChoice {
    /// DiskSim's `Copy choice on read` value (1 to 6).
    pub fn from_disksim(v: u64) -> Option<CopyChoice> {
        NAMES.get((v as usize).checked_sub(1)?).map(|n| n.0)
    }

    /// The name `read=NAME` takes.
    pub fn name(self) -> &'static str {
        NAMES.iter().find(|n| n.0 == self).map(|n| n.1).expect("every policy is named")
    }

    pub fn from_name(s: &str) -> Option<CopyChoice> {
        NAMES.iter().find(|n| n.1 == s).map(|n| n.0)
    }

    /// Every name, for messages.
    pub fn names() -> String {
        NAMES.iter().map(|n| n.1).collect::<Vec<_>>().join(", ")
    }
}

/// What a policy may consult about the member holding one copy.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyView {
    /// Requests queued at the member or in its drive, not yet complete.
    pub queued: usize,
    /// The member's queue position: the last sector of the request it last dispatched
    /// (DiskSim's rule for FCFS queues), 0 before any.
    pub position: u64,
}

/// An array's read copy choice: the policy and the round-robin counter.
#[derive(Clone, Debug)]
pub struct CopyChooser {
    pub policy: CopyChoice,
    toggle: u32,
}

impl CopyChooser {
    pub fn new(policy: CopyChoice) -> CopyChooser {
        CopyChooser { policy, toggle: 0 }
    }

    /// The copy (0 to `copies - 1`) a member read at member sector `sector` goes to;
    /// `view(c)` describes copy `c`'s member, `draw()` is uniform in [0, 1).
    pub fn choose(
        &mut self,
        copies: u32,
        sector: u64,
        view: &dyn Fn(u32) -> CopyView,
        draw: &mut dyn FnMut() -> f64,
    ) -> u32 {
        let all: Vec<u32> = (0..copies).collect();
        let distance = |c: u32| view(c).position.abs_diff(sector);
        match self.policy {
            CopyChoice::Primary => 0,
            CopyChoice::Random => ((draw() * copies as f64) as u32).min(copies - 1),
            CopyChoice::RoundRobin => {
                let c = self.toggle;
                self.toggle = (self.toggle + 1) % copies;
                c
            }
            CopyChoice::ShortestDistance => least(&all, &distance, draw),
            CopyChoice::ShortestQueue => least(&all, &|c| view(c).queued as u64, draw),
            CopyChoice::ShortestQueueThenDistance => {
                let (best, ties) = scan(&all, &|c| view(c).queued as u64);
                if ties.is_empty() {
                    return best;
                }
                let mut order = ties;
                order.push(best);
                least(&order, &distance, draw)
            }
        }
    }
}

/// The first copy of `order` with the least `key`, and the later ones equal to it.
fn scan(order: &[u32], key: &dyn Fn(u32) -> u64) -> (u32, Vec<u32>) {
    let mut best = order[0];
    let mut value = key(best);
    let mut ties = Vec::new();
    for &c in &order[1..] {
        let v = key(c);
        if v < value {
            (best, value) = (c, v);
            ties.clear();
        } else if v == value {
            ties.push(c);
        }
    }
    (best, ties)
}

/// The copy of `order` with the least `key`, ties drawn among (one draw, only on a tie).
fn least(order: &[u32], key: &dyn Fn(u32) -> u64, draw: &mut dyn FnMut() -> f64) -> u32 {
    let (best, ties) = scan(order, key);
    if ties.is_empty() {
        return best;
    }
    let i = ((draw() * (ties.len() + 1) as f64) as usize).min(ties.len());
    if i == 0 {
        best
    } else {
        ties[i - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chooser over members described by (queued, position) per copy; `draws` are
    /// handed out in order and counted.
    fn pick(policy: CopyChoice, copies: &[(usize, u64)], sector: u64, draws: &[f64]) -> (u32, usize) {
        let mut ch = CopyChooser::new(policy);
        let view = |c: u32| CopyView { queued: copies[c as usize].0, position: copies[c as usize].1 };
        let mut used = 0;
        let mut draw = || {
            used += 1;
            draws[used - 1]
        };
        let c = ch.choose(copies.len() as u32, sector, &view, &mut draw);
        (c, used)
    }

    #[test]
    fn disksim_numbers_and_names() {
        assert_eq!(CopyChoice::from_disksim(1), Some(CopyChoice::Primary));
        assert_eq!(CopyChoice::from_disksim(6), Some(CopyChoice::ShortestQueueThenDistance));
        assert_eq!(CopyChoice::from_disksim(0), None);
        assert_eq!(CopyChoice::from_disksim(7), None);
        for (c, n) in NAMES {
            assert_eq!(CopyChoice::from_name(n), Some(c));
            assert_eq!(c.name(), n);
        }
    }

    #[test]
    fn primary_random_and_round_robin() {
        assert_eq!(pick(CopyChoice::Primary, &[(9, 0), (0, 0)], 5, &[]), (0, 0));
        // floor(0.7 * 3) = 2, one draw
        assert_eq!(pick(CopyChoice::Random, &[(0, 0); 3], 5, &[0.7]), (2, 1));
        let mut ch = CopyChooser::new(CopyChoice::RoundRobin);
        let view = |_| CopyView::default();
        let picks: Vec<u32> = (0..5).map(|_| ch.choose(3, 0, &view, &mut || unreachable!())).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1]);
    }

    #[test]
    fn shortest_distance_and_queue_draw_only_on_a_tie() {
        // positions 100, 40, 70 for a read at 60: distances 40, 20, 10
        assert_eq!(pick(CopyChoice::ShortestDistance, &[(0, 100), (0, 40), (0, 70)], 60, &[]), (2, 0));
        // queues 3, 1, 1: copy 1 is the candidate, copy 2 its tie; 0.4 * 2 = 0 keeps 1,
        // 0.6 * 2 = 1 takes the tie
        assert_eq!(pick(CopyChoice::ShortestQueue, &[(3, 0), (1, 0), (1, 0)], 0, &[0.4]), (1, 1));
        assert_eq!(pick(CopyChoice::ShortestQueue, &[(3, 0), (1, 0), (1, 0)], 0, &[0.6]), (2, 1));
        // a smaller value later clears the ties found before it
        assert_eq!(pick(CopyChoice::ShortestQueue, &[(2, 0), (2, 0), (1, 0)], 0, &[]), (2, 0));
    }

    #[test]
    fn shortest_queue_then_distance() {
        // queues 1, 2, 1: copies 0 and 2 tie; by distance to 50, copy 2 (at 45) beats 0 (at 0)
        assert_eq!(pick(CopyChoice::ShortestQueueThenDistance, &[(1, 0), (2, 50), (1, 45)], 50, &[]), (2, 0));
        // no tie in the queues: no distance looked at
        assert_eq!(pick(CopyChoice::ShortestQueueThenDistance, &[(1, 50), (0, 0)], 50, &[]), (1, 0));
        // tied in both: the order is (tie 2, candidate 0), so the draw's 0 takes copy 2
        assert_eq!(
            pick(CopyChoice::ShortestQueueThenDistance, &[(1, 10), (2, 50), (1, 10)], 50, &[0.1]),
            (2, 1)
        );
        assert_eq!(
            pick(CopyChoice::ShortestQueueThenDistance, &[(1, 10), (2, 50), (1, 10)], 50, &[0.9]),
            (0, 1)
        );
    }
}

//! BFQ's merging of cooperating processes' queues (docs/bfq-rules.md §8.1; Linux's
//! `bfq_setup_cooperator`, `bfq_may_be_close_cooperator`, `bfq_too_late_for_merging`,
//! `bfq_find_close_cooperator`, `bfq_merge_bfqqs`, `bfq_split_bfqq`), the rules on their
//! own, for the `bfq` scheduler to drive.
//!
//! Processes that interleave their reads of one region (a file read by a pool of threads,
//! an NFS or PVFS server's daemons) each look seeky alone and are sequential together.
//! When a synchronous request arrives close — within [`CLOSE_THR`] sectors — to where the
//! in-service queue's last dispatch ended, or to another queue's next request, and both
//! queues may cooperate, the arriving process's queue is merged into the other: the
//! process's requests go to the shared queue from then on, and its old queue drains.
//! Queues may cooperate when neither is seeky, both are synchronous, of one class and not
//! the idle class, both still have a process, and neither was served more than
//! [`MERGE_TIME_LIMIT`] ago in its current busy period ("too late": a queue that has been
//! running long alone is not a cooperator's). Nothing merges while a single queue is busy.
//!
//! A shared queue found seeky when its turn ends is marked for splitting: each of its
//! processes, at its next request, leaves for a queue of its own (its think-time and seek
//! history as they were when it merged), the last one keeping the shared queue.
//!
//! **Stable merge** (Linux 5.13's `bfq_do_or_sched_stable_merge`): processes whose queues
//! are created within [`STABLE_BURST`] of each other, with one I/O priority, are likely one
//! application's (an emulator's I/O threads, say). A queue created so soon after the last
//! one created ([`stable_plan`]) has a merge into it scheduled; at the first request of the
//! process more than [`STABLE_LATE`] after its queue's creation (and any split), the merge
//! is done — unless idling would boost the queue's throughput (a sequential reader is
//! better off alone). A stably merged process is never split off again.

use crate::request::Sector;
use crate::time::{Duration, Time};

/// How close (sectors) a request must be to count as a cooperator's (Linux
/// `BFQQ_CLOSE_THR`).
pub const CLOSE_THR: Sector = 8192;
/// A queue served for longer than this in its busy period is too late to merge (Linux
/// `bfq_merge_time_limit`).
pub const MERGE_TIME_LIMIT: Duration = Duration::from_millis(100);

/// Queues created this close after the last one are stable-merge candidates (Linux
/// `bfq_burst_interval`).
pub const STABLE_BURST: Duration = Duration::from_millis(180);
/// A last-created queue older than this starts a new reference, and a scheduled stable
/// merge waits this long after the queue's creation (Linux `bfq_activation_stable_merging`,
/// `bfq_late_stable_merging`).
pub const STABLE_LATE: Duration = Duration::from_millis(600);

/// What to do with a queue just created at `now`, given the last one created (`last`:
/// when, and whether it has the same priority class and level): `Some(true)` schedule its
/// stable merge into the last one; `Some(false)` it becomes the reference; `None` neither.
pub fn stable_plan(now: Time, last: Option<(Time, bool)>) -> Option<bool> {
    match last {
        None => Some(false),
        Some((t, same)) if !same || now.0 > t.0 + STABLE_LATE.0 => Some(false),
        Some((t, _)) if now.0 <= t.0 + STABLE_BURST.0 => Some(true),
        Some(_) => None,
    }
}

/// Is `a` within [`CLOSE_THR`] of `b`?
pub fn close(a: Sector, b: Sector) -> bool {
    a.abs_diff(b) <= CLOSE_THR
}

/// Too late to merge: served in this busy period, first more than the limit ago.
pub fn too_late(first_io: Option<Time>, now: Time) -> bool {
    first_io.is_some_and(|t| now.0 > t.0 + MERGE_TIME_LIMIT.0)
}

/// What the cooperation test looks at in a queue.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Side {
    /// The I/O priority class's index (RT 0, BE 1, IDLE 2).
    pub class: usize,
    pub sync: bool,
    pub seeky: bool,
    pub has_process: bool,
    pub too_late: bool,
}

/// May `a`'s process join `b` (Linux `bfq_may_be_close_cooperator` and the process checks
/// of `bfq_setup_merge`)?
pub fn may_cooperate(a: Side, b: Side) -> bool {
    const IDLE: usize = 2;
    !b.too_late
        && a.class != IDLE
        && a.class == b.class
        && !a.seeky
        && !b.seeky
        && a.sync
        && b.sync
        && a.has_process
        && b.has_process
}

/// The queue whose next request is nearest `sector`, within [`CLOSE_THR`] (Linux keeps them
/// in a tree by position; here `next` lists `(queue, next request's sector)`); the lower
/// queue wins a tie.
pub fn closest<K: Copy + Ord>(sector: Sector, next: impl IntoIterator<Item = (K, Sector)>) -> Option<K> {
    next.into_iter()
        .filter(|&(_, s)| close(s, sector))
        .min_by_key(|&(k, s)| (s.abs_diff(sector), k))
        .map(|(k, _)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side() -> Side {
        Side { class: 1, sync: true, seeky: false, has_process: true, too_late: false }
    }

    #[test]
    fn close_means_within_8192_sectors_either_way() {
        assert!(close(100_000, 100_000 + 8192) && close(100_000 + 8192, 100_000));
        assert!(!close(100_000, 100_000 + 8193));
    }

    #[test]
    fn the_nearest_next_request_within_the_threshold_wins() {
        let next = [(1u32, 50_000), (2, 41_000), (3, 39_500), (4, 1_000_000)];
        assert_eq!(closest(40_000, next), Some(3));
        assert_eq!(closest(45_000, next), Some(2), "4000 away beats 5000");
        assert_eq!(closest(500_000, next), None, "nothing within 8192");
        assert_eq!(closest(40_000, [(7u32, 39_000), (5, 41_000)]), Some(5), "a tie goes to the lower queue");
    }

    #[test]
    fn only_like_sequential_sync_queues_with_processes_cooperate() {
        assert!(may_cooperate(side(), side()));
        for (what, a, b) in [
            ("seeky", Side { seeky: true, ..side() }, side()),
            ("seeky target", side(), Side { seeky: true, ..side() }),
            ("async", Side { sync: false, ..side() }, side()),
            ("other class", Side { class: 0, ..side() }, side()),
            ("idle class", Side { class: 2, ..side() }, Side { class: 2, ..side() }),
            ("no process", side(), Side { has_process: false, ..side() }),
            ("target too late", side(), Side { too_late: true, ..side() }),
        ] {
            assert!(!may_cooperate(a, b), "{what}");
        }
    }

    #[test]
    fn queues_created_within_180_ms_of_the_last_are_scheduled_to_merge() {
        let ms = |n: u64| Time(n * 1_000_000);
        assert_eq!(stable_plan(ms(5), None), Some(false), "the first is the reference");
        assert_eq!(stable_plan(ms(180), Some((ms(0), true))), Some(true));
        assert_eq!(stable_plan(ms(181), Some((ms(0), true))), None, "between 180 and 600 ms: neither");
        assert_eq!(stable_plan(ms(601), Some((ms(0), true))), Some(false), "too old: a new reference");
        assert_eq!(
            stable_plan(ms(10), Some((ms(0), false))),
            Some(false),
            "another priority: a new reference"
        );
    }

    #[test]
    fn a_queue_is_too_late_once_served_for_100_ms() {
        let ms = |n: u64| Time(n * 1_000_000);
        assert!(!too_late(None, ms(5000)), "not served in this busy period");
        assert!(!too_late(Some(ms(10)), ms(110)));
        assert!(too_late(Some(ms(10)), ms(111)));
    }
}

//! Whether BFQ keeps the device idle for the in-service queue's next request
//! (docs/bfq-rules.md §5.1, 5.2, 5.6, 5.7; Linux's `bfq_better_to_idle`,
//! `idling_boosts_thr_without_issues`, `idling_needed_for_service_guarantees`,
//! `bfq_asymmetric_scenario`, `bfq_update_hw_tag`, `bfq_arm_slice_timer`), for the `bfq`
//! scheduler to use.
//!
//! * **Command queueing** ([`HwTag`]): until 33 completions have been seen with more than
//!   3 requests outstanding, the device is assumed to queue; then it queues when more
//!   than 3 were ever at it at once. The answer never reverts from "queues".
//! * **Weights** ([`WeightCounts`]): per distinct weight, the unraised queues that are
//!   busy or have requests at the device. The scenario is *asymmetric* for a queue when
//!   it is not at the smallest weight while two weights are present, or when busy queues
//!   are in two classes or more.
//! * **The decision**: never for an async or idle-class queue or with `slice_idle` 0; always
//!   with `strict_guarantees`; otherwise when idling boosts throughput without harm — a
//!   rotational device without queueing, or (rotational or not queueing) and the queue is
//!   sequential, I/O bound, with a short think time; and no raised queue busy — or when
//!   the service guarantees need it: the queue is raised and others are not (or the device
//!   holds 4 more than the queue's own), the scenario is asymmetric, or it is the only
//!   busy queue.
//! * **The slice**: `slice_idle`; at most 2 ms for a seeky unraised queue in a symmetric
//!   scenario; at least 20 ms for a raised one.

use std::collections::BTreeMap;

use crate::time::Duration;

/// Completions with enough outstanding requests before the queueing answer is taken.
const HW_TAG_SAMPLES: u32 = 33;
/// More than this many outstanding requests: a sample, and queueing.
const HW_QUEUE_THRESHOLD: u32 = 3;

/// Does the device queue commands? (Linux `hw_tag`.)
#[derive(Clone, Debug, Default)]
pub struct HwTag {
    /// `None` until decided (read as queueing).
    decided: Option<bool>,
    samples: u32,
    max_in_driver: u32,
}

impl HwTag {
    pub fn queueing(&self) -> bool {
        self.decided.unwrap_or(true)
    }

    /// At a completion, before the device's count drops: `in_driver` at the device,
    /// `queued` in the scheduler; `in_service_light`: the in-service queue has a short
    /// think time and fewer than 3 requests in flight and queued, with fewer than 3 at the
    /// device (such samples do not count).
    pub fn completion(&mut self, in_driver: u32, queued: u32, in_service_light: bool) {
        self.max_in_driver = self.max_in_driver.max(in_driver);
        if self.decided == Some(true) {
            return;
        }
        if in_driver + queued <= HW_QUEUE_THRESHOLD || in_service_light {
            return;
        }
        self.samples += 1;
        if self.samples < HW_TAG_SAMPLES {
            return;
        }
        self.decided = Some(self.max_in_driver > HW_QUEUE_THRESHOLD);
        self.samples = 0;
        self.max_in_driver = 0;
    }
}

/// Unraised busy (or in-flight) queues per weight (Linux's weights tree).
#[derive(Clone, Debug, Default)]
pub struct WeightCounts(BTreeMap<u32, u32>);

impl WeightCounts {
    pub fn add(&mut self, weight: u32) {
        *self.0.entry(weight).or_default() += 1;
    }

    pub fn remove(&mut self, weight: u32) {
        if let Some(n) = self.0.get_mut(&weight) {
            *n -= 1;
            if *n == 0 {
                self.0.remove(&weight);
            }
        }
    }

    /// Asymmetric for a queue counted at `weight` (`None`: not counted), with busy queues
    /// in `busy_classes` classes.
    pub fn asymmetric(&self, weight: Option<u32>, busy_classes: usize) -> bool {
        let smallest = self.0.keys().next().copied();
        let varied = self.0.len() >= 2 && weight != smallest;
        varied || busy_classes > 1
    }
}

/// Everything the idling decision looks at.
#[derive(Copy, Clone, Debug)]
pub struct IdleCase {
    pub strict_guarantees: bool,
    pub slice_idle: Duration,
    pub sync: bool,
    pub idle_class: bool,
    pub rotational: bool,
    pub queueing: bool,
    pub seeky: bool,
    pub io_bound: bool,
    pub short_think_time: bool,
    /// The queue is weight-raised; some busy queue is raised; some busy queue is not.
    pub raised: bool,
    pub any_raised_busy: bool,
    pub any_unraised_busy: bool,
    /// Requests at the device, and the queue's own there.
    pub in_driver: u32,
    pub own_in_flight: u32,
    pub asymmetric: bool,
    pub only_busy: bool,
}

/// Should the device wait for this queue's next request? (Linux `bfq_better_to_idle`.)
pub fn better_to_idle(c: &IdleCase) -> bool {
    if c.strict_guarantees {
        return true;
    }
    if c.slice_idle == Duration::ZERO || !c.sync || c.idle_class {
        return false;
    }
    let needed = (c.raised && (c.any_unraised_busy || c.in_driver >= c.own_in_flight + 4))
        || c.asymmetric
        || c.only_busy;
    boosts_without_issues(c) || needed
}

/// Idling for the queue would boost throughput, and no raised queue is busy (Linux
/// `idling_boosts_thr_without_issues`): a rotational device without queueing, or (rotational
/// or not queueing) and the queue sequential, I/O bound, with a short think time. Also what
/// injection and a scheduled stable merge ask.
pub fn boosts_without_issues(c: &IdleCase) -> bool {
    let seq_iobound = !c.seeky && c.io_bound && c.short_think_time;
    let boosts = (c.rotational && !c.queueing) || ((c.rotational || !c.queueing) && seq_iobound);
    boosts && !c.any_raised_busy
}

/// The idle slice for a queue (Linux `bfq_arm_slice_timer`).
pub fn slice(slice_idle: Duration, seeky: bool, raised: bool, asymmetric: bool) -> Duration {
    if seeky && !raised && !asymmetric {
        slice_idle.min(Duration::from_millis(2))
    } else if raised {
        slice_idle.max(Duration::from_millis(20))
    } else {
        slice_idle
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLICE: Duration = Duration::from_millis(8);

    fn disk() -> IdleCase {
        IdleCase {
            strict_guarantees: false,
            slice_idle: SLICE,
            sync: true,
            idle_class: false,
            rotational: true,
            queueing: false,
            seeky: false,
            io_bound: true,
            short_think_time: true,
            raised: false,
            any_raised_busy: false,
            any_unraised_busy: true,
            in_driver: 0,
            own_in_flight: 0,
            asymmetric: false,
            only_busy: false,
        }
    }

    #[test]
    fn a_disk_without_queueing_idles_for_sync_queues_only() {
        assert!(better_to_idle(&disk()));
        assert!(!better_to_idle(&IdleCase { sync: false, ..disk() }));
        assert!(!better_to_idle(&IdleCase { idle_class: true, ..disk() }));
        assert!(!better_to_idle(&IdleCase { slice_idle: Duration::ZERO, ..disk() }));
        assert!(better_to_idle(&IdleCase { strict_guarantees: true, sync: false, ..disk() }));
    }

    #[test]
    fn a_queueing_ssd_idles_only_for_guarantees() {
        let ssd = IdleCase { rotational: false, queueing: true, ..disk() };
        assert!(!better_to_idle(&ssd));
        assert!(better_to_idle(&IdleCase { asymmetric: true, ..ssd }));
        assert!(better_to_idle(&IdleCase { only_busy: true, ..ssd }));
        assert!(better_to_idle(&IdleCase { raised: true, ..ssd }), "raised among unraised");
    }

    #[test]
    fn a_queueing_disk_idles_for_a_sequential_io_bound_queue() {
        let d = IdleCase { queueing: true, ..disk() };
        assert!(better_to_idle(&d));
        assert!(!better_to_idle(&IdleCase { seeky: true, ..d }));
        assert!(!better_to_idle(&IdleCase { short_think_time: false, ..d }));
        // a raised queue busy elsewhere turns throughput idling off
        assert!(!better_to_idle(&IdleCase { any_raised_busy: true, ..d }));
    }

    #[test]
    fn queueing_is_decided_after_33_loaded_completions() {
        let mut h = HwTag::default();
        assert!(h.queueing(), "assumed until decided");
        for _ in 0..32 {
            h.completion(1, 5, false);
        }
        assert!(h.queueing());
        h.completion(1, 5, false);
        assert!(!h.queueing(), "never more than 3 at the device: no queueing");
        // a lightly loaded drive never decides
        let mut light = HwTag::default();
        for _ in 0..100 {
            light.completion(1, 1, false);
        }
        assert!(light.queueing());
        // a device that held 8 at once queues, for good
        let mut q = HwTag::default();
        for _ in 0..33 {
            q.completion(8, 8, false);
        }
        assert!(q.queueing());
        for _ in 0..100 {
            q.completion(1, 5, false);
        }
        assert!(q.queueing());
    }

    #[test]
    fn asymmetry_comes_from_weights_and_classes() {
        let mut w = WeightCounts::default();
        w.add(40);
        w.add(40);
        assert!(!w.asymmetric(Some(40), 1));
        w.add(80);
        assert!(w.asymmetric(Some(80), 1), "not at the smallest weight");
        assert!(!w.asymmetric(Some(40), 1), "at the smallest");
        assert!(w.asymmetric(None, 1), "a raised queue is not counted");
        w.remove(80);
        assert!(!w.asymmetric(None, 1));
        assert!(w.asymmetric(Some(40), 2), "two classes busy");
    }

    #[test]
    fn the_slice_shrinks_for_seeky_queues_and_grows_for_raised_ones() {
        assert_eq!(slice(SLICE, true, false, false), Duration::from_millis(2));
        assert_eq!(slice(SLICE, true, false, true), SLICE);
        assert_eq!(slice(SLICE, false, true, false), Duration::from_millis(20));
        assert_eq!(slice(SLICE, false, false, false), SLICE);
    }
}

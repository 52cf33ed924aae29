//! DiskSim's read-ahead, sector by sector (`DiskSpec::disksim`; its
//! `disk_buffer_sector_done`), planned once per read-ahead limit.
//!
//! From the end of sector `origin_lbn - 1` at `origin_time`, read-ahead reads one LBN per
//! slot to its track's last LBN, then switches heads or seeks one cylinder and waits for
//! the next track's first LBN to come round, up to the stream's `stop`. The walk is a list
//! of [`WalkRun`]s, one per track: where the run starts, when the arm is over its track,
//! when its first sector starts under the head. [`Hdd::plan_stream`] finds them once,
//! when the stream gets its limit, with the layout lookups that costs; every later
//! question (how far read-ahead has got at `t`, when it has read every sector before `x`)
//! is answered from the runs with arithmetic only ([`Hdd::stream_walk`]).
//!
//! A plan holds for the stream it was made for and for DiskSim's angle lag at that moment
//! (the rotational waits depend on it). A question about any other stream or lag is
//! answered from a fresh plan, so the answers never depend on whether a plan was kept.

use super::{Hdd, Stream, StreamAt};
use crate::geometry::Location;

/// The read-ahead's run on one track: `n` LBNs from `lbn`, in successive slots from
/// `loc`'s.
#[derive(Copy, Clone, Debug)]
pub(super) struct WalkRun {
    lbn: u64,
    n: u64,
    loc: Location,
    /// When the arm is over the run's track, if it had to switch heads or seek there.
    moved: Option<u64>,
    /// When the run's first sector starts under the head.
    first: u64,
}

/// The runs of one stream, and what they were planned for.
#[derive(Clone, Debug, Default)]
pub(super) struct WalkPlan {
    runs: Vec<WalkRun>,
    /// The stream and angle lag the runs hold for.
    key: Option<(u64, u64, u64, u64)>,
    /// The track of sector `origin_lbn - 1`, where the walk starts.
    start_track: (u32, u32),
}

fn key(st: &Stream, lag_ns: u64) -> (u64, u64, u64, u64) {
    (st.origin_lbn, st.origin_time, st.stop, lag_ns)
}

impl Hdd {
    /// Plan `st`'s read-ahead up to its stop and keep the plan for later questions.
    /// `known`: LBNs whose locations the caller has already looked up.
    pub(super) fn plan_stream(&mut self, st: &Stream, known: &[Option<(u64, Location)>]) {
        let mut plan = std::mem::take(&mut self.walk);
        self.plan_into(st, &mut plan, known);
        self.walk = plan;
    }

    pub(super) fn plan_into(&self, st: &Stream, plan: &mut WalkPlan, known: &[Option<(u64, Location)>]) {
        let locate = |lbn: u64| match known.iter().flatten().find(|k| k.0 == lbn) {
            Some(&(_, loc)) => loc,
            None => self.geo.locate(lbn),
        };
        plan.runs.clear();
        plan.key = Some(key(st, self.lag_ns));
        let mut lbn = st.origin_lbn;
        let mut time = st.origin_time;
        let mut prev = locate(lbn.saturating_sub(1));
        plan.start_track = (prev.cylinder, prev.head);
        while lbn < st.stop {
            let cur = locate(lbn);
            let (moved, first) = if (cur.cylinder, cur.head) != (prev.cylinder, prev.head) {
                let (mv, _) = self.move_time(prev.cylinder, prev.head, &cur, false);
                let done = time + mv;
                (Some(done), done + self.rot_wait(&cur, done))
            } else {
                (None, time + self.slots_ahead(&prev, &cur))
            };
            let z = &self.geo.zones[cur.zone as usize];
            let slots = ((z.spt - cur.sector) as u64).min(st.stop - lbn);
            let n = if z.remapped() { self.lbns_on_track(lbn, &cur, slots) } else { slots };
            plan.runs.push(WalkRun { lbn, n, loc: cur, moved, first });
            time = first + z.slot_start(cur.slot as u64 + n) - z.slot_start(cur.slot as u64);
            lbn += n;
            // the run's last sector: on cur's track, n - 1 slots on (a further run starts on
            // another track, so only its track and slot are needed)
            prev = Location {
                sector: cur.sector + n as u32 - 1,
                slot: ((cur.slot as u64 + n - 1) % z.spt as u64) as u32,
                ..cur
            };
        }
    }

    /// Where the read-ahead `st` is: walked until time `t` or until every sector before
    /// `x` is read, whichever comes first.
    pub(super) fn stream_walk(&self, st: &Stream, t: u64, x: u64) -> StreamAt {
        if t >= st.stop_time && x >= st.stop {
            // read-ahead has reached its limit
            let (cylinder, head) = st.stop_track;
            return StreamAt { front: st.stop, next_event: 0, cylinder, head, at: st.stop_time };
        }
        if self.walk.key == Some(key(st, self.lag_ns)) {
            return self.walk_plan(&self.walk, st, t, x);
        }
        let mut plan = WalkPlan::default();
        self.plan_into(st, &mut plan, &[]);
        self.walk_plan(&plan, st, t, x)
    }

    pub(super) fn walk_plan(&self, plan: &WalkPlan, st: &Stream, t: u64, x: u64) -> StreamAt {
        let until = x.min(st.stop);
        let at = |front, next_event, loc: &Location| StreamAt {
            front,
            next_event,
            cylinder: loc.cylinder,
            head: loc.head,
            at: u64::MAX,
        };
        let (mut lbn, mut time, mut track) = (st.origin_lbn, st.origin_time, plan.start_track);
        for r in &plan.runs {
            if r.lbn >= until {
                break;
            }
            if let Some(done) = r.moved {
                if t < done {
                    return at(r.lbn, done, &r.loc);
                }
            }
            if t < r.first {
                return at(r.lbn, r.first, &r.loc);
            }
            let z = &self.geo.zones[r.loc.zone as usize];
            let n = r.n.min(until - r.lbn);
            let span = |k: u64| z.slot_start(r.loc.slot as u64 + k) - z.slot_start(r.loc.slot as u64);
            if t < r.first + span(n) {
                // inside the run: the sectors done by t, and when the next one ends
                let mut k =
                    (((t - r.first) as u128) << 32).checked_div(z.slot_fp as u128).unwrap_or(0) as u64;
                k = k.min(n - 1);
                while k > 0 && r.first + span(k) > t {
                    k -= 1;
                }
                while r.first + span(k + 1) <= t {
                    k += 1;
                }
                return at(r.lbn + k, r.first + span(k + 1), &r.loc);
            }
            time = r.first + span(n);
            lbn = r.lbn + n;
            track = (r.loc.cylinder, r.loc.head);
        }
        StreamAt { front: lbn, next_event: 0, cylinder: track.0, head: track.1, at: time }
    }
}

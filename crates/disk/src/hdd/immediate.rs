//! DiskSim's zero-latency access (`Immediate buffer read` / `Immediate buffer write`; its
//! `dm_latency_g1`, `dm_access_block` and `disk_buffer_sector_done`), one track at a time.
//!
//! When the head reaches a track strictly between the start of the first sector wanted (W)
//! and the start of the track's last sector, it does not wait for W: it starts at the next
//! sector boundary (sector j) and takes the sectors as they pass. DiskSim's bookkeeping per
//! sector that passes, read or (for a write) whose data was in the buffer when it began:
//! * the next sector in order (`firstblkno`) advances the in-order frontier; reaching the
//!   start of the out-of-order run jumps the frontier to the run's end;
//! * with no run yet, a wanted sector past the frontier and before the end of what can be
//!   done on this track (`lastblkno`: the request's end on the track; for a write, also the
//!   end of the data buffered when the sector ends) starts a run;
//! * the sector right after the run, before that end, extends it; one further on starts a
//!   new run in its place.
//!
//! The track is done when the frontier reaches the request's end on it. A read landing at
//! j inside the request therefore takes j.. first and W..j-1 after the turn: it ends one
//! revolution after j, sooner than waiting for W whenever the request runs past j. Landing
//! past the request's end on the track (or before W) changes nothing. The data leaves in
//! order: the bus has W only after the turn.
//!
//! Not modelled: tracks holding slipped or spared sectors (their accesses wait for W as
//! without zero latency), and read-ahead resuming at the run's end: after a zero-latency
//! read the drive reads ahead from the request's end when that sector next comes round.

use super::{Hdd, WriteData};
use crate::geometry::Location;

/// What a zero-latency access did on one track.
#[derive(Copy, Clone, Debug)]
pub(super) struct ImmediateTrack {
    /// When the request's last sector on the track was taken.
    pub done: u64,
    /// When the first sector wanted (W) was in the buffer in order.
    pub first_in: u64,
    /// When the in-order frontier passed `mark` (if the mark is on this track).
    pub at_mark: Option<u64>,
    /// The request's last sector on the track (where read-ahead goes on from), the LBN
    /// of the last sector taken, and how many sectors passed under the head.
    pub last: Location,
    pub last_taken: u64,
    pub passed: u64,
    /// When the sector after the request's end on the track next starts under the head.
    pub resume: u64,
}

impl Hdd {
    /// Does DiskSim start this access at once? `cur` is the first sector wanted on the
    /// track, the head arrives at `t`: the wait to the first sector taken and its index
    /// when the head is strictly between the start of `cur` and the start of the track's
    /// last sector (a track holding a spare or slipped sector: never).
    #[inline]
    pub(super) fn immediate_start(&self, cur: &Location, t: u64, write: bool) -> Option<(u64, u32)> {
        let c = &self.spec.cache;
        if !(if write { c.immediate_writes } else { c.immediate_reads }) {
            return None;
        }
        self.immediate_landing(cur, t)
    }

    /// [`Hdd::immediate_start`] for a drive that does zero-latency accesses.
    fn immediate_landing(&self, cur: &Location, t: u64) -> Option<(u64, u32)> {
        let z = &self.geo.zones[cur.zone as usize];
        if cur.sector + 1 >= z.spt {
            return None;
        }
        if z.remapped() {
            // a zone with spares or slips: only its tracks of consecutive LBNs in every slot
            let lbn = |s| self.geo.lbn_of(cur.cylinder, cur.head, s);
            match (lbn(0), lbn(z.spt - 1)) {
                (Some(a), Some(b)) if b - a == (z.spt - 1) as u64 => {}
                _ => return None,
            }
        }
        let at = |s: u32| Location { sector: s, slot: ((cur.slot + s - cur.sector) % z.spt), ..*cur };
        let (to_w, to_last) = (self.rot_wait(cur, t), self.rot_wait(&at(z.spt - 1), t));
        if to_last == 0 || to_last >= to_w {
            return None;
        }
        (cur.sector + 1..z.spt).map(|s| (self.rot_wait(&at(s), t), s)).min()
    }

    /// The rest of a zero-latency access on the track of `w` (the first sector wanted, LBN
    /// `lbn`), which takes sector `j` first, starting at `tj`; the request wants `lbn..end`
    /// of the track. `data` (a write): when each sector from `start` is in the buffer.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn immediate_track(
        &self,
        w: &Location,
        lbn: u64,
        end: u64,
        j: u32,
        tj: u64,
        data: Option<(WriteData, u64)>,
        mark: u64,
    ) -> ImmediateTrack {
        let z = &self.geo.zones[w.zone as usize];
        let spt = z.spt as u64;
        let track_first = lbn - w.sector as u64;
        let slot_j = ((w.slot + j - w.sector) % z.spt) as u64;
        // sector `k` places after j: when it starts and ends under the head
        let span = |k: u64| z.slot_start(slot_j + k) - z.slot_start(slot_j);
        let none = u64::MAX;
        let (mut frontier, mut run) = (lbn, (none, none));
        let (mut first_in, mut at_mark) = (None, None);
        let mut k = 0u64;
        loop {
            let x = track_first + (j as u64 + k) % spt;
            let (ts, te) = (tj + span(k), tj + span(k + 1));
            // a write takes a sector only if its data was in when it began
            let taken = match data {
                None => true,
                Some((d, start)) => x >= start && x < end && d.at(x - start) <= ts,
            };
            if taken {
                // what can be done on this track when the sector ends
                let last = match data {
                    None => end,
                    Some((d, start)) => (start + d.buffered_by(te)).min(end),
                };
                if x == frontier {
                    frontier += 1;
                    if frontier == run.0 {
                        frontier = run.1;
                        run = (none, none);
                    }
                    first_in.get_or_insert(te);
                    if at_mark.is_none() && frontier >= mark {
                        at_mark = Some(te);
                    }
                } else if run.0 == none {
                    if x < last && x > frontier {
                        run = (x, x + 1);
                    }
                } else if x == run.1 && x < last {
                    run.1 += 1;
                } else if x > run.1 && x < last {
                    run = (x, x + 1);
                }
            }
            if frontier >= end {
                let n = (end - lbn) as u32;
                let last = Location { sector: w.sector + n - 1, slot: (w.slot + n - 1) % z.spt, ..*w };
                // the sector after the request's end on the track, when it next comes round
                let resume = if end - track_first >= spt {
                    te
                } else {
                    let mut off = (end - track_first + spt - j as u64) % spt;
                    while off < k + 1 {
                        off += spt;
                    }
                    tj + span(off)
                };
                return ImmediateTrack {
                    done: te,
                    first_in: first_in.unwrap_or(te),
                    at_mark: at_mark.filter(|_| lbn < mark && mark <= end),
                    last,
                    last_taken: x,
                    passed: k + 1,
                    resume,
                };
            }
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin;

    /// wd5000aaks with zero-latency reads and writes; the location of LBN `x` (track 0).
    fn drive() -> (Hdd, impl Fn(&Hdd, u64) -> Location) {
        let mut spec = builtin("wd5000aaks").unwrap();
        spec.cache.immediate_reads = true;
        spec.cache.immediate_writes = true;
        (Hdd::new(spec), |h: &Hdd, x: u64| h.geo.locate(x))
    }

    /// When sector `x`'s slot starts under the head, at or after `t`.
    fn starts(h: &Hdd, loc: &Location, t: u64) -> u64 {
        t + h.rot_wait(loc, t)
    }

    /// The time `k` sectors take to pass from `w`'s slot on its track.
    fn slots(h: &Hdd, w: &Location, k: u64) -> u64 {
        let z = &h.geo.zones[w.zone as usize];
        z.slot_start(w.slot as u64 + k) - z.slot_start(w.slot as u64)
    }

    /// The head lands 1 ns past the start of `w` after ten revolutions: when `w` started,
    /// the sector a zero-latency access takes first and when that one starts.
    fn landing_past(h: &Hdd, w: &Location, write: bool) -> (u64, u32, u64) {
        let tw = starts(h, w, 10 * h.rev);
        let (wait, j) = h.immediate_start(w, tw + 1, write).unwrap();
        (tw, j, tw + 1 + wait)
    }

    #[test]
    fn the_head_landing_inside_a_read_takes_it_at_once_and_ends_a_revolution_later() {
        let (h, at) = drive();
        let (w, rev) = (at(&h, 2), h.rev);
        // just past W's start: sector 3 is next
        let (tw, j, tj) = landing_past(&h, &w, false);
        assert_eq!(j, 3);
        assert_eq!(tj, starts(&h, &at(&h, 3), tw + 1));
        // request 2..10: 3..9 first, then 2 after the turn; done when 2 is in, one
        // revolution after 3 began
        let r = h.immediate_track(&w, 2, 10, j, tj, None, 6);
        assert_eq!(r.done, tj + rev);
        assert_eq!(r.first_in, r.done, "W is the last sector taken");
        assert_eq!(r.at_mark, Some(r.done), "the in-order data jumps to the end with W");
        assert_eq!(r.last_taken, 2);
        // without zero latency: W comes round a revolution after tw, then 8 sectors
        assert!(r.done < tw + rev + slots(&h, &w, 8));
    }

    #[test]
    fn landing_past_the_request_or_before_it_changes_nothing() {
        let (h, at) = drive();
        let (w, rev) = (at(&h, 2), h.rev);
        let sector = |k: u64| slots(&h, &w, k);
        let tw = starts(&h, &w, 10 * rev);
        // head at sector 20's start plus 1 ns: past the request 2..10, inside the window
        let t = starts(&h, &at(&h, 20), tw) + 1;
        let (wait, j) = h.immediate_start(&w, t, false).unwrap();
        assert_eq!(j, 21);
        let r = h.immediate_track(&w, 2, 10, j, t + wait, None, 10);
        // it reads 2..9 when they come round, as waiting for W would
        let w_next = starts(&h, &w, t);
        assert_eq!(r.done, w_next + sector(8));
        assert_eq!(r.first_in, w_next + sector(1));
        // before W, or at its very start: it waits for W
        assert_eq!(h.immediate_start(&w, tw - 1, false), None);
        assert_eq!(h.immediate_start(&w, tw, false), None);
        // reads only when the drive does them
        let (mut h2, _) = drive();
        h2.spec.cache.immediate_reads = false;
        assert_eq!(h2.immediate_start(&w, tw + 1, false), None);
        assert!(h2.immediate_start(&w, tw + 1, true).is_some());
    }

    #[test]
    fn a_write_takes_only_sectors_whose_data_is_buffered() {
        let (h, at) = drive();
        let (w, rev) = (at(&h, 2), h.rev);
        let (_, j, tj) = landing_past(&h, &w, true);
        // all data in long before: as a read, a revolution after j
        let early = WriteData { from: 0, per: 1, first: 0 };
        assert_eq!(h.immediate_track(&w, 2, 10, j, tj, Some((early, 2)), 10).done, tj + rev);
        // data arriving just as sector 3 comes round again (tj + rev): 3 began before its
        // data, 4..9 are taken out of order in that pass, 2 and 3 in the next; done when
        // 3 ends, two revolutions after j began
        let late = WriteData { from: tj + rev, per: 1, first: 0 };
        let r = h.immediate_track(&w, 2, 10, j, tj, Some((late, 2)), 10);
        let one = slots(&h, &at(&h, j as u64), 1);
        assert_eq!(r.done, tj + 2 * rev + one);
        assert_eq!(r.last_taken, 3);
    }

    #[test]
    fn zero_latency_reads_are_faster_on_average_and_by_less_than_a_revolution() {
        let mut spec = builtin("wd5000aaks").unwrap();
        spec.cache = crate::spec::CacheSpec::DISABLED;
        let mean = |immediate: bool| {
            let mut s = spec.clone();
            s.cache.immediate_reads = immediate;
            let mut h = Hdd::new(s);
            let (mut t, mut sum) = (headway_sched::Time(0), 0u64);
            for i in 0..500u64 {
                // 64-sector reads spread over the disk, 3 ms apart
                let lbn = (i * 7_919_993) % 900_000_000;
                let a = h.access(t, lbn, 64, headway_sched::Dir::Read);
                sum += a.done.0 - t.0;
                t = headway_sched::Time(a.done.0 + 3_000_000);
            }
            sum / 500
        };
        let (plain, immediate) = (mean(false), mean(true));
        assert!(immediate < plain, "{immediate} ns against {plain} ns");
        assert!(plain - immediate < spec_rev(), "{immediate} ns against {plain} ns");
    }

    fn spec_rev() -> u64 {
        Hdd::new(builtin("wd5000aaks").unwrap()).rev
    }
}

//! Buses shared by several drives of a run ([`headway_disk::BusSeat`]: DiskSim's exclusive
//! buses, `disksim_bus.c` and `disksim_diskctlr.c`).
//!
//! One drive holds a shared bus at a time. A drive asks for it twice per command:
//! - to **start** it: the controller sends the command down and the drive keeps the bus
//!   through its command overhead (and a write's data), until it disconnects
//!   ([`headway_disk::Hdd::disconnect`]); a command that never disconnects (a
//!   cache hit, a fast write) keeps it to its completion;
//! - to **finish** it: at the reselection, the drive asks again, and holds the bus through
//!   its data and completion. Waiting for the bus here delays the completion by the wait.
//!
//! Asking for a free bus takes it at once; a busy one queues the asker. When the holder
//! lets go, the waiter with the highest slot gets it (`Arbitration type = 1`; among equal
//! slots the first to ask), or the first to ask (`2`). A command to start is asked for by
//! the controller above the bus, whose slot is 0: under slot priority it goes after every
//! drive waiting to finish. Every acquisition costs the bus's arbitration time, during
//! which it already counts as held.
//!
//! This module keeps who holds each bus and who waits; [`super::block::Block`] moves its
//! members through their phases ([`Phase`]) and times their events.

use headway_disk::BusSeat;
use headway_sched::{Request, Time};

/// Where a member drive on a shared bus is with its command.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(super) enum Phase {
    /// No command.
    Idle,
    /// A dispatched request waits for the bus to start (queued, or granted and due).
    Start(Request),
    /// The command runs holding the bus: until `gone` when it disconnects, to its
    /// completion otherwise (`None`).
    Connected { disconnect: Option<(Time, Time)> },
    /// Disconnected; it asks for the bus again at `back`.
    Away { back: Time },
    /// It asked for the bus at `back` to finish (queued, or granted and due).
    Finish { back: Time },
    /// Holding the bus to finish; the command completes at `done`.
    Finishing { done: Time },
}

struct Bus {
    /// The member holding the bus (or granted it).
    owner: Option<usize>,
    /// Members waiting: (member, slot), in the order they asked.
    waiting: Vec<(usize, u32)>,
    by_slot: bool,
    arbitration: u64,
}

/// The run's shared buses and each member's seat.
pub(super) struct Buses {
    buses: Vec<Bus>,
    /// Per member: its bus and slot, when it shares one.
    seats: Vec<Option<(usize, u32)>>,
}

impl Buses {
    /// The shared buses of members seated as `seats` says (per member: its seat, if any).
    /// Only a bus two members of the run sit on is shared; `None` when there is none.
    pub fn new(seats: &[Option<&BusSeat>]) -> Option<Buses> {
        let mut names: Vec<&str> = Vec::new();
        let mut buses = Vec::new();
        let mut out = vec![None; seats.len()];
        for (m, s) in seats.iter().enumerate() {
            let Some(s) = s else { continue };
            if seats.iter().filter(|o| o.is_some_and(|o| o.bus == s.bus)).count() < 2 {
                continue;
            }
            let b = match names.iter().position(|n| *n == s.bus) {
                Some(b) => b,
                None => {
                    names.push(&s.bus);
                    buses.push(Bus {
                        owner: None,
                        waiting: Vec::new(),
                        by_slot: s.by_slot,
                        arbitration: s.arbitration.0,
                    });
                    names.len() - 1
                }
            };
            out[m] = Some((b, s.slot));
        }
        (!buses.is_empty()).then_some(Buses { buses, seats: out })
    }

    /// Whether member `m` shares a bus.
    #[inline]
    pub fn seated(&self, m: usize) -> bool {
        self.seats[m].is_some()
    }

    /// Member `m` asks for its bus at `now`, to start a command (the controller asks, at
    /// slot 0) or to finish one (at its own slot): the time it has it when the bus is free
    /// (now + the arbitration time), `None` when it must wait ([`Buses::release`] grants it).
    pub fn ask(&mut self, m: usize, now: Time, start: bool) -> Option<Time> {
        let (b, slot) = self.seats[m].expect("a seated member");
        let slot = if start { 0 } else { slot };
        let bus = &mut self.buses[b];
        if bus.owner.is_none() {
            bus.owner = Some(m);
            return Some(Time(now.0 + bus.arbitration));
        }
        debug_assert!(bus.owner != Some(m) && !bus.waiting.iter().any(|w| w.0 == m), "asked twice");
        bus.waiting.push((m, slot));
        None
    }

    /// Member `m` lets its bus go at `now`: the waiter who gets it next and when it has it.
    pub fn release(&mut self, m: usize, now: Time) -> Option<(usize, Time)> {
        let (b, _) = self.seats[m].expect("a seated member");
        let bus = &mut self.buses[b];
        debug_assert_eq!(bus.owner, Some(m), "released by its holder");
        bus.owner = None;
        if bus.waiting.is_empty() {
            return None;
        }
        // the highest slot (the first of equals), or the first to ask
        let i = match bus.by_slot {
            true => (0..bus.waiting.len()).rev().max_by_key(|&i| bus.waiting[i].1).expect("not empty"),
            false => 0,
        };
        let (next, _) = bus.waiting.remove(i);
        bus.owner = Some(next);
        Some((next, Time(now.0 + bus.arbitration)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headway_sched::Duration;

    fn seat(bus: &str, slot: u32, by_slot: bool) -> BusSeat {
        BusSeat { bus: bus.into(), slot, by_slot, arbitration: Duration(5) }
    }

    /// Four members on `bus5`, in slots 1-4.
    fn four(by_slot: bool) -> Buses {
        let seats: Vec<BusSeat> = (1..=4).map(|s| seat("bus5", s, by_slot)).collect();
        let refs: Vec<Option<&BusSeat>> = seats.iter().map(Some).collect();
        Buses::new(&refs).unwrap()
    }

    #[test]
    fn a_bus_of_one_member_is_not_shared() {
        let (a, b) = (seat("bus1", 1, true), seat("bus2", 1, true));
        assert!(Buses::new(&[Some(&a), Some(&b), None]).is_none());
        let c = seat("bus1", 2, true);
        let buses = Buses::new(&[Some(&a), Some(&b), Some(&c)]).unwrap();
        assert_eq!((buses.seated(0), buses.seated(1), buses.seated(2)), (true, false, true));
    }

    #[test]
    fn the_highest_slot_waiting_gets_the_bus_next_or_the_first_to_ask() {
        for (by_slot, order) in [(true, [3, 2, 1]), (false, [1, 3, 2])] {
            let mut b = four(by_slot);
            assert_eq!(b.ask(0, Time(100), true), Some(Time(105)), "a free bus, after the arbitration time");
            // members 1, 3, 2 (slots 2, 4, 3) queue in that order
            for m in [1, 3, 2] {
                assert_eq!(b.ask(m, Time(110), false), None);
            }
            let mut holder = 0;
            let mut got = Vec::new();
            for t in [200, 300, 400] {
                let (next, at) = b.release(holder, Time(t)).expect("a waiter");
                assert_eq!(at, Time(t + 5));
                got.push(next);
                holder = next;
            }
            assert_eq!(got, order, "by slot: {by_slot}");
            assert_eq!(b.release(holder, Time(500)), None, "nobody left");
            assert_eq!(b.ask(1, Time(600), false), Some(Time(605)), "free again");
        }
    }

    #[test]
    fn a_command_to_start_goes_after_the_drives_waiting_to_finish_under_slot_priority() {
        for (by_slot, order) in [(true, [3, 2, 1]), (false, [1, 2, 3])] {
            let mut b = four(by_slot);
            assert!(b.ask(0, Time(0), false).is_some());
            // member 1 asks to start (the controller's slot 0), then 2 and 3 to finish
            assert_eq!(b.ask(1, Time(1), true), None);
            assert_eq!(b.ask(2, Time(2), false), None);
            assert_eq!(b.ask(3, Time(3), false), None);
            let mut holder = 0;
            let mut got = Vec::new();
            for t in [10, 20, 30] {
                holder = b.release(holder, Time(t)).unwrap().0;
                got.push(holder);
            }
            assert_eq!(got, order, "by slot: {by_slot}");
        }
    }
}

//! The disk side of the controller: one queue per device behind it (the drive, and a
//! cache device), at most `Max per-disk pending count` at each device, each request
//! reaching its device 0.5 ms x scale after it leaves the queue; and the drive's idle timer.

use headway_sched::Dir;

use super::{CtlrCache, DiskJob, Due};

impl CtlrCache {
    /// Queue a request for the drive; it goes there when there is room.
    pub(super) fn issue(&mut self, s: u64, n: u32, dir: Dir, job: DiskJob) -> u64 {
        self.issue_to(0, s, n, dir, job)
    }

    /// Queue a request for device `d` (0: the drive, 1: the cache device).
    pub(super) fn issue_to(&mut self, d: usize, s: u64, n: u32, dir: Dir, job: DiskJob) -> u64 {
        let token = self.next_token;
        self.next_token += 1;
        self.disk.insert(token, job);
        self.shapes.insert(token, (d, s, n, dir));
        self.disk_queue[d].push(token, s, n, dir);
        if d == 0 {
            // a request in the drive's queue: the drive is not idle
            self.idle_gen += 1;
            self.idle_armed = false;
        }
        self.send_more(d);
        token
    }

    pub(super) fn send_more(&mut self, d: usize) {
        while self.disk_in[d] < self.c.disk_slots {
            let Some(w) = self.disk_queue[d].pop() else { break };
            self.disk_in[d] += 1;
            self.at(self.now + self.c.overhead.0, Due::Send(w.token));
            self.sending.insert(w.token, (d, w));
        }
    }

    /// Nothing queued for device `d` or at it.
    pub(super) fn disk_empty(&self, d: usize) -> bool {
        self.disk_in[d] == 0 && self.disk_queue[d].is_empty()
    }

    /// Restart the idle timer, if write-backs on idle are asked for.
    pub(super) fn arm_idle(&mut self) {
        let delay = match &self.dev {
            Some(dev) => dev.idle_delay,
            None => self.m.as_ref().and_then(|m| m.idle_delay),
        };
        if let Some(d) = delay {
            self.idle_gen += 1;
            self.idle_armed = true;
            self.at(self.now + d.0, Due::Idle(self.idle_gen));
        }
    }
}

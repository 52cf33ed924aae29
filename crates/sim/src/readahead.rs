//! Page-cache readahead for buffered reads (`direct=0`): what a synchronous reader's small
//! reads become by the time they reach the disk scheduler.
//!
//! Modelled on Linux's on-demand readahead, the mechanism both the Stream Scheduling paper
//! (000 Section 3.3: "Linux maintains two readahead windows ... prefetch requests issued for
//! one window are contiguous and sent to the scheduler together") and the Anticipatory
//! Scheduling paper (001 Section 2.1) describe:
//!
//! - One readahead state per file (here: per job region), in 4 KiB pages.
//! - A read that misses the cache at the start of the file, or right after the previous
//!   read, is *sequential*: the kernel reads an initial window — four times the request,
//!   rounded up to a power of two, at most `read_ahead_kb` — synchronously, and marks the
//!   page `async_size` pages before the window's end (the `PG_readahead` marker).
//! - When the reader touches the marked page, the next window — twice the current one, at
//!   most `read_ahead_kb` — is read *asynchronously*: the reader does not wait for it unless
//!   it catches up with it.
//! - A read elsewhere is random: just the pages asked for are read, and the state restarts.
//! - A page that has arrived is a hit: no disk request. A page still in flight makes the
//!   reader wait for the request carrying it.
//! - When the marked page is still in flight as the reader touches it, Linux 2.6.31's
//!   `do_generic_file_read` starts the next window at once (it checks `PageReadahead`
//!   before waiting for the page): the default here. seeds/000 §3.3 describes instead a
//!   quiet period, the next window going out only once the current one "is completed and
//!   its data is consumed": `readahead_after_io = 1` ([`Readahead::with_trigger_after_io`])
//!   holds the window back until the reader's first read after the marked page arrived.
//!
//! Only the populated stretch around the reader is remembered (`populated`), which is what
//! the decisions need: the model has no memory pressure and never evicts a page the reader
//! has yet to reach.
//!
//! Defaults: `read_ahead_kb` 128 KiB (Linux's default `read_ahead_kb`), initial window 4x
//! the request (Linux `get_init_ra_size` for small requests).

/// Page size, bytes.
pub const PAGE: u64 = 4096;
/// Linux's default `read_ahead_kb`.
pub const READ_AHEAD_KB: u64 = 128;

/// A stretch of pages `[start, end)`.
pub type Pages = (u64, u64);

/// What a read needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Pages to read now, the reader waits for them (`None`: nothing to read synchronously).
    pub sync: Option<Pages>,
    /// Pages to read ahead, the reader does not wait for them.
    pub read_ahead: Option<Pages>,
    /// The read's pages are all in flight in earlier requests: wait for the request that
    /// carries the last of them (its first page is given).
    pub wait_for: Option<u64>,
}

impl Plan {
    /// Everything asked for is cached.
    pub fn is_hit(&self) -> bool {
        self.sync.is_none() && self.wait_for.is_none()
    }
}

/// Per-file readahead state.
#[derive(Clone, Debug)]
pub struct Readahead {
    max_pages: u64,
    /// Current window.
    start: u64,
    size: u64,
    async_size: u64,
    /// Pages known cached or in flight: `[populated.0, populated.1)`.
    populated: Pages,
    /// In-flight requests: (first page, end page), oldest first.
    in_flight: Vec<Pages>,
    /// Page just past the previous read (sequential detection).
    prev_end: Option<u64>,
    /// Hold the next window until the marked page has arrived (`readahead_after_io`).
    after_io: bool,
    /// The marked page touched while in flight, and the file's size then: the window to
    /// start once it has arrived.
    deferred: Option<(u64, u64)>,
}

impl Readahead {
    pub fn new(read_ahead_kb: u64) -> Self {
        Readahead {
            max_pages: (read_ahead_kb * 1024 / PAGE).max(1),
            start: 0,
            size: 0,
            async_size: 0,
            populated: (0, 0),
            in_flight: Vec::new(),
            prev_end: None,
            after_io: false,
            deferred: None,
        }
    }

    /// Start the next window only once the page that triggers it has arrived (and the
    /// reader reads again), not while it is still in flight.
    pub fn with_trigger_after_io(mut self, on: bool) -> Self {
        self.after_io = on;
        self
    }

    /// The next window after the current one, now in flight (async), if the file has more.
    fn next_window(&mut self, file_pages: u64) -> Option<Pages> {
        let next = self.start + self.size;
        let size = (self.size * 2).min(self.max_pages).min(file_pages.saturating_sub(next));
        self.async_size = 0;
        if size == 0 {
            return None;
        }
        self.start = next;
        self.size = size;
        self.async_size = size;
        self.populated.1 = self.populated.1.max(next + size);
        self.in_flight.push((next, next + size));
        Some((next, next + size))
    }

    /// The request in flight that carries `page`.
    fn carrier_of(&self, page: u64) -> Option<Pages> {
        self.in_flight.iter().copied().find(|r| r.0 <= page && page < r.1)
    }

    fn in_flight_at(&self, page: u64) -> bool {
        self.carrier_of(page).is_some()
    }

    fn marker(&self) -> Option<u64> {
        (self.size > 0 && self.async_size > 0).then(|| self.start + self.size - self.async_size)
    }

    /// A read of pages `[first, end)` of a file of `file_pages` pages.
    pub fn read(&mut self, first: u64, end: u64, file_pages: u64) -> Plan {
        debug_assert!(first < end && end <= file_pages);
        let req = end - first;
        let mut plan = Plan { sync: None, read_ahead: None, wait_for: None };
        let cached = self.populated.0 <= first && end <= self.populated.1;
        if cached {
            // In flight? Wait for the request that carries the last page asked for.
            let any = || self.in_flight.iter().copied().find(|r| r.0 < end && first < r.1);
            plan.wait_for = self.carrier_of(end - 1).or_else(any).map(|r| r.0);
            // A window held back until its marked page arrived goes out now.
            if let Some((m, pages)) = self.deferred {
                if !self.in_flight_at(m) {
                    self.deferred = None;
                    plan.read_ahead = self.next_window(pages);
                }
            }
            // Touching the marker starts the next window asynchronously (or, with
            // `after_io`, once the marked page has arrived).
            if let Some(m) = self.marker() {
                if first <= m && m < end {
                    if self.after_io && self.in_flight_at(m) {
                        self.async_size = 0;
                        self.deferred = Some((m, file_pages));
                    } else {
                        plan.read_ahead = self.next_window(file_pages);
                    }
                }
            }
        } else {
            self.deferred = None;
            let sequential = first == 0 || self.prev_end == Some(first) || first == self.populated.1;
            if sequential {
                let init = (req.next_power_of_two() * 4).min(self.max_pages).max(req);
                let size = init.min(file_pages - first);
                self.start = first;
                self.size = size;
                self.async_size = size - req.min(size);
                let contiguous = first == self.populated.1;
                self.populated =
                    if contiguous { (self.populated.0, first + size) } else { (first, first + size) };
                plan.sync = Some((first, first + size));
                self.in_flight.push((first, first + size));
            } else {
                // Random: read what was asked, forget the stream.
                self.start = first;
                self.size = 0;
                self.async_size = 0;
                self.populated = (first, end);
                plan.sync = Some((first, end));
                self.in_flight.push((first, end));
            }
        }
        self.prev_end = Some(end);
        plan
    }

    /// The request starting at page `first` has completed: its pages are cached.
    pub fn arrived(&mut self, first: u64) {
        if let Some(i) = self.in_flight.iter().position(|r| r.0 == first) {
            self.in_flight.remove(i);
        }
    }

    /// Is any request in flight?
    pub fn busy(&self) -> bool {
        !self.in_flight.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages read by a sequential 4 KiB reader: (sync, async) request sizes in pages.
    #[test]
    fn sequential_reader_ramps_up_to_the_maximum_window() {
        let mut ra = Readahead::new(READ_AHEAD_KB);
        let file = 10_000;
        let mut syncs = Vec::new();
        let mut asyncs = Vec::new();
        for p in 0..200 {
            let plan = ra.read(p, p + 1, file);
            if let Some((s, e)) = plan.sync {
                syncs.push(e - s);
                ra.arrived(s);
            }
            if let Some((s, e)) = plan.read_ahead {
                asyncs.push(e - s);
                ra.arrived(s); // arrives before the reader gets there
            }
        }
        assert_eq!(syncs, vec![4], "one synchronous initial window of 4x the request");
        assert_eq!(&asyncs[..4], &[8, 16, 32, 32], "windows double up to read_ahead_kb");
        let total: u64 = syncs.iter().chain(&asyncs).sum();
        assert!(total >= 200, "every page the reader touched was read");
    }

    /// `readahead_after_io`: a marker touched while its page is in flight starts nothing;
    /// the reader's first read after that page arrived starts the window.
    #[test]
    fn after_io_holds_the_next_window_until_the_marked_page_arrived() {
        let mut ra = Readahead::new(READ_AHEAD_KB).with_trigger_after_io(true);
        let p0 = ra.read(0, 1, 1000);
        assert_eq!(p0.sync, Some((0, 4)));
        // page 1 is the marker (window 0..4, async 3), still in flight: nothing goes out
        let p1 = ra.read(1, 2, 1000);
        assert_eq!(p1.wait_for, Some(0));
        assert_eq!(p1.read_ahead, None);
        // still in flight: still nothing
        assert_eq!(ra.read(2, 3, 1000).read_ahead, None);
        ra.arrived(0);
        // the first read after it arrived starts the window the marker asked for
        let p3 = ra.read(3, 4, 1000);
        assert!(p3.is_hit());
        assert_eq!(p3.read_ahead, Some((4, 12)));
        // and only once
        assert_eq!(ra.read(3, 4, 1000).read_ahead, None);
        // without the option the marker starts it at once (Linux)
        let mut linux = Readahead::new(READ_AHEAD_KB);
        linux.read(0, 1, 1000);
        assert_eq!(linux.read(1, 2, 1000).read_ahead, Some((4, 12)));
    }

    #[test]
    fn reader_catching_up_waits_for_the_request_in_flight() {
        let mut ra = Readahead::new(READ_AHEAD_KB);
        let p0 = ra.read(0, 1, 1000);
        assert_eq!(p0.sync, Some((0, 4)));
        // page 1 is in flight with the first window
        let p1 = ra.read(1, 2, 1000);
        assert_eq!(p1.wait_for, Some(0));
        assert!(p1.sync.is_none());
        // marker at page 1 (window 0..4, async 3): next window 4..12 goes out
        assert_eq!(p1.read_ahead, Some((4, 12)));
        ra.arrived(0);
        assert!(ra.read(2, 3, 1000).is_hit());
        assert_eq!(ra.read(4, 5, 1000).wait_for, Some(4));
    }

    #[test]
    fn random_reads_read_only_what_is_asked() {
        let mut ra = Readahead::new(READ_AHEAD_KB);
        ra.read(0, 1, 1000);
        ra.arrived(0);
        let p = ra.read(500, 501, 1000);
        assert_eq!(p.sync, Some((500, 501)));
        assert_eq!(p.read_ahead, None);
        ra.arrived(500);
        // sequential after the random read starts a new stream
        let p = ra.read(501, 502, 1000);
        assert_eq!(p.sync, Some((501, 505)));
    }

    #[test]
    fn windows_stop_at_the_end_of_the_file() {
        let mut ra = Readahead::new(READ_AHEAD_KB);
        let p = ra.read(0, 1, 3);
        assert_eq!(p.sync, Some((0, 3)));
        ra.arrived(0);
        for pg in 1..3 {
            let p = ra.read(pg, pg + 1, 3);
            assert!(p.is_hit() && p.read_ahead.is_none(), "{p:?}");
        }
    }
}

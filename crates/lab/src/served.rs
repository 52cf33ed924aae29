//! What the emulated drive did, read back from a server's request log, and how a
//! simulator replay of the same log compares with it.
//!
//! `headway serve --trace` writes blkparse text with a `Q` (arrival), `D` (dispatch to the
//! drive) and `C` (completion) line per request (crates/nbd/src/tracelog.rs). A *command*
//! is what the drive served: the requests dispatched at one instant (the scheduler may
//! merge several into one); its service time is its completion less its dispatch. A
//! request's response time is its completion less its arrival. Flushes and trims are left
//! out: the simulator's replay serves reads and writes.
//!
//! [`compare`] sets the emulated service times beside a replay's (the simulator's
//! `head_trace`): the relative difference of their means and the Kolmogorov-Smirnov
//! distance of their distributions (the largest gap between the two CDFs).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;

use serde::Serialize;

/// The emulated drive's commands and requests, from a trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Served {
    /// Service time of each command, ns, in dispatch order.
    pub service_ns: Vec<u64>,
    /// Every completed read or write, in completion order.
    pub requests: Vec<Request>,
}

/// One read or write as the trace has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The server's connection number (the trace's PID).
    pub connection: u32,
    pub arrival_ns: u64,
    pub dispatch_ns: u64,
    pub complete_ns: u64,
    pub write: bool,
    pub sector: u64,
    pub sectors: u64,
}

/// What reached the server, and what it sent to the drive, between the workload's
/// markers (the whole trace when the markers are missing).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WorkloadCounts {
    /// Whether both markers were found (else: the whole trace).
    pub marked: bool,
    /// The window, seconds from the server's start.
    pub from_s: f64,
    pub to_s: f64,
    /// Requests that arrived in the window.
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
    /// Commands dispatched to the drive in the window (requests dispatched together are one
    /// command: the scheduler merged them).
    pub drive_reads: u64,
    pub drive_read_bytes: u64,
    pub drive_writes: u64,
    pub drive_write_bytes: u64,
    /// Commands that did not start where the drive's previous command ended (in dispatch
    /// order): the drive's seeks, as a sequential-or-not count.
    pub seeks: u64,
}

/// Response times over a window: at the server (a request's arrival to its completion:
/// the time the server's scheduler and the drive took) and at the drive (a command's
/// dispatch to its completion), with the server's queue.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Latencies {
    /// Each request arriving in the window, arrival to completion, ns, sorted.
    pub server_ns: Vec<u64>,
    /// Each command dispatched in the window, dispatch to completion, ns, sorted.
    pub drive_ns: Vec<u64>,
    /// Requests at the server (arrived, not completed), averaged over the window.
    pub mean_outstanding: f64,
    /// The most requests at the server at once in the window.
    pub max_outstanding: u64,
}

/// The `q` quantile (0..=1) of sorted `v` by nearest rank, 0 when empty.
pub fn quantile(v: &[u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let rank = (q * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Standard deviation over mean of `v` (0 when empty or all zero).
pub fn variation(v: &[u64]) -> f64 {
    let m = mean(v);
    if m <= 0.0 {
        return 0.0;
    }
    let var = v.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / v.len() as f64;
    var.sqrt() / m
}

impl Served {
    /// [`Latencies`] of the window `from..to` (ns from the server's start): requests that
    /// arrived inside it, commands dispatched inside it, the queue's time average over it.
    pub fn latencies(&self, from: u64, to: u64) -> Latencies {
        let inside = |t: u64| t > from && t < to;
        let mut out = Latencies::default();
        // dispatch time -> the command's latest completion
        let mut commands: BTreeMap<u64, u64> = BTreeMap::new();
        // (time, +1 arrival / -1 completion) for the queue's peak
        let mut events: Vec<(u64, i64)> = Vec::new();
        let mut area = 0u128;
        for r in &self.requests {
            if inside(r.arrival_ns) {
                out.server_ns.push(r.complete_ns.saturating_sub(r.arrival_ns));
            }
            if inside(r.dispatch_ns) {
                let c = commands.entry(r.dispatch_ns).or_insert(r.complete_ns);
                *c = (*c).max(r.complete_ns);
            }
            let (a, c) = (r.arrival_ns.max(from), r.complete_ns.min(to));
            if a < c {
                area += (c - a) as u128;
                events.push((a, 1));
                events.push((c, -1));
            }
        }
        out.drive_ns = commands.iter().map(|(d, c)| c - d).collect();
        out.server_ns.sort_unstable();
        out.drive_ns.sort_unstable();
        if to > from {
            out.mean_outstanding = area as f64 / (to - from) as f64;
        }
        // completions before arrivals at the same instant: a reply and the next request
        // in one nanosecond are not two at once
        events.sort_unstable();
        let mut n = 0i64;
        for (_, d) in events {
            n += d;
            out.max_outstanding = out.max_outstanding.max(n.max(0) as u64);
        }
        out
    }

    /// The clients' round trips, ns: per connection, each request's arrival less the
    /// completion before it, when every earlier request of the connection had completed
    /// (the client waited on its reply: a synchronous client's time between requests).
    pub fn client_round_trips(&self) -> Vec<u64> {
        let mut by_conn: HashMap<u32, Vec<(u64, u64)>> = HashMap::new();
        for r in &self.requests {
            by_conn.entry(r.connection).or_default().push((r.arrival_ns, r.complete_ns));
        }
        let mut gaps = Vec::new();
        for mut reqs in by_conn.into_values() {
            reqs.sort_unstable();
            let mut done: Option<u64> = None;
            for (arrival, complete) in reqs {
                if let Some(d) = done.filter(|&d| d <= arrival) {
                    gaps.push(arrival - d);
                }
                // the latest completion of the requests that arrived so far; one still in
                // flight at the next arrival (a later completion) makes that no round trip
                done = Some(done.map_or(complete, |d| d.max(complete)));
            }
        }
        gaps.sort_unstable();
        gaps
    }

    /// The drive's busy time a command, ns: the union of its commands' dispatch-to-completion
    /// spans over their number (requests dispatched together are one command). With one
    /// command at a time it is the mean service time; with a queueing drive the overlapping
    /// spans count once, so queueing inside the drive is not counted as work. `None` without
    /// commands.
    pub fn busy_ns_per_command(&self) -> Option<f64> {
        // dispatch time -> the command's completion (its requests' latest)
        let mut spans: BTreeMap<u64, u64> = BTreeMap::new();
        for r in &self.requests {
            let c = spans.entry(r.dispatch_ns).or_insert(r.complete_ns);
            *c = (*c).max(r.complete_ns);
        }
        if spans.is_empty() {
            return None;
        }
        let (mut busy, mut end) = (0u64, 0u64);
        for (&from, &to) in &spans {
            let from = from.max(end);
            if to > from {
                busy += to - from;
                end = to;
            }
        }
        Some(busy as f64 / spans.len() as f64)
    }

    /// Response time of each read or write request (completion less arrival), ns, in
    /// completion order.
    pub fn response_ns(&self) -> Vec<u64> {
        self.requests.iter().map(|r| r.complete_ns.saturating_sub(r.arrival_ns)).collect()
    }

    /// The workload's window: from the completion of the first begin marker (a read starting
    /// at a sector in `begins`) to the arrival of the last end marker (in `ends`).
    pub fn window(&self, begins: &[u64], ends: &[u64]) -> Option<(u64, u64)> {
        let marker = |r: &&Request, at: &[u64]| !r.write && at.contains(&r.sector);
        let from = self.requests.iter().filter(|r| marker(r, begins)).map(|r| r.complete_ns).min()?;
        let to = self.requests.iter().filter(|r| marker(r, ends)).map(|r| r.arrival_ns).max()?;
        (from <= to).then_some((from, to))
    }

    /// [`WorkloadCounts`] between the markers.
    pub fn workload(&self, begins: &[u64], ends: &[u64]) -> WorkloadCounts {
        let window = self.window(begins, ends);
        let (from, to) = window.unwrap_or((0, u64::MAX));
        let mut c = WorkloadCounts { marked: window.is_some(), ..WorkloadCounts::default() };
        // dispatch time -> (write, bytes, first sector, end sector) of the command
        let mut commands: BTreeMap<u64, (bool, u64, u64, u64)> = BTreeMap::new();
        let mut first = u64::MAX;
        let mut last = 0;
        for r in &self.requests {
            let bytes = r.sectors * 512;
            if r.arrival_ns > from && r.arrival_ns < to {
                first = first.min(r.arrival_ns);
                last = last.max(r.complete_ns);
                if r.write {
                    c.writes += 1;
                    c.write_bytes += bytes;
                } else {
                    c.reads += 1;
                    c.read_bytes += bytes;
                }
            }
            if r.dispatch_ns > from && r.dispatch_ns < to {
                let cmd = commands.entry(r.dispatch_ns).or_insert((r.write, 0, u64::MAX, 0));
                cmd.1 += bytes;
                cmd.2 = cmd.2.min(r.sector);
                cmd.3 = cmd.3.max(r.sector + r.sectors);
            }
        }
        let mut end: Option<u64> = None;
        for (write, bytes, start, stop) in commands.into_values() {
            if end.is_some_and(|e| e != start) {
                c.seeks += 1;
            }
            end = Some(stop);
            if write {
                c.drive_writes += 1;
                c.drive_write_bytes += bytes;
            } else {
                c.drive_reads += 1;
                c.drive_read_bytes += bytes;
            }
        }
        let (from, to) = window.unwrap_or((if first == u64::MAX { 0 } else { first }, last));
        c.from_s = from as f64 / 1e9;
        c.to_s = to as f64 / 1e9;
        c
    }
}

/// Seconds with up to nine decimals, as ns.
fn seconds_ns(s: &str) -> Option<u64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 {
        return None;
    }
    let frac_ns: u64 = if frac.is_empty() { 0 } else { format!("{frac:0<9}").parse().ok()? };
    int.parse::<u64>().ok()?.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// Read a server's blkparse trace.
pub fn read_served(path: &Path) -> Result<Served, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_served(&text).map_err(|(line, msg)| format!("{}:{line}: {msg}", path.display()))
}

/// [`read_served`] on the text; an error gives the 1-based line.
pub fn parse_served(text: &str) -> Result<Served, (usize, String)> {
    // per (connection, rwbs, sector, sectors): requests (arrival, dispatch) waiting for D, then C
    type Key = (u32, String, u64, u64);
    let mut queued: HashMap<Key, VecDeque<(u64, Option<u64>)>> = HashMap::new();
    // dispatch time -> latest completion of the command's requests
    let mut commands: BTreeMap<u64, u64> = BTreeMap::new();
    let mut out = Served::default();
    for (i, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        let bad = |what: &str| (i + 1, format!("{what} in `{line}`"));
        if f.len() < 10 {
            return Err(bad("expected `dev cpu seq time pid action rwbs sector + sectors [command]`"));
        }
        let t = seconds_ns(f[3]).ok_or_else(|| bad("bad time"))?;
        let pid: u32 = f[4].parse().map_err(|_| bad("bad pid"))?;
        let (action, rwbs) = (f[5], f[6]);
        if !(rwbs.starts_with('R') || rwbs.starts_with('W')) {
            continue;
        }
        let sector: u64 = f[7].parse().map_err(|_| bad("bad sector"))?;
        let len: u64 = f[9].parse().map_err(|_| bad("bad length"))?;
        let key = (pid, rwbs.to_string(), sector, len);
        match action {
            "Q" => queued.entry(key).or_default().push_back((t, None)),
            "D" => {
                let q = queued.get_mut(&key).and_then(|q| q.iter_mut().find(|e| e.1.is_none()));
                q.ok_or_else(|| bad("a dispatch with no arrival"))?.1 = Some(t);
            }
            "C" => {
                let q = queued.get_mut(&key).ok_or_else(|| bad("a completion with no arrival"))?;
                let at = q
                    .iter()
                    .position(|e| e.1.is_some())
                    .ok_or_else(|| bad("a completion with no dispatch"))?;
                let (arrived, dispatched) = q.remove(at).expect("found");
                let dispatched = dispatched.expect("found dispatched");
                out.requests.push(Request {
                    connection: pid,
                    arrival_ns: arrived,
                    dispatch_ns: dispatched,
                    complete_ns: t,
                    write: rwbs.starts_with('W'),
                    sector,
                    sectors: len,
                });
                let c = commands.entry(dispatched).or_insert(t);
                *c = (*c).max(t);
            }
            _ => {}
        }
    }
    out.service_ns = commands.iter().map(|(d, c)| c - d).collect();
    Ok(out)
}

pub fn mean(v: &[u64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
    }
}

/// The largest distance between the empirical CDFs of `a` and `b` (0 when either is empty).
pub fn ks_distance(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_unstable();
    b.sort_unstable();
    let (mut i, mut j, mut d) = (0usize, 0usize, 0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] == x {
            i += 1;
        }
        while j < b.len() && b[j] == x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

/// The emulated run beside a simulator replay of its trace.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ReplayComparison {
    /// `open` (requests at their recorded times) or `closed` (each connection a
    /// synchronous issuer with the recorded think times).
    pub mode: String,
    pub commands_emulated: usize,
    pub commands_simulated: usize,
    pub mean_service_ns_emulated: f64,
    pub mean_service_ns_simulated: f64,
    /// (simulated - emulated) / emulated
    pub mean_service_diff: f64,
    /// Kolmogorov-Smirnov distance between the two service-time distributions.
    pub service_cdf_distance: f64,
    /// The drive's busy time, all commands' service summed, ns: unlike the mean, it does
    /// not depend on how many requests each side merged into one command.
    pub busy_ns_emulated: u64,
    pub busy_ns_simulated: u64,
    /// (simulated - emulated) / emulated
    pub busy_diff: f64,
    pub mean_response_ns_emulated: f64,
    pub mean_response_ns_simulated: f64,
}

/// Compare `served` with a replay's command service times and mean response time.
pub fn compare(
    mode: &str,
    served: &Served,
    sim_service_ns: &[u64],
    sim_mean_response_ns: f64,
) -> ReplayComparison {
    let (e, s) = (mean(&served.service_ns), mean(sim_service_ns));
    let (be, bs): (u64, u64) = (served.service_ns.iter().sum(), sim_service_ns.iter().sum());
    ReplayComparison {
        mode: mode.to_string(),
        commands_emulated: served.service_ns.len(),
        commands_simulated: sim_service_ns.len(),
        mean_service_ns_emulated: e,
        mean_service_ns_simulated: s,
        mean_service_diff: if e > 0.0 { (s - e) / e } else { 0.0 },
        service_cdf_distance: ks_distance(&served.service_ns, sim_service_ns),
        busy_ns_emulated: be,
        busy_ns_simulated: bs,
        busy_diff: if be > 0 { (bs as f64 - be as f64) / be as f64 } else { 0.0 },
        mean_response_ns_emulated: mean(&served.response_ns()),
        mean_response_ns_simulated: sim_mean_response_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_round_trips_are_the_gaps_of_waiting_connections() {
        // connection 1: synchronous, replies at 1.000100 and 1.000300, next requests 30 and
        // 50 us later; connection 2 has two in flight: its second arrival is no round trip,
        // its third (after both replies) is one
        let t = "\
43,0 0 1 1.000000000 1 Q R 0 + 8 [nbd-conn1]
43,0 0 2 1.000000000 1 D R 0 + 8 [nbd-conn1]
43,0 0 3 1.000100000 1 C R 0 + 8 [nbd-conn1]
43,0 0 4 1.000130000 1 Q R 8 + 8 [nbd-conn1]
43,0 0 5 1.000140000 2 Q R 0 + 8 [nbd-conn2]
43,0 0 6 1.000150000 2 Q R 8 + 8 [nbd-conn2]
43,0 0 7 1.000150000 1 D R 8 + 8 [nbd-conn1]
43,0 0 8 1.000300000 1 C R 8 + 8 [nbd-conn1]
43,0 0 9 1.000300000 2 D R 0 + 8 [nbd-conn2]
43,0 0 10 1.000350000 1 Q R 16 + 8 [nbd-conn1]
43,0 0 11 1.000350000 1 D R 16 + 8 [nbd-conn1]
43,0 0 12 1.000360000 1 C R 16 + 8 [nbd-conn1]
43,0 0 13 1.000400000 2 C R 0 + 8 [nbd-conn2]
43,0 0 14 1.000400000 2 D R 8 + 8 [nbd-conn2]
43,0 0 15 1.000500000 2 C R 8 + 8 [nbd-conn2]
43,0 0 16 1.000520000 2 Q R 16 + 8 [nbd-conn2]
43,0 0 17 1.000520000 2 D R 16 + 8 [nbd-conn2]
43,0 0 18 1.000600000 2 C R 16 + 8 [nbd-conn2]
";
        let s = parse_served(t).unwrap();
        assert_eq!(s.requests.iter().filter(|r| r.connection == 2).count(), 3);
        assert_eq!(s.client_round_trips(), vec![20_000, 30_000, 50_000]);
    }

    #[test]
    fn commands_and_responses_from_q_d_c() {
        // two reads merged into one command at 1.0 s, done at 1.010; a write alone; a flush
        let t = "\
43,0 0 1 0.990000000 1 Q R 0 + 8 [nbd-conn1]
43,0 0 2 0.995000000 1 Q R 8 + 8 [nbd-conn1]
43,0 0 3 1.000000000 1 D R 0 + 8 [nbd-conn1]
43,0 0 4 1.000000000 1 D R 8 + 8 [nbd-conn1]
43,0 0 5 1.010000000 1 C R 0 + 8 [nbd-conn1]
43,0 0 6 1.010000000 1 C R 8 + 8 [nbd-conn1]
43,0 0 7 1.5 2 Q WF 100 + 8 [nbd-conn2]
43,0 0 8 1.5 2 D WF 100 + 8 [nbd-conn2]
43,0 0 9 1.504 2 C WF 100 + 8 [nbd-conn2]
43,0 0 10 1.6 2 Q FN 0 + 0 [nbd-conn2]
43,0 0 11 1.7 2 C FN 0 + 0 [nbd-conn2]
";
        let s = parse_served(t).unwrap();
        assert_eq!(s.service_ns, vec![10_000_000, 4_000_000]);
        assert_eq!(s.response_ns(), vec![20_000_000, 15_000_000, 4_000_000]);
    }

    #[test]
    fn latencies_over_a_window() {
        // window 1.0-2.0 s: two reads arrive at 1.1 and 1.2, dispatched together at 1.3
        // (one command), done at 1.5; a write arrives at 1.6, served 1.6-1.7; one request
        // before the window (0.5-0.6) and one straddling its start (0.9-1.2)
        let t = "\
43,0 0 1 0.5 1 Q W 0 + 8 [c]
43,0 0 2 0.5 1 D W 0 + 8 [c]
43,0 0 3 0.6 1 C W 0 + 8 [c]
43,0 0 4 0.9 1 Q R 500 + 8 [c]
43,0 0 5 0.9 1 D R 500 + 8 [c]
43,0 0 6 1.2 1 C R 500 + 8 [c]
43,0 0 7 1.1 1 Q R 8 + 8 [c]
43,0 0 8 1.2 1 Q R 16 + 8 [c]
43,0 0 9 1.3 1 D R 8 + 8 [c]
43,0 0 10 1.3 1 D R 16 + 8 [c]
43,0 0 11 1.5 1 C R 8 + 8 [c]
43,0 0 12 1.5 1 C R 16 + 8 [c]
43,0 0 13 1.6 1 Q W 24 + 8 [c]
43,0 0 14 1.6 1 D W 24 + 8 [c]
43,0 0 15 1.7 1 C W 24 + 8 [c]
";
        let s = parse_served(t).unwrap();
        let l = s.latencies(1_000_000_000, 2_000_000_000);
        assert_eq!(l.server_ns, vec![100_000_000, 300_000_000, 400_000_000]);
        assert_eq!(l.drive_ns, vec![100_000_000, 200_000_000]);
        // in the window: 0.2 s of the straddler + 0.4 + 0.3 + 0.1 over 1 s
        assert!((l.mean_outstanding - 1.0).abs() < 1e-9, "{l:?}");
        // at 1.1-1.2 the straddler and the first read, and the second read arrives as the
        // straddler completes: two at most
        assert_eq!(l.max_outstanding, 2);
        assert_eq!(quantile(&l.server_ns, 0.5), 300_000_000);
        assert_eq!(quantile(&l.server_ns, 0.0), 100_000_000);
        assert_eq!(quantile(&l.server_ns, 1.0), 400_000_000);
        assert_eq!(quantile(&[], 0.5), 0);
        let cv = variation(&[1, 3]);
        assert!((cv - 0.5).abs() < 1e-12, "{cv}");
        assert_eq!(variation(&[]), 0.0);
    }

    #[test]
    fn workload_counts_lie_between_the_markers() {
        // a request before the begin marker (sector 99) and one after the end marker (98)
        // are left out; two reads merged into one command count as one drive read
        let t = "\
43,0 0 1 0.5 1 Q W 0 + 8 [c]
43,0 0 2 0.5 1 D W 0 + 8 [c]
43,0 0 3 0.6 1 C W 0 + 8 [c]
43,0 0 4 1.0 1 Q R 99 + 8 [c]
43,0 0 5 1.0 1 D R 99 + 8 [c]
43,0 0 6 1.1 1 C R 99 + 8 [c]
43,0 0 7 1.2 1 Q R 0 + 8 [c]
43,0 0 8 1.2 1 Q R 8 + 8 [c]
43,0 0 9 1.3 1 D R 0 + 8 [c]
43,0 0 10 1.3 1 D R 8 + 8 [c]
43,0 0 11 1.4 1 C R 0 + 8 [c]
43,0 0 12 1.4 1 C R 8 + 8 [c]
43,0 0 13 1.5 1 Q W 16 + 16 [c]
43,0 0 14 1.5 1 D W 16 + 16 [c]
43,0 0 15 1.6 1 C W 16 + 16 [c]
43,0 0 16 2.0 1 Q R 98 + 8 [c]
43,0 0 17 2.0 1 D R 98 + 8 [c]
43,0 0 18 2.1 1 C R 98 + 8 [c]
43,0 0 19 2.2 1 Q W 0 + 8 [c]
43,0 0 20 2.2 1 D W 0 + 8 [c]
43,0 0 21 2.3 1 C W 0 + 8 [c]
";
        let s = parse_served(t).unwrap();
        let c = s.workload(&[99], &[98]);
        assert!(c.marked);
        assert_eq!((c.from_s, c.to_s), (1.1, 2.0));
        assert_eq!((c.reads, c.read_bytes, c.writes, c.write_bytes), (2, 8192, 1, 8192));
        assert_eq!(
            (c.drive_reads, c.drive_read_bytes, c.drive_writes, c.drive_write_bytes),
            (1, 8192, 1, 8192)
        );
        // without markers: the whole trace, markers and all
        let all = s.workload(&[7], &[6]);
        assert!(!all.marked);
        assert_eq!((all.reads, all.writes, all.drive_reads, all.drive_writes), (4, 3, 3, 3));
        // in the window the merged read (0-16) runs on into the write at 16: no seek; over
        // the whole trace, 8 -> 99, 107 -> 0, 32 -> 98 and 106 -> 0 are
        assert_eq!(c.seeks, 0);
        assert_eq!(all.seeks, 4);
    }

    #[test]
    fn the_drives_busy_time_counts_overlapping_commands_once() {
        let req = |d: f64, c: f64, sector: u64| Request {
            connection: 1,
            arrival_ns: 0,
            dispatch_ns: (d * 1e9) as u64,
            complete_ns: (c * 1e9) as u64,
            write: false,
            sector,
            sectors: 8,
        };
        // one at a time: 1.0-1.1 and 2.0-2.3, the mean service 0.2 s
        let one = Served { service_ns: Vec::new(), requests: vec![req(1.0, 1.1, 0), req(2.0, 2.3, 8)] };
        assert!((one.busy_ns_per_command().unwrap() - 0.2e9).abs() < 1.0);
        // queued: 1.0-1.4 and 1.1-1.5 overlap (busy 0.5 s), two requests merged into the
        // command dispatched at 1.1: two commands, 0.25 s each
        let q = Served {
            service_ns: Vec::new(),
            requests: vec![req(1.0, 1.4, 0), req(1.1, 1.5, 64), req(1.1, 1.5, 72)],
        };
        assert!((q.busy_ns_per_command().unwrap() - 0.25e9).abs() < 1.0);
        assert_eq!(Served::default().busy_ns_per_command(), None);
    }

    #[test]
    fn a_completion_without_its_dispatch_is_an_error_with_its_line() {
        let e = parse_served("43,0 0 1 0.1 1 Q R 0 + 8 [c]\n43,0 0 2 0.2 1 C R 0 + 8 [c]\n").unwrap_err();
        assert_eq!(e.0, 2);
        assert!(parse_served("43,0 0 1 x 1 Q R 0 + 8 [c]\n").is_err());
    }

    #[test]
    fn ks_distance_of_samples() {
        assert_eq!(ks_distance(&[1, 2, 3], &[1, 2, 3]), 0.0);
        assert_eq!(ks_distance(&[1, 2], &[3, 4]), 1.0);
        // F_a(2) = 1, F_b(2) = 0.5
        assert!((ks_distance(&[1, 2], &[1, 3]) - 0.5).abs() < 1e-12);
        assert_eq!(ks_distance(&[], &[1]), 0.0);
        let c = compare(
            "open",
            &Served {
                service_ns: vec![10, 10],
                requests: vec![Request {
                    connection: 1,
                    arrival_ns: 0,
                    dispatch_ns: 0,
                    complete_ns: 20,
                    write: false,
                    sector: 0,
                    sectors: 8,
                }],
            },
            &[11, 11],
            25.0,
        );
        assert!((c.mean_service_diff - 0.1).abs() < 1e-12);
        assert_eq!((c.busy_ns_emulated, c.busy_ns_simulated), (20, 22));
        // the same busy time in fewer, longer commands: the means differ, the busy time not
        let merged = compare("open", &Served { service_ns: vec![10, 10], ..Served::default() }, &[20], 0.0);
        assert_eq!((merged.mean_service_diff, merged.busy_diff), (1.0, 0.0));
        assert_eq!(c.service_cdf_distance, 1.0);
    }
}

//! The IO-path paper (seeds/002) §2, Figure 1: the LL workload's access pattern — each
//! request's start address against its arrival time (Ext3, AS, the 18 GB disk) — drawn from
//! the server's request log of that run of Figures 2-6.
//!
//! PostMark's phases are cut by PostMark's own clock: it creates its pool of files, runs
//! its transactions, then deletes what is left, and reports the creation rate of the pool
//! ("created alone", files over the creation phase's seconds) and the transactions'
//! seconds. The creation phase is therefore the pool's files over that rate from the
//! workload's start, and the transactions follow for their seconds. PostMark counts whole
//! seconds, so each phase is trimmed by a second at both ends.
//!
//! The paper's statements (words: shape only):
//! * "During the file creation phase, the disk access pattern is mostly sequential": more
//!   than half the creation phase's requests are near one of the [`RECENT`] requests that
//!   arrived before — they start within [`NEAR_SECTORS`] of its end. (A file system's
//!   writeback interleaves a few ascending streams — file data, the journal — and sends
//!   the pieces of one file's extent out of order: adjacency alone would call a straight
//!   line on the paper's plot random.)
//! * "For the file access phase ... the access pattern is random": the transactions'
//!   requests less often near a recent one than the creation's.
//! * "straight lines" against "a block of numerous dots": the creation's addresses rise
//!   with time (Spearman's rank correlation of arrival and address at least
//!   [`LINE`]), and more so than the transactions' addresses.

use super::super::Check;
use crate::results::PostmarkReport;
use crate::served::Request;

/// How far from a recent request's end a request may start and still be near it (1 MiB).
pub const NEAR_SECTORS: u64 = 2048;
/// How many of the requests that arrived just before are looked at (QEMU's NBD client
/// keeps up to 16 in flight, so their arrival order is not their issue order).
pub const RECENT: usize = 16;
/// "Mostly sequential": more than this share.
pub const MOSTLY: f64 = 0.5;
/// "Straight lines": at least this rank correlation of arrival and address.
pub const LINE: f64 = 0.5;

const SECOND: u64 = 1_000_000_000;

/// The creation phase and the transactions as windows of the server's clock, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phases {
    pub creation: (u64, u64),
    pub transactions: (u64, u64),
}

/// PostMark's phases in a workload starting at `from` ns, of a pool of `files`; `None`
/// when either phase is too short to trim (two seconds or less).
pub fn phases(from: u64, files: u32, pm: &PostmarkReport) -> Option<Phases> {
    let rate = pm.files_created_alone_per_s;
    if !(rate.is_finite() && rate > 0.0) {
        return None;
    }
    let creation = (f64::from(files) / rate * 1e9).round() as u64;
    let tx = (pm.transactions_s * 1e9).round() as u64;
    (creation > 2 * SECOND && tx > 2 * SECOND).then_some(Phases {
        creation: (from + SECOND, from + creation - SECOND),
        transactions: (from + creation + SECOND, from + creation + tx - SECOND),
    })
}

/// The requests that arrived in `window`, by arrival.
pub fn arrived_in(requests: &[Request], (a, b): (u64, u64)) -> Vec<Request> {
    let mut v: Vec<Request> =
        requests.iter().filter(|r| r.arrival_ns >= a && r.arrival_ns < b).copied().collect();
    v.sort_by_key(|r| (r.arrival_ns, r.sector));
    v
}

/// The share of `by_arrival` near a recent request (see the module's first statement).
pub fn near_share(by_arrival: &[Request]) -> f64 {
    if by_arrival.is_empty() {
        return 0.0;
    }
    let near = |i: usize| {
        let s = by_arrival[i].sector;
        by_arrival[i.saturating_sub(RECENT)..i]
            .iter()
            .any(|p| (p.sector + p.sectors).abs_diff(s) <= NEAR_SECTORS)
    };
    (0..by_arrival.len()).filter(|&i| near(i)).count() as f64 / by_arrival.len() as f64
}

/// Ranks of `v` (0-based; tied values share their mean rank).
fn ranks(v: &[u64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by_key(|&i| v[i]);
    let mut r = vec![0.0; v.len()];
    let mut k = 0;
    while k < order.len() {
        let tied = order[k..].iter().take_while(|&&i| v[i] == v[order[k]]).count();
        let mean = k as f64 + (tied - 1) as f64 / 2.0;
        for &i in &order[k..k + tied] {
            r[i] = mean;
        }
        k += tied;
    }
    r
}

/// Spearman's rank correlation of arrival and start address (0 when under two requests
/// or when either is constant).
pub fn rank_correlation(requests: &[Request]) -> f64 {
    let a = ranks(&requests.iter().map(|r| r.arrival_ns).collect::<Vec<_>>());
    let b = ranks(&requests.iter().map(|r| r.sector).collect::<Vec<_>>());
    let n = a.len() as f64;
    if a.len() < 2 {
        return 0.0;
    }
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(&b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    if va == 0.0 || vb == 0.0 {
        0.0
    } else {
        cov / (va * vb).sqrt()
    }
}

/// Figure 1's statements from the two phases' requests (each by arrival).
pub fn judge_fig1(creation: &[Request], transactions: &[Request]) -> Vec<Check> {
    if creation.is_empty() || transactions.is_empty() {
        return vec![Check::new(
            "both phases measured",
            format!("{} / {} requests", creation.len(), transactions.len()),
            "requests in the creation phase and in the transactions",
            false,
        )];
    }
    let (c, t) = (near_share(creation), near_share(transactions));
    let (rc, rt) = (rank_correlation(creation), rank_correlation(transactions));
    vec![
        Check::new(
            "the creation phase mostly sequential",
            format!("{:.0}% of its requests near a recent one", c * 100.0),
            format!("\"mostly sequential\" (more than {:.0}% within 1 MiB of one of the last {RECENT})", MOSTLY * 100.0),
            c > MOSTLY,
        ),
        Check::new(
            "the transactions less sequential than the creation",
            format!("{:.0}% near against {:.0}%", t * 100.0, c * 100.0),
            "\"random\" in the file access phase",
            t < c,
        ),
        Check::new(
            "the creation a line, the transactions dots",
            format!("rank correlation of arrival and address {rc:.2} against {rt:.2}"),
            format!("\"straight lines\" then \"a block of numerous dots\" (the creation's at least {LINE}, above the transactions')"),
            rc >= LINE && rc > rt,
        ),
    ]
}

fn gb(sector: u64) -> f64 {
    sector as f64 * 512.0 / 1e9
}

/// The dots of the figure: (seconds from `from`, start address in GB) of reads and of
/// writes, in that order.
pub fn dots(requests: &[Request], from: u64, to: u64) -> [(String, Vec<(f64, f64)>); 2] {
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for r in arrived_in(requests, (from, to)) {
        let dot = ((r.arrival_ns - from) as f64 / 1e9, gb(r.sector));
        if r.write {
            writes.push(dot)
        } else {
            reads.push(dot)
        }
    }
    [("reads".to_string(), reads), ("writes".to_string(), writes)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(at_ms: u64, sector: u64, sectors: u64) -> Request {
        Request {
            connection: 1,
            arrival_ns: at_ms * 1_000_000,
            dispatch_ns: at_ms * 1_000_000,
            complete_ns: at_ms * 1_000_000 + 1,
            write: true,
            sector,
            sectors,
        }
    }

    #[test]
    fn near_means_within_a_mib_of_a_recent_end() {
        // 0+8 ends at 8; 2056 starts 2048 past it (near); 10000 is far from both; 2000
        // lies before 2064 (the second's end) by 64 (near, either direction)
        let v = [req(0, 0, 8), req(1, 2056, 8), req(2, 10_000, 8), req(3, 2000, 8)];
        assert!((near_share(&v) - 0.5).abs() < 1e-12, "{}", near_share(&v));
        // just past the distance is not near, nor is a request beyond the recent window
        assert_eq!(near_share(&[req(0, 0, 8), req(1, 8 + NEAR_SECTORS + 1, 8)]), 0.0);
        let mut far: Vec<Request> = vec![req(0, 0, 8)];
        far.extend((1..=RECENT as u64).map(|i| req(i, 1_000_000 * i, 8)));
        far.push(req(100, 8, 8));
        assert_eq!(near_share(&far), 0.0);
        assert_eq!(near_share(&[]), 0.0);
    }

    #[test]
    fn rank_correlation_of_lines_and_dots() {
        let rising: Vec<Request> = (0..100).map(|i| req(i, i * 50, 8)).collect();
        assert!((rank_correlation(&rising) - 1.0).abs() < 1e-12);
        let falling: Vec<Request> = (0..100).map(|i| req(i, 10_000 - i * 50, 8)).collect();
        assert!((rank_correlation(&falling) + 1.0).abs() < 1e-12);
        let dots: Vec<Request> = (0..1000).map(|i| req(i, (i * 7919) % 8000, 8)).collect();
        assert!(rank_correlation(&dots).abs() < 0.1, "{}", rank_correlation(&dots));
        assert_eq!(rank_correlation(&rising[..1]), 0.0);
        let flat: Vec<Request> = (0..10).map(|i| req(i, 5, 8)).collect();
        assert_eq!(rank_correlation(&flat), 0.0);
    }

    fn pm(files_alone: f64, tx_s: f64) -> PostmarkReport {
        PostmarkReport {
            total_s: 0.0,
            transactions_s: tx_s,
            transactions_per_s: 0.0,
            files_created_per_s: 0.0,
            files_created_alone_per_s: files_alone,
            files_read_per_s: 0.0,
            files_appended_per_s: 0.0,
            files_deleted_per_s: 0.0,
            read_bytes_per_s: 0.0,
            write_bytes_per_s: 0.0,
        }
    }

    #[test]
    fn phases_come_from_postmarks_clock_trimmed_a_second() {
        // 850 files at 42.5/s: 20 s of creation, then 30 s of transactions, from 5 s
        let p = phases(5 * SECOND, 850, &pm(42.5, 30.0)).unwrap();
        assert_eq!(p.creation, (6 * SECOND, 24 * SECOND));
        assert_eq!(p.transactions, (26 * SECOND, 54 * SECOND));
        // a creation under PostMark's second (an infinite rate) or a 2-second phase: none
        assert_eq!(phases(0, 850, &pm(f64::INFINITY, 30.0)), None);
        assert_eq!(phases(0, 850, &pm(425.0, 30.0)), None);
        assert_eq!(phases(0, 850, &pm(42.5, 2.0)), None);
    }

    #[test]
    fn fig1_wants_lines_then_dots() {
        // creation: a run of 8-sector writes; transactions: scattered over 4 GB
        let creation: Vec<Request> = (0..1000).map(|i| req(i, i * 8, 8)).collect();
        let scatter = |at: u64| (0..500).map(move |i| req(at + i, (i * 7_919_000) % 8_000_000, 8));
        let scattered: Vec<Request> = scatter(2000).collect();
        assert!(
            judge_fig1(&creation, &scattered).iter().all(|c| c.held),
            "{:?}",
            judge_fig1(&creation, &scattered)
        );
        // the opposite: a scattered creation, then a sequential sweep
        let scattered_creation: Vec<Request> = scatter(0).collect();
        let sweep: Vec<Request> = (0..1000).map(|i| req(2000 + i, 1_000_000 + i * 8, 8)).collect();
        let k = judge_fig1(&scattered_creation, &sweep);
        assert!(k.iter().all(|c| !c.held), "{k:?}");
        // a phase without requests is never a match
        assert!(judge_fig1(&creation, &[]).iter().all(|c| !c.held));
        let [reads, writes] = dots(&creation, 0, 500 * 1_000_000);
        assert!(reads.1.is_empty() && writes.1.len() == 500);
        assert_eq!(writes.1[1], (0.001, 8.0 * 512.0 / 1e9));
    }
}

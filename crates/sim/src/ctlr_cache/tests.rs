//! The controller's rules on small cases worked by hand: a disk that serves one request
//! at a time in 5 ms, 0.5 ms a message, 10 us a sector of DMA, lines of 8 sectors.

use headway_disk::ctlr::{Allocation, CacheMem, Controller, DiskQueue, QueueOrder, WriteScheme};
use headway_sched::{Dir, Duration};

use super::{CacheStats, CtlrCache, Host, Out};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const SERVICE: u64 = 5 * MS;

fn cache(lines: u32) -> CacheMem {
    CacheMem {
        lines,
        line: 8,
        shared_reads: true,
        allocation: Allocation::Victim,
        write: WriteScheme::Back,
        flush_period: None,
        idle_delay: None,
        cluster: 1,
        prefetch_front: false,
        prefetch_rest: false,
        line_by_line: false,
        gather: 0,
    }
}

fn ctlr(m: Option<CacheMem>) -> Controller {
    Controller {
        overhead: Duration(500 * US),
        host_per_sector: Duration(10 * US),
        host_slots: 8,
        host_queue: QueueOrder::Fcfs,
        disk_queue: DiskQueue::default(),
        disk_slots: 1,
        max_request: 0,
        cache: m,
        on_device: None,
    }
}

fn read(id: u64, sector: u64, len: u32) -> Host {
    Host { id, sector, len, dir: Dir::Read }
}

fn write(id: u64, sector: u64, len: u32) -> Host {
    Host { id, sector, len, dir: Dir::Write }
}

/// What a run did: each host request's completion (id, time), each disk request as it
/// reached the disk (time, sector, sectors, direction), and the cache's counts.
struct Run {
    done: Vec<(u64, u64)>,
    disk: Vec<(u64, u64, u32, Dir)>,
    /// The device of each disk request.
    devices: Vec<usize>,
    stats: CacheStats,
}

/// Feed `arrivals` (time, request) to a controller `c` over devices that each serve their
/// requests one after another in [`SERVICE`] each.
fn run(c: Controller, mut arrivals: Vec<(u64, Host)>) -> Run {
    arrivals.reverse();
    let mut cc = CtlrCache::new(&c);
    let mut r = Run { done: Vec::new(), disk: Vec::new(), devices: Vec::new(), stats: CacheStats::default() };
    let mut busy_until = [0u64; 2];
    let mut completions: Vec<(u64, u64)> = Vec::new(); // (time, token)
    for _ in 0..10_000 {
        let next_arrival = arrivals.last().map(|a| a.0);
        let next_done = completions.iter().map(|c| c.0).min();
        let next_wake = cc.next_wake();
        let Some(t) = [next_arrival, next_done, next_wake].into_iter().flatten().min() else { break };
        if next_done == Some(t) {
            let i = completions.iter().position(|c| c.0 == t).unwrap();
            let (_, token) = completions.remove(i);
            cc.disk_done(t, token, SERVICE);
        } else if next_arrival == Some(t) {
            let (_, h) = arrivals.pop().unwrap();
            cc.arrive(t, h);
        } else {
            for o in cc.wake(t) {
                match o {
                    Out::Disk { token, device, sector, len, dir } => {
                        r.disk.push((t, sector, len, dir));
                        r.devices.push(device);
                        busy_until[device] = busy_until[device].max(t) + SERVICE;
                        completions.push((busy_until[device], token));
                    }
                    Out::Done { host, .. } => r.done.push((host, t)),
                }
            }
        }
    }
    r.stats = cc.report_stats();
    r
}

#[test]
fn a_read_miss_fills_its_line_and_the_second_read_hits() {
    let r = run(ctlr(Some(cache(4))), vec![(0, read(1, 0, 8)), (10 * MS, read(2, 0, 8))]);
    // sent 0.5 ms after it was made; done at 5.5; 80 us of DMA; 0.5 ms to the host
    assert_eq!(r.disk, [(500 * US, 0, 8, Dir::Read)]);
    assert_eq!(r.done, [(1, 6080 * US), (2, 10_580 * US)]);
    assert_eq!((r.stats.reads, r.stats.read_hits, r.stats.fills), (2, 1, 1));
}

#[test]
fn the_prefetch_type_widens_a_fill_inside_its_lines() {
    let disk = |front, rest| {
        let m = CacheMem { prefetch_front: front, prefetch_rest: rest, ..cache(4) };
        run(ctlr(Some(m)), vec![(0, read(1, 2, 2))]).disk[0]
    };
    assert_eq!(disk(false, false), (500 * US, 2, 2, Dir::Read));
    assert_eq!(disk(false, true), (500 * US, 2, 6, Dir::Read));
    assert_eq!(disk(true, false), (500 * US, 0, 4, Dir::Read));
    assert_eq!(disk(true, true), (500 * US, 0, 8, Dir::Read));
}

#[test]
fn max_gather_allows_one_line_more_than_it_says() {
    // sectors 6..18 over three lines, gather 1: the first fill stops once its run spans
    // two lines past its first (6..16, widened to 0..16), the second takes 16..18 (to 24)
    let m = CacheMem { gather: 1, prefetch_front: true, prefetch_rest: true, ..cache(4) };
    let r = run(ctlr(Some(m)), vec![(0, read(1, 6, 12))]);
    let fills: Vec<(u64, u32)> = r.disk.iter().map(|d| (d.1, d.2)).collect();
    assert_eq!(fills, [(0, 16), (16, 8)]);
    // line by line: one fill a line
    let m = CacheMem { line_by_line: true, ..cache(4) };
    let r = run(ctlr(Some(m)), vec![(0, read(1, 6, 12))]);
    let fills: Vec<(u64, u32)> = r.disk.iter().map(|d| (d.1, d.2)).collect();
    assert_eq!(fills, [(6, 2), (8, 8), (16, 2)]);
}

#[test]
fn a_dirty_victim_is_written_back_before_the_allocation_takes_it() {
    let writes = vec![(0, write(1, 0, 8)), (MS, write(2, 8, 8)), (2 * MS, read(3, 16, 8))];
    // policy 0: the LRU line (0..8) is dirty: written back (2.5 - 7.5 ms), then filled
    let r = run(ctlr(Some(cache(2))), writes.clone());
    assert_eq!(r.disk, [(2500 * US, 0, 8, Dir::Write), (8 * MS, 16, 8, Dir::Read)]);
    assert_eq!(r.done, [(1, 580 * US), (2, 1580 * US), (3, 13_580 * US)]);
    // policy 1: both dirty lines are passed over, each written back; the read takes the
    // first one cleaned, its fill queued behind the second write-back
    let m = CacheMem { allocation: Allocation::Clean, ..cache(2) };
    let r = run(ctlr(Some(m)), writes);
    assert_eq!(
        r.disk,
        [(2500 * US, 0, 8, Dir::Write), (8 * MS, 8, 8, Dir::Write), (13_500 * US, 16, 8, Dir::Read)]
    );
    assert_eq!(r.done[2], (3, 19_080 * US));
    assert_eq!((r.stats.destages, r.stats.writes, r.stats.write_hits), (2, 2, 0));
}

#[test]
fn write_through_tells_the_host_at_once_and_synchronous_after_the_disk() {
    let one = |scheme, line_by_line| {
        let m = CacheMem { write: scheme, line_by_line, ..cache(4) };
        run(ctlr(Some(m)), vec![(0, write(1, 0, 16))])
    };
    // 160 us of DMA, then the disk write, sent 0.5 ms later
    let r = one(WriteScheme::Through, false);
    assert_eq!((r.disk.clone(), r.done.clone()), (vec![(660 * US, 0, 16, Dir::Write)], vec![(1, 660 * US)]));
    let r = one(WriteScheme::Synchronous, false);
    assert_eq!(r.done, [(1, 6160 * US)]);
    // a line at a time, the second once the first is on the disk
    let r = one(WriteScheme::Synchronous, true);
    assert_eq!(r.disk, [(660 * US, 0, 8, Dir::Write), (6160 * US, 8, 8, Dir::Write)]);
    assert_eq!(r.done, [(1, 11_660 * US)]);
}

#[test]
fn a_request_over_the_max_size_is_served_a_piece_after_another() {
    let c = Controller { max_request: 8, ..ctlr(Some(cache(4))) };
    let r = run(c, vec![(0, read(1, 0, 16))]);
    assert_eq!(r.disk, [(500 * US, 0, 8, Dir::Read), (6580 * US, 8, 8, Dir::Read)]);
    assert_eq!(r.done, [(1, 12_160 * US)]);
}

#[test]
fn the_driver_keeps_at_most_its_slots_at_the_controller() {
    let c = Controller { host_slots: 1, ..ctlr(Some(cache(4))) };
    let r = run(c, vec![(0, read(1, 0, 8)), (0, read(2, 8, 8))]);
    // the second reaches the controller when the first completes (6.08 ms)
    assert_eq!(r.disk, [(500 * US, 0, 8, Dir::Read), (6580 * US, 8, 8, Dir::Read)]);
    // with room for both, the second's fill queues behind the first at the disk
    let r = run(ctlr(Some(cache(4))), vec![(0, read(1, 0, 8)), (0, read(2, 8, 8))]);
    assert_eq!(r.disk, [(500 * US, 0, 8, Dir::Read), (5500 * US + 500 * US, 8, 8, Dir::Read)]);
}

#[test]
fn a_reader_of_a_line_being_filled_waits_for_the_fill_and_counts_as_a_hit() {
    let r = run(ctlr(Some(cache(4))), vec![(0, read(1, 0, 8)), (100 * US, read(2, 0, 8))]);
    assert_eq!(r.disk.len(), 1, "one fill serves both");
    // the first's DMA 5.5 - 5.58, the second's behind it 5.58 - 5.66
    assert_eq!(r.done, [(1, 6080 * US), (2, 6160 * US)]);
    assert_eq!((r.stats.reads, r.stats.read_hits), (2, 1));
}

#[test]
fn idle_write_backs_cluster_neighbouring_dirty_lines() {
    let arrivals = vec![(0, write(1, 0, 8)), (MS, write(2, 8, 8))];
    let idle = |cluster| {
        let m = CacheMem { idle_delay: Some(Duration(10 * MS)), cluster, ..cache(4) };
        run(ctlr(Some(m)), arrivals.clone()).disk
    };
    // the timer starts when the first write is in the cache (80 us) and is not restarted
    // by the second: at 10.08 ms one write-back covers both lines
    assert_eq!(idle(4), [(10_580 * US, 0, 16, Dir::Write)]);
    // one line at a time: the next once the first is done and the queue empty again
    assert_eq!(idle(1), [(10_580 * US, 0, 8, Dir::Write), (16_080 * US, 8, 8, Dir::Write)]);
    // the least recently used line is the upper one: its write-back reaches back into the
    // line before it
    let m = CacheMem { idle_delay: Some(Duration(10 * MS)), cluster: 4, ..cache(4) };
    let r = run(ctlr(Some(m)), vec![(0, write(1, 8, 8)), (MS, write(2, 0, 8))]);
    assert_eq!(r.disk, [(10_580 * US, 0, 16, Dir::Write)]);
    // a line between them that is not cached stops the reach
    let m = CacheMem { idle_delay: Some(Duration(10 * MS)), cluster: 4, ..cache(4) };
    let r = run(ctlr(Some(m)), vec![(0, write(1, 16, 8)), (MS, write(2, 0, 8))]);
    assert_eq!(r.disk, [(10_580 * US, 16, 8, Dir::Write), (16_080 * US, 0, 8, Dir::Write)]);
}

#[test]
fn the_periodic_flush_writes_back_every_dirty_line() {
    let m = CacheMem { flush_period: Some(Duration(20 * MS)), ..cache(4) };
    let r = run(ctlr(Some(m)), vec![(0, write(1, 0, 8)), (MS, write(2, 40, 8))]);
    assert_eq!(r.disk, [(20_500 * US, 0, 8, Dir::Write), (26 * MS, 40, 8, Dir::Write)]);
}

#[test]
fn without_a_cache_requests_pass_through() {
    let r = run(ctlr(None), vec![(0, read(1, 0, 8)), (20 * MS, write(2, 0, 8))]);
    // a read: disk, DMA, host; a write: DMA, disk, host
    assert_eq!(r.disk, [(500 * US, 0, 8, Dir::Read), (20_580 * US, 0, 8, Dir::Write)]);
    assert_eq!(r.done, [(1, 6080 * US), (2, 26_080 * US)]);
}

/// A controller whose cache is a second device of `sectors` sectors' worth.
fn on_device(sectors: u64, write_through: bool, idle: Option<u64>) -> Controller {
    let dev = headway_disk::ctlr::CacheDev {
        sectors,
        write_through,
        idle_delay: idle.map(Duration),
        device: Box::new(headway_disk::builtin("wd5000aaks").unwrap()),
    };
    Controller { on_device: Some(dev), ..ctlr(None) }
}

#[test]
fn a_read_miss_on_a_cache_device_is_copied_there_and_later_hits_it() {
    let r = run(on_device(1000, false, None), vec![(0, read(1, 0, 8)), (20 * MS, read(2, 0, 8))]);
    // the miss from the drive (device 0), its copy onto the cache device (1) once it is
    // in, the hit from the cache device; the host never waits for the copy
    assert_eq!(
        r.disk,
        [(500 * US, 0, 8, Dir::Read), (6 * MS, 0, 8, Dir::Write), (20_500 * US, 0, 8, Dir::Read)]
    );
    assert_eq!(r.devices, [0, 1, 1]);
    assert_eq!(r.done, [(1, 6080 * US), (2, 26_080 * US)]);
    assert_eq!((r.stats.reads, r.stats.read_hits, r.stats.fills), (2, 1, 1));
    // a read before the copy completed finds the sectors invalid: the drive again
    let r = run(on_device(1000, false, None), vec![(0, read(1, 0, 8)), (8 * MS, read(2, 0, 8))]);
    assert_eq!(r.devices, [0, 1, 0, 1]);
}

#[test]
fn writes_wait_for_the_cache_device_and_go_back_when_the_drive_is_idle() {
    let arrivals = vec![(0, write(1, 0, 8)), (MS, read(2, 500, 8))];
    let r = run(on_device(1000, false, Some(10 * MS)), arrivals.clone());
    // the write on the cache device (done 5.58, the host told 6.08); the read miss empties
    // the drive's queue at 6.5, so at 16.5 the dirty run is read from the cache device and
    // written to the drive
    assert_eq!(
        r.disk,
        [
            (580 * US, 0, 8, Dir::Write),
            (1500 * US, 500, 8, Dir::Read),
            (7 * MS, 500, 8, Dir::Write),
            (17 * MS, 0, 8, Dir::Read),
            (22_500 * US, 0, 8, Dir::Write)
        ]
    );
    assert_eq!(r.devices, [1, 0, 1, 1, 0]);
    assert_eq!(r.done, [(1, 6080 * US), (2, 7080 * US)]);
    assert_eq!(
        (r.stats.writes, r.stats.write_hits, r.stats.destages, r.stats.end_dirty_sectors),
        (1, 1, 1, 0)
    );
    // without idle write-backs the data stays dirty
    let r = run(on_device(1000, false, None), arrivals);
    assert_eq!((r.disk.len(), r.stats.end_dirty_sectors), (3, 8));
}

#[test]
fn write_through_copies_to_the_drive_and_a_write_reaching_the_cache_size_goes_there_alone() {
    let r = run(on_device(1000, true, None), vec![(0, write(1, 0, 8))]);
    assert_eq!(r.disk, [(580 * US, 0, 8, Dir::Write), (6080 * US, 0, 8, Dir::Write)]);
    assert_eq!((r.devices.clone(), r.done.clone()), (vec![1, 0], vec![(1, 6080 * US)]));
    assert_eq!(r.stats.end_dirty_sectors, 0);
    // ending at 1000, not below it: the drive only
    let r = run(on_device(1000, false, None), vec![(0, write(1, 992, 8))]);
    assert_eq!((r.devices, r.stats.write_hits), (vec![0], 0));
}

#[test]
fn the_disk_queue_sweeps_up_by_start_and_joins_neighbours() {
    let q = DiskQueue { order: QueueOrder::CycleLbn, join_reads: true, join_writes: false, max_join: 16 };
    let c = Controller { disk_queue: q, ..ctlr(None) };
    let arrivals = vec![(0, read(1, 100, 8)), (0, read(2, 40, 8)), (0, read(3, 48, 8)), (0, read(4, 10, 8))];
    let r = run(c, arrivals);
    // 100 first (the queue was empty); then the sweep starts over at 10; 40 and 48 went as
    // one request of 16 sectors
    assert_eq!(
        r.disk,
        [(500 * US, 100, 8, Dir::Read), (6 * MS, 10, 8, Dir::Read), (11_500 * US, 40, 16, Dir::Read)]
    );
    // each joined request completes, in order of start, then crosses the DMA
    assert_eq!(r.done, [(1, 6080 * US), (4, 11_580 * US), (2, 17_080 * US), (3, 17_160 * US)]);
}

#[test]
fn the_driver_sends_waiting_host_requests_in_its_order() {
    let c = Controller { host_slots: 1, host_queue: QueueOrder::CycleLbn, ..ctlr(None) };
    let arrivals = vec![(0, read(1, 100, 8)), (0, read(2, 40, 8)), (0, read(3, 200, 8)), (0, read(4, 10, 8))];
    let starts: Vec<u64> = run(c, arrivals.clone()).disk.iter().map(|d| d.1).collect();
    assert_eq!(starts, [100, 200, 10, 40]);
    let c = Controller { host_slots: 1, ..ctlr(None) };
    let starts: Vec<u64> = run(c, arrivals).disk.iter().map(|d| d.1).collect();
    assert_eq!(starts, [100, 40, 200, 10]);
}

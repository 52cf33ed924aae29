//! The drive models headway ships, with where every number comes from.
//!
//! * `wd5000aaks` (default): the disk of the Stream Scheduling paper (seeds/000 Section 3).
//! * `hd080hj`: the disk of the HTBS paper (seeds/004 Section 5).
//! * `cheetah9lp`, `ibm18es`: DiskSim 4.0's validated models of two real drives, with
//!   measured traces beside them in shared/reference/disksim-valid.
//! * `deskstar-34gxp`: the IDE disk of the Anticipatory Scheduling paper (seeds/001
//!   Section 4), matched to what the paper measured on it: sequential 64 KiB reads at
//!   21.7 MB/s, 3.0 ms a block (paper: about 21 MB/s, 3 ms).
//!
//! For the two SATA drives and the Deskstar, zones are evenly spaced bands whose sectors
//! per track fall linearly from the outer to the inner edge (constant linear density; the
//! endpoints are chosen so the sustained rate, switches included, matches published
//! benchmarks or, for the Deskstar, the paper's measurement), and the cylinder count is the
//! smallest that holds the capacity: the IDEMA count (97,696,368 + 1,953,504 x (GB - 50)
//! sectors) for the SATA drives, the LBA count the drive reports for the Deskstar. Skews are
//! derived from the switch times ([`DiskSpec::derive_skews`]).
//!
//! What the models deliver (`cargo run --release -p headway-disk --example disk_bench`):
//!
//! | model | sustained outer/inner | 4 KiB sync sequential (outer) | 1 MiB sequential (outer) | 4 KiB random reads |
//! |---|---|---|---|---|
//! | wd5000aaks | 109.9 / 54.9 MB/s | 109.7 MB/s | 109.8 MB/s | 76 IOPS (13.1 ms) |
//! | hd080hj | 65.0 / 35.0 MB/s | 64.6 MB/s | 64.7 MB/s | 76 IOPS (13.2 ms) |
//! | cheetah9lp | 15.6 / 9.4 MB/s | 4.5 MB/s (bus-bound) | 4.9 MB/s (bus-bound) | 110 IOPS |
//! | ibm18es | 20.5 / 13.0 MB/s | 4.6 MB/s (bus-bound) | 5.1 MB/s (bus-bound) | 84 IOPS |
//! | deskstar-34gxp | 21.8 / 12.5 MB/s | 21.7 MB/s | 21.7 MB/s | 74 IOPS (13.5 ms) |
//!
//! (The DiskSim drives' "bulk sector transfer time" of ~0.1 ms per sector is what their
//! validation measured end to end; it makes them bus-bound for sequential transfers.)

use crate::disksim_tables::*;
use crate::spec::{CacheSpec, DiskSpec, Overheads, SeekModel, Zone};
use headway_sched::Duration;

/// The default drive.
pub const DEFAULT: &str = "wd5000aaks";

const NAMES: &[&str] = &["wd5000aaks", "hd080hj", "cheetah9lp", "ibm18es", "deskstar-34gxp"];

/// Names `builtin` knows, default first.
pub fn builtin_names() -> &'static [&'static str] {
    NAMES
}

/// A shipped drive model by name (case-insensitive).
pub fn builtin(name: &str) -> Option<DiskSpec> {
    match name.to_ascii_lowercase().as_str() {
        "wd5000aaks" => Some(wd5000aaks()),
        "hd080hj" => Some(hd080hj()),
        "cheetah9lp" => Some(cheetah9lp()),
        "ibm18es" => Some(ibm18es()),
        "deskstar-34gxp" => Some(deskstar_34gxp()),
        _ => None,
    }
}

const fn us(x: u64) -> Duration {
    Duration::from_micros(x)
}

/// SATA 3 Gb/s: 8b/10b coding leaves 300 MB/s; 512 B / 300 MB/s = 1706.7 ns.
const SATA_3G_PER_SECTOR: Duration = Duration(1707);

/// Ultra ATA/66 (UDMA mode 4): 66.7 MB/s burst; 512 B / 66.67 MB/s = 7680 ns.
const UDMA66_PER_SECTOR: Duration = Duration(7680);

/// Cylinders per zone so that `count` zones of linearly falling sectors per track hold at
/// least `capacity` sectors.
fn zones_for(capacity: u64, surfaces: u32, count: u32, outer: u32, inner: u32) -> Vec<Zone> {
    let per_cyl: u64 = DiskSpec::linear_zones(count, 1, outer, inner)
        .iter()
        .map(|z| z.sectors_per_track as u64 * surfaces as u64)
        .sum();
    DiskSpec::linear_zones(count, capacity.div_ceil(per_cyl) as u32, outer, inner)
}

fn wd5000aaks() -> DiskSpec {
    let capacity = 976_773_168;
    let mut s = DiskSpec {
        name: "wd5000aaks".into(),
        description: "Western Digital Caviar Blue WD5000AAKS: 500 GB, 7200 rpm, 16 MB cache, SATA 3 Gb/s \
                      (the Stream Scheduling paper's disk)"
            .into(),
        sources:
            "WD data sheet: 7200 rpm; average read seek 8.9 ms, track-to-track 2.0 ms, full stroke 21.0 ms \
                  (three-point seek curve of Lee & Katz through them); 16 MB buffer; SATA 3 Gb/s. \
                  Capacity 976,773,168 sectors (IDEMA LBA count for 500 GB). \
                  Documented estimates: 2 platters x 250 GB -> 4 surfaces; 24 zones of 6,590 cylinders \
                  (158,160 cylinders), 2,059 -> 1,029 sectors/track, giving a sustained 110 MB/s outer to \
                  55 MB/s inner with switches (published HD Tune / CrystalDiskMark runs show ~106-110 MB/s \
                  at the start of the disk); head switch 1.0 ms (below the 2.0 ms track-to-track, as on \
                  drives of this density); write settle +0.3 ms (data sheets of the era quote write seeks \
                  0.3-1 ms slower); controller overhead 0.15 ms per miss or write, 0.02 ms per cache hit \
                  (typical SATA firmware, within the 0.1-0.3 ms DiskSim measured on 1990s SCSI drives); \
                  buffer as 16 read-ahead segments of 1 MiB, read-ahead up to 1 MiB past a request; \
                  skews derived from the switch times."
                .into(),
        rpm: 7200,
        surfaces: 4,
        zones: zones_for(capacity, 4, 24, 2059, 1029),
        capacity_sectors: capacity,
        seek: SeekModel::ThreePoint {
            single_cylinder: us(2_000),
            average: us(8_900),
            full_stroke: us(21_000),
        },
        head_switch: us(1_000),
        write_settle: us(300),
        overheads: Overheads::uniform(us(150), us(20), us(150)),
        bus_per_sector: SATA_3G_PER_SECTOR,
        cache: CacheSpec { segments: 16, segment_sectors: 2048, max_read_ahead_sectors: 2048 },
    };
    s.derive_skews();
    s
}

fn hd080hj() -> DiskSpec {
    let capacity = 156_301_488;
    let mut s = DiskSpec {
        name: "hd080hj".into(),
        description: "Samsung SpinPoint P80 SD HD080HJ: 80 GB, 7200 rpm, 8 MB cache, SATA, no NCQ \
                      (the HTBS paper's disk)"
            .into(),
        sources: "HTBS paper (seeds/004 Section 5): 80 GB, 7200 rpm, 8 MB cache, SATA, no NCQ. \
                  Samsung SpinPoint P80 data sheet figures as commonly quoted (not checked against the \
                  primary document here): average seek 8.9 ms, track-to-track 0.8 ms, full stroke 18 ms \
                  (three-point curve). Capacity 156,301,488 sectors (IDEMA LBA count for 80 GB). \
                  Documented estimates: one 80 GB platter -> 2 surfaces; 16 zones of 5,526 cylinders, \
                  1,149 -> 619 sectors/track, a sustained 65 -> 35 MB/s as reviews of 80 GB/platter \
                  7200 rpm drives report; head switch 0.6 ms (below track-to-track); write settle +0.3 ms; \
                  overheads 0.15 ms miss/write, 0.02 ms hit; SATA 3 Gb/s bus; buffer as 8 segments of \
                  1 MiB with 1 MiB read-ahead; skews derived from switch times."
            .into(),
        rpm: 7200,
        surfaces: 2,
        zones: zones_for(capacity, 2, 16, 1149, 619),
        capacity_sectors: capacity,
        seek: SeekModel::ThreePoint { single_cylinder: us(800), average: us(8_900), full_stroke: us(18_000) },
        head_switch: us(600),
        write_settle: us(300),
        overheads: Overheads::uniform(us(150), us(20), us(150)),
        bus_per_sector: SATA_3G_PER_SECTOR,
        cache: CacheSpec { segments: 8, segment_sectors: 2048, max_read_ahead_sectors: 2048 },
    };
    s.derive_skews();
    s
}

fn deskstar_34gxp() -> DiskSpec {
    let capacity = 40_088_160;
    let mut s = DiskSpec {
        name: "deskstar-34gxp".into(),
        description: "IBM Deskstar 34GXP DPTA-372050: 20.5 GB, 7200 rpm, 2 MB buffer, Ultra ATA/66 \
                      (the Anticipatory Scheduling paper's disk)"
            .into(),
        sources: "Anticipatory Scheduling paper (seeds/001): Section 4, a 7200 rpm IBM Deskstar 34GXP \
                  IDE disk (no capacity or model number given); Section 2, measured on it: sequential \
                  64 KB reads at 21 MB/s, 3 ms per 64 KB block, 9 ms average seek. Published family \
                  figures (IBM's, as tabled by the Red Hill hard drive history): 7200 rpm, average seek \
                  9.0 ms, 2 MB buffer, 6.8 GB per platter, 284 Mbit/s maximum media data rate, ATA-66, \
                  6 heads on the 20.4 GB DPTA-372050 (the 34.2 GB DPTA-373420 is the 5-platter, 10-head \
                  member). Capacity 40,088,160 sectors: the IBM-DPTA-372050 as the Linux IDE driver \
                  reports it (CHS 39770/16/63, 1961 KiB cache); the paper's model is unknown, the \
                  20.5 GB member is a documented choice. Track-to-track 2.2 ms and full stroke 15.5 ms \
                  as commonly quoted for the 34GXP, not checked against the primary IBM document here \
                  (three-point seek curve through 2.2 / 9.0 / 15.5 ms). Documented estimates: \
                  3 platters -> 6 surfaces; 16 zones of 1,251 cylinders (20,016, the first 20,000 hold \
                  the capacity), 424 -> 244 sectors/track, i.e. 26.0 -> 15.0 MB/s off the media (26 MB/s \
                  of user data is 75% of the 284 Mbit/s channel rate, the rest ECC, servo and gaps) and \
                  a sustained 21.8 -> 12.5 MB/s with switches, which puts the paper's 3 ms per 64 KB \
                  block at the outer edge; head switch 1.5 ms (IBM data sheets of neighbouring \
                  generations: Deskstar 40GV 1.5 ms, Ultrastar DDRS 1.6 ms, Deskstar 75GXP 1.2 ms); \
                  write settle +1.0 ms (the Deskstar 75GXP and 60GXP sheets quote full-stroke write \
                  seeks 1.0 ms slower than reads); controller overhead 0.2 ms per miss or write, \
                  0.05 ms per cache hit (within the 0.08-0.8 ms DiskSim measured on the contemporary \
                  IBM Ultrastar 18ES); Ultra ATA/66 bus, 7.68 us per sector; the 1961 KiB buffer as \
                  7 read-ahead segments (the segment count DiskSim extracted for the Ultrastar 18ES) of \
                  560 sectors, read-ahead up to 560 sectors past a request; skews derived from the \
                  switch times."
            .into(),
        rpm: 7200,
        surfaces: 6,
        zones: zones_for(capacity, 6, 16, 424, 244),
        capacity_sectors: capacity,
        seek: SeekModel::ThreePoint {
            single_cylinder: us(2_200),
            average: us(9_000),
            full_stroke: us(15_500),
        },
        head_switch: us(1_500),
        write_settle: us(1_000),
        overheads: Overheads::uniform(us(200), us(50), us(200)),
        bus_per_sector: UDMA66_PER_SECTOR,
        cache: CacheSpec { segments: 7, segment_sectors: 560, max_read_ahead_sectors: 560 },
    };
    s.derive_skews();
    s
}

fn disksim_zones(rows: &[ZoneRow]) -> Vec<Zone> {
    rows.iter()
        .map(|&(first, last, spt, ts, cs)| Zone {
            cylinders: last - first + 1,
            sectors_per_track: spt,
            track_skew: ts,
            cylinder_skew: cs,
        })
        .collect()
}

fn disksim_seek(knots: &[SeekKnot]) -> SeekModel {
    SeekModel::Table(knots.iter().map(|&(d, ns)| (d, Duration(ns))).collect())
}

/// DiskSim gives times in ms with up to 6 decimals.
const fn ms6(x: u64) -> Duration {
    Duration(x)
}

fn cheetah9lp() -> DiskSpec {
    DiskSpec {
        name: "cheetah9lp".into(),
        description: "Seagate Cheetah 9LP ST39102LW: 9.1 GB, 10045 rpm, Ultra2 SCSI (DiskSim-validated)"
            .into(),
        sources:
            "DiskSim 4.0 validation files cheetah9LP.{model,seek,diskspecs}: 12 surfaces, 11 zones with \
                  their sectors/track and track/cylinder skews, block count 17,783,240, 10045 rpm, extracted \
                  seek curve (106 points), head switch 0.030 ms, write settle 0.461 ms, overheads (read miss \
                  0.28362/0.08673 ms after read/write, read hit 0.066/0.273, write miss 0.90692/0.8964), bus \
                  0.105 ms/sector, 3 segments of 561 sectors, read-ahead 561. Simplified: spare cylinders \
                  between zones, spare and slipped sectors are not modelled (zones are contiguous and \
                  truncated at the block count); writes are write-through (DiskSim's model reports writes \
                  early, fast write level 2)."
                .into(),
        rpm: 10045,
        surfaces: 12,
        zones: disksim_zones(&CHEETAH9LP_ZONES),
        capacity_sectors: 17_783_240,
        seek: disksim_seek(&CHEETAH9LP_SEEK),
        head_switch: us(30),
        write_settle: us(461),
        overheads: Overheads {
            read_miss_after_read: ms6(283_620),
            read_miss_after_write: ms6(86_730),
            read_hit_after_read: us(66),
            read_hit_after_write: us(273),
            write_after_read: ms6(906_920),
            write_after_write: ms6(896_400),
        },
        bus_per_sector: us(105),
        cache: CacheSpec { segments: 3, segment_sectors: 561, max_read_ahead_sectors: 561 },
    }
}

fn ibm18es() -> DiskSpec {
    DiskSpec {
        name: "ibm18es".into(),
        description: "IBM Ultrastar 18ES DNES-309170W: 9.1 GB, 7200 rpm, Ultra2 SCSI (DiskSim-validated)"
            .into(),
        sources:
            "DiskSim 4.0 validation files ibm18es.{model,seek,diskspecs}: 5 surfaces, 55 zones with their \
                  sectors/track and skews, block count 17,916,240, 7200 rpm, extracted seek curve (151 \
                  points), head switch 0.062 ms, write settle 0.126 ms, overheads (read miss 0.25229/0.42386 \
                  ms after read/write, read hit 0.082/0.121, write miss 0.49386/0.79329), bus 0.101 \
                  ms/sector, 7 segments of 511 sectors, read-ahead 511. Simplified as for cheetah9lp (no \
                  spares, slips or the 1,950-sector empty zone front; separate write segment not modelled)."
                .into(),
        rpm: 7200,
        surfaces: 5,
        zones: disksim_zones(&IBM18ES_ZONES),
        capacity_sectors: 17_916_240,
        seek: disksim_seek(&IBM18ES_SEEK),
        head_switch: us(62),
        write_settle: us(126),
        overheads: Overheads {
            read_miss_after_read: ms6(252_290),
            read_miss_after_write: ms6(423_860),
            read_hit_after_read: us(82),
            read_hit_after_write: us(121),
            write_after_read: ms6(493_860),
            write_after_write: ms6(793_290),
        },
        bus_per_sector: us(101),
        cache: CacheSpec { segments: 7, segment_sectors: 511, max_read_ahead_sectors: 511 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headway_sched::{Dir, Time};

    #[test]
    fn every_builtin_is_valid_and_named() {
        assert_eq!(builtin_names()[0], DEFAULT);
        for name in builtin_names() {
            let s = builtin(name).unwrap();
            assert_eq!(s.name, *name);
            s.validate().unwrap();
            assert!(!s.description.is_empty() && !s.sources.is_empty());
            let g = s.geometry_sectors();
            assert!(
                g >= s.capacity_sectors && g - s.capacity_sectors < s.capacity_sectors / 100,
                "{name}: {g}"
            );
        }
        assert!(builtin("WD5000AAKS").is_some());
        assert!(builtin("Deskstar-34GXP").is_some());
        assert!(builtin("nope").is_none());
    }

    #[test]
    fn wd5000aaks_rates_match_the_sources() {
        let h = crate::Hdd::new(builtin("wd5000aaks").unwrap());
        let g = h.geometry();
        let outer = g.streaming_rate(0) / 1e6;
        let inner = g.streaming_rate(g.capacity() - 1) / 1e6;
        assert!((105.0..115.0).contains(&outer), "outer {outer} MB/s");
        assert!((52.0..58.0).contains(&inner), "inner {inner} MB/s");
        assert_eq!(h.spec().zones.len(), 24);
        // 24 x 6,590 cylinders; the last few beyond the IDEMA capacity are not addressable
        assert_eq!(g.cylinders(), 158_155);
    }

    /// Closed-loop synchronous reads of `len` sectors at each LBN in turn, zero think time:
    /// (bytes per second, mean ms per request).
    fn sync_reads(h: &mut crate::Hdd, lbns: impl Iterator<Item = u64>, len: u32) -> (f64, f64) {
        let mut t = Time(0);
        let mut n = 0u64;
        for lbn in lbns {
            t = h.access(t, lbn, len, Dir::Read).done;
            n += 1;
        }
        let secs = t.0 as f64 / 1e9;
        ((n * len as u64 * 512) as f64 / secs, secs * 1e3 / n as f64)
    }

    /// 64 KiB, the request size of the paper's microbenchmarks.
    const BLOCK: u32 = 128;
    /// One of the paper's 1 GB files (taken as GiB: the paper does not say), in sectors.
    const FILE: u64 = 1 << 21;

    #[test]
    fn deskstar_34gxp_geometry_and_rates() {
        let h = crate::Hdd::new(builtin("deskstar-34gxp").unwrap());
        let g = h.geometry();
        assert_eq!(g.capacity(), 40_088_160, "IBM-DPTA-372050 LBA count");
        assert_eq!(g.surfaces(), 6);
        assert_eq!(h.spec().rpm, 7200);
        let outer = g.streaming_rate(0) / 1e6;
        let inner = g.streaming_rate(g.capacity() - 1) / 1e6;
        assert!((21.0..23.0).contains(&outer), "outer {outer} MB/s");
        assert!((11.5..13.5).contains(&inner), "inner {inner} MB/s");
        // off the media, before switches: the 15-26 MB/s the family is quoted at
        let media = |spt: u32| spt as f64 * 512.0 * 120.0 / 1e6;
        let z = &h.spec().zones;
        assert!((25.0..27.0).contains(&media(z[0].sectors_per_track)));
        assert!((14.0..16.0).contains(&media(z[z.len() - 1].sectors_per_track)));
    }

    /// seeds/001 Section 2: sequential 64 KB reads run at "21 MB/s on our disk, owing to a
    /// service time of 3ms for every 64 KB block"; two processes alternating between their
    /// files fall to 5 MB/s, "due to 9ms of average seek time and 3ms of read time".
    #[test]
    fn deskstar_34gxp_reproduces_the_papers_numbers() {
        let spec = builtin("deskstar-34gxp").unwrap();
        // one file in the outer part of the disk, read sequentially in 64 KiB blocks
        let mut h = crate::Hdd::new(spec.clone());
        let (rate, ms) = sync_reads(&mut h, (0..FILE / BLOCK as u64).map(|i| i * BLOCK as u64), BLOCK);
        assert!((20.0e6..23.0e6).contains(&rate), "sequential {:.1} MB/s", rate / 1e6);
        assert!((2.7..3.3).contains(&ms), "{ms} ms per 64 KB block");
        // two files side by side, served alternately (deceptive idleness): each block now
        // pays a seek across a file and a rotational wait
        let mut h = crate::Hdd::new(spec);
        let alternate = (0..2 * 4096u64).map(|i| (i % 2) * FILE + (i / 2) * BLOCK as u64);
        let (rate, ms) = sync_reads(&mut h, alternate, BLOCK);
        assert!((4.0e6..7.0e6).contains(&rate), "alternating {:.1} MB/s", rate / 1e6);
        assert!(ms > 3.0 + 4.0, "{ms} ms per block");
    }

    #[test]
    fn deskstar_34gxp_random_reads_cost_seek_plus_half_a_turn() {
        let mut h = crate::Hdd::new(builtin("deskstar-34gxp").unwrap());
        let cap = h.capacity();
        let mut x = 42u64;
        let lbns = (0..20_000).map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((((x >> 11) as u128 * (cap - 8) as u128) >> 53) as u64) & !7
        });
        let (_, mean) = sync_reads(&mut h, lbns, 8);
        // average seek + half a revolution + controller overhead
        let expect = 9.0 + 60e3 / 7200.0 / 2.0 + 0.2;
        assert!((mean / expect - 1.0).abs() < 0.2, "mean {mean} ms vs {expect} ms ± 20%");
    }
}

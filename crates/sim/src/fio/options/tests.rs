//! One test per option, in table order, each with a valid and an invalid value; through
//! the whole parser so that the error text (file, line, option) is checked too.

use super::*;
use crate::fio::{parse_str, JobFileError};
use headway_sched::Duration;

/// The one job of `[j]\n{body}`.
fn job(body: &str) -> JobSpec {
    let mut f = parse_str(&format!("[j]\n{body}\n"), "t.fio").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.jobs.len(), 1);
    f.jobs.remove(0)
}

/// The error for `[j]\n{body}`, checked to name the file and the option.
fn fails(body: &str) -> String {
    let e = parse_str(&format!("[j]\n{body}\n"), "t.fio").expect_err(body).to_string();
    assert!(e.starts_with("t.fio:"), "{e}");
    let option = body.lines().last().unwrap().split('=').next().unwrap().trim();
    assert!(e.contains(&format!("`{option}`")), "{e} (for {body})");
    e
}

#[test]
fn table_is_well_formed() {
    let mut seen = std::collections::BTreeSet::new();
    for o in OPTIONS {
        assert!(!o.doc.is_empty(), "{}", o.name());
        for n in o.names {
            assert!(seen.insert(*n), "`{n}` listed twice");
            assert_eq!(find(n).unwrap().0, o.name());
        }
    }
    assert!(find("cgroup_weight").is_none());
}

#[test]
fn every_no_effect_option_is_in_the_module_docs() {
    let docs = include_str!("../mod.rs");
    for o in OPTIONS.iter().filter(|o| o.no_effect.is_some()) {
        assert!(docs.contains(&format!("`{}`", o.name())), "`{}` missing in mod.rs", o.name());
    }
}

#[test]
fn kb_base() {
    assert_eq!(job("kb_base=1000\nbs=4KiB\nsize=8k").size, Some(8000));
    assert_eq!(job("kb_base=1000\nbs=4KiB").bs_read, 4096);
    assert_eq!(job("kb_base=1024\nsize=8k").size, Some(8192));
    assert!(fails("kb_base=1010").contains("not 1000 or 1024"));
}

#[test]
fn rw() {
    assert_eq!(job("rw=randwrite").pattern, Pattern::RandWrite);
    assert_eq!(job("readwrite=randrw").pattern, Pattern::RandRw);
    assert_eq!(job("rw=rw").pattern, Pattern::ReadWrite);
    assert_eq!(job("rw=readwrite").pattern, Pattern::ReadWrite);
    assert_eq!(job("rw=randread").pattern, Pattern::RandRead);
    let j = job("rw=write:8k");
    assert_eq!((j.pattern, j.skip), (Pattern::Write, 8192));
    assert_eq!(job("rw=read:8k\nrw=read").skip, 0);
    assert!(fails("rw=sequential").contains("unknown pattern `sequential`"));
    assert!(fails("rw=trim").contains("trims are not supported"));
    assert!(fails("rw=randread:8").contains("random pattern"));
    assert!(fails("rw=read:4q").contains("malformed size `4q`"));
    assert!(fails("rw=").contains("needs a value"));
}

#[test]
fn rwmixread_and_rwmixwrite() {
    assert_eq!(job("rwmixread=70").rwmixread, 70);
    assert_eq!(job("rwmixwrite=70").rwmixread, 30);
    assert_eq!(job("rwmixread=70\nrwmixwrite=40").rwmixread, 60);
    assert!(fails("rwmixread=101").contains("out of range"));
    assert!(fails("rwmixwrite=-1").contains("not a whole number"));
}

#[test]
fn random_distribution_and_percentage_random() {
    let r = |d: &str| job(&format!("rw=randread\nrandom_distribution={d}")).random_distribution;
    assert_eq!(r("random"), RandomDistribution::Uniform);
    assert_eq!(r("zipf:1.2"), RandomDistribution::Zipf(1.2));
    assert_eq!(r("pareto:0.2"), RandomDistribution::Pareto(0.2));
    assert_eq!(r("normal:10"), RandomDistribution::Normal(10.0));
    let bad = |d: &str| fails(&format!("rw=randread\nrandom_distribution={d}"));
    assert!(bad("zipf").contains("needs its theta"));
    assert!(bad("zipf:0").contains("above 0"));
    assert!(bad("pareto:1").contains("below 1"));
    assert!(bad("normal:-5").contains("above 0"));
    assert!(bad("zoned:50/5:50/95").contains("not supported"));
    assert!(bad("lognormal").contains("is not random, zipf"));
    assert_eq!(job("rw=randrw\npercentage_random=30").percentage_random, 30);
    assert!(fails("rw=randread\npercentage_random=101").contains("out of range"));
    assert!(fails("rw=randread\npercentage_random=50,50").contains("one value"));
    // only random patterns have random offsets to shape
    let e = fails("rw=read\nrandom_distribution=zipf:1.1");
    assert!(e.starts_with("t.fio:3:") && e.contains("no effect on a sequential pattern"), "{e}");
    assert!(fails("percentage_random=50").contains("no effect on a sequential pattern"));
}

#[test]
fn bs() {
    let j = job("bs=64k");
    assert_eq!((j.bs_read, j.bs_write), (65536, 65536));
    let j = job("blocksize=4k,16k");
    assert_eq!((j.bs_read, j.bs_write), (4096, 16384));
    let j = job("bs=8k,");
    assert_eq!((j.bs_read, j.bs_write), (8192, 4096));
    let j = job("bs=,8k");
    assert_eq!((j.bs_read, j.bs_write), (4096, 8192));
    let j = job("bs=8k,16k,32k");
    assert_eq!((j.bs_read, j.bs_write), (8192, 16384));
    let j = job("bs=16k\nbs=,8k");
    assert_eq!((j.bs_read, j.bs_write), (16384, 8192));
    let e = fails("bs=4q");
    assert_eq!(e, "t.fio:2: option `bs`: malformed size `4q` (expected e.g. 4k, 1M, 512)");
    assert!(fails("bs=0").contains("must be > 0"));
    assert!(fails("bs=1000").contains("not a multiple of 512"));
    assert!(fails("bs=4k,1000").contains("not a multiple of 512"));
    assert!(fails("bs=1k,2k,4k,8k").contains("at most three"));
    assert!(fails("bs=,").contains("needs a value"));
    assert!(fails("blocksize=").contains("option `blocksize`: needs a value"));
}

#[test]
fn bsrange() {
    let j = job("bsrange=4k-64k");
    assert_eq!(j.bsrange, [Some((4096, 65536)); 2]);
    assert_eq!(j.bs_bounds(1), (4096, 65536));
    let j = job("blocksize_range=1k-4k,8k-16k");
    assert_eq!(j.bsrange, [Some((1024, 4096)), Some((8192, 16384))]);
    // bs and bsrange: the last one wins
    assert_eq!(job("bsrange=4k-64k\nbs=8k").bs_bounds(0), (8192, 8192));
    assert_eq!(job("bs=8k\nbsrange=4k-64k").bs_bounds(0), (4096, 65536));
    assert!(fails("bsrange=4k").contains("is not MIN-MAX"));
    assert!(fails("bsrange=64k-4k").contains("MIN is above MAX"));
    assert!(fails("bsrange=1000-4k").contains("not a multiple of 512"));
}

#[test]
fn bssplit() {
    let j = job("bssplit=4k/80:64k/20");
    assert_eq!(j.bssplit[0], Some(vec![(4096, 80), (65536, 20)]));
    assert_eq!(j.bssplit[1], j.bssplit[0]);
    assert_eq!(j.bs_bounds(0), (4096, 65536));
    // sizes without a share split what is left evenly; the first takes the remainder
    let j = job("bssplit=4k/40:8k:16k:32k");
    assert_eq!(j.bssplit[0], Some(vec![(4096, 40), (8192, 20), (16384, 20), (32768, 20)]));
    let j = job("bssplit=4k:8k:16k");
    assert_eq!(j.bssplit[0], Some(vec![(4096, 34), (8192, 33), (16384, 33)]));
    // per direction, and a share of 0 drops the size
    let j = job("bssplit=4k/50:8k/50,64k/100:128k/0");
    assert_eq!(j.bssplit, [Some(vec![(4096, 50), (8192, 50)]), Some(vec![(65536, 100)])]);
    let j = job("bssplit=4k/100,");
    assert_eq!(j.bssplit, [Some(vec![(4096, 100)]), None]);
    // precedence over bs, as in fio
    assert_eq!(job("bssplit=16k/100\nbs=4k").bs_bounds(0), (16384, 16384));
    assert!(fails("bssplit=4k/50:8k/40").contains("add up to 90, not 100"));
    assert!(fails("bssplit=4k/70:8k/40").contains("over 100"));
    assert!(fails("bssplit=4k/x").contains("not a percentage"));
    assert!(fails("bssplit=4k/0").contains("add up to 0, not 100"));
    assert!(fails("bssplit=1000/100").contains("not a multiple of 512"));
    assert!(fails("bssplit=4k,4k,4k,4k").contains("at most three"));
}

#[test]
fn size() {
    assert_eq!(job("size=1g").size, Some(1 << 30));
    assert_eq!(job("").size, None);
    let j = job("size=10%");
    assert_eq!((j.size, j.size_percent), (None, Some(10)));
    assert_eq!(job("size=10%\nsize=1g").size_percent, None);
    assert!(fails("size=0%").contains("not a percentage (1% to 100%)"));
    assert!(fails("size=101%").contains("not a percentage"));
    assert!(fails("size=0").contains("must be > 0"));
    assert!(fails("size=1GiB").contains("ambiguous"));
    assert!(fails("bs=8k\nsize=4k").contains("less than the block size"));
}

#[test]
fn io_size() {
    assert_eq!(job("io_size=2g").io_size, Some(2 << 30));
    assert_eq!(job("io_limit=2m").io_size, Some(2 << 20));
    assert!(fails("io_size=x").contains("malformed size"));
    assert!(fails("io_limit=0").contains("must be > 0"));
}

#[test]
fn loops_and_number_ios() {
    assert_eq!(job("loops=3").loops, 3);
    assert_eq!(job("").loops, 1);
    assert_eq!(job("number_ios=100").number_ios, Some(100));
    assert!(fails("loops=0").contains("out of range"));
    assert!(fails("number_ios=0").contains("out of range"));
}

#[test]
fn offset_and_increment() {
    let j = job("offset=1m\noffset_increment=51g");
    assert_eq!((j.offset, j.offset_increment), (1 << 20, 51 << 30));
    let j = job("offset=5%");
    assert_eq!((j.offset, j.offset_percent), (0, Some(5)));
    assert_eq!(job("offset=5%\noffset=1m").offset_percent, None);
    assert!(fails("offset=100%").contains("leaves no room"));
    let j = job("offset_increment=25%");
    assert_eq!((j.offset_increment, j.offset_increment_percent), (0, Some(25)));
    assert!(fails("offset_increment=100%").contains("leaves no room"));
    assert!(fails("offset=x%").contains("not a percentage"));
    assert!(fails("offset_increment=-4k").contains("malformed size"));
}

#[test]
fn numjobs() {
    assert_eq!(job("numjobs=4").numjobs, 4);
    assert!(fails("numjobs=0").contains("out of range"));
    assert!(fails("numjobs=four").contains("not a whole number"));
    assert!(fails("numjobs=99999999999").contains("out of range"));
}

#[test]
fn ioengine_and_iodepth() {
    for e in ["psync", "sync", "pvsync", "pvsync2", "vsync"] {
        assert_eq!(job(&format!("ioengine={e}")).engine, Engine::Sync);
    }
    for e in ["libaio", "io_uring", "posixaio"] {
        assert_eq!(job(&format!("ioengine={e}")).engine, Engine::Async);
    }
    let j = job("ioengine=libaio\niodepth=32");
    assert_eq!((j.engine, j.iodepth), (Engine::Async, 32));
    // fio accepts a depth with a sync engine; it has no effect there.
    assert_eq!(job("iodepth=32\nioengine=psync").iodepth, 1);
    assert!(fails("ioengine=mmap").contains("engine `mmap` is not supported"));
    assert!(fails("iodepth=0").contains("out of range"));
    assert!(fails("iodepth=").contains("needs a value"));
    let j = job("ioengine=libaio\niodepth=16\niodepth_low=4\niodepth_batch_complete_min=2");
    assert_eq!((j.iodepth_low, j.iodepth_batch_complete_min), (Some(4), 2));
    assert_eq!(job("ioengine=libaio\niodepth_batch_complete=0").iodepth_batch_complete_min, 1);
    // a sync engine has nothing to batch
    let j = job("iodepth=16\niodepth_low=4\niodepth_batch_complete_min=2");
    assert_eq!((j.iodepth_low, j.iodepth_batch_complete_min), (None, 1));
    job("ioengine=libaio\niodepth=8\niodepth_batch_submit=4\niodepth_batch_complete_max=8");
    let e = fails("ioengine=libaio\niodepth=4\niodepth_low=8");
    assert!(e.starts_with("t.fio:4:") && e.contains("8 is above `iodepth` (4)"), "{e}");
    assert!(fails("iodepth_batch_complete_min=x").contains("not a whole number"));
}

#[test]
fn direct_and_buffered() {
    assert!(!job("").direct);
    assert!(job("direct=1").direct);
    assert!(job("direct").direct);
    assert!(!job("direct=1\nbuffered=1").direct);
    assert!(job("buffered=0").direct);
    assert!(fails("direct=yes").contains("not a flag"));
    assert!(fails("buffered=2").contains("not a flag"));
}

#[test]
fn thinktime() {
    assert_eq!(job("thinktime=250").thinktime, Duration::from_micros(250));
    assert_eq!(job("thinktime=5ms").thinktime, Duration::from_millis(5));
    assert_eq!(job("thinktime_blocks=8").thinktime_blocks, 8);
    assert!(fails("thinktime=1.5ms").contains("malformed time"));
    assert!(fails("thinktime_blocks=0").contains("out of range"));
}

#[test]
fn rate_iops() {
    let j = job("rate_iops=100");
    assert_eq!((j.rate_iops, j.rate_iops_write), (Some(100), Some(100)));
    let j = job("rate_iops=100,50");
    assert_eq!((j.rate_iops, j.rate_iops_write), (Some(100), Some(50)));
    let j = job("rate_iops=,50");
    assert_eq!((j.rate_iops, j.rate_iops_write), (None, Some(50)));
    let j = job("rate_iops=100,");
    assert_eq!((j.rate_iops, j.rate_iops_write), (Some(100), None));
    assert_eq!(job("rate_iops=100\nrate_iops=0").rate_iops, None);
    assert!(fails("rate_iops=fast").contains("not a whole number"));
}

#[test]
fn rate() {
    assert_eq!(job("rate=1m").rate_bytes, [Some(1 << 20); 2]);
    assert_eq!(job("rate=1m,500k").rate_bytes, [Some(1 << 20), Some(500 << 10)]);
    assert_eq!(job("rate=,2m").rate_bytes, [None, Some(2 << 20)]);
    assert_eq!(job("rate=1m\nrate=0").rate_bytes, [None, None]);
    assert!(fails("rate=quick").contains("malformed size"));
    assert!(job("rate_iops=100\nrate_process=poisson").rate_poisson);
    assert!(!job("rate=1m\nrate_process=linear").rate_poisson);
    assert!(fails("rate_iops=100\nrate_process=bursty").contains("not linear or poisson"));
    assert!(fails("rate_process=poisson").contains("give `rate_iops` or `rate`"));
}

#[test]
fn runtime_time_based_startdelay() {
    let j = job("runtime=30\ntime_based");
    assert_eq!((j.runtime, j.time_based), (Some(Duration::from_secs(30)), true));
    assert_eq!(job("runtime=2m").runtime, Some(Duration::from_secs(120)));
    assert_eq!(job("runtime=0").runtime, None);
    assert!(!job("runtime=1\ntime_based=0").time_based);
    assert_eq!(job("startdelay=500ms").startdelay, Duration::from_millis(500));
    assert_eq!(job("startdelay=2").startdelay, Duration::from_secs(2));
    assert!(fails("runtime=soon").contains("malformed time"));
    assert!(fails("time_based=2").contains("not a flag"));
    let e = fails("time_based");
    assert!(e.starts_with("t.fio:2:") && e.contains("needs a `runtime`"), "{e}");
    assert!(fails("startdelay=1-5").contains("ranges are not supported"));
    assert_eq!(job("ramp_time=5").ramp_time, Duration::from_secs(5));
    assert_eq!(job("ramp_time=500ms").ramp_time, Duration::from_millis(500));
    assert!(fails("ramp_time=soon").contains("malformed"));
}

#[test]
fn stonewall_and_wait_for_previous() {
    assert!(job("stonewall").stonewall);
    assert!(job("wait_for_previous=1").stonewall);
    assert!(!job("").stonewall);
    assert!(fails("stonewall=on").contains("not a flag"));
    assert!(job("exitall").exitall);
    assert!(!job("exitall=0").exitall);
    assert!(fails("exitall=yes").contains("not a flag"));
    assert_eq!(job("percentile_list=99.9:50:99").percentile_list, Some(vec![50.0, 99.0, 99.9]));
    assert!(fails("percentile_list=50:101").contains("`101` is not a percentile"));
    assert!(fails("percentile_list=0").contains("not a percentile"));
    assert!(fails("percentile_list=").contains("needs a value"));
    assert_eq!(job("fsync=8").fsync, 8);
    assert_eq!(job("fdatasync=1").fsync, 1);
    assert!(job("end_fsync=1").end_fsync);
    assert!(fails("fsync=-1").contains("not a whole number"));
    assert!(fails("end_fsync=2").contains("not a flag"));
    for v in ["sync", "sync=1", "sync=sync", "sync=dsync"] {
        assert!(job(v).osync, "{v}");
    }
    assert!(!job("sync=0").osync && !job("sync=none").osync);
    assert!(fails("sync=2").contains("not 0, 1, none, sync or dsync"));
    let e = fails("ioengine=libaio\nsync=1");
    assert!(e.contains("asynchronous engine") && e.starts_with("t.fio:3:"), "{e}");
}

#[test]
fn randseed() {
    assert_eq!(job("randseed=1234").randseed, Some(1234));
    assert!(fails("randseed=abc").contains("not a whole number"));
}

#[test]
fn zones() {
    let s = |body| job(body).strided;
    let z = |zonesize, zonerange, zoneskip| Some(Strided { zonesize, zonerange, zoneskip });
    assert_eq!(s("zonemode=strided\nzonesize=4k\nzonerange=16k"), z(4096, 16384, 0));
    assert_eq!(s("zonesize=4k\nzoneskip=1m"), z(4096, 4096, 1 << 20));
    assert_eq!(s("zonemode=none"), None);
    assert!(fails("zonemode=zbd").contains("not supported"));
    assert!(fails("zonemode=strided").contains("needs a `zonesize`"));
    assert!(fails("zonemode=none\nzonesize=4k").contains("has no effect"));
    assert!(fails("zonerange=16k").contains("has no effect"));
    assert!(fails("zonesize=0").contains("must be > 0"));
    assert!(fails("zoneskip=lots").contains("malformed size"));
}

#[test]
fn io_priorities() {
    use headway_sched::{IoClass, IoPrio};
    assert_eq!(job("prioclass=1\nprio=2").ioprio(), Some(IoPrio { class: IoClass::Rt, level: 2 }));
    assert_eq!(job("prio=6").ioprio(), Some(IoPrio { class: IoClass::Be, level: 6 }));
    assert_eq!(job("prioclass=3").ioprio(), Some(IoPrio { class: IoClass::Idle, level: 7 }));
    assert_eq!(job("rw=read").ioprio(), None);
    assert!(fails("prioclass=4").contains("not 1 (real time), 2 (best effort) or 3 (idle)"));
    assert!(fails("prioclass=0").contains("not 1 (real time)"));
    assert!(fails("prio=8").contains("between 0 and 7"));
    assert!(fails("prio=high").contains("not a whole number"));
}

#[test]
fn headway_extensions() {
    let j = job("headway_process=db\nheadway_barrier=5\nheadway_vm=guest1\nheadway_weight=2");
    assert_eq!(j.headway_process.as_deref(), Some("db"));
    assert_eq!(j.headway_barrier, 5);
    assert_eq!(j.headway_vm.as_deref(), Some("guest1"));
    assert_eq!(j.headway_weight, 2);
    let d = job("rw=read");
    assert_eq!((d.headway_process, d.headway_barrier, d.headway_vm, d.headway_weight), (None, 0, None, 1));
    assert!(
        fails("headway_process=").contains("needs a value")
            || fails("headway_process=").contains("not a name")
    );
    assert!(fails("headway_barrier=five").contains("not a whole number"));
    assert!(fails("headway_weight=0").contains("between 1 and 1000"));
    assert!(fails("headway_vm=a b").contains("not a name"));
}

#[test]
fn headway_qos_class() {
    use headway_sched::{Duration, Qos, Rate};
    let j = job("headway_rate=8800k\nheadway_delay=100\nheadway_burst=0");
    assert_eq!(j.headway_rate, Some(Rate::Bytes(8800 * 1024)));
    assert_eq!(j.headway_delay, Some(Duration::from_millis(100)));
    assert_eq!(
        j.qos(),
        Some(Qos { rate: Rate::Bytes(8800 * 1024), delay: Duration::from_millis(100), burst: 0 })
    );
    assert_eq!(job("headway_rate=200iops").headway_rate, Some(Rate::Iops(200)));
    assert_eq!(job("headway_rate=1M").headway_rate, Some(Rate::Bytes(1 << 20)));
    assert_eq!(job("headway_delay=2s").headway_delay, Some(Duration::from_secs(2)));
    // one option gives the job a class; the rest come from the default class
    assert_eq!(job("headway_delay=50ms").qos().unwrap().rate, headway_sched::qos::DEFAULT_RATE);
    assert_eq!(job("rw=read").qos(), None);
    assert!(fails("headway_rate=0").contains("must be > 0"));
    assert!(fails("headway_rate=0iops").contains("must be > 0"));
    assert!(fails("headway_rate=fast").contains("malformed size"));
    assert!(fails("headway_rate=12xiops").contains("not a whole number"));
    assert!(fails("headway_delay=soon").contains("malformed time"));
    assert!(fails("headway_burst=-1").contains("not a whole number"));
}

#[test]
fn headway_workload_and_postmark_parameters() {
    use crate::postmark::PostmarkParams;
    assert_eq!(job("headway_workload=postmark").headway_postmark, Some(PostmarkParams::default()));
    assert_eq!(job("headway_workload=fio").headway_postmark, None);
    assert_eq!(job("headway_workload=postmark\nheadway_workload=fio").headway_postmark, None);
    let j = job("headway_pm_files=10000\nheadway_pm_size_min=512\nheadway_pm_size_max=10k\n\
         headway_pm_transactions=0\nheadway_pm_read_bias=-1\nheadway_pm_create_bias=10\n\
         headway_pm_block=4k,128k\nheadway_pm_create_phase=0\nheadway_workload=postmark\n\
         ioengine=psync\nruntime=10");
    let want = PostmarkParams {
        files: 10000,
        size_min: 512,
        size_max: 10240,
        transactions: 0,
        read_bias: -1,
        create_bias: 10,
        block_read: 4096,
        block_write: 131072,
        create_phase: false,
    };
    assert_eq!(j.headway_postmark, Some(want));
    let p = job("headway_workload=postmark\nheadway_pm_block=64k").headway_postmark.unwrap();
    assert_eq!((p.block_read, p.block_write), (65536, 65536));
    let f = parse_str("[global]\nheadway_pm_files=7\n[j]\nheadway_workload=postmark\n", "t.fio").unwrap();
    assert_eq!(f.jobs[0].headway_postmark.as_ref().map(|p| p.files), Some(7));
    // values, one option at a time
    let pm = |body: &str| fails(&format!("headway_workload=postmark\n{body}"));
    assert!(fails("headway_workload=filebench").contains("not fio or postmark"));
    assert!(pm("headway_pm_files=0").contains("out of range"));
    assert!(pm("headway_pm_size_min=0").contains("not between 1 and"));
    assert!(pm("headway_pm_size_max=2g").contains("not between 1 and"));
    assert!(pm("headway_pm_transactions=lots").contains("not a whole number"));
    assert!(pm("headway_pm_read_bias=11").contains("not -1 (off) or 0 to 10"));
    assert!(pm("headway_pm_create_bias=-2").contains("not -1 (off) or 0 to 10"));
    assert!(pm("headway_pm_block=1000").contains("not a multiple of 512"));
    assert!(pm("headway_pm_block=2g").contains("above"));
    assert!(pm("headway_pm_create_phase=yes").contains("not a flag"));
    // across options: the error names the line that set the offending option
    assert!(pm("headway_pm_size_min=20k").contains("smallest is above the largest"));
    let e = pm("headway_pm_size_min=4k\nheadway_pm_size_max=2k");
    assert!(e.starts_with("t.fio:4:") && e.contains("smallest is above"), "{e}");
    assert_eq!(
        fails("headway_pm_files=10"),
        "t.fio:2: option `headway_pm_files`: has no effect unless `headway_workload=postmark`"
    );
    for walk in ["rw=randread", "rwmixread=30", "bs=4k", "io_size=1m", "zonesize=4k"] {
        assert!(pm(walk).contains("has no effect with `headway_workload=postmark`"), "{walk}");
    }
    assert!(pm("ioengine=libaio").contains("one at a time"));
    assert!(pm("runtime=10\ntime_based").contains("ends after its transactions"));
}

#[test]
fn name() {
    assert_eq!(job("name=reader").name, "reader");
    let e = parse_str("[global]\nname=x\n[j]\n", "t.fio").unwrap_err();
    assert!(e.to_string().contains("t.fio:2: option `name`: belongs in a job section"));
    assert!(fails("name=").contains("needs a value"));
}

#[test]
fn accepted_without_effect() {
    job("description=four readers, 50 GiB apart\nfilename=/dev/sdb\ngroup_reporting\n\
         thread=1\ninvalidate=1\nrandrepeat=0\ngtod_reduce=1\nclocksource=cpu\n\
         fallocate=none\nunit_base=8");
    assert_eq!(job("filename=/dev/dsk/foo@3,0\\:c").name, "j");
    assert!(fails("filename=/dev/sdb:/dev/sdc").contains("several files"));
    assert!(fails("group_reporting=yes").contains("not a flag"));
    assert!(fails("clocksource=tsc").contains("not gettimeofday"));
    assert!(fails("fallocate=maybe").contains("not a fallocate mode"));
    assert!(fails("unit_base=2").contains("not 0, 1 or 8"));
    assert!(fails("description=").contains("needs a value"));
    job("norandommap\nrandom_generator=lfsr\nthinktime_spin=10\ncpus_allowed=0-3\n\
         cpumask=0xf\nallow_mounted_write=1\noverwrite=1\ncreate_on_open=1\nrefill_buffers\n\
         scramble_buffers=0\nzero_buffers\nbuffer_compress_percentage=50\ndisable_lat=1\n\
         disable_slat=1");
    assert!(fails("random_generator=mt").contains("not tausworthe"));
    assert!(fails("thinktime_spin=fast").contains("malformed"));
    assert!(fails("buffer_compress_percentage=150").contains("out of range"));
    assert!(fails("norandommap=2").contains("not a flag"));
}

#[test]
fn reporting_and_logs() {
    let j = job("write_bw_log=out/x\nwrite_lat_log\nwrite_iops_log=y\nwrite_hist_log=h\n\
                 log_avg_msec=100\nlog_hist_msec=1000\nper_job_logs=0\nlog_offset=1\n\
                 log_max_value=1\nbw_avg_time=250\niops_avg_time=1000\ngroup_reporting\nnew_group");
    let l = &j.report.logs;
    assert_eq!((l.bw.as_deref(), l.lat.as_deref(), l.iops.as_deref()), (Some("out/x"), Some(""), Some("y")));
    assert_eq!((l.hist.as_deref(), l.avg_msec, l.hist_msec), (Some("h"), 100, 1000));
    assert!(!l.per_job && l.offset && l.max_value);
    assert_eq!((j.report.bw_avg_ms, j.report.iops_avg_ms), (250, 1000));
    assert!(j.report.group_reporting && j.report.new_group);
    // fio's defaults
    let d = job("rw=read");
    assert!(d.report.logs.per_job && !d.report.logs.any() && !d.report.group_reporting);
    assert_eq!((d.report.bw_avg_ms, d.report.iops_avg_ms), (500, 500));
    assert!(fails("bw_avg_time=0").contains("at least 1 ms"));
    assert!(fails("log_avg_msec=1s").contains("not a whole number"));
    assert!(fails("per_job_logs=2").contains("not a flag"));
    // the options as written, fio's "job options" and "global options"; headway's own
    // (comments to fio) are not among them
    let f = parse_str(
        "[global]\nbs=4k\ndirect=1\n[j]\nrw=read\ntime_based\nruntime=1\n; @headway weight=2\n",
        "t.fio",
    )
    .unwrap();
    let own = |v: &[(String, String)]| v.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>();
    assert_eq!(own(&f.global_options), ["bs=4k", "direct=1"]);
    assert_eq!(own(&f.jobs[0].report.options), ["rw=read", "time_based=", "runtime=1"]);
    assert_eq!(f.jobs[0].headway_weight, 2);
}

#[test]
fn unknown_options_are_errors() {
    let e = parse_str("[j]\nbs=4k\ncgroup_weight=100\n", "jobs/x.fio").unwrap_err();
    assert!(matches!(e, JobFileError::UnknownOption { .. }));
    assert_eq!(e.to_string(), "jobs/x.fio:3: unknown option `cgroup_weight` (headway does not implement it)");
}

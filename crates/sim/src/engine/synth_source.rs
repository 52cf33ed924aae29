//! DiskSim's synthetic generators as a workload source ([`crate::synthio`]): one job per
//! generator, the process-flow model ([`Flow`]) deciding when each issues. A think time is
//! an event of this source; a completion goes back to the flow. When the flow stops the run
//! (the request count, or the time limit), requests still in flight are abandoned, as in
//! DiskSim: they finish in the drive but count in no job's figures.

use std::collections::HashMap;

use headway_sched::{Dir, ReqId, Request, Time, SECTOR_BYTES};

use super::core::Ev;
use super::machine::{Machine, Reaped};
use super::source::Source;
use crate::synthio::flow::{Flow, Step};
use crate::synthio::gen::Class;
use crate::trace::TraceError;
use crate::workload::Job;

pub(super) struct SynthSource {
    flow: Flow,
    /// The flow's token of each request in flight.
    tokens: HashMap<ReqId, u64>,
    /// Each generator's blocking factor (sectors a block).
    blocking: Vec<u64>,
    /// The run has several devices: a request's device goes into its address.
    several: bool,
    /// Each device's sectors and name (one entry without several devices).
    devices: Vec<(u64, String)>,
    error: Option<TraceError>,
    stopped: bool,
}

impl SynthSource {
    pub fn new(flow: Flow, blocking: Vec<u64>, several: bool, devices: Vec<(u64, String)>) -> Self {
        SynthSource { flow, tokens: HashMap::new(), blocking, several, devices, error: None, stopped: false }
    }

    fn apply(&mut self, m: &mut Machine, steps: Vec<Step>) {
        let now = m.core.now;
        let mut submitted = false;
        for s in steps {
            match s {
                Step::ThinkUntil { proc, at } => m.core.push(Time(at), Ev::Source(proc as u32)),
                Step::Issue { proc, req, token } => {
                    let b = self.blocking[proc];
                    let d = if self.several { req.device as usize } else { 0 };
                    let (local, len) = (req.block as u64 * b, (req.count as u64 * b) as u32);
                    let (capacity, name) = &self.devices[d];
                    if local + len as u64 > *capacity {
                        self.error = Some(TraceError::SyntheticBeyond {
                            generator: proc,
                            device: name.clone(),
                            sector: local,
                            len,
                            capacity: *capacity,
                        });
                        self.stopped = true;
                        return;
                    }
                    let sector = ((d as u64) << super::DEVICE_SHIFT) | local;
                    let dir = if req.read { Dir::Read } else { Dir::Write };
                    let job = &mut m.jobs[proc];
                    job.progress.started_at.get_or_insert(now);
                    job.progress.inflight += 1;
                    job.progress.issued += 1;
                    job.progress.issued_bytes += len as u64 * SECTOR_BYTES;
                    let ctx = m.issuers.of_trace_context(proc as u32);
                    let id = m.new_request(proc, dir, sector, len, proc as u32);
                    self.tokens.insert(id, token);
                    // a time-critical or time-limited request is one its process may wait
                    // for; a background one it never waits for
                    let sync = req.class != Class::Background;
                    let rq = Request { id, sector, len, dir, sync, arrival: now, ctx };
                    m.block.arrive(&mut m.core, rq, proc as u32);
                    submitted = true;
                }
                Step::Stop => {
                    self.stopped = true;
                    for job in &mut m.jobs {
                        job.progress.stopped = true;
                        job.progress.finished_at = Some(now);
                    }
                }
            }
        }
        if submitted {
            m.block.fill_kicked(&mut m.core);
        }
    }
}

impl Source for SynthSource {
    fn start(&mut self, m: &mut Machine) {
        for i in 0..self.blocking.len() {
            m.add_job(Job::for_trace(format!("synthgen{i}"), i));
        }
        let steps = self.flow.start(m.core.now.0);
        self.apply(m, steps);
    }

    fn wake(&mut self, m: &mut Machine, key: u32) {
        let steps = self.flow.think_done(key as usize, m.core.now.0);
        self.apply(m, steps);
    }

    fn completed(&mut self, m: &mut Machine, r: Reaped) {
        let token = self.tokens.remove(&r.id).expect("every synthetic request has a token");
        if self.stopped {
            // abandoned when the run stopped: out of the job's flight, in no figure
            m.jobs[r.meta.job as usize].reaped_one();
            return;
        }
        m.count(&r);
        let now = m.core.now;
        m.jobs[r.meta.job as usize].progress.finished_at = Some(now);
        let steps = self.flow.completed(token, now.0);
        self.apply(m, steps);
    }

    fn flushed(&mut self, _m: &mut Machine, _token: u64) {
        unreachable!("synthetic generators never flush")
    }

    fn unfinished(&self, _m: &Machine) -> usize {
        0
    }

    fn take_error(&mut self) -> Option<TraceError> {
        self.error.take()
    }

    fn failed(&self) -> bool {
        self.error.is_some()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::super::{block, Engine, EngineError};
    use crate::synthio::testutil::{self, gen};
    use crate::synthio::SynthSpec;
    use headway_sched::{ArraySchedulers, Settings};

    fn spec(gens: Vec<crate::synthio::gen::GenSpec>, requests: u64) -> SynthSpec {
        let n = gens.len() as u32;
        testutil::spec(gens, n, requests)
    }

    /// (submit, complete) of every counted request, and the report's request count.
    fn run(s: SynthSpec) -> Result<(Vec<(u64, u64)>, u64), EngineError> {
        let (disk, curve) = block::tests::disk_and_curve();
        let input = block::tests::input(&disk, &curve, None);
        let sched = headway_sched::registry::build("noop", &mut Settings::new()).unwrap();
        let log = RefCell::new(Vec::new());
        let engine = Engine::synthetic(ArraySchedulers { members: vec![sched], hooks: None }, s, &input)?
            .with_request_log(Box::new(|r| log.borrow_mut().push((r.submit_ns, r.complete_ns))));
        let r = engine.run(|_| {})?;
        let ios = r.jobs.iter().map(|j| j.read.total_ios).sum();
        Ok((log.into_inner(), ios))
    }

    #[test]
    fn a_closed_generator_issues_a_think_time_after_each_completion() {
        let (log, ios) = run(spec(vec![gen(1.0, 2.0, 1_000_000)], 20)).unwrap();
        assert_eq!((log.len(), ios), (20, 20), "closed: every request completes before the stop");
        assert_eq!(log[0].0, 2_000_000);
        for w in log.windows(2) {
            assert_eq!(w[1].0 - w[0].1, 2_000_000, "the next request 2 ms after the last completed");
        }
    }

    #[test]
    fn an_open_generator_keeps_its_pace_and_abandons_what_is_in_flight_at_the_stop() {
        let (log, ios) = run(spec(vec![gen(0.0, 50.0, 1_000_000)], 10)).unwrap();
        // ten issued every 50 ms; the tenth is in flight when the tenth generation stops
        // the run: it counts nowhere
        assert_eq!((log.len(), ios), (9, 9));
        let submits: Vec<u64> = log.iter().map(|l| l.0).collect();
        assert_eq!(submits, (1..10).map(|k| k * 50_000_000).collect::<Vec<_>>());
    }

    #[test]
    fn what_the_machine_cannot_hold_is_refused() {
        // a capacity above the device's: the run stops at the first request past it
        let e = run(spec(vec![gen(1.0, 2.0, u64::MAX / 2)], 5)).unwrap_err().to_string();
        assert!(e.contains("ends past the") && e.contains("Storage capacity per device"), "{e}");
        // one only a little above, whose requests all land inside: it runs
        let (disk, _) = block::tests::disk_and_curve();
        let (log, _) = run(spec(vec![gen(1.0, 2.0, disk.capacity_sectors + 8)], 5)).unwrap();
        assert_eq!(log.len(), 5);
        let mut g = gen(1.0, 2.0, 1000);
        g.devices = vec![0, 1];
        let e = run(spec(vec![g], 5)).unwrap_err().to_string();
        assert!(e.contains("several devices"), "{e}");
    }
}

#[cfg(test)]
mod devices_tests {
    use std::cell::RefCell;

    use super::super::{block, Engine, RunInput};
    use crate::synthio::testutil::{self, gen};
    use headway_sched::{ArraySchedulers, Settings};

    #[test]
    fn generators_over_several_devices_reach_each_device_at_its_own_address() {
        let (_, curve) = block::tests::disk_and_curve();
        let models =
            [headway_disk::builtin("wd5000aaks").unwrap(), headway_disk::builtin("cheetah-15k4").unwrap()];
        let devices = lone(&models);
        let input = RunInput { devices: &devices, ..block::tests::input(&models[0], &curve, None) };
        // one closed generator drawing its device among two (each request random), one
        // pinned to the second device
        let mut both = gen(1.0, 1.0, 1_000_000);
        both.devices = vec![0, 1];
        let mut second = gen(1.0, 1.0, 1_000_000);
        second.devices = vec![1];
        let mut s = testutil::spec(vec![both, second], 2, 400);
        s.device_names = vec!["disk0".into(), "disk1".into()];
        let scheds =
            (0..2).map(|_| headway_sched::registry::build("noop", &mut Settings::new()).unwrap()).collect();
        let log = RefCell::new(Vec::new());
        let r = Engine::synthetic(ArraySchedulers { members: scheds, hooks: None }, s.clone(), &input)
            .unwrap()
            .with_request_log(Box::new(|r| log.borrow_mut().push((r.job_index, r.offset / 512))))
            .run(|_| {})
            .unwrap();
        let members = r.members.as_ref().expect("a section per device");
        let per: Vec<u64> = members.iter().map(|m| m.device.requests).collect();
        assert_eq!(per.iter().sum::<u64>(), r.device.requests);
        // the pinned generator only ever addresses the second device; the other one both
        let device = |sector: u64| sector >> super::super::DEVICE_SHIFT;
        let log = log.into_inner();
        assert!(log.iter().filter(|l| l.0 == 1).all(|l| device(l.1) == 1));
        let firsts = log.iter().filter(|l| l.0 == 0 && device(l.1) == 0).count();
        let seconds = log.iter().filter(|l| l.0 == 0 && device(l.1) == 1).count();
        assert!(firsts > 50 && seconds > 50, "{firsts} on the first device, {seconds} on the second");
        assert!(per[0] > 0 && per[1] > per[0], "{per:?}");
        assert_eq!(r.disk, "wd5000aaks, cheetah-15k4");
        // the workload names two devices: two must be simulated
        let e = Engine::synthetic(
            ArraySchedulers {
                members: vec![headway_sched::registry::build("noop", &mut Settings::new()).unwrap()],
                hooks: None,
            },
            s,
            &RunInput { devices: &devices[..1], ..block::tests::input(&models[0], &curve, None) },
        )
        .err()
        .expect("refused")
        .to_string();
        assert!(e.contains("1 devices simulated for the 2"), "{e}");
    }

    fn lone(models: &[headway_disk::DiskSpec]) -> Vec<crate::Device> {
        models.iter().map(|d| crate::Device { disk: d.clone(), array: None }).collect()
    }

    /// One device an array, the other a lone drive (DiskSim's `syntharrays`: generators
    /// naming several logorgs): the array's requests are split over its own members, the
    /// lone drive's reach it whole, and each array request completes once.
    #[test]
    fn an_array_among_several_devices_splits_over_its_own_members() {
        let (_, curve) = block::tests::disk_and_curve();
        let model = headway_disk::builtin("wd5000aaks").unwrap();
        let devices = [
            crate::Device { disk: model.clone(), array: Some("raid0:3:4k".parse().unwrap()) },
            crate::Device { disk: model.clone(), array: None },
        ];
        let input = RunInput { devices: &devices, ..block::tests::input(&model, &curve, None) };
        // 16-sector requests from 16-sector blocks: each array request spans two units
        let mut g = gen(1.0, 1.0, 1_000_000);
        g.devices = vec![0, 1];
        g.size = crate::synthio::dist::Dist::Exponential { base: 16.0, mean: 0.0 };
        g.blocking = 16;
        let mut s = testutil::spec(vec![g], 2, 300);
        s.device_names = vec!["org0".into(), "disk3".into()];
        let scheds =
            (0..4).map(|_| headway_sched::registry::build("noop", &mut Settings::new()).unwrap()).collect();
        let log = RefCell::new(Vec::new());
        let r = Engine::synthetic(ArraySchedulers { members: scheds, hooks: None }, s, &input)
            .unwrap()
            .with_request_log(Box::new(|r| log.borrow_mut().push(r.offset / 512)))
            .run(|_| {})
            .unwrap();
        let log = log.into_inner();
        let to_array = log.iter().filter(|&&o| o >> super::super::DEVICE_SHIFT == 0).count() as u64;
        let to_drive = log.len() as u64 - to_array;
        assert_eq!(log.len(), 300, "every request completes once");
        assert!(to_array > 100 && to_drive > 100, "{to_array} to the array, {to_drive} to the drive");
        let members = r.members.as_ref().expect("a section per drive");
        assert_eq!(members.len(), 4, "three members and the lone drive");
        let pieces: u64 = members[..3].iter().map(|m| m.device.requests_in.count).sum();
        // every array request is two pieces (a stripe unit is 8 sectors, blocks 16-aligned)
        assert_eq!(pieces, 2 * to_array);
        assert!(members[..3].iter().all(|m| m.device.requests_in.count > 0), "all three members serve");
        assert_eq!(members[3].device.requests_in.count, to_drive, "the lone drive gets its requests whole");
        assert_eq!(r.device.requests_in.count, 300, "what the workload submitted, not the pieces");
        assert!(r.disk.contains("in raid0:3:4k"), "{}", r.disk);
    }
}

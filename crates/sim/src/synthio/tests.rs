use super::*;
use headway_disk::parv::syntax::parse_str;

fn doc(text: &str) -> Document {
    parse_str(text, std::path::Path::new("synth.parv"), 0).unwrap()
}

const DISK: &str = "disksim_disk D { Model = m }\ninstantiate [ disk0 .. disk2 ] as D\n";

fn synth(generators: &str) -> String {
    format!(
        "{DISK}disksim_logorg org0 {{ devices = [ disk0 .. disk2 ] }}
disksim_logorg org1 {{ devices = [ disk0 ] }}
disksim_global Global {{ Init Seed = 42, Real Seed = 7, Stat definition file = statdefs }}
disksim_pf Proc {{ Number of processors = 5, Process-Flow Time Scale = 1.0 }}
disksim_synthio Synthio {{
   Number of I/O requests to generate = 10000,
   Maximum time of trace generated = 1000.0,
   System call/return with each request = 0,
   Think time from call to request = 0.0,
   Think time from request to return = 0.0,
   Generators = [ {generators} ]
}}
"
    )
}

fn gen(devices: &str, p_read: &str) -> String {
    format!(
        "disksim_synthgen {{
       Storage capacity per device = 16448064,
       devices = [ {devices} ],
       Blocking factor = 8,
       Probability of sequential access = 0.2,
       Probability of local access = 0.3,
       Probability of read access = {p_read},
       Probability of time-critical request = 0.1,
       Probability of time-limited request = 0.3,
       Time-limited think times = [ normal, 30.0, 100.0 ],
       General inter-arrival times = [ exponential, 0.0, 10.0 ],
       Sequential inter-arrival times = [ exponential, 0.0, 10.0 ],
       Local inter-arrival times = [ exponential, 0.0, 10.0 ],
       Local distances = [ normal, 0.0, 40000.0 ],
       Sizes = [ exponential, 0.0, 8.0 ]
     }}"
    )
}

#[test]
fn a_parv_synthetic_workload_reads_as_disksim_sets_it_up() {
    let text = synth(&format!("{}, {}", gen("org1", "0.66"), gen("disk2, org0", "1.0")));
    let s = SynthSpec::from_document(&doc(&text)).unwrap().unwrap();
    // the later seed key wins; seconds become ms
    assert_eq!((s.seed, s.processors, s.requests, s.max_time_ms), (7, 5, 10000, 1_000_000.0));
    assert!(!s.syscalls);
    assert_eq!(s.generators.len(), 2);
    // each generator draws among its names (repeats weigh), kept as places in the
    // workload's list of the names the generators use
    assert_eq!(s.generators[0].devices, [0]);
    assert_eq!(s.generators[1].devices, [1, 2]);
    assert_eq!(s.device_names, ["org1", "disk2", "org0"]);
    let g = &s.generators[0];
    assert_eq!((g.capacity, g.blocking, g.p_read), (16448064, 8, 0.66));
    assert_eq!(g.local_distance, Dist::Normal { mean: 0.0, sd: 40000.0 });
    assert_eq!(g.size, Dist::Exponential { base: 0.0, mean: 8.0 });
    assert_eq!(SynthSpec::from_document(&doc(DISK)).unwrap(), None);
}

#[test]
fn what_cannot_run_is_an_error_at_its_line() {
    let cases = [
        (synth(&gen("disk9", "0.5")), "disk9", "neither a device nor a logorg"),
        (synth(&gen("disk0", "1.5")), "Probability of read access", "a probability"),
        (
            synth(&gen("disk0", "0.5")).replace("Number of processors = 5", "Number of processors = 0"),
            "Number of processors",
            ">= 1",
        ),
        (
            synth(&gen("disk0", "0.5").replace("[ normal, 0.0, 40000.0 ]", "[ gauss, 0.0, 1.0 ]")),
            "Local distances",
            "unknown distribution",
        ),
        (synth(&gen("disk0", "0.5")).replace("Maximum time", "Maximal time"), "Maximal time", "unknown key"),
    ];
    for (text, key, says) in cases {
        let e = SynthSpec::from_document(&doc(&text)).unwrap_err().to_string();
        let line = text.lines().position(|l| l.contains(key)).unwrap() + 1;
        assert!(
            e.starts_with(&format!("synth.parv:{line}:")) && e.contains(says),
            "{key}: line {line}, {says}: {e}"
        );
    }
    let text = synth(&gen("disk0", "0.5")).replace("disksim_pf Proc", "disksim_pf Other");
    let e = SynthSpec::from_document(&doc(&text)).unwrap_err().to_string();
    assert!(e.contains("disksim_pf Proc"), "{e}");
}

/// A workload of DiskSim 4.0's `valid/` experiments: `disks` stub disks (`disk0` ..), seed 42,
/// `processors` CPUs, 10,000 requests, no system calls, and `generators`.
fn disksim_valid(disks: usize, processors: u32, generators: &[String]) -> SynthSpec {
    let stubs: String = (0..disks)
        .map(|i| format!("disksim_disk D{i} {{ Model = m }}\ninstantiate [ disk{i} ] as D{i}\n"))
        .collect();
    let text = format!(
        "{stubs}disksim_global Global {{ Init Seed = 42, Real Seed = 42, Stat definition file = statdefs }}
disksim_pf Proc {{ Number of processors = {processors}, Process-Flow Time Scale = 1.0 }}
disksim_synthio Synthio {{
   Number of I/O requests to generate = 10000, Maximum time of trace generated = 1000.0,
   System call/return with each request = 0, Think time from call to request = 0.0,
   Think time from request to return = 0.0,
   Generators = [ {} ]
}}
",
        generators.join(", ")
    );
    SynthSpec::from_document(&doc(&text)).unwrap().unwrap()
}

/// The generators' first requests come `disksim` ms into the run (last generator first,
/// as DiskSim initialises the processes and prints them), to DiskSim's printed precision.
fn assert_first_events(spec: &SynthSpec, disksim: &[f64]) {
    let mut r = rand48::Rand48::seeded(spec.seed);
    let firsts: Vec<f64> = spec.generators.iter().rev().map(|g| g.first(&mut r).think).collect();
    assert_eq!(firsts.len(), disksim.len());
    for (got, want) in firsts.iter().zip(disksim) {
        assert!((got - want).abs() < 5e-7, "first event {got} ms, DiskSim's {want} ({firsts:?})");
    }
}

/// DiskSim 4.0's own `valid/synthopen.parv` workload (its synthetic blocks as the file
/// writes them; the three disks stand in as stubs), and what DiskSim's `synthopen.outv`
/// reports of it: each process's first event, and the one process that runs (the last
/// generator's, on the one CPU: the others are open generators left in the queue) issuing
/// its 10,000 requests, 6,680 of them reads, the last at 249611.935021 ms.
#[test]
fn disksims_open_synthetic_run_draws_and_times_as_disksim_did() {
    let gen = |capacity: u64, disk: &str| {
        format!(
            "disksim_synthgen {{
     Storage capacity per device = {capacity}, devices = [ {disk} ], Blocking factor = 8,
     Probability of sequential access = 0.0, Probability of local access = 0.0,
     Probability of read access = 0.66, Probability of time-critical request = 0.0,
     Probability of time-limited request = 0.0,
     Time-limited think times = [ normal, 30.0, 100.0 ],
     General inter-arrival times = [ exponential, 0.0, 25.0 ],
     Sequential inter-arrival times = [ normal, 0.0, 0.0 ],
     Local inter-arrival times = [ exponential, 0.0, 0.0 ],
     Local distances = [ normal, 0.0, 40000.0 ],
     Sizes = [ exponential, 0.0, 8.0 ] }}"
        )
    };
    let gens = [gen(17938986, "disk0"), gen(17916240, "disk1"), gen(17783240, "disk2")];
    let spec = disksim_valid(3, 1, &gens);
    let mut f = flow::Flow::new(spec.clone()).unwrap();
    // "Initialized synthio process #2, first event at time 34.115768" (#1 17.268723, #0
    // 19.087780): the file's seed, the last generator first
    assert_first_events(&spec, &[34.115768, 17.268723, 19.087780]);
    let (mut issued, mut reads, mut last) = (0u64, 0u64, 0u64);
    let mut steps = f.start(0);
    'run: loop {
        let mut next = None;
        for s in steps {
            match s {
                flow::Step::Issue { proc, req, .. } => {
                    assert_eq!(proc, 2, "only the last generator's process runs");
                    issued += 1;
                    reads += req.read as u64;
                }
                flow::Step::ThinkUntil { proc, at } => next = Some((proc, at)),
                flow::Step::Stop => break 'run,
            }
        }
        let (proc, at) = next.expect("an open generator always thinks next");
        last = at;
        steps = f.think_done(proc, at);
    }
    assert_eq!((issued, reads), (10_000, 6_680));
    // the last request at DiskSim's end of run, to within the ns rounding of 10,000 thinks
    let end_ms = last as f64 / 1e6;
    assert!((end_ms - 249611.935021).abs() < 0.01, "{end_ms} ms");
}

/// DiskSim 4.0's `valid/synthmixed.parv` generators (time-critical, time-limited and
/// background requests mixed): the first event of each of its five processes, as DiskSim's
/// `synthmixed.outv` reports them. A time-limited first request draws its limit right after
/// its class, so a wrong draw order would move every earlier-drawn process's successor.
#[test]
fn disksims_mixed_synthetic_run_draws_its_first_requests_as_disksim_did() {
    let gen = "disksim_synthgen {
     Storage capacity per device = 2056008, devices = [ disk0 ], Blocking factor = 8,
     Probability of sequential access = 0.2, Probability of local access = 0.3,
     Probability of read access = 0.66, Probability of time-critical request = 0.2,
     Probability of time-limited request = 0.3,
     Time-limited think times = [ normal, 30.0, 100.0 ],
     General inter-arrival times = [ exponential, 0.0, 50.0 ],
     Sequential inter-arrival times = [ exponential, 0.0, 50.0 ],
     Local inter-arrival times = [ exponential, 0.0, 50.0 ],
     Local distances = [ normal, 0.0, 40000.0 ],
     Sizes = [ exponential, 0.0, 8.0 ] }";
    let spec = disksim_valid(1, 5, &[gen; 5].map(String::from));
    // processes #4, #3, #2, #1, #0, in the order DiskSim initialises them
    assert_first_events(&spec, &[68.231536, 34.537445, 38.175560, 96.611610, 40.728942]);
}

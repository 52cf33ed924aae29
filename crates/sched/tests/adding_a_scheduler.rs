//! The README's "Adding a scheduler" example, compiled and run: the module
//! (`adding_a_scheduler/sstf.rs`, the same text as the README shows) and its one table row
//! make `sstf` a scheduler like the others — listed alone and under every framework that
//! takes any policy, built by name, its tunables checked.

#[path = "adding_a_scheduler/sstf.rs"]
mod sstf;

use headway_sched::registry::{build_in, scheduler_names_in};
use headway_sched::table::{Kind, Row, SCHEDULERS};
use headway_sched::{CurveView, Decision, Dir, ReqId, Request, ServiceCurve, Settings, Time};

/// The row, as the README shows it (in `SCHEDULERS`, after `pclock`).
const SSTF_ROW: Row = Row {
    name: "sstf",
    kind: Kind::Policy(|_| Ok(Box::new(sstf::Sstf::default()))),
    tunables: &[],
    about: "shortest seek first by sector distance, either direction",
};

/// The table with the row added.
fn table() -> &'static [Row] {
    let mut rows = SCHEDULERS.to_vec();
    let at = rows.iter().position(|r| r.name == "pclock").unwrap() + 1;
    rows.insert(at, SSTF_ROW);
    Vec::leak(rows)
}

fn read(id: u64, sector: u64) -> Request {
    Request { id: ReqId(id), sector, len: 8, dir: Dir::Read, sync: true, arrival: Time(0), ctx: None }
}

#[test]
fn the_readme_shows_the_module_and_the_row_this_test_compiles() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let module = include_str!("adding_a_scheduler/sstf.rs");
    assert!(readme.contains(module), "README's sstf module differs from tests/adding_a_scheduler/sstf.rs");
    let row = include_str!("adding_a_scheduler.rs");
    let start = row.find("Row {\n    name: \"sstf\"").unwrap();
    let end = start + row[start..].find("\n};").unwrap();
    assert!(readme.contains(&row[start..end]), "README's row differs from SSTF_ROW");
}

#[test]
fn one_row_lists_it_alone_and_under_the_frameworks() {
    let names = scheduler_names_in(table());
    for n in ["sstf", "stream:sstf", "stream-local:sstf"] {
        assert!(names.iter().any(|x| x == n), "{n} listed");
    }
    assert!(!names.iter().any(|x| x == "antic:sstf"), "antic takes only the policies it has a heuristic for");
    assert!(!scheduler_names_in(SCHEDULERS).iter().any(|x| x.contains("sstf")), "not in the real table");
}

#[test]
fn it_builds_by_name_and_serves_the_nearest_request_first() {
    let curve = ServiceCurve::from_knots(vec![(0, 200_000), (1 << 30, 15_000_000)]);
    let dev = CurveView { head: 1000, curve: &curve, capacity: 1 << 31 };
    let mut s = build_in(table(), "sstf", &mut Settings::new()).unwrap();
    assert!(!s.waits());
    for (id, sector) in [(1, 5000), (2, 900), (3, 2000)] {
        s.arrive(Time(0), read(id, sector), &dev);
    }
    let order: Vec<u64> = (0..3)
        .map(|_| match s.decide(Time(0), &dev) {
            Decision::Dispatch(r) => r.id.0,
            d => panic!("{d:?}"),
        })
        .collect();
    assert_eq!(order, [2, 3, 1], "900 is 100 sectors from the head, 2000 is 1000, 5000 is 4000");
    let stream = build_in(table(), "stream:sstf", &mut Settings::new()).unwrap();
    assert_eq!(stream.name(), "stream:sstf");
    assert!(stream.waits());
    let mut bad = Settings::new();
    bad.set("stream_threshold", "0");
    assert!(build_in(table(), "stream:sstf", &mut bad).is_err(), "the framework's tunables still checked");
}

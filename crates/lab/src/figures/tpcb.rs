//! `as-fig11` — the anticipatory paper (seeds/001) §4.6, Figure 11, in a real guest, with
//! SQLite standing in for the paper's MySQL.
//!
//! The paper: two client processes run TPC-B-like queries against a 780 MB database of 4 KB
//! records (128 MB of main memory) under Aged-SPTF, with and without anticipation, in four
//! experiments: update queries (a read of the record, then an asynchronous delayed write)
//! or select queries (one synchronous read), both clients on the same database or each on
//! its own. Anticipation gains 2% (update, same), 30% (update, different), 5% (select,
//! same) and 60% (select, different: 61 against 98 transactions/s, §4.7); with different
//! databases the absolute throughput is lower than with one ("due to large seeks between
//! the two databases").
//!
//! The stand-in: SQLite 3 (MySQL's MyISAM had no transactions; SQLite with its journal off
//! and `synchronous=OFF` writes a changed page back with a plain `write`, a delayed write as
//! the paper's) on a fresh ext4 in the guest. Each database is one table of 4,000-byte
//! records, one per 4 KiB page, filled in the guest; then the page cache is dropped and the
//! two clients run at once, each a fixed list of queries on uniformly random records
//! (busybox awk draws them, seeded). The time is the clients' step (the guest's clock):
//! throughput is both clients' queries over it. Two clients updating one database take
//! turns at SQLite's file lock, the one that finds it held polling until it is free (a busy
//! timeout), as MyISAM's table lock made the paper's updates take turns.
//!
//! The server's schedulers: Aged-SPTF, with anticipation (`antic:aged-sptf`) and
//! `stream:aged-sptf`. Behind `headway serve` anticipation sees one NBD connection, not the
//! guest's two clients; stream scheduling needs no process information.

use super::{check_rows, list, run_written, together, verdict_of, Check, FigureData, LabFigure, Scale};
use crate::run::LabOptions;
use crate::LabError;

pub(super) const FIGURE: LabFigure = LabFigure {
    id: "as-fig11",
    source: "seeds/001 (Anticipatory Scheduling) §4.6, Figure 11 — in a real guest, SQLite standing in",
    title: "TPC-B-like queries from two clients: update or select, one database or two, Aged-SPTF with and without anticipation",
    run: |s, o, l| Ok(vec![fig11(s, o, l)?]),
};

/// The server's schedulers, in report order.
pub const SCHEDULERS: [&str; 3] = ["aged-sptf", "antic:aged-sptf", "stream:aged-sptf"];
const AGED: usize = 0;
const ANTIC: usize = 1;

/// One of the paper's four experiments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Variant {
    pub name: &'static str,
    pub update: bool,
    pub separate: bool,
    /// Anticipation's gain in the paper, and the band around it.
    pub gain: (f64, f64, f64),
}

/// The paper's four experiments, in its order.
pub const VARIANTS: [Variant; 4] = [
    Variant { name: "update-same", update: true, separate: false, gain: (1.02, 0.95, 1.12) },
    Variant { name: "update-different", update: true, separate: true, gain: (1.30, 1.15, 1.45) },
    Variant { name: "select-same", update: false, separate: false, gain: (1.05, 0.95, 1.15) },
    Variant { name: "select-different", update: false, separate: true, gain: (1.60, 1.40, 1.80) },
];

/// Records per database (4 KiB pages) and queries per client at each scale.
pub fn sizes(scale: Scale) -> (u32, u32) {
    match scale {
        // 780 MB, the paper's database
        Scale::Full => (195_000, 3_000),
        Scale::Quick => (60_000, 1_000),
    }
}

/// A client's query for record `$id` (`busybox awk` prints one per line).
fn query(update: bool) -> &'static str {
    if update {
        "UPDATE t SET v = randomblob(4000) WHERE id = \" id \";"
    } else {
        "SELECT length(v) FROM t WHERE id = \" id \";"
    }
}

/// The guest's steps: fill the database(s) and write each client's queries; drop the page
/// cache; run both clients at once.
pub fn steps(v: &Variant, records: u32, queries: u32) -> Vec<String> {
    let fill = |db: &str| {
        format!(
            "sqlite3 $HEADWAY_DIR/{db} \"PRAGMA page_size=4096; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; \
             CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL \
             SELECT x + 1 FROM c WHERE x < {records}) INSERT INTO t SELECT x, randomblob(4000) FROM c;\""
        )
    };
    let script = |k: u32| {
        format!(
            "awk -v seed={} 'BEGIN {{ srand(seed); print \".timeout 600000\"; \
             print \"PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;\"; \
             for (i = 0; i < {queries}; i++) {{ id = int(rand() * {records}) + 1; print \"{}\" }} }}' > /tmp/q{k}.sql",
            k + 1,
            query(v.update)
        )
    };
    let db = |k: u32| if v.separate && k == 1 { "db1" } else { "db0" };
    let mut make = vec![fill("db0")];
    if v.separate {
        make.push(fill("db1"));
    }
    make.push(script(0));
    make.push(script(1));
    let clients: Vec<String> =
        (0..2).map(|k| format!("sqlite3 $HEADWAY_DIR/{} < /tmp/q{k}.sql > /dev/null", db(k))).collect();
    vec![make.join(" && "), "sync; echo 3 > /proc/sys/vm/drop_caches".into(), together(&clients)]
}

/// The paper's statements from queries/s per variant ([`VARIANTS`] order) and scheduler
/// (plain Aged-SPTF, with anticipation).
pub fn judge_fig11(tps: &[[f64; 2]; 4]) -> Vec<Check> {
    if !tps.iter().flatten().all(|t| *t > 0.0 && t.is_finite()) {
        return vec![Check::new("every point measured", format!("{tps:?}"), "eight throughputs", false)];
    }
    let mut v: Vec<Check> = VARIANTS
        .iter()
        .zip(tps)
        .map(|(var, t)| {
            let (p, lo, hi) = var.gain;
            Check::ratio(
                format!("{}: anticipation's gain", var.name),
                t[1] / t[0],
                p,
                lo,
                hi,
                &format!("{:.0}% (Figure 11)", (p - 1.0) * 100.0),
            )
        })
        .collect();
    v.push(Check::new(
        "update: two databases slower than one, without anticipation",
        format!("{:.1} against {:.1} queries/s", tps[1][0], tps[0][0]),
        "\"absolute performance is understandably lower than in the first case\"",
        tps[1][0] < tps[0][0],
    ));
    v
}

/// Per variant and scheduler ([`SCHEDULERS`] order): reads at the drive, the drive's busy
/// share and the seconds the server kept the drive idle on purpose.
type Served = [[(u64, f64, f64); 3]; 4];

/// Why the figure departs, from the runs.
pub fn fig11_explanation(tps: &[[f64; 3]; 4], served: &Served) -> String {
    let parts: Vec<String> = VARIANTS
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let (reads, busy, _) = served[i][AGED];
            let (_, abusy, waited) = served[i][ANTIC];
            let (_, _, stream_waited) = served[i][2];
            format!(
                "{}: {:.1} queries/s plain, {:.1} anticipating, {:.1} stream ({reads} reads at the drive, busy {:.0}% \
                 plain, {:.0}% anticipating, {waited:.1} s waited on purpose anticipating, {stream_waited:.1} s \
                 by stream)",
                v.name,
                tps[i][0],
                tps[i][1],
                tps[i][2],
                busy * 100.0,
                abusy * 100.0
            )
        })
        .collect();
    format!(
        "Anticipation on the server sees one NBD connection: the guest's two clients are one issuer to it, \
         so after a completion it waits for the guest's next read, whichever client sends it, and the \
         seeks between the clients' records (or databases) stay. Stream scheduling needs no process \
         information but holds the drive only for a stream, requests near the last one, and random \
         records make none. Per experiment: {}.",
        parts.join("; ")
    )
}

fn fig11(scale: Scale, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<FigureData, LabError> {
    let dir = opts.out.join("as-fig11");
    let (records, queries) = sizes(scale);
    let scheds = super::toml_list(&SCHEDULERS);
    let mut tps = [[0.0; 3]; 4];
    let mut served: Served = Default::default();
    let (mut commands, mut reports, mut rows) = (Vec::new(), Vec::new(), Vec::new());
    for (i, v) in VARIANTS.iter().enumerate() {
        let steps =
            steps(v, records, queries).iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(",\n  ");
        let text = format!(
            "# as-fig11, {name}: two SQLite clients, {queries} queries each, {records} records of 4 KB per database \
             (seeds/001 §4.6; SQLite standing in for MySQL)\nname = \"as-fig11-{name}\"\n[guest]\nfs = \"ext4\"\n\
             guest_scheduler = \"none\"\nmemory_mb = 256\ntimeout_s = 3600\n[headway]\ndisk = \"deskstar-34gxp\"\n\
             schedulers = [{scheds}]\ncontext = \"connection\"\n[workload]\ntools = [\"sqlite3\"]\n\
             steps = [\n  {steps}\n]\n",
            name = v.name
        );
        let (report, cmd) = run_written(&dir, v.name, &text, &[], opts, log)?;
        commands.push(cmd);
        for (j, s) in SCHEDULERS.iter().enumerate() {
            let run = report.runs.iter().find(|r| r.scheduler == *s);
            let clients = run.and_then(|r| r.lab.steps.iter().find(|st| st.name == "workload2"));
            let secs = clients.map_or(0.0, |st| st.end_s - st.start_s);
            tps[i][j] = if secs > 0.0 { 2.0 * f64::from(queries) / secs } else { 0.0 };
            let server = run.and_then(|r| r.server.first());
            served[i][j] = (
                server.map_or(0, |x| x.workload.drive_reads),
                run.map_or(0.0, |r| r.device.utilization),
                server.map_or(0.0, |x| x.idle_wait_ns as f64 / 1e9),
            );
        }
        rows.push((
            format!("{}: queries/s ({})", v.name, SCHEDULERS.join(", ")),
            list(&tps[i], 1),
            format!("anticipation +{:.0}%", (v.gain.0 - 1.0) * 100.0),
        ));
        reports.push((v.name.to_string(), serde_json::to_value(&report).unwrap_or_default()));
    }
    let plain: [[f64; 2]; 4] = tps.map(|t| [t[0], t[1]]);
    let checks = judge_fig11(&plain);
    let (outcome, verdict) = verdict_of(&checks, true);
    rows.extend(check_rows(&checks));
    Ok(FigureData {
        id: FIGURE.id.into(),
        source: FIGURE.source.into(),
        title: FIGURE.title.into(),
        setting: format!(
            "A real Linux guest (Debian's 6.1 kernel, 256 MB, guest scheduler none, one NBD connection: the \
             server's context) on headway serve's emulated deskstar-34gxp (the paper's IBM Deskstar 34GXP). \
             Stand-in: SQLite 3 on ext4, one table of 4,000-byte records per database ({records} records, \
             {:.0} MB), journal off and synchronous=OFF (a changed page is a delayed write, as MyISAM's); two \
             clients at once, {queries} queries each on random records, from a cold page cache. The paper's \
             MySQL ran on FreeBSD with 128 MB of memory and a 780 MB database.",
            f64::from(records) * 4096.0 / 1e6
        ),
        commands,
        scale_note: if scale == Scale::Quick {
            format!("{records} records per database and {queries} queries per client (full: 195,000 and 3,000)")
        } else {
            String::new()
        },
        x_label: "experiment (Figure 11)".into(),
        y_label: "queries/s".into(),
        categories: VARIANTS.iter().map(|v| v.name.to_string()).collect(),
        series: SCHEDULERS.iter().enumerate().map(|(j, s)| (s.to_string(), tps.iter().map(|t| t[j]).collect())).collect(),
        // §4.7: the fourth experiment's 61 and 98 transactions/s
        paper_points: vec![("aged-sptf".into(), 3, 61.0), ("antic:aged-sptf".into(), 3, 98.0)],
        scatter: Vec::new(),
        rows,
        outcome,
        verdict,
        explanation: if checks.iter().any(|c| !c.held) { fig11_explanation(&tps, &served) } else { String::new() },
        reports,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_gains_match_and_none_differs() {
        // the paper: +2%, +30%, +5%, +60%; two databases slower
        let paper = [[50.0, 51.0], [40.0, 52.0], [60.0, 63.0], [61.0, 98.0]];
        assert!(judge_fig11(&paper).iter().all(|c| c.held), "{:?}", judge_fig11(&paper));
        // no gain anywhere and two databases faster: only the first and third hold
        let flat = [[50.0, 50.0], [60.0, 60.0], [60.0, 60.0], [61.0, 61.0]];
        let k = judge_fig11(&flat);
        assert_eq!(k.iter().map(|c| c.held).collect::<Vec<_>>(), [true, false, true, false, false], "{k:?}");
        // twice the gain on one database: differs
        let far = [[50.0, 100.0], paper[1], paper[2], paper[3]];
        assert!(!judge_fig11(&far)[0].held);
        assert!(judge_fig11(&[[0.0; 2]; 4]).iter().all(|c| !c.held));
    }

    #[test]
    fn the_steps_fill_query_and_run_two_clients() {
        let (records, queries) = (300, 40);
        for v in &VARIANTS {
            let s = steps(v, records, queries);
            assert_eq!(s.len(), 3);
            assert_eq!(s[0].contains("$HEADWAY_DIR/db1 \""), v.separate, "{}", s[0]);
            assert_eq!(s[2].contains("db1 < /tmp/q1.sql"), v.separate, "{}", s[2]);
            // the steps run in busybox's shell with the host's sqlite3: the databases fill,
            // each client's queries run
            let dir = tempfile::tempdir().unwrap();
            for (i, step) in s.iter().enumerate().filter(|(i, _)| *i != 1) {
                let o = std::process::Command::new("busybox")
                    .args(["sh", "-c", step])
                    .env("HEADWAY_DIR", dir.path())
                    .output()
                    .expect("busybox (Debian's busybox-static, `make deps`)");
                assert!(o.status.success(), "{} step {i}: {}", v.name, String::from_utf8_lossy(&o.stderr));
            }
            let count = std::process::Command::new("sqlite3")
                .arg(dir.path().join("db0"))
                .arg("SELECT count(*), min(length(v)), max(length(v)) FROM t; PRAGMA page_count;")
                .output()
                .expect("sqlite3 (`make deps`)");
            let out = String::from_utf8_lossy(&count.stdout);
            assert!(out.starts_with(&format!("{records}|4000|4000\n")), "{out}");
            // a record to a page: the table's pages exceed its records
            let pages: u64 = out.lines().nth(1).unwrap().parse().unwrap();
            assert!(pages > records as u64 && pages < records as u64 * 11 / 10, "{pages} pages");
            let q = std::fs::read_to_string("/tmp/q0.sql").unwrap();
            assert_eq!(q.lines().count(), queries as usize + 2);
            assert_eq!(q.lines().nth(2).unwrap().starts_with("UPDATE"), v.update, "{q}");
        }
        // the spec the figure writes parses
        let list = steps(&VARIANTS[3], records, queries)
            .iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let t = format!("[guest]\nfs = \"ext4\"\n[workload]\ntools = [\"sqlite3\"]\nsteps = [{list}]\n");
        let s = crate::spec::Spec::parse(std::path::Path::new("t.toml"), &t).unwrap();
        assert_eq!(s.tools, ["sqlite3"]);
    }

    #[test]
    fn the_explanation_gives_each_experiments_figures() {
        let tps = [[50.0, 50.5, 70.0]; 4];
        let served = [[(2000, 0.9, 0.0), (2000, 0.85, 1.5), (2000, 0.9, 0.2)]; 4];
        let e = fig11_explanation(&tps, &served);
        assert!(e.contains("select-different: 50.0 queries/s plain, 50.5 anticipating, 70.0 stream"), "{e}");
        assert!(
            e.contains(
                "(2000 reads at the drive, busy 90% plain, 85% anticipating, 1.5 s waited on purpose \
                 anticipating, 0.2 s by stream)"
            ),
            "{e}"
        );
    }
}

//! `as-fig8` — the anticipatory paper (seeds/001) §4.3, Figure 8, in a real guest: the
//! Andrew benchmark's phases by busybox's `mkdir`, `cp`, `ls -lR`, `grep` and `wc` (Debian's
//! busybox-static standing in for the benchmark's scripts).
//!
//! The paper: k = 2 clients, each with its own repository of n = 500 directories (larger
//! than the machine's memory), run five phases — mkdir (make the n directories), cp (copy 71
//! C source files into each), stat (list every directory), scan (grep and wc every file),
//! gcc (compile and link them). Under Aged-SPTF, anticipation cuts the scan phase, the one
//! phase of synchronous read streams, by 54%; mkdir by 16%, cp and stat by 5%; with one
//! client it changes nothing.
//!
//! The stand-in: 71 generated C-like files of 0.8-8 KB (the benchmark's own sources are
//! not shipped) made once in the guest; the phases run as steps, both clients together in
//! each (one phase ends when both clients are done: the paper's clients were not
//! synchronized); mkdir and cp end with `sync` (their writes reach the disk inside the
//! phase); the page cache is dropped before stat and scan, as a repository larger than
//! memory would have it. gcc is not run: compiling needs a toolchain in the guest, and under
//! an emulated CPU the phase would measure QEMU (the paper's gcc phase is CPU-bound too).
//!
//! The server's schedulers: `aged-sptf`, `antic:aged-sptf` and `stream:aged-sptf`; one NBD
//! connection carries both clients.

use super::{
    check_rows, list, run_written, together, toml_list, verdict_of, Check, FigureData, LabFigure, Scale,
};
use crate::run::LabOptions;
use crate::LabError;

pub(super) const FIGURE: LabFigure = LabFigure {
    id: "as-fig8",
    source: "seeds/001 (Anticipatory Scheduling) §4.3, Figure 8 — in a real guest, busybox standing in",
    title: "the Andrew benchmark's phases (mkdir, cp, stat, scan) with two clients, Aged-SPTF with and without anticipation",
    run: |s, o, l| Ok(vec![fig8(s, o, l)?]),
};

/// The server's schedulers.
pub const SCHEDULERS: [&str; 3] = ["aged-sptf", "antic:aged-sptf", "stream:aged-sptf"];
/// The measured phases, in order.
pub const PHASES: [&str; 4] = ["mkdir", "cp", "stat", "scan"];
/// Source files copied into each directory (the paper's).
pub const SOURCES: u32 = 71;

/// Anticipation's cut of each phase's time with two clients: (paper, band low, band high).
pub const CUTS: [(f64, f64, f64); 4] =
    [(0.16, 0.05, 0.30), (0.05, -0.05, 0.15), (0.05, -0.05, 0.15), (0.54, 0.40, 0.68)];
/// One client: anticipation's time over plain, per phase (the paper: "the same").
pub const ONE_CLIENT: (f64, f64) = (0.9, 1.1);

/// The guest's steps for `clients` clients of `dirs` directories: the step names the
/// figure reads are `workload1`.. in [`PHASES`] order at [`phase_steps`].
pub fn steps(clients: u32, dirs: u32) -> Vec<String> {
    let make = format!(
        "S=$HEADWAY_DIR/src; mkdir -p $S; i=0; while [ $i -lt {SOURCES} ]; do n=$(( 20 + (i * 37) % 180 )); j=0; \
         while [ $j -lt $n ]; do echo \"int f${{i}}_$j(int x) {{ return x * $j + $i; }}\"; j=$((j+1)); done > $S/s$i.c; \
         i=$((i+1)); done; mkdir -p /tmp/w; cp $S/s0.c /tmp/w/; ls -lR /tmp/w > /dev/null; grep -c zzz /tmp/w/* ; \
         wc /tmp/w/* > /dev/null; sync"
    );
    let each = |body: &str| {
        let jobs: Vec<String> =
            (0..clients).map(|c| format!("(R=$HEADWAY_DIR/c{c}; S=$HEADWAY_DIR/src; {body})")).collect();
        together(&jobs)
    };
    let over_dirs = |cmd: &str| format!("i=0; while [ $i -lt {dirs} ]; do {cmd}; i=$((i+1)); done");
    let drop = "sync; echo 3 > /proc/sys/vm/drop_caches".to_string();
    vec![
        make,
        drop.clone(),
        format!("{}; sync", each(&format!("mkdir -p $R; {}", over_dirs("mkdir $R/d$i")))),
        format!("{}; sync", each(&over_dirs("cp $S/* $R/d$i/"))),
        drop.clone(),
        each("ls -lR $R > /dev/null"),
        drop,
        each(&over_dirs("grep -c zzz $R/d$i/* > /dev/null; wc $R/d$i/* > /dev/null")),
    ]
}

/// The step index of each measured phase in [`steps`].
pub const fn phase_steps() -> [usize; 4] {
    [2, 3, 5, 7]
}

/// The paper's statements from phase seconds ([`PHASES`] order) per scheduler
/// ([`SCHEDULERS`] order), with one client and with two.
pub fn judge_fig8(one: &[[f64; 4]; 3], two: &[[f64; 4]; 3]) -> Vec<Check> {
    let ok = one.iter().chain(two).flatten().all(|t| *t > 0.0 && t.is_finite());
    if !ok {
        return vec![Check::new("every phase measured", format!("{one:?} {two:?}"), "24 phase times", false)];
    }
    let percent = |x: f64| format!("{:.0}%", x * 100.0);
    let mut v = Vec::new();
    for (p, name) in PHASES.iter().enumerate() {
        let cut = 1.0 - two[1][p] / two[0][p];
        let (paper, lo, hi) = CUTS[p];
        v.push(Check::new(
            format!("two clients, {name}: anticipation's cut"),
            percent(cut),
            format!("{} ({}-{})", percent(paper), percent(lo), percent(hi)),
            (lo..=hi).contains(&cut),
        ));
    }
    let (lo, hi) = ONE_CLIENT;
    let r = one[1][3] / one[0][3];
    v.push(Check::new(
        "one client, scan: anticipation changes nothing",
        format!("{r:.2}x"),
        format!("\"the same with or without anticipatory scheduling\" ({lo}-{hi}x)"),
        (lo..=hi).contains(&r),
    ));
    v
}

fn fig8(scale: Scale, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<FigureData, LabError> {
    let dir = opts.out.join("as-fig8");
    let dirs = if scale == Scale::Quick { 100 } else { 500 };
    let scheds = toml_list(&SCHEDULERS);
    let mut times = [[[0.0; 4]; 3]; 2];
    // the drive's busy share of each client count's aged-sptf run (whole workload)
    let mut busy = [0.0; 2];
    let mut commands = Vec::new();
    let mut reports = Vec::new();
    let mut rows = Vec::new();
    for (k, clients) in [1u32, 2].iter().enumerate() {
        let name = format!("{clients}-client");
        let steps = steps(*clients, dirs).iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(",\n  ");
        let text = format!(
            "# as-fig8: the Andrew benchmark's phases, {clients} client(s) of {dirs} directories x {SOURCES} files \
             (seeds/001 §4.3; busybox standing in)\nname = \"as-fig8-{name}\"\n[guest]\nfs = \"ext4\"\n\
             guest_scheduler = \"none\"\nmemory_mb = 256\ntimeout_s = 7200\n[headway]\ndisk = \"deskstar-34gxp\"\n\
             schedulers = [{scheds}]\ncontext = \"connection\"\nsize = \"16G\"\n[workload]\nsteps = [\n  {steps}\n]\n"
        );
        let (report, cmd) = run_written(&dir, &name, &text, &[], opts, log)?;
        commands.push(cmd);
        busy[k] =
            report.runs.iter().find(|r| r.scheduler == SCHEDULERS[0]).map_or(0.0, |r| r.device.utilization);
        for (i, s) in SCHEDULERS.iter().enumerate() {
            let run = report.runs.iter().find(|r| r.scheduler == *s);
            for (p, step) in phase_steps().iter().enumerate() {
                let want = format!("workload{step}");
                let st = run.and_then(|r| r.lab.steps.iter().find(|st| st.name == want));
                times[k][i][p] = st.map_or(0.0, |st| st.end_s - st.start_s);
            }
            rows.push((
                format!("{clients} client(s), {s}: seconds ({})", PHASES.join(", ")),
                list(&times[k][i], 2),
                if *clients == 2 && i == 1 {
                    "anticipation: mkdir -16%, cp -5%, stat -5%, scan -54%".to_string()
                } else {
                    "Figure 8 (values not in the text)".to_string()
                },
            ));
        }
        reports.push((name, serde_json::to_value(&report).unwrap_or_default()));
    }
    let checks = judge_fig8(&times[0], &times[1]);
    let (outcome, verdict) = verdict_of(&checks, true);
    rows.push((
        "two clients, scan: stream:aged-sptf's cut (not in the paper)".into(),
        format!("{:.0}%", (1.0 - times[1][2][3] / times[1][0][3].max(1e-9)) * 100.0),
        "stream scheduling needs no process information".into(),
    ));
    rows.extend(check_rows(&checks));
    Ok(FigureData {
        id: FIGURE.id.into(),
        source: FIGURE.source.into(),
        title: FIGURE.title.into(),
        setting: format!(
            "A real Linux guest (Debian's cloud 6.1 kernel, 256 MB, guest scheduler none, one NBD connection: \
             the server's context) on headway serve's emulated deskstar-34gxp (the paper's IBM Deskstar 34GXP; \
             its first 16 GB). Stand-in: busybox's mkdir, cp, ls -lR, grep and wc over {dirs} directories x \
             {SOURCES} generated C-like files per client, the phases run by both clients together, the page \
             cache dropped before stat and scan; no gcc phase."
        ),
        commands,
        scale_note: if scale == Scale::Quick { "100 directories per client instead of 500".into() } else { String::new() },
        x_label: "phase".into(),
        y_label: "seconds, two clients".into(),
        categories: PHASES.iter().map(|p| p.to_string()).collect(),
        series: SCHEDULERS.iter().enumerate().map(|(i, s)| (s.to_string(), times[1][i].to_vec())).collect(),
        paper_points: Vec::new(),
        scatter: Vec::new(),
        rows,
        outcome,
        verdict,
        explanation: if checks.iter().any(|c| !c.held) { fig8_explanation(&times, busy) } else { String::new() },
        reports,
    })
}

/// Why the figure departs, from the runs: phase seconds per client count and scheduler,
/// and the drive's busy share of each client count's Aged-SPTF run.
pub fn fig8_explanation(times: &[[[f64; 4]; 3]; 2], busy: [f64; 2]) -> String {
    let scan = |k: usize, i: usize| times[k][i][3];
    if busy[1] >= 0.7 {
        return format!(
            "The drive was busy {:.0}% of the two-client run's workload, so the disk bounds it; \
             anticipation cut the two-client scan by {:.0}% against the paper's 54%, and these runs \
             do not measure why.",
            busy[1] * 100.0,
            (1.0 - scan(1, 1) / scan(1, 0).max(1e-9)) * 100.0,
        );
    }
    format!(
        "Under TCG the guest's CPU, not the disk, bounds the scan. Two clients scan in {:.2}x one \
         client's time under Aged-SPTF ({:.1} s against {:.1}), and the drive was busy {:.0}% of the \
         two-client run's workload ({:.0}% with one client): the clients mostly wait on the guest's \
         emulated CPU, not on each other's seeks, so anticipation, which saves seeks, cut the \
         two-client scan by {:.0}% where the paper's disk-bound scan was cut by 54%.",
        scan(1, 0) / scan(0, 0).max(1e-9),
        scan(1, 0),
        scan(0, 0),
        busy[1] * 100.0,
        busy[0] * 100.0,
        (1.0 - scan(1, 1) / scan(1, 0).max(1e-9)) * 100.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_cuts_match_and_no_cut_differs() {
        let plain = [10.0, 20.0, 5.0, 40.0];
        let antic = [8.4, 19.0, 4.75, 18.4];
        let one = [plain, plain, plain];
        let two = [plain, antic, antic];
        assert!(judge_fig8(&one, &two).iter().all(|c| c.held), "{:?}", judge_fig8(&one, &two));
        // anticipation gains nothing: mkdir and scan fail, cp and stat (about 5%) hold at 0
        let none = judge_fig8(&one, &[plain, plain, plain]);
        assert_eq!(none.iter().map(|c| c.held).collect::<Vec<_>>(), vec![false, true, true, false, true]);
        // a missing phase fails
        assert!(!judge_fig8(&[[0.0; 4]; 3], &two)[0].held);
    }

    #[test]
    fn steps_run_each_client_in_its_own_repository() {
        let s = steps(2, 3);
        assert_eq!(s.len(), 8);
        for p in phase_steps() {
            assert!(s[p].contains("R=$HEADWAY_DIR/c0") && s[p].contains("R=$HEADWAY_DIR/c1"), "{}", s[p]);
        }
        assert!(s[7].contains("grep -c zzz $R/d$i/*") && s[7].contains("while [ $i -lt 3 ]"));
        assert!(s[4].contains("drop_caches") && s[6].contains("drop_caches"));
        assert!(!steps(1, 3)[3].contains("/c1"));
        // run on the host by busybox's shell (the guest's), but for the cache drops
        let dir = tempfile::tempdir().unwrap();
        for (i, step) in s.iter().enumerate().filter(|(i, _)| ![1, 4, 6].contains(i)) {
            let o = std::process::Command::new("busybox")
                .args(["sh", "-c", step])
                .env("HEADWAY_DIR", dir.path())
                .output()
                .expect("busybox (Debian's busybox-static, `make deps`)");
            assert!(o.status.success(), "step {i}: {}", String::from_utf8_lossy(&o.stderr));
        }
        for c in ["c0", "c1"] {
            let files = std::fs::read_dir(dir.path().join(c).join("d2")).unwrap().count();
            assert_eq!(files, SOURCES as usize, "{c}");
        }
        let src = std::fs::read_to_string(dir.path().join("src/s70.c")).unwrap();
        assert!(src.starts_with("int f70_0(int x) { return x * 0 + 70; }\n"), "{src}");
        let list = s.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(", ");
        let t = format!("[guest]\nfs = \"ext4\"\n[workload]\nsteps = [{list}]\n");
        assert!(crate::spec::Spec::parse(std::path::Path::new("a.toml"), &t).is_ok());
    }

    #[test]
    fn the_explanation_follows_the_drives_busy_share() {
        let mut t = [[[1.0; 4]; 3]; 2];
        t[0][0][3] = 10.0;
        t[1][0][3] = 23.0;
        t[1][1][3] = 21.0;
        let cpu = fig8_explanation(&t, [0.3, 0.46]);
        assert!(cpu.contains("guest's CPU, not the disk"), "{cpu}");
        assert!(cpu.contains("2.30x one client's time"), "{cpu}");
        assert!(cpu.contains("busy 46%") && cpu.contains("by 9%"), "{cpu}");
        // a busy drive: no CPU story
        let disk = fig8_explanation(&t, [0.9, 0.95]);
        assert!(!disk.contains("CPU") && disk.contains("busy 95%"), "{disk}");
    }
}

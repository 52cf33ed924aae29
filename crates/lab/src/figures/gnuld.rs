//! `as-fig10` — the anticipatory paper (seeds/001) §4.5, Figure 10, in a real guest, with
//! binutils' `ld` standing in for the paper's GNU linker run (the last stage of a FreeBSD
//! kernel build).
//!
//! The paper: the linker reads 385 object files from a cold cache, 75% of them under 10 KB
//! and 96% under 25 KB; after their ELF headers it makes about six small non-sequential
//! reads in each, separated by computation. One instance takes about 1.8 s under Aged-SPTF
//! and under CSCAN; two instances on disjoint repositories take 5.5 times as long instead of
//! twice (deceptive idleness); anticipation cuts that by 68% under Aged-SPTF (to about twice
//! one instance) and by 48% under CSCAN, whose time stays 56% above Aged-SPTF's.
//!
//! The stand-in: the guest makes two repositories of 385 objects each on a fresh ext4 with
//! binutils' `as` (sizes drawn as the paper's: three quarters 1.5-9.5 KB of content, a fifth
//! 8-22 KB, the rest 23-63 KB, in six to nine sections; plus the ELF headers), syncs and
//! drops the page cache, then runs `ld -r` over one repository, or two `ld -r` at once,
//! one per repository (the files in name order: not their creation order). The time is the
//! link step's (the guest's clock, 10 ms steps). Each repository is linked once before the
//! cache is dropped, so that the measured link is not the guest's first of those objects.
//!
//! Under TCG the measured link is not what the paper measured: it spends about 90 s of
//! guest kernel time for 385 objects (0.03 s on the host, 0.41 s in user-mode
//! `qemu-x86_64`). Measured in guests on 60 objects: the first link after they were
//! written and the cache dropped took 10.8-11.5 s (10.4 s of it system time, of which
//! `strace` saw 1.8 s in system calls); a second one, into a new output file, 0.16 s; one
//! after dropping the cache again 0.7 s. Yet linking all 385 once before dropping the
//! cache (as here) leaves the measured link at 91.5 s, and two links at once take as long
//! as one (91.5 s with 972 reads at the drive against 495): each read the drive serves in
//! milliseconds stalls about 185 ms in the guest. The cause is not found (PostMark's and
//! dd's reads do not stall so); the figure needs it found, or KVM, to measure the disk.
//!
//! The server's schedulers: Aged-SPTF and CSCAN, each plain and with anticipation
//! (`antic:`), and `stream:aged-sptf`. Behind `headway serve` anticipation sees one NBD
//! connection, not the guest's two linker processes; stream scheduling needs no process
//! information.

use super::{
    check_rows, list, run_written, together, toml_list, verdict_of, Check, FigureData, LabFigure, Scale,
};
use crate::run::LabOptions;
use crate::LabError;

pub(super) const FIGURE: LabFigure = LabFigure {
    id: "as-fig10",
    source: "seeds/001 (Anticipatory Scheduling) §4.5, Figure 10 — in a real guest, binutils' ld standing in",
    title: "one and two concurrent linkers over 385 small object files: Aged-SPTF and CSCAN with and without anticipation",
    run: |s, o, l| Ok(vec![fig10(s, o, l)?]),
};

/// The server's schedulers, in report order.
pub const SCHEDULERS: [&str; 5] =
    ["aged-sptf", "antic:aged-sptf", "cscan", "antic:cscan", "stream:aged-sptf"];
const AGED: usize = 0;
const ANTIC_AGED: usize = 1;
const CSCAN: usize = 2;
const ANTIC_CSCAN: usize = 3;

/// Object files per repository (the paper's).
pub const OBJECTS: u32 = 385;

/// Two instances over one, without anticipation: the paper's 5.5x.
pub const TWO_OVER_ONE: (f64, f64, f64) = (5.5, 3.5, 7.5);
/// Anticipation's cut of two instances' time: Aged-SPTF 68%, CSCAN 48%.
pub const CUT_AGED: (f64, f64, f64) = (0.68, 0.55, 0.80);
pub const CUT_CSCAN: (f64, f64, f64) = (0.48, 0.33, 0.62);
/// CSCAN with anticipation over Aged-SPTF with anticipation: "56% higher".
pub const CSCAN_OVER_AGED: (f64, f64, f64) = (1.56, 1.25, 1.9);
/// One instance: both schedulers "about 1.8 seconds each".
pub const ONE_ALIKE: (f64, f64) = (0.9, 1.1);

/// The guest's steps: make both repositories, drop the cache, link `instances` at once.
pub fn steps(instances: u32) -> Vec<String> {
    let make = format!(
        "mkrepo() {{ mkdir -p $1; i=0; r=$2; while [ $i -lt {OBJECTS} ]; do \
         r=$(( (r * 1103515245 + 12345) % 2147483648 )); p=$(( r % 100 )); q=$(( r / 100 )); \
         if [ $p -lt 75 ]; then s=$(( 1536 + q % 8192 )); elif [ $p -lt 96 ]; then s=$(( 8192 + q % 14336 )); \
         else s=$(( 23552 + q % 40960 )); fi; n=$(( 6 + q / 7 % 4 )); j=0; \
         while [ $j -lt $n ]; do echo \".section .data.s$j,\\\"aw\\\"\"; echo \".globl s${{i}}_$j\"; \
         echo \"s${{i}}_$j: .fill $(( s / n )),1,$(( (i + j) % 251 ))\"; j=$((j+1)); done > /tmp/o.s; \
         as -o $1/f$i.o /tmp/o.s || return 1; i=$((i+1)); done; }}; \
         mkrepo $HEADWAY_DIR/r0 1 && mkrepo $HEADWAY_DIR/r1 2 && \
         ld -r -o /tmp/warm0.o $HEADWAY_DIR/r0/*.o && ld -r -o /tmp/warm1.o $HEADWAY_DIR/r1/*.o"
    );
    let links: Vec<String> =
        (0..instances).map(|k| format!("ld -r -o /tmp/out{k}.o $HEADWAY_DIR/r{k}/*.o")).collect();
    vec![make, "sync; echo 3 > /proc/sys/vm/drop_caches".into(), together(&links)]
}

/// The paper's statements from link seconds per scheduler ([`SCHEDULERS`] order) with one
/// instance and with two.
pub fn judge_fig10(one: &[f64; 5], two: &[f64; 5]) -> Vec<Check> {
    let ok = one.iter().chain(two).all(|t| *t > 0.0 && t.is_finite());
    if !ok {
        return vec![Check::new("every point measured", format!("{one:?} {two:?}"), "ten link times", false)];
    }
    let (lo, hi) = ONE_ALIKE;
    let cut = |with: usize, without: usize| 1.0 - two[with] / two[without];
    let (p, plo, phi) = TWO_OVER_ONE;
    let (a, alo, ahi) = CUT_AGED;
    let (c, clo, chi) = CUT_CSCAN;
    let (r, rlo, rhi) = CSCAN_OVER_AGED;
    let percent = |x: f64| format!("{:.0}%", x * 100.0);
    let band = |x: f64, l: f64, h: f64| (l..=h).contains(&x);
    vec![
        Check::new(
            "one instance: CSCAN alike Aged-SPTF",
            format!("{:.2}x", one[CSCAN] / one[AGED]),
            format!("\"about 1.8 seconds each\" ({lo}-{hi}x)"),
            band(one[CSCAN] / one[AGED], lo, hi),
        ),
        Check::ratio(
            "two instances over one, Aged-SPTF without anticipation",
            two[AGED] / one[AGED],
            p,
            plo,
            phi,
            "\"an increase in execution time by a factor of 5.5\"",
        ),
        Check::new(
            "anticipation's cut of two instances' time, Aged-SPTF",
            percent(cut(ANTIC_AGED, AGED)),
            format!("{} (\"a benefit of 68%\"; {}-{})", percent(a), percent(alo), percent(ahi)),
            band(cut(ANTIC_AGED, AGED), alo, ahi),
        ),
        Check::new(
            "anticipation's cut of two instances' time, CSCAN",
            percent(cut(ANTIC_CSCAN, CSCAN)),
            format!("{} (\"only 48%\"; {}-{})", percent(c), percent(clo), percent(chi)),
            band(cut(ANTIC_CSCAN, CSCAN), clo, chi),
        ),
        Check::ratio(
            "CSCAN with anticipation over Aged-SPTF with anticipation, two instances",
            two[ANTIC_CSCAN] / two[ANTIC_AGED],
            r,
            rlo,
            rhi,
            "\"56% higher than the Aged-SPTF case\"",
        ),
    ]
}

fn fig10(scale: Scale, opts: &LabOptions, log: &mut dyn FnMut(&str)) -> Result<FigureData, LabError> {
    let dir = opts.out.join("as-fig10");
    let scheds = toml_list(&SCHEDULERS);
    let mut times = [[0.0; 5]; 2];
    // per instance count, under aged-sptf: reads at the drive, the server's mean latency (ms),
    // the drive's busy share of the workload
    let mut served = [(0u64, 0.0f64, 0.0f64); 2];
    let mut commands = Vec::new();
    let mut reports = Vec::new();
    let mut rows = Vec::new();
    for (k, instances) in [1u32, 2].iter().enumerate() {
        let name = format!("{instances}-linker");
        let steps = steps(*instances).iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(",\n  ");
        let text = format!(
            "# as-fig10: {instances} ld -r at once over 385 small object files each (seeds/001 §4.5; binutils' ld \
             standing in for the GNU linker)\nname = \"as-fig10-{name}\"\n[guest]\nfs = \"ext4\"\n\
             guest_scheduler = \"none\"\nmemory_mb = 256\ntimeout_s = 3600\n[headway]\ndisk = \"deskstar-34gxp\"\n\
             schedulers = [{scheds}]\ncontext = \"connection\"\n[workload]\ntools = [\"as\", \"ld\"]\nsteps = [\n  {steps}\n]\n"
        );
        let (report, cmd) = run_written(&dir, &name, &text, &[], opts, log)?;
        commands.push(cmd);
        let mut requests = Vec::new();
        for (i, s) in SCHEDULERS.iter().enumerate() {
            let run = report.runs.iter().find(|r| r.scheduler == *s);
            // the third step is the link
            let link = run.and_then(|r| r.lab.steps.iter().find(|st| st.name == "workload2"));
            times[k][i] = link.map_or(0.0, |st| st.end_s - st.start_s);
            requests.push(run.map_or(0, |r| r.server.first().map_or(0, |x| x.workload.drive_reads)));
            if i == AGED {
                let lat = run.and_then(|r| r.server.first()).map_or(0.0, |x| x.mean_latency_ns / 1e6);
                served[k] = (requests[i], lat, run.map_or(0.0, |r| r.device.utilization));
            }
        }
        rows.push((
            format!("{instances} instance(s): link seconds ({})", SCHEDULERS.join(", ")),
            list(&times[k], 2),
            if *instances == 1 {
                "about 1.8 s under Aged-SPTF and CSCAN".to_string()
            } else {
                "5.5x one instance without anticipation; 68% (Aged-SPTF) and 48% (CSCAN) less with it"
                    .to_string()
            },
        ));
        rows.push((
            format!("{instances} instance(s): reads at the drive over the workload"),
            requests.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", "),
            "-".into(),
        ));
        reports.push((name, serde_json::to_value(&report).unwrap_or_default()));
    }
    let checks = judge_fig10(&times[0], &times[1]);
    let (outcome, verdict) = verdict_of(&checks, true);
    rows.push((
        "two instances, stream:aged-sptf over aged-sptf (time)".into(),
        format!("{:.2}x", times[1][4] / times[1][AGED].max(1e-9)),
        "not in the paper: stream scheduling needs no process information".into(),
    ));
    rows.extend(check_rows(&checks));
    Ok(FigureData {
        id: FIGURE.id.into(),
        source: FIGURE.source.into(),
        title: FIGURE.title.into(),
        setting: "A real Linux guest (Debian's cloud 6.1 kernel, 256 MB, guest scheduler none, one NBD \
                  connection: the server's context) on headway serve's emulated deskstar-34gxp (the paper's \
                  IBM Deskstar 34GXP). Stand-in: binutils' `ld -r` over 385 object files made in the guest \
                  with `as` to the paper's size distribution, from a cold page cache, one instance or two \
                  on disjoint repositories at once. The paper's linker was FreeBSD 4.3's GNU ld on a 550 MHz \
                  Pentium III; here a CPU emulated by QEMU does the linking computation between reads."
            .into(),
        commands,
        scale_note: if scale == Scale::Quick {
            "as at full scale (one run per point)".into()
        } else {
            String::new()
        },
        x_label: "server scheduler".into(),
        y_label: "link seconds".into(),
        categories: SCHEDULERS.iter().map(|s| s.to_string()).collect(),
        series: vec![("one instance".into(), times[0].to_vec()), ("two instances".into(), times[1].to_vec())],
        paper_points: vec![("one instance".into(), AGED, 1.8), ("one instance".into(), CSCAN, 1.8)],
        scatter: Vec::new(),
        rows,
        outcome,
        verdict,
        explanation: if checks.iter().any(|c| !c.held) {
            fig10_explanation(&times, served)
        } else {
            String::new()
        },
        reports,
    })
}

/// Why the figure departs, from the runs: link seconds per instance count and scheduler,
/// and under Aged-SPTF the reads at the drive, the server's mean latency (ms) and the
/// drive's busy share per instance count.
pub fn fig10_explanation(times: &[[f64; 5]; 2], served: [(u64, f64, f64); 2]) -> String {
    let (one, two) = (times[0][AGED], times[1][AGED]);
    let per_read = |t: f64, n: u64| t * 1e3 / n.max(1) as f64;
    let idle = if served[1].2 < 0.5 {
        format!(
            " With the drive mostly idle there is no deceptive idleness to cure, so anticipation \
             changes little (two links: {:.1} s with it).",
            times[1][ANTIC_AGED]
        )
    } else {
        String::new()
    };
    format!(
        "The guest, not the drive, sets the link's pace under TCG. Under Aged-SPTF one link took {one:.1} \
         s for {} reads at the drive, {:.0} ms of link time per read, while the server answered the \
         guest's requests in {:.1} ms on average; two links at once took {two:.1} s ({:.2}x one) for {} \
         reads, the drive busy {:.0}% of the time.{idle} Why each read stalls the guest so long is not \
         found (PostMark's and dd's reads do not); the figure needs that found, or KVM.",
        served[0].0,
        per_read(one, served[0].0),
        served[0].1,
        two / one.max(1e-9),
        served[1].0,
        served[1].2 * 100.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_shape_matches_and_its_opposite_differs() {
        // the paper: 1.8 s alone; two 9.9 s, anticipation 3.2 s (Aged-SPTF), CSCAN 5.15 -> 5.0
        let one = [1.8, 1.8, 1.85, 1.8, 1.8];
        let two = [9.9, 3.2, 9.6, 5.0, 3.3];
        assert!(judge_fig10(&one, &two).iter().all(|c| c.held), "{:?}", judge_fig10(&one, &two));
        // no deceptive idleness and no gain from anticipation: everything but the first fails
        let flat = [3.6, 3.6, 3.6, 3.6, 3.6];
        let k = judge_fig10(&one, &flat);
        assert_eq!(k.iter().filter(|c| c.held).count(), 1, "{k:?}");
        // a missing point fails
        assert!(!judge_fig10(&[0.0; 5], &two)[0].held);
    }

    #[test]
    fn the_steps_link_each_repository_once() {
        let two = steps(2);
        assert_eq!(two.len(), 3);
        assert!(
            two[0].contains("mkrepo $HEADWAY_DIR/r0 1 && mkrepo $HEADWAY_DIR/r1 2 && ld -r -o /tmp/warm0.o")
        );
        assert!(two[2].contains("r0/*.o & p0=$!") && two[2].contains("r1/*.o & p1=$!"), "{}", two[2]);
        assert!(!steps(1)[2].contains("r1/"));
        // the steps make and link real objects with the host's binutils, in busybox's shell
        let dir = tempfile::tempdir().unwrap();
        for (i, step) in two.iter().enumerate().filter(|(i, _)| *i != 1) {
            let o = std::process::Command::new("busybox")
                .args(["sh", "-c", step])
                .env("HEADWAY_DIR", dir.path())
                .output()
                .expect("busybox (Debian's busybox-static, `make deps`)");
            assert!(o.status.success(), "step {i}: {}", String::from_utf8_lossy(&o.stderr));
        }
        let sizes: Vec<u64> = std::fs::read_dir(dir.path().join("r1"))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .collect();
        assert_eq!(sizes.len(), OBJECTS as usize);
        // the paper's distribution: 75% under 10 KB, 96% under 25 KB (objects, headers included)
        let under = |kb: u64| sizes.iter().filter(|s| **s < kb * 1024).count() as f64 / sizes.len() as f64;
        assert!((0.65..=0.85).contains(&under(10)), "{}", under(10));
        assert!((0.90..=0.99).contains(&under(25)), "{}", under(25));
        // the spec the figure writes parses
        let list = two.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ");
        let t = format!("[guest]\nfs = \"ext4\"\n[workload]\ntools = [\"as\", \"ld\"]\nsteps = [{list}]\n");
        let s = crate::spec::Spec::parse(std::path::Path::new("g.toml"), &t).unwrap();
        assert_eq!(s.tools.len(), 2);
    }

    #[test]
    fn the_explanation_gives_the_time_per_read() {
        let times = [[91.5, 90.8, 94.4, 93.4, 95.0], [91.5, 92.3, 93.8, 93.1, 93.0]];
        let e = fig10_explanation(&times, [(495, 6.2, 0.03), (972, 7.0, 0.08)]);
        assert!(
            e.contains("one link took 91.5 s for 495 reads at the drive, 185 ms of link time per read"),
            "{e}"
        );
        assert!(e.contains("in 6.2 ms on average") && e.contains("(1.00x one) for 972"), "{e}");
        assert!(e.contains("the drive busy 8% of the time"), "{e}");
    }
}

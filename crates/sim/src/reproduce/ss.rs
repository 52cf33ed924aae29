//! Stream Scheduling paper (seeds/000): Figures 3, 4, 5, 6 (disk arrays: par-read and
//! PostMark; TPC-H is not modelled), 7(a) and 7(b-c).

use super::{
    bw, cmd, config, device, exp, run, seek_share, Check, Figure, Outcome, PaperPoint, Scale, Series,
    Statement, Status,
};
use crate::{ContextMode, SimError};

pub(super) fn figures() -> Vec<Figure> {
    vec![
        Figure {
            id: "ss-fig1",
            source: "seeds/000 §2.1, Figure 1",
            title: "illustration of forming a stream and using the stream",
            status: Status::Unavailable(
                "not an experiment: a drawing of how requests form a stream; the rules it draws are \
                 crates/sched/src/framework/stream.rs, pinned by its tests",
            ),
        },
        Figure {
            id: "ss-fig2",
            source: "seeds/000 §2.1, Figure 2",
            title: "the stream scheduling algorithm (pseudo-code)",
            status: Status::Unavailable(
                "not an experiment: the pseudo-code headway's `stream` implements \
                 (crates/sched/src/framework/stream.rs; the array version in framework/array_stream.rs)",
            ),
        },
        Figure {
            id: "ss-fig3",
            source: "seeds/000 (Stream Scheduling) §3.3, Figure 3: storage without process information",
            title: "par-read: four sequential readers, process information hidden",
            status: Status::Available(fig3),
        },
        Figure {
            id: "ss-fig4",
            source: "seeds/000 (Stream Scheduling) §3.3, Figure 4",
            title: "par-read: SS's advantage over Deadline as the thinktime grows",
            status: Status::Available(fig4),
        },
        Figure {
            id: "ss-fig5",
            source:
                "seeds/000 (Stream Scheduling) §3.4, Figure 5: inadequate or misleading process information",
            title: "multi-threads, PVFS data server, Xen guest FTP server",
            status: Status::Available(fig5),
        },
        Figure {
            id: "ss-fig6",
            source: "seeds/000 (Stream Scheduling) §3.5, Figure 6",
            title: "par-read and PostMark on a five-disk RAID0 array (TPC-H is not modelled)",
            status: Status::Available(fig6),
        },
        Figure {
            id: "ss-fig7a",
            source: "seeds/000 (Stream Scheduling) §3.6, Figure 7(a)",
            title: "par-read: SS throughput against the stream time slice",
            status: Status::Available(fig7a),
        },
        Figure {
            id: "ss-fig7b",
            source: "seeds/000 (Stream Scheduling) §3.6, Figure 7(b) and 7(c)",
            title: "par-read: per-request wait and service times over the first 4 s",
            status: Status::Available(fig7b),
        },
    ]
}

const FIG3_SCHEDS: [&str; 5] = ["noop", "deadline", "stream", "as", "cfq"];

/// The par-read figure's runs; the shape test (`tests/sim/paper.rs`) calls [`fig3_check`].
pub fn fig3_text(scale: Scale) -> String {
    let t = exp("par-read-buffered.fio");
    match scale {
        Scale::Full => t.to_string(),
        Scale::Quick => t.replace("size=1g", "size=256m"),
    }
}

/// SS at least 2.5x Deadline and Noop; AS and CFQ, blind without process information, at
/// most 1.15x Deadline. Returns (summary, failures).
pub fn fig3_check(r: &crate::Report) -> (String, Check) {
    let (noop, dl, ss) = (bw(r, "noop"), bw(r, "deadline"), bw(r, "stream:deadline"));
    let (a, c) = (bw(r, "as") / dl, bw(r, "cfq") / dl);
    let mut k = Check::default();
    k.that(ss >= 2.5 * dl, || format!("stream {:.2}x deadline < 2.5x", ss / dl));
    k.that(ss >= 2.5 * noop, || format!("stream {:.2}x noop < 2.5x", ss / noop));
    k.that(a <= 1.15 && c <= 1.15, || format!("as {a:.2}x, cfq {c:.2}x deadline > 1.15x"));
    let s = format!(
        "SS {:.2}x deadline (paper ~3.2x, asserted >= 2.5x); AS {a:.2}x, CFQ {c:.2}x deadline \
         (paper: they degenerate to Deadline, asserted <= 1.15x)",
        ss / dl
    );
    (s, k)
}

fn fig3(scale: Scale) -> Result<Outcome, SimError> {
    let fig = super::find("ss-fig3").expect("listed");
    let r = run(&config(
        &fig3_text(scale),
        "par-read-buffered.fio",
        "wd5000aaks",
        &FIG3_SCHEDS,
        ContextMode::None,
    ))?;
    let mut o = Outcome::new(
        &fig,
        "`experiments/par-read-buffered.fio`: four synchronous sequential readers, 4 KiB reads through the \
         page cache (Linux-style readahead), 1 GiB each, 50 GiB apart, thinktime 0; modelled WD5000AAKS, \
         depth 1; `--context none` (process information hidden). The paper ran Linux 2.6.31 on the same drive.",
        "scheduler",
        "throughput relative to Noop",
    );
    if scale == Scale::Quick {
        o.scale_note = "256 MiB per reader instead of 1 GiB.".into();
    }
    o.commands.push(cmd("par-read-buffered.fio", "wd5000aaks", &FIG3_SCHEDS.join(","), "none", ""));
    let noop = bw(&r, "noop");
    let names = ["noop", "deadline", "stream:deadline", "as", "cfq"];
    o.categories = names.iter().map(|s| s.to_string()).collect();
    o.series
        .push(Series { name: "headway".into(), values: names.iter().map(|s| bw(&r, s) / noop).collect() });
    o.paper_points.push(PaperPoint { series: "headway".into(), category: 2, value: 3.2 });
    for s in names {
        let paper = match s {
            "stream:deadline" => "about 3.2x the other schedulers",
            "noop" => "baseline",
            _ => "about Noop's (no process information)",
        };
        o.row(
            format!("{s} MB/s (x Noop)"),
            format!("{:.2} ({:.2}x)", bw(&r, s) / 1e6, bw(&r, s) / noop),
            paper,
        );
    }
    // The same with the paper's readahead timing (a quiet period after each window), for
    // comparison only: the verdict is the default's.
    let mut quiet = config(
        &fig3_text(scale),
        "par-read-buffered.fio",
        "wd5000aaks",
        &["deadline", "stream"],
        ContextMode::None,
    );
    paper_readahead(&mut quiet);
    let q = run(&quiet)?;
    o.row(
        "with `readahead_after_io=1`: stream / deadline MB/s",
        format!(
            "{:.2} / {:.2} ({:.2}x)",
            bw(&q, "stream:deadline") / 1e6,
            bw(&q, "deadline") / 1e6,
            bw(&q, "stream:deadline") / bw(&q, "deadline")
        ),
        "(the quiet periods of §3.3; the verdict is on the default timing)",
    );
    let (summary, k) = fig3_check(&r);
    o.judge(summary, k.0);
    o.keep("par-read", &r);
    o.keep("par-read readahead_after_io=1", &q);
    Ok(o)
}

/// Figure 4's thinktimes (µs).
pub const FIG4_THINKTIMES: [u64; 5] = [0, 50, 100, 200, 400];

/// Figure 4's job at thinktime `tt` µs: (its path beside the report, its text).
pub fn fig4_job(tt: u64) -> (String, String) {
    let text = exp("par-read-buffered.fio").replace("size=1g", "size=256m");
    (format!("ss-fig4/thinktime-{tt}.fio"), text.replace("thinktime=0", &format!("thinktime={tt}")))
}

/// stream:deadline over deadline at each of [`FIG4_THINKTIMES`] (buffered par-read, 256 MiB
/// per reader, process information hidden), with the reports.
pub fn fig4_ratios() -> Result<Vec<(u64, f64, crate::Report)>, SimError> {
    FIG4_THINKTIMES
        .iter()
        .map(|&tt| {
            let (path, text) = fig4_job(tt);
            let r = run(&config(&text, &path, "wd5000aaks", &["deadline", "stream"], ContextMode::None))?;
            let ratio = bw(&r, "stream:deadline") / bw(&r, "deadline");
            Ok((tt, ratio, r))
        })
        .collect()
}

/// At least 2.5x at thinktime 0, never growing with the thinktime (5% tolerance), within
/// 20% of Deadline at 400 µs.
pub fn fig4_check(ratios: &[(u64, f64)]) -> (String, Check) {
    let mut k = Check::default();
    k.that(ratios[0].1 >= 2.5, || format!("{:.2}x at thinktime 0 < 2.5x", ratios[0].1));
    for w in ratios.windows(2) {
        k.that(w[1].1 <= w[0].1 * 1.05, || format!("advantage grew from {} to {} us", w[0].0, w[1].0));
    }
    let last = ratios.last().expect("a sweep").1;
    k.that((0.8..=1.2).contains(&last), || format!("{last:.2}x at 400 us, not within 20% of deadline"));
    let list: Vec<String> = ratios.iter().map(|(t, r)| format!("{r:.2}x at {t} us")).collect();
    (
        format!(
            "SS/deadline {} (paper: ~3.2x at 0, streams break and SS behaves like Deadline by 200 us)",
            list.join(", ")
        ),
        k,
    )
}

fn fig4(_scale: Scale) -> Result<Outcome, SimError> {
    let fig = super::find("ss-fig4").expect("listed");
    let runs = fig4_ratios()?;
    let mut o = Outcome::new(
        &fig,
        "`experiments/par-read-buffered.fio` with 256 MiB per reader and `thinktime` 0, 50, 100, 200, 400 µs; \
         deadline and stream; modelled WD5000AAKS; `--context none`.",
        "thinktime (µs)",
        "stream:deadline throughput / deadline",
    );
    for t in FIG4_THINKTIMES {
        let (path, text) = fig4_job(t);
        o.rerun_file(&path, &text, "wd5000aaks", "deadline,stream", "none", "");
    }
    o.categories = runs.iter().map(|(t, ..)| t.to_string()).collect();
    o.series.push(Series { name: "SS / Deadline".into(), values: runs.iter().map(|(_, r, _)| *r).collect() });
    o.paper_points.push(PaperPoint { series: "SS / Deadline".into(), category: 0, value: 3.2 });
    o.paper_points.push(PaperPoint { series: "SS / Deadline".into(), category: 3, value: 1.0 });
    for (t, ratio, r) in &runs {
        let paper = match t {
            0 => "about 3.2x",
            200 => "about 1x (streams break, SS behaves like Deadline)",
            _ => "falling",
        };
        o.row(format!("thinktime {t} µs: SS / Deadline"), format!("{ratio:.2}x"), paper);
        o.keep(format!("thinktime={t}"), r);
    }
    let pairs: Vec<(u64, f64)> = runs.iter().map(|(t, r, _)| (*t, *r)).collect();
    let (s, k) = fig4_check(&pairs);
    o.judge(s, k.0);
    Ok(o)
}

const FIG5_SCHEDS: [&str; 5] = ["noop", "deadline", "stream", "as", "cfq"];

/// One workload of Figure 5, as ratios: SS / Deadline, AS / Noop, CFQ / Noop.
#[derive(Clone, Copy, Debug)]
pub struct Fig5Ratios {
    pub ss_dl: f64,
    pub as_noop: f64,
    pub cfq_noop: f64,
}

/// The paper's statements on Figure 5 (000 §3.4). Where it gives words, the band is what
/// they allow, capped by its largest gain anywhere, "up to 3.2 times" (its abstract), and
/// 15%: multi-threads — SS "more than doubles" Deadline (2.0-3.7x), AS and CFQ "even worse
/// than Noop" (0.5-0.99x); PVFS — SS +87% over Deadline (1.87x, band 1.6-2.15x), AS and CFQ
/// "seriously underperform" (below Noop: 0.3-0.99x); Xen, one VM — SS "significantly
/// improves" (1.5-3.7x), AS and CFQ "only limited, if any, improvements" (0.9-1.3x Noop).
pub fn fig5_statements(mt: Fig5Ratios, pvfs: Fig5Ratios, xen: Fig5Ratios) -> Vec<Statement> {
    let mut v = vec![
        Statement::range("multi-threads: SS / Deadline", mt.ss_dl, 2.0, 3.7, "more than doubles"),
        Statement::range("multi-threads: AS / Noop", mt.as_noop, 0.5, 0.99, "even worse than Noop"),
        Statement::range("multi-threads: CFQ / Noop", mt.cfq_noop, 0.5, 0.99, "even worse than Noop"),
        Statement::ratio("PVFS: SS / Deadline", pvfs.ss_dl, 1.87, 1.6, 2.15, "+87%"),
    ];
    for (name, r) in [("AS", pvfs.as_noop), ("CFQ", pvfs.cfq_noop)] {
        v.push(Statement::range(format!("PVFS: {name} / Noop"), r, 0.3, 0.99, "seriously underperform"));
    }
    v.push(Statement::range("Xen: SS / Deadline", xen.ss_dl, 1.5, 3.7, "significantly improves"));
    for (name, r) in [("AS", xen.as_noop), ("CFQ", xen.cfq_noop)] {
        v.push(Statement::range(format!("Xen: {name} / Noop"), r, 0.9, 1.3, "limited, if any"));
    }
    v
}

fn fig5(_scale: Scale) -> Result<Outcome, SimError> {
    let fig = super::find("ss-fig5").expect("listed");
    let mut o = Outcome::new(
        &fig,
        "Modelled WD5000AAKS. `multi-threads.fio` (four processes of two threads each, strided 4 KiB reads, \
         threads synchronising every 5 requests) with `--context process` and the drive queueing 32 commands \
         (the paper's drive has NCQ), and again with `--context thread` (Linux presents a thread as a \
         light-weight process: the paper's explanation); `pvfs.fio` (a PVFS data server: four programs' \
         64 KiB reads dispatched by a pool of 8 daemon threads) with `--context pool:8`; `xen-ftp.fio` (four \
         FTP downloads in one guest) with `--context vm`.",
        "scheduler",
        "throughput relative to Noop",
    );
    o.categories =
        ["noop", "deadline", "stream:deadline", "as", "cfq"].iter().map(|s| s.to_string()).collect();
    let mut ratios = Vec::new();
    let mut facts = Vec::new();
    for (file, ctx, ctx_name) in [
        ("multi-threads.fio", ContextMode::Process, "process"),
        ("multi-threads.fio", ContextMode::Thread, "thread"),
        ("pvfs.fio", ContextMode::Pool(8), "pool:8"),
        ("xen-ftp.fio", ContextMode::Vm, "vm"),
    ] {
        let mut cfg = config(exp(file), file, "wd5000aaks", &FIG5_SCHEDS, ctx);
        let mt = file == "multi-threads.fio";
        if mt {
            cfg.run.drive.queue_depth = 32;
        }
        let r = run(&cfg)?;
        let extra = if mt { " --queue-depth 32" } else { "" };
        o.commands.push(cmd(file, "wd5000aaks", &FIG5_SCHEDS.join(","), ctx_name, extra));
        let (noop, dl, ss) = (bw(&r, "noop"), bw(&r, "deadline"), bw(&r, "stream:deadline"));
        let name = if mt {
            format!("multi-threads ({ctx_name})")
        } else {
            file.trim_end_matches(".fio").to_string()
        };
        o.series.push(Series {
            name: name.clone(),
            values: o.categories.iter().map(|s| bw(&r, s) / noop).collect(),
        });
        facts.push(Fig5Facts {
            noop_seeks: seek_share(&r, "noop"),
            as_wait_s: device(&r, "as").idle_wait_ns as f64 / 1e9,
            cfq_wait_s: device(&r, "cfq").idle_wait_ns as f64 / 1e9,
        });
        ratios.push(Fig5Ratios {
            ss_dl: ss / dl,
            as_noop: bw(&r, "as") / noop,
            cfq_noop: bw(&r, "cfq") / noop,
        });
        o.keep(name, &r);
    }
    o.paper_points.push(PaperPoint { series: "multi-threads (process)".into(), category: 2, value: 2.0 });
    o.paper_points.push(PaperPoint { series: "pvfs".into(), category: 2, value: 1.87 });
    let checks = fig5_statements(ratios[0], ratios[2], ratios[3]);
    o.judge_statements(&checks, true);
    let t = ratios[1];
    o.row(
        "multi-threads, --context thread: AS, CFQ / Noop",
        format!("{:.2}x, {:.2}x", t.as_noop, t.cfq_noop),
        "(the paper's view of threads; not its figure's statement)",
    );
    if o.outcome == super::Verdict::Differs {
        o.explanation = fig5_explanation(&ratios, &facts);
    }
    Ok(o)
}

/// What the runs measured beyond throughput, for the explanation.
struct Fig5Facts {
    noop_seeks: f64,
    as_wait_s: f64,
    cfq_wait_s: f64,
}

/// Why Figure 5 comes out otherwise, from the runs' own figures (multi-threads by process,
/// by thread; PVFS; Xen).
fn fig5_explanation(r: &[Fig5Ratios], f: &[Fig5Facts]) -> String {
    let pct = |x: f64| format!("{:.0}%", 100.0 * x);
    format!(
        "In every workload the model's baseline is seek-bound: Noop seeks on {} of its requests on \
         multi-threads, {} on PVFS and {} on Xen, so whatever keeps one issuer's requests together \
         gains more over it than the paper's figure shows (SS {:.2}x Deadline on multi-threads, {:.2}x \
         on PVFS against the paper's 1.87x). For the paper's ratios its baseline must have \
         been well above seek-bound; what made it so on its machines (their drives' caches and queues \
         over the interleaved streams) is not measured here. Multi-threads: with the \
         threads of a process as one issuer (`--context process`) AS and CFQ never wait at a \
         barrier and equal Noop ({:.2}x, {:.2}x; waiting {:.1} s and {:.1} s); with each thread its own \
         issuer (`--context thread`, the paper's explanation: Linux presents a thread as a process), \
         AS still equals Noop ({:.2}x: it waits only when nothing is at the drive, and the drive holds \
         every thread's request; {:.1} s of waiting) and CFQ waits at each barrier ({:.1} s in all) yet \
         gains {:.2}x, because Noop's every request is a seek. For AS and CFQ to fall below Noop as the \
         paper reports, their waits at the barriers must cost more than Noop loses to seeking, which \
         needs a baseline that is not seek-bound. PVFS: AS and CFQ fall below Noop ({:.2}x, {:.2}x) as \
         the paper says.",
        pct(f[0].noop_seeks),
        pct(f[2].noop_seeks),
        pct(f[3].noop_seeks),
        r[0].ss_dl,
        r[2].ss_dl,
        r[0].as_noop,
        r[0].cfq_noop,
        f[0].as_wait_s,
        f[0].cfq_wait_s,
        r[1].as_noop,
        f[1].as_wait_s,
        f[1].cfq_wait_s,
        r[1].cfq_noop,
        r[2].as_noop,
        r[2].cfq_noop,
    )
}

/// Figure 7(a)'s time slices (ms).
pub const FIG7A_SLICES: [u64; 6] = [10, 25, 50, 100, 124, 200];

fn fig7a(_scale: Scale) -> Result<Outcome, SimError> {
    let fig = super::find("ss-fig7a").expect("listed");
    let text = exp("par-read.fio").replace("size=1g", "size=64m");
    let mut o = Outcome::new(
        &fig,
        "`experiments/par-read.fio` (direct 4 KiB reads; through the page cache at thinktime 0 the slice \
         makes no difference in headway) with 64 MiB per reader, stream scheduling only, \
         `--set stream_time_slice=` 10, 25, 50, 100, 124 (the default), 200 ms; modelled WD5000AAKS; \
         `--context none`.",
        "stream time slice (ms)",
        "stream:deadline MB/s",
    );
    let path = "ss-fig7a/par-read-64m.fio";
    let mut v = Vec::new();
    for s in FIG7A_SLICES {
        o.rerun_file(path, &text, "wd5000aaks", "stream", "none", &format!(" --set stream_time_slice={s}ms"));
        let mut cfg = config(&text, path, "wd5000aaks", &["stream"], ContextMode::None);
        cfg.run.settings.push_kv(&format!("stream_time_slice={s}ms")).expect("a valid setting");
        let r = run(&cfg)?;
        v.push(bw(&r, "stream:deadline") / 1e6);
        o.keep(format!("stream_time_slice={s}ms"), &r);
    }
    o.categories = FIG7A_SLICES.iter().map(|s| s.to_string()).collect();
    o.series.push(Series { name: "stream:deadline".into(), values: v.clone() });
    for (s, x) in FIG7A_SLICES.iter().zip(&v) {
        let paper = if *s < 100 { "rising quickly" } else { "diminishing returns" };
        o.row(format!("slice {s} ms: MB/s"), format!("{x:.1}"), paper);
    }
    let mut k = Check::default();
    for (i, w) in v.windows(2).enumerate() {
        k.that(w[1] >= 0.95 * w[0], || {
            format!("throughput fell from {} to {} ms", FIG7A_SLICES[i], FIG7A_SLICES[i + 1])
        });
    }
    let (at10, at100, at124, at200) = (v[0], v[3], v[4], v[5]);
    k.that(at100 >= 1.3 * at10, || format!("100 ms only {:.2}x of 10 ms", at100 / at10));
    k.that(at200 <= 1.1 * at124, || format!("200 ms still {:.2}x of 124 ms", at200 / at124));
    o.judge(
        format!(
            "100 ms slice {:.2}x the 10 ms one (asserted >= 1.3x), 200 ms {:.2}x the 124 ms one (asserted <= 1.1x; \
             paper: improves quickly before 100 ms, diminishing returns after)",
            at100 / at10,
            at200 / at124
        ),
        k.0,
    );
    Ok(o)
}

/// Figure 7(b-c)'s window: the first four seconds of the run.
pub const FIG7B_WINDOW_NS: u64 = 4_000_000_000;
/// The percentiles Figure 7(b-c)'s series are summarised at (100: the largest).
const FIG7B_PCTS: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 100.0];

/// Value at percentile `p` (0-100) of sorted `v`, in ms.
fn pct_ms(v: &[u64], p: f64) -> f64 {
    let i = ((v.len() as f64 * p / 100.0).ceil() as usize).clamp(1, v.len()) - 1;
    v[i] as f64 / 1e6
}

/// Figure 7(b) and 7(c): the wait (arrival at the scheduler to dispatch) and service
/// (dispatch to completion) time of every request the scheduler dispatched in the first
/// 4 s of buffered par-read at thinktime 0, under SS and Deadline. The paper: SS makes a
/// few waits long, up to about 0.37 s (it rotates among four streams with a 124 ms slice,
/// so a stream waits up to three slices), yet most of its waits and its service times are
/// far shorter than Deadline's. Returns (summary, failures) from the two runs' head traces.
///
/// The figure is judged with `readahead_after_io = 1`: the quiet period after each window
/// that seeds/000 §3.3 describes (the next window goes out once the current one "is
/// completed and its data is consumed"), which is what lets SS's streams form and rotate.
/// With the default timing (Linux 2.6.31 starts the next window as the reader touches the
/// marker page, still in flight) each reader's next window is already queued when the
/// previous completes, the child test prices that adjacent window as the alternative, no
/// stream stays established, and the wrapped Deadline's sector order serves one reader
/// until the others' reads expire (longest wait: the 500 ms read expiry plus a command);
/// the report shows that run too.
pub fn fig7b_check(
    deadline: &crate::report::HeadTrace,
    stream: &crate::report::HeadTrace,
) -> (String, Check) {
    let ((dw, ds), (sw, ss)) = (waits_services(deadline), waits_services(stream));
    let mut k = Check::default();
    if dw.is_empty() || sw.is_empty() || ds.is_empty() || ss.is_empty() {
        k.that(false, || "no dispatches recorded".into());
        return (String::new(), k);
    }
    // SS's default slice: four streams in rotation, a stream waits up to three slices
    let slice_ms = 124.0;
    let s_max = pct_ms(&sw, 100.0);
    let long = sw.iter().filter(|&&w| w as f64 > slice_ms * 1e6).count() as f64 / sw.len() as f64;
    k.that(s_max >= 2.0 * slice_ms && s_max <= 4.0 * slice_ms, || {
        format!(
            "SS's longest wait {s_max:.0} ms, expected two to four slices of {slice_ms:.0} ms (paper: 0.37 s, \
             three slices)"
        )
    });
    k.that(long <= 0.05, || {
        format!("{:.1}% of SS's waits longer than a slice (paper: very few)", long * 100.0)
    });
    let (sw50, dw50) = (pct_ms(&sw, 50.0), pct_ms(&dw, 50.0));
    k.that(sw50 < dw50, || format!("SS's median wait {sw50:.3} ms not below Deadline's {dw50:.3} ms"));
    let (ss50, ds50) = (pct_ms(&ss, 50.0), pct_ms(&ds, 50.0));
    k.that(ss50 <= 0.5 * ds50, || {
        format!("SS's median service {ss50:.3} ms not half Deadline's {ds50:.3} ms")
    });
    let summary = format!(
        "SS waits: median {sw50:.3} ms (Deadline {dw50:.3}), longest {s_max:.0} ms (paper 370 ms; asserted \
         248-496 ms: two to four slices), {:.2}% longer than a slice (asserted <= 5%); service: median \
         {ss50:.3} ms vs Deadline {ds50:.3} ms (asserted <= 0.5x)",
        long * 100.0
    );
    (summary, k)
}

/// seeds/000 §3.3's readahead timing: a quiet period after each window
/// (`readahead_after_io = 1`).
fn paper_readahead(cfg: &mut crate::SimConfig) {
    cfg.run.settings.push_kv("readahead_after_io=1").expect("a valid setting");
}

/// Figure 7(b-c)'s two runs (deadline, stream) with the head trace of the first 4 s:
/// `paper_readahead` sets `readahead_after_io = 1` (seeds/000 §3.3's quiet periods).
pub fn fig7b_runs(scale: Scale, paper_readahead: bool) -> Result<crate::Report, SimError> {
    let mut cfg = config(
        &fig3_text(scale),
        "par-read-buffered.fio",
        "wd5000aaks",
        &["deadline", "stream"],
        ContextMode::None,
    );
    if paper_readahead {
        self::paper_readahead(&mut cfg);
    }
    crate::simulate_traced(&cfg, headway_sched::Duration(FIG7B_WINDOW_NS), |_, _| {})
}

/// Sorted waits and completed service times of a head trace.
fn waits_services(t: &crate::report::HeadTrace) -> (Vec<u64>, Vec<u64>) {
    let mut w = t.wait_ns.clone();
    w.sort_unstable();
    let mut s: Vec<u64> = t.service_ns.iter().copied().filter(|&x| x > 0).collect();
    s.sort_unstable();
    (w, s)
}

fn fig7b(scale: Scale) -> Result<Outcome, SimError> {
    let fig = super::find("ss-fig7b").expect("listed");
    let mut o = Outcome::new(
        &fig,
        "`experiments/par-read-buffered.fio` (Figure 3's setting: four buffered sequential readers, \
         thinktime 0, page-cache readahead) with `--set readahead_after_io=1` (the quiet period after \
         each readahead window that the paper's §3.3 describes), deadline and stream scheduling, \
         `--context none`, modelled WD5000AAKS; every request the scheduler dispatched in the first \
         4 s, its wait (arrival at the scheduler to dispatch) and service (dispatch to completion) \
         time, summarised at percentiles (the paper plots them against time). The same with \
         headway's default readahead timing (Linux's) is reported beside it.",
        "percentile",
        "ms",
    );
    o.commands.push(
        "python3 -c \"import headway; r = headway.simulate('experiments/par-read-buffered.fio', \
         schedulers=['deadline', 'stream'], context='none', head_trace=4.0, \
         settings={'readahead_after_io': 1})\"  # runs[i].head_trace: wait_ns, service_ns"
            .to_string(),
    );
    if scale == Scale::Quick {
        o.scale_note = "256 MiB per reader instead of 1 GiB (the first 4 s are the same).".into();
    }
    let r = fig7b_runs(scale, true)?;
    let linux = fig7b_runs(scale, false)?;
    let trace = |r: &crate::Report, i: usize| r.runs[i].head_trace.clone().unwrap_or_default();
    let (dl, st) = (trace(&r, 0), trace(&r, 1));
    o.categories =
        FIG7B_PCTS.iter().map(|p| if *p == 100.0 { "max".into() } else { format!("p{p}") }).collect();
    for (name, t) in [("deadline", &dl), ("stream:deadline", &st)] {
        let (w, sv) = waits_services(t);
        if w.is_empty() || sv.is_empty() {
            continue;
        }
        o.series.push(Series {
            name: format!("{name} wait"),
            values: FIG7B_PCTS.iter().map(|&p| pct_ms(&w, p)).collect(),
        });
        o.series.push(Series {
            name: format!("{name} service"),
            values: FIG7B_PCTS.iter().map(|&p| pct_ms(&sv, p)).collect(),
        });
        o.row(format!("{name}: requests dispatched in 4 s"), format!("{}", w.len()), "");
        o.row(
            format!("{name}: wait median / max, ms"),
            format!("{:.3} / {:.0}", pct_ms(&w, 50.0), pct_ms(&w, 100.0)),
            if name == "deadline" { "" } else { "mostly short; as large as 370" },
        );
        o.row(
            format!("{name}: service median, ms"),
            format!("{:.3}", pct_ms(&sv, 50.0)),
            if name == "deadline" { "" } else { "significantly below Deadline's" },
        );
    }
    let (lw, _) = waits_services(&trace(&linux, 1));
    if !lw.is_empty() {
        o.row(
            "stream:deadline, default readahead timing: wait median / max, ms",
            format!("{:.3} / {:.0}", pct_ms(&lw, 50.0), pct_ms(&lw, 100.0)),
            "(no quiet period: no stream forms, the 500 ms read expiry bounds the waits)",
        );
    }
    o.paper_points.push(PaperPoint {
        series: "stream:deadline wait".into(),
        category: FIG7B_PCTS.len() - 1,
        value: 370.0,
    });
    o.keep("par-read-buffered readahead_after_io=1", &r);
    o.keep("par-read-buffered", &linux);
    let (summary, k) = fig7b_check(&dl, &st);
    o.judge(summary, k.0);
    Ok(o)
}

/// Figure 6's schedulers: the paper's four plus `stream-local` (stream scheduling on each
/// member alone), the baseline coordination is measured against.
pub const FIG6_SCHEDS: [&str; 6] = ["noop", "deadline", "stream-local", "stream", "as", "cfq"];
/// The paper's array: five disks, 64 KiB stripe unit, RAID0.
pub const FIG6_ARRAY: &str = "raid0:5:64k";

/// Figure 6's par-read on `array` (`experiments/par-read-raid0.fio`; quick: 256 MiB files).
pub fn fig6_par_read(scale: Scale, array: &str) -> Result<crate::Report, SimError> {
    let mut text = exp("par-read-raid0.fio").to_string();
    if scale == Scale::Quick {
        text = text.replace("size=1g", "size=256m");
    }
    let mut cfg = config(&text, "par-read-raid0.fio", "wd5000aaks", &FIG6_SCHEDS, ContextMode::Process);
    cfg.run.array = Some(array.parse().expect("an array spec"));
    run(&cfg)
}

/// Figure 6's PostMark (`experiments/postmark-ss.fio`; quick: 5,000 files and 20,000
/// transactions) on `array`.
pub fn fig6_postmark(scale: Scale, array: &str) -> Result<crate::Report, SimError> {
    let mut text = exp("postmark-ss.fio").to_string();
    if scale == Scale::Quick {
        text = text
            .replace("headway_pm_transactions=100000", "headway_pm_transactions=20000")
            .replace("headway_pm_files=10000", "headway_pm_files=5000");
    }
    let mut cfg = config(&text, "postmark-ss.fio", "wd5000aaks", &FIG6_SCHEDS, ContextMode::Process);
    cfg.run.array = Some(array.parse().expect("an array spec"));
    run(&cfg)
}

/// par-read: coordinated `stream` at least 2x Noop (paper +114%) and 1.3x `stream-local`;
/// AS, CFQ and Deadline at most 0.8x `stream` ("the improvements made by AS or CFQ are
/// limited"). PostMark (if given): `stream` within 10% of Deadline ("minimal
/// improvement"). Returns (summary, failures).
pub fn fig6_check(par: &crate::Report, postmark: Option<&crate::Report>) -> (String, Check) {
    let b = |s: &str| bw(par, s);
    let (noop, local, ss) = (b("noop"), b("stream-local:deadline"), b("stream:deadline"));
    let mut k = Check::default();
    k.that(ss >= 2.0 * noop, || format!("par-read: stream {:.2}x noop < 2x", ss / noop));
    k.that(ss >= 1.3 * local, || format!("par-read: stream {:.2}x stream-local < 1.3x", ss / local));
    for s in ["deadline", "as", "cfq"] {
        k.that(b(s) <= 0.8 * ss, || format!("par-read: {s} {:.2}x stream > 0.8x", b(s) / ss));
    }
    let mut summary = format!(
        "par-read: stream {:.2}x noop (paper 2.14x, asserted >= 2x), {:.2}x stream-local (>= 1.3x); \
         AS {:.2}x, CFQ {:.2}x, Deadline {:.2}x stream (<= 0.8x)",
        ss / noop,
        ss / local,
        b("as") / ss,
        b("cfq") / ss,
        b("deadline") / ss
    );
    if let Some(pm) = postmark {
        let ratio = bw(pm, "stream:deadline") / bw(pm, "deadline");
        k.that((ratio - 1.0).abs() <= 0.10, || format!("PostMark: stream/deadline {ratio:.3} off by > 10%"));
        summary.push_str(&format!("; PostMark: stream {ratio:.2}x deadline (within 10%)"));
    }
    (summary, k)
}

/// The paper's statements on Figure 6's par-read (000 §3.5), given SS / Noop, SS's MB/s,
/// AS / SS and CFQ / SS on RAID0, PostMark's SS / Deadline and RAID5's SS / Noop: SS +114%
/// over Noop (2.14x, band 1.8-2.5x); 361 MB/s, near the RAID card's ~400 MB/s peak (band
/// 300-420); AS's and CFQ's improvements "limited" (at most 0.8x SS, at least Noop's level:
/// band 1/2.14-0.8x SS); PostMark "minimal improvement" (0.9-1.1x Deadline); RAID5
/// "consistent results" (SS 1.8-2.5x Noop).
pub fn fig6_statements(
    ss_noop: f64,
    ss_mbps: f64,
    as_ss: f64,
    cfq_ss: f64,
    pm: f64,
    raid5: f64,
) -> Vec<Statement> {
    let floor = 1.0 / 2.14;
    vec![
        Statement::ratio("par-read: SS / Noop", ss_noop, 2.14, 1.8, 2.5, "+114%"),
        Statement::band(
            "par-read: SS throughput",
            ss_mbps,
            361.0,
            300.0,
            420.0,
            "MB/s",
            "near the RAID card's ~400 MB/s",
        ),
        Statement::range("par-read: AS / SS", as_ss, floor, 0.8, "limited improvements"),
        Statement::range("par-read: CFQ / SS", cfq_ss, floor, 0.8, "limited improvements"),
        Statement::range("PostMark: SS / Deadline", pm, 0.9, 1.1, "minimal improvement"),
        Statement::ratio("par-read on RAID5: SS / Noop", raid5, 2.14, 1.8, 2.5, "consistent results"),
    ]
}

fn fig6(scale: Scale) -> Result<Outcome, SimError> {
    let fig = super::find("ss-fig6").expect("listed");
    let par = fig6_par_read(scale, FIG6_ARRAY)?;
    let pm = fig6_postmark(scale, FIG6_ARRAY)?;
    let mut o = Outcome::new(
        &fig,
        "Five modelled WD5000AAKS in RAID0 with a 64 KiB stripe unit (`--array raid0:5:64k`), Linux md's \
         read-ahead of two full stripes (640 KiB), process information given (`--context process`), as in \
         000 Section 3.5. par-read: `experiments/par-read-raid0.fio`, four synchronous sequential readers \
         through the page cache, 1 GiB each. PostMark: `experiments/postmark-ss.fio` (10,000 files, \
         100,000 transactions). `stream` is the coordinated array stream scheduler (000 Section 2.2); \
         `stream-local` runs stream scheduling on each member alone. TPC-H is not modelled.",
        "scheduler",
        "improvement over Noop, %",
    );
    if scale == Scale::Quick {
        o.scale_note =
            "par-read: 256 MiB per reader instead of 1 GiB; PostMark: 5,000 files and 20,000 transactions."
                .into();
    }
    for file in ["par-read-raid0.fio", "postmark-ss.fio"] {
        o.commands.push(cmd(file, "wd5000aaks", &FIG6_SCHEDS.join(","), "process", " --array raid0:5:64k"));
    }
    let names = ["noop", "deadline", "stream-local:deadline", "stream:deadline", "as", "cfq"];
    o.categories = names.iter().map(|s| s.to_string()).collect();
    for (series, r) in [("par-read", &par), ("PostMark", &pm)] {
        let noop = bw(r, "noop");
        o.series.push(Series {
            name: series.into(),
            values: names.iter().map(|s| 100.0 * (bw(r, s) / noop - 1.0)).collect(),
        });
    }
    o.paper_points.push(PaperPoint { series: "par-read".into(), category: 3, value: 114.0 });
    o.row("par-read, Noop MB/s", format!("{:.1}", bw(&par, "noop") / 1e6), "168.0");
    for s in &names[1..] {
        let paper = match *s {
            "stream:deadline" => "+114% (361 MB/s, near the RAID card's ~400 MB/s peak; no card is modelled)",
            "as" | "cfq" => "limited",
            "stream-local:deadline" => "not measured",
            _ => "not given in the text",
        };
        o.row(
            format!("par-read, {s}"),
            format!("{:+.0}%", 100.0 * (bw(&par, s) / bw(&par, "noop") - 1.0)),
            paper,
        );
    }
    o.row("PostMark, Noop MB/s", format!("{:.2}", bw(&pm, "noop") / 1e6), "1.3");
    o.row(
        "PostMark, stream",
        format!("{:+.0}%", 100.0 * (bw(&pm, "stream:deadline") / bw(&pm, "noop") - 1.0)),
        "minimal improvement",
    );
    // "We have also experimented with RAID5 and obtained consistent results."
    let par5 = fig6_par_read(scale, "raid5:5:64k")?;
    let b5 = |s: &str| bw(&par5, s);
    o.row(
        "par-read on raid5:5:64k, stream",
        format!(
            "{:.1} MB/s: {:.2}x noop, {:.2}x stream-local",
            b5("stream:deadline") / 1e6,
            b5("stream:deadline") / b5("noop"),
            b5("stream:deadline") / b5("stream-local:deadline")
        ),
        "consistent with RAID0",
    );
    let b = |s: &str| bw(&par, s);
    let ss = b("stream:deadline");
    let checks = fig6_statements(
        ss / b("noop"),
        ss / 1e6,
        b("as") / ss,
        b("cfq") / ss,
        bw(&pm, "stream:deadline") / bw(&pm, "deadline"),
        b5("stream:deadline") / b5("noop"),
    );
    o.judge_statements(&checks, true);
    if o.outcome == super::Verdict::Differs {
        let noop = device(&par, "noop");
        o.explanation = format!(
            "Both ends of the ratio differ. SS reads {:.0} MB/s, past the RAID card's ~400 MB/s peak that \
             held the paper's at 361: no card bus is modelled (the five members deliver {:.0} MB/s each). \
             Noop reads {:.0} MB/s where the paper's 2.14x at 361 MB/s puts it at about 169: the model's \
             members seek on {:.0}% of Noop's commands ({} of {}). The paper credits \"aggressive \
             prefetching in the RAID\" — the card's own cache, not modelled — for turning the readers' \
             requests into streams; capping SS at the card's 400 MB/s alone would still leave {:.1}x \
             Noop, so the missing prefetch, not only the bus, separates the two.",
            ss / 1e6,
            ss / 5e6,
            b("noop") / 1e6,
            100.0 * seek_share(&par, "noop"),
            noop.seek_count,
            noop.requests,
            400e6 / b("noop"),
        );
    }
    o.keep("par-read", &par);
    o.keep("postmark", &pm);
    o.keep("par-read raid5", &par5);
    o.commands.push(cmd(
        "par-read-raid0.fio",
        "wd5000aaks",
        &FIG6_SCHEDS.join(","),
        "process",
        " --array raid5:5:64k",
    ));
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::Verdict;

    fn r(ss_dl: f64, as_noop: f64, cfq_noop: f64) -> Fig5Ratios {
        Fig5Ratios { ss_dl, as_noop, cfq_noop }
    }

    fn v5(mt: Fig5Ratios, pvfs: Fig5Ratios, xen: Fig5Ratios) -> Verdict {
        headway_verdict::verdict_of(&fig5_statements(mt, pvfs, xen), true).0
    }

    #[test]
    fn fig5_holds_the_papers_shape_and_fails_the_opposite() {
        let (mt, pvfs, xen) = (r(2.3, 0.8, 0.85), r(1.87, 0.6, 0.5), r(2.5, 1.05, 1.1));
        assert_eq!(v5(mt, pvfs, xen), Verdict::Matches);
        // AS and CFQ above Noop on multi-threads (the opposite of "even worse")
        assert_eq!(v5(r(2.3, 1.5, 6.4), pvfs, xen), Verdict::Differs);
        // SS no better than Deadline, or far past the paper's largest gain
        assert_eq!(v5(r(1.0, 0.8, 0.85), pvfs, xen), Verdict::Differs);
        assert_eq!(v5(mt, r(9.5, 0.6, 0.5), xen), Verdict::Differs);
        // AS and CFQ well ahead on Xen's single VM
        assert_eq!(v5(mt, pvfs, r(2.5, 2.0, 2.0)), Verdict::Differs);
    }

    #[test]
    fn fig6_holds_the_papers_shape_and_fails_the_opposite() {
        let v = |a: [f64; 6]| {
            headway_verdict::verdict_of(&fig6_statements(a[0], a[1], a[2], a[3], a[4], a[5]), true).0
        };
        assert_eq!(v([2.14, 361.0, 0.6, 0.6, 1.0, 2.1]), Verdict::Matches);
        // SS no better than Noop; far past the card's peak; AS as good as SS; PostMark gaining
        assert_eq!(v([1.0, 169.0, 0.6, 0.6, 1.0, 1.0]), Verdict::Differs);
        assert_eq!(v([5.2, 462.0, 0.6, 0.6, 1.0, 3.9]), Verdict::Differs);
        assert_eq!(v([2.14, 361.0, 1.0, 1.0, 1.0, 2.1]), Verdict::Differs);
        assert_eq!(v([2.14, 361.0, 0.6, 0.6, 2.0, 2.1]), Verdict::Differs);
    }
}

//! `headway reproduce` end to end: the figure ids (a contract), the files a figure writes,
//! its verdict, and errors.

use std::process::{Command, Output};

fn headway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headway")).args(args).output().expect("headway runs")
}

fn outdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("headway-reproduce-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn list_names_every_figure_with_availability() {
    let out = headway(&["reproduce", "--list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let status = |id: &str| {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("{id} not listed:\n{text}"));
        line.split_whitespace().nth(1).unwrap().to_string()
    };
    for id in [
        "ss-fig3",
        "ss-fig4",
        "ss-fig5",
        "ss-fig7a",
        "ss-fig7b",
        "as-fig4",
        "as-fig5",
        "as-fig6",
        "as-fig7",
        "as-fig12",
        "htbs-fig3",
        "htbs-fig5",
        "htbs-fig6",
        "iopath-fig8",
        "iopath-fig15",
        "ss-fig6",
        "as-fig1",
        "as-fig13",
    ] {
        assert_eq!(status(id), "available", "{id}");
    }
    for id in ["as-fig9", "iopath-fig12"] {
        assert_eq!(status(id), "unavailable", "{id}");
    }
    // the figures that need real guests, each listed once
    for id in [
        "iopath-fig2",
        "iopath-fig3",
        "iopath-fig4",
        "iopath-fig5",
        "iopath-fig6",
        "iopath-fig7",
        "iopath-fig1",
        "iopath-fig10",
        "iopath-fig11",
        "iopath-fig13",
        "iopath-fig14",
        "iopath-fig15-postmark",
        "iopath-fig16",
        "htbs-fig4",
        "as-fig8",
        "as-fig10",
        "as-fig11",
        "ss-fig5-xen",
        "peers",
    ] {
        assert_eq!(status(id), "lab", "{id}");
        assert_eq!(text.lines().filter(|l| l.split_whitespace().next() == Some(id)).count(), 1, "{id}");
    }
    // every figure and table of the four papers is named: by its own id, or (Figures 7(c),
    // 9 and 17 of their papers) by the figure whose runs measure it
    let every = [
        "ss-fig1",
        "ss-fig2",
        "ss-fig3",
        "ss-fig4",
        "ss-fig5",
        "ss-fig6",
        "ss-fig7a",
        "ss-fig7b",
        "as-fig1",
        "as-fig2",
        "as-fig3",
        "as-fig4",
        "as-fig5",
        "as-fig6",
        "as-fig7",
        "as-fig8",
        "as-fig9",
        "as-fig10",
        "as-fig11",
        "as-fig12",
        "as-fig13",
        "iopath-table1",
        "iopath-table2",
        "iopath-table3",
        "iopath-fig1",
        "iopath-fig2",
        "iopath-fig3",
        "iopath-fig4",
        "iopath-fig5",
        "iopath-fig6",
        "iopath-fig7",
        "iopath-fig8",
        "iopath-fig10",
        "iopath-fig11",
        "iopath-fig12",
        "iopath-fig13",
        "iopath-fig14",
        "iopath-fig15",
        "iopath-fig16",
        "htbs-fig1",
        "htbs-fig2",
        "htbs-fig3",
        "htbs-fig4",
        "htbs-fig5",
        "htbs-fig6",
    ];
    for id in every {
        assert!(["available", "unavailable", "lab"].contains(&status(id).as_str()), "{id}: {}", status(id));
    }
    for covered in ["Figure 7(b) and 7(c)", "Figures 8-9", "Figures 15 and 17"] {
        assert!(text.contains(covered), "{covered} not named");
    }
    // every unavailable figure says why, on the line below it
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if l.split_whitespace().nth(1) == Some("unavailable") {
            assert!(lines.get(i + 1).is_some_and(|n| n.trim_start().starts_with("reason: ")), "{l}");
        }
    }
}

#[test]
fn ss_fig3_writes_json_plots_and_a_report_that_explains_the_difference() {
    let dir = outdir("ss-fig3");
    let out = headway(&["reproduce", "ss-fig3", "--quick", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for ext in ["json", "svg", "png", "md"] {
        let p = dir.join(format!("ss-fig3.{ext}"));
        let len = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())).len();
        assert!(len > 100, "{} is {len} bytes", p.display());
    }
    let png = std::fs::read(dir.join("ss-fig3.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(std::fs::read_to_string(dir.join("ss-fig3.svg")).unwrap().starts_with("<svg"));
    let md = std::fs::read_to_string(dir.join("ss-fig3.md")).unwrap();
    assert!(md.contains("**Verdict:** differs: "), "{md}");
    assert!(md.contains("| SS / Noop — does not hold | "), "{md}");
    assert!(md.contains("3.20x (about 3.2X over the other schedulers; band 2.7-3.7x)"), "{md}");
    assert!(md.contains("## Why headway differs\n\nBoth ends differ."), "{md}");
    assert!(md.contains("256 MiB per reader"), "the report states the reduced size: {md}");
    // the job file the report's command names is written beside it
    assert!(dir.join("ss-fig3/one-reader.fio").is_file());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("ss-fig3.json")).unwrap()).unwrap();
    assert_eq!(json["id"], "ss-fig3");
    assert_eq!(json["outcome"], "differs");
    assert_eq!(json["matches"], false);
    assert!(json["reports"][0][1]["runs"].as_array().unwrap().len() == 5);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `reproduce all` counts each outcome; lab figures (not run by `all`) are counted from the
/// report a `headway reproduce ID --out DIR` left in the directory, others as not run.
#[test]
fn all_counts_outcomes_and_the_lab_figures_run_into_its_directory() {
    let dir = outdir("all");
    std::fs::create_dir_all(&dir).unwrap();
    let lab = r#"{"id": "htbs-fig4", "outcome": "differs", "verdict": "differs: 1 of 2 hold"}"#;
    std::fs::write(dir.join("htbs-fig4.json"), lab).unwrap();
    // a file of another figure under a lab figure's name is not counted
    std::fs::write(dir.join("as-fig8.json"), lab).unwrap();
    let out = headway(&["reproduce", "all", "--quick", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let index = std::fs::read_to_string(dir.join("index.md")).unwrap();
    let summary = index.lines().find(|l| l.contains(" figures run: ")).expect("a summary");
    let n = |what: &str| -> usize {
        let at = summary.find(what).unwrap_or_else(|| panic!("{what}: {summary}"));
        summary[..at].rsplit([' ', '(']).next().unwrap().parse().unwrap()
    };
    let rows = |outcome: &str| {
        index.lines().filter(|l| l.starts_with("| [") && l.contains(&format!("| {outcome}: "))).count()
    };
    assert_eq!(n(" matching,"), rows("matches"), "{index}");
    assert_eq!(n(" differing,"), rows("differs"), "{index}");
    assert!(
        summary.contains(
            "Through the lab: 1 with a run in this directory (0 matching, 1 differing, 0 shape only)"
        ),
        "{summary}"
    );
    assert!(index.contains("| htbs-fig4 | "), "{index}");
    assert!(index.contains("(lab, run "), "the lab figure is listed with the differences: {index}");
    assert!(index.lines().any(|l| l.starts_with("| as-fig8 |") && l.contains("not run by `all`")), "{index}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_and_unavailable_figures_are_errors() {
    let out = headway(&["reproduce", "ss-fig99", "--out", outdir("bad").to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown figure `ss-fig99`") && err.contains("ss-fig3") && err.contains("htbs-fig6"),
        "{err}"
    );
    let out = headway(&["reproduce", "as-fig9", "--out", outdir("bad").to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be reproduced yet"));
    let _ = std::fs::remove_dir_all(outdir("bad"));
}

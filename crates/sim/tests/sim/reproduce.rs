//! Every figure `headway reproduce` can run matches its paper's shape, at the settings the
//! figure documents (the same shape checks the paper-shape tests use).

use headway_sim::reproduce::{figures, Scale};

#[test]
fn every_available_figure_matches_its_paper() {
    let mut bad = Vec::new();
    for f in figures() {
        if let Some(r) = f.run(Scale::Full) {
            let o = r.unwrap_or_else(|e| panic!("{}: {e}", f.id));
            eprintln!("{}: {}", o.id, o.verdict);
            if !o.matches {
                bad.push(format!("{}: {}", o.id, o.verdict));
            }
            assert!(!o.series.is_empty() && !o.rows.is_empty() && !o.reports.is_empty(), "{}", f.id);
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn quick_scale_matches_too() {
    for id in ["ss-fig3", "as-fig4", "htbs-fig3"] {
        let o = headway_sim::reproduce::find(id).unwrap().run(Scale::Quick).unwrap().unwrap();
        assert!(o.matches, "{id}: {}", o.verdict);
        assert!(!o.scale_note.is_empty(), "{id}: the reduction is stated");
    }
}

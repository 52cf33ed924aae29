//! Every parameter file of DiskSim 4.0's `valid/` directory (`data/disksim4-dist/`) that
//! describes a disk, an array or a cache loads: each device it defines and each logorg,
//! by name. What does not load fails for the distribution's own reasons, checked too: the
//! MEMS devices (not disks), and what sources `hp_c3323a.diskspecs`, whose model names a
//! seek curve the distribution lacks.

use super::*;

fn dist() -> PathBuf {
    let dir = crate::reference_data().join("disksim4-dist");
    assert!(dir.exists(), "{} missing: DiskSim 4.0's valid/ parameter files", dir.display());
    dir
}

#[test]
fn every_distribution_file_that_describes_a_disk_array_or_cache_loads() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dist())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parv" || x == "diskspecs"))
        .collect();
    files.sort();
    let (mut devices_loaded, mut arrays_loaded, mut files_checked) = (0, 0, 0);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let stem = path.file_name().unwrap().to_string_lossy().to_string();
        if text.contains("memsdevices.specs") {
            // MEMS-based storage: not a disk
            let e = import(path).unwrap_err().to_string();
            assert!(e.contains("memsmodel_mems"), "{stem}: {e}");
            continue;
        }
        files_checked += 1;
        let missing_seek = text.contains("source hp_c3323a.diskspecs") || stem == "hp_c3323a.diskspecs";
        let doc = syntax::parse_file(path).unwrap();
        let names: Vec<String> = crate::parv::devices::devices(&doc).into_iter().map(|d| d.name).collect();
        let orgs: Vec<String> =
            doc.blocks.iter().filter(|b| b.ty == "disksim_logorg").filter_map(|b| b.name.clone()).collect();
        assert!(!names.is_empty(), "{stem}: no device");
        for name in names.iter().chain(&orgs) {
            let result = import_system(path, Some(name));
            let parts = doc.blocks.iter().any(|b| {
                b.name.as_deref() == Some(name.as_str())
                    && b.entries.iter().any(|e| {
                        e.key == "Addressing mode"
                            && matches!(&e.value, syntax::Value::Word(w, _) if w == "Parts")
                    })
            });
            if parts {
                // a Parts logorg is its devices, each addressed on its own: of one device,
                // that device; of several, no array
                match result {
                    Ok((_, None)) if !missing_seek => devices_loaded += 1,
                    Err(e) if e.to_string().contains("is no array") => {
                        assert!(e.to_string().contains("FILE#DEVICE"), "{stem}#{name}: {e}")
                    }
                    Err(e) => assert!(
                        missing_seek && e.to_string().contains("hp_c3323a.seek"),
                        "{stem}#{name}: {e}"
                    ),
                    Ok(r) => panic!("{stem}#{name}: {r:?}"),
                }
                continue;
            }
            match result {
                Ok((_, array)) if !missing_seek => {
                    if array.is_some() {
                        arrays_loaded += 1;
                    } else {
                        devices_loaded += 1;
                    }
                }
                Ok(_) => panic!("{stem}#{name} loaded without hp_c3323a.seek"),
                Err(e) => {
                    let e = e.to_string();
                    assert!(missing_seek && e.contains("hp_c3323a.seek"), "{stem}#{name}: {e}");
                }
            }
        }
    }
    // 38 files, 3 of them MEMS ones
    assert_eq!(files_checked, 35, "{files:?}");
    // every device was asserted above; that they were many is the point
    assert!(devices_loaded > files_checked, "{devices_loaded} devices");
    assert_eq!(arrays_loaded, 0, "the arrays of the distribution are all HP C3323A ones");
}

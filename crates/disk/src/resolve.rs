//! Naming a drive: the one resolver every front end uses (the CLI's `--disk`, `validate`'s
//! PARV, `serve --backend emulated:MODEL`, a sweep's `grid.disk`, Python's `disk=`).
//!
//! A drive is named by either
//! * a built-in model's name ([`builtin_names`], case-insensitive; [`DEFAULT`] when none is
//!   given), or
//! * the path of a DiskSim 4.0 parameter file: anything ending in `.parv` or `.diskspecs`
//!   (any case), imported by [`crate::parv::import`]; `FILE#NAME` picks device NAME of a
//!   file that defines several ([`crate::parv::import_device`]).
//!
//! Anything else is [`ResolveError::Unknown`], whose text lists the built-in names; an
//! unreadable or unsupported parameter file is [`ResolveError::Import`] (`importing PATH`,
//! with the [`ImportError`] naming file and line as its source).
//!
//! [`DEFAULT`]: crate::DEFAULT

use std::path::{Path, PathBuf};

use crate::array::ArraySpec;
use crate::builtin::{builtin, builtin_names};
use crate::parv::{import_device, import_system, is_parameter_file, split_device, ImportError};
use crate::spec::DiskSpec;

/// Why a drive name does not give a drive.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// Neither a built-in model nor a parameter file.
    #[error(
        "unknown drive model `{name}` (known: {}; or a DiskSim .parv/.diskspecs file)",
        builtin_names().join(", ")
    )]
    Unknown { name: String },
    /// A parameter file that cannot be imported.
    #[error("importing {}", path.display())]
    Import {
        path: PathBuf,
        #[source]
        err: ImportError,
    },
}

/// The drive `name` names: a built-in model, or a DiskSim `.parv` / `.diskspecs` file.
pub fn resolve(name: &str) -> Result<DiskSpec, ResolveError> {
    resolve_from(Path::new(""), name)
}

/// [`resolve`], with a relative parameter-file path taken from `base` (a sweep file's
/// directory).
pub fn resolve_from(base: &Path, name: &str) -> Result<DiskSpec, ResolveError> {
    if is_parameter_file(name) {
        let (file, device) = split_device(name);
        let path = base.join(file);
        return import_device(&path, device).map_err(|err| ResolveError::Import { path, err });
    }
    builtin(name).ok_or_else(|| ResolveError::Unknown { name: name.to_string() })
}

/// [`resolve`], and the array `name` brings when it is `FILE#NAME` with NAME a
/// `disksim_logorg` of the file (then the drive is the array's member), the file read once.
pub fn resolve_system(name: &str) -> Result<(DiskSpec, Option<ArraySpec>), ResolveError> {
    if !is_parameter_file(name) {
        return Ok((resolve(name)?, None));
    }
    let (file, device) = split_device(name);
    let path = PathBuf::from(file);
    import_system(&path, device).map_err(|err| ResolveError::Import { path, err })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_names_resolve_in_any_case() {
        assert_eq!(resolve("WD5000AAKS").unwrap(), builtin(crate::DEFAULT).unwrap());
        for n in builtin_names() {
            assert_eq!(resolve(n).unwrap().name, builtin(n).unwrap().name);
        }
    }

    #[test]
    fn an_unknown_name_lists_the_builtin_names() {
        let e = resolve("floppy").unwrap_err().to_string();
        assert!(e.starts_with("unknown drive model `floppy` (known: wd5000aaks, "), "{e}");
        assert!(e.ends_with("cheetah-10k7; or a DiskSim .parv/.diskspecs file)"), "{e}");
    }

    #[test]
    fn a_parameter_file_is_imported_relative_to_the_base() {
        let dir = std::env::temp_dir().join(format!("headway-resolve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // a parameter file that is not there: the import error names the path under `base`
        let e = resolve_from(&dir, "missing.PARV").unwrap_err();
        match &e {
            ResolveError::Import { path, .. } => assert_eq!(path, &dir.join("missing.PARV")),
            other => panic!("{other}"),
        }
        assert_eq!(e.to_string(), format!("importing {}", dir.join("missing.PARV").display()));
        assert!(std::error::Error::source(&e).is_some());
        std::fs::remove_dir_all(&dir).unwrap();
        // DiskSim's reference data in the repository: a real file imports
        let valid = crate::reference_data().join("disksim-valid");
        let spec = resolve_from(&valid, "cheetah9LP.parv").unwrap();
        assert_eq!(spec, crate::parv::import(&valid.join("cheetah9LP.parv")).unwrap());
    }
}

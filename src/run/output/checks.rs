//! The checks every output makes before the first request: a folder given as `--json`, a file
//! given as `--out`, a place volley cannot write once lost the whole measurement after it ran.

use std::path::Path;

use crate::error::Error;

fn invalid(what: &str, path: &Path, why: String) -> Error {
    Error::Invalid {
        what: format!("{what} {}", path.display()),
        why,
    }
}

/// `path` can be written as a file: if it exists it is a regular file, and its folder takes
/// new files (the record is written beside it first, then renamed over it).
pub(super) fn check_file(what: &str, path: &Path) -> Result<(), Error> {
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(invalid(
                what,
                path,
                "is a folder; give the path of a file, e.g. run.json".into(),
            ));
        }
        if !meta.is_file() {
            return Err(invalid(
                what,
                path,
                "is not a regular file (a device or a FIFO); give the path of a file".into(),
            ));
        }
    }
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    check_folder(what, folder).map_err(|e| match e {
        Error::Invalid { why, .. } => invalid(what, path, why),
        other => other,
    })
}

/// `path` is a folder (made if missing) in which a file can be created.
pub(super) fn check_folder(what: &str, path: &Path) -> Result<(), Error> {
    if path.exists() && !path.is_dir() {
        return Err(invalid(what, path, "is a file, not a folder".into()));
    }
    std::fs::create_dir_all(path)
        .map_err(|e| invalid(what, path, format!("cannot create the folder: {e}")))?;
    let probe = path.join(format!(".volley-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(invalid(what, path, format!("cannot write there: {e}"))),
    }
}

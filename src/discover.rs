//! Which files to check: the Python files under the given paths, skipping what `.gitignore`
//! (and `.ignore`) exclude, in a stable order.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;

pub struct Discovered {
    pub files: Vec<PathBuf>,
    /// Paths that could not be walked, with the reason.
    pub errors: Vec<(PathBuf, String)>,
}

pub fn is_python(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "py" || ext == "pyi")
}

pub fn discover(paths: &[PathBuf]) -> Discovered {
    let mut found = Discovered { files: Vec::new(), errors: Vec::new() };
    for path in paths {
        if !path.exists() {
            found.errors.push((path.clone(), "no such file or directory".to_string()));
            continue;
        }
        // A file named explicitly is checked whatever its name or ignore status.
        if path.is_file() {
            found.files.push(path.clone());
            continue;
        }
        for entry in WalkBuilder::new(path).require_git(false).build() {
            match entry {
                Ok(entry) if entry.file_type().is_some_and(|t| t.is_file()) && is_python(entry.path()) => {
                    found.files.push(clean(entry.path()));
                }
                Ok(_) => {}
                Err(err) => found.errors.push((path.clone(), err.to_string())),
            }
        }
    }
    found.files.sort();
    found.files.dedup();
    found
}

/// `./models/x.py` -> `models/x.py`.
fn clean(path: &Path) -> PathBuf {
    path.strip_prefix(".").map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf())
}

//! Renderers: they format what the run found and never analyse anything themselves.

pub mod text;

use std::path::Path;

/// How a path is shown: relative to the current directory when it lies under it, `/`-separated.
pub fn display_path(path: &Path) -> String {
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    let shown = relative.to_string_lossy().replace('\\', "/");
    shown.strip_prefix("./").map(str::to_string).unwrap_or(shown)
}

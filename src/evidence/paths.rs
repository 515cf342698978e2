//! Which checked file a path in a log names. The run may have happened on another machine or in
//! a container (`/workspace/proj/models/net.py` for the `models/net.py` checked here), so a path
//! is matched by its longest run of trailing components that one checked file shares; a guard's
//! comment cuts its path short at the front (`ork/proj/models/net.py`), which only shortens the
//! run. A tie between files is no match: reporting an event at the wrong file is worse than
//! saying it was not found.

use rustc_hash::FxHashMap as HashMap;
use std::path::{Path, PathBuf};

pub struct PathMap {
    /// Each checked file's components, last first (file name first), lowercased on Windows only.
    files: Vec<Vec<String>>,
    /// File name -> indices into `files`.
    by_name: HashMap<String, Vec<usize>>,
}

impl PathMap {
    pub fn new(checked: &[PathBuf]) -> Self {
        let files: Vec<Vec<String>> = checked.iter().map(|path| components(&absolute(path))).collect();
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::default();
        for (index, parts) in files.iter().enumerate() {
            if let Some(name) = parts.first() {
                by_name.entry(name.clone()).or_default().push(index);
            }
        }
        Self { files, by_name }
    }

    /// The index (into the checked files) of the file a logged path names, if one does.
    pub fn resolve(&self, logged: &str) -> Option<usize> {
        let logged_parts: Vec<String> =
            logged.split(['/', '\\']).rev().filter(|part| !part.is_empty()).map(String::from).collect();
        let candidates = self.by_name.get(logged_parts.first()?)?;
        let shared = |index: &usize| {
            self.files[*index].iter().zip(&logged_parts).take_while(|(checked, logged)| checked == logged).count()
        };
        let best = candidates.iter().map(shared).max()?;
        let mut winners = candidates.iter().filter(|index| shared(index) == best);
        let winner = *winners.next()?;
        if winners.next().is_some() {
            return None;
        }
        // An installed library's file (`site-packages/torch/nn/modules/module.py`) must share
        // more than its name with a checked file to be taken for it.
        let installed = logged_parts.iter().any(|part| part == "site-packages" || part == "dist-packages");
        (!installed || best >= 2).then_some(winner)
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| std::env::current_dir().map(|cwd| cwd.join(path)).unwrap_or_else(|_| path.to_path_buf()))
}

fn components(path: &Path) -> Vec<String> {
    path.to_string_lossy()
        .split(['/', '\\'])
        .rev()
        .filter(|part| !part.is_empty() && *part != ".")
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(files: &[&str]) -> PathMap {
        PathMap::new(&files.iter().map(PathBuf::from).collect::<Vec<_>>())
    }

    #[test]
    fn a_path_from_another_machine_matches_by_its_tail() {
        let map = map(&["/home/me/proj/models/net.py", "/home/me/proj/train.py"]);
        assert_eq!(map.resolve("/workspace/proj/models/net.py"), Some(0));
        assert_eq!(map.resolve("C:\\work\\proj\\train.py"), Some(1));
        assert_eq!(map.resolve("/workspace/proj/models/other.py"), None);
    }

    #[test]
    fn a_path_cut_short_at_the_front_still_matches() {
        let map = map(&["/home/me/proj/models/net.py"]);
        assert_eq!(map.resolve("me/proj/models/net.py"), Some(0));
        assert_eq!(map.resolve("ls/net.py"), Some(0));
    }

    #[test]
    fn the_longest_shared_tail_wins_and_a_tie_is_no_match() {
        let map = map(&["/p/a/model.py", "/p/b/model.py"]);
        assert_eq!(map.resolve("/ci/a/model.py"), Some(0));
        assert_eq!(map.resolve("/ci/c/model.py"), None);
    }

    #[test]
    fn an_installed_library_file_needs_more_than_its_name() {
        let map = map(&["/p/models/module.py"]);
        assert_eq!(map.resolve("/venv/lib/python3.11/site-packages/torch/nn/modules/module.py"), None);
        assert_eq!(map.resolve("/venv/lib/python3.11/site-packages/models/module.py"), Some(0));
    }
}

//! The copy of the user's project that the fixes are applied to: every file git tracks, as it is
//! on disk now (uncommitted changes included), and every untracked file that is not ignored.
//! Ignored entries (data, checkpoints, a virtual environment) are linked, not copied, so that the
//! command finds them; `__pycache__` is left out. tcfix only reads the user's tree, but what the
//! command itself writes into an ignored folder (a checkpoint, a log) lands in the user's folder,
//! in both runs, as it would when the user runs it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use git2::{Repository, Status, StatusOptions};

/// A copy of the working tree in a temporary directory, removed when dropped unless kept.
pub struct Copy {
    /// The user's working tree (the repository's root).
    pub root: PathBuf,
    /// Where the copy of `root` lies.
    pub dir: PathBuf,
    temporary: Option<tempfile::TempDir>,
}

impl Copy {
    /// Copy the working tree of the repository holding `cwd`.
    pub fn of_working_tree(cwd: &Path) -> Result<Self> {
        let repo = Repository::discover(cwd).map_err(|_| {
            anyhow!("tcfix prove needs a git repository: it copies the files git tracks to apply the fixes there")
        })?;
        let root = repo
            .workdir()
            .map(|dir| dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()))
            .context("tcfix prove needs a repository with a working tree")?;
        let temporary =
            tempfile::Builder::new().prefix("tcfix-prove-").tempdir().context("cannot make a temporary directory")?;
        let dir = temporary.path().join(root.file_name().unwrap_or("project".as_ref()));
        std::fs::create_dir(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
        // Paths read back from the runs' traces are real paths (no symlinked `/tmp`).
        let dir = dir.canonicalize().unwrap_or(dir);
        let copy = Copy { root, dir, temporary: Some(temporary) };
        for relative in tracked_files(&repo)?.iter().chain(&untracked_files(&repo)?) {
            copy.copy_file(relative)?;
        }
        for relative in ignored_entries(&repo)? {
            copy.link(&relative)?;
        }
        Ok(copy)
    }

    /// Where a path of the user's tree lies in the copy.
    pub fn map(&self, path: &Path) -> Result<PathBuf> {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let absolute = absolute.canonicalize().unwrap_or(absolute);
        let relative = absolute
            .strip_prefix(&self.root)
            .map_err(|_| anyhow!("{}: not inside the repository at {}", path.display(), self.root.display()))?;
        Ok(self.dir.join(relative))
    }

    /// Leave the copy on disk (`--keep`); its directory is returned.
    pub fn keep(&mut self) -> PathBuf {
        if let Some(temporary) = self.temporary.take() {
            let _ = temporary.keep();
        }
        self.dir.clone()
    }

    /// The temporary directory the copy lies in (its parent), for the run's other files.
    pub fn scratch(&self) -> PathBuf {
        self.dir.parent().unwrap_or(&self.dir).to_path_buf()
    }

    fn copy_file(&self, relative: &Path) -> Result<()> {
        let from = self.root.join(relative);
        let to = self.dir.join(relative);
        let Ok(metadata) = std::fs::symlink_metadata(&from) else { return Ok(()) }; // deleted, not staged
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("{}: cannot create", parent.display()))?;
        }
        if metadata.is_symlink() {
            let target = std::fs::read_link(&from)?;
            return symlink(&target, &to);
        }
        if metadata.is_dir() {
            // A submodule: another repository, used as it is.
            return symlink(&from, &to);
        }
        std::fs::copy(&from, &to).with_context(|| format!("{}: cannot copy", from.display()))?;
        Ok(())
    }

    fn link(&self, relative: &Path) -> Result<()> {
        let to = self.dir.join(relative);
        if to.exists() || relative.components().any(|part| part.as_os_str() == "__pycache__") {
            return Ok(());
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("{}: cannot create", parent.display()))?;
        }
        symlink(&self.root.join(relative), &to)
    }
}

/// The files in git's index (the working tree's version of each is copied).
fn tracked_files(repo: &Repository) -> Result<Vec<PathBuf>> {
    let index = repo.index().context("cannot read git's index")?;
    Ok(index.iter().map(|entry| PathBuf::from(String::from_utf8_lossy(&entry.path).into_owned())).collect())
}

fn untracked_files(repo: &Repository) -> Result<Vec<PathBuf>> {
    statuses(repo, false, Status::WT_NEW)
}

/// Ignored files and directories, a directory as one entry.
fn ignored_entries(repo: &Repository) -> Result<Vec<PathBuf>> {
    statuses(repo, true, Status::IGNORED)
}

fn statuses(repo: &Repository, ignored: bool, wanted: Status) -> Result<Vec<PathBuf>> {
    let mut options = StatusOptions::new();
    options.include_untracked(!ignored).recurse_untracked_dirs(true).include_ignored(ignored);
    options.recurse_ignored_dirs(false).exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut options)).context("git status failed")?;
    let paths = statuses
        .iter()
        .filter(|entry| entry.status().intersects(wanted))
        .filter_map(|entry| entry.path().map(|path| PathBuf::from(path.trim_end_matches('/'))))
        .collect();
    Ok(paths)
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> Result<()> {
    std::os::unix::fs::symlink(target, link).with_context(|| format!("{}: cannot link", link.display()))
}

#[cfg(not(unix))]
fn symlink(target: &Path, link: &Path) -> Result<()> {
    anyhow::bail!("{}: cannot link {} on this system", link.display(), target.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let done = std::process::Command::new("git").args(args).current_dir(dir).output().unwrap();
        assert!(done.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&done.stderr));
    }

    #[test]
    fn the_copy_holds_uncommitted_and_untracked_files_and_links_ignored_ones() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        git(root, &["init", "-q"]);
        std::fs::write(root.join(".gitignore"), "data/\n").unwrap();
        std::fs::write(root.join("model.py"), "x = 1\n").unwrap();
        git(root, &["add", "."]);
        git(root, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        std::fs::write(root.join("model.py"), "x = 2\n").unwrap();
        std::fs::write(root.join("new.py"), "y = 1\n").unwrap();
        std::fs::create_dir(root.join("data")).unwrap();
        std::fs::write(root.join("data/big.bin"), "weights").unwrap();
        let copy = Copy::of_working_tree(root).unwrap();
        assert_eq!(std::fs::read_to_string(copy.dir.join("model.py")).unwrap(), "x = 2\n");
        assert_eq!(std::fs::read_to_string(copy.dir.join("new.py")).unwrap(), "y = 1\n");
        assert!(std::fs::symlink_metadata(copy.dir.join("data")).unwrap().is_symlink());
        assert_eq!(copy.map(&root.join("model.py")).unwrap(), copy.dir.join("model.py"));
        let dir = copy.dir.clone();
        drop(copy);
        assert!(!dir.exists(), "the copy is removed unless kept");
    }
}

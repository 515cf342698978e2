//! `--diff-base REV`: the lines a change touched, so that a review reports (and fixes, and
//! diffs) only the findings on them. The change is everything between the merge base of `REV`
//! and `HEAD` and `HEAD` itself, as a pull request shows it; with `--include-uncommitted`, the
//! working tree's staged, unstaged and untracked changes too. The whole project is still analysed
//! (a base class or a helper in an unchanged file decides what a changed line does); only what
//! is reported is narrowed.
//!
//! Lines are counted in the working tree's files. Without `--include-uncommitted`, a line the
//! commits added and the working tree then edited is not counted (it is no longer the committed
//! line), and the lines of untracked files are not counted. A line only deleted leaves nothing to
//! report on; a finding is reported when any line of its code was added or modified.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use git2::{Diff, DiffFindOptions, DiffOptions, ErrorCode, Oid, Repository, Tree};

use crate::discover::is_python;

/// The changed lines of each changed Python file.
pub struct ChangedLines {
    /// `origin/main` (merge base `1a2b3c4d5e6f`): what the lines are changed since, for reports.
    pub since: String,
    /// By canonical path.
    files: HashMap<PathBuf, ChangedFile>,
}

struct ChangedFile {
    /// The file's text in the working tree when the lines were counted: a text that differs from
    /// it (a fix applied) has its lines carried over by a line diff.
    text: String,
    /// One-based line numbers in `text`.
    lines: HashSet<usize>,
}

impl ChangedLines {
    /// The lines changed between the merge base of `rev` and `HEAD`, in the repository holding
    /// `cwd`; with `uncommitted`, up to the working tree.
    pub fn since(cwd: &Path, rev: &str, uncommitted: bool) -> Result<Self> {
        let repo = Repository::discover(cwd)
            .map_err(|_| anyhow!("--diff-base needs a git repository: {} is not inside one", cwd.display()))?;
        let workdir = repo
            .workdir()
            .map(crate::discover::canonical)
            .context("--diff-base needs a repository with a working tree (this one is bare)")?;
        let base = merge_base(&repo, rev)?;
        let base_tree = repo.find_commit(base)?.tree()?;
        let head_tree = repo.head()?.peel_to_commit()?.tree()?;
        let since = format!("`{rev}` (merge base {})", &base.to_string()[..12]);
        let mut files = HashMap::default();
        if uncommitted {
            let diff = repo.diff_tree_to_workdir_with_index(Some(&base_tree), Some(&mut options(true)))?;
            for (path, lines) in added_lines(diff)? {
                let file = workdir.join(&path);
                if let Ok(text) = std::fs::read_to_string(&file) {
                    files.insert(file, ChangedFile { text, lines });
                }
            }
        } else {
            let diff = repo.diff_tree_to_tree(Some(&base_tree), Some(&head_tree), Some(&mut options(false)))?;
            for (path, committed) in added_lines(diff)? {
                let file = workdir.join(&path);
                // Deleted or unreadable in the working tree: nothing there to report on.
                let Ok(text) = std::fs::read_to_string(&file) else { continue };
                let lines = match blob_text(&repo, &head_tree, &path) {
                    Some(head) if head != text => carried(&head, &text)
                        .iter()
                        .enumerate()
                        .filter_map(|(line, from)| from.filter(|from| committed.contains(from)).map(|_| line + 1))
                        .collect(),
                    _ => committed,
                };
                files.insert(file, ChangedFile { text, lines });
            }
        }
        Ok(Self { since, files })
    }

    /// The changed lines of `file` (canonical) as they lie in `text`; `None` when the change did
    /// not touch the file.
    pub fn in_text(&self, file: &Path, text: &str) -> Option<HashSet<usize>> {
        let changed = self.files.get(file)?;
        if changed.text == text {
            return Some(changed.lines.clone());
        }
        // A line a fix wrote (new in `text`) belongs to a finding the change made: fixes are
        // only applied to those.
        let lines = carried(&changed.text, text)
            .iter()
            .enumerate()
            .filter(|(_, from)| from.is_none_or(|from| changed.lines.contains(&from)))
            .map(|(line, _)| line + 1)
            .collect();
        Some(lines)
    }

    /// How many files the change touched (Python files still in the working tree).
    pub fn files(&self) -> usize {
        self.files.len()
    }
}

/// The merge base of `rev` and `HEAD`, with errors that say what to do.
fn merge_base(repo: &Repository, rev: &str) -> Result<Oid> {
    let base = repo.revparse_single(rev).and_then(|object| object.peel_to_commit()).map_err(|_| {
        // A CI checkout has the base branch only as a remote-tracking branch.
        let remote = format!("origin/{rev}");
        if repo.revparse_single(&remote).is_ok() {
            anyhow!(
                "--diff-base: `{rev}` is not a branch of this checkout, but `{remote}` is: use `--diff-base {remote}`"
            )
        } else {
            anyhow!(
                "--diff-base: `{rev}` is not a commit of this repository; fetch it first (`git fetch origin \
                 <branch>`; in GitHub Actions, check out with `fetch-depth: 0`)"
            )
        }
    })?;
    let head = repo
        .head()
        .and_then(|head| head.peel_to_commit())
        .map_err(|_| anyhow!("--diff-base: the repository has no commits yet"))?;
    match repo.merge_base(base.id(), head.id()) {
        Ok(oid) => Ok(oid),
        Err(err) if err.code() == ErrorCode::NotFound && repo.is_shallow() => bail!(
            "--diff-base: `{rev}` and HEAD have no common commit in this shallow clone: fetch the history that \
             joins them (`git fetch --unshallow`, or `git fetch --deepen=100` until it is there; in GitHub \
             Actions, check out with `fetch-depth: 0`)"
        ),
        Err(err) if err.code() == ErrorCode::NotFound => {
            bail!("--diff-base: `{rev}` and HEAD have no common history: there is no change to review between them")
        }
        Err(err) => Err(err).context("--diff-base: cannot find the merge base"),
    }
}

/// A diff with no context lines (only what changed), Python files only.
fn options(uncommitted: bool) -> DiffOptions {
    let mut options = DiffOptions::new();
    options.context_lines(0).ignore_submodules(true);
    if uncommitted {
        options.include_untracked(true).recurse_untracked_dirs(true).show_untracked_content(true);
    }
    options
}

/// The added lines (one-based, in the new side) of each Python file the diff changes; a renamed
/// file counts only its edited lines.
fn added_lines(mut diff: Diff) -> Result<HashMap<PathBuf, HashSet<usize>>> {
    diff.find_similar(Some(DiffFindOptions::new().renames(true).for_untracked(true)))?;
    let mut added: HashMap<PathBuf, HashSet<usize>> = HashMap::default();
    diff.foreach(
        &mut |_, _| true,
        None,
        None,
        Some(&mut |delta, _, line| {
            let path = delta.new_file().path().filter(|path| is_python(path));
            if let (Some(path), '+', Some(number)) = (path, line.origin(), line.new_lineno()) {
                added.entry(path.to_path_buf()).or_default().insert(number as usize);
            }
            true
        }),
    )?;
    Ok(added)
}

fn blob_text(repo: &Repository, tree: &Tree, path: &Path) -> Option<String> {
    let entry = tree.get_path(path).ok()?;
    let blob = repo.find_blob(entry.id()).ok()?;
    String::from_utf8(blob.content().to_vec()).ok()
}

/// For each line of `new`, the one-based line of `old` it is, unchanged; `None` for a line that
/// is new or edited. Line endings are not compared: a checkout with `core.autocrlf` (Git for
/// Windows' default) or an `eol=crlf` attribute has CRLF where the committed blob has LF, and
/// every line would otherwise count as edited, leaving nothing changed to report.
fn carried(old: &str, new: &str) -> Vec<Option<usize>> {
    let (old, new) = (old.replace("\r\n", "\n"), new.replace("\r\n", "\n"));
    let diff = similar::TextDiff::from_lines(&old, &new);
    let mut lines = Vec::new();
    for op in diff.ops() {
        match *op {
            similar::DiffOp::Equal { old_index, len, .. } => lines.extend((0..len).map(|i| Some(old_index + i + 1))),
            similar::DiffOp::Insert { new_len, .. } | similar::DiffOp::Replace { new_len, .. } => {
                lines.extend(std::iter::repeat_n(None, new_len))
            }
            similar::DiffOp::Delete { .. } => {}
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_carried_through_edits() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nnew\nb\nC\nd\n";
        assert_eq!(carried(old, new), [Some(1), None, Some(2), None, Some(4)]);
        assert_eq!(carried(old, old), [Some(1), Some(2), Some(3), Some(4)]);
    }

    #[test]
    fn line_endings_do_not_make_a_line_edited() {
        let committed = "a\nb\nc\n";
        assert_eq!(carried(committed, "a\r\nb\r\nc\r\n"), [Some(1), Some(2), Some(3)]);
        assert_eq!(carried(committed, "a\r\nB\r\nc\r\n"), [Some(1), None, Some(3)]);
    }
}

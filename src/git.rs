//! Git, through git2: never overwrite work that git could not give back (files with staged,
//! unstaged or untracked changes), and worktree mode — fixes applied and committed on a new
//! branch in a linked worktree, the user's own tree untouched.

use rustc_hash::FxHashSet as HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use git2::{BranchType, Repository, Signature, StatusOptions, WorktreeAddOptions};

/// The files among `paths` that git could not give back if tcfix overwrote them.
#[derive(Debug, Default)]
pub struct Unprotected {
    /// In a repository, with staged, unstaged or untracked changes.
    pub dirty: Vec<PathBuf>,
    /// In no repository at all: nothing holds their old text.
    pub outside_git: Vec<PathBuf>,
}

/// Sorts `paths` by what git holds of them, in whichever repository each lies.
pub fn unprotected(paths: &[PathBuf]) -> Result<Unprotected> {
    let mut changed_by_repository: Vec<(PathBuf, HashSet<PathBuf>)> = Vec::new();
    let mut found = Unprotected::default();
    for path in paths {
        let file = canonical(&absolute(path));
        let known = changed_by_repository.iter().find(|(workdir, _)| file.starts_with(workdir));
        let changed = match known {
            Some((_, changed)) => changed,
            None => {
                let Some(repository) = changed_files(&file)? else {
                    found.outside_git.push(path.clone());
                    continue;
                };
                changed_by_repository.push(repository);
                &changed_by_repository.last().expect("just pushed").1
            }
        };
        if changed.contains(&file) {
            found.dirty.push(path.clone());
        }
    }
    Ok(found)
}

/// The working directory of the repository holding `file`, and the files there with staged,
/// unstaged or untracked changes. `None` outside any repository.
fn changed_files(file: &Path) -> Result<Option<(PathBuf, HashSet<PathBuf>)>> {
    let Ok(repo) = Repository::discover(file.parent().unwrap_or(Path::new("."))) else { return Ok(None) };
    let Some(workdir) = repo.workdir().map(canonical) else { return Ok(None) };
    let mut options = StatusOptions::new();
    options.include_untracked(true).recurse_untracked_dirs(true).include_ignored(false);
    let statuses = repo.statuses(Some(&mut options)).context("git status failed")?;
    let changed = statuses
        .iter()
        .filter(|entry| !entry.status().is_empty() && !entry.status().is_ignored())
        .filter_map(|entry| entry.path().map(|p| workdir.join(p)))
        .collect();
    Ok(Some((workdir, changed)))
}

/// The user's git identity, as `git commit` and `git format-patch` take it:
/// `GIT_AUTHOR_NAME` / `GIT_AUTHOR_EMAIL`, else `user.name` / `user.email` from the configuration
/// of the repository holding `dir` (which includes the global and system ones), else from the
/// global configuration alone. `None` when git would ask "Please tell me who you are".
pub fn identity(dir: &Path) -> Option<(String, String)> {
    let config = Repository::discover(dir)
        .and_then(|repo| repo.config())
        .or_else(|_| git2::Config::open_default())
        .and_then(|mut config| config.snapshot())
        .ok();
    let get = |variable: &str, key: &str| {
        std::env::var(variable)
            .ok()
            .or_else(|| config.as_ref()?.get_string(key).ok())
            .map(|value| value.trim().to_string())
            .filter(|value| !value.is_empty())
    };
    Some((get("GIT_AUTHOR_NAME", "user.name")?, get("GIT_AUTHOR_EMAIL", "user.email")?))
}

/// A linked worktree on a new branch, made from the current HEAD.
pub struct Worktree {
    pub dir: PathBuf,
    pub branch: String,
    /// The main working tree the user's paths are relative to.
    workdir: PathBuf,
}

impl Worktree {
    pub fn create(cwd: &Path, dir: &Path, branch: Option<&str>) -> Result<Self> {
        let repo = Repository::discover(cwd).map_err(|_| anyhow!("--worktree needs a git repository"))?;
        let workdir = repo.workdir().map(canonical).context("--worktree needs a repository with a working tree")?;
        let head = repo
            .head()
            .and_then(|head| head.peel_to_commit())
            .map_err(|_| anyhow!("the repository has no commits yet: commit once, then tcfix can branch from HEAD"))?;
        if dir.exists() {
            bail!("{}: already exists; name a new directory for the worktree", dir.display());
        }
        let branch = branch.map_or_else(default_branch_name, str::to_string);
        if repo.find_branch(&branch, BranchType::Local).is_ok() {
            bail!("branch `{branch}` already exists; choose another with --branch");
        }
        let reference =
            repo.branch(&branch, &head, false).with_context(|| format!("cannot create branch `{branch}`"))?;
        let name = worktree_name(&repo, dir);
        let mut options = WorktreeAddOptions::new();
        options.reference(Some(reference.get()));
        repo.worktree(&name, dir, Some(&options)).context("cannot create the worktree")?;
        Ok(Self { dir: canonical(dir), branch, workdir })
    }

    /// Where a path of the user's tree lies in the worktree.
    pub fn map(&self, path: &Path) -> Result<PathBuf> {
        let absolute = canonical(&absolute(path));
        let relative = absolute
            .strip_prefix(&self.workdir)
            .map_err(|_| anyhow!("{}: not inside the repository at {}", path.display(), self.workdir.display()))?;
        Ok(self.dir.join(relative))
    }

    /// Commit `changed` (worktree paths) on the worktree's branch; the new commit's id.
    pub fn commit(&self, changed: &[PathBuf], message: &str) -> Result<String> {
        let commit = || -> std::result::Result<String, git2::Error> {
            let repo = Repository::open(&self.dir)?;
            let mut index = repo.index()?;
            for path in changed {
                let relative = path.strip_prefix(&self.dir).unwrap_or(path);
                index.add_path(relative)?;
            }
            index.write()?;
            let tree = repo.find_tree(index.write_tree()?)?;
            let signature = match identity(&self.dir) {
                Some((name, email)) => Signature::now(&name, &email)?,
                None => Signature::now("tcfix", "tcfix@localhost")?,
            };
            let parent = repo.head()?.peel_to_commit()?;
            let id = repo.commit(Some("HEAD"), &signature, &signature, message, &tree, &[&parent])?;
            Ok(id.to_string())
        };
        commit().context("cannot commit in the worktree")
    }
}

/// `tcfix/fixes-20261121-201500`: unique enough, and says where it came from.
fn default_branch_name() -> String {
    format!("tcfix/fixes-{}", crate::patch::utc_timestamp().compact())
}

/// Git's name for the worktree (its admin directory): the directory's name, made unique.
fn worktree_name(repo: &Repository, dir: &Path) -> String {
    let base: String = dir
        .file_name()
        .map(|name| {
            name.to_string_lossy().chars().map(|c| if c.is_alphanumeric() || c == '-' { c } else { '-' }).collect()
        })
        .unwrap_or_else(|| "tcfix".to_string());
    let taken: HashSet<String> =
        repo.worktrees().map(|names| names.iter().flatten().map(str::to_string).collect()).unwrap_or_default();
    std::iter::once(base.clone())
        .chain((2..).map(|n| format!("{base}-{n}")))
        .find(|name| !taken.contains(name))
        .expect("some name is free")
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map(|cwd| cwd.join(path)).unwrap_or_else(|_| path.to_path_buf())
    }
}

/// Symlinks resolved where the path exists (`/tmp` vs `/private/tmp`), as git reports paths.
fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

//! Writing fixed files: all or nothing. The new text goes to a temporary file beside the
//! original, takes its permissions (and, where allowed, its owner), is flushed to disk, and
//! replaces the original by rename, so an interrupted run leaves each file wholly old or wholly
//! new.
//!
//! A symbolic link is written through: its target gets the new text and the link stays a link.
//! A file with other hard links is written as a new file under this name (a rename cannot do
//! otherwise); the other names keep the old text.
//!
//! What an interruption can leave: a run killed (SIGKILL, or Ctrl-C, which tcfix does not
//! trap) while a temporary file exists leaves that file behind, a hidden
//! `.tcfix-<name>.<random>.tmp` beside `<name>` (never a `.py`, so never checked). The next time
//! `<name>` is fixed, leftovers of it older than [`LEFTOVER_AGE`] are removed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A temporary file this old cannot be one that a running tcfix is still writing (that takes
/// milliseconds): it is a leftover of an interrupted run.
pub const LEFTOVER_AGE: Duration = Duration::from_secs(10);

const PREFIX: &str = ".tcfix-";
const SUFFIX: &str = ".tmp";

pub fn write_atomically(path: &Path, contents: &str) -> std::io::Result<()> {
    let target = std::fs::canonicalize(path)?;
    let metadata = std::fs::metadata(&target)?;
    if !metadata.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if metadata.permissions().readonly() {
        return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, "the file is read-only"));
    }
    let directory = target.parent().unwrap_or(Path::new("/"));
    let name = target.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    remove_leftovers(directory, &name);
    let mut temporary = tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{name}."))
        .suffix(SUFFIX)
        .tempfile_in(directory)
        .map_err(|err| context(err, &format!("cannot create a temporary file in {}", directory.display())))?;
    temporary.write_all(contents.as_bytes())?;
    keep_owner(temporary.as_file(), &metadata);
    temporary.as_file().set_permissions(metadata.permissions())?;
    temporary.as_file().sync_all()?;
    temporary.persist(&target).map_err(|err| context(err.error, "cannot replace the file"))?;
    Ok(())
}

/// The temporary files an interrupted run left for `name`.
pub fn leftovers(directory: &Path, name: &str) -> Vec<PathBuf> {
    let start = format!("{PREFIX}{name}.");
    let Ok(entries) = std::fs::read_dir(directory) else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            let file = entry.file_name();
            let file = file.to_string_lossy();
            file.starts_with(&start) && file.ends_with(SUFFIX) && file.len() > start.len() + SUFFIX.len()
        })
        .map(|entry| entry.path())
        .collect()
}

fn remove_leftovers(directory: &Path, name: &str) {
    for leftover in leftovers(directory, name) {
        let stale = std::fs::symlink_metadata(&leftover)
            .and_then(|metadata| metadata.modified())
            .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age >= LEFTOVER_AGE));
        if stale {
            let _ = std::fs::remove_file(&leftover);
        }
    }
}

/// The new file is created by whoever runs tcfix; give it the original's owner and group when
/// the system allows (root may; others can only keep their own), so that fixing a file does not
/// take it from its owner.
#[cfg(unix)]
fn keep_owner(file: &std::fs::File, original: &std::fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    let Ok(current) = file.metadata() else { return };
    if (current.uid(), current.gid()) != (original.uid(), original.gid()) {
        let _ = std::os::unix::fs::fchown(file, Some(original.uid()), Some(original.gid()));
    }
}

#[cfg(not(unix))]
fn keep_owner(_file: &std::fs::File, _original: &std::fs::Metadata) {}

fn context(err: std::io::Error, what: &str) -> std::io::Error {
    let reason = match err.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::StorageFull => "no space left on the device".to_string(),
        std::io::ErrorKind::ReadOnlyFilesystem => "the file system is read-only".to_string(),
        _ => err.to_string(),
    };
    std::io::Error::new(err.kind(), format!("{what}: {reason}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_through_a_symbolic_link_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.py");
        std::fs::write(&target, "old\n").unwrap();
        #[cfg(unix)]
        {
            let link = dir.path().join("link.py");
            std::os::unix::fs::symlink("real.py", &link).unwrap();
            write_atomically(&link, "new\n").unwrap();
            assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
            assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
        }
    }

    #[test]
    fn stale_leftovers_of_the_file_are_removed_and_fresh_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("model.py");
        std::fs::write(&file, "old\n").unwrap();
        let stale = dir.path().join(".tcfix-model.py.abc123.tmp");
        let fresh = dir.path().join(".tcfix-model.py.def456.tmp");
        let other = dir.path().join(".tcfix-other.py.abc123.tmp");
        for leftover in [&stale, &fresh, &other] {
            std::fs::write(leftover, "partial").unwrap();
        }
        let long_ago = std::time::SystemTime::now() - 2 * LEFTOVER_AGE;
        for leftover in [&stale, &other] {
            std::fs::File::options().write(true).open(leftover).unwrap().set_modified(long_ago).unwrap();
        }
        write_atomically(&file, "new\n").unwrap();
        assert!(!stale.exists(), "a stale leftover of model.py is removed");
        assert!(fresh.exists(), "a fresh one may belong to a run in progress");
        assert!(other.exists(), "another file's leftovers wait for that file");
        assert_eq!(leftovers(dir.path(), "model.py"), vec![fresh]);
    }

    #[test]
    fn a_read_only_file_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("model.py");
        std::fs::write(&file, "old\n").unwrap();
        let mut permissions = std::fs::metadata(&file).unwrap().permissions();
        permissions.set_readonly(true);
        std::fs::set_permissions(&file, permissions).unwrap();
        let err = write_atomically(&file, "new\n").unwrap_err();
        assert_eq!(err.to_string(), "the file is read-only");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "old\n");
        assert!(leftovers(dir.path(), "model.py").is_empty());
    }
}

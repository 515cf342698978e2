//! Writing fixed files: all or nothing. The new text goes to a temporary file beside the
//! original, takes its permissions, and replaces it by rename, so an interrupted run leaves
//! each file wholly old or wholly new.

use std::io::Write;
use std::path::Path;

pub fn write_atomically(path: &Path, contents: &str) -> std::io::Result<()> {
    let directory = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let permissions = std::fs::metadata(path)?.permissions();
    if permissions.readonly() {
        return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, "the file is read-only"));
    }
    let mut temporary = tempfile::Builder::new().prefix(".tcfix-").tempfile_in(directory)?;
    temporary.write_all(contents.as_bytes())?;
    temporary.as_file().sync_all()?;
    temporary.as_file().set_permissions(permissions)?;
    temporary.persist(path).map_err(|err| err.error)?;
    Ok(())
}

//! Which files to check: the Python files under the given paths, skipping what `.gitignore`
//! (and `.ignore`) exclude, in a stable order.
//!
//! Only regular files are read. A directory walk does not follow symbolic links (a link may
//! lead out of the project, or in a circle); a path named on the command line is followed, and
//! a name that leads nowhere (a broken link, a link loop, a FIFO) is an error naming the reason.
//! The same file reached by two names (`a.py ./a.py`, a link and its target) is checked once.
//!
//! A code-generation source found by the walk is set aside: transformers' `modular_<name>.py` is
//! never imported; a generator writes `modeling_<name>.py` (and others) from it, with a header
//! saying "This file was automatically generated from .../modular_<name>.py". Its hazards are
//! found in the generated files, which are what runs; checking both reports each one twice. A
//! generator source named on the command line is checked.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};

pub struct Discovered {
    pub files: Vec<PathBuf>,
    /// Paths that could not be walked, with the reason.
    pub errors: Vec<(PathBuf, String)>,
    /// Code-generation sources the walk found and set aside (see the module's doc).
    pub generator_sources: Vec<PathBuf>,
}

pub fn is_python(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "py" || ext == "pyi")
}

/// A path made absolute and with its links resolved where it exists: how the scope's files are
/// keyed, whichever way the command line named them.
pub fn canonical(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map(|cwd| cwd.join(path)).unwrap_or_else(|_| path.to_path_buf())
    };
    absolute.canonicalize().unwrap_or(absolute)
}

/// A test file, named the way pytest collects them (`test_*.py`, `*_test.py`), or any Python file
/// under a `tests` directory (helpers and `conftest.py` that only tests import).
pub fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
    let pytest_name = name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"));
    let under_tests = path
        .parent()
        .is_some_and(|dir| dir.components().any(|part| matches!(part.as_os_str().to_str(), Some("tests"))));
    pytest_name || (under_tests && is_python(path))
}

pub fn discover(paths: &[PathBuf]) -> Discovered {
    let mut found = Discovered { files: Vec::new(), errors: Vec::new(), generator_sources: Vec::new() };
    for path in paths {
        let metadata = match std::fs::metadata(path) {
            Ok(metadata) => metadata,
            Err(err) => {
                found.errors.push((path.clone(), unreachable_reason(path, &err)));
                continue;
            }
        };
        // A file named explicitly is checked whatever its name or ignore status.
        if metadata.is_file() {
            found.files.push(path.clone());
            continue;
        }
        if !metadata.is_dir() {
            found.errors.push((path.clone(), format!("not a regular file or directory ({})", kind(&metadata))));
            continue;
        }
        walk(path, &mut found);
    }
    found.files.sort();
    found.files.dedup();
    let mut seen = HashSet::default();
    found.files.retain(|file| seen.insert(std::fs::canonicalize(file).unwrap_or_else(|_| file.clone())));
    let generated_from = generator_sources(&found.files, read_head);
    let (sources, files) =
        found.files.into_iter().partition(|file| generated_from.contains(file) && !paths.contains(file));
    found.generator_sources = sources;
    found.files = files;
    found
}

/// How much of a file's start is read for the generator's header (transformers' is 7 lines).
const HEADER_BYTES: u64 = 2048;

fn read_head(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path).ok()?.take(HEADER_BYTES).read_to_end(&mut head).ok()?;
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// The `modular_<name>.py` files among `files` that a sibling of theirs (same directory, also among
/// `files`) says it was generated from, in a comment near its top.
pub fn generator_sources(files: &[PathBuf], head: impl Fn(&Path) -> Option<String>) -> HashSet<PathBuf> {
    let mut sources = HashSet::default();
    let is_source = |name: &str| name.starts_with("modular_") && name.ends_with(".py");
    let names = |file: &PathBuf| file.file_name().and_then(|n| n.to_str()).map(str::to_string);
    // The files of each directory that holds a generator source, gathered once.
    let mut directories: HashMap<Option<&Path>, Vec<&PathBuf>> = HashMap::default();
    for file in files {
        if names(file).is_some_and(|name| is_source(&name)) {
            directories.entry(file.parent()).or_default();
        }
    }
    for file in files {
        if let Some(siblings) = directories.get_mut(&file.parent()) {
            siblings.push(file);
        }
    }
    for source in files {
        let Some(name) = source.file_name().and_then(|n| n.to_str()) else { continue };
        if !is_source(name) {
            continue;
        }
        let siblings = directories[&source.parent()].iter().filter(|file| **file != source);
        let says_generated = |text: String| {
            text.lines().take(20).any(|line| {
                line.trim_start().starts_with('#') && line.contains("generated from") && line.contains(name)
            })
        };
        if siblings.filter_map(|sibling| head(sibling)).any(says_generated) {
            sources.insert(source.clone());
        }
    }
    sources
}

/// The Python files under a directory, walked in parallel (the order is restored by sorting).
fn walk(directory: &Path, found: &mut Discovered) {
    let walked = Mutex::new(Discovered { files: Vec::new(), errors: Vec::new(), generator_sources: Vec::new() });
    WalkBuilder::new(directory).require_git(false).build_parallel().run(|| {
        Box::new(|entry| {
            let mut walked = walked.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            match entry {
                Ok(entry) if entry.file_type().is_some_and(|t| t.is_file()) && is_python(entry.path()) => {
                    walked.files.push(clean(entry.path()));
                }
                Ok(_) => {}
                Err(err) => walked.errors.push(walk_error(directory, &err)),
            }
            WalkState::Continue
        })
    });
    let mut walked = walked.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    walked.errors.sort();
    found.files.append(&mut walked.files);
    found.errors.append(&mut walked.errors);
}

/// Why a path named on the command line cannot be opened.
fn unreachable_reason(path: &Path, err: &std::io::Error) -> String {
    if let Ok(target) = std::fs::read_link(path) {
        return match err.kind() {
            std::io::ErrorKind::NotFound => {
                format!("a broken symbolic link (to {}, which does not exist)", target.display())
            }
            _ => format!("a symbolic link that cannot be followed: {}", os_reason(err)),
        };
    }
    match err.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => os_reason(err),
    }
}

/// An I/O error's reason without the `(os error N)` suffix, which says nothing to a user.
fn os_reason(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_lowercase(),
        None => text,
    }
}

/// What a path that is neither a file nor a directory is.
fn kind(metadata: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let file_type = metadata.file_type();
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
    }
    let _ = metadata;
    "a special file"
}

/// A walk error, named by the path it is about (not the root the walk started from).
fn walk_error(root: &Path, err: &ignore::Error) -> (PathBuf, String) {
    let mut path = None;
    let mut inner = err;
    loop {
        match inner {
            ignore::Error::WithPath { path: at, err } => {
                path = Some(at.clone());
                inner = err;
            }
            ignore::Error::WithDepth { err, .. } => inner = err,
            ignore::Error::Io(io) => {
                let reason = match io.kind() {
                    std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
                    _ => os_reason(io),
                };
                return (path.map_or_else(|| root.to_path_buf(), |p| clean(&p)), reason);
            }
            other => return (path.map_or_else(|| root.to_path_buf(), |p| clean(&p)), other.to_string()),
        }
    }
}

/// `./models/x.py` -> `models/x.py`.
fn clean(path: &Path) -> PathBuf {
    path.strip_prefix(".").map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `modular_llama.py` is a generator source when a sibling names it in its header; the name
    /// must match exactly (`modular_llama.py` is not `modular_llama4.py`'s source).
    #[test]
    fn generator_sources_are_found_by_their_generated_siblings_header() {
        let files: Vec<PathBuf> = [
            "models/llama/modular_llama.py",
            "models/llama/modeling_llama.py",
            "models/llama4/modular_llama4.py",
            "models/llama4/modeling_llama4.py",
            "models/bert/modular_bert.py",
            "models/bert/modeling_bert.py",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let head = |path: &Path| -> Option<String> {
            Some(match path.to_str()? {
                "models/llama/modeling_llama.py" => {
                    "#  ~~~\n#  This file was automatically generated from src/models/llama/modular_llama.py.\n"
                        .to_string()
                }
                // Names another model's source: llama4's own modular file is not its source.
                "models/llama4/modeling_llama4.py" => {
                    "# This file was automatically generated from src/models/llama/modular_llama.py.\n".to_string()
                }
                // Mentions its modular file in code, not in a header comment.
                "models/bert/modeling_bert.py" => "x = 'generated from modular_bert.py'\n".to_string(),
                _ => String::new(),
            })
        };
        let sources = generator_sources(&files, head);
        assert_eq!(sources, HashSet::from_iter([PathBuf::from("models/llama/modular_llama.py")]));
    }

    #[test]
    fn test_files_are_named_as_pytest_collects_them() {
        for test in ["test_attention.py", "pkg/attention_test.py", "tests/helpers.py", "tests/models/conftest.py"] {
            assert!(is_test_file(Path::new(test)), "{test}");
        }
        for not_test in ["attention.py", "testing_utils.py", "contest.py", "tests.py", "latest_test/model.py"] {
            assert!(!is_test_file(Path::new(not_test)), "{not_test}");
        }
    }
}

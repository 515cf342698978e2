//! The warm run's cache (`.tcfix_cache/`): a second run gives the same findings, byte for byte,
//! without analysing anything again; a change in one file re-checks the files whose project
//! facts it changes; a corrupt cache is ignored with a warning; `--no-cache` and `cache = false`
//! turn it off. Over a tree whose files are all as the last run saw them (by size and time of
//! change), the stored findings are used without reading the files that have none.

use std::fs;
use std::path::Path;
use std::process::Command;

use tempfile::TempDir;

/// A project made of `files` (path, text) in a temporary directory.
fn project(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        write(dir.path(), name, text);
    }
    dir
}

fn write(root: &Path, name: &str, text: &str) {
    let path = root.join(name);
    fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    fs::write(path, text).expect("write");
}

/// `tcfix --isolated --output-format json pkg` with `args`: (stdout, stderr).
fn tcfix(root: &Path, args: &[&str]) -> (String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_tcfix"))
        .args(["--isolated", "--output-format", "json"])
        .args(args)
        .arg("pkg")
        .current_dir(root)
        .output()
        .expect("tcfix runs");
    assert!(output.status.code().is_some_and(|code| code < 2), "tcfix failed: {output:?}");
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// The one cache file of a run (named by the settings' hash), beside its summaries file.
fn cache_file(root: &Path) -> std::path::PathBuf {
    let files: Vec<_> = fs::read_dir(root.join(".tcfix_cache"))
        .expect("the cache directory")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "json"))
        .filter(|path| !path.to_string_lossy().ends_with(".summaries.json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

const BASE: &str = "from torch import nn


class Base(nn.Module):
    pass
";

const PLAIN_BASE: &str = "class Base:
    pass
";

/// Its forward is a module's forward only while `Base` is an `nn.Module`.
const CHILD: &str = "from .base import Base


class Child(Base):
    def forward(self, x):
        print(x)
        return x
";

const OTHER: &str = "import torch
from torch import nn


class Other(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x.item()
        return x
";

/// A config default that JSON reads back exactly only with serde_json's `float_roundtrip`: read
/// back a digit short, it changed the facts of every file that sees it, and the warm run checked
/// them again.
const CONFIG: &str = "class ClipConfig:
    def __init__(self, threshold=22.627416997969522, use_clip=False):
        self.threshold = threshold
        self.use_clip = use_clip
";

fn three_files() -> TempDir {
    project(&[
        ("pkg/__init__.py", ""),
        ("pkg/base.py", BASE),
        ("pkg/child.py", CHILD),
        ("pkg/other.py", OTHER),
        ("pkg/config.py", CONFIG),
    ])
}

#[test]
fn a_second_run_gives_the_same_json_byte_for_byte_from_the_cache() {
    let dir = three_files();
    let (uncached, _) = tcfix(dir.path(), &["--no-cache"]);
    assert!(!dir.path().join(".tcfix_cache").exists(), "--no-cache writes no cache");
    let (cold, cold_err) = tcfix(dir.path(), &[]);
    let (warm, warm_err) = tcfix(dir.path(), &[]);
    assert!(uncached.contains("TCF101") && uncached.contains("child.py"), "{uncached}");
    assert_eq!(cold, uncached);
    assert_eq!(warm, uncached);
    assert!(!cold_err.contains("warning") && !warm_err.contains("warning"), "{cold_err}{warm_err}");
    assert_eq!(fs::read_to_string(dir.path().join(".tcfix_cache/.gitignore")).unwrap().lines().last(), Some("*"));
}

#[test]
fn a_warm_run_over_an_unchanged_tree_writes_nothing() {
    let dir = three_files();
    tcfix(dir.path(), &[]);
    let file = cache_file(dir.path());
    let written = fs::metadata(&file).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    tcfix(dir.path(), &[]);
    assert_eq!(fs::metadata(&file).unwrap().modified().unwrap(), written, "every file was known, with its facts");
}

/// The warm run reads the findings from the cache instead of analysing the files again: a
/// message edited in the cache (in a valid cache) shows in its output.
#[test]
fn a_warm_run_over_an_unchanged_tree_analyses_nothing() {
    let dir = three_files();
    tcfix(dir.path(), &[]);
    let file = cache_file(dir.path());
    let stored = fs::read_to_string(&file).unwrap();
    let marked = stored.replacen("\"message\":\"", "\"message\":\"FROM THE CACHE ", 1);
    assert_ne!(marked, stored, "the cache holds findings with messages");
    fs::write(&file, marked).unwrap();
    let (warm, _) = tcfix(dir.path(), &[]);
    assert!(warm.contains("FROM THE CACHE"), "{warm}");
    // An edited file is checked again, and only its findings change.
    write(dir.path(), "pkg/other.py", &OTHER.replace("x.item()", "x"));
    let (after_edit, _) = tcfix(dir.path(), &[]);
    let (uncached, _) = tcfix(dir.path(), &["--no-cache"]);
    assert!(after_edit.contains("FROM THE CACHE"), "the unchanged files' findings still come from the cache");
    assert_eq!(after_edit.replace("FROM THE CACHE ", ""), uncached, "other.py was checked again");
    assert!(!uncached.contains("FROM THE CACHE"));
}

/// Sets the modification time of every file in `pkg` a minute into the past: a cache written now
/// then trusts their stamps (a file changed in the seconds before the cache was written is read
/// again).
fn age(root: &Path) {
    let a_minute_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for entry in fs::read_dir(root.join("pkg")).expect("pkg") {
        let file = fs::File::options().write(true).open(entry.expect("entry").path()).expect("open");
        file.set_modified(a_minute_ago).expect("set the time");
    }
}

/// Over an unchanged old tree, the second run takes every file's findings from the cache (a
/// marked message shows); adding, editing and removing a file each make it look again.
#[test]
fn a_warm_run_over_an_old_unchanged_tree_takes_the_stored_findings() {
    let dir = three_files();
    age(dir.path());
    let (uncached, _) = tcfix(dir.path(), &["--no-cache"]);
    assert_eq!(tcfix(dir.path(), &[]).0, uncached);
    let file = cache_file(dir.path());
    let written = fs::metadata(&file).unwrap().modified().unwrap();
    let stored = fs::read_to_string(&file).unwrap();
    fs::write(&file, stored.replacen("\"message\":\"", "\"message\":\"FROM THE CACHE ", 1)).unwrap();
    let (warm, _) = tcfix(dir.path(), &[]);
    assert_eq!(warm.replace("FROM THE CACHE ", ""), uncached);
    assert!(warm.contains("FROM THE CACHE"), "{warm}");
    assert!(fs::metadata(&file).unwrap().modified().unwrap() > written, "the marked cache was written by the test");

    // A text changed under the same size with its modification time set back (`touch -r`,
    // `cp -p`) is read again: its status-change time moved (`Child` is then no module).
    let base = dir.path().join("pkg/base.py");
    let stamp = fs::metadata(&base).unwrap().modified().unwrap();
    let plain = format!("{PLAIN_BASE}{}\n", "#".repeat(BASE.len() - PLAIN_BASE.len() - 1));
    fs::write(&base, &plain).unwrap();
    fs::File::options().write(true).open(&base).unwrap().set_modified(stamp).unwrap();
    let (restored, _) = tcfix(dir.path(), &[]);
    assert!(!restored.contains("pkg/child.py"), "{restored}");
    assert_eq!(restored.replace("FROM THE CACHE ", ""), tcfix(dir.path(), &["--no-cache"]).0);
    fs::write(&base, BASE).unwrap();
    age(dir.path());

    write(dir.path(), "pkg/more.py", OTHER.replace("Other", "More").as_str());
    let (added, _) = tcfix(dir.path(), &[]);
    assert!(added.contains("pkg/more.py"), "a new file is checked: {added}");
    assert_eq!(added.replace("FROM THE CACHE ", ""), tcfix(dir.path(), &["--no-cache"]).0);

    write(dir.path(), "pkg/other.py", &OTHER.replace("x.item()", "x.tolist()"));
    let (edited, _) = tcfix(dir.path(), &[]);
    assert!(edited.contains("tolist"), "an edited file is checked again: {edited}");
    assert_eq!(edited.replace("FROM THE CACHE ", ""), tcfix(dir.path(), &["--no-cache"]).0);

    fs::remove_file(dir.path().join("pkg/more.py")).unwrap();
    let (removed, _) = tcfix(dir.path(), &[]);
    assert!(!removed.contains("pkg/more.py"), "a removed file's findings are gone: {removed}");
    assert_eq!(removed.replace("FROM THE CACHE ", ""), tcfix(dir.path(), &["--no-cache"]).0);
}

#[test]
fn editing_a_base_class_in_one_file_changes_a_subclass_finding_in_another() {
    let dir = three_files();
    let (before, _) = tcfix(dir.path(), &[]);
    assert!(before.contains("pkg/child.py"), "Child.forward prints under compile: {before}");
    write(dir.path(), "pkg/base.py", PLAIN_BASE);
    let (after, _) = tcfix(dir.path(), &[]);
    let (uncached, _) = tcfix(dir.path(), &["--no-cache"]);
    assert!(!after.contains("pkg/child.py"), "Base is no module now: Child.forward is not compiled: {after}");
    assert_eq!(after, uncached);
    // And back: the cache holds the other version's findings under other facts.
    write(dir.path(), "pkg/base.py", BASE);
    assert_eq!(tcfix(dir.path(), &[]).0, before);
}

#[test]
fn a_corrupt_cache_is_ignored_with_a_warning_and_rebuilt() {
    let dir = three_files();
    let (expected, _) = tcfix(dir.path(), &[]);
    let file = cache_file(dir.path());
    let stored = fs::read(&file).unwrap();
    fs::write(&file, &stored[..stored.len() / 2]).unwrap();
    let (output, warning) = tcfix(dir.path(), &[]);
    assert_eq!(output, expected);
    assert!(warning.contains("warning: ignoring the cache") && warning.contains("rebuilt"), "{warning}");
    let (again, quiet) = tcfix(dir.path(), &[]);
    assert_eq!(again, expected);
    assert!(!quiet.contains("warning"), "the cache was rebuilt: {quiet}");
    // Not a cache of ours at all: the same.
    fs::write(&file, "{\"key\": 1}").unwrap();
    let (output, warning) = tcfix(dir.path(), &[]);
    assert_eq!(output, expected);
    assert!(warning.contains("warning: ignoring the cache"), "{warning}");
}

/// The summaries are only read to build the index: lost, truncated or of another run, they are
/// not used, and each file is parsed again; the findings do not change.
#[test]
fn a_lost_or_foreign_summaries_file_is_not_used() {
    let dir = three_files();
    let (expected, _) = tcfix(dir.path(), &[]);
    let summaries = cache_file(dir.path()).with_extension("summaries.json");
    let stored = fs::read_to_string(&summaries).expect("a summaries file beside the cache");
    for broken in [stored[..stored.len() / 2].to_string(), stored.replacen("\"generation\":", "\"generation\":1", 1)] {
        fs::write(&summaries, broken).unwrap();
        // A changed base class makes the run build the index from every file's summary.
        write(dir.path(), "pkg/base.py", PLAIN_BASE);
        assert_eq!(tcfix(dir.path(), &[]).0, tcfix(dir.path(), &["--no-cache"]).0);
        write(dir.path(), "pkg/base.py", BASE);
        assert_eq!(tcfix(dir.path(), &[]).0, expected);
    }
    fs::remove_file(&summaries).unwrap();
    write(dir.path(), "pkg/base.py", PLAIN_BASE);
    assert_eq!(tcfix(dir.path(), &[]).0, tcfix(dir.path(), &["--no-cache"]).0);
}

#[test]
fn the_config_key_turns_the_cache_off() {
    let dir = three_files();
    write(dir.path(), "tcfix.toml", "cache = false\n");
    let output = Command::new(env!("CARGO_BIN_EXE_tcfix")).arg("pkg").current_dir(dir.path()).output().unwrap();
    assert!(output.status.code() == Some(1), "{output:?}");
    assert!(!dir.path().join(".tcfix_cache").exists());
}

/// --apply starts from the cached findings of the unchanged text and fixes exactly as without
/// the cache.
#[test]
fn fixing_with_a_warm_cache_writes_the_same_files() {
    let cached = three_files();
    let uncached = three_files();
    tcfix(cached.path(), &[]);
    let apply = |root: &Path, extra: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_tcfix"))
            .args(["--isolated", "--apply", "--allow-no-vcs", "--unsafe-fixes", "--quiet"])
            .args(extra)
            .arg("pkg")
            .current_dir(root)
            .output()
            .unwrap();
        assert!(output.status.code().is_some_and(|code| code < 2), "{output:?}");
    };
    apply(cached.path(), &[]);
    apply(uncached.path(), &["--no-cache"]);
    for name in ["pkg/base.py", "pkg/child.py", "pkg/other.py"] {
        let (a, b) = (cached.path().join(name), uncached.path().join(name));
        assert_eq!(fs::read_to_string(a).unwrap(), fs::read_to_string(b).unwrap(), "{name}");
    }
    assert_ne!(fs::read_to_string(cached.path().join("pkg/child.py")).unwrap(), CHILD, "the print was fixed");
}

/// A run over some of the files learns their findings with the facts of that run; the tree the
/// cache last saw whole no longer holds for them, whether or not that run certified its own.
#[test]
fn a_run_over_some_files_then_over_all_finds_what_an_uncached_run_finds() {
    let x = "from .base import Base


class X(Base):
    def forward(self, x):
        if x.sum() > 0:
            return x.item()
        return x
";
    let dir = three_files();
    write(dir.path(), "pkg/base.py", PLAIN_BASE);
    write(dir.path(), "pkg/x.py", x);
    age(dir.path());
    let (all, _) = tcfix(dir.path(), &[]);
    // `--diff` over two files: one gets a fix (the run certifies nothing), the other's findings
    // are learnt without base.py, where X's base is unknown.
    let output = Command::new(env!("CARGO_BIN_EXE_tcfix"))
        .args(["--isolated", "--diff", "pkg/child.py", "pkg/x.py"])
        .current_dir(dir.path())
        .output()
        .expect("tcfix runs");
    assert!(output.status.code().is_some_and(|code| code < 2), "{output:?}");
    assert_eq!(tcfix(dir.path(), &[]).0, all);
    assert_eq!(all, tcfix(dir.path(), &["--no-cache"]).0);
}

/// A nearer configuration that ignores a rule, or stops ignoring it, changes that directory's
/// findings with the cache as without it (the cache's key holds only the root's settings).
#[test]
fn a_nested_configuration_changes_the_findings_with_the_cache_as_without() {
    let dir = three_files();
    write(dir.path(), "pyproject.toml", "[tool.tcfix]\n");
    age(dir.path());
    let run = |dir: &Path| {
        let output = Command::new(env!("CARGO_BIN_EXE_tcfix"))
            .args(["--output-format", "json", "pkg"])
            .current_dir(dir)
            .output()
            .expect("tcfix runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let uncached = |dir: &Path| {
        let output = Command::new(env!("CARGO_BIN_EXE_tcfix"))
            .args(["--no-cache", "--output-format", "json", "pkg"])
            .current_dir(dir)
            .output()
            .expect("tcfix runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let before = run(dir.path());
    assert!(before.contains("TCF101"), "{before}");
    for nested in ["[tool.tcfix]\nignore = [\"TCF101\"]\n", "[tool.tcfix]\n"] {
        write(dir.path(), "pkg/pyproject.toml", nested);
        let (warm, cold) = (run(dir.path()), uncached(dir.path()));
        assert_eq!(warm, cold, "with pkg/pyproject.toml = {nested:?}");
        assert_eq!(run(dir.path()), cold, "again, from the cache");
    }
}

/// The same name from two directories is two files: a run from a subdirectory does not take the
/// findings the cache holds for the file of that name at the root.
#[test]
fn runs_from_two_directories_keep_their_files_apart() {
    let dir = project(&[
        ("pyproject.toml", "[tool.tcfix]\n[tool.tcfix.per-file-ignores]\n\"sub/*\" = [\"TCF101\"]\n"),
        ("m.py", CHILD.replace("from .base import Base", "from torch.nn import Module as Base").as_str()),
        ("sub/m.py", CHILD.replace("from .base import Base", "from torch.nn import Module as Base").as_str()),
    ]);
    let run = |cwd: &Path, extra: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_tcfix"))
            .args(["--output-format", "json"])
            .args(extra)
            .arg("m.py")
            .current_dir(cwd)
            .output()
            .expect("tcfix runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let root = run(dir.path(), &[]);
    assert!(root.contains("TCF101"), "{root}");
    let sub = dir.path().join("sub");
    assert_eq!(run(&sub, &[]), run(&sub, &["--no-cache"]));
    assert!(!run(&sub, &[]).contains("TCF101"));
    assert_eq!(run(dir.path(), &[]), root);
}

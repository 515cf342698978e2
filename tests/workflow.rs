//! tcfix in a user's workflow, against the real tools: git (dirty files, worktrees, `git apply`,
//! `git am`), configuration files, suppression comments, pipes.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const MODEL: &str = "import torch
from torch import nn


class VLM(nn.Module):
    def __init__(self, tokenizer):
        super().__init__()
        self.tokenizer = tokenizer
        self.proj = nn.Linear(4, 4)

    def forward(self, ids):
        print(ids.shape)
        return self.proj(ids) * (ids == self.tokenizer.image_token_id)
";

fn tcfix(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcfix")).args(args).current_dir(dir).output().expect("tcfix runs")
}

fn git(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", text(&output.stderr));
    output
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A git repository with `models/vlm.py` committed.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("models")).unwrap();
    fs::write(dir.path().join("models/vlm.py"), MODEL).unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qm", "model"]);
    dir
}

fn read(dir: &Path, path: &str) -> String {
    fs::read_to_string(dir.join(path)).unwrap()
}

#[test]
fn apply_refuses_files_with_uncommitted_changes_unless_allowed() {
    let dir = repo();
    let edited = MODEL.replace("class VLM", "# my unsaved work\nclass VLM");
    fs::write(dir.path().join("models/vlm.py"), &edited).unwrap();
    fs::write(dir.path().join("models/new.py"), MODEL).unwrap(); // untracked

    let refused = tcfix(dir.path(), &["--apply", "models"]);
    assert_eq!(refused.status.code(), Some(2));
    let err = text(&refused.stderr);
    assert!(err.contains("not writing 2 files with uncommitted changes"), "{err}");
    assert!(err.contains("  models/vlm.py\n") && err.contains("  models/new.py\n"), "{err}");
    assert_eq!(read(dir.path(), "models/vlm.py"), edited, "the user's work is untouched");

    let allowed = tcfix(dir.path(), &["--apply", "--allow-dirty", "models"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed.stdout));
    let fixed = read(dir.path(), "models/vlm.py");
    assert!(fixed.contains("# my unsaved work") && fixed.contains("self.image_token_id_"), "{fixed}");
}

#[test]
fn apply_writes_committed_files() {
    let dir = repo();
    let output = tcfix(dir.path(), &["--apply", "models"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(read(dir.path(), "models/vlm.py").contains("if not torch.compiler.is_compiling():"));
}

#[test]
fn worktree_mode_commits_the_fixes_on_a_new_branch_and_leaves_the_tree_alone() {
    let dir = repo();
    fs::write(dir.path().join("models/vlm.py"), MODEL.replace("class VLM", "# wip\nclass VLM")).unwrap();
    let worktree = dir.path().join("../").join(format!("wt-{}", std::process::id()));
    let worktree_arg = worktree.to_string_lossy().into_owned();
    let output = tcfix(dir.path(), &["--apply", "--worktree", &worktree_arg, "--branch", "tcfix/review", "models"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("on branch `tcfix/review`"));

    assert!(read(dir.path(), "models/vlm.py").contains("# wip"), "the user's tree is untouched");
    let fixed = fs::read_to_string(worktree.join("models/vlm.py")).unwrap();
    assert!(fixed.contains("self.image_token_id_") && !fixed.contains("# wip"), "the worktree is HEAD, fixed");
    let log = text(&git(dir.path(), &["log", "-1", "--format=%B", "tcfix/review"]).stdout);
    assert!(log.starts_with("Fix torch.compile hazards (tcfix)"), "{log}");
    assert!(log.contains("TCF101 print-in-compiled-code") && log.contains("- models/vlm.py:12: `print()`"), "{log}");
    let status = text(&git(&worktree, &["status", "--porcelain"]).stdout);
    assert!(status.is_empty(), "everything is committed: {status}");

    let again = tcfix(dir.path(), &["--apply", "--worktree", &worktree_arg, "models"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("already exists"), "{}", text(&again.stderr));
    let branch = dir.path().join("../").join(format!("wt2-{}", std::process::id()));
    let taken =
        tcfix(dir.path(), &["--apply", "--worktree", &branch.to_string_lossy(), "--branch", "tcfix/review", "models"]);
    assert!(text(&taken.stderr).contains("branch `tcfix/review` already exists"), "{}", text(&taken.stderr));
    let _ = fs::remove_dir_all(&worktree);
}

#[test]
fn worktree_mode_needs_a_commit() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("vlm.py"), MODEL).unwrap();
    git(dir.path(), &["init", "-q"]);
    let output = tcfix(dir.path(), &["--apply", "--worktree", "../wt-none", "."]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("the repository has no commits yet"), "{}", text(&output.stderr));
}

#[test]
fn a_patch_file_applies_with_git() {
    let dir = repo();
    let output = tcfix(dir.path(), &["--patch", "fixes.patch", "models"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(read(dir.path(), "models/vlm.py"), MODEL, "--patch writes no source file");
    git(dir.path(), &["apply", "--check", "fixes.patch"]);
}

#[test]
fn a_patch_series_becomes_one_commit_per_rule_with_git_am() {
    let dir = repo();
    let output = tcfix(dir.path(), &["--patch-dir", "patches", "models"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let mut names: Vec<String> = fs::read_dir(dir.path().join("patches"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "0001-TCF101-guard-print-and-logging-calls-in-compiled-code.patch",
            "0002-TCF102-compute-tokenizer-and-processor-lookups-once-in-init.patch"
        ]
    );
    let first = read(dir.path(), &format!("patches/{}", names[0]));
    assert!(first.contains("Subject: [PATCH 1/2] TCF101: guard print and logging calls in compiled code\n"));
    assert!(first.contains("- models/vlm.py:12: `print()` in `VLM.forward` breaks the graph"), "{first}");

    let mut am = vec!["am", "-q"];
    let paths: Vec<String> = names.iter().map(|n| format!("patches/{n}")).collect();
    am.extend(paths.iter().map(String::as_str));
    git(dir.path(), &am);
    let subjects = text(&git(dir.path(), &["log", "--format=%s", "-3"]).stdout);
    assert_eq!(
        subjects,
        "TCF102: compute tokenizer and processor lookups once in __init__\nTCF101: guard print and logging calls in compiled code\nmodel\n"
    );
    let after_am = read(dir.path(), "models/vlm.py");
    let check = tcfix(dir.path(), &["models"]);
    assert_eq!(check.status.code(), Some(0), "the series fixes everything: {}", text(&check.stdout));
    let other = repo();
    tcfix(other.path(), &["--apply", "models"]);
    assert_eq!(after_am, read(other.path(), "models/vlm.py"), "the series equals --apply");
}

#[test]
fn configuration_selects_rules_per_file_and_targets_older_torch() {
    let dir = repo();
    fs::write(dir.path().join("tcfix.toml"), "ignore = [\"TCF102\"]\ntarget-torch = \"2.2\"\n").unwrap();
    let output = tcfix(dir.path(), &["--diff", "models"]);
    let diff = text(&output.stdout);
    assert!(diff.contains("+        if not torch._dynamo.is_compiling():"), "{diff}");
    assert!(!diff.contains("image_token_id_"), "TCF102 is ignored: {diff}");
    assert_eq!(tcfix(dir.path(), &["--isolated", "--select", "TCF102", "models"]).status.code(), Some(1));

    fs::write(dir.path().join("tcfix.toml"), "[per-file-ignores]\n\"models/*\" = [\"TCF1\"]\n").unwrap();
    assert_eq!(tcfix(dir.path(), &["models"]).status.code(), Some(0));
    fs::write(dir.path().join("tcfix.toml"), "exclude = [\"models/\"]\n").unwrap();
    assert_eq!(tcfix(dir.path(), &["."]).status.code(), Some(0));
    assert_eq!(tcfix(dir.path(), &["models/vlm.py"]).status.code(), Some(1), "a named file is always checked");

    fs::write(dir.path().join("tcfix.toml"), "unsafe_fixes = true\n").unwrap();
    let bad = tcfix(dir.path(), &["models"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = text(&bad.stderr);
    assert!(
        err.contains("tcfix.toml") && err.contains("unknown field `unsafe_fixes`") && err.contains("unsafe-fixes"),
        "{err}"
    );
}

#[test]
fn pyproject_tool_table_is_read() {
    let dir = repo();
    fs::write(dir.path().join("pyproject.toml"), "[project]\nname = \"m\"\n\n[tool.tcfix]\nselect = [\"TCF2\"]\n")
        .unwrap();
    assert_eq!(tcfix(dir.path(), &["models"]).status.code(), Some(0));
}

#[test]
fn suppression_comments_and_add_noqa() {
    let dir = repo();
    let added = tcfix(dir.path(), &["--add-noqa", "models"]);
    assert_eq!(added.status.code(), Some(0), "{}", text(&added.stderr));
    assert!(text(&added.stderr).contains("Added 2 noqa comments in 1 file."));
    let commented = read(dir.path(), "models/vlm.py");
    assert!(commented.contains("print(ids.shape)  # noqa: TCF101\n"), "{commented}");
    assert_eq!(tcfix(dir.path(), &["models"]).status.code(), Some(0), "every finding is silenced");
}

#[test]
fn stdin_is_checked_and_fixed_through_a_pipe() {
    let dir = repo();
    let pipe = |args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tcfix"))
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(MODEL.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let report = pipe(&["-", "--stdin-filename", "models/x.py"]);
    assert_eq!(report.status.code(), Some(1));
    assert!(text(&report.stdout).starts_with("models/x.py:12:9: TCF101"), "{}", text(&report.stdout));

    let clean = "import torch\n\n\ndef f(x):\n    return x * 2\n";
    let untouched = Command::new(env!("CARGO_BIN_EXE_tcfix"))
        .args(["-", "--apply", "--stdin-filename", "models/clean.py"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(clean.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(text(&untouched.stdout), clean, "a clean buffer comes back as it went in");

    let fixed = pipe(&["-", "--apply", "--stdin-filename", "models/x.py"]);
    assert_eq!(fixed.status.code(), Some(0));
    assert!(text(&fixed.stdout).contains("self.image_token_id_ = self.tokenizer.image_token_id"));
    assert_eq!(read(dir.path(), "models/vlm.py"), MODEL);

    let broken = Command::new(env!("CARGO_BIN_EXE_tcfix"))
        .args(["-", "--apply"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(b"def f(:\n")?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(broken.status.code(), Some(2));
    assert_eq!(text(&broken.stdout), "def f(:\n", "an editor gets its buffer back");
}

#[test]
fn exit_zero_and_output_file() {
    let dir = repo();
    let output = tcfix(dir.path(), &["--exit-zero", "-o", "report.txt", "models"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(text(&output.stdout).is_empty());
    assert!(read(dir.path(), "report.txt").contains("Found 2 hazards"));
}

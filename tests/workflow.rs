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
    assert_eq!(tcfix(dir.path(), &["."]).status.code(), Some(2), "every Python file is excluded: nothing to check");
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

// --- Pull-request review: --diff-base, --baseline, the markdown review, patch identity ---------

/// `a.py`'s forward calls `late.helper`: on its own `late.py` has no compiled code, so a finding
/// there needs the whole project analysed.
const CALLER: &str = "from torch import nn
from late import helper


class Model(nn.Module):
    def forward(self, x):
        return helper(x)
";
const HELPER: &str = "import torch


def helper(x):
    return x
";
const HELPER_WITH_PRINT: &str = "import torch


def helper(x):
    print(x)
    return x
";

/// A repository like a pull request's: `main` with `a.py`, `late.py` and `models/vlm.py` (two
/// hazards), a branch `feature` that adds a print to `late.helper`, and a later commit on `main`.
fn pull_request() -> tempfile::TempDir {
    let dir = repo();
    fs::write(dir.path().join("a.py"), CALLER).unwrap();
    fs::write(dir.path().join("late.py"), HELPER).unwrap();
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qm", "caller and helper"]);
    git(dir.path(), &["checkout", "-qb", "feature"]);
    fs::write(dir.path().join("late.py"), HELPER_WITH_PRINT).unwrap();
    git(dir.path(), &["commit", "-qam", "debug print in the helper"]);
    // `main` moves on after the branch: a line the branch does not have. Compared with `main`'s
    // tip rather than the merge base, the branch would seem to change it back.
    git(dir.path(), &["checkout", "-q", "main"]);
    fs::write(dir.path().join("models/vlm.py"), MODEL.replace("print(ids.shape)", "print(ids.size())")).unwrap();
    git(dir.path(), &["commit", "-qam", "main moves on"]);
    git(dir.path(), &["checkout", "-q", "feature"]);
    dir
}

fn finding_lines(output: &Output) -> Vec<String> {
    text(&output.stdout).lines().filter(|line| line.contains(": TCF")).map(str::to_string).collect()
}

#[test]
fn diff_base_reports_only_the_lines_the_branch_changed() {
    let dir = pull_request();
    let output = tcfix(dir.path(), &["--diff-base", "main", "."]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    // Found through a.py's forward, in a file the change touched; vlm.py's two are old.
    assert_eq!(
        finding_lines(&output),
        ["late.py:5:5: TCF101 high `print()` in `helper` (called from `Model.forward`) breaks the graph [*]"]
    );
    let out = text(&output.stdout);
    assert!(out.contains("Only lines changed since `main` (merge base "), "{out}");
    assert!(out.contains("2 findings elsewhere are not shown."), "{out}");
    assert_eq!(tcfix(dir.path(), &["."]).status.code(), Some(1), "without --diff-base all three are reported");

    // Work not committed yet counts only when asked.
    let vlm = read(dir.path(), "models/vlm.py")
        .replace("        return self.proj", "        print(\"wip\")\n        return self.proj");
    fs::write(dir.path().join("models/vlm.py"), &vlm).unwrap();
    assert_eq!(finding_lines(&tcfix(dir.path(), &["--diff-base", "main", "."])).len(), 1);
    let with_work = finding_lines(&tcfix(dir.path(), &["--diff-base", "main", "--include-uncommitted", "."]));
    assert_eq!(with_work.len(), 2, "{with_work:?}");
    assert!(with_work[1].starts_with("models/vlm.py:13:9: TCF101"), "{with_work:?}");
    git(dir.path(), &["checkout", "-q", "models/vlm.py"]);

    // Nothing the change touched: exit 0, and the summary says what was left out.
    git(dir.path(), &["checkout", "-q", "main"]);
    let clean = tcfix(dir.path(), &["--diff-base", "main", "."]);
    assert_eq!(clean.status.code(), Some(0));
    assert!(
        text(&clean.stdout).starts_with("All checks passed!\nOnly lines changed since `main`"),
        "{}",
        text(&clean.stdout)
    );
}

#[test]
fn diff_base_counts_the_changed_lines_of_a_crlf_checkout() {
    // Git for Windows' default, `core.autocrlf`: the working tree has CRLF, the commits LF.
    let dir = pull_request();
    git(dir.path(), &["config", "core.autocrlf", "true"]);
    for file in ["a.py", "late.py", "models/vlm.py"] {
        fs::remove_file(dir.path().join(file)).unwrap();
    }
    git(dir.path(), &["checkout", "--", "."]);
    assert!(read(dir.path(), "late.py").contains("print(x)\r\n"), "a CRLF checkout");
    let output = tcfix(dir.path(), &["--diff-base", "main", "."]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stdout));
    assert_eq!(
        finding_lines(&output),
        ["late.py:5:5: TCF101 high `print()` in `helper` (called from `Model.forward`) breaks the graph [*]"]
    );
}

#[test]
fn diff_base_fixes_and_diffs_only_the_changed_lines() {
    let dir = pull_request();
    let diff = tcfix(dir.path(), &["--diff-base", "main", "--diff", "."]);
    assert_eq!(diff.status.code(), Some(1));
    let patch = text(&diff.stdout);
    assert!(patch.contains("--- a/late.py") && !patch.contains("models/vlm.py"), "{patch}");
    fs::write(dir.path().join("review.patch"), &patch).unwrap();
    git(dir.path(), &["apply", "--check", "review.patch"]);
    fs::remove_file(dir.path().join("review.patch")).unwrap();

    let apply = tcfix(dir.path(), &["--diff-base", "main", "--apply", "."]);
    assert_eq!(apply.status.code(), Some(0), "{}", text(&apply.stderr));
    assert!(read(dir.path(), "late.py").contains("    if not torch.compiler.is_compiling():\n        print(x)"));
    assert_eq!(read(dir.path(), "models/vlm.py"), MODEL, "lines the change did not touch are not fixed");
}

#[test]
fn diff_base_says_what_is_wrong_with_the_revision() {
    let dir = pull_request();
    let unknown = tcfix(dir.path(), &["--diff-base", "origin/main", "."]);
    assert_eq!(unknown.status.code(), Some(2));
    let err = text(&unknown.stderr);
    assert!(err.contains("`origin/main` is not a commit of this repository; fetch it first"), "{err}");
    assert!(text(&unknown.stdout).is_empty(), "no report on an error");

    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("vlm.py"), MODEL).unwrap();
    let no_repo = tcfix(outside.path(), &["--diff-base", "main", "."]);
    assert_eq!(no_repo.status.code(), Some(2));
    assert!(text(&no_repo.stderr).contains("--diff-base needs a git repository"), "{}", text(&no_repo.stderr));

    // A shallow clone of the branch, as CI makes by default: the base branch's tip is there, but
    // not the history that joins it to HEAD.
    let clones = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    git(clones.path(), &["clone", "-q", "--depth", "1", "--no-single-branch", "--branch", "feature", &url, "clone"]);
    let clone = clones.path().join("clone");
    let shallow = tcfix(&clone, &["--diff-base", "origin/main", "."]);
    assert_eq!(shallow.status.code(), Some(2), "{}", text(&shallow.stdout));
    let err = text(&shallow.stderr);
    assert!(err.contains("no common commit in this shallow clone") && err.contains("fetch-depth: 0"), "{err}");
    git(&clone, &["fetch", "-q", "--unshallow"]);
    let fetched = tcfix(&clone, &["--diff-base", "origin/main", "."]);
    assert_eq!(fetched.status.code(), Some(1), "{}", text(&fetched.stderr));
    assert_eq!(finding_lines(&fetched).len(), 1);
    // The clone has `main` only as `origin/main`: the error names the revision to use.
    let local_name = tcfix(&clone, &["--diff-base", "main", "."]);
    assert_eq!(local_name.status.code(), Some(2));
    assert!(
        text(&local_name.stderr).contains("but `origin/main` is: use `--diff-base origin/main`"),
        "{}",
        text(&local_name.stderr)
    );
}

#[test]
fn a_baseline_hides_old_findings_even_after_lines_move() {
    let dir = repo();
    let written = tcfix(dir.path(), &["--write-baseline", "tcfix-baseline.json", "models"]);
    assert_eq!(written.status.code(), Some(0), "{}", text(&written.stderr));
    assert!(text(&written.stderr).contains("Wrote 2 findings to tcfix-baseline.json"), "{}", text(&written.stderr));
    let recorded: serde_json::Value = serde_json::from_str(&read(dir.path(), "tcfix-baseline.json")).unwrap();
    let fingerprints: Vec<&str> =
        recorded["findings"].as_array().unwrap().iter().map(|f| f["fingerprint"].as_str().unwrap()).collect();
    assert_eq!(fingerprints.len(), 2);
    assert_eq!(tcfix(dir.path(), &["--baseline", "tcfix-baseline.json", "models"]).status.code(), Some(0));

    // Lines added above and a comment reflowed: the same findings, at new lines.
    let moved = MODEL.replace("import torch\n", "import torch\nimport math\n\nSCALE = math.sqrt(2)\n");
    fs::write(dir.path().join("models/vlm.py"), &moved).unwrap();
    git(dir.path(), &["commit", "-qam", "move things"]);
    let still = tcfix(dir.path(), &["--baseline", "tcfix-baseline.json", "models"]);
    assert_eq!(still.status.code(), Some(0), "{}", text(&still.stdout));
    assert!(text(&still.stdout).contains("2 findings recorded in the baseline tcfix-baseline.json are not shown."));
    // SARIF's partialFingerprints are the baseline's.
    let sarif = tcfix(dir.path(), &["--output-format", "sarif", "models"]);
    let log: serde_json::Value = serde_json::from_str(&text(&sarif.stdout)).unwrap();
    let carried: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| result["partialFingerprints"]["tcfix/v1"].as_str().unwrap())
        .collect();
    assert_eq!(carried, fingerprints);

    // A new hazard is reported, alone; the configuration can name the baseline.
    let added = moved.replace("        return self.proj", "        print(\"new\")\n        return self.proj");
    fs::write(dir.path().join("models/vlm.py"), &added).unwrap();
    git(dir.path(), &["commit", "-qam", "a new print"]);
    fs::write(dir.path().join("tcfix.toml"), "baseline = \"tcfix-baseline.json\"\n").unwrap();
    let new = tcfix(dir.path(), &["models"]);
    assert_eq!(new.status.code(), Some(1));
    assert_eq!(
        finding_lines(&new),
        ["models/vlm.py:16:9: TCF101 high `print()` in `VLM.forward` breaks the graph [*]"]
    );

    // --apply fixes the new one only.
    let apply = tcfix(dir.path(), &["--apply", "models"]);
    assert_eq!(apply.status.code(), Some(0), "{}", text(&apply.stderr));
    let fixed = read(dir.path(), "models/vlm.py");
    assert!(fixed.contains("        print(ids.shape)\n") && fixed.contains("            print(\"new\")\n"), "{fixed}");

    let missing = tcfix(dir.path(), &["--baseline", "nowhere.json", "models"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("nowhere.json: cannot read the baseline"), "{}", text(&missing.stderr));
}

#[test]
fn the_markdown_review_fits_one_comment_and_counts_what_it_left_out() {
    let dir = repo();
    for n in 0..150 {
        fs::write(dir.path().join(format!("models/vlm_{n:03}.py")), MODEL.replace("VLM", &format!("VLM{n}"))).unwrap();
    }
    let capped = tcfix(dir.path(), &["--output-format", "markdown", "models"]);
    assert_eq!(capped.status.code(), Some(1));
    let report = text(&capped.stdout);
    assert!(report.chars().count() <= 65_536, "{}", report.chars().count());
    assert!(report.contains("| **total** | 0 | 302 | 0 | 0 | 302 |"), "the table counts everything");
    let last = report.lines().last().unwrap();
    assert!(last.contains("more findings are not shown") && last.contains("65,536 characters"), "{last}");
    let all = tcfix(dir.path(), &["--output-format", "markdown", "--markdown-max-chars", "0", "models"]);
    assert_eq!(text(&all.stdout).matches("\n#### ").count(), 302);
}

#[test]
fn the_markdown_review_of_a_pull_request_suggests_its_safe_fixes() {
    let dir = pull_request();
    let review = tcfix(dir.path(), &["--diff-base", "main", "--output-format", "markdown", "-o", "review.md", "."]);
    assert_eq!(review.status.code(), Some(1));
    let report = read(dir.path(), "review.md");
    assert!(report.starts_with("## tcfix: torch.compile hazards\n\nOnly lines changed since `main` (merge base "));
    assert!(report.contains("#### `late.py:5:5` TCF101 print-in-compiled-code"), "{report}");
    assert!(
        report.contains(
            "Replaces line 5:\n\n```suggestion\n    if not torch.compiler.is_compiling():\n        print(x)\n```\n"
        ),
        "{report}"
    );
    assert!(!report.contains("models/vlm.py"), "{report}");
}

/// Git as a user with an identity in the repository's configuration, nothing from the environment.
fn git_as_user(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", text(&output.stderr));
    output
}

#[test]
fn patches_and_worktree_commits_carry_the_users_identity() {
    let dir = repo();
    git(dir.path(), &["config", "user.name", "Zoë Lovelace"]);
    git(dir.path(), &["config", "user.email", "zoe@example.com"]);
    let tcfix_as_user = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_tcfix"))
            .args(args)
            .current_dir(dir.path())
            .env_remove("GIT_AUTHOR_NAME")
            .env_remove("GIT_AUTHOR_EMAIL")
            .output()
            .unwrap()
    };
    let output = tcfix_as_user(&["--patch-dir", "patches", "models"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let first = read(dir.path(), "patches/0001-TCF101-guard-print-and-logging-calls-in-compiled-code.patch");
    assert!(first.contains("\nFrom: =?UTF-8?q?Zo=C3=AB=20Lovelace?= <zoe@example.com>\n"), "{first}");
    assert!(!first.contains("tcfix@localhost"), "{first}");
    assert!(first.contains(&format!("\nGenerated-by: tcfix {}\n---\n", env!("CARGO_PKG_VERSION"))), "{first}");

    let mut names: Vec<String> = fs::read_dir(dir.path().join("patches"))
        .unwrap()
        .map(|e| format!("patches/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    names.sort();
    let mut am = vec!["am", "-q"];
    am.extend(names.iter().map(String::as_str));
    git_as_user(dir.path(), &am);
    let authors = text(
        &git_as_user(dir.path(), &["log", "-2", "--format=%an <%ae>|%(trailers:key=Generated-by,valueonly)"]).stdout,
    );
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        authors.split('\n').filter(|line| !line.is_empty()).collect::<Vec<_>>(),
        [
            format!("Zoë Lovelace <zoe@example.com>|tcfix {version}"),
            format!("Zoë Lovelace <zoe@example.com>|tcfix {version}")
        ]
    );

    // The worktree's commit too.
    git(dir.path(), &["reset", "-q", "--hard", "HEAD~2"]);
    let worktree = dir.path().join("../").join(format!("wt-identity-{}", std::process::id()));
    let made = tcfix_as_user(&["--apply", "--worktree", &worktree.to_string_lossy(), "--branch", "tcfix/me", "models"]);
    assert_eq!(made.status.code(), Some(0), "{}", text(&made.stderr));
    let commit = text(
        &git_as_user(
            dir.path(),
            &["log", "-1", "--format=%an <%ae>|%(trailers:key=Generated-by,valueonly)", "tcfix/me"],
        )
        .stdout,
    );
    assert_eq!(commit.trim_end(), format!("Zoë Lovelace <zoe@example.com>|tcfix {version}"));
    let _ = fs::remove_dir_all(&worktree);
}

#[test]
fn add_noqa_with_refused_files_prints_one_consistent_summary() {
    let dir = repo();
    fs::write(dir.path().join("models/vlm.py"), MODEL.replace("class VLM", "# wip\nclass VLM")).unwrap();
    fs::write(dir.path().join("models/other.py"), MODEL.replace("VLM", "Other")).unwrap();
    git(dir.path(), &["add", "models/other.py"]);
    git(dir.path(), &["commit", "-qm", "other", "--", "models/other.py"]);
    let output = tcfix(dir.path(), &["--add-noqa", "models"]);
    assert_eq!(output.status.code(), Some(2));
    let err = text(&output.stderr);
    assert!(err.contains("error: not writing 1 file with uncommitted changes"), "{err}");
    assert!(err.ends_with("Added 2 noqa comments in 1 file. 1 file not written (above).\n"), "{err}");
    assert!(read(dir.path(), "models/other.py").contains("# noqa: TCF101"));
    assert!(!read(dir.path(), "models/vlm.py").contains("noqa"));
}

#[test]
fn tcfix_keys_outside_tool_tcfix_in_pyproject_are_warned_about() {
    let dir = repo();
    fs::write(
        dir.path().join("pyproject.toml"),
        "[project]\nname = \"m\"\n\n[tool.tcfix]\nselect = [\"TCF1\"]\n\n[per-file-ignores]\n\"models/*\" = [\"TCF101\"]\n",
    )
    .unwrap();
    let output = tcfix(dir.path(), &["models"]);
    assert_eq!(output.status.code(), Some(1), "the misplaced table is not read: the finding stays");
    let err = text(&output.stderr);
    assert!(err.contains("warning: ") && err.contains("[per-file-ignores] is at the top level"), "{err}");
    assert!(err.contains("[tool.tcfix.per-file-ignores]"), "{err}");

    fs::write(
        dir.path().join("pyproject.toml"),
        "[project]\nname = \"m\"\n\n[tool.tcfix]\nselect = [\"TCF1\"]\n\n[tool.tcfix.per-file-ignores]\n\"models/*\" = [\"TCF1\"]\n",
    )
    .unwrap();
    let fixed = tcfix(dir.path(), &["models"]);
    assert_eq!(fixed.status.code(), Some(0));
    assert!(text(&fixed.stderr).is_empty(), "{}", text(&fixed.stderr));
}

// --- The GitHub Action's script, run as CI would, against throwaway repositories ---------------

/// A stand-in for the GitHub CLI: it logs its arguments, keeps the comment body and the review
/// it was given, answers the listing of the pull request's comments with the id in `$GH_EXISTING`
/// (none when empty) and that of its review comments with the bodies in `$GH_POSTED`. With
/// `$GH_READ_ONLY` set, it refuses to write, as GitHub does with a fork's pull request.
const FAKE_GH: &str = r#"#!/usr/bin/env bash
echo "$*" >>"$GH_LOG"
previous=""
for arg in "$@"; do
    case "$arg" in body=@*) cp "${arg#body=@}" "$GH_BODY" ;; esac
    [[ "$previous" == --input ]] && cp "$arg" "$GH_REVIEW"
    previous="$arg"
done
if [[ -n "${GH_READ_ONLY:-}" && "$*" == *--method* ]]; then
    echo "gh: Resource not accessible by integration (HTTP 403)" >&2
    exit 1
fi
case "$*" in
    *pulls/*--jq*) [[ -f "${GH_POSTED:-}" ]] && cat "$GH_POSTED" ;;
    *--jq*) [[ -n "${GH_EXISTING:-}" ]] && echo "$GH_EXISTING" ;;
esac
exit 0
"#;

/// A `PATH` that finds the stand-in `gh` (written into `dir/bin`) first.
fn fake_gh_on_path(dir: &Path) -> String {
    let bin = dir.join("bin");
    fs::create_dir(&bin).unwrap();
    fs::write(bin.join("gh"), FAKE_GH).unwrap();
    let mut permissions = fs::metadata(bin.join("gh")).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    fs::set_permissions(bin.join("gh"), permissions).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap())
}

fn pr_review(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pr-review");
    let mut command = Command::new("bash");
    command.arg(script).arg("--tcfix").arg(env!("CARGO_BIN_EXE_tcfix")).args(args).current_dir(dir);
    for variable in ["GITHUB_ACTIONS", "GITHUB_BASE_REF", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "PRE_COMMIT"] {
        command.env_remove(variable);
    }
    command.envs(env.iter().copied()).output().unwrap()
}

#[test]
fn the_action_script_reviews_a_branch_locally() {
    let dir = pull_request();
    let out = tempfile::tempdir().unwrap();
    let output = pr_review(dir.path(), &["--base", "main", "--out", &out.path().to_string_lossy()], &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(text(&output.stdout).starts_with("late.py:5:5: TCF101"), "{}", text(&output.stdout));
    let review = fs::read_to_string(out.path().join("tcfix-review.md")).unwrap();
    assert!(review.contains("Only lines changed since `main`") && review.contains("`late.py:5:5` TCF101"), "{review}");
    assert!(!review.contains("models/vlm.py"), "main's later commit is no part of the change: {review}");
    // The SARIF log is the whole project's.
    let log: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.path().join("tcfix.sarif")).unwrap()).unwrap();
    assert_eq!(log["runs"][0]["results"].as_array().unwrap().len(), 3);

    let missing = pr_review(dir.path(), &["--out", &out.path().to_string_lossy()], &[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("no base: pass --base REV"), "{}", text(&missing.stderr));
    assert_eq!(
        pr_review(dir.path(), &["--base", "main", "--no-fail", "--out", &out.path().to_string_lossy()], &[])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn the_action_script_fetches_the_base_and_keeps_one_comment_up_to_date() {
    let origin = pull_request();
    let work = tempfile::tempdir().unwrap();
    // actions/checkout's default: the pull request's head alone, one commit deep.
    let url = format!("file://{}", origin.path().display());
    git(work.path(), &["clone", "-q", "--depth", "1", "--branch", "feature", &url, "clone"]);
    let clone = work.path().join("clone");
    let path = fake_gh_on_path(work.path());
    let file = |name: &str| work.path().join(name).to_string_lossy().into_owned();
    let (log, body, outputs, summary) = (file("gh.log"), file("body.md"), file("outputs"), file("summary.md"));
    let (review, on_the_pull_request) = (file("review.json"), file("posted.txt"));
    let out = file("out");
    let head = text(&git(&clone, &["rev-parse", "HEAD"]).stdout).trim().to_string();
    let actions_at = |existing: &str, head: &str| {
        pr_review(
            &clone,
            &["--comment", "--suggest", "--out", &out],
            &[
                ("PATH", &path),
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_BASE_REF", "main"),
                ("GITHUB_REPOSITORY", "octo/models"),
                ("GITHUB_OUTPUT", &outputs),
                ("GITHUB_STEP_SUMMARY", &summary),
                ("TCFIX_PR_NUMBER", "7"),
                ("GH_LOG", &log),
                ("GH_BODY", &body),
                ("GH_EXISTING", existing),
                ("GH_REVIEW", &review),
                ("GH_POSTED", &on_the_pull_request),
                ("TCFIX_HEAD_SHA", head),
            ],
        )
    };
    let actions = |existing: &str| actions_at(existing, &head);

    let first = actions("");
    assert_eq!(first.status.code(), Some(1), "{}", text(&first.stderr));
    let err = text(&first.stderr);
    assert!(err.contains("fetching main from origin") && err.contains("fetching 50 more commits"), "{err}");
    // Annotations on the pull request's diff.
    let annotations = text(&first.stdout);
    assert!(annotations.starts_with("::error file=late.py,line=5,col=5,"), "{annotations}");
    assert_eq!(annotations.lines().count(), 1, "{annotations}");
    let posted = fs::read_to_string(&body).unwrap();
    assert!(posted.starts_with("<!-- tcfix-review -->\n## tcfix: torch.compile hazards\n"), "{posted}");
    assert!(
        posted.contains("```suggestion\n    if not torch.compiler.is_compiling():\n        print(x)\n```"),
        "{posted}"
    );
    let calls = fs::read_to_string(&log).unwrap();
    assert!(calls.contains("api --paginate repos/octo/models/issues/7/comments --jq"), "{calls}");
    assert!(calls.contains("api --silent --method POST repos/octo/models/issues/7/comments -F body=@"), "{calls}");
    let written = fs::read_to_string(&outputs).unwrap();
    assert!(
        written.contains("exit-code=1\n") && written.contains("sarif=") && written.contains("review="),
        "{written}"
    );
    assert!(fs::read_to_string(&summary).unwrap().contains("`late.py:5:5` TCF101"));
    // The safe fix as a suggested change on its line, in a review on the pull request's head.
    assert!(calls.contains("api --silent --method POST repos/octo/models/pulls/7/reviews --input "), "{calls}");
    let suggested: serde_json::Value = serde_json::from_str(&fs::read_to_string(&review).unwrap()).unwrap();
    assert_eq!(suggested["commit_id"], head.as_str());
    assert_eq!(suggested["event"], "COMMENT");
    let comments = suggested["comments"].as_array().unwrap();
    assert_eq!(comments.len(), 1, "{suggested}");
    assert_eq!((comments[0]["path"].as_str(), comments[0]["line"].as_u64()), (Some("late.py"), Some(5)));
    assert!(comments[0].get("start_line").is_none(), "one line: {suggested}");
    let suggestion = comments[0]["body"].as_str().unwrap();
    assert!(
        suggestion.contains("```suggestion\n    if not torch.compiler.is_compiling():\n        print(x)\n```\n<!-- tcfix-suggestion TCF101 late.py "),
        "{suggestion}"
    );
    fs::write(&on_the_pull_request, suggestion).unwrap();
    fs::remove_file(&review).unwrap();

    // The next push updates the same comment.
    let second = actions("4242");
    assert_eq!(second.status.code(), Some(1), "{}", text(&second.stderr));
    let calls = fs::read_to_string(&log).unwrap();
    assert!(calls.contains("api --silent --method PATCH repos/octo/models/issues/comments/4242 -F body=@"), "{calls}");
    assert!(!Path::new(&review).exists(), "a suggestion already on the pull request is not posted again");
    assert!(text(&second.stderr).contains("no new suggested change to post"), "{}", text(&second.stderr));

    // A merge commit checked out (actions/checkout's default ref): its lines may not be the pull
    // request's, so no suggestion is made.
    fs::write(&on_the_pull_request, "").unwrap();
    let merged = actions_at("4242", "0123456789abcdef0123456789abcdef01234567");
    assert_eq!(merged.status.code(), Some(1));
    assert!(text(&merged.stderr).contains("no suggestions: HEAD is not the pull request's head commit"));
    assert!(!Path::new(&review).exists());

    // A push that fixes the hazard: the comment says so, and the job passes.
    fs::write(clone.join("late.py"), HELPER).unwrap();
    git(&clone, &["commit", "-qam", "no print"]);
    let fixed = actions("4242");
    assert_eq!(fixed.status.code(), Some(0), "{}", text(&fixed.stderr));
    assert!(fs::read_to_string(&body).unwrap().contains("No hazards found."));
}

#[test]
fn the_action_script_warns_when_it_cannot_post_and_keeps_its_verdict() {
    // A pull request from a fork: the token can read but not comment. The verdict is tcfix's
    // (1: hazards), not an error, and a warning says why nothing was posted.
    let dir = pull_request();
    let work = tempfile::tempdir().unwrap();
    let path = fake_gh_on_path(work.path());
    let file = |name: &str| work.path().join(name).to_string_lossy().into_owned();
    let (log, body, review, out) = (file("gh.log"), file("body.md"), file("review.json"), file("out"));
    let env = [
        ("PATH", path.as_str()),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_REPOSITORY", "octo/models"),
        ("TCFIX_PR_NUMBER", "7"),
        ("GH_LOG", &log),
        ("GH_BODY", &body),
        ("GH_REVIEW", &review),
        ("GH_READ_ONLY", "1"),
    ];
    let fork = pr_review(dir.path(), &["--base", "main", "--comment", "--suggest", "--out", &out], &env);
    assert_eq!(fork.status.code(), Some(1), "{}", text(&fork.stderr));
    let annotations = text(&fork.stdout);
    assert!(
        annotations.contains("::warning title=tcfix::cannot comment on pull request #7 (a pull request from a fork")
    );
    let calls = fs::read_to_string(&log).unwrap();
    assert!(!calls.contains("pulls/7/reviews"), "no suggestions after the comment was refused: {calls}");
    assert!(fs::read_to_string(Path::new(&out).join("tcfix-review.md")).unwrap().contains("`late.py:5:5` TCF101"));

    // What the script is asked wrongly is an error (2), never a verdict.
    let unnamed = pr_review(dir.path(), &["--base", "main", "--comment", "--out", &out], &env[..3]);
    assert_eq!(unnamed.status.code(), Some(2));
    assert!(text(&unnamed.stderr).contains("--comment needs TCFIX_PR_NUMBER"), "{}", text(&unnamed.stderr));
    let no_value = pr_review(dir.path(), &["--out", &out, "--base"], &[]);
    assert_eq!(no_value.status.code(), Some(2));
    assert!(text(&no_value.stderr).contains("--base needs a value"), "{}", text(&no_value.stderr));
    let unwritable = pr_review(dir.path(), &["--base", "main", "--out", "/proc/tcfix-review"], &[]);
    assert_eq!(unwritable.status.code(), Some(2), "{}", text(&unwritable.stderr));
}

#[test]
fn suggested_changes_are_ones_github_takes_and_can_apply() {
    // GitHub shows a renamed file's edits only, with 3 lines around them, and refuses a whole
    // review when one comment lies outside: the print spans lines 7-11, the edit is on line 7.
    let block = "import torch\nfrom torch import nn\n\n\nclass Block(nn.Module):\n    def forward(self, x):\n        print(\n            \"block\",\n            x.shape,\n            x.dtype,\n        )\n        return x\n";
    let dir = repo();
    fs::write(dir.path().join("models/block.py"), block).unwrap();
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qm", "block"]);
    git(dir.path(), &["checkout", "-qb", "feature"]);
    git(dir.path(), &["mv", "models/block.py", "models/blocks.py"]);
    fs::write(dir.path().join("models/blocks.py"), block.replace("print(\n", "print(  # shapes\n")).unwrap();
    fs::write(
        dir.path().join("models/vlm.py"),
        MODEL.replace("        return self", "        print(ids)\n        return self"),
    )
    .unwrap();
    // A new file: the print's suggestion (line 12) and the image token's (lines 8-13) overlap,
    // and once one is committed the other cannot be applied.
    fs::write(dir.path().join("models/new.py"), MODEL).unwrap();
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qam", "rename, two debug prints, a new model"]);

    let work = tempfile::tempdir().unwrap();
    let path = fake_gh_on_path(work.path());
    let file = |name: &str| work.path().join(name).to_string_lossy().into_owned();
    let (log, body, review, out) = (file("gh.log"), file("body.md"), file("review.json"), file("out"));
    let output = pr_review(
        dir.path(),
        &["--base", "main", "--comment", "--suggest", "--out", &out],
        &[
            ("PATH", &path),
            ("GITHUB_REPOSITORY", "octo/models"),
            ("TCFIX_PR_NUMBER", "7"),
            ("GH_LOG", &log),
            ("GH_BODY", &body),
            ("GH_REVIEW", &review),
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("models/blocks.py:7:9: TCF101"), "{}", text(&output.stdout));
    let suggested: serde_json::Value = serde_json::from_str(&fs::read_to_string(&review).unwrap()).unwrap();
    let places: Vec<(&str, u64)> = suggested["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|comment| (comment["path"].as_str().unwrap(), comment["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        places,
        [("models/new.py", 12), ("models/vlm.py", 13)],
        "not lines 7-11 of blocks.py, which GitHub shows to line 10 only, nor lines 8-13 of new.py"
    );
}

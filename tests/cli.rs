//! The built binary end to end: what a user types, what they see, the exit code a script gets.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

const PRINT_IN_FORWARD: &str = "import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        print(\"x\", x.shape)
        return self.proj(x)
";

const CLEAN: &str = "import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2
";

fn tcfix(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcfix")).args(args).current_dir(dir).output().expect("tcfix runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        fs::write(path, text).expect("write");
    }
    dir
}

#[test]
fn clean_code_exits_zero() {
    let dir = project(&[("models/clean.py", CLEAN)]);
    let output = tcfix(dir.path(), &["models"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "All checks passed!\n");
}

#[test]
fn findings_exit_one_with_path_line_col_code() {
    let dir = project(&[("models/model.py", PRINT_IN_FORWARD)]);
    let output = tcfix(dir.path(), &["models"]);
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(out.starts_with("models/model.py:11:9: TCF101 high "), "{out}");
    assert!(out.lines().next().unwrap().ends_with("[*]"), "{out}");
    assert!(out.ends_with("Found 1 hazard (1 fixable with `--apply`).\n"), "{out}");
}

#[test]
fn default_path_is_the_current_directory() {
    let dir = project(&[("model.py", PRINT_IN_FORWARD)]);
    let output = tcfix(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).starts_with("model.py:11:9: TCF101"));
}

#[test]
fn quiet_prints_findings_only() {
    let dir = project(&[("model.py", PRINT_IN_FORWARD)]);
    let output = tcfix(dir.path(), &["--quiet", "model.py"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output).lines().count(), 1);
}

#[test]
fn diff_writes_nothing_and_git_apply_accepts_it() {
    let dir = project(&[("models/model.py", PRINT_IN_FORWARD)]);
    let output = tcfix(dir.path(), &["--diff", "models"]);
    assert_eq!(output.status.code(), Some(1), "a printed diff exits 1");
    assert_eq!(fs::read_to_string(dir.path().join("models/model.py")).unwrap(), PRINT_IN_FORWARD);
    let diff = stdout(&output);
    assert!(
        diff.starts_with(
            "diff --git a/models/model.py b/models/model.py\n--- a/models/model.py\n+++ b/models/model.py\n"
        )
    );
    assert!(diff.contains("+        if not torch.compiler.is_compiling():\n+            print(\"x\", x.shape)\n"));

    fs::write(dir.path().join("fix.patch"), &diff).unwrap();
    let check = Command::new("git").args(["apply", "--check", "fix.patch"]).current_dir(dir.path()).output().unwrap();
    assert!(check.status.success(), "git apply --check: {}", String::from_utf8_lossy(&check.stderr));
    let apply = Command::new("git").args(["apply", "fix.patch"]).current_dir(dir.path()).output().unwrap();
    assert!(apply.status.success());
    let again = tcfix(dir.path(), &["models"]);
    assert_eq!(again.status.code(), Some(0), "after git apply nothing is left: {}", stdout(&again));
}

#[test]
fn diffs_of_cr_only_files_and_files_without_a_final_newline_apply_with_git() {
    let cr_only = PRINT_IN_FORWARD.replace('\n', "\r");
    let no_final_newline = PRINT_IN_FORWARD.trim_end();
    let dir = project(&[("cr.py", &cr_only), ("last.py", no_final_newline)]);
    let output = tcfix(dir.path(), &["--diff", "."]);
    assert_eq!(output.status.code(), Some(1));
    fs::write(dir.path().join("fix.patch"), &output.stdout).unwrap();
    let check = Command::new("git").args(["apply", "--check", "fix.patch"]).current_dir(dir.path()).output().unwrap();
    assert!(check.status.success(), "git apply --check: {}", String::from_utf8_lossy(&check.stderr));
}

#[test]
fn diff_with_nothing_to_fix_exits_zero() {
    let dir = project(&[("clean.py", CLEAN)]);
    let output = tcfix(dir.path(), &["--diff", "."]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "");
}

#[test]
fn apply_fixes_then_a_second_apply_changes_nothing() {
    let dir = project(&[("model.py", PRINT_IN_FORWARD)]);
    let first = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "."]);
    assert_eq!(first.status.code(), Some(0), "nothing left after the fix: {}", stdout(&first));
    assert!(stderr(&first).contains("Fixed 1 hazard in 1 file."));
    let fixed = fs::read_to_string(dir.path().join("model.py")).unwrap();
    assert!(fixed.contains("        if not torch.compiler.is_compiling():\n            print(\"x\", x.shape)\n"));

    let second = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "."]);
    assert_eq!(second.status.code(), Some(0));
    assert_eq!(fs::read_to_string(dir.path().join("model.py")).unwrap(), fixed);
}

/// Outside git nothing could give a file's old text back: `--apply` and `--add-noqa` refuse, as
/// `cargo fix` does, until `--allow-no-vcs` (or `--allow-dirty`, which scripts already pass) says
/// to write anyway.
#[test]
fn writing_outside_git_needs_allow_no_vcs() {
    let dir = project(&[("models/model.py", PRINT_IN_FORWARD)]);
    for args in [&["--apply", "models"][..], &["--add-noqa", "models"]] {
        let refused = tcfix(dir.path(), args);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {}", stderr(&refused));
        let err = stderr(&refused);
        assert!(err.contains("error: not writing 1 file outside a git repository"), "{err}");
        assert!(err.contains("--allow-no-vcs") && err.contains("  models/model.py\n"), "{err}");
        assert_eq!(fs::read_to_string(dir.path().join("models/model.py")).unwrap(), PRINT_IN_FORWARD);
        if args[0] == "--apply" {
            // The report says what is still there, not that it was fixed.
            assert!(stdout(&refused).contains("TCF101") && !stdout(&refused).contains("fixed"), "{}", stdout(&refused));
        }
    }
    let allowed = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "models"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    assert_ne!(fs::read_to_string(dir.path().join("models/model.py")).unwrap(), PRINT_IN_FORWARD);

    let dir = project(&[("models/model.py", PRINT_IN_FORWARD)]);
    let dirty = tcfix(dir.path(), &["--apply", "--allow-dirty", "models"]);
    assert_eq!(dirty.status.code(), Some(0), "--allow-dirty also allows no VCS: {}", stderr(&dirty));
}

#[cfg(unix)]
#[test]
fn apply_keeps_file_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = project(&[("model.py", PRINT_IN_FORWARD)]);
    let path = dir.path().join("model.py");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o754)).unwrap();
    let output = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "model.py"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o754);
}

#[test]
fn unsafe_fixes_are_applied_only_when_asked() {
    let model = "import torch
from torch import nn


class PE(nn.Module):
    def __init__(self, d, max_len=64):
        super().__init__()
        self.register_buffer(\"pe\", torch.empty(0, d))

    def grow(self, n):
        self.pe = torch.zeros(n, self.pe.shape[1])

    def forward(self, x):
        if x.shape[0] > self.pe.shape[0]:
            self.grow(x.shape[0])
        return x + self.pe[: x.shape[0]]
";
    let dir = project(&[("pe.py", model)]);
    let safe = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "pe.py"]);
    assert_eq!(safe.status.code(), Some(1), "the persistent buffer's fix is unsafe");
    assert!(stdout(&safe).contains("Found 1 hazard (1 with `--unsafe-fixes`)."), "{}", stdout(&safe));
    assert_eq!(fs::read_to_string(dir.path().join("pe.py")).unwrap(), model);

    let diff = tcfix(dir.path(), &["--diff", "pe.py"]);
    assert_eq!(stderr(&diff), "No fixes to show.\n1 more fix is available with --unsafe-fixes\n");

    let unsafe_run = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "--unsafe-fixes", "pe.py"]);
    assert_eq!(unsafe_run.status.code(), Some(0), "{}", stdout(&unsafe_run));
    assert!(stdout(&unsafe_run).ends_with("Found 1 hazard (1 fixed, 0 remaining).\n"), "{}", stdout(&unsafe_run));
    assert!(fs::read_to_string(dir.path().join("pe.py")).unwrap().contains("        self.grow(max_len)\n"));
}

#[test]
fn a_file_that_does_not_parse_is_reported_and_the_others_still_checked() {
    let dir = project(&[("bad.py", "def forward(self, x:\n    return x\n"), ("model.py", PRINT_IN_FORWARD)]);
    let output = tcfix(dir.path(), &["."]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.starts_with("bad.py:2:5: error: Expected an expression"), "{err}");
    assert!(stdout(&output).contains("model.py:11:9: TCF101"));

    let apply = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "."]);
    assert_eq!(apply.status.code(), Some(2));
    assert_eq!(fs::read_to_string(dir.path().join("bad.py")).unwrap(), "def forward(self, x:\n    return x\n");
    assert!(fs::read_to_string(dir.path().join("model.py")).unwrap().contains("is_compiling"));
}

#[test]
fn a_file_that_is_not_utf8_is_named_with_the_reason() {
    let dir = project(&[("model.py", PRINT_IN_FORWARD)]);
    fs::write(dir.path().join("latin1.py"), b"# caf\xe9\nx = 1\n").unwrap();
    let output = tcfix(dir.path(), &["."]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("latin1.py: error: not valid UTF-8 (line 1)"), "{}", stderr(&output));
    assert!(stdout(&output).contains("model.py:11:9: TCF101"));
}

#[test]
fn a_missing_path_is_an_error() {
    let dir = project(&[]);
    let output = tcfix(dir.path(), &["nope"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("nope: error: no such file or directory"));
    assert_eq!(stdout(&output), "", "nothing was checked: no summary may suggest otherwise");
}

#[test]
fn select_and_ignore_by_code_prefix_or_name() {
    let dir = project(&[("model.py", PRINT_IN_FORWARD)]);
    assert_eq!(tcfix(dir.path(), &["--select", "TCF2", "."]).status.code(), Some(0));
    assert_eq!(tcfix(dir.path(), &["--ignore", "print-in-compiled-code", "."]).status.code(), Some(0));
    assert_eq!(tcfix(dir.path(), &["--select", "TCF101", "."]).status.code(), Some(1));
    let typo = tcfix(dir.path(), &["--select", "TCF999", "."]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(stderr(&typo).contains("no rule matches TCF999"));
}

#[test]
fn bad_arguments_exit_two() {
    let dir = project(&[]);
    assert_eq!(tcfix(dir.path(), &["--diff", "--apply"]).status.code(), Some(2));
    assert_eq!(tcfix(dir.path(), &["--no-such-flag"]).status.code(), Some(2));
}

#[test]
fn gitignored_files_are_skipped_but_named_files_are_not() {
    let dir = project(&[(".gitignore", "generated/\n"), ("generated/model.py", PRINT_IN_FORWARD)]);
    let nothing = tcfix(dir.path(), &["."]);
    assert_eq!(nothing.status.code(), Some(2), "every Python file is ignored: nothing to check");
    assert!(stderr(&nothing).contains("no Python files to check in ."), "{}", stderr(&nothing));
    fs::write(dir.path().join("clean.py"), CLEAN).unwrap();
    assert_eq!(tcfix(dir.path(), &["."]).status.code(), Some(0));
    assert_eq!(tcfix(dir.path(), &["generated/model.py"]).status.code(), Some(1));
}

#[test]
fn a_helper_imported_from_another_file_is_in_the_compiled_region() {
    let helper = "def log_shapes(x):\n    print(x.shape)\n    return x\n";
    let model = "import torch
from torch import nn

from models.debug import log_shapes


class Model(nn.Module):
    def forward(self, x):
        return log_shapes(x)
";
    let dir = project(&[("models/__init__.py", ""), ("models/debug.py", helper), ("models/model.py", model)]);
    let output = tcfix(dir.path(), &["models"]);
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(
        out.starts_with("models/debug.py:2:5: TCF101 high `print()` in `log_shapes` (called from `Model.forward`)"),
        "{out}"
    );
}

#[test]
fn a_subclass_of_a_project_module_in_another_file_is_a_module() {
    let base = "from torch import nn\n\n\nclass Block(nn.Module):\n    pass\n";
    let model = "from .base import Block


class Decoder(Block):
    def forward(self, x):
        print(x)
        return x
";
    let dir = project(&[("pkg/__init__.py", ""), ("pkg/base.py", base), ("pkg/decoder.py", model)]);
    let output = tcfix(dir.path(), &["pkg"]);
    assert!(stdout(&output).starts_with("pkg/decoder.py:6:9: TCF101"), "{}", stdout(&output));
    // This file never imports torch: the fix must add the import.
    let diff = stdout(&tcfix(dir.path(), &["--diff", "pkg"]));
    assert!(diff.contains("+import torch\n from .base import Block\n"), "{diff}");
}

const PRINT_IN_LOOP_AND_FORWARD: &str = "import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        print(\"start\")
        for _ in range(3):
            print(\"step\")
            x = x * 2
        return x
";

#[test]
fn rules_lists_every_rule_with_category_and_fix_safety() {
    let dir = project(&[]);
    let output = tcfix(dir.path(), &["rules"]);
    assert_eq!(output.status.code(), Some(0));
    let listed = stdout(&output);
    assert!(listed.starts_with("CODE"), "{listed}");
    let tcf101 = listed.lines().find(|line| line.starts_with("TCF101  print-in-compiled-code"));
    assert!(tcf101.is_some_and(|line| line.contains("graph-break  safe")), "{listed}");
    assert!(listed.contains("TCF201  lazily-grown-buffer") && listed.contains("safe or unsafe fix"), "{listed}");
    assert_eq!(listed.lines().count(), tcfix::rules::RULES.len() + 1, "{listed}");
    // The columns line up: every line's category and fix start where the header's do.
    let header = listed.lines().next().unwrap();
    let (category, fix) = (header.find("CATEGORY").unwrap(), header.find("FIX").unwrap());
    for line in listed.lines().skip(1) {
        assert!(line[..category].ends_with("  ") && !line[category..].starts_with(' '), "{line}");
        assert!(line[..fix].ends_with("  ") && !line[fix..].starts_with(' '), "{line}");
    }
}

#[test]
fn the_category_users_see_is_the_one_select_takes() {
    let dir = project(&[("models/clean.py", CLEAN)]);
    let listed = stdout(&tcfix(dir.path(), &["rules"]));
    for rule in tcfix::rules::RULES {
        let category = rule.category.to_string();
        assert!(!category.contains(' '), "{category}");
        let selected = tcfix(dir.path(), &["--select", &category, "models"]);
        assert_eq!(selected.status.code(), Some(0), "`--select {category}` is accepted: {}", stderr(&selected));
        assert!(listed.contains(&format!("{}  ", category)), "{listed}");
    }
    assert!(listed.contains("  setup  ") && !listed.contains("compile setup"), "{listed}");
}

#[test]
fn a_directory_without_python_files_is_an_error_not_a_pass() {
    let dir = project(&[("docs/index.md", "# docs\n"), ("models/clean.py", CLEAN)]);
    let output = tcfix(dir.path(), &["docs"]);
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    assert!(!stdout(&output).contains("All checks passed"), "{}", stdout(&output));
    assert!(stderr(&output).contains("error: no Python files to check in docs"), "{}", stderr(&output));

    // Next to a path that has some, it is a warning.
    let both = tcfix(dir.path(), &["docs", "models"]);
    assert_eq!(both.status.code(), Some(0));
    assert!(stderr(&both).contains("warning: no Python files to check in docs"), "{}", stderr(&both));
    assert_eq!(stdout(&both), "All checks passed!\n");

    // Everything excluded by the configuration is nothing to check too.
    fs::write(dir.path().join("tcfix.toml"), "exclude = [\"models/\"]\n").unwrap();
    assert_eq!(tcfix(dir.path(), &["."]).status.code(), Some(2));
}

#[test]
fn under_pre_commit_the_summary_points_at_the_fixing_hook() {
    let dir = project(&[("models/model.py", PRINT_IN_FORWARD)]);
    let output = Command::new(env!("CARGO_BIN_EXE_tcfix"))
        .arg("models")
        .env("PRE_COMMIT", "1")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).ends_with("Found 1 hazard (1 fixable with the `tcfix-fix` pre-commit hook).\n"),
        "{}",
        stdout(&output)
    );
    let plain = Command::new(env!("CARGO_BIN_EXE_tcfix"))
        .arg("models")
        .env_remove("PRE_COMMIT")
        .current_dir(dir.path())
        .output();
    let plain = plain.unwrap();
    assert!(stdout(&plain).ends_with("(1 fixable with `--apply`).\n"), "{}", stdout(&plain));
}

#[test]
fn explain_prints_the_readme_by_code_or_name() {
    let dir = project(&[]);
    let by_code = tcfix(dir.path(), &["explain", "tcf201"]);
    let by_name = tcfix(dir.path(), &["explain", "lazily-grown-buffer"]);
    assert_eq!(by_code.status.code(), Some(0));
    assert!(stdout(&by_code).starts_with("# TCF201 lazily-grown-buffer\n"));
    assert_eq!(stdout(&by_code), stdout(&by_name));
    let unknown = tcfix(dir.path(), &["explain", "TCF999"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("no rule is called \"TCF999\": `tcfix rules` lists them"));
}

#[test]
fn a_directory_named_like_a_command_is_checked_when_written_as_a_path() {
    let dir = project(&[("rules/model.py", PRINT_IN_FORWARD)]);
    let output = tcfix(dir.path(), &["./rules"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stdout(&output).contains("model.py:11:9: TCF101"), "{}", stdout(&output));
}

#[test]
fn min_severity_drops_lesser_findings_and_sort_puts_the_worst_first() {
    let dir = project(&[("model.py", PRINT_IN_LOOP_AND_FORWARD)]);
    let all = stdout(&tcfix(dir.path(), &["--output-format", "concise", "-q"]));
    let lines: Vec<&str> = all.lines().collect();
    assert!(lines.len() == 2 && lines[0].contains(":7:9: TCF101 high") && lines[1].contains(":9:13: TCF101 critical"));
    assert!(lines[1].contains("inside a loop, so Dynamo runs all of `Model.forward` eagerly"), "{all}");

    let sorted = stdout(&tcfix(dir.path(), &["--output-format", "concise", "-q", "--sort", "severity"]));
    assert_eq!(sorted.lines().collect::<Vec<_>>(), [lines[1], lines[0]]);

    let critical = tcfix(dir.path(), &["--output-format", "concise", "-q", "--min-severity", "critical"]);
    assert_eq!(stdout(&critical).lines().collect::<Vec<_>>(), [lines[1]]);
    let nothing_left = project(&[("model.py", PRINT_IN_FORWARD)]);
    let output = tcfix(nothing_left.path(), &["--min-severity", "critical"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

#[test]
fn min_severity_from_the_configuration_file() {
    let dir = project(&[("model.py", PRINT_IN_LOOP_AND_FORWARD), ("tcfix.toml", "min-severity = \"critical\"\n")]);
    let output = stdout(&tcfix(dir.path(), &["--output-format", "concise", "-q"]));
    assert_eq!(output.lines().count(), 1, "{output}");
    let overridden = stdout(&tcfix(dir.path(), &["--output-format", "concise", "-q", "--min-severity", "low"]));
    assert_eq!(overridden.lines().count(), 2, "{overridden}");
}

#[test]
fn select_by_category() {
    let dir = project(&[("model.py", PRINT_IN_FORWARD)]);
    assert_eq!(tcfix(dir.path(), &["--select", "recompile"]).status.code(), Some(0));
    assert_eq!(tcfix(dir.path(), &["--select", "graph-break"]).status.code(), Some(1));
    assert_eq!(tcfix(dir.path(), &["--ignore", "graph-break"]).status.code(), Some(0));
}

/// After --diff and --apply the user learns what `--unsafe-fixes` would add, and --apply's summary
/// counts what it fixed and what is left, as ruff's does.
#[test]
fn diff_and_apply_count_the_fixes_unsafe_fixes_would_add() {
    let model = PRINT_IN_FORWARD.replace(
        "        return self.proj(x)\n",
        "        if x.sum() > 0:\n            x = x * 2\n        return self.proj(x)\n",
    );
    let dir = project(&[("model.py", &model)]);
    let diff = tcfix(dir.path(), &["--diff", "model.py"]);
    assert_eq!(stderr(&diff), "Would fix 1 hazard in 1 file.\n1 more fix is available with --unsafe-fixes\n");
    let apply = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "model.py"]);
    assert_eq!(apply.status.code(), Some(1), "{}", stderr(&apply));
    assert_eq!(stderr(&apply), "Fixed 1 hazard in 1 file.\n1 more fix is available with --unsafe-fixes\n");
    let out = stdout(&apply);
    assert!(out.ends_with("Found 2 hazards (1 fixed, 1 remaining; 1 more with `--unsafe-fixes`).\n"), "{out}");
}

/// In a monorepo each file takes the configuration nearest it, as ruff finds them: a project's
/// own `tcfix.toml` (or `[tool.tcfix]`) decides for its files, the one above for the rest, and
/// `--config` or `--isolated` for all. A nearer file that does not load is an error.
#[test]
fn each_file_uses_the_configuration_nearest_it() {
    let dir = project(&[
        ("tcfix.toml", "select = [\"TCF1\"]\n"),
        ("vision/pyproject.toml", "[tool.tcfix]\nignore = [\"print-in-compiled-code\"]\nexclude = [\"gen/\"]\n"),
        ("vision/model.py", PRINT_IN_FORWARD),
        ("vision/gen/model.py", PRINT_IN_FORWARD),
        ("text/model.py", PRINT_IN_FORWARD),
        ("other/tcfix.toml", "select = [\"TCF2\"]\n"),
        ("other/model.py", PRINT_IN_FORWARD),
    ]);
    let found = |args: &[&str]| -> Vec<String> {
        let output = tcfix(dir.path(), args);
        assert!(matches!(output.status.code(), Some(0 | 1)), "{}", stderr(&output));
        let out = stdout(&output);
        out.lines()
            .filter(|line| line.contains(": TCF"))
            .map(|line| line.split(':').next().unwrap().to_string())
            .collect()
    };
    // vision/ ignores TCF101 and excludes gen/; other/ selects only recompiles; text/ has the root's.
    assert_eq!(found(&["."]), ["text/model.py"]);
    // --select replaces every file's `select`; their `ignore` and `exclude` still hold.
    assert_eq!(found(&["--select", "TCF101", "."]), ["other/model.py", "text/model.py"]);
    assert_eq!(
        found(&["--config", "tcfix.toml", "."]),
        ["other/model.py", "text/model.py", "vision/gen/model.py", "vision/model.py"]
    );
    assert_eq!(found(&["--isolated", "."]).len(), 4);

    fs::write(dir.path().join("other/tcfix.toml"), "selct = [\"TCF2\"]\n").unwrap();
    let broken = tcfix(dir.path(), &["."]);
    assert_eq!(broken.status.code(), Some(2));
    assert!(stderr(&broken).contains("other/tcfix.toml") && stderr(&broken).contains("selct"), "{}", stderr(&broken));
}

/// One setting, one place: the findings a process-wide capture option removes are grouped in one
/// line of the report, and `--unsafe-fixes` writes the option once, in the script that calls
/// `torch.compile`, never in the library module that holds them; a second run writes nothing. A
/// project that compiles nothing gets the setting as advice only.
#[test]
fn a_capture_option_is_written_once_where_the_project_compiles() {
    let library = "import torch\nfrom torch import nn\n\n\nclass Merger(nn.Module):\n    def forward(self, x, mask):\n        \
                   n = int(mask.sum().item())\n        k = int(mask.max().item())\n        return x[:n] + torch.arange(k).sum()\n";
    let train = "import torch\n\nfrom pkg.model import Merger\n\n\ndef main():\n    model = Merger()\n    return \
                 torch.compile(model)\n";
    // A package module that compiles at import (timm's `optim/kron.py`) is no place for it: everyone
    // who imports the package would get the option.
    let compiled_at_import = "import torch\n\nstep = torch.compile(lambda x: x * 2)\n";
    let dir = project(&[
        ("pkg/__init__.py", "from .model import Merger\n"),
        ("pkg/fast.py", compiled_at_import),
        ("pkg/model.py", library),
        ("train.py", train),
    ]);
    let report = stdout(&tcfix(dir.path(), &["pkg", "train.py"]));
    assert!(
        report.contains(
            "2 findings in 1 file are removed by one setting: torch._dynamo.config.capture_scalar_outputs = True \
             (`--unsafe-fixes` writes it once, in train.py, where the project calls torch.compile)\n"
        ),
        "{report}"
    );
    let diff = tcfix(dir.path(), &["--diff", "pkg", "train.py"]);
    assert_eq!(stderr(&diff), "No fixes to show.\n1 more fix is available with --unsafe-fixes\n");

    let apply = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "--unsafe-fixes", "pkg", "train.py"]);
    assert_eq!(apply.status.code(), Some(0), "{}", stdout(&apply));
    assert_eq!(fs::read_to_string(dir.path().join("pkg/model.py")).unwrap(), library, "the library is not edited");
    assert_eq!(fs::read_to_string(dir.path().join("pkg/fast.py")).unwrap(), compiled_at_import);
    assert_eq!(
        fs::read_to_string(dir.path().join("train.py")).unwrap(),
        // The compile is inside `main`, which may not run: the setting goes after the imports.
        train.replace(
            "import Merger\n",
            "import Merger\n# tcfix: lets Dynamo trace `.item()`/`.tolist()` in 2 places instead of breaking the graph\n\
             torch._dynamo.config.capture_scalar_outputs = True\n"
        )
    );
    let again = tcfix(dir.path(), &["--apply", "--allow-no-vcs", "--unsafe-fixes", "pkg", "train.py"]);
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
    assert!(stdout(&again).contains("All checks passed!"), "{}", stdout(&again));

    let alone = project(&[("pkg/model.py", library)]);
    let advice = tcfix(alone.path(), &["--apply", "--allow-no-vcs", "--unsafe-fixes", "pkg"]);
    assert_eq!(fs::read_to_string(alone.path().join("pkg/model.py")).unwrap(), library);
    assert!(
        stdout(&advice)
            .contains("(set it in your program before it compiles: no script of this project calls torch.compile)"),
        "{}",
        stdout(&advice)
    );
}

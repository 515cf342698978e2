//! `tcfix prove -- CMD` end to end. The proof itself needs torch: it runs under the oracle's venv
//! (`~/.cache/tcfix-oracle/venv`, or `TCFIX_ORACLE_VENV`), and is skipped where there is none
//! unless `TCFIX_PROVE_NEEDS_VENV=1` (`.ci/run` sets it, after `tests/oracle/run.sh` made the
//! venv). The bad inputs need no torch.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

const PROJECT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/prove/project");

fn tcfix(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcfix")).args(args).current_dir(dir).output().expect("tcfix runs")
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A repository holding `files` (name, text), all committed.
fn repository(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qm", "start"]);
    dir
}

fn venv_python() -> Option<PathBuf> {
    let venv = std::env::var_os("TCFIX_ORACLE_VENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache/tcfix-oracle/venv")))?;
    let python = venv.join("bin/python");
    if python.is_file() {
        return Some(python);
    }
    assert!(
        std::env::var_os("TCFIX_PROVE_NEEDS_VENV").is_none(),
        "TCFIX_PROVE_NEEDS_VENV is set but {} is missing (tests/oracle/run.sh makes it)",
        python.display()
    );
    eprintln!("skipped: no torch venv at {} (tests/oracle/run.sh makes it)", venv.display());
    None
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_fixes_remove_the_breaks_of_a_training_step_keep_its_outputs_and_leave_the_tree_alone() {
    let Some(python) = venv_python() else { return };
    let python = python.to_str().unwrap();
    let model = std::fs::read_to_string(Path::new(PROJECT).join("model.py")).unwrap();
    let step = std::fs::read_to_string(Path::new(PROJECT).join("train_step.py")).unwrap();
    // Committed without the print in forward; the print is an uncommitted change and the training
    // step is untracked: the copy must hold both (the run after the fixes fails without the step).
    let committed = model.replace("        print(\"block input\", h.shape)\n", "");
    assert_ne!(committed, model);
    let repo = repository(&[("model.py", &committed)]);
    let dir = repo.path();
    std::fs::write(dir.join("model.py"), &model).unwrap();
    std::fs::write(dir.join("train_step.py"), &step).unwrap();
    let status_before = git(dir, &["status", "--porcelain"]);

    let output = tcfix(
        dir,
        &["prove", "--format", "json", "--keep", "--compare-output", "--python", python, "--", python, "train_step.py"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let proof: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let total = |run: &str, what: &str| proof[run]["total"][what].as_u64().unwrap();
    assert!(total("before", "graph_breaks") > 0, "{proof:#}");
    assert_eq!(total("after", "graph_breaks"), 0, "{proof:#}");
    assert_eq!(total("after", "recompiles"), 0, "{proof:#}");
    assert!(total("after", "graphs") >= 1, "the run after the fixes compiled: {proof:#}");
    assert_eq!(proof["outputs"]["equal"], true, "{proof:#}");
    assert!(proof["outputs"]["tensors"].as_u64().unwrap() > 1, "{proof:#}");
    // Both prints were confirmed by the run and removed by their fixes, the uncommitted one too.
    let fixes = proof["fixes"].as_array().unwrap();
    let print_line = model.lines().position(|line| line.contains("block input")).unwrap() + 1;
    let at_print = fixes.iter().find(|fix| fix["line"] == print_line).unwrap_or_else(|| panic!("{proof:#}"));
    assert_eq!(at_print["code"], "TCF101");
    assert_eq!(at_print["effect"], "removed", "{proof:#}");
    assert!(fixes.iter().all(|fix| fix["effect"] == "removed"), "{proof:#}");
    assert!(proof["unexplained_after"].as_array().unwrap().is_empty(), "{proof:#}");

    assert_eq!(git(dir, &["status", "--porcelain"]), status_before, "the user's tree is unchanged");
    assert_eq!(std::fs::read_to_string(dir.join("model.py")).unwrap(), model);
    let kept = PathBuf::from(proof["kept"]["dir"].as_str().unwrap());
    let patch = std::fs::read_to_string(proof["kept"]["patch"].as_str().unwrap()).unwrap();
    assert!(patch.contains("+        if not torch.compiler.is_compiling():"), "{patch}");
    assert!(std::fs::read_to_string(kept.join("model.py")).unwrap().contains("is_compiling()"));
    std::fs::remove_dir_all(kept.parent().unwrap()).unwrap();
}

#[test]
fn a_two_process_run_gives_one_trace_per_rank_and_both_are_proven() {
    let Some(python) = venv_python() else { return };
    let python = python.to_str().unwrap();
    let model =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/evidence/models/two_ranks.py"));
    let repo = repository(&[("two_ranks.py", &model.unwrap())]);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
    let output =
        tcfix(repo.path(), &["prove", "--format", "json", "--timeout", "300", "--", python, "two_ranks.py", &port]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let proof: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(proof["before"]["ranks"], serde_json::json!([0, 1]), "{proof:#}");
    assert_eq!(proof["after"]["ranks"], serde_json::json!([0, 1]), "{proof:#}");
    // Each rank breaks at the print and at the branch on tensor data; the safe fix guards the
    // print, and the branch (an unsafe fix) is left.
    assert_eq!(proof["before"]["total"]["graph_breaks"], 4, "{proof:#}");
    assert_eq!(proof["after"]["total"]["graph_breaks"], 2, "{proof:#}");
    assert_eq!(proof["fixes"][0]["effect"], "removed", "{proof:#}");
    assert_eq!(proof["fixes"][0]["before"], 2, "{proof:#}");
}

/// A committed project with one hazard, for the runs that cannot prove anything.
fn small_project() -> tempfile::TempDir {
    repository(&[(
        "model.py",
        "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n",
    )])
}

#[test]
fn a_command_that_is_not_found_is_said_so() {
    let repo = small_project();
    let output = tcfix(repo.path(), &["prove", "--", "no-such-command-tcfix"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("command not found: `no-such-command-tcfix`"), "{}", stderr(&output));
}

#[test]
fn a_command_that_fails_shows_its_exit_status_and_the_end_of_its_stderr() {
    let repo = small_project();
    let output = tcfix(repo.path(), &["prove", "--", "sh", "-c", "echo one >&2; echo Traceback boom >&2; exit 3"]);
    assert_eq!(output.status.code(), Some(2));
    let said = stderr(&output);
    assert!(said.contains("the run before the fixes: the command exited with status 3"), "{said}");
    assert!(said.contains("one\nTraceback boom"), "{said}");
}

#[test]
fn a_command_that_never_compiles_wrote_no_trace() {
    let repo = small_project();
    let output = tcfix(repo.path(), &["prove", "--", "sh", "-c", "echo no torch here"]);
    assert_eq!(output.status.code(), Some(2));
    let said = stderr(&output);
    assert!(said.contains("wrote no trace"), "{said}");
    assert!(said.contains("never ran torch.compile"), "{said}");
}

#[test]
fn a_command_that_hangs_is_stopped_at_the_timeout() {
    let repo = small_project();
    let started = Instant::now();
    let output = tcfix(repo.path(), &["prove", "--timeout", "1", "--", "sh", "-c", "echo waiting >&2; sleep 60"]);
    assert!(started.elapsed().as_secs() < 30, "stopped, not waited for");
    assert_eq!(output.status.code(), Some(2));
    let said = stderr(&output);
    assert!(said.contains("did not finish within 1 s (--timeout)"), "{said}");
    assert!(said.contains("waiting"), "{said}");
}

#[test]
fn outside_git_it_refuses_clearly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("model.py"), "x = 1\n").unwrap();
    let output = tcfix(dir.path(), &["prove", "--", "true"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("tcfix prove needs a git repository"), "{}", stderr(&output));
}

#[test]
fn without_a_command_it_says_how_to_give_one() {
    let repo = small_project();
    let output = tcfix(repo.path(), &["prove"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("CMD"), "{}", stderr(&output));
}

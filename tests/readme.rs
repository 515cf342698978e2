//! The README is what a newcomer runs first: its snippets are run here, as written, on the model it
//! shows (`tests/evidence/models/flaky_net.py` as `models/net.py`, committed in a throwaway git
//! repository with an `origin/main`). Every `tcfix` command of its `sh` blocks and of its
//! workflow must run without an error (exit 0 or 1); the example output must be what `tcfix
//! models/` prints; every TOML block must be accepted by the configuration parser without a
//! warning; the pre-commit block's entries must be commands tcfix runs. Not run here: `pip
//! install` (no network; tests/packaging/wheel.sh installs the wheel), the Neovim 0.7 block
//! (tests/editor/run.sh runs it), the Neovim 0.11 block (CI's Neovim is 0.7).

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The README's fenced blocks: (language, lines).
fn blocks() -> Vec<(String, Vec<String>)> {
    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut blocks = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in readme.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(language)) => open = Some((language.trim().to_string(), Vec::new())),
            (Some(_), Some("")) => blocks.push(open.take().expect("open")),
            (Some((_, lines)), _) => lines.push(line.to_string()),
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README.md: a fence is not closed");
    blocks
}

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git").args(args).current_dir(dir).output().expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// A committed project holding the README's model, with `origin/main` at its first commit.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir_all(dir.path().join("models")).unwrap();
    fs::copy(root().join("tests/evidence/models/flaky_net.py"), dir.path().join("models/net.py")).unwrap();
    fs::create_dir_all(dir.path().join("trace")).unwrap();
    fs::copy(root().join("tests/data/evidence/flaky.trace.log"), dir.path().join("trace/rank0.log")).unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["-c", "user.name=t", "-c", "user.email=t@t", "add", "."]);
    git(dir.path(), &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "model"]);
    git(dir.path(), &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    dir
}

/// Runs a command line as the README writes it (words split on spaces, `"..."` quotes dropped,
/// `$GITHUB_BASE_REF` as GitHub sets it), in `dir`.
fn run(dir: &Path, line: &str) -> Output {
    let line = line.replace("$GITHUB_BASE_REF", "main").replace('"', "");
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[0], "tcfix", "{line}");
    Command::new(env!("CARGO_BIN_EXE_tcfix")).args(&words[1..]).current_dir(dir).output().expect("tcfix runs")
}

/// `tcfix prove -- python ...` runs the model: with the oracle's torch venv first on `PATH`, and
/// skipped without one unless `TCFIX_PROVE_NEEDS_VENV` is set (`.ci/run` sets it once the venv is made).
fn prove(dir: &Path, line: &str) -> Option<Output> {
    let home = std::env::var_os("HOME").unwrap_or_default();
    let venv = std::env::var_os("TCFIX_ORACLE_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(&home).join(".cache/tcfix-oracle/venv"));
    if !venv.join("bin/python").is_file() {
        assert!(std::env::var_os("TCFIX_PROVE_NEEDS_VENV").is_none(), "no torch venv at {}", venv.display());
        eprintln!("skipped `{line}`: no torch venv at {}", venv.display());
        return None;
    }
    let path = std::env::join_paths(
        std::iter::once(venv.join("bin")).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    let output =
        Command::new(env!("CARGO_BIN_EXE_tcfix")).args(&words[1..]).env("PATH", path).current_dir(dir).output();
    Some(output.expect("tcfix runs"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `tcfix models/   # comment` -> `tcfix models/`.
fn command(line: &str) -> Option<&str> {
    let line = line.trim().trim_start_matches("- run: ");
    let line = line.split("  #").next().unwrap_or(line).trim();
    line.starts_with("tcfix ").then_some(line)
}

#[test]
fn every_tcfix_command_of_the_readme_runs() {
    let mut commands = Vec::new();
    for (language, lines) in blocks() {
        if language == "sh" || language == "yaml" {
            commands.extend(lines.iter().filter_map(|line| command(line)).map(str::to_string));
        }
    }
    // The contributors' block runs `cargo run`, not `tcfix`: 4 uses, the trace, the workflow.
    assert!(commands.len() >= 6, "{commands:?}");
    for line in &commands {
        // Each in a fresh copy: --apply changes the model.
        let dir = project();
        let output = match line.starts_with("tcfix prove") {
            true => match prove(dir.path(), line) {
                Some(output) => output,
                None => continue,
            },
            false => run(dir.path(), line),
        };
        let code = output.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "`{line}` exited {code:?}: {}{}",
            text(&output.stdout),
            text(&output.stderr)
        );
        assert!(!text(&output.stderr).contains("error:"), "`{line}`: {}", text(&output.stderr));
    }
}

#[test]
fn the_readme_example_is_what_tcfix_prints() {
    let blocks = blocks();
    let example = blocks
        .iter()
        .find(|(language, lines)| {
            language.is_empty() && lines.first().is_some_and(|line| line.starts_with("models/net.py:"))
        })
        .expect("the README shows a report of models/net.py");
    let dir = project();
    let report = run(dir.path(), "tcfix models/");
    assert_eq!(text(&report.stdout), example.1.join("\n") + "\n");

    // The summary after --apply, as the README quotes it (without the backticks).
    let applied = run(dir.path(), "tcfix --apply models/");
    let summary = text(&applied.stdout).lines().last().unwrap_or_default().replace('`', "");
    let readme = fs::read_to_string(root().join("README.md")).unwrap().replace('\n', " ");
    let quoted = summary.trim_end_matches('.');
    assert!(readme.contains(&format!("`{quoted}`")), "the README should quote `{quoted}`");
}

#[test]
fn every_toml_block_of_the_readme_is_a_configuration_tcfix_accepts() {
    let mut checked = 0;
    for (language, lines) in blocks() {
        if language != "toml" {
            continue;
        }
        let dir = project();
        let text_of_block = lines.join("\n") + "\n";
        let name = if text_of_block.contains("[tool.tcfix") { "pyproject.toml" } else { "tcfix.toml" };
        // The baseline it names is one `--write-baseline` made.
        let written = run(dir.path(), "tcfix --isolated --write-baseline tcfix-baseline.json models/");
        assert_eq!(written.status.code(), Some(0), "{}", text(&written.stderr));
        fs::write(dir.path().join(name), &text_of_block).unwrap();
        let output = run(dir.path(), "tcfix models/");
        let stderr = text(&output.stderr);
        assert!(matches!(output.status.code(), Some(0 | 1)), "{name}:\n{text_of_block}\n{stderr}");
        assert!(!stderr.contains("warning") && !stderr.contains("error"), "{name}:\n{text_of_block}\n{stderr}");
        checked += 1;
    }
    assert!(checked >= 1, "the README has a configuration block");
}

#[test]
fn the_readme_pre_commit_hooks_run_tcfix() {
    let hooks = blocks()
        .into_iter()
        .find(|(language, lines)| language == "yaml" && lines.iter().any(|line| line.contains("repos:")))
        .expect("the README's .pre-commit-config.yaml");
    let entries: Vec<String> = hooks
        .1
        .iter()
        .filter_map(|line| line.trim().strip_prefix("entry:").map(|entry| entry.trim().to_string()))
        .collect();
    assert!(!entries.is_empty());
    for entry in entries {
        // pre-commit appends the staged files.
        let output = run(project().path(), &format!("{entry} models/net.py"));
        assert!(matches!(output.status.code(), Some(0 | 1)), "{entry}: {}", text(&output.stderr));
    }
    // The hook ids it names for the remote form are those .pre-commit-hooks.yaml defines.
    let defined = fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    for id in ["tcfix", "tcfix-fix"] {
        assert!(defined.contains(&format!("- id: {id}\n")), "{id}");
    }
}

//! `--trace` and `--torch-logs` end to end on small logs: a real TORCH_TRACE and TORCH_LOGS text of
//! tests/evidence/models/flaky_net.py (trimmed, its paths rewritten to another machine's
//! `/workspace/proj/...`), and hand-made corrupt, truncated, foreign and old-torch versions of it.
//! The logs of real runs, made fresh, are checked by tests/evidence/run.sh.
//!
//! The model (tests/data/evidence/proj/models/flaky_net.py): line 16 a print that never runs,
//! 18 a print, 19 a branch on tensor data, 21 a flag the loop flips (no rule), 32 a counter.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/evidence")
}

/// tcfix run from the fixture project, checking `models`.
fn tcfix(args: &[&str]) -> Output {
    let project = data().join("proj");
    Command::new(env!("CARGO_BIN_EXE_tcfix"))
        .arg("--isolated")
        .args(args)
        .arg("models")
        .current_dir(project)
        .output()
        .expect("tcfix runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json(output: &Output) -> Vec<serde_json::Value> {
    serde_json::from_str(&stdout(output)).expect("JSON findings")
}

/// `(code, line, state, graph breaks, recompiles)` of every finding.
fn states(findings: &[serde_json::Value]) -> Vec<(String, u64, String, u64, u64)> {
    findings
        .iter()
        .map(|finding| {
            let runtime = &finding["runtime"];
            (
                finding["code"].as_str().unwrap_or_default().to_string(),
                finding["location"]["row"].as_u64().unwrap_or_default(),
                runtime["state"].as_str().unwrap_or("none").to_string(),
                runtime["graph_breaks"].as_u64().unwrap_or_default(),
                runtime["recompiles"].as_u64().unwrap_or_default(),
            )
        })
        .collect()
}

fn joined(breaks_at_18: u64) -> Vec<(String, u64, String, u64, u64)> {
    let state_18 = if breaks_at_18 > 0 { "confirmed" } else { "not-seen" };
    vec![
        ("TCF101".into(), 16, "not-seen".into(), 0, 0),
        ("TCF101".into(), 18, state_18.into(), breaks_at_18, 0),
        ("TCF104".into(), 19, "confirmed".into(), 1, 0),
        ("TCF200".into(), 21, "runtime-only".into(), 0, 2),
        ("TCF203".into(), 32, "confirmed".into(), 0, 3),
    ]
}

#[test]
fn a_trace_from_another_machine_confirms_findings_and_reports_what_no_rule_explains() {
    let output = tcfix(&["--trace", "../flaky.trace.log", "--output-format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    assert_eq!(states(&json(&output)), joined(1));
}

#[test]
fn the_text_report_says_what_the_run_saw_under_each_finding_after_a_summary() {
    let output = tcfix(&["--trace", "../flaky.trace.log"]);
    let out = stdout(&output);
    let summary =
        "Runtime evidence (1 log, torch 2.15.0+cu132): 9 graphs, 2 graph breaks, 5 recompiles, 0.87 s compiling
  models/flaky_net.py:14 FlakyNet.forward: 5 graphs, 2 graph breaks, 2 recompiles, 0.55 s compiling
      line 18: TCF101 print-in-compiled-code: guard print and logging calls in compiled code (fix: `--apply`)
";
    assert!(out.starts_with(summary), "{out}");
    // The worst frame first: StepNorm compiled for less time.
    assert!(out.find("FlakyNet.forward").unwrap() < out.find("StepNorm.forward").unwrap());
    for expected in [
        "models/flaky_net.py:16:13: TCF101 high `print()` in `FlakyNet.forward` breaks the graph [*]\n    not seen in this run",
        "models/flaky_net.py:18:9: TCF101 high `print()` in `FlakyNet.forward` breaks the graph [*]\n    confirmed at runtime: 1 graph break, 0.28 s compiling\n",
        "models/flaky_net.py:21:9: TCF200 high recompile seen at runtime, no rule explains it: `self.use_bias` changed between calls (guard `self.use_bias == True` failed; guard `self.use_bias == False` failed)\n    seen at runtime, no rule: 2 recompiles, 0.08 s compiling\n",
        "line 32: TCF203 module-state-mutation",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }
    assert!(out.ends_with("Found 5 hazards (2 fixable with `--apply`, 2 more with `--unsafe-fixes`).\n"), "{out}");
}

#[test]
fn a_graph_break_carries_dynamos_reason_and_gb_code() {
    let findings = json(&tcfix(&["--trace", "../flaky.trace.log", "--output-format", "json"]));
    let branch = findings.iter().find(|finding| finding["code"] == "TCF104").expect("TCF104");
    let reasons = branch["runtime"]["reasons"].to_string();
    assert!(reasons.contains("Data-dependent branching") && reasons.contains("[GB0170]"), "{reasons}");
    assert!(branch["runtime"]["compile_seconds"].as_f64().unwrap() > 0.0);
}

#[test]
fn the_text_log_of_the_same_run_joins_the_same_way() {
    let output = tcfix(&["--torch-logs", "../flaky.torch_logs.txt", "--output-format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(states(&json(&output)), joined(1));
}

#[test]
fn the_text_log_reads_from_standard_input() {
    let text = std::fs::read(data().join("flaky.torch_logs.txt")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcfix"))
        .args(["--isolated", "--torch-logs", "-", "--output-format", "json", "models"])
        .current_dir(data().join("proj"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("tcfix runs");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &text).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(states(&json(&output)), joined(1));
}

#[test]
fn a_corrupt_line_is_reported_where_it_is_and_the_rest_is_read() {
    let output = tcfix(&["--trace", "../corrupt.trace.log", "--output-format", "json"]);
    let err = stderr(&output);
    assert!(err.contains("../corrupt.trace.log:8: warning: not a trace event, skipped"), "{err}");
    assert!(err.contains("../corrupt.trace.log:9: warning: corrupt event, skipped"), "{err}");
    // The corrupt line was the print's graph break: the print is compiled code with no event now.
    assert_eq!(states(&json(&output)), joined(0));
    assert_eq!(output.status.code(), Some(1), "warnings do not change the exit code");
}

#[test]
fn a_truncated_log_says_so_and_keeps_what_came_before() {
    let output = tcfix(&["--trace", "../truncated.trace.log", "--output-format", "json"]);
    let err = stderr(&output);
    assert!(err.contains("../truncated.trace.log:122: warning: truncated event (the log ends mid-line)"), "{err}");
    assert_eq!(states(&json(&output)), joined(1));
}

#[test]
fn a_foreign_file_is_an_error_and_the_static_report_still_comes() {
    let output = tcfix(&["--trace", "../foreign.log", "--output-format", "concise"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("error: ../foreign.log: not a TORCH_TRACE log"), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.starts_with("models/flaky_net.py:16:13: TCF101"), "no summary of nothing: {out}");
    assert!(!out.contains("TCF200"));
}

#[test]
fn each_log_kind_given_for_the_other_says_which_flag_reads_it() {
    let output = tcfix(&["--trace", "../flaky.torch_logs.txt", "-q"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("this is TORCH_LOGS text output, not a TORCH_TRACE log: read it with `--torch-logs")
    );
    let output = tcfix(&["--torch-logs", "../flaky.trace.log", "-q"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("this is a TORCH_TRACE log, not TORCH_LOGS text output: read it with `--trace"));
}

#[test]
fn a_missing_trace_and_a_directory_without_logs_are_errors() {
    let output = tcfix(&["--trace", "nowhere", "-q"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("error: nowhere: no such trace file or directory"));
    assert!(output.stdout.is_empty(), "a mistyped path stops the run before any report");
    let output = tcfix(&["--trace", "models", "-q"]);
    assert!(stderr(&output).contains("error: models: no `.log` files"), "{}", stderr(&output));
}

#[test]
fn a_log_of_an_untested_torch_is_read_with_a_warning() {
    let output = tcfix(&["--trace", "../old_torch.trace.log", "--output-format", "json"]);
    assert!(
        stderr(&output).contains("warning: the trace was written by torch 2.9.1+cpu; tcfix reads logs of torch 2.15")
    );
    assert_eq!(states(&json(&output)), joined(1));
}

#[test]
fn a_trace_directory_reads_every_log_in_it_as_a_rank() {
    let dir = tempfile::tempdir().unwrap();
    let trace = std::fs::read_to_string(data().join("flaky.trace.log")).unwrap();
    std::fs::write(dir.path().join("dedicated_log_torch_trace_rank_0_a.log"), &trace).unwrap();
    std::fs::write(dir.path().join("dedicated_log_torch_trace_rank_1_b.log"), &trace).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a log").unwrap();
    let output = tcfix(&["--trace", dir.path().to_str().unwrap(), "--output-format", "json"]);
    let findings = json(&output);
    let print = findings.iter().find(|f| f["location"]["row"] == 18).expect("the print");
    assert_eq!(print["runtime"]["graph_breaks"], 2);
    assert_eq!(print["runtime"]["per_rank"], serde_json::json!({"0": 1, "1": 1}));
    let text = stdout(&tcfix(&["--trace", dir.path().to_str().unwrap()]));
    assert!(text.starts_with("Runtime evidence (2 logs, ranks 0, 1, torch 2.15.0+cu132)"), "{text}");
    assert!(text.contains("confirmed at runtime: 2 graph breaks (rank 0: 1, rank 1: 1)"), "{text}");
}

#[test]
fn sort_cost_puts_what_the_run_paid_for_most_first() {
    let out = stdout(&tcfix(&["--trace", "../flaky.trace.log", "--sort", "cost", "--output-format", "concise"]));
    let codes: Vec<(&str, &str)> = out
        .lines()
        .filter(|line| line.starts_with("models/"))
        .map(|line| {
            let mut parts = line.split(' ');
            (parts.next().unwrap(), parts.next().unwrap())
        })
        .collect();
    // 0.28 s, 0.24 s, 0.08 s (two recompiles), 0.08 s (one break), then the finding not seen.
    let order: Vec<&str> = codes.iter().map(|(_, code)| *code).collect();
    assert_eq!(order, ["TCF101", "TCF203", "TCF200", "TCF104", "TCF101"], "{out}");
    assert!(codes[4].0.starts_with("models/flaky_net.py:16:"));
}

#[test]
fn sarif_and_markdown_carry_the_evidence() {
    let sarif: serde_json::Value =
        serde_json::from_str(&stdout(&tcfix(&["--trace", "../flaky.trace.log", "--output-format", "sarif"]))).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let unexplained = results.iter().find(|result| result["ruleId"] == "TCF200").expect("TCF200");
    assert_eq!(unexplained["properties"]["runtime"]["state"], "runtime-only");
    assert_eq!(unexplained["properties"]["runtime"]["guarded"], serde_json::json!(["self.use_bias"]));
    assert!(unexplained.get("ruleIndex").is_none(), "TCF200 is no rule of the driver's");

    let markdown = stdout(&tcfix(&["--trace", "../flaky.trace.log", "--output-format", "markdown"]));
    assert!(markdown.starts_with("### Runtime evidence\n"), "{markdown}");
    assert!(markdown.contains("| `models/flaky_net.py:14` `FlakyNet.forward` | 5 | 2 | 2 | 0.55 s |"), "{markdown}");
    assert!(markdown.contains("**At runtime:** confirmed at runtime: 1 graph break"), "{markdown}");
}

#[test]
fn select_leaves_out_the_runtime_only_findings_of_other_categories() {
    let output = tcfix(&["--trace", "../flaky.trace.log", "--select", "graph-break", "--output-format", "json"]);
    let codes: Vec<String> = states(&json(&output)).into_iter().map(|(code, ..)| code).collect();
    assert_eq!(codes, ["TCF101", "TCF101", "TCF104"]);
}

#[test]
fn writing_fixes_with_a_trace_is_refused() {
    let output = tcfix(&["--trace", "../flaky.trace.log", "--apply"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("'--trace <PATH>' cannot be used with '--apply'"));
}

#[test]
fn a_suppression_comment_silences_a_runtime_only_finding() {
    let dir = tempfile::tempdir().unwrap();
    let model = std::fs::read_to_string(data().join("proj/models/flaky_net.py")).unwrap();
    let silenced = model.replace("        if self.use_bias:\n", "        if self.use_bias:  # noqa: TCF200\n");
    assert_ne!(model, silenced);
    std::fs::create_dir(dir.path().join("models")).unwrap();
    std::fs::write(dir.path().join("models/flaky_net.py"), silenced).unwrap();
    let trace = data().join("flaky.trace.log");
    let output = Command::new(env!("CARGO_BIN_EXE_tcfix"))
        .args(["--isolated", "--output-format", "json", "--trace", trace.to_str().unwrap(), "models"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let codes: Vec<String> = states(&json(&output)).into_iter().map(|(code, ..)| code).collect();
    assert_eq!(codes, ["TCF101", "TCF101", "TCF104", "TCF203"]);
}

#[test]
fn two_processes_in_one_text_log_count_twice() {
    let dir = tempfile::tempdir().unwrap();
    let log = std::fs::read_to_string(data().join("flaky.torch_logs.txt")).unwrap();
    let thread = log.lines().nth(1).and_then(|line| line.split_whitespace().nth(2)).unwrap().to_string();
    let other = log.replace(&format!(" {thread} "), " 424242 ");
    assert_ne!(log, other);
    let both = dir.path().join("both.txt");
    std::fs::write(&both, format!("{log}{other}")).unwrap();
    let output = tcfix(&["--torch-logs", both.to_str().unwrap(), "--output-format", "json"]);
    let doubled: Vec<(String, u64, String, u64, u64)> = joined(1)
        .into_iter()
        .map(|(code, line, state, breaks, recompiles)| (code, line, state, breaks * 2, recompiles * 2))
        .collect();
    assert_eq!(states(&json(&output)), doubled);
}

#[test]
fn a_log_of_other_files_says_none_of_its_events_is_here() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("models")).unwrap();
    std::fs::write(dir.path().join("models/other.py"), "import torch\n").unwrap();
    let trace = data().join("flaky.trace.log");
    let output = Command::new(env!("CARGO_BIN_EXE_tcfix"))
        .args(["--isolated", "--trace", trace.to_str().unwrap(), "models"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .contains("warning: none of the 7 graph breaks and recompiles in the logs is in the checked files"),
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).contains("/workspace/proj/models/flaky_net.py:18: not in the checked files"));
}

#[test]
fn explain_knows_the_runtime_only_codes() {
    let output = Command::new(env!("CARGO_BIN_EXE_tcfix")).args(["explain", "TCF200"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).starts_with("# recompile-seen-at-runtime (TCF200)\n"), "{}", stdout(&output));
}

/// A trace recorded before the code changed is said to be one: its tracebacks quote the lines
/// the run executed, and a checked file whose line differs now is named with the first such line.
/// The unchanged project gets no such warning, for the trace and the text log alike.
#[test]
fn a_log_of_code_that_has_changed_since_is_warned_about() {
    for log in ["--trace=../flaky.trace.log", "--torch-logs=../flaky.torch_logs.txt"] {
        let same = tcfix(&[log]);
        assert!(!stderr(&same).contains("recorded on other code"), "{log}: {}", stderr(&same));
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("proj/models")).unwrap();
    let model = std::fs::read_to_string(data().join("proj/models/flaky_net.py")).unwrap();
    assert!(model.contains("print(\"hidden\", x.shape)"));
    let edited = model.replace("print(\"hidden\", x.shape)", "print(\"hidden:\", x.shape)");
    std::fs::write(dir.path().join("proj/models/flaky_net.py"), edited).unwrap();
    for log in ["flaky.trace.log", "flaky.torch_logs.txt"] {
        std::fs::copy(data().join(log), dir.path().join(log)).unwrap();
    }
    for log in ["--trace=../flaky.trace.log", "--torch-logs=../flaky.torch_logs.txt"] {
        let output = Command::new(env!("CARGO_BIN_EXE_tcfix"))
            .args(["--isolated", log, "models"])
            .current_dir(dir.path().join("proj"))
            .output()
            .expect("tcfix runs");
        let err = stderr(&output);
        assert!(
            err.contains(
                "warning: models/flaky_net.py: the log was recorded on other code: line 18 ran as \
                 `print(\"hidden\", x.shape)`, and is now `print(\"hidden:\", x.shape)`"
            ),
            "{log}: {err}"
        );
        assert_eq!(output.status.code(), Some(1), "a warning does not change the exit code");
    }
}

//! `tcfix why PATH:LINE`, one test per reason it gives: a line compiled through a chain of calls,
//! not reached, on a dead path, at module level; a name taken for a tensor (and from what), for a
//! Python value; a rule that reported, and rules that matched nothing.

use std::path::Path;
use std::process::Command;

const MODEL: &str = r#"import torch
from torch import nn

WIDTH = 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.register_buffer("scale", torch.ones(4))

    def forward(self, x: torch.Tensor, steps=2):
        h = self.proj(x) * self.scale
        n = len(h)
        h = helper(h, n)
        try:
            h = h + 1
        except RuntimeError:
            print("failed", n)
        return h

    def export(self, path):
        print("exporting", path)


def helper(h, n):
    print("helper", n)
    return h * 2
"#;

/// `tcfix why` at `line` (and `column`) of the model, in a directory of its own.
fn why(place: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("net.py"), MODEL).unwrap();
    let output = run(dir.path(), &["why", place]);
    assert!(output.status.success(), "tcfix why {place}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tcfix")).args(args).current_dir(dir).output().expect("tcfix runs")
}

/// The line of the answer about `name`, and the evidence lines under it.
fn name_account(answer: &str, name: &str) -> String {
    let mut lines = answer.lines().skip_while(|line| !line.starts_with(&format!("  {name}: ")));
    let first = lines.next().unwrap_or_else(|| panic!("no {name} in:\n{answer}"));
    let evidence = lines.take_while(|line| line.starts_with("      "));
    std::iter::once(first).chain(evidence).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_line_reached_through_a_call_names_its_entry_point_and_the_chain() {
    let answer = why("net.py:28");
    assert!(
        answer.contains(
            "Compiled: yes, in `helper`, entered as the forward of an nn.Module; calls: Net.forward → helper"
        ),
        "{answer}"
    );
}

#[test]
fn a_method_nothing_compiled_calls_is_not_reached() {
    let answer = why("net.py:24");
    assert!(answer.contains("Compiled: no, not reached: no compiled entry point"), "{answer}");
    assert!(answer.contains("calls `Net.export`"), "{answer}");
    assert!(answer.contains("TCF101 print-in-compiled-code: silent: it looks only at compiled code"), "{answer}");
}

#[test]
fn a_modules_init_runs_before_compiling() {
    let answer = why("net.py:10");
    assert!(answer.contains("Compiled: no, `Net.__init__` builds the module: it runs before compiling"), "{answer}");
}

#[test]
fn an_except_handler_is_a_dead_path() {
    let answer = why("net.py:20");
    assert!(
        answer.contains("Compiled: `Net.forward` is, but not this line on a normal call: an `except` handler"),
        "{answer}"
    );
    assert!(answer.contains("TCF101 print-in-compiled-code: silent: the line is on a dead path"), "{answer}");
}

#[test]
fn module_level_code_is_not_compiled() {
    let answer = why("net.py:4");
    assert!(answer.contains("Compiled: no, module-level code"), "{answer}");
}

#[test]
fn a_name_is_a_tensor_from_its_binding_and_an_annotation_says_so_for_a_parameter() {
    let answer = why("net.py:14");
    let h = name_account(&answer, "h");
    assert!(h.starts_with("  h: a tensor"), "{h}");
    assert!(h.contains("line 14: `self.proj(x) * self.scale`: a tensor"), "{h}");
    let x = name_account(&answer, "x");
    assert!(x.contains("a parameter annotated as a tensor"), "{x}");
    let scale = name_account(&answer, "self.scale");
    assert!(scale.contains("a parameter or buffer of the module"), "{scale}");
    let proj = name_account(&answer, "self.proj");
    assert!(proj.contains("a submodule"), "{proj}");
}

#[test]
fn a_name_bound_to_len_is_a_python_value() {
    let answer = why("net.py:16");
    let n = name_account(&answer, "n");
    assert!(n.contains("taken for not a tensor"), "{n}");
    assert!(n.contains("line 15: `len(h)`: a Python value"), "{n}");
    let helper = name_account(&answer, "helper");
    assert!(helper.contains("a function of this file"), "{helper}");
}

#[test]
fn a_rule_that_reported_says_what() {
    let answer = why("net.py:28");
    let reported = answer.lines().find(|line| line.contains("TCF101")).unwrap();
    assert!(reported.contains("reported: `print()` in `helper`"), "{answer}");
    let rules = answer.split("\nRules:\n").nth(1).unwrap();
    assert!(rules.starts_with("  TCF101"), "reported rules come first:\n{rules}");
}

#[test]
fn rules_that_matched_nothing_say_so_and_rules_that_did_not_run_say_why() {
    let answer = why("net.py:18");
    assert!(answer.contains("TCF104 data-dependent-branch: nothing on this line matched what it finds:"), "{answer}");
    assert!(
        answer.contains("TCF108 deprecated-sdp-kernel: did not run: the file never names `sdp_kernel`"),
        "{answer}"
    );
    assert!(!answer.contains(": reported"), "{answer}");
}

#[test]
fn a_column_narrows_the_names_to_those_from_it() {
    let answer = why("net.py:16:13");
    assert!(answer.contains("\n  helper: "), "{answer}");
    assert!(!answer.contains("\n  h: "), "`h` before the column is left out:\n{answer}");
}

#[test]
fn a_line_past_the_end_or_a_bad_place_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("net.py"), MODEL).unwrap();
    let past = run(dir.path(), &["why", "net.py:999"]);
    assert_eq!(past.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&past.stderr).contains("has 29 lines, not 999"));
    let bad = run(dir.path(), &["why", "net.py"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("PATH:LINE"));
}

#[test]
fn a_line_under_a_guard_false_under_dynamo_runs_only_eagerly() {
    let dir = tempfile::tempdir().unwrap();
    let model = "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        if torch.jit.is_scripting():\n            print(\"scripted\")\n        return x * 2\n";
    std::fs::write(dir.path().join("net.py"), model).unwrap();
    let output = run(dir.path(), &["why", "net.py:8"]);
    let answer = String::from_utf8_lossy(&output.stdout);
    assert!(answer.contains("this line runs only eagerly"), "{answer}");
    let compiled = run(dir.path(), &["why", "net.py:9"]);
    assert!(String::from_utf8_lossy(&compiled.stdout).contains("Compiled: yes"));
}

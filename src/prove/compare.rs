//! `--compare-output`: the command saved its outputs (a tensor, or a dict, list or tuple of
//! them, with `torch.save`) in both runs; torch itself compares them, under the Python the user
//! names (tcfix cannot know the command's own interpreter).

use std::path::Path;
use std::process::Command;

use serde::Deserialize;

/// What the comparison found.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
pub struct Comparison {
    pub equal: bool,
    /// The largest absolute difference over all tensors (0 when equal bit for bit).
    pub max_abs_diff: f64,
    /// The tensors compared.
    pub tensors: usize,
    /// Why they differ when not by value: a key, a shape or a dtype that does not match.
    pub mismatch: Option<String>,
}

/// Loads both files and walks them together; prints one JSON line.
const COMPARE: &str = r#"
import json, sys, torch
before, after, rtol, atol = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
found = {"equal": True, "max_abs_diff": 0.0, "tensors": 0, "mismatch": None}
def differ(where, why):
    found["equal"] = False
    found["mismatch"] = found["mismatch"] or f"{where}: {why}"
def walk(a, b, where):
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        found["tensors"] += 1
        if a.shape != b.shape or a.dtype != b.dtype:
            return differ(where, f"{tuple(a.shape)} {a.dtype} before, {tuple(b.shape)} {b.dtype} after")
        if a.numel():
            diff = (a.detach().double() - b.detach().double()).abs().max().item()
            found["max_abs_diff"] = max(found["max_abs_diff"], diff)
        if not torch.allclose(a.detach(), b.detach(), rtol=rtol, atol=atol, equal_nan=True):
            found["equal"] = False
    elif isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return differ(where, f"keys {sorted(map(str, a))} before, {sorted(map(str, b))} after")
        for key in a:
            walk(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return differ(where, f"{len(a)} items before, {len(b)} after")
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{where}[{i}]")
    elif a != b:
        differ(where, f"{a!r} before, {b!r} after")
walk(torch.load(before, weights_only=False), torch.load(after, weights_only=False), "output")
print(json.dumps(found))
"#;

/// The tolerance of `torch.allclose`.
#[derive(Debug, Clone, Copy)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

/// Compare the outputs of the two runs, or say why they could not be compared.
pub fn compare(python: &str, before: &Path, after: &Path, tolerance: Tolerance) -> Result<Comparison, String> {
    for (run, path) in [("before", before), ("after", after)] {
        if !path.is_file() {
            return Err(format!(
                "the run {run} the fixes wrote no output to {} (the command saves it with \
                 `torch.save(outputs, os.environ[\"TCFIX_PROVE_OUTPUT\"])`)",
                path.display()
            ));
        }
    }
    let done = Command::new(python)
        .args(["-c", COMPARE])
        .arg(before)
        .arg(after)
        .args([tolerance.rtol.to_string(), tolerance.atol.to_string()])
        .output()
        .map_err(|err| format!("cannot run `{python}` to compare the outputs (--python): {err}"))?;
    if !done.status.success() {
        let stderr = String::from_utf8_lossy(&done.stderr);
        let last = stderr.lines().last().unwrap_or_default();
        return Err(format!(
            "`{python}` could not compare the outputs (it needs torch; --python names another): {last}"
        ));
    }
    let stdout = String::from_utf8_lossy(&done.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).map_err(|err| format!("cannot read the comparison ({err}): {line}"))
}

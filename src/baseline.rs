//! The baseline: findings a codebase already had when it adopted tcfix, recorded in a file
//! (`--write-baseline FILE`) so that later runs (`--baseline FILE`, or `baseline` in the
//! configuration) report only new ones, without a `# noqa` comment on every old line.
//!
//! A finding is recorded by its rule, its file and a fingerprint of its code that survives line
//! shifts: the names of the `class`/`def` blocks around it and its source text without whitespace,
//! hashed, then `:n`, its rank among the file's findings of the same rule with the same
//! hash (two identical `print(x)` in one forward). Editing code above a finding, re-indenting it
//! or moving it within its function keeps the fingerprint; editing its own text, or renaming the
//! function around it, makes it a new finding. SARIF's `partialFingerprints` carries the same
//! value, so code scanning tracks a finding across commits the same way.

use rustc_hash::FxHashSet as HashSet;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::diagnostic::Diagnostic;

/// Sets every finding's `fingerprint`. `diagnostics` are all of one file's findings in `text`:
/// the rank part depends on the others.
pub fn fingerprint(text: &str, diagnostics: &mut [Diagnostic]) {
    let hashes: Vec<u64> = diagnostics.iter().map(|diagnostic| code_hash(text, diagnostic)).collect();
    let mut order: Vec<usize> = (0..diagnostics.len()).collect();
    order.sort_by_key(|&i| (hashes[i], diagnostics[i].range.start(), diagnostics[i].range.end()));
    let mut rank = 0;
    for (position, &i) in order.iter().enumerate() {
        rank = if position > 0 && hashes[order[position - 1]] == hashes[i] { rank + 1 } else { 0 };
        diagnostics[i].fingerprint = format!("{:016x}:{rank}", hashes[i]);
    }
}

/// The rule, the blocks around the finding and its code without whitespace (a formatter that
/// re-wraps a call keeps it).
fn code_hash(text: &str, diagnostic: &Diagnostic) -> u64 {
    let start = usize::from(diagnostic.range.start());
    let code = text.get(start..usize::from(diagnostic.range.end())).unwrap_or_default();
    let code: String = code.split_whitespace().collect();
    fnv1a(&[diagnostic.rule.code, &enclosing_blocks(text, start), &code])
}

/// `VLM.forward`: the `class` and `def` names around `offset`, outermost first, read from the
/// indentation of the lines above it (no parse needed; a stable answer is all that matters). An
/// `if`, `for`, `with`... line less indented than the finding is a block around it too, unnamed:
/// past it the scan looks only for blocks around that line, so a finding under a module-level
/// `if __name__ == "__main__":` is not taken to be in the last function above it (a function
/// added in between would change its fingerprint).
fn enclosing_blocks(text: &str, offset: usize) -> String {
    let line_start = text[..offset].rfind('\n').map_or(0, |newline| newline + 1);
    let line = &text[line_start..];
    let mut indent = line.len() - line.trim_start_matches([' ', '\t']).len();
    let mut names = Vec::new();
    for above in text[..line_start].lines().rev() {
        if indent == 0 {
            break;
        }
        let trimmed = above.trim_start_matches([' ', '\t']);
        let width = above.len() - trimmed.len();
        if width >= indent {
            continue;
        }
        if let Some(name) = block_name(trimmed) {
            names.push(name);
            indent = width;
        } else if opens_unnamed_block(trimmed) {
            indent = width;
        }
    }
    names.reverse();
    names.join(".")
}

/// The name a `def`, `async def` or `class` line opens.
fn block_name(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("async ").map_or(line, str::trim_start);
    let rest = rest.strip_prefix("def ").or_else(|| rest.strip_prefix("class "))?.trim_start();
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Whether a line opens a compound statement other than `def` and `class`.
fn opens_unnamed_block(line: &str) -> bool {
    const KEYWORDS: [&str; 12] =
        ["if", "elif", "else", "for", "while", "with", "try", "except", "finally", "match", "case", "async"];
    let word = line.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or_default();
    KEYWORDS.contains(&word)
}

/// FNV-1a, 64 bits: fixed by its definition, so fingerprints stay the same across tcfix builds
/// (std's hasher makes no such promise).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// The file's form. `line` and `message` are for people reading the file; matching uses the rule,
/// the path (relative to the baseline file's directory) and the fingerprint.
#[derive(Serialize, Deserialize)]
struct BaselineFile {
    #[serde(rename = "tcfix-baseline")]
    version: u32,
    findings: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    code: String,
    path: String,
    fingerprint: String,
    #[serde(default)]
    line: usize,
    #[serde(default)]
    message: String,
}

const VERSION: u32 = 1;

/// Findings recorded in a baseline file, to leave out of reports.
pub struct Baseline {
    /// The file, as named (for messages).
    pub path: PathBuf,
    /// The directory recorded paths are relative to (canonical).
    root: PathBuf,
    entries: HashSet<(String, String, String)>,
}

impl Baseline {
    pub fn read(path: &Path) -> Result<Self> {
        let shown = path.display();
        let text = std::fs::read_to_string(path).with_context(|| {
            format!("{shown}: cannot read the baseline (write one with `tcfix --write-baseline {shown}`)")
        })?;
        let file: BaselineFile =
            serde_json::from_str(&text).with_context(|| format!("{shown}: not a tcfix baseline"))?;
        if file.version != VERSION {
            bail!("{shown}: a version {} baseline; this tcfix reads version {VERSION}", file.version);
        }
        let entries = file.findings.into_iter().map(|entry| (entry.code, entry.path, entry.fingerprint)).collect();
        Ok(Self { path: path.to_path_buf(), root: root_of(path), entries })
    }

    /// Whether the finding of `file` (canonical) is recorded.
    pub fn holds(&self, file: &Path, diagnostic: &Diagnostic) -> bool {
        let Some(relative) = relative(&self.root, file) else { return false };
        self.entries.contains(&(diagnostic.rule.code.to_string(), relative, diagnostic.fingerprint.clone()))
    }
}

/// One file's findings to record: its canonical path, its text and its findings (fingerprinted).
pub struct Recorded<'a> {
    pub file: PathBuf,
    pub text: &'a str,
    pub diagnostics: &'a [Diagnostic],
}

/// Writes every finding of `files` to the baseline at `path`; how many were written.
pub fn write(path: &Path, files: &[Recorded]) -> Result<usize> {
    let root = root_of(path);
    let mut findings = Vec::new();
    for recorded in files {
        let shown = relative(&root, &recorded.file).unwrap_or_else(|| recorded.file.to_string_lossy().into_owned());
        for diagnostic in recorded.diagnostics {
            let line = recorded.text[..usize::from(diagnostic.range.start())].matches('\n').count() + 1;
            findings.push(Entry {
                code: diagnostic.rule.code.to_string(),
                path: shown.clone(),
                fingerprint: diagnostic.fingerprint.clone(),
                line,
                message: diagnostic.message.clone(),
            });
        }
    }
    findings
        .sort_by(|a, b| (&a.path, a.line, &a.code, &a.fingerprint).cmp(&(&b.path, b.line, &b.code, &b.fingerprint)));
    let count = findings.len();
    let mut text = serde_json::to_string_pretty(&BaselineFile { version: VERSION, findings })?;
    text.push('\n');
    std::fs::write(path, &text).with_context(|| format!("{}: cannot write the baseline", path.display()))?;
    Ok(count)
}

/// The canonical directory a baseline's paths are relative to.
fn root_of(path: &Path) -> PathBuf {
    let absolute = crate::discover::canonical(path);
    absolute.parent().map(crate::discover::canonical).unwrap_or(absolute)
}

/// `file` relative to `root`, `/`-separated: `models/vlm.py`, or `../models/vlm.py` for a baseline
/// kept in `.github/`. `None` only when they share no ancestor (another drive on Windows).
fn relative(root: &Path, file: &Path) -> Option<String> {
    let (root, file): (Vec<Component>, Vec<Component>) = (root.components().collect(), file.components().collect());
    let shared = root.iter().zip(&file).take_while(|(a, b)| a == b).count();
    if shared == 0 {
        return None;
    }
    let up = std::iter::repeat_n("..".to_string(), root.len() - shared);
    let down = file[shared..].iter().map(|part| part.as_os_str().to_string_lossy().into_owned());
    Some(up.chain(down).collect::<Vec<_>>().join("/"))
}

#[cfg(test)]
mod tests {
    use ruff_text_size::{TextRange, TextSize};

    use super::*;
    use crate::rules::RULES;

    fn finding_at(text: &str, needle: &str, nth: usize) -> Diagnostic {
        let start = text.match_indices(needle).nth(nth).expect("the needle is there").0;
        let range = TextRange::at(TextSize::try_from(start).unwrap(), TextSize::of(needle));
        Diagnostic::new(RULES[0], range, "test")
    }

    fn fingerprints(text: &str, needles: &[(&str, usize)]) -> Vec<String> {
        let mut found: Vec<Diagnostic> = needles.iter().map(|(needle, nth)| finding_at(text, needle, *nth)).collect();
        fingerprint(text, &mut found);
        found.into_iter().map(|d| d.fingerprint).collect()
    }

    const MODEL: &str = "class Net:\n    def forward(self, x):\n        print(x)\n        return x\n\n    def other(self, x):\n        print(x)\n";

    #[test]
    fn a_fingerprint_survives_lines_added_above_and_reindenting() {
        let before = fingerprints(MODEL, &[("print(x)", 0)]);
        let shifted = format!(
            "import torch\n\n\n{}",
            MODEL.replace("        print(x)\n        return", "        y = 1\n        print( x )\n        return")
        );
        assert_eq!(fingerprints(&shifted, &[("print( x )", 0)]), before);
        let guarded = MODEL.replacen("        print(x)", "        if True:\n            print(x)", 1);
        assert_eq!(fingerprints(&guarded, &[("print(x)", 0)]), before, "a block around it is no def or class");
    }

    #[test]
    fn the_same_code_in_another_function_or_twice_differs() {
        let both = fingerprints(MODEL, &[("print(x)", 0), ("print(x)", 1)]);
        assert_ne!(both[0], both[1], "forward and other");
        let twice = MODEL.replacen("        print(x)\n", "        print(x)\n        print(x)\n", 1);
        let ranks = fingerprints(&twice, &[("print(x)", 1), ("print(x)", 0)]);
        assert!(ranks[0].ends_with(":1") && ranks[1].ends_with(":0"), "{ranks:?}");
        assert_eq!(ranks[1], both[0]);
    }

    #[test]
    fn blocks_are_read_from_indentation() {
        let text = "class A:\n    def f(self):\n        pass\n    x = 1\nasync def g():\n\tdef h():\n\t\ty = 2\n";
        assert_eq!(enclosing_blocks(text, text.find("x = 1").unwrap()), "A");
        assert_eq!(enclosing_blocks(text, text.find("y = 2").unwrap()), "g.h");
        assert_eq!(enclosing_blocks(text, text.find("class A").unwrap()), "");
        let main = "def helper():\n    pass\n\n\nif __name__ == \"__main__\":\n    for i in range(2):\n        run()\n";
        assert_eq!(enclosing_blocks(main, main.find("run()").unwrap()), "", "not in `helper`");
        let nested = "class A:\n    def f(self):\n        with x:\n            if y:\n                z()\n";
        assert_eq!(enclosing_blocks(nested, nested.find("z()").unwrap()), "A.f");
        // Pinned: baselines written by one tcfix must match in the next, so the hash may never change.
        assert_eq!(fnv1a(&["a"]), 0x089be207b544f1e4);
        assert_ne!(fnv1a(&["ab", "c"]), fnv1a(&["a", "bc"]));
    }

    #[test]
    fn a_written_baseline_holds_its_findings() {
        let dir = tempfile::tempdir().unwrap();
        let file = crate::discover::canonical(&dir.path().join("models/net.py"));
        let mut found = vec![finding_at(MODEL, "print(x)", 0)];
        fingerprint(MODEL, &mut found);
        let path = dir.path().join("baseline.json");
        let written = write(&path, &[Recorded { file: file.clone(), text: MODEL, diagnostics: &found }]).unwrap();
        assert_eq!(written, 1);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"path\": \"models/net.py\"") && text.contains("\"line\": 3"), "{text}");
        let baseline = Baseline::read(&path).unwrap();
        assert!(baseline.holds(&file, &found[0]));
        assert!(!baseline.holds(&crate::discover::canonical(&dir.path().join("other.py")), &found[0]));

        // Kept away from the code, in `.github/`: the paths climb out of its directory.
        let kept = dir.path().join(".github/tcfix-baseline.json");
        std::fs::create_dir(dir.path().join(".github")).unwrap();
        write(&kept, &[Recorded { file: file.clone(), text: MODEL, diagnostics: &found }]).unwrap();
        let text = std::fs::read_to_string(&kept).unwrap();
        assert!(text.contains("\"path\": \"../models/net.py\""), "{text}");
        assert!(Baseline::read(&kept).unwrap().holds(&file, &found[0]));

        std::fs::write(&path, "{\"tcfix-baseline\": 9, \"findings\": []}").unwrap();
        let err = format!("{:#}", Baseline::read(&path).err().unwrap());
        assert!(err.contains("a version 9 baseline"), "{err}");
    }
}

//! Which findings a run is about: all of them, or only those on the lines a change touched
//! (`--diff-base`, see `changed_lines`) and not recorded in a baseline (`--baseline`, see
//! `baseline`). The whole project is analysed either way; the findings outside the scope are
//! dropped from each file's findings as they are made, after the rules (`check_model`), so the
//! report, the fixes, the diffs, the patches and `--add-noqa` all see the same ones. The run keeps count of what it left out, for the
//! summary.

use rustc_hash::FxHashMap as HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ruff_source_file::LineIndex;

use crate::baseline::Baseline;
use crate::changed_lines::ChangedLines;
use crate::diagnostic::Diagnostic;
use crate::discover::canonical;

pub struct Scope {
    pub changed: Option<ChangedLines>,
    pub baseline: Option<Baseline>,
    /// What the latest analysis of each file left out (a file analysed again, fixed or not,
    /// replaces its count).
    left_out: Mutex<HashMap<PathBuf, LeftOut>>,
}

/// Findings a run did not report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// On lines the change did not touch.
    pub unchanged: usize,
    /// Recorded in the baseline.
    pub baselined: usize,
}

impl Scope {
    pub fn new(changed: Option<ChangedLines>, baseline: Option<Baseline>) -> Self {
        Self { changed, baseline, left_out: Mutex::default() }
    }

    /// Drops the findings of `path` (whose text is `text`) that are outside the scope.
    pub fn retain(&self, path: &Path, text: &str, diagnostics: &mut Vec<Diagnostic>) {
        let file = canonical(path);
        let changed = self.changed.as_ref().map(|changed| changed.in_text(&file, text).unwrap_or_default());
        let lines = (changed.is_some() && !diagnostics.is_empty()).then(|| LineIndex::from_source_text(text));
        let mut left = LeftOut::default();
        diagnostics.retain(|diagnostic| {
            if self.baseline.as_ref().is_some_and(|baseline| baseline.holds(&file, diagnostic)) {
                left.baselined += 1;
                return false;
            }
            if let (Some(changed), Some(lines)) = (&changed, &lines) {
                let first = lines.line_index(diagnostic.range.start()).get();
                let last = lines.line_index(diagnostic.range.end()).get().max(first);
                if !(first..=last).any(|line| changed.contains(&line)) {
                    left.unchanged += 1;
                    return false;
                }
            }
            true
        });
        self.left_out.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(file, left);
    }

    /// Everything left out, over the files of the run.
    pub fn left_out(&self) -> LeftOut {
        let counts = self.left_out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        counts.values().fold(LeftOut::default(), |total, file| LeftOut {
            unchanged: total.unchanged + file.unchanged,
            baselined: total.baselined + file.baselined,
        })
    }

    /// What the report covers and what it leaves out, in one sentence for a summary: "Only lines
    /// changed since `origin/main` (merge base 1a2b3c4d5e6f) are reported: 12 findings elsewhere
    /// and 3 recorded in the baseline tcfix-baseline.json are not shown."
    pub fn describe(&self) -> String {
        let left = self.left_out();
        let baselined = self
            .baseline
            .as_ref()
            .map(|baseline| format!("recorded in the baseline {}", crate::output::display_path(&baseline.path)));
        match (&self.changed, baselined) {
            (Some(changed), None) => format!(
                "Only lines changed since {} are reported: {} elsewhere {} not shown.",
                changed.since,
                findings(left.unchanged),
                are(left.unchanged)
            ),
            (Some(changed), Some(baselined)) => format!(
                "Only lines changed since {} are reported: {} elsewhere and {} {baselined} are not shown.",
                changed.since,
                findings(left.unchanged),
                left.baselined
            ),
            (None, Some(baselined)) => {
                format!("{} {baselined} {} not shown.", findings(left.baselined), are(left.baselined))
            }
            (None, None) => String::new(),
        }
    }
}

fn findings(count: usize) -> String {
    format!("{count} {}", if count == 1 { "finding" } else { "findings" })
}

fn are(count: usize) -> &'static str {
    if count == 1 { "is" } else { "are" }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("diff_base", &self.changed.as_ref().map(|changed| &changed.since))
            .field("baseline", &self.baseline.as_ref().map(|baseline| &baseline.path))
            .finish()
    }
}

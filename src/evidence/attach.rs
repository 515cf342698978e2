//! Evidence meets a run of tcfix: the reports' findings gain what the log saw, the runtime-only
//! findings are kept as a rule's would be (selection, suppression comments, `--diff-base`,
//! `--baseline`), and the summary is made.

use std::path::Path;

use super::{CheckedFile, Evidence, join, summary};
use crate::diagnostic::Diagnostic;
use crate::project::FileReport;
use crate::rules::Settings;
use crate::scope::Scope;
use crate::source::SourceFile;
use crate::suppress::Suppressions;

/// Join the evidence to a run's reports (files that could not be checked are left out) and
/// summarise it per compiled frame. `shown` is how a path is displayed.
pub fn attach(
    evidence: &Evidence,
    reports: &mut [FileReport],
    settings: &Settings,
    scope: Option<&Scope>,
    shown: impl Fn(&Path) -> String,
) -> summary::Summary {
    let mut paths = Vec::new();
    let mut files = Vec::new();
    for report in reports.iter_mut() {
        if let Ok(checked) = &mut report.outcome {
            paths.push(report.path.clone());
            files.push(CheckedFile {
                path: &report.path,
                text: &mut checked.text,
                diagnostics: &mut checked.diagnostics,
            });
        }
    }
    let keep = |path: &Path, text: &str, found: &mut Vec<Diagnostic>| {
        found.retain(|diagnostic| settings.selection.enabled(diagnostic.rule));
        // Suppression comments name TCF100/TCF200 like any code (`# noqa: TCF200`).
        if let Ok(source) = SourceFile::parse(path, text.to_string()) {
            let suppressions = Suppressions::of(&source);
            found.retain(|diagnostic| !suppressions.silences(diagnostic, &source));
        }
        if let Some(scope) = scope {
            scope.retain(path, text, found);
        }
    };
    let joined = join(evidence, &mut files, &keep);
    let displayed: Vec<String> = paths.iter().map(|path| shown(path)).collect();
    let mut summary = summary::summarise(evidence, &joined, &displayed);
    summary.stale = super::stale::warnings(evidence, &paths, &displayed);
    summary
}

//! One setting, one place, over a run: the findings a process-wide capture option removes are
//! counted over every file, and with `--unsafe-fixes` the option is written once, in the file
//! where the project compiles (`fix::dynamo_config::write_setting`). That removes them all, so they
//! leave the report; a second run finds the option set and reports none of them.

use std::path::Path;

use ruff_source_file::LineIndex;
use rustc_hash::FxHashSet as HashSet;

use crate::diagnostic::Diagnostic;
use crate::fix::apply::AppliedFix;
use crate::fix::dynamo_config::{ProjectSetting, write_setting};
use crate::fix::edit::apply_edits;
use crate::model::file::FileModel;
use crate::model::file::configured::Capture;
use crate::model::index::module_name;
use crate::project::{FileReport, FixMode, Reader};
use crate::rules::{RULES, Rule};
use crate::source::SourceFile;

/// What one setting removes over the run: how many findings, in how many files.
pub struct Removed {
    pub setting: ProjectSetting,
    pub findings: usize,
    pub files: usize,
}

/// Every setting the run's findings wait for, with what it removes, in option order.
pub fn removed<'d>(files: impl Iterator<Item = &'d [Diagnostic]>) -> Vec<Removed> {
    let mut found: Vec<(ProjectSetting, usize, usize)> = Vec::new();
    for diagnostics in files {
        let mut seen_here: HashSet<&'static str> = HashSet::default();
        for setting in diagnostics.iter().filter_map(|diagnostic| diagnostic.setting.as_ref()) {
            let first_here = seen_here.insert(setting.capture.option());
            match found.iter_mut().find(|(known, _, _)| known == setting) {
                Some((_, findings, files)) => {
                    *findings += 1;
                    *files += usize::from(first_here);
                }
                None => found.push((setting.clone(), 1, 1)),
            }
        }
    }
    found.sort_by_key(|(setting, _, _)| setting.capture.option());
    found.into_iter().map(|(setting, findings, files)| Removed { setting, findings, files }).collect()
}

/// With `--unsafe-fixes`, writes each setting the findings wait for into the file that compiles
/// and takes the findings it removes out of the reports.
pub(super) fn write_settings(reports: &mut [FileReport], read: &Reader, mode: FixMode) {
    if mode != (FixMode::Fix { unsafe_fixes: true }) {
        return;
    }
    let all = removed(reports.iter().filter_map(|report| report.outcome.as_ref().ok()).map(|c| &c.diagnostics[..]));
    let Some(path) = all.iter().find_map(|removed| removed.setting.written_in.clone()) else { return };
    let Some(entry) = reports.iter().position(|report| report.path.display().to_string() == path) else { return };
    let Ok(checked) = &reports[entry].outcome else { return };
    let holds_text = checked.changed() || !checked.diagnostics.is_empty();
    let text = if holds_text { checked.text.clone() } else { read(&reports[entry].path).unwrap_or_default() };
    let Some((fixed, applied)) = written(&reports[entry].path, &text, &all) else { return };
    let Ok(checked) = &mut reports[entry].outcome else { return };
    if checked.original.is_none() {
        checked.original = Some(text);
    }
    checked.text = fixed;
    checked.applied.extend(applied);
    let written: Vec<Capture> = all.iter().map(|removed| removed.setting.capture).collect();
    for checked in reports.iter_mut().filter_map(|report| report.outcome.as_mut().ok()) {
        checked.diagnostics.retain(|d| d.setting.as_ref().is_none_or(|setting| !written.contains(&setting.capture)));
    }
}

/// The text of the file at `path` with the settings written in, and a fix for each; `None`
/// where they cannot be written (or the result would not parse).
pub(crate) fn written(path: &Path, text: &str, settings: &[Removed]) -> Option<(String, Vec<AppliedFix>)> {
    let source = SourceFile::parse(path, text.to_string()).ok()?;
    let model = FileModel::build(&source, &module_name(path));
    let counts: Vec<(Capture, usize)> =
        settings.iter().map(|removed| (removed.setting.capture, removed.findings)).collect();
    let edits = write_setting(&model, &counts)?;
    let fixed = apply_edits(text, &edits.iter().collect::<Vec<_>>());
    ruff_python_parser::parse_module(&fixed).ok()?;
    let line = LineIndex::from_source_text(text).line_index(edits[0].range.start()).get();
    let applied = settings
        .iter()
        .map(|removed| AppliedFix {
            rule: rule_of(removed.setting.capture),
            title: format!("Set `{}` where the project compiles", removed.setting.statement()),
            line,
            message: removed.setting.summary(removed.findings, removed.files),
        })
        .collect();
    Some((fixed, applied))
}

/// The rule whose findings the option removes.
fn rule_of(capture: Capture) -> &'static Rule {
    let code = match capture {
        Capture::ScalarOutputs => "TCF103",
        Capture::DynamicOutputShapeOps => "TCF106",
    };
    RULES.iter().find(|rule| rule.code == code).expect("a registered rule")
}

//! tcfix: find the code that makes torch.compile graph-break or recompile, and rewrite it.
//!
//! The pipeline: paths -> discover -> SourceFile -> FileModel (what runs under compile) ->
//! rules -> Diagnostics with Fixes -> fixer -> new text -> report, diff or apply.

pub mod baseline;
pub mod cache;
pub mod changed_lines;
pub mod config;
pub mod diagnostic;
pub mod diff;
pub mod discover;
pub mod evidence;
pub mod fix;
pub mod git;
pub mod memory;
pub mod model;
pub mod output;
pub mod patch;
pub mod project;
pub mod prove;
pub mod rules;
pub mod scope;
pub mod server;
pub mod source;
pub mod suppress;
pub mod why;
pub mod write;

use std::path::Path;

use crate::diagnostic::Diagnostic;
use crate::fix::apply::{FixOutcome, fix_found, fix_to_fixpoint};
use crate::model::compiled::reach::mark_region;
use crate::model::file::FileModel;
use crate::model::index::{Facts, FileSummary, ProjectIndex, module_name};
use crate::rules::Settings;
use crate::scope::Scope;
use crate::source::{SourceError, SourceFile};
use crate::suppress::Suppressions;

/// Pass one: what a file contributes to the project index.
pub fn summarise(path: &Path, text: String) -> Result<FileSummary, SourceError> {
    let source = SourceFile::parse(path, text)?;
    Ok(FileSummary::of(&FileModel::build(&source, &module_name(path))))
}

/// Pass two: a file's hazards, given what the project index found about it, less those outside
/// the run's `scope` (`None`: all of them).
pub fn analyse(
    path: &Path,
    text: &str,
    facts: &Facts,
    settings: &Settings,
    scope: Option<&Scope>,
) -> Result<Vec<Diagnostic>, SourceError> {
    let source = SourceFile::parse(path, text.to_string())?;
    let mut model = FileModel::build(&source, &module_name(path));
    mark_region(&mut model, facts);
    Ok(check_model(&model, settings, scope))
}

/// The enabled rules' findings that no suppression comment silences, fingerprinted; then, on
/// what the rules found, the run's scope (`--diff-base`, `--baseline`) drops those outside it.
pub(crate) fn check_model(model: &FileModel, settings: &Settings, scope: Option<&Scope>) -> Vec<Diagnostic> {
    if model.region.is_empty() && !crate::model::compiled::compile_calls::mentions_setup_code(&model.source.text) {
        return Vec::new();
    }
    let suppressions = Suppressions::of(model.source);
    let mut diagnostics = rules::check(model, settings);
    diagnostics.retain(|diagnostic| !suppressions.silences(diagnostic, model.source));
    baseline::fingerprint(&model.source.text, &mut diagnostics);
    if let Some(scope) = scope {
        scope.retain(&model.source.path, &model.source.text, &mut diagnostics);
    }
    diagnostics
}

/// Fix a file to a fixpoint (safe fixes, and unsafe ones if asked), only the findings in `scope`.
pub fn fix(
    path: &Path,
    text: String,
    facts: &Facts,
    settings: &Settings,
    scope: Option<&Scope>,
    unsafe_fixes: bool,
) -> Result<FixOutcome, SourceError> {
    fix_to_fixpoint(text, unsafe_fixes, |current| analyse(path, current, facts, settings, scope))
}

/// `fix`, for a text whose hazards with these facts are already known (`found`): the text is
/// parsed again only once a fix changed it.
pub fn fix_known(
    path: &Path,
    text: String,
    found: Vec<Diagnostic>,
    facts: &Facts,
    settings: &Settings,
    scope: Option<&Scope>,
    unsafe_fixes: bool,
) -> Result<FixOutcome, SourceError> {
    fix_found(text, found, unsafe_fixes, |current| analyse(path, current, facts, settings, scope))
}

/// What the index says about a file checked on its own.
pub fn facts_of_single_file(path: &Path, text: &str) -> Result<Facts, SourceError> {
    let summary = summarise(path, text.to_string())?;
    Ok(ProjectIndex::new(vec![summary]).facts().remove(0))
}

/// Check one file's text on its own (no other files to learn from).
pub fn check_source(path: &Path, text: &str, settings: &Settings) -> Result<Vec<Diagnostic>, SourceError> {
    analyse(path, text, &facts_of_single_file(path, text)?, settings, None)
}

/// Fix one file's text on its own (a file that compiles is where the capture options its
/// findings wait for are written, as in a run over a project).
pub fn fix_source(path: &Path, text: &str, settings: &Settings, unsafe_fixes: bool) -> Result<FixOutcome, SourceError> {
    let facts = facts_of_single_file(path, text)?;
    let mut outcome = fix(path, text.to_string(), &facts, settings, None, unsafe_fixes)?;
    write_own_settings(path, &mut outcome, unsafe_fixes);
    Ok(outcome)
}

/// With `--unsafe-fixes`, the capture options that the file's remaining findings wait for, written
/// in the file itself where it is the script that compiles (as a run over its project does; the
/// comment counts this file's findings only).
pub fn write_own_settings(path: &Path, outcome: &mut FixOutcome, unsafe_fixes: bool) {
    let removed = project::setting::removed(std::iter::once(&outcome.remaining[..]));
    let here = removed.iter().any(|r| r.setting.written_in.as_deref() == Some(&path.display().to_string()));
    if unsafe_fixes
        && here
        && let Some((text, applied)) = project::setting::written(path, &outcome.text, &removed)
    {
        outcome.text = text;
        outcome.applied.extend(applied);
        outcome.remaining.retain(|diagnostic| diagnostic.setting.is_none());
    }
}

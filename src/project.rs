//! A run over many files in two passes, both parallel: summarise every file into the project
//! index, then analyse (or fix) each file against it. Only names and edges are kept between
//! the passes, so memory stays per file.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::diagnostic::Diagnostic;
use crate::fix::apply::{AppliedFix, DroppedFix};
use crate::model::index::{Facts, ProjectIndex};
use crate::rules::Settings;
use crate::source::{SourceError, SourceFile};

/// Whether and how far to fix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixMode {
    Report,
    Fix { unsafe_fixes: bool },
}

pub struct FileReport {
    pub path: PathBuf,
    pub outcome: Result<Checked, SourceError>,
}

#[derive(Clone)]
pub struct Checked {
    pub original: String,
    /// The text after fixing (the original when only reporting).
    pub text: String,
    /// Findings in `text`.
    pub diagnostics: Vec<Diagnostic>,
    pub applied: Vec<AppliedFix>,
    pub dropped: Vec<DroppedFix>,
}

impl Checked {
    pub fn changed(&self) -> bool {
        self.text != self.original
    }
}

pub fn run(files: &[PathBuf], settings: &Settings, mode: FixMode) -> Vec<FileReport> {
    run_with(files, &SourceFile::read, settings, mode)
}

/// A run over texts held in memory (a patch series builds each rule's patch on the last one's).
pub fn run_texts(files: &[(PathBuf, String)], settings: &Settings, mode: FixMode) -> Vec<FileReport> {
    let paths: Vec<PathBuf> = files.iter().map(|(path, _)| path.clone()).collect();
    let read = |path: &Path| -> Result<String, SourceError> {
        let found = files.iter().find(|(p, _)| p == path).map(|(_, text)| text.clone());
        found.ok_or_else(|| SourceError::Io("not in this run".to_string()))
    };
    run_with(&paths, &read, settings, mode)
}

type Reader<'r> = dyn Fn(&Path) -> Result<String, SourceError> + Sync + 'r;

fn run_with(files: &[PathBuf], read: &Reader, settings: &Settings, mode: FixMode) -> Vec<FileReport> {
    let summaries: Vec<_> =
        files.par_iter().map(|path| isolated(|| read(path).and_then(|text| crate::summarise(path, text)))).collect();
    let (indexed, failures): (Vec<_>, Vec<_>) = summaries.into_iter().enumerate().partition(|(_, s)| s.is_ok());
    let positions: Vec<usize> = indexed.iter().map(|(i, _)| *i).collect();
    let index = ProjectIndex::new(indexed.into_iter().map(|(_, s)| s.expect("partitioned")).collect());
    let facts = index.facts();

    let mut reports: Vec<FileReport> = positions
        .par_iter()
        .zip(facts.par_iter())
        .map(|(&i, facts)| {
            let path = &files[i];
            let settings = settings.for_file(path);
            FileReport { path: path.clone(), outcome: isolated(|| check_file(path, read, facts, &settings, mode)) }
        })
        .collect();
    reports.extend(
        failures
            .into_iter()
            .map(|(i, failure)| FileReport { path: files[i].clone(), outcome: Err(failure.expect_err("partitioned")) }),
    );
    reports.sort_by(|a, b| a.path.cmp(&b.path));
    reports
}

/// Runs one file's work so that a panic (a tcfix bug) becomes that file's error and the run
/// goes on with the other files.
fn isolated<T>(work: impl FnOnce() -> Result<T, SourceError>) -> Result<T, SourceError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        Err(SourceError::Internal(message))
    })
}

fn check_file(
    path: &Path,
    read: &Reader,
    facts: &Facts,
    settings: &Settings,
    mode: FixMode,
) -> Result<Checked, SourceError> {
    let original = read(path)?;
    match mode {
        FixMode::Report => {
            let diagnostics = crate::analyse(path, &original, facts, settings)?;
            Ok(Checked { text: original.clone(), original, diagnostics, applied: Vec::new(), dropped: Vec::new() })
        }
        FixMode::Fix { unsafe_fixes } => {
            let outcome = crate::fix(path, original.clone(), facts, settings, unsafe_fixes)?;
            Ok(Checked {
                original,
                text: outcome.text,
                diagnostics: outcome.remaining,
                applied: outcome.applied,
                dropped: outcome.dropped,
            })
        }
    }
}

//! A run over many files in two passes, both parallel: summarise every file into the project
//! index, then analyse (or fix) each file against it. Only names and edges, and pass one's
//! findings (see `guess`) with the text of the files that have some, are kept between the
//! passes, so memory stays per file.

mod guess;
pub mod setting;

use rustc_hash::FxHashSet as HashSet;
use std::cell::Cell;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::cache::{self, Cache, Entry, Stamp, StoredSummary};
use crate::diagnostic::Diagnostic;
use crate::fix::apply::{AppliedFix, DroppedFix, FixOutcome};
use crate::model::index::FileSummary;
use crate::model::index::{Facts, ProjectIndex, module_name};
use crate::project::guess::{Guess, Look};
use crate::rules::Settings;
use crate::scope::Scope;
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
    /// The text before fixing, when fixing changed it (one copy of each text is kept: a report
    /// over a large tree holds every file with findings until the end of the run).
    original: Option<String>,
    /// The text after fixing (the original when only reporting).
    pub text: String,
    /// Findings in `text`.
    pub diagnostics: Vec<Diagnostic>,
    pub applied: Vec<AppliedFix>,
    pub dropped: Vec<DroppedFix>,
}

impl Checked {
    /// A file with nothing to report or fix (its text is not kept).
    fn nothing() -> Self {
        Self::reported(String::new(), Vec::new())
    }

    /// A file's findings, its text unchanged.
    fn reported(text: String, diagnostics: Vec<Diagnostic>) -> Self {
        Checked { original: None, text, diagnostics, applied: Vec::new(), dropped: Vec::new() }
    }

    /// A file whose text was rewritten outside the fixer (`--add-noqa`'s comments).
    pub fn rewritten(original: String, text: String) -> Self {
        let original = (text != original).then_some(original);
        Checked { original, text, diagnostics: Vec::new(), applied: Vec::new(), dropped: Vec::new() }
    }

    /// The text before fixing.
    pub fn original(&self) -> &str {
        self.original.as_deref().unwrap_or(&self.text)
    }

    pub fn changed(&self) -> bool {
        self.original.is_some()
    }

    /// The findings of the file's text as it was read: all of them when reporting, and when
    /// fixing changed nothing (no fix applied, none dropped); `None` once a fix rewrote it.
    fn findings_of_the_text(&self) -> Option<&[Diagnostic]> {
        let untouched = !self.changed() && self.applied.is_empty() && self.dropped.is_empty();
        untouched.then_some(self.diagnostics.as_slice())
    }
}

/// A run over files on disk, reading what `cache` knows and telling it what the run learnt. Only
/// the findings in `scope` are reported and fixed (`None`: all of them).
pub fn run(
    files: &[PathBuf],
    settings: &Settings,
    scope: Option<&Scope>,
    mode: FixMode,
    cache: Option<&Cache>,
) -> Vec<FileReport> {
    run_with(files, &Sources::one(&SourceFile::read), settings, scope, mode, &|| {}, cache)
}

/// `run`, calling `step` as each file finishes each of the two passes (for a progress bar).
pub fn run_with_progress(
    files: &[PathBuf],
    settings: &Settings,
    scope: Option<&Scope>,
    mode: FixMode,
    step: &(dyn Fn() + Sync),
    cache: Option<&Cache>,
) -> Vec<FileReport> {
    run_with(files, &Sources::one(&SourceFile::read), settings, scope, mode, step, cache)
}

/// A run over texts held in memory (a patch series builds each rule's patch on the last one's).
pub fn run_texts(
    files: &[(PathBuf, String)],
    settings: &Settings,
    scope: Option<&Scope>,
    mode: FixMode,
) -> Vec<FileReport> {
    let paths: Vec<PathBuf> = files.iter().map(|(path, _)| path.clone()).collect();
    let read = |path: &Path| -> Result<String, SourceError> {
        let found = files.iter().find(|(p, _)| p == path).map(|(_, text)| text.clone());
        found.ok_or_else(|| SourceError::Io("not in this run".to_string()))
    };
    run_with(&paths, &Sources::one(&read), settings, scope, mode, &|| {}, None)
}

/// Every finding on a project of texts (a test's files, paths as given), with its file's path and
/// its line: default settings, reports only.
#[cfg(test)]
pub(crate) fn findings_of_texts(files: &[(&str, &str)]) -> Vec<(PathBuf, usize, Diagnostic)> {
    let texts: Vec<(PathBuf, String)> =
        files.iter().map(|(path, text)| (PathBuf::from(path), text.to_string())).collect();
    run_texts(&texts, &Settings::default(), None, FixMode::Report)
        .into_iter()
        .flat_map(|report| {
            let (path, checked) = (report.path, report.outcome.expect("parses"));
            let line = |d: &Diagnostic| checked.text[..d.range.start().to_usize()].lines().count();
            let lines: Vec<usize> = checked.diagnostics.iter().map(line).collect();
            checked.diagnostics.into_iter().zip(lines).map(move |(d, line)| (path.clone(), line, d))
        })
        .collect()
}

type Reader<'r> = dyn Fn(&Path) -> Result<String, SourceError> + Sync + 'r;

/// Where a run reads its files: `read` gives the texts it analyses, `again` the text of a file
/// whose findings pass one made, to show them (pass one keeps no text: every text with findings
/// held while the index is built was a run's largest allocation). The same reader but in tests,
/// which count analyses.
struct Sources<'r> {
    read: &'r Reader<'r>,
    again: &'r Reader<'r>,
}

impl<'r> Sources<'r> {
    fn one(read: &'r Reader<'r>) -> Self {
        Sources { read, again: read }
    }
}

fn run_with(
    files: &[PathBuf],
    sources: &Sources,
    settings: &Settings,
    scope: Option<&Scope>,
    mode: FixMode,
    step: &(dyn Fn() + Sync),
    cache: Option<&Cache>,
) -> Vec<FileReport> {
    let settings_of = |path: &Path| cache::settings_fingerprint(&settings.for_file(path));
    let unchanged =
        cache.filter(|_| mode == FixMode::Report).and_then(|cache| cache.unchanged_tree(files, settings_of));
    let reports = unchanged.and_then(|found| reports_of_unchanged_tree(files, sources.again, found));
    let mut reports =
        reports.unwrap_or_else(|| on_deep_stacks(|| both_passes(files, sources, settings, scope, mode, step, cache)));
    setting::write_settings(&mut reports, sources.read, mode);
    reports
}

/// The reports of a run over the tree the cache last saw whole (`Cache::unchanged_tree`): the
/// stored findings, with the texts that have some; `None` when one of those texts is not the one
/// they were made on after all (changed under an unchanged stamp), or cannot be read.
fn reports_of_unchanged_tree(
    files: &[PathBuf],
    read: &Reader,
    found: Vec<(u64, Vec<Diagnostic>)>,
) -> Option<Vec<FileReport>> {
    let reports: Option<Vec<FileReport>> = files
        .par_iter()
        .zip(found)
        .map(|(path, (content, found))| {
            let checked = if found.is_empty() {
                Checked::nothing()
            } else {
                let text = read(path).ok().filter(|text| cache::content_hash(text) == content)?;
                Checked::reported(text, found)
            };
            Some(FileReport { path: path.clone(), outcome: Ok(checked) })
        })
        .collect();
    let mut reports = reports?;
    reports.sort_by(|a, b| a.path.cmp(&b.path));
    Some(reports)
}

/// The stack of each thread that analyses files. The analysis recurses once per level of a
/// file's syntax tree, and a stack overflow aborts the whole run (it cannot be caught like a
/// panic): `source::MAX_NESTING` levels take up to about 20 MiB in a debug build, a few in a release
/// build. Only the pages a thread touches are ever committed.
const ANALYSIS_STACK: usize = 256 << 20;

/// Runs `work` (and the parallel iterators inside it) on threads with [`ANALYSIS_STACK`].
fn on_deep_stacks<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    match rayon::ThreadPoolBuilder::new().stack_size(ANALYSIS_STACK).build() {
        Ok(pool) => pool.install(work),
        // No threads to be had: the default ones still handle everything but the deepest files.
        Err(_) => work(),
    }
}

/// What pass one knows of a file besides its summary: its guess (`None` when checking it failed),
/// or what the cache knew of its text.
enum First<'c> {
    Looked(Option<Box<Guess>>),
    Cached { entry: &'c Entry, text: String },
}

/// Pass one for a file: its summary, from the cache when its text is unchanged (no parse), else
/// parsed and guessed at (`guess`); with a cache, also the hash of its text and its stamp.
type FirstPass<'c> = (FileSummary, First<'c>, Option<(u64, Option<Stamp>)>);

fn first_pass<'c>(
    path: &Path,
    read: &Reader,
    settings: &Settings,
    scope: Option<&Scope>,
    modules: &HashSet<String>,
    cache: Option<&'c Cache>,
) -> Result<FirstPass<'c>, SourceError> {
    // Stamped before reading: a change made in between shows as a new stamp next time.
    let stamp = cache.and_then(|_| Stamp::of(path));
    let text = read(path)?;
    let content = cache.map(|_| (cache::content_hash(&text), stamp));
    let known = cache.zip(content).and_then(|(cache, (content, _))| cache.entry(path, content));
    let known = known.and_then(|entry| Some((entry, cache?.summary(path)?)));
    if let Some((entry, summary)) = known {
        return Ok((summary, First::Cached { entry, text }, content));
    }
    let Look { summary, guess } = guess::look(path, text, settings, scope, modules)?;
    Ok((summary, First::Looked(guess.map(Box::new)), content))
}

fn both_passes(
    files: &[PathBuf],
    sources: &Sources,
    settings: &Settings,
    scope: Option<&Scope>,
    mode: FixMode,
    step: &(dyn Fn() + Sync),
    cache: Option<&Cache>,
) -> Vec<FileReport> {
    let modules: HashSet<String> = files.iter().map(|path| module_name(path)).collect();
    let firsts: Vec<_> = files
        .par_iter()
        .map(|path| {
            let first = isolated(|| first_pass(path, sources.read, &settings.for_file(path), scope, &modules, cache));
            step();
            first
        })
        .collect();
    let (indexed, failures): (Vec<_>, Vec<_>) = firsts.into_iter().enumerate().partition(|(_, s)| s.is_ok());
    let (positions, firsts): (Vec<usize>, Vec<FirstPass>) =
        indexed.into_iter().map(|(i, first)| (i, first.expect("partitioned"))).unzip();
    let (summaries, firsts): (Vec<_>, Vec<_>) =
        firsts.into_iter().map(|(summary, first, content)| (summary, (first, content))).unzip();
    // With a cache, the summary of each file it did not know is kept (as the cache stores it)
    // to store it; the others are in the cache already.
    let kept: Vec<Option<StoredSummary>> = summaries
        .par_iter()
        .zip(&firsts)
        .map(|(summary, (first, _))| match first {
            First::Looked(_) if cache.is_some() => Some(cache::stored_summary(summary)),
            _ => None,
        })
        .collect();
    let tree = cache.map(|_| {
        let contents = positions.iter().zip(&firsts).filter_map(|(&i, (_, content))| {
            let path = files[i].as_path();
            Some((path, content.as_ref()?.0, cache::settings_fingerprint(&settings.for_file(path))))
        });
        cache::tree_of(contents)
    });
    // The index is dropped once it has told each file its facts: pass two needs only those.
    let facts = ProjectIndex::new(summaries).facts();
    let shared = cache.and(facts.first()).map(cache::shared_fingerprint);

    let reports: Vec<(FileReport, bool)> = positions
        .into_par_iter()
        .zip(facts.into_par_iter())
        .zip(firsts.into_par_iter().zip(kept.into_par_iter()))
        .map(|((i, facts), ((first, content), summary))| {
            let path = &files[i];
            let settings = settings.for_file(path);
            let fingerprint =
                shared.map(|shared| cache::facts_fingerprint(&facts, shared, cache::settings_fingerprint(&settings)));
            let outcome = match first {
                First::Cached { entry, text } => {
                    match fingerprint.and_then(|fingerprint| entry.findings(fingerprint)) {
                        Some(found) => {
                            isolated(|| finish(path, keep_text(text, &found), found, &facts, &settings, scope, mode))
                        }
                        None => isolated(|| check_file(path, sources.read, &facts, &settings, scope, mode)),
                    }
                }
                First::Looked(Some(guess)) => match guess.settle(&facts) {
                    Some(guess) => isolated(|| finish_guess(path, sources, *guess, &facts, &settings, scope, mode)),
                    None => isolated(|| check_file(path, sources.read, &facts, &settings, scope, mode)),
                },
                First::Looked(None) => isolated(|| check_file(path, sources.read, &facts, &settings, scope, mode)),
            };
            let mut learnt_findings = false;
            if let (Some(cache), Some(content), Ok(checked)) = (cache, content, &outcome) {
                let findings = fingerprint.zip(checked.findings_of_the_text());
                learnt_findings = findings.is_some();
                cache.learn(path, content, findings, summary);
            }
            step();
            (FileReport { path: path.clone(), outcome }, learnt_findings)
        })
        .collect();
    let (mut reports, learnt): (Vec<FileReport>, Vec<bool>) = reports.into_iter().unzip();
    // Every file of the run read, checked and its findings learnt: the next run over this same
    // tree needs no index (`Cache::unchanged_tree`).
    if let (Some(cache), Some(tree)) = (cache, tree)
        && failures.is_empty()
        && learnt.iter().all(|&learnt| learnt)
    {
        cache.certify(tree);
    }
    reports.extend(failures.into_iter().filter_map(|(i, failure)| {
        failure.err().map(|error| FileReport { path: files[i].clone(), outcome: Err(error) })
    }));
    reports.sort_by(|a, b| a.path.cmp(&b.path));
    reports
}

/// A file's text, kept when it has findings to show.
fn keep_text(text: String, found: &[Diagnostic]) -> Option<String> {
    (!found.is_empty()).then_some(text)
}

/// Pass two for a file whose guess stands: its text is read again to show the findings, and
/// checked again in full if it changed since pass one read it.
fn finish_guess(
    path: &Path,
    sources: &Sources,
    guess: Guess,
    facts: &Facts,
    settings: &Settings,
    scope: Option<&Scope>,
    mode: FixMode,
) -> Result<Checked, SourceError> {
    let Guess { diagnostics, text_hash, .. } = guess;
    let Some(text_hash) = text_hash else { return Ok(Checked::nothing()) };
    let text = (sources.again)(path)?;
    if cache::content_hash(&text) != text_hash {
        return check_file(path, sources.read, facts, settings, scope, mode);
    }
    finish(path, Some(text), diagnostics, facts, settings, scope, mode)
}

/// Pass two for a file whose findings are known (its guess stands, or the cache knew them): it
/// is parsed again only when fixing, and only when one of them has a fix to apply. `text` is
/// `None` when there are no findings.
fn finish(
    path: &Path,
    text: Option<String>,
    diagnostics: Vec<Diagnostic>,
    facts: &Facts,
    settings: &Settings,
    scope: Option<&Scope>,
    mode: FixMode,
) -> Result<Checked, SourceError> {
    let Some(text) = text else { return Ok(Checked::nothing()) };
    let found = Checked::reported(text, diagnostics);
    let FixMode::Fix { unsafe_fixes } = mode else { return Ok(found) };
    let fixable = |d: &Diagnostic| d.fix.as_ref().is_some_and(|fix| fix.is_applicable(unsafe_fixes));
    if !found.diagnostics.iter().any(fixable) {
        return Ok(found);
    }
    let outcome = crate::fix_known(path, found.text.clone(), found.diagnostics, facts, settings, scope, unsafe_fixes)?;
    Ok(worth_keeping(fixed(found.text, outcome)))
}

thread_local! {
    /// Set while a thread does one file's work, whose panics `isolated` reports itself.
    static IN_FILE_WORK: Cell<bool> = const { Cell::new(false) };
}

/// A panic on one file is reported as that file's error (see `isolated`), not as a trace; any
/// other panic keeps Rust's usual message.
pub fn quiet_panics_in_file_work() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !IN_FILE_WORK.with(Cell::get) {
            default(info);
        }
    }));
}

/// Runs one file's work so that a panic (a tcfix bug) becomes that file's error and the run
/// goes on with the other files.
fn isolated<T>(work: impl FnOnce() -> Result<T, SourceError>) -> Result<T, SourceError> {
    let outer = IN_FILE_WORK.with(|flag| flag.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    IN_FILE_WORK.with(|flag| flag.set(outer));
    result.unwrap_or_else(|panic| {
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
    scope: Option<&Scope>,
    mode: FixMode,
) -> Result<Checked, SourceError> {
    // Rules look at code in the compiled region, setup rules also at scripts that compile: a file
    // with neither has nothing to report or fix, and needs no second parse.
    if facts.reached.is_empty() && !facts.setup_code {
        return Ok(Checked::nothing());
    }
    let original = read(path)?;
    let checked = match mode {
        FixMode::Report => {
            let diagnostics = crate::analyse(path, &original, facts, settings, scope)?;
            Checked::reported(original, diagnostics)
        }
        FixMode::Fix { unsafe_fixes } => {
            let outcome = crate::fix(path, original.clone(), facts, settings, scope, unsafe_fixes)?;
            fixed(original, outcome)
        }
    };
    Ok(worth_keeping(checked))
}

fn fixed(original: String, outcome: FixOutcome) -> Checked {
    Checked {
        original: (outcome.text != original).then_some(original),
        text: outcome.text,
        diagnostics: outcome.remaining,
        applied: outcome.applied,
        dropped: outcome.dropped,
    }
}

/// Only files with something to show keep their text until the end of the run.
fn worth_keeping(checked: Checked) -> Checked {
    let quiet = checked.diagnostics.is_empty() && !checked.changed() && checked.dropped.is_empty();
    if quiet { Checked::nothing() } else { checked }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A run over `files` read from `sources`, with the default settings and no cache.
    fn run_plain(files: &[PathBuf], sources: &Sources, mode: FixMode) -> Vec<FileReport> {
        run_with(files, sources, &Settings::default(), None, mode, &|| {}, None)
    }

    const MODEL: &str = "import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        print(x)
        return x
";

    fn outcomes(reports: &[FileReport]) -> Vec<(String, Result<usize, SourceError>)> {
        reports
            .iter()
            .map(|report| {
                let outcome = report.outcome.as_ref().map(|checked| checked.applied.len()).map_err(Clone::clone);
                (report.path.display().to_string(), outcome)
            })
            .collect()
    }

    /// No input is known to make tcfix panic (the fuzz and corpus tiers look for one), so a
    /// reader that panics stands in for a bug: it runs inside each file's work, where a panic in
    /// the parser, a rule or the fixer would happen.
    #[test]
    fn a_panic_on_one_file_is_that_files_error_and_the_others_are_still_fixed() {
        let files = [PathBuf::from("a.py"), PathBuf::from("boom.py"), PathBuf::from("c.py")];
        let read = |path: &Path| -> Result<String, SourceError> {
            assert!(path != Path::new("boom.py"), "a bug while reading boom.py");
            Ok(MODEL.to_string())
        };
        let reports = run_plain(&files, &Sources::one(&read), FixMode::Fix { unsafe_fixes: false });
        assert_eq!(
            outcomes(&reports),
            [
                ("a.py".to_string(), Ok(1)),
                ("boom.py".to_string(), Err(SourceError::Internal("a bug while reading boom.py".to_string()))),
                ("c.py".to_string(), Ok(1)),
            ]
        );
    }

    /// A helper in `late.py` that only `a.py` calls under compile: on its own `late.py` has no
    /// compiled code, so the project's facts differ from its own and pass two reads it again.
    const CALLER: &str = "from torch import nn
from late import helper


class Model(nn.Module):
    def forward(self, x):
        return helper(x)
";
    const HELPER: &str = "def helper(x):
    print(x)
    return x
";

    #[test]
    fn a_panic_in_the_second_pass_is_caught_too() {
        let files = [PathBuf::from("a.py"), PathBuf::from("late.py")];
        let reads = AtomicUsize::new(0);
        let read = |path: &Path| -> Result<String, SourceError> {
            if path != Path::new("late.py") {
                return Ok(CALLER.to_string());
            }
            // The first pass reads each file to index it; the second reads it again to fix it.
            if reads.fetch_add(1, Ordering::SeqCst) == 1 {
                panic!("a bug in the second pass: {}", path.display());
            }
            Ok(HELPER.to_string())
        };
        let reports = run_plain(&files, &Sources::one(&read), FixMode::Fix { unsafe_fixes: false });
        assert_eq!(
            outcomes(&reports),
            [
                ("a.py".to_string(), Ok(0)),
                ("late.py".to_string(), Err(SourceError::Internal("a bug in the second pass: late.py".to_string()))),
            ]
        );
        assert_eq!(reads.load(Ordering::SeqCst), 2, "late.py was read in both passes");
    }

    /// The reads of `texts` that give a text to analyse, counted: a file whose findings pass one
    /// made is read again only to show them (`Sources::again`), and is not counted.
    fn counting<'t>(
        texts: &'t Reader<'t>,
        reads: &'t AtomicUsize,
    ) -> impl Fn(&Path) -> Result<String, SourceError> + Sync + 't {
        move |path| {
            reads.fetch_add(1, Ordering::SeqCst);
            texts(path)
        }
    }

    /// When the index agrees with what a file says of itself, pass one's findings stand: the
    /// file is not parsed again, also when fixing, unless a fix changes it.
    /// Fixes `a.py` and the second file (path and text), counting how often files are read.
    fn fix_counting_reads(a: &str, (b_path, b): (&str, &str)) -> (Vec<FileReport>, usize) {
        let files = [PathBuf::from("a.py"), PathBuf::from(b_path)];
        let reads = AtomicUsize::new(0);
        let texts = |path: &Path| -> Result<String, SourceError> {
            Ok(if path == Path::new("a.py") { a } else { b }.to_string())
        };
        let sources = Sources { read: &counting(&texts, &reads), again: &texts };
        let reports = run_plain(&files, &sources, FixMode::Fix { unsafe_fixes: false });
        (reports, reads.load(Ordering::SeqCst))
    }

    #[test]
    fn files_the_index_agrees_on_are_read_once_when_fixing() {
        let (reports, reads) = fix_counting_reads(MODEL, ("quiet.py", QUIET));
        assert_eq!(outcomes(&reports), [("a.py".to_string(), Ok(1)), ("quiet.py".to_string(), Ok(0))]);
        assert_eq!(reads, 2);
        let fixed = reports[0].outcome.as_ref().unwrap();
        assert!(fixed.changed() && fixed.diagnostics.is_empty(), "the print is fixed and nothing is left");
    }

    /// Pass one keeps a file's findings, not its text: a file edited before pass two reads it
    /// again is checked again, so that findings are never shown against a text they are not in.
    #[test]
    fn a_file_changed_between_the_passes_is_checked_again() {
        let edited = MODEL.replace("print(x)", "x = x + 1\n        print(x)");
        let reads = AtomicUsize::new(0);
        let read = |_: &Path| -> Result<String, SourceError> {
            Ok(if reads.fetch_add(1, Ordering::SeqCst) == 0 { MODEL } else { edited.as_str() }.to_string())
        };
        let reports = run_plain(&[PathBuf::from("a.py")], &Sources::one(&read), FixMode::Report);
        let checked = reports[0].outcome.as_ref().unwrap();
        assert_eq!(checked.text, edited);
        let [found] = checked.diagnostics.as_slice() else { panic!("{:?}", checked.diagnostics) };
        assert_eq!(
            usize::from(found.range.start()),
            edited.find("print(x)").unwrap(),
            "the print's place in the new text"
        );
        assert_eq!(reads.load(Ordering::SeqCst), 3, "read, read again to show, then read to check it again");
    }

    #[test]
    fn fixing_a_file_whose_facts_differ_reads_it_again() {
        let (reports, reads) = fix_counting_reads(CALLER, ("late.py", HELPER));
        assert_eq!(outcomes(&reports), [("a.py".to_string(), Ok(0)), ("late.py".to_string(), Ok(1))]);
        assert_eq!(reads, 3, "late.py is read again: on its own it has no compiled code");
    }

    const QUIET: &str = "from torch import nn


class Quiet(nn.Module):
    def forward(self, x):
        return x
";

    /// `child.py` builds a submodule from a class whose base it imports from `base.py`.
    const CHILD: &str = "from torch import nn
from .base import Norm


class ChildNorm(Norm):
    pass


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = ChildNorm()

    def forward(self, x):
        print(x)
        return self.norm(x)
";

    /// Each file's outcome (its findings, or why it could not be read) and how often the child was read.
    type ChildReads = (Vec<(String, Result<usize, SourceError>)>, usize);

    fn reads_of_child(base: &'static str) -> ChildReads {
        let files = [PathBuf::from("pkg/base.py"), PathBuf::from("pkg/child.py")];
        let reads = AtomicUsize::new(0);
        let child = |_: &Path| -> Result<String, SourceError> { Ok(CHILD.to_string()) };
        let count_child = counting(&child, &reads);
        let read =
            |path: &Path| if path == Path::new("pkg/base.py") { Ok(base.to_string()) } else { count_child(path) };
        let again = |path: &Path| if path == Path::new("pkg/base.py") { Ok(base.to_string()) } else { child(path) };
        let sources = Sources { read: &read, again: &again };
        let reports = run_plain(&files, &sources, FixMode::Fix { unsafe_fixes: false });
        (outcomes(&reports), reads.load(Ordering::SeqCst))
    }

    /// On its own `child.py` cannot tell that `ChildNorm` is a module; the guess assumes it is,
    /// since its base comes from a file of the run, and the project agrees.
    #[test]
    fn a_submodule_built_from_a_class_of_another_file_is_guessed_right() {
        let (outcomes, reads) = reads_of_child("from torch import nn\n\n\nclass Norm(nn.Module):\n    pass\n");
        assert_eq!(outcomes, [("pkg/base.py".to_string(), Ok(0)), ("pkg/child.py".to_string(), Ok(1))]);
        assert_eq!(reads, 1);
    }

    #[test]
    fn a_wrong_assumption_reads_the_file_again() {
        let (outcomes, reads) = reads_of_child("class Norm:\n    pass\n");
        assert_eq!(outcomes, [("pkg/base.py".to_string(), Ok(0)), ("pkg/child.py".to_string(), Ok(1))]);
        assert_eq!(reads, 2, "the project says `ChildNorm` is no module: child.py is analysed again");
    }

    /// `Inner.forward` prints under a flag that `Outer`, its only holder, leaves unset: a finding
    /// only for a caller who passes it, unless another file imports `Inner` (and may call it
    /// with the flag set).
    const FLAGGED: &str = "from torch import nn


class Inner(nn.Module):
    def forward(self, x, use_cache=None):
        if use_cache:
            print(x)
        return x


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x)
";

    /// Reports on `pkg/blocks.py` (`FLAGGED`) and a file that imports `imported` from it: the
    /// finding's message and how often `blocks.py` was read.
    fn flagged_print_imported(imported: &str) -> (Vec<String>, usize) {
        let user = format!("from pkg.blocks import {imported}\n\nmodel = {imported}()\n");
        messages_and_reads(&["pkg/blocks.py", "pkg/user.py"], ("pkg/user.py", &user), FLAGGED)
    }

    /// Runs the project of `files`: `fixed` has its own text, every other file `counted`'s text.
    /// Returns the findings' messages and how often a file with `counted`'s text was read.
    fn messages_and_reads(files: &[&str], fixed: (&str, &str), counted: &str) -> (Vec<String>, usize) {
        let files: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
        let reads = AtomicUsize::new(0);
        let texts = |path: &Path| -> Result<String, SourceError> {
            Ok(if path == Path::new(fixed.0) { fixed.1 } else { counted }.to_string())
        };
        let count_counted = counting(&texts, &reads);
        let read = |path: &Path| if path == Path::new(fixed.0) { texts(path) } else { count_counted(path) };
        let sources = Sources { read: &read, again: &texts };
        let reports = run_plain(&files, &sources, FixMode::Report);
        let messages =
            reports.iter().flat_map(|r| r.outcome.as_ref().unwrap().diagnostics.iter()).map(|d| d.message.clone());
        (messages.collect(), reads.load(Ordering::SeqCst))
    }

    /// Another file importing `Outer` changes nothing the finding asks: its guess stands.
    #[test]
    fn an_import_the_findings_do_not_ask_about_keeps_the_guess() {
        let (messages, reads) = flagged_print_imported("Outer");
        assert_eq!(reads, 1);
        assert!(messages.len() == 1 && messages[0].contains("use_cache=True"), "{messages:?}");
    }

    #[test]
    fn an_import_the_findings_ask_about_reads_the_file_again() {
        let (messages, reads) = flagged_print_imported("Inner");
        assert_eq!(reads, 2, "`Inner` may be called with the flag set: blocks.py is analysed again");
        assert!(messages.len() == 1 && !messages[0].contains("use_cache=True"), "{messages:?}");
    }

    /// `resize` is a helper only other files call, with a flag that defaults off: what their
    /// calls pass decides whether its branch on the flag is dead.
    const OPS: &str = "from torch import nn


def resize(x, warning=False):
    if warning:
        print(x)
    return x


class Model(nn.Module):
    def forward(self, x):
        print(x)
        return x
";

    /// Reports on `pkg/ops.py` (`OPS`) and a script that calls `resize` with `arguments`: how
    /// often `ops.py` was read.
    fn reads_of_helper_called_with(arguments: &str) -> usize {
        let script = format!(
            "from pkg.ops import resize

resize({arguments})
"
        );
        let (messages, reads) = messages_and_reads(&["pkg/ops.py", "pkg/script.py"], ("pkg/script.py", &script), OPS);
        assert_eq!(messages.len(), 1, "the print in `forward`: {messages:?}");
        reads
    }

    /// A call that passes the flag leaves no branch dead, as no call at all does: the guess stands.
    #[test]
    fn a_helper_whose_callers_pass_its_flags_keeps_the_guess() {
        assert_eq!(reads_of_helper_called_with("1, warning=True"), 1);
        assert_eq!(reads_of_helper_called_with("1, True"), 1);
    }

    #[test]
    fn a_helper_whose_callers_leave_a_flag_off_is_read_again() {
        assert_eq!(reads_of_helper_called_with("1"), 2, "the branch on `warning` is dead: ops.py is analysed again");
    }

    /// `feature.py` builds an attribute by calling `make_table`, imported from a file of the run:
    /// on its own it takes the name for a module class (`Assumed`); the project says it is none.
    fn reads_of_table_holder(holder: &str) -> usize {
        let feature = format!(
            "from torch import nn
from pkg.tables import make_table


class {holder}:
    def __init__(self):
        super().__init__()
        self.table = make_table(3)

    def forward(self, x):
        return self.table(x)


class Model(nn.Module):
    def forward(self, x):
        print(x)
        return x
"
        );
        let tables = "def make_table(n):\n    return n\n";
        let (messages, reads) =
            messages_and_reads(&["pkg/feature.py", "pkg/tables.py"], ("pkg/tables.py", tables), &feature);
        assert_eq!(messages.len(), 1, "the print in `Model.forward`: {messages:?}");
        reads
    }

    /// Nothing compiled asks what `make_table` is: the guess stands.
    #[test]
    fn an_imported_name_the_analysis_never_asks_about_keeps_the_guess() {
        assert_eq!(reads_of_table_holder("Features"), 1);
    }

    #[test]
    fn an_imported_name_the_analysis_asks_about_is_answered_by_the_project() {
        assert_eq!(reads_of_table_holder("Features(nn.Module)"), 2, "`self.table(x)` in a compiled forward asks");
    }

    /// `merger.py` builds a check's message from a size; the check is another file's, and takes
    /// the message as a callable.
    const MERGER: &str = "import torch
from torch import nn

from pkg.checks import require


class Merger(nn.Module):
    def forward(self, image):
        require(image.shape[-1] > 0, f\"{image.shape[0]} features\")
        return image * 2
";

    /// The fix titles of `merger.py`'s findings, with `require` defined as `checks`, and how
    /// often `merger.py` was read.
    fn merger_fixes(checks: &str) -> (Vec<String>, usize) {
        let files = [PathBuf::from("pkg/checks.py"), PathBuf::from("pkg/merger.py")];
        let reads = AtomicUsize::new(0);
        let texts = |path: &Path| -> Result<String, SourceError> {
            Ok(if path == Path::new("pkg/checks.py") { checks } else { MERGER }.to_string())
        };
        let count_merger = counting(&texts, &reads);
        let read = |path: &Path| if path == Path::new("pkg/checks.py") { texts(path) } else { count_merger(path) };
        let reports = run_plain(&files, &Sources { read: &read, again: &texts }, FixMode::Report);
        let diagnostics = reports.iter().flat_map(|r| r.outcome.as_ref().unwrap().diagnostics.iter());
        let fixes = diagnostics.map(|d| d.fix.as_ref().map_or_else(String::new, |fix| fix.title.clone()));
        (fixes.collect(), reads.load(Ordering::SeqCst))
    }

    /// On its own `merger.py` cannot tell that `require` takes a callable message; pass one also
    /// made the findings that answer gives (`guess::Alternative`), and pass two takes them.
    #[test]
    fn a_message_check_of_another_file_is_answered_without_a_second_parse() {
        let callable = "from collections.abc import Callable


def require(condition, message: str | Callable[[], str]) -> None:
    if not condition:
        raise ValueError(message() if callable(message) else message)
";
        let (fixes, reads) = merger_fixes(callable);
        assert_eq!(reads, 1);
        assert!(fixes.len() == 1 && fixes[0].starts_with("Pass the message as a lambda"), "{fixes:?}");
        let plain = callable.replace(" | Callable[[], str]", "");
        let (fixes, reads) = merger_fixes(&plain);
        assert_eq!(reads, 1, "the file's own answer stands");
        assert!(fixes.len() == 1 && fixes[0].starts_with("Build the message only when"), "{fixes:?}");
    }

    /// `a.py`'s forward reaches `b.helper` first, so the project says "called from
    /// `Caller.forward`" where `b.py` on its own says "called from `Local.forward`".
    fn run_reached_twice(helper_body: &str) -> (Vec<String>, usize) {
        let caller = "from torch import nn\nfrom b import helper\n\n\nclass Caller(nn.Module):\n    def forward(self, x):\n        return helper(x)\n";
        let local = format!(
            "from torch import nn\n\n\ndef helper(x):\n{helper_body}    return x\n\n\nclass Local(nn.Module):\n    def forward(self, x):\n        return helper(x)\n"
        );
        messages_and_reads(&["a.py", "b.py"], ("a.py", caller), &local)
    }

    #[test]
    fn a_reason_a_finding_shows_is_the_projects() {
        let (messages, reads) = run_reached_twice("    print(x)\n");
        assert_eq!(reads, 2);
        assert!(messages.iter().any(|m| m.contains("`helper` (called from `Caller.forward`)")), "{messages:?}");
    }
}

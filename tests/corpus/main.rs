//! The Rust half of the corpus tier (`tests/corpus/run.sh` prepares the trees and runs this):
//! for every Python file of the original tree, fix it again through the library exactly as
//! `tcfix --apply --unsafe-fixes` does in a run over the whole tree (same project index, same
//! fixer), recording every pass, and check:
//! - each pass changed the text only through the edits its rules proposed (`containment.rs`);
//! - the result parses with ruff's parser;
//! - the result is byte for byte the file the CLI wrote into the fixed tree;
//! - fixing the result again applies nothing.
//!
//! Ignored by default: it needs `TCFIX_CORPUS_ORIGINAL` and `TCFIX_CORPUS_FIXED`, which the
//! script sets.

mod containment;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;
use ruff_python_parser::parse_module;
use tcfix::config::Config;
use tcfix::model::index::ProjectIndex;
use tcfix::rules::Settings;
use tcfix::source::SourceFile;

fn tree(variable: &str) -> PathBuf {
    PathBuf::from(std::env::var(variable).unwrap_or_else(|_| panic!("{variable} is not set: run tests/corpus/run.sh")))
}

#[test]
#[ignore = "needs the corpus trees: run tests/corpus/run.sh"]
fn every_fix_on_the_corpus_touches_only_its_edits_parses_matches_the_cli_and_is_a_fixpoint() {
    let (original, fixed) = (tree("TCFIX_CORPUS_ORIGINAL"), tree("TCFIX_CORPUS_FIXED"));
    // The paths the CLI saw: relative to the tree it ran in (module names come from them).
    let discovered = tcfix::discover::discover(std::slice::from_ref(&original));
    assert!(discovered.errors.is_empty(), "{:?}", discovered.errors);
    let files: Vec<PathBuf> = discovered
        .files
        .iter()
        .map(|path| path.strip_prefix(&original).expect("under the tree").to_path_buf())
        .collect();

    // Pass one, as in `project::run`: every file that reads and parses goes into the index.
    let texts: Vec<Option<String>> = files.par_iter().map(|path| SourceFile::read(&original.join(path)).ok()).collect();
    let summaries: Vec<_> = files
        .par_iter()
        .zip(&texts)
        .map(|(path, text)| text.as_ref().and_then(|text| tcfix::summarise(path, text.clone()).ok()))
        .collect();
    let indexed: Vec<usize> = (0..files.len()).filter(|&i| summaries[i].is_some()).collect();
    let index = ProjectIndex::new(summaries.into_iter().flatten().collect());
    let facts = index.facts();

    // The settings of `tcfix --isolated --unsafe-fixes`.
    let config = Config::discover(&original, None, true, tcfix::rules::names_a_rule).expect("no configuration");
    let settings = Settings { config: Some(Arc::new(config)), ..Settings::default() };

    let (changed, fixes, passes) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0));
    let unparsable = AtomicUsize::new(0);
    let violations = Mutex::new(Vec::new());
    indexed.par_iter().zip(facts.par_iter()).for_each(|(&i, facts)| {
        let (path, text) = (&files[i], texts[i].as_ref().expect("indexed"));
        let fail = |what: String| violations.lock().unwrap().push(format!("{}: {what}", path.display()));
        let settings = settings.for_file(path);
        let (outcome, recorded) = match containment::fix_recording(path, text, facts, &settings, true) {
            Ok(result) => result,
            Err(err) => return fail(format!("fixing failed: {err}")),
        };
        if let Err(err) = parse_module(&outcome.text) {
            unparsable.fetch_add(1, Ordering::Relaxed);
            return fail(format!("the fixed text does not parse (ruff): {err}"));
        }
        match containment::check_passes(&recorded, &outcome.text, true) {
            Ok(count) => passes.fetch_add(count, Ordering::Relaxed),
            Err(err) => return fail(err),
        };
        // The script that compiles also gets the capture options (none in the corpus, a library).
        let mut outcome = outcome;
        tcfix::write_own_settings(path, &mut outcome, true);
        match std::fs::read_to_string(fixed.join(path)) {
            Ok(written) if written == outcome.text => {}
            Ok(_) => return fail("the library's fix differs from the file the CLI wrote".to_string()),
            Err(err) => return fail(format!("cannot read the CLI's output: {err}")),
        }
        match tcfix::fix(path, outcome.text.clone(), facts, &settings, None, true) {
            Ok(again) if again.applied.is_empty() && again.text == outcome.text => {}
            Ok(again) => {
                let codes: Vec<&str> = again.applied.iter().map(|fix| fix.rule.code).collect();
                return fail(format!("not a fixpoint: fixing again applied {codes:?}"));
            }
            Err(err) => return fail(format!("the fixed text cannot be fixed again: {err}")),
        }
        if outcome.text != *text {
            changed.fetch_add(1, Ordering::Relaxed);
            fixes.fetch_add(outcome.applied.len(), Ordering::Relaxed);
        }
    });

    let violations = violations.into_inner().unwrap();
    let unreadable = files.len() - indexed.len();
    println!(
        "corpus: checker: {} files ({unreadable} unreadable or unparsable, left to the CLI's exit code), {} changed by {} fixes in {} passes",
        files.len(),
        changed.into_inner(),
        fixes.into_inner(),
        passes.into_inner(),
    );
    println!(
        "corpus: checker: fixed texts ruff's parser rejects: {} (must be 0); violations in all (bytes outside the proposed edits, disagreement with the CLI, not a fixpoint, ruff): {} (must be 0)",
        unparsable.into_inner(),
        violations.len()
    );
    for violation in violations.iter().take(20) {
        println!("corpus: VIOLATION: {violation}");
    }
    assert!(violations.is_empty(), "{} violations", violations.len());
    assert!(!indexed.is_empty(), "the corpus has files");
}

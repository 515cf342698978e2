//! Every fixture under `codemods/<rule-name>/` is checked and fixed, and the report and the
//! diff are snapshotted into `snapshots/`. Beyond the snapshots, each fixture must keep its
//! promise: `positive_*` files have a finding of their folder's rule, `negative_*` files have
//! none, every fixed file parses, and fixing the fixed file changes nothing.

use std::fmt::Write;
use std::path::Path;

use tcfix::diagnostic::Diagnostic;
use tcfix::fix::Safety;
use tcfix::rules::{RULES, Settings};

fn settings() -> Settings {
    Settings::default()
}

fn rule_of_folder(path: &Path) -> &'static str {
    let folder = path.parent().and_then(|p| p.file_name()).and_then(|n| n.to_str()).expect("codemods/<rule>/");
    RULES.iter().find(|rule| rule.name == folder).unwrap_or_else(|| panic!("no rule named {folder}")).code
}

fn display(path: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

fn report(path: &str, text: &str, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        out.push_str(&tcfix::output::text::diagnostics(path, text, std::slice::from_ref(diagnostic), false));
        // The report already shows an Unsafe fix's or a suggestion's title under its finding.
        if let Some(fix) = diagnostic.fix.as_ref().filter(|fix| fix.safety == Safety::Safe) {
            let _ = writeln!(out, "    fix (Safe): {}", fix.title);
        }
    }
    out
}

/// Fix `text`, and check the result parses and is a fixpoint.
fn fixed(path: &Path, text: &str, unsafe_fixes: bool) -> String {
    let outcome = tcfix::fix_source(path, text, &settings(), unsafe_fixes).expect("fixture parses");
    assert!(outcome.dropped.is_empty(), "{}: a fix was dropped: {:?}", path.display(), outcome.dropped);
    ruff_python_parser::parse_module(&outcome.text)
        .unwrap_or_else(|err| panic!("{}: fixed text does not parse: {err}", path.display()));
    let again = tcfix::fix_source(path, &outcome.text, &settings(), unsafe_fixes).expect("fixed text parses");
    assert_eq!(again.text, outcome.text, "{}: a second fix changed the file again", path.display());
    outcome.text
}

#[test]
fn codemod_fixtures() {
    insta::glob!("../codemods", "*/*.py", |path| {
        let text = std::fs::read_to_string(path).expect("fixture is UTF-8");
        let shown = display(path);
        let diagnostics = tcfix::check_source(path, &text, &settings()).expect("fixture parses");
        let code = rule_of_folder(path);
        let of_rule = diagnostics.iter().filter(|d| d.rule.code == code).count();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with("negative_") {
            assert_eq!(of_rule, 0, "{shown}: a false alarm of {code}:\n{}", report(&shown, &text, &diagnostics));
        }
        if name.starts_with("positive_") {
            assert!(of_rule > 0, "{shown}: {code} missed the hazard");
        }

        let mut snapshot = format!("# tcfix {shown}\n{}", report(&shown, &text, &diagnostics));
        let safe = fixed(path, &text, false);
        let _ = write!(snapshot, "\n# tcfix --diff\n{}", tcfix::diff::unified_diff(&shown, &text, &safe));
        let unsafe_fixed = fixed(path, &text, true);
        if unsafe_fixed != safe {
            let _ = write!(
                snapshot,
                "\n# tcfix --diff --unsafe-fixes\n{}",
                tcfix::diff::unified_diff(&shown, &text, &unsafe_fixed)
            );
        }
        insta::with_settings!({ snapshot_path => "../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(snapshot);
        });
    });
}

/// A no-fix reason is read on one line under its finding: it starts with what the user can do and
/// stays under 200 characters; the why behind it is the rule's README (`tcfix explain CODE`).
/// Checked on every fixture and on the corpus findings snapshot (the transformers and timm
/// wheels, `tests/corpus/run.sh`), where reasons quote real code.
#[test]
fn no_fix_reasons_are_short() {
    const MOST: usize = 200;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    let mut reasons = 0;
    for folder in std::fs::read_dir(root.join("codemods")).expect("codemods/") {
        let folder = folder.expect("entry").path();
        for file in std::fs::read_dir(&folder).into_iter().flatten().flatten().map(|entry| entry.path()) {
            if file.extension().is_none_or(|ext| ext != "py") {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("fixture");
            let diagnostics = tcfix::check_source(&file, &text, &settings()).expect("fixture parses");
            for reason in diagnostics.iter().filter_map(|d| d.no_fix_reason.as_deref()) {
                reasons += 1;
                if reason.chars().count() >= MOST {
                    long.push(format!("{}: {reason}", display(&file)));
                }
            }
        }
    }
    let corpus = std::fs::read_to_string(root.join("snapshots/corpus-findings.txt")).expect("the corpus snapshot");
    for line in corpus.lines() {
        let Some((_, reason)) = line.split_once(" | no fix: ") else { continue };
        reasons += 1;
        let reason = reason.rsplit_once(" #").map_or(reason, |(reason, _)| reason);
        if reason.chars().count() >= MOST {
            long.push(format!("corpus: {line}"));
        }
    }
    assert!(reasons > 300, "only {reasons} reasons: the check would check little");
    assert!(long.is_empty(), "{} no-fix reasons of {MOST} characters or more:\n{}", long.len(), long.join("\n"));
}

/// `tcfix rules` shows each rule's fixes from its declared `fixes`: every fix safety a rule
/// produces on its fixtures must be declared there (TCF103's print guard is Safe, and the column
/// said "unsafe fix" alone). (A declared one may lack a fixture: TCF101's Unsafe fix for a module
/// that does not import torch has none.)
#[test]
fn declared_fix_safeties_are_the_ones_the_fixtures_produce() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut fixes = 0;
    for folder in std::fs::read_dir(root.join("codemods")).expect("codemods/") {
        for file in std::fs::read_dir(folder.expect("entry").path()).into_iter().flatten().flatten() {
            let file = file.path();
            if file.extension().is_none_or(|ext| ext != "py") {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("fixture");
            let diagnostics = tcfix::check_source(&file, &text, &settings()).expect("fixture parses");
            for diagnostic in &diagnostics {
                let Some(fix) = &diagnostic.fix else { continue };
                let rule = diagnostic.rule;
                assert!(
                    rule.fixes.contains(&fix.safety),
                    "{}: {} offers a {:?} fix it does not declare",
                    display(&file),
                    rule.code,
                    fix.safety
                );
                fixes += 1;
            }
        }
    }
    assert!(fixes > 100, "only {fixes} fixes: the check would check little");
}

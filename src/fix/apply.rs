//! Applying fixes: sorted, non-conflicting edits per pass, re-analysed until nothing is left to
//! fix (with a cap); a fix whose result would not parse is dropped and reported, never written.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_parser::parse_module;
use ruff_source_file::LineIndex;

use crate::diagnostic::Diagnostic;
use crate::fix::edit::{Edit, apply_edits};
use crate::rules::Rule;

/// More passes than any real file needs: fixes that keep re-creating each other stop here.
pub const MAX_PASSES: usize = 10;

#[derive(Debug, Clone)]
pub struct AppliedFix {
    pub rule: &'static Rule,
    pub title: String,
    /// One-based line of the hazard in the text the fix was made for: the original text for
    /// fixes of the first pass, the text after earlier passes for later ones.
    pub line: usize,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct DroppedFix {
    pub rule: &'static Rule,
    pub title: String,
    /// One-based line of the hazard in the text the fix was made for.
    pub line: usize,
}

pub struct FixOutcome {
    pub text: String,
    pub applied: Vec<AppliedFix>,
    pub dropped: Vec<DroppedFix>,
    /// What is left to report in the final text.
    pub remaining: Vec<Diagnostic>,
}

/// Fix `text` to a fixpoint. `analyse` finds the hazards of a text (it fails only when the
/// text does not parse, which for the input is the caller's error to report).
pub fn fix_to_fixpoint<E>(
    text: String,
    unsafe_fixes: bool,
    analyse: impl Fn(&str) -> Result<Vec<Diagnostic>, E>,
) -> Result<FixOutcome, E> {
    let found = analyse(&text)?;
    fix_found(text, found, unsafe_fixes, analyse)
}

/// `fix_to_fixpoint` when the hazards of `text` are already known (`found`, as `analyse` finds
/// them): a text is analysed again only after a pass changed it.
pub fn fix_found<E>(
    text: String,
    found: Vec<Diagnostic>,
    unsafe_fixes: bool,
    analyse: impl Fn(&str) -> Result<Vec<Diagnostic>, E>,
) -> Result<FixOutcome, E> {
    let mut outcome = FixOutcome { text, applied: Vec::new(), dropped: Vec::new(), remaining: Vec::new() };
    let mut diagnostics = found;
    let mut refused: HashSet<String> = HashSet::default();
    // A fix whose own finding comes back after it was applied does not converge: never again.
    let mut applied_keys: HashSet<String> = HashSet::default();
    for _ in 0..MAX_PASSES {
        let candidates: Vec<&Diagnostic> = diagnostics
            .iter()
            .filter(|d| d.fix.as_ref().is_some_and(|fix| fix.is_applicable(unsafe_fixes)))
            .filter(|d| {
                !refused.contains(&fix_key(d, &outcome.text)) && !applied_keys.contains(&fix_key(d, &outcome.text))
            })
            .collect();
        if candidates.is_empty() {
            break;
        }
        let chosen = without_conflicts(candidates);
        let accepted = keep_parsing(&outcome.text, chosen, &mut outcome.dropped, &mut refused);
        if accepted.is_empty() {
            // Every fix was refused: the text, and so its hazards, are what they were.
            continue;
        }
        let lines = LineIndex::from_source_text(&outcome.text);
        outcome.applied.extend(accepted.iter().map(|d| AppliedFix {
            rule: d.rule,
            title: d.fix.as_ref().map(|fix| fix.title.clone()).unwrap_or_default(),
            line: lines.line_column(d.range.start(), &outcome.text).line.get(),
            message: d.message.clone(),
        }));
        applied_keys.extend(accepted.iter().map(|d| fix_key(d, &outcome.text)));
        let edits: Vec<&Edit> = accepted.iter().flat_map(|d| fix_edits(d)).collect();
        let fixed = apply_edits(&outcome.text, &edits);
        // Edits that wrote back what was there leave the hazards as they were.
        if fixed != outcome.text {
            diagnostics = analyse(&fixed)?;
            outcome.text = fixed;
        }
    }
    outcome.remaining = diagnostics;
    Ok(outcome)
}

fn line_of(text: &str, diagnostic: &Diagnostic) -> usize {
    LineIndex::from_source_text(text).line_column(diagnostic.range.start(), text).line.get()
}

fn fix_edits(diagnostic: &Diagnostic) -> &[Edit] {
    diagnostic.fix.as_ref().map_or(&[], |fix| fix.edits.as_slice())
}

/// Identifies a fix across passes (ranges move as other fixes land; the hazard's text does not).
fn fix_key(diagnostic: &Diagnostic, text: &str) -> String {
    format!("{}|{}|{}", diagnostic.rule.code, diagnostic.message, &text[diagnostic.range])
}

/// In source order, every fix whose edits do not conflict with those already taken.
fn without_conflicts(mut candidates: Vec<&Diagnostic>) -> Vec<&Diagnostic> {
    candidates.sort_by_key(|d| (d.range.start(), d.range.end()));
    let mut taken: Vec<&Edit> = Vec::new();
    let mut chosen = Vec::new();
    for diagnostic in candidates {
        let edits = fix_edits(diagnostic);
        if edits.iter().any(|edit| taken.iter().any(|other| edit.conflicts_with(other))) {
            continue;
        }
        taken.extend(edits);
        chosen.push(diagnostic);
    }
    chosen
}

/// The chosen fixes whose combined result parses. If all of them together break the syntax,
/// they are tried one by one and each one that breaks it is dropped.
fn keep_parsing<'d>(
    text: &str,
    chosen: Vec<&'d Diagnostic>,
    dropped: &mut Vec<DroppedFix>,
    refused: &mut HashSet<String>,
) -> Vec<&'d Diagnostic> {
    let parses = |fixes: &[&Diagnostic]| {
        let edits: Vec<&Edit> = fixes.iter().flat_map(|d| fix_edits(d)).collect();
        parse_module(&apply_edits(text, &edits)).is_ok()
    };
    if parses(&chosen) {
        return chosen;
    }
    let mut accepted: Vec<&Diagnostic> = Vec::new();
    for diagnostic in chosen {
        accepted.push(diagnostic);
        if !parses(&accepted) {
            accepted.pop();
            refused.insert(fix_key(diagnostic, text));
            dropped.push(DroppedFix {
                rule: diagnostic.rule,
                title: diagnostic.fix.as_ref().map(|fix| fix.title.clone()).unwrap_or_default(),
                line: line_of(text, diagnostic),
            });
        }
    }
    accepted
}

#[cfg(test)]
mod tests {
    use ruff_text_size::{TextRange, TextSize};

    use super::*;
    use crate::fix::{Fix, Safety};
    use crate::rules::RULES;

    /// A stand-in analysis: one finding per `hazard` on the text, each with the given edits.
    fn findings(text: &str, make: &dyn Fn(TextSize) -> Vec<Edit>) -> Vec<Diagnostic> {
        text.match_indices("hazard")
            .map(|(at, word)| {
                let range = TextRange::at(TextSize::try_from(at).unwrap(), TextSize::of(word));
                Diagnostic::new(RULES[0], range, "test").with_fix(Fix::new("test", Safety::Safe, make(range.start())))
            })
            .collect()
    }

    #[test]
    fn a_fix_that_breaks_the_syntax_is_dropped_and_the_others_applied() {
        let text = "x = hazard\ny = 2\n".to_string();
        // Replaces the first hazard with valid code, and inserts an unclosed paren elsewhere.
        let analyse = |current: &str| -> Result<_, ()> {
            Ok(findings(current, &|at| {
                if at == TextSize::new(4) {
                    vec![Edit::replace(TextRange::at(at, TextSize::new(6)), "1")]
                } else {
                    vec![]
                }
            })
            .into_iter()
            .chain(findings(current, &|_| vec![Edit::insert(TextSize::new(0), "(")]).into_iter().take(1))
            .collect())
        };
        let outcome = fix_to_fixpoint(text, false, analyse).unwrap();
        assert_eq!(outcome.text, "x = 1\ny = 2\n");
        assert_eq!(outcome.applied.len(), 1);
        assert_eq!(outcome.dropped.len(), 1, "the paren insertion is dropped, not written");
    }

    #[test]
    fn a_fix_whose_finding_comes_back_is_applied_once() {
        let analyse = |current: &str| -> Result<_, ()> {
            Ok(findings(current, &|at| vec![Edit::replace(TextRange::at(at, TextSize::new(6)), "hazard + 1")])
                .into_iter()
                .take(1)
                .collect())
        };
        let outcome = fix_to_fixpoint("x = hazard\n".to_string(), false, analyse).unwrap();
        assert_eq!(outcome.text, "x = hazard + 1\n");
        assert_eq!(outcome.applied.len(), 1);
        assert_eq!(outcome.remaining.len(), 1, "the hazard is still reported");
    }

    #[test]
    fn fixes_that_keep_making_new_hazards_stop_at_the_cap() {
        // Each pass's finding is new (its message names the text's length), so only the cap stops.
        let analyse = |current: &str| -> Result<Vec<Diagnostic>, ()> {
            Ok(findings(current, &|at| vec![Edit::replace(TextRange::at(at, TextSize::new(6)), "hazard + 1")])
                .into_iter()
                .take(1)
                .map(|mut d| {
                    d.message = format!("pass at length {}", current.len());
                    d
                })
                .collect())
        };
        let outcome = fix_to_fixpoint("x = hazard\n".to_string(), false, analyse).unwrap();
        assert_eq!(outcome.applied.len(), MAX_PASSES);
        assert_eq!(outcome.remaining.len(), 1);
    }

    /// A stand-in analysis that counts how often it runs.
    fn counted<'c>(
        calls: &'c std::cell::Cell<usize>,
        make: &'c dyn Fn(TextSize) -> Vec<Edit>,
    ) -> impl Fn(&str) -> Result<Vec<Diagnostic>, ()> + 'c {
        move |current| {
            calls.set(calls.get() + 1);
            Ok(findings(current, make))
        }
    }

    #[test]
    fn a_text_is_analysed_again_only_after_a_pass_changed_it() {
        let calls = std::cell::Cell::new(0);
        let replace = |at| vec![Edit::replace(TextRange::at(at, TextSize::new(6)), "1")];
        let outcome = fix_to_fixpoint("x = hazard\n".to_string(), false, counted(&calls, &replace)).unwrap();
        assert_eq!(outcome.text, "x = 1\n");
        assert_eq!(calls.get(), 2, "the text as given, and once fixed");
    }

    #[test]
    fn a_pass_whose_fixes_are_all_refused_does_not_analyse_again() {
        let calls = std::cell::Cell::new(0);
        let unclosed = |_| vec![Edit::insert(TextSize::new(0), "(")];
        let outcome = fix_to_fixpoint("x = hazard\n".to_string(), false, counted(&calls, &unclosed)).unwrap();
        assert_eq!((outcome.applied.len(), outcome.dropped.len(), outcome.remaining.len()), (0, 1, 1));
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn a_fix_that_writes_back_the_same_text_does_not_analyse_again() {
        let calls = std::cell::Cell::new(0);
        let same = |at| vec![Edit::replace(TextRange::at(at, TextSize::new(6)), "hazard")];
        let outcome = fix_to_fixpoint("x = hazard\n".to_string(), false, counted(&calls, &same)).unwrap();
        assert_eq!((outcome.applied.len(), outcome.remaining.len()), (1, 1));
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn known_findings_are_not_analysed_again() {
        let calls = std::cell::Cell::new(0);
        let unclosed = |_| vec![Edit::insert(TextSize::new(0), "(")];
        let found = findings("x = hazard\n", &unclosed);
        let outcome = fix_found("x = hazard\n".to_string(), found, false, counted(&calls, &unclosed)).unwrap();
        assert_eq!(outcome.remaining.len(), 1);
        assert_eq!(calls.get(), 0);
    }
}

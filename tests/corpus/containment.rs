//! "Every byte outside the reported edits is unchanged", checked pass by pass from outside the
//! fixer: the rules' findings in each pass are recorded, and the next text must be the previous
//! one with some of that pass's proposed edits applied — each at most once, in order, without
//! overlapping — and nothing else. The check does not reuse the engine's selection of fixes, so
//! a fixer that touched one byte the rules did not ask for would fail it.
//!
//! Limits: it accepts any subset of the proposed edits (not only whole fixes), and a byte an
//! edit replaces may come back unchanged through that edit's content; what it rules out is any
//! change at a place no edit was proposed for.

use std::cell::RefCell;
use std::collections::HashSet;
use std::path::Path;

use tcfix::diagnostic::Diagnostic;
use tcfix::fix::Edit;
use tcfix::fix::apply::{FixOutcome, fix_to_fixpoint};
use tcfix::model::index::Facts;
use tcfix::rules::Settings;
use tcfix::source::SourceError;

/// One pass of the fixer: the text it looked at and what the rules found in it.
pub struct Pass {
    pub text: String,
    pub diagnostics: Vec<Diagnostic>,
}

/// Fixes `text` as `tcfix::fix` does (same fixer, same analysis), recording every pass.
pub fn fix_recording(
    path: &Path,
    text: &str,
    facts: &Facts,
    settings: &Settings,
    unsafe_fixes: bool,
) -> Result<(FixOutcome, Vec<Pass>), SourceError> {
    let passes = RefCell::new(Vec::new());
    let outcome = fix_to_fixpoint(text.to_string(), unsafe_fixes, |current| {
        let diagnostics = tcfix::analyse(path, current, facts, settings, None)?;
        passes.borrow_mut().push(Pass { text: current.to_string(), diagnostics: diagnostics.clone() });
        Ok(diagnostics)
    })?;
    Ok((outcome, passes.into_inner()))
}

/// Checks that each pass's text became the next one through the edits proposed in it, and that
/// the last pass looked at the final text. Returns how many passes changed the text.
pub fn check_passes(passes: &[Pass], final_text: &str, unsafe_fixes: bool) -> Result<usize, String> {
    let last = passes.last().ok_or("the fixer never analysed the text")?;
    if last.text != final_text {
        return Err("the final text was never analysed: it changed after the last pass".to_string());
    }
    let mut changed = 0;
    for (index, pair) in passes.windows(2).enumerate() {
        let (before, after) = (&pair[0], &pair[1]);
        if before.text == after.text {
            continue;
        }
        changed += 1;
        let edits: Vec<&Edit> = before
            .diagnostics
            .iter()
            .filter_map(|d| d.fix.as_ref())
            .filter(|fix| fix.is_applicable(unsafe_fixes))
            .flat_map(|fix| fix.edits.iter())
            .collect();
        if !explained_by(&before.text, &after.text, &edits) {
            return Err(format!(
                "pass {}: the text changed outside the {} edits the rules proposed\n{}",
                index + 1,
                edits.len(),
                first_difference(&before.text, &after.text)
            ));
        }
    }
    Ok(changed)
}

/// Whether `after` is `before` with some of `edits` applied (each at most once, none
/// overlapping another, insertions before a replacement at the same point) and nothing else.
pub fn explained_by(before: &str, after: &str, edits: &[&Edit]) -> bool {
    let (before, after) = (before.as_bytes(), after.as_bytes());
    let mut starts: Vec<usize> = edits.iter().map(|edit| edit.range.start().to_usize()).collect();
    starts.push(before.len());
    starts.sort_unstable();
    starts.dedup();
    // A state: position in `before`, in `after`, and whether an insertion was made at this
    // position already (then only a replacement may follow there).
    let mut pending: Vec<(usize, usize, bool)> = vec![(0, 0, false)];
    let mut seen: HashSet<(usize, usize, bool)> = HashSet::new();
    while let Some((i, j, inserted)) = pending.pop() {
        if !seen.insert((i, j, inserted)) {
            continue;
        }
        if i == before.len() && j == after.len() {
            return true;
        }
        // Apply an edit that starts here.
        for edit in edits.iter().filter(|edit| edit.range.start().to_usize() == i) {
            let (end, content) = (edit.range.end().to_usize(), edit.content.as_bytes());
            if (inserted || content.is_empty()) && end == i {
                continue;
            }
            if after[j..].starts_with(content) {
                pending.push((end, j + content.len(), end == i));
            }
        }
        // Or keep the original bytes up to the next place an edit starts.
        if i < before.len() {
            let next = starts[starts.partition_point(|&start| start <= i)];
            let length = next - i;
            if after.len() >= j + length && before[i..next] == after[j..j + length] {
                pending.push((next, j + length, false));
            }
        }
    }
    false
}

fn first_difference(before: &str, after: &str) -> String {
    let common = before.bytes().zip(after.bytes()).take_while(|(a, b)| a == b).count();
    let line = before[..common].matches('\n').count() + 1;
    let context = |text: &str| {
        let start = text[..common].rfind('\n').map_or(0, |at| at + 1);
        let end = (common + 80).min(text.len());
        text.get(start..end).unwrap_or("").to_string()
    };
    format!("first difference at line {line}:\n  before: {:?}\n  after:  {:?}", context(before), context(after))
}

#[cfg(test)]
mod tests {
    use ruff_text_size::{TextRange, TextSize};

    use super::*;

    fn edit(start: u32, end: u32, content: &str) -> Edit {
        Edit::replace(TextRange::new(TextSize::new(start), TextSize::new(end)), content)
    }

    #[test]
    fn the_checker_accepts_proposed_edits_and_nothing_else() {
        let before = "a = 1\nb = 2\n";
        let edits = [edit(4, 5, "10"), edit(6, 6, "# x\n"), edit(6, 6, "# y\n")];
        let edits: Vec<&Edit> = edits.iter().collect();
        assert!(explained_by(before, before, &edits), "no edit applied");
        assert!(explained_by(before, "a = 10\nb = 2\n", &edits));
        assert!(explained_by(before, "a = 10\n# y\nb = 2\n", &edits));
        assert!(!explained_by(before, "a = 10\n# y\nb = 3\n", &edits), "a change no edit proposed");
        assert!(!explained_by(before, "a = 10\n# x\n# x\nb = 2\n", &edits), "an edit applied twice");
        assert!(!explained_by(before, "a = 1\r\nb = 2\n", &edits), "a line ending changed");
    }
}

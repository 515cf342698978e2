//! `--statistics`: how many findings each rule has, most frequent first, like `ruff --statistics`,
//! then how many of them carry each kind of fix:
//!
//! ```text
//! 12<TAB>TCF101<TAB>[*] print-in-compiled-code<TAB> 12 safe<TAB>  0 unsafe<TAB>  0 display-only<TAB>  0 no fix
//!  3<TAB>TCF201<TAB>[-] lazily-grown-buffer    <TAB>  1 safe<TAB>  1 unsafe<TAB>  0 display-only<TAB>  1 no fix
//!  1<TAB>TCF202<TAB>[ ] stateful-hook          <TAB>  0 safe<TAB>  0 unsafe<TAB>  0 display-only<TAB>  1 no fix
//! ```
//!
//! `[*]`: every finding of the rule can be fixed (with `--apply`, or with `--unsafe-fixes` when
//! that is given), `[-]`: some can, `[ ]`: none can. The marker column is left out when nothing
//! is fixable. The four counts say what each finding carries whatever the flags: a Safe fix
//! (written by `--apply`), an Unsafe one (written with `--unsafe-fixes`), a DisplayOnly suggestion
//! (shown, never written), or no fix (the finding says why).

use std::fmt::Write;

use super::FileFindings;
use crate::fix::Safety;
use crate::rules::Rule;

struct RuleCount {
    rule: &'static Rule,
    count: usize,
    fixable: usize,
    /// Findings with a Safe, an Unsafe, a DisplayOnly fix, and with none.
    with_safe: usize,
    with_unsafe: usize,
    with_display_only: usize,
    without_fix: usize,
}

impl RuleCount {
    fn new(rule: &'static Rule) -> Self {
        Self { rule, count: 0, fixable: 0, with_safe: 0, with_unsafe: 0, with_display_only: 0, without_fix: 0 }
    }

    fn add(&mut self, safety: Option<Safety>, fixable: bool) {
        self.count += 1;
        self.fixable += usize::from(fixable);
        match safety {
            Some(Safety::Safe) => self.with_safe += 1,
            Some(Safety::Unsafe) => self.with_unsafe += 1,
            Some(Safety::DisplayOnly) => self.with_display_only += 1,
            None => self.without_fix += 1,
        }
    }
}

pub fn statistics(files: &[FileFindings], unsafe_fixes: bool) -> String {
    let mut counts: Vec<RuleCount> = Vec::new();
    for diagnostic in files.iter().flat_map(|file| file.diagnostics) {
        let fixable = diagnostic.fix.as_ref().is_some_and(|fix| fix.is_applicable(unsafe_fixes));
        let index = match counts.iter().position(|count| count.rule.code == diagnostic.rule.code) {
            Some(index) => index,
            None => {
                counts.push(RuleCount::new(diagnostic.rule));
                counts.len() - 1
            }
        };
        counts[index].add(diagnostic.fix.as_ref().map(|fix| fix.safety), fixable);
    }
    counts.sort_by(|a, b| b.count.cmp(&a.count).then(a.rule.code.cmp(b.rule.code)));

    let count_width = counts.iter().map(|count| count.count.to_string().len()).max().unwrap_or(0);
    let code_width = counts.iter().map(|count| count.rule.code.len()).max().unwrap_or(0);
    let name_width = counts.iter().map(|count| count.rule.name.len()).max().unwrap_or(0);
    let any_fixable = counts.iter().any(|count| count.fixable > 0);
    let mut out = String::new();
    for count in &counts {
        let marker = match count.fixable {
            _ if !any_fixable => "",
            0 => "[ ] ",
            fixable if fixable == count.count => "[*] ",
            _ => "[-] ",
        };
        let _ = writeln!(
            out,
            "{:>count_width$}\t{:<code_width$}\t{marker}{:<name_width$}\t{:>count_width$} safe\t{:>count_width$} unsafe\t{:>count_width$} display-only\t{:>count_width$} no fix",
            count.count,
            count.rule.code,
            count.rule.name,
            count.with_safe,
            count.with_unsafe,
            count.with_display_only,
            count.without_fix,
        );
    }
    out
}

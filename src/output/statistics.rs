//! `--statistics`: how many findings each rule has, most frequent first, like `ruff --statistics`:
//!
//! ```text
//! 12<TAB>TCF101<TAB>[*] print-in-compiled-code
//!  3<TAB>TCF201<TAB>[-] lazily-grown-buffer
//!  1<TAB>TCF202<TAB>[ ] stateful-hook
//! ```
//!
//! `[*]`: every finding of the rule can be fixed (with `--apply`, or with `--unsafe-fixes` when
//! that is given), `[-]`: some can, `[ ]`: none can. The marker column is left out when nothing
//! is fixable.

use std::fmt::Write;

use super::FileFindings;
use crate::rules::Rule;

struct RuleCount {
    rule: &'static Rule,
    count: usize,
    fixable: usize,
}

pub fn statistics(files: &[FileFindings], unsafe_fixes: bool) -> String {
    let mut counts: Vec<RuleCount> = Vec::new();
    for diagnostic in files.iter().flat_map(|file| file.diagnostics) {
        let fixable = diagnostic.fix.as_ref().is_some_and(|fix| fix.is_applicable(unsafe_fixes));
        let index = match counts.iter().position(|count| count.rule.code == diagnostic.rule.code) {
            Some(index) => index,
            None => {
                counts.push(RuleCount { rule: diagnostic.rule, count: 0, fixable: 0 });
                counts.len() - 1
            }
        };
        counts[index].count += 1;
        counts[index].fixable += usize::from(fixable);
    }
    counts.sort_by(|a, b| b.count.cmp(&a.count).then(a.rule.code.cmp(b.rule.code)));

    let count_width = counts.iter().map(|count| count.count.to_string().len()).max().unwrap_or(0);
    let code_width = counts.iter().map(|count| count.rule.code.len()).max().unwrap_or(0);
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
            "{:>count_width$}\t{:<code_width$}\t{marker}{}",
            count.count, count.rule.code, count.rule.name
        );
    }
    out
}

//! The condition each finding's code needs before it runs, as the model finds them
//! (`unset_flags`, `replaced_submodules`, `constructor_flags`, `config_defaults`): a walk marks
//! the branches it reads, and every finding inside one gets that branch's condition, the
//! outermost first.

use ruff_python_ast::Stmt;
use ruff_text_size::{Ranged, TextRange};

pub struct FindingConditions {
    /// The findings: (range, position in the caller's list), sorted by start, so that the
    /// findings inside a range are found by a binary search and not by testing every one (a
    /// file can hold tens of thousands of classes, each with a finding).
    by_start: Vec<(TextRange, usize)>,
    /// By finding, in the caller's order: the condition its code needs, once one is found.
    conditions: Vec<Option<String>>,
}

impl FindingConditions {
    pub fn new(ranges: &[TextRange]) -> Self {
        let mut by_start: Vec<(TextRange, usize)> = ranges.iter().copied().zip(0..).collect();
        by_start.sort_by_key(|(range, _)| range.start());
        Self { by_start, conditions: vec![None; ranges.len()] }
    }

    /// The positions of the findings that lie in `range`.
    fn inside(&self, range: TextRange) -> impl Iterator<Item = usize> + '_ {
        let first = self.by_start.partition_point(|(found, _)| found.start() < range.start());
        self.by_start[first..]
            .iter()
            .take_while(move |(found, _)| found.start() <= range.end())
            .filter(move |(found, _)| range.contains_range(*found))
            .map(|&(_, position)| position)
    }

    /// Code in `range` runs only when `condition` holds: the findings there that have no condition
    /// yet need it (a walk marks outer branches first, so the outermost wins).
    pub fn mark(&mut self, range: TextRange, condition: &str) {
        let inside: Vec<usize> = self.inside(range).filter(|&at| self.conditions[at].is_none()).collect();
        for at in inside {
            self.conditions[at] = Some(condition.to_string());
        }
    }

    /// Whether a finding lies in `range`: a walk need not look anywhere else.
    pub fn touches(&self, range: TextRange) -> bool {
        self.inside(range).next().is_some()
    }

    pub fn into_vec(self) -> Vec<Option<String>> {
        self.conditions
    }
}

/// The range of a branch's body, from its first statement to its last.
pub fn body_range(body: &[Stmt]) -> Option<TextRange> {
    Some(TextRange::new(body.first()?.start(), body.last()?.end()))
}

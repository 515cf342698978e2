//! The condition each finding's code needs before it runs, as the model finds them
//! (`unset_flags`, `replaced_submodules`, `constructor_flags`): a walk marks the branches it reads,
//! and every finding inside one gets that branch's condition, the outermost first.

use ruff_text_size::TextRange;

pub struct FindingConditions<'r> {
    /// The findings' ranges.
    ranges: &'r [TextRange],
    /// By finding: the condition its code needs, once one is found.
    conditions: Vec<Option<String>>,
}

impl<'r> FindingConditions<'r> {
    pub fn new(ranges: &'r [TextRange]) -> Self {
        Self { ranges, conditions: vec![None; ranges.len()] }
    }

    /// Code in `range` runs only when `condition` holds: the findings there that have no condition
    /// yet need it (a walk marks outer branches first, so the outermost wins).
    pub fn mark(&mut self, range: TextRange, condition: &str) {
        for (found, slot) in self.ranges.iter().zip(self.conditions.iter_mut()) {
            if slot.is_none() && range.contains_range(*found) {
                *slot = Some(condition.to_string());
            }
        }
    }

    /// Whether a finding lies in `range`: a walk need not look anywhere else.
    pub fn touches(&self, range: TextRange) -> bool {
        self.ranges.iter().any(|found| range.contains_range(*found))
    }

    pub fn into_vec(self) -> Vec<Option<String>> {
        self.conditions
    }
}

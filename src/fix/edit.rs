//! What a fix is: byte-range replacements on the original text, plus how safe they are.

use ruff_text_size::{Ranged, TextRange, TextSize};

/// Replace `range` of the original text with `content` (an empty range inserts).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Edit {
    pub range: TextRange,
    pub content: String,
}

impl Edit {
    pub fn replace(range: TextRange, content: impl Into<String>) -> Self {
        Self { range, content: content.into() }
    }

    pub fn insert(at: TextSize, content: impl Into<String>) -> Self {
        Self::replace(TextRange::empty(at), content)
    }

    /// Two edits conflict when applying both would be ambiguous: their ranges overlap, or both
    /// insert at the same point. Identical edits never conflict (two fixes may share an
    /// `import torch`).
    pub fn conflicts_with(&self, other: &Edit) -> bool {
        if self == other {
            return false;
        }
        let (a, b) = (self.range, other.range);
        if a.is_empty() && b.is_empty() {
            return a.start() == b.start();
        }
        a.start() < b.end() && b.start() < a.end()
            || (a.is_empty() && a.start() > b.start() && a.start() < b.end())
            || (b.is_empty() && b.start() > a.start() && b.start() < a.end())
    }
}

impl Ranged for Edit {
    fn range(&self) -> TextRange {
        self.range
    }
}

/// How much a fix may change what the user's model computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Safety {
    /// Shown in the diff as a suggestion, never written.
    DisplayOnly,
    /// May change behaviour: written only with `--unsafe-fixes`.
    Unsafe,
    /// Same results in eager and compiled mode: written by `--apply`.
    Safe,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, in the imperative ("Guard the print with ...").
    pub title: String,
    pub edits: Vec<Edit>,
    pub safety: Safety,
}

impl Fix {
    pub fn new(title: impl Into<String>, safety: Safety, mut edits: Vec<Edit>) -> Self {
        edits.sort_by_key(|edit| (edit.range.start(), edit.range.end()));
        edits.dedup();
        let edits = merge_insertions(edits);
        debug_assert!(
            edits.windows(2).all(|pair| pair[0].range.end() <= pair[1].range.start()),
            "the edits of one fix overlap: {edits:?}"
        );
        Self { title: title.into(), edits, safety }
    }

    pub fn is_applicable(&self, unsafe_fixes: bool) -> bool {
        match self.safety {
            Safety::Safe => true,
            Safety::Unsafe => unsafe_fixes,
            Safety::DisplayOnly => false,
        }
    }
}

/// Insertions at one point, in the order given, become one edit (`import torch` then the
/// decorator above a def that opens its scope): two edits at one point would be ambiguous to
/// every reader of the fix but this one (other fixes' conflicts, the corpus containment check).
fn merge_insertions(edits: Vec<Edit>) -> Vec<Edit> {
    let mut merged: Vec<Edit> = Vec::with_capacity(edits.len());
    for edit in edits {
        match merged.last_mut() {
            Some(last)
                if last.range.is_empty() && edit.range.is_empty() && last.range.start() == edit.range.start() =>
            {
                last.content.push_str(&edit.content);
            }
            _ => merged.push(edit),
        }
    }
    merged
}

/// Apply non-conflicting, sorted edits to `text`.
pub fn apply_edits(text: &str, edits: &[&Edit]) -> String {
    let mut sorted: Vec<&Edit> = edits.to_vec();
    sorted.sort_by_key(|edit| (edit.range.start(), edit.range.end()));
    sorted.dedup();
    let mut out = String::with_capacity(text.len() + 64);
    let mut cursor = 0usize;
    for edit in sorted {
        let (start, end) = (edit.range.start().to_usize(), edit.range.end().to_usize());
        out.push_str(&text[cursor..start]);
        out.push_str(&edit.content);
        cursor = end;
    }
    out.push_str(&text[cursor..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(start: u32, end: u32, content: &str) -> Edit {
        Edit::replace(TextRange::new(start.into(), end.into()), content)
    }

    #[test]
    fn overlapping_ranges_conflict_touching_ones_do_not() {
        assert!(edit(0, 5, "a").conflicts_with(&edit(4, 8, "b")));
        assert!(!edit(0, 5, "a").conflicts_with(&edit(5, 8, "b")));
        assert!(edit(3, 3, "a").conflicts_with(&edit(3, 3, "b")), "two insertions at one point");
        assert!(!edit(3, 3, "a").conflicts_with(&edit(3, 3, "a")), "identical edits are shared");
        assert!(edit(4, 4, "a").conflicts_with(&edit(2, 6, "b")), "an insertion inside a replacement");
        assert!(!edit(2, 2, "a").conflicts_with(&edit(2, 6, "b")), "an insertion before a replacement");
    }

    #[test]
    fn a_fixs_insertions_at_one_point_become_one_edit_in_their_order() {
        let edits = vec![edit(3, 3, "import torch\n"), edit(0, 1, "x"), edit(3, 3, "@disable\n"), edit(3, 5, "y")];
        let fix = Fix::new("t", Safety::Safe, edits);
        assert_eq!(fix.edits, [edit(0, 1, "x"), edit(3, 3, "import torch\n@disable\n"), edit(3, 5, "y")]);
    }

    #[test]
    fn edits_change_only_their_ranges() {
        let text = "a = 1\r\n\tb = 2\r\n";
        let edits = [edit(4, 5, "10"), edit(8, 8, "# x\r\n\t")];
        let out = apply_edits(text, &edits.iter().collect::<Vec<_>>());
        assert_eq!(out, "a = 10\r\n\t# x\r\n\tb = 2\r\n");
    }
}

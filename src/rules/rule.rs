//! What a rule is, as data: its code and name, what it finds and why it hurts, and the fixes it
//! can offer. Findings point at it (`Diagnostic::rule`); where the checker calls the rule is kept
//! apart, in the registry, so that a finding depends on this description alone.

use std::fmt;

use crate::fix::Safety;

/// What a hazard costs under torch.compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    GraphBreak,
    Recompile,
    Setup,
    Error,
}

impl Category {
    /// How `--select` / `--ignore` name the category: `graph-break`, `recompile`, `setup`, `error`.
    pub fn selector(self) -> &'static str {
        match self {
            Category::GraphBreak => "graph-break",
            Category::Recompile => "recompile",
            Category::Setup => "setup",
            Category::Error => "error",
        }
    }
}

/// Users see a category by the name `--select` takes (`graph-break`, `setup`): one name each.
impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.selector())
    }
}

pub struct Rule {
    /// `TCF` + 3 digits: 1xx graph breaks, 2xx recompiles, 3xx setup, 4xx errors.
    pub code: &'static str,
    /// The kebab name users type and the folder of its codemod (`codemods/<name>/`).
    pub name: &'static str,
    /// What the fix does, or what to do, in one line ("guard print and logging calls in compiled code").
    pub summary: &'static str,
    /// What the rule finds, in one sentence (`tcfix rules`, SARIF `shortDescription`).
    pub hazard: &'static str,
    /// Why the hazard hurts, in one sentence (the Markdown report).
    pub why: &'static str,
    /// The hazard for a human: `codemods/<name>/README.md`, embedded.
    pub explanation: &'static str,
    pub category: Category,
    /// The safeties its fixes can have; empty when the rule only reports.
    pub fixes: &'static [Safety],
    /// Words one of which a file must contain for the rule to find anything there (the names its
    /// hazard is spelled with, aliases included: `import ... as` keeps the name in the file).
    /// The rule does not run on a file without them. Empty: every file.
    pub mentions: &'static [&'static str],
    /// The operators the hazard hands the backend that it fails to compile (`aten.nonzero`, which
    /// a boolean index-put's backward needs). Dynamo logs such a graph break where the failing
    /// graph starts, not at the operator's line: the evidence joins it to this rule's findings
    /// further on in that function.
    pub backend_ops: &'static [&'static str],
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.code, self.name)
    }
}

impl Rule {
    /// Whether the rule can find anything in a file with this text (see `mentions`).
    pub fn may_apply_to(&self, text: &str) -> bool {
        self.mentions.is_empty() || self.mentions.iter().any(|word| text.contains(word))
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
    }
}

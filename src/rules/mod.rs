//! The rules: one file each, registered here in one line each.

use std::fmt;

use crate::diagnostic::Diagnostic;
use crate::model::file::FileModel;

mod lazily_grown_buffer;
mod opaque_helper_in_compiled_code;
mod print_in_compiled_code;
mod stateful_hook;

/// What a hazard costs under torch.compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    GraphBreak,
    Recompile,
    Setup,
    Error,
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Category::GraphBreak => "graph break",
            Category::Recompile => "recompile",
            Category::Setup => "compile setup",
            Category::Error => "error",
        })
    }
}

pub struct Rule {
    /// `TCF` + 3 digits: 1xx graph breaks, 2xx recompiles, 3xx setup, 4xx errors.
    pub code: &'static str,
    /// The kebab name users type and the folder of its codemod (`codemods/<name>/`).
    pub name: &'static str,
    pub category: Category,
    pub check: fn(&Checker) -> Vec<Diagnostic>,
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.code, self.name)
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
    }
}

pub static RULES: &[&Rule] = &[
    &print_in_compiled_code::RULE,
    &opaque_helper_in_compiled_code::RULE,
    &lazily_grown_buffer::RULE,
    &stateful_hook::RULE,
];

/// What a rule sees: the file's model and the settings that shape fixes.
pub struct Checker<'a> {
    pub model: &'a FileModel<'a>,
    pub settings: &'a Settings,
}

#[derive(Debug, Clone)]
pub struct Settings {
    /// Attribute names on `self` that hold opaque helper objects (tokenizers and the like).
    pub opaque_helpers: Vec<String>,
    pub selection: Selection,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            opaque_helpers: ["tokenizer", "processor", "image_processor", "feature_extractor"]
                .map(String::from)
                .to_vec(),
            selection: Selection::default(),
        }
    }
}

/// `--select` / `--ignore`: by code, code prefix (`TCF1`) or name.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub select: Vec<String>,
    pub ignore: Vec<String>,
}

impl Selection {
    pub fn enabled(&self, rule: &Rule) -> bool {
        let matches = |selector: &String| selector_matches(selector, rule);
        (self.select.is_empty() || self.select.iter().any(matches)) && !self.ignore.iter().any(matches)
    }

    /// Selectors that name no rule: a typo should be an error, not a silent no-op.
    pub fn unknown_selectors(&self) -> Vec<&str> {
        self.select
            .iter()
            .chain(&self.ignore)
            .filter(|selector| !RULES.iter().any(|rule| selector_matches(selector, rule)))
            .map(String::as_str)
            .collect()
    }
}

fn selector_matches(selector: &str, rule: &Rule) -> bool {
    selector == "ALL"
        || selector.eq_ignore_ascii_case(rule.name)
        || rule.code.starts_with(&selector.to_ascii_uppercase())
}

pub fn by_code_or_name(selector: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|rule| rule.code.eq_ignore_ascii_case(selector) || rule.name == selector)
}

/// Every enabled rule's findings for one file, in source order.
pub fn check(model: &FileModel, settings: &Settings) -> Vec<Diagnostic> {
    let checker = Checker { model, settings };
    let mut diagnostics: Vec<Diagnostic> =
        RULES.iter().filter(|rule| settings.selection.enabled(rule)).flat_map(|rule| (rule.check)(&checker)).collect();
    diagnostics.sort_by_key(|d| (d.range.start(), d.rule.code));
    diagnostics
}

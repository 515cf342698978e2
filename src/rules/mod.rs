//! The rules: one file each, registered here in one line each.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::config::Config;

use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::Safety;
pub use crate::fix::torch_api::TorchVersion;

mod check;
pub use check::{Checker, Function, FunctionHooks, StartFunction, check};

mod attribute_reassigned_with_new_shape;
mod bool_mask_index_put;
mod compile_and_ddp;
mod custom_op_without_fake;
mod data_dependent_branch;
mod data_dependent_shape;
mod deprecated_sdp_kernel;
mod dynamic_shapes;
mod full_backward_hook;
mod hook_registered_after_compile;
mod host_call_in_compiled_code;
mod lazily_grown_buffer;
mod loop_over_dynamic_dim;
mod module_created_in_forward;
mod module_state_mutation;
mod opaque_helper_in_compiled_code;
mod print_in_compiled_code;
mod python_container_specialization;
mod scripted_submodule;
mod stateful_hook;
mod tensor_to_python_scalar;

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
    /// Files without them are skipped unread. Empty: every file.
    pub mentions: &'static [&'static str],
    /// Where the checker calls the rule.
    pub hooks: Hooks,
}

/// How a rule looks at a file.
pub enum Hooks {
    /// It looks at the compiled code of each region function, in the checker's one walk of it.
    Function(StartFunction),
    /// It looks at the file as a whole: classes, `__init__` against `forward`, setup code.
    File(fn(&Checker) -> Vec<Diagnostic>),
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

pub static RULES: &[&Rule] = &[
    &print_in_compiled_code::RULE,
    &opaque_helper_in_compiled_code::RULE,
    &tensor_to_python_scalar::RULE,
    &data_dependent_branch::RULE,
    &bool_mask_index_put::RULE,
    &data_dependent_shape::RULE,
    &host_call_in_compiled_code::RULE,
    &deprecated_sdp_kernel::RULE,
    &scripted_submodule::RULE,
    &full_backward_hook::RULE,
    &lazily_grown_buffer::RULE,
    &stateful_hook::RULE,
    &module_state_mutation::RULE,
    &loop_over_dynamic_dim::RULE,
    &python_container_specialization::RULE,
    &module_created_in_forward::RULE,
    &attribute_reassigned_with_new_shape::RULE,
    &hook_registered_after_compile::RULE,
    &compile_and_ddp::RULE,
    &dynamic_shapes::RULE,
    &custom_op_without_fake::RULE,
];

#[derive(Debug, Clone)]
pub struct Settings {
    /// Attribute names on `self` that hold opaque helper objects (tokenizers and the like).
    pub opaque_helpers: Vec<String>,
    pub selection: Selection,
    /// The oldest torch the fixed code must run on.
    pub target_torch: TorchVersion,
    /// Findings less severe than this are dropped (`--min-severity`).
    pub min_severity: Severity,
    /// The configuration file's per-file ignores, if any.
    pub config: Option<Arc<Config>>,
}

impl Settings {
    /// The settings for one file: these, less the rules `per-file-ignores` turns off for it.
    pub fn for_file(&self, path: &Path) -> Cow<'_, Settings> {
        let ignored = self.config.as_ref().map(|config| config.ignored_for(path)).unwrap_or_default();
        if ignored.is_empty() {
            return Cow::Borrowed(self);
        }
        let mut settings = self.clone();
        settings.selection.ignore.extend(ignored);
        Cow::Owned(settings)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            opaque_helpers: ["tokenizer", "processor", "image_processor", "feature_extractor"]
                .map(String::from)
                .to_vec(),
            selection: Selection::default(),
            target_torch: TorchVersion::DEFAULT,
            min_severity: Severity::Low,
            config: None,
        }
    }
}

/// `--select` / `--ignore`: by code, code prefix (`TCF1`), name or category (`recompile`).
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
    pub fn unknown<'s>(selectors: impl IntoIterator<Item = &'s String>) -> Vec<&'s str> {
        selectors
            .into_iter()
            .filter(|selector| !RULES.iter().any(|rule| selector_matches(selector, rule)))
            .map(String::as_str)
            .collect()
    }

    /// Whether a selector list (`# noqa: TCF101, TCF2`) names the rule.
    pub fn names(selectors: &[String], rule: &Rule) -> bool {
        selectors.iter().any(|selector| selector_matches(selector, rule))
    }
}

fn selector_matches(selector: &str, rule: &Rule) -> bool {
    selector == "ALL"
        || selector.eq_ignore_ascii_case(rule.name)
        || rule.code.starts_with(&selector.to_ascii_uppercase())
        || selector.eq_ignore_ascii_case(rule.category.selector())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_says_what_it_finds_and_why() {
        for rule in RULES {
            assert!(rule.code.len() == 6 && rule.code.starts_with("TCF"), "{rule:?}");
            assert!(rule.hazard.ends_with('.') && rule.why.ends_with('.'), "{rule:?}");
            let title = rule.explanation.lines().next().unwrap_or_default();
            assert_eq!(title, format!("# {} {}", rule.code, rule.name), "codemods/{}/README.md's title", rule.name);
        }
    }

    #[test]
    fn codes_and_names_are_unique() {
        for (i, rule) in RULES.iter().enumerate() {
            for other in &RULES[i + 1..] {
                assert!(rule.code != other.code && rule.name != other.name, "{rule:?} and {other:?}");
            }
        }
    }
}

//! The rules: one file each, registered here in one line each.
//!
//! A rule file holds what it finds (`RULE`, the description every finding points at), where the
//! checker calls it (`HOOKS`) and its fix. The registry pairs the two for the checker and lists
//! the descriptions for everything that shows rules (`tcfix rules`, SARIF, the Markdown report).

use crate::diagnostic::Diagnostic;
use crate::model::file::FileModel;
mod check;
pub mod rule;
mod settings;

pub use rule::{Category, Rule};
pub use settings::{CommandLine, Selection, Settings};

use check::{HandOnFix, Registered};

/// Declares each rule's module and lists it, in the order `tcfix rules` shows them, so that a
/// new rule is one line here.
macro_rules! registry {
    ($($rule:ident,)*) => {
        $(mod $rule;)*

        /// Every rule's description.
        pub static RULES: &[&Rule] = &[$(&$rule::RULE),*];

        /// Every rule with its hooks, for the checker.
        static REGISTERED: &[Registered] = &[$(Registered { rule: &$rule::RULE, hooks: $rule::HOOKS }),*];
    };
}

registry! {
    print_in_compiled_code,
    opaque_helper_in_compiled_code,
    tensor_to_python_scalar,
    data_dependent_branch,
    bool_mask_index_put,
    data_dependent_shape,
    host_call_in_compiled_code,
    deprecated_sdp_kernel,
    scripted_submodule,
    full_backward_hook,
    recurrent_module_in_compiled_code,
    requires_grad_set_in_compiled_code,
    buffer_reassigned_in_forward,
    lazily_grown_buffer,
    stateful_hook,
    module_state_mutation,
    loop_over_dynamic_dim,
    python_container_specialization,
    module_created_in_forward,
    attribute_reassigned_with_new_shape,
    shape_specialization,
    size_formatted_into_string,
    einx_in_compiled_code,
    size_passed_to_math,
    hook_registered_after_compile,
    compile_and_ddp,
    dynamic_shapes,
    custom_op_without_fake,
}

/// Fixes that also fix the findings of other rules inside them: TCF101's guard over an output
/// call fixes the reads of values the message alone needs (under compile they are then neither
/// computed nor written).
static FIXES_HANDED_ON: &[HandOnFix] = &[print_in_compiled_code::guard_what_outputs_read];

/// Every enabled rule's findings for one file, in source order.
pub fn check(model: &FileModel, settings: &Settings) -> Vec<Diagnostic> {
    check::check(model, settings, REGISTERED, FIXES_HANDED_ON)
}

/// Whether a selector names any rule: a typo should be an error, not a silent no-op.
pub fn names_a_rule(selector: &str) -> bool {
    RULES.iter().any(|rule| Selection::matches(selector, rule))
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

//! TCF302 compile-and-ddp: `compiled = torch.compile(model)` then `compiled.state_dict()` or
//! `compiled.load_state_dict(...)` in the same function. The wrapper `torch.compile` returns
//! keeps the model as `_orig_mod`, so every key gets the prefix `_orig_mod.` (measured under torch
//! 2.15): a checkpoint saved this way does not load into the plain model, and a plain checkpoint
//! does not load into the wrapper. `model.compile()` compiles in place and keeps the keys.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::compiled::compile_calls::{calls, calls_while_bound, compile_bindings, scopes};
use crate::model::file::imports::dotted_name;
use crate::rules::check::{Checker, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF302",
    name: "compile-and-ddp",
    summary: "save and load the state of the model, not of its torch.compile wrapper",
    explanation: include_str!("../../codemods/compile-and-ddp/README.md"),
    hazard: "The `state_dict` of a `torch.compile`d module has every key prefixed with `_orig_mod.`.",
    why: "A checkpoint saved from the compiled wrapper does not load into the plain model, and a plain checkpoint \
              does not load into the wrapper, without renaming its keys.",
    category: Category::Setup,
    fixes: &[],
    mentions: &["compile"],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::File(check);

fn check(checker: &Checker) -> Vec<Diagnostic> {
    let model = checker.model;
    let mut diagnostics = Vec::new();
    for body in scopes(model) {
        let bindings = compile_bindings(&model.imports, body);
        if bindings.is_empty() {
            continue;
        }
        let calls = calls(body);
        for binding in &bindings {
            for call in calls_while_bound(body, binding, &calls) {
                let Some(method) = state_method(call, &binding.target) else { continue };
                let original = match binding.module.as_deref() {
                    Some(module) if module != binding.target => format!("`{module}.{method}(...)`"),
                    _ => "the original module's".to_string(),
                };
                let message = format!(
                    "`{}.{method}(...)` on the `torch.compile` wrapper: its keys carry the prefix `_orig_mod.`, so checkpoints do not match the plain model's",
                    binding.target
                );
                let advice = if binding.module.as_deref().is_some_and(|module| module != binding.target) {
                    format!("use {original} instead, or compile in place with `model.compile()`, which keeps the keys")
                } else {
                    format!(
                        "compile in place with `{}.compile()` (it keeps the keys), or use `{}._orig_mod.{method}(...)`",
                        binding.module.as_deref().unwrap_or("model"),
                        binding.target
                    )
                };
                diagnostics.push(
                    Diagnostic::new(&RULE, call.range(), message).with_severity(Severity::Low).without_fix(advice),
                );
            }
        }
    }
    diagnostics
}

/// `state_dict` or `load_state_dict` called directly on `target`.
fn state_method<'c>(call: &'c ast::ExprCall, target: &str) -> Option<&'c str> {
    let Expr::Attribute(method) = call.func.as_ref() else { return None };
    let name = method.attr.id.as_str();
    (matches!(name, "state_dict" | "load_state_dict") && dotted_name(&method.value).as_deref() == Some(target))
        .then_some(name)
}

//! TCF301 hook-registered-after-compile: `compiled = torch.compile(model)`, a call of `compiled`,
//! then `model.register_forward_hook(...)` (or on a submodule, or through `compiled.<submodule>`)
//! later in the same function. Measured under torch 2.15: Dynamo skips the guards on module hooks
//! (`skip_nnmodule_hook_guards=True`), so a hook added after the first compiled call never runs in
//! compiled calls, silently. Before the first call, and with `model.compile()`, the hook runs.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::compiled::compile_calls::{CompileBinding, calls, calls_while_bound, compile_bindings, scopes};
use crate::model::file::imports::dotted_name;
use crate::rules::check::{Checker, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF301",
    name: "hook-registered-after-compile",
    summary: "register module hooks before the first compiled call",
    explanation: include_str!("../../codemods/hook-registered-after-compile/README.md"),
    hazard: "A module hook registered after the first call of the `torch.compile`d module never runs in compiled calls.",
    why: "Dynamo does not guard on a module's hooks, so the graph compiled before the hook existed keeps running \
              without it and nothing warns.",
    category: Category::Setup,
    fixes: &[],
    mentions: &["compile"],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::File(check);

/// Forward hooks, measured; backward hooks are TCF110's business.
const REGISTRATIONS: [&str; 2] = ["register_forward_hook", "register_forward_pre_hook"];

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
            let live = calls_while_bound(body, binding, &calls);
            let Some(first_call) = live.iter().find(|call| calls_compiled(call, binding)) else {
                continue;
            };
            for registration in live.iter().filter(|call| call.start() > first_call.end()) {
                let Some((path, hook)) = hook_registration(registration) else { continue };
                if !reaches_compiled_module(&path, binding) {
                    continue;
                }
                let Expr::Attribute(method) = registration.func.as_ref() else { continue };
                let receiver = &model.source.text[method.value.range()];
                let line = model.source.line_column(first_call.start()).0;
                let message = format!(
                    "`{receiver}.{hook}(...)` comes after `{}` was first called (line {line}): the graph compiled then does not run the hook, silently",
                    binding.target
                );
                diagnostics.push(Diagnostic::new(&RULE, registration.range(), message).with_severity(Severity::High).without_fix(
                    "register the hook before the first call of the compiled module (or call `torch._dynamo.reset()` after registering it, which recompiles)",
                ));
            }
        }
    }
    diagnostics
}

fn calls_compiled(call: &ast::ExprCall, binding: &CompileBinding) -> bool {
    dotted_name(&call.func).as_deref() == Some(binding.target.as_str())
}

/// `model.layers[0].register_forward_hook(...)` -> (`model.layers[0]`, `register_forward_hook`).
fn hook_registration(call: &ast::ExprCall) -> Option<(String, &str)> {
    let Expr::Attribute(method) = call.func.as_ref() else { return None };
    let hook = method.attr.id.as_str();
    REGISTRATIONS.contains(&hook).then(|| Some((receiver_path(&method.value)?, hook)))?
}

/// `model`, `model.encoder`, `model.layers[0]` written as a path (`[...]` for any index).
fn receiver_path(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Name(name) => Some(name.id.to_string()),
        Expr::Attribute(attr) => Some(format!("{}.{}", receiver_path(&attr.value)?, attr.attr.id)),
        Expr::Subscript(subscript) => Some(format!("{}[...]", receiver_path(&subscript.value)?)),
        _ => None,
    }
}

/// The module that was compiled or one of its submodules, reached by its own name or through the
/// compiled wrapper. A hook on the wrapper itself (`compiled.register_forward_hook`) runs outside
/// the compiled frame and works.
fn reaches_compiled_module(receiver: &str, binding: &CompileBinding) -> bool {
    let within = |root: &str| {
        receiver
            .strip_prefix(root)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
    };
    let through_wrapper = within(&binding.target) && receiver != binding.target;
    let on_original = binding.module.as_deref().is_some_and(|module| module != binding.target && within(module));
    through_wrapper || on_original
}

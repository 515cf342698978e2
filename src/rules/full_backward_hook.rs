//! TCF110 full-backward-hook: `register_full_backward_hook`, `register_full_backward_pre_hook` and
//! the legacy `register_backward_hook` on a module that gets compiled. Dynamo breaks at the hooked
//! module's call (GB0083 "Module-level backwards hooks require compiled autograd"; GB0104 for the
//! legacy hook) and, measured under torch 2.15, compiles no graph for that frame at all.
//!
//! Which modules get compiled is not visible from one registration, so the rule stays
//! conservative: it reports registrations in a function (or module level) that also compiles
//! something (`torch.compile(...)`, `@torch.compile`, `x.compile()`), and registrations a module class makes on itself or its
//! submodules (`self.register_full_backward_hook`, `self.proj.register_...`), since the module
//! then carries the hook into every compile of it.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

use crate::diagnostic::Diagnostic;
use crate::model::compiled::compile_calls::scope_holding;
use crate::model::file::FileModel;
use crate::model::file::imports::last_segment;
use crate::rules::check::{Checker, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF110",
    name: "full-backward-hook",
    summary: "use tensor hooks or compiled autograd instead of module backward hooks",
    explanation: include_str!("../../codemods/full-backward-hook/README.md"),
    hazard: "A module backward hook on a compiled module breaks the graph at the module's call.",
    why: "Module-level backward hooks need compiled autograd, so Dynamo breaks at the hooked module and the frame \
              that calls it compiles no graph.",
    category: Category::GraphBreak,
    fixes: &[],
    mentions: &["backward_hook", "backward_pre_hook"],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::File(check);

const BACKWARD_HOOKS: [&str; 3] =
    ["register_full_backward_hook", "register_full_backward_pre_hook", "register_backward_hook"];

fn check(checker: &Checker) -> Vec<Diagnostic> {
    let model = checker.model;
    let registrations: Vec<&ast::ExprCall> = model.calls.iter().copied().filter(|call| is_registration(call)).collect();
    if registrations.is_empty() {
        return Vec::new();
    }
    let compiling: HashSet<Option<usize>> = model
        .calls
        .iter()
        .filter(|call| is_compile_call(model, call))
        .filter_map(|call| scope_holding(model, call.range()))
        .collect();
    registrations
        .into_iter()
        .filter_map(|call| {
            let scope = scope_holding(model, call.range())?;
            finding(model, call, compiling.contains(&scope))
        })
        .collect()
}

/// `<receiver>.register_full_backward_hook(...)` and the like.
fn is_registration(call: &ast::ExprCall) -> bool {
    let method = last_segment(&call.func);
    method.is_some_and(|name| BACKWARD_HOOKS.contains(&name)) && matches!(call.func.as_ref(), Expr::Attribute(_))
}

/// A registration is reported when the same scope compiles something (its own code, as
/// `compile_calls::scopes` lists it: no nested def or class), (a training script that hooks
/// then compiles), or when a module hooks itself or its submodules in its own methods.
fn finding(model: &FileModel, call: &ast::ExprCall, scope_compiles: bool) -> Option<Diagnostic> {
    let Expr::Attribute(method) = call.func.as_ref() else { return None };
    let on_own_module = is_self_or_submodule(&method.value) && in_module_class(model, call);
    if !scope_compiles && !on_own_module {
        return None;
    }
    let receiver = &model.source.text[method.value.range()];
    let id = if method.attr.id.as_str() == "register_backward_hook" { "GB0104" } else { "GB0083" };
    let whose = if on_own_module { "a module's own code" } else { "code that calls torch.compile" };
    let message = format!(
        "`{receiver}.{}(...)` in {whose}: under torch.compile Dynamo breaks the graph at `{receiver}`'s call ({id}: module backward hooks need compiled autograd) and the frame that calls it compiles no graph",
        method.attr.id
    );
    Some(Diagnostic::new(&RULE, call.range(), message).without_fix(
        "hook the tensors instead (`output.register_hook(...)` inside forward, or on parameters), or enable compiled autograd (`torch._dynamo.config.compiled_autograd = True`)",
    ))
}

/// `self`, `self.proj`, `self.blocks[0]`: the module itself or one of its submodules.
fn is_self_or_submodule(expr: &Expr) -> bool {
    match expr {
        Expr::Name(name) => name.id.as_str() == "self",
        Expr::Attribute(attr) => is_self_or_submodule(&attr.value),
        Expr::Subscript(subscript) => is_self_or_submodule(&subscript.value),
        _ => false,
    }
}

/// Whether the call sits in a method of an `nn.Module` class.
fn in_module_class(model: &FileModel, call: &ast::ExprCall) -> bool {
    model.functions.iter().enumerate().any(|(index, function)| {
        function.node.range().contains_range(call.range())
            && model.self_class(index).is_some_and(|class| model.classes[class].is_module)
    })
}

/// `torch.compile(...)` or `<module>.compile(...)`.
fn is_compile_call(model: &FileModel, call: &ast::ExprCall) -> bool {
    if model.imports.qualified_name(&call.func).as_deref() == Some("torch.compile") {
        return true;
    }
    matches!(call.func.as_ref(), Expr::Attribute(attr) if attr.attr.id.as_str() == "compile" && !is_regex_or_builtin(model, &attr.value))
}

/// `re.compile`, `regex.compile`: not torch.
fn is_regex_or_builtin(model: &FileModel, expr: &Expr) -> bool {
    let Some(name) = model.imports.qualified_name(expr) else { return false };
    matches!(name.as_str(), "re" | "regex" | "torch" | "jax" | "numba" | "tf" | "tensorflow")
}

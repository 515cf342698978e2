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

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use crate::diagnostic::Diagnostic;
use crate::model::compiled::compile_calls::scopes;
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
    let mut diagnostics = Vec::new();
    for body in scopes(model) {
        let mut finder = Finder { model, registrations: Vec::new(), compiles: false };
        finder.visit_body(body);
        for call in finder.registrations {
            if let Some(diagnostic) = finding(model, call, finder.compiles) {
                diagnostics.push(diagnostic);
            }
        }
    }
    diagnostics
}

/// A registration is reported when the same scope compiles something (a training script that hooks
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

struct Finder<'m, 'a> {
    model: &'m FileModel<'a>,
    registrations: Vec<&'a ast::ExprCall>,
    compiles: bool,
}

impl<'a> Visitor<'a> for Finder<'_, 'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            // A nested def is a scope of its own.
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            _ => walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr {
            let method = last_segment(&call.func);
            if method.is_some_and(|name| BACKWARD_HOOKS.contains(&name))
                && matches!(call.func.as_ref(), Expr::Attribute(_))
            {
                self.registrations.push(call);
            }
            if is_compile_call(self.model, call) {
                self.compiles = true;
            }
        }
        walk_expr(self, expr);
    }
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

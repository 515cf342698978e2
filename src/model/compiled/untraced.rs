//! Decorators that keep Dynamo out of a function: `torch.compiler.disable` (a graph break at the
//! call, the body runs eagerly) and `torch._dynamo.assume_constant_result` (called once at trace
//! time, its result inlined). Nothing in such a function, and nothing reached only through it, is
//! traced. Not `allow_in_graph`: Dynamo puts the call in the graph unchecked, but AOTAutograd and
//! Inductor still trace its body, where a `print` runs once at trace time and `.item()` fails, so
//! tcfix still checks it. Projects spell them their
//! own way: an alias (`disable_compiler = getattr(torch.compiler, "disable", None) or nullwrap`),
//! a wrapper (`def no_compile(fn): return torch.compiler.disable(fn)`), or a decorator that sets
//! the attribute Dynamo reads (`setattr(fn, "_dynamo_marked_constant", True)`).

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::file::imports::Imports;
/// The attributes of `torch.compiler` / `torch._dynamo` that keep Dynamo out of a function.
const UNTRACED: [&str; 2] = ["disable", "assume_constant_result"];

/// The attribute `assume_constant_result` sets, which Dynamo reads on every function it meets.
const MARKED_CONSTANT: &str = "_dynamo_marked_constant";

/// `torch.compiler.disable`, `torch._dynamo.assume_constant_result` and their re-exports under
/// `torch.`.
pub fn is_untraced_decorator(qualified: &str) -> bool {
    qualified.starts_with("torch.") && qualified.rsplit_once('.').is_some_and(|(_, last)| UNTRACED.contains(&last))
}

/// The module-level names of a file that, used as decorators, keep Dynamo out of the function:
/// aliases of torch's decorators and the file's own decorators that apply or imitate them.
pub fn untraced_decorators(suite: &[Stmt], imports: &Imports) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for stmt in suite {
        match stmt {
            Stmt::FunctionDef(def) if applies_untraced(def, imports) => found.push(def.name.id.to_string()),
            Stmt::Assign(assign) if is_untraced_value(&assign.value, imports) => {
                found.extend(assign.targets.iter().filter_map(name_of));
            }
            _ => {}
        }
    }
    found
}

/// The module-level functions a file marks after their definition (`probe._dynamo_marked_constant
/// = True`, `setattr(probe, "_dynamo_marked_constant", True)`).
pub fn marked_after_definition(suite: &[Stmt]) -> Vec<String> {
    suite.iter().filter_map(|stmt| marked_name(stmt, None)).collect()
}

fn name_of(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Name(name) => Some(name.id.to_string()),
        _ => None,
    }
}

/// An alias of one of torch's decorators: the name itself, `getattr(torch.compiler, "disable",
/// None)`, and either side of `... or fallback` / `a if cond else b` (the fallback runs without
/// torch.compile, where nothing is traced anyway).
fn is_untraced_value(value: &Expr, imports: &Imports) -> bool {
    match value {
        Expr::BoolOp(op) => op.values.iter().any(|v| is_untraced_value(v, imports)),
        Expr::If(if_expr) => is_untraced_value(&if_expr.body, imports) || is_untraced_value(&if_expr.orelse, imports),
        Expr::Call(call) if is_getattr(call, imports) => {
            let [object, Expr::StringLiteral(attr), ..] = &*call.arguments.args else { return false };
            UNTRACED.contains(&attr.value.to_str()) && names_torch(object, imports)
        }
        _ => imports.qualified_name(value).is_some_and(|name| is_untraced_decorator(&name)),
    }
}

fn is_getattr(call: &ast::ExprCall, imports: &Imports) -> bool {
    matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "getattr" && imports.get("getattr").is_none())
}

/// `torch.compiler`, `torch._dynamo`, `getattr(torch, "compiler", None)`.
fn names_torch(expr: &Expr, imports: &Imports) -> bool {
    match expr {
        Expr::Call(call) if is_getattr(call, imports) => {
            call.arguments.args.first().is_some_and(|object| names_torch(object, imports))
        }
        _ => imports.qualified_name(expr).is_some_and(|name| name == "torch" || name.starts_with("torch.")),
    }
}

/// A decorator `def deco(fn): ...` that applies one of torch's (`return torch.compiler.disable(fn)`)
/// or sets the attribute Dynamo reads (`setattr(fn, "_dynamo_marked_constant", True)`), then
/// returns what it was given.
fn applies_untraced(def: &ast::StmtFunctionDef, imports: &Imports) -> bool {
    let Some(parameter) = def.parameters.posonlyargs.iter().chain(&def.parameters.args).next() else {
        return false;
    };
    let parameter = parameter.parameter.name.id.as_str();
    def.body.iter().any(|stmt| {
        marked_name(stmt, Some(parameter)).is_some()
            || matches!(stmt, Stmt::Return(ast::StmtReturn { value: Some(value), .. })
                if returns_untraced_call(value, parameter, imports))
    })
}

/// `return torch.compiler.disable(fn)`.
fn returns_untraced_call(value: &Expr, parameter: &str, imports: &Imports) -> bool {
    let Expr::Call(call) = value else { return false };
    let [Expr::Name(argument)] = &*call.arguments.args else { return false };
    argument.id.as_str() == parameter && is_untraced_value(&call.func, imports)
}

/// The name `stmt` marks constant for Dynamo (`name._dynamo_marked_constant = True` or
/// `setattr(name, "_dynamo_marked_constant", True)`), when it is `only` (if given).
fn marked_name(stmt: &Stmt, only: Option<&str>) -> Option<String> {
    let name = match stmt {
        Stmt::Assign(assign) if is_true(&assign.value) => assign.targets.iter().find_map(|target| match target {
            Expr::Attribute(attr) if attr.attr.id.as_str() == MARKED_CONSTANT => name_of(&attr.value),
            _ => None,
        }),
        Stmt::Expr(expr) => {
            let Expr::Call(call) = expr.value.as_ref() else { return None };
            let is_setattr = matches!(call.func.as_ref(), Expr::Name(f) if f.id.as_str() == "setattr");
            match &*call.arguments.args {
                [object, Expr::StringLiteral(attr), value]
                    if is_setattr && attr.value.to_str() == MARKED_CONSTANT && is_true(value) =>
                {
                    name_of(object)
                }
                _ => None,
            }
        }
        _ => None,
    }?;
    only.is_none_or(|only| only == name).then_some(name)
}

fn is_true(expr: &Expr) -> bool {
    matches!(expr, Expr::BooleanLiteral(literal) if literal.value)
}

/// The file's module-level class decorators that replace the class's `forward` by one that never
/// calls it: a dispatcher that runs the implementation a config names, the original only as a
/// fallback it hands on (transformers' `@use_experts_implementation`: by default the grouped-mm
/// kernel runs, not the class's per-expert loop). The class's own `forward` is then not what
/// Dynamo traces.
pub fn forward_replacing_decorators(suite: &[Stmt]) -> Vec<String> {
    suite
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::FunctionDef(def) if replaces_forward(def) => Some(def.name.id.to_string()),
            _ => None,
        })
        .collect()
}

/// `cls.forward = dispatch` somewhere in the decorator (or the wrapper it returns), where
/// `dispatch` is a def of the decorator that never calls the saved `original = cls.forward`.
fn replaces_forward(decorator: &ast::StmtFunctionDef) -> bool {
    let mut statements = Statements::default();
    statements.visit_body(&decorator.body);
    let originals: Vec<&str> = statements
        .found
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::Assign(assign) if forward_of(&assign.value).is_some() => {
                let [Expr::Name(original)] = &*assign.targets else { return None };
                Some(original.id.as_str())
            }
            _ => None,
        })
        .collect();
    statements.found.iter().any(|stmt| {
        let Stmt::Assign(assign) = stmt else { return false };
        let [target] = &*assign.targets else { return false };
        let Expr::Name(replacement) = assign.value.as_ref() else { return false };
        forward_of(target).is_some()
            && statements.found.iter().any(|other| match other {
                Stmt::FunctionDef(def) => def.name.id == replacement.id && !calls_any(&def.body, &originals),
                _ => false,
            })
    })
}

/// `cls.forward` (a name's `forward`): the name.
fn forward_of(expr: &Expr) -> Option<&str> {
    let Expr::Attribute(attr) = expr else { return None };
    let Expr::Name(owner) = attr.value.as_ref() else { return None };
    (attr.attr.id.as_str() == "forward").then_some(owner.id.as_str())
}

fn calls_any(body: &[Stmt], names: &[&str]) -> bool {
    let mut calls = CallsTo { names, found: false };
    calls.visit_body(body);
    calls.found
}

/// Every statement of a body, nested defs' included.
#[derive(Default)]
struct Statements<'a> {
    found: Vec<&'a Stmt>,
}

impl<'a> Visitor<'a> for Statements<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        self.found.push(stmt);
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, _expr: &'a Expr) {}
}

/// Whether a body calls one of `names` (`original(self, x)`).
struct CallsTo<'n> {
    names: &'n [&'n str],
    found: bool,
}

impl<'a> Visitor<'a> for CallsTo<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && let Expr::Name(name) = call.func.as_ref()
            && self.names.contains(&name.id.as_str())
        {
            self.found = true;
        }
        walk_expr(self, expr);
    }
}

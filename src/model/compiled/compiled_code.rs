//! Walks the code of a function that Dynamo traces, skipping what the user already keeps out
//! of the compiled region: `if not torch.compiler.is_compiling():` bodies, the `else` of
//! `if torch.compiler.is_compiling():` (and the side of such a ternary that compiled code does not
//! pick), what follows the guard in `not is_compiling() and ...` / `is_compiling() or ...`,
//! everything after `if torch.compiler.is_compiling(): return`,
//! dead branches (`if 0:`, `if False:`: CPython drops them from the bytecode, Dynamo never sees
//! them), and nested `def`/`class` bodies (they are functions of their own).

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::file::imports::{Imports, last_segment};
use crate::model::file::{Body, FileModel};
/// Where in the compiled code a node sits.
#[derive(Clone, Copy, Debug, Default)]
pub struct Site {
    /// Inside a `for`/`while` body: a graph break here makes Dynamo run the whole frame eagerly.
    pub in_loop: bool,
    /// Inside an `if` branch: it runs only when its condition holds.
    pub in_branch: bool,
    /// Inside a generator expression, which Dynamo cannot resume in after a break: like a loop,
    /// a break here makes it run the whole frame eagerly.
    pub in_generator: bool,
}

pub trait CompiledCodeVisitor<'a> {
    fn stmt(&mut self, _stmt: &'a Stmt, _site: Site) {}
    /// Return `false` to skip the expression's children.
    fn expr(&mut self, _expr: &'a Expr, _site: Site) -> bool {
        true
    }

    /// Called after the children of an expression whose `expr` returned `true`.
    fn leave_expr(&mut self, _expr: &'a Expr) {}
}

pub fn visit_compiled<'a>(body: Body<'a>, visitor: &mut impl CompiledCodeVisitor<'a>) {
    walk(body, visitor, true, None);
}

/// `visit_compiled` for one of the file's functions, reading its guards through the file's
/// imports: `is_tracing()` imported from `torch.jit` is no compiling guard, transformers' is.
pub fn visit_function<'a>(model: &FileModel<'a>, function: usize, visitor: &mut impl CompiledCodeVisitor<'a>) {
    walk(model.function(function).node.body(), visitor, true, Some(&model.imports));
}

/// Walks all of a function's own code, `is_compiling()` branches included: for code that does not
/// run under compile (`__init__`), where those branches mean nothing.
pub fn visit_all<'a>(body: Body<'a>, visitor: &mut impl CompiledCodeVisitor<'a>) {
    walk(body, visitor, false, None);
}

fn walk<'a>(
    body: Body<'a>,
    visitor: &mut impl CompiledCodeVisitor<'a>,
    honour_guards: bool,
    imports: Option<&Imports>,
) {
    let mut walker = Walker {
        inner: visitor,
        loop_depth: 0,
        branch_depth: 0,
        compiling_flags: HashSet::default(),
        honour_guards,
        imports,
    };
    match body {
        Body::Stmts(stmts) => walker.visit_body(stmts),
        Body::Expr(expr) => walker.visit_expr(expr),
    }
}

/// What an `if` test says about where its branches run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Guard {
    /// `if not is_compiling():` (or `... and not is_compiling()`): the body is eager only.
    EagerBody,
    /// `if is_compiling():`: the body is compiled only, the `else` eager only.
    CompiledBody,
}

/// `torch.compiler.is_compiling()`, `torch._dynamo.is_compiling()`, the
/// `is_torchdynamo_compiling()` helpers that transformers and others define, and transformers'
/// `is_tracing(x)` (true under Dynamo, torch.jit, fx or stream capture). Not `torch.jit.is_tracing()`:
/// it is false under Dynamo. Without the file's imports, only the spelling `jit.is_tracing` is
/// known to be TorchScript's.
pub fn is_compiling_call(expr: &Expr) -> bool {
    is_compiling_call_in(expr, None)
}

/// `is_compiling_call`, with a bare `is_tracing` resolved through the file's imports: one bound
/// to torch's own (`from torch.jit import is_tracing`) is false under Dynamo.
fn is_compiling_call_in(expr: &Expr, imports: Option<&Imports>) -> bool {
    let Expr::Call(call) = expr else { return false };
    match last_segment(&call.func) {
        Some("is_compiling" | "is_dynamo_compiling" | "is_torchdynamo_compiling") => call.arguments.is_empty(),
        Some("is_tracing") => {
            let torch_own = imports
                .and_then(|imports| imports.qualified_name(&call.func))
                .is_some_and(|name| name == "torch" || name.starts_with("torch."));
            call.arguments.len() <= 1 && !is_jit_attribute(&call.func) && !torch_own
        }
        _ => false,
    }
}

/// `torch.jit.is_tracing`, `jit.is_tracing`: TorchScript's own question.
fn is_jit_attribute(func: &Expr) -> bool {
    let Expr::Attribute(attr) = func else { return false };
    last_segment(&attr.value) == Some("jit")
}

/// `compiling = torch.compiler.is_compiling()`: the name then stands for the call.
fn compiling_flag<'s>(stmt: &'s Stmt, imports: Option<&Imports>) -> Option<&'s str> {
    let Stmt::Assign(assign) = stmt else { return None };
    let [Expr::Name(name)] = assign.targets.as_slice() else { return None };
    is_compiling_call_in(&assign.value, imports).then_some(name.id.as_str())
}

/// Reads the `if` tests that say where code runs, knowing the names that hold `is_compiling()`.
struct Guards<'f> {
    flags: &'f HashSet<String>,
    imports: Option<&'f Imports>,
}

impl Guards<'_> {
    fn is_compiling(&self, expr: &Expr) -> bool {
        is_compiling_call_in(expr, self.imports)
            || matches!(expr, Expr::Name(name) if self.flags.contains(name.id.as_str()))
    }

    fn is_not_compiling(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::UnaryOp(op) if op.op == ast::UnaryOp::Not && self.is_compiling(&op.operand))
            || self.is_torchscript(expr)
    }

    /// `torch.jit.is_scripting()`, `torch.jit.is_tracing()`: false under Dynamo, so a body they
    /// guard never runs compiled (torchvision's `if torch.jit.is_scripting(): warnings.warn(...)`).
    fn is_torchscript(&self, expr: &Expr) -> bool {
        let Expr::Call(call) = expr else { return false };
        let torch_own = self
            .imports
            .and_then(|imports| imports.qualified_name(&call.func))
            .is_some_and(|name| name == "torch.jit.is_scripting" || name == "torch.jit.is_tracing");
        let named = matches!(last_segment(&call.func), Some("is_scripting" | "is_tracing"));
        call.arguments.is_empty() && named && (torch_own || is_jit_attribute(&call.func))
    }

    fn guard(&self, test: &Expr) -> Option<Guard> {
        if self.is_compiling(test) {
            return Some(Guard::CompiledBody);
        }
        if self.is_not_compiling(test) {
            return Some(Guard::EagerBody);
        }
        match test {
            // `if not torch.jit.is_scripting():` holds under compile: the `else` is TorchScript's.
            Expr::UnaryOp(op) if op.op == ast::UnaryOp::Not && self.is_torchscript(&op.operand) => {
                Some(Guard::CompiledBody)
            }
            Expr::BoolOp(op) if op.op == ast::BoolOp::And && op.values.iter().any(|v| self.is_not_compiling(v)) => {
                Some(Guard::EagerBody)
            }
            // `is_compiling() or ...` holds under compile whatever the rest says.
            Expr::BoolOp(op) if op.op == ast::BoolOp::Or && op.values.iter().any(|v| self.is_compiling(v)) => {
                Some(Guard::CompiledBody)
            }
            _ => None,
        }
    }

    /// `if torch.compiler.is_compiling(): return ...`: what follows runs only in eager mode.
    fn leaves_when_compiling(&self, stmt: &Stmt) -> bool {
        let Stmt::If(if_stmt) = stmt else { return false };
        self.guard(&if_stmt.test) == Some(Guard::CompiledBody)
            && if_stmt.elif_else_clauses.is_empty()
            && matches!(if_stmt.body.last(), Some(Stmt::Return(_) | Stmt::Raise(_)))
    }
}

struct Walker<'v, 'i, V> {
    inner: &'v mut V,
    loop_depth: usize,
    branch_depth: usize,
    /// Local names assigned `is_compiling()` so far.
    compiling_flags: HashSet<String>,
    /// Skip what only runs in eager mode (`visit_compiled`), or walk everything (`visit_all`).
    honour_guards: bool,
    /// The file's imports, where the walk was given them (`visit_function`).
    imports: Option<&'i Imports>,
}

impl<V> Walker<'_, '_, V> {
    fn site(&self) -> Site {
        Site { in_loop: self.loop_depth > 0, in_branch: self.branch_depth > 0, in_generator: false }
    }

    fn guards(&self) -> Guards<'_> {
        Guards { flags: &self.compiling_flags, imports: self.imports }
    }
}

impl<'a, V: CompiledCodeVisitor<'a>> Visitor<'a> for Walker<'_, '_, V> {
    fn visit_body(&mut self, body: &'a [Stmt]) {
        for stmt in body {
            self.visit_stmt(stmt);
            if let Some(flag) = compiling_flag(stmt, self.imports) {
                self.compiling_flags.insert(flag.to_string());
            } else if let Stmt::Assign(assign) = stmt {
                // `compiling = not compiling`: the name no longer says whether Dynamo traces.
                for target in &assign.targets {
                    if let Expr::Name(name) = target {
                        self.compiling_flags.remove(name.id.as_str());
                    }
                }
            }
            if self.honour_guards && self.guards().leaves_when_compiling(stmt) {
                break;
            }
        }
    }

    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let site = self.site();
        match stmt {
            // A nested def or class runs only when called: reach decides that, not this walk.
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => self.inner.stmt(stmt, site),
            Stmt::If(if_stmt) => {
                self.inner.stmt(stmt, site);
                self.visit_if(if_stmt);
            }
            Stmt::For(for_stmt) => {
                self.inner.stmt(stmt, site);
                self.visit_expr(&for_stmt.iter);
                self.visit_expr(&for_stmt.target);
                self.visit_loop_body(&for_stmt.body);
                self.visit_body(&for_stmt.orelse);
            }
            Stmt::While(while_stmt) => {
                self.inner.stmt(stmt, site);
                self.loop_depth += 1;
                self.visit_expr(&while_stmt.test);
                self.loop_depth -= 1;
                self.visit_loop_body(&while_stmt.body);
                self.visit_body(&while_stmt.orelse);
            }
            _ => {
                self.inner.stmt(stmt, site);
                walk_stmt(self, stmt);
            }
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::If(ternary) = expr
            && self.honour_guards
            && let Some(guard) = self.guards().guard(&ternary.test)
        {
            return self.visit_guarded_ternary(expr, ternary, guard);
        }
        if self.inner.expr(expr, self.site()) {
            walk_expr(self, expr);
            self.inner.leave_expr(expr);
        }
    }
}

impl<'a, V: CompiledCodeVisitor<'a>> Walker<'_, '_, V> {
    fn visit_loop_body(&mut self, body: &'a [Stmt]) {
        self.loop_depth += 1;
        self.visit_body(body);
        self.loop_depth -= 1;
    }

    fn visit_if(&mut self, if_stmt: &'a ast::StmtIf) {
        self.visit_test(&if_stmt.test);
        self.branch_depth += 1;
        self.visit_if_branches(if_stmt);
        self.branch_depth -= 1;
    }

    fn visit_if_branches(&mut self, if_stmt: &'a ast::StmtIf) {
        match constant_truth(&if_stmt.test) {
            Some(true) => return self.visit_body(&if_stmt.body),
            Some(false) => return self.visit_else_branches(if_stmt),
            None => {}
        }
        let guard = if self.honour_guards { self.guards().guard(&if_stmt.test) } else { None };
        match guard {
            Some(Guard::EagerBody) => self.visit_else_branches(if_stmt),
            Some(Guard::CompiledBody) => self.visit_body(&if_stmt.body),
            None => {
                self.visit_body(&if_stmt.body);
                self.visit_else_branches(if_stmt);
            }
        }
    }

    /// `1.0 if is_compiling() else np.random.random()`: under compile only the test and the side
    /// it picks are evaluated.
    fn visit_guarded_ternary(&mut self, expr: &'a Expr, ternary: &'a ast::ExprIf, guard: Guard) {
        if self.inner.expr(expr, self.site()) {
            self.visit_test(&ternary.test);
            match guard {
                Guard::CompiledBody => self.visit_expr(&ternary.body),
                Guard::EagerBody => self.visit_expr(&ternary.orelse),
            }
            self.inner.leave_expr(expr);
        }
    }

    /// An `if` test. In `not is_compiling() and x.item() > 0` and `is_compiling() or x.item() > 0`,
    /// what follows the guard is not evaluated under compile (`and` stops at the first false
    /// operand, `or` at the first true one).
    fn visit_test(&mut self, test: &'a Expr) {
        let Expr::BoolOp(op) = test else { return self.visit_expr(test) };
        let guards = self.guards();
        let stop = match op.op {
            ast::BoolOp::And => op.values.iter().position(|v| guards.is_not_compiling(v)),
            ast::BoolOp::Or => op.values.iter().position(|v| guards.is_compiling(v)),
        };
        let Some(stop) = stop.filter(|_| self.honour_guards) else {
            return self.visit_expr(test);
        };
        if self.inner.expr(test, self.site()) {
            for value in &op.values[..=stop] {
                self.visit_expr(value);
            }
            self.inner.leave_expr(test);
        }
    }

    /// The `elif` tests and bodies and the `else` body.
    fn visit_else_branches(&mut self, if_stmt: &'a ast::StmtIf) {
        for clause in &if_stmt.elif_else_clauses {
            if let Some(test) = &clause.test {
                self.visit_expr(test);
            }
            self.visit_body(&clause.body);
        }
    }
}

/// The truth of an `if` test that is a literal (`0`, `1`, `False`, `True`, `None`): CPython
/// compiles only the branch that runs, so the other never reaches Dynamo (nor eager mode).
fn constant_truth(test: &Expr) -> Option<bool> {
    match test {
        Expr::BooleanLiteral(literal) => Some(literal.value),
        Expr::NoneLiteral(_) => Some(false),
        Expr::NumberLiteral(ast::ExprNumberLiteral { value: ast::Number::Int(int), .. }) => {
            int.as_u64().map(|value| value != 0)
        }
        _ => None,
    }
}

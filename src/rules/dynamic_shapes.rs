//! TCF303 dynamic-shapes: `torch.compile(model, dynamic=False)` (or `model.compile(dynamic=False)`)
//! and the compiled model called in a loop of the same function, where input shapes can change
//! from one iteration to the next. With `dynamic=False` every new shape compiles again, and at the
//! recompile limit (8) the frame runs eagerly (measured under torch 2.15: 12 sequence lengths, 8
//! graphs, then eager; the default `dynamic=None` compiled 2: the second makes the size dynamic).

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::compiled::compile_calls::{is_torch_compile, scopes};
use crate::model::file::imports::{Imports, dotted_name};
use crate::rules::check::{Checker, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF303",
    name: "dynamic-shapes",
    summary: "let input sizes that vary be dynamic instead of compiling `dynamic=False`",
    explanation: include_str!("../../codemods/dynamic-shapes/README.md"),
    hazard: "A model compiled with `dynamic=False` and called in a loop, where input shapes can vary.",
    why: "With `dynamic=False` every new input shape compiles the model again, and after the recompile limit (8) \
              the frame runs eagerly for the rest of the run.",
    category: Category::Setup,
    fixes: &[],
    mentions: &["compile"],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::File(check);

fn check(checker: &Checker) -> Vec<Diagnostic> {
    let model = checker.model;
    let mut diagnostics = Vec::new();
    // Most files that say "compile" pass no `dynamic=False`: only the scopes holding one are read.
    let static_compiles: Vec<TextRange> =
        model.calls.iter().filter(|call| dynamic_false(call).is_some()).map(|call| call.range()).collect();
    if static_compiles.is_empty() {
        return diagnostics;
    }
    for body in scopes(model) {
        let (Some(first), Some(last)) = (body.first(), body.last()) else { continue };
        let span = TextRange::new(first.start(), last.end());
        if !static_compiles.iter().any(|call| span.contains_range(*call)) {
            continue;
        }
        let mut finder =
            StaticCompiles { imports: &model.imports, loop_depth: 0, compiles: Vec::new(), looped: Vec::new() };
        finder.visit_body(body);
        for compile in &finder.compiles {
            let called_in_loop = finder.looped.iter().any(|(name, at)| *name == compile.target && *at > compile.at);
            if !called_in_loop {
                continue;
            }
            let message = format!(
                "`{}` is compiled with `dynamic=False` and called in a loop: each new input shape compiles it again, \
                 and after 8 it runs eagerly",
                compile.target
            );
            diagnostics.push(
                Diagnostic::new(&RULE, compile.keyword, message).with_severity(Severity::Low).without_fix(
                    "drop `dynamic=False` or `torch._dynamo.mark_dynamic(x, dim)` if sizes vary; if every batch has \
                     one shape, it costs nothing: add `# noqa: TCF303`",
                ),
            );
        }
    }
    diagnostics
}

/// `target = torch.compile(..., dynamic=False)` or `target.compile(dynamic=False)`.
struct StaticCompile {
    target: String,
    /// The `dynamic=False` keyword: what the finding points at.
    keyword: ruff_text_size::TextRange,
    at: TextSize,
}

/// The static compiles of one scope, and the calls made in its loops (by callee name).
struct StaticCompiles<'i> {
    imports: &'i Imports,
    loop_depth: usize,
    compiles: Vec<StaticCompile>,
    looped: Vec<(String, TextSize)>,
}

impl StaticCompiles<'_> {
    fn compile_in_place(&mut self, call: &ast::ExprCall) {
        let Expr::Attribute(method) = call.func.as_ref() else { return };
        if method.attr.id.as_str() != "compile" || is_torch_compile(self.imports, call) {
            return;
        }
        if let (Some(keyword), Some(target)) = (dynamic_false(call), dotted_name(&method.value)) {
            self.compiles.push(StaticCompile { target, keyword: keyword.range(), at: call.end() });
        }
    }
}

// A visitor of its own: setup code, which the checker never walks, and only the scopes that hold a `dynamic=False` compile.
impl<'a> Visitor<'a> for StaticCompiles<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            // Nested functions and classes are scopes of their own.
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::For(_) | Stmt::While(_) => {
                self.loop_depth += 1;
                walk_stmt(self, stmt);
                self.loop_depth -= 1;
            }
            Stmt::Assign(assign) => {
                if let ([target], Expr::Call(call)) = (assign.targets.as_slice(), assign.value.as_ref()) {
                    let keyword = dynamic_false(call).filter(|_| is_torch_compile(self.imports, call));
                    if let (Some(keyword), Some(target)) = (keyword, dotted_name(target)) {
                        self.compiles.push(StaticCompile { target, keyword: keyword.range(), at: assign.end() });
                    }
                }
                walk_stmt(self, stmt);
            }
            _ => walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(_) => {}
            Expr::Call(call) => {
                self.compile_in_place(call);
                if self.loop_depth > 0 {
                    self.looped.extend(dotted_name(&call.func).map(|name| (name, call.start())));
                }
                walk_expr(self, expr);
            }
            _ => walk_expr(self, expr),
        }
    }
}

/// The `dynamic=False` keyword of a call, if it has one.
fn dynamic_false(call: &ast::ExprCall) -> Option<&ast::Keyword> {
    call.arguments
        .find_keyword("dynamic")
        .filter(|keyword| matches!(keyword.value, Expr::BooleanLiteral(ref b) if !b.value))
}

//! Calls between the functions of one file, as the tensors model follows them (found here, held
//! in the file's `CallGraph`): which compiled code calls a function and with what arguments (`self._merge(ids, embeds, image_embd)`), and what a
//! function returns. A helper's parameters are tensors when its compiled callers pass tensors, and
//! a call's result is a tensor when the helper returns one.

use std::cell::OnceCell;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_compiled};
use crate::model::file::call_graph::{CallGraph, CallSite};
use crate::model::file::module::is_self;
use crate::model::file::{FileModel, FunctionNode};
use crate::model::flow::shapes::single_step_bodies;
use crate::model::flow::submodules;
impl<'a> CallGraph<'a> {
    pub fn build(model: &FileModel<'a>) -> Self {
        let count = model.functions.len();
        let mut graph = CallGraph {
            sites: Vec::new(),
            out: vec![Vec::new(); count],
            into: vec![Vec::new(); count],
            single_step: (0..count).map(|_| OnceCell::new()).collect(),
        };
        for caller in 0..count {
            let mut calls = Calls { model, caller, found: Vec::new() };
            visit_compiled(model.function(caller).node.body(), &mut calls);
            for (call, callee) in calls.found {
                let id = graph.sites.len();
                graph.out[caller].push(id);
                if model.in_region(caller) {
                    graph.into[callee].push(id);
                }
                graph.sites.push(CallSite { caller, callee, call });
            }
        }
        graph
    }

    /// Whether the call sits in an `if` that runs only for the one-token decode step.
    pub fn for_single_step(&self, model: &FileModel, site: &CallSite) -> bool {
        let bodies = self.single_step[site.caller].get_or_init(|| match model.function(site.caller).node {
            FunctionNode::Def(def) => single_step_bodies(&def.body),
            FunctionNode::Lambda(_) => Vec::new(),
        });
        bodies.iter().any(|body| body.contains_range(site.call.range()))
    }
}

/// The function of the file a call in `caller`'s code runs: `self.method(...)` of the caller's
/// class or of a base class the file defines, `self.pe.encode(...)` of the one class of the file
/// the submodule holds, or a function visible by name (`helper(...)`).
pub fn callee(model: &FileModel, caller: usize, call: &ast::ExprCall) -> Option<usize> {
    if let Some((attr, method)) = submodules::held_method_call(call)
        && method != "forward"
    {
        let [held] = submodules::held_methods(model, model.self_class(caller)?, attr, method)[..] else { return None };
        return Some(held);
    }
    match call.func.as_ref() {
        Expr::Attribute(method) if is_self(&method.value) => {
            model.method_or_inherited(model.self_class(caller)?, &method.attr.id)
        }
        Expr::Name(name) => model.resolve_name(&name.id, Some(caller)),
        _ => None,
    }
}

/// The calls in one function's compiled code of other functions of the file.
struct Calls<'m, 'a> {
    model: &'m FileModel<'a>,
    caller: usize,
    found: Vec<(&'a ast::ExprCall, usize)>,
}

impl<'a> CompiledCodeVisitor<'a> for Calls<'_, 'a> {
    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        if let Expr::Call(call) = expr
            && let Some(callee) = callee(self.model, self.caller, call).filter(|&c| c != self.caller)
        {
            self.found.push((call, callee));
        }
        true
    }
}

/// The argument a call passes to the parameter `index` (counted over the positional parameters,
/// `self` included) named `name`, if the call says.
pub fn argument<'a>(
    model: &FileModel,
    call: &'a ast::ExprCall,
    function: usize,
    index: usize,
    name: &str,
) -> Option<&'a Expr> {
    if let Some(keyword) = call.arguments.find_keyword(name) {
        return Some(&keyword.value);
    }
    // `self.method(a)` and `self.pe.encode(a)` bind `a` to the parameter after `self`.
    let bound = usize::from(
        matches!(call.func.as_ref(), Expr::Attribute(method) if is_self(&method.value))
            || submodules::held_method_call(call).is_some(),
    );
    let f = model.function(function);
    let bound = if f.class.is_some() && !is_static_method(f.node) { bound } else { 0 };
    let position = index.checked_sub(bound)?;
    let args = &call.arguments.args;
    // Past a `*args` the positions are unknown.
    let before_star = args.iter().take_while(|arg| !arg.is_starred_expr()).count();
    (position < before_star).then(|| &args[position])
}

/// `@staticmethod`: called on `self`, it binds no `self`.
fn is_static_method(node: FunctionNode) -> bool {
    let FunctionNode::Def(def) = node else { return false };
    def.decorator_list
        .iter()
        .any(|decorator| matches!(&decorator.expression, Expr::Name(name) if name.id.as_str() == "staticmethod"))
}

/// The values the function can return: those of its `return` statements (`None` for a bare
/// `return`), and `None` when it can run off its end (`if x is not None: return x` alone) or is a
/// generator, not counting nested functions; empty for a lambda's body.
pub fn returned_values<'a>(model: &FileModel<'a>, function: usize) -> Vec<Option<&'a Expr>> {
    struct Returns<'a> {
        values: Vec<Option<&'a Expr>>,
        generator: bool,
    }
    impl<'a> Visitor<'a> for Returns<'a> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            match stmt {
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                Stmt::Return(ret) => {
                    self.values.push(ret.value.as_deref());
                    walk_stmt(self, stmt);
                }
                _ => walk_stmt(self, stmt),
            }
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                Expr::Lambda(_) => {}
                Expr::Yield(_) | Expr::YieldFrom(_) => self.generator = true,
                _ => walk_expr(self, expr),
            }
        }
    }
    let FunctionNode::Def(def) = model.function(function).node else { return Vec::new() };
    let mut returns = Returns { values: Vec::new(), generator: false };
    returns.visit_body(&def.body);
    if returns.generator || reaches_end(&def.body) {
        returns.values.push(None);
    }
    returns.values
}

/// Whether running `body` can reach its end. Any doubt (a loop, a `match`, a call that always
/// raises) says it can: the caller then does not count on what the function returns.
fn reaches_end(body: &[Stmt]) -> bool {
    let Some(last) = body.last() else { return true };
    match last {
        Stmt::Return(_) | Stmt::Raise(_) => false,
        Stmt::If(if_stmt) => {
            let has_else = if_stmt.elif_else_clauses.last().is_some_and(|clause| clause.test.is_none());
            !has_else
                || reaches_end(&if_stmt.body)
                || if_stmt.elif_else_clauses.iter().any(|clause| reaches_end(&clause.body))
        }
        Stmt::With(with) => reaches_end(&with.body),
        Stmt::Try(try_stmt) => {
            let after_body = reaches_end(&try_stmt.body) && reaches_end(&try_stmt.orelse);
            let after_handler = try_stmt.handlers.iter().any(|handler| {
                let ast::ExceptHandler::ExceptHandler(handler) = handler;
                reaches_end(&handler.body)
            });
            reaches_end(&try_stmt.finalbody) && (after_body || after_handler)
        }
        _ => true,
    }
}

/// How often the file's code names each of some functions: as a name read (`pooled`, a call's
/// callee or a value handed on) or as an attribute (`self.pooled`, `super().pooled`), in one walk.
pub struct Mentions(rustc_hash::FxHashMap<String, usize>);

impl Mentions {
    pub fn of(model: &FileModel, functions: &[usize]) -> Self {
        struct Count<'n> {
            counts: rustc_hash::FxHashMap<String, usize>,
            names: rustc_hash::FxHashSet<&'n str>,
        }
        impl<'a> Visitor<'a> for Count<'_> {
            fn visit_expr(&mut self, expr: &'a Expr) {
                let named = match expr {
                    Expr::Name(name) => Some(name.id.as_str()),
                    Expr::Attribute(attr) => Some(attr.attr.id.as_str()),
                    _ => None,
                };
                if let Some(named) = named.filter(|named| self.names.contains(named)) {
                    *self.counts.entry(named.to_string()).or_default() += 1;
                }
                walk_expr(self, expr);
            }
        }
        let names = functions.iter().map(|&function| model.function(function).name.as_str()).collect();
        let mut count = Count { counts: rustc_hash::FxHashMap::default(), names };
        count.visit_body(model.source.parsed.suite());
        Mentions(count.counts)
    }

    /// Whether the file names `function` only in the calls the call graph knows. A reference
    /// handed on (`checkpoint(self.tiled, x)`, `partial(self.tiled, ...)`, `map(pooled, xs)`,
    /// `self.reduce = self.pooled`), a `super().tiled(...)`, an attribute of that name set
    /// elsewhere or a call from code Dynamo does not trace may run it where no call site shows.
    /// Another function of the same name counts too: the answer errs towards "named elsewhere".
    pub fn only_in_calls(&self, model: &FileModel, function: usize) -> bool {
        let mentions = self.0.get(&model.function(function).name).copied().unwrap_or(0);
        mentions <= model.calls().call_sites(function).count()
    }
}

//! Calls between the functions of one file, as the tensors model follows them: which compiled code
//! calls a function and with what arguments (`self._merge(ids, embeds, image_embd)`), and what a
//! function returns. A helper's parameters are tensors when its compiled callers pass tensors, and
//! a call's result is a tensor when the helper returns one.

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::compiled_code::{CompiledCodeVisitor, Site, visit_compiled};
use crate::model::file::{FileModel, FunctionNode};
use crate::model::module::is_self;

/// A call of a function of the file from the compiled code of another one.
pub struct CallSite<'a> {
    pub caller: usize,
    pub call: &'a ast::ExprCall,
}

/// The function of the file a call in `caller`'s code runs: `self.method(...)` of the caller's
/// class, or a function visible by name (`helper(...)`).
pub fn callee(model: &FileModel, caller: usize, call: &ast::ExprCall) -> Option<usize> {
    match call.func.as_ref() {
        Expr::Attribute(method) if is_self(&method.value) => model.method(model.self_class(caller)?, &method.attr.id),
        Expr::Name(name) => model.resolve_name(&name.id, Some(caller)),
        _ => None,
    }
}

/// The calls of `function` in the compiled code of the file's other region functions.
pub fn call_sites<'a>(model: &FileModel<'a>, function: usize) -> Vec<CallSite<'a>> {
    let name = model.function(function).name.as_str();
    let mut sites = Vec::new();
    for &caller in model.region_functions() {
        let node = model.function(caller).node;
        // Most functions never name the callee: a text search spares walking them.
        if caller == function || !model.source.text[node.range()].contains(name) {
            continue;
        }
        let mut finder = CallFinder { model, caller, function, found: Vec::new() };
        visit_compiled(node.body(), &mut finder);
        sites.extend(finder.found.into_iter().map(|call| CallSite { caller, call }));
    }
    sites
}

struct CallFinder<'m, 'a> {
    model: &'m FileModel<'a>,
    caller: usize,
    function: usize,
    found: Vec<&'a ast::ExprCall>,
}

impl<'a> CompiledCodeVisitor<'a> for CallFinder<'_, 'a> {
    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        if let Expr::Call(call) = expr {
            if callee(self.model, self.caller, call) == Some(self.function) {
                self.found.push(call);
            }
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
    // `self.method(a)` binds `a` to the parameter after `self`.
    let bound = usize::from(matches!(call.func.as_ref(), Expr::Attribute(method) if is_self(&method.value)));
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

/// The values of the function's `return` statements (`None` for a bare `return`), not counting
/// nested functions; empty for a lambda's body or a function that never returns.
pub fn returned_values<'a>(model: &FileModel<'a>, function: usize) -> Vec<Option<&'a Expr>> {
    struct Returns<'a>(Vec<Option<&'a Expr>>);
    impl<'a> Visitor<'a> for Returns<'a> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            match stmt {
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                Stmt::Return(ret) => self.0.push(ret.value.as_deref()),
                _ => walk_stmt(self, stmt),
            }
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            if !matches!(expr, Expr::Lambda(_)) {
                walk_expr(self, expr);
            }
        }
    }
    let FunctionNode::Def(def) = model.function(function).node else { return Vec::new() };
    let mut returns = Returns(Vec::new());
    returns.visit_body(&def.body);
    returns.0
}

/// The calls in the function's compiled code of other functions of the file.
pub fn calls_out<'a>(model: &FileModel<'a>, function: usize) -> Vec<(&'a ast::ExprCall, usize)> {
    struct Calls<'m, 'a> {
        model: &'m FileModel<'a>,
        function: usize,
        found: Vec<(&'a ast::ExprCall, usize)>,
    }
    impl<'a> CompiledCodeVisitor<'a> for Calls<'_, 'a> {
        fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
            if let Expr::Call(call) = expr {
                if let Some(callee) = callee(self.model, self.function, call).filter(|&c| c != self.function) {
                    self.found.push((call, callee));
                }
            }
            true
        }
    }
    let mut calls = Calls { model, function, found: Vec::new() };
    visit_compiled(model.function(function).node.body(), &mut calls);
    calls.found
}

//! The file's calls of its own functions, found in one walk for the whole file: who calls each
//! function and whether the call sits in a loop or comprehension, and the functions it hands to
//! `Module.apply`. Every hook asks (`hooks::on_repeated_modules`); walking the file per hook made
//! a file of many hooked modules quadratic.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::visitor::{Visitor, walk_body, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::file::imports::last_segment;
use crate::model::file::module::is_self;
use crate::model::file::{FileModel, FunctionNode};

pub struct OwnCalls {
    /// By callee: each call's caller (`None` at module level) and whether it sits in a loop.
    callers: HashMap<usize, Vec<(Option<usize>, bool)>>,
    /// The names passed first to `<module>.apply(...)`, which calls them on every submodule.
    applied: HashSet<String>,
}

impl OwnCalls {
    pub fn find(model: &FileModel) -> Self {
        let mut calls = Calls { model, caller: None, depth: 0, callers: HashMap::default() };
        calls.visit_body(model.source.parsed.suite());
        for (caller, f) in model.functions.iter().enumerate() {
            let FunctionNode::Def(def) = f.node else { continue };
            calls.caller = Some(caller);
            calls.depth = 0;
            calls.visit_body(&def.body);
        }
        let mut applied = Applied(HashSet::default());
        applied.visit_body(model.source.parsed.suite());
        Self { callers: calls.callers, applied: applied.0 }
    }

    /// Whether the file calls `function` in a loop or comprehension, directly or through the
    /// functions that call it outside loops.
    pub fn called_in_loop(&self, function: usize) -> bool {
        let mut callees = vec![function];
        let mut next = 0;
        while let Some(&callee) = callees.get(next) {
            next += 1;
            for &(caller, in_loop) in self.callers.get(&callee).into_iter().flatten() {
                if in_loop {
                    return true;
                }
                if let Some(caller) = caller.filter(|caller| !callees.contains(caller)) {
                    callees.push(caller);
                }
            }
        }
        false
    }

    /// Whether the file passes the function named `name` to `<module>.apply(...)`
    /// (`self.model.apply(self._register_hook)`, `model.apply(add_hooks)`).
    pub fn applied_to_every_module(&self, name: &str) -> bool {
        self.applied.contains(name)
    }
}

/// The calls of the file's functions in one function's own body (nested defs and classes are
/// functions of their own), or at module level when `caller` is `None`.
struct Calls<'m, 'a> {
    model: &'m FileModel<'a>,
    caller: Option<usize>,
    depth: usize,
    callers: HashMap<usize, Vec<(Option<usize>, bool)>>,
}

impl Calls<'_, '_> {
    /// The function of the file `call` runs: `self.name(...)` in a method, or a name in scope.
    fn callee(&self, call: &ast::ExprCall) -> Option<usize> {
        match call.func.as_ref() {
            Expr::Attribute(attr) if is_self(&attr.value) => {
                let class = self.model.self_class(self.caller?)?;
                self.model.method_or_inherited(class, attr.attr.id.as_str())
            }
            Expr::Name(name) => self.model.resolve_name(name.id.as_str(), self.caller),
            _ => None,
        }
    }
}

impl<'a> Visitor<'a> for Calls<'_, '_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::For(for_stmt) => {
                self.visit_expr(&for_stmt.iter);
                self.depth += 1;
                walk_expr(self, &for_stmt.target);
                walk_body(self, &for_stmt.body);
                self.depth -= 1;
                walk_body(self, &for_stmt.orelse);
            }
            Stmt::While(while_stmt) => {
                self.depth += 1;
                self.visit_expr(&while_stmt.test);
                walk_body(self, &while_stmt.body);
                self.depth -= 1;
                walk_body(self, &while_stmt.orelse);
            }
            _ => walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(_) => {}
            Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => {
                self.depth += 1;
                walk_expr(self, expr);
                self.depth -= 1;
            }
            Expr::Call(call) => {
                if let Some(callee) = self.callee(call) {
                    self.callers.entry(callee).or_default().push((self.caller, self.depth > 0));
                }
                walk_expr(self, expr);
            }
            _ => walk_expr(self, expr),
        }
    }
}

/// The names passed first to `.apply(...)` anywhere in the file.
struct Applied(HashSet<String>);

impl<'a> Visitor<'a> for Applied {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && matches!(call.func.as_ref(), Expr::Attribute(method) if method.attr.id.as_str() == "apply")
            && let Some(name) = call.arguments.args.first().and_then(last_segment)
        {
            self.0.insert(name.to_string());
        }
        walk_expr(self, expr);
    }
}

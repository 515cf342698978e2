//! Which attribute names hold state that changes between calls: assigned anywhere but in an
//! `__init__` (`collector.capture = True`, `self.enabled = flag` in `enable()`), set through
//! `setattr(obj, "name", ...)`, or boolean flags (`self.enabled = False` in `__init__`, a class
//! attribute `active = False`): flags exist to be flipped, often by a training loop tcfix never
//! sees. A hook that reads such an attribute reads state; one that reads `cfg.scale` does not.

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{Expr, Stmt};

/// The state attribute names of a file, sorted and without repeats.
pub fn state_attributes(suite: &[Stmt]) -> Vec<String> {
    let mut finder = MutationFinder { in_init: false, in_class_body: false, found: Vec::new() };
    finder.visit_body(suite);
    finder.found.sort();
    finder.found.dedup();
    finder.found
}

struct MutationFinder {
    in_init: bool,
    /// Directly in a class body (not in one of its methods).
    in_class_body: bool,
    found: Vec<String>,
}

impl MutationFinder {
    fn record_target(&mut self, target: &Expr, value: Option<&Expr>) {
        let is_flag = matches!(value, Some(Expr::BooleanLiteral(_)));
        match target {
            Expr::Attribute(attr) if !self.in_init || is_flag => self.found.push(attr.attr.id.to_string()),
            Expr::Name(name) if self.in_class_body && is_flag => self.found.push(name.id.to_string()),
            Expr::Tuple(tuple) => tuple.elts.iter().for_each(|e| self.record_target(e, None)),
            Expr::List(list) => list.elts.iter().for_each(|e| self.record_target(e, None)),
            _ => {}
        }
    }
}

impl<'a> Visitor<'a> for MutationFinder {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(def) => {
                let outer = (self.in_init, self.in_class_body);
                (self.in_init, self.in_class_body) = (def.name.id.as_str() == "__init__", false);
                walk_stmt(self, stmt);
                (self.in_init, self.in_class_body) = outer;
                return;
            }
            Stmt::ClassDef(_) => {
                let outer = std::mem::replace(&mut self.in_class_body, true);
                walk_stmt(self, stmt);
                self.in_class_body = outer;
                return;
            }
            Stmt::Assign(assign) => assign.targets.iter().for_each(|t| self.record_target(t, Some(&assign.value))),
            Stmt::AugAssign(assign) => self.record_target(&assign.target, None),
            Stmt::AnnAssign(assign) => self.record_target(&assign.target, assign.value.as_deref()),
            _ => {}
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr {
            let is_setattr = matches!(call.func.as_ref(), Expr::Name(n) if n.id.as_str() == "setattr");
            if let (true, Some(Expr::StringLiteral(name)), false) =
                (is_setattr, call.arguments.args.get(1), self.in_init)
            {
                self.found.push(name.value.to_str().to_string());
            }
        }
        walk_expr(self, expr);
    }
}

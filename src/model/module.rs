//! Facts about an `nn.Module` class that fixes rely on: its `__init__`, and where each
//! attribute of `self` is assigned.

use ruff_python_ast::visitor::{Visitor, walk_stmt};
use ruff_python_ast::{Expr, Stmt};

use crate::model::file::{FileModel, FunctionNode};

/// The name `self`: the module a method runs on.
pub fn is_self(expr: &Expr) -> bool {
    matches!(expr, Expr::Name(name) if name.id.as_str() == "self")
}

/// `self.<attr> = ...` (or `+=`, or annotated) somewhere in a method of the class.
#[derive(Clone)]
pub struct SelfAssignment<'a> {
    pub attr: String,
    pub method: usize,
    pub stmt: &'a Stmt,
    /// Directly in the method's body, not under an `if`/`for`/`with`...
    pub top_level: bool,
}

impl<'a> SelfAssignment<'a> {
    /// The value assigned (`None` for `+=` and bare annotations).
    pub fn value(&self) -> Option<&'a Expr> {
        match self.stmt {
            Stmt::Assign(assign) => Some(&assign.value),
            Stmt::AnnAssign(assign) => assign.value.as_deref(),
            _ => None,
        }
    }
}

pub fn init_method(model: &FileModel, class: usize) -> Option<usize> {
    model.method(class, "__init__")
}

/// The statements of a method's own body (for `__init__`: where new lines can go).
pub fn method_body<'a>(model: &FileModel<'a>, method: usize) -> &'a [Stmt] {
    match model.function(method).node {
        FunctionNode::Def(def) => &def.body,
        FunctionNode::Lambda(_) => &[],
    }
}

/// Every assignment to an attribute of `self` in the class's methods, in source order (collected
/// once, when the file model is built: the index and many rules ask, class by class).
pub fn self_assignments<'m, 'a>(model: &'m FileModel<'a>, class: usize) -> &'m [SelfAssignment<'a>] {
    &model.self_assignments[class]
}

/// The assignments to `self` attributes in each class's methods.
pub fn collect_self_assignments<'a>(model: &FileModel<'a>) -> Vec<Vec<SelfAssignment<'a>>> {
    (0..model.classes.len()).map(|class| collect(model, class)).collect()
}

fn collect<'a>(model: &FileModel<'a>, class: usize) -> Vec<SelfAssignment<'a>> {
    let mut found = Vec::new();
    for &method in model.methods_of(class) {
        let body = method_body(model, method);
        let mut collector = AssignmentCollector { method, top_level: body, found: &mut found };
        collector.visit_body(body);
    }
    found
}

struct AssignmentCollector<'a, 'f> {
    method: usize,
    top_level: &'a [Stmt],
    found: &'f mut Vec<SelfAssignment<'a>>,
}

impl<'a> Visitor<'a> for AssignmentCollector<'a, '_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let targets: Vec<&Expr> = match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return,
            Stmt::Assign(assign) => assign.targets.iter().collect(),
            Stmt::AugAssign(assign) => vec![assign.target.as_ref()],
            Stmt::AnnAssign(assign) => vec![assign.target.as_ref()],
            _ => Vec::new(),
        };
        for attr in targets.into_iter().flat_map(self_attributes) {
            let top_level = self.top_level.iter().any(|s| std::ptr::eq(s, stmt));
            self.found.push(SelfAssignment { attr, method: self.method, stmt, top_level });
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, _expr: &'a Expr) {}
}

/// The `self.<attr>` names an assignment target binds (through tuples and lists).
fn self_attributes(target: &Expr) -> Vec<String> {
    match target {
        Expr::Attribute(attr) if is_self(&attr.value) => {
            vec![attr.attr.id.to_string()]
        }
        Expr::Tuple(tuple) => tuple.elts.iter().flat_map(self_attributes).collect(),
        Expr::List(list) => list.elts.iter().flat_map(self_attributes).collect(),
        _ => Vec::new(),
    }
}

//! The module lists a generator walks and yields from (`def compile_targets(self): for i, block
//! in enumerate(self.blocks): yield f"blocks.{i}", block`): a loop over its call compiles
//! the items of that list, not something tcfix cannot name.

use rustc_hash::FxHashMap as HashMap;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::file::{FileModel, FunctionNode};

/// What a generator yields: the items of the module list in `attr`, alone or at `position` of
/// the tuples it yields.
#[derive(Clone, PartialEq)]
pub struct Yielded {
    pub position: Option<usize>,
    pub attr: String,
}

/// The file's generators that yield the items of a module list, by function name.
pub fn generators(model: &FileModel, items_of: fn(&Expr) -> Option<String>) -> HashMap<String, Yielded> {
    if !model.source.text.contains("yield") {
        return HashMap::default();
    }
    let mut found = HashMap::default();
    for function in &model.functions {
        let FunctionNode::Def(def) = function.node else { continue };
        let mut walker = Walker { items_of, loop_items: HashMap::default(), yields: Vec::new() };
        walker.visit_body(&def.body);
        // Every yield must give the same list's items at the same place: one that yields
        // `self`, another list or something else makes the loop's items unknown.
        let Some(Some(first)) = walker.yields.first() else { continue };
        if walker.yields.iter().all(|other| other.as_ref() == Some(first)) {
            found.insert(function.name.clone(), first.clone());
        }
    }
    found
}

struct Walker {
    items_of: fn(&Expr) -> Option<String>,
    /// Loop variables over a module list's items, with the list's attribute.
    loop_items: HashMap<String, String>,
    /// What each yield gives: None where it is not a module list's item.
    yields: Vec<Option<Yielded>>,
}

impl Walker {
    fn yielded(&self, value: &Expr) -> Option<Yielded> {
        let item_of = |expr: &Expr| expr.as_name_expr().and_then(|name| self.loop_items.get(name.id.as_str()));
        if let Some(attr) = item_of(value) {
            return Some(Yielded { position: None, attr: attr.clone() });
        }
        let Expr::Tuple(tuple) = value else { return None };
        tuple.elts.iter().enumerate().find_map(|(position, element)| {
            item_of(element).map(|attr| Yielded { position: Some(position), attr: attr.clone() })
        })
    }
}

impl<'a> Visitor<'a> for Walker {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            // A nested def is a generator of its own.
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return,
            Stmt::For(for_stmt) => {
                if let Some(attr) = (self.items_of)(&for_stmt.iter)
                    && let Some(item) = loop_item(&for_stmt.target)
                {
                    self.loop_items.insert(item.id.to_string(), attr);
                }
            }
            _ => {}
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Yield(ast::ExprYield { value: Some(value), .. }) => self.yields.push(self.yielded(value)),
            Expr::Yield(_) | Expr::YieldFrom(_) => self.yields.push(None),
            _ => {}
        }
        walk_expr(self, expr);
    }
}

/// `block` in `for block in ...`, `for i, block in enumerate(...)`, `for name, block in
/// ....named_children()`: the module is the last name of the target.
pub fn loop_item(target: &Expr) -> Option<&ast::ExprName> {
    match target {
        Expr::Name(name) => Some(name),
        Expr::Tuple(tuple) => tuple.elts.last().and_then(Expr::as_name_expr),
        _ => None,
    }
}

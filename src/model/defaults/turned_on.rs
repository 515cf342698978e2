//! What a file turns on anywhere, on `self` or any other object, nested functions included:
//! `module.gradient_checkpointing = True`, `a, m.loud = 1, True`, `self.x |= on`, `setattr(m,
//! "loud", True)`. A `setattr` with a name it computes may turn on any name of that shape
//! (`f"{kind}_inv_freq"`: the names ending `_inv_freq`), or anything. Asked by the analyses of
//! flags `__init__` leaves off (`constructor_flags`, `config_defaults`).

use rustc_hash::FxHashMap as HashMap;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::Ranged;

use crate::model::file::FileModel;

pub struct TurnedOn<'a> {
    text: &'a str,
    /// By name: how many stores and `setattr` calls may turn it on.
    names: HashMap<&'a str, usize>,
    /// The literal start and end of computed names.
    shapes: Vec<(&'a str, &'a str)>,
}

impl<'a> TurnedOn<'a> {
    pub fn of(model: &'a FileModel) -> Self {
        let text = model.source.text.as_str();
        let mut walk = TurnedOn { text, names: HashMap::default(), shapes: Vec::new() };
        walk.visit_body(model.source.parsed.suite());
        walk
    }

    pub fn contains(&self, attr: &str) -> bool {
        self.names.contains_key(attr) || self.computed_may_set(attr)
    }

    /// How many places of the file may turn `attr` on; `None` when a `setattr` with a computed
    /// name may, as often as it runs.
    pub fn times(&self, attr: &str) -> Option<usize> {
        (!self.computed_may_set(attr)).then(|| self.names.get(attr).copied().unwrap_or(0))
    }

    fn computed_may_set(&self, attr: &str) -> bool {
        self.shapes
            .iter()
            .any(|(start, end)| attr.len() >= start.len() + end.len() && attr.starts_with(start) && attr.ends_with(end))
    }

    /// `f"{kind}_inv_freq"` -> ("", "_inv_freq"): the text before its first and after its last
    /// replacement field. Anything else computed -> ("", ""), which every name has.
    fn shape(&self, name: &Expr) -> (&'a str, &'a str) {
        let written = &self.text[name.range()];
        let literal = written
            .strip_prefix("f\"")
            .and_then(|rest| rest.strip_suffix('"'))
            .or_else(|| written.strip_prefix("f'").and_then(|rest| rest.strip_suffix('\'')))
            .filter(|inner| !inner.contains("{{") && !inner.contains("}}") && !inner.contains('\\'));
        literal.and_then(|inner| Some((inner.split_once('{')?.0, inner.rsplit_once('}')?.1))).unwrap_or_default()
    }

    fn target(&mut self, target: &'a Expr) {
        match target {
            Expr::Attribute(attr) => *self.names.entry(attr.attr.id.as_str()).or_default() += 1,
            Expr::Tuple(tuple) => tuple.elts.iter().for_each(|element| self.target(element)),
            Expr::List(list) => list.elts.iter().for_each(|element| self.target(element)),
            Expr::Starred(starred) => self.target(&starred.value),
            _ => {}
        }
    }
}

/// `False` or `None`: a value that leaves a switch off.
fn is_off(value: &Expr) -> bool {
    matches!(value, Expr::BooleanLiteral(b) if !b.value) || value.is_none_literal_expr()
}

/// Whether an assignment may turn its targets on: any value but `False` or `None`, or `x |= on`.
pub fn turns_on(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Assign(assign) => !is_off(&assign.value),
        Stmt::AnnAssign(assign) => assign.value.as_deref().is_some_and(|value| !is_off(value)),
        Stmt::AugAssign(_) => true,
        _ => false,
    }
}

impl<'a> Visitor<'a> for TurnedOn<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if turns_on(stmt) {
            match stmt {
                Stmt::Assign(assign) => assign.targets.iter().for_each(|t| self.target(t)),
                Stmt::AnnAssign(assign) => self.target(&assign.target),
                Stmt::AugAssign(assign) => self.target(&assign.target),
                _ => {}
            }
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "setattr")
        {
            match &*call.arguments.args {
                [_, Expr::StringLiteral(_), value] if is_off(value) => {}
                [_, Expr::StringLiteral(name), _] => *self.names.entry(name.value.to_str()).or_default() += 1,
                [_, name, _] => {
                    let shape = self.shape(name);
                    self.shapes.push(shape);
                }
                _ => self.shapes.push(("", "")),
            }
        }
        walk_expr(self, expr);
    }
}

//! Module attributes that hold a Python number or bool, as `__init__` sets them
//! (`self.step = 0`, `self.scale = 1.0`, `self.enabled = True`). Dynamo treats such attributes of an
//! `nn.Module` as constants of the graph and guards on their value.

use ruff_python_ast::{self as ast, Expr};

use crate::model::file::{FileModel, SelfAssignment};
use crate::model::file::{init_method, self_assignments};
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    Int,
    Float,
    Bool,
}

/// An attribute `__init__` assigns a Python number or bool literal.
pub struct ScalarAttribute<'a> {
    pub kind: ScalarKind,
    pub init: SelfAssignment<'a>,
    pub literal: &'a Expr,
}

/// The class's attributes that `__init__` assigns a number or bool literal, in source order.
pub fn scalar_attributes<'a>(model: &FileModel<'a>, class: usize) -> Vec<ScalarAttribute<'a>> {
    let Some(init) = init_method(model, class) else { return Vec::new() };
    self_assignments(model, class)
        .iter()
        .filter(|assignment| assignment.method == init)
        .filter_map(|init| {
            let literal = init.value()?;
            let kind = scalar_kind(literal)?;
            Some(ScalarAttribute { kind, init: init.clone(), literal })
        })
        .collect()
}

/// `0`, `-1`, `0.5`, `True`: the kind of Python scalar a literal is.
pub fn scalar_kind(expr: &Expr) -> Option<ScalarKind> {
    match expr {
        Expr::NumberLiteral(number) => match number.value {
            ast::Number::Int(_) => Some(ScalarKind::Int),
            ast::Number::Float(_) => Some(ScalarKind::Float),
            ast::Number::Complex { .. } => None,
        },
        Expr::BooleanLiteral(_) => Some(ScalarKind::Bool),
        Expr::UnaryOp(op) if matches!(op.op, ast::UnaryOp::USub | ast::UnaryOp::UAdd) => {
            scalar_kind(&op.operand).filter(|kind| *kind != ScalarKind::Bool)
        }
        _ => None,
    }
}

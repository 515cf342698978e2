//! `layerdrop_prob = np.random.random()` stored in a name that only LayerDrop tests read (`if not
//! self.training or (layerdrop_prob > self.layerdrop): hidden_states = layer(hidden_states)`,
//! wav2vec2's adapter; `self.training and (dropout_probability < self.layerdrop)`, VITS). tcfix
//! offers no fix: drawing a constant under compile (`1.0 if torch.compiler.is_compiling() else
//! ...`, what it once wrote) removes the break by turning LayerDrop off, which trains a different
//! model than eager does. The finding says what keeps LayerDrop instead.

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};

use crate::model::file::{FileModel, FunctionNode};
use crate::model::defaults::layerdrop::LayerDropTest;
/// What to do about a numpy draw that `assignment` stores and that only LayerDrop tests read,
/// else `None`.
pub(super) fn layerdrop_draw_advice(model: &FileModel, function: usize, assignment: &ast::StmtAssign) -> Option<String> {
    let [Expr::Name(name)] = assignment.targets.as_slice() else { return None };
    let FunctionNode::Def(def) = model.function(function).node else { return None };
    let mut uses = DrawUses { name: name.id.as_str(), stores: 0, layerdrop_tests: 0, other_reads: 0 };
    uses.visit_body(&def.body);
    if uses.stores != 1 || uses.layerdrop_tests == 0 || uses.other_reads != 0 {
        return None;
    }
    Some(LAYERDROP.to_string())
}

/// What keeps LayerDrop under compile (the rule README says how).
const LAYERDROP: &str = "draw the skip with `torch.rand` and use `torch.where(skip, h, layer(h))` or `torch.cond`, or \
     compile each layer (`layer.compile()`): no fix keeps LayerDrop in one graph";

/// How a function's code uses the name a draw is stored in: stored (any binding, a nested def's
/// included), read as the draw of a LayerDrop test, or read for anything else.
struct DrawUses<'n> {
    name: &'n str,
    stores: usize,
    layerdrop_tests: usize,
    other_reads: usize,
}

// A visitor of its own: the advice asks about every use of one name in all the function's code, nested defs included: the checker walks compiled code only.
impl<'a> Visitor<'a> for DrawUses<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        // `del p`, `global p` and `nonlocal p` make it more than a local the draw fills.
        match stmt {
            Stmt::Global(ast::StmtGlobal { names, .. }) | Stmt::Nonlocal(ast::StmtNonlocal { names, .. })
                if names.iter().any(|name| name.id.as_str() == self.name) =>
            {
                self.other_reads += 1
            }
            _ => ruff_python_ast::visitor::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Some(test) = LayerDropTest::of(expr)
            && matches!(test.draw, Expr::Name(draw) if draw.id.as_str() == self.name)
        {
            self.layerdrop_tests += 1;
            return;
        }
        match expr {
            Expr::Name(name) if name.id.as_str() == self.name => match name.ctx {
                ExprContext::Store => self.stores += 1,
                _ => self.other_reads += 1,
            },
            _ => walk_expr(self, expr),
        }
    }
}

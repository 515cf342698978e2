//! `layerdrop_prob = np.random.random()` -> `layerdrop_prob = 1.0 if torch.compiler.is_compiling()
//! else np.random.random()`, where the draw only decides LayerDrop (`if not self.training or
//! (layerdrop_prob > self.layerdrop): hidden_states = layer(hidden_states)`, wav2vec2's adapter;
//! `self.training and (dropout_probability < self.layerdrop)`, VITS). Under Dynamo
//! `is_compiling()` is the constant True: the numpy call is never traced, and a draw of 1.0 lies
//! above every rate below 1, so each comparison says "keep the layer", whichever way it is written.

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_text_size::Ranged;

use crate::diagnostic::snippet;
use crate::fix::text::torch_name_at;
use crate::fix::torch_api::{TorchVersion, is_compiling_call};
use crate::fix::{Edit, Fix, Safety};
use crate::model::file::{FileModel, FunctionNode};
use crate::model::layerdrop::LayerDropTest;

/// The fix for a numpy draw that `assignment` stores and that only LayerDrop tests read, else `None`.
pub(super) fn layerdrop_draw_fix(
    model: &FileModel,
    function: usize,
    target: TorchVersion,
    call: &ast::ExprCall,
    assignment: &ast::StmtAssign,
) -> Option<Fix> {
    let [Expr::Name(name)] = assignment.targets.as_slice() else { return None };
    let FunctionNode::Def(def) = model.function(function).node else { return None };
    let mut uses = DrawUses { name: name.id.as_str(), stores: 0, layerdrop_tests: 0, other_reads: 0 };
    uses.visit_body(&def.body);
    if uses.stores != 1 || uses.layerdrop_tests == 0 || uses.other_reads != 0 {
        return None;
    }
    // A fix that loads torch into the module would change what importing it does: only where the
    // file already names torch.
    let torch = torch_name_at(model, call.start());
    if torch.import.is_some() {
        return None;
    }
    let compiling = is_compiling_call(&torch.name, target);
    let draw = &model.source.text[call.range()];
    let edit = Edit::replace(call.range(), format!("1.0 if {compiling} else {draw}"));
    let title = format!(
        "Keep every layer under torch.compile: `1.0 if {compiling} else {}` (unsafe: compiled training runs every \
         layer, where eager drops each with probability `layerdrop`; eager runs are unchanged): no graph break here, \
         so the layer loop is traced instead of running eagerly",
        snippet(draw)
    );
    Some(Fix::new(title, Safety::Unsafe, vec![edit]))
}

/// How a function's code uses the name a draw is stored in: stored (any binding, a nested def's
/// included), read as the draw of a LayerDrop test, or read for anything else.
struct DrawUses<'n> {
    name: &'n str,
    stores: usize,
    layerdrop_tests: usize,
    other_reads: usize,
}

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

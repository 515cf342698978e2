//! Loops that pair each element with an entry of the module's own containers: the loop variable
//! picks an entry (`self.heads[i]`, `self.embed_tokens[codebook]`), or the loop zips with one
//! (`zip(levels, self.proj)`). What is looped over must then match the number of entries the
//! model holds: its length is fixed when the model is built, not by the data. Not a parameter or
//! buffer (`self.pos[t]` of a `max_len`-row position table): its rows only cap the size, which
//! still varies below the cap.

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{Expr, Stmt};

use crate::model::file::module::is_self;
use crate::model::tensors::tensor::Tensors;

/// `self.<attr>` that is not one of the class's tensors: a module list, a dict of modules.
fn is_own_container(tensors: &Tensors, expr: &Expr) -> bool {
    matches!(expr, Expr::Attribute(attr) if is_self(&attr.value)) && !tensors.is_tensor(expr)
}

/// Whether the loop body (`body`: a comprehension's elements; `stmts`: a `for` statement's body)
/// indexes one of the module's own containers with the loop variable `target`.
pub fn indexes_own_container(tensors: &Tensors, target: &Expr, body: &[&Expr], stmts: &[Stmt]) -> bool {
    struct Finder<'t, 'x> {
        tensors: &'x Tensors<'x, 'x>,
        target: &'t str,
        found: bool,
    }
    impl<'a> Visitor<'a> for Finder<'_, '_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Subscript(subscript) = expr
                && is_own_container(self.tensors, &subscript.value)
                && matches!(subscript.slice.as_ref(), Expr::Name(n) if n.id.as_str() == self.target)
            {
                self.found = true;
            }
            walk_expr(self, expr);
        }
    }
    let Expr::Name(target) = target else { return false };
    let mut finder = Finder { tensors, target: target.id.as_str(), found: false };
    body.iter().for_each(|expr| finder.visit_expr(expr));
    finder.visit_body(stmts);
    finder.found
}

/// Whether a loop over `iter` binding `target` pairs its elements with the module's own
/// containers: `for i, x in enumerate(xs)` whose body indexes one with `i`, or
/// `for x, layer in zip(xs, self.layers)`.
pub fn pairs_with_own_container(tensors: &Tensors, target: &Expr, iter: &Expr, body: &[&Expr], stmts: &[Stmt]) -> bool {
    let Expr::Call(call) = iter else { return false };
    let Expr::Name(function) = call.func.as_ref() else { return false };
    match function.id.as_str() {
        "enumerate" => match target {
            Expr::Tuple(pair) => {
                pair.elts.first().is_some_and(|index| indexes_own_container(tensors, index, body, stmts))
            }
            _ => false,
        },
        "zip" => call.arguments.args.iter().any(|arg| is_own_container(tensors, arg)),
        _ => false,
    }
}

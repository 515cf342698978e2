//! What a file's calls pass to the functions it imports: for each imported name, the keywords
//! its calls pass, the most positional arguments one of them passes, and whether some use hides
//! what it passes (`*args`, `**kwargs`, or the name handed on instead of called). The project
//! index joins them per function, so that a helper of one file (`def resize(x, size,
//! warning=False)`) knows which of its parameters no call of the project passes.

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{Expr, ExprContext};

use crate::model::file::FileModel;
use crate::model::file::passed::Passed;

/// For each name the file imports and uses (fully qualified: `pkg.ops.resize`), what its uses
/// pass, sorted by name. Torch's own functions are left out: they are not the project's.
pub fn imported_calls(model: &FileModel) -> Vec<(String, Passed)> {
    let mut finder = Uses { model, found: Vec::new() };
    finder.visit_body(model.source.parsed.suite());
    let mut found = finder.found;
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let mut merged: Vec<(String, Passed)> = Vec::with_capacity(found.len());
    for (name, passed) in found {
        match merged.last_mut() {
            Some((last, seen)) if *last == name => seen.merge(&passed),
            _ => merged.push((name, passed)),
        }
    }
    merged.shrink_to_fit();
    merged
}

struct Uses<'m, 'a> {
    model: &'m FileModel<'a>,
    found: Vec<(String, Passed)>,
}

impl Uses<'_, '_> {
    /// The imported name `expr` reads (`resize`, `ops.resize`), fully qualified.
    fn imported(&self, expr: &Expr) -> Option<String> {
        let mut head = expr;
        while let Expr::Attribute(attribute) = head {
            head = &attribute.value;
        }
        let Expr::Name(name) = head else { return None };
        // Torch's own names are left out before their dotted name is built: most imported uses
        // in a model file are `torch.…` and `nn.…`.
        let bound = self.model.imports.get(name.id.as_str())?;
        if bound == "torch" || bound.starts_with("torch.") {
            return None;
        }
        self.model.imports.qualified_name(expr)
    }
}

impl<'a> Visitor<'a> for Uses<'_, 'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Call(call) => {
                if let Some(callee) = self.imported(&call.func) {
                    self.found.push((callee, Passed::by_call(call)));
                    // The callee is read here as a call, not handed on.
                    for argument in call.arguments.args.iter() {
                        self.visit_expr(argument);
                    }
                    for keyword in call.arguments.keywords.iter() {
                        self.visit_expr(&keyword.value);
                    }
                    return;
                }
            }
            Expr::Name(name) if name.ctx == ExprContext::Load => {
                if let Some(handed_on) = self.imported(expr) {
                    self.found.push((handed_on, Passed::hidden()));
                }
            }
            Expr::Attribute(attribute) if attribute.ctx == ExprContext::Load => {
                if let Some(handed_on) = self.imported(expr) {
                    self.found.push((handed_on, Passed::hidden()));
                    return;
                }
            }
            _ => {}
        }
        walk_expr(self, expr);
    }
}

//! What a file's calls pass to the functions it imports: for each imported name, the keywords
//! its calls pass, the most positional arguments one of them passes, and whether some use hides
//! what it passes (`*args`, `**kwargs`, or the name handed on instead of called). The project
//! index joins them per function, so that a helper of one file (`def resize(x, size,
//! warning=False)`) knows which of its parameters no call of the project passes.

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr, ExprContext};

use crate::model::file::FileModel;

/// What the calls of one function pass.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Passed {
    /// The keywords some call passes a value other than `False` or `None`, sorted, once each.
    keywords: Vec<String>,
    /// The keywords some call passes `False` (a parameter that defaults to `None` is then no
    /// longer `None`, but still false).
    falses: Vec<String>,
    /// The most positional arguments a call passes.
    positional: usize,
    /// Some use cannot be read: anything may be passed.
    hidden: bool,
}

impl Passed {
    pub fn merge(&mut self, other: &Passed) {
        for keyword in &other.keywords {
            if let Err(at) = self.keywords.binary_search(keyword) {
                self.keywords.insert(at, keyword.clone());
            }
        }
        for keyword in &other.falses {
            if let Err(at) = self.falses.binary_search(keyword) {
                self.falses.insert(at, keyword.clone());
            }
        }
        self.positional = self.positional.max(other.positional);
        self.hidden |= other.hidden;
    }

    /// Whether some call may pass the parameter `name`, the `position`-th positional one
    /// (counted from 0; `None` for a keyword-only one).
    pub fn passes(&self, name: &str, position: Option<usize>) -> bool {
        self.hidden
            || self.keywords.binary_search_by(|keyword| keyword.as_str().cmp(name)).is_ok()
            || position.is_some_and(|position| position < self.positional)
    }

    /// Whether some call passes `name=False`.
    pub fn passes_false(&self, name: &str) -> bool {
        self.falses.binary_search_by(|keyword| keyword.as_str().cmp(name)).is_ok()
    }

    fn call(call: &ast::ExprCall) -> Self {
        let arguments = &call.arguments;
        // `warning=False` passes the default again: the flag stays off.
        let is_false = |value: &Expr| matches!(value, Expr::BooleanLiteral(literal) if !literal.value);
        let named = |keep: &dyn Fn(&Expr) -> bool| {
            let mut names: Vec<String> = (arguments.keywords.iter())
                .filter(|keyword| keep(&keyword.value))
                .filter_map(|keyword| Some(keyword.arg.as_ref()?.to_string()))
                .collect();
            names.sort_unstable();
            names.dedup();
            names
        };
        let keywords = named(&|value| !value.is_none_literal_expr() && !is_false(value));
        let falses = named(&is_false);
        let hidden =
            arguments.args.iter().any(Expr::is_starred_expr) || arguments.keywords.iter().any(|k| k.arg.is_none());
        Passed { keywords, falses, positional: arguments.args.len(), hidden }
    }
}

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
        self.model.imports.get(name.id.as_str())?;
        let qualified = self.model.imports.qualified_name(expr)?;
        (qualified != "torch" && !qualified.starts_with("torch.")).then_some(qualified)
    }
}

impl<'a> Visitor<'a> for Uses<'_, 'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Call(call) => {
                if let Some(callee) = self.imported(&call.func) {
                    self.found.push((callee, Passed::call(call)));
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
                    self.found.push((handed_on, Passed { hidden: true, ..Passed::default() }));
                }
            }
            Expr::Attribute(attribute) if attribute.ctx == ExprContext::Load => {
                if let Some(handed_on) = self.imported(expr) {
                    self.found.push((handed_on, Passed { hidden: true, ..Passed::default() }));
                    return;
                }
            }
            _ => {}
        }
        walk_expr(self, expr);
    }
}

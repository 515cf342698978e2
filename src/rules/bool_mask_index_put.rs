//! TCF105 bool-mask-index-put: `t[mask] = values` with a boolean tensor mask and tensor values in
//! compiled code. The forward traces, but when `values` requires grad the backward of
//! `index_put` needs `nonzero`, AOTAutograd fails on it, and the whole frame falls back to eager
//! (pytorch#114686). The fix rebinds `t = t.masked_scatter(mask.unsqueeze(-1), values)`, only where
//! `t` is a fresh local tensor that nothing else can see (rebinding instead of mutating is then
//! invisible).

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::Diagnostic;
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled_code::Site;
use crate::model::file::{FileModel, FunctionNode};
use crate::model::imports::last_segment;
use crate::model::tensor::Tensors;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF105",
    name: "bool-mask-index-put",
    summary: "write masked rows with masked_scatter instead of a boolean index assignment",
    explanation: include_str!("../../codemods/bool-mask-index-put/README.md"),
    hazard: "A boolean-mask assignment of tensor values (`t[mask] = values`) in compiled code makes the whole frame run eagerly in training.",
    why: "The backward of the assignment needs `nonzero`, whose output size depends on the mask, so AOTAutograd \
              fails to compile it and Dynamo falls back to running the whole frame eagerly.",
    category: Category::GraphBreak,
    fixes: &[Safety::Unsafe],
    mentions: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// Calls that return a new tensor no one else holds.
const FRESH_TENSOR: [&str; 16] = [
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "clone",
    "new_zeros",
    "new_ones",
    "new_empty",
    "new_full",
    "randn",
    "rand",
    "tensor",
];

/// The assignments of tensor values through a boolean mask in the function's compiled code.
fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    Some(Box::new(IndexPutFinder { function, tensors: function.tensors(), found: Vec::new() }))
}

struct IndexPut<'a> {
    statement: &'a ast::StmtAssign,
    target: &'a ast::ExprSubscript,
    /// The tensor written to, when it is a plain name.
    name: Option<&'a str>,
    site: Site,
}

struct IndexPutFinder<'c, 'a> {
    function: &'c Function<'c, 'a>,
    tensors: &'c Tensors<'a, 'a>,
    found: Vec<IndexPut<'a>>,
}

impl<'a> FunctionHooks<'a> for IndexPutFinder<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, site: Site) {
        let Stmt::Assign(assign) = stmt else { return };
        let [Expr::Subscript(target)] = assign.targets.as_slice() else { return };
        // `t[mask] = 0.0` is traced fine: only tensor values have the failing backward.
        let is_hazard = self.tensors.is_tensor(&target.value)
            && self.tensors.is_mask(&target.slice)
            && self.tensors.is_tensor(&assign.value)
            && !self.never_requires_grad(&target.value)
            && !self.never_requires_grad(&assign.value);
        if is_hazard {
            let name = match target.value.as_ref() {
                Expr::Name(name) => Some(name.id.as_str()),
                _ => None,
            };
            self.found.push(IndexPut { statement: assign, target, name, site });
        }
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        let model = function.model();
        for put in self.found {
            let text = &model.source.text[put.target.range()];
            let message = format!(
                "`{text} = ...` in {} assigns tensor values through a boolean mask: in training the frame falls back to eager",
                function.describe()
            );
            let diagnostic = Diagnostic::new(&RULE, put.statement.range(), message);
            diagnostics.push(match masked_scatter_fix(model, function.id, &put) {
                Ok(fix) => diagnostic.with_fix(fix),
                Err(reason) => diagnostic.without_fix(reason),
            });
        }
    }
}

impl IndexPutFinder<'_, '_> {
    /// Integer and boolean tensors never require grad, and without grad the assignment compiles:
    /// masks, and tensors named for ids, labels, masks or indices (`labels[mask] = ignore_ids`).
    fn never_requires_grad(&self, expr: &Expr) -> bool {
        if self.tensors.is_mask(expr) {
            return true;
        }
        let integer_cast = matches!(expr, Expr::Call(call)
            if matches!(last_segment(&call.func), Some("long" | "int" | "bool" | "short" | "byte")));
        integer_cast
            || root_name(expr).is_some_and(|name| {
                let name = name.to_ascii_lowercase();
                ["label", "ids", "mask", "index", "indices"].iter().any(|word| name.contains(word))
            })
    }
}

/// The name an expression starts from: `labels` in `labels.unsqueeze(-1)[..., 0]`.
fn root_name(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(name) => Some(name.id.as_str()),
        Expr::Attribute(attr) => root_name(&attr.value),
        Expr::Subscript(subscript) => root_name(&subscript.value),
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Attribute(method) => root_name(&method.value),
            _ => None,
        },
        _ => None,
    }
}

/// `t[mask] = values` -> `t = t.masked_scatter(mask.unsqueeze(-1), values)`.
fn masked_scatter_fix(model: &FileModel, function: usize, put: &IndexPut) -> Result<Fix, &'static str> {
    const NOT_LOCAL: &str = "the assignment writes into a tensor others may see (an input, an attribute, a view): \
                             rebinding it would change what they see; write \
                             `x = x.masked_scatter(mask.unsqueeze(-1), values)` where `x` is a fresh tensor, or \
                             `torch.where` over the full rows";
    let name = put.name.ok_or(NOT_LOCAL)?;
    if put.site.in_loop {
        // A view taken of the tensor in one iteration would stop seeing the next iteration's writes.
        return Err("the assignment is in a loop: rewrite it by hand with `masked_scatter` if no view of the \
                    tensor outlives an iteration");
    }
    let FunctionNode::Def(def) = model.function(function).node else { return Err(NOT_LOCAL) };
    if !is_fresh_local(def, name, put.statement.range()) {
        return Err(NOT_LOCAL);
    }
    let text = &model.source.text;
    if let Expr::Subscript(source) = put.statement.value.as_ref() {
        if text[source.slice.range()] == text[put.target.slice.range()] {
            // `t[mask] = src[mask]`: the mask likely has the full shape of `t`, not one dim less.
            return Err("the values are read with the same mask: if `t` and the source have the mask's shape, \
                        write `t = torch.where(mask, source, t)`");
        }
    }
    let mask = &text[put.target.slice.range()];
    let mask = match put.target.slice.as_ref() {
        Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_) | Expr::Subscript(_) => mask.to_string(),
        _ => format!("({mask})"),
    };
    let values = &text[put.statement.value.range()];
    let replacement = format!("{name} = {name}.masked_scatter({mask}.unsqueeze(-1), {values})");
    let title = format!(
        "Rebind `{name}` to `{name}.masked_scatter(...)` (unsafe: assumes the mask covers all but the last dim of \
         `{name}` and the values have one row per selected position; surplus rows are now ignored instead of \
         raising)"
    );
    Ok(Fix::new(title, Safety::Unsafe, vec![Edit::replace(put.statement.range(), replacement)]))
}

/// Whether, in the block holding the assignment at `put`, the statement binding `name` last before
/// it is `name = <fresh tensor>` (`torch.zeros(...)`, `x.clone()`) and nothing in between reads or
/// rebinds `name`: then nothing else holds the tensor or a view of it, and rebinding the name is the
/// same as writing into it.
fn is_fresh_local(def: &ast::StmtFunctionDef, name: &str, put: TextRange) -> bool {
    let Some(block) = block_holding(&def.body, put) else { return false };
    let Some(index) = block.iter().position(|stmt| stmt.range() == put) else { return false };
    for stmt in block[..index].iter().rev() {
        if let Some(value) = binds(stmt, name) {
            return matches!(value, Expr::Call(call)
                if last_segment(&call.func).is_some_and(|f| FRESH_TENSOR.contains(&f)));
        }
        let mut uses = NameUses { name, used: false };
        uses.visit_stmt(stmt);
        if uses.used {
            return false;
        }
    }
    false
}

/// `name = value` as a whole statement: the value.
fn binds<'a>(stmt: &'a Stmt, name: &str) -> Option<&'a Expr> {
    let Stmt::Assign(assign) = stmt else { return None };
    let [Expr::Name(target)] = assign.targets.as_slice() else { return None };
    (target.id.as_str() == name).then_some(&*assign.value)
}

/// The statement list that directly holds the statement at `range`.
fn block_holding(body: &[Stmt], range: TextRange) -> Option<&[Stmt]> {
    if body.iter().any(|stmt| stmt.range() == range) {
        return Some(body);
    }
    let outer = body.iter().find(|stmt| stmt.range().contains_range(range))?;
    let blocks: Vec<&[Stmt]> = match outer {
        Stmt::If(s) => {
            std::iter::once(s.body.as_slice()).chain(s.elif_else_clauses.iter().map(|c| c.body.as_slice())).collect()
        }
        Stmt::With(s) => vec![&s.body],
        Stmt::For(s) => vec![&s.body, &s.orelse],
        Stmt::While(s) => vec![&s.body, &s.orelse],
        Stmt::Try(s) => {
            let mut blocks = vec![s.body.as_slice(), &s.orelse, &s.finalbody];
            blocks.extend(s.handlers.iter().map(|h| {
                let ast::ExceptHandler::ExceptHandler(h) = h;
                h.body.as_slice()
            }));
            blocks
        }
        _ => return None,
    };
    blocks.into_iter().find_map(|block| block_holding(block, range))
}

/// Whether a statement reads or binds `name` anywhere.
struct NameUses<'n> {
    name: &'n str,
    used: bool,
}

impl<'a> Visitor<'a> for NameUses<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if matches!(expr, Expr::Name(n) if n.id.as_str() == self.name) {
            self.used = true;
        }
        walk_expr(self, expr);
    }
}

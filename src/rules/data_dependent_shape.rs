//! TCF106 data-dependent-shape: operations whose output size depends on tensor values —
//! reading `x[mask]` with a boolean mask, `nonzero()`, `argwhere()`, one-argument
//! `torch.where(c)`, `unique()`, `masked_select()` — in compiled code. With the default config
//! Dynamo breaks the graph at each (GB0036). A selection that only feeds a sum or a mean is
//! rewritten densely (`x[m].sum()` -> `torch.where(m, x, 0).sum()`); one that goes only to code
//! that traces with `capture_dynamic_output_shape_ops` (`model::unbacked`) is removed by that one
//! process-wide setting, written once where the project compiles (`fix::dynamo_config`), and is
//! not reported where the project already sets it.

use ruff_python_ast::token::TokenKind;
use ruff_python_ast::{self as ast, CmpOp, Expr, ExprContext, Operator, Stmt, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::Diagnostic;
use crate::fix::dynamo_config::ProjectSetting;
use crate::fix::text::torch_name;
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled::compiled_code::Site;
use crate::model::tensors::comprehensions::mask_reads;
use crate::model::file::configured::Capture;
use crate::model::compiled::dynamo_config::sets;
use crate::model::file::FileModel;
use crate::model::file::imports::Imports;
use crate::model::tensors::tensor::Tensors;
use crate::model::tensors::capture_crashes::crash_with;
use crate::model::tensors::unbacked::{Flow, Selection, StillBreaks};
use crate::diagnostic::snippet;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF106",
    name: "data-dependent-shape",
    summary: "keep tensor shapes independent of tensor values",
    explanation: include_str!("../../codemods/data-dependent-shape/README.md"),
    hazard: "An operation whose output shape depends on tensor values (`x[mask]`, `nonzero()`, `unique()`) in compiled code breaks the graph.",
    why: "Dynamo cannot give the result a size without running the tensors, so it ends the graph and syncs with \
              the device.",
    category: Category::GraphBreak,
    fixes: &[Safety::Unsafe],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// Methods and torch functions whose output size is the number of selected or distinct values.
const SIZE_FROM_VALUES: [&str; 5] = ["nonzero", "argwhere", "unique", "unique_consecutive", "masked_select"];

/// What to do where no fix applies.
const DENSE_ADVICE: &str = "mask the full tensor (`torch.where(mask, x, 0)`) or use `nonzero_static`";

/// The reads and calls in the function's compiled code whose output size depends on tensor values.
fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    let imports = &function.model().imports;
    Some(Box::new(ShapeFinder {
        function,
        tensors: function.tensors(),
        imports,
        found: Vec::new(),
        in_comprehensions: Vec::new(),
    }))
}

struct ShapeFinder<'c, 'a> {
    function: &'c Function<'c, 'a>,
    tensors: &'c Tensors<'a, 'a>,
    imports: &'c Imports,
    found: Vec<(&'a Expr, Site)>,
    /// Mask reads inside comprehensions: reported without a fix (what a selection feeds there
    /// is not followed).
    in_comprehensions: Vec<(&'a Expr, Site)>,
}

impl<'a> FunctionHooks<'a> for ShapeFinder<'_, 'a> {
    /// `x[mask] += w` reads `x[mask]` before it writes it back: the read breaks the graph as a
    /// plain selection does (measured under torch 2.15: 1 break, 0 with the capture setting).
    fn stmt(&mut self, stmt: &'a Stmt, site: Site) {
        if let Stmt::AugAssign(update) = stmt
            && let Expr::Subscript(subscript) = update.target.as_ref()
            && self.indexes_by_mask(subscript)
        {
            self.found.push((&update.target, site));
        }
    }

    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        let found = match expr {
            Expr::Subscript(subscript) => self.is_mask_read(subscript),
            Expr::Call(call) => self.sizes_from_values(call),
            // Its own scope: the tensors model does not know its names.
            Expr::Lambda(_) => return false,
            Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => {
                let reads = mask_reads(expr, self.tensors)
                    .into_iter()
                    .map(|found| (found.read, Site { in_generator: found.in_generator, ..site }));
                self.in_comprehensions.extend(reads);
                return false;
            }
            _ => false,
        };
        if found {
            self.found.push((expr, site));
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        if self.found.is_empty() && self.in_comprehensions.is_empty() {
            return;
        }
        let function = self.function;
        let model = function.model();
        // With `capture_dynamic_output_shape_ops` on, a selection traces; what a comprehension's
        // results feed is not followed, so none is reported (as a plain one that nothing breaks on).
        let captured =
            model.captures.sets(Capture::DynamicOutputShapeOps) || sets(model, Capture::DynamicOutputShapeOps);
        let in_comprehensions = if captured { &[][..] } else { &self.in_comprehensions[..] };
        for &(expr, site) in in_comprehensions {
            let diagnostic = function.graph_break(selection_diagnostic(function, expr), site);
            diagnostics.push(diagnostic.without_fix(format!(
                "{DENSE_ADVICE}: tcfix does not follow a selection made inside a comprehension"
            )));
        }
        if self.found.is_empty() {
            return;
        }
        let flow = Flow::of(model, function.id, self.tensors);
        let selections: Vec<Selection> =
            self.found.iter().map(|(expr, _)| Selection { expr, mask: self.mask_of(expr) }).collect();
        let verdicts = flow.selections(&selections);
        let mut setting: Option<Result<ProjectSetting, String>> = None;
        for ((expr, site), still_breaks) in self.found.into_iter().zip(verdicts) {
            if captured && still_breaks.is_none() {
                // The project turns `capture_dynamic_output_shape_ops` on: Dynamo traces this one.
                continue;
            }
            let diagnostic = function.graph_break(selection_diagnostic(function, expr), site);
            let dense = DenseSum { model, flow: &flow, tensors: self.tensors }.fix(expr);
            diagnostics.push(match (dense, still_breaks) {
                (Some(fix), _) => diagnostic.with_fix(fix),
                (None, Some(still_breaks)) => diagnostic.without_fix(still_breaking(model, still_breaks)),
                (None, None) => match setting.get_or_insert_with(|| removal(model)).clone() {
                    Ok(setting) => diagnostic.removed_by(setting, &model.source.path),
                    Err(reason) => diagnostic.without_fix(reason),
                },
            });
        }
    }
}

fn selection_diagnostic(function: &Function, expr: &Expr) -> Diagnostic {
    let text = snippet(&function.model().source.text[expr.range()]);
    let message =
        format!("`{text}` in {} has a shape that depends on tensor values: the graph breaks", function.describe());
    Diagnostic::new(&RULE, expr.range(), message)
}

/// Why there is no fix for a selection that Dynamo still breaks on with the option on.
/// (With the option on in the file or not: either way it is what still breaks.)
fn still_breaking(model: &FileModel, still_breaks: StillBreaks) -> String {
    format!("{DENSE_ADVICE}: {}", still_breaks.reason(&model.source.text))
}

/// Where Dynamo would trace the selection with `capture_dynamic_output_shape_ops` on: the setting
/// that removes it, written once for the project (`fix::dynamo_config`), or why it is not offered.
fn removal(model: &FileModel) -> Result<ProjectSetting, String> {
    if let Some(crash) = crash_with(model, Capture::DynamicOutputShapeOps) {
        let (line, _) = model.source.line_column(crash.start());
        let at = snippet(&model.source.text[crash]);
        return Err(format!(
            "{DENSE_ADVICE}: the capture option would make `{at}` (line {line}) fail to compile"
        ));
    }
    Ok(ProjectSetting { capture: Capture::DynamicOutputShapeOps, written_in: model.captures.compiled_in.clone() })
}

/// The dense form of a selection that only feeds a sum or a mean: `x[m].sum()`,
/// `torch.sum(x[m])`, `x.masked_select(m).sum()` -> `torch.where(m, x, 0).sum()`, and the mean as
/// that sum over `m.sum()`. `masked_select` broadcasts `x` and `m` as `torch.where` does, so its
/// sum needs nothing more; `x[m]` lines `m` up with the leading dimensions of `x` instead, and
/// a mean divides by the number of selected elements, so those need `m` to have the shape of `x`:
/// tcfix takes that from a mask computed elementwise from `x` itself (`x > 0`, `~torch.isnan(x)`).
struct DenseSum<'f, 'm, 'a> {
    model: &'m FileModel<'a>,
    flow: &'f Flow<'m, 'a>,
    tensors: &'m Tensors<'a, 'a>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Reduction {
    Sum,
    Mean,
}

impl<'a> DenseSum<'_, '_, 'a> {
    fn fix(&self, selection: &'a Expr) -> Option<Fix> {
        let (x, mask, broadcasts) = self.operands(selection)?;
        let (reduction, reduced) = self.reduction(selection)?;
        let same_shape = || self.elementwise_of(mask, x, 0);
        if !(reduction == Reduction::Sum && broadcasts || same_shape()) {
            return None;
        }
        if has_comment(self.model, reduced.range()) {
            return None;
        }
        let text = &self.model.source.text;
        let (torch, import) = torch_name(self.model);
        let (x_text, mask_text) = (&text[x.range()], &text[mask.range()]);
        let summed = format!("{torch}.where({mask_text}, {x_text}, 0).sum()");
        let (replacement, title) = match reduction {
            Reduction::Sum => (
                summed,
                "Sum through `torch.where(mask, x, 0)` instead of selecting (unsafe: the sum runs over every \
                 element, so float rounding can differ in the last bits)",
            ),
            Reduction::Mean => {
                let count = if is_primary(mask) { format!("{mask_text}.sum()") } else { format!("({mask_text}).sum()") };
                (
                    format!("({summed} / {count})"),
                    "Average through `torch.where(mask, x, 0).sum() / mask.sum()` instead of selecting (unsafe: the \
                     sum runs over every element, so float rounding can differ in the last bits, and a float16 sum \
                     of many elements can overflow where the mean did not)",
                )
            }
        };
        let mut edits = vec![Edit::replace(reduced.range(), replacement)];
        edits.extend(import);
        Some(Fix::new(title, Safety::Unsafe, edits))
    }

    /// `(x, mask, broadcasts)` of `x[mask]`, `x.masked_select(mask)`, `torch.masked_select(x, mask)`.
    fn operands(&self, selection: &'a Expr) -> Option<(&'a Expr, &'a Expr, bool)> {
        match selection {
            Expr::Subscript(subscript) if !matches!(subscript.slice.as_ref(), Expr::Tuple(_)) => {
                Some((&subscript.value, &subscript.slice, false))
            }
            Expr::Call(call) if call.arguments.keywords.is_empty() => match (call.func.as_ref(), &*call.arguments.args) {
                (Expr::Attribute(method), [mask]) if method.attr.id.as_str() == "masked_select" => {
                    Some((&method.value, mask, true))
                }
                (func, [x, mask]) if self.model.imports.refers_to(func, "torch.masked_select") => Some((x, mask, true)),
                _ => None,
            },
            _ => None,
        }
    }

    /// The sum or mean over all of the selection, and the expression that computes it:
    /// `sel.sum()`, `sel.mean()`, `torch.sum(sel)`, `torch.mean(sel)`.
    fn reduction(&self, selection: &'a Expr) -> Option<(Reduction, &'a Expr)> {
        let parent = self.flow.parent_expr(selection)?;
        let reduction = |name: &str| match name {
            "sum" => Some(Reduction::Sum),
            "mean" => Some(Reduction::Mean),
            _ => None,
        };
        match parent {
            Expr::Attribute(method) => {
                let call = self.flow.parent_expr(parent)?;
                let Expr::Call(ast::ExprCall { func, arguments, .. }) = call else { return None };
                (std::ptr::eq(func.as_ref(), parent) && arguments.is_empty())
                    .then(|| reduction(method.attr.id.as_str()))
                    .flatten()
                    .map(|r| (r, call))
            }
            Expr::Call(call) if call.arguments.keywords.is_empty() && call.arguments.args.len() == 1 => {
                let name = self.model.imports.qualified_name(&call.func)?;
                reduction(name.strip_prefix("torch.")?).map(|r| (r, parent))
            }
            _ => None,
        }
    }

    /// Whether `mask` is computed elementwise from `x` (so has its shape): a comparison of `x` with
    /// numbers or 0-d tensors, `torch.isnan(x)`, `~m`, `m & n` of such masks, a name bound to one.
    fn elementwise_of(&self, mask: &Expr, x: &Expr, depth: usize) -> bool {
        let text = &self.model.source.text;
        let is_x = |operand: &Expr| matches!(x, Expr::Name(_) | Expr::Attribute(_)) && text[operand.range()] == text[x.range()];
        let scalar = |operand: &Expr| !self.tensors.is_tensor(operand) || self.tensors.is_zero_dim(operand);
        if depth > 4 {
            return false;
        }
        match mask {
            Expr::Compare(compare) => {
                let operands = || std::iter::once(compare.left.as_ref()).chain(&compare.comparators);
                let ordering = compare.ops.iter().all(|op| !matches!(op, CmpOp::Is | CmpOp::IsNot | CmpOp::In | CmpOp::NotIn));
                ordering && operands().any(is_x) && operands().all(|operand| is_x(operand) || scalar(operand))
            }
            Expr::UnaryOp(op) => op.op == UnaryOp::Invert && self.elementwise_of(&op.operand, x, depth + 1),
            Expr::BinOp(op) => {
                matches!(op.op, Operator::BitAnd | Operator::BitOr | Operator::BitXor)
                    && self.elementwise_of(&op.left, x, depth + 1)
                    && self.elementwise_of(&op.right, x, depth + 1)
            }
            Expr::Call(call) if call.arguments.keywords.is_empty() => {
                let Some(name) = crate::model::file::imports::last_segment(&call.func) else { return false };
                let predicate = ELEMENTWISE_PREDICATES.contains(&name);
                match (call.func.as_ref(), &*call.arguments.args) {
                    (Expr::Attribute(method), []) if predicate => is_x(&method.value),
                    (Expr::Attribute(method), []) if matches!(name, "bool" | "logical_not") => {
                        self.elementwise_of(&method.value, x, depth + 1)
                    }
                    (func, [argument]) if predicate => {
                        self.model.imports.qualified_name(func).is_some_and(|q| q.starts_with("torch.")) && is_x(argument)
                    }
                    _ => false,
                }
            }
            Expr::Name(name) => {
                let bindings = self.flow.bindings(name.id.as_str());
                !bindings.is_empty() && bindings.iter().all(|value| self.elementwise_of(value, x, depth + 1))
            }
            _ => false,
        }
    }
}

/// Tests of each element: their result has the shape of their argument.
const ELEMENTWISE_PREDICATES: &[&str] = &["isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit"];

/// An expression a method can be called on without parentheses.
fn is_primary(expr: &Expr) -> bool {
    matches!(expr, Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_) | Expr::Subscript(_))
}

fn has_comment(model: &FileModel, range: TextRange) -> bool {
    model.source.parsed.tokens().in_range(range).iter().any(|token| token.kind() == TokenKind::Comment)
}

impl<'a> ShapeFinder<'_, 'a> {
    /// The mask of a read through one (`x[mask]`, `x[:, mask]`).
    fn mask_of(&self, expr: &'a Expr) -> Option<&'a Expr> {
        let Expr::Subscript(subscript) = expr else { return None };
        match subscript.slice.as_ref() {
            Expr::Tuple(tuple) => tuple.elts.iter().find(|index| self.tensors.is_mask(index)),
            index => self.tensors.is_mask(index).then_some(index),
        }
    }

    /// `x[mask]`, `x[:, mask]`: a read with a boolean tensor index (a store `x[mask] = v` is TCF105's).
    fn is_mask_read(&self, subscript: &ast::ExprSubscript) -> bool {
        subscript.ctx == ExprContext::Load && self.indexes_by_mask(subscript)
    }

    /// `x[mask]`, `x[:, mask]`: a tensor indexed by a boolean mask, read or written.
    fn indexes_by_mask(&self, subscript: &ast::ExprSubscript) -> bool {
        if !self.tensors.is_tensor(&subscript.value) {
            return false;
        }
        match subscript.slice.as_ref() {
            Expr::Tuple(tuple) => tuple.elts.iter().any(|index| self.tensors.is_mask(index)),
            index => self.tensors.is_mask(index),
        }
    }

    /// `t.nonzero()`, `torch.unique(t)`, `torch.where(c)` (one argument), `t.masked_select(m)`.
    fn sizes_from_values(&self, call: &ast::ExprCall) -> bool {
        let qualified = self.imports.qualified_name(&call.func);
        if let Some(name) = qualified.as_deref().and_then(|q| q.strip_prefix("torch.")) {
            let one_argument = call.arguments.args.len() == 1 && call.arguments.keywords.is_empty();
            return SIZE_FROM_VALUES.contains(&name) || (name == "where" && one_argument);
        }
        match call.func.as_ref() {
            Expr::Attribute(method) => {
                SIZE_FROM_VALUES.contains(&method.attr.id.as_str()) && self.tensors.is_tensor(&method.value)
            }
            _ => false,
        }
    }
}

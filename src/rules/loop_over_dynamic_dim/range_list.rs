//! A list built from `range` of an input's size: `list(range(n))`, `tuple(range(n))`,
//! `torch.tensor(list(range(n))[::-1])` (cpmant's left-padding mask). Python makes one element per
//! index, so Dynamo needs the size as a number and makes it a constant: like a loop over it, every
//! new size recompiles (measured with torch 2.15: 5 graphs for 5 lengths, `torch.arange` 2).
//! A tensor built so is `torch.arange` of the same arguments, which keeps the size symbolic.

use ruff_python_ast::token::parenthesized_range;
use ruff_python_ast::{AnyNodeRef, Expr, ExprCall, ExprRef, ExprSubscript};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::fix::{Edit, Fix, Safety};
use crate::model::file::FileModel;

/// A call that lists a `range(...)`, and how a fix could build the same tensor.
pub(super) struct RangeList<'a> {
    /// The `range(...)` call.
    pub(super) range: &'a ExprCall,
    /// `list` or `tuple` around it, if one is.
    listing: Option<&'a str>,
    /// `torch.tensor(...)` / `torch.as_tensor(...)` around it: the call the fix replaces.
    tensor: Option<&'a ExprCall>,
    /// The list is reversed first (`list(range(n))[::-1]`).
    reversed: bool,
}

/// The list of a range that `call` builds, if it builds one: `list(range(…))`, `tuple(range(…))`,
/// or a tensor made from `range(…)` or from such a list (reversed or not).
pub(super) fn range_list<'a>(model: &FileModel, call: &'a ExprCall) -> Option<RangeList<'a>> {
    let [data] = &call.arguments.args[..] else { return None };
    if is_tensor_constructor(model, call) {
        let (inner, reversed) = match data {
            Expr::Subscript(subscript) if is_reversal(subscript) => (subscript.value.as_ref(), true),
            other => (other, false),
        };
        let (range, listing) = match inner {
            Expr::Call(inner) if is_named(inner, "range") => (inner, None),
            Expr::Call(inner) => {
                let list = range_list(model, inner).filter(|list| list.tensor.is_none())?;
                (list.range, list.listing)
            }
            _ => return None,
        };
        return Some(RangeList { range, listing, tensor: Some(call), reversed });
    }
    let Expr::Name(func) = call.func.as_ref() else { return None };
    let listing = ["list", "tuple"].into_iter().find(|name| func.id.as_str() == *name);
    match data {
        Expr::Call(range) if listing.is_some() && call.arguments.keywords.is_empty() && is_named(range, "range") => {
            Some(RangeList { range, listing, tensor: None, reversed: false })
        }
        _ => None,
    }
}

impl RangeList<'_> {
    /// `torch.arange` over the range's own arguments, with the tensor call's keywords: the same
    /// values, the size kept symbolic. Safe only with a `dtype=` other than `None`: without one,
    /// an empty range gives `torch.tensor([])`'s float32 where `torch.arange` gives int64.
    pub(super) fn fix(&self, model: &FileModel) -> Option<Fix> {
        let tensor = self.tensor?;
        let text = &model.source.text;
        // `torch.arange` takes these of `torch.tensor`'s keywords (not `pin_memory`, not `**kw`).
        let keywords_taken = tensor.arguments.keywords.iter().all(|keyword| {
            keyword.arg.as_ref().is_some_and(|name| ["dtype", "device", "requires_grad"].contains(&name.as_str()))
        });
        let dtype = tensor.arguments.find_keyword("dtype").map(|keyword| &keyword.value);
        // `torch.arange` has no kernel for these: the fix would raise where the list did not.
        let no_arange = dtype.is_some_and(|dtype| {
            let Expr::Attribute(dtype) = dtype else { return false };
            let name = dtype.attr.id.as_str();
            name == "bool" || name.starts_with("complex") || name.starts_with("cfloat") || name == "cdouble"
        });
        // `torch.tensor(…, requires_grad=True)` is a leaf whose `.grad` fills; `arange(…).flip(0)` is not.
        let flipped_leaf = self.reversed && tensor.arguments.find_keyword("requires_grad").is_some();
        let [data] = &tensor.arguments.args[..] else { return None };
        let [.., last_bound] = &self.range.arguments.args[..] else { return None };
        if !keywords_taken || no_arange || flipped_leaf || !self.range.arguments.keywords.is_empty() {
            return None;
        }
        let Expr::Attribute(constructor) = tensor.func.as_ref() else { return None };
        let torch = &text[constructor.value.range()];
        let tokens = model.source.parsed.tokens();
        let parenthesized = |expr: &Expr, call: &ExprCall| {
            parenthesized_range(ExprRef::from(expr), AnyNodeRef::from(&call.arguments), tokens).unwrap_or(expr.range())
        };
        // From the range's `(` to its last argument: a trailing comma would meet the keywords' comma.
        let opening = self.range.arguments.start() + TextSize::new(1);
        let bounds = &text[TextRange::new(opening, parenthesized(last_bound, self.range).end())];
        // Before and after the data and any parentheses around it: a comment there survives.
        let data = parenthesized(data, tensor);
        let before = &text[TextRange::new(tensor.arguments.start() + TextSize::new(1), data.start())];
        let keywords = &text[TextRange::new(data.end(), tensor.end())];
        let flip = if self.reversed { ".flip(0)" } else { "" };
        let replacement = format!("{torch}.arange({before}{bounds}{keywords}{flip}");
        let title = format!("Build it with `{torch}.arange`, which keeps the size symbolic");
        let edits = vec![Edit::replace(tensor.range(), replacement)];
        let fix = match dtype {
            Some(dtype) if !dtype.is_none_literal_expr() => Fix::new(title, Safety::Safe, edits),
            _ => {
                let risk = "an empty range gives an int64 tensor where `torch.tensor([])` gives float32";
                Fix::new(format!("{title} (unsafe: {risk})"), Safety::Unsafe, edits)
            }
        };
        Some(fix)
    }

    /// The listing's shape, as the finding names it: `torch.tensor(list(range(…))[::-1])`.
    pub(super) fn describe(&self, text: &str) -> String {
        let mut shape = "range(…)".to_string();
        if let Some(listing) = self.listing {
            shape = format!("{listing}({shape})");
        }
        if self.reversed {
            shape.push_str("[::-1]");
        }
        if let Some(tensor) = self.tensor {
            shape = format!("{}({shape})", &text[tensor.func.range()]);
        }
        format!("`{shape}`")
    }
}

fn is_tensor_constructor(model: &FileModel, call: &ExprCall) -> bool {
    ["torch.tensor", "torch.as_tensor"].iter().any(|name| model.imports.refers_to(&call.func, name))
}

/// `[::-1]`.
fn is_reversal(subscript: &ExprSubscript) -> bool {
    let Expr::Slice(slice) = subscript.slice.as_ref() else { return false };
    let minus_one = matches!(slice.step.as_deref(), Some(Expr::UnaryOp(op)) if op.op.is_u_sub()
        && matches!(op.operand.as_ref(), Expr::NumberLiteral(n) if n.value.as_int().and_then(|i| i.as_u8()) == Some(1)));
    slice.lower.is_none() && slice.upper.is_none() && minus_one
}

fn is_named(call: &ExprCall, name: &str) -> bool {
    matches!(call.func.as_ref(), Expr::Name(func) if func.id.as_str() == name)
}

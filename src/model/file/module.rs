//! Facts about `nn.Module` classes read from names alone: `self`, the module classes of torch and
//! of well-known libraries, and the methods users compile. What a file's own classes hold
//! (`__init__`, assignments to `self`) its model answers (`file`).

use ruff_python_ast::{Expr, Stmt};

use crate::model::file::imports::unqualified;

/// The name `self`: the module a method runs on.
pub fn is_self(expr: &Expr) -> bool {
    matches!(expr, Expr::Name(name) if name.id.as_str() == "self")
}

/// A string on a line of its own: the docstring when it opens a body, which does nothing.
pub fn is_docstring(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::Expr(expr) if expr.value.is_string_literal_expr())
}

/// The `self.<attr>` names an assignment target binds (through tuples and lists).
pub fn self_attributes(target: &Expr) -> Vec<String> {
    match target {
        Expr::Attribute(attr) if is_self(&attr.value) => {
            vec![attr.attr.id.to_string()]
        }
        Expr::Tuple(tuple) => tuple.elts.iter().flat_map(self_attributes).collect(),
        Expr::List(list) => list.elts.iter().flat_map(self_attributes).collect(),
        _ => Vec::new(),
    }
}

/// `torch.nn.Module` and the module classes of `torch.nn` (`nn.Linear`, `nn.Sequential`...),
/// also when `nn` could not be resolved to torch.
pub fn is_torch_module_base(base: &str) -> bool {
    let last = unqualified(base);
    let is_class = last.starts_with(|c: char| c.is_ascii_uppercase());
    let from_torch_nn = base.starts_with("torch.nn.") || base.starts_with("nn.");
    is_class && (from_torch_nn || WELL_KNOWN_MODULE_BASES.iter().any(|known| last.ends_with(known)))
}

/// Base classes of other libraries that are `nn.Module`s: transformers' `PreTrainedModel` (and
/// its per-model `BertPreTrainedModel`...), Lightning's `LightningModule`, diffusers' `ModelMixin`.
const WELL_KNOWN_MODULE_BASES: [&str; 3] = ["PreTrainedModel", "LightningModule", "ModelMixin"];

/// The methods of a module that users compile: `forward`, and timm's public entry points that
/// run the same blocks (`model.forward_features = torch.compile(model.forward_features)`, feature
/// extraction through `forward_intermediates`).
pub fn is_entry_point(name: &str) -> bool {
    matches!(name, "forward" | "forward_features" | "forward_head" | "forward_intermediates")
}

//! Facts about `nn.Module` classes: which classes are modules (torch's, well-known libraries',
//! the project's), and what fixes rely on: a module's `__init__`, and where each attribute of
//! `self` is assigned.

use ruff_python_ast::{Expr, Stmt};

use crate::model::file::{FileModel, FunctionNode, SelfAssignment};
use crate::model::imports::unqualified;

/// The name `self`: the module a method runs on.
pub fn is_self(expr: &Expr) -> bool {
    matches!(expr, Expr::Name(name) if name.id.as_str() == "self")
}

pub fn init_method(model: &FileModel, class: usize) -> Option<usize> {
    model.method(class, "__init__")
}

/// The statements of a method's own body (for `__init__`: where new lines can go).
pub fn method_body<'a>(model: &FileModel<'a>, method: usize) -> &'a [Stmt] {
    match model.function(method).node {
        FunctionNode::Def(def) => &def.body,
        FunctionNode::Lambda(_) => &[],
    }
}

/// Every assignment to an attribute of `self` in the class's methods, in source order (collected
/// once, when the file model is built (`collect`): the index and many rules ask, class by class).
pub fn self_assignments<'m, 'a>(model: &'m FileModel<'a>, class: usize) -> &'m [SelfAssignment<'a>] {
    &model.self_assignments[class]
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

/// Whether `func` names an `nn.Module` class: one of torch.nn's, one of the file's own, or a
/// project class imported from another file.
pub fn is_module_class(model: &FileModel, func: &Expr) -> bool {
    if model.imports.qualified_name(func).is_some_and(|qualified| is_torch_module_base(&qualified)) {
        return true;
    }
    match func {
        Expr::Name(name) => model.is_project_module_class(name.id.as_str()),
        _ => false,
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

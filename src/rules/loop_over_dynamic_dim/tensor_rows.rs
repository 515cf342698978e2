//! A tensor taken apart along its first dimension: `list(t)`, `tuple(t)`, `t.unbind()`,
//! `torch.unbind(t)`, `for row in t`. Python gets one tensor per row, so Dynamo needs the length of
//! that dimension as a number and makes it a constant again (a `symbolic_shape_specialization`):
//! every new length recompiles. Measured with torch 2.15 (a linear layer, then the rows
//! concatenated back, batch 2, 3, 4, 5): 4 graphs for each of these forms, 2 for the same code
//! without them.
//!
//! Only a tensor whose first dimension is an input's: a parameter annotated as a tensor, or a name
//! whose binding reaching the use is one tensor computed from the inputs (a submodule's result
//! counts when its `forward` returns only tensors: many return tuples or output classes). Not the module's own tensors
//! (`self.weight`), not a tensor just rearranged (`qkv.permute(2, 0, 3, 1, 4)`, `stack`,
//! `reshape`, a selection `x[0]`: its first dimension may be a count the model fixes), and not
//! rows unpacked into names (`q, k, v = qkv.unbind(0)`: the unpacking needs that count anyway).

use ruff_python_ast::{Expr, ExprCall, StmtFunctionDef};
use ruff_text_size::{Ranged, TextRange};

use crate::model::file::{FunctionNode, self_assignments};
use crate::model::file::module::is_self;
use crate::model::flow::calls::returned_values;
use crate::model::flow::reaching_binding::reaching_value;
use crate::model::flow::submodules;
use crate::model::tensors::tensor::{Tensors, is_tensor_annotation};
use crate::model::tensors::torch_calls::torch_function_returns_tensor;
use crate::rules::check::Function;

/// Tensor methods and torch functions whose result's first dimension need not be the first
/// dimension of the input.
const REARRANGING: &[&str] = &[
    "permute", "transpose", "reshape", "view", "movedim", "moveaxis", "swapaxes", "swapdims", "unflatten", "t",
    "stack", "unsqueeze", "flatten", "expand", "repeat", "chunk", "split", "unbind", "rearrange",
];

/// The tensor whose rows `call` lists: `list(t)`, `tuple(t)`, `t.unbind()`, `t.unbind(0)`,
/// `torch.unbind(t)`, `torch.unbind(t, 0)`.
pub(super) fn listed_rows<'a>(function: &Function<'_, 'a>, call: &'a ExprCall) -> Option<&'a Expr> {
    let model = function.model();
    let first_dim = |dim: Option<&Expr>| match dim {
        None => true,
        Some(Expr::NumberLiteral(number)) => number.value.as_int().and_then(|n| n.as_u8()) == Some(0),
        Some(_) => false,
    };
    let args = &call.arguments.args[..];
    let tensor = match call.func.as_ref() {
        Expr::Name(func) if matches!(func.id.as_str(), "list" | "tuple") && !function.tensors().is_local(func.id.as_str()) => {
            match args {
                [tensor] if call.arguments.keywords.is_empty() => tensor,
                _ => return None,
            }
        }
        Expr::Attribute(method) if method.attr.id.as_str() == "unbind" && model.imports.refers_to(&call.func, "torch.unbind") => {
            match args {
                [tensor] | [tensor, _] if call.arguments.keywords.is_empty() && first_dim(args.get(1)) => tensor,
                _ => return None,
            }
        }
        Expr::Attribute(method) if method.attr.id.as_str() == "unbind" => {
            if !call.arguments.keywords.is_empty() || args.len() > 1 || !first_dim(args.first()) {
                return None;
            }
            &method.value
        }
        _ => return None,
    };
    varies_in_first_dim(function, tensor, call.range()).then_some(tensor)
}

/// Whether `expr`, read at `at`, is a tensor whose first dimension is an input's (see the module):
/// a parameter annotated as a tensor, or a name whose binding reaching the use is a tensor that
/// keeps the first dimension of what it is computed from.
pub(super) fn varies_in_first_dim(function: &Function, expr: &Expr, at: TextRange) -> bool {
    let Expr::Name(name) = expr else { return false };
    let FunctionNode::Def(def) = function.model().function(function.id).node else { return false };
    let name = name.id.as_str();
    match reaching_value(def, name, at) {
        Some(value) => single_tensor_keeping_rows(function, value),
        None => annotated_tensor(def, name) && !assigned(def, name),
    }
}

/// Whether `value` is one tensor (not a tuple of them, which a submodule may return) whose first
/// dimension is that of its inputs: a tensor method or a torch function that does not rearrange
/// dimensions, or a submodule whose `forward` (a class of the file) returns only tensors. Not the
/// module's own tensors, a selection, or a factory of literal sizes.
fn single_tensor_keeping_rows(function: &Function, value: &Expr) -> bool {
    let model = function.model();
    let tensors = function.tensors();
    match value {
        Expr::Call(call) => {
            let literal_sizes = call.arguments.args.iter().all(|arg| matches!(arg, Expr::NumberLiteral(_) | Expr::Tuple(_)));
            // `torch.as_tensor(spatial_shapes)` of a Python list: its rows are the list's
            // entries, a count the code fixes, not an input's first dimension.
            let from_python_data = ["torch.tensor", "torch.as_tensor", "torch.asarray"]
                .iter()
                .any(|name| model.imports.refers_to(&call.func, name));
            if literal_sizes || from_python_data {
                return false;
            }
            match call.func.as_ref() {
                // `self.proj(x)`: a submodule whose forward returns tensors.
                Expr::Attribute(method) if is_self(&method.value) => {
                    submodule_returns_tensor(function, method.attr.id.as_str())
                }
                // `x.float()`, `torch.cat(...)`, `F.gelu(x)`.
                Expr::Attribute(method) => {
                    let name = method.attr.id.as_str();
                    let torch_function = model.imports.qualified_name(&call.func).as_deref().and_then(torch_function_returns_tensor);
                    let tensor_method = tensors.is_tensor(&method.value) && !tensors.is_tensor_attribute(&method.value);
                    !REARRANGING.contains(&name) && (torch_function == Some(true) || (torch_function.is_none() && tensor_method))
                }
                Expr::Name(_) => {
                    let qualified = model.imports.qualified_name(&call.func);
                    let name = qualified.as_deref().and_then(|q| q.rsplit('.').next()).unwrap_or_default();
                    !REARRANGING.contains(&name) && qualified.as_deref().and_then(torch_function_returns_tensor) == Some(true)
                }
                _ => false,
            }
        }
        // `feats * scale`: arithmetic broadcasts onto the tensor's rows.
        Expr::BinOp(op) => single_tensor_keeping_rows(function, &op.left) || single_tensor_keeping_rows(function, &op.right),
        _ => false,
    }
}

/// torch's layers that return one tensor with the rows of their input.
const ROW_KEEPING_LAYERS: &[&str] = &[
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "LayerNorm", "GroupNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Embedding", "Dropout", "GELU",
    "ReLU", "SiLU", "Tanh", "Sigmoid", "Identity",
];

/// Whether `self.<attr>` holds one of torch's row-keeping layers wherever the class assigns it, or
/// modules of the file whose `forward`s each return a tensor on every path.
fn submodule_returns_tensor(function: &Function, attr: &str) -> bool {
    let model = function.model();
    let Some(class) = model.function(function.id).class else { return false };
    let assigned: Vec<&Expr> =
        self_assignments(model, class).iter().filter(|a| a.attr == attr).filter_map(|a| a.value()).collect();
    let torch_layer = |value: &&Expr| {
        let Expr::Call(call) = value else { return false };
        let qualified = model.imports.qualified_name(&call.func);
        qualified.as_deref().and_then(|q| q.strip_prefix("torch.nn.")).is_some_and(|layer| ROW_KEEPING_LAYERS.contains(&layer))
    };
    if !assigned.is_empty() && assigned.iter().all(torch_layer) {
        return true;
    }
    let forwards = submodules::forwards(model, class, attr);
    !forwards.is_empty()
        && forwards.iter().all(|&forward| {
            let returned = returned_values(model, forward);
            let tensors = Tensors::of(model, forward);
            !returned.is_empty()
                && returned.iter().all(|value| value.is_some_and(|value| !value.is_tuple_expr() && tensors.is_tensor(value)))
        })
}

/// A parameter annotated as a tensor (`x: torch.Tensor`, `Optional[torch.FloatTensor]`).
fn annotated_tensor(def: &StmtFunctionDef, name: &str) -> bool {
    def.parameters.iter_non_variadic_params().skip(1).any(|p| {
        p.parameter.name.id.as_str() == name && p.parameter.annotation.as_deref().is_some_and(is_tensor_annotation)
    })
}

/// Whether the function binds `name` anywhere (a parameter it also reassigns: which value reaches a
/// use is then not known here).
fn assigned(def: &StmtFunctionDef, name: &str) -> bool {
    crate::model::flow::reaching_binding::names_bound(&def.body).contains(name)
}

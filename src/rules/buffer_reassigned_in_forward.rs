//! TCF113 buffer-reassigned-in-forward: compiled code that stores back on `self` a buffer the
//! class created with `nn.Buffer(...)`, passed through a method that returns the tensor itself
//! when there is nothing to do (`self.table = self.table.to(device=x.device, dtype=x.dtype)`,
//! `.type(...)`, `.float()`, `.contiguous()`, `.cpu()`). `nn.Buffer` marks the tensor itself
//! (its `persistent` and `_is_buffer` attributes), so `Module.__setattr__` takes the returned
//! tensor for a new `nn.Buffer` and reads its `persistent`: Dynamo cannot ("Unsupported
//! python_type() call ... GetAttrVariable(TensorVariable(), persistent)") and breaks the graph.
//! Measured under torch 2.15 (README): one break per compile for `.to`, `.type`, `.float`,
//! `.contiguous`, `.cpu`; none for the same buffer made with `register_buffer`, nor for a method
//! that returns a new tensor (`.detach()`, arithmetic), nor for `self.table = self.table`.
//! transformers' CTRL does it in `CTRLModel.forward`; there the break sits inside the `try` of
//! the model's output-capturing wrapper, which Dynamo cannot resume, so it gives up the wrapper
//! frame ("Failed to handle graph break gracefully").
//!
//! No fix: registering the buffer with `register_buffer` in `__init__` (a plain tensor) removes
//! the break, but is a change to `__init__` the user should make knowingly.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::module::is_self;
use crate::model::file::{FileModel, self_assignments};
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF113",
    name: "buffer-reassigned-in-forward",
    summary: "register buffers that forward reassigns with register_buffer, not nn.Buffer",
    explanation: include_str!("../../codemods/buffer-reassigned-in-forward/README.md"),
    hazard: "Compiled code stores back on `self` an `nn.Buffer` passed through `.to()` or a like method.",
    why: "The method returns the buffer itself when nothing changes, and assigning that marked tensor makes \
          `Module.__setattr__` read its `persistent` attribute, which Dynamo cannot trace: the graph breaks.",
    category: Category::GraphBreak,
    fixes: &[],
    mentions: &["Buffer"],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// Tensor methods measured to return the buffer itself when it is already what they ask for
/// (dtype, device, layout), so that the assignment hands `nn.Module` the marked tensor.
const RETURNS_ITSELF: &[&str] = &["to", "type", "float", "contiguous", "cpu"];

fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    let model = function.model();
    let class = model.function(function.id).class?;
    let buffers = made_with_nn_buffer(model, class);
    (!buffers.is_empty()).then(|| {
        Box::new(Reassigned { function, buffers, found: Vec::new(), converting: Vec::new() }) as Box<dyn FunctionHooks<'a> + 'c>
    })
}

/// The attributes the class assigns `nn.Buffer(...)` to, in any of its methods.
fn made_with_nn_buffer(model: &FileModel, class: usize) -> HashSet<String> {
    self_assignments(model, class)
        .iter()
        .filter(|assignment| match assignment.stmt {
            Stmt::Assign(assign) => is_nn_buffer(model, &assign.value),
            Stmt::AnnAssign(assign) => assign.value.as_deref().is_some_and(|value| is_nn_buffer(model, value)),
            _ => false,
        })
        .map(|assignment| assignment.attr.clone())
        .collect()
}

fn is_nn_buffer(model: &FileModel, value: &Expr) -> bool {
    let Expr::Call(call) = value else { return false };
    model
        .imports
        .qualified_name(&call.func)
        .is_some_and(|q| q == "torch.nn.Buffer" || q == "torch.nn.parameter.Buffer")
}

struct Reassigned<'c, 'a> {
    function: &'c Function<'c, 'a>,
    buffers: HashSet<String>,
    found: Vec<(TextRange, String, String, Site)>,
    /// `if self.table.device != x.device:` bodies, with the buffers whose device or dtype their
    /// test compares: there `.to()` converts, and returns a new, unmarked tensor.
    converting: Vec<(TextRange, Vec<String>)>,
}

impl<'a> FunctionHooks<'a> for Reassigned<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, site: Site) {
        if let Stmt::If(branch) = stmt
            && let (Some(first), Some(last)) = (branch.body.first(), branch.body.last())
        {
            let tested = device_or_dtype_read(&branch.test);
            if !tested.is_empty() {
                self.converting.push((TextRange::new(first.start(), last.end()), tested));
            }
        }
        let Stmt::Assign(assign) = stmt else { return };
        let [Expr::Attribute(target)] = assign.targets.as_slice() else { return };
        if !is_self(&target.value) || !self.buffers.contains(target.attr.id.as_str()) {
            return;
        }
        // self.table = self.table.to(...)
        let Expr::Call(call) = assign.value.as_ref() else { return };
        let Expr::Attribute(method) = call.func.as_ref() else { return };
        let Expr::Attribute(read) = method.value.as_ref() else { return };
        let attr = target.attr.id.as_str();
        let converts = self.converting.iter().any(|(body, tested)| {
            body.contains_range(stmt.range()) && tested.iter().any(|name| name == attr)
        });
        if is_self(&read.value) && read.attr.id == target.attr.id && RETURNS_ITSELF.contains(&method.attr.id.as_str()) && !converts {
            self.found.push((stmt.range(), target.attr.id.to_string(), method.attr.id.to_string(), site));
        }
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        for (range, attr, method, site) in self.found {
            let message = format!(
                "`self.{attr} = self.{attr}.{method}(...)` in {} stores back a buffer made with `nn.Buffer`: \
                 `.{method}()` returns the buffer itself when nothing changes, and `nn.Module` then reads its \
                 `persistent` attribute, which Dynamo cannot trace: the graph breaks",
                function.describe()
            );
            let diagnostic = Diagnostic::new(&RULE, range, message).with_severity(Severity::High).without_fix(
                "register it in `__init__` with `self.register_buffer(...)` (a plain tensor: no break), \
                 or keep the converted tensor in a local",
            );
            diagnostics.push(function.graph_break(diagnostic, site));
        }
    }
}

/// The buffers whose `.device` or `.dtype` an expression reads (`self.table.device != x.device`).
fn device_or_dtype_read(test: &Expr) -> Vec<String> {
    struct Reads(Vec<String>);
    impl<'a> Visitor<'a> for Reads {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Attribute(property) = expr
                && matches!(property.attr.id.as_str(), "device" | "dtype")
                && let Expr::Attribute(buffer) = property.value.as_ref()
                && is_self(&buffer.value)
            {
                self.0.push(buffer.attr.id.to_string());
            }
            walk_expr(self, expr);
        }
    }
    let mut reads = Reads(Vec::new());
    reads.visit_expr(test);
    reads.0
}

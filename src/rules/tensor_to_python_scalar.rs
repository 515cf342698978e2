//! TCF103 tensor-to-python-scalar: `t.item()`, `t.tolist()`, `int(t)`, `float(t)`, `bool(t)` on a
//! tensor in compiled code turn tensor data into a Python value, which Dynamo cannot trace with its
//! default config (GB0124 for `.item()` and the builtins, GB0033 / GB0109 for `.tolist()`). Where
//! the number only feeds tensor arithmetic (`x * s.item()`), the fix keeps it a tensor. Where it
//! goes only to code that traces once Dynamo captures it as an unbacked symbol (sizes, slices,
//! factory arguments: `model::unbacked`), it is removed by one process-wide setting,
//! `capture_scalar_outputs`, written once where the project compiles (`fix::dynamo_config`); a
//! project that already sets it is not reported for those.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::{self as ast, Expr, Operator};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::Diagnostic;
use crate::fix::dynamo_config::ProjectSetting;
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::configured::Capture;
use crate::model::compiled::dynamo_config::sets;
use crate::model::file::{FileModel, FunctionNode};
use crate::model::flow::reaching_binding::last_binding;
use crate::model::tensors::comprehensions;
use crate::model::tensors::tensor::Tensors;
use crate::model::tensors::torch_calls::FULL_REDUCTIONS;
use crate::model::tensors::capture_crashes::crash_with;
use crate::model::tensors::unbacked::{Flow, StillBreaks, Value};
use crate::diagnostic::snippet;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF103",
    name: "tensor-to-python-scalar",
    summary: "keep tensor values as tensors instead of Python numbers",
    explanation: include_str!("../../codemods/tensor-to-python-scalar/README.md"),
    hazard: "A tensor turned into a Python number or list (`.item()`, `.tolist()`, `int(t)`) in compiled code breaks the graph.",
    why: "Dynamo must run the tensor program up to that point to learn the value, so it ends the graph there \
              and syncs with the device.",
    category: Category::GraphBreak,
    fixes: &[Safety::Safe, Safety::Unsafe],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// The tensor-to-Python conversions (`.item()`, `int(t)`...) in the function's compiled code.
fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    Some(Box::new(ScalarFinder {
        function,
        tensors: function.tensors(),
        found: Vec::new(),
        in_arithmetic: HashSet::default(),
    }))
}

struct Conversion<'a> {
    expr: &'a Expr,
    call: &'a ast::ExprCall,
    site: Site,
    fix: Option<Fix>,
    /// `torch._check_tensor_all(cond, ...)`: Dynamo reads the condition with `.item()`.
    tensor_check: bool,
}

struct ScalarFinder<'c, 'a> {
    function: &'c Function<'c, 'a>,
    tensors: &'c Tensors<'a, 'a>,
    found: Vec<Conversion<'a>>,
    /// `.item()` calls that are an operand of arithmetic with a tensor.
    in_arithmetic: HashSet<TextRange>,
}

impl<'a> FunctionHooks<'a> for ScalarFinder<'_, 'a> {
    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        match expr {
            Expr::BinOp(op) if is_arithmetic(op.op) => {
                for (operand, other) in [(&op.left, &op.right), (&op.right, &op.left)] {
                    if let Expr::Call(call) = operand.as_ref()
                        && self.tensors.is_tensor(other) {
                            self.in_arithmetic.insert(call.range());
                        }
                }
            }
            Expr::Call(call)
                if self.is_conversion(call) => {
                    let fix = self.in_arithmetic.contains(&call.range()).then(|| detach_fix(call)).flatten();
                    self.found.push(Conversion { expr, call, site, fix, tensor_check: false });
                }
            Expr::Call(call) if is_tensor_check(self.function.model(), call) => {
                self.found.push(Conversion { expr, call, site, fix: None, tensor_check: true });
            }
            // Runs only when called (`torch._check(cond, lambda: f"... {int(n)}")` calls it on failure).
            Expr::Lambda(_) => return false,
            _ => {}
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        if self.found.is_empty() {
            return;
        }
        let function = self.function;
        let model = function.model();
        let flow = Flow::of(model, function.id, self.tensors);
        let captured = model.captures.sets(Capture::ScalarOutputs) || sets(model, Capture::ScalarOutputs);
        let mut setting = Setting::new(model);
        for conversion in self.found {
            let still_breaks = if conversion.tensor_check {
                message_closure(model, self.tensors, conversion.call).map(|at| closure_still_breaks(model, at))
            } else {
                flow.still_breaks(conversion.expr, value_of(conversion.call)).map(|still| still_breaking(model, still))
            };
            if captured && still_breaks.is_none() {
                // The project turns `capture_scalar_outputs` on: Dynamo traces this one.
                continue;
            }
            let text = &model.source.text[conversion.call.range()];
            let message = if conversion.tensor_check {
                format!(
                    "`{text}` in {} reads its tensor condition as a Python bool (`.item()`), which breaks the graph",
                    function.describe()
                )
            } else {
                format!("`{text}` in {} breaks the graph", function.describe())
            };
            let diagnostic = Diagnostic::new(&RULE, conversion.call.range(), message);
            let diagnostic = function.graph_break(diagnostic, conversion.site);
            diagnostics.push(match (conversion.fix, still_breaks) {
                (Some(fix), _) => diagnostic.with_fix(fix),
                (None, Some(still_breaks)) => diagnostic.without_fix(still_breaks),
                (None, None) => match setting.removal() {
                    Ok(setting) => diagnostic.removed_by(setting, &model.source.path),
                    Err(reason) => diagnostic.without_fix(reason),
                },
            });
        }
    }
}

/// A Python number, or a list of them.
fn value_of(call: &ast::ExprCall) -> Value {
    match call.func.as_ref() {
        Expr::Attribute(method) if method.attr.id.as_str() == "tolist" => Value::List,
        _ => Value::Number,
    }
}

/// Why there is no fix for a conversion that Dynamo still breaks on with the option on.
/// (With the option on in the file or not: either way it is what still breaks.)
fn still_breaking(model: &FileModel, still_breaks: StillBreaks) -> String {
    format!("{KEEP_A_TENSOR}: {}", still_breaks.reason(&model.source.text))
}

/// `torch._check_tensor_all(cond, message)` and `torch._check_tensor_all_with(error, cond,
/// message)`: torch's checks of a boolean tensor. Their condition must be a tensor (torch raises a
/// `TypeError` otherwise), and Dynamo traces them as `torch._check(cond._is_all_true().item())`
/// (torch 2.15, `variables/torch.py`): with the default config the `.item()` breaks the graph
/// (GB0124), whatever the message; with `capture_scalar_outputs` it traces.
fn is_tensor_check(model: &FileModel, call: &ast::ExprCall) -> bool {
    let imports = &model.imports;
    imports.refers_to(&call.func, "torch._check_tensor_all") || imports.refers_to(&call.func, "torch._check_tensor_all_with")
}

/// The message of a tensor check, when it is a lambda that reads a tensor of the function
/// (`lambda: f"{n} tokens"` with `n` a tensor): Dynamo cannot turn such a closure into a constant
/// message and breaks there even with `capture_scalar_outputs` (GB9158, "Can't convert
/// torch._check*() message closure", measured with torch 2.15).
fn message_closure<'a>(model: &FileModel, tensors: &Tensors<'a, 'a>, call: &'a ast::ExprCall) -> Option<TextRange> {
    let position = if model.imports.refers_to(&call.func, "torch._check_tensor_all_with") { 2 } else { 1 };
    let message = call.arguments.find_argument_value("message", position)?;
    let Expr::Lambda(lambda) = message else { return None };
    let mut names = Vec::new();
    collect_names(&lambda.body, &mut names);
    names.into_iter().any(|name| tensors.is_tensor(name)).then(|| message.range())
}

/// The names an expression reads.
fn collect_names<'a>(expr: &'a Expr, names: &mut Vec<&'a Expr>) {
    use ruff_python_ast::visitor::{Visitor, walk_expr};
    struct Names<'n, 'a>(&'n mut Vec<&'a Expr>);
    impl<'a> Visitor<'a> for Names<'_, 'a> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if matches!(expr, Expr::Name(_)) {
                self.0.push(expr);
            }
            walk_expr(self, expr);
        }
    }
    Names(names).visit_expr(expr);
}

/// Why there is no fix for a tensor check whose message closes over a tensor.
fn closure_still_breaks(model: &FileModel, at: TextRange) -> String {
    let at = snippet(&model.source.text[at]);
    format!("build the message from Python values only: Dynamo still breaks at `{at}` (a message closure over a tensor)")
}

/// What to do where no fix applies.
const KEEP_A_TENSOR: &str = "keep the value a tensor, or read it outside the compiled code";

/// Where Dynamo would trace the value with `capture_scalar_outputs` on: the setting that removes
/// it, written once for the project (`fix::dynamo_config`), or why it is not offered. The same for
/// every conversion of the file; worked out on the first question.
struct Setting<'m, 'a> {
    model: &'m FileModel<'a>,
    removal: Option<Result<ProjectSetting, String>>,
}

impl<'m, 'a> Setting<'m, 'a> {
    fn new(model: &'m FileModel<'a>) -> Self {
        Self { model, removal: None }
    }

    fn removal(&mut self) -> Result<ProjectSetting, String> {
        let model = self.model;
        self.removal.get_or_insert_with(|| removal(model)).clone()
    }
}

fn removal(model: &FileModel) -> Result<ProjectSetting, String> {
    if let Some(crash) = crash_with(model, Capture::ScalarOutputs) {
        let (line, _) = model.source.line_column(crash.start());
        let at = snippet(&model.source.text[crash]);
        return Err(format!(
            "{KEEP_A_TENSOR}: `capture_scalar_outputs` would make `{at}` (line {line}) fail to compile"
        ));
    }
    Ok(ProjectSetting { capture: Capture::ScalarOutputs, written_in: model.captures.compiled_in.clone() })
}

impl ScalarFinder<'_, '_> {
    /// `t.item()`, `t.tolist()`, `int(t)`, `float(t)`, `bool(t)` with `t` a tensor.
    fn is_conversion(&self, call: &ast::ExprCall) -> bool {
        if !call.arguments.keywords.is_empty() {
            return false;
        }
        match (call.func.as_ref(), call.arguments.args.as_ref()) {
            (Expr::Attribute(method), []) => {
                matches!(method.attr.id.as_str(), "item" | "tolist") && self.is_tensor_at(&method.value, call.range())
            }
            (Expr::Name(builtin), [argument]) => {
                let shadowed = self.tensors.is_local(builtin.id.as_str());
                !shadowed
                    && matches!(builtin.id.as_str(), "int" | "float" | "bool")
                    && self.is_tensor_at(argument, call.range())
            }
            _ => false,
        }
    }

    /// Whether `expr` holds a tensor at `at`: by the function's tensor names (unless a
    /// comprehension around `at` binds the name anew), or, for a name also bound to other values,
    /// by the binding that reaches `at` (`sizes = sizes.tolist()` after `sizes = gates.sum(0)`: the
    /// name ends a list, but it is a tensor where it is converted).
    fn is_tensor_at(&self, expr: &Expr, at: TextRange) -> bool {
        let FunctionNode::Def(def) = self.function.model().function(self.function.id).node else {
            return self.tensors.is_tensor(expr);
        };
        if self.tensors.is_tensor(expr) {
            // A comprehension's own name hides the function's (`[int(n) for n in widths]`).
            return match expr {
                Expr::Name(name) => {
                    let scope = comprehensions::around(&def.body, at, self.tensors);
                    !scope.binds(name.id.as_str()) || scope.is_tensor(expr, self.tensors)
                }
                _ => true,
            };
        }
        let Expr::Name(name) = expr else { return false };
        matches!(last_binding(def, name.id.as_str(), at), Some((value, _)) if self.tensors.is_tensor(value))
    }
}

fn is_arithmetic(op: Operator) -> bool {
    matches!(op, Operator::Add | Operator::Sub | Operator::Mult | Operator::Div | Operator::Pow)
}

/// `x * s.item()` -> `x * s.detach()`: the value stays a tensor (no graph break, no device sync)
/// and stays out of autograd, as `.item()` kept it. A receiver that is not certainly 0-d is
/// reshaped to 0-d so that a `(1, 1)` tensor does not broadcast into the result's shape.
fn detach_fix(call: &ast::ExprCall) -> Option<Fix> {
    let Expr::Attribute(method) = call.func.as_ref() else { return None };
    if method.attr.id.as_str() != "item" {
        return None;
    }
    let replacement = if is_zero_dim(&method.value) { "detach()" } else { "detach().reshape(())" };
    let range = TextRange::new(method.attr.start(), call.end());
    let title = format!(
        "Use `.{replacement}` instead of `.item()` (unsafe: the number stays a 0-d tensor on its device, \
         which can change the result's dtype in type promotion and fails if that device differs from the other operand's)"
    );
    Some(Fix::new(title, Safety::Unsafe, vec![Edit::replace(range, replacement)]))
}

/// `x.sum()`, `x.max()`, `loss.mean()`: a full reduction, 0-d.
fn is_zero_dim(expr: &Expr) -> bool {
    let Expr::Call(call) = expr else { return false };
    let Expr::Attribute(method) = call.func.as_ref() else { return false };
    call.arguments.is_empty() && FULL_REDUCTIONS.contains(&method.attr.id.as_str())
}

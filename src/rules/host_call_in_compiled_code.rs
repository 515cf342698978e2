//! TCF107 host-call-in-compiled-code: clock reads (`time.time()`, `time.perf_counter()`...),
//! `time.sleep()`, `datetime.now()`, `uuid.uuid4()` and the `np.random` calls Dynamo cannot trace
//! in the compiled region break the graph. Where the value goes decides what to do, so these get
//! no fix: the finding says what to do, and for a numpy draw that only decides LayerDrop, what
//! keeps LayerDrop under compile (layerdrop).
//! Python's `random` module, `os.getenv` / `os.environ` and `torch.cuda.synchronize()` are traced
//! (measured under torch 2.15) and not flagged. The TorchScript helpers Dynamo skips
//! (`torch.jit.isinstance`, `fork`, `wait`) break the graph the same way; `torch.jit.isinstance`
//! of a plain class is the builtin `isinstance` (safe fix).

mod layerdrop;

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use crate::diagnostic::Diagnostic;
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::FileModel;
use crate::model::file::imports::{Imports, dotted_name};
use crate::rules::bool_mask_index_put;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF107",
    name: "host-call-in-compiled-code",
    summary: "move clock reads, numpy random draws and TorchScript helpers out of compiled code",
    explanation: include_str!("../../codemods/host-call-in-compiled-code/README.md"),
    hazard: "A clock read, sleep, datetime, uuid, numpy random or `torch.jit` helper call in compiled code breaks \
             the graph.",
    why: "Dynamo runs the call in Python between two graphs on every call.",
    category: Category::GraphBreak,
    fixes: &[Safety::Safe, Safety::Unsafe],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// What kind of host call, and what to do instead.
#[derive(Clone, Copy)]
enum HostCall {
    Clock,
    Sleep,
    Datetime,
    Uuid,
    /// A draw torch's numpy layer can do, made without a size: a Python scalar comes out.
    NumpyScalar,
    /// A function torch's numpy layer does not implement (`permutation`, `beta`, `default_rng`).
    NumpyUnsupported,
    /// `torch.jit.isinstance`, which Dynamo marks as skipped.
    JitIsinstance,
    /// `torch.jit.fork` or `torch.jit.wait`, which Dynamo marks as skipped.
    JitFork,
}

impl HostCall {
    fn advice(self) -> &'static str {
        match self {
            HostCall::Clock => {
                "time the compiled call from outside it (or use torch.profiler / torch.cuda.Event), not from inside compiled code"
            }
            HostCall::Sleep => "sleep outside the compiled call",
            HostCall::Datetime => "read the date outside the compiled call and pass it in if it is needed",
            HostCall::Uuid => "make the id outside the compiled call",
            HostCall::NumpyScalar | HostCall::NumpyUnsupported => {
                "draw with torch's RNG (`torch.rand`, `torch.randint`, `torch.randperm`), or draw with numpy outside the compiled call"
            }
            HostCall::JitIsinstance => {
                "test a container type outside the compiled code, or with the builtin `isinstance` on the \
                 container and its items: Dynamo runs `torch.jit.isinstance` in Python"
            }
            HostCall::JitFork => "call the function directly: Dynamo runs `torch.jit.fork` and `wait` in Python",
        }
    }

    fn graph_break(self) -> &'static str {
        match self {
            HostCall::Clock => "GB9193",
            HostCall::Sleep | HostCall::Uuid => "GB0007",
            HostCall::Datetime => "GB0156",
            HostCall::NumpyScalar => "GB0033",
            HostCall::NumpyUnsupported => "GB0294",
            HostCall::JitIsinstance | HostCall::JitFork => "GB0007",
        }
    }
}

const CLOCKS: [&str; 8] = [
    "time.time",
    "time.time_ns",
    "time.perf_counter",
    "time.perf_counter_ns",
    "time.monotonic",
    "time.monotonic_ns",
    "time.process_time",
    "time.process_time_ns",
];

/// The clock, sleep, datetime, uuid and numpy random calls in the function's compiled code.
fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    Some(Box::new(HostCallFinder { function, found: Vec::new(), assignments: Vec::new() }))
}

struct HostCallFinder<'c, 'a> {
    function: &'c Function<'c, 'a>,
    found: Vec<(&'a ast::ExprCall, HostCall, Site)>,
    /// The `name = value` statements of the compiled code: a draw stored in a name may get a fix.
    assignments: Vec<&'a ast::StmtAssign>,
}

impl<'a> FunctionHooks<'a> for HostCallFinder<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
        if let Stmt::Assign(assignment) = stmt {
            self.assignments.push(assignment);
        }
    }

    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        let Expr::Call(call) = expr else { return true };
        let imports = &self.function.model().imports;
        if let Some(kind) = host_call(call, imports) {
            self.found.push((call, kind, site));
        } else if reads_traced_draw(call, imports) && !draw_reported(call, imports) {
            self.found.push((call, HostCall::NumpyScalar, site));
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        for &(call, kind, site) in &self.found {
            let text = &function.model().source.text;
            let shown = dotted_name(&call.func).unwrap_or_else(|| text[call.func.range()].to_string());
            let message = format!("`{shown}()` in {} breaks the graph ({})", function.describe(), kind.graph_break());
            let diagnostic = Diagnostic::new(&RULE, call.range(), message);
            let diagnostic = match builtin_isinstance_fix(function, call, kind) {
                Some(fix) => diagnostic.with_fix(fix),
                None => {
                    let advice = self.layerdrop_advice(call, kind).unwrap_or_else(|| kind.advice().to_string());
                    diagnostic.without_fix(advice)
                }
            };
            diagnostics.push(function.graph_break(diagnostic, site));
        }
    }
}

impl HostCallFinder<'_, '_> {
    /// What to do about a numpy scalar draw stored in a name that only LayerDrop tests read.
    fn layerdrop_advice(&self, call: &ast::ExprCall, kind: HostCall) -> Option<String> {
        if !matches!(kind, HostCall::NumpyScalar) {
            return None;
        }
        let assignment = self.assignments.iter().find(|assignment| assignment.value.range() == call.range())?;
        layerdrop::layerdrop_draw_advice(self.function.model(), self.function.id, assignment)
    }
}

fn host_call(call: &ast::ExprCall, imports: &Imports) -> Option<HostCall> {
    let name = imports.qualified_name(&call.func)?;
    if CLOCKS.contains(&name.as_str()) {
        return Some(HostCall::Clock);
    }
    match name.as_str() {
        "time.sleep" => return Some(HostCall::Sleep),
        "datetime.datetime.now" | "datetime.datetime.utcnow" | "datetime.datetime.today" | "datetime.date.today" => {
            return Some(HostCall::Datetime);
        }
        "uuid.uuid1" | "uuid.uuid4" => return Some(HostCall::Uuid),
        "torch.jit.isinstance" => return Some(HostCall::JitIsinstance),
        "torch.jit.fork" | "torch.jit.wait" => return Some(HostCall::JitFork),
        _ => {}
    }
    let function = name.strip_prefix("numpy.random.")?;
    if function.contains('.') || numpy_random_is_traced(function, call) {
        return None;
    }
    Some(if NUMPY_SCALAR_DRAWS.contains(&function) { HostCall::NumpyScalar } else { HostCall::NumpyUnsupported })
}

/// `np.random.rand(1).item()`: the draw is traced as a tensor, and reading its value breaks the
/// graph as a scalar draw does (GB0033, measured under torch 2.15).
fn reads_traced_draw(call: &ast::ExprCall, imports: &Imports) -> bool {
    let Expr::Attribute(method) = call.func.as_ref() else { return false };
    let Expr::Call(draw) = method.value.as_ref() else { return false };
    matches!(method.attr.id.as_str(), "item" | "tolist")
        && imports.qualified_name(&draw.func).is_some_and(|name| name.starts_with("numpy.random."))
}

/// Whether the draw read by `draw.item()` is a host call of its own (a scalar or unsupported
/// draw): reported there, once.
fn draw_reported(call: &ast::ExprCall, imports: &Imports) -> bool {
    matches!(call.func.as_ref(), Expr::Attribute(method)
        if matches!(method.value.as_ref(), Expr::Call(draw) if host_call(draw, imports).is_some()))
}

/// `torch.jit.isinstance(x, torch.Tensor)` -> `isinstance(x, torch.Tensor)`: the same test for a
/// plain class (a name or a dotted name), in eager mode and in TorchScript alike. Container types
/// (`dict[str, Tensor]`) are what `torch.jit.isinstance` is for: no fix there.
fn builtin_isinstance_fix(function: &Function, call: &ast::ExprCall, kind: HostCall) -> Option<Fix> {
    let model = function.model();
    let [_, class] = call.arguments.args.as_ref() else { return None };
    let plain_class = is_plain_class(model, class);
    let builtin_shadowed =
        function.tensors().is_local("isinstance") || module_binds(model.source.parsed.suite(), "isinstance");
    if !matches!(kind, HostCall::JitIsinstance) || !plain_class || builtin_shadowed {
        return None;
    }
    let edit = Edit::replace(call.func.range(), "isinstance");
    // Without the break, the code around it is one graph: a masked write there sends the training
    // frame to eager (TCF105), where before only its own graph fell back.
    Some(match bool_mask_index_put::traced_with(function.checker, function.id) {
        None => Fix::new("use the builtin `isinstance`", Safety::Safe, vec![edit]),
        Some(write) => Fix::new(
            format!(
                "use the builtin `isinstance` (unsafe: without the break, {write} is traced into one graph with the \
                 rest of the frame, and in training the whole frame falls back to eager (TCF105's hazard): apply \
                 TCF105's fix with it)"
            ),
            Safety::Unsafe,
            vec![edit],
        ),
    })
}

/// A class `isinstance` accepts as it is: a builtin type, one of torch's classes
/// (`torch.Tensor`), or a class the file defines. A name bound to a typing alias
/// (`Pair = Tuple[Tensor, Tensor]`) would make `isinstance` raise TypeError.
fn is_plain_class(model: &FileModel, class: &Expr) -> bool {
    const BUILTIN_TYPES: [&str; 9] = ["int", "float", "bool", "str", "bytes", "list", "tuple", "dict", "set"];
    let Some(qualified) = model.imports.qualified_name(class) else { return false };
    let last = qualified.rsplit('.').next().unwrap_or_default();
    match class {
        Expr::Name(name) if BUILTIN_TYPES.contains(&name.id.as_str()) => model.imports.get(name.id.as_str()).is_none(),
        _ if qualified.starts_with("torch.") => last.starts_with(char::is_uppercase),
        Expr::Name(name) => model.classes.iter().any(|c| c.qualname == name.id.as_str()),
        _ => false,
    }
}

/// Whether a module-level statement binds `name` (a def, an assignment, an import).
fn module_binds(suite: &[Stmt], name: &str) -> bool {
    suite.iter().any(|stmt| match stmt {
        Stmt::FunctionDef(def) => def.name.id.as_str() == name,
        Stmt::Assign(assign) => assign.targets.iter().any(|t| matches!(t, Expr::Name(n) if n.id.as_str() == name)),
        Stmt::ImportFrom(import) => import
            .names
            .iter()
            .any(|alias| alias.asname.as_ref().map_or(alias.name.id.as_str(), |a| a.id.as_str()) == name),
        _ => false,
    })
}

/// `np.random` functions torch's numpy layer implements; without a size they return a scalar
/// (measured: `rand()`, `randint(1, 5)`, `normal(0, 1)`, `uniform()`, `random()`, `choice(5)`,
/// and `choice(5, 3)` too).
const NUMPY_SCALAR_DRAWS: [&str; 10] =
    ["rand", "randn", "random", "random_sample", "sample", "ranf", "uniform", "normal", "randint", "choice"];

/// Dynamo traces some `np.random` draws through torch's numpy layer when they return an array:
/// `np.random.rand(4)`, `np.random.normal(0, 1, size=4)`, `np.random.seed(0)`. A draw without a
/// size returns a Python scalar (GB0033), and the functions torch does not implement break (GB0294).
fn numpy_random_is_traced(function: &str, call: &ast::ExprCall) -> bool {
    let positional = call.arguments.args.len();
    let sized = call.arguments.find_keyword("size").is_some();
    let starred = call.arguments.args.iter().any(Expr::is_starred_expr)
        || call.arguments.keywords.iter().any(|k| k.arg.is_none());
    if starred {
        // Unknown arity: the shape may well be there.
        return true;
    }
    match function {
        "seed" => true,
        "rand" | "randn" => positional >= 1,
        "random" | "random_sample" | "sample" | "ranf" => positional >= 1 || sized,
        "uniform" | "normal" | "randint" => positional >= 3 || sized,
        _ => false,
    }
}

//! TCF211 size-passed-to-math: one of an input's sizes handed to a function of Python's `math`
//! module that Dynamo can only evaluate on a number (`math.log(N)`, `math.copysign(1.0, n)`,
//! `math.gcd(H, W)`). Dynamo makes the size a constant to call it, so every new size compiles
//! another graph, with `dynamic=True` too, until the recompile limit sends the frame to eager.
//! Measured under torch 2.15 (README): 4 graphs for 4 sizes, against 2 for the functions Dynamo
//! keeps symbolic (`math.sqrt`, `math.floor`, `math.ceil`, `math.log2`, the trigonometric ones).
//!
//! The size is known from dataflow: read off an input's shape in the function (`flow/shapes`), or
//! taken from a parameter that the function's own code tests against `torch.SymInt` or
//! `torch.SymFloat` (it says it is handed symbolic sizes), and from what is derived from that
//! parameter: names assigned from it, loop variables over it, and the empty lists the function
//! hands a call together with it (the call may fill them: kornia's `_flatten_constant(data,
//! shape, leaves)`). The second kind costs only when a caller does pass a size, which the finding
//! says.
//!
//! No fix: the symbolic equivalent (a `torch` operation on a tensor, or `torch.sym_*`) depends on
//! what the value is for.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity, snippet};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::{FileModel, single_assignment};
use crate::model::file::imports::Imports;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF211",
    name: "size-passed-to-math",
    summary: "keep sizes out of the math functions Dynamo evaluates only on numbers",
    explanation: include_str!("../../codemods/size-passed-to-math/README.md"),
    hazard: "One of an input's sizes is passed to a `math` function that Dynamo evaluates only on a number.",
    why: "Dynamo makes the size a constant to call it, so every new size compiles another graph, even with \
          dynamic shapes, and after the recompile limit the frame runs eagerly.",
    category: Category::Recompile,
    fixes: &[],
    mentions: &["math"],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// The `math` functions that make a symbolic size a constant, measured one by one under torch
/// 2.15 (4 graphs for 4 sizes, ints and floats computed from a size alike). Those Dynamo keeps
/// symbolic are left out: acos, asin, atan, ceil, cos, cosh, floor, log2, radians, sin, sinh,
/// sqrt, tan, tanh, trunc.
const PINNING: &[&str] = &[
    "acosh",
    "asinh",
    "atan2",
    "atanh",
    "cbrt",
    "comb",
    "copysign",
    "degrees",
    "dist",
    "erf",
    "erfc",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "factorial",
    "fmod",
    "frexp",
    "gamma",
    "gcd",
    "hypot",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "isqrt",
    "lcm",
    "ldexp",
    "lgamma",
    "log",
    "log10",
    "log1p",
    "modf",
    "nextafter",
    "perm",
    "pow",
    "remainder",
    "ulp",
];

fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    let model = function.model();
    let imports_math = model.imports.bindings().any(|(_, full)| full == "math" || full.starts_with("math."));
    if !imports_math {
        return None;
    }
    Some(Box::new(MathCalls { function, pinning: Vec::new(), type_tests: Vec::new(), steps: Vec::new() }))
}

/// Where a size passed to a pinning call comes from.
enum Source {
    /// Read off an input's shape in the function (`N`, `x.shape[1]`).
    InputSize(String),
    /// Derived from a parameter the function tests against `torch.SymInt`/`SymFloat`.
    Admitted { value: String, parameter: String },
}

/// What the checker's one walk of a function shows the rule, kept until its end: where sizes may
/// come from is known only once the whole function is seen (a parameter tested after a call).
struct MathCalls<'c, 'a> {
    function: &'c Function<'c, 'a>,
    /// Calls of a pinning `math` function, with its name.
    pinning: Vec<(&'a ast::ExprCall, String)>,
    /// `isinstance(name, types)` calls.
    type_tests: Vec<&'a ast::ExprCall>,
    /// The assignments, loops and calls, in the order of the walk: what symbolic values are
    /// derived through (`SymbolicValues::derive`).
    steps: Vec<Step<'a>>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Stmt(&'a Stmt),
    Call(&'a ast::ExprCall),
}

impl<'a> FunctionHooks<'a> for MathCalls<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
        if matches!(stmt, Stmt::Assign(_) | Stmt::AnnAssign(_) | Stmt::For(_)) {
            self.steps.push(Step::Stmt(stmt));
        }
    }

    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        let Expr::Call(call) = expr else { return true };
        self.steps.push(Step::Call(call));
        if matches!(call.func.as_ref(), Expr::Name(f) if f.id.as_str() == "isinstance") {
            self.type_tests.push(call);
        }
        if let Some(name) = pinning_math_call(call, &self.function.model().imports) {
            self.pinning.push((call, name));
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let function = self.function;
        if self.pinning.is_empty() {
            return;
        }
        let model = function.model();
        let symbolic = SymbolicValues::of(model, function.id, &self.type_tests, &self.steps);
        let sizes = function.sizes();
        let found: Vec<(TextRange, &String, Source)> = (self.pinning.iter())
            .filter_map(|(call, name)| {
                let source = call.arguments.args.iter().find_map(|argument| {
                    if let Some(size) = sizes.read_by(argument).filter(|size| !is_len_call(size)) {
                        return Some(Source::InputSize(snippet(&model.source.text[size.range()])));
                    }
                    let (value, parameter) = symbolic.read_by(argument)?;
                    Some(Source::Admitted { value, parameter })
                })?;
                Some((call.range(), name, source))
            })
            .collect();
        // A frame Dynamo gives up on runs eagerly: nothing in it is compiled, so nothing is pinned.
        if found.is_empty() || function.checker.runs_eagerly(function.id) {
            return;
        }
        for (range, name, source) in &found {
            let call = snippet(&model.source.text[*range]);
            let message = match source {
                Source::InputSize(size) => format!(
                    "`{call}` in {} hands `{size}`, one of an input's sizes, to `math.{name}`, which Dynamo calls \
                     only on a number: it makes the size a constant, so every new size recompiles (dynamic \
                     shapes do not help), and after 8 sizes the frame runs eagerly",
                    function.describe()
                ),
                Source::Admitted { value, parameter } => format!(
                    "`{call}` in {} hands `{value}` to `math.{name}`, which Dynamo calls only on a number; \
                     the function tests `{parameter}` against torch's symbolic ints and floats, and `{value}` \
                     comes from it: a size passed there is made a constant, so every new size recompiles \
                     (dynamic shapes do not help). This costs only when a caller passes one of an input's sizes",
                    function.describe()
                ),
            };
            // Medium, as for einx: it costs only when a size varies between calls.
            diagnostics.push(Diagnostic::new(&RULE, *range, message).with_severity(Severity::Medium).without_fix(
                "compute it with torch operations on a tensor, or with a `math` function Dynamo keeps \
                 symbolic (`math.sqrt`, `math.floor`, `math.ceil`), or take the size out of the call",
            ));
        }
    }
}

/// `math.log(...)`, or `log(...)` imported from math, for a function that pins its argument.
fn pinning_math_call(call: &ast::ExprCall, imports: &Imports) -> Option<String> {
    let qualified = imports.qualified_name(&call.func)?;
    let name = qualified.strip_prefix("math.")?;
    // The head must be the math module itself, not a local that happens to be called `math`.
    let head_is_math = imports.bindings().any(|(_, full)| full == "math" || full == qualified);
    (head_is_math && PINNING.contains(&name)).then(|| name.to_string())
}

/// `len(x)`: a list's length is guarded as a constant anyway; only a tensor's is a size.
fn is_len_call(expr: &Expr) -> bool {
    matches!(expr, Expr::Call(call) if matches!(call.func.as_ref(), Expr::Name(f) if f.id.as_str() == "len"))
}

/// The names of a function that may hold a symbolic size because the function says it takes one:
/// a parameter tested with `isinstance(p, (..., torch.SymInt, torch.SymFloat))`, and what is
/// derived from it (see the module's doc), each with the parameter it comes from.
struct SymbolicValues {
    names: Vec<(String, String)>,
}

impl SymbolicValues {
    /// From what the walk of `function` kept: its type tests and its steps.
    fn of(model: &FileModel, function: usize, type_tests: &[&ast::ExprCall], steps: &[Step]) -> Self {
        let node = model.function(function).node;
        let parameters: HashSet<String> = node
            .parameters()
            .map(|p| p.iter_non_variadic_params().map(|p| p.parameter.name.id.to_string()).collect())
            .unwrap_or_default();
        let mut values = SymbolicValues { names: Vec::new() };
        for call in type_tests {
            if let [Expr::Name(tested), types] = call.arguments.args.as_ref()
                && parameters.contains(tested.id.as_str())
                && names_symbolic_type(&model.imports, types)
            {
                values.add(tested.id.as_str(), tested.id.as_str());
            }
        }
        if values.names.is_empty() {
            return values;
        }
        let containers = empty_containers(steps);
        // Loops carry values backwards (a container filled at the end of a body is read at its
        // start): go through the steps until nothing new is derived, a few times at most.
        for _ in 0..4 {
            let before = values.names.len();
            for &step in steps {
                values.derive(step, &containers);
            }
            if values.names.len() == before {
                break;
            }
        }
        values
    }

    /// The first symbolic name `expr` reads, with the parameter it comes from.
    fn read_by(&self, expr: &Expr) -> Option<(String, String)> {
        let mut reads = NamesRead::default();
        reads.visit_expr(expr);
        reads.names.iter().find_map(|read| self.names.iter().find(|(name, _)| name == read).cloned())
    }

    fn origin(&self, expr: &Expr) -> Option<String> {
        self.read_by(expr).map(|(_, parameter)| parameter)
    }

    fn add(&mut self, name: &str, parameter: &str) {
        if !self.names.iter().any(|(known, _)| known == name) {
            self.names.push((name.to_string(), parameter.to_string()));
        }
    }
}

/// Whether `types` (an `isinstance` test's second argument) names `torch.SymInt` or `torch.SymFloat`.
fn names_symbolic_type(imports: &Imports, types: &Expr) -> bool {
    match types {
        Expr::Tuple(tuple) => tuple.elts.iter().any(|t| names_symbolic_type(imports, t)),
        _ => imports.qualified_name(types).is_some_and(|q| q == "torch.SymInt" || q == "torch.SymFloat"),
    }
}

/// Locals bound to an empty list, dict or set literal: containers the function fills.
fn empty_containers(steps: &[Step]) -> HashSet<String> {
    let mut names = HashSet::default();
    for step in steps {
        let Step::Stmt(stmt) = step else { continue };
        let Some((target, value)) = single_assignment(stmt) else { continue };
        let empty = match value {
            Expr::List(list) => list.elts.is_empty(),
            Expr::Dict(dict) => dict.items.is_empty(),
            Expr::Set(set) => set.elts.is_empty(),
            _ => false,
        };
        if let (Expr::Name(name), true) = (target, empty) {
            names.insert(name.id.to_string());
        }
    }
    names
}

impl SymbolicValues {
    /// Derives symbolic names through one step: assignments and loops over them, containers
    /// filled with them.
    fn derive(&mut self, step: Step, containers: &HashSet<String>) {
        match step {
            Step::Stmt(stmt) => {
                let (targets, value): (Vec<&Expr>, &Expr) = match stmt {
                    Stmt::Assign(assign) => (assign.targets.iter().collect(), &assign.value),
                    Stmt::AnnAssign(assign) => match assign.value.as_deref() {
                        Some(value) => (vec![assign.target.as_ref()], value),
                        None => return,
                    },
                    Stmt::For(for_loop) => (vec![for_loop.target.as_ref()], &for_loop.iter),
                    _ => return,
                };
                if let Some(parameter) = self.origin(value) {
                    let mut bound = Vec::new();
                    targets.iter().for_each(|t| bound_names(t, &mut bound));
                    bound.iter().for_each(|name| self.add(name, &parameter));
                }
            }
            // `fill(data, leaves)`: a container the function created empty and hands a call
            // together with a symbolic value may be filled with it. `leaves.append(v)` alike.
            Step::Call(call) => {
                let mut arguments: Vec<&Expr> = call.arguments.args.iter().collect();
                arguments.extend(call.arguments.keywords.iter().map(|k| &k.value));
                if let Expr::Attribute(method) = call.func.as_ref() {
                    arguments.push(&method.value);
                }
                let parameter = arguments.iter().find_map(|a| self.origin(a));
                if let Some(parameter) = parameter {
                    for argument in arguments {
                        if let Expr::Name(name) = argument
                            && containers.contains(name.id.as_str())
                        {
                            self.add(name.id.as_str(), &parameter);
                        }
                    }
                }
            }
        }
    }
}

fn bound_names(target: &Expr, names: &mut Vec<String>) {
    match target {
        Expr::Name(name) => names.push(name.id.to_string()),
        Expr::Tuple(tuple) => tuple.elts.iter().for_each(|e| bound_names(e, names)),
        Expr::List(list) => list.elts.iter().for_each(|e| bound_names(e, names)),
        Expr::Starred(starred) => bound_names(&starred.value, names),
        _ => {}
    }
}

/// The plain names an expression reads, in order.
#[derive(Default)]
struct NamesRead {
    names: Vec<String>,
}

impl<'a> Visitor<'a> for NamesRead {
    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(name) if name.ctx == ast::ExprContext::Load => self.names.push(name.id.to_string()),
            // A lambda's body runs when it is called; a type test reads no value.
            Expr::Lambda(_) => {}
            _ => walk_expr(self, expr),
        }
    }
}

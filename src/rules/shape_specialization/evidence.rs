//! Whether a value of a compiled function changes from one call to the next, read from the code
//! and not from its name: what the file's own calls of the function pass (a loop's counter, an
//! accumulator the loop advances, the length of something the loop grows), or, where the file
//! does not call it (a library's entry point), the function's own use of the value as the start
//! of a window into a buffer the module keeps, as long as an input
//! (`self.cache[:, n : n + x.shape[1]]`: a position that moves with each call's input).
//!
//! A loop inside compiled code does not count: it is unrolled into one graph, so its counter is
//! a constant of the trace (measured under torch 2.15: a compiled forward calling a block once
//! per `i in range(4)` compiles 1 graph over 5 calls). Only a loop in eager code calls the
//! compiled code anew with each value. Calls from other files are not read (a known blind spot:
//! the function's own evidence decides then).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Operator, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::model::compiled::compile_calls::is_torch_compile;
use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_all};
use crate::model::file::module::is_self;
use crate::model::file::{FileModel, FunctionNode, Reason};
use crate::model::flow::calls::callee;

use crate::model::flow::shapes::InputSizes;
use crate::model::flow::submodules;
use crate::model::tensors::tensor::Tensors;

use super::reads_name;

/// What shows that a value changes between calls, for the message.
#[derive(Clone, Copy)]
pub enum Why {
    /// A call of the function in an eager loop passes a value the loop advances, or with
    /// `grown` one it grows.
    Loop { call: TextRange, grown: bool },
    /// No call of the file reaches the function, and it slices a buffer of its module from the
    /// value to the value plus an input's size.
    Window { slice: TextRange },
}

/// What kind of value a caller must pass.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wanted {
    /// An int that changes: a loop's counter, an accumulator, a length of something grown.
    Int,
    /// Something the loop grows (a cache it concatenates to, a list it appends to, the cache a
    /// call returns and the next call takes).
    Grown,
}

/// One call of one of the file's functions, resolved.
struct Call<'a> {
    /// The function whose own code holds the call (`None`: module level).
    scope: Option<usize>,
    call: &'a ast::ExprCall,
    callee: usize,
    /// The loops around the call in its scope, outermost first.
    loops: Vec<&'a Stmt>,
    /// `self.forward(...)`, `self.step(...)`: a method called on `self`, which no compiled
    /// wrapper stands between (measured under torch 2.15: a module compiled with `.compile()` or
    /// `torch.compile(module)` whose eager `generate` calls `self.forward(i, x)` for 6 values of
    /// `i` compiles no graph), unless the method itself is compiled.
    on_self: bool,
}

/// The file's calls of its own functions and modules, found once for a function's questions.
pub struct Evidence<'m, 'a> {
    model: &'m FileModel<'a>,
    calls: Vec<Call<'a>>,
}

impl<'m, 'a> Evidence<'m, 'a> {
    pub fn find(model: &'m FileModel<'a>) -> Self {
        let mut calls = Vec::new();
        let module_level = model.source.parsed.suite();
        CallFinder::walk(model, None, module_level, &mut calls);
        for (id, function) in model.functions.iter().enumerate() {
            if let FunctionNode::Def(def) = function.node {
                CallFinder::walk(model, Some(id), &def.body, &mut calls);
            }
        }
        Self { model, calls }
    }

    /// Why the int parameter `parameter` of `function` changes between calls, if the code says.
    pub fn int_changes(&self, function: usize, parameter: &str) -> Option<Why> {
        self.changes(function, parameter, Wanted::Int, &mut Vec::new())
    }

    /// Why the parameter `parameter` of `function` grows between calls, if the code says; `length`
    /// is the local holding its length, whose window into a buffer speaks for a library.
    pub fn grows(&self, function: usize, parameter: &str, length: &str) -> Option<Why> {
        if !self.has_callers(function) {
            return self.window(function, length);
        }
        self.changes(function, parameter, Wanted::Grown, &mut Vec::new())
    }

    fn has_callers(&self, function: usize) -> bool {
        self.calls.iter().any(|call| call.callee == function)
    }

    fn changes(&self, function: usize, parameter: &str, wanted: Wanted, seen: &mut Vec<usize>) -> Option<Why> {
        if seen.contains(&function) {
            return None;
        }
        seen.push(function);
        if !self.has_callers(function) {
            return if wanted == Wanted::Int { self.window(function, parameter) } else { None };
        }
        let index = parameter_index(self.model, function, parameter)?;
        for call in self.calls.iter().filter(|call| call.callee == function) {
            let Some(passed) = argument(self.model, call, index, parameter) else { continue };
            let eager = call.scope.is_none_or(|scope| !self.model.in_region(scope));
            let enters = !call.on_self || self.model.region.get(&function) == Some(&Reason::Compiled);
            if eager && enters && advanced_by_loops(&call.loops, passed, wanted) {
                return Some(Why::Loop { call: call.call.range(), grown: wanted == Wanted::Grown });
            }
            // The caller's own parameter, passed on (`self.attention(h, start_pos)`).
            if let (Some(scope), Expr::Name(name)) = (call.scope, passed)
                && parameter_index(self.model, scope, &name.id).is_some()
                && let Some(why) = self.changes(scope, &name.id, wanted, seen)
            {
                return Some(why);
            }
        }
        None
    }

    /// A slice of a buffer of the entry point's module from `name` to `name` plus an input's size.
    fn window(&self, function: usize, name: &str) -> Option<Why> {
        let is_entry = matches!(self.model.region.get(&function), Some(Reason::Forward | Reason::Compiled));
        if !is_entry {
            return None;
        }
        let mut finder = WindowFinder {
            name,
            sizes: InputSizes::of(self.model, function),
            tensors: Tensors::of(self.model, function),
            found: None,
        };
        visit_all(self.model.function(function).node.body(), &mut finder);
        finder.found.map(|slice| Why::Window { slice })
    }
}

/// The position of a parameter among the function's positional parameters (`self` included).
fn parameter_index(model: &FileModel, function: usize, parameter: &str) -> Option<usize> {
    let parameters = model.function(function).node.parameters()?;
    parameters.iter_non_variadic_params().position(|p| p.parameter.name.id.as_str() == parameter)
}

/// What the call passes to the parameter at `index` named `name`, if it says.
fn argument<'a>(model: &FileModel, call: &Call<'a>, index: usize, name: &str) -> Option<&'a Expr> {
    if let Some(keyword) = call.call.arguments.find_keyword(name) {
        return Some(&keyword.value);
    }
    // A method (a module's `forward`, `self.step(...)`) binds `self` before the first argument.
    let bound = usize::from(model.function(call.callee).class.is_some());
    let position = index.checked_sub(bound)?;
    let args = &call.call.arguments.args;
    let before_star = args.iter().take_while(|arg| !arg.is_starred_expr()).count();
    (position < before_star).then(|| &args[position])
}

/// `self.method(...)`: the method of the caller's class it runs.
fn callee_of_self(model: &FileModel, caller: usize, call: &ast::ExprCall) -> Option<usize> {
    match call.func.as_ref() {
        Expr::Attribute(method) if is_self(&method.value) => callee(model, caller, call),
        _ => None,
    }
}

/// Whether the loops around a call change what it passes from one iteration to the next.
fn advanced_by_loops(loops: &[&Stmt], passed: &Expr, wanted: Wanted) -> bool {
    if loops.is_empty() {
        return false;
    }
    let mut changing = Changing::default();
    for stmt in loops {
        if let Stmt::For(for_stmt) = stmt {
            changing.counters(for_stmt);
        }
    }
    // Rounds until nothing new changes: `prev_pos = cur_pos` after `cur_pos` is known.
    for _ in 0..4 {
        let before = (changing.ints.len(), changing.grown.len());
        for stmt in loops {
            let body = match stmt {
                Stmt::For(for_stmt) => &for_stmt.body,
                Stmt::While(while_stmt) => &while_stmt.body,
                _ => continue,
            };
            changing.visit_body(body);
        }
        if before == (changing.ints.len(), changing.grown.len()) {
            break;
        }
    }
    match wanted {
        Wanted::Int => changing.is_int(passed),
        Wanted::Grown => matches!(passed, Expr::Name(name) if changing.grown.contains(name.id.as_str())),
    }
}

/// The names a loop's iterations change: ints (counters, accumulators) and grown values.
#[derive(Default)]
struct Changing {
    ints: HashSet<String>,
    grown: HashSet<String>,
}

impl Changing {
    /// `for pos in range(...)`, `for i, token in enumerate(...)`: the counter.
    fn counters(&mut self, for_stmt: &ast::StmtFor) {
        let Expr::Call(call) = for_stmt.iter.as_ref() else { return };
        let Expr::Name(func) = call.func.as_ref() else { return };
        let counter = match (func.id.as_str(), for_stmt.target.as_ref()) {
            ("range", Expr::Name(name)) => name,
            ("enumerate", Expr::Tuple(tuple)) => match tuple.elts.first() {
                Some(Expr::Name(name)) => name,
                _ => return,
            },
            _ => return,
        };
        self.ints.insert(counter.id.to_string());
    }

    /// An int that changes: a changing name, arithmetic on one, the length of a grown value.
    fn is_int(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Name(name) => self.ints.contains(name.id.as_str()),
            Expr::BinOp(op) => self.is_int(&op.left) || self.is_int(&op.right),
            Expr::UnaryOp(op) => self.is_int(&op.operand),
            Expr::Call(call) => match call.func.as_ref() {
                Expr::Name(func) if func.id.as_str() == "len" => {
                    matches!(call.arguments.args.as_ref(), [Expr::Name(arg)] if self.grown.contains(arg.id.as_str()))
                }
                Expr::Name(func) if matches!(func.id.as_str(), "int" | "min" | "max") => {
                    call.arguments.args.iter().any(|arg| self.is_int(arg))
                }
                Expr::Attribute(method) if method.attr.id.as_str() == "size" => self.is_grown(&method.value),
                _ => false,
            },
            // `cache.shape[1]`
            Expr::Subscript(subscript) => match subscript.value.as_ref() {
                Expr::Attribute(attr) if attr.attr.id.as_str() == "shape" => self.is_grown(&attr.value),
                _ => false,
            },
            _ => false,
        }
    }

    fn is_grown(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Name(name) if self.grown.contains(name.id.as_str()))
    }
}

/// `+ 1`, `+ seqlen`, `+ len(tokens)`: an int-looking operand, not a call that makes a tensor.
fn looks_int(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(number) => matches!(number.value, ast::Number::Int(_)),
        Expr::Name(_) => true,
        Expr::BinOp(op) => looks_int(&op.left) && looks_int(&op.right),
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Name(func) => func.id.as_str() == "len",
            Expr::Attribute(method) => method.attr.id.as_str() == "size",
            _ => false,
        },
        Expr::Subscript(subscript) => {
            matches!(subscript.value.as_ref(), Expr::Attribute(attr) if attr.attr.id.as_str() == "shape")
        }
        _ => false,
    }
}

// A visitor of its own: a loop's body, read for what its iterations change; nested defs are
// other scopes.
impl<'a> Visitor<'a> for Changing {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return,
            // `start_pos += seqlen`, `tokens += [token]`
            Stmt::AugAssign(aug) => {
                if let Expr::Name(name) = aug.target.as_ref() {
                    if aug.op == Operator::Add && looks_int(&aug.value) || aug.op == Operator::Sub && looks_int(&aug.value) {
                        self.ints.insert(name.id.to_string());
                    }
                    self.grown.insert(name.id.to_string());
                }
            }
            Stmt::Assign(assign) => self.assignment(&assign.targets, &assign.value),
            // `cache.append(k)`
            Stmt::Expr(expr) => {
                if let Expr::Call(call) = expr.value.as_ref()
                    && let Expr::Attribute(method) = call.func.as_ref()
                    && matches!(method.attr.id.as_str(), "append" | "extend" | "insert")
                    && let Expr::Name(name) = method.value.as_ref()
                {
                    self.grown.insert(name.id.to_string());
                }
            }
            _ => {}
        }
        walk_stmt(self, stmt);
    }
}

impl Changing {
    /// `pos = pos + 1` (an accumulator), `prev_pos = cur_pos` (a changing int),
    /// `tokens = torch.cat([tokens, token])` and `logits, past = model(token, past)` (grown).
    fn assignment(&mut self, targets: &[Expr], value: &Expr) {
        let names: Vec<&str> = targets
            .iter()
            .flat_map(|target| match target {
                Expr::Name(name) => vec![name.id.as_str()],
                Expr::Tuple(tuple) => tuple.elts.iter().filter_map(|e| e.as_name_expr()).map(|n| n.id.as_str()).collect(),
                _ => Vec::new(),
            })
            .collect();
        let single = matches!(targets, [Expr::Name(_)]);
        for name in names {
            if reads_name(value, name) {
                if single && looks_int(value) {
                    self.ints.insert(name.to_string());
                } else {
                    self.grown.insert(name.to_string());
                }
            } else if single && self.is_int(value) {
                self.ints.insert(name.to_string());
            }
        }
    }
}

/// Walks one scope's own code for calls of the file's functions and modules, with the loops
/// around each.
struct CallFinder<'m, 'a> {
    model: &'m FileModel<'a>,
    scope: Option<usize>,
    /// Local names bound to the file's modules or functions (`model = Decoder(...)`,
    /// `step = torch.compile(decode_one)`): the function a call of the name runs.
    bound: HashMap<String, usize>,
    loops: Vec<&'a Stmt>,
    found: &'m mut Vec<Call<'a>>,
}

impl<'m, 'a> CallFinder<'m, 'a> {
    fn walk(model: &'m FileModel<'a>, scope: Option<usize>, body: &'a [Stmt], found: &'m mut Vec<Call<'a>>) {
        let mut finder = CallFinder { model, scope, bound: HashMap::default(), loops: Vec::new(), found };
        finder.bind_annotated_parameters();
        finder.visit_body(body);
    }

    /// `def fill(ring: Ring, ...)`: the parameter holds one of the file's modules.
    fn bind_annotated_parameters(&mut self) {
        let Some(parameters) = self.scope.and_then(|scope| self.model.function(scope).node.parameters()) else {
            return;
        };
        for parameter in parameters.iter_non_variadic_params() {
            if let Some(Expr::Name(class)) = parameter.parameter.annotation.as_deref()
                && let Some(class) = self.model.class_named(&class.id)
                && let Some(forward) = self.model.method_or_inherited(class, "forward")
            {
                self.bound.insert(parameter.parameter.name.id.to_string(), forward);
            }
        }
    }

    /// The function calling what `expr` evaluates to runs: a module's `forward`, or a function.
    fn runs(&self, expr: &Expr) -> Option<usize> {
        match expr {
            Expr::Name(name) => self.bound.get(name.id.as_str()).copied().or_else(|| self.function_named(&name.id)),
            Expr::Call(call) if is_torch_compile(&self.model.imports, call) => self.runs(call.arguments.args.first()?),
            Expr::Call(call) => match call.func.as_ref() {
                Expr::Name(class) => {
                    let class = self.model.class_named(&class.id)?;
                    self.model.method_or_inherited(class, "forward")
                }
                // `Decoder(...).to(device)`, `model.eval()`: the same module.
                Expr::Attribute(method)
                    if matches!(method.attr.id.as_str(), "to" | "eval" | "cuda" | "half" | "float" | "bfloat16") =>
                {
                    self.runs(&method.value)
                }
                _ => None,
            },
            // `self.attention`: the forward of the module the attribute holds.
            Expr::Attribute(attr) if is_self(&attr.value) => {
                let class = self.model.self_class(self.scope?)?;
                match submodules::forwards(self.model, class, &attr.attr.id) {
                    forwards if forwards.len() == 1 => Some(forwards[0]),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// A module-level or nested function by name (a `torch.compile`d function).
    fn function_named(&self, name: &str) -> Option<usize> {
        let function = self.model.resolve_name(name, self.scope)?;
        self.model.function(function).class.is_none().then_some(function)
    }

    fn callee(&self, call: &ast::ExprCall) -> Option<usize> {
        if let Some(scope) = self.scope
            && let Some(method) = callee(self.model, scope, call)
        {
            return Some(method);
        }
        match call.func.as_ref() {
            // `model.forward(...)`
            Expr::Attribute(method) if method.attr.id.as_str() == "forward" => self.runs(&method.value),
            func => self.runs(func),
        }
    }
}

impl<'a> Visitor<'a> for CallFinder<'_, 'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            // Other scopes: their own walk.
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::For(_) | Stmt::While(_) => {
                self.loops.push(stmt);
                walk_stmt(self, stmt);
                self.loops.pop();
            }
            Stmt::Assign(assign) => {
                walk_stmt(self, stmt);
                if let [Expr::Name(target)] = assign.targets.as_slice() {
                    match self.runs(&assign.value) {
                        Some(function) => self.bound.insert(target.id.to_string(), function),
                        None => self.bound.remove(target.id.as_str()),
                    };
                }
            }
            _ => walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && let Some(callee) = self.callee(call).filter(|&callee| Some(callee) != self.scope)
        {
            let on_self = self.scope.is_some_and(|scope| callee_of_self(self.model, scope, call).is_some());
            self.found.push(Call { scope: self.scope, call, callee, loops: self.loops.clone(), on_self });
        }
        walk_expr(self, expr);
    }
}

/// The first slice of the module's own tensor from `name` to `name` plus an input's size.
struct WindowFinder<'n, 'm, 'a> {
    name: &'n str,
    sizes: InputSizes,
    tensors: Tensors<'m, 'a>,
    found: Option<TextRange>,
}

impl WindowFinder<'_, '_, '_> {
    /// `n : n + x.shape[1]`, `n : seqlen + n`.
    fn is_window(&self, slice: &ast::ExprSlice) -> bool {
        let is_name = |expr: &Expr| matches!(expr, Expr::Name(n) if n.id.as_str() == self.name);
        let (Some(lower), Some(Expr::BinOp(upper))) = (slice.lower.as_deref(), slice.upper.as_deref()) else {
            return false;
        };
        let sized = |side: &Expr| self.sizes.read_by(side).is_some();
        is_name(lower)
            && upper.op == Operator::Add
            && (is_name(&upper.left) && sized(&upper.right) || is_name(&upper.right) && sized(&upper.left))
    }
}

impl<'a> CompiledCodeVisitor<'a> for WindowFinder<'_, '_, 'a> {
    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        if self.found.is_none()
            && let Expr::Subscript(subscript) = expr
            && matches!(subscript.value.as_ref(), Expr::Attribute(attr) if is_self(&attr.value))
            && self.tensors.is_tensor(&subscript.value)
        {
            let parts: Vec<&Expr> = match subscript.slice.as_ref() {
                Expr::Tuple(tuple) => tuple.elts.iter().collect(),
                part => vec![part],
            };
            let window = parts.iter().any(|part| matches!(part, Expr::Slice(slice) if self.is_window(slice)));
            if window {
                self.found = Some(subscript.range());
            }
        }
        true
    }
}

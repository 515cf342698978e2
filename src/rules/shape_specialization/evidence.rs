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
//! compiled code anew with each value, and only through the compiled object: the name bound to
//! `torch.compile(...)`, a module whose `.compile()` ran, a function decorated with
//! `@torch.compile` (the plain module called next to its compiled wrapper compiles nothing).
//! Calls from other files are not read (a known blind spot: the function's own evidence decides
//! then, as it does where the file's calls all run the plain object).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Operator, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::model::compiled::compile_calls::{compile_bindings, is_torch_compile};
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
    /// `grown` one it grows; `prefill`: the same scope calls the function before the loop.
    Loop { call: TextRange, grown: bool, prefill: bool },
    /// No call of the file reaches the function, and it slices a buffer of its module from the
    /// value to the value plus an input's size.
    Window { slice: TextRange },
}

/// What kind of value a caller must pass.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wanted {
    /// An int that changes: a loop's counter, an accumulator, a length of something grown.
    Int,
    /// Something the loop grows: a tensor it concatenates onto (itself, or through a call of the
    /// file whose return does), a list it appends to.
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
    /// Whether the call runs the compiled object. Not `self.forward(...)` from an eager method:
    /// no compiled wrapper stands between (measured under torch 2.15: a module compiled with
    /// `.compile()` or `torch.compile(module)` whose eager `generate` calls `self.forward(i, x)`
    /// for 6 values of `i` compiles no graph), unless the method itself is compiled; not the
    /// plain module next to its wrapper (`model(x, n)` after `fast = torch.compile(model)`).
    compiled: bool,
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

    /// Whether a call of the file reaches the function in compiled code: through the compiled
    /// object, or from inside the region (a caller passing its own argument on).
    fn has_callers(&self, function: usize) -> bool {
        self.callers(function).next().is_some()
    }

    fn callers(&self, function: usize) -> impl Iterator<Item = &Call<'a>> {
        self.calls.iter().filter(move |call| call.callee == function && (call.compiled || !self.is_eager(call)))
    }

    fn is_eager(&self, call: &Call) -> bool {
        call.scope.is_none_or(|scope| !self.model.in_region(scope))
    }

    /// Whether the call's scope calls the same function before the loops around it that it
    /// does not share (a prefill before the decode loop).
    fn follows_prefill(&self, call: &Call) -> bool {
        self.callers(call.callee).any(|other| {
            let shared = other.loops.len();
            other.scope == call.scope
                && shared < call.loops.len()
                && other.loops.iter().zip(&call.loops).all(|(a, b)| std::ptr::eq(*a, *b))
                && other.call.end() <= call.loops[shared].start()
        })
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
        for call in self.callers(function) {
            let Some(passed) = argument(self.model, call, index, parameter) else { continue };
            if self.is_eager(call) && self.advanced_by_loops(&call.loops, passed, wanted) {
                let (grown, prefill) = (wanted == Wanted::Grown, self.follows_prefill(call));
                return Some(Why::Loop { call: call.call.range(), grown, prefill });
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

impl<'a> Evidence<'_, 'a> {
    /// Whether the loops around a call change what it passes from one iteration to the next.
    fn advanced_by_loops(&self, loops: &[&'a Stmt], passed: &Expr, wanted: Wanted) -> bool {
    if loops.is_empty() {
        return false;
    }
    let mut changing = Changing { evidence: self, ints: HashSet::default(), grown: HashSet::default() };
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

    /// Whether the call (one of the file's, resolved) returns its argument `name` made longer:
    /// the callee returns, where the target at `position` of a tuple (or the whole target)
    /// receives it, a concatenation onto the parameter `name` is passed to
    /// (`return h, torch.cat([kept, h], dim=1)`).
    fn returns_longer(&self, call: &ast::ExprCall, position: Option<usize>, name: &str) -> bool {
        let Some(found) = self.calls.iter().find(|found| found.call.range() == call.range()) else { return false };
        let Some(parameters) = self.model.function(found.callee).node.parameters() else { return false };
        let receives = parameters.iter_non_variadic_params().enumerate().find(|(index, p)| {
            let passed = argument(self.model, found, *index, &p.parameter.name.id);
            matches!(passed, Some(Expr::Name(passed)) if passed.id.as_str() == name)
        });
        let Some((_, parameter)) = receives else { return false };
        let mut finder = LongerReturn {
            evidence: self,
            parameter: &parameter.parameter.name.id,
            position,
            longer: HashSet::default(),
            found: false,
        };
        if let FunctionNode::Def(def) = self.model.function(found.callee).node {
            finder.visit_body(&def.body);
        }
        finder.found
    }

    /// `torch.cat([name, ...])`, `torch.cat((..., name), dim=1)`: `name` made longer.
    fn concatenates_onto(&self, value: &Expr, name: &str) -> bool {
        let Expr::Call(call) = value else { return false };
        let imports = &self.model.imports;
        let is_cat = ["torch.cat", "torch.concat", "torch.concatenate"]
            .iter()
            .any(|qualified| imports.refers_to(&call.func, qualified));
        let tensors = call.arguments.args.first().or_else(|| call.arguments.find_keyword("tensors").map(|k| &k.value));
        let elements = match tensors {
            Some(Expr::List(list)) => &list.elts,
            Some(Expr::Tuple(tuple)) => &tuple.elts,
            _ => return false,
        };
        is_cat && elements.iter().any(|element| matches!(element, Expr::Name(n) if n.id.as_str() == name))
    }
}

/// The names a loop's iterations change: ints (counters, accumulators) and grown values.
struct Changing<'e, 'm, 'a> {
    evidence: &'e Evidence<'m, 'a>,
    ints: HashSet<String>,
    grown: HashSet<String>,
}

impl Changing<'_, '_, '_> {
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
impl<'a> Visitor<'a> for Changing<'_, '_, 'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return,
            // `start_pos += seqlen` (an int), `tokens += [token]` (a longer list); not `x += y`.
            Stmt::AugAssign(aug) => {
                if let Expr::Name(name) = aug.target.as_ref() {
                    if matches!(aug.op, Operator::Add | Operator::Sub) && looks_int(&aug.value) {
                        self.ints.insert(name.id.to_string());
                    } else if aug.op == Operator::Add
                        && matches!(aug.value.as_ref(), Expr::List(_) | Expr::Tuple(_) | Expr::ListComp(_))
                    {
                        self.grown.insert(name.id.to_string());
                    }
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

impl Changing<'_, '_, '_> {
    /// `pos = pos + 1` (an accumulator), `prev_pos = cur_pos` (a changing int),
    /// `tokens = torch.cat([tokens, token])`, `out, kept = model(token, kept)` where the
    /// model's return concatenates onto `kept`, `ids[len(ids):] = [t]` (grown). Not `x = model(x)`
    /// or `out, h = cell(x, h)`: a value passed back in is not longer for it (a sampler's or an
    /// RNN's state keeps its shape).
    fn assignment(&mut self, targets: &[Expr], value: &Expr) {
        for target in targets {
            match target {
                Expr::Name(name) => self.assigned(&name.id, None, value),
                Expr::Tuple(tuple) => {
                    for (position, element) in tuple.elts.iter().enumerate() {
                        if let Expr::Name(name) = element {
                            self.assigned(&name.id, Some(position), value);
                        }
                    }
                }
                // `ids[len(ids):] = [t]`
                Expr::Subscript(subscript) => {
                    if let (Expr::Name(name), Expr::Slice(slice)) = (subscript.value.as_ref(), subscript.slice.as_ref())
                        && slice.upper.is_none()
                        && slice.lower.as_deref().is_some_and(|lower| is_len_of(lower, &name.id))
                    {
                        self.grown.insert(name.id.to_string());
                    }
                }
                _ => {}
            }
        }
    }

    /// `name` (at `position` of a tuple target) is assigned `value`.
    fn assigned(&mut self, name: &str, position: Option<usize>, value: &Expr) {
        let single = position.is_none();
        if single && reads_name(value, name) && looks_int(value) || single && self.is_int(value) {
            self.ints.insert(name.to_string());
        } else if single && self.evidence.concatenates_onto(value, name)
            || matches!(value, Expr::Call(call) if self.evidence.returns_longer(call, position, name))
        {
            self.grown.insert(name.to_string());
        }
    }
}

/// `len(name)`.
fn is_len_of(expr: &Expr, name: &str) -> bool {
    let Expr::Call(call) = expr else { return false };
    matches!(call.func.as_ref(), Expr::Name(func) if func.id.as_str() == "len")
        && matches!(call.arguments.args.as_ref(), [Expr::Name(arg)] if arg.id.as_str() == name)
}

/// Reads a function's own code for a return that, at `position` of a returned tuple (or whole),
/// concatenates onto `parameter`, directly or through a local assigned such a concatenation.
struct LongerReturn<'e, 'p, 'm, 'a> {
    evidence: &'e Evidence<'m, 'a>,
    parameter: &'p str,
    position: Option<usize>,
    longer: HashSet<String>,
    found: bool,
}

// A visitor of its own: the callee's body in source order (its assignments before its returns);
// nested defs are other scopes.
impl<'a> Visitor<'a> for LongerReturn<'_, '_, '_, 'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::Assign(assign) => {
                if let [Expr::Name(target)] = assign.targets.as_slice()
                    && self.evidence.concatenates_onto(&assign.value, self.parameter)
                {
                    self.longer.insert(target.id.to_string());
                }
            }
            Stmt::Return(ret) => {
                let returned = match (ret.value.as_deref(), self.position) {
                    (Some(Expr::Tuple(tuple)), Some(position)) => tuple.elts.get(position),
                    (value, None) => value,
                    _ => None,
                };
                self.found |= returned.is_some_and(|returned| {
                    self.evidence.concatenates_onto(returned, self.parameter)
                        || matches!(returned, Expr::Name(name) if self.longer.contains(name.id.as_str()))
                });
            }
            _ => walk_stmt(self, stmt),
        }
    }
}

/// What calling an object runs: one of the file's functions, compiled or as written.
#[derive(Clone, Copy)]
struct Runs {
    function: usize,
    compiled: bool,
}

/// Walks one scope's own code for calls of the file's functions and modules, with the loops
/// around each.
struct CallFinder<'m, 'a> {
    model: &'m FileModel<'a>,
    scope: Option<usize>,
    /// Local names bound to the file's modules or functions (`model = Decoder(...)`,
    /// `step = torch.compile(decode_one)`): what a call of the name runs.
    bound: HashMap<String, Runs>,
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
                self.bound.insert(parameter.parameter.name.id.to_string(), Runs { function: forward, compiled: false });
            }
        }
    }

    /// The function calling what `expr` evaluates to runs: a module's `forward`, or a function.
    fn runs(&self, expr: &Expr) -> Option<Runs> {
        match expr {
            Expr::Name(name) => self.bound.get(name.id.as_str()).copied().or_else(|| self.function_named(&name.id)),
            Expr::Call(call) if is_torch_compile(&self.model.imports, call) => {
                let function = self.runs(call.arguments.args.first()?)?.function;
                Some(Runs { function, compiled: true })
            }
            Expr::Call(call) => match call.func.as_ref() {
                Expr::Name(class) => {
                    let class = self.model.class_named(&class.id)?;
                    let forward = self.model.method_or_inherited(class, "forward")?;
                    Some(Runs { function: forward, compiled: false })
                }
                // `Decoder(...).to(device)`, `model.eval()`: the same module.
                Expr::Attribute(method)
                    if matches!(method.attr.id.as_str(), "to" | "eval" | "cuda" | "half" | "float" | "bfloat16") =>
                {
                    self.runs(&method.value)
                }
                _ => None,
            },
            // `self.attention`: the forward of the module the attribute holds, compiled where
            // a method of the class binds it to `torch.compile(...)`.
            Expr::Attribute(attr) if is_self(&attr.value) => {
                let class = self.model.self_class(self.scope?)?;
                match submodules::forwards(self.model, class, &attr.attr.id) {
                    forwards if forwards.len() == 1 => {
                        Some(Runs { function: forwards[0], compiled: self.compiled_attribute(class, &attr.attr.id) })
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `self.<attr> = torch.compile(...)` in a method of the class.
    fn compiled_attribute(&self, class: usize, attr: &str) -> bool {
        let target = format!("self.{attr}");
        self.model.methods_of(class).iter().any(|&method| {
            let FunctionNode::Def(def) = self.model.function(method).node else { return false };
            compile_bindings(&self.model.imports, &def.body).iter().any(|binding| binding.target == target)
        })
    }

    /// A module-level or nested function by name, compiled where `@torch.compile` decorates it.
    fn function_named(&self, name: &str) -> Option<Runs> {
        let function = self.model.resolve_name(name, self.scope)?;
        let f = self.model.function(function);
        f.class.is_none().then_some(Runs { function, compiled: f.compiled })
    }

    /// What the call runs: a method of the caller's class called on `self` runs compiled only
    /// where the method itself is compiled, a function called by name where it is decorated.
    fn callee(&self, call: &ast::ExprCall) -> Option<Runs> {
        if let Some(scope) = self.scope
            && let Some(function) = callee(self.model, scope, call)
        {
            let compiled = match callee_of_self(self.model, scope, call) {
                Some(_) => self.model.region.get(&function) == Some(&Reason::Compiled),
                None => self.model.function(function).compiled,
            };
            return Some(Runs { function, compiled });
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
                        Some(runs) => self.bound.insert(target.id.to_string(), runs),
                        None => self.bound.remove(target.id.as_str()),
                    };
                }
            }
            // `model.compile()`: the module compiles its own calls from here on.
            Stmt::Expr(expr) => {
                walk_stmt(self, stmt);
                if let Expr::Call(call) = expr.value.as_ref()
                    && let Expr::Attribute(method) = call.func.as_ref()
                    && method.attr.id.as_str() == "compile"
                    && let Expr::Name(name) = method.value.as_ref()
                    && let Some(runs) = self.bound.get_mut(name.id.as_str())
                {
                    runs.compiled = true;
                }
            }
            _ => walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && let Some(runs) = self.callee(call).filter(|runs| Some(runs.function) != self.scope)
        {
            let (callee, compiled) = (runs.function, runs.compiled);
            self.found.push(Call { scope: self.scope, call, callee, loops: self.loops.clone(), compiled });
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

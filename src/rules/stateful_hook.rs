//! TCF202 stateful-hook: a forward hook or pre-hook whose body reads state that changes between
//! calls — an attribute the project assigns outside `__init__` on a captured object
//! (`collector.capture_activation_norms`), on `self` for a method hook, or on a global; a
//! `nonlocal` or `global`; a closure or module variable that is reassigned, or that is declared
//! `global`/`nonlocal` elsewhere and written into (`d[k] = v`, `d.update(...)`). Dynamo guards on that state
//! (`...__closure__[0].cell_contents.capture_activation_norms == False`): every flip recompiles,
//! and at the recompile limit the frame runs eagerly. The fix decorates the hook with
//! `@torch.compiler.disable`: it runs eagerly (a graph break at each call), the guards vanish. On
//! a hook that forward runs in a loop, where that break would make Dynamo skip all of forward, the
//! fix that takes the flag tests out (`record_always`) is offered instead when the hook's flags
//! allow it, and otherwise none.

mod record_always;
mod record_readers;

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::text::{NEW_MODULE_IMPORT, insert_decorator, torch_name_at};
use crate::fix::torch_api::{TorchVersion, disable};
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_function};
use crate::model::file::{FileModel, FunctionNode, Hook};
use crate::model::compiled::hooks::on_repeated_modules;
use crate::model::compiled::reach::{Target, describe, targets};
use crate::rules::check::{Checker, Hooks};
use crate::rules::RULES;
use crate::rules::rule::{Category, Rule};
use record_always::FlagTests;
use record_readers::Readers;

pub static RULE: Rule = Rule {
    code: "TCF202",
    name: "stateful-hook",
    summary: "run hooks that read changing state eagerly",
    explanation: include_str!("../../codemods/stateful-hook/README.md"),
    hazard: "A forward hook that reads mutable state recompiles whenever the state changes.",
    why: "Dynamo guards on every outside value the hook reads, so each new value costs a recompile of the frame, \
              and state that changes on every call reaches the recompile limit and leaves the frame eager.",
    category: Category::Recompile,
    fixes: &[Safety::Safe, Safety::Unsafe],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::File(check);

fn check(checker: &Checker) -> Vec<Diagnostic> {
    let model = checker.model;
    let mut hooks: Vec<&Hook> = model.hooks.iter().filter(|hook| model.in_region(hook.function)).collect();
    // One finding per hook function; if any of its registrations puts it on repeated blocks, that
    // one is kept (sorted first), since it decides the fix's safety.
    hooks.sort_by_key(|hook| (hook.function, on_repeated_modules(model, hook).is_none()));
    hooks.dedup_by_key(|hook| hook.function);
    // Most files register no hook in compiled code: the file's state is read only for those that do.
    if hooks.is_empty() {
        return Vec::new();
    }
    let mut diagnostics = Vec::new();
    let file = FileState::of(model);
    for hook in hooks {
        let Some(read) = first_state_read(model, &file, hook.function, hook.bound_args, &[]) else { continue };
        let through = match read.function {
            Some(helper) if helper != hook.function => {
                format!(" (in `{}`, which it calls)", model.function(helper).qualname)
            }
            _ => String::new(),
        };
        let (what, severity) = if read.container {
            (
                "a container whose items change at run time: Dynamo guards on its contents (its length and keys), so each change recompiles (after 8 recompiles, the frame runs eagerly)",
                Severity::High,
            )
        } else if read.bounded {
            (
                "a flag that may flip at run time: Dynamo guards on its value and compiles another version of the frame for each new value",
                Severity::Medium,
            )
        } else {
            (
                "state that changes at run time: Dynamo guards on its value, so each new value recompiles (after 8 recompiles, the frame runs eagerly)",
                Severity::High,
            )
        };
        let message = format!("{} reads {}{through}, {what}", describe(model, hook.function), read.what);
        let diagnostic = Diagnostic::new(&RULE, read.range, message).with_severity(severity);
        let fix = record_always_fix(checker, &file, hook, &read)
            .unwrap_or_else(|| disable_fix(model, hook, &read, checker.settings.target_torch));
        diagnostics.push(match fix {
            Ok(fix) => diagnostic.with_fix(fix),
            Err(reason) => diagnostic.without_fix(reason),
        });
    }
    diagnostics
}

/// For a hook on blocks that forward runs in a loop, whose state is flags it tests: the flag tests
/// taken out, when that leaves the hook (and what it calls) reading no changing state, and the
/// hook holds no graph break that the tests kept from running on every call.
/// `None` where the fix does not fit the hook; the reason there is no fix where it fits but would
/// gain nothing.
fn record_always_fix(checker: &Checker, file: &FileState, hook: &Hook, read: &StateRead) -> Option<Result<Fix, String>> {
    let tests = flag_tests(checker, file, hook, read)?;
    if let Some(sibling) = sibling_keeping_its_guard(checker, file, hook) {
        return Some(Err(format!(
            "hook `{}`, made with this one, keeps its guard: forward recompiles on a flip whatever this hook does",
            checker.model.function(sibling).name
        )));
    }
    Some(Ok(match Readers::of(checker.model, hook.function, &tests) {
        Some(readers) => readers.fix(tests),
        None => tests.fix(),
    }))
}

/// The hook's flag tests, when taking them out leaves it reading no changing state.
fn flag_tests(checker: &Checker, file: &FileState, hook: &Hook, read: &StateRead) -> Option<FlagTests> {
    let model = checker.model;
    if !read.bounded || read.container || on_repeated_modules(model, hook).is_none() {
        return None;
    }
    let hook_range = model.function(hook.function).node.range();
    let graph_breaks = RULES.iter().filter(|rule| rule.category == Category::GraphBreak);
    if graph_breaks.flat_map(|rule| checker.hazards_of(rule)).any(|range| hook_range.contains_range(range)) {
        return None;
    }
    let scope = Scope::of(model, file, hook.function, hook.bound_args);
    let is_flag = |expr: &Expr| match expr {
        Expr::Attribute(attr) => scope.reads_state(model, attr) == Some(true),
        _ => false,
    };
    let tests = FlagTests::of(model, hook.function, &is_flag)?;
    first_state_read(model, file, hook.function, hook.bound_args, &tests.tests).is_none().then_some(tests)
}

/// Another hook made next to this one (by the same function, or in the same class) reads
/// changing state that its own flag tests cannot take out: its guard stays on forward, which then
/// recompiles when the flags flip (they flip together, from the same training loop) whatever this
/// hook does, so recording on every call would only cost work. Measured on the seed
/// transformer-room at abcc124: the activation hook's tests taken out, forward kept its recompile,
/// from the entropy hooks' `nonlocal` state.
fn sibling_keeping_its_guard(checker: &Checker, file: &FileState, hook: &Hook) -> Option<usize> {
    let model = checker.model;
    let made_by = |function: usize| (model.function(function).parent, model.function(function).class);
    let siblings = model.hooks.iter().filter(|other| {
        other.function != hook.function && made_by(other.function) == made_by(hook.function)
    });
    siblings
        .filter(|other| {
            first_state_read(model, file, other.function, other.bound_args, &[])
                .is_some_and(|read| flag_tests(checker, file, other, &read).is_none())
        })
        .map(|other| other.function)
        .next()
}

/// `@torch.compiler.disable` on the hook. Safe for what the model computes; but a hook on many
/// modules (registered in a loop, on an element of a module list, through `Module.apply`, or
/// globally) sits on blocks that forward calls in a loop, where its graph break makes Dynamo skip
/// the whole forward (measured: 0 graphs, worse than the recompiles it saves), so there it is no
/// fix at all, and the finding says what keeps forward in one graph. Nor is a fix that would add
/// `import torch` to the import of a module that does not import torch automatic.
///
/// The fix that keeps one graph, the flag test taken out of the hook so that it records on every
/// call and the code reading the records (outside the compiled model) checks the flag, changes
/// what the hook does on the steps the flag was off, and the reader is the training script, which
/// tcfix does not see: so it is not written, and the reason says how to do it by hand.
fn disable_fix(model: &FileModel, hook: &Hook, read: &StateRead, target: TorchVersion) -> Result<Fix, String> {
    if on_repeated_modules(model, hook).is_some() {
        let by_hand = if read.bounded && !read.container {
            format!("remove the hook's tests of {} so it records every call; check the flag where records are read", read.what)
        } else {
            "keep the hook's changing state out of the compiled model".to_string()
        };
        return Err(format!("{by_hand} (`torch.compiler.disable` on looped blocks sends forward eager)"));
    }
    let node = model.function(hook.function).node;
    // The decorator runs where the def (or lambda) is: a local import goes in the def around it.
    let torch = torch_name_at(model, node.range().start());
    let disable = disable(&torch.name, target);
    let text = &model.source.text;
    // The import first: when both land at the same point (a hook def opening a file without
    // `import torch`), the import must come before the decorator.
    let mut edits: Vec<Edit> = torch.import.into_iter().collect();
    match node {
        // Right above `def`, below `@staticmethod` and the like: disable must wrap the function.
        FunctionNode::Def(def) => edits.push(insert_decorator(text, def.name.start(), &disable)),
        FunctionNode::Lambda(lambda) => {
            edits.push(Edit::insert(lambda.start(), format!("{disable}(")));
            edits.push(Edit::insert(lambda.end(), ")"));
        }
    }
    let title = format!("Run the hook eagerly with `{disable}` (a graph break at each call instead of guards)");
    Ok(match torch.new_module_import {
        false => Fix::new(title, Safety::Safe, edits),
        true => Fix::new(format!("{title} ({NEW_MODULE_IMPORT})"), Safety::Unsafe, edits),
    })
}

/// A read of state in a hook or a function it calls.
struct StateRead {
    range: TextRange,
    what: String,
    /// A flag: few values, so a bounded number of compiles.
    bounded: bool,
    /// A dict or list written into, not rebound: its contents are what changes.
    container: bool,
    /// The function the read sits in (`None`: a declaration in the hook itself).
    function: Option<usize>,
}

/// The first read of changing state in the hook, or in the functions of the file it calls, outside
/// the hook's code at `ignored`.
fn first_state_read(
    model: &FileModel,
    file: &FileState,
    hook: usize,
    bound_args: usize,
    ignored: &[TextRange],
) -> Option<StateRead> {
    if let FunctionNode::Def(def) = model.function(hook).node
        && let Some(declaration) = def.body.iter().find(|s| matches!(s, Stmt::Nonlocal(_) | Stmt::Global(_))) {
            let keyword = if matches!(declaration, Stmt::Nonlocal(_)) { "nonlocal" } else { "global" };
            let what = format!("`{keyword}` state");
            return Some(StateRead {
                range: declaration.range(),
                what,
                bounded: false,
                container: false,
                function: None,
            });
        }
    let mut seen = vec![hook];
    let mut pending = vec![(hook, bound_args)];
    while let Some((function, bound_args)) = pending.pop() {
        let scope = Scope::of(model, file, function, bound_args);
        let ignored = if function == hook { ignored } else { &[] };
        let mut finder = StateReadFinder { model, scope: &scope, function, ignored, found: None };
        visit_function(model, function, &mut finder);
        if finder.found.is_some() {
            return finder.found;
        }
        for target in targets(model, function) {
            let Target::Local(qualname) = target else { continue };
            let Some(callee) = model.functions.iter().position(|f| f.qualname == qualname) else { continue };
            if !seen.contains(&callee) && !model.function(callee).disabled {
                seen.push(callee);
                pending.push((callee, 0));
            }
        }
    }
    None
}

/// The names a hook sees, sorted by where they come from.
struct Scope<'f> {
    /// The hook's own locals and parameters that hold its inputs.
    locals: HashSet<String>,
    /// Parameters bound at registration: `functools.partial` arguments and defaulted parameters.
    captured_parameters: HashSet<String>,
    /// Assigned in an enclosing function: closure variables.
    closure: HashSet<String>,
    /// Closure variables rebound after the hook was made.
    closure_reassigned: HashSet<String>,
    /// A method hook: `self` is the object the hook was taken from.
    is_method: bool,
    /// What the whole file holds: the same for every hook of the file.
    file: &'f FileState,
}

/// The module-level state of a file, read once for all its hooks (each hook reading the whole
/// file again made a file of many hooked modules quadratic).
struct FileState {
    /// Assigned at module level, and module-level classes (imports and defs are not state).
    globals: HashSet<String>,
    /// Rebound after being captured: assigned twice, or assigned where it is declared
    /// `nonlocal`/`global`.
    reassigned: HashSet<String>,
    /// Declared `nonlocal`/`global` somewhere but only written into there (`d[k] = v`).
    declared: HashSet<String>,
    /// Names whose items the file assigns (`SETTINGS["trace"] = True`, `SETTINGS.update(...)`).
    item_assigned: HashSet<String>,
}

impl FileState {
    fn of(model: &FileModel) -> Self {
        let (declared, mut reassigned) = declared_nonlocal_or_global(model);
        let (mut globals, twice) = module_variables(model.source.parsed.suite());
        reassigned.extend(twice);
        globals.extend(model.classes.iter().filter(|c| !c.qualname.contains('.')).map(|c| c.qualname.clone()));
        let item_assigned = item_assigned_names(model.source.parsed.suite());
        Self { globals, reassigned, declared, item_assigned }
    }
}

impl<'f> Scope<'f> {
    fn of(model: &FileModel, file: &'f FileState, hook: usize, bound_args: usize) -> Self {
        let function = model.function(hook);
        let is_method = function.class.is_some();
        let parameters: Vec<&ast::ParameterWithDefault> =
            function.node.parameters().map(|p| p.iter_non_variadic_params().collect()).unwrap_or_default();
        let first_bound = usize::from(is_method);
        let captured_parameters = parameters
            .iter()
            .enumerate()
            .filter(|(i, p)| p.default.is_some() || (first_bound..first_bound + bound_args).contains(i))
            .map(|(_, p)| p.parameter.name.id.to_string())
            .collect();
        let mut locals = bindings(function.node, Bindings::Everything).0;
        locals.remove("self");

        let mut closure = HashSet::default();
        let mut closure_reassigned = HashSet::default();
        let mut parent = function.parent;
        let made_at = function.node.range().start();
        while let Some(enclosing) = parent {
            let (bound, twice) = bindings(model.function(enclosing).node, Bindings::Assignments);
            // The hook's cell changes only with a binding that runs after its def: normalising a
            // parameter first (`if not isinstance(want, set): want = {want}`) changes nothing.
            let later = bound_after(model.function(enclosing).node, made_at);
            closure.extend(bound);
            closure_reassigned.extend(twice.into_iter().filter(|name| later.contains(name)));
            parent = model.function(enclosing).parent;
        }
        Self { locals, captured_parameters, closure, closure_reassigned, is_method, file }
    }

    /// Whether `name` holds an object from outside the hook (captured, closure, global).
    fn is_captured(&self, name: &str) -> bool {
        self.captured_parameters.contains(name)
            || (!self.locals.contains(name) && (self.closure.contains(name) || self.file.globals.contains(name)))
    }

    /// `obj.field` where `obj` is from outside the hook and the project assigns `field` at run
    /// time: whether it is a flag (`Some(true)`), other state (`Some(false)`), or no state.
    fn reads_state(&self, model: &FileModel, attr: &ast::ExprAttribute) -> Option<bool> {
        let Expr::Name(base) = attr.value.as_ref() else { return None };
        let field = attr.attr.id.as_str();
        let state = &model.state_attributes;
        let outside = if base.id.as_str() == "self" { self.is_method } else { self.is_captured(base.id.as_str()) };
        (outside && state.holds_state(field)).then(|| state.is_flag(field))
    }

    /// How a captured name itself changes, if it does.
    fn change(&self, name: &str) -> Option<Change> {
        if self.locals.contains(name) || !(self.closure.contains(name) || self.file.globals.contains(name)) {
            return None;
        }
        if self.closure_reassigned.contains(name) || self.file.reassigned.contains(name) {
            Some(Change::Reassigned)
        } else if self.file.declared.contains(name) && self.file.item_assigned.contains(name) {
            Some(Change::WrittenInto)
        } else {
            None
        }
    }
}

/// How a variable the hook captures changes after the hook is made.
enum Change {
    /// `x = ...` again (twice, or where `x` is declared `global`/`nonlocal`).
    Reassigned,
    /// Only its items: `d[k] = v`, `d.update(...)`, `items.append(...)`.
    WrittenInto,
}

struct StateReadFinder<'s, 'm, 'a> {
    model: &'m FileModel<'a>,
    scope: &'s Scope<'s>,
    function: usize,
    /// Code a fix takes out: what it reads no longer counts.
    ignored: &'s [TextRange],
    found: Option<StateRead>,
}

impl StateReadFinder<'_, '_, '_> {
    fn found(&mut self, expr: &Expr, what: String, bounded: bool) {
        let function = Some(self.function);
        self.found = Some(StateRead { range: expr.range(), what, bounded, container: false, function });
    }
}

// A visitor of its own: the first state read in a hook and the functions it calls, in call order, judged against scopes (module variables, closures, declarations) the file rule finds first; moving it onto the checker's walk means recording every read of every region function to pick the first: not done yet.
impl<'a> CompiledCodeVisitor<'a> for StateReadFinder<'_, '_, '_> {
    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        if self.found.is_some() || self.ignored.iter().any(|range| range.contains_range(expr.range())) {
            return false;
        }
        let read = &self.model.source.text[expr.range()];
        match expr {
            Expr::Name(name) if name.ctx == ExprContext::Load => {
                match self.scope.change(name.id.as_str()) {
                    Some(Change::Reassigned) => {
                        self.found(expr, format!("`{read}`, which is reassigned after the hook is made"), false);
                    }
                    // Measured under torch 2.15: Dynamo guards on the dict's length and keys
                    // (`len(G['captured']) == 1`), so each new set of items recompiles.
                    Some(Change::WrittenInto) => {
                        self.found(expr, format!("`{read}`, which is written into after the hook is made"), false);
                        if let Some(found) = &mut self.found {
                            found.container = true;
                        }
                    }
                    None => return true,
                }
                false
            }
            // SETTINGS["trace"]: a switch kept in a captured dict.
            Expr::Subscript(subscript) if subscript.ctx == ExprContext::Load => {
                let Expr::Name(base) = subscript.value.as_ref() else { return true };
                let keyed_by_name = matches!(subscript.slice.as_ref(), Expr::StringLiteral(_));
                let base = base.id.as_str();
                if keyed_by_name && self.scope.is_captured(base) && self.scope.file.item_assigned.contains(base) {
                    self.found(expr, format!("`{read}`"), true);
                    return false;
                }
                true
            }
            Expr::Attribute(attr) if attr.ctx == ExprContext::Load => match self.scope.reads_state(self.model, attr) {
                Some(is_flag) => {
                    self.found(expr, format!("`{read}`"), is_flag);
                    false
                }
                None => true,
            },
            _ => true,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bindings {
    /// Parameters, assignment, loop and `with` targets, imports, nested defs and classes.
    Everything,
    /// Parameters and assignment targets only: imports and defs are not state.
    Assignments,
}

/// The names a function binds, and those it binds more than once.
fn bindings(node: FunctionNode, kind: Bindings) -> (HashSet<String>, HashSet<String>) {
    let mut collector = BindingCollector { kind, ..BindingCollector::default() };
    if let Some(parameters) = node.parameters() {
        for parameter in parameters.iter() {
            collector.bind(parameter.name().id.as_str());
        }
    }
    match node {
        FunctionNode::Def(def) => collector.visit_body(&def.body),
        FunctionNode::Lambda(lambda) => collector.visit_expr(&lambda.body),
    }
    (collector.once, collector.twice)
}

/// The names a function binds after `offset` (where a def nested in it starts), or anywhere in a
/// loop around `offset`, which runs them again after the def. Nested defs and classes are skipped.
fn bound_after(node: FunctionNode, offset: TextSize) -> HashSet<String> {
    struct Later {
        offset: TextSize,
        /// Inside a loop whose body holds `offset`.
        around: usize,
        names: HashSet<String>,
    }
    // A visitor of its own: the bindings of an enclosing function after a nested def, eager code included.
    impl<'a> Visitor<'a> for Later {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            let around = match stmt {
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return,
                Stmt::For(_) | Stmt::While(_) => stmt.range().contains(self.offset),
                _ => false,
            };
            self.around += usize::from(around);
            walk_stmt(self, stmt);
            self.around -= usize::from(around);
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                Expr::Name(name) if name.ctx == ExprContext::Store => {
                    if self.around > 0 || name.start() > self.offset {
                        self.names.insert(name.id.to_string());
                    }
                }
                Expr::Lambda(_) => {}
                _ => walk_expr(self, expr),
            }
        }
    }
    let mut later = Later { offset, around: 0, names: HashSet::default() };
    if let FunctionNode::Def(def) = node {
        later.visit_body(&def.body);
    }
    later.names
}

/// Module-level variables (assigned, not imported or defined) and those assigned twice.
fn module_variables(suite: &[Stmt]) -> (HashSet<String>, HashSet<String>) {
    let mut collector = BindingCollector { kind: Bindings::Assignments, ..BindingCollector::default() };
    collector.visit_body(suite);
    (collector.once, collector.twice)
}

fn item_assigned_names(suite: &[Stmt]) -> HashSet<String> {
    #[derive(Default)]
    struct ItemAssignments(HashSet<String>);
    impl ItemAssignments {
        fn record(&mut self, target: &Expr) {
            if let Expr::Subscript(subscript) = target
                && let Expr::Name(name) = subscript.value.as_ref() {
                    self.0.insert(name.id.to_string());
                }
        }
    }
    // A visitor of its own: module-level setup code, which the checker never walks.
    impl<'a> Visitor<'a> for ItemAssignments {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            match stmt {
                Stmt::Assign(assign) => assign.targets.iter().for_each(|t| self.record(t)),
                Stmt::AugAssign(assign) => self.record(&assign.target),
                Stmt::Delete(delete) => delete.targets.iter().for_each(|t| self.record(t)),
                _ => {}
            }
            walk_stmt(self, stmt);
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Call(call) = expr
                && let Expr::Attribute(method) = call.func.as_ref()
                    && let (
                        Expr::Name(name),
                        "update" | "setdefault" | "pop" | "popitem" | "clear" | "append" | "extend" | "insert"
                        | "remove" | "add" | "discard",
                    ) = (method.value.as_ref(), method.attr.id.as_str())
                    {
                        self.0.insert(name.id.to_string());
                    }
            walk_expr(self, expr);
        }
    }
    let mut found = ItemAssignments::default();
    found.visit_body(suite);
    found.0
}

/// The names declared `global`/`nonlocal` in some function, and those of them that the declaring
/// function assigns (`global x; x = ...`): only those are rebound there; the others are at most
/// written into.
fn declared_nonlocal_or_global(model: &FileModel) -> (HashSet<String>, HashSet<String>) {
    /// One function's own declarations (nested defs and classes are scopes of their own).
    #[derive(Default)]
    struct Declarations(HashSet<String>);
    // A visitor of its own: one function's own declarations, eager code included.
    impl<'a> Visitor<'a> for Declarations {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            match stmt {
                Stmt::Global(global) => self.0.extend(global.names.iter().map(|n| n.id.to_string())),
                Stmt::Nonlocal(nonlocal) => self.0.extend(nonlocal.names.iter().map(|n| n.id.to_string())),
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                _ => walk_stmt(self, stmt),
            }
        }
        fn visit_expr(&mut self, _expr: &'a Expr) {}
    }
    let mut declared = HashSet::default();
    let mut reassigned = HashSet::default();
    for function in &model.functions {
        let FunctionNode::Def(def) = function.node else { continue };
        let mut declarations = Declarations::default();
        declarations.visit_body(&def.body);
        if declarations.0.is_empty() {
            continue;
        }
        let (assigned, _) = bindings(function.node, Bindings::Assignments);
        for name in declarations.0 {
            if assigned.contains(&name) {
                reassigned.insert(name);
            } else {
                declared.insert(name);
            }
        }
    }
    declared.retain(|name| !reassigned.contains(name));
    (declared, reassigned)
}

struct BindingCollector {
    once: HashSet<String>,
    twice: HashSet<String>,
    kind: Bindings,
}

impl Default for BindingCollector {
    fn default() -> Self {
        Self { once: HashSet::default(), twice: HashSet::default(), kind: Bindings::Everything }
    }
}

impl BindingCollector {
    fn bind(&mut self, name: &str) {
        if !self.once.insert(name.to_string()) {
            self.twice.insert(name.to_string());
        }
    }
}

// A visitor of its own: the names a function or the module binds, eager code included.
impl<'a> Visitor<'a> for BindingCollector {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let everything = self.kind == Bindings::Everything;
        match stmt {
            // A nested scope's own names are not this function's.
            Stmt::FunctionDef(ast::StmtFunctionDef { name, .. }) | Stmt::ClassDef(ast::StmtClassDef { name, .. }) => {
                if everything {
                    self.bind(name.id.as_str());
                }
            }
            Stmt::Import(ast::StmtImport { names, .. }) | Stmt::ImportFrom(ast::StmtImportFrom { names, .. }) => {
                if everything {
                    for alias in names {
                        let bound = alias.asname.as_ref().unwrap_or(&alias.name).id.as_str();
                        self.bind(bound.split('.').next().unwrap_or(bound));
                    }
                }
            }
            _ => walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(name) if name.ctx == ExprContext::Store => self.bind(name.id.as_str()),
            // A lambda's own parameters are not this function's names.
            Expr::Lambda(_) => {}
            _ => walk_expr(self, expr),
        }
    }
}

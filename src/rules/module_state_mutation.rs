//! TCF203 module-state-mutation: compiled code that changes a Python number or bool attribute of
//! the module (`self.step += 1`, `self.calls = self.calls + 1`, `self.warmed_up = True`). Dynamo
//! treats such attributes as constants and guards on their value: an int counter recompiles on
//! every call until the recompile limit (8), then the frame runs eagerly. The fix (unsafe) makes
//! an int counter a 0-d buffer updated out of place, which Dynamo traces as a graph input.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_text_size::Ranged;

use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::text::{stands_alone, torch_name};
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled::compiled_code::Site;
use crate::model::file::FileModel;
use crate::model::file::module::is_self;
use crate::model::file::{method_body, self_assignments};
use crate::model::compiled::reach::describe;
use crate::model::tensors::scalars::{ScalarAttribute, ScalarKind, scalar_attributes, scalar_kind};
use crate::rules::check::{Checker, Function, Hooks, RegionHooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF203",
    name: "module-state-mutation",
    summary: "keep changing module counters in buffers",
    explanation: include_str!("../../codemods/module-state-mutation/README.md"),
    hazard: "Compiled code changes a Python int, float or bool attribute of the module.",
    why: "Dynamo treats a module's scalar attributes as constants and guards on their value, so a counter \
              recompiles on every call and after the recompile limit the frame runs eagerly.",
    category: Category::Recompile,
    fixes: &[Safety::Unsafe],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Region(start);

/// How compiled code changes a scalar attribute.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    /// From its own value (`+=`, `self.x = self.x + 1`, `self.flag = not self.flag`): a new value
    /// on every call, for numbers.
    Update,
    /// To a literal (`self.warmed_up = True`): one new value.
    Set,
}

struct Mutation<'a> {
    function: usize,
    stmt: &'a Stmt,
    change: Change,
}

fn start<'c, 'a>(checker: &'c Checker<'a>) -> Box<dyn RegionHooks<'a> + 'c> {
    Box::new(Changes { checker, classes: HashMap::default(), class: None, derived: Vec::new() })
}

/// What the compiled code of each module class does with its scalar attributes, found in the
/// checker's walk of the class's region functions (in source order).
struct Changes<'c, 'a> {
    checker: &'c Checker<'a>,
    classes: HashMap<usize, ClassChanges<'a>>,
    /// The class of the function being walked.
    class: Option<usize>,
    /// In the function being walked, by attribute (as `ClassChanges::names` lists them): the
    /// locals computed from it (`do_log = self.step % 100 == 0`).
    derived: Vec<HashSet<String>>,
}

struct ClassChanges<'a> {
    attributes: Vec<ScalarAttribute<'a>>,
    /// Each attribute's name once, with whether its first assignment in `__init__` is an int.
    names: Vec<(String, bool)>,
    /// By attribute: where the compiled code changes `self.<name>`.
    mutations: HashMap<String, Vec<Mutation<'a>>>,
    /// The attributes the compiled code reads.
    read: HashSet<String>,
    /// By int attribute: the first code that turns it into control flow (`control_flow_read`).
    control_flow: HashMap<String, String>,
}

impl<'a> ClassChanges<'a> {
    fn new(attributes: Vec<ScalarAttribute<'a>>) -> Self {
        let mut seen = HashSet::default();
        let names = attributes
            .iter()
            .filter(|attribute| seen.insert(attribute.init.attr.as_str()))
            .map(|attribute| (attribute.init.attr.to_string(), attribute.kind == ScalarKind::Int))
            .collect();
        let (mutations, read, control_flow) = Default::default();
        Self { attributes, names, mutations, read, control_flow }
    }
}

impl<'a> RegionHooks<'a> for Changes<'_, 'a> {
    fn start(&mut self, function: &Function<'_, 'a>) -> bool {
        let model = self.checker.model;
        self.class = model.self_class(function.id).filter(|&class| model.classes[class].is_module);
        let Some(class) = self.class else { return false };
        let changes = self.classes.entry(class).or_insert_with(|| ClassChanges::new(scalar_attributes(model, class)));
        self.derived = vec![HashSet::default(); changes.names.len()];
        !changes.names.is_empty()
    }

    fn stmt(&mut self, function: &Function<'_, 'a>, stmt: &'a Stmt, _site: Site) {
        let Some(changes) = self.class.and_then(|class| self.classes.get_mut(&class)) else { return };
        let text = self.checker.model.source.text.as_str();
        let ClassChanges { names, mutations, control_flow, .. } = changes;
        for ((name, int), derived) in names.iter().zip(&mut self.derived) {
            if let Some(change) = change_of(stmt, name) {
                mutations.entry(name.clone()).or_default().push(Mutation { function: function.id, stmt, change });
            }
            if *int {
                control_flow_stmt(text, stmt, name, derived, control_flow);
            }
        }
    }

    fn expr(&mut self, _function: &Function<'_, 'a>, expr: &'a Expr, _site: Site) -> bool {
        let Some(changes) = self.class.and_then(|class| self.classes.get_mut(&class)) else { return true };
        let text = self.checker.model.source.text.as_str();
        let ClassChanges { names, read, control_flow, .. } = changes;
        for ((name, int), derived) in names.iter().zip(&self.derived) {
            if matches!(expr, Expr::Attribute(attr) if attr.ctx == ExprContext::Load) && is_attribute(expr, name) {
                read.insert(name.clone());
            }
            if *int {
                control_flow_expr(text, expr, name, derived, control_flow);
            }
        }
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let model = self.checker.model;
        let mut classes: Vec<(&usize, &ClassChanges)> = self.classes.iter().collect();
        classes.sort_by_key(|(class, _)| **class);
        for (&class, changes) in classes {
            let attributes = &changes.attributes;
            let mut seen = HashSet::default();
            for attribute in attributes {
                let name = attribute.init.attr.as_str();
                if !seen.insert(name) {
                    continue; // assigned twice in `__init__`: one report
                }
                let mutations = changes.mutations.get(name).map_or(&[][..], Vec::as_slice);
                let updated = mutations.iter().any(|m| m.change == Change::Update);
                let fix = (updated && attribute.kind == ScalarKind::Int).then(|| {
                    counter_fix(model, class, changes.control_flow.get(name), attribute, attributes, mutations)
                });
                for mutation in mutations {
                    // A literal set next to an update is the update's business; a set never read
                    // by compiled code is never guarded on (measured: no recompile).
                    if mutation.change == Change::Set && (updated || !changes.read.contains(name)) {
                        continue;
                    }
                    diagnostics.push(report(model, attribute, mutation, fix.clone()));
                }
            }
        }
    }
}

fn report(
    model: &FileModel,
    attribute: &ScalarAttribute,
    mutation: &Mutation,
    fix: Option<Result<Fix, String>>,
) -> Diagnostic {
    let code = first_line(&model.source.text[mutation.stmt.range()]);
    let place = describe(model, mutation.function);
    let (severity, cost) = match (attribute.kind, mutation.change) {
        (ScalarKind::Int, Change::Update) => (
            Severity::High,
            "Dynamo treats a module's int attributes as constants, so every call recompiles; after 8 recompiles the frame runs eagerly",
        ),
        (ScalarKind::Float, Change::Update) => {
            (Severity::Medium, "Dynamo guards on the float and recompiles once before it treats it as dynamic")
        }
        _ => (Severity::Low, "Dynamo guards on its value and compiles one version per value it takes"),
    };
    let kind = match attribute.kind {
        ScalarKind::Int => "int",
        ScalarKind::Float => "float",
        ScalarKind::Bool => "bool",
    };
    let message = format!("`{code}` in {place} changes the {kind} attribute `{}`: {cost}", attribute.init.attr);
    let diagnostic = Diagnostic::new(&RULE, mutation.stmt.range(), message).with_severity(severity);
    match fix {
        Some(Ok(fix)) => diagnostic.with_fix(fix),
        Some(Err(reason)) => diagnostic.without_fix(reason),
        None if attribute.kind == ScalarKind::Float => diagnostic.without_fix(
            "a tensor buffer would compute in float32 where the Python float is float64; if one recompile matters, keep the value in a float64 buffer",
        ),
        None if attribute.kind == ScalarKind::Bool => diagnostic.without_fix(
            "set the flag outside the compiled region if a second graph matters: two values cost at most one \
             more graph, and as a tensor every branch on it would break the graph",
        ),
        None => diagnostic.without_fix(
            "each value it is set to compiles a version: set it outside the compiled region, or keep a value that \
             changes on every call in a 0-d buffer",
        ),
    }
}

fn first_line(code: &str) -> String {
    match code.lines().next() {
        Some(line) if line.len() < code.len() => format!("{line} ..."),
        _ => code.to_string(),
    }
}

/// How `stmt` changes `self.<name>`, if it does.
fn change_of(stmt: &Stmt, name: &str) -> Option<Change> {
    match stmt {
        Stmt::AugAssign(assign) if is_attribute(&assign.target, name) => Some(Change::Update),
        Stmt::Assign(assign) if assign.targets.iter().any(|t| is_attribute(t, name)) => {
            if reads(&assign.value, name) {
                Some(Change::Update)
            } else if scalar_kind(&assign.value).is_some() {
                Some(Change::Set)
            } else {
                None // anything else is no longer a Python scalar (TCF207's business)
            }
        }
        _ => None,
    }
}

/// `self.<name>`.
fn is_attribute(expr: &Expr, name: &str) -> bool {
    matches!(expr, Expr::Attribute(attr) if attr.attr.id.as_str() == name && is_self(&attr.value))
}

/// Whether `expr` reads `self.<name>`.
fn reads(expr: &Expr, name: &str) -> bool {
    struct Finder<'n> {
        name: &'n str,
        found: bool,
    }
    // A visitor of its own: a search of one expression, asked when its statement is judged.
    impl<'a> Visitor<'a> for Finder<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if matches!(expr, Expr::Attribute(attr) if attr.ctx == ExprContext::Load) && is_attribute(expr, self.name) {
                self.found = true;
            }
            if !self.found {
                walk_expr(self, expr);
            }
        }
    }
    let mut finder = Finder { name, found: false };
    finder.visit_expr(expr);
    finder.found
}

/// `self.step = 0` in `__init__` becomes a 0-d buffer, and `self.step += 1` becomes
/// `self.step = self.step + 1`: out of place, because an in-place update of a tensor that
/// autograd saved (`y = x * self.step` before the update) fails in backward.
fn counter_fix(
    model: &FileModel,
    class: usize,
    control_flow: Option<&String>,
    attribute: &ScalarAttribute,
    attributes: &[ScalarAttribute],
    mutations: &[Mutation],
) -> Result<Fix, String> {
    let name = attribute.init.attr.as_str();
    let text = &model.source.text;
    if let Some(reason) = control_flow {
        return Err(format!(
            "keep the counter out of the compiled code, or make `{reason}` a tensor operation: as a tensor the \
             counter would break the graph there"
        ));
    }
    if attributes.iter().filter(|a| a.init.attr == name).count() != 1 || !attribute.init.top_level {
        return Err(format!("`__init__` sets `{name}` more than once or under a condition: make it a buffer by hand"));
    }
    let init = attribute.init.method;
    let assigned_elsewhere = self_assignments(model, class).iter().find(|assignment| {
        assignment.attr == name
            && assignment.method != init
            && !mutations.iter().any(|m| std::ptr::eq(m.stmt, assignment.stmt) && m.change == Change::Update)
    });
    if let Some(assignment) = assigned_elsewhere {
        return Err(format!(
            "`{}` also assigns `{name}`; a buffer only takes tensors, so that assignment would need changing too",
            model.function(assignment.method).name
        ));
    }
    if !after_super_init(model, init, attribute.init.stmt) {
        return Err(
            "`__init__` sets it before `super().__init__()`, where buffers cannot be registered yet".to_string()
        );
    }
    if !stands_alone(text, attribute.init.stmt.range()) {
        return Err(
            "its assignment in `__init__` shares its line with other code: make it a buffer by hand".to_string()
        );
    }
    let (torch, import) = torch_name(model);
    let literal = &text[attribute.literal.range()];
    let mut edits = vec![Edit::replace(
        attribute.init.stmt.range(),
        format!("self.register_buffer(\"{name}\", {torch}.tensor({literal}), persistent=False)"),
    )];
    for mutation in mutations {
        if let Stmt::AugAssign(assign) = mutation.stmt {
            edits.push(out_of_place(text, assign, name));
        }
    }
    edits.extend(import);
    let title = format!(
        "Make `{name}` a 0-d buffer that forward updates out of place (unsafe: code outside forward that reads \
         `.{name}` now gets a tensor)"
    );
    Ok(Fix::new(title, Safety::Unsafe, edits))
}

/// `self.step += n` as `self.step = self.step + n`.
fn out_of_place(text: &str, assign: &ast::StmtAugAssign, name: &str) -> Edit {
    let value = &text[assign.value.range()];
    let value = match assign.value.as_ref() {
        Expr::Name(_) | Expr::NumberLiteral(_) | Expr::Attribute(_) | Expr::Call(_) | Expr::Subscript(_) => {
            value.to_string()
        }
        _ => format!("({value})"),
    };
    Edit::replace(assign.range(), format!("self.{name} = self.{name} {} {value}", assign.op.as_str()))
}

/// Whether the assignment in `__init__` comes after its `super().__init__(...)` call.
fn after_super_init(model: &FileModel, init: usize, assignment: &Stmt) -> bool {
    let body = method_body(model, init);
    let is_super_init = |stmt: &Stmt| {
        let Stmt::Expr(expr) = stmt else { return false };
        let Expr::Call(call) = expr.value.as_ref() else { return false };
        matches!(call.func.as_ref(), Expr::Attribute(method) if method.attr.id.as_str() == "__init__")
    };
    let super_at = body.iter().position(is_super_init);
    let assigned_at = body.iter().position(|stmt| std::ptr::eq(stmt, assignment));
    matches!((super_at, assigned_at), (Some(s), Some(a)) if s < a)
}

/// Code that turns `self.<name>` (or a local computed from it) into Python control flow: an
/// `if`/`while`/ternary/`assert` test, a `range`, an index, `int()`. As a tensor it becomes a
/// data-dependent branch or shape. The text of the first one found goes in `found`; `derived`
/// holds the locals of the function computed from the attribute (`do_log = self.step % 100 == 0`).
fn control_flow_stmt(
    text: &str,
    stmt: &Stmt,
    name: &str,
    derived: &mut HashSet<String>,
    found: &mut HashMap<String, String>,
) {
    let mut sink = |expr: &Expr| sink(text, expr, name, derived, found);
    match stmt {
        Stmt::If(s) => sink(&s.test),
        Stmt::While(s) => sink(&s.test),
        Stmt::Assert(s) => sink(&s.test),
        Stmt::For(s) => sink(&s.iter),
        Stmt::Assign(assign) if depends(&assign.value, name, derived) => {
            for target in &assign.targets {
                if let Expr::Name(local) = target {
                    derived.insert(local.id.to_string());
                }
            }
        }
        _ => {}
    }
}

/// `control_flow_stmt` for the expressions of the compiled code.
fn control_flow_expr(text: &str, expr: &Expr, name: &str, derived: &HashSet<String>, found: &mut HashMap<String, String>) {
    let mut sink = |expr: &Expr| sink(text, expr, name, derived, found);
    match expr {
        Expr::If(e) => sink(&e.test),
        Expr::BoolOp(e) => e.values.iter().for_each(sink),
        Expr::Subscript(e) => sink(&e.slice),
        Expr::FString(_) => sink(expr),
        Expr::Call(call) => {
            let python = matches!(call.func.as_ref(), Expr::Name(f)
                if matches!(f.id.as_str(), "range" | "int" | "float" | "bool" | "str" | "len" | "round" | "min" | "max"));
            if python {
                call.arguments.args.iter().for_each(sink);
            }
        }
        _ => {}
    }
}

/// Notes `expr` as the control flow the attribute turns into, unless one was found before.
fn sink(text: &str, expr: &Expr, name: &str, derived: &HashSet<String>, found: &mut HashMap<String, String>) {
    if !found.contains_key(name) && depends(expr, name, derived) {
        found.insert(name.to_string(), first_line(&text[expr.range()]));
    }
}

fn depends(expr: &Expr, name: &str, derived: &HashSet<String>) -> bool {
    reads(expr, name) || mentions_any(expr, derived)
}

fn mentions_any(expr: &Expr, names: &HashSet<String>) -> bool {
    struct Finder<'n> {
        names: &'n HashSet<String>,
        found: bool,
    }
    // A visitor of its own: a search of one expression, asked when its statement is judged.
    impl<'a> Visitor<'a> for Finder<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if matches!(expr, Expr::Name(name) if self.names.contains(name.id.as_str())) {
                self.found = true;
            }
            if !self.found {
                walk_expr(self, expr);
            }
        }
    }
    if names.is_empty() {
        return false;
    }
    let mut finder = Finder { names, found: false };
    finder.visit_expr(expr);
    finder.found
}

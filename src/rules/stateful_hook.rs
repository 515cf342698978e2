//! TCF202 stateful-hook: a forward hook or pre-hook whose body reads mutable state — a closure
//! variable's attributes (`collector.capture_activation_norms`), `nonlocal`, a mutated global, or
//! an attribute of `self` that another method changes. Dynamo guards on that state
//! (`...__closure__[0].cell_contents.capture_activation_norms == False`): every flip recompiles,
//! and at the recompile limit the frame runs eagerly. The fix decorates the hook with
//! `@torch.compiler.disable`: it runs eagerly (one graph break per call), guards vanish.

use std::collections::HashSet;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::Diagnostic;
use crate::fix::text::{insert_decorator, torch_name};
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled_code::{CompiledCodeVisitor, Site, visit_compiled};
use crate::model::file::{FileModel, FunctionNode};
use crate::model::module::self_assignments;
use crate::model::reach::describe;
use crate::rules::{Category, Checker, Rule};

pub static RULE: Rule = Rule {
    code: "TCF202",
    name: "stateful-hook",
    category: Category::Recompile,
    check,
};

fn check(checker: &Checker) -> Vec<Diagnostic> {
    let model = checker.model;
    let mut hooks: Vec<(usize, usize)> = model
        .hooks
        .iter()
        .map(|hook| (hook.function, hook.bound_args))
        .filter(|(f, _)| model.in_region(*f))
        .collect();
    hooks.sort();
    hooks.dedup_by_key(|(function, _)| *function);
    let mut diagnostics = Vec::new();
    for (hook, bound_args) in hooks {
        let Some((range, state)) = first_state_read(model, hook, bound_args) else {
            continue;
        };
        let message = format!(
            "{} reads {state}: Dynamo guards on it, so every change recompiles (and after 8, the frame runs eagerly)",
            describe(model, hook)
        );
        diagnostics.push(Diagnostic::new(&RULE, range, message).with_fix(disable_fix(model, hook)));
    }
    diagnostics
}

fn disable_fix(model: &FileModel, hook: usize) -> Fix {
    let (torch, import) = torch_name(model);
    let disable = format!("{torch}.compiler.disable");
    let text = &model.source.text;
    let mut edits: Vec<Edit> = match model.function(hook).node {
        FunctionNode::Def(def) => {
            let top = def
                .decorator_list
                .first()
                .map_or(def.start(), |d| d.start());
            vec![insert_decorator(text, top, &disable)]
        }
        FunctionNode::Lambda(lambda) => {
            vec![
                Edit::insert(lambda.start(), format!("{disable}(")),
                Edit::insert(lambda.end(), ")"),
            ]
        }
    };
    edits.extend(import);
    Fix::new(
        format!("Run the hook eagerly with `@{disable}`"),
        Safety::Safe,
        edits,
    )
}

/// The first read of mutable state in the hook's compiled code, described for the message.
fn first_state_read(
    model: &FileModel,
    hook: usize,
    bound_args: usize,
) -> Option<(TextRange, String)> {
    let function = model.function(hook);
    let scope = Scope::of(model, hook, bound_args);
    if let FunctionNode::Def(def) = function.node {
        if let Some(declaration) = def
            .body
            .iter()
            .find(|s| matches!(s, Stmt::Nonlocal(_) | Stmt::Global(_)))
        {
            let keyword = if matches!(declaration, Stmt::Nonlocal(_)) {
                "nonlocal"
            } else {
                "global"
            };
            return Some((declaration.range(), format!("`{keyword}` state")));
        }
    }
    let mut finder = StateReadFinder {
        model,
        scope: &scope,
        hook,
        found: None,
    };
    visit_compiled(function.node.body(), &mut finder);
    finder.found
}

/// The names a hook sees, sorted by where they come from.
struct Scope {
    /// The hook's own locals and parameters that hold its inputs.
    locals: HashSet<String>,
    /// Parameters bound at registration: `functools.partial` arguments and defaulted parameters.
    captured_parameters: HashSet<String>,
    /// Bound in an enclosing function: closure variables.
    closure: HashSet<String>,
    /// Assigned at module level (imports, defs and classes are not state).
    globals: HashSet<String>,
    /// Rebound after being captured: declared `nonlocal`/`global` somewhere, or assigned twice.
    rebound: HashSet<String>,
    /// For a method hook: attributes of `self` that methods other than `__init__` assign.
    mutable_self_attributes: HashSet<String>,
}

impl Scope {
    fn of(model: &FileModel, hook: usize, bound_args: usize) -> Self {
        let function = model.function(hook);
        let parameters: Vec<&ast::ParameterWithDefault> = function
            .node
            .parameters()
            .map(|p| p.iter_non_variadic_params().collect())
            .unwrap_or_default();
        let is_method = function.class.is_some();
        let captured_parameters = parameters
            .iter()
            .enumerate()
            .filter(|(i, p)| {
                p.default.is_some()
                    || (*i >= usize::from(is_method) && *i < bound_args + usize::from(is_method))
            })
            .map(|(_, p)| p.parameter.name.id.to_string())
            .collect();
        let mut locals = counted_bindings(function.node, false).0;
        locals.remove("self");

        let mut closure = HashSet::new();
        let mut rebound = declared_nonlocal_or_global(model);
        let mut parent = function.parent;
        while let Some(enclosing) = parent {
            // Imports and defs of the enclosing function are not state.
            let (bound, twice) = counted_bindings(model.function(enclosing).node, true);
            closure.extend(bound);
            rebound.extend(twice);
            parent = model.function(enclosing).parent;
        }
        let (globals, twice) = module_variables(model.source.parsed.suite());
        rebound.extend(twice);

        let mutable_self_attributes = match function.class {
            Some(class) => self_assignments(model, class)
                .into_iter()
                .filter(|a| model.function(a.method).name != "__init__")
                .map(|a| a.attr)
                .collect(),
            None => HashSet::new(),
        };
        Self {
            locals,
            captured_parameters,
            closure,
            globals,
            rebound,
            mutable_self_attributes,
        }
    }

    fn is_outside(&self, name: &str) -> bool {
        !self.locals.contains(name) || self.captured_parameters.contains(name)
    }

    /// An object whose attributes or items the hook reads: any captured name (but a logger:
    /// logging calls are TCF101's business).
    fn holds_mutable_object(&self, name: &str) -> bool {
        if name.to_ascii_lowercase().contains("log") {
            return false;
        }
        self.captured_parameters.contains(name)
            || (!self.locals.contains(name)
                && (self.closure.contains(name) || self.globals.contains(name)))
    }

    /// A captured name that itself changes.
    fn is_rebound(&self, name: &str) -> bool {
        self.is_outside(name)
            && (self.closure.contains(name) || self.globals.contains(name))
            && self.rebound.contains(name)
    }
}

struct StateReadFinder<'s, 'm, 'a> {
    model: &'m FileModel<'a>,
    scope: &'s Scope,
    hook: usize,
    found: Option<(TextRange, String)>,
}

impl<'a> CompiledCodeVisitor<'a> for StateReadFinder<'_, '_, '_> {
    fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
        if self.found.is_some() {
            return false;
        }
        let text = &self.model.source.text;
        let (base, ctx) = match expr {
            Expr::Attribute(attr) => (attr.value.as_ref(), attr.ctx),
            Expr::Subscript(subscript) => (subscript.value.as_ref(), subscript.ctx),
            Expr::Name(name)
                if name.ctx == ExprContext::Load && self.scope.is_rebound(name.id.as_str()) =>
            {
                self.found = Some((
                    expr.range(),
                    format!("`{}`, which is reassigned elsewhere", name.id),
                ));
                return false;
            }
            _ => return true,
        };
        let Expr::Name(name) = base else { return true };
        if ctx != ExprContext::Load {
            return true;
        }
        let name = name.id.as_str();
        let stateful = if name == "self" {
            matches!(expr, Expr::Attribute(attr) if self.scope.mutable_self_attributes.contains(attr.attr.id.as_str()))
                && self.model.function(self.hook).class.is_some()
        } else {
            self.scope.holds_mutable_object(name)
        };
        if stateful {
            self.found = Some((
                expr.range(),
                format!(
                    "`{}`, state captured from outside the hook",
                    &text[expr.range()]
                ),
            ));
            return false;
        }
        true
    }
}

/// The names a function binds — parameters, assignment, loop and `with` targets, and unless
/// `only_assignments`, imports and nested defs — and those it binds more than once.
fn counted_bindings(
    node: FunctionNode,
    only_assignments: bool,
) -> (HashSet<String>, HashSet<String>) {
    let mut collector = BindingCollector {
        only_assignments,
        ..BindingCollector::default()
    };
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

/// Module-level variables (assigned, not imported or defined) and those assigned twice.
fn module_variables(suite: &[Stmt]) -> (HashSet<String>, HashSet<String>) {
    let mut collector = BindingCollector {
        only_assignments: true,
        ..BindingCollector::default()
    };
    collector.visit_body(suite);
    (collector.once, collector.twice)
}

fn declared_nonlocal_or_global(model: &FileModel) -> HashSet<String> {
    #[derive(Default)]
    struct Declarations(HashSet<String>);
    impl<'a> Visitor<'a> for Declarations {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            match stmt {
                Stmt::Global(global) => {
                    self.0.extend(global.names.iter().map(|n| n.id.to_string()))
                }
                Stmt::Nonlocal(nonlocal) => self
                    .0
                    .extend(nonlocal.names.iter().map(|n| n.id.to_string())),
                _ => walk_stmt(self, stmt),
            }
        }
        fn visit_expr(&mut self, _expr: &'a Expr) {}
    }
    let mut declarations = Declarations::default();
    declarations.visit_body(model.source.parsed.suite());
    declarations.0
}

#[derive(Default)]
struct BindingCollector {
    once: HashSet<String>,
    twice: HashSet<String>,
    /// Count only assignments (module level: imports, defs and classes are not state).
    only_assignments: bool,
}

impl BindingCollector {
    fn bind(&mut self, name: &str) {
        if !self.once.insert(name.to_string()) {
            self.twice.insert(name.to_string());
        }
    }
}

impl<'a> Visitor<'a> for BindingCollector {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(ast::StmtFunctionDef { name, .. })
            | Stmt::ClassDef(ast::StmtClassDef { name, .. }) => {
                if !self.only_assignments {
                    self.bind(name.id.as_str());
                }
            }
            Stmt::Import(ast::StmtImport { names, .. })
            | Stmt::ImportFrom(ast::StmtImportFrom { names, .. }) => {
                if !self.only_assignments {
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
            // A lambda's parameters are its own.
            Expr::Lambda(_) => {}
            _ => walk_expr(self, expr),
        }
    }
}

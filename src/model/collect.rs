//! The one walk that fills a file's model: its functions and classes with their scopes, the
//! calls that register hooks or compile functions (resolved once every function is known), and
//! each class's assignments to `self`.

use ruff_python_ast::visitor::{Visitor, walk_body, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::model::compiled::hooks::{self, PendingCall};
use crate::model::compiled::uncalled_setters;
use crate::model::compiled::untraced::{self, is_untraced_decorator};
use crate::model::file::dead_code::DeadCode;
use crate::model::file::imports::{Imports, dotted_name};
use crate::model::file::method_body;
use crate::model::file::module::self_attributes;
use crate::model::file::{Accessor, Class, FileModel, Function, FunctionNode, SelfAssignment};
use crate::source::SourceFile;

impl<'a> FileModel<'a> {
    /// The structure of a file; `region` stays empty until `reach::mark_region`.
    pub fn build(source: &'a SourceFile, module_name: &str) -> Self {
        let suite = source.parsed.suite();
        let is_package = source.path.file_stem().is_some_and(|stem| stem == "__init__");
        let mut model = FileModel::new(source, module_name, Imports::collect(suite, module_name, is_package));
        let untraced_decorators = untraced::untraced_decorators(suite, &model.imports);
        let mut collector = ScopeCollector {
            model: &mut model,
            scope: Scope::default(),
            pending: Vec::new(),
            loop_depth: 0,
            untraced_decorators: &untraced_decorators,
        };
        collector.visit_body(suite);
        let pending = std::mem::take(&mut collector.pending);
        for name in untraced::marked_after_definition(suite) {
            if let Some(function) = model.resolve_name(&name, None) {
                model.functions[function].disabled = true;
            }
        }
        for call in pending {
            hooks::resolve(&mut model, call);
        }
        model.self_assignments = collect_self_assignments(&model);
        (model.dead_code, model.names_used) = DeadCode::find(source, &model.imports);
        model.uncalled_setters = uncalled_setters::find(&model);
        model
    }
}

/// The assignments to `self` attributes in each class's methods.
fn collect_self_assignments<'a>(model: &FileModel<'a>) -> Vec<Vec<SelfAssignment<'a>>> {
    (0..model.classes.len()).map(|class| collect(model, class)).collect()
}

fn collect<'a>(model: &FileModel<'a>, class: usize) -> Vec<SelfAssignment<'a>> {
    let mut found = Vec::new();
    for &method in model.methods_of(class) {
        let body = method_body(model, method);
        let mut collector = AssignmentCollector { method, depth: 0, found: &mut found };
        collector.visit_body(body);
    }
    found
}

struct AssignmentCollector<'a, 'f> {
    method: usize,
    /// How many bodies the walk is in: 1 is the method's own.
    depth: usize,
    found: &'f mut Vec<SelfAssignment<'a>>,
}

impl<'a> Visitor<'a> for AssignmentCollector<'a, '_> {
    fn visit_body(&mut self, body: &'a [Stmt]) {
        self.depth += 1;
        walk_body(self, body);
        self.depth -= 1;
    }

    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let targets: Vec<&Expr> = match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return,
            Stmt::Assign(assign) => assign.targets.iter().collect(),
            Stmt::AugAssign(assign) => vec![assign.target.as_ref()],
            Stmt::AnnAssign(assign) => vec![assign.target.as_ref()],
            _ => Vec::new(),
        };
        let top_level = self.depth == 1;
        for attr in targets.into_iter().flat_map(self_attributes) {
            self.found.push(SelfAssignment { attr, method: self.method, stmt, top_level });
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, _expr: &'a Expr) {}
}

#[derive(Default, Clone)]
struct Scope {
    class: Option<usize>,
    function: Option<usize>,
    prefix: String,
}

struct ScopeCollector<'m, 'a> {
    model: &'m mut FileModel<'a>,
    scope: Scope,
    pending: Vec<PendingCall<'a>>,
    /// Loops and comprehensions around the current code, within its function.
    loop_depth: usize,
    /// The file's own names that keep Dynamo out of what they decorate (`untraced`).
    untraced_decorators: &'m [String],
}

impl<'a> Visitor<'a> for ScopeCollector<'_, 'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        let in_init = self.in_init();
        self.model.local_state.record_statement(stmt, in_init, self.scope.class.is_some());
        match stmt {
            Stmt::FunctionDef(def) => self.enter_function(def),
            Stmt::ClassDef(class) => self.enter_class(class),
            Stmt::For(_) | Stmt::While(_) => self.in_loop(|this| walk_stmt(this, stmt)),
            _ => walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Call(call) => {
                self.model.calls.push(call);
                let in_init = self.in_init();
                self.model.local_state.record_call(call, in_init);
                let in_loop = self.loop_depth > 0;
                if let Some(pending) = PendingCall::classify(call, self.scope.function, in_loop, &self.model.imports) {
                    self.pending.push(pending);
                }
                walk_expr(self, expr);
            }
            Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => {
                self.in_loop(|this| walk_expr(this, expr));
            }
            _ => walk_expr(self, expr),
        }
    }
}

impl<'a> ScopeCollector<'_, 'a> {
    /// In the code of an `__init__` (a class nested in one included): assignments there set up
    /// state rather than change it.
    fn in_init(&self) -> bool {
        self.scope.function.is_some_and(|function| self.model.functions[function].name == "__init__")
    }

    fn in_loop(&mut self, walk: impl FnOnce(&mut Self)) {
        self.loop_depth += 1;
        walk(self);
        self.loop_depth -= 1;
    }

    fn enter_function(&mut self, def: &'a ast::StmtFunctionDef) {
        let accessor = if self.scope.class.is_some() { property_accessor(def) } else { None };
        // A setter shares its getter's name: it gets a qualname of its own so that the region
        // (keyed by qualname) can hold the getter without it.
        let qualname = match accessor {
            Some(accessor) => format!("{}{}.{}", self.scope.prefix, def.name.id, accessor.as_str()),
            None => format!("{}{}", self.scope.prefix, def.name.id),
        };
        let decorators: Vec<Option<String>> =
            def.decorator_list.iter().map(|d| decorator_name(&d.expression, &self.model.imports)).collect();
        let has = |wanted: fn(&str) -> bool| decorators.iter().flatten().any(|name| wanted(name));
        let untraced = has(is_untraced_decorator)
            || decorators.iter().flatten().any(|name| self.untraced_decorators.contains(name));
        // Decorators imported from the project's other files: the index asks whether they keep
        // Dynamo out (an alias of `torch.compiler.disable` re-exported by a package).
        let imported_decorators = def
            .decorator_list
            .iter()
            .zip(&decorators)
            .filter_map(|(decorator, name)| {
                let name = name.as_ref()?;
                let written = match &decorator.expression {
                    Expr::Call(call) => dotted_name(&call.func),
                    expression => dotted_name(expression),
                };
                let imported = written.as_ref() != Some(name);
                (imported && !name.starts_with("torch.") && !is_known_library(name)).then(|| name.clone())
            })
            .collect();
        let index = self.model.add_function(Function {
            qualname: qualname.clone(),
            name: def.name.id.to_string(),
            node: FunctionNode::Def(def),
            class: self.scope.class,
            parent: self.scope.function,
            disabled: untraced,
            compiled: has(|name| name == "torch.compile"),
            accessor,
            imported_decorators,
        });
        for decorator in &def.decorator_list {
            self.visit_expr(&decorator.expression);
        }
        // The signature runs where the def is, but holds no code of the function's scope: only
        // its calls are recorded.
        let mut signature = CallsIn(&mut self.model.calls);
        if let Some(type_params) = &def.type_params {
            signature.visit_type_params(type_params);
        }
        signature.visit_parameters(&def.parameters);
        if let Some(returns) = &def.returns {
            signature.visit_expr(returns);
        }
        let outer_loops = std::mem::take(&mut self.loop_depth);
        let outer = std::mem::replace(
            &mut self.scope,
            Scope { class: None, function: Some(index), prefix: format!("{qualname}.<locals>.") },
        );
        self.visit_body(&def.body);
        self.scope = outer;
        self.loop_depth = outer_loops;
    }

    fn enter_class(&mut self, class: &'a ast::StmtClassDef) {
        let qualname = format!("{}{}", self.scope.prefix, class.name.id);
        let bases = class.bases().iter().filter_map(|base| self.model.imports.qualified_name(base)).collect();
        let decorators =
            class.decorator_list.iter().filter_map(|d| decorator_name(&d.expression, &self.model.imports)).collect();
        let index = self.model.add_class(Class {
            qualname: qualname.clone(),
            node: class,
            bases,
            decorators,
            is_module: false,
            forward_replaced: false,
            never_built: false,
            outside_compile_scope: false,
            imported_elsewhere: false,
        });
        // Decorators, type parameters and bases are no code of the class's scope: only their calls
        // are recorded.
        let mut header = CallsIn(&mut self.model.calls);
        for decorator in &class.decorator_list {
            header.visit_decorator(decorator);
        }
        if let Some(type_params) = &class.type_params {
            header.visit_type_params(type_params);
        }
        if let Some(arguments) = &class.arguments {
            header.visit_arguments(arguments);
        }
        let function = self.scope.function;
        let outer =
            std::mem::replace(&mut self.scope, Scope { class: Some(index), function, prefix: format!("{qualname}.") });
        self.visit_body(&class.body);
        self.scope = outer;
    }
}

/// Records the calls of code the scope collector does not walk (signatures, class headers), in
/// source order.
struct CallsIn<'c, 'a>(&'c mut Vec<&'a ast::ExprCall>);

impl<'a> Visitor<'a> for CallsIn<'_, 'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr {
            self.0.push(call);
        }
        walk_expr(self, expr);
    }
}

/// `@x.setter` / `@x.deleter` on `def x(...)`: the method is an accessor of property `x`.
fn property_accessor(def: &ast::StmtFunctionDef) -> Option<Accessor> {
    def.decorator_list.iter().find_map(|decorator| {
        let Expr::Attribute(attr) = &decorator.expression else { return None };
        let Expr::Name(property) = attr.value.as_ref() else { return None };
        if property.id != def.name.id {
            return None;
        }
        match attr.attr.id.as_str() {
            "setter" => Some(Accessor::Setter),
            "deleter" => Some(Accessor::Deleter),
            _ => None,
        }
    })
}

/// The qualified name of a decorator, looking through a call (`@torch.compile(mode=...)`).
fn decorator_name(expr: &Expr, imports: &Imports) -> Option<String> {
    match expr {
        Expr::Call(call) => imports.qualified_name(&call.func),
        _ => imports.qualified_name(expr),
    }
}

/// Decorators of the standard library and of common packages, which never keep Dynamo out.
fn is_known_library(name: &str) -> bool {
    let package = name.split('.').next().unwrap_or(name);
    matches!(package, "functools" | "typing" | "abc" | "contextlib" | "dataclasses" | "builtins" | "warnings")
}

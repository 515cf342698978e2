//! One file's structure for torch.compile: its functions (with qualified names and scopes),
//! its classes, its hook registrations, and which functions run in the compiled region.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::model::compiled_code::Body;
use crate::model::hooks::{Hook, PendingCall};
use crate::model::imports::Imports;
use crate::model::module::SelfAssignment;
use crate::model::mutation::StateAttributes;
use crate::model::reach::Reason;
use crate::source::SourceFile;

pub struct FileModel<'a> {
    pub source: &'a SourceFile,
    /// Dotted module name from the path (`models/vlm.py` -> `models.vlm`).
    pub module_name: String,
    pub imports: Imports,
    pub functions: Vec<Function<'a>>,
    pub classes: Vec<Class<'a>>,
    pub hooks: Vec<Hook<'a>>,
    /// Functions that run under torch.compile, and why. Filled by `reach` (which then calls
    /// `index_region`).
    pub region: HashMap<usize, Reason>,
    /// Imported names that are project `nn.Module` classes. Filled by `reach`.
    pub imported_module_classes: HashSet<String>,
    /// Attribute names that hold changing state in the project. Filled by `reach`.
    pub state_attributes: Arc<StateAttributes>,
    /// Lookups kept as functions are added (a file can define tens of thousands of functions):
    /// non-method functions by (enclosing function, name), methods by (class, name), and each
    /// class's methods. The first definition of a name wins.
    in_scope: HashMap<(Option<usize>, String), usize>,
    /// Each class's assignments to `self` attributes (`module::self_assignments`).
    pub(crate) self_assignments: Vec<Vec<SelfAssignment<'a>>>,
    methods: HashMap<(usize, String), usize>,
    methods_of: HashMap<usize, Vec<usize>>,
    /// Classes by their own name (not qualname), the first definition winning.
    classes_by_name: HashMap<String, usize>,
    /// The hooks registered with each function, in registration order.
    hooks_of: HashMap<usize, Vec<usize>>,
    lambdas: usize,
    /// Filled by `index_region`, so that rules asking per class do not sort the whole region
    /// each time: the region in source order, by the class whose `self` each function sees,
    /// and the names of the module classes.
    region_order: Vec<usize>,
    region_of_class: HashMap<usize, Vec<usize>>,
    module_class_names: HashSet<String>,
}

#[derive(Clone, Copy)]
pub enum FunctionNode<'a> {
    Def(&'a ast::StmtFunctionDef),
    Lambda(&'a ast::ExprLambda),
}

pub struct Function<'a> {
    /// `VLM.forward`, `setup.<locals>.hook`, `setup.<locals>.<lambda#0>`.
    pub qualname: String,
    pub name: String,
    pub node: FunctionNode<'a>,
    /// The class this is a method of.
    pub class: Option<usize>,
    /// The function this is nested in.
    pub parent: Option<usize>,
    /// Decorated `@torch.compiler.disable` / `@torch._dynamo.disable`: never traced.
    pub disabled: bool,
    /// Decorated `@torch.compile` or passed to `torch.compile(...)`.
    pub compiled: bool,
}

pub struct Class<'a> {
    pub qualname: String,
    pub node: &'a ast::StmtClassDef,
    /// Qualified names of the bases (`torch.nn.Module`, `models.base.Block`, `Block`).
    pub bases: Vec<String>,
    /// An `nn.Module` subclass, directly or through project classes. Filled by `reach::mark_region`
    /// from what the index found.
    pub is_module: bool,
}

impl<'a> FunctionNode<'a> {
    pub fn body(self) -> Body<'a> {
        match self {
            FunctionNode::Def(def) => Body::Stmts(&def.body),
            FunctionNode::Lambda(lambda) => Body::Expr(&lambda.body),
        }
    }

    pub fn parameters(self) -> Option<&'a ast::Parameters> {
        match self {
            FunctionNode::Def(def) => Some(&def.parameters),
            FunctionNode::Lambda(lambda) => lambda.parameters.as_deref(),
        }
    }

    pub fn range(self) -> TextRange {
        match self {
            FunctionNode::Def(def) => def.range(),
            FunctionNode::Lambda(lambda) => lambda.range(),
        }
    }
}

impl<'a> FileModel<'a> {
    /// The structure of a file; `region` stays empty until `reach::mark_region`.
    pub fn build(source: &'a SourceFile, module_name: &str) -> Self {
        let suite = source.parsed.suite();
        let is_package = source.path.file_stem().is_some_and(|stem| stem == "__init__");
        let mut model = FileModel {
            source,
            module_name: module_name.to_string(),
            imports: Imports::collect(suite, module_name, is_package),
            functions: Vec::new(),
            classes: Vec::new(),
            hooks: Vec::new(),
            region: HashMap::new(),
            imported_module_classes: HashSet::new(),
            state_attributes: Arc::default(),
            in_scope: HashMap::new(),
            self_assignments: Vec::new(),
            methods: HashMap::new(),
            methods_of: HashMap::new(),
            classes_by_name: HashMap::new(),
            hooks_of: HashMap::new(),
            lambdas: 0,
            region_order: Vec::new(),
            region_of_class: HashMap::new(),
            module_class_names: HashSet::new(),
        };
        let mut collector =
            ScopeCollector { model: &mut model, scope: Scope::default(), pending: Vec::new(), loop_depth: 0 };
        collector.visit_body(suite);
        let pending = std::mem::take(&mut collector.pending);
        for call in pending {
            crate::model::hooks::resolve(&mut model, call);
        }
        model.self_assignments = crate::model::module::collect_self_assignments(&model);
        model
    }

    pub fn function(&self, index: usize) -> &Function<'a> {
        &self.functions[index]
    }

    /// The class whose `self` a function sees: its own, or that of the method it is nested in.
    pub fn self_class(&self, mut function: usize) -> Option<usize> {
        loop {
            let f = &self.functions[function];
            if f.class.is_some() {
                return f.class;
            }
            function = f.parent?;
        }
    }

    /// The method `name` defined directly in `class`.
    pub fn method(&self, class: usize, name: &str) -> Option<usize> {
        self.methods.get(&(class, name.to_string())).copied()
    }

    /// The methods defined directly in `class`, in source order.
    pub fn methods_of(&self, class: usize) -> &[usize] {
        self.methods_of.get(&class).map_or(&[], Vec::as_slice)
    }

    /// A function visible as `name` from inside `from`: nested defs of `from` and of the
    /// functions around it, then module-level defs.
    pub fn resolve_name(&self, name: &str, from: Option<usize>) -> Option<usize> {
        let mut scope = from;
        loop {
            let found = self.in_scope.get(&(scope, name.to_string())).copied();
            if found.is_some() || scope.is_none() {
                return found;
            }
            scope = self.functions[scope?].parent;
        }
    }

    /// Whether `func` names an `nn.Module` class: one of torch.nn's, one of the file's own, or a
    /// project class imported from another file.
    pub fn is_module_class(&self, func: &Expr) -> bool {
        if let Some(qualified) = self.imports.qualified_name(func) {
            if crate::model::index::is_torch_module_base(&qualified) {
                return true;
            }
        }
        match func {
            Expr::Name(name) => {
                let name = name.id.as_str();
                self.imported_module_classes.contains(name) || self.module_class_names.contains(name)
            }
            _ => false,
        }
    }

    pub fn in_region(&self, function: usize) -> bool {
        self.region.contains_key(&function)
    }

    /// Region functions in source order.
    pub fn region_functions(&self) -> Vec<usize> {
        debug_assert_eq!(self.region_order.len(), self.region.len(), "region changed after index_region");
        self.region_order.clone()
    }

    /// The region functions whose `self` is an instance of `class` (its methods and their nested
    /// functions), in source order.
    pub fn region_functions_of(&self, class: usize) -> Vec<usize> {
        self.region_of_class.get(&class).cloned().unwrap_or_default()
    }

    /// Rebuild the lookups over what `reach::mark_region` filled in: `region` and each class's
    /// `is_module`.
    pub fn index_region(&mut self) {
        let mut order: Vec<usize> = self.region.keys().copied().collect();
        order.sort_by_key(|&f| (self.functions[f].node.range().start(), f));
        let mut of_class: HashMap<usize, Vec<usize>> = HashMap::new();
        for &function in &order {
            if let Some(class) = self.self_class(function) {
                of_class.entry(class).or_default().push(function);
            }
        }
        self.region_order = order;
        self.region_of_class = of_class;
        self.module_class_names =
            self.classes.iter().filter(|class| class.is_module).map(|class| class.node.name.id.to_string()).collect();
    }

    /// The first class of the file with this name (`Block`, not `Outer.Block`).
    pub fn class_named(&self, name: &str) -> Option<usize> {
        self.classes_by_name.get(name).copied()
    }

    /// The hooks registered with `function`, in registration order.
    pub fn hooks_of(&self, function: usize) -> impl Iterator<Item = &Hook<'a>> {
        self.hooks_of.get(&function).into_iter().flatten().map(|&hook| &self.hooks[hook])
    }

    pub fn add_hook(&mut self, hook: Hook<'a>) {
        self.hooks_of.entry(hook.function).or_default().push(self.hooks.len());
        self.hooks.push(hook);
    }

    /// How many lambdas were added as functions so far (they are named by this ordinal).
    pub fn lambda_count(&self) -> usize {
        self.lambdas
    }

    fn add_class(&mut self, class: Class<'a>) -> usize {
        let index = self.classes.len();
        self.classes_by_name.entry(class.node.name.id.to_string()).or_insert(index);
        self.classes.push(class);
        index
    }

    pub fn add_function(&mut self, function: Function<'a>) -> usize {
        let index = self.functions.len();
        if matches!(function.node, FunctionNode::Lambda(_)) {
            self.lambdas += 1;
        }
        match function.class {
            Some(class) => {
                self.methods.entry((class, function.name.clone())).or_insert(index);
                self.methods_of.entry(class).or_default().push(index);
            }
            None => {
                self.in_scope.entry((function.parent, function.name.clone())).or_insert(index);
            }
        }
        self.functions.push(function);
        index
    }
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
}

impl<'a> Visitor<'a> for ScopeCollector<'_, 'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
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
    fn in_loop(&mut self, walk: impl FnOnce(&mut Self)) {
        self.loop_depth += 1;
        walk(self);
        self.loop_depth -= 1;
    }

    fn enter_function(&mut self, def: &'a ast::StmtFunctionDef) {
        let qualname = format!("{}{}", self.scope.prefix, def.name.id);
        let decorators: Vec<Option<String>> =
            def.decorator_list.iter().map(|d| decorator_name(&d.expression, &self.model.imports)).collect();
        let has = |wanted: fn(&str) -> bool| decorators.iter().flatten().any(|name| wanted(name));
        let index = self.model.add_function(Function {
            qualname: qualname.clone(),
            name: def.name.id.to_string(),
            node: FunctionNode::Def(def),
            class: self.scope.class,
            parent: self.scope.function,
            disabled: has(is_disable_decorator),
            compiled: has(|name| name == "torch.compile"),
        });
        for decorator in &def.decorator_list {
            self.visit_expr(&decorator.expression);
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
        let index = self.model.add_class(Class { qualname: qualname.clone(), node: class, bases, is_module: false });
        let function = self.scope.function;
        let outer =
            std::mem::replace(&mut self.scope, Scope { class: Some(index), function, prefix: format!("{qualname}.") });
        self.visit_body(&class.body);
        self.scope = outer;
    }
}

/// The qualified name of a decorator, looking through a call (`@torch.compile(mode=...)`).
fn decorator_name(expr: &Expr, imports: &Imports) -> Option<String> {
    match expr {
        Expr::Call(call) => imports.qualified_name(&call.func),
        _ => imports.qualified_name(expr),
    }
}

/// `torch.compiler.disable`, `torch._dynamo.disable` and their re-exports.
pub fn is_disable_decorator(name: &str) -> bool {
    name.starts_with("torch.") && name.ends_with(".disable")
}

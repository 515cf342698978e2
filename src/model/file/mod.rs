//! One file's structure for torch.compile, the core every room reads: its functions (with
//! qualified names and scopes), its classes, its hook registrations, and which functions run in
//! the compiled region. `collect` builds it in one walk of the file; `reach::mark_region` marks
//! its region. Beside it: the facts it holds (calls, dead code, what the project configures) and
//! what the index tells the file (`facts`).

pub mod call_graph;
pub mod configured;
pub mod dead_code;
pub mod facts;
pub mod imports;
pub mod message_facts;
pub mod module;
pub mod mutation;
pub mod output_calls;
pub mod own_calls;
pub mod passed;
pub mod rare_paths;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::{OnceCell, RefCell};
use std::fmt;
use std::sync::Arc;

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::model::file::call_graph::CallGraph;
use crate::model::file::call_graph::{CallFacts, ClassTensors, FoundTensors, HeldClasses};
use crate::model::file::configured::Captures;
use crate::model::file::configured::{ConfigDefaults, ProjectLengths};
use crate::model::file::dead_code::DeadCode;
use crate::model::file::dead_code::UncalledSetter;
use crate::model::file::imports::Imports;
use crate::model::file::message_facts::MessageFact;
use crate::model::file::module::is_torch_module_base;
use crate::model::file::mutation::StateAttributes;
use crate::model::file::own_calls::OwnCalls;
use crate::source::SourceFile;

pub struct FileModel<'a> {
    pub source: &'a SourceFile,
    /// Dotted module name from the path (`models/vlm.py` -> `models.vlm`).
    pub module_name: String,
    pub imports: Imports,
    pub functions: Vec<Function<'a>>,
    pub classes: Vec<Class<'a>>,
    pub hooks: Vec<Hook<'a>>,
    /// Every call in the file, in source order (as a plain walk of the tree meets them): found by
    /// `collect`, for the rules that look at calls wherever they are, compiled or not.
    pub calls: Vec<&'a ast::ExprCall>,
    /// Functions that run under torch.compile, and why. Filled by `reach` (which then calls
    /// `index_region`).
    pub region: HashMap<usize, Reason>,
    /// Imported names that are project `nn.Module` classes. Filled by `reach`; read through
    /// `is_project_module_class`.
    pub imported_module_classes: HashSet<String>,
    /// Of those, the ones whose class sets torch.nn submodules, with their attributes
    /// (`Facts::imported_submodules`). Filled by `reach`; read through `imported_submodules_of`.
    pub imported_submodules: HashMap<String, Vec<String>>,
    /// The names whose answer from `imported_module_classes` or `imported_submodules` the
    /// analysis read: pass two keeps the file's guess when the project answers them alike.
    pub imported_classes_asked: RefCell<HashSet<String>>,
    /// Qualnames of the file's functions that compiled code of another file calls: what this
    /// file's callers say of them (grad off, a size tested) is not the whole story. Filled by
    /// `reach`.
    pub called_from_other_files: HashSet<String>,
    /// The code that does not run on a normal compiled call (`dead_code`): no finding there, no
    /// call followed from there.
    pub dead_code: DeadCode,
    /// Attributes only methods nothing calls turn on (`uncalled_setters`): their branches are
    /// dead unless another file names them (`reach::mark_region` decides).
    pub uncalled_setters: Vec<UncalledSetter>,
    /// Of the names the file asks the index about (`uncalled_setters`, `config_defaults`'s flags
    /// turned on under a config test), those another file uses. Filled by `reach`.
    pub named_elsewhere: HashSet<String>,
    /// Every name the file's code uses, sets as an attribute or holds in a string, hashed and
    /// sorted (`dead_code::name_hash`): the index asks whether the file names another file's
    /// method or attribute (`uncalled_setters`).
    pub names_used: Vec<u64>,
    /// Attribute names that hold changing state in the project. Filled by `reach`.
    pub state_attributes: Arc<StateAttributes>,
    /// Defaults of the config classes the file sees (`config_defaults`). Filled by `reach`.
    pub config_defaults: Arc<ConfigDefaults>,
    /// The capture options the project turns on, and where it compiles. Filled by `reach`.
    pub captures: Captures,
    /// The longest lengths the project's config classes give (`ProjectLengths`). Filled by `reach`.
    pub project_lengths: Arc<ProjectLengths>,
    /// The project's checks that raise with their message only when they fail (`message_checks`).
    /// Filled by `reach`.
    pub message_checks: Arc<HashSet<MessageFact>>,
    /// The facts whose answer the file's findings depend on (`message_checks`): pass two checks
    /// the file again when the project answers otherwise than its guess did.
    pub message_checks_asked: RefCell<Vec<MessageFact>>,
    /// What the file's own code says about attributes that hold state (the index merges every
    /// file's into `state_attributes`).
    pub local_state: StateAttributes,
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
    /// Who calls whom among the file's functions. Filled by `index_region` (a plain field: a cell
    /// holding borrowed calls would make the model invariant over `'a`).
    call_graph: CallGraph<'a>,
    /// What calls tell each function about its tensors (`tensor::CallFacts`), worked out once
    /// for the whole file.
    pub(crate) call_facts: OnceCell<Vec<CallFacts>>,
    /// The tensors `tensor::across_calls` found for region functions with their final call
    /// facts, each taken by the first question about its function (`tensor::Tensors::of`).
    pub(crate) found_tensors: RefCell<HashMap<usize, FoundTensors>>,
    /// Module-level dicts of the file's module classes (`submodules::class_dicts`), read once for
    /// the whole file: each class asks.
    pub(crate) class_dicts: OnceCell<HashMap<String, Vec<usize>>>,
    /// What each class tells its functions' tensors (`call_graph::ClassTensors`), by class: every
    /// function of the class asks, once per level of `tensor::across_calls` and again for the
    /// rules, and the answer walks the class's methods and those of the classes it holds.
    pub(crate) class_tensors: RefCell<HashMap<usize, Arc<ClassTensors>>>,
    /// What each class's attributes hold (`submodules::held_classes`), by class: every class
    /// that holds it (`tensor::class_tensors`, following submodules of submodules) and the loop
    /// calls ask.
    pub(crate) held_classes: RefCell<HashMap<usize, Arc<HeldClasses>>>,
    /// By capture option (`Capture as usize`): the code that option would make crash
    /// (`capture_crashes::crash_with`), read from the text once, when a finding first asks.
    pub(crate) capture_crashes: [OnceCell<Option<TextRange>>; 2],
    /// The file's calls of its own functions (`own_calls`), found when a hook first asks.
    own_calls: OnceCell<OwnCalls>,
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
    /// Decorated so that Dynamo does not trace it (`@torch.compiler.disable`,
    /// `@torch._dynamo.assume_constant_result`, a project's alias or wrapper of them; see
    /// `untraced`). The index may find more through decorators of other files.
    pub disabled: bool,
    /// Decorated `@torch.compile` or passed to `torch.compile(...)`.
    pub compiled: bool,
    /// A property's setter or deleter (`@x.setter`): it runs when the attribute is assigned or
    /// deleted, not when it is read (that runs the getter, the plain method `x`).
    pub accessor: Option<Accessor>,
    /// Qualified names of the decorators imported from other modules (not torch's, not the
    /// standard library's): the index tells whether one keeps Dynamo out.
    pub imported_decorators: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accessor {
    Setter,
    Deleter,
}

impl Accessor {
    pub fn as_str(self) -> &'static str {
        match self {
            Accessor::Setter => "setter",
            Accessor::Deleter => "deleter",
        }
    }
}

impl Function<'_> {
    /// The name a method is looked up by in its class: `x` for a plain method or a property's
    /// getter, `x.setter` / `x.deleter` for the other accessors (they share the name `x`).
    pub fn member_name(&self) -> String {
        match self.accessor {
            Some(accessor) => format!("{}.{}", self.name, accessor.as_str()),
            None => self.name.clone(),
        }
    }
}

pub struct Class<'a> {
    pub qualname: String,
    pub node: &'a ast::StmtClassDef,
    /// Qualified names of the bases (`torch.nn.Module`, `models.base.Block`, `Block`).
    pub bases: Vec<String>,
    /// Qualified names of its decorators (`transformers.integrations.use_experts_implementation`).
    pub decorators: Vec<String>,
    /// An `nn.Module` subclass, directly or through project classes. Filled by `reach::mark_region`
    /// from what the index found.
    pub is_module: bool,
    /// A decorator replaces its `forward` by one that never calls it (`untraced`), so its own
    /// `forward` is no root. Filled by `reach::mark_region` from what the index found.
    pub forward_replaced: bool,
    /// Nothing builds it: its file names it only in dead code, no other file imports it (its
    /// methods are no roots, and their code is dead). Filled by `reach::mark_region`.
    pub never_built: bool,
    /// The project's compile calls do not trace it (`compile_scope`): its `forward` is no root.
    /// Filled by `reach::mark_region`.
    pub outside_compile_scope: bool,
    /// Another project file, not a test, imports it (and may build it and call it). Filled by
    /// `reach::mark_region`. Whoever reads it records the class as asked (`unset_flags`): pass
    /// one's guess stands when the project differs only on classes nobody asked about.
    pub imported_elsewhere: bool,
}

/// A function registered as a forward hook or pre-hook.
pub struct Hook<'a> {
    pub registration: &'a ast::ExprCall,
    pub function: usize,
    /// Leading parameters bound by `functools.partial(hook, collector, ...)`.
    pub bound_args: usize,
    /// Registered as a pre-hook (runs before forward).
    pub pre: bool,
    /// Registered in a loop or comprehension: on many modules, usually repeated blocks that
    /// `forward` calls in a loop.
    pub in_loop: bool,
    /// The function whose code registers it (`None` at module level).
    pub registered_in: Option<usize>,
}

/// Why a function is in the compiled region (shown in messages).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Reason {
    Forward,
    /// A forward hook, or with `pre` a forward pre-hook.
    Hook {
        pre: bool,
    },
    Compiled,
    CalledFrom(String),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Forward => f.write_str("forward"),
            Reason::Hook { pre: false } => f.write_str("a forward hook"),
            Reason::Hook { pre: true } => f.write_str("a forward pre-hook"),
            Reason::Compiled => f.write_str("a torch.compile'd function"),
            Reason::CalledFrom(caller) => write!(f, "called from `{caller}`"),
        }
    }
}

/// `self.<attr> = ...` (or `+=`, or annotated) somewhere in a method of the class.
#[derive(Clone)]
pub struct SelfAssignment<'a> {
    pub attr: String,
    pub method: usize,
    pub stmt: &'a Stmt,
    /// Directly in the method's body, not under an `if`/`for`/`with`...
    pub top_level: bool,
}

impl<'a> SelfAssignment<'a> {
    /// The value assigned (`None` for `+=` and bare annotations).
    pub fn value(&self) -> Option<&'a Expr> {
        match self.stmt {
            Stmt::Assign(assign) => Some(&assign.value),
            Stmt::AnnAssign(assign) => assign.value.as_deref(),
            _ => None,
        }
    }
}

/// `name = value` or `name: T = value` with one target: the target and the value.
pub fn single_assignment(stmt: &Stmt) -> Option<(&Expr, &Expr)> {
    match stmt {
        Stmt::Assign(assign) if assign.targets.len() == 1 => Some((&assign.targets[0], assign.value.as_ref())),
        Stmt::AnnAssign(assign) => Some((assign.target.as_ref(), assign.value.as_deref()?)),
        _ => None,
    }
}

/// The body a function runs: statements for a `def`, one expression for a `lambda`.
#[derive(Clone, Copy)]
pub enum Body<'a> {
    Stmts(&'a [Stmt]),
    Expr(&'a Expr),
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
    /// A model with nothing collected yet (see `FileModel::build`, in `collect`).
    pub(super) fn new(source: &'a SourceFile, module_name: &str, imports: Imports) -> Self {
        FileModel {
            source,
            module_name: module_name.to_string(),
            imports,
            functions: Vec::new(),
            classes: Vec::new(),
            hooks: Vec::new(),
            calls: Vec::new(),
            region: HashMap::default(),
            imported_module_classes: HashSet::default(),
            imported_submodules: HashMap::default(),
            imported_classes_asked: RefCell::default(),
            called_from_other_files: HashSet::default(),
            dead_code: DeadCode::default(),
            uncalled_setters: Vec::new(),
            named_elsewhere: HashSet::default(),
            names_used: Vec::new(),
            state_attributes: Arc::default(),
            config_defaults: Arc::default(),
            captures: Captures::default(),
            project_lengths: Arc::default(),
            message_checks: Arc::default(),
            message_checks_asked: RefCell::default(),
            local_state: StateAttributes::default(),
            in_scope: HashMap::default(),
            self_assignments: Vec::new(),
            methods: HashMap::default(),
            methods_of: HashMap::default(),
            classes_by_name: HashMap::default(),
            hooks_of: HashMap::default(),
            lambdas: 0,
            region_order: Vec::new(),
            region_of_class: HashMap::default(),
            module_class_names: HashSet::default(),
            call_graph: CallGraph::default(),
            call_facts: OnceCell::new(),
            found_tensors: RefCell::default(),
            class_dicts: OnceCell::new(),
            class_tensors: RefCell::default(),
            held_classes: RefCell::default(),
            capture_crashes: Default::default(),
            own_calls: OnceCell::new(),
        }
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

    /// The method `self.name(...)` runs in a method of `class`: its own, else the one a base
    /// class of this file defines, searched in base order as Python does for the usual chains
    /// (`ForObjectDetection(PreTrainedModel)` calling a helper the file's `PreTrainedModel`
    /// defines). `None` when a base from elsewhere comes first: it may define `name` itself.
    pub fn method_or_inherited(&self, class: usize, name: &str) -> Option<usize> {
        self.method_in_chain(class, name, &mut Vec::new())
    }

    fn method_in_chain(&self, class: usize, name: &str, seen: &mut Vec<usize>) -> Option<usize> {
        if let Some(method) = self.method(class, name) {
            return Some(method);
        }
        seen.push(class);
        for base in &self.classes[class].bases {
            let in_file = (!base.contains('.')).then(|| self.class_named(base)).flatten();
            let base = in_file.filter(|base| !seen.contains(base))?;
            if let Some(method) = self.method_in_chain(base, name, seen) {
                return Some(method);
            }
        }
        None
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

    /// Whether a bare class name is a project `nn.Module` class: one of the file's own, or one
    /// imported from another file (see `module::is_module_class`).
    pub fn is_project_module_class(&self, name: &str) -> bool {
        self.module_class_names.contains(name)
            || self.asked_of_imported(name, |model| model.imported_module_classes.contains(name))
    }

    /// The torch.nn submodules that the project class imported as `name` sets, if the index knows any.
    pub fn imported_submodules_of(&self, name: &str) -> Option<&Vec<String>> {
        self.asked_of_imported(name, |model| model.imported_submodules.get(name))
    }

    /// Reads what the index says of an imported name, recording the question
    /// (`imported_classes_asked`): the answer depends on other files. The index answers only
    /// about the file's imported names: any other name has the same answer everywhere.
    fn asked_of_imported<'m, T>(&'m self, name: &str, answer: impl FnOnce(&'m Self) -> T) -> T {
        if self.imports.get(name).is_some() {
            let mut asked = self.imported_classes_asked.borrow_mut();
            if !asked.contains(name) {
                asked.insert(name.to_string());
            }
        }
        answer(self)
    }

    pub fn in_region(&self, function: usize) -> bool {
        self.region.contains_key(&function)
    }

    /// The calls between the file's functions (found by `index_region`).
    pub fn calls(&self) -> &CallGraph<'a> {
        &self.call_graph
    }

    /// The innermost region function whose code holds `range`.
    pub fn region_function_at(&self, range: TextRange) -> Option<usize> {
        // In source order functions nest or are apart: the innermost one holding `range` is the
        // last one starting at or before it that holds it (a search, not a scan: a file can hold
        // tens of thousands of functions, each with a finding).
        let order = self.region_functions();
        let before = order.partition_point(|&function| self.functions[function].node.range().start() <= range.start());
        for &function in order[..before].iter().rev() {
            if self.functions[function].node.range().contains_range(range) {
                return Some(function);
            }
            // An outermost function that does not hold it ends before it: so do all before it.
            self.functions[function].parent?;
        }
        None
    }

    /// Region functions in source order.
    pub fn region_functions(&self) -> &[usize] {
        debug_assert_eq!(self.region_order.len(), self.region.len(), "region changed after index_region");
        &self.region_order
    }

    /// The region functions whose `self` is an instance of `class` (its methods and their nested
    /// functions), in source order.
    pub fn region_functions_of(&self, class: usize) -> &[usize] {
        self.region_of_class.get(&class).map_or(&[], Vec::as_slice)
    }

    /// Rebuild the lookups over what `reach::mark_region` filled in: `region` and each class's
    /// `is_module`.
    pub fn index_region(&mut self) {
        let mut order: Vec<usize> = self.region.keys().copied().collect();
        order.sort_by_key(|&f| (self.functions[f].node.range().start(), f));
        let mut of_class: HashMap<usize, Vec<usize>> = HashMap::default();
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

    /// The calls among the file's functions, found once the region is indexed (`flow::calls`):
    /// the calls of region functions, and what they tell, change with the region.
    pub(in crate::model) fn set_calls(&mut self, call_graph: CallGraph<'a>) {
        self.call_graph = call_graph;
        self.call_facts = OnceCell::new();
        self.found_tensors = RefCell::default();
        self.class_dicts = OnceCell::new();
        self.class_tensors = RefCell::default();
        self.held_classes = RefCell::default();
    }

    /// The first class of the file with this name (`Block`, not `Outer.Block`).
    pub fn class_named(&self, name: &str) -> Option<usize> {
        self.classes_by_name.get(name).copied()
    }

    /// Who calls each of the file's functions, in a loop or not, and what it hands to `apply`.
    pub fn own_calls(&self) -> &OwnCalls {
        self.own_calls.get_or_init(|| OwnCalls::find(self))
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

    pub fn add_class(&mut self, class: Class<'a>) -> usize {
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
                self.methods.entry((class, function.member_name())).or_insert(index);
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

/// A class's `__init__`.
pub fn init_method(model: &FileModel, class: usize) -> Option<usize> {
    model.method(class, "__init__")
}

/// The statements of a method's own body (for `__init__`: where new lines can go).
pub fn method_body<'a>(model: &FileModel<'a>, method: usize) -> &'a [Stmt] {
    match model.function(method).node {
        FunctionNode::Def(def) => &def.body,
        FunctionNode::Lambda(_) => &[],
    }
}

/// Every assignment to an attribute of `self` in the class's methods, in source order (collected
/// once, when the file model is built (`collect`): the index and many rules ask, class by class).
pub fn self_assignments<'m, 'a>(model: &'m FileModel<'a>, class: usize) -> &'m [SelfAssignment<'a>] {
    &model.self_assignments[class]
}

/// Whether `func` names an `nn.Module` class: one of torch.nn's, one of the file's own, or a
/// project class imported from another file.
pub fn is_module_class(model: &FileModel, func: &Expr) -> bool {
    if model.imports.qualified_name(func).is_some_and(|qualified| is_torch_module_base(&qualified)) {
        return true;
    }
    match func {
        Expr::Name(name) => model.is_project_module_class(name.id.as_str()),
        _ => false,
    }
}

//! What the project compiles, from its own `torch.compile` calls: the compile map.
//!
//! By default tcfix takes every module's `forward` as compiled, which is right for a library
//! (its users compile the model) and for a script that compiles the whole model. A training
//! framework that compiles each block on its own (`for block in model.layers: block.compile()`,
//! or `torch.compile(block)` in an `apply_compile` helper) never traces the model's own
//! `forward`, nor the encoder around the blocks: findings there would be false. When every
//! compile call of the project names what it compiles (the items of a `layers` list, a class it
//! builds), only those classes, what they and their holders name and their bases run compiled.
//! Anything tcfix cannot read keeps the default: one such call (`torch.compile(model)` of a
//! parameter, `torch._dynamo.optimize`, `partial(torch.compile)`), or a compiled class that builds
//! a submodule through a project function. Tests do not count: they compile what they test.

use rustc_hash::FxHashMap as HashMap;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};

use crate::discover::is_test_file;
use crate::model::compiled::reach::Target;
use crate::model::compiled::yielded_modules::{Yielded, generators, loop_item};
use crate::model::file::imports::Imports;
use crate::model::file::module::is_self;
use crate::model::file::self_assignments;
use crate::model::file::{Class, FileModel, FunctionNode};
/// What one compile call compiles.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CompileTarget {
    /// The items of a module list held in this attribute (`for block in model.layers:
    /// torch.compile(block)`, `model.blocks[i].compile()`).
    ItemsOf(String),
    /// An instance of the first class, built in the same scope (`model = Transformer(args)`),
    /// with the classes named in its arguments, by their qualified names as the file's imports
    /// give them.
    Classes(Vec<String>),
    /// An attribute of something (`torch.compile(self.unet)`, `torch.compile(policy.predict)`):
    /// the module the receiver's class holds in it, or its method of that name (or a subclass's
    /// override). `of_class` is the receiver's class where the file says it (`self` in a
    /// method, `model = Net()`), qualified as the file's imports give it; None for a receiver
    /// passed in, whose method of that name is any project class's, and whose attribute is
    /// unknown.
    Member { name: String, of_class: Option<String> },
    /// A function (`torch.compile(step)`): a root of its own, no say on modules.
    Function,
    /// Something tcfix cannot name (`torch.compile(model)` of a parameter): maybe the whole model.
    Unknown,
}

/// Every compile call of the file, with what it compiles. A test compiles what it tests, not
/// what users run: test files and `test_*` functions say nothing here.
pub fn compile_targets(model: &FileModel) -> Vec<CompileTarget> {
    let text = &model.source.text;
    if !(text.contains("compile") || text.contains("optimize")) || is_test_file(&model.source.path) {
        return Vec::new();
    }
    // A bare name calls a function, never a method (`torch.compile(model)` of a variable named
    // like some class's method is no function).
    let functions: Vec<&str> = model.functions.iter().filter(|f| f.class.is_none()).map(|f| f.name.as_str()).collect();
    let mut finder = Finder {
        imports: &model.imports,
        functions,
        classes: &model.classes,
        class: None,
        generators: generators(model, iterated_items),
        bindings: HashMap::default(),
        found: Vec::new(),
    };
    finder.visit_body(model.source.parsed.suite());
    finder.found
}

/// The classes a class's code names (`Block(...)` in `__init__`, `attn_layer=Attention` passed on),
/// qualified as the file's imports give them: what the class may hold as submodules.
pub fn classes_named(model: &FileModel, class: usize) -> Vec<String> {
    let mut collector = Named { imports: &model.imports, found: Vec::new() };
    collector.visit_body(&model.classes[class].node.body);
    let mut found = collector.found;
    found.sort();
    found.dedup();
    found
}

/// A class built into `self.<attr>` by one of the file's classes, within containers too
/// (`self.layers = nn.ModuleList([Block(...) for _ in range(n)])`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Held {
    pub attr: String,
    /// The class built, qualified as the file's imports give it.
    pub class: String,
    /// The qualname of the file's class that builds it: what it passes the built class
    /// (`Block(norm_layer=RMSNorm)`) is held too.
    pub holder: String,
}

pub fn held_in(model: &FileModel) -> Vec<Held> {
    let mut held = Vec::new();
    for class in 0..model.classes.len() {
        for assignment in self_assignments(model, class) {
            let Some(value) = assignment.value() else { continue };
            let mut built = Calls { imports: &model.imports, classes: Vec::new(), functions: Vec::new() };
            built.visit_expr(value);
            held.extend(built.classes.into_iter().map(|built| Held {
                attr: assignment.attr.clone(),
                class: built,
                holder: model.classes[class].qualname.clone(),
            }));
        }
    }
    held.sort();
    held.dedup();
    held
}

/// The functions a class calls to build its attributes (`self.mlp = make_mlp(dim)`) in
/// `__init__` and the methods it calls (`self._init_layers()`): the modules they return are
/// submodules the compile map cannot see into, where they may build a project module
/// (`module_builders`). Other methods set state (`self.stats = aggregate(...)` in `update`).
pub fn builders_called(model: &FileModel, class: usize, building: &[usize]) -> Vec<String> {
    let mut calls = Calls { imports: &model.imports, classes: Vec::new(), functions: Vec::new() };
    for assignment in self_assignments(model, class) {
        if building.contains(&assignment.method)
            && let Some(value) = assignment.value()
        {
            calls.visit_expr(value);
        }
    }
    let mut found = calls.functions;
    found.sort();
    found.dedup();
    found
}

/// A value a class is given and keeps (`def __init__(self, net: Net): self.net = net`): a
/// module it may hold that it did not build.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Kept {
    pub attr: String,
    /// A class its annotation names, qualified; None without an annotation: anything.
    pub class: Option<String>,
}

pub fn kept_given(model: &FileModel, class: usize, building: &[usize]) -> Vec<Kept> {
    let mut kept = Vec::new();
    for assignment in self_assignments(model, class) {
        let Some(Expr::Name(value)) = assignment.value() else { continue };
        if !building.contains(&assignment.method) {
            continue;
        }
        let Some(parameters) = model.function(assignment.method).node.parameters() else { continue };
        let Some(parameter) = parameters.iter().find(|p| p.name().as_str() == value.id.as_str()) else { continue };
        let attr = &assignment.attr;
        match parameter.annotation() {
            None => kept.push(Kept { attr: attr.clone(), class: None }),
            Some(annotation) => {
                let mut named = Named { imports: &model.imports, found: Vec::new() };
                named.visit_expr(annotation);
                let classes = named.found.into_iter().filter(|name| !name.starts_with("typing."));
                kept.extend(classes.map(|class| Kept { attr: attr.clone(), class: Some(class) }));
            }
        }
    }
    kept.sort();
    kept.dedup();
    kept
}

/// The kept values a method uses (`self.net(obs)`, `self.net.encode(obs)`, `run(self.net, obs)`):
/// modules that may run when it does. Any use in its code counts, not only a call: a module
/// reached through one of its methods or handed to a function runs too, and missing it would
/// drop its findings. Read from the syntax tree: a docstring or comment naming it runs nothing.
pub fn kept_used(model: &FileModel, function: usize, kept: &[Kept]) -> Vec<String> {
    let mut uses = SelfAttributes(Vec::new());
    match model.function(function).node {
        FunctionNode::Def(def) => uses.visit_body(&def.body),
        FunctionNode::Lambda(lambda) => uses.visit_expr(&lambda.body),
    }
    let mut used: Vec<String> =
        kept.iter().filter(|k| uses.0.contains(&k.attr.as_str())).map(|k| k.attr.clone()).collect();
    used.dedup();
    used
}

/// The attributes of `self` a body reads or calls (`self.net`).
struct SelfAttributes<'a>(Vec<&'a str>);

impl<'a> Visitor<'a> for SelfAttributes<'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Attribute(attribute) = expr
            && is_self(&attribute.value)
        {
            self.0.push(attribute.attr.id.as_str());
        }
        walk_expr(self, expr);
    }
}

/// `__init__` and the class's methods it calls, transitively, given each function's `targets`
/// (by index: worked out once for the file's summary, which needs them for every function).
pub fn methods_building(model: &FileModel, class: usize, targets: &[Vec<Target>]) -> Vec<usize> {
    let Some(init) = model.method(class, "__init__") else { return Vec::new() };
    let mut building = vec![init];
    let mut next = 0;
    while let Some(&method) = building.get(next) {
        next += 1;
        for target in &targets[method] {
            let Target::Local(qualname) = target else { continue };
            // A method of the class is `Class.name`: looked up by name, not by a walk of every function.
            let name = qualname.rsplit('.').next().unwrap_or(qualname);
            let called = model.method(class, name).filter(|&called| model.function(called).qualname == *qualname);
            if let Some(called) = called.filter(|called| !building.contains(called)) {
                building.push(called);
            }
        }
    }
    building
}

/// The calls in an expression: of classes (`Block(...)` inside `nn.ModuleList([...])`), and of
/// functions that are not methods (`make_mlp(...)`).
struct Calls<'i> {
    imports: &'i Imports,
    classes: Vec<String>,
    functions: Vec<String>,
}

impl<'a> Visitor<'a> for Calls<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        // `self.transformer.to(dtype=as_dtype(name))`: a method of a module the class already
        // holds returns that module; its arguments build nothing held.
        if let Expr::Call(call) = expr
            && let Expr::Attribute(method) = call.func.as_ref()
            && matches!(method.value.as_ref(), Expr::Attribute(held) if held.value.as_name_expr().is_some_and(|name| name.id.as_str() == "self"))
        {
            return;
        }
        if let Expr::Call(call) = expr
            && let Some(qualified) = self.imports.qualified_name(&call.func)
        {
            if is_class_name(&qualified) {
                self.classes.push(qualified);
            } else if !qualified.starts_with("torch.") {
                self.functions.push(qualified);
            }
        }
        walk_expr(self, expr);
    }
}

struct Named<'i> {
    imports: &'i Imports,
    found: Vec<String>,
}

impl Named<'_> {
    /// The last segment of what `expr` names once its imports are resolved (`Block` in
    /// `layers.Block`), read without building the qualified name: most names in a class body
    /// (`self.norm.weight`, `x`) are no class, and each link of a chain is visited.
    fn last_segment<'e>(&'e self, expr: &'e Expr) -> Option<&'e str> {
        match expr {
            Expr::Attribute(attribute) => Some(attribute.attr.id.as_str()),
            Expr::Name(name) => {
                let resolved = self.imports.get(name.id.as_str()).unwrap_or(name.id.as_str());
                resolved.rsplit('.').next()
            }
            _ => None,
        }
    }
}

impl<'a> Visitor<'a> for Named<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        // Class names start upper case by convention; the index keeps only project classes.
        if self.last_segment(expr).is_some_and(|last| last.starts_with(char::is_uppercase))
            && let Some(qualified) = self.imports.qualified_name(expr)
        {
            self.found.push(qualified);
        }
        walk_expr(self, expr);
    }
}

/// What a name holds, as far as the compile map cares.
#[derive(Clone)]
enum Bound {
    /// A loop variable over the items of this attribute's module list.
    ItemOf(String),
    /// An instance of the first class, built with the others (`Classifier(Backbone())`).
    Instance(Vec<String>),
    /// A function (`functools.partial(random_shift, pad=4)`).
    Function,
    /// An attribute read into a name (`method = policy.predict`).
    Member(CompileTarget),
}

struct Finder<'i> {
    imports: &'i Imports,
    /// The file's function names: `torch.compile(step)` compiles a function.
    functions: Vec<&'i str>,
    classes: &'i [Class<'i>],
    /// The qualname of the class whose body is being walked: what `self` is in its methods.
    class: Option<&'i str>,
    generators: HashMap<String, Yielded>,
    /// Names bound so far in the scope being walked (each def starts with none: its parameters
    /// hold what its callers pass, which this walk cannot know).
    bindings: HashMap<String, Bound>,
    found: Vec<CompileTarget>,
}

impl Finder<'_> {
    fn target(&self, compiled: &Expr) -> CompileTarget {
        if let Some(attr) = items_attribute(compiled) {
            return CompileTarget::ItemsOf(attr);
        }
        match compiled {
            Expr::Name(name) => match self.bindings.get(name.id.as_str()) {
                Some(Bound::ItemOf(attr)) => CompileTarget::ItemsOf(attr.clone()),
                Some(Bound::Instance(classes)) => CompileTarget::Classes(classes.clone()),
                Some(Bound::Function) => CompileTarget::Function,
                Some(Bound::Member(member)) => member.clone(),
                None if self.names_function(compiled) => CompileTarget::Function,
                None => CompileTarget::Unknown,
            },
            Expr::Call(call) => self.instance_of(call).map_or(CompileTarget::Unknown, CompileTarget::Classes),
            Expr::Attribute(_) if self.names_function(compiled) => CompileTarget::Function,
            Expr::Attribute(method) if let Some(held) = self.own_module_called(method) => held,
            Expr::Attribute(attribute) if is_reference(&attribute.value) => {
                let of_class = match attribute.value.as_ref() {
                    Expr::Name(name) if name.id.as_str() == "self" => self.class.map(str::to_string),
                    Expr::Name(name) => match self.bindings.get(name.id.as_str()) {
                        Some(Bound::Instance(classes)) => Some(classes[0].clone()),
                        // A name bound to something else the file says (a module list's item).
                        Some(_) => return CompileTarget::Unknown,
                        None => None,
                    },
                    _ => None,
                };
                CompileTarget::Member { name: attribute.attr.id.to_string(), of_class }
            }
            _ => CompileTarget::Unknown,
        }
    }

    /// `self.encoder.forward` (or `__call__`) in a method: the module held in `self.encoder`, run
    /// whole, like `torch.compile(self.encoder)`.
    fn own_module_called(&self, method: &ast::ExprAttribute) -> Option<CompileTarget> {
        let Expr::Attribute(held) = method.value.as_ref() else { return None };
        let called = matches!(method.attr.id.as_str(), "forward" | "__call__");
        if !(called && is_self(&held.value)) {
            return None;
        }
        Some(CompileTarget::Member { name: held.attr.id.to_string(), of_class: Some(self.class?.to_string()) })
    }

    /// One of the file's functions, or a function of torch's (`flex_attention`): never a module.
    fn names_function(&self, expr: &Expr) -> bool {
        if let Expr::Name(name) = expr
            && self.functions.contains(&name.id.as_str())
            && self.imports.get(name.id.as_str()).is_none()
        {
            return true;
        }
        self.imports.qualified_name(expr).is_some_and(|qualified| {
            qualified.starts_with("torch.")
                && qualified.rsplit('.').next().is_some_and(|last| last.starts_with(char::is_lowercase))
        })
    }

    /// `functools.partial(step, ...)` of a function.
    fn partial_of_function(&self, call: &ast::ExprCall) -> bool {
        self.imports.refers_to(&call.func, "functools.partial")
            && call.arguments.args.first().is_some_and(|first| self.names_function(first))
    }

    /// `Classifier(Backbone(), head=Head)`: the class built, then every class named in its
    /// arguments (what it may hold), when the call names a class.
    fn instance_of(&self, call: &ast::ExprCall) -> Option<Vec<String>> {
        let qualified = self.imports.qualified_name(&call.func)?;
        if !is_class_name(&qualified) || qualified.starts_with("torch.") {
            return None;
        }
        let mut named = Named { imports: self.imports, found: vec![qualified] };
        named.visit_arguments(&call.arguments);
        Some(named.found)
    }

    fn bind_loop(&mut self, for_stmt: &ast::StmtFor) {
        // The loop rebinds its target: what those names held before says nothing now.
        let targets = match for_stmt.target.as_ref() {
            Expr::Tuple(tuple) => tuple.elts.iter().collect(),
            target => vec![target],
        };
        for target in targets {
            if let Expr::Name(name) = target {
                self.bindings.remove(name.id.as_str());
            }
        }
        if let Some(attr) = iterated_items(&for_stmt.iter)
            && let Some(item) = loop_item(&for_stmt.target)
        {
            self.bindings.insert(item.id.to_string(), Bound::ItemOf(attr));
            return;
        }
        // `for name, block, options in self.compile_targets()`: what the generator yields there.
        let Some(Yielded { position, attr }) = self.generator_called(&for_stmt.iter) else { return };
        let item = match (position, for_stmt.target.as_ref()) {
            (None, Expr::Name(name)) => Some(name),
            (Some(position), Expr::Tuple(tuple)) => tuple.elts.get(*position).and_then(Expr::as_name_expr),
            _ => None,
        };
        if let Some(item) = item {
            self.bindings.insert(item.id.to_string(), Bound::ItemOf(attr.clone()));
        }
    }

    /// `self.compile_targets()`, `compile_targets(model)`: a call of one of the file's generators.
    fn generator_called(&self, iter: &Expr) -> Option<&Yielded> {
        let Expr::Call(call) = iter else { return None };
        let name = match call.func.as_ref() {
            Expr::Name(name) => name.id.as_str(),
            Expr::Attribute(method) => method.attr.id.as_str(),
            _ => return None,
        };
        self.generators.get(name)
    }

    fn bind_assignment(&mut self, assign: &ast::StmtAssign) {
        let [Expr::Name(name)] = assign.targets.as_slice() else { return };
        let bound = match assign.value.as_ref() {
            Expr::Call(call) if self.partial_of_function(call) => Some(Bound::Function),
            Expr::Call(call) => self.instance_of(call).map(Bound::Instance),
            value @ Expr::Attribute(_) => match self.target(value) {
                member @ CompileTarget::Member { .. } => Some(Bound::Member(member)),
                _ => None,
            },
            value => items_attribute(value).map(Bound::ItemOf),
        };
        match bound {
            Some(bound) => _ = self.bindings.insert(name.id.to_string(), bound),
            None => _ = self.bindings.remove(name.id.as_str()),
        }
    }

    fn record(&mut self, call: &ast::ExprCall) {
        if self.imports.refers_to(&call.func, "torch._dynamo.optimize") {
            // `torch._dynamo.optimize(backend)(model)`: what it compiles is not in this call.
            self.found.push(CompileTarget::Unknown);
            return;
        }
        let compiled = if self.imports.refers_to(&call.func, "torch.compile") {
            // `@torch.compile(mode=...)` names nothing: the decorated function is a root.
            let Some(first) = call.arguments.args.first() else { return };
            first
        } else if let Expr::Attribute(method) = call.func.as_ref()
            && method.attr.id.as_str() == "compile"
            && !matches!(method.value.as_ref(), Expr::Name(name) if self.imports.get(name.id.as_str()).is_some())
        {
            // `block.compile()`: nn.Module.compile on the receiver (not `re.compile`).
            &method.value
        } else {
            return;
        };
        let target = self.target(compiled);
        self.found.push(target);
    }
}

impl<'a> Visitor<'a> for Finder<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(def) if is_test_function(def.name.as_str()) => return,
            Stmt::FunctionDef(_) => {
                let outer = std::mem::take(&mut self.bindings);
                walk_stmt(self, stmt);
                self.bindings = outer;
                return;
            }
            Stmt::ClassDef(def) => {
                let outer = self.class;
                let classes = self.classes;
                self.class =
                    classes.iter().find(|class| std::ptr::eq(class.node, def)).map(|class| class.qualname.as_str());
                walk_stmt(self, stmt);
                self.class = outer;
                return;
            }
            Stmt::For(for_stmt) => self.bind_loop(for_stmt),
            Stmt::Assign(assign) => {
                // The value is read before the name is bound: `block = torch.compile(block)`.
                self.visit_expr(&assign.value);
                self.bind_assignment(assign);
                return;
            }
            _ => {}
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr {
            self.record(call);
            // The callee is read: a reference to `torch.compile` elsewhere is not a call of it.
            self.visit_arguments(&call.arguments);
            match call.func.as_ref() {
                Expr::Attribute(attr) => self.visit_expr(&attr.value),
                func @ Expr::Call(_) => self.visit_expr(func),
                _ => {}
            }
            return;
        }
        // `partial(torch.compile, ...)`, `compile_fn = torch.compile`: compiled somewhere unseen.
        if matches!(expr, Expr::Attribute(_) | Expr::Name(_)) && self.imports.refers_to(expr, "torch.compile") {
            self.found.push(CompileTarget::Unknown);
            return;
        }
        walk_expr(self, expr);
    }
}

/// `Block`, `models.Block`: a name spelled like a class.
fn is_class_name(qualified: &str) -> bool {
    qualified.rsplit('.').next().is_some_and(|last| last.starts_with(char::is_uppercase))
}

/// `test_attention`: a test compiles what it tests.
fn is_test_function(name: &str) -> bool {
    name.starts_with("test_") || name == "test"
}

/// `self`, `policy`, `self.model`: something a compiled attribute is read from (not a call's
/// result, which tcfix cannot name).
fn is_reference(expr: &Expr) -> bool {
    match expr {
        Expr::Name(_) => true,
        Expr::Attribute(attribute) => is_reference(&attribute.value),
        _ => false,
    }
}

/// `model.layers[i]`, `self.blocks[0]`: an item of the module list in that attribute.
fn items_attribute(expr: &Expr) -> Option<String> {
    let Expr::Subscript(subscript) = expr else { return None };
    let Expr::Attribute(attr) = subscript.value.as_ref() else { return None };
    Some(attr.attr.id.to_string())
}

/// The attribute whose module list a loop walks: `x.layers`, `enumerate(x.layers)`,
/// `x.layers.named_children()`, `x.layers.children()`, `x.layers.values()`, `x.layers.items()`,
/// `getattr(x, "layers", ())`.
fn iterated_items(iter: &Expr) -> Option<String> {
    match iter {
        Expr::Attribute(attr) => Some(attr.attr.id.to_string()),
        Expr::Subscript(subscript) => iterated_items(&subscript.value),
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Name(name) if name.id.as_str() == "enumerate" => iterated_items(call.arguments.args.first()?),
            Expr::Name(name) if name.id.as_str() == "getattr" => match call.arguments.args.get(1)? {
                Expr::StringLiteral(attr) => Some(attr.value.to_str().to_string()),
                _ => None,
            },
            Expr::Attribute(method)
                if matches!(method.attr.id.as_str(), "children" | "named_children" | "values" | "items")
                    && call.arguments.is_empty() =>
            {
                match method.value.as_ref() {
                    Expr::Attribute(attr) => Some(attr.attr.id.to_string()),
                    _ => None,
                }
            }
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::source::SourceFile;

    fn targets(text: &str) -> Vec<CompileTarget> {
        let source = SourceFile::parse(Path::new("train.py"), text.to_string()).unwrap();
        compile_targets(&FileModel::build(&source, "train"))
    }

    #[test]
    fn blocks_compiled_one_by_one() {
        let text = "import torch\ndef apply_compile(model):\n    for layer_id, block in model.layers.named_children():\n        block = torch.compile(block, fullgraph=True)\n        model.layers.register_module(layer_id, block)\n";
        assert_eq!(targets(text), vec![CompileTarget::ItemsOf("layers".into())]);
        let method = "def setup(model):\n    for block in model.blocks:\n        block.compile()\n";
        assert_eq!(targets(method), vec![CompileTarget::ItemsOf("blocks".into())]);
        let indexed =
            "import torch\ndef setup(m):\n    for i in range(4):\n        m.layers[i] = torch.compile(m.layers[i])\n";
        assert_eq!(targets(indexed), vec![CompileTarget::ItemsOf("layers".into())]);
    }

    #[test]
    fn a_class_built_here_a_function_and_what_cannot_be_named() {
        let text = "import torch\nfrom models import Transformer\ndef step(x):\n    return x\nmodel = Transformer()\ncompiled = torch.compile(model)\nfast = torch.compile(step)\n\ndef wrap(m):\n    return torch.compile(m)\n";
        assert_eq!(
            targets(text),
            vec![
                CompileTarget::Classes(vec!["models.Transformer".into()]),
                CompileTarget::Function,
                CompileTarget::Unknown
            ]
        );
    }

    #[test]
    fn decorators_and_other_compiles_name_nothing() {
        let text = "import re\nimport torch\n@torch.compile(mode='max-autotune')\ndef f(x):\n    return x\npattern = re.compile('a')\n";
        assert_eq!(targets(text), vec![]);
    }
}

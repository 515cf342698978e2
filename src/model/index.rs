//! The project index: names and edges from every checked file (classes and their bases,
//! functions and what they call), so that a subclass of a project-local `nn.Module` and a helper
//! imported from `models/utils.py` are known for what they are. It holds no syntax trees.

use hashbrown::HashTable;
use rayon::prelude::*;
use rustc_hash::{FxBuildHasher, FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash};
use std::path::Path;
use std::sync::Arc;

use ruff_python_ast::Expr;

use crate::model::compiled::compile_scope::{
    CompileTarget, Held, Kept, builders_called, classes_named, compile_targets, held_in, kept_given, kept_used,
    methods_building,
};
use crate::model::compiled::module_builders::{Builds, builds};
use crate::model::compiled::reach::{Target, root_reason, targets};
use crate::model::compiled::untraced::{forward_replacing_decorators, untraced_decorators};
use crate::model::defaults::config_defaults::{ClassDefaults, FieldSet, fields_set, flags_turned_on_in_init};
use crate::model::file::configured::Captures;
use crate::model::file::configured::{ConfigDefault, ConfigDefaults, ProjectLengths};
use crate::model::file::dead_code::{classes_named_only_in_dead_code, name_hash};
/// The index's answer to each file, and what of it a file's analysis depends on (defined in
/// `facts.rs`, so that `reach::mark_region` reads them without depending on the index).
pub use crate::model::file::facts::{Dependence, Facts};
use crate::model::file::imports::unqualified;
use crate::model::file::message_facts::MessageFact;
use crate::model::file::module::is_entry_point;
use crate::model::file::module::is_torch_module_base;
use crate::model::file::mutation::StateAttributes;
use crate::model::file::passed::Passed;
use crate::model::file::self_assignments;
use crate::model::file::{FileModel, Reason};
use crate::model::flow::imported_calls::imported_calls;
use crate::model::flow::message_checks::own_message_checks;
use crate::model::flow::submodules::held_method_targets;

mod compile_map;
use compile_map::CompileMap;
/// Config field -> the values the project gives it: (the config class called, `None` for a store
/// on a config object; the literal, `None` for any other value).
type ValuesGiven<'i> = HashMap<&'i str, Vec<(Option<ClassId>, &'i Option<ConfigDefault>)>>;

/// What one file contributes to the index.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FileSummary {
    pub module_name: String,
    /// A test file (`discover::is_test_file`): its calls exercise options, they do not say how the
    /// project is used (`may_call_imports`).
    pub test_file: bool,
    /// Class-like names the file imports (`Block` -> `models.base.Block`).
    pub imported_classes: Vec<(String, String)>,
    /// Attribute names that hold changing state (see `mutation`).
    pub state_attributes: StateAttributes,
    pub classes: Vec<ClassSummary>,
    pub functions: Vec<FunctionSummary>,
    /// The file may hold code the setup rules read outside the compiled region (TCF3xx, TCF401).
    pub setup_code: bool,
    /// Module-level names that keep Dynamo out of what they decorate (`untraced`).
    pub untraced_decorators: Vec<String>,
    /// Module-level class decorators that replace the class's `forward` (`untraced`).
    pub forward_replacing_decorators: Vec<String>,
    /// What a package's `__init__.py` imports, function-like names too (`disable_compiler` ->
    /// `timm.layers.typing.disable_compiler`): the names it re-exports. Empty for other files.
    pub reexported: Vec<(String, String)>,
    /// Top-level classes the file names only in dead code (`dead_code`): never built unless
    /// another file imports them.
    pub named_only_in_dead_code: Vec<String>,
    /// Every name the file uses (`FileModel::names_used`, hashed).
    pub names_used: Vec<u64>,
    /// Names the file needs to know whether another file uses (`uncalled_setters`).
    pub names_asked: Vec<String>,
    /// What each of its `torch.compile` calls compiles (`compile_scope`).
    pub compile_targets: Vec<CompileTarget>,
    /// The classes its classes build into their attributes (`compile_scope`).
    pub held_in: Vec<Held>,
    /// The capture options the file turns on, and whether it compiles (`dynamo_config`).
    pub captures: Captures,
    /// Its module-level checks that raise with their message only when they fail (`message_checks`).
    pub message_checks: Vec<MessageFact>,
    /// What its uses of imported names pass to them (`imported_calls`).
    pub imported_calls: Vec<(String, Passed)>,
    /// Its module-level helpers that only other files call (`DeadCode::helpers_called_elsewhere`).
    pub helpers_called_elsewhere: Vec<String>,
    /// The values it gives config fields (`config_defaults::fields_set`).
    pub config_fields_set: Vec<FieldSet>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ClassSummary {
    pub qualname: String,
    pub bases: Vec<String>,
    /// Qualified names of its decorators.
    pub decorators: Vec<String>,
    /// For a config class, the defaults it gives its fields.
    pub config: Option<ClassDefaults>,
    /// The `self.<attr>` it sets to one of torch.nn's modules (`self.embed = nn.Embedding(...)`),
    /// sorted: a class of another file that holds it as a submodule calls them on tensors.
    pub torch_submodules: Vec<String>,
    /// The classes its code names: what it may hold as submodules (`compile_scope`).
    pub classes_named: Vec<String>,
    /// The functions it calls to build its attributes (`compile_scope`).
    pub builders_called: Vec<String>,
    /// The values it is given and keeps (`compile_scope::kept_given`).
    pub kept_given: Vec<Kept>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FunctionSummary {
    pub qualname: String,
    /// The name its class looks it up by (`name`).
    name: MemberName,
    /// The class this is a method of: its place among the file's classes (a place, not a copy of
    /// its qualname: the index holds every function of the project at once).
    pub class: Option<usize>,
    pub disabled: bool,
    /// Decorators imported from other modules: one may keep Dynamo out (`Function::imported_decorators`).
    pub imported_decorators: Vec<String>,
    /// Compiled or registered as a hook: a root whatever its class.
    pub root: Option<Reason>,
    /// What a module-level function may return of the project's modules (`module_builders`).
    pub builds: Builds,
    /// The values its class was given and kept that it uses (`compile_scope::kept_used`).
    pub kept_used: Vec<String>,
    pub targets: Vec<Callee>,
}

impl FunctionSummary {
    /// The name its class looks it up by (`Function::member_name`: `x.setter` for a setter).
    pub fn name(&self) -> &str {
        match &self.name {
            MemberName::Tail(start) => &self.qualname[*start..],
            MemberName::Own(name) => name,
        }
    }
}

/// A function's member name, kept as the end of its qualname where it is one (`collect` names a
/// function by its scope's prefix and this name): not a second copy of it for every function.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
enum MemberName {
    /// The qualname from this byte on.
    Tail(usize),
    /// A name the qualname does not end with (a lambda's `<lambda>`, named `<lambda#0>`).
    Own(String),
}

impl MemberName {
    fn of(qualname: &str, name: String) -> Self {
        match qualname.strip_suffix(name.as_str()) {
            Some(prefix) => MemberName::Tail(prefix.len()),
            None => MemberName::Own(name),
        }
    }
}

/// What a function may call from its compiled code (`reach::Target`), the file's own functions
/// and classes named by their place in its summary: the first of that qualname, as the lookups
/// find them. Places, not copies of qualnames: the index holds every function of the project.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Callee {
    /// A function of the same file.
    Local(usize),
    /// `self.name` not defined in the class itself: look in its bases.
    InheritedMethod { class: usize, name: String },
    /// A name imported from elsewhere (`models.utils.helper`).
    Imported(String),
}

impl Callee {
    fn of(target: Target, first_function: &HashMap<&str, usize>, first_class: &HashMap<&str, usize>) -> Self {
        match target {
            Target::Local(qualname) => Callee::Local(first_function[qualname.as_str()]),
            Target::InheritedMethod { class, name } => {
                Callee::InheritedMethod { class: first_class[class.as_str()], name }
            }
            Target::Imported(qualified) => Callee::Imported(qualified),
        }
    }
}

/// The first of each qualname among `qualnames`, by place.
fn first_of_each<'q>(qualnames: impl Iterator<Item = &'q str>) -> HashMap<&'q str, usize> {
    let mut first = HashMap::default();
    for (place, qualname) in qualnames.enumerate() {
        first.entry(qualname).or_insert(place);
    }
    first
}

/// `models/vlm.py` -> `models.vlm`; `models/__init__.py` -> `models`. A path is named as given,
/// relative to where tcfix runs (how `python -m` and pytest see a repository, packages or not);
/// an absolute path outside it is named from the top of its package (the highest folder above it
/// that still holds an `__init__.py`), as Python imports it: `/venv/.../site-packages/transformers/
/// models/led/modeling_led.py` -> `transformers.models.led.modeling_led`.
pub fn module_name(path: &Path) -> String {
    if path.is_absolute() {
        let cwd = std::env::current_dir().ok();
        if let Some(relative) = cwd.as_deref().and_then(|cwd| path.strip_prefix(cwd).ok()) {
            return dotted(relative);
        }
        return dotted(path.strip_prefix(package_top(path)).unwrap_or(path));
    }
    dotted(path)
}

/// The folder that holds `path`'s outermost package: walking up while a folder holds `__init__.py`.
/// A folder without one right above the file, inside a package (`policies/common/`, a namespace
/// package its siblings import as `..common.vla_utils`), is part of it; one above the packages
/// is not (a src layout's `src/`, even under a stray root `__init__.py`).
fn package_top(path: &Path) -> &Path {
    let holds_init = |folder: &Path| folder.join("__init__.py").is_file();
    let mut top = path.parent().unwrap_or(path);
    if !holds_init(top)
        && let Some(package) = top.parent().filter(|parent| holds_init(parent))
    {
        top = package;
    }
    while holds_init(top) {
        match top.parent() {
            Some(parent) => top = parent,
            None => break,
        }
    }
    top
}

fn dotted(path: &Path) -> String {
    let mut parts: Vec<String> = path
        .with_extension("")
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if parts.last().is_some_and(|last| last == "__init__") {
        parts.pop();
    }
    parts.join(".")
}

impl FileSummary {
    pub fn of(model: &FileModel) -> Self {
        // Each function's calls, walked once: its summary and the methods that build its class's
        // submodules (`methods_building`, asked twice per class) read them.
        let targets: Vec<Vec<Target>> = (0..model.functions.len()).map(|index| targets(model, index)).collect();
        let classes: Vec<ClassSummary> = model
            .classes
            .iter()
            .enumerate()
            .map(|(class, c)| {
                let building = methods_building(model, class, &targets);
                ClassSummary {
                    qualname: c.qualname.clone(),
                    bases: c.bases.clone(),
                    decorators: c.decorators.clone(),
                    config: ClassDefaults::of(model, class),
                    torch_submodules: exact(torch_submodules(model, class)),
                    classes_named: exact(classes_named(model, class)),
                    builders_called: exact(builders_called(model, class, &building)),
                    kept_given: kept_given(model, class, &building),
                }
            })
            .collect();
        let first_function = first_of_each(model.functions.iter().map(|f| f.qualname.as_str()));
        let first_class = first_of_each(model.classes.iter().map(|c| c.qualname.as_str()));
        // What reach follows: the calls `targets` found, and the methods of held submodules.
        let callees = |index: usize, targets: Vec<Target>| {
            let targets = targets.into_iter().chain(held_method_targets(model, index));
            targets.map(|t| Callee::of(t, &first_function, &first_class))
        };
        let functions = targets
            .into_iter()
            .enumerate()
            .map(|(index, targets)| {
                let f = model.function(index);
                FunctionSummary {
                    qualname: f.qualname.clone(),
                    name: MemberName::of(&f.qualname, f.member_name()),
                    class: f.class,
                    disabled: f.disabled,
                    imported_decorators: f.imported_decorators.clone(),
                    root: root_reason(model, index),
                    builds: builds(model, index),
                    kept_used: f
                        .class
                        .map_or_else(Vec::new, |class| kept_used(model, index, &classes[class].kept_given)),
                    targets: if f.disabled { Vec::new() } else { exact(callees(index, targets).collect()) },
                }
            })
            .collect();
        let mut imported_classes: Vec<(String, String)> = model
            .imports
            .bindings()
            .filter(|(local, _)| local.starts_with(|c: char| c.is_ascii_uppercase()))
            .map(|(local, full)| (local.to_string(), full.to_string()))
            .collect();
        imported_classes.sort();
        imported_classes.shrink_to_fit();
        Self {
            module_name: model.module_name.clone(),
            test_file: crate::discover::is_test_file(&model.source.path),
            imported_classes,
            state_attributes: model.local_state.clone(),
            classes,
            functions,
            setup_code: crate::model::compiled::compile_calls::mentions_setup_code(&model.source.text),
            untraced_decorators: untraced_decorators(model.source.parsed.suite(), &model.imports),
            forward_replacing_decorators: forward_replacing_decorators(model.source.parsed.suite()),
            reexported: if is_package(model) {
                model.imports.bindings().map(|(local, full)| (local.to_string(), full.to_string())).collect()
            } else {
                Vec::new()
            },
            named_only_in_dead_code: classes_named_only_in_dead_code(model.source.parsed.suite(), &model.dead_code),
            names_used: model.names_used.clone(),
            names_asked: (model.uncalled_setters.iter().flat_map(|s| s.names()).map(str::to_string))
                .chain(flags_turned_on_in_init(model))
                .collect(),
            compile_targets: compile_targets(model),
            held_in: exact(held_in(model)),
            captures: Captures::of(model),
            message_checks: own_message_checks(model),
            imported_calls: imported_calls(model),
            helpers_called_elsewhere: model.dead_code.helpers_called_elsewhere.clone(),
            config_fields_set: fields_set(model),
        }
    }
}

impl FileSummary {
    /// Whether the file's imports of project classes say how the project uses them
    /// (`imported_elsewhere`): not in a test, whose calls exercise every option, nor in a
    /// package's `__init__`, which hands the names on to the files that do.
    fn may_call_imports(&self) -> bool {
        !self.test_file && self.reexported.is_empty()
    }

    /// The qualname of the class `function` (one of the file's) is a method of.
    fn class_of(&self, function: &FunctionSummary) -> Option<&str> {
        function.class.map(|class| self.classes[class].qualname.as_str())
    }
}

/// A list as long as it is: the index holds every file's summary at once, and lists deduplicated
/// after they were collected kept room for what they dropped.
fn exact<T>(mut list: Vec<T>) -> Vec<T> {
    list.shrink_to_fit();
    list
}

/// The `self.<attr>` a class sets to one of torch.nn's modules, sorted and once each.
fn torch_submodules(model: &FileModel, class: usize) -> Vec<String> {
    let mut found: Vec<String> = self_assignments(model, class)
        .iter()
        .filter(|assignment| {
            matches!(assignment.value(), Some(Expr::Call(call))
                if model.imports.qualified_name(&call.func).is_some_and(|q| is_torch_module_base(&q)))
        })
        .map(|assignment| assignment.attr.clone())
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

/// A package's `__init__.py`: what it imports, it re-exports.
fn is_package(model: &FileModel) -> bool {
    model.source.path.file_stem().is_some_and(|stem| stem == "__init__")
}

/// A function of the index: its file, and its place among that file's functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FunctionId {
    file: usize,
    function: usize,
}

/// A class of the index: its file, and its place among that file's classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ClassId {
    file: usize,
    class: usize,
}

/// One file's names, looked up instead of scanned: a file can hold tens of thousands of
/// classes. Where a name is defined twice, the first definition wins. The tables hold places in
/// the file's summary, not copies of its names: the index holds every file's names at once, and
/// copies of them were a tenth of a run's peak memory.
#[derive(Default)]
struct FileLookups {
    /// Functions by qualname.
    functions: HashTable<usize>,
    /// Classes by qualname.
    classes: HashTable<usize>,
    /// Methods by their class's qualname and the name the class looks them up by.
    methods: HashTable<usize>,
    /// Class-like names the file imports (`PushToHubMixin` -> `pkg.utils.hub.PushToHubMixin`):
    /// what a package's `__init__.py` re-exports. Places in `imported_classes`; where a name is
    /// imported twice, the last import wins (the list is sorted).
    imported_classes: HashTable<usize>,
}

/// The hash a lookup table files a name under.
fn hash_of(name: impl Hash) -> u64 {
    FxBuildHasher.hash_one(name)
}

/// Files `place` under `name` unless the table already has a place for that name (`same`).
fn insert_first(
    table: &mut HashTable<usize>,
    hash: u64,
    place: usize,
    same: impl Fn(usize) -> bool,
    rehash: impl Fn(&usize) -> u64,
) {
    if table.find(hash, |&other| same(other)).is_none() {
        table.insert_unique(hash, place, rehash);
    }
}

impl FileLookups {
    fn of(summary: &FileSummary) -> Self {
        let mut lookups = FileLookups::default();
        let (functions, classes) = (&summary.functions, &summary.classes);
        let qualname_hash = |&function: &usize| hash_of(functions[function].qualname.as_str());
        let member_hash = |&function: &usize| {
            let f = &functions[function];
            hash_of((summary.class_of(f).unwrap_or_default(), f.name()))
        };
        for (index, function) in functions.iter().enumerate() {
            let qualname = function.qualname.as_str();
            let same = |other: usize| functions[other].qualname == qualname;
            insert_first(&mut lookups.functions, hash_of(qualname), index, same, qualname_hash);
            if let Some(class) = summary.class_of(function) {
                let name = function.name();
                let same = |other: usize| {
                    let other = &functions[other];
                    summary.class_of(other) == Some(class) && other.name() == name
                };
                insert_first(&mut lookups.methods, hash_of((class, name)), index, same, member_hash);
            }
        }
        for (index, class) in classes.iter().enumerate() {
            let qualname = class.qualname.as_str();
            let same = |other: usize| classes[other].qualname == qualname;
            insert_first(&mut lookups.classes, hash_of(qualname), index, same, |&c| {
                hash_of(classes[c].qualname.as_str())
            });
        }
        let imported = &summary.imported_classes;
        let local_hash = |&import: &usize| hash_of(imported[import].0.as_str());
        for (index, (local, _)) in imported.iter().enumerate() {
            let hash = hash_of(local.as_str());
            match lookups.imported_classes.find_mut(hash, |&other| imported[other].0 == *local) {
                Some(place) => *place = index,
                None => {
                    lookups.imported_classes.insert_unique(hash, index, local_hash);
                }
            }
        }
        lookups
    }

    fn function(&self, summary: &FileSummary, qualname: &str) -> Option<usize> {
        self.functions.find(hash_of(qualname), |&f| summary.functions[f].qualname == qualname).copied()
    }

    fn class(&self, summary: &FileSummary, qualname: &str) -> Option<usize> {
        self.classes.find(hash_of(qualname), |&c| summary.classes[c].qualname == qualname).copied()
    }

    /// The first method `name` of the class(es) with this qualname.
    fn method(&self, summary: &FileSummary, class: &str, name: &str) -> Option<usize> {
        let same = |&f: &usize| {
            let f = &summary.functions[f];
            summary.class_of(f) == Some(class) && f.name() == name
        };
        self.methods.find(hash_of((class, name)), same).copied()
    }

    /// What the file imports as `name`, fully qualified.
    fn imported_class<'s>(&self, summary: &'s FileSummary, name: &str) -> Option<&'s str> {
        let found = self.imported_classes.find(hash_of(name), |&i| summary.imported_classes[i].0 == name)?;
        Some(summary.imported_classes[*found].1.as_str())
    }
}

pub struct ProjectIndex {
    files: Vec<FileSummary>,
    lookups: Vec<FileLookups>,
    /// Files by the last segment of their module name: an import can only name a file whose
    /// module name ends like the import does.
    by_last_segment: HashMap<String, Vec<usize>>,
    module_classes: HashSet<ClassId>,
    /// Classes whose `forward` a decorator replaces.
    forward_replaced: HashSet<ClassId>,
    /// Classes nothing builds: named only in dead code of their file, imported by no other file.
    never_built: HashSet<ClassId>,
    /// What the project's own compile calls trace, when every call names what it compiles
    /// (`compile_scope`); None: every module's `forward`.
    compiled: Option<CompileMap>,
}

impl ProjectIndex {
    pub fn new(files: Vec<FileSummary>) -> Self {
        let mut by_last_segment: HashMap<String, Vec<usize>> = HashMap::default();
        for (file, summary) in files.iter().enumerate() {
            by_last_segment.entry(unqualified(&summary.module_name).to_string()).or_default().push(file);
        }
        // The index is built between the two passes, on one thread: what is per file runs on all.
        let lookups = files.par_iter().map(FileLookups::of).collect();
        let mut index = Self {
            files,
            lookups,
            by_last_segment,
            module_classes: HashSet::default(),
            forward_replaced: HashSet::default(),
            never_built: HashSet::default(),
            compiled: None,
        };
        index.module_classes = index.find_module_classes();
        index.forward_replaced = index.find_forward_replaced();
        index.never_built = index.find_never_built();
        index.compiled = index.find_compiled();
        index.disable_through_imported_decorators();
        index
    }

    /// Mark `disabled` the functions decorated with another file's name for an untraced
    /// decorator (timm's `@disable_compiler`, imported through `timm.layers`).
    fn disable_through_imported_decorators(&mut self) {
        let mut untraced: Vec<FunctionId> = Vec::new();
        for (file, summary) in self.files.iter().enumerate() {
            for (function, f) in summary.functions.iter().enumerate() {
                if !f.disabled && f.imported_decorators.iter().any(|name| self.is_untraced_decorator(name, 0)) {
                    untraced.push(FunctionId { file, function });
                }
            }
        }
        for FunctionId { file, function } in untraced {
            self.files[file].functions[function].disabled = true;
        }
    }

    /// Whether `qualified` names an untraced decorator of a project module.
    fn is_untraced_decorator(&self, qualified: &str, depth: usize) -> bool {
        self.names_one_of(qualified, |summary| &summary.untraced_decorators, depth)
    }

    /// The module classes whose `forward` a decorator (of the file or imported) replaces.
    fn find_forward_replaced(&self) -> HashSet<ClassId> {
        let mut replaced = HashSet::default();
        for &id in &self.module_classes {
            let own = &self.files[id.file].forward_replacing_decorators;
            let replacing = |name: &String| {
                own.contains(name) || self.names_one_of(name, |summary| &summary.forward_replacing_decorators, 0)
            };
            if self.class(id).decorators.iter().any(replacing) {
                replaced.insert(id);
            }
        }
        replaced
    }

    /// The classes named only in dead code of their own file that no other file imports.
    fn find_never_built(&self) -> HashSet<ClassId> {
        let candidates: HashSet<ClassId> = self
            .files
            .iter()
            .enumerate()
            .flat_map(|(file, summary)| {
                summary.named_only_in_dead_code.iter().filter_map(move |name| self.local_class(file, name))
            })
            .collect();
        if candidates.is_empty() {
            return candidates;
        }
        let imported: HashSet<ClassId> = self
            .files
            .iter()
            .enumerate()
            .flat_map(|(file, summary)| {
                summary.imported_classes.iter().filter_map(move |(_, full)| self.find_class(file, full))
            })
            .collect();
        candidates.difference(&imported).copied().collect()
    }

    /// Whether `qualified` names one of the names `list` gives for a project module, directly or
    /// through the packages that re-export it.
    fn names_one_of(&self, qualified: &str, list: fn(&FileSummary) -> &Vec<String>, depth: usize) -> bool {
        let Some((module, name)) = qualified.rsplit_once('.') else { return false };
        if depth > 8 {
            return false;
        }
        self.modules_named(module).any(|file| {
            let summary = &self.files[file];
            list(summary).iter().any(|own| own == name)
                || summary
                    .reexported
                    .iter()
                    .any(|(local, full)| local == name && full != qualified && self.names_one_of(full, list, depth + 1))
        })
    }

    /// The facts for each file, in the order the summaries were given.
    pub fn facts(&self) -> Vec<Facts> {
        let mut state = StateAttributes::default();
        self.files.iter().for_each(|file| state.extend(&file.state_attributes));
        let state = Arc::new(state);
        let mut facts: Vec<Facts> = vec![Facts { state_attributes: state, ..Facts::default() }; self.files.len()];
        let captures = Captures::of_project(self.files.iter().map(|file| &file.captures));
        for (file, summary) in self.files.iter().enumerate() {
            facts[file].setup_code = summary.setup_code;
            facts[file].captures = captures.clone();
        }
        for &ClassId { file, class } in &self.module_classes {
            facts[file].module_classes.insert(self.files[file].classes[class].qualname.clone());
        }
        for &ClassId { file, class } in &self.forward_replaced {
            facts[file].forward_replaced.insert(self.files[file].classes[class].qualname.clone());
        }
        for &ClassId { file, class } in &self.never_built {
            facts[file].never_built.insert(self.files[file].classes[class].qualname.clone());
        }
        if let Some(compiled) = &self.compiled {
            for &id in self.module_classes.difference(&compiled.classes) {
                facts[id.file].outside_compile_scope.insert(self.class(id).qualname.clone());
            }
        }
        for (file, summary) in self.files.iter().enumerate() {
            for (local, full) in &summary.imported_classes {
                let Some(class) = self.find_class(file, full) else { continue };
                if self.module_classes.contains(&class) {
                    facts[file].imported_module_classes.insert(local.clone());
                    let inner = &self.class(class).torch_submodules;
                    if !inner.is_empty() {
                        facts[file].imported_submodules.insert(local.clone(), inner.clone());
                    }
                }
                if class.file != file && summary.may_call_imports() {
                    facts[class.file].imported_elsewhere.insert(self.class(class).qualname.clone());
                }
            }
        }
        let project_lengths = Arc::new(self.project_lengths());
        let message_checks = Arc::new(self.message_checks());
        // Files that see the same config classes (a model's configuration, modeling and modular
        // files) share one map of their defaults.
        let seen: Vec<Vec<ClassId>> = (self.files.par_iter().enumerate())
            .map(|(file, summary)| self.config_classes_seen_by(file, summary))
            .collect();
        let sets: HashSet<&Vec<ClassId>> = seen.iter().collect();
        let given = self.config_values_given();
        let config_defaults: HashMap<&Vec<ClassId>, Arc<ConfigDefaults>> = (sets.into_par_iter())
            .map(|classes| (classes, Arc::new(self.config_defaults_of(classes, &given))))
            .collect();
        for (file, classes) in seen.iter().enumerate() {
            facts[file].config_defaults = Arc::clone(&config_defaults[classes]);
            facts[file].project_lengths = Arc::clone(&project_lengths);
            facts[file].message_checks = Arc::clone(&message_checks);
        }
        for (file, summary) in self.files.iter().enumerate() {
            let disabled = summary.functions.iter().filter(|f| f.disabled).map(|f| f.qualname.clone());
            facts[file].disabled.extend(disabled);
        }
        let named_elsewhere: Vec<HashSet<String>> =
            self.files.par_iter().enumerate().map(|(file, summary)| self.named_elsewhere(file, summary)).collect();
        for (file, named) in named_elsewhere.into_iter().enumerate() {
            facts[file].named_elsewhere = named;
        }
        let (reached, called_from_other_files) = self.reach();
        for (FunctionId { file, function }, reason) in reached {
            facts[file].reached.insert(self.files[file].functions[function].qualname.clone(), reason);
        }
        for FunctionId { file, function } in called_from_other_files {
            facts[file].called_from_other_files.insert(self.files[file].functions[function].qualname.clone());
        }
        for (FunctionId { file, function }, passed) in self.passed_to_helpers() {
            facts[file].passed_from_elsewhere.insert(self.files[file].functions[function].qualname.clone(), passed);
        }
        facts
    }

    /// For each module-level helper that only other files name (`helpers_called_elsewhere`),
    /// what their uses of it pass, merged.
    fn passed_to_helpers(&self) -> HashMap<FunctionId, Passed> {
        let mut passed: HashMap<FunctionId, Passed> = HashMap::default();
        if self.files.iter().all(|summary| summary.helpers_called_elsewhere.is_empty()) {
            return passed;
        }
        for (file, summary) in self.files.iter().enumerate() {
            for (name, uses) in &summary.imported_calls {
                for helper in self.find_functions_reexported(name, 0) {
                    let defined = &self.files[helper.file];
                    let qualname = &defined.functions[helper.function].qualname;
                    if helper.file != file && defined.helpers_called_elsewhere.contains(qualname) {
                        passed.entry(helper).or_default().merge(uses);
                    }
                }
            }
        }
        passed
    }

    /// The functions an imported name means, also through the packages that re-export it
    /// (`from .ops import resize` in a package's `__init__.py`).
    fn find_functions_reexported(&self, qualified: &str, depth: usize) -> Vec<FunctionId> {
        let mut found = self.find_functions(qualified);
        let Some((module, name)) = qualified.rsplit_once('.') else { return found };
        if depth > 8 {
            return found;
        }
        let reexports: Vec<&str> = self
            .modules_named(module)
            .flat_map(|package| self.files[package].reexported.iter())
            .filter(|(local, full)| local == name && full != qualified)
            .map(|(_, full)| full.as_str())
            .collect();
        for full in reexports {
            found.extend(self.find_functions_reexported(full, depth + 1));
        }
        found
    }

    /// The names a file asks about that another file uses.
    fn named_elsewhere(&self, file: usize, summary: &FileSummary) -> HashSet<String> {
        let used_by_another = |hash: u64| {
            self.files.iter().enumerate().any(|(other, s)| other != file && s.names_used.binary_search(&hash).is_ok())
        };
        summary.names_asked.iter().filter(|name| used_by_another(name_hash(name))).cloned().collect()
    }

    /// The config classes a file defines or imports, sorted and once each (the defaults they
    /// give do not depend on their order).
    fn config_classes_seen_by(&self, file: usize, summary: &FileSummary) -> Vec<ClassId> {
        let local = (0..summary.classes.len()).map(|class| ClassId { file, class });
        let imported = summary.imported_classes.iter().filter_map(|(_, full)| self.find_class(file, full));
        let mut seen: Vec<ClassId> =
            local.chain(imported).filter(|&class| self.class(class).config.is_some()).collect();
        seen.sort_unstable_by_key(|class| (class.file, class.class));
        seen.dedup();
        seen
    }

    /// The defaults of config classes, their bases' included. A field two of them give
    /// different defaults has none, nor has one the project sets to another value anywhere
    /// (`given`): a test, a script or another model that turns it on runs the branch it guards.
    fn config_defaults_of(&self, classes: &[ClassId], given: &ValuesGiven) -> ConfigDefaults {
        let mut merged: HashMap<String, Option<ConfigDefault>> = HashMap::default();
        for &class in classes {
            for (name, default) in self.class_config_defaults(class, 0) {
                let seen = merged.entry(name).or_insert_with(|| Some(default.clone()));
                if seen.as_ref() != Some(&default) {
                    *seen = None;
                }
            }
        }
        // A keyword counts for the class it is passed to (`GenerationConfig(pad_token_id=0)` sets
        // nothing of a model's config); a store on a config object, for any.
        let kept = |name: &str, default: &ConfigDefault| {
            let values = given.get(name).into_iter().flatten();
            let counted = values.filter(|(class, _)| class.is_none_or(|class| classes.contains(&class)));
            counted.into_iter().all(|(_, value)| value.as_ref().is_some_and(|value| value.value == default.value))
        };
        merged
            .into_iter()
            .filter_map(|(name, default)| Some((name, default?)))
            .filter(|(name, default)| kept(name, default))
            .collect()
    }

    /// The fields a config class takes, its bases' included (a preset gives both).
    fn config_fields(&self, id: ClassId) -> HashSet<&str> {
        let mut fields = HashSet::default();
        let mut classes = vec![(id, 0)];
        while let Some((id, depth)) = classes.pop() {
            let class = self.class(id);
            if let Some(config) = &class.config {
                fields.extend(config.defaults.iter().map(|(name, _)| name.as_str()));
                fields.extend(config.unknown.iter().map(String::as_str));
            }
            if depth < 8 {
                classes
                    .extend(class.bases.iter().filter_map(|base| Some((self.find_class(id.file, base)?, depth + 1))));
            }
        }
        fields
    }

    /// Each config field the project gives a value, with the values: stores on config objects
    /// (`config.seeded = True`) and keywords of calls of its config classes
    /// (`TinyConfig(mode="joint")`), in any file.
    fn config_values_given(&self) -> ValuesGiven<'_> {
        let mut given: ValuesGiven = HashMap::default();
        let config_fields: Vec<HashSet<&str>> = (self.files.iter().enumerate())
            .flat_map(|(file, summary)| (0..summary.classes.len()).map(move |class| ClassId { file, class }))
            .filter(|&id| self.class(id).config.is_some())
            .map(|id| self.config_fields(id))
            .collect();
        let a_config_preset =
            |keys: &[String]| config_fields.iter().any(|fields| keys.iter().all(|key| fields.contains(key.as_str())));
        for (file, summary) in self.files.iter().enumerate() {
            for set in &summary.config_fields_set {
                if !set.preset.is_empty() && !a_config_preset(&set.preset) {
                    continue;
                }
                let class = match &set.class {
                    None => None,
                    Some(class) => match self.find_class(file, class) {
                        Some(class) if self.class(class).config.is_some() => Some(class),
                        _ => continue,
                    },
                };
                given.entry(set.field.as_str()).or_default().push((class, &set.value));
            }
        }
        given
    }

    /// The project's checks that raise with their message only when they fail (`message_checks`),
    /// under their qualified names: each file's own (`timm.layers.trace_utils._assert`), and the
    /// names packages re-export them under (`timm.layers._assert`); with the parameters of the
    /// project's functions that accept a callable message
    /// (`transformers.utils.torch_compilable_check`'s `msg`), re-exported alike.
    fn message_checks(&self) -> HashSet<MessageFact> {
        let mut checks: HashSet<MessageFact> = (self.files.iter())
            .flat_map(|summary| {
                (summary.message_checks.iter())
                    .map(|fact| fact.about(format!("{}.{}", summary.module_name, fact.callee())))
            })
            .collect();
        // A package may re-export what another package re-exports: a few rounds reach them all.
        for _ in 0..8 {
            let mut facts_of: HashMap<&str, Vec<&MessageFact>> = HashMap::default();
            for fact in &checks {
                facts_of.entry(fact.callee()).or_default().push(fact);
            }
            let more: Vec<MessageFact> = (self.files.iter())
                .flat_map(|summary| {
                    let facts_of = &facts_of;
                    summary.reexported.iter().flat_map(move |(local, full)| {
                        (facts_of.get(full.as_str()).into_iter().flatten())
                            .map(move |fact| fact.about(format!("{}.{local}", summary.module_name)))
                    })
                })
                .filter(|fact| !checks.contains(fact))
                .collect();
            if more.is_empty() {
                break;
            }
            checks.extend(more);
        }
        checks
    }

    /// The largest whole-number default each field has in any config class of the project (its
    /// bases' defaults included), with the class that gives it: the first such class wins a tie.
    fn project_lengths(&self) -> ProjectLengths {
        let mut lengths = ProjectLengths::default();
        for (file, summary) in self.files.iter().enumerate() {
            for (class, info) in summary.classes.iter().enumerate() {
                for (name, default) in self.class_config_defaults(ClassId { file, class }, 0) {
                    let Some(length) = default.positive_integer() else { continue };
                    let longest = lengths.entry(name).or_insert((length, info.qualname.clone()));
                    if length > longest.0 {
                        *longest = (length, info.qualname.clone());
                    }
                }
            }
        }
        lengths
    }

    /// A config class's defaults, and those of its bases that it does not set or hide.
    fn class_config_defaults(&self, id: ClassId, depth: usize) -> ConfigDefaults {
        let class = self.class(id);
        let Some(own) = &class.config else { return ConfigDefaults::default() };
        let mut defaults: ConfigDefaults = own.defaults.iter().cloned().collect();
        if depth > 16 {
            return defaults;
        }
        for base in &class.bases {
            let Some(base) = self.find_class(id.file, base) else { continue };
            for (name, default) in self.class_config_defaults(base, depth + 1) {
                if !own.unknown.contains(&name) {
                    defaults.entry(name).or_insert(default);
                }
            }
        }
        defaults
    }

    fn find_module_classes(&self) -> HashSet<ClassId> {
        let mut known: HashMap<ClassId, bool> = HashMap::default();
        for (file, summary) in self.files.iter().enumerate() {
            for class in 0..summary.classes.len() {
                self.is_module(ClassId { file, class }, &mut known, 0);
            }
        }
        known.into_iter().filter(|(_, is_module)| *is_module).map(|(class, _)| class).collect()
    }

    /// Whether a class is an `nn.Module`, remembering each answer (hierarchies share bases).
    fn is_module(&self, id: ClassId, known: &mut HashMap<ClassId, bool>, depth: usize) -> bool {
        if let Some(&answer) = known.get(&id) {
            return answer;
        }
        if depth > 32 {
            return false;
        }
        known.insert(id, false); // a cycle of bases is not a module
        let class = self.class(id);
        let defines_forward =
            || self.lookups[id.file].method(&self.files[id.file], &class.qualname, "forward").is_some();
        let answer = class.bases.iter().any(|base| {
            is_torch_module_base(base)
                || match self.find_class(id.file, base) {
                    Some(base) => self.is_module(base, known, depth + 1),
                    // A class that defines `forward` on a base from a library tcfix cannot see
                    // (`timm.layers.Mlp`, a model class of another package) is a module. A
                    // base from the project that cannot be found says nothing: `forward` alone
                    // does not make a module (transformers' `Pipeline` defines one).
                    None => is_library_class(base) && !self.in_project(base) && defines_forward(),
                }
        });
        known.insert(id, answer);
        answer
    }

    /// Breadth-first from the roots over call edges: every function Dynamo would trace, and those
    /// of them that a traced function of another file calls (whichever caller reached them first).
    fn reach(&self) -> (HashMap<FunctionId, Reason>, HashSet<FunctionId>) {
        let mut reached: HashMap<FunctionId, Reason> = HashMap::default();
        let mut called_from_other_files: HashSet<FunctionId> = HashSet::default();
        let mut queue: VecDeque<FunctionId> = VecDeque::new();
        for (file, summary) in self.files.iter().enumerate() {
            for (index, function) in summary.functions.iter().enumerate() {
                let id = FunctionId { file, function: index };
                if let Some(reason) = self.root_reason(id, function) {
                    reached.insert(id, reason);
                    queue.push_back(id);
                }
            }
        }
        while let Some(id) = queue.pop_front() {
            let caller = self.function(id);
            for target in &caller.targets {
                for callee in self.resolve(id.file, target) {
                    if self.function(callee).disabled {
                        continue;
                    }
                    if callee.file != id.file {
                        called_from_other_files.insert(callee);
                    }
                    if reached.contains_key(&callee) {
                        continue;
                    }
                    reached.insert(callee, Reason::CalledFrom(caller.qualname.clone()));
                    queue.push_back(callee);
                }
            }
        }
        (reached, called_from_other_files)
    }

    fn root_reason(&self, id: FunctionId, function: &FunctionSummary) -> Option<Reason> {
        let file = id.file;
        if function.disabled {
            return None;
        }
        if function.root.is_some() {
            return function.root.clone();
        }
        if self.compiled.as_ref().is_some_and(|compiled| compiled.methods.contains(&id)) {
            return Some(Reason::Compiled);
        }
        let class = self.local_class(file, self.files[file].class_of(function)?)?;
        let traced_forward = self.module_classes.contains(&class)
            && !self.forward_replaced.contains(&class)
            && !self.never_built.contains(&class)
            && self.compiled.as_ref().is_none_or(|compiled| compiled.classes.contains(&class));
        (is_entry_point(function.name()) && traced_forward).then_some(Reason::Forward)
    }

    fn resolve(&self, file: usize, callee: &Callee) -> Vec<FunctionId> {
        match callee {
            &Callee::Local(function) => vec![FunctionId { file, function }],
            Callee::Imported(qualified) => self.find_functions(qualified),
            Callee::InheritedMethod { class, name } => {
                self.inherited_method(ClassId { file, class: *class }, name, 0).into_iter().collect()
            }
        }
    }

    fn inherited_method(&self, class: ClassId, name: &str, depth: usize) -> Option<FunctionId> {
        if depth > 32 {
            return None;
        }
        for base in &self.class(class).bases {
            let Some(base) = self.find_class(class.file, base) else {
                continue;
            };
            let method = self.lookups[base.file].method(&self.files[base.file], &self.class(base).qualname, name);
            if let Some(method) = method {
                return Some(FunctionId { file: base.file, function: method });
            }
            if let Some(found) = self.inherited_method(base, name, depth + 1) {
                return Some(found);
            }
        }
        None
    }

    fn function(&self, id: FunctionId) -> &FunctionSummary {
        &self.files[id.file].functions[id.function]
    }

    fn class(&self, id: ClassId) -> &ClassSummary {
        &self.files[id.file].classes[id.class]
    }

    fn function_in(&self, file: usize, qualname: &str) -> Option<FunctionId> {
        self.lookups[file].function(&self.files[file], qualname).map(|function| FunctionId { file, function })
    }

    /// The file's own class with this qualname.
    fn local_class(&self, file: usize, qualname: &str) -> Option<ClassId> {
        self.lookups[file].class(&self.files[file], qualname).map(|class| ClassId { file, class })
    }

    /// A class named by a base expression: one of the file's own, or one imported from a
    /// project module, also through the modules that re-export it (`from .hub import Mixin` in
    /// a package's `__init__.py`).
    fn find_class(&self, file: usize, qualified: &str) -> Option<ClassId> {
        if let Some(local) = self.local_class(file, qualified) {
            return Some(local);
        }
        self.find_imported_class(qualified, 0)
    }

    fn find_imported_class(&self, qualified: &str, depth: usize) -> Option<ClassId> {
        let (module, name) = qualified.rsplit_once('.')?;
        if depth > 8 {
            return None;
        }
        self.modules_named(module).find_map(|other| self.local_class(other, name)).or_else(|| {
            self.modules_named(module).find_map(|other| {
                let reexported = self.lookups[other].imported_class(&self.files[other], name)?;
                (reexported != qualified).then(|| self.find_imported_class(reexported, depth + 1)).flatten()
            })
        })
    }

    /// Whether `qualified` names something in one of the project's own modules (found or not:
    /// a project module may build its names at run time).
    fn in_project(&self, qualified: &str) -> bool {
        qualified.rsplit_once('.').is_some_and(|(module, _)| self.modules_named(module).next().is_some())
    }

    fn find_functions(&self, qualified: &str) -> Vec<FunctionId> {
        let Some((module, name)) = qualified.rsplit_once('.') else { return Vec::new() };
        self.modules_named(module).filter_map(|file| self.function_in(file, name)).collect()
    }

    /// The project files an import of `module` may mean.
    fn modules_named<'s>(&'s self, module: &'s str) -> impl Iterator<Item = usize> + 's {
        let candidates = self.by_last_segment.get(unqualified(module)).map_or(&[][..], Vec::as_slice);
        candidates.iter().copied().filter(move |&file| module_matches(&self.files[file].module_name, module))
    }
}

/// An imported class of another package: `timm.layers.Mlp`, not `abc.ABC` or `typing.Generic`.
fn is_library_class(base: &str) -> bool {
    const NOT_MODULES: [&str; 9] =
        ["typing", "typing_extensions", "abc", "enum", "collections", "dataclasses", "builtins", "object", "torch"];
    let package = base.split('.').next().unwrap_or(base);
    base.contains('.')
        && !NOT_MODULES.contains(&package)
        && unqualified(base).starts_with(|c: char| c.is_ascii_uppercase())
}

/// Whether a file's module name is what an import names: the names may differ by the
/// directory tcfix was pointed at (`src.models.vlm` is `models.vlm`).
fn module_matches(file_module: &str, imported: &str) -> bool {
    let ends_with_module = |longer: &str, shorter: &str| {
        longer.len() > shorter.len()
            && longer.ends_with(shorter)
            && longer.as_bytes()[longer.len() - shorter.len() - 1] == b'.'
    };
    // `pkg.models.vlm` names the file `models/vlm.py` when tcfix runs inside `pkg`; but a lone
    // top-level `utils.py` is not what `somelib.utils` means.
    file_module == imported
        || ends_with_module(file_module, imported)
        || (file_module.contains('.') && ends_with_module(imported, file_module))
}

#[cfg(test)]
mod tests {
    use super::module_name;

    #[test]
    fn an_absolute_path_outside_the_working_folder_is_named_from_its_package_top() {
        let root = std::env::temp_dir().join(format!("tcfix-module-name-{}", std::process::id()));
        let led = root.join("site.packages").join("transformers").join("models").join("led");
        std::fs::create_dir_all(&led).unwrap();
        for folder in [led.as_path(), led.parent().unwrap(), led.parent().unwrap().parent().unwrap()] {
            std::fs::write(folder.join("__init__.py"), "").unwrap();
        }
        let name = module_name(&led.join("modeling_led.py"));
        // A folder without `__init__.py` inside a package is part of it (a namespace package).
        let common = led.parent().unwrap().join("common");
        std::fs::create_dir_all(&common).unwrap();
        let shared = module_name(&common.join("vla_utils.py"));
        // A src layout under a stray root `__init__.py`: `src/` is no package.
        let src = root.join("repo").join("src").join("pkg");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(root.join("repo").join("__init__.py"), "").unwrap();
        std::fs::write(src.join("__init__.py"), "").unwrap();
        let in_src = module_name(&src.join("model.py"));
        let top = module_name(&led.parent().unwrap().parent().unwrap().join("__init__.py"));
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(name, "transformers.models.led.modeling_led");
        assert_eq!(shared, "transformers.models.common.vla_utils");
        assert_eq!(in_src, "pkg.model");
        assert_eq!(top, "transformers");
        assert_eq!(module_name(std::path::Path::new("models/vlm.py")), "models.vlm");
    }

    use crate::project::findings_of_texts;

    /// The codes tcfix reports on a project of several files, as `path CODE`.
    fn findings(files: &[(&str, &str)]) -> Vec<String> {
        let mut found: Vec<String> =
            findings_of_texts(files).iter().map(|(path, _, d)| format!("{} {}", path.display(), d.rule.code)).collect();
        found.sort();
        found
    }

    const BLOCKS: &str = "import torch\nfrom torch import nn\nfrom pkg.layers import Attention\n\nclass Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.attn = Attention()\n\n    def forward(self, x):\n        print(x)\n        return self.attn(x)\n\nclass Transformer(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.layers = nn.ModuleList([Block() for _ in range(2)])\n\n    def forward(self, x):\n        print(x)\n        for layer in self.layers:\n            x = layer(x)\n        return x\n";
    const ATTENTION: &str = "from torch import nn\n\nclass Attention(nn.Module):\n    def forward(self, x):\n        return x / x.max().item()\n";

    #[test]
    fn a_project_that_compiles_its_blocks_one_by_one_compiles_only_them_and_what_they_hold() {
        let train = "import torch\nfrom pkg.model import Transformer\n\nmodel = Transformer()\nfor block in model.layers:\n    block.compile()\n";
        let files = [("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION), ("train.py", train)];
        // Block's print and its Attention's .item(); Transformer.forward is never traced.
        assert_eq!(findings(&files), ["pkg/layers.py TCF103", "pkg/model.py TCF101"]);
    }

    /// A holder that compiles the encoder it was given (`self.encoder.forward = torch.compile(...)`,
    /// the encoder built from a config tcfix cannot read), and a subclass of it.
    const HOLDER: &str = "import torch\nfrom torch import nn\n\nclass Holder(nn.Module):\n    def __init__(self, encoder, compile_encoder=False):\n        super().__init__()\n        self.encoder = encoder\n        if compile_encoder:\n            self.encoder.forward = torch.compile(self.encoder.forward)\n\n    def forward(self, x):\n        print(x)\n        return self.encoder(x)\n\nclass Trainer(Holder):\n    def forward(self, x):\n        return self.encoder(x) * x.sum().item()\n";

    #[test]
    fn a_part_given_to_its_holder_may_be_any_module_but_the_holder() {
        // The encoder may be Block, Transformer or Attention; Holder and Trainer run eagerly.
        let files = [("pkg/holder.py", HOLDER), ("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION)];
        assert_eq!(findings(&files), ["pkg/layers.py TCF103", "pkg/model.py TCF101", "pkg/model.py TCF101"]);
        // `torch.compile(self.encoder)` says the same; without any compile, every forward may be compiled.
        let whole = HOLDER.replace(
            "self.encoder.forward = torch.compile(self.encoder.forward)",
            "self.encoder = torch.compile(self.encoder)",
        );
        let files = [("pkg/holder.py", whole.as_str()), ("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION)];
        assert_eq!(findings(&files), ["pkg/layers.py TCF103", "pkg/model.py TCF101", "pkg/model.py TCF101"]);
        // A holder's part may be another holder: a trainer compiling the model it was given keeps
        // Holder.forward compiled (only a class in every holder's family is left out).
        let trainer = "import torch\n\nclass Runner:\n    def __init__(self, model):\n        self.model = model\n        self.model.forward = torch.compile(self.model.forward)\n";
        let files = [
            ("pkg/holder.py", HOLDER),
            ("pkg/runner.py", trainer),
            ("pkg/model.py", BLOCKS),
            ("pkg/layers.py", ATTENTION),
        ];
        assert_eq!(findings(&files).len(), 5);
        let none = HOLDER.replace("self.encoder.forward = torch.compile(self.encoder.forward)", "pass");
        let files = [("pkg/holder.py", none.as_str()), ("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION)];
        assert_eq!(findings(&files).len(), 5);
    }

    #[test]
    fn what_a_compile_map_does_not_trust() {
        let every = ["pkg/layers.py TCF103", "pkg/model.py TCF101", "pkg/model.py TCF101"];
        // A test compiles what it tests, not what users run.
        let test = "import torch\nfrom pkg.layers import Attention\n\ndef test_attention():\n    m = torch.compile(Attention())\n";
        assert_eq!(
            findings(&[("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION), ("tests/test_a.py", test)]),
            every
        );
        // `torch._dynamo.optimize(...)(model)` and `partial(torch.compile)` compile something unseen.
        let optimize = "import torch\nfrom pkg.layers import Attention\nm = Attention()\nfast = torch.compile(m)\n\ndef wrap(model):\n    return torch._dynamo.optimize('inductor')(model)\n";
        assert_eq!(findings(&[("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION), ("train.py", optimize)]), every);
        // A loop variable that once held a project class's instance holds something else now.
        let rebound = "import torch\nfrom pkg.layers import Attention\n\ndef main(models):\n    model = Attention()\n    for model in models:\n        torch.compile(model)\n";
        assert_eq!(findings(&[("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION), ("train.py", rebound)]), every);
        // A variable named like a method is no function.
        let named_like_a_method = "import torch\nfrom pkg.layers import Attention\n\nclass Runner:\n    def model(self):\n        return None\n\ndef main(model):\n    attention = torch.compile(Attention())\n    return torch.compile(model)\n";
        assert_eq!(
            findings(&[("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION), ("train.py", named_like_a_method)]),
            every
        );
        // A name bound in another function says nothing of a parameter of this one.
        let scopes = "import torch\nfrom pkg.layers import Attention\n\ndef probe():\n    model = Attention()\n\ndef main(model):\n    return torch.compile(model)\n";
        assert_eq!(findings(&[("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION), ("train.py", scopes)]), every);
    }

    /// A policy whose training `forward` logs `loss.item()` and whose `predict` prints.
    const POLICY: &str = "import torch\nfrom torch import nn\nfrom pkg.layers import Attention\n\nclass Policy(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.encoder = Attention()\n\n    def forward(self, batch):\n        loss = self.encoder(batch).sum()\n        return loss, {'loss': loss.item()}\n\n    def predict(self, batch):\n        print(batch)\n        return self.encoder(batch)\n";

    #[test]
    fn a_compiled_method_is_traced_with_what_its_class_holds_and_not_its_forward() {
        // The encoder's .item() and predict's print; Policy.forward's loss.item() runs eagerly.
        let compiled = ["pkg/layers.py TCF103", "pkg/policy.py TCF101"];
        let of_parameter = "import torch\n\ndef setup(policy):\n    policy.predict = torch.compile(policy.predict)\n";
        let files = [("pkg/policy.py", POLICY), ("pkg/layers.py", ATTENTION), ("rollout.py", of_parameter)];
        assert_eq!(findings(&files), compiled);
        let through_a_name = "import torch\n\ndef setup(policy):\n    method = policy.predict\n    policy.predict = torch.compile(method, mode='max-autotune')\n";
        let files = [("pkg/policy.py", POLICY), ("pkg/layers.py", ATTENTION), ("rollout.py", through_a_name)];
        assert_eq!(findings(&files), compiled);
        let on_self = POLICY.replace(
            "self.encoder = Attention()\n",
            "self.encoder = Attention()\n        self.predict = torch.compile(self.predict)\n",
        );
        assert_eq!(findings(&[("pkg/policy.py", &on_self), ("pkg/layers.py", ATTENTION)]), compiled);
    }

    #[test]
    fn a_compiled_attribute_is_the_module_built_into_it() {
        let holder = "import torch\nfrom torch import nn\nfrom pkg.model import Block\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.body = Block()\n        self.body = torch.compile(self.body)\n\n    def forward(self, x):\n        print(x)\n        return self.body(x)\n";
        let files = [("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION), ("pkg/net.py", holder)];
        assert_eq!(findings(&files), ["pkg/layers.py TCF103", "pkg/model.py TCF101"]);
    }

    #[test]
    fn blocks_yielded_by_a_generator_are_the_items_compiled() {
        let train = "from pkg.model import Transformer\n\ndef compile_targets(model):\n    for i, block in enumerate(getattr(model, 'layers', ())):\n        yield f'layers.{i}', block\n\nmodel = Transformer()\nfor name, block in compile_targets(model):\n    block.compile()\n";
        let files = [("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION), ("train.py", train)];
        assert_eq!(findings(&files), ["pkg/layers.py TCF103", "pkg/model.py TCF101"]);
    }

    #[test]
    fn a_function_that_builds_a_submodule_is_followed_to_what_it_returns() {
        let train = "from pkg.model import Transformer\nmodel = Transformer()\nfor block in model.layers:\n    block.compile()\n";
        let blocks_with = |builder: &str| {
            BLOCKS.replace(
                "        self.attn = Attention()\n",
                "        self.attn = Attention()\n        self.extra = build(2)\n",
            ) + builder
        };
        let with_extra = |builder: &str| {
            let model = blocks_with(builder);
            findings(&[
                ("pkg/model.py", &model),
                ("pkg/layers.py", ATTENTION),
                ("pkg/extra.py", EXTRA),
                ("train.py", train),
            ])
        };
        // Returns no module (its annotation says so), or what its caller gave it: the map holds.
        let blocks_only = ["pkg/layers.py TCF103", "pkg/model.py TCF101"];
        assert_eq!(with_extra("\ndef build(n) -> torch.dtype:\n    return lookup(n)\n"), blocks_only);
        assert_eq!(with_extra("\ndef build(n, wrap=None):\n    return wrap(n)\n"), blocks_only);
        let raises = "\ndef build(n):\n    if n < 0:\n        raise ValueError(n)\n    table = torch.ones(n)\n    return table\n";
        assert_eq!(with_extra(raises), blocks_only);
        // Returns a project class: that class is traced too.
        let extra = "\nfrom pkg.extra import Extra\n\ndef build(n):\n    return Extra(n)\n";
        assert_eq!(with_extra(extra), ["pkg/extra.py TCF101", "pkg/layers.py TCF103", "pkg/model.py TCF101"]);
        // Returns a torch container of a project class.
        let held =
            "\nfrom pkg.extra import Extra\n\ndef build(n):\n    return nn.Sequential(nn.Linear(n, n), Extra(n))\n";
        assert_eq!(with_extra(held), ["pkg/extra.py TCF101", "pkg/layers.py TCF103", "pkg/model.py TCF101"]);
        // Returns from a registry tcfix cannot read: every forward may be compiled.
        let registry = "\nfrom pkg.extra import Extra\nREGISTRY = {'extra': Extra}\n\ndef build(n):\n    module = REGISTRY['extra'](n)\n    return module\n";
        assert_eq!(
            with_extra(registry),
            ["pkg/extra.py TCF101", "pkg/layers.py TCF103", "pkg/model.py TCF101", "pkg/model.py TCF101"]
        );
        let local_class = "\nfrom pkg.extra import Extra\nREGISTRY = {'extra': Extra}\n\ndef build(n):\n    cls = REGISTRY['extra']\n    return cls(n)\n";
        assert_eq!(
            with_extra(local_class),
            ["pkg/extra.py TCF101", "pkg/layers.py TCF103", "pkg/model.py TCF101", "pkg/model.py TCF101"]
        );
    }

    #[test]
    fn what_a_compiled_method_or_attribute_may_run_that_tcfix_cannot_name_keeps_every_forward() {
        let net = "from torch import nn\n\nclass Net(nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n\nclass Tiny(nn.Module):\n    def forward(self, x):\n        return x\n\nclass Other(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.model = Tiny()\n\n    def forward(self, x):\n        return self.model(x)\n";
        // A module given to the class and kept without an annotation: any.
        let agent = "import torch\nfrom pkg.net import Net\n\nclass Agent:\n    def __init__(self, net):\n        self.net = net\n\n    def act(self, obs):\n        return self.net(obs)\n\nagent = Agent(Net())\nagent.act = torch.compile(agent.act)\n";
        assert_eq!(findings(&[("pkg/net.py", net), ("run.py", agent)]), ["pkg/net.py TCF101"]);
        // Used, not called: through its own method, or handed to a function that calls it.
        for use_ in ["self.net.forward(obs)", "run(self.net, obs)"] {
            let agent = agent
                .replace("self.net(obs)", use_)
                .replace("class Agent", "def run(net, obs):\n    return net(obs)\n\nclass Agent");
            assert_eq!(findings(&[("pkg/net.py", net), ("run.py", &agent)]), ["pkg/net.py TCF101"], "{use_}");
        }
        // Named only in its docstring, a comment or a string: it runs nothing, the map stands.
        let quiet = "\"\"\"self.net is trained elsewhere.\"\"\"\n        # self.net stays eager\n        tag = \"self.net\"\n        return obs * 2";
        let agent = agent.replace("return self.net(obs)", quiet);
        assert_eq!(findings(&[("pkg/net.py", net), ("run.py", &agent)]), Vec::<String>::new());
        // `self.model` of a trainer given its model: not another class's `self.model`.
        let trainer = "import torch\n\nclass Trainer:\n    def __init__(self, model):\n        self.model = model\n        self.model = torch.compile(self.model)\n";
        assert_eq!(findings(&[("pkg/net.py", net), ("train.py", trainer)]), ["pkg/net.py TCF101"]);
        // A generator that yields itself as well as its blocks.
        let units = BLOCKS.to_string()
            + "\n    def units(self):\n        yield self\n        for block in self.layers:\n            yield block\n";
        let train = "from pkg.model import Transformer\nmodel = Transformer()\nfor unit in model.units():\n    unit.compile()\n";
        assert_eq!(
            findings(&[("pkg/model.py", &units), ("pkg/layers.py", ATTENTION), ("train.py", train)]),
            ["pkg/layers.py TCF103", "pkg/model.py TCF101", "pkg/model.py TCF101"]
        );
    }

    #[test]
    fn a_compiled_method_that_calls_self_runs_forward() {
        let policy = POLICY
            .replace("        print(batch)\n        return self.encoder(batch)\n", "        return self(batch)\n");
        let rollout = "import torch\n\ndef setup(policy):\n    policy.predict = torch.compile(policy.predict)\n";
        let files = [("pkg/policy.py", policy.as_str()), ("pkg/layers.py", ATTENTION), ("rollout.py", rollout)];
        assert_eq!(findings(&files), ["pkg/layers.py TCF103", "pkg/policy.py TCF103"]);
    }

    const EXTRA: &str = "from torch import nn\n\nclass Extra(nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n";

    #[test]
    fn a_compiled_class_holds_what_its_arguments_and_its_holder_name() {
        let model = "import torch\nfrom torch import nn\n\nclass Norm(nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n\nclass Block(nn.Module):\n    def __init__(self, norm_layer):\n        super().__init__()\n        self.norm = norm_layer()\n\n    def forward(self, x):\n        return self.norm(x)\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.layers = nn.ModuleList([Block(norm_layer=Norm)])\n\n    def forward(self, x):\n        print(x)\n        return x\n";
        let blocks = "from pkg.model import Net\nmodel = Net()\nfor block in model.layers:\n    block.compile()\n";
        // Norm, passed in by Net, runs in the compiled blocks; Net.forward does not.
        assert_eq!(findings(&[("pkg/model.py", model), ("train.py", blocks)]), ["pkg/model.py TCF101"]);
        let wrapped =
            "import torch\nfrom pkg.model import Block, Norm\nmodel = Block(Norm)\ncompiled = torch.compile(model)\n";
        assert_eq!(findings(&[("pkg/model.py", model), ("train.py", wrapped)]), ["pkg/model.py TCF101"]);
    }

    #[test]
    fn a_compile_call_tcfix_cannot_read_keeps_every_forward() {
        let train = "import torch\n\ndef setup(model):\n    for block in model.layers:\n        block.compile()\n    return torch.compile(model)\n";
        let files = [("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION), ("train.py", train)];
        assert_eq!(findings(&files), ["pkg/layers.py TCF103", "pkg/model.py TCF101", "pkg/model.py TCF101"]);
        let library = [("pkg/model.py", BLOCKS), ("pkg/layers.py", ATTENTION)];
        assert_eq!(findings(&library), ["pkg/layers.py TCF103", "pkg/model.py TCF101", "pkg/model.py TCF101"]);
    }

    /// The findings of a project as `path:line CODE severity | end of message`.
    fn severities(files: &[(&str, &str)]) -> Vec<String> {
        let found = findings_of_texts(files);
        let tail = |d: &crate::diagnostic::Diagnostic| d.message.rsplit("; ").next().unwrap_or_default().to_string();
        (found.iter())
            .map(|(path, line, d)| format!("{}:{line} {} {} | {}", path.display(), d.rule.code, d.severity, tail(d)))
            .collect()
    }

    const LAYERDROP_MODEL: &str = "import torch\nfrom torch import nn\nfrom .configuration_tiny import TinyConfig\n\n\nclass Decoder(nn.Module):\n    def __init__(self, config: TinyConfig):\n        super().__init__()\n        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])\n        self.layerdrop = config.decoder_layerdrop\n\n    def forward(self, x):\n        for layer in self.layers:\n            if self.training and self.layerdrop > 0.0:\n                if torch.rand([]) < self.layerdrop:\n                    continue\n            x = layer(x)\n        return x\n";

    /// transformers' shape: the config class in `configuration_*.py` gives `decoder_layerdrop`
    /// its default, the module in `modeling_*.py` stores it and tests it. With the default 0.0
    /// the LayerDrop draw is never traced: the finding stays, low, and says when it is real.
    #[test]
    fn a_branch_the_imported_config_turns_off_by_default_is_low_and_says_when() {
        let config = "from ...configuration_utils import PreTrainedConfig\n\n\nclass TinyConfig(PreTrainedConfig):\n    hidden_size: int = 4\n    decoder_layerdrop: float | int = 0.0\n";
        let files =
            [("pkg/models/tiny/configuration_tiny.py", config), ("pkg/models/tiny/modeling_tiny.py", LAYERDROP_MODEL)];
        assert_eq!(
            severities(&files),
            vec![
                "pkg/models/tiny/modeling_tiny.py:15 TCF104 low | only when `config.decoder_layerdrop > 0.0` (0.0 by default)"
            ]
        );
    }

    /// The same module where the default turns the branch on (0.1), where the config class sets
    /// the field after `__init__` (`__post_init__`), or where it stores it from a parameter with
    /// no literal default: the finding stays as it was, critical in the layer loop.
    #[test]
    fn a_branch_the_imported_config_does_not_turn_off_stays_critical() {
        let configs = [
            "class TinyConfig:\n    decoder_layerdrop: float = 0.1\n",
            "class TinyConfig:\n    decoder_layerdrop: float = 0.0\n\n    def __post_init__(self):\n        self.decoder_layerdrop = 0.2\n",
            "class TinyConfig:\n    def __init__(self, decoder_layerdrop):\n        self.decoder_layerdrop = decoder_layerdrop\n",
        ];
        for config in configs {
            let files = [
                ("pkg/models/tiny/configuration_tiny.py", config),
                ("pkg/models/tiny/modeling_tiny.py", LAYERDROP_MODEL),
            ];
            let found = severities(&files);
            assert_eq!(found.len(), 1, "{config}");
            assert!(
                found[0].starts_with("pkg/models/tiny/modeling_tiny.py:15 TCF104 critical | it is inside a loop"),
                "{config}: {found:?}"
            );
        }
    }

    /// A base config class in another file gives the default through `__init__`, its subclass
    /// inherits it: found through the bases, across files.
    #[test]
    fn a_config_default_is_inherited_from_a_base_config_of_another_file() {
        let base = "class BaseConfig:\n    def __init__(self, decoder_layerdrop=0.0, **kwargs):\n        self.decoder_layerdrop = decoder_layerdrop\n";
        let config =
            "from ...base_config import BaseConfig\n\n\nclass TinyConfig(BaseConfig):\n    hidden_size: int = 4\n";
        let files = [
            ("pkg/base_config.py", base),
            ("pkg/models/tiny/configuration_tiny.py", config),
            ("pkg/models/tiny/modeling_tiny.py", LAYERDROP_MODEL),
        ];
        assert_eq!(
            severities(&files),
            vec![
                "pkg/models/tiny/modeling_tiny.py:15 TCF104 low | only when `config.decoder_layerdrop > 0.0` (0.0 by default)"
            ]
        );
    }

    /// A pipeline class defines `forward` on a mixin that the package's `__init__.py` re-exports
    /// from another of its files: the mixin is found there, and it is not an `nn.Module`, so
    /// neither is the pipeline (transformers' `Pipeline(PushToHubMixin)`).
    #[test]
    fn a_class_on_a_reexported_plain_mixin_is_not_a_module() {
        let hub = "class UploadMixin:\n    def upload(self):\n        print('uploading')\n";
        let init = "from .hub import UploadMixin\n";
        let pipeline = "from .utils import UploadMixin\n\n\nclass Pipeline(UploadMixin):\n    def forward(self, inputs):\n        print(inputs)\n        return inputs\n";
        let files = [("pkg/utils/hub.py", hub), ("pkg/utils/__init__.py", init), ("pkg/pipeline.py", pipeline)];
        assert_eq!(findings(&files), Vec::<String>::new());
    }

    /// The same shape with a mixin that is a module, re-exported the same way: found as one.
    #[test]
    fn a_class_on_a_reexported_module_base_is_a_module() {
        let layers = "from torch import nn\n\n\nclass Block(nn.Module):\n    def forward(self, x):\n        return x\n";
        let init = "from .blocks import Block\n";
        let model = "from .layers import Block\n\n\nclass Model(Block):\n    def forward(self, x):\n        print(x)\n        return x\n";
        let files = [("pkg/layers/blocks.py", layers), ("pkg/layers/__init__.py", init), ("pkg/model.py", model)];
        assert_eq!(findings(&files), vec!["pkg/model.py TCF101".to_string()]);
    }

    /// timm's shape: `torch.compiler.disable` under a name of the library's own, defined in one
    /// file and re-exported by the package. `model` imports it: no finding with the alias, a
    /// TCF101 when the alias is a plain pass-through.
    fn assert_disable_alias_keeps_dynamo_out(model: &str) {
        let typing = "import torch\n\n\ndef passthrough(fn):\n    return fn\n\n\nno_compile = getattr(torch.compiler, 'disable', None) or passthrough\n";
        let init = "from .typing import no_compile\n";
        let files = [("pkg/layers/typing.py", typing), ("pkg/layers/__init__.py", init), ("pkg/model.py", model)];
        assert_eq!(findings(&files), Vec::<String>::new());
        let plain = typing.replace("getattr(torch.compiler, 'disable', None) or passthrough", "passthrough");
        let files =
            [("pkg/layers/typing.py", plain.as_str()), ("pkg/layers/__init__.py", init), ("pkg/model.py", model)];
        assert_eq!(findings(&files), vec!["pkg/model.py TCF101".to_string()]);
    }

    #[test]
    fn a_disable_alias_reexported_by_a_package_keeps_dynamo_out() {
        assert_disable_alias_keeps_dynamo_out(
            "from torch import nn\nfrom .layers import no_compile\n\n\nclass Model(nn.Module):\n    @no_compile\n    def _log(self, x):\n        print(x)\n\n    def forward(self, x):\n        self._log(x)\n        return x\n",
        );
    }

    /// The same alias on `forward` itself: the index's word that it is disabled reaches the
    /// file, so `forward` is no root there either (it was only kept out of the index's region).
    #[test]
    fn a_forward_disabled_through_a_reexported_alias_is_not_compiled() {
        assert_disable_alias_keeps_dynamo_out(
            "from torch import nn\nfrom .layers import no_compile\n\n\nclass Model(nn.Module):\n    @no_compile\n    def forward(self, x):\n        print(x)\n        return x\n",
        );
    }

    /// A helper called under `torch.no_grad()` by a loss in its own file and with grad on by a
    /// model in another: grad is not off wherever it runs, so TCF105 is reported whatever the
    /// order the files are read in (the index reaches it first from one or the other).
    #[test]
    fn grad_is_not_off_for_a_helper_another_file_calls_with_grad_on() {
        let losses = "import torch\nfrom torch import nn\n\n\ndef scatter_rows(out: torch.Tensor, mask: torch.Tensor, values: torch.Tensor):\n    keep = mask > 0\n    out[keep] = values\n    return out\n\n\nclass Loss(nn.Module):\n    def forward(self, out: torch.Tensor, mask: torch.Tensor, values: torch.Tensor):\n        with torch.no_grad():\n            target = scatter_rows(out, mask, values)\n        return (out - target).pow(2).mean()\n";
        for name in ["alosses", "zlosses"] {
            let model = format!(
                "import torch\nfrom torch import nn\nfrom pkg.{name} import scatter_rows\n\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(4, 4)\n\n    def forward(self, out: torch.Tensor, mask: torch.Tensor, values: torch.Tensor):\n        return scatter_rows(self.proj(out), mask > 0, self.proj(values))\n"
            );
            let path = format!("pkg/{name}.py");
            let files = [(path.as_str(), losses), ("pkg/model.py", model.as_str())];
            assert_eq!(findings(&files), vec![format!("{path} TCF105")], "{name}");
        }
        // Called from this file alone, under no_grad: grad is off, nothing to report.
        assert_eq!(findings(&[("pkg/alosses.py", losses)]), Vec::<String>::new());
    }

    const SEEDED_CONFIG: &str = "from dataclasses import dataclass\n\n\n@dataclass\nclass RolloutConfig:\n    seeded: bool = False\n    mode: str = \"plain\"\n";

    /// A policy reads its config through `getattr` (`bool(getattr(self.config, "seeded", False))`)
    /// and tests a string mode (`!= "joint"`); the dataclass in `configuration_rollout.py` leaves
    /// both off. The counter bumped after the early return and the helper called after the mode's
    /// early return are off by default: low, with the condition.
    const SEEDED_POLICY: &str = "import torch\nfrom torch import nn\n\nfrom .configuration_rollout import RolloutConfig\n\n\ndef joint_spans(ids):\n    return (ids == 3).nonzero()\n\n\nclass Rollout(nn.Module):\n    def __init__(self, config: RolloutConfig):\n        super().__init__()\n        self.config = config\n        self.episode = 0\n\n    def generator(self):\n        if not bool(getattr(self.config, \"seeded\", False)):\n            return None\n        self.episode += 1\n        return self.episode\n\n    def spans(self, ids):\n        if getattr(self.config, \"mode\", None) != \"joint\":\n            return ids > 0\n        return joint_spans(ids)\n\n    def forward(self, ids):\n        self.generator()\n        return self.spans(ids)\n";

    #[test]
    fn getattr_and_string_modes_of_an_imported_dataclass_config_are_read_off_by_default() {
        let files = [("pkg/configuration_rollout.py", SEEDED_CONFIG), ("pkg/modeling_rollout.py", SEEDED_POLICY)];
        assert_eq!(
            severities(&files),
            vec![
                "pkg/modeling_rollout.py:8 TCF106 low | only when `config.mode == \"joint\"` (\"plain\" by default), where `Rollout.spans` calls `joint_spans`",
                "pkg/modeling_rollout.py:20 TCF203 low | only when `config.seeded` (False by default)",
            ]
        );
    }

    /// The project turns the fields on outside its tests (`RolloutConfig(seeded=True)` in a
    /// script, `config.mode = "joint"` in another module): those branches run, and their findings
    /// stay as they were. A test file that turns them on only covers the mode, and another config
    /// class built with the same keyword is another config: still low.
    #[test]
    fn a_config_field_the_project_sets_on_elsewhere_keeps_its_finding() {
        let script = "from pkg.configuration_rollout import RolloutConfig\n\n\ndef main():\n    return RolloutConfig(seeded=True)\n";
        let other = "def use_joint(config):\n    config.mode = \"joint\"\n";
        let files = [
            ("pkg/configuration_rollout.py", SEEDED_CONFIG),
            ("pkg/modeling_rollout.py", SEEDED_POLICY),
            ("pkg/train.py", script),
            ("pkg/joint.py", other),
        ];
        let found = severities(&files);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found.iter().all(|f| !f.contains(" low ")), "{found:?}");
        let same_value = "from pkg.configuration_rollout import RolloutConfig\n\n\ndef main():\n    return RolloutConfig(seeded=False, mode=\"plain\")\n";
        let test = "from pkg.configuration_rollout import RolloutConfig\n\n\ndef test_seeded():\n    assert RolloutConfig(seeded=True, mode=\"joint\").seeded\n";
        // Another config class's keyword sets nothing of this one (`GenerationConfig(pad_token_id=0)`).
        let other_class =
            "class OtherConfig:\n    seeded: bool = False\n\n\ndef main():\n    return OtherConfig(seeded=True)\n";
        for (path, text) in
            [("pkg/train.py", same_value), ("tests/test_rollout.py", test), ("pkg/other.py", other_class)]
        {
            let files = [
                ("pkg/configuration_rollout.py", SEEDED_CONFIG),
                ("pkg/modeling_rollout.py", SEEDED_POLICY),
                (path, text),
            ];
            let found = severities(&files);
            assert_eq!(found.len(), 2, "{path}: {found:?}");
            assert!(found.iter().all(|f| f.contains(" low ")), "{path}: {found:?}");
        }
    }

    const LOCAL_CONFIG: &str = "from dataclasses import dataclass\n\n\n@dataclass\nclass LocalConfig:\n    width: int = 4\n    window: int | None = None\n";

    /// A flag `__init__` sets False and turns on only when the config sets a window: a loop
    /// under it runs only with such a config.
    const LOCAL_MODEL: &str = "import torch\nfrom torch import nn\n\nfrom .configuration_local import LocalConfig\n\n\nclass Local(nn.Module):\n    def __init__(self, config: LocalConfig):\n        super().__init__()\n        self.proj = nn.Linear(config.width, config.width)\n        self.banded = False\n        if config.window is not None:\n            self.banded = True\n\n    def forward(self, x):\n        if self.banded:\n            for row in range(x.shape[1]):\n                x[:, row] = self.proj(x[:, row])\n        return x\n";

    /// The config class of another file leaves `window` unset: the loop under the flag the
    /// window turns on is low, with the config test's condition.
    #[test]
    fn a_flag_only_a_config_test_turns_on_in_init_takes_its_condition() {
        // A data loader's keywords (`batch`) are no preset of `LocalConfig`: they set nothing of it.
        let loader = "LOADER = dict(batch=8, window=64)\n";
        for files in [
            &[("pkg/configuration_local.py", LOCAL_CONFIG), ("pkg/modeling_local.py", LOCAL_MODEL)][..],
            &[
                ("pkg/configuration_local.py", LOCAL_CONFIG),
                ("pkg/modeling_local.py", LOCAL_MODEL),
                ("pkg/data.py", loader),
            ],
        ] {
            assert_eq!(
                severities(files),
                vec!["pkg/modeling_local.py:17 TCF204 low | only when `config.window is not None` (None by default)"]
            );
        }
    }

    /// Another file that names the flag (a script turning it on, a subclass storing it) or sets
    /// the window (`LocalConfig(window=8)`, a preset `dict(window=64)`, `dataclasses.replace`,
    /// `cfg.window = 64`) may turn the loop on: it stays medium.
    #[test]
    fn a_flag_another_file_names_or_whose_field_the_project_sets_keeps_its_finding() {
        let turns_on = "def band(model):\n    for module in model.modules():\n        module.banded = True\n";
        let subclass = "from pkg.modeling_local import Local\n\n\nclass Wide(Local):\n    def __init__(self, config):\n        super().__init__(config)\n        self.banded = True\n";
        let sets_window =
            "from pkg.configuration_local import LocalConfig\n\n\ndef main():\n    return LocalConfig(window=8)\n";
        // Presets read as `LocalConfig(**preset)`, a replaced copy, a script's `cfg`.
        let preset = "PRESETS = [dict(width=8, window=64)]\n";
        let replaced = "import dataclasses\n\n\ndef wide(config):\n    return dataclasses.replace(config, window=64)\n";
        let script = "def main(cfg):\n    cfg.window = 64\n";
        let others = [
            ("pkg/band.py", turns_on),
            ("pkg/wide.py", subclass),
            ("pkg/train.py", sets_window),
            ("pkg/presets.py", preset),
            ("pkg/variants.py", replaced),
            ("scripts/run.py", script),
        ];
        for (path, text) in others {
            let files =
                [("pkg/configuration_local.py", LOCAL_CONFIG), ("pkg/modeling_local.py", LOCAL_MODEL), (path, text)];
            let found = severities(&files);
            assert_eq!(found.len(), 1, "{path}: {found:?}");
            assert!(found[0].starts_with("pkg/modeling_local.py:17 TCF204 medium"), "{path}: {found:?}");
        }
    }
}

//! What the project's own compile calls trace (`compile_scope` reads the calls, this resolves
//! them over the whole project): the module classes whose `forward` runs compiled, and the
//! methods compiled on their own (`torch.compile(policy.predict_action_chunk)`).

use rustc_hash::FxHashSet as HashSet;

use super::{ClassId, FunctionId, ProjectIndex};
use crate::model::compiled::compile_scope::{CompileTarget, Held};
use crate::model::compiled::module_builders::Builds;

/// What compiling a member (`torch.compile(self.unet)`, `torch.compile(policy.predict)`) traces.
enum Member {
    /// The modules held there and the methods of that name.
    Known { held: Vec<ClassId>, compiled: Vec<FunctionId> },
    /// A module of any class, given to this holder and kept there.
    GivenTo(ClassId),
}

pub(super) struct CompileMap {
    /// The module classes whose `forward` is traced.
    pub classes: HashSet<ClassId>,
    /// Methods compiled by themselves: roots, while their class's `forward` may stay eager.
    pub methods: HashSet<FunctionId>,
}

impl ProjectIndex {
    /// The classes the project's compile calls trace: the ones they name, the classes those
    /// name in their code (submodules, transitively) and their bases; and the methods they
    /// compile, with the classes their holders name. None when no call names a module or a
    /// method, or one names something tcfix cannot resolve: then every `forward` may be compiled.
    pub(super) fn find_compiled(&self) -> Option<CompileMap> {
        let mut named: Vec<ClassId> = Vec::new();
        let mut methods: HashSet<FunctionId> = HashSet::default();
        let mut holders: Vec<ClassId> = Vec::new();
        for (file, summary) in self.files.iter().enumerate() {
            for target in &summary.compile_targets {
                match target {
                    CompileTarget::Function => {}
                    CompileTarget::Unknown => return None,
                    CompileTarget::Classes(classes) => {
                        named.push(self.find_class(file, &classes[0])?);
                        named.extend(classes[1..].iter().filter_map(|class| self.find_class(file, class)));
                    }
                    CompileTarget::ItemsOf(attr) => {
                        let held = self.classes_held_in(attr);
                        if held.is_empty() {
                            return None;
                        }
                        named.extend(held);
                    }
                    CompileTarget::Member { name, of_class } => {
                        match self.member_compiled(file, name, of_class.as_deref())? {
                            Member::Known { held, compiled } => {
                                named.extend(held);
                                methods.extend(compiled);
                            }
                            Member::GivenTo(holder) => holders.push(holder),
                        }
                    }
                }
            }
        }
        if !holders.is_empty() {
            // A part given to its holder (`self.encoder.forward = torch.compile(...)`, the encoder
            // built from a config) may be any module but that holder (or a subclass of it): the
            // project compiles the holder's part because it runs the holder itself eagerly. Each
            // holder's part may be another holder (a trainer compiling the model it was given),
            // so only a class in every holder's family is left out.
            let eager = self.in_every_family(&holders);
            named.extend(self.module_classes.iter().filter(|class| !eager.contains(class)));
        }
        if named.is_empty() && methods.is_empty() {
            return None;
        }
        let classes = self.named_transitively(named)?;
        Some(CompileMap { classes, methods })
    }

    /// What `torch.compile(x.name)` traces: the modules x's class holds in `name`, or its
    /// methods called `name` with what their classes hold; or, for a module of any class that
    /// x's class was given and keeps there (`held_by` is None only for such a module: one kept
    /// without a project class's annotation), only the holder. None when nothing is found: a
    /// builder's result tcfix cannot name leaves every `forward` compiled.
    fn member_compiled(&self, file: usize, name: &str, of_class: Option<&str>) -> Option<Member> {
        let of_class = match of_class {
            Some(class) => Some(self.find_class(file, class)?),
            None => None,
        };
        // An attribute holding a kept module is no method (the instance's attribute would hide
        // it): no need to look for methods of that name in the whole project.
        let mut held = match of_class.map(|class| (class, self.held_by(class, name))) {
            Some((_, Some(held))) => held,
            Some((holder, None)) => return Some(Member::GivenTo(holder)),
            None => Vec::new(),
        };
        let compiled = self.methods_named(name, of_class);
        if held.is_empty() && compiled.is_empty() {
            return None;
        }
        for &method in &compiled {
            held.extend(self.held_by_method_class(method)?);
        }
        Some(Member::Known { held, compiled })
    }

    /// The classes that are, or descend from, every one of `holders`: one scan for the first
    /// holder's family, then a test of each of its members against the others (a project can
    /// hold thousands of holders; scanning every class per holder would be quadratic).
    fn in_every_family(&self, holders: &[ClassId]) -> HashSet<ClassId> {
        let (&first, others) = holders.split_first().expect("called with holders");
        let mut family = self.subclasses_of(first);
        family.push(first);
        let others: HashSet<ClassId> = others.iter().copied().collect();
        family
            .into_iter()
            .filter(|&class| others.iter().all(|&other| class == other || self.descends_from(class, other, 0)))
            .collect()
    }

    /// The named classes, what they name in turn and their bases, and what the project
    /// functions they build submodules with return (`-> BaseActionSpace`: it and its
    /// subclasses). None when such a function may return any project module: it is unseen.
    fn named_transitively(&self, mut named: Vec<ClassId>) -> Option<HashSet<ClassId>> {
        let mut compiled: HashSet<ClassId> = HashSet::default();
        while let Some(class) = named.pop() {
            if !compiled.insert(class) {
                continue;
            }
            let summary = self.class(class);
            for name in summary.classes_named.iter().chain(&summary.bases) {
                named.extend(self.find_class(class.file, name));
            }
            named.extend(self.built_through_project_functions(class)?);
        }
        Some(compiled)
    }

    /// The classes the project functions a class builds submodules with may return: an
    /// annotated or returned class and its subclasses. None when one may return anything.
    fn built_through_project_functions(&self, class: ClassId) -> Option<Vec<ClassId>> {
        let mut built = Vec::new();
        for builder in &self.class(class).builders_called {
            built.extend(self.returned_by(class.file, builder, 0)?);
        }
        Some(built)
    }

    /// The project modules a class was given and kept that the compiled method's code uses
    /// (`net: Net`: it and its subclasses). None when one may be any module (no annotation,
    /// `nn.Module`).
    fn kept_modules(&self, class: ClassId, reached: &[FunctionId]) -> Option<Vec<ClassId>> {
        let mut kept = Vec::new();
        for given in &self.class(class).kept_given {
            if !reached.iter().any(|&function| self.function(function).kept_used.contains(&given.attr)) {
                continue;
            }
            let given = given.class.as_deref().filter(|given| !given.starts_with("torch."))?;
            let modules = self.instances_of(class.file, given).into_iter();
            kept.extend(modules.filter(|module| self.module_classes.contains(module)));
        }
        Some(kept)
    }

    /// The functions a compiled method reaches through the calls tcfix resolves.
    fn reached_from(&self, method: FunctionId) -> Vec<FunctionId> {
        let mut reached = vec![method];
        let mut seen: HashSet<FunctionId> = HashSet::from_iter([method]);
        let mut next = 0;
        while let Some(&function) = reached.get(next) {
            next += 1;
            for target in &self.function(function).targets {
                for callee in self.resolve(function.file, target) {
                    if seen.insert(callee) {
                        reached.push(callee);
                    }
                }
            }
        }
        reached
    }

    /// The project classes a call of `function` (as `file` names it) may return.
    fn returned_by(&self, file: usize, function: &str, depth: usize) -> Option<Vec<ClassId>> {
        if depth > 8 {
            return None;
        }
        let mut built = Vec::new();
        let found: Vec<FunctionId> =
            self.function_in(file, function).into_iter().chain(self.find_functions(function)).collect();
        // What a class calls outside the project (`deque(...)`, `resnet18()`) is the library's
        // (as before the compile map followed builders); what a project builder returns from a
        // library's function (`instantiate(cfg.model)`) may be any project module.
        if found.is_empty() {
            return (depth == 0).then(Vec::new);
        }
        for function in found {
            match &self.function(function).builds {
                Builds::Nothing => {}
                Builds::Unknown => return None,
                Builds::Returns { classes, functions } => {
                    for returned in classes {
                        built.extend(self.instances_of(function.file, returned));
                    }
                    for called in functions {
                        built.extend(self.returned_by(function.file, called, depth + 1)?);
                    }
                }
            }
        }
        Some(built)
    }

    /// The classes whose instances a value of class `qualified` may be: it and its subclasses,
    /// or for a library's class (`Callable`, `PreTrainedModel`) the project's subclasses of it.
    fn instances_of(&self, file: usize, qualified: &str) -> Vec<ClassId> {
        match self.find_class(file, qualified) {
            Some(class) => {
                let mut found = self.subclasses_of(class);
                found.push(class);
                found
            }
            None => self.subclasses_of_library_class(qualified),
        }
    }

    /// What a compiled method's class, its bases and its subclasses (which may inherit the
    /// method) name: their submodules run inside the method. The classes themselves are not
    /// named: their `forward` is not the method. None when one builds a submodule through a
    /// project function.
    fn held_by_method_class(&self, method: FunctionId) -> Option<Vec<ClassId>> {
        let holder = ClassId { file: method.file, class: self.function(method).class? };
        let mut held = Vec::new();
        let mut classes = self.subclasses_of(holder);
        classes.push(holder);
        let mut seen: HashSet<ClassId> = HashSet::default();
        let reached = self.reached_from(method);
        while let Some(class) = classes.pop() {
            if !seen.insert(class) {
                continue;
            }
            held.extend(self.built_through_project_functions(class)?);
            held.extend(self.kept_modules(class, &reached)?);
            let summary = self.class(class);
            held.extend(summary.classes_named.iter().filter_map(|name| self.find_class(class.file, name)));
            classes.extend(summary.bases.iter().filter_map(|base| self.find_class(class.file, base)));
        }
        held.retain(|class| !seen.contains(class));
        Some(held)
    }

    /// The project's methods called `name`: of `of_class` (its own or inherited) and of its
    /// subclasses when the call compiles `self.<name>`; else of every class.
    fn methods_named(&self, name: &str, of_class: Option<ClassId>) -> Vec<FunctionId> {
        let mut found = Vec::new();
        for (file, summary) in self.files.iter().enumerate() {
            for (function, f) in summary.functions.iter().enumerate() {
                let Some(class) = f.class else { continue };
                let class = ClassId { file, class };
                if f.name() == name && of_class.is_none_or(|of| class == of || self.descends_from(class, of, 0)) {
                    found.push(FunctionId { file, function });
                }
            }
        }
        if let Some(of) = of_class
            && !found.iter().any(|method| self.function(*method).class == Some(of.class) && method.file == of.file)
        {
            found.extend(self.inherited_method(of, name, 0));
        }
        found
    }

    fn subclasses_of(&self, ancestor: ClassId) -> Vec<ClassId> {
        let classes = self
            .files
            .iter()
            .enumerate()
            .flat_map(|(file, summary)| (0..summary.classes.len()).map(move |class| ClassId { file, class }));
        classes.filter(|&class| self.descends_from(class, ancestor, 0)).collect()
    }

    fn subclasses_of_library_class(&self, qualified: &str) -> Vec<ClassId> {
        let mut found = Vec::new();
        for (file, summary) in self.files.iter().enumerate() {
            for (class, own) in summary.classes.iter().enumerate() {
                if own.bases.iter().any(|base| base == qualified) {
                    let class = ClassId { file, class };
                    found.push(class);
                    found.extend(self.subclasses_of(class));
                }
            }
        }
        found
    }

    fn descends_from(&self, class: ClassId, ancestor: ClassId, depth: usize) -> bool {
        depth <= 32
            && self
                .class(class)
                .bases
                .iter()
                .filter_map(|base| self.find_class(class.file, base))
                .any(|base| base == ancestor || self.descends_from(base, ancestor, depth + 1))
    }

    /// The modules a class (or a base) holds in `self.<attr>`: built there, or given and kept.
    /// None when it keeps one of any class there.
    fn held_by(&self, class: ClassId, attr: &str) -> Option<Vec<ClassId>> {
        let mut held = Vec::new();
        let mut classes = vec![class];
        let mut seen: HashSet<ClassId> = HashSet::default();
        while let Some(class) = classes.pop() {
            if !seen.insert(class) {
                continue;
            }
            let summary = self.class(class);
            let built =
                self.files[class.file].held_in.iter().filter(|h| h.attr == attr && h.holder == summary.qualname);
            let built = built.filter_map(|h| self.find_class(class.file, &h.class));
            held.extend(built.filter(|built| self.module_classes.contains(built)));
            for kept in summary.kept_given.iter().filter(|kept| kept.attr == attr) {
                let given = kept.class.as_deref().filter(|given| !given.starts_with("torch."))?;
                held.extend(self.instances_of(class.file, given));
            }
            classes.extend(summary.bases.iter().filter_map(|base| self.find_class(class.file, base)));
        }
        Some(held)
    }

    /// The module classes built into `self.<attr>` anywhere in the project (`self.layers =
    /// nn.ModuleList([Block(...) ...])`): the items a loop over `x.<attr>` compiles; with what
    /// their holder names (`Block(norm_layer=RMSNorm)` passes `RMSNorm` in).
    fn classes_held_in(&self, attr: &str) -> Vec<ClassId> {
        let mut held = Vec::new();
        for (file, summary) in self.files.iter().enumerate() {
            for Held { class, holder, .. } in summary.held_in.iter().filter(|held| held.attr == attr) {
                let Some(class) = self.find_class(file, class).filter(|class| self.module_classes.contains(class))
                else {
                    continue;
                };
                held.push(class);
                if let Some(holder) = self.local_class(file, holder) {
                    held.extend(self.class(holder).classes_named.iter().filter_map(|name| self.find_class(file, name)));
                }
            }
        }
        held
    }
}

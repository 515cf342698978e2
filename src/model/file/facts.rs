//! What the project index tells one file about itself (`Facts`), and which of those facts the
//! analysis of the file depends on (`Dependence`). The index produces them, `reach::mark_region`
//! reads them into the file's model, and a run compares them to skip a second parse.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

use crate::model::file::configured::Captures;
use crate::model::file::configured::{ConfigDefaults, ProjectLengths};
use crate::model::file::dead_code::HelperFlags;
use crate::model::file::imports::unqualified;
use crate::model::file::message_facts::MessageFact;
use crate::model::file::mutation::StateAttributes;
use crate::model::file::passed::Passed;
use crate::model::file::self_assignments;
use crate::model::file::{FileModel, FunctionNode, Reason};
/// What the index tells one file about itself.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// Qualnames of the file's classes that are `nn.Module` subclasses.
    pub module_classes: HashSet<String>,
    /// Qualnames of the file's classes whose `forward` a decorator replaces (not a root).
    pub forward_replaced: HashSet<String>,
    /// Qualnames of the file's classes that nothing builds (only named in dead code): not roots.
    pub never_built: HashSet<String>,
    /// Qualnames of the file's module classes the project's compile calls do not trace
    /// (`compile_scope`): their `forward` is not a root.
    pub outside_compile_scope: HashSet<String>,
    /// Qualnames of the file's functions in the compiled region, with the reason.
    pub reached: HashMap<String, Reason>,
    /// Qualnames of the file's functions that a decorator imported from another project file
    /// keeps Dynamo out of (timm's `@disable_compiler`): the file alone cannot tell.
    pub disabled: HashSet<String>,
    /// Qualnames of the file's functions that compiled code of another file calls.
    pub called_from_other_files: HashSet<String>,
    /// Qualnames of the file's classes that another project file imports (and may build and call),
    /// tests aside: a test that passes `rollout_steps=4` exercises an option, it is no normal use.
    pub imported_elsewhere: HashSet<String>,
    /// Of the names the file asks about (`FileSummary::names_asked`), those another file uses.
    pub named_elsewhere: HashSet<String>,
    /// Names the file imports that are project `nn.Module` classes.
    pub imported_module_classes: HashSet<String>,
    /// Of those, the ones that set attributes to torch.nn modules, with those attributes:
    /// `self.decoder.embed(ids)` is a tensor when `self.decoder = Decoder(...)` and `Decoder`,
    /// in another file, sets `self.embed = nn.Embedding(...)`.
    pub imported_submodules: HashMap<String, Vec<String>>,
    /// Attribute names that hold changing state anywhere in the project (shared by all files).
    pub state_attributes: Arc<StateAttributes>,
    /// The file may hold code the setup rules read outside the compiled region.
    pub setup_code: bool,
    /// Defaults of the config classes the file defines or imports (`config_defaults`).
    pub config_defaults: Arc<ConfigDefaults>,
    /// The longest whole-number defaults of every config class of the project (shared by all files).
    pub project_lengths: Arc<ProjectLengths>,
    /// The capture options the project turns on, and where it compiles (the same for all files).
    pub captures: Captures,
    /// The project's checks that raise with their message only when they fail (`message_checks`;
    /// shared by all files).
    pub message_checks: Arc<HashSet<MessageFact>>,
    /// Of the file's module-level helpers that only other files call
    /// (`DeadCode::helpers_called_elsewhere`), what those calls pass.
    pub passed_from_elsewhere: HashMap<String, Passed>,
}

/// Which of the project's facts the analysis of a file can depend on, beyond its region.
#[derive(Debug, Clone, Default)]
pub struct Dependence {
    /// The file registers hooks: their analysis reads project-wide state attributes.
    has_hooks: bool,
    /// Names the file calls to make an attribute (`self.x = Name(...)`): TCF102 asks whether
    /// they are module classes.
    constructed: HashSet<String>,
    /// The file registers buffers: a table grown lazily may be pre-grown to a length the
    /// project's config classes give (`project_lengths`).
    registers_buffers: bool,
    /// What TCF209 asked of the project's message checks (`message_checks`), about qualified
    /// names: known once the file's rules have run.
    checks_asked: Vec<MessageFact>,
    /// The imported names the analysis asked the index about (`imported_module_classes`,
    /// `imported_submodules`): known once the file's rules have run.
    imported_classes_asked: HashSet<String>,
    /// The flag parameters of the file's helpers that only other files call: what the calls
    /// elsewhere pass (`passed_from_elsewhere`) matters only through which of them stay off.
    helper_flags: HashMap<String, HelperFlags>,
}

impl Dependence {
    pub fn of(model: &FileModel) -> Self {
        Dependence {
            has_hooks: !model.hooks.is_empty(),
            constructed: constructed_on_self(model),
            registers_buffers: model.source.text.contains("register_buffer"),
            checks_asked: Vec::new(),
            imported_classes_asked: HashSet::default(),
            helper_flags: helper_flags(model),
        }
    }

    /// Records the imported names the file's analysis asked about
    /// (`FileModel::imported_classes_asked`).
    pub fn asked_imported_classes(&mut self, names: HashSet<String>) {
        self.imported_classes_asked = names;
    }

    /// Records what the file's rules asked (`FileModel::message_checks_asked`).
    pub fn asked_message_checks(&mut self, facts: Vec<MessageFact>) {
        self.checks_asked = facts;
    }

    /// Whether the file builds an attribute of `self` by calling `name`.
    pub fn constructs(&self, name: &str) -> bool {
        self.constructed.contains(name)
    }
}

/// The flags of each helper of the file that only other files call, found as `reach` finds the
/// helper a qualname names (its first function of that name, a `def`).
fn helper_flags(model: &FileModel) -> HashMap<String, HelperFlags> {
    let helpers = &model.dead_code.helpers_called_elsewhere;
    helpers
        .iter()
        .filter_map(|qualname| {
            let function = model.functions.iter().position(|f| &f.qualname == qualname)?;
            let FunctionNode::Def(def) = model.function(function).node else { return None };
            Some((qualname.clone(), HelperFlags::of(def)))
        })
        .collect()
}

/// `Encoder` in `self.encoder = Encoder(cfg)` (or `self.encoder: Encoder = Encoder(cfg)`), in any
/// method of any class of the file.
fn constructed_on_self(model: &FileModel) -> HashSet<String> {
    (0..model.classes.len())
        .flat_map(|class| self_assignments(model, class))
        .filter_map(|assignment| match assignment.value()? {
            ruff_python_ast::Expr::Call(call) => match call.func.as_ref() {
                ruff_python_ast::Expr::Name(name) => Some(name.id.to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

impl Facts {
    /// Drops what `same_for_besides_message_checks` and `same_message_checks` will not compare for a file with this `dependence`: a run holds
    /// every file's own facts (its guess's) until the project's are known.
    pub fn keep_what_the_file_asks(&mut self, dependence: &Dependence) {
        self.forward_replaced = HashSet::default();
        self.never_built = HashSet::default();
        self.outside_compile_scope = HashSet::default();
        self.imported_module_classes.retain(|name| dependence.imported_classes_asked.contains(name));
        self.imported_submodules.retain(|name, _| dependence.imported_classes_asked.contains(name));
        if !dependence.has_hooks {
            self.state_attributes = Arc::default();
        }
        if !dependence.registers_buffers {
            self.project_lengths = Arc::default();
        }
        let asked = dependence.checks_asked.iter().filter(|fact| self.message_checks.contains(*fact));
        self.message_checks = Arc::new(asked.cloned().collect());
    }

    /// Whether the analysis of the file these facts describe comes out the same with `other`:
    /// the same region and reasons, and the same answers to the questions the file asks. Which
    /// classes another file imports is left out: only the conditions of findings ask it
    /// (`unset_flags`), and the caller knows which classes they asked about.
    /// The project's message checks are compared apart (`same_message_checks`).
    pub fn same_for_besides_message_checks(&self, other: &Facts, dependence: &Dependence) -> bool {
        let changed_class_matters = || {
            let mut changed = self.module_classes.symmetric_difference(&other.module_classes).peekable();
            if changed.peek().is_none() {
                return false;
            }
            // Built once, not per changed class: a file can hold thousands of classes.
            let with_reached_code = enclosing_names(self.reached.keys().chain(other.reached.keys()));
            changed.any(|class| {
                with_reached_code.contains(class.as_str()) || dependence.constructed.contains(unqualified(class))
            })
        };
        let same_imported_class = |name: &String| {
            self.imported_module_classes.contains(name) == other.imported_module_classes.contains(name)
                && self.imported_submodules.get(name) == other.imported_submodules.get(name)
        };
        self.reached == other.reached
            && self.disabled == other.disabled
            && self.called_from_other_files == other.called_from_other_files
            && self.named_elsewhere == other.named_elsewhere
            && !changed_class_matters()
            && dependence.imported_classes_asked.iter().all(same_imported_class)
            && (!dependence.has_hooks || self.state_attributes == other.state_attributes)
            && (!dependence.registers_buffers || self.project_lengths == other.project_lengths)
            && self.same_flags_left_off(other, dependence)
    }

    /// Whether the project's message checks answer what the file's rules asked as `other` did.
    pub fn same_message_checks(&self, other: &Facts, dependence: &Dependence) -> bool {
        (dependence.checks_asked.iter())
            .all(|fact| self.message_checks.contains(fact) == other.message_checks.contains(fact))
    }

    /// Whether what the calls of other files pass leaves the same flags of the file's helpers
    /// off (`reach` marks the branches on them dead): many pass every flag, or hand the helper on
    /// (anything may be passed), which leaves none off, as no call at all does.
    fn same_flags_left_off(&self, other: &Facts, dependence: &Dependence) -> bool {
        let (mine, theirs) = (&self.passed_from_elsewhere, &other.passed_from_elsewhere);
        mine.keys().chain(theirs.keys()).all(|helper| match dependence.helper_flags.get(helper) {
            Some(flags) => flags.left_off_alike(mine.get(helper), theirs.get(helper)),
            None => mine.get(helper) == theirs.get(helper),
        })
    }
}

/// Every name a qualname is nested in: `A`, `A.f` and `A.f.<locals>` for `A.f.<locals>.g`.
fn enclosing_names<'q>(qualnames: impl Iterator<Item = &'q String>) -> HashSet<&'q str> {
    qualnames.flat_map(|qualname| qualname.match_indices('.').map(move |(dot, _)| &qualname[..dot])).collect()
}

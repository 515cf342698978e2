//! Pass one's guess at a file's findings, made while its syntax tree is at hand, from what the
//! file tells of itself. Pass two keeps the guess when the project's facts would give the same
//! analysis, so that most files are parsed once.

use ruff_text_size::TextRange;
use rustc_hash::FxHashSet as HashSet;
use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::compiled::reach::mark_region;
use crate::model::defaults::call_conditions::through_calls;
use crate::model::defaults::config_defaults::off_by_default;
use crate::model::defaults::unset_flags::off_unless_passed;
use crate::model::file::FileModel;
use crate::model::file::message_facts::MessageFact;
use crate::model::index::{Dependence, Facts, FileSummary, ProjectIndex, module_name};
use crate::rules::Settings;
use crate::scope::Scope;
use crate::source::{SourceError, SourceFile};

/// What pass one keeps of a file: its summary for the index, and the guess (none when checking
/// the file failed: pass two checks it again, and reports the failure as that file's error).
pub(super) struct Look {
    pub summary: FileSummary,
    pub guess: Option<Guess>,
}

/// Findings made with the file's own facts.
pub(super) struct Guess {
    facts: Facts,
    dependence: Dependence,
    assumed: Assumed,
    /// The config fields whose defaults decide whether a finding is in code they turn off
    /// (`config_defaults`); `None`: every field, since a finding they turned off may have been
    /// dropped as below the minimum severity.
    config_fields: Option<HashSet<String>>,
    /// The classes whose import by another file decides whether a finding is in a branch on a
    /// flag its callers leave unset (`unset_flags`); `None`: every class, as for `config_fields`.
    imports_asked: Option<HashSet<String>>,
    pub diagnostics: Vec<Diagnostic>,
    /// The hash of the text the findings are in (`cache::content_hash`), `None` without
    /// findings: pass two reads the text again to show them, and holds them only to the same text.
    pub text_hash: Option<u64>,
    /// The findings had the project's message checks answered otherwise.
    alternative: Option<Alternative>,
}

/// Pass one for a file. `modules` are the module names of all the files of the run.
pub(super) fn look(
    path: &Path,
    text: String,
    settings: &Settings,
    scope: Option<&Scope>,
    modules: &HashSet<String>,
) -> Result<Look, SourceError> {
    let source = SourceFile::parse(path, text)?;
    let mut model = FileModel::build(&source, &module_name(path));
    let summary = FileSummary::of(&model);
    // A panic in a rule must not keep the file's summary from the index: other files' findings
    // depend on it. The panic stays quiet here (`project::isolated` is around this work).
    let guess = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        guess(&source, &mut model, &summary, settings, scope, modules)
    }));
    drop(model);
    drop(source);
    // The summary's many small blocks were allocated among the tree's, and a page stays resident
    // while any block of it is live: copied once the tree is freed, they fill pages that are
    // resident anyway, and the pages the copy leaves empty go back. Every file's summary is held
    // until the index is built: peak RSS on transformers 91 -> 84 MiB. (Copying the guess too
    // changed nothing: guesses are small.)
    let packed = summary.clone();
    drop(summary);
    Ok(Look { summary: packed, guess: guess.ok() })
}

/// The file's findings with its own facts (and what they assume).
fn guess(
    source: &SourceFile,
    model: &mut FileModel,
    summary: &FileSummary,
    settings: &Settings,
    scope: Option<&Scope>,
    modules: &HashSet<String>,
) -> Guess {
    let mut facts = ProjectIndex::new(vec![summary.clone()]).facts().remove(0);
    let mut dependence = Dependence::of(model);
    let assumed = Assumed::of(model, &facts, &dependence, modules);
    assumed.add_to(&mut facts);
    mark_region(model, &facts);
    let diagnostics = crate::check_model(model, settings, scope);
    let checks_asked = model.message_checks_asked.take();
    let alternative = Alternative::of(model, settings, scope, (&checks_asked, &diagnostics), modules);
    dependence.asked_message_checks(checks_asked);
    let (config_fields, imports_asked) = (settings.min_severity == Severity::Low)
        .then(|| {
            let ranges: Vec<_> = diagnostics.iter().map(|diagnostic| diagnostic.range).collect();
            let (mut fields, mut classes) = (HashSet::default(), HashSet::default());
            off_by_default(model, &ranges, &mut fields);
            off_unless_passed(model, &ranges, &mut classes);
            fields.extend(fields_asked_at_calls(model, &ranges));
            (fields, classes)
        })
        .unzip();
    dependence.asked_imported_classes(model.imported_classes_asked.take());
    let text_hash = (!diagnostics.is_empty()).then(|| crate::cache::content_hash(&source.text));
    facts.keep_what_the_file_asks(&dependence);
    keep_what_the_findings_ask(&mut facts, config_fields.as_ref(), imports_asked.as_ref());
    Guess { facts, dependence, assumed, config_fields, imports_asked, diagnostics, text_hash, alternative }
}

/// The findings the file would have if the project said yes where the file alone says no to a
/// message check of another file (`torch_compilable_check(cond, msg: str | Callable[[], str])`):
/// TCF209 then offers a lambda for the message. Pass two takes them when the project does say
/// so, instead of parsing the file again.
struct Alternative {
    /// Each message check this analysis asked about, with the answer it had.
    answers: Vec<(MessageFact, bool)>,
    diagnostics: Vec<Diagnostic>,
}

impl Alternative {
    /// The file's checks again with those answers turned: kept only when they find in the same
    /// places with the same rules (what the guess's other questions were asked about).
    fn of(
        model: &mut FileModel,
        settings: &Settings,
        scope: Option<&Scope>,
        (asked, found): (&[MessageFact], &[Diagnostic]),
        modules: &HashSet<String>,
    ) -> Option<Self> {
        let elsewhere = |fact: &MessageFact| {
            let module = fact.callee().rsplit_once('.').map(|(module, _)| module);
            module.is_some_and(|module| module != model.module_name && modules.contains(module))
        };
        let turned: Vec<MessageFact> =
            asked.iter().filter(|fact| !model.message_checks.contains(*fact) && elsewhere(fact)).cloned().collect();
        if turned.is_empty() {
            return None;
        }
        let own = Arc::clone(&model.message_checks);
        model.message_checks = Arc::new(own.iter().cloned().chain(turned).collect());
        let diagnostics = crate::check_model(model, settings, scope);
        let asked = model.message_checks_asked.take();
        let answers = asked.into_iter().map(|fact| (model.message_checks.contains(&fact), fact));
        let answers = answers.map(|(answer, fact)| (fact, answer)).collect();
        model.message_checks = own;
        let alike = |a: &Diagnostic, b: &Diagnostic| a.range == b.range && a.rule.code == b.rule.code;
        let same_places = diagnostics.len() == found.len() && diagnostics.iter().zip(found).all(|(a, b)| alike(a, b));
        same_places.then_some(Alternative { answers, diagnostics })
    }

    fn holds_in(&self, project: &Facts) -> bool {
        self.answers.iter().all(|(fact, answer)| project.message_checks.contains(fact) == *answer)
    }
}

/// The config fields asked of the calls that reach the findings' functions (`through_calls`): a
/// finding in a helper (`spans(ids)`) takes the condition of its caller's branch
/// (`if config.mode != "joint": return`), which the file alone cannot read when the config class
/// is in another file.
fn fields_asked_at_calls(model: &FileModel, ranges: &[TextRange]) -> HashSet<String> {
    let asked = RefCell::new(HashSet::default());
    let unmarked = vec![None; ranges.len()];
    through_calls(model, ranges, unmarked, |sites| off_by_default(model, sites, &mut asked.borrow_mut()));
    asked.into_inner()
}

/// Drops the config defaults and the imports elsewhere that `Guess::stands` will not compare:
/// every file's guess is held until the index is built.
fn keep_what_the_findings_ask(
    facts: &mut Facts,
    config_fields: Option<&HashSet<String>>,
    imports_asked: Option<&HashSet<String>>,
) {
    if let Some(fields) = config_fields {
        let asked = facts.config_defaults.iter().filter(|(field, _)| fields.contains(*field));
        facts.config_defaults = Arc::new(asked.map(|(field, default)| (field.clone(), default.clone())).collect());
    }
    if let Some(classes) = imports_asked {
        facts.imported_elsewhere.retain(|class| classes.contains(class));
    }
}

impl Guess {
    /// The guess with the findings the analysis with the project's facts would make: its own,
    /// or its alternative's; `None` when neither is known to be.
    pub fn settle(mut self: Box<Self>, project: &Facts) -> Option<Box<Self>> {
        if !self.stands_besides_message_checks(project) {
            return None;
        }
        if project.same_message_checks(&self.facts, &self.dependence) {
            return Some(self);
        }
        let alternative = self.alternative.take().filter(|alternative| alternative.holds_in(project))?;
        self.diagnostics = alternative.diagnostics;
        Some(self)
    }

    /// Whether the analysis with the project's facts would find what the guess found, if the
    /// project's message checks answer as the file's did.
    fn stands_besides_message_checks(&self, project: &Facts) -> bool {
        if !self.assumed.hold_in(project) {
            return false;
        }
        // A capture option set elsewhere in the project, or where it compiles, changes only
        // TCF103 and TCF106 findings (dropped, or advised to set it there).
        let captured = |d: &Diagnostic| matches!(d.rule.code, "TCF103" | "TCF106");
        if project.captures != self.facts.captures && self.diagnostics.iter().any(captured) {
            return false;
        }
        project.same_for_besides_message_checks(&self.facts, &self.dependence)
            && self.same_config_defaults(project)
            && self.same_imports_elsewhere(project)
    }

    /// Whether the classes the guess's findings asked about are imported by other files of the
    /// project as they were by none (the file alone sees no other file).
    fn same_imports_elsewhere(&self, project: &Facts) -> bool {
        let (guessed, known) = (&self.facts.imported_elsewhere, &project.imported_elsewhere);
        match &self.imports_asked {
            Some(classes) => classes.iter().all(|class| guessed.contains(class) == known.contains(class)),
            None => guessed == known,
        }
    }

    /// Whether the project's config defaults tell the guess's findings apart as the file's did.
    fn same_config_defaults(&self, project: &Facts) -> bool {
        let (guessed, known) = (&self.facts.config_defaults, &project.config_defaults);
        match &self.config_fields {
            Some(fields) => fields.iter().all(|field| guessed.get(field) == known.get(field)),
            None => guessed == known,
        }
    }
}

/// What the file cannot tell of itself but the guess takes as given: classes it builds as
/// submodules (`self.norm = ApertusRMSNorm(...)`) from a class of another file of the run
/// (`class ApertusRMSNorm(LlamaRMSNorm)` with `LlamaRMSNorm` from `..llama.modeling_llama`, or
/// `LlamaRMSNorm` itself) are `nn.Module`s. The file alone says no (it cannot see the base),
/// the project almost always says yes; the guess stands only if the project agrees.
#[derive(Default)]
struct Assumed {
    /// Qualnames of the file's classes.
    module_classes: Vec<String>,
    /// Imported names.
    imported_module_classes: Vec<String>,
}

impl Assumed {
    fn of(model: &FileModel, facts: &Facts, dependence: &Dependence, modules: &HashSet<String>) -> Self {
        let from_the_run =
            |qualified: &str| qualified.rsplit_once('.').is_some_and(|(module, _)| modules.contains(module));
        let local_classes: HashSet<&str> = model.classes.iter().map(|class| class.qualname.as_str()).collect();
        let local = |qualified: &str| local_classes.contains(qualified);
        let module_classes = (0..model.classes.len())
            .filter(|&class| {
                let info = &model.classes[class];
                dependence.constructs(info.node.name.id.as_str())
                    && !facts.module_classes.contains(&info.qualname)
                    && model.method(class, "forward").is_none()
                    && info.bases.iter().any(|base| !local(base) && from_the_run(base))
            })
            .map(|class| model.classes[class].qualname.clone())
            .collect();
        let imported_module_classes = model
            .imports
            .bindings()
            .filter(|(name, full)| {
                dependence.constructs(name) && !facts.imported_module_classes.contains(*name) && from_the_run(full)
            })
            .map(|(name, _)| name.to_string())
            .collect();
        Assumed { module_classes, imported_module_classes }
    }

    fn add_to(&self, facts: &mut Facts) {
        facts.module_classes.extend(self.module_classes.iter().cloned());
        facts.imported_module_classes.extend(self.imported_module_classes.iter().cloned());
    }

    /// The imported names are not checked here: the analysis may never have asked about one
    /// (`self.mel = mel_filter_bank(...)` in a class nothing compiles), and those it asked about
    /// are compared with the project's answers (`Facts::same_for_besides_message_checks`).
    fn hold_in(&self, project: &Facts) -> bool {
        self.module_classes.iter().all(|class| project.module_classes.contains(class))
    }
}

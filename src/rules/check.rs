//! The checker: one walk of each compiled-region function's code, handing every statement and
//! expression to the hooks of the enabled rules, with what the rules ask about the function
//! (which values are tensors, which sizes come from inputs) worked out once and shared.
//!
//! Like ruff's `Checker`: a rule that looks at the compiled code of one function at a time
//! declares `Hooks::Function` and gets, for each region function, a chance to start its
//! [`FunctionHooks`]; the walk then calls them node by node and `finish` turns what they saw into
//! findings. A rule whose findings in one function depend on the others (a fix's names shared by
//! the methods of a class, one finding per submodule) declares `Hooks::Region`: the same walk,
//! with [`RegionHooks`] kept over all the functions. Rules about the file as a whole (setup code,
//! registrations, custom ops) declare `Hooks::File`: TCF110, TCF202 and TCF301-TCF401. Those that
//! look at calls wherever they are read the file's calls (`FileModel::calls`, recorded by the
//! model's one collecting walk); TCF202, TCF303 and TCF401 still walk what they need themselves.
//! What a region rule reads outside compiled code (`__init__`, the methods it runs) it still
//! walks itself: the checker walks compiled code only. So does a fix that asks about all of a
//! function's code, for its one finding: every use of a name, eager-only branches and nested
//! `def`s included (TCF104's `torch.where`, TCF101's warn-once block, TCF107's LayerDrop draw,
//! TCF206's move to `__init__`). What the walk itself hands the hooks is not walked again
//! (TCF104 reads the name a ternary is assigned to off the statement being walked).
//!
//! The checker is handed the rules to run ([`Registered`]), and the fixes they hand on to others'
//! findings ([`HandOnFix`]), rather than reading the registry: the registry lists the rule files,
//! and the rule files are written against this checker.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::{OnceCell, RefCell};

use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::TextRange;

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_function};
use crate::model::compiled::reach::describe;
use crate::model::defaults::call_conditions::through_calls;
use crate::model::defaults::config_defaults::off_by_default;
use crate::model::defaults::constructor_flags::off_unless_built_with;
use crate::model::defaults::half_precision::off_unless_half_precision;
use crate::model::defaults::keyword_flags::off_unless_keyword_passed;
use crate::model::defaults::replaced_submodules::off_unless_replaced;
use crate::model::defaults::test_models::off_unless_compiled_elsewhere;
use crate::model::defaults::unset_flags::off_unless_passed;
use crate::model::defaults::untested_values::off_unless_unlisted_value;
use crate::model::file::FileModel;
use crate::model::flow::impossible_calls::never_runs;
use crate::model::flow::loops::{InLoop, LoopCalls};
use crate::model::flow::shapes::InputSizes;
use crate::model::tensors::tensor::Tensors;
use crate::rules::rule::{Category, Rule};
use crate::rules::settings::Settings;

/// What a rule sees of a file: its model, the settings that shape fixes, and the file-wide facts
/// rules share.
pub struct Checker<'a> {
    pub model: &'a FileModel<'a>,
    pub settings: &'a Settings,
    /// Which functions run in loops of traced frames: found once, when a graph break asks.
    loop_calls: OnceCell<LoopCalls>,
    /// Every rule there is: the graph-break rules are run again (see `runs_eagerly`).
    rules: &'a [Registered],
    /// The frames Dynamo runs eagerly: found once, when a rule asks.
    eager_frames: OnceCell<HashSet<String>>,
    /// While the eager frames are found: the frames the graph breaks reported so far send eagerly.
    recording: Option<RefCell<HashSet<String>>>,
    /// By rule code: where that rule finds hazards in the file (see `hazards_of`).
    hazards: RefCell<HashMap<&'static str, Vec<TextRange>>>,
}

impl<'a> Checker<'a> {
    pub fn new(model: &'a FileModel<'a>, settings: &'a Settings, rules: &'a [Registered]) -> Self {
        Self {
            model,
            settings,
            loop_calls: OnceCell::new(),
            rules,
            eager_frames: OnceCell::new(),
            recording: None,
            hazards: RefCell::default(),
        }
    }

    /// Where another rule finds hazards in the file, enabled or not (the hazard is there whether or
    /// not the user wants to hear of it), outside dead code: a rule whose fix would change what
    /// Dynamo traces around them asks (TCF102's hoist rejoins a frame that may hold TCF105's
    /// masked write). Found once per rule, on the first question.
    pub fn hazards_of(&self, rule: &'static Rule) -> Vec<TextRange> {
        if let Some(ranges) = self.hazards.borrow().get(rule.code) {
            return ranges.clone();
        }
        let registered: Vec<&Registered> = self.rules.iter().filter(|r| r.rule.code == rule.code).collect();
        let asker = Checker::new(self.model, self.settings, self.rules);
        let ranges: Vec<TextRange> = run_rules(&asker, &registered)
            .into_iter()
            .map(|diagnostic| diagnostic.range)
            .filter(|range| self.model.dead_code.covering(*range).is_none())
            .collect();
        self.hazards.borrow_mut().insert(rule.code, ranges.clone());
        ranges
    }

    /// A graph break found at `site` in `function`: Critical, with the reason in the message, when
    /// it sits in a loop of a traced frame (Dynamo then runs that whole frame eagerly).
    pub fn graph_break(&self, mut diagnostic: Diagnostic, function: usize, site: Site) -> Diagnostic {
        if self.model.dead_code.covering(diagnostic.range).is_some() {
            return diagnostic; // dropped by `check`: it sends no frame eagerly
        }
        let loop_calls = self.loop_calls.get_or_init(|| LoopCalls::find(self.model));
        if let Some(in_loop) = loop_calls.in_loop(self.model, function, site) {
            if let Some(recording) = &self.recording {
                let mut recording = recording.borrow_mut();
                match &in_loop {
                    InLoop::Body(frame) | InLoop::Generator(frame) => _ = recording.insert(frame.clone()),
                    InLoop::CalledInLoop(_) => recording.extend(loop_calls.frames_running(function).iter().cloned()),
                    InLoop::HookOnRepeatedModules => {}
                }
            }
            diagnostic.severity = Severity::Critical;
            diagnostic.message.push_str(&format!("; {in_loop}"));
        }
        diagnostic
    }

    /// Whether Dynamo runs `function`'s own frame eagerly: a graph break sits in one of its loops,
    /// directly or in what the loop calls ("graph break in loop", GB7000: the frame is skipped and
    /// nothing in it is traced, measured under torch 2.15). What the frame calls is still traced,
    /// as frames of their own. Every graph-break rule is asked, enabled or not: the break happens
    /// whether or not the user wants to hear of it.
    pub fn runs_eagerly(&self, function: usize) -> bool {
        debug_assert!(self.recording.is_none(), "a graph-break rule asked which frames run eagerly");
        let frames = self.eager_frames.get_or_init(|| self.find_eager_frames());
        frames.contains(&self.model.function(function).qualname)
    }

    fn find_eager_frames(&self) -> HashSet<String> {
        let breaks: Vec<&Registered> =
            self.rules.iter().filter(|registered| registered.rule.category == Category::GraphBreak).collect();
        // The recorder has no rules of its own: a graph-break rule must not ask `runs_eagerly`,
        // or it would hear "no frame runs eagerly" while the frames are being found.
        let mut recorder = Checker::new(self.model, self.settings, &[]);
        recorder.recording = Some(RefCell::default());
        run_rules(&recorder, &breaks);
        recorder.recording.map(RefCell::into_inner).unwrap_or_default()
    }
}

/// One region function as the rules see it while the checker walks it: the facts about it are
/// worked out on the first rule's question and kept for the others.
pub struct Function<'c, 'a> {
    pub checker: &'c Checker<'a>,
    /// The function's index in the file model.
    pub id: usize,
    tensors: OnceCell<Tensors<'a, 'a>>,
    sizes: OnceCell<InputSizes>,
}

impl<'c, 'a> Function<'c, 'a> {
    fn new(checker: &'c Checker<'a>, id: usize) -> Self {
        Self { checker, id, tensors: OnceCell::new(), sizes: OnceCell::new() }
    }

    pub fn model(&self) -> &'a FileModel<'a> {
        self.checker.model
    }

    /// Which of the function's values are tensors.
    pub fn tensors(&self) -> &Tensors<'a, 'a> {
        self.tensors.get_or_init(|| Tensors::of(self.checker.model, self.id))
    }

    /// Which of the function's sizes come from its inputs.
    pub fn sizes(&self) -> &InputSizes {
        self.sizes.get_or_init(|| InputSizes::of(self.checker.model, self.id))
    }

    /// How messages name the function: "`VLM.forward`", "`VLM._merge` (called from `VLM.forward`)".
    pub fn describe(&self) -> String {
        describe(self.checker.model, self.id)
    }

    /// A graph break at `site` in this function (see [`Checker::graph_break`]).
    pub fn graph_break(&self, diagnostic: Diagnostic, site: Site) -> Diagnostic {
        self.checker.graph_break(diagnostic, self.id, site)
    }
}

impl Drop for Function<'_, '_> {
    /// The function's tensors are kept for the file's next walk (another rule's hazards, the
    /// eager frames: each walks every region function again), and forgotten after the check.
    fn drop(&mut self) {
        if let Some(tensors) = self.tensors.take() {
            tensors.keep(self.id);
        }
    }
}

/// What a rule does while the checker walks one function's compiled code: `stmt` and `expr` are
/// called at each node in source order (the walk skips what runs only in eager mode), then
/// `finish` reports.
pub trait FunctionHooks<'a> {
    fn stmt(&mut self, _stmt: &'a Stmt, _site: Site) {}

    /// Return `false` to see none of the expression's children (the walk goes on for other rules).
    fn expr(&mut self, _expr: &'a Expr, _site: Site) -> bool {
        true
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>);
}

/// Starts a rule's hooks for one function, or `None` when the rule has nothing to look for there.
pub type StartFunction = for<'c, 'a> fn(&'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>>;

/// What a rule does while the checker walks the compiled code of all the region's functions, when
/// what it makes of one function depends on the others (one finding per call site reached from
/// several functions, a name given once for all the fixes of a class): the same nodes as
/// [`FunctionHooks`], with the function they are in, and `finish` once the region is walked.
pub trait RegionHooks<'a> {
    /// Whether the rule looks at this function's code (asked before its walk).
    fn start(&mut self, _function: &Function<'_, 'a>) -> bool {
        true
    }

    fn stmt(&mut self, _function: &Function<'_, 'a>, _stmt: &'a Stmt, _site: Site) {}

    /// Return `false` to see none of the expression's children (the walk goes on for other rules).
    fn expr(&mut self, _function: &Function<'_, 'a>, _expr: &'a Expr, _site: Site) -> bool {
        true
    }

    /// The walk of the function is over: report what depends on it alone.
    fn end(&mut self, _function: &Function<'_, 'a>, _diagnostics: &mut Vec<Diagnostic>) {}

    fn finish(self: Box<Self>, _diagnostics: &mut Vec<Diagnostic>) {}
}

/// Starts a rule's hooks for the file's region.
pub type StartRegion = for<'c, 'a> fn(&'c Checker<'a>) -> Box<dyn RegionHooks<'a> + 'c>;

/// How a rule looks at a file.
pub enum Hooks {
    /// It looks at the compiled code of each region function, in the checker's one walk of it.
    Function(StartFunction),
    /// It looks at the compiled code of all region functions together, in the same walk.
    Region(StartRegion),
    /// It looks at the file as a whole: classes, `__init__` against `forward`, setup code.
    File(fn(&Checker) -> Vec<Diagnostic>),
}

/// A rule as the checker runs it: what it is, and where the checker calls it.
pub struct Registered {
    pub rule: &'static Rule,
    pub hooks: Hooks,
}

/// A rule's fix handed on to the findings of other rules that lie inside its own (see
/// `rules::FIXES_HANDED_ON`), given the file's text and its findings outside dead code.
pub type HandOnFix = fn(&str, &mut [Diagnostic]);

/// Every enabled rule's findings for one file, in source order.
pub fn check(model: &FileModel, settings: &Settings, rules: &[Registered], hand_on: &[HandOnFix]) -> Vec<Diagnostic> {
    let enabled: Vec<&Registered> =
        rules.iter().filter(|registered| settings.selection.enabled(registered.rule)).collect();
    let checker = Checker::new(model, settings, rules);
    let mut diagnostics = run_rules(&checker, &enabled);
    Tensors::forget_kept(model);
    drop_dead_code_findings(model, &mut diagnostics);
    drop_findings_no_call_reaches(model, &mut diagnostics);
    for hand_on in hand_on {
        hand_on(&model.source.text, &mut diagnostics);
    }
    mark_off_by_default(model, &mut diagnostics);
    diagnostics.retain(|diagnostic| diagnostic.severity >= settings.min_severity);
    diagnostics.sort_by_key(|d| (d.range.start(), d.rule.code));
    diagnostics
}

/// Drops the findings in code that does not run on a normal compiled call (`except` handlers,
/// branches that end in `raise`, branches on flags that are never set: see `dead_code`), of
/// every rule alike: the hazard is real only on a path that is not taken.
fn drop_dead_code_findings(model: &FileModel, diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.retain(|diagnostic| model.dead_code.covering(diagnostic.range).is_none());
}

/// Drops the findings in a function every call of which leaves out a required argument
/// (`impossible_calls`): the call raises `TypeError` before Dynamo traces the body.
fn drop_findings_no_call_reaches(model: &FileModel, diagnostics: &mut Vec<Diagnostic>) {
    let mut verdicts: HashMap<usize, bool> = HashMap::default();
    diagnostics.retain(|diagnostic| match model.region_function_at(diagnostic.range) {
        Some(function) => !*verdicts.entry(function).or_insert_with(|| never_runs(model, function)),
        None => true,
    });
}

/// Findings in code the default config turns off (`config_defaults`) are real only for a config
/// that turns it on, those in a branch on a flag the caller leaves unset (`unset_flags`, or
/// `keyword_flags` through `**kwargs`) only for a caller who sets it, those in a branch for a replaced submodule (`replaced_submodules`)
/// only for a model where someone replaced it, and those in a branch on a constructor flag left
/// off (`constructor_flags`) only for a module built with it, those behind a test for a half
/// precision dtype (`half_precision`) only for a float16 or bfloat16 run, those in a test module
/// that compiles nothing (`test_models`) only if another file compiles its model, those behind a
/// test against a list of values (`untested_values`) only for a value off the list: low, and the
/// message says when. So are those in a function that only such branches call (`call_conditions`).
fn mark_off_by_default(model: &FileModel, diagnostics: &mut [Diagnostic]) {
    if diagnostics.is_empty() {
        return;
    }
    let ranges: Vec<_> = diagnostics.iter().map(|diagnostic| diagnostic.range).collect();
    let conditions = conditions_at(model, &ranges);
    let conditions = through_calls(model, &ranges, conditions, |sites| conditions_at(model, sites));
    for (diagnostic, condition) in diagnostics.iter_mut().zip(conditions) {
        if let Some(condition) = condition {
            diagnostic.severity = Severity::Low;
            diagnostic.message.push_str(&format!("; {condition}"));
        }
    }
}

/// The condition the code at each of `ranges` needs under the defaults, as the analyses above say:
/// the first that gives one wins.
fn conditions_at(model: &FileModel, ranges: &[TextRange]) -> Vec<Option<String>> {
    type Source = fn(&FileModel, &[TextRange]) -> Vec<Option<String>>;
    const SOURCES: [Source; 8] = [
        |model, ranges| match model.config_defaults.is_empty() {
            true => vec![None; ranges.len()],
            false => off_by_default(model, ranges, &mut HashSet::default()),
        },
        |model, ranges| off_unless_passed(model, ranges, &mut HashSet::default()),
        off_unless_keyword_passed,
        off_unless_replaced,
        off_unless_built_with,
        off_unless_half_precision,
        off_unless_compiled_elsewhere,
        off_unless_unlisted_value,
    ];
    let mut conditions = vec![None; ranges.len()];
    for source in SOURCES {
        if ranges.is_empty() || conditions.iter().all(Option::is_some) {
            break;
        }
        for (slot, condition) in conditions.iter_mut().zip(source(model, ranges)) {
            *slot = slot.take().or(condition);
        }
    }
    conditions
}

/// The findings of `rules` that can find anything in the file: each region function walked once
/// for those that look at compiled code, then those that look at the file as a whole.
fn run_rules(checker: &Checker, rules: &[&Registered]) -> Vec<Diagnostic> {
    let rules: Vec<&Registered> =
        rules.iter().copied().filter(|registered| registered.rule.may_apply_to(&checker.model.source.text)).collect();
    let starts: Vec<StartFunction> = rules
        .iter()
        .filter_map(|registered| match registered.hooks {
            Hooks::Function(start) => Some(start),
            Hooks::Region(_) | Hooks::File(_) => None,
        })
        .collect();
    let mut regions: Vec<Box<dyn RegionHooks + '_>> = rules
        .iter()
        .filter_map(|registered| match registered.hooks {
            Hooks::Region(start) => Some(start(checker)),
            Hooks::Function(_) | Hooks::File(_) => None,
        })
        .collect();
    let mut diagnostics = Vec::new();
    if !starts.is_empty() || !regions.is_empty() {
        check_region(checker, &starts, &mut regions, &mut diagnostics);
    }
    for region in regions {
        region.finish(&mut diagnostics);
    }
    for registered in &rules {
        if let Hooks::File(check_file) = registered.hooks {
            diagnostics.extend(check_file(checker));
        }
    }
    diagnostics
}

/// Walks each region function once for all the rules, and lets them report on it; the facts
/// about a function are dropped before the next is walked (a file can hold tens of thousands).
fn check_region<'a>(
    checker: &Checker<'a>,
    starts: &[StartFunction],
    regions: &mut [Box<dyn RegionHooks<'a> + '_>],
    diagnostics: &mut Vec<Diagnostic>,
) {
    for &id in checker.model.region_functions() {
        let function = Function::new(checker, id);
        let mut hooks: Vec<Box<dyn FunctionHooks<'a> + '_>> =
            starts.iter().filter_map(|start| start(&function)).collect();
        for region in regions.iter_mut() {
            if region.start(&function) {
                hooks.push(Box::new(InFunction { region: region.as_mut(), function: &function }));
            }
        }
        for hooks in walk_function(&function, hooks) {
            hooks.finish(diagnostics);
        }
    }
}

/// A rule's region hooks while the walk is in one function.
struct InFunction<'r, 'c, 'a> {
    region: &'r mut (dyn RegionHooks<'a> + 'c),
    function: &'r Function<'c, 'a>,
}

impl<'a> FunctionHooks<'a> for InFunction<'_, '_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, site: Site) {
        self.region.stmt(self.function, stmt, site);
    }

    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        self.region.expr(self.function, expr, site)
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        self.region.end(self.function, diagnostics);
    }
}

/// The one walk of a function's compiled code: each rule's hooks, with what they saw.
fn walk_function<'c, 'a>(
    function: &Function<'_, 'a>,
    hooks: Vec<Box<dyn FunctionHooks<'a> + 'c>>,
) -> Vec<Box<dyn FunctionHooks<'a> + 'c>> {
    let rules: Vec<_> = hooks.into_iter().map(|hooks| (hooks, None)).collect();
    if rules.is_empty() {
        return Vec::new();
    }
    let mut dispatch = Dispatch { rules, depth: 0 };
    visit_function(function.model(), function.id, &mut dispatch);
    dispatch.rules.into_iter().map(|(hooks, _)| hooks).collect()
}

/// Hands each node to every rule. A rule that declined an expression's children is muted until
/// the walk leaves that expression: it sees exactly what its own walk would have shown it.
struct Dispatch<'c, 'a> {
    /// Each rule's hooks, and the depth of the expression it declined, if any.
    rules: Vec<(Box<dyn FunctionHooks<'a> + 'c>, Option<usize>)>,
    /// How many expressions the walk is inside.
    depth: usize,
}

// A visitor of its own: the checker's one walk itself.
impl<'a> CompiledCodeVisitor<'a> for Dispatch<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, site: Site) {
        // Statements never sit inside expressions, so no rule is muted here.
        for (hooks, _) in &mut self.rules {
            hooks.stmt(stmt, site);
        }
    }

    fn expr(&mut self, expr: &'a Expr, site: Site) -> bool {
        self.depth += 1;
        let mut descend = false;
        for (hooks, muted) in &mut self.rules {
            if muted.is_none() {
                if hooks.expr(expr, site) {
                    descend = true;
                } else {
                    *muted = Some(self.depth);
                }
            }
        }
        if !descend {
            self.leave_expr(expr);
        }
        descend
    }

    fn leave_expr(&mut self, _expr: &'a Expr) {
        for (_, muted) in &mut self.rules {
            if *muted == Some(self.depth) {
                *muted = None;
            }
        }
        self.depth -= 1;
    }
}

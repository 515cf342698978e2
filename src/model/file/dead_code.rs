//! The code of a file that does not run on a normal compiled call, with the reason for each
//! piece: what runs only after something raised (`except` bodies), only on the way to an error
//! (a branch that ends in `raise`, or one right before an `assert` that then fails), only in training in a model that refuses to train, or only
//! when a flag is set that is off by default and never set, or only on a path a normal call
//! never takes (a NaN report, an empty input, a loader's first call: `rare_paths`). The checker
//! drops findings there and `reach` follows no call from there: a hazard on a path that never
//! runs costs nothing, and its "fix" would only hide an error report.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::fmt;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::model::file::imports::Imports;
use crate::model::file::module::is_entry_point;
use crate::model::file::module::is_self;
use crate::model::file::passed::Passed;
use crate::model::file::rare_paths::{before_failing_assert, one_shot_global, only_when_empty, only_when_not_finite};
use crate::source::SourceFile;

/// Why a piece of code does not run on a normal compiled call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeadReason {
    /// An `except` handler: it runs only when the `try` body raised.
    ExceptHandler,
    /// A branch that ends in `raise`: what runs there runs on the way to an error.
    BeforeRaise,
    /// A branch right before an `assert` of the opposite test: it runs only when the assert fails.
    BeforeFailedAssert,
    /// An `if self.training:` branch in a file whose model raises when asked to train.
    TrainingOnly,
    /// A branch taken only when a module flag is set that is off and never set (`_USE_X = False`).
    FlagOff(String),
    /// A branch taken only when a parameter is passed that defaults to off and that no call in
    /// the file passes.
    ParameterOff(String),
    /// A class built only in code that does not run: its methods never run.
    NeverBuilt(String),
    /// A branch taken only when a tensor holds NaN or inf: an anomaly report.
    NotFinite,
    /// A branch taken only for an empty tensor, which Dynamo traces only for an empty input.
    EmptyInput,
    /// What a one-shot loader runs after its guard: only on the first call, which sets the global.
    FirstCallOnly(String),
    /// A branch that needs an attribute `__init__` leaves off and that only methods nothing in the
    /// project calls turn on (`uncalled_setters`): the attribute, and one such method.
    SetOnlyByUncalled(String, String),
}

impl fmt::Display for DeadReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeadReason::ExceptHandler => f.write_str("an `except` handler"),
            DeadReason::BeforeRaise => f.write_str("a branch that ends in `raise`"),
            DeadReason::BeforeFailedAssert => f.write_str("a branch that runs only when the `assert` after it fails"),
            DeadReason::TrainingOnly => f.write_str("a training-only branch of a model that does not train"),
            DeadReason::FlagOff(name) => write!(f, "a branch on `{name}`, off and never set"),
            DeadReason::ParameterOff(name) => write!(f, "a branch on parameter `{name}`, off and never passed"),
            DeadReason::NeverBuilt(class) => write!(f, "class `{class}`, built only in code that does not run"),
            DeadReason::NotFinite => f.write_str("a branch taken only when a tensor holds NaN or inf"),
            DeadReason::EmptyInput => f.write_str("a branch taken only for an empty tensor"),
            DeadReason::FirstCallOnly(name) => write!(f, "a loader's first call, which sets `{name}`"),
            DeadReason::SetOnlyByUncalled(attribute, method) => {
                write!(f, "a branch on `self.{attribute}`, which only `{method}` turns on and nothing calls")
            }
        }
    }
}

/// The file's code that does not run on a normal compiled call, as disjoint ranges in source
/// order (nested pieces are merged into the outermost, whose reason is kept).
#[derive(Default, Debug)]
pub struct DeadCode {
    ranges: Vec<(TextRange, DeadReason)>,
    /// The class whose code raises when asked to train (`None` at module level), if one does.
    training_refused_by: Option<Option<String>>,
    /// Module-level functions with a parameter that defaults off, named nowhere in the file: only
    /// other files call them, and the project index tells what those calls pass
    /// (`off_unless_passed_elsewhere`).
    pub helpers_called_elsewhere: Vec<String>,
}

impl DeadCode {
    /// The dead code of a file, from its text alone (`add` adds what the project index knows),
    /// and the names the file uses (`FileModel::names_used`), which the same walk collects.
    pub fn find(source: &SourceFile, imports: &Imports) -> (Self, Vec<u64>) {
        let suite = source.parsed.suite();
        let training_refused_by = refuses_training(suite, source);
        let mut finder = Finder {
            found: Vec::new(),
            imports: Some(imports),
            training_refused: training_refused_by.is_some(),
            flags: module_flags_off(suite),
            references: References::of(suite),
            parameters: Vec::new(),
            off_by_def: HashMap::default(),
        };
        finder.off_by_def = finder.settle_off_parameters(suite);
        finder.visit_body(suite);
        let names_used = finder.references.names_used();
        let helpers_called_elsewhere = helpers_called_elsewhere(suite, &finder.references);
        let mut dead = DeadCode { training_refused_by, helpers_called_elsewhere, ..DeadCode::default() };
        for (range, reason) in finder.found {
            dead.add(range, reason);
        }
        (dead, names_used)
    }

    /// Marks `range` dead, merging it into the ranges it overlaps or touches. The ranges stay
    /// sorted and apart, so only its neighbours can merge: a file with thousands of dead
    /// branches adds each in one binary search (sorting the whole list per range was quadratic).
    pub fn add(&mut self, range: TextRange, reason: DeadReason) {
        let order = |range: &TextRange| (range.start(), std::cmp::Reverse(range.end()));
        // After the ranges that sort with it or before it, as a stable sort puts it.
        let at = self.ranges.partition_point(|(dead, _)| order(dead) <= order(&range));
        self.ranges.insert(at, (range, reason));
        let first = match at.checked_sub(1) {
            Some(before) if range.start() <= self.ranges[before].0.end() => before,
            _ => at,
        };
        let mut cover = self.ranges[first].0;
        let mut end = first + 1;
        while let Some((next, _)) = self.ranges.get(end).filter(|(next, _)| next.start() <= cover.end()) {
            cover = cover.cover(*next);
            end += 1;
        }
        self.ranges[first].0 = cover;
        self.ranges.drain(first + 1..end);
    }

    /// Why the code at `range` does not run, if it lies inside dead code.
    pub fn covering(&self, range: TextRange) -> Option<&DeadReason> {
        let after = self.ranges.partition_point(|(dead, _)| dead.start() <= range.start());
        let (dead, reason) = self.ranges.get(after.checked_sub(1)?)?;
        dead.contains_range(range).then_some(reason)
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether the file's model raises when asked to train, and in which class (`None` when the
    /// raise is at module level): no backward runs through its code.
    pub fn training_refused_by(&self) -> Option<Option<&str>> {
        self.training_refused_by.as_ref().map(Option::as_deref)
    }
}

/// A value that is off: what `if x:` and `if x is not None:` make of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Off {
    False,
    None,
}

fn off_literal(expr: &Expr) -> Option<Off> {
    match expr {
        Expr::BooleanLiteral(literal) if !literal.value => Some(Off::False),
        Expr::NoneLiteral(_) => Some(Off::None),
        _ => None,
    }
}

struct Finder<'a> {
    found: Vec<(TextRange, DeadReason)>,
    /// The file's imports, to tell output calls (`before_failing_assert`); `None` where only the
    /// parameters are asked about.
    imports: Option<&'a Imports>,
    /// A model of the file raises when asked to train: `if self.training:` bodies do not run.
    training_refused: bool,
    /// Module flags that are off and never set.
    flags: HashMap<&'a str, Off>,
    references: References<'a>,
    /// The off parameters of each function the walk is in, innermost last.
    parameters: Vec<HashMap<&'a str, Off>>,
    /// By `def` (its range): its parameters that default off and that no call passes, or passes
    /// only the caller's own off parameter (`attention_mask=attention_mask` from a function whose
    /// `attention_mask` no call passes).
    off_by_def: HashMap<TextRange, HashMap<&'a str, Off>>,
}

impl<'a> Finder<'a> {
    /// Why a test is false on every normal call: one of the things `and` needs is off.
    fn off_test(&self, test: &Expr) -> Option<DeadReason> {
        match test {
            Expr::BoolOp(op) if op.op == ast::BoolOp::And => op.values.iter().find_map(|v| self.off_test(v)),
            Expr::Attribute(attr) if self.training_refused && attr.attr.id == "training" && is_self(&attr.value) => {
                Some(DeadReason::TrainingOnly)
            }
            Expr::Name(name) => self.off_name(name.id.as_str()).map(|(reason, _)| reason),
            Expr::Compare(compare) => {
                let ([ast::CmpOp::IsNot], [Expr::NoneLiteral(_)], Expr::Name(name)) =
                    (&*compare.ops, &*compare.comparators, compare.left.as_ref())
                else {
                    return None;
                };
                let (reason, off) = self.off_name(name.id.as_str())?;
                (off == Off::None).then_some(reason)
            }
            _ => None,
        }
    }

    /// An off parameter of the innermost function, else an off module flag it does not shadow.
    fn off_name(&self, name: &str) -> Option<(DeadReason, Off)> {
        if let Some(&off) = self.parameters.last().and_then(|parameters| parameters.get(name)) {
            return Some((DeadReason::ParameterOff(name.to_string()), off));
        }
        let &off = self.flags.get(name)?;
        Some((DeadReason::FlagOff(name.to_string()), off))
    }

    fn mark_body(&mut self, body: &[Stmt], reason: DeadReason) {
        if let (Some(first), Some(last)) = (body.first(), body.last()) {
            self.found.push((TextRange::new(first.start(), last.end()), reason));
        }
    }

    fn visit_if(&mut self, if_stmt: &'a ast::StmtIf) {
        if ends_in_raise(&if_stmt.body) {
            self.mark_body(&if_stmt.body, DeadReason::BeforeRaise);
        } else if let Some(reason) = self.off_test(&if_stmt.test) {
            self.mark_body(&if_stmt.body, reason);
        } else if only_when_not_finite(&if_stmt.test) {
            self.mark_body(&if_stmt.body, DeadReason::NotFinite);
        } else if only_when_empty(&if_stmt.test) {
            self.mark_body(&if_stmt.body, DeadReason::EmptyInput);
        }
        for clause in &if_stmt.elif_else_clauses {
            if ends_in_raise(&clause.body) {
                self.mark_body(&clause.body, DeadReason::BeforeRaise);
            }
        }
    }

    /// The off parameters of every `def` of the file, passing through: a call that passes a
    /// parameter only its caller's own off parameter does not turn it on. Rounds until nothing
    /// changes (each round can only add), at most a few calls deep.
    fn settle_off_parameters(&self, suite: &'a [Stmt]) -> HashMap<TextRange, HashMap<&'a str, Off>> {
        // Only a def with a parameter that defaults off, and that is only ever called, can have one.
        let defs: Vec<_> = all_defs(suite)
            .into_iter()
            .filter(|def| {
                let parameters = def.parameters.posonlyargs.iter().chain(&def.parameters.args);
                parameters
                    .chain(&def.parameters.kwonlyargs)
                    .any(|p| p.default.as_deref().and_then(off_literal).is_some())
                    && self.references.only_called(def.name.id.as_str()).is_some()
            })
            .collect();
        let mut settled: HashMap<TextRange, HashMap<&'a str, Off>> = HashMap::default();
        for _ in 0..4 {
            let next: HashMap<_, _> =
                defs.iter().map(|def| (def.range(), self.off_parameters(def, &settled))).collect();
            if next == settled {
                break;
            }
            settled = next;
        }
        settled
    }

    /// The parameters of `def` that default to off, that its body never rebinds, and that no
    /// call in the file passes (entry points are called by the user, so theirs are not known);
    /// passing the caller's own off parameter (`settled`) is not passing.
    fn off_parameters(
        &self,
        def: &'a ast::StmtFunctionDef,
        settled: &HashMap<TextRange, HashMap<&'a str, Off>>,
    ) -> HashMap<&'a str, Off> {
        let mut off = HashMap::default();
        if is_entry_point(&def.name.id) || !def.decorator_list.is_empty() && !is_plain_method_decorators(def) {
            return off;
        }
        let Some(calls) = self.references.only_called(def.name.id.as_str()) else { return off };
        let bound = usize::from(Self::is_bound_method(def));
        let rebound = stored_names(&def.body);
        let positional = def.parameters.posonlyargs.iter().chain(&def.parameters.args).enumerate();
        let keyword = def.parameters.kwonlyargs.iter().map(|p| (usize::MAX, p));
        for (position, parameter) in positional.chain(keyword) {
            let Some(value) = parameter.default.as_deref().and_then(off_literal) else { continue };
            let name = parameter.parameter.name.id.as_str();
            let passed = |(call, caller): &(&ast::ExprCall, Option<TextRange>)| {
                let caller_off = caller.and_then(|caller| settled.get(&caller));
                let passes = |argument: &Expr| match (argument, caller_off) {
                    (Expr::Name(passed), Some(caller_off)) => caller_off.get(passed.id.as_str()) != Some(&value),
                    _ => true,
                };
                let arguments = &call.arguments;
                arguments.args.iter().any(|arg| arg.is_starred_expr())
                    || position != usize::MAX
                        && (position + 1)
                            .checked_sub(bound)
                            .and_then(|at| arguments.args.get(at.checked_sub(1)?))
                            .is_some_and(passes)
                    || arguments.keywords.iter().any(|k| match &k.arg {
                        None => true,
                        Some(arg) => arg.id == name && passes(&k.value),
                    })
            };
            if !rebound.contains(name) && !calls.iter().any(passed) {
                off.insert(name, value);
            }
        }
        off
    }

    /// A method that its calls (`self.f(...)`, `obj.f(...)`) bind to `self` or `cls`.
    fn is_bound_method(def: &ast::StmtFunctionDef) -> bool {
        let first = def.parameters.posonlyargs.iter().chain(&def.parameters.args).next();
        let is_static =
            def.decorator_list.iter().any(|d| matches!(&d.expression, Expr::Name(n) if n.id == "staticmethod"));
        !is_static && first.is_some_and(|p| matches!(p.parameter.name.id.as_str(), "self" | "cls"))
    }
}

/// `@staticmethod`, `@classmethod`: decorators that keep the function the one that is called.
fn is_plain_method_decorators(def: &ast::StmtFunctionDef) -> bool {
    def.decorator_list
        .iter()
        .all(|d| matches!(&d.expression, Expr::Name(n) if matches!(n.id.as_str(), "staticmethod" | "classmethod")))
}

impl<'a> Visitor<'a> for Finder<'a> {
    /// An `if` with no other clause, right before an `assert` of its opposite (a shape report
    /// printed just before the assert that fails on it), runs only on the way to that error.
    fn visit_body(&mut self, body: &'a [Stmt]) {
        for (at, stmt) in body.iter().enumerate() {
            if let Stmt::If(if_stmt) = stmt
                && let Some(imports) = self.imports
                && if_stmt.elif_else_clauses.is_empty()
                && before_failing_assert(&if_stmt.test, &if_stmt.body, body.get(at + 1), imports)
            {
                self.mark_body(&if_stmt.body, DeadReason::BeforeFailedAssert);
            }
            self.visit_stmt(stmt);
        }
    }

    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Try(try_stmt) => {
                for handler in &try_stmt.handlers {
                    self.found.push((handler.range(), DeadReason::ExceptHandler));
                }
            }
            Stmt::If(if_stmt) => self.visit_if(if_stmt),
            Stmt::FunctionDef(def) => {
                if let Some((global, guard)) = one_shot_global(&def.body) {
                    self.mark_body(&def.body[guard + 1..], DeadReason::FirstCallOnly(global.to_string()));
                }
                let parameters = self.off_by_def.get(&def.range()).cloned().unwrap_or_default();
                self.parameters.push(parameters);
                walk_stmt(self, stmt);
                self.parameters.pop();
                return;
            }
            Stmt::ClassDef(_) => {
                // A class body sees the module's names, not the enclosing function's parameters.
                self.parameters.push(HashMap::default());
                walk_stmt(self, stmt);
                self.parameters.pop();
                return;
            }
            _ => {}
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::If(if_expr) = expr
            && let Some(reason) = self.off_test(&if_expr.test)
        {
            self.found.push((if_expr.body.range(), reason));
        }
        if let Expr::Lambda(_) = expr {
            // A lambda's own parameters may shadow the function's.
            self.parameters.push(HashMap::default());
            walk_expr(self, expr);
            self.parameters.pop();
            return;
        }
        walk_expr(self, expr);
    }
}

/// The module-level `def`s with a parameter that defaults off (`warning=False`), that the file
/// names nowhere: another file's calls decide whether that parameter is ever passed.
fn helpers_called_elsewhere(suite: &[Stmt], references: &References) -> Vec<String> {
    suite
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::FunctionDef(def) => Some(def),
            _ => None,
        })
        .filter(|def| def.decorator_list.is_empty() && !is_entry_point(&def.name.id))
        .filter(|def| {
            def.parameters.iter_non_variadic_params().any(|p| p.default.as_deref().and_then(off_literal).is_some())
        })
        .filter(|def| {
            let name = def.name.id.as_str();
            !references.calls.contains_key(name) && !references.other_uses.contains(name)
        })
        .map(|def| def.name.id.to_string())
        .collect()
}

/// The branches of a module-level `def` on its parameters that default off and that no call of
/// the project passes, given what the calls of other files pass (`passes(name, position)`), with
/// the reason: the `warnings.warn` under `if warning:` of `def resize(..., warning=False)` when
/// none of the calls passes `warning` (or passes it `False`).
pub fn off_unless_passed_elsewhere<'a>(def: &'a ast::StmtFunctionDef, passed: &Passed) -> Vec<(TextRange, DeadReason)> {
    let mut off: HashMap<&'a str, Off> = HashMap::default();
    for (name, position, default) in flag_parameters(def) {
        if let Some(value) = left_off(name, position, default, passed) {
            off.insert(name, value);
        }
    }
    if off.is_empty() {
        return Vec::new();
    }
    let mut finder = Finder {
        found: Vec::new(),
        imports: None,
        training_refused: false,
        flags: HashMap::default(),
        references: References::default(),
        parameters: vec![off],
        off_by_def: HashMap::default(),
    };
    finder.visit_body(&def.body);
    finder.found.retain(|(_, reason)| matches!(reason, DeadReason::ParameterOff(_)));
    finder.found
}

/// The parameters of `def` that default off (`warning=False`) and that its body never rebinds,
/// with their position (`None`: keyword-only): what other files' calls of it decide.
fn flag_parameters(def: &ast::StmtFunctionDef) -> Vec<(&str, Option<usize>, Off)> {
    let rebound = stored_names(&def.body);
    let positional =
        def.parameters.posonlyargs.iter().chain(&def.parameters.args).enumerate().map(|(at, p)| (Some(at), p));
    let keyword = def.parameters.kwonlyargs.iter().map(|p| (None, p));
    positional
        .chain(keyword)
        .filter_map(|(position, parameter)| {
            let value = parameter.default.as_deref().and_then(off_literal)?;
            let name = parameter.parameter.name.id.as_str();
            (!rebound.contains(name)).then_some((name, position, value))
        })
        .collect()
}

/// The value a flag parameter keeps when no call passes it (`None`: some call may).
fn left_off(name: &str, position: Option<usize>, default: Off, passed: &Passed) -> Option<Off> {
    // `scale=False` for `scale=None`: still false, but no longer `None`.
    (!passed.passes(name, position)).then(|| if passed.passes_false(name) { Off::False } else { default })
}

/// The flag parameters of a helper that other files call (`off_unless_passed_elsewhere`), kept
/// once the syntax tree is gone: pass two asks which of them the project's calls leave off.
#[derive(Debug, Clone, Default)]
pub struct HelperFlags(Vec<(String, Option<usize>, Off)>);

impl HelperFlags {
    pub fn of(def: &ast::StmtFunctionDef) -> Self {
        HelperFlags(
            flag_parameters(def).into_iter().map(|(name, at, default)| (name.to_string(), at, default)).collect(),
        )
    }

    /// Whether `off_unless_passed_elsewhere` reads the same flags left off, with the same
    /// values, from what `a` and `b` say the calls pass (`None`: no call, no flag read).
    pub fn left_off_alike(&self, a: Option<&Passed>, b: Option<&Passed>) -> bool {
        let left = |passed: Option<&Passed>| -> Vec<(&str, Off)> {
            let Some(passed) = passed else { return Vec::new() };
            (self.0.iter())
                .filter_map(|(name, at, default)| Some((name.as_str(), left_off(name, *at, *default, passed)?)))
                .collect()
        };
        left(a) == left(b)
    }
}

/// Every `def` of the file, nested ones included.
fn all_defs(suite: &[Stmt]) -> Vec<&ast::StmtFunctionDef> {
    struct Defs<'a>(Vec<&'a ast::StmtFunctionDef>);
    impl<'a> Visitor<'a> for Defs<'a> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if let Stmt::FunctionDef(def) = stmt {
                self.0.push(def);
            }
            walk_stmt(self, stmt);
        }

        /// No expression holds a statement: the walk stays on statements.
        fn visit_expr(&mut self, _: &'a Expr) {}
    }
    let mut defs = Defs(Vec::new());
    defs.visit_body(suite);
    defs.0
}

/// A branch whose last statement raises: it exists to report an error.
fn ends_in_raise(body: &[Stmt]) -> bool {
    matches!(body.last(), Some(Stmt::Raise(_)))
}

/// Whether a `raise` of the file says the model cannot be trained at all: "Training is not
/// implemented yet", "`X` does not support training", and in which class. Not "Optical flow
/// training is not yet supported": that is one task of a model that trains otherwise.
fn refuses_training(suite: &[Stmt], source: &SourceFile) -> Option<Option<String>> {
    struct Raises<'s> {
        source: &'s SourceFile,
        classes: Vec<String>,
        refused_by: Option<Option<String>>,
    }
    impl<'a> Visitor<'a> for Raises<'_> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if let Stmt::Raise(ast::StmtRaise { exc: Some(exc), .. }) = stmt
                && let Expr::Call(call) = exc.as_ref()
                && let Some(message) = call.arguments.args.first()
                && self.refused_by.is_none()
                && says_training_refused(&self.source.text[message.range()])
            {
                self.refused_by = Some(self.classes.last().cloned());
            }
            if let Stmt::ClassDef(class) = stmt {
                self.classes.push(class.name.id.to_string());
                walk_stmt(self, stmt);
                self.classes.pop();
                return;
            }
            walk_stmt(self, stmt);
        }

        /// No expression holds a statement: the walk stays on statements.
        fn visit_expr(&mut self, _: &'a Expr) {}
    }
    let mut raises = Raises { source, classes: Vec::new(), refused_by: None };
    raises.visit_body(suite);
    raises.refused_by
}

/// The message of a raise (its source text) says training as a whole is refused.
fn says_training_refused(message: &str) -> bool {
    let message = message.to_lowercase();
    let Some(at) = message.find("training") else { return false };
    let negated = message.contains("not") && (message.contains("support") || message.contains("implemented"));
    let before = message[..at].trim_end().trim_end_matches(|c: char| !c.is_alphanumeric() && c != ' ');
    let subject = before.rsplit(' ').next().unwrap_or("");
    let subject = subject.trim_start_matches(|c: char| !c.is_alphanumeric());
    negated && (subject.is_empty() || matches!(subject, "support" | "supports"))
}

/// Module flags that are off and never set: `_USE_X = False` (or `None`) bound once at module
/// level, never declared `global`, never bound again anywhere in the file. Only private names
/// (a leading underscore): other modules do not set those.
fn module_flags_off(suite: &[Stmt]) -> HashMap<&str, Off> {
    let mut candidates = HashMap::default();
    for stmt in suite {
        let (target, value) = match stmt {
            Stmt::Assign(assign) => match assign.targets.as_slice() {
                [target] => (target, Some(assign.value.as_ref())),
                _ => continue,
            },
            Stmt::AnnAssign(assign) => (assign.target.as_ref(), assign.value.as_deref()),
            _ => continue,
        };
        if let (Expr::Name(name), Some(off)) = (target, value.and_then(off_literal))
            && name.id.starts_with('_')
        {
            candidates.insert(name.id.as_str(), off);
        }
    }
    if candidates.is_empty() {
        return candidates;
    }
    let mut bindings = Bindings::default();
    bindings.visit_body(suite);
    candidates.retain(|name, _| bindings.stores.get(name) == Some(&1) && !bindings.globals.contains(name));
    candidates
}

/// How often each name is bound in the file, and which are declared `global`.
#[derive(Default)]
struct Bindings<'a> {
    stores: HashMap<&'a str, usize>,
    globals: HashSet<&'a str>,
}

impl<'a> Visitor<'a> for Bindings<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Global(global) => self.globals.extend(global.names.iter().map(|name| name.id.as_str())),
            Stmt::Import(_) | Stmt::ImportFrom(_) => {
                let names: &[ast::Alias] = match stmt {
                    Stmt::Import(import) => &import.names,
                    Stmt::ImportFrom(import) => &import.names,
                    _ => &[],
                };
                for alias in names {
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name);
                    *self.stores.entry(bound.id.as_str()).or_default() += 1;
                }
            }
            _ => {}
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(name) = expr
            && matches!(name.ctx, ExprContext::Store | ExprContext::Del)
        {
            *self.stores.entry(name.id.as_str()).or_default() += 1;
        }
        walk_expr(self, expr);
    }
}

/// The names a body binds (assignments, loop targets, `with ... as`, nested defs...).
fn stored_names(body: &[Stmt]) -> HashSet<&str> {
    let mut bindings = Bindings::default();
    bindings.visit_body(body);
    bindings.stores.into_keys().collect()
}

/// Each name of the file as it is used: the calls that name it as the callee (`f(...)`,
/// `self.f(...)`, `obj.f(...)`), and whether it is used any other way (passed as a value,
/// decorated, looked up as an attribute without a call).
#[derive(Default)]
struct References<'a> {
    /// By name: its calls, each with the range of the `def` whose body makes it.
    calls: HashMap<&'a str, Vec<(&'a ast::ExprCall, Option<TextRange>)>>,
    other_uses: HashSet<&'a str>,
    /// Attributes set on any object (`obj.x = ...`).
    stored_attributes: HashSet<&'a str>,
    /// The `def`s the walk is in, innermost last.
    defs: Vec<TextRange>,
}

impl<'a> References<'a> {
    fn of(suite: &'a [Stmt]) -> Self {
        let mut references = References::default();
        references.visit_body(suite);
        references
    }

    /// Every name referenced, set as an attribute or held in an identifier-like string, hashed.
    fn names_used(&self) -> Vec<u64> {
        let strings = self.other_uses.iter().filter(|name| is_identifier(name));
        let names = self.calls.keys().chain(strings).chain(&self.stored_attributes);
        let mut hashes: Vec<u64> = names.map(|name| name_hash(name)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        hashes
    }

    /// The calls of `name`, when it is called at least once and used no other way.
    fn only_called(&self, name: &str) -> Option<&[(&'a ast::ExprCall, Option<TextRange>)]> {
        if self.other_uses.contains(name) {
            return None;
        }
        self.calls.get(name).map(Vec::as_slice).filter(|calls| !calls.is_empty())
    }
}

/// A name's hash in `FileModel::names_used`: a set of hashes is a fraction of the names' size, and
/// a collision only makes a name look used (the safe side).
pub fn name_hash(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = rustc_hash::FxHasher::default();
    name.hash(&mut hasher);
    hasher.finish()
}

fn is_identifier(text: &str) -> bool {
    text.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The name a callee or a reference stands for: `f`, or `f` of `x.f`.
fn referenced_name(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(name) if name.ctx == ExprContext::Load => Some(name.id.as_str()),
        Expr::Attribute(attr) if attr.ctx == ExprContext::Load => Some(attr.attr.id.as_str()),
        _ => None,
    }
}

impl<'a> Visitor<'a> for References<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if let Stmt::FunctionDef(def) = stmt {
            self.defs.push(def.range());
            walk_stmt(self, stmt);
            self.defs.pop();
            return;
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr {
            if let Some(name) = referenced_name(&call.func) {
                self.calls.entry(name).or_default().push((call, self.defs.last().copied()));
                // The callee's own children (`self` of `self.f`) are not uses of `f`.
                if let Expr::Attribute(attr) = call.func.as_ref() {
                    self.visit_expr(&attr.value);
                }
                self.visit_arguments(&call.arguments);
                return;
            }
        } else if let Some(name) = referenced_name(expr) {
            self.other_uses.insert(name);
        } else if let Expr::Attribute(attr) = expr
            && attr.ctx == ExprContext::Store
        {
            self.stored_attributes.insert(attr.attr.id.as_str());
        }
        walk_expr(self, expr);
    }

    /// `__all__ = ["f"]`, `getattr(self, "f")`: a name in a string may be how it is reached.
    fn visit_string_literal(&mut self, string: &'a ast::StringLiteral) {
        self.other_uses.insert(string.value.as_ref());
    }
}

/// The file's top-level classes that its own code builds (or names) only in dead code: unless
/// another file imports one, nothing ever builds it (timm's `Conv2dSameExport`, returned only
/// under a flag that is off). The index decides, knowing what the other files import.
pub fn classes_named_only_in_dead_code(suite: &[Stmt], dead: &DeadCode) -> Vec<String> {
    let top_level: HashSet<&str> = suite
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::ClassDef(class) => Some(class.name.id.as_str()),
            _ => None,
        })
        .collect();
    if dead.is_empty() || top_level.is_empty() {
        return Vec::new();
    }
    let mut uses = Uses { only_dead: HashMap::default(), top_level, dead };
    uses.visit_body(suite);
    let mut found: Vec<String> =
        uses.only_dead.into_iter().filter(|(_, only_dead)| *only_dead).map(|(name, _)| name.to_string()).collect();
    found.sort();
    found
}

/// Where a file names its top-level classes: per name, whether every use is in dead code.
struct Uses<'a, 'd> {
    only_dead: HashMap<&'a str, bool>,
    top_level: HashSet<&'a str>,
    dead: &'d DeadCode,
}

impl<'a> Visitor<'a> for Uses<'a, '_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(name) = expr
            && self.top_level.contains(name.id.as_str())
        {
            let in_dead = self.dead.covering(name.range()).is_some();
            *self.only_dead.entry(name.id.as_str()).or_insert(true) &= in_dead;
        }
        walk_expr(self, expr);
    }

    fn visit_string_literal(&mut self, string: &'a ast::StringLiteral) {
        // `__all__ = ["Name"]`: exported for other modules to build.
        if self.top_level.contains(string.value.as_ref()) {
            self.only_dead.insert(string.value.as_ref(), false);
        }
    }
}

/// An attribute that only methods nothing calls turn on (`uncalled_setters`): the branches that
/// need it on are dead unless another file names it or them.
#[derive(Debug, Clone)]
pub struct UncalledSetter {
    pub attribute: String,
    /// The methods that turn it on; the file never names them.
    pub methods: Vec<String>,
    /// The bodies of the branches that run only when it is on.
    pub branches: Vec<TextRange>,
}

impl UncalledSetter {
    /// The names no other file may use for the branches to stay dead.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.attribute.as_str()).chain(self.methods.iter().map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_refusing_training_as_a_whole_is_read_as_such() {
        assert!(says_training_refused(r#""Training is not implemented yet""#));
        assert!(says_training_refused(r#"f"{name} does not support training""#));
        assert!(says_training_refused(r#""Detector does not support training for now.""#));
    }

    #[test]
    fn a_message_refusing_one_task_or_saying_something_else_is_not() {
        assert!(!says_training_refused(r#""Optical flow training is not yet supported""#));
        assert!(!says_training_refused(r#""Gradient checkpointing is enabled during training""#));
        assert!(!says_training_refused(r#""labels are required for training""#));
    }

    #[test]
    fn nested_dead_ranges_merge_into_the_outermost() {
        let range = |start: u32, end: u32| TextRange::new(start.into(), end.into());
        let mut dead = DeadCode::default();
        dead.add(range(10, 20), DeadReason::BeforeRaise);
        dead.add(range(0, 30), DeadReason::ExceptHandler);
        dead.add(range(40, 50), DeadReason::TrainingOnly);
        assert_eq!(dead.covering(range(12, 14)), Some(&DeadReason::ExceptHandler));
        assert_eq!(dead.covering(range(45, 50)), Some(&DeadReason::TrainingOnly));
        assert_eq!(dead.covering(range(28, 41)), None);
        assert_eq!(dead.covering(range(31, 35)), None);
    }

    /// What `add` did when it sorted every range again and merged them all: the outermost
    /// reason of each merged piece is kept, the earlier added one among ranges that sort alike.
    fn merged_by_sorting_all(added: &[(TextRange, DeadReason)]) -> Vec<(TextRange, DeadReason)> {
        let mut merged: Vec<(TextRange, DeadReason)> = Vec::new();
        for (range, reason) in added {
            merged.push((*range, reason.clone()));
            merged.sort_by_key(|(range, _)| (range.start(), std::cmp::Reverse(range.end())));
            let mut again: Vec<(TextRange, DeadReason)> = Vec::new();
            for (range, reason) in merged.drain(..) {
                match again.last_mut() {
                    Some((last, _)) if range.start() <= last.end() => *last = last.cover(range),
                    _ => again.push((range, reason)),
                }
            }
            merged = again;
        }
        merged
    }

    #[test]
    fn adding_ranges_one_at_a_time_merges_as_sorting_them_all_did() {
        let reasons = [DeadReason::BeforeRaise, DeadReason::ExceptHandler, DeadReason::TrainingOnly];
        // A fixed pseudo-random sequence: nested, touching, equal and apart ranges, in any order.
        let mut seed: u32 = 12345;
        let mut next = |below: u32| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) % below
        };
        for _ in 0..200 {
            let added: Vec<(TextRange, DeadReason)> = (0..next(12) + 1)
                .map(|_| {
                    let start = next(60);
                    let range = TextRange::new(start.into(), (start + next(15)).into());
                    (range, reasons[next(3) as usize].clone())
                })
                .collect();
            let mut dead = DeadCode::default();
            for (range, reason) in &added {
                dead.add(*range, reason.clone());
            }
            assert_eq!(dead.ranges, merged_by_sorting_all(&added), "added {added:?}");
        }
    }
}

//! Branches on a flag argument of a module's `forward` that a call leaves unset.
//!
//! `def forward(self, input_ids, labels=None, use_cache: bool | None = None)` then, in its body,
//! `if use_cache: logger.warning(...)`: the user calls the model, and a call that does not pass
//! `use_cache` never takes that branch, so Dynamo never traces it. A finding there is real only
//! for a caller who passes the flag: it stays, low, and says so. (A function the file's own code
//! calls is `dead_code`'s `ParameterOff`: there the file's calls decide; an entry point's caller
//! is the user.)
//!
//! Only a flag: a parameter whose default is `None` or `False`, annotated `bool` or not at all,
//! tested for its truth (`if use_cache:`, `if x and use_cache:`, the clauses after
//! `if not use_cache:`). `if labels is not None:` is no flag test: it is the training path,
//! data a normal call passes. And only a flag nothing else fills:
//! - the function does not assign it before the test (nor in a loop around the test);
//! - its decorators are ones known to leave the arguments alone (docstring decorators,
//!   `can_return_tuple`, grad modes): transformers' `@merge_with_config_defaults` fills
//!   `use_cache` from the config;
//! - no other file imports the class (a test file may: its calls exercise the flag, they are no
//!   normal use, and the finding still says when it bites), no compiled code of another file
//!   calls the function, and
//!   in this file the class is only built as a submodule (`self.text_model = TextModel(config)`)
//!   whose calls pass the flag as `None` or `False`, or not at all, or pass on their own
//!   `forward`'s flag of the same name, itself unset.

use std::cell::OnceCell;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, BoolOp, CmpOp, Expr, ExprContext, Stmt, UnaryOp};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::model::defaults::config_defaults::number;
use crate::model::defaults::finding_conditions::{BranchTests, BranchWalk, FindingConditions, compares};
use crate::model::file::imports::last_segment;
use crate::model::file::module::is_entry_point;
use crate::model::file::module::is_self;
use crate::model::file::self_assignments;
use crate::model::file::{FileModel, FunctionNode};
/// For each of `ranges` (the findings' ranges), the condition its code needs when it sits in a
/// branch on an unset flag of an entry point: "only when `forward` is called with
/// `use_cache=True` (None by default)". The classes whose import by another file the answer
/// read are added to `asked` (qualnames), so that an answer given with other imports can be
/// told apart.
pub fn off_unless_passed(model: &FileModel, ranges: &[TextRange], asked: &mut HashSet<String>) -> Vec<Option<String>> {
    let mut conditions = FindingConditions::new(ranges);
    let mut unset =
        Unset { model, known: HashMap::default(), asked, class_names: OnceCell::new(), methods: OnceCell::new() };
    for function in 0..model.functions.len() {
        let FunctionNode::Def(def) = model.function(function).node else { continue };
        if !is_entry_point(&def.name.id) || !conditions.touches(def.range()) {
            continue;
        }
        let flags: Vec<Flag> =
            flag_parameters(model, def).into_iter().filter(|flag| unset.holds(function, &flag.name, 0)).collect();
        if flags.is_empty() {
            continue;
        }
        let mut walk = BranchWalk { tests: FlagTests { def, flags }, conditions: &mut conditions };
        walk.visit_body(&def.body);
    }
    conditions.into_vec()
}

/// A flag parameter: its name and its default's text; for a number (`rollout_steps=1`), its value:
/// such a flag is tested by comparing it (`if rollout_steps > 1:`), not by its truth.
struct Flag {
    name: String,
    default: String,
    number: Option<f64>,
}

/// The parameters of `def` defaulting to `None` or `False`, annotated `bool` (or not annotated),
/// and those defaulting to a number, annotated `int` or `float` (or not annotated).
fn flag_parameters(model: &FileModel, def: &ast::StmtFunctionDef) -> Vec<Flag> {
    def.parameters
        .iter_non_variadic_params()
        .filter_map(|parameter| {
            let default = parameter.default()?;
            let text = &model.source.text[default.range()];
            let (number, kinds): (Option<f64>, &[&str]) = match default {
                Expr::NoneLiteral(_) | Expr::BooleanLiteral(ast::ExprBooleanLiteral { value: false, .. }) => {
                    (None, &["bool"])
                }
                Expr::NumberLiteral(_) => (Some(number(text)?), &["int", "float"]),
                _ => return None,
            };
            let annotated_so = match parameter.parameter.annotation.as_deref() {
                Some(annotation) => kinds.iter().any(|kind| model.source.text[annotation.range()].contains(kind)),
                None => true,
            };
            annotated_so.then(|| Flag {
                name: parameter.parameter.name.id.to_string(),
                default: text.to_string(),
                number,
            })
        })
        .collect()
}

/// Whether an entry point's flag is unset on every call tcfix can see (answers kept: a class's
/// holders are asked once per flag).
struct Unset<'m, 'a> {
    model: &'m FileModel<'a>,
    known: HashMap<(usize, String), bool>,
    asked: &'m mut HashSet<String>,
    /// How the file names its classes, read when a flag first asks.
    class_names: OnceCell<ClassNames<'a>>,
    /// The functions of each class (`methods_by_class`), read when a flag first asks.
    methods: OnceCell<HashMap<usize, Vec<usize>>>,
}

impl<'a> Unset<'_, 'a> {
    fn holds(&mut self, function: usize, flag: &str, depth: usize) -> bool {
        let key = (function, flag.to_string());
        if let Some(&known) = self.known.get(&key) {
            return known;
        }
        // A cycle of holders is not a proof.
        self.known.insert(key.clone(), false);
        let answer = depth < 8 && self.find(function, flag, depth);
        self.known.insert(key, answer);
        answer
    }

    fn find(&mut self, function: usize, flag: &str, depth: usize) -> bool {
        let model = self.model;
        let info = model.function(function);
        let (FunctionNode::Def(def), Some(class)) = (info.node, info.class) else { return false };
        if info.parent.is_some() || model.called_from_other_files.contains(&info.qualname) {
            return false;
        }
        if !def.decorator_list.iter().all(|decorator| leaves_arguments_alone(model, &decorator.expression)) {
            return false;
        }
        let Some(position) = parameter_position(def, flag) else { return false };
        self.asked.insert(model.classes[class].qualname.clone());
        if model.classes[class].imported_elsewhere {
            return false;
        }
        let class_name = model.classes[class].node.name.id.as_str();
        let Some(holders) = self.class_names.get_or_init(|| ClassNames::of(model)).holders(class_name) else {
            return false;
        };
        // The module's own methods may call it too (`self(ids, use_cache=True)` in a decoding loop).
        let methods = self.methods.get_or_init(|| methods_by_class(model)).get(&class).map_or(&[][..], Vec::as_slice);
        let own_calls = calls_of(model, None, methods.iter().copied());
        let held_calls = holders.iter().flat_map(|attr| calls_of(model, Some(attr), 0..model.functions.len()));
        let calls: Vec<_> = own_calls.into_iter().chain(held_calls).collect();
        calls.into_iter().all(|(caller, call)| self.passes_unset(caller, call, flag, position, depth))
    }

    /// Whether `call` (made in `caller`) leaves `flag` unset: not passed, passed as `None` or
    /// `False`, or passed on from the caller's own unset flag of that name.
    fn passes_unset(&mut self, caller: usize, call: &ast::ExprCall, flag: &str, position: usize, depth: usize) -> bool {
        let arguments = &call.arguments;
        // `self` is bound: the call's first argument is the second parameter.
        if arguments.args.iter().any(Expr::is_starred_expr) || arguments.args.len() >= position {
            return false;
        }
        let FunctionNode::Def(caller_def) = self.model.function(caller).node else { return false };
        let caller_has_flag = parameter_position(caller_def, flag).is_some();
        for keyword in &arguments.keywords {
            match &keyword.arg {
                // `**kwargs` cannot hold a name the caller takes as a parameter of its own.
                None if caller_has_flag => {}
                None => return false,
                Some(arg) if arg.id.as_str() != flag => {}
                Some(_) => match &keyword.value {
                    Expr::NoneLiteral(_) | Expr::BooleanLiteral(ast::ExprBooleanLiteral { value: false, .. }) => {}
                    Expr::Name(name) if name.id.as_str() == flag => {
                        let caller_name = self.model.function(caller).name.as_str();
                        if !is_entry_point(caller_name)
                            || Stores::of(caller_def, flag).rebound_before(keyword.value.start())
                            || !self.holds(caller, flag, depth + 1)
                        {
                            return false;
                        }
                    }
                    _ => return false,
                },
            }
        }
        true
    }
}

/// A decorator known to hand the function its arguments as given: one that only writes
/// documentation, one that only converts the output (`can_return_tuple`), or a grad mode.
fn leaves_arguments_alone(model: &FileModel, decorator: &Expr) -> bool {
    let callee = match decorator {
        Expr::Call(call) => call.func.as_ref(),
        other => other,
    };
    if let Some(qualified) = model.imports.qualified_name(callee)
        && matches!(qualified.as_str(), "torch.no_grad" | "torch.inference_mode" | "torch.enable_grad")
    {
        return true;
    }
    last_segment(callee).is_some_and(|name| name.contains("docstring") || name == "can_return_tuple")
}

/// Where `flag` sits among `def`'s positional parameters after `self` (1 for the first), or
/// `usize::MAX` for a keyword-only one; `None` when `def` has no such parameter.
fn parameter_position(def: &ast::StmtFunctionDef, flag: &str) -> Option<usize> {
    let parameters = &def.parameters;
    let positional = parameters.posonlyargs.iter().chain(&parameters.args);
    if let Some(at) = positional.clone().position(|p| p.parameter.name.id.as_str() == flag) {
        return Some(at);
    }
    parameters.kwonlyargs.iter().any(|p| p.parameter.name.id.as_str() == flag).then_some(usize::MAX)
}

/// How the file names its classes, read in one walk for all of them (a walk per class made a file
/// of many modules quadratic): how often each name appears, how often as `isinstance(x, Class)`'s
/// class, and the attributes that hold a call of it (`self.text_model = TextModel(config)`).
/// Only the names of the file's classes are counted, borrowed from the tree: the walk visits every
/// name of the file.
#[derive(Default)]
struct ClassNames<'a> {
    all: HashMap<&'a str, usize>,
    isinstance: HashMap<&'a str, usize>,
    held: HashMap<&'a str, Vec<String>>,
}

impl<'a> ClassNames<'a> {
    fn of(model: &FileModel<'a>) -> Self {
        let mut names = ClassNames::default();
        for class in &model.classes {
            let name = class.node.name.id.as_str();
            names.all.insert(name, 0);
            names.isinstance.insert(name, 0);
        }
        names.visit_body(model.source.parsed.suite());
        for owner in 0..model.classes.len() {
            for assignment in self_assignments(model, owner) {
                if let Some(Expr::Call(call)) = assignment.value()
                    && let Expr::Name(name) = call.func.as_ref()
                {
                    names.held.entry(name.id.as_str()).or_default().push(assignment.attr.clone());
                }
            }
        }
        names
    }

    /// The attributes that hold the class in the file, when that and `isinstance` are the only
    /// ways the file names it; `None` when the file names it another way (a subclass, a factory,
    /// a local) whose calls are not known.
    fn holders(&self, class_name: &str) -> Option<Vec<String>> {
        let count = |counts: &HashMap<&str, usize>| counts.get(class_name).copied().unwrap_or(0);
        let held = self.held.get(class_name).cloned().unwrap_or_default();
        (count(&self.all) == count(&self.isinstance) + held.len()).then_some(held)
    }
}

impl<'a> Visitor<'a> for ClassNames<'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(name) => {
                if let Some(count) = self.all.get_mut(name.id.as_str()) {
                    *count += 1;
                }
            }
            Expr::Call(call) if matches!(call.func.as_ref(), Expr::Name(f) if f.id.as_str() == "isinstance") => {
                if let Some(Expr::Name(class)) = call.arguments.args.get(1)
                    && let Some(count) = self.isinstance.get_mut(class.id.as_str())
                {
                    *count += 1;
                }
            }
            _ => {}
        }
        walk_expr(self, expr);
    }
}

/// The functions whose `self` is an instance of each class (its methods and what they nest), read
/// once for the file.
fn methods_by_class(model: &FileModel) -> HashMap<usize, Vec<usize>> {
    let mut methods: HashMap<usize, Vec<usize>> = HashMap::default();
    for function in 0..model.functions.len() {
        if let Some(class) = model.self_class(function) {
            methods.entry(class).or_default().push(function);
        }
    }
    methods
}

/// The calls of a module in `functions`, with the function each is made in:
/// of the submodule `self.<attr>` (`self.<attr>(...)`, `self.<attr>.forward(...)`), or with no
/// `attr`, of the module itself (`self(...)`, `self.forward(...)`).
fn calls_of<'a>(
    model: &FileModel<'a>,
    attr: Option<&str>,
    functions: impl Iterator<Item = usize>,
) -> Vec<(usize, &'a ast::ExprCall)> {
    struct Calls<'s, 'a> {
        attr: Option<&'s str>,
        found: Vec<&'a ast::ExprCall>,
    }
    impl<'a> Visitor<'a> for Calls<'_, 'a> {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if !matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
                walk_stmt(self, stmt);
            }
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Call(call) = expr {
                let module = match call.func.as_ref() {
                    Expr::Attribute(method) if method.attr.id.as_str() == "forward" => method.value.as_ref(),
                    other => other,
                };
                let called = match (self.attr, module) {
                    (None, module) => is_self(module),
                    (Some(attr), Expr::Attribute(held)) => held.attr.id.as_str() == attr && is_self(&held.value),
                    _ => false,
                };
                if called {
                    self.found.push(call);
                }
            }
            walk_expr(self, expr);
        }
    }
    let mut found = Vec::new();
    for function in functions {
        let FunctionNode::Def(def) = model.function(function).node else { continue };
        let mut calls = Calls { attr, found: Vec::new() };
        calls.visit_body(&def.body);
        found.extend(calls.found.into_iter().map(|call| (function, call)));
    }
    found
}

/// Where a function's body assigns a name (its own scope: nested functions and classes have
/// theirs), and its loops.
struct Stores {
    stores: Vec<TextSize>,
    loops: Vec<TextRange>,
}

impl Stores {
    fn of(def: &ast::StmtFunctionDef, name: &str) -> Stores {
        struct Walk<'n> {
            name: &'n str,
            found: Stores,
        }
        impl<'a> Visitor<'a> for Walk<'_> {
            fn visit_stmt(&mut self, stmt: &'a Stmt) {
                match stmt {
                    Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return,
                    Stmt::For(_) | Stmt::While(_) => self.found.loops.push(stmt.range()),
                    _ => {}
                }
                walk_stmt(self, stmt);
            }
            fn visit_expr(&mut self, expr: &'a Expr) {
                if let Expr::Name(name) = expr
                    && name.id.as_str() == self.name
                    && matches!(name.ctx, ExprContext::Store | ExprContext::Del)
                {
                    self.found.stores.push(name.start());
                }
                if !matches!(expr, Expr::Lambda(_)) {
                    walk_expr(self, expr);
                }
            }
        }
        let mut walk = Walk { name, found: Stores { stores: Vec::new(), loops: Vec::new() } };
        walk.visit_body(&def.body);
        walk.found
    }

    /// Whether the name may hold another value than the argument at `at`: assigned before it,
    /// or in a loop around it.
    fn rebound_before(&self, at: TextSize) -> bool {
        self.stores.iter().any(|&store| store < at || self.loops.iter().any(|l| l.contains(at) && l.contains(store)))
    }
}

/// The tests of an entry point's unset flags, for the walk that marks the branches on them.
struct FlagTests<'a> {
    def: &'a ast::StmtFunctionDef,
    flags: Vec<Flag>,
}

impl FlagTests<'_> {
    fn condition(&self, flag: usize) -> String {
        let Flag { name, default, .. } = &self.flags[flag];
        format!("only when `{}` is called with `{name}=True` ({default} by default)", self.def.name.id)
    }

    /// The flag a test needs true (`flag`, `flag and x`, `x and flag`), unassigned before it.
    fn flag_needed(&self, test: &Expr) -> Option<usize> {
        let flag = match test {
            Expr::Name(name) => self.flag(name.id.as_str()),
            Expr::BoolOp(bool_op) if bool_op.op == BoolOp::And => bool_op.values.iter().find_map(|value| match value {
                Expr::Name(name) => self.flag(name.id.as_str()),
                _ => None,
            }),
            _ => None,
        }?;
        self.unassigned_at(flag, test).then_some(flag)
    }

    /// A flag tested by its truth: not a number.
    fn flag(&self, name: &str) -> Option<usize> {
        self.flags.iter().position(|flag| flag.name == name && flag.number.is_none())
    }

    fn unassigned_at(&self, flag: usize, test: &Expr) -> bool {
        !Stores::of(self.def, &self.flags[flag].name).rebound_before(test.start())
    }

    /// `rollout_steps > 1` on a number flag, unassigned before it, when its default makes the
    /// comparison come out `wanted`: the condition under which it comes out the other way.
    fn comparison(&self, test: &Expr, wanted: bool) -> Option<String> {
        let Expr::Compare(compare) = test else { return None };
        let ([op], [Expr::NumberLiteral(literal)], Expr::Name(name)) =
            (&*compare.ops, &*compare.comparators, compare.left.as_ref())
        else {
            return None;
        };
        let flag = self.flags.iter().position(|flag| flag.name == name.id.as_str() && flag.number.is_some())?;
        let (bound, written) = literal_value(literal)?;
        let default = self.flags[flag].number?;
        let holds = compares(default, *op, bound)?;
        if holds != wanted || !self.unassigned_at(flag, test) {
            return None;
        }
        let op = if wanted { negated(*op)? } else { *op };
        let Flag { name, default, .. } = &self.flags[flag];
        let function = &self.def.name.id;
        Some(format!("only when `{function}` is called with `{name} {} {written}` ({default} by default)", op.as_str()))
    }
}

/// A number literal's value, and its text as the message writes it.
fn literal_value(literal: &ast::ExprNumberLiteral) -> Option<(f64, String)> {
    match &literal.value {
        ast::Number::Int(int) => Some((int.as_u64()? as f64, int.to_string())),
        ast::Number::Float(float) => Some((*float, format!("{float:?}"))),
        ast::Number::Complex { .. } => None,
    }
}

/// The comparison that holds exactly when `op` fails.
fn negated(op: CmpOp) -> Option<CmpOp> {
    Some(match op {
        CmpOp::Lt => CmpOp::GtE,
        CmpOp::LtE => CmpOp::Gt,
        CmpOp::Gt => CmpOp::LtE,
        CmpOp::GtE => CmpOp::Lt,
        CmpOp::Eq => CmpOp::NotEq,
        CmpOp::NotEq => CmpOp::Eq,
        _ => return None,
    })
}

impl BranchTests for FlagTests<'_> {
    /// `flag`, or a comparison of a number flag that its default makes false (`rollout_steps > 1`).
    fn needs(&self, test: &Expr) -> Option<String> {
        self.flag_needed(test).map(|flag| self.condition(flag)).or_else(|| self.comparison(test, false))
    }

    /// `not flag`: what follows it runs only when the flag is true; so with a comparison that the
    /// default makes true (`if rollout_steps <= 1: return x`).
    fn needs_false(&self, test: &Expr) -> Option<String> {
        match test {
            Expr::UnaryOp(unary) if unary.op == UnaryOp::Not && matches!(unary.operand.as_ref(), Expr::Name(_)) => {
                self.needs(&unary.operand)
            }
            _ => self.comparison(test, true),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::project::findings_of_texts;

    const WRAPPER: &str = "import torch\nfrom torch import nn\n\nclass Rollout(nn.Module):\n    def forward(self, x, steps=1):\n        if steps > 1:\n            return x[: int(x.max().item())]\n        return x\n";

    /// The severity of the one finding in `pkg/rollout.py`, with `other` beside it.
    fn severity_beside(other: (&str, &str)) -> String {
        let found = findings_of_texts(&[("pkg/rollout.py", WRAPPER), other]);
        let [(_, _, finding)] = found.as_slice() else { panic!("{found:#?}") };
        format!("{:?}", finding.severity)
    }

    #[test]
    fn a_test_or_a_package_init_importing_the_class_leaves_its_flag_unset() {
        let test = "from pkg.rollout import Rollout\n\ndef test_rollout():\n    Rollout()(torch.ones(3), steps=4)\n";
        assert_eq!(severity_beside(("tests/test_rollout.py", test)), "Low");
        let script = "from pkg.rollout import Rollout\n\nRollout()(torch.ones(3), steps=4)\n";
        assert_eq!(severity_beside(("pkg/train.py", script)), "High");
        // A package's `__init__` hands the class on; a script that imports it from there may pass it.
        let init = "from pkg.rollout import Rollout\n";
        assert_eq!(severity_beside(("pkg/__init__.py", init)), "Low");
        let found = findings_of_texts(&[
            ("pkg/rollout.py", WRAPPER),
            ("pkg/__init__.py", init),
            ("train.py", "from pkg import Rollout\n\nRollout()(torch.ones(3), steps=4)\n"),
        ]);
        assert_eq!(found.iter().map(|(_, _, d)| format!("{:?}", d.severity)).collect::<Vec<_>>(), ["High"]);
    }
}

//! Branches taken only when a module is built with a flag that is off by default.
//!
//! `def __init__(self, ..., expand=False): self.expand = expand`, then `if self.expand and
//! self.prefix_bucket:` in `forward` (transformers' UDOP relative bias): built as its defaults
//! say, the module never takes that branch, so Dynamo does not trace it. A config or a caller
//! elsewhere may pass `expand=True`: a finding there is real only for such a module, so it stays,
//! low, and says so.
//!
//! The same for a number the default makes fail a comparison with a literal: `frac=1.0`, then
//! `if self.frac < 1.0:` ("only when `Quantizer` is built with `frac < 1.0` (1.0 by default)").
//!
//! The same for an attribute `__init__` sets to a literal `False` (`self.gradient_checkpointing =
//! False`) that nothing in the file turns on, on any object, in any way (only another file may,
//! like a library's `gradient_checkpointing_enable()`): "only when `gradient_checkpointing` is
//! turned on".
//!
//! Only when that is certain in the file: the attribute is stored from the parameter (or the
//! literal) at the top of `__init__`, is otherwise only ever set off again (`self.expand = False`),
//! and no call in the file passes the parameter (by keyword, or by position to the class or a
//! `super().__init__`).

use rustc_hash::FxHashMap as HashMap;

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, BoolOp, CmpOp, Expr, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use crate::model::compiled::compiled_code::is_compiling_call;
use crate::model::defaults::finding_conditions::{BranchTests, BranchWalk, FindingConditions, compares};
use crate::model::defaults::none_tests::{none_tests, tested_for_none};
use crate::model::defaults::turned_on::TurnedOn;
use crate::model::file::module::is_self;
use crate::model::file::self_assignments;
use crate::model::file::{FileModel, FunctionNode, SelfAssignment};
use crate::model::flow::reaching_binding::{last_binding, names_bound};
/// For each of `ranges`, the condition its code needs when it sits in a branch on a flag the
/// module's constructor leaves off: "only when `RelativeBias` is built with `expand=True` (False
/// by default)".
pub fn off_unless_built_with(model: &FileModel, ranges: &[TextRange]) -> Vec<Option<String>> {
    let mut conditions = FindingConditions::new(ranges);
    let assigned = assigned(model);
    let turned_on_anywhere = std::cell::OnceCell::new();
    let file_none_tests = std::cell::OnceCell::new();
    for class in 0..model.classes.len() {
        if !conditions.touches(model.classes[class].node.range()) {
            continue;
        }
        let none_tests = file_none_tests.get_or_init(|| none_tests(model));
        let mut flags = flags_off(model, class, &assigned, none_tests);
        // A literal flag that code in the file turns on, on any object (`model.monitor.enabled =
        // on`, a closure's `self.x = True`), is part of the file's own use: no condition.
        if flags.values().any(|flag| flag.parameter.is_none()) {
            let turned_on_anywhere = turned_on_anywhere.get_or_init(|| TurnedOn::of(model));
            flags.retain(|attr, flag| flag.parameter.is_some() || !turned_on_anywhere.contains(attr.as_str()));
        }
        if flags.is_empty() {
            continue;
        }
        let name = model.classes[class].node.name.id.as_str();
        for &method in model.methods_of(class) {
            if let FunctionNode::Def(def) = model.function(method).node {
                let tests = FlagTests { class: name, flags: &flags, none_tests, method: Some(def) };
                BranchWalk { tests, conditions: &mut conditions }.visit_body(&def.body);
            }
        }
    }
    conditions.into_vec()
}

/// A flag `__init__` stores off: from a parameter that defaults off, from whether a parameter that
/// defaults to `None` was passed (`exists(scale)`), or as a literal `False`
/// (`self.gradient_checkpointing = False`, which nothing in the file turns on).
struct Flag {
    /// The parameter it is stored from; `None` for a literal.
    parameter: Option<String>,
    default: Default,
    /// Stored as whether the parameter was passed (`self.has_scale = scale is not None`): only its
    /// truth tells, it is never `None` itself.
    truth_only: bool,
}

/// An `__init__` parameter's default that leaves a branch off: `False`, `None`, or a number that a
/// comparison with a literal tests (`self.frac < 1.0` with `frac=1.0`).
#[derive(Clone)]
struct Default {
    /// As written in the signature.
    text: String,
    number: Option<f64>,
}

/// Whether an assignment sets its attribute to off (`False`, `None`).
fn turns_off(assignment: &SelfAssignment) -> bool {
    matches!(assignment.value(), Some(Expr::BooleanLiteral(b)) if !b.value)
        || matches!(assignment.value(), Some(Expr::NoneLiteral(_)))
}

/// How many assignments in the classes of the file set each attribute of `self`: to anything but
/// off, and at all (counted once per file, not once per class: a file can hold tens of thousands).
struct Assigned<'m> {
    on: HashMap<&'m str, usize>,
    all: HashMap<&'m str, usize>,
}

fn assigned<'m>(model: &'m FileModel) -> Assigned<'m> {
    let mut assigned = Assigned { on: HashMap::default(), all: HashMap::default() };
    for owner in 0..model.classes.len() {
        for assignment in self_assignments(model, owner) {
            *assigned.all.entry(assignment.attr.as_str()).or_default() += 1;
            if !turns_off(assignment) {
                *assigned.on.entry(assignment.attr.as_str()).or_default() += 1;
            }
        }
    }
    assigned
}

/// The attributes of `class` stored from an off-by-default `__init__` parameter, or as a literal
/// `False`, that no method of the file's classes turns on (`turned_on`: see there).
fn flags_off(model: &FileModel, class: usize, assigned: &Assigned, none_tests: &[&str]) -> HashMap<String, Flag> {
    let turned_on = &assigned.on;
    let Some(init) = model.method(class, "__init__") else { return HashMap::default() };
    let FunctionNode::Def(def) = model.function(init).node else { return HashMap::default() };
    let mut parameters = off_parameters(def);
    // `if scale is None: scale = dim ** -0.5` before `self.scale = scale`: the default is replaced.
    let rebound = names_bound(&def.body);
    parameters.retain(|name, _| !rebound.contains(name));
    let mut flags = HashMap::default();
    for assignment in self_assignments(model, class) {
        if assignment.method != init || !assignment.top_level {
            continue;
        }
        let flag = match assignment.value() {
            Some(Expr::Name(name)) => parameters.get(name.id.as_str()).map(|(_, default)| Flag {
                parameter: Some(name.id.to_string()),
                default: default.clone(),
                truth_only: false,
            }),
            Some(value @ (Expr::Compare(_) | Expr::Call(_))) => passed_or_not(value, none_tests)
                .and_then(|name| parameters.get_key_value(name))
                .filter(|(_, (_, default))| default.text == "None")
                .map(|(name, (_, default))| Flag {
                    parameter: Some((*name).to_string()),
                    default: default.clone(),
                    truth_only: true,
                }),
            Some(Expr::BooleanLiteral(b)) if !b.value => Some(Flag {
                parameter: None,
                default: Default { text: "False".into(), number: None },
                truth_only: false,
            }),
            _ => None,
        };
        if let Some(flag) = flag {
            flags.insert(assignment.attr.clone(), flag);
        }
    }
    // Set to anything but off elsewhere (in any class of the file: a subclass may), it is no
    // flag: the file turns it on more often than this class's `__init__` stores it.
    let mut stores: HashMap<&str, usize> = HashMap::default();
    for assignment in self_assignments(model, class) {
        if !turns_off(assignment) && assignment.method == init && assignment.top_level {
            *stores.entry(assignment.attr.as_str()).or_default() += 1;
        }
    }
    // A literal `False` is a flag only while nothing in the file sets it to anything else. A flag
    // on by default is one only while no method of the class turns it off either.
    let turned_off = |attr: &str| assigned.all.get(attr) != stores.get(attr);
    flags.retain(|attr, flag| match flag.parameter {
        Some(_) if flag.default.text == "True" && turned_off(attr) => false,
        Some(_) => turned_on.get(attr.as_str()) == stores.get(attr.as_str()),
        None => !turned_on.contains_key(attr.as_str()),
    });
    if flags.is_empty() {
        return flags;
    }
    let passed = Passed::of(model, class, &parameters);
    flags.retain(|_, flag| flag.parameter.as_ref().is_none_or(|parameter| !passed.contains(parameter)));
    flags
}

/// The name a value tests for being passed: `scale is not None`, `exists(scale)` with a file's own
/// test for `None`.
fn passed_or_not<'e>(value: &'e Expr, none_tests: &[&str]) -> Option<&'e str> {
    let tested = match value {
        Expr::Compare(compare) => match (&*compare.ops, &*compare.comparators) {
            ([CmpOp::IsNot], [Expr::NoneLiteral(_)]) => compare.left.as_ref(),
            _ => return None,
        },
        Expr::Call(call) => tested_for_none(call, none_tests)?,
        _ => return None,
    };
    tested.as_name_expr().map(|name| name.id.as_str())
}

/// `__init__`'s parameters that default to `False`, `True`, `None` or a number: name -> (position,
/// default).
fn off_parameters(def: &ast::StmtFunctionDef) -> HashMap<&str, (usize, Default)> {
    let positional = def.parameters.posonlyargs.iter().chain(&def.parameters.args).enumerate();
    let keyword_only = def.parameters.kwonlyargs.iter().map(|p| (usize::MAX, p));
    positional
        .chain(keyword_only)
        .filter_map(|(position, parameter)| {
            let default = match parameter.default.as_deref()? {
                Expr::BooleanLiteral(b) => {
                    Default { text: if b.value { "True" } else { "False" }.into(), number: None }
                }
                Expr::NoneLiteral(_) => Default { text: "None".into(), number: None },
                Expr::NumberLiteral(n) => {
                    Default { text: number_text(&n.value)?, number: Some(number_value(&n.value)?) }
                }
                _ => return None,
            };
            Some((parameter.parameter.name.id.as_str(), (position, default)))
        })
        .collect()
}

/// The parameters some call of the file passes: by keyword to any call (a wrapper may forward
/// it), or by position to the class itself or to a `super().__init__(...)`.
struct Passed<'p> {
    parameters: &'p HashMap<&'p str, (usize, Default)>,
    class: &'p str,
    found: Vec<String>,
}

impl<'p> Passed<'p> {
    fn of(model: &FileModel, class: usize, parameters: &'p HashMap<&'p str, (usize, Default)>) -> Vec<String> {
        let class = model.classes[class].node.name.id.as_str();
        let mut passed = Passed { parameters, class, found: Vec::new() };
        passed.visit_body(model.source.parsed.suite());
        passed.found
    }

    fn positional_reach(&self, call: &ast::ExprCall) -> Option<usize> {
        let to_class = matches!(call.func.as_ref(), Expr::Name(n) if n.id.as_str() == self.class);
        let to_super_init = matches!(call.func.as_ref(), Expr::Attribute(a) if a.attr.id.as_str() == "__init__");
        // `self` is the first parameter: the class call's first argument binds the second.
        (to_class || to_super_init).then_some(call.arguments.args.len() + 1)
    }
}

impl<'a> Visitor<'a> for Passed<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr {
            for keyword in &call.arguments.keywords {
                let Some(arg) = &keyword.arg else { continue };
                let Some((_, default)) = self.parameters.get(arg.id.as_str()) else { continue };
                if !passes_default(&keyword.value, default) {
                    self.found.push(arg.id.to_string());
                }
            }
            let starred = call.arguments.args.iter().any(Expr::is_starred_expr);
            if let Some(reach) = self.positional_reach(call) {
                for (name, (position, _)) in self.parameters {
                    if *position != usize::MAX && (starred || *position < reach) {
                        self.found.push((*name).to_string());
                    }
                }
            }
        }
        walk_expr(self, expr);
    }
}

/// Whether a value passed for a flag leaves it as it was: its default `True` or `None`, or `False`
/// or `None` for a flag `False` by default.
fn passes_default(value: &Expr, default: &Default) -> bool {
    match default.text.as_str() {
        "True" => matches!(value, Expr::BooleanLiteral(b) if b.value),
        // `norm=False` for `norm=None` passes `self.norm is not None`.
        "None" => value.is_none_literal_expr(),
        _ => matches!(value, Expr::BooleanLiteral(b) if !b.value) || value.is_none_literal_expr(),
    }
}

/// The tests of a class's flags, for the walk of its methods that marks the branches on them.
struct FlagTests<'w> {
    class: &'w str,
    flags: &'w HashMap<String, Flag>,
    /// The file's own tests for `None` (`exists`).
    none_tests: &'w [&'w str],
    /// The method walked, whose local names may hold a flag.
    method: Option<&'w ast::StmtFunctionDef>,
}

/// What a test gives in a module built as its defaults say, under compile.
struct ByDefault {
    holds: bool,
    /// The condition that turns it the other way ("`Gate` is built with `gated=True` (False by
    /// default)"); `None` for a test nothing in the module's construction turns (`is_compiling()`).
    flipped_when: Option<String>,
}

impl ByDefault {
    fn fixed(holds: bool) -> Self {
        ByDefault { holds, flipped_when: None }
    }
}

impl<'w> FlagTests<'w> {
    /// `test` in a module built as its defaults say: `self.expand` (off), `self.x is not None` or
    /// `exists(self.x)` (a `None` default), `self.use_scan` (on), `self.frac < 1.0`, and `not`,
    /// `and` of those and of `is_compiling()` (true under compile).
    fn by_default(&self, test: &Expr) -> Option<ByDefault> {
        match test {
            Expr::BoolOp(op) if op.op == BoolOp::And => self.and_by_default(&op.values),
            Expr::UnaryOp(not) if not.op == UnaryOp::Not => {
                self.by_default(&not.operand).map(|known| ByDefault { holds: !known.holds, ..known })
            }
            Expr::Attribute(_) | Expr::Name(_) => self.truth_by_default(self.flag_attribute(test)?),
            Expr::Compare(compare) => {
                let attr = self.flag_attribute(&compare.left)?;
                match (&*compare.ops, &*compare.comparators) {
                    ([CmpOp::IsNot], [Expr::NoneLiteral(_)]) => self.set_by_default(attr),
                    ([CmpOp::Is], [Expr::NoneLiteral(_)]) => {
                        self.set_by_default(attr).map(|known| ByDefault { holds: true, ..known })
                    }
                    ([op], [Expr::NumberLiteral(bound)]) => self.comparison_by_default(attr, *op, bound),
                    _ => None,
                }
            }
            Expr::Call(call) if is_compiling_call(test) && call.arguments.is_empty() => Some(ByDefault::fixed(true)),
            Expr::Call(call) => self.set_by_default(self.flag_attribute(tested_for_none(call, self.none_tests)?)?),
            _ => None,
        }
    }

    /// `self.x`, or a local name the method last bound to it before `expr` in the same block
    /// (`cap = self.token_cap`, `b, n, cap = *x.shape, self.token_cap`).
    fn flag_attribute<'e>(&self, expr: &'e Expr) -> Option<&'e ast::ExprAttribute>
    where
        'w: 'e,
    {
        match expr {
            Expr::Attribute(attr) if is_self(&attr.value) => Some(attr),
            Expr::Name(name) => match last_binding(self.method?, name.id.as_str(), name.range())?.0 {
                Expr::Attribute(attr) if is_self(&attr.value) => Some(attr),
                _ => None,
            },
            _ => None,
        }
    }

    /// An `and`: off by default when one operand is (its body needs that one turned); on when
    /// every operand is, and then turned off only by the one operand a construction can turn.
    fn and_by_default(&self, operands: &[Expr]) -> Option<ByDefault> {
        let known: Vec<Option<ByDefault>> = operands.iter().map(|operand| self.by_default(operand)).collect();
        if let Some(off) = known.iter().flatten().find(|known| !known.holds && known.flipped_when.is_some()) {
            return Some(ByDefault { holds: false, flipped_when: off.flipped_when.clone() });
        }
        let all_on: Option<Vec<ByDefault>> = known.into_iter().map(|k| k.filter(|k| k.holds)).collect();
        let mut turnable = all_on?.into_iter().filter_map(|known| known.flipped_when);
        match (turnable.next(), turnable.next()) {
            (Some(flipped_when), None) => Some(ByDefault { holds: true, flipped_when: Some(flipped_when) }),
            _ => None,
        }
    }

    /// `self.flag` tested for its truth.
    fn truth_by_default(&self, attr: &ast::ExprAttribute) -> Option<ByDefault> {
        let flag = self.flags.get(attr.attr.id.as_str())?;
        let Some(parameter) = &flag.parameter else {
            // A literal: only another file turns it on.
            let when = format!("`{}` is turned on (`{}.__init__` sets it False)", attr.attr.id, self.class);
            return Some(ByDefault { holds: false, flipped_when: Some(when) });
        };
        let (holds, with) = match flag.default.text.as_str() {
            "False" => (false, format!("`{parameter}=True`")),
            "None" => (false, format!("`{parameter}` set")),
            "True" => (true, format!("`{parameter}=False`")),
            _ => return None,
        };
        Some(ByDefault { holds, flipped_when: Some(self.built_with(&with, flag)) })
    }

    /// `self.x is not None` where `x` is stored from a parameter that defaults to `None`.
    fn set_by_default(&self, attr: &ast::ExprAttribute) -> Option<ByDefault> {
        let flag = self.flags.get(attr.attr.id.as_str())?;
        let parameter = flag.parameter.as_ref().filter(|_| flag.default.text == "None" && !flag.truth_only)?;
        Some(ByDefault { holds: false, flipped_when: Some(self.built_with(&format!("`{parameter}` set"), flag)) })
    }

    /// `self.frac < 1.0` where the constructor's default makes it false: "`Quantizer` is built with
    /// `frac < 1.0` (1.0 by default)".
    fn comparison_by_default(
        &self,
        attr: &ast::ExprAttribute,
        op: CmpOp,
        literal: &ast::ExprNumberLiteral,
    ) -> Option<ByDefault> {
        let flag = self.flags.get(attr.attr.id.as_str())?;
        let (default, bound) = (flag.default.number?, number_value(&literal.value)?);
        let holds = compares(default, op, bound)?;
        // Only the way the default fails is written: "built with `frac >= 1.0`" would be a guess.
        if holds {
            return None;
        }
        let written = format!("`{} {} {}`", flag.parameter.as_ref()?, op.as_str(), number_text(&literal.value)?);
        Some(ByDefault { holds, flipped_when: Some(self.built_with(&written, flag)) })
    }

    fn built_with(&self, with: &str, flag: &Flag) -> String {
        format!("`{}` is built with {with} ({} by default)", self.class, flag.default.text)
    }
}

impl BranchTests for FlagTests<'_> {
    fn needs(&self, test: &Expr) -> Option<String> {
        let known = self.by_default(test).filter(|known| !known.holds)?;
        Some(format!("only when {}", known.flipped_when?))
    }

    /// `not self.flag`, `self.x is None`, `self.use_scan and is_compiling()` (on by default):
    /// what follows runs only with the flag turned.
    fn needs_false(&self, test: &Expr) -> Option<String> {
        let known = self.by_default(test).filter(|known| known.holds)?;
        Some(format!("only when {}", known.flipped_when?))
    }
}

/// A number literal's value, for comparing a default with a bound.
fn number_value(number: &ast::Number) -> Option<f64> {
    match number {
        ast::Number::Int(int) => int.as_u64().map(|n| n as f64),
        ast::Number::Float(float) => Some(*float),
        ast::Number::Complex { .. } => None,
    }
}

/// A number literal as the message writes it.
fn number_text(number: &ast::Number) -> Option<String> {
    match number {
        ast::Number::Int(int) => Some(int.to_string()),
        ast::Number::Float(float) => Some(format!("{float:?}")),
        ast::Number::Complex { .. } => None,
    }
}

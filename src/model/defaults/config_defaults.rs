//! Code that the model's default configuration turns off.
//!
//! A transformers module reads its flags from a config object (`self.layerdrop =
//! config.decoder_layerdrop`, then `if self.training and self.layerdrop > 0.0:` in `forward`), and
//! the config class gives each flag its default (`decoder_layerdrop: float = 0.0`, or
//! `__init__(self, decoder_layerdrop=0.0)` storing `self.decoder_layerdrop = ...`). Under the
//! default config such a branch is never traced, but a checkpoint's `config.json` may turn it on:
//! a finding there is real only for such a config, and says so (see `rules::check`).
//!
//! Only simple tests are read: a config-derived attribute compared with a number, its truth,
//! `is None` / `is not None` of an attribute built only when a config flag holds
//! (`self.adapter = Adapter(config) if config.add_adapter else None`), a value past a configured
//! maximum (`count > self.max_objects`), a string field compared with strings (`config.mode ==
//! "joint"`, `in {...}`), and `and` / `or` / `not` / `bool()` of those, a field read as
//! `getattr(config, "name", default)` as well as `config.name`; and loops over `range(config.n)`
//! that the default leaves empty. Anything else is unknown, and unknown changes nothing.
//!
//! A default counts only while the project leaves it: a field the file stores, or that any
//! non-test file of the project sets to another value (`fields_set`, merged by the index), has
//! none.
//!
//! A flag `__init__` sets `False` and turns on only under a config test (`self.windowed = False`,
//! then `if config.window is not None and ...: self.windowed = config.windowed_layers[i]`) is
//! `False` under the default config when that test is false, so a branch on it (`if
//! self.windowed:`) gets the test's condition. Enough evidence, and nothing less: the class's
//! methods store the flag twice, first `False` directly in `__init__`'s body, then in the first
//! clause of a later `if` of that body (an `elif` or `else` would need the earlier tests too); no
//! subclass of the file stores it; nothing else in the file turns it on, on any object, by
//! `setattr` either (`turned_on`); and no other file names it at all (the index's
//! `named_elsewhere`: a subclass, a test or a script may turn it on, and a name is all the index
//! keeps of them). Its truth is all that is read: `self.windowed is None` stays unknown.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, BoolOp, CmpOp, Expr, Stmt, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use crate::discover::is_test_file;
use crate::model::defaults::finding_conditions::{FindingConditions, body_range, early_exit_test, rest_range};
use crate::model::defaults::turned_on::{TurnedOn, turns_on};
use crate::model::file::configured::{ConfigDefault, Value};
use crate::model::file::imports::unqualified;
use crate::model::file::module::is_self;
use crate::model::file::self_assignments;
use crate::model::file::{FileModel, FunctionNode, SelfAssignment};
use crate::source::identifier_occurrences;

/// What a config class says about its fields: their defaults, and the names whose value it
/// does not fix (set in a method, aliased by `attribute_map`, passed to the base's `__init__`),
/// which also hide a base class's default.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ClassDefaults {
    pub defaults: Vec<(String, ConfigDefault)>,
    pub unknown: Vec<String>,
}

impl ClassDefaults {
    /// The defaults of a config class (named `...Config`, or based on one); `None` for other classes.
    pub fn of(model: &FileModel, class: usize) -> Option<Self> {
        let info = &model.classes[class];
        let is_config = info.node.name.id.ends_with("Config")
            || info.bases.iter().any(|base| unqualified(base).ends_with("Config"));
        if !is_config {
            return None;
        }
        let mut found = ClassDefaults::default();
        for stmt in &info.node.body {
            found.read_class_level(model, stmt);
        }
        found.read_init(model, class);
        let unknown: HashSet<&String> = found.unknown.iter().collect();
        let defaults = found.defaults.iter().filter(|(name, _)| !unknown.contains(name)).cloned().collect();
        Some(ClassDefaults { defaults, unknown: found.unknown })
    }

    /// `flag: bool = False`, `layerdrop = 0.1`, and `attribute_map = {"alias": ...}`.
    fn read_class_level(&mut self, model: &FileModel, stmt: &Stmt) {
        let (target, value) = match stmt {
            Stmt::AnnAssign(assign) => (assign.target.as_ref(), assign.value.as_deref()),
            Stmt::Assign(assign) if assign.targets.len() == 1 => (&assign.targets[0], Some(assign.value.as_ref())),
            _ => return,
        };
        let (Expr::Name(name), Some(value)) = (target, value) else { return };
        if name.id.as_str() == "attribute_map" {
            if let Expr::Dict(dict) = value {
                let aliases = dict.iter().filter_map(|item| match item.key.as_ref()? {
                    Expr::StringLiteral(key) => Some(key.value.to_str().to_string()),
                    _ => None,
                });
                self.unknown.extend(aliases);
            }
            return;
        }
        match literal(model, value) {
            Some(default) => self.defaults.push((name.id.to_string(), default)),
            None => self.unknown.push(name.id.to_string()),
        }
    }

    /// `__init__(self, layerdrop=0.0)` storing `self.layerdrop = layerdrop`; any other
    /// assignment to `self.<name>` in a method makes `<name>` unknown, and so does a keyword
    /// passed to `super().__init__(...)`.
    fn read_init(&mut self, model: &FileModel, class: usize) {
        let init = model.method(class, "__init__");
        let mut parameters: HashMap<&str, ConfigDefault> = HashMap::default();
        if let Some(FunctionNode::Def(def)) = init.map(|init| model.function(init).node) {
            for parameter in def.parameters.iter_non_variadic_params() {
                if let Some(default) = parameter.default().and_then(|value| literal(model, value)) {
                    parameters.insert(parameter.parameter.name.id.as_str(), default);
                }
            }
            self.unknown.extend(super_init_keywords(&def.body));
        }
        let mut assigned: HashMap<&str, usize> = HashMap::default();
        for assignment in self_assignments(model, class) {
            *assigned.entry(assignment.attr.as_str()).or_default() += 1;
        }
        for assignment in self_assignments(model, class) {
            let attr = assignment.attr.as_str();
            let stored = match assignment.value() {
                Some(Expr::Name(name)) if Some(assignment.method) == init && assigned[attr] == 1 => {
                    parameters.get(name.id.as_str()).filter(|_| name.id.as_str() == attr)
                }
                _ => None,
            };
            match stored {
                Some(default) => self.defaults.push((attr.to_string(), default.clone())),
                None => self.unknown.push(attr.to_string()),
            }
        }
    }
}

/// The keywords of `super().__init__(...)` calls in a body (not nested functions).
fn super_init_keywords(body: &[Stmt]) -> Vec<String> {
    struct Keywords(Vec<String>);
    impl<'a> Visitor<'a> for Keywords {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if !matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
                walk_stmt(self, stmt);
            }
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Call(call) = expr
                && let Expr::Attribute(method) = call.func.as_ref()
                && method.attr.id.as_str() == "__init__"
                && matches!(method.value.as_ref(), Expr::Call(inner) if matches!(inner.func.as_ref(), Expr::Name(n) if n.id.as_str() == "super"))
            {
                self.0.extend(call.arguments.keywords.iter().filter_map(|k| k.arg.as_ref().map(|a| a.id.to_string())));
            }
            walk_expr(self, expr);
        }
    }
    let mut keywords = Keywords(Vec::new());
    keywords.visit_body(body);
    keywords.0
}

/// A literal default: `None`, `True`, `0.1`, `-1`, `"gelu"`.
fn literal(model: &FileModel, value: &Expr) -> Option<ConfigDefault> {
    let text = model.source.text[value.range()].to_string();
    let value = match value {
        Expr::NoneLiteral(_) => Value::None,
        Expr::BooleanLiteral(literal) => Value::Bool(literal.value),
        Expr::NumberLiteral(_) => Value::Number(number(&text)?),
        Expr::UnaryOp(unary) if unary.op == UnaryOp::USub && unary.operand.is_number_literal_expr() => {
            Value::Number(number(&text)?)
        }
        Expr::StringLiteral(string) => Value::Str(string.value.to_str().to_string()),
        _ => return None,
    };
    Some(ConfigDefault { value, text })
}

/// A Python int or float literal's value (`1_000`, `1e-5`, `- 2`); `None` for hex and the like.
pub(crate) fn number(text: &str) -> Option<f64> {
    let plain: String = text.chars().filter(|c| *c != '_' && !c.is_whitespace()).collect();
    plain.parse().ok()
}

/// For each of `ranges` (the findings' ranges), the condition its code needs when the default
/// config turns it off: "only when `config.decoder_layerdrop > 0.0` (0.0 by default)". The
/// config fields the answer read are added to `asked` (whatever their defaults, found or not), so
/// that an answer given with other defaults can be told apart.
pub fn off_by_default(model: &FileModel, ranges: &[TextRange], asked: &mut HashSet<String>) -> Vec<Option<String>> {
    let mut conditions = FindingConditions::new(ranges);
    let mut file: Option<FileFlags> = None;
    for class in 0..model.classes.len() {
        let class_range = model.classes[class].node.range();
        if !conditions.touches(class_range) {
            continue;
        }
        let file = file.get_or_insert_with(|| FileFlags::of(model));
        let flags = ClassFlags::of(model, class, file, asked);
        let mut walk = OffBranches { flags, conditions: &mut conditions };
        if let Some(condition) = walk.flags.built_only_when_off(class) {
            walk.conditions.mark(class_range, &condition);
        }
        for &method in model.methods_of(class) {
            if let FunctionNode::Def(def) = model.function(method).node
                && walk.conditions.touches(def.range())
            {
                walk.visit_body(&def.body);
            }
        }
    }
    conditions.into_vec()
}

/// What the answer asks of the whole file, gathered once for all its classes (a file can hold
/// tens of thousands: asking each class about every other would be quadratic).
struct FileFlags<'m> {
    /// Config fields the file sets (`config.is_decoder = True`): their default says nothing.
    stored: HashSet<String>,
    /// A base's name (unqualified) -> the classes of the file written on it.
    subclasses: HashMap<&'m str, Vec<usize>>,
    /// A class's name -> the attributes built from it only when a test holds
    /// (`self.adapter = Adapter(config) if config.add_adapter else None`): (owner, test, built when).
    built_when: HashMap<&'m str, Vec<(usize, &'m Expr, bool)>>,
    /// Of the flags its classes turn on only under a test in `__init__`
    /// (`flags_turned_on_under_a_test`), those that nothing else in the file turns on.
    turned_on_once: HashSet<&'m str>,
}

impl<'m> FileFlags<'m> {
    fn of(model: &'m FileModel) -> Self {
        let mut subclasses: HashMap<&str, Vec<usize>> = HashMap::default();
        let mut built_when: HashMap<&str, Vec<(usize, &Expr, bool)>> = HashMap::default();
        for (class, info) in model.classes.iter().enumerate() {
            for base in &info.bases {
                subclasses.entry(unqualified(base)).or_default().push(class);
            }
            for assignment in self_assignments(model, class) {
                if let Some(Expr::If(if_exp)) = assignment.value()
                    && let Some(built) = built_side(if_exp)
                    && let Expr::Call(call) = built_value(if_exp, built)
                    && let Expr::Name(built_class) = call.func.as_ref()
                {
                    built_when.entry(built_class.id.as_str()).or_default().push((class, &*if_exp.test, built));
                }
            }
        }
        FileFlags { stored: fields_stored(model), subclasses, built_when, turned_on_once: turned_on_once(model) }
    }
}

/// The flags a test in `__init__` turns on (`flags_turned_on_under_a_test`) whose store there is
/// the only place of the file that may turn them on.
fn turned_on_once<'m>(model: &'m FileModel) -> HashSet<&'m str> {
    let mut flags = (0..model.classes.len()).flat_map(|class| flags_turned_on_under_a_test(model, class)).peekable();
    if flags.peek().is_none() {
        return HashSet::default();
    }
    let turned_on = TurnedOn::of(model);
    flags.map(|(attr, _)| attr).filter(|attr| turned_on.times(attr) == Some(1)).collect()
}

/// What a class's code says about its config-derived attributes, and the defaults it reads them
/// against.
struct ClassFlags<'m, 'a> {
    model: &'m FileModel<'a>,
    /// `self.layerdrop = config.decoder_layerdrop`, `self.adapter = Adapter(config) if ... else None`.
    attributes: HashMap<String, Attribute<'a>>,
    file: &'m FileFlags<'m>,
    asked: &'m mut HashSet<String>,
}

enum Attribute<'a> {
    /// Holds the config field of this name.
    Config(String),
    /// Holds `None` unless `when` (a test in `__init__`) is true, or with `built_when` false,
    /// unless it is false.
    Built { when: &'a Expr, built_when: bool },
    /// Holds `False` unless `when` (the test of an `if` in `__init__` that turns it on) is true.
    OffUnless { when: &'a Expr },
}

/// A test's truth under the default config, and what it says in the user's words.
#[derive(Clone)]
struct Truth {
    value: bool,
    /// The test as the config would have to make it hold: `config.decoder_layerdrop > 0.0`.
    text: String,
    /// Its negation: `config.decoder_layerdrop <= 0.0`.
    negated: String,
    /// The defaults it was read against: (field, default text).
    defaults: Vec<(String, String)>,
}

impl Truth {
    /// A test on one field, with its text and its negation's.
    fn leaf(value: bool, text: String, negated: String, field: String, default: &ConfigDefault) -> Truth {
        Truth { value, text, negated, defaults: vec![(field, default.text.clone())] }
    }

    fn not(self) -> Truth {
        Truth { value: !self.value, text: self.negated, negated: self.text, defaults: self.defaults }
    }

    /// "only when `config.decoder_layerdrop > 0.0` (0.0 by default)", for a false truth.
    fn condition(&self) -> String {
        let defaults = match self.defaults.as_slice() {
            [(_, text)] => text.clone(),
            many => many.iter().map(|(name, text)| format!("`{name}` {text}")).collect::<Vec<_>>().join(", "),
        };
        format!("only when `{}` ({defaults} by default)", self.text)
    }

    /// `a and b` (`word` "and") or `a or b`; the negation by De Morgan.
    fn joined(truths: Vec<Truth>, value: bool, word: &str) -> Truth {
        let other = if word == "and" { "or" } else { "and" };
        let join = |part: fn(&Truth) -> &str, word: &str| {
            let parts: Vec<String> = truths
                .iter()
                .map(&part)
                .map(|p| if p.contains(" and ") || p.contains(" or ") { format!("({p})") } else { p.to_string() })
                .collect();
            parts.join(&format!(" {word} "))
        };
        let (text, negated) = (join(|t| &t.text, word), join(|t| &t.negated, other));
        let defaults = truths.into_iter().flat_map(|t| t.defaults).collect();
        Truth { value, text, negated, defaults }
    }
}

/// What a config-derived expression holds under the default config.
enum Read<'d> {
    Field {
        name: String,
        default: &'d ConfigDefault,
    },
    /// An attribute built only when a flag holds: the truth of "it is not `None`".
    Built(Truth),
    /// A flag turned on only when a test holds: the truth of that test.
    OffUnless(Truth),
}

impl<'m, 'a> ClassFlags<'m, 'a> {
    fn of(model: &'m FileModel<'a>, class: usize, file: &'m FileFlags<'m>, asked: &'m mut HashSet<String>) -> Self {
        let mut attributes = HashMap::default();
        let init = model.method(class, "__init__");
        let reassigned = reassigned_in_subclasses(model, file, class);
        let assignments = self_assignments(model, class);
        for assignment in assignments {
            let attr = assignment.attr.as_str();
            let once = assignments.iter().filter(|a| a.attr == attr).count() == 1;
            if !once || Some(assignment.method) != init || !assignment.top_level || reassigned.contains(attr) {
                continue;
            }
            if let Some(source) = assignment.value().and_then(attribute_source) {
                attributes.insert(attr.to_string(), source);
            }
        }
        for (attr, when) in flags_turned_on_under_a_test(model, class) {
            if !reassigned.contains(attr) && !model.named_elsewhere.contains(attr) && file.turned_on_once.contains(attr)
            {
                attributes.insert(attr.to_string(), Attribute::OffUnless { when });
            }
        }
        ClassFlags { model, attributes, file, asked }
    }

    /// The truth of `test` under the default config, when the test is one this module reads.
    /// Every part is read, even past a known answer, so that `asked` does not depend on defaults.
    fn truth(&mut self, test: &Expr, depth: usize) -> Option<Truth> {
        if depth > 8 {
            return None;
        }
        match test {
            Expr::BoolOp(bool_op) => {
                let parts: Vec<Option<Truth>> = bool_op.values.iter().map(|v| self.truth(v, depth + 1)).collect();
                let deciding = match bool_op.op {
                    BoolOp::And => false,
                    BoolOp::Or => true,
                };
                if let Some(decided) = parts.iter().flatten().find(|t| t.value == deciding) {
                    return Some(decided.clone());
                }
                let known: Option<Vec<Truth>> = parts.into_iter().collect();
                let word = if deciding { "or" } else { "and" };
                known.map(|truths| Truth::joined(truths, !deciding, word))
            }
            Expr::UnaryOp(unary) if unary.op == UnaryOp::Not => self.truth(&unary.operand, depth + 1).map(Truth::not),
            // `bool(getattr(self.config, "per_episode_seed", False))` is the flag's own truth.
            Expr::Call(call) if builtin_call(call, "bool") && call.arguments.len() == 1 => {
                self.truth(call.arguments.args.first()?, depth + 1)
            }
            Expr::Compare(compare) => self.comparison(compare, depth),
            _ => match self.read(test, depth)? {
                Read::Field { name, default } => {
                    let value = match default.value {
                        Value::None => false,
                        Value::Bool(b) => b,
                        Value::Number(n) => n != 0.0,
                        // A string's truth is not what a config test means by it: unknown.
                        Value::Str(_) => return None,
                    };
                    let text = format!("config.{name}");
                    Some(Truth::leaf(value, text.clone(), format!("not {text}"), name, default))
                }
                // `None` and `False` are false; a module or list built in its place, or the
                // value the flag is turned on to, may be either.
                Read::Built(built) | Read::OffUnless(built) => (!built.value).then_some(built),
            },
        }
    }

    /// `attr > 0.0`, `0 < attr`, `attr is None`, `attr is not None`.
    fn comparison(&mut self, compare: &ast::ExprCompare, depth: usize) -> Option<Truth> {
        let ([op], [right]) = (compare.ops.as_ref(), compare.comparators.as_ref()) else { return None };
        let left = compare.left.as_ref();
        if let Some(strings) = self.against_strings(left, *op, right, depth) {
            return Some(strings);
        }
        if matches!(op, CmpOp::Is | CmpOp::IsNot) && right.is_none_literal_expr() {
            let is_not = matches!(op, CmpOp::IsNot);
            let not_none = match self.read(left, depth)? {
                Read::Built(built) => built,
                Read::OffUnless(_) => return None,
                Read::Field { name, default } => Truth::leaf(
                    default.value != Value::None,
                    format!("config.{name} is not None"),
                    format!("config.{name} is None"),
                    name,
                    default,
                ),
            };
            return Some(if is_not { not_none } else { not_none.not() });
        }
        let (field, number_side, field_left) = match (self.number(left), self.number(right)) {
            (None, Some(n)) => (left, n, true),
            (Some(n), None) => (right, n, false),
            (None, None) => return self.against_maximum(left, *op, right, depth),
            _ => return None,
        };
        let Read::Field { name, default } = self.read(field, depth)? else { return None };
        let field_value = match default.value {
            Value::Number(n) => n,
            Value::Bool(b) => f64::from(u8::from(b)),
            _ => return None,
        };
        let (a, b) = if field_left { (field_value, number_side.0) } else { (number_side.0, field_value) };
        let (value, negated_op) = match op {
            CmpOp::Gt => (a > b, CmpOp::LtE),
            CmpOp::GtE => (a >= b, CmpOp::Lt),
            CmpOp::Lt => (a < b, CmpOp::GtE),
            CmpOp::LtE => (a <= b, CmpOp::Gt),
            CmpOp::Eq => (a == b, CmpOp::NotEq),
            CmpOp::NotEq => (a != b, CmpOp::Eq),
            _ => return None,
        };
        let field_text = format!("config.{name}");
        let (l, r) = if field_left { (&field_text, &number_side.1) } else { (&number_side.1, &field_text) };
        let (text, negated) = (format!("{l} {} {r}", op.as_str()), format!("{l} {} {r}", negated_op.as_str()));
        Some(Truth::leaf(value, text, negated, name, default))
    }

    /// `config.action_mode == "both"` (`!=`, the string on either side), or `config.action_mode in
    /// {"discrete", "both"}` (`not in`, a tuple, list or set of strings), on a field whose default
    /// is a string: a mode the default config does not select (`action_mode: str = "continuous"`).
    fn against_strings(&mut self, left: &Expr, op: CmpOp, right: &Expr, depth: usize) -> Option<Truth> {
        let (field, strings) = match op {
            CmpOp::Eq | CmpOp::NotEq => match (left, right) {
                (_, Expr::StringLiteral(string)) => (left, vec![string.value.to_str()]),
                (Expr::StringLiteral(string), _) => (right, vec![string.value.to_str()]),
                _ => return None,
            },
            CmpOp::In | CmpOp::NotIn => (left, strings_of_collection(right)?),
            _ => return None,
        };
        let equal = matches!(op, CmpOp::Eq | CmpOp::In);
        let Read::Field { name, default } = self.read(field, depth)? else { return None };
        let Value::Str(value) = &default.value else { return None };
        let among = strings.contains(&value.as_str());
        let written = &self.model.source.text[if field.range() == left.range() { right } else { left }.range()];
        let (is, is_not) = match op {
            CmpOp::Eq | CmpOp::NotEq => ("==", "!="),
            _ => ("in", "not in"),
        };
        let (text, negated) = (format!("config.{name} {is} {written}"), format!("config.{name} {is_not} {written}"));
        let leaf = Truth::leaf(among, text, negated, name, default);
        Some(if equal { leaf } else { leaf.not() })
    }

    /// `count > self.max_objects` (`>=`, or `self.max_objects < count`), the maximum a config
    /// field with a number default: the branch taken past a configured maximum handles input the
    /// model was not sized for (warn, drop, truncate), so a normal call does not take it, and the
    /// condition names the limit's default. The reverse tests (`count <= limit`) are the normal
    /// path: true. Only fields whose name says they are a maximum (`max_*`): a threshold such as
    /// `sliding_window` is crossed by ordinary input.
    fn against_maximum(&mut self, left: &Expr, op: CmpOp, right: &Expr, depth: usize) -> Option<Truth> {
        let negated_op = match op {
            CmpOp::Gt => CmpOp::LtE,
            CmpOp::GtE => CmpOp::Lt,
            CmpOp::Lt => CmpOp::GtE,
            CmpOp::LtE => CmpOp::Gt,
            _ => return None,
        };
        let (limit, limit_left) = match (self.read(left, depth), self.read(right, depth)) {
            (Some(limit), None) => (limit, true),
            (None, Some(limit)) => (limit, false),
            _ => return None,
        };
        let Read::Field { name, default } = limit else { return None };
        if !matches!(default.value, Value::Number(_)) || !says_maximum(&name) {
            return None;
        }
        let value = &self.model.source.text[if limit_left { right } else { left }.range()];
        let field = format!("config.{name}");
        let (l, r) = if limit_left { (field.as_str(), value) } else { (value, field.as_str()) };
        let (text, negated) = (format!("{l} {} {r}", op.as_str()), format!("{l} {} {r}", negated_op.as_str()));
        let past_maximum = matches!(op, CmpOp::Gt | CmpOp::GtE) != limit_left;
        Some(Truth::leaf(!past_maximum, text, negated, name, default))
    }

    /// `range(self.merger_times)` or `range(1, self.merger_times)` with the stop a config field:
    /// the loop's body runs only when the field is above the start.
    fn range_runs(&mut self, iter: &Expr) -> Option<Truth> {
        let Expr::Call(call) = iter else { return None };
        if !matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "range")
            || !call.arguments.keywords.is_empty()
        {
            return None;
        }
        let (start, stop) = match &*call.arguments.args {
            [stop] => ((0.0, "0".to_string()), stop),
            [start, stop] => (self.number(start)?, stop),
            _ => return None,
        };
        let Read::Field { name, default } = self.read(stop, 0)? else { return None };
        let Value::Number(n) = default.value else { return None };
        let field = format!("config.{name}");
        let (text, negated) = (format!("{field} > {}", start.1), format!("{field} <= {}", start.1));
        Some(Truth::leaf(n > start.0, text, negated, name, default))
    }

    /// A number literal's value and text.
    fn number(&self, expr: &Expr) -> Option<(f64, String)> {
        match literal(self.model, expr)? {
            ConfigDefault { value: Value::Number(n), text } => Some((n, text)),
            _ => None,
        }
    }

    /// What `self.attr`, `self.config.name` or `config.name` holds under the default config.
    fn read(&mut self, expr: &Expr, depth: usize) -> Option<Read<'m>> {
        let (object, attr) = attribute_read(expr)?;
        let field = if is_self(object) {
            match self.attributes.get(attr)? {
                Attribute::Config(name) => name.clone(),
                &Attribute::Built { when, built_when } => {
                    let flag = self.truth(when, depth + 1)?;
                    return Some(Read::Built(if built_when { flag } else { flag.not() }));
                }
                &Attribute::OffUnless { when } => return Some(Read::OffUnless(self.truth(when, depth + 1)?)),
            }
        } else if is_config(object) {
            attr.to_string()
        } else {
            return None;
        };
        self.asked.insert(field.clone());
        if self.file.stored.contains(&field) {
            return None;
        }
        let model: &'m FileModel<'a> = self.model;
        let default = model.config_defaults.get(&field)?;
        Some(Read::Field { name: field, default })
    }

    /// The condition under which the file builds `class`, when every place that names it
    /// builds it as `X(...) if flag else None` and the default config turns the flag off
    /// (`self.adapter = Adapter(config) if config.add_adapter else None`).
    fn built_only_when_off(&mut self, class: usize) -> Option<String> {
        let model = self.model;
        let name = model.classes[class].node.name.id.as_str();
        let sites = self.file.built_when.get(name)?;
        // The class's own `class X` line, and each site: nothing else names it.
        if word_count(&model.source.text, name) != sites.len() + 1 {
            return None;
        }
        let mut conditions = Vec::new();
        for &(owner, test, built_when) in sites {
            let mut flags = ClassFlags::of(model, owner, self.file, &mut *self.asked);
            let flag = flags.truth(test, 0)?;
            let built = if built_when { flag } else { flag.not() };
            if built.value {
                return None;
            }
            conditions.push(built.condition());
        }
        conditions.dedup();
        Some(format!("`{name}` is built {}", conditions.join(", or ")))
    }
}

/// The config fields the file assigns (`config.is_decoder = True`, `self.config.x += 1`).
fn fields_stored(model: &FileModel) -> HashSet<String> {
    struct Stores(HashSet<String>);
    impl<'a> Visitor<'a> for Stores {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            let targets: &[Expr] = match stmt {
                Stmt::Assign(assign) => &assign.targets,
                Stmt::AugAssign(assign) => std::slice::from_ref(&assign.target),
                Stmt::AnnAssign(assign) => std::slice::from_ref(&assign.target),
                _ => &[],
            };
            for target in targets {
                if let Expr::Attribute(attribute) = target
                    && is_config(&attribute.value)
                {
                    self.0.insert(attribute.attr.id.to_string());
                }
            }
            walk_stmt(self, stmt);
        }
    }
    let mut stores = Stores(HashSet::default());
    stores.visit_body(model.source.parsed.suite());
    stores.0
}

/// A value the file gives a config field: `config.action_mode = "both"`, `setattr(config,
/// "seeded", True)`, or a keyword of a call of a class (`TinyConfig(seeded=True)`: the index keeps
/// those of config classes). A field the project sets to another value than its default has no
/// default a branch can be read against (`config_defaults_of` in the index).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FieldSet {
    /// The class called, as the file names it (a class of its own, or an import's qualified
    /// name); `None` for a store on a config object.
    pub class: Option<String>,
    pub field: String,
    /// The literal given; `None` for anything else (a name, a call: any value).
    pub value: Option<ConfigDefault>,
    /// For a preset (`dict(name="small", window=4096)`, read as `Config(**preset)`), every key it
    /// gives: it sets the field only if one config class has them all (a data loader's
    /// `dict(is_training=True)` is no config's preset). Empty for the other sets.
    #[serde(default)]
    pub preset: Vec<String>,
}

/// What the file gives config fields, anywhere in it (a training script, a model). Not a test
/// file's: a test turns each mode on to cover it (`TinyConfig(seeded=True)` in
/// `test_tiny.py`), as it compiles what it checks (`compile_scope`), and says nothing of what a
/// run of the project uses.
pub fn fields_set(model: &FileModel) -> Vec<FieldSet> {
    if is_test_file(&model.source.path) {
        return Vec::new();
    }
    struct Sets<'m, 'a> {
        model: &'m FileModel<'a>,
        found: Vec<FieldSet>,
    }
    impl Sets<'_, '_> {
        fn store(&mut self, field: &str, value: Option<&Expr>) {
            let value = value.and_then(|value| literal(self.model, value));
            self.found.push(FieldSet { class: None, field: field.to_string(), value, preset: Vec::new() });
        }
    }
    impl<'b> Visitor<'b> for Sets<'_, '_> {
        fn visit_stmt(&mut self, stmt: &'b Stmt) {
            let (targets, value): (&[Expr], Option<&Expr>) = match stmt {
                Stmt::Assign(assign) => (&assign.targets, Some(&assign.value)),
                Stmt::AnnAssign(assign) => (std::slice::from_ref(&assign.target), assign.value.as_deref()),
                // `config.steps += 1`: some other value.
                Stmt::AugAssign(assign) => (std::slice::from_ref(&assign.target), None),
                _ => (&[], None),
            };
            for target in targets {
                if let Expr::Attribute(attribute) = target
                    && may_hold_config(&attribute.value)
                {
                    self.store(attribute.attr.id.as_str(), value);
                }
            }
            walk_stmt(self, stmt);
        }
        fn visit_expr(&mut self, expr: &'b Expr) {
            if let Expr::Call(call) = expr {
                if builtin_call(call, "setattr")
                    && let [object, Expr::StringLiteral(field), value] = &*call.arguments.args
                    && may_hold_config(object)
                {
                    self.store(field.value.to_str(), Some(value));
                }
                // `dataclasses.replace(config, window=64)` gives fields values, and so may a
                // preset (`dict(name="small", window=4096)`, read as `Config(**preset)`).
                if self.model.imports.refers_to(&call.func, "dataclasses.replace") {
                    for keyword in &call.arguments.keywords {
                        let Some(field) = &keyword.arg else { continue };
                        self.store(field.as_str(), Some(&keyword.value));
                    }
                }
                if builtin_call(call, "dict") {
                    let keys: Vec<String> =
                        call.arguments.keywords.iter().filter_map(|k| Some(k.arg.as_ref()?.to_string())).collect();
                    for keyword in &call.arguments.keywords {
                        let Some(field) = &keyword.arg else { continue };
                        let value = literal(self.model, &keyword.value);
                        self.found.push(FieldSet {
                            class: None,
                            field: field.to_string(),
                            value,
                            preset: keys.clone(),
                        });
                    }
                }
                if let Some(class) = class_called(self.model, call) {
                    for keyword in &call.arguments.keywords {
                        let Some(field) = &keyword.arg else { continue };
                        let value = literal(self.model, &keyword.value);
                        self.found.push(FieldSet {
                            class: Some(class.clone()),
                            field: field.to_string(),
                            value,
                            preset: Vec::new(),
                        });
                    }
                }
            }
            walk_expr(self, expr);
        }
    }
    let mut sets = Sets { model, found: Vec::new() };
    sets.visit_body(model.source.parsed.suite());
    sets.found
}

/// The class a call builds, as the index finds it: `TinyConfig(...)` of a class the file defines
/// (its name) or imports (the import's qualified name); `None` for other calls and calls with no
/// keywords.
fn class_called(model: &FileModel, call: &ast::ExprCall) -> Option<String> {
    let Expr::Name(name) = call.func.as_ref() else { return None };
    if call.arguments.keywords.iter().all(|keyword| keyword.arg.is_none()) {
        return None;
    }
    let name = name.id.as_str();
    if model.classes.iter().any(|class| class.qualname == name) {
        return Some(name.to_string());
    }
    model.imports.get(name).map(str::to_string)
}

/// A config field that names a maximum: `max_num_objects`, `num_max_tokens`.
fn says_maximum(field: &str) -> bool {
    field.split('_').any(|part| matches!(part, "max" | "maximum"))
}

/// `x.name`, or `getattr(x, "name", default)`: the object and the attribute it reads. The class's
/// default is what a `getattr` on a config gives (its own default counts only where the class has
/// no such field, and then the field has no default here either).
fn attribute_read(expr: &Expr) -> Option<(&Expr, &str)> {
    match expr {
        Expr::Attribute(attribute) => Some((&attribute.value, attribute.attr.id.as_str())),
        Expr::Call(call) if builtin_call(call, "getattr") && call.arguments.keywords.is_empty() => {
            match &*call.arguments.args {
                [object, Expr::StringLiteral(name)] | [object, Expr::StringLiteral(name), _] => {
                    Some((object, name.value.to_str()))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// A call of the builtin `name` (`bool(x)`, `getattr(x, "f")`), with no starred arguments.
fn builtin_call(call: &ast::ExprCall, name: &str) -> bool {
    matches!(call.func.as_ref(), Expr::Name(func) if func.id.as_str() == name)
        && !call.arguments.args.iter().any(Expr::is_starred_expr)
        && call.arguments.keywords.iter().all(|keyword| keyword.arg.is_some())
}

/// The strings of a tuple, list or set of string literals: `{"discrete", "both"}`.
fn strings_of_collection(expr: &Expr) -> Option<Vec<&str>> {
    let elements: &[Expr] = match expr {
        Expr::Tuple(tuple) => &tuple.elts,
        Expr::List(list) => &list.elts,
        Expr::Set(set) => &set.elts,
        _ => return None,
    };
    let strings: Option<Vec<&str>> = elements
        .iter()
        .map(|element| match element {
            Expr::StringLiteral(string) => Some(string.value.to_str()),
            _ => None,
        })
        .collect();
    strings.filter(|strings| !strings.is_empty())
}

/// `config.name` or `self.config.name`'s object: a name ending in `config`, or `self.config`.
fn is_config(expr: &Expr) -> bool {
    match expr {
        Expr::Name(name) => name.id.as_str() == "config" || name.id.ends_with("_config"),
        Expr::Attribute(attribute) => is_self(&attribute.value) && attribute.attr.id.as_str() == "config",
        _ => false,
    }
}

/// Where a store may change a config field: a config as the model code reads it (`is_config`), or
/// as scripts and subclasses name theirs (`cfg.window = 64`). Wider than a read on purpose: a
/// store missed leaves a default that does not hold.
fn may_hold_config(expr: &Expr) -> bool {
    let cfg = |name: &str| matches!(name, "cfg" | "conf") || name.ends_with("_cfg");
    is_config(expr)
        || match expr {
            Expr::Name(name) => cfg(name.id.as_str()),
            Expr::Attribute(attribute) => is_self(&attribute.value) && cfg(attribute.attr.id.as_str()),
            _ => false,
        }
}

/// What an assignment in `__init__` makes of an attribute, when it is read from the config.
fn attribute_source(value: &Expr) -> Option<Attribute<'_>> {
    match value {
        Expr::Attribute(_) | Expr::Call(_) => {
            let (object, attr) = attribute_read(value)?;
            is_config(object).then(|| Attribute::Config(attr.to_string()))
        }
        Expr::If(if_exp) => {
            let built_when = built_side(if_exp)?;
            Some(Attribute::Built { when: &if_exp.test, built_when })
        }
        _ => None,
    }
}

/// The attributes `__init__` of `class` sets `False` and turns on only under one of its `if`s,
/// with that `if`'s test: `self.windowed = False`, then `if config.window is not None:
/// self.windowed = ...` (see the module's doc). What the class alone says: the file's other
/// stores and the other files' names are asked apart.
fn flags_turned_on_under_a_test<'m, 'a>(model: &'m FileModel<'a>, class: usize) -> Vec<(&'m str, &'a Expr)> {
    let Some(init) = model.method(class, "__init__") else { return Vec::new() };
    let FunctionNode::Def(def) = model.function(init).node else { return Vec::new() };
    let assignments = self_assignments(model, class);
    let mut stores: HashMap<&str, Vec<&SelfAssignment>> = HashMap::default();
    for assignment in assignments {
        stores.entry(assignment.attr.as_str()).or_default().push(assignment);
    }
    let mut found = Vec::new();
    for (attr, stores) in stores {
        let [off, on] = stores.as_slice() else { continue };
        let set_false = matches!(off.value(), Some(Expr::BooleanLiteral(b)) if !b.value);
        // The store that turns it on is the one `turned_on` counts (not `self.windowed = None`).
        if !set_false || off.method != init || !off.top_level || on.method != init || !turns_on(on.stmt) {
            continue;
        }
        let branch = def.body.iter().find(|stmt| stmt.range().contains_range(on.stmt.range()));
        if let Some(Stmt::If(branch)) = branch
            && body_range(&branch.body).is_some_and(|body| body.contains_range(on.stmt.range()))
            && off.stmt.end() <= branch.start()
        {
            found.push((attr, &*branch.test));
        }
    }
    // In the file's order of names, not the map's: the index keeps them.
    found.sort_unstable_by_key(|(attr, _)| *attr);
    found
}

/// The names of the flags the file's classes turn on only under a test in `__init__`: the file
/// asks the index whether another file names them (`FileSummary::names_asked`).
pub fn flags_turned_on_in_init(model: &FileModel) -> Vec<String> {
    let flags = (0..model.classes.len()).flat_map(|class| flags_turned_on_under_a_test(model, class));
    flags.map(|(attr, _)| attr.to_string()).collect()
}

/// Which side of `a if test else b` builds something while the other is `None`: `true` for `a`.
fn built_side(if_exp: &ast::ExprIf) -> Option<bool> {
    match (if_exp.body.is_none_literal_expr(), if_exp.orelse.is_none_literal_expr()) {
        (false, true) => Some(true),
        (true, false) => Some(false),
        _ => None,
    }
}

fn built_value(if_exp: &ast::ExprIf, built_when: bool) -> &Expr {
    if built_when { &if_exp.body } else { &if_exp.orelse }
}

/// Attributes that a subclass in the file assigns too: their value in `class` is not the only one.
fn reassigned_in_subclasses(model: &FileModel, file: &FileFlags, class: usize) -> HashSet<String> {
    let name = model.classes[class].node.name.id.as_str();
    let subclasses = file.subclasses.get(name).into_iter().flatten().copied();
    subclasses
        .filter(|&other| other != class)
        .flat_map(|other| self_assignments(model, other).iter().map(|a| a.attr.clone()))
        .collect()
}

/// How many times `word` stands as a whole identifier in `text`.
fn word_count(text: &str, word: &str) -> usize {
    identifier_occurrences(text, word).count()
}

/// The walk of a class's methods that marks the findings in branches the default config turns off.
struct OffBranches<'w, 'm, 'a> {
    flags: ClassFlags<'m, 'a>,
    /// The outermost condition wins: the walk marks outer branches first.
    conditions: &'w mut FindingConditions,
}

impl OffBranches<'_, '_, '_> {
    fn mark(&mut self, range: TextRange, condition: &str) {
        self.conditions.mark(range, condition);
    }

    fn touches(&self, range: TextRange) -> bool {
        self.conditions.touches(range)
    }

    /// Marks the clauses of an `if` that the default config turns off: one whose test is false,
    /// and every one after a test that is true.
    fn mark_if(&mut self, if_stmt: &ast::StmtIf) {
        let mut earlier_true: Option<Truth> = None;
        let first = self.flags.truth(&if_stmt.test, 0);
        self.mark_clause(if_stmt.range(), &if_stmt.body, first, &mut earlier_true);
        for clause in &if_stmt.elif_else_clauses {
            let test = clause.test.as_ref().and_then(|test| self.flags.truth(test, 0));
            self.mark_clause(clause.range(), &clause.body, test, &mut earlier_true);
        }
    }

    /// A clause after a true test is off whole (its own test too); one whose test is false, in
    /// its body.
    fn mark_clause(&mut self, whole: TextRange, body: &[Stmt], test: Option<Truth>, earlier_true: &mut Option<Truth>) {
        if let Some(earlier) = earlier_true.clone() {
            self.mark(whole, &earlier.not().condition());
        } else if let Some(test) = test {
            if test.value {
                *earlier_true = Some(test);
            } else if let Some(body) = body_range(body) {
                self.mark(body, &test.condition());
            }
        }
    }
}

impl OffBranches<'_, '_, '_> {
    /// In `a and b`, `b` runs only when `a` holds: off after a part the default config makes
    /// false (for `or`, true). When that is the first part, all the rest is off, and a finding
    /// on the whole test is about the rest.
    fn mark_short_circuit(&mut self, bool_op: &ast::ExprBoolOp) {
        let stops = matches!(bool_op.op, BoolOp::Or);
        for (at, value) in bool_op.values.iter().enumerate() {
            let Some(truth) = self.flags.truth(value, 0) else { continue };
            if truth.value == stops {
                let needed = if stops { truth.not() } else { truth };
                let rest = &bool_op.values[at + 1..];
                let off = match (rest.first(), rest.last()) {
                    _ if at == 0 => Some(bool_op.range()),
                    (Some(first), Some(last)) => Some(first.range().cover(last.range())),
                    _ => None,
                };
                if let Some(off) = off {
                    self.mark(off, &needed.condition());
                }
                return;
            }
        }
    }
}

impl<'b> Visitor<'b> for OffBranches<'_, '_, '_> {
    /// After `if <test>: return ...` on a test the default config makes true
    /// (`if self.config.max_positions: return ...`), the rest of the body is off.
    fn visit_body(&mut self, body: &'b [Stmt]) {
        for (at, stmt) in body.iter().enumerate() {
            self.visit_stmt(stmt);
            if let Some(test) = early_exit_test(stmt)
                && let Some(rest) = rest_range(body, at)
                && self.touches(rest)
                && let Some(truth) = self.flags.truth(test, 0)
                && truth.value
            {
                self.mark(rest, &truth.not().condition());
            }
        }
    }

    fn visit_stmt(&mut self, stmt: &'b Stmt) {
        if !self.touches(stmt.range()) {
            return;
        }
        if let Stmt::If(if_stmt) = stmt {
            self.mark_if(if_stmt);
        }
        if let Stmt::For(for_stmt) = stmt
            && let Some(runs) = self.flags.range_runs(&for_stmt.iter)
            && !runs.value
            && let Some(body) = body_range(&for_stmt.body)
        {
            self.mark(body, &runs.condition());
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'b Expr) {
        if !self.touches(expr.range()) {
            return;
        }
        if let Expr::If(if_exp) = expr
            && let Some(test) = self.flags.truth(&if_exp.test, 0)
        {
            let (off, condition) =
                if test.value { (if_exp.orelse.range(), test.not()) } else { (if_exp.body.range(), test) };
            self.mark(off, &condition.condition());
        }
        if let Expr::BoolOp(bool_op) = expr {
            self.mark_short_circuit(bool_op);
        }
        walk_expr(self, expr);
    }
}

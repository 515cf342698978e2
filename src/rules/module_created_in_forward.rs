//! TCF206 module-created-in-forward: compiled code that builds an `nn.Module` — assigned to `self`
//! (`self.pad = nn.ZeroPad2d(1)`) or as a local with parameters (`proj = nn.Linear(d, d)`).
//! The new attribute recompiles the frame once; parameters built under compile break the graph
//! (GB0264), and a layer built on every call starts from untrained weights every time. The fix
//! moves a `self.` construction to the end of `__init__` when its arguments are known there.
//! A module built in a branch that turns itself off (`if self.pad is None: self.pad = ...`,
//! `if self.expand: ...; self.expand = False`) is built once, and a local layer stored on `self`
//! in the same function (`new = nn.Embedding(...)`; `self.bias = new`) is kept and trained: their
//! messages say so (measured under torch 2.15: one graph break and one recompile, on the first call).

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_source_file::LineRanges;
use ruff_text_size::{Ranged, TextRange};

use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::text::{indentation, insert_line_after, stands_alone};
use crate::fix::{Edit, Fix, Safety};
use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_all};
use crate::model::file::{FileModel, FunctionNode};
use crate::model::file::{init_method, is_module_class, method_body, self_assignments};
use crate::model::file::module::is_self;
use crate::model::compiled::reach::describe;
use crate::rules::check::{Function, FunctionHooks, Hooks};
use crate::rules::rule::{Category, Rule};

pub static RULE: Rule = Rule {
    code: "TCF206",
    name: "module-created-in-forward",
    summary: "create modules in __init__, not in forward",
    explanation: include_str!("../../codemods/module-created-in-forward/README.md"),
    hazard: "Compiled code builds an nn.Module (assigned to self, or a local layer with parameters).",
    why: "A module attribute that appears under compile recompiles the frame, building parameters breaks the \
              graph, and a layer built on every call computes with new, untrained weights.",
    category: Category::Recompile,
    fixes: &[Safety::Safe, Safety::Unsafe],
    mentions: &[],
    backend_ops: &[],
};

pub const HOOKS: Hooks = Hooks::Function(start);

/// torch.nn modules with no parameters, no buffers that forward relies on and no train/eval
/// behaviour: building one in `__init__` instead of on every call changes nothing.
const STATELESS: &[&str] = &[
    "Identity",
    "ReLU",
    "ReLU6",
    "GELU",
    "SiLU",
    "Sigmoid",
    "Tanh",
    "Softmax",
    "Softmax2d",
    "LogSoftmax",
    "Softmin",
    "Softplus",
    "Softsign",
    "LeakyReLU",
    "ELU",
    "SELU",
    "CELU",
    "Mish",
    "Hardswish",
    "Hardsigmoid",
    "Hardtanh",
    "Hardshrink",
    "Softshrink",
    "Tanhshrink",
    "Threshold",
    "GLU",
    "LogSigmoid",
    "Flatten",
    "Unflatten",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "Upsample",
    "UpsamplingNearest2d",
    "UpsamplingBilinear2d",
    "PixelShuffle",
    "PixelUnshuffle",
    "ChannelShuffle",
    "Fold",
    "Unfold",
    "CosineSimilarity",
    "PairwiseDistance",
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "CrossEntropyLoss",
    "NLLLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "KLDivLoss",
    "CosineEmbeddingLoss",
    "MarginRankingLoss",
    "SoftMarginLoss",
    "MultiLabelSoftMarginLoss",
    "TripletMarginLoss",
    "CTCLoss",
    "GaussianNLLLoss",
    "PoissonNLLLoss",
    "HingeEmbeddingLoss",
];

/// Stateless, but `model.eval()` turns them off: one built in forward is always in training mode.
const DROPOUT: &[&str] = &["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"];

/// torch.nn modules that own parameters: built in forward they start untrained on every call.
const WITH_PARAMETERS: &[&str] = &[
    "Linear",
    "Bilinear",
    "LazyLinear",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "Embedding",
    "EmbeddingBag",
    "LayerNorm",
    "RMSNorm",
    "GroupNorm",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "SyncBatchNorm",
    "MultiheadAttention",
    "LSTM",
    "GRU",
    "RNN",
    "LSTMCell",
    "GRUCell",
    "RNNCell",
    "PReLU",
    "Transformer",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerDecoder",
];

/// Tensors, not modules: `nn.Parameter(...)`, `nn.Buffer(...)` (a buffer regrown in forward is
/// TCF201's or TCF207's business).
const NOT_MODULES: &[&str] = &["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"];

/// What the module built is, as far as the name tells.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stateless,
    Dropout,
    WithParameters,
    /// A project class, or a torch.nn class not listed: it may hold parameters.
    Unknown,
    NotAModule,
}

struct Construction<'a> {
    function: usize,
    stmt: &'a Stmt,
    call: &'a ast::ExprCall,
    /// The `self.` attribute it is assigned to, or `None` for a local.
    attribute: Option<String>,
    kind: Kind,
    /// The value is the constructor call itself (not `nn.Linear(...).to(device)`).
    direct: bool,
    /// The class as written (`nn.ZeroPad2d`).
    class: String,
    site: Site,
    /// A local later stored on `self` in the same function: the attribute.
    stored_in: Option<String>,
    /// Built in a branch that turns itself off: the branch's test, as written.
    once_under: Option<String>,
}

/// The modules built in the compiled code of a module's methods: assigned to `self`, or locals
/// that own parameters (a local parameter-free module costs nothing: measured, no break, no
/// recompile).
fn start<'c, 'a>(function: &'c Function<'c, 'a>) -> Option<Box<dyn FunctionHooks<'a> + 'c>> {
    let model = function.model();
    let in_module = model.self_class(function.id).is_some_and(|class| model.classes[class].is_module);
    let constructions = Constructions { function, found: Vec::new(), once_branches: Vec::new() };
    in_module.then(|| Box::new(constructions) as Box<dyn FunctionHooks<'a> + 'c>)
}

struct Constructions<'c, 'a> {
    function: &'c Function<'c, 'a>,
    found: Vec<Construction<'a>>,
    /// The bodies of the branches seen so far that turn themselves off, with their tests.
    once_branches: Vec<(TextRange, &'a Expr)>,
}

impl<'a> FunctionHooks<'a> for Constructions<'_, 'a> {
    fn stmt(&mut self, stmt: &'a Stmt, site: Site) {
        let model = self.function.model();
        if let Stmt::If(if_stmt) = stmt {
            if let (Some(first), Some(last)) = (if_stmt.body.first(), if_stmt.body.last())
                && turns_itself_off(&if_stmt.test, &if_stmt.body) {
                    self.once_branches.push((TextRange::new(first.start(), last.end()), &if_stmt.test));
                }
            return;
        }
        let Stmt::Assign(assign) = stmt else { return };
        let [target] = assign.targets.as_slice() else { return };
        // `self.bias = new_bias`: a local layer built here is kept.
        if let (Expr::Attribute(attr), Expr::Name(value)) = (target, assign.value.as_ref()) {
            if is_self(&attr.value) {
                let built_here = self.found.iter_mut().rev().find(|c| {
                    c.attribute.is_none()
                        && matches!(c.stmt, Stmt::Assign(a) if matches!(a.targets.as_slice(), [Expr::Name(n)] if n.id == value.id))
                });
                if let Some(construction) = built_here {
                    construction.stored_in = Some(attr.attr.id.to_string());
                }
            }
            return;
        }
        let Some(call) = module_call(model, &assign.value) else { return };
        let (class, kind) = classify(model, &call.func);
        if kind == Kind::NotAModule {
            return;
        }
        let attribute = match target {
            Expr::Attribute(attr) if is_self(&attr.value) => Some(attr.attr.id.to_string()),
            Expr::Name(_) if kind == Kind::WithParameters => None,
            _ => return,
        };
        let direct = matches!(assign.value.as_ref(), Expr::Call(value) if std::ptr::eq(value, call));
        let function = self.function.id;
        let once_under = self
            .once_branches
            .iter()
            .rev()
            .find(|(body, _)| body.contains_range(stmt.range()))
            .map(|(_, test)| model.source.text[test.range()].to_string());
        self.found.push(Construction {
            function,
            stmt,
            call,
            attribute,
            kind,
            direct,
            class,
            site,
            stored_in: None,
            once_under,
        });
    }

    fn finish(self: Box<Self>, diagnostics: &mut Vec<Diagnostic>) {
        let model = self.function.model();
        diagnostics.extend(self.found.iter().map(|construction| report(model, construction)));
    }
}

/// `if self.pad is None:` whose body assigns `self.pad`, or `if self.expand and ...:` whose body
/// assigns `self.expand`: the branch changes what its test reads, so it runs once. The test is
/// read only for a body that sets attributes of `self` (this runs at every `if` of a module's
/// compiled code; few of them set any).
fn turns_itself_off(test: &Expr, body: &[Stmt]) -> bool {
    let assigned: Vec<&str> = body
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::Assign(assign) => Some(assign.targets.iter()),
            _ => None,
        })
        .flatten()
        .filter_map(|target| match target {
            Expr::Attribute(attr) if is_self(&attr.value) => Some(attr.attr.id.as_str()),
            _ => None,
        })
        .collect();
    if assigned.is_empty() {
        return false;
    }
    let mut read = NameReads::default();
    read.visit_expr(test);
    read.self_attributes.iter().any(|attribute| assigned.contains(&attribute.as_str()))
}

fn report(model: &FileModel, construction: &Construction) -> Diagnostic {
    let place = describe(model, construction.function);
    let class = &construction.class;
    if let (None, Some(stored)) = (&construction.attribute, &construction.stored_in) {
        return report_stored_local(construction, &place, stored);
    }
    let Some(attribute) = &construction.attribute else {
        let message = format!(
            "`{class}(...)` in {place} builds a layer with new parameters on every call: building parameters breaks \
             the graph (GB0264), and unless they are copied from trained ones they are untrained each time"
        );
        return Diagnostic::new(&RULE, construction.call.range(), message).without_fix(format!(
            "create it once in `__init__` as an attribute (`self.<name> = {class}(...)`) so it is trained and saved"
        ));
    };
    let (severity, cost) = match construction.kind {
        Kind::WithParameters if construction.once_under.is_some() => (
            Severity::Medium,
            format!(
                "it is built once (under `if {}:`, which the branch turns off): on that call, building its \
                 parameters breaks the graph (GB0264) and the new attribute recompiles the frame once",
                construction.once_under.as_deref().unwrap_or_default()
            ),
        ),
        Kind::Stateless | Kind::Dropout => {
            (Severity::Medium, "the new attribute recompiles the frame once".to_string())
        }
        Kind::WithParameters => (
            Severity::High,
            "building its parameters breaks the graph (GB0264), each build starts from untrained weights, and the \
             new attribute recompiles the frame"
                .to_string(),
        ),
        Kind::Unknown | Kind::NotAModule => (
            Severity::Medium,
            "the new attribute recompiles the frame once, and any parameters it has are built anew, untrained, each \
             time"
                .to_string(),
        ),
    };
    let message = format!("`self.{attribute} = {class}(...)` in {place} builds a module under compile: {cost}");
    let diagnostic = Diagnostic::new(&RULE, construction.stmt.range(), message).with_severity(severity);
    match move_to_init(model, construction, attribute) {
        Ok(fix) => diagnostic.with_fix(fix),
        Err(reason) => diagnostic.without_fix(reason),
    }
}

/// A local layer that the function then stores on `self`: it is kept and trained, not lost.
fn report_stored_local(construction: &Construction, place: &str, stored: &str) -> Diagnostic {
    let class = &construction.class;
    let (severity, when) = match &construction.once_under {
        Some(test) => (Severity::Medium, format!("once (under `if {test}:`, which the branch turns off)")),
        None => (Severity::High, "on every call".to_string()),
    };
    let message = format!(
        "`{class}(...)` in {place} builds a layer {when} and stores it in `self.{stored}`: building parameters under \
         compile breaks the graph (GB0264), and the replaced attribute recompiles the frame"
    );
    Diagnostic::new(&RULE, construction.call.range(), message).with_severity(severity).without_fix(format!(
        "build it before compiling (in `__init__`, or where the weights are loaded) and assign `self.{stored}` there"
    ))
}

/// `nn.Linear(...)`, or `nn.Linear(...).to(x.device)`: the constructor call.
fn module_call<'a>(model: &FileModel, value: &'a Expr) -> Option<&'a ast::ExprCall> {
    let Expr::Call(call) = value else { return None };
    if is_module_class(model, &call.func) {
        return Some(call);
    }
    match call.func.as_ref() {
        Expr::Attribute(method)
            if matches!(method.attr.id.as_str(), "to" | "cuda" | "cpu" | "type" | "half" | "float") =>
        {
            module_call(model, &method.value)
        }
        _ => None,
    }
}

fn classify(model: &FileModel, func: &Expr) -> (String, Kind) {
    let written = model.source.text[func.range()].to_string();
    let qualified = model.imports.qualified_name(func).unwrap_or_default();
    let Some(name) =
        qualified.strip_prefix("torch.nn.").filter(|name| !name.contains('.') || name.starts_with("modules."))
    else {
        return (written, Kind::Unknown);
    };
    let name = name.rsplit('.').next().unwrap_or(name);
    if NOT_MODULES.contains(&name) {
        return (written, Kind::NotAModule);
    }
    let kind = if STATELESS.contains(&name) {
        Kind::Stateless
    } else if DROPOUT.contains(&name) {
        Kind::Dropout
    } else if WITH_PARAMETERS.contains(&name) {
        Kind::WithParameters
    } else {
        Kind::Unknown
    };
    (written, kind)
}

/// Moves `self.<attribute> = <module>(...)` to the end of `__init__`.
fn move_to_init(model: &FileModel, construction: &Construction, attribute: &str) -> Result<Fix, String> {
    let text = &model.source.text;
    let stmt = construction.stmt;
    let class = model.self_class(construction.function).ok_or("not a method")?;
    let init = init_method(model, class).ok_or("the class has no `__init__` to create it in")?;
    let body = method_body(model, construction.function);
    if !body.iter().any(|s| std::ptr::eq(s, stmt)) || construction.site.in_branch || construction.site.in_loop {
        return Err("it is built under a condition or in a loop: create it in `__init__` by hand".to_string());
    }
    if body.len() < 2 || !stands_alone(text, stmt.range()) {
        return Err("the statement does not stand on its own lines: move it to `__init__` by hand".to_string());
    }
    if !construction.direct {
        return Err(
            "it is moved to a device in forward (`.to(...)`): build it in `__init__`; `model.to()` then moves it"
                .to_string(),
        );
    }
    let assigned_elsewhere = self_assignments(model, class)
        .iter()
        .any(|a| a.attr == attribute && a.method != init && !std::ptr::eq(a.stmt, stmt));
    if assigned_elsewhere {
        return Err(format!("`self.{attribute}` is assigned in other methods too: move it by hand"));
    }
    if let Some(name) = unknown_in_init(model, construction.function, init, construction.call) {
        return Err(format!("its arguments use `{name}`, which `__init__` does not have: build it there by hand"));
    }
    let init_body = method_body(model, init);
    let (Some(first), Some(last)) = (init_body.first(), init_body.last()) else {
        return Err("`__init__` is empty".to_string());
    };
    if !stands_alone(text, first.range())
        || !stands_alone(text, last.range())
        || matches!(last, Stmt::Return(_) | Stmt::Raise(_))
    {
        return Err("`__init__` ends in a return or shares its lines with other code: move it by hand".to_string());
    }
    let line = &text[stmt.range()];
    let insert = insert_line_after(text, last.range(), indentation(text, first.start()), line);
    let delete = Edit::replace(TextRange::new(text.line_start(stmt.start()), text.full_line_end(stmt.end())), "");
    let title = format!("Create `self.{attribute}` once, at the end of `__init__`");
    Ok(match construction.kind {
        Kind::Stateless => Fix::new(title, Safety::Safe, vec![insert, delete]),
        Kind::Dropout => Fix::new(
            format!("{title} (unsafe: it now follows `model.eval()`, where it was always in training mode)"),
            Safety::Unsafe,
            vec![insert, delete],
        ),
        Kind::WithParameters | Kind::Unknown | Kind::NotAModule => Fix::new(
            format!(
                "{title} (unsafe: any parameters it has are now built once, trained, and saved in `state_dict`, \
                 where every call built new ones)"
            ),
            Safety::Unsafe,
            vec![insert, delete],
        ),
    })
}

/// The first name the construction's arguments read that `__init__` does not have with the same
/// meaning: a local or parameter of the function it sits in, or a name `__init__` lacks.
/// `self.<attr>` is fine when `__init__` sets it and no other method changes it.
fn unknown_in_init(model: &FileModel, function: usize, init: usize, call: &ast::ExprCall) -> Option<String> {
    let function_names = bound_names(model, function);
    let init_names = bound_names(model, init);
    let class = model.function(init).class?;
    let assignments = self_assignments(model, class);
    let fixed_attribute = |attr: &str| {
        assignments.iter().any(|a| a.attr == attr && a.method == init)
            && assignments.iter().all(|a| a.attr != attr || a.method == init)
    };
    let mut reads = NameReads::default();
    for arg in call.arguments.args.iter().chain(call.arguments.keywords.iter().map(|k| &k.value)) {
        reads.visit_expr(arg);
    }
    let module_level = |name: &str| model.imports.get(name).is_some() || defined_at_module_level(model, name);
    for name in reads.names {
        let known = if function_names.contains(&name) {
            false
        } else {
            init_names.contains(&name) || module_level(&name) || is_builtin(&name)
        };
        if !known {
            return Some(name);
        }
    }
    reads.self_attributes.into_iter().find(|attr| !fixed_attribute(attr)).map(|attr| format!("self.{attr}"))
}

fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "int"
            | "float"
            | "bool"
            | "max"
            | "min"
            | "round"
            | "len"
            | "tuple"
            | "list"
            | "abs"
            | "True"
            | "False"
            | "None"
    )
}

fn defined_at_module_level(model: &FileModel, name: &str) -> bool {
    model.source.parsed.suite().iter().any(|stmt| match stmt {
        Stmt::Assign(assign) => assign.targets.iter().any(|t| matches!(t, Expr::Name(n) if n.id.as_str() == name)),
        Stmt::AnnAssign(assign) => matches!(assign.target.as_ref(), Expr::Name(n) if n.id.as_str() == name),
        Stmt::FunctionDef(def) => def.name.id.as_str() == name,
        Stmt::ClassDef(class) => class.name.id.as_str() == name,
        _ => false,
    })
}

/// Parameters and assigned names of a function.
fn bound_names(model: &FileModel, function: usize) -> Vec<String> {
    struct Finder(Vec<String>);
    // A visitor of its own: all of a function's code, `__init__`'s included, read once per finding.
    impl<'a> CompiledCodeVisitor<'a> for Finder {
        fn expr(&mut self, expr: &'a Expr, _site: Site) -> bool {
            if let Expr::Name(name) = expr
                && name.ctx == ExprContext::Store {
                    self.0.push(name.id.to_string());
                }
            true
        }
    }
    let node = model.function(function).node;
    let mut finder = Finder(Vec::new());
    if let Some(parameters) = node.parameters() {
        finder.0.extend(parameters.iter().map(|p| p.name().id.to_string()));
    }
    if let FunctionNode::Def(_) = node {
        visit_all(node.body(), &mut finder);
    }
    finder.0
}

#[derive(Default)]
struct NameReads {
    names: Vec<String>,
    self_attributes: Vec<String>,
}

// A visitor of its own: a search of one constructor call's arguments, asked when the call is judged.
impl<'a> Visitor<'a> for NameReads {
    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Attribute(attr) if is_self(&attr.value) => self.self_attributes.push(attr.attr.id.to_string()),
            Expr::Name(name) if name.id.as_str() != "self" => self.names.push(name.id.to_string()),
            Expr::Name(_) => {}
            Expr::Lambda(_) => self.names.push("<lambda>".to_string()),
            _ => walk_expr(self, expr),
        }
    }
}

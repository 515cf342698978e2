//! Unannotated inputs of compiled entry points that are presumed tensors.
//!
//! The positional parameters of an `nn.Module`'s `forward` (and of a function passed to
//! `torch.compile`) hold tensors in the overwhelming majority of real code, annotated or not:
//! `def forward(self, x)` takes a tensor. Such a parameter is presumed a tensor unless the code says
//! otherwise:
//! - it has a default (`mask=None`, `scale=1.0`, `return_dict=False`): an option, not an input;
//! - its name says it is not tensor data (`return_dict`, `output_attentions`, `height`, `H`,
//!   `layer_type`, `past_key_values`, `*_kwargs`...); a name that ends like tensor data does
//!   (`text_embeds`, `cache_position`, `token_type_ids`, `group_mask`) unless it is a flag or a
//!   count (`output_hidden_states`, `num_labels`). A name is only a guess: the code's own use
//!   decides over it, so `idx.max()` or `idx.shape` (what only a tensor has) keeps `idx` a tensor;
//! - the function handles it as a Python object: `isinstance(p, ...)`, `len(p)`, `for _ in p`,
//!   `p.items()`, `p.append(...)`, `p["key"]`, `p == "text"`, `range(p)`, `p(...)`, `*p`, `**p`,
//!   unpacking `a, b = p`, an attribute a tensor does not have (`p.pixel_values`), or a slice
//!   bound (`cache[:, start_pos : start_pos + n]`: a tensor there would be read back as a number).

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, Expr, Stmt};

use ruff_text_size::{Ranged, TextRange};

use crate::model::file::module::is_entry_point;
use crate::model::file::{FileModel, FunctionNode};
/// `enumerate(p)`, `zip(p, q)`, `reversed(p)`: walks its arguments like lists.
fn is_pairing(call: &ast::ExprCall) -> bool {
    matches!(call.func.as_ref(), Expr::Name(f) if matches!(f.id.as_str(), "enumerate" | "zip" | "reversed"))
}

/// The parameters of `function` presumed tensors: none unless it is a compiled entry point.
pub fn presumed_tensors(model: &FileModel, function: usize) -> HashSet<String> {
    let f = model.function(function);
    // `forward`, and timm's `forward_features` / `forward_head` / `forward_intermediates`.
    let is_entry = is_entry_point(&f.name) && f.class.is_some_and(|class| model.classes[class].is_module);
    let FunctionNode::Def(def) = f.node else { return HashSet::default() };
    if !(is_entry || f.compiled) {
        return HashSet::default();
    }
    let parameters = &def.parameters;
    let positional = parameters.posonlyargs.iter().chain(&parameters.args);
    // A method's first parameter is `self` (or `cls`).
    let skip = usize::from(f.class.is_some());
    let unannotated: Vec<String> = positional
        .skip(skip)
        .filter(|p| p.default.is_none() && p.parameter.annotation.is_none())
        .map(|p| p.parameter.name.id.to_string())
        .collect();
    let named_python: HashSet<String> = unannotated.iter().filter(|name| names_python_value(name)).cloned().collect();
    let used_as_tensor =
        if named_python.is_empty() { HashSet::default() } else { tensor_uses(&def.body, &named_python) };
    let candidates: HashSet<String> =
        unannotated.into_iter().filter(|name| !named_python.contains(name) || used_as_tensor.contains(name)).collect();
    if candidates.is_empty() {
        return candidates;
    }
    let mut uses = PythonUses { candidates: &candidates, found: HashSet::default(), callees: HashSet::default() };
    uses.visit_body(&def.body);
    let found = uses.found;
    candidates.into_iter().filter(|name| !found.contains(name)).collect()
}

/// Words of a parameter name that say it holds a size, an option or an object, not tensor data.
const PYTHON_VALUE_WORDS: &[&str] = &[
    "size",
    "sizes",
    "shape",
    "shapes",
    "height",
    "width",
    "dim",
    "dims",
    "dimensions",
    "len",
    "length",
    "num",
    "type",
    "mode",
    "config",
    "cfg",
    "kwargs",
    "args",
    "dict",
    "list",
    "device",
    "dtype",
    "idx",
    "group",
    "cache",
    "layers",
    "fn",
    "func",
    "callback",
    "name",
    "text",
    "prompt",
    "path",
    "tokenizer",
    "processor",
];

/// Last words of a name that say it is tensor data whatever comes before: `token_type_ids`,
/// `group_mask`, `text_embeds`, `cache_position`, `pixel_values`, `image_features`.
const TENSOR_LAST_WORDS: &[&str] =
    &["ids", "mask", "masks", "embeds", "states", "position", "positions", "logits", "labels", "values", "features"];

/// First words of flag and option names: `use_cache`, `return_dict`, `is_causal`, `do_sample`.
const FLAG_PREFIXES: &[&str] = &[
    "use",
    "return",
    "is",
    "do",
    "has",
    "with",
    "need",
    "apply",
    "enable",
    "disable",
    "interpolate",
    "all",
    "past",
    "n",
    "output",
];

/// Whether a parameter's name says it is not tensor data: flags (`use_cache`, `return_dict`,
/// `output_attentions`), sizes (`height`, `patch_width`, `H`), objects (`config`, `layer_type`,
/// `past_key_values`, `attn_kwargs`), collections of outputs (`all_hidden_states`).
fn names_python_value(name: &str) -> bool {
    // `H`, `W`, `T`: sizes handed down next to the tensor (`forward(self, x, H, W)`).
    if name.len() == 1 && name.chars().all(|c| c.is_ascii_uppercase()) && name != "X" {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    let words: Vec<&str> = lower.split('_').filter(|word| !word.is_empty()).collect();
    let Some(first) = words.first() else { return false };
    // `output` alone is a tensor; `output_attentions` is a flag.
    let flag = FLAG_PREFIXES.contains(first) && (words.len() > 1 || *first != "output");
    // A flag (`output_hidden_states`) or a count (`num_labels`) whatever its last word.
    if flag || *first == "num" {
        return true;
    }
    if words.last().is_some_and(|last| TENSOR_LAST_WORDS.contains(last)) {
        return false;
    }
    words.iter().any(|word| PYTHON_VALUE_WORDS.contains(word)) || lower == "training" || lower == "bicubic"
}

/// Attributes a tensor has that are not methods.
const TENSOR_FIELDS: &[&str] = &[
    "shape",
    "dtype",
    "device",
    "ndim",
    "T",
    "mT",
    "H",
    "mH",
    "data",
    "grad",
    "real",
    "imag",
    "layout",
    "is_cuda",
    "is_sparse",
    "is_quantized",
    "is_meta",
    "requires_grad",
    "grad_fn",
    "is_leaf",
    "names",
    "itemsize",
    "nbytes",
];

/// Methods only a tensor has among the values a parameter may hold (not `size`, which a process
/// group has too, nor `to`/`get`/`type`, which other objects have).
const TENSOR_ONLY_METHODS: &[&str] = &[
    "max",
    "min",
    "sum",
    "mean",
    "any",
    "all",
    "argmax",
    "argmin",
    "float",
    "long",
    "bool",
    "half",
    "item",
    "tolist",
    "view",
    "reshape",
    "unsqueeze",
    "squeeze",
    "flatten",
    "permute",
    "transpose",
    "contiguous",
    "clone",
    "detach",
    "masked_fill",
    "numel",
    "dim",
    "ne",
    "eq",
    "gt",
    "lt",
    "ge",
    "le",
    "cumsum",
    "clamp",
    "expand",
    "new_zeros",
    "new_ones",
    "new_full",
    "softmax",
    "unbind",
    "chunk",
    "type_as",
];

/// The `names` the body uses as only a tensor can be used: `p.max()`, `p.shape`, `p.view(...)`.
fn tensor_uses(body: &[Stmt], names: &HashSet<String>) -> HashSet<String> {
    struct TensorUses<'n> {
        names: &'n HashSet<String>,
        found: HashSet<String>,
    }
    impl<'a> Visitor<'a> for TensorUses<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            let used = match expr {
                Expr::Call(call) => match call.func.as_ref() {
                    Expr::Attribute(method) if TENSOR_ONLY_METHODS.contains(&method.attr.id.as_str()) => {
                        Some(method.value.as_ref())
                    }
                    _ => None,
                },
                Expr::Attribute(attr) if matches!(attr.attr.id.as_str(), "shape" | "dtype" | "ndim") => {
                    Some(attr.value.as_ref())
                }
                _ => None,
            };
            if let Some(Expr::Name(name)) = used
                && self.names.contains(name.id.as_str())
            {
                self.found.insert(name.id.to_string());
            }
            walk_expr(self, expr);
        }
    }
    let mut uses = TensorUses { names, found: HashSet::default() };
    uses.visit_body(body);
    uses.found
}

/// Methods of Python containers (and dataclass-like outputs) that a tensor lacks.
const CONTAINER_METHODS: &[&str] =
    &["items", "keys", "values", "get", "append", "extend", "insert", "pop", "update", "setdefault", "to_tuple"];

/// Finds the candidates the function handles as Python objects.
struct PythonUses<'c> {
    candidates: &'c HashSet<String>,
    found: HashSet<String>,
    /// Attributes that are called (`p.view(...)`): methods, judged in `call`, not fields.
    callees: HashSet<TextRange>,
}

impl PythonUses<'_> {
    fn mark(&mut self, expr: &Expr) {
        if let Expr::Name(name) = expr
            && self.candidates.contains(name.id.as_str())
        {
            self.found.insert(name.id.to_string());
        }
    }

    /// `p`, `p + n`, `-p`: the names an index computes with.
    fn mark_arithmetic(&mut self, expr: &Expr) {
        match expr {
            Expr::BinOp(op) => {
                self.mark_arithmetic(&op.left);
                self.mark_arithmetic(&op.right);
            }
            Expr::UnaryOp(op) => self.mark_arithmetic(&op.operand),
            other => self.mark(other),
        }
    }

    /// `for _ in p`, `enumerate(p)`, `zip(p, q)`: iterated like a list.
    fn iterated(&mut self, iter: &Expr) {
        match iter {
            Expr::Call(call) if is_pairing(call) => call.arguments.args.iter().for_each(|arg| self.mark(arg)),
            other => self.mark(other),
        }
    }

    fn call(&mut self, call: &ast::ExprCall) {
        self.callees.insert(call.func.range());
        // `p(...)`: a callable.
        self.mark(&call.func);
        for arg in &call.arguments.args {
            if let Expr::Starred(starred) = arg {
                self.mark(&starred.value);
            }
        }
        for keyword in &call.arguments.keywords {
            if keyword.arg.is_none() {
                self.mark(&keyword.value);
            }
        }
        match call.func.as_ref() {
            Expr::Name(func)
                if matches!(func.id.as_str(), "isinstance" | "len" | "range" | "type" | "getattr" | "hasattr") =>
            {
                if let Some(first) = call.arguments.args.first() {
                    self.mark(first);
                }
            }
            _ if is_pairing(call) => call.arguments.args.iter().for_each(|arg| self.mark(arg)),
            Expr::Attribute(method) if CONTAINER_METHODS.contains(&method.attr.id.as_str()) => self.mark(&method.value),
            _ => {}
        }
    }
}

impl<'a> Visitor<'a> for PythonUses<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::For(for_stmt) => self.iterated(&for_stmt.iter),
            // `a, b = p`: unpacked like a tuple.
            Stmt::Assign(assign) if matches!(assign.targets.as_slice(), [Expr::Tuple(_) | Expr::List(_)]) => {
                self.mark(&assign.value);
            }
            _ => {}
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Call(call) => self.call(call),
            Expr::Attribute(attr) => {
                let is_method_or_field = TENSOR_FIELDS.contains(&attr.attr.id.as_str());
                // A call's callee is looked at in `call`: `p.view(...)` is a tensor method.
                if !is_method_or_field && !self.callees.contains(&expr.range()) {
                    self.mark(&attr.value);
                }
            }
            // `p["input_ids"]`, `p[0]["flip"]`
            Expr::Subscript(subscript) if matches!(subscript.slice.as_ref(), Expr::StringLiteral(_)) => {
                self.mark(subscript_base(&subscript.value));
            }
            Expr::Compare(compare) => {
                let operands: Vec<&Expr> = std::iter::once(compare.left.as_ref()).chain(&compare.comparators).collect();
                let with_text_or_bool =
                    operands.iter().any(|e| matches!(e, Expr::StringLiteral(_) | Expr::BooleanLiteral(_)));
                let membership = compare.ops.iter().any(|op| matches!(op, ast::CmpOp::In | ast::CmpOp::NotIn));
                if with_text_or_bool || membership {
                    operands.into_iter().for_each(|e| self.mark(e));
                }
            }
            Expr::Slice(slice) => {
                for bound in [&slice.lower, &slice.upper, &slice.step].into_iter().flatten() {
                    self.mark_arithmetic(bound);
                }
            }
            Expr::ListComp(ast::ExprListComp { generators, .. })
            | Expr::SetComp(ast::ExprSetComp { generators, .. })
            | Expr::Generator(ast::ExprGenerator { generators, .. })
            | Expr::DictComp(ast::ExprDictComp { generators, .. }) => {
                generators.iter().for_each(|generator| self.iterated(&generator.iter));
            }
            _ => {}
        }
        walk_expr(self, expr);
    }
}

/// The value a chain of subscripts starts from: `metas[0][1]` -> `metas`.
fn subscript_base(expr: &Expr) -> &Expr {
    match expr {
        Expr::Subscript(subscript) => subscript_base(&subscript.value),
        other => other,
    }
}

/// The names among `names` that `body` indexes with a string (`meta["flip"]`, `metas[0]["flip"]`):
/// no tensor takes a string index, so they hold dicts or lists of them, whatever a caller passes.
pub fn indexed_by_text(body: &[Stmt], names: &HashSet<String>) -> HashSet<String> {
    struct TextIndexes<'n> {
        names: &'n HashSet<String>,
        found: HashSet<String>,
    }
    impl<'a> Visitor<'a> for TextIndexes<'_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Subscript(subscript) = expr
                && subscript.slice.is_string_literal_expr()
                && let Expr::Name(base) = subscript_base(&subscript.value)
                && self.names.contains(base.id.as_str())
            {
                self.found.insert(base.id.to_string());
            }
            walk_expr(self, expr);
        }
    }
    let mut indexes = TextIndexes { names, found: HashSet::default() };
    indexes.visit_body(body);
    indexes.found
}

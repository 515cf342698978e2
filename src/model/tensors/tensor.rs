//! "Is this a tensor?", decided in one place for one function of the compiled region, for the rules
//! that care whether a value is tensor data (TCF103-TCF106).
//!
//! The model is deliberately conservative: a value is a tensor only with positive evidence, and
//! anything unknown is *not* a tensor. A false alarm ("this `if` breaks the graph" on a Python int)
//! costs the user more trust than a missed break, so every doubt resolves to "not a tensor".
//!
//! Evidence:
//! - calls of torch functions (`torch.*`, `torch.nn.functional.*`, `torch.linalg.*`, `torch.fft.*`,
//!   `torch.special.*`, resolved through the imports) except those returning Python values
//!   (`torch.is_tensor`, `torch.numel`, `torch.jit.is_scripting`, ...);
//! - calls of submodules (`self.proj(x)`, `self.blocks[i](x)`) and methods of tensors other than
//!   the ones returning Python values (`.size()`, `.dim()`, `.item()`, `.tolist()`, ...);
//! - `self.<attr>` registered as a buffer or assigned an `nn.Parameter` / torch tensor;
//! - parameters annotated `Tensor` (`torch.Tensor`, `Optional[torch.FloatTensor]`, ...), or
//!   unannotated ones used as tensors (`x.view(...)`, `x @ w`, first argument of a torch op);
//! - arithmetic and comparisons with a tensor, indexing a tensor, `.T`, `.data`, `.grad`.
//!
//! A local name is a tensor when one of its bindings is, and none is a known Python value (a
//! literal, `len()`, `int()`, `.shape`, a `for` target...). Bindings that say nothing (`x = blk(x)`
//! with `blk` unknown) neither make nor unmake a tensor.
//!
//! Never data-dependent: `.shape`, `.size()`, `.dim()`, `.ndim`, `.dtype`, `.device`, `.is_cuda`,
//! `.requires_grad`, `len(x)`, `x is None`, `isinstance(...)`, `self.training`, `self.config.x`,
//! helpers such as `exists(x)` / `default(x, y)` (unknown functions return unknown values),
//! `torch.jit.is_scripting()`, `torch.is_tensor(x)`, `torch.is_floating_point(x)`.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::borrow::Cow;
use std::sync::Arc;

use ruff_python_ast::helpers::any_over_expr;
use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{self as ast, CmpOp, Expr, Operator, Stmt, UnaryOp};

use ruff_text_size::{Ranged, TextRange};

use crate::model::compiled::compiled_code::is_compiling_call;
use crate::model::file::call_graph::{CallFacts, ClassTensors, FoundTensors};
use crate::model::file::imports::last_segment;
use crate::model::file::module::is_self;
use crate::model::file::{FileModel, FunctionNode, Reason};
use crate::model::file::{init_method, is_module_class, method_body, self_assignments};
use crate::model::flow::calls::{argument, returned_values};
use crate::model::flow::submodules;
use crate::model::tensors::einops_calls;
use crate::model::tensors::inputs::{indexed_by_text, presumed_tensors};
use crate::model::tensors::torch_calls::{
    DTYPE_KEEPING_METHODS, FULL_REDUCTIONS, MASK_METHODS, PYTHON_VALUE_METHODS, TAKES_NO_TENSOR, TENSOR_ATTRIBUTES,
    TENSOR_ONLY_METHODS, keeps_rank, torch_function_returns_tensor,
};
/// Which values of one function are tensors.
pub struct Tensors<'m, 'a> {
    model: &'m FileModel<'a>,
    /// Local names (parameters included) that hold tensors.
    names: HashSet<String>,
    /// Of those, the ones that hold boolean tensors (masks).
    masks: HashSet<String>,
    /// Of those, the ones that hold 0-d tensors (`m = x.max() + 1`).
    zero_dim: HashSet<String>,
    /// Names that are a Python bool on one path and a mask on another (`skip = False`, then under
    /// a condition `skip = draw < rate`): a test of one reads tensor data where the mask reached it.
    flags: HashSet<String>,
    /// Names bound to numpy arrays (`size = np.array(shape)`, and what is computed from them):
    /// tensors to Dynamo, but numpy values when the code runs eagerly.
    numpy_names: HashSet<String>,
    /// Every name the function binds (parameters included).
    locals: HashSet<String>,
    /// What the function's class tells (`class_tensors`): `self.<attr>` that are submodules
    /// (callable, returning tensors) or parameters and buffers, and the `a.b` (and `a.b.c`) of
    /// `self.a.b` that are submodules of submodules: `self.decoder.embed`, with `self.decoder`
    /// one of the file's module classes that sets `self.embed` to a module.
    class: Arc<ClassTensors>,
    /// Calls of functions of the file that return tensors (`self._project(x)`, `helper(x)`).
    returning_tensors: HashSet<TextRange>,
    /// Of those, the ones that return masks (`self._image_positions(ids)`).
    returning_masks: HashSet<TextRange>,
}

/// How many calls deep tensor-ness is followed into callers and callees at most: a helper of a
/// helper of a helper of `forward` (transformers' `forward` -> `get_language_embedding` ->
/// `get_cached_task_embeddings` -> `_get_cache_key_at_index`) still learns its parameters from
/// `forward`'s tensors. Each level is one more tensors pass over the file's calling functions
/// (see `across_calls`), taken only while the level before taught something.
const CALL_DEPTH: usize = 3;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tensor,
    Mask,
}

/// What one binding of a local name says about it (`tcfix why` shows each).
#[derive(Clone)]
pub enum Binding<'a> {
    Value(&'a Expr),
    /// One element of a tuple unpacked from this value (`q, k = x.chunk(2)`).
    Element(&'a Expr),
    /// A name used as a tensor (`x.view(...)`, `x @ w`), or passed tensors by every caller.
    UsedAsTensor,
    /// A parameter annotated as a tensor: a tensor of any rank.
    AnnotatedTensor,
    /// A parameter annotated `torch.BoolTensor`: a mask.
    AnnotatedMask,
    /// A `for` target walking the value (`for row in x`, `for a, b in zip(x, y)`): a tensor's
    /// rows are tensors; a range's or a list's items are not known to be.
    Row(&'a Expr),
    /// An input of a compiled entry point presumed a tensor (see `inputs`).
    Presumed,
    /// Bound to something that is certainly not a tensor: a `for` target, a parameter typed `int`...
    NotTensor,
    /// Says nothing either way (`with ... as f`, a parameter without evidence).
    Unknown,
}

impl<'m, 'a> Tensors<'m, 'a> {
    /// The tensors of `function` (a function of `model`), with what the file's calls tell it.
    pub fn of(model: &'m FileModel<'a>, function: usize) -> Self {
        let facts = model.call_facts.get_or_init(|| across_calls(model));
        if let Some(found) = model.found_tensors.borrow_mut().remove(&function) {
            return Self::from_found(model, found);
        }
        Self::with_facts(model, function, &bindings(model, function), &facts[function])
    }

    /// Keeps the tensors of `function` for the next question about it while the file is
    /// checked: another rule's hazards and the frames Dynamo runs eagerly walk the file again.
    pub fn keep(self, function: usize) {
        let model = self.model;
        model.found_tensors.borrow_mut().insert(function, self.into_found());
    }

    /// Forgets the tensors kept for the next question: the file is checked.
    pub fn forget_kept(model: &FileModel) {
        model.found_tensors.borrow_mut().clear();
    }

    /// What `across_calls` found, read again with the model.
    fn from_found(model: &'m FileModel<'a>, found: FoundTensors) -> Self {
        let FoundTensors {
            names,
            masks,
            zero_dim,
            flags,
            numpy_names,
            locals,
            class,
            returning_tensors,
            returning_masks,
        } = found;
        Tensors { model, names, masks, zero_dim, flags, numpy_names, locals, class, returning_tensors, returning_masks }
    }

    /// What was found, kept without the model.
    fn into_found(self) -> FoundTensors {
        let Tensors {
            model: _,
            names,
            masks,
            zero_dim,
            flags,
            numpy_names,
            locals,
            class,
            returning_tensors,
            returning_masks,
        } = self;
        FoundTensors { names, masks, zero_dim, flags, numpy_names, locals, class, returning_tensors, returning_masks }
    }

    /// The tensors of `function`, given its own bindings (`bindings`) and what calls tell it.
    fn with_facts(
        model: &'m FileModel<'a>,
        function: usize,
        own: &HashMap<String, Vec<Binding<'a>>>,
        facts: &CallFacts,
    ) -> Self {
        let mut tensors = Tensors {
            model,
            names: HashSet::default(),
            masks: HashSet::default(),
            zero_dim: HashSet::default(),
            flags: HashSet::default(),
            numpy_names: HashSet::default(),
            locals: HashSet::default(),
            class: class_tensors(model, function),
            returning_tensors: facts.returning_tensors.clone(),
            returning_masks: facts.returning_masks.clone(),
        };
        // What the callers pass follows the function's own bindings (copied only when they pass
        // something: `across_calls` asks again with the same bindings at each level).
        let mut bindings = Cow::Borrowed(own);
        for name in &facts.passed_tensors {
            bindings.to_mut().entry(name.clone()).or_default().push(Binding::UsedAsTensor);
        }
        for name in &facts.passed_python {
            bindings.to_mut().entry(name.clone()).or_default().push(Binding::NotTensor);
        }
        tensors.locals = bindings.keys().cloned().collect();
        tensors.grow(&bindings, Kind::Tensor);
        tensors.grow(&bindings, Kind::Mask);
        tensors.shrink_zero_dim(&bindings);
        tensors.flags = tensors.flags_of(&bindings);
        tensors.numpy_names = tensors.numpy_names_of(&bindings);
        tensors
    }

    /// The names some binding of which reads numpy (a call of `numpy.*` or a numpy name), to a
    /// fixpoint: `remainder = (size % patch) > 0` after `size = np.array(shape)`.
    fn numpy_names_of(&self, bindings: &HashMap<String, Vec<Binding<'a>>>) -> HashSet<String> {
        let mut numpy: HashSet<String> = HashSet::default();
        loop {
            let grown: Vec<String> = bindings
                .iter()
                .filter(|(name, _)| !numpy.contains(name.as_str()))
                .filter(|(_, bindings)| {
                    bindings.iter().any(|b| matches!(b, Binding::Value(value) if self.reads_numpy_with(value, &numpy)))
                })
                .map(|(name, _)| name.clone())
                .collect();
            if grown.is_empty() {
                return numpy;
            }
            numpy.extend(grown);
        }
    }

    fn reads_numpy_with(&self, expr: &Expr, names: &HashSet<String>) -> bool {
        any_over_expr(expr, |node| match node {
            Expr::Name(name) => names.contains(name.id.as_str()),
            Expr::Call(call) => {
                self.model.imports.qualified_name(&call.func).is_some_and(|name| name.starts_with("numpy."))
            }
            _ => false,
        })
    }

    /// Whether `expr` reads a numpy array: a fix that hands it to torch would fail eagerly.
    pub fn reads_numpy(&self, expr: &Expr) -> bool {
        self.reads_numpy_with(expr, &self.numpy_names)
    }

    /// The names bound to a mask on some path and only to `True`/`False` on the others.
    fn flags_of(&self, bindings: &HashMap<String, Vec<Binding<'a>>>) -> HashSet<String> {
        let is_bool = |binding: &Binding| matches!(binding, Binding::Value(Expr::BooleanLiteral(_)));
        let is_mask = |binding: &Binding| matches!(binding, Binding::Value(value) if self.is_mask(value));
        bindings
            .iter()
            .filter(|(name, bindings)| {
                !self.names.contains(name.as_str())
                    && bindings.iter().any(is_mask)
                    && bindings.iter().all(|binding| is_bool(binding) || is_mask(binding))
            })
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Whether `test` reads a name that is a mask on one path and a Python bool on another.
    pub fn reads_flag(&self, test: &Expr) -> Option<&str> {
        match test {
            Expr::Name(name) => self.flags.get(name.id.as_str()).map(String::as_str),
            Expr::UnaryOp(op) if op.op == UnaryOp::Not => self.reads_flag(&op.operand),
            Expr::BoolOp(op) => op.values.iter().find_map(|value| self.reads_flag(value)),
            _ => None,
        }
    }

    /// Adds the names whose bindings make them `kind`, to a fixpoint: bindings refer to each
    /// other (`h = x + 1` after `x = torch.ones(...)`).
    fn grow(&mut self, bindings: &HashMap<String, Vec<Binding<'a>>>, kind: Kind) {
        loop {
            let mut grown = Vec::new();
            for (name, bindings) in bindings {
                let known = self.known(kind);
                if known.contains(name) {
                    continue;
                }
                let (some_yes, some_no) = self.verdicts(bindings, kind);
                if !some_yes {
                    continue;
                }
                // A mask rebound from itself (`keep = keep.masked_fill(pad, False)`) stays one: once
                // a binding of its own makes it one, its name counts as a mask while the others are
                // judged (never the other way round: `idx = idx.flatten()` on an input is no mask).
                let judged_again = kind == Kind::Mask && some_no;
                let some_no = match judged_again && self.masks.insert(name.clone()) {
                    true => {
                        let (_, again_no) = self.verdicts(bindings, kind);
                        self.masks.remove(name);
                        again_no
                    }
                    false => some_no,
                };
                if !some_no {
                    grown.push(name.clone());
                }
            }
            if grown.is_empty() {
                return;
            }
            match kind {
                Kind::Tensor => self.names.extend(grown),
                Kind::Mask => self.masks.extend(grown),
            }
        }
    }

    /// Whether some of a name's bindings make it `kind`, and whether some make it not (every
    /// binding judged, none kept: this runs for every name at every round of `grow`).
    fn verdicts(&self, bindings: &[Binding<'a>], kind: Kind) -> (bool, bool) {
        let (mut yes, mut no) = (false, false);
        for binding in bindings {
            match self.verdict(binding, kind) {
                Some(true) => yes = true,
                Some(false) => no = true,
                None => {}
            }
        }
        (yes, no)
    }

    /// The 0-d tensors: the tensors each of whose bindings is a 0-d value, assuming the names
    /// still in the set are 0-d, down to a fixpoint. Starting from every candidate keeps a
    /// rebinding's rank (`m = x.max()` then `m = m * 2`), and `m = m.expand(n)` still ends it.
    /// An input's rank, and an unpacked element's, are unknown.
    fn shrink_zero_dim(&mut self, bindings: &HashMap<String, Vec<Binding<'a>>>) {
        self.zero_dim = bindings
            .iter()
            .filter(|(name, bindings)| {
                // A use as a tensor (`torch.ones_like(m)`) says nothing of the rank; a parameter's
                // binding, annotated or not, leaves it unknown.
                let mut values = bindings.iter().filter(|b| !matches!(b, Binding::UsedAsTensor)).peekable();
                self.names.contains(name.as_str())
                    && values.peek().is_some()
                    && values.all(|b| matches!(b, Binding::Value(value) if !is_python_value(value)))
            })
            .map(|(name, _)| name.clone())
            .collect();
        loop {
            let lost: Vec<String> = self
                .zero_dim
                .iter()
                .filter(|name| {
                    bindings[name.as_str()]
                        .iter()
                        .any(|b| matches!(b, Binding::Value(value) if !self.is_zero_dim(value)))
                })
                .cloned()
                .collect();
            if lost.is_empty() {
                return;
            }
            for name in lost {
                self.zero_dim.remove(&name);
            }
        }
    }

    fn known(&self, kind: Kind) -> &HashSet<String> {
        match kind {
            Kind::Tensor => &self.names,
            Kind::Mask => &self.masks,
        }
    }

    /// What one binding says: `Some(true)` it is `kind`, `Some(false)` it is not, `None` no idea.
    fn verdict(&self, binding: &Binding, kind: Kind) -> Option<bool> {
        match (binding, kind) {
            (Binding::Value(value), _) if is_python_value(value) => Some(false),
            (Binding::Value(value), Kind::Tensor) => self.is_tensor(value).then_some(true),
            (Binding::Row(iterated), Kind::Tensor) => Some(self.is_tensor(iterated)),
            (Binding::Row(iterated), Kind::Mask) => Some(self.is_mask(iterated)),
            // `q, k = x.chunk(2)` holds tensors; `out, n = self.embed(x)` may hold anything.
            (Binding::Element(value), Kind::Tensor) => {
                (self.is_tensor(value) && !self.is_module_call(value)).then_some(true)
            }
            // A mask is a mask only while every binding is one (`mask = mask.long()` ends that).
            (Binding::Value(value), Kind::Mask) => Some(self.is_mask(value)),
            (Binding::Element(_), Kind::Mask) => None,
            (Binding::AnnotatedMask, _) => Some(true),
            (Binding::UsedAsTensor | Binding::AnnotatedTensor | Binding::Presumed, Kind::Tensor) => Some(true),
            (Binding::UsedAsTensor | Binding::AnnotatedTensor | Binding::Presumed, Kind::Mask) => None,
            (Binding::NotTensor, _) => Some(false),
            (Binding::Unknown, _) => None,
        }
    }

    /// Whether `self.<attr>` is a submodule of the function's class (`tcfix why`).
    pub fn is_submodule(&self, attr: &str) -> bool {
        self.class.submodules.contains(attr)
    }

    /// What the calls of the file say of parameter `name`: `Some(true)` its compiled callers pass
    /// it tensors, `Some(false)` every one passes a Python value (`tcfix why`).
    pub fn passed_by_callers(&self, function: usize, name: &str) -> Option<bool> {
        let facts = &self.model.call_facts.get()?[function];
        if facts.passed_tensors.contains(name) {
            return Some(true);
        }
        facts.passed_python.contains(name).then_some(false)
    }

    /// Whether the function binds `name` itself (a parameter, an assignment): it then shadows a
    /// builtin of that name.
    pub fn is_local(&self, name: &str) -> bool {
        self.locals.contains(name)
    }

    /// Whether `expr` is `self.<attr>` with `attr` a parameter or buffer of the function's class
    /// (`self.inv_freq` after `self.register_buffer("inv_freq", ...)`).
    pub fn is_tensor_attribute(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Attribute(attr) if is_self(&attr.value) && self.class.attributes.contains(attr.attr.id.as_str()))
    }

    /// Whether `expr` evaluates to a tensor.
    pub fn is_tensor(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Name(name) => self.names.contains(name.id.as_str()),
            Expr::Attribute(attr) => {
                (TENSOR_ATTRIBUTES.contains(&attr.attr.id.as_str()) && self.is_tensor(&attr.value))
                    || (is_self(&attr.value) && self.class.attributes.contains(attr.attr.id.as_str()))
            }
            Expr::Subscript(subscript) => self.is_tensor(&subscript.value),
            Expr::Call(call) => self.is_tensor_call(call),
            Expr::BinOp(op) => {
                let formats_string = op.op == Operator::Mod && is_string(&op.left);
                !formats_string && (self.is_tensor(&op.left) || self.is_tensor(&op.right))
            }
            Expr::UnaryOp(op) => op.op != UnaryOp::Not && self.is_tensor(&op.operand),
            Expr::Compare(compare) => self.is_tensor_comparison(compare),
            Expr::If(if_expr) => self.is_tensor(&if_expr.body) && self.is_tensor(&if_expr.orelse),
            Expr::Named(named) => self.is_tensor(&named.value),
            _ => false,
        }
    }

    /// Whether `expr` is a boolean tensor (a mask): comparisons of tensors, `~mask`, `mask & m`,
    /// `.bool()`, `torch.isnan(x)`, names bound to those.
    pub fn is_mask(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Name(name) => self.masks.contains(name.id.as_str()),
            Expr::Compare(compare) => self.is_tensor_comparison(compare),
            Expr::UnaryOp(op) => op.op == UnaryOp::Invert && self.is_mask(&op.operand),
            Expr::BinOp(op) => {
                matches!(op.op, Operator::BitAnd | Operator::BitOr | Operator::BitXor)
                    && self.is_mask(&op.left)
                    && self.is_mask(&op.right)
            }
            Expr::Call(call) => {
                let returns_mask = last_segment(&call.func).is_some_and(|name| MASK_METHODS.contains(&name));
                let keeps_a_mask = matches!(call.func.as_ref(), Expr::Attribute(method)
                    if DTYPE_KEEPING_METHODS.contains(&method.attr.id.as_str()) && self.is_mask(&method.value));
                let einx_mask = || {
                    let qualified = self.model.imports.qualified_name(&call.func);
                    qualified.is_some_and(|name| einops_calls::gives_mask(&name)) && self.is_tensor_call(call)
                };
                (returns_mask && self.is_tensor_call(call))
                    || einx_mask()
                    || keeps_a_mask
                    || self.makes_bool_tensor(call)
                    || self.returning_masks.contains(&call.range())
            }
            _ => false,
        }
    }

    /// `torch.tensor(m, dtype=torch.bool)`, `torch.zeros(n, dtype=bool)`, `x.to(device, torch.bool)`,
    /// `x.type(torch.bool)`: a tensor call that says its dtype is bool.
    fn makes_bool_tensor(&self, call: &ast::ExprCall) -> bool {
        let is_bool = |e: &Expr| match e {
            Expr::Name(name) if name.id.as_str() == "bool" => !self.is_local("bool"),
            _ => self.model.imports.qualified_name(e).is_some_and(|name| name == "torch.bool"),
        };
        let converts =
            matches!(call.func.as_ref(), Expr::Attribute(method) if matches!(method.attr.id.as_str(), "to" | "type"));
        let says_bool = call.arguments.find_keyword("dtype").is_some_and(|keyword| is_bool(&keyword.value))
            || (converts && call.arguments.args.iter().any(is_bool));
        says_bool && self.is_tensor_call(call)
    }

    /// Whether `expr` is a 0-d tensor: a reduction without `dim` (`x.max()`, `torch.sum(x)`,
    /// `mask.any()`), and what keeps the rank of one (arithmetic and comparisons with Python
    /// numbers or other 0-d tensors, elementwise functions, dtype conversions), names bound to those.
    /// An operand not known to be a tensor counts as a Python number: an unknown one-element
    /// tensor of rank 1 would broadcast the result to `[1]` (rare, and still one element).
    pub fn is_zero_dim(&self, expr: &Expr) -> bool {
        let scalar_or_zero_dim = |operand: &Expr| !self.is_tensor(operand) || self.is_zero_dim(operand);
        match expr {
            Expr::Name(name) => self.zero_dim.contains(name.id.as_str()),
            Expr::BinOp(op) => {
                op.op != Operator::MatMult
                    && self.is_tensor(expr)
                    && scalar_or_zero_dim(&op.left)
                    && scalar_or_zero_dim(&op.right)
            }
            Expr::UnaryOp(op) => op.op != UnaryOp::Not && self.is_zero_dim(&op.operand),
            Expr::Compare(compare) => {
                self.is_tensor_comparison(compare)
                    && std::iter::once(compare.left.as_ref()).chain(&compare.comparators).all(scalar_or_zero_dim)
            }
            Expr::If(if_expr) => self.is_zero_dim(&if_expr.body) && self.is_zero_dim(&if_expr.orelse),
            Expr::Named(named) => self.is_zero_dim(&named.value),
            Expr::Call(call) => self.is_zero_dim_call(call),
            _ => false,
        }
    }

    fn is_zero_dim_call(&self, call: &ast::ExprCall) -> bool {
        let Some(name) = last_segment(&call.func) else { return false };
        let arguments = &call.arguments;
        let scalar_arguments = |args: &[Expr]| {
            args.iter()
                .chain(arguments.keywords.iter().map(|keyword| &keyword.value))
                .all(|arg| !self.is_tensor(arg) || self.is_zero_dim(arg))
        };
        let reduces_all = |extra: &[Expr]| {
            FULL_REDUCTIONS.contains(&name)
                && extra.is_empty()
                && arguments.keywords.iter().all(|k| k.arg.as_ref().is_some_and(|arg| arg.as_str() == "dtype"))
        };
        if self.creates_zero_dim(call) {
            return true;
        }
        match call.func.as_ref() {
            // `x.max()`, `m.float()`, `m.clamp(min=0)`
            Expr::Attribute(method) if self.is_tensor(&method.value) => {
                reduces_all(&arguments.args)
                    || (keeps_rank(name) && self.is_zero_dim(&method.value) && scalar_arguments(&arguments.args))
            }
            // `torch.sum(x)`, `torch.abs(m)`; not a submodule named like one (`self.norm(x)`).
            _ if self.is_torch_call(call) && self.is_tensor_call(call) => {
                let Some((first, rest)) = arguments.args.split_first() else { return false };
                (self.is_tensor(first) && reduces_all(rest))
                    || (keeps_rank(name) && self.is_zero_dim(first) && scalar_arguments(rest))
            }
            _ => false,
        }
    }

    /// `torch.rand([])` (layerdrop's draw), `torch.zeros(())`, `torch.tensor(0.5)`,
    /// `torch.scalar_tensor(k)`: a new 0-d tensor.
    fn creates_zero_dim(&self, call: &ast::ExprCall) -> bool {
        let Some(qualified) = self.model.imports.qualified_name(&call.func) else { return false };
        let Some(name) = qualified.strip_prefix("torch.") else { return false };
        let first = call.arguments.args.first();
        let empty_shape = |e: Option<&Expr>| match e {
            Some(Expr::List(list)) => list.elts.is_empty(),
            Some(Expr::Tuple(tuple)) => tuple.elts.is_empty(),
            _ => false,
        };
        let number = |e: Option<&Expr>| match e {
            Some(Expr::NumberLiteral(_) | Expr::BooleanLiteral(_)) => true,
            Some(Expr::UnaryOp(op)) => matches!(op.operand.as_ref(), Expr::NumberLiteral(_)),
            _ => false,
        };
        match name {
            "rand" | "randn" | "zeros" | "ones" | "empty" | "full" => empty_shape(first),
            "tensor" | "as_tensor" => number(first),
            "scalar_tensor" => true,
            _ => false,
        }
    }

    /// Whether testing `test` for truth (`if`, `while`, `and`/`or`, a ternary) reads tensor data.
    pub fn is_data_dependent(&self, test: &Expr) -> bool {
        match test {
            Expr::BoolOp(op) => {
                // `not is_compiling() and t.any()`: under compile the first operand is False and
                // Python never evaluates the rest (`is_compiling() or ...` likewise).
                let stops = |value: &Expr| match op.op {
                    ast::BoolOp::And => {
                        matches!(value, Expr::UnaryOp(not) if not.op == UnaryOp::Not && is_compiling_call(&not.operand))
                    }
                    ast::BoolOp::Or => is_compiling_call(value),
                };
                op.values.iter().take_while(|value| !stops(value)).any(|value| self.is_data_dependent(value))
            }
            Expr::UnaryOp(op) if op.op == UnaryOp::Not => self.is_data_dependent(&op.operand),
            Expr::Name(name) if self.flags.contains(name.id.as_str()) => true,
            _ => self.is_tensor(test),
        }
    }

    fn is_tensor_comparison(&self, compare: &ast::ExprCompare) -> bool {
        let identity = compare.ops.iter().any(|op| matches!(op, CmpOp::Is | CmpOp::IsNot | CmpOp::In | CmpOp::NotIn));
        let operands = || std::iter::once(compare.left.as_ref()).chain(compare.comparators.iter());
        !identity && !operands().any(Expr::is_none_literal_expr) && operands().any(|operand| self.is_tensor(operand))
    }

    /// Whether a call returns a tensor.
    pub fn is_tensor_call(&self, call: &ast::ExprCall) -> bool {
        if self.returning_tensors.contains(&call.range()) {
            return true;
        }
        if let Some(qualified) = self.model.imports.qualified_name(&call.func) {
            if let Some(returns_tensor) = torch_function_returns_tensor(&qualified) {
                return returns_tensor;
            }
            // Dynamo traces numpy arrays as tensors (torch._numpy): `if np.array(shape).any():`
            // is a data-dependent branch like its torch twin (monai's input-size checks).
            if matches!(qualified.as_str(), "numpy.array" | "numpy.asarray") {
                return true;
            }
            if let Some(operands) = einops_calls::operands(&qualified, call) {
                return operands.iter().any(|operand| self.is_tensor(operand));
            }
        }
        match call.func.as_ref() {
            Expr::Attribute(method) if is_self(&method.value) => {
                self.class.submodules.contains(method.attr.id.as_str())
            }
            // `self.decoder.embed(x)`
            func @ Expr::Attribute(_) if self.is_nested_submodule(func) => true,
            Expr::Attribute(method) => {
                self.is_tensor(&method.value) && !PYTHON_VALUE_METHODS.contains(&method.attr.id.as_str())
            }
            // `self.blocks[i](x)`
            Expr::Subscript(subscript) => matches!(subscript.value.as_ref(),
                Expr::Attribute(attr) if is_self(&attr.value) && self.class.submodules.contains(attr.attr.id.as_str())),
            _ => false,
        }
    }

    /// `torch.sum(...)`, `F.softmax(...)`: a function of torch, by the file's imports.
    fn is_torch_call(&self, call: &ast::ExprCall) -> bool {
        self.model.imports.qualified_name(&call.func).is_some_and(|name| name.starts_with("torch."))
    }

    /// `self.decoder.embed`: a submodule of a submodule.
    fn is_nested_submodule(&self, func: &Expr) -> bool {
        let nested = &self.class.nested_submodules;
        !nested.is_empty() && self_path(func).is_some_and(|path| nested.contains(&path))
    }

    /// `self.proj(x)`, `self.blocks[i](x)`: a submodule's output, which may be a tuple of anything.
    fn is_module_call(&self, expr: &Expr) -> bool {
        let Expr::Call(call) = expr else { return false };
        match call.func.as_ref() {
            func @ Expr::Attribute(attr) => is_self(&attr.value) || self.is_nested_submodule(func),
            Expr::Subscript(_) => true,
            _ => false,
        }
    }

    /// Whether `receiver.method(...)` certainly calls a tensor method (the receiver is a tensor).
    pub fn is_tensor_method_call(&self, call: &ast::ExprCall, method: &str) -> bool {
        matches!(call.func.as_ref(), Expr::Attribute(attr)
            if attr.attr.id.as_str() == method && self.is_tensor(&attr.value))
    }
}

/// What one function's tensors tell its callers (what it returns) and its callees (what it
/// passes them).
struct Summary {
    returns_tensor: bool,
    returns_mask: bool,
    /// By call site id: what the call passes to each parameter of the callee (`parameter_slots`).
    passes: HashMap<usize, Vec<Passed>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Passed {
    Tensor,
    /// A literal, `None`, `len(x)`, `x.shape`...: the parameter is not always a tensor.
    PythonValue,
    /// Nothing known, or no argument for it.
    Unknown,
}

/// What calls tell every function of the file, up to `CALL_DEPTH` calls deep: each round works out
/// the tensors of every function that calls or is called, with the facts of the round before, and
/// passes on what they return and what they pass. Each round is one tensors pass per function
/// whose facts the round before changed (a summary depends only on the function's own facts);
/// the rounds stop when one teaches nothing new (facts only grow, so they settle), which for most
/// files is the second.
fn across_calls(model: &FileModel) -> Vec<CallFacts> {
    let graph = model.calls();
    let linked: Vec<usize> = graph.linked().collect();
    let mut facts: Vec<CallFacts> = (0..model.functions.len()).map(|_| CallFacts::default()).collect();
    // A function's own bindings do not change with what its calls tell it: walked once for all
    // the levels.
    let own: HashMap<usize, _> = linked.iter().map(|&function| (function, bindings(model, function))).collect();
    let mut summaries: HashMap<usize, Summary> = HashMap::default();
    // The tensors of the region functions as last summarised: the rules ask for them next.
    let mut found: HashMap<usize, FoundTensors> = HashMap::default();
    let mut changed = linked.clone();
    for _ in 0..CALL_DEPTH {
        for &function in &changed {
            let (summary, tensors) = summarize(model, function, &own[&function], &facts[function]);
            summaries.insert(function, summary);
            if model.region.contains_key(&function) {
                found.insert(function, tensors.into_found());
            }
        }
        changed.clear();
        for &function in &linked {
            let told = told(model, function, &summaries);
            if told != facts[function] {
                facts[function] = told;
                changed.push(function);
            }
        }
        if changed.is_empty() {
            break;
        }
    }
    // Calls told these functions more after their last summary: their tensors are worked out
    // again when asked.
    for function in &changed {
        found.remove(function);
    }
    *model.found_tensors.borrow_mut() = found;
    facts
}

/// What `function` returns and passes, given what calls tell it, and its tensors.
fn summarize<'m, 'a>(
    model: &'m FileModel<'a>,
    function: usize,
    own: &HashMap<String, Vec<Binding<'a>>>,
    facts: &CallFacts,
) -> (Summary, Tensors<'m, 'a>) {
    let tensors = Tensors::with_facts(model, function, own, facts);
    let values = returned_values(model, function);
    // A bare `return`, running off the end or no `return` at all gives `None`.
    let values: Option<Vec<&Expr>> = values.into_iter().collect::<Option<_>>().filter(|v: &Vec<&Expr>| !v.is_empty());
    let all = |test: &dyn Fn(&Expr) -> bool| values.as_ref().is_some_and(|values| values.iter().all(|v| test(v)));
    let returns_tensor = all(&|value| tensors.is_tensor(value));
    let returns_mask = all(&|value| tensors.is_mask(value));
    let mut passes = HashMap::default();
    for (id, site) in model.calls().calls_out(function) {
        let slots = parameter_slots(model, site.callee);
        if slots.is_empty() {
            continue;
        }
        let passed = slots
            .iter()
            .map(|&(index, name)| match argument(model, site.call, site.callee, index, name) {
                Some(value) if is_python_value(value) || value.is_none_literal_expr() => Passed::PythonValue,
                Some(value) if tensors.is_tensor(value) => Passed::Tensor,
                _ => Passed::Unknown,
            })
            .collect();
        passes.insert(id, passed);
    }
    (Summary { returns_tensor, returns_mask, passes }, tensors)
}

/// The parameters of a function that learns them from its callers (one reached by calls from the
/// compiled region; entry points get their inputs from outside the file): name and position
/// (`usize::MAX` for keyword-only ones).
fn parameter_slots<'a>(model: &FileModel<'a>, function: usize) -> Vec<(usize, &'a str)> {
    let called = matches!(model.region.get(&function), Some(Reason::CalledFrom(_)));
    let Some(parameters) = model.function(function).node.parameters().filter(|_| called) else {
        return Vec::new();
    };
    let positional = parameters.posonlyargs.iter().chain(&parameters.args).enumerate();
    let keyword_only = parameters.kwonlyargs.iter().map(|p| (usize::MAX, p));
    positional.chain(keyword_only).map(|(index, p)| (index, p.parameter.name.id.as_str())).collect()
}

/// What the summaries of `function`'s callees and callers tell it.
fn told(model: &FileModel, function: usize, summaries: &HashMap<usize, Summary>) -> CallFacts {
    let graph = model.calls();
    let mut facts = CallFacts::default();
    for (_, site) in graph.calls_out(function) {
        let Some(callee) = summaries.get(&site.callee) else { continue };
        if callee.returns_tensor {
            facts.returning_tensors.insert(site.call.range());
        }
        if callee.returns_mask {
            facts.returning_masks.insert(site.call.range());
        }
    }
    let slots = parameter_slots(model, function);
    let called_elsewhere = model.called_from_other_files.contains(&model.function(function).qualname);
    for (slot, &(_, name)) in slots.iter().enumerate() {
        let passed = graph
            .call_sites(function)
            .filter_map(|(id, site)| Some(summaries.get(&site.caller)?.passes.get(&id)?[slot]));
        let (mut some_tensor, mut some_python, mut all_python) = (false, false, true);
        for passed in passed {
            some_tensor |= passed == Passed::Tensor;
            some_python |= passed == Passed::PythonValue;
            all_python &= passed == Passed::PythonValue;
        }
        if some_tensor && !some_python {
            facts.passed_tensors.insert(name.to_string());
        }
        if some_python && all_python && !called_elsewhere {
            facts.passed_python.insert(name.to_string());
        }
    }
    // A parameter the function indexes with a string (`img_meta[0]["flip"]`) holds dicts, whatever
    // the callers pass (they presume an unannotated input a tensor).
    if !facts.passed_tensors.is_empty()
        && let FunctionNode::Def(def) = model.function(function).node
    {
        let containers = indexed_by_text(&def.body, &facts.passed_tensors);
        facts.passed_tensors.retain(|name| !containers.contains(name));
    }
    facts
}

/// A value that is certainly not a tensor: literals, containers, `len()`, `int()`, `.shape`,
/// `.size()`, `.item()`...
pub fn is_python_value(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(_)
        | Expr::StringLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::FString(_)
        | Expr::List(_)
        | Expr::Tuple(_)
        | Expr::Dict(_)
        | Expr::Set(_)
        | Expr::ListComp(_)
        | Expr::DictComp(_)
        | Expr::SetComp(_) => true,
        Expr::Attribute(attr) => matches!(attr.attr.id.as_str(), "shape" | "ndim" | "dtype" | "device"),
        // `x.shape[-1]`: one size.
        Expr::Subscript(subscript) => {
            matches!(subscript.value.as_ref(), Expr::Attribute(attr) if attr.attr.id.as_str() == "shape")
        }
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Name(name) => matches!(
                name.id.as_str(),
                "len" | "int" | "float" | "bool" | "str" | "range" | "list" | "tuple" | "dict" | "isinstance"
            ),
            Expr::Attribute(attr) => matches!(attr.attr.id.as_str(), "size" | "dim" | "item" | "tolist" | "numel"),
            _ => false,
        },
        _ => false,
    }
}

fn is_string(expr: &Expr) -> bool {
    matches!(expr, Expr::StringLiteral(_) | Expr::FString(_))
}

/// What the function's class tells its tensors, worked out once per class of the file (each of
/// its functions asks at each level of `across_calls`, and again for the rules).
fn class_tensors(model: &FileModel, function: usize) -> Arc<ClassTensors> {
    let Some(class) = model.self_class(function) else { return Arc::default() };
    if let Some(known) = model.class_tensors.borrow().get(&class) {
        return Arc::clone(known);
    }
    let (submodules, attributes) = self_tensors(model, class);
    let nested_submodules = nested_submodules(model, class);
    let told = Arc::new(ClassTensors { submodules, attributes, nested_submodules });
    model.class_tensors.borrow_mut().insert(class, Arc::clone(&told));
    told
}

/// The `self.<attr>` of the class that are submodules, and those that are parameters or buffers.
fn self_tensors(model: &FileModel, class: usize) -> (HashSet<String>, HashSet<String>) {
    let mut submodules = HashSet::default();
    let mut attributes = HashSet::default();
    for assignment in self_assignments(model, class) {
        let Some(Expr::Call(call)) = assignment.value() else { continue };
        let qualified = model.imports.qualified_name(&call.func).unwrap_or_default();
        let is_parameter = qualified == "torch.nn.Parameter" || qualified.ends_with("nn.Parameter");
        if is_parameter || torch_function_returns_tensor(&qualified) == Some(true) {
            attributes.insert(assignment.attr.clone());
        } else if is_module_class(model, &call.func) {
            submodules.insert(assignment.attr.clone());
        }
    }
    if let Some(init) = init_method(model, class) {
        let mut buffers = BufferCollector { names: &mut attributes };
        buffers.visit_body(method_body(model, init));
    }
    (submodules, attributes)
}

/// The `self.<attr>` that the class sets to a module (`nn.Linear(...)`, one of the file's module
/// classes, a project one).
fn direct_submodules(model: &FileModel, class: usize) -> HashSet<String> {
    self_assignments(model, class)
        .iter()
        .filter(|assignment| matches!(assignment.value(), Some(Expr::Call(call)) if is_module_class(model, &call.func)))
        .map(|assignment| assignment.attr.clone())
        .collect()
}

/// How many attributes deep submodules of submodules are followed: `self.a.b.c(x)`.
const SUBMODULE_DEPTH: usize = 3;

/// `a.b`, `a.b.c` for the `self.a.b(x)`, `self.a.b.c(x)` of `class` that call submodules of its
/// submodules: each step is one of the file's module classes (`self.decoder = TextDecoder(...)`)
/// whose `__init__` sets the next attribute to a module. A submodule whose class is not in the
/// file (`AutoModel.from_config(...)`) tells nothing: its attribute may be a method.
fn nested_submodules(model: &FileModel, class: usize) -> HashSet<String> {
    let mut found = HashSet::default();
    let mut frontier: Vec<(String, usize)> = vec![(String::new(), class)];
    for depth in 1..SUBMODULE_DEPTH {
        let mut next = Vec::new();
        for (prefix, owner) in frontier {
            for attr in direct_submodules(model, owner) {
                let path = if prefix.is_empty() { attr.clone() } else { format!("{prefix}.{attr}") };
                if depth > 1 {
                    found.insert(path.clone());
                }
                for inner in submodules::classes(model, owner, &attr) {
                    if inner != owner {
                        next.push((path.clone(), inner));
                    }
                }
            }
        }
        frontier = next;
    }
    for (prefix, owner) in frontier {
        found.extend(direct_submodules(model, owner).into_iter().map(|attr| format!("{prefix}.{attr}")));
    }
    // A submodule built from a project class of another file: the index says which of its
    // attributes are torch.nn modules (`self.decoder = Decoder(cfg)`, `Decoder` setting
    // `self.embed = nn.Embedding(...)`).
    for assignment in self_assignments(model, class) {
        let Some(Expr::Call(call)) = assignment.value() else { continue };
        let Expr::Name(name) = call.func.as_ref() else { continue };
        if let Some(inner) = model.imported_submodules_of(name.id.as_str()) {
            found.extend(inner.iter().map(|sub| format!("{}.{sub}", assignment.attr)));
        }
    }
    found
}

/// `self.a.b` -> `a.b`: an attribute chain of at least two attributes rooted at `self`.
fn self_path(expr: &Expr) -> Option<String> {
    let Expr::Attribute(attr) = expr else { return None };
    if is_self(&attr.value) {
        return None;
    }
    let mut parts = vec![attr.attr.id.as_str()];
    let mut value = attr.value.as_ref();
    while let Expr::Attribute(inner) = value {
        parts.push(inner.attr.id.as_str());
        value = inner.value.as_ref();
    }
    if !is_self(value) {
        return None;
    }
    parts.reverse();
    Some(parts.join("."))
}

/// `self.register_buffer("name", ...)`: `self.name` is a tensor.
struct BufferCollector<'s> {
    names: &'s mut HashSet<String>,
}

impl<'a> Visitor<'a> for BufferCollector<'_> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr
            && let Expr::Attribute(method) = call.func.as_ref()
        {
            let registers = matches!(method.attr.id.as_str(), "register_buffer" | "register_parameter");
            if registers
                && is_self(&method.value)
                && let Some(Expr::StringLiteral(name)) = call.arguments.args.first()
            {
                self.names.insert(name.value.to_str().to_string());
            }
        }
        walk_expr(self, expr);
    }
}

/// Every binding of every local name of the function, parameters first.
pub fn bindings<'a>(model: &FileModel<'a>, function: usize) -> HashMap<String, Vec<Binding<'a>>> {
    let node = model.function(function).node;
    let mut collector = BindingCollector { bindings: HashMap::default(), evidence: HashSet::default(), model };
    match node {
        FunctionNode::Def(def) => collector.visit_body(&def.body),
        FunctionNode::Lambda(lambda) => collector.visit_expr(&lambda.body),
    }
    let mut bindings = collector.bindings;
    let presumed = presumed_tensors(model, function);
    if let Some(parameters) = node.parameters() {
        for parameter in parameters.iter_non_variadic_params() {
            let name = parameter.parameter.name.id.to_string();
            // `output_attentions: torch.Tensor | None = False`: the default tells the truth.
            let python_default = parameter.default.as_deref().is_some_and(|default| {
                matches!(default, Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) | Expr::StringLiteral(_))
            });
            let binding = match parameter.parameter.annotation.as_deref() {
                _ if python_default => Binding::NotTensor,
                Some(annotation) if is_tensor_annotation(annotation) => match names_bool_tensor(annotation) {
                    true => Binding::AnnotatedMask,
                    false => Binding::AnnotatedTensor,
                },
                Some(_) => Binding::NotTensor,
                None if presumed.contains(&name) => Binding::Presumed,
                None => Binding::Unknown,
            };
            bindings.entry(name).or_default().insert(0, binding);
        }
    }
    for name in collector.evidence {
        if let Some(bindings) = bindings.get_mut(&name) {
            bindings.push(Binding::UsedAsTensor);
        }
    }
    bindings
}

/// `Tensor`, `torch.FloatTensor`, `Optional[torch.Tensor]`, `torch.Tensor | None`.
/// `torch.BoolTensor`, `Optional[torch.BoolTensor]`, `torch.BoolTensor | None` (of the forms
/// `is_tensor_annotation` accepts).
fn names_bool_tensor(annotation: &Expr) -> bool {
    match annotation {
        Expr::Subscript(subscript) => names_bool_tensor(&subscript.slice),
        Expr::BinOp(op) => names_bool_tensor(&op.left) || names_bool_tensor(&op.right),
        Expr::StringLiteral(literal) => literal.value.to_str().ends_with("BoolTensor"),
        _ => last_segment(annotation) == Some("BoolTensor"),
    }
}

pub fn is_tensor_annotation(annotation: &Expr) -> bool {
    match annotation {
        Expr::Subscript(subscript) if last_segment(&subscript.value) == Some("Optional") => {
            is_tensor_annotation(&subscript.slice)
        }
        Expr::BinOp(op) if op.op == Operator::BitOr => {
            let is_none = |e: &Expr| e.is_none_literal_expr();
            (is_tensor_annotation(&op.left) && is_none(&op.right))
                || (is_none(&op.left) && is_tensor_annotation(&op.right))
        }
        Expr::StringLiteral(text) => {
            let text = text.value.to_str();
            text.rsplit('.').next().is_some_and(|last| last.ends_with("Tensor") && last.len() <= 14)
        }
        _ => last_segment(annotation).is_some_and(|name| name.ends_with("Tensor") && name.len() <= 14),
    }
}

struct BindingCollector<'m, 'a> {
    bindings: HashMap<String, Vec<Binding<'a>>>,
    /// Names used as tensors (`x.view(...)`, `x @ w`, `torch.cat([x, ...])`'s first argument).
    evidence: HashSet<String>,
    model: &'m FileModel<'a>,
}

impl<'a> BindingCollector<'_, 'a> {
    fn bind(&mut self, target: &'a Expr, value: Option<&'a Expr>) {
        match target {
            Expr::Name(name) => {
                let binding = value.map_or(Binding::Unknown, Binding::Value);
                self.bindings.entry(name.id.to_string()).or_default().push(binding);
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                for element in elts {
                    match (element, value) {
                        (Expr::Name(name), Some(value)) => {
                            self.bindings.entry(name.id.to_string()).or_default().push(Binding::Element(value));
                        }
                        (Expr::Starred(starred), _) => self.bind(&starred.value, None),
                        _ => self.bind(element, None),
                    }
                }
            }
            _ => {}
        }
    }

    /// `for row in x`, `for a, b in zip(x, y)`, `for i, row in enumerate(x)`: each name walks one
    /// value; anything else binds names that are not tensors.
    fn bind_rows(&mut self, target: &'a Expr, iterated: &'a Expr) {
        let walked: Vec<Option<&'a Expr>> = match iterated {
            Expr::Call(call) if matches!(call.func.as_ref(), Expr::Name(f) if f.id.as_str() == "zip") => {
                call.arguments.args.iter().map(Some).collect()
            }
            Expr::Call(call) if matches!(call.func.as_ref(), Expr::Name(f) if f.id.as_str() == "enumerate") => {
                vec![None, call.arguments.args.first()]
            }
            _ => vec![Some(iterated)],
        };
        match (target, walked.as_slice()) {
            (Expr::Name(name), [Some(value)]) => {
                self.bindings.entry(name.id.to_string()).or_default().push(Binding::Row(value));
            }
            (Expr::Tuple(ast::ExprTuple { elts, .. }), _) if elts.len() == walked.len() && walked.len() > 1 => {
                for (element, value) in elts.iter().zip(&walked) {
                    match (element, value) {
                        (Expr::Name(name), Some(value)) => {
                            self.bindings.entry(name.id.to_string()).or_default().push(Binding::Row(value));
                        }
                        _ => self.not_tensor(element),
                    }
                }
            }
            _ => self.not_tensor(target),
        }
    }

    fn not_tensor(&mut self, target: &'a Expr) {
        let mut names = Vec::new();
        collect_names(target, &mut names);
        for name in names {
            self.bindings.entry(name).or_default().push(Binding::NotTensor);
        }
    }
}

fn collect_names(target: &Expr, names: &mut Vec<String>) {
    match target {
        Expr::Name(name) => names.push(name.id.to_string()),
        Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
            elts.iter().for_each(|e| collect_names(e, names));
        }
        Expr::Starred(starred) => collect_names(&starred.value, names),
        _ => {}
    }
}

impl<'a> Visitor<'a> for BindingCollector<'_, 'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(def) => {
                self.bindings.entry(def.name.id.to_string()).or_default().push(Binding::NotTensor);
                return;
            }
            Stmt::ClassDef(class) => {
                self.bindings.entry(class.name.id.to_string()).or_default().push(Binding::NotTensor);
                return;
            }
            Stmt::Assign(assign) => assign.targets.iter().for_each(|target| self.bind(target, Some(&assign.value))),
            Stmt::AnnAssign(assign) => self.bind(&assign.target, assign.value.as_deref()),
            Stmt::For(for_stmt) => self.bind_rows(&for_stmt.target, &for_stmt.iter),
            Stmt::With(with) => {
                for item in &with.items {
                    if let Some(target) = &item.optional_vars {
                        self.bind(target, None);
                    }
                }
            }
            Stmt::Import(_) | Stmt::ImportFrom(_) => {
                if let Stmt::Import(import) = stmt {
                    for alias in &import.names {
                        let name = alias.asname.as_ref().unwrap_or(&alias.name).id.to_string();
                        self.bindings.entry(name).or_default().push(Binding::NotTensor);
                    }
                }
            }
            _ => {}
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            // Their own scopes: names bound there are not this function's.
            Expr::Lambda(_) | Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => return,
            Expr::Named(named) => self.bind(&named.target, Some(&named.value)),
            Expr::Call(call) => {
                if let Expr::Attribute(method) = call.func.as_ref()
                    && let Expr::Name(receiver) = method.value.as_ref()
                    && TENSOR_ONLY_METHODS.contains(&method.attr.id.as_str())
                {
                    self.evidence.insert(receiver.id.to_string());
                }
                let torch_op = self.model.imports.qualified_name(&call.func).is_some_and(|q| {
                    let takes_tensor = !q.rsplit('.').next().is_some_and(|name| TAKES_NO_TENSOR.contains(&name));
                    takes_tensor && torch_function_returns_tensor(&q) == Some(true)
                });
                if let (true, Some(Expr::Name(first))) = (torch_op, call.arguments.args.first()) {
                    self.evidence.insert(first.id.to_string());
                }
            }
            Expr::BinOp(op) if op.op == Operator::MatMult => {
                for side in [&op.left, &op.right] {
                    if let Expr::Name(name) = side.as_ref() {
                        self.evidence.insert(name.id.to_string());
                    }
                }
            }
            _ => {}
        }
        walk_expr(self, expr);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use ruff_python_ast::Stmt;
    use ruff_text_size::Ranged;

    use super::*;
    use crate::source::SourceFile;

    /// For each `probe = <expr>` line of `forward`, whether `<expr>` is a tensor.
    fn probes(code: &str) -> Vec<(String, bool)> {
        let source = SourceFile::parse(Path::new("m.py"), code.to_string()).unwrap();
        let model = FileModel::build(&source, "m");
        let forward = model.functions.iter().position(|f| f.name == "forward").unwrap();
        let tensors = Tensors::of(&model, forward);
        let FunctionNode::Def(def) = model.function(forward).node else { unreachable!() };
        def.body
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::Assign(assign) if matches!(&assign.targets[0], Expr::Name(n) if n.id.as_str() == "probe") => {
                    Some((code[assign.value.range()].to_string(), tensors.is_data_dependent(&assign.value)))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn tensors_need_evidence_and_metadata_is_never_data() {
        let code = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(2, 2)\n        self.register_buffer('table', torch.zeros(3))\n\n    def forward(self, x: torch.Tensor, y, z, n: int, flag=False):\n        h = self.proj(x)\n        y = y.view(-1)\n        probe = h.sum() > 0\n        probe = y.any()\n        probe = z.sum() > 0\n        probe = self.table.max() > 1\n        probe = h.shape[0] > 1\n        probe = h.dtype == torch.float16\n        probe = n > 1\n        probe = flag\n        probe = h is None\n        probe = len(h) > 2\n        probe = torch.is_tensor(h)\n        probe = not torch.compiler.is_compiling() and h.any()\n        probe = h.size(0) > 1 and h.any()\n";
        let found = probes(code);
        let expected = [true, true, false, true, false, false, false, false, false, false, false, false, true];
        let got: Vec<bool> = found.iter().map(|(_, dependent)| *dependent).collect();
        assert_eq!(got, expected, "{found:?}");
    }

    /// Whether the first expression written `expr` in `function` is a tensor, the file's region
    /// marked as the project index marks it.
    fn tensor_in(code: &str, function: &str, expr: &str) -> bool {
        use crate::model::index::{FileSummary, ProjectIndex};
        let source = SourceFile::parse(Path::new("m.py"), code.to_string()).unwrap();
        let facts = ProjectIndex::new(vec![FileSummary::of(&FileModel::build(&source, "m"))]).facts();
        let mut model = FileModel::build(&source, "m");
        crate::model::compiled::reach::mark_region(&mut model, &facts[0]);
        let function = model.functions.iter().position(|f| f.name == function).unwrap();
        struct Find<'e, 'a> {
            code: &'e str,
            text: &'e str,
            found: Option<&'a Expr>,
        }
        impl<'a> Visitor<'a> for Find<'_, 'a> {
            fn visit_expr(&mut self, expr: &'a Expr) {
                if self.found.is_none() && &self.code[expr.range()] == self.text {
                    self.found = Some(expr);
                }
                walk_expr(self, expr);
            }
        }
        let FunctionNode::Def(def) = model.function(function).node else { unreachable!() };
        let mut find = Find { code, text: expr, found: None };
        find.visit_body(&def.body);
        Tensors::of(&model, function).is_tensor(find.found.unwrap())
    }

    #[test]
    fn a_helper_that_can_return_none_does_not_return_a_tensor() {
        let code = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(2, 2)\n\n    def _always(self, x):\n        return self.proj(x)\n\n    def _maybe(self, x):\n        if x.ndim == 2:\n            return self.proj(x)\n\n    def _either(self, x):\n        if x.ndim == 2:\n            return self.proj(x)\n        else:\n            raise ValueError(x.ndim)\n\n    def forward(self, x: torch.Tensor):\n        return self._always(x) + self._maybe(x) + self._either(x)\n";
        assert!(tensor_in(code, "forward", "self._always(x)"));
        assert!(!tensor_in(code, "forward", "self._maybe(x)"));
        assert!(tensor_in(code, "forward", "self._either(x)"));
    }

    #[test]
    fn a_caller_passing_none_stops_the_passed_tensor_presumption() {
        let code = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(2, 2)\n\n    def _mix(self, h, bias):\n        return h if bias is None else h + bias\n\n    def forward(self, x: torch.Tensor):\n        h = self.proj(x)\n        a = self._mix(h, h)\n        return self._mix(a, None)\n";
        assert!(tensor_in(code, "_mix", "h"));
        assert!(!tensor_in(code, "_mix", "bias"));
    }
}

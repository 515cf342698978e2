//! Python ints that come from a tensor's size: `x.shape[1]`, `x.size(0)`, `len(x)`, and the local
//! names they are unpacked into (`B, N, C = x.shape`, `H = W = int(N ** 0.5)`). Dynamo specializes
//! on such ints: code whose structure depends on them (a `range` loop, a new attribute's shape) is
//! compiled anew for each size. Sizes of the module's own tensors (`self.weight.shape`) are fixed,
//! and `len(self.blocks)` or a config int is a constant: neither is a size from the input.

use rustc_hash::FxHashSet as HashSet;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{BoolOp, CmpOp, Expr, ExprContext, Number, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::model::compiled::compiled_code::{CompiledCodeVisitor, Site, visit_all};
use crate::model::file::module::{is_docstring, is_self};
use crate::model::file::{Body, FileModel, Reason};
/// The sizes one function reads from its inputs, and the names holding them.
pub struct InputSizes {
    names: HashSet<String>,
    /// Parameters of the function (not `self`): `len(param)` is an input's length.
    parameters: HashSet<String>,
    /// Locals holding the module's own tensors (`w = self.codebook.weight`): fixed sizes.
    module_tensors: HashSet<String>,
}

impl InputSizes {
    /// The names of `function` that hold (or are computed from) an input's size, assigned in
    /// source order.
    pub fn of(model: &FileModel, function: usize) -> Self {
        let node = model.function(function).node;
        let wrapped = match node.body() {
            Body::Stmts(body) => rebound_to_containers(body),
            Body::Expr(_) => HashSet::default(),
        };
        let parameters = node
            .parameters()
            .map(|p| {
                let params = p.iter_non_variadic_params().skip(1);
                let tensors = params.filter(|p| !p.parameter.annotation.as_deref().is_some_and(names_container));
                tensors.map(|p| p.parameter.name.id.to_string()).filter(|name| !wrapped.contains(name)).collect()
            })
            .unwrap_or_default();
        let mut finder = NameFinder {
            sizes: InputSizes { names: HashSet::default(), parameters, module_tensors: HashSet::default() },
        };
        visit_all(node.body(), &mut finder);
        finder.sizes
    }

    /// The first input size `expr` reads, as written (`x.shape[1]`, `N`), if it reads one.
    pub fn read_by<'a>(&self, expr: &'a Expr) -> Option<&'a Expr> {
        let mut finder = SizeRead { sizes: self, found: None };
        finder.visit_expr(expr);
        finder.found
    }

    fn is_size(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Name(name) => name.ctx == ExprContext::Load && self.names.contains(name.id.as_str()),
            // x.shape[1]
            Expr::Subscript(subscript) => self.is_size(&subscript.value),
            // x.shape
            Expr::Attribute(attr) => attr.attr.id.as_str() == "shape" && !self.rooted_at_self(&attr.value),
            // x.size(1), x.size()
            Expr::Call(call) => match call.func.as_ref() {
                Expr::Attribute(method) => method.attr.id.as_str() == "size" && !self.rooted_at_self(&method.value),
                Expr::Name(func) if func.id.as_str() == "len" => {
                    matches!(call.arguments.args.as_ref(), [Expr::Name(arg)] if self.parameters.contains(arg.id.as_str()))
                }
                _ => false,
            },
            _ => false,
        }
    }
}

/// `list[Tensor]`, `List[int]`, `Optional[Sequence[Tensor]]`, `dict | None`: a Python
/// container, whose length Dynamo guards on like any list's, loop or not (TCF205's question, not a
/// size of a tensor).
fn names_container(annotation: &Expr) -> bool {
    // Not `tuple`: transformers annotates tensors `tuple[torch.Tensor] | None` where a tensor is passed.
    const CONTAINERS: [&str; 7] = ["list", "List", "Sequence", "Iterable", "dict", "Dict", "Mapping"];
    let is_none = |expr: &Expr| expr.is_none_literal_expr();
    match annotation {
        Expr::Name(name) => CONTAINERS.contains(&name.id.as_str()),
        Expr::Attribute(attr) => CONTAINERS.contains(&attr.attr.id.as_str()),
        Expr::Subscript(subscript) => match subscript.value.as_ref() {
            Expr::Name(name) if name.id.as_str() == "Optional" => names_container(&subscript.slice),
            base => names_container(base),
        },
        Expr::BinOp(union) => {
            [&union.left, &union.right].iter().all(|side| names_container(side) || is_none(side))
                && !(is_none(&union.left) && is_none(&union.right))
        }
        _ => false,
    }
}

/// The parameters the function wraps into a list or tuple of themselves before anything else in
/// its body (`if isinstance(logits, torch.Tensor): logits = [logits]` as its first statements):
/// from there on they are containers. A wrap later in the body says nothing of the code above it.
fn rebound_to_containers(body: &[Stmt]) -> HashSet<String> {
    let mut wrapped = HashSet::default();
    for stmt in body {
        match stmt {
            stmt if is_docstring(stmt) => {}
            Stmt::If(if_stmt) if if_stmt.elif_else_clauses.is_empty() && if_stmt.body.len() == 1 => {
                wrapped.extend(self_wrap(&if_stmt.body[0]));
            }
            stmt => match self_wrap(stmt) {
                Some(name) => {
                    wrapped.insert(name);
                }
                None => break,
            },
        }
    }
    wrapped
}

/// `x = [x]` or `x = (x,)`: the name wrapped into a container of itself.
fn self_wrap(stmt: &Stmt) -> Option<String> {
    let Stmt::Assign(assign) = stmt else { return None };
    let [Expr::Name(name)] = assign.targets.as_slice() else { return None };
    let elements = match assign.value.as_ref() {
        Expr::List(list) => &list.elts,
        Expr::Tuple(tuple) => &tuple.elts,
        _ => return None,
    };
    let itself = matches!(elements.as_slice(), [Expr::Name(element)] if element.id == name.id);
    itself.then(|| name.id.to_string())
}

/// `len(x.shape)`, `len(x.size())`, `len(x.shape[:-2])`: a number of dimensions, fixed by the model.
fn is_rank(expr: &Expr) -> bool {
    let Expr::Call(call) = expr else { return false };
    let is_len = matches!(call.func.as_ref(), Expr::Name(f) if f.id.as_str() == "len");
    let shape = match call.arguments.args.first() {
        Some(Expr::Subscript(dims)) if dims.slice.is_slice_expr() => Some(dims.value.as_ref()),
        first => first,
    };
    let of_shape = match shape {
        Some(Expr::Attribute(attr)) => attr.attr.id.as_str() == "shape",
        Some(Expr::Call(size)) => matches!(size.func.as_ref(), Expr::Attribute(m) if m.attr.id.as_str() == "size"),
        _ => false,
    };
    is_len && of_shape
}

impl InputSizes {
    /// `self.weight`, `self.pos_embed[0]`, or a local holding one: the module's own tensors.
    fn rooted_at_self(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Name(name) if self.module_tensors.contains(name.id.as_str())) || rooted_at_self(expr)
    }
}

/// `self.weight`, `self.pos_embed[0]`: the module's own tensors, whose sizes do not change.
fn rooted_at_self(expr: &Expr) -> bool {
    match expr {
        Expr::Attribute(attr) => is_self(&attr.value) || rooted_at_self(&attr.value),
        Expr::Subscript(subscript) => rooted_at_self(&subscript.value),
        Expr::Call(call) => matches!(call.func.as_ref(), Expr::Attribute(method) if rooted_at_self(&method.value)),
        _ => false,
    }
}

struct SizeRead<'s, 'a> {
    sizes: &'s InputSizes,
    found: Option<&'a Expr>,
}

impl<'a> Visitor<'a> for SizeRead<'_, 'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if self.found.is_some() {
            return;
        }
        if is_rank(expr) {
            return;
        }
        if self.sizes.is_size(expr) {
            self.found = Some(expr);
            return;
        }
        walk_expr(self, expr);
    }
}

struct NameFinder {
    sizes: InputSizes,
}

impl<'a> CompiledCodeVisitor<'a> for NameFinder {
    fn stmt(&mut self, stmt: &'a Stmt, _site: Site) {
        let (targets, value): (Vec<&Expr>, &Expr) = match stmt {
            Stmt::Assign(assign) => (assign.targets.iter().collect(), &assign.value),
            Stmt::AnnAssign(assign) => match &assign.value {
                Some(value) => (vec![assign.target.as_ref()], value),
                None => return,
            },
            _ => return,
        };
        if let ([Expr::Name(name)], true) = (targets.as_slice(), rooted_at_self(value)) {
            self.sizes.module_tensors.insert(name.id.to_string());
            return;
        }
        if !is_int_size(value, &self.sizes) {
            return;
        }
        for target in targets {
            bind_names(target, &mut self.sizes.names);
        }
    }
}

/// Whether a value assigned is a size (or ints computed from one), not a tensor built from it:
/// `N = x.shape[1]`, `H = int(N ** 0.5)`, `B, N, C = x.shape`, but not `x = x.view(B, N, C)`.
fn is_int_size(value: &Expr, sizes: &InputSizes) -> bool {
    match value {
        Expr::BinOp(op) => {
            (is_int_size(&op.left, sizes) || is_int_size(&op.right, sizes))
                && [&op.left, &op.right].iter().all(|side| is_int_size(side, sizes) || is_plain_int(side))
        }
        Expr::UnaryOp(op) => is_int_size(&op.operand, sizes),
        Expr::Subscript(subscript) => is_int_size(&subscript.value, sizes),
        Expr::Tuple(tuple) => !tuple.elts.is_empty() && tuple.elts.iter().all(|e| is_int_size(e, sizes)),
        Expr::Call(call) => {
            let int_call = matches!(call.func.as_ref(), Expr::Name(f) if matches!(f.id.as_str(), "int" | "round" | "min" | "max"))
                || matches!(call.func.as_ref(), Expr::Attribute(f) if matches!(f.attr.id.as_str(), "ceil" | "floor" | "sqrt" | "isqrt"));
            if int_call { call.arguments.args.iter().any(|a| is_int_size(a, sizes)) } else { sizes.is_size(value) }
        }
        _ => sizes.is_size(value),
    }
}

fn is_plain_int(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(_) => true,
        Expr::Attribute(attr) => rooted_at_self(expr) || is_self(&attr.value),
        Expr::Name(_) => true,
        _ => false,
    }
}

fn bind_names(target: &Expr, names: &mut HashSet<String>) {
    match target {
        Expr::Name(name) => {
            names.insert(name.id.to_string());
        }
        Expr::Tuple(tuple) => tuple.elts.iter().for_each(|e| bind_names(e, names)),
        Expr::List(list) => list.elts.iter().for_each(|e| bind_names(e, names)),
        Expr::Starred(starred) => bind_names(&starred.value, names),
        _ => {}
    }
}

/// Whether every compiled call of `function` in the file sits under a test that the sequence be
/// one token long (`if recurrent_state is not None and seq_len == 1:`, or a flag bound to such a
/// test): the one-token decode step of a recurrent layer. There the loops over the sequence run
/// once, and the longer inputs go to another path. A test on the batch (`x.shape[0] == 1`) or the
/// beams (`num_beams == 1`) says nothing about the sequence.
pub fn only_for_single_step(model: &FileModel, function: usize) -> bool {
    // Entry points are called from outside the file.
    if !matches!(model.region.get(&function), Some(Reason::CalledFrom(_))) {
        return false;
    }
    let graph = model.calls();
    let mut sites = graph.call_sites(function).peekable();
    sites.peek().is_some() && sites.all(|(_, site)| graph.for_single_step(model, site))
}

/// The bodies of the `if`s in `body` whose test requires the sequence to be one token long.
pub fn single_step_bodies(body: &[Stmt]) -> Vec<TextRange> {
    let mut finder = SingleStepBranches::default();
    finder.visit_body(body);
    finder.bodies
}

/// The bodies of `if`s whose test requires a sequence length of 1, and the names bound to such
/// tests.
#[derive(Default)]
struct SingleStepBranches {
    flags: HashSet<String>,
    bodies: Vec<TextRange>,
}

impl SingleStepBranches {
    /// `seq_len == 1`, `x.shape[1] == 1`, `a and seq_len == 1`, or a flag bound to one.
    fn requires_single_step(&self, test: &Expr) -> bool {
        match test {
            Expr::BoolOp(op) if op.op == BoolOp::And => op.values.iter().any(|value| self.requires_single_step(value)),
            Expr::Compare(compare) => {
                let is_one = |e: &Expr| matches!(e, Expr::NumberLiteral(n) if matches!(&n.value, Number::Int(i) if i.as_u64() == Some(1)));
                matches!((compare.ops.as_ref(), compare.comparators.as_ref()), ([CmpOp::Eq], [right])
                    if (is_one(right) && is_sequence_length(&compare.left)) || (is_one(&compare.left) && is_sequence_length(right)))
            }
            Expr::Name(name) => self.flags.contains(name.id.as_str()),
            _ => false,
        }
    }
}

/// Words of a name that say it holds a sequence length (`seq_len`, `q_len`, `seqlen`,
/// `query_length`, `num_tokens`), and the single letters that `B, T, C = x.shape` / `B, L, D`
/// give it.
const SEQUENCE_LENGTH_WORDS: &[&str] =
    &["seq", "seqlen", "len", "length", "qlen", "kvlen", "tokens", "token", "steps", "timesteps", "t", "l"];

/// A size that is a sequence length: a name saying so, or a dimension other than the first
/// (`x.shape[1]`, `x.size(-2)`): dimension 0 is the batch in torch's layouts, and a batch of
/// one says nothing about how long the sequence is.
fn is_sequence_length(size: &Expr) -> bool {
    let not_first = |index: Option<&Expr>| match index {
        Some(Expr::NumberLiteral(n)) => matches!(&n.value, Number::Int(i) if i.as_u64() != Some(0)),
        Some(Expr::UnaryOp(_)) => true,
        _ => false,
    };
    match size {
        Expr::Name(name) => {
            let name = name.id.to_ascii_lowercase();
            name.split('_').any(|word| SEQUENCE_LENGTH_WORDS.contains(&word))
        }
        Expr::Subscript(subscript) => {
            let of_shape =
                matches!(subscript.value.as_ref(), Expr::Attribute(attr) if attr.attr.id.as_str() == "shape");
            of_shape && not_first(Some(&subscript.slice))
        }
        Expr::Call(call) => {
            let of_size = matches!(call.func.as_ref(), Expr::Attribute(method) if method.attr.id.as_str() == "size");
            of_size && not_first(call.arguments.args.first())
        }
        _ => false,
    }
}

impl<'a> Visitor<'a> for SingleStepBranches {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Assign(assign) => {
                if let [Expr::Name(name)] = assign.targets.as_slice()
                    && self.requires_single_step(&assign.value)
                {
                    self.flags.insert(name.id.to_string());
                }
            }
            Stmt::If(if_stmt) => {
                if let (true, Some(first), Some(last)) =
                    (self.requires_single_step(&if_stmt.test), if_stmt.body.first(), if_stmt.body.last())
                {
                    self.bodies.push(TextRange::new(first.start(), last.end()));
                }
            }
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => return,
            _ => {}
        }
        walk_stmt(self, stmt);
    }
}

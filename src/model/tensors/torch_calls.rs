//! Torch's functions and methods by name, as the tensors model reads them: which return Python
//! values and which tensors, which reduce, work elementwise, select by mask, or keep a tensor's
//! rank or dtype.

/// `Some(true)` for a torch function that returns a tensor, `Some(false)` for one that returns a
/// Python value or is not about tensors, `None` for names outside torch.
pub fn torch_function_returns_tensor(qualified: &str) -> Option<bool> {
    let rest = qualified.strip_prefix("torch.")?;
    let name = ["nn.functional.", "linalg.", "fft.", "special."]
        .iter()
        .find_map(|namespace| rest.strip_prefix(namespace))
        .unwrap_or(rest);
    if name.contains('.') {
        // `torch.jit.is_scripting`, `torch.cuda.is_available`, `torch.distributed.get_rank`...
        return Some(false);
    }
    const PYTHON_VALUES: &[&str] = &[
        "numel",
        "finfo",
        "iinfo",
        "device",
        "dtype",
        "Size",
        "Generator",
        "manual_seed",
        "typename",
        "no_grad",
        "enable_grad",
        "inference_mode",
        "autocast",
        "compile",
        "broadcast_shapes",
        "result_type",
        "promote_types",
        "can_cast",
        "equal",
        "allclose",
        "save",
        "load",
        "sym_int",
        "sym_float",
        "sym_max",
        "sym_min",
        "sym_not",
        "seed",
        "initial_seed",
        "Parameter",
    ];
    let python_value = ["is_", "get_", "are_", "set_", "use_", "has_", "_"].iter().any(|p| name.starts_with(p))
        || PYTHON_VALUES.contains(&name)
        || name.starts_with(|c: char| c.is_ascii_uppercase()) && name != "Tensor";
    Some(!python_value)
}

/// Methods of a tensor that return Python values (or nothing useful), not tensors.
pub(super) const PYTHON_VALUE_METHODS: &[&str] = &[
    "size",
    "dim",
    "ndimension",
    "numel",
    "nelement",
    "item",
    "tolist",
    "numpy",
    "is_contiguous",
    "is_floating_point",
    "is_complex",
    "is_signed",
    "is_pinned",
    "is_shared",
    "element_size",
    "data_ptr",
    "stride",
    "storage_offset",
    "get_device",
    "type",
    "untyped_storage",
    "register_hook",
    "backward",
    "equal",
    "allclose",
    "has_names",
    "dim_order",
    "__len__",
    "keys",
    "values",
    "items",
    "get",
];

/// Reductions over every element when called without `dim`: their result is a 0-d tensor.
pub const FULL_REDUCTIONS: &[&str] = &[
    "logsumexp",
    "sum",
    "mean",
    "max",
    "min",
    "amax",
    "amin",
    "norm",
    "prod",
    "std",
    "var",
    "any",
    "all",
    "argmax",
    "argmin",
    "median",
    "nansum",
    "nanmean",
    "count_nonzero",
];

/// Elementwise functions of one tensor (numbers as the other arguments): the result has the
/// shape, and the rank, of that tensor.
pub const ELEMENTWISE: &[&str] = &[
    "clamp",
    "clamp_min",
    "clamp_max",
    "clip",
    "abs",
    "neg",
    "exp",
    "log",
    "log1p",
    "expm1",
    "sqrt",
    "rsqrt",
    "sigmoid",
    "tanh",
    "relu",
    "gelu",
    "silu",
    "softplus",
    "elu",
    "leaky_relu",
    "hardtanh",
    "nan_to_num",
    "sign",
    "floor",
    "ceil",
    "round",
    "trunc",
    "reciprocal",
    "square",
    "clone",
    "contiguous",
    "detach",
];

/// Conversions and comparisons, which keep the rank of the (first) tensor operand too.
pub(super) const RANK_KEEPING_ALSO: &[&str] = &[
    "pow",
    "float",
    "half",
    "double",
    "long",
    "int",
    "bool",
    "to",
    "type_as",
    "logical_not",
    "eq",
    "ne",
    "gt",
    "ge",
    "lt",
    "le",
    "maximum",
    "minimum",
    "isnan",
    "isinf",
    "isfinite",
];

pub(super) fn keeps_rank(name: &str) -> bool {
    ELEMENTWISE.contains(&name) || RANK_KEEPING_ALSO.contains(&name)
}

/// Attributes of a tensor that are tensors (all others — `.shape`, `.dtype`, `.device` — are not).
pub(super) const TENSOR_ATTRIBUTES: &[&str] = &["T", "mT", "H", "mH", "data", "grad", "real", "imag"];

/// Methods that only a tensor has (unlike `reshape` or `mean`, which numpy arrays share): an
/// unannotated parameter used with one of them is a tensor.
pub(super) const TENSOR_ONLY_METHODS: &[&str] = &[
    "view",
    "view_as",
    "unsqueeze",
    "permute",
    "masked_fill",
    "masked_fill_",
    "contiguous",
    "softmax",
    "log_softmax",
    "type_as",
    "expand",
    "expand_as",
    "unflatten",
    "chunk",
    "narrow",
    "new_zeros",
    "new_ones",
    "new_full",
    "new_empty",
    "new_tensor",
    "float",
    "half",
    "bfloat16",
    "detach",
    "requires_grad_",
    "unbind",
    "transpose",
    "flatten",
    "to",
    "bool",
    "long",
    "sigmoid",
    "relu",
    "clamp",
    "clamp_min",
    "clamp_max",
    "masked_scatter",
    "gather",
    "scatter",
    "index_select",
    "bmm",
    "baddbmm",
    "repeat_interleave",
    "size",
    "dim",
    // numpy arrays `copy()`, tensors `clone()`.
    "clone",
];

/// Torch functions whose first argument is not a tensor (a shape, a list, a number, an equation).
pub(super) const TAKES_NO_TENSOR: &[&str] = &[
    "ones",
    "zeros",
    "empty",
    "full",
    "rand",
    "randn",
    "randint",
    "randperm",
    "arange",
    "range",
    "linspace",
    "logspace",
    "eye",
    "tensor",
    "as_tensor",
    "asarray",
    "from_numpy",
    "cat",
    "concat",
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "dstack",
    "broadcast_tensors",
    "block_diag",
    "cartesian_prod",
    "meshgrid",
    "einsum",
    "Tensor",
    "LongTensor",
    "FloatTensor",
    "BoolTensor",
    "tril_indices",
    "triu_indices",
    "scalar_tensor",
];

/// Tensor methods and torch functions whose result is a boolean tensor.
pub const MASK_METHODS: &[&str] = &[
    "bool",
    "eq",
    "ne",
    "gt",
    "ge",
    "lt",
    "le",
    "isnan",
    "isinf",
    "isfinite",
    "isneginf",
    "isposinf",
    "logical_and",
    "logical_or",
    "logical_not",
    "logical_xor",
    "isin",
    "signbit",
    "any",
    "all",
];

/// Methods whose result has the receiver's dtype: called on a mask, they give a mask
/// (`keep.masked_fill(pad, False)`, `mask.unsqueeze(-1)`).
pub(super) const DTYPE_KEEPING_METHODS: &[&str] = &[
    "masked_fill",
    "clone",
    "detach",
    "contiguous",
    "reshape",
    "flatten",
    "squeeze",
    "unsqueeze",
    "expand",
    "expand_as",
    "transpose",
    "permute",
    "repeat",
];

/// Torch functions and tensor methods that make a new tensor from sizes or values alone: no one
/// else holds it, and it requires grad only when asked to (`requires_grad=True`).
pub const FACTORIES: &[&str] = &[
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "new_zeros",
    "new_ones",
    "new_empty",
    "new_full",
    "new_tensor",
    "arange",
    "randn",
    "rand",
    "randint",
    "randn_like",
    "rand_like",
    "tensor",
];

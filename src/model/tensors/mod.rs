//! What is a tensor: which values of a compiled function are tensors or masks, which inputs are
//! presumed tensors, which attributes hold Python numbers, and where unbacked values go.

pub mod capture_crashes;
pub mod comprehensions;
pub mod einops_calls;
pub mod inputs;
pub mod scalars;
pub mod tensor;
pub mod torch_calls;
pub mod unbacked;

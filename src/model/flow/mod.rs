//! How values flow: calls between the file's functions, the submodules `self` holds, the loops a
//! function runs in, the binding that reaches a use, and the Python ints read from tensor sizes.

pub mod calls;
pub mod grad_free;
pub mod imported_calls;
pub mod impossible_calls;
pub mod loops;
pub mod message_checks;
pub mod own_containers;
pub mod reaching_binding;
pub mod shapes;
pub mod submodules;

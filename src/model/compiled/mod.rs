//! What runs compiled: the functions Dynamo traces (`reach`, from the project's compile calls,
//! hooks and decorators), and the walk of their code that skips what the user keeps out of it.

pub mod compile_calls;
pub mod compile_scope;
pub mod compiled_code;
pub mod dynamo_config;
pub mod hooks;
pub mod module_builders;
pub mod reach;
pub mod uncalled_setters;
pub mod untraced;
pub mod yielded_modules;

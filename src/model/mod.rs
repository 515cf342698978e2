//! What the code means for torch.compile: the project index across files, and per file the
//! functions that run in the compiled region.

pub mod calls;
pub mod collect;
pub mod compile_calls;
pub mod compile_scope;
pub mod compiled_code;
pub mod comprehensions;
pub mod config_defaults;
pub mod constructor_flags;
pub mod dead_code;
pub mod dynamo_config;
pub mod facts;
pub mod file;
pub mod finding_conditions;
pub mod hooks;
pub mod imports;
pub mod index;
pub mod inputs;
pub mod layerdrop;
pub mod loops;
pub mod module;
pub mod mutation;
pub mod rare_paths;
pub mod reach;
pub mod replaced_submodules;
pub mod scalars;
pub mod shapes;
pub mod submodules;
pub mod tensor;
pub mod unbacked;
pub mod uncalled_setters;
pub mod unset_flags;
pub mod untraced;

//! What the defaults leave off: code that runs only under a config, a flag, a constructor argument
//! or a replaced submodule that the defaults do not give, and the condition each finding needs.

pub mod call_conditions;
pub mod config_defaults;
pub mod constructor_flags;
pub mod finding_conditions;
pub mod half_precision;
pub mod keyword_flags;
pub mod layerdrop;
pub mod none_tests;
pub mod replaced_submodules;
pub mod test_models;
pub mod turned_on;
pub mod unset_flags;
pub mod untested_values;

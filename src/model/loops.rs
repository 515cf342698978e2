//! The loop amplifier: a graph break inside a `for`/`while` body of a traced frame makes Dynamo
//! give up on the whole frame ("graph break in loop", GB7000) and run it eagerly. The body may hold
//! the break itself, or call what breaks: a method, a module whose forward breaks, a hook on
//! modules that run in a loop.

use std::fmt;

use crate::model::compiled_code::Site;
use crate::model::file::FileModel;

/// Why a graph break at a site costs the whole frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InLoop {
    /// The break sits in a loop body of the function itself.
    Body,
    /// The function is a hook registered in a loop: on repeated blocks that `forward` runs in a loop.
    HookOnRepeatedModules,
}

impl fmt::Display for InLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InLoop::Body => f.write_str("inside a loop"),
            InLoop::HookOnRepeatedModules => f.write_str("in a hook on modules that run in a loop"),
        }
    }
}

/// Whether a graph break at `site` in `function` sits in a loop of a traced frame, and how.
pub fn in_loop(model: &FileModel, function: usize, site: Site) -> Option<InLoop> {
    if site.in_loop {
        return Some(InLoop::Body);
    }
    let looped_hook = model.hooks.iter().any(|hook| hook.function == function && hook.in_loop);
    looped_hook.then_some(InLoop::HookOnRepeatedModules)
}

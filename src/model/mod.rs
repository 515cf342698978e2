//! What the code means for torch.compile, in rooms that each answer one question; a room reads
//! only rooms below it in this list: `tensors` (what is a tensor), `defaults` (what the defaults
//! leave off), `flow` (how values flow between functions and attributes), `compiled` (what runs
//! compiled), `file` (one file's structure, and what the index tells it). Above them all,
//! `collect` builds a file's model in one walk and `index` joins the files.

pub mod collect;
pub mod compiled;
pub mod defaults;
pub mod file;
pub mod flow;
pub mod index;
pub mod tensors;

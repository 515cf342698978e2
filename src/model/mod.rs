//! What the code means for torch.compile, in rooms that each answer one question, every arrow
//! running down this list: `tensors` (what is a tensor) and `defaults` (what the defaults leave
//! off) read `flow` (how values flow between functions and attributes), which reads `compiled`
//! (what runs compiled), which reads `file` (one file's structure, and what the index tells it).
//! Above them all: `collect` builds a file's model in one walk, `index` joins the files.

pub mod collect;
pub mod compiled;
pub mod defaults;
pub mod file;
pub mod flow;
pub mod index;
pub mod tensors;

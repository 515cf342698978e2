//! The floor no analysis can beat: walk a tree like tcfix does and parse every Python file once,
//! in parallel, with ruff_python_parser. Used by `scripts/bench`.

use std::path::PathBuf;

use rayon::prelude::*;

// The same allocator as tcfix, so the floor is the best a parse can do, not a handicap.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    tcfix::memory::return_memory_promptly();
    let root = std::env::args().nth(1).unwrap_or_else(|| ".".to_string());
    let files: Vec<PathBuf> = ignore::WalkBuilder::new(&root)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .map(|entry| entry.into_path())
        .filter(|path| tcfix::discover::is_python(path))
        .collect();
    let parsed = files
        .par_iter()
        .filter(|path| std::fs::read_to_string(path).is_ok_and(|text| ruff_python_parser::parse_module(&text).is_ok()))
        .count();
    println!("{parsed} of {} files parsed", files.len());
}

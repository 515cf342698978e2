//! How tcfix's processes use memory. mimalloc keeps freed memory for a while and commits whole
//! arenas up front; a linter frees each file's tree as it goes, so returning memory at once keeps
//! peak RSS near what is live (measured on transformers: 127 MB -> 93 MB, no slower).

/// Call first thing in `main`. Option numbers as in mimalloc.h (the same in its v2 and v3).
pub fn return_memory_promptly() {
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: setting an option is a plain store that mimalloc allows at any time.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}

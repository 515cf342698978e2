//! The public torch names a fix may write, for the oldest torch the project targets:
//! `torch.compiler.is_compiling` arrived in 2.3 and `torch.compiler.disable` in 2.1; older code
//! uses `torch._dynamo.is_compiling` / `torch._dynamo.disable` (2.0).

/// A torch release, major and minor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TorchVersion(pub u32, pub u32);

impl TorchVersion {
    /// Without configuration, fixes target torch 2.3 and later.
    pub const DEFAULT: TorchVersion = TorchVersion(2, 3);
    /// torch.compile came with 2.0: an older target has nothing to fix for.
    pub const FIRST_WITH_COMPILE: TorchVersion = TorchVersion(2, 0);

    /// `"2.1"`, `"2.1.0"`.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.trim().split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        parts.next().is_none_or(|patch| patch.chars().all(|c| c.is_ascii_alphanumeric())).then_some(Self(major, minor))
    }
}

impl Default for TorchVersion {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// `torch.compiler.is_compiling()` or, before 2.3, `torch._dynamo.is_compiling()`.
pub fn is_compiling_call(torch: &str, target: TorchVersion) -> String {
    if target >= TorchVersion(2, 3) {
        format!("{torch}.compiler.is_compiling()")
    } else {
        format!("{torch}._dynamo.is_compiling()")
    }
}

/// `torch.compiler.disable` or, before 2.1, `torch._dynamo.disable`.
pub fn disable(torch: &str, target: TorchVersion) -> String {
    if target >= TorchVersion(2, 1) { format!("{torch}.compiler.disable") } else { format!("{torch}._dynamo.disable") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_targets_get_the_dynamo_names() {
        assert_eq!(TorchVersion::parse("2.1"), Some(TorchVersion(2, 1)));
        assert_eq!(TorchVersion::parse("2.10.1"), Some(TorchVersion(2, 10)));
        assert_eq!(TorchVersion::parse("two"), None);
        assert_eq!(is_compiling_call("torch", TorchVersion(2, 2)), "torch._dynamo.is_compiling()");
        assert_eq!(is_compiling_call("th", TorchVersion(2, 3)), "th.compiler.is_compiling()");
        assert_eq!(disable("torch", TorchVersion(2, 0)), "torch._dynamo.disable");
        assert_eq!(disable("torch", TorchVersion(2, 1)), "torch.compiler.disable");
        assert!(TorchVersion(2, 10) > TorchVersion(2, 3));
    }
}

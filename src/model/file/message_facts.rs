//! What the index tells a file of the project's message checks (`flow::message_checks`): which
//! functions do nothing when their condition holds and raise with their message when it fails,
//! and which of their parameters accept the message as a callable. A file records its own (by
//! local name), the index qualifies them, follows re-exports and hands the set to every file.

/// One fact about a function of the project, named by a qualified (or, in a file's summary,
/// local) name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum MessageFact {
    /// The function is such a check (`torch._assert`, or `def _assert(cond, msg): assert cond, msg`).
    Check(String),
    /// The function's parameter is annotated to accept a callable message
    /// (`msg: str | Callable[[], str]`).
    CallableMessage(String, MessageParameter),
}

/// A parameter, as a call reaches it: by position (counted from 0) or by keyword.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum MessageParameter {
    At(usize),
    Named(String),
}

impl MessageFact {
    /// The function the fact is about.
    pub fn callee(&self) -> &str {
        match self {
            MessageFact::Check(callee) | MessageFact::CallableMessage(callee, _) => callee,
        }
    }

    /// The same fact about the function under another name (qualified, or re-exported).
    pub fn about(&self, callee: String) -> MessageFact {
        match self {
            MessageFact::Check(_) => MessageFact::Check(callee),
            MessageFact::CallableMessage(_, parameter) => MessageFact::CallableMessage(callee, parameter.clone()),
        }
    }
}

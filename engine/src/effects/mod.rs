//! Effect handlers: the only place where verdicts touch the host. The evaluator never
//! does I/O; these modules do, and nothing else does.

pub mod journal;
pub mod lock;
pub mod safe_fs;

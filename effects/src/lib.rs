//! Effect handlers: the only place where verdicts touch the host. The evaluator never
//! does I/O; these modules do, and nothing else does.

pub mod decision_log;
pub mod journal;
pub mod landing;
pub mod lock;
pub mod safe_fs;
pub mod sandbox;

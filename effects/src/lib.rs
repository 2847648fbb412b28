//! Effect handlers: the only place where verdicts touch the host. The evaluator never
//! does I/O; these modules do, and nothing else does.

pub mod atomic_write;
pub mod clock;
pub mod decision_log;
pub mod journal;
pub mod landing;
pub mod project_lock;
pub mod safe_fs;
pub mod sandbox;
pub mod user_key;

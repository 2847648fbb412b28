//! One module per subcommand.

pub mod apply;
pub mod check;
pub mod compile;
pub mod decide;
pub mod diff;
pub mod docs;
pub mod fmt;
pub mod gate;
pub mod githook;
pub mod hook;
pub mod init;
pub mod journal;
pub mod lock;
pub mod log;
pub mod mcp;
pub mod plugin;
pub mod query;
pub mod run;
pub mod scan;
pub mod session;
pub mod test;

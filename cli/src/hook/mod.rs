//! Agent hooks: the judging of an event's actions against the policies ([`judge`]), what
//! an edit's text adds ([`content`]), the files `compile` owns ([`governance`]), the answer
//! given the agent's permission mode ([`mode`]), the files a search's glob picks
//! ([`search`]) and its decision-log record ([`record`]);
//! the wire protocols live with each agent in `contextos-adapters`.

pub mod content;
pub mod egress;
pub mod governance;
pub mod judge;
pub mod mode;
pub mod record;
pub mod search;
pub mod taint;

//! Agent hooks: the wire protocols ([`protocol`], [`patch`]) and the judging of an
//! event's actions against the policies ([`judge`]).

pub mod judge;
pub mod patch;
pub mod protocol;

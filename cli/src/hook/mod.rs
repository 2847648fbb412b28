//! Agent hooks: the judging of an event's actions against the policies ([`judge`]) and
//! its decision-log record ([`record`]); the wire protocols live with each agent in
//! `contextos-adapters`.

pub mod judge;
pub mod record;

//! What the emitters share: the text agents read. Markdown escaping, YAML front matter,
//! brace-expanded globs, rules described in plain words and the guide files.

pub(crate) mod globs;
pub(crate) mod guides;
pub(crate) mod ignore;
pub(crate) mod markdown;
pub(crate) mod regex;
pub(crate) mod rules;
pub(crate) mod yaml;

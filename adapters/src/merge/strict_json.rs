//! JSON parsed strictly: a syntax error, a duplicate key or a non-object root refuses the
//! file instead of silently keeping one of two values.
//!
//! Why by hand: `serde_json::Value` keeps the last of two equal keys without a word, and
//! a settings file whose second `"deny"` silently replaced the first would lose the user's
//! rules (or ContextOS's). serde_json has no option for it, and `serde_with`'s
//! duplicate-key helpers work on typed maps, not on an arbitrary document whose key order
//! must be kept. So this is the small `DeserializeSeed` over serde_json's own parser that
//! Cedar keeps for the same reason: the grammar, the escapes and the exact line and column
//! of every error stay serde_json's; only the duplicate check, which also names the key,
//! is ours.

use super::error::{MergeError, MergeErrorKind};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::fmt;

#[derive(Clone, Copy)]
struct Strict<'a> {
    duplicate: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number out of range"))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if out.contains_key(&k) {
                let msg = format!("duplicate key {k:?}");
                *self.duplicate.borrow_mut() = Some(k);
                return Err(de::Error::custom(msg));
            }
            let v = map.next_value_seed(self)?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

/// Why strict parsing failed: (line, column, message, duplicated key).
pub(crate) type ParseFailure = (usize, usize, String, Option<String>);

pub(crate) fn parse_strict(text: &str) -> Result<Value, ParseFailure> {
    let duplicate = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let result = Strict {
        duplicate: &duplicate,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    result.map_err(|e| {
        (
            e.line(),
            e.column(),
            serde_message(&e),
            duplicate.into_inner(),
        )
    })
}

pub(crate) fn parse_json_object(text: &str) -> Result<Map<String, Value>, MergeError> {
    match parse_strict(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(MergeError::from(MergeErrorKind::JsonRoot {
            found: type_name(&other),
        })),
        Err((line, column, _, Some(key))) => {
            Err(MergeError::from(MergeErrorKind::JsonDuplicateKey {
                line,
                column,
                key,
            }))
        }
        Err((line, column, message, None)) => Err(MergeError::from(MergeErrorKind::JsonSyntax {
            line,
            column,
            message,
        })),
    }
}

pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// serde_json's message without its trailing ` at line L column C`: the position is
/// reported on its own.
pub(crate) fn serde_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    full.strip_suffix(&suffix).unwrap_or(&full).to_string()
}

//! Canonical JSON and the published hash: RFC 8785 (JSON Canonicalization Scheme), so the same
//! data hashes the same whatever key order or number spelling a client sent.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The RFC 8785 canonical form of a JSON value.
pub fn canonical_json(value: &Value) -> String {
    // serde_json::Value always serialises; JCS only refuses non-finite numbers, which a Value
    // cannot hold.
    serde_jcs::to_string(value).expect("a JSON value has a canonical form")
}

/// `publishedHash`: lowercase hex SHA-256 of the canonical JSON of the published data.
pub fn published_hash(data: &Value) -> String {
    crate::hex::encode(&Sha256::digest(canonical_json(data).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_and_whitespace_dropped() {
        let a: Value =
            serde_json::from_str(r#"{ "b": [1, {"z": true, "a": null}], "a": "x" }"#).unwrap();
        assert_eq!(
            canonical_json(&a),
            r#"{"a":"x","b":[1,{"a":null,"z":true}]}"#
        );
        let b: Value = serde_json::from_str(r#"{"a":"x","b":[1,{"a":null,"z":true}]}"#).unwrap();
        assert_eq!(published_hash(&a), published_hash(&b));
    }

    #[test]
    fn numbers_are_written_the_ecmascript_way() {
        // RFC 8785 section 3.2.2.3 examples.
        assert_eq!(canonical_json(&json!(1.0)), "1");
        assert_eq!(canonical_json(&json!(1e21)), "1e+21");
        assert_eq!(canonical_json(&json!(0.000001)), "0.000001");
        assert_eq!(canonical_json(&json!(1e-7)), "1e-7");
    }

    #[test]
    fn the_hash_is_lowercase_hex_sha256() {
        let h = published_hash(&json!({}));
        // SHA-256 of "{}".
        assert_eq!(
            h,
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }
}

//! Lowercase hexadecimal: how hashes and MACs are written in the database, in responses and in
//! signed links.

/// `bytes` as lowercase hex.
pub fn encode(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The bytes `text` spells in hex (either case); `None` for anything else.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_non_hex() {
        assert_eq!(encode(&[0, 15, 255]), "000fff");
        assert_eq!(decode("000fFF"), Some(vec![0, 15, 255]));
        for bad in ["0", "zz", "+f", "é0", " 0"] {
            assert_eq!(decode(bad), None, "{bad:?}");
        }
    }
}

//! Checksums providers build into their tokens ([`Checksum`]), so a value with a token's
//! shape can be told from one the provider issued.

use contextos_core::detector::Checksum;

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it).
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// `n` in base62 (`0-9A-Za-z`), left-padded with `0` to `width` digits.
fn base62(mut n: u32, width: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(width);
    while n > 0 {
        out.push(BASE62[(n % 62) as usize]);
        n /= 62;
    }
    while out.len() < width {
        out.push(b'0');
    }
    out.reverse();
    out
}

/// `Some(true)` when `token` carries a valid checksum, `Some(false)` when it has the
/// checksummed layout but the checksum is wrong, `None` when the layout does not apply
/// (an older token format of the same prefix: nothing to check).
pub fn verify(kind: Checksum, token: &[u8]) -> Option<bool> {
    match kind {
        Checksum::GithubCrc32 => {
            // `<prefix>_` + 30 random base62 characters + 6 of checksum.
            let cut = token.iter().rposition(|b| *b == b'_')?;
            let body = &token[cut + 1..];
            if body.len() != 36 || !body.iter().all(u8::is_ascii_alphanumeric) {
                return None;
            }
            let (random, sum) = body.split_at(30);
            Some(base62(crc32(random), 6) == sum)
        }
        Checksum::GrafanaCrc32 => {
            // `glsa_<32 letters and digits>_<8 hex>`.
            let cut = token.iter().rposition(|b| *b == b'_')?;
            let (key, sum) = (&token[..cut], &token[cut + 1..]);
            if sum.len() != 8 || !sum.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            Some(sum.eq_ignore_ascii_case(&grafana_sum(key)))
        }
    }
}

/// Grafana's checksum of `key`: the CRC-32 bytes little-endian, as lower-case hex.
pub fn grafana_sum(key: &[u8]) -> Vec<u8> {
    crc32(key)
        .to_le_bytes()
        .iter()
        .flat_map(|b| {
            let hex = b"0123456789abcdef";
            [hex[usize::from(b >> 4)], hex[usize::from(b & 15)]]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_has_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn github_layout_is_checked() {
        let random = b"abcdefghijklmnopqrstuvwxyzABCD";
        let mut token = b"ghp_".to_vec();
        token.extend_from_slice(random);
        token.extend_from_slice(&base62(crc32(random), 6));
        assert_eq!(verify(Checksum::GithubCrc32, &token), Some(true));
        let last = token.len() - 1;
        token[last] = if token[last] == b'0' { b'1' } else { b'0' };
        assert_eq!(verify(Checksum::GithubCrc32, &token), Some(false));
        // A 76-character refresh token predates the checksummed layout.
        let long = [b"ghr_".as_slice(), &[b'a'; 76]].concat();
        assert_eq!(verify(Checksum::GithubCrc32, &long), None);
    }

    #[test]
    fn grafana_layout_is_checked() {
        let key = b"glsa_abcdefghijklmnopqrstuvwxyzABCDEF";
        // The CRC-32 bytes are written low byte first.
        let crc = crc32(key).to_le_bytes();
        let sum = grafana_sum(key);
        assert_eq!(sum.len(), 8);
        assert_eq!(
            u8::from_str_radix(std::str::from_utf8(&sum[..2]).unwrap(), 16).unwrap(),
            crc[0]
        );
        let mut token = key.to_vec();
        token.push(b'_');
        token.extend_from_slice(&sum);
        assert_eq!(verify(Checksum::GrafanaCrc32, &token), Some(true));
        let last = token.len() - 1;
        token[last] = if token[last] == b'0' { b'1' } else { b'0' };
        assert_eq!(verify(Checksum::GrafanaCrc32, &token), Some(false));
        // Big-endian order is not Grafana's.
        let mut be = key.to_vec();
        be.push(b'_');
        be.extend(format!("{:08x}", crc32(key)).bytes());
        if crc32(key).swap_bytes() != crc32(key) {
            assert_eq!(verify(Checksum::GrafanaCrc32, &be), Some(false));
        }
        assert_eq!(verify(Checksum::GrafanaCrc32, b"glsa_abc_12"), None);
    }
}

//! Text forms of byte strings under the expected-later-encoding tags 21, 22 and 23
//! (Kubernetes' ByteStringToString: base64url without padding, base64 with padding, lower hex).

const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Which text form a byte string takes when decoded as a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaterEncoding {
    /// Tag 21.
    Base64Url,
    /// Tag 22.
    Base64,
    /// Tag 23.
    Hex,
}

impl LaterEncoding {
    pub(crate) fn from_tag(tag: u64) -> Option<Self> {
        match tag {
            21 => Some(Self::Base64Url),
            22 => Some(Self::Base64),
            23 => Some(Self::Hex),
            _ => None,
        }
    }

    pub(crate) fn encode(self, bytes: &[u8]) -> String {
        match self {
            Self::Base64Url => base64(bytes, URL, false),
            Self::Base64 => base64(bytes, STD, true),
            Self::Hex => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let mut s = String::with_capacity(bytes.len() * 2);
                for &b in bytes {
                    s.push(HEX[(b >> 4) as usize] as char);
                    s.push(HEX[(b & 15) as usize] as char);
                }
                s
            }
        }
    }
}

fn base64(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        let k = c.len() + 1;
        for i in 0..4 {
            if i < k {
                s.push(alphabet[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else if pad {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(LaterEncoding::Base64.encode(b"hello"), "aGVsbG8=");
        assert_eq!(LaterEncoding::Base64.encode(b""), "");
        assert_eq!(LaterEncoding::Base64.encode(b"ab"), "YWI=");
        assert_eq!(LaterEncoding::Base64.encode(b"abc"), "YWJj");
        assert_eq!(LaterEncoding::Base64Url.encode(&[0xfb, 0xff]), "-_8");
        assert_eq!(LaterEncoding::Hex.encode(&[1, 2, 0xab]), "0102ab");
    }
}

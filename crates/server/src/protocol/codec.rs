//! Little-endian and length-encoded primitives of the MySQL protocol.
//!
//! Owns: a bounds-checked cursor over a packet payload (`Cursor`) and the append helpers that
//! encode integers and strings into an output buffer.
//! Must never: panic on short or malformed input — every read returns `Malformed` instead.

/// A payload ended early or held an impossible value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed packet")]
pub struct Malformed;

/// A read position in a payload. Every read checks bounds.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor { buf, pos: 0 }
    }
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        let end = self.pos.checked_add(n).ok_or(Malformed)?;
        let s = self.buf.get(self.pos..end).ok_or(Malformed)?;
        self.pos = end;
        Ok(s)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], Malformed> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    pub fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.array::<1>()?[0])
    }
    pub fn u16(&mut self) -> Result<u16, Malformed> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub fn u24(&mut self) -> Result<u32, Malformed> {
        let a: [u8; 3] = self.array()?;
        Ok(u32::from_le_bytes([a[0], a[1], a[2], 0]))
    }
    pub fn u32(&mut self) -> Result<u32, Malformed> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Result<u64, Malformed> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    /// A length-encoded integer. `None` is the NULL marker 0xFB.
    pub fn lenenc_int(&mut self) -> Result<Option<u64>, Malformed> {
        match self.u8()? {
            0xFB => Ok(None),
            0xFC => Ok(Some(u64::from(self.u16()?))),
            0xFD => Ok(Some(u64::from(self.u24()?))),
            0xFE => Ok(Some(self.u64()?)),
            0xFF => Err(Malformed),
            b => Ok(Some(u64::from(b))),
        }
    }
    /// A length-encoded string; NULL is malformed here.
    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8], Malformed> {
        let len = self.lenenc_int()?.ok_or(Malformed)?;
        let len = usize::try_from(len).map_err(|_| Malformed)?;
        self.take(len)
    }
    /// Bytes up to (not including) the next NUL, which is consumed. A missing NUL takes the
    /// rest of the payload (clients are lax about the last field).
    pub fn nul_bytes(&mut self) -> &'a [u8] {
        let rest = &self.buf[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(i) => {
                self.pos += i + 1;
                &rest[..i]
            }
            None => {
                self.pos = self.buf.len();
                rest
            }
        }
    }
    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        let rest = &self.buf[self.pos..];
        self.pos = self.buf.len();
        rest
    }
}

pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    if v < 0xFB {
        out.push(v as u8);
    } else if v <= 0xFFFF {
        out.push(0xFC);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v <= 0xFF_FFFF {
        out.push(0xFD);
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&v.to_le_bytes());
    }
}
pub fn put_lenenc_bytes(out: &mut Vec<u8>, s: &[u8]) {
    put_lenenc_int(out, s.len() as u64);
    out.extend_from_slice(s);
}
pub fn put_nul_str(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trips_at_every_width() {
        for v in [
            0u64,
            250,
            251,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc_int(&mut out, v);
            let mut c = Cursor::new(&out);
            assert_eq!(c.lenenc_int(), Ok(Some(v)));
            assert!(c.is_empty());
        }
    }

    #[test]
    fn short_input_is_malformed_not_a_panic() {
        assert_eq!(Cursor::new(&[0xFC, 1]).lenenc_int(), Err(Malformed));
        assert_eq!(Cursor::new(&[0xFE, 1, 2]).lenenc_int(), Err(Malformed));
        assert_eq!(Cursor::new(&[5, b'a']).lenenc_bytes(), Err(Malformed));
        assert_eq!(
            Cursor::new(&[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]).lenenc_bytes(),
            Err(Malformed)
        );
        assert_eq!(Cursor::new(&[1, 2, 3]).u32(), Err(Malformed));
    }

    #[test]
    fn nul_string_without_terminator_takes_the_rest() {
        let mut c = Cursor::new(b"ab\0cd");
        assert_eq!(c.nul_bytes(), b"ab");
        assert_eq!(c.nul_bytes(), b"cd");
        assert!(c.is_empty());
        assert_eq!(c.nul_bytes(), b"");
    }
}

//! The `control` file in the redo directory: the checkpoint LSN, written atomically.
//!
//! Owns: the 32-byte control record (magic, format version, checkpoint LSN, CRC32C), its
//! encoder/decoder, and the atomic replace protocol: write `control.tmp`, fsync it, rename
//! it over `control`, fsync the directory.
//!
//! Must never: leave a state where neither the old nor the new control file is readable
//! (the rename is the commit point); accept a control file whose CRC, magic or version does
//! not match (that is an error, not "no checkpoint": starting from LSN 0 over a log whose
//! head was reclaimed would lose data).

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use crate::error::WalError;

/// Name of the control file inside the redo directory.
pub const CONTROL_FILE: &str = "control";
/// Name of the temporary file the next control file is written to.
pub const CONTROL_TMP_FILE: &str = "control.tmp";
/// "TDBWALCT".
pub const CONTROL_MAGIC: [u8; 8] = *b"TDBWALCT";
/// Current format version of the redo log (control file and segments).
pub const WAL_FORMAT_VERSION: u32 = 1;
/// Exact size of the control file.
pub const CONTROL_BYTES: usize = 32;

mod off {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 8;
    pub const FLAGS: usize = 12;
    pub const CHECKPOINT: usize = 16;
    /// 24..28 reserved, zero (covered by the CRC).
    pub const RESERVED: usize = 24;
    /// CRC32C of bytes 0..28.
    pub const CRC: usize = 28;
}

const _: () = assert!(off::CRC + 4 == CONTROL_BYTES);
const _: () = assert!(off::CHECKPOINT + 8 == off::RESERVED);

/// Encodes a control record for `checkpoint_lsn`.
pub fn encode(checkpoint_lsn: u64) -> [u8; CONTROL_BYTES] {
    let mut b = [0u8; CONTROL_BYTES];
    b[off::MAGIC..off::MAGIC + 8].copy_from_slice(&CONTROL_MAGIC);
    b[off::VERSION..off::VERSION + 4].copy_from_slice(&WAL_FORMAT_VERSION.to_le_bytes());
    b[off::FLAGS..off::FLAGS + 4].copy_from_slice(&0u32.to_le_bytes());
    b[off::CHECKPOINT..off::CHECKPOINT + 8].copy_from_slice(&checkpoint_lsn.to_le_bytes());
    b[off::RESERVED..off::RESERVED + 4].copy_from_slice(&0u32.to_le_bytes());
    let crc = crc32c::crc32c(&b[..off::CRC]);
    b[off::CRC..off::CRC + 4].copy_from_slice(&crc.to_le_bytes());
    b
}

fn rd_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn rd_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Decodes a control file's bytes into the checkpoint LSN.
pub fn decode(b: &[u8]) -> Result<u64, String> {
    if b.len() != CONTROL_BYTES {
        return Err(format!(
            "control file is {} bytes, expected {CONTROL_BYTES}",
            b.len()
        ));
    }
    if b.get(off::MAGIC..off::MAGIC + 8) != Some(&CONTROL_MAGIC[..]) {
        return Err("control file has a bad magic".to_string());
    }
    let stored = rd_u32(b, off::CRC).ok_or("short control file")?;
    let computed = crc32c::crc32c(&b[..off::CRC]);
    if stored != computed {
        return Err(format!(
            "control file checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
        ));
    }
    let version = rd_u32(b, off::VERSION).ok_or("short control file")?;
    if version != WAL_FORMAT_VERSION {
        return Err(format!("unsupported redo log format version {version}"));
    }
    rd_u64(b, off::CHECKPOINT).ok_or_else(|| "short control file".to_string())
}

/// Reads the checkpoint LSN from `dir/control`; `Ok(None)` when there is no control file.
pub fn read(dir: &Path) -> Result<Option<u64>, WalError> {
    let path = dir.join(CONTROL_FILE);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(WalError::io(format!("reading {}", path.display()), e)),
    };
    decode(&bytes)
        .map(Some)
        .map_err(|detail| WalError::Corrupt {
            context: path.display().to_string(),
            detail,
        })
}

/// Atomically replaces `dir/control` with one holding `checkpoint_lsn`.
pub fn write(dir: &Path, checkpoint_lsn: u64) -> Result<(), WalError> {
    let tmp = dir.join(CONTROL_TMP_FILE);
    let path = dir.join(CONTROL_FILE);
    let ctx = |what: &str, p: &Path| format!("{what} {}", p.display());
    let mut f = fs::File::create(&tmp).map_err(|e| WalError::io(ctx("creating", &tmp), e))?;
    f.write_all(&encode(checkpoint_lsn))
        .map_err(|e| WalError::io(ctx("writing", &tmp), e))?;
    f.sync_all()
        .map_err(|e| WalError::io(ctx("fsyncing", &tmp), e))?;
    drop(f);
    fs::rename(&tmp, &path).map_err(|e| WalError::io(ctx("renaming over", &path), e))?;
    sync_dir(dir)
}

/// fsyncs a directory so that file creations, renames and deletions in it are durable.
pub fn sync_dir(dir: &Path) -> Result<(), WalError> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| WalError::io(format!("fsyncing directory {}", dir.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for lsn in [0, 1, 123_456_789, u64::MAX] {
            assert_eq!(decode(&encode(lsn)), Ok(lsn));
        }
    }

    #[test]
    fn every_flipped_bit_and_length_is_rejected() {
        let good = encode(42);
        for i in 0..CONTROL_BYTES {
            for bit in 0..8 {
                let mut b = good;
                b[i] ^= 1 << bit;
                assert!(decode(&b).is_err(), "flip of byte {i} bit {bit} accepted");
            }
        }
        assert!(decode(&good[..31]).is_err());
        assert!(decode(&[]).is_err());
    }

    #[test]
    fn write_then_read() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), None);
        write(dir.path(), 7).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(7));
        write(dir.path(), 9).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(9));
        assert!(!dir.path().join(CONTROL_TMP_FILE).exists());
    }
}

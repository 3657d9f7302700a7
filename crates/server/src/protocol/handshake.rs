//! Connection phase: the HandshakeV10 greeting, the client's HandshakeResponse41, the
//! AuthSwitchRequest, COM_CHANGE_USER's payload, and the mysql_native_password check.
//!
//! Owns: those packet layouts and the scramble arithmetic.
//! Must never: accept a login whose token does not verify; trust lengths from the client
//! without bounds checks; store or log passwords or tokens.

use sha1::{Digest, Sha1};

use super::backend::Credential;
use super::codec::{put_nul_str, put_u16, put_u32, Cursor, Malformed};
use super::constants::{cap, charset, status, NATIVE_PASSWORD};

/// Length of the mysql_native_password challenge.
pub const SCRAMBLE_LEN: usize = 20;

/// A fresh challenge: printable ASCII without NUL (some clients treat it as a C string).
pub fn new_scramble() -> [u8; SCRAMBLE_LEN] {
    use rand::Rng;
    let mut rng = rand::rng();
    let mut s = [0u8; SCRAMBLE_LEN];
    for b in &mut s {
        *b = rng.random_range(0x21u8..=0x7E);
    }
    s
}

/// The HandshakeV10 payload.
pub fn greeting(
    out: &mut Vec<u8>,
    server_version: &str,
    conn_id: u32,
    scramble: &[u8; SCRAMBLE_LEN],
) {
    out.push(10);
    put_nul_str(out, server_version.as_bytes());
    put_u32(out, conn_id);
    out.extend_from_slice(&scramble[..8]);
    out.push(0);
    put_u16(out, (cap::SERVER & 0xFFFF) as u16);
    out.push(charset::UTF8MB4_GENERAL_CI);
    put_u16(out, status::AUTOCOMMIT);
    put_u16(out, (cap::SERVER >> 16) as u16);
    out.push((SCRAMBLE_LEN + 1) as u8);
    out.extend_from_slice(&[0u8; 10]);
    out.extend_from_slice(&scramble[8..]);
    out.push(0);
    put_nul_str(out, NATIVE_PASSWORD.as_bytes());
}

/// The AuthSwitchRequest payload asking for mysql_native_password with `scramble`.
pub fn auth_switch_request(out: &mut Vec<u8>, scramble: &[u8; SCRAMBLE_LEN]) {
    out.push(0xFE);
    put_nul_str(out, NATIVE_PASSWORD.as_bytes());
    put_nul_str(out, scramble);
}

/// What the client said in its HandshakeResponse41.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandshakeResponse {
    pub caps: u32,
    pub max_packet: u32,
    pub charset: u8,
    pub user: String,
    pub auth_response: Vec<u8>,
    pub database: Option<String>,
    /// The plugin the client used for `auth_response` (None: client has no PLUGIN_AUTH).
    pub auth_plugin: Option<String>,
}

/// Why a handshake response is unusable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResponseError {
    #[error("malformed handshake response")]
    Malformed,
    #[error("client does not speak protocol 4.1")]
    OldProtocol,
    #[error("client asked for TLS, which this server does not offer")]
    SslRequested,
}

impl From<Malformed> for ResponseError {
    fn from(_: Malformed) -> ResponseError {
        ResponseError::Malformed
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Parses a HandshakeResponse41. Capabilities the server did not offer are masked off.
pub fn parse_response(payload: &[u8]) -> Result<HandshakeResponse, ResponseError> {
    let mut c = Cursor::new(payload);
    let client_caps = if payload.len() >= 4 {
        c.u32()?
    } else {
        u32::from(c.u16()?)
    };
    if client_caps & cap::PROTOCOL_41 == 0 {
        return Err(ResponseError::OldProtocol);
    }
    let caps = client_caps & cap::SERVER;
    let max_packet = c.u32()?;
    let charset = c.u8()?;
    c.take(23)?;
    if c.is_empty() && client_caps & cap::SSL != 0 {
        return Err(ResponseError::SslRequested);
    }
    let user = text(c.nul_bytes());
    let auth_response = if caps & cap::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        c.lenenc_bytes()?.to_vec()
    } else if caps & cap::SECURE_CONNECTION != 0 {
        let n = c.u8()?;
        c.take(usize::from(n))?.to_vec()
    } else {
        c.nul_bytes().to_vec()
    };
    let mut database = None;
    if caps & cap::CONNECT_WITH_DB != 0 && !c.is_empty() {
        let db = c.nul_bytes();
        if !db.is_empty() {
            database = Some(text(db));
        }
    }
    let mut auth_plugin = None;
    if caps & cap::PLUGIN_AUTH != 0 && !c.is_empty() {
        auth_plugin = Some(text(c.nul_bytes()));
    }
    // Connection attributes (CLIENT_CONNECT_ATTRS) are accepted and ignored.
    Ok(HandshakeResponse {
        caps,
        max_packet,
        charset,
        user,
        auth_response,
        database,
        auth_plugin,
    })
}

/// What COM_CHANGE_USER carries (after its command byte).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeUser {
    pub user: String,
    pub auth_response: Vec<u8>,
    pub database: Option<String>,
    pub auth_plugin: Option<String>,
}

/// Parses COM_CHANGE_USER's payload without the command byte.
pub fn parse_change_user(body: &[u8], caps: u32) -> Result<ChangeUser, Malformed> {
    let mut c = Cursor::new(body);
    let user = text(c.nul_bytes());
    let auth_response = if caps & cap::SECURE_CONNECTION != 0 {
        let n = c.u8()?;
        c.take(usize::from(n))?.to_vec()
    } else {
        c.nul_bytes().to_vec()
    };
    let db = c.nul_bytes();
    let database = if db.is_empty() { None } else { Some(text(db)) };
    let mut auth_plugin = None;
    if c.remaining() >= 2 {
        c.u16()?; // character set
        if caps & cap::PLUGIN_AUTH != 0 && !c.is_empty() {
            auth_plugin = Some(text(c.nul_bytes()));
        }
    }
    Ok(ChangeUser {
        user,
        auth_response,
        database,
        auth_plugin,
    })
}

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// SHA1(SHA1(password)): what the server keeps for mysql_native_password.
pub fn native_hash(password: &[u8]) -> [u8; 20] {
    sha1(&[&sha1(&[password])])
}

/// The token a client sends: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))). Empty password:
/// empty token.
pub fn native_token(scramble: &[u8], password: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = sha1(&[password]);
    let h2 = sha1(&[&h1]);
    let mix = sha1(&[scramble, &h2]);
    h1.iter().zip(mix.iter()).map(|(a, b)| a ^ b).collect()
}

/// True when `token` proves knowledge of the password behind `cred` for `scramble`.
pub fn verify(cred: &Credential, scramble: &[u8], token: &[u8]) -> bool {
    match cred {
        Credential::NoPassword => token.is_empty(),
        Credential::NativeHash(h2) => {
            if token.len() != 20 {
                return false;
            }
            let mix = sha1(&[scramble, h2]);
            let h1: Vec<u8> = token.iter().zip(mix.iter()).map(|(a, b)| a ^ b).collect();
            // Constant-time compare of SHA1(h1) with the stored hash.
            let got = sha1(&[&h1]);
            got.iter()
                .zip(h2.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_password_verifies_the_right_password_only() {
        let s = new_scramble();
        let cred = Credential::NativeHash(native_hash(b"secret"));
        assert!(verify(&cred, &s, &native_token(&s, b"secret")));
        assert!(!verify(&cred, &s, &native_token(&s, b"Secret")));
        assert!(!verify(&cred, &s, &[]));
        assert!(verify(&Credential::NoPassword, &s, &[]));
        assert!(!verify(
            &Credential::NoPassword,
            &s,
            &native_token(&s, b"x")
        ));
    }

    #[test]
    fn known_hash_of_a_password() {
        // MySQL's PASSWORD('root') = *81F5E21E35407D884A6CD4A731AEBFB6AF209E1B
        let hex: String = native_hash(b"root")
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        assert_eq!(hex, "81F5E21E35407D884A6CD4A731AEBFB6AF209E1B");
    }

    #[test]
    fn greeting_and_response_parse() {
        let s = new_scramble();
        let mut g = Vec::new();
        greeting(&mut g, "8.0.36-tierdb", 7, &s);
        assert_eq!(g[0], 10);
        assert!(g.ends_with(b"mysql_native_password\0"));

        let mut r = Vec::new();
        let caps =
            cap::PROTOCOL_41 | cap::SECURE_CONNECTION | cap::CONNECT_WITH_DB | cap::PLUGIN_AUTH;
        r.extend_from_slice(&caps.to_le_bytes());
        r.extend_from_slice(&(1u32 << 24).to_le_bytes());
        r.push(45);
        r.extend_from_slice(&[0; 23]);
        r.extend_from_slice(b"root\0");
        r.push(20);
        r.extend_from_slice(&[7; 20]);
        r.extend_from_slice(b"sbtest\0mysql_native_password\0");
        let p = parse_response(&r).unwrap();
        assert_eq!(p.user, "root");
        assert_eq!(p.auth_response, vec![7; 20]);
        assert_eq!(p.database.as_deref(), Some("sbtest"));
        assert_eq!(p.auth_plugin.as_deref(), Some("mysql_native_password"));
        assert_eq!(parse_response(&r[..40]), Err(ResponseError::Malformed));
    }
}

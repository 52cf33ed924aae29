//! TLS for `headway serve`: NBD's STARTTLS (doc/proto.md, "TLS support") with X.509
//! certificates or pre-shared keys.
//!
//! The client sends NBD_OPT_STARTTLS during option haggling; the server acknowledges in
//! plaintext and both run a TLS handshake on the socket, after which every byte of the
//! connection — the rest of the options and all of transmission — is TLS records. With
//! `--tls require` every other option before STARTTLS gets NBD_REP_ERR_TLS_REQD (and
//! NBD_OPT_EXPORT_NAME, which cannot be refused, ends the connection); with `--tls on` a
//! client may also stay in plaintext.
//!
//! Credentials: a certificate chain and its key (`--tls-cert`, `--tls-key`, PEM), with
//! `--tls-verify-peer` asking each client for a certificate signed by `--tls-ca`; and/or a
//! PSK file (`--tls-psk`) in the format `psktool` writes and nbdkit and qemu-nbd read: one
//! `identity:hexkey` line per client. TLS 1.2 and 1.3 are accepted (a PSK under TLS 1.3 is
//! an external PSK with a SHA-256 suite, as GnuTLS clients offer it).
//!
//! OpenSSL (the system's libssl) does the TLS: rustls has no server-side external PSK.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use openssl::ssl::{Ssl, SslContext, SslContextBuilder, SslFiletype, SslMethod, SslVerifyMode, SslVersion};
use tracing::debug;

/// `--tls`: whether clients may, must, or cannot use TLS.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum TlsMode {
    /// No TLS (STARTTLS is answered NBD_REP_ERR_UNSUP).
    #[default]
    Off,
    /// TLS for the clients that ask; plaintext for the others.
    On,
    /// TLS or nothing: no export before STARTTLS.
    Require,
}

impl std::str::FromStr for TlsMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(TlsMode::Off),
            "on" => Ok(TlsMode::On),
            "require" => Ok(TlsMode::Require),
            _ => Err(format!("unknown TLS mode `{s}` (known: off, on, require)")),
        }
    }
}

/// The TLS options of `headway serve`.
#[derive(Clone, Debug, Default)]
pub struct TlsConfig {
    pub mode: TlsMode,
    /// `--tls-cert`: the server's certificate chain (PEM).
    pub cert: Option<PathBuf>,
    /// `--tls-key`: its private key (PEM).
    pub key: Option<PathBuf>,
    /// `--tls-ca`: the CA certificates client certificates must chain to.
    pub ca: Option<PathBuf>,
    /// `--tls-verify-peer`: every client must present a certificate `ca` signed.
    pub verify_peer: bool,
    /// `--tls-psk`: `identity:hexkey` lines.
    pub psk: Option<PathBuf>,
}

/// A TLS option that cannot be used, with the file (and line) at fault.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{0}")]
    Options(String),
    #[error("{path}: {what}")]
    File { path: PathBuf, what: String },
    #[error("{path}, line {line}: {what}")]
    Line { path: PathBuf, line: usize, what: String },
}

/// The server's TLS: the context every connection's session is made from.
pub(crate) struct Tls {
    ctx: SslContext,
    pub require: bool,
}

impl Tls {
    /// `None` when `cfg.mode` is off (and no credential was given).
    pub fn new(cfg: &TlsConfig) -> Result<Option<Tls>, TlsError> {
        let opt = |m: &str| Err(TlsError::Options(m.into()));
        let given = cfg.cert.is_some()
            || cfg.key.is_some()
            || cfg.ca.is_some()
            || cfg.verify_peer
            || cfg.psk.is_some();
        if cfg.mode == TlsMode::Off {
            return if given {
                opt("TLS credentials were given with --tls off: add --tls on or --tls require")
            } else {
                Ok(None)
            };
        }
        if cfg.cert.is_some() != cfg.key.is_some() {
            return opt("--tls-cert and --tls-key go together");
        }
        if cfg.cert.is_none() && cfg.psk.is_none() {
            return opt("--tls on/require needs credentials: --tls-cert and --tls-key, or --tls-psk");
        }
        if cfg.verify_peer && cfg.ca.is_none() {
            return opt("--tls-verify-peer needs --tls-ca (the CA client certificates must chain to)");
        }
        if cfg.verify_peer && cfg.cert.is_none() {
            return opt("--tls-verify-peer needs the server's own --tls-cert and --tls-key");
        }
        let mut b =
            SslContextBuilder::new(SslMethod::tls_server()).map_err(|e| TlsError::Options(e.to_string()))?;
        b.set_min_proto_version(Some(SslVersion::TLS1_2)).map_err(|e| TlsError::Options(e.to_string()))?;
        let mut ciphers = String::from("DEFAULT");
        if let (Some(c), Some(k)) = (&cfg.cert, &cfg.key) {
            readable(c)?;
            readable(k)?;
            b.set_certificate_chain_file(c).map_err(file(c))?;
            b.set_private_key_file(k, SslFiletype::PEM).map_err(file(k))?;
            b.check_private_key().map_err(|e| TlsError::File {
                path: k.clone(),
                what: format!("does not match {}: {e}", c.display()),
            })?;
        }
        if let Some(ca) = &cfg.ca {
            readable(ca)?;
            b.set_ca_file(ca).map_err(file(ca))?;
            if cfg.verify_peer {
                let names = openssl::x509::X509Name::load_client_ca_file(ca).map_err(file(ca))?;
                b.set_client_ca_list(names);
                b.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
            }
        }
        if let Some(p) = &cfg.psk {
            let keys = read_psk_file(p)?;
            // TLS 1.2's PSK suites are outside DEFAULT; TLS 1.3 uses its own suites
            ciphers.push_str(":ECDHE-PSK:DHE-PSK:PSK:!NULL:!3DES");
            b.set_psk_server_callback(move |_ssl, identity, out| {
                let who = identity.unwrap_or_default();
                match keys.get(who) {
                    Some(k) if k.len() <= out.len() => {
                        out[..k.len()].copy_from_slice(k);
                        Ok(k.len())
                    }
                    _ => {
                        debug!(identity = %String::from_utf8_lossy(who), "TLS: unknown PSK identity");
                        Ok(0)
                    }
                }
            });
        }
        b.set_cipher_list(&ciphers).map_err(|e| TlsError::Options(e.to_string()))?;
        Ok(Some(Tls { ctx: b.build(), require: cfg.mode == TlsMode::Require }))
    }

    /// A session for one connection.
    pub fn session(&self) -> Result<Ssl, openssl::error::ErrorStack> {
        Ssl::new(&self.ctx)
    }
}

/// An OpenSSL error about file `p`.
fn file(p: &Path) -> impl Fn(openssl::error::ErrorStack) -> TlsError + '_ {
    move |e| TlsError::File { path: p.to_path_buf(), what: e.to_string() }
}

fn readable(p: &Path) -> Result<(), TlsError> {
    std::fs::metadata(p)
        .map(|_| ())
        .map_err(|e| TlsError::File { path: p.to_path_buf(), what: e.to_string() })
}

/// Read a PSK file: `identity:hexkey` per line (blank lines and `#` comments skipped), as
/// `psktool` writes it.
pub fn read_psk_file(path: &Path) -> Result<HashMap<Vec<u8>, Vec<u8>>, TlsError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| TlsError::File { path: path.to_path_buf(), what: e.to_string() })?;
    let mut keys = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let err = |what: &str| TlsError::Line { path: path.to_path_buf(), line: i + 1, what: what.into() };
        let (who, hex) = l.rsplit_once(':').ok_or_else(|| err("expected `identity:hexkey`"))?;
        if who.is_empty() {
            return Err(err("the identity is empty"));
        }
        let key = unhex(hex).ok_or_else(|| err("the key is not an even number of hexadecimal digits"))?;
        if key.is_empty() {
            return Err(err("the key is empty"));
        }
        if keys.insert(who.as_bytes().to_vec(), key).is_some() {
            return Err(err(&format!("identity `{who}` appears twice")));
        }
    }
    if keys.is_empty() {
        return Err(TlsError::File { path: path.to_path_buf(), what: "no `identity:hexkey` line".into() });
    }
    Ok(keys)
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() & 1 == 1 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn psk_files_parse_as_psktool_writes_them() {
        let f = file("# keys\nalice:0123456789abcdef\n\nbob:FF00\n");
        let k = read_psk_file(f.path()).unwrap();
        assert_eq!(k[&b"alice"[..]], vec![0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef]);
        assert_eq!(k[&b"bob"[..]], vec![0xff, 0x00]);
    }

    #[test]
    fn a_bad_psk_line_is_named_with_its_file_and_line() {
        for (text, what) in [
            ("alice:00ff\nbob\n", "expected `identity:hexkey`"),
            ("alice:00f\n", "hexadecimal"),
            ("alice:zz\n", "hexadecimal"),
            (":00ff\n", "identity is empty"),
            ("alice:00\nalice:11\n", "appears twice"),
        ] {
            let f = file(text);
            let e = read_psk_file(f.path()).unwrap_err().to_string();
            assert!(e.starts_with(&f.path().display().to_string()), "{e}");
            assert!(e.contains("line") && e.contains(what), "{text:?}: {e}");
        }
        let f = file("# nothing\n");
        assert!(read_psk_file(f.path()).unwrap_err().to_string().contains("no `identity:hexkey`"));
    }

    #[test]
    fn tls_options_that_do_not_go_together_are_refused() {
        let psk = file("alice:00ff\n");
        let p = |m| TlsConfig { mode: m, psk: Some(psk.path().to_path_buf()), ..TlsConfig::default() };
        assert!(Tls::new(&p(TlsMode::Require)).unwrap().is_some());
        assert!(Tls::new(&p(TlsMode::Off)).err().unwrap().to_string().contains("--tls off"));
        let none = TlsConfig { mode: TlsMode::On, ..TlsConfig::default() };
        assert!(Tls::new(&none).err().unwrap().to_string().contains("needs credentials"));
        let half = TlsConfig { mode: TlsMode::On, cert: Some("c.pem".into()), ..TlsConfig::default() };
        assert!(Tls::new(&half).err().unwrap().to_string().contains("go together"));
        let verify = TlsConfig { verify_peer: true, ..p(TlsMode::Require) };
        assert!(Tls::new(&verify).err().unwrap().to_string().contains("--tls-ca"));
        let missing = TlsConfig {
            mode: TlsMode::On,
            cert: Some("/nonexistent/c.pem".into()),
            key: Some("/nonexistent/k.pem".into()),
            ..TlsConfig::default()
        };
        assert!(Tls::new(&missing).err().unwrap().to_string().starts_with("/nonexistent/c.pem"));
    }
}

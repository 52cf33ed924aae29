//! Fixed newstyle handshake: encoding and decoding of the messages, no I/O.
//!
//! Sequence (server view): send [`greeting`]; read 4 bytes of client flags
//! ([`decode_client_flags`]); then repeatedly read a 16-byte [`OptionHeader`] and its data,
//! [`parse_option`] it and answer with [`option_reply`] messages, until `OPT_EXPORT_NAME`
//! (answered by [`export_name_reply`]) or a successful `OPT_GO` enters transmission.
//! Decoders take byte slices and never panic on any input (property-tested below).

use crate::proto::*;

/// Why a handshake message could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandshakeError {
    /// Need this many bytes in total.
    #[error("short message: need {0} bytes")]
    Short(usize),
    #[error("bad magic {0:#x}")]
    BadMagic(u64),
    #[error("client sent unknown flags {0:#x}")]
    UnknownClientFlags(u32),
    /// Well-framed option whose content is invalid: answer NBD_REP_ERR_INVALID.
    #[error("invalid option data: {0}")]
    Invalid(&'static str),
}

/// The server's opening: NBDMAGIC, IHAVEOPT, handshake flags.
pub fn greeting() -> [u8; 18] {
    let mut b = [0u8; 18];
    b[..8].copy_from_slice(&NBDMAGIC.to_be_bytes());
    b[8..16].copy_from_slice(&IHAVEOPT.to_be_bytes());
    b[16..].copy_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    b
}

/// The client's 32-bit flags. Unknown bits are an error: the spec has the server close.
pub fn decode_client_flags(b: &[u8]) -> Result<u32, HandshakeError> {
    let v = be32(b, 0)?;
    if v & !(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES) != 0 {
        return Err(HandshakeError::UnknownClientFlags(v));
    }
    Ok(v)
}

/// `IHAVEOPT, option, length`: the data (length bytes) follows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OptionHeader {
    pub opt: u32,
    pub len: u32,
}

impl OptionHeader {
    pub const SIZE: usize = 16;
    pub fn decode(b: &[u8]) -> Result<OptionHeader, HandshakeError> {
        let magic = be64(b, 0)?;
        if magic != IHAVEOPT {
            return Err(HandshakeError::BadMagic(magic));
        }
        Ok(OptionHeader { opt: be32(b, 8)?, len: be32(b, 12)? })
    }
}

/// A decoded client option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientOption {
    ExportName(String),
    Abort,
    List,
    /// `OPT_INFO` (`go == false`) or `OPT_GO`: export name and requested information types.
    Info {
        go: bool,
        name: String,
        requests: Vec<u16>,
    },
    StructuredReply,
    /// `OPT_STARTTLS`: TLS from here on (see [`crate::tls`]).
    StartTls,
    /// Anything else (META_CONTEXT, EXTENDED_HEADERS, ...): NBD_REP_ERR_UNSUP.
    Unknown(u32),
}

/// Decode an option's data. `Err(Invalid)` means "answer NBD_REP_ERR_INVALID and go on".
pub fn parse_option(opt: u32, data: &[u8]) -> Result<ClientOption, HandshakeError> {
    match opt {
        OPT_EXPORT_NAME => Ok(ClientOption::ExportName(name_from(data)?)),
        OPT_ABORT => Ok(ClientOption::Abort),
        OPT_STARTTLS if data.is_empty() => Ok(ClientOption::StartTls),
        OPT_STARTTLS => Err(HandshakeError::Invalid("NBD_OPT_STARTTLS carries no data")),
        OPT_LIST if data.is_empty() => Ok(ClientOption::List),
        OPT_LIST => Err(HandshakeError::Invalid("NBD_OPT_LIST carries no data")),
        OPT_STRUCTURED_REPLY if data.is_empty() => Ok(ClientOption::StructuredReply),
        OPT_STRUCTURED_REPLY => Err(HandshakeError::Invalid("NBD_OPT_STRUCTURED_REPLY carries no data")),
        OPT_INFO | OPT_GO => {
            let bad = HandshakeError::Invalid("malformed NBD_OPT_INFO/GO data");
            let nlen = be32(data, 0).map_err(|_| bad.clone())? as usize;
            let name_end = 4usize.checked_add(nlen).filter(|&e| e <= data.len()).ok_or(bad.clone())?;
            let name = name_from(&data[4..name_end])?;
            let nreq = be16(data, name_end).map_err(|_| bad.clone())? as usize;
            let rest = &data[name_end + 2..];
            if rest.len() != nreq * 2 {
                return Err(bad);
            }
            let requests = rest.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
            Ok(ClientOption::Info { go: opt == OPT_GO, name, requests })
        }
        other => Ok(ClientOption::Unknown(other)),
    }
}

fn name_from(b: &[u8]) -> Result<String, HandshakeError> {
    if b.len() > MAX_NAME_LEN {
        return Err(HandshakeError::Invalid("export name too long"));
    }
    String::from_utf8(b.to_vec()).map_err(|_| HandshakeError::Invalid("export name is not UTF-8"))
}

impl ClientOption {
    /// Client-side encoding (header and data): used by tests and round trips.
    pub fn encode(&self) -> Vec<u8> {
        let (opt, data) = match self {
            ClientOption::ExportName(n) => (OPT_EXPORT_NAME, n.as_bytes().to_vec()),
            ClientOption::Abort => (OPT_ABORT, vec![]),
            ClientOption::StartTls => (OPT_STARTTLS, vec![]),
            ClientOption::List => (OPT_LIST, vec![]),
            ClientOption::StructuredReply => (OPT_STRUCTURED_REPLY, vec![]),
            ClientOption::Unknown(o) => (*o, vec![]),
            ClientOption::Info { go, name, requests } => {
                let mut d = Vec::new();
                d.extend_from_slice(&(name.len() as u32).to_be_bytes());
                d.extend_from_slice(name.as_bytes());
                d.extend_from_slice(&(requests.len() as u16).to_be_bytes());
                for r in requests {
                    d.extend_from_slice(&r.to_be_bytes());
                }
                (if *go { OPT_GO } else { OPT_INFO }, d)
            }
        };
        let mut b = Vec::with_capacity(16 + data.len());
        b.extend_from_slice(&IHAVEOPT.to_be_bytes());
        b.extend_from_slice(&opt.to_be_bytes());
        b.extend_from_slice(&(data.len() as u32).to_be_bytes());
        b.extend_from_slice(&data);
        b
    }
}

/// One option reply: magic, option, reply type, length, data.
pub fn option_reply(opt: u32, reply: u32, data: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(20 + data.len());
    b.extend_from_slice(&OPT_REPLY_MAGIC.to_be_bytes());
    b.extend_from_slice(&opt.to_be_bytes());
    b.extend_from_slice(&reply.to_be_bytes());
    b.extend_from_slice(&(data.len() as u32).to_be_bytes());
    b.extend_from_slice(data);
    b
}

/// A decoded option reply (client side; tests).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionReply {
    pub opt: u32,
    pub reply: u32,
    pub data: Vec<u8>,
}

/// Decode one option reply from the front of `b`; returns it and the bytes used.
pub fn decode_option_reply(b: &[u8]) -> Result<(OptionReply, usize), HandshakeError> {
    let magic = be64(b, 0)?;
    if magic != OPT_REPLY_MAGIC {
        return Err(HandshakeError::BadMagic(magic));
    }
    let len = be32(b, 16)? as usize;
    let end = 20usize.checked_add(len).ok_or(HandshakeError::Short(usize::MAX))?;
    if b.len() < end {
        return Err(HandshakeError::Short(end));
    }
    Ok((OptionReply { opt: be32(b, 8)?, reply: be32(b, 12)?, data: b[20..end].to_vec() }, end))
}

/// NBD_REP_SERVER data for OPT_LIST: name length and name.
pub fn rep_server(name: &str) -> Vec<u8> {
    let mut d = (name.len() as u32).to_be_bytes().to_vec();
    d.extend_from_slice(name.as_bytes());
    d
}

/// NBD_REP_INFO data for NBD_INFO_EXPORT.
pub fn info_export(size: u64, flags: u16) -> Vec<u8> {
    let mut d = INFO_EXPORT.to_be_bytes().to_vec();
    d.extend_from_slice(&size.to_be_bytes());
    d.extend_from_slice(&flags.to_be_bytes());
    d
}

/// NBD_REP_INFO data for NBD_INFO_BLOCK_SIZE.
pub fn info_block_size(min: u32, preferred: u32, max: u32) -> Vec<u8> {
    let mut d = INFO_BLOCK_SIZE.to_be_bytes().to_vec();
    for v in [min, preferred, max] {
        d.extend_from_slice(&v.to_be_bytes());
    }
    d
}

/// NBD_REP_INFO data for NBD_INFO_NAME or NBD_INFO_DESCRIPTION (`info` says which).
pub fn info_text(info: u16, text: &str) -> Vec<u8> {
    let mut d = info.to_be_bytes().to_vec();
    d.extend_from_slice(text.as_bytes());
    d
}

/// The answer to OPT_EXPORT_NAME: size, transmission flags, and 124 zero bytes unless the
/// client negotiated NO_ZEROES.
pub fn export_name_reply(size: u64, flags: u16, no_zeroes: bool) -> Vec<u8> {
    let mut b = size.to_be_bytes().to_vec();
    b.extend_from_slice(&flags.to_be_bytes());
    if !no_zeroes {
        b.extend_from_slice(&[0u8; 124]);
    }
    b
}

pub(crate) fn be16(b: &[u8], at: usize) -> Result<u16, HandshakeError> {
    b.get(at..at + 2).map(|s| u16::from_be_bytes([s[0], s[1]])).ok_or(HandshakeError::Short(at + 2))
}
pub(crate) fn be32(b: &[u8], at: usize) -> Result<u32, HandshakeError> {
    b.get(at..at + 4).map(|s| u32::from_be_bytes(s.try_into().unwrap())).ok_or(HandshakeError::Short(at + 4))
}
pub(crate) fn be64(b: &[u8], at: usize) -> Result<u64, HandshakeError> {
    b.get(at..at + 8).map(|s| u64::from_be_bytes(s.try_into().unwrap())).ok_or(HandshakeError::Short(at + 8))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn greeting_is_fixed_newstyle_with_no_zeroes() {
        let g = greeting();
        assert_eq!(&g[..8], b"NBDMAGIC");
        assert_eq!(&g[8..16], b"IHAVEOPT");
        assert_eq!(u16::from_be_bytes([g[16], g[17]]), 3);
    }

    #[test]
    fn go_with_block_size_request_decodes() {
        let o = ClientOption::Info { go: true, name: "disk".into(), requests: vec![INFO_BLOCK_SIZE] };
        let b = o.encode();
        let h = OptionHeader::decode(&b).unwrap();
        assert_eq!(h, OptionHeader { opt: OPT_GO, len: (b.len() - 16) as u32 });
        assert_eq!(parse_option(h.opt, &b[16..]).unwrap(), o);
    }

    #[test]
    fn malformed_info_and_list_with_data_are_invalid_not_fatal() {
        assert!(matches!(parse_option(OPT_GO, &[0, 0, 0, 9, b'a']), Err(HandshakeError::Invalid(_))));
        assert!(matches!(parse_option(OPT_LIST, &[1]), Err(HandshakeError::Invalid(_))));
        assert_eq!(parse_option(11, &[]).unwrap(), ClientOption::Unknown(11));
    }

    #[test]
    fn unknown_client_flags_are_refused() {
        assert_eq!(decode_client_flags(&[0, 0, 0, 3]).unwrap(), 3);
        assert!(decode_client_flags(&[0, 0, 0, 4]).is_err());
        assert!(decode_client_flags(&[0, 0]).is_err());
    }

    #[test]
    fn export_name_reply_lengths() {
        assert_eq!(export_name_reply(1, 1, true).len(), 10);
        assert_eq!(export_name_reply(1, 1, false).len(), 134);
    }

    fn any_option() -> impl Strategy<Value = ClientOption> {
        prop_oneof![
            "[a-z0-9/]{0,40}".prop_map(ClientOption::ExportName),
            Just(ClientOption::Abort),
            Just(ClientOption::List),
            Just(ClientOption::StructuredReply),
            (9u32..1000).prop_map(ClientOption::Unknown),
            (any::<bool>(), "[a-z0-9]{0,40}", proptest::collection::vec(any::<u16>(), 0..8))
                .prop_map(|(go, name, requests)| ClientOption::Info { go, name, requests }),
        ]
    }

    proptest! {
        #[test]
        fn decoders_never_panic(b in proptest::collection::vec(any::<u8>(), 0..300), opt in any::<u32>()) {
            let _ = decode_client_flags(&b);
            let _ = OptionHeader::decode(&b);
            let _ = parse_option(opt, &b);
            let _ = decode_option_reply(&b);
        }

        #[test]
        fn options_round_trip(o in any_option()) {
            let b = o.encode();
            let h = OptionHeader::decode(&b).unwrap();
            prop_assert_eq!(h.len as usize, b.len() - 16);
            prop_assert_eq!(parse_option(h.opt, &b[16..]).unwrap(), o);
        }

        #[test]
        fn option_replies_round_trip(opt in any::<u32>(), reply in any::<u32>(),
                                     data in proptest::collection::vec(any::<u8>(), 0..100)) {
            let b = option_reply(opt, reply, &data);
            let (r, used) = decode_option_reply(&b).unwrap();
            prop_assert_eq!(used, b.len());
            prop_assert_eq!(r, OptionReply { opt, reply, data });
        }
    }
}

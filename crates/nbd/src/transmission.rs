//! Transmission phase: request headers, their validation, simple and structured replies.
//! No I/O; decoders never panic (property-tested below).
//!
//! Validation ([`validate`]) turns a header into a [`Command`] or a [`Reject`]: an error to
//! reply (the connection goes on; a WRITE's payload is still read and dropped) or a
//! disconnect (bad magic, or a WRITE whose payload exceeds [`MAX_PAYLOAD`]: the spec lets a
//! server close rather than read a payload it will not accept).

use crate::handshake::{be16, be32, be64, HandshakeError};
use crate::proto::*;

/// A request header as sent (28 bytes).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RequestHeader {
    pub flags: u16,
    pub ty: u16,
    pub cookie: u64,
    pub offset: u64,
    pub len: u32,
}

impl RequestHeader {
    pub const SIZE: usize = 28;

    pub fn decode(b: &[u8]) -> Result<RequestHeader, HandshakeError> {
        let magic = be32(b, 0)?;
        if magic != REQUEST_MAGIC {
            return Err(HandshakeError::BadMagic(magic as u64));
        }
        Ok(RequestHeader {
            flags: be16(b, 4)?,
            ty: be16(b, 6)?,
            cookie: be64(b, 8)?,
            offset: be64(b, 16)?,
            len: be32(b, 24)?,
        })
    }

    pub fn encode(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        b[..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
        b[4..6].copy_from_slice(&self.flags.to_be_bytes());
        b[6..8].copy_from_slice(&self.ty.to_be_bytes());
        b[8..16].copy_from_slice(&self.cookie.to_be_bytes());
        b[16..24].copy_from_slice(&self.offset.to_be_bytes());
        b[24..].copy_from_slice(&self.len.to_be_bytes());
        b
    }

    /// Bytes of payload that follow this header on the wire.
    pub fn payload_len(&self) -> u32 {
        if self.ty == CMD_WRITE {
            self.len
        } else {
            0
        }
    }
}

/// A valid command.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Read { offset: u64, len: u32 },
    Write { offset: u64, len: u32, fua: bool },
    Flush,
    Trim { offset: u64, len: u32, fua: bool },
    WriteZeroes { offset: u64, len: u32, fua: bool, no_hole: bool },
    Disc,
}

/// Why a request is not executed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Reject {
    /// Reply with this error; the connection continues.
    Error(Errno, &'static str),
    /// Close the connection.
    Disconnect(&'static str),
}

/// What validation needs to know about the export.
#[derive(Copy, Clone, Debug)]
pub struct Limits {
    pub size: u64,
    pub read_only: bool,
}

/// Check a header against the spec and the export.
pub fn validate(h: &RequestHeader, lim: Limits) -> Result<Command, Reject> {
    use Reject::*;
    // DISC never has a reply, whatever flags it carries: the client is leaving
    if h.ty == CMD_DISC {
        return Ok(Command::Disc);
    }
    if h.ty == CMD_WRITE && h.len > MAX_PAYLOAD {
        return Err(Disconnect("write payload larger than the 32 MiB maximum"));
    }
    let known = CMD_FLAG_FUA | if h.ty == CMD_WRITE_ZEROES { CMD_FLAG_NO_HOLE } else { 0 };
    if h.flags & !known != 0 {
        return Err(Error(Errno::Inval, "unsupported command flags"));
    }
    let fua = h.flags & CMD_FLAG_FUA != 0;
    let writes = matches!(h.ty, CMD_WRITE | CMD_TRIM | CMD_WRITE_ZEROES);
    if writes && lim.read_only {
        return Err(Error(Errno::Perm, "export is read-only"));
    }
    if matches!(h.ty, CMD_READ | CMD_WRITE | CMD_TRIM | CMD_WRITE_ZEROES) {
        if h.ty == CMD_READ && h.len > MAX_PAYLOAD {
            return Err(Error(Errno::Inval, "read larger than the 32 MiB maximum"));
        }
        let in_range = h.offset.checked_add(h.len as u64).is_some_and(|end| end <= lim.size);
        // the protocol: ENOSPC for a write or write-zeroes past the end, EINVAL for a
        // read or trim
        if !in_range {
            return Err(if matches!(h.ty, CMD_WRITE | CMD_WRITE_ZEROES) {
                Error(Errno::NoSpc, "request extends past the end of the export")
            } else {
                Error(Errno::Inval, "request extends past the end of the export")
            });
        }
    }
    let (offset, len) = (h.offset, h.len);
    Ok(match h.ty {
        CMD_READ => Command::Read { offset, len },
        CMD_WRITE => Command::Write { offset, len, fua },
        CMD_FLUSH => Command::Flush,
        CMD_TRIM => Command::Trim { offset, len, fua },
        CMD_WRITE_ZEROES => {
            Command::WriteZeroes { offset, len, fua, no_hole: h.flags & CMD_FLAG_NO_HOLE != 0 }
        }
        CMD_DISC => Command::Disc,
        _ => return Err(Error(Errno::Inval, "unsupported command")),
    })
}

/// Simple reply header (read data, if any, follows).
pub fn simple_reply(cookie: u64, error: u32) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    b[4..8].copy_from_slice(&error.to_be_bytes());
    b[8..].copy_from_slice(&cookie.to_be_bytes());
    b
}

/// Structured reply chunk header; `len` bytes of payload follow.
pub fn chunk_header(flags: u16, ty: u16, cookie: u64, len: u32) -> [u8; 20] {
    let mut b = [0u8; 20];
    b[..4].copy_from_slice(&STRUCTURED_REPLY_MAGIC.to_be_bytes());
    b[4..6].copy_from_slice(&flags.to_be_bytes());
    b[6..8].copy_from_slice(&ty.to_be_bytes());
    b[8..16].copy_from_slice(&cookie.to_be_bytes());
    b[16..].copy_from_slice(&len.to_be_bytes());
    b
}

/// NBD_REPLY_TYPE_NONE with DONE: success of a command with no data.
pub fn chunk_none_done(cookie: u64) -> [u8; 20] {
    chunk_header(REPLY_FLAG_DONE, REPLY_TYPE_NONE, cookie, 0)
}

/// NBD_REPLY_TYPE_OFFSET_DATA header and offset, DONE set; `data_len` bytes of data follow.
pub fn chunk_offset_data_done(cookie: u64, offset: u64, data_len: u32) -> [u8; 28] {
    let mut b = [0u8; 28];
    b[..20].copy_from_slice(&chunk_header(REPLY_FLAG_DONE, REPLY_TYPE_OFFSET_DATA, cookie, data_len + 8));
    b[20..].copy_from_slice(&offset.to_be_bytes());
    b
}

/// NBD_REPLY_TYPE_ERROR with DONE: error and a human-readable message.
pub fn chunk_error_done(cookie: u64, err: Errno, msg: &str) -> Vec<u8> {
    let msg = &msg.as_bytes()[..msg.len().min(4096)];
    let mut b = chunk_header(REPLY_FLAG_DONE, REPLY_TYPE_ERROR, cookie, 6 + msg.len() as u32).to_vec();
    b.extend_from_slice(&err.code().to_be_bytes());
    b.extend_from_slice(&(msg.len() as u16).to_be_bytes());
    b.extend_from_slice(msg);
    b
}

/// A reply as a client decodes it (tests and round trips). Read data after a simple reply
/// is not framed, so it is left to the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Simple { error: u32, cookie: u64 },
    Chunk { flags: u16, ty: u16, cookie: u64, payload: Vec<u8> },
}

/// Decode one reply (header, and a chunk's payload) from the front of `b`.
pub fn decode_reply(b: &[u8]) -> Result<(Reply, usize), HandshakeError> {
    match be32(b, 0)? {
        SIMPLE_REPLY_MAGIC => Ok((Reply::Simple { error: be32(b, 4)?, cookie: be64(b, 8)? }, 16)),
        STRUCTURED_REPLY_MAGIC => {
            let len = be32(b, 16)? as usize;
            let end = 20 + len;
            let payload = b.get(20..end).ok_or(HandshakeError::Short(end))?.to_vec();
            Ok((Reply::Chunk { flags: be16(b, 4)?, ty: be16(b, 6)?, cookie: be64(b, 8)?, payload }, end))
        }
        m => Err(HandshakeError::BadMagic(m as u64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const LIM: Limits = Limits { size: 1 << 20, read_only: false };

    fn hdr(ty: u16, flags: u16, offset: u64, len: u32) -> RequestHeader {
        RequestHeader { flags, ty, cookie: 7, offset, len }
    }

    #[test]
    fn range_errors_follow_the_spec() {
        assert_eq!(validate(&hdr(CMD_READ, 0, 0, 512), LIM), Ok(Command::Read { offset: 0, len: 512 }));
        assert!(matches!(validate(&hdr(CMD_READ, 0, 1 << 20, 1), LIM), Err(Reject::Error(Errno::Inval, _))));
        assert!(matches!(validate(&hdr(CMD_WRITE, 0, 1 << 20, 1), LIM), Err(Reject::Error(Errno::NoSpc, _))));
        assert!(matches!(validate(&hdr(CMD_TRIM, 0, u64::MAX, 2), LIM), Err(Reject::Error(Errno::Inval, _))));
        assert!(matches!(validate(&hdr(CMD_TRIM, 0, 1 << 20, 1), LIM), Err(Reject::Error(Errno::Inval, _))));
        assert!(matches!(
            validate(&hdr(CMD_WRITE_ZEROES, 0, 1 << 20, 1), LIM),
            Err(Reject::Error(Errno::NoSpc, _))
        ));
        // DISC is never answered, even with flags no command has
        assert_eq!(validate(&hdr(CMD_DISC, 0x8000, 0, 0), LIM), Ok(Command::Disc));
    }

    #[test]
    fn read_only_refuses_writes_with_eperm() {
        let ro = Limits { read_only: true, ..LIM };
        for ty in [CMD_WRITE, CMD_TRIM, CMD_WRITE_ZEROES] {
            assert!(matches!(validate(&hdr(ty, 0, 0, 512), ro), Err(Reject::Error(Errno::Perm, _))));
        }
        assert!(validate(&hdr(CMD_READ, 0, 0, 512), ro).is_ok());
        assert_eq!(validate(&hdr(CMD_FLUSH, 0, 0, 0), ro), Ok(Command::Flush));
    }

    #[test]
    fn payload_cap_32_mib() {
        let big = Limits { size: 1 << 40, read_only: false };
        assert!(validate(&hdr(CMD_READ, 0, 0, MAX_PAYLOAD), big).is_ok());
        assert!(matches!(
            validate(&hdr(CMD_READ, 0, 0, MAX_PAYLOAD + 1), big),
            Err(Reject::Error(Errno::Inval, _))
        ));
        assert!(matches!(validate(&hdr(CMD_WRITE, 0, 0, MAX_PAYLOAD + 1), big), Err(Reject::Disconnect(_))));
        // TRIM and WRITE_ZEROES carry no payload: large lengths are fine.
        assert!(validate(&hdr(CMD_TRIM, 0, 0, u32::MAX), big).is_ok());
    }

    #[test]
    fn flags_fua_no_hole_and_garbage() {
        assert_eq!(
            validate(&hdr(CMD_WRITE_ZEROES, CMD_FLAG_NO_HOLE | CMD_FLAG_FUA, 0, 512), LIM),
            Ok(Command::WriteZeroes { offset: 0, len: 512, fua: true, no_hole: true })
        );
        assert!(matches!(
            validate(&hdr(CMD_WRITE, CMD_FLAG_NO_HOLE, 0, 512), LIM),
            Err(Reject::Error(Errno::Inval, _))
        ));
        assert!(matches!(
            validate(&hdr(CMD_READ, CMD_FLAG_DF, 0, 512), LIM),
            Err(Reject::Error(Errno::Inval, _))
        ));
        assert!(matches!(validate(&hdr(99, 0, 0, 0), LIM), Err(Reject::Error(Errno::Inval, _))));
        assert!(matches!(
            validate(&hdr(CMD_BLOCK_STATUS, 0, 0, 512), LIM),
            Err(Reject::Error(Errno::Inval, _))
        ));
    }

    #[test]
    fn structured_chunks_decode() {
        let (r, n) = decode_reply(&chunk_none_done(9)).unwrap();
        assert_eq!((r, n), (Reply::Chunk { flags: 1, ty: REPLY_TYPE_NONE, cookie: 9, payload: vec![] }, 20));
        let e = chunk_error_done(3, Errno::NoSpc, "full");
        let (r, _) = decode_reply(&e).unwrap();
        let Reply::Chunk { ty, payload, .. } = r else { panic!() };
        assert_eq!(ty, REPLY_TYPE_ERROR);
        assert_eq!(&payload[..4], &28u32.to_be_bytes());
        assert_eq!(&payload[6..], b"full");
        let d = chunk_offset_data_done(4, 4096, 512);
        assert_eq!(u32::from_be_bytes(d[16..20].try_into().unwrap()), 520);
    }

    proptest! {
        #[test]
        fn decoders_never_panic(b in proptest::collection::vec(any::<u8>(), 0..64), size in any::<u64>(), ro in any::<bool>()) {
            if let Ok(h) = RequestHeader::decode(&b) {
                let _ = validate(&h, Limits { size, read_only: ro });
            }
            let _ = decode_reply(&b);
        }

        #[test]
        fn request_headers_round_trip(flags in any::<u16>(), ty in any::<u16>(), cookie in any::<u64>(),
                                      offset in any::<u64>(), len in any::<u32>(), size in any::<u64>()) {
            let h = RequestHeader { flags, ty, cookie, offset, len };
            prop_assert_eq!(RequestHeader::decode(&h.encode()).unwrap(), h);
            let _ = validate(&h, Limits { size, read_only: false });
        }

        #[test]
        fn replies_round_trip(cookie in any::<u64>(), error in any::<u32>()) {
            prop_assert_eq!(decode_reply(&simple_reply(cookie, error)).unwrap(), (Reply::Simple { error, cookie }, 16));
            prop_assert_eq!(decode_reply(&chunk_none_done(cookie)).unwrap().0,
                            Reply::Chunk { flags: REPLY_FLAG_DONE, ty: REPLY_TYPE_NONE, cookie, payload: vec![] });
        }
    }
}

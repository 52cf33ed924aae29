//! TLS (issue 17): real clients — nbdinfo, nbdcopy (libnbd, GnuTLS), qemu-img and qemu-io
//! (GnuTLS) — reach an export over STARTTLS with a pre-shared key and with X.509
//! certificates; a plaintext client is refused under `--tls require`, a wrong key and a
//! missing client certificate are refused, and plaintext bytes smuggled behind STARTTLS end
//! the connection. Keys and certificates are made for each test (`openssl` CLI).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;

use headway_nbd::handshake::{self as hs, ClientOption};
use headway_nbd::proto::*;
use headway_nbd::{TlsConfig, TlsMode};

mod common;
use common::{random_file, read_n, run, tool, Running};

const SIZE: u64 = 8 << 20;

fn psk_file(dir: &Path, name: &str, key: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("alice:{key}\n")).unwrap();
    p
}

const KEY: &str = "9f8e7d6c5b4a39281706f5e4d3c2b1a000112233445566778899aabbccddeeff";

/// A CA, a server certificate for `localhost` and a client certificate, both signed by it,
/// in `dir`: ca-cert.pem, server-cert.pem, server-key.pem, client-cert.pem, client-key.pem.
fn certificates(dir: &Path) {
    let openssl = tool("openssl");
    let sh = |args: &[&str]| {
        run(Command::new(openssl).current_dir(dir).args(args));
    };
    sh(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=headway test CA",
        "-keyout",
        "ca-key.pem",
        "-out",
        "ca-cert.pem",
    ]);
    std::fs::write(dir.join("san.ext"), "subjectAltName=DNS:localhost\n").unwrap();
    for who in ["server", "client"] {
        let cn = if who == "server" { "/CN=localhost" } else { "/CN=alice" };
        sh(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            cn,
            "-keyout",
            &format!("{who}-key.pem"),
            "-out",
            &format!("{who}.csr"),
        ]);
        sh(&[
            "x509",
            "-req",
            "-in",
            &format!("{who}.csr"),
            "-CA",
            "ca-cert.pem",
            "-CAkey",
            "ca-key.pem",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            &format!("{who}-cert.pem"),
        ]);
    }
}

/// `--tls require` with certificates made in `d` (`verify_peer`: clients need one too).
fn x509(d: &Path, verify_peer: bool) -> TlsConfig {
    certificates(d);
    TlsConfig {
        mode: TlsMode::Require,
        cert: Some(d.join("server-cert.pem")),
        key: Some(d.join("server-key.pem")),
        ca: verify_peer.then(|| d.join("ca-cert.pem")),
        verify_peer,
        ..Default::default()
    }
}

fn start(tls: impl FnOnce(&Path) -> TlsConfig) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let cfg_tls = tls(dir.path());
    Running::start_in(dir, |cfg| {
        cfg.size = Some(SIZE);
        cfg.tls = cfg_tls;
    })
    .unwrap()
}

fn psk_uri(srv: &Running, psk: &Path) -> String {
    format!("nbds+unix://alice@/?socket={}&tls-psk-file={}", srv.sock.display(), psk.display())
}

/// nbdinfo's output (and success) for `uri`.
fn nbdinfo(uri: &str) -> (bool, String) {
    let out = Command::new(tool("nbdinfo")).args(["--size", uri]).output().unwrap();
    (
        out.status.success(),
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
    )
}

/// Write a file through nbdcopy to `uri`, read it back the same way, compare.
fn nbdcopy_round_trip(srv: &Running, uri: &str) {
    let (src, back) = (srv.path("src.bin"), srv.path("back.bin"));
    let data = random_file(&src, 1 << 20);
    run(Command::new(tool("nbdcopy")).arg(&src).arg(uri));
    run(Command::new(tool("nbdcopy")).arg(uri).arg(&back));
    assert_eq!(&std::fs::read(&back).unwrap()[..1 << 20], &data[..], "nbdcopy read back other bytes");
}

/// qemu-io writes a pattern and reads it back through the TLS object `object`.
fn qemu_round_trip(srv: &Running, object: &str, extra: &str) {
    let opts = format!("driver=nbd,path={},tls-creds=tls0{extra}", srv.sock.display());
    let info = run(Command::new(tool("qemu-img")).args(["info", "--object", object, "--image-opts", &opts]));
    assert!(info.contains(&format!("({SIZE} bytes)")), "{info}");
    let io = run(Command::new(tool("qemu-io")).args([
        "--object",
        object,
        "--image-opts",
        &opts,
        "-c",
        "write -P 0x5a 65536 131072",
        "-c",
        "read -P 0x5a 65536 131072",
    ]));
    assert!(!io.contains("Pattern verification failed"), "{io}");
}

#[test]
fn psk_clients_read_and_write_and_plaintext_is_refused() {
    let srv = start(|d| TlsConfig {
        mode: TlsMode::Require,
        psk: Some(psk_file(d, "keys.psk", KEY)),
        ..Default::default()
    });
    let psk = srv.path("keys.psk");
    let (ok, out) = nbdinfo(&psk_uri(&srv, &psk));
    assert!(ok && out.trim() == SIZE.to_string(), "{out}");
    nbdcopy_round_trip(&srv, &psk_uri(&srv, &psk));
    // qemu reads `keys.psk` from a directory
    let object =
        format!("tls-creds-psk,id=tls0,endpoint=client,dir={},username=alice", srv.path("").display());
    qemu_round_trip(&srv, &object, "");
    // plaintext: refused
    let (ok, out) = nbdinfo(&format!("nbd+unix:///?socket={}", srv.sock.display()));
    assert!(!ok && out.contains("TLS"), "a plaintext client got in: {out}");
    // a wrong key: refused
    let wrong = psk_file(&srv.path(""), "wrong.psk", &KEY.replace('9', "0"));
    let (ok, out) = nbdinfo(&psk_uri(&srv, &wrong));
    assert!(!ok, "a wrong key got in: {out}");
}

#[test]
fn x509_clients_read_and_write() {
    let srv = start(|d| x509(d, false));
    // libnbd and qemu find ca-cert.pem (and client-*.pem) in a directory
    let uri =
        format!("nbds+unix:///?socket={}&tls-certificates={}", srv.sock.display(), srv.path("").display());
    let (ok, out) = nbdinfo(&uri);
    assert!(ok && out.trim() == SIZE.to_string(), "{out}");
    nbdcopy_round_trip(&srv, &uri);
    let object = format!("tls-creds-x509,id=tls0,endpoint=client,dir={}", srv.path("").display());
    qemu_round_trip(&srv, &object, ",tls-hostname=localhost");
    // qemu checks the server's name against its certificate
    let opts = format!("driver=nbd,path={},tls-creds=tls0,tls-hostname=elsewhere", srv.sock.display());
    let out =
        Command::new("qemu-img").args(["info", "--object", &object, "--image-opts", &opts]).output().unwrap();
    assert!(!out.status.success(), "qemu accepted a certificate for another name");
}

#[test]
fn verify_peer_wants_a_client_certificate_from_the_ca() {
    let srv = start(|d| x509(d, true));
    // a directory with the CA only: no client certificate to show
    let bare = srv.path("bare");
    std::fs::create_dir(&bare).unwrap();
    std::fs::copy(srv.path("ca-cert.pem"), bare.join("ca-cert.pem")).unwrap();
    let (ok, out) =
        nbdinfo(&format!("nbds+unix:///?socket={}&tls-certificates={}", srv.sock.display(), bare.display()));
    assert!(!ok, "a client without a certificate got in: {out}");
    let (ok, out) = nbdinfo(&format!(
        "nbds+unix:///?socket={}&tls-certificates={}",
        srv.sock.display(),
        srv.path("").display()
    ));
    assert!(ok && out.trim() == SIZE.to_string(), "{out}");
}

#[test]
fn tls_on_serves_plaintext_and_tls_clients() {
    let srv = start(|d| TlsConfig {
        mode: TlsMode::On,
        psk: Some(psk_file(d, "keys.psk", KEY)),
        ..Default::default()
    });
    let (ok, out) = nbdinfo(&psk_uri(&srv, &srv.path("keys.psk")));
    assert!(ok && out.trim() == SIZE.to_string(), "TLS: {out}");
    let (ok, out) = nbdinfo(&format!("nbd+unix:///?socket={}", srv.sock.display()));
    assert!(ok && out.trim() == SIZE.to_string(), "plaintext: {out}");
}

/// Start a raw handshake: greeting and client flags.
fn raw(sock: &Path) -> UnixStream {
    let mut c = UnixStream::connect(sock).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    assert_eq!(read_n(&mut c, 18), hs::greeting());
    c.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
    c
}

/// The reply type of the option reply read from `c`.
fn option_reply(c: &mut UnixStream) -> u32 {
    let h = read_n(c, 20);
    let len = u32::from_be_bytes(h[16..20].try_into().unwrap()) as usize;
    read_n(c, len);
    u32::from_be_bytes(h[12..16].try_into().unwrap())
}

#[test]
fn bytes_behind_starttls_end_the_connection_and_options_before_it_need_tls() {
    let srv = start(|d| TlsConfig {
        mode: TlsMode::Require,
        psk: Some(psk_file(d, "keys.psk", KEY)),
        ..Default::default()
    });
    // before STARTTLS: NBD_REP_ERR_TLS_REQD
    let mut c = raw(&srv.sock);
    c.write_all(&ClientOption::List.encode()).unwrap();
    assert_eq!(option_reply(&mut c), REP_ERR_TLS_REQD);
    // STARTTLS with plaintext bytes behind it in the same write: acknowledged, then closed
    let mut bytes = ClientOption::StartTls.encode();
    bytes.extend_from_slice(&ClientOption::List.encode());
    c.write_all(&bytes).unwrap();
    assert_eq!(option_reply(&mut c), REP_ACK);
    let mut b = [0u8; 1];
    assert_eq!(c.read(&mut b).unwrap(), 0, "the server went on after smuggled bytes");
}

#[test]
fn starttls_without_tls_configured_is_unsupported() {
    let srv = Running::start(|cfg| cfg.size = Some(SIZE));
    let mut c = raw(&srv.sock);
    c.write_all(&ClientOption::StartTls.encode()).unwrap();
    assert_eq!(option_reply(&mut c), REP_ERR_UNSUP);
    // and the connection goes on in plaintext
    c.write_all(&ClientOption::ExportName(String::new()).encode()).unwrap();
    let e = read_n(&mut c, 10);
    assert_eq!(u64::from_be_bytes(e[..8].try_into().unwrap()), SIZE);
}

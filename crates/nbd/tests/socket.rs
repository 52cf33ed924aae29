//! The Unix socket a server listens on (issue 17, item 4): a live server's socket is never
//! taken over, a stale one is, its mode is settable, and a server removes only its own.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;

use headway_nbd::{Listen, ServeConfig, ServeError, Server};

mod common;
use common::{connect, Running};

#[test]
fn a_second_server_refuses_a_live_servers_socket() {
    let a = Running::start(|cfg| cfg.size = Some(1 << 20));
    let (_c, size) = connect(&a.sock);
    assert_eq!(size, 1 << 20);
    let other = tempfile::tempdir().unwrap();
    let mut cfg = ServeConfig::new(other.path().join("b.img"), Listen::Unix(a.sock.clone()));
    cfg.size = Some(2 << 20);
    match Server::bind(cfg) {
        Err(e @ ServeError::SocketInUse { .. }) => {
            assert!(e.to_string().contains("refusing to take its socket over"), "{e}")
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("the second server took the live socket"),
    }
    // clients still reach the first server's disk
    let (_c, size) = connect(&a.sock);
    assert_eq!(size, 1 << 20);
}

#[test]
fn a_stale_socket_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    // a socket file nobody listens on, as a killed server leaves it
    drop(UnixListener::bind(dir.path().join("nbd.sock")).unwrap());
    assert!(dir.path().join("nbd.sock").exists());
    let s = Running::start_in(dir, |cfg| cfg.size = Some(1 << 20)).unwrap();
    let (_c, size) = connect(&s.sock);
    assert_eq!(size, 1 << 20);
}

#[test]
fn the_socket_mode_is_set_and_only_the_servers_own_socket_is_removed() {
    let s = Running::start(|cfg| {
        cfg.size = Some(1 << 20);
        cfg.socket_mode = Some(0o600);
    });
    let mode = std::fs::metadata(&s.sock).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600);
    // someone else's socket at the path by the time the server stops: left alone
    let sock = s.sock.clone();
    std::fs::remove_file(&sock).unwrap();
    let theirs = UnixListener::bind(&sock).unwrap();
    let dir = s.stop();
    assert!(sock.exists(), "the server removed a socket that was not its own");
    drop(theirs);
    drop(dir);
}

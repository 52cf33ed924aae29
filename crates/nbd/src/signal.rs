//! SIGINT/SIGTERM → a shutdown flag, without async-signal-unsafe handlers.
//!
//! [`shutdown_on_signals`] blocks both signals in the calling thread (threads spawned later
//! inherit the mask) and starts a thread that `sigwait`s for them. The first signal sets
//! the flag (the server stops accepting, finishes in-flight requests, syncs and returns);
//! a second one exits at once with status 130.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Call before spawning any other thread.
pub fn shutdown_on_signals() -> std::io::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    // SAFETY: plain libc signal-set manipulation on a local sigset_t.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        let r = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        if r != 0 {
            return Err(std::io::Error::from_raw_os_error(r));
        }
        set
    };
    let f = flag.clone();
    std::thread::Builder::new().name("signals".into()).spawn(move || loop {
        let mut sig = 0;
        // SAFETY: `set` is a valid, initialised sigset_t owned by this closure.
        if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
            continue;
        }
        if f.swap(true, Ordering::SeqCst) {
            tracing::warn!(sig, "second signal: exiting without waiting");
            std::process::exit(130);
        }
        tracing::info!(sig, "signal received: finishing in-flight requests, then exiting");
    })?;
    Ok(flag)
}

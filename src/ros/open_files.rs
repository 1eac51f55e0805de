//! The process's open-file limit, raised to what the system allows before DDS spends it.
//!
//! RustDDS wakes each reader and writer through socket pairs of its own, about six file
//! descriptors per endpoint, so one process running every node holds some 550 descriptors
//! before the first client connects. Many systems start processes with a soft limit of 1024
//! and a far higher hard limit; the soft limit is only there for programs that still use
//! `select`, and ours (epoll through mio) does not. Raising it once, as the Go runtime does
//! for every program, keeps a process with more nodes, clients or bags from failing with
//! "Too many open files" in the middle of creating an endpoint.

use std::sync::OnceLock;

/// Raises the soft limit on open files to the hard limit, once per process; an error says why
/// it could not be read or raised (the process goes on with the limit it has).
pub fn raise() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(raise_now).clone()
}

#[cfg(unix)]
fn raise_now() -> Result<(), String> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit through a valid pointer to a local.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(format!("getrlimit: {}", std::io::Error::last_os_error()));
    }
    if lim.rlim_cur >= lim.rlim_max {
        return Ok(());
    }
    let raised = libc::rlimit {
        rlim_cur: lim.rlim_max,
        rlim_max: lim.rlim_max,
    };
    // SAFETY: setrlimit reads one rlimit through a valid pointer to a local.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        return Err(format!(
            "setrlimit to {}: {}",
            lim.rlim_max,
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn raise_now() -> Result<(), String> {
    Err("no open-file limit to raise on this platform".into())
}

//! How host buffers cross to the device. A copy from or to pageable memory (a `Vec`) through
//! the driver goes via a pinned staging buffer of its own: one CPU thread copies each piece
//! into it, then the copy engine moves it, the two passes one after the other. On a discrete
//! GPU the default is our own staging instead ([`super::staging`]): pinned chunks kept for the
//! stream, filled and drained by several threads while the engine moves the other chunk.
//! Registering the caller's own pages for the copy (`cuMemHostRegister`) lets the copy engine
//! read or write them directly, one pass, but pinning a one-off buffer's pages costs about what
//! it saves on a discrete GPU; on an integrated GPU (Jetson: CPU and GPU share one memory,
//! `CU_DEVICE_ATTRIBUTE_INTEGRATED`) any staging copy is a second pass over the one memory
//! both read, and registered copies are the default.

use cudarc::driver::sys;

/// Environment variable forcing the mode: `pinned`, `staged` or `registered` (tests run the
/// GPU algorithms through registered copies on a discrete GPU this way).
pub const HOST_COPIES_ENV: &str = crate::env::HOST_COPIES.name;

/// Below this many bytes a copy takes the driver's staging in every mode: pinning pages (two
/// system calls) or splitting a copy over threads costs more than a small buffer's copy.
pub const REGISTER_FROM_BYTES: usize = 1 << 20;

/// How host memory reaches the device (`GPU_PLANNING_HOST_COPIES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostCopies {
    /// Large copies through the stream's own pinned chunks, overlapped (discrete GPUs).
    Pinned,
    /// Pageable copies through the driver's staging buffer.
    Staged,
    /// Large copies from and to the caller's pages, registered for the copy (integrated GPUs).
    Registered,
}

impl HostCopies {
    /// The mode for a device: `GPU_PLANNING_HOST_COPIES` when set to a mode, else registered
    /// on integrated GPUs and pinned on discrete ones.
    pub fn for_device(integrated: bool) -> HostCopies {
        Self::choose(crate::env::HOST_COPIES.get().as_deref(), integrated)
    }

    fn choose(setting: Option<&str>, integrated: bool) -> HostCopies {
        match setting.map(str::trim) {
            Some("pinned") => HostCopies::Pinned,
            Some("staged") => HostCopies::Staged,
            Some("registered") => HostCopies::Registered,
            Some(other) if !other.is_empty() => {
                tracing::warn!(
                    "{HOST_COPIES_ENV}={other:?} is not pinned, staged or registered; using \
                     the device's default"
                );
                Self::choose(None, integrated)
            }
            _ if integrated => HostCopies::Registered,
            _ => HostCopies::Pinned,
        }
    }

    /// Whether a copy of `bytes` goes through registered pages in this mode.
    pub fn registers(self, bytes: usize) -> bool {
        self == HostCopies::Registered && bytes >= REGISTER_FROM_BYTES
    }

    /// Whether a copy of `bytes` goes through the stream's pinned chunks in this mode.
    pub fn pins(self, bytes: usize) -> bool {
        self == HostCopies::Pinned && bytes >= REGISTER_FROM_BYTES
    }

    /// The variable's value for it.
    pub fn name(self) -> &'static str {
        match self {
            HostCopies::Pinned => "pinned (the stream's own chunks, overlapped)",
            HostCopies::Staged => "staged (the driver's pinned buffer)",
            HostCopies::Registered => "registered (from and to the caller's pages)",
        }
    }
}

/// Host pages registered with the driver for as long as this lives. The copies that use them
/// must have finished (the stream synchronised) before it drops.
pub struct Registration {
    ptr: *mut std::ffi::c_void,
}

impl Registration {
    /// Registers `bytes` bytes at `ptr`; None when the driver refuses (for instance pages
    /// another registration already holds: two buffers may share a page), and the caller then
    /// copies the staged way.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` must be live host memory for as long as the registration lives.
    pub unsafe fn new(ptr: *const std::ffi::c_void, bytes: usize) -> Option<Registration> {
        let ptr = ptr as *mut std::ffi::c_void;
        // SAFETY: the caller guarantees the range is live; flags 0 is plain page-locking.
        let r = unsafe { sys::cuMemHostRegister_v2(ptr, bytes, 0) };
        let ok = r == sys::CUresult::CUDA_SUCCESS;
        if ok {
            REGISTRATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        ok.then_some(Registration { ptr })
    }

    /// How many registrations the driver has granted in this process: a refused one falls
    /// back to the staged copy without a word, so this is how a test knows registered copies
    /// really ran.
    pub fn granted() -> u64 {
        REGISTRATIONS.load(std::sync::atomic::Ordering::Relaxed)
    }
}

static REGISTRATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: `ptr` was registered by `new` and is unregistered once, here. A failure
        // leaves the pages locked until the process ends, which is harmless.
        let _ = unsafe { sys::cuMemHostUnregister(self.ptr) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrated_gpus_register_and_the_setting_overrides() {
        use HostCopies::*;
        assert_eq!(HostCopies::choose(None, true), Registered);
        assert_eq!(HostCopies::choose(None, false), Pinned);
        assert_eq!(HostCopies::choose(Some("staged"), false), Staged);
        assert_eq!(HostCopies::choose(Some("pinned"), true), Pinned);
        assert_eq!(HostCopies::choose(Some("registered"), false), Registered);
        assert_eq!(HostCopies::choose(Some(" staged "), true), Staged);
        assert_eq!(HostCopies::choose(Some("zero-copy"), true), Registered);
        assert_eq!(HostCopies::choose(Some(""), false), Pinned);
        assert!(Registered.registers(REGISTER_FROM_BYTES));
        assert!(!Registered.registers(REGISTER_FROM_BYTES - 1));
        assert!(!Staged.registers(usize::MAX));
        assert!(Pinned.pins(REGISTER_FROM_BYTES) && !Pinned.pins(REGISTER_FROM_BYTES - 1));
        assert!(!Pinned.registers(usize::MAX) && !Registered.pins(usize::MAX));
    }
}

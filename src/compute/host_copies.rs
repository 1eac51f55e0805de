//! How host buffers cross to the device. A copy from or to pageable memory (a `Vec`) makes the
//! driver go through a pinned staging buffer of its own: the CPU copies the data into it, the
//! copy engine moves it, two passes over the data. Registering the caller's own pages for the
//! copy (`cuMemHostRegister`) lets the copy engine read or write them directly, one pass. On
//! a discrete GPU pinning the pages of a one-off buffer costs about what it saves, so the
//! driver's staging stays the default there; on an integrated GPU (Jetson: CPU and GPU share
//! one memory, `CU_DEVICE_ATTRIBUTE_INTEGRATED`) the staging copy is a second pass over the one
//! memory both read, and registered copies are the default.

use cudarc::driver::sys;

/// Environment variable forcing the mode: `staged` or `registered` (tests run the GPU
/// algorithms through registered copies on a discrete GPU this way).
pub const HOST_COPIES_ENV: &str = "GPU_PLANNING_HOST_COPIES";

/// Below this many bytes a copy stays staged: pinning and unpinning pages (two system calls
/// and page-table work) costs more than the staging copy of a small buffer.
pub const REGISTER_FROM_BYTES: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostCopies {
    /// Pageable copies through the driver's staging buffer.
    Staged,
    /// Large copies from and to the caller's pages, registered for the copy.
    Registered,
}

impl HostCopies {
    /// The mode for a device: `GPU_PLANNING_HOST_COPIES` when set to a mode, else registered
    /// on integrated GPUs and staged on discrete ones.
    pub fn for_device(integrated: bool) -> HostCopies {
        Self::choose(std::env::var(HOST_COPIES_ENV).ok().as_deref(), integrated)
    }

    fn choose(setting: Option<&str>, integrated: bool) -> HostCopies {
        match setting.map(str::trim) {
            Some("staged") => HostCopies::Staged,
            Some("registered") => HostCopies::Registered,
            Some(other) if !other.is_empty() => {
                tracing::warn!(
                    "{HOST_COPIES_ENV}={other:?} is not staged or registered; using the \
                     device's default"
                );
                Self::choose(None, integrated)
            }
            _ if integrated => HostCopies::Registered,
            _ => HostCopies::Staged,
        }
    }

    /// Whether a copy of `bytes` goes through registered pages in this mode.
    pub fn registers(self, bytes: usize) -> bool {
        self == HostCopies::Registered && bytes >= REGISTER_FROM_BYTES
    }

    pub fn name(self) -> &'static str {
        match self {
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
        (r == sys::CUresult::CUDA_SUCCESS).then_some(Registration { ptr })
    }
}

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
        assert_eq!(HostCopies::choose(None, false), Staged);
        assert_eq!(HostCopies::choose(Some("registered"), false), Registered);
        assert_eq!(HostCopies::choose(Some(" staged "), true), Staged);
        assert_eq!(HostCopies::choose(Some("zero-copy"), true), Registered);
        assert_eq!(HostCopies::choose(Some(""), false), Staged);
        assert!(Registered.registers(REGISTER_FROM_BYTES));
        assert!(!Registered.registers(REGISTER_FROM_BYTES - 1));
        assert!(!Staged.registers(usize::MAX));
    }
}

//! Small page-locked buffers for reads from the device, handed from the objects that drop them
//! to the next that needs one. A read into page-locked memory is a true async copy, so two of
//! them queue back to back behind a kernel and cost one wait; but allocating one
//! (`cuMemHostAlloc`) took the H100's host about 1 ms, which a Lee grid made per map paid on
//! top of a setup of 0.4-0.8 ms (docs/bench-history, twenty-fourth part). The buffers are
//! mapped too: a kernel that ends a call may write its answer into one directly
//! ([`Readback::device_ptr`]), and the host only waits.

use std::sync::{Arc, Mutex};

use cudarc::driver::result::memcpy_dtoh_async;
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaContext, CudaStream, PinnedHostSlice};

use super::driver_error::gpu_err;
use crate::error::{Error, Result};
use crate::sync::lock;

/// Buffers kept for reuse: more than the grids a process holds at once is memory locked for
/// nothing.
const SPARE_CAP: usize = 16;

static SPARE: Mutex<Vec<PinnedHostSlice<u32>>> = Mutex::new(Vec::new());

/// A page-locked buffer of at least the length asked for; back to the spares when dropped.
/// Its holder waits for every copy into it before reading it, and before dropping it.
pub struct Readback {
    buf: Option<PinnedHostSlice<u32>>,
    /// The buffer's address for kernels, asked of the driver once.
    dev: Option<CUdeviceptr>,
}

impl Readback {
    /// A spare of at least `len` values, or a new one of `len` from `ctx`. (One device's
    /// contexts in this process are its primary context, so a spare is page-locked for all.)
    pub fn take(ctx: &Arc<CudaContext>, len: usize) -> Result<Readback> {
        let spare = {
            let mut spare = lock(&SPARE);
            let at = spare.iter().position(|b| b.len() >= len);
            at.map(|i| spare.swap_remove(i))
        };
        let buf = match spare {
            Some(b) => b,
            // SAFETY: the holder reads it only after a copy or a kernel writing it has been
            // waited for. Mapped, so that a kernel may write it directly (`device_ptr`).
            None => unsafe {
                ctx.alloc_pinned_with_flags::<u32>(
                    len,
                    cudarc::driver::sys::CU_MEMHOSTALLOC_DEVICEMAP,
                )
            }
            .map_err(gpu_err)?,
        };
        Ok(Readback {
            buf: Some(buf),
            dev: None,
        })
    }

    /// The page-locked buffer, to read once the copy into it was waited for.
    pub fn as_mut_slice(&mut self) -> Result<&mut [u32]> {
        match self.buf.as_mut() {
            Some(b) => b.as_mut_slice().map_err(gpu_err),
            None => Ok(&mut []),
        }
    }

    /// The buffer's address for kernels (page-locked and mapped: a kernel's stores cross the
    /// link as it makes them, and no copy is queued behind it).
    pub fn device_ptr(&mut self, ctx: &CudaContext) -> Result<CUdeviceptr> {
        if let Some(dev) = self.dev {
            return Ok(dev);
        }
        let Some(b) = self.buf.as_mut() else {
            return Err(Error::Gpu("readback: no buffer".into()));
        };
        let host = b.as_mut_slice().map_err(gpu_err)?.as_mut_ptr();
        // The driver's query needs the context current on this thread.
        ctx.bind_to_thread().map_err(gpu_err)?;
        let mut dev: CUdeviceptr = 0;
        // SAFETY: `host` is the start of a live page-locked allocation made with
        // CU_MEMHOSTALLOC_DEVICEMAP; the driver writes one device pointer.
        let r =
            unsafe { cudarc::driver::sys::cuMemHostGetDevicePointer_v2(&mut dev, host.cast(), 0) };
        r.result().map_err(gpu_err)?;
        self.dev = Some(dev);
        Ok(dev)
    }

    /// The first `len` values, once `stream`'s work (a kernel that wrote them through
    /// [`Self::device_ptr`]) is done.
    pub fn wait(&mut self, stream: &CudaStream, len: usize) -> Result<&[u32]> {
        stream.synchronize().map_err(gpu_err)?;
        let buf = self.as_mut_slice()?;
        if len > buf.len() {
            return Err(Error::Gpu(format!(
                "a read of {len} words from a page-locked buffer of {}",
                buf.len()
            )));
        }
        Ok(&buf[..len])
    }

    /// Copies `parts` (each a device address and a count of 32-bit words there) into the
    /// buffer one after another from its start, queued back to back behind `stream`'s work,
    /// and waits for them once: the words, in the parts' order.
    ///
    /// # Safety
    /// Each address holds at least its count of words, and nothing frees or rewrites them
    /// before this returns (the caller holds their buffers borrowed meanwhile).
    pub unsafe fn fetch(
        &mut self,
        stream: &CudaStream,
        parts: &[(CUdeviceptr, usize)],
    ) -> Result<&[u32]> {
        let total: usize = parts.iter().map(|&(_, words)| words).sum();
        let buf = self.as_mut_slice()?;
        if total > buf.len() {
            return Err(Error::Gpu(format!(
                "a read of {total} words into a page-locked buffer of {}",
                buf.len()
            )));
        }
        let mut queued = Ok(());
        let mut at = 0;
        for &(ptr, words) in parts.iter().filter(|&&(_, words)| words > 0) {
            // SAFETY: `ptr` holds `words` words (the caller's contract), as does the slice;
            // the stream is synchronised below whether or not every copy was queued, before
            // the words are read or the buffer goes back to the spares.
            queued =
                unsafe { memcpy_dtoh_async(&mut buf[at..at + words], ptr, stream.cu_stream()) };
            if queued.is_err() {
                break;
            }
            at += words;
        }
        stream.synchronize().map_err(gpu_err)?;
        queued.map_err(gpu_err)?;
        Ok(&buf[..total])
    }
}

impl Drop for Readback {
    fn drop(&mut self) {
        let mut spare = lock(&SPARE);
        if let Some(b) = self.buf.take() {
            if spare.len() < SPARE_CAP {
                spare.push(b);
            }
        }
    }
}

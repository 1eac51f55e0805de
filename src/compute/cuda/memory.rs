//! Device memory and copies: allocations (out of memory told apart, with the bytes), uploads
//! and downloads, the staging through pinned chunks and the page registration that large
//! copies take (see [`crate::compute::host_copies`]).

use cudarc::driver::{
    CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, DriverError, ValidAsZeroBits,
};

use super::runtime::CudaRuntime;
use crate::compute::driver_error::gpu_err;
use crate::compute::host_copies::{HostCopies, Registration};
use crate::compute::staging::{Part, Staging};
use crate::error::{Error, Result};

impl CudaRuntime {
    /// Uninitialised device buffer of `len` elements; out-of-memory is reported with the bytes.
    ///
    /// # Safety
    /// The caller must write every element before reading it back.
    pub unsafe fn alloc<T: DeviceRepr>(&self, len: usize) -> Result<CudaSlice<T>> {
        // The driver refuses zero-byte allocations; callers keep the logical length themselves.
        let n = len.max(1);
        injected_limit::<T>(n)?;
        self.stream.alloc::<T>(n).map_err(|e| alloc_err::<T>(e, n))
    }

    /// `len` zeroed values on the device; out of memory is [`crate::error::Error::OutOfMemory`].
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        let n = len.max(1);
        injected_limit::<T>(n)?;
        self.stream
            .alloc_zeros::<T>(n)
            .map_err(|e| alloc_err::<T>(e, n))
    }

    /// A device copy of `host`, on this view's stream.
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        if host.is_empty() {
            // SAFETY: nothing to read from an empty buffer.
            return unsafe { self.alloc(0) };
        }
        // SAFETY: every element is written by the copy below before anyone reads it.
        let mut dev = unsafe { self.alloc::<T>(host.len()) }?;
        let bytes = std::mem::size_of_val(host);
        if self.host_copies.pins(bytes) {
            // SAFETY: DeviceRepr types are plain data, viewed as their bytes for the copy.
            let src = unsafe { std::slice::from_raw_parts(host.as_ptr().cast::<u8>(), bytes) };
            {
                let (at, _written) = dev.device_ptr_mut(&self.stream);
                // SAFETY: `dev` holds `bytes` bytes and this stream orders every use of it.
                unsafe { self.staged(|s| s.upload(&self.stream, src, at)) }?;
            }
            return Ok(dev);
        }
        // SAFETY: `host` is borrowed for the whole call.
        unsafe {
            self.copy_with_pages(host.as_ptr().cast(), bytes, || {
                self.stream.memcpy_htod(host, &mut dev).map_err(gpu_err)
            })
        }?;
        Ok(dev)
    }

    /// A device array of `len` words that `make(at, out)` computes from the caller's data,
    /// `out` holding words `at..at + out.len()`: where large copies go through the pinned
    /// chunks, written straight into them over the pool (one host pass for the conversion and
    /// the copy together); otherwise into a host vector, then uploaded.
    pub fn upload_made(
        &self,
        len: usize,
        make: impl Fn(usize, &mut [u32]) + Sync + Send,
    ) -> Result<CudaSlice<u32>> {
        let bytes = len * 4;
        if !self.host_copies.pins(bytes) {
            use rayon::prelude::*;
            const PIECE: usize = 1 << 16;
            let mut host = crate::compute::staging::host_vec::<u32>(len);
            host.par_chunks_mut(PIECE)
                .enumerate()
                .for_each(|(p, out)| make(p * PIECE, out));
            return self.upload(&host);
        }
        // SAFETY: the staged copy below writes every element before anyone reads it.
        let mut dev = unsafe { self.alloc::<u32>(len) }?;
        {
            let (at, _written) = dev.device_ptr_mut(&self.stream);
            // Pieces start at multiples of 256 KiB of a page-aligned chunk and are whole
            // words (every length here a multiple of 4): each is a word-aligned word slice.
            let words = |at: usize, out: &mut [u8]| {
                make(at / 4, bytemuck::cast_slice_mut::<u8, u32>(out));
            };
            // SAFETY: `dev` holds `bytes` bytes and this stream orders every use of it.
            unsafe { self.staged(|s| s.upload_made(&self.stream, bytes, at, words)) }?;
        }
        Ok(dev)
    }

    /// Copies the first `len` elements of `dev` back to the host (waits for the stream).
    pub fn download<T: DeviceRepr + Default + Clone>(
        &self,
        dev: &CudaSlice<T>,
        len: usize,
    ) -> Result<Vec<T>> {
        self.download_range(dev, 0..len)
    }

    /// Copies `dev[range]` back to the host (waits for the stream).
    pub fn download_range<T: DeviceRepr + Default + Clone>(
        &self,
        dev: &CudaSlice<T>,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<T>> {
        let mut host = vec![T::default(); range.len()];
        crate::compute::staging::advise_huge_pages(&mut host);
        self.download_into(dev, range.start, &mut host)?;
        Ok(host)
    }

    /// Copies the first `len` elements of `dev` back to the host, as [`Self::download`], but
    /// queues `meanwhile`'s work behind the copy before waiting for it, so that the device runs
    /// it while the host waits for the copy and reads the result. For small reads: at most one
    /// pinned chunk ([`crate::compute::staging::CHUNK_BYTES`]). `meanwhile` must not copy between host
    /// and device through this runtime view.
    pub fn download_while<T: DeviceRepr + Default + Clone, R>(
        &self,
        dev: &CudaSlice<T>,
        len: usize,
        meanwhile: impl FnOnce() -> Result<R>,
    ) -> Result<(Vec<T>, R)> {
        let mut host = vec![T::default(); len];
        if len == 0 {
            return Ok((host, meanwhile()?));
        }
        let dst = bytes_of_mut(&mut host);
        let view = dev.slice(0..len);
        let (at, _read) = view.device_ptr(&self.stream);
        // SAFETY: the view holds `dst.len()` bytes and this stream orders every use of it.
        let r = unsafe { self.staged(|s| s.download_while(&self.stream, at, dst, meanwhile)) }?;
        Ok((host, r))
    }

    /// Copies `host.len()` elements of `dev` from `start` into `host` (waits for the stream).
    /// A caller that made `host` ahead (see [`crate::compute::staging::host_vec`], whose pages are
    /// already mapped) saves the page faults a fresh vector takes during the copy.
    pub fn download_into<T: DeviceRepr>(
        &self,
        dev: &CudaSlice<T>,
        start: usize,
        host: &mut [T],
    ) -> Result<()> {
        if host.is_empty() {
            return Ok(());
        }
        let range = start..start + host.len();
        let bytes = std::mem::size_of_val(host);
        if self.host_copies.pins(bytes) {
            let dst = bytes_of_mut(host);
            let view = dev.slice(range);
            let (at, _read) = view.device_ptr(&self.stream);
            // SAFETY: the view holds `bytes` bytes and this stream orders every use of it.
            return unsafe { self.staged(|s| s.download(&self.stream, at, dst)) };
        }
        let at = host.as_mut_ptr().cast();
        // SAFETY: `host` is borrowed for the whole call.
        unsafe {
            self.copy_with_pages(at, bytes, || {
                self.stream
                    .memcpy_dtoh(&dev.slice(range), host)
                    .map_err(gpu_err)
            })
        }
    }

    /// `dev` into `host` as [`Self::download_into`] copies it (from 0), then the first
    /// `widened.len()` 16-bit words of `words` into `widened`, each widened to 32 bits (0xffff,
    /// none, to 0xffffffff). Through the pinned chunks both go in one pass
    /// ([`crate::compute::staging::Staging::download_all`]: the words' first bytes cross while
    /// the first buffer's last are drained) and the widening is the drain, so the bus carries
    /// half the widened answer's bytes; otherwise each comes back by itself and the words are
    /// widened over the pool. Waits for the stream.
    pub fn download_with_widened<T: DeviceRepr>(
        &self,
        dev: &CudaSlice<T>,
        host: &mut [T],
        words: &CudaSlice<u16>,
        widened: &mut [u32],
    ) -> Result<()> {
        use crate::compute::staging::Dst;
        let bytes = std::mem::size_of_val(host) + widened.len() * 2;
        if host.is_empty() || widened.is_empty() || !self.host_copies.pins(bytes) {
            self.download_into(dev, 0, host)?;
            if widened.is_empty() {
                return Ok(());
            }
            let mut w = crate::compute::staging::host_vec::<u16>(widened.len());
            self.download_into(words, 0, &mut w)?;
            crate::compute::staging::parallel_widen(&w, widened);
            return Ok(());
        }
        let view = dev.slice(0..host.len());
        let (at, _read) = view.device_ptr(&self.stream);
        let wview = words.slice(0..widened.len());
        let (wat, _wread) = wview.device_ptr(&self.stream);
        let parts = vec![
            (at, Dst::Bytes(bytes_of_mut(host))),
            (wat, Dst::Widened(widened)),
        ];
        // SAFETY: each view holds its part's device bytes (host's, and 2 * widened.len()) and
        // this stream orders every use of them.
        unsafe { self.staged(|s| s.download_all(&self.stream, parts)) }
    }

    /// Copies device memory in `parts` into the byte slices `dst` cuts from what `make`
    /// returns (one a part, of its length), on this view's stream, each part once its `ready`
    /// event (work of another stream) has passed; returns when every byte is in place. Through
    /// the pinned chunks, the first are queued before `make` runs, so that fresh host memory
    /// is mapped while they cross ([`Staging::download_parts`]).
    ///
    /// # Safety
    /// Each part's `src` must be device memory of at least its `bytes` bytes that stays live
    /// and unwritten, once `ready` has passed, until this returns.
    pub unsafe fn download_parts<D: Send>(
        &self,
        parts: &[Part],
        make: impl FnOnce() -> D + Send,
        dst: impl for<'d> FnOnce(&'d mut D) -> Vec<&'d mut [u8]> + Send,
    ) -> Result<D> {
        let bytes = parts.iter().map(|p| p.bytes).sum();
        if self.host_copies.pins(bytes) {
            // SAFETY: as this function's.
            let r = unsafe { self.staged(|s| s.download_parts(&self.stream, parts, make, dst)) };
            if r.is_err() {
                // Copies queued before the failure may still read the parts, which the caller
                // may free (on another stream) once this returns.
                let _ = self.synchronize();
            }
            return r;
        }
        let mut made = make();
        let slices = dst(&mut made);
        if !crate::compute::staging::fits(parts, &slices) {
            return Err(Error::Gpu(
                "download_parts: the destinations do not match the parts".into(),
            ));
        }
        for (part, out) in parts.iter().zip(slices) {
            if let Some(ready) = part.ready {
                self.stream.wait(ready).map_err(gpu_err)?;
            }
            let stream = self.stream.cu_stream();
            // SAFETY: `out` is borrowed for the whole copy, which is waited for before
            // `copy_with_pages` returns; the caller vouches for the part's bytes.
            unsafe {
                self.copy_with_pages(out.as_ptr().cast(), out.len(), || {
                    cudarc::driver::result::memcpy_dtoh_async(out, part.src, stream)
                        .map_err(gpu_err)?;
                    self.synchronize()
                })
            }?;
        }
        Ok(made)
    }

    /// Makes this stream's pinned chunks now, where its large copies go through them (a
    /// node's start-up warm-up), so that no request pays for page-locking them (4 x 8 MiB);
    /// elsewhere nothing. True when they are ready.
    pub fn prepare_staging(&self) -> Result<bool> {
        if self.host_copies != HostCopies::Pinned {
            return Ok(false);
        }
        // SAFETY: the closure copies nothing.
        unsafe { self.staged(|_| Ok(())) }?;
        Ok(true)
    }

    /// Runs `copy` with this stream's pinned chunks, made on first use.
    ///
    /// # Safety
    /// As the [`Staging`] method `copy` calls.
    unsafe fn staged<R>(&self, copy: impl FnOnce(&mut Staging) -> Result<R>) -> Result<R> {
        self.ctx.bind_to_thread().map_err(gpu_err)?;
        let mut slot = self.staging.lock().unwrap_or_else(|p| p.into_inner());
        let staging = match slot.as_mut() {
            Some(s) => s,
            None => slot.insert(Staging::new(&self.ctx)?),
        };
        copy(staging)
    }

    /// Runs `copy`, a copy from or to the `bytes` host bytes at `at`, with those pages
    /// registered when this view registers copies of that size and the driver agrees (see
    /// [`crate::compute::host_copies`]); a registered copy returns before it ends, so the stream is
    /// synchronised before the pages are released.
    ///
    /// # Safety
    /// `at..at + bytes` must be live host memory for the whole call.
    unsafe fn copy_with_pages(
        &self,
        at: *const std::ffi::c_void,
        bytes: usize,
        copy: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let pages = if self.host_copies.registers(bytes) {
            // SAFETY: the caller keeps the range live for the call; the registration drops
            // before it returns.
            unsafe { Registration::new(at, bytes) }
        } else {
            None
        };
        let copied = copy();
        if pages.is_none() {
            return copied;
        }
        let synced = self.synchronize();
        drop(pages);
        copied.and(synced)
    }
}

/// The bytes of `host`, for a copy that overwrites every one of them.
pub(crate) fn bytes_of_mut<T: DeviceRepr>(host: &mut [T]) -> &mut [u8] {
    let bytes = std::mem::size_of_val(host);
    // SAFETY: DeviceRepr types are plain data, and the slice keeps `host`'s borrow.
    unsafe { std::slice::from_raw_parts_mut(host.as_mut_ptr().cast::<u8>(), bytes) }
}

/// Fault injection for tests of the out-of-memory paths: with
/// `GPU_PLANNING_DEVICE_ALLOC_LIMIT=<bytes>` in the environment, any single device allocation
/// above that size fails as the driver's out-of-memory would.
fn injected_limit<T>(len: usize) -> Result<()> {
    static LIMIT: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let limit = LIMIT.get_or_init(|| {
        crate::env::DEVICE_ALLOC_LIMIT
            .get()
            .and_then(|v| v.trim().parse().ok())
    });
    let bytes = len.saturating_mul(std::mem::size_of::<T>());
    match limit {
        Some(l) if bytes > *l => Err(Error::OutOfMemory {
            requested_bytes: bytes,
            detail: format!(
                "{len} x {} (above {} = {l})",
                std::any::type_name::<T>(),
                crate::env::DEVICE_ALLOC_LIMIT.name
            ),
        }),
        _ => Ok(()),
    }
}

fn alloc_err<T>(e: DriverError, len: usize) -> Error {
    if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        Error::OutOfMemory {
            requested_bytes: len * std::mem::size_of::<T>(),
            detail: format!("{len} x {}", std::any::type_name::<T>()),
        }
    } else {
        gpu_err(e)
    }
}

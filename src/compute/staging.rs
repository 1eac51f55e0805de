//! Large host-device copies through pinned buffers of our own, kept for the life of a stream
//! and reused by every call, with the host's half of the copy overlapped with the copy
//! engine's. A copy from or to a `Vec` otherwise goes through the driver's staging: one CPU
//! thread copies each piece into a pinned buffer and the copy engine waits for it, so the whole
//! call pays both passes one after the other, on one core. Here two pinned chunks alternate:
//! while the engine moves one, the CPU threads (rayon) fill or drain the other.

use cudarc::driver::{result, sys, CudaContext, CudaEvent, CudaStream, PinnedHostSlice};
use rayon::prelude::*;
use std::sync::Arc;

use super::cuda::gpu_err;
use crate::error::Result;

/// Bytes of one pinned chunk: large enough that a copy's fixed cost (about 10 µs) is small
/// beside its transfer, small enough that the first and last chunks (not overlapped) are short.
pub const CHUNK_BYTES: usize = 4 << 20;

/// Pieces one chunk's host copy is split into across threads.
const PIECE_BYTES: usize = 256 << 10;

struct Chunk {
    buf: PinnedHostSlice<u8>,
    /// Recorded after the last copy that used `buf`: the host touches `buf` after it.
    done: CudaEvent,
}

/// Two pinned chunks, made on first use by a stream's runtime view.
pub struct Staging {
    chunks: [Chunk; 2],
    /// The chunk the next piece goes through: consecutive copies (a kNN call's distances, then
    /// its indices) alternate too, so one copy's first piece need not wait for the previous
    /// copy's last.
    next: usize,
}

impl Staging {
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Staging> {
        let chunk = || -> Result<Chunk> {
            Ok(Chunk {
                // SAFETY: the bytes are written (upload) or copied into (download) before the
                // host reads them. Flags 0: cached, not write-combined, since downloads read it.
                buf: unsafe { ctx.alloc_pinned_with_flags::<u8>(CHUNK_BYTES, 0) }
                    .map_err(gpu_err)?,
                done: ctx.new_event(None).map_err(gpu_err)?,
            })
        };
        Ok(Staging {
            chunks: [chunk()?, chunk()?],
            next: 0,
        })
    }

    /// The chunk for the next piece, in turn.
    fn take_turn(&mut self) -> usize {
        let c = self.next;
        self.next = 1 - c;
        c
    }

    /// Copies `src` to device address `dst` on `stream`. Returns once every byte is in a
    /// pinned chunk or on the device; the last chunk's copy may still run (stream-ordered:
    /// later work on `stream` sees the data).
    ///
    /// # Safety
    /// `dst` must be device memory of at least `src.len()` bytes that `stream` may write.
    pub unsafe fn upload(
        &mut self,
        stream: &CudaStream,
        src: &[u8],
        dst: sys::CUdeviceptr,
    ) -> Result<()> {
        for (c, piece) in src.chunks(CHUNK_BYTES).enumerate() {
            let chunk = &mut self.chunks[self.take_turn()];
            chunk.done.synchronize().map_err(gpu_err)?;
            let buf = chunk.buf.as_mut_slice().map_err(gpu_err)?;
            parallel_copy(piece, &mut buf[..piece.len()]);
            let at = dst + (c * CHUNK_BYTES) as u64;
            // SAFETY: the caller vouches for dst; the source is pinned and not touched by the
            // host again until `done` (recorded next) has passed.
            unsafe { result::memcpy_htod_async(at, &buf[..piece.len()], stream.cu_stream()) }
                .map_err(gpu_err)?;
            chunk.done.record(stream).map_err(gpu_err)?;
        }
        Ok(())
    }

    /// Copies `dst.len()` bytes from device address `src` into `dst`, waiting for `stream`'s
    /// earlier work; returns when every byte is in `dst`.
    ///
    /// # Safety
    /// `src` must be device memory of at least `dst.len()` bytes that `stream` may read.
    pub unsafe fn download(
        &mut self,
        stream: &CudaStream,
        src: sys::CUdeviceptr,
        dst: &mut [u8],
    ) -> Result<()> {
        let mut pending: Option<(usize, &mut [u8])> = None;
        for (c, piece) in dst.chunks_mut(CHUNK_BYTES).enumerate() {
            let at = src + (c * CHUNK_BYTES) as u64;
            // SAFETY: the caller vouches for src.
            let turn = unsafe { self.queue_download(stream, at, piece.len()) }?;
            // While the engine fills this chunk, drain the previous one.
            if let Some((p, out)) = pending.take() {
                self.drain(p, out)?;
            }
            pending = Some((turn, piece));
        }
        if let Some((p, out)) = pending {
            self.drain(p, out)?;
        }
        Ok(())
    }

    /// Copies `dst.len()` bytes (at most [`CHUNK_BYTES`]) from device address `src` into
    /// `dst` after `stream`'s earlier work, and runs `meanwhile` between queueing the copy and
    /// waiting for it: what `meanwhile` queues on `stream` runs on the device while the host
    /// waits for the bytes and reads them, instead of after. `meanwhile` must not copy through
    /// this staging (its caller holds it).
    ///
    /// # Safety
    /// `src` must be device memory of at least `dst.len()` bytes that `stream` may read.
    pub unsafe fn download_while<R>(
        &mut self,
        stream: &CudaStream,
        src: sys::CUdeviceptr,
        dst: &mut [u8],
        meanwhile: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        if dst.len() > CHUNK_BYTES {
            return Err(crate::error::Error::Gpu(format!(
                "download_while: {} bytes do not fit one pinned chunk of {CHUNK_BYTES}",
                dst.len()
            )));
        }
        // SAFETY: the caller vouches for src.
        let turn = unsafe { self.queue_download(stream, src, dst.len()) }?;
        let queued = meanwhile();
        self.drain(turn, dst)?;
        queued
    }

    /// Queues a copy of `len` bytes (at most [`CHUNK_BYTES`]) from device address `src` into
    /// the next chunk, after `stream`'s earlier work; returns the chunk, for [`Self::drain`].
    ///
    /// # Safety
    /// `src` must be device memory of at least `len` bytes that `stream` may read.
    unsafe fn queue_download(
        &mut self,
        stream: &CudaStream,
        src: sys::CUdeviceptr,
        len: usize,
    ) -> Result<usize> {
        let turn = self.take_turn();
        let chunk = &mut self.chunks[turn];
        // The host finished draining this chunk (two pieces ago) before this point: its
        // copies are synchronous. Its event only orders it after earlier uploads.
        chunk.done.synchronize().map_err(gpu_err)?;
        let buf = chunk.buf.as_mut_slice().map_err(gpu_err)?;
        // SAFETY: the caller vouches for src; buf is pinned and the host reads it only after
        // `done` has passed.
        unsafe { result::memcpy_dtoh_async(&mut buf[..len], src, stream.cu_stream()) }
            .map_err(gpu_err)?;
        chunk.done.record(stream).map_err(gpu_err)?;
        Ok(turn)
    }

    fn drain(&mut self, c: usize, out: &mut [u8]) -> Result<()> {
        let chunk = &mut self.chunks[c];
        chunk.done.synchronize().map_err(gpu_err)?;
        let buf = chunk.buf.as_slice().map_err(gpu_err)?;
        parallel_copy(&buf[..out.len()], out);
        Ok(())
    }
}

/// A memcpy spread over the rayon pool (one core's copy bandwidth is a fraction of the host's).
/// One piece or less is copied on the calling thread: handing it to the pool and waking the
/// caller again costs more than the copy (tens of µs from a thread outside the pool).
fn parallel_copy(src: &[u8], dst: &mut [u8]) {
    if src.len() <= PIECE_BYTES {
        dst.copy_from_slice(src);
        return;
    }
    dst.par_chunks_mut(PIECE_BYTES)
        .zip(src.par_chunks(PIECE_BYTES))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// Copies may still read or fill the chunks: the driver must be done with them before they are
/// freed.
impl Drop for Staging {
    fn drop(&mut self) {
        for c in &self.chunks {
            let _ = c.done.synchronize();
        }
    }
}

/// A vector of `n` default values whose pages are already mapped, for a copy's destination. A
/// fresh large vector is only reserved address space: the copy into it would take a page fault
/// per 4 KiB on one thread at a time. Touching one value per page from the rayon pool maps them
/// in parallel, and can run while the device still computes what will be copied.
pub fn host_vec<T: Default + Clone + Send>(n: usize) -> Vec<T> {
    let mut v = vec![T::default(); n];
    let per_page = (4096 / std::mem::size_of::<T>().max(1)).max(1);
    v.par_chunks_mut(per_page * 64).for_each(|c| {
        for page in c.chunks_mut(per_page) {
            // Volatile: a store of the value calloc'd memory already holds may be elided.
            // SAFETY: page[0] is a live, aligned element of the vector.
            unsafe { std::ptr::write_volatile(&mut page[0], T::default()) };
        }
    });
    v
}

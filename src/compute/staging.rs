//! Large host-device copies through pinned buffers of our own, kept for the life of a stream
//! and reused by every call, with the host's half of the copy overlapped with the copy
//! engine's. A copy from or to a `Vec` otherwise goes through the driver's staging: one CPU
//! thread copies each piece into a pinned buffer and the copy engine waits for it, so the whole
//! call pays both passes one after the other, on one core. Here pinned chunks take turns:
//! while the engine moves some, the CPU threads (rayon) fill or drain another. The loop that
//! hands them out runs on a rayon worker itself: each chunk's copy is a fan-out over the pool,
//! and from a thread outside it every fan-out paid for waking the workers and then the caller
//! (about 90 µs a chunk on the H100's host, where 16 threads drain 64 MiB in 1.0-1.3 ms).

use cudarc::driver::{result, sys, CudaContext, CudaEvent, CudaStream, PinnedHostSlice};
use rayon::prelude::*;
use std::sync::Arc;

use super::driver_error::gpu_err;
use crate::error::Result;

/// Bytes of one pinned chunk: large enough that a copy's fixed costs (about 10 µs on the copy
/// engine, a fan-out over the host's threads) are small beside its transfer, small enough that
/// the first and last chunks (not overlapped) are short. On the H100, with the loop on a pool
/// worker, a 64 MB download took 1.8 ms through 8 MiB chunks against 2.7 through 4 MiB ones,
/// and 16 MiB ones were no faster (docs/bench-history, twenty-fourth part).
pub const CHUNK_BYTES: usize = 8 << 20;

/// Pieces one chunk's host copy is split into across threads.
const PIECE_BYTES: usize = 256 << 10;

struct Chunk {
    buf: PinnedHostSlice<u8>,
    /// Recorded after the last copy that used `buf`: the host touches `buf` after it.
    done: CudaEvent,
}

/// Pinned chunks a stream's copies take turns through (32 MiB a stream). A download keeps all
/// but the one the host drains queued on the copy engine: with two, the engine waited for each
/// drain (a rayon fan-out and an event wait, about as long as the chunk's transfer), and a 64
/// MB answer came back at 18 GB/s on the H100's host.
const CHUNKS: usize = 4;

/// One part of a download in parts ([`Staging::download_parts`]): `bytes` bytes at device
/// address `src`, which may be read once `ready`, recorded on another stream, has passed.
pub struct Part<'e> {
    /// Where the part starts on the device.
    pub src: sys::CUdeviceptr,
    /// Its length.
    pub bytes: usize,
    /// An event to wait for before reading it.
    pub ready: Option<&'e CudaEvent>,
}

/// Whether `slices` are the destinations of `parts`: one a part, each as long as its part.
pub fn fits(parts: &[Part], slices: &[&mut [u8]]) -> bool {
    slices.len() == parts.len() && slices.iter().zip(parts).all(|(s, p)| s.len() == p.bytes)
}

/// Four (`CHUNKS`) pinned chunks, made on first use by a stream's runtime view.
pub struct Staging {
    chunks: [Chunk; CHUNKS],
    /// The chunk the next piece goes through: consecutive copies (a kNN call's distances, then
    /// its indices) alternate too, so one copy's first piece need not wait for the previous
    /// copy's last.
    next: usize,
}

impl Staging {
    /// Allocates the pinned chunks in `ctx`.
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
            chunks: [chunk()?, chunk()?, chunk()?, chunk()?],
            next: 0,
        })
    }

    /// The chunk for the next piece, in turn.
    fn take_turn(&mut self) -> usize {
        let c = self.next;
        self.next = (c + 1) % CHUNKS;
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
        // SAFETY: as this function's.
        unsafe {
            self.upload_made(stream, src.len(), dst, |at, out| {
                copy_streaming(&src[at..at + out.len()], out)
            })
        }
    }

    /// Uploads `bytes` bytes that `make` writes straight into the pinned chunks, to device
    /// address `dst` on `stream`: `make(at, out)` fills `out` with the bytes from offset `at`,
    /// piece by piece over the pool (pieces start at multiples of 256 KiB). [`Self::upload`]
    /// copies its bytes so; an upload whose bytes are computed from the caller's (packed,
    /// converted) makes them here, the host's one pass over them the staging copy. Returns as
    /// [`Self::upload`] does.
    ///
    /// # Safety
    /// As [`Self::upload`]'s, for `bytes` bytes.
    pub unsafe fn upload_made(
        &mut self,
        stream: &CudaStream,
        bytes: usize,
        dst: sys::CUdeviceptr,
        make: impl Fn(usize, &mut [u8]) + Sync + Send,
    ) -> Result<()> {
        let here = |s: &mut Self| -> Result<()> {
            for at in (0..bytes).step_by(CHUNK_BYTES) {
                let len = CHUNK_BYTES.min(bytes - at);
                let chunk = &mut s.chunks[s.take_turn()];
                chunk.done.synchronize().map_err(gpu_err)?;
                let buf = &mut chunk.buf.as_mut_slice().map_err(gpu_err)?[..len];
                if len <= PIECE_BYTES {
                    make(at, buf);
                } else {
                    buf.par_chunks_mut(PIECE_BYTES)
                        .enumerate()
                        .for_each(|(p, out)| make(at + p * PIECE_BYTES, out));
                }
                // SAFETY: the caller vouches for dst; the source is pinned and not touched by
                // the host again until `done` (recorded next) has passed.
                unsafe { result::memcpy_htod_async(dst + at as u64, &*buf, stream.cu_stream()) }
                    .map_err(gpu_err)?;
                chunk.done.record(stream).map_err(gpu_err)?;
            }
            Ok(())
        };
        on_the_pool(stream, bytes, || here(self))
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
        // SAFETY: as this function's.
        unsafe { self.download_all(stream, vec![(src, Dst::Bytes(dst))]) }
    }

    /// Copies each part, device address and destination ([`Dst`]: the bytes as they are, or
    /// 16-bit words widened as the host drains them), one after the other through one turn
    /// of the chunks: a part's first bytes cross while the previous part's last are drained,
    /// where separate downloads would each wait for their first chunk and then for their last
    /// drain. Waits for `stream`'s earlier work; returns when every part is in place.
    ///
    /// # Safety
    /// Each part's address must be device memory of at least its [`Dst::device_bytes`] bytes
    /// that `stream` may read.
    pub unsafe fn download_all(
        &mut self,
        stream: &CudaStream,
        parts: Vec<(sys::CUdeviceptr, Dst<'_>)>,
    ) -> Result<()> {
        let bytes = parts.iter().map(|(_, d)| d.device_bytes()).sum();
        let pieces = parts.into_iter().flat_map(|(src, dst)| dst.pieces(src));
        // SAFETY: as this function's.
        on_the_pool(stream, bytes, || unsafe {
            self.download_here(stream, pieces)
        })
    }

    /// [`Self::download_all`]'s pieces (each at most [`CHUNK_BYTES`] on the device), on the
    /// calling thread.
    ///
    /// # Safety
    /// As [`Self::download_all`]'s.
    unsafe fn download_here<'d>(
        &mut self,
        stream: &CudaStream,
        pieces: impl Iterator<Item = (sys::CUdeviceptr, Dst<'d>)>,
    ) -> Result<()> {
        // Chunks queued on the engine and not yet drained, oldest first.
        let mut pending = std::collections::VecDeque::with_capacity(CHUNKS);
        for (src, out) in pieces {
            // The oldest is drained first: its chunk is the one the next piece goes through.
            if pending.len() == CHUNKS {
                if let Some((p, out)) = pending.pop_front() {
                    self.drain_into(p, out)?;
                }
            }
            // SAFETY: the caller vouches for src.
            let turn = unsafe { self.queue_download(stream, src, out.device_bytes()) }?;
            pending.push_back((turn, out));
        }
        for (p, out) in pending {
            self.drain_into(p, out)?;
        }
        Ok(())
    }

    /// Copies each of `parts` in turn into the byte slices `dst` cuts from what `make` returns
    /// (one slice a part, of its length), a part's first piece queued behind its `ready` event.
    /// The first chunks are queued on the engine before `make` runs: a caller whose
    /// destination is fresh host memory maps its pages while those bytes cross. Returns when
    /// every byte is in place.
    ///
    /// # Safety
    /// Each part's `src` must be device memory of at least its `bytes` bytes that stays live
    /// and unwritten, once `ready` has passed, until this returns.
    pub unsafe fn download_parts<D: Send>(
        &mut self,
        stream: &CudaStream,
        parts: &[Part],
        make: impl FnOnce() -> D + Send,
        dst: impl for<'d> FnOnce(&'d mut D) -> Vec<&'d mut [u8]> + Send,
    ) -> Result<D> {
        let bytes = parts.iter().map(|p| p.bytes).sum();
        // SAFETY: as this function's.
        on_the_pool(stream, bytes, || unsafe {
            self.download_parts_here(stream, parts, make, dst)
        })
    }

    /// [`Self::download_parts`] on the calling thread.
    ///
    /// # Safety
    /// As [`Self::download_parts`]'s.
    unsafe fn download_parts_here<D>(
        &mut self,
        stream: &CudaStream,
        parts: &[Part],
        make: impl FnOnce() -> D,
        dst: impl for<'d> FnOnce(&'d mut D) -> Vec<&'d mut [u8]>,
    ) -> Result<D> {
        // Every part's pieces in stream order: (part, offset, length).
        let pieces: Vec<(usize, usize, usize)> = parts
            .iter()
            .enumerate()
            .flat_map(|(p, part)| {
                (0..part.bytes)
                    .step_by(CHUNK_BYTES)
                    .map(move |at| (p, at, CHUNK_BYTES.min(part.bytes - at)))
            })
            .collect();
        // Pieces queued on the engine and not yet drained, oldest first.
        let mut pending = std::collections::VecDeque::with_capacity(CHUNKS);
        let mut next = 0;
        while next < pieces.len() && pending.len() < CHUNKS {
            // SAFETY: the caller vouches for the parts.
            pending.push_back((
                unsafe { self.queue_piece(stream, parts, pieces[next]) }?,
                next,
            ));
            next += 1;
        }
        let mut made = make();
        {
            let slices = dst(&mut made);
            if !fits(parts, &slices) {
                // Drained into nothing, so that no chunk is left holding a copy in flight.
                for (turn, _) in pending {
                    self.chunks[turn].done.synchronize().map_err(gpu_err)?;
                }
                return Err(crate::error::Error::Gpu(
                    "download_parts: the destinations do not match the parts".into(),
                ));
            }
            let mut outs: Vec<Option<&mut [u8]>> = slices
                .into_iter()
                .flat_map(|s| s.chunks_mut(CHUNK_BYTES))
                .map(Some)
                .collect();
            while let Some((turn, n)) = pending.pop_front() {
                if let Some(out) = outs[n].take() {
                    self.drain(turn, out)?;
                }
                if next < pieces.len() {
                    // SAFETY: the caller vouches for the parts.
                    let turn = unsafe { self.queue_piece(stream, parts, pieces[next]) }?;
                    pending.push_back((turn, next));
                    next += 1;
                }
            }
        }
        Ok(made)
    }

    /// Queues `piece` (part, offset, length) of `parts` into the next chunk, behind its
    /// part's `ready` event when it is the part's first.
    ///
    /// # Safety
    /// As [`Self::download_parts`]'s.
    unsafe fn queue_piece(
        &mut self,
        stream: &CudaStream,
        parts: &[Part],
        (p, at, len): (usize, usize, usize),
    ) -> Result<usize> {
        let part = &parts[p];
        if at == 0 {
            if let Some(ready) = part.ready {
                stream.wait(ready).map_err(gpu_err)?;
            }
        }
        // SAFETY: the caller vouches for the part's bytes.
        unsafe { self.queue_download(stream, part.src + at as u64, len) }
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
        // The host finished draining this chunk (CHUNKS pieces ago) before this point: its
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
        self.drain_into(c, Dst::Bytes(out))
    }

    /// Waits for chunk `c`'s copy, then moves its bytes into `out` as `out` takes them.
    fn drain_into(&mut self, c: usize, out: Dst) -> Result<()> {
        let chunk = &mut self.chunks[c];
        chunk.done.synchronize().map_err(gpu_err)?;
        let buf = chunk.buf.as_slice().map_err(gpu_err)?;
        match out {
            Dst::Bytes(o) => parallel_copy(&buf[..o.len()], o),
            // A chunk is page-aligned and a piece starts at a multiple of CHUNK_BYTES in it:
            // whole u16 words.
            Dst::Widened(o) => parallel_widen(bytemuck::cast_slice(&buf[..o.len() * 2]), o),
        }
        Ok(())
    }
}

/// Where the bytes of one part of [`Staging::download_all`] go.
pub enum Dst<'a> {
    /// As they are.
    Bytes(&'a mut [u8]),
    /// 16-bit words, each widened to 32 bits (0xffff, none, to 0xffffffff) as the host drains
    /// them: the bus carries half the bytes of the widened answer, and the host's one pass
    /// over it is the drain it makes anyway.
    Widened(&'a mut [u32]),
}

impl<'a> Dst<'a> {
    /// The bytes it takes from the device.
    pub fn device_bytes(&self) -> usize {
        match self {
            Dst::Bytes(o) => o.len(),
            Dst::Widened(o) => o.len() * 2,
        }
    }

    /// Its pieces of at most [`CHUNK_BYTES`] on the device, each with its device address, the
    /// whole starting at `src`.
    fn pieces(self, src: sys::CUdeviceptr) -> Vec<(sys::CUdeviceptr, Dst<'a>)> {
        let at = |i: usize| src + (i * CHUNK_BYTES) as u64;
        match self {
            Dst::Bytes(o) => o
                .chunks_mut(CHUNK_BYTES)
                .enumerate()
                .map(|(i, p)| (at(i), Dst::Bytes(p)))
                .collect(),
            Dst::Widened(o) => o
                .chunks_mut(CHUNK_BYTES / 2)
                .enumerate()
                .map(|(i, p)| (at(i), Dst::Widened(p)))
                .collect(),
        }
    }
}

/// Runs `copy`, a loop over the chunks of a copy of `bytes`, each chunk's copy spread over the
/// rayon pool, on a worker of the pool (the calling thread waits), with `stream`'s context
/// current there: a fan-out from a worker reaches workers still looking for work, and its end
/// needs no wake-up of a thread outside the pool. A copy of one chunk or less stays on the
/// calling thread: one fan-out either way, and the hop to a worker and back would be added to it.
fn on_the_pool<R: Send>(
    stream: &CudaStream,
    bytes: usize,
    copy: impl FnOnce() -> Result<R> + Send,
) -> Result<R> {
    if bytes <= CHUNK_BYTES {
        return copy();
    }
    rayon::scope(|_| {
        stream.context().bind_to_thread().map_err(gpu_err)?;
        copy()
    })
}

/// A memcpy spread over the rayon pool (one core's copy bandwidth is a fraction of the host's),
/// its pieces written with streaming stores ([`copy_streaming`]). One piece or less is copied
/// on the calling thread, by a plain memcpy: handing it to the pool and waking the caller again
/// costs more than the copy (tens of µs from a thread outside the pool), and so small a copy's
/// reader (a kernel's header, the next step of a loop) is better served from the cache.
pub fn parallel_copy(src: &[u8], dst: &mut [u8]) {
    if src.len() <= PIECE_BYTES {
        dst.copy_from_slice(src);
        return;
    }
    dst.par_chunks_mut(PIECE_BYTES)
        .zip(src.par_chunks(PIECE_BYTES))
        .for_each(|(d, s)| copy_streaming(s, d));
}

/// 16-bit words widened into `dst` over the rayon pool, 0xffff to 0xffffffff
/// ([`Dst::Widened`]'s drain, and a download that did not go through the pinned chunks), by
/// [`widen_streaming`].
pub fn parallel_widen(src: &[u16], dst: &mut [u32]) {
    const WORDS: usize = PIECE_BYTES / 4;
    if src.len() <= WORDS {
        widen_streaming(src, dst);
        return;
    }
    dst.par_chunks_mut(WORDS)
        .zip(src.par_chunks(WORDS))
        .for_each(|(d, s)| widen_streaming(s, d));
}

/// One 16-bit word widened: 0xffff (none) to 0xffffffff, every other value as it is.
fn widen(x: u16) -> u32 {
    if x == u16::MAX {
        u32::MAX
    } else {
        u32::from(x)
    }
}

/// `dst[i] = widen(src[i])` with streaming stores where the CPU has them (x86-64), as
/// [`copy_streaming`] writes: the destination is an answer no core reads back soon.
fn widen_streaming(src: &[u16], dst: &mut [u32]) {
    assert_eq!(src.len(), dst.len(), "widen_streaming: lengths differ");
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi16, _mm_loadu_si128, _mm_set1_epi32, _mm_sfence,
            _mm_stream_si128, _mm_unpackhi_epi16, _mm_unpacklo_epi16,
        };
        let n = dst.len();
        let head = dst.as_ptr().align_offset(16).min(n);
        let blocks = (n - head) / 8;
        for (d, &s) in dst[..head].iter_mut().zip(&src[..head]) {
            *d = widen(s);
        }
        // SAFETY: SSE2 is part of x86-64. From `head`, both hold 8 * blocks words; the
        // destination from there is 16-byte aligned, as the streaming store needs, and the
        // loads are unaligned ones. A word and its lane of the 0xffff mask interleave into
        // one little-endian u32: x | 0xffff << 16 exactly when x is 0xffff.
        unsafe {
            let s = src.as_ptr().add(head).cast::<__m128i>();
            let d = dst.as_mut_ptr().add(head).cast::<__m128i>();
            let ones = _mm_set1_epi32(-1);
            for b in 0..blocks {
                let x = _mm_loadu_si128(s.add(b));
                let none = _mm_cmpeq_epi16(x, ones);
                _mm_stream_si128(d.add(2 * b), _mm_unpacklo_epi16(x, none));
                _mm_stream_si128(d.add(2 * b + 1), _mm_unpackhi_epi16(x, none));
            }
            // Weakly ordered stores, fenced before the join tells another thread they are there.
            _mm_sfence();
        }
        let done = head + 8 * blocks;
        for (d, &s) in dst[done..].iter_mut().zip(&src[done..]) {
            *d = widen(s);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = widen(s);
    }
}

/// `dst.copy_from_slice(src)` with non-temporal stores where the CPU has them (x86-64): a
/// staged copy's destination is a pinned chunk the copy engine reads next, or megabytes of
/// answers, neither of which this core reads back from its cache, and a plain store first
/// reads every destination line in (half again the memory traffic the copy needs). glibc's
/// memcpy streams too, but only above a size (a fraction of the cache) that our 256 KiB pieces
/// never reach. On the H100's host this took a 12 MB upload (the 1M-query kNN call's) from
/// 1.0-1.2 to 0.55-0.66 ms (docs/bench-history, twenty-third part).
fn copy_streaming(src: &[u8], dst: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        assert_eq!(src.len(), dst.len(), "copy_streaming: lengths differ");
        let n = dst.len();
        let head = dst.as_ptr().align_offset(16).min(n);
        let lines = (n - head) / 64;
        dst[..head].copy_from_slice(&src[..head]);
        // SAFETY: SSE2 is part of x86-64. Both ranges hold head + 64 * lines bytes; the
        // destination from `head` is 16-byte aligned, as the streaming store needs, and the
        // loads are unaligned ones.
        unsafe {
            let s = src.as_ptr().add(head).cast::<__m128i>();
            let d = dst.as_mut_ptr().add(head).cast::<__m128i>();
            for l in 0..lines * 4 {
                _mm_stream_si128(d.add(l), _mm_loadu_si128(s.add(l)));
            }
            // Streaming stores are weakly ordered: fence them before the pool's join tells
            // another thread (or the copy engine's launch) that the bytes are there.
            _mm_sfence();
        }
        let done = head + 64 * lines;
        dst[done..].copy_from_slice(&src[done..]);
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
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

/// Transparent huge pages: the unit the kernel maps a huge-page-advised range in (x86-64 and
/// aarch64 with 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// Host buffers from this size up are asked to be mapped in huge pages ([`advise_huge_pages`]).
pub const HUGE_FROM_BYTES: usize = 4 << 20;

/// Asks the kernel to back the 2 MiB-aligned part of `v` with transparent huge pages, where
/// `v` is at least [`HUGE_FROM_BYTES`] long; true when it took the advice. For buffers the
/// host is about to fill for the first time: a fresh page costs the host a fault and its
/// zeroing, and 4 KiB at a time a 64 MB answer is 16,384 faults (4-7 ms on the H100's host
/// across 16 threads, more than the copy itself), 2 MiB at a time 32. Pages already mapped
/// keep their size. Where the system allows huge pages only on request (`madvise`, the
/// common default) this is that request; where it never allows them, nothing changes.
pub fn advise_huge_pages<T>(v: &mut [T]) -> bool {
    let bytes = std::mem::size_of_val(v);
    if bytes < HUGE_FROM_BYTES {
        return false;
    }
    let at = v.as_mut_ptr() as usize;
    let (first, end) = (
        at.next_multiple_of(HUGE_PAGE),
        (at + bytes) / HUGE_PAGE * HUGE_PAGE,
    );
    if end <= first {
        return false;
    }
    advise(first, end - first)
}

#[cfg(target_os = "linux")]
fn advise(at: usize, len: usize) -> bool {
    // SAFETY: [at, at + len) lies inside a live allocation of the caller's; the advice
    // changes how its pages are backed, never what they hold.
    unsafe { libc::madvise(at as *mut libc::c_void, len, libc::MADV_HUGEPAGE) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn advise(_at: usize, _len: usize) -> bool {
    false
}

/// A vector of `n` default values whose pages are already mapped, for a copy's destination:
/// a fresh large vector is only reserved address space, and the copy into it would take a
/// page fault per page on one thread at a time. A vector of [`ALWAYS_FRESH_BYTES`] or more is
/// calloc'd (the allocator maps it fresh, zeroed by the kernel) and one value per 4 KiB is
/// touched from the rayon pool, which maps the pages in parallel and can run while the device
/// still computes what will be copied; a smaller one is [`host_filled`] with the default.
pub fn host_vec<T: Default + Copy + Send + Sync>(n: usize) -> Vec<T> {
    if n * std::mem::size_of::<T>() < ALWAYS_FRESH_BYTES {
        return host_filled(n, T::default());
    }
    let mut v = vec![T::default(); n];
    let per_page = (4096 / std::mem::size_of::<T>().max(1)).max(1);
    over_the_pool(&mut v, |c: &mut [T]| {
        for page in c.chunks_mut(per_page) {
            // Volatile: a store of the value calloc'd memory already holds may be elided.
            // SAFETY: page[0] is a live, aligned element of the vector.
            unsafe { std::ptr::write_volatile(&mut page[0], T::default()) };
        }
    });
    v
}

/// From this size up the system allocator (glibc: its largest mmap threshold, 32 MiB on
/// 64-bit hosts) always maps a buffer fresh and unmaps it when freed, so calloc returns
/// zeroed pages without writing them. Below, it may hand out memory it recycled, which calloc
/// zeroes on the calling thread.
pub const ALWAYS_FRESH_BYTES: usize = 32 << 20;

/// A vector of `n` copies of `value` whose pages are mapped, filled over the rayon pool: in
/// huge pages where they apply ([`advise_huge_pages`]), each page first touched by the thread
/// that fills it. Neither a `vec![value; n]` nor a calloc'd vector does this. The first fills
/// and faults on one thread (16 MB took 8-20 ms on a 2-core host). The second is free only
/// when the allocator maps it fresh: memory it recycles (glibc, for a buffer below
/// [`ALWAYS_FRESH_BYTES`] once one such was freed: its mmap threshold rises to it, and a
/// thread's arena keeps the memory) calloc zeroes on the calling thread: the APSP answer at
/// n = 2000 (two 16 MB buffers, the last solution's freed) spent 3-4 ms there.
pub fn host_filled<T: Copy + Send + Sync>(n: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    over_the_pool(&mut v.spare_capacity_mut()[..n], |c| {
        c.fill(std::mem::MaybeUninit::new(value))
    });
    // SAFETY: over_the_pool handed every one of the first n elements to the fill.
    unsafe { v.set_len(n) };
    v
}

/// Advises `v` into huge pages when large, then hands it to `touch` in pieces over the pool
/// that cover it once: huge-page aligned in the middle (each thread maps whole ones, no two
/// threads fault the same page) and 64 pages at the ends. The parts before the first huge-page
/// boundary and after the last stay in 4 KiB pages (up to 2 MiB each): one thread mapping
/// them 4 KiB at a time took longer than all the huge pages between them.
fn over_the_pool<T: Send>(v: &mut [T], touch: impl Fn(&mut [T]) + Sync + Send) {
    let n = v.len();
    let size = std::mem::size_of::<T>().max(1);
    let (first, end) = if advise_huge_pages(v) {
        // Element indices of the first and last huge-page boundary (rounded up: a size that
        // does not divide 2 MiB puts a piece's start a few bytes past a boundary, which only
        // lets two threads meet at one page).
        let at = v.as_ptr() as usize;
        let index = |boundary: usize| (boundary - at).div_ceil(size).min(n);
        let bytes = n * size;
        (
            index(at.next_multiple_of(HUGE_PAGE)),
            index((at + bytes) / HUGE_PAGE * HUGE_PAGE),
        )
    } else {
        (n, n)
    };
    let (small, rest) = v.split_at_mut(first);
    let (huge, tail) = rest.split_at_mut(end.max(first) - first);
    let small_piece = (4096 / size).max(1) * 64;
    small
        .par_chunks_mut(small_piece)
        .chain(huge.par_chunks_mut((HUGE_PAGE / size).max(1)))
        .chain(tail.par_chunks_mut(small_piece))
        .for_each(touch);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_vec_holds_defaults_at_every_length_and_alignment() {
        let huge = HUGE_FROM_BYTES / 4;
        for n in [
            0,
            1,
            1023,
            1024,
            1025,
            huge - 1,
            huge,
            huge + 3,
            3 * huge + 517,
            ALWAYS_FRESH_BYTES / 4 + 517,
        ] {
            let v = host_vec::<u32>(n);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0), "n = {n}");
            let v = host_vec::<(u8, u16)>(n);
            assert!(v.len() == n && v.iter().all(|&x| x == (0, 0)), "n = {n}");
        }
    }

    #[test]
    fn host_filled_holds_the_value_at_every_length() {
        let huge = HUGE_FROM_BYTES / 4;
        for n in [0, 1, 1025, huge - 1, huge + 3, 3 * huge + 517] {
            let v = host_filled(n, 0x3fff_ffffi32);
            assert!(
                v.len() == n && v.iter().all(|&x| x == 0x3fff_ffff),
                "n = {n}"
            );
            let v = host_filled(n, u32::MAX);
            assert!(v.len() == n && v.iter().all(|&x| x == u32::MAX), "n = {n}");
        }
    }

    /// Every page of the vector is mapped when host_vec returns, its 4 KiB head and tail as
    /// much as its huge pages (mincore: the kernel's own word on which pages are resident).
    #[cfg(target_os = "linux")]
    #[test]
    fn host_vec_maps_every_page_head_and_tail_included() {
        for n in [
            5 * HUGE_FROM_BYTES / 4 + 1029,
            3 * (HUGE_PAGE / 4) + 7,
            999_999,
            ALWAYS_FRESH_BYTES / 4 + 1029,
        ] {
            let v = host_vec::<u32>(n);
            let first = v.as_ptr() as usize / 4096 * 4096;
            let end = (v.as_ptr() as usize + 4 * n).next_multiple_of(4096);
            let mut resident = vec![0u8; (end - first) / 4096];
            // SAFETY: [first, end) holds whole pages of the vector's live allocation, and
            // `resident` has one byte per page.
            let r = unsafe {
                libc::mincore(
                    first as *mut libc::c_void,
                    end - first,
                    resident.as_mut_ptr().cast(),
                )
            };
            assert_eq!(r, 0, "mincore failed");
            let missing = resident.iter().filter(|&&b| b & 1 == 0).count();
            assert_eq!(
                missing,
                0,
                "n = {n}: {missing} of {} pages not mapped",
                resident.len()
            );
        }
    }

    #[test]
    fn streaming_copies_equal_plain_ones_at_every_offset_and_length() {
        let src: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for (from, to) in [
            (0, 0),
            (0, 1),
            (1, 17),
            (3, 64),
            (5, 200),
            (16, 1040),
            (7, 4096),
        ] {
            for at in 0..20 {
                let len = to - from;
                let mut dst = vec![0xAAu8; len + at + 3];
                copy_streaming(&src[from..to], &mut dst[at..at + len]);
                assert_eq!(&dst[at..at + len], &src[from..to], "{from}..{to} at {at}");
                assert!(dst[..at].iter().chain(&dst[at + len..]).all(|&b| b == 0xAA));
            }
        }
        let big: Vec<u8> = (0..3 * PIECE_BYTES + 77).map(|i| i as u8).collect();
        let mut out = vec![0u8; big.len() + 1];
        parallel_copy(&big, &mut out[1..]);
        assert_eq!(&out[1..], &big[..]);
    }

    #[test]
    fn widened_words_equal_plain_ones_at_every_offset_and_length() {
        // Every fourth word is 0xffff (none), the rest any value but it, 0xfffe included.
        let src: Vec<u16> = (0..3000u32)
            .map(|i| match i % 4 {
                0 => u16::MAX,
                1 => u16::MAX - 1,
                _ => (i.wrapping_mul(2_654_435_761) >> 16) as u16,
            })
            .collect();
        let want = |s: &[u16]| -> Vec<u32> {
            s.iter()
                .map(|&x| if x == u16::MAX { u32::MAX } else { x as u32 })
                .collect()
        };
        for (from, to) in [(0, 0), (0, 1), (1, 9), (3, 17), (5, 200), (7, 3000)] {
            for at in 0..6 {
                let len = to - from;
                let mut dst = vec![0xAAAA_AAAAu32; len + at + 3];
                widen_streaming(&src[from..to], &mut dst[at..at + len]);
                assert_eq!(
                    dst[at..at + len],
                    want(&src[from..to]),
                    "{from}..{to} at {at}"
                );
                assert!(dst[..at]
                    .iter()
                    .chain(&dst[at + len..])
                    .all(|&w| w == 0xAAAA_AAAA));
            }
        }
        // Over the pool.
        let big: Vec<u16> = (0..PIECE_BYTES + 77).map(|i| (i * 7) as u16).collect();
        let mut out = vec![0u32; big.len()];
        parallel_widen(&big, &mut out);
        assert_eq!(out, want(&big));
    }

    #[test]
    fn destinations_fit_their_parts_one_each_and_as_long() {
        let part = |bytes| Part {
            src: 0,
            bytes,
            ready: None,
        };
        let parts = [part(3), part(0), part(5)];
        let (mut a, mut b, mut c) = ([0u8; 3], [0u8; 0], [0u8; 5]);
        assert!(fits(&parts, &[&mut a, &mut b, &mut c]));
        assert!(!fits(&parts, &[&mut a, &mut b]), "one short");
        assert!(!fits(&parts, &[&mut a, &mut c, &mut b]), "out of order");
        assert!(fits(&[], &[]));
    }

    #[test]
    fn only_large_buffers_are_advised_into_huge_pages() {
        let mut small = vec![0u8; HUGE_FROM_BYTES - 1];
        assert!(!advise_huge_pages(&mut small));
        assert!(!advise_huge_pages::<u64>(&mut []));
        let mut large = vec![0u8; 2 * HUGE_FROM_BYTES];
        // A kernel built without huge pages refuses the advice; one that has them (Linux's
        // sysfs shows them) takes it whatever its policy.
        let has_thp = std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists();
        if cfg!(target_os = "linux") && has_thp {
            assert!(advise_huge_pages(&mut large));
        }
        assert!(large.iter().all(|&x| x == 0));
    }
}

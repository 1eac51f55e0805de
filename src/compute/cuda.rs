//! The CUDA runtime: one context per process and a stream per node (see
//! [`CudaRuntime::with_priority`]); kernels compiled by NVRTC for the device's own compute
//! capability (nodes compile theirs when they start, see [`super::warmup`]), cached for the
//! life of the process and on disk (keyed by source hash, options, arch and NVRTC version; see
//! [`kernel_cache_dir`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    DeviceRepr, DriverError, LaunchConfig, ValidAsZeroBits,
};
use cudarc::nvrtc::Ptx;
use sha2::{Digest, Sha256};

pub use super::driver_error::gpu_err;
use super::host_copies::{HostCopies, Registration};
use super::memory_pool;
use super::staging::{Part, Staging};
use crate::error::{Error, Result};

/// Environment variable naming the folder for compiled kernels (CUBIN); `off` (or empty)
/// turns the disk cache off. Unset: the user's cache folder (see [`kernel_cache_dir`]).
pub const KERNEL_CACHE_ENV: &str = crate::env::KERNEL_CACHE.name;

/// The prelude (`kernels/common.cuh`: integer types, the grid-stride loop) compiled in front of
/// every kernel source.
pub const PRELUDE: &str = include_str!("../../kernels/common.cuh");

/// Blocks per multiprocessor that fill the device, for a grid-stride launch: enough to hide
/// latency, few enough that each thread loops over several items.
const STRIDE_BLOCKS_PER_SM: u32 = 16;

/// Items a thread of a grid-stride launch takes at most (more only where the grid would pass
/// the device's limit): past that the grid grows beyond what fills the device. A multiprocessor
/// runs a block to its end once it has started it, so a block's life is how long another
/// stream's higher-priority work may wait for room there; with grids capped at filling the
/// device, a kernel over a billion items (a cell graph's probes: cells x constraints) had
/// blocks that lived for half the kernel, and the planner's launches waited milliseconds.
const STRIDE_ITEMS_PER_THREAD: usize = 16;

/// A kernel source file from `kernels/`, embedded in the binary.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// The file's name without `.cu` (the compiled-kernel cache's key).
    pub name: &'static str,
    /// The CUDA C++ source.
    pub code: &'static str,
}

/// What `gpu_planning info` shows about the device.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    /// The device's name.
    pub name: String,
    /// (major, minor).
    pub compute_capability: (i32, i32),
    /// Bytes of device memory.
    pub total_memory: usize,
    /// Streaming multiprocessors.
    pub multiprocessors: i32,
    /// CPU and GPU share one memory (Jetson): host-device copies stay within it.
    pub integrated: bool,
    /// Most shared memory one block may opt into, in bytes (48 KiB without opting in).
    pub max_shared_per_block_optin: i32,
    /// The driver's CUDA version (major x 1000 + minor x 10).
    pub driver_version: i32,
    /// NVRTC's version (major, minor).
    pub nvrtc_version: (i32, i32),
}

impl DeviceInfo {
    /// The NVRTC architecture flag of the device (`sm_90`, `sm_87`, ...).
    pub fn arch(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }
}

/// A compiled module is identified by its source and the extra NVRTC options.
type ModuleKey = (&'static str, Vec<String>);

/// A module's slot: empty until its first compile succeeds.
type ModuleSlot = Arc<Mutex<Option<Arc<CudaModule>>>>;

/// The device, its compiled kernels and one stream. [`CudaRuntime::with_priority`] gives a
/// node a view of its own: the same context and kernels, its own stream, so that one node's
/// long solve does not queue another node's work behind it.
pub struct CudaRuntime {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    modules: Arc<Mutex<HashMap<ModuleKey, ModuleSlot>>>,
    /// Modules NVRTC compiled in this process (not found in the disk cache).
    compiled: Arc<std::sync::atomic::AtomicU64>,
    /// The stream's CUDA priority (0: the default; lower runs first).
    priority: i32,
    /// How large host buffers cross to the device (see [`super::host_copies`]).
    host_copies: HostCopies,
    /// This stream's pinned chunks for [`HostCopies::Pinned`], made on the first large copy.
    staging: Arc<Mutex<Option<Staging>>>,
    /// The view copies overlapping this stream's work go through ([`Self::copy_stream`]),
    /// made on first use and kept with the stream.
    copies: Arc<OnceLock<Arc<CudaRuntime>>>,
}

impl CudaRuntime {
    /// The process-wide runtime on device 0, created on first use. A failure is remembered, so
    /// later callers get the same reason without probing the driver again.
    pub fn shared() -> Result<Arc<CudaRuntime>> {
        static SHARED: OnceLock<std::result::Result<Arc<CudaRuntime>, String>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                CudaRuntime::new(0).map(Arc::new).map_err(|e| match e {
                    Error::NoDevice(reason) => reason,
                    other => other.to_string(),
                })
            })
            .clone()
            .map_err(Error::NoDevice)
    }

    /// Opens device `ordinal`. Checks that the driver and NVRTC libraries exist before touching
    /// them, since cudarc's dynamic loader panics on a missing library.
    pub fn new(ordinal: usize) -> Result<CudaRuntime> {
        // SAFETY: these only try to dlopen the libraries.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::NoDevice(
                "the CUDA driver library (libcuda) is not installed".into(),
            ));
        }
        // SAFETY: a query of whether the dynamically loaded NVRTC library is present; no arguments.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(Error::NoDevice(
                "the NVRTC library (libnvrtc) is not installed".into(),
            ));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| Error::NoDevice(e.to_string()))?;
        let stream = ctx.default_stream();
        let attr = |a| ctx.attribute(a).map_err(gpu_err);
        use cudarc::driver::sys::CUdevice_attribute as A;
        let mut driver_version = 0;
        // SAFETY: plain out-parameter calls into libraries we just checked exist.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver_version) };
        let (mut major, mut minor) = (0, 0);
        // SAFETY: NVRTC writes two ints, both live locals.
        unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
        let info = DeviceInfo {
            name: ctx.name().map_err(gpu_err)?,
            compute_capability: ctx.compute_capability().map_err(gpu_err)?,
            total_memory: ctx.total_mem().map_err(gpu_err)?,
            multiprocessors: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            integrated: attr(A::CU_DEVICE_ATTRIBUTE_INTEGRATED)? != 0,
            max_shared_per_block_optin: attr(
                A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
            driver_version,
            nvrtc_version: (major, minor),
        };
        memory_pool::keep_freed_memory(&ctx, memory_pool::kept_bytes(info.total_memory))?;
        let host_copies = HostCopies::for_device(info.integrated);
        Ok(CudaRuntime {
            ctx,
            stream,
            info,
            modules: Arc::new(Mutex::new(HashMap::new())),
            compiled: Arc::new(std::sync::atomic::AtomicU64::new(0)),
            priority: 0,
            host_copies,
            staging: Arc::default(),
            copies: Arc::default(),
        })
    }

    /// What the device is.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// A view of this runtime on a new stream of its own: the same context and compiled
    /// kernels. `gpu_priority` 0 is CUDA's default priority; higher values run first where
    /// the device has work of several streams to schedule (clamped to the device's range,
    /// 0..=5 on the H100; see [`CudaRuntime::priorities`]).
    pub fn with_priority(&self, gpu_priority: u32) -> Result<Arc<CudaRuntime>> {
        let (least, greatest) = self.priorities()?;
        let span = (least - greatest).max(0) as u32;
        let priority = least - gpu_priority.min(span) as i32;
        let stream = self
            .ctx
            .new_stream_with_priority(priority)
            .map_err(gpu_err)?;
        Ok(Arc::new(CudaRuntime {
            stream,
            priority,
            staging: Arc::default(),
            copies: Arc::default(),
            ..self.view()
        }))
    }

    /// A view of this runtime on a new stream of its own at this view's priority, copying as
    /// this view does, with pinned chunks of its own: for copies that overlap this view's work
    /// (a large kNN call's first answers come back while the device searches for the rest).
    pub fn sibling(&self) -> Result<Arc<CudaRuntime>> {
        let stream = self
            .ctx
            .new_stream_with_priority(self.priority)
            .map_err(gpu_err)?;
        Ok(Arc::new(CudaRuntime {
            stream,
            staging: Arc::default(),
            copies: Arc::default(),
            ..self.view()
        }))
    }

    /// This view's [`Self::sibling`] for copies that overlap its work, made on the first call
    /// and kept as long as the view's stream: the callers of one node (a k-d tree per cloud)
    /// share it and its pinned chunks, which take milliseconds to allocate.
    pub fn copy_stream(&self) -> Result<Arc<CudaRuntime>> {
        if let Some(c) = self.copies.get() {
            return Ok(c.clone());
        }
        let made = self.sibling()?;
        Ok(self.copies.get_or_init(|| made).clone())
    }

    /// A view of this runtime on the same stream that copies host buffers in `mode`.
    pub fn with_host_copies(&self, mode: HostCopies) -> Arc<CudaRuntime> {
        Arc::new(CudaRuntime {
            host_copies: mode,
            copies: Arc::default(),
            ..self.view()
        })
    }

    /// Another view of the same context, kernels, stream and settings.
    fn view(&self) -> CudaRuntime {
        CudaRuntime {
            ctx: self.ctx.clone(),
            stream: self.stream.clone(),
            info: self.info.clone(),
            modules: self.modules.clone(),
            compiled: self.compiled.clone(),
            priority: self.priority,
            host_copies: self.host_copies,
            staging: self.staging.clone(),
            copies: self.copies.clone(),
        }
    }

    /// How this view copies large host buffers.
    pub fn host_copies(&self) -> HostCopies {
        self.host_copies
    }

    /// The device's stream priorities as CUDA numbers them: (least, greatest), greatest the
    /// lower number (0 and -5 on the H100).
    pub fn priorities(&self) -> Result<(i32, i32)> {
        self.ctx.bind_to_thread().map_err(gpu_err)?;
        let (mut least, mut greatest) = (0, 0);
        // SAFETY: two out-parameters, both live locals; the context is current.
        let r =
            unsafe { cudarc::driver::sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest) };
        if r != cudarc::driver::sys::CUresult::CUDA_SUCCESS {
            return Err(Error::Gpu(format!("cuCtxGetStreamPriorityRange: {r:?}")));
        }
        Ok((least, greatest))
    }

    /// This view's stream priority in CUDA's numbers (0 for the shared runtime).
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// The stream this view's work runs on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The process's one CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Bytes the device's memory pool holds now, in use or kept for the next allocation
    /// (see [`super::memory_pool`]).
    pub fn pool_reserved(&self) -> Result<u64> {
        memory_pool::reserved(&self.ctx)
    }

    /// (free, total) device memory in bytes, now.
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().map_err(gpu_err)
    }

    /// A kernel function from `source`, compiling the whole file once per process.
    pub fn function(&self, source: &KernelSource, name: &str) -> Result<CudaFunction> {
        self.function_with(source, &[], name)
    }

    /// Like [`CudaRuntime::function`], with preprocessor definitions (`-DNAME=VALUE`) for
    /// compile-time tuning; each distinct set is compiled and cached separately.
    pub fn function_with(
        &self,
        source: &KernelSource,
        defines: &[(&str, String)],
        name: &str,
    ) -> Result<CudaFunction> {
        let extra: Vec<String> = defines.iter().map(|(k, v)| format!("-D{k}={v}")).collect();
        let module = self.module(source, extra)?;
        // cuModuleGetFunction needs the context current on this thread, and cudarc does not
        // bind it there; nodes call this from whichever worker thread serves a request.
        self.ctx.bind_to_thread().map_err(gpu_err)?;
        module.load_function(name).map_err(|e| Error::Launch {
            kernel: format!("{}::{name}", source.name),
            reason: format!("function not found in module: {e}"),
        })
    }

    /// Compiles (or finds in the caches) and loads the module of `source` with `defines`,
    /// as [`CudaRuntime::function_with`] would on first use; true when NVRTC had to run.
    pub fn prepare(&self, source: &KernelSource, defines: &[(&str, String)]) -> Result<bool> {
        let extra: Vec<String> = defines.iter().map(|(k, v)| format!("-D{k}={v}")).collect();
        let before = self.compiled.load(std::sync::atomic::Ordering::Relaxed);
        // Module loads need the context current on the calling thread.
        self.ctx.bind_to_thread().map_err(gpu_err)?;
        let module = self.module(source, extra)?;
        // The driver loads a module's kernels lazily (CUDA_MODULE_LOADING=LAZY, the default
        // since CUDA 12.2), each on its first lookup: look every kernel up now, so that a
        // request does not pay for it.
        for name in kernel_names(source.code) {
            module.load_function(name).map_err(|e| Error::Launch {
                kernel: format!("{}::{name}", source.name),
                reason: format!("function not found in module: {e}"),
            })?;
        }
        Ok(self.compiled.load(std::sync::atomic::Ordering::Relaxed) != before)
    }

    fn module(&self, source: &KernelSource, extra: Vec<String>) -> Result<Arc<CudaModule>> {
        // The map's lock is held only to find the module's own slot: a compile (up to a
        // second) then holds that slot alone, so requests for other modules go on, and a
        // request for this one waits for it instead of compiling it again.
        let slot = {
            let mut modules = self
                .modules
                .lock()
                .map_err(|_| Error::Gpu("kernel cache lock poisoned".into()))?;
            modules
                .entry((source.name, extra.clone()))
                .or_default()
                .clone()
        };
        let mut slot = slot
            .lock()
            .map_err(|_| Error::Gpu("kernel cache lock poisoned".into()))?;
        if let Some(m) = slot.as_ref() {
            return Ok(m.clone());
        }
        let image = self.compile(source, &extra)?;
        let module = self
            .ctx
            .load_module(image)
            .map_err(|e| Error::KernelCompile {
                kernel: source.name.into(),
                log: format!("module load failed: {e}"),
            })?;
        *slot = Some(module.clone());
        Ok(module)
    }

    fn compile(&self, source: &KernelSource, extra: &[String]) -> Result<Ptx> {
        let arch = self.info.arch();
        let mut options = vec![
            format!("--gpu-architecture={arch}"),
            "--std=c++17".to_string(),
            "-default-device".to_string(),
        ];
        // For profilers (ncu's source view): line tables, the same code otherwise.
        if crate::env::KERNEL_LINEINFO.is("1") {
            options.push("-lineinfo".to_string());
        }
        options.extend_from_slice(extra);
        let disk = disk_cache_path(source, &options, self.info.nvrtc_version);
        if let Some(path) = &disk {
            if let Ok(cubin) = std::fs::read(path) {
                return Ok(Ptx::from_binary(cubin));
            }
        }
        let started = std::time::Instant::now();
        // `#line` keeps the compiler's line numbers those of the file in kernels/.
        let code = format!("{PRELUDE}\n#line 1 \"{}.cu\"\n{}", source.name, source.code);
        let cubin =
            nvrtc_cubin(&code, &format!("{}.cu", source.name), &options).map_err(|log| {
                Error::KernelCompile {
                    kernel: source.name.into(),
                    log,
                }
            })?;
        self.compiled
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::debug!(
            "compiled kernels/{}.cu for {arch} in {:.0} ms",
            source.name,
            started.elapsed().as_secs_f64() * 1e3
        );
        if let Some(path) = &disk {
            // The disk cache is an optimisation: failing to write it is not an error. Written
            // aside and renamed, so a process starting beside this one never reads half a file.
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let aside = path.with_extension(format!("cubin.{}", std::process::id()));
            if std::fs::write(&aside, &cubin).is_ok() && std::fs::rename(&aside, path).is_err() {
                let _ = std::fs::remove_file(&aside);
            }
        }
        Ok(Ptx::from_binary(cubin))
    }

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
        super::staging::advise_huge_pages(&mut host);
        self.download_into(dev, range.start, &mut host)?;
        Ok(host)
    }

    /// Copies the first `len` elements of `dev` back to the host, as [`Self::download`], but
    /// queues `meanwhile`'s work behind the copy before waiting for it, so that the device runs
    /// it while the host waits for the copy and reads the result. For small reads: at most one
    /// pinned chunk ([`super::staging::CHUNK_BYTES`]). `meanwhile` must not copy between host
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
    /// A caller that made `host` ahead (see [`super::staging::host_vec`], whose pages are
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
        if !super::staging::fits(parts, &slices) {
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
    /// [`super::host_copies`]); a registered copy returns before it ends, so the stream is
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

    /// Waits for everything on this view's stream.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(gpu_err)
    }

    /// The launch of a grid-stride kernel (`GRID_STRIDE` in kernels/common.cuh) over `n`
    /// items: `threads` per block, blocks enough to cover `n` but no more than fill the device,
    /// unless a thread would then take more than `STRIDE_ITEMS_PER_THREAD` items.
    pub fn grid_stride(&self, n: usize, threads: u32) -> LaunchConfig {
        self.stride_launch(n, threads, STRIDE_ITEMS_PER_THREAD)
    }

    /// [`Self::grid_stride`] for a kernel whose blocks each reduce into shared memory before
    /// one global update per block (a histogram): never more blocks than fill the device, so
    /// that the global updates are as few as the device allows. For short kernels only.
    pub fn grid_fill(&self, n: usize, threads: u32) -> LaunchConfig {
        self.stride_launch(n, threads, usize::MAX)
    }

    fn stride_launch(&self, n: usize, threads: u32, items_per_thread: usize) -> LaunchConfig {
        let threads = threads.max(1);
        let sms = self.info.multiprocessors.max(1) as usize;
        LaunchConfig {
            grid_dim: (stride_blocks(n, threads, sms, items_per_thread), 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        }
    }
}

/// The bytes of `host`, for a copy that overwrites every one of them.
pub(crate) fn bytes_of_mut<T: DeviceRepr>(host: &mut [T]) -> &mut [u8] {
    let bytes = std::mem::size_of_val(host);
    // SAFETY: DeviceRepr types are plain data, and the slice keeps `host`'s borrow.
    unsafe { std::slice::from_raw_parts_mut(host.as_mut_ptr().cast::<u8>(), bytes) }
}

/// Blocks of a grid-stride launch over `n` items on `sms` multiprocessors: one item per thread
/// up to filling the device, then as many as keep a thread at `items_per_thread` items at most.
fn stride_blocks(n: usize, threads: u32, sms: usize, items_per_thread: usize) -> u32 {
    let fill = sms * STRIDE_BLOCKS_PER_SM as usize;
    let bounded = n.div_ceil((threads as usize).saturating_mul(items_per_thread));
    n.div_ceil(threads as usize)
        .min(fill.max(bounded))
        .clamp(1, i32::MAX as usize) as u32
}

/// The launch of a kernel with one thread per item: `threads` per block and ceil(n / threads)
/// blocks; `field` names the size in the error when the grid would exceed the device's limit.
pub fn one_per_item(n: usize, threads: u32, field: &str) -> Result<LaunchConfig> {
    let blocks = n.div_ceil(threads as usize).max(1);
    let blocks = u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| {
            Error::invalid(
                field,
                format!("{n} items need more blocks than a grid holds"),
            )
        })?;
    Ok(LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    })
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

/// The kernels a source defines: every `extern "C" __global__ void NAME(` in it, with or
/// without `__launch_bounds__(...)` before the name (the forms kernels/ uses for its entry
/// points).
fn kernel_names(code: &str) -> impl Iterator<Item = &str> {
    code.split("extern \"C\" __global__ void ")
        .skip(1)
        .filter_map(|rest| {
            let rest = match rest.trim_start().strip_prefix("__launch_bounds__") {
                Some(bounds) => bounds.split_once(')')?.1,
                None => rest,
            };
            rest.split_once('(').map(|(name, _)| name.trim())
        })
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

/// Launch errors name the kernel, since a bare driver code is useless in a log.
pub fn launch_err(kernel: &str) -> impl FnOnce(DriverError) -> Error + '_ {
    move |e| Error::Launch {
        kernel: kernel.to_string(),
        reason: e.to_string(),
    }
}

/// `code` compiled by NVRTC to a CUBIN for the real architecture in `options` (sm_XX), or the
/// compile log. A CUBIN, not PTX: the driver would compile PTX to machine code inside
/// cuModuleLoadData, holding the context while it does, so one node's start-up compile would
/// stall another node's requests on the same context (seen on the H100: get_plan calls of
/// 300-800 ms while other nodes loaded their modules).
fn nvrtc_cubin(code: &str, name: &str, options: &[String]) -> std::result::Result<Vec<u8>, String> {
    use cudarc::nvrtc::{result, sys};
    let nul = |what: &str| format!("{what} holds a NUL byte");
    let src = std::ffi::CString::new(code).map_err(|_| nul("the source"))?;
    let cname = std::ffi::CString::new(name).map_err(|_| nul("the name"))?;
    let prog = result::create_program(&src, Some(&cname)).map_err(|e| format!("{e:?}"))?;
    // SAFETY: `prog` is a live program from create_program until destroy_program below; the
    // CUBIN buffer is as large as NVRTC says the CUBIN is.
    let out = unsafe {
        match result::compile_program(prog, options) {
            Err(e) => {
                let log = result::get_program_log(prog)
                    .map(|raw| {
                        std::ffi::CStr::from_ptr(raw.as_ptr())
                            .to_string_lossy()
                            .into_owned()
                    })
                    .unwrap_or_default();
                Err(format!("{log} ({e:?}, options {options:?})"))
            }
            Ok(()) => {
                let mut size = 0usize;
                sys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .map_err(|e| format!("nvrtcGetCUBINSize: {e:?}"))
                    .and_then(|()| {
                        let mut cubin = vec![0u8; size];
                        sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast())
                            .result()
                            .map(|()| cubin)
                            .map_err(|e| format!("nvrtcGetCUBIN: {e:?}"))
                    })
            }
        }
    };
    // SAFETY: created above and destroyed once.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

fn disk_cache_path(
    source: &KernelSource,
    options: &[String],
    nvrtc: (i32, i32),
) -> Option<PathBuf> {
    let dir = kernel_cache_dir()?;
    let mut h = Sha256::new();
    h.update(PRELUDE.as_bytes());
    h.update(source.code.as_bytes());
    for o in options {
        h.update(o.as_bytes());
        h.update([0]);
    }
    h.update(format!("nvrtc {}.{}", nvrtc.0, nvrtc.1).as_bytes());
    let digest: String = h
        .finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    Some(dir.join(format!("{}-{digest}.cubin", source.name)))
}

/// Where compiled kernels (CUBIN) are kept between processes: `GPU_PLANNING_KERNEL_CACHE`
/// when set (`off` or empty: nowhere), else `$XDG_CACHE_HOME/gpu_planning/kernels`, else
/// `$HOME/.cache/gpu_planning/kernels` (the XDG default, as rosdep and pip use); None without
/// any of them.
pub fn kernel_cache_dir() -> Option<PathBuf> {
    let var = |k| std::env::var_os(k);
    cache_dir_from(
        crate::env::KERNEL_CACHE.get_os(),
        var("XDG_CACHE_HOME"),
        var("HOME"),
    )
}

fn cache_dir_from(
    setting: Option<std::ffi::OsString>,
    xdg_cache: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    match setting {
        Some(v) if v.is_empty() || v == "off" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => {
            let base = xdg_cache
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| {
                    home.filter(|v| !v.is_empty())
                        .map(|h| PathBuf::from(h).join(".cache"))
                })?;
            Some(base.join("gpu_planning").join("kernels"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_stride_blocks_fill_the_device_then_bound_a_threads_items() {
        let fill = 132 * STRIDE_BLOCKS_PER_SM;
        assert_eq!(stride_blocks(0, 256, 132, 16), 1);
        assert_eq!(stride_blocks(1, 256, 132, 16), 1);
        assert_eq!(stride_blocks(257, 256, 132, 16), 2);
        // Up to one item per thread on a full device, as many blocks as items need.
        assert_eq!(stride_blocks(fill as usize * 256, 256, 132, 16), fill);
        // Then the device's fill, until a thread would take more than 16 items.
        assert_eq!(stride_blocks(fill as usize * 256 * 16, 256, 132, 16), fill);
        let billion = 1usize << 30;
        let blocks = stride_blocks(billion, 256, 132, 16) as usize;
        assert_eq!(blocks, billion / (256 * 16));
        assert!(blocks * 256 * 16 >= billion);
        // grid_fill: never past the fill.
        assert_eq!(stride_blocks(billion, 256, 132, usize::MAX), fill);
        // The grid's limit holds, and the loop takes what is past it.
        assert_eq!(stride_blocks(usize::MAX, 1, 132, 1), i32::MAX as u32);
    }

    #[test]
    fn every_kernel_of_a_source_is_named() {
        use super::super::kernels as k;
        for source in [
            k::PRIMITIVES,
            k::LEE,
            k::CLEARANCE,
            k::COSTFIELD,
            k::APSP,
            k::POLYLINE,
            k::CELLGRAPH,
            k::KDTREE,
        ] {
            let names: Vec<&str> = kernel_names(source.code).collect();
            let kernels = source.code.matches("__global__").count();
            assert_eq!(names.len(), kernels, "{}", source.name);
            for n in &names {
                let plain = n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                assert!(plain && !n.is_empty(), "{}: '{n}'", source.name);
                assert!(!n.starts_with("__"), "{}: '{n}'", source.name);
            }
        }
        let lee: Vec<&str> = kernel_names(k::LEE.code).collect();
        assert!(lee.contains(&"lee_walk_segments"));
        let prim: Vec<&str> = kernel_names(k::PRIMITIVES.code).collect();
        assert!(prim.contains(&"radix_downsweep"), "{prim:?}");
    }

    #[test]
    fn the_kernel_cache_is_on_by_default_under_the_users_cache_folder() {
        let s = |v: &str| Some(std::ffi::OsString::from(v));
        let dir = |a, b, c| cache_dir_from(a, b, c).map(|p| p.display().to_string());
        let home = dir(None, None, s("/home/r"));
        assert_eq!(home.as_deref(), Some("/home/r/.cache/gpu_planning/kernels"));
        let xdg = dir(None, s("/var/c"), s("/home/r"));
        assert_eq!(xdg.as_deref(), Some("/var/c/gpu_planning/kernels"));
        assert_eq!(dir(s("/k"), s("/var/c"), s("/h")).as_deref(), Some("/k"));
        assert_eq!(dir(s("off"), s("/var/c"), s("/h")), None);
        assert_eq!(dir(s(""), None, s("/h")), None);
        assert_eq!(dir(None, s(""), None), None);
    }
}

//! The runtime itself: the process's one context, a stream per view, the device's facts, and
//! the views a node takes (its own stream, at its priority).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaModule, CudaStream};

use crate::compute::driver_error::gpu_err;
use crate::compute::host_copies::HostCopies;
use crate::compute::memory_pool;
use crate::compute::staging::Staging;
use crate::error::{Error, Result};

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
pub(super) type ModuleKey = (&'static str, Vec<String>);

/// A module's slot: empty until its first compile succeeds.
pub(super) type ModuleSlot = Arc<Mutex<Option<Arc<CudaModule>>>>;

/// The device, its compiled kernels and one stream. [`CudaRuntime::with_priority`] gives a
/// node a view of its own: the same context and kernels, its own stream, so that one node's
/// long solve does not queue another node's work behind it.
pub struct CudaRuntime {
    pub(super) ctx: Arc<CudaContext>,
    pub(super) stream: Arc<CudaStream>,
    pub(super) info: DeviceInfo,
    pub(super) modules: Arc<Mutex<HashMap<ModuleKey, ModuleSlot>>>,
    /// Modules NVRTC compiled in this process (not found in the disk cache).
    pub(super) compiled: Arc<std::sync::atomic::AtomicU64>,
    /// The stream's CUDA priority (0: the default; lower runs first).
    pub(super) priority: i32,
    /// How large host buffers cross to the device (see [`crate::compute::host_copies`]).
    pub(super) host_copies: HostCopies,
    /// This stream's pinned chunks for [`HostCopies::Pinned`], made on the first large copy.
    pub(super) staging: Arc<Mutex<Option<Staging>>>,
    /// The view copies overlapping this stream's work go through ([`Self::copy_stream`]),
    /// made on first use and kept with the stream.
    pub(super) copies: Arc<OnceLock<Arc<CudaRuntime>>>,
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
    /// (see [`crate::compute::memory_pool`]).
    pub fn pool_reserved(&self) -> Result<u64> {
        memory_pool::reserved(&self.ctx)
    }

    /// (free, total) device memory in bytes, now.
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().map_err(gpu_err)
    }

    /// Waits for everything on this view's stream.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(gpu_err)
    }
}

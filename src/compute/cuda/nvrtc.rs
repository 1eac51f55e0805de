//! Kernels compiled by NVRTC for the device's own architecture, kept for the life of the
//! process and in a disk cache (keyed by source hash, options, architecture and NVRTC
//! version; see [`kernel_cache_dir`]).

use std::path::PathBuf;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use sha2::{Digest, Sha256};

use super::runtime::{CudaRuntime, KernelSource};
use crate::compute::driver_error::gpu_err;
use crate::error::{Error, Result};

/// Environment variable naming the folder for compiled kernels (CUBIN); `off` (or empty)
/// turns the disk cache off. Unset: the user's cache folder (see [`kernel_cache_dir`]).
pub const KERNEL_CACHE_ENV: &str = crate::env::KERNEL_CACHE.name;

/// The prelude (`kernels/common.cuh`: integer types, the grid-stride loop) compiled in front of
/// every kernel source.
pub const PRELUDE: &str = include_str!("../../../kernels/common.cuh");

impl CudaRuntime {
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
    fn every_kernel_of_a_source_is_named() {
        use crate::compute::kernels as k;
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

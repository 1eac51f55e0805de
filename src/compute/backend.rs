use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::cuda::CudaRuntime;
use crate::error::{Error, Result};

/// What the user asked for (`backend` parameter, `--backend` flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// CUDA when a usable device is present, otherwise the CPU (one log line says why).
    #[default]
    Auto,
    /// The CPU, always there.
    Cpu,
    /// CUDA, or an error saying why it cannot be used.
    Cuda,
}

impl FromStr for BackendKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            "cuda" => Ok(Self::Cuda),
            other => Err(Error::invalid(
                "backend",
                format!("'{other}' is not one of auto, cpu, cuda"),
            )),
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Cpu => "cpu",
            Self::Cuda => "cuda",
        })
    }
}

/// The backend an operation runs on. Cloning is cheap: the CUDA runtime is shared by every node
/// of the process (one context, one compiled-kernel cache).
#[derive(Clone)]
pub enum Backend {
    /// The CPU reference paths.
    Cpu,
    /// A CUDA device, through this runtime's context and stream.
    Cuda(Arc<CudaRuntime>),
}

impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cpu => f.write_str("Cpu"),
            Self::Cuda(rt) => write!(f, "Cuda({})", rt.info().name),
        }
    }
}

impl Backend {
    /// Resolves a [`BackendKind`]. `Cuda` fails when no device can be used; `Auto` falls back to
    /// the CPU and logs the reason once per call.
    pub fn select(kind: BackendKind) -> Result<Backend> {
        match kind {
            BackendKind::Cpu => Ok(Backend::Cpu),
            BackendKind::Cuda => Ok(Backend::Cuda(CudaRuntime::shared()?)),
            BackendKind::Auto => match CudaRuntime::shared() {
                Ok(rt) => Ok(Backend::Cuda(rt)),
                // The device tests: a node or CLI on `auto` must not pass on the CPU there.
                Err(e) if super::testing::cuda_required() => Err(crate::Error::invalid(
                    "backend",
                    format!(
                        "auto: {} is set and no CUDA device answers: {e}",
                        super::testing::REQUIRE_CUDA_ENV
                    ),
                )),
                Err(e) => {
                    // Every node resolves its backend; say why only once per process.
                    static SAID: std::sync::Once = std::sync::Once::new();
                    SAID.call_once(|| tracing::info!("backend auto: using the CPU because {e}"));
                    Ok(Backend::Cpu)
                }
            },
        }
    }

    /// This backend for one node: on CUDA a stream of the node's own at `gpu_priority` (see
    /// [`CudaRuntime::with_priority`]); the CPU as it is.
    pub fn for_node(self, gpu_priority: u32) -> Result<Backend> {
        match self {
            Backend::Cpu => Ok(Backend::Cpu),
            Backend::Cuda(rt) => Ok(Backend::Cuda(rt.with_priority(gpu_priority)?)),
        }
    }

    /// "cpu" or "cuda", as results and statuses report it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Cuda(_) => "cuda",
        }
    }
}

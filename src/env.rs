//! gpu_planning's own environment variables, every one of them: each is named and read here
//! and nowhere else, and docs/environment.md lists them (a test holds both). They are for tests,
//! benchmarks and the build machine's caches; a node's behaviour is set by its parameters.

/// One variable: its name, what it does, and the values it takes.
#[derive(Debug, Clone, Copy)]
pub struct Var {
    pub name: &'static str,
    pub does: &'static str,
}

impl Var {
    /// Its value, when set and valid Unicode.
    pub fn get(&self) -> Option<String> {
        std::env::var(self.name).ok()
    }

    /// Its value as the OS gives it (paths).
    pub fn get_os(&self) -> Option<std::ffi::OsString> {
        std::env::var_os(self.name)
    }

    /// Whether it is set to exactly `value`.
    pub fn is(&self, value: &str) -> bool {
        self.get().is_some_and(|v| v == value)
    }
}

pub const REQUIRE_CUDA: Var = Var {
    name: "GPU_PLANNING_REQUIRE_CUDA",
    does: "set (not empty, not 0): a test without a CUDA device fails instead of skipping, and \
           backend auto is CUDA or an error (how the device tests run)",
};
pub const REQUIRE_INTEROP: Var = Var {
    name: "GPU_PLANNING_REQUIRE_INTEROP",
    does: "1: a test whose independent peer (Cyclone DDS, Fast DDS, rosbags, mcap, pypcd4, \
           laspy, openssl) is missing fails instead of skipping (how CI runs)",
};
pub const TEST_RUN: Var = Var {
    name: "GPU_PLANNING_TEST_RUN",
    does: "a number: the random tests' run (printed by each); set, a failure reproduces",
};
pub const REPO: Var = Var {
    name: "GPU_PLANNING_REPO",
    does: "a folder: the repository the tests read their data from (test binaries that \
           travel to another machine)",
};
pub const BIN: Var = Var {
    name: "GPU_PLANNING_BIN",
    does: "a path: the executable the tests run (a wrapper under emulation)",
};
pub const HOST_COPIES: Var = Var {
    name: "GPU_PLANNING_HOST_COPIES",
    does: "pinned, staged or registered: how host memory reaches the device (default: \
           registered on integrated GPUs, pinned otherwise)",
};
pub const KERNEL_CACHE: Var = Var {
    name: "GPU_PLANNING_KERNEL_CACHE",
    does: "a folder for compiled kernels between processes, or off (default: \
           $XDG_CACHE_HOME/gpu_planning/kernels, else ~/.cache/gpu_planning/kernels)",
};
pub const KERNEL_LINEINFO: Var = Var {
    name: "GPU_PLANNING_KERNEL_LINEINFO",
    does: "1: kernels compiled with line information (for compute-sanitizer and Nsight)",
};
pub const DEVICE_ALLOC_LIMIT: Var = Var {
    name: "GPU_PLANNING_DEVICE_ALLOC_LIMIT",
    does: "bytes: any single device allocation above it fails as out of memory (tests of the \
           CPU fallback)",
};
pub const LEE_PORTAL_MIB: Var = Var {
    name: "GPU_PLANNING_LEE_PORTAL_MIB",
    does: "MiB of device memory bitwave's portal tables may take per map (default 1024, at \
           most a sixteenth of the device; 0: none)",
};
pub const LEE_NARROW: Var = Var {
    name: "GPU_PLANNING_LEE_NARROW",
    does: "TILES:ROUNDS: when bitwave narrows a wave to its active tiles (benchmarks)",
};
pub const LEE_SCHEDULE: Var = Var {
    name: "GPU_PLANNING_LEE_SCHEDULE",
    does: "adaptive, rounds, queue, portals or portal-queue: bitwave's schedule (benchmarks; \
           default adaptive)",
};
pub const SOAK_ROUNDS: Var = Var {
    name: "GPU_PLANNING_SOAK_ROUNDS",
    does: "a number: rounds of the load test's soak (tests/nodes/load.rs; default 1)",
};

pub const CYCLONE_SECURE_PY: Var = Var {
    name: "GPU_PLANNING_CYCLONE_SECURE_PY",
    does: "a folder holding Python `cyclonedds` built on a Cyclone DDS with its DDS Security \
           plugins (Debian's 0.10.2; .ci/run builds it): the secured Cyclone DDS test's peer \
           (default: target/cyclone-secure-py)",
};

/// Every variable above.
pub const ALL: [Var; 14] = [
    REQUIRE_CUDA,
    REQUIRE_INTEROP,
    TEST_RUN,
    REPO,
    BIN,
    HOST_COPIES,
    KERNEL_CACHE,
    KERNEL_LINEINFO,
    DEVICE_ALLOC_LIMIT,
    LEE_PORTAL_MIB,
    LEE_NARROW,
    LEE_SCHEDULE,
    SOAK_ROUNDS,
    CYCLONE_SECURE_PY,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `GPU_PLANNING_` name in the sources and tests is one of these, none is read but
    /// here (the tests read them through this module too), and docs/environment.md lists every one.
    #[test]
    fn every_variable_is_read_here_and_listed_in_the_readme() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let names: Vec<&str> = ALL.iter().map(|v| v.name).collect();
        let mut stack = vec![root.join("src"), root.join("tests")];
        let (mut unknown, mut read_elsewhere) = (Vec::new(), Vec::new());
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.ends_with("src/env.rs") {
                    continue;
                }
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                for (at, _) in text.match_indices("GPU_PLANNING_") {
                    let name: String = text[at..]
                        .chars()
                        .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                        .collect();
                    if !names.contains(&name.as_str()) {
                        unknown.push(format!("{}: {name}", path.display()));
                    }
                }
                for read in [
                    "var(\"GPU_PLANNING_",
                    "var_os(\"GPU_PLANNING_",
                    "get(\"GPU_PLANNING_",
                ] {
                    // Rust only: the Python peers read what the tests hand them.
                    if path.extension().is_some_and(|e| e == "rs") && text.contains(read) {
                        read_elsewhere.push(path.display().to_string());
                    }
                }
            }
        }
        assert!(unknown.is_empty(), "not in env::ALL: {unknown:?}");
        assert!(
            read_elsewhere.is_empty(),
            "read outside src/env.rs: {read_elsewhere:?}"
        );
        let readme = std::fs::read_to_string(root.join("docs/environment.md")).unwrap();
        for v in ALL {
            assert!(
                readme.contains(v.name),
                "docs/environment.md does not list {}",
                v.name
            );
        }
    }
}

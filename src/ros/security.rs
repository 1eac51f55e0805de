//! SROS2's switches, read as rcl reads them (rcl/src/rcl/security.c): `ROS_SECURITY_ENABLE`
//! (`true` turns security on), `ROS_SECURITY_STRATEGY` (`Enforce`, else permissive),
//! `ROS_SECURITY_KEYSTORE` (made by `ros2 security create_keystore`), and the enclave from
//! `ROS_SECURITY_ENCLAVE_OVERRIDE`, else `--ros-args --enclave`, else `/`. The enclave's
//! directory is `<keystore>/enclaves/<enclave>` and must hold the six files rmw_dds_common
//! names ([`ENCLAVE_FILES`]).
//!
//! What a missing piece does follows rcl: under Enforce the process refuses to start, naming
//! what is missing; under Permissive it logs a WARN and joins the domain unsecured. A build
//! without the `security` feature cannot secure anything: Enforce refuses to start.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The files of an enclave directory, as rmw_dds_common's `get_security_files` names them.
pub const ENCLAVE_FILES: [&str; 6] = [
    "identity_ca.cert.pem",
    "cert.pem",
    "key.pem",
    "permissions_ca.cert.pem",
    "governance.p7s",
    "permissions.p7s",
];

/// What the environment asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Security {
    /// `ROS_SECURITY_ENABLE` is not `true`.
    Off,
    /// Secured with the enclave in this directory.
    Enclave(PathBuf),
    /// Asked for, but not possible (the reason); Permissive: run unsecured.
    Unsecured(String),
}

/// Reads the switches from `env` (the process environment in [`from_process`]) and the
/// command line's `--enclave`; an error under Enforce, naming what is missing.
pub fn resolve(
    env: impl Fn(&str) -> Option<String>,
    enclave_arg: Option<&str>,
) -> Result<Security> {
    if env("ROS_SECURITY_ENABLE").as_deref() != Some("true") {
        return Ok(Security::Off);
    }
    let enforce = env("ROS_SECURITY_STRATEGY").as_deref() == Some("Enforce");
    let missing = |why: String| -> Result<Security> {
        if enforce {
            Err(Error::invalid("ROS_SECURITY_STRATEGY=Enforce", why))
        } else {
            Ok(Security::Unsecured(why))
        }
    };
    let Some(keystore) = env("ROS_SECURITY_KEYSTORE").filter(|k| !k.is_empty()) else {
        return missing("ROS_SECURITY_KEYSTORE is not set".into());
    };
    let enclave = env("ROS_SECURITY_ENCLAVE_OVERRIDE")
        .filter(|e| !e.is_empty())
        .or_else(|| enclave_arg.map(str::to_string))
        .unwrap_or_else(|| "/".into());
    if !enclave.starts_with('/') {
        return Err(Error::invalid(
            "enclave",
            format!("'{enclave}' is not a fully qualified name (it starts with '/')"),
        ));
    }
    if !cfg!(feature = "security") {
        return missing(
            "ROS_SECURITY_ENABLE=true, but this build has no DDS Security (build with \
             --features security)"
                .into(),
        );
    }
    let dir = enclave_dir(Path::new(&keystore), &enclave);
    if !dir.is_dir() {
        return missing(format!(
            "enclave '{enclave}': no directory {} in keystore {keystore}",
            dir.display()
        ));
    }
    if let Some(f) = ENCLAVE_FILES.iter().find(|f| !dir.join(f).is_file()) {
        return missing(format!(
            "enclave '{enclave}': {} is missing",
            dir.join(f).display()
        ));
    }
    Ok(Security::Enclave(dir))
}

/// [`resolve`] on the process environment.
pub fn from_process(enclave_arg: Option<&str>) -> Result<Security> {
    resolve(|k| std::env::var(k).ok(), enclave_arg)
}

/// `<keystore>/enclaves/<enclave>` (the enclave `/` is `enclaves/` itself).
pub fn enclave_dir(keystore: &Path, enclave: &str) -> PathBuf {
    let mut dir = keystore.join("enclaves");
    for part in enclave.split('/').filter(|p| !p.is_empty()) {
        dir.push(part);
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    /// A keystore directory, removed when dropped.
    struct Keystore(PathBuf);
    impl Keystore {
        fn path(&self) -> &Path {
            &self.0
        }
    }
    impl Drop for Keystore {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn keystore_with(enclave: &str, files: &[&str]) -> Keystore {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let ks =
            Keystore(std::env::temp_dir().join(format!("gp-keystore-{}-{n}", std::process::id())));
        let dir = enclave_dir(ks.path(), enclave);
        std::fs::create_dir_all(&dir).unwrap();
        for f in files {
            std::fs::write(dir.join(f), "x").unwrap();
        }
        ks
    }

    /// A file of an enclave that does not verify is named, with the CA it was checked against.
    #[cfg(feature = "security")]
    #[test]
    fn an_enclave_file_that_does_not_verify_is_named_with_its_ca() {
        use crate::ros::keystore::{create_enclave, create_keystore, verify_enclave};
        let (ks, other) = (keystore_with("/", &[]), keystore_with("/", &[]));
        for k in [&ks, &other] {
            create_keystore(k.path()).unwrap();
            create_enclave(k.path(), "/a").unwrap();
        }
        let dir = enclave_dir(ks.path(), "/a");
        let foreign = enclave_dir(other.path(), "/a");
        verify_enclave(&dir).unwrap();
        let refused = |file: &str, ca: &str| {
            let e = verify_enclave(&dir).unwrap_err().to_string();
            let want = format!(
                "{} does not verify against {}",
                dir.join(file).display(),
                dir.join(ca).display()
            );
            assert!(e.contains(&want), "{e}");
        };
        let tamper = |file: &str, from: &str, to: &str| {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text.contains(from), "{file} holds no {from}");
            std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
            text
        };
        let restore = |file: &str, text: String| std::fs::write(dir.join(file), text).unwrap();
        // Signed text changed after signing.
        let kept = tamper(
            "governance.p7s",
            "<rtps_protection_kind>SIGN",
            "<rtps_protection_kind>NONE",
        );
        refused("governance.p7s", "permissions_ca.cert.pem");
        restore("governance.p7s", kept);
        let kept = tamper("permissions.p7s", "<grant ", "<grant  ");
        refused("permissions.p7s", "permissions_ca.cert.pem");
        restore("permissions.p7s", kept);
        verify_enclave(&dir).unwrap();
        // Files of another keystore: its identity, or its CA as the permissions CA.
        let copy =
            |from: &Path, file: &str| std::fs::copy(from.join(file), dir.join(file)).unwrap();
        copy(&foreign, "cert.pem");
        refused("cert.pem", "identity_ca.cert.pem");
        // With the other keystore's identity CA too, the identity holds; the governance,
        // ours, does not verify against the other keystore's permissions CA.
        copy(&foreign, "identity_ca.cert.pem");
        copy(&foreign, "permissions_ca.cert.pem");
        refused("governance.p7s", "permissions_ca.cert.pem");
    }

    #[test]
    fn off_unless_enable_is_exactly_true() {
        for v in [None, Some("1"), Some("True"), Some("yes")] {
            let e = match v {
                Some(v) => env(&[
                    ("ROS_SECURITY_ENABLE", v),
                    ("ROS_SECURITY_STRATEGY", "Enforce"),
                ]),
                None => env(&[]),
            };
            assert_eq!(resolve(e, None).unwrap(), Security::Off, "{v:?}");
        }
    }

    #[test]
    fn enforce_names_what_is_missing_and_permissive_runs_unsecured() {
        let ks = keystore_with("/robot/planner", &ENCLAVE_FILES[..5]);
        let root = ks.path().to_str().unwrap();
        let base = [
            ("ROS_SECURITY_ENABLE", "true"),
            ("ROS_SECURITY_KEYSTORE", root),
        ];
        let with = |strategy: &str| {
            let mut v = base.to_vec();
            v.push(("ROS_SECURITY_STRATEGY", strategy));
            env(&v)
        };
        let why = if cfg!(feature = "security") {
            "permissions.p7s is missing"
        } else {
            "no DDS Security"
        };
        let e = resolve(with("Enforce"), Some("/robot/planner")).unwrap_err();
        assert!(e.to_string().contains(why), "{e}");
        match resolve(with("Permissive"), Some("/robot/planner")).unwrap() {
            Security::Unsecured(w) => assert!(w.contains(why), "{w}"),
            other => panic!("{other:?}"),
        }
        if cfg!(feature = "security") {
            let e = resolve(with("Enforce"), Some("/robot/other")).unwrap_err();
            assert!(e.to_string().contains("no directory"), "{e}");
        }
    }

    #[test]
    fn the_override_wins_over_the_argument_and_a_full_enclave_is_used() {
        let ks = keystore_with("/fleet/a", &ENCLAVE_FILES);
        let root = ks.path().to_str().unwrap();
        let e = env(&[
            ("ROS_SECURITY_ENABLE", "true"),
            ("ROS_SECURITY_STRATEGY", "Enforce"),
            ("ROS_SECURITY_KEYSTORE", root),
            ("ROS_SECURITY_ENCLAVE_OVERRIDE", "/fleet/a"),
        ]);
        let got = resolve(e, Some("/elsewhere"));
        if cfg!(feature = "security") {
            assert_eq!(
                got.unwrap(),
                Security::Enclave(ks.path().join("enclaves/fleet/a"))
            );
        } else {
            assert!(got.unwrap_err().to_string().contains("--features security"));
        }
    }

    #[test]
    fn a_relative_enclave_is_refused() {
        let ks = keystore_with("/a", &ENCLAVE_FILES);
        let e = env(&[
            ("ROS_SECURITY_ENABLE", "true"),
            ("ROS_SECURITY_KEYSTORE", ks.path().to_str().unwrap()),
        ]);
        let err = resolve(e, Some("a")).unwrap_err();
        assert!(err.to_string().contains("fully qualified"), "{err}");
    }
}

//! SROS2 keystores without ROS: `gpu_planning security create-keystore DIR`,
//! `create-enclave DIR /enclave` and `create-permission DIR /enclave POLICY.xml` write what
//! `ros2 security create_keystore`, `create_enclave` and `create_permission` write:
//!
//! ```text
//! public/ca.cert.pem, identity_ca.cert.pem, permissions_ca.cert.pem (links to ca.cert.pem)
//! private/ca.key.pem, identity_ca.key.pem, permissions_ca.key.pem (links to ca.key.pem)
//! enclaves/governance.xml, governance.p7s
//! enclaves/<enclave>/cert.pem, key.pem, identity_ca.cert.pem, permissions_ca.cert.pem,
//!                    governance.p7s, permissions.xml, permissions.p7s
//! ```
//!
//! with one prime256v1 CA for identities and permissions, and the governance and permissions
//! signed as S/MIME (detached, text). The governance is sros2's default: authenticated
//! participants only, discovery, liveliness and data encrypted, RTPS messages signed, access
//! control on every topic. A new enclave may use every topic (sros2's default policy);
//! `create-permission` narrows it to a policy. The enclave's files are copies where sros2
//! makes links (same content; no link to break when a keystore is copied to a robot).

pub mod cli;
#[cfg(feature = "security")]
mod pki;
pub mod policy;

#[cfg(feature = "security")]
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// sros2's default governance (`ros2 security create_keystore`).
pub const GOVERNANCE_XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      <domains>
        <id_range><min>0</min><max>230</max></id_range>
      </domains>
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>SIGN</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>*</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
          <data_protection_kind>ENCRYPT</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
"#;

/// An enclave name as rcl accepts it: absolute, `/`-separated ROS name tokens.
pub fn check_enclave(enclave: &str) -> Result<()> {
    let ok = enclave.starts_with('/')
        && (enclave == "/"
            || enclave[1..].split('/').all(|t| {
                !t.is_empty()
                    && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !t.starts_with(|c: char| c.is_ascii_digit())
            }));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "enclave",
            format!("'{enclave}': expected an absolute name such as /robot/planner"),
        ))
    }
}

#[cfg(feature = "security")]
mod make {
    use openssl::pkey::{PKey, Private};
    use openssl::x509::X509;

    use super::*;

    fn write(path: &Path, bytes: &[u8]) -> Result<()> {
        std::fs::write(path, bytes).map_err(|e| Error::io(path.display().to_string(), e))
    }

    fn create_dir(path: &Path) -> Result<()> {
        std::fs::create_dir_all(path).map_err(|e| Error::io(path.display().to_string(), e))
    }

    fn link(target: &str, at: &Path) -> Result<()> {
        if at.symlink_metadata().is_ok() {
            return Ok(());
        }
        #[cfg(unix)]
        let made = std::os::unix::fs::symlink(target, at);
        #[cfg(not(unix))]
        let made = std::fs::copy(at.with_file_name(target), at).map(|_| ());
        made.map_err(|e| Error::io(at.display().to_string(), e))
    }

    fn ca_paths(keystore: &Path) -> (PathBuf, PathBuf) {
        (
            keystore.join("public/ca.cert.pem"),
            keystore.join("private/ca.key.pem"),
        )
    }

    /// The keystore's CA, read once per command.
    struct Ca {
        cert: X509,
        key: PKey<Private>,
    }

    impl Ca {
        fn load(dir: &Path) -> Result<Ca> {
            let (cert_path, key_path) = ca_paths(dir);
            if !cert_path.exists() {
                return Err(Error::invalid(
                    "keystore",
                    format!(
                        "{} has no CA ({}): run create-keystore first",
                        dir.display(),
                        cert_path.display()
                    ),
                ));
            }
            Ok(Ca {
                cert: pki::read_cert(&cert_path)?,
                key: pki::read_key(&key_path)?,
            })
        }
    }

    /// A keystore at `dir` (kept as it is if it already has a CA, as sros2 does).
    pub fn create_keystore(dir: &Path) -> Result<()> {
        let (cert_path, key_path) = ca_paths(dir);
        create_dir(&dir.join("public"))?;
        create_dir(&dir.join("private"))?;
        create_dir(&dir.join("enclaves"))?;
        if !cert_path.exists() {
            let key = pki::new_key()?;
            let cert = pki::certificate("sros2testCA", &key, None)?;
            write(&key_path, &pki::key_pem(&key)?)?;
            write(&cert_path, &pki::cert_pem(&cert)?)?;
        }
        for role in ["identity_ca", "permissions_ca"] {
            link("ca.cert.pem", &dir.join(format!("public/{role}.cert.pem")))?;
            link("ca.key.pem", &dir.join(format!("private/{role}.key.pem")))?;
        }
        let ca = Ca::load(dir)?;
        let governance = dir.join("enclaves/governance.xml");
        write(&governance, GOVERNANCE_XML.as_bytes())?;
        let signed = pki::smime_sign(GOVERNANCE_XML, &ca.cert, &ca.key)?;
        write(&dir.join("enclaves/governance.p7s"), &signed)
    }

    /// Enclave `enclave` of the keystore at `dir`: its identity and allow-all permissions.
    pub fn create_enclave(dir: &Path, enclave: &str) -> Result<()> {
        check_enclave(enclave)?;
        let ca = Ca::load(dir)?;
        let at = crate::ros::security::enclave_dir(dir, enclave);
        create_dir(&at)?;
        let key = pki::new_key()?;
        let cert = pki::certificate(enclave, &key, Some((&ca.cert, &ca.key)))?;
        write(&at.join("key.pem"), &pki::key_pem(&key)?)?;
        write(&at.join("cert.pem"), &pki::cert_pem(&cert)?)?;
        let ca_pem = pki::cert_pem(&ca.cert)?;
        write(&at.join("identity_ca.cert.pem"), &ca_pem)?;
        write(&at.join("permissions_ca.cert.pem"), &ca_pem)?;
        let governance = dir.join("enclaves/governance.p7s");
        let signed = std::fs::read(&governance)
            .map_err(|e| Error::io(governance.display().to_string(), e))?;
        write(&at.join("governance.p7s"), &signed)?;
        sign_permissions(dir, &ca, enclave, &policy::allow_all())
    }

    /// Permissions of `enclave` narrowed to what `policy_file` (sros2's policy format) grants.
    pub fn create_permission(dir: &Path, enclave: &str, policy_file: &Path) -> Result<()> {
        check_enclave(enclave)?;
        let at = crate::ros::security::enclave_dir(dir, enclave);
        if !at.join("cert.pem").exists() {
            return Err(Error::invalid(
                "enclave",
                format!(
                    "{enclave} is not in {}: run create-enclave first",
                    dir.display()
                ),
            ));
        }
        let xml = std::fs::read_to_string(policy_file)
            .map_err(|e| Error::io(policy_file.display().to_string(), e))?;
        let rules = policy::rules_for(&xml, enclave)?;
        sign_permissions(dir, &Ca::load(dir)?, enclave, &rules)
    }

    fn sign_permissions(dir: &Path, ca: &Ca, enclave: &str, rules: &policy::Rules) -> Result<()> {
        let text = policy::permissions_xml(
            enclave,
            rules,
            &policy::iso_days_from_now(0),
            &policy::iso_days_from_now(i64::from(pki::VALID_DAYS)),
        );
        let at = crate::ros::security::enclave_dir(dir, enclave);
        write(&at.join("permissions.xml"), text.as_bytes())?;
        write(
            &at.join("permissions.p7s"),
            &pki::smime_sign(&text, &ca.cert, &ca.key)?,
        )
    }
}

#[cfg(feature = "security")]
pub use make::{create_enclave, create_keystore, create_permission};
#[cfg(feature = "security")]
pub use pki::verify_enclave;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enclave_names_follow_rcl() {
        for ok in ["/", "/planner", "/robot_1/lee_planner"] {
            check_enclave(ok).unwrap();
        }
        for bad in ["planner", "/robot//x", "/1robot", "/a-b", "/x/"] {
            let e = check_enclave(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }
}

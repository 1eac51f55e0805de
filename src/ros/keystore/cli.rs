//! `gpu_planning security ...`: the keystore commands (see [`super`]).

use std::path::PathBuf;

use clap::Subcommand;

use crate::error::Result;

#[derive(Subcommand, Debug)]
pub enum SecurityCommand {
    /// A keystore in DIR as `ros2 security create_keystore` makes it: a CA and the signed
    /// governance (kept as they are if DIR already has a CA).
    CreateKeystore { dir: PathBuf },
    /// An enclave (e.g. /gpu_planning) of the keystore in DIR: its key, its certificate signed
    /// by the CA, and permissions for every topic, as `ros2 security create_enclave` makes them.
    CreateEnclave { dir: PathBuf, enclave: String },
    /// The enclave's permissions narrowed to an sros2 policy file (format 0.2.0: topics
    /// publish/subscribe, services reply/request, actions call/execute, ALLOW or DENY), signed
    /// by the keystore's CA, as `ros2 security create_permission` does.
    CreatePermission {
        dir: PathBuf,
        enclave: String,
        policy: PathBuf,
    },
}

#[cfg(feature = "security")]
pub fn run(cmd: SecurityCommand) -> Result<()> {
    match cmd {
        SecurityCommand::CreateKeystore { dir } => {
            super::create_keystore(&dir)?;
            println!("keystore: {}", dir.display());
        }
        SecurityCommand::CreateEnclave { dir, enclave } => {
            super::create_enclave(&dir, &enclave)?;
            let at = crate::ros::security::enclave_dir(&dir, &enclave);
            println!("enclave {enclave}: {}", at.display());
        }
        SecurityCommand::CreatePermission {
            dir,
            enclave,
            policy,
        } => {
            super::create_permission(&dir, &enclave, &policy)?;
            let at = crate::ros::security::enclave_dir(&dir, &enclave);
            println!(
                "permissions of {enclave}: {}",
                at.join("permissions.p7s").display()
            );
        }
    }
    Ok(())
}

impl SecurityCommand {
    /// The command as typed (`create-keystore`), for messages.
    pub fn name(&self) -> &'static str {
        match self {
            SecurityCommand::CreateKeystore { .. } => "create-keystore",
            SecurityCommand::CreateEnclave { .. } => "create-enclave",
            SecurityCommand::CreatePermission { .. } => "create-permission",
        }
    }
}

#[cfg(not(feature = "security"))]
pub fn run(cmd: SecurityCommand) -> Result<()> {
    Err(crate::error::Error::invalid(
        format!("security {}", cmd.name()),
        "this gpu_planning was built without DDS Security; build it with \
         `cargo build --release --features security` (needs libssl-dev and pkg-config)",
    ))
}

//! One DDS participant per process, an async executor for the nodes, and shutdown on
//! SIGINT/SIGTERM. `ros2-client` has no callbacks: every node is an async task over streams,
//! and each node needs its `Spinner` running (discovery, parameters, graph events).

use std::sync::Arc;

use ros2_client::{Context, ContextOptions};

use crate::error::{Error, Result};
use crate::ros::args::RosArgs;
use crate::ros::params::ParamsFile;

/// A latch that many tasks can wait on; firing it closes a channel, which wakes every waiter.
#[derive(Clone)]
pub struct Shutdown {
    tx: smol::channel::Sender<()>,
    rx: smol::channel::Receiver<()>,
}

impl Default for Shutdown {
    fn default() -> Self {
        let (tx, rx) = smol::channel::bounded(1);
        Shutdown { tx, rx }
    }
}

impl Shutdown {
    pub fn trigger(&self) {
        self.tx.close();
    }

    pub fn is_triggered(&self) -> bool {
        self.tx.is_closed()
    }

    pub async fn wait(&self) {
        // recv only returns (with an error) once the channel is closed.
        let _ = self.rx.recv().await;
    }
}

pub struct RosRuntime {
    context: Context,
    args: RosArgs,
    params: ParamsFile,
    executor: Arc<smol::Executor<'static>>,
    shutdown: Shutdown,
    /// The fully qualified names of the nodes created on this runtime, in creation order.
    nodes: Arc<std::sync::Mutex<Vec<String>>>,
    /// What its nodes computed, per backend.
    work: Arc<crate::ros::work::WorkTally>,
}

impl RosRuntime {
    /// Joins DDS domain `domain_id`, or `ROS_DOMAIN_ID` (default 0) when `None`, speaking the
    /// process's ROS distribution ([`crate::ros::distro`]), with DDS Security as the process
    /// environment and `--enclave` ask ([`crate::ros::security`]).
    pub fn new(args: RosArgs, params: ParamsFile, domain_id: Option<u16>) -> Result<RosRuntime> {
        let security = crate::ros::security::from_process(args.enclave.as_deref())?;
        RosRuntime::with_security(args, params, domain_id, security)
    }

    /// As [`RosRuntime::new`], with the security given instead of read from the environment
    /// (several participants of one process, each with its own enclave).
    pub fn with_security(
        args: RosArgs,
        params: ParamsFile,
        domain_id: Option<u16>,
        security: crate::ros::security::Security,
    ) -> Result<RosRuntime> {
        let domain = match domain_id {
            Some(d) => d,
            None => domain_from_env()?,
        };
        crate::ros::distro::adopt(crate::ros::distro::from_parameters(&params, &args.params)?)?;
        if let Err(e) = crate::ros::open_files::raise() {
            tracing::warn!("open-file limit left as it is: {e}");
        }
        let options = secured(ContextOptions::new().domain_id(domain), security)?;
        // Before the participant exists: its own endpoints (ros_discovery_info, rosout,
        // parameter events) carry their type hashes from the start, as rmw's do.
        crate::bag::schema::announce_type_hashes()?;
        let context = Context::with_options(options)
            .map_err(|e| Error::Ros(format!("cannot join DDS domain {domain}: {e}")))?;
        Ok(RosRuntime {
            context,
            args,
            params,
            executor: Arc::new(smol::Executor::new()),
            shutdown: Shutdown::default(),
            nodes: Arc::default(),
            work: Arc::default(),
        })
    }

    /// Records a node created on this runtime (NodeContext does it for every node).
    pub fn register_node(&self, fully_qualified_name: String) {
        crate::sync::lock(&self.nodes).push(fully_qualified_name);
    }

    /// The nodes created on this runtime so far, shared: later nodes appear in it too.
    pub fn nodes(&self) -> Arc<std::sync::Mutex<Vec<String>>> {
        self.nodes.clone()
    }

    /// What the nodes of this runtime computed, per backend.
    pub fn work(&self) -> &Arc<crate::ros::work::WorkTally> {
        &self.work
    }

    pub fn context(&self) -> &Context {
        &self.context
    }

    pub fn args(&self) -> &RosArgs {
        &self.args
    }

    pub fn params(&self) -> &ParamsFile {
        &self.params
    }

    pub fn domain_id(&self) -> u16 {
        self.context.domain_id()
    }

    pub fn executor(&self) -> &Arc<smol::Executor<'static>> {
        &self.executor
    }

    pub fn shutdown(&self) -> &Shutdown {
        &self.shutdown
    }

    pub fn spawn<F>(&self, fut: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        self.executor.spawn(fut).detach();
    }

    /// Makes SIGINT and SIGTERM fire [`Shutdown`]. Only one handler per process can exist.
    pub fn handle_signals(&self) -> Result<()> {
        let s = self.shutdown.clone();
        ctrlc::set_handler(move || s.trigger())
            .map_err(|e| Error::Ros(format!("cannot install the signal handler: {e}")))
    }

    /// Runs the executor on `threads` threads until shutdown fires.
    pub fn run(&self, threads: usize) {
        std::thread::scope(|scope| {
            for _ in 1..threads.max(1) {
                scope.spawn(|| smol::block_on(self.executor.run(self.shutdown.wait())));
            }
            smol::block_on(self.executor.run(self.shutdown.wait()));
        });
    }
}

/// `options` with `security`'s enclave.
fn secured(
    options: ContextOptions,
    security: crate::ros::security::Security,
) -> Result<ContextOptions> {
    use crate::ros::security::Security;
    match security {
        Security::Off => Ok(options),
        Security::Unsecured(why) => {
            tracing::warn!(
                "DDS Security not enabled (ROS_SECURITY_STRATEGY is not Enforce): {why}"
            );
            Ok(options)
        }
        #[cfg(feature = "security")]
        Security::Enclave(dir) => {
            crate::ros::keystore::verify_enclave(&dir)?;
            tracing::info!("DDS Security: enclave {}", dir.display());
            // SROS2 writes its keys unencrypted.
            Ok(options.enable_security(dir, String::new()))
        }
        #[cfg(not(feature = "security"))]
        Security::Enclave(dir) => Err(Error::invalid(
            "ROS_SECURITY_ENABLE",
            format!(
                "enclave {} needs a build with --features security",
                dir.display()
            ),
        )),
    }
}

/// The largest DDS domain id ROS 2 accepts on Linux: the RTPS port of a higher domain's
/// participants (7400 + 250 x domain + ...) would leave the 16-bit port range.
pub const MAX_DOMAIN_ID: u16 = 232;

/// A domain id as `ROS_DOMAIN_ID` and every `--domain-id` take it: 0..=[`MAX_DOMAIN_ID`].
pub fn parse_domain_id(s: &str) -> std::result::Result<u16, String> {
    match s.trim().parse::<u16>() {
        Ok(d) if d <= MAX_DOMAIN_ID => Ok(d),
        _ => Err(format!("'{s}' is not a domain id 0..={MAX_DOMAIN_ID}")),
    }
}

fn domain_from_env() -> Result<u16> {
    match std::env::var("ROS_DOMAIN_ID") {
        Err(_) => Ok(0),
        Ok(s) if s.trim().is_empty() => Ok(0),
        Ok(s) => parse_domain_id(&s).map_err(|e| Error::invalid("ROS_DOMAIN_ID", e)),
    }
}

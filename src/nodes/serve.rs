//! How every node serves a service: requests are taken off the DDS reader as soon as they
//! arrive (so a burst never overflows its history and no request is lost), computed at most
//! `max_concurrent_requests` at a time, answered with an overload error beyond
//! `max_pending_requests`, and with a deadline error after `request_timeout_s`. Every request
//! gets exactly one response.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use ros2_client::Message;

use crate::ros::ServiceServer;

use crate::cancel::CancelFlag;
use crate::error::{Error, Result};
use crate::ros::live_params::Live;
use crate::ros::node_params::ServiceParams;
use crate::ros::RosRuntime;

/// A response that can say a request failed: services with `success`/`error` fields set them;
/// those without (nav_msgs/GetPlan) answer empty, and the log line names the reason.
pub trait Reply: Message + Send + Sync + 'static {
    fn failure(e: &Error) -> Self;
}

/// Serves `server` until the runtime shuts down: `handler` computes one request's response
/// (its errors become [`Reply::failure`] responses and a log line under `what`). The flag it
/// gets is cancelled when the request's deadline passes: the handler runs its blocking work in
/// that flag's scope ([`crate::cancel::unblock`]), so the work stops at its next checkpoint
/// instead of running on unobserved.
pub fn serve<Req, Resp, H, Fut>(
    rt: &RosRuntime,
    server: ServiceServer<Req, Resp>,
    what: String,
    limits: &Live<ServiceParams>,
    handler: H,
) -> impl Future<Output = ()> + Send + 'static
where
    Req: Message + Send + Sync + 'static,
    Resp: Reply,
    H: Fn(Req, CancelFlag) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Resp>> + Send + 'static,
{
    // Weak: this future runs on that executor, and a strong handle would keep the executor,
    // and through it every node's DDS endpoints, alive after the runtime is dropped.
    let executor = Arc::downgrade(rt.executor());
    let server = Arc::new(server);
    let handler = Arc::new(handler);
    let what: Arc<str> = what.into();
    // Workers are sized at start; the deadline and the queue's bound are read per request,
    // so `ros2 param set` changes them for the next one.
    let gate = Arc::new(smol::lock::Semaphore::new(
        limits.get().max_concurrent_requests as usize,
    ));
    let pending = Arc::new(AtomicUsize::new(0));
    let limits = limits.clone();
    // Overloads and undecodable requests come as fast as a client sends them: their lines
    // are rate-limited, the count of those held back carried into the next.
    let overloads = Arc::new(crate::log_limit::LogLimit::default());
    let refusals = crate::log_limit::LogLimit::default();
    async move {
        let requests = server.receive_request_stream();
        futures::pin_mut!(requests);
        while let Some(item) = requests.next().await {
            let (id, req) = match item {
                Ok(r) => r,
                Err(e) => {
                    // Nothing to answer: without a decoded request there is no request id.
                    if let Some(held) = refusals.admit() {
                        tracing::warn!("{e}{}", crate::log_limit::held_back(held));
                    }
                    continue;
                }
            };
            let in_queue = pending.fetch_add(1, Ordering::AcqRel);
            let now = limits.get();
            let (max_pending, deadline, limit_s) = (
                now.max_pending_requests as usize,
                now.deadline(),
                now.request_timeout_s,
            );
            let (server, handler, what, gate, pending, overloads) = (
                server.clone(),
                handler.clone(),
                what.clone(),
                gate.clone(),
                pending.clone(),
                overloads.clone(),
            );
            let Some(executor) = executor.upgrade() else {
                return;
            };
            executor
                .spawn(async move {
                    let received = std::time::Instant::now();
                    let mut handled = Duration::ZERO;
                    let response = if in_queue >= max_pending {
                        Err(Error::Overloaded { pending: in_queue })
                    } else {
                        let cancel = CancelFlag::new();
                        let work = async {
                            let _turn = gate.acquire().await;
                            let started = std::time::Instant::now();
                            let r = handler(req, cancel.clone()).await;
                            handled = started.elapsed();
                            r
                        };
                        let r = within(deadline, limit_s, work).await;
                        if let Err(Error::DeadlineExceeded { .. }) = r {
                            cancel.cancel();
                        }
                        r
                    };
                    let response = response.unwrap_or_else(|e| {
                        match e {
                            Error::Overloaded { .. } => {
                                if let Some(held) = overloads.admit() {
                                    tracing::warn!(
                                        "{what}: {e}{}",
                                        crate::log_limit::held_back(held)
                                    );
                                }
                            }
                            _ => tracing::warn!("{what}: {e}"),
                        }
                        Resp::failure(&e)
                    });
                    if let Err(e) = server.async_send_response(id, response).await {
                        tracing::error!("{what}: response lost: {e}");
                    }
                    if super::timings::enabled() {
                        super::timings::add(&what, handled, received);
                    }
                    pending.fetch_sub(1, Ordering::AcqRel);
                })
                .detach();
        }
    }
}

/// Runs `work` to completion or until `deadline`; dropping it at the deadline releases its
/// turn (the caller then cancels the blocking computation it started).
pub(crate) async fn within<T>(
    deadline: Option<Duration>,
    limit_s: f64,
    work: impl Future<Output = Result<T>>,
) -> Result<T> {
    let Some(d) = deadline else {
        return work.await;
    };
    // The deadline counts from the call, not from the first poll of the timer.
    let called = std::time::Instant::now();
    let at = smol::Timer::after(d);
    let timer = async {
        at.await;
        Err(Error::DeadlineExceeded { limit_s })
    };
    futures::pin_mut!(work);
    futures::pin_mut!(timer);
    match futures::future::select(work, timer).await {
        // Work that finished inside one poll never let the timer run: an answer later than
        // the deadline is a timeout however it was reached, so the outcome does not depend
        // on how fast the machine polls.
        futures::future::Either::Left((Ok(_), _)) if called.elapsed() > d => {
            Err(Error::DeadlineExceeded { limit_s })
        }
        futures::future::Either::Left((r, _)) | futures::future::Either::Right((r, _)) => r,
    }
}

/// Responses with `success` and `error` fields: everything else at its default.
macro_rules! reply_with_error_field {
    ($($t:ty),* $(,)?) => {$(
        impl Reply for $t {
            fn failure(e: &Error) -> Self {
                Self {
                    success: false,
                    error: e.to_string(),
                    ..Default::default()
                }
            }
        }
    )*};
}

use crate::ros::msg::gpu_planning_msgs as gp;
reply_with_error_field!(
    gp::BuildCellGraphResponse,
    gp::FindRotationPathResponse,
    gp::KNearestResponse,
    gp::RadiusSearchResponse,
    gp::ShortestPathResponse,
    gp::ExtractPolylineResponse,
);

/// nav_msgs/GetPlan has no error field: a failed plan is an empty path.
impl Reply for crate::ros::msg::nav_msgs::GetPlanResponse {
    fn failure(_: &Error) -> Self {
        Self::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_cuts_slow_work_and_spares_fast_work() {
        smol::block_on(async {
            let d = Some(Duration::from_millis(50));
            let slow = async {
                smol::Timer::after(Duration::from_secs(5)).await;
                Ok(1)
            };
            let e = within(d, 0.05, slow).await.unwrap_err();
            assert!(e.to_string().contains("request_timeout_s = 0.05"), "{e}");
            assert_eq!(within(d, 0.05, async { Ok(2) }).await.unwrap(), 2);
            assert_eq!(within(None, 0.0, async { Ok(3) }).await.unwrap(), 3);
            // Work that blocks inside its only poll still misses the deadline.
            let blocking = async {
                std::thread::sleep(Duration::from_millis(20));
                Ok(4)
            };
            let e = within(Some(Duration::from_millis(1)), 0.001, blocking)
                .await
                .unwrap_err();
            assert!(e.to_string().contains("request_timeout_s = 0.001"), "{e}");
        });
    }
}

//! The one way every node reads a subscription.
//!
//! A sample that does not decode is logged with the node and topic and skipped: a single bad
//! message from one peer must not end the loop (a `while let Some(Ok(..))` would, silently, for
//! the node's lifetime). This is ros2-client's `async_stream()` with the error arm written once.

use futures::{Stream, StreamExt};
use ros2_client::Subscription;
use serde::de::DeserializeOwned;

/// The decoded messages of `sub`, in arrival order; a sample that does not decode gets an
/// ERROR line naming `node` and `topic` and the stream goes on with the next one.
pub fn messages<'a, M>(
    sub: &'a Subscription<M>,
    node: &'static str,
    topic: &'static str,
) -> impl Stream<Item = M> + 'a
where
    M: DeserializeOwned + 'static,
{
    sub.async_stream().filter_map(move |item| {
        futures::future::ready(match item {
            Ok((msg, _info)) => Some(msg),
            Err(e) => {
                tracing::error!("{node}: {topic} not decoded: {e:?}");
                None
            }
        })
    })
}

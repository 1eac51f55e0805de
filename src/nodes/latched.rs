//! Latched results that go out on a topic only once it has a reader.
//!
//! A node's result topics (a plan, a graph, their markers) are transient local, keep last 1:
//! a reader that joins later gets the latest. Writing each result for nobody still serialises
//! it and stores it in the writer, beside the next request's work: for ~/build's 1.4 MB graph
//! that cost the service a fifth of its round trip (docs/bench-history, sixteenth part). So a result
//! is held until its topic has a reader, and then published, still the latest; while a topic
//! has readers every result goes out on it in order, as nav2's planner server publishes each
//! plan.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::future::Either;
use futures::{FutureExt, Stream, StreamExt};
use ros2_client::{Message, Node, Publisher};

/// A wait that resolves when a reader matches.
type Wait<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// A topic a result can be owed to.
pub(crate) trait Topic: Sync {
    /// Readers matched now.
    fn readers(&self, node: &Node) -> usize;
    /// Resolves once the topic has a reader.
    fn first_reader<'a>(&'a self, node: &'a Node) -> Wait<'a>;
}

impl<M: Message + Sync> Topic for Publisher<M> {
    fn readers(&self, node: &Node) -> usize {
        self.get_subscription_count(node)
    }

    fn first_reader<'a>(&'a self, node: &'a Node) -> Wait<'a> {
        Box::pin(self.wait_for_subscription(node))
    }
}

/// Publishes what `results` yields, each with the topics (by index into `topics`) it is for:
/// at once on those that have a reader, on each other one when it gets one, unless a newer
/// result replaced it first. `publish` is given the result and the topics to write it on now.
/// Returns when `results` ends.
pub(crate) async fn publish_when_read<T, const N: usize, F, Fut>(
    node: &Node,
    topics: [&dyn Topic; N],
    results: impl Stream<Item = (T, [bool; N])>,
    publish: F,
) where
    F: Fn(Arc<T>, [bool; N]) -> Fut,
    Fut: Future<Output = ()>,
{
    futures::pin_mut!(results);
    let mut held: Option<(Arc<T>, [bool; N])> = None;
    // While a result is held: the topics it is owed to and a wait for a reader on any of them.
    // Made anew only when those topics change: each wait registers a listener with the node
    // until the node's next graph event.
    let mut readers: Option<([bool; N], Wait<'_>)> = None;
    loop {
        let arrived = match readers.as_mut() {
            None => match results.next().await {
                Some(r) => Some(r),
                None => return,
            },
            Some((_, wait)) => match futures::future::select(results.next(), wait).await {
                Either::Left((None, _)) => return,
                Either::Left((Some(r), _)) => Some(r),
                Either::Right(((), _)) => {
                    readers = None;
                    None
                }
            },
        };
        if let Some((result, owed)) = arrived {
            held = Some((Arc::new(result), owed));
        }
        let Some((result, owed)) = held.take() else {
            continue;
        };
        let now: [bool; N] = std::array::from_fn(|i| owed[i] && topics[i].readers(node) > 0);
        if now.contains(&true) {
            publish(result.clone(), now).await;
        }
        let owed: [bool; N] = std::array::from_fn(|i| owed[i] && !now[i]);
        if !owed.contains(&true) {
            readers = None;
            continue;
        }
        if readers.as_ref().map(|(o, _)| *o) != Some(owed) {
            let waits = topics
                .iter()
                .zip(owed)
                .filter(|(_, o)| *o)
                .map(|(t, _)| t.first_reader(node));
            let any: Wait<'_> = Box::pin(futures::future::select_all(waits).map(|_| ()));
            readers = Some((owed, any));
        }
        held = Some((result, owed));
    }
}

#[cfg(any(feature = "mio_06", feature = "mio_1"))]
use std::io;

#[cfg(feature = "mio_06")]
use rustdds::mio::{Evented, Poll, PollOpt, Ready, Token};
#[cfg(feature = "mio_1")]
use rustdds::mio1;
use rustdds::{rpc::*, *};
#[allow(unused_imports)]
use log::{debug, error, info, warn};
use futures::{StreamExt, pin_mut, stream::FusedStream};

use crate::{
  error::{CreateResult, ReadError, ReadResult, WriteError, WriteResult},
  message::Message,
  message_info::MessageInfo,
  node::Node,
  qos::QosProfile,
  service::*,
};

// --------------------------------------------
// --------------------------------------------
/// Server end of a ROS2 Service
pub struct Server<Req, Resp>
where
  Req: Message,
  Resp: Message,
{
  service_mapping: ServiceMapping,
  request_receiver: SimpleDataReaderR<RequestWrapper<Req>>,
  response_sender: DataWriterR<ResponseWrapper<Resp>>,
  // gpu_planning patch: each request until answered, with what its reply needs: whether it
  // came in rmw_cyclonedds's layout (an `Enhanced` server also answers rmw_cyclonedds's
  // clients, whose requests carry a 16-byte header in the payload and expect it back in the
  // reply) and the client's participant, whose reader the reply waits for (`ReplyGate`).
  pending: std::sync::Mutex<std::collections::BTreeMap<RmwRequestId, Pending>>,
  reply_gate: ReplyGate,
}

/// What the reply to one request needs to know of it (gpu_planning patch).
#[derive(Clone, Copy)]
struct Pending {
  cyclone: bool,
  client: GuidPrefix,
}

/// Whether a request to an `Enhanced` server came from rmw_cyclonedds (gpu_planning patch):
/// its writer's GUID prefix starts with Eclipse Cyclone DDS's vendor id, and it sent no
/// related sample identity, which rmw_cyclonedds never does.
fn from_cyclone_rmw(mi: &MessageInfo) -> bool {
  const ECLIPSE_CYCLONE: [u8; 2] = [0x01, 0x10];
  GUID::from(mi.publisher_gid()).to_bytes()[..2] == ECLIPSE_CYCLONE
    && mi.related_request_id().is_none()
}

impl<Req, Resp> Server<Req, Resp>
where
  Req: Message + 'static,
  Resp: Message + 'static,
{
  pub(crate) fn new(
    service_mapping: ServiceMapping,
    node: &mut Node,
    request_topic: &Topic,
    response_topic: &Topic,
    qos_request: Option<QosProfile>,
    qos_response: Option<QosProfile>,
  ) -> CreateResult<Self> {
    let request_receiver =
      node.create_simpledatareader
      ::<RequestWrapper<Req>, ServiceDeserializerAdapter<RequestWrapper<Req>>>(
        request_topic, qos_request)?;
    let response_sender = node
      .create_datawriter::<ResponseWrapper<Resp>, ServiceSerializerAdapter<ResponseWrapper<Resp>>>(
        response_topic,
        qos_response,
      )?;

    debug!(
      "Created new Server: requests={} response={}",
      request_topic.name(),
      response_topic.name()
    );

    Ok(Server::<Req, Resp> {
      service_mapping,
      request_receiver,
      response_sender,
      pending: Default::default(),
      reply_gate: ReplyGate::default(),
    })
  }

  /// Decodes one request in this server's mapping, or in rmw_cyclonedds's when an `Enhanced`
  /// server gets one from it, and remembers it until answered.
  fn unwrap_request(
    &self,
    req_wrapper: &RequestWrapper<Req>,
    mi: &MessageInfo,
  ) -> ReadResult<(RmwRequestId, Req)> {
    let cyclone = self.service_mapping == ServiceMapping::Enhanced && from_cyclone_rmw(mi);
    let mapping = if cyclone {
      ServiceMapping::Cyclone
    } else {
      self.service_mapping
    };
    let (ri, req) = req_wrapper.unwrap(mapping, mi)?;
    let client = GUID::from(mi.publisher_gid()).prefix;
    if let Ok(mut pending) = self.pending.lock() {
      pending.insert(ri, Pending { cyclone, client });
    }
    Ok((ri, req))
  }

  /// What the reply to `rmw_req_id` needs to know of its request, forgotten from here.
  fn answering(&self, rmw_req_id: &RmwRequestId) -> Option<Pending> {
    self
      .pending
      .lock()
      .ok()
      .and_then(|mut pending| pending.remove(rmw_req_id))
  }

  /// The mapping the reply to a request is written in.
  fn reply_mapping(&self, request: Option<Pending>) -> ServiceMapping {
    match request {
      Some(Pending { cyclone: true, .. }) => ServiceMapping::Cyclone,
      _ => self.service_mapping,
    }
  }

  /// Receive a request from Client.
  /// Returns `Ok(None)` if no new requests have arrived.
  pub fn receive_request(&self) -> ReadResult<Option<(RmwRequestId, Req)>> {
    self.request_receiver.drain_read_notifications();
    let dcc_rw: Option<no_key::DeserializedCacheChange<RequestWrapper<Req>>> =
      self.request_receiver.try_take_one()?;

    match dcc_rw {
      None => Ok(None),
      Some(dcc) => {
        let mi = MessageInfo::from(&dcc);
        let req_wrapper = dcc.into_value();
        let (ri, req) = self.unwrap_request(&req_wrapper, &mi)?;
        Ok(Some((ri, req)))
      }
    } // match
  }

  /// Send response to request by Client.
  /// rmw_req_id identifies request being responded.
  /// Unlike [`Self::async_send_response`], it does not wait for the client's reader.
  pub fn send_response(&self, rmw_req_id: RmwRequestId, response: Resp) -> WriteResult<(), ()> {
    let request = self.answering(&rmw_req_id);
    let resp_wrapper = ResponseWrapper::<Resp>::new(
      self.reply_mapping(request),
      rmw_req_id,
      RepresentationIdentifier::CDR_LE,
      response,
    )?;
    let write_opts = WriteOptionsBuilder::new()
      .source_timestamp(Timestamp::now()) // always add source timestamp
      .related_sample_identity(SampleIdentity::from(rmw_req_id))
      // TODO: Check if this is right. Cyclone mapping does not send
      // Related Sample Identity in
      // WriteOptions (QoS ParameterList), but within data payload.
      // But maybe it is not harmful to send it in both?
      .build();
    self
      .response_sender
      .write_with_options(resp_wrapper, write_opts)
      .map(|_| ())
      .map_err(|e| WriteError::from(e.forget_data())) // lose SampleIdentity
    // result
  }

  /// The request_id must be sent back with the response to identify which
  /// request and response belong together.
  pub async fn async_receive_request(&self) -> ReadResult<(RmwRequestId, Req)> {
    let dcc_stream = self.request_receiver.as_async_stream();
    pin_mut!(dcc_stream);

    match dcc_stream.next().await {
      Some(Err(e)) => Err(e.into()),
      Some(Ok(dcc)) => {
        let mi = MessageInfo::from(&dcc);
        let req_wrapper = dcc.into_value();
        let (ri, req) = self.unwrap_request(&req_wrapper, &mi)?;
        debug!("async_receive_request: {ri:?}");
        Ok((ri, req))
      }
      // This should never occur, because topic do not "end".
      None => read_error_internal!("SimpleDataReader value stream unexpectedly ended!"),
    } // match
  }

  /// Returns a never-ending stream of (request_id, request)
  /// The request_id must be sent back with the response to identify which
  /// request and response belong together.
  pub fn receive_request_stream(
    &self,
  ) -> impl FusedStream<Item = ReadResult<(RmwRequestId, Req)>> + '_ {
    Box::pin(self.request_receiver.as_async_stream().then(
      move |dcc_r| async move {
        match dcc_r {
          Err(e) => Err(e.into()),
          Ok(dcc) => {
            let mi = MessageInfo::from(&dcc);
            let req_wrapper = dcc.into_value();
            debug!("receive_request_stream: messageinfo={mi:?}");
            self.unwrap_request(&req_wrapper, &mi)
          }
        } // match
      }, // async
    ))
  }

  /// Asynchronous response sending, once the client's reply reader is matched (or
  /// [`REPLY_WAIT`] has passed: [`ReplyGate`]).
  pub async fn async_send_response(
    &self,
    rmw_req_id: RmwRequestId,
    response: Resp,
  ) -> WriteResult<(), ()> {
    let request = self.answering(&rmw_req_id);
    if let Some(Pending { client, .. }) = request {
      let sender = &self.response_sender;
      self
        .reply_gate
        .wait(client, || sender.has_matched_reader_of(client))
        .await;
    }
    let resp_wrapper = ResponseWrapper::<Resp>::new(
      self.reply_mapping(request),
      rmw_req_id,
      RepresentationIdentifier::CDR_LE,
      response,
    )?;
    debug!("async_send_response: rmw_req_id = {rmw_req_id:?}");
    debug!(
      "async_send_response: related_sample_identity = {:?}",
      SampleIdentity::from(rmw_req_id)
    );
    let write_opts = WriteOptionsBuilder::new()
      .source_timestamp(Timestamp::now()) // always add source timestamp
      .related_sample_identity(SampleIdentity::from(rmw_req_id))
      // TODO: Check if this is right. Cyclone mapping does not send
      // Related Sample Identity in
      // WriteOptions (QoS ParameterList), but within data payload.
      // But maybe it is not harmful to send it in both?
      .build();
    self
      .response_sender
      .async_write_with_options(resp_wrapper, write_opts)
      .await
      .map(|_| ())
      .map_err(|e| WriteError::from(e.forget_data())) // lose SampleIdentity
    // result
  }
}

#[cfg(feature = "mio_06")]
impl<Req, Resp> Evented for Server<Req, Resp>
where
  Req: Message + 'static,
  Resp: Message + 'static,
{
  fn register(&self, poll: &Poll, token: Token, interest: Ready, opts: PollOpt) -> io::Result<()> {
    self.request_receiver.register(poll, token, interest, opts)
  }

  fn reregister(
    &self,
    poll: &Poll,
    token: Token,
    interest: Ready,
    opts: PollOpt,
  ) -> io::Result<()> {
    self
      .request_receiver
      .reregister(poll, token, interest, opts)
  }

  fn deregister(&self, poll: &Poll) -> io::Result<()> {
    self.request_receiver.deregister(poll)
  }
}

#[cfg(feature = "mio_1")]
impl<Req, Resp> mio1::event::Source for Server<Req, Resp>
where
  Req: Message + 'static,
  Resp: Message + 'static,
{
  fn register(
    &mut self,
    registry: &mio1::Registry,
    token: mio1::Token,
    interests: mio1::Interest,
  ) -> io::Result<()> {
    mio1::event::Source::register(&mut self.request_receiver, registry, token, interests)
  }

  fn reregister(
    &mut self,
    registry: &mio1::Registry,
    token: mio1::Token,
    interests: mio1::Interest,
  ) -> io::Result<()> {
    mio1::event::Source::reregister(&mut self.request_receiver, registry, token, interests)
  }

  fn deregister(&mut self, registry: &mio1::Registry) -> io::Result<()> {
    mio1::event::Source::deregister(&mut self.request_receiver, registry)
  }
}

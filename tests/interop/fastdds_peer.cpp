// A ROS 2 peer on eProsima Fast DDS that behaves on the wire as rmw_fastrtps_cpp does, for
// tests/interop/fastdds_services.py and tests/nodes/fast_dds.rs. It carries serialized
// payloads (CDR with their 4-byte encapsulation header, as hex) and knows nothing of message
// layouts: the caller encodes and decodes them with an independent library.
//
// What it reproduces of rmw_fastrtps: topic names `rt/...`, services on `rq/<name>Request` and
// `rr/<name>Reply` with types `pkg::srv::dds_::Name_Request_` / `_Response_`; the request's
// WriteParams name the client's reply reader in the related sample identity (writer GUID =
// reply reader GUID, sequence number unknown), and a reply is the client's when its related
// sample identity names that reader (or the request writer) and the request's sequence
// number. As a server it answers with the request's sample identity, the reply reader's GUID
// in place of the writer's when the request named one, as rmw_fastrtps's take_request does.
//
// Commands on stdin, one per line; one answer line each on stdout:
//   pub <topic> <dds type> latched|sensor <hex>      -> ok <wall clock us> | error <why>
//   call <service> <pkg/srv/Name> <hex> <timeout ms>   -> reply <hex> | timeout
//   serve <service> <pkg/srv/Name> <reply hex> <timeout ms>
//                                                      -> served <request hex> | timeout
//   take <DDS topic> <dds type> latched|reliable <timeout ms>
//                   -> sample <writer GUID hex> <wall clock us> <payload hex> | timeout
//     (wall clock: microseconds since the Unix epoch when write returned / the sample was taken)
//     (the next sample on a DDS topic named in full, e.g. ros_discovery_info or rt/map)
//   endpoints                     -> endpoints <n> then n lines: writer|reader <topic> <type> <USER_DATA hex>
//     (every remote endpoint discovered so far)
//   quit
// Usage: fastdds_peer <domain id>
// With FASTDDS_PEER_ENCLAVE=<SROS2 enclave directory> the participant is secured as
// rmw_fastrtps secures it (ROS_SECURITY_ENABLE=true with that enclave).

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/DomainParticipantListener.hpp>
#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/log/StdoutErrConsumer.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastrtps/rtps/common/WriteParams.h>

#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace eprosima::fastdds::dds;
namespace rtps = eprosima::fastrtps::rtps;

namespace {

struct Raw {
  std::vector<uint8_t> bytes;
};

// A type whose samples are already-serialized payloads, under the ROS type's DDS name.
class RawType : public TopicDataType {
 public:
  explicit RawType(const std::string& name) {
    setName(name.c_str());
    m_typeSize = 1 << 20;  // a first guess; payloads grow as needed (dynamic memory below)
    m_isGetKeyDefined = false;
    auto_fill_type_object(false);
    auto_fill_type_information(false);
  }
  bool serialize(void* data, rtps::SerializedPayload_t* payload) override {
    auto* raw = static_cast<Raw*>(data);
    if (raw->bytes.size() < 4) return false;
    if (payload->max_size < raw->bytes.size()) payload->reserve(raw->bytes.size());
    std::memcpy(payload->data, raw->bytes.data(), raw->bytes.size());
    payload->length = static_cast<uint32_t>(raw->bytes.size());
    payload->encapsulation = raw->bytes[1] == 1 ? CDR_LE : CDR_BE;
    return true;
  }
  bool deserialize(rtps::SerializedPayload_t* payload, void* data) override {
    auto* raw = static_cast<Raw*>(data);
    raw->bytes.assign(payload->data, payload->data + payload->length);
    return true;
  }
  std::function<uint32_t()> getSerializedSizeProvider(void* data) override {
    return [data]() { return static_cast<uint32_t>(static_cast<Raw*>(data)->bytes.size()); };
  }
  void* createData() override { return new Raw(); }
  void deleteData(void* data) override { delete static_cast<Raw*>(data); }
  bool getKey(void*, rtps::InstanceHandle_t*, bool) override { return false; }
};

std::string hex(const std::vector<uint8_t>& b) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(b.size() * 2);
  for (uint8_t x : b) {
    s.push_back(digits[x >> 4]);
    s.push_back(digits[x & 15]);
  }
  return s;
}

bool unhex(const std::string& s, std::vector<uint8_t>& out) {
  if (s.size() % 2) return false;
  out.resize(s.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    char* end = nullptr;
    std::string byte = s.substr(2 * i, 2);
    out[i] = static_cast<uint8_t>(std::strtoul(byte.c_str(), &end, 16));
    if (*end != '\0') return false;
  }
  return true;
}

// rmw_fastrtps's service types: `pkg/srv/Name` -> `pkg::srv::dds_::Name_Request_`, and an
// action's `pkg/action/Name_SendGoal` -> `pkg::action::dds_::Name_SendGoal_Request_`.
std::string service_type(const std::string& srv, const std::string& half) {
  auto a = srv.find('/');
  auto b = srv.rfind('/');
  return srv.substr(0, a) + "::" + srv.substr(a + 1, b - a - 1) + "::dds_::" + srv.substr(b + 1) +
         "_" + half + "_";
}

using Clock = std::chrono::steady_clock;

// Remote endpoints as discovery announced them, USER_DATA included.
class Discovered : public DomainParticipantListener {
 public:
  void on_publisher_discovery(DomainParticipant*, rtps::WriterDiscoveryInfo&& info) override {
    add("writer", info.info.topicName().to_string(), info.info.typeName().to_string(),
        info.info.m_qos.m_userData.data_vec());
  }
  void on_subscriber_discovery(DomainParticipant*, rtps::ReaderDiscoveryInfo&& info) override {
    add("reader", info.info.topicName().to_string(), info.info.typeName().to_string(),
        info.info.m_qos.m_userData.data_vec());
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }

 private:
  void add(const char* kind, const std::string& topic, const std::string& type,
           const std::vector<uint8_t>& user_data) {
    std::lock_guard<std::mutex> lock(mutex_);
    lines_.push_back(std::string(kind) + " " + topic + " " + type + " " +
                     (user_data.empty() ? "-" : hex(user_data)));
  }
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// DDS Security as rmw_fastrtps (rmw_dds_common's security files) configures it from an SROS2
// enclave directory: PKI-DH authentication, Access-Permissions access control, AES-GCM-GMAC.
void secure(DomainParticipantQos& qos, const std::string& enclave) {
  auto file = [&](const char* name) { return "file://" + enclave + "/" + name; };
  auto& p = qos.properties().properties();
  p.emplace_back("dds.sec.auth.plugin", "builtin.PKI-DH");
  p.emplace_back("dds.sec.auth.builtin.PKI-DH.identity_ca", file("identity_ca.cert.pem"));
  p.emplace_back("dds.sec.auth.builtin.PKI-DH.identity_certificate", file("cert.pem"));
  p.emplace_back("dds.sec.auth.builtin.PKI-DH.private_key", file("key.pem"));
  p.emplace_back("dds.sec.access.plugin", "builtin.Access-Permissions");
  p.emplace_back("dds.sec.access.builtin.Access-Permissions.permissions_ca",
                 file("permissions_ca.cert.pem"));
  p.emplace_back("dds.sec.access.builtin.Access-Permissions.governance", file("governance.p7s"));
  p.emplace_back("dds.sec.access.builtin.Access-Permissions.permissions", file("permissions.p7s"));
  p.emplace_back("dds.sec.crypto.plugin", "builtin.AES-GCM-GMAC");
}

class Peer {
 public:
  explicit Peer(int domain) {
    DomainParticipantQos qos = PARTICIPANT_QOS_DEFAULT;
    qos.name("gpu_planning_fastdds_peer");
    if (const char* enclave = std::getenv("FASTDDS_PEER_ENCLAVE")) secure(qos, enclave);
    participant_ =
        DomainParticipantFactory::get_instance()->create_participant(domain, qos, &discovered_);
    publisher_ = participant_->create_publisher(PUBLISHER_QOS_DEFAULT);
    subscriber_ = participant_->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
  }

  std::string publish(const std::string& topic, const std::string& type, const std::string& kind,
                      const std::string& payload) {
    Raw raw;
    if (!unhex(payload, raw.bytes)) return "error payload is not hex";
    DataWriterQos q = DATAWRITER_QOS_DEFAULT;
    q.endpoint().history_memory_policy = rtps::DYNAMIC_REUSABLE_MEMORY_MODE;
    if (kind == "latched") {
      q.reliability().kind = RELIABLE_RELIABILITY_QOS;
      q.durability().kind = TRANSIENT_LOCAL_DURABILITY_QOS;
      q.history().kind = KEEP_LAST_HISTORY_QOS;
      q.history().depth = 1;
    } else {
      q.reliability().kind = BEST_EFFORT_RELIABILITY_QOS;
      q.durability().kind = VOLATILE_DURABILITY_QOS;
      q.history().kind = KEEP_LAST_HISTORY_QOS;
      q.history().depth = 5;
    }
    DataWriter* w = writer("rt" + topic, type, q);
    if (w == nullptr) return "error no writer for " + topic;
    if (!w->write(&raw)) return "error write failed";
    return "ok " + std::to_string(wall_us());
  }

  std::string call(const std::string& service, const std::string& srv,
                   const std::string& payload, int timeout_ms) {
    Raw request;
    if (!unhex(payload, request.bytes)) return "error payload is not hex";
    DataWriter* w = writer("rq" + service + "Request", service_type(srv, "Request"), service_qos_w());
    DataReader* r = reader("rr" + service + "Reply", service_type(srv, "Response"));
    if (w == nullptr || r == nullptr) return "error no endpoints for " + service;
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    // As rmw_fastrtps's service_server_is_available: both directions matched.
    while (!matched(w, r)) {
      if (Clock::now() > deadline) return "timeout";
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    rtps::WriteParams params;
    params.related_sample_identity().writer_guid(r->guid());
    if (!w->write(&request, params)) return "error write failed";
    const rtps::SequenceNumber_t seq = params.sample_identity().sequence_number();
    while (Clock::now() < deadline) {
      Raw reply;
      SampleInfo info;
      while (r->take_next_sample(&reply, &info) == ReturnCode_t::RETCODE_OK) {
        if (!info.valid_data) continue;
        const auto& related = info.related_sample_identity;
        bool mine = related.writer_guid() == r->guid() || related.writer_guid() == w->guid();
        if (mine && related.sequence_number() == seq) return "reply " + hex(reply.bytes);
      }
      r->wait_for_unread_message(eprosima::fastrtps::Duration_t(0, 20000000));
    }
    return "timeout";
  }

  std::string endpoints() {
    auto lines = discovered_.lines();
    std::string out = "endpoints " + std::to_string(lines.size());
    for (const auto& l : lines) out += "\n" + l;
    return out;
  }

  std::string take(const std::string& topic_name, const std::string& type,
                   const std::string& kind, int timeout_ms) {
    DataReader* r = reader(topic_name, type, kind == "latched");
    if (r == nullptr) return "error no reader for " + topic_name;
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (Clock::now() < deadline) {
      Raw sample;
      SampleInfo info;
      if (r->take_next_sample(&sample, &info) == ReturnCode_t::RETCODE_OK && info.valid_data) {
        const rtps::GUID_t& g = info.sample_identity.writer_guid();
        std::vector<uint8_t> guid(g.guidPrefix.value, g.guidPrefix.value + 12);
        guid.insert(guid.end(), g.entityId.value, g.entityId.value + 4);
        const int64_t taken = wall_us();
        return "sample " + hex(guid) + " " + std::to_string(taken) + " " + hex(sample.bytes);
      }
      r->wait_for_unread_message(eprosima::fastrtps::Duration_t(0, 20000000));
    }
    return "timeout";
  }

  std::string serve(const std::string& service, const std::string& srv,
                    const std::string& payload, int timeout_ms) {
    Raw reply;
    if (!unhex(payload, reply.bytes)) return "error payload is not hex";
    DataReader* r = reader("rq" + service + "Request", service_type(srv, "Request"));
    DataWriter* w = writer("rr" + service + "Reply", service_type(srv, "Response"), service_qos_w());
    if (w == nullptr || r == nullptr) return "error no endpoints for " + service;
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (Clock::now() < deadline) {
      Raw request;
      SampleInfo info;
      if (r->take_next_sample(&request, &info) == ReturnCode_t::RETCODE_OK && info.valid_data) {
        rtps::WriteParams params;
        rtps::SampleIdentity answered = info.sample_identity;
        if (info.related_sample_identity.writer_guid() != rtps::GUID_t::unknown()) {
          answered.writer_guid(info.related_sample_identity.writer_guid());
        }
        params.related_sample_identity(answered);
        if (!w->write(&reply, params)) return "error write failed";
        // Asynchronous publication: the reply leaves on another thread; wait for the client's
        // acknowledgement before the caller may end the process.
        w->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(5, 0));
        return "served " + hex(request.bytes);
      }
      r->wait_for_unread_message(eprosima::fastrtps::Duration_t(0, 20000000));
    }
    return "timeout";
  }

 private:
  // rmw_qos_profile_services_default: reliable, volatile, keep last 10.
  static DataWriterQos service_qos_w() {
    DataWriterQos q = DATAWRITER_QOS_DEFAULT;
    q.endpoint().history_memory_policy = rtps::DYNAMIC_REUSABLE_MEMORY_MODE;
    q.reliability().kind = RELIABLE_RELIABILITY_QOS;
    q.durability().kind = VOLATILE_DURABILITY_QOS;
    q.history().kind = KEEP_LAST_HISTORY_QOS;
    q.history().depth = 10;
    return q;
  }

  static bool matched(DataWriter* w, DataReader* r) {
    PublicationMatchedStatus pub;
    SubscriptionMatchedStatus sub;
    w->get_publication_matched_status(pub);
    r->get_subscription_matched_status(sub);
    return pub.current_count > 0 && sub.current_count > 0;
  }

  Topic* topic(const std::string& name, const std::string& type) {
    auto it = topics_.find(name);
    if (it != topics_.end()) return it->second;
    if (types_.count(type) == 0) {
      TypeSupport ts(new RawType(type));
      if (ts.register_type(participant_) != ReturnCode_t::RETCODE_OK) return nullptr;
      types_[type] = ts;
    }
    Topic* t = participant_->create_topic(name, type, TOPIC_QOS_DEFAULT);
    topics_[name] = t;
    return t;
  }

  DataWriter* writer(const std::string& name, const std::string& type, DataWriterQos q) {
    auto it = writers_.find(name);
    if (it != writers_.end()) return it->second;
    Topic* t = topic(name, type);
    if (t == nullptr) return nullptr;
    // rmw_fastrtps's default publication mode (RMW_FASTRTPS_PUBLICATION_MODE unset).
    q.publish_mode().kind = ASYNCHRONOUS_PUBLISH_MODE;
    DataWriter* w = publisher_->create_datawriter(t, q);
    writers_[name] = w;
    return w;
  }

  DataReader* reader(const std::string& name, const std::string& type, bool latched = false) {
    auto it = readers_.find(name);
    if (it != readers_.end()) return it->second;
    Topic* t = topic(name, type);
    if (t == nullptr) return nullptr;
    DataReaderQos q = DATAREADER_QOS_DEFAULT;
    q.endpoint().history_memory_policy = rtps::DYNAMIC_REUSABLE_MEMORY_MODE;
    q.reliability().kind = RELIABLE_RELIABILITY_QOS;
    q.durability().kind = latched ? TRANSIENT_LOCAL_DURABILITY_QOS : VOLATILE_DURABILITY_QOS;
    q.history().kind = KEEP_LAST_HISTORY_QOS;
    q.history().depth = 10;
    DataReader* r = subscriber_->create_datareader(t, q);
    readers_[name] = r;
    return r;
  }

  Discovered discovered_;
  DomainParticipant* participant_ = nullptr;
  Publisher* publisher_ = nullptr;
  Subscriber* subscriber_ = nullptr;
  std::map<std::string, TypeSupport> types_;
  std::map<std::string, Topic*> topics_;
  std::map<std::string, DataWriter*> writers_;
  std::map<std::string, DataReader*> readers_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fastdds_peer <domain id>\n";
    return 2;
  }
  // Fast DDS logs to stdout by default, where this peer's answers go: its log goes to stderr.
  Log::ClearConsumers();
  Log::RegisterConsumer(std::make_unique<StdoutErrConsumer>());
  Log::SetVerbosity(Log::Warning);
  Peer peer(std::atoi(argv[1]));
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd, a, b, c, d;
    in >> cmd;
    std::string out;
    if (cmd == "quit") break;
    if (cmd == "endpoints") {
      std::cout << peer.endpoints() << std::endl;
      continue;
    }
    if (cmd == "pub" && (in >> a >> b >> c >> d)) {
      out = peer.publish(a, b, c, d);
    } else if (cmd == "call" && (in >> a >> b >> c >> d)) {
      out = peer.call(a, b, c, std::atoi(d.c_str()));
    } else if (cmd == "serve" && (in >> a >> b >> c >> d)) {
      out = peer.serve(a, b, c, std::atoi(d.c_str()));
    } else if (cmd == "take" && (in >> a >> b >> c >> d)) {
      out = peer.take(a, b, c, std::atoi(d.c_str()));
    } else {
      out = "error bad command: " + cmd;
    }
    std::cout << out << std::endl;
  }
  // Leave without tearing entities down one by one: the process ends here.
  std::_Exit(0);
}

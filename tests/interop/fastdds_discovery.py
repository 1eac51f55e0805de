"""What a Humble or Jazzy graph makes of a process's `ros_discovery_info`, for
tests/nodes/fast_dds.rs: the sample is taken off the wire by `fastdds_peer` (Fast DDS 2.9,
transient local as rmw_dds_common's graph cache reads it) and decoded with rosbags' stock
Humble and Jazzy type stores (rmw_dds_common/msg/Gid: char[24] on Humble, char[16] from
Iron), nothing from gpu_planning.

Input: argv[1] the peer executable, argv[2] the DDS domain, argv[3..] the node names the
process must list (e.g. /lee_planner). Takes samples until one lists them all.
Output: one JSON line {"writer": GUID hex, "decoded": {"humble": ..., "jazzy": ...}}, each
store's reading {"gid": hex, "nodes": [...], "gid_lengths": [...], "rest": bytes left} or
{"error": why}; or {"ok": false, "reason"} and exit status 1.
"""
import json
import os
import sys
import time

from rosbags.serde import SerdeError
from rosbags.typesys import Stores, get_typestore

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fastdds_services import Peer  # noqa: E402
from ros_types import fail  # noqa: E402

TYPE = "rmw_dds_common/msg/ParticipantEntitiesInfo"
DDS_TYPE = "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"


def decode(store, raw):
    ts = get_typestore(store)
    try:
        msg = ts.deserialize_cdr(raw, TYPE)
    except (SerdeError, ValueError, IndexError, UnicodeDecodeError, AssertionError) as e:
        return {"error": f"{type(e).__name__}: {e}"}
    # What decoding left unread: re-encoding gives the length the store's layout takes.
    used = len(ts.serialize_cdr(msg, TYPE))
    gids = [msg.gid] + [g for n in msg.node_entities_info_seq
                        for g in list(n.reader_gid_seq) + list(n.writer_gid_seq)]
    return {
        "gid": bytes(msg.gid.data).hex(),
        "nodes": [n.node_namespace.rstrip("/") + "/" + n.node_name
                  for n in msg.node_entities_info_seq],
        "gid_lengths": sorted({len(g.data) for g in gids}),
        "rest": len(raw) - used,
    }


def main():
    exe, domain, want = sys.argv[1], int(sys.argv[2]), set(sys.argv[3:])
    peer = Peer(exe, domain)
    deadline = time.time() + 30
    seen = None
    while time.time() < deadline:
        answer = peer.ask(f"take ros_discovery_info {DDS_TYPE} latched 5000")
        if answer == "timeout":
            continue
        _, writer, _, payload = answer.split(" ")
        raw = bytes.fromhex(payload)
        decoded = {"humble": decode(Stores.ROS2_HUMBLE, raw),
                   "jazzy": decode(Stores.ROS2_JAZZY, raw)}
        seen = {"writer": writer, "decoded": decoded}
        if any(want <= set(d.get("nodes", [])) for d in decoded.values()):
            print(json.dumps(seen))
            peer.close()
            return
    fail(f"no ros_discovery_info sample listing {sorted(want)} within 30 s; last: {seen}")


if __name__ == "__main__":
    main()

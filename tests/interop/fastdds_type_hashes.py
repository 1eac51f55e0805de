"""The USER_DATA that ROS 2 endpoints announce, as eProsima Fast DDS discovers it
(`fastdds_peer`'s participant listener), beside the REP-2016 type hash rosbags computes from
the ROS definitions (ros_types.py; the vendored bond and nav2_msgs messages, which rosbags'
Jazzy store lacks), nothing from gpu_planning; for tests/nodes/fast_dds.rs.

Input: argv[1] the peer executable, argv[2] the DDS domain, argv[3] seconds to listen.
Output: one JSON line: a list of {"kind", "topic", "type", "user_data", "expected"} for every
`rt/` endpoint discovered (`expected` null where rosbags has no definition of the type).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fastdds_services import Peer  # noqa: E402
from ros_types import REPO, typestore  # noqa: E402
from rosbags.typesys import get_types_from_msg  # noqa: E402


def ros_type(dds):
    pkg, kind, _, name = dds.split("::")
    return f"{pkg}/{kind}/{name.rstrip('_')}"


def main():
    exe, domain, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    ts = typestore()
    # Vendored standard messages rosbags' Jazzy store lacks (bond, nav2_msgs): rosbags
    # hashes them from the same definitions.
    extra = {}
    root = os.path.join(REPO, "interfaces")
    for pkg in sorted(os.listdir(root)):
        d = os.path.join(root, pkg, "msg")
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            name = f"{pkg}/msg/{f[:-4]}"
            if name not in ts.fielddefs:
                extra.update(get_types_from_msg(open(os.path.join(d, f)).read(), name))
    ts.register(extra)
    peer = Peer(exe, domain)
    time.sleep(seconds)
    count = int(peer.ask("endpoints").split(" ")[1])
    found = {}
    for _ in range(count):
        kind, topic, dds_type, data = peer.proc.stdout.readline().split()
        if not topic.startswith("rt/"):
            continue
        name = ros_type(dds_type)
        try:
            expected = ts.hash_rihs01(name)
        except KeyError:
            expected = None
        found[(kind, topic, dds_type)] = {
            "kind": kind, "topic": topic, "type": name,
            "user_data": "" if data == "-" else bytes.fromhex(data).decode("utf-8", "replace"),
            "expected": expected}
    peer.close()
    print(json.dumps(list(found.values())))


if __name__ == "__main__":
    main()

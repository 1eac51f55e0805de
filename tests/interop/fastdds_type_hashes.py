"""The USER_DATA that ROS 2 endpoints announce, as eProsima Fast DDS discovers it
(`fastdds_peer`'s participant listener), beside the REP-2016 type hash rosbags computes from
the ROS definitions (ros_types.py; the vendored bond and nav2_msgs messages, which rosbags'
Jazzy store lacks), nothing from gpu_planning; for tests/nodes/fast_dds.rs.

Services and actions: rosbags hashes messages only, so a service `pkg/srv/Name` is given to
it as rosidl describes one (a struct of its request, response and event messages, the event
being the info and the two halves as sequences of at most one), an action's parts likewise
(`Name_SendGoal`, `Name_GetResult`, `Name_FeedbackMessage` around its goal, result and
feedback). rosbags hashes `char` as type id 13 where rosidl (and Jazzy's published hashes)
map it to uint8, so ServiceEventInfo's `char[16] client_gid` is given to it as uint8.

Input: argv[1] the peer executable, argv[2] the DDS domain, argv[3] seconds to listen.
Output: one JSON line: a list of {"kind", "topic", "type", "user_data", "expected"} for every
`rt/`, `rq/` and `rr/` endpoint discovered (`expected` null where rosbags has no definition of the type).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fastdds_services import Peer  # noqa: E402
from ros_types import REPO, typestore  # noqa: E402
from rosbags.typesys import get_types_from_msg  # noqa: E402
from rosbags.typesys.base import Nodetype  # noqa: E402


def ros_type(dds):
    pkg, kind, _, name = dds.split("::")
    name = name[:-1]
    if kind in ("srv", "action"):
        for half in ("_Request", "_Response"):
            if name.endswith(half):
                name = name[: -len(half)]
    return f"{pkg}/{kind}/{name}"


def nested(ty):
    return (Nodetype.NAME, ty)


def body_fields(pkg, text):
    """A .msg body's (constants, fields), bare names resolved in pkg."""
    return next(iter(get_types_from_msg(text, f"{pkg}/msg/Body").values()))


def parts(text):
    out = [[]]
    for line in text.split("\n"):
        if line.strip() == "---":
            out.append([])
        else:
            out[-1].append(line)
    return ["\n".join(p) for p in out]


def add_service(types, name, request, response):
    req, resp, event = f"{name}_Request", f"{name}_Response", f"{name}_Event"
    one = lambda ty: (Nodetype.SEQUENCE, (nested(ty), 1))  # noqa: E731
    types[req], types[resp] = request, response
    types[event] = ([], [("info", nested("service_msgs/msg/ServiceEventInfo")),
                         ("request", one(req)), ("response", one(resp))])
    types[name] = ([], [("request_message", nested(req)), ("response_message", nested(resp)),
                        ("event_message", nested(event))])


def services_and_actions(ts):
    """Every service and action definition of the repository, as rosbags can hash them."""
    types = {}
    consts, fields = ts.fielddefs["service_msgs/msg/ServiceEventInfo"]
    as_uint8 = lambda d: (d[0], ((Nodetype.BASE, ("uint8", 0)), d[1][1]))  # noqa: E731
    ts.fielddefs["service_msgs/msg/ServiceEventInfo"] = (consts, [
        (n, as_uint8(d) if n == "client_gid" else d) for n, d in fields])
    dirs = [("gpu_planning_msgs", os.path.join(REPO, "gpu_planning_msgs", "srv"))]
    root = os.path.join(REPO, "interfaces")
    dirs += [(pkg, os.path.join(root, pkg, "srv")) for pkg in sorted(os.listdir(root))]
    for pkg, d in dirs:
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            request, response = parts(open(os.path.join(d, f)).read())
            add_service(types, f"{pkg}/srv/{f[:-4]}", body_fields(pkg, request),
                        body_fields(pkg, response))
    # Jazzy's nav2 actions (type hashes exist from Iron on).
    d = os.path.join(root, "nav2_msgs", "action", "jazzy")
    uuid = ("goal_id", nested("unique_identifier_msgs/msg/UUID"))
    for f in sorted(os.listdir(d)):
        base = f"nav2_msgs/action/{f[:-7]}"
        goal, result, feedback = parts(open(os.path.join(d, f)).read())
        types[f"{base}_Goal"] = body_fields("nav2_msgs", goal)
        types[f"{base}_Result"] = body_fields("nav2_msgs", result)
        types[f"{base}_Feedback"] = body_fields("nav2_msgs", feedback)
        add_service(types, f"{base}_SendGoal", ([], [uuid, ("goal", nested(f"{base}_Goal"))]),
                    ([], [("accepted", (Nodetype.BASE, ("bool", 0))),
                          ("stamp", nested("builtin_interfaces/msg/Time"))]))
        add_service(types, f"{base}_GetResult", ([], [uuid]),
                    ([], [("status", (Nodetype.BASE, ("int8", 0))),
                          ("result", nested(f"{base}_Result"))]))
        types[f"{base}_FeedbackMessage"] = ([], [uuid, ("feedback", nested(f"{base}_Feedback"))])
    return types


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
    ts.register(services_and_actions(ts))
    peer = Peer(exe, domain)
    time.sleep(seconds)
    count = int(peer.ask("endpoints").split(" ")[1])
    found = {}
    for _ in range(count):
        kind, topic, dds_type, data = peer.proc.stdout.readline().split()
        if not topic.startswith(("rt/", "rq/", "rr/")):
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

"""ROS 2 type definitions for the Python peers, from sources independent of gpu_planning:
rosbags' Jazzy type store for the standard types, this package's `msg/` and `srv/` files and
the vendored `interfaces/*/srv/` ones (rosbags has no store for those)."""
import json
import os
import sys

from rosbags.typesys import Stores, get_types_from_msg, get_typestore

REPO = os.environ.get("GPU_PLANNING_REPO") or os.path.join(os.path.dirname(__file__), "..", "..")


def typestore():
    """Jazzy's standard types, plus this package's messages, every service half and nav2's
    planner actions."""
    ts = get_typestore(Stores.ROS2_JAZZY)
    types = {}
    for name in sorted(os.listdir(os.path.join(REPO, "gpu_planning_msgs", "msg"))):
        text = open(os.path.join(REPO, "gpu_planning_msgs", "msg", name)).read()
        types.update(get_types_from_msg(text, f"gpu_planning_msgs/msg/{name[:-4]}"))
    srv_dirs = [("gpu_planning_msgs", os.path.join(REPO, "gpu_planning_msgs", "srv"))]
    for pkg in sorted(os.listdir(os.path.join(REPO, "interfaces"))):
        d = os.path.join(REPO, "interfaces", pkg, "srv")
        if os.path.isdir(d):
            srv_dirs.append((pkg, d))
    for pkg, d in srv_dirs:
        for name in sorted(os.listdir(d)):
            lines = open(os.path.join(d, name)).read().split("\n")
            cut = next(i for i, l in enumerate(lines) if l.strip() == "---")
            request, response = "\n".join(lines[:cut]), "\n".join(lines[cut + 1:])
            # rosbags keeps messages under pkg/msg; the halves live there under their
            # rosidl names, and get their DDS names below.
            types.update(get_types_from_msg(request, f"{pkg}/msg/{name[:-4]}_Request"))
            types.update(get_types_from_msg(response, f"{pkg}/msg/{name[:-4]}_Response"))
    # nav2's planner actions (Jazzy), as rosidl splits an action: the goal, result and
    # feedback messages and the halves of its _SendGoal and _GetResult services.
    d = os.path.join(REPO, "interfaces", "nav2_msgs", "action", "jazzy")
    for f in ("ComputePathToPose.action", "ComputePathThroughPoses.action"):
        name = f[:-len(".action")]
        base = f"nav2_msgs/msg/{name}"
        goal, result, feedback = open(os.path.join(d, f)).read().split("\n---\n")
        for part, text in (("Goal", goal), ("Result", result), ("Feedback", feedback)):
            types.update(get_types_from_msg(text, f"{base}_{part}"))
        halves = {
            "SendGoal_Request": f"unique_identifier_msgs/UUID goal_id\n{base}_Goal goal",
            "SendGoal_Response": "bool accepted\nbuiltin_interfaces/Time stamp",
            "GetResult_Request": "unique_identifier_msgs/UUID goal_id",
            "GetResult_Response": f"int8 status\n{base}_Result result",
        }
        for half, text in halves.items():
            types.update(get_types_from_msg(text, f"{base}_{half}"))
    ts.register(types)
    return ts


def msg_name(type_name):
    pkg, kind, short = type_name.split("/")
    return f"{pkg}/msg/{short}"


def truthy(obj, path):
    for part in path.split("."):
        obj = getattr(obj, part)
    return bool(obj)


def fail(reason):
    """The peers' one failure line, and exit status 1."""
    print(json.dumps({"ok": False, "reason": reason}))
    sys.exit(1)


SEPARATOR = "=" * 80


def plain_schema(msgtype, text):
    """A bag schema in the plain `ros2msg` form rosbags parses. rosbag2 (Jazzy on) stores a
    service event's (`pkg/srv/Name_Event`) as a separator, `SRV: pkg/srv/Name`, the `.srv`
    text and the messages it uses, without the event's own layout, which rosbags (0.11) cannot
    parse: this writes that layout out (rosidl's: the info, then the request and the response
    as sequences of at most one) with service_msgs/ServiceEventInfo from the repository's
    copy. Other schemas come back as they are."""
    head = SEPARATOR + "\nSRV: "
    if not text.startswith(head):
        return text
    sections = text[len(SEPARATOR) + 1:].split("\n" + SEPARATOR + "\n")
    first, rest = sections[0], sections[1:]
    service_line, srv = first.split("\n", 1)
    pkg, _, name = service_line[len("SRV: "):].strip().split("/")
    lines = srv.split("\n")
    cut = next(i for i, l in enumerate(lines) if l.strip() == "---")
    request, response = "\n".join(lines[:cut]), "\n".join(lines[cut + 1:])
    req, resp = f"{pkg}/{name}_Request", f"{pkg}/{name}_Response"
    interfaces = os.path.join(REPO, "interfaces")
    info = open(os.path.join(interfaces, "service_msgs/msg/ServiceEventInfo.msg")).read()
    out = [f"service_msgs/ServiceEventInfo info\n{req}[<=1] request\n{resp}[<=1] response\n",
           f"MSG: {req}\n{request}", f"MSG: {resp}\n{response}",
           f"MSG: service_msgs/ServiceEventInfo\n{info}"]
    if not any(s.startswith("MSG: builtin_interfaces/Time\n") for s in rest):
        time = open(os.path.join(interfaces, "builtin_interfaces/msg/Time.msg")).read()
        out.append(f"MSG: builtin_interfaces/Time\n{time}")
    out += rest
    return ("\n" + SEPARATOR + "\n").join(s.rstrip("\n") + "\n" for s in out)

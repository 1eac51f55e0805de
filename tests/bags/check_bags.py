"""Opens bags with independent readers and prints what they decoded, as JSON, for tests/bags.rs
to compare field by field with its own decoding.

rosbags (PyPI) reads each bag folder through metadata.yaml and decodes every message with
types built only from the schemas stored in the bag (an empty typestore), so a wrong schema or
a payload that does not match it fails here. Service events are stored in rosbag2's `SRV:`
form, which rosbags (0.11) cannot parse (its AnyReader refuses the whole bag): their schemas
reach rosbags through `plain_schema` (tests/interop/ros_types.py), which writes the event's
layout out as rosidl defines it. The Foxglove `mcap` reader checks the MCAP file
itself: magic, records, chunk CRCs, summary.

usage: check_bags.py BAG_DIR [BAG_DIR ...]
"""

import json
import sys
from pathlib import Path

from mcap.reader import make_reader
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.msg import normalize_msgtype

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interop"))
from ros_types import SEPARATOR, plain_schema  # noqa: E402


def check_message(msgtype, msg):
    """Structural facts that hold for every message of these types."""
    if msgtype == "nav_msgs/msg/OccupancyGrid":
        assert len(msg.data) == msg.info.width * msg.info.height, "OccupancyGrid data length"
    elif msgtype == "sensor_msgs/msg/PointCloud2":
        assert len(msg.data) >= msg.row_step * msg.height, "PointCloud2 data length"
    elif msgtype == "sensor_msgs/msg/Image":
        assert len(msg.data) == msg.step * msg.height, "Image data length"
    elif msgtype.endswith("_Event"):
        assert msg.info.event_type in (0, 1, 2, 3), "event_type"
        assert len(msg.request) + len(msg.response) == 1, "one half per event"
        assert len(msg.info.client_gid) == 16, "client_gid"


def plain(value):
    """A decoded rosbags message as JSON-ready dicts, lists and numbers."""
    if hasattr(value, "__dataclass_fields__"):
        return {
            name: plain(getattr(value, name))
            for name in value.__dataclass_fields__
            if not name.startswith("__")
        }
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def read_bag(path):
    messages = {}
    with Reader(path) as reader:
        typestore = get_typestore(Stores.EMPTY)
        types = {conn.topic: conn.msgtype for conn in reader.connections}
        for conn in reader.connections:
            text = plain_schema(conn.msgtype, conn.msgdef.data)
            typestore.register(get_types_from_msg(text, conn.msgtype))
        for conn, _, raw in reader.messages():
            # rosbags (0.11) files `pkg/srv/Name_Event` from a bag's schema under
            # `pkg/srv/msg/Name_Event`: it normalises every name to .../msg/...
            msg = typestore.deserialize_cdr(raw, normalize_msgtype(conn.msgtype))
            check_message(conn.msgtype, msg)
            entry = messages.setdefault(conn.topic, {"type": conn.msgtype, "messages": []})
            entry["messages"].append(plain(msg))
    mcap_counts = {}
    for f in sorted(path.glob("*.mcap")):
        with open(f, "rb") as stream:
            reader = make_reader(stream)
            summary = reader.get_summary()
            assert summary is not None, f"{f}: no summary section"
            assert reader.get_header().profile == "ros2", f"{f}: profile"
            for schema, channel, _ in reader.iter_messages():
                assert schema.encoding == "ros2msg" and channel.message_encoding == "cdr"
                # As rosbag2 writes them: the schema named by the topic's type, a service
                # event's in the SRV: form.
                assert schema.name == types[channel.topic], f"{channel.topic}: schema name"
                if schema.name.endswith("_Event"):
                    srv = schema.name[: -len("_Event")]
                    head = f"{SEPARATOR}\nSRV: {srv}\n".encode()
                    assert schema.data.startswith(head), f"{schema.name}: not the SRV: form"
                mcap_counts[channel.topic] = mcap_counts.get(channel.topic, 0) + 1
    return {"rosbags": messages, "mcap": mcap_counts}


def main():
    out = {}
    for arg in sys.argv[1:]:
        out[Path(arg).name] = read_bag(Path(arg))
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()

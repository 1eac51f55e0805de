"""Rewrites a rosbag2 bag with rosbags' own writer and Python's sqlite3 (nothing from
gpu_planning), for tests/bags.rs: as sqlite3 (`.db3`, the storage `ros2 bag record` uses by
default on Humble) or as MCAP with Jazzy's metadata.yaml (version 9).

Input: argv[1] a bag (rosbags reads it), argv[2] the output folder, argv[3] the layout:
  iron    rosbags' sqlite3 writer as is (schema 4: `message_definitions`, type hashes;
          metadata.yaml version 8), its messages split over two `.db3` files listed in
          metadata.yaml, as a bag split by size or duration is;
  humble  the tables Humble's rosbag2 writes (schema 3: no `message_definitions`, no
          `type_description_hash`), one file;
  jazzy   rosbags' MCAP writer, metadata.yaml version 9 (QoS as a YAML list, type hashes,
          `ros_distro`, `custom_data`), one file.
Output: one JSON line {"files": [...], "messages": n}; or {"ok": false, "reason"}, exit 1.
"""
import json
import os
import shutil
import sqlite3
import sys

from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from ruamel.yaml import YAML

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ros_types import fail, plain_schema  # noqa: E402


def convert(src, out, version, storage):
    with Reader(src) as reader, Writer(out, version=version, storage_plugin=storage) as w:
        # The type hashes rosbag2 stores beside each definition, computed by rosbags from
        # the bag's own definitions.
        ts = get_typestore(Stores.EMPTY)
        for c in reader.connections:
            ts.register(get_types_from_msg(plain_schema(c.msgtype, c.msgdef.data), c.msgtype))
        conns = {}
        for c in reader.connections:
            try:
                rihs01 = ts.hash_rihs01(c.msgtype)
            except KeyError:
                # rosbags 0.11 hashes no service event (pkg/srv/Name_Event); the hash is
                # metadata that readers do not need.
                rihs01 = "RIHS01_" + "0" * 64
            conns[c.id] = w.add_connection(
                c.topic, c.msgtype, msgdef=c.msgdef.data, rihs01=rihs01,
                offered_qos_profiles=c.ext.offered_qos_profiles)
        n = 0
        for c, t, data in reader.messages():
            w.write(conns[c.id], t, data)
            n += 1
    return n


def split(out):
    """Moves the later half of the messages into a second file of the same bag."""
    meta_path = os.path.join(out, "metadata.yaml")
    yaml = YAML()
    meta = yaml.load(open(meta_path))
    info = meta["rosbag2_bagfile_information"]
    first = os.path.join(out, info["relative_file_paths"][0])
    second_name = os.path.basename(out) + "_1.db3"
    second = os.path.join(out, second_name)
    shutil.copy(first, second)
    db = sqlite3.connect(first)
    (count,) = db.execute("SELECT COUNT(*) FROM messages").fetchone()
    half = sorted(r[0] for r in db.execute("SELECT id FROM messages"))[count // 2]
    db.execute("DELETE FROM messages WHERE id >= ?", (half,))
    db.commit()
    db.close()
    db = sqlite3.connect(second)
    db.execute("DELETE FROM messages WHERE id < ?", (half,))
    db.commit()
    db.close()
    info["relative_file_paths"].append(second_name)
    yaml.dump(meta, open(meta_path, "w"))
    return info["relative_file_paths"]


def humble(out):
    meta = YAML().load(open(os.path.join(out, "metadata.yaml")))
    path = os.path.join(out, meta["rosbag2_bagfile_information"]["relative_file_paths"][0])
    db = sqlite3.connect(path)
    db.executescript("""
        DROP TABLE message_definitions;
        ALTER TABLE topics DROP COLUMN type_description_hash;
        UPDATE schema SET schema_version = 3, ros_distro = 'humble';
    """)
    db.commit()
    db.close()
    return [os.path.basename(path)]


def main():
    src, out, layout = sys.argv[1], sys.argv[2], sys.argv[3]
    if os.path.exists(out):
        shutil.rmtree(out)
    if layout not in ("iron", "humble", "jazzy"):
        fail(f"unknown layout {layout}")
    if layout == "jazzy":
        n = convert(src, out, 9, StoragePlugin.MCAP)
        meta = YAML().load(open(os.path.join(out, "metadata.yaml")))
        files = meta["rosbag2_bagfile_information"]["relative_file_paths"]
    else:
        n = convert(src, out, 8, StoragePlugin.SQLITE3)
        files = split(out) if layout == "iron" else humble(out)
    print(json.dumps({"files": files, "messages": n}))


if __name__ == "__main__":
    main()

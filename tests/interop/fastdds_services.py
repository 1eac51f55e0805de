"""A ROS 2 client on eProsima Fast DDS, as rclcpp on rmw_fastrtps_cpp: publishes inputs and
calls services through `fastdds_peer` (tests/interop/fastdds_peer.cpp, Fast DDS 2.9, which
carries payloads and does rmw_fastrtps's request-reply correlation), for
tests/nodes/fast_dds.rs.

Payloads are encoded and decoded here with rosbags (CDR from the ROS definitions, see
ros_types.py); nothing comes from gpu_planning.

Input: argv[1] the peer executable, argv[2] the same JSON job as cyclone_services.py
(`domain`, `publish`, `calls` with an optional `until`).
Output: one JSON line per call, in order: {"service", "attempts", "response"}, the reply as
rosbags decoded it, serialized again by rosbags (CDR, hex, with its 4-byte encapsulation
header), so the node's encoder and the test's decoder never meet without an independent codec
between them, as cyclone_services.py puts Cyclone's own types there; or {"ok": false,
"reason"} and exit status 1.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np
from rosbags.typesys.store import Nodetype

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ros_types import fail, msg_name, truthy, typestore  # noqa: E402

DTYPES = {
    "bool": np.bool_, "byte": np.uint8, "char": np.uint8, "int8": np.int8, "uint8": np.uint8,
    "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32,
    "int64": np.int64, "uint64": np.uint64, "float32": np.float32, "float64": np.float64,
}


class Values:
    """rosbags message objects from JSON (missing fields at their defaults)."""

    def __init__(self, ts):
        self.ts = ts

    def message(self, name, data):
        data = data or {}
        fields = self.ts.fielddefs[name][1]
        kw = {f: self.field(desc, data.get(f)) for f, desc in fields}
        return self.ts.types[name](**kw)

    def field(self, desc, v):
        kind, detail = desc
        if kind == Nodetype.BASE:
            base = detail[0]
            if base == "string":
                return v or ""
            if v is None:
                v = False if base == "bool" else 0
            return DTYPES[base](v).item() if base != "bool" else bool(v)
        if kind == Nodetype.NAME:
            return self.message(detail, v)
        inner, _ = detail
        ikind, idetail = inner
        if ikind == Nodetype.BASE and idetail[0] != "string":
            return np.array(v or [], dtype=DTYPES[idetail[0]])
        return [self.field(inner, x) for x in (v or [])]


class Peer:
    def __init__(self, exe, domain):
        self.proc = subprocess.Popen([exe, str(domain)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        if not answer:
            fail(f"fastdds_peer ended (exit {self.proc.poll()}) on: {line[:80]}")
        if answer.startswith("error"):
            fail(f"fastdds_peer: {answer}")
        return answer

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=10)


def main():
    exe = sys.argv[1]
    job = json.load(open(sys.argv[2]))
    ts = typestore()
    values = Values(ts)
    peer = Peer(exe, job["domain"])
    inputs = []
    for p in job.get("publish", []):
        name = msg_name(p["type"])
        pkg, _, short = name.split("/")
        cdr = bytes(ts.serialize_cdr(values.message(name, p["value"]), name))
        inputs.append(f"pub {p['topic']} {pkg}::msg::dds_::{short}_ {p['qos']} {cdr.hex()}")
    for line in inputs:
        peer.ask(line)

    timeout = float(job.get("timeout_s", 60))
    for call in job["calls"]:
        pkg, _, srv = call["type"].split("/")
        req_name, resp_name = f"{pkg}/msg/{srv}_Request", f"{pkg}/msg/{srv}_Response"
        request = bytes(ts.serialize_cdr(values.message(req_name, call["request"]), req_name))
        service = call["service"]
        until = call.get("until")
        deadline = time.time() + timeout
        reply, attempts = None, 0
        while reply is None:
            if time.time() > deadline:
                fail(f"{service}: no satisfying reply in {timeout} s after {attempts} requests")
            attempts += 1
            answer = peer.ask(f"call {service} {call['type']} {request.hex()} 2000")
            if answer.startswith("reply "):
                raw = bytes.fromhex(answer[6:])
                decoded = ts.deserialize_cdr(raw, resp_name)
                if until is None or truthy(decoded, until):
                    reply = bytes(ts.serialize_cdr(decoded, resp_name))
                    break
            # A node may not have its input yet: publish again and ask again.
            for line in inputs:
                peer.ask(line)
            time.sleep(0.1)
        print(json.dumps({"service": service, "attempts": attempts, "response": reply.hex()}),
              flush=True)
    peer.close()


if __name__ == "__main__":
    main()

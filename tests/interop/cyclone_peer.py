"""An independent ROS 2 peer on Eclipse Cyclone DDS (PyPI `cyclonedds`), for tests/cyclone_interop.rs.

It speaks ROS 2's DDS conventions by hand (topic prefixes rt/ rq/ rr/, type names
pkg::msg::dds_::Type_, XCDR1 payloads, rmw_cyclonedds's 16-byte request header), so it stands in
for an rclpy node on rmw_cyclonedds_cpp without a ROS installation:

1. publishes a nav_msgs/OccupancyGrid on rt/<ns>/map (reliable, transient local);
2. subscribes to rt/<ns>/gpu_planning/status and checks that our node decoded the grid exactly
   (header, size, cell counts, FNV-1a checksum of the data);
3. calls the service <ns>/gpu_planning/get_status through rq/.../get_statusRequest and
   rr/.../get_statusReply and checks the response the same way.

Prints one JSON line and exits 0 on success, 1 with a reason otherwise.
"""
import argparse
import json
import os
import random
import sys
import time
from dataclasses import dataclass, field

from cyclonedds.core import Qos, Policy
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
import cyclonedds.idl.types as t
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration


@dataclass
class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: t.int32 = 0
    nanosec: t.uint32 = 0


@dataclass
class Header(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time = field(default_factory=Time)
    frame_id: str = ""


@dataclass
class Point(IdlStruct, typename="geometry_msgs::msg::dds_::Point_"):
    x: t.float64 = 0.0
    y: t.float64 = 0.0
    z: t.float64 = 0.0


@dataclass
class Quaternion(IdlStruct, typename="geometry_msgs::msg::dds_::Quaternion_"):
    x: t.float64 = 0.0
    y: t.float64 = 0.0
    z: t.float64 = 0.0
    w: t.float64 = 1.0


@dataclass
class Pose(IdlStruct, typename="geometry_msgs::msg::dds_::Pose_"):
    position: Point = field(default_factory=Point)
    orientation: Quaternion = field(default_factory=Quaternion)


@dataclass
class MapMetaData(IdlStruct, typename="nav_msgs::msg::dds_::MapMetaData_"):
    map_load_time: Time = field(default_factory=Time)
    resolution: t.float32 = 0.0
    width: t.uint32 = 0
    height: t.uint32 = 0
    origin: Pose = field(default_factory=Pose)


@dataclass
class OccupancyGrid(IdlStruct, typename="nav_msgs::msg::dds_::OccupancyGrid_"):
    header: Header = field(default_factory=Header)
    info: MapMetaData = field(default_factory=MapMetaData)
    data: t.sequence[t.int8] = field(default_factory=list)


@dataclass
class RuntimeStatus(IdlStruct, typename="gpu_planning_msgs::msg::dds_::RuntimeStatus_"):
    header: Header
    backend: str
    device: str
    compute_capability: str
    device_memory_total: t.uint64
    device_memory_free: t.uint64
    nodes: t.sequence[str]
    uptime_s: t.float64
    maps_received: t.uint64
    map_header: Header
    map_width: t.uint32
    map_height: t.uint32
    map_resolution: t.float32
    map_free: t.uint32
    map_occupied: t.uint32
    map_unknown: t.uint32
    map_checksum: t.uint64


# rmw_cyclonedds prefixes requests and replies with the client's GUID half and a sequence
# number; ros2-client's ServiceMapping::Cyclone reads and echoes the same 16 bytes.
@dataclass
class GetStatusRequest(IdlStruct, typename="gpu_planning_msgs::srv::dds_::GetStatus_Request_"):
    client_guid: t.uint64
    sequence_high: t.int32
    sequence_low: t.uint32
    refresh_memory: bool


@dataclass
class GetStatusReply(IdlStruct, typename="gpu_planning_msgs::srv::dds_::GetStatus_Response_"):
    client_guid: t.uint64
    sequence_high: t.int32
    sequence_low: t.uint32
    status: RuntimeStatus


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b & 0xFF
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def fail(msg):
    print(json.dumps({"ok": False, "reason": msg}))
    sys.exit(1)


def check(status, grid, what):
    free = sum(1 for v in grid.data if 0 <= v < 65)
    occ = sum(1 for v in grid.data if v >= 65)
    unk = sum(1 for v in grid.data if v < 0)
    got = (status.map_width, status.map_height, status.map_free, status.map_occupied,
           status.map_unknown, status.map_checksum, status.map_header.frame_id,
           status.map_header.stamp.sec, status.map_header.stamp.nanosec)
    want = (grid.info.width, grid.info.height, free, occ, unk, fnv1a64(grid.data),
            grid.header.frame_id, grid.header.stamp.sec, grid.header.stamp.nanosec)
    if got != want:
        fail(f"{what}: got {got}, expected {want}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--domain", type=int, required=True)
    ap.add_argument("--ns", default="/robot")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30.0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    ns = a.ns.rstrip("/")

    dp = DomainParticipant(a.domain)
    xcdr1 = Policy.DataRepresentation(use_cdrv0_representation=True)
    latched = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.TransientLocal,
                  Policy.History.KeepLast(1), xcdr1)
    service = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.Volatile,
                  Policy.History.KeepLast(10), xcdr1)

    grid = OccupancyGrid()
    grid.header = Header(Time(rng.randrange(1 << 30), rng.randrange(10**9)), "cyclone_map")
    w, h = rng.randrange(1, 60), rng.randrange(1, 60)
    grid.info = MapMetaData(Time(5, 6), 0.05, w, h, Pose(Point(1.5, -2.0, 0.0), Quaternion()))
    grid.data = [rng.choice([-1, 0, 1, 50, 64, 65, 99, 100]) for _ in range(w * h)]

    map_writer = DataWriter(dp, Topic(dp, f"rt{ns}/map", OccupancyGrid, qos=latched), qos=latched)
    status_reader = DataReader(dp, Topic(dp, f"rt{ns}/gpu_planning/status", RuntimeStatus, qos=latched), qos=latched)
    req_writer = DataWriter(dp, Topic(dp, f"rq{ns}/gpu_planning/get_statusRequest", GetStatusRequest, qos=service), qos=service)
    rep_reader = DataReader(dp, Topic(dp, f"rr{ns}/gpu_planning/get_statusReply", GetStatusReply, qos=service), qos=service)

    map_writer.write(grid)
    deadline = time.time() + a.timeout
    status = None
    while time.time() < deadline and status is None:
        for s in status_reader.take(N=16):
            if s.maps_received >= 1 and s.map_header.frame_id == "cyclone_map":
                status = s
        time.sleep(0.05)
    if status is None:
        fail("no status reflecting our map from gpu_planning")
    check(status, grid, "topic")

    guid = rng.randrange(1, 1 << 63)
    reply = None
    seq = 0
    while time.time() < deadline and reply is None:
        # Requests sent before the server's reader matched are lost (volatile), so resend.
        seq += 1
        req_writer.write(GetStatusRequest(guid, 0, seq, True))
        end = time.time() + 0.5
        while time.time() < end and reply is None:
            for r in rep_reader.take(N=16):
                if r.client_guid == guid:
                    reply = r
            time.sleep(0.02)
    if reply is None:
        fail("no reply to get_status")
    check(reply.status, grid, "service")
    print(json.dumps({"ok": True, "width": w, "height": h, "checksum": status.map_checksum,
                      "backend": status.backend, "nodes": list(status.nodes), "requests": seq}))


if __name__ == "__main__":
    main()

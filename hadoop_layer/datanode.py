"""HDFS data transfer: which DataNode serves a read, which store a write, and the I/O streams each costs.

Hadoop 1.x (reference/algorithms.md 10.1; `DFSClient`, `DataNode`, `BlockReceiver`):
* a read is served by the nearest replica (`NetworkTopology.pseudoSortByDistance`: the reader's node, else a
  node of its rack, else any; among equals the first in the block's replica list): a remote read costs the
  serving node's datastore and NIC and the reader's NIC;
* a write goes down a pipeline: the writer's DataNode writes to its disk and forwards to the second replica
  (another rack), which writes and forwards to the third (the second's rack), as `BlockPlacementPolicyDefault`
  places them. Each replica costs a NIC receive and a disk write, and a NIC send on the node before it;
* a transfer between racks also goes out through the sending rack's uplink to the core switch and in through the
  receiving rack's (vcloud `rack_hop`; `Physics.rack_uplink_mbps`, unlimited unless a scenario sets it).

The streams sit on the serving hosts (vcloud `Stream.vm`), so this work competes with those nodes' own tasks
and shows in their VMs' disk, network and iowait, in no attempt's charges. With `serving=False` (the model
before this module, kept for comparison) a remote read costs the reader's NIC only and a write its own disk
plus (replication - 1) x its own NIC.
"""

from __future__ import annotations

import numpy as np

from hadoop_layer.hdfs import BlockPlacement
from vcloud.work import Device, Stream, disk, nic, rack_hop


def read_streams(source_vm: int, serving: bool, file: int = -1, cross_rack: bool = False) -> list[Stream]:
    """Streams per MB of an HDFS read from the replica on VM row `source_vm` (-1: the reader's own node), of
    page-cache file `file` there, `cross_rack` if that replica is in another rack."""
    if source_vm < 0:
        return [disk(file=file)]
    if not serving:
        return [nic()]
    hop = rack_hop(1.0, from_vm=source_vm) if cross_rack else []
    return [disk(vm=source_vm, file=file), nic(vm=source_vm), nic(), *hop]


def write_streams(
    pipeline_vms: tuple[int, ...],
    serving: bool,
    replication: int,
    own_file: int = -1,
    files: tuple[int, ...] = (),
    cross_rack: tuple[bool, ...] = (),
    per_mb: float = 1.0,
) -> list[Stream]:
    """Streams of an HDFS write of `per_mb` MB per unit from the writer's node to `pipeline_vms` (replicas 2, 3, ...),
    into page-cache files `own_file` and `files` (one per pipeline VM); `cross_rack[k]`: the hop into pipeline VM k
    leaves a rack. Each stream's MB per MB written times `per_mb`, made at once (not made, then scaled: every plan
    with HDFS output makes these)."""
    streams = [Stream(Device.DISK, 1.0 * per_mb, -1, True, own_file)]
    if not serving:
        return streams + ([Stream(Device.NIC, (replication - 1.0) * per_mb)] if replication > 1 else [])
    if not pipeline_vms:
        return streams
    one = 1.0 * per_mb
    streams.append(Stream(Device.NIC, one))  # the writer sends to the second replica
    files = files or (-1,) * len(pipeline_vms)
    cross_rack = cross_rack or (False,) * len(pipeline_vms)
    for k, (vm, file) in enumerate(zip(pipeline_vms, files, strict=True)):
        forwards = k + 1 < len(pipeline_vms)
        streams += [
            Stream(Device.NIC, (2.0 if forwards else 1.0) * per_mb, vm),
            Stream(Device.DISK, one, vm, True, file),
        ]  # receive, and send on
        if cross_rack[k]:
            streams += [Stream(Device.UPLINK, one, pipeline_vms[k - 1] if k else -1), Stream(Device.DOWNLINK, one, vm)]
    return streams


class DataNodes:
    """Replica choice for the tasks of a `HadoopModel` (its trackers are the DataNodes)."""

    def __init__(self, racks: np.ndarray, vm_rows: list[int], replication: int, serving: bool) -> None:
        self.racks, self.vm_rows, self.replication, self.serving = racks, vm_rows, replication, serving
        self.rack_of_vm = {vm: int(rack) for vm, rack in zip(vm_rows, racks, strict=True)}
        self._rack_list: list[int] = np.asarray(racks).tolist()  # by node, as Python ints (read_source)
        self.placement = BlockPlacement(racks)

    def crosses_racks(self, from_vm: int, to_vm: int) -> bool:
        """Whether a transfer between these VM rows (-1 for neither: same node) goes through the rack uplinks."""
        if from_vm < 0 or to_vm < 0:
            return False
        return self.rack_of_vm[from_vm] != self.rack_of_vm[to_vm]

    def read_source(self, replicas: np.ndarray, node: int) -> int:
        """VM row of the replica a reader on `node` reads from; -1 when the reader's node holds one."""
        nodes = replicas.tolist()  # a few: faster as Python ints than as NumPy arrays (every map launch)
        if not nodes or node in nodes:
            return -1
        racks = self._rack_list
        rack = racks[node]
        for n in nodes:  # the first in the reader's rack, else the first (a loop, not next() of a generator)
            if racks[n] == rack:
                return self.vm_rows[n]
        return self.vm_rows[nodes[0]]

    def write_pipeline(self, node: int, rng: np.random.Generator) -> list[int]:
        """VM rows of the further replicas of a block written from `node` (placed as HDFS places them)."""
        if self.replication <= 1 or len(self.racks) <= 1:
            return []
        placed = self.placement.replicas(int(node), min(self.replication, len(self.racks)), rng)
        return [self.vm_rows[n] for n in placed[1:]]

"""Seeks between concurrent sequential streams, worked out by hand (vcloud/diskseek.py)."""

from __future__ import annotations

import pytest

from tests.helpers import one_host
from vcloud import Phase, Physics, WorkItem
from vcloud.diskseek import DiskSeekSettings, curve, guest_share, host_share

CFQ = curve(DiskSeekSettings())
SWITCH = 0.01267  # 8.5 ms seek + 4.17 ms half a turn


@pytest.mark.parametrize(
    ("streams", "low_latency", "want"),
    [
        (1, True, 1.0),
        (2, True, 0.1 / (0.1 + SWITCH)),  # 2 x 100 ms within the 300 ms target: full slices
        (3, True, 0.1 / (0.1 + SWITCH)),
        (4, True, 0.075 / (0.075 + SWITCH)),  # 300 ms / 4
        (8, True, 0.0375 / (0.0375 + SWITCH)),
        (32, True, 0.016 / (0.016 + SWITCH)),  # 300 / 32 = 9.4 ms, below 2 x slice_idle: 16 ms
        (8, False, 0.1 / (0.1 + SWITCH)),  # before 2.6.32: 100 ms slices whatever the count
    ],
)
def test_cfq_slices_and_what_a_disk_delivers(streams, low_latency, want):
    c = curve(DiskSeekSettings(low_latency=low_latency))
    assert guest_share(streams, c) == pytest.approx(want, rel=1e-12)


def test_esxi_switches_between_vms_after_its_quantum():
    # 8 requests of 128 KB = 1 MB a turn: 10 ms at 100 MB/s, then a 12.67 ms switch
    assert host_share(100.0, CFQ) == pytest.approx(0.01 / (0.01 + SWITCH))


def read_times(vms: int, readers: int, **seek) -> list[float]:
    model = one_host(cores=4, disk_mbps=100.0, physics=Physics(disk_seek=DiskSeekSettings(**seek)))
    items = []
    for v in range(vms):
        vm = model.add_vm(f"v{v}", model.host_agents[0], vcpus=2, mem_mb=4096)
        items += [vm.run(WorkItem(model, [Phase.read("r", 300.0)], io_mbps_max=1000.0)) for _ in range(readers)]
    model.run_for(40.0)
    return [i.end_s - i.start_s for i in items]


def test_two_readers_of_one_vm_share_what_cfq_leaves():
    # 100 MB/s x 0.8875 = 88.75 MB/s for two: 300 MB each at 44.38 MB/s
    for took in read_times(vms=1, readers=2):
        assert took == pytest.approx(300.0 / (100.0 * 0.1 / (0.1 + SWITCH) / 2), rel=1e-9)


def test_readers_of_two_vms_share_what_the_hypervisors_quantum_leaves():
    for took in read_times(vms=2, readers=1):
        assert took == pytest.approx(300.0 / (100.0 * 0.01 / (0.01 + SWITCH) / 2), rel=1e-9)


def test_one_reader_and_no_seek_model_get_the_disks_rate():
    assert read_times(vms=1, readers=1) == pytest.approx([3.0])
    assert read_times(vms=1, readers=2, scheduler="none") == pytest.approx([6.0, 6.0])

"""Tiny clouds built by hand for tests whose expected numbers are worked out on paper."""

from __future__ import annotations

from vcloud import CloudModel, Phase, WorkItem


def one_host(cores: int = 4, core_mhz: float = 2000.0, disk_mbps: float = 100.0, **model_kwargs) -> CloudModel:
    model = CloudModel(rng=1, check=True, **model_kwargs)
    model.add_host("h0", cores=cores, core_mhz=core_mhz, mem_mb=65536, disk_mbps=disk_mbps, nic_mbps=125)
    return model


def busy(model: CloudModel, vm, threads: int = 1, seconds: float = 1e6, **kwargs) -> WorkItem:
    """A CPU-bound item that runs far longer than the test."""
    core = model.hosts.core_mhz[vm.host.row]
    return vm.run(WorkItem(model, [Phase.cpu("spin", seconds * core * threads)], threads=threads, **kwargs))

"""Task schedulers behind `hadoop_layer.interfaces.TaskScheduler`: one module each, one registry line each."""

from policies.schedulers.fifo import FifoScheduler

SCHEDULERS = {"fifo": FifoScheduler}

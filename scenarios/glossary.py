"""What every column of a run's tables and every field of its summary means, with its unit: one dictionary, from
which docs/glossary.md is written (`python -m scenarios.glossary > docs/glossary.md`; a test keeps it current),
the Parquet files carry their columns' units in their schema metadata (`runner.write_table`), and `vcloud run`
prints its summary with units (`summary_text`).

Units: s (simulated seconds), MB, MB/s, MHz, vCPU-s (seconds of one vCPU), share (0 to 1), count, jobs/h; text and
true/false have none. A summary field written `maps_per_node.*` has one entry per node (or job, ...)."""

from __future__ import annotations

import fnmatch
from typing import Any

CPU_SECONDS = "vCPU-s"
TABLES: dict[str, dict[str, tuple[str, str]]] = {
    "vm_trace": {
        "time_s": ("s", "end of the sample's interval; a row covers the interval before it"),
        "vm": ("", "the VM"),
        "host": ("", "the host it ran on"),
        "vcpus": ("count", "the VM's vCPUs"),
        "cpu_demand_mhz": ("MHz", "CPU the VM's runnable threads wanted, mean over the interval"),
        "cpu_entitlement_mhz": ("MHz", "what the allocator entitled the VM to at the sample"),
        "cpu_used_mhz": ("MHz", "CPU the hypervisor delivered, mean over the interval"),
        "usr_s": (CPU_SECONDS, "vCPU time running guest code in the interval"),
        "sys_s": (CPU_SECONDS, "vCPU time in the guest kernel"),
        "steal_s": (CPU_SECONDS, "vCPU time runnable while the hypervisor ran another VM"),
        "iowait_s": (CPU_SECONDS, "vCPU time idle with an I/O of the VM outstanding"),
        "idle_s": (CPU_SECONDS, "vCPU time idle otherwise; usr+sys+steal+iowait+idle = vcpus x interval"),
        "mem_active_mb": ("MB", "memory the guest actively uses (what DRS estimates by sampling)"),
        "mem_granted_mb": ("MB", "memory the hypervisor backs with host memory"),
        "swap_mb": ("MB", "guest memory swapped out (by the guest or the hypervisor)"),
        "disk_mbps": ("MB/s", "the VM's datastore throughput, mean over the interval"),
        "cache_mb": ("MB", "the guest's page cache"),
        "dirty_mb": ("MB", "page cache not yet written back"),
        "cache_hit": ("share", "share of the interval's file reads the page cache served"),
        "balloon_mb": ("MB", "memory the balloon driver holds for the hypervisor"),
        "touched_mb": ("MB", "memory the guest touched in the interval: heap in use and page cache read or written"),
    },
    "tasks": {
        "job": ("", "the job's id"),
        "task": ("", "the task's id"),
        "attempt": ("", "the attempt's id (Hadoop's attempt_..._N)"),
        "kind": ("", "m (map), r (reduce), s (setup) or c (cleanup)"),
        "vm": ("", "the slave VM it ran on"),
        "host": ("", "that VM's host"),
        "locality": ("", "a map's input: node, rack or off_rack (empty for other kinds)"),
        "start_s": ("s", "launch"),
        "end_s": ("s", "end (empty while running)"),
        "state": ("", "done, killed, failed or running"),
        "speculative": ("", "a backup attempt (true/false)"),
        "input_mb": ("MB", "the task's input"),
        "processed_mb": ("MB", "input the attempt got through (all of it when done; less when killed)"),
        "output_mb": ("MB", "output written (a map's to local disk, a reduce's to HDFS)"),
        "spills": ("count", "sort-buffer spills of a map (io.sort.mb)"),
        "cputime_s": (CPU_SECONDS, "CPU time the attempt ran (usr + sys)"),
        "steal_s": (CPU_SECONDS, "time it was runnable while the hypervisor ran another VM"),
        "iowait_s": (CPU_SECONDS, "time it waited for I/O"),
        "read_disk_mb": ("MB", "file data it read from disk (its input, spills in merges, map outputs)"),
        "read_cache_mb": ("MB", "file data it read from the guest's page cache"),
        "kill_count": ("count", "attempts of the task killed (the task's count, on each of its rows)"),
        "parent": ("", "the map whose input a SkewTune mitigator took over (empty otherwise)"),
    },
    "jobs": {
        "job": ("", "the job's id"),
        "name": ("", "the job's name (benchmark or trace job)"),
        "submit_s": ("s", "submission"),
        "start_s": ("s", "first task launched"),
        "end_s": ("s", "completion (empty if it did not end)"),
        "maps": ("count", "map tasks"),
        "reduces": ("count", "reduce tasks"),
        "state": ("", "succeeded, failed, killed, running or prep"),
    },
    "comparison": {
        "job": ("", "the emulated job's id (trace-replay)"),
        "name": ("", "the trace's job"),
        "recorded_outcome": ("", "the trace's outcome (SUCCESS, FAILED, KILLED)"),
        "state": ("", "the emulated job's end state"),
        "recorded_s": ("s", "the trace's duration, submit to end"),
        "emulated_s": ("s", "the emulated duration, submit to end"),
        "ratio": ("share", "emulated_s / recorded_s (1: exact; not bounded by 1)"),
    },
}

SUMMARY: dict[str, tuple[str, str]] = {
    # every Hadoop scenario (hadoop_layer/model.py `hadoop_summary`)
    "makespan_s": ("s", "first submission to last job's end (empty if a job did not end)"),
    "jobs_succeeded": ("count", "jobs that succeeded"),
    "jobs_failed": ("count", "jobs that failed"),
    "job_completion_s.*": ("s", "each job's submission to end"),
    "map_runtime_skewness": ("", "skewness of the successful map attempts' runtimes"),
    "map_task_time_skewness": ("", "skewness of the maps' times from their first attempt's launch"),
    "map_runtime_mean_s": ("s", "mean runtime of the successful map attempts"),
    "map_runtime_max_s": ("s", "longest successful map attempt"),
    "maps_per_node.*": ("count", "successful maps on each slave"),
    "maps_per_node_max_over_min": ("", "the most maps on one slave over the fewest"),
    "locality.*": ("share", "share of map attempts that read node-local, rack-local and off-rack input"),
    "killed_attempts": ("count", "attempts killed (speculation's losers, preemption, slot changes)"),
    "repartitioned_maps": ("count", "maps whose remaining input SkewTune split off"),
    "mitigator_maps": ("count", "maps SkewTune started to take over others' input"),
    "speculative_attempts": ("count", "backup attempts launched"),
    "map_steal_s": (CPU_SECONDS, "steal time of the successful maps, summed"),
    "map_iowait_s": (CPU_SECONDS, "iowait of the successful maps, summed"),
    "map_cputime_s": (CPU_SECONDS, "CPU time (usr + sys) of the successful maps, summed"),
    "heartbeats": ("count", "TaskTracker heartbeats the JobTracker answered"),
    "shuffle_served_mb": ("MB", "map output the TaskTrackers served to reduces"),
    "shuffle_local_mb": ("MB", "of which fetched by a reduce on the same node"),
    # flexslot
    "benchmark": ("", "the PUMA benchmark"),
    "scale": ("", "fraction of the paper's input"),
    "allocator": ("", "the cloud allocator"),
    "skew_sched": ("", "heterogeneous with skew-aware scheduling (true/false)"),
    "co_cluster": ("", "a second cluster shared the hosts (true/false)"),
    "co_cluster_hosts": ("", "the second cluster's VMs on the first this many hosts only (null: all; an assumption)"),
    "jobs_file": ("", "the job-mix scenario's file of jobs"),
    # the Coupling paper's scenarios and quincy-locality (scenarios/coupling_experiments.py, scheduler_experiments.py)
    "scheduler": ("", "the task scheduler"),
    "mean_job_s": ("s", "mean of the jobs' times, submission to end"),
    "job_s.*": ("s", "each job's time, submission to end (empty if it did not end)"),
    "starvation_s.*": (
        "s",
        "each job's starvation (Coupling paper, Sec. III-C): mean wait of its reduces launched after "
        "its last map ended, from that end to their launch",
    ),
    "moved_mb.map_rack_local_mb": ("MB", "map input read from another node of the same rack"),
    "moved_mb.map_off_rack_mb": ("MB", "map input read across racks"),
    "moved_mb.shuffle_cross_rack_mb": ("MB", "map output the reduces fetched across racks"),
    "moved_mb.cross_rack_mb": ("MB", "all data across racks: off-rack map input plus cross-rack shuffle"),
    "solver.solves": ("count", "min-cost-flow solves of the Quincy scheduler"),
    "solver.total_s": ("s", "wall-clock seconds (not simulated) the solves took: a clock reading, varies run to run"),
    # delay-scheduling (scenarios/delay_experiments.py)
    "policy": ("", "fifo, fair/naive or fair/delay"),
    "slaves": ("count", "slave nodes"),
    "bins.*.jobs": ("count", "jobs of the size bin (the paper's 9 Facebook bins by map count)"),
    "bins.*.maps_per_job": ("count", "maps of each job of the bin"),
    "bins.*.node_local": ("share", "share of the bin's map attempts that read node-local input"),
    "bins.*.rack_local": ("share", "share that read rack-local input"),
    "bins.*.mean_response_s": ("s", "mean response time of the bin's jobs, submission to end"),
    "bins.*.median_response_s": ("s", "median response time of the bin's jobs"),
    "bins.*.unfinished": ("count", "jobs of the bin that had not ended when the run stopped"),
    "mean_response_s": ("s", "mean response time over all jobs"),
    "jobs_done": ("count", "jobs that ended"),
    "throughput_jobs_per_h": ("jobs/h", "jobs ended per hour of the makespan"),
    "throughput_mb_per_s": ("MB/s", "map input over the makespan"),
    # samr-heterogeneous (scenarios/samr_experiments.py)
    "speculation": ("", "the speculation policy"),
    "job_s": ("s", "the one job's time, submission to end"),
    "backups": ("count", "backup attempts launched"),
    "useful_backups": ("count", "backups that finished first (their task's winning attempt)"),
    "m1_slow": ("share", "mean learned weight of a map's first stage on the slow nodes (SAMR's history)"),
    "m1_fast": ("share", "the same on the fast nodes"),
    "r1_slow": ("share", "mean learned weight of a reduce's copy stage on the slow nodes"),
    "r1_fast": ("share", "the same on the fast nodes"),
    # capacity-queues (scenarios/scheduler_experiments.py)
    "map_slots": ("count", "map slots of the cluster"),
    "reduce_slots": ("count", "reduce slots of the cluster"),
    "windows.*.from_s": ("s", "start of the window (A alone, A+B, A+B+C), once the change has settled"),
    "windows.*.to_s": ("s", "end of the window"),
    "windows.*.map_share.*": ("share", "each queue's share of the map slots over the window"),
    "windows.*.reduce_share.*": ("share", "each queue's share of the reduce slots over the window"),
    "queue_C_users.*.mean_map_slots": ("count", "map slots a queue-C user held on average in the A+B+C window"),
    "queue_C_users.*.max_map_slots": ("count", "the most map slots the user held at once in that window"),
    "map_share_series.bin_s": ("s", "width of the series' bins"),
    "map_share_series.from_s": ("s", "each bin's start"),
    "map_share_series.*": ("share", "per queue, its share of the map slots in each bin"),
    # trace-replay (scenarios/trace_replay.py, trace_compare.py)
    "trace": ("", "the trace file's name"),
    "replay": ("", "durations or physics"),
    "cluster": ("", "the emulated cluster: nodes, racks and slots"),
    "slots.*": ("count", "where the slot counts came from, and how many nodes have each map+reduce count"),
    "jobs_in_trace": ("count", "jobs the trace holds"),
    "jobs_read": ("count", "jobs read (max_jobs and the horizon can cut them)"),
    "jobs_cut_by_max_jobs": ("", "true when max_jobs left jobs out"),
    "anomalies_repaired.*": ("", "per kind of trace anomaly: how many were repaired, the rule and the first one"),
    "job_conf.*": ("", "the traced job configuration the emulator honoured or ignored"),
    "jobs_not_run": ("", "jobs submitted after max_duration_s (names)"),
    "jobs_killed": ("count", "jobs that ended killed"),
    "jobs_ended_as_recorded": ("count", "jobs whose end state (succeeded, failed, killed) is the recorded one"),
    "start_as_recorded": ("", "tasks held until their recorded start (true/false)"),
    "tasks_held_to_recorded_starts": ("count", "tasks that waited for their recorded start"),
    "failed_attempts": ("count", "map and reduce attempts that failed"),
    "jobs_compared": ("count", "jobs with a recorded and an emulated duration"),
    "job_duration_median_abs_error": ("share", "median of |emulated / recorded - 1| over those jobs"),
    "jobs_within_2x": ("share", "share of those jobs within 2x of their recorded duration"),
    "jobs_compared_succeeded": ("count", "the same, successful jobs only"),
    "job_duration_median_abs_error_succeeded": ("share", "the same, successful jobs only"),
    "jobs_within_2x_succeeded": ("share", "the same, successful jobs only"),
    "jobs_run_compared": ("count", "jobs compared on their run (from the first task's start to the end)"),
    "job_run_median_abs_error": ("share", "median relative error of the run"),
    "jobs_run_within_2x": ("share", "share of runs within 2x"),
    "jobs_own_compared": (
        "count",
        "jobs compared on their tasks' own run (the run less the time none of its attempts ran)",
    ),
    "job_own_median_abs_error": ("share", "median relative error of the tasks' own run"),
    "jobs_own_within_2x": ("share", "share of own runs within 2x"),
    "job_wait_median_recorded_s": ("s", "median recorded wait from submission to the first task's start"),
    "job_wait_median_emulated_s": ("s", "the same, emulated"),
    "job_between_median_recorded_s": ("s", "median recorded time inside a job's run when none of its attempts ran"),
    "job_between_median_emulated_s": ("s", "the same, emulated"),
    "map_runtime_median_recorded_s": ("s", "median recorded runtime of the successful map attempts"),
    "map_runtime_median_emulated_s": ("s", "the same, emulated"),
    "map_runtime_p90_recorded_s": ("s", "90th percentile of the recorded map runtimes"),
    "map_runtime_p90_emulated_s": ("s", "the same, emulated"),
    "reduce_runtime_median_recorded_s": ("s", "median recorded runtime of the successful reduce attempts"),
    "reduce_runtime_median_emulated_s": ("s", "the same, emulated"),
    "reduce_runtime_p90_recorded_s": ("s", "90th percentile of the recorded reduce runtimes"),
    "reduce_runtime_p90_emulated_s": ("s", "the same, emulated"),
    "per_job": ("", "per job, the rows of comparison.parquet"),
    # the cloud (scenarios/summaries.py `cloud_summary`; under `cloud.` in Hadoop scenarios)
    "simulated_s": ("s", "simulated time the run lasted"),
    "pool_cpu_utilization": ("share", "CPU the pool's VMs used over the pool's capacity"),
    "usr_fraction": ("share", "share of the pool's vCPU time in usr"),
    "sys_fraction": ("share", "share in sys"),
    "steal_fraction": ("share", "share in steal"),
    "iowait_fraction": ("share", "share in iowait"),
    "idle_fraction": ("share", "share idle"),
    "max_vm_steal_fraction": ("share", "the largest share of one VM's vCPU time in steal"),
    "items_done.*": ("count", "work items finished, per kind (synthetic-cloud)"),
    "mean_item_s.*": ("s", "mean duration of a work item, per kind (synthetic-cloud)"),
    "swap_io_mb": ("MB", "memory swapped in and out"),
    "entitlement_persistence.periods": ("count", "allocation periods compared"),
    "entitlement_persistence.cpu": ("", "mean rank correlation of the VMs' CPU entitlements, period to period"),
    "entitlement_persistence.mem": ("", "the same for memory entitlements"),
    "entitlement_persistence.*": ("", "per-period series behind the two means (times in s)"),
    "vms": ("", "per VM: its usr/sys/steal/iowait/idle shares and CPU entitlement (MHz)"),
    "provenance.*": ("", "the package version and git commit that wrote the run"),
}


REPORT: dict[str, str] = {
    "figure": "the paper and its figure or table the row reproduces",
    "paper": "what the paper shows there, as its text or figure gives it",
    "emulator": "what the emulator measures on the same experiment (units in the text: s, min, %, GB, shares)",
    "same direction": "yes when the emulator goes the paper's way by the entry's test (`scenarios/reproduce.py`; "
    "a size far from the paper's can still be yes), else no",
    "plot": "the entry's PNG in the report's DIR (report.md only)",
    "full scale": 'quick reports only: "as full scale" where the committed full report (docs/report-rows.json) '
    'answers `same direction` alike, else "differs" and its answer',
    "measured_by": "rows.json only: the git commit that measured the row",
}


def summary_entry(key: str) -> tuple[str, str] | None:
    """(unit, meaning) of a dotted summary key (`cloud.` dropped: the cloud's fields mean the same there)."""
    key = key.removeprefix("cloud.")
    if key in SUMMARY:
        return SUMMARY[key]
    return next((v for pattern, v in SUMMARY.items() if "*" in pattern and fnmatch.fnmatchcase(key, pattern)), None)


def units(table: str) -> dict[str, str]:
    """A table's column -> unit, for the Parquet schema metadata (columns without a unit left out)."""
    return {column: unit for column, (unit, _) in TABLES.get(table, {}).items() if unit}


def number_text(value: float) -> str:
    """4 significant digits (thousands grouped, no trailing zeros); rounding noise (below 1e-9 in size) as 0."""
    if abs(value) < 1e-9:
        return "0"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def summary_text(summary: dict[str, Any]) -> str:
    """The summary's scalar figures as `vcloud run` prints them: one per line, with their units."""
    rows = []
    for key, value in summary.items():
        if isinstance(value, dict | list):
            continue
        unit = (summary_entry(key) or ("", ""))[0]
        if isinstance(value, bool) or value is None or isinstance(value, str):
            shown = {True: "true", False: "false", None: "-"}.get(value, value) if not isinstance(value, str) else value
        else:
            shown = number_text(value) + (f" {unit}" if unit and unit not in ("count", "share") else "")
        rows.append((key, shown))
    width = max((len(k) for k, _ in rows), default=0)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def markdown() -> str:
    """docs/glossary.md."""
    lines = ["# Glossary: what a run writes", "",
             "Generated from `scenarios/glossary.py` (`python -m scenarios.glossary > docs/glossary.md`). Units: s "
             "(simulated seconds), MB, MB/s, MHz, vCPU-s (seconds of one vCPU), share (0 to 1), count, jobs/h. A run "
             "directory holds `summary.json`, `config.json` (what reruns it: `vcloud run --config`) and the tables "
             "below as Parquet, each with its units in the schema metadata (`vcloud.units`) and the package "
             "version and git commit that wrote it (`vcloud.provenance`).", ""]  # fmt: skip
    for table, columns in TABLES.items():
        lines += [f"## {table}.parquet", "", "| column | unit | meaning |", "|---|---|---|"]
        lines += [f"| `{c}` | {u} | {m} |" for c, (u, m) in columns.items()] + [""]
    lines += ["## summary.json", "",
              "The scalar figures are what `vcloud run` prints and a sweep's `results.parquet` has as columns (nested "
              "ones dotted). Hadoop scenarios keep the cloud's figures under `cloud.`; the papers' scenarios and trace "
              "replay add their own, listed after the FlexSlot ones (`*`: one entry per job, bin, window, queue or "
              "user).", "",
              "| field | unit | meaning |", "|---|---|---|"]  # fmt: skip
    lines += [f"| `{k}` | {u} | {m} |" for k, (u, m) in SUMMARY.items()]
    lines += ["", "## report.md and rows.json (`vcloud reproduce`)", "",
              "`vcloud reproduce --out DIR` writes DIR/report.md (a table, a PNG per row) and DIR/rows.json (the same "
              "rows for programs, with the report's configuration, date and commits); the results pages' current "
              "tables are generated from a full report's rows.json (docs/report-rows.json, "
              "`python -m scenarios.report_docs DIR`).", "",
              "| column | meaning |", "|---|---|"]  # fmt: skip
    lines += [f"| `{k}` | {m} |" for k, m in REPORT.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")

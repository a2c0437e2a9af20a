"""Every registry line builds through the command line, and the settings come from the registries."""

import json

import pytest

from policies.allocators import ALLOCATORS
from policies.registry import group_of
from policies.schedulers import SCHEDULERS
from policies.slots import SLOT_MANAGERS
from policies.speculation import SPECULATION
from scenarios.cli import main
from scenarios.hadoop_base import HadoopClusterSettings

REGISTRIES = {
    "allocator": ALLOCATORS,
    "scheduler": SCHEDULERS,
    "speculation": SPECULATION,
    "slot_manager": SLOT_MANAGERS,
}
OLD_NAME = "flexslot_policy.* is now flexslot.* (the old name still works, for now)"
TINY = ["input_gb=0.5", "slaves=4", "slow_nodes=1"]  # samr-heterogeneous: one small Sort job, well under a second


@pytest.mark.parametrize(("field", "name"), [(f, n) for f, registry in REGISTRIES.items() for n in registry])
def test_every_registry_key_runs_through_vcloud_run_set(tmp_path, field, name):
    out = tmp_path / "run"
    assert main(["run", "samr-heterogeneous", "--set", *TINY, f"{field}={name}", "--out", str(out), "--quiet"]) == 0
    settings = json.loads((out / "config.json").read_text())["settings"]
    assert settings[field] == name
    group = group_of(name, REGISTRIES[field][name])
    assert group is None or group in settings  # its knobs are a settings group named by the rule


def test_the_settings_offer_exactly_the_registries_choices_and_groups():
    fields = HadoopClusterSettings.model_fields
    for field, registry in REGISTRIES.items():
        assert fields[field].annotation.__args__ == tuple(registry)
        for name, entry in registry.items():
            if entry.settings is not None:
                assert fields[group_of(name, entry)].annotation is entry.settings


def test_an_old_group_name_still_works_with_a_one_line_warning(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "samr-heterogeneous", "--set", *TINY, "flexslot_policy.alpha=0.3", "--out", str(out),
                 "--quiet"]) == 0  # fmt: skip
    assert json.loads((out / "config.json").read_text())["settings"]["flexslot"]["alpha"] == 0.3
    warning = [line for line in capsys.readouterr().err.splitlines() if "flexslot_policy" in line]
    assert warning == [f"vcloud: warning: settings: {OLD_NAME}"]

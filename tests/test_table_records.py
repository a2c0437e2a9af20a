"""`vcloud.tables.columns` keeps each record's fields (a plain tuple, as kernels take a record) on its table and gives
them again only while they still view the table's columns: a grown, widened or reassigned column, another row count, a
copy or a pickle gets fresh ones."""

from __future__ import annotations

import copy
import pickle

import numpy as np

from vcloud.accounting import VMCounters
from vcloud.items import StreamColumns
from vcloud.pagecache import VMReads
from vcloud.tables import ItemTable, VMTable, columns


def _vms(n: int = 3) -> VMTable:
    vms = VMTable()
    for v in range(n):
        vms.append(host=v, vcpus=1, mem_mb=1024.0)
    return vms


def _views(record: type, fields: tuple, table: object, n: int | None) -> bool:
    """`fields` are the table's columns named as `record`'s fields, in order (their first `n` rows), writes going
    through."""
    assert type(fields) is tuple
    for name, field in zip(record._fields, fields, strict=True):
        col = getattr(table, name)
        if n is None:
            if field is not col:
                return False
        elif field.base is not col or field.size != n:
            return False
    return True


def test_the_same_record_while_nothing_changes():
    vms = _vms()
    whole = columns(VMCounters, vms)
    assert columns(VMCounters, vms) is whole
    assert _views(VMCounters, whole, vms, None)
    first = columns(VMReads, vms, vms.n)
    assert columns(VMReads, vms, vms.n) is first
    assert _views(VMReads, first, vms, vms.n)


def test_another_row_count_gives_a_fresh_record():
    vms = _vms()
    three = columns(VMReads, vms, 3)
    two = columns(VMReads, vms, 2)
    assert two is not three and _views(VMReads, two, vms, 2)


def test_a_grown_table_gives_a_fresh_record():
    vms = _vms(1)
    before = columns(VMReads, vms, vms.n)
    whole = columns(VMCounters, vms)
    for v in range(40):  # past the capacity: `_grow` replaces every column
        vms.append(host=v)
    after = columns(VMReads, vms, 1)
    assert after is not before and _views(VMReads, after, vms, 1)
    assert _views(VMCounters, columns(VMCounters, vms), vms, None) and columns(VMCounters, vms) is not whole


def test_a_widened_table_gives_a_fresh_record():
    items = ItemTable(4)
    items.add(None, vm=0)
    before = columns(StreamColumns, items)
    items.widen(3)  # replaces the wide columns only
    after = columns(StreamColumns, items)
    assert after is not before and _views(StreamColumns, after, items, None)
    assert StreamColumns(*after).stream_vm.shape[1] == 3


def test_a_reassigned_column_gives_a_fresh_record():
    vms = _vms()
    before = columns(VMReads, vms, vms.n)
    vms.cache_touched_mb = np.arange(len(vms.cache_touched_mb), dtype=np.float64)
    after = columns(VMReads, vms, vms.n)
    assert after is not before and _views(VMReads, after, vms, vms.n)
    assert VMReads(*after).cache_touched_mb.tolist() == [0.0, 1.0, 2.0]


def test_a_copied_or_pickled_table_gives_records_of_its_own_columns():
    vms = _vms()
    columns(VMReads, vms, vms.n)
    for other in (copy.deepcopy(vms), pickle.loads(pickle.dumps(vms))):
        record = columns(VMReads, other, other.n)
        assert _views(VMReads, record, other, other.n)
        VMReads(*record).read_disk_mb[0] = 7.0  # writes reach the copy's column, not the original's
        assert other.read_disk_mb[0] == 7.0 and vms.read_disk_mb[0] == 0.0
    shallow = copy.copy(vms)  # the same columns
    assert _views(VMReads, columns(VMReads, shallow, shallow.n), vms, vms.n)


def test_phase_views_write_the_item_columns_and_follow_growth():
    """`ItemTable.phase_views`: memoryviews of the columns a phase's load writes (the wide ones flat, row-major),
    made again once `_grow` or `widen` replaced the columns; `views_current` (an invariant) finds a column
    replaced otherwise."""
    items = ItemTable(2)
    items.add(None, vm=0)
    views = items.phase_views()
    assert items.phase_views() is views
    views.remaining[0] = 2.5
    views.stream_need[0 * items.width + 0] = 1.25
    assert items.remaining[0] == 2.5 and items.stream_need[0, 0] == 1.25
    items.widen(3)
    wide = items.phase_views()
    assert wide is not views and items.views_current()
    wide.stream_file[0 * 3 + 2] = 7
    assert items.stream_file[0].tolist() == [-1, -1, 7]
    for _ in range(5):  # past the capacity: `_grow` replaces every column
        items.add(None, vm=1)
    grown = items.phase_views()
    grown.open[4] = True
    assert grown is not wide and items.open[4] and items.views_current()
    items.remaining = items.remaining.copy()  # replaced, not grown: the kept views would write the old array
    assert not items.views_current()


def test_an_item_table_with_views_copies_and_pickles():
    items = ItemTable(2)
    items.add(None, vm=0)
    items.phase_views()
    for other in (copy.deepcopy(items), pickle.loads(pickle.dumps(items))):
        other.phase_views().remaining[0] = 3.0
        assert other.remaining[0] == 3.0 and items.remaining[0] == 0.0 and other.views_current()

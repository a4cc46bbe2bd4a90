"""The floor's read speed is measured once per machine (median of several passes) and kept in the user's cache
folder (issue 34, item 1): a second start reads it back instead of measuring again; a cache from another machine,
a broken file or ``remeasure`` measures again."""

from __future__ import annotations

import json

import pytest

from model import hardware


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """A cache folder of this test's own and a stand-in for the measurement that counts its calls and returns
    known passes (bytes/s): cache 10, 30, 20 GB/s (median 20), DRAM 4, 6, 5 GB/s (median 5)."""
    monkeypatch.setenv("ONE_TRIP_CACHE_DIR", str(tmp_path / "cache"))
    calls = []

    def fake(weight_bytes, threads, passes):
        calls.append((weight_bytes, threads, passes))
        return {"cache": [10e9, 30e9, 20e9], "dram": [4e9, 6e9, 5e9]}
    monkeypatch.setattr(hardware, "_measure_bandwidths", fake)
    monkeypatch.setattr(hardware, "cpu_snapshot", lambda: (0.0, 0.0, 0.0))  # a quiet machine
    return calls


def test_first_start_measures_the_median_of_passes_and_keeps_it(counted, tmp_path):
    f = hardware.decode_floors(17_400_000)
    assert len(counted) == 1 and counted[0][2] == hardware.FLOOR_PASSES >= 3
    assert f["source"] == "measured"
    assert f["cache_bandwidth_bytes_per_s"] == 20e9 and f["dram_bandwidth_bytes_per_s"] == 5e9  # medians, not best
    assert (tmp_path / "cache" / "read_speed.json").is_file()


def test_second_start_uses_the_cache_without_measuring(counted):
    first = hardware.decode_floors(17_400_000)
    second = hardware.decode_floors(17_400_000)
    assert len(counted) == 1  # no second measurement
    assert second["source"] == "cached"
    assert second["floor_ms"] == pytest.approx(first["floor_ms"])
    assert second["bandwidth_bytes_per_s"] == first["bandwidth_bytes_per_s"]


def test_remeasure_measures_again(counted):
    hardware.decode_floors(17_400_000)
    again = hardware.decode_floors(17_400_000, remeasure=True)
    assert len(counted) == 2 and again["source"] == "measured"


def test_another_machine_cache_is_not_trusted(counted, tmp_path):
    hardware.decode_floors(17_400_000)
    path = tmp_path / "cache" / "read_speed.json"
    data = json.loads(path.read_text())
    data["machine"]["cpu"] = "Some Other CPU"
    path.write_text(json.dumps(data))
    moved = hardware.decode_floors(17_400_000)
    assert len(counted) == 2 and moved["source"] == "measured"


@pytest.mark.parametrize("content", ["", "not json", "[1, 2]", '{"version": 1, "machine": null}'])
def test_broken_cache_is_measured_again(counted, tmp_path, content):
    path = tmp_path / "cache" / "read_speed.json"
    path.parent.mkdir(parents=True)
    path.write_text(content)
    f = hardware.decode_floors(17_400_000)
    assert len(counted) == 1 and f["source"] == "measured" and f["floor_ms"] > 0


def test_each_model_size_has_its_own_entry(counted):
    hardware.decode_floors(17_400_000)
    hardware.decode_floors(9_000_000)
    hardware.decode_floors(17_400_000)
    assert [c[0] for c in counted] == [17_400_000, 9_000_000]


def test_unwritable_cache_folder_still_gives_a_floor(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("ONE_TRIP_CACHE_DIR", str(blocker / "sub"))  # a folder under a file cannot be made
    monkeypatch.setattr(hardware, "_measure_bandwidths", lambda w, t, p: {"cache": [8e9], "dram": [4e9]})
    f = hardware.decode_floors(17_400_000)
    assert f["source"] == "measured" and f["cache_bandwidth_bytes_per_s"] == 8e9


def test_engine_service_second_start_does_not_measure(counted, tiny_model_dir, tmp_path):
    from model.service import EngineService
    options = {"model_dir": str(tiny_model_dir), "threads": 1, "max_batch": 1, "layer_timing": False,
               "draft_model_dir": str(tmp_path / "no-draft")}
    first = EngineService(options, lambda e: None)
    second = EngineService(options, lambda e: None)
    assert len(counted) == 1
    assert second.floor["source"] == "cached" and second.bandwidth == first.bandwidth
    third = EngineService({**options, "remeasure_floor": True}, lambda e: None)
    assert len(counted) == 2 and third.floor["source"] == "measured"


def test_a_busy_measurement_is_kept_until_a_start_finds_the_machine_quiet(counted, monkeypatch):
    """Other programs kept 60 % of the cores busy during the measurement: it is kept, marked busy; a start while
    they still run reads it back (measuring beside them again would be no truer, and costs each start 1-3 s); the
    first start that finds the machine quiet measures again, and that measurement then stays."""
    busy = iter([(100.0, 1000.0, 5.0), (106.5, 1010.0, 5.5)])  # others: 6.5 - 0.5 = 6 of 10 core-seconds
    monkeypatch.setattr(hardware, "cpu_snapshot", lambda: next(busy))
    first = hardware.read_speeds(17_400_000)
    assert first["source"] == "measured" and first["busy"] is True
    assert first["others_busy_share"] == pytest.approx(0.6)
    still = iter([(0.0, 0.0, 0.0), (1.0, 2.0, 0.0)])  # the start's look: others keep half of the cores busy
    monkeypatch.setattr(hardware, "cpu_snapshot", lambda: next(still))
    assert hardware.read_speeds(17_400_000)["source"] == "cached" and len(counted) == 1
    monkeypatch.setattr(hardware, "cpu_snapshot", lambda: (0.0, 0.0, 0.0))  # quiet now
    again = hardware.read_speeds(17_400_000)
    assert again["source"] == "measured" and again["busy"] is False and len(counted) == 2
    assert hardware.read_speeds(17_400_000)["source"] == "cached" and len(counted) == 2


def test_others_busy_share_counts_only_other_processes():
    # all cores: 4 busy of 10 core-seconds; this process used 3 of them: others 1 of 10
    assert hardware.others_busy_share((0.0, 0.0, 0.0), (4.0, 10.0, 3.0)) == pytest.approx(0.1)
    assert hardware.others_busy_share((0.0, 5.0, 0.0), (0.0, 5.0, 0.0)) == 0.0  # no time passed
    real = hardware.others_busy_share(hardware.cpu_snapshot(), hardware.cpu_snapshot())
    assert 0.0 <= real <= 1.0

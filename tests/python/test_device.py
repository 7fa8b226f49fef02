"""Images that stay on the device: DeviceImage round trips and chains equal to the numpy path bit
for bit for every dtype, pyopencl arrays in both directions of context sharing, the errors of
misuse, and calls from several threads at once. Run by ctest (the `python` test)."""

import concurrent.futures as futures
import importlib
import os

import numpy as np
import pytest

import clfilter

DTYPES = [np.uint8, np.uint16, np.float16, np.float32]
CHAINS = [["gaussian:sigma=1.5", "sobel"], ["median:ksize=3", "box:radius=2,border=wrap"],
          ["laplacian"], ["bilateral:d=5,sigma_color=30,sigma_space=2"]]


def optional(module):
    """pyopencl is on every machine scripts/setup.sh prepared (a missing one fails); only the GPU
    machine, recognised by its carried photographs, may lack it, and there its tests are skipped."""
    if "CLF_PHOTOS" in os.environ:
        return pytest.importorskip(module)
    return importlib.import_module(module)


def image(shape, dtype, seed=1):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "u":
        return rng.integers(0, np.iinfo(dtype).max, shape, endpoint=True).astype(dtype)
    return (rng.random(shape) * 4 - 1).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(45, 61), (45, 61, 3)])
def test_device_image_round_trips_and_chains_equal_the_numpy_path(dtype, shape):
    host = image(shape, dtype)
    on_device = clfilter.to_device(host)
    assert on_device.shape == shape and on_device.dtype == np.dtype(dtype)
    assert on_device.nbytes == host.nbytes
    assert on_device.device == clfilter.Pipeline("sobel").device
    assert np.array_equal(on_device.get(), host)  # bits, NaN-free inputs
    for chain in CHAINS:
        pipeline = clfilter.Pipeline(chain)
        result = pipeline(on_device)
        assert isinstance(result, clfilter.DeviceImage)
        assert pipeline.stats()["bytes_uploaded"] == 0
        assert pipeline.stats()["bytes_downloaded"] == 0
        expect = pipeline(host)
        got = result.get()
        assert got.dtype == expect.dtype and got.shape == expect.shape
        assert got.tobytes() == expect.tobytes(), chain
        # One filter after another, each result kept on the device, equals the same steps
        # through numpy (each step stores its pixel type, as a fused chain does not).
        on_host, stepwise = host, on_device
        for spec in chain:
            on_host, stepwise = clfilter.filter(on_host, spec), clfilter.filter(stepwise, spec)
        assert stepwise.get().tobytes() == on_host.tobytes()
    assert np.array_equal(on_device.get(), host)  # the input is only read


def test_device_image_out_is_written_in_place_and_get_fills_an_array():
    host = image((30, 40, 2), np.uint16, 3)
    pipeline = clfilter.Pipeline("gaussian:sigma=2")
    source, target = clfilter.to_device(host), clfilter.to_device(np.zeros_like(host))
    returned = pipeline(source, out=target)
    assert returned.get().tobytes() == target.get().tobytes() == pipeline(host).tobytes()
    into = np.empty_like(host)
    assert target.get(out=into) is into
    assert np.array_equal(into, pipeline(host))
    # Other real types go as float32, as the Pipeline filters them.
    doubles = clfilter.to_device(host.astype(np.float64))
    assert doubles.dtype == np.float32
    assert np.array_equal(doubles.get(), host.astype(np.float32))


def test_device_image_misuse_is_refused_by_name():
    host = image((20, 24), np.float32)
    on_device = clfilter.to_device(host)
    with pytest.raises(ValueError, match="shape"):
        on_device.get(out=np.empty((20, 25), np.float32))
    with pytest.raises(ValueError, match="dtype"):
        on_device.get(out=np.empty((20, 24), np.float64))
    with pytest.raises(TypeError, match="out for a DeviceImage"):
        clfilter.Pipeline("sobel")(on_device, out=np.empty_like(host))
    with pytest.raises(TypeError, match="numpy array"):
        clfilter.to_device("not an image")
    with pytest.raises(ValueError, match="one device"):
        clfilter.to_device(host, device="cpu,cpu")
    with pytest.raises(ValueError, match="pipeline of one device"):
        clfilter.Pipeline("sobel", device="cpu,cpu")(on_device)
    released = clfilter.to_device(host)
    released.release()
    for use in (released.get, lambda: clfilter.Pipeline("sobel")(released),
                lambda: released.shape and released.dtype):
        with pytest.raises(ValueError, match="released"):
            use()
    assert "released" in repr(released)


def test_selectors_of_one_device_share_its_images():
    # "", "cpu"/"gpu" and "P:D" naming the same device give one context: images meet pipelines.
    host = image((16, 18), np.uint8)
    device = clfilter.Pipeline("sobel").device
    ident = device.split(" ")[0]
    on_device = clfilter.to_device(host, device=ident)
    assert clfilter.Pipeline("sobel")(on_device).get().tobytes() == \
        clfilter.filter(host, "sobel").tobytes()


def test_pyopencl_arrays_go_through_without_a_host_copy_in_either_context():
    cl = optional("pyopencl")
    cl_array = importlib.import_module("pyopencl.array")
    host = image((37, 29, 3), np.uint8, 5)
    expect = clfilter.filter(host, ["gaussian:sigma=2", "sobel"])
    # Arrays in clfilter's context.
    queue = cl.CommandQueue(clfilter.pyopencl_context())
    on_device = cl_array.to_device(queue, host)
    pipeline = clfilter.Pipeline(["gaussian:sigma=2", "sobel"])
    result = pipeline(on_device)
    assert isinstance(result, cl_array.Array) and result.queue is queue
    assert result.get().tobytes() == expect.tobytes()
    assert pipeline.stats()["bytes_uploaded"] == 0 and pipeline.stats()["bytes_downloaded"] == 0
    # clfilter on the user's own context; an input at an offset, a given output.
    theirs = cl.CommandQueue(cl.Context([queue.device]))
    big = cl_array.to_device(theirs, np.concatenate([host, host[::-1]]))
    lower = big[37:]
    assert lower.offset > 0
    mine = clfilter.Pipeline(["gaussian:sigma=2", "sobel"], device=theirs)
    out = cl_array.empty(theirs, host.shape, np.uint8)
    assert mine(lower, out=out) is out
    assert out.get().tobytes() == clfilter.filter(host[::-1].copy(),
                                                  ["gaussian:sigma=2", "sobel"]).tobytes()
    with pytest.raises(ValueError, match="another OpenCL context"):
        pipeline(big)
    with pytest.raises(ValueError, match="shares memory"):
        mine(big[:37], out=big[10:47])
    with pytest.raises(TypeError, match="pyopencl arrays of uint8"):
        mine(cl_array.to_device(theirs, host.astype(np.float64)))
    with pytest.raises(ValueError, match="C-contiguous"):
        mine(big[:, ::2])


def test_calls_from_threads_at_once_equal_the_calls_alone():
    inputs = [image((96, 80, 3), np.uint8, seed) for seed in range(8)]
    chain = ["gaussian:sigma=2", "sobel"]
    alone = [clfilter.filter(a, chain).tobytes() for a in inputs]

    def host_call(a):
        return clfilter.filter(a, chain).tobytes()

    def device_call(a):
        return clfilter.Pipeline(chain)(clfilter.to_device(a)).get().tobytes()

    with futures.ThreadPoolExecutor(4) as pool:
        for call in (host_call, device_call):
            assert list(pool.map(call, inputs * 3)) == alone * 3


def test_without_a_writable_cache_home_pocl_gets_a_private_temporary_one(tmp_path):
    """PoCL offers no device when it cannot make its kernel cache; the module points it at
    TMPDIR/clfilter-pocl-UID before its first OpenCL call. XDG_CACHE_HOME is a file here: no one
    can make it a directory, root included."""
    import subprocess
    import sys
    blocked = tmp_path / "not_a_directory"
    blocked.write_text("a file")
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "POCL_CACHE_DIR")}
    env.update(XDG_CACHE_HOME=str(blocked), TMPDIR=str(tmp_path), CLF_DEVICE="cpu")
    script = ("import clfilter, numpy as np\n"
              "print(clfilter.filter(np.arange(64, dtype=np.float32).reshape(8, 8), 'box').shape)\n")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    own = tmp_path / ("clfilter-pocl-%d" % os.getuid())
    assert done.stdout.split() == ["(8,", "8)"]
    assert own.is_dir() and (own.stat().st_mode & 0o777) == 0o700
    assert any(own.iterdir())  # PoCL's cache, there


def test_tune_keeps_the_winners_for_later_runs_and_stops_when_progress_raises(tmp_path):
    """clfilter.tune as ``clfilter --tune -f ...``: every family measured, the chain named in the
    tuned file, which a later process opens the device with; a filter it lacks is refused by name;
    what progress raises stops the run and keeps nothing. In a process of its own, whose cache
    directory is tmp_path: the tuned file must not reach the user's."""
    import subprocess
    import sys
    # PoCL's kernel cache stays where it was: the run compiles what earlier tests did not.
    pocl = os.environ.get("POCL_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pocl")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), CLF_DEVICE="cpu", POCL_CACHE_DIR=pocl)
    script = """
import json, os, clfilter
lines = []
run = clfilter.tune(filters=["gaussian:sigma=2", "sobel"], sizes=[(64, 48)], progress=lines.append)
text = open(run["file"]).read()
try:
    clfilter.tune(filters="no_such_filter", sizes=[(64, 48)])
    refused = ""
except ValueError as e:
    refused = str(e)
os.remove(run["file"])
def stop(line):
    raise RuntimeError("stopped at " + line)
try:
    clfilter.tune(sizes=[(64, 48)], progress=stop)
    stopped = ""
except RuntimeError as e:
    stopped = str(e)
print(json.dumps(dict(run=run, lines=lines, text=text, refused=refused, stopped=stopped,
                      kept=os.path.exists(run["file"]))))
"""
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    import json
    got = json.loads(done.stdout.splitlines()[-1])
    run = got["run"]
    assert run["file"].startswith(str(tmp_path))
    names = [f["family"] for f in run["families"]]
    assert names[0] == "window" and "separable" in names
    for family in run["families"]:
        assert family["chosen_ms"] > 0 and family["chosen_ms"] <= family["database_ms"]
        assert family["summary"].startswith(family["family"] + ": ")
    assert any(line.startswith("window 0/") for line in got["lines"])
    assert "the chain gaussian:sigma=2 + sobel at 64x48." in got["text"]
    assert "no_such_filter" in got["refused"]
    assert got["stopped"].startswith("stopped at window")
    assert not got["kept"]

"""clfilter.filter_files: the command line's batch engine from Python (cli/batch.hpp), against the
command line's own outputs, with bad files among good ones, and Ctrl-C."""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import cv2
import numpy as np
import pytest

import clfilter
from test_clfilter import photos

CLI = os.environ.get("CLF_TEST_CLI", "")
if not hasattr(clfilter._clfilter, "filter_files"):
    pytest.skip("this build has no image-file layer (the command line is not built)",
                allow_module_level=True)

CHAIN = ["gaussian:sigma=2", "sobel:border=wrap"]


def write_inputs(folder):
    """Photographs as JPEG (libjpeg-turbo alone), PNG, TIFF and 16-bit PNG (OpenImageIO)."""
    folder.mkdir()
    names = []
    for title, photo in [("astronaut", photos.astronaut()), ("coffee", photos.coffee()),
                         ("camera", photos.camera())]:
        bgr = photo[..., ::-1] if photo.ndim == 3 else photo
        for ext, image in [("jpg", bgr), ("png", bgr), ("tif", bgr),
                           ("u16.png", bgr.astype(np.uint16) * 257)]:
            names.append(folder / ("%s.%s" % (title, ext)))
            assert cv2.imwrite(str(names[-1]), image)
    return names


def test_outputs_equal_the_command_lines_and_come_back_in_order(tmp_path):
    if not CLI:
        pytest.skip("CLF_TEST_CLI (the command line to compare with) is not set")
    inputs = write_inputs(tmp_path / "in")
    (tmp_path / "py").mkdir()
    (tmp_path / "cli").mkdir()
    results = clfilter.filter_files(inputs, tmp_path / "py", CHAIN, jobs=2)
    subprocess.run([CLI, *map(str, inputs), "--output-dir", str(tmp_path / "cli"), "-q", "-f",
                    CHAIN[0], "-f", CHAIN[1]], check=True)
    assert [r["input"] for r in results] == [str(p) for p in inputs]
    for path, result in zip(inputs, results):
        assert result["written"] and result["error"] is None, result
        assert result["output"] == str(tmp_path / "py" / path.name)
        mine = (tmp_path / "py" / path.name).read_bytes()
        theirs = (tmp_path / "cli" / path.name).read_bytes()
        if path.suffix == ".tif":  # OpenImageIO stamps the TIFF's DateTime as it writes
            read = lambda data: cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
            np.testing.assert_array_equal(read(mine), read(theirs))
        else:
            assert mine == theirs, path.name
    assert results[0]["format"] == "512x512, 3 channels, u8"
    assert results[3]["format"] == "512x512, 3 channels, u16"


def test_a_bad_file_among_good_ones_is_reported_and_the_others_are_written(tmp_path):
    inputs = write_inputs(tmp_path / "in")[:4]
    bad = tmp_path / "in" / "broken.png"
    bad.write_bytes(b"not a png at all")
    truncated = tmp_path / "in" / "truncated.jpg"
    truncated.write_bytes(inputs[0].read_bytes()[:3000])
    out = tmp_path / "out"
    out.mkdir()
    (out / "broken.png").write_bytes(b"the previous output")
    results = clfilter.filter_files([bad, *inputs, truncated], out, CHAIN)
    assert results[0]["error"] == "cannot read '%s': Not a PNG file" % bad
    assert not results[0]["written"]
    assert (out / "broken.png").read_bytes() == b"the previous output"
    assert str(truncated) in results[-1]["error"] and not results[-1]["written"]
    assert not (out / "truncated.jpg").exists()
    assert all(r["written"] for r in results[1:-1])
    assert not [p for p in os.listdir(out) if p.startswith(".clfilter-")]


def test_bad_arguments_are_named_before_any_file_opens(tmp_path):
    inputs = write_inputs(tmp_path / "in")[:2]
    with pytest.raises(ValueError, match="unknown filter 'blur'"):
        clfilter.filter_files(inputs, tmp_path, "blur")
    with pytest.raises(ValueError, match="gaussian: sigma"):
        clfilter.filter_files(inputs, tmp_path, "gaussian:sigma=-1")
    with pytest.raises(ValueError, match="is given twice"):
        clfilter.filter_files([inputs[0], inputs[0]], tmp_path, "box")
    twin = tmp_path / "twin" / os.path.basename(inputs[0])
    twin.parent.mkdir()
    shutil.copy(inputs[0], twin)
    with pytest.raises(ValueError, match="would both be written to"):
        clfilter.filter_files([inputs[0], twin], tmp_path, "box")
    with pytest.raises(ValueError, match="'%s' is a directory: give the files in it" % twin.parent):
        clfilter.filter_files([twin.parent], tmp_path / "out", "box")
    with pytest.raises(ValueError, match="io is 'auto' or 'oiio'"):
        clfilter.filter_files(inputs, tmp_path, "box", io="pil")
    with pytest.raises(ValueError, match="output_dir '%s' is a file, not a directory" % inputs[0]):
        clfilter.filter_files(inputs[1:], inputs[0], "box")
    with pytest.raises(RuntimeError, match="cannot write '.*x.unknown': no format OpenImageIO "
                       "writes is named '.unknown'"):
        clfilter.filter_files([tmp_path / "x.unknown"], tmp_path / "out", "box")
    assert clfilter.filter_files([], tmp_path, "box") == []


def test_type_writes_the_pixel_type_asked_for_and_refuses_what_a_format_cannot_hold(tmp_path):
    inputs = write_inputs(tmp_path / "in")
    png, jpg = inputs[1], inputs[0]  # the astronaut as PNG and JPEG, u8
    results = clfilter.filter_files([png], tmp_path / "out", "box", type="u16")
    assert results[0]["written"] and results[0]["format"] == "512x512, 3 channels, u16", results
    assert cv2.imread(str(tmp_path / "out" / png.name), cv2.IMREAD_UNCHANGED).dtype == np.uint16
    refused = clfilter.filter_files([jpg], tmp_path / "out", "box", type="u16")[0]
    assert not refused["written"] and "the jpeg format does not hold u16 pixels" in refused["error"]
    assert not (tmp_path / "out" / jpg.name).exists()
    with pytest.raises(ValueError, match="type is one of u8 u16 f16 f32 \\(got 'u32'\\)"):
        clfilter.filter_files([png], tmp_path / "out", "box", type="u32")


def test_a_missing_output_dir_is_created_as_the_command_line_creates_it(tmp_path):
    inputs = write_inputs(tmp_path / "in")[:2]
    results = clfilter.filter_files(inputs, tmp_path / "new" / "folder", "box")
    assert [r["written"] for r in results] == [True, True]
    assert sorted(os.listdir(tmp_path / "new" / "folder")) == sorted(p.name for p in inputs)
    assert clfilter.filter_files([], tmp_path, "box") == []


def test_ctrl_c_stops_the_batch_and_leaves_unfinished_outputs_as_they_were(tmp_path):
    # A child process runs a long batch on one job thread; once its first output is in place it
    # gets SIGINT (an event, not a delay). Every output is then either the previous content or
    # whole, and no temporary file is left.
    folder = tmp_path / "in"
    folder.mkdir()
    frame = cv2.resize(photos.astronaut(), (1920, 1080))
    inputs = []
    for i in range(60):
        inputs.append(folder / ("frame%02d.png" % i))
        cv2.imwrite(str(inputs[-1]), np.roll(frame, i, axis=1))
    out = tmp_path / "out"
    out.mkdir()
    for path in inputs:
        (out / path.name).write_bytes(b"the previous output")
    script = textwrap.dedent("""
        import sys, clfilter
        try:
            clfilter.filter_files(sys.argv[2:], sys.argv[1], ["gaussian:sigma=6", "sobel"], jobs=1)
        except KeyboardInterrupt as e:
            print("interrupted:", e)
            sys.exit(130)
        """)
    child = subprocess.Popen([sys.executable, "-c", script, str(out), *map(str, inputs)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while all((out / p.name).read_bytes() == b"the previous output" for p in inputs[:1]):
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()
        time.sleep(0.01)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 130, (stdout, stderr)
    assert "interrupted after" in stdout
    kept = 0
    for path in inputs:
        data = (out / path.name).read_bytes()
        if data == b"the previous output":
            kept += 1
        else:
            assert cv2.imread(str(out / path.name)).shape == (1080, 1920, 3), path.name
    assert kept > 0
    assert not [p for p in os.listdir(out) if p.startswith(".clfilter-")]

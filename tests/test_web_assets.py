"""_ext/web_assets.py installs each package of package.json as package-lock.json pins it,
and refuses a tarball that is not the pinned one. npm is replaced by a script that "packs"
tarballs made here, so the test needs no registry; the last test checks the real lock file.
"""

import base64
import hashlib
import io
import json
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
import web_assets  # noqa: E402

FAKE_NPM = """#!{python}
import json, shutil, sys
dest = sys.argv[sys.argv.index("--pack-destination") + 1]
made = json.load(open({made!r}))
out = []
for spec in sys.argv[sys.argv.index(dest) + 1:]:
    name, version = spec.rsplit("@", 1)
    shutil.copy(made[name], dest)
    out.append({{"name": name, "version": version, "filename": made[name].split("/")[-1]}})
print(json.dumps(out))
"""


def tarball(path, files):
    """An npm-style tarball: every file under the folder package/."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


@pytest.fixture
def project(tmp_path):
    """A project pinning two packages, and an npm that packs the tarballs made here."""
    made, lock = {}, {"node_modules/@scope/a": {}, "node_modules/b": {}}
    for name, files in {"@scope/a": {"a.js": b"A", "sub/x.css": b"X"},
                        "b": {"b.js": b"B"}}.items():
        path = tmp_path / (name.replace("/", "-").lstrip("@") + "-1.0.0.tgz")
        lock[f"node_modules/{name}"] = {"version": "1.0.0", "integrity": tarball(path, files)}
        made[name] = str(path)
    (tmp_path / "made.json").write_text(json.dumps(made))
    (tmp_path / "package.json").write_text(json.dumps(
        {"dependencies": {"@scope/a": "1.0.0", "b": "1.0.0"}}))
    (tmp_path / "package-lock.json").write_text(json.dumps({"packages": lock}))
    npm = tmp_path / "npm"
    npm.write_text(FAKE_NPM.format(python=sys.executable, made=str(tmp_path / "made.json")))
    npm.chmod(0o755)
    return tmp_path, npm


def test_installs_each_package_without_its_top_folder(project):
    root, npm = project
    web_assets.install(str(npm), root)
    assert (root / "node_modules/@scope/a/a.js").read_bytes() == b"A"
    assert (root / "node_modules/@scope/a/sub/x.css").read_bytes() == b"X"
    assert (root / "node_modules/b/b.js").read_bytes() == b"B"
    assert not (root / "node_modules/b/package").exists()


def test_a_tarball_that_is_not_the_pinned_one_is_refused(project):
    root, npm = project
    made = json.loads((root / "made.json").read_text())
    tarball(Path(made["b"]), {"b.js": b"something else"})
    with pytest.raises(SystemExit, match=r"^b: npm gave version 1\.0\.0, sha512-.*pins 1\.0\.0"):
        web_assets.install(str(npm), root)


def test_a_path_leaving_the_package_is_refused(tmp_path):
    tarball(tmp_path / "bad.tgz", {"../outside.js": b"X"})
    with pytest.raises(SystemExit, match=r"refusing 'package/\.\./outside\.js'"):
        web_assets.unpack(tmp_path / "bad.tgz", tmp_path / "node_modules" / "bad")
    assert not (tmp_path / "node_modules" / "outside.js").exists()


def test_a_dependency_the_lock_does_not_pin_is_refused(project):
    root, npm = project
    (root / "package.json").write_text(json.dumps({"dependencies": {"b": "2.0.0"}}))
    with pytest.raises(SystemExit, match="package-lock.json does not pin b 2.0.0"):
        web_assets.install(str(npm), root)


def test_the_lock_pins_every_package_of_package_json():
    wanted = set(json.loads((ROOT / "package.json").read_text())["dependencies"])
    assert set(web_assets.pinned()) - {f"@esbuild/{'-'.join(web_assets.node_platform())}"} \
        == wanted


def test_the_build_of_a_per_platform_package_for_this_machine_is_chosen():
    entry = {"optionalDependencies": {"@e/linux-x64": "1.0.0", "@e/darwin-arm64": "1.0.0"}}
    locked = {"node_modules/@e/linux-x64": {"version": "1.0.0", "integrity": "sha512-L",
                                            "os": ["linux"], "cpu": ["x64"]},
              "node_modules/@e/darwin-arm64": {"version": "1.0.0", "integrity": "sha512-D",
                                               "os": ["darwin"], "cpu": ["arm64"]}}
    assert web_assets.platform_package("e", entry, locked, ("darwin", "arm64")) == {
        "@e/darwin-arm64": ("1.0.0", "sha512-D")}
    assert web_assets.platform_package("e", entry, locked, ("linux", "x64")) == {
        "@e/linux-x64": ("1.0.0", "sha512-L")}
    with pytest.raises(SystemExit, match=r"e: package-lock.json pins no build for this "
                                         r"machine \(linux-riscv64; builds: @e/darwin-arm64"):
        web_assets.platform_package("e", entry, locked, ("linux", "riscv64"))
    assert web_assets.platform_package("b", {}, locked) == {}


def test_the_lock_pins_esbuild_for_this_machine():
    # esbuild's program comes from its package for this platform (make viewer runs it)
    found = web_assets.pinned()
    system, cpu = web_assets.node_platform()
    assert found[f"@esbuild/{system}-{cpu}"][0] == found["esbuild"][0]


@pytest.mark.book          # needs esbuild and three in node_modules/ (make offline, which
def test_the_committed_viewer_bundle_is_a_fresh_bundle_of_viewer(tmp_path):   # make test
    # runs before its `book` tests)
    # rbdlearn/viz/rbd3d.js is what `make viewer` makes of viewer/rbd3d.js and the pinned
    # three.js: a change to viewer/ without `make viewer` (or a hand edit) fails here
    if not web_assets.esbuild().is_file() or not (ROOT / "node_modules/three").is_dir():
        pytest.skip("node_modules lacks esbuild or three (make offline installs them)")
    web_assets.bundle_viewer(tmp_path / "rbd3d.js")
    fresh = (tmp_path / "rbd3d.js").read_bytes()
    assert fresh.startswith(b"/**\n * @license\n * Copyright 2010-2026 Three.js Authors")
    assert fresh == (ROOT / "rbdlearn/viz/rbd3d.js").read_bytes(), "run make viewer"


def test_the_viewer_bundle_is_package_data():
    import tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "viz/rbd3d.js" in data["tool"]["setuptools"]["package-data"]["rbdlearn"]

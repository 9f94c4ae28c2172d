"""Install the book's web assets into node_modules/: each package that package.json names,
exactly as package-lock.json pins it (version and sha512 integrity), without the packages
it depends on.

The book serves only files these packages ship ready-built: MathJax 4 and its font, the
widget manager's bundle (embed.js, which has its dependencies inside) and the Noto Sans JP
slices. `npm ci` would also install the 130 packages that the widget
manager's sources import (15,400 files, 280 MB): 23 s of CPU on a two-core machine, against
7 s for the four tarballs here. npm still fetches them (`npm pack`, through its cache and
the configured registry); this script checks each against the lock file and unpacks it.

    python _ext/web_assets.py [--npm NPM] [--root ROOT]
"""

import argparse
import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]


def pinned(root=ROOT):
    """{name: (version, integrity)} for each dependency of package.json, from the lock."""
    wanted = json.loads((root / "package.json").read_text(encoding="utf-8"))["dependencies"]
    locked = json.loads((root / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    found = {}
    for name, version in wanted.items():
        entry = locked.get(f"node_modules/{name}", {})
        if entry.get("version") != version or not entry.get("integrity", "").startswith(
                "sha512-"):
            sys.exit(f"package-lock.json does not pin {name} {version} with a sha512 "
                     f"integrity (found {entry or 'nothing'}): run `npm install`")
        found[name] = (version, entry["integrity"])
    return found


def sha512(path):
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def unpack(tarball, target):
    """The tarball's files and folders into ``target`` (npm packs them under one top folder,
    dropped); anything else (a link, a path leaving the folder) is refused."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        members = []
        for member in tar.getmembers():
            rest = PurePosixPath(member.name.partition("/")[2])
            if not (member.isfile() or member.isdir()) or rest.is_absolute() or \
                    ".." in rest.parts:
                sys.exit(f"{tarball.name}: refusing {member.name!r} (not a plain file or "
                         f"folder inside the package)")
            if rest.parts:
                member.name = str(rest)
                members.append(member)
        # the "data" filter also drops modes and owners where this Python has it (3.11.4+)
        tar.extractall(target, members=members,
                       **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))


def install(npm="npm", root=ROOT):
    packages = pinned(root)
    with tempfile.TemporaryDirectory() as tmp:
        specs = [f"{name}@{version}" for name, (version, _) in packages.items()]
        out = subprocess.run([npm, "pack", "--json", "--ignore-scripts", "--pack-destination",
                              tmp, *specs], capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"npm pack {' '.join(specs)} failed:\n{out.stderr}")
        for packed in json.loads(out.stdout):
            version, integrity = packages.pop(packed["name"])
            tarball = Path(tmp) / packed["filename"]
            if packed["version"] != version or sha512(tarball) != integrity:
                sys.exit(f"{packed['name']}: npm gave version {packed['version']}, "
                         f"{sha512(tarball)}; package-lock.json pins {version}, {integrity}")
            unpack(tarball, root / "node_modules" / packed["name"])
    if packages:
        sys.exit(f"npm pack returned no tarball for {sorted(packages)}")
    print(f"{len(specs)} packages of package.json in node_modules/, checked against "
          f"package-lock.json")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--npm", default="npm")
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args()
    install(args.npm, args.root)

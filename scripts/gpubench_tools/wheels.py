"""Folders of NVIDIA's PyPI wheels (CUDA 12 headers, ptxas, CCCL) for the CUDA 12 checks:
downloaded with pip into a cache and unpacked once."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path


def wheel_folder(cache: Path, spec: str, prefix: str, target: Path) -> str | None:
    """Unpacks the members under `prefix` of the wheel `spec` (name==version, downloaded into
    cache/wheels when not there yet) into `target`, executables keeping their mode. Returns None,
    or why it could not (one line)."""
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    name, version = spec.split("==")
    pattern = f"{name.replace('-', '_')}-{version}-*.whl"
    if not any(wheels.glob(pattern)):
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                            "--disable-pip-version-check", "-d", str(wheels), spec], capture_output=True, text=True)
        if r.returncode != 0:
            return f"cannot download {spec}: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    found = sorted(wheels.glob(pattern))
    if not found:
        return f"no wheel for {spec} in {wheels}"
    with zipfile.ZipFile(found[-1]) as z:
        for info in z.infolist():
            if info.filename.startswith(prefix) and not info.is_dir():
                out = target / info.filename[len(prefix):]
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(z.read(info))
                mode = (info.external_attr >> 16) & 0o777
                if mode & 0o111:
                    out.chmod(mode)
    return None


def unpacked_once(cache: Path, folder: str, wheels: dict[str, str], keep_wheels: bool = True) -> Path | str:
    """cache/folder holding the members under each wheel's prefix (`wheels`: name==version ->
    prefix), merged, unpacked only the first time (a stamp cache/folder.ok says it is whole);
    keep_wheels=False deletes each wheel file once unpacked (the cuBLAS ones are 0.4-0.6 GB for a
    few headers). Returns the folder, or why it could not be had (one line)."""
    target = cache / folder
    done = cache / f"{folder}.ok"
    if done.exists():
        return target
    for spec, prefix in wheels.items():
        why = wheel_folder(cache, spec, prefix, target)
        if why:
            return why
        if not keep_wheels:
            name, version = spec.split("==")
            for wheel in (cache / "wheels").glob(f"{name.replace('-', '_')}-{version}-*.whl"):
                wheel.unlink()
    done.write_text("ok\n")
    return target

"""`lancelot container base`: a base image for the Dockerfile, made here from Debian packages.

The Dockerfile's default base (`python:3.11-slim`) comes from an image registry. Where none
is reachable (CI here), this makes an equivalent one by the sandbox image's route
(`core/tools/sandbox/debian.py`): Debian bookworm's Python 3.11 with venv and pip, then
`docker build --build-arg BASE=lancelot-python:3.11-bookworm .`.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from core.errors import ToolFailed, ToolUnavailable
from core.tools.sandbox import DockerEngine
from core.tools.sandbox.debian import DebianImage, build_debian_image, exists
from core.tools.sandbox.image import this_command

BASE_IMAGE = "lancelot-python:3.11-bookworm"
# CAs this machine's owner added (a TLS-inspecting proxy's, a company's), the Debian way.
LOCAL_CAS = Path("/usr/local/share/ca-certificates")
BUNDLE = "etc/ssl/certs/ca-certificates.crt"


def trust_local_cas(rootfs: Path, local_cas: Path = LOCAL_CAS) -> None:
    """Give the image the CAs this machine trusts beyond Debian's own, so pip inside a build
    reaches PyPI wherever this machine does; on most machines there are none."""
    added = sorted(local_cas.glob("*.crt")) if local_cas.is_dir() else []
    if not added:
        return
    target = rootfs / local_cas.relative_to("/")
    target.mkdir(parents=True, exist_ok=True)
    with (rootfs / BUNDLE).open("a") as bundle:
        for cert in added:
            shutil.copyfile(cert, target / cert.name)
            bundle.write(cert.read_text().rstrip("\n") + "\n")


BASE = DebianImage(
    # python3-distutils: what python3.11-venv needs, which debootstrap does not resolve by
    # itself (a virtual package); passwd: the Dockerfile adds its user with useradd.
    packages=("python3.11", "python3.11-venv", "python3-distutils", "ca-certificates", "passwd"),
    prepare=trust_local_cas,
    changes=(
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "
        f"PIP_CERT=/{BUNDLE}",  # pip's own CA list would not have the local ones
        'CMD ["python3.11"]',
    ),
)


def build_base(*, force: bool, mirror: str | None) -> int:
    """`lancelot container base`: build the base image if missing; print what happened."""
    engine = DockerEngine()
    try:
        if force or not exists(engine, BASE_IMAGE):
            print(f"building {BASE_IMAGE} from Debian packages (a few minutes)...", file=sys.stderr)
        report = build_debian_image(
            engine,
            BASE_IMAGE,
            BASE,
            as_root=f"sudo {this_command()} container base",
            mirror=mirror,
            force=force,
        )
    except (ToolFailed, ToolUnavailable) as exc:
        print(f"lancelot: container base failed: {exc}", file=sys.stderr)
        return 1
    finally:
        engine.close()
    if report.skipped:
        print(f"{BASE_IMAGE} already exists (use --force to rebuild)")
    else:
        print(f"built {BASE_IMAGE} in {report.seconds:.0f} s")
    print(f"then: docker build --build-arg BASE={BASE_IMAGE} -t lancelot .")
    return 0

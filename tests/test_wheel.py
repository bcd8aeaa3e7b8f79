"""The wheel carries the three packages (corpus_hygiene, checks, flows), the policy and the templates."""

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.slow  # builds and installs a wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    uv = Path(sys.executable).with_name("uv")  # a dev dependency, so it is in the venv
    subprocess.run(
        [str(uv), "build", "--wheel", "-o", str(out), str(ROOT)], check=True, capture_output=True, timeout=300
    )
    (path,) = out.glob("*.whl")
    return path


def test_wheel_holds_checks_flows_policy_and_templates(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in [
        "checks/policy.toml",
        "checks/schemas.py",
        "flows/hygiene.py",
        "corpus_hygiene/report/templates/run.html.j2",
    ]:
        assert needed in names


def test_checks_import_from_the_installed_wheel_not_the_source_tree(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    deps = sysconfig.get_paths()["purelib"]  # the project venv's packages, for the dependencies only
    script = (
        "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "import corpus_hygiene, checks as c\n"
        "from checks.schemas import RecordsModel\n"
        "p = c.load_policy()\n"
        "print(corpus_hygiene.__file__); print(c.__file__); print(p.path); print(RecordsModel.__name__)\n"
    )
    # -I: isolated (no PYTHONPATH, no user site); -S: no site-packages, so the editable install of the
    # source tree is not on the path; the wheel comes first, the dependencies after it.
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script, str(site), deps],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    package, checks, policy, model = proc.stdout.split()
    assert package.startswith(str(site)) and checks.startswith(str(site)) and policy.startswith(str(site))
    assert model == "RecordsModel"

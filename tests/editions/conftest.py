"""The checks of the built editions: `make book-student` runs test_student_site.py on
_build/student/html (and the full site, for comparison), `make pdf` runs test_pdf.py on
_build/pdf/. They run only when asked for by path (as tests/site does): a plain `pytest`
(`make test`) skips this folder, since it needs the builds.

Environment: BUILD_DIR, the build folder (default: _build of the repository).
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent


def _asked_for(config) -> bool:
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path, config):
    if not _asked_for(config):
        return True
    return None

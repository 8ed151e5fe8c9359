"""Build arrowipc/spark/jars/arrowipc-spark.jar: javac over java/src against the jars pyspark ships.

    python java/build_jar.py            # also run by setup.py's build steps and ci/env.sh

Skipped, with one printed line saying why, when there is no JDK (javac) or no pyspark to compile
against: the wheel then holds no jar and Spark uses the Python data source. Rebuilds only when a
source is newer than the jar. Compiled for Java 17 (what Spark 4 needs at least).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOURCES = os.path.join(HERE, "src")
RESOURCES = os.path.join(HERE, "resources")
JAR = os.path.join(ROOT, "arrowipc", "spark", "jars", "arrowipc-spark.jar")


def pyspark_jars() -> str | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    jars = os.path.join(list(spec.submodule_search_locations)[0], "jars")
    return jars if os.path.isdir(jars) else None


def _files(top: str, suffix: str = "") -> list:
    return sorted(os.path.join(d, n) for d, _, names in os.walk(top) for n in names
                  if n.endswith(suffix))


def up_to_date() -> bool:
    if not os.path.exists(JAR):
        return False
    newest = max(os.path.getmtime(p) for p in _files(SOURCES) + _files(RESOURCES) + [__file__])
    return os.path.getmtime(JAR) >= newest


def build(quiet: bool = False) -> str | None:
    """The jar's path, built if needed; None (and one line on stderr) when it cannot be built."""
    if not os.path.isdir(SOURCES):
        return None          # an sdist without the Java sources
    if up_to_date():
        return JAR
    javac = shutil.which("javac")
    if javac is None and os.environ.get("JAVA_HOME"):
        candidate = os.path.join(os.environ["JAVA_HOME"], "bin", "javac")
        javac = candidate if os.path.exists(candidate) else None
    jars = pyspark_jars()
    if javac is None or jars is None:
        why = "no JDK (javac)" if javac is None else "pyspark is not installed"
        print(f"arrowipc: not building the Spark JVM data source jar: {why}; Spark will use the "
              f"Python data source", file=sys.stderr)
        return None
    with tempfile.TemporaryDirectory() as classes:
        cmd = [javac, "--release", "17", "-nowarn", "-encoding", "UTF-8", "-d", classes,
               "-cp", os.path.join(jars, "*")] + _files(SOURCES, ".java")
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError("arrowipc: compiling the Spark JVM data source failed:\n" + done.stderr)
        os.makedirs(os.path.dirname(JAR), exist_ok=True)
        tmp = JAR + ".part"
        # zipfile, not the jar tool: fixed timestamps make the jar reproducible
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", (1980, 1, 1, 0, 0, 0)),
                       "Manifest-Version: 1.0\nCreated-By: arrowipc\n\n")
            for top in (classes, RESOURCES):
                for path in _files(top):
                    name = os.path.relpath(path, top).replace(os.sep, "/")
                    with open(path, "rb") as f:
                        z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), f.read())
        os.replace(tmp, JAR)
    if not quiet:
        print(f"arrowipc: built {os.path.relpath(JAR, ROOT)}", file=sys.stderr)
    return JAR


if __name__ == "__main__":
    sys.exit(0 if build() or not os.path.isdir(SOURCES) else 0)

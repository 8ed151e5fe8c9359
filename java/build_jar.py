"""Build arrowipc/spark/jars/arrowipc-spark.jar: javac over java/src against the jars pyspark ships.

    python java/build_jar.py            # also run by setup.py's build steps and ci/env.sh

Skipped, with one printed line saying why, when there is no JDK 17 or newer (javac), no pyspark to
compile against, or ARROWIPC_BUILD_JAR=0: the wheel then holds no jar and Spark uses the Python
data source. Wheel builds get pyspark from the build backend (build_backend.py) when a JDK is here. Rebuilds only when a
source is newer than the jar. Compiled for Java 17 (what Spark 4 needs at least).
"""
from __future__ import annotations

import importlib.util
import os
import re
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
MIN_JAVA = 17                  # what Spark 4 runs on, and the release the classes are compiled for


def pyspark_jars() -> str | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    jars = os.path.join(list(spec.submodule_search_locations)[0], "jars")
    return jars if os.path.isdir(jars) else None


def _files(top: str, suffix: str = "") -> list:
    return sorted(os.path.join(d, n) for d, _, names in os.walk(top) for n in names
                  if n.endswith(suffix))


def find_javac() -> str | None:
    """The JDK's javac: on PATH, else under JAVA_HOME; None when there is none."""
    found = shutil.which("javac")
    if found is None and os.environ.get("JAVA_HOME"):
        candidate = os.path.join(os.environ["JAVA_HOME"], "bin", "javac")
        found = candidate if os.path.exists(candidate) else None
    return found


def javac_release(javac: str) -> int | None:
    """The major version of the JDK whose javac is `javac` ("javac 17.0.15" -> 17, "javac 1.8.0"
    -> 8); None when it does not say."""
    try:
        done = subprocess.run([javac, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"javac (\d+)(?:\.(\d+))?", done.stdout + done.stderr)
    if match is None:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def not_building() -> str | None:
    """Why the jar is not to be built here (ARROWIPC_BUILD_JAR=0, or no JDK that can compile
    it), or None when it is."""
    if os.environ.get("ARROWIPC_BUILD_JAR") == "0":
        return "ARROWIPC_BUILD_JAR=0"
    javac = find_javac()
    if javac is None:
        return "no JDK (javac)"
    release = javac_release(javac)
    if release is None or release < MIN_JAVA:
        return f"{javac} is not Java {MIN_JAVA} or newer"
    return None


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
    why = not_building()
    jars = pyspark_jars()
    if why is not None or jars is None:
        why = why or "pyspark is not installed"
        print(f"arrowipc: not building the Spark JVM data source jar: {why}; Spark will use the "
              f"Python data source", file=sys.stderr)
        return None
    with tempfile.TemporaryDirectory() as classes:
        cmd = [find_javac(), "--release", str(MIN_JAVA), "-nowarn", "-encoding", "UTF-8",
               "-d", classes, "-cp", os.path.join(jars, "*")] + _files(SOURCES, ".java")
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

"""The package's PEP 517 build backend: setuptools', plus pyspark in the build environment when a
JDK can compile the Spark JVM data source, so that every wheel built the standard way carries its
jar.

`pip install .` and `python -m build` build in an isolated environment that holds only what the
backend asks for. The jar is compiled against the jars pyspark ships (build_jar.py beside this
file, run by setup.py's build_py), so without this the isolated environment has no pyspark, the
wheel has no jar, and Spark's format("arrowipc") falls back to the much slower Python data
source. The backend asks for pyspark exactly when a JDK of Java 17 or newer is here (javac on
PATH or under JAVA_HOME); without one the wheel carries the Python data source only.

ARROWIPC_BUILD_JAR=0 leaves the jar out, and pyspark out of the build environment: for builds
with a JDK but no pyspark to be had (offline, no package cache).
"""
from __future__ import annotations

import os
import sys

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every hook of setuptools' backend)

from build_jar import SOURCES, not_building     # backend-path puts this folder on sys.path

PYSPARK = "pyspark>=4.0,<5"     # the Spark the jar is compiled against: the [spark] extra's


def jar_requirements() -> list[str]:
    """[PYSPARK] when the jar is to be built here; else [] and one line on stderr saying why."""
    if not os.path.isdir(SOURCES):
        return []               # a tree without the Java sources: no jar to build
    why = not_building()
    if why is None:
        return [PYSPARK]
    print(f"arrowipc: the wheel will not carry the Spark JVM data source's jar: {why}",
          file=sys.stderr)
    return []


def get_requires_for_build_wheel(config_settings=None):  # type: ignore[no-untyped-def]
    return _setuptools.get_requires_for_build_wheel(config_settings) + jar_requirements()


def get_requires_for_build_editable(config_settings=None):  # type: ignore[no-untyped-def]
    return _setuptools.get_requires_for_build_editable(config_settings) + jar_requirements()

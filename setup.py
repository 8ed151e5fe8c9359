"""Build the Cython extension modules of arrowipc (one per .pyx file: the physical layer in
arrowipc/_core, the IPC codec in arrowipc/ipc, the Dissociated wire in arrowipc/dissociated).

The C kernels in cpp/ are compiled once, into a static library every extension links (the linker
takes only the objects an extension uses), instead of once per extension.
"""
import glob
import os

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

C_FLAGS = ["-O3", "-std=gnu11", "-fno-strict-aliasing"]
C_LIBRARY = ("arrowipc_c", {
    "sources": sorted(glob.glob("cpp/*.c")),     # small C kernels, symbols prefixed arrowipc_
    "include_dirs": ["cpp"],
    "cflags": C_FLAGS + ["-fPIC", "-Wall"],      # linked into shared objects
})


def extensions():
    exts = []
    for pyx in sorted(glob.glob("arrowipc/**/*.pyx", recursive=True)):
        name = pyx[:-4].replace(os.sep, ".")
        exts.append(
            Extension(
                name,
                [pyx],
                include_dirs=["cpp"],
                extra_compile_args=C_FLAGS,
                libraries=["arrowipc_c", "dl", "pthread"],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_link_args=["-s"],  # strip symbols: a small wheel and install
                depends=sorted(glob.glob("cpp/*.c") + glob.glob("cpp/*.h")),
            )
        )
    return cythonize(
        exts,
        language_level=3,
        # Python-level indexing stays checked (negative indices, bounds): the hot loops run over
        # raw pointers in C kernels, so these checks cost nothing where it matters.
        compiler_directives={
            "cdivision": True,
            "initializedcheck": False,
            "embedsignature": True,
        },
        quiet=True,
        nthreads=os.cpu_count() or 1,
    )


class BuildExtWithLibrary(build_ext):
    """build_ext that builds the C library first: `build` would, `build_ext --inplace` alone does not."""

    def run(self):
        self.run_command("build_clib")
        super().run()


class BuildPyWithJar(build_py):
    """build_py that first builds the Spark JVM source's jar (java/build_jar.py) into the package;
    without a JDK or pyspark it prints why and the wheel ships the Python source only."""

    def run(self):
        import importlib.util
        spec = importlib.util.spec_from_file_location("build_jar", os.path.join("java", "build_jar.py"))
        if spec is not None and os.path.isdir(os.path.join("java", "src")):
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            module.build()
        super().run()


# build_ext compiles the extensions in parallel (one per core)
setup(ext_modules=extensions(), libraries=[C_LIBRARY],
      cmdclass={"build_ext": BuildExtWithLibrary, "build_py": BuildPyWithJar},
      options={"build_ext": {"parallel": os.cpu_count() or 1}})

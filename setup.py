"""Build the Cython extension modules under arrowipc/_core (one per .pyx file)."""
import glob
import os

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
C_SOURCES = sorted(glob.glob("cpp/*.c"))  # small C kernels, symbols prefixed arrowipc_


def extensions():
    exts = []
    for pyx in sorted(glob.glob("arrowipc/_core/*.pyx")):
        name = pyx[:-4].replace(os.sep, ".")
        exts.append(
            Extension(
                name,
                [pyx] + C_SOURCES,
                include_dirs=["cpp"],
                extra_compile_args=["-O3", "-std=gnu11", "-fno-strict-aliasing"],
                libraries=["dl", "pthread"],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_link_args=["-s"],  # strip symbols: a small wheel and install
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


# build_ext compiles the extensions in parallel (one per core)
setup(ext_modules=extensions(), options={"build_ext": {"parallel": os.cpu_count() or 1}})

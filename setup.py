"""`pip install --no-build-isolation .` (pyproject.toml): CMake configures and builds the library and
its Python module (target _spmv) for the interpreter pip runs, in a folder of setuptools' own, or in
$SPMV_BUILD_DIR where given (an existing build: configured again only without a cache); the module
goes into the package python/src/spmv beside __init__.py and its type hints. $SPMV_CMAKE_ARGS adds
CMake options (-DSPMV_ENABLE_CUDA=OFF, -DCMAKE_CUDA_ARCHITECTURES=90, ...). Built from the repository
(no sdist: the build needs the whole source tree)."""
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def version():
    m = re.search(r"project\(spmv\s+VERSION\s+([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    return m.group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        given = os.environ.get("SPMV_BUILD_DIR")
        build = Path(given).resolve() if given else Path(self.build_temp).resolve() / "cmake"
        if not given or not (build / "CMakeCache.txt").exists():
            args = [f"-DPython3_EXECUTABLE={sys.executable}", "-DSPMV_BUILD_PYTHON=ON", "-DSPMV_BUILD_TESTS=OFF",
                    "-DSPMV_BUILD_TOOLS=OFF", "-DSPMV_NATIVE=OFF", "-DCMAKE_BUILD_TYPE=Release"]
            args += shlex.split(os.environ.get("SPMV_CMAKE_ARGS", ""))
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *args], check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "_spmv", "-j", str(os.cpu_count() or 1)], check=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build / "python" / "spmv" / f"_spmv{suffix}"
        if not built.exists():
            raise RuntimeError(f"CMake built no {built.name} in {built.parent} (a build for another Python? "
                               "SPMV_BUILD_DIR must be configured with this interpreter)")
        dest = Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, dest)


(ROOT / ".pybuild").mkdir(exist_ok=True)  # egg_base must exist before setuptools' first hook

setup(
    version=version(),
    packages=["spmv"],
    package_dir={"": "python/src"},
    package_data={"spmv": ["__init__.pyi", "py.typed"]},
    ext_modules=[Extension("spmv._spmv", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": ".pybuild"}, "egg_info": {"egg_base": ".pybuild"}},
)

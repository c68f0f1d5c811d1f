"""Builds the `trainplan` extension with the repository's CMake (target trainplan_python) for pip."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent.parent


def version():
    """The project's version, as CMakeLists.txt declares it."""
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(trainplan VERSION (\S+)", text).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = pathlib.Path(self.build_temp).resolve() / "cmake"
        configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     "-DTRAINPLAN_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        configure += os.environ.get("CMAKE_ARGS", "").split()  # e.g. -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "trainplan_python", "-j", str(os.cpu_count() or 1)],
                       check=True)
        built = next((build / "python").glob("trainplan*.so"))
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(version=version(), ext_modules=[Extension("trainplan", sources=[])], cmdclass={"build_ext": CMakeBuild})

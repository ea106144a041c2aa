# lit configuration for linnet: every .linnet, .test and .json-driven test
# under test/ runs the built tools and checks output with FileCheck.
import os
import lit.formats

config.name = "linnet"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".linnet", ".test", ".mlir"]
config.excludes = ["unit", "fuzz", "Inputs", "lit.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.linnet_tools_dir), "test")

config.environment["PATH"] = os.pathsep.join(
    [config.linnet_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%linnet_src", config.linnet_source_dir))
config.substitutions.append(("%python", "python3"))
# Debian's python3, which has Debian's numpy (a pyenv `python3` on PATH may not).
config.substitutions.append(("%refpython", "/usr/bin/python3"))

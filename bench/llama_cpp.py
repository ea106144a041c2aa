#!/usr/bin/env python3
"""Prefill and decode tokens/s of linnet next to llama.cpp, on the same random checkpoint.

    /usr/bin/python3 bench/llama_cpp.py [--build DIR] [--sizes small|NAME=VALUE...]
        [--dtype f32|bf16|both] [--threads 1,2] [--repetitions 5] [--cache DIR] [--keep]

For each dtype: writes a random qwen3_5_moe checkpoint with `linnet init-checkpoint`, converts it
to GGUF with llama.cpp's own convert_hf_to_gguf.py (`--outtype` the same dtype), compiles it with
`linnet build` into a standalone binary (so no JIT time is in any figure), then for each thread
count measures, `-r` repetitions each and the median of them:

  llama.cpp  `llama-bench -p 256 -n 0` (a prefill of 256 tokens at position 0, after its
             warm-up run) and `llama-bench -p 0 -n 64 -d 256` (64 one-token decodes after 256
             tokens of context, as linnet's are), with `-t threads`;
  linnet     OMP_NUM_THREADS = threads; prefill: the binary's `--script` of two prefill calls of
             the 256 tokens at position 0 (the first warms up, as llama-bench's does) and 64
             decode calls, tok/s = 256 / the second call's seconds; decode: the binary's
             `--prompt-tokens <the 256 ids> --generate 65 --timings`, one prefill then 64 greedy
             decode calls at positions 256..319, tok/s as it prints it (64 / their summed time);

and prints one table with the ratio linnet / llama.cpp (above 1: linnet is faster). The
script's 1 / median decode call (`--timings` prints each call to the microsecond) is printed
beside the table, not in it: it times single calls, not a run of 64.

Then compares greedy tokens and logits: llama.cpp's 65 greedy tokens from the same prompt
(bench/llama_cpp_greedy.cpp over libllama, 1 thread, and the logits of the prompt's last
position), linnet's from the runs above (the logits from the script's prefill call), and the numpy
reference's (test/reference/qwen3_5_moe.py in float32, bf16 weights widened).

llama.cpp comes from PyPI's llama-cpp-python sdist (its vendor/llama.cpp), unpacked and built
(CPU only, Release, static, -march=native) under --cache (default ~/.cache/linnet-bench); a
second run reuses the build. The converter runs in a venv there (system site packages, so
Debian's python3-torch and numpy; PyPI's transformers and tokenizers), with two adaptations
that this script makes at run time and says so: Debian's torch 1.13 lacks the float8 dtypes the
converter names in a table (stand-ins are set; no tensor here is float8), and the generated
tokenizer's pre-tokenizer hash is not in the converter's list of known ones (it is recorded as
`qwen35`; the benchmark feeds token ids, never text). llama.cpp's qwen35moe takes both DeltaNet
head sizes from one field, so KeyDim must equal ValueDim. Builds, conversion and checkpoint
writing run under `nice -n 19`; the measured runs at the script's own priority.
"""
import argparse
import atexit
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request

from benchlib import (MODEL, NICE, TOP, checkpoint_tensors, load_average, log, machine,
                      run, begin_run)

GREEDY_SOURCE = os.path.join(TOP, "bench", "llama_cpp_greedy.cpp")
DEBIAN_PYTHON = "/usr/bin/python3"

SMALL = dict(Vocab=4096, H=256, Heads=4, KvHeads=2, HeadDim=64, KeyHeads=2, ValueHeads=4,
             KeyDim=32, ValueDim=32, Conv=256, Width=4, Experts=16, TopK=4, ExpertInner=128,
             SharedInner=128, Groups=2, MaxSeq=512)

LLAMA_TARGETS = ["llama-bench", "llama"]
LLAMA_CMAKE_OPTIONS = ["-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF",
                       "-DBUILD_SHARED_LIBS=OFF", "-DGGML_NATIVE=ON", "-DGGML_CUDA=OFF",
                       "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_SERVER=OFF",
                       "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_TOOLS=ON"]

# Runs convert_hf_to_gguf.py with the two adaptations the module docstring describes.
CONVERTER_SHIM = r'''
import os, runpy, sys
llama = sys.argv.pop(1)
import torch
for name, stand_in in (("float8_e4m3fn", "complex32"), ("float8_e5m2", "qint8")):
    if not hasattr(torch, name):
        print(f"llama_cpp.py: torch {torch.__version__} has no {name}; {stand_in} stands in",
              file=sys.stderr)
        setattr(torch, name, getattr(torch, stand_in))
sys.path.insert(0, llama)
sys.path.insert(1, os.path.join(llama, "gguf-py"))
from conversion import base
known_pre = base.TextModel.get_vocab_base_pre
def pre_or_qwen35(self, tokenizer):
    try:
        return known_pre(self, tokenizer)
    except NotImplementedError:
        print("llama_cpp.py: generated tokenizer, pre-tokenizer recorded as qwen35",
              file=sys.stderr)
        return "qwen35"
base.TextModel.get_vocab_base_pre = pre_or_qwen35
sys.argv[0] = os.path.join(llama, "convert_hf_to_gguf.py")
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def check_sizes(sizes):
    """What llama.cpp's converter and model need of the sizes beyond linnet's."""
    if sizes["KeyDim"] != sizes["ValueDim"]:
        # src/models/qwen35moe.cpp takes both head sizes from one GGUF field (ssm.state_size).
        sys.exit(f"--sizes: llama.cpp's qwen35moe needs KeyDim == ValueDim (here {sizes['KeyDim']} "
                 f"and {sizes['ValueDim']})")


def median(values):
    return statistics.median(values)


def spread(values):
    return f"{min(values):.0f}..{max(values):.0f}"


# --- llama.cpp: source, build, converter environment -------------------------------------------

def download_sdist(package, folder):
    """The newest sdist of `package` from PyPI's JSON API, its sha256 checked. (`pip download
    --no-binary :all:` would build every build dependency from source to read the metadata.)"""
    index = f"https://pypi.org/pypi/{package}/json"
    with urllib.request.urlopen(index, timeout=60) as response:
        release = json.load(response)
    sdists = [f for f in release["urls"] if f["packagetype"] == "sdist"]
    if not sdists:
        sys.exit(f"llama_cpp.py: PyPI lists no sdist of {package} {release['info']['version']}")
    sdist = sdists[0]
    partial = os.path.join(folder, sdist["filename"] + ".part")
    digest = hashlib.sha256()
    with urllib.request.urlopen(urllib.parse.urljoin(index, sdist["url"]), timeout=600) as src, \
            open(partial, "wb") as out:
        while chunk := src.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    if digest.hexdigest() != sdist["digests"]["sha256"]:
        os.remove(partial)
        sys.exit(f"llama_cpp.py: {sdist['filename']}: sha256 differs from PyPI's")
    os.rename(partial, os.path.join(folder, sdist["filename"]))


def llama_source(cache):
    """The unpacked llama-cpp-python sdist's vendor/llama.cpp (downloaded once)."""
    sdists = os.path.join(cache, "sdist")
    os.makedirs(sdists, exist_ok=True)
    tarballs = sorted(f for f in os.listdir(sdists) if f.endswith(".tar.gz"))
    if not tarballs:
        log("downloading the llama-cpp-python sdist from PyPI")
        download_sdist("llama-cpp-python", sdists)
        tarballs = sorted(f for f in os.listdir(sdists) if f.endswith(".tar.gz"))
    tarball = tarballs[-1]
    name = tarball[:-len(".tar.gz")]
    src = os.path.join(cache, "src")
    llama = os.path.join(src, name, "vendor", "llama.cpp")
    if not os.path.isfile(os.path.join(llama, "convert_hf_to_gguf.py")):
        log(f"unpacking {tarball}")
        os.makedirs(src, exist_ok=True)
        with tarfile.open(os.path.join(sdists, tarball)) as archive:
            archive.extractall(src)
    return name, llama


def llama_build(cache, name, llama, jobs):
    """Builds llama-bench and libllama once; a stamp records the options it was built with."""
    build = os.path.join(cache, "build", name)
    stamp = os.path.join(build, "linnet-bench.stamp")
    key = json.dumps([LLAMA_CMAKE_OPTIONS, LLAMA_TARGETS])
    bench = os.path.join(build, "bin", "llama-bench")
    if os.path.isfile(stamp) and open(stamp).read() == key and os.path.isfile(bench):
        return build, False
    log(f"building llama.cpp ({', '.join(LLAMA_TARGETS)}) in {build}; "
        "about 10 minutes on 2 shared cores")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    run(NICE + ["cmake", "-S", llama, "-B", build, *generator, *LLAMA_CMAKE_OPTIONS])
    run(NICE + ["cmake", "--build", build, "-j", str(jobs), "--target", *LLAMA_TARGETS])
    with open(stamp, "w") as f:
        f.write(key)
    return build, True


def greedy_binary(cache, build, llama):
    """bench/llama_cpp_greedy.cpp linked against the static libllama, rebuilt when either
    changes."""
    libs = {}
    for root, _, files in os.walk(build):
        for f in files:
            if f in ("libllama.a", "libggml.a", "libggml-cpu.a", "libggml-base.a"):
                libs[f] = os.path.join(root, f)
    order = ["libllama.a", "libggml.a", "libggml-cpu.a", "libggml-base.a"]
    missing = [f for f in order if f not in libs]
    if missing:
        sys.exit(f"llama.cpp build has no {', '.join(missing)}")
    digest = hashlib.sha256(open(GREEDY_SOURCE, "rb").read())
    for f in order:
        digest.update(str(os.path.getmtime(libs[f])).encode())
    binary = os.path.join(build, f"llama_cpp_greedy-{digest.hexdigest()[:12]}")
    if not os.path.isfile(binary):
        log("compiling bench/llama_cpp_greedy.cpp")
        run(NICE + ["g++", "-O2", "-std=c++17", "-I", os.path.join(llama, "include"),
                    "-I", os.path.join(llama, "ggml", "include"), GREEDY_SOURCE,
                    *[libs[f] for f in order], "-fopenmp", "-lpthread", "-ldl", "-o", binary])
    return binary


def converter_python(cache):
    """A venv's python that has torch (Debian's), numpy (Debian's), transformers and tokenizers."""
    try:
        run([DEBIAN_PYTHON, "-c", "import torch"])
    except SystemExit:
        log("installing Debian's python3-torch (the converter needs torch)")
        run(NICE + ["apt-get", "install", "-y", "python3-torch"],
            env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    venv = os.path.join(cache, "venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.isfile(python):
        log(f"making the converter's venv {venv}")
        run(NICE + [DEBIAN_PYTHON, "-m", "venv", "--system-site-packages", venv])
    probe = subprocess.run([python, "-c", "import transformers, tokenizers, torch, numpy"],
                           capture_output=True)
    if probe.returncode != 0:
        log("installing transformers and tokenizers from PyPI into the venv")
        run(NICE + [python, "-m", "pip", "install", "-q", "transformers", "tokenizers"])
    return python


# --- checkpoint, tokenizer, conversion ----------------------------------------------------------

def bytes_to_unicode():
    """GPT-2's byte-level alphabet: one printable character for each byte."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    codes = {b: b for b in printable}
    extra = 0
    for b in range(256):
        if b not in codes:
            codes[b] = 256 + extra
            extra += 1
    return [chr(codes[b]) for b in range(256)]


def write_tokenizer(folder, vocab_size):
    """A byte-level BPE tokenizer.json of exactly vocab_size tokens: the 256 bytes, merges that
    grow strings of letters breadth-first, and `<|endoftext|>` as the last id (end of text)."""
    if vocab_size < 258:
        sys.exit("the generated tokenizer needs Vocab >= 258")
    chars = bytes_to_unicode()
    vocab = {c: i for i, c in enumerate(chars)}
    letters = [chars[b] for b in b"etaoinsrhldcumfpgwybvkxjqz ETAOINSRHLDCUMFPGWYBVKXJQZ"]
    merges, frontier, want = [], list(letters), vocab_size - 1
    while len(vocab) < want:
        grown = []
        for left in frontier:
            for right in letters:
                if len(vocab) == want:
                    break
                if left + right not in vocab:
                    vocab[left + right] = len(vocab)
                    merges.append(f"{left} {right}")
                    grown.append(left + right)
        frontier = grown
    eos = "<|endoftext|>"
    vocab[eos] = len(vocab)
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": True}
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": vocab[eos], "content": eos, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None, "pre_tokenizer": byte_level, "post_processor": None,
        "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }
    with open(os.path.join(folder, "tokenizer.json"), "w") as f:
        json.dump(tokenizer, f)
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": eos,
                   "add_bos_token": False, "model_max_length": 1 << 20}, f)


def parameter_bytes(checkpoint):
    """(parameter count, bytes of tensor data) from the checkpoint's safetensors headers."""
    count = size = 0
    for _, tensor in checkpoint_tensors(checkpoint):
        elements = 1
        for d in tensor["shape"]:
            elements *= d
        count += elements
        size += tensor["data_offsets"][1] - tensor["data_offsets"][0]
    return count, size


def prepare(dtype, sizes, work, linnet, llama, converter, cpu):
    """Checkpoint, GGUF and linnet binary of one dtype."""
    checkpoint = os.path.join(work, f"ckpt-{dtype}")
    binds = [f"--bind={k}={v}" for k, v in sizes.items()]
    log(f"{dtype}: linnet init-checkpoint")
    run(NICE + [linnet, "init-checkpoint", MODEL, *binds, "--dtype", dtype, "--seed", "1",
                "-o", checkpoint])

    # The converter reads config.json, the safetensors and the tokenizer from one folder; the
    # checkpoint's own folder stays as linnet wrote it.
    hf = os.path.join(work, f"hf-{dtype}")
    os.makedirs(hf)
    for f in os.listdir(checkpoint):
        os.symlink(os.path.join(checkpoint, f), os.path.join(hf, f))
    write_tokenizer(hf, sizes["Vocab"])
    gguf = os.path.join(work, f"model-{dtype}.gguf")
    log(f"{dtype}: convert_hf_to_gguf.py --outtype {dtype}")
    shim = os.path.join(work, "convert_shim.py")
    with open(shim, "w") as f:
        f.write(CONVERTER_SHIM)
    _, err = run(NICE + [converter, shim, llama, hf, "--outtype", dtype, "--no-mtp",
                         "--outfile", gguf])
    notes = sorted(set(re.findall(r"llama_cpp\.py: .*", err)))

    binary = os.path.join(work, f"linnet-{dtype}")
    log(f"{dtype}: linnet build")
    start = time.perf_counter()
    # For this machine's CPU, as llama.cpp is built (GGML_NATIVE=ON): the default x86-64-v3
    # has neither AVX-512 nor its bf16 instructions.
    run(NICE + [linnet, "build", MODEL, "--bind", os.path.join(checkpoint, "config.json"),
                "--bind=Batch=1", "--cpu", cpu, "-o", binary])
    return checkpoint, gguf, binary, time.perf_counter() - start, notes


# --- measurements -------------------------------------------------------------------------------

def llama_bench(bench, gguf, threads, prompt, decode, depth):
    """One repetition of each llama-bench test: (prefill tok/s, decode tok/s)."""
    def one(extra):
        out, _ = run([bench, "-m", gguf, "-t", str(threads), "-r", "1", "-o", "json", *extra])
        [test] = json.loads(out)
        return test["avg_ts"]
    return (one(["-p", str(prompt), "-n", "0"]),
            one(["-p", "0", "-n", str(decode), "-d", str(depth)]))


def linnet_script(binary, checkpoint, script, out, threads):
    """One run of the script (a warm-up prefill at pos 0, the measured prefill at pos 0, then the
    decode calls): (tok/s of the second prefill call, the decode calls' seconds, to the ms)."""
    _, err = run([binary, "--checkpoint", checkpoint, "--script", script, "--out", out,
                  "--timings"], env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    calls = re.findall(r"call (\d+) (\w+) ([0-9.]+) s \((\d+) tokens\)", err)
    prefill = [int(n) / float(t) for i, _, t, n in calls if i == "1"]
    if not prefill:
        sys.exit(f"no call timings in:\n{err}")
    return prefill[0], [float(t) for _, entry, t, _ in calls if entry == "decode"]


def linnet_generate(binary, checkpoint, prompt, decode, threads):
    """One greedy generation of decode + 1 tokens from the prompt (a prefill, then `decode`
    decode calls): (decode tok/s, tok/s of the prefill, the process's first and so cold call,
    the generated ids)."""
    out, err = run([binary, "--checkpoint", checkpoint, "--prompt-tokens",
                    ",".join(map(str, prompt)), "--generate", str(decode + 1), "--timings"],
                   env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    prefill = re.search(r"prefill ([0-9.]+) s \((\d+) tokens\)", err)
    rate = re.search(r"decode [0-9.]+ s \(([0-9.]+) tokens/s\)", err)
    if not prefill or not rate:
        sys.exit(f"no prefill/decode timings in:\n{err}")
    return (float(rate.group(1)), int(prefill.group(2)) / float(prefill.group(1)),
            [int(x) for x in out.split()])


def llama_greedy(greedy, gguf, prompt, steps, work):
    """llama.cpp's greedy ids (1 thread) and its logits at the prompt's last position."""
    import numpy as np
    logits = os.path.join(work, "llama_logits.f32")
    out, _ = run([greedy, gguf, "1", ",".join(map(str, prompt)), str(steps), logits])
    return [int(x) for x in out.strip().split(",")], np.fromfile(logits, dtype=np.float32)


def reference_greedy(checkpoint, prompt, steps):
    """The numpy reference's (test/reference/qwen3_5_moe.py, float32, bf16 weights widened)
    greedy ids and logits at the prompt's last position; None when it cannot be imported."""
    import numpy as np
    sys.path.insert(0, os.path.join(TOP, "test", "reference"))
    try:
        import qwen3_5_moe as reference
    except ImportError as error:
        log(f"no numpy reference ({error})")
        return None
    session = reference.load_model(checkpoint, dtype=np.float32).session(batch=1)
    logits = session.prefill(np.array([prompt]), 0)
    first = logits.reshape(-1).copy()
    ids = []
    for i in range(steps):
        ids.append(int(np.argmax(logits.reshape(-1))))
        if i + 1 < steps:
            logits = session.decode(np.array([[ids[-1]]]), len(prompt) + i)
    return ids, first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(TOP, "build"),
                        help="linnet's build folder (its bin/linnet)")
    parser.add_argument("--sizes", nargs="+", default=["small"],
                        help="`small` (the default sizes) and/or NAME=VALUE overrides")
    parser.add_argument("--dtype", choices=["f32", "bf16", "both"], default="both")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repetitions", "-r", type=int, default=5)
    parser.add_argument("--prompt", type=int, default=256, help="prefill tokens")
    parser.add_argument("--decode", type=int, default=64, help="decode steps")
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/linnet-bench"))
    parser.add_argument("--jobs", type=int, default=2, help="parallel jobs of the llama.cpp build")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--cpu", default="native",
                        help="linnet build --cpu (llama.cpp is built for the host CPU)")
    args = parser.parse_args()

    began = time.perf_counter()
    linnet, sizes, dtypes, threads = begin_run(args, SMALL, ("decode", args.decode), ("small",))
    check_sizes(sizes)
    load_before = load_average()

    name, llama = llama_source(args.cache)
    build, built = llama_build(args.cache, name, llama, args.jobs)
    bench = os.path.join(build, "bin", "llama-bench")
    greedy = greedy_binary(args.cache, build, llama)
    converter = converter_python(args.cache)
    setup_s = time.perf_counter() - began

    work = tempfile.mkdtemp(prefix="linnet-llama-cpp-")
    if not args.keep:
        atexit.register(shutil.rmtree, work, ignore_errors=True)
    prompt = [(7919 * i + 13) % sizes["Vocab"] for i in range(args.prompt)]
    script = os.path.join(work, "script.json")
    calls = [{"entry": "prefill", "tokens": [prompt], "pos": 0}] * 2
    steps = [(104729 * i + 7) % sizes["Vocab"] for i in range(args.decode)]
    calls += [{"entry": "decode", "tokens": [[t]], "pos": args.prompt + i}
              for i, t in enumerate(steps)]
    with open(script, "w") as f:
        json.dump({"calls": calls}, f)

    import numpy as np
    rows, checks, details = [], [], []
    for dtype in dtypes:
        checkpoint, gguf, binary, build_s, notes = prepare(dtype, sizes, work, linnet, llama,
                                                           converter, args.cpu)
        count, size = parameter_bytes(checkpoint)
        details.append(f"{dtype}: {count} parameters, {size} parameter bytes "
                       f"({size / 1e6:.1f} MB); GGUF {os.path.getsize(gguf) / 1e6:.1f} MB; "
                       f"linnet build {build_s:.0f} s")
        details += [f"{dtype}: {note}" for note in notes]
        out = os.path.join(work, f"out-{dtype}")
        os.makedirs(out)
        log(f"{dtype}: llama.cpp's greedy tokens")
        theirs, their_logits = llama_greedy(greedy, gguf, prompt, args.decode + 1, work)
        log(f"{dtype}: the numpy reference's greedy tokens")
        reference = reference_greedy(checkpoint, prompt, args.decode + 1)
        for t in threads:
            log(f"{dtype}, {t} thread(s): {args.repetitions} rounds of llama-bench and linnet")
            # Rounds alternate the two systems, so that both see the same load of the machine.
            llama_prefill, llama_decode, linnet_prefill, linnet_decode = [], [], [], []
            cold_prefill, decode_calls = [], []
            for _ in range(args.repetitions):
                p, d = llama_bench(bench, gguf, t, args.prompt, args.decode, args.prompt)
                llama_prefill.append(p)
                llama_decode.append(d)
                p, calls = linnet_script(binary, checkpoint, script, out, t)
                linnet_prefill.append(p)
                decode_calls += calls
                d, p, ours = linnet_generate(binary, checkpoint, prompt, args.decode, t)
                linnet_decode.append(d)
                cold_prefill.append(p)
            rows.append((dtype, t, median(llama_prefill), median(linnet_prefill),
                         median(llama_decode), median(linnet_decode)))
            call = median(decode_calls)
            details.append(
                f"{dtype} t={t}: range over rounds: prefill llama.cpp {spread(llama_prefill)}, "
                f"linnet {spread(linnet_prefill)}; decode llama.cpp {spread(llama_decode)}, linnet "
                f"{spread(linnet_decode)} tok/s. linnet's cold prefill (first call of --generate) "
                f"{median(cold_prefill):.0f}, 1 / median --script decode call "
                f"{1 / call if call else float('inf'):.0f} tok/s")
            ours_logits = np.load(os.path.join(out, "call_0.npy")).reshape(-1)
            checks.append((dtype, t, theirs, ours, their_logits, ours_logits, reference))

    nproc, cpu, _, _ = machine()
    print(f"machine: nproc {nproc}, CPU {cpu}; load average {load_before} at the start, "
          f"{load_average()} at the end; {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"llama.cpp: {name} (vendor/llama.cpp), llama-bench; linnet: {linnet}, "
          f"a `linnet build` binary per dtype (no JIT in any figure)")
    print("sizes: " + " ".join(f"{k}={v}" for k, v in sizes.items())
          + f" ({4 * sizes['Groups']} layers), Batch=1")
    print(f"prefill: {args.prompt} tokens at position 0, after a warm-up (llama-bench -p "
          f"{args.prompt} -n 0; linnet --script, its second prefill call); decode: {args.decode} "
          f"steps at positions {args.prompt}..{args.prompt + args.decode - 1} (llama-bench -p 0 "
          f"-n {args.decode} -d {args.prompt}; linnet --generate {args.decode + 1}); median of "
          f"{args.repetitions} repetitions")
    for line in details:
        print("  " + line)
    print()
    print("dtype  threads  prefill tok/s: llama.cpp   linnet  ratio   "
          "decode tok/s: llama.cpp   linnet  ratio")
    for dtype, t, lp, np_, ld, nd in rows:
        print(f"{dtype:5s}  {t:7d}  {lp:23.1f} {np_:8.1f} {np_ / lp:6.2f}   "
              f"{ld:22.1f} {nd:8.1f} {nd / ld:6.2f}")
    print()
    def gap(a, b):
        d = a.astype(np.float64) - b
        return f"{np.max(np.abs(d)):.2g} (rms {np.sqrt(np.mean(d * d)):.2g})"

    def agreement(a, b):
        first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
        return "all equal" if first is None else f"equal up to token {first}"

    print(f"greedy tokens ({args.decode + 1} from the {args.prompt}-token prompt; llama.cpp "
          "through bench/llama_cpp_greedy.cpp at 1 thread, linnet through --generate) and the "
          "logits of the prompt's last position; ref = the numpy reference in float32:")
    for dtype, t, theirs, ours, their_logits, ours_logits, reference in checks:
        line = (f"  {dtype} linnet t={t}: linnet vs llama.cpp {agreement(theirs, ours)}, "
                f"max |logit difference| {gap(their_logits, ours_logits)}")
        if reference:
            ref_ids, ref_logits = reference
            line += (f"; vs ref: llama.cpp {agreement(ref_ids, theirs)} and "
                     f"{gap(their_logits, ref_logits)}, linnet "
                     f"{agreement(ref_ids, ours)} and {gap(ours_logits, ref_logits)}")
        print(line + f"; max |logit| {np.max(np.abs(ours_logits)):.2g}")
    print(f"time: {time.perf_counter() - began:.0f} s in all, {setup_s:.0f} s of it llama.cpp "
          f"setup ({'built now' if built else 'cached build'})")
    if args.keep:
        print(f"work folder: {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

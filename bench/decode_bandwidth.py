#!/usr/bin/env python3
"""Is linnet's decode memory-bound, and how close to the machine's DRAM read bandwidth is it?

    /usr/bin/python3 bench/decode_bandwidth.py [--build DIR] [NAME=VALUE ...]
        [--dtype f32|bf16|both] [--threads 1,2] [--repetitions 3] [--work /tmp] [--keep]

In one run, for each dtype (default bf16):

1. `linnet init-checkpoint models/qwen3_5_moe --bind NAME=VALUE... --dtype DTYPE -o DIR`, a
   random checkpoint sized so that the parameter bytes read per decoded token exceed the caches
   (the defaults: H 1024, 64 experts top-8 of 512, shared expert 512, Vocab 32768, 2 groups =
   8 layers, MaxSeq 512; NAME=VALUE overrides any of them, Conv follows the DeltaNet sizes
   unless given). The "active" bytes of a token are counted from the checkpoint's safetensors
   headers (names, shapes, byte ranges): every tensor in full, but the fused expert tensors
   (`...mlp.experts.gate_up_proj`, `...mlp.experts.down_proj`, or per-expert ones
   `...mlp.experts.<e>....`) at TopK / Experts of their bytes and the embedding table at one
   row; `lm_head.weight` is read whole.
2. `linnet build models/qwen3_5_moe --bind DIR/config.json --bind Batch=1 --cpu native -o BIN`
   (timed), then `BIN --checkpoint DIR --prompt-tokens <16 ids> --generate 65 --timings` with
   OMP_NUM_THREADS = each thread count, `--repetitions` times (after one discarded warm-up run);
   decode tok/s is what the binary prints (64 decode calls / their summed seconds), median over
   the repetitions. Achieved bandwidth = active bytes x tok/s.
3. The machine's read bandwidth, measured in the same rounds as the decodes (a round runs, for
   each thread count, the probe and then the decode, so both see the same load): a small C
   program (`cc -O3 -march=native -fopenmp`) sums a 2 GiB array of uint64 with 1 or 2 OpenMP
   threads, best of 5 passes; anonymous memory without MADV_HUGEPAGE, so 4 KiB pages where
   transparent huge pages are `madvise`, as the binary's mapped checkpoint has. Beside the
   table, the same probe over the checkpoint's own mapped safetensors file (MAP_POPULATE, so
   no page faults in the timing).
4. One table: dtype, threads, decode tok/s, active MB per token, achieved GB/s, DRAM read GB/s
   (the best over the rounds), achieved / DRAM, and two threads' decode over one thread's;
   against the targets: decode at >= 60 % of DRAM read bandwidth, 2 threads >= 1.6x 1 thread.
   Beside it, per dtype: the bytes by part, the rounds' figures, and the minor page faults of
   the decode calls (a run's faults, from getrusage, less those of a prefill-only run).

Setup (checkpoint, builds, compiling the probe) runs under `nice -n 19`; the measured runs at
the script's own priority. The checkpoint lives in a folder under --work, removed at the end
unless --keep.
"""
import argparse
import atexit
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time

from benchlib import (MODEL, NICE, TOP, checkpoint_tensors, load_average, log, machine, run,
                      begin_run)


# The binding names of bench/run_entries.py's SIZES.
SIZES = dict(Vocab=32768, H=1024, Heads=8, KvHeads=2, HeadDim=128, KeyHeads=4, ValueHeads=8,
             KeyDim=128, ValueDim=128, Conv=2048, Width=4, Experts=64, TopK=8, ExpertInner=512,
             SharedInner=512, Groups=2, MaxSeq=512)

MIN_ACTIVE = 150e6  # bytes per token; well above the L3 of the machines this runs on
TARGET_RATIO = 0.60
TARGET_SCALING = 1.6

PROBE_SOURCE = r'''
/* Read bandwidth: sums a buffer of uint64 with OpenMP threads, best of several passes.
   probe THREADS PASSES MIB      an anonymous buffer of MIB MiB (written once first)
   probe THREADS PASSES FILE     FILE mapped read-only with MAP_POPULATE
   prints: best GB/s (1e9 bytes), bytes, checksum */
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: probe THREADS PASSES MIB|FILE\n");
    return 2;
  }
  int threads = atoi(argv[1]), passes = atoi(argv[2]);
  char *end;
  long mib = strtol(argv[3], &end, 10);
  size_t bytes;
  const uint64_t *a;
  omp_set_num_threads(threads);
  if (*end == 0) {
    bytes = (size_t)mib << 20;
    uint64_t *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED) { perror("mmap"); return 1; }
    size_t n = bytes / 8;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) b[i] = i * 0x9E3779B97F4A7C15ull;
    a = b;
  } else {
    int fd = open(argv[3], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) { perror(argv[3]); return 1; }
    bytes = (size_t)st.st_size & ~(size_t)4095;
    void *m = mmap(NULL, bytes, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED) { perror("mmap"); return 1; }
    a = m;
  }
  size_t n = bytes / 8;
  double best = 0;
  uint64_t check = 0;
  for (int p = 0; p < passes; ++p) {
    uint64_t s = 0;
    double t0 = now();
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (size_t i = 0; i < n; ++i) s += a[i];
    double dt = now() - t0;
    check ^= s;
    if (bytes / dt > best) best = bytes / dt;
  }
  printf("%.3f %zu %llu\n", best / 1e9, bytes, (unsigned long long)check);
  return 0;
}
'''


def checkpoint_bytes(checkpoint, sizes):
    """From the safetensors headers: (total bytes, active bytes per decoded token, a breakdown
    {part: (total, active)}). Expert tensors count TopK / Experts of their bytes, the embedding
    table one row, everything else (lm_head.weight too) in full."""
    parts = {}
    top_k, experts = sizes["TopK"], sizes["Experts"]
    for name, tensor in checkpoint_tensors(checkpoint):
        size = tensor["data_offsets"][1] - tensor["data_offsets"][0]
        shape = tensor["shape"]
        if re.search(r"\.experts\.(gate_up_proj|down_proj)$", name):
            # Fused [Experts, ...]: a token reads TopK of the Experts slices.
            if shape[0] != experts:
                sys.exit(f"{name}: shape {shape}, expected {experts} experts first")
            part, active = "routed experts", size * top_k / experts
        elif re.search(r"\.experts\.\d+\.", name):
            part, active = "routed experts", size * top_k / experts  # per-expert layout
        elif name.endswith("embed_tokens.weight"):
            part, active = "embedding (one row read)", size / shape[0]
        elif name == "lm_head.weight":
            part, active = "lm_head", size
        else:
            part, active = "the rest (attention, DeltaNet, shared expert, router, norms)", size
        total, act = parts.get(part, (0, 0))
        parts[part] = (total + size, act + active)
    total = sum(t for t, _ in parts.values())
    active = sum(a for _, a in parts.values())
    return total, active, parts


def probe(binary, threads, passes, source):
    """Best read GB/s of the probe over `source` (MiB of anonymous memory, or a file)."""
    out, _ = run([binary, str(threads), str(passes), str(source)],
                 env=dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false"))
    return float(out.split()[0])


def decode(binary, checkpoint, prompt, generate, threads):
    """One `--generate` run: (decode tok/s or None when generate is 1, prefill s, load s, the
    process's minor page faults)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    _, err = run([binary, "--checkpoint", checkpoint, "--prompt-tokens",
                  ",".join(map(str, prompt)), "--generate", str(generate), "--timings"],
                 env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    faults = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before
    match = re.search(r"load ([0-9.]+) s, prefill ([0-9.]+) s \(\d+ tokens\)"
                      r"(?:, decode [0-9.]+ s \(([0-9.]+) tokens/s\))?", err)
    if not match or (generate > 1 and not match.group(3)):
        sys.exit(f"no load/prefill/decode timings in:\n{err}")
    rate = float(match.group(3)) if match.group(3) else None
    return rate, float(match.group(2)), float(match.group(1)), faults


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", metavar="NAME=VALUE",
                        help=f"overrides of the sizes {SIZES}")
    parser.add_argument("--build", default=os.path.join(TOP, "build"),
                        help="linnet's build folder (its bin/linnet)")
    parser.add_argument("--dtype", choices=["f32", "bf16", "both"], default="bf16")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repetitions", "-r", type=int, default=3)
    parser.add_argument("--prompt", type=int, default=16, help="prompt tokens")
    parser.add_argument("--generate", type=int, default=65,
                        help="tokens to generate (the first from the prefill)")
    parser.add_argument("--probe-mib", type=int, default=2048,
                        help="MiB of the bandwidth probe's buffer")
    parser.add_argument("--probe-passes", type=int, default=5)
    parser.add_argument("--cpu", default="native", help="linnet build --cpu")
    parser.add_argument("--work", default="/tmp", help="where the work folder is made")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()

    began = time.perf_counter()
    linnet, sizes, dtypes, threads = begin_run(args, SIZES, ("generate", args.generate))
    load_before = load_average()
    started = time.strftime("%Y-%m-%d %H:%M")

    work = tempfile.mkdtemp(prefix="linnet-decode-bandwidth-", dir=args.work)
    if not args.keep:
        atexit.register(shutil.rmtree, work, ignore_errors=True)

    log("compiling the bandwidth probe")
    source = os.path.join(work, "probe.c")
    with open(source, "w") as f:
        f.write(PROBE_SOURCE)
    probe_bin = os.path.join(work, "probe")
    run(NICE + ["cc", "-O3", "-march=native", "-fopenmp", source, "-o", probe_bin])

    prompt = [(7919 * i + 13) % sizes["Vocab"] for i in range(args.prompt)]
    rows, details = [], []
    for dtype in dtypes:
        checkpoint = os.path.join(work, f"ckpt-{dtype}")
        binds = [f"--bind={k}={v}" for k, v in sizes.items()]
        log(f"{dtype}: linnet init-checkpoint")
        start = time.perf_counter()
        run(NICE + [linnet, "init-checkpoint", MODEL, *binds, "--dtype", dtype, "--seed", "1",
                    "-o", checkpoint])
        init_s = time.perf_counter() - start
        total, active, parts = checkpoint_bytes(checkpoint, sizes)
        log(f"{dtype}: {total / 1e6:.1f} MB of parameters, {active / 1e6:.1f} MB active per "
            f"token")
        if active < MIN_ACTIVE:
            log(f"{dtype}: warning: {active / 1e6:.1f} MB active per token is under "
                f"{MIN_ACTIVE / 1e6:.0f} MB; the caches may hold much of it")

        binary = os.path.join(work, f"linnet-{dtype}")
        log(f"{dtype}: linnet build --cpu {args.cpu}")
        start = time.perf_counter()
        run(NICE + [linnet, "build", MODEL, "--bind", os.path.join(checkpoint, "config.json"),
                    "--bind=Batch=1", "--cpu", args.cpu, "-o", binary])
        build_s = time.perf_counter() - start

        details.append(f"{dtype}: checkpoint {total / 1e6:.1f} MB of parameter bytes "
                       f"(init-checkpoint {init_s:.0f} s), {active / 1e6:.1f} MB active per "
                       f"token; linnet build {build_s:.0f} s")
        for part, (t, a) in sorted(parts.items(), key=lambda p: -p[1][1]):
            details.append(f"    {part}: {t / 1e6:.1f} MB, {a / 1e6:.1f} MB per token")

        log(f"{dtype}: warm-up run, and a prefill-only run (--generate 1) for its page faults")
        decode(binary, checkpoint, prompt, args.generate, threads[0])
        prefill_faults = decode(binary, checkpoint, prompt, 1, threads[0])[3]
        rates = {t: [] for t in threads}
        prefills = {t: [] for t in threads}
        loads = {t: [] for t in threads}
        faults = {t: [] for t in threads}
        dram = {t: [] for t in threads}
        for r in range(args.repetitions):
            for t in threads:
                log(f"{dtype}: round {r + 1}/{args.repetitions}, {t} thread(s)")
                dram[t].append(probe(probe_bin, t, args.probe_passes, args.probe_mib))
                rate, prefill_s, load_s, fault = decode(binary, checkpoint, prompt,
                                                        args.generate, t)
                rates[t].append(rate)
                faults[t].append(fault)
                prefills[t].append(prefill_s)
                loads[t].append(load_s)
        mapped = {}
        files = sorted(f for f in os.listdir(checkpoint) if f.endswith(".safetensors"))
        largest = max(files, key=lambda f: os.path.getsize(os.path.join(checkpoint, f)))
        for t in threads:
            mapped[t] = probe(probe_bin, t, 3, os.path.join(checkpoint, largest))
        base = statistics.median(rates[threads[0]])
        for t in threads:
            tok = statistics.median(rates[t])
            rows.append((dtype, t, tok, active, active * tok / 1e9, max(dram[t]),
                         tok / base if t != threads[0] else None))
            details.append(
                f"{dtype} t={t}: decode {', '.join(f'{x:.1f}' for x in rates[t])} tok/s over the "
                f"rounds; DRAM probe {', '.join(f'{x:.1f}' for x in dram[t])} GB/s; the probe "
                f"over the mapped {largest} {mapped[t]:.1f} GB/s; load "
                f"{statistics.median(loads[t]):.3f} s, prefill of {args.prompt} tokens "
                f"{statistics.median(prefills[t]):.3f} s (medians)")
        # Page faults in the decode calls: first touches of mapped checkpoint pages (experts no
        # prompt token chose) and fresh anonymous pages (allocations that glibc's malloc maps
        # and unmaps on every call). On 1 Dec about 820 a token, nearly all the latter.
        decode_faults = statistics.median(faults[threads[0]]) - prefill_faults
        details.append(
            f"{dtype}: minor page faults: {prefill_faults} in a prefill-only run, "
            f"{statistics.median(faults[threads[0]]):.0f} in a t={threads[0]} run of "
            f"{args.generate}: about {decode_faults:.0f} during the decode calls "
            f"({decode_faults / (args.generate - 1):.0f} per token, "
            f"{decode_faults * 4096 / (args.generate - 1) / 1e6:.1f} MB a token if each is one "
            f"4 KiB page)")
        if not args.keep:
            shutil.rmtree(checkpoint, ignore_errors=True)  # before the next dtype's is written

    nproc, cpu, caches, thp = machine()
    print(f"machine: nproc {nproc}, CPU {cpu}; caches {caches}; transparent huge pages "
          f"[{thp}]; load average {load_before} at the start, {load_average()} at the end; "
          f"started {started}")
    print(f"linnet: {linnet}, `linnet build --cpu {args.cpu}` binary per dtype, Batch=1")
    print("sizes: " + " ".join(f"{k}={v}" for k, v in sizes.items())
          + f" ({4 * sizes['Groups']} layers)")
    last = args.prompt + args.generate - 2
    print(f"decode: `--prompt-tokens <{args.prompt} ids> --generate {args.generate} --timings`, "
          f"{args.generate - 1} decode calls at positions {args.prompt}..{last}, "
          f"median of {args.repetitions} runs; DRAM: sum of a {args.probe_mib} MiB uint64 array "
          f"(cc -O3 -march=native -fopenmp), best of {args.probe_passes} passes, best over the "
          f"rounds")
    for line in details:
        print("  " + line)
    print()
    print("dtype  threads  decode tok/s  active MB/token  achieved GB/s  DRAM read GB/s  "
          "achieved/DRAM  decode t/t1")
    for dtype, t, tok, act, achieved, bw, scaling in rows:
        scale = f"{scaling:11.2f}" if scaling is not None else f"{'-':>11s}"
        print(f"{dtype:5s}  {t:7d}  {tok:12.1f}  {act / 1e6:15.1f}  {achieved:13.2f}  "
              f"{bw:14.2f}  {achieved / bw:13.2f}  {scale}")
    print()
    verdicts = []
    for dtype, t, tok, act, achieved, bw, scaling in rows:
        verdicts.append(f"{dtype} t={t}: {achieved / bw:.1%} of DRAM "
                        f"({'meets' if achieved / bw >= TARGET_RATIO else 'below'} "
                        f"{TARGET_RATIO:.0%})")
        if scaling is not None:
            verdicts.append(f"{dtype} t={t} / t={threads[0]}: {scaling:.2f}x "
                            f"({'meets' if scaling >= TARGET_SCALING else 'below'} "
                            f"{TARGET_SCALING}x)")
    print("targets: " + "; ".join(verdicts))
    print(f"time: {time.perf_counter() - began:.0f} s in all")
    if args.keep:
        print(f"work folder: {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Load test of `--serve`: many streaming clients for a bounded time, next to llama-server.

    /usr/bin/python3 bench/serve_load.py [--build DIR] [--sizes small|NAME=VALUE...]
        [--clients 64] [--seconds 60] [--slots 16] [--prompt 64] [--max-tokens 64]
        [--llama-server] [--cache DIR]

Writes a random f32 checkpoint (`linnet init-checkpoint`, the CPU benchmark's small sizes) with
llama_cpp.py's generated tokenizer (every id has text; the same one llama-server gets), builds
it with `linnet build --bind Batch=SLOTS` and starts the binary with `--serve` on a loopback port.
Then CLIENTS threads each send streamed `/v1/completions` requests one after another for SECONDS
(a prompt of PROMPT token ids, distinct per request, greedy, MAX_TOKENS tokens, `ignore_eos`),
and the script waits for the requests in flight (at most 120 s more). It prints:

  requests   sent, answered whole (HTTP 200, every token, `data: [DONE]`), failed (any other
             status or a broken stream) and lost (sent, never answered); lost and failed must be 0
  tokens/s   generated tokens of whole answers (their usage) / the wall time from the first
             request to the last answer
  TTFT       time to the first streamed token, p50 / p90 / p99 over every answered request
  ITL        time between consecutive streamed chunks of a request, p50 / p90 / p99 (a token
             whose text is part of a character comes with the next one)

With --llama-server, the same load runs against llama.cpp's llama-server on the same checkpoint
(converted to GGUF by bench/llama_cpp.py's pipeline, its build extended with the server; about 15
minutes the first time), `-np SLOTS` slots of the same context, in the same run, and the table gets
a ratio column (linnet / llama-server for tokens/s; llama-server / linnet for latencies: above 1,
linnet is better).
"""
import argparse
import atexit
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import MODEL, NICE, TOP, begin_run, load_average, log, machine, run  # noqa: E402

SMALL = dict(Vocab=4096, H=256, Heads=4, KvHeads=2, HeadDim=64, KeyHeads=2, ValueHeads=4,
             KeyDim=32, ValueDim=32, Conv=256, Width=4, Experts=16, TopK=4, ExpertInner=128,
             SharedInner=128, Groups=2, MaxSeq=512)


def start_server(command, marker, timeout=600):
    """Starts a server; waits until its log has `marker` (llama-server) or a port line."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    deadline = time.time() + timeout
    lines = []
    while time.time() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        lines.append(line)
        if marker in line:
            threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()
            return process, lines
    process.kill()
    raise SystemExit("the server did not start:\n" + "".join(lines[-30:]))


class Load:
    """CLIENTS threads sending streamed completions for SECONDS."""

    def __init__(self, port, args, vocab):
        self.port, self.args, self.vocab = port, args, vocab
        self.lock = threading.Lock()
        self.sent = self.whole = self.failed = 0
        self.tokens = 0
        self.ttft, self.itl = [], []
        self.problems = []
        self.counter = 0

    def prompt(self):
        with self.lock:
            self.counter += 1
            n = self.counter
        return [(7919 * (n * 131 + i) + 13) % self.vocab for i in range(self.args.prompt)]

    def one(self):
        body = json.dumps({"prompt": self.prompt(), "max_tokens": self.args.max_tokens,
                           "temperature": 0, "stream": True, "ignore_eos": True,
                           "stream_options": {"include_usage": True}})
        with self.lock:
            self.sent += 1
        start = time.perf_counter()
        stamps = []
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
            connection.request("POST", "/v1/completions", body=body,
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            if response.status != 200:
                raise RuntimeError(f"HTTP {response.status}: {response.read()[:200]!r}")
            done = False
            generated = None
            while True:
                line = response.readline()
                if not line:
                    break
                line = line.strip()
                if not line.startswith(b"data: "):
                    continue
                payload = line[len(b"data: "):]
                if payload == b"[DONE]":
                    done = True
                    break
                event = json.loads(payload)
                if event.get("usage"):
                    generated = event["usage"]["completion_tokens"]
                if event.get("choices") and event["choices"][0].get("text") is not None \
                        and event["choices"][0].get("finish_reason") is None:
                    stamps.append(time.perf_counter())
            connection.close()
            # A token whose text is held back (part of a character) may send no chunk;
            # the usage counts every token.
            generated = len(stamps) if generated is None else generated
            if not done or generated != self.args.max_tokens or not stamps:
                raise RuntimeError(f"stream ended after {generated} tokens, done={done}")
        except Exception as error:  # noqa: BLE001 - every failure is counted and shown
            with self.lock:
                self.failed += 1
                if len(self.problems) < 5:
                    self.problems.append(str(error))
            return
        with self.lock:
            self.whole += 1
            self.tokens += self.args.max_tokens
            self.ttft.append(stamps[0] - start)
            self.itl.extend(b - a for a, b in zip(stamps, stamps[1:]))

    def run(self):
        stop_at = time.perf_counter() + self.args.seconds
        began = time.perf_counter()

        def client():
            while time.perf_counter() < stop_at:
                self.one()
        threads = [threading.Thread(target=client, daemon=True) for _ in range(self.args.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=max(1.0, stop_at + 120 - time.perf_counter()))
        self.wall = time.perf_counter() - began
        self.lost = self.sent - self.whole - self.failed
        return self


def percentiles(values):
    if len(values) < 2:
        return (float("nan"),) * 3
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[49], cuts[89], cuts[98]


def prepare_linnet(linnet, sizes, slots, work):
    checkpoint = os.path.join(work, "ckpt")
    binds = [f"--bind={k}={v}" for k, v in sizes.items()]
    log("linnet init-checkpoint (f32)")
    run(NICE + [linnet, "init-checkpoint", MODEL, *binds, "--dtype", "f32", "--seed", "1",
                "-o", checkpoint])
    # The tokenizer llama_cpp.py gives llama.cpp's GGUF: every id has text, on both servers.
    import llama_cpp
    llama_cpp.write_tokenizer(checkpoint, sizes["Vocab"])
    binary = os.path.join(work, "linnet-model")
    log(f"linnet build --bind Batch={slots}")
    run(NICE + [linnet, "build", MODEL, "--bind", os.path.join(checkpoint, "config.json"),
                f"--bind=Batch={slots}", "--cpu", "native", "-o", binary])
    return checkpoint, binary


def prepare_llama_server(args, sizes, work, checkpoint):
    """llama-server (llama_cpp.py's build of llama.cpp, with the server) and `checkpoint` as
    GGUF (llama_cpp.py's converter and tokenizer; the requests are ids)."""
    import llama_cpp
    llama_cpp.LLAMA_TARGETS.append("llama-server")
    llama_cpp.LLAMA_CMAKE_OPTIONS[:] = [o.replace("-DLLAMA_BUILD_SERVER=OFF",
                                                  "-DLLAMA_BUILD_SERVER=ON")
                                        for o in llama_cpp.LLAMA_CMAKE_OPTIONS]
    name, llama = llama_cpp.llama_source(args.cache)
    build, _ = llama_cpp.llama_build(args.cache, name, llama, 2)
    converter = llama_cpp.converter_python(args.cache)
    hf = os.path.join(work, "hf")
    os.makedirs(hf, exist_ok=True)
    for f in os.listdir(checkpoint):
        if f == "config.json" or f.endswith(".safetensors") or f.endswith(".index.json"):
            if not os.path.exists(os.path.join(hf, f)):
                os.symlink(os.path.join(checkpoint, f), os.path.join(hf, f))
    llama_cpp.write_tokenizer(hf, sizes["Vocab"])
    gguf = os.path.join(work, "model-f32.gguf")
    if not os.path.exists(gguf):
        shim = os.path.join(work, "convert_shim.py")
        with open(shim, "w") as f:
            f.write(llama_cpp.CONVERTER_SHIM)
        log("convert_hf_to_gguf.py --outtype f32")
        run(NICE + [converter, shim, llama, hf, "--outtype", "f32", "--no-mtp",
                    "--outfile", gguf])
    return os.path.join(build, "bin", "llama-server"), gguf


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(TOP, "build"))
    parser.add_argument("--sizes", nargs="+", default=["small"])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--slots", type=int, default=16)
    parser.add_argument("--prompt", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--llama-server", action="store_true")
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/linnet-bench"))
    parser.add_argument("--work", help="keep the checkpoint and binary here, and reuse them")
    parser.set_defaults(dtype="f32", threads="2")
    args = parser.parse_args()
    linnet, sizes, _, _ = begin_run(args, SMALL, ("decode", args.max_tokens), ("small",))
    if args.prompt + args.max_tokens > sizes["MaxSeq"]:
        raise SystemExit("--prompt and --max-tokens must fit MaxSeq")
    load_before = load_average()
    if args.work:
        work = args.work
        os.makedirs(work, exist_ok=True)
    else:
        work = tempfile.mkdtemp(prefix="linnet-serve-load-")
        atexit.register(shutil.rmtree, work, ignore_errors=True)
    checkpoint, binary = os.path.join(work, "ckpt"), os.path.join(work, "linnet-model")
    if not (args.work and os.path.exists(binary)):
        checkpoint, binary = prepare_linnet(linnet, sizes, args.slots, work)
    def measure(name, command, marker, port=None):
        """The load on the server `command` starts (its port from its start line if None)."""
        process, lines = start_server(command, marker)
        port = port or int(lines[-1].rsplit(":", 1)[1].split()[0])
        log(f"{name}: {args.clients} clients for {args.seconds:.0f} s on port {port}")
        try:
            return name, Load(port, args, sizes["Vocab"]).run()
        finally:
            process.terminate()
            process.wait(timeout=60)

    results = [measure("linnet", [binary, "--checkpoint", checkpoint, "--serve", "--port", "0"],
                       " on http://")]
    if args.llama_server:
        server, gguf = prepare_llama_server(args, sizes, work, checkpoint)
        port = 18000 + os.getpid() % 1000
        results.append(measure(
            "llama-server",
            [server, "-m", gguf, "--host", "127.0.0.1", "--port", str(port),
             "-np", str(args.slots), "-c", str(args.slots * sizes["MaxSeq"]), "-t", "2"],
            "listening on http://", port))

    print(f"machine: {machine()}; load average {load_before} before, {load_average()} after")
    print(f"model: {sizes}; {args.slots} slots; {args.clients} streaming clients for "
          f"{args.seconds:.0f} s; prompts of {args.prompt} ids, {args.max_tokens} greedy tokens")
    header = f"{'server':<14}{'sent':>6}{'whole':>7}{'failed':>7}{'lost':>6}{'tok/s':>9}" \
             f"{'TTFT p50':>10}{'p90':>8}{'p99':>8}{'ITL p50':>9}{'p90':>8}{'p99':>8}  (ms)"
    print(header)
    for name, load in results:
        ttft = [1000 * x for x in percentiles(load.ttft)]
        itl = [1000 * x for x in percentiles(load.itl)]
        print(f"{name:<14}{load.sent:>6}{load.whole:>7}{load.failed:>7}{load.lost:>6}"
              f"{load.tokens / load.wall:>9.1f}{ttft[0]:>10.1f}{ttft[1]:>8.1f}{ttft[2]:>8.1f}"
              f"{itl[0]:>9.2f}{itl[1]:>8.2f}{itl[2]:>8.2f}")
        for problem in load.problems:
            print(f"  {name}: {problem}")
    if len(results) == 2:
        ours, theirs = results[0][1], results[1][1]
        print(f"ratio (linnet / llama-server tokens/s): "
              f"{(ours.tokens / ours.wall) / (theirs.tokens / theirs.wall):.2f}; "
              f"TTFT p50 llama-server / linnet: "
              f"{percentiles(theirs.ttft)[0] / percentiles(ours.ttft)[0]:.2f}; "
              f"ITL p50 llama-server / linnet: "
              f"{percentiles(theirs.itl)[0] / percentiles(ours.itl)[0]:.2f}")
    else:
        print("llama-server: not run (--llama-server builds it and runs the same load)")
    bad = any(load.failed or load.lost for _, load in results)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

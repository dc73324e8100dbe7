#!/usr/bin/env python3
"""CPU time per decode of `perf profile` workloads, under glibc's malloc and under the perf
example's bump allocator (`PERF_ALLOC=count` / `bump`, examples/perf/alloc.rs), for decoders
compared on a machine too loaded for wall-clock ratios: CPU time (user + sys) does not count the
time other processes hold the cores.

    cargo build --release -p conneg-cbor --example perf
    python3 crates/conneg-cbor/benches/cpu_per_decode.py [--rounds 5] [--iters 40] \\
        dec-k8slist-typed dec-k8slist-typed-json dec-k8slist-value-direct dec-k8slist-value-json

Each round runs every workload under both allocators, alternately, once with one decode and once
with ITERS + 1 (the set-up and the first decode, on glibc in both modes, cancel out); prints the
median per decode of each, and each workload's ratio to the first one (> 1: slower than it)."""
import argparse, os, resource, statistics, subprocess, sys

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("workloads", nargs="+")
p.add_argument("--rounds", type=int, default=5)
p.add_argument("--iters", type=int, default=40)
p.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "target")), "release", "examples", "perf"))
args = p.parse_args()
if not os.path.exists(args.bin):
    sys.exit(f"cpu_per_decode.py: no {args.bin}; build the perf example first")


def cpu(workload, mode, iters):
    """CPU seconds of one `perf profile` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = dict(os.environ, PERF_ALLOC=mode, PERF_ITERS=str(iters))
    subprocess.run([args.bin, "profile", workload], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


modes = {"glibc": "count", "bump": "bump"}
per = {(w, m): [] for w in args.workloads for m in modes}
for _ in range(args.rounds):
    for m, env_mode in modes.items():
        for w in args.workloads:
            one = cpu(w, env_mode, 1)
            many = cpu(w, env_mode, args.iters + 1)
            per[(w, m)].append((many - one) / args.iters)
for m in modes:
    base = statistics.median(per[(args.workloads[0], m)])
    for w in args.workloads:
        med = statistics.median(per[(w, m)])
        t = f"{med * 1e3:8.2f} ms" if med >= 1e-3 else f"{med * 1e6:8.2f} µs"
        print(f"{m:5} {w:32} {t} per decode  x{med / base:.2f} of {args.workloads[0]}")

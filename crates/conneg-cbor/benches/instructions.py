#!/usr/bin/env python3
"""Instructions per decode (callgrind) of `perf profile` workloads, for one or more builds of the
perf example side by side: load-independent figures for a machine too busy for wall-clock ones.

    cargo build --release -p conneg-cbor --example perf
    cp target/release/examples/perf /tmp/perf-before     # then change the code and build again
    python3 crates/conneg-cbor/benches/instructions.py --bin before=/tmp/perf-before \\
        --bin after=target/release/examples/perf dec-k8scr-value-direct dec-k8scr-value-json

Each workload runs under callgrind twice per build, with PERF_ITERS=0 (the set-up alone) and with
PERF_ITERS=ITERS (default 200; 2 for the 1 MiB list and the stress corpus), collecting only the perf
example's closures (`--toggle-collect`, as docs/benchmarks.md says); the difference over ITERS is
one decode and the drop of its result, glibc's malloc included. With two builds or more, each
column after the first also shows its ratio to the first (< 1: fewer instructions)."""
import argparse, os, re, subprocess, sys

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("workloads", nargs="+")
p.add_argument("--bin", action="append", metavar="LABEL=PATH",
               help="a build of the perf example (repeatable; default: this target dir's)")
p.add_argument("--iters", type=int, default=200)
args = p.parse_args()
default = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "target")), "release", "examples", "perf")
bins = [b.split("=", 1) for b in (args.bin or [f"ours={default}"])]
for _, path in bins:
    if not os.path.exists(path):
        sys.exit(f"instructions.py: no {path}; build the perf example first")


def collected(path, workload, iters):
    """Instructions callgrind collects in the perf example's closures."""
    env = dict(os.environ, PERF_ITERS=str(iters))
    env.pop("PERF_ALLOC", None)
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        "--toggle-collect=*perf::main::{{closure}}*", path, "profile", workload],
                       env=env, capture_output=True, text=True, check=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if not m:
        sys.exit(f"instructions.py: no count from callgrind for {workload}:\n{r.stderr}")
    return int(m.group(1))


def human(n):
    return f"{n / 1e6:.2f} M" if n >= 1e6 else f"{n / 1e3:.1f} K"


print("| workload | " + " | ".join(label for label, _ in bins) + " |")
print("|---|" + "---:|" * len(bins))
for w in args.workloads:
    iters = 2 if "k8slist" in w or "stress" in w else args.iters
    cells, first = [], None
    for _, path in bins:
        n = (collected(path, w, iters) - collected(path, w, 0)) / iters
        first = first or n
        cells.append(human(n) + ("" if n is first else f" ({n / first:.3f})"))
    print(f"| {w} | " + " | ".join(cells) + " |", flush=True)

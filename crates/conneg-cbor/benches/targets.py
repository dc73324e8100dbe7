#!/usr/bin/env python3
"""Issue 35's targets, met or not, from the saved output of instructions.py and cpu_per_decode.py
(one table: instructions per decode, and CPU time under glibc's malloc and the bump allocator).

    W="dec-k8spod-typed-json dec-k8spod-typed ..."   # the workloads below, for each object
    python3 crates/conneg-cbor/benches/instructions.py $W > instr.md
    python3 crates/conneg-cbor/benches/cpu_per_decode.py --iters 10000 $W_POD > cpu.txt  # etc.
    python3 crates/conneg-cbor/benches/targets.py instr.md cpu.txt

Workloads it reads, for OBJECT in k8spod, k8scr, k8slist and stress: dec-OBJECT-typed[-WHO],
dec-OBJECT-value[-WHO] with WHO json, sonic, minicbor, cbor4ii, ciborium; dec-OBJECT-value-direct
(`value_from_slice`) and dec-OBJECT-typed-derive (the derived `Decode`). A peer missing from the
input (it cannot decode that object) is left out of the comparison and named. A workload in
several files takes the last file's figure, and in a table of several builds the last build's,
so a later run of the changed rows can be given after a run of every row. Each ratio is
the fastest other's cost over ours (> 1: ours is faster; each column takes its own fastest,
`against` names the first column's); a target is met when the ratio reaches its bar."""
import argparse, re, sys

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("files", nargs="+", help="instructions.py tables and cpu_per_decode.py outputs")
p.add_argument("--matrix", choices=["instr", "glibc", "bump"],
               help="instead, every decoder's cost on every object, in that measure")
args = p.parse_args()

UNIT = {"K": 1e3, "M": 1e6, "ms": 1e-3, "µs": 1e-6}
# cost[metric][workload]; metrics: "instr", "glibc", "bump".
cost = {"instr": {}, "glibc": {}, "bump": {}}
for path in args.files:
    for line in open(path, encoding="utf-8"):
        m = re.match(r"\| (dec-\S+) \|", line)
        if m:
            # The last build's column (instructions.py --bin before=... --bin after=...).
            n, unit = re.findall(r"([\d.]+) (K|M)", line)[-1]
            cost["instr"][m[1]] = float(n) * UNIT[unit]
            continue
        m = re.match(r"(glibc|bump)\s+(dec-\S+)\s+([\d.]+) (ms|µs) per decode", line)
        if m:
            cost[m[1]][m[2]] = float(m[3]) * UNIT[m[4]]
if not any(cost.values()):
    sys.exit("targets.py: no instructions.py or cpu_per_decode.py lines in the input")

OBJECTS = {"k8spod": "Pod", "k8scr": "custom resource", "k8slist": "1 MiB list",
           "stress": "stress corpus"}
CBOR_PEERS = ["minicbor", "cbor4ii", "ciborium"]
# (target, our workload suffix, the others' suffixes, bar, objects)
TARGETS = [
    ("`from_slice::<T>` typed >= fastest CBOR peer", "typed",
     [f"typed-{w}" for w in CBOR_PEERS], 1.0, list(OBJECTS)),
    ("`from_slice::<Value>` >= fastest CBOR peer", "value",
     [f"value-{w}" for w in CBOR_PEERS], 1.0, list(OBJECTS)),
    ("`value_from_slice` >= 1.4x serde_json", "value-direct", ["value-json"], 1.4,
     ["k8spod", "k8scr"]),
    ("`value_from_slice` >= every peer", "value-direct",
     ["value-json", "value-sonic"] + [f"value-{w}" for w in CBOR_PEERS], 1.0, ["stress"]),
    ("`value_from_slice` >= 1.0x serde_json", "value-direct", ["value-json"], 1.0, ["k8slist"]),
    ("derived `Decode` >= sonic-rs typed", "typed-derive", ["typed-sonic"], 1.0, list(OBJECTS)),
]


def ratio(metric, obj, ours, others):
    """The fastest other's cost over ours, which other that is, and the others missing."""
    c = cost[metric]
    mine = c.get(f"dec-{obj}-{ours}")
    have = [(c[f"dec-{obj}-{o}"], o) for o in others if f"dec-{obj}-{o}" in c]
    missing = [o for o in others if f"dec-{obj}-{o}" not in c]
    if mine is None or not have:
        return None, None, missing
    best, who = min(have)
    return best / mine, who, missing



def human(metric, n):
    if metric == "instr":
        return f"{n / 1e6:.2f} M" if n >= 1e6 else f"{n / 1e3:.1f} K"
    return f"{n * 1e3:.2f} ms" if n >= 1e-3 else f"{n * 1e6:.2f} µs"


if args.matrix:
    # (column, workload suffix after REPR); ours first, serde_json the baseline.
    cols = [("serde_json", "json"), ("sonic-rs", "sonic"), ("`from_slice`", ""),
            ("`decode` / `value_from_slice`", None), ("minicbor-serde", "minicbor"),
            ("cbor4ii", "cbor4ii"), ("ciborium", "ciborium")]
    c = cost[args.matrix]
    print("| object | repr | " + " | ".join(name for name, _ in cols) + " |")
    print("|---|---|" + "---:|" * len(cols))
    for obj, label in OBJECTS.items():
        for repr_, direct in (("typed", "derive"), ("value", "direct")):
            cells = []
            for _, who in cols:
                w = f"dec-{obj}-{repr_}" + (f"-{direct}" if who is None else f"-{who}" if who else "")
                cells.append(human(args.matrix, c[w]) if w in c else "n/a")
            print(f"| {label} | {repr_} | " + " | ".join(cells) + " |")
    sys.exit()

metrics = [m for m in ("instr", "glibc", "bump") if cost[m]]
heads = {"instr": "instructions", "glibc": "CPU, glibc", "bump": "CPU, bump"}
print("| target | object | against | " + " | ".join(heads[m] for m in metrics) + " |")
print("|---|---|---|" + "---:|" * len(metrics))
for name, ours, others, bar, objs in TARGETS:
    for obj in objs:
        cells, against, absent = [], "", None
        for m in metrics:
            r, who, missing = ratio(m, obj, ours, others)
            if r is None:
                cells.append("n/a")
                continue
            # Peers that no measured column has (they cannot decode the object).
            absent = set(missing) if absent is None else absent & set(missing)
            against = against or who.split("-", 1)[1]
            # Two decimals, three where two would round a miss up to the bar.
            shown = f"{r:.3f}" if r < bar <= round(r, 2) else f"{r:.2f}"
            cells.append(f"{shown}x " + ("met" if r >= bar else "**not met**"))
        note = f" (no {', '.join(sorted(o.split('-', 1)[1] for o in absent))})" if absent else ""
        print(f"| {name} | {OBJECTS[obj]} | {against}{note} | " + " | ".join(cells) + " |")

#!/usr/bin/env python3
"""Prints the Markdown table for docs/benchmarks.md from criterion's estimates of the last
`cargo bench -p conneg-cbor --bench codec` run (target/criterion/<object>/<op>_<codec>/<repr>),
including the decode comparison with the peer crates and the clone floor."""
import json, os, sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "target", "criterion")

OBJECTS = ["pod", "custom_resource", "pod_list_1mib", "stress_corpus"]

def median_ns(obj, op, codec, repr_):
    """The median of one benchmark; FileNotFoundError when it did not run."""
    p = os.path.join(root, obj, f"{op}_{codec}", repr_, "new", "estimates.json")
    with open(p) as f:
        return json.load(f)["median"]["point_estimate"]

def fmt(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"

print("| object | repr | JSON encode | CBOR det. encode | CBOR fast encode | det. speed-up | fast speed-up "
      "| JSON decode | CBOR decode | decode speed-up |")
print("|---|---|---|---|---|---|---|---|---|---|")
serde_rows = []
for obj in OBJECTS:
    for r in ["value", "typed"]:
        try:
            je = median_ns(obj, "encode", "json", r)
            de_ = median_ns(obj, "encode", "cbor_deterministic", r)
            fe = median_ns(obj, "encode", "cbor_fast", r)
            jd = median_ns(obj, "decode", "json", r)
            cd = median_ns(obj, "decode", "cbor", r)
        except FileNotFoundError as e:
            print(f"<!-- missing: {e.filename} -->")
            continue
        print(f"| {obj} | {r} | {fmt(je)} | {fmt(de_)} | {fmt(fe)} | {je / de_:.2f}x | {je / fe:.2f}x "
              f"| {fmt(jd)} | {fmt(cd)} | {jd / cd:.2f}x |")
        try:
            sd = median_ns(obj, "encode", "cbor_deterministic_serde_derive", r)
            serde_rows.append(f"| {obj} | {fmt(je)} | {fmt(de_)} ({je / de_:.2f}x) | {fmt(sd)} ({je / sd:.2f}x) |")
        except FileNotFoundError:
            pass
print()
if serde_rows:
    print("Deterministic encode of the typed structs by derive (speed-up against serde_json's encode):")
    print()
    print("| object | serde_json | `conneg_cbor::Serialize` | serde's `Serialize` |")
    print("|---|---|---|---|")
    print("\n".join(serde_rows))
    print()
print("`Value` encode against the floor (a plain tree walk, `naive_write`; fraction = floor time / encode time):")
print()
print("| object | naive writer | serde_json | CBOR det. | CBOR fast |")
print("|---|---|---|---|---|")
for obj in OBJECTS:
    try:
        nf = median_ns(obj, "encode", "naive_floor", "value")
        cells = [median_ns(obj, "encode", c, "value") for c in ["json", "cbor_deterministic", "cbor_fast"]]
    except FileNotFoundError:
        continue
    print(f"| {obj} | {fmt(nf)} | " + " | ".join(f"{fmt(t)} ({nf / t:.2f})" for t in cells) + " |")
print()
print("Parse and validate only (into `serde::de::IgnoredAny`, no tree built):")
print()
print("| object | JSON | CBOR | speed-up |")
print("|---|---|---|---|")
for obj in OBJECTS:
    try:
        jd = median_ns(obj, "decode", "json", "ignored")
        cd = median_ns(obj, "decode", "cbor", "ignored")
    except FileNotFoundError:
        continue
    print(f"| {obj} | {fmt(jd)} | {fmt(cd)} | {jd / cd:.2f}x |")

print()
print("Decode side by side (speed-up = serde_json time / that decoder's time; conneg-cbor reads the")
print("Kubernetes bytes, the peers and `cbor_text` the same data with text strings and no tag,")
print("sonic-rs the JSON;")
print("\"of floor\" = the clone floor's time / that decoder's time, 1.00 being the floor itself):")
print()
cols = [("cbor", "conneg-cbor"), ("cbor_direct", "conneg-cbor, `value_from_slice`"), ("cbor_derive", "conneg-cbor, derived `Decode`"),
        ("cbor_text", "conneg-cbor, text"), ("minicbor_serde", "minicbor-serde"),
        ("cbor4ii", "cbor4ii"), ("ciborium", "ciborium"), ("sonic_rs", "sonic-rs (JSON)"),
        ("sonic_rs_dom", "sonic-rs, own DOM"), ("clone_floor", "floor (clone)")]
print("| object | repr | serde_json | " + " | ".join(name for _, name in cols) + " |")
print("|---|---|---|" + "---|" * len(cols))
for obj in OBJECTS:
    for r in ["value", "typed"]:
        try:
            jd = median_ns(obj, "decode", "json", r)
        except FileNotFoundError:
            continue
        try:
            fl = median_ns(obj, "decode", "clone_floor", r)
        except FileNotFoundError:
            fl = None
        cells = []
        for codec, _ in cols:
            try:
                t = median_ns(obj, "decode", codec, r)
                floor = f", {fl / t:.2f} of floor" if fl and codec != "clone_floor" else ""
                cells.append(f"{fmt(t)} ({jd / t:.2f}x{floor})")
            except FileNotFoundError:
                cells.append("n/a")
        print(f"| {obj} | {r} | {fmt(jd)} | " + " | ".join(cells) + " |")

#!/usr/bin/env python3
"""Prints the Markdown tables for docs/benchmarks.md from criterion's estimates of the last
`cargo bench -p conneg-cbor --bench codec` run (target/criterion/<object>/<op>_<codec>/<repr>),
including the decode comparison with the peer crates and the clone floor.

    python3 crates/conneg-cbor/benches/report.py [CRITERION_DIR] [--brief] [--svg OUT.svg [--note TEXT]]

--brief prints only the speed-up tables that docs/benchmarks.md shows (the default prints every
table, times included, as docs/benchmarks-history.md quotes them).
With --svg it also draws the speed-ups over serde_json as an SVG bar chart (standard library
only): per object, decode and encode, typed and `Value`, one bar per codec, from the same
estimates as the tables; TEXT (the commit, the machine, the load) goes under the title."""
import argparse, json, math, os, sys
from xml.sax.saxutils import escape

args_parser = argparse.ArgumentParser(
    description="The tables (and with --svg a chart) of the conneg-cbor codec benchmark.")
args_parser.add_argument("root", nargs="?", default=os.path.join(os.environ.get(
    "CARGO_TARGET_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..", "target")),
    "criterion"), help="criterion's output directory (default: $CARGO_TARGET_DIR/criterion, "
    "else the workspace's target/criterion)")
args_parser.add_argument("--svg", metavar="OUT", help="also write the speed-up chart to OUT")
args_parser.add_argument("--note", default="", help="a line under the chart's title")
args_parser.add_argument("--brief", action="store_true",
                         help="only the speed-up tables of docs/benchmarks.md")
args = args_parser.parse_args()
root = args.root
if not os.path.isdir(root):
    sys.exit(f"report.py: no criterion output at {root}; run the codec bench first")

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

def full_tables():
    """Every table: encode, the serde-derive encode, the encode floor, `IgnoredAny`, and the
    decode comparison with every peer and the clone floor, times and ratios."""
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


def brief_tables():
    """The tables of docs/benchmarks.md: speed-up over serde_json per path, serde_json's median
    time beside it; "n/a" where that codec cannot read the object or was not run."""
    def cell(base, obj, op, codec, r):
        try:
            return f"{base / median_ns(obj, op, codec, r):.2f}x"
        except FileNotFoundError:
            return "n/a"
    for op, title, cols in (
            ("encode", "Encode", [("cbor_deterministic", "deterministic", None),
                                  ("cbor_deterministic_serde_derive",
                                   "deterministic, serde's derive", "typed"),
                                  ("cbor_fast", "fast", None),
                                  ("naive_floor", "floor (naive tree walk)", "value")]),
            ("decode", "Decode", [("cbor", "`from_slice`", None),
                                  ("cbor_derive", "`decode` (derived)", "typed"),
                                  ("cbor_direct", "`value_from_slice`", "value"),
                                  ("minicbor_serde", "minicbor-serde", None),
                                  ("cbor4ii", "cbor4ii", None), ("ciborium", "ciborium", None),
                                  ("sonic_rs", "sonic-rs", None),
                                  ("clone_floor", "floor (clone)", None)])):
        print(f"{title}, speed-up over serde_json (serde_json time / that path's time):")
        print()
        print("| object | repr | serde_json | " + " | ".join(n for _, n, _ in cols) + " |")
        print("|---|---|---:|" + "---:|" * len(cols))
        for obj in OBJECTS:
            for r in ("typed", "value"):
                try:
                    base = median_ns(obj, op, "json", r)
                except FileNotFoundError:
                    continue
                cells = [cell(base, obj, op, c, r) if only in (None, r) else "" for c, _, only in cols]
                print(f"| {obj} | {'Value' if r == 'value' else r} | {fmt(base)} | "
                      + " | ".join(cells) + " |")
        print()
    print("Parse and validate only (into `IgnoredAny`), CBOR speed-up over serde_json: " + ", ".join(
        f"{obj} {cell(median_ns(obj, 'decode', 'json', 'ignored'), obj, 'decode', 'cbor', 'ignored')}"
        for obj in OBJECTS
        if os.path.exists(os.path.join(root, obj, "decode_json", "ignored"))) + ".")


# The chart: one row per object; in each, decode (left) and encode (right), each with a typed
# and a `Value` cluster of bars, one bar per codec, height = serde_json's time / the codec's.
# Decode series: (criterion codec, legend, colour, reprs it runs for).
DECODE_SERIES = [
    ("cbor", "conneg-cbor from_slice (serde)", "#1f5fa8", ("typed", "value")),
    ("cbor_derive", "conneg-cbor decode (derived Decode)", "#0b8f7a", ("typed",)),
    ("cbor_direct", "conneg-cbor value_from_slice", "#5aa7e0", ("value",)),
    ("minicbor_serde", "minicbor-serde", "#b5b5b5", ("typed", "value")),
    ("cbor4ii", "cbor4ii", "#8c8c8c", ("typed", "value")),
    ("ciborium", "ciborium", "#5e5e5e", ("typed", "value")),
    ("sonic_rs", "sonic-rs (SIMD JSON, serde)", "#e08a1e", ("typed", "value")),
]
ENCODE_SERIES = [
    ("cbor_deterministic", "conneg-cbor deterministic (typed: derived conneg_cbor::Serialize)",
     "#1f5fa8", ("typed", "value")),
    ("cbor_deterministic_serde_derive", "conneg-cbor deterministic, serde's derive", "#9cc3e6",
     ("typed",)),
    ("cbor_fast", "conneg-cbor fast", "#7b4fa0", ("typed", "value")),
]


def speedups(obj, op, series):
    """{repr: [(series index, speed-up or None when that codec did not run)]} for one object,
    None when serde_json itself did not run for it."""
    out = {}
    for r in ("typed", "value"):
        try:
            base = median_ns(obj, op, "json", r)
        except FileNotFoundError:
            continue
        bars = []
        for i, (codec, _, _, reprs) in enumerate(series):
            if r not in reprs:
                continue
            try:
                bars.append((i, base / median_ns(obj, op, codec, r)))
            except FileNotFoundError:
                bars.append((i, None))
        out[r] = bars
    return out or None


def svg_chart(note):
    """The chart as SVG text: objects in a grid of two columns, each a decode panel and an
    encode panel on one scale, with serde_json's 1.0x as a dashed line."""
    bar, gap, cluster_gap, panel_gap = 19, 3, 24, 44
    plot_h, axis_w, cell_gap = 160, 40, 40
    rows = [(obj, speedups(obj, "decode", DECODE_SERIES), speedups(obj, "encode", ENCODE_SERIES))
            for obj in OBJECTS]
    rows = [r for r in rows if r[1] or r[2]]
    if not rows:
        sys.exit("report.py: no decode or encode estimates to chart")
    top = max([v for _, d, e in rows for p in (d, e) if p for bars in p.values()
               for _, v in bars if v is not None] + [1.0])
    # The next half step above the tallest bar with room for its label.
    ymax = max(2.0, math.ceil((top + 0.3) * 2) / 2)

    def cluster_w(series, r):
        n = sum(r in s[3] for s in series)
        return n * bar + (n - 1) * gap

    def panel_w(series):
        return cluster_w(series, "typed") + cluster_gap + cluster_w(series, "value")

    dec_w, enc_w = panel_w(DECODE_SERIES), panel_w(ENCODE_SERIES)
    cell_w = axis_w + dec_w + panel_gap + enc_w + 24
    cell_h = 34 + plot_h + 30
    cols = 2  # also for one object, so that the title and the legend fit
    grid_rows = (len(rows) + cols - 1) // cols
    head, margin = 70, 16
    legend_h = 20 + 16 * max(len(DECODE_SERIES), len(ENCODE_SERIES))
    width = margin * 2 + cols * cell_w + (cols - 1) * cell_gap
    height = head + grid_rows * cell_h + legend_h + margin
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
         f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">',
         f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
         f'<text x="{margin}" y="24" font-size="16" font-weight="bold">conneg-cbor: speed-up over '
         'serde_json (serde_json time / codec time; above the red line is faster)</text>',
         f'<text x="{margin}" y="42" font-size="11" fill="#444">criterion medians of '
         'cargo bench -p conneg-cbor --bench codec; the peers read the same data as CBOR with '
         'text strings, sonic-rs the JSON; the peers have no encode benchmark</text>']
    if note:
        o.append(f'<text x="{margin}" y="58" font-size="11" fill="#444">{escape(note)}</text>')

    def y_of(v, y0):
        return y0 + plot_h - min(v, ymax) / ymax * plot_h

    def vertical_text(x, y, text, extra=""):
        o.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="9.5" {extra}'
                 f'transform="rotate(-90 {x:.1f} {y:.1f})">{escape(text)}</text>')

    def panel(x0, y0, title, series, per_repr):
        o.append(f'<text x="{x0}" y="{y0 - 6}" font-size="11" fill="#333">{title}</text>')
        for r, label, cx in (("typed", "typed", x0),
                             ("value", "Value", x0 + cluster_w(series, "typed") + cluster_gap)):
            bars = (per_repr or {}).get(r)
            if not bars:
                continue
            o.append(f'<text x="{cx + cluster_w(series, r) / 2:.1f}" y="{y0 + plot_h + 14}" '
                     f'font-size="11" text-anchor="middle">{label}</text>')
            for k, (i, v) in enumerate(bars):
                x = cx + k * (bar + gap)
                mid = x + bar / 2 + 3.5
                if v is None:
                    vertical_text(mid, y0 + plot_h - 3, "n/a", 'fill="#888" ')
                    continue
                y = y_of(v, y0)
                o.append(f'<rect x="{x}" y="{y:.1f}" width="{bar}" height="{y0 + plot_h - y:.1f}" '
                         f'fill="{series[i][2]}"><title>{escape(series[i][1])}, {label}: '
                         f'{v:.2f}x</title></rect>')
                vertical_text(mid, y - 3, f"{v:.2f}" + ("+" if v > ymax else ""))

    for n, (obj, dec, enc) in enumerate(rows):
        ox = margin + (n % cols) * (cell_w + cell_gap)
        y0 = head + (n // cols) * cell_h + 34
        left = ox + axis_w
        right = left + dec_w + panel_gap + enc_w
        o.append(f'<text x="{ox}" y="{y0 - 22}" font-size="13" font-weight="bold">'
                 f'{escape(obj)}</text>')
        for step in range(int(ymax * 2) + 1):
            v = step / 2
            y = y_of(v, y0)
            o.append(f'<line x1="{left - 4}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" '
                     f'stroke="{"#e4e4e4" if v else "#999"}"/>')
            o.append(f'<text x="{left - 7}" y="{y + 3:.1f}" font-size="9.5" '
                     f'text-anchor="end">{v:.1f}x</text>')
        panel(left, y0, "decode", DECODE_SERIES, dec)
        panel(left + dec_w + panel_gap, y0, "encode", ENCODE_SERIES, enc)
        y1 = y_of(1.0, y0)
        o.append(f'<line x1="{left - 4}" y1="{y1:.1f}" x2="{right}" y2="{y1:.1f}" '
                 'stroke="#c0392b" stroke-width="1.3" stroke-dasharray="6,3"/>')
    ly = head + grid_rows * cell_h + 6
    for c, (title, series) in enumerate((("decode", DECODE_SERIES), ("encode", ENCODE_SERIES))):
        x = margin + c * (width // 2)
        o.append(f'<text x="{x}" y="{ly}" font-size="11" font-weight="bold">{title}</text>')
        for j, (_, name, colour, _) in enumerate(series):
            y = ly + 6 + j * 16
            o.append(f'<rect x="{x}" y="{y}" width="11" height="11" fill="{colour}"/>')
            o.append(f'<text x="{x + 16}" y="{y + 9.5}" font-size="10.5">{escape(name)}</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"


(brief_tables if args.brief else full_tables)()
if args.svg:
    with open(args.svg, "w") as f:
        f.write(svg_chart(args.note))
    print(f"\n<!-- chart written to {args.svg} -->", file=sys.stderr)

"""Structural comparison of two ONNX files, aspect by aspect, as tests/options/test_options_golden.cpp
compares the CLI's files with torch.onnx.export's (same aspects, same rules)."""
import onnx


def load(data):
    return onnx.load_from_string(data) if isinstance(data, (bytes, bytearray)) else onnx.load(data)


def _init_names(g):
    return {i.name for i in g.initializer}


def _dims(vi):
    out = []
    for d in vi.type.tensor_type.shape.dim:
        out.append(str(d.dim_value) if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else "?")
    return out


def _ops(g, custom_only=False):
    s = []
    for n in g.node:
        if n.op_type in ("Constant", "Identity") or (custom_only and not n.domain):
            continue
        s.append(f"{n.domain}::{n.op_type}" if n.domain else n.op_type)
    return sorted(s)


def _attrs(n):
    m = {}
    for a in n.attribute:
        if a.type == onnx.AttributeProto.INT:
            v = str(a.i)
        elif a.type == onnx.AttributeProto.FLOAT:
            v = "%f" % a.f
        elif a.type == onnx.AttributeProto.STRING:
            v = a.s.decode()
        elif a.type == onnx.AttributeProto.INTS:
            v = "".join(f"{x}," for x in a.ints)
        else:
            v = f"type{a.type}"
        m[a.name] = v
    return m


def _operand_kinds(g):
    inits = _init_names(g)
    inputs = {i.name for i in g.input if i.name not in inits}
    producer = {o: n for n in g.node for o in n.output}

    def kind(v):
        if not v:
            return "graph"
        if v in inputs:
            return "input"
        if v in inits:
            return "weight"
        n = producer.get(v)
        if n is None:
            return "?"
        return kind(n.input[0]) if n.op_type == "Identity" else "graph"

    out = {}
    for n in g.node:
        if n.op_type in ("Constant", "Identity"):
            continue
        out.setdefault(n.op_type, []).append(",".join(kind(i) for i in n.input))
    return out


def _opsets(m):
    return {("" if o.domain == "ai.onnx" else o.domain): o.version for o in m.opset_import}


def compare(ours, ref, aspects):
    """Returns the list of differences (empty when the files agree on every aspect)."""
    og, rg = ours.graph, ref.graph
    oi, ri = _init_names(og), _init_names(rg)
    diffs = []

    def check(what, a, b):
        if a != b:
            diffs.append(f"{what}: oxport {a!r} != torch.onnx {b!r}")

    for what in aspects:
        if what == "opsets":
            check(what, _opsets(ours), _opsets(ref))
        elif what == "ir_version":
            check(what, ours.ir_version, ref.ir_version)
        elif what == "producer":
            check(what, ours.producer_name, "oxport")
        elif what == "input_count":
            check(what, len(og.input), len(rg.input))
        elif what == "output_count":
            check(what, len(og.output), len(rg.output))
        elif what == "ops":
            check(what, _ops(og), _ops(rg))
        elif what == "custom_ops":
            check(what, _ops(og, True), _ops(rg, True))
        elif what == "input_dims":
            check(what, [_dims(v) for v in og.input if v.name not in oi], [_dims(v) for v in rg.input if v.name not in ri])
        elif what == "output_dims":
            check(what, [_dims(v) for v in og.output], [_dims(v) for v in rg.output])
        elif what == "input_names":
            check(what, [v.name for v in og.input if v.name not in oi], [v.name for v in rg.input if v.name not in ri])
        elif what == "output_names":
            check(what, [v.name for v in og.output], [v.name for v in rg.output])
        elif what.startswith(("input_names:", "output_names:")):
            k = int(what.split(":")[1])
            a = [v.name for v in og.input if v.name not in oi] if what[0] == "i" else [v.name for v in og.output]
            b = [v.name for v in rg.input if v.name not in ri] if what[0] == "i" else [v.name for v in rg.output]
            check(what, a[1:] if k < 0 else a[:k], b[1:] if k < 0 else b[:k])
        elif what == "initializer_count":
            check(what, len(og.initializer), len(rg.initializer))
        elif what == "param_names":
            check(what, {n for n in oi if not n.startswith("onnx::") and "_bnfold" not in n},
                  {n for n in ri if not n.startswith("onnx::")})
        elif what.startswith("has_ops:"):
            a, b = _ops(og), _ops(rg)
            for op in what[len("has_ops:"):].split(","):
                if op not in a:
                    diffs.append(f"{what}: oxport has no {op}")
                if op not in b:
                    diffs.append(f"{what}: torch.onnx has no {op}")
        elif what == "init_inputs":
            check(what, sum(i.name in oi for i in og.input), sum(i.name in ri for i in rg.input))
        elif what.startswith("attrs:"):
            op, _, only = what[len("attrs:"):].partition(":")
            a = [_attrs(n) for n in og.node if n.op_type == op]
            b = [_attrs(n) for n in rg.node if n.op_type == op]
            if only:
                check(what, sorted(m.get(only, "") for m in a), sorted(m.get(only, "") for m in b))
            else:
                check(what, a, b)
        elif what.startswith(("node_outputs:", "node_inputs:")):
            op = what.split(":")[1]
            a = next((n for n in og.node if n.op_type == op), None)
            b = next((n for n in rg.node if n.op_type == op), None)
            if a is None or b is None:
                diffs.append(f"{what}: no {op} node (oxport {a is not None}, torch.onnx {b is not None})")
            elif what.startswith("node_outputs"):
                check(what, len(a.output), len(b.output))
            else:
                check(what, len(a.input), len(b.input))
        elif what == "operand_kinds":
            a, b = _operand_kinds(og), _operand_kinds(rg)
            compared = 0
            for op, kinds in a.items():
                if op in b and len(b[op]) == len(kinds):
                    check(f"operands of the {op} nodes", kinds, b[op])
                    compared += 1
            if not compared:
                diffs.append("operand_kinds: no op type in common")
        elif what == "runs":
            pass  # checked by the caller with verify=True
        else:
            diffs.append(f"unknown aspect {what}")
    return diffs

"""`oxport verify --localize` on clean and deliberately broken files (label localize).

    test_localize.py OXPORT MODELS_DIR WORK_DIR CASE

MODELS_DIR holds make_models.py's fixtures. Each model is exported with its preset and nothing
else (the defaults users get). A clean file must localize to no divergence (exit 0); a copy broken
in one known ONNX node (an initializer scaled, an op swapped, an attribute changed, a wrong
broadcast) must localize to exactly that node: exit 1, the first divergence's ONNX nodes name it,
its compared inputs agree and its output does not. A file without oxport's mapping gets a message
saying what can be compared. CASE is one of the names in CASES, "clean:<model>", "unmapped", or
"export" (exports the three models into WORK_DIR; the other cases reuse those files).

    test_localize.py swap-first IN.onnx OUT.onnx OP NEW_OP   (for the studio's test) writes IN with
    its first OP node made a NEW_OP node and prints that node's name.
"""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def node(model, op_type, name):
    """The main-graph node of that op named `name`, else the one whose name ends with it."""
    found = [n for n in model.graph.node if n.op_type == op_type and n.name == name]
    found = found or [n for n in model.graph.node if n.op_type == op_type and n.name.endswith(name)]
    assert len(found) == 1, f"expected one {op_type} node named *{name}, found {[n.name for n in found]}"
    return found[0]


def initializer(model, name):
    for t in model.graph.initializer:
        if t.name == name:
            return t
    raise AssertionError(f"no initializer {name}")


def scale_input(op_type, name, index, factor):
    def brk(m):
        n = node(m, op_type, name)
        t = initializer(m, n.input[index])
        uses = sum(list(x.input).count(t.name) for x in m.graph.node)
        assert uses == 1, f"{t.name} is shared by {uses} nodes; pick a weight of one node"
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * np.float32(factor), t.name))
        return n.name
    return brk


def swap_op(op_type, name, new_op):
    def brk(m):
        n = node(m, op_type, name)
        n.op_type = new_op
        return n.name
    return brk


def set_attr(op_type, name, attr, value):
    def brk(m):
        n = node(m, op_type, name)
        kept = [a for a in n.attribute if a.name != attr]
        del n.attribute[:]
        n.attribute.extend(kept + [helper.make_attribute(attr, value)])
        return n.name
    return brk


def reshape_weight(op_type, name, index, shape):
    """The same numbers with another shape: they broadcast along the wrong axis."""
    def brk(m):
        n = node(m, op_type, name)
        t = initializer(m, n.input[index])
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).reshape(shape), t.name))
        for i in m.graph.input:  # the weight is a graph input too (keep_initializers_as_inputs)
            if i.name == t.name:
                i.CopyFrom(helper.make_tensor_value_info(t.name, t.data_type, list(shape)))
        return n.name
    return brk


def swap_in_loop(op_type, new_op):
    """An op inside the Loop body: the divergence is the Loop's (its body is not a graph value)."""
    def brk(m):
        loop = node(m, "Loop", "/Loop")
        body = [a.g for a in loop.attribute if a.name == "body"][0]
        inner = [n for n in body.node if n.op_type == op_type]
        assert len(inner) == 1
        inner[0].op_type = new_op
        return loop.name
    return brk


CASES = {
    # A small ResNet-like CNN (batch norms folded into their convolutions).
    "cnn.scaled_initializer": ("cnn", scale_input("Conv", "/layer2/conv1/Conv", 1, 1.5)),
    "cnn.swapped_op": ("cnn", swap_op("Relu", "/layer1/Relu", "Sigmoid")),
    "cnn.changed_attribute": ("cnn", set_attr("Gemm", "/fc/Gemm", "alpha", 2.0)),
    "cnn.wrong_broadcast": ("cnn", reshape_weight("Mul", "/Mul", 1, (1, 1, 16))),
    # A 2-layer transformer encoder.
    "transformer.scaled_initializer": ("transformer", scale_input("MatMul", "/encoder.1/linear1/MatMul", 1, 1.5)),
    "transformer.swapped_op": ("transformer", swap_op("Relu", "/encoder.0/Relu", "Sigmoid")),
    "transformer.changed_attribute": ("transformer", set_attr("Softmax", "/encoder.1/self_attn/Softmax", "axis", 1)),
    "transformer.wrong_broadcast": ("transformer", reshape_weight("Mul", "/Mul", 1, (32, 1))),
    # A scripted model with a data-dependent while loop.
    "loop.scaled_initializer": ("loop", scale_input("Gemm", "/inp/Gemm", 1, 1.5)),
    "loop.swapped_op": ("loop", swap_op("Relu", "/Relu", "Sigmoid")),
    "loop.changed_attribute": ("loop", set_attr("Softmax", "/Softmax", "axis", 0)),
    "loop.wrong_broadcast": ("loop", reshape_weight("Mul", "/Mul", 1, (16, 1))),
    "loop.in_body": ("loop", swap_in_loop("Tanh", "Sigmoid")),
}


def export(ox, models, work, name):
    out = os.path.join(work, name + ".onnx")
    if not os.path.exists(out):
        r = subprocess.run([ox, "export", os.path.join(models, name + ".pt"), "-o", out, "--preset",
                            os.path.join(models, name + ".preset.json")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr + r.stdout
    return out


def localize(ox, models, name, onnx_file):
    r = subprocess.run([ox, "verify", os.path.join(models, name + ".pt"), onnx_file, "--preset",
                        os.path.join(models, name + ".preset.json"), "--localize", "--json"],
                       capture_output=True, text=True)
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"no JSON on stdout (exit {r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.returncode, doc["localize"]


def swap_first(src, dst, op_type, new_op):
    """For the studio's test: the first `op_type` node becomes `new_op`; prints its name."""
    m = onnx.load(src)
    n = [x for x in m.graph.node if x.op_type == op_type][0]
    n.op_type = new_op
    onnx.save(m, dst)
    print(n.name)


def main():
    if sys.argv[1] == "swap-first":
        swap_first(*sys.argv[2:6])
        return
    ox, models, work, case = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    if case == "export":
        for name in ("cnn", "transformer", "loop"):
            f = os.path.join(work, name + ".onnx")
            if os.path.exists(f):
                os.remove(f)
            export(ox, models, work, name)
        return
    if case.startswith("clean:"):
        name = case.split(":", 1)[1]
        code, loc = localize(ox, models, name, export(ox, models, work, name))
        assert loc["first_divergence"] is None, json.dumps(loc["first_divergence"], indent=1)
        assert loc["mapped"] and loc["compared"] > 0, loc
        assert code == 0, f"exit {code}"
        print(f"{name}: {loc['compared']} values compared, no divergence")
        return
    if case == "unmapped":
        m = onnx.load(export(ox, models, work, "cnn"))
        del m.metadata_props[:]
        f = os.path.join(work, "cnn.unmapped.onnx")
        onnx.save(m, f)
        code, loc = localize(ox, models, "cnn", f)
        assert not loc["mapped"] and "no TorchScript mapping" in loc["message"], loc
        assert "graph outputs" in loc["message"], loc
        assert loc["first_divergence"] is None and code == 0, (code, loc)
        print(loc["message"])
        return
    name, brk = CASES[case]
    m = onnx.load(export(ox, models, work, name))
    target = brk(m)
    f = os.path.join(work, case + ".onnx")
    onnx.save(m, f)
    code, loc = localize(ox, models, name, f)
    first = loc["first_divergence"]
    assert first is not None, f"{case}: no divergence found ({loc['compared']} values compared)"
    assert target in first["onnx_nodes"], \
        f"{case}: broke {target}, but the first divergence is {first['torch_node']} ({first['module']}) " \
        f"made of {first['onnx_nodes']}"
    assert first["inputs_agree"], f"{case}: an input of the first divergence already differs: {first['inputs']}"
    assert any(o["compared"] and not o["passed"] for o in first["outputs"]), first
    assert code == 1, f"exit {code}"
    print(f"{case}: broke {target}; first divergence {first['torch_node']} in '{first['module']}' "
          f"at {first['source']}, max rel {first['max_rel_error']:.3g}, {first['share_off']:.1%} off; "
          f"{loc['divergent_nodes'] - 1} more downstream")


if __name__ == "__main__":
    main()

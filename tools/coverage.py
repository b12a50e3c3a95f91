#!/usr/bin/env python3
"""Writes docs/COVERAGE.md: oxport's converters (from `oxport ops --json`, i.e. the registry
itself) side by side with torch.onnx 1.13's op lists per opset.

usage: tools/coverage.py [path/to/oxport] [out.md]
"""
import json
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF = os.path.join(REPO, "..", "shared", "reference")


def torch_name(n):
    # The reference lists lose one trailing underscore of dunder names: aten::__and_ is __and__.
    if n.startswith("aten::__") and n.endswith("_") and not n.endswith("__"):
        return n + "_"
    return n


# Ops that user-style modules record (probed by tracing small modules of the kind detection,
# segmentation, video, transformer and diffusion code has: einops-style rearranges, tensordot,
# diag_embed, take_along_dim, nan-aware reductions, grid_sample/affine_grid, ...). Listed per run
# as converted or still missing, from the registry, so the list cannot go stale.
PROBED = sorted("""
aten::tensordot aten::diagonal aten::diag aten::diag_embed aten::trace aten::tensor_split
aten::take_along_dim aten::aminmax aten::logcumsumexp aten::cummax aten::cummin aten::cumprod
aten::searchsorted aten::bucketize aten::histc aten::nansum aten::nanmean aten::kthvalue
aten::median aten::nanmedian aten::mode aten::quantile aten::cdist aten::pdist aten::triu_indices
aten::tril_indices aten::roll aten::rot90 aten::flip aten::fliplr aten::flipud aten::meshgrid
aten::unique_consecutive aten::grid_sampler aten::affine_grid_generator aten::pixel_unshuffle
aten::channel_shuffle aten::native_channel_shuffle aten::im2col aten::col2im aten::unfold
aten::max_unpool2d aten::max_unpool3d aten::scatter_reduce aten::index_reduce
aten::_upsample_nearest_exact2d aten::_upsample_bilinear2d_aa aten::xlogy aten::logaddexp
aten::logit aten::sinc aten::hypot aten::deg2rad aten::rad2deg aten::signbit aten::sgn
aten::copysign aten::fmax aten::fmin aten::heaviside aten::isclose aten::isin aten::erfc
aten::erfinv aten::exp2 aten::float_power aten::lgamma aten::digamma aten::i0 aten::special_entr
aten::hstack aten::vstack aten::dstack aten::column_stack aten::hsplit aten::vsplit aten::dsplit
aten::atleast_1d aten::atleast_2d aten::atleast_3d aten::ravel aten::narrow_copy
aten::new_empty_strided aten::addmv aten::addr aten::addbmm aten::linalg_multi_dot
aten::linalg_matrix_power aten::bilinear aten::kron aten::block_diag aten::cartesian_prod
aten::renorm aten::dist aten::diff aten::trapezoid aten::msort aten::ldexp aten::gcd aten::lcm
aten::bincount aten::linalg_inv aten::linalg_solve aten::linalg_cholesky aten::linalg_qr
aten::linalg_pinv aten::linalg_vander aten::fft_rfft aten::stft aten::margin_ranking_loss
aten::soft_margin_loss aten::poisson_nll_loss aten::triplet_margin_loss
aten::cosine_embedding_loss aten::embedding_renorm_ aten::round
aten::hinge_embedding_loss aten::multi_margin_loss aten::_upsample_nearest_exact1d
aten::_upsample_nearest_exact3d aten::mT aten::mH aten::adjoint aten::einsum aten::special_psi
aten::special_erfinv
torchvision::deform_conv2d torchvision::ps_roi_align
aten::linalg_qr aten::qr aten::pinverse aten::fft_hfft aten::fft_ihfft aten::fft_hfft2 aten::fft_ihfft2
aten::fft_fftfreq aten::fft_rfftfreq aten::isposinf aten::isneginf aten::isreal aten::logaddexp2
aten::special_xlog1py aten::special_ndtr aten::special_i0e aten::special_i1 aten::special_i1e
aten::special_ndtri aten::special_log_ndtr aten::special_erfcx aten::linalg_solve_triangular
aten::triangular_solve aten::cholesky_solve aten::cholesky_inverse
""".split())

# What tools/op_sweep.py (torch.*, Tensor methods, torch.special/linalg/fft called as real code calls
# them, exported with default options and verified) finds still kept as custom nodes, and why.
NOT_YET = {
    "aten::nextafter": "needs the float's bit pattern: ONNX has no bitcast between floats and integers up to opset 17",
    "aten::frexp": "the exponent and mantissa need the bit pattern; Floor(Log2(|x|)) is off by one next to powers of two and for subnormals",
    "aten::polygamma": "n >= 1 needs the Hurwitz zeta series libtorch sums (no ONNX op); digamma (n = 0) converts",
    "aten::special_zeta / special_bessel_j0 / special_bessel_j1":
        "libtorch evaluates Cephes rational/Chebyshev approximations (no ONNX op); a port is a graph of ~30 nodes per function, not yet written (i0e, i1, i1e, ndtri, erfcx and log_ndtr convert)",
    "aten::segment_reduce (lengths or offsets computed from the inputs, or along axis > 0)":
        "converts for constant 1-D lengths along axis 0 (a Slice and Reduce per segment); other forms need the segment count at run time",
    "aten::linalg_lstsq": "full-rank least squares is pinv(A) B (ops_linalg_qr.cpp); LAPACK's gelsy driver pivots columns for rank-deficient A, not yet written",
    "aten::linalg_eigh / eigvalsh / svd / svdvals / matrix_rank / matrix_norm (2, nuc) / cond":
        "iterative (Jacobi sweeps): an unrolled fixed sweep count is close but not exact, and eigenvector signs must follow LAPACK's; closed forms exist for 2x2 only. Not yet",
    "aten::linalg_matrix_exp": "libtorch's scaling-and-squaring degree depends on the matrix norm at run time (a data-dependent branch), not yet written",
    "aten::linalg_householder_product / linalg_lu_factor": "exact unrolled for small n (the reflector products and elimination of ops_linalg_qr.cpp / ops_linalg_small.cpp), not yet written",
    "aten::linalg_eigvals / linalg_eig": "complex results of a real matrix (an iterative QR algorithm), not yet",
}


def refused_ops():
    """The ops oxport refuses on purpose, with why and what to do: core/src/convert/refused.def,
    the same table the driver reads (error `refused-op`)."""
    text = open(os.path.join(REPO, "core", "src", "convert", "refused.def")).read()
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))
    out = []
    for m in re.finditer(r"OXPORT_REFUSED_OP\((.*?)\)\s*(?=OXPORT_REFUSED_OP|$)", text, re.S):
        strings = re.findall(r'"((?:[^"\\]|\\.)*)"\s*(,?)', m.group(1), re.S)
        # Adjacent string literals concatenate: split the argument list at the commas between them.
        args, cur = [], ""
        for lit, sep in strings:
            cur += lit
            if sep == ",":
                args.append(cur)
                cur = ""
        args.append(cur)
        if len(args) == 3:
            out.append(tuple(args))
    return out


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "build", "app", "oxport")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(REPO, "docs", "COVERAGE.md")
    ops = json.loads(subprocess.check_output([exe, "ops", "--json"]))
    ours = {o["op"]: o for o in ops}
    ref_path = os.path.join(REF, "torch_onnx_ops_by_opset.json")
    if not os.path.exists(ref_path):
        ref_path = os.path.join(REPO, "docs", "torch_onnx_ops_by_opset.json")
    # aten ops only: the prim:: and quantized:: entries of torch.onnx's registry are handled by
    # oxport's frontend (prim) or are out of scope (quantized:: kernels of converted int8 models).
    by_opset = {int(k): sorted(torch_name(n) for n in v if n.startswith("aten::"))
                for k, v in json.load(open(ref_path)).items()}
    lines = ["# Operator coverage", "",
             "Generated by `tools/coverage.py` from `oxport ops --json` (the converter registry itself) and",
             "torch.onnx 1.13's symbolic registry (the aten ops it has a converter for at each opset; some of",
             "those are stubs that only reject the op).", "",
             "Whole models: [ZOO.md](ZOO.md), every torchvision 0.14 model (but the detectors) exported,",
             "checked and run in ONNX Runtime by `tools/zoo-full.sh`.", ""]
    lines.append("| opset | torch.onnx ops | oxport converts of those | share | oxport ops in all |")
    lines.append("| --- | --- | --- | --- | --- |")
    for opset in range(9, 18):
        ref = by_opset.get(opset, [])
        have = [n for n in ref if n in ours and opset in ours[n]["opsets"]]
        total = sum(1 for o in ops if opset in o["opsets"])
        share = f"{100.0 * len(have) / len(ref):.0f}%" if ref else "-"
        lines.append(f"| {opset} | {len(ref)} | {len(have)} | {share} | {total} |")
    ref11 = by_opset.get(11, [])
    missing = [n for n in ref11 if n not in ours or 11 not in ours[n]["opsets"]]
    refused = refused_ops()
    refused_names = {r[0] for r in refused}
    # Per op, the opsets (9-17) at which torch.onnx converts it and oxport does not.
    gaps = {}
    for opset in range(9, 18):
        for n in by_opset.get(opset, []):
            if n not in ours or opset not in ours[n]["opsets"]:
                gaps.setdefault(n, []).append(opset)
    lines += ["", "## What torch.onnx converts and oxport does not, per opset (9-17)", ""]
    if gaps:
        lines += ["| op | opsets | why |", "| --- | --- | --- |"]
        for n, sets in sorted(gaps.items()):
            rng = f"{sets[0]}-{sets[-1]}" if len(sets) == sets[-1] - sets[0] + 1 and len(sets) > 1 else ", ".join(map(str, sets))
            why = "refused, see below" if n in refused_names else "not yet"
            lines.append(f"| `{n}` | {rng} | {why} |")
    else:
        lines.append("(none)")
    lines += ["", "## Refused, and why", "",
              "Ops torch.onnx 1.13 lists that oxport refuses on purpose (error `refused-op`); the table is",
              "`core/src/convert/refused.def`, which the converter driver reads too.", "",
              "| op | why | what to do |", "| --- | --- | --- |"]
    for op, why, action in refused:
        lines.append(f"| `{op}` | {why} | {action} |")
    extra = sorted(n for n in ours if n not in set(sum(by_opset.values(), [])))
    below = sorted(n for n in ours if n in set(sum(by_opset.values(), [])) and
                   min(o for o, v in by_opset.items() if n in v and o >= 9) > ours[n]["opsets"][0])
    lines += ["", "## oxport only: what torch.onnx 1.13 does not convert (at any opset)", ""]
    lines.append(", ".join(f"`{n}`" for n in extra) if extra else "(none)")
    lines += ["", "## Probed: ops user-style modules record", "",
              "Small modules of the kind real models contain, traced and exported (the list is `PROBED`",
              "in tools/coverage.py; each converted op has a numeric case in tests/ops).", "",
              "| op | oxport opsets | torch.onnx 1.13 opsets |", "| --- | --- | --- |"]
    for n in PROBED:
        theirs = [o for o, v in by_opset.items() if n in v and o >= 9]
        t = f"{min(theirs)}-17" if theirs else "-"
        mine = f"{ours[n]['opsets'][0]}-{ours[n]['opsets'][-1]}" if n in ours else "not yet"
        lines.append(f"| `{n}` | {mine} | {t} |")
    lines += ["", "## Not yet, and why", "",
              "Calls that `tools/op_sweep.py` finds exported as custom nodes (kept under ONNX_FALLTHROUGH, so",
              "ONNX Runtime cannot run the file); the table is `NOT_YET` in tools/coverage.py.", "",
              "| op | why |", "| --- | --- |"]
    for n, why in NOT_YET.items():
        lines.append(f"| `{n}` | {why} |")
    lines += ["", "## oxport converts at lower opsets than torch.onnx 1.13", "",
              "| op | torch.onnx from | oxport from |", "| --- | --- | --- |"]
    for n in below:
        lines.append(f"| `{n}` | {min(o for o, v in by_opset.items() if n in v and o >= 9)} | {ours[n]['opsets'][0]} |")
    lines += ["", "## Every oxport converter", "", "| op | opsets | family |", "| --- | --- | --- |"]
    for o in ops:
        rng = f"{o['opsets'][0]}-{o['opsets'][-1]}" if len(o["opsets"]) > 1 else str(o["opsets"][0])
        lines.append(f"| `{o['op']}` | {rng} | {o['family']} |")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import nn_sweep_gaps  # noqa: E402
    lines += nn_sweep_gaps.markdown()
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {out}: {len(ops)} oxport ops; opset 11: {len(ref11) - len(missing)}/{len(ref11)} of torch.onnx's")


if __name__ == "__main__":
    main()

"""Sweep of torch.* functions, Tensor methods, torch.special, torch.linalg and torch.fft as real code
calls them: each case is a tiny module over exact inputs (.npy), traced (or scripted), exported by
the CLI with default options and --verify, and the result listed (torch.nn / nn.functional are the
"opsweep" sweep's). Run: /usr/bin/python3 tools/op_sweep.py [--oxport build/app/oxport] [-k substr]
[--markdown]. One export at a time (the machine is shared); about 2-4 s a case."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from torch import nn

torch.set_num_threads(1)
rng = np.random.default_rng(20)
F32 = np.float32


def randn(*s):
    return rng.standard_normal(s).astype(F32)


def pos(*s):
    return rng.uniform(0.2, 3.0, s).astype(F32)


def unit(*s):
    return rng.uniform(0.05, 0.95, s).astype(F32)


def ints(lo, hi, *s):
    return rng.integers(lo, hi, s).astype(np.int64)


def nans(*s):
    a = randn(*s)
    a.flat[:: 3] = np.nan
    return a


def sorted_row(n):
    return np.sort(randn(n))


X = randn(3, 4)
X3 = randn(2, 3, 4)
SQ = randn(2, 3, 3)
# name, function of the inputs, inputs, mode ("trace" or "script")
CASES = [
    # arithmetic
    ("float_power", lambda x: torch.float_power(x.abs() + 1, 2.5).float(), [X]),
    ("copysign", lambda x, y: torch.copysign(x, y), [X, randn(3, 4)]),
    ("nextafter", lambda x, y: torch.nextafter(x, y), [X, randn(3, 4)]),
    ("heaviside", lambda x, y: torch.heaviside(x, y), [X, randn(3, 4)]),
    ("hypot", lambda x, y: torch.hypot(x, y), [X, randn(3, 4)]),
    ("logaddexp", lambda x, y: torch.logaddexp(x, y), [X, randn(3, 4)]),
    ("logaddexp2", lambda x, y: torch.logaddexp2(x, y), [X, randn(3, 4)]),
    ("rad2deg", lambda x: torch.rad2deg(x), [X]),
    ("deg2rad", lambda x: torch.deg2rad(x), [X]),
    ("nan_to_num", lambda x: torch.nan_to_num(torch.log(x), nan=0.0, posinf=1e3), [X]),
    ("signbit", lambda x: torch.signbit(x), [X]),
    ("sgn", lambda x: torch.sgn(x), [X]),
    ("frexp", lambda x: torch.frexp(x), [pos(3, 4) * 10]),
    ("ldexp", lambda x, e: torch.ldexp(x, e), [X, ints(-3, 4, 3, 4)]),
    ("gcd", lambda a, b: torch.gcd(a, b), [ints(0, 50, 3, 4), ints(0, 50, 3, 4)]),
    ("lcm", lambda a, b: torch.lcm(a, b), [ints(1, 20, 3, 4), ints(1, 20, 3, 4)]),
    ("bitwise_and", lambda a, b: a & b, [ints(0, 64, 3, 4), ints(0, 64, 3, 4)]),
    ("bitwise_or", lambda a, b: a | b, [ints(0, 64, 3, 4), ints(0, 64, 3, 4)]),
    ("bitwise_xor", lambda a, b: a ^ b, [ints(0, 64, 3, 4), ints(0, 64, 3, 4)]),
    ("bitwise_not", lambda a: ~a, [ints(-64, 64, 3, 4)]),
    ("shift_left", lambda a: a << 2, [ints(0, 64, 3, 4)]),
    ("shift_right", lambda a: a >> 1, [ints(0, 64, 3, 4)]),
    ("remainder", lambda x: torch.remainder(x, 0.7), [X]),
    ("fmod", lambda x: torch.fmod(x, 0.7), [X]),
    ("floor_divide", lambda x: torch.floor_divide(x, 0.7), [X]),
    ("true_divide", lambda x, y: torch.true_divide(x, y), [X, pos(3, 4)]),
    ("lerp", lambda x, y: torch.lerp(x, y, 0.3), [X, randn(3, 4)]),
    ("clamp_tensor", lambda x, lo: torch.clamp(x, min=lo), [X, randn(3, 4)]),
    ("fmax", lambda x, y: torch.fmax(x, y), [nans(3, 4), randn(3, 4)]),
    ("xlogy", lambda x, y: torch.xlogy(x, y), [X, pos(3, 4)]),
    ("logit", lambda x: torch.logit(x, eps=1e-6), [unit(3, 4)]),
    ("sinc", lambda x: torch.sinc(x), [X]),
    ("i0", lambda x: torch.i0(x), [X]),
    ("lgamma", lambda x: torch.lgamma(x), [pos(3, 4)]),
    ("digamma", lambda x: torch.digamma(x), [pos(3, 4)]),
    ("polygamma1", lambda x: torch.polygamma(1, x), [pos(3, 4)]),
    ("mvlgamma", lambda x: torch.mvlgamma(x + 2, 2), [pos(3, 4)]),
    ("erfinv", lambda x: torch.erfinv(x), [unit(3, 4) - 0.5]),
    ("angle", lambda x: torch.angle(x), [X]),
    ("trunc", lambda x: torch.trunc(x * 3), [X]),
    ("frac", lambda x: torch.frac(x * 3), [X]),
    ("isin", lambda a, b: torch.isin(a, b), [ints(0, 10, 3, 4), ints(0, 10, 5)]),
    ("isclose", lambda x, y: torch.isclose(x, y, atol=0.5), [X, randn(3, 4)]),
    ("isfinite", lambda x: torch.isfinite(torch.log(x)), [X]),
    ("isneginf", lambda x: torch.isneginf(torch.log(x.abs() - x.abs())), [X]),
    ("isreal", lambda x: torch.isreal(x), [X]),
    # torch.special
    ("special_erfcx", lambda x: torch.special.erfcx(x), [X]),
    ("special_i0e", lambda x: torch.special.i0e(x), [X]),
    ("special_i1", lambda x: torch.special.i1(x), [X]),
    ("special_i1e", lambda x: torch.special.i1e(x), [X]),
    ("special_xlog1py", lambda x, y: torch.special.xlog1py(x, y), [X, pos(3, 4)]),
    ("special_ndtr", lambda x: torch.special.ndtr(x), [X]),
    ("special_ndtri", lambda x: torch.special.ndtri(x), [unit(3, 4)]),
    ("special_log_ndtr", lambda x: torch.special.log_ndtr(x), [X]),
    ("special_entr", lambda x: torch.special.entr(x), [X]),
    ("special_expit", lambda x: torch.special.expit(x), [X]),
    ("special_log1p", lambda x: torch.special.log1p(x), [pos(3, 4)]),
    ("special_round", lambda x: torch.special.round(x * 3), [X]),
    ("special_logsumexp", lambda x: torch.special.logsumexp(x, 1), [X]),
    ("special_softmax", lambda x: torch.special.softmax(x, 1), [X]),
    ("special_log_softmax", lambda x: torch.special.log_softmax(x, 1), [X]),
    ("special_gammaln", lambda x: torch.special.gammaln(x), [pos(3, 4)]),
    ("special_multigammaln", lambda x: torch.special.multigammaln(x + 2, 2), [pos(3, 4)]),
    ("special_polygamma", lambda x: torch.special.polygamma(2, x), [pos(3, 4)]),
    ("special_zeta", lambda x, q: torch.special.zeta(x + 1.5, q), [pos(3, 4), pos(3, 4)]),
    ("special_bessel_j0", lambda x: torch.special.bessel_j0(x), [X]),
    ("special_bessel_j1", lambda x: torch.special.bessel_j1(x), [X]),
    # reductions
    ("nansum", lambda x: torch.nansum(x, 1), [nans(3, 4)]),
    ("nanmean", lambda x: torch.nanmean(x, 1), [nans(3, 4)]),
    ("nanmedian", lambda x: torch.nanmedian(x), [nans(3, 4)]),
    ("nanmedian_dim", lambda x: torch.nanmedian(x, 1), [nans(3, 4)]),
    ("median", lambda x: torch.median(x), [X]),
    ("median_dim", lambda x: torch.median(x, 1), [X]),
    ("quantile", lambda x: torch.quantile(x, 0.3, dim=1), [X]),
    ("quantile_vec", lambda x: torch.quantile(x, torch.tensor([0.25, 0.5, 0.9]), dim=1), [X]),
    ("nanquantile", lambda x: torch.nanquantile(x, 0.3, dim=1), [nans(3, 4)]),
    ("kthvalue", lambda x: torch.kthvalue(x, 2, 1), [X]),
    ("mode", lambda x: torch.mode(x, 1), [ints(0, 3, 3, 4).astype(F32)]),
    ("logcumsumexp", lambda x: torch.logcumsumexp(x, 1), [X]),
    ("cummax", lambda x: torch.cummax(x, 1), [X]),
    ("cummin", lambda x: torch.cummin(x, 1), [X]),
    ("cumprod", lambda x: torch.cumprod(x, 1), [X]),
    ("aminmax", lambda x: torch.aminmax(x, dim=1), [X]),
    ("amax", lambda x: torch.amax(x, (0, 1)), [X3]),
    ("std_mean", lambda x: torch.std_mean(x, 1), [X]),
    ("var_mean_corr", lambda x: torch.var_mean(x, 1, correction=0), [X]),
    ("std_corr", lambda x: torch.std(x, 1, correction=2), [X]),
    ("count_nonzero", lambda x: torch.count_nonzero(torch.relu(x), 1), [X]),
    ("logsumexp", lambda x: torch.logsumexp(x, (0, 2)), [X3]),
    ("prod_dim", lambda x: torch.prod(x, 1), [X]),
    ("all_dim", lambda x: torch.all(x > 0, 1), [X]),
    ("norm_p", lambda x: torch.norm(x, 3, 1), [X]),
    ("dist", lambda x, y: torch.dist(x, y, 1.5), [X, randn(3, 4)]),
    ("histc", lambda x: torch.histc(x, 5, -2, 2), [X]),
    ("bincount", lambda a: torch.bincount(a, minlength=6), [ints(0, 5, 10)]),
    ("trapz", lambda y: torch.trapz(y, dim=1), [X]),
    ("trapezoid_x", lambda y, x: torch.trapezoid(y, x, dim=1), [X, np.sort(randn(3, 4), 1)]),
    ("cumulative_trapezoid", lambda y: torch.cumulative_trapezoid(y, dim=1), [X]),
    # searching, sorting
    ("searchsorted", lambda s, v: torch.searchsorted(s, v), [sorted_row(6), randn(5)]),
    ("searchsorted_right", lambda s, v: torch.searchsorted(s, v, right=True), [sorted_row(6), randn(5)]),
    ("bucketize", lambda v, b: torch.bucketize(v, b), [X, sorted_row(5)]),
    ("argsort", lambda x: torch.argsort(x, 1, descending=True), [X]),
    ("msort", lambda x: torch.msort(x), [X]),
    ("topk", lambda x: torch.topk(x, 2, 1), [X]),
    ("unique", lambda a: torch.unique(a, return_counts=True), [ints(0, 5, 10)]),
    ("nonzero", lambda x: torch.nonzero(x > 0), [X]),
    ("nonzero_tuple", lambda x: torch.nonzero(x > 0, as_tuple=True), [X]),
    ("argwhere", lambda x: torch.argwhere(x > 0), [X]),
    ("masked_select", lambda x: torch.masked_select(x, x > 0), [X]),
    # shape and index
    ("diff", lambda x: torch.diff(x, dim=1), [X]),
    ("diff_n2", lambda x: torch.diff(x, n=2, dim=1, prepend=x[:, :1]), [X]),
    ("cross", lambda a, b: torch.cross(a, b, dim=1), [randn(4, 3), randn(4, 3)]),
    ("linalg_cross", lambda a, b: torch.linalg.cross(a, b), [randn(4, 3), randn(4, 3)]),
    ("renorm", lambda x: torch.renorm(x, 2, 0, 1.0), [X]),
    ("vander", lambda x: torch.vander(x, 4), [randn(5)]),
    ("tril_indices", lambda x: x[torch.tril_indices(3, 4)[0], torch.tril_indices(3, 4)[1]], [X]),
    ("triu_indices", lambda x: x[torch.triu_indices(3, 4, 1)[0], torch.triu_indices(3, 4, 1)[1]], [X]),
    ("block_diag", lambda a, b: torch.block_diag(a, b), [randn(2, 2), randn(3, 1)]),
    ("cdist", lambda a, b: torch.cdist(a, b), [randn(5, 3), randn(4, 3)]),
    ("cosine_similarity", lambda a, b: torch.cosine_similarity(a, b, 1), [X, randn(3, 4)]),
    ("corrcoef", lambda x: torch.corrcoef(x), [X]),
    ("cov", lambda x: torch.cov(x), [X]),
    ("cov_corr", lambda x: torch.cov(x, correction=0), [X]),
    ("rot90", lambda x: torch.rot90(x, 1, (1, 2)), [X3]),
    ("take_along_dim", lambda x, i: torch.take_along_dim(x, i, 1), [X, ints(0, 4, 3, 2)]),
    ("take", lambda x, i: torch.take(x, i), [X, ints(0, 12, 5)]),
    ("index_reduce_prod", lambda x, i, s: x.index_reduce(0, i, s, "prod"), [randn(4, 3), ints(0, 4, 5), randn(5, 3)]),
    ("index_reduce_amax", lambda x, i, s: x.index_reduce(0, i, s, "amax", include_self=False),
     [randn(4, 3), ints(0, 4, 5), randn(5, 3)]),
    ("index_reduce_mean", lambda x, i, s: x.index_reduce(0, i, s, "mean"), [randn(4, 3), ints(0, 4, 5), randn(5, 3)]),
]
for red in ("sum", "prod", "mean", "amax", "amin"):
    for inc in (True, False):
        CASES.append((f"scatter_reduce_{red}_{'self' if inc else 'noself'}",
                      (lambda r, i: lambda x, idx, s: x.scatter_reduce(1, idx, s, r, include_self=i))(red, inc),
                      [randn(3, 4), ints(0, 4, 3, 5), randn(3, 5)]))
CASES += [
    ("segment_reduce", lambda d, l: torch.segment_reduce(d, "sum", lengths=l), [randn(6), np.array([2, 3, 1])]),
    ("flip", lambda x: torch.flip(x, (0, 1)), [X]),
    ("roll", lambda x: torch.roll(x, (1, -1), (0, 1)), [X]),
    ("tile", lambda x: torch.tile(x, (2, 1)), [X]),
    ("repeat_interleave", lambda x: torch.repeat_interleave(x, 2, 1), [X]),
    ("repeat_interleave_t", lambda x, r: torch.repeat_interleave(x, r, 0), [X, np.array([1, 2, 0])]),
    ("kron", lambda a, b: torch.kron(a, b), [randn(2, 2), randn(2, 3)]),
    ("tensordot", lambda a, b: torch.tensordot(a, b, ([1], [0])), [X, randn(4, 2)]),
    ("inner", lambda a, b: torch.inner(a, b), [X, randn(5, 4)]),
    ("trace", lambda x: torch.trace(x), [X]),
    ("tril", lambda x: torch.tril(x, -1), [X]),
    ("diagflat", lambda x: torch.diagflat(x), [randn(4)]),
    ("diagonal_scatter", lambda x, d: torch.diagonal_scatter(x, d), [X, randn(3)]),
    ("narrow", lambda x: torch.narrow(x, 1, 1, 2), [X]),
    ("unflatten", lambda x: x.unflatten(1, (2, 2)), [X]),
    ("movedim", lambda x: torch.movedim(x, 0, 2), [X3]),
    ("cartesian_prod", lambda a, b: torch.cartesian_prod(a, b), [randn(3), randn(2)]),
    ("combinations", lambda a: torch.combinations(a, 2), [randn(4)]),
    ("meshgrid", lambda a, b: torch.meshgrid(a, b, indexing="xy"), [randn(3), randn(2)]),
    ("histogram", lambda x: torch.histogram(x, 4), [X]),
    ("clone_contig", lambda x: x.t().contiguous(), [X]),
    # linalg
    ("linalg_qr", lambda a: torch.linalg.qr(a), [randn(2, 4, 3)]),
    ("linalg_qr_complete", lambda a: torch.linalg.qr(a, mode="complete"), [randn(2, 4, 3)]),
    ("linalg_qr_r", lambda a: torch.linalg.qr(a, mode="r")[1], [randn(2, 4, 3)]),
    ("linalg_pinv", lambda a: torch.linalg.pinv(a), [randn(2, 4, 3)]),
    ("pinverse", lambda a: torch.pinverse(a), [randn(3, 2)]),
    ("linalg_lstsq", lambda a, b: torch.linalg.lstsq(a, b).solution, [randn(5, 3), randn(5, 2)]),
    ("linalg_eigh", lambda a: torch.linalg.eigh(a @ a.transpose(-1, -2)), [SQ]),
    ("linalg_eigvalsh", lambda a: torch.linalg.eigvalsh(a @ a.transpose(-1, -2)), [SQ]),
    ("linalg_svd", lambda a: torch.linalg.svd(a), [SQ]),
    ("linalg_svdvals", lambda a: torch.linalg.svdvals(a), [SQ]),
    ("svd", lambda a: torch.svd(a), [SQ]),
    ("linalg_det", lambda a: torch.linalg.det(a), [SQ]),
    ("linalg_slogdet", lambda a: torch.linalg.slogdet(a), [SQ]),
    ("logdet", lambda a: torch.logdet(a @ a.transpose(-1, -2)), [SQ]),
    ("linalg_inv", lambda a: torch.linalg.inv(a), [SQ]),
    ("linalg_solve", lambda a, b: torch.linalg.solve(a, b), [SQ, randn(2, 3)]),
    ("linalg_solve_triangular", lambda a, b: torch.linalg.solve_triangular(torch.triu(a) + 3 * torch.eye(3), b, upper=True),
     [SQ, randn(2, 3, 2)]),
    ("triangular_solve", lambda b, a: torch.triangular_solve(b, torch.tril(a) + 3 * torch.eye(3), upper=False)[0],
     [randn(2, 3, 2), SQ]),
    ("linalg_cholesky", lambda a: torch.linalg.cholesky(a @ a.transpose(-1, -2) + torch.eye(3)), [SQ]),
    ("cholesky_solve", lambda b, a: torch.cholesky_solve(b, torch.linalg.cholesky(a @ a.transpose(-1, -2) + torch.eye(3))),
     [randn(2, 3, 2), SQ]),
    ("cholesky_inverse", lambda a: torch.cholesky_inverse(torch.linalg.cholesky(a @ a.transpose(-1, -2) + torch.eye(3))), [SQ[0]]),
    ("linalg_matrix_rank", lambda a: torch.linalg.matrix_rank(a), [SQ]),
    ("linalg_matrix_exp", lambda a: torch.linalg.matrix_exp(a), [SQ]),
    ("linalg_matrix_norm_nuc", lambda a: torch.linalg.matrix_norm(a, "nuc"), [SQ]),
    ("linalg_matrix_norm_2", lambda a: torch.linalg.matrix_norm(a, 2), [SQ]),
    ("linalg_cond", lambda a: torch.linalg.cond(a), [SQ]),
    ("linalg_vecdot", lambda a, b: torch.linalg.vecdot(a, b), [X, randn(3, 4)]),
    ("linalg_householder_product", lambda a, t: torch.linalg.householder_product(a, t), [randn(4, 3), randn(3)]),
    ("linalg_lu_factor", lambda a: torch.linalg.lu_factor(a)[0], [SQ]),
    ("linalg_eig", lambda a: torch.view_as_real(torch.linalg.eigvals(a)), [SQ]),
    # fft
    ("fft_hfft", lambda x: torch.fft.hfft(torch.view_as_complex(x)), [randn(3, 5, 2)]),
    ("fft_ihfft", lambda x: torch.view_as_real(torch.fft.ihfft(x).resolve_conj()), [randn(3, 8)]),
    ("fft_hfft2", lambda x: torch.fft.hfft2(torch.view_as_complex(x)), [randn(4, 5, 2)]),
    ("fft_ihfft2", lambda x: torch.view_as_real(torch.fft.ihfft2(x).resolve_conj()), [randn(4, 8)]),
    ("fft_fftfreq", lambda x: x * torch.fft.fftfreq(4, 0.1), [X]),
    ("fft_rfftfreq", lambda x: x * torch.fft.rfftfreq(6, 0.5), [X]),
    ("fft_fftfreq_dyn", lambda x: torch.fft.fftfreq(x.shape[1]) * x, [X]),
    ("fft_rfft_norm", lambda x: torch.view_as_real(torch.fft.rfft(x, norm="ortho")), [randn(3, 8)]),
    ("fft_fftshift", lambda x: torch.fft.fftshift(x), [X]),
    ("stft", lambda x: torch.view_as_real(torch.stft(x, 16, 4, window=torch.hann_window(16), return_complex=True)),
     [randn(2, 64)]),
]


def export_case(oxport, name, fn, inputs, tmp):
    class M(nn.Module):
        def forward(self, *a):
            return fn(*a)

    tens = [torch.from_numpy(a.copy()) for a in inputs]
    try:
        with torch.no_grad():
            fn(*tens)
            m = torch.jit.trace(M().eval(), tuple(tens), check_trace=False)
    except Exception as e:  # noqa: BLE001 - the sweep reports every failure
        return "trace", str(e).splitlines()[0][:160]
    pt = os.path.join(tmp, name + ".pt")
    m.save(pt)
    cmd = [oxport, "export", pt, "-o", os.path.join(tmp, name + ".onnx"), "--verify"]
    for i, a in enumerate(inputs):
        npy = os.path.join(tmp, f"{name}_{i}.npy")
        np.save(npy, a)
        cmd += ["--arg", '{"tensor": {"fill": {"npy": "%s"}}}' % npy]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    out = (p.stderr + p.stdout).strip().splitlines()
    # Under ONNX_FALLTHROUGH an op without a converter is kept as a custom node and the export
    # succeeds with verification skipped: that is a missing op, not a pass.
    kept = [l.split("warning[fallback-op]: ")[1].split(" was kept")[0] for l in out if "warning[fallback-op]" in l]
    if kept:
        return "kept", "kept as custom nodes: " + ", ".join(kept)
    if any("warning[verify-skipped]" in l for l in out):
        return "unverified", next(l for l in out if "warning[verify-skipped]" in l)[:200]
    if p.returncode == 0:
        return "ok", ""
    err = next((l for l in out if "error" in l.lower()), out[0] if out else "rc %d" % p.returncode)
    return "fail", err.strip()[:200]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oxport", default="build/app/oxport")
    ap.add_argument("-k", default="", help="only the cases whose name contains one of these (comma-separated)")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn, inputs in CASES:
            if a.k and not any(k in name for k in a.k.split(",")):
                continue
            status, why = export_case(a.oxport, name, fn, inputs, tmp)
            results.append((name, status, why))
            print(f"{status:5s} {name:32s} {why}", flush=True)
    bad = [r for r in results if r[1] != "ok"]
    print(f"\n{len(results) - len(bad)} of {len(results)} export and verify", flush=True)
    if a.markdown:
        print("\n| case | result | first error |\n| --- | --- | --- |")
        for name, status, why in bad:
            print(f"| `{name}` | {status} | {why.replace('|', '/')} |")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())

import torch

from optest import Fn, T, case

# torch.fft and stft as exact DFT products (ops_spectral.cpp). Complex results leave the graph as
# torch.view_as_real pairs or through abs(). Tolerance grows with the DFT length (float32 sums of n terms).
R = torch.view_as_real
OPS = (9, 11, 17)
HANN = torch.hann_window(16)


def tol(n):
    return 1e-5 * n


CASES = [
    case("fft_rfft_even", Fn(lambda x: R(torch.fft.rfft(x))), [T(2, 3, 16)], opsets=OPS, tolerance=tol(16),
         dynamic={0: [0, 1]}),
    case("fft_rfft_odd_n_ortho", Fn(lambda x: R(torch.fft.rfft(x, n=9, dim=1, norm="ortho"))), [T(2, 7, 3)],
         opsets=OPS, tolerance=tol(9)),
    case("fft_fft_ifft", Fn(lambda x: R(torch.fft.ifft(torch.fft.fft(x, dim=0), n=8, dim=1, norm="forward"))),
         [T(5, 6)], opsets=OPS, tolerance=tol(8)),
    case("fft_irfft_roundtrip", Fn(lambda x: torch.fft.irfft(torch.fft.rfft(x), n=x.shape[-1])), [T(3, 15)],
         opsets=OPS, tolerance=tol(15)),
    case("fft_irfft_default_n", Fn(lambda x: torch.fft.irfft(torch.fft.rfft(x) * 2.0)), [T(2, 12)], opsets=OPS,
         tolerance=tol(12)),
    case("fft_rfft2_irfft2_ortho", Fn(lambda x: torch.fft.irfft2(torch.fft.rfft2(x, norm="ortho") * 0.5,
                                                                 s=(7, 9), norm="ortho")),
         [T(2, 7, 9)], opsets=OPS, tolerance=tol(63)),
    case("fft_fft2_abs", Fn(lambda x: torch.fft.fft2(x).abs()), [T(1, 6, 5)], opsets=OPS, tolerance=tol(30)),
    case("fft_fftn_rfftn", Fn(lambda x: (R(torch.fft.fftn(x, dim=(0, 2))), R(torch.fft.rfftn(x)),
                                          torch.fft.irfftn(torch.fft.rfftn(x), s=x.shape))),
         [T(3, 4, 6)], opsets=OPS, tolerance=tol(72)),
    case("fft_fftshift", Fn(lambda x: (torch.fft.fftshift(x), torch.fft.ifftshift(x, dim=1),
                                       R(torch.fft.fftshift(torch.fft.fft(x), dim=-1)))),
         [T(3, 5)], opsets=OPS, tolerance=tol(5)),
    case("stft_hann_center_reflect", Fn(lambda x: R(torch.stft(x, 16, 4, window=HANN, return_complex=True))),
         [T(2, 100)], opsets=OPS, tolerance=tol(16), dynamic={0: [0]}),
    case("stft_real_out_constant_pad_normalized",
         Fn(lambda x: torch.stft(x, 15, 5, win_length=11, window=torch.hamming_window(11), pad_mode="constant",
                                 normalized=True, return_complex=False)),
         [T(61)], opsets=OPS, tolerance=tol(15)),
    case("stft_no_center_no_window_twosided",
         Fn(lambda x: R(torch.stft(x, 8, center=False, onesided=False, return_complex=True))),
         [T(1, 40)], opsets=OPS, tolerance=tol(8)),
    # The signal's length dynamic: the frame count follows it (ONNX STFT at 17, the Conv1d below).
    case("stft_dynamic_length", Fn(lambda x: R(torch.stft(x, 16, 4, window=HANN, return_complex=True))),
         [T(2, 96)], opsets=OPS, tolerance=tol(16), dynamic={0: [1]}),
]

import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from probe_zoo_spectral import FftConv, GlobalFilterBlock, TorchaudioSpectrogram, WhisperLogMel  # noqa: E402

# Whole front ends and blocks as users write them, default options (opset 11), traced and scripted.
CASES += [
    case("whisper_log_mel", WhisperLogMel(), [T(1, 4000)], opsets=(11, 17), tolerance=1e-3, dynamic={0: [0]}),
    case("whisper_log_mel_script", WhisperLogMel(), [T(1, 4000)], opsets=(11,), script=True, tolerance=1e-3),
    case("torchaudio_spectrogram", TorchaudioSpectrogram(), [T(2, 1000)], opsets=(11, 17), tolerance=1e-3),
    case("gfnet_block", GlobalFilterBlock(dim=16, h=6, w=4), [T(2, 36, 16)], opsets=(11, 17), tolerance=1e-4),
    case("gfnet_block_script", GlobalFilterBlock(dim=16, h=6, w=4), [T(2, 36, 16)], opsets=(11,), script=True,
         tolerance=1e-4),
    case("fftconv_hyena", FftConv(d=4, length=32), [T(2, 4, 32)], opsets=(11, 17), tolerance=1e-4),
]


class StftRoundTrip(torch.nn.Module):
    """stft -> a real gain on the spectrum -> istft (spectral masking, vocoders' iSTFT heads)."""

    def __init__(self, n_fft, hop, win, center, length=None):
        super().__init__()
        self.n_fft, self.hop, self.win, self.center, self.length = n_fft, hop, win, center, length
        self.register_buffer("window", torch.hann_window(win))
        self.register_buffer("gain", torch.linspace(0.5, 1.5, n_fft // 2 + 1).unsqueeze(-1))

    def forward(self, x):
        s = torch.stft(x, self.n_fft, self.hop, self.win, self.window, center=self.center, return_complex=True)
        s = s * self.gain
        return torch.istft(s, self.n_fft, self.hop, self.win, self.window, center=self.center, length=self.length)


CASES += [
    case("istft_roundtrip_center", StftRoundTrip(16, 4, 16, True), [T(2, 64)], opsets=OPS, tolerance=tol(16)),
    case("istft_odd_win_length", StftRoundTrip(15, 3, 12, True, length=50), [T(1, 57)], opsets=OPS,
         tolerance=tol(15)),
]

C = torch.view_as_complex
# hfft* = irfft*(conj x) and ihfft* = conj(rfft*(x)) with the dual norm; fftfreq/rfftfreq of the
# input's length (dynamic: verified at other lengths, odd and even).
CASES += [
    case("fft_hfft", Fn(lambda x: torch.fft.hfft(C(x))), [T(2, 5, 2)], opsets=OPS, tolerance=tol(8), dynamic={0: [0]}),
    case("fft_hfft_n_ortho", Fn(lambda x: torch.fft.hfft(C(x), n=7, dim=0, norm="ortho")), [T(5, 3, 2)], opsets=OPS,
         tolerance=tol(7)),
    case("fft_hfft_real_input", Fn(lambda x: torch.fft.hfft(x, norm="forward")), [T(3, 6)], opsets=OPS, tolerance=tol(10)),
    case("fft_ihfft", Fn(lambda x: torch.stack((torch.fft.ihfft(x).real, torch.fft.ihfft(x).imag), -1)), [T(3, 8)],
         opsets=OPS, tolerance=tol(8)),
    case("fft_ihfft_n_forward", Fn(lambda x: R(torch.fft.ihfft(x, n=9, norm="forward").resolve_conj())), [T(2, 7)], opsets=OPS,
         tolerance=tol(9)),
    case("fft_hfft_ihfft_roundtrip", Fn(lambda x: torch.fft.hfft(torch.fft.ihfft(x), n=x.shape[-1])), [T(2, 11)],
         opsets=OPS, tolerance=tol(11)),
    case("fft_hfft2", Fn(lambda x: torch.fft.hfft2(C(x))), [T(2, 4, 5, 2)], opsets=OPS, tolerance=tol(32)),
    case("fft_ihfft2", Fn(lambda x: torch.fft.ihfft2(x, norm="ortho").abs()), [T(4, 6)], opsets=OPS, tolerance=tol(24)),
    case("fft_hfftn_ihfftn", Fn(lambda x: torch.fft.hfftn(torch.fft.ihfftn(x) * 2.0, s=x.shape)), [T(3, 4, 6)],
         opsets=OPS, tolerance=tol(72)),
    case("fft_fftfreq_dynamic_n", Fn(lambda x: x * torch.fft.fftfreq(x.shape[-1], 0.5)), [T(3, 7)], opsets=OPS,
         dynamic={0: [1]}),
    case("fft_rfftfreq_dynamic_n", Fn(lambda x: torch.fft.rfftfreq(x.shape[-1], 0.1) * x.mean()), [T(2, 8)],
         opsets=OPS, dynamic={0: [1]}),
]


class FourierUnitShapeS(torch.nn.Module):
    """LaMa's Fourier unit: `irfftn(ffted, s=x.shape[-2:])`. Scripted, s is a slice of aten::size(x),
    which was refused as a list of unknown elements ('unsupported-list') even at fixed sizes."""

    def forward(self, x):
        f = torch.fft.rfftn(x, dim=(-2, -1), norm="ortho")
        f = torch.complex(f.real * 2.0, f.imag - 0.5)
        return torch.fft.irfftn(f, s=x.shape[-2:], dim=(-2, -1), norm="ortho")


CASES += [
    case(f"fft_irfftn_s_from_shape_{mode}", FourierUnitShapeS(), [T(2, 3, 6, 5)], opsets=OPS,
         script=(mode == "script"))
    for mode in ("trace", "script")
]


class SpectralConv2d(torch.nn.Module):
    """FNO's spectral layer: rfft2, the lowest modes mixed by complex weights, irfft2 back to the
    input's size. FNO is meant to run at other resolutions: with H and W dynamic the DFT matrices
    are built at run time."""

    def __init__(self, c=3, modes1=3, modes2=2):
        super().__init__()
        self.modes1, self.modes2 = modes1, modes2
        g = torch.Generator().manual_seed(0)
        self.w1 = torch.nn.Parameter(torch.rand(c, c, modes1, modes2, 2, generator=g) / c)
        self.w2 = torch.nn.Parameter(torch.rand(c, c, modes1, modes2, 2, generator=g) / c)

    def forward(self, x):
        b, c, h, w = x.shape
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(b, c, h, w // 2 + 1, dtype=torch.cfloat)
        m1, m2 = self.modes1, self.modes2
        out_ft[:, :, :m1, :m2] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :m1, :m2], C(self.w1))
        out_ft[:, :, -m1:, :m2] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -m1:, :m2], C(self.w2))
        return torch.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)))


class FourierUnitDynamic(torch.nn.Module):
    """LaMa's Fourier unit as written: rfftn over (H, W) with ortho, real and imaginary parts as
    channels through a 1x1 conv, back to complex, irfftn(s=x.shape[-2:])."""

    def __init__(self, c=2):
        super().__init__()
        self.conv = torch.nn.Conv2d(2 * c, 2 * c, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        f = torch.fft.rfftn(x, dim=(-2, -1), norm="ortho")
        f = torch.stack((f.real, f.imag), dim=-1).permute(0, 1, 4, 2, 3).reshape(b, -1, h, f.shape[-1])
        f = torch.relu(self.conv(f))
        f = f.view(b, -1, 2, h, f.shape[-1]).permute(0, 1, 3, 4, 2).contiguous()
        return torch.fft.irfftn(torch.complex(f[..., 0], f[..., 1]), s=x.shape[-2:], dim=(-2, -1), norm="ortho")


# Lengths that change with the dynamic axes: the DFT matrices are built at run time (verified at
# other sizes, odd and even), at every opset (ONNX DFT from 17).
CASES += [
    case("fft_fno_spectral_dynamic_hw", SpectralConv2d(), [T(2, 3, 8, 9)], opsets=OPS, tolerance=tol(72),
         dynamic={0: [0, 2, 3]}),
    case("fft_lama_fourier_unit_dynamic_hw", FourierUnitDynamic(), [T(1, 2, 6, 8)], opsets=OPS, tolerance=tol(48),
         dynamic={0: [2, 3]}),
    case("fft_lama_fourier_unit_dynamic_hw_script", FourierUnitDynamic(), [T(1, 2, 6, 8)], opsets=(11, 17),
         tolerance=tol(48), script=True, dynamic={0: [2, 3]}),
    case("fft_fft_dynamic_length_ortho", Fn(lambda x: R(torch.fft.fft(C(x), norm="ortho"))), [T(2, 7, 2)],
         opsets=OPS, tolerance=tol(8), dynamic={0: [1]}),
    case("fft_ifft_dynamic_length", Fn(lambda x: R(torch.fft.ifft(C(x), dim=0))), [T(6, 3, 2)], opsets=OPS,
         tolerance=tol(8), dynamic={0: [0]}),
    case("fft_irfft_dynamic_length_forward", Fn(lambda x: torch.fft.irfft(C(x), norm="forward")), [T(2, 5, 2)],
         opsets=OPS, tolerance=tol(10), dynamic={0: [1]}),
    case("fft_rfft_n_dynamic_length", Fn(lambda x: R(torch.fft.rfft(x, n=10))), [T(2, 8)], opsets=OPS,
         tolerance=tol(10), dynamic={0: [1]}),
    case("fft_fftconv_twice_length", Fn(lambda x: torch.fft.irfft(torch.fft.rfft(x, n=2 * x.shape[-1])
                                                                 * torch.fft.rfft(x.flip(-1), n=2 * x.shape[-1]),
                                                                 n=2 * x.shape[-1])[..., :x.shape[-1]]),
         [T(2, 9)], opsets=(11, 17), tolerance=tol(18), dynamic={0: [1]}),
]

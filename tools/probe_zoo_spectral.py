"""Audio front ends and spectral models for the model probe (tools/probe_models.py): complex values
and torch.fft / stft (ops_spectral.cpp, ops_complex.cpp), exported as users write them."""
import torch
import torch.nn.functional as F

from probe_zoo import Spec


class WhisperLogMel(torch.nn.Module):
    """Whisper's log_mel_spectrogram (audio.py): stft, |.|^2, mel filters, log10, dynamic range."""

    def __init__(self, n_fft=400, hop=160, n_mels=80):
        super().__init__()
        torch.manual_seed(0)
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("filters", torch.rand(n_mels, n_fft // 2 + 1) * 0.05)

    def forward(self, audio):
        stft = torch.stft(audio, self.n_fft, self.hop, window=self.window, return_complex=True)
        magnitudes = stft[..., :-1].abs() ** 2
        mel_spec = self.filters @ magnitudes
        log_spec = torch.clamp(mel_spec, min=1e-10).log10()
        log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
        return (log_spec + 4.0) / 4.0


class TorchaudioSpectrogram(torch.nn.Module):
    """torchaudio.transforms.Spectrogram(n_fft=256, power=2, normalized=True) as its functional form."""

    def __init__(self, n_fft=256, hop=64):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, wav):
        spec = torch.stft(wav, self.n_fft, self.hop, window=self.window, center=True, pad_mode="reflect",
                          normalized=False, onesided=True, return_complex=True)
        spec = spec / self.window.pow(2.0).sum().sqrt()
        return spec.abs().pow(2.0)


class GlobalFilterBlock(torch.nn.Module):
    """GFNet's block: LayerNorm, global filter in the frequency domain, MLP."""

    def __init__(self, dim=32, h=14, w=8):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(dim)
        self.complex_weight = torch.nn.Parameter(torch.randn(h, w, dim, 2) * 0.02)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.fc1, self.fc2 = torch.nn.Linear(dim, 4 * dim), torch.nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        a = int(n ** 0.5)
        y = self.norm1(x).view(b, a, a, c).to(torch.float32)
        y = torch.fft.rfft2(y, dim=(1, 2), norm="ortho")
        y = y * torch.view_as_complex(self.complex_weight)
        y = torch.fft.irfft2(y, s=(a, a), dim=(1, 2), norm="ortho").reshape(b, n, c)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(y))))


class FftConv(torch.nn.Module):
    """FFT long convolution (Hyena / S4's fftconv): irfft(rfft(u, 2L) * rfft(k, 2L))[..., :L] + u * D."""

    def __init__(self, d=8, length=64):
        super().__init__()
        self.k = torch.nn.Parameter(torch.randn(d, length) * 0.1)
        self.D = torch.nn.Parameter(torch.randn(d))

    def forward(self, u):
        L = u.shape[-1]
        k_f = torch.fft.rfft(self.k, n=2 * L) / (2 * L)
        u_f = torch.fft.rfft(u, n=2 * L)
        y = torch.fft.irfft(u_f * k_f, n=2 * L, norm="forward")[..., :L]
        return y + u * self.D.unsqueeze(-1)


SPECTRAL = [
    ("whisper_log_mel", lambda: Spec(WhisperLogMel(), ["1x16000"], ["audio"], ["audio:0=b"])),
    ("torchaudio_spectrogram", lambda: Spec(TorchaudioSpectrogram(), ["2x4000"], ["wav"], ["wav:0=b"])),
    ("gfnet_block", lambda: Spec(GlobalFilterBlock(), ["2x196x32"], ["x"], ["x:0=b"])),
    ("fftconv_hyena", lambda: Spec(FftConv(), ["2x8x64"], ["u"], ["u:0=b"])),
]

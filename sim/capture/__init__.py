"""``kaleido capture``: a real video transformer's activations, as the hardware
reads them, into an activation archive (:mod:`golden.archive`)."""

from .families import FAMILIES, Family, family
from .run import CaptureError, capture, clip_latent, video_tokens

__all__ = ["FAMILIES", "Family", "family", "CaptureError", "capture", "clip_latent", "video_tokens"]

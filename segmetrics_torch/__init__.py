"""segmetrics-torch: reference-exact supervised evaluation measures for image segmentation, batched on any device."""

__version__ = "0.1.0"

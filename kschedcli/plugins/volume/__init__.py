"""Helpers the volume plugins share: CSI objects and volume utilities."""

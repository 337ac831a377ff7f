"""Packing a brain into its OCI artifact, verifying artifacts, and adopting them; registries on top."""

"""The bundled variants: one Triton file each (see docs/design.md), a torch reference, shared helpers."""

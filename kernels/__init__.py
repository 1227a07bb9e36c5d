"""The bundled variants: one Triton file each (see DESIGN.md), a torch reference, shared helpers."""

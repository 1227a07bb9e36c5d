"""``vgprscope capture``: record every distinct Triton launch specialisation a user's own command makes.

``hook`` runs inside the user's processes (standard library only); ``model`` is the versioned capture
file; ``run`` starts the command with the hook and writes the file.
"""

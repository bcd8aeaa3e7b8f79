"""LaTeX → readable Unicode text (text_mode.latex_to_unicode; its docstring lists what it adds to
pylatexenc)."""

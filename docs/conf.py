"""Sphinx configuration of embedeval's documentation.

Build (warnings are errors): ``python -m sphinx -W --keep-going -b html docs docs/_build/html``
after ``pip install -e ".[docs]"``. Pages are Markdown (MyST); the API reference is read from
the numpydoc docstrings; the metric and command-line references are generated from the metric
registry and the argparse parser by ``docs/_ext/embedeval_docs.py``.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # document this checkout, installed or not
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

import embedeval  # noqa: E402

project = "embedeval"
author = "embedeval contributors"
copyright = "embedeval contributors"
release = embedeval.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax from the site's own _static: formulas render with no network
    "numpydoc",
    "sphinx_copybutton",
    "embedeval_docs",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
# Other helpers' pages (guides, integrations) are picked up by globbed toctrees when they exist.
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3

autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc sections give the types, with shapes
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

html_theme = "furo"
html_title = f"embedeval {release}"
html_static_path = ["_static"]
html_css_files = ["embedeval.css"]
html_theme_options = {"navigation_with_keys": True}
html_show_sourcelink = False
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True

# Prose names options (--metrics) and quotes code; typographic dashes and quotes would change them.
smartquotes = False
nitpicky = False
suppress_warnings = ["myst.header"]

"""The public surface: what ``dir()`` shows is what a user may use, and every listed name resolves."""

from __future__ import annotations

import embedeval


def test_dir_of_the_package_shows_public_names_only():
    shown = [n for n in dir(embedeval) if not n.startswith("__")]
    assert shown == sorted({*embedeval.__all__, *embedeval._PUBLIC_MODULES} - {"__version__"})
    assert "importlib" not in shown and not any(n.startswith("_") for n in shown)


def test_every_public_name_resolves():
    for name in (*embedeval.__all__, *embedeval._PUBLIC_MODULES):
        assert getattr(embedeval, name) is not None, name

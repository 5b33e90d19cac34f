"""The templates UIBuilder writes: small, dependency-free starting points. `{{title}}` and
`{{package}}` are filled in; nothing else is interpreted."""

from __future__ import annotations

STATIC_PAGE = {
    "index.html": """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{{title}}</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <main>
    <h1>{{title}}</h1>
    <p id="greeting">Loading...</p>
  </main>
  <script src="app.js"></script>
</body>
</html>
""",
    "style.css": """:root { font-family: system-ui, sans-serif; color-scheme: light dark; }
body { margin: 0; }
main { max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
""",
    "app.js": """"use strict";
document.getElementById("greeting").textContent = "Hello from {{title}}.";
""",
}

PYTHON_PACKAGE = {
    "pyproject.toml": """[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{{package}}"
version = "0.1.0"
description = "{{title}}"
requires-python = ">=3.11"
""",
    "README.md": """# {{title}}

Install with `pip install -e .`, test with `python -m pytest`.
""",
    "src/{{package}}/__init__.py": '''"""{{title}}."""

__version__ = "0.1.0"
''',
    "tests/test_{{package}}.py": """import {{package}}


def test_version() -> None:
    assert {{package}}.__version__ == "0.1.0"
""",
}

TEMPLATES: dict[str, dict[str, str]] = {
    "static_page": STATIC_PAGE,
    "python_package": PYTHON_PACKAGE,
}


def render(text: str, values: dict[str, str]) -> str:
    """Fill `{{name}}` placeholders."""
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", value)
    return text

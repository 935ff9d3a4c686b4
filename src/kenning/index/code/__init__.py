"""Code as memory, the pure layer: which files are code, what they define and what they call.

No database here. ``select.code_files`` picks the files, ``parse.parse_code`` parses one (with
tree-sitter, loaded on first use), ``resolve.SymbolTable`` resolves references across files.
Importing this package does not import tree_sitter.
"""

from __future__ import annotations

from kenning.index.code.model import CodeFile, Definition, Import, Reference
from kenning.index.code.resolve import SymbolTable
from kenning.index.code.select import CodeCandidate, CodeSelection, code_files, language_of

__all__ = [
    "CodeCandidate",
    "CodeFile",
    "CodeSelection",
    "Definition",
    "Import",
    "Reference",
    "SymbolTable",
    "code_files",
    "language_of",
    "module_name",
    "parse_code",
]


def parse_code(path: str, data: bytes, language: str, module: str) -> CodeFile:
    """See :func:`kenning.index.code.parse.parse_code`."""
    from kenning.index.code.parse import parse_code as parse

    return parse(path, data, language, module)


def module_name(path: str, language: str, all_paths: set[str]) -> str:
    """See :func:`kenning.index.code.parse.module_name`."""
    from kenning.index.code.parse import module_name as name

    return name(path, language, all_paths)

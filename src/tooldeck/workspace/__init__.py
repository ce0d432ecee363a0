"""Workspace services: roots and path rules, ignore rules, walking, safe reads,
atomic writes and token counting. Knows nothing of tools or hosts."""

from tooldeck.workspace.atomic import AtomicBatch, remove_file, write_file
from tooldeck.workspace.content import content_hash, decode_text, hash_matches, read_bytes, read_text
from tooldeck.workspace.ignore import IgnoreRules
from tooldeck.workspace.roots import ResolvedPath, Root, Workspace, make_root
from tooldeck.workspace.walk import Entry, walk, walk_files

__all__ = [
    "AtomicBatch",
    "Entry",
    "IgnoreRules",
    "ResolvedPath",
    "Root",
    "Workspace",
    "content_hash",
    "decode_text",
    "hash_matches",
    "make_root",
    "read_bytes",
    "read_text",
    "remove_file",
    "walk",
    "walk_files",
    "write_file",
]

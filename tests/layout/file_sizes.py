#!/usr/bin/env python3
"""No source file in core/ is longer than 500 lines (one concept per file). Prints each that is,
with its length, and exits 1. Usage: file_sizes.py SOURCE_DIR"""
import os
import sys

LIMIT = 500
FOLDERS = ("core",)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    long_files = []
    for folder in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in files:
                if name.endswith((".cpp", ".hpp", ".h")):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8", errors="replace") as f:
                        n = sum(1 for _ in f)
                    if n > LIMIT:
                        long_files.append((os.path.relpath(path, root), n))
    for path, n in sorted(long_files):
        print(f"{path}: {n} lines, more than {LIMIT}: split it by concept")
    if long_files:
        return 1
    print(f"every source file in {', '.join(FOLDERS)} has at most {LIMIT} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""No function in core/ is longer than 150 lines: clang-tidy's readability-function-size
(LineThreshold 150) on every source file of core/, with the build's compile commands. Prints each
long function and exits 1; a file clang-tidy cannot read fails too (it would hide its functions).
Usage: function_sizes.py SOURCE_DIR BUILD_DIR [JOBS]"""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

LINES = 150
CONFIG = "{CheckOptions: [{key: readability-function-size.LineThreshold, value: %d}]}" % LINES


def compile_db(build, src):
    """One command per core/ source, without GCC's precompiled header (clang cannot read it)."""
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    core = os.path.join(src, "core") + os.sep
    chosen = {}
    for e in entries:
        path = os.path.normpath(os.path.join(e["directory"], e["file"]))
        if not path.startswith(core):
            continue
        args = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
        cleaned, skip = [], False
        for a in args:
            if skip:
                skip = False
                continue
            if a == "-include" and "cmake_pch" in " ".join(args):
                skip = True  # the next argument is the PCH header
                continue
            if a.startswith("-Winvalid-pch") or "cmake_pch" in a:
                continue
            cleaned.append(a)
        # The library's own command, not a test's that compiles the same file.
        own = "/core/CMakeFiles/" in e.get("output", e["command"] if "command" in e else "")
        if path not in chosen or own:
            chosen[path] = {"directory": e["directory"], "file": path, "arguments": cleaned}
    return chosen


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    jobs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    tidy = shutil.which("clang-tidy") or shutil.which("clang-tidy-14")
    if not tidy:
        print("function_sizes: clang-tidy is not installed (apt-get install clang-tidy)",
              file=sys.stderr)
        return 1
    db = compile_db(build, src)
    missing = []
    for dirpath, _, files in os.walk(os.path.join(src, "core")):
        for name in files:
            if name.endswith(".cpp") and os.path.join(dirpath, name) not in db:
                missing.append(os.path.join(dirpath, name))
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "compile_commands.json"), "w", encoding="utf-8") as f:
            json.dump(list(db.values()), f)

        def run(path):
            r = subprocess.run([tidy, "-p", tmp, "--quiet", "--checks=-*,readability-function-size",
                                "--config=" + CONFIG, "--extra-arg=-Wno-unknown-warning-option",
                                path], capture_output=True, text=True)
            return path, r.stdout

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(run, sorted(db)))
    long_functions, unreadable = [], []
    for path, out in results:
        lines = out.splitlines()
        for i, line in enumerate(lines):
            if "readability-function-size" in line and "warning:" in line:
                detail = next((l.strip() for l in lines[i + 1:i + 6] if "lines including" in l), "")
                long_functions.append(f"{line.split(' [')[0]} {detail}")
            elif "error:" in line:
                unreadable.append(line)
    for line in long_functions:
        print(line)
    for line in unreadable[:20]:
        print(line)
    for path in missing:
        print(f"{os.path.relpath(path, src)}: not in {build}/compile_commands.json (not built?)")
    if long_functions or unreadable or missing:
        print(f"function_sizes: {len(long_functions)} function(s) in core/ over {LINES} lines, "
              f"{len(unreadable)} error(s), {len(missing)} file(s) without a compile command")
        return 1
    print(f"every function in core/ has at most {LINES} lines ({len(db)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

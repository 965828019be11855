#!/usr/bin/env python3
"""Who may include whom (docs/architecture.md). Prints FILE:LINE for every include that breaks a
rule and exits 1; exits 0 when the tree keeps them. Usage: include_rules.py SOURCE_DIR"""
import os
import re
import sys

# What decides: the engine's public headers. Only core/, gpuaasd, the simulator, the bench and
# their tests may include them.
DECIDING = ("gpuaas/core/", "gpuaas/admission/", "gpuaas/reclaim/", "gpuaas/scaleout/")

# folder -> (forbidden include prefixes, allowed project prefixes or None for "any but forbidden")
RULES = [
    ("base", DECIDING, ("gpuaas/base/",)),
    # Foundations the tools and the core share: traces, and what a service sustains.
    ("trace", DECIDING, ("gpuaas/trace/", "gpuaas/base/")),
    ("capacity", DECIDING, ("gpuaas/capacity/", "gpuaas/trace/", "gpuaas/base/")),
    ("bus", DECIDING, None),
    ("sdk", DECIDING, None),
    ("wire", DECIDING, None),
    ("telemetry", DECIDING, None),
    ("policy", DECIDING, None),
    ("config", DECIDING, None),
    # The plugin host serves gpuaasd and the bridge alike: nothing of core.
    ("host", DECIDING, None),
    # The bridge carries decisions, it does not make them: its library, its command line, its tests.
    ("bridge", DECIDING, None),
    ("tools/gpuaas-bridge", DECIDING, None),
    ("tests/bridge", DECIDING, None),
    ("tools/gpuaasctl", DECIDING, None),
    # Plugins see the SDK only (its headers, the protobuf messages, base).
    ("plugins", DECIDING, ("gpuaas/plugin/", "gpuaas/v1/", "gpuaas/base/")),
]
# "gpuaas/..." or <gpuaas/...>: the project's headers either way.
INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<(gpuaas/[^>]+)>)')
SOURCES = (".cpp", ".hpp", ".h", ".cc")


def project_include(path):
    return path.startswith("gpuaas/")


def check(root):
    problems = []
    for folder, forbidden, allowed in RULES:
        top = os.path.join(root, folder)
        if not os.path.isdir(top):
            # A moved folder would otherwise leave its rule checking nothing.
            problems.append(f"{folder}/: no such folder; update RULES to the layout")
            continue
        for dirpath, _, files in os.walk(top):
            for name in files:
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1) or m.group(2)
                        bad = inc.startswith(forbidden)
                        if not bad and allowed is not None and project_include(inc):
                            bad = not inc.startswith(allowed)
                        if bad:
                            problems.append(f"{rel}:{n}: includes {inc}, which {folder}/ must not know")
    # core/ never includes a plugin's code.
    for dirpath, _, files in os.walk(os.path.join(root, "core")):
        for name in files:
            if not name.endswith(SOURCES):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m and "plugins/" in m.group(1):
                        problems.append(f"{os.path.relpath(path, root)}:{n}: includes {m.group(1)}, "
                                        "a plugin's code: core/ knows no workload kind")
    return problems


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(sys.argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) break the layout's rules (docs/architecture.md)")
        return 1
    print("include rules hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())

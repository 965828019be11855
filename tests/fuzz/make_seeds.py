#!/usr/bin/env python3
"""Seeds made at run time, so nothing from ../shared is copied into the repository.

make_seeds.py CORPUS_ROOT [MANIFESTS_DIR]
  Adds to CORPUS_ROOT/plugins the objects of the manifests (YAML, many documents) as JSON, and to
  CORPUS_ROOT/event each object of corpus/plugins and of the manifests as NATS messages in the
  event fuzzer's input form (mode byte, subject, '\\n', body): the protobuf envelope on the wire
  fast path and through the parser, the envelope's JSON mapping, the same as a submission, and a
  metrics batch and a tick.
  Without PyYAML or the manifests only the repository's own seeds are used.
"""
import json
import pathlib
import struct
import sys


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    if wire == 1:
        return key + payload
    return key + varint(len(payload)) + payload


def timestamp(seconds, nanos=0):
    return field(1, 0, seconds) + (field(2, 0, nanos) if nanos else b"")


def envelope(event_id, time_s, payload_field, payload):
    return (field(1, 2, event_id.encode()) + field(2, 2, b"fuzz-seeds") +
            field(4, 2, timestamp(time_s)) + field(payload_field, 2, payload))


def object_messages(obj, n):
    ns = obj.get("metadata", {}).get("namespace") or "_cluster"
    subject = f"gpuaas.v1.events.{ns}.{obj.get('kind', 'Unknown')}".encode()
    text = json.dumps(obj, separators=(",", ":")).encode()
    pb = envelope(f"seed-{n}", 1700000000 + n, 10, field(1, 0, 1 + n % 3) + field(2, 2, text))
    js = json.dumps({"id": f"seed-{n}", "source": "fuzz-seeds", "type": "io.gpuaas.v1.object.added",
                     "time": "2023-11-14T22:13:20Z",
                     "object": {"type": "ADDED", "objectJson": text.decode()}}).encode()
    submitted = subject.replace(b".events.", b".submissions.")
    return [b"\x00" + subject + b"\n" + pb,  # no content type: the wire fast path
            b"\x01" + subject + b"\n" + pb,  # protobuf: the full parser
            b"\x06" + subject + b"\n" + js,  # JSON mapping, and the object decoder alone
            b"\x00" + submitted + b"\n" + pb]  # the same object as a tenant's submission


def other_messages():
    label = field(1, 2, b"pod") + field(2, 2, b"train-0")
    sample = (field(1, 2, b"DCGM_FI_DEV_GPU_UTIL") + field(2, 2, label) +
              field(3, 1, struct.pack("<d", 87.0)) + field(4, 0, 1700000000000))
    metrics = envelope("m-1", 1700000000, 11, field(1, 2, sample))
    tick = envelope("t-1", 1700000001, 12, field(1, 2, field(1, 0, 42)))
    return [b"\x00gpuaas.v1.metrics.team-a\n" + metrics, b"\x01gpuaas.v1.ticks\n" + tick]


def main():
    root = pathlib.Path(sys.argv[1])
    here = pathlib.Path(__file__).resolve().parent
    objects = [json.loads(p.read_text()) for p in sorted((here / "corpus/plugins").glob("*.json"))]
    if len(sys.argv) > 2 and pathlib.Path(sys.argv[2]).is_dir():
        try:
            import yaml
        except ImportError:
            yaml = None
        for p in sorted(pathlib.Path(sys.argv[2]).rglob("*.yaml")) if yaml else []:
            try:
                docs = list(yaml.safe_load_all(p.read_text()))
            except Exception:  # a manifest PyYAML cannot read is simply not a seed
                continue
            for d in docs:
                if isinstance(d, dict) and "kind" in d and isinstance(d.get("metadata"), dict):
                    objects.append(d)
                    out = root / "plugins" / f"m-{p.parent.name}-{p.stem}-{len(objects)}.json"
                    out.write_text(json.dumps(d, default=str))
    messages = other_messages()
    for n, obj in enumerate(objects):
        messages += object_messages(obj, n)
    for n, m in enumerate(messages):
        (root / "event" / f"gen-{n}.bin").write_bytes(m)
    print(f"make_seeds: {len(objects)} objects, {len(messages)} messages")


if __name__ == "__main__":
    main()

"""Zero the GPU machine code that a given card cannot run in a CUDA shared library, so it compresses.

    python prune_fatbin.py libfaiss.so libfaiss_sm90.so --keep 90

A CUDA library holds, in its ``.nv_fatbin`` section, one cubin per target architecture (and PTX).
The runtime loads the cubin of the card's own architecture (a cubin runs only on its major
version), so the others are dead weight on that card. Their payloads are overwritten with zeros,
headers and sizes kept, so every offset the host code holds stays valid; the file stays as large,
but compresses to a fraction (faiss-gpu 1.15.1's libfaiss.so: 60 MB of xz, 24 MB pruned to sm_90).
PTX entries are kept (the runtime's fallback where no cubin matches).
"""

from __future__ import annotations

import argparse
import struct
import subprocess

FATBIN_MAGIC = 0xBA55ED50
ELF_KIND = 2


def section(path: str, name: str) -> tuple[int, int]:
    """(file offset, size) of an ELF section, read with readelf."""
    for line in subprocess.run(
        ["readelf", "-S", "-W", path], capture_output=True, text=True, check=True
    ).stdout.splitlines():
        fields = line.replace("[ ", "[").split()
        if name in fields:
            at = fields.index(name)
            return int(fields[at + 3], 16), int(fields[at + 4], 16)
    raise SystemExit(f"{path} has no {name} section")


def entries(data: bytes, start: int, size: int):
    """(payload offset, payload size, kind, arch) of every entry of every fatbin in the section."""
    pos, end = start, start + size
    while pos < end:
        magic, _, header, body = struct.unpack_from("<IHHQ", data, pos)
        if magic != FATBIN_MAGIC:  # padding between fatbins
            pos += 8
            continue
        entry, stop = pos + header, pos + header + body
        while entry < stop:
            kind, _, entry_header, payload, _, _, _, arch = struct.unpack_from("<HHIQIIII", data, entry)
            yield entry + entry_header, payload, kind, arch
            entry += entry_header + payload
        pos = stop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source")
    parser.add_argument("target")
    parser.add_argument("--keep", type=int, default=90, help="the architecture whose cubins stay (90: H100, H200)")
    args = parser.parse_args()
    data = bytearray(open(args.source, "rb").read())
    zeroed = 0
    for offset, size, kind, arch in entries(bytes(data), *section(args.source, ".nv_fatbin")):
        if kind == ELF_KIND and arch != args.keep:
            data[offset : offset + size] = bytes(size)
            zeroed += size
    open(args.target, "wb").write(data)
    print(f"{args.target}: {zeroed / 1e6:.1f} MB of cubins for other architectures zeroed")


if __name__ == "__main__":
    main()

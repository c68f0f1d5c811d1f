#!/usr/bin/env python3
"""Writes the user-catalog fuzz seeds src/io/fuzz_seeds/c_keys_<section>.json from data/<section>.json: one
seed per built-in catalog, holding every key the file has, so that the fuzzer starts next to each of them
(tests/fuzz_seeds_test.cc checks that no key is missing).

Each array of entries becomes one entry with the union of the entries' keys, the first entry's id (so the seed
replaces keys of a known entry and its references stay valid) and, for each key, the first value written
(nested objects joined the same way).
Prose longer than 120 characters is cut, so that every seed stays within the fuzzer's input size.
Run from the repository root after a catalog gains a key: python3 scripts/catalog-fuzz-seeds.py"""
import json
import pathlib

SECTIONS = ["gpus", "links", "cpus", "parts", "prices", "frameworks", "efficiency", "job_costs", "models"]


def union(first, second):
    """`first` with the keys only `second` has, nested objects and entry lists joined the same way."""
    out = dict(first)
    for k, v in second.items():
        if k not in out:
            out[k] = v
        elif isinstance(out[k], dict) and isinstance(v, dict) and k != "config":
            out[k] = union(out[k], v)
        elif isinstance(out[k], list) and isinstance(v, list) and all(isinstance(x, dict) for x in out[k] + v):
            out[k] = out[k] + v
    return out


def compact(value, key=""):
    if isinstance(value, list):
        if value and all(isinstance(item, dict) for item in value):
            merged = {}
            for item in value:
                merged = union(merged, item)
            return [compact(merged)]
        return [compact(item) for item in value]
    if isinstance(value, dict):
        # A model's config.json is the Hugging Face reader's input (seeded by h_*.json): one model keeps its own.
        return {k: (v if k == "config" else compact(v, k)) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, str) and len(value) > 120:
        return value[:120]
    return value


def main():
    for section in SECTIONS:
        doc = json.loads(pathlib.Path(f"data/{section}.json").read_text())
        seed = {section: compact(doc)}
        text = "c" + json.dumps(seed, ensure_ascii=False, separators=(",", ":"))
        path = pathlib.Path(f"src/io/fuzz_seeds/c_keys_{section}.json")
        path.write_text(text)
        print(f"{path}: {len(text.encode())} bytes")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the user-catalog fuzz seeds src/io/fuzz_seeds/c_keys_<section>.json from data/<section>.json: one
seed per built-in catalog, holding every key the file has, so that the fuzzer starts next to each of them
(tests/fuzz_seeds_test.cc checks that no key is missing).

Each array of entries keeps the fewest of its entries, as written, that hold all of its keys: the seed replaces
known entries by themselves, so it is a valid user catalog that the readers go through to the end.
Run from the repository root after a catalog gains a key: python3 scripts/catalog-fuzz-seeds.py"""
import json
import pathlib

SECTIONS = ["gpus", "links", "cpus", "parts", "prices", "frameworks", "efficiency", "job_costs", "models"]


def names(value):
    """Every member name in `value`, nested ones included, but inside a model's config.json."""
    out = set()
    if isinstance(value, list):
        for item in value:
            out |= names(item)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.add(k)
            if k != "config":
                out |= names(v)
    return out


def compact(value):
    if isinstance(value, list):
        if value and all(isinstance(item, dict) for item in value):
            # The fewest entries, as written, that hold every key the list's entries have: each stays a valid
            # entry (an id the file has is replaced by itself), which a union of entries would not be.
            kept, seen = [], set()
            for item in sorted(value, key=lambda item: -len(names(item))):
                if names(item) - seen:
                    kept.append(item)
                    seen |= names(item)
            return [compact(item) for item in kept]
        return [compact(item) for item in value]
    if isinstance(value, dict):
        # A model's config.json is the Hugging Face reader's input (seeded by h_*.json): one model keeps its own.
        return {k: (v if k == "config" else compact(v)) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, str) and len(value) > 120:
        return value[:120]  # prose: the fuzzer's inputs are bounded in size
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

#!/usr/bin/env python3
"""Validates JSON documents against a JSON Schema (draft 2020-12), and checks that the schema
rejects a copy of the first document with a required field removed (so a schema that accepts
anything fails this test). Usage: validate_schema.py SCHEMA DOC [DOC...]. Exit 77 (CTest skip)
without python3-jsonschema."""
import copy
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed (scripts/install-deps.sh installs it)")
    sys.exit(77)

schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)
validator.check_schema(schema)
docs = [json.load(open(f)) for f in sys.argv[2:]]
for path, doc in zip(sys.argv[2:], docs):
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:5]:
        print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}")
    if errors:
        sys.exit(1)
    print(f"{path}: valid ({len(doc.get('ranks', []))} ranks)")
broken = copy.deepcopy(docs[0])
del broken["ranks"][0]["groups"]["gradient_sync"]
if validator.is_valid(broken):
    print("the schema accepts a rank without its gradient_sync group")
    sys.exit(1)
print("a rank without gradient_sync is rejected")

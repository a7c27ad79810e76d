"""Downloads the public benchmark files the data-backed tests read (``npm run data:fetch``).

Each file of ``scripts/data-sources.json`` is fetched from where its authors published it (a
commit of a public GitHub repository), checked against its git blob id, rebuilt where
``../shared/data/SOURCES.md`` says the tests read a derivation of it (the same few fields, a
one-line fix, a CSV export parsed), and checked again against the sha256 the tests expect. Files
go to ``RUBRICATE_DATA_DIR`` (default ``../shared/data`` beside the checkout, where the tests
look), never into the repository. A file already present with the expected content is left as it
is. The manifest is not trusted further than it must be: each ``file`` is a relative path kept
inside the data folder (no absolute path, no ``..``, no symbolic link on the way), each download
stops as soon as it exceeds the ``source_bytes`` its entry declares, and each file is written to
a temporary file beside it, then renamed. Standard library only; the derivations are Python's, as
they were made.

    python3 scripts/fetch_data.py [--data-dir DIR] [--only SUBSTRING] [--base-url URL] [--manifest FILE]
"""

import argparse
import ast
import csv
import hashlib
import io
import json
import os
import sys
import tempfile
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "scripts", "data-sources.json")


def git_blob_id(data):
    """The id git gives a file's content (sha1 of "blob <size>\\0" and the bytes)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class _Arrays(ast.NodeTransformer):
    """numpy's ``array([...], dtype=object)`` in a pandas export, read as the list it holds."""

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "array" and len(node.args) == 1:
            return node.args[0]
        raise ValueError("a call other than array(...) in a literal")


def python_literal(text):
    """A Python literal as pandas writes it (numpy arrays included), parsed without evaluating code."""
    return ast.literal_eval(_Arrays().visit(ast.parse(text, mode="eval")))


def json_lines(rows):
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def derive(data, spec):
    """The file the tests read, from the published one, as SOURCES.md describes each derivation."""
    kind = spec["kind"]
    if kind == "keep-keys":
        keep = set(spec["keys"])
        rows = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
        return json_lines({key: value for key, value in row.items() if key in keep} for row in rows)
    if kind == "replace-in-line":
        lines = data.split(b"\n")
        start = spec["line_starts_with"].encode("utf-8")
        matching = [index for index, line in enumerate(lines) if line.startswith(start)]
        if len(matching) != 1:
            raise ValueError("expected one line starting with %r, found %d" % (spec["line_starts_with"], len(matching)))
        index = matching[0]
        old, new = spec["old"].encode("utf-8"), spec["new"].encode("utf-8")
        if old not in lines[index]:
            raise ValueError("the line has no %r" % spec["old"])
        lines[index] = lines[index].replace(old, new, 1)
        return b"\n".join(lines)
    if kind == "csv-to-jsonl":
        csv.field_size_limit(sys.maxsize)
        rows = []
        for record in csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")):
            row = {}
            for column in spec["columns"]:
                value = python_literal(record[column]) if column in spec.get("literal", []) else record[column]
                keys = spec.get("keep_keys", {}).get(column)
                row[column] = {key: value[key] for key in keys} if keys else value
            rows.append(row)
        return json_lines(rows)
    raise ValueError("unknown derivation %r" % kind)


def source_url(template, entry):
    quote = lambda part: urllib.parse.quote(part, safe="/")
    return template.format(repo=entry["repo"], commit=entry["commit"], path=quote(entry["path"]))


def download(url, limit):
    """The body at ``url``, refused as soon as it would exceed ``limit`` bytes (the size the manifest declares)."""
    request = urllib.request.Request(url, headers={"User-Agent": "rubricate-fetch-data"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        declared = answer.headers.get("Content-Length")
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            raise ValueError("the server announces %s bytes, more than the %s the manifest declares" % (format(int(declared), ","), format(limit, ",")))
        chunks, received = [], 0
        while True:
            chunk = answer.read(min(1 << 16, limit + 1 - received))
            if not chunk:
                break
            received += len(chunk)
            if received > limit:
                raise ValueError("the download exceeds the %s bytes the manifest declares: stopped" % format(limit, ","))
            chunks.append(chunk)
        return b"".join(chunks)


def declared_size(entry):
    """The size of the published file (``source_bytes``), the bound of its download."""
    size = entry.get("source_bytes")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ValueError("the manifest declares no size for it (source_bytes): not downloaded")
    return size


def confined_target(data_dir, name):
    """The path of manifest file ``name`` inside ``data_dir``: a relative path of plain names, no link on the way.

    Refuses an absolute path, a ``..`` or ``.`` segment, an empty segment or a backslash, and any
    part that is a symbolic link below the data folder (a link could lead the write outside it).
    """
    if not isinstance(name, str) or name == "" or "\\" in name or "\0" in name:
        raise ValueError("not a relative path of the data folder")
    if os.path.isabs(name) or name.startswith("/"):
        raise ValueError("an absolute path: manifest paths are relative to the data folder")
    parts = name.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError("a path with an empty, '.' or '..' segment: manifest paths stay inside the data folder")
    current = data_dir
    for part in parts:
        current = os.path.join(current, part)
        if os.path.islink(current):
            raise ValueError("%s is a symbolic link: nothing is written through links" % os.path.relpath(current, data_dir))
    return current


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def write_atomically(path, data, data_dir):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # The folders made (or found) on the way are checked again: none may have become a link meanwhile.
    confined_target(data_dir, os.path.relpath(path, data_dir).replace(os.sep, "/"))
    descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".fetch-")
    try:
        with os.fdopen(descriptor, "wb") as output:
            output.write(data)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def fetch(entries, template, data_dir, report):
    """Fetches every entry; returns the number that failed. A source shared by several entries is downloaded once."""
    sources = {}
    failed = 0
    for entry in entries:
        url = source_url(template, entry)
        try:
            target = confined_target(data_dir, entry.get("file"))
            if os.path.isfile(target):
                with open(target, "rb") as existing:
                    if sha256(existing.read()) == entry["sha256"]:
                        report("present  %s" % entry["file"])
                        continue
            limit = declared_size(entry)
            if url not in sources:
                sources[url] = download(url, limit)
            elif len(sources[url]) > limit:
                raise ValueError("the download exceeds the %s bytes the manifest declares" % format(limit, ","))
            data = sources[url]
            if git_blob_id(data) != entry["blob"]:
                raise ValueError("the published file is not the one named (git blob %s, expected %s)" % (git_blob_id(data), entry["blob"]))
            if "derive" in entry:
                data = derive(data, entry["derive"])
            if sha256(data) != entry["sha256"]:
                raise ValueError("the rebuilt file differs from the one the tests read (sha256 %s)" % sha256(data))
            write_atomically(target, data, data_dir)
            report("fetched  %s (%s bytes)" % (entry["file"], format(len(data), ",")))
        except Exception as error:  # one bad file never stops the others
            failed += 1
            report("FAILED   %s from %s: %s" % (entry.get("file"), url, error))
    return failed


def main(argv=None):
    parser = argparse.ArgumentParser(description="Download the public benchmark files the data-backed tests read.")
    parser.add_argument("--data-dir", default=os.environ.get("RUBRICATE_DATA_DIR") or os.path.join(ROOT, "..", "shared", "data"), help="where the tests look (RUBRICATE_DATA_DIR, default ../shared/data)")
    parser.add_argument("--only", action="append", default=[], help="only files whose path contains this (repeatable)")
    parser.add_argument("--base-url", help="fetch from this server instead of GitHub (its paths: /REPO/COMMIT/PATH)")
    parser.add_argument("--manifest", default=MANIFEST, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    with open(options.manifest, encoding="utf-8") as file:
        manifest = json.load(file)
    template = options.base_url.rstrip("/") + "/{repo}/{commit}/{path}" if options.base_url else manifest["url"]
    entries = [entry for entry in manifest["files"] if not options.only or any(part in entry["file"] for part in options.only)]
    data_dir = os.path.abspath(os.path.expanduser(options.data_dir))
    root = os.path.realpath(ROOT) + os.sep
    if (os.path.realpath(data_dir) + os.sep).startswith(root):
        parser.error("--data-dir %s is inside the repository: the data stays outside it" % data_dir)
    print("benchmark data: %d files into %s" % (len(entries), data_dir), flush=True)
    failed = fetch(entries, template, data_dir, lambda line: print("  " + line, flush=True))
    print("%d of %d files ready%s" % (len(entries) - failed, len(entries), "" if failed == 0 else "; %d failed (see above)" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

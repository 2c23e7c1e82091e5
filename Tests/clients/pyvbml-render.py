"""Renders VBML documents with pyvbml 0.3.1 (the Python port of Vestaboard's library), for
VBMLReferenceTests. Reads one JSON document per line from the file named by its argument; writes one JSON line per document:
{"rows": [[...]]}, {"error": "..."} when pyvbml refuses it, or {"excluded": "..."} for a case
where pyvbml is known to differ from Vestaboard's own library (text taller than its component with
center or justified alignment: pyvbml 0.3.1 shows the middle lines, the library its first)."""
import json
import sys

from pyvbml import vbml
from pyvbml.emojis_to_character_codes import emojis_to_character_codes
from pyvbml.get_lines_from_words import get_lines_from_words
from pyvbml.parse_props import parse_props
from pyvbml.sanitize_special_characters import sanitize_special_characters
from pyvbml.split_words import split_words


def taller_than_component(doc):
    height, width = (doc.get("style") or {}).get("height") or 6, (doc.get("style") or {}).get("width") or 22
    for c in doc.get("components", []):
        style = c.get("style") or {}
        if "template" not in c or style.get("align") not in ("center", "justified", "absolute", None):
            continue
        if style.get("align") is None:
            continue
        w, h = style.get("width") or width, style.get("height") or height
        text = sanitize_special_characters(parse_props(doc.get("props") or {}, emojis_to_character_codes(c["template"])))
        if len(get_lines_from_words(w, split_words(w, text))) > h:
            return True
    return False


for line in open(sys.argv[1], encoding="utf-8"):
    doc = json.loads(line)
    try:
        if taller_than_component(doc):
            out = {"excluded": "text taller than its component, centred"}
        else:
            out = {"rows": vbml.parse(doc)}
    except Exception as e:  # pyvbml raises ValueError and others on what it cannot render
        out = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps(out), flush=True)

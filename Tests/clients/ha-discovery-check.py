#!/usr/bin/env python3
"""Checks MQTT discovery messages with Home Assistant's own schemas (homeassistant from PyPI,
the components' DISCOVERY_SCHEMA that HA applies to a discovery payload, and its topic matcher).

Reads JSON lines {"topic": ..., "payload": ...} from the file named (or stdin); prints one JSON line per message:
{"topic", "component", "ok", "error", "dropped"} — `dropped` lists keys the schema removed as
unknown (HA drops unknown keys silently, so a misspelt key would otherwise pass)."""
import json
import sys

import homeassistant.bootstrap  # noqa: F401  (imports HA's core modules in the order they need)
import importlib
from homeassistant.components.mqtt.discovery import TOPIC_MATCHER
from homeassistant.components.mqtt.abbreviations import ABBREVIATIONS, DEVICE_ABBREVIATIONS


def main():
    for line in open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin:
        if not line.strip():
            continue
        item = json.loads(line)
        topic, payload = item["topic"], item["payload"]
        out = {"topic": topic, "ok": False, "error": None, "dropped": []}
        match = TOPIC_MATCHER.match(topic.split("/", 1)[1])
        if not match:
            out["error"] = "the topic is not <prefix>/<component>/[<node_id>/]<object_id>/config"
            print(json.dumps(out), flush=True)
            continue
        component = match.group("component")
        out["component"] = component
        # HA expands abbreviations first; flapd writes keys in full, so none may be abbreviated.
        short = [k for k in payload if ABBREVIATIONS.get(k, k) != k]
        short += [k for k in payload.get("device", {}) if DEVICE_ABBREVIATIONS.get(k, k) != k]
        try:
            module = importlib.import_module(f"homeassistant.components.mqtt.{component}")
            valid = module.DISCOVERY_SCHEMA(dict(payload))
            out["dropped"] = sorted((set(payload) - set(valid)) | set(short))
            out["ok"] = not out["dropped"]
        except Exception as e:  # voluptuous' Invalid names the key and the problem
            out["error"] = f"{type(e).__name__}: {e}"
        print(json.dumps(out), flush=True)


main()

"""Occurrences of iCalendar files by icalendar + recurring-ical-events: the independent reading
that flapd's calendar is checked against (issue 36, item 6).

    python ical-occurrences.py FROM TO ZONE:FILE [ZONE:FILE …]

FROM and TO are seconds since 1970; each ZONE (an IANA name) is where its file's floating times
and all-day dates are read. Prints one JSON object: by FILE, the list of [start, end, summary]
(start and end in seconds since 1970) of every occurrence that overlaps [FROM, TO), sorted.
One process for every file: Python's start and imports cost more than a calendar.
"""
import datetime
import json
import sys
import zoneinfo

import icalendar
import recurring_ical_events


def instant(value, zone):
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=zone)
        return value.timestamp()
    return datetime.datetime(value.year, value.month, value.day, tzinfo=zone).timestamp()


def occurrences(path, start, end, zone):
    with open(path, "rb") as f:
        calendar = icalendar.Calendar.from_ical(f.read())
    a = datetime.datetime.fromtimestamp(start, zone)
    b = datetime.datetime.fromtimestamp(end, zone)
    out = []
    for event in recurring_ical_events.of(calendar).between(a, b):
        s = instant(event["DTSTART"].dt, zone)
        e = instant(event["DTEND"].dt, zone) if "DTEND" in event else s
        out.append([s, e, str(event.get("SUMMARY", ""))])
    out.sort(key=lambda o: (o[0], o[2]))
    return out


def main():
    start, end = float(sys.argv[1]), float(sys.argv[2])
    result = {}
    for job in sys.argv[3:]:
        zone, path = job.split(":", 1)
        result[path] = occurrences(path, start, end, zoneinfo.ZoneInfo(zone))
    json.dump(result, sys.stdout)


main()

"""Occurrences of an iCalendar file by icalendar + recurring-ical-events: the independent reading
that flapd's calendar is checked against (issue 36, item 6).

    python ical-occurrences.py FILE FROM TO ZONE

FROM and TO are seconds since 1970; ZONE (an IANA name) is where floating times and all-day
dates are read. Prints a JSON list of [start, end, summary], start and end in seconds since
1970, of every occurrence that overlaps [FROM, TO), sorted.
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


def main():
    path, start, end, zone_name = sys.argv[1:5]
    zone = zoneinfo.ZoneInfo(zone_name)
    with open(path, "rb") as f:
        calendar = icalendar.Calendar.from_ical(f.read())
    a = datetime.datetime.fromtimestamp(float(start), zone)
    b = datetime.datetime.fromtimestamp(float(end), zone)
    out = []
    for event in recurring_ical_events.of(calendar).between(a, b):
        s = instant(event["DTSTART"].dt, zone)
        e = instant(event["DTEND"].dt, zone) if "DTEND" in event else s
        out.append([s, e, str(event.get("SUMMARY", ""))])
    out.sort(key=lambda o: (o[0], o[2]))
    json.dump(out, sys.stdout)


main()

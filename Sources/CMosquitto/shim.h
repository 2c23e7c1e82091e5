// Eclipse Mosquitto's MQTT client library (libmosquitto 2.x, Debian's libmosquitto-dev), as is.
#pragma once
#include <mosquitto.h>

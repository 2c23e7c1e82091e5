// Thin shim over <libserialport.h> (libserialport-dev). Nothing but the include lives here.
#pragma once
#include <libserialport.h>

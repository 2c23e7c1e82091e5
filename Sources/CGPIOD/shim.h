// Thin shim over <gpiod.h> (libgpiod-dev). Nothing but the include lives here.
#pragma once
#include <gpiod.h>

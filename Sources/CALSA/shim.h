// Thin shim over <alsa/asoundlib.h> (libasound2-dev). Nothing but the include lives here.
#pragma once
#include <alsa/asoundlib.h>

#include "CRealtime.h"

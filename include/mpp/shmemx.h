/* SPDX-License-Identifier: BSD-3-Clause */
/* The extensions header under its historical path (1.6 keeps the mpp directory current). */
#include <shmemx.h>

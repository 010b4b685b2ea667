/* SPDX-License-Identifier: BSD-3-Clause */
/* The OpenSHMEM header under its historical path (1.6 keeps the mpp directory current). */
#include <shmem.h>

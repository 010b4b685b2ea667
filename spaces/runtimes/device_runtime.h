/* SPDX-License-Identifier: BSD-3-Clause */
/* A device runtime, loaded with dlopen so that the library runs where it is not installed: it
 * lists the devices it sees. Declares the few entry points it uses itself, so the library
 * builds without the runtime's headers. */
#ifndef STRATA_DEVICE_RUNTIME_H
#define STRATA_DEVICE_RUNTIME_H

#include "../discovery.h"

/* dlopen of a runtime's soname that never takes it from the current directory (library.c). */
void *device_runtime_library_open(const char *soname);
/* Whether the program has loaded the library file names (a soname, or a path) itself: nothing is
 * loaded by asking. */
int device_runtime_in_process(const char *file);

/* An entry point of a runtime and where its address goes. */
struct device_runtime_symbol {
    const char *name;
    void **slot;
};
/* Resolves every symbol of lib (as opened: NULL when it could not be, named by file in messages)
 * into its slot. Returns 0, or -1 with the reason in why ("<file> not loadable", "<runtime> lacks
 * <name>"). */
int device_runtime_bind(void *lib, const char *file, const struct device_runtime_symbol *symbols,
                        size_t count, const char *runtime, char *why, size_t whylen);

/* The CUDA driver: the file driver_path names (a testing knob's stand-in for the driver), else
 * libcuda.so.1; NULL when it cannot be loaded. */
void *device_runtime_cuda_open(const char *driver_path);

/* Whether the program has the CUDA driver (or the stand-in driver_path names) loaded already. */
int device_runtime_cuda_in_process(const char *driver_path);

/* Appends up to max devices to out; returns how many, or 0 with the reason in why. Where the
 * program has chosen a device on the calling thread (a context current), *program_device is its
 * ordinal; it is left alone otherwise. */
int device_runtime_cuda_probe(const char *driver_path, struct device *out, int max,
                              int *program_device, char *why, size_t whylen);
/* The HIP runtime: the file runtime_path names (a testing knob's stand-in), else the newest of
 * DEVICE_RUNTIME_HIP_SONAMES the loader finds; NULL when it cannot be loaded. */
#define DEVICE_RUNTIME_HIP_SONAMES "libamdhip64.so.7, .so.6 or .so.5"
void *device_runtime_hip_open(const char *runtime_path);
/* Whether the program has the HIP runtime (or the stand-in runtime_path names) loaded already. */
int device_runtime_hip_in_process(const char *runtime_path);
/* As device_runtime_cuda_probe; the program's choice is a device other than 0 set on the thread. */
int device_runtime_hip_probe(const char *runtime_path, struct device *out, int max,
                             int *program_device, char *why, size_t whylen);

#endif

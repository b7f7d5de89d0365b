/* Dagger-C: a runtime for distributed task-parallel C programs.
 *
 * The umbrella header. Include this one; the files under dagger/ hold one
 * concern each and are documented per function. */
#ifndef DAGGER_H
#define DAGGER_H

#include <dagger/version.h>
#include <dagger/status.h>
#include <dagger/types.h>
#include <dagger/runtime.h>
#include <dagger/actor.h>
#include <dagger/coll.h>
#include <dagger/chunk.h>
#include <dagger/task.h>
#include <dagger/region.h>
#include <dagger/array.h>
#include <dagger/stencil.h>
#include <dagger/linalg.h>

#endif

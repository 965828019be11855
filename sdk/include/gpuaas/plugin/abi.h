/*
 * The gpuaas plugin ABI: the whole boundary between gpuaasd and a workload plugin.
 *
 * Plain C: no C++ types, exceptions or protobuf objects cross it. Payloads cross as bytes with
 * explicit lengths: Kubernetes objects as JSON (exactly as `kubectl get -o json` prints them) and
 * results as serialized gpuaas.v1 protobuf messages (sdk/proto/gpuaas/v1/plugin.proto).
 *
 * Ownership: input bytes belong to the caller and are valid only during the call. Output bytes
 * belong to the plugin instance and stay valid until the next call of the same function on the
 * same instance (or its destruction).
 *
 * Versioning (as Falco's plugin API): the host loads a plugin when the ABI majors are equal and
 * the host's minor is >= the plugin's. Structs only ever grow at the end; each starts with its
 * size, and the host reads only what that size covers, so an older plugin still loads.
 *   1.0  the descriptor ends at `api`.
 *   1.1  the descriptor adds `kind_info` and `kind_info_size`: one gpuaas_kind_info per entry of
 *        `kinds` (plural, scope, how a new object is held, how its pods are found, session,
 *        queued only). A 1.0 plugin still loads: the host gives each of its kinds the
 *        information gpuaas had built in for that kind before 1.1 (plural = lower-case kind + "s",
 *        namespaced, not held, pods by owner, for a kind it has none for).
 *   1.2  gpuaas_kind_info adds `binding`. An entry of 1.1 (struct_size through `flags`) reads as
 *        GPUAAS_BINDING_DEFAULT.
 *   1.3  capability AUTOSCALE and action SET_SCALE: the bounds of the autoscaler that owns a
 *        serving workload's replicas (ActionRequest.scale). A plugin built before 1.3 cannot
 *        declare it; the host refuses one that does.
 * A new minor only appends: fields to a struct, constants, functions to the api table.
 *
 * Threads: the host never calls one instance from two threads at once; distinct instances may be
 * called concurrently. A plugin must not keep global mutable state outside its instances.
 *
 * Plugin authors do not write against this header: the C++ SDK (gpuaas/plugin/sdk.hpp) hides it.
 */
#ifndef GPUAAS_PLUGIN_ABI_H
#define GPUAAS_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUAAS_PLUGIN_ABI_MAJOR 1u
#define GPUAAS_PLUGIN_ABI_MINOR 3u
/* The one exported symbol: a gpuaas_plugin_descriptor_fn named gpuaas_plugin_get_descriptor. */
#define GPUAAS_PLUGIN_ENTRY_POINT "gpuaas_plugin_get_descriptor"
/* The event contract the plugin was built for (sdk/proto). */
#define GPUAAS_PLUGIN_EVENT_SCHEMA "gpuaas.v1"
/* Values of gpuaas_plugin_descriptor.status. */
#define GPUAAS_PLUGIN_STATUS_STABLE "stable"
#define GPUAAS_PLUGIN_STATUS_ALPHA "alpha"

/* Plugins are built with hidden visibility; only the entry point is exported. */
#if defined(__GNUC__)
#define GPUAAS_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define GPUAAS_PLUGIN_EXPORT
#endif

/* Return codes of every call. On an error, `out` holds a UTF-8 message instead of a result; an
 * OK with empty output is an empty message. The host treats any other code as INTERNAL. */
typedef int32_t gpuaas_rc;
#define GPUAAS_RC_OK 0
#define GPUAAS_RC_INVALID_INPUT 1 /* the object is malformed or lacks what the kind requires */
#define GPUAAS_RC_NOT_SUPPORTED 2 /* the plugin does not offer this for this object */
#define GPUAAS_RC_INTERNAL 3      /* the plugin failed (an exception caught at the boundary) */

/* Capabilities: a plugin declares each one it implements; a declared capability must have all of
 * its functions set, and a set function must belong to a declared capability (the host refuses a
 * half-declared one). DEMAND: demand(); LIFECYCLE: lifecycle(); ADMISSION, SCALE_TO_ZERO and
 * AUTOSCALE: action(); ACTIVITY: activity(). create() and destroy() are always required. */
#define GPUAAS_CAP_DEMAND (1ull << 0)        /* demand() */
#define GPUAAS_CAP_LIFECYCLE (1ull << 1)     /* lifecycle() */
#define GPUAAS_CAP_ADMISSION (1ull << 2)     /* action(): ADMIT, SUSPEND */
#define GPUAAS_CAP_SCALE_TO_ZERO (1ull << 3) /* action(): SCALE_TO_ZERO, SCALE_BACK */
#define GPUAAS_CAP_ACTIVITY (1ull << 4)      /* activity() */
#define GPUAAS_CAP_AUTOSCALE (1ull << 5)     /* action(): SET_SCALE (ABI 1.3) */
/* Every capability ABI 1.0 knows; a bit outside it is refused. */
#define GPUAAS_CAP_KNOWN_1_0 (GPUAAS_CAP_DEMAND | GPUAAS_CAP_LIFECYCLE | GPUAAS_CAP_ADMISSION | \
                              GPUAAS_CAP_SCALE_TO_ZERO | GPUAAS_CAP_ACTIVITY)
/* Every capability ABI 1.3 knows. */
#define GPUAAS_CAP_KNOWN_1_3 (GPUAAS_CAP_KNOWN_1_0 | GPUAAS_CAP_AUTOSCALE)

/* What action() is asked for. */
typedef int32_t gpuaas_action_kind;
#define GPUAAS_ACTION_ADMIT 1
#define GPUAAS_ACTION_SUSPEND 2
#define GPUAAS_ACTION_SCALE_TO_ZERO 3
#define GPUAAS_ACTION_SCALE_BACK 4
#define GPUAAS_ACTION_SET_SCALE 5 /* ABI 1.3: ActionRequest.scale, the autoscaler's bounds */

typedef struct gpuaas_bytes {
  const char* data;
  size_t size;
} gpuaas_bytes;

/* A kind the plugin handles, e.g. {"ray.io", "v1", "RayCluster"}. */
typedef struct gpuaas_kind {
  const char* group; /* "" (or NULL) for the core group */
  const char* version;
  const char* kind;
} gpuaas_kind;

/* How a new object of a kind is held until gpuaas admits it (gpuaas_kind_info.hold). The bridge's
 * admission webhook writes it on CREATE of an object that carries the queue label; the plugin's
 * admit() is what releases it. */
#define GPUAAS_HOLD_NONE 0u            /* not held: admission patches it once it exists */
#define GPUAAS_HOLD_SET_TRUE 1u        /* hold_target, a JSON pointer ("/spec/suspend"), set true */
#define GPUAAS_HOLD_ANNOTATION 2u      /* metadata.annotations[hold_target] = hold_value */
#define GPUAAS_HOLD_SCHEDULING_GATE 3u /* {"name": hold_target} appended to spec.schedulingGates */

/* gpuaas_kind_info.scope */
#define GPUAAS_SCOPE_NAMESPACED 0u
#define GPUAAS_SCOPE_CLUSTER 1u

/* How a workload's pods are found (gpuaas_kind_info.pods). */
#define GPUAAS_PODS_BY_OWNER 0u /* the pods' controller chain (ownerReferences) leads to it */
#define GPUAAS_PODS_BY_LABEL 1u /* the pods carry pod_label with the object's name as value */

/* The label that puts an object in a queue (Kueue's); GPUAAS_KIND_QUEUED_ONLY reads it. */
#define GPUAAS_QUEUE_LABEL "kueue.x-k8s.io/queue-name"

/* gpuaas_kind_info.flags */
#define GPUAAS_KIND_SESSION (1ull << 0)        /* an interactive session: NotebookPolicy applies */
#define GPUAAS_KIND_QUEUED_ONLY (1ull << 1)    /* only objects with the queue label are workloads */
#define GPUAAS_KIND_HOLD_ANY_VALUE (1ull << 2) /* HOLD_ANNOTATION: any value already holds it */
#define GPUAAS_KIND_FLAGS_KNOWN_1_1 \
  (GPUAAS_KIND_SESSION | GPUAAS_KIND_QUEUED_ONLY | GPUAAS_KIND_HOLD_ANY_VALUE)

/* How firmly a workload's pods are bound to the nodes gpuaas places them on
 * (gpuaas_kind_info.binding, ABI 1.2). REQUIRED: the bridge's webhook puts a scheduling gate on
 * each pod template the demand names (PodSet.template_pointer), so every pod waits until gpuaasd
 * opens it on its node; for batch and gang work. PREFERRED: pods are not gated and placement is
 * a preference; for serving and sessions, whose pods come and go. OFF: gpuaas does not place the
 * pods. DEFAULT: the host decides (PREFERRED for a GPUAAS_KIND_SESSION kind, else REQUIRED). */
#define GPUAAS_BINDING_DEFAULT 0u
#define GPUAAS_BINDING_REQUIRED 1u
#define GPUAAS_BINDING_PREFERRED 2u
#define GPUAAS_BINDING_OFF 3u

/* What gpuaas needs to know about a kind besides its name (ABI 1.1; `binding` 1.2). Strings are
 * NULL when the field does not apply; they live as long as the library. */
typedef struct gpuaas_kind_info {
  uint32_t struct_size; /* sizeof(gpuaas_kind_info) when the plugin was built */
  uint32_t scope;       /* GPUAAS_SCOPE_* */
  const char* plural;   /* the resource's name in API paths and RBAC, e.g. "rayjobs" */
  uint32_t hold;        /* GPUAAS_HOLD_* */
  uint32_t pods;        /* GPUAAS_PODS_* */
  const char* hold_target; /* SET_TRUE: the pointer; ANNOTATION: the key; SCHEDULING_GATE: the gate */
  const char* hold_value;  /* ANNOTATION: the value written */
  const char* pod_label;   /* PODS_BY_LABEL: the pod label's key, e.g. "ray.io/cluster" */
  uint64_t flags;          /* GPUAAS_KIND_* */
  uint32_t binding;        /* GPUAAS_BINDING_* (ABI 1.2) */
  /* Append new fields here, never elsewhere. */
} gpuaas_kind_info;

/* An instance, opaque to the host. */
typedef struct gpuaas_plugin gpuaas_plugin;

typedef struct gpuaas_plugin_api {
  uint32_t struct_size; /* sizeof(gpuaas_plugin_api) when the plugin was built */

  /* config: the plugin's typed configuration as JSON (may be empty). On failure *out is NULL
   * and error holds the message, valid until the next create() on the same thread; the host
   * destroys nothing after a failed create(). */
  gpuaas_rc (*create)(gpuaas_bytes config, gpuaas_plugin** out, gpuaas_bytes* error);
  void (*destroy)(gpuaas_plugin* plugin);

  /* object JSON -> gpuaas.v1.WorkloadDemand: pod sets, counts, per-pod resources, queue,
   * priority class. */
  gpuaas_rc (*demand)(gpuaas_plugin* plugin, gpuaas_bytes object, gpuaas_bytes* out);
  /* object JSON -> gpuaas.v1.WorkloadLifecycle: pending, running, succeeded, failed. */
  gpuaas_rc (*lifecycle)(gpuaas_plugin* plugin, gpuaas_bytes object, gpuaas_bytes* out);
  /* object JSON + what to do + its parameters (gpuaas.v1.ActionRequest, e.g. the assigned
   * flavor's nodeLabels and tolerations) -> gpuaas.v1.ActionSet (JSON merge patches). */
  gpuaas_rc (*action)(gpuaas_plugin* plugin, gpuaas_action_kind kind, gpuaas_bytes object,
                      gpuaas_bytes request, gpuaas_bytes* out);
  /* object JSON + gpuaas.v1.MetricBatch (the latest samples of its pods, and samples that name
   * the object itself) -> gpuaas.v1.WorkloadActivity. */
  gpuaas_rc (*activity)(gpuaas_plugin* plugin, gpuaas_bytes object, gpuaas_bytes samples,
                        gpuaas_bytes* out);
  /* Append new functions here, never elsewhere. */
} gpuaas_plugin_api;

typedef struct gpuaas_plugin_descriptor {
  uint32_t struct_size; /* sizeof(gpuaas_plugin_descriptor) when the plugin was built */
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* name;    /* unique, e.g. "ray": 1-64 printable ASCII characters, no spaces */
  const char* version; /* semver of the plugin, e.g. "1.2.0" */
  const gpuaas_kind* kinds;
  uint32_t kind_count;
  uint64_t capabilities; /* GPUAAS_CAP_* */
  const char* event_schema; /* GPUAAS_PLUGIN_EVENT_SCHEMA at build time */
  const char* status;       /* "stable" or "alpha" */
  const gpuaas_plugin_api* api;
  /* ABI 1.1: kind_count entries, kind_info_size bytes apart (the host steps by it and reads of
   * each only what its struct_size covers); entry i describes kinds[i]. */
  const gpuaas_kind_info* kind_info;
  uint32_t kind_info_size; /* sizeof(gpuaas_kind_info) when the plugin was built */
  /* Append new fields here, never elsewhere. */
} gpuaas_plugin_descriptor;

typedef const gpuaas_plugin_descriptor* (*gpuaas_plugin_descriptor_fn)(void);

/* The entry point every plugin defines (GPUAAS_PLUGIN does it for C++ plugins); declared here so
 * that the compiler checks its name and signature. */
GPUAAS_PLUGIN_EXPORT const gpuaas_plugin_descriptor* gpuaas_plugin_get_descriptor(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUAAS_PLUGIN_ABI_H */

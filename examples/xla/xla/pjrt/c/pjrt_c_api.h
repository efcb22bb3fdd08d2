/* Stand-in for XLA's xla/pjrt/c/pjrt_c_api.h, written for jax-rocm-build's
 * offline tests. This is NOT XLA's header and contains none of its text.
 *
 * It declares the ABI-compatible part of PJRT C API 0.112 (the version of the
 * XLA commit jaxlib 0.10.2 was built from) that the example plugin needs:
 * the version, error, named-value, plugin and client-creation structs with
 * their fields in the real order, and PJRT_Api at its real full size. Slots
 * of PJRT_Api for functions the example does not implement are reserved
 * pointers, named only by their position.
 *
 * A struct's `struct_size` tells the callee how much of the struct the caller
 * knows; PJRT_SIZE_THROUGH(type, field) is the size a caller that knows
 * `field` (and everything before it) passes.
 */
#ifndef XLA_PJRT_C_PJRT_C_API_H_
#define XLA_PJRT_C_PJRT_C_API_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PJRT_SIZE_THROUGH(type, field) \
  (offsetof(type, field) + sizeof(((type*)0)->field))

#ifdef __cplusplus
extern "C" {
#endif

#define PJRT_API_MAJOR 0
#define PJRT_API_MINOR 112

/* An extension: a node of the chain PJRT_Api.extension_start points to. The
 * example plugin has none (every extension_start is NULL); callers walk the
 * chain to find one by type. Only the types this tree names are listed. */
typedef enum {
  PJRT_Extension_Type_Gpu_Custom_Call = 0,
  PJRT_Extension_Type_FFI = 5,
} PJRT_Extension_Type;

typedef struct PJRT_Extension_Base PJRT_Extension_Base;
struct PJRT_Extension_Base {
  size_t struct_size;
  PJRT_Extension_Type type;
  PJRT_Extension_Base* next;
};

typedef struct PJRT_Api_Version {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  int major_version;
  int minor_version;
} PJRT_Api_Version;

/* ------------------------------------------------------------------ errors */

/* The absl status codes, with the values the real enum gives them. */
typedef enum {
  PJRT_Error_Code_OK = 0,
  PJRT_Error_Code_CANCELLED = 1,
  PJRT_Error_Code_UNKNOWN = 2,
  PJRT_Error_Code_INVALID_ARGUMENT = 3,
  PJRT_Error_Code_DEADLINE_EXCEEDED = 4,
  PJRT_Error_Code_NOT_FOUND = 5,
  PJRT_Error_Code_ALREADY_EXISTS = 6,
  PJRT_Error_Code_PERMISSION_DENIED = 7,
  PJRT_Error_Code_RESOURCE_EXHAUSTED = 8,
  PJRT_Error_Code_FAILED_PRECONDITION = 9,
  PJRT_Error_Code_ABORTED = 10,
  PJRT_Error_Code_OUT_OF_RANGE = 11,
  PJRT_Error_Code_UNIMPLEMENTED = 12,
  PJRT_Error_Code_INTERNAL = 13,
  PJRT_Error_Code_UNAVAILABLE = 14,
  PJRT_Error_Code_DATA_LOSS = 15,
  PJRT_Error_Code_UNAUTHENTICATED = 16
} PJRT_Error_Code;

typedef struct PJRT_Error PJRT_Error;

typedef void (*PJRT_Error_PayloadVisitor)(const char* key, size_t key_size,
                                          const char* value, size_t value_size,
                                          void* user_arg);

/* Since 0.107 a PJRT_Error is not opaque: it starts with a pointer to this
 * table, so a framework may use an error without going through PJRT_Api. */
typedef struct PJRT_Error_FunctionTable {
  size_t struct_size;
  size_t instance_size;
  PJRT_Extension_Base* extension_start;
  void (*destroy)(PJRT_Error* error);
  void (*message)(const PJRT_Error* error, const char** message,
                  size_t* message_size);
  PJRT_Error_Code (*get_code)(const PJRT_Error* error);
  void (*for_each_payload)(const PJRT_Error* error,
                           PJRT_Error_PayloadVisitor visitor, void* user_arg);
} PJRT_Error_FunctionTable;

struct PJRT_Error {
  const PJRT_Error_FunctionTable* vtable;
};

typedef struct PJRT_Error_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Error* error;
} PJRT_Error_Destroy_Args;

typedef struct PJRT_Error_Message_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_Error* error;
  const char* message; /* out: lives as long as `error` */
  size_t message_size; /* out */
} PJRT_Error_Message_Args;

typedef struct PJRT_Error_GetCode_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_Error* error;
  PJRT_Error_Code code; /* out */
} PJRT_Error_GetCode_Args;

typedef struct PJRT_Error_ForEachPayload_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_Error* error;
  PJRT_Error_PayloadVisitor visitor;
  void* user_arg;
} PJRT_Error_ForEachPayload_Args;

/* ------------------------------------------------------------ named values */

typedef enum {
  PJRT_NamedValue_kString = 0,
  PJRT_NamedValue_kInt64 = 1,
  PJRT_NamedValue_kInt64List = 2,
  PJRT_NamedValue_kFloat = 3,
  PJRT_NamedValue_kBool = 4
} PJRT_NamedValue_Type;

typedef struct PJRT_NamedValue {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* name;
  size_t name_size;
  PJRT_NamedValue_Type type;
  union {
    const char* string_value;
    int64_t int64_value;
    const int64_t* int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size; /* string length, list length, or 1 for a scalar */
} PJRT_NamedValue;

/* ------------------------------------------------------------------ plugin */

typedef struct PJRT_Plugin_Initialize_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
} PJRT_Plugin_Initialize_Args;

typedef struct PJRT_Plugin_Attributes_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_NamedValue* attributes; /* out: lives as long as the process */
  size_t num_attributes;             /* out */
} PJRT_Plugin_Attributes_Args;

/* ------------------------------------------------------------------ client */

typedef struct PJRT_Client PJRT_Client;

/* The key-value store callbacks a caller may pass to PJRT_Client_Create.
 * Their argument structs are not needed here, only the pointer sizes. */
struct PJRT_KeyValueGetCallback_Args;
struct PJRT_KeyValuePutCallback_Args;
struct PJRT_KeyValueTryGetCallback_Args;
typedef PJRT_Error* (*PJRT_KeyValueGetCallback)(
    struct PJRT_KeyValueGetCallback_Args* args);
typedef PJRT_Error* (*PJRT_KeyValuePutCallback)(
    struct PJRT_KeyValuePutCallback_Args* args);
typedef PJRT_Error* (*PJRT_KeyValueTryGetCallback)(
    struct PJRT_KeyValueTryGetCallback_Args* args);

typedef struct PJRT_Client_Create_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_NamedValue* create_options;
  size_t num_options;
  PJRT_KeyValueGetCallback kv_get_callback;
  void* kv_get_user_arg;
  PJRT_KeyValuePutCallback kv_put_callback;
  void* kv_put_user_arg;
  PJRT_Client* client; /* out */
  /* Added after `client` (0.61), hence after it. */
  PJRT_KeyValueTryGetCallback kv_try_get_callback;
  void* kv_try_get_user_arg;
} PJRT_Client_Create_Args;

/* ----------------------------------------------------------------- the API */

/* Slots are numbered from 0 at PJRT_Error_Destroy; 0.112 has 138 of them,
 * the last being PJRT_TopologyDescription_GetMemorySpaceKindIds (137). */
#define PJRT_API_NUM_FUNCTIONS 138

typedef struct PJRT_Api {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Api_Version pjrt_api_version;

  /* The function slots, spelled as pointers inline: a typedef named like the
   * field would change meaning inside the struct in C++. */
  void (*PJRT_Error_Destroy)(PJRT_Error_Destroy_Args* args);          /* 0 */
  void (*PJRT_Error_Message)(PJRT_Error_Message_Args* args);          /* 1 */
  PJRT_Error* (*PJRT_Error_GetCode)(PJRT_Error_GetCode_Args* args);   /* 2 */
  PJRT_Error* (*PJRT_Plugin_Initialize)(PJRT_Plugin_Initialize_Args* args);
  PJRT_Error* (*PJRT_Plugin_Attributes)(PJRT_Plugin_Attributes_Args* args);
  void* reserved_5_to_9[5]; /* PJRT_Event_Destroy .. PJRT_Event_OnReady */
  PJRT_Error* (*PJRT_Client_Create)(PJRT_Client_Create_Args* args);   /* 10 */
  void* reserved_11_to_131[121];
  /* Slot 132, measured: jaxlib 0.10.2's pjrt::PjrtErrorToStatus calls the
   * pointer at offset 0x448 when struct_size >= 0x450. */
  PJRT_Error* (*PJRT_Error_ForEachPayload)(
      PJRT_Error_ForEachPayload_Args* args);
  void* reserved_133_to_137[5];
} PJRT_Api;

#ifdef __cplusplus
}  /* extern "C" */

/* The layout facts the plugin relies on, checked where they are stated
 * (for LP64 targets, the only ones this project builds). */
static_assert(sizeof(PJRT_Api_Version) == 24, "PJRT_Api_Version layout");
static_assert(sizeof(PJRT_NamedValue) == 56, "PJRT_NamedValue layout");
static_assert(offsetof(PJRT_NamedValue, value_size) == 48,
              "PJRT_NamedValue layout");
static_assert(offsetof(PJRT_Client_Create_Args, client) == 64,
              "PJRT_Client_Create_Args layout");
static_assert(offsetof(PJRT_Api, PJRT_Error_Destroy) == 40, "PJRT_Api layout");
static_assert(offsetof(PJRT_Api, PJRT_Client_Create) == 40 + 10 * 8,
              "PJRT_Api layout");
static_assert(offsetof(PJRT_Api, PJRT_Error_ForEachPayload) == 0x448,
              "PJRT_Api layout");
static_assert(sizeof(PJRT_Api) == 40 + PJRT_API_NUM_FUNCTIONS * 8 &&
                  sizeof(PJRT_Api) == 1144,
              "PJRT_Api has the full 0.112 size");
#endif

#endif /* XLA_PJRT_C_PJRT_C_API_H_ */

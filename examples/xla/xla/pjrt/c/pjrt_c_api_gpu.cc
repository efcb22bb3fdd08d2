// The example "GPU" PJRT plugin of the stand-in XLA tree (examples/xla).
//
// Written for jax-rocm-build's offline tests; not XLA code. It has the real
// PJRT C API 0.112 ABI but no devices: it answers the calls a framework makes
// before it has a client (version, errors, plugin initialisation and
// attributes) and fails PJRT_Client_Create with UNAVAILABLE. Every other slot
// of PJRT_Api is NULL: those calls all need a client, which never exists.
//
// Pure C++17 with no ROCm dependency, so that it links into a shared library
// with -Wl,--no-undefined against libc and libstdc++ alone.

#include "xla/pjrt/c/pjrt_c_api_gpu.h"
#include "xla/stream_executor/registry.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "xla/pjrt/c/pjrt_c_api.h"

namespace {

// The attribute whose presence proves a plugin was built from this tree.
constexpr char kMarkerName[] = "jax_rocm_example";
constexpr char kMarkerValue[] = "examples/xla";
constexpr char kNoDevices[] = "example plugin: no devices";

// ------------------------------------------------------------------ errors

// Every PJRT_Error this plugin returns. Since 0.107 a PJRT_Error is a struct
// whose only member is its function table, so a framework may call
// error->vtable->message() without going through PJRT_Api: deriving from
// PJRT_Error gives the object that leading vtable.
struct ExampleError : PJRT_Error {
  PJRT_Error_Code code;
  std::string message;
};

const ExampleError* AsExample(const PJRT_Error* error) {
  return static_cast<const ExampleError*>(error);
}

void DestroyError(PJRT_Error* error) {
  delete static_cast<ExampleError*>(error);
}

void ErrorMessage(const PJRT_Error* error, const char** message,
                  size_t* message_size) {
  *message = AsExample(error)->message.data();
  *message_size = AsExample(error)->message.size();
}

PJRT_Error_Code ErrorCode(const PJRT_Error* error) {
  return AsExample(error)->code;
}

void VisitNoPayloads(const PJRT_Error*, PJRT_Error_PayloadVisitor, void*) {}

const PJRT_Error_FunctionTable kErrorFunctions = {
    /*struct_size=*/sizeof(PJRT_Error_FunctionTable),
    // What a caller may read of an error: the PJRT_Error part, as in XLA's
    // own errors; the rest of ExampleError is private to this plugin.
    /*instance_size=*/sizeof(PJRT_Error),
    /*extension_start=*/nullptr,
    /*destroy=*/DestroyError,
    /*message=*/ErrorMessage,
    /*get_code=*/ErrorCode,
    /*for_each_payload=*/VisitNoPayloads,
};

PJRT_Error* MakeError(PJRT_Error_Code code, std::string message) {
  auto* error = new ExampleError;
  error->vtable = &kErrorFunctions;
  error->code = code;
  error->message = std::move(message);
  return error;
}

// A caller built against an older header passes a smaller struct_size; it
// must still cover every field the callee reads or writes (up to `needed`).
PJRT_Error* CheckStructSize(const char* struct_name, size_t actual,
                            size_t needed) {
  if (actual >= needed) return nullptr;
  return MakeError(PJRT_Error_Code_INVALID_ARGUMENT,
                   std::string(struct_name) + ": struct_size " +
                       std::to_string(actual) + " is smaller than the " +
                       std::to_string(needed) + " bytes this plugin needs");
}

// Returns from the calling API function when `args` stops before `last_field`.
#define EXAMPLE_CHECK_ARGS(type, last_field, args)                            \
  do {                                                                        \
    if (PJRT_Error* size_error =                                              \
            CheckStructSize(#type, (args)->struct_size,                       \
                            PJRT_SIZE_THROUGH(type, last_field))) {           \
      return size_error;                                                      \
    }                                                                         \
  } while (false)

// PJRT_Error_Destroy and PJRT_Error_Message return void: a too-small struct
// cannot be reported, so they leave it untouched. Both go through the error's
// own function table, as a framework holding only the error would.
void ApiErrorDestroy(PJRT_Error_Destroy_Args* args) {
  if (args->struct_size < PJRT_SIZE_THROUGH(PJRT_Error_Destroy_Args, error) ||
      args->error == nullptr) {
    return;
  }
  args->error->vtable->destroy(args->error);
}

void ApiErrorMessage(PJRT_Error_Message_Args* args) {
  if (args->struct_size <
      PJRT_SIZE_THROUGH(PJRT_Error_Message_Args, message_size)) {
    return;
  }
  args->error->vtable->message(args->error, &args->message,
                               &args->message_size);
}

PJRT_Error* ApiErrorGetCode(PJRT_Error_GetCode_Args* args) {
  EXAMPLE_CHECK_ARGS(PJRT_Error_GetCode_Args, code, args);
  args->code = args->error->vtable->get_code(args->error);
  return nullptr;
}

// Implemented although it was not asked for: a 0.99+ framework calls it for
// every error it receives when PJRT_Api is large enough to hold it, so a NULL
// slot there would crash the caller on the first error.
PJRT_Error* ApiErrorForEachPayload(PJRT_Error_ForEachPayload_Args* args) {
  EXAMPLE_CHECK_ARGS(PJRT_Error_ForEachPayload_Args, user_arg, args);
  args->error->vtable->for_each_payload(args->error, args->visitor,
                                        args->user_arg);
  return nullptr;
}

// ------------------------------------------------------------------ plugin

PJRT_Error* ApiPluginInitialize(PJRT_Plugin_Initialize_Args* args) {
  EXAMPLE_CHECK_ARGS(PJRT_Plugin_Initialize_Args, extension_start, args);
  return nullptr;  // Nothing to set up: there is no device runtime.
}

PJRT_NamedValue NamedValue(const char* name, PJRT_NamedValue_Type type,
                           size_t value_size) {
  PJRT_NamedValue value{};
  value.struct_size = PJRT_SIZE_THROUGH(PJRT_NamedValue, value_size);
  value.extension_start = nullptr;
  value.name = name;
  value.name_size = std::strlen(name);
  value.type = type;
  value.value_size = value_size;
  return value;
}

PJRT_NamedValue Int64Value(const char* name, int64_t number) {
  PJRT_NamedValue value = NamedValue(name, PJRT_NamedValue_kInt64, 1);
  value.int64_value = number;
  return value;
}

PJRT_NamedValue Int64ListValue(const char* name, const int64_t* numbers,
                               size_t count) {
  PJRT_NamedValue value = NamedValue(name, PJRT_NamedValue_kInt64List, count);
  value.int64_array_value = numbers;
  return value;
}

PJRT_NamedValue StringValue(const char* name, const char* text) {
  PJRT_NamedValue value =
      NamedValue(name, PJRT_NamedValue_kString, std::strlen(text));
  value.string_value = text;
  return value;
}

// A placeholder: real plugins report the StableHLO version they were built
// with; this one compiles nothing. It is here to show the list encoding.
constexpr int64_t kStablehloVersion[] = {1, 0, 0};

PJRT_Error* ApiPluginAttributes(PJRT_Plugin_Attributes_Args* args) {
  // The attributes must live as long as the process: a function-local static.
  static const PJRT_NamedValue kAttributes[] = {
      Int64Value("xla_version", 2),
      Int64ListValue("stablehlo_current_version", kStablehloVersion,
                     sizeof(kStablehloVersion) / sizeof(kStablehloVersion[0])),
      StringValue(kMarkerName, kMarkerValue),
      // What the static registrations linked into this plugin recorded
      // (xla/stream_executor/registry.h): "rocm_platform,gpu_compiler".
      StringValue("jax_rocm_registered",
                  stream_executor::example::RegisteredComponents()),
  };
  EXAMPLE_CHECK_ARGS(PJRT_Plugin_Attributes_Args, num_attributes, args);
  args->attributes = kAttributes;
  args->num_attributes = sizeof(kAttributes) / sizeof(kAttributes[0]);
  return nullptr;
}

// ------------------------------------------------------------------ client

PJRT_Error* ApiClientCreate(PJRT_Client_Create_Args* args) {
  // Up to `client`: the try-get callbacks after it are optional (0.61+).
  EXAMPLE_CHECK_ARGS(PJRT_Client_Create_Args, client, args);
  args->client = nullptr;
  if (!stream_executor::example::IsRegistered("rocm_platform")) {
    // What a real plugin linked without the ROCm platform would fail with, in spirit.
    return MakeError(PJRT_Error_Code_FAILED_PRECONDITION,
                     "example plugin: no ROCm platform is registered; link "
                     "@xla//xla/stream_executor:rocm_platform into the plugin");
  }
  return MakeError(PJRT_Error_Code_UNAVAILABLE, kNoDevices);
}

#undef EXAMPLE_CHECK_ARGS

PJRT_Api MakeApi() {
  PJRT_Api api{};  // Zeroed: every slot not set below is NULL.
  api.struct_size = sizeof(PJRT_Api);
  api.extension_start = nullptr;
  api.pjrt_api_version.struct_size = sizeof(PJRT_Api_Version);
  api.pjrt_api_version.extension_start = nullptr;
  api.pjrt_api_version.major_version = PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;

  api.PJRT_Error_Destroy = ApiErrorDestroy;
  api.PJRT_Error_Message = ApiErrorMessage;
  api.PJRT_Error_GetCode = ApiErrorGetCode;
  api.PJRT_Error_ForEachPayload = ApiErrorForEachPayload;
  api.PJRT_Plugin_Initialize = ApiPluginInitialize;
  api.PJRT_Plugin_Attributes = ApiPluginAttributes;
  api.PJRT_Client_Create = ApiClientCreate;
  return api;
}

}  // namespace

extern "C" const PJRT_Api* GetPjrtApi(void) {
  static const PJRT_Api api = MakeApi();
  return &api;
}
